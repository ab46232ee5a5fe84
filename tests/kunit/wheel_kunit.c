// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the pure hashed timing wheel (src/wheel.c).
 *
 * The wheel reads no clock: every case is the clock, and says which ticks
 * are over by calling tw_wheel_advance(w, upto, ...).  Cases run against
 * the engines' one reference model (tests/engines/model.h, through
 * engine_util.h), checked after every insert, remove and advance: never
 * early, exactly once and on time, nothing lost, the cap, order, count and
 * "every key >= @clk"; and here against the wheel's own structure: every
 * node in the slot of its key and not below the slot's bound, the occupied
 * bitmap set exactly for the non-empty slots.
 *
 * Randomised cases use a xorshift generator seeded from the parameter, so a
 * failure reproduces; every loop is bounded to keep each case well under
 * 100 ms under TCG and KASAN.
 */
#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "twheel_kunit.h"
#include "engine_util.h"
#include "wheel.h"

/* --------------------------------------------------------------------- */
/* Deterministic pseudo-random numbers                                    */
/* --------------------------------------------------------------------- */

struct twk_rng {
	u64 s;
};

static void twk_rng_init(struct twk_rng *r, u64 seed)
{
	r->s = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	if (!r->s)
		r->s = 1;
}

static u64 twk_rand(struct twk_rng *r)
{
	u64 x = r->s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->s = x;
	return x;
}

/* Uniform enough in [0, @n); 0 when @n is 0. */
static u64 twk_below(struct twk_rng *r, u64 n)
{
	u64 rem;

	if (!n)
		return 0;
	div64_u64_rem(twk_rand(r), n, &rem);
	return rem;
}

/* --------------------------------------------------------------------- */
/* The wheel under test plus its reference model                          */
/* --------------------------------------------------------------------- */

/**
 * struct twk - a wheel under test and its model
 * @test:  the running test
 * @te:    the engine (Scheme 6) and the model, engine_util.h
 * @w:     @te's wheel
 * @nodes: the nodes, all owned by the test
 * @m:     the model of each node
 * @n:     number of nodes
 */
struct twk {
	struct kunit *test;
	struct twe *te;
	struct tw_wheel *w;
	struct twheel_node *nodes;
	struct twm_node *m;
	unsigned int n;
};

static struct tw_wheel *twk_wheel_new(struct kunit *test, unsigned int bits,
				      u64 clk)
{
	size_t size = 1UL << bits;
	struct hlist_head *slots;
	unsigned long *occupied;
	struct tw_wheel *w;
	u64 *low;

	w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	slots = kunit_kcalloc(test, size, sizeof(*slots), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slots);
	low = kunit_kcalloc(test, size, sizeof(*low), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, low);
	occupied = kunit_kcalloc(test, BITS_TO_LONGS(size), sizeof(*occupied),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, occupied);
	tw_wheel_init(w, slots, low, occupied, bits, clk);
	return w;
}

static struct twk *twk_new(struct kunit *test, unsigned int bits, u64 clk,
			   unsigned int n)
{
	struct twk *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, t);
	t->test = test;
	t->te = twe_new(test, TWHEEL_ENGINE_SCHEME6, bits, clk, n);
	t->w = &t->te->e.wheel;
	t->nodes = t->te->nodes;
	t->m = t->te->m.node;
	t->n = n;
	return t;
}

static u64 twk_mask(const struct tw_wheel *w)
{
	return tw_wheel_size(w) - 1;
}

static unsigned long twk_slot_len(const struct tw_wheel *w, u64 tick)
{
	const struct twheel_node *node;
	unsigned long len = 0;

	hlist_for_each_entry(node, &w->slots[tick & twk_mask(w)], entry)
		len++;
	return len;
}

static bool twk_in_slot(const struct tw_wheel *w, const struct twheel_node *n)
{
	const struct twheel_node *node;

	hlist_for_each_entry(node, &w->slots[n->key & twk_mask(w)], entry)
		if (node == n)
			return true;
	return false;
}

static bool twk_occupied(const struct tw_wheel *w, u64 tick)
{
	return test_bit(tick & twk_mask(w), w->occupied);
}

/* The model's smallest pending key, TW_NO_TICK if none. */
static u64 twk_model_min(const struct twk *t)
{
	return twm_min(&t->te->m);
}

/*
 * Full structural check, O(slots + nodes): the bitmap matches the slot
 * lists, every node sits in the slot of its key, no key is below @clk and
 * @count is the number of linked nodes and the model's pending count.
 */
static void twk_check_wheel(struct twk *t)
{
	struct kunit *test = t->test;
	const struct tw_wheel *w = t->w;
	const struct twheel_node *node;
	unsigned long linked = 0;
	u64 s;

	for (s = 0; s < tw_wheel_size(w); s++) {
		bool bit = test_bit(s, w->occupied);
		bool empty = hlist_empty(&w->slots[s]);

		KUNIT_ASSERT_NE_MSG(test, bit, empty,
				    "slot %llu: occupied bit %d, list %s", s,
				    bit, empty ? "empty" : "non-empty");
		hlist_for_each_entry(node, &w->slots[s], entry) {
			KUNIT_ASSERT_EQ_MSG(test, node->key & twk_mask(w), s,
					    "key %llu in slot %llu", node->key,
					    s);
			KUNIT_ASSERT_GE_MSG(test, node->key, w->clk,
					    "key %llu below clk %llu",
					    node->key, w->clk);
			KUNIT_ASSERT_GE_MSG(test, node->key, w->low[s],
					    "key %llu below slot %llu's bound %llu",
					    node->key, s, w->low[s]);
			linked++;
		}
	}
	KUNIT_ASSERT_EQ(test, linked, w->count);
	KUNIT_ASSERT_EQ(test, w->count, t->te->m.pending);
}

static void twk_insert(struct twk *t, unsigned int i, u64 key)
{
	struct kunit *test = t->test;

	KUNIT_ASSERT_LT(test, i, t->n);
	KUNIT_ASSERT_FALSE(test, tw_node_linked(&t->nodes[i]));
	twe_insert(t->te, i, key);
	KUNIT_ASSERT_TRUE(test, twk_occupied(t->w, t->nodes[i].key));
}

static void twk_remove(struct twk *t, unsigned int i)
{
	struct kunit *test = t->test;
	struct tw_wheel *w = t->w;
	u64 key;

	KUNIT_ASSERT_LT(test, i, t->n);
	KUNIT_ASSERT_EQ(test, t->m[i].state, (u8)TWM_PENDING);
	key = t->nodes[i].key;
	twe_remove(t->te, i);
	/* The slot's bit stays set exactly while the slot has other nodes. */
	KUNIT_ASSERT_EQ(test, twk_occupied(w, key), twk_slot_len(w, key) != 0);
}

/*
 * One tw_wheel_advance() checked against the model, which takes what was
 * handed out off the list, so that the nodes can be re-inserted.  Returns
 * the number of nodes handed out.
 */
static unsigned int twk_advance(struct twk *t, u64 upto, unsigned int max)
{
	struct hlist_head expired = HLIST_HEAD_INIT;
	unsigned int ret;

	ret = twm_advance(&t->te->m, upto, max, false, &expired);
	twe_ok(t->te);
	return ret;
}

/*
 * Advance to @upto with cap @max, repeating (as the facility's immediate
 * re-tick does) until the wheel's clock reaches @upto.  Returns the total.
 */
