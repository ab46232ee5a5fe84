// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for every engine behind src/engine.h (Scheme 6, hierarchical,
 * Timer Lawn), against one reference model: an array of the keys the nodes
 * must carry.  Each case runs once per engine (KUNIT_CASE_PARAM) and
 * checks, after every advance:
 *
 *  - never early: every node handed out has key < @upto;
 *  - exactly once, on time: after an advance that the cap did not stop, no
 *    node with key < @upto is left, and no node is handed out twice or
 *    after it was removed;
 *  - the cap: a capped advance hands out exactly @max, leaves the clock
 *    below @upto, and the next advance returns the rest first;
 *  - next_key(bound) is the model's minimum (if <= bound) and
 *    next_lower_bound() lies between the clock and that minimum.
 *
 * Plus cases for the hierarchical engine's cascades: across every level
 * boundary, at 2^32 and next to 2^64, at most levels - 1 moves per node,
 * one level down for the nodes of a cascaded slot that belong there,
 * none for a node range-placed on a bucket start or due alone in its slot,
 * and one wakeup for a far timer.
 *
 * Randomised cases use a fixed xorshift seed; every loop is bounded so that
 * each case stays well under 100 ms under TCG and KASAN.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/twheel.h>

#include "engine.h"

#define TWE_NODES	96

struct twe {
	struct kunit *test;
	struct tw_engine e;
	struct twheel_node nodes[TWE_NODES];
	u64 key[TWE_NODES];
	bool pending[TWE_NODES];
	unsigned long hits[TWE_NODES];
	unsigned long errors;
	u64 rng;
	bool loose;
};

static u64 twe_rand(struct twe *t)
{
	u64 x = t->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return x;
}

