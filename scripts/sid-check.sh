#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check-sid`: twheel on Debian sid's kernel (the harness kernel "sid",
# pinned in tests/vm/kernels.sh), built in a sid chroot with sid's gcc:
#
#   modules   tests/vm/build-modules.sh sid: twheel.ko, the sample and
#             twheel_test_rt.ko against sid's headers, W=1, every warning
#             fatal (objtool's and modpost's too)
#   kunit     the KUnit suites (tests/kunit/, tests/stress/) compiled
#             against sid's headers with CONFIG_KUNIT=m given to kbuild:
#             objects only (no modpost), since the image has no KUnit to
#             link or run them against; W=1, warnings fatal
#   userland  the selftests (WERROR=1) and tools/ (libtwheel, twheelctl,
#             README's example; static) built in the chroot with sid's gcc
#             and libc, into build/sid/: new compiler warnings show here
#   selftest  the selftest plan in a VM of sid's image (the host-built
#             static binaries, as on every kernel), twheel_test_rt.ko
#             included: the image has no KUnit (CONFIG_KUNIT is not set)
#   dkms      in the chroot, with sid's dkms: `dkms add` of the work tree,
#             `dkms build` and `dkms install` for sid's kernel into private
#             trees (/var/lib/dkms a tmpfs), modinfo's vermagic and version
#             of the installed module, `dkms remove`
#
# Usage: sid-check.sh [--quick]
#   --quick  modules, KUnit build and selftest only: what make check runs
#            (beside its lanes, scripts/check.sh)
# The chroot and the image are prepared on first use (root needed then).
# Ends with "N passed, N failed" over the steps' own counts.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

quick=0
[[ ${1:-} == --quick ]] && quick=1
KERNELS_SH=$TWHEEL_ROOT/tests/vm/kernels.sh

# The KUnit suites' objects for sid's headers, in build/mod/sid-kunit/.
kunit_objects() {
	local kdir dest=$TWHEEL_BUILD/mod/sid-kunit out rc=0
	kdir=$("$KERNELS_SH" kdir sid)
	sync_module_sources "$dest"
	out=$(mktemp)
	# shellcheck disable=SC2016  # expanded in the chroot
	# CONFIG_KUNIT=m tells kbuild, -DCONFIG_KUNIT_MODULE=1 tells the C
	# (IS_ENABLED(CONFIG_KUNIT) guards what the module exports for them)
	"$KERNELS_SH" run sid 'make -C "$1" M="$2" W=1 \
		KCFLAGS="-Werror -DCONFIG_KUNIT_MODULE=1" \
		CONFIG_KUNIT=m TWHEEL_DEBUG=1 -j2 tests/kunit/ tests/stress/' \
		"/usr/src/${kdir##*/}" "$dest" >"$out" 2>&1 || rc=$?
	if ((rc)) || grep -E '(^|: )(warning|WARNING):' "$out" >/dev/null; then
		cat "$out"
		find "$dest" -name '*.o' -delete
		echo "not ok - KUnit suites compiled against sid's headers"
		rm -f "$out"
		summary 0 1
		return 1
	fi
	rm -f "$out"
	echo "ok - KUnit suites compiled against sid's headers: $(find "$dest/tests" -name '*kunit*.o' | wc -l) objects"
	summary 1 0
}

# In the chroot: the selftests and the static tools into build/sid/.
userland() {
	local ksrc out=$TWHEEL_BUILD/sid
	ksrc=$("$KERNELS_SH" source)
	mkdir -p "$out"
	# shellcheck disable=SC2016  # expanded in the chroot
	"$KERNELS_SH" run sid 'set -e
		gcc --version | head -n 1
		make -j2 --no-print-directory -C "$1/tests/selftests" WERROR=1 \
			KSFT_DIR="$2/tools/testing/selftests" OUTPUT="$3/selftests"
		make --no-print-directory -C "$1/tools" STATIC=1 WERROR=1 \
			O="$3/tools" TWHEELCTL="$3/tools/twheelctl" all' \
		"$TWHEEL_ROOT" "$ksrc" "$out" >"$out/userland.log" 2>&1 || {
		cat "$out/userland.log"
		echo "not ok - userland built with sid's gcc"
		summary 0 1
		return 1
	}
	head -n 1 "$out/userland.log"
	# a compiler warning that -Werror does not cover (the linker's, say)
	if grep -E '(^|: )(warning|WARNING):' "$out/userland.log"; then
		echo "not ok - userland built with sid's gcc: warnings (above)"
		summary 0 1
		return 1
	fi
	echo "ok - userland built with sid's gcc: $(find "$out/selftests" -maxdepth 1 -type f -perm -u+x | wc -l) selftest programs, twheelctl"
	summary 1 0
}

