#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run libFuzzer targets over a scratch corpus seeded from corpus/<target>/
# (which is only read). A TARGET given as NAME runs for at most RUNS
# executions (0: no limit) and TIME seconds; one given as NAME@N runs
# exactly N executions, however long that takes, and fails if it ran
# fewer. Prints one "fuzz-execs:" line (executions, verdict and seconds of
# each target) and one "fuzz: N passed, N failed" line; exits non-zero if
# a target failed.
#
# usage: run.sh OUTDIR RUNS TIME TARGET...
set -u
out=$1 runs=$2 time=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
pass=0 fail=0 execs=""

for spec in "$@"; do
	t=${spec%@*} want=0
	[ "$t" != "$spec" ] && want=${spec#*@}
	work=$out/corpus-$t
	log=$out/fuzz_$t.log
	mkdir -p "$work" "$out/artifacts"
	args=(-print_final_stats=1 -artifact_prefix="$out/artifacts/$t-"
	      -max_len=70000)
	if [ "$want" != 0 ]; then
		args+=(-runs="$want")
	else
		args+=(-max_total_time="$time")
		[ "$runs" != 0 ] && args+=(-runs="$runs")
	fi
	start=$(date +%s)
	"$out/fuzz_$t" "${args[@]}" "$work" "$here/corpus/$t" > "$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	if [ "$rc" = 0 ] && [ "${n:-0}" -ge "$want" ]; then
		pass=$((pass + 1))
		verdict=ok
	else
		fail=$((fail + 1))
		verdict=FAILED
		tail -n 30 "$log" >&2
	fi
	execs="$execs $t=${n:-0}($verdict, ${secs}s)"
done

echo "fuzz-execs:$execs"
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
