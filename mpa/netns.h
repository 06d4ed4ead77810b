/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA per network namespace state: the namespace's policy, its connections
 * and its statistics.
 */
#ifndef _MPA_NETNS_H
#define _MPA_NETNS_H

#include <linux/list.h>
#include <linux/spinlock.h>
#include <net/net_namespace.h>
#include <uapi/linux/mpa.h>

struct genl_family;
struct mpa_conn;

/* Number of enum mpa_reason values */
#define MPA_REASON_COUNT	(MPA_REASON_EARLY_DATA + 1)

/**
 * struct mpa_net_policy - a namespace's policy for its new connections
 * @crc_off_allowed: connections may announce C=0 (RFC 5044 section 4.4)
 * @markers: default M bit: ask for Markers
 * @initiator_rev: the Rev an Initiator sends by default (1 or 2)
 * @responder_revs: revisions a Responder accepts, bit N for Rev N
 * @permissive: default: interoperate with Rev 0 peers (Appendix C)
 * @timeout_ms: default startup timeout
 */
struct mpa_net_policy {
	bool crc_off_allowed;
	bool markers;
	u8 initiator_rev;
	u8 responder_revs;
	bool permissive;
	u32 timeout_ms;
};

/**
 * struct mpa_net_stats - a namespace's statistics
 * @conns: connections now in each state, indexed by enum mpa_state
 * @attached: connections attached since the namespace was created
 * @established: connections that entered Full Operation
 * @rejected: startups that ended in a reject, sent or received
 * @startup_failed: startups that failed
 * @failures: @startup_failed by enum mpa_reason
 * @traffic: the connections' counters summed, closed ones included
 */
struct mpa_net_stats {
	u32 conns[MPA_STATE_FAILED + 1];
	u64 attached;
	u64 established;
	u64 rejected;
	u64 startup_failed;
	u64 failures[MPA_REASON_COUNT];
	struct mpa_stats traffic;
};

/* What happened to a connection, for the counters and the events */
enum mpa_net_event {
	MPA_NET_ESTABLISHED,
	MPA_NET_REJECTED,
	MPA_NET_STARTUP_FAILED,
	MPA_NET_ERROR,
	MPA_NET_CLOSED,
};

int mpa_net_init(void);
void mpa_net_exit(void);

void mpa_net_policy(const struct net *net, struct mpa_net_policy *pol);
void mpa_net_policy_set(struct net *net, const struct mpa_net_policy *pol);
bool mpa_net_crc_off_allowed(const struct net *net);

int mpa_net_conn_reserve(struct mpa_conn *c, gfp_t gfp);
void mpa_net_conn_add(struct mpa_conn *c);
void mpa_net_conn_del(struct mpa_conn *c);
void mpa_net_event(struct mpa_conn *c, enum mpa_net_event ev);
void mpa_net_stats(const struct net *net, struct mpa_net_stats *st);
#if IS_ENABLED(CONFIG_KUNIT)
void mpa_net_stats_pause(const struct net *net);
#endif
int mpa_net_walk_conns(const struct net *net, unsigned long *pos,
		       unsigned int *gen,
		       int (*fn)(const struct mpa_conn *c, void *arg),
		       void *arg);

/* netlink.c, netlink_family.c: the "mpa" generic netlink family */
extern struct genl_family mpa_nl_family;
int mpa_nl_init(void);
void mpa_nl_exit(void);
void mpa_nl_notify(const struct mpa_conn *c, enum mpa_net_event ev);

#endif /* _MPA_NETNS_H */
