#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Prepare a test lane's kernel and print what the runner needs, as shell
# assignments (LANE_KVER, LANE_KDIR, LANE_BZIMAGE, LANE_INITRD, LANE_MODROOT).
# Everything is cached under $MPA_CACHE (default ~/.cache/mpa), so a second
# call costs a second or two.
#
#   stock: Debian's linux-image-6.12.<N>+deb12-amd64-unsigned, the newest <N>
#          whose headers are in the archive too; the module is built against
#          those headers.
#   debug: a kernel built from Debian's linux-source-6.12 with
#          tools/testing/config/debug.config on top of allnoconfig (KASAN,
#          lockdep, kmemleak, KUnit, ...); keyed by source version, config
#          and compiler, so it is built once.
set -e
. "$(dirname "$0")/lib.sh"

lane=${1:?usage: lane.sh stock|debug}

# --- stock ---------------------------------------------------------------

# A tiny initramfs: busybox plus the 9p modules of the stock kernel, which
# mounts the host's root file system and switch_roots into the guest init.
stock_initrd() {
	local kver=$1 root=$2 out=$3 tmp m f
	tmp=$(mktemp -d)
	mkdir -p "$tmp/bin" "$tmp/mods" "$tmp/proc" "$tmp/dev" "$tmp/newroot"
	cp /bin/busybox "$tmp/bin/busybox"
	for m in fs/netfs/netfs net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p; do
		f=$root/lib/modules/$kver/kernel/$m.ko.xz
		[ -f "$f" ] || die "missing $f"
		xz -dc "$f" > "$tmp/mods/$(basename "$m").ko"
	done
	install -m 0755 "$MPA_TOP/tools/testing/vm/initramfs-init" "$tmp/init"
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
}

# Unpack the image into $2 once; concurrent runs wait for the first (the
# lock), and a run that was cut short leaves no .ready behind.
fetch_stock() {
	local kver=$1 dir=$2 deb
	if [ ! -f "$dir/.ready" ]; then
		msg "stock lane: fetching linux-image-$kver-unsigned"
		rm -rf "$dir" && mkdir -p "$dir/debs"
		(cd "$dir/debs" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$kver-unsigned" >&2) ||
			die "cannot download linux-image-$kver-unsigned"
		deb=$(ls "$dir"/debs/*.deb)
		dpkg -x "$deb" "$dir/root"
		rm -f "$deb"
		depmod -b "$dir/root" "$kver"
		stock_initrd "$kver" "$dir/root" "$dir/initrd.img"
		touch "$dir/.ready"
	fi
	# Rebuild the initramfs when its init script changed.
	if [ "$MPA_TOP/tools/testing/vm/initramfs-init" -nt "$dir/initrd.img" ]; then
		stock_initrd "$kver" "$dir/root" "$dir/initrd.img"
	fi
}

prepare_stock() {
	local kver dir
	kver=$("$MPA_TOP/tools/testing/deps.sh" stock-headers)
	dir=$MPA_CACHE/stock/$kver
	mkdir -p "$MPA_CACHE/stock"
	with_lock "$MPA_CACHE/stock/prepare.lock" fetch_stock "$kver" "$dir" >&2
	echo "LANE_KVER=$kver"
	echo "LANE_KDIR=/usr/src/linux-headers-$kver"
	echo "LANE_BZIMAGE=$dir/root/boot/vmlinuz-$kver"
	echo "LANE_INITRD=$dir/initrd.img"
	echo "LANE_MODROOT=$dir/root"
}

# --- debug ---------------------------------------------------------------

debug_key() {
	{
		mpa_source_version
		cat "$MPA_TOP/tools/testing/config/debug.config"
		gcc --version | head -n 1
	} | sha256sum | cut -c1-16
}

build_debug() {
	local src=$1 dir=$2 b=$2/build start
	[ -f "$dir/.ready" ] && return 0
	start=$(date +%s)
	msg "debug lane: building the debug kernel in $b (about 10 minutes on 2 cores)"
	rm -rf "$dir" && mkdir -p "$b"
	local log=$dir/build.log
	make -s -C "$src" O="$b" allnoconfig > "$log" 2>&1
	(cd "$b" && "$src/scripts/kconfig/merge_config.sh" -m -O "$b" .config \
		"$MPA_TOP/tools/testing/config/debug.config" >> "$log" 2>&1)
	make -s -C "$src" O="$b" olddefconfig >> "$log" 2>&1
	# Every option of the fragment must have survived olddefconfig.
	local opt missing=
	while read -r opt; do
		case "$opt" in CONFIG_*=*) ;; *) continue ;; esac
		grep -qx "$opt" "$b/.config" || missing="$missing ${opt%%=*}"
	done < "$MPA_TOP/tools/testing/config/debug.config"
	[ -z "$missing" ] || die "debug.config options not in the final config:$missing"
	# The kernel's own warnings go to the log, not to the user.
	if ! make -s -C "$src" O="$b" -j"$(($(nproc) + 1))" bzImage modules >> "$log" 2>&1; then
		grep -E 'error|Error' "$log" | tail -n 20 >&2
		die "debug kernel build failed (log: $log)"
	fi
	make -s -C "$src" O="$b" INSTALL_MOD_PATH="$dir/modroot" modules_install >> "$log" 2>&1
	touch "$dir/.ready"
	msg "debug lane: kernel built in $(($(date +%s) - start)) s"
}

prepare_debug() {
	local src dir kver
	src=$(mpa_source_tree)
	dir=$MPA_CACHE/debug/$(debug_key)
	if [ ! -f "$dir/.ready" ]; then
		mkdir -p "$MPA_CACHE/debug"
		with_lock "$MPA_CACHE/debug/build.lock" build_debug "$src" "$dir"
	fi
	kver=$(cat "$dir/build/include/config/kernel.release")
	echo "LANE_KVER=$kver"
	echo "LANE_KDIR=$dir/build"
	echo "LANE_BZIMAGE=$dir/build/arch/x86/boot/bzImage"
	echo "LANE_INITRD="
	echo "LANE_MODROOT=$dir/modroot"
}

case "$lane" in
stock) prepare_stock ;;
debug) prepare_debug ;;
*) die "unknown lane '$lane' (stock or debug)" ;;
esac
