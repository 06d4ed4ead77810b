// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the MPA FPDU layout and its pieces (RFC 5044 sections 4.1
 * to 4.4), the transmit path's view of an FPDU, against the RFC's figures
 * and the derived vectors of the requirements.
 */
#include <kunit/test.h>
#include <linux/errno.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/unaligned.h>

#include "core/core.h"
#include "vectors.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* The 42-octet ULPDU of RFC 5044 Figures 5 and 6 (DDP Send, MSN @msn) */
static void fig_ulpdu(u8 *u, u8 ctl0, u8 ctl1, u8 msn)
{
	memset(u, 0, 42);
	u[0] = ctl0;
	u[1] = ctl1;
	u[13] = msn;
}

/* RFC 5044 Figure 5: the first FPDU, led by a Marker with FPDUPTR 0 */
static void rfc5044_fig5(struct kunit *test)
{
	u8 u[42], out[64];

	fig_ulpdu(u, 0x41, 0x43, 1);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(0, true, u, 42, out, 64), 52);
	KUNIT_EXPECT_MEMEQ(test, out, mpa_test_rfc_fig5, 52);
}

/* RFC 5044 Figure 6: an FPDU at 0x1ec with a Marker inside at 0x200 */
static void rfc5044_fig6(struct kunit *test)
{
	u8 u[42], out[64];

	fig_ulpdu(u, 0x41, 0x43, 2);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(0x1ec, true, u, 42, out, 64),
			52);
	KUNIT_EXPECT_MEMEQ(test, out, mpa_test_rfc_fig6, 52);
}

/* draft-culley-iwarp-mpa-01 Figure 5: DDP/RDMAP v0 control 40 03 */
static void draft01_fig5(struct kunit *test)
{
	static const u8 crc[4] = { 0x4c, 0x86, 0xb3, 0x84 };
	u8 u[42], out[64];

	fig_ulpdu(u, 0x40, 0x03, 1);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(0, true, u, 42, out, 64), 52);
	KUNIT_EXPECT_MEMEQ(test, out + 6, u, 42);
	KUNIT_EXPECT_MEMEQ(test, out + 48, crc, 4);
}

static void draft01_fig6(struct kunit *test)
{
	static const u8 crc[4] = { 0xa1, 0x9c, 0xd1, 0x03 };
	u8 u[42], out[64];

	fig_ulpdu(u, 0x40, 0x03, 2);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(492, true, u, 42, out, 64), 52);
	KUNIT_EXPECT_EQ(test, out[23], 0x14);
	KUNIT_EXPECT_MEMEQ(test, out + 48, crc, 4);
}

/* requirements 2.5: the full 544-octet stream behind Figure 6 */
static void fig6_full_stream(struct kunit *test)
{
	static const u8 crc1[4] = { 0xa0, 0x1e, 0xe4, 0xfd };
	u8 *u, *out;

	u = kunit_kzalloc(test, 482, GFP_KERNEL);
	out = kunit_kzalloc(test, 600, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, out);
	fig_ulpdu(u, 0x41, 0x43, 1);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(0, true, u, 482, out, 600), 492);
	KUNIT_EXPECT_MEMEQ(test, out + 488, crc1, 4);
	fig_ulpdu(u, 0x41, 0x43, 2);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(492, true, u, 42, out + 492,
					      108), 52);
	KUNIT_EXPECT_MEMEQ(test, out + 492, mpa_test_rfc_fig6, 52);
}

/* requirements 2.5: Figure-4-shaped FPDU at 500 (FPDUPTR 0x000c, PAD 2) */
static void fig4_shaped(struct kunit *test)
{
	static const u8 expect[28] = {
		0x00, 0x10, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05,
		0x06, 0x07, 0x08, 0x09, 0x00, 0x00, 0x00, 0x0c,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x00, 0x00,
		0x10, 0x5b, 0x1c, 0x88,
	};
	u8 u[16], out[32];
	int i;

	for (i = 0; i < 16; i++)
		u[i] = i;
	KUNIT_ASSERT_EQ(test, mpa_test_encode(500, true, u, 16, out, 32), 28);
	KUNIT_EXPECT_MEMEQ(test, out, expect, 28);
}

