#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# In the guest, for tools/testing/bench/spinstacks.sh:
# spinstacks-guest.sh -r N -s SCALE -S SIZE KIND...
# For each KIND, one mpabench -X KIND run (tools/testing/bench/guest.sh)
# with a kprobe on native_queued_spin_lock_slowpath() whose hist trigger
# counts the CPUs and stacks it is reached from: /run/results/KIND.hist,
# and mpabench's output in /run/results/KIND.run. The trigger is on for
# the whole run: the namespaces' setup and mpabench's own are counted too
# (a few entries, against thousands in the transfers).
set -e
[ "$1" = -r ] && [ "$3" = -s ] && [ "$5" = -S ] ||
	{ echo "usage: $0 -r N -s SCALE -S SIZE KIND..." >&2; exit 1; }
args="$1 $2 $3 $4 $5 $6"
shift 6
T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs nodev $T
echo 'p:mpa_spin native_queued_spin_lock_slowpath' >> $T/kprobe_events
hist='hist:keys=common_cpu,common_stacktrace:vals=hitcount:sort=hitcount.descending:size=8192'
for kind in "$@"; do
	echo "$hist" > $T/events/kprobes/mpa_spin/trigger
	# shellcheck disable=SC2086 # the arguments are words
	"$(dirname "$0")/guest.sh" -p sides -X "$kind" -c 2 $args \
		> "/run/results/$kind.run"
	cat $T/events/kprobes/mpa_spin/hist > "/run/results/$kind.hist"
	echo "!$hist" > $T/events/kprobes/mpa_spin/trigger
done
echo '-:mpa_spin' >> $T/kprobe_events
