// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the MPA receive machine (mpa/core/rxm.c): the RFC 5044
 * figures fed one octet at a time, every section 8 error at every octet
 * offset of small FPDUs with and without Markers, the 32-bit wrap, and
 * the same verdicts however the stream is cut.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "core/core.h"
#include "vectors.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define RXM_MAX_FPDUS	64
#define RXM_CAP		16384

/* What one run of the machine over a stream delivered and decided */
struct rxm_res {
	u32 nr;				/* valid FPDUs */
	u32 start[RXM_MAX_FPDUS];	/* their offsets in the stream */
	u32 ulen[RXM_MAX_FPDUS];	/* their ULPDU_Length */
	u32 total;			/* ULPDU octets delivered */
	u8 *data;			/* those octets, in order */
	enum mpa_rxm_state state;	/* at the end */
	u32 code;
	u32 reason;
	u32 err_start;			/* offset of the FPDU it ended in */
	u32 consumed;			/* octets the machine took */
};

static struct rxm_res *rxm_res_alloc(struct kunit *test)
{
	struct rxm_res *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->data = kunit_kzalloc(test, RXM_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->data);
	return r;
}

static u32 rxm_rand(u32 *state)
{
	u32 x = *state ? *state : 0x2545f491;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* Take the valid FPDU's ULPDU out of the stream, where the machine says. */
static void rxm_deliver(struct kunit *test, const struct mpa_rxm *m,
			const u8 *fpdu, struct rxm_res *r)
{
	u32 len = mpa_rxm_ulpdu_len(m), off, n, wire;

	KUNIT_ASSERT_LT(test, r->total + len, (u32)RXM_CAP + 1);
	for (off = 0; off < len; off += n) {
		n = mpa_rxm_locate(m, off, &wire);
		KUNIT_ASSERT_GT(test, n, 0U);
		KUNIT_ASSERT_LE(test, wire + n, mpa_rxm_span(m) - MPA_CRC_SIZE);
		memcpy(r->data + r->total, fpdu + wire, n);
		r->total += n;
	}
	KUNIT_EXPECT_EQ(test, mpa_rxm_locate(m, len, &wire), 0U);
}

/*
 * Feed @len octets of @s to a machine started at @pos: in pieces of @chunk
 * octets (0: all at once), or of random sizes below @chunk when @seed is
 * not 0; deliver each valid FPDU as the receive path does; then tell it of
 * the end of the stream if @fin.
 */
static void rxm_run(struct kunit *test, struct rxm_res *r, const u8 *s,
		    u32 len, u32 pos, bool markers, bool crc, u32 chunk,
		    u32 seed, bool fin)
{
	u8 *data = r->data;
	struct mpa_rxm m;
	u32 at = 0, fpdu = 0, n, used;

	memset(r, 0, sizeof(*r));
	r->data = data;
	KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, pos, markers, crc), 0);
	while (at < len && mpa_rxm_state(&m) != MPA_RXM_ERROR) {
		n = len - at;
		if (seed)
			n = min(n, 1 + rxm_rand(&seed) % chunk);
		else if (chunk)
			n = min(n, chunk);
		while (n) {
			used = mpa_rxm_feed(&m, s + at, n);
			KUNIT_ASSERT_LE(test, used, n);
			at += used;
			n -= used;
			KUNIT_ASSERT_EQ(test, mpa_rxm_fed(&m), at - fpdu);
			/* what copy mode sizes its buffer by */
			KUNIT_ASSERT_LE(test, mpa_rxm_fed(&m),
					mpa_rxm_extent(&m));
			if (mpa_rxm_state(&m) == MPA_RXM_ERROR)
				break;
			if (mpa_rxm_state(&m) == MPA_RXM_MORE) {
				KUNIT_ASSERT_EQ(test, n, 0U);
				break;
			}
			/* A valid FPDU: it ends here, nothing more is taken */
			KUNIT_ASSERT_EQ(test, mpa_rxm_span(&m), at - fpdu);
			KUNIT_ASSERT_EQ(test, mpa_rxm_extent(&m), at - fpdu);
			KUNIT_ASSERT_EQ(test, mpa_rxm_feed(&m, s + at, n), 0U);
			KUNIT_ASSERT_LT(test, r->nr, (u32)RXM_MAX_FPDUS);
			r->start[r->nr] = fpdu;
			r->ulen[r->nr++] = mpa_rxm_ulpdu_len(&m);
			rxm_deliver(test, &m, s + fpdu, r);
			fpdu = at;
			mpa_rxm_next(&m);
			KUNIT_ASSERT_EQ(test, mpa_rxm_fed(&m), 0U);
		}
	}
	if (fin)
		mpa_rxm_fin(&m);
	if (mpa_rxm_state(&m) == MPA_RXM_ERROR) {
		/* sticky (R-8-9) */
		KUNIT_EXPECT_EQ(test, mpa_rxm_feed(&m, s, len), 0U);
		KUNIT_EXPECT_EQ(test, mpa_rxm_fin(&m), MPA_RXM_ERROR);
		mpa_rxm_next(&m);
		KUNIT_EXPECT_EQ(test, mpa_rxm_state(&m), MPA_RXM_ERROR);
	}
	r->state = mpa_rxm_state(&m);
	r->code = m.code;
	r->reason = m.reason;
	r->err_start = fpdu;
	r->consumed = at;
}

