// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_facility": the timer facility of src/facility.c,
 * exercised through the exported API (include/linux/twheel.h) on private
 * wheel instances driven by their real soft-mode hrtimer.  How the cases
 * are written (callbacks that only record, bounded waits, resources torn
 * down in order): util.h.  The per-CPU bases are twheel_smp's
 * (smp_kunit.c), the device's batches twheel_batch's (batch_kunit.c), and
 * the concurrency stress is twheel_facility_stress's
 * (tests/stress/facility_stress_kunit.c).
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
 * twheel_create_attr(): struct twheel_attr's size rules and clocks.  The
 * instance's hrtimers run on its clock, which is what makes a
 * CLOCK_BOOTTIME timer due during a suspend fire on resume.
 */
static void twheel_create_attr_clocks(struct kunit *test)
{
	struct {
		struct twheel_attr attr;
		u64 tail;
	} big = {
		.attr = {
			.size = sizeof(big),
			.clockid = CLOCK_BOOTTIME,
			.engine = TWHEEL_ENGINE_HIER,
			.bits = 6,
			.budget = 16,
			.tick_ns = TWK_MS,
		},
	};
	struct twheel_attr attr = big.attr;
	struct twheel *w;

	attr.size = offsetof(struct twheel_attr, tick_ns);
	KUNIT_EXPECT_EQ(test, PTR_ERR(twheel_create_attr(&attr)), -EINVAL);
	attr.size = sizeof(attr);
	attr.clockid = CLOCK_REALTIME;
	KUNIT_EXPECT_EQ(test, PTR_ERR(twheel_create_attr(&attr)), -EINVAL);
	attr.clockid = CLOCK_BOOTTIME_ALARM;
	KUNIT_EXPECT_EQ(test, PTR_ERR(twheel_create_attr(&attr)), -EINVAL);
	big.tail = 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(twheel_create_attr(&big.attr)), -E2BIG);
	big.tail = 0;
	w = twheel_create_attr(&big.attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	KUNIT_EXPECT_EQ(test, twheel_tick_clockid(w), CLOCK_BOOTTIME);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
	w = twheel_create(TWK_MS, 6, 16);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, w);
	KUNIT_EXPECT_EQ(test, twheel_tick_clockid(w), CLOCK_MONOTONIC);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
	KUNIT_EXPECT_EQ(test, twheel_tick_clockid(twheel_default()),
			CLOCK_MONOTONIC);
}

static int twk_wheel_attr_init(struct kunit_resource *res, void *context)
{
	struct twheel *w = twheel_create_attr(context);

	if (IS_ERR(w))
		return PTR_ERR(w);
	res->data = w;
	return 0;
}

static void twk_wheel_attr_free(struct kunit_resource *res)
{
	twheel_destroy(res->data);
}

/* Record a callback by CLOCK_BOOTTIME, the clock of the case's wheel. */
static void twk_cb_boottime(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);
	ktime_t now = ktime_get_boottime();

	if (now < twheel_timer_expires(timer) ||
	    twheel_fire_time(timer) < twheel_timer_expires(timer) ||
	    twheel_fire_time(timer) > now)
		atomic_inc(&p->ctx->early);
	p->fired_at = now;
	p->exp_at_fire = twheel_timer_expires(timer);
	atomic_inc_return(&p->fires);
	atomic_inc_return(&p->ctx->fired);
	wake_up(&p->ctx->wq);
}

/*
 * A CLOCK_BOOTTIME wheel reads that clock: absolute expiries, relative
 * ones and fire times are boottime, none fires early by it.  (Without a
 * suspend, which the test VMs cannot do, the clock equals CLOCK_MONOTONIC:
 * what tells the clocks apart here is the hrtimers' clock, checked above.)
 */
