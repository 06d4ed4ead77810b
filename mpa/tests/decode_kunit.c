// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the incremental MPA FPDU decoder: the RFC 5044 figures,
 * every split of a stream, and the section 8 errors (codes 2 and 3).
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "core/core.h"
#include "vectors.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define DEC_MAX_FPDUS	32
#define DEC_CAP		16384

/* What a decoding run delivered, to compare runs over different splits */
struct dec_result {
	u32 nr;
	u32 lens[DEC_MAX_FPDUS];
	u32 pos[DEC_MAX_FPDUS];
	u32 total;
	int error;
	enum mpa_rx_error detail;
	u32 consumed;
	bool boundary;
	u8 *data;
};

struct dec_ctx {
	struct kunit *test;
	struct mpa_rx rx;
	u8 *stage;
	u32 staged;
	struct dec_result *res;
	bool dead;
};

static struct dec_result *dec_result_alloc(struct kunit *test)
{
	struct dec_result *res;

	res = kunit_kzalloc(test, sizeof(*res), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, res);
	res->data = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, res->data);
	return res;
}

static void dec_begin(struct kunit *test, struct dec_ctx *c,
		      struct dec_result *res, u32 pos, bool markers, bool crc)
{
	u8 *data = res->data;

	if (!c->stage) {
		c->stage = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, c->stage);
	}
	memset(res, 0, sizeof(*res));
	res->data = data;
	c->test = test;
	c->res = res;
	c->staged = 0;
	c->dead = false;
	KUNIT_ASSERT_EQ(test, mpa_rx_init(&c->rx, pos, markers, crc), 0);
}

/* Feed one piece of stream and act like a careful socket layer would. */
static void dec_feed(struct dec_ctx *c, const u8 *buf, u32 len)
{
	struct kunit *test = c->test;
	struct dec_result *res = c->res;
	struct mpa_rx_event ev;
	u32 n;

	while (len && !c->dead) {
		n = mpa_rx_feed(&c->rx, buf, len, &ev);
		KUNIT_ASSERT_LE(test, n, len);
		buf += n;
		len -= n;
		res->consumed += n;
		switch (ev.type) {
		case MPA_RX_EV_DATA:
			KUNIT_ASSERT_EQ(test, ev.ulpdu_off, c->staged);
			KUNIT_ASSERT_GT(test, ev.len, 0U);
			KUNIT_ASSERT_LE(test, c->staged + ev.len, ev.ulpdu_len);
			KUNIT_ASSERT_LE(test, c->staged + ev.len, DEC_CAP);
			memcpy(c->stage + c->staged, ev.data, ev.len);
			c->staged += ev.len;
			break;
		case MPA_RX_EV_FPDU:
			KUNIT_ASSERT_EQ(test, c->staged, ev.ulpdu_len);
			KUNIT_ASSERT_LT(test, res->nr, DEC_MAX_FPDUS);
			KUNIT_ASSERT_LE(test, res->total + c->staged, DEC_CAP);
			memcpy(res->data + res->total, c->stage, c->staged);
			res->lens[res->nr] = ev.ulpdu_len;
			res->pos[res->nr] = ev.fpdu_pos;
			res->nr++;
			res->total += c->staged;
			c->staged = 0;
			break;
		case MPA_RX_EV_ERROR:
			/* staged octets are dropped, never delivered */
			res->error = ev.error;
			res->detail = ev.detail;
			c->dead = true;
			break;
		case MPA_RX_EV_NONE:
			KUNIT_ASSERT_EQ(test, len, 0U);
			break;
		}
	}
}

static void dec_end(struct dec_ctx *c)
{
	c->res->boundary = mpa_rx_at_boundary(&c->rx);
}

/* Decode @stream fed in the pieces ending at @cuts (ascending) */
static void dec_run(struct kunit *test, struct dec_ctx *c,
		    struct dec_result *res, const u8 *stream, u32 len,
		    u32 pos, bool markers, bool crc, const u32 *cuts,
		    unsigned int ncuts)
{
	unsigned int i;
	u32 from = 0;

	dec_begin(test, c, res, pos, markers, crc);
	for (i = 0; i < ncuts; i++) {
		dec_feed(c, stream + from, cuts[i] - from);
		from = cuts[i];
	}
	dec_feed(c, stream + from, len - from);
	dec_end(c);
}