static struct twe *twe_new(struct kunit *test, unsigned int bits, u64 clk)
{
	enum twheel_engine kind = *(const enum twheel_engine *)test->param_value;
	struct twe *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	void *mem;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	mem = kunit_kzalloc(test, tw_engine_mem_size(kind, bits), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	t->test = test;
	t->rng = 0x9e3779b97f4a7c15ULL;
	tw_engine_init(&t->e, kind, mem, bits, clk);
	for (i = 0; i < TWE_NODES; i++)
		tw_node_init(&t->nodes[i]);
	return t;
}

static u64 twe_clk(struct twe *t)
{
	return tw_engine_clk(&t->e);
}

static void twe_insert(struct twe *t, int i, u64 key)
{
	if (t->pending[i])
		tw_engine_remove(&t->e, &t->nodes[i]);
	tw_engine_insert(&t->e, &t->nodes[i], key);
	t->key[i] = max(key, twe_clk(t));
	t->pending[i] = true;
	KUNIT_EXPECT_EQ(t->test, t->nodes[i].key, t->key[i]);
}

/* tw_engine_move() of a pending node: the model as for remove + insert. */
static void twe_move(struct twe *t, int i, u64 key)
{
	tw_engine_move(&t->e, &t->nodes[i], key);
	t->key[i] = max(key, twe_clk(t));
	KUNIT_EXPECT_EQ(t->test, t->nodes[i].key, t->key[i]);
	KUNIT_EXPECT_TRUE(t->test, tw_node_linked(&t->nodes[i]));
}

static void twe_remove(struct twe *t, int i)
{
	if (!t->pending[i])
		return;
	tw_engine_remove(&t->e, &t->nodes[i]);
	t->pending[i] = false;
	KUNIT_EXPECT_FALSE(t->test, tw_node_linked(&t->nodes[i]));
}

static u64 twe_min(struct twe *t)
{
	u64 best = TW_NO_TICK;
	int i;

	for (i = 0; i < TWE_NODES; i++)
		if (t->pending[i])
			best = min(best, t->key[i]);
	return best;
}

/* The queries against the model. */
static void twe_check_queries(struct twe *t)
{
	u64 min = twe_min(t), lb = tw_engine_next_lower_bound(&t->e);
	unsigned long n = 0;
	int i;

	for (i = 0; i < TWE_NODES; i++)
		n += t->pending[i];
	KUNIT_EXPECT_EQ(t->test, tw_engine_count(&t->e), n);
	KUNIT_EXPECT_EQ(t->test, tw_engine_next_key(&t->e, TW_NO_TICK), min);
	if (min != TW_NO_TICK) {
		KUNIT_EXPECT_EQ(t->test, tw_engine_next_key(&t->e, min), min);
		KUNIT_EXPECT_EQ(t->test, tw_engine_next_key(&t->e, min - 1),
				TW_NO_TICK);
		KUNIT_EXPECT_GE(t->test, lb, twe_clk(t));
	}
	KUNIT_EXPECT_LE(t->test, lb, min);
}

/*
 * Advance to @upto with cap @max and check the result against the model.
 * Returns the number handed out.
 */
static unsigned int twe_advance(struct twe *t, u64 upto, unsigned int max)
{
	struct hlist_head expired = HLIST_HEAD_INIT;
	struct twheel_node *node;
	struct hlist_node *tmp;
	u64 from = twe_clk(t), prev = 0;
	unsigned int n, got = 0;
	int i;

	if (t->loose) {
		/* as the facility does: count and cap a slot handed out whole */
		n = tw_engine_advance_loose(&t->e, upto, max, &expired);
		if (n == TW_UNCOUNTED) {
			struct hlist_node *pos = expired.first;

			for (n = 0; pos && (!max || n < max); pos = pos->next)
				n++;
			tw_engine_settle(&t->e, n, pos);
		}
	} else {
		n = tw_engine_advance(&t->e, upto, max, &expired);
	}
	hlist_for_each_entry_safe(node, tmp, &expired, entry) {
		i = node - t->nodes;
		hlist_del_init(&node->entry);
		got++;
		if (!t->pending[i] || node->key >= upto) {
			t->errors++;
			continue;
		}
		/* Scheme 6 orders only within a revolution. */
		if (t->e.kind != TWHEEL_ENGINE_SCHEME6 ||
		    upto - from <= tw_engine_slots(&t->e))
			KUNIT_EXPECT_GE(t->test, node->key, prev);
		prev = node->key;
		t->pending[i] = false;
		t->hits[i]++;
	}
	KUNIT_EXPECT_EQ(t->test, got, n);
	if (max)
		KUNIT_EXPECT_LE(t->test, n, max);
	if (!max || n < max) {
		if (upto > from)
			KUNIT_EXPECT_EQ(t->test, twe_clk(t), upto);
		for (i = 0; i < TWE_NODES; i++)
			if (t->pending[i] && t->key[i] < upto)
				t->errors++;
	} else {
		KUNIT_EXPECT_LE(t->test, twe_clk(t), upto);
	}
	twe_check_queries(t);
	return n;
}

static const enum twheel_engine twe_engines[] = {
	TWHEEL_ENGINE_HIER, TWHEEL_ENGINE_SCHEME6, TWHEEL_ENGINE_LAWN,
};

static void twe_desc(const enum twheel_engine *e, char *desc)
{
	strscpy(desc, tw_engine_name(*e), KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(twe, twe_engines, twe_desc);

/*
 * Random inserts, removes, moves and capped or uncapped advances of random
 * length, from clocks at 0, below 2^32 and (not Scheme 6, which promises
 * nothing near U64_MAX) near 2^64.
 */
static void twe_random(struct kunit *test, unsigned int bits, u64 clk0,
		       u64 span)
{
	struct twe *t = twe_new(test, bits, clk0);
	unsigned int step;
	int i;

	for (step = 0; step < 3000; step++) {
		u64 r = twe_rand(t), clk = twe_clk(t), room, d = r >> 40;

		/* the clock at U64_MAX is the end of time: nothing can be due */
		if (clk >= TW_NO_TICK - 1)
			break;
		room = TW_NO_TICK - 1 - clk;

		i = r % TWE_NODES;
		switch ((r >> 8) % 8) {
		case 0:
		case 1:
		case 2:
			d = (r >> 16) % 4 ? d % 64 : d % span;
			if (t->pending[i] && (r >> 8) % 8 == 2)
				twe_move(t, i, clk + min(d, room));
			else
				twe_insert(t, i, clk + min(d, room));
			break;
		case 3:
			twe_remove(t, i);
			break;
		default:
			d = (r >> 16) % 3 ? d % 32 : d % (2 * span);
			t->loose = (r >> 28) % 2;
			twe_advance(t, clk + min(d + 1, room + 1),
				    (r >> 20) % 2 ? 1 + (r >> 24) % 4 : 0);
			break;
		}
	}
	/* Drain: everything fires exactly once, on time. */
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_key(&t->e, TW_NO_TICK) + 1, 0);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	for (i = 0; i < TWE_NODES; i++)
		KUNIT_EXPECT_FALSE(test, t->pending[i]);
}

static void tw_engine_random_from_zero(struct kunit *test)
{
	twe_random(test, 4, 0, 1 << 20);
}

/* A level 0 of 8192 slots: more than one word of its summary bitmap. */
static void tw_engine_random_two_summary_words(struct kunit *test)
{
	twe_random(test, 13, (1ULL << 40) - 10000, 1 << 20);
}

static void tw_engine_random_across_2_32(struct kunit *test)
{
	twe_random(test, 5, (1ULL << 32) - 3000, 1 << 16);
}

static void tw_engine_random_near_2_64(struct kunit *test)
{
	if (*(const enum twheel_engine *)test->param_value == TWHEEL_ENGINE_SCHEME6)
		kunit_skip(test, "Scheme 6 keeps keys below 2^62");
	twe_random(test, 5, TW_NO_TICK - (1ULL << 22), 1ULL << 21);
}

/* The cap: batches of @max, the rest first, nothing lost or reordered. */
static void tw_engine_advance_cap_in_batches(struct kunit *test)
{
	struct twe *t = twe_new(test, 6, 100);
	unsigned int total = 0, n;
	int i;

	for (i = 0; i < 40; i++)
		twe_insert(t, i, 100 + i % 3);
	for (i = 40; i < 60; i++)
		twe_insert(t, i, 5000 + i);
	do {
		n = twe_advance(t, 103, 7);
		total += n;
	} while (n == 7);
	KUNIT_EXPECT_EQ(test, total, 40U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 103ULL);
	twe_advance(t, 1 << 20, 0);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
}

/*
 * The facility's way of advancing: a tickless caller, woken for the first
 * key, may get that tick's slot whole and unread (the hierarchical engine),
 * takes what its cap allows and settles; the rest comes first next time,
 * with the clock on its tick, and the count stays exact throughout.
 */
static void tw_engine_advance_loose_cap_puts_back(struct kunit *test)
{
	struct twe *t = twe_new(test, 6, 100);
	unsigned int total = 0, n;
	int i;

	t->loose = true;
	for (i = 0; i < 20; i++)
		twe_insert(t, i, 110);
	twe_insert(t, 20, 111);
	twe_insert(t, 21, 5000);
	n = twe_advance(t, 111, 7);
	KUNIT_EXPECT_EQ(test, n, 7U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 110ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 15UL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 110ULL);
	for (total = n; n == 7; total += n)
		n = twe_advance(t, 111, 7);
	KUNIT_EXPECT_EQ(test, total, 20U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 111ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 2UL);
	/* a slot of exactly the cap, then one uncapped */
	KUNIT_EXPECT_EQ(test, twe_advance(t, 112, 1), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 5001, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
	for (i = 0; i < 22; i++)
		KUNIT_EXPECT_EQ(test, t->hits[i], 1UL);
}

/* Keys next to U64_MAX fire when the last tick is over. */
static void tw_engine_64bit_end_of_time(struct kunit *test)
{
	struct twe *t;

	if (*(const enum twheel_engine *)test->param_value == TWHEEL_ENGINE_SCHEME6)
		kunit_skip(test, "Scheme 6 keeps keys below 2^62");
	t = twe_new(test, 4, 0);
	twe_insert(t, 0, TW_NO_TICK - 1);
	twe_insert(t, 1, TW_NO_TICK - 2);
	twe_insert(t, 2, 1ULL << 63);
	twe_insert(t, 3, 7);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 8, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 63, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1ULL << 63) + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 2, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
}

static struct tw_hier *twe_hier(struct kunit *test, struct twe *t)
{
	if (t->e.kind != TWHEEL_ENGINE_HIER)
		kunit_skip(test, "hierarchical engine only");
	return &t->e.hier;
}

/*
 * Keys just before, at and after every level boundary (and their
 * neighbours), from a clock just below a level-0 block end, advanced tick
 * by tick near each key and in jumps between: each fires at the first
 * advance past its key, and moves at most levels - 1 times.
 */
static void tw_hier_cascade_across_level_boundaries(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twe_new(test, bits, (1ULL << 32) - 5);
	struct tw_hier *h = twe_hier(test, t);
	u64 base = twe_clk(t);
	unsigned int level, nr = 0;
	int i;

	for (level = 1; level <= h->levels && nr + 3 <= TWE_NODES; level++) {
		unsigned int sh = bits + (level - 1) * TW_HIER_LVL_BITS;
		u64 b = sh < 64 ? (base | ((1ULL << sh) - 1)) + 1 : 0;

		if (!b || b >= TW_NO_TICK - 2)
			continue;
		twe_insert(t, nr++, b - 1);
		twe_insert(t, nr++, b);
		twe_insert(t, nr++, b + 1);
	}
	twe_check_queries(t);
	while (tw_engine_count(&t->e)) {
		u64 next = tw_engine_next_key(&t->e, TW_NO_TICK);
		u64 clk = twe_clk(t);

		/* tick by tick for the last few ticks before each key */
		if (next - clk > 3)
			twe_advance(t, next - 2, 0);
		else
			twe_advance(t, clk + 1, 0);
	}
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, t->hits[i], 1UL);
	KUNIT_EXPECT_LE(test, h->moves, (u64)nr * (h->levels - 1));
	kunit_info(test, "%u keys at level boundaries, %llu moves\n", nr,
		   h->moves);
}

/*
 * A cascaded slot of level 3 starts at the clock: its nodes whose level-2
 * slot bits are not zero go to exactly that level-2 slot, one move each;
 * the others are placed lower (level 1 or 0), and the one on the block
 * start itself is due and handed out by the cascade.
 */
static void tw_hier_cascade_one_level_down(struct kunit *test)
{
	/* bits 8: level 1 from 2^8, level 2 from 2^14, level 3 from 2^20 */
	struct twe *t = twe_new(test, 8, 0);
	struct tw_hier *h = twe_hier(test, t);
	const u64 b = 1ULL << 20;
	static const struct {
		u64 off;	/* key - b */
		int level;	/* after the cascade; -1: handed out */
	} n[] = {
		{ 0, -1 },			/* the block start: due */
		{ 5, 0 },			/* within a revolution */
		{ 300, 1 },			/* level-1 slot 1 */
		{ 1ULL << 14, 2 },		/* level-2 slot 1, its start */
		{ 3 * (1ULL << 14) + 7, 2 },	/* level-2 slot 3 */
		{ 63 * (1ULL << 14) + 300, 2 },	/* level-2 slot 63 */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(n); i++) {
		twe_insert(t, i, b + n[i].off);
		KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[i]), 3);
	}
	KUNIT_EXPECT_EQ(test, twe_advance(t, b + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->hits[0], 1UL);
	KUNIT_EXPECT_EQ(test, h->moves, (u64)ARRAY_SIZE(n) - 1);
	for (i = 1; i < ARRAY_SIZE(n); i++)
		KUNIT_EXPECT_EQ_MSG(test, tw_hier_node_level(h, &t->nodes[i]),
				    n[i].level, "key b + %llu", n[i].off);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), b + 5);
	/* the rest in key order, each at the first advance past its key */
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_key(&t->e, TW_NO_TICK) + 1, 0);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	for (i = 0; i < ARRAY_SIZE(n); i++)
		KUNIT_EXPECT_EQ(test, t->hits[i], 1UL);
	KUNIT_EXPECT_LE(test, h->moves, (u64)ARRAY_SIZE(n) * (h->levels - 1));
}

