#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The table of Documentation/benchmarks.rst (Results, "Native engines")
# from the CSV of bench_engines --csv: per case the heap's median, every
# engine's ratio to it (median of the per-repetition ratios) and the
# range of the default engine's per-repetition ratios.
#
# Usage: bench/engines/table.sh [engines.csv]
#   default: build/engines/engines.csv
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
csv=${1:-$here/../../build/engines/engines.csv}
[[ -s "$csv" ]] || { echo "${0##*/}: no $csv" >&2; exit 1; }

awk -F, '
function pow10(n,   e) {
	for (e = 0; n >= 10 && n % 10 == 0; e++)
		n /= 10;
	if (n == 1)
		return "10^" e;
	return sprintf("%d", n * 10^e);
}
/^#/ || $1 == "case" { next }
{
	key = $1 SUBSEP $3 SUBSEP $4;
	if (!(key in seen)) {
		seen[key] = 1;
		order[++rows] = key;
	}
	ns[key, $2] = $5;
	ratio[key, $2] = $7;
	lo[key, $2] = $8;
	hi[key, $2] = $9;
}
END {
	name["ratas"] = "(a) ratas";
	name["startcancel"] = "(b) start+cancel";
	name["expire"] = "(c) expire";
	name["far"] = "(d) far + near";
	name["dense"] = "(e) dense";
	name["lawn8"] = "(f) 8 durations";
	unit["ratas"] = "op"; unit["startcancel"] = "pair";
	unit["expire"] = "expiry"; unit["far"] = "tick";
	unit["dense"] = "expiry"; unit["lawn8"] = "op";
	sep = "================  ============  =========  ================  =====  =======  ======  ================";
	print sep;
	printf "%-16s  %-12s  %-9s  %-16s  %-5s  %-7s  %-6s  %s\n", "case", "N", "R",
		"heap4", "hier", "scheme6", "lawn", "hier/heap range";
	print sep;
	for (i = 1; i <= rows; i++) {
		split(order[i], k, SUBSEP);
		n = pow10(k[2]);
		if (k[1] == "ratas")
			n = n " units";
		r = "--";
		if (k[3] != 0)
			r = pow10(k[3]);
		line = sprintf("%-16s  %-12s  %-9s  %-16s", name[k[1]], n, r,
			sprintf("%.1f ns/%s", ns[order[i], "heap4"], unit[k[1]]));
		split("hier scheme6 lawn", impls, " ");
		for (j = 1; j <= 3; j++) {
			w = 6;
			if (j == 1)
				w = 5;
			if (j == 2)
				w = 7;
			v = "--";
			if ((order[i], impls[j]) in ratio)
				v = sprintf("%.2fx", ratio[order[i], impls[j]]);
			line = line sprintf("  %-" w "s", v);
		}
		line = line sprintf("  %.2f-%.2fx", lo[order[i], "hier"], hi[order[i], "hier"]);
		print line;
	}
	print sep;
}' "$csv"