static void pad_lengths(struct kunit *test)
{
	static const u32 pad[8] = { 2, 1, 0, 3, 2, 1, 0, 3 };
	struct mpa_fpdu_layout lo;
	u32 len;

	for (len = 0; len < 8; len++) {
		KUNIT_EXPECT_EQ(test, mpa_fpdu_pad(len), pad[len]);
		KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 0, false, len), 0);
		KUNIT_EXPECT_EQ(test, lo.span, 6 + len + pad[len]);
		KUNIT_EXPECT_EQ(test, lo.span % 4, 0U);
	}
}

static void pad_is_zero(struct kunit *test)
{
	u8 u[1] = { 0xff }, out[16];

	memset(out, 0xee, sizeof(out));
	/* 2 + 1 + PAD 1 + CRC 4 */
	KUNIT_ASSERT_EQ(test, mpa_test_encode(4, false, u, 1, out, 16), 8);
	KUNIT_EXPECT_EQ(test, out[0], 0);
	KUNIT_EXPECT_EQ(test, out[1], 1);
	KUNIT_EXPECT_EQ(test, out[2], 0xff);
	KUNIT_EXPECT_EQ(test, out[3], 0);
	KUNIT_EXPECT_EQ(test, mpa_crc_get(out + 4), mpa_test_crc(out, 4));
	KUNIT_EXPECT_EQ(test, out[8], 0xee);
}

static void no_markers_when_off(struct kunit *test)
{
	struct mpa_fpdu_layout lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;

	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 0, false, 3000), 0);
	KUNIT_EXPECT_FALSE(test, lo.lead_marker);
	KUNIT_EXPECT_EQ(test, lo.nr_markers, 0);
	KUNIT_EXPECT_EQ(test, lo.span, 6U + 3000 + 2);
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(&lo, &it, &p))
		KUNIT_EXPECT_NE(test, p.type, MPA_PIECE_MARKER);
}

/* Walk the pieces and check the expected sequence of types and offsets */
static void expect_pieces(struct kunit *test, u32 pos, u32 len,
			  const enum mpa_piece_type *types,
			  const u32 *offs, unsigned int n)
{
	struct mpa_fpdu_layout lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	unsigned int i = 0;

	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, pos, true, len), 0);
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(&lo, &it, &p)) {
		KUNIT_ASSERT_LT(test, i, n);
		KUNIT_EXPECT_EQ(test, p.type, types[i]);
		KUNIT_EXPECT_EQ(test, p.off, offs[i]);
		i++;
	}
	KUNIT_EXPECT_EQ(test, i, n);
}

/* R-4.3-7: a Marker at the FPDU's start is its first piece, FPDUPTR 0 */
static void marker_at_start_belongs(struct kunit *test)
{
	static const enum mpa_piece_type t[] = {
		MPA_PIECE_MARKER, MPA_PIECE_HDR, MPA_PIECE_ULPDU,
		MPA_PIECE_PAD, MPA_PIECE_CRC,
	};
	static const u32 o[] = { 0, 4, 6, 15, 16 };
	struct mpa_fpdu_layout lo;

	expect_pieces(test, 1024, 9, t, o, ARRAY_SIZE(t));
	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 1024, true, 9), 0);
	KUNIT_EXPECT_TRUE(test, lo.lead_marker);
	KUNIT_EXPECT_EQ(test, lo.hdr_off, 4);
	KUNIT_EXPECT_EQ(test, lo.span, 20U);
}

