// SPDX-License-Identifier: GPL-2.0
/*
 * MPA's control plane: the "mpa" generic netlink family
 * (Documentation/netlink/specs/mpa.yaml). The policies and the ops table
 * are generated from the spec into netlink_gen.c, the family itself is in
 * netlink_family.c; this file has the handlers and the events.
 *
 * Every request works on the network namespace of the netlink socket it
 * came from: the policy, the connections and the statistics of other
 * namespaces are out of its reach. Reading is open to everybody (as ss
 * shows TCP sockets); changing the policy needs CAP_NET_ADMIN in the user
 * namespace that owns the network namespace.
 */
#include <linux/bits.h>
#include <linux/mutex.h>
#include <net/genetlink.h>
#include <uapi/linux/mpa_netlink.h>

#include "conn.h"
#include "netlink_gen.h"
#include "netns.h"

#define MPA_REVS_ALL	(MPA_REVS_REV1 | MPA_REVS_REV2)

/*
 * Serialises policy changes (the family runs its ops in parallel): each
 * reads the policy, merges its attributes and writes it back whole, so
 * two changes of different attributes must not interleave.
 */
static DEFINE_MUTEX(mpa_nl_policy_lock);

static int mpa_nl_put_policy(struct sk_buff *skb,
			     const struct mpa_net_policy *pol)
{
	if (nla_put_u8(skb, MPA_A_POLICY_CRC_OFF_ALLOWED, pol->crc_off_allowed) ||
	    nla_put_u8(skb, MPA_A_POLICY_MARKERS, pol->markers) ||
	    nla_put_u8(skb, MPA_A_POLICY_INITIATOR_REV, pol->initiator_rev) ||
	    nla_put_u32(skb, MPA_A_POLICY_RESPONDER_REVS, pol->responder_revs) ||
	    nla_put_u8(skb, MPA_A_POLICY_PERMISSIVE, pol->permissive) ||
	    nla_put_u32(skb, MPA_A_POLICY_TIMEOUT_MS, pol->timeout_ms))
		return -EMSGSIZE;
	return 0;
}

static int mpa_nl_reply_policy(struct genl_info *info,
			       const struct mpa_net_policy *pol)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || mpa_nl_put_policy(msg, pol)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

int mpa_nl_policy_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mpa_net_policy pol;

	mpa_net_policy(genl_info_net(info), &pol);
	return mpa_nl_reply_policy(info, &pol);
}

int mpa_nl_policy_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct net *net = genl_info_net(info);
	struct nlattr **a = info->attrs;
	struct mpa_net_policy pol;

	/*
	 * The namespace's owner decides (RFC 5044 section 4.4 makes turning
	 * CRCs off an administrative decision): root of a container may set
	 * its own namespace's policy, nobody else's. genetlink checked it
	 * (GENL_UNS_ADMIN_PERM, the spec's uns-admin-perm): CAP_NET_ADMIN in
	 * the user namespace that owns this network namespace, of the
	 * socket's opener and of the sender.
	 */
	mutex_lock(&mpa_nl_policy_lock);
	mpa_net_policy(net, &pol);
	if (a[MPA_A_POLICY_CRC_OFF_ALLOWED])
		pol.crc_off_allowed = nla_get_u8(a[MPA_A_POLICY_CRC_OFF_ALLOWED]);
	if (a[MPA_A_POLICY_MARKERS])
		pol.markers = nla_get_u8(a[MPA_A_POLICY_MARKERS]);
	if (a[MPA_A_POLICY_INITIATOR_REV])
		pol.initiator_rev = nla_get_u8(a[MPA_A_POLICY_INITIATOR_REV]);
	if (a[MPA_A_POLICY_RESPONDER_REVS])
		pol.responder_revs = nla_get_u32(a[MPA_A_POLICY_RESPONDER_REVS]);
	if (a[MPA_A_POLICY_PERMISSIVE])
		pol.permissive = nla_get_u8(a[MPA_A_POLICY_PERMISSIVE]);
	if (a[MPA_A_POLICY_TIMEOUT_MS])
		pol.timeout_ms = nla_get_u32(a[MPA_A_POLICY_TIMEOUT_MS]);

	/* the ranges were checked by the family's policy (netlink_gen.c) */
	if (!(pol.responder_revs & MPA_REVS_ALL)) {
		mutex_unlock(&mpa_nl_policy_lock);
		NL_SET_ERR_MSG_ATTR(info->extack, a[MPA_A_POLICY_RESPONDER_REVS],
				    "a Responder must accept Rev 1 or Rev 2");
		return -EINVAL;
	}
	mpa_net_policy_set(net, &pol);
	mutex_unlock(&mpa_nl_policy_lock);

	return mpa_nl_reply_policy(info, &pol);
}

