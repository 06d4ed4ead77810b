#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of make demo (see demo.sh): two network namespaces joined
# by a veth pair, an MPA connection between two mpacat processes across it
# with Markers and CRCs both ways, ULPDUs of mixed sizes each way, and a
# capture of it all on the veth; mpactl (the control plane) watches the
# Responder's namespace. Leaves in $MPA_RESULTS: the capture
# (demo.pcap), what each side sent, received and printed, and exits
# non-zero when a side failed or a ULPDU did not arrive intact and in
# order. demo.sh then has tshark decode the capture.
set -e
R=$MPA_RESULTS
MPACAT=$MPA_BUILD/mpacat/mpacat
# the administrator's tool; MPA_YNL_DIR (from demo.sh) is the kernel's YNL
MPACTL="/usr/bin/python3 tools/mpactl/mpactl"
PORT=7174
say() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: FAILED: $*"; exit 1; }

# A line of exactly N octets: "[N octets] " and then letters and digits.
line_of() {
	awk -v n="$1" 'BEGIN {
		s = "[" n " octets] "
		a = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		while (length(s) < n)
			s = s a
		print substr(s, 1, n)
	}'
}

# wait_for WHAT TENTHS COMMAND...: until COMMAND succeeds, looking again
# every tenth of a second (the signals waited for have no event to block
# on), failing after TENTHS looks. A readiness signal, never a fixed sleep.
wait_for() {
	what=$1 n=$2
	shift 2
	until "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || fail "timed out waiting for $what"
		sleep 0.1
	done
}
monitor_ready() {
	[ -e "$R/monitor.ready" ] && return 0
	kill -0 "$monitor" 2> /dev/null ||
		fail "mpactl monitor exited before it subscribed: $(cat "$R/monitor.err")"
	return 1
}
listening() { ip netns exec mpa-b ss -Hltn "sport = :$PORT" | grep -q .; }
fins_captured() {
	[ "$(tcpdump -r "$R/demo.pcap" -n 'tcp[tcpflags] & tcp-fin != 0' 2> /dev/null |
		wc -l)" -ge 2 ]
}

[ -x "$MPACAT" ] || fail "no $MPACAT (make mpacat)"

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

# What each side sends. The Initiator: one ULPDU per line of text, short
# lines and long ones; the Responder: a file in ULPDUs of the current
# MULPDU (mpacat's default), so whole-segment FPDUs and a shorter last one.
{
	echo "Hello from the Initiator in mpa-a."
	echo "Each line is one ULPDU; MPA keeps the boundaries on the TCP stream."
	line_of 100
	line_of 1000
	echo "A short one between the long ones."
	line_of 20000
	line_of 64768
	echo "Goodbye."
} > "$R/initiator.in"
{
	echo "The Responder in mpa-b sends this text as a file cut into ULPDUs of"
	echo "the current MULPDU: each one fills a TCP segment by itself."
	line_of 5200
} | tr '\n' ' ' > "$R/responder.in"

say "capturing on vb (tcpdump)"
ip netns exec mpa-b tcpdump -i vb -n -s 0 -U --immediate-mode -Z root -w "$R/demo.pcap" \
	"tcp port $PORT" 2> "$R/tcpdump.log" &
dump=$!
wait_for "tcpdump to start" 600 grep -q 'listening on' "$R/tcpdump.log"

say "mpa-b: mpactl monitor (the control plane's events, in the background)"
ip netns exec mpa-b $MPACTL monitor --count 2 --timeout 120 \
	--ready-file "$R/monitor.ready" > "$R/monitor.out" 2> "$R/monitor.err" &
monitor=$!
# It creates the file once subscribed: from then on it sees every event.
wait_for "mpactl monitor to subscribe" 600 monitor_ready

say "mpa-b: Responder: mpacat -v --markers --pd ... --file responder.in -l $PORT"
ip netns exec mpa-b timeout 120 "$MPACAT" -v --markers \
	--pd "Welcome to mpa-b" --file "$R/responder.in" -l "$PORT" \
	> "$R/responder.out" 2> "$R/responder.err" &
server=$!
wait_for "mpacat to listen on port $PORT" 600 listening

# The Initiator's lines go to it one at a time, each once the Responder has
# received the one before: then each FPDU is a segment of its own. MPA packs
# several whole FPDUs into one segment when the sender is ahead of the wire,
# and Wireshark's MPA dissector (4.0) misreads the FPDUs after the first in a
# segment when Markers are on (the stream's octets are the same either way).
received() {
	[ "$(grep -c '^mpacat: received ULPDU' "$R/responder.err")" -ge "$1" ] &&
		return 0
	kill -0 "$client" 2> /dev/null ||
		fail "the Initiator's mpacat exited early: $(cat "$R/initiator.err")"
	return 1
}
say "mpa-a: Initiator: mpacat -v --markers --rev 1 --pd ... 10.0.0.2 $PORT < initiator.in"
# (a FIFO on the guest's own /run: the results folder is a 9p share)
fifo=/run/mpa-demo-initiator.fifo
rm -f "$fifo"
mkfifo "$fifo" || fail "mkfifo $fifo"
ip netns exec mpa-a timeout 120 "$MPACAT" -v --markers --rev 1 \
	--pd "Hello, mpa-b: Rev 1, Markers and CRCs please" 10.0.0.2 "$PORT" \
	< "$fifo" > "$R/initiator.out" 2> "$R/initiator.err" &