static void rxm_expect_same(struct kunit *test, const struct rxm_res *a,
			    const struct rxm_res *b)
{
	KUNIT_EXPECT_EQ(test, a->nr, b->nr);
	KUNIT_EXPECT_MEMEQ(test, a->start, b->start, sizeof(a->start));
	KUNIT_EXPECT_MEMEQ(test, a->ulen, b->ulen, sizeof(a->ulen));
	KUNIT_ASSERT_EQ(test, a->total, b->total);
	KUNIT_EXPECT_MEMEQ(test, a->data, b->data, a->total);
	KUNIT_EXPECT_EQ(test, a->state, b->state);
	KUNIT_EXPECT_EQ(test, a->code, b->code);
	KUNIT_EXPECT_EQ(test, a->reason, b->reason);
	KUNIT_EXPECT_EQ(test, a->err_start, b->err_start);
	KUNIT_EXPECT_EQ(test, a->consumed, b->consumed);
}

static void rxm_expect_error(struct kunit *test, const struct rxm_res *r,
			     u32 code, u32 reason, u32 start, u32 consumed)
{
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_ERROR);
	KUNIT_EXPECT_EQ(test, r->code, code);
	KUNIT_EXPECT_EQ(test, r->reason, reason);
	KUNIT_EXPECT_EQ(test, r->err_start, start);
	KUNIT_EXPECT_EQ(test, r->consumed, consumed);
}

/* The 42-octet ULPDU of RFC 5044 Figures 5 and 6 (DDP Send, MSN @msn) */
static void fig_ulpdu(u8 *u, u8 msn)
{
	memset(u, 0, 42);
	u[0] = 0x41;
	u[1] = 0x43;
	u[13] = msn;
}

