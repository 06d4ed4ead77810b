# SPDX-License-Identifier: GPL-2.0
# Shared helpers for mpa's test scripts. Source it; do not run it.

MPA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HOME=${HOME:-$(getent passwd "$(id -u)" | cut -d: -f6)}
MPA_CACHE=${MPA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mpa}
# Where make puts per-lane module builds and test binaries (git-ignored)
MPA_BUILD=${MPA_BUILD:-$MPA_TOP/.build}
mkdir -p "$MPA_CACHE" "$MPA_BUILD"

msg() { printf '%s\n' "mpa: $*" >&2; }
die() { printf '%s\n' "mpa: error: $*" >&2; exit 1; }

# The options of the scripts that run kinds of the benchmark's sides part
# (tools/testing/bench/icount.sh, spinstacks.sh): sides_opts OPTSTRING
# USAGE "$@" sets guests (-n), rounds (-r), scale (-s) and size (-S), of
# those OPTSTRING has; the caller then shifts $((OPTIND - 1)).
sides_opts() {
	local optstring=$1 usage=$2 opt
	shift 2
	guests=3 rounds=3 scale=2000 size=0
	OPTIND=1
	while getopts "$optstring" opt; do
		case $opt in
		n) guests=$OPTARG ;;
		r) rounds=$OPTARG ;;
		s) scale=$OPTARG ;;
		S) size=$OPTARG ;;
		*) die "usage: $usage" ;;
		esac
	done
}

# The kinds of transfer of the benchmark's sides part (mpabench -X) named
# in "$@", checked; all four when none is.
sides_kinds() {
	local kind
	for kind in "$@"; do
		case $kind in
		tcp | both | writes | reads) ;;
		*) die "$kind: the kinds are tcp, both, writes and reads" ;;
		esac
	done
	echo "${*:-tcp both writes reads}"
}

# Run "$@" with a lock on $1 (a file) held; the lock serialises work on a
# shared cache entry between concurrent runs.
with_lock() {
	local lock=$1; shift
	(
		flock 9
		"$@"
	) 9>"$lock"
}

# The unpacked Debian linux-source-6.12 tree: the debug lane's source, and
# where checkpatch.pl, the kselftest harness and kunit.py come from.
mpa_source_version() {
	dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null
}

mpa_source_tree() {
	local ver dir
	ver=$(mpa_source_version) || die "linux-source-6.12 is not installed (run: make deps)"
	[ -n "$ver" ] || die "linux-source-6.12 is not installed (run: make deps)"
	dir=$MPA_CACHE/src/$ver
	if [ ! -f "$dir/.unpacked" ]; then
		with_lock "$MPA_CACHE/src.lock" _mpa_unpack_source "$dir" >&2
	fi
	echo "$dir/linux-source-6.12"
}

_mpa_unpack_source() {
	local dir=$1
	[ -f "$dir/.unpacked" ] && return 0
	msg "unpacking /usr/src/linux-source-6.12.tar.xz into $dir"
	rm -rf "$dir" && mkdir -p "$dir"
	tar -C "$dir" -xf /usr/src/linux-source-6.12.tar.xz || die "cannot unpack linux-source"
	touch "$dir/.unpacked"
}
