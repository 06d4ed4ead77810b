// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of how the receive path feeds the receive machine from
 * TCP's receive queue (mpa_rxq_feed() in mpa/rx.c).
 *
 * TCP's receive queue is in sequence order but its skbs may overlap: a
 * segment that starts before rcv_nxt and ends after it (a retransmission
 * cut differently from the first transmission, or a segment moved in
 * from the out-of-order queue) is queued whole, not trimmed
 * (tcp_data_queue(), tcp_ofo_queue() in 6.12). Loss, reordering and
 * duplication on the path make such queues; a clean veth never does.
 * These tests build such queues by hand and check that the machine sees
 * every octet of the stream once, in order, however the queue is cut and
 * wherever a feed starts.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "conn.h"
#include "vectors.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

#define RXQ_ULPDU	1500	/* ULPDU octets: Markers inside with M=1 */
#define RXQ_CAP		2048

/* Queue stream octets [@from, @to) as one skb, as TCP would with @isn. */
static void rxq_add(struct kunit *test, struct sk_buff_head *q, u32 isn,
		    const u8 *stream, u32 from, u32 to)
{
	struct sk_buff *skb = alloc_skb(to - from, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, stream + from, to - from);
	TCP_SKB_CB(skb)->seq = isn + from;
	TCP_SKB_CB(skb)->end_seq = isn + to;
	TCP_SKB_CB(skb)->tcp_flags = 0;
	__skb_queue_tail(q, skb);
}

static void rxq_purge(void *q)
{
	__skb_queue_purge(q);
}

/* An empty queue, purged when the test ends, however it ends */
static struct sk_buff_head *rxq_queue(struct kunit *test)
{
	struct sk_buff_head *q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, q);
	__skb_queue_head_init(q);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rxq_purge, q),
			0);
	return q;
}

struct rxq_case {
	bool markers;
	u32 isn;	/* sequence number of stream octet 0 */
};

static const struct rxq_case rxq_cases[] = {
	{ false, 1000 }, { true, 1000 },
	/* the queue across the 2^32 wrap of sequence numbers */
	{ false, 0xfffffc00 }, { true, 0xfffffc00 },
};

/*
 * One FPDU queued as two skbs, the second starting @back octets before
 * the first ends, fed in two feeds split at every octet @cut: first
 * octets [0, cut) as if only they were queued, then the rest. The machine
 * must judge the FPDU valid, with its CRC and every Marker right, having
 * been fed exactly its span.
 */
static void rxq_overlap(struct kunit *test, const struct rxq_case *rc,
			u32 back)
{
	u8 *ulpdu = kunit_kzalloc(test, RXQ_ULPDU, GFP_KERNEL);
	u8 *stream = kunit_kzalloc(test, RXQ_CAP, GFP_KERNEL);
	struct sk_buff_head *q = rxq_queue(test);
	u32 i, span, first, cut, fed;
	struct mpa_rxm m;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ulpdu);
	KUNIT_ASSERT_NOT_NULL(test, stream);
	for (i = 0; i < RXQ_ULPDU; i++)
		ulpdu[i] = i * 7 + 3;
	ret = mpa_test_encode(0, rc->markers, ulpdu, RXQ_ULPDU, stream,
			      RXQ_CAP);
	KUNIT_ASSERT_GT(test, ret, 0);
	span = ret;
	first = span / 2;

	rxq_add(test, q, rc->isn, stream, 0, first);
	rxq_add(test, q, rc->isn, stream, first - back, span);

	for (cut = 0; cut <= span; cut++) {
		KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, 0, rc->markers, true),
				0);
		fed = mpa_rxq_feed(q, rc->isn, cut, &m);
		KUNIT_ASSERT_EQ_MSG(test, fed, cut, "cut %u", cut);
		fed += mpa_rxq_feed(q, rc->isn + fed, span - fed, &m);
		KUNIT_ASSERT_EQ_MSG(test, mpa_rxm_state(&m), MPA_RXM_FPDU,
				    "M=%d overlap %u cut %u: code %u reason %u",
				    rc->markers, back, cut, m.code, m.reason);
		KUNIT_ASSERT_EQ(test, fed, span);
		KUNIT_ASSERT_EQ(test, mpa_rxm_ulpdu_len(&m), RXQ_ULPDU);
		KUNIT_ASSERT_EQ(test, mpa_rxm_span(&m), span);
	}
}

/* Overlaps of one octet, of a Marker's width, of a whole segment's worth */
static void mpa_rxq_overlap(struct kunit *test)
{
	static const u32 backs[] = { 1, 4, 100, 511 };
	u32 i, j;

	for (i = 0; i < ARRAY_SIZE(rxq_cases); i++)
		for (j = 0; j < ARRAY_SIZE(backs); j++)
			rxq_overlap(test, &rxq_cases[i], backs[j]);
}

/* Without overlap: the plain case, skbs end to end */
static void mpa_rxq_end_to_end(struct kunit *test)
{
	u32 i;

	for (i = 0; i < ARRAY_SIZE(rxq_cases); i++)
		rxq_overlap(test, &rxq_cases[i], 0);
}

/*
 * Three skbs: the second a duplicate of octets the first holds, the third
 * overlapping both. TCP drops a segment wholly before rcv_nxt rather than
 * queue it, but the walk must not depend on it.
 */