static int mpa_nl_put_conn(struct sk_buff *skb, const struct mpa_conn *c)
{
	const struct mpa_result *r;
	const struct mpa_stats *s;
	struct mpa_conn_info ci;

	mpa_conn_info(c, &ci);
	r = &ci.res;
	s = &ci.stats;
	if (nla_put_uint(skb, MPA_A_CONN_INO, ci.ino) ||
	    nla_put_u16(skb, MPA_A_CONN_FAMILY, ci.family))
		return -EMSGSIZE;
	if (ci.family == AF_INET &&
	    (nla_put_in_addr(skb, MPA_A_CONN_SADDR4, ci.saddr4) ||
	     nla_put_in_addr(skb, MPA_A_CONN_DADDR4, ci.daddr4)))
		return -EMSGSIZE;
	if (ci.family == AF_INET6 &&
	    (nla_put_in6_addr(skb, MPA_A_CONN_SADDR6, &ci.saddr6) ||
	     nla_put_in6_addr(skb, MPA_A_CONN_DADDR6, &ci.daddr6)))
		return -EMSGSIZE;
	if (nla_put_be16(skb, MPA_A_CONN_SPORT, ci.sport) ||
	    nla_put_be16(skb, MPA_A_CONN_DPORT, ci.dport) ||
	    nla_put_u8(skb, MPA_A_CONN_KERNEL, ci.kernel) ||
	    nla_put_u8(skb, MPA_A_CONN_ROLE, r->role) ||
	    nla_put_u8(skb, MPA_A_CONN_STATE, ci.state))
		return -EMSGSIZE;
	/* what was negotiated, once it was */
	if (ci.state == MPA_STATE_FULL &&
	    (nla_put_u8(skb, MPA_A_CONN_REV, r->revision) ||
	     nla_put_u8(skb, MPA_A_CONN_TX_MARKERS_ON,
			!!(r->flags & MPA_RESULT_TX_MARKERS)) ||
	     nla_put_u8(skb, MPA_A_CONN_RX_MARKERS_ON,
			!!(r->flags & MPA_RESULT_RX_MARKERS)) ||
	     nla_put_u8(skb, MPA_A_CONN_CRC, !!(r->flags & MPA_RESULT_CRC)) ||
	     nla_put_u32(skb, MPA_A_CONN_MULPDU, r->mulpdu) ||
	     nla_put_u16(skb, MPA_A_CONN_IRD, r->ird) ||
	     nla_put_u16(skb, MPA_A_CONN_ORD, r->ord)))
		return -EMSGSIZE;
	if (nla_put_uint(skb, MPA_A_CONN_TX_FPDUS, s->tx_fpdus) ||
	    nla_put_uint(skb, MPA_A_CONN_TX_OCTETS, s->tx_octets) ||
	    nla_put_uint(skb, MPA_A_CONN_RX_FPDUS, s->rx_fpdus) ||
	    nla_put_uint(skb, MPA_A_CONN_RX_OCTETS, s->rx_octets) ||
	    nla_put_uint(skb, MPA_A_CONN_TX_MARKERS, s->tx_markers) ||
	    nla_put_uint(skb, MPA_A_CONN_RX_MARKERS, s->rx_markers) ||
	    nla_put_uint(skb, MPA_A_CONN_CRC_ERRORS, s->crc_errors) ||
	    nla_put_uint(skb, MPA_A_CONN_MARKER_ERRORS, s->marker_errors) ||
	    nla_put_u32(skb, MPA_A_CONN_ERR_CODE, ci.err.code) ||
	    nla_put_u32(skb, MPA_A_CONN_ERR_REASON, ci.err.reason) ||
	    nla_put_u32(skb, MPA_A_CONN_ERR_ERRNO, ci.err.errnum))
		return -EMSGSIZE;
	return 0;
}

