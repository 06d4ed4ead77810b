#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: MPA sockets' throughput against plain TCP, measured in the
# same stock-kernel guest (tools/testing/bench-guest.py). A benchmark, not a
# test: it prints ratios and fails only if data went missing.
set -e
. "$(dirname "$0")/lib.sh"

"$MPA_TOP/tools/testing/deps.sh"
make -s -C "$MPA_TOP" modules-stock
exec "$MPA_TOP/tools/testing/vm/run" --lane stock --no-build --timeout 900 \
	-- tools/testing/bench-guest.sh