/* A9: a Marker between PAD and CRC belongs to this FPDU, non-zero FPDUPTR */
static void marker_before_crc(struct kunit *test)
{
	static const enum mpa_piece_type t[] = {
		MPA_PIECE_HDR, MPA_PIECE_ULPDU, MPA_PIECE_PAD,
		MPA_PIECE_MARKER, MPA_PIECE_CRC,
	};
	static const u32 o[] = { 0, 2, 43, 44, 48 };
	struct mpa_fpdu_layout lo;
	u8 u[41] = {}, out[64];

	/* L=41: PAD 1, framed 48; header at 468 puts a Marker at 512 */
	expect_pieces(test, 468, 41, t, o, ARRAY_SIZE(t));
	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 468, true, 41), 0);
	KUNIT_EXPECT_EQ(test, lo.nr_markers, 1);
	KUNIT_EXPECT_EQ(test, lo.first_ptr, 44);
	KUNIT_ASSERT_EQ(test, mpa_test_encode(468, true, u, 41, out, 64), 52);
	KUNIT_EXPECT_EQ(test, out[46], 0);
	KUNIT_EXPECT_EQ(test, out[47], 44);
}

/* A8: a Marker right after the CRC is left to the next FPDU */
static void marker_after_crc_deferred(struct kunit *test)
{
	struct mpa_fpdu_layout lo;

	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 464, true, 42), 0);
	KUNIT_EXPECT_EQ(test, lo.nr_markers, 0);
	KUNIT_EXPECT_EQ(test, lo.span, 48U);
	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 512, true, 42), 0);
	KUNIT_EXPECT_TRUE(test, lo.lead_marker);
	KUNIT_EXPECT_EQ(test, lo.span, 52U);
}

/* R-4.3-10: all Markers of one FPDU point at its ULPDU_Length */
static void markers_point_at_header(struct kunit *test)
{
	static const u32 starts[] = { 0, 4, 100, 508, 0xfffffe00, 0xfffffff0 };
	struct mpa_fpdu_layout lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	unsigned int i, seen;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		u32 hdr;

		KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, starts[i], true,
						      5000), 0);
		hdr = starts[i] + lo.hdr_off;
		seen = 0;
		mpa_piece_iter_init(&it);
		while (mpa_fpdu_next_piece(&lo, &it, &p)) {
			u32 at = starts[i] + p.off;

			if (p.type != MPA_PIECE_MARKER)
				continue;
			KUNIT_EXPECT_TRUE(test, mpa_marker_at(at));
			KUNIT_EXPECT_EQ(test, p.fpduptr & 3, 0);
			if (p.off == 0 && lo.lead_marker) {
				KUNIT_EXPECT_EQ(test, p.fpduptr, 0);
				continue;
			}
			KUNIT_EXPECT_EQ(test, (u32)(at - p.fpduptr), hdr);
			seen++;
		}
		KUNIT_EXPECT_EQ(test, seen, lo.nr_markers);
		KUNIT_EXPECT_GE(test, seen, 9U);
	}
}

/* requirements 2.8: header at 0xfffffff0, Marker at 0x100 -> 0x110 */
static void fpduptr_across_wrap(struct kunit *test)
{
	u32 seq_start = 0xffffff00, hdr_seq = 0xfffffff0;
	struct mpa_fpdu_layout lo;
	u8 *u, *out;
	int n;

	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, hdr_seq - seq_start, true,
					      300), 0);
	KUNIT_EXPECT_FALSE(test, lo.lead_marker);
	KUNIT_EXPECT_EQ(test, lo.first_ptr, 0x110);
	KUNIT_EXPECT_EQ(test, (u32)(0x100 - lo.first_ptr), hdr_seq);

	/* and where the relative position itself wraps */
	u = kunit_kzalloc(test, 300, GFP_KERNEL);
	out = kunit_kzalloc(test, 400, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, out);
	n = mpa_test_encode(0xfffffff0, true, u, 300, out, 400);
	KUNIT_ASSERT_EQ(test, n, 6 + 300 + 2 + 4);
	KUNIT_EXPECT_EQ(test, out[16], 0);
	KUNIT_EXPECT_EQ(test, out[17], 0);
	KUNIT_EXPECT_EQ(test, out[18], 0);
	KUNIT_EXPECT_EQ(test, out[19], 16);
}

