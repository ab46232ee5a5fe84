#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make kcsan`: twheel's concurrent tests in a VM of the kcsan kernel (KCSAN,
# the data-race detector, with lockdep: tests/vm/kcsan-kernel.config), one
# plan after the other in one boot (tests/vm/vm-run.sh):
#   kunit   the KUnit suites (tests/vm/plans/kunit.sh)
#   races   the race selftest (tests/vm/plans/races.sh): callbacks racing
#           the file's ioctls, read() and close() on the other CPU, the
#           windows widened by the delay points
#   uring   the io_uring selftests (tests/vm/plans/uring.sh): expiry
#           completions racing CANCEL, their teardown (6.12's io_uring)
#   robust  the ioctl fuzzer and the multi-threaded stress
#           (tests/vm/plans/robust.sh, with its kcsan sizes)
# A KCSAN report fails a run only when it involves twheel; reports in
# core-kernel code are listed and counted (the rule: tests/vm/vm-run.sh).
# Ends with the "N passed, N failed" total over all runs.
#
# Environment: TWHEEL_KCSAN_ROBUST_PLANS (default "robust"), the
# robustness plans run after the first three.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

read -r -a plans <<<"kunit races uring ${TWHEEL_KCSAN_ROBUST_PLANS:-robust}"
# at least a KUnit case, the race test's five, the uring plan's check and
# one robustness check; the memory and timeout per plan that
# tests/vm/robust.sh gives the kcsan kernel
TWHEEL_VM_MEM=${TWHEEL_VM_MEM:-1G} \
	TWHEEL_VM_TIMEOUT=${TWHEEL_VM_TIMEOUT:-$((900 * ${#plans[@]}))} \
	run_counted "${plans[*]} kcsan" "$TWHEEL_ROOT/tests/vm/vm-run.sh" \
	--min-tests $((${#plans[@]} + 4)) kcsan "${plans[@]}" || true
report_counted kcsan
