#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test guest (tools/testing/vm/run): the control plane's
# suite, tools/testing/selftests/net/mpa/netlink.py (the "mpa" generic
# netlink family through the kernel's YNL library, cli.py and mpactl, and
# /proc/net/mpa_stat). It runs in a guest of its own so that the kernel log
# and kmemleak's report of the run are its own. TAP goes to
# $MPA_RESULTS/netlink/netlink.tap; check.sh counts it as "netlink-<lane>".
#
# MPA_SRCTREE: the kernel source tree with tools/net/ynl (check.sh passes
# it; the guest's HOME is not the host's, so srctree.sh may not find it).
# Arguments, if any, are test names to run alone.
out=$MPA_RESULTS/netlink
mkdir -p "$out"

modprobe mpa || echo "netlink-suite: modprobe mpa failed"
modinfo mpa_echo > /dev/null 2>&1 || echo "netlink-suite: mpa_echo.ko is not installed"
export MPA_SRCTREE
echo "netlink-suite: netlink.py"
/usr/bin/python3 tools/testing/selftests/net/mpa/netlink.py "$@" > "$out/netlink.tap" 2>&1
echo "netlink-suite: netlink.py exited $?"
# Whatever a failed test left behind goes now, before the final kmemleak
# scan.
rmmod mpa_echo 2> /dev/null
for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(mpanl-[^ ]*\).*/\1/p'); do
	ip netns del "$ns"
done
exit 0
