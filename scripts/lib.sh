#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the twheel harness scripts.  Sourced, never run.
#
# Conventions: every script is bash with `set -euo pipefail`; progress goes to
# stderr prefixed with the script name, so that stdout stays usable for values
# (paths, counts) that callers capture.

# shellcheck disable=SC2034  # variables here are used by the sourcing scripts

TWHEEL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Downloaded kernels, the extracted linux-source tree and the kernels built
# from it (debug, kcsan) live outside the repository so that clones share
# them and `git clean` or `make clean` never throws away a kernel build of
# several minutes.
TWHEEL_CACHE=${TWHEEL_CACHE:-${HOME:-/root}/.cache/twheel}
TWHEEL_BUILD=${TWHEEL_BUILD:-$TWHEEL_ROOT/build}

# The kernels the selftests run on by default (tests/vm/selftest.sh), in the
# order `make check` runs them.  rt61 and rt612 are Debian 12's PREEMPT_RT
# 6.1 and 6.12 kernels: the RT branches of twheel (the expiry lock, the
# sleeping base locks) run nowhere else.
TWHEEL_KERNELS=(stock61 stock612 debug rt61 rt612)
# Kernels built from Debian's linux-source (tests/vm/kernels.sh): debug
# (6.1) and debug612 (6.12) with KASAN, lockdep and kmemleak, kcsan (6.12)
# with the race detector.  "kcsan" and "debug612" are deliberately not in
# TWHEEL_KERNELS: KCSAN under TCG is slower still than the debug kernel,
# and the selftests are mostly one thread checking the API's answers (plus
# the 32-bit tests and fault injection, which the kcsan kernel lacks):
# they would add minutes to every `make selftest` for little KCSAN could
# see.  The kcsan kernel runs what is concurrent -- KUnit, the races, the
# robust plan's fuzzer and stress, the io_uring tests -- as a step of its
# own (tests/vm/kcsan.sh, `make kcsan`); debug612 runs the io_uring tests
# (the uring plan), which take the paths 6.1 does not have.  Every script
# accepts them by name, and `make modules-all` builds for them.
TWHEEL_BUILT_KERNELS=(debug debug612 kcsan)
# Every kernel name the harness accepts.  "sid" is Debian sid's current
# kernel (pinned in tests/vm/kernels.sh), whose headers need a sid chroot
# to build against: its own step in make check (scripts/sid-check.sh), not
# in the default lists.
TWHEEL_ALL_KERNELS=(stock61 stock612 rt61 rt612 "${TWHEEL_BUILT_KERNELS[@]}")

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# Print "N passed, N failed" -- the line every make target ends with.
summary() { printf '%d passed, %d failed\n' "$1" "$2"; }

check_kernel_name() {
	case "$1" in
	stock61 | stock612 | rt61 | rt612 | debug | debug612 | kcsan | sid) ;;
	*) die "unknown kernel '$1' (expected one of: ${TWHEEL_ALL_KERNELS[*]} sid)" ;;
	esac
}

# True for a kernel built from source (its O= directory is its KDIR and
# holds its own modules, such as kunit.ko), false for a Debian image.
is_built_kernel() {
	case "$1" in
	debug | debug612 | kcsan) return 0 ;;
	*) return 1 ;;
	esac
}

# True for Debian's PREEMPT_RT kernels: rt61 (6.1 with the RT patch set)
# and rt612 (6.12, whose PREEMPT_RT is mainline's).  selftest.sh runs the
# rt plan (tests/vm/plans/rt.sh) after the selftest plan on them.
is_rt_kernel() {
	case "$1" in
	rt61 | rt612) return 0 ;;
	*) return 1 ;;
	esac
}

# True for a kernel whose twheel modules are built with TWHEEL_DEBUG=1, the
# debug-only code such as the delay points of src/delay.c that the race
# tests use: the built kernels and the PREEMPT_RT ones (rt61, rt612), whose
# RT code paths those races are most worth widening on, and sid, whose
# image has no KUnit (twheel_test_rt.ko, a delay-point build's test
# module, is what runs in-kernel tests there).  The modules for stock61
# and stock612 are built as a user builds them.
has_delay_points() {
	is_built_kernel "$1" || is_rt_kernel "$1" || [[ $1 == sid ]]
}

