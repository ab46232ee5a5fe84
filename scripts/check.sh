#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything.  First, one after the other:
#   deps        scripts/deps.sh all (installs nothing when all is there)
#   modules     the modules for stock61, stock612, debug, rt61 and rt612
#               (builds the debug kernel on a cold cache; a Debian image
#               is downloaded by its first VM run)
#   tools       libtwheel's unit test and export check (no kernel); the
#               VM runs use its binaries
# then two lanes side by side, each step of a lane after the one before
# it, because one VM keeps about one of the host's two cores busy (its
# tests mostly wait for timers) and the lanes share no build products,
# and beside them, at the lowest CPU priority, lane 3: the kcsan and
# debug612 modules (on a cold cache the two 6.12 kernels first, about 5
# minutes of both cores each, which then come mostly from what the VMs
# leave idle; the kcsan step waits for its kernel under the kernel's and
# the modules' locks), the Debian packages' check (no VM:
# dpkg-buildpackage, lintian and DKMS builds, here to take them off lane
# 1's critical path), the io_uring plan in a debug612 VM (at normal
# priority: its tests race expiries), then Debian sid's kernel (its
# modules built in a sid chroot, the selftest plan in a VM of it; cold,
# the chroot first), and last the engines in user space (wheel-fuzz and
# engines-bench, below: lane 2 had become the longer one):
#   lane 1 (the host and the stock kernels)
#     lint        make lint
#     docs        make docs (Sphinx, warnings are errors; the C snippets compiled)
#     dkms        make dkms-check (dkms build for 6.1 and 6.12, modinfo)
#     selftest    the selftest plan on stock61 and stock612
#     robust      the robust, lifecycle and hotplug plans in one stock61
#                 VM
#     bench-smoke seconds-long benchmark run in a stock 6.1 VM
#     kcsan       make kcsan (KUnit, races, the io_uring tests, ioctl
#                 fuzzer and stress in one kcsan VM, 6.12); here, not
#                 in lane 2, because the debug kernel's VMs take longer
#                 than the stock ones
#   lane 2 (the debug kernel, the PREEMPT_RT ones, then two stock VMs)
#     debug       one debug VM: the selftest plan, the robust, lifecycle
#                 and hotplug plans, and KUnit (make selftest, make robust
#                 and make kunit boot a VM each); one boot and one
#                 kmemleak report for all of them
#     rt61        the selftest and rt plans in one VM of Debian's
#                 PREEMPT_RT 6.1 kernel (the RT patch set); with rt612
#                 the only kernels that run twheel's RT code paths; here
#                 because lane 2 ends before lane 1
#     rt612       the same on Debian's PREEMPT_RT 6.12 kernel, whose RT
#                 is mainline's (its locking differs from 6.1-rt's)
#     insn-smoke  the instruction profiler (bench/run.sh --insn) on two
#                 tiny workloads in a stock 6.1 VM
#     hotplug     the hotplug plan on stock612, rt61 and rt612 (on RT a
#                 move between bases keeps its CPU with migrate_disable()
#                 and the base locks sleep); these two here, where they
#                 even out the lanes
#   lane 3
#     debug612    the io_uring selftests (tests/vm/plans/uring.sh) on
#                 6.12 with KASAN, lockdep and kmemleak: the paths 6.1
#                 lacks (multishot reads, the expiry completions and
#                 their teardown)
#   lane 3, last
#     wheel-fuzz  the engines built in userspace (tests/engines):
#                 corpus replay (and its decoding by gcc and clang
#                 builds compared) and 10 s of libFuzzer on every engine, a
#                 seconds-long native benchmark run and the callgrind gate
#                 on the default engine's start + cancel (engines-bench,
#                 bench/engines/insn.sh)
# Each lane's output (lane 3: the kcsan and debug612 modules, deb,
# debug612, sid, the engines) goes to
# build/check-laneN.log and is printed whole when all three are done (a
# line per finished step meanwhile);
# TWHEEL_CHECK_JOBS=1 runs the lanes one after the other, printing as it
# goes.  A failing step does not stop the later ones, so one run shows
# every problem.  Prints per-step timings; the last line is the total "N
# passed, N failed"; exits non-zero if anything failed.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

step() {
	local label=$1
	shift
	echo
	echo "==== $label: $* ===="
	run_counted "$label" "$@" || true
	# fd 3: the terminal, for a line per step while the lanes run
	echo "check: ${STEP_REPORT[-1]}" >&3
}

lane1() {
	step lint make --no-print-directory lint
	step docs make --no-print-directory docs
	step dkms make --no-print-directory dkms-check
	step "selftest stock" tests/vm/selftest.sh stock61 stock612
	step "robust stock61" tests/vm/robust.sh stock61
	step bench-smoke make --no-print-directory -C bench smoke
	step kcsan make --no-print-directory kcsan
}

