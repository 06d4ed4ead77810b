#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check's package part: the Debian packages and make install, on this
# host and in a stock guest. TAP on standard output (check.sh counts it as
# "package"), details on standard error and in .build/package/.
#
#   - make deb builds mpa-dkms, mpa-tools and the source package; lintian
#     reports no error (its other tags are listed in lintian.log);
#   - the packages hold what they should;
#   - apt-get installs both: mpa-dkms's postinst succeeds although the
#     running kernel may have no headers (here it is not even Debian's),
#     and DKMS builds mpa.ko for the stock lane's kernel (tools/testing/
#     lane.sh stock): through the postinst's autoinstall when it picks that
#     kernel, else through "dkms install -k KVER" (the log says which);
#   - the installed mpactl and mpacat work outside the checkout (mpactl's
#     YNL and spec from /usr/share/mpa), man finds their pages;
#   - in a stock guest whose module tree has DKMS's mpa.ko and not the
#     lane's build (vm/run --modules): modprobe mpa loads it from
#     updates/dkms/, the loaded module's build ID is the DKMS file's (and
#     not the lane build's), the attach selftest passes on it, and the
#     installed mpacat and mpactl work with it;
#   - make install / make install-dkms / make uninstall with DESTDIR, from
#     the packaged sources (not a checkout), against the stock headers;
#   - apt-get purge removes everything, and the host is as before (the
#     same files in /lib/modules/KVER; DKMS's signing key removed again if
#     this run made it).
# Idempotent: leftovers of an interrupted run are purged first. One run at
# a time per host (a lock), as it installs packages.
set -u
. "$(dirname "$0")/lib.sh"

T=$MPA_TOP/tools/testing
out=$MPA_BUILD/package
deb=$MPA_BUILD/deb
n=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	echo "not ok $n - $1"
	msg "package: FAIL: $1${2:+: $2}"
}

# check DESCRIPTION COMMAND...: ok if COMMAND succeeds
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

bail() {
	echo "Bail out! $*"
	msg "package: $*"
	echo "1..$n"
	exit 1
}

apt_opts=(-y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends)

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2> /dev/null | grep -q '^install ok installed$'
}

# Remove the packages and whatever DKMS still knows of mpa.
purge_all() {
	local p pkgs=
	for p in mpa-tools mpa-dkms; do
		dpkg-query -W "$p" > /dev/null 2>&1 && pkgs="$pkgs $p"
	done
	if [ -n "$pkgs" ]; then
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get purge "${apt_opts[@]}" $pkgs \
			>> "$out/purge.log" 2>&1 || return 1
	fi
	if command -v dkms > /dev/null && dkms status mpa 2> /dev/null | grep -q .; then
		dkms remove mpa --all >> "$out/purge.log" 2>&1 || return 1
	fi
	if [ "${mok_made:-0}" = 1 ]; then
		rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
	return 0
}

# What the packages may touch on the host, to compare before and after.
host_state() {
	find "/lib/modules/$KVER" -maxdepth 3 -path "/lib/modules/$KVER/kernel/*" -prune -o -print | sort
	ls -d /usr/src/mpa-* /var/lib/dkms/mpa /usr/share/mpa /usr/sbin/mpacat /usr/sbin/mpactl 2> /dev/null
	ls /var/lib/dkms 2> /dev/null
}

# The GNU build ID of a module file (.ko or .ko.xz).
build_id() {
	local f=$1 tmp
	tmp=$(mktemp)
	case "$f" in
	*.xz) xz -dc "$f" > "$tmp" ;;
	*) cp "$f" "$tmp" ;;
	esac
	readelf -n "$tmp" | sed -n 's/^ *Build ID: *//p'
	rm -f "$tmp"
}

rm -rf "$out"
mkdir -p "$out"
start=$(date +%s)

