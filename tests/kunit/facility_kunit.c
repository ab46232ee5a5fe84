// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_facility": the timer facility of src/facility.c,
 * exercised through the exported API (include/linux/twheel.h) on private
 * wheel instances driven by their real soft-mode hrtimer.
 *
 * How these cases are written
 * ---------------------------
 * - Callbacks run in softirq context.  They never call KUNIT_*() (a failed
 *   expectation allocates and may sleep); they record what they saw in a
 *   struct twk_probe (atomics, first fire time, the expiry in force) and the
 *   test thread asserts afterwards.
 * - Synchronisation with callbacks is by atomic counters plus
 *   wait_event_timeout(), completions, or read_poll_timeout() on a
 *   condition.  Every wait is bounded (generously: TCG + KASAN + lockdep is
 *   slow and jittery) and is followed by an assertion on its condition.  The
 *   only plain sleeps are the measurement windows of the tickless cases,
 *   which observe how many wakeups happen over an interval; their length is
 *   measured with ktime_get(), not assumed.
 * - The hard guarantees (never before the expiry, exactly once, nothing
 *   lost, documented return values, counters) are asserted strictly.  The
 *   "within one tick plus slack" latency bound depends on the VM being
 *   scheduled on time, so it is checked only in
 *   twheel_timer_start_on_time_latency_median, on the median, with an
 *   allowance explained there.
 * - Wheels, timers and helper threads are kunit resources.  Resources are
 *   released last-in first-out, and every case creates them in the order
 *   context memory, wheel, timers, threads; so even a case that fails half
 *   way stops its threads, shuts all its timers down with
 *   twheel_timer_shutdown_sync() (which also stops self re-arming ones) and
 *   only then destroys its wheel and frees the memory the callbacks use.
 * - Randomised cases use prandom with fixed seeds, so a failure reproduces.
 *
 * The suite is registered by kunit/wheel_kunit.c (kunit_test_suites()).
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
#include "twheel_kunit.h"

/* Bound of every wait for something that must happen (ms). */
#define TWK_TIMEOUT_MS		5000
/* Longest a callback spins waiting for a helper thread (ms). */
#define TWK_SPIN_MS		3000
#define TWK_US			1000ULL
#define TWK_MS			1000000ULL

/* ------------------------------------------------------------------------ */
/* Shared per-case state, probes and their callbacks                       */
/* ------------------------------------------------------------------------ */

/**
 * struct twk_ctx - what the callbacks of one case share with the test
 * @wq:      woken after every callback
 * @fired:   callbacks run, all probes
 * @early:   callbacks that ran before the expiry in force
 * @errors:  unexpected return values seen inside callbacks
 * @order:   scratch sequence for callbacks that race each other
 * @done:    completion for cases that finish on a callback's decision
 * @wheel:   the wheel of the case
 * @tick_ns: its tick
 * @priv:    case specific state
 */
struct twk_ctx {
	wait_queue_head_t wq;
	atomic_t fired;
	atomic_t early;
	atomic_t errors;
	atomic_t order;
	struct completion done;
	struct twheel *wheel;
	u64 tick_ns;
	void *priv;
};

/**
 * struct twk_probe - a timer that records how it fired
 * @timer:    the timer under test
 * @ctx:      shared state
 * @peer:     another probe the callback acts on
 * @fires:    callbacks run
 * @arms:     successful arms from idle seen by the stress threads
 * @cancels:  cancels of a pending timer seen by the stress threads
 * @want:     earliest time the callback may run, computed by the test
 * @fired_at: ktime_get() in the first callback
 * @entered:  ktime_get() on entry of a callback, before its API calls
 * @exp_at_fire: twheel_timer_expires() in the first callback
 * @ret:      return value of an API call made by the callback
 * @data:     case specific value written by the callback
 * @limit:    case specific bound read by the callback
 */
struct twk_probe {
	struct twheel_timer timer;
	struct twk_ctx *ctx;
	struct twk_probe *peer;
	atomic_t fires;
	atomic_t arms;
	atomic_t cancels;
	ktime_t want;
	ktime_t fired_at;
	ktime_t entered;
	ktime_t exp_at_fire;
	int ret;
	u64 data;
	u64 limit;
};

static struct twk_probe *twk_of(struct twheel_timer *timer)
{
	return container_of(timer, struct twk_probe, timer);
}

/*
 * Record one run of @p's callback.  Callbacks of one timer never run
 * concurrently, so the plain fields need no lock; the fully ordered
 * atomic_inc_return() publishes them to a test thread that reads
 * ctx->fired with acquire semantics.
 */
static void twk_record(struct twk_probe *p)
{
	ktime_t now = ktime_get();
	ktime_t exp = twheel_timer_expires(&p->timer);

	if (now < exp)
		atomic_inc(&p->ctx->early);
	if (!atomic_read(&p->fires)) {
		p->fired_at = now;
		p->exp_at_fire = exp;
	}
	atomic_inc_return(&p->fires);
	atomic_inc_return(&p->ctx->fired);
	wake_up(&p->ctx->wq);
}

static void twk_cb_record(struct twheel_timer *timer)
{
	twk_record(twk_of(timer));
}

static struct twk_ctx *twk_ctx_new(struct kunit *test)
{
	struct twk_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	init_waitqueue_head(&ctx->wq);
	init_completion(&ctx->done);
	return ctx;
}

/* Wait until at least @n callbacks ran; false on timeout. */
static bool twk_wait_fired(struct twk_ctx *ctx, int n, unsigned int ms)
{
	return wait_event_timeout(ctx->wq, atomic_read_acquire(&ctx->fired) >= n,
				  msecs_to_jiffies(ms)) > 0;
}

static struct twheel_stats twk_stats(struct twheel *w)
{
	struct twheel_stats st;

	twheel_get_stats(w, &st);
	return st;
}

static u64 twk_wakeups(struct twheel *w)
{
	return twk_stats(w).wakeups;
}

/*
 * Expect every one of @nr records armed (@ret 0), then wait until all @nr
 * probes fired and expect each once, none before its @want, none early.
 */
static void twk_expect_each_fired_once(struct kunit *test, struct twk_ctx *ctx,
				       const struct twk_probe *p, const int *ret,
				       int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, ret[i], 0, "probe %d", i);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, nr, TWK_TIMEOUT_MS));
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p[i].fires), 1, "probe %d", i);
		KUNIT_EXPECT_GE_MSG(test, p[i].fired_at, p[i].want, "probe %d", i);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

/* Uniform in [0, @n) for @n < 2^32, without a division. */
static u64 twk_rand(struct rnd_state *rs, u64 n)
{
	if (WARN_ON_ONCE(n > U32_MAX))
		n = U32_MAX;
	return ((u64)prandom_u32_state(rs) * n) >> 32;
}

/* ------------------------------------------------------------------------ */
/* Test-managed wheels, timers and threads                                 */
/* ------------------------------------------------------------------------ */

struct twk_wheel_args {
	u64 tick_ns;
	unsigned int bits;
	unsigned int budget;
	unsigned int flags;
	enum twheel_engine engine;	/* 0: the default, hierarchical */
};

static int twk_wheel_init(struct kunit_resource *res, void *context)
{
	const struct twk_wheel_args *a = context;
	struct twheel *w = a->flags || a->engine ?
		twheel_create_flags(a->tick_ns, a->bits, a->budget,
				    a->engine, a->flags) :
		twheel_create(a->tick_ns, a->bits, a->budget);

	if (IS_ERR(w))
		return PTR_ERR(w);
	res->data = w;
	return 0;
}

static void twk_wheel_free(struct kunit_resource *res)
{
	twheel_destroy(res->data);
}

/* A wheel created from @a, destroyed at the end of the case. */
static struct twheel *twk_wheel_args(struct kunit *test, struct twk_ctx *ctx,
				     struct twk_wheel_args a)
{
	u64 tick_ns = a.tick_ns;
	unsigned int bits = a.bits, budget = a.budget;
	struct twheel *w;

	w = kunit_alloc_resource(test, twk_wheel_init, twk_wheel_free,
				 GFP_KERNEL, &a);
	KUNIT_ASSERT_NOT_NULL_MSG(test, w, "twheel_create(%llu, %u, %u)",
				  tick_ns, bits, budget);
	if (ctx) {
		ctx->wheel = w;
		ctx->tick_ns = tick_ns;
	}
	return w;
}

/* A wheel destroyed at the end of the case. */
static struct twheel *twk_wheel(struct kunit *test, struct twk_ctx *ctx,
				u64 tick_ns, unsigned int bits,
				unsigned int budget)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, bits, budget, 0 });
}

/* The same with a single base (TWHEEL_CREATE_SINGLE_BASE). */
static struct twheel *twk_wheel_single(struct kunit *test, struct twk_ctx *ctx,
				       u64 tick_ns, unsigned int bits,
				       unsigned int budget)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, bits, budget, TWHEEL_CREATE_SINGLE_BASE });
}

struct twk_group {
	struct twk_probe *probes;
	unsigned int nr;
};

static void twk_group_free(struct kunit_resource *res)
{
	struct twk_group *g = res->data;
	unsigned int i;

	/* Shut down, not just cancel: a self re-arming callback stops too. */
	for (i = 0; i < g->nr; i++)
		twheel_timer_shutdown_sync(&g->probes[i].timer);
	kvfree(g->probes);
	kfree(g);
}

/* @nr probes on @w with callback @fn, shut down at the end of the case. */
static struct twk_probe *twk_probes(struct kunit *test, struct twk_ctx *ctx,
				    struct twheel *w, unsigned int nr,
				    void (*fn)(struct twheel_timer *))
{
	struct twk_group *g;
	unsigned int i;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	g->probes = kvcalloc(nr, sizeof(*g->probes), GFP_KERNEL);
	if (!g->probes) {
		kfree(g);
		KUNIT_ASSERT_FAILURE(test, "no memory for %u probes", nr);
	}
	g->nr = nr;
	for (i = 0; i < nr; i++) {
		struct twk_probe *p = &g->probes[i];

		p->ctx = ctx;
		twheel_timer_setup(&p->timer, w, fn, 0);
	}
	if (!kunit_alloc_resource(test, NULL, twk_group_free, GFP_KERNEL, g)) {
		kvfree(g->probes);
		kfree(g);
		KUNIT_ASSERT_FAILURE(test, "cannot register probes");
	}
	return g->probes;
}

struct twk_threads {
	struct task_struct **tasks;
	unsigned int nr;
};

static void twk_threads_free(struct kunit_resource *res)
{
	struct twk_threads *t = res->data;
	unsigned int i;

	for (i = 0; i < t->nr; i++) {
		if (!t->tasks[i])
			continue;
		kthread_stop(t->tasks[i]);
		put_task_struct(t->tasks[i]);
	}
	kfree(t->tasks);
	kfree(t);
}

/* Room for @nr kthreads, stopped at the end of the case. */
static struct twk_threads *twk_threads(struct kunit *test, unsigned int nr)
{
	struct twk_threads *t;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->tasks = kcalloc(nr, sizeof(*t->tasks), GFP_KERNEL);
	if (!t->tasks) {
		kfree(t);
		KUNIT_ASSERT_FAILURE(test, "no memory for %u threads", nr);
	}
	t->nr = nr;
	if (!kunit_alloc_resource(test, NULL, twk_threads_free, GFP_KERNEL, t)) {
		kfree(t->tasks);
		kfree(t);
		KUNIT_ASSERT_FAILURE(test, "cannot register threads");
	}
	return t;
}

/* Create slot @i of @t bound to @cpu, not yet woken. */
static struct task_struct *twk_thread_create(struct kunit *test,
					     struct twk_threads *t,
					     unsigned int i, unsigned int cpu,
					     int (*fn)(void *), void *data)
{
	struct task_struct *task;

	task = kthread_create(fn, data, "twk/%u", i);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(task), "kthread_create: %ld",
			       PTR_ERR(task));
	kthread_bind(task, cpu);
	get_task_struct(task);
	t->tasks[i] = task;
	return task;
}

/* The end of every helper thread: idle until kthread_stop(). */
static void twk_idle_until_stop(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/* ------------------------------------------------------------------------ */
/* twheel_create                                                            */
/* ------------------------------------------------------------------------ */

struct twk_create_param {
	const char *name;
	u64 tick_ns;
	unsigned int bits;
	unsigned int budget;
	int err;
};

static const struct twk_create_param twk_create_params[] = {
	{ "tick_below_min", TWHEEL_TICK_NS_MIN - 1, 8, 16, -EINVAL },
	{ "tick_zero", 0, 8, 16, -EINVAL },
	{ "tick_above_max", TWHEEL_TICK_NS_MAX + 1, 8, 16, -EINVAL },
	{ "bits_below_min", TWHEEL_TICK_NS_MIN, TWHEEL_BITS_MIN - 1, 16, -EINVAL },
	{ "bits_above_max", TWHEEL_TICK_NS_MIN, TWHEEL_BITS_MAX + 1, 16, -EINVAL },
	{ "budget_zero", 1000000, 8, 0, -EINVAL },
	{ "smallest_valid", TWHEEL_TICK_NS_MIN, TWHEEL_BITS_MIN, 1, 0 },
	{ "largest_valid", TWHEEL_TICK_NS_MAX, TWHEEL_BITS_MAX, UINT_MAX, 0 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_create);

static void twheel_create_validates_parameters(struct kunit *test)
{
	const struct twk_create_param *p = test->param_value;
	struct twheel *w = twheel_create(p->tick_ns, p->bits, p->budget);
	struct twheel_stats st;

	if (p->err) {
		KUNIT_EXPECT_TRUE(test, IS_ERR(w));
		KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(w), p->err);
		/* Documented: an ERR_PTR is ignored. */
		KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
		return;
	}
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	twheel_get_stats(w, &st);
	KUNIT_EXPECT_EQ(test, st.tick_ns, p->tick_ns);
	KUNIT_EXPECT_EQ(test, st.slots, 1ULL << p->bits);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	KUNIT_EXPECT_EQ(test, st.wakeups, 0ULL);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
	KUNIT_EXPECT_EQ(test, twheel_destroy(NULL), 0);
}

/*
 * A wheel that still holds a timer is not freed (the timer links into its
 * slots and points at it): destroy refuses, and the wheel keeps working,
 * so the timer can still be cancelled, or fire, and the wheel destroyed
 * after that.
 */
static void twheel_destroy_pending_timer_refused(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twheel_create(tick, 4, 16);
	struct twk_probe *p;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	ctx->wheel = w;
	ctx->tick_ns = tick;
	p = kunit_kzalloc(test, 2 * sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p[0].ctx = ctx;
	p[1].ctx = ctx;
	twheel_timer_setup(&p[0].timer, w, twk_cb_record, 0);
	twheel_timer_setup(&p[1].timer, w, twk_cb_record, 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p[0].timer, 3600 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), -EBUSY);
	/* Still intact: cancel, and a new timer fires. */
	KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p[0].timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p[1].timer, 2 * tick, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), -EBUSY);
	KUNIT_EXPECT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
}

/* ------------------------------------------------------------------------ */
/* Never early, exactly once: randomised                                    */
/* ------------------------------------------------------------------------ */

struct twk_prop_param {
	const char *name;
	u64 tick_ns;
	unsigned int bits;
	unsigned int budget;
	unsigned int nr;
	unsigned int max_spans;	/* expiries up to this many revolutions out */
	u32 seed;
};

