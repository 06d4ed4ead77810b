#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a debug-lane test guest (tools/testing/vm/run): interop with
# Linux soft-iWARP (siw, built into the debug kernel) through rdma-core's
# rdma_server and rdma_client (package rdmacm-utils). siw sits on one end
# of a veth pair, in the network namespace iw-siw (10.0.0.1); mpa.ko, with
# mpacat or the sample consumer mpa_echo.ko, on the other, in the initial
# namespace (10.0.0.2). Each case is captured with tcpdump on the veth.
#
# Leaves in $MPA_RESULTS/interop/: "plan" (the cases, one a line, in
# order) and, per case, a folder with the capture (capture.pcap), every
# program's output, "expect" (what tshark must find in the capture, for
# interop-decode.py) and "guest.result" (one line per check made here:
# "ok: ..." or "FAIL: ..."). check.sh then has interop-decode.py decode the
# captures on the host and write interop.tap ("interop-debug").
#
# No sleeps as synchronisation: rdma_server is ready when siw's listening
# socket shows up in its namespace (ss), tcpdump when it says "listening
# on", a capture is complete when it holds the connection's end (both FINs,
# or a RST).
#
# Arguments, if any, are the names of the cases to run (the rest are not
# planned).
set -u
OUT=$MPA_RESULTS/interop
MPACAT=$MPA_BUILD/mpacat/mpacat
MPACTL="/usr/bin/python3 tools/mpactl/mpactl"
NS=iw-siw
SIW_ADDR=10.0.0.1
MPA_ADDR=10.0.0.2
# a safety net only: a program that takes this long has failed (a case
# takes 10-40 s, by the machine's load)
LIMIT=120

# The ULPDUs mpacat sends (--hex-in: one ULPDU a line, in hex). An RDMAP
# untagged Send (RFC 5040 4.3, RFC 5041 4.3): DDP control 0x41 (T=0, L=1,
# DV=1), RDMAP control 0x43 (RV=1, Send), Invalidate STag 0, QN 0, MSN,
# MO 0, then 16 octets of payload: rdma_server and rdma_client post
# 16-octet receive buffers.
PAYLOAD="hello from mpa.."
hex_of() { printf %s "$1" | od -An -tx1 -v | tr -d ' \n'; }
send_hex() { printf '4143 00000000 00000000 %08x 00000000 %s\n' "$1" "$(hex_of "$PAYLOAD")"; }
# What siw sends back: rdma_server's and rdma_client's Send of their 16
# zero octets (static buffers), the first Send on QN 0 (MSN 1).
SIW_SEND=41430000000000000000000000010000000000000000000000000000000000000000
# An RDMA Write of no octets, tagged (DDP control 0xc1: T=1, L=1, DV=1;
# RDMAP 0x40: Write), STag 0, TO 0: the RTR of RFC 6581's peer-to-peer mode.
RTR_WRITE="c140 00000000 0000000000000000"

ALL_CASES="
siw-rdma_client-to-mpa_echo-rev2-crc-on
siw-rdma_client-to-mpacat-rev2-crc-on
siw-rdma_client-to-mpacat-rev2-crc-off
siw-rdma_client-to-mpacat-markers-refused-by-siw
mpacat-rev1-to-siw-rdma_server-accepted-crc-on
mpacat-rev2-to-siw-rdma_server-accepted-crc-on
mpacat-rev2-p2p-write-rtr-to-siw-rdma_server-accepted
mpacat-rev1-to-siw-rdma_server-crc-off
mpacat-markers-to-siw-rdma_server-refused-by-siw
mpacat-rev0-permissive-to-siw-rdma_server-refused-by-siw
mpacat-bad-msn-to-siw-rdma_server-terminated
"

say() { echo "interop: $*"; }

# wait_for WHAT TENTHS COMMAND...: until COMMAND succeeds, looking again
# every tenth of a second (a readiness signal, never a fixed sleep); fails
# after TENTHS looks.
wait_for() {
	local what=$1 n=$2
	shift 2
	until "$@"; do
		n=$((n - 1))
		if [ $n -le 0 ]; then
			fail "timed out waiting for $what"
			return 1
		fi
		sleep 0.1
	done
}

