// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the incremental FPDU decoder (mpa/core/decode.c) on
 * arbitrary streams, with and without Markers and CRCs, from arbitrary
 * start positions, fed whole and in arbitrary splits.  The results must
 * not depend on the split; the decoder must never read out of bounds,
 * report more ULPDU octets than ULPDU_Length or skip octets, and each
 * verdict must agree with mpa_fpdu_verify() on the same octets.
 *
 * Input: flags (1) | start position (4, LE) | split seed (4, LE) | stream
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fuzz.h"

/* The flat checker must reach the same verdict as the streaming decoder */
static void cross_check(const u8 *s, u32 len, u32 pos, bool markers,
			bool crc, const struct mpa_rx_event *ev)
{
	struct mpa_fpdu_layout lo;
	u32 off = ev->fpdu_pos - pos;
	enum mpa_rx_error want;

	if (ev->type == MPA_RX_EV_ERROR && ev->detail == MPA_RX_ERR_LENGTH)
		return;
	if (mpa_fpdu_layout(&lo, ev->fpdu_pos, markers, ev->ulpdu_len))
		abort();
	if (off > len || lo.span > len - off)
		abort();
	want = ev->type == MPA_RX_EV_FPDU ? MPA_RX_OK : ev->detail;
	if (mpa_fpdu_verify(&lo, s + off, crc) != want)
		abort();
}

struct result {
	u32 fpdus;
	u32 octets;
	u32 hash;
	u32 last_pos;
	int error;
	int detail;
	u32 consumed;
	bool boundary;
};

static void decode(const u8 *s, u32 len, u32 pos, bool markers, bool crc,
		   u32 seed, struct result *r)
{
	struct mpa_rx_event ev;
	struct mpa_rx rx;
	u32 at = 0, staged = 0, hash = FUZZ_HASH_INIT;

	memset(r, 0, sizeof(*r));
	if (mpa_rx_init(&rx, pos, markers, crc))
		abort();
	while (at < len) {
		u32 chunk = len - at, n;

		if (seed)
			chunk = fuzz_min(chunk, 1 + fuzz_rand(&seed) % 97);
		while (chunk) {
			n = mpa_rx_feed(&rx, s + at, chunk, &ev);
			if (n > chunk)
				abort();
			at += n;
			chunk -= n;
			r->consumed += n;
			switch (ev.type) {
			case MPA_RX_EV_DATA:
				if (ev.ulpdu_off != staged || !ev.len ||
				    ev.data < s || ev.data + ev.len > s + len ||
				    staged + ev.len > ev.ulpdu_len ||
				    ev.ulpdu_len > MPA_MAX_ULPDU)
					abort();
				hash = fuzz_hash(hash, ev.data, ev.len);
				staged += ev.len;
				break;
			case MPA_RX_EV_FPDU:
				if (staged != ev.ulpdu_len)
					abort();
				cross_check(s, len, pos, markers, crc, &ev);
				r->fpdus++;
				r->octets += staged;
				r->hash ^= hash + r->fpdus;
				r->last_pos = ev.fpdu_pos;
				staged = 0;
				hash = FUZZ_HASH_INIT;
				break;
			case MPA_RX_EV_ERROR:
				r->error = ev.error;
				r->detail = ev.detail;
				if (ev.error != MPA_ERR_CRC &&
				    ev.error != MPA_ERR_MARKER)
					abort();
				if (!crc && ev.detail == MPA_RX_ERR_CRC)
					abort();
				if (!markers && ev.detail == MPA_RX_ERR_MARKER)
					abort();
				cross_check(s, len, pos, markers, crc, &ev);
				/* sticky */
				if (mpa_rx_feed(&rx, s, len, &ev) ||
				    ev.type != MPA_RX_EV_ERROR)
					abort();
				goto out;
			case MPA_RX_EV_NONE:
				if (chunk)
					abort();
				break;
			}
		}
	}
out:
	r->boundary = mpa_rx_at_boundary(&rx);
	if (!r->error && r->consumed != len)
		abort();
	if (r->boundary && staged)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result whole, split;
	bool markers, crc;
	u32 pos, seed, i;

	if (size < 9 || size > 300000)
		return 0;
	markers = data[0] & 1;
	crc = data[0] & 2;
	pos = fuzz_get32(data + 1);
	if (markers)
		pos &= ~3U;
	seed = fuzz_get32(data + 5) | 1;
	data += 9;
	size -= 9;

	decode(data, size, pos, markers, crc, 0, &whole);
	for (i = 0; i < 3; i++) {
		decode(data, size, pos, markers, crc, seed + i * 0x9e3779b9,
		       &split);
		if (memcmp(&whole, &split, sizeof(whole)))
			abort();
	}
	return 0;
}
