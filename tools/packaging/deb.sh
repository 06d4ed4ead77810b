#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the Debian packages (debian/: mpa-dkms, mpa-tools) with
# dpkg-buildpackage from a copy of the sources in OUT/mpa-VERSION/ (what
# git tracks, plus new files it does not ignore; outside a git checkout,
# everything but .build/), so that the results, the native source package
# and the build log land in OUT and the checkout stays as it is.
#
# usage: deb.sh OUT
set -eo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:?usage: deb.sh OUT}
ver=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
src=$out/mpa-$ver

rm -rf "$out"
mkdir -p "$src"
if git -C "$top" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	(cd "$top" && git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do
			# a tracked file deleted in the work tree is left out
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf -) | tar -C "$src" -xf -
else
	(cd "$top" && tar --exclude=./.build --exclude=./.git -cf - .) | tar -C "$src" -xf -
fi

echo "mpa: building the Debian packages of mpa $ver in $out (log: $out/build.log)"
if ! (cd "$src" && dpkg-buildpackage -us -uc --build=full) > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	echo "mpa: dpkg-buildpackage failed (log: $out/build.log)" >&2
	exit 1
fi
ls "$out"/*.deb