# Checks of the current case ($dir): one line each in guest.result.
pass() { echo "ok: $*" >> "$dir/guest.result"; }
fail() { echo "FAIL: $*" >> "$dir/guest.result"; say "$case: FAIL: $*"; }
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
has() { grep -q -- "$2" "$dir/$1"; }
hasnt() { ! grep -q -- "$2" "$dir/$1"; }
is_rc() { [ "$(cat "$dir/$1.rc" 2>/dev/null)" = "$2" ]; }
expect() { echo "$1=$2" >> "$dir/expect"; }

listening_in() {	# NAMESPACE(or "") PORT
	if [ -n "$1" ]; then
		ip netns exec "$1" ss -Hltn "sport = :$2" | grep -q .
	else
		ss -Hltn "sport = :$2" | grep -q .
	fi
}

# How many packets of the capture match a filter.
captured() {
	tcpdump -r "$dir/capture.pcap" -n "$1" 2>/dev/null | wc -l
}

# The capture holds the connection's end, so everything before it: a FIN
# from each side (a retransmitted one does not count twice), or a RST.
capture_closed() {
	[ "$(captured 'tcp[tcpflags] & tcp-rst != 0')" -ge 1 ] && return 0
	[ "$(captured "src host $SIW_ADDR and tcp[tcpflags] & tcp-fin != 0")" -ge 1 ] &&
		[ "$(captured "src host $MPA_ADDR and tcp[tcpflags] & tcp-fin != 0")" -ge 1 ]
}

begin_case() {	# PORT
	port=$1
	dir=$OUT/$case
	rm -rf "$dir"
	mkdir -p "$dir"
	: > "$dir/guest.result"
	echo "port=$port" > "$dir/expect"
	say "$case (port $port)"
	tcpdump -i vb -n -s 0 -U --immediate-mode -Z root -w "$dir/capture.pcap" \
		"tcp port $port" 2> "$dir/tcpdump.log" &
	dump=$!
	wait_for "tcpdump to start" 600 grep -q 'listening on' "$dir/tcpdump.log"
}

end_case() {
	wait_for "the capture to hold the connection's end" 600 capture_closed
	kill -INT "$dump"
	wait "$dump"
}

# run NAME COMMAND...: run COMMAND with the safety-net limit; NAME.out and
# NAME.err get its output, NAME.rc its exit status.
run() {
	local name=$1 rc=0
	shift
	timeout "$LIMIT" "$@" > "$dir/$name.out" 2> "$dir/$name.err" || rc=$?
	echo "$rc" > "$dir/$name.rc"
}

# Start rdma_server in siw's namespace; it is ready when siw's listening
# socket is there.
start_rdma_server() {
	ip netns exec $NS timeout "$LIMIT" rdma_server -s $SIW_ADDR -p "$port" \
		> "$dir/rdma_server.out" 2>&1 &
	server=$!
	wait_for "rdma_server to listen" 600 listening_in $NS "$port"
}

wait_rdma_server() {
	local rc=0
	wait "$server" || rc=$?
	echo "$rc" > "$dir/rdma_server.rc"
}

# Stop an rdma_server that must not get a connection (siw refused it).
stop_rdma_server() {
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	echo killed > "$dir/rdma_server.rc"
}

# mpacat's Responder in the background; ready when it listens.
start_mpacat_responder() {	# INPUT OPTIONS...
	local input=$1
	shift
	printf '%s\n' "$input" > "$dir/mpacat.in"
	(run mpacat "$MPACAT" -v --hex-in --hex-out --no-shutdown "$@" \
		-l $MPA_ADDR "$port" < "$dir/mpacat.in") &
	responder=$!
	wait_for "mpacat to listen" 600 listening_in "" "$port"
}

