/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause) */
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/mpa.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_MPA_GEN_H
#define _LINUX_MPA_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/mpa_netlink.h>
#include <linux/mpa.h>
#include <linux/mpa.h>
#include <linux/mpa.h>
#include <linux/mpa.h>

/* Ops table for mpa */
extern const struct genl_split_ops mpa_nl_ops[4];

int mpa_nl_policy_get_doit(struct sk_buff *skb, struct genl_info *info);
int mpa_nl_policy_set_doit(struct sk_buff *skb, struct genl_info *info);
int mpa_nl_conn_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mpa_nl_stats_get_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	MPA_NLGRP_EVENTS,
};

#endif /* _LINUX_MPA_GEN_H */