static void dec_expect_same(struct kunit *test, const struct dec_result *a,
			    const struct dec_result *b)
{
	KUNIT_ASSERT_EQ(test, a->nr, b->nr);
	KUNIT_ASSERT_EQ(test, a->total, b->total);
	KUNIT_ASSERT_EQ(test, a->error, b->error);
	KUNIT_ASSERT_EQ(test, a->detail, b->detail);
	KUNIT_ASSERT_EQ(test, a->consumed, b->consumed);
	KUNIT_ASSERT_EQ(test, a->boundary, b->boundary);
	KUNIT_ASSERT_MEMEQ(test, a->lens, b->lens, sizeof(a->lens));
	KUNIT_ASSERT_MEMEQ(test, a->pos, b->pos, sizeof(a->pos));
	KUNIT_ASSERT_MEMEQ(test, a->data, b->data, a->total);
}

static u8 pattern(u32 fpdu, u32 i)
{
	return fpdu * 31 + i * 7 + (i >> 8);
}

/* Encode ULPDUs of @lens back to back from @pos; returns stream length */
static u32 build_stream(struct kunit *test, u32 pos, bool markers,
			const u32 *lens, unsigned int n, u8 *out, u32 cap,
			u8 *expect)
{
	u8 *u = kunit_kmalloc(test, MPA_MAX_ULPDU, GFP_KERNEL);
	u32 len = 0, off = 0;
	unsigned int k, i;
	int span;

	KUNIT_ASSERT_NOT_NULL(test, u);
	for (k = 0; k < n; k++) {
		for (i = 0; i < lens[k]; i++)
			u[i] = pattern(k, i);
		if (expect) {
			memcpy(expect + off, u, lens[k]);
			off += lens[k];
		}
		span = mpa_fpdu_encode(pos + len, markers, u, lens[k],
				       out + len, cap - len);
		KUNIT_ASSERT_GT(test, span, 0);
		len += span;
	}
	return len;
}

static void fix_crc(u8 *fpdu, u32 span)
{
	mpa_crc_put(fpdu + span - 4, mpa_crc_value(fpdu, span - 4));
}

static void decode_fig5(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};

	dec_run(test, &c, res, mpa_test_rfc_fig5, 52, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
	KUNIT_EXPECT_EQ(test, res->lens[0], 42U);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->consumed, 52U);
	KUNIT_EXPECT_TRUE(test, res->boundary);
	KUNIT_EXPECT_MEMEQ(test, res->data, mpa_test_rfc_fig5 + 6, 42);
}

/* The 544-octet stream behind Figure 6, in every two-piece split */
static void decode_fig6_stream(struct kunit *test)
{
	struct dec_result *ref = dec_result_alloc(test);
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 *s, u[482] = { 0x41, 0x43, [13] = 1 };
	u32 cut;

	s = kunit_kzalloc(test, 544, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(0, true, u, 482, s, 544), 492);
	memcpy(s + 492, mpa_test_rfc_fig6, 52);

	dec_run(test, &c, ref, s, 544, 0, true, true, NULL, 0);
	KUNIT_ASSERT_EQ(test, ref->nr, 2U);
	KUNIT_EXPECT_EQ(test, ref->lens[0], 482U);
	KUNIT_EXPECT_EQ(test, ref->lens[1], 42U);
	KUNIT_EXPECT_EQ(test, ref->pos[1], 492U);
	KUNIT_EXPECT_MEMEQ(test, ref->data + 482, mpa_test_rfc_fig6 + 2, 18);
	KUNIT_EXPECT_MEMEQ(test, ref->data + 482 + 18, mpa_test_rfc_fig6 + 24, 24);
	for (cut = 1; cut < 544; cut++) {
		dec_run(test, &c, res, s, 544, 0, true, true, &cut, 1);
		dec_expect_same(test, ref, res);
	}
}

struct split_case {
	const char *name;
	u32 pos;
	bool markers;
	bool crc;
};

static const struct split_case split_cases[] = {
	{ "markers_from_seqstart", 0, true, true },
	{ "markers_mid_interval", 492, true, true },
	{ "markers_across_wrap", 0xfffffd00, true, true },
	{ "no_markers", 0, false, true },
	{ "no_markers_odd_start", 0xfffffffd, false, true },
	{ "markers_no_crc", 508, true, false },
};

KUNIT_ARRAY_PARAM_DESC(split, split_cases, name);

static const u32 split_lens[] = { 1, 42, 600, 0, 3, 64, 507, 2 };

