#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Callgrind profile of the pure wheel (src/wheel.c built unchanged in
# userspace against the kernel tree's tools/include): instructions and simulated cache misses
# per operation for the tick walk, the expiry path and insert/remove, with
# a 32 KiB L1 and an 8 MiB last-level cache.  Then the engines (hier and
# scheme6, engine_prof.c) on cases (b) and (c) of the native benchmark:
# instructions and mispredicted branches per operation.
# Writes build/bench/profile/callgrind.txt and prints a summary.
#
# Usage: bench/engines/profile.sh [N...]     (default: 1000 10000 100000 1000000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${TWHEEL_BUILD:-$root/build}/bench/profile
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "valgrind missing: apt-get install valgrind" >&2; exit 1; }
(($#)) || set -- 1000 10000 100000 1000000

# The kernel's own userspace headers (tools/include: list.h, bitops.h,
# find_bit.c...) from the extracted linux-source tree; shim/ adds the two
# that include/linux/twheel.h needs and tools/include lacks.
ksrc=$("$root/tests/vm/kernels.sh" source)
gcc -O2 -g -std=gnu11 -Wall -I"$root/tests/engines/shim" -I"$ksrc/tools/include" \
	-I"$ksrc/tools/arch/x86/include" -I"$root/src" -I"$root/include" \
	-o "$out/wheel_prof" "$here/wheel_prof.c" "$root/src/wheel.c" \
	"$ksrc/tools/lib/find_bit.c"

report=$out/callgrind.txt
: >"$report"
printf '%-6s %9s %12s %12s %12s %10s\n' scen N ops Ir/op D1miss/op LLmiss/op | tee -a "$report"
for scen in tick fire ops; do
	for n in "$@"; do
		f=$out/cg.$scen.$n
		valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --LL=8388608,16,64 \
			--toggle-collect='measure_*' \
			--callgrind-out-file="$f" "$out/wheel_prof" "$scen" "$n" >/dev/null 2>&1
		# events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
		read -r ir d1 ll < <(callgrind_annotate "$f" 2>/dev/null |
			awk '/PROGRAM TOTALS/ { gsub(/\([^)]*\)/, ""); gsub(",", ""); gsub(/ \. /, " 0 ");
				gsub(/ \. /, " 0 "); print $1, $5 + $6, $8 + $9; exit }')
		case $scen in
		tick) ops=4096 ;;	# ticks (one revolution)
		fire) ops=$n ;;		# expiries
		ops) ops=100000 ;;	# insert+remove pairs
		esac
		awk -v s="$scen" -v n="$n" -v o="$ops" -v ir="$ir" -v d1="$d1" -v ll="$ll" \
			'BEGIN { printf "%-6s %9d %12d %12.1f %12.2f %10.2f\n", s, n, o, ir / o, d1 / o, ll / o }' |
			tee -a "$report"
	done
done

# The engines behind src/engine.h on two cases of the native benchmark
# (engine_prof.c): instructions, conditional branches and mispredicted
# ones (callgrind's branch simulator) per start+cancel pair (b) and per
# expiry of a tickless drain (c).
gcc -O2 -g -std=gnu11 -Wall -I"$root/tests/engines/shim" -I"$ksrc/tools/include" \
	-I"$ksrc/tools/arch/x86/include" -I"$root/src" -I"$root/include" \
	-o "$out/engine_prof" "$here/engine_prof.c" "$ksrc/tools/lib/find_bit.c"
printf '\n%-6s %-8s %8s %8s %12s %12s %10s %10s\n' case engine N R ops Ir/op Bc/op Bcm/op |
	tee -a "$report"
for c in "sc 1000 10000" "sc 10000 10000" "sc 1000 1000000" \
	"drain 1000 10000" "drain 1000 1000000" "drain 10000 1000000"; do
	read -r scen n r <<<"$c"
	for eng in hier scheme6; do
		f=$out/cg.engine.$scen.$eng.$n.$r
		valgrind --tool=callgrind --branch-sim=yes --toggle-collect='measure_*' \
			--callgrind-out-file="$f" "$out/engine_prof" "$scen" "$eng" "$n" "$r" \
			>/dev/null 2>&1
		# events: Ir Bc Bcm Bi Bim
		read -r ir bc bcm < <(callgrind_annotate "$f" 2>/dev/null |
			awk '/PROGRAM TOTALS/ { gsub(/\([^)]*\)/, ""); gsub(",", "");
				gsub(/ \. /, " 0 "); print $1, $2, $3; exit }')
		case $scen in
		sc) ops=1000000 ;;		# remove + insert pairs
		drain) ops=$((n * 100)) ;;	# expiries
		esac
		awk -v s="$scen" -v e="$eng" -v n="$n" -v r="$r" -v o="$ops" -v ir="$ir" \
			-v bc="$bc" -v bcm="$bcm" 'BEGIN { printf "%-6s %-8s %8d %8d %12d %12.1f %10.2f %10.2f\n",
				s, e, n, r, o, ir / o, bc / o, bcm / o }' | tee -a "$report"
	done
done
echo "callgrind output: $out/cg.*; summary: $report"
