// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of MPA Request/Reply frames (RFC 5044 section 7.1.1) and the
 * RFC 6581 enhanced (Rev 2) IRD/ORD block.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>

#include "core/core.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* R-7.1.1-1, R-7.1.1-3: the Keys in hex, as requirements 2.6 lists them */
static const u8 key_req[MPA_KEY_SIZE] = {
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
	0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
};

static const u8 key_rep[MPA_KEY_SIZE] = {
	0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
	0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
};

struct frame_vec {
	const char *name;
	struct mpa_frame f;
	const char *pd;
	u8 bytes[24];
	u32 len;
};

/* requirements 2.6, byte for byte */
static const struct frame_vec frame_vecs[] = {
	{ "request_c_rev1", { .c = true, .rev = 1 }, NULL,
	  "MPA ID Req Frame\x40\x01\x00\x00", 20 },
	{ "request_m_c_pd_hi", { .m = true, .c = true, .rev = 1 }, "hi",
	  "MPA ID Req Frame\xc0\x01\x00\x02hi", 22 },
	{ "reply_accept", { .reply = true, .c = true, .rev = 1 }, NULL,
	  "MPA ID Rep Frame\x40\x01\x00\x00", 20 },
	{ "reply_reject", { .reply = true, .c = true, .r = true, .rev = 1 },
	  NULL, "MPA ID Rep Frame\x60\x01\x00\x00", 20 },
	{ "rdmac_rev0_request", { .m = true, .c = true, .rev = 0 }, NULL,
	  "MPA ID Req Frame\xc0\x00\x00\x00", 20 },
};

KUNIT_ARRAY_PARAM_DESC(frame, frame_vecs, name);

static void frame_build_vectors(struct kunit *test)
{
	const struct frame_vec *v = test->param_value;
	u32 pd_len = v->pd ? strlen(v->pd) : 0;
	u8 buf[MPA_FRAME_MAX_SIZE];

	KUNIT_ASSERT_EQ(test, mpa_frame_build(&v->f, v->pd, pd_len, buf,
					      sizeof(buf)), (int)v->len);
	KUNIT_EXPECT_MEMEQ(test, buf, v->bytes, v->len);
}

static void frame_parse_vectors(struct kunit *test)
{
	const struct frame_vec *v = test->param_value;
	enum mpa_role role = v->f.reply ? MPA_INITIATOR : MPA_RESPONDER;
	struct mpa_frame f;

	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&f, v->bytes, role),
			MPA_SR_OK);
	KUNIT_EXPECT_EQ(test, f.reply, v->f.reply);
	KUNIT_EXPECT_EQ(test, f.m, v->f.m);
	KUNIT_EXPECT_EQ(test, f.c, v->f.c);
	KUNIT_EXPECT_EQ(test, f.r, v->f.r);
	KUNIT_EXPECT_EQ(test, f.rev, v->f.rev);
	KUNIT_EXPECT_EQ(test, f.pd_len, v->len - MPA_FRAME_HDR_SIZE);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&f, v->bytes + 20),
			MPA_SR_OK);
	KUNIT_EXPECT_EQ(test, f.ulp_pd_len, f.pd_len);
	KUNIT_EXPECT_PTR_EQ(test, f.pd, v->bytes + 20);
}

static void frame_keys_hex(struct kunit *test)
{
	struct mpa_frame f = { .rev = 1 };
	u8 buf[MPA_FRAME_HDR_SIZE];

	KUNIT_ASSERT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 20), 20);
	KUNIT_EXPECT_MEMEQ(test, buf, key_req, MPA_KEY_SIZE);
	f.reply = true;
	KUNIT_ASSERT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 20), 20);
	KUNIT_EXPECT_MEMEQ(test, buf, key_rep, MPA_KEY_SIZE);
}

/* R-7.1.2-20: an Initiator that gets the Req key: Initiator/Initiator */
static void frame_initiator_initiator(struct kunit *test)
{
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, frame_vecs[0].bytes,
						  MPA_INITIATOR),
			MPA_SR_INIT_INIT);
	KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(MPA_SR_INIT_INIT),
			MPA_ERR_STARTUP);
}

