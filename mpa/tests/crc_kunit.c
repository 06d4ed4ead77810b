// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the MPA CRC32c helpers (RFC 5044 section 4.4).
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "core/core.h"
#include "vectors.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* CRC-covered octets of RFC 5044 Figure 5: Marker, header, ULPDU */
static const u8 fig5_covered[48] = {
	0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01,
};

static void crc_check_value(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mpa_test_crc("123456789", 9), 0xe3069283U);
}

struct crc_vec {
	const char *name;
	int kind;
	u8 wire[4];
};

/* RFC 3720 B.4 vectors, as they go on the wire (requirements 2.1) */
static const struct crc_vec rfc3720_vecs[] = {
	{ "zeros", 0, { 0xaa, 0x36, 0x91, 0x8a } },
	{ "ones", 1, { 0x43, 0xab, 0xa8, 0x62 } },
	{ "incrementing", 2, { 0x4e, 0x79, 0xdd, 0x46 } },
	{ "decrementing", 3, { 0x5c, 0xdb, 0x3f, 0x11 } },
};

KUNIT_ARRAY_PARAM_DESC(rfc3720, rfc3720_vecs, name);

static void crc_rfc3720(struct kunit *test)
{
	const struct crc_vec *v = test->param_value;
	u8 buf[32], wire[4];
	int i;

	for (i = 0; i < 32; i++) {
		switch (v->kind) {
		case 0:
			buf[i] = 0;
			break;
		case 1:
			buf[i] = 0xff;
			break;
		case 2:
			buf[i] = i;
			break;
		default:
			buf[i] = 31 - i;
			break;
		}
	}
	mpa_crc_put(wire, mpa_test_crc(buf, sizeof(buf)));
	KUNIT_EXPECT_MEMEQ(test, wire, v->wire, 4);
}

static void crc_wire_lsb_first(struct kunit *test)
{
	static const u8 expect[4] = { 0x52, 0x23, 0x99, 0x83 };
	u8 wire[4];

	mpa_crc_put(wire, 0x83992352);
	KUNIT_EXPECT_MEMEQ(test, wire, expect, 4);
	KUNIT_EXPECT_EQ(test, mpa_crc_get(wire), 0x83992352U);
}

/* R-4.4-15: Figure 5's CRC holds only with the leading Marker covered */
static void crc_fig5_coverage(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mpa_test_crc(fig5_covered, 48), 0x83992352U);
	KUNIT_EXPECT_EQ(test, mpa_test_crc(fig5_covered + 4, 44),
			0xc33e24b7U);
}

static void crc_raw_register(struct kunit *test)
{
	u32 reg = mpa_crc_init();

	KUNIT_EXPECT_EQ(test, reg, 0xffffffffU);
	reg = mpa_crc_update(reg, fig5_covered, 20);
	reg = mpa_crc_update(reg, fig5_covered + 20, 28);
	KUNIT_EXPECT_EQ(test, mpa_crc_final(reg), 0x83992352U);
	/* no final inversion gives the documented wrong variant */
	KUNIT_EXPECT_EQ(test, reg, 0x7c66dcadU);
}

static struct kunit_case mpa_crc_cases[] = {
	KUNIT_CASE(crc_check_value),
	KUNIT_CASE_PARAM(crc_rfc3720, rfc3720_gen_params),
	KUNIT_CASE(crc_wire_lsb_first),
	KUNIT_CASE(crc_fig5_coverage),
	KUNIT_CASE(crc_raw_register),
	{}
};

static struct kunit_suite mpa_crc_suite = {
	.name = "mpa_crc",
	.test_cases = mpa_crc_cases,
};

kunit_test_suite(mpa_crc_suite);
