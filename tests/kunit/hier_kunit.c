// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_hier": the default engine, src/hier.c (a Scheme 6
 * level 0 with hierarchical levels of 64 slots above it).
 *
 * The engine reads no clock: every case is the clock.  All but the last
 * section check only what src/engine.h promises, through the engines' one
 * reference model (tests/engines/model.h, via engine_util.h), after every
 * call: never early, exactly once and on time, nothing lost, the cap,
 * order, every key >= the clock, the count, next_key() exact and
 * next_lower_bound() between the clock and the earliest key.  The keys are
 * chosen by the engine's geometry (level 0 of 2^bits ticks, then levels of
 * TW_HIER_LVL_BITS more bits each) to land on level and slot boundaries,
 * cascades and the ends of the 64-bit range; how the engine gets there,
 * when it cascades and how far a bookkeeping bound may lag, is left to
 * it, so these cases hold for any engine that keeps the contract.
 *
 * The last section, "Placement", checks hier.c's own design (the level a
 * node sits on, tw_hier_node_level(), and the moves counter); it changes
 * with the engine's placement rules.
 *
 * Randomised cases use a fixed xorshift seed; every loop is bounded so that
 * each case stays well under a second under TCG and KASAN.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/twheel.h>

#include "engine_util.h"
#include "twheel_kunit.h"

#define TWH_NODES	128U

static struct twe *twh_new(struct kunit *test, unsigned int bits, u64 clk)
{
	return twe_new(test, TWHEEL_ENGINE_HIER, bits, clk, TWH_NODES);
}

/*
 * Ticks a slot of level @level spans: 1 on level 0, 2^bits on level 1, 64
 * times more on each level above; 0 when that is 2^64 or more.
 */
static u64 twh_gran(unsigned int bits, unsigned int level)
{
	unsigned int sh = level ? bits + (level - 1) * TW_HIER_LVL_BITS : 0;

	return sh < 64 ? 1ULL << sh : 0;
}

/* The first tick of the next block of @gran ticks after @clk, 0 if none. */
static u64 twh_next_block(u64 clk, u64 gran)
{
	u64 b = (clk | (gran - 1)) + 1;

	return b > clk ? b : 0;
}

/* @key + @d, saturated below TW_NO_TICK (the end of time). */
static u64 twh_add(u64 key, u64 d)
{
	return key + d < key || key + d >= TW_NO_TICK ? TW_NO_TICK - 1 :
							key + d;
}

/* Each of the first @nr nodes fired exactly once. */
static void twh_expect_each_once(struct twe *t, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(t->test, twe_hits(t, i), 1UL, "node %u", i);
}

/*
 * Advance by jumps to two ticks before the next key, then tick by tick
 * over it, until nothing is left: each node must come at the first
 * advance past its key, which the model checks.
 */
static void twh_walk_keys(struct twe *t)
{
	unsigned int guard = 0;

	while (tw_engine_count(&t->e)) {
		u64 next = tw_engine_next_key(&t->e, TW_NO_TICK);
		u64 clk = twe_clk(t);

		KUNIT_ASSERT_LT(t->test, ++guard, 16 * TWH_NODES);
		if (next - clk > 3)
			twe_advance(t, next - 2, 0);
		else
			twe_advance(t, clk + 1, 0);
	}
}

/* ------------------------------------------------------------------- */
/* init, insert, remove, re-insert                                      */
/* ------------------------------------------------------------------- */

static void tw_hier_init_empty_holds_no_key(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 1000);

	KUNIT_EXPECT_EQ(test, twe_clk(t), 1000ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_slots(&t->e), 64ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 40, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 1ULL << 40);
}

/* One key on every level, inserted far to near: each comes once, in order. */
static void tw_hier_insert_every_level_fires_once(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twh_new(test, bits, 3);
	unsigned int level, nr = 0;

	for (level = TW_HIER_MAX_UP + 1; level-- > 0;) {
		u64 g = twh_gran(bits, level);

		if (!g)
			continue;
		twe_insert(t, nr, twh_add(3 + 2 * g, nr));
		nr++;
		KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), (unsigned long)nr);
		twe_check_queries(t);
	}
	twh_walk_keys(t);
	twh_expect_each_once(t, nr);
}

static void tw_hier_insert_past_key_clamped_to_clk(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 5000);

	twe_insert(t, 0, 10);
	twe_insert(t, 1, 0);
	twe_insert(t, 2, 4999);
	KUNIT_EXPECT_EQ(test, t->nodes[0].key, 5000ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), 5000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 5001, 0), 3U);
}

/*
 * After a capped advance the clock stays below @upto: a key in the past is
 * clamped to that clock and comes before the rest that was deferred.
 */
