// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_batch": runs of operations under one base lock, as
 * the device batches them (twheel_batch_begin() .. twheel_batch_end() of
 * src/facility.c, exported to this module with EXPORT_SYMBOL_IF_KUNIT):
 * never early, stop and shutdown, a running callback, in-place modifies,
 * and timers taken over from another CPU's base.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debug_locks.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/iopoll.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/twheel.h>
#include <linux/wait.h>

#include "compat.h"
#include "twheel_internal.h"
#include "util.h"

/*
 * Relative expiries of a run count from its one clock reading, which is
 * after the caller asked: never early for the caller.
 */
static void twheel_batch_arm_relative_never_early(struct kunit *test)
{
	enum { NR = 32 };
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, NR, twk_cb_record);
	struct twheel_batch_lock bl;
	int ret[NR];
	ktime_t t0;
	int i;

	t0 = ktime_get();
	for (i = 0; i < NR; i++)
		p[i].want = t0 + (i + 1) * tick / 3;
	twheel_batch_begin(w, &bl);
	for (i = 0; i < NR; i++)
		ret[i] = twheel_batch_arm(&bl, &p[i].timer, (i + 1) * tick / 3,
					  0, TWHEEL_MODE_REL);
	twheel_batch_end(&bl);
	KUNIT_EXPECT_GE(test, bl.now, t0);
	twk_expect_each_fired_once(test, ctx, p, ret, NR);
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), (u64)NR);
}

/* Stop reports the pending state; a shut down timer cannot be re-armed. */
static void twheel_batch_stop_reports_pending_and_shuts_down(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_single(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_record);
	struct twheel_batch_lock bl;
	int r[6];

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC,
						 0, TWHEEL_MODE_REL), 0);
	twheel_batch_begin(w, &bl);
	r[0] = twheel_batch_stop(&bl, &p[0].timer, false);	/* pending */
	r[1] = twheel_batch_stop(&bl, &p[0].timer, false);	/* idle */
	r[2] = twheel_batch_arm(&bl, &p[0].timer, 10 * NSEC_PER_SEC, 0,
				TWHEEL_MODE_REL);
	r[3] = twheel_batch_arm(&bl, &p[0].timer, 10 * NSEC_PER_SEC, 0,
				TWHEEL_MODE_REL);			/* pending */
	r[4] = twheel_batch_stop(&bl, &p[0].timer, true);
	r[5] = twheel_batch_arm(&bl, &p[0].timer, 0, 0, TWHEEL_MODE_REL);
	twheel_batch_end(&bl);
	KUNIT_EXPECT_EQ(test, r[0], 1);
	KUNIT_EXPECT_EQ(test, r[1], 0);
	KUNIT_EXPECT_EQ(test, r[2], 0);
	KUNIT_EXPECT_EQ(test, r[3], -EBUSY);
	KUNIT_EXPECT_EQ(test, r[4], 1);
	KUNIT_EXPECT_EQ(test, r[5], -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p[0].timer, 0, 0,
						 TWHEEL_MODE_REL), -ESHUTDOWN);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p[0].timer));
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	/* the base's hrtimer went idle with the last stop */
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
}

/**
 * struct twk_bstop - a run on another CPU while a callback runs
 * @p:       the probe whose callback runs first
 * @target:  the probe the run acts on: that callback's peer, else itself
 * @modify:  the run re-arms @target 10 s out instead of shutting it down
 * @take:    the wheel has a base per CPU, and the run takes @target over
 *           from the base running its callback first (twheel_batch_take())
 * @threads: a helper per online CPU
 * @helper:  the one the callback woke
 * @ret:     what twheel_batch_stop() or twheel_batch_modify() returned
 * @done:    the helper has made its call
 */
struct twk_bstop {
	struct twk_probe *p;
	struct twk_probe *target;
	bool modify;
	bool take;
	struct twk_threads *threads;
	struct task_struct *helper;
	int ret;
	atomic_t done;
};

static int twk_bstop_helper(void *data)
{
	struct twk_bstop *b = data;
	struct twheel_batch_lock bl;

	twheel_batch_begin(b->p->ctx->wheel, &bl);
	b->ret = b->take ? twheel_batch_take(&bl, &b->target->timer) : 0;
	if (!b->ret && b->modify)
		b->ret = twheel_batch_modify(&bl, &b->target->timer,
					     10 * NSEC_PER_SEC, 0,
					     TWHEEL_MODE_REL);
	else if (!b->ret)
		b->ret = twheel_batch_stop(&bl, &b->target->timer, true);
	twheel_batch_end(&bl);
	atomic_set_release(&b->done, 1);
	twk_idle_until_stop();
	return 0;
}