/* RFC 5044 Figure 5, one octet at a time: judged at its 52nd octet */
static void rxm_fig5_octets(struct kunit *test)
{
	const u8 *s = mpa_test_rfc_fig5;
	struct rxm_res *r = rxm_res_alloc(test);
	struct mpa_rxm m;
	u32 i, wire;

	KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, 0, true, true), 0);
	for (i = 0; i < 51; i++) {
		KUNIT_ASSERT_EQ(test, mpa_rxm_feed(&m, s + i, 1), 1U);
		KUNIT_ASSERT_EQ(test, mpa_rxm_state(&m), MPA_RXM_MORE);
	}
	KUNIT_ASSERT_EQ(test, mpa_rxm_feed(&m, s + 51, 1), 1U);
	KUNIT_ASSERT_EQ(test, mpa_rxm_state(&m), MPA_RXM_FPDU);
	KUNIT_EXPECT_EQ(test, mpa_rxm_ulpdu_len(&m), 42U);
	KUNIT_EXPECT_EQ(test, mpa_rxm_span(&m), 52U);
	KUNIT_EXPECT_EQ(test, mpa_rxm_nr_markers(&m), 1U);
	/* the leading Marker and ULPDU_Length come first */
	KUNIT_EXPECT_EQ(test, mpa_rxm_locate(&m, 0, &wire), 42U);
	KUNIT_EXPECT_EQ(test, wire, 6U);

	rxm_run(test, r, s, 52, 0, true, true, 1, 0, true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_ASSERT_EQ(test, r->nr, 1U);
	KUNIT_ASSERT_EQ(test, r->total, 42U);
	KUNIT_EXPECT_MEMEQ(test, r->data, s + 6, 42);
}

/*
 * RFC 5044 Figure 6 and the 544-octet stream behind it, one octet at a
 * time: the Marker at 0x200 is stripped, its FPDUPTR 0x14 checked.
 */
static void rxm_fig6_octets(struct kunit *test)
{
	const u8 *f6 = mpa_test_rfc_fig6;
	struct rxm_res *r = rxm_res_alloc(test);
	u8 *s, *u, want[42];

	/* the FPDU alone, at stream offset 492 */
	rxm_run(test, r, f6, 52, 492, true, true, 1, 0, true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_ASSERT_EQ(test, r->nr, 1U);
	KUNIT_ASSERT_EQ(test, r->total, 42U);
	memcpy(want, f6 + 2, 18);
	memcpy(want + 18, f6 + 24, 24);
	KUNIT_EXPECT_MEMEQ(test, r->data, want, 42);
	fig_ulpdu(want, 2);
	KUNIT_EXPECT_MEMEQ(test, r->data, want, 42);

	/* the whole stream from SeqStart: the 482-octet FPDU, then Figure 6 */
	s = kunit_kzalloc(test, 544, GFP_KERNEL);
	u = kunit_kzalloc(test, 482, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, u);
	fig_ulpdu(u, 1);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(0, true, u, 482, s, 544), 492);
	memcpy(s + 492, f6, 52);
	rxm_run(test, r, s, 544, 0, true, true, 1, 0, true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_ASSERT_EQ(test, r->nr, 2U);
	KUNIT_EXPECT_EQ(test, r->start[1], 492U);
	KUNIT_EXPECT_EQ(test, r->ulen[0], 482U);
	KUNIT_EXPECT_EQ(test, r->ulen[1], 42U);
	KUNIT_ASSERT_EQ(test, r->total, 524U);
	KUNIT_EXPECT_MEMEQ(test, r->data, u, 482);
	KUNIT_EXPECT_MEMEQ(test, r->data + 482, want, 42);
	/* a bad FPDUPTR in Figure 6 (CRC fixed up): code 3 at its end */
	s[492 + 23] = 0x18;
	mpa_crc_put(s + 492 + 48, mpa_test_crc(s + 492, 48));
	rxm_run(test, r, s, 544, 0, true, true, 1, 0, true);
	KUNIT_EXPECT_EQ(test, r->nr, 1U);
	rxm_expect_error(test, r, MPA_ERR_MARKER, MPA_REASON_MARKER, 492, 544);
}

/* A small FPDU to corrupt: where it starts, Markers, ULPDU_Length */
struct rxm_shape {
	const char *name;
	u32 pos;
	bool markers;
	u32 len;
};

static const struct rxm_shape rxm_shapes[] = {
	/* Figure 4's shape: a Marker inside the ULPDU, PAD 2 */
	{ "marker inside", 500, true, 16 },
	/* a leading Marker (R-4.3-7) */
	{ "leading marker", 1024, true, 16 },
	/* a Marker between PAD and CRC (A9) */
	{ "marker before CRC", 468, true, 41 },
	{ "no markers", 500, false, 16 },
	{ "no markers, PAD 3", 7, false, 13 },
};

struct rxm_param {
	const struct rxm_shape *shape;
	bool crc;
};

static struct rxm_param rxm_params[ARRAY_SIZE(rxm_shapes) * 2];

static const void *rxm_gen_params(const void *prev, char *desc)
{
	const struct rxm_param *p = prev;
	unsigned int i = p ? p - rxm_params + 1 : 0;

	if (i >= ARRAY_SIZE(rxm_params))
		return NULL;
	rxm_params[i].shape = &rxm_shapes[i / 2];
	rxm_params[i].crc = i & 1;
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s, CRC %s",
		 rxm_params[i].shape->name, i & 1 ? "on" : "off");
	return &rxm_params[i];
}