/* The most mpa_nl_put_conn() writes: an IPv6 connection in Full Operation */
static size_t mpa_nl_conn_size(void)
{
	return nla_total_size(sizeof(u64)) * 9 +	/* ino, stats (uint) */
	       nla_total_size(sizeof(struct in6_addr)) * 2 +
	       nla_total_size(sizeof(u16)) * 5 +	/* family, ports, IRD/ORD */
	       nla_total_size(sizeof(u8)) * 7 +
	       nla_total_size(sizeof(u32)) * 4;	/* MULPDU, error */
}

struct mpa_nl_dump {
	struct sk_buff *skb;
	struct netlink_callback *cb;
};

static int mpa_nl_dump_one(const struct mpa_conn *c, void *arg)
{
	struct mpa_nl_dump *d = arg;
	void *hdr;

	hdr = genlmsg_iput(d->skb, genl_info_dump(d->cb));
	if (!hdr)
		return -EMSGSIZE;
	/* the list changed since the last part: NLM_F_DUMP_INTR */
	genl_dump_check_consistent(d->cb, hdr);
	if (mpa_nl_put_conn(d->skb, c)) {
		genlmsg_cancel(d->skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(d->skb, hdr);
	return 0;
}

int mpa_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct mpa_nl_dump d = { .skb = skb, .cb = cb };
	int ret;

	/*
	 * cb->args[0]: the id to resume from; cb->seq: the list's
	 * generation, which netlink compares across the parts
	 */
	ret = mpa_net_walk_conns(sock_net(skb->sk), &cb->args[0], &cb->seq,
				 mpa_nl_dump_one, &d);
	/* a full message ends this part; the next one resumes */
	if (ret == -EMSGSIZE && skb->len)
		return skb->len;
	return ret;
}

static int mpa_nl_put_stats(struct sk_buff *skb, const struct mpa_net_stats *st)
{
	const struct mpa_stats *t = &st->traffic;
	struct nlattr *nest;
	unsigned int i;

	if (nla_put_u32(skb, MPA_A_STATS_CONNS_STREAMING,
			st->conns[MPA_STATE_STREAMING]) ||
	    nla_put_u32(skb, MPA_A_STATS_CONNS_STARTUP,
			st->conns[MPA_STATE_AWAIT_REQUEST] +
			st->conns[MPA_STATE_REQUEST_RECEIVED] +
			st->conns[MPA_STATE_AWAIT_REPLY]) ||
	    nla_put_u32(skb, MPA_A_STATS_CONNS_FULL, st->conns[MPA_STATE_FULL]) ||
	    nla_put_u32(skb, MPA_A_STATS_CONNS_REJECTED,
			st->conns[MPA_STATE_REJECTED]) ||
	    nla_put_u32(skb, MPA_A_STATS_CONNS_FAILED,
			st->conns[MPA_STATE_FAILED]) ||
	    nla_put_uint(skb, MPA_A_STATS_ATTACHED, st->attached) ||
	    nla_put_uint(skb, MPA_A_STATS_ESTABLISHED, st->established) ||
	    nla_put_uint(skb, MPA_A_STATS_REJECTED, st->rejected) ||
	    nla_put_uint(skb, MPA_A_STATS_STARTUP_FAILED, st->startup_failed) ||
	    nla_put_uint(skb, MPA_A_STATS_TX_FPDUS, t->tx_fpdus) ||
	    nla_put_uint(skb, MPA_A_STATS_TX_OCTETS, t->tx_octets) ||
	    nla_put_uint(skb, MPA_A_STATS_RX_FPDUS, t->rx_fpdus) ||
	    nla_put_uint(skb, MPA_A_STATS_RX_OCTETS, t->rx_octets) ||
	    nla_put_uint(skb, MPA_A_STATS_TX_MARKERS, t->tx_markers) ||
	    nla_put_uint(skb, MPA_A_STATS_RX_MARKERS, t->rx_markers) ||
	    nla_put_uint(skb, MPA_A_STATS_CRC_ERRORS, t->crc_errors) ||
	    nla_put_uint(skb, MPA_A_STATS_MARKER_ERRORS, t->marker_errors))
		return -EMSGSIZE;
	for (i = 0; i < MPA_REASON_COUNT; i++) {
		if (!st->failures[i])
			continue;
		nest = nla_nest_start(skb, MPA_A_STATS_FAILURE);
		if (!nest ||
		    nla_put_u32(skb, MPA_A_FAILURE_REASON, i) ||
		    nla_put_uint(skb, MPA_A_FAILURE_COUNT, st->failures[i]))
			return -EMSGSIZE;
		nla_nest_end(skb, nest);
	}
	return 0;
}

int mpa_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mpa_net_stats *st;
	struct sk_buff *msg;
	void *hdr;
	int ret;

	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	mpa_net_stats(genl_info_net(info), st);
	ret = -ENOMEM;
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		goto out;
	ret = -EMSGSIZE;
	hdr = genlmsg_iput(msg, info);
	if (!hdr || mpa_nl_put_stats(msg, st)) {
		nlmsg_free(msg);
		goto out;
	}
	genlmsg_end(msg, hdr);
	ret = genlmsg_reply(msg, info);
out:
	kfree(st);
	return ret;
}

