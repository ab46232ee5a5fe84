#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The eight kernels twheel is tested on, fetched or built into the cache
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
#   debug612  the same debug kernel from linux-source-6.12 (fragments
#             debug-kernel.config, then debug612-kernel.config): the
#             io_uring paths 6.1 lacks (multishot reads, the expiry
#             completions) under KASAN, lockdep and kmemleak.
#   kcsan     built from linux-source-6.12 with tests/vm/kcsan-kernel.config
#             (KCSAN, lockdep, KUnit); KCSAN and KASAN exclude each other.
#   sid       Debian sid's kernel, pinned below (SID_*): the image
#             (vmlinuz of linux-binary-<abi>) and a sid chroot made with
#             debootstrap --variant=minbase, holding gcc, make, the
#             kernel's build dependencies and linux-headers-<abi>: the
#             headers need sid's compiler and libc, newer than the host's.
#             Modules for it are built inside the chroot (kernels.sh run).
#             Sid moves on and its archive keeps only the current version:
#             when the pinned one has gone from it, the image and the
#             chroot come from snapshot.debian.org as of SID_SNAPSHOT.
#             To move the pin, set the four SID_* values to sid's current
#             kernel (apt-cache policy linux-image-amd64 in sid).
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
#   kernels.sh source              print the extracted linux-source-6.1 tree
#   kernels.sh root sid            print the sid chroot (preparing it)
#   kernels.sh run sid CMD...      run CMD in the sid chroot, the work tree
#                                  and the build directory at their paths
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

# ---- linux-source-6.1, linux-source-6.12 ---------------------------------------

# The Debian source package series a kernel built from source comes from:
# the debug kernel is 6.1, the kernel most users run; debug612 and kcsan
# are 6.12, whose io_uring has what 6.1 lacks (multishot reads, cancelable
# commands: the expiry completions).  Without an argument: 6.1, the tree
# the harness takes kselftest_harness.h, checkpatch and kunit.py from.
source_series() {
	case "${1:-}" in
	"" | debug) echo 6.1 ;;
	debug612 | kcsan) echo 6.12 ;;
	*) die "no linux-source series for '$1'" ;;
	esac
}

# source_version [KERNEL]
source_version() {
	local series
	series=$(source_series "${1:-}")
	dpkg-query -W -f='${Version}' "linux-source-$series" 2>/dev/null ||
		die "linux-source-$series is not installed; run: sudo scripts/deps.sh build"
}

source_dir() { echo "$TWHEEL_CACHE/src/linux-source-$(source_version "${1:-}")"; }

extract_source() {
	local dir tmp series
	series=$(source_series "${1:-}")
	dir=$(source_dir "${1:-}")
	[[ -f "$dir/Makefile" ]] && return 0
	log "extracting /usr/src/linux-source-$series.tar.xz into $dir"
	mkdir -p "$TWHEEL_CACHE/src"
	tmp=$(mktemp -d "$TWHEEL_CACHE/src/.extract.XXXXXX")
	tar -xJf "/usr/src/linux-source-$series.tar.xz" -C "$tmp"
	# rename last, so an interrupted extraction is never mistaken for a tree
	mv "$tmp/linux-source-$series" "$dir"
	rmdir "$tmp"
}

