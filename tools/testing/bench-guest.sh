#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make bench, in the guest: load mpa and run the benchmark.
modprobe mpa || exit 1
exec /usr/bin/python3 -u "$MPA_TOP/tools/testing/bench-guest.py"
