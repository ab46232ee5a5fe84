#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make install` / `make uninstall`: install twheel, as built by `make` for
# KDIR, into that kernel's module tree, with its udev rule.
#
#   make && sudo make install                 the running kernel
#   make KDIR=<dir> && sudo make install KDIR=<dir>
#   make install DESTDIR=/tmp/stage           staging for a package
#   sudo make install LOAD_AT_BOOT=1          also load twheel at boot
#   sudo make uninstall                       same KDIR/DESTDIR as install
#
# install puts in place:
#   $INSTALL_MOD_PATH/lib/modules/<release>/extra/twheel/
#       every module kbuild built (modules.order): src/twheel.ko, and
#       samples/twheel_sample.ko (inert until loaded), compressed if the
#       kernel compresses its modules (.ko.xz on Debian's 6.12)
#   $DESTDIR/etc/udev/rules.d/60-twheel.rules      always
#   $DESTDIR/etc/modules-load.d/twheel.conf         only with LOAD_AT_BOOT=1:
#       installing a module does not usually change what the system loads
#       at boot, and /dev/twheel cannot load twheel on first open (its
#       minor is dynamic), so whoever wants it at boot asks for it
#   $DESTDIR$PREFIX/...  libtwheel, its headers, libtwheel.pc and twheelctl
#       (make -C tools install, which runs ldconfig when DESTDIR is unset;
#       PREFIX defaults to /usr/local)
# and then, on the live system only (neither DESTDIR nor INSTALL_MOD_PATH
# set), runs depmod for <release> and reloads udev's rules.  Nothing is
# installed when the module was built for another kernel.
#
# uninstall removes exactly those files -- the whole extra/twheel/ directory,
# the rule, twheel.conf whether or not LOAD_AT_BOOT was given -- and runs
# depmod again on the live system.  To customise the rule, put yours in a
# file of its own (e.g. 61-twheel-local.rules): uninstall removes
# 60-twheel.rules whatever it holds.
#
# Variables (environment, or make's command line):
#   KDIR              kernel build tree the module was built against; the
#                     kernel release comes from it (required)
#   DESTDIR           staging root for everything
#   INSTALL_MOD_PATH  root of the module tree only, as kbuild (default:
#                     DESTDIR)
#   LOAD_AT_BOOT=1    install /etc/modules-load.d/twheel.conf
# The module directory is always extra/twheel (INSTALL_MOD_DIR is ignored)
# so that uninstall knows what is ours.  With DKMS (dkms.conf) instead, the
# module lives in updates/dkms/; use one or the other.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

ACTION=${1:-}
KDIR=${KDIR:-}
DESTDIR=${DESTDIR:-}
INSTALL_MOD_PATH=${INSTALL_MOD_PATH:-$DESTDIR}
LOAD_AT_BOOT=${LOAD_AT_BOOT:-0}
MOD_DIR=extra/twheel
RULE=etc/udev/rules.d/60-twheel.rules
LOADCONF=etc/modules-load.d/twheel.conf

usage() {
	sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

case "$ACTION" in
install | uninstall) ;;
*) usage ;;
esac

[[ -n "$KDIR" && -d "$KDIR" ]] ||
	die "KDIR='$KDIR' is not a kernel build tree (install its headers, or pass KDIR=)"

# The kernel's `uname -r`, which modules carry in their vermagic:
# UTS_RELEASE.  Not include/config/kernel.release: in Debian's 6.1 headers
# it says "6.1.<sublevel>" where the kernel is "6.1.0-<abi>-amd64" (their
# .kernelvariables sets kbuild's KERNELRELEASE right).  It is passed to
# modules_install too, so that its directory is always the one depmod and
# uninstall use.
release=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
	"$KDIR/include/generated/utsrelease.h" 2>/dev/null || true)
[[ -n "$release" ]] || die "cannot tell the kernel release of $KDIR (no include/generated/utsrelease.h)"

live=0
[[ -z "$DESTDIR" && -z "$INSTALL_MOD_PATH" ]] && live=1
((live == 0 || $(id -u) == 0)) ||
	die "installing into the live system needs root: sudo make $ACTION (or DESTDIR= to stage)"

moddir=$INSTALL_MOD_PATH/lib/modules/$release

