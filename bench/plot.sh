#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Draw the benchmark figures of Documentation/benchmarks.rst from a
# results CSV (bench/run.sh).  Needs gnuplot (Debian gnuplot-nox).
#
# Usage: bench/plot.sh [results.csv | KERNEL] [outdir]
#   defaults: build/bench/results-stock61.csv (else results.csv),
#   Documentation/.  Reads the median,min,max,reps CSV and the older
#   five-column one.
# Writes:
#   bench-kernel.png     in-kernel ns per op vs N: start+cancel, modify,
#                        fire, per-tick bookkeeping
#   bench-setcancel.png  Costello & Varghese's figure: 10,000 set/cancel
#                        pairs vs outstanding timers, their range and to 10^6
#   bench-user.png       userspace arm+cancel ns per timer vs N, and
#                        kernel memory per timer
#   bench-expiry.png     CPU time of the expiry path per timer (fire_cpu)
#                        and of steady-state spread expiry, with min-max bars
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
csv=${1:-$here/../build/bench/results-stock61.csv}
[[ -z "${1:-}" && ! -s "$csv" ]] && csv=$here/../build/bench/results.csv
[[ -n "${1:-}" && ! -f "$csv" ]] && csv=$here/../build/bench/results-$1.csv
outdir=${2:-$here/../Documentation}
[[ -s "$csv" ]] || { echo "${0##*/}: no $csv" >&2; exit 1; }
command -v gnuplot >/dev/null || { echo "${0##*/}: gnuplot missing: apt-get install gnuplot-nox" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# series SUITE IMPL OP -> "n median min max" lines, sorted by n
series() {
	awk -F, -v s="$1" -v i="$2" -v o="$3" 'NR > 1 && $1 == s && $2 == i && $4 == o {
		print $3, $5, (NF >= 8 ? $6 : $5), (NF >= 8 ? $7 : $5) }' "$csv" |
		sort -n >"$tmp/$1-$2-$3.dat"
	echo "$tmp/$1-$2-$3.dat"
}

for i in twheel timer_list hrtimer sorted; do
	for o in start_cancel modify; do series ops $i $o >/dev/null; done
	series setcancel $i set_cancel >/dev/null
done
for i in twheel timer_list hrtimer; do
	series fire $i fire >/dev/null
	series fire $i fire_busy >/dev/null
done
for o in wakeups_per_s wakeups_per_s_cold; do series tick twheel $o >/dev/null; done
for i in twheel timer_list hrtimer; do series fire $i fire_cpu >/dev/null; done
for i in twheel twheel_scheme6 twheel_lawn timer_list hrtimer; do
	for sp in 10000 1000000; do series spread $i cpu_ns_per_s_s$sp >/dev/null; done
done
for i in twheel twheel_b64 twheel_b4096 timerfd posix io_uring; do
	series user $i arm_cancel >/dev/null
	series mem $i bytes_per_timer >/dev/null
