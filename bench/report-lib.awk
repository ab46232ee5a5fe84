# SPDX-License-Identifier: GPL-2.0
#
# The part of bench/report.sh, bench/readme-table.sh, bench/summary.sh,
# bench/compare.sh and bench/plot.sh that reads a benchmark CSV and
# decides: one definition of a cell, a ratio, its range and a verdict, and
# of the private wheels' geometry, for all of them.  Not a program of its
# own: each script puts its END block after this text
# (awk -F, "$(cat report-lib.awk)$prog").
#
# Input: suite,impl,n,op,ns_per_op,min,max,reps (the median over the
# repetitions, their min and max, their number); five-column rows
# (suite,impl,n,op,value) are one repetition.  The header line and
# comment lines (bench/results/ files open with "# commit=...") are skipped.
#
# A ratio a/b is median_a/median_b with the range [min_a/max_b,
# max_a/min_b]: the ratios any pairing of one repetition of each side
# could give.  Verdict against a threshold X, for "<= X" (and mirrored
# for ">= X"):
#   MET           the whole range is on the target's side (max_a/min_b <= X)
#   MISSED        the whole range is on the other side (min_a/max_b > X)
#   inconclusive  the range contains X: the two sides' min-max ranges
#                 overlap it, so run-to-run noise could turn it either way
# followed by * when either side has fewer than 5 repetitions.  The same
# row in two runs (change(), X = 1): "lower" / "higher" when their min-max
# ranges do not overlap, else "inconclusive".
/^#/ || $1 == "suite" { next }
{
	k = $1 "," $2 "," $3 "," $4
	v[k] = $5 + 0
	lo[k] = (NF >= 8 ? $6 : $5) + 0
	hi[k] = (NF >= 8 ? $7 : $5) + 0
	nr[k] = (NF >= 8 ? $8 : 1) + 0
	nset[$1, $3 + 0] = 1
	suite[$1] = 1
}
function has(s, i, n, o) { return ((s "," i "," n "," o) in v) }
function g(s, i, n, o) { return v[s "," i "," n "," o] }
function num(x) { return sprintf(x >= 100 || x <= -100 ? "%.0f" : "%.1f", x) }
# median, with the half range in % when there was a range
function cell(s, i, n, o,   k, m, h) {
	k = s "," i "," n "," o
	if (!(k in v)) return "-"
	m = v[k]
	if (hi[k] == lo[k] || m == 0) return num(m)
	h = (hi[k] - lo[k]) / 2 / m * 100
	return num(m) sprintf("±%.0f%%", h)
}
# ratio of (s,a,n,o) to (s,b,n2,o2): R[med], R[lo], R[hi], R[reps]; 0 if missing
function ratio2(s, a, n, o, b, n2, o2,   ka, kb) {
	ka = s "," a "," n "," o; kb = s "," b "," n2 "," o2
	if (!(ka in v) || !(kb in v) || v[kb] <= 0 || lo[kb] <= 0) return 0
	R["med"] = v[ka] / v[kb]
	R["lo"] = lo[ka] / hi[kb]
	R["hi"] = hi[ka] / lo[kb]
	R["reps"] = nr[ka] < nr[kb] ? nr[ka] : nr[kb]
	return 1
}
function ratio(s, a, b, n, o) { return ratio2(s, a, n, o, b, n, o) }
# a ratio with three significant digits or more (0.118, 1.85, 16.2, 7210)
function rfmt(x) { return sprintf(x >= 100 ? "%.0f" : x >= 10 ? "%.1f" : x >= 1 ? "%.2f" : "%.3f", x) }
function rtxt() { return rfmt(R["med"]) "x (" rfmt(R["lo"]) "-" rfmt(R["hi"]) ")" }
function rcell(s, a, b, n, o) { return ratio(s, a, b, n, o) ? sprintf("%.2f", R["med"]) : "-" }
# verdict of R against "<= x" (le = 1) or ">= x" (le = 0); see the top
function verdict(x, le,   w) {
	if (le) w = R["hi"] <= x ? "MET" : R["lo"] > x ? "MISSED" : "inconclusive"
	else w = R["lo"] >= x ? "MET" : R["hi"] < x ? "MISSED" : "inconclusive"
	return w (R["reps"] < 5 ? "*" : "")
}
function target(desc, x, le) {
	printf "  %-18s %-64s %s\n", verdict(x, le), desc, rtxt()
	tcount[verdict(x, le)]++
}
function sorted(s, out,   k, m, i, j, t) {
	m = 0
	for (k in nset) {
		split(k, q, SUBSEP)
		if (q[1] == s) out[++m] = q[2] + 0
	}
	for (i = 2; i <= m; i++) for (j = i; j > 1 && out[j - 1] > out[j]; j--) {
		t = out[j]; out[j] = out[j - 1]; out[j - 1] = t
	}
	return m
}
# ratio a/b of (s,a,n,o) to (s,b,n,o) with a floor: 0 (no verdict) when
# either side's minimum is not above zero, e.g. a memory delta under the
# counters' resolution, which would make a ratio of 0 look like a win
function ratio_pos(s, a, b, n, o) {
	return ratio(s, a, b, n, o) && lo[s "," a "," n "," o] > 0
}
# The tick of the private wheels, as "1 ms", from the run's "wheel" rows
# (bench/kernel emits them); "" from a CSV of before them.
function tick_txt(   t) {
	if (!has("wheel", "twheel", 0, "tick_ns")) return ""
	t = g("wheel", "twheel", 0, "tick_ns")
	return t % 1000000 == 0 ? t / 1000000 " ms" : t % 1000 == 0 ? t / 1000 " us" : t " ns"
}
# "1 ms tick, 8192 slots", or "" if the CSV does not say
function geometry() {
	if (!has("wheel", "twheel", 0, "slots")) return ""
	return tick_txt() " tick, " g("wheel", "twheel", 0, "slots") " slots"
}
# 10^k for round powers of ten, else the number
function pow10(n,   e, x) {
	e = 0
	for (x = 1; x < n; e++) x *= 10
	return x == n && e > 1 ? "10^" e : n ""
}
# change of R against 1, for the same row in two runs (bench/compare.sh):
# "lower" or "higher" when the whole range is below or above 1, that is
# when the two runs' min-max ranges do not overlap, else "inconclusive";
# followed by * when either side has fewer than 5 repetitions
function change(   w) {
	w = R["hi"] < 1 ? "lower" : R["lo"] > 1 ? "higher" : "inconclusive"
	return w (R["reps"] < 5 ? "*" : "")
}
