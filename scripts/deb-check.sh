#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb-check`: the Debian packages as a user gets them, installed and
# purged in a throwaway root, without touching the host.
#
#   build     `make deb` (scripts/deb.sh: dpkg-buildpackage, then lintian
#             with no error or warning); DEB_BUILD_OPTIONS=nocheck, as
#             `make -C tools check` is a step of its own
#   install   `dpkg -i` of twheel-dkms, libtwheel1, libtwheel-dev and
#             twheel-tools in the root: the DKMS postinst builds and
#             installs twheel.ko for the stock 6.1 and 6.12 kernels (the
#             only ones in the root's /lib/modules), modinfo checks their
#             vermagic; the udev rule lands in /lib/udev/rules.d, the
#             library in /usr/lib/<triplet> and ldconfig's cache, the uapi
#             header in /usr/include/twheel/linux/ and not in
#             linux-libc-dev's /usr/include/linux/, the man pages where
#             man finds them; `pkg-config --cflags --libs libtwheel` gives
#             what the header needs; README.md's example builds against
#             the installed packages and, without the module, says to load
#             it; twheelctl runs
#   consumer  samples/ as a module of its own built through DKMS against
#             the installed twheel-dkms with samples/dkms.conf, for 6.1
#             and 6.12: twheel's POST_BUILD kept its Module.symvers, modpost
#             warns of nothing and records the dependency on twheel, and
#             `dkms autoinstall` builds twheel before it (BUILD_DEPENDS)
#   purge     `dpkg --purge` of all four: no twheel.ko, DKMS tree, source,
#             rule, library, header or any other file named *twheel* is
#             left in the root
#   host      /var/lib/dpkg/status, /var/lib/dkms, /usr/src, /lib/modules
#             and /lib/udev/rules.d of the host are unchanged
#
# The root: the host's / as the lower layer of an overlayfs whose upper
# layer is a tmpfs, in a private mount namespace (unshare -m), with a
# private /lib/modules holding build links for the two kernels, /proc and
# /dev; dpkg and dkms run in it under chroot.  Needs root (dpkg, chroot,
# overlayfs): as another user the install, purge and host checks are
# skipped.  TAP output; the last line is "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

KERNELS=(stock61 stock612)
PKGS=(twheel-dkms libtwheel1 libtwheel-dev twheel-tools)
VER=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
DEBS=$TWHEEL_BUILD/deb

# ---- TAP ------------------------------------------------------------------------

# shellcheck source=scripts/tap.sh
. "$(dirname "$0")/tap.sh"

# ---- in the namespace: the throwaway root -----------------------------------------

