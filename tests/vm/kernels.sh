#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The six kernels twheel is tested on, fetched or built into the cache
# (${TWHEEL_CACHE:-$HOME/.cache/twheel}) and reused from there:
#
#   stock61   Debian 12's kernel (linux-image-<abi>-amd64), the ABI matching
#             the installed linux-headers-amd64; KDIR is its headers package.
#   stock612  Debian 12's 6.12 backport (linux-image-<abi>-amd64-unsigned)
#             matching linux-headers-6.12-amd64.
#   rt61      Debian 12's PREEMPT_RT kernel (linux-image-<abi>-rt-amd64)
#             matching linux-headers-rt-amd64.
#   rt612     Debian 12's PREEMPT_RT 6.12 backport
#             (linux-image-<abi>-rt-amd64-unsigned) matching
#             linux-headers-6.12-rt-amd64.
#   debug     built from Debian's linux-source-6.1: tinyconfig plus
#             tests/vm/debug-kernel.config (KASAN, lockdep, kmemleak, KUnit...).
#             The O= build directory is also its KDIR.
#   kcsan     built the same way with tests/vm/kcsan-kernel.config (KCSAN,
#             lockdep, KUnit); KCSAN and KASAN exclude each other.
#
# A built kernel lives in <name>-<source version>-<sha256 of its fragment>;
# after a build, the newest other build of the same name is kept and older
# ones are removed (those of the other name are never touched).
#
# Debian's images (stock61, stock612, rt61, rt612) are unpacked from the .deb
# with dpkg-deb, never installed into the host's /boot.
#
# Usage:
#   kernels.sh prepare [KERNEL...] fetch/build what is missing (default: all)
#   kernels.sh image KERNEL        print the bzImage path (preparing it)
#   kernels.sh kdir KERNEL         print the KDIR for external modules
#   kernels.sh release KERNEL      print the kernel release (uname -r)
#   kernels.sh source              print the extracted linux-source tree
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

# ---- Debian package resolution ----------------------------------------------

# The versioned headers package a meta package depends on, as "name version",
# e.g. "linux-headers-6.1.0-56-amd64 6.1.192-2".
headers_dep() {
	local meta=$1 dep
	dep=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null) ||
		die "$meta is not installed; run: sudo scripts/deps.sh build"
	# "linux-headers-6.1.0-56-amd64 (= 6.1.192-2)" -> name version
	sed -n 's/^\(linux-headers-[^ ,]*\) *(= *\([^)]*\)).*/\1 \2/p' <<<"$dep"
}

# Sets: meta (headers meta package), hdr_pkg, hdr_ver, release, img_pkg
resolve_stock() {
	local k=$1 dep
	case "$k" in
	stock61) meta=linux-headers-amd64 ;;
	stock612) meta=linux-headers-6.12-amd64 ;;
	rt61) meta=linux-headers-rt-amd64 ;;
	rt612) meta=linux-headers-6.12-rt-amd64 ;;
	*) die "not a Debian kernel image: $k" ;;
	esac
	dep=$(headers_dep "$meta")
	[[ -n "$dep" ]] || die "cannot parse the dependency of $meta"
	read -r hdr_pkg hdr_ver <<<"$dep"
	release=${hdr_pkg#linux-headers-}
	case "$k" in
	stock61 | rt61) img_pkg=linux-image-$release ;;
	# 6.12 from bookworm-security: the -unsigned package, the same kernel
	# without the Secure Boot signature (linux-image-<abi>-amd64-unsigned,
	# linux-image-<abi>-rt-amd64-unsigned).
	stock612 | rt612) img_pkg=linux-image-$release-unsigned ;;
	esac
}

# ---- linux-source-6.1 ---------------------------------------------------------

source_version() {
	dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null ||
		die "linux-source-6.1 is not installed; run: sudo scripts/deps.sh build"
}

source_dir() { echo "$TWHEEL_CACHE/src/linux-source-$(source_version)"; }

extract_source() {
	local dir tmp
	dir=$(source_dir)
	[[ -f "$dir/Makefile" ]] && return 0
	log "extracting /usr/src/linux-source-6.1.tar.xz into $dir"
	mkdir -p "$TWHEEL_CACHE/src"
	tmp=$(mktemp -d "$TWHEEL_CACHE/src/.extract.XXXXXX")
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$tmp"
	# rename last, so an interrupted extraction is never mistaken for a tree
	mv "$tmp/linux-source-6.1" "$dir"
	rmdir "$tmp"
}

ensure_source() {
	[[ -f "$(source_dir)/Makefile" ]] || with_lock source extract_source
	source_dir
}

# ---- Debian images (stock61, stock612, rt61, rt612) --------------------------

stock_dir() {
	local meta hdr_pkg hdr_ver release img_pkg
	resolve_stock "$1"
	echo "$TWHEEL_CACHE/$1-$release"
}

