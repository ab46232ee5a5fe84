#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the README's benchmark table (markdown) from one or two full-run
# CSVs of bench/run.sh, typically build/bench/results-stock61.csv and
# results-stock612.csv: for every headline comparison and kernel, the
# ratio at every N (median over the repetitions, and its min-max range),
# the range of those over N, and where twheel is behind (ratio < 1) or a
# target is not MET.  Every ratio is an advantage, peer cost / twheel cost:
# above 1 twheel is cheaper, below 1 it is behind.  Cells, ratios, ranges
# and verdicts are bench/report.sh's (bench/report-lib.awk).
#
# Usage: bench/readme-table.sh CSV [CSV]
#   A CSV may also be named by its kernel (stock61, stock612), as for
#   bench/report.sh.  Smoke CSVs work too (the table then says so); their
#   figures are not for the README.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
(($# >= 1 && $# <= 2)) || { sed -n '4,17p' "$0" >&2; exit 2; }
lib=$(<"$here/report-lib.awk")

# The kernel a CSV is from, by its name: results[-smoke]-stock61.csv
kernel_of() {
	local b=${1##*/}
	case "$b" in
	*stock612*) echo "6.12" ;;
	*stock61*) echo "6.1" ;;
	*) b=${b%.csv}; echo "${b#results-}" ;;
	esac
}

