#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make selftest`: run the selftest plan (tests/vm/plans/selftest.sh: load
# twheel.ko and the sample, run every tests/selftests/*_test binary) in a VM of
# each kernel; on rt61 and rt612, the PREEMPT_RT kernels, the rt plan's
# RT-only checks (tests/vm/plans/rt.sh) follow in the same boot, and on every
# kernel the docs plan (the admin guide's examples against this kernel's
# output, tests/vm/plans/docs.sh).  Ends with
# the "N passed, N failed" total over all of them.
#
# Usage: selftest.sh [KERNEL...]   (default: stock61 stock612 debug rt61 rt612)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

(($#)) || set -- "${TWHEEL_KERNELS[@]}"
for k in "$@"; do
	check_kernel_name "$k"
	plans=(selftest docs)
	is_rt_kernel "$k" && plans+=(rt)
	# At least one selftest case besides the selftest plan's own three
	# checks, and a check of each other plan.  The debug VM (KASAN, the
	# 32-bit tests, fault injection) takes about 200 s of its own; leave
	# room for a loaded host.
	run_counted "selftest $k" "$TWHEEL_ROOT/tests/vm/vm-run.sh" \
		--timeout "${TWHEEL_VM_TIMEOUT:-600}" --min-tests $((3 + ${#plans[@]})) \
		"$k" "${plans[@]}" || true
done
report_counted selftest
