#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the README's performance lines from the committed full runs in
# bench/results/ (kernel-stock61.csv, kernel-stock612.csv): three
# comparisons where twheel is ahead, three where it is behind, and two
# against timers kept in the process (issue 59's "uheap", printed
# whichever way they fall), each as the range over N of the median
# advantage (peer cost / twheel cost; above 1 twheel is cheaper) on both
# kernels.  `make lint` compares the README's
# block with this output, so the README never quotes a run it does not
# hold.
#
# Usage: bench/summary.sh [RESULTS_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/results}
lib=$(<"$here/report-lib.awk")

# range KERNEL SUITE TWHEEL PEER OP: "lo–hi" of the medians over N
range() {
	awk -F, -v s="$2" -v tw="$3" -v peer="$4" -v o="$5" "$lib"'
END {
	m = sorted(s, N); a = ""; b = ""
	for (i = 1; i <= m; i++) {
		if (!ratio(s, peer, tw, N[i], o)) continue
		x = R["med"]
		if (a == "" || x < a) a = x
		if (b == "" || x > b) b = x
	}
	if (a == "") { print "?"; exit 1 }
	printf "%s–%sx", rfmt(a), rfmt(b)
}' "$dir/kernel-$1.csv"
}

# line TEXT SUITE TWHEEL PEER OP
line() {
	local text=$1
	shift
	printf -- '- %s: %s on 6.1, %s on 6.12\n' "$text" "$(range stock61 "$@")" \
		"$(range stock612 "$@")"
}

# newer comparisons, which an older published run may lack: "not
# measured" for that kernel, instead of a failure
range_new() {
	local r
	r=$(range "$@" 2>/dev/null) && echo "$r" || echo "not measured"
}

line_new() {
	local text=$1
	shift
	printf -- '- %s: %s on 6.1, %s on 6.12\n' "$text" "$(range_new stock61 "$@")" \
		"$(range_new stock612 "$@")"
}

echo "Ahead (advantage above 1x):"
line "batched arm + cancel from user space vs io_uring timeouts, 10^3–10^6 timers" \
	user twheel_b4096 io_uring arm_cancel
line "batched arm + cancel from user space vs one timerfd per timer" \
	user twheel_b4096 timerfd arm_cancel
line "kernel memory per armed timer vs timerfd" \
	mem twheel_b4096 timerfd bytes_per_timer
echo "Behind (advantage below 1x):"
line "in-kernel start + cancel vs \`timer_list\`" \
	ops twheel timer_list start_cancel
line "CPU time per expiry, all due at once, vs \`timer_list\`" \
	fire twheel timer_list fire_cpu
line "Ratas workload (start, cancel, expire mixed) vs \`timer_list\`" \
	ratas twheel timer_list cpu_ns_per_event
echo "Against timers kept in the process (a 4-ary heap and one timerfd; either way):"
line_new "batched arm + cancel, 10^3–10^6 timers" \
	user twheel_b4096 uheap arm_cancel
line_new "CPU time of all CPUs per one-shot expiry delivered, 10^3 and 10^5/s" \
	deliver twheel uheap oneshot_busy
