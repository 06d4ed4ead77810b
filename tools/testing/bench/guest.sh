#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make bench, in the guest: load what the benchmark needs, join two network
# namespaces with a veth pair (MTU 1500: MSS 1448), and run mpabench with
# the arguments given (see tools/testing/bench/mpabench.c).
set -e
# the fastest crc32c first, so that libcrc32c (mpa.ko's CRC) binds to it
modprobe crc32c_intel || echo "bench: no crc32c_intel: the generic crc32c is measured"
modprobe algif_hash
modprobe veth
modprobe mpa
grep -A4 '^name *: crc32c$' /proc/crypto | sed -n 's/^driver *: //p' |
	tr '\n' ' ' | sed 's/^/bench: crc32c implementations: /; s/$/\n/'

# afresh, also when run twice in one guest
ip netns del mpa-a 2> /dev/null || true
ip netns del mpa-b 2> /dev/null || true
ip netns add mpa-a
ip netns add mpa-b
ip link add va netns mpa-a type veth peer name vb netns mpa-b
ip -n mpa-a addr add 10.0.0.1/24 dev va
ip -n mpa-b addr add 10.0.0.2/24 dev vb
for ns in mpa-a mpa-b; do
	ip -n $ns link set lo up
	# room for the memory part's connections
	ip netns exec $ns sysctl -qw net.ipv4.ip_local_port_range="1024 65000"
done
ip -n mpa-a link set va up
ip -n mpa-b link set vb up

export MPA_BENCH_NS_A=/run/netns/mpa-a MPA_BENCH_NS_B=/run/netns/mpa-b
if [ -z "${MPA_BENCH_AB:-}" ]; then
	exec "$MPA_BUILD/bench/mpabench" "$@"
fi

# Two versions of the module in this one guest, in turn (make bench with
# MPA_BENCH_AB=DIR): A, the lane's mpa.ko, and B, DIR's, run after run in
# the order A B B A A B ..., so that neither gains from the guest's drift.
k=1
while [ "$k" -le "${MPA_BENCH_AB_RUNS:-4}" ]; do
	order="A B"
	[ $((k % 2)) -eq 1 ] || order="B A"
	for v in $order; do
		rmmod mpa
		if [ "$v" = A ]; then
			modprobe mpa
		else
			insmod "$MPA_BENCH_AB/mpa.ko"
		fi
		echo "== module $v, run $k"
		"$MPA_BUILD/bench/mpabench" "$@"
	done
	k=$((k + 1))
done