static void tw_hier_insert_past_key_while_capped_fires_next(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 100);
	unsigned int i;
	u64 clk;

	for (i = 0; i < 10; i++)
		twe_insert(t, i, 100 + 2 * i);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 200, 3), 3U);
	clk = twe_clk(t);
	KUNIT_EXPECT_LT(test, clk, 200ULL);
	twe_insert(t, 10, 0);
	KUNIT_EXPECT_EQ(test, t->nodes[10].key, clk);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 200, 1), 1U);
	KUNIT_EXPECT_EQ(test, twe_hits(t, 10), 1UL);
	while (twe_advance(t, 200, 3) == 3)
		;
	twh_expect_each_once(t, 11);
}

/* Removed nodes, on any level, are never handed out; the rest come once. */
static void tw_hier_remove_every_level_never_handed_out(struct kunit *test)
{
	const unsigned int bits = 5;
	struct twe *t = twh_new(test, bits, 77);
	unsigned int level, i, nr = 0;

	for (level = 0; level <= TW_HIER_MAX_UP; level++) {
		u64 g = twh_gran(bits, level);

		if (!g)
			break;
		for (i = 0; i < 4; i++, nr++)
			twe_insert(t, nr, twh_add(77 + 3 * g, i * (g / 2 + 1)));
	}
	for (i = 0; i < nr; i += 2)
		twe_remove(t, i);
	twe_check_queries(t);
	twe_advance(t, TW_NO_TICK, 0);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, twe_hits(t, i), (unsigned long)(i % 2),
				    "node %u", i);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
}

/* Removing the earliest key, level by level, moves both bounds on. */
static void tw_hier_remove_earliest_moves_bounds_on(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twh_new(test, bits, 1000);
	unsigned int level, i, nr = 0;

	for (level = 0; level <= 6; level++) {
		u64 g = twh_gran(bits, level);

		twe_insert(t, nr++, 1000 + 2 * g + 1);
		twe_insert(t, nr++, 1000 + 2 * g + 5);
	}
	for (i = 0; i < nr; i++) {
		u64 lb;

		twe_remove(t, i);
		twe_check_queries(t);
		lb = tw_engine_next_lower_bound(&t->e);
		if (i + 1 < nr)
			KUNIT_EXPECT_GE(test, lb, 1000ULL);
		else
			KUNIT_EXPECT_EQ(test, lb, TW_NO_TICK);
	}
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 0U);
}

/* A node can be used again after a remove and after it fired. */
static void tw_hier_reinsert_after_remove_and_fire(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 0);

	twe_insert(t, 0, 1 << 20);
	twe_remove(t, 0);
	twe_insert(t, 0, 50);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1 << 21, 0), 1U);
	twe_insert(t, 0, 1 << 30);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1 << 30, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1 << 30) + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_hits(t, 0), 2UL);
}

/* ------------------------------------------------------------------- */
/* advance                                                              */
/* ------------------------------------------------------------------- */

static void tw_hier_advance_empty_moves_clk(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 0);

	KUNIT_EXPECT_EQ(test, twe_advance(t, 1, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 40, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 5, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), TW_NO_TICK - 5);
	twe_insert(t, 0, TW_NO_TICK - 2);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
}

static void tw_hier_advance_upto_not_past_clk_is_noop(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 1000);

	twe_insert(t, 0, 1000);
	twe_insert(t, 1, 100000);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1000, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 10, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 1000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1001, 0), 1U);
}

/* An advance to a key in the middle hands out exactly the keys below it. */
static void tw_hier_advance_fires_only_due_across_levels(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	unsigned int i;

	for (i = 0; i < 40; i++)
		twe_insert(t, i, 1ULL << i);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 20, 0), 20U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1ULL << 20) + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 39, 0), 18U);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 1UL);
}

/* Tick by tick over keys on three levels: each at its own tick, once. */
static void tw_hier_advance_tick_by_tick_exactly_once(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	unsigned int i, got = 0;
	u64 tick;

	for (i = 0; i < 64; i++)
		twe_insert(t, i, twe_rand(t) % 2000);
	for (tick = 1; tick <= 2000; tick++)
		got += twe_advance(t, tick, 0);
	KUNIT_EXPECT_EQ(test, got, 64U);
	twh_expect_each_once(t, 64);
}

/* Keys 2^0 .. 2^63 and the last tick, walked over: once each, in order. */
static void tw_hier_advance_every_power_of_two(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 0);
	unsigned int i;

	for (i = 0; i < 64; i++)
		twe_insert(t, i, 1ULL << i);
	twe_insert(t, 64, TW_NO_TICK - 1);
	twh_walk_keys(t);
	twh_expect_each_once(t, 65);
	/* the last tick is never over: every key stays below TW_NO_TICK */
	KUNIT_EXPECT_EQ(test, twe_clk(t), TW_NO_TICK - 1);
}

static void tw_hier_advance_beyond_2_32_ticks(struct kunit *test)
{
	struct twe *t = twh_new(test, 8, (1ULL << 32) - 100);

	twe_insert(t, 0, (1ULL << 32) + 5);
	twe_insert(t, 1, (1ULL << 33) + 7);
	twe_insert(t, 2, (1ULL << 32) - 1);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 32, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1ULL << 32) + 5, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1ULL << 32) + 6, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 33, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, (1ULL << 34), 0), 1U);
}

