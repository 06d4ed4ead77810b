// SPDX-License-Identifier: GPL-2.0
/*
 * MPA per network namespace state: the namespace's policy, the list of its
 * MPA connections, and its statistics (also as /proc/net/mpa_stat).
 *
 * Connections are listed from attach to close. The traffic counters live in
 * the connections; the namespace's totals are the live connections' sums
 * plus what closed connections left behind, so the data path counts each
 * FPDU once, in its connection only. Summing them walks the connections a
 * batch at a time, so that a reader (anyone may read /proc/net/mpa_stat)
 * keeps bottom halves off for one batch, not for the whole list.
 */
#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <net/netns/generic.h>

#include "conn.h"
#include "netns.h"

/**
 * struct mpa_net - MPA's state in a network namespace
 * @lock: protects everything below; taken with BHs off, as connections
 *	may be released in softirq context
 * @policy: the policy for new connections
 * @conns: the namespace's connections, by &mpa_conn.net_id: a dump resumes
 *	at the id after the last it gave (a lookup, not a walk from the start)
 * @next_id: the next id to try (ids are given cyclically)
 * @retired: closed connections' counters, summed
 * @attached: see &struct mpa_net_stats
 * @established: see &struct mpa_net_stats
 * @rejected: see &struct mpa_net_stats
 * @startup_failed: see &struct mpa_net_stats
 * @failures: see &struct mpa_net_stats
 * @conns_gen: changes whenever @conns does (never 0), so that a dump
 *	resumed across a change can say so (NLM_F_DUMP_INTR)
 * @walk_pos: while mpa_net_stats() walks, the id it goes on from (the
 *	connections from it on are not summed yet); ULONG_MAX otherwise
 * @walk_ahead: the counters of connections closed during that walk before
 *	it reached them, for it to add
 * @walk_mutex: one mpa_net_stats() walk at a time
 */
struct mpa_net {
	spinlock_t lock;	/* protects the fields below */
	struct mpa_net_policy policy;
	struct xarray conns;
	u32 next_id;
	unsigned int conns_gen;
	struct mpa_stats retired;
	u64 attached;
	u64 established;
	u64 rejected;
	u64 startup_failed;
	u64 failures[MPA_REASON_COUNT];
	unsigned long walk_pos;
	struct mpa_stats walk_ahead;
	struct mutex walk_mutex;	/* not under @lock */
};

/* connections summed with bottom halves off, at most */
#define MPA_NET_WALK_BATCH	64

static unsigned int mpa_net_id __read_mostly;

static struct mpa_net *mpa_net_of(const struct net *net)
{
	return net_generic(net, mpa_net_id);
}

/**
 * mpa_net_policy() - read a namespace's policy
 * @net: the namespace
 * @pol: filled in
 */
void mpa_net_policy(const struct net *net, struct mpa_net_policy *pol)
{
	struct mpa_net *mn = mpa_net_of(net);

	spin_lock_bh(&mn->lock);
	*pol = mn->policy;
	spin_unlock_bh(&mn->lock);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_net_policy);

/**
 * mpa_net_policy_set() - replace a namespace's policy
 * @net: the namespace
 * @pol: the new policy, already validated
 *
 * Connections attached from now on follow it.
 */
void mpa_net_policy_set(struct net *net, const struct mpa_net_policy *pol)
{
	struct mpa_net *mn = mpa_net_of(net);

	spin_lock_bh(&mn->lock);
	mn->policy = *pol;
	spin_unlock_bh(&mn->lock);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_net_policy_set);

/**
 * mpa_net_crc_off_allowed() - may connections in @net announce C=0?
 * @net: the namespace
 *
 * RFC 5044 section 4.4 (R-4.4-4, R-4.4-5): the administrator decides.
 *
 * Return: true if the namespace's policy allows it.
 */
bool mpa_net_crc_off_allowed(const struct net *net)
{
	struct mpa_net_policy pol;

	mpa_net_policy(net, &pol);
	return pol.crc_off_allowed;
}