/* Wake the helper of another CPU and hold still until it made its call. */
static void twk_cb_bstop(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_bstop *b = p->ctx->priv;
	unsigned int cpu, this = smp_processor_id();
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;

	if (b->helper) {
		/* the peer of the first: its run is made */
		twk_record(p);
		return;
	}
	b->target = p->peer ?: p;
	for_each_online_cpu(cpu) {
		if (cpu != this && cpu < b->threads->nr && b->threads->tasks[cpu]) {
			b->helper = b->threads->tasks[cpu];
			break;
		}
	}
	if (b->helper) {
		wake_up_process(b->helper);
		while (ktime_get() < deadline && !atomic_read_acquire(&b->done))
			cpu_relax();
	}
	twk_record(p);
}

/*
 * @nr probes on one base (with @take, on a wheel of a base per CPU), with
 * the helpers of a struct twk_bstop in @ctx->priv: the first callback to
 * run has another CPU make a run.
 */
static struct twk_bstop *twk_bstop_new(struct kunit *test, struct twk_ctx *ctx,
				       unsigned int nr, bool modify, bool take)
{
	struct twk_bstop *b;
	struct twheel *w;
	unsigned int cpu;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	b->modify = modify;
	b->take = take;
	ctx->priv = b;
	/*
	 * One base: the helper's run locks the base running the callback.
	 * Else the run locks its own and takes the timer from that one.
	 */
	if (take)
		w = twk_wheel_flags(test, ctx, 500 * TWK_US, 0);
	else
		w = twk_wheel_single(test, ctx, 500 * TWK_US, 4, 64);
	b->p = twk_probes(test, ctx, w, nr, twk_cb_bstop);
	b->threads = twk_threads(test, nr_cpu_ids);
	for_each_online_cpu(cpu)
		twk_thread_create(test, b->threads, cpu, cpu, twk_bstop_helper, b);
	return b;
}

/*
 * A run cannot stop or re-arm a timer whose callback runs (it would have
 * to wait under the base lock): it refuses with -EBUSY and changes nothing.
 */
static void twk_batch_running_callback_ebusy(struct kunit *test, bool modify,
					     bool take)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_bstop *b = twk_bstop_new(test, ctx, 1, modify, take);

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&b->p->timer, TWK_MS, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_ASSERT_NOT_NULL(test, b->helper);
	KUNIT_ASSERT_TRUE(test, atomic_read_acquire(&b->done));
	KUNIT_EXPECT_EQ(test, b->ret, -EBUSY);
	/* not shut down by a refused stop, not armed by a refused modify */
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&b->p->timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&b->p->timer, 10 * NSEC_PER_SEC,
						 0, TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&b->p->timer), 1);
}

static void twheel_batch_stop_running_callback_ebusy(struct kunit *test)
{
	twk_batch_running_callback_ebusy(test, false, false);
}

static void twheel_batch_modify_running_callback_ebusy(struct kunit *test)
{
	twk_batch_running_callback_ebusy(test, true, false);
}

/* Nor does it take one over from another base while its callback runs. */
static void twheel_batch_take_running_callback_ebusy(struct kunit *test)
{
	twk_batch_running_callback_ebusy(test, true, true);
}

/*
 * A pending timer re-armed by a run stays on the engine: no cancel and no
 * new arming is counted, it keeps a key that fits the new range, and it
 * fires once, at its new expiry.  An idle one is armed.
 */