/* One advance to the end of time hands out every key, in key order. */
static void tw_hier_advance_to_end_of_time_in_order(struct kunit *test)
{
	struct twe *t = twh_new(test, 5, 12345);
	unsigned int i;

	for (i = 0; i < TWH_NODES; i++) {
		u64 r = twe_rand(t);

		twe_insert(t, i, twh_add(12345, r >> (r % 64)));
	}
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), TWH_NODES);
	KUNIT_EXPECT_EQ(test, twe_clk(t), TW_NO_TICK - 1);
	twh_expect_each_once(t, TWH_NODES);
}

/* Many nodes on one far tick: one advance hands them all out. */
static void tw_hier_advance_many_on_one_far_tick(struct kunit *test)
{
	const u64 key = (3ULL << 26) + 12345;
	struct twe *t = twh_new(test, 6, 0);
	unsigned int i;

	for (i = 0; i < 100; i++)
		twe_insert(t, i, key);
	twe_insert(t, 100, key + 1);
	KUNIT_EXPECT_EQ(test, twe_advance(t, key, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, key + 1, 0), 100U);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 1UL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, key + 2, 0), 1U);
	twh_expect_each_once(t, 101);
}

/*
 * Sparse keys over 2^24 ticks, caught up in jumps of 2^16 ticks (4096
 * revolutions of level 0 each): every key at the first jump past it.
 */
static void tw_hier_advance_catch_up_sparse(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	unsigned int i;
	u64 upto;

	for (i = 0; i < 100; i++)
		twe_insert(t, i, twe_rand(t) >> 40);
	for (upto = 1ULL << 16; tw_engine_count(&t->e); upto += 1ULL << 16)
		twe_advance(t, upto, 0);
	twh_expect_each_once(t, 100);
}

/*
 * Nodes a capped advance left due (the clock held back) can still be
 * removed: they never come, and the rest still do, in order.
 */
static void tw_hier_remove_while_capped(struct kunit *test)
{
	const unsigned int bits = 6;
	const u64 base = 2 * twh_gran(bits, 2);
	struct twe *t = twh_new(test, bits, 0);
	unsigned int i;

	for (i = 0; i < 60; i++)
		twe_insert(t, i, base + i % 20);
	KUNIT_EXPECT_EQ(test, twe_advance(t, base + 100, 8), 8U);
	for (i = 0; i < 60; i += 3)
		twe_remove(t, i);
	while (twe_clk(t) < base + 100)
		twe_advance(t, base + 100, 8);
	for (i = 0; i < 60; i++)
		KUNIT_EXPECT_LE_MSG(test, twe_hits(t, i), 1UL, "node %u", i);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
}

/* ------------------------------------------------------------------- */
/* Cascades: keys around every level boundary                           */
/* ------------------------------------------------------------------- */

struct twh_edge_param {
	const char *name;
	unsigned int bits;
	u64 clk;
};

static const struct twh_edge_param twh_edge_params[] = {
	{ "bits4_from_0", 4, 0 },
	{ "bits4_below_2^32", 4, (1ULL << 32) - 5 },
	{ "bits6_below_2^40", 6, (1ULL << 40) - 3 },
	{ "bits8_below_2^63", 8, (1ULL << 63) - 100 },
	{ "bits13_from_12345", 13, 12345 },
	{ "bits4_near_2^64", 4, TW_NO_TICK - (1ULL << 40) },
};

TWK_ARRAY_PARAM_BY_NAME(twh_edge);

/*
 * Keys one before, on and one after the next block start of every level,
 * and the end of the range, walked over: each fires once, at the first
 * advance past its key.
 */
static void tw_hier_cascade_level_boundaries(struct kunit *test)
{
	const struct twh_edge_param *p = test->param_value;
	struct twe *t = twh_new(test, p->bits, p->clk);
	unsigned int level, nr = 0;

	for (level = 0; level <= TW_HIER_MAX_UP + 1; level++) {
		u64 g = twh_gran(p->bits, level), b;

		b = g ? twh_next_block(p->clk, g) : 0;
		if (!b || b >= TW_NO_TICK - 2 || nr + 3 > TWH_NODES)
			continue;
		twe_insert(t, nr++, b - 1);
		twe_insert(t, nr++, b);
		twe_insert(t, nr++, b + 1);
	}
	twe_insert(t, nr++, TW_NO_TICK - 1);
	twe_check_queries(t);
	twh_walk_keys(t);
	twh_expect_each_once(t, nr);
}

/*
 * The same keys from a tickless caller's side: it sleeps until
 * next_lower_bound() and advances one tick past it.  Nothing comes late,
 * and the bound leads to every key in a bounded number of wakeups (a
 * bookkeeping bound before a key is allowed, a stall is not).
 */
