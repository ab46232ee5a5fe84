// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_smp": the per-CPU bases of src/facility.c on two
 * CPUs: placement by CPU and flags, a modify while the callback runs, the
 * migration window (the migrate_us delay point), the concurrency promise of
 * per-CPU and single-base instances, and CPU hotplug with timers pending.
 * The same under load is twheel_smp_stress (tests/stress/).
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
#include <linux/timer.h>
#include <linux/twheel.h>
#include <linux/wait.h>

#include "compat.h"
#include "twheel_internal.h"
#include "util.h"

/*
 * The cases below need two online CPUs, A and B; they run code on a chosen
 * CPU with smp_call_on_cpu() (a kworker bound to it, process context, and
 * the caller waits for it) or in helper kthreads bound to it.
 */

static void twheel_create_flags_unknown_flags_einval(struct kunit *test)
{
	struct twheel *w;
	struct twheel_stats st;

	w = twheel_create_flags(TWK_MS, 4, 64, TWHEEL_ENGINE_HIER, BIT(7));
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(w), -EINVAL);
	if (!IS_ERR(w))
		twheel_destroy(w);
	w = twheel_create_flags(TWK_MS, 4, 64, TWHEEL_ENGINE_LAWN,
				TWHEEL_CREATE_SINGLE_BASE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	twheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.bases, 1ULL);
	KUNIT_EXPECT_EQ(test, st.engine, (u64)TWHEEL_ENGINE_LAWN);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
	w = twheel_create(TWK_MS, 4, 64);
	KUNIT_ASSERT_FALSE(test, IS_ERR(w));
	twheel_get_stats(w, &st);
	/* a base per CPU online since the wheel was created */
	KUNIT_EXPECT_EQ(test, st.bases, (u64)num_online_cpus());
	KUNIT_EXPECT_EQ(test, twheel_get_cpu_stats(w, nr_cpu_ids, &st), -EINVAL);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
}

/* Each CPU's arms land on its base, and its callbacks run on that CPU. */
static void twheel_timer_start_arms_on_calling_cpu(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int a, b, cpu, n = 0;
	struct twk_probe *p;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	w = twk_wheel_flags(test, ctx, tick, 0);
	p = twk_probes(test, ctx, w, nr_cpu_ids, twk_cb_cpu);
	for_each_online_cpu(cpu) {
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, cpu, &p[cpu], 0,
						 ktime_get() + 10 * NSEC_PER_SEC), 0);
		n++;
	}
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, twk_cpu_stat(w, cpu, pending), 1ULL, "cpu%u", cpu);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), (u64)n);
	/* Cancelled from whichever CPU this thread is on: one lock each. */
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[cpu].timer), 1);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));

	for_each_online_cpu(cpu) {
		p[cpu].want = ktime_get() + 3 * tick;
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, cpu, &p[cpu], 0, p[cpu].want), 0);
	}
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, n, TWK_TIMEOUT_MS));
	for_each_online_cpu(cpu) {
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[cpu].timer), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&p[cpu].fires), 1);
		KUNIT_EXPECT_GE(test, p[cpu].fired_at, p[cpu].want);
		KUNIT_EXPECT_EQ_MSG(test, p[cpu].data, (u64)cpu,
				    "armed on cpu%u, fired on cpu%llu", cpu, p[cpu].data);
		KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, cpu, fired), 1ULL);
	}
	KUNIT_EXPECT_EQ(test, twk_stat(w, migrated), 0ULL);
}

/* For read_poll_timeout(), which wants a function. */
static u64 twk_cpu_wakeups(struct twheel *w, unsigned int cpu)
{
	return twk_cpu_stat(w, cpu, wakeups);
}

/*
 * Tickless per base: timers armed on A only, some firing, some an hour
 * out.  B's base never arms its hrtimer: 0 wakeups on B, while A's base
 * woke for the ones that fired; afterwards, with only far timers left,
 * A's base sleeps too (no wakeup over 100 ms).
 */
static void twheel_tick_idle_cpu_base_no_wakeups(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int a, b, i;
	struct twk_probe *p;
	struct twheel *w;
	u64 wa, wk;
	int ret;

	twk_two_cpus(test, &a, &b);
	w = twk_wheel_flags(test, ctx, tick, 0);
	p = twk_probes(test, ctx, w, 8, twk_cb_cpu);
	for (i = 0; i < 8; i++) {
		p[i].want = ktime_get() + (i < 4 ? (i + 2) * tick : 3600 * NSEC_PER_SEC);
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, &p[i], 0, p[i].want), 0);
	}
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 4, TWK_TIMEOUT_MS));
	wa = twk_cpu_stat(w, a, wakeups);
	KUNIT_EXPECT_GE(test, wa, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, wakeups), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 4ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, pending), 0ULL);
	/* A's base may still wake once for the last expiry; then it sleeps. */
	ret = read_poll_timeout(twk_cpu_wakeups, wk, wk > wa + 1, 2000,
				100 * USEC_PER_MSEC, false, w, a);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, wakeups), 0ULL);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), i < 4 ? 0 : 1);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

struct twk_move_param {
	const char *name;
	unsigned int flags;
	bool moves;		/* a pending timer re-armed on B moves to B */
	bool idle_moves;	/* an idle timer armed on B goes to B */
};

static const struct twk_move_param twk_move_params[] = {
	{ "default_moves_to_caller", 0, true, true },
	{ "pinned_stays", TWHEEL_TIMER_PINNED, false, false },
	{ "any_cpu_pending_stays", TWHEEL_TIMER_ANY_CPU, false, true },
};

TWK_ARRAY_PARAM_BY_NAME(twk_move);

/*
 * A timer armed on A (10 s out) is modified from B (20 s out): by default
 * it moves to B's base; TWHEEL_TIMER_PINNED and, while pending,
 * TWHEEL_TIMER_ANY_CPU keep it on A.  Modified from B once more to fire
 * soon, it fires once, not early, on the CPU of the base it is on.
 * Armed again from B once idle, a default or ANY_CPU timer goes to B, a
 * pinned one stays on A.
 */
