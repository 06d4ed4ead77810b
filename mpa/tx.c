// SPDX-License-Identifier: GPL-2.0
/*
 * MPA transmit path: each ULPDU becomes one FPDU (RFC 5044 section 4).
 *
 * The ULPDU is copied once from the caller into page fragments laid out as
 * the FPDU's whole wire image (Markers, ULPDU_Length, ULPDU, PAD, CRC), the
 * CRC computed over the copy as it is made (with CRCs off, the field is
 * zero and nothing is computed: requirements A10), and the pages are
 * handed to TCP with MSG_SPLICE_PAGES.
 *
 * Segments (Appendix A, R-4.5-5): TCP may put several FPDUs in one segment,
 * as it packs small sends when the sender is ahead of the wire, but never
 * splits one that fits in a segment; see mpa_tx_align().
 *
 * FPDUs TCP cannot take yet, and a Responder's FPDUs before the first valid
 * FPDU arrived (R-7.1.2-15), wait in mpa_conn::tx_queue. Every octet of
 * their wire images, the consumer's own pages of a zero-copy send
 * included, is charged as TCP charges what it queues: to the socket's send
 * buffer (sk_wmem_queued) and to TCP's memory accounting (sk_forward_alloc,
 * so tcp_mem and the socket's memory cgroup), until TCP takes it (and
 * charges it itself) or it is freed. Everything here runs in process
 * context under the socket lock, which is never released while an FPDU is
 * handed to TCP, so FPDUs of concurrent senders never interleave; only
 * mpa_tx_prepare() runs before the lock is taken, on the task's own page
 * fragment, building an FPDU that is not the connection's yet, and
 * mpa_tx_run_kick() runs where TCP processes an ACK, in softirq with the
 * socket bh-locked (no owner) when not from the owner's backlog.
 *
 * Small FPDUs that TCP would only hold back (Nagle's algorithm) are kept
 * as one run instead and handed to TCP in one call with that ACK: see
 * "The run" below.
 */
#include <linux/bvec.h>
#include <linux/highmem.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/unaligned.h>
#include <net/hotdata.h>
#include <net/tcp.h>

#include "conn.h"
#include "frag.h"

/**
 * struct mpa_tx_pre - an FPDU built before the socket was locked
 * @lo: its layout: without Markers, the same wherever it goes in the stream
 * @bv: its whole wire image, in the task's page fragment; we hold a
 *	reference
 */
struct mpa_tx_pre {
	struct mpa_fpdu_layout lo;
	struct bio_vec bv;
};

/*
 * Send flags an MPA socket refuses in Full Operation (EOPNOTSUPP): no
 * urgent data, no pages of the caller's kept (MSG_ZEROCOPY) or spliced,
 * no data with a SYN (MSG_FASTOPEN: the socket is connected), as kTLS.
 */
#define MPA_TX_REFUSED	(MSG_OOB | MSG_ZEROCOPY | MSG_SPLICE_PAGES | \
			 MSG_FASTOPEN)

#define MPA_TX_FORCE_MAX	SZ_256K

/*
 * TCP's memory limits refused @n more octets of @r. When @r is all the
 * socket has queued, charge them anyway, as TCP guarantees a socket with
 * nothing queued the skb it sends (tcp_wmem_schedule(),
 * sk_forced_mem_schedule()): else a sender would get EAGAIN with no ACK
 * to come and wake it, poll saying EPOLLOUT all along, for as long as the
 * limit holds. The memory accounting grants a stream socket a charge that
 * fills its send buffer, over the limits (__sk_mem_raise_allocated()):
 * ask for that much. What @n does not take stays in sk_forward_alloc for
 * the FPDU's next chunks, and goes back with the next uncharge
 * (sk_mem_uncharge() reclaims). One FPDU at most: the next record finds
 * this one queued. Not for a send buffer that SO_SNDBUF keeps above
 * MPA_TX_FORCE_MAX: a memory cgroup at its limit would reclaim that much
 * first; such a sender waits as before.
 */
static bool mpa_tx_charge_alone(struct sock *sk, struct mpa_tx_rec *r, u32 n)
{
	/* sk_wmem_schedule() asks for what sk_forward_alloc lacks */
	s64 fill = (s64)READ_ONCE(sk->sk_sndbuf) - sk->sk_wmem_queued +
		   sk->sk_forward_alloc;

	if (sk->sk_wmem_queued != r->charged || fill > MPA_TX_FORCE_MAX ||
	    !sk_wmem_schedule(sk, max_t(s64, n, fill)))
		return false;
	sk_mem_charge(sk, n);
	return true;
}

/*
 * Charge @n more octets of @r: TCP's memory accounting first, which may
 * refuse (tcp_mem, the memory cgroup's limit), then the send buffer.
 * Return: 0, or -ENOBUFS with nothing charged.
 */
static int mpa_tx_charge(struct mpa_conn *c, struct mpa_tx_rec *r, u32 n)
{
	struct sock *sk = c->sk;

	if (sk_wmem_schedule(sk, n)) {
		sk_mem_charge(sk, n);
	} else {
		/*
		 * As TCP does when it has no memory for an skb: a smaller
		 * send buffer, so that poll stops saying EPOLLOUT to a
		 * sender that would get EAGAIN
		 */
		sk_stream_moderate_sndbuf(sk);
		if (!mpa_tx_charge_alone(sk, r, n))
			return -ENOBUFS;
	}
	sk_wmem_queued_add(sk, n);
	c->tx_charged += n;
	r->charged += n;
	return 0;
}

/* TCP took @n octets of @r, or they are dropped: they are not ours now. */
static void mpa_tx_uncharge(struct mpa_conn *c, struct mpa_tx_rec *r, u32 n)
{
	struct sock *sk = c->sk;

	sk_wmem_queued_add(sk, -(int)n);
	sk_mem_uncharge(sk, n);
	c->tx_charged -= n;
	r->charged -= n;
}

/**
 * mpa_tx_uncount() - MPA is about to hand TCP octets: uncount its own
 * @c: the connection, socket owned (or bh-locked, in sk_write_space())
 * @extra: octets in sk_wmem_queued outside &mpa_conn.tx_charged (the run)
 *
 * TCP must not count as queued already what it is about to take, nor
 * what MPA holds behind it: counted, they could fill a send buffer that
 * TCP shrank after a failed allocation, or one set small, and TCP, its
 * queues empty, would refuse for good. TCP charges what it takes. Until
 * mpa_tx_recount(), an sk_write_space() from inside TCP's sendmsg is the
 * pusher's to answer (mpa_write_space()).
 *
 * Return: the octets uncounted, for mpa_tx_recount().
 */
u32 mpa_tx_uncount(struct mpa_conn *c, u32 extra)
{
	u32 queued = extra + c->tx_charged;

	sk_wmem_queued_add(c->sk, -(int)queued);
	WRITE_ONCE(c->tx_pushing, true);
	return queued;
}

/**
 * mpa_tx_recount() - TCP returned: count again what MPA still holds
 * @c: the connection, as for mpa_tx_uncount()
 * @queued: what mpa_tx_uncount() returned, less what TCP took of it and
 *	MPA uncharged meanwhile
 */
void mpa_tx_recount(struct mpa_conn *c, u32 queued)
{
	WRITE_ONCE(c->tx_pushing, false);
	sk_wmem_queued_add(c->sk, queued);
}

/**
 * mpa_tx_retry_later() - TCP refused what MPA handed it: when to try again
 * @c: the connection, as for mpa_tx_uncount()
 *
 * With something in flight, its ACK makes room (sk_write_space()). With
 * TCP's queues empty, TCP lacked memory and no ACK will come: only time
 * brings it back, so try again after MPA_RETRY, not at once (TCP's own
 * call of sk_write_space() for it was ignored: mpa_write_space()).
 */
void mpa_tx_retry_later(struct mpa_conn *c)
{
	if (tcp_rtx_and_write_queues_empty(c->sk))
		timer_reduce(&c->timer, jiffies + MPA_RETRY);
}

static void mpa_tx_rec_free(struct mpa_conn *c, struct mpa_tx_rec *r)
{
	unsigned int i;

	mpa_tx_uncharge(c, r, r->charged);
	for (i = 0; i < r->nr_chunks; i++)
		put_page(r->chunks[i].page);
	/* the consumer's pages may be reused once TCP lets go of them too */
	net_zcopy_put(r->uarg);
	kmem_cache_free(mpa_tx_rec_cache, r);
}

/*
 * Grow @r's wire image to @len octets, from the socket's page fragment:
 * the task's, or the socket's own when its consumer may run in the memory
 * reclaim path (sk_use_task_frag clear), allocated with the socket's
 * allocation flags, as TCP does, or recycled (frag.c).
 */
static int mpa_tx_rec_grow(struct mpa_conn *c, struct mpa_tx_rec *r, u32 len)
{
	struct page_frag *pf = sk_page_frag(c->sk);
	struct mpa_tx_chunk *ch;
	u32 n;
	int ret;

	while (r->len < len) {
		if (r->nr_chunks == MPA_TX_CHUNKS)
			return -ENOMEM;
		if (!mpa_frag_refill(min(len - r->len, 256U), pf,
				     c->sk->sk_allocation))
			return -ENOMEM;
		n = min(len - r->len, pf->size - pf->offset);
		ret = mpa_tx_charge(c, r, n);
		if (ret)
			return ret;
		ch = &r->chunks[r->nr_chunks];
		if (r->nr_chunks && ch[-1].page == pf->page &&
		    ch[-1].off + ch[-1].len == pf->offset) {
			ch[-1].len += n;	/* continues the last chunk */
		} else {
			get_page(pf->page);
			ch->page = pf->page;
			ch->off = pf->offset;
			ch->len = n;
			r->nr_chunks++;
		}
		pf->offset += n;
		r->len += n;
	}
	return 0;
}

/*
 * Where wire offset @off of @r lives: its address, and how many octets
 * from there are contiguous (at most @len).
 */
static u8 *mpa_tx_rec_ptr(struct mpa_tx_rec *r, u32 off, u32 *len)
{
	unsigned int i;

	for (i = 0; i < r->nr_chunks; i++) {
		struct mpa_tx_chunk *ch = &r->chunks[i];

		if (off < ch->len) {
			*len = min(*len, ch->len - off);
			return (u8 *)page_address(ch->page) + ch->off + off;
		}
		off -= ch->len;
	}
	*len = 0;
	return NULL;
}