# ensure_source [KERNEL]: extract the tree KERNEL is built from, print it
ensure_source() {
	local series
	series=$(source_series "${1:-}")
	[[ -f "$(source_dir "${1:-}")/Makefile" ]] ||
		with_lock "source-$series" extract_source "${1:-}"
	source_dir "${1:-}"
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

# ---- Debian sid (sid) ----------------------------------------------------------

# The pinned sid kernel: its ABI name, the version of its packages (the
# image is in linux-binary-<abi>, source linux-signed-amd64), the SHA-256
# of that .deb as sid's Packages index gave it, and a snapshot.debian.org
# timestamp at which sid had that version (the fallback once sid has moved
# on).  The chroot's packages come through apt, which checks them against
# the archive's signed Release file.
SID_RELEASE=7.2.13+deb14-amd64
SID_VERSION=7.2.13-1
SID_BINARY_SHA256=fb8cd0ade4ef82d9dde1dcf183d4bf4033db1b549b0acc9973855ad9cc48c4f5
SID_SNAPSHOT=20261202T000000Z
SID_MIRROR=${TWHEEL_SID_MIRROR:-http://deb.debian.org/debian}
SID_SNAPSHOT_MIRROR=http://snapshot.debian.org/archive/debian/$SID_SNAPSHOT
# What the chroot holds besides minbase: the kernel's build dependencies as
# deps.sh lists them for the host, the headers, and what the selftests and
# tools need to build there (static libc, gcc-multilib, liburing).
# dkms for the DKMS check against sid's headers (scripts/sid-check.sh).
SID_PACKAGES=(gcc make bc flex bison libelf-dev libssl-dev kmod rsync
	libc6-dev gcc-multilib liburing-dev dkms
	"linux-headers-$SID_RELEASE=$SID_VERSION")

# sid-<abi>-<version>-<sha256 of the package list>: a changed list makes
# a new chroot (and the old one goes, see prepare_sid).
sid_dir() {
	local hash
	hash=$(printf '%s\n' "${SID_PACKAGES[@]}" | sha256sum | cut -c1-12)
	echo "$TWHEEL_CACHE/sid-$SID_RELEASE-$SID_VERSION-$hash"
}

# sid_exec ROOT CMD...: CMD (run by sh -c) in the chroot ROOT, in a mount
# namespace of its own with /proc, /dev and the work tree, the build
# directory and the cache's linux-source tree (the selftests' kselftest
# harness) bound at their paths.  As a normal user in a user namespace
# too (unshare --map-root-user), so that only creating the chroot needs
# root.
sid_exec() {
	local root=$1 d binds=""
	shift
	for d in "$TWHEEL_ROOT" "$TWHEEL_BUILD" "$TWHEEL_CACHE/src"; do
		[[ -d "$d" ]] || continue
		binds+="mkdir -p '$root$d' && mount --bind '$d' '$root$d' && "
	done
	local ns=(unshare --mount --propagation private --fork)
	(($(id -u) == 0)) || ns+=(--map-root-user --pid --mount-proc="$root/proc")
	"${ns[@]}" sh -c "set -e
		mount -t proc proc '$root/proc' 2>/dev/null || true
		mount --rbind /dev '$root/dev' 2>/dev/null || true
		$binds :
		exec chroot '$root' /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \\
			sh -c \"\$0\" sid-chroot \"\$@\"
	" "$@"
}

# make_sid_root DIR MIRROR [APT OPTIONS...]: debootstrap sid from MIRROR into
# DIR/root and install SID_PACKAGES from it.
make_sid_root() {
	local dir=$1 mirror=$2
	shift 2
	rm -rf "$dir/root"
	mkdir -p "$dir/root"
	debootstrap --variant=minbase sid "$dir/root" "$mirror" >"$dir/debootstrap.log" 2>&1 || {
		tail -n 20 "$dir/debootstrap.log" >&2
		return 1
	}
	sid_exec "$dir/root" "apt-get $* update -qq &&
		apt-get $* install -y -qq --no-install-recommends ${SID_PACKAGES[*]} &&
		apt-get clean" >"$dir/apt.log" 2>&1 || {
		tail -n 20 "$dir/apt.log" >&2
		return 1
	}
}

# The image from MIRROR's pool, checked against the pinned hash.
fetch_sid_image() {
	local dir=$1 mirror=$2 tmp deb
	deb=linux-binary-${SID_RELEASE}_${SID_VERSION}_amd64.deb
	tmp=$(mktemp -d "$TWHEEL_CACHE/.fetch.XXXXXX")
	if ! curl -fsS -o "$tmp/$deb" "$mirror/pool/main/l/linux-signed-amd64/$deb" ||
		! echo "$SID_BINARY_SHA256  $tmp/$deb" | sha256sum -c --quiet -; then
		rm -rf "$tmp"
		return 1
	fi
	dpkg-deb --fsys-tarfile "$tmp/$deb" | tar -x -C "$tmp" "./usr/lib/modules/$SID_RELEASE/vmlinuz"
	mv "$tmp/usr/lib/modules/$SID_RELEASE/vmlinuz" "$dir/vmlinuz"
	rm -rf "$tmp"
}

prepare_sid() {
	local dir start=$SECONDS
	dir=$(sid_dir)
	[[ -f "$dir/.twheel-ready" ]] && return 0
	(($(id -u) == 0)) || die "sid: making the chroot needs root (debootstrap); run: sudo $0 prepare sid"
	command -v debootstrap >/dev/null || die "sid: debootstrap is missing; run: sudo scripts/deps.sh vm"
	mkdir -p "$dir"
	log "sid: linux-binary-$SID_RELEASE=$SID_VERSION and a sid chroot in $dir"
	if ! fetch_sid_image "$dir" "$SID_MIRROR"; then
		log "sid: $SID_VERSION is not in $SID_MIRROR (any more): trying snapshot.debian.org"
		fetch_sid_image "$dir" "$SID_SNAPSHOT_MIRROR" ||
			die "sid: cannot fetch linux-binary-$SID_RELEASE=$SID_VERSION"
	fi
	# Valid-Until: a mirror's or the snapshot's Release file past its
	# date is still signed by the archive, which apt checks.
	if ! make_sid_root "$dir" "$SID_MIRROR" -o Acquire::Check-Valid-Until=false; then
		log "sid: no chroot with linux-headers-$SID_RELEASE=$SID_VERSION from $SID_MIRROR: trying snapshot.debian.org"
		make_sid_root "$dir" "$SID_SNAPSHOT_MIRROR" -o Acquire::Check-Valid-Until=false ||
			die "sid: cannot make the chroot, see $dir/debootstrap.log and $dir/apt.log"
	fi
	[[ -f "$dir/root/usr/src/linux-headers-$SID_RELEASE/.config" ]] ||
		die "sid: no headers in the chroot"
	touch "$dir/.twheel-ready"
	log "sid: ready in $((SECONDS - start)) s ($(du -sh "$dir" | cut -f1))"
	# an older pin's chroot: 800 MB of nothing
	find "$TWHEEL_CACHE" -maxdepth 1 -type d -name 'sid-*' ! -path "$dir" -exec rm -rf {} +
}

# ---- kernels built from source (debug, debug612, kcsan) ----------------------

# The config fragments of a built kernel, merged in this order on top of
# tinyconfig: tests/vm/<name>-kernel.config, and for debug612 the debug
# kernel's first (debug612-kernel.config holds only what 6.12 needs on top
# of it, so that the two debug kernels cannot drift apart).
fragments() {
	case "$1" in
	debug612) echo "$TWHEEL_ROOT/tests/vm/debug-kernel.config $TWHEEL_ROOT/tests/vm/debug612-kernel.config" ;;
	*) echo "$TWHEEL_ROOT/tests/vm/$1-kernel.config" ;;
	esac
}