# In the chroot, sid's dkms on a copy of the work tree (as `dkms add .`
# copies it), private trees, dkms' own state on a tmpfs.
dkms_sid() {
	local rel ver src=$TWHEEL_BUILD/sid/dkms-src
	rel=$("$KERNELS_SH" release sid)
	ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
	rm -rf "$src"
	mkdir -p "$src"
	git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [[ ! -e "$f" ]] || printf '%s\0' "$f"; done |
		xargs -0 cp --parents -a -t "$src"
	# shellcheck disable=SC2016  # expanded in the chroot
	"$KERNELS_SH" run sid '
		src=$1 rel=$2 ver=$3 n=0 fail=0
		ok() { n=$((n + 1)); echo "ok $n - $*"; }
		not_ok() { n=$((n + 1)) fail=$((fail + 1)); echo "not ok $n - $*"; }
		mount -t tmpfs tmpfs /var/lib/dkms
		w=$(mktemp -d)
		mkdir -p "$w/dkms" "$w/src" "$w/modules/$rel"
		opts="--dkmstree $w/dkms --sourcetree $w/src --installtree $w/modules --no-depmod"
		echo "# $(dkms --version)"
		if dkms add "$src" $opts >"$w/log" 2>&1; then ok "dkms add"; else not_ok "dkms add"; sed "s/^/#   /" "$w/log"; fi
		if dkms build -m twheel -v "$ver" -k "$rel" --kernelsourcedir "/usr/src/linux-headers-$rel" $opts >"$w/log" 2>&1; then
			ok "dkms build -k $rel"
		else
			not_ok "dkms build -k $rel"
			sed "s/^/#   /" "$w/log"
			tail -n 40 "$w/dkms/twheel/$ver/build/make.log" 2>/dev/null | sed "s/^/#   /"
		fi
		if dkms install -m twheel -v "$ver" -k "$rel" --kernelsourcedir "/usr/src/linux-headers-$rel" $opts >"$w/log" 2>&1; then
			ok "dkms install -k $rel"
		else
			not_ok "dkms install -k $rel"
			sed "s/^/#   /" "$w/log"
		fi
		ko=$(find "$w/modules/$rel" -name "twheel.ko*" -print -quit)
		if [ -n "$ko" ] && [ "$(modinfo -F vermagic "$ko" | cut -d" " -f1)" = "$rel" ]; then
			ok "installed ${ko#"$w"/modules/}, vermagic $rel"
		else
			not_ok "no twheel.ko for $rel in the install tree"
		fi
		if [ -n "$ko" ] && [ "$(modinfo -F version "$ko")" = "$ver" ]; then
			ok "modinfo version $ver (dkms.conf)"
		else
			not_ok "modinfo version is not $ver"
		fi
		dkms remove twheel/"$ver" --all $opts >"$w/log" 2>&1 || true
		if [ -z "$(find "$w/modules" -name "twheel.ko*")" ]; then
			ok "dkms remove --all empties the install tree"
		else
			not_ok "dkms remove --all left twheel.ko behind"
		fi
		rm -rf "$w"
		echo "1..$n"
		echo "$((n - fail)) passed, $fail failed"
		[ "$fail" -eq 0 ]' "$src" "$rel" "$ver"
}

"$KERNELS_SH" prepare sid
echo "# sid: $("$KERNELS_SH" release sid), headers in $("$KERNELS_SH" kdir sid)"
run_counted "sid modules" "$TWHEEL_ROOT/tests/vm/build-modules.sh" sid || true
run_counted "sid kunit build" kunit_objects || true
((quick)) || run_counted "sid userland" userland || true
# the selftest plan's three checks of its own and one selftest at least
run_counted "sid selftest" "$TWHEEL_ROOT/tests/vm/vm-run.sh" \
	--timeout "${TWHEEL_VM_TIMEOUT:-900}" --min-tests 4 sid selftest || true
((quick)) || run_counted "sid dkms" dkms_sid || true
report_counted "check-sid"