static const u8 mpa_nl_event_cmd[] = {
	[MPA_NET_ESTABLISHED]	= MPA_CMD_ESTABLISHED_NTF,
	[MPA_NET_REJECTED]	= MPA_CMD_REJECTED_NTF,
	[MPA_NET_ERROR]		= MPA_CMD_ERROR_NTF,
	[MPA_NET_CLOSED]	= MPA_CMD_CLOSED_NTF,
};

/**
 * mpa_nl_notify() - announce a connection's event to the "events" group
 * @c: the connection
 * @ev: %MPA_NET_ESTABLISHED, %MPA_NET_REJECTED, %MPA_NET_ERROR or
 *	%MPA_NET_CLOSED
 *
 * Any context. Only listeners in the connection's namespace hear of it.
 */
void mpa_nl_notify(const struct mpa_conn *c, enum mpa_net_event ev)
{
	struct net *net = mpa_conn_net(c);
	struct sk_buff *msg;
	void *hdr;

	if (ev >= ARRAY_SIZE(mpa_nl_event_cmd) || !mpa_nl_event_cmd[ev])
		return;
	if (!genl_has_listeners(&mpa_nl_family, net, MPA_NLGRP_EVENTS))
		return;
	/* in softirq too: no more than the event needs (some 300 octets) */
	msg = genlmsg_new(mpa_nl_conn_size(), GFP_ATOMIC);
	if (!msg)
		goto lost;
	hdr = genlmsg_put(msg, 0, 0, &mpa_nl_family, 0, mpa_nl_event_cmd[ev]);
	if (!hdr || WARN_ON_ONCE(mpa_nl_put_conn(msg, c))) {
		nlmsg_free(msg);
		goto lost;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast_netns(&mpa_nl_family, net, msg, 0, MPA_NLGRP_EVENTS,
				GFP_ATOMIC);
	return;

lost:
	/* the listeners learn that they missed one, as on a full buffer */
	genl_set_err(&mpa_nl_family, net, 0, MPA_NLGRP_EVENTS, -ENOBUFS);
}

int __init mpa_nl_init(void)
{
	return genl_register_family(&mpa_nl_family);
}

void mpa_nl_exit(void)
{
	genl_unregister_family(&mpa_nl_family);
}
