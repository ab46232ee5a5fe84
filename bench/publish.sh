#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Publish a benchmark run: copy its CSV to bench/results/NAME.csv behind
# the line that says what it measured,
#   # commit=<git rev-parse --short HEAD> kernel=K host=H reps=R date=D
# replacing the run published before (earlier runs stay in git's history:
# git log -p bench/results/NAME.csv; bench/compare.sh compares two).
#
# Usage: bench/publish.sh NAME SRC_CSV
#   NAME  kernel-stock61   SRC build/bench/results-stock61.csv  (bench/run.sh)
#         kernel-stock612  SRC build/bench/results-stock612.csv (--kernel stock612)
#         engines          SRC build/engines/engines.csv (make -C bench/engines bench)
#         smp-2cpu         SRC build/bench/smp-2.csv (bench/smp.sh 2)
#         smp-4cpu         SRC build/bench/smp-4.csv (bench/smp.sh 4)
#         insn-stock61     SRC build/bench/insn.csv (make -C bench insn-targets)
#         insn-time-stock61 SRC build/bench/insn-time.csv (the same run);
#                          insn-stock612, insn-time-stock612 likewise;
#                          insn-before-K, insn-time-before-K: a run of
#                          the module before a change, COMMIT= naming it
#
# reps= is the number of repetitions behind each figure: the most common
# value of the CSV's reps column, or bench_engines' "# bench_engines
# reps=" line, else $REPS (default 5, twheel_smpbench's default).  Not
# published: a run of fewer than 5 (--smoke), an engines run of some
# cases only (--only, --min-n, --max-n) or of another geometry than the
# default (--bits).  commit= is HEAD's unless $COMMIT names the commit
# that was measured; date= is today's (UTC) unless $DATE.
# It then says what to update from the new file in the same commit: the
# README's performance lines (bench/summary.sh; make lint compares them)
# and the figures of Documentation/benchmarks.rst (drawn from
# kernel-stock61.csv, engines.csv and the smp files).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '10,15p' "$0" >&2; exit 2; }
(($# == 2)) || usage
name=${1%.csv}
src=$2
[[ -s "$src" ]] || { echo "${0##*/}: no $src" >&2; exit 1; }

case "$name" in
kernel-stock61 | kernel-stock612)
	kernel=${name#kernel-} host=tcg-$(nproc)cpu cols="suite,impl,n,op,ns_per_op,min,max,reps" ;;
engines) kernel=native host=$(uname -m)-$(nproc)cpu cols="case,impl,n,range,ns_per_unit,spread,ratio,ratio_min,ratio_max" ;;
smp-[0-9]cpu) kernel=stock61-${name#smp-} host=tcg-$(nproc)cpu cols="suite,impl,n,op,value" ;;
insn-stock61 | insn-stock612 | insn-before-stock61 | insn-before-stock612)
	# exact counts: one repetition is the figure
	kernel=${name##*-} host=tcg-$(nproc)cpu cols="label,kernel,user,ops,kernel_per_op,path_per_op" REPS=1 ;;
insn-time-stock61 | insn-time-stock612 | insn-time-before-stock61 | insn-time-before-stock612)
	kernel=${name##*-} host=tcg-$(nproc)cpu cols="suite,impl,n,op,ns_per_op,min,max,reps" ;;
*) usage ;;
esac

# The first line that is not a comment must be the kind's header.
have=$(grep -m 1 -v '^#' "$src")
[[ "$have" == "$cols" ]] ||
	{ echo "${0##*/}: $src: header '$have', expected '$cols' for $name" >&2; exit 1; }

reps=${REPS:-5}
if [[ $cols == *,reps ]]; then
	reps=$(awk -F, '!/^#/ && $1 != "suite" { c[$8]++ }
		END { for (r in c) if (c[r] > m) { m = c[r]; best = r }; print best }' "$src")
elif [[ $name == engines ]]; then
	line=$(grep -m 1 '^# bench_engines ' "$src" || true)
	[[ $line =~ reps=([0-9]+) ]] && reps=${BASH_REMATCH[1]}
	[[ $line == *" subset"* ]] &&
		{ echo "${0##*/}: $src: a run of some cases only ($line)" >&2; exit 1; }
	bits=$(sed -n 's/^#define TWHEEL_BITS_DEFAULT[[:space:]]*//p' "$here/../include/linux/twheel.h")
	[[ $line =~ bits=([0-9]+) && ${BASH_REMATCH[1]} != "$bits" ]] &&
		{ echo "${0##*/}: $src: not the default geometry of $bits bits ($line)" >&2; exit 1; }
fi
# (instruction counts are exact: one run is the figure)
[[ $cols == label,* ]] || ((reps >= 5)) || { echo "${0##*/}: $src: $reps repetitions, fewer than the 5 a full run makes (--smoke?)" >&2; exit 1; }

commit=${COMMIT:-$(git -C "$here" rev-parse --short HEAD)}
dst=$here/results/$name.csv
{
	echo "# commit=$commit kernel=$kernel host=$host reps=$reps date=${DATE:-$(date -u +%F)}"
	grep -v '^#' "$src"
} >"$dst.tmp"
mv "$dst.tmp" "$dst"
head -n 1 "$dst"
echo "wrote bench/results/$name.csv"
# What is drawn or quoted from the file, to update in the same commit
case "$name" in
kernel-*) echo "now update README.md's lines between <!-- bench/summary.sh --> and its end from bench/summary.sh" ;;&
kernel-stock61) echo "and redraw the figures: bench/plot.sh bench/results/kernel-stock61.csv" ;;
engines) echo "now redraw the figure: bench/engines/plot.sh bench/results/engines.csv" ;;
smp-*) echo "now redraw the figure: bench/plot-smp.sh" ;;
insn-*) echo "Documentation/benchmarks.rst's instruction table is generated from it (make docs)" ;;
esac
