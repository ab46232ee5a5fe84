// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_bounded": no hold of a base's lock does work that
 * grows with the number of timers (Documentation/design.rst, "Bounded work
 * under the lock").
 *
 * Each case fills one upper slot of the hierarchical engine: 10^6 timers
 * (2 * 10^5 on a kernel with KASAN, which is ten times slower) with
 * absolute expiries inside one level-1 block, in its second half, so that
 * the block starts about a second before the first of them is due.  When
 * the clock reaches the block, the slot's timers are placed again (a
 * cascade), and the statistic @max_hold_moves of struct twheel_stats, the
 * most timers moved under one hold of a base's lock, must stay within
 * TWHEEL_HOLD_MOVES: once the first arm after the block start has run
 * (which used to do the whole cascade from twheel_timer_start()), and once
 * every timer has fired (the tick handler's cascade).  Every timer must
 * still fire once, never early.
 *
 * The wheel has one base, so that every arm, from whichever CPU, goes to
 * the one engine, and 4096 level-0 slots of 1 ms: a level-1 block is
 * 4.096 s.  The case does not know the wheel's time origin to the tick
 * (twheel_create() reads the clock), only that it lies between two reads
 * around the creation; the expiries keep a quarter of a block from both
 * ends of the half they aim at, far more than that uncertainty.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/twheel.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "twheel_kunit.h"

#define TWB_TICK_NS		1000000ULL
#define TWB_BITS		12
#define TWB_BLOCK		BIT_ULL(TWB_BITS)
/* The level-1 block the timers go to: the fifth, 16.4-20.5 s out. */
#define TWB_BLOCK_START		(4 * TWB_BLOCK)
#define TWB_BUDGET		4096

/**
 * struct twb_ctx - one case's timers and what their callbacks saw
 * @timers: @nr timers, all on @wheel
 * @nr:     how many
 * @wheel:  a single-base hierarchical wheel
 * @t0:     ktime_get() just before @wheel was created: its time origin is
 *          at or after it
 * @fired:  callbacks run
 * @early:  callbacks that ran before their timer's expiry
 * @wq:     woken when @fired reaches @nr
 */
struct twb_ctx {
	struct twheel_timer *timers;
	unsigned int nr;
	struct twheel *wheel;
	ktime_t t0;
	atomic_t fired;
	atomic_t early;
	wait_queue_head_t wq;
};

/* One case runs at a time: the callbacks find their counters here. */
static struct twb_ctx *twb_cur;

static void twb_cb(struct twheel_timer *timer)
{
	struct twb_ctx *c = READ_ONCE(twb_cur);

	if (ktime_get() < twheel_timer_expires(timer))
		atomic_inc(&c->early);
	if (atomic_inc_return(&c->fired) == c->nr)
		wake_up(&c->wq);
}

static unsigned int twb_nr(void)
{
	return IS_ENABLED(CONFIG_KASAN) || IS_ENABLED(CONFIG_KCSAN) ?
	       200000 : 1000000;
}

/* The time at which tick @tick of the case's wheel begins, or later. */
static ktime_t twb_tick_time(const struct twb_ctx *c, u64 tick)
{
	return ktime_add_ns(c->t0, tick * TWB_TICK_NS);
}

static u64 twb_max_hold_moves(const struct twb_ctx *c)
{
	struct twheel_stats st;

	twheel_get_stats(c->wheel, &st);
	return st.max_hold_moves;
}

/*
 * Create the wheel and arm every timer in the second half of block
 * TWB_BLOCK_START, spread evenly over its middle half.  False if that
 * could not be set up (the case is then failed by the caller's assert).
 */
static bool twb_setup(struct kunit *test, struct twb_ctx *c)
{
	u64 first = TWB_BLOCK_START + TWB_BLOCK / 2 + TWB_BLOCK / 8;
	u64 span = TWB_BLOCK / 2 - TWB_BLOCK / 4;
	unsigned int i;

	c->nr = twb_nr();
	init_waitqueue_head(&c->wq);
	c->timers = vzalloc(array_size(c->nr, sizeof(*c->timers)));
	if (!c->timers)
		return false;
	c->t0 = ktime_get();
	c->wheel = twheel_create_flags(TWB_TICK_NS, TWB_BITS, TWB_BUDGET,
				       TWHEEL_ENGINE_HIER,
				       TWHEEL_CREATE_SINGLE_BASE);
	if (IS_ERR(c->wheel)) {
		vfree(c->timers);
		return false;
	}
	WRITE_ONCE(twb_cur, c);
	for (i = 0; i < c->nr; i++) {
		u64 tick = first + div_u64((u64)i * span, c->nr);

		twheel_timer_setup(&c->timers[i], c->wheel, twb_cb, 0);
		KUNIT_EXPECT_EQ(test, twheel_timer_start(&c->timers[i],
							 twb_tick_time(c, tick),
							 0, TWHEEL_MODE_ABS), 0);
	}
	kunit_info(test, "%u timers armed in %lld ms, %lld ms before the block",
		   c->nr, ktime_ms_delta(ktime_get(), c->t0),
		   ktime_ms_delta(twb_tick_time(c, TWB_BLOCK_START), ktime_get()));
	return true;
}

/* Wait for every timer, check they fired once and on time, tear down. */
static void twb_finish(struct kunit *test, struct twb_ctx *c)
{
	struct twheel_stats st;
	unsigned int i;

	KUNIT_EXPECT_GT(test,
			wait_event_timeout(c->wq,
					   atomic_read(&c->fired) >= c->nr,
					   120 * HZ), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->fired), c->nr);
	KUNIT_EXPECT_EQ(test, atomic_read(&c->early), 0);
	twheel_get_stats(c->wheel, &st);
	KUNIT_EXPECT_LE(test, st.max_hold_moves, TWHEEL_HOLD_MOVES);
	/*
	 * The case means something only if most timers went through the
	 * slot's cascade: those armed after the clock came within a
	 * revolution of the block (a slow machine) went to level 0.
	 */
	KUNIT_EXPECT_GE_MSG(test, st.moves, (u64)c->nr / 2,
			    "only %llu of %u timers cascaded", st.moves, c->nr);
	/* Whatever failed, nothing may stay armed on memory freed here. */
	for (i = 0; i < c->nr; i++)
		twheel_timer_shutdown_sync(&c->timers[i]);
	KUNIT_EXPECT_EQ(test, twheel_destroy(c->wheel), 0);
	WRITE_ONCE(twb_cur, NULL);
	vfree(c->timers);
}