static unsigned long twk_advance_to(struct twk *t, u64 upto, unsigned int max)
{
	struct kunit *test = t->test;
	unsigned long total = 0, calls = 0;
	unsigned long limit = t->te->m.pending / (max ? max : 1) + 2;

	do {
		total += twk_advance(t, upto, max);
		if (t->w->clk < upto)
			KUNIT_ASSERT_EQ(test, t->te->m.got, max);
		KUNIT_ASSERT_LE_MSG(test, ++calls, limit,
				    "no progress towards %llu", upto);
	} while (t->w->clk < upto);
	return total;
}

/* Nodes handed out in the last advance, as a bitmask of indices < 64. */
static u64 twk_fired_mask(const struct twk *t, u64 upto)
{
	unsigned int i;
	u64 m = 0;

	for (i = 0; i < t->n && i < 64; i++)
		if (t->m[i].state == TWM_FIRED && t->m[i].fired_at == upto)
			m |= 1ULL << i;
	return m;
}

/* --------------------------------------------------------------------- */
/* init, insert, remove, re-insert                                        */
/* --------------------------------------------------------------------- */

static void tw_wheel_init_clears_slots_and_bitmap(struct kunit *test)
{
	const unsigned int bits = 8;
	const size_t size = 1UL << bits;
	struct hlist_head *slots;
	unsigned long *occupied;
	struct tw_wheel w;
	size_t s, busy = 0;
	u64 *low;

	slots = kunit_kcalloc(test, size, sizeof(*slots), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, slots);
	/* Slot bounds need no initialisation: they count only when occupied. */
	low = kunit_kcalloc(test, size, sizeof(*low), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, low);
	memset(low, 0x5a, size * sizeof(*low));
	occupied = kunit_kcalloc(test, BITS_TO_LONGS(size), sizeof(*occupied),
				 GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, occupied);
	/* Stale memory must not survive initialisation. */
	memset(slots, 0x5a, size * sizeof(*slots));
	bitmap_fill(occupied, size);
	memset(&w, 0x5a, sizeof(w));

	tw_wheel_init(&w, slots, low, occupied, bits, 1234);

	KUNIT_EXPECT_EQ(test, w.clk, 1234ULL);
	KUNIT_EXPECT_EQ(test, w.count, 0UL);
	KUNIT_EXPECT_EQ(test, w.bits, bits);
	KUNIT_EXPECT_EQ(test, w.max_slot, 0UL);
	KUNIT_EXPECT_EQ(test, tw_wheel_size(&w), (u64)size);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(occupied, size));
	for (s = 0; s < size; s++)
		busy += !hlist_empty(&slots[s]);
	KUNIT_EXPECT_EQ(test, busy, (size_t)0);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(&w), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(&w, TW_NO_TICK), TW_NO_TICK);
}

static void tw_wheel_insert_sets_key_bit_and_count(struct kunit *test)
{
	struct twk *t = twk_new(test, 6, 100, 2);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 105);
	KUNIT_EXPECT_EQ(test, t->nodes[0].key, 105ULL);
	KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[0]));
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 105));
	KUNIT_EXPECT_EQ(test, w->count, 1UL);
	KUNIT_EXPECT_EQ(test, bitmap_weight(w->occupied, 64), 1U);

	twk_insert(t, 1, 110);
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 110));
	KUNIT_EXPECT_EQ(test, w->count, 2UL);
	KUNIT_EXPECT_EQ(test, bitmap_weight(w->occupied, 64), 2U);
	/* Insertion does not move the clock. */
	KUNIT_EXPECT_EQ(test, w->clk, 100ULL);
	twk_check_wheel(t);
}

static void tw_wheel_insert_same_slot_shares_one_bit(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 3);
	struct tw_wheel *w = t->w;

	/* Three revolutions apart, one of them more than 2^32 ticks out. */
	twk_insert(t, 0, 5);
	twk_insert(t, 1, 5 + 16);
	twk_insert(t, 2, 5 + (16ULL << 30));
	KUNIT_EXPECT_EQ(test, w->count, 3UL);
	KUNIT_EXPECT_EQ(test, bitmap_weight(w->occupied, 16), 1U);
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 5));
	KUNIT_EXPECT_EQ(test, twk_slot_len(w, 5), 3UL);
	twk_check_wheel(t);
}

static void tw_wheel_remove_only_node_clears_bit(struct kunit *test)
{
	struct twk *t = twk_new(test, 5, 7, 1);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 40);
	KUNIT_ASSERT_TRUE(test, twk_occupied(w, 40));
	twk_remove(t, 0);
	KUNIT_EXPECT_FALSE(test, twk_occupied(w, 40));
	KUNIT_EXPECT_FALSE(test, tw_node_linked(&t->nodes[0]));
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(w->occupied, 32));
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), TW_NO_TICK);
	twk_check_wheel(t);
}

static void tw_wheel_remove_one_of_two_keeps_bit(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 3);
	struct tw_wheel *w = t->w;

	/* Same slot; remove from the middle, then the tail, then the head. */
	twk_insert(t, 0, 3);
	twk_insert(t, 1, 3 + 16);
	twk_insert(t, 2, 3 + 32);

	twk_remove(t, 1);
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 3));
	KUNIT_EXPECT_EQ(test, twk_slot_len(w, 3), 2UL);
	KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[0]));
	KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[2]));

	twk_remove(t, 0);
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 3));
	KUNIT_EXPECT_EQ(test, w->count, 1UL);

	twk_remove(t, 2);
	KUNIT_EXPECT_FALSE(test, twk_occupied(w, 3));
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	twk_check_wheel(t);
}

static void tw_wheel_remove_node_not_handed_out(struct kunit *test)
{
	struct twk *t = twk_new(test, 6, 100, 4);
	struct tw_wheel *w = t->w;
	unsigned int i;

	for (i = 0; i < 4; i++)
		twk_insert(t, i, 110);
	twk_remove(t, 1);
	twk_remove(t, 2);

	KUNIT_EXPECT_EQ(test, twk_advance(t, 111, 0), 2U);
	KUNIT_EXPECT_EQ(test, t->m[0].hits, 1U);
	KUNIT_EXPECT_EQ(test, t->m[1].hits, 0U);
	KUNIT_EXPECT_EQ(test, t->m[2].hits, 0U);
	KUNIT_EXPECT_EQ(test, t->m[3].hits, 1U);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_FALSE(test, twk_occupied(w, 110));
	/* Much later, still nothing. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, 110 + 64 * 10, 0), 0U);
	twk_check_wheel(t);
}

static void tw_wheel_reinsert_after_remove_moves_slot(struct kunit *test)
{
	struct twk *t = twk_new(test, 5, 0, 1);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 5);
	twk_remove(t, 0);
	twk_insert(t, 0, 20);
	KUNIT_EXPECT_FALSE(test, twk_occupied(w, 5));
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 20));
	KUNIT_EXPECT_EQ(test, t->nodes[0].key, 20ULL);
	KUNIT_EXPECT_EQ(test, w->count, 1UL);

	/* Not at its old key, exactly at its new one. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, 6, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 20, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 21, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[0].hits, 1U);
	twk_check_wheel(t);
}

static void tw_wheel_reinsert_after_fire_fires_again(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 1);
	u64 upto;

	twk_insert(t, 0, 9);
	for (upto = 1; upto <= 10; upto++)
		twk_advance(t, upto, 0);
	KUNIT_ASSERT_EQ(test, t->m[0].hits, 1U);
	KUNIT_EXPECT_EQ(test, t->m[0].fired_at, 10ULL);

	/* Periodic re-arm from the expired list: one revolution later. */
	twk_insert(t, 0, 9 + 16);
	for (upto = 11; upto <= 40; upto++)
		twk_advance(t, upto, 0);
	KUNIT_EXPECT_EQ(test, t->m[0].hits, 2U);
	KUNIT_EXPECT_EQ(test, t->m[0].fired_at, 26ULL);
	twk_check_wheel(t);
}

