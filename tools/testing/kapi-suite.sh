#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test guest (tools/testing/vm/run): the in-kernel API's
# suite, the selftest program kapi driving the sample consumer
# samples/mpa/mpa_echo.ko (it loads and unloads the module itself). It runs
# in a guest of its own so that the kernel log and kmemleak's report of the
# run are its own. TAP goes to $MPA_RESULTS/kapi/kapi.tap; check.sh counts
# it as "kapi-<lane>".
out=$MPA_RESULTS/kapi
mkdir -p "$out"

modprobe mpa || echo "kapi-suite: modprobe mpa failed"
modinfo mpa_echo > /dev/null 2>&1 || echo "kapi-suite: mpa_echo.ko is not installed"
echo "kapi-suite: selftest kapi"
"$MPA_BUILD/selftests/kapi" > "$out/kapi.tap" 2>&1
echo "kapi-suite: selftest kapi exited $?"
# Whatever a failed test left loaded goes now, before the final kmemleak
# scan.
rmmod mpa_echo 2> /dev/null
exit 0