/* Issue 3 must 2: the same result for a split at every offset */
static void decode_split_every_offset(struct kunit *test)
{
	const struct split_case *sc = test->param_value;
	struct dec_result *ref = dec_result_alloc(test);
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 *s, *expect;
	u32 len, cut;
	unsigned int k;

	s = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	expect = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, expect);
	len = build_stream(test, sc->pos, sc->markers, split_lens,
			   ARRAY_SIZE(split_lens), s, DEC_CAP, expect);

	dec_run(test, &c, ref, s, len, sc->pos, sc->markers, sc->crc, NULL, 0);
	KUNIT_ASSERT_EQ(test, ref->nr, (u32)ARRAY_SIZE(split_lens));
	KUNIT_ASSERT_EQ(test, ref->error, MPA_ERR_NONE);
	KUNIT_ASSERT_EQ(test, ref->consumed, len);
	KUNIT_EXPECT_TRUE(test, ref->boundary);
	for (k = 0; k < ARRAY_SIZE(split_lens); k++)
		KUNIT_EXPECT_EQ(test, ref->lens[k], split_lens[k]);
	KUNIT_EXPECT_MEMEQ(test, ref->data, expect, ref->total);

	for (cut = 1; cut < len; cut++) {
		dec_run(test, &c, res, s, len, sc->pos, sc->markers, sc->crc,
			&cut, 1);
		dec_expect_same(test, ref, res);
	}
}

static void decode_byte_by_byte(struct kunit *test)
{
	struct dec_result *ref = dec_result_alloc(test);
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u32 len, i;
	u8 *s;

	s = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	len = build_stream(test, 0, true, split_lens, ARRAY_SIZE(split_lens),
			   s, DEC_CAP, NULL);
	dec_run(test, &c, ref, s, len, 0, true, true, NULL, 0);
	dec_begin(test, &c, res, 0, true, true);
	for (i = 0; i < len; i++)
		dec_feed(&c, s + i, 1);
	dec_end(&c);
	dec_expect_same(test, ref, res);
}

static u32 xorshift(u32 *state)
{
	u32 x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

static void decode_random_splits(struct kunit *test)
{
	struct dec_result *ref = dec_result_alloc(test);
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u32 len, seed = 0x12345678, cuts[64];
	unsigned int run, n;
	u8 *s;

	s = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	len = build_stream(test, 0xfffffe00, true, split_lens,
			   ARRAY_SIZE(split_lens), s, DEC_CAP, NULL);
	dec_run(test, &c, ref, s, len, 0xfffffe00, true, true, NULL, 0);
	for (run = 0; run < 300; run++) {
		u32 at = 0;

		for (n = 0; n < ARRAY_SIZE(cuts); n++) {
			at += 1 + xorshift(&seed) % (run % 3 ? 16 : 300);
			if (at >= len)
				break;
			cuts[n] = at;
		}
		dec_run(test, &c, res, s, len, 0xfffffe00, true, true, cuts,
			n);
		dec_expect_same(test, ref, res);
	}
}

/* requirements 2.5: a flipped payload bit in Figure 5 is error code 2 */
static void decode_crc_error(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig5, 52);
	s[30] ^= 0x10;
	dec_run(test, &c, res, s, 52, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 0U);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, res->detail, MPA_RX_ERR_CRC);
	KUNIT_EXPECT_EQ(test, res->consumed, 52U);
	KUNIT_EXPECT_FALSE(test, res->boundary);
}

/* A flipped bit in the leading Marker is CRC-covered, too (R-4.4-15) */
static void decode_crc_covers_lead_marker(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig5, 52);
	s[0] ^= 0x80;		/* RESERVED: ignored, but covered */
	dec_run(test, &c, res, s, 52, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_CRC);
}

/* requirements 2.5: Figure 6 with FPDUPTR 0x18 and a valid CRC: code 3 */
static void decode_marker_error(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig6, 52);
	s[23] = 0x18;
	fix_crc(s, 52);
	dec_run(test, &c, res, s, 52, 492, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 0U);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, res->detail, MPA_RX_ERR_MARKER);
	KUNIT_EXPECT_EQ(test, res->consumed, 52U);
}

/* R-4.2-6: FPDUPTR ...15 reads as 0x14 */
static void decode_marker_low_bits(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig6, 52);
	s[23] = 0x15;
	fix_crc(s, 52);
	dec_run(test, &c, res, s, 52, 492, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
	s[23] = 0x17;
	fix_crc(s, 52);
	dec_run(test, &c, res, s, 52, 492, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
}

/* R-4.3-7: a leading Marker must say 0 */
static void decode_lead_marker_error(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig5, 52);
	s[3] = 0x04;
	fix_crc(s, 52);
	dec_run(test, &c, res, s, 52, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_MARKER);
}

