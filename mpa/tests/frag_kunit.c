// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the rings that keep full page fragments for reuse
 * (mpa/frag.c): a page comes back only once nobody but the ring holds it,
 * the one kept longest first; a full ring lets its oldest page go;
 * draining drops the ring's references and no other; the refill keeps
 * skb_page_frag_refill()'s contract and keeps only the pages it should.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "frag.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define FRAG_MARK	0x4d5041UL	/* "MPA" */

static struct mpa_frag_ring *frag_ring_new(struct kunit *test)
{
	struct mpa_frag_ring *ring = kunit_kzalloc(test, sizeof(*ring),
						   GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ring);
	spin_lock_init(&ring->lock);
	return ring;
}

/* A page as the fragment allocates it, and a reference for TCP's hold */
static struct page *frag_page_held(struct kunit *test)
{
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_COMP,
					SKB_FRAG_PAGE_ORDER);

	KUNIT_ASSERT_NOT_NULL(test, page);
	KUNIT_EXPECT_EQ(test, MPA_FRAG_SIZE, page_size(page));
	get_page(page);
	return page;
}

static void frag_ring_empty(struct kunit *test, struct mpa_frag_ring *ring)
{
	mpa_frag_ring_drain(ring, MPA_FRAG_RING);
	KUNIT_EXPECT_EQ(test, 0U, ring->nr);
}

/* A page TCP holds stays in the ring; once let go of, it comes back. */
static void mpa_frag_back_when_free(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page *page = frag_page_held(test);

	KUNIT_ASSERT_NULL(test, mpa_frag_ring_park(ring, page));
	KUNIT_EXPECT_NULL(test, mpa_frag_ring_take(ring));
	KUNIT_EXPECT_EQ(test, 1U, ring->nr);
	put_page(page);				/* TCP lets go */
	KUNIT_EXPECT_PTR_EQ(test, page, mpa_frag_ring_take(ring));
	KUNIT_EXPECT_EQ(test, 0U, ring->nr);
	KUNIT_EXPECT_NULL(test, mpa_frag_ring_take(ring));
	KUNIT_EXPECT_EQ(test, 1, page_ref_count(page));
	put_page(page);
}

/* Of the free pages, the one kept longest; the held ones keep their order */
static void mpa_frag_oldest_free_first(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page *p[4];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = frag_page_held(test);
		KUNIT_ASSERT_NULL(test, mpa_frag_ring_park(ring, p[i]));
	}
	put_page(p[3]);
	put_page(p[1]);
	KUNIT_EXPECT_PTR_EQ(test, p[1], mpa_frag_ring_take(ring));
	KUNIT_EXPECT_PTR_EQ(test, p[3], mpa_frag_ring_take(ring));
	KUNIT_EXPECT_NULL(test, mpa_frag_ring_take(ring));
	KUNIT_ASSERT_EQ(test, 2U, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, p[0], ring->pages[0]);
	KUNIT_EXPECT_PTR_EQ(test, p[2], ring->pages[1]);
	put_page(p[2]);
	KUNIT_EXPECT_PTR_EQ(test, p[2], mpa_frag_ring_take(ring));
	put_page(p[0]);
	KUNIT_EXPECT_PTR_EQ(test, p[0], mpa_frag_ring_take(ring));
	for (i = 0; i < ARRAY_SIZE(p); i++)
		put_page(p[i]);
}

/* A full ring lets go of the page it kept longest for the next one */
static void mpa_frag_full_evicts_oldest(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page **p = kunit_kcalloc(test, MPA_FRAG_RING, sizeof(*p),
					GFP_KERNEL);
	struct page *extra;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < MPA_FRAG_RING; i++) {
		p[i] = frag_page_held(test);
		KUNIT_ASSERT_NULL(test, mpa_frag_ring_park(ring, p[i]));
	}
	extra = frag_page_held(test);
	/* given back with the ring's reference, TCP's still on it */
	KUNIT_EXPECT_PTR_EQ(test, p[0], mpa_frag_ring_park(ring, extra));
	KUNIT_EXPECT_EQ(test, 2, page_ref_count(p[0]));
	KUNIT_ASSERT_EQ(test, MPA_FRAG_RING, ring->nr);
	for (i = 1; i < MPA_FRAG_RING; i++)
		KUNIT_EXPECT_PTR_EQ(test, p[i], ring->pages[i - 1]);
	KUNIT_EXPECT_PTR_EQ(test, extra, ring->pages[MPA_FRAG_RING - 1]);
	put_page(p[0]);
	put_page(p[0]);
	for (i = 1; i < MPA_FRAG_RING; i++)
		put_page(p[i]);
	put_page(extra);
	frag_ring_empty(test, ring);
}