done
# The private wheels' geometry, as bench/report.sh titles its tables
# (none from a CSV of before the kernel benchmark wrote it)
geometry=$(awk -F, "$(<"$here/report-lib.awk")"'
	END { t = geometry(); if (t != "") printf " (%s)", t }' "$csv")
# gnuplot warns about empty files; give them one NaN point instead
for f in "$tmp"/*.dat; do [[ -s "$f" ]] || echo "1 NaN NaN NaN" >"$f"; done

d=$tmp
gnuplot <<EOF
set terminal pngcairo size 1200,900 font "sans,10"
set datafile missing "NaN"
set style data linespoints
set logscale x
set format x "10^{%L}"
set grid
set key top left
set xlabel "timers outstanding (N)"

set output "$outdir/bench-kernel.png"
set multiplot layout 2,2 title "twheel vs timer\\\\_list vs hrtimer vs sorted list (stock 6.1, qemu TCG, median of repetitions)"
set title "start + cancel pair"
set ylabel "ns per pair"
set logscale y
plot "$d/ops-twheel-start_cancel.dat" t "twheel" lw 2, \
     "$d/ops-timer_list-start_cancel.dat" t "timer\\\\_list", \
     "$d/ops-hrtimer-start_cancel.dat" t "hrtimer", \
     "$d/ops-sorted-start_cancel.dat" t "sorted list (Scheme 2)"
set title "modify (re-arm a pending timer)"
set ylabel "ns per modify"
plot "$d/ops-twheel-modify.dat" t "twheel" lw 2, \
     "$d/ops-timer_list-modify.dat" t "timer\\\\_list", \
     "$d/ops-hrtimer-modify.dat" t "hrtimer", \
     "$d/ops-sorted-modify.dat" t "sorted list (Scheme 2)"
unset logscale y
set yrange [0:*]
set title "cost per expiry, N timers due at once"
set ylabel "ns per expired timer"
plot "$d/fire-twheel-fire.dat" t "twheel" lw 2, \
     "$d/fire-timer_list-fire.dat" t "timer\\\\_list", \
     "$d/fire-hrtimer-fire.dat" t "hrtimer", \
     "$d/fire-twheel-fire_busy.dat" t "twheel (busy period)" dt 2, \
     "$d/fire-timer_list-fire_busy.dat" t "timer\\\\_list (busy period)" dt 2, \
     "$d/fire-hrtimer-fire_busy.dat" t "hrtimer (busy period)" dt 2
# Scheme 6's weak spot: a handler run per occupied tick would show here
# (938/s at 10^6 before the per-slot key bounds); an idle wheel is 0.
set title "twheel wakeups, N timers an hour out$geometry"
set ylabel "hrtimer wakeups per second"
set yrange [0:*]
plot "$d/tick-twheel-wakeups_per_s.dat" t "after a timer fired" lw 2, \
     "$d/tick-twheel-wakeups_per_s_cold.dat" t "only armed" dt 2
unset multiplot

set output "$outdir/bench-setcancel.png"
set terminal pngcairo size 1200,500 font "sans,10"
set multiplot layout 1,2 title "Elapsed time for 10,000 set/cancel pairs vs outstanding timers (after Costello and Varghese; stock 6.1 in qemu TCG)"
unset logscale x
unset logscale y
set format x "%g"
set xrange [0:10000]
set yrange [0:*]
set title "their range, linear"
set xlabel "timers outstanding"
set ylabel "ms per 10,000 pairs"
plot "$d/setcancel-sorted-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "sorted list (Scheme 2, BSD callout)", \
     "$d/setcancel-twheel-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "twheel" lw 2, \
     "$d/setcancel-timer_list-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "timer\\\\_list", \
     "$d/setcancel-hrtimer-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "hrtimer"
set logscale x
set logscale y
set format x "10^{%L}"
set xrange [100:*]
set yrange [*:*]
set title "to 10^6 outstanding, log-log (the sorted list stops at 10^4)"
plot "$d/setcancel-sorted-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "sorted list", \
     "$d/setcancel-twheel-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "twheel" lw 2, \
     "$d/setcancel-timer_list-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "timer\\\\_list", \
     "$d/setcancel-hrtimer-set_cancel.dat" using 1:(\$2 * 10000 / 1e6) t "hrtimer"
unset multiplot
unset xlabel
set autoscale x

set output "$outdir/bench-user.png"
set terminal pngcairo size 1200,500 font "sans,10"
set multiplot layout 1,2 title "userspace: /dev/twheel vs timerfd vs POSIX timers vs io\\\\_uring (stock 6.1, qemu TCG)"
set logscale x
set format x "10^{%L}"
set logscale y
set yrange [*:*]
set title "arm + cancel"
set ylabel "ns per timer"
plot "$d/user-twheel-arm_cancel.dat" t "twheel ioctl", \
     "$d/user-twheel_b64-arm_cancel.dat" t "twheel batch 64", \
     "$d/user-twheel_b4096-arm_cancel.dat" t "twheel batch 4096" lw 2, \
     "$d/user-timerfd-arm_cancel.dat" t "timerfd", \
     "$d/user-posix-arm_cancel.dat" t "POSIX timer", \
     "$d/user-io_uring-arm_cancel.dat" t "io\\\\_uring timeout"
unset logscale y
set yrange [0:*]
set title "kernel memory per armed timer (Slab + vmalloc growth)"
set ylabel "bytes per timer"
plot "$d/mem-twheel_b4096-bytes_per_timer.dat" t "twheel (batch 4096)" lw 2, \
     "$d/mem-timerfd-bytes_per_timer.dat" t "timerfd", \
     "$d/mem-posix-bytes_per_timer.dat" t "POSIX timer", \
     "$d/mem-io_uring-bytes_per_timer.dat" t "io\\\\_uring timeout"
unset multiplot

set output "$outdir/bench-expiry.png"
set terminal pngcairo size 1200,500 font "sans,10"
set multiplot layout 1,2 title "expiry as CPU time of the benchmark CPU (median, bars: min-max over repetitions)"
set logscale x
set format x "10^{%L}"
set logscale y
set yrange [*:*]
set title "N timers due at one instant (fire\\\\_cpu)"
set ylabel "CPU ns per expired timer"
plot "$d/fire-twheel-fire_cpu.dat" t "twheel" w yerrorlines lw 2, \
     "$d/fire-timer_list-fire_cpu.dat" t "timer\\\\_list" w yerrorlines, \
     "$d/fire-hrtimer-fire_cpu.dat" t "hrtimer" w yerrorlines
set title "deadlines uniform over 10^6 ticks (spread)"
set ylabel "CPU ns per second"
plot "$d/spread-twheel-cpu_ns_per_s_s1000000.dat" t "twheel (hier)" w yerrorlines lw 2, \
     "$d/spread-twheel_scheme6-cpu_ns_per_s_s1000000.dat" t "twheel scheme6" w yerrorlines, \
     "$d/spread-twheel_lawn-cpu_ns_per_s_s1000000.dat" t "twheel lawn" w yerrorlines, \
     "$d/spread-timer_list-cpu_ns_per_s_s1000000.dat" t "timer\\\\_list" w yerrorlines, \
     "$d/spread-hrtimer-cpu_ns_per_s_s1000000.dat" t "hrtimer" w yerrorlines
unset multiplot
EOF
echo "plots: $outdir/bench-kernel.png $outdir/bench-setcancel.png $outdir/bench-user.png $outdir/bench-expiry.png"
