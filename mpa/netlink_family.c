// SPDX-License-Identifier: GPL-2.0
/*
 * The "mpa" generic netlink family itself. Its spec is genetlink-legacy,
 * the one 6.12 schema that knows the uns-admin-perm flag (POLICY_SET's
 * permission, GENL_UNS_ADMIN_PERM), and ynl-gen-c.py leaves the struct
 * genl_family of such a family to the family's own code. The generated
 * ops and multicast group tables are static to the generated source, so
 * the family is defined here, in the same unit, and nothing is written
 * twice.
 */
#include "netlink_gen.c"
#include "netns.h"

struct genl_family mpa_nl_family __ro_after_init = {
	.name		= MPA_FAMILY_NAME,
	.version	= MPA_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= mpa_nl_ops,
	.n_split_ops	= ARRAY_SIZE(mpa_nl_ops),
	.mcgrps		= mpa_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(mpa_nl_mcgrps),
};