/* The list of connections changed: under the lock */
static void mpa_net_conns_changed(struct mpa_net *mn)
{
	if (!++mn->conns_gen)
		mn->conns_gen = 1;
}

static void mpa_stats_add(struct mpa_stats *sum, const struct mpa_stats *s)
{
	sum->tx_fpdus += s->tx_fpdus;
	sum->tx_octets += s->tx_octets;
	sum->rx_fpdus += s->rx_fpdus;
	sum->rx_octets += s->rx_octets;
	sum->tx_markers += s->tx_markers;
	sum->rx_markers += s->rx_markers;
	sum->crc_errors += s->crc_errors;
	sum->marker_errors += s->marker_errors;
	sum->startup_octets_tx += s->startup_octets_tx;
	sum->startup_octets_rx += s->startup_octets_rx;
}

/**
 * mpa_net_conn_reserve() - an id in its socket's namespace for a new
 *	connection, not listed yet (mpa_net_conn_add())
 * @c: the connection
 * @gfp: allocation flags
 *
 * Return: 0 or -ENOMEM.
 */
int mpa_net_conn_reserve(struct mpa_conn *c, gfp_t gfp)
{
	struct mpa_net *mn = mpa_net_of(mpa_conn_net(c));
	int ret;

	/*
	 * A NULL entry reserves the id: walks do not see it. Ids stay below
	 * INT_MAX, so that "the id after" (a walk's or a dump's position)
	 * never wraps to 0 where unsigned long has 32 bits.
	 */
	ret = xa_alloc_cyclic_bh(&mn->conns, &c->net_id, NULL, xa_limit_31b,
				 &mn->next_id, gfp);
	return ret < 0 ? -ENOMEM : 0;
}

/**
 * mpa_net_conn_add() - list a new connection in its socket's namespace
 * @c: the connection, with its id reserved (mpa_net_conn_reserve())
 */
void mpa_net_conn_add(struct mpa_conn *c)
{
	struct mpa_net *mn = mpa_net_of(mpa_conn_net(c));

	spin_lock_bh(&mn->lock);
	/* into the reserved slot: nothing to allocate, cannot fail */
	WARN_ON_ONCE(xa_is_err(xa_store_bh(&mn->conns, c->net_id, c,
					   GFP_ATOMIC)));
	WRITE_ONCE(c->net_linked, true);
	mpa_net_conns_changed(mn);
	mn->attached++;
	spin_unlock_bh(&mn->lock);
}

/**
 * mpa_net_conn_del() - take a connection off its namespace's list
 * @c: the connection; may be called again, and in softirq context
 *
 * Its counters move to the namespace's totals of closed connections.
 */
void mpa_net_conn_del(struct mpa_conn *c)
{
	struct mpa_net *mn;
	struct mpa_stats s;

	/*
	 * Already off the list, or forgotten by mpa_net_exit_net(): then
	 * the namespace may be gone (a kernel socket does not hold it).
	 */
	if (!READ_ONCE(c->net_linked))
		return;
	mn = mpa_net_of(mpa_conn_net(c));
	spin_lock_bh(&mn->lock);
	if (c->net_linked) {
		xa_erase_bh(&mn->conns, c->net_id);
		WRITE_ONCE(c->net_linked, false);
		mpa_net_conns_changed(mn);
		mpa_conn_stats(c, &s);
		mpa_stats_add(&mn->retired, &s);
		/* a walk under way counted retired before: it needs these */
		if (c->net_id >= mn->walk_pos)
			mpa_stats_add(&mn->walk_ahead, &s);
	}
	spin_unlock_bh(&mn->lock);
}

/**
 * mpa_net_event() - count what happened to a connection, and announce it
 * @c: the connection; its error (&mpa_conn.err) is already recorded
 * @ev: what happened
 *
 * Any context.
 */
