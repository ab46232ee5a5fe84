/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hierarchical engine: a Scheme 6 wheel for the near ticks with
 * Scheme 7 levels above it.  Pure, as wheel.c: see the head comment of
 * hier.c.  The caller serialises every call on one engine and owns all
 * memory.
 */
#ifndef _TWHEEL_HIER_H
#define _TWHEEL_HIER_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/list.h>
#include <linux/twheel.h>

/* Each level above level 0 has 64 slots: one bitmap word. */
#define TW_HIER_LVL_BITS	6
#define TW_HIER_LVL_SIZE	BIT(TW_HIER_LVL_BITS)
/* Level 0 of at least 4 bits plus ten levels of 6 bits cover 64 bits. */
#define TW_HIER_MAX_UP		10

/*
 * What tw_hier_advance_loose() returns for a level-0 slot handed out whole
 * and unread; tw_hier_settle() must follow.
 */
#define TW_UNCOUNTED		UINT_MAX

/**
 * struct tw_hier - a hierarchical timing wheel
 * @clk:      every tick < @clk has been processed; every key is >= @clk
 * @count:    entries on all levels (not counting those handed out; a slot
 *            handed out whole leaves it at tw_hier_settle())
 * @bits:     log2 of the number of level-0 slots
 * @mask0:    2^@bits - 1: a key's level-0 slot, and the test for level 0
 * @levels:   number of levels above level 0
 * @max_slot: longest list an advance has walked (a level-0 slot handed
 *            out, or an upper slot cascaded), or a caller took whole
 * @moves:    nodes moved down a level by cascades
 * @chunk:    most nodes the cascades of one advance move (0: no limit);
 *            a cascade cut short goes on at the next advance
 * @tc:       a tick <= the next cascade point (the block start of the first
 *            occupied upper slot), > @clk; TW_NO_TICK when none; == @clk
 *            while the cascade at @clk is not done
 * @next0:    the earliest level-0 key, TW_NO_TICK when level 0 is empty;
 *            kept exact by every change (see hier.c)
 * @l0:       1 << @bits lists; a node with key k is in slot k & mask, and
 *            only keys less than a revolution ahead of @clk are here (so
 *            each slot holds one tick)
 * @l0_map:   one bit per level-0 slot, set if it is non-empty (and maybe
 *            after a removal emptied it, until a search passes it)
 * @l0_sum:   one bit per word of @l0_map, set iff that word is non-zero
 * @up:       @levels * 64 lists; level L >= 1 is up[(L - 1) * 64 ...]
 * @up_levels: bit L - 1 set iff upper level L has an occupied slot
 * @up_map:   per level above 0, one bit per non-empty slot
 * @up_of:    by the highest bit where a key and @clk differ (>= @bits):
 *            its upper level - 1 (@lvl) and that level's S(L) (@sh)
 * @up_low:   per upper slot, a lower bound of its keys; TW_NO_TICK while
 *            the slot is empty
 */
struct tw_hier {
	u64 clk;
	unsigned long count;
	unsigned int bits;
	unsigned int levels;
	u64 mask0;
	unsigned long max_slot;
	u64 moves;
	unsigned int chunk;
	u64 tc;
	u64 next0;
	struct hlist_head *l0;
	unsigned long *l0_map;
	unsigned long *l0_sum;
	struct hlist_head *up;
	u64 *up_low;
	unsigned long up_levels;
	u64 up_map[TW_HIER_MAX_UP];
	struct {
		u8 lvl;
		u8 sh;
	} up_of[64];
};

/* Index in @up and @up_low of slot @s of upper level @level (>= 1). */
static inline unsigned int tw_hier_up_idx(unsigned int level, unsigned int s)
{
	return (level - 1) * TW_HIER_LVL_SIZE + s;
}

size_t tw_hier_mem_size(unsigned int bits);
void tw_hier_init(struct tw_hier *h, void *mem, unsigned int bits, u64 clk);
void tw_hier_insert(struct tw_hier *h, struct twheel_node *node, u64 key);
void tw_hier_remove(struct tw_hier *h, struct twheel_node *node);
void tw_hier_move(struct tw_hier *h, struct twheel_node *node, u64 key);
void tw_hier_forward(struct tw_hier *h, u64 to);
unsigned int tw_hier_advance(struct tw_hier *h, u64 upto, unsigned int max,
			     struct hlist_head *expired);
unsigned int tw_hier_advance_loose(struct tw_hier *h, u64 upto,
				   unsigned int max,
				   struct hlist_head *expired);
void tw_hier_settle(struct tw_hier *h, unsigned int taken,
		    struct hlist_node *rest);
u64 tw_hier_next_lower_bound(const struct tw_hier *h);
u64 tw_hier_next_key(const struct tw_hier *h, u64 bound);
int tw_hier_node_level(const struct tw_hier *h, const struct twheel_node *node);

#endif /* _TWHEEL_HIER_H */