/*
 * next_lower_bound is the earliest key from the bitmaps and slot bounds: a
 * far timer wakes its caller once, when due, and the advance that hands it
 * out does its cascades (two here) on the way.
 */
static void tw_hier_next_lower_bound_far_timer_one_wakeup(struct kunit *test)
{
	struct twe *t = twe_new(test, 8, 0);
	struct tw_hier *h = twe_hier(test, t);

	twe_insert(t, 0, 100000);
	/* 100000 is on level 2 (2^14 .. 2^20): slot 6 of 2^14 ticks */
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 2);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 100000ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), 100000ULL);
	twe_insert(t, 1, 200);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 200ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 201, 0), 1U);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 100000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 100000, 0), 0U);
	KUNIT_EXPECT_EQ(test, h->moves, 2ULL);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 0);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 100001, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
}

/*
 * Removals of the earliest keys, on level 0 and on an upper level, move the
 * bound on to the next key: no wakeup for a slot the removals emptied, nor
 * for one emptied while the engine held nothing.
 */
static void tw_hier_next_lower_bound_after_removals(struct kunit *test)
{
	struct twe *t = twe_new(test, 8, 0);

	twe_hier(test, t);
	twe_insert(t, 0, 100);
	twe_insert(t, 1, 150);
	/* level 1 holds 2^8 .. 2^14: slots 3 and 19 of 2^8 ticks */
	twe_insert(t, 2, 1000);
	twe_insert(t, 3, 5000);
	twe_remove(t, 0);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 150ULL);
	twe_remove(t, 1);
	twe_remove(t, 2);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 5000ULL);
	twe_remove(t, 3);
	twe_insert(t, 4, 9000);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 9000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 9000, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 9001, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
}