/* Pieces tile the span; ULPDU pieces tile the ULPDU, for many shapes */
static void pieces_tile_span(struct kunit *test)
{
	enum mpa_piece_type last;
	struct mpa_fpdu_layout lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	u32 pos, len, wire, ulpdu, markers;
	int m;

	for (m = 0; m < 2; m++) {
		for (pos = 0; pos < 1024; pos += 4) {
			for (len = 0; len < 1600; len += 13) {
				KUNIT_ASSERT_EQ(test,
						mpa_fpdu_layout(&lo, pos, m,
								len), 0);
				wire = 0;
				ulpdu = 0;
				markers = 0;
				last = MPA_PIECE_MARKER;
				mpa_piece_iter_init(&it);
				while (mpa_fpdu_next_piece(&lo, &it, &p)) {
					KUNIT_ASSERT_EQ(test, p.off, wire);
					KUNIT_ASSERT_GT(test, p.len, 0U);
					wire += p.len;
					if (p.type == MPA_PIECE_ULPDU) {
						KUNIT_ASSERT_EQ(test,
								p.ulpdu_off,
								ulpdu);
						ulpdu += p.len;
					}
					if (p.type == MPA_PIECE_MARKER)
						markers++;
					last = p.type;
				}
				KUNIT_ASSERT_EQ(test, wire, lo.span);
				KUNIT_ASSERT_EQ(test, ulpdu, len);
				KUNIT_ASSERT_EQ(test, markers,
						lo.nr_markers +
						(u32)lo.lead_marker);
				KUNIT_ASSERT_EQ(test, last, MPA_PIECE_CRC);
			}
		}
	}
}

static void max_span(struct kunit *test)
{
	struct mpa_fpdu_layout lo;
	u32 pos, largest = 0;

	for (pos = 0; pos < 512; pos += 4) {
		KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, pos, true,
						      MPA_MAX_ULPDU), 0);
		largest = max(largest, lo.span);
		KUNIT_EXPECT_LT(test, lo.first_ptr + (lo.nr_markers - 1) *
				512U, 65536U);
	}
	KUNIT_EXPECT_EQ(test, largest, (u32)MPA_FPDU_MAX_SPAN);
}

static void layout_rejects(struct kunit *test)
{
	struct mpa_fpdu_layout lo;

	KUNIT_EXPECT_EQ(test, mpa_fpdu_layout(&lo, 0, true, MPA_MAX_ULPDU + 1),
			-EMSGSIZE);
	KUNIT_EXPECT_EQ(test, mpa_fpdu_layout(&lo, 2, true, 10), -EINVAL);
	KUNIT_EXPECT_EQ(test, mpa_fpdu_layout(&lo, 2, false, 10), 0);
}

static void zero_length_ulpdu(struct kunit *test)
{
	u8 out[16];

	KUNIT_ASSERT_EQ(test, mpa_test_encode(8, false, NULL, 0, out, 16), 8);
	KUNIT_EXPECT_EQ(test, out[0], 0);
	KUNIT_EXPECT_EQ(test, out[1], 0);
	KUNIT_EXPECT_EQ(test, mpa_crc_get(out + 4), mpa_test_crc(out, 4));
}

static void piece_fill_bytes(struct kunit *test)
{
	struct mpa_fpdu_layout lo;
	struct mpa_piece p = { .type = MPA_PIECE_MARKER, .len = 4,
			       .fpduptr = 0x1234 };
	u8 b[4];

	KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 0, true, 0x2a), 0);
	memset(b, 0xff, 4);
	mpa_piece_fill(&lo, &p, b);
	KUNIT_EXPECT_EQ(test, b[0], 0);
	KUNIT_EXPECT_EQ(test, b[1], 0);
	KUNIT_EXPECT_EQ(test, b[2], 0x12);
	KUNIT_EXPECT_EQ(test, b[3], 0x34);
	p.type = MPA_PIECE_HDR;
	p.len = 2;
	mpa_piece_fill(&lo, &p, b);
	KUNIT_EXPECT_EQ(test, b[0], 0);
	KUNIT_EXPECT_EQ(test, b[1], 0x2a);
}

