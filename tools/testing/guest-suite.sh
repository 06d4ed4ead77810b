#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a test guest (tools/testing/vm/run): the lane's test suites.
# Results go to $MPA_RESULTS: kunit.ktap (debug lane), selftests/*.tap.
# The host side (check.sh) counts them.
out=$MPA_RESULTS

modprobe mpa || echo "guest-suite: modprobe mpa failed"

if [ "$MPA_LANE" = debug ]; then
	# Loading the test module runs its suites; KTAP goes to the kernel log,
	# taken from behind a mark: the log itself stays whole for the
	# runner's check of it (a splat at boot or in mpa's init).
	echo "guest-suite: kunit start" > /dev/kmsg
	if modprobe mpa_kunit; then
		dmesg -t | sed '0,/guest-suite: kunit start/d' > "$out/kunit.log"
		rmmod mpa_kunit
	else
		echo "guest-suite: modprobe mpa_kunit failed"
	fi
fi

mkdir -p "$out/selftests"
for t in "$MPA_BUILD"/selftests/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	# suites of their own, each in a guest of its own: the in-kernel
	# API's (kapi-suite.sh), faults (faults-suite.sh) and the stress
	# selftests (stress-suite.sh)
	case "$name" in kapi | faults | churn | idle | alloc) continue ;; esac
	# more than 4 GiB through one connection: far too slow under KASAN
	[ "$name" = wrap ] && [ "$MPA_LANE" = debug ] && continue
	echo "guest-suite: selftest $name"
	"$t" > "$out/selftests/$name.tap" 2>&1
	echo "guest-suite: selftest $name exited $?"
done
exit 0
