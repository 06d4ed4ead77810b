// SPDX-License-Identifier: GPL-2.0
/*
 * Page fragments for FPDU wire images, their pages recycled.
 *
 * MPA builds each FPDU's wire image in a page fragment of 32 KiB pages
 * (sk_page_frag(), as TCP copies into) and hands its pages to TCP by
 * reference (tx.c). Once a page has no room for what is asked and TCP
 * still holds it, skb_page_frag_refill() lets it go and allocates another,
 * which the page allocator clears first where init_on_alloc is on
 * (Debian's default). At bulk rates that clearing took a fifth of the
 * sender's CPU (64768-octet ULPDUs over veth: 21 %, the copy from the
 * caller 28 %, the CRC 37 %).
 *
 * So such a page is kept here instead, in a ring, and given out again
 * once everybody else has let go of it: TCP, once the peer acknowledged
 * its octets, and on loopback or veth the receiving socket too, once its
 * reader copied them; MPA's own records, its run and a prepared FPDU each
 * hold a reference of their own (tx.c), as skb_page_frag_refill()'s
 * put_page() required already. Only the ring's reference is then left:
 * the test skb_page_frag_refill() makes to reuse a page in place.
 *
 * A page's old octets stay in it, maybe another connection's, and are
 * never sent: TCP is only handed ranges MPA has just written in full, as
 * with any reused fragment. Such pages never go back to the page
 * allocator, so its checks (KASAN, page poisoning) do not see them
 * between uses; a holder without a reference of its own would show up as
 * octets changed under a CRC or a test's pattern instead.
 *
 * The ring holds at most MPA_FRAG_RING pages (2 MiB with 4 KiB pages),
 * however many connections there are; a connection holds none. When it is
 * full the page kept longest goes: a connection whose peer stops reading
 * holds its pages, and must not keep the ring from the others for long.
 * One connection sending 64768-octet ULPDUs over veth found 99 % of its
 * pages here; with 16 pages, 99 % in a quiet guest but 65 % with the host
 * busy (more in flight). One ring for all, its lock taken twice per page
 * filled (32 KiB), so that a sender moved to another CPU finds its pages
 * (a page may so go from one NUMA node's CPU to another's).
 * A shrinker drops the ring's references under memory pressure (a page
 * somebody still holds is freed when they let go), and unloading the
 * module drops them all. Only pages of MPA_FRAG_SIZE are kept, and none
 * taken from the emergency reserves (page_is_pfmemalloc()).
 */
#include <linux/mm.h>
#include <linux/shrinker.h>
#include <kunit/visibility.h>

#include "frag.h"

static struct mpa_frag_ring mpa_frag_ring = {
	.lock = __SPIN_LOCK_UNLOCKED(mpa_frag_ring.lock),
};

static struct shrinker *mpa_frag_shrinker;

/* Take pages[@i] out of @ring, under its lock. */
static struct page *mpa_frag_ring_remove(struct mpa_frag_ring *ring,
					 unsigned int i)
{
	struct page *page = ring->pages[i];

	memmove(&ring->pages[i], &ring->pages[i + 1],
		(ring->nr - i - 1) * sizeof(*ring->pages));
	WRITE_ONCE(ring->nr, ring->nr - 1);
	return page;
}

/*
 * Keep @page in @ring, with the reference the caller gives up. Return:
 * NULL, or the page kept longest, which a full ring lets go of for it,
 * with the ring's reference, for the caller to drop.
 */
VISIBLE_IF_KUNIT struct page *mpa_frag_ring_park(struct mpa_frag_ring *ring,
						 struct page *page)
{
	struct page *out = NULL;

	spin_lock_bh(&ring->lock);
	if (ring->nr == MPA_FRAG_RING)
		out = mpa_frag_ring_remove(ring, 0);
	ring->pages[ring->nr] = page;
	WRITE_ONCE(ring->nr, ring->nr + 1);
	spin_unlock_bh(&ring->lock);
	return out;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frag_ring_park);

/*
 * A page of @ring nobody else holds any more, the one kept longest, with
 * the ring's reference; or NULL.
 */
VISIBLE_IF_KUNIT struct page *mpa_frag_ring_take(struct mpa_frag_ring *ring)
{
	struct page *page = NULL;
	unsigned int i;

	if (!READ_ONCE(ring->nr))
		return NULL;
	spin_lock_bh(&ring->lock);
	for (i = 0; i < ring->nr; i++) {
		if (page_ref_count(ring->pages[i]) == 1) {
			page = mpa_frag_ring_remove(ring, i);
			break;
		}
	}
	spin_unlock_bh(&ring->lock);
	return page;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frag_ring_take);