/*
 * The tick handler's cascade of the slot: the handler wakes for the first
 * timer, a second into the block, and places every timer of the slot
 * again; it must do so in chunks, dropping the lock between them.
 */
static void twheel_bounded_cascade_expiry(struct kunit *test)
{
	struct twb_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_TRUE(test, twb_setup(test, c));
	twb_finish(test, c);
}

/*
 * One arm after the block start, before the handler's wakeup: the clock's
 * forward on the arm path (timer.c's forward_timer_base()) must not do
 * the slot's cascade.
 */
static void twheel_bounded_start_after_block_start(struct kunit *test)
{
	struct twb_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct twheel_timer *probe;
	ktime_t at;

	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_TRUE(test, twb_setup(test, c));
	/* A quarter of a block in: past the start, before the first expiry. */
	at = twb_tick_time(c, TWB_BLOCK_START + TWB_BLOCK / 4);
	while (ktime_get() < at)
		msleep(20);
	KUNIT_EXPECT_LT_MSG(test, ktime_get(),
			    twb_tick_time(c, TWB_BLOCK_START + TWB_BLOCK / 2),
			    "woke too late: the handler may have cascaded");
	/* The last of @timers, re-armed: the arm path's forward runs once. */
	probe = &c->timers[c->nr - 1];
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(probe), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(probe,
						 twheel_timer_expires(probe),
						 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_LE(test, twb_max_hold_moves(c), TWHEEL_HOLD_MOVES);
	twb_finish(test, c);
}

static struct kunit_case twheel_bounded_cases[] = {
	KUNIT_CASE(twheel_bounded_cascade_expiry),
	KUNIT_CASE(twheel_bounded_start_after_block_start),
	{}
};

/* Work under a base lock bounded by a constant. */
static struct kunit_suite twheel_bounded_suite = {
	.name = "twheel_bounded",
	.test_cases = twheel_bounded_cases,
};

kunit_test_suite(twheel_bounded_suite);
