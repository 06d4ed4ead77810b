#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# usage: tools/testing/bench/spinstacks.sh [-r TRANSFERS] [-s SCALE%]
#                                          [-S SIZE] [KIND...]
#
# Which spinlocks the transfers of the benchmark's sides part contend on,
# by kernel stack: each KIND (mpabench -X: tcp, both, writes, reads;
# default all four) runs in turn in one stock guest, writer on vCPU 0 and
# reader on vCPU 1, with a kprobe on native_queued_spin_lock_slowpath()
# (the contended path of every spinlock) whose hist trigger counts the
# vCPUs and stacks it is reached from (spinstacks-guest.sh). The report
# gives, per kind, the slow-path entries per 1000 sends and the vCPUs and
# stacks that reach it most. It counts the waiters only: whom they wait
# for, it does not say.
#
# Under TCG a contended spinlock costs far more time than its instructions
# count (each PAUSE of the wait leaves the translated code), so where
# tools/testing/bench/icount.sh's time samples show the writer's vCPU in
# native_queued_spin_lock_slowpath, this tells which locks, taken where.
# About a minute. Files: .build/bench/spinstacks/.
set -e
. "$(dirname "$0")/../lib.sh"

sides_opts r:s:S: "$0 [-r TRANSFERS] [-s SCALE%] [-S SIZE] [KIND...]" "$@"
shift $((OPTIND - 1))
kinds=$(sides_kinds "$@")

MPA_BENCH_BUILD_ONLY=1 "$MPA_TOP/tools/testing/bench/bench.sh"
out=$MPA_BUILD/bench/spinstacks
rm -rf "$out"
"$MPA_TOP/tools/testing/vm/run" --lane stock --no-build -q -r "$out" \
	--timeout 1500 -- "tools/testing/bench/spinstacks-guest.sh" \
	"-r $rounds -s $scale -S $size $kinds" > "$out.log" ||
	die "the guest failed: see $out/console.log and $out/out"
# shellcheck disable=SC2086 # the kinds are words
python3 - "$out" $kinds <<'PY'
import re
import sys

top, kinds = sys.argv[1], sys.argv[2:]
for kind in kinds:
    with open(f'{top}/{kind}.run') as f:
        sends = int(re.search(r'icount: \S+, \d+ transfers, (\d+) sends',
                              f.read()).group(1))
    with open(f'{top}/{kind}.hist') as f:
        hist = f.read()
    stacks = []
    for cpu, body, hits in re.findall(r'\{ common_cpu:\s*(\d+), '
                                      r'common_stacktrace:\n(.*?)\} '
                                      r'hitcount:\s+(\d+)', hist, re.S):
        frames = [line.strip().split('+')[0] for line in body.splitlines()]
        # from the lock call on: the kprobe's own frames are left out
        while frames and not frames[0].startswith('native_queued'):
            frames.pop(0)
        stacks.append((int(hits), cpu, frames[1:8]))
    if not stacks:
        sys.exit(f'spinstacks: {kind}: nothing in {top}/{kind}.hist')
    stacks.sort(key=lambda s: -s[0])
    total = sum(h for h, _, _ in stacks)
    print(f'== {kind}: {total * 1000 / sends:.1f} contended spinlock '
          f'acquisitions per 1000 sends ({sends} sends; the whole run); '
          'per 1000 sends, the vCPU and the stack:')
    for hits, cpu, frames in stacks[:8]:
        print(f'  {hits * 1000 / sends:7.1f}  {cpu}  ' + ' < '.join(frames))
PY
