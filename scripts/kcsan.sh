#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make kcsan`: twheel's concurrent tests in VMs of the kcsan kernel (KCSAN,
# the data-race detector, with lockdep: scripts/kcsan-kernel.config), one
# VM each:
#   kunit   the KUnit suites (scripts/plans/kunit.sh)
#   races   the race selftest (scripts/plans/races.sh): callbacks racing
#           the file's ioctls, read() and close() on the other CPU, the
#           windows widened by the delay points
#   robust  the ioctl fuzzer and the multi-threaded stress
#           (scripts/plans/robust.sh, with its kcsan sizes), through
#           scripts/robust.sh and its VM memory and timeout
# A KCSAN report fails a run only when it involves twheel; reports in
# core-kernel code are listed and counted (the rule: scripts/vm-run.sh).
# Ends with the "N passed, N failed" total over all runs.
#
# Environment: TWHEEL_KCSAN_ROBUST_PLANS (default "robust"), the plans
# scripts/robust.sh runs here.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

run_counted "kunit kcsan" "$TWHEEL_ROOT/scripts/vm-run.sh" --min-tests 1 kcsan kunit || true
run_counted "races kcsan" "$TWHEEL_ROOT/scripts/vm-run.sh" --min-tests 5 kcsan races || true
TWHEEL_ROBUST_PLANS=${TWHEEL_KCSAN_ROBUST_PLANS:-robust} \
	run_counted "robust kcsan" "$TWHEEL_ROOT/scripts/robust.sh" kcsan || true
report_counted kcsan