static void twheel_boottime_never_early(struct kunit *test)
{
	struct twheel_attr attr = {
		.size = sizeof(attr),
		.clockid = CLOCK_BOOTTIME,
		.engine = TWHEEL_ENGINE_HIER,
		.bits = 6,
		.budget = 64,
		.tick_ns = TWK_MS,
	};
	enum { N = 16 };
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twk_probe *p;
	struct twheel *w;
	ktime_t t0;
	int i;

	/* a resource before the probes: destroyed after they are shut down */
	w = kunit_alloc_resource(test, twk_wheel_attr_init,
				 twk_wheel_attr_free, GFP_KERNEL, &attr);
	KUNIT_ASSERT_NOT_NULL(test, w);
	ctx->wheel = w;
	ctx->tick_ns = attr.tick_ns;
	p = twk_probes(test, ctx, w, N, twk_cb_boottime);
	t0 = ktime_get_boottime();
	for (i = 0; i < N; i++) {
		ktime_t delay = (i + 1) * 3 * TWK_MS;
		int ret;

		p[i].want = t0 + delay;
		if (i & 1)
			ret = twheel_timer_start(&p[i].timer, p[i].want, 0,
						 TWHEEL_MODE_ABS);
		else
			ret = twheel_timer_start(&p[i].timer, delay, 0,
						 TWHEEL_MODE_REL);
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, N, TWK_TIMEOUT_MS));
	for (i = 0; i < N; i++) {
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&p[i].fires), 1);
		KUNIT_EXPECT_GE(test, p[i].exp_at_fire, p[i].want);
		KUNIT_EXPECT_GE(test, p[i].fired_at, p[i].exp_at_fire);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
		   over, nr, twk_stat(w, late));
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 1ULL);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p->timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p->timer, e, 0, TWHEEL_MODE_ABS), 0);
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 2ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), ip->pending ? 1ULL : 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), ip->pending ? 1ULL : 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twheel_next_expiry(w, KTIME_MAX), KTIME_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&p->fires), 1);
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), 2ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), 2ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), (u64)TWK_SF_NR);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
		KUNIT_EXPECT_EQ(test, twk_stat(r->p->ctx->wheel, cancelled), 1ULL);
	} else {
		KUNIT_EXPECT_EQ(test, r->sync_ret, 0);
		KUNIT_EXPECT_EQ(test, twk_stat(r->p->ctx->wheel, cancelled), 0ULL);
	}
	KUNIT_EXPECT_EQ(test, twk_stat(r->p->ctx->wheel, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(ctx->wheel, armed), 1ULL);

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
		KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);
	}
	if (rp->op == TWK_RACE_SHUTDOWN_SYNC)
		KUNIT_EXPECT_EQ(test, twheel_timer_start(t, 0, 0, TWHEEL_MODE_REL),
				-ESHUTDOWN);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled),
			rp->op == TWK_RACE_SHUTDOWN_SYNC ? 0ULL : 1ULL);
	if (rp->op == TWK_RACE_SHUTDOWN_SYNC)
		KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
		KUNIT_EXPECT_EQ(test, twk_stat(w, moves), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, armed), 3ULL);
	/* cancel counts once */
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[1].timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[1].timer), 0);
	KUNIT_EXPECT_EQ(test, twk_stat(w, cancelled), 1ULL);

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

/*
 * The handler counts a timer late by comparing its key with one bound per
 * run (twheel_late_below()) instead of computing the end of each timer's
 * tick: the bound must say what the definition says, now - tick_ns >
 * start + (key + 1) * tick_ns, at the edges and anywhere.
 */
