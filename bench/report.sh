#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Print the twheel/peer ratio tables and the target check of a benchmark
# CSV (suite,impl,n,op,ns_per_op), as written by bench/run.sh.
#
# Usage: bench/report.sh [results.csv]     (default build/bench/results.csv)
set -euo pipefail
csv=${1:-$(dirname "$0")/../build/bench/results.csv}
[[ -s "$csv" ]] || { echo "${0##*/}: no $csv" >&2; exit 1; }

awk -F, '
NR == 1 { next }
{
	v[$1 "," $2 "," $3 "," $4] = $5
	if ($1 == "ops") ns[$3] = 1
	if ($1 == "user") uns[$3] = 1
}
function has(s, i, n, o) { return ((s "," i "," n "," o) in v) }
function g(s, i, n, o) { return v[s "," i "," n "," o] + 0 }
function num(x) { return x == "" ? "-" : sprintf(x >= 100 ? "%.0f" : "%.1f", x) }
function cell(s, i, n, o) { return has(s, i, n, o) ? num(g(s, i, n, o)) : "-" }
function ratio(s, a, b, n, o) {
	if (!has(s, a, n, o) || !has(s, b, n, o) || g(s, b, n, o) == 0) return "-"
	return sprintf("%.2f", g(s, a, n, o) / g(s, b, n, o))
}
function sorted(arr, out,   k, m, i, j, t) {
	m = 0
	for (k in arr) out[++m] = k + 0
	for (i = 2; i <= m; i++) for (j = i; j > 1 && out[j - 1] > out[j]; j--) {
		t = out[j]; out[j] = out[j - 1]; out[j - 1] = t
	}
	return m
}
# the largest N with a value for both impls
function bigpair(s, a, b, o,   i) {
	for (i = u; i >= 1; i--)
		if (has(s, a, U[i], o) && has(s, b, U[i], o)) return U[i]
	return U[u]
}
function target(desc, ok, meas) {
	printf "  %-8s %-58s %s\n", (ok == "" ? "n/a" : ok ? "MET" : "MISSED"), desc, meas
}
END {
	m = sorted(ns, N)
	if (has("prims", "kernel", 0, "div_u64"))
		printf "== Building blocks in this VM, ns: div_u64 %s, ktime_get %s, spin_lock_irqsave+unlock %s, hlist add+del %s ==\n\n",
			cell("prims", "kernel", 0, "div_u64"), cell("prims", "kernel", 0, "ktime_get"),
			cell("prims", "kernel", 0, "lock_irqsave_pair"), cell("prims", "kernel", 0, "hlist_add_del")
	print "== In-kernel: ns per operation (median), ratio twheel/peer =="
	printf "%-9s %-13s %9s %10s %9s %9s %7s %7s\n", "N", "op", "twheel", "timer_list", "hrtimer", "sorted", "tw/tl", "tw/hr"
	split("start cancel start_cancel modify", ops, " ")
	for (i = 1; i <= m; i++) for (k = 1; k <= 4; k++) {
		n = N[i]; o = ops[k]
		printf "%-9s %-13s %9s %10s %9s %9s %7s %7s\n", n, o, cell("ops", "twheel", n, o),
			cell("ops", "timer_list", n, o), cell("ops", "hrtimer", n, o), cell("ops", "sorted", n, o),
			ratio("ops", "twheel", "timer_list", n, o), ratio("ops", "twheel", "hrtimer", n, o)
	}
	print ""
	print "== In-kernel: cost per expiry, ns (fire: due instant to last callback / N; fire_busy: first to last callback / (N-1)) =="
	printf "%-9s %-10s %9s %10s %9s %7s %7s\n", "N", "op", "twheel", "timer_list", "hrtimer", "tw/tl", "tw/hr"
	for (i = 1; i <= m; i++) for (k = 1; k <= 2; k++) {
		n = N[i]; o = k == 1 ? "fire" : "fire_busy"
		printf "%-9s %-10s %9s %10s %9s %7s %7s\n", n, o, cell("fire", "twheel", n, o),
			cell("fire", "timer_list", n, o), cell("fire", "hrtimer", n, o),
			ratio("fire", "twheel", "timer_list", n, o), ratio("fire", "twheel", "hrtimer", n, o)
	}
	print ""
	print "== Per-tick bookkeeping, N timers an hour out (private wheel) =="
	printf "%-9s %10s %12s %9s %12s %14s\n", "N", "wakeups/s", "cold wkp/s", "max_slot", "ns/tick", "handler ns/s"
	for (i = 1; i <= m; i++) {
		n = N[i]
		printf "%-9s %10s %12s %9s %12s %14s\n", n, cell("tick", "twheel", n, "wakeups_per_s"),
			cell("tick", "twheel", n, "wakeups_per_s_cold"), cell("tick", "twheel", n, "max_slot"),
			cell("tick", "twheel", n, "ns_per_tick"), cell("tick", "twheel", n, "cpu_ns_per_s")
	}
	print ""
	print "== Set/cancel pairs (Costello & Varghese), ns per pair =="
	for (k in v) { split(k, p, ","); if (p[1] == "setcancel") scn[p[3]] = 1 }
	q = sorted(scn, S)
	printf "%-9s %9s %10s %9s %9s\n", "N", "twheel", "timer_list", "hrtimer", "sorted"
	for (i = 1; i <= q; i++) {
		n = S[i]
		printf "%-9s %9s %10s %9s %9s\n", n, cell("setcancel", "twheel", n, "set_cancel"),
			cell("setcancel", "timer_list", n, "set_cancel"), cell("setcancel", "hrtimer", n, "set_cancel"),
			cell("setcancel", "sorted", n, "set_cancel")
	}
	print ""
	u = sorted(uns, U)
	print "== Userspace: arm + cancel, ns per timer; speedup = peer / twheel batch 4096 =="
	printf "%-9s %8s %8s %8s %9s %8s %9s %10s %11s\n", "N", "twheel", "batch64", "batch4k", "timerfd", "posix", "io_uring", "timerfd/4k", "io_uring/4k"
	for (i = 1; i <= u; i++) {
		n = U[i]
		printf "%-9s %8s %8s %8s %9s %8s %9s %10s %11s\n", n, cell("user", "twheel", n, "arm_cancel"),
			cell("user", "twheel_b64", n, "arm_cancel"), cell("user", "twheel_b4096", n, "arm_cancel"),
			cell("user", "timerfd", n, "arm_cancel"), cell("user", "posix", n, "arm_cancel"),
			cell("user", "io_uring", n, "arm_cancel"),
			ratio("user", "timerfd", "twheel_b4096", n, "arm_cancel"),
			ratio("user", "io_uring", "twheel_b4096", n, "arm_cancel")
	}
	print ""
	print "== Userspace: re-arm an armed timer, ns per timer (twheel MODIFY; timerfd/POSIX settime) =="
	printf "%-9s %8s %8s %8s %9s %8s %10s\n", "N", "twheel", "batch64", "batch4k", "timerfd", "posix", "timerfd/4k"
	for (i = 1; i <= u; i++) {
		n = U[i]
		printf "%-9s %8s %8s %8s %9s %8s %10s\n", n, cell("user", "twheel", n, "rearm"),
			cell("user", "twheel_b64", n, "rearm"), cell("user", "twheel_b4096", n, "rearm"),
			cell("user", "timerfd", n, "rearm"), cell("user", "posix", n, "rearm"),
			ratio("user", "timerfd", "twheel_b4096", n, "rearm")
	}
	print ""
	print "== Userspace: whole life of a timer (timerfd/POSIX: create+arm+disarm+close; twheel: arm+cancel) =="
	printf "%-9s %8s %9s %8s %10s\n", "N", "batch4k", "timerfd", "posix", "timerfd/4k"
	for (i = 1; i <= u; i++) {
		n = U[i]
		tf = has("user", "timerfd", n, "create") ? g("user", "timerfd", n, "create") + g("user", "timerfd", n, "arm_cancel") + g("user", "timerfd", n, "close") : ""
		px = has("user", "posix", n, "create") ? g("user", "posix", n, "create") + g("user", "posix", n, "arm_cancel") + g("user", "posix", n, "close") : ""
		b4 = has("user", "twheel_b4096", n, "arm_cancel") ? g("user", "twheel_b4096", n, "arm_cancel") : ""
		printf "%-9s %8s %9s %8s %10s\n", n, num(b4), num(tf), num(px), (tf != "" && b4 > 0) ? sprintf("%.2f", tf / b4) : "-"
	}
	print ""
	print "== Kernel memory per armed timer, bytes (Slab + VmallocUsed growth / N) =="
	printf "%-9s %8s %8s %8s %9s %12s\n", "N", "twheel", "timerfd", "posix", "io_uring", "twheel/timerfd"
	for (i = 1; i <= u; i++) {
		n = U[i]
		printf "%-9s %8s %8s %8s %9s %12s\n", n, cell("mem", "twheel", n, "bytes_per_timer"),
			cell("mem", "timerfd", n, "bytes_per_timer"), cell("mem", "posix", n, "bytes_per_timer"),
			cell("mem", "io_uring", n, "bytes_per_timer"), ratio("mem", "twheel", "timerfd", n, "bytes_per_timer")
	}
	print ""
	print "== Wakeups of a private wheel (1 ms tick, 4096 slots) =="
	printf "  empty wheel: %s/s; one timer 10 s out: %s/s cold, %s/s warm\n",
		cell("wakeups", "twheel", 0, "wakeups_per_s"), cell("wakeups", "twheel", 1, "wakeups_per_s"),
		cell("wakeups", "twheel", 1, "wakeups_per_s_warm")
	print ""
	print "== Mixed workload (Ratas-style), ops/s =="
	for (k in v) { split(k, p, ","); if (p[1] == "mixed") mn = p[3] }
	split("twheel twheel_slack hrtimer hrtimer_slack timer_list", mi, " ")
	printf "  %-14s %12s %10s %10s %10s\n", "impl", "ops/s", "ns/op", "fires/s", "wakeups/s"
	for (k = 1; k <= 5; k++)
		printf "  %-14s %12s %10s %10s %10s\n", mi[k], cell("mixed", mi[k], mn, "ops_per_s"),
			cell("mixed", mi[k], mn, "ns_per_op"), cell("mixed", mi[k], mn, "fires_per_s"),
			cell("mixed", mi[k], mn, "wakeups_per_s")
	if (has("mixed", "twheel", mn, "ops_per_s") && has("mixed", "twheel_slack", mn, "ops_per_s"))
		printf "  slack gain: twheel %.2fx", g("mixed", "twheel_slack", mn, "ops_per_s") / g("mixed", "twheel", mn, "ops_per_s")
	if (has("mixed", "hrtimer", mn, "ops_per_s") && has("mixed", "hrtimer_slack", mn, "ops_per_s"))
		printf ", hrtimer %.2fx", g("mixed", "hrtimer_slack", mn, "ops_per_s") / g("mixed", "hrtimer", mn, "ops_per_s")
	print ""
	print ""

	# ---- targets (issue 5) at the largest N measured ----
	big = N[m]; small = N[1]; ub = U[u]
	print "== Targets (at N = " big " in kernel, " ub " in userspace) =="
	r = ratio("ops", "twheel", "timer_list", big, "start_cancel")
	target("start+cancel <= 1.0x timer_list", r == "-" ? "" : r + 0 <= 1.0, r "x")
	r = ratio("ops", "twheel", "hrtimer", big, "start_cancel")
	target("start+cancel <= 0.3x hrtimer", r == "-" ? "" : r + 0 <= 0.3, r "x")
	if (has("ops", "twheel", big, "start_cancel") && has("ops", "twheel", small, "start_cancel")) {
		r = sprintf("%.2f", g("ops", "twheel", big, "start_cancel") / g("ops", "twheel", small, "start_cancel"))
		target("start+cancel growth " small " -> " big " <= 1.5x", r + 0 <= 1.5, r "x")
	}
	r = ratio("fire", "twheel", "timer_list", big, "fire")
	target("fire cost <= timer_list (fire)", r == "-" ? "" : r + 0 <= 1.0, r "x")
	r = ratio("fire", "twheel", "timer_list", big, "fire_busy")
	target("fire cost <= timer_list (fire_busy)", r == "-" ? "" : r + 0 <= 1.0, r "x")
	pn = bigpair("user", "timerfd", "twheel_b4096", "arm_cancel")
	r = ratio("user", "timerfd", "twheel_b4096", pn, "arm_cancel")
	target("batched arm+cancel >= 20x faster than timerfd (N=" pn ")", r == "-" ? "" : r + 0 >= 20, r "x")
	pn = bigpair("user", "io_uring", "twheel_b4096", "arm_cancel")
	r = ratio("user", "io_uring", "twheel_b4096", pn, "arm_cancel")
	target("batched arm+cancel >= 10x faster than io_uring (N=" pn ")", r == "-" ? "" : r + 0 >= 10, r "x")
	r = ratio("mem", "twheel", "timerfd", ub, "bytes_per_timer")
	target("memory per timer <= 1/5 of timerfd", r == "-" ? "" : r + 0 <= 0.2, r "x")
	r = has("wakeups", "twheel", 0, "wakeups_per_s") ? g("wakeups", "twheel", 0, "wakeups_per_s") : "-"
	target("empty wheel 0 wakeups/s", r == "-" ? "" : r + 0 == 0, r "/s")
}' "$csv"
