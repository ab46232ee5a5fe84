#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw Documentation/bench-engines.png from the CSV of the native engine
# benchmark (bench_engines --csv), in the conventions of bench/plot.sh.
# Needs gnuplot (Debian gnuplot-nox).
#
# Usage: bench/engines/plot.sh [engines.csv] [outdir]
#   defaults: build/engines/engines.csv, Documentation/
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
csv=${1:-$here/../../build/engines/engines.csv}
outdir=${2:-$here/../../Documentation}
[[ -s "$csv" ]] || { echo "${0##*/}: no $csv" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "${0##*/}: gnuplot missing: apt-get install gnuplot-nox" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# series CASE RANGE IMPL -> "n ns" lines, sorted by n
for c in startcancel expire; do
	for r in 10000 1000000; do
		for i in hier scheme6 lawn heap4; do
			awk -F, -v c="$c" -v r="$r" -v i="$i" \
				'NR > 1 && $1 == c && $4 == r && $2 == i { print $3, $5 }' "$csv" |
				sort -n >"$tmp/$c-$r-$i.dat"
			[[ -s "$tmp/$c-$r-$i.dat" ]] || echo "1000 NaN" >"$tmp/$c-$r-$i.dat"
		done
	done
done

d=$tmp
gnuplot <<GP
set terminal pngcairo size 1200,900 font "sans,10"
set datafile missing "NaN"
set style data linespoints
set logscale xy
set format x "10^{%L}"
set grid
set key top left
set xlabel "timers outstanding (N)"
set output "$outdir/bench-engines.png"
set multiplot layout 2,2 title "Native engine benchmark: median ns, lower is better"
do for [r in "10000 1000000"] {
	set title sprintf("start + cancel pair, delays uniform in [1, %s] ticks", r)
	set ylabel "ns per pair"
	plot for [i in "hier scheme6 lawn heap4"] sprintf("$d/startcancel-%s-%s.dat", r, i) using 1:2 title i
}
do for [r in "10000 1000000"] {
	set title sprintf("expiry, delays uniform in [1, %s] ticks, tickless drain", r)
	set ylabel "ns per expiry"
	plot for [i in "hier scheme6 lawn heap4"] sprintf("$d/expire-%s-%s.dat", r, i) using 1:2 title i
}
unset multiplot
GP
echo "wrote $outdir/bench-engines.png"
