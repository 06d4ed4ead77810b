#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks of the module and uAPI sources:
#   spec-schema  Documentation/netlink/specs/mpa.yaml is valid against the
#                kernel's schema of its protocol (genetlink-legacy.yaml), as
#                YNL's lib/nlspec.py checks it when cli.py or mpactl load
#                the spec (jsonschema)
#   ynl-gen      the code generated from the spec (mpa/netlink_gen.[ch],
#                include/uapi/linux/mpa_netlink.h) is what the kernel's
#                ynl-gen-c.py makes of it now (tools/testing/ynl-gen.sh
#                --check); the generator validates the spec against the
#                same schema too, and fails on a name that does not resolve
#   checkpatch   scripts/checkpatch.pl --strict (from linux-source-6.12):
#                no error, warning or check
#   kernel-doc   scripts/kernel-doc -Wall: no warning
#   build-LANE   a W=1 build with sparse on every file (make C=2) against
#                the lane's kernel: no compiler or sparse warning
#   man-lint     the man pages (tools/mpacat/mpacat.8, tools/mpactl/mpactl.8)
#                render without a warning: groff -man -ww, mandoc -Tlint,
#                and man --warnings as lintian runs it
#   man-options  the man pages name exactly the options the tools accept
#                (tools/testing/manpage-check.py: mpacat's getopt tables and
#                --help, mpactl's argument parser: its options, commands,
#                actions and policy keys)
# Prints one "ok"/"not ok" line per check; exits non-zero if any failed.
# usage: static.sh [LANE...]   (default: stock debug)
set -u
. "$(dirname "$0")/lib.sh"

lanes=${*:-stock debug}
failed=0
src=$(mpa_source_tree) || exit 1
log=$MPA_BUILD/static
mkdir -p "$log"

result() {
	if [ "$2" = 0 ]; then
		echo "ok - $1"
	else
		echo "not ok - $1 (see $3)"
		failed=1
	fi
}

cd "$MPA_TOP" || exit 1

# The netlink spec: its schema, then the code generated from it.
spec=Documentation/netlink/specs/mpa.yaml
PYTHONPATH=$src/tools/net/ynl /usr/bin/python3 - "$spec" \
	"$src/Documentation/netlink/genetlink-legacy.yaml" > "$log/spec-schema.log" 2>&1 <<'EOF'
import sys
from lib import SpecFamily

SpecFamily(sys.argv[1], schema_path=sys.argv[2])
print(f"{sys.argv[1]}: valid against {sys.argv[2]}")
EOF
rc=$?
[ $rc = 0 ] || tail -n 5 "$log/spec-schema.log" >&2
result spec-schema $rc "$log/spec-schema.log"

"$MPA_TOP/tools/testing/ynl-gen.sh" --check > "$log/ynl-gen.log" 2>&1
rc=$?
[ $rc = 0 ] || tail -n 5 "$log/ynl-gen.log" >&2
result "ynl-gen (generated netlink code matches the spec)" $rc "$log/ynl-gen.log"

# Every C source and header of the module (the control plane's netns.[ch]
# and netlink.c included), the uAPI, the sample and mpacat. The generated
# mpa/netlink_gen.[ch] and include/uapi/linux/mpa_netlink.h are checked as
# they are, as the kernel tree checks its generated families: ynl-gen-c.py's
# output passes checkpatch --strict and kernel-doc -Wall (the repeated
# #include <linux/mpa.h>, one for each definition that names that header,
# is nothing checkpatch looks for). Should a later generator trip a check,
# leave those files out here with the reason, rather than edit them.
files=$(git ls-files 'mpa/*.c' 'mpa/*.h' 'include/*.h' 'tools/mpacat/*.c' \
	'samples/*.c' 'samples/*.h' 2>/dev/null)
[ -n "$files" ] || files=$(find mpa include tools/mpacat samples -name '*.[ch]')
# CONST_STRUCT is the one type left out: a ULP's struct proto_ops must be
# a writable copy of TCP's, built at run time (net/tls and espintcp do the
# same), which checkpatch cannot tell from a forgotten const.
# shellcheck disable=SC2086
perl "$src/scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore CONST_STRUCT \
	-f $files > "$log/checkpatch.log" 2>&1
pc=$?
grep -E ': (ERROR|WARNING|CHECK):' "$log/checkpatch.log" > "$log/checkpatch.issues"
rc=$?
[ $rc = 0 ] && head -n 20 "$log/checkpatch.issues" >&2
# exit 1 is its findings; above, it did not run (perl, a missing module)
[ $pc -gt 1 ] && { tail -n 5 "$log/checkpatch.log" >&2; rc=0; }
result checkpatch $((rc == 0)) "$log/checkpatch.log"

# kernel-doc: every documented symbol (all exported ones are) complete
# shellcheck disable=SC2086
perl "$src/scripts/kernel-doc" -none -Wall $files > "$log/kernel-doc.log" 2>&1
pc=$?
grep -E 'warning|error' "$log/kernel-doc.log" > "$log/kernel-doc.issues"
rc=$?
# it exits with its count of warnings; perl's own failures are 255
[ $pc -ge 255 ] && { tail -n 5 "$log/kernel-doc.log" >&2; rc=0; }
[ $rc = 0 ] && head -n 20 "$log/kernel-doc.issues" >&2
result kernel-doc $((rc == 0)) "$log/kernel-doc.log"

# The man pages: clean roff, and in step with what the tools accept.
mans="tools/mpacat/mpacat.8 tools/mpactl/mpactl.8"
: > "$log/man-lint.log"
for m in $mans; do
	{
		groff -man -ww -z "$m" 2>&1
		mandoc -Tlint "$m" 2>&1
		LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$m" 2>&1 > /dev/null
	} | sed "s|^|$m: |" >> "$log/man-lint.log"
done
rc=0
if [ -s "$log/man-lint.log" ]; then
	head -n 20 "$log/man-lint.log" >&2
	rc=1
fi
result "man-lint (groff -ww, mandoc -Tlint, man --warnings)" $rc "$log/man-lint.log"

if make -s -C "$MPA_TOP" mpacat > "$log/man-options.log" 2>&1; then
	/usr/bin/python3 "$MPA_TOP/tools/testing/manpage-check.py" \
		"$MPA_BUILD/mpacat/mpacat" >> "$log/man-options.log" 2>&1
	rc=$?
else
	rc=1
fi
[ $rc = 0 ] || tail -n 10 "$log/man-options.log" >&2
result "man-options (mpacat.8, mpactl.8 match the tools' options)" $rc "$log/man-options.log"

for lane in $lanes; do
	eval "$("$MPA_TOP/tools/testing/lane.sh" "$lane")" || { result "build-$lane" 1 lane; continue; }
	dir=$MPA_BUILD/static-$lane
	rm -rf "$dir" && mkdir -p "$dir"
	cp -a --parents Kbuild mpa include samples "$dir/"
	make -C "$LANE_KDIR" M="$dir" W=1 C=2 modules > "$log/build-$lane.log" 2>&1
	rc=$?
	if grep -E '(warning|error):' "$log/build-$lane.log" > "$log/build-$lane.issues"; then
		head -n 20 "$log/build-$lane.issues" >&2
		rc=1
	fi
	result "build-$lane (W=1, sparse)" $rc "$log/build-$lane.log"
done
exit $failed