/* The piece of @lo that wire offset @w is in */
static struct mpa_piece rxm_piece_at(const struct mpa_fpdu_layout *lo, u32 w)
{
	struct mpa_piece_iter it;
	struct mpa_piece p;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p))
		if (w >= p.off && w < p.off + p.len)
			return p;
	return p;
}

/* The ULPDU of @lo, taken from the wire image @s by walking its pieces */
static void rxm_ulpdu_of(const struct mpa_fpdu_layout *lo, const u8 *s,
			 u8 *out)
{
	struct mpa_piece_iter it;
	struct mpa_piece p;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p))
		if (p.type == MPA_PIECE_ULPDU)
			memcpy(out + p.ulpdu_off, s + p.off, p.len);
}

/* Do the Markers of @lo in the wire image @s say what they must? */
static bool rxm_markers_agree(const struct mpa_fpdu_layout *lo, const u8 *s)
{
	struct mpa_piece_iter it;
	struct mpa_piece p;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p))
		if (p.type == MPA_PIECE_MARKER &&
		    !mpa_marker_ptr_ok(s + p.off, p.fpduptr))
			return false;
	return true;
}

/*
 * Flip bits (@mask) of the octet at wire offset @i of a small FPDU that is
 * followed by a valid one, and check the verdict: which error, its code
 * and reason, where it was decided, or what is delivered when the octet
 * is not checked. Fed whole, one octet at a time and in random pieces.
 */
static void rxm_corrupt_one(struct kunit *test, const struct rxm_shape *sh,
			    bool crc, u32 i, u8 mask, u8 *s, u32 total,
			    const u8 *good, struct rxm_res *r,
			    struct rxm_res *r2, u8 *want)
{
	struct mpa_fpdu_layout lo, lo2;
	struct mpa_piece p;
	u32 span, hdr, nlen;

	mpa_fpdu_layout(&lo, sh->pos, sh->markers, sh->len);
	span = lo.span;
	hdr = lo.hdr_off;
	memcpy(s, good, total);
	s[i] ^= mask;
	p = rxm_piece_at(&lo, i);

	rxm_run(test, r, s, total, sh->pos, sh->markers, crc, 0, 0, true);
	rxm_run(test, r2, s, total, sh->pos, sh->markers, crc, 1, 0, true);
	rxm_expect_same(test, r, r2);
	rxm_run(test, r2, s, total, sh->pos, sh->markers, crc, 7, i + mask,
		true);
	rxm_expect_same(test, r, r2);

