#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything, in the order that fails cheapest first.
#   deps        scripts/deps.sh all (installs nothing when all is there)
#   lint        make lint
#   docs        make docs (Sphinx, warnings are errors)
#   modules     make modules-all (builds the debug and kcsan kernels on a
#               cold cache)
#   dkms        make dkms-check (dkms build for 6.1 and 6.12, modinfo)
#   selftest    make selftest (stock61, stock612, debug VMs)
#   robust      make robust (ioctl fuzzer, stress, lifecycle VMs)
#   kunit       make kunit (debug VM)
#   kcsan       make kcsan (KUnit, ioctl fuzzer and stress in kcsan VMs)
#   tools       libtwheel's unit test and export check (no kernel)
#   wheel-fuzz  the engines built in userspace (tools/testing/twheel): corpus
#               replay and 10 s of libFuzzer on every engine, a seconds-long
#               native benchmark run
#   bench-smoke seconds-long benchmark run in a stock 6.1 VM
#   insn-smoke  the instruction profiler (bench/run.sh --insn) on two tiny
#               workloads in a stock 6.1 VM
# A failing step does not stop the later ones, so one run shows every
# problem.  Prints per-step timings; the last line is the total
# "N passed, N failed"; exits non-zero if anything failed.
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
}

# Missing packages make every later step fail: stop right here instead.
start=$SECONDS
"$TWHEEL_ROOT/scripts/deps.sh" all
STEP_REPORT+=("$(printf '%-28s %4d s' deps $((SECONDS - start)))")

step lint make --no-print-directory lint
step docs make --no-print-directory docs
step modules make --no-print-directory modules-all
step dkms make --no-print-directory dkms-check
step selftest make --no-print-directory selftest
step robust make --no-print-directory robust
step kunit make --no-print-directory kunit
step kcsan make --no-print-directory kcsan
step tools make --no-print-directory -C tools check
step wheel-fuzz make --no-print-directory -C tools/testing/twheel smoke
step bench-smoke make --no-print-directory -C bench smoke
step insn-smoke make --no-print-directory -C bench insn-smoke

echo
report_counted "check (total $((SECONDS - start)) s)"