run_mpacat_initiator() {	# INPUT OPTIONS...
	local input=$1
	shift
	printf '%s\n' "$input" > "$dir/mpacat.in"
	run mpacat "$MPACAT" -v --hex-in --hex-out --no-shutdown "$@" \
		$SIW_ADDR "$port" < "$dir/mpacat.in"
}

run_rdma_client() {
	run rdma_client ip netns exec $NS rdma_client -s $MPA_ADDR -p "$port"
}

policy_crc_off_allowed() {	# 0|1
	$MPACTL policy set crc-off-allowed="$1" > "$dir/policy.out" 2>&1 ||
		fail "mpactl policy set crc-off-allowed=$1: $(cat "$dir/policy.out")"
}

# What siw sends as the Initiator (rdma_client): a Rev 2 Request with the
# IRD/ORD block (E set, PD_Length 4), M=0, C=0; then its Send.
expect_siw_request() {
	expect initiator $SIW_ADDR
	expect request "rev=2 m=0 c=0 r=0 e=1 pd_length=4"
}

# Checks of rdma_client against one of our Responders that accepted, and
# of its Send as mpacat printed it.
check_siw_client_exchange() {
	check "rdma_client completed its Send and Receive (exit 0)" is_rc rdma_client 0
	check "rdma_client printed 'rdma_client: end 0'" has rdma_client.out "rdma_client: end 0"
}

check_mpacat_got_siw_send() {
	check "mpacat exited 0" is_rc mpacat 0
	check "mpacat received siw's Send: QN 0, MSN 1, MO 0, 16 zero octets" \
		has mpacat.out "^$SIW_SEND\$"
	check "mpacat received one ULPDU and sent one" \
		has mpacat.err "summary: sent 1 ULPDUs, 34 octets; received 1 ULPDUs, 34 octets"
	check "no CRC errors" has mpacat.err "CRC errors 0"
}

# --- the cases --------------------------------------------------------

