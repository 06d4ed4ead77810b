// SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-3-Clause)
/* Do not edit directly, auto-generated from: */
/*	Documentation/netlink/specs/mpa.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "netlink_gen.h"

#include <uapi/linux/mpa_netlink.h>
#include <linux/mpa.h>
#include <linux/mpa.h>
#include <linux/mpa.h>
#include <linux/mpa.h>

/* Integer value ranges */
static const struct netlink_range_validation mpa_a_policy_timeout_ms_range = {
	.min	= 1ULL,
	.max	= 3600000ULL,
};

/* MPA_CMD_POLICY_SET - do */
static const struct nla_policy mpa_policy_set_nl_policy[MPA_A_POLICY_TIMEOUT_MS + 1] = {
	[MPA_A_POLICY_CRC_OFF_ALLOWED] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPA_A_POLICY_MARKERS] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPA_A_POLICY_INITIATOR_REV] = NLA_POLICY_RANGE(NLA_U8, 1, 2),
	[MPA_A_POLICY_RESPONDER_REVS] = NLA_POLICY_MASK(NLA_U32, 0x6),
	[MPA_A_POLICY_PERMISSIVE] = NLA_POLICY_MAX(NLA_U8, 1),
	[MPA_A_POLICY_TIMEOUT_MS] = NLA_POLICY_FULL_RANGE(NLA_U32, &mpa_a_policy_timeout_ms_range),
};

/* Ops table for mpa */
const struct genl_split_ops mpa_nl_ops[4] = {
	{
		.cmd	= MPA_CMD_POLICY_GET,
		.doit	= mpa_nl_policy_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MPA_CMD_POLICY_SET,
		.doit		= mpa_nl_policy_set_doit,
		.policy		= mpa_policy_set_nl_policy,
		.maxattr	= MPA_A_POLICY_TIMEOUT_MS,
		.flags		= GENL_UNS_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MPA_CMD_CONN_GET,
		.dumpit	= mpa_nl_conn_get_dumpit,
		.flags	= GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= MPA_CMD_STATS_GET,
		.doit	= mpa_nl_stats_get_doit,
		.flags	= GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group mpa_nl_mcgrps[] = {
	[MPA_NLGRP_EVENTS] = { "events", },
};
