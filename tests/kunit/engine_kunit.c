// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_engine": every engine behind src/engine.h (Scheme 6,
 * hierarchical, Timer Lawn) on the same cases, each run once per engine
 * (KUNIT_CASE_PARAM), against the engines' one reference model
 * (tests/engines/model.h, which the userspace fuzzer uses too): never
 * early, exactly once, nothing lost, the cap, order, the count and both
 * next-expiry queries, checked after every call.  Each engine's own cases
 * are its suite's: wheel_kunit.c, hier_kunit.c, lawn_kunit.c.
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

#include "engine_util.h"

#define TWE_NODES	96

/*
 * Random operations (engine_util.c) from clocks at 0, below 2^32 and (not
 * Scheme 6, which promises nothing near U64_MAX) near 2^64, then a drain.
 */
static void twe_random(struct kunit *test, unsigned int bits, u64 clk0,
		       u64 span)
{
	struct twe *t = twe_new(test, twe_param(test), bits, clk0, TWE_NODES);

	twe_run_random(t, 3000, span);
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
	if (twe_param(test) == TWHEEL_ENGINE_SCHEME6)
		kunit_skip(test, "Scheme 6 keeps keys below 2^62");
	twe_random(test, 5, TW_NO_TICK - (1ULL << 22), 1ULL << 21);
}

/* The cap: batches of @max, the rest first, nothing lost or reordered. */
static void tw_engine_advance_cap_in_batches(struct kunit *test)
{
	struct twe *t = twe_new(test, twe_param(test), 6, 100, TWE_NODES);
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
	struct twe *t = twe_new(test, twe_param(test), 6, 100, TWE_NODES);
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
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
	for (i = 0; i < 22; i++)
		KUNIT_EXPECT_EQ(test, twe_hits(t, i), 1UL);
}

/* Keys next to U64_MAX fire when the last tick is over. */
static void tw_engine_64bit_end_of_time(struct kunit *test)
{
	struct twe *t;

	if (twe_param(test) == TWHEEL_ENGINE_SCHEME6)
		kunit_skip(test, "Scheme 6 keeps keys below 2^62");
	t = twe_new(test, twe_param(test), 4, 0, TWE_NODES);
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
}

/*
 * After an advance to the end of time the clock stays on the last tick: an
 * insert then still gets a key below TW_NO_TICK, is counted, found by the
 * queries and handed out by the next advance to the end.  It used to get
 * TW_NO_TICK, the queries' "empty", while the count said one.
 */
static void tw_engine_insert_after_end_of_time(struct kunit *test)
{
	struct twe *t;

	if (twe_param(test) == TWHEEL_ENGINE_SCHEME6)
		kunit_skip(test, "Scheme 6 keeps keys below 2^62");
	t = twe_new(test, twe_param(test), 4, 0, TWE_NODES);
	twe_insert(t, 0, 7);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
	KUNIT_EXPECT_LT(test, twe_clk(t), TW_NO_TICK);
	twe_insert(t, 1, 5);
	KUNIT_EXPECT_LT(test, t->nodes[1].key, TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 1UL);
	KUNIT_EXPECT_NE(test, tw_engine_next_lower_bound(&t->e), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_engine_next_key(&t->e, TW_NO_TICK),
			t->nodes[1].key);
	KUNIT_EXPECT_EQ(test, twe_advance(t, TW_NO_TICK, 0), 1U);
	KUNIT_EXPECT_EQ(test, tw_engine_count(&t->e), 0UL);
}

static struct kunit_case twheel_engine_cases[] = {
	KUNIT_CASE_PARAM(tw_engine_random_from_zero, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_across_2_32, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_near_2_64, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_random_two_summary_words, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_advance_cap_in_batches, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_advance_loose_cap_puts_back, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_64bit_end_of_time, twe_gen_params),
	KUNIT_CASE_PARAM(tw_engine_insert_after_end_of_time, twe_gen_params),
	{}
};

static struct kunit_suite twheel_engine_suite = {
	.name = "twheel_engine",
	.test_cases = twheel_engine_cases,
};

kunit_test_suite(twheel_engine_suite);
