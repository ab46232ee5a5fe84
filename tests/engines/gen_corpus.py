#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the seed corpus of fuzz_engines (deterministic: same bytes every run).

Input layout (see fuzz_engines.c; every input runs on every engine): [bits] [clk mode] [clk bytes] then ops,
each an opcode byte (op % 10: 0-2 insert, 3 remove, 4 re-insert,
5-7 advance, 8 next_key (forward with bit 0x80), 9 pick_key (set the
chunk of moves with bit 0x80)) followed by its argument bytes.
Usage: gen_corpus.py [DIR]   (default: corpus/ next to this script)
"""
import os
import random
import sys

INS, REM, REINS, ADV, NEXT, PICK = 0, 3, 4, 5, 8, 9
# op % 10 with bit 0x80 set: forward, set the chunk, re-insert at the same key
FWD, CHUNK, REINS_SAME = 0x80, 0x81, 0x86


def ins(node, sel, *args):
    return bytes([INS, node, sel, *args])


def adv(sel, capb=0, *args):
    return bytes([ADV, sel, capb, *args])


SEEDS = {
    # 16 slots from tick 0: near keys, past keys, one tick at a time.
    "tick-by-tick": bytes([0, 0])
    + b"".join(ins(n, 0, n * 3) for n in range(8))
    + ins(8, 1, 5)
    + b"".join(adv(0) for _ in range(30)),
    # Keys at exact multiples of the span share slot 0; single-revolution
    # advances must leave the later revolutions alone.
    "span-multiples": bytes([2, 1, 0x12, 0x34])
    + b"".join(ins(n, 2, n) for n in range(5))
    + bytes([NEXT, 3]) + adv(6) + bytes([NEXT, 1]) + adv(6) + adv(3, 0, 0, 1),
    # Far-future keys beyond 2^32 and a huge, capped advance.
    "far-future": bytes([6, 2, 0, 0, 1, 0, 0])
    + b"".join(ins(n, 4, 0, 0, n, n) for n in range(6))
    + b"".join(ins(10 + n, 0, n) for n in range(20))
    + adv(4, 0x83, 0, 0x10, 0, 0, 12) + adv(4, 0x81, 0, 0x10, 0, 0, 12)
    + adv(4, 0, 0xff, 0xff, 0xff, 0xff, 20) + bytes([NEXT, 3]),
    # Execution cap inside one slot, with one or two entries already on
    # the expired list.
    "cap-in-slot": bytes([1, 0])
    + b"".join(ins(n, 7, 0) for n in range(12))
    + adv(0x87, 0x82) + adv(0xc7, 0x82) + adv(7, 0x80) + adv(2, 0, 40),
    # Remove, move and re-insert pending nodes, then query.
    "remove-reinsert": bytes([3, 3, 7])
    + b"".join(ins(n, 5, 0, n * 17) for n in range(16))
    + bytes([REM, 3, REM, 4, REINS, 5, 0, 9, REINS | 0x80, 6])
    + bytes([NEXT, 0, 200, NEXT, 2, NEXT, 4, 0, 0, 0, 1, 0])
    + adv(5) + adv(5, 0x84) + bytes([NEXT, 3]),
    # A tickless caller: each advance goes to just past the earliest key.
    # The hierarchical engine hands a level-0 slot out whole only when no
    # cascade point comes first (the second advance: key 20 on level 0,
    # key 28 cascading at 16) and the cap allows all of it (the third).
    "tickless": bytes([0, 0])
    + ins(0, 3, 12, 12) + ins(1, 0, 10) + adv(7, 0, 0) + ins(2, 0, 9)
    + adv(7, 0, 0) + b"".join(ins(3 + n, 0, 5) for n in range(4))
    + adv(7, 0x81, 0) + adv(7, 0x81, 0) + adv(7, 0, 0) + adv(7, 0, 0),
    # The same the facility's way (sel bit 0x10): a slot handed out whole
    # and unread, counted and capped by the caller, the rest put back.
    "tickless-loose": bytes([0, 0])
    + ins(0, 3, 12, 12) + ins(1, 0, 10) + adv(0x17, 0, 0) + ins(2, 0, 9)
    + adv(0x17, 0, 0) + b"".join(ins(3 + n, 0, 5) for n in range(4))
    + adv(0x17, 0x81, 0) + adv(0x17, 0x81, 0) + adv(0x17, 0, 0)
    + adv(0x17, 0, 0),
    # Removals that empty the slots of the earliest keys, level 0's and an
    # upper level's, each followed by the queries, then advances over a
    # cascade point and a level-0 tick whose slots removals emptied.
    "remove-stale": bytes([0, 0])
    + ins(0, 0, 3) + ins(1, 0, 7) + ins(2, 3, 1, 5) + ins(3, 3, 3, 9)
    + bytes([REM, 0, NEXT, 3]) + ins(8, 0, 2)
    + bytes([REM, 8, NEXT, 3, REM, 1, REM, 2, NEXT, 3])
    + ins(4, 0, 5) + bytes([REM, 4]) + ins(5, 3, 2, 3) + bytes([REM, 5])
    + adv(2, 0, 60) + ins(6, 0, 2) + bytes([REM, 6]) + adv(0x12, 0, 5)
    + ins(7, 0, 2) + bytes([REM, 7]) + adv(0x12, 0, 3) + adv(7, 0, 0)
    + bytes([NEXT, 3]),
    # Cascades cut short by a chunk of 2 moves: twelve keys in one
    # level-1 slot, the clock forwarded onto its block start (no cascade
    # there), then one-tick advances that each move two, with an insert,
    # a removal and moves into the half-cascaded slot in between.
    "chunked-cascade": bytes([0, 0, CHUNK, 2])
    + b"".join(ins(n, 3, 0, n) for n in range(12))
    + bytes([FWD, 1, NEXT, 3]) + adv(0) + ins(20, 0, 0) + bytes([REM, 5])
    + bytes([REINS, 6, 0, 1, REINS_SAME, 7, NEXT, 3]) + adv(0)
    + bytes([REINS, 8, 3, 1, 2, NEXT, 3])
    + b"".join(adv(0) for _ in range(8)) + adv(2, 0, 40) + bytes([NEXT, 3]),
    # The same two levels up: a level-2 slot cut short, its first nodes
    # (the latest keys) already on level 1, its earliest still in it, so
    # the bounds must look past the lowest occupied level.
    "chunked-cascade-l2": bytes([0, 0, CHUNK, 2])
    + b"".join(ins(n, 5, (1024 + n * 80) >> 8, (1024 + n * 80) & 255)
               for n in range(12))
    + bytes([FWD, 1, NEXT, 3]) + adv(0) + bytes([NEXT, 3, NEXT, 1])
    + ins(20, 0, 5) + bytes([REM, 3, NEXT, 3]) + adv(0) + bytes([NEXT, 3])
    + b"".join(adv(0) for _ in range(6)) + adv(3, 0, 8, 0) + bytes([NEXT, 3]),
    # The end of time: an advance to TW_NO_TICK hands out everything and
    # leaves the clock on the last tick, where an insert still has a key
    # below TW_NO_TICK, and the engine is not empty.
    "end-of-time": bytes([0, 0])
    + ins(0, 0, 3) + ins(1, 3, 0, 1) + adv(0x26) + ins(2, 0, 5)
    + bytes([NEXT, 3, FWD, 1]) + ins(3, 1, 2) + adv(0x26) + bytes([NEXT, 3]),
    # A node moved later in place on level 1, re-placed by that key on
    # level 4 by the cascade, then moved down within its level-4 slot:
    # alone there, it is removed and put back on the same list, links
    # unchanged, by a key the one it was first placed by does not explain.
    "move-lone-after-cascade":
    bytes.fromhex("07000054555454545454545454e3e3e3e35403545454"),
    # A node moved later in place on level 1, placed by that key on the
    # next level-1 slot by the cascade, then moved later in place again
    # before any check: that slot is the one of its key before the move.
    "move-again-after-cascade":
    bytes.fromhex("070000545537185454ff546addef53545454"),
    # Range scheduling around powers of two.
    "pick-key": bytes([0, 0])
    + bytes([PICK, 0, 7, 3, PICK, 1, 200, 20, PICK, 3, 0, 1, 0, 10, 255, 255])
    + bytes([PICK, 0x42, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 0, 0, 0, 0, 255]),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    rng = random.Random(6)
    for i in range(4):
        SEEDS["random-%d" % i] = bytes(rng.randrange(256)
                                       for _ in range(256 << i))
    for name, data in SEEDS.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