fetch_stock() {
	local k=$1 meta hdr_pkg hdr_ver release img_pkg dir tmp deb
	resolve_stock "$k"
	dir=$TWHEEL_CACHE/$k-$release
	[[ -f "$dir/vmlinuz" ]] && return 0
	log "$k: downloading $img_pkg=$hdr_ver (the version of the installed $hdr_pkg)"
	mkdir -p "$TWHEEL_CACHE"
	tmp=$(mktemp -d "$TWHEEL_CACHE/.fetch.XXXXXX")
	local apt_opts=()
	# apt drops to the _apt user to download, which cannot write into a
	# root-owned private temp dir; as root, download as root instead.
	[[ $(id -u) -eq 0 ]] && apt_opts+=(-o APT::Sandbox::User=root)
	(cd "$tmp" && apt-get download "${apt_opts[@]}" "$img_pkg=$hdr_ver") ||
		die "apt-get download $img_pkg=$hdr_ver failed (run 'apt-get update'; the image must match the installed $hdr_pkg)"
	deb=$(echo "$tmp"/*.deb)
	# Only the kernel image is needed: the guest gets our modules from the
	# initramfs and everything it needs is built in.
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" "./boot/vmlinuz-$release"
	mkdir -p "$dir"
	mv "$tmp/boot/vmlinuz-$release" "$dir/vmlinuz"
	rm -rf "$tmp"
	log "$k: $dir/vmlinuz"
}

# ---- kernels built from source (debug, kcsan) --------------------------------

# The config fragment of a built kernel: tests/vm/<name>-kernel.config.
fragment() { echo "$TWHEEL_ROOT/tests/vm/$1-kernel.config"; }

built_dir() {
	local hash
	hash=$(sha256sum "$(fragment "$1")" | cut -c1-12)
	echo "$TWHEEL_CACHE/$1-$(source_version)-$hash"
}

# Every CONFIG_ line of the fragment must hold in the final .config: Kconfig
# silently drops options whose dependencies are not met.
verify_config() {
	local frag=$1 out=$2 line opt missing=()
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF -- "$line" "$out/.config" || missing+=("$line")
			;;
		"# CONFIG_"*" is not set")
			opt=${line#\# }
			opt=${opt%% *}
			grep -q "^$opt=" "$out/.config" && missing+=("$line")
			;;
		esac
	done <"$frag"
	if ((${#missing[@]})); then
		log "these options of ${frag#"$TWHEEL_ROOT"/} did not end up in $out/.config:"
		printf '    %s\n' "${missing[@]}" >&2
		die "fix the fragment (add the missing dependencies) and retry"
	fi
}

# After a build of kernel $1 into $2, keep it and the newest other build of
# the same name (another branch's fragment) and remove the older ones: each
# is 200-300 MB, and a changed fragment would otherwise leave its
# predecessor behind for good.  Only "$1-<version>-<hash>" directories are
# candidates, so building kcsan never removes a debug build, nor the
# reverse.
prune_built() {
	local k=$1 keep=$2 d
	local -a stale
	mapfile -t stale < <(find "$TWHEEL_CACHE" -maxdepth 1 -type d \
		-regextype posix-extended -regex ".*/$k-[^/]+-[0-9a-f]{12}" \
		-printf '%T@ %p\n' | sort -rn | cut -d' ' -f2- | grep -vxF -- "$keep" | tail -n +2)
	for d in "${stale[@]}"; do
		log "$k: removing stale build $(basename "$d")"
		rm -rf -- "$d"
	done
}

build_kernel() {
	local k=$1 frag src out logf
	frag=$(fragment "$k")
	src=$(ensure_source)
	out=$(built_dir "$k")
	[[ -f "$out/.twheel-built" ]] && return 0
	log "$k: building $(basename "$out") from $src ($(nproc) jobs, several minutes)"
	rm -rf "$out"
	mkdir -p "$out"
	logf=$out/twheel-build.log
	{
		make -C "$src" O="$out" tinyconfig
		"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "$frag"
		make -C "$src" O="$out" olddefconfig
	} >"$logf" 2>&1 || {
		tail -n 40 "$logf" >&2
		die "$k: configuration failed, see $logf"
	}
	verify_config "$frag" "$out"
	local targets=(bzImage modules_prepare)
	grep -q '=m$' "$out/.config" && targets+=(modules)
	log "$k: make ${targets[*]} (log: $logf)"
	local start=$SECONDS
	make -C "$src" O="$out" -j"$(nproc)" "${targets[@]}" >>"$logf" 2>&1 || {
		tail -n 60 "$logf" >&2
		die "$k: kernel build failed, see $logf"
	}
	touch "$out/.twheel-built"
	log "$k: built $out/arch/x86/boot/bzImage in $((SECONDS - start)) s"
	prune_built "$k" "$out"
}

# ---- commands ---------------------------------------------------------------------

# Progress and tool output go to stderr: stdout carries only the paths that
# callers capture with $(kernels.sh image ...).
prepare() {
	local k
	exec 3>&1 1>&2
	for k in "$@"; do
		check_kernel_name "$k"
		case "$k" in
		debug | kcsan) [[ -f "$(built_dir "$k")/.twheel-built" ]] || with_lock "$k" build_kernel "$k" ;;
		*) [[ -f "$(stock_dir "$k")/vmlinuz" ]] || with_lock "$k" fetch_stock "$k" ;;
		esac
	done
	exec 1>&3 3>&-
}

cmd=${1:-}
shift || true
case "$cmd" in
prepare)
	(($#)) || set -- "${TWHEEL_ALL_KERNELS[@]}"
	prepare "$@"
	;;
image)
	prepare "$1"
	case "$1" in
	debug | kcsan) echo "$(built_dir "$1")/arch/x86/boot/bzImage" ;;
	*) echo "$(stock_dir "$1")/vmlinuz" ;;
	esac
	;;
kdir)
	check_kernel_name "$1"
	case "$1" in
	debug | kcsan)
		prepare "$1"
		built_dir "$1"
		;;
	*)
		(
			resolve_stock "$1"
			echo "/usr/src/linux-headers-$release"
		)
		;;
	esac
	;;
release)
	check_kernel_name "$1"
	case "$1" in
	debug | kcsan)
		prepare "$1"
		cat "$(built_dir "$1")/include/config/kernel.release"
		;;
	*) (
		resolve_stock "$1"
		echo "$release"
	) ;;
	esac
	;;
source) ensure_source ;;
*)
	sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac
