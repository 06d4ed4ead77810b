// SPDX-License-Identifier: GPL-2.0
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044, RFC 6581)
 *
 * MPA keeps the boundaries of the upper layer's records (ULPDUs) on a TCP
 * byte stream: each goes out as an FPDU (length, ULPDU, pad, CRC32c), with
 * optional Markers every 512 octets, after a Request/Reply startup
 * negotiation. It is the layer between TCP and DDP/RDMAP in iWARP.
 *
 * The policy that used to be module parameters (allow_crc_off,
 * startup_timeout_ms) is per network namespace now, set through the "mpa"
 * generic netlink family (Documentation/networking/mpa.rst, "Policy").
 */
#include <linux/module.h>
#include <linux/workqueue.h>

#include "conn.h"
#include "frag.h"
#include "mpa.h"
#include "netns.h"

/*
 * The connections' work (conn.c). WQ_MEM_RECLAIM: a kernel consumer may
 * carry the traffic that reclaim itself waits for (a storage target or
 * initiator writing back dirty pages), so the work must make progress
 * when no new worker can be created (mpa.rst, "Memory").
 */
struct workqueue_struct *mpa_wq;

static int __init mpa_init(void)
{
	int ret;

	mpa_sock_init();
	ret = mpa_frag_init();
	if (ret)
		return ret;
	ret = mpa_conn_cache_init();
	if (ret)
		goto err_frag;
	mpa_wq = alloc_workqueue("mpa", WQ_MEM_RECLAIM, 0);
	if (!mpa_wq) {
		ret = -ENOMEM;
		goto err_cache;
	}
	ret = mpa_net_init();
	if (ret)
		goto err_wq;
	ret = mpa_nl_init();
	if (ret)
		goto err_net;
	ret = mpa_ulp_register();
	if (ret)
		goto err_nl;
	return 0;

err_nl:
	mpa_nl_exit();
err_net:
	mpa_net_exit();
err_wq:
	destroy_workqueue(mpa_wq);
err_cache:
	mpa_conn_cache_exit();
err_frag:
	mpa_frag_exit();
	return ret;
}

/*
 * No MPA connection is left: each holds a reference on the module (TCP
 * takes it when the ULP is attached and drops it once the socket is
 * destroyed), and a queued work item holds its socket. The last work item
 * may still be returning from its final sock_put(): destroying the
 * workqueue waits for it, after which none of our code runs.
 */
static void __exit mpa_exit(void)
{
	mpa_ulp_unregister();
	mpa_nl_exit();
	mpa_net_exit();
	destroy_workqueue(mpa_wq);
	mpa_conn_cache_exit();
	mpa_frag_exit();
}

module_init(mpa_init);
module_exit(mpa_exit);

MODULE_DESCRIPTION("MPA: Marker PDU Aligned Framing for TCP (RFC 5044)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("mpa");
MODULE_SOFTDEP("pre: crc32c");
