#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tools/testing/bench/icount.sh [-n GUESTS] [-r TRANSFERS] [-s SCALE%]
#                                      [-S SIZE] [KIND...]
#
# Guest instructions per send, counted rather than timed: each KIND of
# transfer of the benchmark's sides part (mpabench -X: tcp, both, writes,
# reads; default all four) runs in a stock guest of its own, 2 vCPUs
# under TCG, writer on vCPU 0 and reader on vCPU 1, with the QEMU plugin
# tools/testing/bench/icount.c counting every instruction each vCPU
# executes between the two sync() calls around the transfers. The
# report (icount-report.py) gives instructions per send on each vCPU
# against plain TCP's, and the kernel functions where the writer's vCPU
# differs most. The counts do not move with the host's speed as times do,
# but they do move with the transfer's own dynamics (how many ACKs and
# wakeups it takes, how the softirq work falls between the vCPUs), so each
# kind runs in GUESTS guests (default 3), in turn (tcp both writes reads,
# tcp both ...), and the report gives medians. The plugin also samples,
# about every 100 us of host time, the block each vCPU is in: the report adds
# where each vCPU's busy time went, as shares (under TCG an instruction's
# time varies widely: a spin-wait, an atomic, a miss in QEMU's software
# TLB), which the host's speed does not move as it moves the times
# themselves. About 25 s a guest.
# Files: .build/bench/icount/. Not under KVM (a TCG plugin).
set -e
. "$(dirname "$0")/../lib.sh"

sides_opts n:r:s:S: "$0 [-n GUESTS] [-r TRANSFERS] [-s SCALE%] [-S SIZE] [KIND...]" "$@"
shift $((OPTIND - 1))
kinds=$(sides_kinds "$@")
[ "$guests" -ge 1 ] 2> /dev/null || die "-n $guests: one guest at least"

MPA_BENCH_BUILD_ONLY=1 "$MPA_TOP/tools/testing/bench/bench.sh"
plugin=$MPA_BUILD/bench/libicount.so
gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -shared -fPIC \
	-o "$plugin" "$MPA_TOP/tools/testing/bench/icount.c" -lpthread
out=$MPA_BUILD/bench/icount
rm -rf "$out"
mkdir -p "$out"

# The window opens and closes at ksys_sync(), which mpabench -X reaches
# through sync() around its transfers (nothing in the guest syncs before);
# the guest boots with nokaslr, so its address holds from guest to guest.
# (Debian's System.map is a stub: ask a guest.)
"$MPA_TOP/tools/testing/vm/run" --lane stock --no-build -q -r "$out/sym" \
	-- "grep -w ksys_sync /proc/kallsyms > /run/results/sym" > /dev/null
addr=$(awk '{ print $1; exit }' "$out/sym/sym")
[ -n "$addr" ] || die "no ksys_sync in the guest's /proc/kallsyms"

for i in $(seq "$guests"); do
	for kind in $kinds; do
		echo "icount: $kind, guest $i of $guests" >&2
		"$MPA_TOP/tools/testing/vm/run" --lane stock --no-build -q \
			-r "$out/$kind.$i" --timeout 1500 \
			--plugin "$plugin,outfile=$out/$kind.$i.counts,start=$addr" \
			-- "tools/testing/bench/guest.sh -p sides -X $kind -c 2" \
			"-r $rounds -s $scale -S $size > /run/results/run.txt &&" \
			"cat /proc/kallsyms > /run/results/kallsyms" \
			> "$out/$kind.$i.log"
	done
done
# shellcheck disable=SC2086 # the kinds are words
python3 "$MPA_TOP/tools/testing/bench/icount-report.py" "$out" "$guests" $kinds