static void twheel_timer_modify_other_cpu_picks_base_by_flags(struct kunit *test)
{
	const struct twk_move_param *mp = test->param_value;
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int a, b, on, on2;
	struct twk_probe *p;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	w = twk_wheel_flags(test, ctx, tick, 0);
	p = twk_probes(test, ctx, w, 1, twk_cb_cpu);
	twheel_timer_setup(&p->timer, w, twk_cb_cpu, mp->flags);
	on = mp->moves ? b : a;
	on2 = mp->idle_moves ? b : a;

	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, p, 0,
					 ktime_get() + 10 * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 1ULL);
	/* Still far out, so that it cannot have fired when we look. */
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, p, 1,
					 ktime_get() + 20 * NSEC_PER_SEC), 1);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, on, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, on == a ? b : a, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, migrated), mp->moves ? 1ULL : 0ULL);
	/* Brought near from B again: the same rule keeps it on @on. */
	p->want = ktime_get() + 5 * tick;
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, p, 1, p->want), 1);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, (u64)on);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, on, fired), 1ULL);
	KUNIT_EXPECT_GE(test, p->fired_at, p->want);

	/* Idle now: armed from B. */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, b, p, 0,
					 ktime_get() + 10 * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, on2, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, a, p, 3, 0), 1);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
}

/**
 * struct twk_mig - a callback that holds still while another CPU acts on
 * its timer
 * @p:       the probe, armed on CPU A
 * @a:       CPU A
 * @b:       CPU B, where the helper runs
 * @entered: the callback began
 * @acted:   the helper made its call
 * @inside:  callbacks of the timer running now (must stay <= 1)
 * @overlap: a callback of the timer began while another ran
 * @ret:     what the helper's modify returned
 * @pend_a:  pending timers on A's base right after the helper's call
 * @pend_b:  same for B
 * @done:    the helper finished
 */
struct twk_mig {
	struct twk_probe *p;
	unsigned int a;
	unsigned int b;
	atomic_t entered;
	atomic_t acted;
	atomic_t inside;
	atomic_t overlap;
	int ret;
	u64 pend_a, pend_b;
	struct completion done;
};

static void twk_cb_mig(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_ctx *ctx = p->ctx;
	struct twk_mig *m = ctx->priv;
	ktime_t now = ktime_get(), deadline = now + TWK_SPIN_MS * (ktime_t)TWK_MS;

	if (atomic_inc_return(&m->inside) != 1)
		atomic_inc(&m->overlap);
	/* The expiry in force now: the helper re-arms only after "entered". */
	if (now < twheel_timer_expires(timer))
		atomic_inc(&ctx->early);
	p->data = raw_smp_processor_id();
	if (atomic_inc_return(&m->entered) == 1) {
		/* First run: hold still until B re-armed the timer. */
		while (!atomic_read(&m->acted) && ktime_get() < deadline)
			cpu_relax();
	}
	atomic_dec(&m->inside);
	atomic_inc_return(&p->fires);
	atomic_inc_return(&ctx->fired);
	wake_up(&ctx->wq);
}

static int twk_mig_helper(void *data)
{
	struct twk_mig *m = data;
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;

	while (!atomic_read(&m->entered) && ktime_get() < deadline)
		cpu_relax();
	m->p->want = ktime_get() + 2 * (ktime_t)m->p->ctx->tick_ns;
	m->ret = twheel_timer_modify(&m->p->timer, m->p->want, 0,
				     TWHEEL_MODE_ABS);
	m->pend_a = twk_cpu_stat(m->p->ctx->wheel, m->a, pending);
	m->pend_b = twk_cpu_stat(m->p->ctx->wheel, m->b, pending);
	atomic_set(&m->acted, 1);
	complete(&m->done);
	twk_idle_until_stop();
	return 0;
}

/*
 * Migration while the callback runs: B modifies the timer while its
 * callback runs on A.  It must stay on A's base (else a sync cancel would
 * wait on the wrong base and a second callback could start on B while the
 * first runs): pending on A, not B; it fires again after the first
 * callback returned, on A, and the two never overlap.
 */
static void twheel_timer_modify_running_callback_stays_on_base(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_threads *th;
	struct task_struct *h;
	struct twk_mig *m;
	unsigned int a, b;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, m);
	init_completion(&m->done);
	m->a = a;
	m->b = b;
	ctx->priv = m;
	w = twk_wheel_flags(test, ctx, tick, 0);
	m->p = twk_probes(test, ctx, w, 1, twk_cb_mig);
	th = twk_threads(test, 1);
	h = twk_thread_create(test, th, 0, b, twk_mig_helper, m);
	wake_up_process(h);

	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, m->p, 0, ktime_get() + 2 * tick), 0);
	KUNIT_ASSERT_NE(test, twk_wait_done(&m->done, 2 * TWK_TIMEOUT_MS), 0UL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&m->p->timer), 0);

	KUNIT_EXPECT_EQ(test, m->ret, 0);	/* unlinked while it runs */
	KUNIT_EXPECT_EQ(test, m->pend_a, 1ULL);
	KUNIT_EXPECT_EQ(test, m->pend_b, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&m->p->fires), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&m->overlap), 0);
	KUNIT_EXPECT_EQ(test, m->p->data, (u64)a);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, fired), 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, migrated), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

#ifdef TWHEEL_DEBUG_DELAYS
/*
 * The tick handler's own hrtimer, started again while the handler waits
 * for the base lock, on a single-base instance.
 */
struct twk_restart {
	struct twk_probe *p;		/* A, then B' and B */
	struct hrtimer x;		/* another soft hrtimer on A's CPU */
	unsigned int hits;		/* the tick delay point's count before */
	int a_ret;			/* B's cancel of A */
	bool b_pending;			/* B, 3 s out, was pending as @x fired */
	struct completion acted;
	struct completion x_done;
};