static const struct twk_prop_param twk_prop_params[] = {
	{ "tick100us_bits4", 100 * TWK_US, 4, 4096, 96, 6, 1 },
	{ "tick250us_bits4", 250 * TWK_US, 4, 4096, 96, 6, 2 },
	{ "tick137us_bits5_budget2", 137 * TWK_US, 5, 2, 96, 5, 3 },
	{ "tick1ms_bits4", 1 * TWK_MS, 4, 4096, 96, 4, 4 },
	{ "tick1ms_bits6", 1 * TWK_MS, 6, 4096, 96, 3, 5 },
	{ "tick2ms_bits5", 2 * TWK_MS, 5, 4096, 96, 3, 6 },
	{ "tick333333ns_bits7_budget3", 333333, 7, 3, 96, 2, 7 },
	{ "tick1500us_bits4_budget1", 1500 * TWK_US, 4, 1, 64, 6, 8 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_prop);

/*
 * Arm @p with a random expiry of one of the shapes known to break wheels:
 * uniform, exact multiples of the wheel span ahead (relative and absolute,
 * and one nanosecond either side), tick aligned, in the past, zero delay.
 * p->want is the earliest time its callback may run.
 */
static int twk_prop_arm(struct twk_probe *p, struct rnd_state *rs,
			const struct twk_prop_param *pp)
{
	u64 tick = pp->tick_ns, span = tick << pp->bits;
	u64 m = 1 + twk_rand(rs, pp->max_spans);
	enum twheel_mode mode = TWHEEL_MODE_ABS;
	ktime_t now = ktime_get(), exp;
	u64 slack;

	switch (prandom_u32_state(rs) % 4) {
	case 0:
	case 1:
		slack = 0;
		break;
	case 2:
		slack = twk_rand(rs, 3 * tick);
		break;
	default:
		slack = twk_rand(rs, span + 1);
		break;
	}

	switch (prandom_u32_state(rs) % 9) {
	case 0:		/* relative, uniform */
		mode = TWHEEL_MODE_REL;
		exp = twk_rand(rs, pp->max_spans * span);
		p->want = now + exp;
		break;
	case 1:		/* relative, exact multiple of the span */
		mode = TWHEEL_MODE_REL;
		exp = m * span;
		p->want = now + exp;
		break;
	case 2:		/* absolute, exact multiple of the span ahead */
		exp = now + m * span;
		break;
	case 3:
		exp = now + m * span - 1;
		break;
	case 4:
		exp = now + m * span + 1;
		break;
	case 5:		/* absolute, a whole number of ticks ahead */
		exp = now + twk_rand(rs, (u64)pp->max_spans << pp->bits) * tick;
		break;
	case 6:		/* absolute, in the past */
		exp = max_t(s64, now - (s64)twk_rand(rs, 2 * span), 0);
		break;
	case 7:		/* relative, now */
		mode = TWHEEL_MODE_REL;
		exp = 0;
		p->want = now;
		break;
	default:	/* absolute, long past */
		exp = 0;
		break;
	}
	if (mode == TWHEEL_MODE_ABS)
		p->want = exp;
	return twheel_timer_start(&p->timer, exp, slack, mode);
}

static void twheel_timer_start_never_early_exactly_once(struct kunit *test)
{
	const struct twk_prop_param *pp = test->param_value;
	u64 span = pp->tick_ns << pp->bits;
	unsigned int i, bad_count = 0, bad_time = 0, bad_exp = 0;
	struct twk_probe *p, *first_bad = NULL;
	struct twheel_stats st;
	struct rnd_state rs;
	struct twk_ctx *ctx;
	struct twheel *w;
	u64 wait_ms;

	ctx = twk_ctx_new(test);
	w = twk_wheel(test, ctx, pp->tick_ns, pp->bits, pp->budget);
	p = twk_probes(test, ctx, w, pp->nr, twk_cb_record);
	prandom_seed_state(&rs, 0x7768656500000000ULL | pp->seed);

	for (i = 0; i < pp->nr; i++)
		KUNIT_ASSERT_EQ_MSG(test, twk_prop_arm(&p[i], &rs, pp), 0,
				    "start of probe %u", i);

	wait_ms = div_u64((pp->max_spans + 2) * span, TWK_MS) + TWK_TIMEOUT_MS;
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, pp->nr, wait_ms),
			      "only %d of %u timers fired",
			      atomic_read(&ctx->fired), pp->nr);

	/* Quiesce: nothing may be pending or running any more. */
	for (i = 0; i < pp->nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);

	for (i = 0; i < pp->nr; i++) {
		bool bad = false;

		if (atomic_read(&p[i].fires) != 1) {
			bad_count++;
			bad = true;
		}
		if (p[i].fired_at < p[i].want || p[i].fired_at < p[i].exp_at_fire) {
			bad_time++;
			bad = true;
		}
		if (p[i].exp_at_fire < p[i].want) {
			bad_exp++;
			bad = true;
		}
		if (bad && !first_bad)
			first_bad = &p[i];
	}
	KUNIT_EXPECT_EQ(test, bad_count, 0U);
	KUNIT_EXPECT_EQ(test, bad_time, 0U);
	KUNIT_EXPECT_EQ(test, bad_exp, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	if (first_bad)
		kunit_info(test, "first bad probe %td: fires %d want %lld expires %lld fired_at %lld\n",
			   first_bad - p, atomic_read(&first_bad->fires),
			   first_bad->want, first_bad->exp_at_fire,
			   first_bad->fired_at);

	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), (int)pp->nr);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)pp->nr);
	KUNIT_EXPECT_EQ(test, st.armed, (u64)pp->nr);
	KUNIT_EXPECT_EQ(test, st.cancelled, 0ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
}

/*
 * An expiry in the past is placed in a tick that is already over or
 * running, so it fires at the next tick.  Armed with softirqs off on this
 * CPU (where the wheel's hrtimer gets queued), so no handler can run
 * between the arms and the next_expiry() check.
 */
static void twheel_timer_start_past_expiry_fires_next_tick(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 4, twk_cb_record);
	ktime_t now, next, after;
	int ret[4];
	int i;

	local_bh_disable();
	now = ktime_get();
	p[0].want = 0;
	ret[0] = twheel_timer_start(&p[0].timer, 0, 0, TWHEEL_MODE_ABS);
	p[1].want = now - NSEC_PER_SEC;
	ret[1] = twheel_timer_start(&p[1].timer, p[1].want, 0, TWHEEL_MODE_ABS);
	p[2].want = now - 1;
	ret[2] = twheel_timer_start(&p[2].timer, p[2].want, tick, TWHEEL_MODE_ABS);
	p[3].want = now;
	ret[3] = twheel_timer_start(&p[3].timer, 0, 0, TWHEEL_MODE_REL);
	next = twheel_next_expiry(w, KTIME_MAX);
	after = ktime_get();
	local_bh_enable();

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, ret[i], 0);
	/* Due at the end of the current tick at the latest. */
	KUNIT_EXPECT_LE(test, next, after + (ktime_t)tick);
	KUNIT_EXPECT_NE(test, next, KTIME_MAX);

	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 4, TWK_TIMEOUT_MS));
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&p[i].fires), 1);
		KUNIT_EXPECT_GE(test, p[i].fired_at, p[i].want);
	}
	KUNIT_EXPECT_GE(test, p[3].exp_at_fire, now);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

/* ------------------------------------------------------------------------ */
/* Latency (when the VM lets the hrtimer be on time)                        */
/* ------------------------------------------------------------------------ */

static int twk_cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Contract: when the wheel's ticks are on time a timer fires at most one
 * tick plus its slack after its expiry.  Under TCG the VM itself is not
 * always on time (the host deschedules vCPUs for milliseconds), so a
 * per-timer assertion would be flaky.  Instead: 48 timers spread over
 * ~3 revolutions, and the *median* lateness must be within one tick plus
 * the slack plus TWK_NOISE_MS of scheduling noise.  TWK_NOISE_MS is well
 * below a revolution (128 ms), so a wheel that fired a revolution (or a
 * mis-computed number of ticks) late would still fail.  The number of
 * timers past the strict bound and the wheel's own "late" counter are
 * reported.
 */
#define TWK_NOISE_MS	50

static void twheel_timer_start_on_time_latency_median(struct kunit *test)
{
	const u64 tick = 500 * TWK_US, slack = tick;
	const unsigned int bits = 8, nr = 48;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, bits, 4096);
	struct twk_probe *p = twk_probes(test, ctx, w, nr, twk_cb_record);
	unsigned int i, over = 0;
	struct rnd_state rs;
	s64 *late, bound;

	late = kunit_kcalloc(test, nr, sizeof(*late), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, late);
	prandom_seed_state(&rs, 0x1a7e);

	for (i = 0; i < nr; i++) {
		u64 d = 10 * TWK_MS + twk_rand(&rs, 390 * TWK_MS);
		u64 s = (i & 1) ? slack : 0;

		p[i].want = ktime_get() + d;
		p[i].limit = s;
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[i].timer, d, s,
							 TWHEEL_MODE_REL), 0);
	}
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, nr, 400 + TWK_TIMEOUT_MS));

	bound = tick + slack;
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&p[i].fires), 1);
		KUNIT_EXPECT_GE(test, p[i].fired_at, p[i].exp_at_fire);
		/* lateness against the facility's own recorded expiry */
		late[i] = p[i].fired_at - p[i].exp_at_fire;
		if (late[i] > (s64)(tick + p[i].limit))
			over++;
	}
	sort(late, nr, sizeof(*late), twk_cmp_s64, NULL);
	kunit_info(test, "lateness median %lld us, max %lld us; %u/%u beyond tick+slack; stats.late %llu\n",
		   div_s64(late[nr / 2], 1000), div_s64(late[nr - 1], 1000),
		   over, nr, twk_stats(w).late);
	KUNIT_EXPECT_LE(test, late[nr / 2], bound + (s64)TWK_NOISE_MS * (s64)TWK_MS);
	KUNIT_EXPECT_GE(test, late[0], 0LL);
}

/* ------------------------------------------------------------------------ */
/* Far future                                                               */
/* ------------------------------------------------------------------------ */

/* Re-arms itself one tick ahead until p->want, then completes ctx->done. */
static void twk_cb_driver(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	atomic_inc_return(&p->fires);
	if (ktime_get() < p->want) {
		if (twheel_timer_start(timer, p->ctx->tick_ns, 0, TWHEEL_MODE_REL))
			atomic_inc(&p->ctx->errors);
		return;
	}
	complete(&p->ctx->done);
}

static void twheel_timer_start_far_future_stays_pending(struct kunit *test)
{
	const u64 tick = 100 * TWK_US;
	const unsigned int bits = 4, revs = 64;
	const u64 span = tick << bits;
	const u64 hours3 = 3ULL * 3600 * NSEC_PER_SEC;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, bits, 4096);
	struct twk_probe *far = twk_probes(test, ctx, w, 7, twk_cb_record);
	struct twk_probe *drv = twk_probes(test, ctx, w, 1, twk_cb_driver);
	ktime_t begin = ktime_get(), exp[7], e6;
	struct twheel_stats st;
	unsigned long left;
	int i;

	/* relative 3 h, tightest: the earliest of them all */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[0].timer, hours3, 0, TWHEEL_MODE_REL), 0);
	/* more than 2^32 ticks out */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[1].timer, ((1ULL << 32) + 7) * tick, 0,
						 TWHEEL_MODE_REL), 0);
	/* an exact multiple of the span, 2^34 ticks out */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[2].timer, (1ULL << 30) * span, 0,
						 TWHEEL_MODE_REL), 0);
	/* absolute, 2^34 ticks and a half out */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[3].timer,
						 begin + (1LL << 34) * tick + tick / 2, 0,
						 TWHEEL_MODE_ABS), 0);
	/* the end of time */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[4].timer, KTIME_MAX, 0, TWHEEL_MODE_ABS), 0);
	/* 3 h with all the slack there is */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[5].timer, hours3 + 60 * NSEC_PER_SEC,
						 KTIME_MAX, TWHEEL_MODE_REL), 0);
	/* absolute, a whole number of spans a bit over 3 h out, slack one span */
	e6 = begin + (ktime_t)(div64_u64(hours3, span) + 100) * span;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&far[6].timer, e6, span, TWHEEL_MODE_ABS), 0);
	for (i = 0; i < 7; i++)
		exp[i] = twheel_timer_expires(&far[i].timer);
	KUNIT_EXPECT_GE(test, exp[0], begin + (ktime_t)hours3);
	KUNIT_EXPECT_EQ(test, exp[4], KTIME_MAX);

	/* Let the wheel revolve: a driver re-arming every tick. */
	drv->want = ktime_get() + revs * span;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&drv->timer, tick, 0, TWHEEL_MODE_REL), 0);
	left = wait_for_completion_timeout(&ctx->done, msecs_to_jiffies(TWK_TIMEOUT_MS));
	KUNIT_ASSERT_NE_MSG(test, left, 0UL, "driver did not finish, %d runs",
			    atomic_read(&drv->fires));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&drv->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->errors), 0);
	KUNIT_EXPECT_GE(test, div64_u64(ktime_get() - begin, span), (u64)revs);

	for (i = 0; i < 7; i++) {
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&far[i].fires), 0, "far timer %d", i);
		KUNIT_EXPECT_TRUE_MSG(test, twheel_timer_pending(&far[i].timer), "far timer %d", i);
		KUNIT_EXPECT_EQ(test, twheel_timer_expires(&far[i].timer), exp[i]);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);

	/* The earliest is far[0] (no slack): its tick ends within one tick. */
	KUNIT_EXPECT_GE(test, twheel_next_expiry(w, KTIME_MAX), exp[0]);
	KUNIT_EXPECT_LE(test, twheel_next_expiry(w, KTIME_MAX), exp[0] + (ktime_t)tick);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, ktime_get() + 3600 * NSEC_PER_SEC),
			KTIME_MAX);

	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)atomic_read(&drv->fires));
	KUNIT_EXPECT_EQ(test, st.pending, 7ULL);

	for (i = 0; i < 7; i++)
		KUNIT_EXPECT_EQ_MSG(test, twheel_timer_cancel(&far[i].timer), 1, "far timer %d", i);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.cancelled, 7ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* Return values and state queries                                          */
/* ------------------------------------------------------------------------ */

static void twheel_timer_start_pending_returns_ebusy(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	ktime_t e1 = ktime_get() + 10 * NSEC_PER_SEC, e2 = e1 + NSEC_PER_SEC;

	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p->timer, e1, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p->timer, e2, 0, TWHEEL_MODE_ABS), -EBUSY);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p->timer, NSEC_PER_SEC, 0, TWHEEL_MODE_REL),
			-EBUSY);
	/* -EBUSY left the timer as it was */
	KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), e1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(&p->timer, e2, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), e2);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
}

static void twheel_timer_modify_returns_pending_state(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	ktime_t e = ktime_get() + 10 * NSEC_PER_SEC;

	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e + 1, 0, TWHEEL_MODE_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), e + 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, 20 * NSEC_PER_SEC, TWK_MS,
						  TWHEEL_MODE_REL), 1);
	KUNIT_EXPECT_GT(test, twheel_timer_expires(&p->timer), e);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 2ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 0);
}

struct twk_inval_param {
	const char *name;
	bool modify;		/* else start */
	bool pending;		/* the timer is pending before the call */
	int mode;
	ktime_t expires;
};

static const struct twk_inval_param twk_inval_params[] = {
	{ "start_mode_2", false, false, 2, NSEC_PER_SEC },
	{ "start_mode_minus1", false, false, -1, NSEC_PER_SEC },
	{ "start_abs_negative", false, false, TWHEEL_MODE_ABS, -1 },
	{ "start_abs_ktime_min", false, false, TWHEEL_MODE_ABS, KTIME_MIN },
	{ "start_rel_negative", false, false, TWHEEL_MODE_REL, -(ktime_t)NSEC_PER_SEC },
	{ "modify_idle_mode_7", true, false, 7, NSEC_PER_SEC },
	{ "modify_idle_rel_negative", true, false, TWHEEL_MODE_REL, -1 },
	{ "modify_pending_mode_2", true, true, 2, NSEC_PER_SEC },
	{ "modify_pending_abs_negative", true, true, TWHEEL_MODE_ABS, -1 },
	{ "modify_pending_rel_negative", true, true, TWHEEL_MODE_REL, -5 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_inval);

static void twheel_timer_start_invalid_args_einval(struct kunit *test)
{
	const struct twk_inval_param *ip = test->param_value;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	ktime_t e = ktime_get() + 10 * NSEC_PER_SEC;
	enum twheel_mode mode = (enum twheel_mode)ip->mode;
	int ret;

	if (ip->pending)
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, e, 0, TWHEEL_MODE_ABS), 0);
	if (ip->modify)
		ret = twheel_timer_modify(&p->timer, ip->expires, 0, mode);
	else
		ret = twheel_timer_start(&p->timer, ip->expires, 0, mode);
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	/* Rejected calls change nothing. */
	KUNIT_EXPECT_EQ(test, twheel_timer_pending(&p->timer), ip->pending);
	if (ip->pending)
		KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), e);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, ip->pending ? 1ULL : 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, ip->pending ? 1ULL : 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), ip->pending ? 1 : 0);
}

static void twheel_timer_cancel_returns_pending_state(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_record);
	struct twheel_timer *never = kunit_kzalloc(test, sizeof(*never), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, never);
	/* Never set up: not pending, nothing to cancel. */
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(never));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(never), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(never), 0);

	/* Set up, idle */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[1].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[0].timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p[0].timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p[1].timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
}

/* Records whether the timer looked pending from inside its own callback. */
static void twk_cb_pending_self(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->ret = twheel_timer_pending(timer);
	twk_record(p);
}

