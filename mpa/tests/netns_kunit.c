// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of a namespace's statistics (mpa/netns.c): the walk that
 * sums the live connections a batch at a time, with connections closing
 * between two batches.
 */
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/net.h>
#include <net/sock.h>

#include "conn.h"
#include "netns.h"
#include "pair.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* more than one batch of the walk (MPA_NET_WALK_BATCH, 64) */
#define NS_FILLER_PAIRS	40

/**
 * struct ns_walk - one test's connections
 * @fillers: idle connections, both ends attached
 * @target: the connection closed in the middle of a walk
 * @pauses: how often the walk paused between two batches
 */
struct ns_walk {
	struct mpa_test_pair *fillers[NS_FILLER_PAIRS];
	struct mpa_test_pair *target;
	unsigned int pauses;
};

static void ns_attach_pair(struct kunit *test, struct mpa_test_pair *p)
{
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(p->client));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(p->server));
}

/* Give the target's ends counters no other connection has. */
static void ns_target_counts(struct socket *sock, u64 base)
{
	struct mpa_conn *c;

	lock_sock(sock->sk);
	c = mpa_conn(sock->sk);
	c->stats.tx_fpdus = base + 1;
	c->stats.tx_octets = base + 1000;
	c->stats.rx_fpdus = base + 2;
	c->stats.rx_octets = base + 2000;
	c->stats.crc_errors = base + 3;
	release_sock(sock->sk);
}

/* The stub of mpa_net_stats_pause(): close the target at the first pause. */
static void ns_pause_close_target(const struct net *net)
{
	struct kunit *test = kunit_get_current_test();
	struct ns_walk *w = test->priv;

	if (!w->pauses++) {
		mpa_test_release(&w->target->client);
		mpa_test_release(&w->target->server);
	}
}

/*
 * @before: filler pairs attached before the target, the rest after: ids
 * are given in the order of attach, and walked in their order. With none
 * before, the walk has summed the target when it closes; with 32 (64
 * connections, one batch), the target is the first the walk has not
 * summed; with all, one far ahead.
 */
static void ns_walk_close(struct kunit *test, unsigned int before_target)
{
	struct ns_walk *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct mpa_net_stats *base, *before, *during, *after;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, w);
	base = kunit_kzalloc(test, 4 * sizeof(*base), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, base);
	before = base + 1;
	during = base + 2;
	after = base + 3;
	test->priv = w;

	for (i = 0; i < NS_FILLER_PAIRS; i++) {
		if (i == before_target) {
			w->target = mpa_test_pair_new(test, AF_INET);
			ns_attach_pair(test, w->target);
		}
		w->fillers[i] = mpa_test_pair_new(test, AF_INET);
		ns_attach_pair(test, w->fillers[i]);
	}
	if (!w->target) {
		w->target = mpa_test_pair_new(test, AF_INET);
		ns_attach_pair(test, w->target);
	}
	mpa_net_stats(&init_net, base);
	/* the positions above hold if these are all the namespace has */
	KUNIT_ASSERT_EQ(test, base->conns[MPA_STATE_STREAMING],
			2U * NS_FILLER_PAIRS + 2);
	ns_target_counts(w->target->client, 1000000);
	ns_target_counts(w->target->server, 3000000);

	mpa_net_stats(&init_net, before);
	kunit_activate_static_stub(test, mpa_net_stats_pause,
				   ns_pause_close_target);
	mpa_net_stats(&init_net, during);
	kunit_deactivate_static_stub(test, mpa_net_stats_pause);
	mpa_net_stats(&init_net, after);

	KUNIT_ASSERT_GE_MSG(test, w->pauses, 1U,
			    "the walk of %d connections never paused",
			    2 * NS_FILLER_PAIRS + 2);
	KUNIT_EXPECT_NULL(test, w->target->client);
	/* summed once whether the walk passed it before it closed or not */
	KUNIT_EXPECT_MEMEQ(test, &during->traffic, &before->traffic,
			   sizeof(before->traffic));
	KUNIT_EXPECT_MEMEQ(test, &after->traffic, &before->traffic,
			   sizeof(before->traffic));
	KUNIT_EXPECT_EQ(test, before->traffic.tx_fpdus - base->traffic.tx_fpdus,
			4000002ULL);
	KUNIT_EXPECT_EQ(test, before->traffic.crc_errors - base->traffic.crc_errors,
			4000006ULL);
	/* the walk counts a connection's state if it passed it live */
	KUNIT_EXPECT_EQ(test, during->conns[MPA_STATE_STREAMING],
			before->conns[MPA_STATE_STREAMING] -
			(before_target ? 2 : 0));
	KUNIT_EXPECT_EQ(test, after->conns[MPA_STATE_STREAMING],
			before->conns[MPA_STATE_STREAMING] - 2);
}

/* The walk summed the target, then it closed: not counted twice. */
static void mpa_netns_walk_closed_behind(struct kunit *test)
{
	ns_walk_close(test, 0);
}

/* The target was next when it closed: counted all the same. */
static void mpa_netns_walk_closed_next(struct kunit *test)
{
	ns_walk_close(test, 32);
}

/* The target closed well before the walk reached it: the same. */
static void mpa_netns_walk_closed_ahead(struct kunit *test)
{
	ns_walk_close(test, NS_FILLER_PAIRS);
}

static struct kunit_case mpa_netns_cases[] = {
	KUNIT_CASE(mpa_netns_walk_closed_behind),
	KUNIT_CASE(mpa_netns_walk_closed_next),
	KUNIT_CASE(mpa_netns_walk_closed_ahead),
	{}
};

static struct kunit_suite mpa_netns_suite = {
	.name = "mpa_netns",
	.test_cases = mpa_netns_cases,
};

kunit_test_suite(mpa_netns_suite);