static void twheel_batch_modify_pending_in_place(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_single(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_record);
	struct twheel_batch_lock bl;
	struct twheel_stats st;
	ktime_t exp0, exp1;
	int r[4];

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC,
						 0, TWHEEL_MODE_REL), 0);
	twheel_batch_begin(w, &bl);
	/* later, far out: the hierarchical engine only rewrites the key */
	r[0] = twheel_batch_modify(&bl, &p[0].timer, 20 * NSEC_PER_SEC, 0,
				   TWHEEL_MODE_REL);
	exp0 = twheel_timer_expires(&p[0].timer);
	/* a range holding the key it has: nothing moves */
	r[1] = twheel_batch_modify(&bl, &p[0].timer, exp0 - NSEC_PER_SEC,
				   2 * NSEC_PER_SEC, TWHEEL_MODE_ABS);
	/* earlier: soon due */
	r[2] = twheel_batch_modify(&bl, &p[0].timer, 3 * TWK_MS, 0,
				   TWHEEL_MODE_REL);
	r[3] = twheel_batch_modify(&bl, &p[1].timer, 10 * NSEC_PER_SEC, 0,
				   TWHEEL_MODE_REL);		/* idle */
	twheel_batch_end(&bl);
	exp1 = bl.now + 3 * TWK_MS;
	KUNIT_EXPECT_EQ(test, r[0], 1);
	KUNIT_EXPECT_EQ(test, exp0, bl.now + 20 * NSEC_PER_SEC);
	KUNIT_EXPECT_EQ(test, r[1], 1);
	KUNIT_EXPECT_EQ(test, r[2], 1);
	KUNIT_EXPECT_EQ(test, r[3], 0);
	/* p[0] may have fired by now: one snapshot, both timers in it */
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.armed, 2ULL);
	KUNIT_EXPECT_EQ(test, st.cancelled, 0ULL);
	KUNIT_EXPECT_EQ(test, st.pending + st.fired, 2ULL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 1);
	KUNIT_EXPECT_GE(test, p[0].fired_at, exp1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 0);
}

struct twk_hout_param {
	const char *name;
	bool modify;
	bool take;
};

static const struct twk_hout_param twk_hout_params[] = {
	{ "stop", false, false },
	{ "modify", true, false },
	{ "take_stop", false, true },
	{ "take_modify", true, true },
};

TWK_ARRAY_PARAM_BY_NAME(twk_hout);

/*
 * Two timers due on one tick: while the first one's callback runs, the
 * other waits on the base's list of handed-out timers.  A run on another
 * CPU stops it (and shuts it down) or re-arms it 10 s out, on the same
 * base or, on a wheel of a base per CPU, after twheel_batch_take() has
 * brought it over to the run's: either way it was pending (1), it does
 * not run, and the handler, which takes the base lock again after the
 * first callback, does not find it on its list any more.  A re-armed one
 * is pending afterwards, on the run's base when it was taken over.
 */
static void twheel_batch_handed_out(struct kunit *test)
{
	const struct twk_hout_param *hp = test->param_value;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_bstop *b = twk_bstop_new(test, ctx, 2, hp->modify, hp->take);
	struct twk_probe *p = b->p, *other;
	struct twheel_batch_lock bl;
	int r[2];

	p[0].peer = &p[1];
	p[1].peer = &p[0];
	/* one run: neither can fire before the other is armed */
	twheel_batch_begin(ctx->wheel, &bl);
	r[0] = twheel_batch_arm(&bl, &p[0].timer, TWK_MS, 0, TWHEEL_MODE_REL);
	r[1] = twheel_batch_arm(&bl, &p[1].timer, TWK_MS, 0, TWHEEL_MODE_REL);
	twheel_batch_end(&bl);
	KUNIT_ASSERT_EQ(test, r[0], 0);
	KUNIT_ASSERT_EQ(test, r[1], 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_ASSERT_NOT_NULL(test, b->helper);
	KUNIT_ASSERT_TRUE(test, atomic_read_acquire(&b->done));
	other = b->target;
	KUNIT_EXPECT_EQ(test, b->ret, 1);
	KUNIT_EXPECT_EQ(test, twk_stat(ctx->wheel, migrated), hp->take ? 1ULL : 0ULL);
	if (hp->modify) {
		KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&other->timer));
		KUNIT_EXPECT_EQ(test, twk_stat(ctx->wheel, pending), 1ULL);
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&other->timer), 1);
	} else {
		KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&other->timer));
		KUNIT_EXPECT_EQ(test, twk_stat(ctx->wheel, pending), 0ULL);
		KUNIT_EXPECT_EQ(test, twheel_timer_start(&other->timer, TWK_MS, 0,
							 TWHEEL_MODE_REL),
				-ESHUTDOWN);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&other->fires), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), 1);
}

