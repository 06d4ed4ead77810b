#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: every test of the project, on both lanes. Prints one line
# per suite and lane, "LABEL: N passed, N failed", then a total line, and
# exits non-zero if anything failed or did not run.
#
# MPA_CHECK selects parts (default: "static fuzz runner demo package stock
# debug"), or single suites of a lane that run in guests of their own
# (alone_suites below), e.g.
#   MPA_CHECK=stock make check
#   MPA_CHECK="faults-stock alloc-debug" make check
# MPA_CHECK_JOBS sets how many guests (and fuzz) run at once (default 2).
set -u
. "$(dirname "$0")/lib.sh"

parts=${MPA_CHECK:-static fuzz runner demo package stock debug}
out=$MPA_BUILD/check
T=$MPA_TOP/tools/testing
total_pass=0 total_fail=0
start=$(date +%s)

want() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }

# The suites in guests of their own, by name, as MPA_CHECK can pick them
# alone (e.g. MPA_CHECK="faults-stock churn-debug"); each is also part of
# its lane's part.
alone_suites="kapi-stock kapi-debug netlink-stock netlink-debug faults-stock
	faults-debug churn-stock churn-debug idle-stock alloc-debug interop-debug"
want interop && parts="$parts interop-debug"
# Is a suite wanted alone, of lane $1 if given?
want_alone() {
	local s
	for s in $alone_suites; do
		case $s in *-"${1:-}"*) ;; *) continue ;; esac
		want "$s" && ! want "${s##*-}" && return 0
	done
	return 1
}

report() {
	echo "$1: $2 passed, $3 failed"
	total_pass=$((total_pass + $2))
	total_fail=$((total_fail + $3))
}

# Parts that leave the host as it is (the guests' suites, fuzz, the runner
# checks, demo) run as jobs, MPA_CHECK_JOBS of them at once (default 2): a
# guest under TCG keeps the host's cores busy less than half of its time
# (its tests wait on sockets, timers and their own children), so two
# guests finish in little more time than one. Each job's output is kept
# and shown, and its counts added, in the order the jobs were started, as
# soon as it and every job before it have ended. The longest start first.
max_jobs=${MPA_CHECK_JOBS:-2}
case $max_jobs in
'' | *[!0-9]* | 0*) die "MPA_CHECK_JOBS must be a number from 1 on, not '$max_jobs'" ;;
esac
job_dir=$out/jobs
job_names=() job_next=0

# job NAME COMMAND...: run COMMAND (a function of this script) once fewer
# than max_jobs jobs run.
job() {
	local name=$1
	shift
	while [ "$(jobs -pr | wc -l)" -ge "$max_jobs" ]; do
		wait -n
		jobs_show
	done
	mkdir -p "$job_dir"
	rm -f "$job_dir/$name".*
	# (in a subshell of its own: a die or exit in it still ends the job)
	{
		( "$@" ) > "$job_dir/$name.out" 2> "$job_dir/$name.err"
		: > "$job_dir/$name.done"
	} &
	job_names+=("$name")
}

