#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: build mpa.ko, boot a guest with Debian's stock 6.12 kernel,
# join two network namespaces with a veth pair, connect a TCP socket across
# it and attach the "mpa" ULP at both ends.
set -e
. "$(dirname "$0")/lib.sh"

"$MPA_TOP/tools/testing/deps.sh"
make -s -C "$MPA_TOP" modules-stock
exec "$MPA_TOP/tools/testing/vm/run" --lane stock --timeout 600 -- \
	tools/testing/demo-guest.sh
