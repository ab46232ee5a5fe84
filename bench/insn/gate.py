#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instruction targets of issue 59: twheel against timer_list, same run.

Usage: gate.py CSV

CSV is report.py --csv's: rows "label,kernel,user,ops,kernel_per_op,
path_per_op" with labels OP.IMPL.N from twheel_bench.ko's marks
(insn_marks=1).  For every OP and N counted for both twheel and
timer_list (ops_pair, ops_modify, fire, spread_s*; ops_start and
ops_cancel alone are shown, not gated: a pair is what a user pays;
spread compares twheel_slack, whose slack is timer_list's granularity,
and shows plain twheel, which fires within a tick, beside it),
prints a TAP line: ok when twheel's kernel instructions per operation
are at most timer_list's, counted on their path (path_per_op: the
functions the loop or the expiry runs, wakeups included, not the other
CPU's occasional work).
Instruction counts are exact: no margin.  Exits 1 if any is not ok or
nothing was compared.
"""
import csv
import sys

GATED = ("ops_pair", "ops_modify", "fire", "spread_s")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    per = {}
    with open(sys.argv[1]) as f:
        for row in csv.DictReader(f):
            parts = row["label"].split(".")
            if len(parts) == 3 and tuple(parts) not in per:
                per[tuple(parts)] = float(row["path_per_op"])
    fails = checked = 0
    for (op, impl, n), tw in sorted(per.items()):
        tl = per.get((op, "timer_list", n))
        if not impl.startswith("twheel") or tl is None:
            continue
        line = (f"{op} n={n}: {impl} {tw:.1f} <= timer_list {tl:.1f} "
                f"kernel instructions per op")
        # spread: like for like is twheel_slack, at timer_list's
        # granularity; plain twheel wakes every tick (1 ms, not a jiffy
        # or a level's granularity) and is shown beside it
        gated = op.startswith(GATED) and impl == (
            "twheel_slack" if op.startswith("spread") else "twheel")
        if not gated:
            print(f"# {line} (not gated)")
            continue
        checked += 1
        if tw <= tl:
            print(f"ok - {line}")
        else:
            fails += 1
            print(f"not ok - {line}")
    if not checked:
        print("not ok - instruction targets: no twheel/timer_list pair counted")
        sys.exit(1)
    sys.exit(1 if fails else 0)


main()