# Run "$@" while holding an exclusive lock named $1 in the cache, so that
# concurrent harness runs (several clones, several engineers) never build or
# extract the same cache entry at the same time.
with_lock() {
	local name=$1
	shift
	mkdir -p "$TWHEEL_CACHE"
	(
		flock 9
		"$@"
	) 9>"$TWHEEL_CACHE/.lock-$name"
}

# The same for what one clone builds in $TWHEEL_BUILD and several runs of
# the harness may bring up to date at once: `make check` runs two lanes of
# VMs side by side, and every VM run first makes the selftest and tools
# binaries.
with_build_lock() {
	local name=$1
	shift
	mkdir -p "$TWHEEL_BUILD"
	(
		flock 9
		"$@"
	) 9>"$TWHEEL_BUILD/.lock-$name"
}

# Append to the array named $1 make's -j for a job per CPU, unless a make
# above this one shares its job slots (its jobserver decides then).
add_make_jobs() {
	local -n _jobs_args=$1
	[[ ${MAKEFLAGS:-} == *jobserver* ]] || _jobs_args+=(-j"$(nproc)")
}

# ---- counting ---------------------------------------------------------------

# Totals and per-step timings of run_counted.
COUNT_PASS=0
COUNT_FAIL=0
STEP_REPORT=()

# run_counted LABEL CMD...: run CMD with its output shown, and add the last
# "N passed, N failed" line it printed to COUNT_PASS/COUNT_FAIL.  A command
# that exits non-zero without reporting a failure counts one failure; one
# that succeeds without a summary line counts one pass.
run_counted() {
	local label=$1 out rc line p=0 f=0 start=$SECONDS
	shift
	out=$(mktemp)
	if "$@" 2>&1 | tee "$out"; then rc=0; else rc=${PIPESTATUS[0]}; fi
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out" | tail -n 1 || true)
	rm -f "$out"
	if [[ "$line" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
		p=${BASH_REMATCH[1]}
		f=${BASH_REMATCH[2]}
	elif ((rc == 0)); then
		p=1
	fi
	((rc != 0 && f == 0)) && f=1
	COUNT_PASS=$((COUNT_PASS + p))
	COUNT_FAIL=$((COUNT_FAIL + f))
	STEP_REPORT+=("$(printf '%-28s %4d s  %3d passed, %d failed' "$label" $((SECONDS - start)) "$p" "$f")")
	((f == 0))
}

# Print the per-step report and the closing total; fail if anything failed.
report_counted() {
	local title=$1 s
	echo "---- $title ----"
	for s in "${STEP_REPORT[@]}"; do echo "  $s"; done
	summary "$COUNT_PASS" "$COUNT_FAIL"
	((COUNT_FAIL == 0))
}

# Copy the module sources (what Kbuild compiles) into $1, keeping the build
# products already there so that kbuild rebuilds incrementally.
sync_module_sources() {
	local dest=$1 have=() s
	# tests/engines/model.[ch]: the engines' reference model, which
	# tests/kunit/mod.c compiles into the KUnit module
	for s in Kbuild src include samples tests/kunit tests/stress \
		tests/engines/model.c tests/engines/model.h; do
		[[ -e "$TWHEEL_ROOT/$s" ]] && have+=("$s")
	done
	mkdir -p "$dest"
	# --delete drops sources removed from the repo; excluded patterns
	# (build products) are neither copied nor deleted.
	(cd "$TWHEEL_ROOT" && rsync -aR --delete \
		--exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
		--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.a' \
		--exclude='*.order' --exclude='*.symvers' --exclude='.tmp_versions' \
		--exclude='*.dwo' --exclude='.cache.mk' \
		"${have[@]}" "$dest/")
}