static enum hrtimer_restart twk_restart_x(struct hrtimer *x)
{
	struct twk_restart *r = container_of(x, struct twk_restart, x);

	r->b_pending = twheel_timer_pending(&r->p[2].timer);
	complete(&r->x_done);
	return HRTIMER_NORESTART;
}

static int twk_restart_x_start(void *data)
{
	struct twk_restart *r = data;

	hrtimer_start(&r->x, ktime_get() + 400 * (ktime_t)TWK_MS,
		      HRTIMER_MODE_ABS_PINNED_SOFT);
	return 0;
}

static void twk_restart_free(struct kunit_resource *res)
{
	struct twk_restart *r = res->data;

	/* also when an assertion ended the case inside the window */
	twheel_delay_set(TWHEEL_DELAY_TICK, 0);
	hrtimer_cancel(&r->x);
}

/*
 * B, inside the window of A's tick: cancel A, the base's last timer (its
 * hrtimer cannot be cancelled, its handler runs), then arm B' 5 ms out,
 * which starts the hrtimer again, and B 3 s out, and cancel B'.
 */
static int twk_restart_b(void *data)
{
	struct twk_restart *r = data;
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;

	while (twheel_delay_hits(TWHEEL_DELAY_TICK) == r->hits &&
	       ktime_get() < deadline)
		cpu_relax();
	r->a_ret = twheel_timer_cancel(&r->p[0].timer);
	twheel_timer_start(&r->p[1].timer, 5 * TWK_MS, 0, TWHEEL_MODE_REL);
	twheel_timer_start(&r->p[2].timer, 3 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
	twheel_timer_cancel(&r->p[1].timer);
	complete(&r->acted);
	twk_idle_until_stop();
	return 0;
}

/*
 * A base's hrtimer is off its queue while the handler runs, so another
 * CPU may start it again before the handler takes the base lock.  The
 * handler must then move that arming to the expiry it computes, not
 * rewrite the expiry of a queued hrtimer: that would leave it out of
 * order in the CPU's queue, where it holds back every soft hrtimer of
 * the CPU due before its new expiry.  Here x, due in 400 ms on A's
 * CPU, must not wait for twheel's B, 3 s out: B is still pending when x
 * fires.
 */
static void twheel_tick_restarted_while_running_keeps_queue_order(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_threads *th;
	struct twk_restart *r;
	struct task_struct *h;
	unsigned int a, b;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	init_completion(&r->acted);
	init_completion(&r->x_done);
	twheel_hrtimer_setup(&r->x, twk_restart_x, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_PINNED_SOFT);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 twk_restart_free,
							 GFP_KERNEL, r));
	w = twk_wheel_flags(test, ctx, TWK_MS, TWHEEL_CREATE_SINGLE_BASE);
	r->p = twk_probes(test, ctx, w, 3, twk_cb_record);
	th = twk_threads(test, 1);
	h = twk_thread_create(test, th, 0, b, twk_restart_b, r);

	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(a, twk_restart_x_start, r, false), 0);
	r->hits = twheel_delay_hits(TWHEEL_DELAY_TICK);
	twheel_delay_set(TWHEEL_DELAY_TICK, 50000);
	wake_up_process(h);
	/* A on A's CPU: the single base's hrtimer is queued there */
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, &r->p[0], 0,
					 ktime_get() + 2 * TWK_MS), 0);
	KUNIT_ASSERT_NE(test, twk_wait_done(&r->acted, TWK_TIMEOUT_MS), 0UL);
	twheel_delay_set(TWHEEL_DELAY_TICK, 0);
	KUNIT_ASSERT_EQ_MSG(test, r->a_ret, 1, "B missed the window");
	KUNIT_ASSERT_NE(test, twk_wait_done(&r->x_done, TWK_TIMEOUT_MS), 0UL);
	KUNIT_EXPECT_TRUE_MSG(test, r->b_pending,
			      "x waited for twheel's hrtimer, due 3 s out");
	KUNIT_EXPECT_EQ(test, atomic_read(&r->p[0].fires), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}
#else
static void twheel_tick_restarted_while_running_keeps_queue_order(struct kunit *test)
{
	kunit_skip(test, "needs the delay points of TWHEEL_DEBUG=1");
}
#endif

/* Times the migration window delayed a CPU; 0 in a build without it. */
static unsigned int twk_migrate_hits(void)
{
#ifdef TWHEEL_DEBUG_DELAYS
	return twheel_delay_hits(TWHEEL_DELAY_MIGRATE);
#else
	return 0;
#endif
}

/* Set the migration window's delay point; false if the build has none. */
static bool twk_set_migrate_delay(unsigned int us)
{
#ifdef TWHEEL_DEBUG_DELAYS
	twheel_delay_set(TWHEEL_DELAY_MIGRATE, us);
	return true;
#else
	return false;
#endif
}

/*
 * However a case that sets the move window's delay point ends, an
 * assertion included, it is 0 again afterwards: a later case must not run
 * with it.
 */
static void twk_points_free(struct kunit_resource *res)
{
#ifdef TWHEEL_DEBUG_DELAYS
	twheel_delay_set(TWHEEL_DELAY_MIGRATE, 0);
#endif
}

static void twk_points_reset_at_end(struct kunit *test)
{
	/* a non-NULL context: kunit_alloc_resource() returns it */
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 twk_points_free,
							 GFP_KERNEL, test));
}

/*
 * A's call on the timer of a window case: @op 1 modify (30 s), 2 cancel,
 * 3 cancel_sync, 4 a batch run on A's base that takes the timer over and
 * stops it (twheel_batch_take() finds it in transit to B's base).
 */
static int twk_win_op(struct twk_probe *p, int op)
{
	struct twheel_batch_lock bl;
	int ret;

	if (op == 4) {
		twheel_batch_begin(p->timer.wheel, &bl);
		ret = twheel_batch_take(&bl, &p->timer);
		if (!ret)
			ret = twheel_batch_stop(&bl, &p->timer, false);
		twheel_batch_end(&bl);
		/* B's base locked for a moment (its tick): as the device would */
		return ret == -EXDEV ? twheel_timer_cancel(&p->timer) : ret;
	}
	if (op == 3)
		return twheel_timer_cancel_sync(&p->timer);
	if (op == 2)
		return twheel_timer_cancel(&p->timer);
	return twheel_timer_modify(&p->timer, 30 * NSEC_PER_SEC, 0,
				   TWHEEL_MODE_REL);
}

