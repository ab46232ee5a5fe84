// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_lawn": the Timer Lawn engine, src/lawn.c (a sorted
 * FIFO per timeout duration, a min-heap over the FIFO heads).
 *
 * Every call goes through the engines' one reference model
 * (tests/engines/model.h, via engine_util.h), which checks what
 * src/engine.h promises after each: never early, exactly once, nothing
 * lost, the cap, key order, the count, next_key() exact, and for the Lawn
 * next_lower_bound() exact too.  On top, the Lawn's own promises: a FIFO
 * per duration costs no sorting while timers of one duration start in
 * time order (the sorted-inserts counter stays 0), more durations than
 * FIFOs still keep every FIFO sorted, and a capped advance stops the clock
 * at the first key it did not hand out.
 *
 * Randomised cases use a fixed xorshift seed; every loop is bounded so that
 * each case stays well under a second under TCG and KASAN.
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/twheel.h>

#include "engine_util.h"
#include "lawn.h"
#include "twheel_kunit.h"

#define TWL_NODES	128U

static struct twe *twl_new(struct kunit *test, unsigned int bits, u64 clk)
{
	return twe_new(test, TWHEEL_ENGINE_LAWN, bits, clk, TWL_NODES);
}

/* Each of the first @nr nodes fired exactly once. */
static void twl_expect_each_once(struct twe *t, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(t->test, twe_hits(t, i), 1UL, "node %u", i);
}

static void tw_lawn_init_empty_holds_no_key(struct kunit *test)
{
	struct twe *t = twl_new(test, 6, 1000);

	KUNIT_EXPECT_EQ(test, twe_clk(t), 1000ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
	KUNIT_EXPECT_EQ(test, tw_engine_slots(&t->e), 64ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1ULL << 40, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 1ULL << 40);
}

/* However many slots are asked for, at most 2^TW_LAWN_MAX_QBITS FIFOs. */
static void tw_lawn_init_caps_fifo_count(struct kunit *test)
{
	struct twe *t = twl_new(test, 13, 0);

	KUNIT_EXPECT_EQ(test, tw_engine_slots(&t->e), 1ULL << TW_LAWN_MAX_QBITS);
	twe_insert(t, 0, 5);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 6, 0), 1U);
}

static void tw_lawn_insert_past_key_clamped_to_clk(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, 5000);

	twe_insert(t, 0, 10);
	twe_insert(t, 1, 0);
	KUNIT_EXPECT_EQ(test, t->nodes[0].key, 5000ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), 5000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 5001, 0), 2U);
}

/*
 * Timers of a few durations, each started a tick after the one before:
 * every key fits the end of its FIFO, none is sorted in, and they fire in
 * key order.
 */
static void tw_lawn_insert_few_durations_never_sorted(struct kunit *test)
{
	static const u64 dur[] = { 10, 250, 1000, 60000 };
	struct twe *t = twl_new(test, 6, 0);
	unsigned int i, nr = 0;

	for (i = 0; i < 30; i++) {
		unsigned int d;

		for (d = 0; d < ARRAY_SIZE(dur); d++)
			twe_insert(t, nr++, twe_clk(t) + dur[d]);
		twe_advance(t, twe_clk(t) + 1, 0);
	}
	KUNIT_EXPECT_EQ(test, tw_engine_moves(&t->e), 0ULL);
	KUNIT_EXPECT_EQ(test, tw_engine_max_slot(&t->e), 0UL);
	twe_advance(t, TW_NO_TICK, 0);
	twl_expect_each_once(t, nr);
}

/*
 * More durations than FIFOs (16), in no order: keys are sorted into their
 * FIFOs, and still come out in key order, the bound exact throughout.
 */
static void tw_lawn_insert_many_durations_sorted_in(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, 100);
	unsigned int i;

	for (i = 0; i < TWL_NODES; i++) {
		twe_insert(t, i, 100 + twe_rand(t) % 100000);
		twe_check_queries(t);
	}
	KUNIT_EXPECT_GT(test, tw_engine_moves(&t->e), 0ULL);
	KUNIT_EXPECT_GT(test, tw_engine_max_slot(&t->e), 0UL);
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_lower_bound(&t->e) + 1, 0);
	twl_expect_each_once(t, TWL_NODES);
}

/* One FIFO of equal keys: its head, a middle node and its tail removed. */
static void tw_lawn_remove_head_middle_tail(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, 0);
	unsigned int i;

	for (i = 0; i < 5; i++)
		twe_insert(t, i, 500);
	twe_insert(t, 5, 700);
	twe_remove(t, 0);
	twe_check_queries(t);
	twe_remove(t, 2);
	twe_remove(t, 4);
	twe_check_queries(t);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 501, 0), 2U);
	twe_remove(t, 5);
	KUNIT_EXPECT_EQ(test, tw_engine_next_lower_bound(&t->e), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1000, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_hits(t, 1) + twe_hits(t, 3), 2UL);
}

/* Removing the earliest node each time moves the exact bound on. */
static void tw_lawn_remove_earliest_keeps_bound_exact(struct kunit *test)
{
	struct twe *t = twl_new(test, 5, 0);
	unsigned int i;

	for (i = 0; i < 64; i++)
		twe_insert(t, i, twe_rand(t) % 5000);
	while (tw_engine_count(&t->e)) {
		u64 min = twm_min(&t->m);

		for (i = 0; i < 64; i++)
			if (twe_pending(t, i) && t->nodes[i].key == min)
				break;
		KUNIT_ASSERT_LT(test, i, 64U);
		twe_remove(t, i);
		twe_check_queries(t);
	}
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 0U);
}

