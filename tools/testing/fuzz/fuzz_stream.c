// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the receive machine (mpa/core/rxm.c), the parser the
 * kernel's receive path runs, on arbitrary octet streams cut into
 * arbitrary pieces, against the reference decoder of ref.c (RFC 5044
 * section 4, no code shared with the core).
 *
 * The harness drives the machine the way mpa/rx.c does: it feeds each
 * piece, and when the machine judges an FPDU valid it takes the ULPDU out
 * of the stream at the wire offsets mpa_rxm_locate() gives, moves on with
 * mpa_rxm_next() and feeds the rest of the piece; after the last piece it
 * reports the peer's FIN (mpa_rxm_fin()). Both must agree on every ULPDU
 * delivered (where, how long, its octets, in order) and on how the stream
 * ended: the first error's RFC 5044 section 8 code and reason, the offset
 * of the FPDU it is in and the octet that decided it; or a clean end.
 *
 * Input:
 *   flags (1): bit 0 Markers, bit 1 CRCs, bits 2-3 where the stream starts
 *	(0: anywhere, 1: within 64 KiB below the 2^32 wrap, 2: within 2 KiB
 *	below it, 3: within 4 KiB of SeqStart), bit 4 fix up every Marker's
 *	FPDUPTR, bit 5 fix up every CRC, bit 6 then flip bits of one octet
 *   start position (4, LE)
 *   octet to flip (2, LE, modulo the stream's length), bits to flip (1)
 *   number of piece sizes K (1), piece sizes (K): each octet b is a piece
 *	of b + 1 octets below 0xf0, of (b - 0xef) * 4096 octets above; they
 *	repeat; none: the stream in one piece
 *   the stream
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fuzz.h"
#include "ref.h"

#define MAX_STREAM	(1 << 17)
#define MAX_FPDUS	(MAX_STREAM / 8 + 1)

static u8 stream[MAX_STREAM];
static u8 ref_ulpdus[MAX_STREAM];
static struct ref_fpdu ref_fpdus[MAX_FPDUS];

/* What the machine did */
struct run {
	u32 nr;			/* FPDUs delivered */
	u32 fpdu;		/* offset of the current FPDU */
	u32 at;			/* octets consumed */
	u32 total;		/* ULPDU octets delivered */
};

static enum ref_error ref_error_of(const struct mpa_rxm *m)
{
	switch (mpa_rxm_state(m)) {
	case MPA_RXM_MORE:
		return REF_OK;
	case MPA_RXM_FPDU:
		abort();	/* delivered before the end */
	case MPA_RXM_ERROR:
		break;
	}
	switch (m->reason) {
	case MPA_REASON_BAD_LENGTH:
		if (m->code != MPA_ERR_CRC)
			abort();
		return REF_LENGTH;
	case MPA_REASON_CRC:
		if (m->code != MPA_ERR_CRC || !m->crc)
			abort();
		return REF_CRC;
	case MPA_REASON_MARKER:
		if (m->code != MPA_ERR_MARKER || !m->markers)
			abort();
		return REF_MARKER;
	case MPA_REASON_TRUNCATED:
		if (m->code != MPA_ERR_TCP_CLOSED)
			abort();
		return REF_TRUNCATED;
	}
	abort();
}

/* The machine judged an FPDU valid: check it against the reference's. */
static void deliver(const struct mpa_rxm *m, const struct ref_result *ref,
		    struct run *run)
{
	const struct ref_fpdu *want;
	u32 len = mpa_rxm_ulpdu_len(m), off, n, wire;

	if (run->nr >= ref->nr)
		abort();	/* the reference found no such FPDU */
	want = &ref->fpdus[run->nr];
	if (want->start != run->fpdu || want->end != run->at ||
	    want->len != len || mpa_rxm_span(m) != run->at - run->fpdu)
		abort();
	/* the ULPDU's octets, where the machine says they are */
	for (off = 0; off < len; off += n) {
		n = mpa_rxm_locate(m, off, &wire);
		if (!n || n > len - off ||
		    wire + n > mpa_rxm_span(m) - MPA_CRC_SIZE ||
		    memcmp(stream + run->fpdu + wire,
			   ref->ulpdus + want->data + off, n))
			abort();
	}
	if (mpa_rxm_locate(m, len, &wire))
		abort();
	run->nr++;
	run->total += len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ref_result ref = {
		.max = MAX_FPDUS, .fpdus = ref_fpdus, .ulpdus = ref_ulpdus,
	};
	u32 pos, n, flip_at, k, nsplit, piece, left, used;
	const u8 *splits;
	struct mpa_rxm m;
	struct run run = {};
	bool markers, crc;
	u8 flags, flip;

	if (size < 9)
		return 0;
	flags = data[0];
	pos = fuzz_get32(data + 1);
	flip_at = data[5] | data[6] << 8;
	flip = data[7];
	nsplit = data[8];
	if (size < 9 + nsplit)
		return 0;
	splits = data + 9;
	data += 9 + nsplit;
	size -= 9 + nsplit;
	if (size > MAX_STREAM)
		return 0;
	n = size;
	memcpy(stream, data, n);

	markers = flags & 1;
	crc = flags & 2;
	switch ((flags >> 2) & 3) {
	case 1:
		pos = 0U - (pos & 0xffff);
		break;
	case 2:
		pos = 0U - (pos & 0x7ff);
		break;
	case 3:
		pos &= 0xfff;
		break;
	}
	/* with Markers, FPDUs start at multiples of 4 from SeqStart */
	if (markers)
		pos &= ~3U;
	if (flags & 0x30)
		ref_repair(stream, n, pos, markers, flags & 0x10, flags & 0x20);
	if ((flags & 0x40) && n)
		stream[flip_at % n] ^= flip;

	ref_decode(stream, n, pos, markers, crc, &ref);

	if (mpa_rxm_init(&m, pos, markers, crc))
		abort();
	k = 0;
	while (run.at < n && mpa_rxm_state(&m) != MPA_RXM_ERROR) {
		piece = n - run.at;
		if (nsplit) {
			u8 b = splits[k++ % nsplit];

			piece = fuzz_min(piece, b < 0xf0 ? b + 1U :
					 (b - 0xefU) * 4096);
		}
		for (left = piece; left; left -= used) {
			used = mpa_rxm_feed(&m, stream + run.at, left);
			if (used > left)
				abort();
			run.at += used;
			if (mpa_rxm_fed(&m) != run.at - run.fpdu)
				abort();
			/* copy mode sizes its buffer by the extent */
			if (mpa_rxm_fed(&m) > mpa_rxm_extent(&m))
				abort();
			if (mpa_rxm_state(&m) == MPA_RXM_MORE) {
				if (used != left)
					abort();
				continue;
			}
			if (mpa_rxm_state(&m) == MPA_RXM_ERROR)
				break;
			if (mpa_rxm_extent(&m) != mpa_rxm_span(&m))
				abort();
			/* nothing more is taken until it is delivered */
			if (mpa_rxm_feed(&m, stream + run.at, left - used))
				abort();
			deliver(&m, &ref, &run);
			mpa_rxm_next(&m);
			run.fpdu = run.at;
			if (mpa_rxm_fed(&m) || mpa_rxm_state(&m) != MPA_RXM_MORE)
				abort();
		}
	}
	mpa_rxm_fin(&m);

	/* the same ULPDUs, and the same end */
	if (run.nr != ref.nr || run.total != ref.total)
		abort();
	if (ref_error_of(&m) != ref.error)
		abort();
	if (ref.error == REF_OK) {
		if (run.at != n || run.fpdu != n)
			abort();
	} else if (run.fpdu != ref.err_start || run.at != ref.err_at ||
		   (int)m.code != ref.code) {
		abort();
	}
	/* and an error is for good (R-8-9) */
	if (mpa_rxm_state(&m) == MPA_RXM_ERROR &&
	    (mpa_rxm_feed(&m, stream, n) ||
	     mpa_rxm_fin(&m) != MPA_RXM_ERROR))
		abort();
	return 0;
}