/* A thread of a window case is done: the last one completes @done. */
static int twk_win_done(atomic_t *left, struct completion *done)
{
	if (atomic_dec_and_test(left))
		complete(done);
	twk_idle_until_stop();
	return 0;
}

/**
 * struct twk_win - two CPUs on one timer while it migrates
 * @p:        the timer, pending on A, 10 s out
 * @op:       what A does while B's modify migrates it: twk_win_op()
 * @a_ready:  A is waiting for B's call (B calls only then)
 * @calling:  B is about to call modify
 * @b_ret:    what B's modify returned
 * @b_us:     how long B's modify took, in us (a miss's diagnosis)
 * @a_ret:    what A's call returned
 * @a_saw:    @calling as A first saw it change (1: B in its modify)
 * @in_window: A saw B's modify in the window (the delay point delayed)
 * @pending_in_window: twheel_timer_pending() as A read it there
 * @hits0:    twheel_delay_hits() of migrate_us before the attempt
 * @done:     both finished
 * @left:     threads still running
 */
struct twk_win {
	struct twk_probe *p;
	int op;
	atomic_t a_ready;
	atomic_t calling;
	int b_ret;
	s64 b_us;
	int a_ret;
	int a_saw;
	bool in_window;
	bool pending_in_window;
	unsigned int hits0;
	struct completion done;
	atomic_t left;
};

static int twk_win_b(void *data)
{
	struct twk_win *r = data;
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;
	ktime_t t0;

	while (!atomic_read(&r->a_ready) && ktime_get() < deadline)
		cpu_relax();
	t0 = ktime_get();
	atomic_set(&r->calling, 1);
	r->b_ret = twheel_timer_modify(&r->p->timer, 20 * NSEC_PER_SEC, 0,
				       TWHEEL_MODE_REL);
	atomic_set(&r->calling, 2);
	r->b_us = ktime_us_delta(ktime_get(), t0);
	return twk_win_done(&r->left, &r->done);
}

static int twk_win_a(void *data)
{
	struct twk_win *r = data;
	ktime_t deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;

	atomic_set(&r->a_ready, 1);
	while (!atomic_read(&r->calling) && ktime_get() < deadline)
		cpu_relax();
	r->a_saw = atomic_read(&r->calling);
	/*
	 * B's modify is in the window once its delay point has begun to
	 * delay: the timer is in transit, linked on neither base.  It must
	 * read pending all the same, as a timer_list does while __mod_timer()
	 * moves it.
	 */
	while (atomic_read(&r->calling) == 1 && ktime_get() < deadline) {
		if (twk_migrate_hits() != r->hits0) {
			r->in_window = true;
			r->pending_in_window = twheel_timer_pending(&r->p->timer);
			break;
		}
		cpu_relax();
	}
	r->a_ret = twk_win_op(r->p, r->op);
	return twk_win_done(&r->left, &r->done);
}

struct twk_win_param {
	const char *name;
	int op;
};

static const struct twk_win_param twk_win_params[] = {
	{ "modify", 1 },
	{ "cancel", 2 },
	{ "cancel_sync", 3 },
	{ "batch_take_stop", 4 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_win);

/*
 * The migration window: B's modify moves the timer from A's base to B's:
 * it takes the timer off A's base and leaves it in transit to B's, holding
 * neither lock (the delay point migrate_us holds it there for 100 ms in
 * debug builds).  A modifies, cancels or sync-cancels the timer meanwhile,
 * or takes it over to its own base in a batch run and stops it there.
 * A must find the timer on B's base, link it there and act on it: both
 * calls see it pending (return 1), it ends linked once (after a modify
 * pending on A's base, where A's modify moved it; after a cancel not at
 * all; the counters agree) and is never lost.  Were A not to link the
 * timer first, its cancel would report it idle (0) and B would link it
 * after the cancel; were B to link it whatever it finds, it would link it
 * a second time after A's modify (list corruption) or after A's cancel.
 * In transit the timer reads pending to A, as a timer_list does while
 * __mod_timer() moves it between bases (detach_if_pending(..., false)
 * keeps its pprev).
 */
static void twheel_timer_ops_link_timer_in_transit(struct kunit *test)
{
	const struct twk_win_param *wp = test->param_value;
	const unsigned int attempts = 10;
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel_stats st0, st;
	struct twk_threads *th;
	unsigned int a, b, k;
	struct twk_win *r;
	unsigned int hits0;
	u64 moved0;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	w = twk_wheel_flags(test, ctx, tick, 0);
	r->p = twk_probes(test, ctx, w, 1, twk_cb_record);
	th = twk_threads(test, 2 * attempts);
	/* without the delay point the window would be hit by chance only */
	twk_points_reset_at_end(test);
	if (!twk_set_migrate_delay(100000))
		kunit_skip(test, "needs the delay points of TWHEEL_DEBUG=1");
	hits0 = twk_migrate_hits();

	/*
	 * A vCPU can be descheduled by a loaded host (make check runs
	 * another VM beside this one) for longer than the window: try again
	 * (up to @attempts, 100 ms apart, so that a busy second of the host
	 * does not take them all) until A was seen in it; every attempt must
	 * get every answer right.
	 */
	for (k = 0; k < attempts; k++) {
		r->op = wp->op;
		r->in_window = false;
		r->pending_in_window = false;
		r->hits0 = twk_migrate_hits();
		r->a_ret = 0;
		r->b_ret = 0;
		atomic_set(&r->a_ready, 0);
		atomic_set(&r->calling, 0);
		atomic_set(&r->left, 2);
		init_completion(&r->done);
		st0 = twk_stats(w);
		moved0 = twk_cpu_stat(w, a, migrated);
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, r->p, 0,
						 ktime_get() + 10 * NSEC_PER_SEC), 0);
		twk_thread_create(test, th, 2 * k, a, twk_win_a, r);
		twk_thread_create(test, th, 2 * k + 1, b, twk_win_b, r);
		wake_up_process(th->tasks[2 * k]);
		wake_up_process(th->tasks[2 * k + 1]);
		KUNIT_ASSERT_NE(test, twk_wait_done(&r->done, 2 * TWK_TIMEOUT_MS), 0UL);

		KUNIT_EXPECT_EQ(test, r->b_ret, 1);
		KUNIT_EXPECT_EQ(test, r->a_ret, 1);
		/* the window is as wide as asked on every CPU */
		KUNIT_EXPECT_GE(test, r->b_us, 100000LL);
		if (r->in_window)
			KUNIT_EXPECT_TRUE_MSG(test, r->pending_in_window,
					      "the timer in transit read as not pending");
		st = twk_stats(w);
		if (r->op >= 2) {
			KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&r->p->timer));
			KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
			KUNIT_EXPECT_EQ(test, st.cancelled - st0.cancelled, 1ULL);
		} else {
			KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&r->p->timer));
			KUNIT_EXPECT_EQ(test, st.pending, 1ULL);
			/* A's modify was the later one */
			if (r->in_window)
				KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, pending), 1ULL);
			KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&r->p->timer), 1);
		}
		KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
		KUNIT_EXPECT_EQ(test, st.armed - st0.armed, 1ULL);
		/*
		 * A's take linked the timer on B's base first, then moved it,
		 * pending, to A's: counted migrated there.  Taken for an idle
		 * timer, it would have been moved in transit and counted not.
		 */
		if (r->op == 4 && r->in_window)
			KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, a, migrated) - moved0, 1ULL);
		if (r->in_window)
			break;
		msleep(100);
	}
	twk_set_migrate_delay(0);

	kunit_info(test, "A in the window: %d (attempt %u; B's modify %lld us, A saw %d, %u delays)\n",
		   r->in_window, min(k + 1, attempts), r->b_us, r->a_saw,
		   twk_migrate_hits() - hits0);
	KUNIT_EXPECT_TRUE(test, r->in_window);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), 0);
}