/* R-4.2-3, R-4.2-6: RESERVED and the two low FPDUPTR bits are ignored */
static void marker_ptr_check(struct kunit *test)
{
	u8 m[4] = { 0xab, 0xcd, 0x00, 0x15 };

	KUNIT_EXPECT_TRUE(test, mpa_marker_ptr_ok(m, 0x14));
	m[3] = 0x17;
	KUNIT_EXPECT_TRUE(test, mpa_marker_ptr_ok(m, 0x14));
	m[3] = 0x18;
	KUNIT_EXPECT_FALSE(test, mpa_marker_ptr_ok(m, 0x14));
}

/* R-4.3-9: Markers every 512 octets from SeqStart, e.g. 11, 523, 1035 */
static void marker_positions(struct kunit *test)
{
	u32 seq_start = 11;

	KUNIT_EXPECT_TRUE(test, mpa_marker_at(11 - seq_start));
	KUNIT_EXPECT_TRUE(test, mpa_marker_at(523 - seq_start));
	KUNIT_EXPECT_TRUE(test, mpa_marker_at(1035 - seq_start));
	KUNIT_EXPECT_FALSE(test, mpa_marker_at(512 - seq_start));
	seq_start = 0xffffff00;
	KUNIT_EXPECT_TRUE(test, mpa_marker_at(0xffffff00 - seq_start));
	KUNIT_EXPECT_TRUE(test, mpa_marker_at(0x100 - seq_start));
	KUNIT_EXPECT_TRUE(test, mpa_marker_at(0x300 - seq_start));
	KUNIT_EXPECT_FALSE(test, mpa_marker_at(0 - seq_start));
}

/* Wire offset of ULPDU octet @u in @lo, or U32_MAX if it has none. */
static u32 wire_of(const struct mpa_fpdu_layout *lo, u32 u)
{
	struct mpa_piece_iter it;
	struct mpa_piece p;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p))
		if (p.type == MPA_PIECE_ULPDU && u >= p.ulpdu_off &&
		    u < p.ulpdu_off + p.len)
			return p.off + u - p.ulpdu_off;
	return U32_MAX;
}

/*
 * The transmit path copies a MSG_MORE ULPDU, whose length is not known
 * yet, into the layout of the largest ULPDU at the same position: every
 * ULPDU octet must sit where the final layout puts it.
 */
static void open_layout_stable(struct kunit *test)
{
	static const u32 lens[] = { 1, 2, 3, 4, 5, 100, 505, 506, 507, 508,
				    509, 510, 511, 512, 513, 1000, 4096, 32768,
				    64767, 64768 };
	struct mpa_fpdu_layout big, lo;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	unsigned int i;
	u32 pos;

	for (pos = 0; pos < 1024; pos += 4) {
		KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&big, pos, true,
						      MPA_MAX_ULPDU), 0);
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, pos, true,
							      lens[i]), 0);
			mpa_piece_iter_init(&it);
			while (mpa_fpdu_next_piece(&lo, &it, &p)) {
				u32 last = p.ulpdu_off + p.len - 1;

				if (p.type != MPA_PIECE_ULPDU)
					continue;
				KUNIT_ASSERT_EQ_MSG(test, wire_of(&big, p.ulpdu_off),
						    p.off, "pos %u len %u", pos, lens[i]);
				KUNIT_ASSERT_EQ_MSG(test, wire_of(&big, last),
						    p.off + p.len - 1,
						    "pos %u len %u", pos, lens[i]);
			}
		}
	}
}

/*
 * mpa_fpdu_frame(), the sender's framing of an FPDU without Markers in one
 * pass, writes the octets the piece walk does: every PAD length, with and
 * without a CRC (a zero field then, A10), also with Markers enabled where
 * none falls in the span; and it refuses a span with a Marker.
 */
