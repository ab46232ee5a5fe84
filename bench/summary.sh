#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the README's performance lines from the committed full runs in
# bench/results/ (kernel-stock61.csv, kernel-stock612.csv): eight
# comparisons, each as the range over N of the median advantage (peer
# cost / twheel cost; above 1 twheel is cheaper) on both kernels, grouped
# by where they fall: ahead where every figure is above 1, behind where
# every one is below, either way otherwise.  The groups come from the
# figures, not from this script, so a new run moves a line when it
# crosses 1.  `make lint` compares the README's block with this output,
# so the README never quotes a run it does not hold.
#
# Usage: bench/summary.sh [RESULTS_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-$here/results}
lib=$(<"$here/report-lib.awk")

# range KERNEL SUITE TWHEEL PEER OP: "LO HI lo–hix", the lowest and
# highest median over N; fails when the run has no such row
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
	if (a == "") exit 1
	printf "%s %s %s–%sx\n", a, b, rfmt(a), rfmt(b)
}' "$dir/kernel-$1.csv"
}

ahead=()
behind=()
mixed=()

# line TEXT SUITE TWHEEL PEER OP: a kernel whose published run lacks the
# rows (a comparison newer than it) says "not measured"
line() {
	local text=$1 k lo hi txt above=0 below=0 out=()
	shift
	for k in stock61 stock612; do
		if read -r lo hi txt < <(range "$k" "$@"); then
			awk -v x="$lo" 'BEGIN { exit !(x > 1) }' && above=$((above + 1))
			awk -v x="$hi" 'BEGIN { exit !(x < 1) }' && below=$((below + 1))
			out+=("$txt")
		else
			out+=("not measured")
		fi
	done
	txt=$(printf -- '- %s: %s on 6.1, %s on 6.12' "$text" "${out[0]}" "${out[1]}")
	if ((above && !below && above == ${#out[@]})); then
		ahead+=("$txt")
	elif ((below && !above && below == ${#out[@]})); then
		behind+=("$txt")
	else
		mixed+=("$txt")
	fi
}

line "batched arm + cancel from user space vs io_uring timeouts, 10^3–10^6 timers" \
	user twheel_b4096 io_uring arm_cancel
line "batched arm + cancel from user space vs one timerfd per timer" \
	user twheel_b4096 timerfd arm_cancel
line "kernel memory per armed timer vs timerfd" \
	mem twheel_b4096 timerfd bytes_per_timer
line "in-kernel start + cancel vs \`timer_list\`" \
	ops twheel timer_list start_cancel
line "CPU time per expiry, all due at once, vs \`timer_list\`" \
	fire twheel timer_list fire_cpu
line "Ratas workload (start, cancel, expire mixed) vs \`timer_list\`" \
	ratas twheel timer_list cpu_ns_per_event
line "batched arm + cancel vs timers kept in the process (a 4-ary heap and one timerfd), 10^3–10^6 timers" \
	user twheel_b4096 uheap arm_cancel
line "CPU time of all CPUs per one-shot expiry delivered vs that heap, 10^3 and 10^5/s" \
	deliver twheel uheap oneshot_busy

group() {
	local title=$1
	shift
	(($#)) || return 0
	echo "$title"
	printf '%s\n' "$@"
}
group "Ahead (advantage above 1x everywhere):" "${ahead[@]}"
group "Behind (advantage below 1x everywhere):" "${behind[@]}"
group "Either way (above 1x on one kernel or size, below on another):" "${mixed[@]}"