/* A16: with both wrong, the CRC error (code 2) is the one reported */
static void decode_crc_precedence(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig6, 52);
	s[23] = 0x18;
	dec_run(test, &c, res, s, 52, 492, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_CRC);
}

/* R-4.1-6, R-7.1.1-11: with CRCs off the field is not checked */
static void decode_crc_off_ignores_field(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig5, 52);
	memset(s + 48, 0xa5, 4);
	dec_run(test, &c, res, s, 52, 0, true, false, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
	dec_run(test, &c, res, s, 52, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_CRC);
}

static void decode_crc_off_marker_checked(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[52];

	memcpy(s, mpa_test_rfc_fig6, 52);
	s[23] = 0x10;
	dec_run(test, &c, res, s, 52, 492, true, false, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_MARKER);
}

/* A12: ULPDU_Length above 64768 is fatal at once, reported as code 2 */
static void decode_length_too_big(struct kunit *test)
{
	static const u8 big[8] = { 0xfd, 0x01, 1, 2, 3, 4, 5, 6 };
	static const u8 big_m[10] = { 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4 };
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};

	dec_run(test, &c, res, big, 8, 4, false, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_CRC);
	KUNIT_EXPECT_EQ(test, res->detail, MPA_RX_ERR_LENGTH);
	KUNIT_EXPECT_EQ(test, res->consumed, 2U);

	dec_run(test, &c, res, big_m, 10, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->detail, MPA_RX_ERR_LENGTH);
	KUNIT_EXPECT_EQ(test, res->consumed, 6U);
	KUNIT_EXPECT_STREQ(test, mpa_rx_error_str(MPA_RX_ERR_LENGTH),
			   "ULPDU_Length above 64768");
}

static void decode_length_max_ok(struct kunit *test)
{
	static const u8 max[6] = { 0xfd, 0x00, 1, 2, 3, 4 };
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};

	dec_run(test, &c, res, max, 6, 0, false, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->consumed, 6U);
	KUNIT_EXPECT_FALSE(test, res->boundary);
}

/* A12: ULPDU_Length 0 is an empty ULPDU once its CRC checks */
static void decode_zero_length(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 s[16];

	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(0, true, NULL, 0, s, 16), 12);
	dec_run(test, &c, res, s, 12, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
	KUNIT_EXPECT_EQ(test, res->lens[0], 0U);
}

/* R-8-9: after an error nothing more is decoded */
static void decode_error_sticky(struct kunit *test)
{
	struct mpa_rx_event ev;
	struct mpa_rx rx;
	u8 s[104];

	memcpy(s, mpa_test_rfc_fig5, 52);
	s[10] ^= 1;
	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(52, true, mpa_test_rfc_fig5, 42, s + 52,
					      52), 48);
	KUNIT_ASSERT_EQ(test, mpa_rx_init(&rx, 0, true, true), 0);
	while (mpa_rx_feed(&rx, s, 52, &ev) && ev.type != MPA_RX_EV_ERROR)
		;
	KUNIT_ASSERT_EQ(test, ev.type, MPA_RX_EV_ERROR);
	KUNIT_EXPECT_EQ(test, mpa_rx_feed(&rx, s + 52, 48, &ev), 0U);
	KUNIT_EXPECT_EQ(test, ev.type, MPA_RX_EV_ERROR);
	KUNIT_EXPECT_EQ(test, ev.error, MPA_ERR_CRC);
	KUNIT_EXPECT_FALSE(test, mpa_rx_at_boundary(&rx));
}

/* A15: a FIN can be told apart at and inside an FPDU */
static void decode_boundary(struct kunit *test)
{
	struct mpa_rx_event ev;
	struct mpa_rx rx;

	KUNIT_ASSERT_EQ(test, mpa_rx_init(&rx, 0, true, true), 0);
	KUNIT_EXPECT_TRUE(test, mpa_rx_at_boundary(&rx));
	KUNIT_EXPECT_EQ(test, mpa_rx_feed(&rx, mpa_test_rfc_fig5, 3, &ev), 3U);
	KUNIT_EXPECT_EQ(test, ev.type, MPA_RX_EV_NONE);
	KUNIT_EXPECT_FALSE(test, mpa_rx_at_boundary(&rx));
	KUNIT_EXPECT_EQ(test, mpa_rx_feed(&rx, mpa_test_rfc_fig5 + 3, 45, &ev), 45U);
	KUNIT_EXPECT_EQ(test, ev.type, MPA_RX_EV_DATA);
	KUNIT_EXPECT_EQ(test, ev.len, 42U);
	KUNIT_EXPECT_EQ(test, mpa_rx_feed(&rx, mpa_test_rfc_fig5 + 48, 4, &ev), 4U);
	KUNIT_EXPECT_EQ(test, ev.type, MPA_RX_EV_FPDU);
	KUNIT_EXPECT_TRUE(test, mpa_rx_at_boundary(&rx));
	KUNIT_EXPECT_EQ(test, rx.fpdus, 1ULL);
}