	switch (p.type) {
	case MPA_PIECE_HDR:
		nlen = get_unaligned_be16(s + hdr);
		if (nlen > MPA_MAX_ULPDU) {
			/* A12: code 2 as soon as the field is read */
			rxm_expect_error(test, r, MPA_ERR_CRC,
					 MPA_REASON_BAD_LENGTH, 0, hdr + 2);
			break;
		}
		mpa_fpdu_layout(&lo2, sh->pos, sh->markers, nlen);
		if (lo2.span > total) {
			/* it waits for octets that never come: A15 */
			rxm_expect_error(test, r, MPA_ERR_TCP_CLOSED,
					 MPA_REASON_TRUNCATED, 0, total);
		} else if (crc) {
			rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_CRC,
					 0, lo2.span);
		} else if (!rxm_markers_agree(&lo2, s)) {
			rxm_expect_error(test, r, MPA_ERR_MARKER,
					 MPA_REASON_MARKER, 0, lo2.span);
		} else {
			/* unchecked: the FPDU is what the length says */
			KUNIT_ASSERT_GE(test, r->nr, 1U);
			KUNIT_EXPECT_EQ(test, r->ulen[0], nlen);
			rxm_ulpdu_of(&lo2, s, want);
			KUNIT_EXPECT_MEMEQ(test, r->data, want, nlen);
			/* the same span: PAD octets read as ULPDU now */
			if (lo2.span == span)
				KUNIT_EXPECT_EQ(test, r->nr, 2U);
		}
		return;
	case MPA_PIECE_MARKER:
		/* R-4.2-3, R-4.2-6: RESERVED and the low bits are ignored */
		if (i - p.off >= 2 && (i - p.off == 2 || (mask & ~3))) {
			if (crc)
				rxm_expect_error(test, r, MPA_ERR_CRC,
						 MPA_REASON_CRC, 0, span);
			else
				rxm_expect_error(test, r, MPA_ERR_MARKER,
						 MPA_REASON_MARKER, 0, span);
			return;
		}
		fallthrough;
	default:
		/* every other octet: only the CRC covers it */
		if (crc) {
			rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_CRC,
					 0, span);
			return;
		}
		KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
		KUNIT_EXPECT_EQ(test, r->consumed, total);
		KUNIT_EXPECT_EQ(test, r->nr, 2U);
		KUNIT_EXPECT_EQ(test, r->ulen[0], sh->len);
		rxm_ulpdu_of(&lo, s, want);
		KUNIT_EXPECT_MEMEQ(test, r->data, want, sh->len);
		return;
	}
}

/*
 * Every error at every octet offset of a small FPDU: a flipped bit in each
 * octet (the error its part of the FPDU calls for, or none where nothing
 * checks it), and the stream cut after each octet (code 1, A15).
 */
static void rxm_every_octet(struct kunit *test)
{
	static const u8 masks[] = { 0x01, 0x02, 0x80, 0xff };
	const struct rxm_param *prm = test->param_value;
	const struct rxm_shape *sh = prm->shape;
	struct rxm_res *r = rxm_res_alloc(test);
	struct rxm_res *r2 = rxm_res_alloc(test);
	struct mpa_fpdu_layout lo;
	u8 *good, *s, *u, *want;
	u32 span, total, i, k;
	int n;

	good = kunit_kzalloc(test, 256, GFP_KERNEL);
	s = kunit_kzalloc(test, 256, GFP_KERNEL);
	u = kunit_kzalloc(test, 64, GFP_KERNEL);
	want = kunit_kzalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, good);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, want);
	for (i = 0; i < 64; i++)
		u[i] = 0x30 + i;
	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, sh->pos, sh->markers,
					      sh->len), 0);
	span = lo.span;
	n = mpa_test_encode(sh->pos, sh->markers, u, sh->len, good, 256);
	KUNIT_ASSERT_EQ(test, n, (int)span);
	/* a valid FPDU of 8 octets behind it */
	n = mpa_test_encode(sh->pos + span, sh->markers, u + 40, 8,
			    good + span, 256 - span);
	KUNIT_ASSERT_GT(test, n, 0);
	total = span + n;

	/* unharmed: both delivered, however fed */
	rxm_run(test, r, good, total, sh->pos, sh->markers, prm->crc, 1, 0,
		true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_ASSERT_EQ(test, r->nr, 2U);
	KUNIT_EXPECT_EQ(test, r->start[1], span);
	KUNIT_ASSERT_EQ(test, r->total, sh->len + 8);
	KUNIT_EXPECT_MEMEQ(test, r->data, u, sh->len);
	KUNIT_EXPECT_MEMEQ(test, r->data + sh->len, u + 40, 8);

	for (i = 0; i < span; i++)
		for (k = 0; k < ARRAY_SIZE(masks); k++)
			rxm_corrupt_one(test, sh, prm->crc, i, masks[k], s,
					total, good, r, r2, want);

	/* cut after every octet, then the peer's FIN */
	for (i = 0; i <= span; i++) {
		rxm_run(test, r, good, i, sh->pos, sh->markers, prm->crc, 1, 0,
			true);
		rxm_run(test, r2, good, i, sh->pos, sh->markers, prm->crc, 0, 0,
			true);
		rxm_expect_same(test, r, r2);
		if (i == 0 || i == span) {
			/* at an FPDU boundary: a clean end */
			KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
			KUNIT_EXPECT_EQ(test, r->nr, i ? 1U : 0U);
		} else {
			KUNIT_EXPECT_EQ(test, r->nr, 0U);
			rxm_expect_error(test, r, MPA_ERR_TCP_CLOSED,
					 MPA_REASON_TRUNCATED, 0, i);
		}
	}
}

