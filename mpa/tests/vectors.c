// SPDX-License-Identifier: GPL-2.0
/*
 * Test vectors shared by the KUnit suites of the protocol core, byte for
 * byte as RFC 5044 prints them (CRC least significant octet first), and
 * the helpers that build FPDUs for them.
 */
#include <linux/errno.h>
#include <linux/string.h>

#include "core/core.h"
#include "vectors.h"

const u8 mpa_test_rfc_fig5[52] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, [48] = 0x52, 0x23, 0x99, 0x83,
};

const u8 mpa_test_rfc_fig6[52] = {
	0x00, 0x2a, 0x41, 0x43, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x14,
	[48] = 0x84, 0x92, 0x58, 0x98,
};

/* The CRC value of a flat buffer, ready for mpa_crc_put() */
u32 mpa_test_crc(const void *p, u32 len)
{
	return mpa_crc_final(mpa_crc_update(mpa_crc_init(), p, len));
}

/*
 * Frame one ULPDU at stream position @pos into a flat buffer, from the
 * core's layout and pieces as the transmit path does.
 *
 * Return: the span, or -EMSGSIZE, -EINVAL (see mpa_fpdu_layout()) or
 * -ENOSPC if @size is too small.
 */
int mpa_test_encode(u32 pos, bool markers, const void *ulpdu, u32 len,
		    void *buf, u32 size)
{
	struct mpa_fpdu_layout lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	u8 *out = buf;
	int err;

	err = mpa_fpdu_layout(&lo, pos, markers, len);
	if (err)
		return err;
	if (size < lo.span)
		return -ENOSPC;
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(&lo, &it, &p)) {
		if (p.type == MPA_PIECE_ULPDU)
			memcpy(out + p.off, (const u8 *)ulpdu + p.ulpdu_off,
			       p.len);
		else if (p.type == MPA_PIECE_CRC)
			mpa_crc_put(out + p.off, mpa_test_crc(out, p.off));
		else
			mpa_piece_fill(&lo, &p, out + p.off);
	}
	return lo.span;
}