static void decode_init_alignment(struct kunit *test)
{
	struct mpa_rx rx;

	KUNIT_EXPECT_EQ(test, mpa_rx_init(&rx, 2, true, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, mpa_rx_init(&rx, 2, false, true), 0);
	KUNIT_EXPECT_EQ(test, mpa_rx_init(&rx, 0xfffffffc, true, true), 0);
}

/* Many small FPDUs packed in one segment (R-5.1-5), fed at once */
static void decode_packed(struct kunit *test)
{
	static const u32 lens[24] = {
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
	};
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u32 len;
	u8 *s;

	s = kunit_kzalloc(test, DEC_CAP, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	len = build_stream(test, 400, true, lens, 24, s, DEC_CAP, NULL);
	dec_run(test, &c, res, s, len, 400, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 24U);
	KUNIT_EXPECT_EQ(test, res->total, 300U);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
}

/* R-4.1-4, R-4.2-3: PAD and RESERVED values are ignored, only covered */
static void decode_ignores_pad_and_reserved(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 u[41] = {}, s[64];

	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(468, true, u, 41, s, 64), 52);
	s[43] = 0x5a;		/* PAD */
	s[44] = 0xff;		/* Marker RESERVED */
	fix_crc(s, 52);
	dec_run(test, &c, res, s, 52, 468, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->error, MPA_ERR_NONE);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
}

/* Markers are removed: the ULPDU comes back without them (R-4.3-13) */
static void decode_strips_markers(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 *u, *s;
	u32 i;

	u = kunit_kmalloc(test, 3000, GFP_KERNEL);
	s = kunit_kmalloc(test, 3100, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, s);
	for (i = 0; i < 3000; i++)
		u[i] = i ^ (i >> 8);
	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(0, true, u, 3000, s, 3100),
			4 + 3008 + 5 * 4);
	dec_run(test, &c, res, s, 3032, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 1U);
	KUNIT_EXPECT_MEMEQ(test, res->data, u, 3000);
}

/* A Markers mismatch between sender and receiver settings is detected */
static void decode_marker_setting_mismatch(struct kunit *test)
{
	struct dec_result *res = dec_result_alloc(test);
	struct dec_ctx c = {};
	u8 u[42] = {}, s[64];

	/* sent without Markers, expected with: the header is misread */
	KUNIT_ASSERT_EQ(test, mpa_fpdu_encode(0, false, u, 42, s, 64), 48);
	dec_run(test, &c, res, s, 48, 0, true, true, NULL, 0);
	KUNIT_EXPECT_EQ(test, res->nr, 0U);
	KUNIT_EXPECT_NE(test, res->error, MPA_ERR_NONE);
}

static struct kunit_case mpa_decode_cases[] = {
	KUNIT_CASE(decode_fig5),
	KUNIT_CASE(decode_fig6_stream),
	KUNIT_CASE_PARAM(decode_split_every_offset, split_gen_params),
	KUNIT_CASE(decode_byte_by_byte),
	KUNIT_CASE(decode_random_splits),
	KUNIT_CASE(decode_crc_error),
	KUNIT_CASE(decode_crc_covers_lead_marker),
	KUNIT_CASE(decode_marker_error),
	KUNIT_CASE(decode_marker_low_bits),
	KUNIT_CASE(decode_lead_marker_error),
	KUNIT_CASE(decode_crc_precedence),
	KUNIT_CASE(decode_crc_off_ignores_field),
	KUNIT_CASE(decode_crc_off_marker_checked),
	KUNIT_CASE(decode_length_too_big),
	KUNIT_CASE(decode_length_max_ok),
	KUNIT_CASE(decode_zero_length),
	KUNIT_CASE(decode_error_sticky),
	KUNIT_CASE(decode_boundary),
	KUNIT_CASE(decode_init_alignment),
	KUNIT_CASE(decode_packed),
	KUNIT_CASE(decode_ignores_pad_and_reserved),
	KUNIT_CASE(decode_strips_markers),
	KUNIT_CASE(decode_marker_setting_mismatch),
	{}
};

static struct kunit_suite mpa_decode_suite = {
	.name = "mpa_decode",
	.test_cases = mpa_decode_cases,
};

kunit_test_suite(mpa_decode_suite);
