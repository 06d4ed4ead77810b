// SPDX-License-Identifier: GPL-2.0
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044, RFC 6581)
 *
 * MPA keeps the boundaries of the upper layer's records (ULPDUs) on a TCP
 * byte stream: each goes out as an FPDU (length, ULPDU, pad, CRC32c), with
 * optional Markers every 512 octets, after a Request/Reply startup
 * negotiation. It is the layer between TCP and DDP/RDMAP in iWARP.
 */
#include <linux/module.h>

#include "mpa.h"

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