static void tw_wheel_insert_past_key_clamped_to_clk(struct kunit *test)
{
	struct twk *t = twk_new(test, 6, 1000, 4);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 3);
	twk_insert(t, 1, 999);
	twk_insert(t, 2, 1000);
	twk_insert(t, 3, 0);
	KUNIT_EXPECT_EQ(test, t->nodes[0].key, 1000ULL);
	KUNIT_EXPECT_EQ(test, t->nodes[1].key, 1000ULL);
	KUNIT_EXPECT_EQ(test, t->nodes[3].key, 1000ULL);
	KUNIT_EXPECT_EQ(test, bitmap_weight(w->occupied, 64), 1U);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 1000ULL);

	/* Tick 1000 is not over yet ... */
	KUNIT_EXPECT_EQ(test, twk_advance(t, 1000, 0), 0U);
	/* ... and all four fire at the next advance. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, 1001, 0), 4U);
	twk_check_wheel(t);
}

static void tw_wheel_insert_past_key_while_capped_fires_next(struct kunit *test)
{
	struct twk *t = twk_new(test, 6, 0, 6);
	struct tw_wheel *w = t->w;
	unsigned int i;

	for (i = 0; i < 5; i++)
		twk_insert(t, i, 10);
	KUNIT_ASSERT_EQ(test, twk_advance(t, 20, 2), 2U);
	KUNIT_ASSERT_LT(test, w->clk, 20ULL);

	/* A key in the past is clamped to the (held back) clock. */
	twk_insert(t, 5, 3);
	KUNIT_EXPECT_EQ(test, t->nodes[5].key, w->clk);
	KUNIT_EXPECT_GE(test, t->nodes[5].key, 3ULL);

	KUNIT_EXPECT_EQ(test, twk_advance(t, 20, 0), 4U);
	KUNIT_EXPECT_EQ(test, t->m[5].hits, 1U);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	twk_check_wheel(t);
}

/* --------------------------------------------------------------------- */
/* advance                                                                */
/* --------------------------------------------------------------------- */

static void tw_wheel_advance_empty_moves_clk(struct kunit *test)
{
	struct tw_wheel *w = twk_wheel_new(test, 4, 7);
	HLIST_HEAD(expired);

	KUNIT_EXPECT_EQ(test, tw_wheel_advance(w, 8, 0, &expired), 0U);
	KUNIT_EXPECT_EQ(test, w->clk, 8ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_advance(w, 8 + 16 * 1000 + 3, 1, &expired),
			0U);
	KUNIT_EXPECT_EQ(test, w->clk, 8 + 16 * 1000 + 3ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_advance(w, 1ULL << 62, 0, &expired), 0U);
	KUNIT_EXPECT_EQ(test, w->clk, 1ULL << 62);
	KUNIT_EXPECT_TRUE(test, hlist_empty(&expired));
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_EQ(test, w->max_slot, 0UL);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(w->occupied, 16));
}

static void tw_wheel_advance_upto_not_past_clk_is_noop(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 50, 1);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 50);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 50, 0), 0U);
	KUNIT_EXPECT_EQ(test, w->clk, 50ULL);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 10, 0), 0U);
	KUNIT_EXPECT_EQ(test, w->clk, 50ULL);
	KUNIT_EXPECT_EQ(test, w->count, 1UL);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 51, 0), 1U);
}

static void tw_wheel_advance_fires_only_due(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 40);
	struct tw_wheel *w = t->w;
	unsigned int i;

	/* Keys 0..39: two and a half revolutions of a 16-slot wheel. */
	for (i = 0; i < 40; i++)
		twk_insert(t, i, i);

	KUNIT_EXPECT_EQ(test, twk_advance(t, 5, 0), 5U);
	KUNIT_EXPECT_EQ(test, twk_fired_mask(t, 5), 0x1fULL);
	KUNIT_EXPECT_EQ(test, w->clk, 5ULL);
	KUNIT_EXPECT_EQ(test, w->count, 35UL);

	/* Key 21 == upto is not over yet. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, 21, 0), 16U);
	KUNIT_EXPECT_EQ(test, twk_fired_mask(t, 21), GENMASK_ULL(20, 5));
	KUNIT_EXPECT_EQ(test, t->m[21].state, (u8)TWM_PENDING);
	KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[21]));

	KUNIT_EXPECT_EQ(test, twk_advance(t, 40, 0), 19U);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	for (i = 0; i < 40; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, 1U);
	twk_check_wheel(t);
}

static void tw_wheel_advance_one_tick_visits_one_slot(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 32, 8);
	struct tw_wheel *w = t->w;
	unsigned int i;

	/* Slot 0 (tick 32): three entries of later revolutions only. */
	twk_insert(t, 0, 32 + 16);
	twk_insert(t, 1, 32 + 16 * 5);
	twk_insert(t, 2, 32 + (1ULL << 33));
	/* Slot 1 (tick 33): five entries due at 33. */
	for (i = 3; i < 8; i++)
		twk_insert(t, i, 33);

	KUNIT_EXPECT_EQ(test, twk_advance(t, 33, 0), 0U);
	KUNIT_EXPECT_EQ(test, w->clk, 33ULL);
	KUNIT_EXPECT_EQ(test, w->count, 8UL);
	/* Slot 0's bound (48) is not due: it read no list at all ... */
	KUNIT_EXPECT_EQ(test, w->max_slot, 0UL);
	/* ... and left them where and as they were. */
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[i]));
		KUNIT_EXPECT_EQ(test, t->nodes[i].key, t->m[i].key);
	}
	KUNIT_EXPECT_TRUE(test, twk_occupied(w, 32));
	for (i = 3; i < 8; i++)
		KUNIT_EXPECT_TRUE(test, twk_in_slot(w, &t->nodes[i]));

	KUNIT_EXPECT_EQ(test, twk_advance(t, 34, 0), 5U);
	KUNIT_EXPECT_EQ(test, w->max_slot, 5UL);
	KUNIT_EXPECT_EQ(test, w->count, 3UL);
	KUNIT_EXPECT_FALSE(test, twk_occupied(w, 33));
	KUNIT_EXPECT_EQ(test, twk_slot_len(w, 32), 3UL);
	twk_check_wheel(t);
}

static void tw_wheel_advance_max_slot_keeps_longest(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 7);
	struct tw_wheel *w = t->w;
	unsigned int i;

	twk_insert(t, 0, 1);
	for (i = 1; i < 5; i++)
		twk_insert(t, i, 2);
	twk_insert(t, 5, 3);
	twk_insert(t, 6, 3);

	twk_advance(t, 2, 0);
	KUNIT_EXPECT_EQ(test, w->max_slot, 1UL);
	twk_advance(t, 3, 0);
	KUNIT_EXPECT_EQ(test, w->max_slot, 4UL);
	twk_advance(t, 4, 0);
	KUNIT_EXPECT_EQ(test, w->max_slot, 4UL);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
}

static void tw_wheel_advance_tick_by_tick_exactly_once(struct kunit *test)
{
	const u64 base = 13;
	struct twk *t = twk_new(test, 4, base, 48);
	unsigned int i;
	u64 upto;

	/* Every tick of three revolutions holds one node. */
	for (i = 0; i < 48; i++)
		twk_insert(t, i, base + i);
	for (upto = base + 1; upto <= base + 48 + 16; upto++) {
		u64 k = upto - 1 - base;

		KUNIT_ASSERT_EQ(test, twk_advance(t, upto, 0), k < 48 ? 1U : 0U);
		if (k < 48)
			KUNIT_ASSERT_EQ(test, t->m[k].fired_at, upto);
	}
	for (i = 0; i < 48; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, 1U);
	twk_check_wheel(t);
}