static void tw_hier_cascade_driven_by_lower_bound(struct kunit *test)
{
	const struct twh_edge_param *p = test->param_value;
	struct twe *t = twh_new(test, p->bits, p->clk);
	unsigned int level, nr = 0;
	unsigned long wakeups;

	for (level = 1; level <= TW_HIER_MAX_UP + 1; level++) {
		u64 g = twh_gran(p->bits, level), b;

		b = g ? twh_next_block(p->clk, g) : 0;
		if (!b || b >= TW_NO_TICK - 2 * g || nr + 2 > TWH_NODES)
			continue;
		twe_insert(t, nr++, b + g / 2);
		twe_insert(t, nr++, b + g + 1);
	}
	wakeups = twe_drain(t, 64UL * (nr + 1));
	twh_expect_each_once(t, nr);
	kunit_info(test, "%u keys, %lu wakeups\n", nr, wakeups);
}

/* ------------------------------------------------------------------- */
/* next_lower_bound, next_key                                           */
/* ------------------------------------------------------------------- */

/* Alone on its level, a key is found exactly, whatever the bound. */
static void tw_hier_next_key_exact_on_every_level(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twh_new(test, bits, 100);
	unsigned int level;

	for (level = 0; level <= TW_HIER_MAX_UP + 1; level++) {
		u64 g = twh_gran(bits, level), key;

		if (!g)
			break;
		/* not on a slot boundary: the slot's start is no answer */
		key = twh_add(100 + 3 * g, g / 3 + 1);
		twe_insert(t, 0, key);
		twm_check_next_key(&t->m, key - 1);
		twm_check_next_key(&t->m, key);
		twm_check_next_key(&t->m, key + 1);
		twm_check_next_key(&t->m, twe_clk(t));
		twm_check_next_key(&t->m, key - g / 2);
		twe_ok(t);
		twe_check_queries(t);
		twe_remove(t, 0);
	}
}

/* The earliest of several keys in one upper slot, not the slot's start. */
static void tw_hier_next_key_earliest_in_upper_slot(struct kunit *test)
{
	const unsigned int bits = 6;
	const u64 g = twh_gran(bits, 2);
	struct twe *t = twh_new(test, bits, 0);
	u64 b = 5 * g;

	twe_insert(t, 0, b + 500);
	twe_insert(t, 1, b + 7);
	twe_insert(t, 2, b + g - 1);
	twe_insert(t, 3, b + 7 + g);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), b + 7);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, b + 6), TW_NO_TICK);
	KUNIT_EXPECT_LE(test, tw_engine_next_lower_bound(&t->e), b + 7);
	twe_remove(t, 1);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), b + 500);
	/* and after part of the slot came out under a cap */
	twe_insert(t, 1, b + 7);
	KUNIT_EXPECT_EQ(test, twe_advance(t, b + 10000, 1), 1U);
	twe_check_queries(t);
	twe_advance(t, TW_NO_TICK, 0);
	twh_expect_each_once(t, 4);
}

static void tw_hier_next_key_beyond_bound(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 0);

	twe_insert(t, 0, 1ULL << 35);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, (1ULL << 35) - 1),
			TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, 1ULL << 34), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, 1ULL << 35),
			1ULL << 35);
	KUNIT_EXPECT_LE(test, tw_engine_next_lower_bound(&t->e), 1ULL << 35);
}

/*
 * Removing the earliest nodes of upper slots may leave a lower bound that
 * lags the keys (it must never lead them): a tickless caller still gets
 * to every key left, in a bounded number of wakeups.
 */
static void tw_hier_next_lower_bound_after_upper_removals(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twh_new(test, bits, 0);
	unsigned int level, nr = 0, i;

	for (level = 1; level <= 5; level++) {
		u64 g = twh_gran(bits, level);

		for (i = 0; i < 4; i++, nr++)
			twe_insert(t, nr, 3 * g + i * (g / 4) + 1);
	}
	for (i = 0; i < nr; i += 4) {
		twe_remove(t, i);
		twe_remove(t, i + 1);
		twe_check_queries(t);
	}
	twe_drain(t, 8UL * nr);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, twe_hits(t, i),
				    (unsigned long)(i % 4 >= 2), "node %u", i);
}

struct twh_rand_param {
	const char *name;
	unsigned int bits;
	u64 clk;
	u64 span;
	unsigned int steps;
};

static const struct twh_rand_param twh_rand_params[] = {
	{ "bits4_from_0", 4, 0, 1 << 20, 3000 },
	{ "bits6_far", 6, 1000, 1ULL << 40, 3000 },
	{ "bits8_across_2^32", 8, (1ULL << 32) - 3000, 1 << 16, 3000 },
	{ "bits13_two_summary_words", 13, (1ULL << 40) - 10000, 1 << 20, 2000 },
	{ "bits5_near_2^64", 5, TW_NO_TICK - (1ULL << 22), 1ULL << 21, 3000 },
};

