#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages the twheel build and tests need, only those
# that are missing.  Checks with dpkg-query first so that a machine that has
# everything does no apt work at all (and needs no root); runs
# `apt-get update` at most once, and only when something must be installed.
#
# Usage: deps.sh [build|vm|lint|docs|dkms|deb|tools|all]...     (default: all)
#   build  compile twheel.ko for the Debian kernels (stock and PREEMPT_RT),
#          build the debug and kcsan kernels
#   vm     boot kernels in qemu with a busybox initramfs, static test binaries
#   lint   checkpatch, sparse, kernel-doc, shellcheck
#   docs   Sphinx (make docs)
#   dkms   dkms (make dkms-check)
#   deb    the Debian packages (make deb, make deb-check)
#   tools  abidiff (make -C tools check)
set -euo pipefail

# Compiling modules for the stock kernels and building the debug and kcsan
# kernels (Debian 12's gcc 12 has the -fsanitize=thread KCSAN needs).
# linux-headers-amd64 / linux-headers-6.12-amd64 / linux-headers-rt-amd64 /
# linux-headers-6.12-rt-amd64 are Debian's meta packages that follow the
# current 6.1, 6.12, PREEMPT_RT 6.1 and PREEMPT_RT 6.12 ABIs;
# tests/vm/kernels.sh downloads the matching images (stock61, stock612, rt61,
# rt612), and lint.sh compiles for the RT headers too (the RT branches of
# src/facility.c compile nowhere else).  The 6.12 headers packages depend on
# their image (signed or -unsigned), so apt installs that image on the host
# too; the harness never uses it (kernels.sh fetches its own copy).
# linux-source-6.1 provides the source of the debug kernel and the kernel's
# own tooling (kselftest_harness.h, checkpatch.pl, kernel-doc);
# linux-source-6.12 that of the debug612 and kcsan kernels.
BUILD=(gcc make bc flex bison libelf-dev libssl-dev kmod xz-utils rsync
	libc6-dev linux-headers-amd64 linux-headers-6.12-amd64
	linux-headers-rt-amd64 linux-headers-6.12-rt-amd64 linux-source-6.1
	linux-source-6.12)
# qemu (TCG), the guest's userland and the initramfs packer.  libc6-dev
# carries the libc.a the static selftest binaries link against, gcc-multilib
# the 32-bit one of the compat selftest, liburing-dev the static liburing
# of the userspace benchmark and of the io_uring selftest; debootstrap and
# curl make the sid kernel's chroot and fetch its image (tests/vm/kernels.sh).
VM=(qemu-system-x86 busybox-static cpio gzip libc6-dev gcc-multilib liburing-dev
	debootstrap curl)
# checkpatch.pl needs a full perl; shellcheck lints the harness scripts;
# clang's libFuzzer and sanitizer runtimes fuzz the userspace build of the
# engines (tests/engines); valgrind's callgrind counts their instructions
# (bench/engines/insn.sh, the engines-bench step's gate).
LINT=(sparse perl shellcheck clang libclang-rt-14-dev valgrind)
# abidiff for `make -C tools check` (libtwheel's ABI against its baseline).
TOOLS=(abigail-tools)
# Sphinx for `make docs` and man-db for its checks of the man pages
# (lexgrog, man --warnings), liburing-dev for the io_uring example that
# it compiles with the other C snippets; dkms for `make dkms-check`.
DOCS=(python3-sphinx man-db liburing-dev)
DKMS=(dkms)
# `make deb`: dpkg-buildpackage with debhelper and Debian 12's dh_dkms
# (dh-dkms: dh-sequence-dkms), lintian over the result; deb-check builds
# the README example against the installed packages with pkg-config; the
# man pages of the packages need Sphinx (and linux-source-6.1, in BUILD),
# deb-check looks them up with man.
DEB=(dpkg-dev debhelper dh-dkms fakeroot lintian pkgconf python3-sphinx man-db)

want=()
(($#)) || set -- all
for group in "$@"; do
	case "$group" in
	build) want+=("${BUILD[@]}") ;;
	vm) want+=("${BUILD[@]}" "${VM[@]}") ;;
	lint) want+=("${BUILD[@]}" "${LINT[@]}") ;;
	docs) want+=("${BUILD[@]}" "${DOCS[@]}") ;;
	dkms) want+=("${BUILD[@]}" "${DKMS[@]}") ;;
	tools) want+=("${TOOLS[@]}") ;;
	deb) want+=("${BUILD[@]}" "${DKMS[@]}" "${DEB[@]}" "${TOOLS[@]}") ;;
	all) want+=("${BUILD[@]}" "${VM[@]}" "${LINT[@]}" "${DOCS[@]}" "${DKMS[@]}" "${DEB[@]}" "${TOOLS[@]}") ;;
	*)
		echo "usage: ${0##*/} [build|vm|lint|all|docs|dkms|deb|tools]..." >&2
		exit 2
		;;
	esac
done

missing=()
for pkg in $(printf '%s\n' "${want[@]}" | sort -u); do
	# "ii " = wanted and fully installed; anything else needs apt
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
	[[ "$status" == "ii "* ]] || missing+=("$pkg")
done

if ((${#missing[@]} == 0)); then
	echo "${0##*/}: all packages for '$*' are installed" >&2
	exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
	echo "${0##*/}: missing Debian packages: ${missing[*]}" >&2
	echo "${0##*/}: run as root:  sudo $0 $*" >&2
	echo "${0##*/}: (or: sudo apt-get update && sudo apt-get install ${missing[*]})" >&2
	exit 1
fi

echo "${0##*/}: installing: ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# no recommends: they pull in hundreds of MB (qemu GUI, ovmf, build-essential)
apt-get install -y -qq --no-install-recommends "${missing[@]}" </dev/null
