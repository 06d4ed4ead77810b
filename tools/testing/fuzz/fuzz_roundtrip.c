// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: what the transmit path builds, the receive path takes
 * back. A random sequence of ULPDUs is framed back to back from a random
 * start position (near the 32-bit wrap too), with or without Markers, from
 * the core's layout and pieces the way mpa/tx.c builds FPDUs (the CRC run
 * piece by piece over a scattered ULPDU); every octet must be what the
 * reference encoder of ref.c (RFC 5044 section 4, no shared code) writes.
 * An FPDU without Markers is also framed the sender's short way, in one
 * call (mpa_fpdu_frame()), with the CRC and with a zero CRC field.
 * Then the receive machine gets the stream in random pieces: every ULPDU
 * must come back exactly, at the right place, with no error.
 *
 * Input: flags (1) | position (4, LE) | seed (4, LE) | be16 lengths...
 * Lengths are taken modulo 1024 unless flags 0x30 allow up to 64768.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/errno.h>

#include "core/core.h"
#include "fuzz.h"
#include "ref.h"

#define RT_MAX_STREAM	(140 * 1024)
#define RT_MAX_FPDUS	256

static u8 stream[RT_MAX_STREAM];
static u8 expect[RT_MAX_STREAM];
static u8 ulpdus[RT_MAX_STREAM];

struct fpdu_rec {
	u32 start;	/* offset in the stream */
	u32 end;
	u32 data;	/* offset of the ULPDU in ulpdus[] */
	u32 len;
};

static struct fpdu_rec recs[RT_MAX_FPDUS];
static u8 frame[RT_MAX_STREAM + 1];

/*
 * Frame the ULPDU as mpa/tx.c does when no Marker falls in the FPDU: the
 * ULPDU copied in place, then mpa_fpdu_frame(). It must write what the
 * reference wrote (@expect), with the CRC or with a zero CRC field, over
 * a buffer holding garbage where the PAD goes, and nothing past the span;
 * with a Marker in the span it must refuse and write nothing.
 */
static void frame_check(const struct mpa_fpdu_layout *lo, const u8 *ulpdu,
			const u8 *expect)
{
	static const u8 zero[MPA_CRC_SIZE];
	u32 crc_off = lo->span - MPA_CRC_SIZE, i;

	memset(frame, 0xa5, lo->span + 1);
	if (mpa_fpdu_has_markers(lo)) {
		if (mpa_fpdu_frame(lo, frame, true) != -EINVAL)
			abort();
		for (i = 0; i <= lo->span; i++)
			if (frame[i] != 0xa5)
				abort();
		return;
	}
	memcpy(frame + MPA_HDR_SIZE, ulpdu, lo->ulpdu_len);
	if (mpa_fpdu_frame(lo, frame, true) ||
	    memcmp(frame, expect, lo->span) || frame[lo->span] != 0xa5)
		abort();
	if (mpa_fpdu_frame(lo, frame, false) ||
	    memcmp(frame, expect, crc_off) ||
	    memcmp(frame + crc_off, zero, MPA_CRC_SIZE) ||
	    frame[lo->span] != 0xa5)
		abort();
}

/*
 * Build one FPDU as mpa/tx.c does: each piece of the layout, ULPDU octets
 * copied from a ULPDU in three scattered parts, the CRC register fed as
 * the pieces are written.
 */
