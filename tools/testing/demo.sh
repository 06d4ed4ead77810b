#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build mpa.ko and mpacat, boot a guest with Debian's stock 6.12
# kernel, and there run an MPA connection between two mpacat processes in
# two network namespaces joined by a veth pair: Markers and CRCs both ways,
# ULPDUs of mixed sizes each way, captured on the veth with tcpdump, and
# watched through the control plane with mpactl (demo-guest.sh). Then
# tshark decodes the capture here (demo-decode.py).
# Exits non-zero if an mpacat failed, a ULPDU did not arrive intact and in
# order, or tshark did not see every FPDU with a good CRC.
set -e
. "$(dirname "$0")/lib.sh"

"$MPA_TOP/tools/testing/deps.sh"
make -s -C "$MPA_TOP" modules-stock mpacat
res=$MPA_BUILD/demo
rm -rf "$res"
mkdir -p "$res"

msg "running the demo in a stock-kernel guest (its output follows when it is done)"
rc=0
"$MPA_TOP/tools/testing/vm/run" --lane stock --no-build --quiet --timeout 300 \
	--results "$res" -- "MPA_YNL_DIR='$(mpa_source_tree)/tools/net/ynl'" \
	tools/testing/demo-guest.sh || rc=$?

drc=0
if [ -s "$res/demo.pcap" ]; then
	printf '\n== tshark decodes the capture (%s)\n' "${res#"$MPA_TOP"/}/demo.pcap"
	/usr/bin/python3 "$MPA_TOP/tools/testing/demo-decode.py" "$res" || drc=$?
else
	drc=1
	echo "demo: FAILED: no capture in $res/demo.pcap"
fi

echo
if [ "$rc" != 0 ]; then
	echo "demo: FAILED: the guest part exited with $rc (logs in $res)"
	exit 1
fi
if [ "$drc" != 0 ]; then
	echo "demo: FAILED: tshark's decode of the capture (logs in $res)"
	exit 1
fi
echo "demo: passed: MPA with Markers and CRCs both ways, every ULPDU delivered,"
echo "demo: mpactl saw the connection and counted its FPDUs;"
echo "demo: tshark decodes every FPDU with a good CRC. Files: ${res#"$MPA_TOP"/}/"
