#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make robust`: the robustness plans (Documentation/robustness.rst) in a VM
# of each kernel named, one after the other in one VM per kernel (a boot,
# and on debug kmemleak's closing scans, cost about 50 s each):
#   robust     ioctl fuzzer and multi-threaded stress through /dev/twheel
#   lifecycle  load/unload cycles with timers in flight
#   hotplug    cpu1 offline and online while timers run on both CPUs
# Plans that do not exist (yet) are skipped.  Ends with the
# "N passed, N failed" total over all runs.
#
# Usage: robust.sh [KERNEL...]   (default: stock61 debug, and stock612 for
#   the hotplug plan: the CPU hotplug state API and the work the teardown
#   does are what differ most between 6.1 and 6.12)
#   Any kernel can be named: `make kcsan` (tests/vm/kcsan.sh) runs the robust
#   plan alone on kcsan, the race detector kernel.  The plan sizes its
#   stress per kernel (tests/vm/plans/robust.sh): 1,000,000 timers on the
#   stock kernels, 50,000 on debug and kcsan.
# Environment: TWHEEL_ROBUST_PLANS (default "robust lifecycle hotplug").
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

named=$#
(($#)) || set -- stock61 stock612 debug
read -r -a plans <<<"${TWHEEL_ROBUST_PLANS:-robust lifecycle hotplug}"
for k in "$@"; do
	check_kernel_name "$k"
	run=()
	for p in "${plans[@]}"; do
		[[ -f "$TWHEEL_ROOT/tests/vm/plans/$p.sh" ]] || continue
		((named)) || [[ $k != stock612 || $p == hotplug ]] || continue
		run+=("$p")
	done
	((${#run[@]})) || continue
	# The stress plan holds a million timers on the stock kernels: 2G
	# as for the demo.  50,000 on the built ones fit in vm-run's 1G,
	# which halves the debug kernel's kmemleak scans.
	mem=2G
	is_built_kernel "$k" && mem=1G
	TWHEEL_VM_MEM=${TWHEEL_VM_MEM:-$mem} \
		TWHEEL_VM_TIMEOUT=${TWHEEL_VM_TIMEOUT:-$((900 * ${#run[@]}))} \
		run_counted "${run[*]} $k" "$TWHEEL_ROOT/tests/vm/vm-run.sh" \
		--min-tests "${#run[@]}" "$k" "${run[@]}" || true
done
report_counted robust