/* Draining drops the ring's reference, held pages or not, oldest first */
static void mpa_frag_drain_refs(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page *p[3];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		p[i] = frag_page_held(test);
		get_page(p[i]);			/* the test's own */
		KUNIT_ASSERT_NULL(test, mpa_frag_ring_park(ring, p[i]));
	}
	put_page(p[0]);				/* TCP let go of p[0] only */
	KUNIT_EXPECT_EQ(test, 2U, mpa_frag_ring_drain(ring, 2));
	KUNIT_EXPECT_EQ(test, 1U, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, p[2], ring->pages[0]);
	KUNIT_EXPECT_EQ(test, 1, page_ref_count(p[0]));
	KUNIT_EXPECT_EQ(test, 2, page_ref_count(p[1]));
	KUNIT_EXPECT_EQ(test, 3, page_ref_count(p[2]));
	KUNIT_EXPECT_EQ(test, 1U, mpa_frag_ring_drain(ring, MPA_FRAG_RING));
	KUNIT_EXPECT_EQ(test, 0U, mpa_frag_ring_drain(ring, MPA_FRAG_RING));
	KUNIT_EXPECT_EQ(test, 2, page_ref_count(p[2]));
	put_page(p[0]);
	put_page(p[1]);
	put_page(p[1]);
	put_page(p[2]);
	put_page(p[2]);
}

/* Put @page in @pf, full: a page as frag_page_held() makes it. */
static void frag_pf_set(struct page_frag *pf, struct page *page)
{
	pf->page = page;
	pf->size = MPA_FRAG_SIZE;
	pf->offset = pf->size;
}

/*
 * The refill's contract is skb_page_frag_refill()'s: a page with room, a
 * page nobody else holds reused in place, a page others hold never given
 * out again while they do. Such a page is kept, and comes back once they
 * let go of it, whole. The pages the refill allocates may be of any size
 * (skb_page_frag_refill() falls back to one page), so the pages it is to
 * keep are the test's own.
 */
static void mpa_frag_refill_contract(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page *first = frag_page_held(test), *second, *third;
	struct page_frag pf;

	frag_pf_set(&pf, first);
	put_page(first);			/* the fragment's reference */

	/* alone: reused in place, wherever its offset */
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 100, &pf,
						     GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, first, pf.page);
	KUNIT_EXPECT_EQ(test, 0U, pf.offset);

	/* held, with room: kept, offset untouched */
	get_page(first);			/* TCP's */
	pf.offset = pf.size - 100;
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 100, &pf,
						     GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, first, pf.page);
	KUNIT_EXPECT_EQ(test, pf.size - 100, pf.offset);

	/* held, without room: kept in the ring, and another page */
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 101, &pf,
						     GFP_KERNEL));
	KUNIT_ASSERT_NOT_NULL(test, pf.page);
	KUNIT_EXPECT_PTR_NE(test, first, pf.page);
	KUNIT_EXPECT_EQ(test, 0U, pf.offset);
	KUNIT_ASSERT_EQ(test, 1U, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, first, ring->pages[0]);
	KUNIT_EXPECT_EQ(test, 2, page_ref_count(first));
	put_page(pf.page);

	/* still held: not given out, whatever else is full */
	second = frag_page_held(test);		/* the fragment's, TCP's */
	frag_pf_set(&pf, second);
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 1, &pf, GFP_KERNEL));
	KUNIT_ASSERT_NOT_NULL(test, pf.page);
	KUNIT_EXPECT_PTR_NE(test, first, pf.page);
	KUNIT_EXPECT_PTR_NE(test, second, pf.page);
	KUNIT_ASSERT_EQ(test, 2U, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, first, ring->pages[0]);
	KUNIT_EXPECT_PTR_EQ(test, second, ring->pages[1]);
	put_page(pf.page);

	/* let go of: comes back, at its start, whole */
	put_page(first);			/* TCP lets go */
	third = frag_page_held(test);		/* the fragment's, TCP's */
	frag_pf_set(&pf, third);
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 1, &pf, GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, first, pf.page);
	KUNIT_EXPECT_EQ(test, 0U, pf.offset);
	KUNIT_EXPECT_EQ(test, MPA_FRAG_SIZE, (unsigned long)pf.size);
	KUNIT_EXPECT_EQ(test, 1, page_ref_count(first));
	KUNIT_ASSERT_EQ(test, 2U, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, second, ring->pages[0]);
	KUNIT_EXPECT_PTR_EQ(test, third, ring->pages[1]);

	put_page(second);			/* TCP lets go of the others */
	put_page(third);
	put_page(pf.page);
	frag_ring_empty(test, ring);
}