static void twheel_timer_pending_expires_track_state(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_pending_self);
	ktime_t before, after, e;
	bool pending;
	int ret;

	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p->timer));

	e = ktime_get() + 5 * NSEC_PER_SEC;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, e, TWK_MS, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), e);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p->timer));

	/*
	 * Relative: the absolute expiry is "now" at the call plus the delay.
	 * Softirqs off on this CPU, where the arm queues the wheel's hrtimer:
	 * the timer cannot fire before it is checked.
	 */
	local_bh_disable();
	before = ktime_get();
	ret = twheel_timer_start(&p->timer, 4 * tick, 0, TWHEEL_MODE_REL);
	after = ktime_get();
	e = twheel_timer_expires(&p->timer);
	pending = twheel_timer_pending(&p->timer);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_GE(test, e, before + 4 * (ktime_t)tick);
	KUNIT_EXPECT_LE(test, e, after + 4 * (ktime_t)tick);
	KUNIT_EXPECT_TRUE(test, pending);

	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	/* Not pending inside its own callback, nor after it. */
	KUNIT_EXPECT_EQ(test, p->ret, 0);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, p->exp_at_fire, e);
	KUNIT_EXPECT_GE(test, p->fired_at, e);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
}

/* ------------------------------------------------------------------------ */
/* modify: placement and new expiries                                       */
/* ------------------------------------------------------------------------ */

/*
 * next_expiry() of a wheel with one timer is the end of that timer's tick,
 * so it shows where the timer is placed.  With slack 0 the timer sits in
 * tick K = key(E); n1 - T is exactly the start of tick K.  A modify whose
 * range [n1 - T, n1 - T + 2^20 T] covers K must keep it there, although a
 * fresh placement would prefer the latest, most aligned tick of that range
 * (2^20-aligned, far from K).  A range that excludes K moves it.
 */
static void twheel_timer_modify_in_range_keeps_placement(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	/* one base: a modify on another CPU would place the timer afresh */
	struct twheel *w = twk_wheel_single(test, ctx, tick, 6, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	ktime_t e = ktime_get() + 2 * NSEC_PER_SEC, n1, n2, e2;

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, e, 0, TWHEEL_MODE_ABS), 0);
	n1 = twheel_next_expiry(w, KTIME_MAX);
	KUNIT_ASSERT_GT(test, n1, e);
	KUNIT_ASSERT_LE(test, n1, e + (ktime_t)tick);

	/* [K, K + 2^20]: kept */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, n1 - tick, (1ULL << 20) * tick,
						  TWHEEL_MODE_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), n1);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p->timer), n1 - (ktime_t)tick);

	/* [K - 10, K]: kept */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, n1 - 11 * tick, 10 * tick,
						  TWHEEL_MODE_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), n1);

	/* Same expiry, same slack: kept */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e, 0, TWHEEL_MODE_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), n1);

	/* [K - 20, K - 15]: moved into that range */
	e2 = n1 - 21 * tick;
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e2, 5 * tick,
						  TWHEEL_MODE_ABS), 1);
	n2 = twheel_next_expiry(w, KTIME_MAX);
	KUNIT_EXPECT_GE(test, n2, n1 - 20 * (ktime_t)tick);
	KUNIT_EXPECT_LE(test, n2, n1 - 15 * (ktime_t)tick);

	/* [K + 1, K + 1]: moved one tick later than K */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, n1, 0, TWHEEL_MODE_ABS), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), n1 + (ktime_t)tick);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
}

static void twk_modify_moves(struct kunit *test, ktime_t first, ktime_t second)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 5, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	ktime_t before, e2;
	int r1, r2;

	/* Softirqs off: the first expiry cannot pass before the modify. */
	local_bh_disable();
	r1 = twheel_timer_start(&p->timer, first, 0, TWHEEL_MODE_REL);
	before = ktime_get();
	r2 = twheel_timer_modify(&p->timer, second, 0, TWHEEL_MODE_REL);
	e2 = twheel_timer_expires(&p->timer);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, r1, 0);
	KUNIT_ASSERT_EQ(test, r2, 1);
	KUNIT_EXPECT_GE(test, e2, before + second);

	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS + (second >> 20)));
	/* Fired once, at (not before) the new expiry; no longer pending. */
	KUNIT_EXPECT_EQ(test, p->exp_at_fire, e2);
	KUNIT_EXPECT_GE(test, p->fired_at, e2);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&p->timer));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, 1ULL);
}

static void twheel_timer_modify_earlier_fires_once_at_new_time(struct kunit *test)
{
	twk_modify_moves(test, 30 * NSEC_PER_SEC, 10 * TWK_MS);
}

static void twheel_timer_modify_later_fires_once_at_new_time(struct kunit *test)
{
	twk_modify_moves(test, 5 * TWK_MS, 80 * TWK_MS);
}

/* ------------------------------------------------------------------------ */
/* Callbacks acting on the wheel                                            */
/* ------------------------------------------------------------------------ */

static void twk_cb_cancel_peer(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->ret = twheel_timer_cancel(&p->peer->timer);
	twk_record(p);
}

static void twheel_callback_cancels_later_timer(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	/* one base: a is handed out before b, however late its tick runs */
	struct twheel *w = twk_wheel_single(test, ctx, tick, 4, 64);
	struct twk_probe *a = twk_probes(test, ctx, w, 1, twk_cb_cancel_peer);
	struct twk_probe *b = twk_probes(test, ctx, w, 1, twk_cb_record);

	a->peer = b;
	/* b is 10 revolutions after a */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&b->timer, 4 * tick + (10 * tick << 4), 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&a->timer, 4 * tick, 0, TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&a->timer), 0);

	KUNIT_EXPECT_EQ(test, a->ret, 1);
	/* b is gone for good: not pending, nothing on the wheel */
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&b->timer));
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&b->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->fires), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->fires), 1);
}

/* The first of two same-tick callbacks cancels the other. */
static void twk_cb_cancel_peer_first(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	if (atomic_inc_return(&p->ctx->order) == 1)
		p->ret = twheel_timer_cancel(&p->peer->timer);
	twk_record(p);
}

/*
 * Both timers are due in the same tick, so one advance hands both out; the
 * first callback then cancels the other while it waits on the expired
 * list.  Documented: such a timer still counts as pending and is taken off.
 */
static void twheel_callback_cancels_same_tick_timer(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_cancel_peer_first);
	ktime_t e = ktime_get() + 5 * TWK_MS;
	int winner, r0, r1;

	p[0].peer = &p[1];
	p[1].peer = &p[0];
	p[0].ret = -1;
	p[1].ret = -1;
	/* Softirqs off: neither can fire before both are armed. */
	local_bh_disable();
	r0 = twheel_timer_start(&p[0].timer, e, 0, TWHEEL_MODE_ABS);
	r1 = twheel_timer_start(&p[1].timer, e, 0, TWHEEL_MODE_ABS);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, r0, 0);
	KUNIT_ASSERT_EQ(test, r1, 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);

	winner = atomic_read(&p[0].fires) ? 0 : 1;
	KUNIT_EXPECT_EQ(test, atomic_read(&p[winner].fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[!winner].fires), 0);
	KUNIT_EXPECT_EQ(test, p[winner].ret, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
}

/* The first of two same-tick callbacks moves the other 20 ticks later. */
static void twk_cb_delay_peer_first(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->entered = ktime_get();
	if (atomic_inc_return(&p->ctx->order) == 1) {
		p->ret = twheel_timer_modify(&p->peer->timer, 20 * p->ctx->tick_ns, 0,
					     TWHEEL_MODE_REL);
		p->peer->want = twheel_timer_expires(&p->peer->timer);
	}
	twk_record(p);
}

static void twheel_callback_modifies_same_tick_timer(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_delay_peer_first);
	ktime_t e = ktime_get() + 10 * tick;
	int first, second, r0, r1;

	p[0].peer = &p[1];
	p[1].peer = &p[0];
	/* Softirqs off: neither can fire before both are armed. */
	local_bh_disable();
	r0 = twheel_timer_start(&p[0].timer, e, 0, TWHEEL_MODE_ABS);
	r1 = twheel_timer_start(&p[1].timer, e, 0, TWHEEL_MODE_ABS);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, r0, 0);
	KUNIT_ASSERT_EQ(test, r1, 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);

	first = p[0].fired_at <= p[1].fired_at ? 0 : 1;
	second = !first;
	/* It was still pending (on the expired list) when modified. */
	KUNIT_EXPECT_EQ(test, p[first].ret, 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 1);
	KUNIT_EXPECT_GE(test, p[first].fired_at, e);
	/* The moved one fired once, at its new expiry. */
	KUNIT_EXPECT_EQ(test, p[second].exp_at_fire, p[second].want);
	KUNIT_EXPECT_GE(test, p[second].fired_at, p[second].want);
	KUNIT_EXPECT_GE(test, p[second].want, p[first].entered + 20 * (ktime_t)tick);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, 2ULL);
}

/*
 * A periodic timer: its callback re-arms it p->limit - 1 times, p->data
 * after the expiry in force, absolute; how it asks for that.
 */
enum twk_periodic_how {
	/* twheel_timer_start() from the callback */
	TWK_REARM_START,
	/* twheel_timer_restart(): armed when the callback returns */
	TWK_RESTART,
	/* restart 10 s out, then again for the next period: the last wins */
	TWK_RESTART_REPLACED,
	/* restart 10 s out, then start for the next period: the start stands */
	TWK_RESTART_THEN_START,
};

struct twk_periodic_param {
	const char *name;
	enum twk_periodic_how how;
};

static const struct twk_periodic_param twk_periodic_params[] = {
	{ "start", TWK_REARM_START },
	{ "restart", TWK_RESTART },
	{ "restart_replaced", TWK_RESTART_REPLACED },
	{ "restart_then_start", TWK_RESTART_THEN_START },
};

TWK_ARRAY_PARAM_BY_NAME(twk_periodic);

static void twk_cb_periodic(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	const struct twk_periodic_param *rp = p->ctx->priv;
	ktime_t next = twheel_timer_expires(timer) + (ktime_t)p->data;
	int ret = 0;

	/* each run is for the expiry the previous one asked for, exactly */
	if (twheel_timer_expires(timer) != p->want)
		atomic_inc(&p->ctx->errors);
	p->want = next;
	twk_record(p);
	if (atomic_read(&p->fires) >= (int)p->limit)
		return;
	if (rp->how == TWK_REARM_START) {
		if (twheel_timer_start(timer, next, 0, TWHEEL_MODE_ABS))
			atomic_inc(&p->ctx->errors);
		return;
	}
	/* Not a mode: refused, and nothing asked for. */
	if (twheel_timer_restart(timer, next, 0, 7) != -EINVAL)
		atomic_inc(&p->ctx->errors);
	if (rp->how != TWK_RESTART)
		ret |= twheel_timer_restart(timer, 10 * NSEC_PER_SEC, 0,
					    TWHEEL_MODE_REL);
	if (rp->how == TWK_RESTART_THEN_START)
		ret |= twheel_timer_start(timer, next, 0, TWHEEL_MODE_ABS);
	else
		ret |= twheel_timer_restart(timer, next, 0, TWHEEL_MODE_ABS);
	if (ret)
		atomic_inc(&p->ctx->errors);
}

static void twheel_callback_rearms_itself_periodically(struct kunit *test)
{
	const struct twk_periodic_param *rp = test->param_value;
	const u64 tick = 500 * TWK_US;
	const unsigned int n = 25;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_periodic);
	ktime_t first;
	struct twheel_stats st;

	ctx->priv = (void *)rp;
	p->limit = n;
	p->data = 3 * tick;	/* not a divisor of the span */
	/* Only from the timer's own callback: here it is refused. */
	KUNIT_EXPECT_EQ(test, twheel_timer_restart(&p->timer, 0, 0, TWHEEL_MODE_REL),
			-EINVAL);
	/* Fixed before arming: the first run may re-arm before a read-back. */
	first = ktime_add_ns(ktime_get(), 2 * tick);
	p->want = first;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, first, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, n, TWK_TIMEOUT_MS));
	/* The last run did not restart: nothing pending, nothing running. */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), (int)n);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->errors), 0);
	/* twk_record() checks each run against the expiry in force */
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	/* The n runs were one period apart: the next would be n periods on. */
	KUNIT_EXPECT_EQ(test, p->want, first + (ktime_t)(n * p->data));
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)n);
	KUNIT_EXPECT_EQ(test, st.armed, (u64)n);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
}

static void twk_cb_start_peer(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->entered = ktime_get();
	p->ret = twheel_timer_start(&p->peer->timer, 2 * p->ctx->tick_ns, 0, TWHEEL_MODE_REL);
	p->peer->want = twheel_timer_expires(&p->peer->timer);
	twk_record(p);
}

static void twheel_callback_starts_new_timer(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *a = twk_probes(test, ctx, w, 1, twk_cb_start_peer);
	struct twk_probe *b = twk_probes(test, ctx, w, 1, twk_cb_record);

	a->peer = b;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&a->timer, tick, 0, TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&a->timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&b->timer), 0);
	KUNIT_EXPECT_EQ(test, a->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->fires), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->fires), 1);
	KUNIT_EXPECT_GE(test, b->want, a->entered + 2 * (ktime_t)tick);
	KUNIT_EXPECT_EQ(test, b->exp_at_fire, b->want);
	KUNIT_EXPECT_GE(test, b->fired_at, b->want);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, 2ULL);
}

/*
 * Note twheel_fire_time() on entry (@entered), record the run, and when
 * @limit says so re-arm the timer an hour out and note it again (@data).
 */
static void twk_cb_fire_time(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->entered = twheel_fire_time(timer);
	twk_record(p);
	if (p->limit) {
		p->ret = twheel_timer_start(timer, 3600 * (ktime_t)NSEC_PER_SEC,
					    0, TWHEEL_MODE_REL);
		p->data = twheel_fire_time(timer);
	}
}

/*
 * The fire time of a timer stays readable after its callback until it is
 * armed again, whatever ticks ran since (the device reports it from there);
 * in the callback it survives the callback arming its timer again.  One
 * base, so that @b's tick is a later reading of the same base's clock.
 */
static void twheel_fire_time_kept_after_callback_until_rearmed(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_single(test, ctx, tick, 4, 64);
	struct twk_probe *a = twk_probes(test, ctx, w, 1, twk_cb_fire_time);
	struct twk_probe *b = twk_probes(test, ctx, w, 1, twk_cb_fire_time);
	struct twk_probe *c = twk_probes(test, ctx, w, 1, twk_cb_fire_time);

	c->limit = 1;
	/*
	 * The expiry is fixed before arming, not read back after: @c may
	 * fire and re-arm itself an hour out before this thread runs again.
	 */
	a->want = ktime_add_ns(ktime_get(), tick);
	c->want = a->want;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&a->timer, a->want, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&c->timer, c->want, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	/* a later tick of the same base */
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&b->timer, 4 * tick, 0, TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 3, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&a->timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&b->timer), 0);
	/* its callback has returned, having re-armed it */
	twheel_timer_cancel_sync(&c->timer);

	KUNIT_EXPECT_GE(test, a->entered, a->want);
	KUNIT_EXPECT_LE(test, a->entered, a->fired_at);
	KUNIT_EXPECT_GT(test, b->entered, a->entered);
	KUNIT_EXPECT_EQ(test, twheel_fire_time(&a->timer), a->entered);
	KUNIT_EXPECT_EQ(test, twheel_fire_time(&b->timer), b->entered);
	/* re-armed in its callback: the same reading before and after */
	KUNIT_EXPECT_EQ(test, c->ret, 0);
	KUNIT_EXPECT_GE(test, c->entered, c->want);
	KUNIT_EXPECT_EQ(test, c->data, (u64)c->entered);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

/* Self-freeing timers. */
#define TWK_SF_NR	16

struct twk_sf;

struct twk_sf_timer {
	struct twheel_timer timer;
	struct twk_sf *sf;
	unsigned int idx;
	bool armed;
};

/**
 * struct twk_sf - shared state of the self-freeing timers
 * @lock:   protects @objs against the failure-path cleanup
 * @objs:   the timers; a callback clears its slot and frees its timer
 * @fired:  callbacks run
 * @early:  callbacks that ran before their expiry
 * @wq:     woken by callbacks
 */
struct twk_sf {
	spinlock_t lock;	/* see above */
	struct twk_sf_timer *objs[TWK_SF_NR];
	atomic_t fired;
	atomic_t early;
	wait_queue_head_t wq;
};