# Show the ended jobs that no running one was started before. A job that
# reported no count fails: whatever it was to run did not report.
jobs_show() {
	local name line counted
	while [ "$job_next" -lt "${#job_names[@]}" ]; do
		name=${job_names[$job_next]}
		[ -e "$job_dir/$name.done" ] || return 0
		cat "$job_dir/$name.err" >&2
		counted=
		while IFS= read -r line; do
			if [[ $line =~ ^([^:]+):\ ([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
				report "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"
				counted=1
			else
				printf '%s\n' "$line"
			fi
		done < "$job_dir/$name.out"
		if [ -z "$counted" ]; then
			msg "$name: the job reported no count"
			report "$name" 0 1
		fi
		job_next=$((job_next + 1))
	done
}

# Every job has ended then: one that did not get to its end (killed) is
# shown, and fails, as one that reported nothing.
jobs_finish() {
	local name
	wait
	for name in "${job_names[@]}"; do
		[ -e "$job_dir/$name.done" ] && continue
		msg "$name: the job ended before its end"
		echo "$name: 0 passed, 1 failed" >> "$job_dir/$name.out"
		: > "$job_dir/$name.done"
	done
	jobs_show
}

# Count a TAP/KTAP stream from the kselftest harness: "ok" lines pass;
# "not ok" and skipped ones fail (a test that did not run is no pass);
# planned tests that never reported fail too, and a "Bail out!" (a suite
# that gave up, perhaps before its plan) is one more. Prints "PASSED
# FAILED".
count_tap() {
	local f=$1 plan pass fail skip bail
	if [ ! -s "$f" ]; then
		echo "0 1"
		return
	fi
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$f" | head -n 1)
	pass=$(grep -E -c '^ok [0-9]+ ' "$f" | head -n 1)
	skip=$(grep -E -c '^ok [0-9]+ .*# *SKIP' "$f" | head -n 1)
	fail=$(grep -E -c '^not ok [0-9]+ ' "$f" | head -n 1)
	bail=$(grep -c '^Bail out!' "$f" | head -n 1)
	pass=$((pass - skip))
	fail=$((fail + skip + bail))
	# no plan, or a plan of none (nothing ran: no pass either)
	if [ -z "$plan" ] || [ "$plan" = 0 ]; then
		fail=$((fail + 1))
	elif [ $((pass + fail)) -lt "$plan" ]; then
		fail=$((plan - pass))
	fi
	echo "$pass $fail"
}

# The failed cases of a TAP file, then the harness's failed assertions
# ("# file.c:LINE:test:Expected ...") with the line each logged, so that a
# CI log names the cause.
show_tap_failures() {
	{
		grep -E '^(not ok|ok .*# *SKIP)|^# +(FAIL|SKIP)|Bail out' "$1"
		grep -A1 -E '^# [A-Za-z0-9_-]+\.c:[0-9]+:[^:]*:Expected ' "$1" | grep -v '^--$'
	} 2>/dev/null | cut -c 1-240 | head -n 40 | sed 's/^/    /' >&2
}

# The kernel log check of a guest run: a splat or a kmemleak report fails
# the lane even when every test passed.
guest_log_cases() {
	local lane=$1 res=$2 rc=$3
	local pass=0 fail=0
	if [ "$rc" = 125 ] || [ "$rc" = 126 ] || [ "$rc" = 124 ]; then
		fail=$((fail + 1))
		msg "$lane guest: exit $rc (see $res/console.log)"
		# what the kernel said, so that a CI log names the cause
		if [ -s "$res/splat" ]; then
			head -n 12 "$res/splat" | cut -c 1-200 | sed 's/^/    /' >&2
		elif [ -f "$res/console.log" ]; then
			tail -n 12 "$res/console.log" | cut -c 1-200 | sed 's/^/    /' >&2
		fi
	else
		pass=$((pass + 1))
	fi
	if [ "$lane" = debug ]; then
		# kmemleak must have scanned and found nothing.
		if [ -f "$res/kmemleak" ] && [ ! -s "$res/kmemleak" ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			msg "$lane guest: kmemleak reported leaks or did not run"
		fi
	fi
	echo "$pass $fail"
}

# A suite in a guest of its own, so that a splat or a leak is told apart
# from the other suites': its TAP ($MPA_RESULTS/NAME/NAME.tap), plus "the
# guest's kernel log is clean" and, on the debug lane, "kmemleak found
# nothing", reported as NAME-LANE. Arguments after the script go before it
# on the guest's command line (VAR='value' settings for it). A suite whose
# TAP is made on the host from what the guest left sets SUITE_HOST_STEP to
# the command that makes it (it gets $MPA_RESULTS/NAME as its argument).
#
# SUITE_MEM=MB gives the guest that much memory.
run_guest_suite() {
	local lane=$1 name=$2 script=$3 rc p f lp lf t0
	local res=$out/$lane-$name
	shift 3
	rm -rf "$res"
	mkdir -p "$res"
	t0=$(date +%s)
	"$T/vm/run" --lane "$lane" --no-build --quiet --timeout 1800 --results "$res" \
		${SUITE_MEM:+--memory "$SUITE_MEM"} \
		-- "$@" "$script" > "$res/run.log" 2>&1
	rc=$?
	if [ -n "${SUITE_HOST_STEP:-}" ]; then
		$SUITE_HOST_STEP "$res/$name" > "$res/$name-host.log" 2>&1
	fi
	echo "$(($(date +%s) - t0))" > "$res/seconds"
	read -r p f < <(count_tap "$res/$name/$name.tap")
	[ "$f" = 0 ] || show_tap_failures "$res/$name/$name.tap"
	read -r lp lf < <(guest_log_cases "$lane" "$res" "$rc")
	report "$name-$lane" $((p + lp)) $((f + lf))
}

# The in-kernel API's suite: the kapi selftest driving the sample consumer
# (samples/mpa/mpa_echo.ko).
run_kapi() {
	if [ ! -x "$MPA_BUILD/selftests/kapi" ]; then
		msg "no kapi selftest program (see $out/selftests-build.log)"
		report "kapi-$1" 0 1
		return
	fi
	run_guest_suite "$1" kapi tools/testing/kapi-suite.sh
}

# Networks that misbehave: the faults selftest (netem, a corrupting tc
# filter, path MTU changes; mpa_echo.ko for mpa_kmulpdu()).
run_faults() {
	if [ ! -x "$MPA_BUILD/selftests/faults" ]; then
		msg "no faults selftest program (see $out/selftests-build.log)"
		report "faults-$1" 0 1
		return
	fi
	run_guest_suite "$1" faults tools/testing/faults-suite.sh
}

# The control plane's suite: netlink.py (the "mpa" generic netlink family
# through YNL, cli.py and mpactl; /proc/net/mpa_stat). The guest's HOME is
# not ours: it is told where the kernel tree with YNL is.
run_netlink() {
	run_guest_suite "$1" netlink tools/testing/netlink-suite.sh \
		"MPA_SRCTREE='$(mpa_source_tree)'"
}

# Interop with Linux soft-iWARP (siw, built into the debug kernel only):
# rdma-core's rdma_server and rdma_client against mpacat and mpa_echo.ko
# (tools/testing/interop-suite.sh); tshark then decodes each case's
# capture here (interop-decode.py), which writes the TAP.
run_interop() {
	SUITE_HOST_STEP="/usr/bin/python3 $T/interop-decode.py" \
		run_guest_suite debug interop tools/testing/interop-suite.sh \
		"MPA_YNL_DIR='$(mpa_source_tree)/tools/net/ynl'"
}

# Suites of their own, from the selftest programs of the same names
# (tools/testing/stress-suite.sh): churn on both lanes, the 10 000 idle
# connections on stock (with 2 GiB), allocation failures on debug (fault
# injection).
own_suites=" kapi faults churn idle alloc "

run_stress() {
	local lane=$1 name=$2

	if [ ! -x "$MPA_BUILD/selftests/$name" ]; then
		msg "no $name selftest program (see $out/selftests-build.log)"
		report "$name-$lane" 0 1
		return
	fi
	run_guest_suite "$lane" "$name" tools/testing/stress-suite.sh "MPA_SUITE=$name"
}

# A lane's selftests in one guest (tools/testing/guest-suite.sh), with
# KUnit first on the debug lane.
run_selftests() {
	local lane=$1 rc p f lp lf t
	local res=$out/$lane
	rm -rf "$res"
	mkdir -p "$res"
	# (an hour: the stock lane's wrap moves more than 4 GiB, minutes
	# under TCG, many more on a loaded machine)
	"$T/vm/run" --lane "$lane" --no-build --quiet --timeout 3600 --results "$res" \
		-- tools/testing/guest-suite.sh > "$res/run.log" 2>&1
	rc=$?

	if [ "$lane" = debug ]; then
		local src kres e
		src=$(mpa_source_tree)
		kres=$(python3 "$src/tools/testing/kunit/kunit.py" parse "$res/kunit.log" 2>&1)
		echo "$kres" > "$res/kunit.parsed"
		p=$(echo "$kres" | sed -n 's/.*Ran [0-9]* tests: passed: \([0-9]*\).*/\1/p' | tail -n 1)
		t=$(echo "$kres" | sed -n 's/.*Ran \([0-9]*\) tests:.*/\1/p' | tail -n 1)
		if [ -z "$t" ] || [ "$t" = 0 ]; then
			msg "no KUnit results (see $res/kunit.parsed)"
			report kunit 0 1
		else
			[ "$p" = "$t" ] || echo "$kres" | grep -E '\[(FAILED|CRASHED|SKIPPED)\]' | head -n 20 >&2
			# a log kunit.py could not read whole (a test that never
			# reported, a missing plan) fails once more
			e=$(echo "$kres" |
				sed -n 's/.*Ran [0-9]* tests:.*errors: \([0-9]*\).*/\1/p' |
				tail -n 1)
			[ "${e:-0}" = 0 ] ||
				msg "KUnit: $e errors in the log (see $res/kunit.parsed)"
			report kunit "${p:-0}" $((t - ${p:-0} + ${e:-0}))
		fi
	fi

	p=0 f=0
	for t in "$MPA_BUILD"/selftests/*; do
		[ -x "$t" ] || continue
		# kapi, churn, ... are suites of their own; wrap runs on stock only
		case "$own_suites" in *" $(basename "$t") "*) continue ;; esac
		[ "$(basename "$t")" = wrap ] && [ "$lane" = debug ] && continue
		read -r lp lf < <(count_tap "$res/selftests/$(basename "$t").tap")
		[ "$lf" = 0 ] || show_tap_failures "$res/selftests/$(basename "$t").tap"
		p=$((p + lp)) f=$((f + lf))
	done
	read -r lp lf < <(guest_log_cases "$lane" "$res" "$rc")
	report "selftests-$lane" $((p + lp)) $((f + lf))
}

run_idle() {
	SUITE_MEM=2048 run_stress stock idle
}

mkdir -p "$out"
"$T/deps.sh" || { report deps 0 1; echo "total: $total_pass passed, $total_fail failed"; exit 1; }

if want debug || want_alone debug; then
	# The first run builds the debug kernel (about 10 minutes).
	"$T/lane.sh" debug > /dev/null || msg "preparing the debug lane failed"
fi

if want static; then
	lanes=stock
	want debug && lanes="stock debug"
	"$T/static.sh" $lanes > "$out/static.tap" 2>"$out/static.err"
	rc=$?
	cat "$out/static.err" >&2
	fail=$(grep -c '^not ok ' "$out/static.tap")
	# static.sh gave up before its checks (no source tree): one failure
	[ "$rc" != 0 ] && [ "$fail" = 0 ] && fail=1
	report static "$(grep -c '^ok ' "$out/static.tap")" "$fail"
	grep '^not ok' "$out/static.tap" | sed 's/^/    /' >&2
fi

run_fuzz() {
	local line p f
	if [ -f "$T/fuzz/Makefile" ]; then
		make -s -C "$T/fuzz" check > "$out/fuzz.log" 2>&1
		line=$(grep -E '^fuzz: [0-9]+ passed, [0-9]+ failed' "$out/fuzz.log" | tail -n 1)
		grep -E '^fuzz-execs:' "$out/fuzz.log" >&2
		if [ -n "$line" ]; then
			p=$(echo "$line" | sed 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/')
			f=$(echo "$line" | sed 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/')
			report fuzz "$p" "$f"
		else
			tail -n 20 "$out/fuzz.log" >&2
			report fuzz 0 1
		fi
	else
		report fuzz 0 1
	fi
}

# The guest runner's own detectors must be able to fire, or a clean run
# means nothing: the guest's exit status comes back, a kernel backtrace
# fails the run (125), and the wall-clock limit stops a stuck guest (124).
run_runner_checks() {
	local p=0 f=0 rc name want cmd
	# A guest that dies of what looks like TCG's int3 Oops in kernel text
	# (the breakpoint gone from the text already) is run again, once its
	# command has left "crashed" in its results; the same Oops in a
	# module's text, or with the int3 still there, is not.
	local int3="[ -f /run/results/crashed ] && exit 0; touch /run/results/crashed"
	int3="$int3; echo '<2>Oops: int3: 0000 [#1] PREEMPT SMP NOPTI' > /dev/kmsg"
	int3="$int3; echo '<2>RIP: 0010:%s' > /dev/kmsg"
	int3="$int3; echo '<2>Code: 41 54 55 53 %s e8 41 ac f0 ff' > /dev/kmsg"
	int3="$int3; echo c > /proc/sysrq-trigger"
	local int3_kernel int3_module int3_present
	# shellcheck disable=SC2059 # the format is ours
	int3_kernel=$(printf "$int3" 'sched_clock_cpu+0x9/0x190' '66 <90>')
	# shellcheck disable=SC2059
	int3_module=$(printf "$int3" 'mpa_tx_push+0x9/0x190 [mpa]' '66 <90>')
	# shellcheck disable=SC2059
	int3_present=$(printf "$int3" 'sched_clock_cpu+0x9/0x190' 'cc <90>')
	while IFS='|' read -r name want cmd; do
		rm -rf "$out/runner-$name"
		"$T/vm/run" --lane stock --quiet --timeout "${cmd%%:*}" \
			--results "$out/runner-$name" -- "${cmd#*:}" > "$out/runner-$name.log" 2>&1
		rc=$?
		# (a run that died booting first, a TCG flake, was run again
		# already: the int3 run is then the second or third)
		if [ "$name" = int3 ] &&
		   ! compgen -G "$out/runner-$name/console.int3-*.log" > /dev/null; then
			f=$((f + 1))
			msg "runner check $name: the guest was not run again after the int3 Oops"
		elif [ "$rc" = "$want" ]; then
			p=$((p + 1))
		else
			f=$((f + 1))
			msg "runner check $name: exit $rc, expected $want"
		fi
	done <<-EOF
		status|3|300:modprobe mpa && exit 3
		splat|125|300:echo l > /proc/sysrq-trigger; grep -q -m 1 'Call Trace:' /dev/kmsg; exit 0
		timeout|124|25:sleep 600
		int3|0|300:$int3_kernel
		int3-module|126|300:$int3_module
		int3-present|126|300:$int3_present
	EOF
	report runner $p $f
}

# The front door: the README's make demo, whole, as a new user runs it.
run_demo() {
	if "$T/demo.sh" > "$out/demo.log" 2>&1; then
		report demo 1 0
	else
		grep -E 'demo: FAILED|mpa: error' "$out/demo.log" | sed 's/^/    /' >&2
		msg "make demo failed (see $out/demo.log)"
		report demo 0 1
	fi
}

# The Debian packages (make deb, lintian, DKMS building mpa.ko for the
# stock kernel, that module in a stock guest with the attach selftest and
# the installed tools), make install, and a purge that leaves the host as
# it was (tools/testing/package-suite.sh).
if want package; then
	"$T/package-suite.sh" > "$out/package.tap" 2> "$out/package.err"
	grep -E '^ *lintian: |FAIL' "$out/package.err" >&2
	read -r p f < <(count_tap "$out/package.tap")
	[ "$f" = 0 ] || show_tap_failures "$out/package.tap"
	report package "$p" "$f"
fi

# Everything the jobs run is built now, so that no job builds while
# another's guest loads what it built.
if want stock || want debug || want_alone; then
	# a suite not built would not run, and not count: one failure
	make -s -C "$MPA_TOP" selftests > "$out/selftests-build.log" 2>&1 ||
		{ cat "$out/selftests-build.log" >&2; msg "building the selftests failed"
		  report selftests-build 0 1; }
fi
built=
for lane in stock debug; do
	want "$lane" || want_alone "$lane" ||
		{ [ $lane = stock ] && { want runner || want demo; }; } || continue
	if make -s -C "$MPA_TOP" "modules-$lane" > "$out/build-$lane.log" 2>&1; then
		built="$built $lane"
	else
		msg "building the $lane lane failed:"
		tail -n 20 "$out/build-$lane.log" >&2
	fi
done
if want demo; then
	make -s -C "$MPA_TOP" mpacat > "$out/mpacat-build.log" 2>&1 ||
		cat "$out/mpacat-build.log" >&2
fi

# suite SUITE-LANE COMMAND...: the suite's job, if it is wanted (with its
# lane, or alone); its failure if its lane did not build.
suite() {
	local lane=${1##*-}
	want "$lane" || want "$1" || return 0
	case " $built " in *" $lane "*) job "$@"; return ;; esac
	[ "$1" = selftests-debug ] && report kunit 0 1
	report "$1" 0 1
}

# The jobs, the longest first.
suite selftests-debug run_selftests debug
suite kapi-debug run_kapi debug
suite selftests-stock run_selftests stock
suite netlink-debug run_netlink debug
suite interop-debug run_interop
suite faults-debug run_faults debug
suite netlink-stock run_netlink stock
want fuzz && job fuzz run_fuzz
suite alloc-debug run_stress debug alloc
suite kapi-stock run_kapi stock
want runner && job runner run_runner_checks
suite churn-debug run_stress debug churn
suite faults-stock run_faults stock
suite idle-stock run_idle
want demo && job demo run_demo
suite churn-stock run_stress stock churn
jobs_finish

echo "total: $total_pass passed, $total_fail failed"
msg "make check took $(($(date +%s) - start)) s; logs in $out"
[ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]
