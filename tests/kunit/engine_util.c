// SPDX-License-Identifier: GPL-2.0
/*
 * The engine suites' shared harness: see engine_util.h.
 */
#include <kunit/test.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "engine_util.h"

/**
 * twe_new() - an empty engine and its model, freed after the case
 * @test: the running test
 * @kind: enum twheel_engine
 * @bits: log2 of its level-0 slots (FIFOs for the Lawn)
 * @clk:  its first tick
 * @n:    nodes to test with
 *
 * Return: the engine under test.
 */
struct twe *twe_new(struct kunit *test, enum twheel_engine kind,
		    unsigned int bits, u64 clk, unsigned int n)
{
	struct twe *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	struct twm_node *model;
	void *mem;

	KUNIT_ASSERT_NOT_NULL(test, t);
	mem = kunit_kzalloc(test, tw_engine_mem_size(kind, bits), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	t->nodes = kunit_kcalloc(test, n, sizeof(*t->nodes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->nodes);
	model = kunit_kcalloc(test, n, sizeof(*model), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, model);
	t->test = test;
	t->n = n;
	t->rng = 0x9e3779b97f4a7c15ULL;
	tw_engine_init(&t->e, kind, mem, bits, clk);
	twm_init(&t->m, &t->e, t->nodes, model, n);
	return t;
}

/* xorshift64: the same sequence on every run, so a failure reproduces. */
u64 twe_rand(struct twe *t)
{
	u64 x = t->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return x;
}

/* Insert node @i at @key; a pending node is removed first. */
void twe_insert(struct twe *t, unsigned int i, u64 key)
{
	KUNIT_ASSERT_LT(t->test, i, t->n);
	if (twe_pending(t, i))
		twm_remove(&t->m, i);
	twm_insert(&t->m, i, key);
	twe_ok(t);
}

/* tw_engine_move() of pending node @i to @key. */
void twe_move(struct twe *t, unsigned int i, u64 key)
{
	KUNIT_ASSERT_LT(t->test, i, t->n);
	twm_move(&t->m, i, key);
	twe_ok(t);
}

/* Remove node @i if it is pending. */
void twe_remove(struct twe *t, unsigned int i)
{
	KUNIT_ASSERT_LT(t->test, i, t->n);
	if (!twe_pending(t, i))
		return;
	twm_remove(&t->m, i);
	twe_ok(t);
}

/* The count and both next-expiry queries against the model. */
void twe_check_queries(struct twe *t)
{
	twm_check_queries(&t->m);
	twe_ok(t);
}

/*
 * Advance to @upto with cap @max (through the loose path if @t->loose),
 * check it and the queries afterwards.  Returns the number handed out.
 */
unsigned int twe_advance(struct twe *t, u64 upto, unsigned int max)
{
	struct hlist_head expired = HLIST_HEAD_INIT;
	unsigned int n;

	n = twm_advance(&t->m, upto, max, t->loose, &expired);
	twe_ok(t);
	KUNIT_ASSERT_TRUE(t->test, hlist_empty(&expired));
	twe_check_queries(t);
	return n;
}

/*
 * Fire everything pending as a tickless caller does: wake at the lower
 * bound, advance past it, and again, at most @limit times.  Returns the
 * number of advances it took.
 */
unsigned long twe_drain(struct twe *t, unsigned long limit)
{
	unsigned long wakeups = 0;

	while (tw_engine_count(&t->e)) {
		u64 lb = tw_engine_next_lower_bound(&t->e);

		KUNIT_ASSERT_LT_MSG(t->test, wakeups, limit,
				    "%lu nodes left after %lu wakeups",
				    tw_engine_count(&t->e), wakeups);
		KUNIT_ASSERT_NE(t->test, lb, TW_NO_TICK);
		twe_advance(t, lb + 1, 0);
		wakeups++;
	}
	return wakeups;
}

/**
 * twe_run_random() - random operations, then everything fired
 * @t:     the engine under test
 * @steps: operations
 * @span:  how far ahead keys and advances reach, now and then
 *
 * Inserts, removes, moves and capped or uncapped, loose or exact advances
 * of random length, mostly short; then a drain, in which every node left
 * fires exactly once, on time.
 */
void twe_run_random(struct twe *t, unsigned int steps, u64 span)
{
	unsigned int step, i;

	for (step = 0; step < steps; step++) {
		u64 r = twe_rand(t), clk = twe_clk(t), room, d = r >> 40;

		/* the clock at U64_MAX is the end of time: nothing can be due */
		if (clk >= TW_NO_TICK - 1)
			break;
		room = TW_NO_TICK - 1 - clk;

		i = r % t->n;
		switch ((r >> 8) % 8) {
		case 0:
		case 1:
		case 2:
			d = (r >> 16) % 4 ? d % 64 : d % span;
			if (twe_pending(t, i) && (r >> 8) % 8 == 2)
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
	while (tw_engine_count(&t->e))
		twe_advance(t, tw_engine_next_key(&t->e, TW_NO_TICK) + 1, 0);
	for (i = 0; i < t->n; i++)
		KUNIT_EXPECT_FALSE(t->test, twe_pending(t, i));
}

static const enum twheel_engine twe_engines[] = {
	TWHEEL_ENGINE_HIER, TWHEEL_ENGINE_SCHEME6, TWHEEL_ENGINE_LAWN,
};

static void twe_desc(const enum twheel_engine *e, char *desc)
{
	strscpy(desc, tw_engine_name(*e), KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(twe_all, twe_engines, twe_desc);

/* KUNIT_CASE_PARAM() generator: each case once per engine. */
#ifdef KUNIT_CASE_PARAM_WITH_INIT
const void *twe_gen_params(struct kunit *test, const void *prev, char *desc)
{
	return twe_all_gen_params(test, prev, desc);
}
#else
const void *twe_gen_params(const void *prev, char *desc)
{
	return twe_all_gen_params(prev, desc);
}
#endif