static void twk_cb_free_self(struct twheel_timer *timer)
{
	struct twk_sf_timer *o = container_of(timer, struct twk_sf_timer, timer);
	struct twk_sf *sf = o->sf;

	if (ktime_get() < twheel_timer_expires(timer))
		atomic_inc(&sf->early);
	spin_lock(&sf->lock);
	sf->objs[o->idx] = NULL;
	spin_unlock(&sf->lock);
	/* The facility must not touch the timer from here on (KASAN). */
	kfree(o);
	atomic_inc_return(&sf->fired);
	wake_up(&sf->wq);
}

/*
 * Failure path only: take back the timers whose callbacks will not run.
 * Runs before the wheel is destroyed; the twk_sf memory itself is released
 * after the wheel (allocated before it), when twheel_destroy() has waited
 * for any callback still running.
 */
static void twk_sf_free(struct kunit_resource *res)
{
	struct twk_sf *sf = res->data;
	unsigned int i;

	spin_lock_bh(&sf->lock);
	for (i = 0; i < TWK_SF_NR; i++) {
		struct twk_sf_timer *o = sf->objs[i];

		if (!o)
			continue;
		if (!o->armed || twheel_timer_cancel(&o->timer) == 1) {
			sf->objs[i] = NULL;
			kfree(o);
		}
		/* else its callback runs now and frees it */
	}
	spin_unlock_bh(&sf->lock);
}

static void twheel_callback_frees_own_timer(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_sf *sf = kunit_kzalloc(test, sizeof(*sf), GFP_KERNEL);
	struct twheel *w;
	struct rnd_state rs;
	ktime_t e;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, sf);
	spin_lock_init(&sf->lock);
	init_waitqueue_head(&sf->wq);
	w = twk_wheel(test, NULL, tick, 4, 64);
	KUNIT_ASSERT_NOT_NULL(test, kunit_alloc_resource(test, NULL, twk_sf_free,
							 GFP_KERNEL, sf));
	for (i = 0; i < TWK_SF_NR; i++) {
		struct twk_sf_timer *o = kzalloc(sizeof(*o), GFP_KERNEL);

		KUNIT_ASSERT_NOT_NULL(test, o);
		o->sf = sf;
		o->idx = i;
		twheel_timer_setup(&o->timer, w, twk_cb_free_self, 0);
		sf->objs[i] = o;
	}

	/* Half due in one tick (freed while the handler walks the rest). */
	prandom_seed_state(&rs, 0x5e1f);
	e = ktime_get() + 4 * tick;
	for (i = 0; i < TWK_SF_NR; i++) {
		struct twk_sf_timer *o = sf->objs[i];
		int ret;

		if (i % 2)
			ret = twheel_timer_start(&o->timer, e, 0, TWHEEL_MODE_ABS);
		else
			ret = twheel_timer_start(&o->timer, twk_rand(&rs, 8 * tick),
						 twk_rand(&rs, tick), TWHEEL_MODE_REL);
		KUNIT_ASSERT_EQ(test, ret, 0);
		/* o may be freed from here on; armed is read under sf->lock */
		spin_lock_bh(&sf->lock);
		if (sf->objs[i])
			sf->objs[i]->armed = true;
		spin_unlock_bh(&sf->lock);
	}
	/*
	 * A timer freed by its callback before "armed" was set above is not
	 * in objs any more, so the failure path never sees it.
	 */
	KUNIT_ASSERT_TRUE_MSG(test,
			      wait_event_timeout(sf->wq, atomic_read(&sf->fired) >= TWK_SF_NR,
						 msecs_to_jiffies(TWK_TIMEOUT_MS)) > 0,
			      "%d of %d fired", atomic_read(&sf->fired), TWK_SF_NR);
	KUNIT_EXPECT_EQ(test, atomic_read(&sf->early), 0);
	spin_lock_bh(&sf->lock);
	for (i = 0; i < TWK_SF_NR; i++)
		KUNIT_EXPECT_PTR_EQ(test, sf->objs[i], NULL);
	spin_unlock_bh(&sf->lock);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, (u64)TWK_SF_NR);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* cancel_sync / shutdown_sync against a running callback                   */
/* ------------------------------------------------------------------------ */

/* What the helper thread of a race case does while the callback runs. */
enum twk_race_op {
	TWK_RACE_CANCEL_SYNC,
	TWK_RACE_SHUTDOWN_SYNC,
	/* twheel_timer_modify() (10 s out), then twheel_timer_cancel_sync() */
	TWK_RACE_MODIFY_CANCEL_SYNC,
	TWK_RACE_CANCEL,
	TWK_RACE_MODIFY,
};

/* What the race callback does first, before it wakes the helper. */
enum twk_first {
	TWK_FIRST_NOTHING,
	/* re-arm (10 s) as a mod_timer() at the top of a timer_list callback */
	TWK_FIRST_MODIFY,
	/* ask twheel_timer_restart() for a re-arm 10 s out on return */
	TWK_FIRST_RESTART,
};

/**
 * struct twk_race - a callback that holds still until a helper thread is
 * seen blocked in a sync call on its timer (or has returned from its call)
 * @p:        the probe
 * @threads:  one helper per online CPU, bound to it, not woken
 * @helper:   the helper the callback woke (on another CPU than its own)
 * @op:       what the helper does
 * @first:    what the callback does before anything else
 * @rearm:    after the handshake the callback re-arms its timer (10 s)
 * @calling:  set by the helper just before its call
 * @returned: set by the helper after its call
 * @seq:      orders the end of the callback and the return of the call
 * @handshake: the callback saw the helper waiting before it finished
 * @cb_end_seq: @seq when the callback finished
 * @ret_seq:  @seq when the helper's call returned
 * @sync_ret: what the helper's (last) call returned
 * @modify_ret: what the helper's twheel_timer_modify() returned
 * @first_ret: what the callback's call at its top (@first) returned
 * @rearm_ret: what twheel_timer_modify() on itself returned in the callback
 * @start_ret: what twheel_timer_start() on itself returned after that
 * @restart_ret: what twheel_timer_restart() on itself returned after that
 * @helper_done: completed by the helper after its call
 */
struct twk_race {
	struct twk_probe *p;
	struct twk_threads *threads;
	struct task_struct *helper;
	enum twk_race_op op;
	enum twk_first first;
	bool rearm;
	atomic_t calling;
	atomic_t returned;
	atomic_t seq;
	bool handshake;
	int cb_end_seq;
	int ret_seq;
	int sync_ret;
	int modify_ret;
	int first_ret;
	int rearm_ret;
	int start_ret;
	int restart_ret;
	struct completion helper_done;
};

static void twk_cb_race(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_race *r = p->ctx->priv;
	unsigned int cpu, this = smp_processor_id();
	struct task_struct *h = NULL;
	ktime_t deadline;

	if (atomic_read(&p->fires)) {	/* must not happen; counted */
		twk_record(p);
		return;
	}
	if (r->first == TWK_FIRST_MODIFY)
		r->first_ret = twheel_timer_modify(timer, 10 * NSEC_PER_SEC, 0,
						   TWHEEL_MODE_REL);
	else if (r->first == TWK_FIRST_RESTART)
		r->first_ret = twheel_timer_restart(timer, 10 * NSEC_PER_SEC, 0,
						    TWHEEL_MODE_REL);
	for_each_online_cpu(cpu) {
		if (cpu != this && cpu < r->threads->nr && r->threads->tasks[cpu]) {
			h = r->threads->tasks[cpu];
			break;
		}
	}
	if (h) {
		r->helper = h;
		wake_up_process(h);
		/*
		 * Hold still (softirq: spin, never sleep) until the helper is
		 * blocked in the sync call, or it returned, or TWK_SPIN_MS.
		 */
		deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;
		while (ktime_get() < deadline && !atomic_read(&r->returned)) {
			if (atomic_read(&r->calling) &&
			    (READ_ONCE(h->__state) & TASK_UNINTERRUPTIBLE)) {
				r->handshake = true;
				break;
			}
			cpu_relax();
		}
	}
	if (r->rearm) {
		r->rearm_ret = twheel_timer_modify(timer, 10 * NSEC_PER_SEC, 0,
						   TWHEEL_MODE_REL);
		r->start_ret = twheel_timer_start(timer, 10 * NSEC_PER_SEC, 0,
						  TWHEEL_MODE_REL);
		r->restart_ret = twheel_timer_restart(timer, 10 * NSEC_PER_SEC,
						      0, TWHEEL_MODE_REL);
	}
	r->cb_end_seq = atomic_inc_return(&r->seq);
	twk_record(p);
}

static int twk_race_helper(void *data)
{
	struct twk_race *r = data;

	struct twheel_timer *t = &r->p->timer;
	int ret;

	if (r->op == TWK_RACE_MODIFY_CANCEL_SYNC)
		r->modify_ret = twheel_timer_modify(t, 10 * NSEC_PER_SEC, 0,
						    TWHEEL_MODE_REL);
	atomic_set(&r->calling, 1);
	/* "calling" is visible before this task can be seen blocked */
	smp_mb__after_atomic();
	switch (r->op) {
	case TWK_RACE_SHUTDOWN_SYNC:
		ret = twheel_timer_shutdown_sync(t);
		break;
	case TWK_RACE_CANCEL:
		ret = twheel_timer_cancel(t);
		break;
	case TWK_RACE_MODIFY:
		ret = twheel_timer_modify(t, 20 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
		break;
	default:
		ret = twheel_timer_cancel_sync(t);
		break;
	}
	r->sync_ret = ret;
	r->ret_seq = atomic_inc_return(&r->seq);
	atomic_set(&r->returned, 1);
	complete(&r->helper_done);
	twk_idle_until_stop();
	return 0;
}

/*
 * Fire the race probe and let the helper make its call while the callback
 * runs.  The callback runs on some CPU and wakes the helper bound to
 * another one, then spins until that helper is seen blocked inside the call
 * (state TASK_UNINTERRUPTIBLE after "calling") or has returned from it.  A
 * sync call (@waits) must be seen blocked and return only after the
 * callback finished; the others return while it still runs.
 */
static struct twk_race *twk_race_run(struct kunit *test, enum twk_race_op op,
				     enum twk_first first, bool rearm, bool waits)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx;
	unsigned long left;
	struct twk_race *r;
	struct twheel *w;
	unsigned int cpu;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	ctx = twk_ctx_new(test);
	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	init_completion(&r->helper_done);
	r->op = op;
	r->first = first;
	r->rearm = rearm;
	ctx->priv = r;
	w = twk_wheel(test, ctx, tick, 4, 64);
	r->p = twk_probes(test, ctx, w, 1, twk_cb_race);
	r->threads = twk_threads(test, nr_cpu_ids);
	for_each_online_cpu(cpu)
		twk_thread_create(test, r->threads, cpu, cpu, twk_race_helper, r);

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&r->p->timer, 2 * tick, 0,
						 TWHEEL_MODE_REL), 0);
	left = wait_for_completion_timeout(&r->helper_done,
					   msecs_to_jiffies(2 * TWK_TIMEOUT_MS));
	KUNIT_ASSERT_NE_MSG(test, left, 0UL, "the sync call did not return");
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_GT(test, r->cb_end_seq, 0);
	KUNIT_EXPECT_GT(test, r->ret_seq, 0);
	if (waits) {
		KUNIT_EXPECT_TRUE_MSG(test, r->handshake,
				      "helper not seen waiting in the sync call while the callback ran");
		/* The call returned only after the callback had finished. */
		KUNIT_EXPECT_LT_MSG(test, r->cb_end_seq, r->ret_seq,
				    "the sync call returned while the callback ran");
		KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&r->p->timer));
	} else {
		/* The call did not wait for the callback. */
		KUNIT_EXPECT_FALSE(test, r->handshake);
		KUNIT_EXPECT_LT(test, r->ret_seq, r->cb_end_seq);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&r->p->fires), 1);
	return r;
}

struct twk_race_param {
	const char *name;
	bool rearm;
};

static const struct twk_race_param twk_race_params[] = {
	{ "callback_returns", false },
	{ "callback_rearms_itself", true },
};

TWK_ARRAY_PARAM_BY_NAME(twk_race);

static void twheel_timer_cancel_sync_waits_for_running_callback(struct kunit *test)
{
	const struct twk_race_param *rp = test->param_value;
	struct twk_race *r = twk_race_run(test, TWK_RACE_CANCEL_SYNC,
					  TWK_FIRST_NOTHING, rp->rearm, true);

	if (rp->rearm) {
		/*
		 * Re-armed during the wait: found pending and cancelled.  The
		 * restart asked for after the modify is dropped on return.
		 */
		KUNIT_EXPECT_EQ(test, r->rearm_ret, 0);
		KUNIT_EXPECT_EQ(test, r->start_ret, -EBUSY);
		KUNIT_EXPECT_EQ(test, r->restart_ret, 0);
		KUNIT_EXPECT_EQ(test, r->sync_ret, 1);
		KUNIT_EXPECT_EQ(test, twk_stats(r->p->ctx->wheel).cancelled, 1ULL);
	} else {
		KUNIT_EXPECT_EQ(test, r->sync_ret, 0);
		KUNIT_EXPECT_EQ(test, twk_stats(r->p->ctx->wheel).cancelled, 0ULL);
	}
	KUNIT_EXPECT_EQ(test, twk_stats(r->p->ctx->wheel).pending, 0ULL);
}

/* Re-arms its own timer, then calls twheel_timer_cancel_sync() on it. */
static void twk_cb_cancel_sync_self(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->data = twheel_timer_modify(timer, 10 * NSEC_PER_SEC, 0,
				      TWHEEL_MODE_REL);
	p->ret = twheel_timer_cancel_sync(timer);
	p->limit = twheel_timer_pending(timer);
	twk_record(p);
}

/*
 * twheel_timer_cancel_sync() from the timer's own callback would wait for
 * that callback to return: forever.  It warns (the case announces the
 * warning, which the harness then accepts, and fails the run if it does
 * not come) and cancels as twheel_timer_cancel() does: here the re-arm
 * the callback made just before.  Lockdep must stay on: the own-callback
 * check comes before lockdep's wait annotation, which would report
 * recursion on the callback's own map and turn lockdep off for the boot.
 * The warning is WARN_ON_ONCE(): this is the only case that triggers it.
 */
static void twheel_timer_cancel_sync_own_callback_warns_and_cancels(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_cancel_sync_self);
	int locks = debug_locks;

	/* the frame surely in its trace: the call is a tail call */
	kunit_info(test, "TWHEEL-EXPECT-WARN: twk_cb_cancel_sync_self\n");
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, 2 * TWK_MS, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, 0ULL);	/* the modify: it was idle */
	KUNIT_EXPECT_EQ(test, p->ret, 1);	/* the re-arm, cancelled */
	KUNIT_EXPECT_EQ(test, p->limit, 0ULL);	/* not pending after it */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_EQ_MSG(test, debug_locks, locks, "lockdep turned itself off");
}

static void twheel_timer_shutdown_sync_refuses_rearm_from_callback(struct kunit *test)
{
	struct twk_race *r = twk_race_run(test, TWK_RACE_SHUTDOWN_SYNC,
					  TWK_FIRST_NOTHING, true, true);
	struct twheel_timer *t = &r->p->timer;
	struct twk_ctx *ctx = r->p->ctx;

	KUNIT_EXPECT_EQ(test, r->sync_ret, 0);
	KUNIT_EXPECT_EQ(test, r->rearm_ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, r->start_ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, r->restart_ret, -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(t, ctx->tick_ns, 0, TWHEEL_MODE_REL),
			-ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(t, ctx->tick_ns, 0, TWHEEL_MODE_REL),
			-ESHUTDOWN);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(t));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(t), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(ctx->wheel).armed, 1ULL);

	/* Set up again, it is usable again. */
	twheel_timer_setup(t, ctx->wheel, twk_cb_record, 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(t, ctx->tick_ns, 0, TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(t), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->p->fires), 2);
}

/*
 * The timer is pending again while its callback still runs: the callback
 * re-armed it first thing, or another CPU modified it.  A sync call must
 * still wait for the callback (and then cancel the new arming); the plain
 * calls act on the new arming at once.
 */
struct twk_rerace_param {
	const char *name;
	enum twk_race_op op;
	enum twk_first first;
	bool waits;
	int ret;
};

