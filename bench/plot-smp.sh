#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw Documentation/bench-smp.png from the CSVs of bench/smp.sh:
# start+cancel throughput against thread count, in the kernel (twheel with
# per-CPU bases, with a single base, timer_list) and through /dev/twheel
# (a file per thread, one shared file), at 10^6 outstanding timers, for
# the 2- and 4-vCPU runs.  Needs gnuplot (Debian gnuplot-nox).
#
# Usage: bench/plot-smp.sh [CSV_2CPU [CSV_4CPU [PNG]]]
#   defaults: bench/results/smp-2cpu.csv, smp-4cpu.csv, Documentation/bench-smp.png
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
c2=${1:-$root/bench/results/smp-2cpu.csv}
c4=${2:-$root/bench/results/smp-4cpu.csv}
png=${3:-$root/Documentation/bench-smp.png}
command -v gnuplot >/dev/null || { echo "${0##*/}: gnuplot missing: apt-get install gnuplot-nox" >&2; exit 1; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT

# series CSV SUITE IMPL N OUT: "threads value/1e6" rows
series() {
	awk -F, -v s="$2" -v i="$3" -v n="$4" '$1 == s && $2 == i && $3 == n &&
		$4 ~ /^pairs_per_s_t/ { t = $4; sub(/.*_t/, "", t); print t, $5 / 1e6 }' "$1" |
		sort -n >"$5"
	[[ -s "$5" ]] || echo "1 NaN" >"$5"
}
for c in 2 4; do
	f=$c2
	[[ $c == 4 ]] && f=$c4
	for i in twheel twheel_single timer_list; do
		series "$f" smp "$i" 1000000 "$d/k$c-$i.dat"
	done
	for i in twheel_files twheel_shared; do
		series "$f" devsmp "$i" 1000000 "$d/u$c-$i.dat"
	done
done

gnuplot <<EOF
set terminal pngcairo size 1100,420 font ",10"
set output "$png"
set multiplot layout 1,2
set key bottom left
set grid
set xtics 1
set xrange [0.8:4.2]
set yrange [0:*]
set xlabel "threads, pinned to different CPUs"
set ylabel "start+cancel pairs per second (millions)"
set title "In-kernel start+cancel, 10^6 outstanding (qemu TCG, 2-core shared host)"
plot "$d/k4-twheel.dat" w lp lw 2 pt 7 lc 1 t "twheel per-CPU (4 vCPUs)", \
     "$d/k2-twheel.dat" w lp dt 2 pt 6 lc 1 t "twheel per-CPU (2 vCPUs)", \
     "$d/k4-twheel_single.dat" w lp lw 2 pt 7 lc 2 t "twheel single base (4 vCPUs)", \
     "$d/k2-twheel_single.dat" w lp dt 2 pt 6 lc 2 t "twheel single base (2 vCPUs)", \
     "$d/k4-timer_list.dat" w lp lw 2 pt 7 lc 3 t "timer_list (4 vCPUs)", \
     "$d/k2-timer_list.dat" w lp dt 2 pt 6 lc 3 t "timer_list (2 vCPUs)"
set ylabel "arm+cancel pairs per second (millions)"
set title "/dev/twheel batched arm+cancel (256 per batch), 10^6 outstanding"
plot "$d/u4-twheel_files.dat" w lp lw 2 pt 7 lc 1 t "a file per thread (4 vCPUs)", \
     "$d/u2-twheel_files.dat" w lp dt 2 pt 6 lc 1 t "a file per thread (2 vCPUs)", \
     "$d/u4-twheel_shared.dat" w lp lw 2 pt 7 lc 4 t "one shared file (4 vCPUs)", \
     "$d/u2-twheel_shared.dat" w lp dt 2 pt 6 lc 4 t "one shared file (2 vCPUs)"
unset multiplot
EOF
echo "${0##*/}: wrote $png"