# siw's rdma_client against mpa_echo.ko, which echoes each ULPDU back:
# siw's own Send comes back to it as a valid Send (QN 0, MSN 1).
case_siw-rdma_client-to-mpa_echo-rev2-crc-on() {
	begin_case 7471
	if ! modprobe mpa_echo port="$port" accept_pd=mpa_echo-interop \
		> "$dir/modprobe.out" 2>&1; then
		fail "modprobe mpa_echo: $(cat "$dir/modprobe.out")"
	fi
	wait_for "mpa_echo to listen" 600 listening_in "" "$port"
	run_rdma_client
	end_case
	cat /sys/kernel/debug/mpa_echo/conns > "$dir/mpa_echo.conns" 2>&1
	rmmod mpa_echo
	check_siw_client_exchange
	check "mpa_echo: one connection, Rev 2, 1 ULPDU in and out, no error" \
		has mpa_echo.conns "role=responder state=full .* rev=2 .* rx=1 rx_octets=34 .* tx=1 tx_octets=34 .*err_code=0 err_reason=0"
	expect_siw_request
	# the IRD/ORD block and accept_pd
	expect reply "rev=2 m=0 c=1 r=0 e=1 pd_length=20"
	expect crc on
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# siw's rdma_client against mpacat's Responder, CRC as each side has it
# by default: siw does not ask (C=0), we do (C=1), so CRCs both ways.
case_siw-rdma_client-to-mpacat-rev2-crc-on() {
	begin_case 7472
	start_mpacat_responder "$(send_hex 1)"
	run_rdma_client
	wait "$responder"
	end_case
	check_siw_client_exchange
	check_mpacat_got_siw_send
	check "mpacat: Rev 2 Request from siw, M=0 C=0, IRD/ORD block" \
		has mpacat.err "peer's MPA Request: Rev 2, M=0 C=0 R=0, Res 0x0, PD_Length 4"
	check "mpacat: negotiated CRC on" \
		has mpacat.err "negotiated: Rev 2, Responder; Markers: we send no, peer sends no; CRC on"
	expect_siw_request
	expect reply "rev=2 m=0 c=1 r=0 e=1 pd_length=4"
	expect crc on
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# The namespace's policy allows C=0 and our Responder announces it: siw
# did not ask either, so no CRC either way.
case_siw-rdma_client-to-mpacat-rev2-crc-off() {
	begin_case 7473
	policy_crc_off_allowed 1
	start_mpacat_responder "$(send_hex 1)" --no-crc
	run_rdma_client
	wait "$responder"
	end_case
	policy_crc_off_allowed 0
	check_siw_client_exchange
	check_mpacat_got_siw_send
	check "mpacat: negotiated CRC off" \
		has mpacat.err "negotiated: Rev 2, Responder; Markers: we send no, peer sends no; CRC off"
	expect_siw_request
	expect reply "rev=2 m=0 c=0 r=0 e=1 pd_length=4"
	expect crc off
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# Our Responder asks for Markers (M=1 in the Reply): siw has none and
# refuses the Reply by closing; rdma_client fails to connect, and mpacat
# fails cleanly: its Send stayed held (no FPDU came), or failed with EPIPE
# once siw's FIN made the hold last for good, and it says so.
case_siw-rdma_client-to-mpacat-markers-refused-by-siw() {
	begin_case 7474
	start_mpacat_responder "$(send_hex 1)" --markers
	run_rdma_client
	wait "$responder"
	end_case
	check "rdma_client failed to connect (rdma_connect refused)" \
		has rdma_client.err "rdma_connect: Connection refused"
	check "rdma_client exited non-zero" eval '! is_rc rdma_client 0'
	check "mpacat: exit 1, a failure" is_rc mpacat 1
	check "mpacat: says the peer closed before its first FPDU" \
		has mpacat.err "peer closed before its first FPDU: 1 ULPDUs never sent"
	check "mpacat: no FPDU went either way" \
		has mpacat.err "summary: sent 0 ULPDUs, 0 octets; received 0 ULPDUs, 0 octets"
	expect_siw_request
	expect reply "rev=2 m=1 c=1 r=0 e=1 pd_length=4"
	expect crc on
	expect initiator_fpdus ""
	expect responder_fpdus ""
}

# mpacat's Initiator sends Rev 1 (M=0, C=1 by default): siw answers Rev 1
# with C=1 (a Responder must use CRC when asked), takes our Send, then
# rdma_server sends its own.
case_mpacat-rev1-to-siw-rdma_server-accepted-crc-on() {
	begin_case 7475
	start_rdma_server
	run_mpacat_initiator "$(send_hex 1)" --rev 1
	wait_rdma_server
	end_case
	check "rdma_server received our Send and sent its own (exit 0)" is_rc rdma_server 0
	check "rdma_server printed 'rdma_server: end 0'" has rdma_server.out "rdma_server: end 0"
	check_mpacat_got_siw_send
	check "mpacat: siw's Reply is Rev 1, M=0 C=1 R=0" \
		has mpacat.err "peer's MPA Reply: Rev 1, M=0 C=1 R=0, Res 0x0, PD_Length 0"
	check "mpacat: negotiated Rev 1, CRC on" \
		has mpacat.err "negotiated: Rev 1, Initiator; Markers: we send no, peer sends no; CRC on"
	expect initiator $MPA_ADDR
	expect request "rev=1 m=0 c=1 r=0 e=0 pd_length=0"
	expect reply "rev=1 m=0 c=1 r=0 e=0 pd_length=0"
	expect crc on
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# Rev 2 (RFC 6581): siw answers Rev 2 with its IRD/ORD block.
case_mpacat-rev2-to-siw-rdma_server-accepted-crc-on() {
	begin_case 7476
	start_rdma_server
	run_mpacat_initiator "$(send_hex 1)" --rev 2
	wait_rdma_server
	end_case
	check "rdma_server received our Send and sent its own (exit 0)" is_rc rdma_server 0
	check_mpacat_got_siw_send
	check "mpacat: siw's Reply is Rev 2, M=0 C=1 R=0 with the IRD/ORD block" \
		has mpacat.err "peer's MPA Reply: Rev 2, M=0 C=1 R=0, Res 0x0, PD_Length 4"
	check "mpacat: negotiated Rev 2, CRC on" \
		has mpacat.err "negotiated: Rev 2, Initiator; Markers: we send no, peer sends no; CRC on"
	expect initiator $MPA_ADDR
	expect request "rev=2 m=0 c=1 r=0 e=1 pd_length=4"
	expect reply "rev=2 m=0 c=1 r=0 e=1 pd_length=4"
	expect crc on
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# Rev 2 peer-to-peer mode with a zero-length RDMA Write as the RTR: siw
# picks the Write RTR, waits for it as our first FPDU, then goes on.
case_mpacat-rev2-p2p-write-rtr-to-siw-rdma_server-accepted() {
	begin_case 7477
	start_rdma_server
	run_mpacat_initiator "$RTR_WRITE
$(send_hex 1)" --rev 2 --rtr write
	wait_rdma_server
	end_case
	check "rdma_server received our Send and sent its own (exit 0)" is_rc rdma_server 0
	check "mpacat exited 0" is_rc mpacat 0
	check "mpacat: siw's Reply is Rev 2 peer-to-peer with the Write RTR" \
		has mpacat.err "peer's MPA Reply: Rev 2 enhanced: .* peer-to-peer yes, RTR write"
	check "mpacat received siw's Send: QN 0, MSN 1, MO 0, 16 zero octets" \
		has mpacat.out "^$SIW_SEND\$"
	expect initiator $MPA_ADDR
	expect request "rev=2 m=0 c=1 r=0 e=1 pd_length=4"
	expect reply "rev=2 m=0 c=1 r=0 e=1 pd_length=4"
	expect crc on
	expect initiator_fpdus "write:0 send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# C=0 allowed by the policy and announced: siw answers C=0, no CRC.
case_mpacat-rev1-to-siw-rdma_server-crc-off() {
	begin_case 7478
	policy_crc_off_allowed 1
	start_rdma_server
	run_mpacat_initiator "$(send_hex 1)" --rev 1 --no-crc
	wait_rdma_server
	end_case
	policy_crc_off_allowed 0
	check "rdma_server received our Send and sent its own (exit 0)" is_rc rdma_server 0
	check_mpacat_got_siw_send
	check "mpacat: siw's Reply is Rev 1, M=0 C=0 R=0" \
		has mpacat.err "peer's MPA Reply: Rev 1, M=0 C=0 R=0, Res 0x0, PD_Length 0"
	check "mpacat: negotiated CRC off" \
		has mpacat.err "negotiated: Rev 1, Initiator; Markers: we send no, peer sends no; CRC off"
	expect initiator $MPA_ADDR
	expect request "rev=1 m=0 c=0 r=0 e=0 pd_length=0"
	expect reply "rev=1 m=0 c=0 r=0 e=0 pd_length=0"
	expect crc off
	expect initiator_fpdus "send:0:1:0:16"
	expect responder_fpdus "send:0:1:0:16"
}

# M=1 in our Request: siw has no Markers and rejects (R=1): MPA_START
# fails at once with the reason, and rdma_server never sees a connection.
case_mpacat-markers-to-siw-rdma_server-refused-by-siw() {
	begin_case 7479
	start_rdma_server
	run_mpacat_initiator "$(send_hex 1)" --rev 1 --markers
	end_case
	stop_rdma_server
	check "mpacat: exit 1, a failed startup" is_rc mpacat 1
	check "mpacat: siw's Reply rejects: R=1, M=0" \
		has mpacat.err "peer's MPA Reply: Rev 1, M=0 C=1 R=1"
	check "mpacat: MPA_START failed with ECONNREFUSED, reason REJECTED" \
		has mpacat.err "MPA startup (MPA_START): Connection refused (.*reason 17 REJECTED"
	check "rdma_server never got the connection" hasnt rdma_server.out "rdma_server: end"
	expect initiator $MPA_ADDR
	expect request "rev=1 m=1 c=1 r=0 e=0 pd_length=0"
	expect reply "rev=1 m=0 c=1 r=1 e=0 pd_length=0"
	expect crc on
	expect initiator_fpdus ""
	expect responder_fpdus ""
}

# Rev 0 (RFC 5044 Appendix C, permissive mode) means Markers both ways,
# so our Request says M=1: siw answers Rev 0 but rejects (R=1) for the
# Markers, and MPA_START fails with the reason.
case_mpacat-rev0-permissive-to-siw-rdma_server-refused-by-siw() {
	begin_case 7481
	start_rdma_server
	run_mpacat_initiator "$(send_hex 1)" --rev 0 --permissive
	end_case
	stop_rdma_server
	check "mpacat: exit 1, a failed startup" is_rc mpacat 1
	check "mpacat: siw's Reply is Rev 0 and rejects: R=1, M=0" \
		has mpacat.err "peer's MPA Reply: Rev 0, M=0 C=1 R=1"
	check "mpacat: MPA_START failed with ECONNREFUSED, reason REJECTED" \
		has mpacat.err "MPA startup (MPA_START): Connection refused (.*reason 17 REJECTED"
	check "rdma_server never got the connection" hasnt rdma_server.out "rdma_server: end"
	expect initiator $MPA_ADDR
	expect request "rev=0 m=1 c=1 r=0 e=0 pd_length=0"
	expect reply "rev=0 m=0 c=1 r=1 e=0 pd_length=0"
	expect crc on
	expect initiator_fpdus ""
	expect responder_fpdus ""
}

# The negative control of the Send cases: a Send with MSN 2 where siw
# expects 1 is refused with an RDMAP Terminate (QN 2, opcode 7), and
# rdma_server sends no Send. It shows that siw checks what we send.
case_mpacat-bad-msn-to-siw-rdma_server-terminated() {
	begin_case 7480
	start_rdma_server
	run_mpacat_initiator "$(send_hex 2)" --rev 1
	end_case
	# siw does not complete rdma_server's Receive in error: it would wait
	# for ever
	stop_rdma_server
	dmesg > "$dir/dmesg"
	check "siw logged the MSN it refused" has dmesg "siw: .*send msn: 2 != 1"
	check "mpacat received siw's RDMAP Terminate: QN 2, MSN 1; DDP layer, untagged buffer error, invalid MSN range" \
		has mpacat.out "^4147 *00000000 *00000002 *00000001 *00000000 *2103"
	check "mpacat received no Send from siw" hasnt mpacat.out "^4143"
	expect initiator $MPA_ADDR
	expect request "rev=1 m=0 c=1 r=0 e=0 pd_length=0"
	expect reply "rev=1 m=0 c=1 r=0 e=0 pd_length=0"
	expect crc on
	expect initiator_fpdus "send:0:2:0:16"
	expect responder_fpdus "terminate:2:1:0:2.1.3"
}

# --- setup and the run ------------------------------------------------

mkdir -p "$OUT"
cases=${*:-$ALL_CASES}
printf '%s\n' $cases > "$OUT/plan"

modprobe mpa || say "modprobe mpa failed"
ip netns add $NS
ip link add va netns $NS type veth peer name vb
ip -n $NS addr add $SIW_ADDR/24 dev va
ip addr add $MPA_ADDR/24 dev vb
ip -n $NS link set va up
ip link set vb up
ip netns exec $NS rdma link add siwa type siw netdev va ||
	say "rdma link add siwa type siw netdev va failed"
rdma link show > "$OUT/rdma-link" 2>&1
export MPA_YNL_DIR

for case in $cases; do
	if declare -F "case_$case" > /dev/null; then
		"case_$case"
	else
		dir=$OUT/$case
		mkdir -p "$dir"
		fail "no such case"
	fi
done

ip netns exec $NS rdma link delete siwa
ip netns del $NS
ip link del vb 2>/dev/null
rmmod mpa_echo 2>/dev/null
exit 0
