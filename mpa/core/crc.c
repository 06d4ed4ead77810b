// SPDX-License-Identifier: GPL-2.0
/*
 * MPA CRC32c (RFC 5044 section 4.4).
 *
 * The register is the kernel's raw crc32c() register: start it with
 * mpa_crc_init(), feed it with mpa_crc_update() and finish it with
 * mpa_crc_final().  The value goes on the wire least significant octet
 * first (mpa_crc_put()), which is the only reading under which the RFC 5044
 * Figure 5 and 6 examples verify.
 */

#include <linux/crc32c.h>
#include <linux/export.h>
#include <kunit/visibility.h>

#include "core.h"

/**
 * mpa_crc_update() - feed octets into a raw CRC32c register
 * @crc: register value
 * @p: octets
 * @len: number of octets
 *
 * Return: the updated register.
 */
u32 mpa_crc_update(u32 crc, const void *p, u32 len)
{
	return crc32c(crc, p, len);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_crc_update);