/* Spins until the other callback of the case is inside too, or 1 s. */
static void twk_cb_meet(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_ctx *ctx = p->ctx;
	ktime_t deadline = ktime_get() + (ktime_t)NSEC_PER_SEC;

	if (atomic_inc_return(&ctx->order) > 1)
		atomic_inc(&ctx->errors);	/* two callbacks at once */
	while (atomic_read(&ctx->order) < 2 && ktime_get() < deadline)
		cpu_relax();
	p->data = raw_smp_processor_id();
	twk_record(p);
	/* after the record: the test may look once both are counted */
	atomic_dec(&ctx->order);
}

struct twk_single_param {
	const char *name;
	unsigned int flags;
};

static const struct twk_single_param twk_single_params[] = {
	{ "per_cpu_bases_run_in_parallel", 0 },
	{ "single_base_never_concurrent", TWHEEL_CREATE_SINGLE_BASE },
};

TWK_ARRAY_PARAM_BY_NAME(twk_single);

/*
 * The concurrency promise, both ways.  Two timers due at the same time,
 * armed on A and on B; each callback waits (up to 1 s) for the other to
 * be running too.  With per-CPU bases they do meet: callbacks of one
 * instance run in parallel.  With TWHEEL_CREATE_SINGLE_BASE they never
 * do: callbacks of the instance never run concurrently, as before per-CPU
 * bases.  Both fire once, not early, either way.
 *
 * The second timer must be pending before the first fires: the test runs
 * on some CPU, maybe A, whose callback then spins in softirq and keeps the
 * test from arming B until it gave up waiting.  An attempt whose arming
 * ended past the expiry proves nothing, and is made again on a fresh wheel
 * with four times the lead (10, 40, 160, 640 ticks).
 */
static void twheel_create_flags_callback_concurrency(struct kunit *test)
{
	const struct twk_single_param *sp = test->param_value;
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx;
	struct twk_probe *p;
	unsigned int a, b, attempt;
	ktime_t e, armed;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	for (attempt = 0;; attempt++) {
		ctx = twk_ctx_new(test);
		w = twk_wheel_flags(test, ctx, tick, sp->flags);
		p = twk_probes(test, ctx, w, 2, twk_cb_meet);
		e = ktime_get() + (10 * tick << (2 * attempt));
		p[0].want = e;
		p[1].want = e;
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, a, &p[0], 0, e), 0);
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, b, &p[1], 0, e), 0);
		armed = ktime_get();
		if (armed < e)
			break;
		kunit_info(test, "attempt %u: armed %lld us past the expiry",
			   attempt + 1, (armed - e) / NSEC_PER_USEC);
		KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
		twheel_timer_cancel_sync(&p[0].timer);
		twheel_timer_cancel_sync(&p[1].timer);
		if (attempt == 3)
			KUNIT_FAIL_AND_ABORT(test, "armed after the expiry 4 times");
	}
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	if (sp->flags & TWHEEL_CREATE_SINGLE_BASE) {
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&ctx->errors), 0,
				    "callbacks of a single-base instance overlapped");
		KUNIT_EXPECT_EQ(test, twk_stat(w, bases), 1ULL);
	} else {
		KUNIT_EXPECT_GT_MSG(test, atomic_read(&ctx->errors), 0,
				    "callbacks on two CPUs' bases never overlapped");
		KUNIT_EXPECT_EQ(test, p[0].data, (u64)a);
		KUNIT_EXPECT_EQ(test, p[1].data, (u64)b);
	}
}

#ifdef CONFIG_HOTPLUG_CPU
#define TWK_HP_NEAR	24
#define TWK_HP_FAR	8