# consumer_checks ROOT: samples/ as a module of its own that uses twheel's
# API, built through DKMS against the installed twheel-dkms as
# samples/dkms.conf says (in_root and W from inner()).  For each kernel:
# twheel's POST_BUILD kept Module.symvers in its DKMS tree, the sample
# builds with KBUILD_EXTRA_SYMBOLS from there, modpost warns about nothing
# and records that it depends on twheel.  Then BUILD_DEPENDS: with both
# removed for the last kernel, `dkms autoinstall` (what a new kernel's
# postinst runs) builds twheel before the sample.  Removed again after.
consumer_checks() {
	local root=$1 k rel arch src first=()
	arch=$(uname -m)
	src=/usr/src/twheel-sample-0.1.0
	mkdir -p "$root$src"
	cp samples/dkms.conf samples/Kbuild samples/twheel_sample.c "$root$src/"
	if in_root dkms add twheel-sample/0.1.0 >"$W/log/sample-add" 2>&1; then
		ok "samples/dkms.conf: dkms add twheel-sample/0.1.0"
	else
		not_ok "samples/dkms.conf: dkms add twheel-sample/0.1.0"
		note "$W/log/sample-add"
	fi
	for k in "${KERNELS[@]}"; do
		rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
		check "$k: twheel's POST_BUILD kept /var/lib/dkms/twheel/<ver>/$rel/$arch/Module.symvers" \
			grep -q 'twheel_timer_start' "$root/var/lib/dkms/twheel/$VER/$rel/$arch/Module.symvers"
		sample_build "$k" "$rel" "dkms build twheel-sample/0.1.0 -k $rel" \
			in_root dkms build twheel-sample/0.1.0 -k "$rel"
	done
	# BUILD_DEPENDS orders autoinstall: twheel first, then the sample
	in_root dkms remove twheel-sample/0.1.0 -k "$rel" >"$W/log/sample-rm1" 2>&1 || true
	in_root dkms remove twheel/"$VER" -k "$rel" >"$W/log/sample-rm2" 2>&1 || true
	check "$k: twheel removed for $rel, its Module.symvers with it" \
		test ! -e "$root/var/lib/dkms/twheel/$VER/$rel/$arch/Module.symvers"
	sample_build "$k" "$rel" "dkms autoinstall -k $rel builds twheel, then the sample" \
		in_root dkms autoinstall -k "$rel"
	# the make commands dkms prints, M=/var/lib/dkms/<module>/<version>/build
	mapfile -t first < <(grep -oE 'M=/var/lib/dkms/[^/]+/' "$W/log/sample-$k" |
		sed 's|^M=/var/lib/dkms/||; s|/$||' | uniq)
	is "$k: autoinstall built twheel, then twheel-sample" "${first[*]}" "twheel twheel-sample"
	check "$k: both installed for $rel" test -n "$(find "$W/modules/$rel/updates/dkms" \
		-name 'twheel.ko*')" -a -n "$(find "$W/modules/$rel/updates/dkms" -name 'twheel_sample.ko*')"
	if in_root dkms remove twheel-sample/0.1.0 --all >"$W/log/sample-remove" 2>&1; then
		ok "dkms remove twheel-sample/0.1.0 --all"
	else
		not_ok "dkms remove twheel-sample/0.1.0 --all"
		note "$W/log/sample-remove"
	fi
	rm -rf "${root:?}$src"
}

# sample_build KERNEL RELEASE DESC CMD...: CMD builds the sample for RELEASE;
# its make.log must show modpost content, and the .ko depend on twheel.
sample_build() {
	local k=$1 rel=$2 desc=$3 log ko
	shift 3
	if "$@" >"$W/log/sample-$k" 2>&1; then
		ok "$k: $desc"
	else
		not_ok "$k: $desc"
		tail -n 30 "$W/log/sample-$k" | note
	fi
	log=$root/var/lib/dkms/twheel-sample/0.1.0/$rel/$(uname -m)/log/make.log
	check "$k: the sample's make.log ran modpost" grep -q 'MODPOST' "$log"
	is "$k: modpost warned of nothing (no undefined twheel_* symbols)" \
		"$(grep -iE 'warning|undefined|error' "$log" 2>/dev/null || true)" ""
	ko=$(find "$root/var/lib/dkms/twheel-sample/0.1.0/$rel" -name 'twheel_sample.ko*' -print -quit 2>/dev/null || true)
	is "$k: modinfo: twheel_sample.ko depends on twheel" "$( [[ -n $ko ]] && modinfo -F depends "$ko")" twheel
}