static void frame_matches_pieces(struct kunit *test)
{
	static const struct { u32 pos; bool markers; u32 max; } at[] = {
		{ 0, false, 4086 }, { 77, false, 600 }, { 8, true, 490 },
	};
	struct mpa_fpdu_layout lo;
	u8 *u, *want, *got;
	unsigned int k;
	u32 len, i;

	u = kunit_kmalloc(test, 4096, GFP_KERNEL);
	want = kunit_kmalloc(test, 4096, GFP_KERNEL);
	got = kunit_kmalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, u);
	KUNIT_ASSERT_NOT_NULL(test, want);
	KUNIT_ASSERT_NOT_NULL(test, got);
	for (i = 0; i < 4096; i++)
		u[i] = i * 7 + 3;

	for (k = 0; k < ARRAY_SIZE(at); k++) {
		for (len = 0; len <= at[k].max; len += len < 520 ? 1 : 97) {
			int span = mpa_test_encode(at[k].pos, at[k].markers, u,
						   len, want, 4096);

			KUNIT_ASSERT_GT(test, span, 0);
			mpa_fpdu_layout(&lo, at[k].pos, at[k].markers, len);
			memset(got, 0xa5, 4096);
			memcpy(got + MPA_HDR_SIZE, u, len);
			KUNIT_ASSERT_EQ(test, mpa_fpdu_frame(&lo, got, true), 0);
			KUNIT_ASSERT_MEMEQ_MSG(test, got, want, span,
					       "pos %u len %u", at[k].pos, len);
			/* the next FPDU's octets are left alone */
			KUNIT_EXPECT_EQ(test, got[span], 0xa5);

			KUNIT_ASSERT_EQ(test, mpa_fpdu_frame(&lo, got, false), 0);
			KUNIT_EXPECT_MEMEQ(test, got, want, span - MPA_CRC_SIZE);
			KUNIT_EXPECT_EQ(test, get_unaligned_be32(got + span -
								 MPA_CRC_SIZE),
					0U);
		}
	}

	/* A leading Marker, and one inside */
	memset(got, 0xa5, 64);
	mpa_fpdu_layout(&lo, 0, true, 42);
	KUNIT_EXPECT_EQ(test, mpa_fpdu_frame(&lo, got, true), -EINVAL);
	mpa_fpdu_layout(&lo, 0x1ec, true, 42);
	KUNIT_EXPECT_EQ(test, mpa_fpdu_frame(&lo, got, true), -EINVAL);
	KUNIT_EXPECT_EQ(test, got[0], 0xa5);
}

static struct kunit_case mpa_fpdu_cases[] = {
	KUNIT_CASE(rfc5044_fig5),
	KUNIT_CASE(rfc5044_fig6),
	KUNIT_CASE(draft01_fig5),
	KUNIT_CASE(draft01_fig6),
	KUNIT_CASE(fig6_full_stream),
	KUNIT_CASE(fig4_shaped),
	KUNIT_CASE(pad_lengths),
	KUNIT_CASE(pad_is_zero),
	KUNIT_CASE(no_markers_when_off),
	KUNIT_CASE(marker_at_start_belongs),
	KUNIT_CASE(marker_before_crc),
	KUNIT_CASE(marker_after_crc_deferred),
	KUNIT_CASE(markers_point_at_header),
	KUNIT_CASE(fpduptr_across_wrap),
	KUNIT_CASE(pieces_tile_span),
	KUNIT_CASE(max_span),
	KUNIT_CASE(layout_rejects),
	KUNIT_CASE(zero_length_ulpdu),
	KUNIT_CASE(piece_fill_bytes),
	KUNIT_CASE(marker_ptr_check),
	KUNIT_CASE(marker_positions),
	KUNIT_CASE(open_layout_stable),
	KUNIT_CASE(frame_matches_pieces),
	{}
};

static struct kunit_suite mpa_fpdu_suite = {
	.name = "mpa_fpdu",
	.test_cases = mpa_fpdu_cases,
};

kunit_test_suite(mpa_fpdu_suite);
