// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_facility_stress": the facility's operations from
 * several threads at once on shared timers, long and randomised, in the
 * stress module twheel_kunit_stress.ko (the unit cases are
 * tests/kunit/facility_kunit.c's).
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

static struct kunit_case twheel_facility_stress_cases[] = {
	KUNIT_CASE(twheel_timer_ops_concurrent_stress_accounting),
	{}
};

static struct kunit_suite twheel_facility_stress_suite = {
	.name = "twheel_facility_stress",
	.test_cases = twheel_facility_stress_cases,
};

kunit_test_suite(twheel_facility_stress_suite);