/*
 * A free page of the ring comes back before the page the refill keeps
 * goes in: a full ring does not let go of the free page it could give.
 */
static void mpa_frag_refill_takes_first(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page **p = kunit_kcalloc(test, MPA_FRAG_RING, sizeof(*p),
					GFP_KERNEL);
	struct page *held = frag_page_held(test);
	struct page_frag pf;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, p);
	for (i = 0; i < MPA_FRAG_RING; i++) {
		p[i] = frag_page_held(test);
		KUNIT_ASSERT_NULL(test, mpa_frag_ring_park(ring, p[i]));
	}
	/*
	 * A mark the page allocator clears (post_alloc_hook()): a p[0]
	 * freed and allocated again, as its pcp list gives it at once,
	 * would come back without it.
	 */
	set_page_private(p[0], FRAG_MARK);
	put_page(p[0]);				/* TCP lets go of the oldest */
	frag_pf_set(&pf, held);
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 1, &pf, GFP_KERNEL));
	KUNIT_EXPECT_PTR_EQ(test, p[0], pf.page);
	KUNIT_EXPECT_EQ(test, FRAG_MARK, page_private(p[0]));
	set_page_private(p[0], 0);
	KUNIT_ASSERT_EQ(test, MPA_FRAG_RING, ring->nr);
	KUNIT_EXPECT_PTR_EQ(test, p[1], ring->pages[0]);
	KUNIT_EXPECT_PTR_EQ(test, held, ring->pages[MPA_FRAG_RING - 1]);
	put_page(pf.page);
	put_page(held);
	for (i = 1; i < MPA_FRAG_RING; i++)
		put_page(p[i]);
	frag_ring_empty(test, ring);
}

/* Pages of another size, or from the emergency reserves, are not kept */
static void mpa_frag_refill_keeps_only_its_own(struct kunit *test)
{
	struct mpa_frag_ring *ring = frag_ring_new(test);
	struct page_frag pf = {};
	struct page *reserve;

	/* where pages are as large as the fragment's, there is no other */
	if (MPA_FRAG_SIZE > PAGE_SIZE) {
		struct page *small = alloc_page(GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, small);
		get_page(small);		/* TCP's */
		pf.page = small;
		pf.size = PAGE_SIZE;
		pf.offset = pf.size;
		KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 1, &pf,
							     GFP_KERNEL));
		KUNIT_EXPECT_PTR_NE(test, small, pf.page);
		KUNIT_EXPECT_EQ(test, 0U, ring->nr);
		KUNIT_EXPECT_EQ(test, 1, page_ref_count(small)); /* TCP's */
		put_page(small);
		if (pf.page)
			put_page(pf.page);
	}

	reserve = frag_page_held(test);		/* the fragment's, TCP's */
	set_page_pfmemalloc(reserve);
	frag_pf_set(&pf, reserve);
	KUNIT_ASSERT_TRUE(test, mpa_frag_ring_refill(ring, 1, &pf, GFP_KERNEL));
	KUNIT_EXPECT_PTR_NE(test, reserve, pf.page);
	KUNIT_EXPECT_EQ(test, 0U, ring->nr);
	KUNIT_EXPECT_EQ(test, 1, page_ref_count(reserve));
	clear_page_pfmemalloc(reserve);
	put_page(reserve);
	if (pf.page)
		put_page(pf.page);
	frag_ring_empty(test, ring);
}

static struct kunit_case mpa_frag_test_cases[] = {
	KUNIT_CASE(mpa_frag_back_when_free),
	KUNIT_CASE(mpa_frag_oldest_free_first),
	KUNIT_CASE(mpa_frag_full_evicts_oldest),
	KUNIT_CASE(mpa_frag_drain_refs),
	KUNIT_CASE(mpa_frag_refill_contract),
	KUNIT_CASE(mpa_frag_refill_takes_first),
	KUNIT_CASE(mpa_frag_refill_keeps_only_its_own),
	{}
};

static struct kunit_suite mpa_frag_suite = {
	.name = "mpa_frag",
	.test_cases = mpa_frag_test_cases,
};

kunit_test_suite(mpa_frag_suite);