/*
 * Drop the ring's reference on up to @max pages of @ring, those kept
 * longest first, whether others still hold them or not. Return: how many.
 */
VISIBLE_IF_KUNIT unsigned int mpa_frag_ring_drain(struct mpa_frag_ring *ring,
						  unsigned int max)
{
	struct page *page;
	unsigned int n;

	for (n = 0; n < max; n++) {
		page = NULL;
		spin_lock_bh(&ring->lock);
		if (ring->nr)
			page = mpa_frag_ring_remove(ring, 0);
		spin_unlock_bh(&ring->lock);
		if (!page)
			break;
		put_page(page);
	}
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frag_ring_drain);

/*
 * mpa_frag_ring_refill() - skb_page_frag_refill(), pages recycled in @ring
 *
 * As skb_page_frag_refill() (@sz octets wanted in @pf, @gfp should a page
 * be allocated): a page is reused in place when nobody else holds it, and
 * kept while it has @sz octets left. Otherwise a page of @ring that others
 * have let go of comes back before a new one is allocated, and the page
 * they still hold goes to @ring: in that order, so that a full ring does
 * not let go of a free page it could have given. As there, the caller
 * checks that the page has room for @sz. Return: false when no page
 * could be had.
 */
VISIBLE_IF_KUNIT bool mpa_frag_ring_refill(struct mpa_frag_ring *ring,
					   unsigned int sz,
					   struct page_frag *pf, gfp_t gfp)
{
	struct page *page = pf->page, *fresh;

	if (page) {
		if (page_ref_count(page) == 1) {
			pf->offset = 0;
			return true;
		}
		if (pf->offset + sz <= pf->size)
			return true;
		pf->page = NULL;
	}
	fresh = mpa_frag_ring_take(ring);
	if (page) {
		if (page_size(page) == MPA_FRAG_SIZE &&
		    !page_is_pfmemalloc(page))
			page = mpa_frag_ring_park(ring, page);
		if (page)
			put_page(page);
	}
	if (fresh) {
		pf->page = fresh;
		pf->offset = 0;
		pf->size = MPA_FRAG_SIZE;
		return true;
	}
	return skb_page_frag_refill(sz, pf, gfp);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frag_ring_refill);

/**
 * mpa_frag_refill() - skb_page_frag_refill(), pages recycled
 * @sz: octets wanted
 * @pf: the page fragment: the task's or the socket's (sk_page_frag())
 * @gfp: allocation flags, should a page be allocated
 *
 * mpa_frag_ring_refill() on the module's ring.
 *
 * Return: false when no page could be had.
 */
bool mpa_frag_refill(unsigned int sz, struct page_frag *pf, gfp_t gfp)
{
	return mpa_frag_ring_refill(&mpa_frag_ring, sz, pf, gfp);
}

/*
 * The shrinker counts base pages, and asks for them to be scanned half at
 * a time (seeks 0): a kept page costs only an allocation to replace.
 */
static unsigned long mpa_frag_count(struct shrinker *s,
				    struct shrink_control *sc)
{
	unsigned long n = READ_ONCE(mpa_frag_ring.nr);

	return n ? n << SKB_FRAG_PAGE_ORDER : SHRINK_EMPTY;
}

static unsigned long mpa_frag_scan(struct shrinker *s,
				   struct shrink_control *sc)
{
	unsigned long want = DIV_ROUND_UP(sc->nr_to_scan,
					  1UL << SKB_FRAG_PAGE_ORDER);
	unsigned int n;

	n = mpa_frag_ring_drain(&mpa_frag_ring, min_t(unsigned long, want,
						      MPA_FRAG_RING));
	return n ? (unsigned long)n << SKB_FRAG_PAGE_ORDER : SHRINK_STOP;
}

/**
 * mpa_frag_init() - register the ring's shrinker
 *
 * Return: 0 or -ENOMEM.
 */
int mpa_frag_init(void)
{
	mpa_frag_shrinker = shrinker_alloc(0, "mpa-frag");
	if (!mpa_frag_shrinker)
		return -ENOMEM;
	mpa_frag_shrinker->count_objects = mpa_frag_count;
	mpa_frag_shrinker->scan_objects = mpa_frag_scan;
	mpa_frag_shrinker->seeks = 0;
	shrinker_register(mpa_frag_shrinker);
	return 0;
}

/**
 * mpa_frag_exit() - drop every page kept
 *
 * No MPA socket is left to keep more (see mpa_exit()).
 */
void mpa_frag_exit(void)
{
	shrinker_free(mpa_frag_shrinker);
	mpa_frag_ring_drain(&mpa_frag_ring, MPA_FRAG_RING);
}