/* What a run on one CPU does with a probe's timer (twk_batch_on_cpu()). */
enum twk_bop {
	TWK_BSTOP,		/* twheel_batch_stop() */
	TWK_BARM,		/* twheel_batch_arm(), 2 ms */
	TWK_BTAKE_STOP,		/* twheel_batch_take(), then stop */
	TWK_BTAKE_MODIFY,	/* twheel_batch_take(), then modify, 2 ms */
};

struct twk_bcall {
	struct twk_probe *p;
	enum twk_bop op;
	int take;
	int ret;
};

static void twk_bcall_run(struct twk_bcall *c)
{
	struct twheel_timer *t = &c->p->timer;
	struct twheel_batch_lock bl;

	twheel_batch_begin(c->p->ctx->wheel, &bl);
	if (c->op == TWK_BTAKE_STOP || c->op == TWK_BTAKE_MODIFY)
		c->take = twheel_batch_take(&bl, t);
	if (c->take)
		c->ret = c->take;
	else if (c->op == TWK_BARM)
		c->ret = twheel_batch_arm(&bl, t, 2 * TWK_MS, 0, TWHEEL_MODE_REL);
	else if (c->op == TWK_BTAKE_MODIFY)
		c->ret = twheel_batch_modify(&bl, t, 2 * TWK_MS, 0,
					     TWHEEL_MODE_REL);
	else
		c->ret = twheel_batch_stop(&bl, t, false);
	twheel_batch_end(&bl);
}

static int twk_bcall_fn(void *data)
{
	twk_bcall_run(data);
	return 0;
}

/*
 * A run on @cpu doing @op with @p's timer: what the stop, arm or modify
 * returned (a failed take's error instead of it), and in @take (if not
 * NULL) what twheel_batch_take() returned.
 */
static int twk_batch_on_cpu(struct kunit *test, unsigned int cpu,
			    struct twk_probe *p, enum twk_bop op, int *take)
{
	struct twk_bcall c = { .p = p, .op = op };

	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(cpu, twk_bcall_fn, &c, false), 0);
	if (take)
		*take = c.take;
	return c.ret;
}

/*
 * A run locks its own CPU's base: it cannot stop a timer pending on
 * another base (-EXDEV, left alone) until twheel_batch_take() has moved it
 * over, which counts it as migrated there.  An idle timer is armed on the
 * run's base and fires there.
 */
static void twheel_batch_take_stops_timer_of_other_base(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_flags(test, ctx, 500 * TWK_US, 0);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_cpu);
	unsigned int a, b;
	int take = -1;

	twk_two_cpus(test, &a, &b);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, p, 0,
					 ktime_get() + 10 * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, p, TWK_BSTOP, NULL),
			-EXDEV);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, p, TWK_BTAKE_STOP,
					       &take), 1);
	KUNIT_EXPECT_EQ(test, take, 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, migrated), 1ULL);
	/*
	 * Idle now: armed on b's base, fires on b.  It is due in 2 ms, so
	 * b's pending count may already be back to 0 when read; only a's is
	 * certain.
	 */
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, p, TWK_BARM, NULL), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 0ULL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, (u64)b);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, fired), 1ULL);
}

/*
 * A timer pending on another base, taken over and re-armed by a run,
 * leaves its old base and fires once, on the run's CPU, at its new expiry;
 * a pinned one stays where it is placed (-EXDEV) and is not touched.
 */
static void twheel_batch_take_modify_moves_unless_pinned(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_flags(test, ctx, 500 * TWK_US, 0);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_cpu);
	ktime_t far = ktime_get() + 10 * NSEC_PER_SEC, t0;
	unsigned int a, b;
	int take = -1;

	twk_two_cpus(test, &a, &b);
	twheel_timer_setup(&p[1].timer, w, twk_cb_cpu, TWHEEL_TIMER_PINNED);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, &p[0], 0, far), 0);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, &p[1], 0, far), 0);
	KUNIT_ASSERT_EQ(test, twk_cpu_stat(w, a, pending), 2ULL);

	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, &p[1], TWK_BTAKE_MODIFY,
					       &take), -EXDEV);
	KUNIT_EXPECT_EQ(test, take, -EXDEV);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p[1].timer), far);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 2ULL);

	t0 = ktime_get();
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, &p[0], TWK_BTAKE_MODIFY,
					       &take), 1);
	KUNIT_EXPECT_EQ(test, take, 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 1ULL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p[0].data, (u64)b);
	KUNIT_EXPECT_GE(test, p[0].fired_at, t0 + 2 * TWK_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), 1);
}