TWK_ARRAY_PARAM_BY_NAME(twh_rand);

/*
 * Random inserts, removes, moves and capped, uncapped, loose and exact
 * advances, every query checked after each advance, then a drain.
 */
static void tw_hier_random_ops_keep_contract(struct kunit *test)
{
	const struct twh_rand_param *p = test->param_value;
	struct twe *t = twh_new(test, p->bits, p->clk);

	t->rng ^= p->clk + p->bits;
	twe_run_random(t, p->steps, p->span);
}

/* ------------------------------------------------------------------- */
/* move                                                                 */
/* ------------------------------------------------------------------- */

/*
 * A node moved from every level to every level, earlier and later, fires
 * once, at its new key.
 */
static void tw_hier_move_between_every_pair_of_levels(struct kunit *test)
{
	const unsigned int bits = 4, levels = 6;
	struct twe *t = twh_new(test, bits, 1000);
	unsigned int from, to, nr = 0;

	for (from = 0; from < levels; from++) {
		for (to = 0; to < levels; to++, nr++) {
			u64 gf = twh_gran(bits, from), gt = twh_gran(bits, to);

			twe_insert(t, nr, 1000 + 2 * gf + nr);
			twe_move(t, nr, 1000 + 2 * gt + 3 * nr);
		}
	}
	twe_check_queries(t);
	twh_walk_keys(t);
	twh_expect_each_once(t, nr);
}

/*
 * Moved later, a node may stay where it was; its key then passes a later
 * node's: next_key() still finds the earliest, and the two come out in
 * key order.  Moved to the same key, or into the past, it keeps or takes
 * the clock's tick.
 */
static void tw_hier_move_later_past_another_key(struct kunit *test)
{
	const unsigned int bits = 8;
	const u64 g = twh_gran(bits, 2);
	struct twe *t = twh_new(test, bits, 0);
	u64 clk;

	twe_insert(t, 0, 6 * g + 1696);
	twe_insert(t, 1, 7 * g + 5000);
	twe_move(t, 0, 7 * g + 15000);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), 7 * g + 5000);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 8 * g + 1, 0), 2U);
	twe_insert(t, 2, 9 * g + 1);
	twe_move(t, 2, 9 * g + 1);
	twe_move(t, 2, (1ULL << 30) + 5);
	clk = twe_clk(t);
	twe_move(t, 2, clk - 1);
	KUNIT_EXPECT_EQ(test, t->nodes[2].key, clk);
	KUNIT_EXPECT_EQ(test, twe_advance(t, clk + 1, 0), 1U);
	twh_expect_each_once(t, 3);
}

/* Moves between capped advances: the deferred rest still comes first. */
static void tw_hier_move_while_capped(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	unsigned int i;

	for (i = 0; i < 30; i++)
		twe_insert(t, i, 5000 + i);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 6000, 4), 4U);
	for (i = 10; i < 20; i++)
		twe_move(t, i, 4000 + 100 * i);
	while (twe_advance(t, 6000, 4) == 4)
		;
	KUNIT_EXPECT_EQ(test, twe_clk(t), 6000ULL);
	twe_advance(t, TW_NO_TICK, 0);
	twh_expect_each_once(t, 30);
}

/* ------------------------------------------------------------------- */
/* The execution cap                                                    */
/* ------------------------------------------------------------------- */

struct twh_cap_param {
	const char *name;
	unsigned int cap;
	bool loose;
};

static const struct twh_cap_param twh_cap_params[] = {
	{ "cap1", 1, false },
	{ "cap3", 3, false },
	{ "cap7_loose", 7, true },
	{ "cap64", 64, false },
	{ "cap5_loose", 5, true },
};

TWK_ARRAY_PARAM_BY_NAME(twh_cap);

/*
 * Nodes on level 0, many in one upper slot (some on one tick) and some
 * beyond: a capped catch-up hands out at most the cap per advance, in key
 * order, the clock below @upto until the last, and nothing is lost.
 */
static void tw_hier_advance_cap_catch_up_in_batches(struct kunit *test)
{
	const struct twh_cap_param *p = test->param_value;
	const unsigned int bits = 6;
	const u64 g = twh_gran(bits, 2), upto = 4 * g;
	struct twe *t = twh_new(test, bits, 0);
	unsigned int i, calls = 0, total = 0, n;

	t->loose = p->loose;
	for (i = 0; i < 20; i++)
		twe_insert(t, i, 10 + i);
	for (i = 20; i < 100; i++)
		twe_insert(t, i, 2 * g + (i % 4 ? twe_rand(t) % g : 99));
	for (i = 100; i < TWH_NODES; i++)
		twe_insert(t, i, upto + i);
	do {
		n = twe_advance(t, upto, p->cap);
		total += n;
		KUNIT_ASSERT_LT(test, ++calls, 200U);
	} while (twe_clk(t) < upto);
	KUNIT_EXPECT_EQ(test, total, 100U);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), (unsigned long)(TWH_NODES - 100));
	twe_advance(t, TW_NO_TICK, 0);
	twh_expect_each_once(t, TWH_NODES);
}