"$T/deps.sh" package >&2 || bail "installing the packages the suite needs failed"
eval "$("$T/lane.sh" stock)" || bail "preparing the stock lane failed"
KVER=$LANE_KVER
ver=$(dpkg-parsechangelog -l "$MPA_TOP/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
dkms_dir=/lib/modules/$KVER/updates/dkms
msg "package: mpa $ver; the stock lane's kernel $KVER; the running kernel $(uname -r)"

exec 9> "$MPA_CACHE/package.lock"
flock 9
trap 'purge_all' EXIT
purge_all || bail "cannot purge an earlier run's packages (see $out/purge.log)"
[ -e /var/lib/dkms/mok.key ] && mok_made=0 || mok_made=1
before=$(host_state)

# --- build, lint, contents ---------------------------------------------

if make -s -C "$MPA_TOP" deb > "$out/deb.log" 2>&1 &&
	[ -f "$deb/mpa-dkms_${ver}_all.deb" ] && [ -f "$deb/mpa-tools_${ver}_${arch}.deb" ] &&
	[ -f "$deb/mpa_${ver}.dsc" ]; then
	ok "make deb builds mpa-dkms, mpa-tools and the source package mpa $ver"
else
	tail -n 20 "$out/deb.log" >&2
	not_ok "make deb builds mpa-dkms, mpa-tools and the source package mpa $ver" "see $out/deb.log"
	bail "no packages to test"
fi

lintian -I -E --pedantic --tag-display-limit 0 "$deb/mpa_${ver}_${arch}.changes" \
	> "$out/lintian.log" 2> "$out/lintian.err"
lrc=$?
tags=$(for l in E W I P X; do printf ' %s:%s' "$l" "$(grep -c "^$l: " "$out/lintian.log")"; done)
grep -E '^(E|W): ' "$out/lintian.log" | sed 's/^/    lintian: /' >&2
if [ "$(grep -c '^E: ' "$out/lintian.log")" = 0 ] && [ $lrc -le 1 ] &&
	! grep -qv 'running with root privileges' "$out/lintian.err"; then
	ok "lintian reports no error (tags:$tags; see $out/lintian.log)"
else
	cat "$out/lintian.err" >&2
	not_ok "lintian reports no error (tags:$tags)" "see $out/lintian.log"
fi

contents_ok() {
	local src=usr/src/mpa-$ver f missing=''
	dpkg-deb -c "$deb/mpa-dkms_${ver}_all.deb" | awk '{ print $6 }' > "$out/mpa-dkms.list"
	dpkg-deb -c "$deb/mpa-tools_${ver}_${arch}.deb" | awk '{ print $6 }' > "$out/mpa-tools.list"
	for f in $src/dkms.conf $src/mpa/Kbuild $src/mpa/main.c $src/mpa/core/fpdu.c \
		$src/include/uapi/linux/mpa.h $src/include/net/mpa.h; do
		grep -qx "./$f" "$out/mpa-dkms.list" || missing="$missing mpa-dkms:$f"
	done
	for f in usr/sbin/mpacat usr/sbin/mpactl usr/share/man/man8/mpacat.8.gz \
		usr/share/man/man8/mpactl.8.gz usr/share/mpa/mpa.yaml \
		usr/share/mpa/ynl/lib/ynl.py usr/share/mpa/ynl/lib/nlspec.py \
		usr/share/mpa/ynl/lib/__init__.py usr/share/doc/mpa-tools/copyright; do
		grep -qx "./$f" "$out/mpa-tools.list" || missing="$missing mpa-tools:$f"
	done
	# the tools are not in the module's package, nor the other way round
	grep -q '^\./usr/sbin/' "$out/mpa-dkms.list" && missing="$missing (mpa-dkms has usr/sbin)"
	grep -q '^\./usr/src/' "$out/mpa-tools.list" && missing="$missing (mpa-tools has usr/src)"
	dpkg-deb -f "$deb/mpa-tools_${ver}_${arch}.deb" Built-Using | grep -q '^linux-6\.12 (= ' ||
		missing="$missing (mpa-tools: no Built-Using: linux-6.12)"
	dpkg-deb --fsys-tarfile "$deb/mpa-dkms_${ver}_all.deb" |
		tar -xOf - "./$src/dkms.conf" | grep -qx "PACKAGE_VERSION=\"$ver\"" ||
		missing="$missing (dkms.conf: not version $ver)"
	[ -z "$missing" ] || msg "package: missing or wrong:$missing"
	[ -z "$missing" ]
}
check "mpa-dkms holds the module's source and dkms.conf; mpa-tools the tools, man pages, spec, YNL, Built-Using" contents_ok

# --- install on the host: DKMS ------------------------------------------

if DEBIAN_FRONTEND=noninteractive apt-get install "${apt_opts[@]}" \
	"$deb/mpa-dkms_${ver}_all.deb" "$deb/mpa-tools_${ver}_${arch}.deb" > "$out/install.log" 2>&1 &&
	installed mpa-dkms && installed mpa-tools; then
	ok "apt-get installs mpa-dkms and mpa-tools (postinst succeeds; running kernel $(uname -r))"
else
	tail -n 20 "$out/install.log" >&2
	not_ok "apt-get installs mpa-dkms and mpa-tools" "see $out/install.log"
fi

dkms_built() {
	local how f v
	if dkms status -m mpa -v "$ver" -k "$KVER" 2> /dev/null | grep -q ': installed'; then
		how="by mpa-dkms's postinst (DKMS autoinstall)"
	else
		how="by dkms install -k $KVER (the postinst built for other kernels)"
		dkms install -m mpa -v "$ver" -k "$KVER" > "$out/dkms-install.log" 2>&1 ||
			{ tail -n 20 "$out/dkms-install.log" >&2; return 1; }
	fi
	dkms status -m mpa -v "$ver" -k "$KVER" > "$out/dkms-status" 2>&1
	f=$(find "$dkms_dir" -maxdepth 1 -name 'mpa.ko*' 2> /dev/null | head -n 1)
	[ -n "$f" ] || { msg "package: no mpa.ko in $dkms_dir"; return 1; }
	v=$(modinfo -F vermagic "$f" | cut -d' ' -f1)
	[ "$v" = "$KVER" ] || { msg "package: $f is for $v"; return 1; }
	dkms_ko=$f
	dkms_id=$(build_id "$f")
	msg "package: DKMS built $f $how, build ID $dkms_id"
}
dkms_ko='' dkms_id=''
check "DKMS builds mpa.ko for the stock lane's kernel $KVER into $dkms_dir" dkms_built

installed_tools_ok() {
	local rc
	(cd / && env -u MPA_YNL_DIR /usr/sbin/mpactl --help) > "$out/mpactl-help.out" 2>&1 ||
		{ msg "package: mpactl --help failed"; return 1; }
	grep -q '/usr/share/mpa/ynl' "$out/mpactl-help.out" ||
		{ msg "package: the installed mpactl does not look in /usr/share/mpa"; return 1; }
	# No mpa on this host: the spec and YNL load, the family is missing.
	(cd / && env -u MPA_YNL_DIR /usr/sbin/mpactl conns) > "$out/mpactl-conns.out" 2>&1
	rc=$?
	if [ $rc != 1 ] || ! grep -q 'the kernel has no "mpa" family' "$out/mpactl-conns.out"; then
		msg "package: mpactl conns on the host: exit $rc: $(cat "$out/mpactl-conns.out")"
		return 1
	fi
	(cd / && /usr/sbin/mpacat --help) > "$out/mpacat-help.out" 2>&1 ||
		{ msg "package: mpacat --help failed"; return 1; }
	[ "$(man -w mpacat mpactl 2> /dev/null | tr '\n' ' ')" = \
		"/usr/share/man/man8/mpacat.8.gz /usr/share/man/man8/mpactl.8.gz " ] ||
		{ msg "package: man does not find the pages"; return 1; }
}
check "the installed mpactl (YNL and spec from /usr/share/mpa) and mpacat run outside the checkout; man finds their pages" installed_tools_ok

# --- the DKMS module in a stock guest ------------------------------------

guest_checks() {
	local res=$out/guest g=$out/guest/package rc lane_id id
	if [ ! -x "$MPA_BUILD/selftests/attach" ]; then
		make -s -C "$MPA_TOP" selftests > "$out/selftests-build.log" 2>&1 ||
			cat "$out/selftests-build.log" >&2
	fi
	if [ -z "$dkms_ko" ]; then
		not_ok "a stock guest runs with DKMS's mpa.ko" "DKMS built nothing"
		return
	fi
	"$T/vm/run" --lane stock --modules "$dkms_dir" --quiet --timeout 900 \
		--results "$res" -- tools/testing/package-guest.sh > "$out/guest.log" 2>&1
	rc=$?
	case $rc in
	0) ok "the stock guest with DKMS's mpa.ko ran; its kernel log is clean" ;;
	*) not_ok "the stock guest with DKMS's mpa.ko ran; its kernel log is clean" \
		"vm/run exited $rc (see $res/console.log)" ;;
	esac

	if [ "$(cat "$g/path" 2> /dev/null)" = "$dkms_dir/$(basename "$dkms_ko")" ]; then
		ok "modprobe mpa in the guest loads $dkms_dir/$(basename "$dkms_ko")"
	else
		not_ok "modprobe mpa in the guest loads $dkms_dir/$(basename "$dkms_ko")" \
			"modinfo -n mpa: $(cat "$g/path" 2> /dev/null)"
	fi

	# The loaded module's own build ID (sysfs) is the DKMS file's; the
	# lane's build of the same sources has another one (other paths).
	id=$(cat "$g/build-id" 2> /dev/null)
	lane_id=
	[ -f "$MPA_BUILD/stock/mpa/mpa.ko" ] && lane_id=$(build_id "$MPA_BUILD/stock/mpa/mpa.ko")
	if [ -n "$dkms_id" ] && [ "$id" = "$dkms_id" ] && [ "$id" != "$lane_id" ] &&
		[ "$(cat "$g/build-id-after" 2> /dev/null)" = "$dkms_id" ]; then
		ok "the loaded mpa is DKMS's build (build ID $id; the lane's: ${lane_id:-none}), also after the selftest reloads it"
	else
		not_ok "the loaded mpa is DKMS's build" \
			"loaded $id, after reload $(cat "$g/build-id-after" 2> /dev/null), DKMS $dkms_id, lane ${lane_id:-none}"
	fi

	# The attach selftest, one line per test; a skip is no pass.
	local line plan=0 seen=0
	if [ -s "$g/attach.tap" ]; then
		plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$g/attach.tap" | head -n 1)
		while IFS= read -r line; do
			case "$line" in
			"ok "*"# SKIP"* | "ok "*"# skip"*)
				not_ok "attach on DKMS's mpa.ko: ${line#ok [0-9]* }" "skipped" ;;
			"ok "*) ok "attach on DKMS's mpa.ko: ${line#ok [0-9]* }" ;;
			"not ok "*) not_ok "attach on DKMS's mpa.ko: ${line#not ok [0-9]* }" ;;
			*) continue ;;
			esac
			seen=$((seen + 1))
		done < <(grep -E '^(not )?ok [0-9]+ ' "$g/attach.tap")
	fi
	if [ -z "$plan" ] || [ "$plan" = 0 ] || [ "$seen" != "$plan" ]; then
		not_ok "attach on DKMS's mpa.ko: every planned test ran" "plan ${plan:-none}, $seen reported"
		grep -E '^# +(FAIL|SKIP)|Bail out' "$g/attach.tap" 2> /dev/null | head -n 10 >&2
	fi

	# The installed tools with the DKMS module: "hello" from an Initiator
	# to a Responder in a namespace of their own, counted by mpactl stats.
	local st=$g/stats.out
	if [ "$(cat "$g/initiator.rc" 2> /dev/null)" = 0 ] &&
		[ "$(cat "$g/responder.rc" 2> /dev/null)" = 0 ] &&
		[ "$(cat "$g/responder.out" 2> /dev/null)" = hello ]; then
		ok "the installed mpacat, Initiator and Responder, exchange a ULPDU over DKMS's mpa"
	else
		cat "$g/initiator.err" "$g/responder.err" 2> /dev/null | tail -n 10 >&2
		not_ok "the installed mpacat, Initiator and Responder, exchange a ULPDU over DKMS's mpa" \
			"exit $(cat "$g/initiator.rc" 2> /dev/null)/$(cat "$g/responder.rc" 2> /dev/null)"
	fi
	if [ "$(cat "$g/stats.rc" 2> /dev/null)" = 0 ] &&
		grep -qx 'attached 2' "$st" && grep -qx 'established 2' "$st" &&
		grep -qx 'tx-fpdus 1' "$st" && grep -qx 'rx-fpdus 1' "$st"; then
		ok "the installed mpactl stats counts them (attached 2, established 2, tx-fpdus 1, rx-fpdus 1)"
	else
		head -n 20 "$st" >&2 2> /dev/null
		not_ok "the installed mpactl stats counts them" "see $st"
	fi
}
guest_checks