static const struct twk_rerace_param twk_rerace_params[] = {
	{ "cancel_sync_callback_rearmed_first", TWK_RACE_CANCEL_SYNC,
	  TWK_FIRST_MODIFY, true, 1 },
	{ "shutdown_sync_callback_rearmed_first", TWK_RACE_SHUTDOWN_SYNC,
	  TWK_FIRST_MODIFY, true, 1 },
	{ "cancel_sync_other_cpu_modified", TWK_RACE_MODIFY_CANCEL_SYNC,
	  TWK_FIRST_NOTHING, true, 1 },
	{ "cancel_callback_rearmed_first", TWK_RACE_CANCEL, TWK_FIRST_MODIFY,
	  false, 1 },
	{ "modify_callback_rearmed_first", TWK_RACE_MODIFY, TWK_FIRST_MODIFY,
	  false, 1 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_rerace);

static void twheel_timer_sync_calls_wait_for_rearmed_callback(struct kunit *test)
{
	const struct twk_rerace_param *rp = test->param_value;
	struct twk_race *r = twk_race_run(test, rp->op, rp->first, false,
					  rp->waits);
	struct twheel_timer *t = &r->p->timer;
	struct twheel *w = r->p->ctx->wheel;

	KUNIT_EXPECT_EQ(test, r->sync_ret, rp->ret);
	if (rp->first == TWK_FIRST_MODIFY)	/* unlinked while it runs */
		KUNIT_EXPECT_EQ(test, r->first_ret, 0);
	if (rp->op == TWK_RACE_MODIFY_CANCEL_SYNC)
		KUNIT_EXPECT_EQ(test, r->modify_ret, 0);
	if (rp->op == TWK_RACE_MODIFY) {
		/* Still pending, at the helper's expiry, not the callback's. */
		KUNIT_EXPECT_TRUE(test, twheel_timer_pending(t));
		KUNIT_EXPECT_GT(test, twheel_timer_expires(t),
				ktime_get() + 10 * (ktime_t)NSEC_PER_SEC);
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(t), 1);
	} else {
		KUNIT_EXPECT_FALSE(test, twheel_timer_pending(t));
		KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);
	}
	if (rp->op == TWK_RACE_SHUTDOWN_SYNC)
		KUNIT_EXPECT_EQ(test, twheel_timer_start(t, 0, 0, TWHEEL_MODE_REL),
				-ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->p->fires), 1);
}

/*
 * The callback asked for a restart first thing, then held still while the
 * helper's call ran.  The sync calls wait for the callback: cancel_sync
 * then finds the re-armed timer pending and cancels it, shutdown_sync has
 * the re-arm dropped.  A plain cancel returns while the callback runs and
 * does not prevent the re-arm; a modify that armed the timer meanwhile
 * stands instead of it.
 */
struct twk_restart_race_param {
	const char *name;
	enum twk_race_op op;
	bool waits;
	int ret;
	/* the expiry pending after the call, in s from now; 0: not pending */
	int pending_s;
};

static const struct twk_restart_race_param twk_restart_race_params[] = {
	{ "cancel_sync", TWK_RACE_CANCEL_SYNC, true, 1, 0 },
	{ "shutdown_sync", TWK_RACE_SHUTDOWN_SYNC, true, 0, 0 },
	{ "cancel", TWK_RACE_CANCEL, false, 0, 10 },
	{ "modify", TWK_RACE_MODIFY, false, 0, 20 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_restart_race);

static void twheel_timer_restart_vs_calls_during_callback(struct kunit *test)
{
	const struct twk_restart_race_param *rp = test->param_value;
	struct twk_race *r = twk_race_run(test, rp->op, TWK_FIRST_RESTART,
					  false, rp->waits);
	struct twheel_timer *t = &r->p->timer;
	struct twheel *w = r->p->ctx->wheel;
	ktime_t exp = twheel_timer_expires(t), now = ktime_get();

	KUNIT_EXPECT_EQ(test, r->first_ret, 0);
	KUNIT_EXPECT_EQ(test, r->sync_ret, rp->ret);
	KUNIT_EXPECT_EQ(test, twheel_timer_pending(t), rp->pending_s > 0);
	if (rp->pending_s) {
		/* the 10 s of the restart, or the helper's 20 s */
		KUNIT_EXPECT_LE(test, exp, now + rp->pending_s * (ktime_t)NSEC_PER_SEC);
		KUNIT_EXPECT_GT(test, exp,
				now + (rp->pending_s - 5) * (ktime_t)NSEC_PER_SEC);
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(t), 1);
	}
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled,
			rp->op == TWK_RACE_SHUTDOWN_SYNC ? 0ULL : 1ULL);
	if (rp->op == TWK_RACE_SHUTDOWN_SYNC)
		KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, atomic_read(&r->p->fires), 1);
}

static void twheel_timer_shutdown_sync_pending_timer(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	struct twheel_timer *t = &p->timer;

	KUNIT_ASSERT_EQ(test, twheel_timer_start(t, 10 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_shutdown_sync(t), 1);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(t));
	KUNIT_EXPECT_EQ(test, twheel_timer_start(t, tick, 0, TWHEEL_MODE_REL), -ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(t, tick, 0, TWHEEL_MODE_ABS), -ESHUTDOWN);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(t));
	KUNIT_EXPECT_EQ(test, twheel_timer_shutdown_sync(t), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(t), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));

	twheel_timer_setup(t, w, twk_cb_record, 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_start(t, tick, 0, TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(t), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_GE(test, p->fired_at, p->exp_at_fire);
}

/* ------------------------------------------------------------------------ */
/* Execution cap and catch-up                                               */
/* ------------------------------------------------------------------------ */

/* Records which handler run (the wakeups counter) ran the callback. */
static void twk_cb_pass(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->data = twk_wakeups(p->ctx->wheel);
	twk_record(p);
}

static int twk_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Number of distinct handler runs among @p's callbacks, and the largest. */
static unsigned int twk_passes(struct kunit *test, struct twk_probe *p,
			       unsigned int nr, unsigned int *largest)
{
	u64 *v = kunit_kcalloc(test, nr, sizeof(*v), GFP_KERNEL);
	unsigned int i, passes = 0, run = 0;

	KUNIT_ASSERT_NOT_NULL(test, v);
	for (i = 0; i < nr; i++)
		v[i] = p[i].data;
	sort(v, nr, sizeof(*v), twk_cmp_u64, NULL);
	*largest = 0;
	for (i = 0; i < nr; i++) {
		if (!i || v[i] != v[i - 1]) {
			passes++;
			run = 0;
		}
		run++;
		*largest = max(*largest, run);
	}
	return passes;
}

static void twheel_tick_budget_defers_without_loss(struct kunit *test)
{
	const u64 tick = TWK_MS;
	const unsigned int nr = 100, budget = 4;
	struct twk_ctx *ctx = twk_ctx_new(test);
	/* one base: the callbacks tell passes apart by its wakeup count */
	struct twheel *w = twk_wheel_single(test, ctx, tick, 4, budget);
	struct twk_probe *p = twk_probes(test, ctx, w, nr, twk_cb_pass);
	ktime_t e = ktime_get() + 20 * TWK_MS;
	unsigned int i, passes, largest, bad = 0;
	struct twheel_stats st;

	for (i = 0; i < nr; i++)
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[i].timer, e, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, nr, TWK_TIMEOUT_MS),
			      "%d of %u fired", atomic_read(&ctx->fired), nr);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
	for (i = 0; i < nr; i++)
		if (atomic_read(&p[i].fires) != 1 || p[i].fired_at < e)
			bad++;
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);

	passes = twk_passes(test, p, nr, &largest);
	st = twk_stats(w);
	kunit_info(test, "%u timers in %u handler runs (largest %u), %llu wakeups\n",
		   nr, passes, largest, st.wakeups);
	KUNIT_EXPECT_LE(test, largest, budget);
	KUNIT_EXPECT_GE(test, passes, nr / budget);
	KUNIT_EXPECT_GE(test, st.wakeups, (u64)(nr / budget));
	KUNIT_EXPECT_EQ(test, st.fired, (u64)nr);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
}

struct twk_late_param {
	const char *name;
	unsigned int budget;
};

static const struct twk_late_param twk_late_params[] = {
	{ "one_pass", 4096 },
	{ "budget_4", 4 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_late);

/*
 * Arm timers over the next 1.5 revolutions and keep softirqs off on this
 * CPU for three revolutions: the wheel's hrtimer (queued on this CPU by
 * the arms, which run here with softirqs off) expires, but its soft
 * handler can only run at local_bh_enable(), far too late.  It must catch
 * up over all the ticks that passed: everything fires once, none early.
 */
static void twheel_tick_catches_up_after_late_hrtimer(struct kunit *test)
{
	const struct twk_late_param *lp = test->param_value;
	const u64 tick = TWK_MS;
	const unsigned int bits = 4, nr = 32;
	const u64 span = tick << bits;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, bits, lp->budget);
	struct twk_probe *p = twk_probes(test, ctx, w, nr, twk_cb_pass);
	unsigned int i, passes, largest, bad = 0;
	ktime_t t0, until;
	struct twheel_stats st;
	int ret[32];

	local_bh_disable();
	t0 = ktime_get();
	for (i = 0; i < nr; i++) {
		p[i].want = t0 + div_u64(i * 3 * span, 2 * nr);
		if (i == nr / 2)
			p[i].want = t0 + span;		/* exactly one span ahead */
		ret[i] = twheel_timer_start(&p[i].timer, p[i].want, 0, TWHEEL_MODE_ABS);
	}
	until = t0 + 3 * span;
	while (ktime_get() < until)
		cpu_relax();
	local_bh_enable();

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, ret[i], 0);
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, nr, TWK_TIMEOUT_MS),
			      "%d of %u fired", atomic_read(&ctx->fired), nr);
	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
	for (i = 0; i < nr; i++)
		if (atomic_read(&p[i].fires) != 1 || p[i].fired_at < p[i].want)
			bad++;
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);

	st = twk_stats(w);
	passes = twk_passes(test, p, nr, &largest);
	kunit_info(test, "budget %u: %u handler runs, %llu wakeups, %llu late\n",
		   lp->budget, passes, st.wakeups, st.late);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)nr);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	/* The hrtimer was late by > 1 tick for the early timers. */
	KUNIT_EXPECT_GT(test, st.late, 0ULL);
	KUNIT_EXPECT_LE(test, largest, lp->budget);
	if (lp->budget >= nr) {
		/* One late handler run caught up with all of them. */
		KUNIT_EXPECT_EQ(test, passes, 1U);
		KUNIT_EXPECT_EQ(test, st.wakeups, 1ULL);
	} else {
		KUNIT_EXPECT_GE(test, passes, nr / lp->budget);
	}
}

/* How long the slow callbacks of the long-callback case take, in ticks. */
#define TWK_SLOW_TICKS		8

/*
 * As twk_cb_pass, and a callback that takes long: it busy-waits @limit ns
 * in softirq context, measured on the wheel's clock (mdelay() is not
 * calibrated well enough under TCG to promise that).  It also counts in
 * ctx->errors any other callback of the wheel that runs at the same time
 * (they must never overlap).
 */
static void twk_cb_slow(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_ctx *ctx = p->ctx;

	if (atomic_inc_return(&ctx->order) != 1)
		atomic_inc(&ctx->errors);
	p->data = twk_wakeups(ctx->wheel);
	p->entered = ktime_get();
	while (ktime_get() < p->entered + (ktime_t)p->limit)
		cpu_relax();
	atomic_dec(&ctx->order);
	twk_record(p);
}

/*
 * Callbacks that take long: 64 timers are due in one tick and every 16th
 * of them busy-waits TWK_SLOW_TICKS ticks; 32 more fall due one tick apart
 * during and after that stretch, and 8 lie five revolutions out.  With a
 * budget of 8 the handler must hand over to fresh softirq passes (at most
 * 8 callbacks per pass, never two at once) and catch up over the ticks that
 * passed meanwhile: every timer fires once, none early, and a timer armed
 * afterwards fires as well.  A soft lockup or an RCU stall would show on
 * the console, which fails the run.  "Never two at once" is the promise of
 * a single-base instance (TWHEEL_CREATE_SINGLE_BASE): with per-CPU bases
 * it holds per timer only, and this thread may arm from two CPUs.
 */
static void twheel_tick_long_callback_delays_without_loss(struct kunit *test)
{
	const u64 tick = TWK_MS;
	const unsigned int bits = 4, budget = 8;
	const unsigned int nr_due = 64, nr_later = 32, nr_far = 8;
	const unsigned int nr = nr_due + nr_later + nr_far;
	const u64 span = tick << bits;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_single(test, ctx, tick, bits, budget);
	struct twk_probe *p = twk_probes(test, ctx, w, nr + 1, twk_cb_slow);
	unsigned int i, passes, largest, slow = 0, bad = 0;
	struct twk_probe *after = &p[nr];
	struct twheel_stats st;
	ktime_t e;

	e = ktime_get() + 20 * tick;
	for (i = 0; i < nr; i++) {
		if (i < nr_due) {
			p[i].want = e;
			if (!(i % 16)) {
				p[i].limit = TWK_SLOW_TICKS * tick;
				slow++;
			}
		} else if (i < nr_due + nr_later) {
			p[i].want = e + (i - nr_due + 1) * tick;
		} else {
			p[i].want = e + 5 * span + (i - nr_due - nr_later) * tick;
		}
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[i].timer, p[i].want, 0,
							 TWHEEL_MODE_ABS), 0);
	}
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, nr, TWK_TIMEOUT_MS),
			      "%d of %u fired", atomic_read(&ctx->fired), nr);

	/* The wheel keeps going: a timer armed now fires, not early. */
	after->want = ktime_get() + 2 * tick;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&after->timer, after->want, 0,
						 TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, nr + 1, TWK_TIMEOUT_MS));

	for (i = 0; i <= nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
	for (i = 0; i <= nr; i++)
		if (atomic_read(&p[i].fires) != 1 || p[i].fired_at < p[i].want)
			bad++;
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&ctx->errors), 0,
			    "callbacks of one wheel ran concurrently");

	st = twk_stats(w);
	passes = twk_passes(test, p, nr + 1, &largest);
	kunit_info(test, "%u slow callbacks of %u ticks: %u timers in %u handler runs (largest %u), %llu wakeups, %llu late\n",
		   slow, TWK_SLOW_TICKS, nr + 1, passes, largest, st.wakeups, st.late);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)nr + 1);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	KUNIT_EXPECT_LE(test, largest, budget);
	KUNIT_EXPECT_GE(test, passes, (nr + 1) / budget);
	/* The timers due during the slow callbacks were caught up, late. */
	KUNIT_EXPECT_GT(test, st.late, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* next_expiry                                                              */
/* ------------------------------------------------------------------------ */

static void twheel_next_expiry_empty_wheel_ktime_max(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);

	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, 0), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, ktime_get()), KTIME_MAX);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, NSEC_PER_SEC, 0, TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_NE(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
}

#define TWK_NEXT_MAX	4

struct twk_next_param {
	const char *name;
	unsigned int nr;
	u32 off[TWK_NEXT_MAX];	/* ticks after the base; wheel of 16 slots */
	u32 slack_ticks;
};

static const struct twk_next_param twk_next_params[] = {
	{ "one_timer", 1, { 0 }, 0 },
	{ "earliest_of_three", 3, { 40, 7, 23 }, 0 },
	{ "same_slot_later_revolution_first", 2, { 2 * 16 + 3, 3 }, 0 },
	{ "earlier_slot_later_revolution", 2, { 2 * 16 + 1, 9 }, 0 },
	{ "only_later_revolutions", 2, { 5 * 16 + 2, 3 * 16 + 5 }, 0 },
	{ "exact_span_multiples", 3, { 48, 16, 32 }, 0 },
	{ "every_slot_of_a_revolution_later", 4, { 16 + 15, 16 + 1, 16 + 8, 2 * 16 }, 0 },
	{ "with_slack", 2, { 10, 30 }, 4 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_next);

/*
 * next_expiry(bound) is the end of the earliest timer's tick, if that tick
 * starts no later than @bound.  Ticks are half-open [n - T, n), so the
 * answer flips exactly between bound = n - T and bound = n - T - 1.  The
 * timers are 2 s out, far enough not to fire while the case runs.
 */
static void twheel_next_expiry_reports_earliest_within_bound(struct kunit *test)
{
	const struct twk_next_param *np = test->param_value;
	const u64 tick = TWK_MS, slack = np->slack_ticks * tick;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, np->nr, twk_cb_record);
	ktime_t base = ktime_get() + 2 * NSEC_PER_SEC, min = KTIME_MAX, n;
	unsigned int i;

	for (i = 0; i < np->nr; i++) {
		ktime_t e = base + (ktime_t)np->off[i] * (ktime_t)tick;

		min = min(min, e);
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[i].timer, e, slack,
							 TWHEEL_MODE_ABS), 0);
	}
	n = twheel_next_expiry(w, KTIME_MAX);
	KUNIT_EXPECT_GT(test, n, min);
	KUNIT_EXPECT_LE(test, n, min + (ktime_t)(slack + tick));
	/* bounds inside and just before the tick */
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, n - 1), n);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, n - (ktime_t)tick), n);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, n - (ktime_t)tick - 1), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, ktime_get()), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, 0), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, base + 100 * NSEC_PER_SEC), n);
	for (i = 0; i < np->nr; i++)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[i].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), 0);
}

