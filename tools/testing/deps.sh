#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what mpa's build and tests need from Debian's archive. Idempotent:
# a second run that finds everything installed does nothing (no apt-get).
#
# Usage: deps.sh [stock-headers | package | deb]
#   with no argument: the base packages;
#   stock-headers:    also choose the stock lane's kernel version and install
#                     its headers (prints the chosen kernel release);
#   package:          also what the package suite needs (make deb's
#                     packages, DKMS, lintian);
#   deb:              only what make deb needs (not the base packages).
set -e
. "$(dirname "$0")/lib.sh"

PKGS=(
	# building the module, the debug kernel and the test programs
	make gcc libc6-dev bc bison flex libelf-dev libssl-dev cpio dwarves kmod
	sparse linux-source-6.12 python3 perl
	# the io_uring selftest (uring.c)
	liburing-dev
	# the kernel's YNL tools (ynl-gen-c.py, cli.py, mpactl): the netlink
	# spec's YAML and its schema validation
	python3-yaml python3-jsonschema
	# fuzzing the protocol core
	clang libclang-rt-14-dev
	# test guests
	qemu-system-x86 busybox-static
	# tools used inside the guests
	iproute2 tcpdump tshark xz-utils zstd procps
	# the man pages' checks (make static)
	groff-base mandoc man-db
	# the interop suite's peer, Linux soft-iWARP (siw, in the debug
	# kernel): rdma_server and rdma_client, and the userspace siw provider
	rdmacm-utils ibverbs-providers
)

# make deb: dpkg-buildpackage, debhelper with dh-dkms, and the Build-Depends
# (debian/control)
PKGS_DEB=(
	build-essential dpkg-dev debhelper dh-dkms fakeroot linux-source-6.12
)
# the package suite: also DKMS, which builds the packaged module, and lintian
PKGS_PACKAGE=(
	"${PKGS_DEB[@]}" dkms lintian
)

apt_lists_fresh() {
	# Fresh enough: updated within the last day.
	[ -n "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mtime -1 2>/dev/null | head -n 1)" ]
}

apt_update_once() {
	[ -n "$MPA_APT_UPDATED" ] && return 0
	msg "apt-get update"
	apt-get update -qq >&2 || die "apt-get update failed"
	MPA_APT_UPDATED=1
}

missing_pkgs() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

install_pkgs() {
	local missing
	missing=$(missing_pkgs "$@")
	[ -z "$missing" ] && return 0
	[ "$(id -u)" = 0 ] || die "need root to install: $missing"
	apt_lists_fresh || apt_update_once
	msg "installing:" $missing
	# shellcheck disable=SC2086
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >&2; then
		apt_update_once
		# shellcheck disable=SC2086
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $missing >&2 ||
			die "apt-get install failed:" $missing
	fi
}

# The newest 6.12 sublevel for which both the unsigned image and the
# headers are in the archive.
stock_pick_sublevel() {
	local images headers
	apt_lists_fresh || apt_update_once
	images=$(apt-cache pkgnames linux-image-6.12. |
		sed -n 's/^linux-image-6\.12\.\([0-9]*\)+deb12-amd64-unsigned$/\1/p' | sort -n)
	headers=$(apt-cache pkgnames linux-headers-6.12. |
		sed -n 's/^linux-headers-6\.12\.\([0-9]*\)+deb12-amd64$/\1/p' | sort -n)
	comm -12 <(echo "$images" | sort) <(echo "$headers" | sort) | sort -n | tail -n 1
}

if [ "${1:-}" = deb ]; then
	install_pkgs "${PKGS_DEB[@]}"
	exit 0
fi
install_pkgs "${PKGS[@]}"
[ "${1:-}" = package ] && install_pkgs "${PKGS_PACKAGE[@]}"

if [ "${1:-}" = stock-headers ]; then
	# MPA_STOCK_SUBLEVEL pins a sublevel (e.g. 115) instead of the newest.
	n=${MPA_STOCK_SUBLEVEL:-$(stock_pick_sublevel)}
	[ -n "$n" ] || die "no linux-image/linux-headers 6.12 pair found in the archive"
	install_pkgs "linux-headers-6.12.$n+deb12-amd64"
	echo "6.12.$n+deb12-amd64"
fi