static void frame_reply_at_responder(struct kunit *test)
{
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, frame_vecs[2].bytes,
						  MPA_RESPONDER),
			MPA_SR_REPLY_AT_RESPONDER);
}

struct key_vec {
	const char *name;
	u8 hdr[24];
};

/* analysis draft 4: what a non-MPA peer may send first */
static const struct key_vec bad_keys[] = {
	{ "zero_marker", { 0 } },
	{ "http", "GET / HTTP/1.1\r\nHos" },
	{ "tls", { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01 } },
	{ "lowercase_key", "mpa id req frame\x40\x01\x00\x00" },
	{ "one_bit_off", { 0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
			   0x65, 0x73, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65 } },
};

KUNIT_ARRAY_PARAM_DESC(bad_key, bad_keys, name);

/* R-7.1.1-2, R-7.1.1-4: any other Key is malformed, code 4 */
static void frame_bad_key(struct kunit *test)
{
	const struct key_vec *v = test->param_value;
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, v->hdr, MPA_RESPONDER),
			MPA_SR_BAD_KEY);
	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, v->hdr, MPA_INITIATOR),
			MPA_SR_BAD_KEY);
}

/*
 * The same Keys told from their first octets: every prefix of either Key
 * may begin a frame; a foreign first octet, or the first one that differs
 * from both, never does, whatever follows.
 */
static void frame_key_prefix(struct kunit *test)
{
	static const char req[] = "MPA ID Req Frame", rep[] = "MPA ID Rep Frame";
	u8 buf[24];
	u32 i, n;

	for (n = 0; n <= MPA_KEY_SIZE; n++) {
		KUNIT_EXPECT_TRUE(test, mpa_frame_key_prefix_ok(req, n));
		KUNIT_EXPECT_TRUE(test, mpa_frame_key_prefix_ok(rep, n));
	}
	/* octets past the Key are not looked at */
	memcpy(buf, req, MPA_KEY_SIZE);
	memset(buf + MPA_KEY_SIZE, 0xff, sizeof(buf) - MPA_KEY_SIZE);
	KUNIT_EXPECT_TRUE(test, mpa_frame_key_prefix_ok(buf, sizeof(buf)));

	KUNIT_EXPECT_FALSE(test, mpa_frame_key_prefix_ok("+OK\r\n", 5));
	KUNIT_EXPECT_FALSE(test, mpa_frame_key_prefix_ok("G", 1));
	KUNIT_EXPECT_FALSE(test, mpa_frame_key_prefix_ok("MPA ID Rex", 10));
	/* one octet off anywhere in the Key: refused from that octet on */
	for (i = 0; i < MPA_KEY_SIZE; i++) {
		memcpy(buf, req, MPA_KEY_SIZE);
		buf[i] ^= 0x20;
		KUNIT_EXPECT_TRUE(test, mpa_frame_key_prefix_ok(buf, i));
		for (n = i + 1; n <= MPA_KEY_SIZE; n++)
			KUNIT_EXPECT_FALSE_MSG(test,
					       mpa_frame_key_prefix_ok(buf, n),
					       "octet %u off, %u octets", i, n);
	}
	/* a whole bad Key is refused by the header's parser alike */
	for (i = 0; i < ARRAY_SIZE(bad_keys); i++)
		KUNIT_EXPECT_FALSE(test, mpa_frame_key_prefix_ok(bad_keys[i].hdr,
								 MPA_KEY_SIZE));
}

/* R-7.1.1-19: PD_Length 512 is fine, 513 is not */
static void frame_pd_length_limit(struct kunit *test)
{
	u8 hdr[24] = "MPA ID Req Frame\x40\x01\x02\x00";
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_OK);
	KUNIT_EXPECT_EQ(test, f.pd_len, 512);
	hdr[19] = 0x01;
	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_PD_TOO_LONG);
	hdr[18] = 0xff;
	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_PD_TOO_LONG);
}