void mpa_net_event(struct mpa_conn *c, enum mpa_net_event ev)
{
	struct mpa_net *mn = mpa_net_of(mpa_conn_net(c));
	u32 reason = mpa_conn_reason(c);

	spin_lock_bh(&mn->lock);
	switch (ev) {
	case MPA_NET_ESTABLISHED:
		mn->established++;
		break;
	case MPA_NET_REJECTED:
		mn->rejected++;
		/*
		 * A Request MPA rejected itself (no RTR type in common) is
		 * counted by its cause too, though the startup did not fail.
		 */
		if (reason != MPA_REASON_NONE && reason != MPA_REASON_REJECTED &&
		    reason < MPA_REASON_COUNT)
			mn->failures[reason]++;
		break;
	case MPA_NET_STARTUP_FAILED:
		mn->startup_failed++;
		if (reason < MPA_REASON_COUNT)
			mn->failures[reason]++;
		break;
	case MPA_NET_ERROR:
	case MPA_NET_CLOSED:
		break;
	}
	spin_unlock_bh(&mn->lock);

	/* a startup failure is an error, announced as such */
	mpa_nl_notify(c, ev == MPA_NET_STARTUP_FAILED ? MPA_NET_ERROR : ev);
}

/*
 * Sum up to MPA_NET_WALK_BATCH connections from *@pos on into @st, under
 * the namespace's lock, and move *@pos past them. Return: true once every
 * connection is summed.
 */
static bool mpa_net_stats_batch(struct mpa_net *mn, unsigned long *pos,
				struct mpa_net_stats *st)
{
	unsigned int n = 0;
	struct mpa_conn *c;
	struct mpa_stats s;
	unsigned long id;
	u8 state;

	lockdep_assert_held(&mn->lock);
	xa_for_each_start(&mn->conns, id, c, *pos) {
		if (n++ == MPA_NET_WALK_BATCH)
			return false;
		state = mpa_conn_state(c);
		if (state < ARRAY_SIZE(st->conns))
			st->conns[state]++;
		mpa_conn_stats(c, &s);
		mpa_stats_add(&st->traffic, &s);
		*pos = id + 1;
	}
	return true;
}

/**
 * mpa_net_stats_pause() - between two batches of mpa_net_stats(), with no
 *	lock held: let others run
 * @net: the namespace walked
 *
 * KUnit replaces it to close connections in the middle of a walk.
 */
VISIBLE_IF_KUNIT void mpa_net_stats_pause(const struct net *net)
{
	KUNIT_STATIC_STUB_REDIRECT(mpa_net_stats_pause, net);
	cond_resched();
}
EXPORT_SYMBOL_IF_KUNIT(mpa_net_stats_pause);

/**
 * mpa_net_stats() - a namespace's statistics
 * @net: the namespace
 * @st: filled in
 *
 * Process context: it may sleep. The live connections are summed a batch
 * at a time, with the lock dropped in between. Every FPDU of a connection
 * that closes during the walk is counted once: in its batch if the walk
 * reached it before, from &mpa_net.walk_ahead if not. One that comes
 * during the walk may be left out of this call; the counters never go
 * back from one call to the next.
 */
void mpa_net_stats(const struct net *net, struct mpa_net_stats *st)
{
	struct mpa_net *mn = mpa_net_of(net);
	unsigned long pos = 0;
	bool done;

	might_sleep();
	memset(st, 0, sizeof(*st));
	mutex_lock(&mn->walk_mutex);
	spin_lock_bh(&mn->lock);
	st->traffic = mn->retired;
	memset(&mn->walk_ahead, 0, sizeof(mn->walk_ahead));
	for (;;) {
		done = mpa_net_stats_batch(mn, &pos, st);
		if (done)
			break;
		mn->walk_pos = pos;
		spin_unlock_bh(&mn->lock);
		mpa_net_stats_pause(net);
		spin_lock_bh(&mn->lock);
	}
	mpa_stats_add(&st->traffic, &mn->walk_ahead);
	mn->walk_pos = ULONG_MAX;
	/* at the end, so that they count every connection the walk saw */
	st->attached = mn->attached;
	st->established = mn->established;
	st->rejected = mn->rejected;
	st->startup_failed = mn->startup_failed;
	memcpy(st->failures, mn->failures, sizeof(st->failures));
	spin_unlock_bh(&mn->lock);
	mutex_unlock(&mn->walk_mutex);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_net_stats);