/*
 * A due node alone in the upper slot being cascaded is handed out by that
 * cascade, without moving down level by level, unless something on level
 * 0 comes first: then it is placed lower and handed out in key order.
 */
static void tw_hier_advance_lone_due_timer_never_moves(struct kunit *test)
{
	struct twe *t = twe_new(test, 8, 0);
	struct tw_hier *h = twe_hier(test, t);
	u64 clk;

	/* level 2 (2^14 .. 2^20), alone in slot 6 */
	twe_insert(t, 0, 100000);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 2);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 100001, 0), 1U);
	KUNIT_EXPECT_EQ(test, h->moves, 0ULL);

	/*
	 * Alone in level 2's slot 8 (from 131072), but a level-0 key comes
	 * first at that cascade point: one move to level 1, where it is
	 * alone again, and handed out from there.
	 */
	clk = 8 * (1ULL << 14) - 10;
	twe_advance(t, clk, 0);
	twe_insert(t, 1, clk + 110);
	twe_insert(t, 2, clk + 5010);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[1]), 0);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[2]), 2);
	KUNIT_EXPECT_EQ(test, twe_advance(t, clk + 6000, 0), 2U);
	KUNIT_EXPECT_EQ(test, h->moves, 1ULL);

	/* with the cap used up it moves down as any node does */
	clk = twe_clk(t);
	twe_insert(t, 3, clk + 100);
	twe_insert(t, 4, clk + 20000);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[4]), 2);
	KUNIT_EXPECT_EQ(test, twe_advance(t, clk + 20001, 1), 1U);
	KUNIT_EXPECT_EQ(test, h->moves, 3ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, clk + 20001, 1), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	KUNIT_EXPECT_EQ(test, t->hits[0] + t->hits[1] + t->hits[2] +
			      t->hits[3] + t->hits[4], 5UL);
}

