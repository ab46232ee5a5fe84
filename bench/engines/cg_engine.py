#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instructions spent in the engine, from a callgrind output file.

The engine alone: the inclusive cost of every call a function outside the
engine makes into one (a function named tw_*), read from the call arcs of
the raw callgrind file (fn=, cfn=, calls= and the cost line after it).
The engine's own nested calls are inside those and are not added again;
the caller's loop, argument set-up and call instruction are not counted.

Usage: cg_engine.py CALLGRIND_OUT [--per-fn]
Prints the total, or with --per-fn one line per engine entry point and
per engine function (self cost), most expensive first.
"""
import re
import sys
from collections import defaultdict

NAMED = re.compile(r'^\((\d+)\)(?: (.*))?$')


def parse(path):
    names = {}
    entry = defaultdict(int)    # engine function -> inclusive cost of calls from outside
    self_cost = defaultdict(int)
    fn = callee = None
    in_call = False
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            if not line or line.startswith('#'):
                continue
            key, sep, val = line.partition('=')
            if sep and key in ('fn', 'cfn'):
                m = NAMED.match(val)
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                name = names[m.group(1)]
                if key == 'fn':
                    fn = name
                else:
                    callee = name
                continue
            if sep and key == 'calls':
                in_call = True
                continue
            if sep:
                continue
            if not (line[0].isdigit() or line[0] in '+-*'):
                continue
            fields = line.split()
            if len(fields) < 2:
                continue
            cost = int(fields[1])
            if in_call:
                if callee.startswith('tw_') and not fn.startswith('tw_'):
                    entry[callee] += cost
                in_call = False
            elif fn is not None:
                self_cost[fn] += cost
    return entry, self_cost


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    entry, self_cost = parse(sys.argv[1])
    if len(sys.argv) == 3 and sys.argv[2] == '--per-fn':
        for name, cost in sorted(entry.items(), key=lambda x: -x[1]):
            print(f'entry {cost:12d} {name}')
        for name, cost in sorted(self_cost.items(), key=lambda x: -x[1]):
            print(f'self  {cost:12d} {name}')
    else:
        print(sum(entry.values()))


if __name__ == '__main__':
    main()
