#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test guest (tools/testing/vm/run): one of the stress
# selftests, in a guest of its own so that the kernel log and kmemleak's
# report of the run are its own (check.sh runs them as churn-<lane>,
# idle-stock and alloc-debug):
#
#   churn   thousands of MPA connections ended at random points; the
#           module's objects and the namespace's connections come back
#   idle    10 000 idle connections in Full Operation and what MPA costs
#           each (run it with 2 GiB of guest memory)
#   alloc   allocation failures injected into the module's call sites
#           (debug lane: failslab, fail_page_alloc)
#
# MPA_SUITE names the program; its TAP goes to
# $MPA_RESULTS/$MPA_SUITE/$MPA_SUITE.tap. Arguments are passed to it (e.g.
# -t TEST). Settings such as MPA_CHURN_SEED=... reach it through the
# environment.
name=${MPA_SUITE:?MPA_SUITE names the selftest}
out=$MPA_RESULTS/$name
mkdir -p "$out"

modprobe mpa || echo "$name-suite: modprobe mpa failed"
echo "$name-suite: selftest $name"
start=$(date +%s)
"$MPA_BUILD/selftests/$name" "$@" > "$out/$name.tap" 2>&1
echo "$name-suite: selftest $name exited $? after $(($(date +%s) - start)) s"
# Whatever a failed test left loaded goes now, before the final kmemleak
# scan.
rmmod mpa_echo 2> /dev/null
exit 0