static void tw_wheel_advance_far_future_waits_revolutions(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 5);
	static const u64 keys[] = {
		3 * 16 + 2,	/* later revolution */
		4 * 16,		/* exact multiple of the span */
		4 * 16 - 1,
		4 * 16 + 1,
		16,
	};
	unsigned int i;
	u64 upto;

	for (i = 0; i < ARRAY_SIZE(keys); i++)
		twk_insert(t, i, keys[i]);
	for (upto = 1; upto <= 80; upto++)
		twk_advance(t, upto, 0);
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		KUNIT_EXPECT_EQ(test, t->m[i].hits, 1U);
		KUNIT_EXPECT_EQ(test, t->m[i].fired_at, keys[i] + 1);
	}
	KUNIT_EXPECT_EQ(test, t->w->count, 0UL);
}

static void tw_wheel_advance_beyond_2_32_ticks(struct kunit *test)
{
	const u64 far = 5 + (1ULL << 32);
	const u64 big = 1ULL << 62;
	struct twk *t = twk_new(test, 8, 5, 6);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, far);
	twk_insert(t, 1, far + 256);		/* same slot, a revolution later */
	twk_insert(t, 2, 5 + (1ULL << 33) + 1);
	twk_insert(t, 3, big - 256);
	twk_insert(t, 4, big);
	twk_insert(t, 5, big + 1);

	KUNIT_EXPECT_EQ(test, twk_advance(t, 1ULL << 32, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, far, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, far + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[0].hits, 1U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, far + 256, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, far + 257, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[1].hits, 1U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, big - 256, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[2].hits, 1U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, big - 255, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[3].hits, 1U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, big, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, big + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[4].hits, 1U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, big + 2, 0), 1U);
	KUNIT_EXPECT_EQ(test, t->m[5].hits, 1U);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_EQ(test, w->clk, big + 2);
}

/* Execution cap ------------------------------------------------------- */

struct twk_cap_param {
	unsigned int n;		/* due nodes */
	unsigned int max;	/* the cap */
	unsigned int spread;	/* keys spread over this many ticks */
	unsigned int bits;
};

static const struct twk_cap_param twk_cap_params[] = {
	{ .n = 10, .max = 3, .spread = 1, .bits = 6 },
	{ .n = 10, .max = 5, .spread = 1, .bits = 6 },
	{ .n = 1, .max = 1, .spread = 1, .bits = 4 },
	{ .n = 64, .max = 7, .spread = 40, .bits = 6 },
	{ .n = 100, .max = 1, .spread = 3, .bits = 4 },
	{ .n = 50, .max = 64, .spread = 10, .bits = 8 },
	{ .n = 200, .max = 16, .spread = 200, .bits = 4 },
	{ .n = 33, .max = 32, .spread = 2, .bits = 10 },
};

static void twk_cap_desc(const struct twk_cap_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "n=%u max=%u spread=%u bits=%u",
		 p->n, p->max, p->spread, p->bits);
}

KUNIT_ARRAY_PARAM(twk_cap, twk_cap_params, twk_cap_desc);

static void tw_wheel_advance_cap_hands_out_in_batches(struct kunit *test)
{
	const struct twk_cap_param *p = test->param_value;
	const u64 base = 1000;
	const u64 upto = base + p->spread;
	struct twk *t = twk_new(test, p->bits, base, p->n);
	unsigned int i, calls = 0;
	unsigned long total = 0;

	/* Keys spread over the range, some reaching into later revolutions. */
	for (i = 0; i < p->n; i++)
		twk_insert(t, i, base + (i * 7) % p->spread);

	while (total < p->n) {
		unsigned int want = min(p->max, p->n - (unsigned int)total);
		unsigned int got = twk_advance(t, upto, p->max);

		KUNIT_ASSERT_EQ_MSG(test, got, want, "advance #%u", calls);
		total += got;
		if (total < p->n)
			KUNIT_ASSERT_LT(test, t->w->clk, upto);
		KUNIT_ASSERT_LE(test, ++calls, p->n);
	}
	/* The last call may have stopped at the cap: one more finds nothing. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, upto, p->max), 0U);
	KUNIT_EXPECT_EQ(test, t->w->clk, upto);
	KUNIT_EXPECT_EQ(test, total, (unsigned long)p->n);
	KUNIT_EXPECT_EQ(test, calls, DIV_ROUND_UP(p->n, p->max));
	KUNIT_EXPECT_EQ(test, t->w->count, 0UL);
	for (i = 0; i < p->n; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, 1U);
	twk_check_wheel(t);
}

static void tw_wheel_advance_cap_deferred_before_later(struct kunit *test)
{
	struct twk *t = twk_new(test, 6, 0, 12);
	struct tw_wheel *w = t->w;
	unsigned int i, calls = 0;

	for (i = 0; i < 6; i++)
		twk_insert(t, i, 5);
	KUNIT_ASSERT_EQ(test, twk_advance(t, 6, 4), 4U);
	KUNIT_ASSERT_EQ(test, w->clk, 5ULL);

	/* More become due later, in the same and in later slots. */
	for (i = 6; i < 9; i++)
		twk_insert(t, i, 6);
	twk_insert(t, 9, 7);
	twk_insert(t, 10, 7);
	twk_insert(t, 11, 5 + 64);	/* the deferred slot, next revolution */

	/* The two deferred nodes come first, then tick 6, then tick 7. */
	KUNIT_ASSERT_EQ(test, twk_advance(t, 8, 2), 2U);
	KUNIT_EXPECT_EQ(test, t->te->m.kmin, 5ULL);
	KUNIT_EXPECT_EQ(test, t->te->m.kmax, 5ULL);
	do {
		/* twk_advance() checks keys never decrease across calls. */
		twk_advance(t, 8, 2);
		KUNIT_ASSERT_LE(test, ++calls, 4U);
	} while (w->clk < 8);
	for (i = 0; i < 11; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, 1U);
	KUNIT_EXPECT_EQ(test, t->m[11].hits, 0U);
	KUNIT_EXPECT_EQ(test, w->count, 1UL);
	twk_check_wheel(t);
}

static void tw_wheel_advance_cap_catch_up_without_loss(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 100);
	const u64 upto = 16 * 20 + 3;
	unsigned long due = 0, total;
	unsigned int i;

	/* 100 keys over 30 revolutions; advance over 20 of them, cap 7. */
	for (i = 0; i < 100; i++) {
		u64 key = (i * 37ULL) % (16 * 30);

		twk_insert(t, i, key);
		due += key < upto;
	}
	total = twk_advance_to(t, upto, 7);
	KUNIT_EXPECT_EQ(test, total, due);
	KUNIT_EXPECT_EQ(test, t->w->count, 100 - due);
	KUNIT_EXPECT_EQ(test, t->w->clk, upto);
	for (i = 0; i < 100; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, t->m[i].key < upto ? 1U : 0U);
	twk_check_wheel(t);
}

/* Catch-up after a late tick ------------------------------------------ */

