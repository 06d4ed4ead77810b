#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Print the path of the unpacked linux-source-6.12 tree (unpacking it once).
. "$(dirname "$0")/lib.sh"
mpa_source_tree