/* Write @len octets at wire offset @off of @r; feed them to *@crc. */
static void mpa_tx_rec_write(struct mpa_tx_rec *r, u32 off, const u8 *src,
			     u32 len, u32 *crc)
{
	while (len) {
		u32 n = len;
		u8 *dst = mpa_tx_rec_ptr(r, off, &n);

		memcpy(dst, src, n);
		if (crc)
			*crc = mpa_crc_update(*crc, dst, n);
		src += n;
		off += n;
		len -= n;
	}
}

/*
 * Copy @len octets of the caller's data to wire offset @off of @r and feed
 * the copy (not the source, which the caller may change under us) to *@crc.
 */
static int mpa_tx_rec_copy_in(struct mpa_tx_rec *r, u32 off,
			      struct iov_iter *from, u32 len, u32 *crc)
{
	while (len) {
		u32 n = len;
		u8 *dst = mpa_tx_rec_ptr(r, off, &n);

		if (WARN_ON_ONCE(!dst))
			return -EFAULT;		/* past the image: a bug */
		if (copy_from_iter(dst, n, from) != n)
			return -EFAULT;
		if (crc)
			*crc = mpa_crc_update(*crc, dst, n);
		off += n;
		len -= n;
	}
	return 0;
}

/* Feed wire octets [@off, @off + @len) of @r to the CRC register. */
static u32 mpa_tx_rec_crc(struct mpa_tx_rec *r, u32 off, u32 len, u32 crc)
{
	while (len) {
		u32 n = len;
		const u8 *p = mpa_tx_rec_ptr(r, off, &n);

		crc = mpa_crc_update(crc, p, n);
		off += n;
		len -= n;
	}
	return crc;
}

/*
 * Does the connection send real CRCs? Only if C=1 in either startup frame.
 * With C=0 in both, neither side checks the field (R-7.1.1-9, R-4.1-6) and
 * it may hold anything: we send zero and compute nothing (requirements
 * A10's "zero CRC"), which saves a pass over every octet sent.
 */
static bool mpa_tx_crc_on(const struct mpa_conn *c)
{
	return c->params.crc;
}

/*
 * The CRC runs over a range of the wire image once it is this long, or
 * at the CRC field: a small FPDU takes one CRC call in all, however many
 * pieces it has, and a large one is summed while its octets are still in
 * the cache. A ULPDU piece this long is summed as it is copied.
 */
#define MPA_TX_CRC_BATCH	SZ_4K

/*
 * Write the whole wire image of the FPDU of layout @lo to @va, contiguous:
 * Markers, ULPDU_Length, the ULPDU copied from @from (none: it is in
 * place already), PAD and the CRC,
 * summed over the copy (not the source, which the caller may change under
 * us) in ranges of up to MPA_TX_CRC_BATCH octets as they are written, so
 * a small FPDU takes one CRC call. Without @crc_on the CRC field is zero.
 */
static __always_inline int
mpa_tx_fill_linear(const struct mpa_fpdu_layout *lo, u8 *va,
		   struct iov_iter *from, bool crc_on)
{
	u32 crc = mpa_crc_init(), done = 0;	/* summed: [0, done) */
	struct mpa_piece_iter it;
	struct mpa_piece p;

	/*
	 * Without a Marker and within one CRC call, no walk over the pieces:
	 * for a small FPDU it took more of the sender's time than the copy
	 * of its ULPDU.
	 */
	if (!mpa_fpdu_has_markers(lo) && lo->span <= MPA_TX_CRC_BATCH) {
		if (from && copy_from_iter(va + MPA_HDR_SIZE, lo->ulpdu_len,
					   from) != lo->ulpdu_len)
			return -EFAULT;
		return mpa_fpdu_frame(lo, va, crc_on);
	}
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p)) {
		switch (p.type) {
		case MPA_PIECE_ULPDU:
			if (from &&
			    copy_from_iter(va + p.off, p.len, from) != p.len)
				return -EFAULT;
			break;
		case MPA_PIECE_CRC:
			if (crc_on)
				crc = mpa_crc_final(mpa_crc_update(crc, va + done,
								   p.off - done));
			mpa_crc_put(va + p.off, crc_on ? crc : 0);
			return 0;
		default:
			mpa_piece_fill(lo, &p, va + p.off);
			break;
		}
		if (crc_on && p.off + p.len - done >= MPA_TX_CRC_BATCH) {
			crc = mpa_crc_update(crc, va + done,
					     p.off + p.len - done);
			done = p.off + p.len;
		}
	}
	return 0;
}

/*
 * Write the pieces of @r that are not ULPDU octets, per its final layout.
 * With @copy, also copy the ULPDU from @from; else the ULPDU is already in
 * place. The CRC covers the wire image up to the CRC field, summed in
 * ranges of up to MPA_TX_CRC_BATCH octets as they are written; without
 * @crc_on (CRCs off for the connection) the CRC field is zero and no CRC
 * is computed (see mpa_tx_crc_on()). An image in one chunk (the common
 * case) is written straight, without the walk over the chunks.
 */
static int mpa_tx_rec_fill(struct mpa_tx_rec *r, struct iov_iter *from,
			   bool copy, bool crc_on)
{
	const struct mpa_fpdu_layout *lo = &r->lo;
	u32 crc = mpa_crc_init(), done = 0;	/* summed: wire [0, done) */
	struct mpa_piece_iter it;
	u8 tmp[MPA_MARKER_SIZE];
	struct mpa_piece p;
	int ret;

	if (r->nr_chunks == 1)
		return mpa_tx_fill_linear(lo, page_address(r->chunks[0].page) +
					  r->chunks[0].off,
					  copy ? from : NULL, crc_on);
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p)) {
		switch (p.type) {
		case MPA_PIECE_ULPDU:
			if (!copy)
				break;
			if (crc_on && p.len >= MPA_TX_CRC_BATCH) {
				crc = mpa_tx_rec_crc(r, done, p.off - done, crc);
				done = p.off + p.len;
				ret = mpa_tx_rec_copy_in(r, p.off, from, p.len,
							 &crc);
			} else {
				ret = mpa_tx_rec_copy_in(r, p.off, from, p.len,
							 NULL);
			}
			if (ret)
				return ret;
			break;
		case MPA_PIECE_CRC:
			if (crc_on)
				crc = mpa_crc_final(mpa_tx_rec_crc(r, done,
								   p.off - done,
								   crc));
			mpa_crc_put(tmp, crc_on ? crc : 0);
			mpa_tx_rec_write(r, p.off, tmp, MPA_CRC_SIZE, NULL);
			continue;
		default:
			mpa_piece_fill(lo, &p, tmp);
			mpa_tx_rec_write(r, p.off, tmp, p.len, NULL);
			break;
		}
		if (crc_on && p.off + p.len - done >= MPA_TX_CRC_BATCH) {
			crc = mpa_tx_rec_crc(r, done, p.off + p.len - done, crc);
			done = p.off + p.len;
		}
	}
	return 0;
}

/*
 * A new FPDU at the current stream position. @len is its ULPDU length if
 * known; an open (MSG_MORE) ULPDU is laid out for the largest ULPDU, which
 * puts every ULPDU octet where the final layout will.
 */
static struct mpa_tx_rec *mpa_tx_rec_new(struct mpa_conn *c, u32 len)
{
	struct mpa_tx_rec *r;

	/*
	 * The socket's flags; the cache is SLAB_ACCOUNT (memory cgroup).
	 * Only the chunks in use (nr_chunks) are ever read: the rest of
	 * the array is left as it is.
	 */
	r = kmem_cache_alloc(mpa_tx_rec_cache, c->sk->sk_allocation);
	if (!r)
		return NULL;
	memset(r, 0, offsetof(struct mpa_tx_rec, chunks));
	mpa_fpdu_layout(&r->lo, c->tx_pos, c->params.tx_markers, len);
	return r;
}

/*
 * A record of the whole FPDU of the ULPDU of @len octets copied from
 * @from, not queued yet. With @skip, TCP has the FPDU's first octets, up
 * to ULPDU octet @skip (the copy path, without CRCs or Markers): they are
 * never sent again (&mpa_tx_rec.sent), and only the rest is copied, @from
 * being at ULPDU octet @skip. Return: it, or an ERR_PTR() with nothing
 * kept.
 */
static struct mpa_tx_rec *mpa_tx_rec_framed(struct mpa_conn *c,
					    struct iov_iter *from, u32 len,
					    u32 skip)
{
	struct mpa_tx_rec *r = mpa_tx_rec_new(c, len);
	int ret;

	if (!r)
		return ERR_PTR(-ENOMEM);
	ret = mpa_tx_rec_grow(c, r, r->lo.span);
	if (!ret && !skip)
		ret = mpa_tx_rec_fill(r, from, true, mpa_tx_crc_on(c));
	if (!ret && skip) {
		ret = mpa_tx_rec_fill(r, NULL, false, false);
		if (!ret)
			ret = mpa_tx_rec_copy_in(r, r->lo.hdr_off +
						 MPA_HDR_SIZE + skip, from,
						 len - skip, NULL);
	}
	if (ret) {
		mpa_tx_rec_free(c, r);
		return ERR_PTR(ret);
	}
	return r;
}

/*
 * Queue @r, the FPDU of a ULPDU of @ulpdu_len octets at the current stream
 * position, TCP having taken its first @took octets already (and charged
 * them itself).
 */
static void mpa_tx_rec_queue(struct mpa_conn *c, struct mpa_tx_rec *r,
			     u32 ulpdu_len, u32 took)
{
	if (took)
		mpa_tx_uncharge(c, r, took);
	r->sent = took;
	r->ulpdu_len = ulpdu_len;
	list_add_tail(&r->list, &c->tx_queue);
	c->tx_pos += r->len;
}

/* Wire octets of @r's pages from @off on: how many skb fragments they take. */
static unsigned int mpa_tx_rec_frags(const struct mpa_tx_rec *r, u32 off)
{
	unsigned int i, n = 0;

	for (i = 0; i < r->nr_chunks; i++) {
		const struct mpa_tx_chunk *ch = &r->chunks[i];
		u32 a, b;

		if (off >= ch->len) {
			off -= ch->len;
			continue;
		}
		/* TCP takes pages one (small) page at a time */
		a = ch->off + off;
		b = ch->off + ch->len - 1;
		n += b / PAGE_SIZE - a / PAGE_SIZE + 1;
		off = 0;
	}
	return n;
}