/* ULPDU_Length above 64768: code 2 once the field is in (A12) */
static void rxm_length_too_big(struct kunit *test)
{
	static const u16 lens[] = { MPA_MAX_ULPDU + 1, 0xffff };
	struct rxm_res *r = rxm_res_alloc(test);
	u8 s[8] = {};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		/* with a leading Marker: decided at octet 6 of 8 */
		put_unaligned_be16(lens[i], s + 4);
		rxm_run(test, r, s, 8, 0, true, true, 1, 0, false);
		rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_BAD_LENGTH,
				 0, 6);
		rxm_run(test, r, s, 8, 0, true, false, 0, 0, false);
		rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_BAD_LENGTH,
				 0, 6);
		/* without Markers: at octet 2 */
		put_unaligned_be16(lens[i], s);
		rxm_run(test, r, s, 8, 4, false, true, 0, 0, false);
		rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_BAD_LENGTH,
				 0, 2);
	}
	/* 64768 itself is fine: the machine waits for the rest */
	put_unaligned_be16(MPA_MAX_ULPDU, s);
	rxm_run(test, r, s, 8, 4, false, true, 0, 0, false);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_EXPECT_EQ(test, r->consumed, 8U);
}

/* A16: a bad CRC takes precedence over a lying Marker */
static void rxm_crc_precedence(struct kunit *test)
{
	struct rxm_res *r = rxm_res_alloc(test);
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig6, 52);
	s[23] = 0x18;
	rxm_run(test, r, s, 52, 492, true, true, 0, 0, true);
	rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_CRC, 0, 52);
	rxm_run(test, r, s, 52, 492, true, false, 0, 0, true);
	rxm_expect_error(test, r, MPA_ERR_MARKER, MPA_REASON_MARKER, 0, 52);
	/* and the leading Marker of Figure 5 */
	memcpy(s, mpa_test_rfc_fig5, 52);
	s[3] = 0x04;
	rxm_run(test, r, s, 52, 0, true, true, 0, 0, true);
	rxm_expect_error(test, r, MPA_ERR_CRC, MPA_REASON_CRC, 0, 52);
	mpa_crc_put(s + 48, mpa_test_crc(s, 48));
	rxm_run(test, r, s, 52, 0, true, true, 0, 0, true);
	rxm_expect_error(test, r, MPA_ERR_MARKER, MPA_REASON_MARKER, 0, 52);
	/* without Markers the same octets are ULPDU octets */
	rxm_run(test, r, s + 4, 48, 4, false, true, 0, 0, true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_ERROR);
	KUNIT_EXPECT_EQ(test, r->code, (u32)MPA_ERR_CRC);
}

