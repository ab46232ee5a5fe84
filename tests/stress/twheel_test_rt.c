// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: waiters of higher priority on PREEMPT_RT
 *
 * A test module in the style of lib/test_*.c, for kernels without KUnit:
 * loading it runs the cases, and the load succeeds if they all passed and
 * fails with -EINVAL if not, the reasons in the kernel log.  It is for
 * PREEMPT_RT, where the cases matter (Debian's RT kernels have no KUnit),
 * and runs anywhere; it needs the delay points of TWHEEL_DEBUG=1.
 *
 * On PREEMPT_RT twheel's base locks sleep and its tick handler runs in a
 * thread, so the code a waiter waits for can be preempted -- by the waiter
 * itself, when it has a higher priority on the same CPU.  A waiter that
 * then spins keeps that code off the CPU until RT throttling stops the
 * waiter (after 950 ms of every second by default); one that waits for a
 * lock boosts it.  In each case a SCHED_FIFO waiter sleeps until an
 * ordinary task, or the handler's thread, sits in a delay point on the
 * waiter's CPU, preempts it there and calls the API on the same timer:
 *
 * - migrate: a mover's modify moves the timer to its CPU's base, inside
 *   the move (migrate_us, TRT_WINDOW_MS), and the waiter cancels the timer
 *   (src/facility.c, DOC block: the waiter links the timer in transit);
 * - callback: the handler has taken the timer off the wheel to run its
 *   callback (callback_us), and the waiter calls
 *   twheel_timer_cancel_sync(), which must return only when the callback
 *   has returned (it waits on the base's expiry lock).
 *
 * The cases count the CPU time the waiter spends in its call, which a
 * wait keeps near zero and a spin makes at least the rest of the window.
 * Without PREEMPT_RT the code in the window cannot be preempted (a move
 * has interrupts off, the handler runs in a softirq): the cases pass
 * trivially there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kmemleak.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/twheel.h>
#include <linux/workqueue.h>

#include "twheel_internal.h"

#define TRT_WINDOW_MS	50
/* the waiter's CPU time that counts as spinning */
#define TRT_SPIN_MS	(TRT_WINDOW_MS / 2)
#define TRT_WAIT_MS	10000	/* for the window to open */
#define TRT_LEAK_MS	5000	/* the leaked timer's delay (leak_timer=1) */

/**
 * struct trt - one case
 * @timer:      the timer
 * @point:      the delay point that holds the window open
 * @hits:       twheel_delay_hits() of @point before the case
 * @mover_ret:  what the mover's modify returned (migrate)
 * @waiter_ret: what the waiter's call returned
 * @cb_done:    the callback has returned (callback)
 * @cb_seen:    @cb_done when the waiter's call returned
 * @spun_ns:    the waiter's CPU time in its call
 * @late:       the window did not open
 * @done:       the threads finished
 * @left:       threads still running
 */
struct trt {
	struct twheel_timer timer;
	enum twheel_delay_point point;
	unsigned int hits;
	int mover_ret;
	int waiter_ret;
	bool cb_done;
	bool cb_seen;
	u64 spun_ns;
	bool late;
	struct completion done;
	atomic_t left;
};

static void trt_cb(struct twheel_timer *timer)
{
	struct trt *t = container_of(timer, struct trt, timer);

	/* pairs with the waiter's acquire: the callback's end, seen whole */
	smp_store_release(&t->cb_done, true);
}

static void trt_finish(struct trt *t)
{
	if (atomic_dec_and_test(&t->left))
		complete(&t->done);
}

/* Runs on a CPU: arm @t's timer there, 10 s out or due in 2 ms. */
static long trt_arm_far(void *data)
{
	struct trt *t = data;

	return twheel_timer_start(&t->timer, 10 * NSEC_PER_SEC, 0,
				  TWHEEL_MODE_REL);
}

static long trt_arm_due(void *data)
{
	struct trt *t = data;

	return twheel_timer_start(&t->timer, 2 * NSEC_PER_MSEC, 0,
				  TWHEEL_MODE_REL);
}

static int trt_mover(void *data)
{
	struct trt *t = data;

	t->mover_ret = twheel_timer_modify(&t->timer, 20 * NSEC_PER_SEC, 0,
					   TWHEEL_MODE_REL);
	trt_finish(t);
	return 0;
}

static int trt_waiter(void *data)
{
	struct trt *t = data;
	unsigned long deadline = jiffies + msecs_to_jiffies(TRT_WAIT_MS);
	u64 cpu0;

	/* sleep, so that the other side runs, until it is in the window */
	while (twheel_delay_hits(t->point) == t->hits) {
		if (time_after(jiffies, deadline)) {
			t->late = true;
			break;
		}
		usleep_range(100, 200);
	}
	cpu0 = current->se.sum_exec_runtime;
	if (t->point == TWHEEL_DELAY_MIGRATE) {
		t->waiter_ret = twheel_timer_cancel(&t->timer);
	} else {
		t->waiter_ret = twheel_timer_cancel_sync(&t->timer);
		/* pairs with trt_cb()'s release */
		t->cb_seen = smp_load_acquire(&t->cb_done);
	}
	t->spun_ns = current->se.sum_exec_runtime - cpu0;
	trt_finish(t);
	return 0;
}

/* Open @t's window: its delay point delays from now on. */
static void __init trt_open(struct trt *t, enum twheel_delay_point point)
{
	t->point = point;
	t->hits = twheel_delay_hits(point);
	twheel_delay_set(point, TRT_WINDOW_MS * USEC_PER_MSEC);
}

/* Close @t's window, and leave its timer idle: a case that failed early. */
static void __init trt_close(struct trt *t)
{
	twheel_delay_set(t->point, 0);
	twheel_timer_cancel_sync(&t->timer);
}

/*
 * Start the case's threads on @cpu, the waiter SCHED_FIFO, wait for them
 * and close the window; if they cannot start, trt_close().
 */
static int __init trt_threads(struct trt *t, unsigned int cpu, bool mover)
{
	struct task_struct *m = NULL, *waiter;

	init_completion(&t->done);
	atomic_set(&t->left, mover ? 2 : 1);
	if (mover) {
		m = kthread_create(trt_mover, t, "trt_mover");
		if (IS_ERR(m)) {
			trt_close(t);
			return PTR_ERR(m);
		}
		kthread_bind(m, cpu);
	}
	waiter = kthread_create(trt_waiter, t, "trt_waiter");
	if (IS_ERR(waiter)) {
		if (m)
			kthread_stop(m);
		trt_close(t);
		return PTR_ERR(waiter);
	}
	kthread_bind(waiter, cpu);
	sched_set_fifo(waiter);

	wake_up_process(waiter);
	if (m)
		wake_up_process(m);
	/*
	 * No timeout: the threads run this module's code.  A spinning
	 * waiter is throttled after 950 ms, and a hang is the harness's to
	 * report.
	 */
	wait_for_completion(&t->done);
	twheel_delay_set(t->point, 0);
	return 0;
}

/* The verdict shared by the cases; @call names the waiter's call. */
static int __init trt_check_wait(struct trt *t, const char *call)
{
	int ret = 0;

	if (t->late) {
		pr_err("%s: the window did not open in %u ms\n", call,
		       TRT_WAIT_MS);
		ret = -EINVAL;
	}
	if (twheel_timer_pending(&t->timer)) {
		pr_err("%s: the timer is pending after it\n", call);
		ret = -EINVAL;
	}
	if (t->spun_ns > TRT_SPIN_MS * NSEC_PER_MSEC) {
		pr_err("%s: the waiter ran %llu us in it while what it waited for was preempted in a %u ms window: it spun instead of waiting\n",
		       call, div_u64(t->spun_ns, NSEC_PER_USEC), TRT_WINDOW_MS);
		ret = -EINVAL;
	}
	pr_info("%s: the waiter's CPU time in it: %llu us (limit %u ms)\n",
		call, div_u64(t->spun_ns, NSEC_PER_USEC), TRT_SPIN_MS);
	return ret;
}

/* migrate: the timer moves from the second CPU's base to the first's. */
static int __init trt_migrate(struct twheel *w, struct trt *t,
			      unsigned int cpu, unsigned int other)
{
	int ret;

	twheel_timer_setup(&t->timer, w, trt_cb, 0);
	ret = work_on_cpu(other, trt_arm_far, t);
	if (ret) {
		pr_err("migrate: start on cpu%u returned %d\n", other, ret);
		return -EINVAL;
	}
	trt_open(t, TWHEEL_DELAY_MIGRATE);
	ret = trt_threads(t, cpu, true);
	if (ret)
		return ret;
	ret = trt_check_wait(t, "twheel_timer_cancel()");
	if (t->mover_ret != 1 || t->waiter_ret != 1) {
		pr_err("migrate: modify returned %d, cancel %d: expected 1 and 1\n",
		       t->mover_ret, t->waiter_ret);
		ret = -EINVAL;
	}
	twheel_timer_cancel_sync(&t->timer);
	return ret;
}

/* callback: the handler on the waiter's CPU is about to run the callback. */
static int __init trt_callback(struct twheel *w, struct trt *t,
			       unsigned int cpu)
{
	int ret;

	twheel_timer_setup(&t->timer, w, trt_cb, 0);
	/* the delay point holds the callback until the waiter is there */
	trt_open(t, TWHEEL_DELAY_CALLBACK);
	ret = work_on_cpu(cpu, trt_arm_due, t);
	if (ret) {
		trt_close(t);
		pr_err("callback: start on cpu%u returned %d\n", cpu, ret);
		return -EINVAL;
	}
	ret = trt_threads(t, cpu, false);
	if (ret)
		return ret;
	ret = trt_check_wait(t, "twheel_timer_cancel_sync()");
	if (t->waiter_ret != 0 || !t->cb_seen) {
		pr_err("callback: cancel_sync returned %d, the callback %s: expected 0, returned\n",
		       t->waiter_ret, t->cb_seen ? "returned" : "still running");
		ret = -EINVAL;
	}
	return ret;
}

static bool leak_timer;
module_param(leak_timer, bool, 0444);
MODULE_PARM_DESC(leak_timer, "Run no case: arm a timer on the default wheel due in TRT_LEAK_MS and never cancel it, as a buggy user would (the selftest plan then unloads twheel)");

/* Never runs: twheel's exit must stop every base before it is due. */
static void trt_leak_cb(struct twheel_timer *timer)
{
	pr_err("leaked timer fired\n");
}

/*
 * The memory stays allocated, as a leaking user's would: the wheel's slot
 * still links it.  kmemleak is told, since the leak is the point.
 */
static int trt_leak(void)
{
	struct twheel_timer *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return -ENOMEM;
	kmemleak_not_leak(t);
	twheel_timer_setup(t, twheel_default(), trt_leak_cb, 0);
	WARN_ON(twheel_timer_start(t, TRT_LEAK_MS * NSEC_PER_MSEC, 0,
				   TWHEEL_MODE_REL));
	pr_info("leaked a timer on the default wheel, due in %u ms\n",
		TRT_LEAK_MS);
	return 0;
}

static int __init trt_init(void)
{
	unsigned int cpu = cpumask_first(cpu_online_mask);
	unsigned int other = cpumask_next(cpu, cpu_online_mask);
	struct twheel *w;
	struct trt *t;
	int ret, ret2;

	if (leak_timer)
		return trt_leak();
	if (other >= nr_cpu_ids) {
		pr_err("needs two online CPUs\n");
		return -EINVAL;
	}
	t = kcalloc(2, sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	w = twheel_create(NSEC_PER_MSEC, 8, 64);
	if (IS_ERR(w)) {
		kfree(t);
		return PTR_ERR(w);
	}
	ret = trt_migrate(w, &t[0], cpu, other);
	ret2 = trt_callback(w, &t[1], cpu);
	WARN_ON(twheel_destroy(w));
	kfree(t);
	ret = ret ?: ret2;
	if (ret)
		return ret;
	pr_info("ok: waiters of higher priority did not spin on a mover or a callback\n");
	return 0;
}

static void __exit trt_exit(void)
{
}

module_init(trt_init);
module_exit(trt_exit);
MODULE_DESCRIPTION("twheel: waiters of higher priority on PREEMPT_RT");
MODULE_LICENSE("GPL");