static void tw_wheel_advance_catch_up_many_revolutions(struct kunit *test)
{
	const u64 base = 100;
	const u64 upto = base + 12 * 32 + 5;
	struct twk *t = twk_new(test, 5, base, 300);
	struct tw_wheel *w = t->w;
	unsigned long due = 0;
	unsigned int i;

	for (i = 0; i < 300; i++) {
		u64 key = base + (i * 7ULL) % (20 * 32);

		if (i % 50 == 0)
			key = base + (1ULL << 33) + i;	/* far future */
		twk_insert(t, i, key);
		due += key < upto;
	}
	KUNIT_EXPECT_EQ(test, (unsigned long)twk_advance(t, upto, 0), due);
	KUNIT_EXPECT_EQ(test, w->clk, upto);
	KUNIT_EXPECT_EQ(test, w->count, 300 - due);
	for (i = 0; i < 300; i++)
		KUNIT_EXPECT_EQ(test, t->m[i].hits, t->m[i].key < upto ? 1U : 0U);
	twk_check_wheel(t);

	/* Catch up again past everything but the far-future ones. */
	twk_advance(t, base + 20 * 32, 0);
	KUNIT_EXPECT_EQ(test, w->count, 6UL);
	twk_advance(t, base + (1ULL << 34), 0);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	twk_check_wheel(t);
}

static void tw_wheel_advance_catch_up_sparse(struct kunit *test)
{
	const u64 size = 1 << 12;
	struct twk *t = twk_new(test, 12, 0, 3);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 10);
	twk_insert(t, 1, size * 50 + 7);
	twk_insert(t, 2, size * 1000 + size - 1);

	/* Slot 7's bound is revolutions out: slot 10 has the earliest key. */
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 10ULL);
	KUNIT_EXPECT_EQ(test, twk_advance(t, size * 100, 0), 2U);
	KUNIT_EXPECT_EQ(test, w->clk, size * 100);
	KUNIT_EXPECT_EQ(test, w->max_slot, 1UL);
	KUNIT_EXPECT_EQ(test, t->m[0].hits, 1U);
	KUNIT_EXPECT_EQ(test, t->m[1].hits, 1U);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), size * 1000 + size - 1);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK),
			size * 1000 + size - 1);

	KUNIT_EXPECT_EQ(test, twk_advance(t, size * 1000 + size - 1, 0), 0U);
	KUNIT_EXPECT_EQ(test, twk_advance(t, size * 1001, 0), 1U);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), TW_NO_TICK);
	twk_check_wheel(t);
}

/* Randomised never-early / exactly-once property ----------------------- */

enum twk_step {
	TWK_STEP_ONE,	/* one tick per advance */
	TWK_STEP_SMALL,	/* 1..8 ticks */
	TWK_STEP_MIXED,	/* 1, small, about a revolution, several, 2^33 */
};

struct twk_rand_param {
	unsigned int bits;
	unsigned int nodes;
	unsigned int rounds;
	enum twk_step step;
	u64 base;
	unsigned int cap;
	u64 seed;
};

static const char * const twk_step_name[] = {
	[TWK_STEP_ONE] = "one",
	[TWK_STEP_SMALL] = "small",
	[TWK_STEP_MIXED] = "mixed",
};

static const struct twk_rand_param twk_rand_params[] = {
	{ 4, 128, 200, TWK_STEP_ONE, 0, 0, 1 },
	{ 4, 256, 150, TWK_STEP_SMALL, 1000, 0, 2 },
	{ 4, 256, 150, TWK_STEP_MIXED, 0, 0, 3 },
	{ 5, 256, 200, TWK_STEP_ONE, U32_MAX - 20, 0, 4 },
	{ 6, 256, 150, TWK_STEP_MIXED, (1ULL << 32) - 7, 0, 5 },
	{ 8, 512, 120, TWK_STEP_SMALL, 12345, 0, 6 },
	{ 8, 512, 120, TWK_STEP_MIXED, (1ULL << 62) - 300, 0, 7 },
	{ 10, 256, 100, TWK_STEP_MIXED, 0, 0, 8 },
	{ 12, 512, 100, TWK_STEP_MIXED, 99, 0, 9 },
	{ 12, 128, 200, TWK_STEP_ONE, (1ULL << 40) + 5, 0, 10 },
};

static const struct twk_rand_param twk_rand_cap_params[] = {
	{ 4, 256, 150, TWK_STEP_MIXED, 0, 1, 11 },
	{ 4, 256, 150, TWK_STEP_SMALL, 77, 3, 12 },
	{ 6, 256, 150, TWK_STEP_MIXED, (1ULL << 32) - 7, 5, 13 },
	{ 8, 512, 100, TWK_STEP_MIXED, (1ULL << 62) - 300, 16, 14 },
	{ 12, 256, 100, TWK_STEP_MIXED, 4242, 7, 15 },
};

static void twk_rand_desc(const struct twk_rand_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "bits=%u nodes=%u rounds=%u step=%s base=%llu cap=%u seed=%llu",
		 p->bits, p->nodes, p->rounds, twk_step_name[p->step], p->base,
		 p->cap, p->seed);
}

KUNIT_ARRAY_PARAM(twk_rand, twk_rand_params, twk_rand_desc);
KUNIT_ARRAY_PARAM(twk_rand_cap, twk_rand_cap_params, twk_rand_desc);

/* A key relative to the wheel's clock, favouring the known pitfalls. */
static u64 twk_gen_key(struct twk_rng *r, u64 clk, u64 size)
{
	u64 k = 1 + twk_below(r, 4);

	switch (twk_below(r, 10)) {
	case 0:
		return clk + twk_below(r, size);	/* this revolution */
	case 1:
	case 2:
		return clk + twk_below(r, 8 * size);	/* a few revolutions */
	case 3:
		return clk + k * size;			/* exact span multiples */
	case 4:
		return clk + k * size - 1;
	case 5:
		return clk + k * size + 1;
	case 6:
		return clk + (1ULL << 32) + twk_below(r, 1ULL << 33);
	case 7:						/* near 2^62 */
		return (1ULL << 62) - size + twk_below(r, 2 * size);
	case 8:
		return clk;
	default:					/* in the past */
		return clk - min(clk, 1 + twk_below(r, 2 * size));
	}
}

static u64 twk_gen_step(struct twk_rng *r, u64 size, enum twk_step mode)
{
	switch (mode) {
	case TWK_STEP_ONE:
		return 1;
	case TWK_STEP_SMALL:
		return 1 + twk_below(r, 8);
	case TWK_STEP_MIXED:
		break;
	}
	switch (twk_below(r, 10)) {
	case 0:
		return 1;
	case 1:
	case 2:
		return 1 + twk_below(r, 8);
	case 3:
		return size - 1;
	case 4:
		return size;
	case 5:
		return size + 1;
	case 6:
		return 1 + twk_below(r, size);
	case 7:
		return size * (2 + twk_below(r, 4)) + twk_below(r, size);
	default:
		if (!twk_below(r, 8))
			return (1ULL << 33) + twk_below(r, size);
		return 2 * size;
	}
}