static void twheel_late_below_matches_tick_end(struct kunit *test)
{
	static const u32 ticks[] = { 1, 3, 1000, 999983, TWK_MS, 1000 * TWK_MS };
	struct rnd_state rs;
	unsigned int i, t, bad = 0;

	prandom_seed_state(&rs, 0x6c617465ULL);
	for (t = 0; t < ARRAY_SIZE(ticks); t++) {
		u32 tick = ticks[t];

		for (i = 0; i < 4000; i++) {
			/* twk_rand() takes at most 2^32: compose larger ones */
			ktime_t start = (ktime_t)twk_rand(&rs, 1ULL << 31) << 9;
			ktime_t now = start + (s64)twk_rand(&rs, 64) * tick +
				      (s64)twk_rand(&rs, tick) -
				      (s64)twk_rand(&rs, 2ULL * tick);
			u64 key = twk_rand(&rs, 66);
			u64 below;
			bool late, flagged;

			if (i & 1)	/* keys around the bound itself */
				key = max_t(s64, (now - start) / tick - 2 +
						 (s64)twk_rand(&rs, 3), 0);
			below = twheel_late_below(start, tick, max_t(s64, now, 0));
			late = max_t(s64, now, 0) - (s64)tick >
			       start + (s64)(key + 1) * tick;
			flagged = key < below;
			if (late != flagged && !bad++)
				kunit_info(test, "tick %u start %lld now %lld key %llu: late %d, bound %llu\n",
					   tick, start, now, key, late, below);
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/*
 * The inline fast paths of start, modify and cancel (the commonest calls:
 * no slack, the calling CPU's base, an hrtimer set early enough already)
 * keep the contract: runs of start + cancel pairs and modifies, earlier
 * and later, of pending timers leave every timer that stays armed firing
 * exactly once, never before its last expiry, none of the cancelled ones
 * firing, the counters adding up, and the sync cancel finding nothing to
 * wait for.  A modify to the earliest expiry of all must move the
 * hrtimer earlier: the inline test of twheel_program() must not skip it.
 */
static void twheel_fast_path_pairs_and_modifies_keep_contract(struct kunit *test)
{
	const u64 tick = TWK_MS;
	const unsigned int nr = 48, rounds = 20;
	struct twk_ctx *ctx = twk_ctx_new(test);
	struct twheel *w = twk_wheel(test, ctx, tick, 6, 64);
	struct twk_probe *p = twk_probes(test, ctx, w, nr, twk_cb_record);
	unsigned int i, r, kept = 0, bad = 0;
	struct twheel_stats st;
	struct rnd_state rs;
	ktime_t now;

	prandom_seed_state(&rs, 0x66617374ULL);
	now = ktime_get();
	/* the odd ones stay armed, far enough out for all the rounds */
	for (i = 1; i < nr; i += 2) {
		p[i].want = now + 200 * tick + twk_rand(&rs, 100 * tick);
		KUNIT_ASSERT_EQ(test, twheel_timer_start(&p[i].timer, p[i].want,
							 0, TWHEEL_MODE_ABS), 0);
	}
	for (r = 0; r < rounds; r++) {
		/* every round well ahead of the clock, however slow the VM */
		now = ktime_get();
		/* start + cancel pairs of the even ones, between them */
		for (i = 0; i < nr; i += 2) {
			ktime_t exp = now + 150 * tick + twk_rand(&rs, 200 * tick);

			KUNIT_EXPECT_EQ(test, twheel_timer_start(&p[i].timer, exp, 0,
								 TWHEEL_MODE_ABS), 0);
			KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&p[i].timer), 1);
		}
		/* modifies of the odd ones, later or earlier */
		for (i = 1; i < nr; i += 2) {
			p[i].want = now + 200 * tick + twk_rand(&rs, 100 * tick);
			KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p[i].timer, p[i].want,
								  0, TWHEEL_MODE_ABS), 1);
		}
	}
	/* one to the earliest expiry of all: the hrtimer must come forward */
	now = ktime_get();
	p[1].want = now + 20 * tick;
	KUNIT_EXPECT_EQ(test, twheel_timer_modify(&p[1].timer, p[1].want, 0,
						  TWHEEL_MODE_ABS), 1);
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, 1, TWK_TIMEOUT_MS),
			      "the earliest timer did not fire");
	KUNIT_EXPECT_EQ(test, atomic_read(&p[1].fires), 1);
	KUNIT_ASSERT_TRUE_MSG(test, twk_wait_fired(ctx, nr / 2,
						   400 + TWK_TIMEOUT_MS),
			      "%d of %u fired", atomic_read(&ctx->fired), nr / 2);
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ(test, twheel_timer_cancel_sync(&p[i].timer), 0);
		if (i & 1) {
			kept++;
			if (atomic_read(&p[i].fires) != 1 ||
			    p[i].fired_at < p[i].want)
				bad++;
		} else if (atomic_read(&p[i].fires)) {
			bad++;
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
	st = twk_stats(w);
	KUNIT_EXPECT_EQ(test, st.fired, (u64)kept);
	KUNIT_EXPECT_EQ(test, st.cancelled, (u64)rounds * (nr / 2));
	KUNIT_EXPECT_EQ(test, st.armed, st.fired + st.cancelled + st.pending);
	KUNIT_EXPECT_EQ(test, st.pending, 0ULL);
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
	KUNIT_EXPECT_EQ(test, twk_stat(w, fired), 2ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
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

static struct kunit_case twheel_facility_cases[] = {
	KUNIT_CASE_PARAM(twheel_create_validates_parameters, twk_create_gen_params),
	KUNIT_CASE(twheel_create_attr_clocks),
	KUNIT_CASE(twheel_boottime_never_early),
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
	KUNIT_CASE(twheel_default_runs_timer),
	KUNIT_CASE(twheel_late_below_matches_tick_end),
	KUNIT_CASE(twheel_fast_path_pairs_and_modifies_keep_contract),
	{}
};

static struct kunit_suite twheel_facility_suite = {
	.name = "twheel_facility",
	.test_cases = twheel_facility_cases,
};

kunit_test_suite(twheel_facility_suite);