/**
 * mpa_net_walk_conns() - walk a namespace's connections, resumably
 * @net: the namespace
 * @pos: in: the id to start from (0 at first); out: the id after the last
 *	connection walked
 * @gen: set, before @fn is called, to the list's generation, which
 *	changes whenever connections come or go: a walk resumed under
 *	another generation may have skipped or repeated one
 * @fn: called for each, under the namespace's lock (it must not sleep);
 *	a non-zero return stops the walk before that connection
 * @arg: passed to @fn
 *
 * Return: what @fn returned last, 0 once every connection was walked.
 */
int mpa_net_walk_conns(const struct net *net, unsigned long *pos,
		       unsigned int *gen,
		       int (*fn)(const struct mpa_conn *c, void *arg),
		       void *arg)
{
	struct mpa_net *mn = mpa_net_of(net);
	struct mpa_conn *c;
	unsigned long id;
	int ret = 0;

	spin_lock_bh(&mn->lock);
	*gen = mn->conns_gen;
	xa_for_each_start(&mn->conns, id, c, *pos) {
		ret = fn(c, arg);
		if (ret)
			break;
		*pos = id + 1;
	}
	spin_unlock_bh(&mn->lock);
	return ret;
}

#ifdef CONFIG_PROC_FS
/* /proc/net/mpa_stat, in the manner of /proc/net/tls_stat */
static const char *const mpa_state_names[] = {
	[MPA_STATE_STREAMING]		= "Streaming",
	[MPA_STATE_AWAIT_REQUEST]	= "AwaitRequest",
	[MPA_STATE_REQUEST_RECEIVED]	= "RequestReceived",
	[MPA_STATE_AWAIT_REPLY]		= "AwaitReply",
	[MPA_STATE_FULL]		= "Full",
	[MPA_STATE_REJECTED]		= "Rejected",
	[MPA_STATE_FAILED]		= "Failed",
};

/*
 * The causes of startup failures (the others, without a name, end Full
 * Operation or are the peer's reject)
 */
static const char *const mpa_reason_names[MPA_REASON_COUNT] = {
	[MPA_REASON_NONE]		= "None",
	[MPA_REASON_BAD_KEY]		= "BadKey",
	[MPA_REASON_INIT_INIT]		= "InitInit",
	[MPA_REASON_REPLY_AT_RESPONDER]	= "ReplyAtResponder",
	[MPA_REASON_PD_TOO_LONG]	= "PdTooLong",
	[MPA_REASON_V2_SHORT]		= "V2Short",
	[MPA_REASON_BAD_REV]		= "BadRev",
	[MPA_REASON_REV0]		= "Rev0",
	[MPA_REASON_REV_MISMATCH]	= "RevMismatch",
	[MPA_REASON_V2_MISMATCH]	= "V2Mismatch",
	[MPA_REASON_P2P_MISMATCH]	= "P2pMismatch",
	[MPA_REASON_NO_RTR]		= "NoRtr",
	[MPA_REASON_RTR_MISMATCH]	= "RtrMismatch",
	[MPA_REASON_PD_BUFFER]		= "PdBuffer",
	[MPA_REASON_TRUNCATED]		= "Truncated",
	[MPA_REASON_TIMEOUT]		= "Timeout",
	[MPA_REASON_PEER_CLOSED]	= "PeerClosed",
	[MPA_REASON_EARLY_DATA]		= "EarlyData",
};

