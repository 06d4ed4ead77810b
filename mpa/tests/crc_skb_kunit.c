// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the MPA skb CRC adapter: the CRC over a range of an skb
 * with page fragments equals the CRC over the same octets laid flat.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/skbuff.h>

#include "core/core.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define SKB_HEAD	100
#define SKB_FRAG	300
#define SKB_FRAGS	3
#define SKB_TOTAL	(SKB_HEAD + SKB_FRAG * SKB_FRAGS)

static void mpa_skb_free(void *skb)
{
	kfree_skb(skb);
}

/* An skb of 100 linear octets and three 300-octet page fragments */
static struct sk_buff *build_skb_frags(struct kunit *test, u8 *flat)
{
	struct sk_buff *skb;
	struct page *page;
	unsigned int i;
	u8 *p;

	for (i = 0; i < SKB_TOTAL; i++)
		flat[i] = i * 13 + (i >> 5);
	skb = alloc_skb(SKB_HEAD, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mpa_skb_free,
							skb), 0);
	skb_put_data(skb, flat, SKB_HEAD);
	for (i = 0; i < SKB_FRAGS; i++) {
		page = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, page);
		p = page_address(page);
		memcpy(p + 8 * i, flat + SKB_HEAD + SKB_FRAG * i, SKB_FRAG);
		skb_add_rx_frag(skb, i, page, 8 * i, SKB_FRAG, PAGE_SIZE);
	}
	KUNIT_ASSERT_EQ(test, skb->len, SKB_TOTAL);
	return skb;
}

static void crc_skb_ranges(struct kunit *test)
{
	struct sk_buff *skb;
	u32 off, len;
	u8 *flat;

	flat = kunit_kzalloc(test, SKB_TOTAL, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, flat);
	skb = build_skb_frags(test, flat);
	for (off = 0; off < SKB_TOTAL; off += 17) {
		for (len = 0; off + len <= SKB_TOTAL; len += 29) {
			KUNIT_ASSERT_EQ(test,
					mpa_crc_skb(mpa_crc_init(), skb, off,
						    len),
					mpa_crc_update(mpa_crc_init(),
						       flat + off, len));
		}
	}
}

/* A whole FPDU checked in place, as the receive path does it */
static void crc_skb_fpdu(struct kunit *test)
{
	static const u8 fig5[52] = {
		0x00, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x41, 0x43,
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x01, [48] = 0x52, 0x23, 0x99, 0x83,
	};
	struct sk_buff *skb;
	struct page *page;
	u32 reg;

	skb = alloc_skb(20, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, mpa_skb_free,
							skb), 0);
	skb_put_data(skb, fig5, 20);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	memcpy(page_address(page), fig5 + 20, 32);
	skb_add_rx_frag(skb, 0, page, 0, 32, PAGE_SIZE);
	reg = mpa_crc_skb(mpa_crc_init(), skb, 0, 48);
	KUNIT_EXPECT_EQ(test, mpa_crc_final(reg), 0x83992352U);
}

static struct kunit_case mpa_crc_skb_cases[] = {
	KUNIT_CASE(crc_skb_ranges),
	KUNIT_CASE(crc_skb_fpdu),
	{}
};

static struct kunit_suite mpa_crc_skb_suite = {
	.name = "mpa_crc_skb",
	.test_cases = mpa_crc_skb_cases,
};

kunit_test_suite(mpa_crc_skb_suite);