/* ------------------------------------------------------------------------ */
/* Tickless operation                                                       */
/* ------------------------------------------------------------------------ */

static void twheel_tick_armed_empty_wheel_no_wakeups(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 1, twk_cb_record);
	u64 wk, w1;
	bool armed;
	int ret;

	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
	/* 100 ticks of an empty wheel: not one wakeup. */
	ret = read_poll_timeout(twk_wakeups, wk, wk != 0, 2000, 100 * USEC_PER_MSEC,
				false, w);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, wk, 0ULL);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));

	/* Softirqs off: the handler cannot run between the arm and the check. */
	local_bh_disable();
	ret = twheel_timer_start(&p->timer, 2 * tick, 0, TWHEEL_MODE_REL);
	armed = twheel_tick_armed(w);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_TRUE(test, armed);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	/* Empty again: the handler lets the hrtimer go idle. */
	ret = read_poll_timeout(twheel_tick_armed, armed, !armed, 1000,
				TWK_TIMEOUT_MS * USEC_PER_MSEC, false, w);
	KUNIT_EXPECT_EQ(test, ret, 0);
	w1 = twk_wakeups(w);
	KUNIT_EXPECT_GE(test, w1, 1ULL);
	ret = read_poll_timeout(twk_wakeups, wk, wk != w1, 2000, 100 * USEC_PER_MSEC,
				false, w);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
	kunit_info(test, "empty wheel: %llu wakeups over 2 x 100 ms (1 for the timer)\n", wk);
}

struct twk_tickless_param {
	const char *name;
	u64 tick_ns;
	unsigned int bits;
	unsigned int window_ms;
};

static const struct twk_tickless_param twk_tickless_params[] = {
	{ "tick1ms_bits4", 1 * TWK_MS, 4, 320 },
	{ "tick250us_bits6", 250 * TWK_US, 6, 256 },
	{ "tick100us_bits4", 100 * TWK_US, 4, 160 },
	{ "tick1ms_bits12_default", 1 * TWK_MS, 12, 320 },
};

TWK_ARRAY_PARAM_BY_NAME(twk_tickless);

/*
 * One timer 10 s out.  Once a near timer has fired, the handler programs
 * the hrtimer for the far timer's own tick (its slot's key bound), not for
 * its slot in every revolution and not for every tick: no wakeup at all in
 * the window, however many revolutions it spans (the small wheels span
 * tens).  The window is a measurement interval (its real length is
 * measured); one wakeup is allowed for a handler pass already under way.
 */
static void twheel_tick_far_timer_sleeps_until_due(struct kunit *test)
{
	const struct twk_tickless_param *tp = test->param_value;
	const u64 span = tp->tick_ns << tp->bits;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tp->tick_ns, tp->bits, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_record);
	u64 w0, w1, revs, ticks, elapsed;
	ktime_t t0, t1;
	bool armed;

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[1].timer, 3 * tp->tick_ns, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);

	t0 = ktime_get();
	w0 = twk_wakeups(w);
	msleep(tp->window_ms);		/* measurement window, see above */
	w1 = twk_wakeups(w);
	t1 = ktime_get();

	elapsed = t1 - t0;
	revs = div64_u64(elapsed, span);
	ticks = div64_u64(elapsed, tp->tick_ns);
	kunit_info(test, "%llu wakeups in %llu ms = %llu ticks, %llu revolutions (%llu wakeups/s)\n",
		   w1 - w0, div_u64(elapsed, TWK_MS), ticks, revs,
		   div64_u64((w1 - w0) * NSEC_PER_SEC, max_t(u64, elapsed, 1)));
	KUNIT_EXPECT_LE(test, w1 - w0, 1ULL);

	KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&p[0].timer));
	KUNIT_EXPECT_EQ(test, atomic_read(&p[0].fires), 0);
	KUNIT_EXPECT_TRUE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[0].timer), 1);
	KUNIT_EXPECT_EQ(test, read_poll_timeout(twheel_tick_armed, armed, !armed, 1000,
						TWK_TIMEOUT_MS * USEC_PER_MSEC, false, w), 0);
}

/*
 * Arming on a base that stood empty for revolutions: the tick handler last
 * set the engine's clock when the base was created, and arming moves it on
 * to the present (twheel_forward()), so on the hierarchical engine timers
 * due within a revolution go to level 0 and fire without a cascade.
 * Placed by the stale clock, the eight timers below would sit on an upper
 * level, in at most two slots, and the first slot's cascade would move
 * the ones not yet due.  The other engines have no cascades (the Lawn
 * counts other moves): for them the case checks that the timers still
 * fire once each, never early.
 */
struct twk_fwd_param {
	const char *name;
	enum twheel_engine engine;
	bool batch;	/* armed with twheel_batch_arm(), else twheel_timer_start() */
};

static const struct twk_fwd_param twk_fwd_params[] = {
	{ "hier_timer_start", TWHEEL_ENGINE_HIER, false },
	{ "hier_batch_arm", TWHEEL_ENGINE_HIER, true },
	{ "scheme6_timer_start", TWHEEL_ENGINE_SCHEME6, false },
	{ "lawn_batch_arm", TWHEEL_ENGINE_LAWN, true },
};

TWK_ARRAY_PARAM_BY_NAME(twk_fwd);

static void twheel_timer_start_idle_base_no_cascade(struct kunit *test)
{
	enum { NR = 8 };
	const struct twk_fwd_param *fp = test->param_value;
	const u64 tick = TWK_MS, rev = 16 * tick;	/* 2^4 slots */
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick, 4, 64, TWHEEL_CREATE_SINGLE_BASE, fp->engine });
	struct twk_probe *p = twk_probes(test, ctx, w, NR, twk_cb_record);
	struct twheel_batch_lock bl;
	ktime_t idle_end, t0;
	int ret[NR], i;

	/* The time that must pass for the test to mean anything, not a sync. */
	idle_end = ktime_get() + 3 * rev;
	while (ktime_get() < idle_end)
		usleep_range(1000, 2000);

	t0 = ktime_get();
	for (i = 0; i < NR; i++)
		p[i].want = t0 + (5 + i) * tick;
	if (fp->batch)
		twheel_batch_begin(w, &bl);
	/*
	 * Absolute: the clock moves on once, at the first arm; however long
	 * the others take, every key stays within 12 ticks of it.
	 */
	for (i = 0; i < NR; i++)
		ret[i] = fp->batch ?
			twheel_batch_arm(&bl, &p[i].timer, p[i].want, 0,
					 TWHEEL_MODE_ABS) :
			twheel_timer_start(&p[i].timer, p[i].want, 0,
					   TWHEEL_MODE_ABS);
	if (fp->batch)
		twheel_batch_end(&bl);
	twk_expect_each_fired_once(test, ctx, p, ret, NR);
	if (fp->engine == TWHEEL_ENGINE_HIER)
		KUNIT_EXPECT_EQ(test, twk_stats(w).moves, 0ULL);
}

static void twheel_tick_disarmed_after_last_cancel(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 3, twk_cb_record);
	u64 wk, w0;
	bool armed;
	int ret;

	KUNIT_EXPECT_FALSE(test, twheel_tick_armed(w));
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[1].timer, 20 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[2].timer, 20 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_TRUE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[0].timer), 1);
	KUNIT_EXPECT_TRUE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[1].timer), 1);
	KUNIT_EXPECT_TRUE(test, twheel_tick_armed(w));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[2].timer), 1);
	/* Bounded wait: a handler run in progress may still hold it active. */
	ret = read_poll_timeout(twheel_tick_armed, armed, !armed, 1000,
				TWK_TIMEOUT_MS * USEC_PER_MSEC, false, w);
	KUNIT_EXPECT_EQ(test, ret, 0);
	w0 = twk_wakeups(w);
	ret = read_poll_timeout(twk_wakeups, wk, wk != w0, 2000, 50 * USEC_PER_MSEC,
				false, w);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
}

/* Of two same-tick callbacks the first starts a far timer, the second cancels it. */
static void twk_cb_start_then_cancel_far(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	if (atomic_inc_return(&p->ctx->order) == 1) {
		p->ret = twheel_timer_start(&p->peer->timer, 10 * NSEC_PER_SEC, 0,
					    TWHEEL_MODE_REL);
		p->data = 1;
	} else {
		p->ret = twheel_timer_cancel(&p->peer->timer);
		p->data = 2;
	}
	twk_record(p);
}

/*
 * Within one handler run, a callback starts a timer 10 s out (the wheel's
 * hrtimer gets programmed for it) and a later callback cancels it: the
 * wheel is empty again, so once that handler run is over the hrtimer must
 * be idle, not left queued for a wakeup 10 s later.
 */
static void twheel_tick_disarmed_after_cancel_from_callback(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 2, twk_cb_start_then_cancel_far);
	struct twk_probe *far = twk_probes(test, ctx, w, 1, twk_cb_record);
	struct twk_probe *starter, *canceller;
	ktime_t e = ktime_get() + 5 * TWK_MS;
	u64 wk, w0;
	bool armed;
	int r0, r1, ret;

	p[0].peer = far;
	p[1].peer = far;
	/* Softirqs off: both are armed before either can fire. */
	local_bh_disable();
	r0 = twheel_timer_start(&p[0].timer, e, 0, TWHEEL_MODE_ABS);
	r1 = twheel_timer_start(&p[1].timer, e, 0, TWHEEL_MODE_ABS);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, r0, 0);
	KUNIT_ASSERT_EQ(test, r1, 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);

	starter = p[0].data == 1 ? &p[0] : &p[1];
	canceller = starter == &p[0] ? &p[1] : &p[0];
	KUNIT_EXPECT_EQ(test, starter->ret, 0);
	KUNIT_EXPECT_EQ(test, canceller->ret, 1);
	KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&far->timer));
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);

	/* Bounded wait for that handler run to return; 1 s << 10 s. */
	ret = read_poll_timeout(twheel_tick_armed, armed, !armed, 1000,
				USEC_PER_SEC, false, w);
	KUNIT_EXPECT_EQ_MSG(test, ret, 0, "hrtimer still armed on an empty wheel");
	w0 = twk_wakeups(w);
	ret = read_poll_timeout(twk_wakeups, wk, wk != w0, 2000, 50 * USEC_PER_MSEC,
				false, w);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&far->fires), 0);
}

/* ------------------------------------------------------------------------ */
/* Statistics                                                               */
/* ------------------------------------------------------------------------ */

static void twheel_get_stats_counts_armed_fired_cancelled(struct kunit *test)
{
	const u64 tick = TWK_MS;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 5, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, 3, twk_cb_record);
	struct twheel_stats st = twk_stats(w);

	KUNIT_EXPECT_EQ(test, st.armed, 0ULL);
	KUNIT_EXPECT_EQ(test, st.fired, 0ULL);
	KUNIT_EXPECT_EQ(test, st.cancelled, 0ULL);
	KUNIT_EXPECT_EQ(test, st.late, 0ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	KUNIT_EXPECT_EQ(test, st.tick_ns, tick);
	KUNIT_EXPECT_EQ(test, st.slots, 32ULL);

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[0].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[1].timer, 10 * NSEC_PER_SEC, 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[2].timer, 2 * tick, 0, TWHEEL_MODE_REL), 0);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.armed, 3ULL);
	/* p[2] may have fired, and is counted once either way */
	KUNIT_EXPECT_EQ(test, st.pending + st.fired, 3ULL);

	/* modify of a pending timer is not a new arm */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p[0].timer, 11 * NSEC_PER_SEC, 0,
						  TWHEEL_MODE_REL), 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, 3ULL);
	/* cancel counts once */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[1].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[1].timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 1ULL);

	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[2].timer), 0);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.fired, 1ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 1ULL);
	KUNIT_EXPECT_EQ(test, st.cancelled, 1ULL);
	KUNIT_EXPECT_GE(test, st.max_slot, 1ULL);
	KUNIT_EXPECT_GE(test, st.wakeups, 1ULL);

	/* modify of an idle timer is an arm */
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p[2].timer, 10 * NSEC_PER_SEC, 0,
						  TWHEEL_MODE_REL), 0);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.armed, 4ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 2ULL);

	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[2].timer), 1);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.cancelled, 3ULL);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	/* every arm ended in exactly one fire or cancel */
	KUNIT_EXPECT_EQ(test, st.armed, st.fired + st.cancelled + st.pending);
}

/* The first of two same-tick callbacks snapshots the counters. */
static void twk_cb_stats_first(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	struct twk_ctx *ctx = p->ctx;

	if (atomic_inc_return(&ctx->order) == 1) {
		twheel_get_stats(ctx->wheel, ctx->priv);
		p->ret = twheel_timer_pending(&p->peer->timer);
		p->data = 1;
	}
	twk_record(p);
}

/*
 * Two timers due in the same tick are handed out together; while the
 * first callback runs, the second waits on the expired list and, as
 * documented, still counts as pending (twheel_timer_pending() says so).
 * A snapshot taken there must count it too: every arm is then fired,
 * cancelled or pending, armed == fired + cancelled + pending.
 */
