#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The engines' instruction counts, the engine alone (engine_insn.c under
# callgrind; cg_engine.py sums the inclusive cost of the calls the driver
# makes into the engine, so the driver's loop is not counted): per start +
# cancel pair (case (b): 10^5 remove + insert pairs after filling N), per
# expiry of a tickless drain (case (c): all due at once, R = 1, and spread
# over 10^4 ticks) and per tick of the far case (d), at 10^3 and 10^6
# timers, default geometry (TWHEEL_BITS_DEFAULT).  Callgrind counts are
# exact and repeatable: one run each.
#
# Usage: bench/engines/insn.sh [--gate] [--quick] [ENGINE]  (default hier)
#   --gate   exit 1 if a start + cancel pair exceeds $TWHEEL_INSN_PAIR_MAX
#            (default 70) instructions at 10^3 or 10^6 timers; prints
#            "N passed, N failed"
#   --quick  only the start + cancel cases (what the gate needs)
# Writes build/engines/insn.txt (and the callgrind files beside it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${O:-$root/build/engines}
gate=0
quick=0
while (($#)); do
	case $1 in
	--gate) gate=1 ;;
	--quick) quick=1 ;;
	-*)
		echo "usage: ${0##*/} [--gate] [--quick] [ENGINE]" >&2
		exit 2
		;;
	*) break ;;
	esac
	shift
done
eng=${1:-hier}
max=${TWHEEL_INSN_PAIR_MAX:-70}
pairs=100000
command -v valgrind >/dev/null || {
	echo "valgrind missing: scripts/deps.sh lint" >&2
	exit 1
}
make --no-print-directory -s -C "$here" O="$out" "$out/engine_insn"
report=$out/insn.txt
: >"$report"

# run NAME OPS ARGS...: callgrind of engine_insn ARGS, instructions per op
run() {
	local name=$1 ops=$2 f ir
	shift 2
	f=$out/cg.insn.${name// /.}
	valgrind --tool=callgrind --toggle-collect='measure_*' \
		--callgrind-out-file="$f" "$out/engine_insn" "$@" >/dev/null 2>&1
	ir=$(python3 "$here/cg_engine.py" "$f")
	all=$(awk '/^summary:/ { print $2 }' "$f")
	awk -v n="$name" -v o="$ops" -v ir="$ir" -v all="$all" \
		'BEGIN { printf "%-20s %8d %12d %9.1f %9.1f\n", n, o, ir, ir / o, all / o }' |
		tee -a "$report"
}

pass=0
fail=0
# Ir/op: the engine alone; all/op: with the driver's loop
printf '%-20s %8s %12s %9s %9s\n' "case ($eng)" ops "engine Ir" Ir/op all/op | tee -a "$report"
for n in 1000 1000000; do
	for r in 10000 1000000; do
		line=$(run "sc $n $r" $pairs sc "$eng" $n $r $pairs)
		echo "$line"
		per=$(awk '{ print $(NF - 1) }' <<<"$line")
		if awk -v p="$per" -v m="$max" 'BEGIN { exit !(p <= m) }'; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			echo "FAIL start + cancel at $n timers, R $r: $per instructions per pair > $max"
		fi
	done
done
if ((!quick)); then
	for n in 1000 1000000; do
		run "drain $n 1" $n drain "$eng" $n 1
		run "drain $n 10000" $n drain "$eng" $n 10000
		run "far $n" $((8 * 4096)) far "$eng" $n
	done
fi
if ((gate)); then
	echo "$pass passed, $fail failed"
	((fail == 0))
fi
