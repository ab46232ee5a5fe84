#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Issue 59's instruction targets as a table, from bench/results/.

Usage: table.py RESULTS_DIR KERNEL

Reads insn-KERNEL.csv (the latest `make -C bench insn-targets` run:
report.py --csv rows), insn-before-KERNEL.csv (the same cases counted on
the module before the lean paths, if present), insn-time-KERNEL.csv (the
same run's timed ops and fire cases, the kernel CSV's columns) and
insn-time-before-KERNEL.csv (the before run's), or else kernel-KERNEL.csv
(the published full run) for the time ratios before.
Prints, per case and N, the kernel instructions per operation on the
path (gate.py's figure) of twheel before and now and of timer_list, and
the TCG time ratios twheel / timer_list beside them (medians; not what
the targets gate on).
"""
import csv
import os
import sys

# (label, insn op, twheel impl, time suite/op or None)
CASES = [
    ("start + cancel pair", "ops_pair", "twheel", ("ops", "start_cancel")),
    ("modify (pending)", "ops_modify", "twheel", ("ops", "modify")),
    ("expiry, all due at once", "fire", "twheel", ("fire", "fire_cpu")),
    ("expiry, 10^4 ticks, slack", "spread_s10000", "twheel_slack",
     ("spread", "cpu_ns_per_fire_s10000")),
    ("expiry, 10^4 ticks, 1 ms", "spread_s10000", "twheel",
     ("spread", "cpu_ns_per_fire_s10000")),
]


def read_insn(path):
    per = {}
    if not os.path.exists(path):
        return per
    with open(path) as f:
        for row in csv.DictReader(line for line in f
                                  if not line.startswith("#")):
            parts = row["label"].split(".")
            if len(parts) == 3 and tuple(parts) not in per:
                per[tuple(parts)] = float(row["path_per_op"])
    return per


def read_time(path):
    t = {}
    if not os.path.exists(path):
        return t
    with open(path) as f:
        for row in csv.DictReader(line for line in f
                                  if not line.startswith("#")):
            t[(row["suite"], row["impl"], row["n"], row["op"])] = \
                float(row["ns_per_op"])
    return t


def ratio(t, suite, impl, n, op):
    a = t.get((suite, impl, n, op))
    b = t.get((suite, "timer_list", n, op))
    return f"{a / b:.2f}" if a and b else "--"


def power(n):
    n = int(n)
    e = len(str(n)) - 1
    return f"10^{e}" if n == 10 ** e else str(n)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    res, k = sys.argv[1], sys.argv[2]
    now = read_insn(f"{res}/insn-{k}.csv")
    before = read_insn(f"{res}/insn-before-{k}.csv")
    tnow = read_time(f"{res}/insn-time-{k}.csv")
    tbefore = read_time(f"{res}/insn-time-before-{k}.csv") or \
        read_time(f"{res}/kernel-{k}.csv")
    print(f"{'':27} {'':5}  {'instructions per op (path)':^33}"
          f"  {'TCG time, twheel/tl':^19}")
    print(f"{'case':27} {'N':5}  {'twheel':>7} {'before':>7} "
          f"{'timer_list':>10} {'ratio':>6}  {'before':>9} {'now':>9}")
    ns = sorted({n for (_, _, n) in now}, key=int)
    for label, op, impl, (suite, top) in CASES:
        for n in ns:
            tw, tl = now.get((op, impl, n)), now.get((op, "timer_list", n))
            if tw is None or tl is None:
                continue
            b = before.get((op, impl, n))
            bs = f"{b:7.1f}" if b is not None else f"{'--':>7}"
            tsuite = "spread" if op.startswith("spread") else suite
            tb = ratio(tbefore, tsuite, impl, n, top)
            tn = ratio(tnow, tsuite, impl, n, top)
            print(f"{label:27} {power(n):5}  {tw:7.1f} {bs} {tl:10.1f} "
                  f"{tw / tl:6.2f}  {tb:>9} {tn:>9}")


main()