/**
 * struct twk_hold - one CPU holds its base in a run while another acts
 * @p:        the probe whose timer the other CPU's run takes
 * @held:     completed by the holder once its run has begun
 * @finished: completed by the other CPU's thread after its run
 * @done:     the other run is over
 * @take:     what twheel_batch_take() returned in the other run
 * @late:     the holder gave up waiting for @done
 */
struct twk_hold {
	struct twk_probe *p;
	struct completion held;
	struct completion finished;
	atomic_t done;
	int take;
	bool late;
};

/*
 * Spins with its base locked and interrupts off until the other run is
 * over: the last thread to be woken, so that nothing it keeps off its CPU
 * (the case itself, say) has anything left to do before the other run.
 */
static int twk_hold_fn(void *data)
{
	struct twk_hold *h = data;
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;
	struct twheel_batch_lock bl;

	twheel_batch_begin(h->p->ctx->wheel, &bl);
	complete_all(&h->held);
	while (!atomic_read_acquire(&h->done) && !h->late)
		h->late = ktime_get() > deadline;
	twheel_batch_end(&bl);
	twk_idle_until_stop();
	return 0;
}

/* Sleeps until the holder's run has begun, then makes its own run. */
static int twk_hold_take_fn(void *data)
{
	struct twk_hold *h = data;
	struct twheel_batch_lock bl;

	twk_wait_done(&h->held, TWK_SPIN_MS);
	twheel_batch_begin(h->p->ctx->wheel, &bl);
	h->take = twheel_batch_take(&bl, &h->p->timer);
	twheel_batch_end(&bl);
	atomic_set_release(&h->done, 1);
	complete(&h->finished);
	twk_idle_until_stop();
	return 0;
}

/*
 * The run only tries the other base's lock (it holds its own, and the two
 * may be taken the other way round elsewhere): while a run on a holds a's
 * base, a run on b cannot take a's timer (-EXDEV) and leaves it pending
 * there.  Each run is a thread bound to its CPU; the holder waits for the
 * other run to end, so the lock is held throughout whatever the timing.
 */
static void twheel_batch_take_busy_base_exdev(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_flags(test, ctx, 500 * TWK_US, 0);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_cpu);
	struct twk_threads *threads = twk_threads(test, 2);
	struct twk_hold *h;
	unsigned int a, b;

	twk_two_cpus(test, &a, &b);
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	h->p = p;
	h->take = 1;
	init_completion(&h->finished);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, p, 0,
					 ktime_get() + 10 * NSEC_PER_SEC), 0);
	init_completion(&h->held);
	/* the taker first: it sleeps until the holder has its lock */
	wake_up_process(twk_thread_create(test, threads, 1, b,
					  twk_hold_take_fn, h));
	wake_up_process(twk_thread_create(test, threads, 0, a, twk_hold_fn, h));
	KUNIT_ASSERT_NE(test, twk_wait_done(&h->finished, 2 * TWK_SPIN_MS), 0UL);
	KUNIT_EXPECT_TRUE(test, completion_done(&h->held));
	KUNIT_EXPECT_FALSE(test, h->late);
	KUNIT_EXPECT_EQ(test, h->take, -EXDEV);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, migrated), 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 1);
}

static struct kunit_case twheel_batch_cases[] = {
	KUNIT_CASE(twheel_batch_arm_relative_never_early),
	KUNIT_CASE(twheel_batch_stop_reports_pending_and_shuts_down),
	KUNIT_CASE(twheel_batch_stop_running_callback_ebusy),
	KUNIT_CASE(twheel_batch_modify_running_callback_ebusy),
	KUNIT_CASE(twheel_batch_modify_pending_in_place),
	KUNIT_CASE_PARAM(twheel_batch_handed_out, twk_hout_gen_params),
	KUNIT_CASE(twheel_batch_take_stops_timer_of_other_base),
	KUNIT_CASE(twheel_batch_take_modify_moves_unless_pinned),
	KUNIT_CASE(twheel_batch_take_busy_base_exdev),
	KUNIT_CASE(twheel_batch_take_running_callback_ebusy),
	{}
};

/* Runs of operations under one base lock, as the device batches them. */
static struct kunit_suite twheel_batch_suite = {
	.name = "twheel_batch",
	.test_cases = twheel_batch_cases,
};

kunit_test_suite(twheel_batch_suite);
