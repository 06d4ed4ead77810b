#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside a stock guest that package-suite.sh starts with the module
# DKMS built on the host (vm/run --modules /lib/modules/KVER/updates/dkms),
# while the packages mpa-dkms and mpa-tools are installed on the host (the
# guest sees the host's /usr/sbin, /usr/share/mpa). It only gathers facts
# into $MPA_RESULTS/package/; package-suite.sh judges them:
#   path, build-id        modinfo -n mpa and the GNU build ID of the loaded
#                         module (its sysfs notes), after modprobe mpa
#   attach.tap            the attach selftest (its module_unload test
#                         unloads mpa and loads it again with modprobe)
#   build-id-after        the loaded module's build ID after that
#   responder.*, initiator.*, stats.out
#                         the installed mpacat, a Responder and an
#                         Initiator over loopback in a network namespace of
#                         their own, and the installed mpactl's stats there
out=$MPA_RESULTS/package
mkdir -p "$out"
ns=mpapkg
port=7174

build_id() {
	python3 - /sys/module/mpa/notes/.note.gnu.build-id <<'EOF'
import struct
import sys

try:
    d = open(sys.argv[1], 'rb').read()
except OSError as e:
    print(f'none ({e.strerror})')
    sys.exit(0)
# Elf_Nhdr: namesz, descsz, type; the name ("GNU\0") padded to 4 octets
namesz, descsz, _ = struct.unpack('<III', d[:12])
off = 12 + ((namesz + 3) & ~3)
print(d[off:off + descsz].hex())
EOF
}

modprobe mpa || echo "package-guest: modprobe mpa failed"
modinfo -n mpa > "$out/path" 2>&1
build_id > "$out/build-id"
echo "package-guest: mpa from $(cat "$out/path"), build ID $(cat "$out/build-id")"

echo "package-guest: selftest attach"
"$MPA_BUILD/selftests/attach" > "$out/attach.tap" 2>&1
echo "package-guest: selftest attach exited $?"
build_id > "$out/build-id-after"

# The installed tools in a network namespace of their own, so that its
# statistics count this exchange only.
ip netns add $ns
ip -n $ns link set lo up
ip netns exec $ns timeout 60 /usr/sbin/mpacat -v -n -l 127.0.0.1 $port \
	> "$out/responder.out" 2> "$out/responder.err" &
server=$!
# Readiness: mpacat -v says when it listens (deadline 30 s).
i=0
until grep -q 'listening on port' "$out/responder.err"; do
	i=$((i + 1))
	if [ $i -gt 300 ] || ! kill -0 $server 2> /dev/null; then
		echo "package-guest: mpacat does not listen" >> "$out/responder.err"
		break
	fi
	sleep 0.1
done
echo hello | ip netns exec $ns timeout 60 /usr/sbin/mpacat 127.0.0.1 $port \
	> "$out/initiator.out" 2> "$out/initiator.err"
echo $? > "$out/initiator.rc"
wait $server
echo $? > "$out/responder.rc"
ip netns exec $ns /usr/sbin/mpactl stats > "$out/stats.out" 2>&1
echo $? > "$out/stats.rc"
ip netns del $ns
exit 0