/*
 * The same for MSG_ZEROCOPY (zerocopy_fill_skb_from_iter()): a fragment
 * spans a compound page, and joins the one before it when it goes on
 * where that one ends.
 */
static unsigned int mpa_tx_rec_zc_frags(const struct mpa_tx_rec *r)
{
	struct page *head = NULL;
	unsigned int i, n = 0;
	unsigned long end = 0;

	for (i = 0; i < r->nr_chunks; i++) {
		const struct mpa_tx_chunk *ch = &r->chunks[i];
		u32 off = ch->off, left = ch->len;

		while (left) {
			struct page *p = nth_page(ch->page, off / PAGE_SIZE);
			struct page *h = compound_head(p);
			u32 in = min_t(u32, left, PAGE_SIZE - off % PAGE_SIZE);
			unsigned long at = (p - h) * PAGE_SIZE + off % PAGE_SIZE;

			n += h != head || at != end;
			head = h;
			end = at + in;
			off += in;
			left -= in;
		}
	}
	return n;
}

/*
 * Will TCP put all of @r's pages in one skb? An skb takes at most this
 * many fragments of pages handed with MSG_SPLICE_PAGES
 * (sysctl_max_skb_frags) or MSG_ZEROCOPY (MAX_SKB_FRAGS, @zc): TCP starts
 * a new one, so a new segment, where they run out.
 */
static bool mpa_tx_rec_one_skb(const struct mpa_tx_rec *r, bool zc)
{
	unsigned int max = min_t(unsigned int, MAX_SKB_FRAGS,
				 READ_ONCE(net_hotdata.sysctl_max_skb_frags));

	/* a page, or a compound page, at least per fragment */
	return mpa_tx_rec_frags(r, 0) <= max ||
	       (zc && mpa_tx_rec_zc_frags(r) <= max);
}

/* Does an FPDU of layout @lo fit a segment (R-4.5-5)? */
static bool mpa_tx_fits_segment(const struct mpa_conn *c,
				const struct mpa_fpdu_layout *lo)
{
	return lo->span <= READ_ONCE(tcp_sk(c->sk)->mss_cache);
}

/*
 * The open ULPDU's image takes every chunk: each piece appended took one
 * of its own when another send of the task moved the shared page fragment
 * on between them. Copy the image into new pieces of the fragment, as few
 * as its pages allow, and let the old ones go. Return: 0, -ENOMEM (also
 * when that would not free a chunk), -ENOBUFS (TCP's memory limits).
 */
static int mpa_tx_open_compact(struct mpa_conn *c, struct mpa_tx_rec *r)
{
	struct mpa_tx_rec *n;
	unsigned int i;
	u32 off, a, b;
	u8 *src, *dst;
	int ret;

	n = kmem_cache_alloc(mpa_tx_rec_cache, c->sk->sk_allocation);
	if (!n)
		return -ENOMEM;
	memset(n, 0, offsetof(struct mpa_tx_rec, chunks));
	ret = mpa_tx_rec_grow(c, n, r->len);
	if (!ret && n->nr_chunks >= r->nr_chunks)
		ret = -ENOMEM;
	if (ret) {
		mpa_tx_rec_free(c, n);
		return ret;
	}
	for (off = 0; off < r->len; off += min(a, b)) {
		a = r->len - off;
		b = a;
		src = mpa_tx_rec_ptr(r, off, &a);
		dst = mpa_tx_rec_ptr(n, off, &b);
		memcpy(dst, src, min(a, b));
	}
	/* @r keeps its layout and lengths, with @n's pieces and charge */
	mpa_tx_uncharge(c, r, r->charged);
	for (i = 0; i < r->nr_chunks; i++)
		put_page(r->chunks[i].page);
	memcpy(r->chunks, n->chunks, n->nr_chunks * sizeof(n->chunks[0]));
	r->nr_chunks = n->nr_chunks;
	r->charged = n->charged;
	kmem_cache_free(mpa_tx_rec_cache, n);
	return 0;
}

/* Grow the open ULPDU's image to @need octets, compacting it if need be. */
static int mpa_tx_open_grow(struct mpa_conn *c, struct mpa_tx_rec *r,
			    u32 need)
{
	int ret = mpa_tx_rec_grow(c, r, need);

	if (ret != -ENOMEM || r->nr_chunks != MPA_TX_CHUNKS)
		return ret;
	ret = mpa_tx_open_compact(c, r);
	return ret ?: mpa_tx_rec_grow(c, r, need);
}

/* Close the open ULPDU: final layout, Markers, PAD, CRC; queue it. */
static void mpa_tx_close_open(struct mpa_conn *c)
{
	struct mpa_tx_rec *r = c->tx_open;

	c->tx_open = NULL;
	mpa_fpdu_layout(&r->lo, r->lo.pos, c->params.tx_markers,
			r->ulpdu_len);
	/* The image was sized for the ULPDU so far; add PAD and CRC room. */
	if (mpa_tx_open_grow(c, r, r->lo.span)) {
		/* Keep it open: the caller reports the error. */
		c->tx_open = r;
		return;
	}
	/*
	 * Pieces that lie apart (the task wrote to another socket between
	 * two of them, from the same page fragment) may take more fragments
	 * than an skb holds: TCP would then cut an FPDU that fits a segment.
	 * Copied together when there is memory for it (else it goes as is).
	 */
	if (mpa_tx_fits_segment(c, &r->lo) && !mpa_tx_rec_one_skb(r, false))
		mpa_tx_open_compact(c, r);
	mpa_tx_rec_fill(r, NULL, false, mpa_tx_crc_on(c));
	mpa_tx_uncharge(c, r, r->len - r->lo.span);
	r->len = r->lo.span;
	list_add_tail(&r->list, &c->tx_queue);
	c->tx_pos += r->len;
}

/* Wire octets needed to hold a ULPDU of @ulen octets of open layout @lo. */
static u32 mpa_tx_open_span(const struct mpa_fpdu_layout *lo, u32 ulen)
{
	struct mpa_fpdu_layout tmp;

	mpa_fpdu_layout(&tmp, lo->pos, lo->markers, ulen);
	return tmp.span;
}

/* Append @len octets from @from to the open ULPDU, opening one if needed. */
static int mpa_tx_append(struct mpa_conn *c, struct iov_iter *from, u32 len)
{
	struct mpa_tx_rec *r = c->tx_open;
	struct mpa_piece_iter it;
	struct mpa_piece p;
	u32 start, end;
	int ret;

	if (!r) {
		r = mpa_tx_rec_new(c, MPA_MAX_ULPDU);
		if (!r)
			return -ENOMEM;
		c->tx_open = r;
	}
	start = r->ulpdu_len;
	end = start + len;
	/* the caller checked under the socket lock (mpa_tx_sendmsg()) */
	if (WARN_ON_ONCE(len > MPA_MAX_ULPDU - start)) {
		ret = -EMSGSIZE;
		goto undo;
	}
	ret = mpa_tx_open_grow(c, r, mpa_tx_open_span(&r->lo, end));
	if (ret)
		goto undo;
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(&r->lo, &it, &p)) {
		u32 a, b;

		if (p.type != MPA_PIECE_ULPDU)
			continue;
		a = max(start, p.ulpdu_off);
		b = min(end, p.ulpdu_off + p.len);
		if (a >= b)
			continue;
		ret = mpa_tx_rec_copy_in(r, p.off + (a - p.ulpdu_off), from,
					 b - a, NULL);
		if (ret)
			goto undo;
	}
	r->ulpdu_len = end;
	return 0;

undo:
	/* r->ulpdu_len is unchanged: the failed call left nothing behind */
	if (!start) {
		c->tx_open = NULL;
		mpa_tx_rec_free(c, r);
	}
	return ret;
}

/* TCP took all of an FPDU of layout @lo: count it. */
static void mpa_tx_sent(struct mpa_conn *c, const struct mpa_fpdu_layout *lo)
{
	c->stats.tx_fpdus++;
	c->stats.tx_octets += lo->ulpdu_len;
	c->stats.tx_markers += lo->nr_markers + lo->lead_marker;
}

/*
 * Would the @len octets of @r's page fragments (no @r: of one contiguous
 * range) take an skb holding @frags already past the most fragments an skb
 * may have? A chunk of n octets takes at most
 * n / PAGE_SIZE + 2 fragments: the walk over the chunks is only needed
 * when that bound says it may (seldom: an FPDU's chunks are few).
 */
static bool mpa_tx_frags_over(const struct mpa_tx_rec *r, u32 len,
			      unsigned int frags)
{
	unsigned int max = READ_ONCE(net_hotdata.sysctl_max_skb_frags);

	if (frags + len / PAGE_SIZE + 2 * (r ? r->nr_chunks : 1) <= max)
		return false;
	return !r || frags + mpa_tx_rec_frags(r, 0) > max;
}

/*
 * May TCP's write queue still hold octets we sent before Full Operation
 * (mpa_tx_align())? Only while some are not acknowledged. Asked before
 * every FPDU TCP is handed, so the answer turns false for good once they
 * are, long before the stream is 2 GiB on: past that, before() (modulo
 * 2^31) would find a tail of FPDUs before @tx_seq_start for 2 GiB of
 * every 4 GiB, and end each tail as if it held startup octets.
 */
static __always_inline bool mpa_tx_before_unacked(struct mpa_conn *c)
{
	if (likely(!c->tx_before_unacked))
		return false;
	if (!before(tcp_sk(c->sk)->snd_una, c->tx_seq_start))
		c->tx_before_unacked = false;
	return c->tx_before_unacked;
}

