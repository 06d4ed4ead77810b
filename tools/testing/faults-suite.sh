#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test guest (tools/testing/vm/run): the suite of networks
# that misbehave, the selftest program faults (network namespaces joined by
# veth pairs with tc on the path: netem, a corrupting pedit + csum filter,
# path MTU changes through a router namespace; the sample consumer
# samples/mpa/mpa_echo.ko for mpa_kmulpdu()). It runs in a guest of its own
# so that the kernel log and kmemleak's report of the run are its own. TAP
# goes to $MPA_RESULTS/faults/faults.tap; check.sh counts it as
# "faults-<lane>". Arguments, if any, go to the program (e.g. -f corrupt).
out=$MPA_RESULTS/faults
mkdir -p "$out"

modprobe mpa || echo "faults-suite: modprobe mpa failed"
modinfo mpa_echo > /dev/null 2>&1 || echo "faults-suite: mpa_echo.ko is not installed"
echo "faults-suite: selftest faults"
"$MPA_BUILD/selftests/faults" "$@" > "$out/faults.tap" 2>&1
echo "faults-suite: selftest faults exited $?"
# Whatever a failed test left behind goes now, before the final kmemleak
# scan.
rmmod mpa_echo 2> /dev/null
for ns in $(ip netns list 2>/dev/null | sed -n 's/^\(mpaf-[^ ]*\).*/\1/p'); do
	ip netns del "$ns"
done
exit 0