static void twk_random_run(struct kunit *test, const struct twk_rand_param *p)
{
	struct twk *t = twk_new(test, p->bits, p->base, p->nodes);
	struct tw_wheel *w = t->w;
	const u64 size = tw_wheel_size(w);
	unsigned long fired = 0, removed = 0;
	struct twk_rng r;
	unsigned int i, round, op;

	twk_rng_init(&r, p->seed);
	for (i = 0; i < p->nodes / 2; i++)
		twk_insert(t, i, twk_gen_key(&r, w->clk, size));

	for (round = 0; round < p->rounds; round++) {
		for (op = 0; op < 4; op++) {
			i = twk_below(&r, p->nodes);
			if (t->m[i].state != TWM_PENDING) {
				twk_insert(t, i, twk_gen_key(&r, w->clk, size));
			} else if (!twk_below(&r, 3)) {
				twk_remove(t, i);
				removed++;
			} else if (!twk_below(&r, 3)) {
				/* modify: remove and re-insert at once */
				twk_remove(t, i);
				removed++;
				twk_insert(t, i, twk_gen_key(&r, w->clk, size));
			}
		}
		fired += twk_advance_to(t, w->clk + twk_gen_step(&r, size, p->step),
					p->cap);
		/* The queries agree with the model on the way. */
		KUNIT_ASSERT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK),
				twk_model_min(t));
		KUNIT_ASSERT_LE(test, tw_wheel_next_lower_bound(w), twk_model_min(t));
		if (round % 32 == 0)
			twk_check_wheel(t);
	}

	/* Past every key: everything still pending comes out, once. */
	fired += twk_advance_to(t, 1ULL << 63, p->cap);
	KUNIT_EXPECT_EQ(test, w->count, 0UL);
	KUNIT_EXPECT_TRUE(test, bitmap_empty(w->occupied, size));
	for (i = 0; i < p->nodes; i++) {
		KUNIT_EXPECT_NE(test, t->m[i].state, (u8)TWM_PENDING);
		KUNIT_EXPECT_FALSE(test, tw_node_linked(&t->nodes[i]));
	}
	/* The run must have exercised both removal and expiry. */
	KUNIT_EXPECT_GT(test, fired, (unsigned long)p->nodes / 2);
	KUNIT_EXPECT_GT(test, removed, 0UL);
	twk_check_wheel(t);
}

static void tw_wheel_advance_random_never_early(struct kunit *test)
{
	twk_random_run(test, test->param_value);
}

static void tw_wheel_advance_random_capped_never_early(struct kunit *test)
{
	twk_random_run(test, test->param_value);
}

/* --------------------------------------------------------------------- */
/* next_lower_bound, next_key                                             */
/* --------------------------------------------------------------------- */

static void tw_wheel_next_lower_bound_empty(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 3, 1);
	struct tw_wheel *w = t->w;

	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), TW_NO_TICK);
	twk_insert(t, 0, 9);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 9ULL);
	twk_remove(t, 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), TW_NO_TICK);
	twk_insert(t, 0, 9);
	twk_advance(t, 10, 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), TW_NO_TICK);
}

static void tw_wheel_next_lower_bound_uses_slot_bounds(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 20, 5);
	struct tw_wheel *w = t->w;

	/* Slot 7, met first at tick 23, holds a node one revolution out. */
	twk_insert(t, 0, 20 + 16 + 3);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 39ULL);
	twk_insert(t, 1, 26);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 26ULL);
	twk_insert(t, 2, 21);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 21ULL);
	twk_remove(t, 2);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 26ULL);

	/*
	 * A removal leaves its slot's bound behind: still a lower bound,
	 * tightened when an advance walks the slot.
	 */
	twk_insert(t, 4, 23);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 23ULL);
	twk_remove(t, 4);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 23ULL);
	KUNIT_EXPECT_EQ(test, twk_advance(t, 24, 0), 0U);
	KUNIT_EXPECT_EQ(test, w->max_slot, 1UL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 26ULL);

	/* Wrapping: clk in slot 14, the node in slot 1 of the next lap. */
	twk_remove(t, 0);
	twk_remove(t, 1);
	twk_advance(t, 30, 0);
	twk_insert(t, 3, 33);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 33ULL);
	/* Never below clk, never above a key. */
	KUNIT_EXPECT_GE(test, tw_wheel_next_lower_bound(w), w->clk);
	KUNIT_EXPECT_LE(test, tw_wheel_next_lower_bound(w), t->nodes[3].key);
	twk_check_wheel(t);
}

/*
 * Scheme 6's weak spot: every slot holds timers revolutions away.  The
 * bound is the earliest of them, and advancing through a whole revolution
 * reads none of the lists.
 */
static void tw_wheel_advance_full_wheel_far_timers_reads_no_list(struct kunit *test)
{
	const unsigned int bits = 6, per_slot = 3;
	const u64 size = 1ULL << bits;
	struct twk *t = twk_new(test, bits, 0, size * per_slot);
	struct tw_wheel *w = t->w;
	unsigned int i;

	for (i = 0; i < size * per_slot; i++)
		twk_insert(t, i, size * (10 + i / size) + i % size);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), size * 10);
	KUNIT_EXPECT_EQ(test, twk_advance(t, size * 10, 0), 0U);
	KUNIT_EXPECT_EQ(test, w->max_slot, 0UL);
	KUNIT_EXPECT_EQ(test, w->count, size * per_slot);
	/* The first due tick walks one slot and hands out one node. */
	KUNIT_EXPECT_EQ(test, twk_advance(t, size * 10 + 1, 0), 1U);
	KUNIT_EXPECT_EQ(test, w->max_slot, (unsigned long)per_slot);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), size * 10 + 1);
	twk_check_wheel(t);
}

struct twk_query_param {
	unsigned int bits;
	unsigned int nodes;
	u64 base;
	u64 seed;
};

static const struct twk_query_param twk_query_params[] = {
	{ 4, 64, 0, 21 },
	{ 4, 128, (1ULL << 32) - 3, 22 },
	{ 7, 128, 5000, 23 },
	{ 10, 96, (1ULL << 62) - 1000, 24 },
	{ 12, 64, 17, 25 },
};

static void twk_query_desc(const struct twk_query_param *p, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE,
		 "bits=%u nodes=%u base=%llu seed=%llu", p->bits, p->nodes,
		 p->base, p->seed);
}

KUNIT_ARRAY_PARAM(twk_query, twk_query_params, twk_query_desc);

/* Shuffle the wheel a little: inserts, removals and a short advance. */
static void twk_query_step(struct twk *t, struct twk_rng *r)
{
	const u64 size = tw_wheel_size(t->w);
	unsigned int op, i;

	for (op = 0; op < 3; op++) {
		i = twk_below(r, t->n);
		if (t->m[i].state != TWM_PENDING)
			twk_insert(t, i, twk_gen_key(r, t->w->clk, size));
		else if (twk_below(r, 2))
			twk_remove(t, i);
	}
	twk_advance(t, t->w->clk + twk_gen_step(r, size, TWK_STEP_MIXED), 0);
}

static void tw_wheel_next_lower_bound_random(struct kunit *test)
{
	const struct twk_query_param *p = test->param_value;
	struct twk *t = twk_new(test, p->bits, p->base, p->nodes);
	struct tw_wheel *w = t->w;
	const u64 size = tw_wheel_size(w);
	unsigned int i, q;
	struct twk_rng r;

	twk_rng_init(&r, p->seed);
	for (i = 0; i < p->nodes / 2; i++)
		twk_insert(t, i, twk_gen_key(&r, w->clk, size));
	for (q = 0; q < 60; q++) {
		u64 lb = tw_wheel_next_lower_bound(w);
		u64 min = twk_model_min(t);
		u64 d;

		if (!t->te->m.pending) {
			KUNIT_ASSERT_EQ(test, lb, TW_NO_TICK);
		} else {
			KUNIT_ASSERT_GE(test, lb, w->clk);
			KUNIT_ASSERT_LE(test, lb, min);
			/* Never looser than the first occupied slot's tick. */
			for (d = w->clk; !twk_occupied(w, d); d++)
				KUNIT_ASSERT_LT(test, d - w->clk, size);
			KUNIT_ASSERT_GE(test, lb, d);
			/* Exact while no node has been removed or handed out. */
			if (!q)
				KUNIT_ASSERT_EQ(test, lb, min);
		}
		twk_query_step(t, &r);
	}
}