# inner W: everything that needs the root, run by the outer part below in
# a private mount namespace; prints TAP lines numbered from $n.
inner() {
	local W=$1 root upper k rel ko left multiarch rc
	root=$W/root
	upper=$W/layers/upper
	mount -t tmpfs -o size=1g,mode=0755 twheel-deb-check "$W/layers"
	mkdir -p "$upper" "$W/layers/work" "$root"
	mount -t overlay overlay \
		-o "lowerdir=/,upperdir=$upper,workdir=$W/layers/work" "$root"
	mount --bind "$W/modules" "$root/lib/modules"
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	mkdir -p "$root/tmp/twheel-debs"
	cp "${DEB_FILES[@]}" "$root/tmp/twheel-debs/"
	in_root() { chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
	multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

	# -- install
	if in_root sh -c 'dpkg -i /tmp/twheel-debs/*.deb' >"$W/log/install" 2>&1; then
		ok "dpkg -i ${PKGS[*]}"
	else
		not_ok "dpkg -i ${PKGS[*]}"
		tail -n 60 "$W/log/install" | note
	fi
	grep -E '^(Building for|Building initial|Running module version sanity|Signing|Installing to|depmod)' \
		"$W/log/install" | sort -u | note || true
	for k in "${KERNELS[@]}"; do
		rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
		ko=$(find "$W/modules/$rel/updates/dkms" -name 'twheel.ko*' -print -quit 2>/dev/null || true)
		check "$k: the postinst's DKMS installed /lib/modules/$rel/updates/dkms/twheel.ko" test -n "$ko"
		if [[ -n "$ko" ]]; then
			is "$k: its vermagic is $rel" "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$rel"
		fi
		check "$k: dkms status says twheel is installed for $rel" \
			grep -q "installed" <<<"$(in_root dkms status twheel -k "$rel" 2>&1)"
	done
	check "the udev rule is /lib/udev/rules.d/60-twheel.rules, as in udev/" \
		cmp -s "$root/lib/udev/rules.d/60-twheel.rules" udev/60-twheel.rules
	check "libtwheel.so.1 is in /usr/lib/$multiarch" test -e "$root/usr/lib/$multiarch/libtwheel.so.1"
	# (/lib is /usr/lib on a merged-/usr system: ldconfig may name either)
	check "ldconfig's cache lists libtwheel.so.1" \
		grep -qE "libtwheel\.so\.1 .*=> (/usr)?/lib/$multiarch/libtwheel\.so\.1\$" <<<"$(in_root ldconfig -p)"
	check "the uapi header is /usr/include/twheel/linux/twheel.h" \
		cmp -s "$root/usr/include/twheel/linux/twheel.h" include/uapi/linux/twheel.h
	check "nothing in linux-libc-dev's /usr/include/linux/" test ! -e "$root/usr/include/linux/twheel.h"
	# (pkg-config ends its output with a space)
	is "pkg-config --libs libtwheel" "$(in_root pkg-config --libs libtwheel 2>&1 | sed 's/ *$//')" "-ltwheel"
	is "pkg-config --cflags libtwheel" "$(in_root pkg-config --cflags libtwheel 2>&1 | sed 's/ *$//')" \
		"-I/usr/include/twheel"
	# README.md's example, cut out as tools/Makefile does
	sed -n '/^<!-- readme-example -->$/,/^```$/p' README.md | sed '1,2d;$d' >"$root/tmp/example.c"
	# shellcheck disable=SC2016  # expanded in the root
	if in_root sh -c 'cc -Wall -Werror -o /tmp/example /tmp/example.c $(pkg-config --cflags --libs libtwheel)' \
		>"$W/log/example" 2>&1; then
		ok "README.md's example builds against the installed packages"
	else
		not_ok "README.md's example builds against the installed packages"
		note "$W/log/example"
	fi
	check "it is linked to the installed libtwheel.so.1" \
		grep -qE "libtwheel\.so\.1 => (/usr)?/lib/$multiarch/libtwheel\.so\.1 " <<<"$(in_root ldd /tmp/example 2>&1)"
	in_root /tmp/example >"$W/log/example-run" 2>&1 && rc=0 || rc=$?
	echo "exit status $rc" >>"$W/log/example-run"
	check "without the module it exits 1 and says to load it" \
		grep -qzE 'is twheel\.ko loaded.*exit status 1' "$W/log/example-run"
	note "$W/log/example-run"
	is "twheelctl --version" "$(in_root twheelctl --version 2>&1)" \
		"twheelctl $(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf) (ABI version 2 of /dev/twheel)"
	for m in 1:twheelctl 3:libtwheel 4:twheel; do
		check "man ${m%%:*} ${m#*:} is installed" \
			test -n "$(in_root man -w "${m%%:*}" "${m#*:}" 2>/dev/null)"
	done

	consumer_checks "$root"

	# -- purge
	if in_root dpkg --purge "${PKGS[@]}" >"$W/log/purge" 2>&1; then
		ok "dpkg --purge ${PKGS[*]}"
	else
		not_ok "dpkg --purge ${PKGS[*]}"
		tail -n 40 "$W/log/purge" | note
	fi
	is "no twheel.ko left in /lib/modules" "$(find "$W/modules" -name 'twheel.ko*')" ""
	is "dkms knows no twheel" "$(in_root dkms status twheel 2>&1)" ""
	is "ldconfig's cache lists no libtwheel" "$(in_root ldconfig -p | grep libtwheel || true)" ""
	# what the packages left in the upper layer (ldconfig's cache and
	# dpkg's logs name them in their contents only), but this script's
	rm -rf "$root/tmp/twheel-debs" "$root"/tmp/example*
	left=$(cd "$upper" && find . -iname '*twheel*' | sort)
	is "nothing named *twheel* left in the root" "$left" ""
	umount -R "$root"
}

# ---- outside: build, then the namespace -----------------------------------------

if [[ ${1:-} == --inner ]]; then
	shift
	W=$1
	n=$2 pass=0 fail=0
	mapfile -t DEB_FILES < <(for p in "${PKGS[@]}"; do ls "$DEBS/${p}_"*.deb; done)
	inner "$W"
	echo "$pass $fail $n" >"$W/counts"
	exit 0
fi

"$TWHEEL_ROOT/scripts/deps.sh" deb

t0=$SECONDS
if DEB_BUILD_OPTIONS=nocheck "$TWHEEL_ROOT/scripts/deb.sh" >"$TWHEEL_BUILD/deb-check-build.log" 2>&1; then
	ok "make deb: the packages build, lintian clean ($((SECONDS - t0)) s)"
else
	not_ok "make deb: the packages build, lintian clean"
	tail -n 30 "$TWHEEL_BUILD/deb-check-build.log" | note
fi
grep -E '^# [IP]: ' "$TWHEEL_BUILD/deb-check-build.log" | note || true
have() { compgen -G "$1" >/dev/null; }
for p in "${PKGS[@]}"; do
	check "$p's .deb was built" have "$DEBS/${p}_*.deb"
done

if (($(id -u) != 0)); then
	skip "install, check and purge in a throwaway root" "needs root (dpkg, chroot, overlayfs)"
	finish
	exit
fi

# What the host holds where the packages would write.
host_listing() {
	{
		md5sum /var/lib/dpkg/status
		find /var/lib/dkms /usr/src /lib/modules /lib/udev/rules.d -maxdepth 3 \
			-printf '%p %y %s\n' 2>/dev/null || true
	} | sort
}

W=$(mktemp -d "${TMPDIR:-/tmp}/twheel-deb-check.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$W/layers" "$W/modules" "$W/log"
# The root's /lib/modules: the two kernels, their headers as build links
for k in "${KERNELS[@]}"; do
	rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
	mkdir -p "$W/modules/$rel"
	ln -s "$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k")" "$W/modules/$rel/build"
done
host_listing >"$W/host.before"
t0=$SECONDS
if unshare --mount --propagation private "$0" --inner "$W" "$n"; then
	read -r p f n <"$W/counts"
	pass=$((pass + p)) fail=$((fail + f))
else
	not_ok "the throwaway root could not be set up (unshare, tmpfs, overlayfs)"
fi
echo "# install, checks and purge: $((SECONDS - t0)) s"
host_listing >"$W/host.after"
if diff -u "$W/host.before" "$W/host.after" >"$W/host.diff"; then
	ok "host: dpkg status, /var/lib/dkms, /usr/src, /lib/modules, /lib/udev/rules.d unchanged"
else
	not_ok "host: dpkg status, /var/lib/dkms, /usr/src, /lib/modules, /lib/udev/rules.d unchanged"
	head -n 40 "$W/host.diff" | note
fi
finish