# Copy udev/$1 to $DESTDIR/$2, mode 0644.
put() {
	log "installing $DESTDIR/$2"
	install -D -m 0644 "$TWHEEL_ROOT/udev/$1" "$DESTDIR/$2"
}

drop() {
	if [[ -e "$DESTDIR/$1" ]]; then
		log "removing $DESTDIR/$1"
		rm -f "$DESTDIR/$1"
	fi
}

# The kernel's modules_install signs modules with the key the kernel was
# built with; distributions do not ship it, and its absence prints an SSL
# error per module (and leaves it unsigned anyway).  Skip the attempt then.
sign_args() {
	local key
	grep -q '^CONFIG_MODULE_SIG_ALL=y' "$KDIR/.config" 2>/dev/null || return 0
	key=$(sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$/\1/p' "$KDIR/.config")
	case "$key" in
	pkcs11:*) return 0 ;;
	/*) [[ -f "$key" ]] && return 0 ;;
	*) [[ -f "$KDIR/$key" ]] && return 0 ;;
	esac
	log "$KDIR has no signing key ($key): modules are installed unsigned"
	echo "CONFIG_MODULE_SIG_ALL="
}

live_refresh() {
	((live)) || {
		log "staged: run 'depmod $release' on the target after unpacking"
		return 0
	}
	log "depmod -a $release"
	depmod -a "$release"
	if command -v udevadm >/dev/null && [[ -S /run/udev/control ]]; then
		udevadm control --reload
		# re-apply the rule to a node that already exists
		[[ ! -e /sys/class/misc/twheel ]] ||
			udevadm trigger --action=change /sys/class/misc/twheel
	fi
}

# make -C tools $1: the userspace part.  DESTDIR, PREFIX and the like reach
# it from make's command line through MAKEFLAGS, or from the environment.
tools() {
	log "make -C tools $1"
	make --no-print-directory -C "$TWHEEL_ROOT/tools" "$1" >&2
}

do_install() {
	local ko=$TWHEEL_ROOT/src/twheel.ko vermagic args=()
	[[ -f "$ko" && -f "$TWHEEL_ROOT/modules.order" ]] ||
		die "src/twheel.ko is not built: run 'make KDIR=$KDIR' first (as your user, not root)"
	vermagic=$(modinfo -F vermagic "$ko")
	[[ "${vermagic%% *}" == "$release" ]] ||
		die "src/twheel.ko was built for ${vermagic%% *}, not $release: run 'make KDIR=$KDIR' first"

	mapfile -t args < <(sign_args)
	log "make -C $KDIR M=$TWHEEL_ROOT modules_install KERNELRELEASE=$release INSTALL_MOD_PATH=$INSTALL_MOD_PATH INSTALL_MOD_DIR=$MOD_DIR"
	# DEPMOD=true: kbuild's own depmod step only warns without a
	# System.map; ours below runs on the live system only.
	make --no-print-directory -C "$KDIR" M="$TWHEEL_ROOT" \
		KERNELRELEASE="$release" INSTALL_MOD_PATH="$INSTALL_MOD_PATH" \
		INSTALL_MOD_DIR="$MOD_DIR" DEPMOD=true "${args[@]}" modules_install
	[[ -n "$(find "$moddir/$MOD_DIR" -name 'twheel.ko*' 2>/dev/null)" ]] ||
		die "modules_install did not install twheel.ko into $moddir/$MOD_DIR"

	put 60-twheel.rules "$RULE"
	if [[ "$LOAD_AT_BOOT" == 1 ]]; then
		put twheel.conf "$LOADCONF"
	else
		log "not loading twheel at boot (LOAD_AT_BOOT=1 installs $LOADCONF)"
	fi
	tools install
	live_refresh
	summary 1 0
}

do_uninstall() {
	if [[ -d "$moddir/$MOD_DIR" ]]; then
		log "removing $moddir/$MOD_DIR"
		rm -rf -- "${moddir:?}/$MOD_DIR"
		# extra/ itself, if we were its only user
		rmdir --ignore-fail-on-non-empty "$moddir/${MOD_DIR%/*}"
	fi
	drop "$RULE"
	drop "$LOADCONF"
	tools uninstall
	live_refresh
	summary 1 0
}

"do_$ACTION"
