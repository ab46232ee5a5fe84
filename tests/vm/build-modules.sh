#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build twheel's modules for one or more of the harness kernels.
#
# Each kernel gets its own copy of the module sources under
# build/mod/<kernel>/ (rsync keeps timestamps, so rebuilds are incremental):
# kbuild writes its objects next to the sources, and building the one tree
# in place for several kernels would clobber the objects of the others.
#
# W=1 -Werror always, on every kernel: a compiler warning fails the build,
# and so does any other "warning:" kbuild prints -- objtool's (a call with
# UACCESS enabled, an unreachable instruction: not compiler warnings, so
# -Werror misses them, and 6.1/6.12's objtool has no --Werror) and
# modpost's.  WERROR=0 keeps the warnings but lets the build pass (for a
# look at what a work in progress builds to; lint and CI never set it).
# For the kernels built from source (debug, debug612, kcsan) and for rt61
# and rt612, Debian's PREEMPT_RT kernels, make also gets TWHEEL_DEBUG=1,
# which compiles in twheel's debug-only code (e.g. delay points that
# widen race windows, src/Kbuild; has_delay_points in scripts/lib.sh);
# modules for stock61 and stock612 are built as a user would build them.
# make runs as many jobs as there are CPUs (unless a
# make above it shares its job slots): most of make check's modules step,
# which comes before anything else can run.
#
# sid's modules are built in its chroot (tests/vm/kernels.sh run sid), with
# sid's gcc: the same arguments, the same checks.
#
# Usage: build-modules.sh [KERNEL...]    (default: all six kernels but sid)
# Prints one TAP-ish line per kernel and ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

WERROR=${WERROR:-1}

# build_one KERNEL [extra make args...]: build into build/mod/KERNEL
build_one() {
	local k=$1 kdir dest
	shift
	kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k") || return 1
	dest=$TWHEEL_BUILD/mod/$k
	sync_module_sources "$dest"
	local args=(-C "$kdir" M="$dest" W=1)
	has_delay_points "$k" && args+=(TWHEEL_DEBUG=1)
	((WERROR)) && args+=(KCFLAGS="${KCFLAGS:+$KCFLAGS }-Werror")
	add_make_jobs args
	log "$k: make ${args[*]} modules"
	local out rc=0
	out=$(mktemp)
	if [[ $k == sid ]]; then
		# sid's headers need sid's compiler: make runs in its chroot,
		# where they are at /usr/src (kdir is their path on the host)
		args[1]=/usr/src/${kdir##*/}
		"$TWHEEL_ROOT/tests/vm/kernels.sh" run sid 'make "$@"' \
			"${args[@]}" "$@" modules 2>&1 | tee "$out" || rc=${PIPESTATUS[0]}
	else
		make "${args[@]}" "$@" modules 2>&1 | tee "$out" || rc=${PIPESTATUS[0]}
	fi
	# Only a compiler warning keeps its object from being written: drop
	# the objects, so that the next build prints the others again.
	if ((WERROR)) && grep -E '(^|: )(warning|WARNING):' "$out" >&2; then
		log "$k: the build printed warnings (above): failing it"
		find "$dest" \( -name '*.o' -o -name '*.ko' \) -delete
		rc=1
	fi
	rm -f "$out"
	return "$rc"
}

main() {
	(($#)) || set -- "${TWHEEL_ALL_KERNELS[@]}"
	local k pass=0 fail=0
	for k in "$@"; do
		check_kernel_name "$k"
		if build_one "$k"; then
			echo "ok - modules for $k: $(cd "$TWHEEL_BUILD/mod/$k" && find . -name '*.ko' | sort | tr '\n' ' ')"
			pass=$((pass + 1))
		else
			echo "not ok - modules for $k"
			fail=$((fail + 1))
		fi
	done
	summary "$pass" "$fail"
	((fail == 0))
}

main "$@"
