#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the libFuzzer binary for SECONDS on a fresh copy of CORPUS under OUT
# (the repository's corpus is never mutated), then print what broke, the
# final coverage line and exec/s.  Exit status: the fuzzer's (non-zero on a
# crash; the reproducer is in OUT/artifacts/).
#
# Usage: run-fuzzer.sh FUZZER SECONDS CORPUS OUT LOG
set -uo pipefail
fuzzer=$1 secs=$2 corpus=$3 out=$4 log=$5

rm -rf "$out/corpus" "$out/artifacts"
mkdir -p "$out/artifacts"
cp -r "$corpus" "$out/corpus"
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 \
	-artifact_prefix="$out/artifacts/" "$out/corpus" >"$log" 2>&1
rc=$?
grep -E 'wheel-fuzz:|ERROR: |SUMMARY: ' "$log"
last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
cov=$(sed -n 's/.* cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1 ft \2/p' <<<"$last")
eps=$(awk '/stat::average_exec_per_sec/ { print $2 }' "$log")
runs=$(awk '/stat::number_of_executed_units/ { print $2 }' "$log")
echo "fuzz: ${secs}s: ${runs:-?} runs, ${eps:-?} exec/s, ${cov:-no coverage line}, exit $rc (log $log)"
for a in "$out"/artifacts/*; do
	[ -e "$a" ] && echo "fuzz: artifact $a"
done
exit $rc
