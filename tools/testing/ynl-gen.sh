#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate the netlink code of Documentation/netlink/specs/mpa.yaml with the
# kernel's own generator (tools/net/ynl/ynl-gen-c.py of linux-source-6.12),
# the way the kernel tree keeps its generated families:
#   include/uapi/linux/mpa_netlink.h   the family's uAPI
#   mpa/netlink_gen.h, mpa/netlink_gen.c  policies and the ops table
#
# Usage: ynl-gen.sh           regenerate the three files
#        ynl-gen.sh --check   fail if any of them differs from the spec
set -e
. "$(dirname "$0")/lib.sh"

SRC=$(mpa_source_tree)
GEN=$SRC/tools/net/ynl/ynl-gen-c.py
SPEC=$MPA_TOP/Documentation/netlink/specs/mpa.yaml
PY=/usr/bin/python3

# ynl-gen-c.py finds the schema next to the spec's directory, and names
# the spec by its path below the tree's top (the one with MAINTAINERS).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/Documentation/netlink/specs" "$tmp/out"
touch "$tmp/MAINTAINERS"
cp "$SPEC" "$tmp/Documentation/netlink/specs/mpa.yaml"
# (the spec is genetlink-legacy: the 6.12 schema of plain genetlink has
# no uns-admin-perm flag)
ln -s "$SRC"/Documentation/netlink/genetlink*.yaml "$tmp/Documentation/netlink/"

gen() {
	local mode=$1 kind=$2 out=$3 new
	new=$tmp/out/$(basename "$out")
	(cd "$SRC/tools/net/ynl" && "$PY" "$GEN" --mode "$mode" "--$kind" \
		--spec "$tmp/Documentation/netlink/specs/mpa.yaml" -o "$new") ||
		die "ynl-gen-c.py failed"
	if [ "$CHECK" = 1 ]; then
		cmp -s "$new" "$MPA_TOP/$out" ||
			die "$out is out of date with mpa.yaml (run tools/testing/ynl-gen.sh)"
	else
		cp "$new" "$MPA_TOP/$out"
	fi
}

CHECK=0
[ "$1" = --check ] && CHECK=1
gen uapi header include/uapi/linux/mpa_netlink.h
gen kernel header mpa/netlink_gen.h
gen kernel source mpa/netlink_gen.c
[ "$CHECK" = 1 ] && echo "netlink code matches mpa.yaml"
exit 0