static void tw_lawn_advance_upto_not_past_clk_is_noop(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, 1000);

	twe_insert(t, 0, 1000);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1000, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 3, 0), 0U);
	KUNIT_EXPECT_EQ(test, twe_clk(t), 1000ULL);
	KUNIT_EXPECT_EQ(test, twe_advance(t, 1001, 0), 1U);
}

struct twl_cap_param {
	const char *name;
	unsigned int cap;
	bool loose;
};

static const struct twl_cap_param twl_cap_params[] = {
	{ "cap1", 1, false },
	{ "cap4_loose", 4, true },
	{ "cap16", 16, false },
};

TWK_ARRAY_PARAM_BY_NAME(twl_cap);

/*
 * A capped catch-up over keys in many FIFOs: at most the cap per advance,
 * in key order, and the clock stops at the first key not handed out.
 */
static void tw_lawn_advance_cap_stops_clock_at_next_key(struct kunit *test)
{
	const struct twl_cap_param *p = test->param_value;
	struct twe *t = twl_new(test, 4, 0);
	unsigned int i, total = 0, calls = 0, n;

	t->loose = p->loose;
	for (i = 0; i < 100; i++)
		twe_insert(t, i, 10 + twe_rand(t) % 3000);
	do {
		n = twe_advance(t, 5000, p->cap);
		total += n;
		if (twe_clk(t) < 5000)
			KUNIT_EXPECT_EQ(test, twe_clk(t),
					tw_engine_next_key(&t->e, TW_NO_TICK));
		KUNIT_ASSERT_LT(test, ++calls, 200U);
	} while (twe_clk(t) < 5000);
	KUNIT_EXPECT_EQ(test, total, 100U);
	twl_expect_each_once(t, 100);
}

/* tw_engine_move(): earlier, later, to the same key and into the past. */
static void tw_lawn_move_every_direction(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, 100);
	unsigned int i;

	for (i = 0; i < 40; i++)
		twe_insert(t, i, 100 + 10 * i);
	for (i = 0; i < 40; i += 4) {
		twe_move(t, i, 100 + 5 * i);
		twe_move(t, i + 1, 100 + 1000 * i);
		twe_move(t, i + 2, t->nodes[i + 2].key);
		twe_move(t, i + 3, 0);
	}
	twe_check_queries(t);
	twe_advance(t, TW_NO_TICK, 0);
	twl_expect_each_once(t, 40);
}

/* From a clock 2^20 before the end: keys up to the last tick come once. */
static void tw_lawn_keys_next_to_u64_max(struct kunit *test)
{
	struct twe *t = twl_new(test, 4, TW_NO_TICK - (1ULL << 20));

	twe_insert(t, 0, TW_NO_TICK - 1);
	twe_insert(t, 1, TW_NO_TICK - 2);
	twe_insert(t, 2, TW_NO_TICK - (1ULL << 19));
	twe_insert(t, 3, 0);
	KUNIT_EXPECT_EQ(test, t->nodes[3].key, TW_NO_TICK - (1ULL << 20));
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 2, 0), 2U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK - 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
	twl_expect_each_once(t, 4);
}

struct twl_rand_param {
	const char *name;
	unsigned int bits;
	u64 clk;
	u64 span;
};

static const struct twl_rand_param twl_rand_params[] = {
	{ "bits4_from_0", 4, 0, 1 << 20 },
	{ "bits10_far", 10, 1000, 1ULL << 40 },
	{ "bits5_near_2^64", 5, TW_NO_TICK - (1ULL << 22), 1ULL << 21 },
};

TWK_ARRAY_PARAM_BY_NAME(twl_rand);

/*
 * Random inserts, removes, moves and capped, uncapped, loose and exact
 * advances, every query checked after each advance, then a drain.
 */
static void tw_lawn_random_ops_keep_contract(struct kunit *test)
{
	const struct twl_rand_param *p = test->param_value;
	struct twe *t = twl_new(test, p->bits, p->clk);

	t->rng ^= p->clk + p->bits;
	twe_run_random(t, 3000, p->span);
}

static struct kunit_case twheel_lawn_cases[] = {
	KUNIT_CASE(tw_lawn_init_empty_holds_no_key),
	KUNIT_CASE(tw_lawn_init_caps_fifo_count),
	KUNIT_CASE(tw_lawn_insert_past_key_clamped_to_clk),
	KUNIT_CASE(tw_lawn_insert_few_durations_never_sorted),
	KUNIT_CASE(tw_lawn_insert_many_durations_sorted_in),
	KUNIT_CASE(tw_lawn_remove_head_middle_tail),
	KUNIT_CASE(tw_lawn_remove_earliest_keeps_bound_exact),
	KUNIT_CASE(tw_lawn_advance_upto_not_past_clk_is_noop),
	KUNIT_CASE_PARAM(tw_lawn_advance_cap_stops_clock_at_next_key,
			 twl_cap_gen_params),
	KUNIT_CASE(tw_lawn_move_every_direction),
	KUNIT_CASE(tw_lawn_keys_next_to_u64_max),
	KUNIT_CASE_PARAM(tw_lawn_random_ops_keep_contract, twl_rand_gen_params),
	{}
};

static struct kunit_suite twheel_lawn_suite = {
	.name = "twheel_lawn",
	.test_cases = twheel_lawn_cases,
};

kunit_test_suite(twheel_lawn_suite);