/*
 * Before TCP takes the FPDU of @len wire octets in @r (none of it yet; no
 * @r: one contiguous range, see mpa_tx_direct()): make sure no segment splits
 * an FPDU that fits in one (Appendix A, R-4.5-5), while letting several
 * FPDUs share a segment when the sender is ahead of the wire, as TCP packs
 * small sends then (autocorking, Nagle, TCP_CORK).
 *
 * TCP appends what it is given to the last skb of its write queue (none of
 * which has gone out yet) unless that skb is marked end-of-record, as
 * MSG_EOR marks it, and cuts each skb into segments of the MSS from the
 * skb's first octet. So the FPDU would start at offset tail->len % MSS of
 * a segment. It joins the tail if it fits in what is left of that segment;
 * if not, the tail is marked end-of-record and the FPDU starts a new skb,
 * so a new segment. An FPDU larger than a segment (a ULPDU above MULPDU)
 * cannot be aligned (requirements A11): it joins the tail wherever it
 * starts, as TCP packs large sends, rather than leave a short segment
 * behind each such FPDU and an skb to itself (per-skb costs on both
 * sides); where the tail is full (TCP's size goal, the most fragments an
 * skb may have), TCP goes on in a new skb. An FPDU after it that fits a
 * segment is placed by the same rule, from wherever TCP ended.
 *
 * The one cut TCP makes elsewhere than at a multiple of the MSS is at the
 * edge of the peer's receive window, which would shift every later FPDU
 * of the skb against the segments: so the tail only grows past its first
 * segment by an FPDU that fits a segment while all of it fits in the
 * window offered now (the window's edge only moves on; a larger FPDU may
 * be cut anywhere, and one that fits a segment after it starts a new skb
 * while the tail reaches past the window). An skb of one segment at most
 * goes out whole, but for TCP's window probe: when the peer's window
 * stays below one segment, the persist timer sends what fits, cutting
 * wherever the window ends, as it would cut a lone FPDU; make bench sees
 * it as the rare segment that is not aligned (its alignment share).
 *
 * The tail is also ended when it could not take all of the page fragments
 * of an FPDU that fits a segment (TCP would start a new skb inside the
 * FPDU; not with @copied, the copy path's FPDU, which TCP copies into its
 * own page fragment, and which cannot be aligned anyway), and when it
 * holds octets of the startup phase.
 *
 * The MSS is TCP's mss_cache (ambiguity A13): what TCP segments with,
 * unless it is sending SACK blocks.
 */
static __always_inline void mpa_tx_align(struct mpa_conn *c, u32 len,
					 const struct mpa_tx_rec *r,
					 bool copied)
{
	struct sock *sk = c->sk;
	struct tcp_sock *tp = tcp_sk(sk);
	struct sk_buff *tail = tcp_write_queue_tail(sk);
	u32 mss = READ_ONCE(tp->mss_cache), used, end;
	bool before_start = mpa_tx_before_unacked(c);
	unsigned int frags;

	if (!tail || !tail->len || !tcp_skb_can_collapse_to(tail) || !mss)
		return;		/* the FPDU starts a new skb anyway */
	used = tail->len % mss;
	end = TCP_SKB_CB(tail)->seq + tail->len + len;
	frags = skb_shinfo(tail)->nr_frags;
	if ((len <= mss &&
	     ((used && len > mss - used) ||
	      (tail->len + len > mss && after(end, tcp_wnd_end(tp))) ||
	      (frags && !copied && mpa_tx_frags_over(r, len, frags)))) ||
	    (before_start && before(TCP_SKB_CB(tail)->seq, c->tx_seq_start)))
		TCP_SKB_CB(tail)->eor = 1;
}

/*
 * Add @len octets of a page at @off to @r's wire image, with a reference:
 * the consumer's page of a zero-copy send (charged as ours are: TCP
 * charges such pages too), or our page fragment (mpa_tx_direct()).
 */
static int mpa_tx_rec_page(struct mpa_conn *c, struct mpa_tx_rec *r,
			   struct page *page, u32 off, u32 len)
{
	struct mpa_tx_chunk *ch;
	int ret;

	if (r->nr_chunks == MPA_TX_CHUNKS)
		return -E2BIG;
	ret = mpa_tx_charge(c, r, len);
	if (ret)
		return ret;
	ch = &r->chunks[r->nr_chunks++];
	get_page(page);
	ch->page = page;
	ch->off = off;
	ch->len = len;
	r->len += len;
	return 0;
}

/*
 * ULPDUs from this size on start on an 8-octet boundary of their page
 * (mpa_tx_skew()). Smaller ones are not worth a gap between their FPDUs,
 * which would keep them in separate skb fragments, fewer to a segment.
 */
#define MPA_TX_ALIGN_MIN	256
#define MPA_TX_ALIGN		8

/*
 * How far to move the FPDU of layout @lo from @off in its page so that
 * its ULPDU starts on an MPA_TX_ALIGN boundary: the copy from the
 * caller, the one per-octet pass besides the CRC, then writes whole
 * words (on veth and loopback the reader's copy out of the same page
 * reads them too). Only the FPDU's own octets go to TCP, so the gap is
 * never sent.
 */
static u32 mpa_tx_skew(const struct mpa_fpdu_layout *lo, u32 off)
{
	if (lo->ulpdu_len < MPA_TX_ALIGN_MIN)
		return 0;
	return (0U - (off + lo->hdr_off + MPA_HDR_SIZE)) & (MPA_TX_ALIGN - 1);
}

/*
 * Build the whole wire image of the FPDU of layout @lo in page fragment
 * @pf, its ULPDU copied from @from (at the skew of mpa_tx_skew()), and
 * point @bv at it. Return: 0; -ENOMEM when @pf has no room for it, with
 * nothing done; or -EFAULT from the copy, @pf unchanged.
 */
static __always_inline int
mpa_tx_build(struct page_frag *pf, gfp_t gfp, const struct mpa_fpdu_layout *lo,
	     struct iov_iter *from, bool crc_on, struct bio_vec *bv)
{
	u32 skew;
	int ret;

	/*
	 * A span that a page may lack room for at its largest skew (over
	 * loopback's segments): no need to trade the fragment's page in.
	 */
	if (lo->span + MPA_TX_ALIGN - 1 > MPA_FRAG_SIZE)
		return -ENOMEM;
	if (!mpa_frag_refill(lo->span + MPA_TX_ALIGN - 1, pf, gfp))
		return -ENOMEM;
	skew = mpa_tx_skew(lo, pf->offset);
	if (pf->size - pf->offset < skew + lo->span)
		return -ENOMEM;
	ret = mpa_tx_fill_linear(lo, page_address(pf->page) + pf->offset + skew,
				 from, crc_on);
	if (ret)
		return ret;
	bvec_set_page(bv, pf->page, lo->span, pf->offset + skew);
	pf->offset += skew + lo->span;
	return 0;
}

/*
 * Queue the FPDU of layout @lo whose whole wire image is @bv as a record,
 * TCP having taken its first @took octets already (and charged them).
 * Return: 0, or a negative errno with nothing queued.
 */
static int mpa_tx_queue_image(struct mpa_conn *c,
			      const struct mpa_fpdu_layout *lo,
			      const struct bio_vec *bv, u32 took)
{
	struct mpa_tx_rec *r = mpa_tx_rec_new(c, lo->ulpdu_len);
	int ret;

	if (!r)
		return -ENOMEM;
	ret = mpa_tx_rec_page(c, r, bv->bv_page, bv->bv_offset, lo->span);
	if (ret) {
		mpa_tx_rec_free(c, r);
		return ret;
	}
	mpa_tx_rec_queue(c, r, lo->ulpdu_len, took);
	return 0;
}

/*
 * Could an FPDU of layout @lo go to TCP now, without a record? When
 * nothing waits in MPA's queue, it is no longer than a segment, and TCP
 * takes its page by reference. A TCP that copies (mpa_tcp_splices())
 * copies into the task's page fragment, where an FPDU built without a
 * reference of its own may lie (mpa_tx_direct()): TCP could reuse the
 * fragment's page under it, or drop the page before it copies. And a
 * run, handed to TCP from softirq (mpa_tx_run_kick()), would be copied
 * into the fragment of whatever task that softirq interrupted. Records
 * hold their pages, and are pushed from process context.
 */
static bool mpa_tx_may_hand(const struct mpa_conn *c,
			    const struct mpa_fpdu_layout *lo)
{
	return !mpa_tx_pending(c) && !c->tx_held && c->tx_sent == c->tx_len &&
	       mpa_tx_fits_segment(c, lo) &&
	       mpa_tcp_splices(c->sk);
}

/* May it go to TCP straight? Also not while a run waits (see below). */
static bool mpa_tx_direct_ok(const struct mpa_conn *c,
			     const struct mpa_fpdu_layout *lo)
{
	return !c->tx_run.bv_len && mpa_tx_may_hand(c, lo);
}

/*
 * What TCP charges for the head of a new skb (tcp_stream_alloc_skb(): its
 * truesize, about 1 KiB on x86-64), rounded up.
 */
#define MPA_TX_SKB_MEM		SZ_2K

/*
 * Will TCP take all of an FPDU of @len wire octets, or none of it? At its
 * memory limits (tcp_mem, the memory cgroup) TCP refuses a new skb whole,
 * but octets in part: tcp_wmem_schedule() takes what sk_forward_alloc has
 * left, and MPA, refused the same memory, could not keep the rest
 * (mpa_tx_hand()). So reserve the memory first, unless TCP would force
 * it anyway (its progress guarantee: up to tcp_wmem[0] queued, the FPDU
 * and a new skb's head included).
 */
static __always_inline bool mpa_tx_takes_whole(struct sock *sk, u32 len)
{
	struct sk_buff *tail = tcp_write_queue_tail(sk);

	len += MPA_TX_SKB_MEM;
	/*
	 * A tail of a zero-copy send's pages alone (mpa_ksend()) is charged
	 * its pages in full before it grows (tcp_downgrade_zcopy_pure())
	 */
	if (tail && skb_zcopy_pure(tail))
		len += tail->truesize - SKB_TRUESIZE(skb_end_offset(tail));
	return sk_wmem_schedule(sk, len) ||
	       READ_ONCE(sk->sk_wmem_queued) + len <=
	       READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_wmem[0]);
}

