// SPDX-License-Identifier: GPL-2.0
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044, RFC 6581)
 *
 * MPA keeps the boundaries of the upper layer's records (ULPDUs) on a TCP
 * byte stream: each goes out as an FPDU (length, ULPDU, pad, CRC32c), with
 * optional Markers every 512 octets, after a Request/Reply startup
 * negotiation. It is the layer between TCP and DDP/RDMAP in iWARP.
 */
#include <kunit/visibility.h>
#include <linux/module.h>

#include "conn.h"
#include "mpa.h"

bool mpa_allow_crc_off;
EXPORT_SYMBOL_IF_KUNIT(mpa_allow_crc_off);
module_param_named(allow_crc_off, mpa_allow_crc_off, bool, 0644);
MODULE_PARM_DESC(allow_crc_off,
		 "Let sockets announce that they need no CRC (RFC 5044 4.4: an administrator's decision; default N)");

unsigned int mpa_startup_timeout_ms = 10000;
module_param_named(startup_timeout_ms, mpa_startup_timeout_ms, uint, 0644);
MODULE_PARM_DESC(startup_timeout_ms,
		 "Default time for the peer's MPA Request or Reply to arrive, in ms");

static int __init mpa_init(void)
{
	return mpa_ulp_register();
}

static void __exit mpa_exit(void)
{
	mpa_ulp_unregister();
}

module_init(mpa_init);
module_exit(mpa_exit);

MODULE_DESCRIPTION("MPA: Marker PDU Aligned Framing for TCP (RFC 5044)");
MODULE_LICENSE("GPL");
MODULE_ALIAS_TCP_ULP("mpa");
MODULE_SOFTDEP("pre: crc32c");
