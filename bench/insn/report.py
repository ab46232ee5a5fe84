#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Per-function shares of the kernel instructions counted by insn_prof.

Usage: report.py CONSOLE PREFIX [--top N] [--csv FILE]

CONSOLE is the VM's console log of a `bench/run.sh --insn` run: the n-th
"insn-mark: LABEL" line names window n - 1 (and "-" leaves it out; a
LABEL ending in /COUNT adds the instructions per operation, and one
ending in @CPU or @CPU/COUNT counts that CPU's instructions only), the
"insn-sym ADDR T NAME [twheel_bench]" lines after it give the benchmark
module's addresses in that window, and the base64 gzip between insn-kallsyms-begin and -end is the guest's
text symbols.  PREFIX.W are the plugin's counts of window W.  Prints, per
labelled window, the kernel and user instruction totals and the functions
with the largest shares of the kernel's, with their calls (the runs of
the block at the function's address, so a loop that jumps back to it
would count too) and instructions per call.  The module's addresses
printed after a window serve the windows before it back to the previous
print: twheel_bench.ko's own marks (insn_marks=1) cut several windows out
of one load.  --csv FILE: the labelled windows with a count as
"label,kernel,user,ops,kernel_per_op,path_per_op" rows, for gate.py:
path counts only the functions on the operations' path, those called at
least once per four operations or executing at least two instructions
per operation (a tick handler's loop over the timers it expires), and
the benchmark module's; it leaves out what the other CPU did meanwhile
(a load balance, a tick: a few thousand instructions now and then).
"""
import base64
import bisect
import gzip
import re
import sys


def parse_console(path):
    labels, msyms, b64, inside, window = {}, {}, [], False, -1
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line == "insn-kallsyms-begin":
                inside = True
            elif line == "insn-kallsyms-end":
                inside = False
            elif inside:
                # a kernel message may still cut in
                line = re.sub(r"\[ *\d+\.\d+\] .*", "", line)
                if re.fullmatch(r"[A-Za-z0-9+/=]+", line):
                    b64.append(line)
            elif m := re.search(r"insn-mark: (\S+)$", line):
                window += 1
                if m[1] != "-":
                    labels[window] = m[1]
            elif m := re.match(r"insn-sym ([0-9a-f]+) \S (\S+)", line):
                msyms.setdefault(window, []).append(
                    (int(m[1], 16), m[2] + " [twheel_bench]"))
    syms = []
    text = gzip.decompress(base64.b64decode("".join(b64))).decode()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 3:
            name = parts[2] + (" " + parts[3] if len(parts) > 3 else "")
            syms.append((int(parts[0], 16), name))
    return labels, msyms, syms


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    top = 25
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
    labels, msyms, ksyms = parse_console(sys.argv[1])
    if not labels or not ksyms:
        sys.exit("report.py: no windows or no symbols in " + sys.argv[1])
    csv = None
    if "--csv" in sys.argv:
        csv = open(sys.argv[sys.argv.index("--csv") + 1], "w")
        print("label,kernel,user,ops,kernel_per_op,path_per_op", file=csv)
    printed = sorted(msyms)
    for w in sorted(labels):
        # the module's addresses as printed at the first print from w on
        at = bisect.bisect_left(printed, w)
        mod = msyms[printed[at]] if at < len(printed) else []
        syms = sorted(ksyms + mod)
        addrs = [a for a, _ in syms]
        per, calls, kernel, user = {}, {}, 0, 0
        # "NAME@CPU/COUNT": that CPU's instructions only (insn_prof's
        # per-vCPU columns), not what the other did meanwhile
        cpu = re.search(r"@(\d+)(?:/\d+)?$", labels[w])
        cpu = int(cpu[1]) if cpu else None
        with open(f"{sys.argv[2]}.{w}") as f:
            for line in f:
                a, n, *e = line.split()
                if a == "user":
                    user = int(n)
                    continue
                n, execs = int(n), int(e[0])
                if cpu is not None and len(e) > 1 + cpu:
                    c = int(e[1 + cpu])
                    execs = round(c * execs / n) if n else 0
                    n = c
                if not n:
                    continue
                va = int(a, 16)
                i = bisect.bisect_right(addrs, va) - 1
                name = syms[i][1] if i >= 0 else "?"
                per[name] = per.get(name, 0) + n
                if i >= 0 and syms[i][0] == va:
                    calls[name] = calls.get(name, 0) + execs
                kernel += n
        where = "" if cpu is None else f" on CPU {cpu}"
        print(f"== {labels[w]}: kernel {kernel:,} instructions{where}, "
              f"user {user:,} ==")
        if m := re.search(r"/(\d+)$", labels[w]):
            ops = max(int(m[1]), 1)
            print(f"  per operation: kernel {kernel / ops:,.1f}, "
                  f"user {user / ops:,.1f}")
            if csv:
                path = sum(n for name, n in per.items()
                           if calls.get(name, 0) * 4 >= ops or
                           n >= 2 * ops or
                           name.endswith("[twheel_bench]"))
                name = re.sub(r"@\d+$", "", labels[w].rsplit("/", 1)[0])
                print(f"{name},{kernel},{user},"
                      f"{int(m[1])},{kernel / ops:.1f},{path / ops:.1f}",
                      file=csv)
        print(f"  {'share':>6}  {'instructions':>14}  {'calls':>11}  "
              f"{'per call':>8}  function")
        for name, n in sorted(per.items(), key=lambda x: -x[1])[:top]:
            c = calls.get(name, 0)
            pc = f"{n / c:8.1f}" if c else f"{'':8}"
            print(f"  {100.0 * n / max(kernel, 1):5.1f}%  {n:>14,}  "
                  f"{c:>11,}  {pc}  {name}")
        print()
        if not kernel:
            sys.exit(f"report.py: window {w} ({labels[w]}) counted nothing")


main()
