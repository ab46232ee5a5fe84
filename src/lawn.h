/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Timer Lawn engine: a FIFO per timeout duration and a heap over the
 * FIFO heads.  Pure, as wheel.c: see the head comment of lawn.c.
 */
#ifndef _TWHEEL_LAWN_H
#define _TWHEEL_LAWN_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/twheel.h>

/* At most 2^10 FIFOs, whatever the slot bits asked for. */
#define TW_LAWN_MAX_QBITS	10
/* FIFOs tried for a key before it is sorted into one. */
#define TW_LAWN_PROBES		4

/**
 * struct tw_lawn_q - one FIFO, sorted by key
 * @head: the nodes, earliest first, then @end
 * @end:  sentinel, always last: a real node's next is never NULL, and the
 *        tail is found from @end's pprev
 * @pos:  index of this FIFO in the heap while it is non-empty
 */
struct tw_lawn_q {
	struct hlist_head head;
	struct twheel_node end;
	u32 pos;
};

/**
 * struct tw_lawn - a Timer Lawn
 * @clk:      every tick < @clk has been processed; every key is >= @clk
 * @count:    nodes in the FIFOs
 * @qbits:    log2 of the number of FIFOs
 * @nr_heap:  non-empty FIFOs, all in @heap
 * @max_slot: longest walk of a sorted insert (0 while every key fits the
 *            end of a FIFO)
 * @sorted:   inserts that had to walk (no probed FIFO ended early enough)
 * @q:        the FIFOs
 * @heap:     indices of the non-empty FIFOs, a binary min-heap by head key
 */
struct tw_lawn {
	u64 clk;
	unsigned long count;
	unsigned int qbits;
	unsigned int nr_heap;
	unsigned long max_slot;
	u64 sorted;
	struct tw_lawn_q *q;
	u32 *heap;
};

size_t tw_lawn_mem_size(unsigned int bits);
void tw_lawn_init(struct tw_lawn *l, void *mem, unsigned int bits, u64 clk);
void tw_lawn_insert(struct tw_lawn *l, struct twheel_node *node, u64 key);
void tw_lawn_remove(struct tw_lawn *l, struct twheel_node *node);
unsigned int tw_lawn_advance(struct tw_lawn *l, u64 upto, unsigned int max,
			     struct hlist_head *expired);
u64 tw_lawn_next_lower_bound(const struct tw_lawn *l);
u64 tw_lawn_next_key(const struct tw_lawn *l, u64 bound);

#endif /* _TWHEEL_LAWN_H */