static void tw_wheel_next_key_empty(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 100, 1);
	struct tw_wheel *w = t->w;

	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 0), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 100), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), TW_NO_TICK);
	twk_insert(t, 0, 100);
	twk_remove(t, 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), TW_NO_TICK);
}

static void tw_wheel_next_key_unbounded_exact_minimum(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 5);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 50);
	twk_insert(t, 1, 35 + 16);
	twk_insert(t, 2, 90);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 50ULL);
	twk_insert(t, 3, 35);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 35ULL);
	twk_insert(t, 4, 1ULL << 40);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 35ULL);
	/* The query only reads. */
	KUNIT_EXPECT_EQ(test, w->count, 5UL);
	KUNIT_EXPECT_EQ(test, w->clk, 0ULL);
	twk_check_wheel(t);
}

static void tw_wheel_next_key_beyond_bound(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 10, 2);
	struct tw_wheel *w = t->w;

	twk_insert(t, 0, 35);
	twk_insert(t, 1, 1ULL << 40);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 34), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 35), 35ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 36), 35ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 10), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 0), TW_NO_TICK);

	twk_remove(t, 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, (1ULL << 40) - 1), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 1ULL << 40), 1ULL << 40);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 1ULL << 40);
}

static void tw_wheel_next_key_skips_later_revolution_slot(struct kunit *test)
{
	struct twk *t = twk_new(test, 4, 0, 4);
	struct tw_wheel *w = t->w;

	/* Slot 1 is met first but holds only later revolutions. */
	twk_insert(t, 0, 1 + 16 * 3);
	twk_insert(t, 1, 1 + (1ULL << 40));
	twk_insert(t, 2, 9);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_lower_bound(w), 9ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 9ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 8), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 9), 9ULL);
	/* Bound between the earliest slot's tick and the real minimum. */
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 2), TW_NO_TICK);

	/* Now the later-revolution entry of the first slot is the minimum. */
	twk_remove(t, 2);
	twk_insert(t, 2, 30);
	twk_insert(t, 3, 1 + 16);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), 17ULL);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 16), TW_NO_TICK);
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, 17), 17ULL);
}

static void tw_wheel_next_key_after_removals(struct kunit *test)
{
	struct twk *t = twk_new(test, 5, 7, 24);
	struct tw_wheel *w = t->w;
	unsigned int i, j;

	for (i = 0; i < 24; i++)
		twk_insert(t, i, 7 + (i * 29ULL) % 200);
	/* Remove the minimum, then some other node, until empty. */
	for (j = 0; t->te->m.pending; j++) {
		u64 min = twk_model_min(t);

		KUNIT_ASSERT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), min);
		KUNIT_ASSERT_EQ(test, tw_wheel_next_key(w, min), min);
		if (min > w->clk)
			KUNIT_ASSERT_EQ(test, tw_wheel_next_key(w, min - 1),
					TW_NO_TICK);
		for (i = 0; i < 24; i++) {
			if (t->m[i].state == TWM_PENDING &&
			    ((j & 1) ? t->m[i].key != min : t->m[i].key == min)) {
				twk_remove(t, i);
				break;
			}
		}
		KUNIT_ASSERT_LE(test, j, 24U);
	}
	KUNIT_EXPECT_EQ(test, tw_wheel_next_key(w, TW_NO_TICK), TW_NO_TICK);
}

static void tw_wheel_next_key_random(struct kunit *test)
{
	const struct twk_query_param *p = test->param_value;
	struct twk *t = twk_new(test, p->bits, p->base, p->nodes);
	struct tw_wheel *w = t->w;
	const u64 size = tw_wheel_size(w);
	unsigned int i, q;
	struct twk_rng r;

	twk_rng_init(&r, p->seed);
	for (i = 0; i < p->nodes / 2; i++)
		twk_insert(t, i, twk_gen_key(&r, w->clk, size));
	for (q = 0; q < 60; q++) {
		u64 min = twk_model_min(t);
		u64 bounds[6];
		unsigned int b;

		bounds[0] = TW_NO_TICK;
		bounds[1] = w->clk + twk_below(&r, 4 * size);
		bounds[2] = w->clk + twk_below(&r, 1ULL << 34);
		bounds[3] = min == TW_NO_TICK ? w->clk : min;
		bounds[4] = bounds[3] - (bounds[3] > 0);
		bounds[5] = w->clk;
		for (b = 0; b < ARRAY_SIZE(bounds); b++)
			KUNIT_ASSERT_EQ_MSG(test, tw_wheel_next_key(w, bounds[b]),
					    min <= bounds[b] ? min : TW_NO_TICK,
					    "bound %llu, minimum %llu, clk %llu",
					    bounds[b], min, w->clk);
		twk_query_step(t, &r);
	}
}

/* --------------------------------------------------------------------- */
/* pick_key                                                               */
/* --------------------------------------------------------------------- */

/* Trailing zero bits, 64 for 0 (a multiple of every power of two). */
static unsigned int twk_tz(u64 x)
{
	return x ? __ffs64(x) : 64;
}

/* Linear search: the latest tick in [lo, hi] with the most trailing zeros. */
static u64 twk_pick_brute(u64 lo, u64 hi)
{
	unsigned int best_tz = 0;
	u64 t = lo, best = lo;

	for (;;) {
		if (twk_tz(t) >= best_tz) {
			best_tz = twk_tz(t);
			best = t;
		}
		if (t == hi)
			break;
		t++;
	}
	return best;
}

/*
 * The same in O(64): for the largest j such that a multiple of 2^j lies in
 * [lo, hi], the latest one.  Checked against twk_pick_brute() below.
 */
static u64 twk_pick_ref(u64 lo, u64 hi)
{
	int j;

	if (!lo)
		return 0;
	for (j = 63; j > 0; j--) {
		u64 m = hi & ~((1ULL << j) - 1);

		if (m >= lo)
			return m;
	}
	return hi;
}

struct twk_pick_param {
	const char *name;
	u64 lo, hi, want;
};

static const struct twk_pick_param twk_pick_params[] = {
	{ "lo_eq_hi_small", 5, 5, 5 },
	{ "lo_eq_hi_zero", 0, 0, 0 },
	{ "lo_eq_hi_2_62", 1ULL << 62, 1ULL << 62, 1ULL << 62 },
	{ "lo_eq_hi_odd_far", (1ULL << 40) + 3, (1ULL << 40) + 3,
	  (1ULL << 40) + 3 },
	{ "adjacent_odd_even", 7, 8, 8 },
	{ "adjacent_even_odd", 6, 7, 6 },
	{ "round_inside", 9, 15, 12 },
	{ "round_1000_1023", 1000, 1023, 1008 },
	{ "lo_aligned", 8, 12, 8 },
	{ "lo_zero", 0, 5, 0 },
	{ "lo_aligned_far", 1ULL << 62, (1ULL << 62) + (1ULL << 20),
	  1ULL << 62 },
	{ "crossing_2_32", (1ULL << 32) - 5, (1ULL << 32) + 5, 1ULL << 32 },
	{ "wide_from_1", 1, 1ULL << 62, 1ULL << 62 },
	{ "wide_odd_hi", 3, (1ULL << 20) + 5, 1ULL << 20 },
	{ "wide_window_2_33", (1ULL << 40) + 1, (1ULL << 40) + (1ULL << 33),
	  (1ULL << 40) + (1ULL << 33) },
	{ "much_larger", 12345, (1ULL << 50) + 777, 1ULL << 50 },
	{ "top_half", (1ULL << 63) + 1, U64_MAX - 1, 0xc000000000000000ULL },
};

