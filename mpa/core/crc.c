// SPDX-License-Identifier: GPL-2.0
/*
 * MPA CRC32c helpers (RFC 5044 section 4.4) over flat and scattered buffers.
 *
 * The register is the kernel's raw crc32c() register: start it with
 * mpa_crc_init(), feed it with the helpers below and finish it with
 * mpa_crc_final().  The value goes on the wire least significant octet
 * first (mpa_crc_put()), which is the only reading under which the RFC 5044
 * Figure 5 and 6 examples verify.
 */

#include <linux/crc32c.h>
#include <linux/export.h>
#include <linux/minmax.h>
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

/**
 * mpa_crc_bufs() - feed a list of buffers into a raw CRC32c register
 * @crc: register value
 * @v: buffers, in stream order
 * @n: number of buffers
 *
 * Return: the updated register.
 */
u32 mpa_crc_bufs(u32 crc, const struct mpa_buf *v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		crc = crc32c(crc, v[i].base, v[i].len);
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_crc_bufs);

/**
 * mpa_crc_bufs_range() - feed a range of a buffer list into a CRC register
 * @crc: register value
 * @v: buffers, in stream order; together they form one octet sequence
 * @n: number of buffers
 * @off: offset of the first octet to feed in that sequence
 * @len: number of octets to feed
 *
 * Octets beyond the end of the list are silently not fed; callers size
 * the list from the same layout they ask about.
 *
 * Return: the updated register.
 */
u32 mpa_crc_bufs_range(u32 crc, const struct mpa_buf *v, unsigned int n,
		       u32 off, u32 len)
{
	unsigned int i;

	for (i = 0; i < n && len; i++) {
		u32 chunk;

		if (off >= v[i].len) {
			off -= v[i].len;
			continue;
		}
		chunk = min(v[i].len - off, len);
		crc = crc32c(crc, (const u8 *)v[i].base + off, chunk);
		len -= chunk;
		off = 0;
	}
	return crc;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_crc_bufs_range);

/**
 * mpa_crc_value() - CRC32c value of a flat buffer
 * @p: octets
 * @len: number of octets
 *
 * Return: the finished CRC value (as iSCSI defines it), ready for
 * mpa_crc_put().
 */
u32 mpa_crc_value(const void *p, u32 len)
{
	return mpa_crc_final(crc32c(mpa_crc_init(), p, len));
}
EXPORT_SYMBOL_IF_KUNIT(mpa_crc_value);