/* Keys inserted between capped advances, earlier and later, in order. */
static void tw_hier_advance_cap_deferred_before_later(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	unsigned int i, nr = 0;

	for (; nr < 24; nr++)
		twe_insert(t, nr, 300 + nr % 6);
	for (i = 0; i < 6; i++) {
		twe_advance(t, 2000, 5);
		twe_insert(t, nr++, 1000 + 50 * i);
		twe_insert(t, nr++, 301 + i);
	}
	while (twe_clk(t) < 2000)
		twe_advance(t, 2000, 5);
	twh_expect_each_once(t, nr);
}

/* Cap 1 over a span with a node on every level: one per call, in order. */
static void tw_hier_advance_cap_one_every_level(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twh_new(test, bits, 0);
	unsigned int level, nr = 0, calls = 0;

	for (level = 0; level <= TW_HIER_MAX_UP + 1; level++) {
		u64 g = twh_gran(bits, level);

		if (!g)
			break;
		twe_insert(t, nr++, g + 1);
		twe_insert(t, nr++, 3 * g - 1);
	}
	while (tw_engine_count(&t->e)) {
		twe_advance(t, TW_NO_TICK, 1);
		KUNIT_ASSERT_LE(test, ++calls, nr + 1);
	}
	twh_expect_each_once(t, nr);
}

/* ------------------------------------------------------------------- */
/* The 64-bit range                                                     */
/* ------------------------------------------------------------------- */

/* From a clock 2^20 before the end: keys up to the last tick come once. */
static void tw_hier_keys_next_to_u64_max(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, TW_NO_TICK - (1ULL << 20));

	twe_insert(t, 0, TW_NO_TICK - 1);
	twe_insert(t, 1, TW_NO_TICK - 2);
	twe_insert(t, 2, TW_NO_TICK - (1ULL << 19));
	twe_insert(t, 3, TW_NO_TICK - (1ULL << 20));
	twe_insert(t, 4, TW_NO_TICK - 65);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - (1ULL << 20) + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 64, 0), 2U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 2, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), TW_NO_TICK);
	twh_expect_each_once(t, 5);
}

/*
 * With the clock at the last tick, a key anywhere is that tick, and it
 * comes at the end of time.
 */
static void tw_hier_clock_at_last_tick_clamps_every_key(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, TW_NO_TICK - 1);

	twe_insert(t, 0, 0);
	twe_insert(t, 1, 1ULL << 63);
	twe_insert(t, 2, TW_NO_TICK - 1);
	KUNIT_EXPECT_EQ(test, t->nodes[1].key, TW_NO_TICK - 1);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), TW_NO_TICK - 1);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 2), 2U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 2), 1U);
	twh_expect_each_once(t, 3);
}

/* ------------------------------------------------------------------- */
/* pick_key                                                             */
/* ------------------------------------------------------------------- */

/* A key picked in [lo, hi] is in range and fires there, once. */
static void tw_hier_pick_key_fires_within_range(struct kunit *test)
{
	struct twe *t = twh_new(test, 6, 12345);
	unsigned int i;

	for (i = 0; i < 64; i++) {
		u64 r = twe_rand(t), clk = twe_clk(t);
		u64 lo = clk + (r >> (r % 40 + 24)), hi = lo + (r >> (r % 50 + 14));
		u64 key = tw_engine_pick_key(&t->e, lo, hi);

		KUNIT_EXPECT_GE(test, key, lo);
		KUNIT_EXPECT_LE(test, key, hi);
		twe_insert(t, i, key);
	}
	twe_drain(t, 64UL * 64);
	twh_expect_each_once(t, 64);
}

/* ------------------------------------------------------------------- */
/* Placement: hier.c's levels and moves (not engine.h's contract)       */
/* ------------------------------------------------------------------- */

/*
 * Keys just before, at and after every level boundary (and their
 * neighbours), from a clock just below a level-0 block end, advanced tick
 * by tick near each key and in jumps between: each fires at the first
 * advance past its key, and moves at most levels - 1 times.
 */