static int mpa_stat_show(struct seq_file *seq, void *v)
{
	struct net *net = seq_file_single_net(seq);
	struct mpa_net_stats *st;
	unsigned int i;

	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	mpa_net_stats(net, st);
	for (i = MPA_STATE_STREAMING; i < ARRAY_SIZE(st->conns); i++)
		seq_printf(seq, "MpaCurr%-24s%u\n", mpa_state_names[i],
			   st->conns[i]);
	seq_printf(seq, "%-31s%llu\n", "MpaAttached", st->attached);
	seq_printf(seq, "%-31s%llu\n", "MpaEstablished", st->established);
	seq_printf(seq, "%-31s%llu\n", "MpaRejected", st->rejected);
	seq_printf(seq, "%-31s%llu\n", "MpaStartupFailed", st->startup_failed);
	seq_printf(seq, "%-31s%llu\n", "MpaTxFpdus", st->traffic.tx_fpdus);
	seq_printf(seq, "%-31s%llu\n", "MpaTxOctets", st->traffic.tx_octets);
	seq_printf(seq, "%-31s%llu\n", "MpaRxFpdus", st->traffic.rx_fpdus);
	seq_printf(seq, "%-31s%llu\n", "MpaRxOctets", st->traffic.rx_octets);
	seq_printf(seq, "%-31s%llu\n", "MpaTxMarkers", st->traffic.tx_markers);
	seq_printf(seq, "%-31s%llu\n", "MpaRxMarkers", st->traffic.rx_markers);
	seq_printf(seq, "%-31s%llu\n", "MpaCrcErrors", st->traffic.crc_errors);
	seq_printf(seq, "%-31s%llu\n", "MpaMarkerErrors",
		   st->traffic.marker_errors);
	for (i = MPA_REASON_NONE + 1; i < ARRAY_SIZE(mpa_reason_names); i++)
		if (mpa_reason_names[i])
			seq_printf(seq, "MpaStartupFail%-17s%llu\n",
				   mpa_reason_names[i], st->failures[i]);
	kfree(st);
	return 0;
}
#endif /* CONFIG_PROC_FS */

static int __net_init mpa_net_init_net(struct net *net)
{
	struct mpa_net *mn = mpa_net_of(net);

	spin_lock_init(&mn->lock);
	mutex_init(&mn->walk_mutex);
	mn->walk_pos = ULONG_MAX;
	/* charged as the connections are (SLAB_ACCOUNT) */
	xa_init_flags(&mn->conns,
		      XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH | XA_FLAGS_ACCOUNT);
	mn->conns_gen = 1;
	/* RFC 5044 defaults: CRCs required (R-4.4-5), Rev 1 */
	mn->policy.initiator_rev = MPA_REVISION_1;
	mn->policy.responder_revs = BIT(MPA_REVISION_1) | BIT(MPA_REVISION_2);
	mn->policy.timeout_ms = MPA_DEFAULT_TIMEOUT_MS;
#ifdef CONFIG_PROC_FS
	if (!proc_create_net_single("mpa_stat", 0444, net->proc_net,
				    mpa_stat_show, NULL))
		return -ENOMEM;
#endif
	return 0;
}

static void __net_exit mpa_net_exit_net(struct net *net)
{
	struct mpa_net *mn = mpa_net_of(net);
	struct mpa_conn *c;
	unsigned long id;

	remove_proc_entry("mpa_stat", net->proc_net);
	/*
	 * Sockets hold their namespace, so only kernel sockets a consumer
	 * failed to release can still be here; forget them.
	 */
	spin_lock_bh(&mn->lock);
	xa_for_each(&mn->conns, id, c)
		WRITE_ONCE(c->net_linked, false);
	xa_destroy(&mn->conns);
	mpa_net_conns_changed(mn);
	spin_unlock_bh(&mn->lock);
	mutex_destroy(&mn->walk_mutex);
}

static struct pernet_operations mpa_net_ops = {
	.init	= mpa_net_init_net,
	.exit	= mpa_net_exit_net,
	.id	= &mpa_net_id,
	.size	= sizeof(struct mpa_net),
};

int mpa_net_init(void)
{
	return register_pernet_subsys(&mpa_net_ops);
}

void mpa_net_exit(void)
{
	unregister_pernet_subsys(&mpa_net_ops);
}