lane2() {
	# make selftest, make robust and make kunit, in one VM: each debug
	# VM pays about 40 s for its boot and kmemleak's closing scans.
	TWHEEL_VM_MEM=1G step "debug" tests/vm/vm-run.sh --timeout 3600 \
		--min-tests 8 debug selftest robust lifecycle hotplug kunit
	step "selftest rt61" tests/vm/selftest.sh rt61
	step "selftest rt612" tests/vm/selftest.sh rt612
	step insn-smoke make --no-print-directory -C bench insn-smoke
	TWHEEL_ROBUST_PLANS=hotplug step "hotplug" tests/vm/robust.sh \
		stock612 rt61 rt612
}

# The kcsan modules, under the lock that vm-run.sh takes to build them;
# the packages' check; then Debian sid's kernel, its modules built in its chroot and the
# selftest plan in a VM of it (scripts/sid-check.sh --quick; make
# check-sid adds the userland built with sid's gcc and the DKMS check),
# at the same priority: warm, this lane is otherwise idle after its first
# seconds, and cold the chroot (debootstrap, 1-4 minutes) is made here
# rather than before the lanes.  TWHEEL_CHECK_SID=0 leaves sid out.  The
# engines' steps last, at normal priority: seconds of the host's CPU.
lane3() {
	step "modules kcsan" with_build_lock modules-kcsan \
		nice -n 19 tests/vm/build-modules.sh kcsan
	step "modules debug612" with_build_lock modules-debug612 \
		nice -n 19 tests/vm/build-modules.sh debug612
	step deb nice -n 19 make --no-print-directory deb-check
	TWHEEL_VM_MEM=1G step "debug612" tests/vm/vm-run.sh --timeout 1800 \
		--min-tests 20 debug612 uring
	[[ ${TWHEEL_CHECK_SID:-1} == 0 ]] ||
		step "sid" nice -n 19 scripts/sid-check.sh --quick
	step wheel-fuzz make --no-print-directory -C tests/engines smoke
	step engines-bench make --no-print-directory -C bench/engines smoke
}

# Run lane $1 in a subshell, its output to build/check-lane$1.log and its
# steps' report and counts to build/check-lane$1.result.
# shellcheck disable=SC2030  # the lane's own counts, handed back in a file
lane_bg() {
	local n=$1
	(
		STEP_REPORT=()
		COUNT_PASS=0
		COUNT_FAIL=0
		"lane$n" >"$TWHEEL_BUILD/check-lane$n.log" 2>&1
		{
			echo "$COUNT_PASS $COUNT_FAIL"
			printf '%s\n' "${STEP_REPORT[@]}"
		} >"$TWHEEL_BUILD/check-lane$n.result"
	) &
}

# shellcheck disable=SC2031  # adds a lane's counts to this shell's
lane_merge() {
	local n=$1 p f line
	{
		read -r p f
		COUNT_PASS=$((COUNT_PASS + p))
		COUNT_FAIL=$((COUNT_FAIL + f))
		while IFS= read -r line; do
			STEP_REPORT+=("$line")
		done
	} <"$TWHEEL_BUILD/check-lane$n.result"
}

exec 3>&1
# Missing packages make every later step fail: stop right here instead.
start=$SECONDS
"$TWHEEL_ROOT/scripts/deps.sh" all
STEP_REPORT+=("$(printf '%-28s %4d s' deps $((SECONDS - start)))")

# Cold, sid's image and chroot are mostly downloads and unpacking: fetch
# them while the modules step builds the debug kernel (sid's step, in lane
# 3, takes the same lock and finds them ready, or reports the failure).
if [[ ${TWHEEL_CHECK_SID:-1} != 0 ]]; then
	mkdir -p "$TWHEEL_BUILD"
	nice -n 19 tests/vm/kernels.sh prepare sid \
		>"$TWHEEL_BUILD/check-sid-prepare.log" 2>&1 </dev/null &
fi
step modules tests/vm/build-modules.sh stock61 stock612 debug rt61 rt612
step tools make --no-print-directory -C tools check

if [[ ${TWHEEL_CHECK_JOBS:-2} == 1 ]]; then
	lane3
	lane1
	lane2
else
	mkdir -p "$TWHEEL_BUILD"
	rm -f "$TWHEEL_BUILD"/check-lane[123].{log,result}
	echo
	echo "check: lanes 1 and 2 running, lane 3 (the 6.12 modules, deb, debug612, sid) beside them; output in $TWHEEL_BUILD/check-lane[123].log"
	lane_bg 3
	lane_bg 1
	lane_bg 2
	wait
	for n in 3 1 2; do
		echo
		echo "==== lane $n ===="
		cat "$TWHEEL_BUILD/check-lane$n.log"
		if [[ -f $TWHEEL_BUILD/check-lane$n.result ]]; then
			lane_merge "$n"
		else
			STEP_REPORT+=("lane $n: no result")
			COUNT_FAIL=$((COUNT_FAIL + 1))
		fi
	done
fi

echo
report_counted "check (total $((SECONDS - start)) s)"