rows=()
srcs=()
smoke=0
fileno=0
for arg; do
	csv=$arg
	[[ -f "$csv" ]] || csv=$here/../build/bench/results-$arg.csv
	[[ -s "$csv" ]] || { echo "${0##*/}: no $csv" >&2; exit 1; }
	[[ "${csv##*/}" == *smoke* ]] && smoke=1
	fileno=$((fileno + 1))
	srcs+=("${csv##*/}")
	mapfile -t -O "${#rows[@]}" rows < <(awk -F, -v kern="$(kernel_of "$csv")" -v fileno="$fileno" "$lib"'
# Ratios as advantages: peer / twheel.  Target thresholds are on the
# advantage too (">= X"): twheel <= 0.3x hrtimer is an advantage >= 3.33.
function e10(n) { return pow10(n) }
# the threshold of issue 14 for batched arm+cancel against timerfd at n
function thr(t, n) { return t == "tfd" ? (n >= 100000 ? 10 : 5) : t + 0 }
# One row: the ratio (s, peer, n2, o2) / (s, tw, n, o) at every N of
# suite s; t: target threshold on the advantage ("" none, "tfd" issue
# 14 rule for timerfd).
function row(idx, label, s, tw, peer, o, t,   m, i, n, N, cells, mlo, mhi, rlo, rhi, behind, x, w, c) {
	m = sorted(s, N)
	cells = ""; behind = ""; c = 0
	for (i = 1; i <= m; i++) {
		n = N[i]
		if (!ratio(s, peer, tw, n, o)) continue
		if (s == "mem" && lo[s "," tw "," n "," o] <= 0) continue
		c++
		cells = cells (cells == "" ? "" : "; ") e10(n) ": " rfmt(R["med"]) " (" rfmt(R["lo"]) "–" rfmt(R["hi"]) ")"
		if (c == 1 || R["med"] < mlo) mlo = R["med"]
		if (c == 1 || R["med"] > mhi) mhi = R["med"]
		if (c == 1 || R["lo"] < rlo) rlo = R["lo"]
		if (c == 1 || R["hi"] > rhi) rhi = R["hi"]
		w = ""
		if (R["med"] < 1) w = "behind"
		if (t != "") {
			x = thr(t, n)
			if (verdict(x, 0) !~ /^MET/) w = (w == "" ? "" : w ", ") "≥" rfmt(x) "x " verdict(x, 0)
		}
		if (w != "") behind = behind (behind == "" ? "" : "; ") e10(n) ": " w
	}
	if (!c) return
	if (t == "tfd") label = label " (target ≥5x below 10^5, ≥10x from 10^5)"
	else if (t != "") label = label " (target ≥" rfmt(t + 0) "x)"
	printf "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", idx, fileno, label, kern,
		rfmt(mlo) "–" rfmt(mhi) "x (all reps " rfmt(rlo) "–" rfmt(rhi) ")",
		cells, behind == "" ? "none" : behind
}
# growth of twheel start+cancel from the smallest to the largest N
function growth(idx,   m, N, a, b, k, txt, w, im, j) {
	m = sorted("ops", N)
	if (m < 2 || !ratio2("ops", "twheel", N[m], "start_cancel", "twheel", N[1], "start_cancel")) return
	a = e10(N[1]); b = e10(N[m])
	txt = "twheel " rtxt()
	w = verdict(1.5, 1) ~ /^MET/ ? "none" : "≤1.5x " verdict(1.5, 1)
	split("timer_list hrtimer", im, " ")
	for (j = 1; j <= 2; j++)
		if (ratio2("ops", im[j], N[m], "start_cancel", im[j], N[1], "start_cancel"))
			txt = txt "; " im[j] " " rtxt()
	printf "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", idx, fileno,
		"start + cancel cost growth " a " → " b " (twheel target ≤1.5x; not an advantage)", kern,
		"—", txt, w
}
function wakeups(idx,   k) {
	k = "wakeups,twheel,0,wakeups_per_s"
	if (!(k in v)) return
	R["med"] = v[k]; R["lo"] = lo[k]; R["hi"] = hi[k]; R["reps"] = nr[k]
	printf "%d\t%d\t%s\t%s\t%s\t%s\t%s\n", idx, fileno,
		"wakeups/s of an empty wheel (target 0; not a ratio)", kern, "—",
		num(v[k]) "/s (" num(lo[k]) "–" num(hi[k]) ")",
		verdict(0, 1) ~ /^MET/ ? "none" : verdict(0, 1)
}
END {
	row(1, "in-kernel start + cancel vs `timer_list`", "ops", "twheel", "timer_list", "start_cancel", "1")
	row(2, "same precision: twheel with timer_list'"'"'s slack vs `timer_list`", "ops", "twheel_slack", "timer_list", "start_cancel", "1")
	row(3, "same precision: 100-250 ms timers vs `timer_list`", "ops_short", "twheel", "timer_list", "start_cancel", "1")
	row(4, "in-kernel start + cancel vs hrtimer", "ops", "twheel", "hrtimer", "start_cancel", "3.333")
	row(5, "in-kernel start now, cancel later (cold) vs `timer_list`", "ops", "twheel", "timer_list", "cancel_random", "")
	row(6, "in-kernel modify vs `timer_list`", "ops", "twheel", "timer_list", "modify", "")
	growth(7)
	row(8, "CPU time per expiry, all due at once, vs `timer_list`", "fire", "twheel", "timer_list", "fire_cpu", "1")
	row(9, "CPU time per expiry, deadlines over 10^4 ticks, vs `timer_list`", "spread", "twheel", "timer_list", "cpu_ns_per_fire_s10000", "")
	row(10, "CPU time per expiry, deadlines over 10^6 ticks, vs `timer_list`", "spread", "twheel", "timer_list", "cpu_ns_per_fire_s1000000", "")
	row(11, "same precision: CPU time per expiry over 10^4 ticks, twheel with timer_list'"'"'s slack vs `timer_list`", "spread", "twheel_slack", "timer_list", "cpu_ns_per_fire_s10000", "")
	row(12, "same precision: CPU time per expiry over 10^6 ticks, twheel with timer_list'"'"'s slack vs `timer_list`", "spread", "twheel_slack", "timer_list", "cpu_ns_per_fire_s1000000", "")
	row(13, "CPU time per event, Ratas workload (N = work units), vs `timer_list`", "ratas", "twheel", "timer_list", "cpu_ns_per_event", "")
	row(14, "user space batched arm + cancel (batch 4096) vs timerfd", "user", "twheel_b4096", "timerfd", "arm_cancel", "tfd")
	row(15, "user space batched arm + cancel vs POSIX timers", "user", "twheel_b4096", "posix", "arm_cancel", "")
	row(16, "user space batched arm + cancel vs io_uring", "user", "twheel_b4096", "io_uring", "arm_cancel", "10")
	row(17, "user space single-call arm + cancel (no batch) vs timerfd", "user", "twheel", "timerfd", "arm_cancel", "")
	row(18, "user space start now, cancel later (batch 4096) vs timerfd", "user", "twheel_b4096", "timerfd", "churn", "")
	row(19, "event delivery, one-shot, all CPUs per expiry, vs timerfd (N = rate/s)", "deliver", "twheel", "timerfd", "oneshot_busy", "5")
	row(20, "event delivery, periodic, all CPUs per expiry, vs timerfd (N = rate/s)", "deliver", "twheel", "timerfd", "periodic_busy", "5")
	row(21, "kernel memory per armed timer vs timerfd", "mem", "twheel_b4096", "timerfd", "bytes_per_timer", "8")
	wakeups(22)
}' "$csv")
done

echo "| comparison | kernel | advantage over N: medians (all reps) | per N: median (min–max) | where twheel is behind or misses |"
echo "| --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}" | sort -t "$(printf '\t')" -s -k1,1n -k2,2n |
	awk -F'\t' '{ printf "| %s | %s | %s | %s | %s |\n", $3, $4, $5, $6, $7 }'
echo
run="one full run per kernel"
((smoke)) && run="one smoke run per kernel (tiny N, one repetition: not figures to publish)"
echo "Ratios under qemu TCG (no KVM), 2 vCPUs, from $run (${srcs[*]}): only ratios between implementations of the same run carry over, not absolute times.  Advantage = peer cost / twheel cost, above 1 twheel is cheaper; each cell is the ratio of the medians over the repetitions, and in brackets the range any pairing of one repetition of each side gives (bench/report.sh).  \"behind\": the median ratio is below 1; \"MISSED\" / \"inconclusive\": the target's verdict at that N (inconclusive = the range straddles the threshold; * = fewer than 5 repetitions)."
