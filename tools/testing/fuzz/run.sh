#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each libFuzzer target for at most RUNS executions (0: no limit) and
# TIME seconds, over a scratch corpus seeded from corpus/<target>/ (which
# is only read).  Prints one "fuzz-execs:" line and one
# "fuzz: N passed, N failed" line; exits non-zero if a target failed.
#
# usage: run.sh OUTDIR RUNS TIME TARGET...
set -u
out=$1 runs=$2 time=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0 execs=""

for t in "$@"; do
	work=$out/corpus-$t
	log=$out/fuzz_$t.log
	mkdir -p "$work" "$out/artifacts"
	args=(-max_total_time="$time" -print_final_stats=1
	      -artifact_prefix="$out/artifacts/$t-" -max_len=70000)
	[ "$runs" != 0 ] && args+=(-runs="$runs")
	if "$out/fuzz_$t" "${args[@]}" "$work" "$here/corpus/$t" \
		> "$log" 2>&1; then
		pass=$((pass + 1))
		verdict=ok
	else
		fail=$((fail + 1))
		verdict=FAILED
		tail -n 30 "$log" >&2
	fi
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	execs="$execs $t=${n:-0}($verdict)"
done

echo "fuzz-execs:$execs"
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