static u32 tx_build(const struct mpa_fpdu_layout *lo, const u8 *ulpdu,
		    u32 cut1, u32 cut2, u8 *out)
{
	const u8 *part[3] = { ulpdu, ulpdu + cut1, ulpdu + cut2 };
	u32 end[3] = { cut1, cut2, lo->ulpdu_len };
	u32 crc = mpa_crc_init();
	struct mpa_piece_iter it;
	struct mpa_piece p;
	u32 wire = 0, i, o, n;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p)) {
		if (p.off != wire || !p.len)
			abort();
		switch (p.type) {
		case MPA_PIECE_ULPDU:
			for (o = p.ulpdu_off; o < p.ulpdu_off + p.len; o += n) {
				for (i = 0; o >= end[i]; i++)
					;
				n = fuzz_min(end[i], p.ulpdu_off + p.len) - o;
				memcpy(out + wire + o - p.ulpdu_off,
				       part[i] + o - (i ? end[i - 1] : 0), n);
			}
			crc = mpa_crc_update(crc, out + wire, p.len);
			break;
		case MPA_PIECE_CRC:
			if (p.len != MPA_CRC_SIZE)
				abort();
			mpa_crc_put(out + wire, mpa_crc_final(crc));
			break;
		default:
			mpa_piece_fill(lo, &p, out + wire);
			crc = mpa_crc_update(crc, out + wire, p.len);
			break;
		}
		wire += p.len;
	}
	return wire;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpa_fpdu_layout lo;
	struct mpa_rxm m;
	u32 pos, seed, total = 0, utotal = 0, i, at, fpdu, cap, used, chunk;
	u32 cut1, cut2, off, n, wire;
	unsigned int nr = 0, k;
	bool markers, crc;

	if (size < 9)
		return 0;
	markers = data[0] & 1;
	crc = data[0] & 2;
	pos = fuzz_get32(data + 1);
	switch ((data[0] >> 2) & 3) {
	case 1:
		pos = 0U - (pos & 0xffff);	/* close below the wrap */
		break;
	case 2:
		pos &= 0xfff;
		break;
	}
	if (markers)
		pos &= ~3U;
	seed = fuzz_get32(data + 5);
	cap = (data[0] & 0x30) == 0x30 ? MPA_MAX_ULPDU + 1 : 1024;
	data += 9;
	size -= 9;

	for (; size >= 2 && nr < RT_MAX_FPDUS; data += 2, size -= 2) {
		u32 len = (data[0] << 8 | data[1]) % cap;

		if (mpa_fpdu_layout(&lo, pos + total, markers, len))
			abort();
		if (total + lo.span > RT_MAX_STREAM ||
		    utotal + len > RT_MAX_STREAM)
			break;
		for (i = 0; i < len; i++)
			ulpdus[utotal + i] = i & 3 ? ulpdus[utotal + i - 1] + 1 :
					     fuzz_rand(&seed);
		cut1 = len ? fuzz_rand(&seed) % (len + 1) : 0;
		cut2 = cut1 + (len - cut1) / 2;
		if (tx_build(&lo, ulpdus + utotal, cut1, cut2,
			     stream + total) != lo.span)
			abort();
		if (ref_encode(pos + total, markers, ulpdus + utotal, len,
			       expect + total, RT_MAX_STREAM - total) !=
		    lo.span ||
		    memcmp(stream + total, expect + total, lo.span))
			abort();
		frame_check(&lo, ulpdus + utotal, expect + total);
		recs[nr].start = total;
		recs[nr].end = total + lo.span;
		recs[nr].data = utotal;
		recs[nr].len = len;
		nr++;
		total += lo.span;
		utotal += len;
	}
	if (!nr)
		return 0;

	if (mpa_rxm_init(&m, pos, markers, crc))
		abort();
	at = 0;
	fpdu = 0;
	k = 0;
	while (at < total) {
		chunk = fuzz_min(total - at, 1 + fuzz_rand(&seed) %
				 (seed & 0x100 ? 9 : 3000));
		for (; chunk; chunk -= used) {
			used = mpa_rxm_feed(&m, stream + at, chunk);
			at += used;
			if (mpa_rxm_state(&m) == MPA_RXM_MORE)
				continue;
			if (mpa_rxm_state(&m) != MPA_RXM_FPDU || k >= nr ||
			    fpdu != recs[k].start || at != recs[k].end ||
			    mpa_rxm_ulpdu_len(&m) != recs[k].len)
				abort();
			for (off = 0; off < recs[k].len; off += n) {
				n = mpa_rxm_locate(&m, off, &wire);
				if (!n || memcmp(stream + fpdu + wire,
						 ulpdus + recs[k].data + off, n))
					abort();
			}
			k++;
			fpdu = at;
			mpa_rxm_next(&m);
		}
	}
	if (k != nr || mpa_rxm_fin(&m) != MPA_RXM_MORE)
		abort();
	return 0;
}