/* R-7.1.1-12, R-7.1.1-13: Res bits and R in a Request are not checked */
static void frame_unchecked_bits(struct kunit *test)
{
	u8 hdr[24] = "MPA ID Req Frame\x3f\x01\x00\x00";
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_OK);
	KUNIT_EXPECT_TRUE(test, f.r);
	KUNIT_EXPECT_EQ(test, f.res, 0x1f);
	/* in Rev 1 the E position is just a Res bit */
	KUNIT_EXPECT_FALSE(test, f.enhanced);
}

/* R-7.1.1-13: Res is sent as zero */
static void frame_res_sent_zero(struct kunit *test)
{
	struct mpa_frame f = { .m = true, .c = true, .r = true, .rev = 1,
			       .res = 0x1f, .enhanced = false };
	u8 buf[32];

	KUNIT_ASSERT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 32), 20);
	KUNIT_EXPECT_EQ(test, buf[16], 0xe0);
}

/* RFC 6581: E bit, IRD/ORD block counted in PD_Length */
static void frame_rev2_build(struct kunit *test)
{
	static const u8 expect[10] = {
		0x50, 0x02, 0x00, 0x06,	/* C, E, Rev 2, PD_Length 6 */
		0xc0, 0x20,		/* A, B, IRD 32 */
		0x40, 0x01,		/* D, ORD 1 */
		'h', 'i',
	};
	struct mpa_frame f = { .c = true, .rev = 2, .enhanced = true,
			       .ird = 32, .ord = 1, .p2p = true,
			       .rtr = MPA_RTR_SEND | MPA_RTR_READ };
	u8 buf[64];

	KUNIT_ASSERT_EQ(test, mpa_frame_build(&f, "hi", 2, buf, 64), 26);
	KUNIT_EXPECT_MEMEQ(test, buf, key_req, MPA_KEY_SIZE);
	KUNIT_EXPECT_MEMEQ(test, buf + 16, expect, 10);
}

static void frame_rev2_parse(struct kunit *test)
{
	static const u8 tail[12] = {
		0x50, 0x02, 0x00, 0x08,	/* C, E, Rev 2, PD_Length 8 */
		0x80, 0x05,		/* A, IRD 5 */
		0xbf, 0xff,		/* C, ORD 0x3fff */
		1, 2, 3, 4,
	};
	struct mpa_frame f;
	u8 in[28];

	memcpy(in, key_rep, MPA_KEY_SIZE);
	memcpy(in + MPA_KEY_SIZE, tail, sizeof(tail));

	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&f, in, MPA_INITIATOR),
			MPA_SR_OK);
	KUNIT_EXPECT_TRUE(test, f.enhanced);
	KUNIT_EXPECT_EQ(test, f.res, 0);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&f, in + 20), MPA_SR_OK);
	KUNIT_EXPECT_TRUE(test, f.p2p);
	KUNIT_EXPECT_EQ(test, f.rtr, MPA_RTR_WRITE);
	KUNIT_EXPECT_EQ(test, f.ird, 5);
	KUNIT_EXPECT_EQ(test, f.ord, 0x3fff);
	KUNIT_EXPECT_EQ(test, f.ulp_pd_len, 4);
	KUNIT_EXPECT_PTR_EQ(test, f.pd, in + 24);
}

/* The IRD/ORD block costs the ULP 4 of its 512 octets */
static void frame_rev2_pd_limit(struct kunit *test)
{
	struct mpa_frame f = { .rev = 2, .enhanced = true };
	static u8 pd[MPA_MAX_PRIVATE_DATA + 1];
	static u8 buf[MPA_FRAME_MAX_SIZE + 8];

	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, pd, MPA_V2_PRIVATE_DATA,
					      buf, sizeof(buf)),
			MPA_FRAME_MAX_SIZE);
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, pd, MPA_V2_PRIVATE_DATA + 1,
					      buf, sizeof(buf)), -EMSGSIZE);
	f.enhanced = false;
	f.rev = 1;
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, pd, MPA_MAX_PRIVATE_DATA,
					      buf, sizeof(buf)),
			MPA_FRAME_MAX_SIZE);
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, pd, MPA_MAX_PRIVATE_DATA + 1,
					      buf, sizeof(buf)), -EMSGSIZE);
}