static void twheel_get_stats_pending_counts_due_timers(struct kunit *test)
{
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel_stats *snap = kunit_kzalloc(test, sizeof(*snap), GFP_KERNEL);
	struct twheel *w;
	struct twk_probe *p, *taker;
	ktime_t e = ktime_get() + 5 * TWK_MS;
	int r0, r1;

	KUNIT_ASSERT_NOT_NULL(test, snap);
	ctx->priv = snap;
	w = twk_wheel(test, ctx, TWK_MS, 4, 64);
	p = twk_probes(test, ctx, w, 2, twk_cb_stats_first);
	p[0].peer = &p[1];
	p[1].peer = &p[0];
	/* Softirqs off: neither can fire before both are armed. */
	local_bh_disable();
	r0 = twheel_timer_start(&p[0].timer, e, 0, TWHEEL_MODE_ABS);
	r1 = twheel_timer_start(&p[1].timer, e, 0, TWHEEL_MODE_ABS);
	local_bh_enable();
	KUNIT_ASSERT_EQ(test, r0, 0);
	KUNIT_ASSERT_EQ(test, r1, 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 2, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[0].timer), 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[1].timer), 0);

	taker = p[0].data ? &p[0] : &p[1];
	/* the other one was pending when the snapshot was taken */
	KUNIT_EXPECT_EQ(test, taker->ret, 1);
	KUNIT_EXPECT_EQ(test, snap->armed, 2ULL);
	KUNIT_EXPECT_EQ(test, snap->fired, 1ULL);
	KUNIT_EXPECT_EQ(test, snap->cancelled, 0ULL);
	KUNIT_EXPECT_EQ(test, snap->pending, 1ULL);
	KUNIT_EXPECT_EQ(test, snap->armed, snap->fired + snap->cancelled + snap->pending);
	KUNIT_EXPECT_EQ(test, twk_stats(w).fired, 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* Concurrency stress                                                       */
/* ------------------------------------------------------------------------ */

#define TWK_STRESS_TIMERS	64
#define TWK_STRESS_ITERS	20000

/**
 * struct twk_stress - state shared by the stress threads
 * @p:        the timers
 * @tick_ns:  tick of the wheel
 * @errors:   return values outside the documented ones
 * @running:  threads still looping
 * @done:     completed by the last thread to finish
 * @deadline: threads stop early past this time
 * @seed:     base seed
 */
struct twk_stress {
	struct twk_probe *p;
	u64 tick_ns;
	atomic_t errors;
	atomic_t running;
	struct completion done;
	ktime_t deadline;
	u32 seed;
};

struct twk_stress_arg {
	struct twk_stress *s;
	unsigned int idx;
};

/* Counts only: with concurrent modifies the expiry may change under it. */
static void twk_cb_count(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	atomic_inc_return(&p->fires);
	atomic_inc_return(&p->ctx->fired);
}

static int twk_stress_thread(void *data)
{
	struct twk_stress_arg *a = data;
	struct twk_stress *s = a->s;
	u64 tick = s->tick_ns;
	struct rnd_state rs;
	unsigned int i;

	prandom_seed_state(&rs, ((u64)s->seed << 32) | a->idx);
	for (i = 0; i < TWK_STRESS_ITERS && !kthread_should_stop(); i++) {
		struct twk_probe *p = &s->p[twk_rand(&rs, TWK_STRESS_TIMERS)];
		u32 op = twk_rand(&rs, 100);
		u64 slack = twk_rand(&rs, 2 * tick);
		ktime_t exp = twk_rand(&rs, 4 * tick);
		enum twheel_mode mode = TWHEEL_MODE_REL;
		int ret;

		if (prandom_u32_state(&rs) & 1) {
			mode = TWHEEL_MODE_ABS;
			exp = max_t(ktime_t, ktime_get() + exp - 2 * (ktime_t)tick, 0);
		}
		if (op < 35) {
			ret = twheel_timer_start(&p->timer, exp, slack, mode);
			if (!ret)
				atomic_inc(&p->arms);
			else if (ret != -EBUSY)
				atomic_inc(&s->errors);
		} else if (op < 70) {
			ret = twheel_timer_modify(&p->timer, exp, slack, mode);
			if (!ret)
				atomic_inc(&p->arms);
			else if (ret != 1)
				atomic_inc(&s->errors);
		} else {
			if (op < 90)
				ret = twheel_timer_cancel(&p->timer);
			else
				ret = twheel_timer_cancel_sync(&p->timer);
			if (ret == 1)
				atomic_inc(&p->cancels);
			else if (ret)
				atomic_inc(&s->errors);
		}
		if (!(i % 64)) {
			cond_resched();
			if (ktime_get() > s->deadline)
				break;
		}
	}
	if (atomic_dec_and_test(&s->running))
		complete(&s->done);
	twk_idle_until_stop();
	return 0;
}

/*
 * Two threads per online CPU (at least four) do random start / modify /
 * cancel / cancel_sync on 64 shared timers with expiries within a few
 * ticks, while the wheel fires them.  Each timer counts its callbacks, and
 * the threads count the documented transitions from the return values:
 * an arm from idle (start or modify returning 0) and a cancel of a pending
 * timer (returning 1).  After quiescing, every arm must have ended in
 * exactly one fire or one cancel, per timer, and the wheel's counters must
 * agree with those sums.
 */
static void twheel_timer_ops_concurrent_stress_accounting(struct kunit *test)
{
	const u64 tick = 200 * TWK_US;
	unsigned int nthreads = max(2 * num_online_cpus(), 4U), i, cpu, mismatch = 0;
	u64 arms = 0, fires = 0, cancels = 0;
	struct twk_stress_arg *args;
	struct twk_threads *threads;
	struct twheel_stats st;
	struct twk_stress *s;
	struct twk_ctx *ctx;
	unsigned long left;
	struct twheel *w;
	int ret;

	ctx = twk_ctx_new(test);
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	args = kunit_kcalloc(test, nthreads, sizeof(*args), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, args);
	init_completion(&s->done);
	s->tick_ns = tick;
	s->seed = 0x57e55;
	atomic_set(&s->running, nthreads);
	w = twk_wheel(test, ctx, tick, 4, 8);
	s->p = twk_probes(test, ctx, w, TWK_STRESS_TIMERS, twk_cb_count);
	threads = twk_threads(test, nthreads);
	s->deadline = ktime_get() + 3 * NSEC_PER_SEC;

	cpu = cpumask_first(cpu_online_mask);
	for (i = 0; i < nthreads; i++) {
		args[i].s = s;
		args[i].idx = i;
		twk_thread_create(test, threads, i, cpu, twk_stress_thread, &args[i]);
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
	}
	for (i = 0; i < nthreads; i++)
		wake_up_process(threads->tasks[i]);
	left = wait_for_completion_timeout(&s->done, msecs_to_jiffies(4 * TWK_TIMEOUT_MS));
	KUNIT_ASSERT_NE_MSG(test, left, 0UL, "stress threads did not finish");

	/* Quiesce: the threads idle; take every timer off the wheel. */
	for (i = 0; i < TWK_STRESS_TIMERS; i++) {
		ret = twheel_timer_cancel_sync(&s->p[i].timer);
		if (ret == 1)
			atomic_inc(&s->p[i].cancels);
		KUNIT_EXPECT_TRUE(test, ret == 0 || ret == 1);
	}
	for (i = 0; i < TWK_STRESS_TIMERS; i++) {
		struct twk_probe *p = &s->p[i];
		int a = atomic_read(&p->arms), f = atomic_read(&p->fires);
		int c = atomic_read(&p->cancels);

		if (a != f + c) {
			if (!mismatch)
				kunit_info(test, "timer %u: %d arms, %d fires, %d cancels\n",
					   i, a, f, c);
			mismatch++;
		}
		arms += a;
		fires += f;
		cancels += c;
	}
	st = twk_stats(w);
	kunit_info(test, "%u threads: %llu arms, %llu fires, %llu cancels, %llu wakeups, max slot %llu\n",
		   nthreads, arms, fires, cancels, st.wakeups, st.max_slot);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->errors), 0);
	KUNIT_EXPECT_EQ(test, mismatch, 0U);
	KUNIT_EXPECT_EQ(test, st.armed, arms);
	KUNIT_EXPECT_EQ(test, st.fired, fires);
	KUNIT_EXPECT_EQ(test, st.cancelled, cancels);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	KUNIT_EXPECT_EQ(test, (u64)atomic_read(&ctx->fired), fires);
	/* the mix really exercised both ways out */
	KUNIT_EXPECT_GT(test, fires, 0ULL);
	KUNIT_EXPECT_GT(test, cancels, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* The module's default wheel                                               */
/* ------------------------------------------------------------------------ */

static void twheel_default_runs_timer(struct kunit *test)
{
	struct twheel *w = twheel_default();
	struct twheel_stats st;
	struct twk_ctx *ctx;
	struct twk_probe *p;

	KUNIT_ASSERT_NOT_NULL(test, w);
	st = twk_stats(w);
	KUNIT_EXPECT_GE(test, st.tick_ns, TWHEEL_TICK_NS_MIN);
	KUNIT_EXPECT_LE(test, st.tick_ns, TWHEEL_TICK_NS_MAX);
	KUNIT_EXPECT_GE(test, st.slots, 1ULL << TWHEEL_BITS_MIN);
	KUNIT_EXPECT_LE(test, st.slots, 1ULL << TWHEEL_BITS_MAX);

	ctx = twk_ctx_new(test);
	p = twk_probes(test, ctx, w, 1, twk_cb_record);
	p->want = ktime_get() + 2 * st.tick_ns;
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&p->timer, p->want, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1,
					       TWK_TIMEOUT_MS + div_u64(2 * st.tick_ns, TWK_MS)));
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_GE(test, p->fired_at, p->want);
}

/* ------------------------------------------------------------------------ */
/* Per-CPU bases (suite twheel_smp)                                         */
/* ------------------------------------------------------------------------ */

/*
 * The cases below need two online CPUs, A and B; they run code on a chosen
 * CPU with smp_call_on_cpu() (a kworker bound to it, process context, and
 * the caller waits for it) or in helper kthreads bound to it.
 */
/* wait_for_completion_timeout() in ms: the jiffies left, 0 on timeout. */
static unsigned long twk_wait_done(struct completion *done, unsigned int ms)
{
	return wait_for_completion_timeout(done, msecs_to_jiffies(ms));
}

static void twk_two_cpus(struct kunit *test, unsigned int *a, unsigned int *b)
{
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	*a = cpumask_first(cpu_online_mask);
	*b = cpumask_next(*a, cpu_online_mask);
}

/* One CPU's base's counters; every field U64_MAX if there is none. */
static struct twheel_stats twk_cpu_stats(struct twheel *w, unsigned int cpu)
{
	struct twheel_stats st;

	if (twheel_get_cpu_stats(w, cpu, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

/* A timer armed with twk_on_cpu(): what to do and what it returned. */
struct twk_call {
	struct twk_probe *p;
	ktime_t expires;
	int op;			/* 0 start, 1 modify, 2 cancel, 3 cancel_sync */
	int ret;
};

static int twk_call_fn(void *data)
{
	struct twk_call *c = data;
	struct twheel_timer *t = &c->p->timer;

	switch (c->op) {
	case 0:
		c->ret = twheel_timer_start(t, c->expires, 0, TWHEEL_MODE_ABS);
		break;
	case 1:
		c->ret = twheel_timer_modify(t, c->expires, 0, TWHEEL_MODE_ABS);
		break;
	case 2:
		c->ret = twheel_timer_cancel(t);
		break;
	default:
		c->ret = twheel_timer_cancel_sync(t);
		break;
	}
	return 0;
}

/* Run @op on @p's timer on @cpu and return what it returned. */
static int twk_on_cpu(struct kunit *test, unsigned int cpu,
		      struct twk_probe *p, int op, ktime_t expires)
{
	struct twk_call c = { .p = p, .expires = expires, .op = op };

	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(cpu, twk_call_fn, &c, false), 0);
	return c.ret;
}

/* As twk_cb_record, and which CPU ran the callback (in @data). */
static void twk_cb_cpu(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->data = raw_smp_processor_id();
	twk_record(p);
}

/* A 16-slot wheel with budget 64 and @flags, destroyed after the case. */
static struct twheel *twk_wheel_flags(struct kunit *test, struct twk_ctx *ctx,
				      u64 tick_ns, unsigned int flags)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, 4, 64, flags });
}

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
	KUNIT_EXPECT_EQ(test, st.bases, (u64)num_possible_cpus());
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
		KUNIT_EXPECT_EQ_MSG(test, twk_cpu_stats(w, cpu).pending, 1ULL, "cpu%u", cpu);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, (u64)n);
	/* Cancelled from whichever CPU this thread is on: one lock each. */
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[cpu].timer), 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
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
		KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, cpu).fired, 1ULL);
	}
	KUNIT_EXPECT_EQ(test, twk_stats(w).migrated, 0ULL);
}

/* For read_poll_timeout(), which wants a function. */
static u64 twk_cpu_wakeups(struct twheel *w, unsigned int cpu)
{
	return twk_cpu_stats(w, cpu).wakeups;
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
	wa = twk_cpu_stats(w, a).wakeups;
	KUNIT_EXPECT_GE(test, wa, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).wakeups, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 4ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).pending, 0ULL);
	/* A's base may still wake once for the last expiry; then it sleeps. */
	ret = read_poll_timeout(twk_cpu_wakeups, wk, wk > wa + 1, 2000,
				100 * USEC_PER_MSEC, false, w, a);
	KUNIT_EXPECT_EQ(test, ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).wakeups, 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 1ULL);
	/* Still far out, so that it cannot have fired when we look. */
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, p, 1,
					 ktime_get() + 20 * NSEC_PER_SEC), 1);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, on).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, on == a ? b : a).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).migrated, mp->moves ? 1ULL : 0ULL);
	/* Brought near from B again: the same rule keeps it on @on. */
	p->want = ktime_get() + 5 * tick;
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, b, p, 1, p->want), 1);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, (u64)on);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, on).fired, 1ULL);
	KUNIT_EXPECT_GE(test, p->fired_at, p->want);

	/* Idle now: armed from B. */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
	KUNIT_ASSERT_EQ(test, twk_on_cpu(test, b, p, 0,
					 ktime_get() + 10 * NSEC_PER_SEC), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, on2).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_on_cpu(test, a, p, 3, 0), 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
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
	m->pend_a = twk_cpu_stats(m->p->ctx->wheel, m->a).pending;
	m->pend_b = twk_cpu_stats(m->p->ctx->wheel, m->b).pending;
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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).fired, 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).migrated, 0ULL);
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
 * @in_window: A saw the timer unlinked while B's modify ran
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
	/* B's modify detached the timer and has not linked it again yet. */
	while (atomic_read(&r->calling) == 1 && ktime_get() < deadline) {
		if (!twheel_timer_pending(&r->p->timer)) {
			r->in_window = true;
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
	hits0 = twheel_delay_hits(TWHEEL_DELAY_MIGRATE);

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
		r->a_ret = 0;
		r->b_ret = 0;
		atomic_set(&r->a_ready, 0);
		atomic_set(&r->calling, 0);
		atomic_set(&r->left, 2);
		init_completion(&r->done);
		st0 = twk_stats(w);
		moved0 = twk_cpu_stats(w, a).migrated;
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
				KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 1ULL);
			KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&r->p->timer), 1);
		}
		KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
		KUNIT_EXPECT_EQ(test, st.armed - st0.armed, 1ULL);
		/*
		 * A's take linked the timer on B's base first, then moved it,
		 * pending, to A's: counted migrated there.  Taken for an idle
		 * timer, it would have been moved in transit and counted not.
		 */
		if (r->op == 4 && r->in_window)
			KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).migrated - moved0, 1ULL);
		if (r->in_window)
			break;
		msleep(100);
	}
	twk_set_migrate_delay(0);

	kunit_info(test, "A in the window: %d (attempt %u; B's modify %lld us, A saw %d, %u delays)\n",
		   r->in_window, min(k + 1, attempts), r->b_us, r->a_saw,
		   twheel_delay_hits(TWHEEL_DELAY_MIGRATE) - hits0);
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
			KUNIT_ASSERT_FAILURE(test, "armed after the expiry 4 times");
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
		KUNIT_EXPECT_EQ(test, twk_stats(w).bases, 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).pending, (u64)nr + 1);

	ret = remove_cpu(b);
	KUNIT_ASSERT_EQ_MSG(test, ret, 0, "remove_cpu(%u)", b);
	t_off = ktime_get();
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).pending, 0ULL);
	/* At least the far ones moved; the near ones, unless they fired. */
	KUNIT_EXPECT_GE(test, twk_stats(w).migrated, (u64)TWK_HP_FAR);
	kunit_info(test, "cpu%u offline: %llu timers moved, %d fired before\n",
		   b, twk_stats(w).migrated, atomic_read(&ctx->fired));

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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[nr + 1].timer), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->fired), TWK_HP_NEAR + 1);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
}
#else
static void twheel_cpu_offline_moves_pending_timers(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_HOTPLUG_CPU");
}
#endif

/* ------------------------------------------------------------------------ */
/* Per-CPU bases under load (suite twheel_smp_stress)                       */
/* ------------------------------------------------------------------------ */

#define TWK_XC_TIMERS	256

/**
 * struct twk_xc - the cross-CPU model check
 * @p:       TWK_XC_TIMERS timers per CPU thread, p[i * TWK_XC_TIMERS + j]
 * @armed:   per timer, the CPU that armed it + 1 (0: not yet)
 * @cret:    per timer, what the other thread's cancel returned (-1: none)
 * @nthreads: threads, one per CPU
 * @seed:    base seed
 * @errors:  unexpected return values
 * @left:    threads still running
 * @done:    completed by the last thread
 */
struct twk_xc {
	struct twk_probe *p;
	atomic_t *armed;
	int *cret;
	unsigned int nthreads;
	u32 seed;
	atomic_t errors;
	atomic_t left;
	struct completion done;
};

struct twk_xc_arg {
	struct twk_xc *x;
	unsigned int idx;
	unsigned int cpu;
};

static int twk_xc_thread(void *data)
{
	struct twk_xc_arg *arg = data;
	struct twk_xc *x = arg->x;
	unsigned int me = arg->idx, other = (me + 1) % x->nthreads, j;
	u64 tick = x->p[0].ctx->tick_ns;
	struct rnd_state rs;

	prandom_seed_state(&rs, ((u64)x->seed << 32) | me);
	for (j = 0; j < TWK_XC_TIMERS; j++) {
		struct twk_probe *mine = &x->p[me * TWK_XC_TIMERS + j];
		unsigned int o = other * TWK_XC_TIMERS + j;
		ktime_t deadline;

		/* Arm my j-th timer on this CPU, 0..20 ticks out. */
		mine->want = ktime_get() + twk_rand(&rs, 20 * tick);
		if (twheel_timer_start(&mine->timer, mine->want, 0, TWHEEL_MODE_ABS))
			atomic_inc(&x->errors);
		atomic_set_release(&x->armed[mine - x->p], arg->cpu + 1);
		/* Cancel a third of the other CPU's, from here, once armed. */
		if (twk_rand(&rs, 3))
			continue;
		deadline = ktime_get() + TWK_SPIN_MS * (ktime_t)TWK_MS;
		while (!atomic_read_acquire(&x->armed[o]) && ktime_get() < deadline)
			cpu_relax();
		x->cret[o] = twk_rand(&rs, 2) ? twheel_timer_cancel(&x->p[o].timer) :
						twheel_timer_cancel_sync(&x->p[o].timer);
		if (!(j % 32))
			cond_resched();
	}
	if (atomic_dec_and_test(&x->left))
		complete(&x->done);
	twk_idle_until_stop();
	return 0;
}