built_dir() {
	local hash frags
	read -r -a frags <<<"$(fragments "$1")"
	hash=$(cat "${frags[@]}" | sha256sum | cut -c1-12)
	echo "$TWHEEL_CACHE/$1-$(source_version "$1")-$hash"
}

# True when the tree $1 defines the Kconfig symbol $2 (without CONFIG_).
kconfig_defines() {
	grep -rqsE --include='Kconfig*' "^[[:space:]]*(menu)?config[[:space:]]+$2[[:space:]]*\$" "$1"
}

# Symbols a fragment may set although one of the two source series lacks
# them: 6.12 has BASE_SMALL ("is not set" in the fragments) where 6.1 has
# BASE_FULL.  Any other symbol the tree does not define fails the check,
# as a typo would.
SERIES_ONLY_SYMBOLS=(BASE_FULL)

# Every CONFIG_ line of the fragment must hold in the final .config: Kconfig
# silently drops options whose dependencies are not met.
verify_config() {
	local frag=$1 out=$2 src=$3 line opt missing=()
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			opt=${line%%=*}
			grep -qxF -- "$line" "$out/.config" && continue
			if [[ " ${SERIES_ONLY_SYMBOLS[*]} " == *" ${opt#CONFIG_} "* ]] &&
				! kconfig_defines "$src" "${opt#CONFIG_}"; then
				continue
			fi
			missing+=("$line")
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
	local k=$1 frags src out logf f
	read -r -a frags <<<"$(fragments "$k")"
	src=$(ensure_source "$k")
	out=$(built_dir "$k")
	[[ -f "$out/.twheel-built" ]] && return 0
	log "$k: building $(basename "$out") from $src ($(nproc) jobs, several minutes)"
	rm -rf "$out"
	mkdir -p "$out"
	logf=$out/twheel-build.log
	{
		make -C "$src" O="$out" tinyconfig
		"$src/scripts/kconfig/merge_config.sh" -m -O "$out" "$out/.config" "${frags[@]}"
		make -C "$src" O="$out" olddefconfig
	} >"$logf" 2>&1 || {
		tail -n 40 "$logf" >&2
		die "$k: configuration failed, see $logf"
	}
	for f in "${frags[@]}"; do
		verify_config "$f" "$out" "$src"
	done
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
		debug | debug612 | kcsan) [[ -f "$(built_dir "$k")/.twheel-built" ]] || with_lock "$k" build_kernel "$k" ;;
		sid) [[ -f "$(sid_dir)/.twheel-ready" ]] || with_lock sid prepare_sid ;;
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
	debug | debug612 | kcsan) echo "$(built_dir "$1")/arch/x86/boot/bzImage" ;;
	sid) echo "$(sid_dir)/vmlinuz" ;;
	*) echo "$(stock_dir "$1")/vmlinuz" ;;
	esac
	;;
kdir)
	check_kernel_name "$1"
	case "$1" in
	debug | debug612 | kcsan)
		prepare "$1"
		built_dir "$1"
		;;
	# the headers as the host sees them; inside the chroot they are
	# /usr/src/linux-headers-$SID_RELEASE
	sid)
		prepare sid
		echo "$(sid_dir)/root/usr/src/linux-headers-$SID_RELEASE"
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
	debug | debug612 | kcsan)
		prepare "$1"
		cat "$(built_dir "$1")/include/config/kernel.release"
		;;
	sid) echo "$SID_RELEASE" ;;
	*) (
		resolve_stock "$1"
		echo "$release"
	) ;;
	esac
	;;
source) ensure_source ;;
root)
	[[ ${1:-} == sid ]] || die "only sid has a chroot"
	prepare sid
	echo "$(sid_dir)/root"
	;;
run)
	[[ ${1:-} == sid ]] || die "only sid has a chroot"
	shift
	prepare sid
	sid_exec "$(sid_dir)/root" "$@"
	;;
*)
	sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
	;;
esac
