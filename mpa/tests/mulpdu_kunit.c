// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of MULPDU (RFC 5044 section 4.5), with the worked numbers of
 * the requirements (section 2.7).
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "core/core.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

struct mulpdu_vec {
	const char *name;
	u32 emss;
	u32 raw_m;	/* formula with Markers */
	u32 mulpdu_m;	/* clamped */
	u32 raw_n;	/* formula without Markers */
	u32 mulpdu_n;
};

static const struct mulpdu_vec mulpdu_vecs[] = {
	{ "emss_128", 128, 118, 128, 122, 128 },
	{ "emss_136", 136, 126, 128, 130, 130 },
	{ "emss_138", 138, 126, 128, 130, 130 },
	{ "emss_139", 139, 126, 128, 130, 130 },
	{ "emss_140", 140, 130, 130, 134, 134 },
	{ "emss_536", 536, 522, 522, 530, 530 },
	{ "emss_1448", 1448, 1430, 1430, 1442, 1442 },
	{ "emss_1450", 1450, 1430, 1430, 1442, 1442 },
	{ "emss_1460", 1460, 1442, 1442, 1454, 1454 },
	{ "emss_8948", 8948, 8870, 8870, 8942, 8942 },
	{ "emss_8960", 8960, 8882, 8882, 8954, 8954 },
	{ "emss_16384", 16384, 16250, 16250, 16378, 16378 },
	{ "emss_65483_lo", 65483, 64962, 64768, 65474, 64768 },
};

KUNIT_ARRAY_PARAM_DESC(mulpdu, mulpdu_vecs, name);

/* R-4.5-2, R-4.5-3, R-4.5-8, R-3-4 */
static void mulpdu_table(struct kunit *test)
{
	const struct mulpdu_vec *v = test->param_value;

	KUNIT_EXPECT_EQ(test, mpa_mulpdu_raw(v->emss, true), v->raw_m);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(v->emss, true), v->mulpdu_m);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu_raw(v->emss, false), v->raw_n);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(v->emss, false), v->mulpdu_n);
}

/* The raw value is 2 mod 4, so a MULPDU-sized FPDU needs no PAD */
static void mulpdu_no_pad(struct kunit *test)
{
	u32 emss;

	for (emss = 140; emss < 20000; emss++) {
		KUNIT_ASSERT_EQ(test, mpa_mulpdu_raw(emss, true) % 4, 2U);
		KUNIT_ASSERT_EQ(test, mpa_mulpdu_raw(emss, false) % 4, 2U);
		KUNIT_ASSERT_EQ(test, mpa_fpdu_pad(mpa_mulpdu_raw(emss, true)),
				0U);
	}
}

/* A MULPDU-sized FPDU fits in EMSS at every position (worst case) */
static void mulpdu_fits_segment(struct kunit *test)
{
	struct mpa_fpdu_layout lo;
	u32 emss, pos;

	for (emss = 140; emss < 9000; emss += 37) {
		for (pos = 0; pos < 512; pos += 4) {
			KUNIT_ASSERT_EQ(test,
					mpa_fpdu_layout(&lo, pos, true,
							mpa_mulpdu(emss, true)),
					0);
			KUNIT_ASSERT_LE(test, lo.span, emss);
		}
		KUNIT_ASSERT_EQ(test, mpa_fpdu_layout(&lo, 0, false,
						      mpa_mulpdu(emss, false)),
				0);
		KUNIT_ASSERT_LE(test, lo.span, emss);
	}
}

static void mulpdu_tiny_emss(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mpa_mulpdu_raw(0, true), 0U);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu_raw(5, false), 0U);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(0, true), 128U);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(64, false), 128U);
}

static void mulpdu_huge_emss(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(0xffffffff, true), 64768U);
	KUNIT_EXPECT_EQ(test, mpa_mulpdu(0xffffffff, false), 64768U);
}

static struct kunit_case mpa_mulpdu_cases[] = {
	KUNIT_CASE_PARAM(mulpdu_table, mulpdu_gen_params),
	KUNIT_CASE(mulpdu_no_pad),
	KUNIT_CASE(mulpdu_fits_segment),
	KUNIT_CASE(mulpdu_tiny_emss),
	KUNIT_CASE(mulpdu_huge_emss),
	{}
};

static struct kunit_suite mpa_mulpdu_suite = {
	.name = "mpa_mulpdu",
	.test_cases = mpa_mulpdu_cases,
};

kunit_test_suite(mpa_mulpdu_suite);