/* An empty ULPDU is a valid FPDU with nothing to deliver (A12) */
static void rxm_empty_ulpdu(struct kunit *test)
{
	struct rxm_res *r = rxm_res_alloc(test);
	u8 s[32];
	int n, k;

	n = mpa_test_encode(0, true, NULL, 0, s, 32);
	KUNIT_ASSERT_EQ(test, n, 12);
	k = mpa_test_encode(12, true, "abc", 3, s + n, 32 - n);
	KUNIT_ASSERT_EQ(test, k, 12);
	rxm_run(test, r, s, n + k, 0, true, true, 1, 0, true);
	KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
	KUNIT_ASSERT_EQ(test, r->nr, 2U);
	KUNIT_EXPECT_EQ(test, r->ulen[0], 0U);
	KUNIT_EXPECT_EQ(test, r->ulen[1], 3U);
	KUNIT_ASSERT_EQ(test, r->total, 3U);
	KUNIT_EXPECT_MEMEQ(test, r->data, "abc", 3);
}

/*
 * R-4.3-6: FPDUs across the wrap of the 32-bit position, with Markers,
 * in every way of cutting the stream we try.
 */
static void rxm_wrap(struct kunit *test)
{
	static const u32 starts[] = { 0xfffffe00, 0xfffff000, 0xffff0000 + 4,
				      0 - 600 };
	struct rxm_res *r = rxm_res_alloc(test);
	struct rxm_res *r2 = rxm_res_alloc(test);
	u32 total, utotal, pos, len, i, j, c;
	u8 *s, *u;
	int n;

	s = kunit_kzalloc(test, 12000, GFP_KERNEL);
	u = kunit_kzalloc(test, 12000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, u);
	for (i = 0; i < 12000; i++)
		u[i] = i * 13 + (i >> 8);
	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		pos = starts[i];
		total = 0;
		utotal = 0;
		for (j = 0; j < 12; j++) {
			len = 97 * j + (j & 3);
			n = mpa_test_encode(pos + total, true, u + utotal, len,
					    s + total, 12000 - total);
			KUNIT_ASSERT_GT(test, n, 0);
			total += n;
			utotal += len;
		}
		rxm_run(test, r, s, total, pos, true, true, 0, 0, true);
		KUNIT_EXPECT_EQ(test, r->state, MPA_RXM_MORE);
		KUNIT_EXPECT_EQ(test, r->nr, 12U);
		KUNIT_ASSERT_EQ(test, r->total, utotal);
		KUNIT_EXPECT_MEMEQ(test, r->data, u, utotal);
		for (c = 1; c < 600; c += 37) {
			rxm_run(test, r2, s, total, pos, true, true, c, 0,
				true);
			rxm_expect_same(test, r, r2);
			rxm_run(test, r2, s, total, pos, true, true, c, c,
				true);
			rxm_expect_same(test, r, r2);
		}
	}
}

