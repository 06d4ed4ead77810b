/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Page fragments for FPDU wire images, their pages recycled (frag.c).
 */
#ifndef _MPA_FRAG_H
#define _MPA_FRAG_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <net/sock.h>

/* Pages kept for reuse, each of MPA_FRAG_SIZE (2 MiB in all, 4 KiB pages) */
#define MPA_FRAG_RING	64U
#define MPA_FRAG_SIZE	(PAGE_SIZE << SKB_FRAG_PAGE_ORDER)

/**
 * struct mpa_frag_ring - pages others may still hold, kept for reuse
 * @lock: guards the rest
 * @nr: how many of @pages are kept (read without @lock to skip an empty
 *	ring)
 * @pages: the pages, the one kept longest first; one reference each
 */
struct mpa_frag_ring {
	spinlock_t lock;	/* guards nr and pages */
	unsigned int nr;
	struct page *pages[MPA_FRAG_RING];
};

bool mpa_frag_refill(unsigned int sz, struct page_frag *pf, gfp_t gfp);
int mpa_frag_init(void);
void mpa_frag_exit(void);

#if IS_ENABLED(CONFIG_KUNIT)
struct page *mpa_frag_ring_park(struct mpa_frag_ring *ring,
				struct page *page);
struct page *mpa_frag_ring_take(struct mpa_frag_ring *ring);
unsigned int mpa_frag_ring_drain(struct mpa_frag_ring *ring,
				 unsigned int max);
bool mpa_frag_ring_refill(struct mpa_frag_ring *ring, unsigned int sz,
			  struct page_frag *pf, gfp_t gfp);
#endif

#endif /* _MPA_FRAG_H */