client=$!
exec 3> "$fifo"
# (sed, not the shell's read: that reads an octet per system call, and the
# results folder is a 9p share: minutes for the 64768-octet line under load)
lines=$(wc -l < "$R/initiator.in")
k=0
while [ "$k" -lt "$lines" ]; do
	k=$((k + 1))
	sed -n "${k}p" "$R/initiator.in" >&3
	wait_for "the Responder to receive ULPDU $k" 1200 received "$k"
done
exec 3>&-
rm -f "$fifo"
rc=0
wait $client || rc=$?
src=0
wait $server || src=$?
mrc=0
wait $monitor || mrc=$?
# Both FINs captured: every packet before them is in the file too.
wait_for "tcpdump to capture both FINs" 300 fins_captured
kill -INT $dump
wait $dump || true

say "mpa-b: what mpactl monitor printed (exit status $mrc)"
cat "$R/monitor.err" "$R/monitor.out"
say "mpa-b: mpactl stats (the namespace's statistics)"
ip netns exec mpa-b $MPACTL stats > "$R/stats.out" 2>&1 || true
cat "$R/stats.out"

say "the Initiator's report (standard error)"
cat "$R/initiator.err"
echo "exit status $rc"
say "the Responder's report (standard error)"
cat "$R/responder.err"
echo "exit status $src"

# One line per ULPDU, long ones shortened
show_lines() {
	awk '{ printf "%6d octets  %s%s\n", length($0), substr($0, 1, 56),
		(length($0) > 56 ? "..." : "") }' "$1"
}

say "what the Responder received (standard output: one line per ULPDU)"
show_lines "$R/responder.out"
say "what the Initiator received (standard output: one line per ULPDU)"
show_lines "$R/initiator.out"
echo
sed 's/^/tcpdump: /' "$R/tcpdump.log"

say "checks"
# The -v lines: "sent ULPDU 3: 100 octets, crc32c 0x..." at one end must
# be "received ULPDU 3: 100 octets, crc32c 0x..." at the other, in order.
ulpdus() { sed -n "s/^mpacat: $1 ULPDU \([0-9]*: .*\)/\1/p" "$2"; }
ulpdus sent "$R/initiator.err" > "$R/initiator.sent"
ulpdus received "$R/responder.err" > "$R/responder.received"
ulpdus sent "$R/responder.err" > "$R/responder.sent"
ulpdus received "$R/initiator.err" > "$R/initiator.received"
[ $rc = 0 ] || fail "the Initiator's mpacat exited with $rc"
[ $src = 0 ] || fail "the Responder's mpacat exited with $src"
n_in=$(wc -l < "$R/initiator.sent")
n_re=$(wc -l < "$R/responder.sent")
[ "$n_in" = 8 ] || fail "the Initiator sent $n_in ULPDUs, not 8"
[ "$n_re" -ge 2 ] || fail "the Responder sent $n_re ULPDUs, not 2 or more"
cmp -s "$R/initiator.sent" "$R/responder.received" ||
	fail "the Responder did not receive what the Initiator sent"
cmp -s "$R/responder.sent" "$R/initiator.received" ||
	fail "the Initiator did not receive what the Responder sent"
cmp -s "$R/initiator.in" "$R/responder.out" ||
	fail "the Responder's output differs from the Initiator's lines"
tr -d '\n' < "$R/initiator.out" | cmp -s - "$R/responder.in" ||
	fail "the Initiator's output differs from the Responder's file"
grep -q "negotiated: Rev 1, Initiator; Markers: we send yes, peer sends yes; CRC on" \
	"$R/initiator.err" || fail "the Initiator did not negotiate Markers and CRC"
grep -q "negotiated: Rev 1, Responder; Markers: we send yes, peer sends yes; CRC on" \
	"$R/responder.err" || fail "the Responder did not negotiate Markers and CRC"
# The control plane saw it all: both events, and counters equal to the
# ULPDUs that went each way (the connection is closed: they stay counted).
[ "$mrc" = 0 ] || fail "mpactl monitor exited with $mrc"
grep -q "^established .* responder rev 1 M 1/1 CRC on" "$R/monitor.out" ||
	fail "mpactl monitor did not show the connection established"
grep -q "^closed " "$R/monitor.out" || fail "mpactl monitor did not show it closed"
stat_of() { sed -n "s/^$1 //p" "$R/stats.out"; }
[ "$(stat_of established)" = 1 ] || fail "mpactl stats: established is not 1"
[ "$(stat_of rx-fpdus)" = "$n_in" ] || fail "mpactl stats: rx-fpdus is not $n_in"
[ "$(stat_of tx-fpdus)" = "$n_re" ] || fail "mpactl stats: tx-fpdus is not $n_re"
[ "$(stat_of crc-errors)" = 0 ] || fail "mpactl stats: CRC errors"
echo "ok: mpactl saw the connection established and closed, $n_in FPDUs in and $n_re out"
echo "ok: the Responder received the Initiator's $n_in ULPDUs intact and in order"
echo "ok: the Initiator received the Responder's $n_re ULPDUs intact and in order"