/* Every split of a stream of several FPDUs gives the same results */
static void rxm_split_every_offset(struct kunit *test)
{
	struct rxm_res *r = rxm_res_alloc(test);
	struct rxm_res *r2 = rxm_res_alloc(test);
	struct mpa_rxm m;
	u32 total = 0, i, j, at, len;
	u8 *s, *u;
	int n;

	s = kunit_kzalloc(test, 2048, GFP_KERNEL);
	u = kunit_kzalloc(test, 600, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, u);
	for (i = 0; i < 600; i++)
		u[i] = i ^ 0x5a;
	for (j = 0; j < 4; j++) {
		n = mpa_test_encode(total, true, u, 100 + 170 * j, s + total,
				    2048 - total);
		KUNIT_ASSERT_GT(test, n, 0);
		total += n;
	}
	rxm_run(test, r, s, total, 0, true, true, 0, 0, true);
	KUNIT_ASSERT_EQ(test, r->nr, 4U);
	for (i = 1; i < total; i++) {
		/* two pieces, cut at @i */
		KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, 0, true, true), 0);
		at = 0;
		r2->nr = 0;
		while (at < total) {
			len = (at < i ? i : total) - at;
			at += mpa_rxm_feed(&m, s + at, len);
			if (mpa_rxm_state(&m) == MPA_RXM_FPDU) {
				r2->ulen[r2->nr++] = mpa_rxm_ulpdu_len(&m);
				mpa_rxm_next(&m);
			}
			KUNIT_ASSERT_NE(test, mpa_rxm_state(&m), MPA_RXM_ERROR);
		}
		KUNIT_EXPECT_EQ(test, r2->nr, 4U);
		KUNIT_EXPECT_MEMEQ(test, r2->ulen, r->ulen, 4 * sizeof(u32));
	}
}

/*
 * mpa_rxm_locate() puts every ULPDU octet where the layout's pieces do,
 * and never runs a piece over a Marker.
 */
static void rxm_locate_pieces(struct kunit *test)
{
	static const u32 lens[] = { 1, 2, 5, 42, 505, 506, 507, 508, 509,
				    1000, 4096, 64768 };
	struct mpa_piece_iter it;
	struct mpa_piece p;
	struct mpa_rxm m;
	unsigned int i;
	u32 pos, wire, n;

	for (pos = 0; pos < 1024; pos += 4) {
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			memset(&m, 0, sizeof(m));
			KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&m.lo, pos, true,
							      lens[i]), 0);
			mpa_piece_iter_init(&it);
			while (mpa_fpdu_next_piece(&m.lo, &it, &p)) {
				if (p.type != MPA_PIECE_ULPDU)
					continue;
				n = mpa_rxm_locate(&m, p.ulpdu_off, &wire);
				KUNIT_ASSERT_EQ(test, wire, p.off);
				KUNIT_ASSERT_EQ(test, n, p.len);
				n = mpa_rxm_locate(&m, p.ulpdu_off + p.len - 1,
						   &wire);
				KUNIT_ASSERT_EQ(test, wire, p.off + p.len - 1);
				KUNIT_ASSERT_EQ(test, n, 1U);
			}
		}
	}
}

static void rxm_init_alignment(struct kunit *test)
{
	struct mpa_rxm m;

	KUNIT_EXPECT_EQ(test, mpa_rxm_init(&m, 2, true, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mpa_rxm_init(&m, 2, false, true), 0);
	KUNIT_EXPECT_EQ(test, mpa_rxm_init(&m, 0xfffffffc, true, false), 0);
	KUNIT_EXPECT_EQ(test, mpa_rxm_state(&m), MPA_RXM_MORE);
	KUNIT_EXPECT_EQ(test, mpa_rxm_fin(&m), MPA_RXM_MORE);
}

static struct kunit_case mpa_rxm_cases[] = {
	KUNIT_CASE(rxm_fig5_octets),
	KUNIT_CASE(rxm_fig6_octets),
	KUNIT_CASE_PARAM(rxm_every_octet, rxm_gen_params),
	KUNIT_CASE(rxm_length_too_big),
	KUNIT_CASE(rxm_crc_precedence),
	KUNIT_CASE(rxm_empty_ulpdu),
	KUNIT_CASE(rxm_wrap),
	KUNIT_CASE(rxm_split_every_offset),
	KUNIT_CASE(rxm_locate_pieces),
	KUNIT_CASE(rxm_init_alignment),
	{}
};

static struct kunit_suite mpa_rxm_suite = {
	.name = "mpa_rxm",
	.test_cases = mpa_rxm_cases,
};

kunit_test_suite(mpa_rxm_suite);