/*
 * Range placement: a timer whose range covers a whole bucket of the level
 * it lands on is put on the bucket's start and fires from there without a
 * single move; one whose range does not may move.
 */
static void tw_hier_slack_bucket_start_never_cascades(struct kunit *test)
{
	struct twe *t = twe_new(test, 6, 12345);
	struct tw_hier *h = twe_hier(test, t);
	unsigned int i, fixed = 0;

	for (i = 0; i < 64; i++) {
		u64 clk = twe_clk(t), lo = clk + 64 + twe_rand(t) % (1ULL << 30);
		int lv = 1 + (fls64(lo ^ clk) - 1 - 6) / TW_HIER_LVL_BITS;
		u64 g = 1ULL << (6 + (lv - 1) * TW_HIER_LVL_BITS);
		u64 hi = lo + 2 * g - 1, key = tw_engine_pick_key(&t->e, lo, hi);

		/* [lo, hi] covers a whole bucket of lo's level */
		twe_insert(t, i, key);
		lv = tw_hier_node_level(h, &t->nodes[i]);
		KUNIT_EXPECT_GE(test, key, lo);
		KUNIT_EXPECT_LE(test, key, hi);
		if (lv && !(key & ((1ULL << (6 + (lv - 1) * TW_HIER_LVL_BITS)) - 1)))
			fixed++;
	}
	/* fire them all one tick after their keys, as a tick handler does */
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_lower_bound(&t->e) + 1, 0);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
	KUNIT_EXPECT_EQ(test, fixed, 64U);
	KUNIT_EXPECT_EQ(test, h->moves, 0ULL);
}