/*
 * May MPA hand TCP now, from its queue or its run, whole FPDUs of @len wire
 * octets that fit a segment? MPA's charge for them goes only once TCP has
 * taken them, so TCP needs memory of its own for them: at its limits it
 * would take what sk_forward_alloc has left, the head of an FPDU, and send
 * that head in a segment of its own (R-4.5-5). So reserve the memory
 * first (mpa_tx_takes_whole()); failing that, wait for the next ACK,
 * which frees memory and calls sk_write_space() (SOCK_NOSPACE). With
 * TCP's queues empty no ACK comes: hand them anyway, and TCP takes what
 * its progress guarantee lets it. So too when @closing (mpa_tx_flush()):
 * everything goes to TCP then, whole or not.
 * @c: the connection, its queued octets uncounted (mpa_tx_uncount())
 */
static bool mpa_tx_hand_whole(struct mpa_conn *c, u32 len, bool closing)
{
	struct sock *sk = c->sk;

	if (closing || mpa_tx_takes_whole(sk, len) ||
	    tcp_rtx_and_write_queues_empty(sk))
		return true;
	if (sk->sk_socket)
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	return false;
}

/*
 * TCP has the head of an FPDU whose rest MPA cannot keep: the stream
 * cannot go on, and the connection is reset (mpa_conn_abort()). The send
 * fails with -ECONNRESET, never -ENOBUFS, which would have
 * mpa_tx_sendmsg() wait for memory and try again.
 */
static int mpa_tx_abort(struct mpa_conn *c)
{
	mpa_conn_abort(c);
	return -ECONNRESET;
}

/*
 * Hand TCP the FPDU of layout @lo whose whole wire image is @bv, when
 * mpa_tx_direct_ok(). TCP puts it whole in one skb (mpa_tx_align()) or,
 * lacking memory, takes none of it (mpa_tx_takes_whole()). What TCP did
 * not take becomes a queued record, as any FPDU TCP cannot take now. A
 * TCP that refuses with its queues empty calls sk_write_space() before
 * the record is queued: the callers push it right after
 * (mpa_tx_sendmsg(), mpa_ksend()), and that push, refused too, arms the
 * retry timer.
 *
 * @from: the caller's iterator, moved back over the ULPDU when nothing is
 * accepted (the caller may try again, or report); NULL: the caller's own
 * business.
 *
 * Return: 0 when the FPDU is accepted (taken by TCP, or queued), or a
 * negative errno.
 */
static __always_inline int mpa_tx_hand(struct mpa_conn *c,
				       const struct mpa_fpdu_layout *lo,
				       struct bio_vec *bv,
				       struct iov_iter *from)
{
	struct sock *sk = c->sk;
	struct msghdr msg = {};
	int took, ret;

	took = 0;
	if (mpa_tx_takes_whole(sk, lo->span)) {
		mpa_tx_align(c, lo->span, NULL, false);
		msg.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT | MSG_NOSIGNAL;
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, 1, lo->span);
		took = mpa_tcp_sendmsg(sk, &msg, lo->span);
	}
	if (took == lo->span) {
		mpa_tx_sent(c, lo);
		c->tx_pos += lo->span;
		return 0;
	}

	took = max(took, 0);
	ret = mpa_tx_queue_image(c, lo, bv, took);
	if (!ret)
		return 0;
	if (!took) {
		if (from)
			iov_iter_revert(from, lo->ulpdu_len);
		return ret;
	}
	/*
	 * TCP has the FPDU's head (it cut the FPDU where mpa_tx_align() did
	 * not expect: an MSS of its own, ambiguity A13) and MPA no record
	 * for its tail; the charge itself finds what mpa_tx_takes_whole()
	 * reserved. The peer learns with a reset that the stream ends there.
	 */
	return mpa_tx_abort(c);
}

/*
 * The common case of a whole ULPDU sent when nothing waits in MPA, its FPDU
 * no longer than a segment: its wire image is built straight in the
 * socket's page fragment and handed to TCP, without a record
 * (mpa_tx_hand()).
 *
 * Return: 1 when the FPDU is accepted (taken by TCP, or queued), 0 when
 * this path does not apply (nothing done), or a negative errno with
 * nothing accepted.
 */
static int mpa_tx_direct(struct mpa_conn *c, struct iov_iter *from, u32 len)
{
	struct sock *sk = c->sk;
	struct mpa_fpdu_layout lo;
	struct bio_vec bv;
	int ret;

	mpa_fpdu_layout(&lo, c->tx_pos, c->params.tx_markers, len);
	if (!mpa_tx_direct_ok(c, &lo))
		return 0;
	ret = mpa_tx_build(sk_page_frag(sk), sk->sk_allocation, &lo, from,
			   mpa_tx_crc_on(c), &bv);
	if (ret == -ENOMEM)
		return 0;	/* mpa_tx_one() reports a lack of memory */
	if (ret)
		return ret;
	ret = mpa_tx_hand(c, &lo, &bv, from);
	return ret ?: 1;
}

/*
 * The run: whole FPDUs that TCP would only hold now, kept back by MPA
 * instead and handed to TCP in one call once TCP would send them.
 *
 * With Nagle's algorithm on, TCP keeps a partial segment back while a
 * small segment it sent is not acknowledged (Minshall's variant,
 * tcp_nagle_check()), and sends what it holds when the ACK comes. A
 * sender of small ULPDUs that is ahead of the wire hands TCP one FPDU a
 * call, each to be held: the call, TCP's splice of the pages and its
 * check whether it may send now are paid per FPDU. In that state MPA
 * keeps the FPDUs mpa_tx_prepare() built, which lie back to back in the
 * task's page fragment, as one range (&mpa_conn.tx_run), and hands it to
 * TCP when the ACK comes (mpa_tx_run_kick(), from sk_write_space() as
 * TCP calls it after processing the ACK), where TCP would have sent them
 * too: nothing goes out later than it would have. A run starts only when
 * TCP's write queue is empty, so that the ACK's own push has nothing of
 * ours to send first and then hold the run behind it.
 *
 * A run never grows past one segment (the MSS), and goes to TCP at once
 * when it comes to one, as TCP sends a full segment at once: it goes to
 * TCP like one FPDU of its length, placed by mpa_tx_align(), so no FPDU
 * in it crosses a segment. It is charged to the send buffer and to TCP's memory
 * accounting as queued FPDUs are and holds a reference on its page for
 * each FPDU in it. Nothing overtakes it: while it waits no FPDU goes to
 * TCP straight (mpa_tx_direct_ok()), and mpa_tx_push() hands it to TCP
 * before the queue.
 */

/* Would TCP hold back a partial segment handed to it now, until an ACK? */
static bool mpa_tx_nagle_holds(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	/* TCP_NODELAY, TCP_CORK and pushes change nonagle: no run then */
	return !tp->nonagle && tcp_write_queue_empty(sk) && tp->packets_out &&
	       after(tp->snd_sml, tp->snd_una) &&
	       !after(tp->snd_sml, tp->snd_nxt);
}

/* The run is all with TCP, or dropped: its charge and references go. */
static void mpa_tx_run_end(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	sk_wmem_queued_add(sk, -(int)c->tx_run.bv_len);
	sk_mem_uncharge(sk, c->tx_run.bv_len);
	folio_put_refs(page_folio(c->tx_run.bv_page), c->tx_run_fpdus);
	c->tx_run.bv_len = 0;
	c->tx_run_fpdus = 0;
	c->tx_run_octets = 0;
	c->tx_run_cut = false;
}

/*
 * Hand the run to TCP, as far as TCP takes it now. What it leaves stays
 * the run, cut: nothing joins it, and it goes on where TCP stopped,
 * without mpa_tx_align(). TCP lacking room, or the memory to take the run
 * whole (mpa_tx_hand_whole(); not when @closing), the next ACK brings the
 * run back here (mpa_tx_run_kick()); with nothing in flight only time does
 * (as in mpa_tx_push()).
 * Return: 0 once TCP has all of it, -EAGAIN for want of room, -EPIPE when
 * TCP no longer sends (mpa_tcp_sends()), or TCP's error; the rest of the
 * run is kept.
 */
static int mpa_tx_run_flush(struct mpa_conn *c, bool closing)
{
	struct bio_vec *run = &c->tx_run;
	u32 len = run->bv_len, queued;
	struct sock *sk = c->sk;
	struct msghdr msg = {};
	int took;

	if (!len)
		return 0;
	if (!mpa_tcp_sends(sk))
		return -EPIPE;
	queued = mpa_tx_uncount(c, len);
	if (!c->tx_run_cut) {
		if (!mpa_tx_hand_whole(c, len, closing)) {
			mpa_tx_recount(c, queued);
			return -EAGAIN;
		}
		mpa_tx_align(c, len, NULL, false);
	}
	msg.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT | MSG_NOSIGNAL;
	iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, run, 1, len);
	took = mpa_tcp_sendmsg(sk, &msg, len);
	mpa_tx_recount(c, queued);
	if (took == len) {
		c->stats.tx_fpdus += c->tx_run_fpdus;
		c->stats.tx_octets += c->tx_run_octets;
		mpa_tx_run_end(c);
		return 0;
	}
	if (took > 0) {
		sk_wmem_queued_add(sk, -took);
		sk_mem_uncharge(sk, took);
		run->bv_offset += took;
		run->bv_len -= took;
		c->tx_run_cut = true;
	}
	if (took > 0 || took == -EAGAIN) {
		if (sk->sk_socket)
			set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		mpa_tx_retry_later(c);
		return -EAGAIN;
	}
	return took;
}

/*
 * Keep the FPDU @pre in the run, or start one with it, when TCP would
 * hold it back now (mpa_tx_nagle_holds()) and it could go to TCP at once
 * otherwise (mpa_tx_may_hand()). A run it cannot join goes to TCP first;
 * a run it fills to a whole segment goes to TCP with it.
 * Return: true when @pre joined the run, with its page reference.
 */
