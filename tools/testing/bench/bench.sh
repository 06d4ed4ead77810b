#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: MPA sockets against plain TCP, measured in one stock-kernel
# guest by tools/testing/bench/mpabench.c (guest.sh sets the guest up). A
# benchmark, not a test: it prints ratios and fails only if data went
# missing or a step failed. MPA_BENCH_ARGS passes options to mpabench
# (e.g. "-r 3 -s 50 -p throughput,align"); MPA_BENCH_MODULES=DIR runs it
# on the mpa.ko in DIR instead of this checkout's (tools/testing/vm/run
# --modules); MPA_BENCH_AB=DIR compares this checkout's mpa.ko (A) with
# DIR's (B) in one guest, MPA_BENCH_AB_RUNS runs of each (default 4) in
# turn (guest.sh). The output is also kept in .build/bench/bench.out.
set -e
. "$(dirname "$0")/../lib.sh"

"$MPA_TOP/tools/testing/deps.sh"
make -s -C "$MPA_TOP" modules-stock
mkdir -p "$MPA_BUILD/bench"
ksft=$("$MPA_TOP/tools/testing/srctree.sh")/tools/testing/selftests
# shellcheck disable=SC2086 # the flags are words
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare \
	-Wno-unused-function -D_GNU_SOURCE -I"$ksft" \
	-I"$MPA_TOP/include/uapi" -I"$MPA_TOP/tools/testing/selftests/net/mpa" \
	-o "$MPA_BUILD/bench/mpabench" "$MPA_TOP/tools/testing/bench/mpabench.c" \
	-lpthread
# icount.sh builds through here, and runs its own guests
[ -z "${MPA_BENCH_BUILD_ONLY:-}" ] || exit 0
set -o pipefail
mods=--no-build
[ -z "${MPA_BENCH_MODULES:-}" ] || mods="--modules $MPA_BENCH_MODULES"
ab='' timeout=1500
if [ -n "${MPA_BENCH_AB:-}" ]; then
	[ -f "$MPA_BENCH_AB/mpa.ko" ] || die "no mpa.ko in $MPA_BENCH_AB"
	runs=${MPA_BENCH_AB_RUNS:-4}
	# where the guest sees it (its /tmp is its own)
	mkdir -p "$MPA_BUILD/bench/b"
	cp "$MPA_BENCH_AB/mpa.ko" "$MPA_BUILD/bench/b/"
	ab="MPA_BENCH_AB=$MPA_BUILD/bench/b MPA_BENCH_AB_RUNS=$runs"
	timeout=$((runs * 2 * 1500))
fi
# shellcheck disable=SC2086 # $mods: one or two words
"$MPA_TOP/tools/testing/vm/run" --lane stock $mods --timeout $timeout \
	-- $ab tools/testing/bench/guest.sh "${MPA_BENCH_ARGS:-}" |
	tee "$MPA_BUILD/bench/bench.out"