/*
 * CPU hotplug: B holds timers due over the next 200 ms and timers 10 s
 * out when it goes offline.  Its base must be emptied into a live one:
 * nothing pending on B, the instance's pending count intact, every near
 * timer fires exactly once, not early, on a live CPU; the far ones are
 * still pending and cancel.  B comes back and takes timers again.
 */
static void twheel_cpu_offline_moves_pending_timers(struct kunit *test)
{
	const u64 tick = TWK_MS;
	const unsigned int nr = TWK_HP_NEAR + TWK_HP_FAR;
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int a, b, i, bad = 0;
	struct twk_probe *p;
	struct twheel *w;
	ktime_t t0, t_off;
	int ret;

	twk_two_cpus(test, &a, &b);
	if (!cpu_is_hotpluggable(b))
		kunit_skip(test, "cpu%u cannot go offline", b);
	w = twk_wheel_flags(test, ctx, tick, 0);
	p = twk_probes(test, ctx, w, nr + 2, twk_cb_cpu);
	/* p[nr + 1]: pinned to B, pending when B goes */
	twheel_timer_setup(&p[nr + 1].timer, w, twk_cb_cpu, TWHEEL_TIMER_PINNED);
	t0 = ktime_get();
	for (i = 0; i < nr; i++) {
		p[i].want = i < TWK_HP_NEAR ?
			t0 + 300 * (ktime_t)TWK_MS + i * 5 * (ktime_t)TWK_MS :
			t0 + 10 * (ktime_t)NSEC_PER_SEC;
		KUNIT_ASSERT_EQ(test, twk_on_cpu(test, b, &p[i], 0, p[i].want), 0);
	}
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, b, &p[nr + 1], 0,
					 t0 + 10 * (ktime_t)NSEC_PER_SEC), 0);
	/*
	 * All on B, unless arming them took the 300 ms to the first near
	 * expiry (each arm is a round trip to B's kworker, which a loaded
	 * host can stretch that far): those may have fired, and the case
	 * goes on with the rest as it does for any that fire before B goes.
	 */
	if (p[0].want - ktime_get() > 100 * (ktime_t)TWK_MS)
		KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, pending), (u64)nr + 1);
	else
		kunit_info(test, "arming took %lld ms: near timers may have fired\n",
			   div_s64(ktime_get() - t0, TWK_MS));

	ret = remove_cpu(b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%u)", b);
	t_off = ktime_get();
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, pending), 0ULL);
	/* At least the far ones moved; the near ones, unless they fired. */
	KUNIT_EXPECT_GE(test, twk_stat(w, migrated), (u64)TWK_HP_FAR);
	kunit_info(test, "cpu%u offline: %llu timers moved, %d fired before\n",
		   b, twk_stat(w, migrated), atomic_read(&ctx->fired));

	KUNIT_EXPECT_TRUE(test, twk_wait_fired(ctx, TWK_HP_NEAR, TWK_TIMEOUT_MS));
	for (i = 0; i < TWK_HP_NEAR; i++)
		if (atomic_read(&p[i].fires) != 1 || p[i].fired_at < p[i].want ||
		    (p[i].data == b && p[i].fired_at > t_off))
			bad++;
	KUNIT_EXPECT_EQ(test, bad, 0U);
	for (i = TWK_HP_NEAR; i < nr; i++)
		KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p[i].timer));

	ret = add_cpu(b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "add_cpu(%u)", b);
	for (i = TWK_HP_NEAR; i < nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 1);
	p[nr].want = ktime_get() + 3 * tick;
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, &p[nr], 0, p[nr].want), 0);
	KUNIT_EXPECT_TRUE(test, twk_wait_fired(ctx, TWK_HP_NEAR + 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p[nr].data, (u64)b);
	KUNIT_EXPECT_GE(test, p[nr].fired_at, p[nr].want);
	/*
	 * The pinned timer went to A's base with B; armed again from B, it
	 * goes to the base of the CPU that arms it next (kernel-api.rst).
	 */
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, &p[nr + 1], 1,
					 ktime_get() + 10 * (ktime_t)NSEC_PER_SEC), 1);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[nr + 1].timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), TWK_HP_NEAR + 1);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
}
#else
static void twheel_cpu_offline_moves_pending_timers(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_HOTPLUG_CPU");
}
#endif

#ifdef TWHEEL_DEBUG_DELAYS
/**
 * struct twk_bmig - a batch run whose thread moves to another CPU
 * @w:       the wheel
 * @p:       the timer the run arms
 * @cpu:     the CPU the run held its base's lock on
 * @index:   the index of the base the run locked
 * @ret:     what twheel_batch_arm() returned
 * @done:    the run ended
 */
struct twk_bmig {
	struct twheel *w;
	struct twk_probe *p;
	unsigned int cpu;
	unsigned int index;
	int ret;
	struct completion done;
};

static int twk_bmig_fn(void *data)
{
	struct twk_bmig *r = data;
	struct twheel_batch_lock bl;

	twheel_batch_begin(r->w, &bl);
	/* interrupts are off under the base lock: this CPU is stable */
	r->cpu = raw_smp_processor_id();
	r->index = bl.index;
	r->ret = twheel_batch_arm(&bl, &r->p->timer, 10 * NSEC_PER_SEC, 0,
				  TWHEEL_MODE_REL);
	twheel_batch_end(&bl);
	complete(&r->done);
	twk_idle_until_stop();
	return 0;
}

static void twk_batch_begin_delay_free(struct kunit_resource *res)
{
	twheel_delay_set(TWHEEL_DELAY_BATCH_BEGIN, 0);
}

/*
 * A batch run locks the base of the CPU it runs on, and arms there: its
 * thread, on B, is moved to A (its affinity changed) while
 * twheel_batch_begin() has chosen a base and not locked it yet (the delay
 * point batch_begin_us holds it there for 100 ms).  The run must hold the
 * lock of the base of the CPU it runs on, and its timer land on that
 * base: a run that chose B's base before it moved would arm B's base from
 * A, and, had B gone offline meanwhile, a base hotplug has already
 * emptied, where nothing would move its timer again.
 */