static void mpa_rxq_covered(struct kunit *test)
{
	u8 *ulpdu = kunit_kzalloc(test, RXQ_ULPDU, GFP_KERNEL);
	u8 *stream = kunit_kzalloc(test, RXQ_CAP, GFP_KERNEL);
	struct sk_buff_head *q = rxq_queue(test);
	struct mpa_rxm m;
	u32 span;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ulpdu);
	KUNIT_ASSERT_NOT_NULL(test, stream);
	memset(ulpdu, 0xa5, RXQ_ULPDU);
	ret = mpa_test_encode(0, true, ulpdu, RXQ_ULPDU, stream, RXQ_CAP);
	KUNIT_ASSERT_GT(test, ret, 0);
	span = ret;

	rxq_add(test, q, 7, stream, 0, 800);
	rxq_add(test, q, 7, stream, 100, 600);
	rxq_add(test, q, 7, stream, 500, span);
	KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, 0, true, true), 0);
	KUNIT_EXPECT_EQ(test, mpa_rxq_feed(q, 7, span, &m), span);
	KUNIT_EXPECT_EQ(test, mpa_rxm_state(&m), MPA_RXM_FPDU);
}

/*
 * Two skbs whose shared octets differ (a segment TCP checked that a
 * corrupting path changed, or one injected into the window, then the
 * genuine segment cut differently). TCP delivers the first skb's copy
 * (tcp_recv_skb() and mpa_rxq_seek() take the first skb that holds an
 * octet), so that is the copy the machine must judge, wherever a feed
 * starts: near the head of the queue or, far from it, looked up from the
 * tail. An FPDU P leads, already taken, its skb still queued: the FPDU F
 * behind it starts far from the head. With the junk in the first skb's
 * copy F fails its CRC (or a Marker); with the junk in the second skb's
 * copy, never delivered, F is valid. R-6-1: nothing is delivered that was
 * not validated.
 */
static void rxq_differ(struct kunit *test, const struct rxq_case *rc,
		       u32 back, bool junk_first)
{
	u8 *ulpdu = kunit_kzalloc(test, RXQ_ULPDU, GFP_KERNEL);
	u8 *stream = kunit_kzalloc(test, 2 * RXQ_CAP, GFP_KERNEL);
	u8 *junk = kunit_kzalloc(test, 2 * RXQ_CAP, GFP_KERNEL);
	struct sk_buff_head *q = rxq_queue(test);
	u32 i, p, span, first, cut, fed;
	struct mpa_rxm m;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, ulpdu);
	KUNIT_ASSERT_NOT_NULL(test, stream);
	KUNIT_ASSERT_NOT_NULL(test, junk);
	for (i = 0; i < RXQ_ULPDU; i++)
		ulpdu[i] = i * 5 + 1;
	ret = mpa_test_encode(0, rc->markers, ulpdu, RXQ_ULPDU, stream,
			      RXQ_CAP);
	KUNIT_ASSERT_GT(test, ret, 0);
	p = ret;
	ret = mpa_test_encode(p, rc->markers, ulpdu, RXQ_ULPDU, stream + p,
			      RXQ_CAP);
	KUNIT_ASSERT_GT(test, ret, 0);
	span = ret;
	first = p + span / 2;
	memcpy(junk, stream, p + span);
	for (i = first - back; i < first; i++)
		junk[i] ^= 0x5a;

	rxq_add(test, q, rc->isn, junk_first ? junk : stream, 0, first);
	rxq_add(test, q, rc->isn, junk_first ? stream : junk, first - back,
		p + span);

	for (cut = 0; cut <= span; cut++) {
		KUNIT_ASSERT_EQ(test, mpa_rxm_init(&m, p, rc->markers, true),
				0);
		fed = mpa_rxq_feed(q, rc->isn + p, cut, &m);
		if (mpa_rxm_state(&m) == MPA_RXM_MORE)
			fed += mpa_rxq_feed(q, rc->isn + p + fed, span - fed,
					    &m);
		KUNIT_ASSERT_EQ_MSG(test, mpa_rxm_state(&m),
				    junk_first ? MPA_RXM_ERROR : MPA_RXM_FPDU,
				    "M=%d overlap %u cut %u junk in %s skb",
				    rc->markers, back, cut,
				    junk_first ? "first" : "second");
	}
}

static void mpa_rxq_differing_copies(struct kunit *test)
{
	static const u32 backs[] = { 1, 100, 511 };
	u32 i, j;

	for (i = 0; i < ARRAY_SIZE(rxq_cases); i++)
		for (j = 0; j < ARRAY_SIZE(backs); j++) {
			rxq_differ(test, &rxq_cases[i], backs[j], true);
			rxq_differ(test, &rxq_cases[i], backs[j], false);
		}
}

static struct kunit_case mpa_rxq_test_cases[] = {
	KUNIT_CASE(mpa_rxq_end_to_end),
	KUNIT_CASE(mpa_rxq_overlap),
	KUNIT_CASE(mpa_rxq_covered),
	KUNIT_CASE(mpa_rxq_differing_copies),
	{}
};

static struct kunit_suite mpa_rxq_suite = {
	.name = "mpa_rxq",
	.test_cases = mpa_rxq_test_cases,
};

kunit_test_suite(mpa_rxq_suite);