# --- make install from the packaged sources -------------------------------

make_install_ok() {
	local d=$out/destdir src=$deb/mpa-$ver f missing='' rc left
	local mk=(make -s -C "$src" KDIR="$LANE_KDIR" DESTDIR="$d")
	rm -rf "$d"
	"${mk[@]}" install install-dkms > "$out/make-install.log" 2>&1 ||
		{ tail -n 20 "$out/make-install.log" >&2; return 1; }
	for f in "lib/modules/$KVER/updates/mpa.ko" usr/local/sbin/mpacat usr/local/sbin/mpactl \
		usr/local/share/man/man8/mpacat.8 usr/local/share/man/man8/mpactl.8 \
		usr/local/share/mpa/mpa.yaml usr/local/share/mpa/ynl/lib/ynl.py \
		"usr/src/mpa-$ver/dkms.conf" "usr/src/mpa-$ver/mpa/Kbuild"; do
		[ -f "$d/$f" ] || missing="$missing $f"
	done
	[ -z "$missing" ] || { msg "package: make install did not install:$missing"; return 1; }
	[ "$(modinfo -F vermagic "$d/lib/modules/$KVER/updates/mpa.ko" | cut -d' ' -f1)" = "$KVER" ] ||
		{ msg "package: make install's mpa.ko is not for $KVER"; return 1; }
	# an mpactl installed in PREFIX/sbin finds PREFIX/share/mpa
	(cd / && env -u MPA_YNL_DIR "$d/usr/local/sbin/mpactl" conns) > "$out/destdir-mpactl.out" 2>&1
	rc=$?
	if [ $rc != 1 ] || ! grep -q 'the kernel has no "mpa" family' "$out/destdir-mpactl.out"; then
		msg "package: $d/usr/local/sbin/mpactl conns: exit $rc: $(cat "$out/destdir-mpactl.out")"
		return 1
	fi
	"${mk[@]}" uninstall >> "$out/make-install.log" 2>&1 ||
		{ tail -n 20 "$out/make-install.log" >&2; return 1; }
	left=$(find "$d" -type f)
	[ -z "$left" ] || { msg "package: make uninstall left: $left"; return 1; }
}
check "make install (KDIR: the stock headers, DESTDIR) and install-dkms put everything in place from the packaged sources; make uninstall removes it" make_install_ok

# --- purge ---------------------------------------------------------------

purged_ok() {
	purge_all || { tail -n 20 "$out/purge.log" >&2; return 1; }
	! installed mpa-dkms && ! installed mpa-tools || return 1
	if dkms status mpa 2> /dev/null | grep -q . || ls "$dkms_dir"/mpa.ko* > /dev/null 2>&1 ||
		ls -d /usr/src/mpa-* /usr/share/mpa /usr/sbin/mpactl /usr/sbin/mpacat > /dev/null 2>&1; then
		msg "package: something of mpa is left after the purge"
		return 1
	fi
}
check "apt-get purge removes both packages, DKMS's mpa and its module" purged_ok

after=$(host_state)
if [ "$before" = "$after" ]; then
	ok "the host is as before the suite (/lib/modules/$KVER, /usr/src, /var/lib/dkms)"
else
	diff <(echo "$before") <(echo "$after") | head -n 20 >&2
	not_ok "the host is as before the suite"
fi

echo "1..$n"
msg "package suite took $(($(date +%s) - start)) s; logs in $out"
