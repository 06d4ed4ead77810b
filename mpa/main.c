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

#include "mpa.h"
#include "netns.h"

static int __init mpa_init(void)
{
	int ret;

	mpa_sock_init();
	ret = mpa_net_init();
	if (ret)
		return ret;
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
	return ret;
}

static void __exit mpa_exit(void)
{
	mpa_ulp_unregister();
	mpa_nl_exit();
	mpa_net_exit();
}

module_init(mpa_init);
module_exit(mpa_exit);

MODULE_DESCRIPTION("MPA: Marker PDU Aligned Framing for TCP (RFC 5044)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("mpa");
MODULE_SOFTDEP("pre: crc32c");
