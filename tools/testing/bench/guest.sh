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
exec "$MPA_BUILD/bench/mpabench" "$@"