static void twheel_batch_begin_locks_base_of_its_cpu(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct task_struct *task;
	struct twk_threads *th;
	struct twk_bmig *r;
	unsigned int a, b, hits0, hits;
	struct twheel *w;

	twk_two_cpus(test, &a, &b);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	w = twk_wheel_flags(test, ctx, TWK_MS, 0);
	r->w = w;
	r->p = twk_probes(test, ctx, w, 1, twk_cb_record);
	init_completion(&r->done);
	th = twk_threads(test, 1);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 twk_batch_begin_delay_free,
							 GFP_KERNEL, test));
	/* not kthread_bind(): its affinity is to change */
	task = kthread_create(twk_bmig_fn, r, "twk/bmig");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task));
	get_task_struct(task);
	th->tasks[0] = task;
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(task, cpumask_of(b)), 0);

	hits0 = twheel_delay_hits(TWHEEL_DELAY_BATCH_BEGIN);
	twheel_delay_set(TWHEEL_DELAY_BATCH_BEGIN, 100000);
	wake_up_process(task);
	KUNIT_ASSERT_EQ(test, read_poll_timeout(twheel_delay_hits, hits,
						hits != hits0, 100,
						TWK_TIMEOUT_MS * USEC_PER_MSEC,
						false, TWHEEL_DELAY_BATCH_BEGIN), 0);
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(task, cpumask_of(a)), 0);
	KUNIT_ASSERT_NE(test, twk_wait_done(&r->done, TWK_TIMEOUT_MS), 0UL);
	twheel_delay_set(TWHEEL_DELAY_BATCH_BEGIN, 0);

	kunit_info(test, "run on cpu%u locked base %u\n", r->cpu, r->index);
	KUNIT_EXPECT_EQ(test, r->ret, 0);
	KUNIT_EXPECT_EQ(test, r->index, r->cpu);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, r->cpu, pending), 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&r->p->timer), 1);
}
#else
static void twheel_batch_begin_locks_base_of_its_cpu(struct kunit *test)
{
	kunit_skip(test, "needs the delay points of TWHEEL_DEBUG=1");
}
#endif

/* How long a SCHED_FIFO thread keeps a CPU: below RT throttling's 950 ms. */
#define TWK_FIFO_SPIN_MS	600

/**
 * struct twk_fifo - a CPU kept busy by a SCHED_FIFO thread
 * @p:        a twheel timer pinned to that CPU's base
 * @tl:       a timer_list queued on that CPU with add_timer_on()
 * @tl_fired: when @tl's callback ran (0: not yet)
 * @tl_cpu:   the CPU it ran on
 * @spinning: the thread has the CPU
 * @spin_end: when it let go of it
 * @done:     the thread stopped spinning
 */
struct twk_fifo {
	struct twk_probe *p;
	struct timer_list tl;
	ktime_t tl_fired;
	unsigned int tl_cpu;
	atomic_t spinning;
	ktime_t spin_end;
	struct completion done;
};

static void twk_fifo_tl_fn(struct timer_list *tl)
{
	struct twk_fifo *f = timer_container_of(f, tl, tl);

	f->tl_cpu = raw_smp_processor_id();
	/* release: @tl_cpu before the time that says it is there */
	smp_store_release(&f->tl_fired, ktime_get());
}

static bool twk_fifo_both_fired(struct twk_fifo *f)
{
	/* acquire: pairs with twk_fifo_tl_fn() */
	return smp_load_acquire(&f->tl_fired) &&
	       atomic_read_acquire(&f->p->fires);
}

/* Spin at SCHED_FIFO until both timers fired or TWK_FIFO_SPIN_MS passed. */
static int twk_fifo_spin(void *data)
{
	struct twk_fifo *f = data;
	ktime_t end;

	sched_set_fifo(current);
	end = ktime_get() + TWK_FIFO_SPIN_MS * (ktime_t)TWK_MS;
	atomic_set(&f->spinning, 1);
	while (ktime_get() < end && !twk_fifo_both_fired(f))
		cpu_relax();
	f->spin_end = ktime_get();
	complete(&f->done);
	twk_idle_until_stop();
	return 0;
}

static void twk_fifo_free(struct kunit_resource *res)
{
	struct twk_fifo *f = res->data;

	timer_delete_sync(&f->tl);
}

/*
 * A base whose CPU is kept by a SCHED_FIFO thread still fires its timers:
 * B runs a thread at SCHED_FIFO that spins (for at most TWK_FIFO_SPIN_MS,
 * below RT throttling's 950 ms, so that throttling lets no other task in)
 * while A re-arms a timer pinned to B's base to fire 20 ms later and
 * queues a timer_list on B with add_timer_on() for the same time.  Both
 * fire from interrupts on B (from softirqs on their way out), which the
 * thread cannot keep off; a base that needs a task on B to start its
 * hrtimer (a work item) fires only once the thread stops.  add_timer_on()
 * is the yardstick: an attempt counts only when its timer fired while the
 * thread spun (it does not when the kernel has handed B's softirqs to
 * ksoftirqd, which the thread starves too), and then the twheel timer must
 * have fired while the thread spun as well.
 */