/*
 * Model check of the per-CPU protocol: one thread per CPU arms its own
 * timers (start, on its CPU's base, 0-20 ticks out) and cancels a third of
 * another CPU's timers as soon as they are armed (cancel or cancel_sync,
 * from its CPU: one lock, the other base's).  Every timer must end
 * exactly one way: cancelled (the cancel returned 1) and never fired, or
 * fired exactly once, never before its expiry, on the CPU that armed it
 * (its base: arms are local, cancels do not move a timer); each base's
 * fired counter must equal the fires of its CPU's timers.
 */
static void twheel_timer_start_cross_cpu_model_check(struct kunit *test)
{
	const u64 tick = 500 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	unsigned int n, i, cpu, t = 0, bad = 0, cancelled = 0;
	unsigned int *fired_on;
	struct twk_xc_arg *args;
	struct twk_threads *th;
	struct twheel *w;
	struct twk_xc *x;

	twk_two_cpus(test, &i, &cpu);
	n = num_online_cpus();
	x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x);
	args = kunit_kcalloc(test, n, sizeof(*args), GFP_KERNEL);
	x->armed = kunit_kcalloc(test, n * TWK_XC_TIMERS, sizeof(*x->armed), GFP_KERNEL);
	x->cret = kunit_kcalloc(test, n * TWK_XC_TIMERS, sizeof(*x->cret), GFP_KERNEL);
	fired_on = kunit_kcalloc(test, nr_cpu_ids, sizeof(*fired_on), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, args && x->armed && x->cret && fired_on);
	for (i = 0; i < n * TWK_XC_TIMERS; i++)
		x->cret[i] = -1;
	x->nthreads = n;
	x->seed = 0x5a17;
	atomic_set(&x->left, n);
	init_completion(&x->done);
	w = twk_wheel_flags(test, ctx, tick, 0);
	x->p = twk_probes(test, ctx, w, n * TWK_XC_TIMERS, twk_cb_cpu);
	th = twk_threads(test, n);
	for_each_online_cpu(cpu) {
		args[t].x = x;
		args[t].idx = t;
		args[t].cpu = cpu;
		twk_thread_create(test, th, t, cpu, twk_xc_thread, &args[t]);
		t++;
	}
	for (i = 0; i < n; i++)
		wake_up_process(th->tasks[i]);
	KUNIT_ASSERT_NE(test, twk_wait_done(&x->done, 4 * TWK_TIMEOUT_MS), 0UL);
	/* Everything not cancelled is due within 20 ticks of its arm. */
	for (i = 0; i < n * TWK_XC_TIMERS; i++)
		if (x->cret[i] == 1)
			cancelled++;
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, n * TWK_XC_TIMERS - cancelled,
					       TWK_TIMEOUT_MS));
	for (i = 0; i < n * TWK_XC_TIMERS; i++) {
		struct twk_probe *p = &x->p[i];
		unsigned int armed_on = atomic_read(&x->armed[i]) - 1;
		int f = atomic_read(&p->fires);

		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p->timer), 0);
		if (x->cret[i] == 1 ? f != 0 :
		    f != 1 || p->fired_at < p->want || p->data != armed_on) {
			if (!bad)
				kunit_info(test, "timer %u: armed on cpu%u, cancel %d, %d fires, on cpu%llu, %lld ns after its expiry\n",
					   i, armed_on, x->cret[i], f, p->data,
					   p->fired_at - p->want);
			bad++;
		}
		if (f == 1 && p->data < nr_cpu_ids)
			fired_on[p->data]++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	KUNIT_EXPECT_GT(test, cancelled, 0U);
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, twk_cpu_stats(w, cpu).fired, (u64)fired_on[cpu],
				    "cpu%u", cpu);
	KUNIT_EXPECT_EQ(test, twk_stats(w).migrated, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
	kunit_info(test, "%u CPUs: %u timers, %u cancelled from another CPU, %llu wakeups\n",
		   n, n * TWK_XC_TIMERS, cancelled, twk_stats(w).wakeups);
}

/**
 * struct twk_pp - the ping-pong stress: A arms, B cancels and re-arms
 * @p:       the timers
 * @stop:    time to stop
 * @errors:  unexpected return values
 * @left:    threads still running
 * @done:    completed by the last thread
 */
struct twk_pp {
	struct twk_probe *p;
	ktime_t stop;
	atomic_t errors;
	atomic_t left;
	struct completion done;
};

struct twk_pp_arg {
	struct twk_pp *s;
	bool arms;
};

static int twk_pp_thread(void *data)
{
	struct twk_pp_arg *arg = data;
	struct twk_pp *s = arg->s;
	u64 tick = s->p[0].ctx->tick_ns;
	struct rnd_state rs;
	unsigned int i;

	prandom_seed_state(&rs, arg->arms ? 0xa : 0xb);
	for (i = 0; ktime_get() < s->stop; i++) {
		struct twk_probe *p = &s->p[twk_rand(&rs, TWK_STRESS_TIMERS)];
		ktime_t exp = twk_rand(&rs, 4 * tick);
		u32 op = twk_rand(&rs, 100);
		int ret;

		if (arg->arms || op < 30) {
			/* start or modify: arms on this CPU's base */
			if (op & 1) {
				ret = twheel_timer_start(&p->timer, exp, 0, TWHEEL_MODE_REL);
				if (!ret)
					atomic_inc(&p->arms);
				else if (ret != -EBUSY)
					atomic_inc(&s->errors);
			} else {
				ret = twheel_timer_modify(&p->timer, exp, 0, TWHEEL_MODE_REL);
				if (!ret)
					atomic_inc(&p->arms);
				else if (ret != 1)
					atomic_inc(&s->errors);
			}
		} else {
			ret = op < 70 ? twheel_timer_cancel(&p->timer) :
					twheel_timer_cancel_sync(&p->timer);
			if (ret == 1)
				atomic_inc(&p->cancels);
			else if (ret)
				atomic_inc(&s->errors);
		}
		if (!(i % 64))
			cond_resched();
	}
	if (atomic_dec_and_test(&s->left))
		complete(&s->done);
	twk_idle_until_stop();
	return 0;
}

/*
 * Arm on one CPU, cancel / modify / cancel_sync from another, in loops
 * with both CPUs busy for two seconds: A only starts and modifies (so
 * timers keep moving to A's base), B mostly cancels and sometimes
 * modifies (moving them to B's).  Every arm must end in exactly one fire
 * or one cancel per timer, and the counters must agree; the migrations
 * really happened.
 */
static void twheel_timer_ops_cross_cpu_migration_stress(struct kunit *test)
{
	const u64 tick = 200 * TWK_US;
	struct twk_ctx *ctx = twk_ctx_new(test);
	u64 arms = 0, fires = 0, cancels = 0;
	struct twk_pp_arg args[2];
	unsigned int a, b, i, mismatch = 0;
	struct twk_threads *th;
	struct twheel_stats st;
	struct twk_pp *s;
	struct twheel *w;
	int ret;

	twk_two_cpus(test, &a, &b);
	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	init_completion(&s->done);
	atomic_set(&s->left, 2);
	w = twk_wheel_flags(test, ctx, tick, 0);
	s->p = twk_probes(test, ctx, w, TWK_STRESS_TIMERS, twk_cb_count);
	th = twk_threads(test, 2);
	s->stop = ktime_get() + 2 * NSEC_PER_SEC;
	args[0] = (struct twk_pp_arg){ s, true };
	args[1] = (struct twk_pp_arg){ s, false };
	twk_thread_create(test, th, 0, a, twk_pp_thread, &args[0]);
	twk_thread_create(test, th, 1, b, twk_pp_thread, &args[1]);
	wake_up_process(th->tasks[0]);
	wake_up_process(th->tasks[1]);
	KUNIT_ASSERT_NE(test, twk_wait_done(&s->done, 4 * TWK_TIMEOUT_MS), 0UL);

	for (i = 0; i < TWK_STRESS_TIMERS; i++) {
		ret = twheel_timer_cancel_sync(&s->p[i].timer);
		if (ret == 1)
			atomic_inc(&s->p[i].cancels);
	}
	for (i = 0; i < TWK_STRESS_TIMERS; i++) {
		struct twk_probe *p = &s->p[i];
		int ar = atomic_read(&p->arms), f = atomic_read(&p->fires);
		int c = atomic_read(&p->cancels);

		if (ar != f + c)
			mismatch++;
		arms += ar;
		fires += f;
		cancels += c;
	}
	st = twk_stats(w);
	kunit_info(test, "%llu arms, %llu fires, %llu cancels, %llu migrations, %llu wakeups\n",
		   arms, fires, cancels, st.migrated, st.wakeups);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->errors), 0);
	KUNIT_EXPECT_EQ(test, mismatch, 0U);
	KUNIT_EXPECT_EQ(test, st.armed, arms);
	KUNIT_EXPECT_EQ(test, st.fired, fires);
	KUNIT_EXPECT_EQ(test, st.cancelled, cancels);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
	KUNIT_EXPECT_GT(test, st.migrated, 0ULL);
	KUNIT_EXPECT_GT(test, fires, 0ULL);
	KUNIT_EXPECT_GT(test, cancels, 0ULL);
}

/* ------------------------------------------------------------------------ */
/* Runs of operations under one base lock (twheel_batch_*)                 */
/* ------------------------------------------------------------------------ */

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
	KUNIT_EXPECT_EQ(test, twk_stats(w).armed, (u64)NR);
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
	KUNIT_EXPECT_EQ(test, twk_stats(w).cancelled, 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stats(w).pending, 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stats(ctx->wheel).migrated, hp->take ? 1ULL : 0ULL);
	if (hp->modify) {
		KUNIT_EXPECT_TRUE(test, twheel_timer_pending(&other->timer));
		KUNIT_EXPECT_EQ(test, twk_stats(ctx->wheel).pending, 1ULL);
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&other->timer), 1);
	} else {
		KUNIT_EXPECT_FALSE(test, twheel_timer_pending(&other->timer));
		KUNIT_EXPECT_EQ(test, twk_stats(ctx->wheel).pending, 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, p, TWK_BTAKE_STOP,
					       &take), 1);
	KUNIT_EXPECT_EQ(test, take, 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).pending, 0ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).migrated, 1ULL);
	/*
	 * Idle now: armed on b's base, fires on b.  It is due in 2 ms, so
	 * b's pending count may already be back to 0 when read; only a's is
	 * certain.
	 */
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, p, TWK_BARM, NULL), 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 0ULL);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS));
	KUNIT_EXPECT_EQ(test, p->data, (u64)b);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).fired, 1ULL);
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
	KUNIT_ASSERT_EQ(test, twk_cpu_stats(w, a).pending, 2ULL);

	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, &p[1], TWK_BTAKE_MODIFY,
					       &take), -EXDEV);
	KUNIT_EXPECT_EQ(test, take, -EXDEV);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&p[1].timer), far);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 2ULL);

	t0 = ktime_get();
	KUNIT_EXPECT_EQ(test, twk_batch_on_cpu(test, b, &p[0], TWK_BTAKE_MODIFY,
					       &take), 1);
	KUNIT_EXPECT_EQ(test, take, 0);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, a).pending, 1ULL);
	KUNIT_EXPECT_EQ(test, twk_cpu_stats(w, b).migrated, 0ULL);
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
struct kunit_suite twheel_batch_suite = {
	.name = "twheel_batch",
	.test_cases = twheel_batch_cases,
};

static struct kunit_case twheel_facility_cases[] = {
	KUNIT_CASE_PARAM(twheel_create_validates_parameters, twk_create_gen_params),
	KUNIT_CASE(twheel_destroy_pending_timer_refused),
	KUNIT_CASE_PARAM(twheel_timer_start_never_early_exactly_once, twk_prop_gen_params),
	KUNIT_CASE(twheel_timer_start_past_expiry_fires_next_tick),
	KUNIT_CASE(twheel_timer_start_on_time_latency_median),
	KUNIT_CASE(twheel_timer_start_far_future_stays_pending),
	KUNIT_CASE(twheel_timer_start_pending_returns_ebusy),
	KUNIT_CASE_PARAM(twheel_timer_start_invalid_args_einval, twk_inval_gen_params),
	KUNIT_CASE(twheel_timer_modify_returns_pending_state),
	KUNIT_CASE(twheel_timer_modify_in_range_keeps_placement),
	KUNIT_CASE(twheel_timer_modify_earlier_fires_once_at_new_time),
	KUNIT_CASE(twheel_timer_modify_later_fires_once_at_new_time),
	KUNIT_CASE(twheel_timer_cancel_returns_pending_state),
	KUNIT_CASE(twheel_timer_pending_expires_track_state),
	KUNIT_CASE(twheel_callback_cancels_later_timer),
	KUNIT_CASE(twheel_callback_cancels_same_tick_timer),
	KUNIT_CASE(twheel_callback_modifies_same_tick_timer),
	KUNIT_CASE_PARAM(twheel_callback_rearms_itself_periodically,
			 twk_periodic_gen_params),
	KUNIT_CASE(twheel_callback_starts_new_timer),
	KUNIT_CASE(twheel_fire_time_kept_after_callback_until_rearmed),
	KUNIT_CASE(twheel_callback_frees_own_timer),
	KUNIT_CASE_PARAM(twheel_timer_cancel_sync_waits_for_running_callback,
			 twk_race_gen_params),
	KUNIT_CASE_PARAM(twheel_timer_sync_calls_wait_for_rearmed_callback,
			 twk_rerace_gen_params),
	KUNIT_CASE(twheel_timer_cancel_sync_own_callback_warns_and_cancels),
	KUNIT_CASE(twheel_timer_shutdown_sync_refuses_rearm_from_callback),
	KUNIT_CASE_PARAM(twheel_timer_restart_vs_calls_during_callback,
			 twk_restart_race_gen_params),
	KUNIT_CASE(twheel_timer_shutdown_sync_pending_timer),
	KUNIT_CASE(twheel_tick_budget_defers_without_loss),
	KUNIT_CASE_PARAM(twheel_tick_catches_up_after_late_hrtimer, twk_late_gen_params),
	KUNIT_CASE(twheel_tick_long_callback_delays_without_loss),
	KUNIT_CASE(twheel_next_expiry_empty_wheel_ktime_max),
	KUNIT_CASE_PARAM(twheel_next_expiry_reports_earliest_within_bound,
			 twk_next_gen_params),
	KUNIT_CASE(twheel_tick_armed_empty_wheel_no_wakeups),
	KUNIT_CASE_PARAM(twheel_tick_far_timer_sleeps_until_due,
			 twk_tickless_gen_params),
	KUNIT_CASE_PARAM(twheel_timer_start_idle_base_no_cascade, twk_fwd_gen_params),
	KUNIT_CASE(twheel_tick_disarmed_after_last_cancel),
	KUNIT_CASE(twheel_tick_disarmed_after_cancel_from_callback),
	KUNIT_CASE(twheel_get_stats_counts_armed_fired_cancelled),
	KUNIT_CASE(twheel_get_stats_pending_counts_due_timers),
	KUNIT_CASE(twheel_timer_ops_concurrent_stress_accounting),
	KUNIT_CASE(twheel_default_runs_timer),
	{}
};

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
	{}
};

static struct kunit_case twheel_smp_stress_cases[] = {
	KUNIT_CASE(twheel_timer_start_cross_cpu_model_check),
	KUNIT_CASE(twheel_timer_ops_cross_cpu_migration_stress),
	{}
};

/* Registered by kunit/wheel_kunit.c (declared in twheel_kunit.h). */
struct kunit_suite twheel_facility_suite = {
	.name = "twheel_facility",
	.test_cases = twheel_facility_cases,
};

/* Per-CPU bases: placement, the base protocol, hotplug (two CPUs). */
struct kunit_suite twheel_smp_suite = {
	.name = "twheel_smp",
	.test_cases = twheel_smp_cases,
};

/* Per-CPU bases under load: the cross-CPU model check and stress. */
struct kunit_suite twheel_smp_stress_suite = {
	.name = "twheel_smp_stress",
	.test_cases = twheel_smp_stress_cases,
};