static void tw_hier_cascade_across_level_boundaries(struct kunit *test)
{
	const unsigned int bits = 4;
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, bits, (1ULL << 32) - 5, TWH_NODES);
	struct tw_hier *h = &t->e.hier;
	u64 base = twe_clk(t);
	unsigned int level, nr = 0;
	int i;

	for (level = 1; level <= h->levels && nr + 3 <= TWH_NODES; level++) {
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
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, twe_hits(t, i), 1UL);
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
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 8, 0, TWH_NODES);
	struct tw_hier *h = &t->e.hier;
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
	KUNIT_EXPECT_EQ(test, twe_hits(t, 0), 1UL);
	KUNIT_EXPECT_EQ(test, h->moves, (u64)ARRAY_SIZE(n) - 1);
	for (i = 1; i < ARRAY_SIZE(n); i++)
		KUNIT_EXPECT_EQ_MSG(test, tw_hier_node_level(h, &t->nodes[i]),
				    n[i].level, "key b + %llu", n[i].off);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), b + 5);
	/* the rest in key order, each at the first advance past its key */
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_key(&t->e, TW_NO_TICK) + 1, 0);
	for (i = 0; i < ARRAY_SIZE(n); i++)
		KUNIT_EXPECT_EQ(test, twe_hits(t, i), 1UL);
	KUNIT_EXPECT_LE(test, h->moves, (u64)ARRAY_SIZE(n) * (h->levels - 1));
}

/*
 * next_lower_bound is the earliest key from the bitmaps and slot bounds: a
 * far timer wakes its caller once, when due, and the advance that hands it
 * out does its cascades (two here) on the way.
 */
static void tw_hier_next_lower_bound_far_timer_one_wakeup(struct kunit *test)
{
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 8, 0, TWH_NODES);
	struct tw_hier *h = &t->e.hier;

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
}

/*
 * Removals of the earliest keys, on level 0 and on an upper level, move the
 * bound on to the next key: no wakeup for a slot the removals emptied, nor
 * for one emptied while the engine held nothing.
 */
static void tw_hier_next_lower_bound_after_removals(struct kunit *test)
{
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 8, 0, TWH_NODES);

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
}

/*
 * A due node alone in the upper slot being cascaded is handed out by that
 * cascade, without moving down level by level, unless something on level
 * 0 comes first: then it is placed lower and handed out in key order.
 */
static void tw_hier_advance_lone_due_timer_never_moves(struct kunit *test)
{
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 8, 0, TWH_NODES);
	struct tw_hier *h = &t->e.hier;
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
	KUNIT_EXPECT_EQ(test, twe_hits(t, 0) + twe_hits(t, 1) + twe_hits(t, 2) +
			      twe_hits(t, 3) + twe_hits(t, 4), 5UL);
}

/*
 * Range placement: a timer whose range covers a whole bucket of the level
 * it lands on is put on the bucket's start and fires from there without a
 * single move; one whose range does not may move.
 */
static void tw_hier_slack_bucket_start_never_cascades(struct kunit *test)
{
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 6, 12345, TWH_NODES);
	struct tw_hier *h = &t->e.hier;
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
	struct twe *t = twe_new(test, TWHEEL_ENGINE_HIER, 8, 0, TWH_NODES);
	struct tw_hier *h = &t->e.hier;
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
	KUNIT_EXPECT_EQ(test, twe_hits(t, 0) + twe_hits(t, 1), 2UL);

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
}

/* ------------------------------------------------------------------- */
/* cascades cut short by the chunk of moves                             */
/* ------------------------------------------------------------------- */

/*
 * The random model check with cascades cut short every few moves (the
 * chunk: 1 to 4), so that advances stop in the middle of a slot and the
 * inserts, removals and moves that follow land in and around the
 * half-cascaded slot.  The model (tests/engines/model.c) accepts a cut
 * only with exactly the chunk moved; every timer still fires once, in
 * order, never early.
 */
static void tw_hier_random_chunked(struct kunit *test)
{
	unsigned int chunk;

	for (chunk = 1; chunk <= 4; chunk++) {
		struct twe *t = twh_new(test, 4, 1000);

		t->rng += chunk;
		tw_engine_set_chunk(&t->e, chunk);
		twe_run_random(t, 3000, 1 << 14);
	}
}

/*
 * One level-1 slot of 80 timers, the clock forwarded onto its block start
 * (no cascade: tw_engine_forward() leaves it), then advanced one tick at a
 * time with a chunk of 8 moves: each advance stops in the middle of the
 * slot, and between them a timer is inserted into the slot's block (on
 * level 0), one still in the slot is removed, one moved earlier, one
 * later.  The queries stay exact throughout (twe_advance() checks them),
 * no advance moves more than 8, and every timer fires once, on time.
 */