static bool mpa_tx_run_add(struct mpa_conn *c, struct mpa_tx_pre *pre)
{
	struct bio_vec *run = &c->tx_run;
	struct sock *sk = c->sk;
	u32 span = pre->lo.span, mss = READ_ONCE(tcp_sk(sk)->mss_cache);

	if (!run->bv_len) {
		/* a run of one FPDU a segment would save nothing */
		if (2 * span > mss || !mpa_tx_nagle_holds(sk) ||
		    !sk->sk_socket || !mpa_tx_may_hand(c, &pre->lo))
			return false;
	} else if (c->tx_run_cut || run->bv_page != pre->bv.bv_page ||
		   run->bv_offset + run->bv_len != pre->bv.bv_offset ||
		   run->bv_len + span > mss || !mpa_tx_may_hand(c, &pre->lo)) {
		mpa_tx_run_flush(c, false);
		return false;
	}
	if (!sk_wmem_schedule(sk, span)) {
		mpa_tx_run_flush(c, false);
		return false;
	}
	sk_mem_charge(sk, span);
	sk_wmem_queued_add(sk, span);
	if (run->bv_len)
		run->bv_len += span;
	else
		*run = pre->bv;
	c->tx_run_fpdus++;
	c->tx_run_octets += pre->lo.ulpdu_len;
	c->tx_pos += span;
	/* TCP calls sk_write_space() after an ACK only with this set */
	set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
	/*
	 * A whole segment: TCP would send it now, whatever Nagle's algorithm
	 * holds back (tcp_nagle_test()), and so the run goes now
	 */
	if (run->bv_len >= mss)
		mpa_tx_run_flush(c, false);
	return true;
}

/**
 * mpa_tx_run_kick() - TCP processed an ACK: hand it the run
 * @c: the connection, in sk_write_space(): socket owned (the backlog) or
 *	bh-locked (softirq)
 *
 * TCP sends what it held right before it calls sk_write_space(); the run
 * goes the same way now. In softirq TCP's allocations must not sleep, as
 * when kTLS's device mode pushes a record from here.
 */
void mpa_tx_run_kick(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	gfp_t gfp = sk->sk_allocation;

	/*
	 * The route changed since the run formed, and TCP would copy it into
	 * the page fragment of the task this softirq interrupted: the
	 * connection's work hands it over instead (mpa_tx_may_hand())
	 */
	if (!mpa_tcp_splices(sk)) {
		mpa_conn_schedule(c);
		return;
	}

	/* WRITE_ONCE: mpa_tx_prepare() reads it without the socket lock */
	WRITE_ONCE(sk->sk_allocation, GFP_ATOMIC);
	mpa_tx_run_flush(c, false);
	WRITE_ONCE(sk->sk_allocation, gfp);
}

/*
 * The copy path: with CRCs and Markers off, an FPDU larger than a segment
 * goes to TCP as its ULPDU_Length, the caller's octets and its PAD and
 * zero CRC field (R-4.1-3, ambiguity A10), three calls in which TCP
 * copies each into its own page fragment, as it copies a plain send. Its
 * segments need no alignment (it cannot have one, requirements A11), and
 * nothing needs the wire image in MPA's pages: TCP's copy fills an skb
 * fragment up to its page fragment's size, where pages spliced from MPA's
 * image take a fragment for each 4 KiB page (iov_iter_extract_pages()),
 * and then cost TCP and the receiver per fragment.
 */
static bool mpa_tx_copy_ok(const struct mpa_conn *c,
			   const struct mpa_fpdu_layout *lo)
{
	return !mpa_tx_crc_on(c) && !mpa_fpdu_has_markers(lo) &&
	       !mpa_tx_fits_segment(c, lo) && !mpa_tx_pending(c) &&
	       !c->tx_held && c->tx_sent == c->tx_len && !c->tx_run.bv_len;
}

/* Have TCP copy up to @len octets of @from; return how many it took. */
static u32 mpa_tx_copy_part(struct sock *sk, struct iov_iter *from, u32 len,
			    bool more)
{
	struct msghdr msg = {
		.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL | (more ? MSG_MORE : 0),
	};
	int took;

	msg.msg_iter = *from;
	iov_iter_truncate(&msg.msg_iter, len);
	took = mpa_tcp_sendmsg(sk, &msg, len);
	if (took <= 0)
		return 0;
	iov_iter_advance(from, took);
	return took;
}

static u32 mpa_tx_copy_kvec(struct sock *sk, void *buf, u32 len, bool more)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter it;

	iov_iter_kvec(&it, ITER_SOURCE, &kv, 1, len);
	return mpa_tx_copy_part(sk, &it, len, more);
}

/*
 * Send the ULPDU of @len octets from @from by the copy path, when
 * mpa_tx_copy_ok(). Its memory is reserved first (mpa_tx_takes_whole()),
 * so that TCP seldom stops part way for want of it (an skb head more than
 * reserved may be needed): without, the record path queues the FPDU
 * whole, charged, or waits for memory. TCP copies what its send buffer
 * has room for; the rest of a started FPDU becomes a queued record, as
 * any FPDU TCP cannot take now, charged to a socket that is over its send
 * buffer then (which TCP's memory limits let go on), with only the
 * octets TCP did not take copied. A buffer that faults is left to the
 * record path (which reports EFAULT with nothing sent), checked before
 * the first octet goes (the pages are touched, not pinned). An FPDU that
 * TCP has begun and MPA cannot end (its rest unmapped during the call, a
 * fatal signal while a page is faulted in again, no memory for the record
 * of the rest) resets the connection (mpa_tx_abort()).
 *
 * Return: 1 when the FPDU is accepted (taken by TCP, or its rest queued),
 * 0 when this path does not apply (nothing done), or a negative errno.
 */
static int mpa_tx_copy(struct mpa_conn *c, struct iov_iter *from, u32 len)
{
	/* PAD (at most 3 octets) and CRC field: zeroes */
	u8 head[MPA_HDR_SIZE], tail[3 + MPA_CRC_SIZE] = {};
	struct mpa_fpdu_layout lo;
	struct sock *sk = c->sk;
	struct mpa_tx_rec *r;
	u32 took, n = 0;

	mpa_fpdu_layout(&lo, c->tx_pos, c->params.tx_markers, len);
	if (!mpa_tx_copy_ok(c, &lo) || fault_in_iov_iter_readable(from, len) ||
	    !mpa_tx_takes_whole(sk, lo.span))
		return 0;
	mpa_tx_align(c, lo.span, NULL, true);
	put_unaligned_be16(len, head);
	took = mpa_tx_copy_kvec(sk, head, MPA_HDR_SIZE, true);
	if (!took)
		return 0;	/* nothing went: the record path */
	if (took == MPA_HDR_SIZE) {
		n = mpa_tx_copy_part(sk, from, len, true);
		took += n;
		if (n == len)
			took += mpa_tx_copy_kvec(sk, tail, lo.pad + MPA_CRC_SIZE,
						 false);
	}
	if (took == lo.span) {
		mpa_tx_sent(c, &lo);
		c->tx_pos += lo.span;
		return 1;
	}

	/* The rest as a record, TCP having the head */
	r = mpa_tx_rec_framed(c, from, len, n);
	if (IS_ERR(r))
		return mpa_tx_abort(c);
	mpa_tx_rec_queue(c, r, len, took);
	return 1;
}

/* Frame a whole ULPDU of @len octets in one pass and queue it. */
static int mpa_tx_one(struct mpa_conn *c, struct iov_iter *from, u32 len)
{
	struct mpa_tx_rec *r;
	int ret;

	ret = mpa_tx_direct(c, from, len);
	if (!ret)
		ret = mpa_tx_copy(c, from, len);
	if (ret)
		return min(ret, 0);
	r = mpa_tx_rec_framed(c, from, len, 0);
	if (IS_ERR(r))
		return PTR_ERR(r);
	mpa_tx_rec_queue(c, r, len, 0);
	return 0;
}

/* Feed @len octets of a page range to the CRC register. */
static u32 mpa_tx_page_crc(struct page *page, u32 off, u32 len, u32 crc)
{
	while (len) {
		struct page *p = page + off / PAGE_SIZE;
		u32 o = off % PAGE_SIZE, n = min_t(u32, len, PAGE_SIZE - o);
		u8 *va = kmap_local_page(p);

		crc = mpa_crc_update(crc, va + o, n);
		kunmap_local(va);
		off += n;
		len -= n;
	}
	return crc;
}

/*
 * Build @r referencing the ULPDU's pages, with Markers, ULPDU_Length, PAD
 * and CRC in our own page fragments. Return: -E2BIG when it takes more
 * pieces than a record holds.
 */
static int mpa_tx_rec_pages(struct mpa_conn *c, struct mpa_tx_rec *r,
			    const struct bio_vec *bv, unsigned int nr_bv)
{
	const struct mpa_fpdu_layout *lo = &r->lo;
	u32 crc = mpa_crc_init(), boff = 0;
	bool crc_on = mpa_tx_crc_on(c);
	struct mpa_piece_iter it;
	u8 tmp[MPA_MARKER_SIZE];
	struct mpa_piece p;
	unsigned int i = 0;
	int ret;

	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p)) {
		u32 left = p.len;

		if (p.type != MPA_PIECE_ULPDU) {
			/* our own octets: a fragment of our page_frag */
			if (r->nr_chunks == MPA_TX_CHUNKS)
				return -E2BIG;
			ret = mpa_tx_rec_grow(c, r, r->len + p.len);
			if (ret)
				return r->nr_chunks == MPA_TX_CHUNKS ? -E2BIG :
				       ret;
			if (p.type == MPA_PIECE_CRC) {
				mpa_crc_put(tmp, crc_on ? mpa_crc_final(crc) : 0);
				mpa_tx_rec_write(r, p.off, tmp, p.len, NULL);
			} else {
				mpa_piece_fill(lo, &p, tmp);
				mpa_tx_rec_write(r, p.off, tmp, p.len,
						 crc_on ? &crc : NULL);
			}
			continue;
		}
		while (left) {
			u32 n;

			while (i < nr_bv && boff == bv[i].bv_len) {
				i++;
				boff = 0;
			}
			if (i == nr_bv)
				return -EINVAL;
			n = min(left, bv[i].bv_len - boff);
			ret = mpa_tx_rec_page(c, r, bv[i].bv_page,
					      bv[i].bv_offset + boff, n);
			if (ret)
				return ret;
			if (crc_on)
				crc = mpa_tx_page_crc(bv[i].bv_page,
						      bv[i].bv_offset + boff,
						      n, crc);
			boff += n;
			left -= n;
		}
	}
	return 0;
}