static void frame_rev2_too_short(struct kunit *test)
{
	u8 hdr[24] = "MPA ID Req Frame\x50\x02\x00\x03";
	struct mpa_frame f;

	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_V2_SHORT);
	/* without E a Rev 2 frame has no block and may be short */
	hdr[16] = 0x40;
	KUNIT_EXPECT_EQ(test, mpa_frame_parse_hdr(&f, hdr, MPA_RESPONDER),
			MPA_SR_OK);
	KUNIT_EXPECT_FALSE(test, f.enhanced);
}

static void frame_build_errors(struct kunit *test)
{
	struct mpa_frame f = { .rev = 3 };
	u8 buf[32];

	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 32), -EINVAL);
	f.rev = 1;
	f.enhanced = true;
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 32), -EINVAL);
	f.rev = 2;
	f.ird = 0x4000;
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 32), -EINVAL);
	f.ird = 0;
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 23), -ENOSPC);
	KUNIT_EXPECT_EQ(test, mpa_frame_build(&f, NULL, 0, buf, 24), 24);
}

static void frame_round_trip(struct kunit *test)
{
	struct mpa_frame f = { .reply = true, .m = true, .r = true, .rev = 2,
			       .enhanced = true, .ird = 0x1234, .ord = 7,
			       .rtr = MPA_RTR_ALL }, g;
	u8 buf[64];
	int n;

	n = mpa_frame_build(&f, "private", 7, buf, 64);
	KUNIT_ASSERT_EQ(test, n, 31);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&g, buf, MPA_INITIATOR),
			MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, g.pd_len, 11);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&g, buf + 20), MPA_SR_OK);
	KUNIT_EXPECT_TRUE(test, g.reply && g.m && !g.c && g.r);
	KUNIT_EXPECT_EQ(test, g.ird, 0x1234);
	KUNIT_EXPECT_EQ(test, g.ord, 7);
	KUNIT_EXPECT_FALSE(test, g.p2p);
	KUNIT_EXPECT_EQ(test, g.rtr, MPA_RTR_ALL);
	KUNIT_EXPECT_EQ(test, g.ulp_pd_len, 7);
	KUNIT_EXPECT_MEMEQ(test, g.pd, "private", 7);
}

/* Every startup failure is code 4, a truncated frame included (A6) */
static void frame_reason_codes(struct kunit *test)
{
	enum mpa_startup_reason i;

	KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(MPA_SR_OK),
			MPA_ERR_NONE);
	for (i = MPA_SR_OK + 1; i < MPA_SR_NR; i++)
		KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(i),
				MPA_ERR_STARTUP);
}

static struct kunit_case mpa_frames_cases[] = {
	KUNIT_CASE_PARAM(frame_build_vectors, frame_gen_params),
	KUNIT_CASE_PARAM(frame_parse_vectors, frame_gen_params),
	KUNIT_CASE(frame_keys_hex),
	KUNIT_CASE(frame_initiator_initiator),
	KUNIT_CASE(frame_reply_at_responder),
	KUNIT_CASE_PARAM(frame_bad_key, bad_key_gen_params),
	KUNIT_CASE(frame_key_prefix),
	KUNIT_CASE(frame_pd_length_limit),
	KUNIT_CASE(frame_unchecked_bits),
	KUNIT_CASE(frame_res_sent_zero),
	KUNIT_CASE(frame_rev2_build),
	KUNIT_CASE(frame_rev2_parse),
	KUNIT_CASE(frame_rev2_pd_limit),
	KUNIT_CASE(frame_rev2_too_short),
	KUNIT_CASE(frame_build_errors),
	KUNIT_CASE(frame_round_trip),
	KUNIT_CASE(frame_reason_codes),
	{}
};

static struct kunit_suite mpa_frames_suite = {
	.name = "mpa_frames",
	.test_cases = mpa_frames_cases,
};

kunit_test_suite(mpa_frames_suite);
