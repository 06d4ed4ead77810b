#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install the Linux kernel's YNL Python library (tools/net/ynl/lib/*.py),
# which mpactl needs, into DEST/lib/, from Debian's linux-source-6.12
# (/usr/src/linux-source-6.12.tar.xz, or an unpacked kernel tree given as
# LINUX_SRC). It is copied at install or package build time, never kept in
# this repository. DEST/SOURCE tells where it came from.
#
# usage: ynl-lib.sh DEST
set -e
dest=${1:?usage: ynl-lib.sh DEST}
tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -n "$LINUX_SRC" ]; then
	lib=$LINUX_SRC/tools/net/ynl/lib
	from=$LINUX_SRC
else
	if [ ! -f "$tarball" ]; then
		echo "ynl-lib.sh: no $tarball: install linux-source-6.12 (or set LINUX_SRC)" >&2
		exit 1
	fi
	top=linux-source-6.12
	tar -C "$tmp" -xJf "$tarball" --wildcards "$top/tools/net/ynl/lib/*.py"
	lib=$tmp/$top/tools/net/ynl/lib
	from="$(basename "$tarball") $(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null)"
fi
[ -f "$lib/ynl.py" ] || { echo "ynl-lib.sh: no YNL library in $lib" >&2; exit 1; }
install -d "$dest/lib"
install -m 0644 "$lib"/*.py "$dest/lib/"
echo "tools/net/ynl/lib of $from" > "$dest/SOURCE"
