// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: a waiter of higher priority on the CPU of a timer's mover
 *
 * A test module in the style of lib/test_*.c, for kernels without KUnit:
 * loading it runs the case, and the load succeeds if it passed and fails
 * with -EINVAL if not, the reason in the kernel log.  It is for
 * PREEMPT_RT, where it matters (Debian's RT kernel has no KUnit), and
 * runs anywhere; it needs the delay points of TWHEEL_DEBUG=1.
 *
 * A start or modify that moves a timer to the calling CPU's base holds the
 * locks of both bases (src/facility.c, DOC block).  On PREEMPT_RT those
 * locks sleep, and their holder can be preempted.  Here the mover, an
 * ordinary task, is preempted inside the move (the delay point migrate_us
 * keeps it there for TMIG_WINDOW_MS) by a SCHED_FIFO task on the same CPU
 * that cancels the same timer.  The canceller must wait for a lock, which
 * boosts the mover until it is done, and not spin: a spinning canceller
 * keeps the mover off the CPU until RT throttling stops it, after 950 ms
 * of every second by default.  So the case counts the CPU time the
 * canceller spends in twheel_timer_cancel(), which a wait keeps near zero
 * and a spin makes at least the rest of the window.  Without PREEMPT_RT
 * the mover has interrupts off in its window and cannot be preempted: the
 * case passes trivially there.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/twheel.h>
#include <linux/workqueue.h>

#include "twheel_internal.h"

#define TMIG_WINDOW_MS	50
/* the canceller's CPU time that counts as spinning */
#define TMIG_SPIN_MS	(TMIG_WINDOW_MS / 2)
#define TMIG_WAIT_MS	10000	/* for the mover to enter the move */

/**
 * struct tmig - the case
 * @timer:     the timer, pending on @from's base
 * @from:      the CPU the timer is armed on first
 * @hits:      twheel_delay_hits() of migrate_us before the move
 * @mover_ret: what the mover's modify returned
 * @cancel_ret: what the canceller's cancel returned
 * @spun_ns:   the canceller's CPU time in twheel_timer_cancel()
 * @late:      the mover never entered the window
 * @done:      both threads finished
 * @left:      threads still running
 */
struct tmig {
	struct twheel_timer timer;
	unsigned int from;
	unsigned int hits;
	int mover_ret;
	int cancel_ret;
	u64 spun_ns;
	bool late;
	struct completion done;
	atomic_t left;
};

static void tmig_fn(struct twheel_timer *timer)
{
}

static long tmig_arm(void *data)
{
	struct tmig *t = data;

	return twheel_timer_start(&t->timer, 10 * NSEC_PER_SEC, 0,
				  TWHEEL_MODE_REL);
}

static void tmig_finish(struct tmig *t)
{
	if (atomic_dec_and_test(&t->left))
		complete(&t->done);
}

static int tmig_mover(void *data)
{
	struct tmig *t = data;

	t->mover_ret = twheel_timer_modify(&t->timer, 20 * NSEC_PER_SEC, 0,
					   TWHEEL_MODE_REL);
	tmig_finish(t);
	return 0;
}

static int tmig_canceller(void *data)
{
	struct tmig *t = data;
	unsigned long deadline = jiffies + msecs_to_jiffies(TMIG_WAIT_MS);
	u64 cpu0;

	/* sleep, so that the mover runs, until it is inside the move */
	while (twheel_delay_hits(TWHEEL_DELAY_MIGRATE) == t->hits) {
		if (time_after(jiffies, deadline)) {
			t->late = true;
			break;
		}
		usleep_range(100, 200);
	}
	cpu0 = current->se.sum_exec_runtime;
	t->cancel_ret = twheel_timer_cancel(&t->timer);
	t->spun_ns = current->se.sum_exec_runtime - cpu0;
	tmig_finish(t);
	return 0;
}

static int __init tmig_run(struct twheel *w, struct tmig *t)
{
	struct task_struct *mover, *canceller;
	unsigned int to;
	int ret;

	to = cpumask_first(cpu_online_mask);
	t->from = cpumask_next(to, cpu_online_mask);
	if (t->from >= nr_cpu_ids) {
		pr_err("needs two online CPUs\n");
		return -EINVAL;
	}
	twheel_timer_setup(&t->timer, w, tmig_fn, 0);
	ret = work_on_cpu(t->from, tmig_arm, t);
	if (ret) {
		pr_err("start on cpu%u returned %d\n", t->from, ret);
		return -EINVAL;
	}

	init_completion(&t->done);
	atomic_set(&t->left, 2);
	mover = kthread_create(tmig_mover, t, "tmig_mover");
	if (IS_ERR(mover))
		return PTR_ERR(mover);
	canceller = kthread_create(tmig_canceller, t, "tmig_canceller");
	if (IS_ERR(canceller)) {
		kthread_stop(mover);
		return PTR_ERR(canceller);
	}
	kthread_bind(mover, to);
	kthread_bind(canceller, to);
	sched_set_fifo(canceller);

	t->hits = twheel_delay_hits(TWHEEL_DELAY_MIGRATE);
	twheel_delay_set(TWHEEL_DELAY_MIGRATE, TMIG_WINDOW_MS * USEC_PER_MSEC);
	wake_up_process(canceller);
	wake_up_process(mover);
	/*
	 * No timeout: the threads run this module's code.  A spinning
	 * canceller is throttled after 950 ms, and a hang is the harness's
	 * to report.
	 */
	wait_for_completion(&t->done);
	twheel_delay_set(TWHEEL_DELAY_MIGRATE, 0);

	ret = 0;
	if (t->late) {
		pr_err("the mover did not enter the move in %u ms\n",
		       TMIG_WAIT_MS);
		ret = -EINVAL;
	}
	if (t->mover_ret != 1 || t->cancel_ret != 1) {
		pr_err("modify returned %d, cancel %d: expected 1 and 1\n",
		       t->mover_ret, t->cancel_ret);
		ret = -EINVAL;
	}
	if (twheel_timer_pending(&t->timer)) {
		pr_err("the cancelled timer is pending\n");
		ret = -EINVAL;
	}
	if (t->spun_ns > TMIG_SPIN_MS * NSEC_PER_MSEC) {
		pr_err("the canceller ran %llu us in twheel_timer_cancel() while the mover was preempted in a %u ms window: it spun instead of waiting\n",
		       div_u64(t->spun_ns, NSEC_PER_USEC), TMIG_WINDOW_MS);
		ret = -EINVAL;
	}
	pr_info("canceller's CPU time in twheel_timer_cancel(): %llu us (limit %u ms)\n",
		div_u64(t->spun_ns, NSEC_PER_USEC), TMIG_SPIN_MS);
	twheel_timer_cancel_sync(&t->timer);
	return ret;
}

static int __init tmig_init(void)
{
	struct twheel *w;
	struct tmig *t;
	int ret;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	w = twheel_create(NSEC_PER_MSEC, 8, 64);
	if (IS_ERR(w)) {
		kfree(t);
		return PTR_ERR(w);
	}
	ret = tmig_run(w, t);
	WARN_ON(twheel_destroy(w));
	kfree(t);
	if (ret)
		return ret;
	pr_info("ok: a canceller of higher priority waited for the mover\n");
	return 0;
}

static void __exit tmig_exit(void)
{
}

module_init(tmig_init);
module_exit(tmig_exit);
MODULE_DESCRIPTION("twheel: a waiter of higher priority on the CPU of a timer's mover");
MODULE_LICENSE("GPL");
