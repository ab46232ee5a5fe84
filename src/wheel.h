/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure hashed timing wheel (Scheme 6).  No locks, no clock, no
 * allocation: see the head comment of wheel.c.  The caller serialises
 * every call on one wheel and owns all memory.
 */
#ifndef _TWHEEL_WHEEL_H
#define _TWHEEL_WHEEL_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/twheel.h>

/* "No tick": returned by the next-expiry queries of an empty wheel. */
#define TW_NO_TICK	U64_MAX

/**
 * struct tw_wheel - a hashed timing wheel
 * @clk:      every tick < @clk has been processed; every entry has key >= @clk
 * @count:    entries in the slots (not counting those handed out as expired)
 * @bits:     log2 of the number of slots
 * @max_slot: longest slot list an advance has walked
 * @slots:    1 << @bits unsorted lists; a node with key k is in slot k & mask
 * @low:      per slot, a lower bound of the keys in it (meaningful only
 *            while the slot is occupied)
 * @occupied: one bit per slot, set iff the slot list is non-empty
 */
struct tw_wheel {
	u64 clk;
	unsigned long count;
	unsigned int bits;
	unsigned long max_slot;
	struct hlist_head *slots;
	u64 *low;
	unsigned long *occupied;
};

static inline u64 tw_wheel_size(const struct tw_wheel *w)
{
	return 1ULL << w->bits;
}

static inline bool tw_node_linked(const struct twheel_node *node)
{
	return !hlist_unhashed(&node->entry);
}

static inline void tw_node_init(struct twheel_node *node)
{
	INIT_HLIST_NODE(&node->entry);
	node->key = 0;
}

void tw_wheel_init(struct tw_wheel *w, struct hlist_head *slots, u64 *low,
		   unsigned long *occupied, unsigned int bits, u64 clk);
void tw_wheel_insert(struct tw_wheel *w, struct twheel_node *node, u64 key);
void tw_wheel_remove(struct tw_wheel *w, struct twheel_node *node);
unsigned int tw_wheel_advance(struct tw_wheel *w, u64 upto, unsigned int max,
			      struct hlist_head *expired);
u64 tw_wheel_next_lower_bound(const struct tw_wheel *w);
u64 tw_wheel_next_key(const struct tw_wheel *w, u64 bound);
u64 tw_wheel_pick_key(u64 lo, u64 hi);

#endif /* _TWHEEL_WHEEL_H */
