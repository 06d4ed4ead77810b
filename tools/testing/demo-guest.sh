#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The guest half of make demo (see demo.sh).
set -e
say() { printf '\n== %s\n' "$*"; }

say "loading mpa.ko"
modprobe mpa
grep -w mpa /proc/modules
echo "available TCP ULPs: $(cat /proc/sys/net/ipv4/tcp_available_ulp)"

say "two network namespaces joined by a veth pair"
ip netns add mpa-a
ip netns add mpa-b
ip link add va netns mpa-a type veth peer name vb netns mpa-b
ip -n mpa-a addr add 10.0.0.1/24 dev va
ip -n mpa-b addr add 10.0.0.2/24 dev vb
ip -n mpa-a link set va up
ip -n mpa-b link set vb up
ip -n mpa-a -br addr show va
ip -n mpa-b -br addr show vb

say "a TCP connection from mpa-a to mpa-b, with the mpa ULP on both ends"
ip netns exec mpa-b python3 "$MPA_TOP/tools/testing/demo-attach.py" server 10.0.0.2 7174 &
server=$!
sleep 1
ip netns exec mpa-a python3 "$MPA_TOP/tools/testing/demo-attach.py" client 10.0.0.2 7174
wait $server

say "done"