TWK_ARRAY_PARAM_BY_NAME(twk_pick);

static void tw_wheel_pick_key_table(struct kunit *test)
{
	const struct twk_pick_param *p = test->param_value;
	u64 got = tw_wheel_pick_key(p->lo, p->hi);

	/* The table itself agrees with the reference. */
	KUNIT_ASSERT_EQ(test, twk_pick_ref(p->lo, p->hi), p->want);
	KUNIT_EXPECT_GE(test, got, p->lo);
	KUNIT_EXPECT_LE(test, got, p->hi);
	KUNIT_EXPECT_EQ_MSG(test, got, p->want,
			    "[%llu, %llu]: tz(got)=%u, tz(want)=%u", p->lo,
			    p->hi, twk_tz(got), twk_tz(p->want));
}

static void tw_wheel_pick_key_lo_equals_hi(struct kunit *test)
{
	static const u64 ticks[] = {
		0, 1, 2, 7, 64, 1000, (1ULL << 32) - 1, (1ULL << 40) + 3,
		1ULL << 62, U64_MAX - 1,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ticks); i++)
		KUNIT_EXPECT_EQ(test, tw_wheel_pick_key(ticks[i], ticks[i]),
				ticks[i]);
}

static void tw_wheel_pick_key_matches_brute_force(struct kunit *test)
{
	static const u64 bases[] = { 0, 1ULL << 40, (1ULL << 62) - 64 };
	unsigned long bad = 0, checked = 0;
	u64 first_lo = 0, first_hi = 0, first_got = 0, first_want = 0;
	unsigned int b;
	u64 lo, d;

	for (b = 0; b < ARRAY_SIZE(bases); b++) {
		for (lo = bases[b]; lo < bases[b] + 64; lo++) {
			for (d = 0; d <= 64; d++) {
				u64 want = twk_pick_brute(lo, lo + d);
				u64 got = tw_wheel_pick_key(lo, lo + d);

				/* Validate the O(64) reference too. */
				KUNIT_ASSERT_EQ(test, twk_pick_ref(lo, lo + d),
						want);
				checked++;
				if (got >= lo && got <= lo + d && got == want)
					continue;
				if (!bad++) {
					first_lo = lo;
					first_hi = lo + d;
					first_got = got;
					first_want = want;
				}
			}
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0UL,
			    "%lu of %lu ranges wrong; first [%llu, %llu]: got %llu (tz %u), want %llu (tz %u)",
			    bad, checked, first_lo, first_hi, first_got,
			    twk_tz(first_got), first_want, twk_tz(first_want));
}

static void tw_wheel_pick_key_random_ranges(struct kunit *test)
{
	unsigned long bad = 0;
	u64 first_lo = 0, first_hi = 0;
	struct twk_rng r;
	unsigned int i;

	twk_rng_init(&r, 31);
	for (i = 0; i < 2000; i++) {
		u64 lo = twk_rand(&r) >> (1 + twk_below(&r, 63));
		u64 hi = lo + (twk_rand(&r) >> twk_below(&r, 64));
		u64 got;

		if (hi < lo || hi == U64_MAX)
			hi = U64_MAX - 1;
		got = tw_wheel_pick_key(lo, hi);
		KUNIT_ASSERT_GE(test, got, lo);
		KUNIT_ASSERT_LE(test, got, hi);
		if (got != twk_pick_ref(lo, hi) && !bad++) {
			first_lo = lo;
			first_hi = hi;
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0UL,
			    "%lu of 2000 ranges not the latest with most trailing zeros; first [%llu, %llu]",
			    bad, first_lo, first_hi);
}

/* --------------------------------------------------------------------- */

static struct kunit_case twheel_wheel_cases[] = {
	KUNIT_CASE(tw_wheel_init_clears_slots_and_bitmap),
	KUNIT_CASE(tw_wheel_insert_sets_key_bit_and_count),
	KUNIT_CASE(tw_wheel_insert_same_slot_shares_one_bit),
	KUNIT_CASE(tw_wheel_remove_only_node_clears_bit),
	KUNIT_CASE(tw_wheel_remove_one_of_two_keeps_bit),
	KUNIT_CASE(tw_wheel_remove_node_not_handed_out),
	KUNIT_CASE(tw_wheel_reinsert_after_remove_moves_slot),
	KUNIT_CASE(tw_wheel_reinsert_after_fire_fires_again),
	KUNIT_CASE(tw_wheel_insert_past_key_clamped_to_clk),
	KUNIT_CASE(tw_wheel_insert_past_key_while_capped_fires_next),
	KUNIT_CASE(tw_wheel_advance_empty_moves_clk),
	KUNIT_CASE(tw_wheel_advance_upto_not_past_clk_is_noop),
	KUNIT_CASE(tw_wheel_advance_fires_only_due),
	KUNIT_CASE(tw_wheel_advance_one_tick_visits_one_slot),
	KUNIT_CASE(tw_wheel_advance_max_slot_keeps_longest),
	KUNIT_CASE(tw_wheel_advance_full_wheel_far_timers_reads_no_list),
	KUNIT_CASE(tw_wheel_advance_tick_by_tick_exactly_once),
	KUNIT_CASE(tw_wheel_advance_far_future_waits_revolutions),
	KUNIT_CASE(tw_wheel_advance_beyond_2_32_ticks),
	KUNIT_CASE_PARAM(tw_wheel_advance_cap_hands_out_in_batches,
			 twk_cap_gen_params),
	KUNIT_CASE(tw_wheel_advance_cap_deferred_before_later),
	KUNIT_CASE(tw_wheel_advance_cap_catch_up_without_loss),
	KUNIT_CASE(tw_wheel_advance_catch_up_many_revolutions),
	KUNIT_CASE(tw_wheel_advance_catch_up_sparse),
	KUNIT_CASE_PARAM(tw_wheel_advance_random_never_early,
			 twk_rand_gen_params),
	KUNIT_CASE_PARAM(tw_wheel_advance_random_capped_never_early,
			 twk_rand_cap_gen_params),
	KUNIT_CASE(tw_wheel_next_lower_bound_empty),
	KUNIT_CASE(tw_wheel_next_lower_bound_uses_slot_bounds),
	KUNIT_CASE_PARAM(tw_wheel_next_lower_bound_random,
			 twk_query_gen_params),
	KUNIT_CASE(tw_wheel_next_key_empty),
	KUNIT_CASE(tw_wheel_next_key_unbounded_exact_minimum),
	KUNIT_CASE(tw_wheel_next_key_beyond_bound),
	KUNIT_CASE(tw_wheel_next_key_skips_later_revolution_slot),
	KUNIT_CASE(tw_wheel_next_key_after_removals),
	KUNIT_CASE_PARAM(tw_wheel_next_key_random, twk_query_gen_params),
	KUNIT_CASE_PARAM(tw_wheel_pick_key_table, twk_pick_gen_params),
	KUNIT_CASE(tw_wheel_pick_key_lo_equals_hi),
	KUNIT_CASE(tw_wheel_pick_key_matches_brute_force),
	KUNIT_CASE(tw_wheel_pick_key_random_ranges),
	{}
};

static struct kunit_suite twheel_wheel_suite = {
	.name = "twheel_wheel",
	.test_cases = twheel_wheel_cases,
};

kunit_test_suite(twheel_wheel_suite);