/**
 * mpa_tx_pages() - queue a ULPDU made of the consumer's pages
 * @c: the connection, socket locked, in Full Operation
 * @bv: the pages
 * @nr_bv: how many entries
 * @len: ULPDU length, 1..64768, at most what @bv holds
 * @uarg: completion, with one reference for us; TCP's skbs take their own.
 *	NULL: copy the pages now.
 *
 * The pages go to TCP without a copy, their CRC computed in place. When
 * Markers would cut the ULPDU into more pieces than a record holds, or
 * an FPDU that fits a segment would take more fragments than an skb
 * holds (mpa_tx_rec_one_skb()), it is copied instead (and @uarg completes
 * as soon as it is).
 *
 * Return: 0 when queued, -EINVAL, -ENOMEM, -ENOBUFS (TCP's memory limits).
 */
int mpa_tx_pages(struct mpa_conn *c, const struct bio_vec *bv,
		 unsigned int nr_bv, u32 len, struct ubuf_info *uarg)
{
	struct mpa_tx_rec *r;
	struct iov_iter from;
	int ret = -E2BIG;

	if (!uarg)
		goto copy;
	r = mpa_tx_rec_new(c, len);
	if (!r)
		return -ENOMEM;
	ret = mpa_tx_rec_pages(c, r, bv, nr_bv);
	/* TCP would cut an FPDU that fits a segment where its skb is full */
	if (!ret && mpa_tx_fits_segment(c, &r->lo) &&
	    !mpa_tx_rec_one_skb(r, true))
		ret = -E2BIG;
	if (!ret) {
		r->uarg = uarg;
		mpa_tx_rec_queue(c, r, len, 0);
		return 0;
	}
	mpa_tx_rec_free(c, r);
	if (ret != -E2BIG)
		return ret;
copy:
	iov_iter_bvec(&from, ITER_SOURCE, bv, nr_bv, len);
	ret = mpa_tx_one(c, &from, len);
	if (!ret)
		net_zcopy_put(uarg);
	return ret;
}

/**
 * mpa_tx_pending() - are FPDUs waiting in MPA for TCP?
 * @c: the connection
 *
 * Return: true if MPA's queue holds FPDUs TCP has not (fully) taken.
 */
bool mpa_tx_pending(const struct mpa_conn *c)
{
	return !list_empty(&c->tx_queue);
}

/*
 * mpa_tx_push(); @closing: for mpa_tx_flush(), an FPDU goes to TCP even when
 * TCP may take only its head (mpa_tx_hand_whole())
 */
static int mpa_tx_push_all(struct mpa_conn *c, bool closing)
{
	struct sock *sk = c->sk;
	struct mpa_tx_rec *r;
	u32 charged;
	int ret = 0, err;

	if (c->tx_held || c->tx_sent != c->tx_len)
		return 0;
	/* the run first: a record queued meanwhile is behind it */
	ret = mpa_tx_run_flush(c, closing);
	if (ret)
		return ret == -EAGAIN ? 0 : ret;
	if (!mpa_tx_pending(c))
		return 0;
	if (!mpa_tcp_sends(sk))
		return -EPIPE;

	charged = mpa_tx_uncount(c, 0);
	/* once for all the records, rather than in mpa_tcp_sendmsg() */
	err = mpa_tcp_err_lift(sk);

	while ((r = list_first_entry_or_null(&c->tx_queue, struct mpa_tx_rec,
					     list))) {
		struct mpa_tx_rec *next;
		struct bio_vec bv[MPA_TX_CHUNKS];
		struct msghdr msg = {};
		u32 skip = r->sent, left = r->len - r->sent;
		unsigned int i, n = 0;

		for (i = 0; i < r->nr_chunks; i++) {
			struct mpa_tx_chunk *ch = &r->chunks[i];

			if (skip >= ch->len) {
				skip -= ch->len;
				continue;
			}
			bvec_set_page(&bv[n++], ch->page, ch->len - skip,
				      ch->off + skip);
			skip = 0;
		}
		if (!r->sent) {
			/* an FPDU larger than a segment is cut anyway (A11) */
			if (mpa_tx_fits_segment(c, &r->lo) &&
			    !mpa_tx_hand_whole(c, r->len, closing))
				break;
			mpa_tx_align(c, r->len, r, false);
		}
		msg.msg_flags = MSG_SPLICE_PAGES | MSG_DONTWAIT | MSG_NOSIGNAL;
		if (r->uarg) {
			/* TCP links its skbs to the completion */
			msg.msg_flags ^= MSG_SPLICE_PAGES | MSG_ZEROCOPY;
			msg.msg_ubuf = r->uarg;
		}
		/*
		 * More to come at once, unless the next record may have to
		 * wait (mpa_tx_hand_whole()): TCP would hold this one's last
		 * segment back for it until its probe timer
		 */
		next = list_is_last(&r->list, &c->tx_queue) ? NULL :
		       list_next_entry(r, list);
		if (next && (closing || !mpa_tx_fits_segment(c, &next->lo)))
			msg.msg_flags |= MSG_MORE;
		iov_iter_bvec(&msg.msg_iter, ITER_SOURCE, bv, n, left);
		ret = mpa_tcp_sendmsg(sk, &msg, left);
		if (ret <= 0)
			break;
		/*
		 * TCP charged what it took to its skbs: drop our charge of it
		 * (a record is charged for all it has left). Its wmem_queued
		 * part is out already.
		 */
		r->sent += ret;
		r->charged -= ret;
		c->tx_charged -= ret;
		charged -= ret;
		sk_mem_uncharge(sk, ret);
		if (r->sent < r->len) {
			ret = 0;	/* no room for the rest now */
			break;
		}
		mpa_tx_sent(c, &r->lo);
		list_del(&r->list);
		mpa_tx_rec_free(c, r);
		ret = 0;
	}
	mpa_tcp_err_put(sk, err);
	mpa_tx_recount(c, charged);
	if (ret && ret != -EAGAIN)
		return ret;
	/* TCP left some */
	if (mpa_tx_pending(c))
		mpa_tx_retry_later(c);
	return 0;
}

/**
 * mpa_tx_push() - hand queued FPDUs to TCP, as far as it takes them now
 * @c: the connection, socket locked, process context
 *
 * Return: 0 (TCP took all, or has no room now), -EPIPE when TCP no longer
 * sends (mpa_tcp_sends(): the socket's error is left for its reader), or
 * TCP's error.
 */
int mpa_tx_push(struct mpa_conn *c)
{
	return mpa_tx_push_all(c, false);
}

/**
 * mpa_tx_room() - may a new ULPDU be queued?
 * @c: the connection
 *
 * MPA's own queue counts in sk_wmem_queued, so this bounds it too.
 *
 * Return: true if the send buffer has room.
 */
bool mpa_tx_room(const struct mpa_conn *c)
{
	return sk_stream_memory_free(c->sk);
}

/* Has TCP taken everything that may go out now? */
static bool mpa_tx_drained(const struct mpa_conn *c)
{
	return !mpa_tx_pending(c) || READ_ONCE(c->tx_held);
}

/*
 * Wait until @done, pushing meanwhile. ACKs make room in TCP (its
 * sk_write_space, and then the connection's work, push and wake us); the
 * first valid FPDU releases a Responder's held FPDUs (the work again).
 */
static int mpa_tx_wait(struct mpa_conn *c, long *timeo,
		       bool (*done)(const struct mpa_conn *c))
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = c->sk;
	int ret = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	for (;;) {
		if (sk->sk_err || (sk->sk_shutdown & SEND_SHUTDOWN)) {
			ret = -EPIPE;
			break;
		}
		if (!mpa_conn_full(c)) {
			ret = -ENOTCONN;	/* Full Operation ended */
			break;
		}
		ret = -mpa_conn_held_for_good(c);
		if (ret)
			break;
		mpa_tx_push(c);
		if (done(c))
			break;
		/* sk_write_space() is called once TCP frees room */
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		if (!*timeo) {
			ret = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			ret = sock_intr_errno(*timeo);
			break;
		}
		WRITE_ONCE(c->tx_waiting, true);
		sk_wait_event(sk, timeo, READ_ONCE(sk->sk_err) ||
			      (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN) ||
			      mpa_conn_held_for_good(c) || done(c), &wait);
		WRITE_ONCE(c->tx_waiting, false);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return ret;
}

/**
 * mpa_tx_prepare() - build a whole ULPDU's FPDU before the socket is locked
 * @c: the connection, in Full Operation; socket not locked
 * @msg: the caller's message
 * @size: octets in it: one whole ULPDU
 * @pre: where to keep the FPDU
 *
 * Without Markers an FPDU's wire image does not depend on where it goes in
 * the stream, so the two passes over its octets, the copy from the caller
 * and the CRC, can be made before the socket is locked, in the task's own
 * page fragment; mpa_tx_sendmsg() then only hands it to TCP. As long as a
 * sender owns the socket, TCP leaves the ACKs that come in to its backlog,
 * and the sender processes them when it releases the socket, sending
 * then what they let out. With the lock held only for that hand-over, as
 * TCP's own sendmsg holds it only for its copy, they are processed where
 * they arrive: on the veth and loopback paths, the receiver's CPU.
 *
 * This is a shortcut for the FPDUs that fit in a segment (those that go
 * to TCP without a record, mpa_tx_direct()): with Markers, MSG_MORE, a
 * larger ULPDU, a socket without a task fragment (sk_use_task_frag), a
 * full send buffer or a lack of memory it declines, and mpa_tx_sendmsg()
 * does all of the work.
 *
 * Return: true if @pre holds the FPDU, the caller's iterator moved past
 * the ULPDU; false with nothing done.
 */
