// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the hierarchical engine - Scheme 6 near, Scheme 7 far
 *
 * Data structure
 * --------------
 * Level 0 is the hashed wheel of wheel.c, 2^bits one-tick slots used as a
 * ring, but it only holds keys less than a revolution ahead of the clock
 * (k - @clk < 2^bits when placed): every key in a level-0 slot is the same
 * tick, so a slot that is visited is handed out whole and no far timer is
 * ever read on the way, and a timer due within a revolution never moves.
 * Above it, level L >= 1 has 64 slots of 2^S(L) ticks, S(1) = bits,
 * S(L + 1) = S(L) + 6, and as many levels as it takes to reach 64 bits (10
 * above a 16-slot level 0, 8 above 2^20 slots).
 *
 * A key k a revolution or more ahead goes to the lowest level L whose
 * block of 2^S(L + 1) ticks around @clk contains it: L is found from the
 * highest bit where k and @clk differ (one fls64()), the slot is bits
 * S(L)..S(L + 1) - 1 of k, always after @clk's own slot on that level.  So
 * the blocks of level L's slots all come before those of level L + 1, and
 * within a level the slots are in order from the slot after @clk's: no
 * wrap-around above level 0.  A node needs no level field: removal finds
 * its list head from the node's pprev when it is the first in its list (an
 * address range check), and only then can the list become empty.
 *
 * Moves: tw_hier_move() of a node on an upper level to a later key only
 * writes the key and leaves the node where it is.  A removal would write
 * both list neighbours (cold in a large wheel) and the insert the new
 * list's first node; an idle timeout pushed out on every activity is that
 * case, a few times per revolution.  So a key in an upper slot is at or
 * after the slot's block start and the slot's bound, but may lie past the
 * block; the cascade that empties the slot places such a node by its new
 * key, on any level.  Level 0 keeps one tick per slot: a node there is
 * moved as a removal and an insert, as is one whose key goes down (its
 * slot's cascade could come too late).  Ratas' author tried this for
 * every slot and saw small slowdowns; only the upper levels do it here,
 * where a slot holds many ticks anyway.
 *
 * Cascades: when @clk reaches the start of an occupied upper slot's block
 * (a "cascade point"), the slot's nodes are placed again relative to the
 * new @clk: each goes to a lower level, at most levels - 1 moves per
 * insertion or move to a key further out.  A node
 * whose key is the block start itself and is due is handed out directly
 * and never moves: range scheduling (tw_wheel_pick_key()) prefers keys
 * with the most trailing zero bits, so a timer whose allowed range covers
 * a whole bucket of the level it lands on is put on that bucket's start
 * and fires from there without a cascade, unless an advance stops at the
 * block start without handing it out (the facility's clock forward to the
 * next lower bound does, while that tick is in progress): then it moves
 * down once, and still fires on time.  A node alone in its slot
 * that is due in the advance reaching the cascade point, with nothing
 * earlier left below it, is handed out directly too: a sparse wheel woken
 * for its next far timer does not move it down level by level first.
 *
 * Resumable cascades: with @chunk set, the cascades of one advance move
 * at most @chunk nodes.  A slot whose cascade reaches the limit keeps the
 * rest of its list, its bit and its bound, and @clk and @tc stay on its
 * block start: the clock never passes a node that has not been placed
 * again, so none is late beyond the advances it takes, none early.  The
 * next advance goes on from the slot's list head (a cascade point comes
 * before the level-0 tick it ties with, as always).  Meanwhile an insert
 * never lands in that slot (a key in its block is within a revolution of
 * @clk, so on level 0, and a later key on a later slot), a removal from it
 * is an ordinary unlink, and a move to a later key leaves the node where
 * it is, to be placed by its new key when its turn comes.  Only the
 * bounds change: levels are no longer ordered, since the half-cascaded
 * slot may hold keys below those the nodes placed from it hold on the
 * levels below, so next_lower_bound() takes the first slot of every level
 * (O(levels)) and next_key() looks at every level while @tc == @clk.
 * tw_hier_forward() moves the clock without doing any of this: it stops
 * on the next cascade point, which is the same state with no node moved.
 *
 * Bitmaps: @l0_map has a bit per level-0 slot and @l0_sum a bit per word of
 * it; each upper level has one 64-bit word.  So the next occupied level-0
 * slot is a few word reads (the ring wraps once; one more summary word per
 * 4096 slots beyond 4096), and the next cascade point is the first set bit
 * of the lowest non-empty upper level: O(levels) in all, no list read.  The
 * next cascade point is also kept in @tc, lowered by inserts and recomputed
 * after each cascade; a removal leaves it (still a bound), so a slot
 * emptied by cancels costs one no-op stop, not a scan per tick.  So @tc is
 * at or before the block start of every occupied upper slot, and only an
 * insert that lowers a slot's bound (which an empty slot's always is) can
 * lower it.  The
 * earliest level-0 key is kept in @next0, exact: every level-0 key is in
 * [@clk, @clk + 2^bits), so it is the minimum of the keys placed there,
 * lowered by each placement, and searched for in the bitmaps only when the
 * slot holding it is emptied (handed out, or by its last removal).  A
 * tickless caller, which asks for the next expiry after every advance,
 * then pays one level-0 search per slot handed out instead of two.
 *
 * A removal leaves level 0's bits alone: whether it empties a level-0 slot
 * (@next NULL and @pprev in a level-0 head) is a coin flip when timers
 * land near and far about as often, and a mispredicted branch costs more
 * than the removal.  So a level-0 bit may stay set for a slot a removal
 * emptied; @next0 stays exact, and the search clears each such bit it
 * meets, once, before going on.  Upper slots are still cleared at once
 * (their bits make cascade points and wakeups): that test is one
 * comparison, rarely true where the timers are many.
 *
 * Stores: where the timers outnumber the caches, a start or a cancel
 * waits on cold list neighbours, and its stores to them hold up every
 * younger store behind them in the store buffer, which then limits how
 * many operations overlap.  So an insertion stores only what changes: the
 * bounds (@next0, an upper slot's) when lowered, an upper slot's bits and
 * @tc with its bound (an empty slot's bound is TW_NO_TICK, above every
 * key), and a level-0 summary bit when it is clear.  The tests are
 * branches that predict well at any size; only the level-0 slot bit is
 * stored always, as whether it is set is a coin flip where a slot holds
 * about one timer.
 *
 * Costs
 * -----
 * insert, remove: O(1) (an fls64(), a list link, one or two bits), but a
 * removal that empties the slot of the first level-0 key searches the
 * bitmaps for the next one: a few words up to 4096 slots, beyond that a
 * pass over the summary bitmap, one word per 4096 slots, plus O(1) per
 * bit of an emptied slot it clears on its way (each left by one earlier
 * removal); move later on an upper level: O(1), one write to the node.
 * Neither branches on whether a list was or becomes empty.
 * advance: per handed-out node O(1); per cascade point O(levels) plus
 * O(1) per moved node, at most @chunk moves per call when it is set;
 * empty stretches are skipped from the bitmaps.  forward: O(1).  A
 * tickless caller's advance to just past the first level-0 key, with no
 * cascade point before it, takes that slot's list as it is, not node by
 * node; tw_hier_advance_loose() does not even count it, leaving that (and
 * the cap) to a caller that reads each node anyway, so that a slot of cold
 * nodes is read once, not twice (its list is a chain of dependent loads).
 * next_lower_bound(): O(levels): the earlier of the first level-0 key
 * (exact) and the key bound of the first occupied upper slot (lowered by
 * inserts, left by removals and by moves to a later key in place, as
 * wheel.c's slot bounds), so a far timer
 * wakes its caller once, when it is due, and its cascades are done by that
 * same advance.
 * next_key(): as next_lower_bound, plus one walk of the first occupied
 * upper slot when it can hold a key below level 0's first, and of the
 * following ones while moved keys past their blocks leave them in reach.
 *
 * Guarantees
 * ----------
 * Never early: a node is handed out only with key < @upto.  Exactly once:
 * a node is on one list at a time, and is handed out once.  Nothing late
 * because of a cascade: a node's cascade point is at or before its key,
 * and the advance processes cascade points and level-0 ticks in tick
 * order, so a node is handed out by the first advance whose @upto passes
 * its key, in key order (not only within a revolution).  The cap: when
 * @max nodes have been handed out the walk stops inside the current
 * level-0 slot with @clk at its tick; due nodes left by a capped cascade
 * are put on that tick's level-0 slot and come out first next time.
 * Cascade points and level-0 ticks are processed in tick order (a cascade
 * first on a tie), which is what keeps every key handed out in order.
 *
 * This file does no locking, reads no clock and allocates nothing.
 */
#include <linux/bitops.h>
#include <linux/bitmap.h>
#include <linux/kernel.h>
#include <linux/list.h>

#include "hier.h"
#include "wheel.h"

static inline unsigned int tw_hier_shift(const struct tw_hier *h,
					 unsigned int level)
{
	return h->bits + (level - 1) * TW_HIER_LVL_BITS;
}

static inline u64 tw_hier_mask0(const struct tw_hier *h)
{
	return h->mask0;
}

static inline unsigned int tw_ffs64(u64 x)
{
	return fls64(x & -x) - 1;
}

static inline unsigned long tw_hier_l0_words(const struct tw_hier *h)
{
	return BITS_TO_LONGS(1UL << h->bits);
}

/**
 * tw_hier_mem_size() - bytes of memory tw_hier_init() needs
 * @bits: log2 of the level-0 slot count
 *
 * Return: the size of the block to pass to tw_hier_init().
 */
size_t tw_hier_mem_size(unsigned int bits)
{
	unsigned long words = BITS_TO_LONGS(1UL << bits);

	return (sizeof(struct hlist_head) << bits) +
	       words * sizeof(unsigned long) +
	       BITS_TO_LONGS(words) * sizeof(unsigned long) +
	       TW_HIER_MAX_UP * TW_HIER_LVL_SIZE *
	       (sizeof(struct hlist_head) + sizeof(u64));
}

/**
 * tw_hier_init() - initialise an empty hierarchical wheel
 * @h:    the engine
 * @mem:  tw_hier_mem_size(@bits) bytes, pointer-aligned, owned by the caller
 * @bits: log2 of the level-0 slot count
 * @clk:  the first tick to process
 */
void tw_hier_init(struct tw_hier *h, void *mem, unsigned int bits, u64 clk)
{
	unsigned long i, words = BITS_TO_LONGS(1UL << bits);

	h->clk = clk;
	h->count = 0;
	h->bits = bits;
	h->mask0 = BIT_ULL(bits) - 1;
	h->levels = DIV_ROUND_UP(64 - bits, TW_HIER_LVL_BITS);
	for (i = 0; i < ARRAY_SIZE(h->up_of); i++) {
		unsigned int lvl = i < bits ? 0 : (i - bits) / TW_HIER_LVL_BITS;

		h->up_of[i].lvl = lvl;
		h->up_of[i].sh = bits + lvl * TW_HIER_LVL_BITS;
	}
	h->max_slot = 0;
	h->moves = 0;
	h->chunk = 0;
	h->l0 = mem;
	h->up = h->l0 + (1UL << bits);
	h->up_low = (u64 *)(h->up + TW_HIER_MAX_UP * TW_HIER_LVL_SIZE);
	h->l0_map = (unsigned long *)(h->up_low + TW_HIER_MAX_UP * TW_HIER_LVL_SIZE);
	h->l0_sum = h->l0_map + words;
	for (i = 0; i < (1UL << bits); i++)
		INIT_HLIST_HEAD(&h->l0[i]);
	for (i = 0; i < TW_HIER_MAX_UP * TW_HIER_LVL_SIZE; i++) {
		INIT_HLIST_HEAD(&h->up[i]);
		h->up_low[i] = TW_NO_TICK;
	}
	bitmap_zero(h->l0_map, 1UL << bits);
	bitmap_zero(h->l0_sum, words);
	for (i = 0; i < TW_HIER_MAX_UP; i++)
		h->up_map[i] = 0;
	h->up_levels = 0;
	h->tc = TW_NO_TICK;
	h->next0 = TW_NO_TICK;
}

/*
 * hlist_add_head() and hlist_del_init() without their branch on a
 * neighbour: whether a level-0 slot (or a slot a cascade fills) is empty,
 * or a removed node the last of its list, is a coin flip when timers land
 * on level 0 or on a few crowded upper slots about as often, or about one
 * per slot.  The write that has no neighbour to go to goes to @n's own
 * pprev, which is written again after it (a lockless
 * hlist_unhashed_lockless() of @n reads non-NULL in between, as it does
 * once @n is linked, or until it is unlinked).  An upper slot an insertion
 * goes to is rarely empty where that matters, and keeps the branch.
 */
static __always_inline void tw_hier_add_head(struct hlist_node *n,
					     struct hlist_head *head)
{
	struct hlist_node *first = head->first;

	WRITE_ONCE(n->next, first);
	WRITE_ONCE(*(first ? &first->pprev : &n->pprev), &n->next);
	WRITE_ONCE(head->first, n);
	WRITE_ONCE(n->pprev, &head->first);
}

static __always_inline void tw_hier_del_init(struct hlist_node *n)
{
	struct hlist_node *next = n->next, **pprev = n->pprev;

	WRITE_ONCE(*pprev, next);
	WRITE_ONCE(*(next ? &next->pprev : &n->pprev), pprev);
	INIT_HLIST_NODE(n);
}

/* Link @node on level-0 slot @s, leaving @next0 to the caller. */
static __always_inline void tw_hier_link_l0(struct tw_hier *h,
					    struct twheel_node *node,
					    unsigned long s)
{
	tw_hier_add_head(&node->entry, &h->l0[s]);
	__set_bit(s, h->l0_map);
	if (!test_bit(s / BITS_PER_LONG, h->l0_sum))
		__set_bit(s / BITS_PER_LONG, h->l0_sum);
}

/*
 * Link @node with key @key >= @clk (passed as @clk) on the level and slot
 * its key calls for.  @key and @clk come in registers: the compiler would
 * reload @node->key and @h->clk after every store through a pointer.  The
 * level and its shift come from @up_of by the highest differing bit (no
 * division by 6), and a slot's block start lowers @tc only when the slot's
 * bound is lowered: a slot with a bound at or below @key is occupied, and
 * @tc is already at or before its block start (see "Bitmaps" above).
 */
static __always_inline void __tw_hier_place(struct tw_hier *h,
					    struct twheel_node *node, u64 key,
					    u64 clk)
{
	unsigned int f, lvl, sh, s, idx;
	u64 start;

	if (key - clk <= h->mask0) {
		tw_hier_link_l0(h, node, key & h->mask0);
		if (key < h->next0)
			h->next0 = key;
		return;
	}
	/* key != clk: one bsr, no test for zero */
	f = __fls(key ^ clk);
	lvl = h->up_of[f].lvl;
	sh = h->up_of[f].sh;
	s = (key >> sh) & (TW_HIER_LVL_SIZE - 1);
	idx = lvl * TW_HIER_LVL_SIZE + s;
	hlist_add_head(&node->entry, &h->up[idx]);
	/* only a lowered bound can mean an empty slot: see "Stores" above */
	if (key < h->up_low[idx]) {
		h->up_low[idx] = key;
		h->up_map[lvl] |= BIT_ULL(s);
		h->up_levels |= BIT(lvl);
		/* the slot's block start: the key with the bits below S(L) cleared */
		start = key >> sh << sh;
		if (start < h->tc)
			h->tc = start;
	}
}

/* __tw_hier_place() for the cascades; an insertion has its own copy. */
static noinline void tw_hier_place(struct tw_hier *h, struct twheel_node *node)
{
	__tw_hier_place(h, node, node->key, h->clk);
}

/**
 * tw_hier_insert() - add a node that is not linked anywhere
 * @h:    the engine
 * @node: the node, unlinked
 * @key:  the tick at whose end it fires; keys before the clock are moved up
 *        to it, so they fire at the next advance
 */
void tw_hier_insert(struct tw_hier *h, struct twheel_node *node, u64 key)
{
	u64 clk = h->clk;

	key = max(key, clk);
	node->key = key;
	__tw_hier_place(h, node, key, clk);
	h->count++;
}

static void tw_hier_up_clear(struct tw_hier *h, unsigned int level,
			     unsigned int s)
{
	h->up_map[level - 1] &= ~BIT_ULL(s);
	h->up_low[tw_hier_up_idx(level, s)] = TW_NO_TICK;
	if (!h->up_map[level - 1])
		h->up_levels &= ~BIT(level - 1);
}

/* Level-0 slot @s is empty: clear its bit, and its word's if that is 0. */
static __always_inline void tw_hier_l0_clear(struct tw_hier *h,
					     unsigned long s)
{
	__clear_bit(s, h->l0_map);
	if (!h->l0_map[s / BITS_PER_LONG])
		__clear_bit(s / BITS_PER_LONG, h->l0_sum);
}

/*
 * The list head whose first node @pprev belongs to, as a level (0 or the
 * upper level) and a slot; false if @pprev is in a node, not a head.
 */
static bool tw_hier_head_of(const struct tw_hier *h,
			    struct hlist_node *const *pprev,
			    unsigned int *level, unsigned int *slot)
{
	unsigned long off = (unsigned long)pprev - (unsigned long)h->l0;

	if (off < sizeof(struct hlist_head) << h->bits) {
		*level = 0;
		*slot = off / sizeof(struct hlist_head);
		return true;
	}
	off = (unsigned long)pprev - (unsigned long)h->up;
	if (off < sizeof(struct hlist_head) * TW_HIER_MAX_UP * TW_HIER_LVL_SIZE) {
		off /= sizeof(struct hlist_head);
		*level = 1 + off / TW_HIER_LVL_SIZE;
		*slot = off % TW_HIER_LVL_SIZE;
		return true;
	}
	return false;
}

/**
 * tw_hier_node_level() - the level a linked node is on (for tests)
 * @h:    the engine
 * @node: a node linked on @h
 *
 * Walks back along the node's list to its head: O(position in the list).
 *
 * Return: 0 for level 0, else the upper level.
 */
int tw_hier_node_level(const struct tw_hier *h, const struct twheel_node *node)
{
	const struct hlist_node *n = &node->entry;
	unsigned int level, slot;

	while (!tw_hier_head_of(h, n->pprev, &level, &slot))
		n = container_of(n->pprev, struct hlist_node, next);
	return level;
}

/*
 * The first occupied level-0 slot at or after @s, or the slot count, for
 * a level 0 of more than one summary word.
 */
static unsigned long tw_hier_l0_find(const struct tw_hier *h, unsigned long s)
{
	unsigned long words = tw_hier_l0_words(h), w = s / BITS_PER_LONG, word;

	word = h->l0_map[w] & (~0UL << (s % BITS_PER_LONG));
	if (!word) {
		w = find_next_bit(h->l0_sum, words, w + 1);
		if (w >= words)
			return 1UL << h->bits;
		word = h->l0_map[w];
	}
	return w * BITS_PER_LONG + __ffs(word);
}

/* The tick of level-0 slot @t: less than a revolution from @clk. */
static __always_inline u64 tw_hier_l0_tick(const struct tw_hier *h,
					   unsigned long t)
{
	return h->clk + ((t - h->clk) & tw_hier_mask0(h));
}

/*
 * tw_hier_search_l0() for a level 0 of more than one summary word: each
 * empty slot whose bit a removal left is cleared, and the search goes on
 * after it.
 */
static noinline u64 tw_hier_search_l0_wide(struct tw_hier *h)
{
	unsigned long size = 1UL << h->bits, s = h->clk & (size - 1), from = s;
	bool wrapped = false;
	unsigned long t;

	for (;;) {
		t = from < size ? tw_hier_l0_find(h, from) : size;
		if (t >= size) {
			if (wrapped || !s)
				return TW_NO_TICK;
			wrapped = true;
			from = 0;
			continue;
		}
		if (wrapped && t >= s)
			return TW_NO_TICK;
		if (!hlist_empty(&h->l0[t]))
			return tw_hier_l0_tick(h, t);
		tw_hier_l0_clear(h, t);
		from = t + 1;
	}
}

/*
 * The first level-0 slot whose bit is set at or after @clk's, in ring
 * order, in @t, for a level 0 of one summary word (up to 4096 slots on
 * 64-bit): @clk's word from @clk's slot on, else the first non-empty word
 * after it, else the first one of the ring's wrap (@clk's own word then
 * holds only slots below @clk's).  False if no bit is set.
 */
static __always_inline bool tw_hier_l0_first(const struct tw_hier *h,
					     unsigned long *t)
{
	unsigned long s = h->clk & tw_hier_mask0(h);
	unsigned long w = s / BITS_PER_LONG, word, sum, later;

	word = h->l0_map[w] & (~0UL << (s % BITS_PER_LONG));
	if (!word) {
		sum = h->l0_sum[0];
		later = sum & (~1UL << w);
		if (later)
			sum = later;
		if (!sum)
			return false;
		w = __ffs(sum);
		word = h->l0_map[w];
	}
	*t = w * BITS_PER_LONG + __ffs(word);
	return true;
}

/*
 * tw_hier_search_l0() past slot @t, whose bit a removal left set: clear
 * it and each such bit after it.
 */
static noinline u64 tw_hier_search_l0_stale(struct tw_hier *h,
					    unsigned long t)
{
	do {
		tw_hier_l0_clear(h, t);
		if (!tw_hier_l0_first(h, &t))
			return TW_NO_TICK;
	} while (hlist_empty(&h->l0[t]));
	return tw_hier_l0_tick(h, t);
}

/*
 * The first occupied level-0 tick at or after @clk, in ring order (level 0
 * holds less than a revolution from @clk), or TW_NO_TICK: what @next0 is
 * set to when the slot it named is emptied.  A removal leaves the bit of
 * the slot it empties set (see tw_hier_remove()): the search clears each
 * such bit it meets, once.
 */
static u64 tw_hier_search_l0(struct tw_hier *h)
{
	unsigned long t;

	/* out of line: its calls would give the common path a stack frame */
	if (tw_hier_l0_words(h) > BITS_PER_LONG)
		return tw_hier_search_l0_wide(h);
	if (!tw_hier_l0_first(h, &t))
		return TW_NO_TICK;
	if (unlikely(hlist_empty(&h->l0[t])))
		return tw_hier_search_l0_stale(h, t);
	return tw_hier_l0_tick(h, t);
}

/*
 * A node with key @next0 was removed: if it was the last on level 0's
 * slot of that tick, search for the next.  Out of line, so that the
 * common removal needs no stack frame for the search.
 */
static noinline void tw_hier_next0_removed(struct tw_hier *h)
{
	if (hlist_empty(&h->l0[h->next0 & tw_hier_mask0(h)]))
		h->next0 = tw_hier_search_l0(h);
}

/**
 * tw_hier_remove() - unlink a node that is on one of @h's levels
 * @h:    the engine
 * @node: the node
 */
void tw_hier_remove(struct tw_hier *h, struct twheel_node *node)
{
	unsigned long next = (unsigned long)node->entry.next;
	unsigned long up = (unsigned long)node->entry.pprev -
			   (unsigned long)h->up;

	tw_hier_del_init(&node->entry);
	h->count--;
	/*
	 * An upper slot is emptied by its last node when that is also the
	 * first: @next is NULL and @pprev is in a list head.  A node's
	 * address is never below the size of the heads, so that is one
	 * comparison.
	 */
	if (unlikely((up | next) < sizeof(struct hlist_head) *
				   TW_HIER_MAX_UP * TW_HIER_LVL_SIZE)) {
		up /= sizeof(struct hlist_head);
		tw_hier_up_clear(h, 1 + up / TW_HIER_LVL_SIZE,
				 up % TW_HIER_LVL_SIZE);
		return;
	}
	/*
	 * A level-0 slot's bit stays set when its last node goes (whether
	 * it went is as unpredictable as whether the timer was near): only
	 * @next0 must be exact, and the search skips and clears such bits.
	 */
	if (unlikely(node->key == h->next0))
		tw_hier_next0_removed(h);
}

/**
 * tw_hier_move() - give a linked node a new key
 * @h:    the engine
 * @node: a node linked on one of @h's levels
 * @key:  its new key; a key before the clock is moved up to it
 *
 * The same as tw_hier_remove() then tw_hier_insert(), but a node on an
 * upper level whose key goes up stays where it is with its new key: the
 * slot's cascade point is at or before its old key, so the cascade that
 * empties the slot places it again by its new key before it can be due.
 * Only the node is written; its list neighbours, which a removal writes
 * and which are cold in a large wheel, are not touched.  An idle timeout
 * pushed out on every activity then costs one cache line per re-arm.
 */
void tw_hier_move(struct tw_hier *h, struct twheel_node *node, u64 key)
{
	key = max(key, h->clk);
	/* a key a revolution or more ahead is never on level 0 */
	if (key >= node->key && (node->key - h->clk) >> h->bits) {
		node->key = key;
		return;
	}
	tw_hier_remove(h, node);
	tw_hier_insert(h, node, key);
}

/*
 * The first tick of slot @slot of upper level @level: @clk's block of
 * 2^S(@level + 1) ticks (the whole range on the top level) holds the
 * level's 64 slots.
 */
static u64 tw_hier_slot_start(const struct tw_hier *h, unsigned int level,
			      unsigned int slot)
{
	unsigned int sh = tw_hier_shift(h, level);
	u64 base = 0;

	if (sh + TW_HIER_LVL_BITS < 64)
		base = h->clk >> (sh + TW_HIER_LVL_BITS) << (sh + TW_HIER_LVL_BITS);
	return base | ((u64)slot << sh);
}

/*
 * The lowest non-empty upper level (levels are ordered), 0 if none; its
 * first occupied slot in @slot and that slot's block start in @start.
 */
static unsigned int tw_hier_first_up(const struct tw_hier *h,
				     unsigned int *slot, u64 *start)
{
	unsigned int level;

	if (!h->up_levels)
		return 0;
	level = __ffs(h->up_levels) + 1;
	*slot = tw_ffs64(h->up_map[level - 1]);
	*start = tw_hier_slot_start(h, level, *slot);
	return level;
}

static u64 tw_hier_next_cascade(const struct tw_hier *h)
{
	unsigned int slot;
	u64 start;

	if (!tw_hier_first_up(h, &slot, &start))
		return TW_NO_TICK;
	return start;
}

/*
 * An advance's output: @n nodes handed out so far onto @expired, the last
 * of them @last; @left, how many more nodes its cascades may move (set by
 * tw_hier_walk() from the engine's @chunk).
 */
struct tw_hier_out {
	struct hlist_head *expired;
	struct hlist_node *last;
	unsigned int n;
	unsigned long left;
};

/* The most nodes one advance's cascades may move: @chunk, 0 for no limit. */
static inline unsigned long tw_hier_cap(const struct tw_hier *h)
{
	return h->chunk ? h->chunk : ULONG_MAX;
}

static void tw_hier_hand_out(struct tw_hier *h, struct tw_hier_out *o,
			     struct twheel_node *node)
{
	if (o->last)
		hlist_add_behind(&node->entry, o->last);
	else
		hlist_add_head(&node->entry, o->expired);
	o->last = &node->entry;
	h->count--;
	o->n++;
}

/*
 * Whether @node, alone in the level-@level slot being cascaded, can be
 * handed out at once instead of being placed lower: it is due before
 * @upto, the cap allows one more, and nothing left on the wheel comes
 * before it.  The levels below hold only what this cascade pass placed
 * there (they were emptied when @clk entered their current blocks), all
 * of it later than @node's slot unless it went to level 0; the other
 * slots hold later blocks, which is enough only if @node's key is still
 * in its slot's block (tw_hier_move() may have put it past).  So that,
 * level 0's first key and an empty set of levels below decide it.
 */
static bool tw_hier_lone_due(const struct tw_hier *h,
			     const struct twheel_node *node, unsigned int level,
			     u64 upto, unsigned int max,
			     const struct tw_hier_out *o)
{
	return !node->entry.next && node->key < upto &&
	       !((node->key - h->clk) >> tw_hier_shift(h, level)) &&
	       (!max || o->n < max) &&
	       !(h->up_levels & (BIT(level - 1) - 1)) &&
	       node->key < h->next0;
}

/*
 * Whether a node being cascaded, its key @key, is due at @clk (which is
 * before @upto: @due) and the cap allows one more.
 */
static __always_inline bool tw_hier_due_now(u64 key, u64 clk, bool due,
					    unsigned int max,
					    const struct tw_hier_out *o)
{
	return key == clk && due && (!max || o->n < max);
}

/*
 * Cascade the nodes of @list, a level-1 slot whose block starts at @clk:
 * the block is one revolution, so each node is due now or goes to level 0.
 * Stops before the first node that would be moved past the moves @o has
 * left, and returns it (NULL when all went).  Counts the moves and the
 * longest list.
 */
static struct hlist_node *tw_hier_cascade_l1(struct tw_hier *h,
					     struct hlist_head *list, u64 upto,
					     unsigned int max,
					     struct tw_hier_out *o)
{
	u64 clk = h->clk, mask = tw_hier_mask0(h), next0 = h->next0;
	unsigned long left = o->left, len = 0;
	struct hlist_node *rest = NULL;
	bool due = clk < upto;
	struct twheel_node *node;
	struct hlist_node *tmp;

	/* each node is linked anew: no need to unlink it from @list */
	hlist_for_each_entry_safe(node, tmp, list, entry) {
		if (unlikely(!left)) {
			rest = &node->entry;
			break;
		}
		len++;
		if (tw_hier_due_now(node->key, clk, due, max, o)) {
			tw_hier_hand_out(h, o, node);
			continue;
		}
		left--;
		if (unlikely((node->key - clk) >> h->bits)) {
			/* moved later by tw_hier_move(): not level 0's */
			tw_hier_place(h, node);
		} else {
			tw_hier_link_l0(h, node, node->key & mask);
			next0 = min(next0, node->key);
		}
	}
	h->moves += o->left - left;
	o->left = left;
	h->next0 = next0;
	if (len > h->max_slot)
		h->max_slot = len;
	return rest;
}

/*
 * Cascade the nodes of @list, a slot of level @level >= 2 whose block
 * starts at @clk.  A node whose bits of level @level - 1's slot index are
 * not zero (slot 0 is @clk's own) goes to that slot: nearly all of them,
 * with no fls64() and no cascade point to lower each (the caller
 * recomputes @tc), the level's map updated once.  The others belong lower
 * and are placed one by one, or handed out if due now.  Stops when @o has
 * no moves left and returns as tw_hier_cascade_l1().
 */
static struct hlist_node *tw_hier_cascade_up(struct tw_hier *h,
					     struct hlist_head *list,
					     unsigned int level, u64 upto,
					     unsigned int max,
					     struct tw_hier_out *o)
{
	unsigned int sh = tw_hier_shift(h, level - 1);
	unsigned int block = sh + TW_HIER_LVL_BITS;
	struct hlist_head *up = &h->up[tw_hier_up_idx(level - 1, 0)];
	u64 *low = &h->up_low[tw_hier_up_idx(level - 1, 0)];
	unsigned long left = o->left, len = 0;
	struct hlist_node *rest = NULL;
	u64 clk = h->clk, map = 0;
	bool due = clk < upto;
	struct twheel_node *node;
	struct hlist_node *tmp;

	/* each node is linked anew: no need to unlink it from @list */
	hlist_for_each_entry_safe(node, tmp, list, entry) {
		unsigned int s = (node->key >> sh) & (TW_HIER_LVL_SIZE - 1);

		if (unlikely(!left)) {
			rest = &node->entry;
			break;
		}
		len++;
		/* a key moved past the block by tw_hier_move() is placed anew */
		if (s && !((node->key - clk) >> block)) {
			tw_hier_add_head(&node->entry, &up[s]);
			low[s] = min(low[s], node->key);
			map |= BIT_ULL(s);
		} else if (tw_hier_due_now(node->key, clk, due, max, o)) {
			tw_hier_hand_out(h, o, node);
			continue;
		} else {
			tw_hier_place(h, node);
		}
		left--;
	}
	h->moves += o->left - left;
	o->left = left;
	if (map) {
		h->up_map[level - 2] |= map;
		h->up_levels |= BIT(level - 2);
	}
	if (len > h->max_slot)
		h->max_slot = len;
	return rest;
}

/*
 * @clk has reached the start of the block of every upper slot at its
 * current position: place their nodes again, top level first.  A node whose
 * key is @clk and is due is handed out directly unless the cap is reached,
 * and so is a due node alone in its slot that nothing else precedes (see
 * tw_hier_lone_due()): a sparse wheel woken for its next timer hands it
 * out without moving it down level by level.
 *
 * At most @chunk nodes are moved: a slot is then left half done, the
 * rest of its list in place with its bit and bound, @clk and @tc on its
 * block start, and the next advance goes on from there (see "Resumable
 * cascades" above).  Returns false in that case, true when every slot at
 * @clk is done.
 */
static noinline bool tw_hier_cascade(struct tw_hier *h, u64 upto,
				     unsigned int max, struct tw_hier_out *o)
{
	unsigned long todo = h->up_levels;

	/*
	 * Top level first, over the levels non-empty now: the nodes placed
	 * below go to slots after the clock's, never to one cascaded here.
	 */
	while (todo) {
		unsigned int level = __fls(todo) + 1;
		unsigned int s = (h->clk >> tw_hier_shift(h, level)) &
				 (TW_HIER_LVL_SIZE - 1);
		unsigned int idx = tw_hier_up_idx(level, s);
		struct hlist_node *rest;
		struct twheel_node *node;
		struct hlist_head list;

		todo &= ~BIT(level - 1);
		if (!(h->up_map[level - 1] & BIT_ULL(s)))
			continue;
		/*
		 * Nothing is placed on this slot meanwhile (its block is the
		 * clock's): its bit and bound stay until it is done.
		 */
		hlist_move_list(&h->up[idx], &list);
		node = hlist_entry(list.first, struct twheel_node, entry);
		if (tw_hier_lone_due(h, node, level, upto, max, o)) {
			tw_hier_up_clear(h, level, s);
			tw_hier_hand_out(h, o, node);
			continue;
		}
		if (level == 1)
			rest = tw_hier_cascade_l1(h, &list, upto, max, o);
		else
			rest = tw_hier_cascade_up(h, &list, level, upto, max, o);
		if (unlikely(rest)) {
			/* out of moves: the rest stays, under the slot's bound */
			h->up[idx].first = rest;
			rest->pprev = &h->up[idx].first;
			return false;
		}
		tw_hier_up_clear(h, level, s);
	}
	h->tc = tw_hier_next_cascade(h);
	return true;
}

/*
 * Level-0 slot @s, holding @t0's nodes, has been handed out (@len of them):
 * empty it and move @clk past it.
 */
static __always_inline void tw_hier_l0_done(struct tw_hier *h,
					    unsigned long s, u64 t0,
					    unsigned long len)
{
	INIT_HLIST_HEAD(&h->l0[s]);
	tw_hier_l0_clear(h, s);
	if (len > h->max_slot)
		h->max_slot = len;
	h->clk = t0 + 1;
	h->next0 = tw_hier_search_l0(h);
}

/*
 * The walk of tw_hier_advance(), from @clk to @upto, handing out to @o
 * (which may already hold nodes): cascade points and level-0 ticks in
 * tick order.
 */
static noinline unsigned int tw_hier_walk(struct tw_hier *h, u64 upto,
					  unsigned int max,
					  struct tw_hier_out *o)
{
	o->left = tw_hier_cap(h);
	for (;;) {
		u64 tc = h->tc, t0;

		/* (A cascade point is never TW_NO_TICK: it is even.) */
		if (tc == h->clk && tc != TW_NO_TICK) {
			if (!tw_hier_cascade(h, upto, max, o))
				return o->n;
			continue;
		}
		if (h->clk >= upto)
			break;
		t0 = h->next0;
		if (t0 < tc && t0 < upto) {
			unsigned long s = t0 & tw_hier_mask0(h), len = 0;
			struct twheel_node *node;
			struct hlist_node *tmp;

			/* nodes are relinked as they go, the slot emptied after */
			hlist_for_each_entry_safe(node, tmp, &h->l0[s], entry) {
				if (max && o->n == max) {
					h->l0[s].first = &node->entry;
					node->entry.pprev = &h->l0[s].first;
					h->clk = t0;
					return o->n;
				}
				len++;
				tw_hier_hand_out(h, o, node);
			}
			tw_hier_l0_done(h, s, t0, len);
			continue;
		}
		h->clk = min(tc, upto);
	}
	/* The last tick is never over: every key stays below TW_NO_TICK. */
	if (unlikely(h->clk == TW_NO_TICK))
		h->clk = TW_NO_TICK - 1;
	return o->n;
}

/*
 * Put @rest, the tail of a level-0 slot's list that a loose advance handed
 * out whole, back on its slot (now empty) to come out first: its nodes all
 * have one key, and every other key is later.  Ends the caller's list
 * before @rest.
 */
static void tw_hier_put_back(struct tw_hier *h, struct hlist_node *rest)
{
	u64 key = hlist_entry(rest, struct twheel_node, entry)->key;
	unsigned long s = key & tw_hier_mask0(h);

	*rest->pprev = NULL;
	h->l0[s].first = rest;
	rest->pprev = &h->l0[s].first;
	__set_bit(s, h->l0_map);
	__set_bit(s / BITS_PER_LONG, h->l0_sum);
	h->next0 = key;
	h->clk = key;
}

/**
 * tw_hier_settle() - account for a level-0 slot handed out whole
 * @h:     the engine
 * @taken: how many nodes the caller took, from the front of the list
 * @rest:  the first node it did not take, or NULL if it took them all
 *
 * Completes a tw_hier_advance_loose() that returned TW_UNCOUNTED, before
 * any other call on @h: the nodes taken leave the count, and @rest and the
 * nodes after it go back on their slot, due first, with @clk on their tick.
 */
void tw_hier_settle(struct tw_hier *h, unsigned int taken,
		    struct hlist_node *rest)
{
	h->count -= taken;
	if (taken > h->max_slot)
		h->max_slot = taken;
	if (rest)
		tw_hier_put_back(h, rest);
}

/*
 * Count the slot a loose advance put on @expired as a counted advance
 * hands it out: the first @max nodes (0: all) stay, the rest go back.
 * Counting no further than @max keeps a burst of 10^5 timers from being
 * read whole in every pass of @max.  Returns the count, and the last node
 * kept in @last.
 */
static unsigned int tw_hier_count_out(struct tw_hier *h, unsigned int max,
				      struct hlist_head *expired,
				      struct hlist_node **last)
{
	unsigned long lim = max ? max : ULONG_MAX, len = 0;
	struct hlist_node *n;

	*last = NULL;
	for (n = expired->first; n && len < lim; n = n->next) {
		*last = n;
		len++;
	}
	tw_hier_settle(h, len, n);
	return len;
}

/**
 * tw_hier_advance_loose() - tw_hier_advance(), but a due slot goes unread
 * @h:       the engine
 * @upto:    first tick that is not over yet
 * @max:     most nodes to hand out (the execution cap); 0 means no cap
 * @expired: list receiving the due nodes, unlinked from the engine,
 *           appended in key order
 *
 * A tickless caller woken for the first level-0 key, with nothing else due
 * before @upto (no later level-0 key, no cascade point) and @expired
 * empty: that slot holds exactly the due nodes, all with one key, and its
 * list becomes @expired as it is, without reading it, whatever @max.  A
 * caller that reads the nodes anyway counts them there, applies its cap
 * and tells tw_hier_settle(); counting them here first would read every
 * node twice, the first time from memory (one miss after another, as the
 * list is a chain of pointers).  Otherwise as tw_hier_advance().
 *
 * Return: as tw_hier_advance(), or TW_UNCOUNTED for a slot handed out
 * whole: @clk is then @upto, the count still includes the slot's nodes,
 * and tw_hier_settle() must follow.
 */
unsigned int tw_hier_advance_loose(struct tw_hier *h, u64 upto,
				   unsigned int max,
				   struct hlist_head *expired)
{
	struct tw_hier_out o = { .expired = expired };
	u64 t0 = h->next0;

	/* One tick with nothing due and no cascade point: the common tick. */
	if (upto == h->clk + 1 && h->tc > upto && t0 != h->clk) {
		h->clk = upto;
		return 0;
	}
	if (t0 < upto && t0 < h->tc && hlist_empty(expired)) {
		unsigned long s = t0 & tw_hier_mask0(h);

		hlist_move_list(&h->l0[s], expired);
		tw_hier_l0_clear(h, s);
		h->clk = t0 + 1;
		h->next0 = tw_hier_search_l0(h);
		if (h->next0 >= upto && h->tc > upto) {
			h->clk = upto;
			return TW_UNCOUNTED;
		}
		/*
		 * More is due: count this slot and walk on, unless the cap cut
		 * it (the rest went back, @clk is on @t0 again).  A cap met at
		 * the slot's end leaves the walk to do the cascade at @clk.
		 */
		o.n = tw_hier_count_out(h, max, expired, &o.last);
		if (h->clk == t0)
			return o.n;
		return tw_hier_walk(h, upto, max, &o);
	}
	if (!hlist_empty(expired))
		for (o.last = expired->first; o.last->next; o.last = o.last->next)
			;
	return tw_hier_walk(h, upto, max, &o);
}

/**
 * tw_hier_advance() - process the ticks before @upto
 * @h:       the engine
 * @upto:    first tick that is not over yet
 * @max:     most nodes to hand out (the execution cap); 0 means no cap
 * @expired: list receiving the due nodes, unlinked from the engine,
 *           appended in key order
 *
 * Return: the number of nodes moved to @expired.  If it is @max, due nodes
 * may remain: @h->clk is then below @upto and the next advance returns
 * them first.
 */
unsigned int tw_hier_advance(struct tw_hier *h, u64 upto, unsigned int max,
			     struct hlist_head *expired)
{
	unsigned int n = tw_hier_advance_loose(h, upto, max, expired);
	struct hlist_node *last;

	if (n == TW_UNCOUNTED)
		n = tw_hier_count_out(h, max, expired, &last);
	return n;
}

/*
 * tw_hier_next_lower_bound() at a cascade point not done yet (or cut
 * short by the cap): the slot at @clk's position on a level may hold
 * keys below those of every lower level, so the first slot of each level
 * counts, not only the lowest level's.  O(levels).
 */
static noinline u64 tw_hier_pending_bound(const struct tw_hier *h)
{
	unsigned long levels = h->up_levels;
	u64 best = h->next0;

	while (levels) {
		unsigned int level = __ffs(levels) + 1;
		unsigned int slot = tw_ffs64(h->up_map[level - 1]);

		levels &= levels - 1;
		best = min(best, h->up_low[tw_hier_up_idx(level, slot)]);
	}
	return best;
}

/**
 * tw_hier_forward() - move the clock on, doing no work
 * @h:  the engine
 * @to: a tick <= tw_hier_next_lower_bound(): no key is below it
 *
 * Moves @clk to @to, or to the next cascade point if that comes first and
 * leaves that cascade to the next advance, so that a caller arming timers
 * after a long sleep places them from the present.  O(1): no list is
 * read, no node moved or handed out.
 */
void tw_hier_forward(struct tw_hier *h, u64 to)
{
	if (to > h->clk)
		h->clk = min(min(to, h->tc), TW_NO_TICK - 1);
}

/**
 * tw_hier_next_lower_bound() - a tick no later than the earliest key
 * @h: the engine
 *
 * O(levels), from the bitmaps and slot bounds only: the earlier of the
 * first level-0 tick (exact) and the key bound of the first occupied
 * upper slot (exact unless a node was removed from that slot or moved
 * later in place): its own
 * cascades are done by the advance that hands it out, so a far timer
 * costs one wakeup, not one per level.  O(1) when the first level-0 key
 * comes before the cached cascade point, which no upper key precedes.
 *
 * Return: a tick <= every key, >= @clk, or TW_NO_TICK if @h is empty.
 */
u64 tw_hier_next_lower_bound(const struct tw_hier *h)
{
	unsigned int level, slot;
	u64 t0, start;

	if (!h->count)
		return TW_NO_TICK;
	t0 = h->next0;
	if (t0 < h->tc)
		return t0;
	if (unlikely(h->tc == h->clk))
		return tw_hier_pending_bound(h);
	level = tw_hier_first_up(h, &slot, &start);
	if (!level)
		return t0;
	return min(t0, h->up_low[tw_hier_up_idx(level, slot)]);
}

/**
 * tw_hier_next_key() - the earliest key, searching no further than @bound
 * @h:     the engine
 * @bound: the last tick of interest
 *
 * Walks the occupied upper slots in order while one can hold a key below
 * the best found: one slot at most unless tw_hier_move() left keys past
 * their slot's block.
 *
 * Return: the smallest key if it is <= @bound, else TW_NO_TICK.
 */
u64 tw_hier_next_key(const struct tw_hier *h, u64 bound)
{
	unsigned long levels = h->up_levels;
	struct twheel_node *node;
	u64 best;

	if (!h->count)
		return TW_NO_TICK;
	best = h->next0;
	/* upper keys are >= their slot's block start and bound */
	while (levels) {
		unsigned int level = __ffs(levels) + 1;
		u64 map = h->up_map[level - 1], start;

		levels &= levels - 1;
		for (; map; map &= map - 1) {
			unsigned int slot = tw_ffs64(map), idx;

			start = tw_hier_slot_start(h, level, slot);
			if (start >= best || start > bound) {
				/* a slot left at @clk on a higher level is earlier */
				if (h->tc != h->clk)
					goto out;
				break;
			}
			idx = tw_hier_up_idx(level, slot);
			if (h->up_low[idx] >= best)
				continue;
			hlist_for_each_entry(node, &h->up[idx], entry)
				best = min(best, node->key);
		}
	}
out:
	return best <= bound ? best : TW_NO_TICK;
}
