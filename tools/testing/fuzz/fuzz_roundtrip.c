// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: decode(encode(x)) == x.  A random sequence of ULPDUs
 * is framed back to back from a random start position (near the 32-bit
 * wrap too), with or without Markers, then fed to the decoder in random
 * splits; every ULPDU must come back exactly, with no error.  On the way
 * every Marker in the stream is checked against RFC 5044 section 4.3
 * independently of the layout code, the scattered CRC path is checked
 * against the flat encoder, and mpa_fpdu_fit() against the spans.
 *
 * Input: flags (1) | position (4, LE) | seed (4, LE) | be16 lengths...
 * Lengths are taken modulo 1024 unless flags 0x30 allow up to 64768.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fuzz.h"

#define RT_MAX_STREAM	(140 * 1024)
#define RT_MAX_FPDUS	256

static u8 stream[RT_MAX_STREAM];
static u8 ulpdus[RT_MAX_STREAM];
static u8 stage[MPA_MAX_ULPDU];

struct fpdu_rec {
	u32 start;	/* span start, offset in stream */
	u32 hdr;	/* ULPDU_Length offset in stream */
	u32 end;
	u32 data;	/* offset of the ULPDU in ulpdus[] */
	u32 len;
};

static struct fpdu_rec recs[RT_MAX_FPDUS];

/* R-4.3-7, R-4.3-9, R-4.3-10, A8, A9, without the layout code */
static void check_markers(u32 pos, u32 total, unsigned int nr)
{
	unsigned int k = 0;
	u32 off, ptr;

	for (off = (0U - pos) & (MPA_MARKER_INTERVAL - 1); off < total;
	     off += MPA_MARKER_INTERVAL) {
		while (k < nr && recs[k].end <= off)
			k++;
		if (k == nr)
			abort();	/* a Marker after the last FPDU */
		if (stream[off] || stream[off + 1])
			abort();	/* RESERVED is sent as 0 */
		ptr = stream[off + 2] << 8 | stream[off + 3];
		if (off == recs[k].start) {
			if (ptr)
				abort();
		} else if (off - recs[k].hdr != ptr || off < recs[k].hdr ||
			   off + 4 > recs[k].end - 4) {
			abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mpa_fpdu_layout lo;
	struct mpa_rx_event ev;
	struct mpa_buf v[3];
	struct mpa_rx rx;
	u32 pos, seed, total = 0, utotal = 0, i, at, staged, got, cap;
	unsigned int nr = 0, k;
	bool markers, crc;
	int span, fit;

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

		span = mpa_fpdu_encode(pos + total, markers, ulpdus + utotal,
				       len, stream + total,
				       RT_MAX_STREAM - total);
		if (span < 0 || (u32)span != lo.span)
			abort();

		/* the TX builder's path: scattered ULPDU, CRC from layout */
		v[0].base = ulpdus + utotal;
		v[0].len = len ? fuzz_rand(&seed) % (len + 1) : 0;
		v[1].base = ulpdus + utotal + v[0].len;
		v[1].len = (len - v[0].len) / 2;
		v[2].base = (u8 *)v[1].base + v[1].len;
		v[2].len = len - v[0].len - v[1].len;
		if (mpa_fpdu_crc(&lo, v, 3) !=
		    mpa_crc_get(stream + total + span - 4))
			abort();
		if (mpa_fpdu_verify(&lo, stream + total, true) != MPA_RX_OK)
			abort();

		fit = mpa_fpdu_fit(pos + total, markers, span);
		if (fit < (int)len)
			abort();
		fit = mpa_fpdu_fit(pos + total, markers, span - 1);
		if (fit >= (int)len)
			abort();

		recs[nr].start = total;
		recs[nr].hdr = total + lo.hdr_off;
		recs[nr].end = total + span;
		recs[nr].data = utotal;
		recs[nr].len = len;
		nr++;
		total += span;
		utotal += len;
	}
	if (!nr)
		return 0;
	if (markers)
		check_markers(pos, total, nr);

	if (mpa_rx_init(&rx, pos, markers, crc))
		abort();
	at = 0;
	k = 0;
	staged = 0;
	while (at < total) {
		u32 chunk = fuzz_min(total - at, 1 + fuzz_rand(&seed) %
				     (seed & 0x100 ? 9 : 3000));

		while (chunk) {
			got = mpa_rx_feed(&rx, stream + at, chunk, &ev);
			at += got;
			chunk -= got;
			switch (ev.type) {
			case MPA_RX_EV_DATA:
				if (k >= nr || ev.ulpdu_off != staged ||
				    ev.ulpdu_len != recs[k].len)
					abort();
				memcpy(stage + staged, ev.data, ev.len);
				staged += ev.len;
				break;
			case MPA_RX_EV_FPDU:
				if (k >= nr || staged != recs[k].len ||
				    ev.fpdu_pos != pos + recs[k].start ||
				    at != recs[k].end ||
				    memcmp(stage, ulpdus + recs[k].data, staged))
					abort();
				k++;
				staged = 0;
				break;
			case MPA_RX_EV_ERROR:
				abort();
			case MPA_RX_EV_NONE:
				break;
			}
		}
	}
	if (k != nr || !mpa_rx_at_boundary(&rx) || rx.pos != pos + total)
		abort();
	return 0;
}