/*
 * tw_engine_move() later leaves a node on an upper level where it is (its
 * list links unchanged); its cascade places it by the new key.  Keys then
 * pass a later slot's: next_key() still finds the earliest, and a moved
 * node alone in its slot is not handed out before an earlier one in the
 * next slot.  Earlier, or from level 0, it is moved as remove + insert.
 */
static void tw_hier_move_later_stays_in_place(struct kunit *test)
{
	struct twe *t = twe_new(test, 8, 0);
	struct tw_hier *h = twe_hier(test, t);
	struct hlist_node **pprev;
	u64 clk;

	/* level 2 (2^14 .. 2^20): slot 6 from 98304, slot 7 from 114688 */
	twe_insert(t, 0, 100000);
	twe_insert(t, 1, 120000);
	pprev = t->nodes[0].entry.pprev;
	twe_move(t, 0, 130000);
	KUNIT_EXPECT_PTR_EQ(test, t->nodes[0].entry.pprev, pprev);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 2);
	twe_check_queries(t);
	/* one advance past both: 120000 first (twe_advance checks order) */
	KUNIT_EXPECT_EQ(test, twe_advance(t, 140000, 0), 2U);
	KUNIT_EXPECT_EQ(test, t->hits[0] + t->hits[1], 2UL);

	/*
	 * Moved later past its level: placed a level up by the cascade of
	 * its slot (9, from 147456), not on level 1's slot 5, which its
	 * key's bits there name.
	 */
	twe_insert(t, 2, 150000);
	twe_move(t, 2, (1ULL << 21) + 5 * 256);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[2]), 2);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 147456 + 1, 0), 0U);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[2]), 3);

	/* earlier, or within a revolution: unlinked and placed anew */
	clk = twe_clk(t);
	twe_move(t, 2, clk + 100);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[2]), 0);
	twe_move(t, 2, clk + 200);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[2]), 0);
	KUNIT_EXPECT_EQ(test, twe_advance(t, clk + 201, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->errors, 0UL);
}

static struct kunit_case twheel_engine_cases[] = {
	KUNIT_CASE_PARAM(tw_engine_random_from_zero, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_across_2_32, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_near_2_64, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_two_summary_words, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_advance_cap_in_batches, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_advance_loose_cap_puts_back, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_64bit_end_of_time, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_cascade_across_level_boundaries, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_cascade_one_level_down, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_next_lower_bound_far_timer_one_wakeup, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_next_lower_bound_after_removals, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_advance_lone_due_timer_never_moves, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_slack_bucket_start_never_cascades, twe_gen_params),
	KUNIT_CASE_PARAM(tw_hier_move_later_stays_in_place, twe_gen_params),
	{}
};

static struct kunit_suite twheel_engine_suite = {
	.name = "twheel_engine",
	.test_cases = twheel_engine_cases,
};

kunit_test_suite(twheel_engine_suite);
