// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_smp_stress": the per-CPU bases under load, in the
 * stress module twheel_kunit_stress.ko: a model check that every timer
 * fires exactly once, never early, on the base it was armed on, while the
 * other CPU cancels a third of them, and a migration ping-pong.
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
		KUNIT_EXPECT_EQ_MSG(test, twk_cpu_stat(w, cpu, fired), (u64)fired_on[cpu],
				    "cpu%u", cpu);
	KUNIT_EXPECT_EQ(test, twk_stat(w, migrated), 0ULL);
	KUNIT_EXPECT_EQ(test, twk_stat(w, pending), 0ULL);
	kunit_info(test, "%u CPUs: %u timers, %u cancelled from another CPU, %llu wakeups\n",
		   n, n * TWK_XC_TIMERS, cancelled, twk_stat(w, wakeups));
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

static struct kunit_case twheel_smp_stress_cases[] = {
	KUNIT_CASE(twheel_timer_start_cross_cpu_model_check),
	KUNIT_CASE(twheel_timer_ops_cross_cpu_migration_stress),
	{}
};

/* Per-CPU bases under load: the cross-CPU model check and stress. */
static struct kunit_suite twheel_smp_stress_suite = {
	.name = "twheel_smp_stress",
	.test_cases = twheel_smp_stress_cases,
};

kunit_test_suite(twheel_smp_stress_suite);