static void tw_hier_cascade_cut_short(struct kunit *test)
{
	struct twe *t = twh_new(test, 4, 0);
	struct hlist_head none = HLIST_HEAD_INIT;
	struct tw_hier *h = &t->e.hier;
	unsigned int round, i;
	u64 moves;

	tw_engine_set_chunk(&t->e, 8);
	for (i = 0; i < 80; i++)
		twe_insert(t, i, 32 + i % 16);
	KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 1);
	tw_engine_forward(&t->e, tw_engine_next_lower_bound(&t->e), &none);
	KUNIT_EXPECT_TRUE(test, hlist_empty(&none));
	KUNIT_EXPECT_EQ(test, twe_clk(t), 32ULL);
	KUNIT_EXPECT_EQ(test, h->moves, 0ULL);
	twe_check_queries(t);
	for (round = 0; tw_engine_count(&t->e); round++) {
		moves = h->moves;
		twe_advance(t, twe_clk(t) + 1, 0);
		KUNIT_EXPECT_LE(test, h->moves - moves, 8ULL);
		if (round < 6) {
			/* the slot is cascaded from its list's head: 0 is last */
			KUNIT_EXPECT_EQ(test, tw_hier_node_level(h, &t->nodes[0]), 1);
			twe_insert(t, 80 + round, twe_clk(t) + round);
			twe_remove(t, 10 + round);
			if (twe_pending(t, 20 + round))
				twe_move(t, 20 + round, twe_clk(t) + 20);
			if (twe_pending(t, 30 + round))
				twe_move(t, 30 + round, twe_clk(t));
			twe_check_queries(t);
		}
		KUNIT_ASSERT_LT(test, round, 200U);
	}
	for (i = 0; i < 86; i++)
		KUNIT_EXPECT_EQ_MSG(test, twe_hits(t, i) + (i >= 10 && i < 16),
				    1UL, "node %u", i);
}

static struct kunit_case twheel_hier_cases[] = {
	KUNIT_CASE(tw_hier_init_empty_holds_no_key),
	KUNIT_CASE(tw_hier_insert_every_level_fires_once),
	KUNIT_CASE(tw_hier_insert_past_key_clamped_to_clk),
	KUNIT_CASE(tw_hier_insert_past_key_while_capped_fires_next),
	KUNIT_CASE(tw_hier_remove_every_level_never_handed_out),
	KUNIT_CASE(tw_hier_remove_earliest_moves_bounds_on),
	KUNIT_CASE(tw_hier_reinsert_after_remove_and_fire),
	KUNIT_CASE(tw_hier_advance_empty_moves_clk),
	KUNIT_CASE(tw_hier_advance_upto_not_past_clk_is_noop),
	KUNIT_CASE(tw_hier_advance_fires_only_due_across_levels),
	KUNIT_CASE(tw_hier_advance_tick_by_tick_exactly_once),
	KUNIT_CASE(tw_hier_advance_every_power_of_two),
	KUNIT_CASE(tw_hier_advance_beyond_2_32_ticks),
	KUNIT_CASE(tw_hier_advance_to_end_of_time_in_order),
	KUNIT_CASE(tw_hier_advance_many_on_one_far_tick),
	KUNIT_CASE(tw_hier_advance_catch_up_sparse),
	KUNIT_CASE(tw_hier_remove_while_capped),
	KUNIT_CASE_PARAM(tw_hier_cascade_level_boundaries, twh_edge_gen_params),
	KUNIT_CASE_PARAM(tw_hier_cascade_driven_by_lower_bound,
			 twh_edge_gen_params),
	KUNIT_CASE(tw_hier_next_key_exact_on_every_level),
	KUNIT_CASE(tw_hier_next_key_earliest_in_upper_slot),
	KUNIT_CASE(tw_hier_next_key_beyond_bound),
	KUNIT_CASE(tw_hier_next_lower_bound_after_upper_removals),
	KUNIT_CASE_PARAM(tw_hier_random_ops_keep_contract, twh_rand_gen_params),
	KUNIT_CASE(tw_hier_move_between_every_pair_of_levels),
	KUNIT_CASE(tw_hier_move_later_past_another_key),
	KUNIT_CASE(tw_hier_move_while_capped),
	KUNIT_CASE_PARAM(tw_hier_advance_cap_catch_up_in_batches,
			 twh_cap_gen_params),
	KUNIT_CASE(tw_hier_advance_cap_deferred_before_later),
	KUNIT_CASE(tw_hier_advance_cap_one_every_level),
	KUNIT_CASE(tw_hier_keys_next_to_u64_max),
	KUNIT_CASE(tw_hier_clock_at_last_tick_clamps_every_key),
	KUNIT_CASE(tw_hier_pick_key_fires_within_range),
	KUNIT_CASE(tw_hier_cascade_across_level_boundaries),
	KUNIT_CASE(tw_hier_cascade_one_level_down),
	KUNIT_CASE(tw_hier_next_lower_bound_far_timer_one_wakeup),
	KUNIT_CASE(tw_hier_next_lower_bound_after_removals),
	KUNIT_CASE(tw_hier_advance_lone_due_timer_never_moves),
	KUNIT_CASE(tw_hier_slack_bucket_start_never_cascades),
	KUNIT_CASE(tw_hier_move_later_stays_in_place),
	KUNIT_CASE(tw_hier_random_chunked),
	KUNIT_CASE(tw_hier_cascade_cut_short),
	{}
};

static struct kunit_suite twheel_hier_suite = {
	.name = "twheel_hier",
	.test_cases = twheel_hier_cases,
};

kunit_test_suite(twheel_hier_suite);