static bool mpa_tx_prepare(struct mpa_conn *c, struct msghdr *msg,
			   size_t size, struct mpa_tx_pre *pre)
{
	struct sock *sk = c->sk;
	size_t left;

	/*
	 * Without the socket lock: the parameters are read only once Full
	 * Operation is seen (pairs with mpa_enter_full()), and
	 * mpa_tx_sendmsg() checks the rest again under the lock, room
	 * included (mpa_tx_room()): a full send buffer is only a reason not
	 * to build here; TCP's own part of that check (TCP_NOTSENT_LOWAT)
	 * is left to the lock, not made twice a send.
	 */
	if (smp_load_acquire(&c->state) != MPA_STATE_FULL)
		return false;
	if ((msg->msg_flags & (MSG_MORE | MPA_TX_REFUSED)) ||
	    !size || size > MPA_MAX_ULPDU || c->params.tx_markers ||
	    !sk->sk_use_task_frag || READ_ONCE(c->tx_open) ||
	    READ_ONCE(sk->sk_wmem_queued) >= READ_ONCE(sk->sk_sndbuf))
		return false;
	mpa_fpdu_layout_plain(&pre->lo, 0, size);
	if (!mpa_tx_fits_segment(c, &pre->lo))
		return false;
	left = iov_iter_count(&msg->msg_iter);
	/* GFP_ATOMIC for a moment while the ACK hands TCP a run */
	if (mpa_tx_build(&current->task_frag, READ_ONCE(sk->sk_allocation),
			 &pre->lo, &msg->msg_iter, mpa_tx_crc_on(c), &pre->bv)) {
		/* mpa_tx_sendmsg() copies again, and reports a fault */
		iov_iter_revert(&msg->msg_iter,
				left - iov_iter_count(&msg->msg_iter));
		return false;
	}
	get_page(pre->bv.bv_page);
	return true;
}

/* @pre is not sent: drop it, and give the caller its ULPDU back. */
static void mpa_tx_pre_drop(struct msghdr *msg, struct mpa_tx_pre *pre)
{
	put_page(pre->bv.bv_page);
	iov_iter_revert(&msg->msg_iter, pre->lo.ulpdu_len);
}

/*
 * Send, keep in the run or queue the FPDU mpa_tx_prepare() built, at the
 * current stream position. Return: 0 (our reference on its page is
 * dropped, or the run's), or a negative errno with nothing accepted (@pre
 * is kept).
 */
static __always_inline int mpa_tx_pre_send(struct mpa_conn *c,
					   struct mpa_tx_pre *pre)
{
	int ret;

	if (mpa_tx_run_add(c, pre))
		return 0;
	if (mpa_tx_direct_ok(c, &pre->lo))
		ret = mpa_tx_hand(c, &pre->lo, &pre->bv, NULL);
	else
		ret = mpa_tx_queue_image(c, &pre->lo, &pre->bv, 0);
	if (!ret)
		put_page(pre->bv.bv_page);
	return ret;
}

/**
 * mpa_tx_sendmsg() - send one ULPDU, or a part of one with MSG_MORE
 * @c: the connection, socket locked, in Full Operation
 * @msg: the data
 * @size: its length
 * @pre: its FPDU, if mpa_tx_prepare() built it; else NULL
 *
 * Return: @size once the ULPDU (part) is framed and queued, or a negative
 * errno with nothing queued (see Documentation/networking/mpa.rst);
 * -ENOTCONN once the connection has left Full Operation meanwhile (the
 * Initiator refused the Reply, or the rest of a Responder's Reply could
 * not go).
 */
static __always_inline int mpa_tx_sendmsg(struct mpa_conn *c,
					  struct msghdr *msg, size_t size,
					  struct mpa_tx_pre *pre)
{
	struct sock *sk = c->sk;
	bool more = msg->msg_flags & MSG_MORE;
	long timeo = sock_sndtimeo(sk, msg->msg_flags & MSG_DONTWAIT);
	u32 have = c->tx_open ? c->tx_open->ulpdu_len : 0;
	int ret;

	if (!mpa_conn_full(c)) {
		/* Full Operation ended meanwhile (mpa_sendmsg() goes on) */
		ret = -ENOTCONN;
		goto out;
	}
	/*
	 * A socket that can no longer send says so first, whatever the
	 * call, as TCP does: EPIPE after its own shutdown(SHUT_WR) (checked
	 * again below, after any wait)
	 */
	if (sk->sk_shutdown & SEND_SHUTDOWN) {
		ret = -EPIPE;
		goto error;
	}
	if (msg->msg_flags & MPA_TX_REFUSED)
		return -EOPNOTSUPP;
	if (size > MPA_MAX_ULPDU - have) {
		ret = -EMSGSIZE;	/* requirements A11 */
		goto out;		/* @pre too, if one opened since */
	}
	if (!size && !have)
		return more ? 0 : -EINVAL;

	/* Room first, so that a failure leaves nothing queued. */
	if (!c->tx_open && !mpa_tx_room(c)) {
		ret = mpa_tx_wait(c, &timeo, mpa_tx_room);
		if (ret)
			goto error;
	}
	/*
	 * As TCP's sendmsg: the error (sk_stream_error()), or EPIPE should a
	 * reader of SO_ERROR, which takes no lock, have taken it meanwhile
	 */
	if (sk->sk_err) {
		ret = -EPIPE;
		goto error;
	}
	if ((sk->sk_shutdown & SEND_SHUTDOWN) ||
	    !((1 << sk->sk_state) & (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))) {
		ret = -EPIPE;
		goto error;
	}
	/* EPIPE after the peer's FIN: SIGPIPE too, as for the lines above */
	ret = -mpa_conn_held_for_good(c);
	if (ret)
		goto error;

	for (;;) {
		/*
		 * Another sender may have opened a ULPDU (MSG_MORE is the
		 * socket's) since mpa_tx_prepare(), or during a wait above
		 * or below: this send joins it, as its end unless MSG_MORE,
		 * if it fits.
		 */
		if (c->tx_open) {
			if (pre) {
				mpa_tx_pre_drop(msg, pre);
				pre = NULL;
			}
			if (size > MPA_MAX_ULPDU - c->tx_open->ulpdu_len) {
				ret = -EMSGSIZE;	/* requirements A11 */
				goto out;
			}
		}
		if (pre)
			ret = mpa_tx_pre_send(c, pre);
		else if (!c->tx_open && !more)
			ret = mpa_tx_one(c, &msg->msg_iter, size);
		else
			ret = size ? mpa_tx_append(c, &msg->msg_iter, size) : 0;
		if (ret != -ENOBUFS)
			break;
		/*
		 * TCP's memory limits (tcp_mem, the memory cgroup) refused
		 * the charge; nothing was queued: wait for memory, as TCP's
		 * sendmsg does.
		 */
		mpa_tx_push(c);
		ret = sk_stream_wait_memory(sk, &timeo);
		if (ret)
			goto error;
		if (!mpa_conn_full(c)) {
			ret = -ENOTCONN;	/* see above */
			goto out;
		}
		/* the hold ended for good meanwhile (see above) */
		ret = -mpa_conn_held_for_good(c);
		if (ret)
			goto error;
	}
	if (!ret)
		pre = NULL;	/* sent or queued */
	if (!ret && !more && c->tx_open) {
		mpa_tx_close_open(c);
		if (c->tx_open)
			ret = -ENOMEM;
	}
	if (ret)
		goto out;

	/*
	 * A blocking sender waits until TCP has taken it all, as on TCP; the
	 * ULPDU is queued, so it goes out whatever happens to the wait. With
	 * no record queued, TCP has it all, or the run does, which the ACK
	 * TCP waits for sends, or it is the open ULPDU of a MSG_MORE send:
	 * nothing to push (the common case, a call saved per FPDU).
	 */
	if (!mpa_tx_pending(c))
		return size;
	if (!mpa_tx_push(c) && !mpa_tx_drained(c) && timeo)
		mpa_tx_wait(c, &timeo, mpa_tx_drained);
	return size;

error:
	ret = sk_stream_error(sk, msg->msg_flags, ret);
out:
	if (pre)
		mpa_tx_pre_drop(msg, pre);
	return ret;
}

/**
 * mpa_tx_send() - send one ULPDU, or a part of one with MSG_MORE
 * @c: the connection, in Full Operation; socket not locked
 * @msg: the data
 * @size: its length
 *
 * Builds a small ULPDU's FPDU before it takes the socket lock
 * (mpa_tx_prepare()), then frames and queues under the lock
 * (mpa_tx_sendmsg()). Both, and the helpers of the common case (a ULPDU
 * whose FPDU fits a segment and goes to TCP straight), are inlined here:
 * each call saved is a prologue, an epilogue and a return thunk per
 * send, and the sender of MULPDU-sized ULPDUs is the end that limits
 * the stream (make bench, its "sides" part).
 *
 * Return: as mpa_tx_sendmsg().
 */
int mpa_tx_send(struct mpa_conn *c, struct msghdr *msg, size_t size)
{
	struct sock *sk = c->sk;
	struct mpa_tx_pre pre;
	bool built;
	int ret;

	built = mpa_tx_prepare(c, msg, size, &pre);
	lock_sock(sk);
	ret = mpa_tx_sendmsg(c, msg, size, built ? &pre : NULL);
	release_sock(sk);
	return ret;
}

/**
 * mpa_tx_flush() - hand TCP what MPA holds, before a FIN
 * @c: the connection, socket locked, with TCP's send limits lifted by the
 *	caller (mpa_conn_flush())
 *
 * Closes an open ULPDU and pushes every queued FPDU, so that nothing
 * accepted is lost behind the FIN. A Responder's held FPDUs may never go
 * on the wire (R-7.1.2-15): they stay, for mpa_tx_release().
 */
void mpa_tx_flush(struct mpa_conn *c)
{
	if (c->tx_open)
		mpa_tx_close_open(c);
	mpa_tx_push_all(c, true);
}

/**
 * mpa_tx_unsent() - does MPA hold octets that may still go on the wire?
 * @c: the connection, socket locked
 *
 * Return: true for an open ULPDU or queued FPDUs that are not held.
 */
bool mpa_tx_unsent(const struct mpa_conn *c)
{
	return c->tx_open || c->tx_run.bv_len ||
	       (mpa_tx_pending(c) && !c->tx_held);
}

/**
 * mpa_tx_start() - Full Operation begins: nothing sent yet
 * @c: the connection
 */
void mpa_tx_start(struct mpa_conn *c)
{
	c->tx_pos = 0;
}

/**
 * mpa_tx_release() - drop whatever MPA still holds for sending
 * @c: the connection, socket locked (or no longer reachable)
 */
void mpa_tx_release(struct mpa_conn *c)
{
	struct mpa_tx_rec *r, *tmp;

	if (c->tx_run.bv_len)
		mpa_tx_run_end(c);
	if (c->tx_open) {
		mpa_tx_rec_free(c, c->tx_open);
		c->tx_open = NULL;
	}
	list_for_each_entry_safe(r, tmp, &c->tx_queue, list) {
		list_del(&r->list);
		mpa_tx_rec_free(c, r);
	}
}