static void twheel_tick_remote_base_fires_under_fifo_hog(struct kunit *test)
{
	const unsigned int attempts = 5;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_threads *th;
	struct twk_fifo *f;
	struct twheel *w;
	unsigned int a, b, k;
	bool counted = false;
	ktime_t want;
	int sp;

	twk_two_cpus(test, &a, &b);
	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	timer_setup(&f->tl, twk_fifo_tl_fn, 0);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 twk_fifo_free,
							 GFP_KERNEL, f));
	w = twk_wheel_flags(test, ctx, TWK_MS, 0);
	f->p = twk_probes(test, ctx, w, 1, twk_cb_cpu);
	twheel_timer_setup(&f->p->timer, w, twk_cb_cpu, TWHEEL_TIMER_PINNED);
	th = twk_threads(test, attempts);

	for (k = 0; k < attempts && !counted; k++) {
		s64 tw_us, tl_us;

		atomic_set(&f->p->fires, 0);
		atomic_set(&ctx->fired, 0);
		atomic_set(&f->spinning, 0);
		f->tl_fired = 0;
		init_completion(&f->done);
		/* placed on B's base, due long after the case */
		KUNIT_ASSERT_GE(test, twk_on_cpu(test, b, f->p, 1,
						 ktime_get() + 60 * (ktime_t)NSEC_PER_SEC),
				0);
		twk_thread_create(test, th, k, b, twk_fifo_spin, f);
		wake_up_process(th->tasks[k]);
		KUNIT_ASSERT_EQ(test, read_poll_timeout(atomic_read, sp, sp, 100,
							TWK_TIMEOUT_MS * USEC_PER_MSEC,
							false, &f->spinning), 0);
		want = ktime_get() + 20 * (ktime_t)TWK_MS;
		f->p->want = want;
		/* stays on B's base: pinned there */
		KUNIT_EXPECT_EQ(test, twk_on_cpu(test, a, f->p, 1, want), 1);
		f->tl.expires = jiffies + msecs_to_jiffies(20);
		add_timer_on(&f->tl, b);
		KUNIT_ASSERT_NE(test, twk_wait_done(&f->done, TWK_TIMEOUT_MS), 0UL);
		KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
		timer_delete_sync(&f->tl);

		tw_us = ktime_us_delta(f->p->fired_at, want);
		tl_us = f->tl_fired ? ktime_us_delta(f->tl_fired, want) : -1;
		kunit_info(test, "attempt %u: twheel's timer fired %lld us after its expiry on cpu%llu, add_timer_on()'s %lld us on cpu%u; the thread spun until %lld us\n",
			   k + 1, tw_us, f->p->data, tl_us, f->tl_cpu,
			   ktime_us_delta(f->spin_end, want));
		KUNIT_EXPECT_EQ(test, f->p->data, (u64)b);
		KUNIT_EXPECT_GE(test, f->p->fired_at, want);
		if (!f->tl_fired || f->tl_fired > f->spin_end)
			continue;
		counted = true;
		KUNIT_EXPECT_LE_MSG(test, f->p->fired_at, f->spin_end,
				    "twheel's timer waited for the SCHED_FIFO thread on cpu%u",
				    b);
	}
	if (!counted)
		kunit_skip(test, "add_timer_on()'s timer never fired while the thread spun");
}

#ifdef CONFIG_HOTPLUG_CPU
static void twk_add_cpu_free(struct kunit_resource *res)
{
	unsigned int cpu = (unsigned long)res->data - 1;

	if (!cpu_online(cpu))
		add_cpu(cpu);
}

/*
 * Engine memory is allocated for the CPUs that come online, not for every
 * possible one: an instance created while B is offline has a base for each
 * online CPU only (twheel_stats.bases counts them); when B comes online it
 * gets one, and takes timers.
 */
static void twheel_create_bases_for_online_cpus_only(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int a, b, online;
	struct twheel_stats st;
	struct twk_probe *p;
	struct twheel *w;
	int ret;

	twk_two_cpus(test, &a, &b);
	if (!cpu_is_hotpluggable(b))
		kunit_skip(test, "cpu%u cannot go offline", b);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL,
							 twk_add_cpu_free, GFP_KERNEL,
							 (void *)(unsigned long)(b + 1)));
	ret = remove_cpu(b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%u)", b);
	online = num_online_cpus();
	w = twk_wheel_flags(test, ctx, TWK_MS, 0);
	st = twk_stats(w);
	kunit_info(test, "cpu%u offline: %llu bases for %u online and %u possible CPUs\n",
		   b, st.bases, online, num_possible_cpus());
	KUNIT_EXPECT_EQ(test, st.bases, (u64)online);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, bases), 0ULL);
	ret = add_cpu(b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "add_cpu(%u)", b);
	KUNIT_EXPECT_EQ(test, twk_stat(w, bases), (u64)online + 1);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, bases), 1ULL);

	p = twk_probes(test, ctx, w, 1, twk_cb_cpu);
	p->want = ktime_get() + 3 * TWK_MS;
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, p, 0, p->want), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stat(w, b, armed), 1ULL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, (u64)b);
	KUNIT_EXPECT_GE(test, p->fired_at, p->want);
}
#else
static void twheel_create_bases_for_online_cpus_only(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_HOTPLUG_CPU");
}
#endif

static struct kunit_case twheel_smp_cases[] = {
	KUNIT_CASE(twheel_create_flags_unknown_flags_einval),
	KUNIT_CASE(twheel_timer_start_arms_on_calling_cpu),
	KUNIT_CASE(twheel_tick_idle_cpu_base_no_wakeups),
	KUNIT_CASE_PARAM(twheel_timer_modify_other_cpu_picks_base_by_flags,
			 twk_move_gen_params),
	KUNIT_CASE(twheel_timer_modify_running_callback_stays_on_base),
	KUNIT_CASE(twheel_tick_restarted_while_running_keeps_queue_order),
	KUNIT_CASE_PARAM(twheel_timer_ops_link_timer_in_transit,
			 twk_win_gen_params),
	KUNIT_CASE_PARAM(twheel_create_flags_callback_concurrency,
			 twk_single_gen_params),
	KUNIT_CASE(twheel_cpu_offline_moves_pending_timers),
	KUNIT_CASE(twheel_batch_begin_locks_base_of_its_cpu),
	KUNIT_CASE(twheel_tick_remote_base_fires_under_fifo_hog),
	KUNIT_CASE(twheel_create_bases_for_online_cpus_only),
	{}
};

/* Per-CPU bases: placement, the base protocol, hotplug (two CPUs). */
static struct kunit_suite twheel_smp_suite = {
	.name = "twheel_smp",
	.test_cases = twheel_smp_cases,
};

kunit_test_suite(twheel_smp_suite);
