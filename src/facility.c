// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the timer facility around the hashed wheel
 *
 * A wheel instance (struct twheel) is an engine (engine.h: the hierarchical
 * wheel of hier.c by default, the pure Scheme 6 wheel of wheel.c or the
 * Timer Lawn of lawn.c, chosen per instance) guarded by a spinlock and
 * driven by one hrtimer in soft mode (callbacks in softirq context) on
 * CLOCK_MONOTONIC.  The facility only calls the engine through engine.h:
 * insert, remove, advance, next_lower_bound, next_key, pick_key.
 *
 * Time and ticks
 * --------------
 * Time from the instance's @start is cut into half-open intervals of
 * @tick_ns: tick k is [start + k * tick_ns, start + (k + 1) * tick_ns).  A
 * timer due at time x is placed in tick key(x) = (x - start) / tick_ns and
 * fires once the clock has passed the end of that tick, so it never fires
 * before x.  With slack s the facility may pick any tick in
 * [key(x), key(x + s)]; it keeps a pending timer where it is when that
 * placement is still in range, and otherwise prefers the latest tick with
 * the most trailing zero bits, so timers with overlapping ranges coalesce.
 * When the hrtimer is on time a timer fires at most one tick plus its slack
 * after its expiry.
 *
 * Tickless operation
 * ------------------
 * The hrtimer is not armed while the wheel is empty.  Otherwise it is
 * programmed for the end of the earliest tick at which a timer may be due
 * (the engine's lower bound), not for every tick: a wheel holding timers
 * ten seconds or an hour out sleeps until the first of them is due, however
 * full its slots are.  The bound may be earlier than the earliest timer:
 * Scheme 6 leaves a slot's bound low after a cancel (one early wakeup per
 * slot, which walks that slot and tightens it); the hierarchical engine
 * keeps such bounds for its upper slots, and the advance that hands a far
 * timer out does its cascades on the way (one wakeup per timer due, none
 * per level or per tick).  A late hrtimer (or a
 * long-running callback) is caught up by advancing over all ticks that
 * have passed; nothing is lost.
 *
 * Callbacks
 * ---------
 * The tick handler moves the due timers (at most @budget of them) from the
 * wheel onto @expired, then runs them one by one with the lock dropped.  A
 * timer on @expired still counts as pending: cancel or modify take it off
 * before its callback runs.  If the budget was used up, the handler re-arms
 * the hrtimer for "now" and returns, so the rest run in a fresh softirq
 * pass and no single pass is unbounded.  Callbacks may start, modify or
 * cancel any timer on the wheel, including their own, and may free their
 * own timer: the handler does not touch a timer after its callback began.
 *
 * Timer states and synchronization rules: the DOC block below, which
 * Documentation/design.rst includes.
 */

/**
 * DOC: Timer states and synchronization
 *
 * A timer is in one of these states, all changed under the wheel's @lock:
 *
 * - idle: not linked, callback not running.  start/modify link it.
 * - pending: linked into a wheel slot.  cancel unlinks it; modify moves it;
 *   the tick handler moves it to @expired when due.
 * - due: linked on @expired (TWHEEL_TIMER_EXPIRED), still pending: cancel
 *   and modify take it off before its callback runs.
 * - running: unlinked, @running points at it, its callback runs with the
 *   lock dropped.  The callback, or another CPU, may arm it again, so a
 *   timer can be running and pending at once; it cannot be running twice
 *   (one tick handler per wheel runs callbacks, one after the other).
 * - shut down (TWHEEL_TIMER_SHUTDOWN, orthogonal to the above): start and
 *   modify fail with -ESHUTDOWN until twheel_timer_setup() again.
 *
 * This is timer.c's machine (pending = timer_pending(), running =
 * base->running_timer, shut down = timer_shutdown_sync()'s NULL function),
 * and the sync cancel follows its __try_to_del_timer_sync(): while the
 * callback runs, the timer is left where it is and the caller waits; only
 * when the callback has returned is the timer unlinked, whatever armed it
 * meanwhile.  So when twheel_timer_cancel_sync() returns, the callback is
 * not running, and the timer is not pending unless re-armed after that.
 *
 * All timer state of one instance is protected by its @lock, a spinlock_t
 * taken with interrupts disabled.  The non-sleeping API may be called from
 * any context, hard interrupts included, except on PREEMPT_RT, where
 * spinlock_t sleeps and hard interrupt context is excluded (as for any
 * spinlock_t user; the work under the lock is not bounded enough for a
 * raw lock: a tick may walk a slot of far timers).  Callbacks of one
 * instance never run concurrently with each other (an hrtimer's callback
 * does not run on two CPUs at once).
 *
 * twheel_timer_cancel() does not wait: if the callback is running it
 * unlinks whatever is pending and returns, while the callback may still
 * be executing.  twheel_timer_cancel_sync() and
 * twheel_timer_shutdown_sync() sleep until a running callback has
 * returned (might_sleep()): on a wait queue that the handler wakes after
 * each callback, or with PREEMPT_RT on an expiry lock that the handler
 * holds while callbacks run, so that the waiter boosts the softirq thread
 * (timer.c's and hrtimer.c's expiry lock).  As with timer_delete_sync()
 * the caller must not hold a lock the callback takes (lockdep reports this
 * through the timer's lockdep map), and cancel_sync cannot stop a callback
 * that re-arms its timer right after the wait - twheel_timer_shutdown_sync()
 * marks the timer shut down first, so such re-arms fail with -ESHUTDOWN.
 * Calling either from the timer's own callback would wait forever; it is
 * reported with a warning and degrades to twheel_timer_cancel().
 *
 * A wheel is destroyed only when no timer is pending on it: its timers
 * point at it and its slots link them.  twheel_destroy() refuses otherwise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/twheel.h>

#include "compat.h"
#include "twheel_internal.h"
#include "engine.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

/* Private timer state bits (struct twheel_timer::state). */
#define TWHEEL_TIMER_EXPIRED	BIT(0)	/* on wheel->expired, callback due */
#define TWHEEL_TIMER_SHUTDOWN	BIT(1)	/* re-arming refused */

/**
 * struct twheel - a wheel instance
 * @lock:       protects everything below and the timers on this wheel
 * @engine:     the pure engine keeping the timers
 * @expired:    timers handed out by the wheel whose callbacks have not run
 * @nr_expired: number of timers on @expired
 * @running:    the timer whose callback runs now, or NULL
 * @running_cpu: CPU running the callbacks, valid while @running is set
 * @running_wq: cancel_sync waiters for @running to change (!PREEMPT_RT)
 * @expiry_lock: held by the tick handler while callbacks run (PREEMPT_RT)
 * @sync_waiters: cancel_sync callers waiting on @expiry_lock (PREEMPT_RT)
 * @tick_now:   the clock as the running tick handler read it
 * @tick:       the hrtimer driving the wheel (soft mode)
 * @programmed: tick whose end @tick is set for, TW_NO_TICK when not armed
 * @in_tick:    the tick handler runs; it programs @tick on its way out
 * @start:      CLOCK_MONOTONIC time of the start of tick 0
 * @tick_ns:    tick length in ns
 * @last_tick:  first tick whose end is beyond KTIME_MAX
 * @budget:     most callbacks per tick handler run
 * @stats:      event counters; the size fields are filled in by get_stats
 * @debugfs:    directory of the instance under /sys/kernel/debug/twheel
 * @mem:        the engine's slots, bitmaps or FIFOs (one allocation)
 */
struct twheel {
	spinlock_t lock;	/* see the synchronization rules above */
	struct tw_engine engine;
	struct hlist_head expired;
	unsigned long nr_expired;
	struct twheel_timer *running;
	int running_cpu;
#ifdef CONFIG_PREEMPT_RT
	spinlock_t expiry_lock;	/* see twheel_sync_wait() */
	atomic_t sync_waiters;
#else
	wait_queue_head_t running_wq;
#endif
	ktime_t tick_now;
	struct hrtimer tick;
	u64 programmed;
	bool in_tick;
	ktime_t start;
	u32 tick_ns;
	u64 last_tick;
	unsigned int budget;
	struct twheel_stats stats;
	struct dentry *debugfs;
	void *mem;
};

static struct twheel *twheel_default_wheel;
static struct dentry *twheel_debugfs_root;
static atomic_t twheel_next_id = ATOMIC_INIT(0);

static u64 twheel_time_to_tick(const struct twheel *w, ktime_t t)
{
	if (t <= w->start)
		return 0;
	return div_u64(t - w->start, w->tick_ns);
}

/* The time at which tick @tick is over, saturated to KTIME_MAX. */
static ktime_t twheel_tick_end(const struct twheel *w, u64 tick)
{
	if (tick >= w->last_tick)
		return KTIME_MAX;
	return w->start + (tick + 1) * w->tick_ns;
}

/*
 * Arm the hrtimer so that it fires no later than the end of @tick, or, with
 * TW_NO_TICK, let it go idle.  An hrtimer set earlier than needed is left
 * alone: it only costs a wakeup that re-evaluates.
 */
static void twheel_program(struct twheel *w, u64 tick)
{
	lockdep_assert_held(&w->lock);

	/*
	 * The handler cannot cancel its own hrtimer, and programs it from the
	 * wheel when it is done anyway: don't start it meanwhile.
	 */
	if (w->in_tick)
		return;
	if (tick == TW_NO_TICK) {
		if (w->programmed != TW_NO_TICK) {
			/* Fails only as the handler starts; it re-programs. */
			hrtimer_try_to_cancel(&w->tick);
			w->programmed = TW_NO_TICK;
		}
		return;
	}
	if (tick >= w->programmed)
		return;
	w->programmed = tick;
	hrtimer_start(&w->tick, twheel_tick_end(w, tick), HRTIMER_MODE_ABS_SOFT);
}

/* Take a pending timer off the wheel or the expired list. */
static void twheel_detach(struct twheel *w, struct twheel_timer *timer)
{
	if (timer->state & TWHEEL_TIMER_EXPIRED) {
		hlist_del_init(&timer->node.entry);
		timer->state &= ~TWHEEL_TIMER_EXPIRED;
		w->nr_expired--;
	} else {
		tw_engine_remove(&w->engine, &timer->node);
	}
}

/*
 * Waiting for a running callback.  Without PREEMPT_RT the waiter sleeps on
 * @running_wq and the handler wakes it after each callback.  With
 * PREEMPT_RT, as timer.c and hrtimer.c do, the handler holds @expiry_lock
 * while callbacks run and the waiter blocks on it: the lock is an rt_mutex
 * there, so a high-priority waiter boosts the softirq thread running the
 * callback instead of waiting behind lower-priority work.  Between
 * callbacks the handler lets waiters in.
 */
#ifdef CONFIG_PREEMPT_RT
static void twheel_sync_init(struct twheel *w)
{
	spin_lock_init(&w->expiry_lock);
	atomic_set(&w->sync_waiters, 0);
}

static void twheel_expiry_lock(struct twheel *w)
{
	spin_lock(&w->expiry_lock);
}

static void twheel_expiry_unlock(struct twheel *w)
{
	spin_unlock(&w->expiry_lock);
}

/* Called with @lock held after a callback returned. */
static void twheel_sync_wake(struct twheel *w)
{
	if (atomic_read(&w->sync_waiters)) {
		spin_unlock_irq(&w->lock);
		spin_unlock(&w->expiry_lock);
		spin_lock(&w->expiry_lock);
		spin_lock_irq(&w->lock);
	}
}

static void twheel_sync_wait(struct twheel *w, struct twheel_timer *timer)
{
	atomic_inc(&w->sync_waiters);
	spin_lock_bh(&w->expiry_lock);
	atomic_dec(&w->sync_waiters);
	spin_unlock_bh(&w->expiry_lock);
}
#else
static void twheel_sync_init(struct twheel *w)
{
	init_waitqueue_head(&w->running_wq);
}

static void twheel_expiry_lock(struct twheel *w) { }
static void twheel_expiry_unlock(struct twheel *w) { }

/* Called with @lock held after a callback returned. */
static void twheel_sync_wake(struct twheel *w)
{
	/* Pairs with the barrier in prepare_to_wait() of twheel_sync_wait(). */
	if (wq_has_sleeper(&w->running_wq))
		wake_up(&w->running_wq);
}

static bool twheel_not_running(struct twheel *w, struct twheel_timer *timer)
{
	return READ_ONCE(w->running) != timer;
}

static void twheel_sync_wait(struct twheel *w, struct twheel_timer *timer)
{
	/*
	 * prepare_to_wait() orders our queueing before the check of
	 * @running; the handler's wq_has_sleeper() orders its clearing of
	 * @running before its look at the queue: one of us sees the other.
	 */
	wait_event(w->running_wq, twheel_not_running(w, timer));
}
#endif

static void twheel_run_expired(struct twheel *w, ktime_t now)
{
	lockdep_assert_held(&w->lock);

	while (!hlist_empty(&w->expired)) {
		struct twheel_timer *timer;
		void (*fn)(struct twheel_timer *timer);
#ifdef CONFIG_LOCKDEP
		struct lockdep_map lockdep_map;
#endif

		timer = hlist_entry(w->expired.first, struct twheel_timer,
				    node.entry);
		twheel_detach(w, timer);
		if (now > ktime_add_safe(twheel_tick_end(w, timer->node.key),
					 w->tick_ns))
			w->stats.late++;
		w->stats.fired++;
		trace_twheel_timer_expire(timer, timer->expires,
					  ktime_sub(now, timer->expires));
		WRITE_ONCE(w->running, timer);
		WRITE_ONCE(w->running_cpu, smp_processor_id());
		fn = timer->function;
#ifdef CONFIG_LOCKDEP
		/* The callback may free the timer: use a copy of its map. */
		lockdep_copy_map(&lockdep_map, &timer->lockdep_map);
#endif
		spin_unlock_irq(&w->lock);
		twheel_delay(TWHEEL_DELAY_CALLBACK);

		lock_map_acquire(&lockdep_map);
		fn(timer);
		lock_map_release(&lockdep_map);

		spin_lock_irq(&w->lock);
		WRITE_ONCE(w->running, NULL);
		twheel_sync_wake(w);
	}
}

static enum hrtimer_restart twheel_tick(struct hrtimer *hrt)
{
	struct twheel *w = container_of(hrt, struct twheel, tick);
	unsigned int budget = w->budget;
	unsigned int n;
	ktime_t now;
	u64 clk, upto;

	twheel_expiry_lock(w);
	spin_lock_irq(&w->lock);
	w->programmed = TW_NO_TICK;
	w->in_tick = true;
	w->stats.wakeups++;
	now = ktime_get();
	WRITE_ONCE(w->tick_now, now);
	upto = twheel_time_to_tick(w, now);
	clk = tw_engine_clk(&w->engine);
	n = tw_engine_advance(&w->engine, upto, budget, &w->expired);
	trace_twheel_tick(clk, upto, clk & (tw_engine_slots(&w->engine) - 1), n);
	if (n) {
		struct twheel_timer *timer;

		hlist_for_each_entry(timer, &w->expired, node.entry)
			timer->state |= TWHEEL_TIMER_EXPIRED;
		w->nr_expired += n;
		twheel_run_expired(w, now);
	}

	w->in_tick = false;
	if (n == budget && tw_engine_clk(&w->engine) < upto) {
		/* Budget used up: run the rest from a fresh softirq pass. */
		w->programmed = tw_engine_clk(&w->engine);
		hrtimer_start(&w->tick, ktime_get(), HRTIMER_MODE_ABS_SOFT);
	} else {
		twheel_program(w, tw_engine_next_lower_bound(&w->engine));
	}
	spin_unlock_irq(&w->lock);
	twheel_expiry_unlock(w);

	/* Any re-arming was done with hrtimer_start() above. */
	return HRTIMER_NORESTART;
}

static int twheel_stats_show(struct seq_file *m, void *unused)
{
	struct twheel *w = m->private;
	struct twheel_stats st;

	twheel_get_stats(w, &st);
	seq_printf(m, "engine:\t\t%s\n", tw_engine_name(st.engine));
	seq_printf(m, "tick_ns:\t%llu\n", st.tick_ns);
	seq_printf(m, "slots:\t\t%llu\n", st.slots);
	seq_printf(m, "budget:\t\t%u\n", w->budget);
	seq_printf(m, "pending:\t%llu\n", st.pending);
	seq_printf(m, "armed:\t\t%llu\n", st.armed);
	seq_printf(m, "fired:\t\t%llu\n", st.fired);
	seq_printf(m, "cancelled:\t%llu\n", st.cancelled);
	seq_printf(m, "late:\t\t%llu\n", st.late);
	seq_printf(m, "max_slot:\t%llu\n", st.max_slot);
	seq_printf(m, "moves:\t\t%llu\n", st.moves);
	seq_printf(m, "wakeups:\t%llu\n", st.wakeups);
	seq_printf(m, "tick_armed:\t%d\n", twheel_tick_armed(w));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(twheel_stats);

/* /sys/kernel/debug/twheel/<name>/stats; debugfs errors are not fatal. */
static void twheel_debugfs_add(struct twheel *w, const char *name)
{
	char buf[16];

	if (!name) {
		snprintf(buf, sizeof(buf), "wheel%d",
			 atomic_inc_return(&twheel_next_id));
		name = buf;
	}
	w->debugfs = debugfs_create_dir(name, twheel_debugfs_root);
	debugfs_create_file("stats", 0444, w->debugfs, w, &twheel_stats_fops);
}

static struct twheel *twheel_create_named(u64 tick_ns, unsigned int bits,
					  unsigned int budget,
					  enum twheel_engine engine,
					  const char *name)
{
	struct twheel *w;
	void *mem;

	if (tick_ns < TWHEEL_TICK_NS_MIN || tick_ns > TWHEEL_TICK_NS_MAX ||
	    bits < TWHEEL_BITS_MIN || bits > TWHEEL_BITS_MAX || !budget ||
	    (unsigned int)engine >= TWHEEL_NR_ENGINES)
		return ERR_PTR(-EINVAL);

	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return ERR_PTR(-ENOMEM);
	mem = kvzalloc(tw_engine_mem_size(engine, bits), GFP_KERNEL);
	if (!mem) {
		kfree(w);
		return ERR_PTR(-ENOMEM);
	}

	spin_lock_init(&w->lock);
	twheel_sync_init(w);
	INIT_HLIST_HEAD(&w->expired);
	w->tick_ns = tick_ns;
	w->budget = budget;
	w->programmed = TW_NO_TICK;
	w->start = ktime_get();
	w->last_tick = div_u64(KTIME_MAX - w->start, tick_ns);
	w->mem = mem;
	tw_engine_init(&w->engine, engine, mem, bits, 0);
	twheel_hrtimer_setup(&w->tick, twheel_tick, CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_SOFT);
	twheel_debugfs_add(w, name);
	return w;
}

/**
 * twheel_create() - create a wheel instance
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 * @bits:    log2 of the slot count, TWHEEL_BITS_MIN .. TWHEEL_BITS_MAX
 * @budget:  most callbacks run per tick, at least 1
 *
 * The wheel's level 0 spans (1 << @bits) ticks; timers further out wait on
 * coarser levels and move down as they come near (the hierarchical
 * engine; twheel_create_engine() picks another).
 *
 * Context: process context, may sleep.
 * Return: the new instance, or ERR_PTR(-EINVAL) for parameters out of range
 * and ERR_PTR(-ENOMEM) when memory runs out.
 */
struct twheel *twheel_create(u64 tick_ns, unsigned int bits,
			     unsigned int budget)
{
	return twheel_create_named(tick_ns, bits, budget, TWHEEL_ENGINE_HIER,
				   NULL);
}
EXPORT_SYMBOL_GPL(twheel_create);

/**
 * twheel_create_engine() - create a wheel instance on a chosen engine
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 * @bits:    log2 of the level-0 slot count, TWHEEL_BITS_MIN ..
 *           TWHEEL_BITS_MAX (the Lawn uses at most 2^10 FIFOs)
 * @budget:  most callbacks run per tick, at least 1
 * @engine:  enum twheel_engine: TWHEEL_ENGINE_HIER (what twheel_create()
 *           uses), TWHEEL_ENGINE_SCHEME6 or TWHEEL_ENGINE_LAWN
 *
 * The engines keep the same guarantees (never early, exactly once, the
 * budget) and differ in cost: see Documentation/design.rst.
 *
 * Context: process context, may sleep.
 * Return: the new instance, or ERR_PTR(-EINVAL) for parameters out of range
 * or an unknown engine, and ERR_PTR(-ENOMEM) when memory runs out.
 */
struct twheel *twheel_create_engine(u64 tick_ns, unsigned int bits,
				    unsigned int budget,
				    enum twheel_engine engine)
{
	return twheel_create_named(tick_ns, bits, budget, engine, NULL);
}
EXPORT_SYMBOL_GPL(twheel_create_engine);

/**
 * twheel_engine_name() - the name of an engine
 * @engine: enum twheel_engine
 *
 * Context: any context.
 * Return: "hier", "scheme6" or "lawn" (the names the engine= module
 * parameter takes), "?" for an unknown value.
 */
const char *twheel_engine_name(enum twheel_engine engine)
{
	return tw_engine_name(engine);
}
EXPORT_SYMBOL_GPL(twheel_engine_name);

/**
 * twheel_destroy() - free a wheel instance
 * @wheel: the instance, from twheel_create(); NULL or an ERR_PTR is ignored
 *
 * Every timer of @wheel must have been cancelled with
 * twheel_timer_cancel_sync() or twheel_timer_shutdown_sync() before: their
 * memory holds links into the wheel and a pointer to it.  A wheel that
 * still has a timer pending is not freed; it is left running, intact, and
 * the refusal is logged, so that a caller that gets this wrong leaks the
 * wheel instead of corrupting memory.  A callback still running is waited
 * for.
 *
 * Context: process context, may sleep.
 * Return: 0 when the wheel was freed (or @wheel was NULL or an ERR_PTR);
 * -EBUSY when timers were still pending on it.
 */
int twheel_destroy(struct twheel *wheel)
{
	unsigned long pending;

	if (IS_ERR_OR_NULL(wheel))
		return 0;
	might_sleep();
	/* From here no tick handler runs, and so no callback. */
	hrtimer_cancel(&wheel->tick);
	spin_lock_irq(&wheel->lock);
	pending = tw_engine_count(&wheel->engine) + wheel->nr_expired;
	if (pending) {
		wheel->programmed = TW_NO_TICK;
		twheel_program(wheel,
			       tw_engine_next_lower_bound(&wheel->engine));
	}
	spin_unlock_irq(&wheel->lock);
	if (pending) {
		pr_err("refusing to destroy wheel %pd with %lu timers pending\n",
		       wheel->debugfs, pending);
		return -EBUSY;
	}
	debugfs_remove_recursive(wheel->debugfs);
	kvfree(wheel->mem);
	kfree(wheel);
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_destroy);

/**
 * twheel_default() - the module's default wheel instance
 *
 * Context: any context.
 * Return: the default instance.  Its tick length, size and budget are the
 * module parameters tick_ns, wheel_bits and budget; it lives as long as the
 * module.
 */
struct twheel *twheel_default(void)
{
	return twheel_default_wheel;
}
EXPORT_SYMBOL_GPL(twheel_default);

/**
 * __twheel_timer_setup() - prepare a timer; use twheel_timer_setup()
 * @timer:    the timer, caller-owned memory
 * @wheel:    the instance the timer will run on
 * @function: callback; runs in softirq context
 * @flags:    reserved, must be 0
 * @name:     lockdep name of the callback
 * @key:      lockdep class of the callback
 *
 * Must not be called on a pending timer.  Clears a previous shutdown.
 *
 * Context: any context.
 */
void __twheel_timer_setup(struct twheel_timer *timer, struct twheel *wheel,
			  void (*function)(struct twheel_timer *), u32 flags,
			  const char *name, struct lock_class_key *key)
{
	tw_node_init(&timer->node);
	timer->expires = 0;
	timer->function = function;
	timer->wheel = wheel;
	timer->state = 0;
	timer->flags = flags;
	lockdep_init_map(&timer->lockdep_map, name, key, 0);
}
EXPORT_SYMBOL_GPL(__twheel_timer_setup);

static int twheel_arm(struct twheel_timer *timer, ktime_t expires,
		      u64 slack_ns, enum twheel_mode mode, bool idle_only)
{
	struct twheel *w = timer->wheel;
	unsigned long flags;
	u64 lo, hi;
	int ret;

	if (WARN_ON_ONCE(!w || !timer->function))
		return -EINVAL;
	if (mode != TWHEEL_MODE_ABS && mode != TWHEEL_MODE_REL)
		return -EINVAL;
	if (expires < 0 || slack_ns > KTIME_MAX)
		return -EINVAL;

	spin_lock_irqsave(&w->lock, flags);
	if (timer->state & TWHEEL_TIMER_SHUTDOWN) {
		ret = -ESHUTDOWN;
		goto unlock;
	}
	ret = tw_node_linked(&timer->node);
	if (ret && idle_only) {
		ret = -EBUSY;
		goto unlock;
	}

	if (mode == TWHEEL_MODE_REL)
		expires = ktime_add_safe(ktime_get(), expires);
	lo = max(twheel_time_to_tick(w, expires), tw_engine_clk(&w->engine));
	hi = lo;
	if (slack_ns)
		hi = max(twheel_time_to_tick(w, ktime_add_safe(expires, slack_ns)),
			 lo);

	/* Keep a pending timer where it is when that still fits the range. */
	if (!ret || (timer->state & TWHEEL_TIMER_EXPIRED) ||
	    timer->node.key < lo || timer->node.key > hi) {
		if (ret)
			twheel_detach(w, timer);
		else
			w->stats.armed++;
		tw_engine_insert(&w->engine, &timer->node,
				 tw_engine_pick_key(&w->engine, lo, hi));
		twheel_program(w, timer->node.key);
	}
	WRITE_ONCE(timer->expires, expires);
	if (idle_only)
		trace_twheel_timer_start(timer, expires, slack_ns,
					 timer->node.key, false);
	else
		trace_twheel_timer_modify(timer, expires, slack_ns,
					  timer->node.key, ret);
unlock:
	spin_unlock_irqrestore(&w->lock, flags);
	return ret;
}

/**
 * twheel_timer_start() - start a timer that is not pending
 * @timer:   the timer, set up with twheel_timer_setup()
 * @expires: expiry, absolute CLOCK_MONOTONIC or relative to now (@mode)
 * @slack_ns: how much later than @expires the timer may fire, in ns
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * The timer fires no earlier than @expires and, when the wheel's ticks are
 * on time, no later than one tick plus @slack_ns after it.  An expiry in
 * the past fires at the next tick.
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: 0 on success; -EBUSY if the timer is already pending (use
 * twheel_timer_modify()); -ESHUTDOWN after twheel_timer_shutdown_sync();
 * -EINVAL for a negative expiry, an unknown @mode or a timer that was never
 * set up.
 */
int twheel_timer_start(struct twheel_timer *timer, ktime_t expires,
		       u64 slack_ns, enum twheel_mode mode)
{
	return twheel_arm(timer, expires, slack_ns, mode, true);
}
EXPORT_SYMBOL_GPL(twheel_timer_start);

/**
 * twheel_timer_modify() - (re)arm a timer, pending or not
 * @timer:   the timer, set up with twheel_timer_setup()
 * @expires: new expiry, absolute CLOCK_MONOTONIC or relative to now (@mode)
 * @slack_ns: how much later than @expires the timer may fire, in ns
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * O(1).  If the timer is pending and its current tick already lies within
 * [@expires, @expires + @slack_ns] it is not moved at all.  A timer whose
 * callback was due but has not started yet is re-armed instead of firing.
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: 1 if the timer was pending, 0 if it was not; -ESHUTDOWN after
 * twheel_timer_shutdown_sync(); -EINVAL as for twheel_timer_start().
 */
int twheel_timer_modify(struct twheel_timer *timer, ktime_t expires,
			u64 slack_ns, enum twheel_mode mode)
{
	return twheel_arm(timer, expires, slack_ns, mode, false);
}
EXPORT_SYMBOL_GPL(twheel_timer_modify);

/*
 * Take @timer off the wheel (or the expired list), as timer.c's
 * __try_to_del_timer_sync() does for @sync callers: while the timer's
 * callback runs, a sync caller leaves it alone and gets -1, so that it
 * waits and tries again once the callback returned; whatever the callback
 * (or another CPU) armed meanwhile is cancelled then.  Otherwise returns
 * 1 if the timer was pending, 0 if not.  @shutdown marks the timer shut
 * down first, even when -1 is returned, so re-arming fails from then on.
 */
static int twheel_try_cancel(struct twheel_timer *timer, bool shutdown,
			     bool sync)
{
	struct twheel *w = timer->wheel;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&w->lock, flags);
	if (shutdown)
		timer->state |= TWHEEL_TIMER_SHUTDOWN;
	if (sync && w->running == timer) {
		ret = -1;
	} else if (tw_node_linked(&timer->node)) {
		twheel_detach(w, timer);
		w->stats.cancelled++;
		trace_twheel_timer_cancel(timer);
		ret = 1;
		if (!tw_engine_count(&w->engine) && hlist_empty(&w->expired))
			twheel_program(w, TW_NO_TICK);
	}
	spin_unlock_irqrestore(&w->lock, flags);
	return ret;
}

/**
 * twheel_timer_cancel() - cancel a timer without waiting for its callback
 * @timer: the timer
 *
 * After this returns the timer is not pending, but its callback may still
 * be running on another CPU; see twheel_timer_cancel_sync().
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: 1 if the timer was pending, 0 if it was not.
 */
int twheel_timer_cancel(struct twheel_timer *timer)
{
	if (!timer->wheel)
		return 0;
	return twheel_try_cancel(timer, false, false);
}
EXPORT_SYMBOL_GPL(twheel_timer_cancel);

/* True when called from @timer's own running callback. */
static bool twheel_in_own_callback(struct twheel_timer *timer)
{
	struct twheel *w = timer->wheel;

	/* Softirqs do not nest: this CPU is inside that callback. */
	return in_serving_softirq() && READ_ONCE(w->running) == timer &&
	       READ_ONCE(w->running_cpu) == raw_smp_processor_id();
}

/*
 * Tell lockdep that we wait for the callback: the caller must not hold a
 * lock the callback takes.  The handler holds the map in softirq context,
 * so take it with interrupts off here, as timer_delete_sync() does.
 */
static void twheel_lockdep_wait(struct twheel_timer *timer)
{
#ifdef CONFIG_LOCKDEP
	unsigned long flags;

	local_irq_save(flags);
	lock_map_acquire(&timer->lockdep_map);
	lock_map_release(&timer->lockdep_map);
	local_irq_restore(flags);
#endif
}

static int twheel_cancel_wait(struct twheel_timer *timer, bool shutdown)
{
	struct twheel *w = timer->wheel;
	int ret;

	if (!w)
		return 0;

	twheel_lockdep_wait(timer);

	if (WARN_ON_ONCE(twheel_in_own_callback(timer)))
		return twheel_try_cancel(timer, shutdown, false);
	might_sleep();

	for (;;) {
		ret = twheel_try_cancel(timer, shutdown, true);
		if (ret >= 0)
			return ret;
		twheel_sync_wait(w, timer);
	}
}

/**
 * twheel_timer_cancel_sync() - cancel a timer and wait for its callback
 * @timer: the timer
 *
 * If the timer's callback is running, waits until it has returned and
 * then cancels whatever armed the timer meanwhile (the callback itself or
 * another CPU).  So on return the callback is not running and the timer is
 * not pending, unless something armed it after the wait (see
 * twheel_timer_shutdown_sync()).  The caller must not hold a lock that the
 * callback takes.
 *
 * Context: process context, may sleep while the callback runs.  From the
 * timer's own callback it warns and behaves as twheel_timer_cancel().
 * Return: 1 if the timer was pending, 0 if it was not.
 */
int twheel_timer_cancel_sync(struct twheel_timer *timer)
{
	return twheel_cancel_wait(timer, false);
}
EXPORT_SYMBOL_GPL(twheel_timer_cancel_sync);

/**
 * twheel_timer_shutdown_sync() - cancel a timer for good and wait
 * @timer: the timer
 *
 * As twheel_timer_cancel_sync(), but first marks the timer shut down so
 * that any later start or modify, including one from its running callback,
 * fails with -ESHUTDOWN.  Use it on teardown paths where timers re-arm
 * each other.  twheel_timer_setup() makes the timer usable again.
 *
 * Context: process context, may sleep while the callback runs.
 * Return: 1 if the timer was pending, 0 if it was not.
 */
int twheel_timer_shutdown_sync(struct twheel_timer *timer)
{
	return twheel_cancel_wait(timer, true);
}
EXPORT_SYMBOL_GPL(twheel_timer_shutdown_sync);

/**
 * twheel_timer_pending() - is the timer armed?
 * @timer: the timer
 *
 * Lockless, like timer_pending(): the answer may be stale by the time the
 * caller looks at it unless the caller serialises against the timer.
 *
 * Context: any context.
 * Return: true if the timer is pending (armed and its callback not begun).
 */
bool twheel_timer_pending(const struct twheel_timer *timer)
{
	return !hlist_unhashed_lockless(&timer->node.entry);
}
EXPORT_SYMBOL_GPL(twheel_timer_pending);

/*
 * For the device's QUERY: whether @timer is pending and whether its
 * callback runs, and the expiry in force, as one snapshot under the lock
 * (twheel_timer_pending() alone cannot tell a timer whose callback is about
 * to re-arm it from one that is idle).
 */
unsigned int twheel_timer_state(const struct twheel_timer *timer,
				ktime_t *expires)
{
	struct twheel *w = timer->wheel;
	unsigned int state = 0;
	unsigned long flags;

	spin_lock_irqsave(&w->lock, flags);
	if (tw_node_linked(&timer->node))
		state |= TWHEEL_STATE_PENDING;
	if (w->running == timer)
		state |= TWHEEL_STATE_RUNNING;
	*expires = timer->expires;
	spin_unlock_irqrestore(&w->lock, flags);
	return state;
}

/**
 * twheel_timer_expires() - the expiry the timer was last armed with
 * @timer: the timer
 *
 * Context: any context.
 * Return: the absolute CLOCK_MONOTONIC expiry last passed to start/modify
 * (meaningful while the timer is pending).
 */
ktime_t twheel_timer_expires(const struct twheel_timer *timer)
{
	return READ_ONCE(timer->expires);
}
EXPORT_SYMBOL_GPL(twheel_timer_expires);

/**
 * twheel_fire_time() - the time at which a running callback's timer fired
 * @timer: the timer whose callback is running
 *
 * The tick handler reads the clock once per run and fires every timer due
 * by then; this is that reading.  It is never before the timer's expiry,
 * and saves a callback that wants its fire time a clock read of its own
 * (costly with some clocksources, and a callback may run thousands of
 * times per tick).
 *
 * Context: the timer's own callback.
 * Return: the fire time, CLOCK_MONOTONIC.
 */
ktime_t twheel_fire_time(const struct twheel_timer *timer)
{
	return READ_ONCE(timer->wheel->tick_now);
}
EXPORT_SYMBOL_GPL(twheel_fire_time);

/**
 * twheel_next_expiry() - when the next timer will fire
 * @wheel: the instance
 * @bound: search no further than timers due by this CLOCK_MONOTONIC time
 *
 * The search costs what the engine's exact next key costs: O(levels) plus
 * one upper slot's walk for the hierarchical engine, O(1) for the Lawn, for
 * Scheme 6 the slots in tick order up to the first tick past @bound.
 *
 * Context: any context.
 * Return: the time at which the earliest pending timer fires (the end of its
 * tick), if that tick starts no later than @bound; KTIME_MAX otherwise.
 */
ktime_t twheel_next_expiry(struct twheel *wheel, ktime_t bound)
{
	unsigned long flags;
	ktime_t ret = KTIME_MAX;
	u64 key;

	spin_lock_irqsave(&wheel->lock, flags);
	if (!hlist_empty(&wheel->expired))
		key = max(tw_engine_clk(&wheel->engine), 1ULL) - 1;
	else
		key = tw_engine_next_key(&wheel->engine,
					 twheel_time_to_tick(wheel, bound));
	if (key != TW_NO_TICK)
		ret = twheel_tick_end(wheel, key);
	spin_unlock_irqrestore(&wheel->lock, flags);
	return ret;
}
EXPORT_SYMBOL_GPL(twheel_next_expiry);

/**
 * twheel_get_stats() - read the counters of a wheel
 * @wheel: the instance
 * @stats: filled with a consistent snapshot
 *
 * Context: any context.
 */
void twheel_get_stats(struct twheel *wheel, struct twheel_stats *stats)
{
	unsigned long flags;

	spin_lock_irqsave(&wheel->lock, flags);
	*stats = wheel->stats;
	/* The rest is derived from the wheel rather than kept twice. */
	stats->pending = tw_engine_count(&wheel->engine) + wheel->nr_expired;
	stats->max_slot = tw_engine_max_slot(&wheel->engine);
	stats->tick_ns = wheel->tick_ns;
	stats->slots = tw_engine_slots(&wheel->engine);
	stats->engine = wheel->engine.kind;
	stats->moves = tw_engine_moves(&wheel->engine);
	spin_unlock_irqrestore(&wheel->lock, flags);
}
EXPORT_SYMBOL_GPL(twheel_get_stats);

/**
 * twheel_tick_armed() - is the wheel's hrtimer armed?
 * @wheel: the instance
 *
 * Shows tickless operation: an empty, quiescent wheel has no hrtimer armed.
 *
 * Context: any context.
 * Return: true while the hrtimer is queued or its handler is running.
 */
bool twheel_tick_armed(struct twheel *wheel)
{
	return hrtimer_active(&wheel->tick);
}
EXPORT_SYMBOL_GPL(twheel_tick_armed);

int twheel_facility_init(u64 tick_ns, unsigned int bits, unsigned int budget,
			 enum twheel_engine engine)
{
	struct twheel *w;

	twheel_debugfs_root = debugfs_create_dir("twheel", NULL);
	twheel_delay_init(twheel_debugfs_root);
	w = twheel_create_named(tick_ns, bits, budget, engine, "default");
	if (IS_ERR(w)) {
		debugfs_remove_recursive(twheel_debugfs_root);
		return PTR_ERR(w);
	}
	twheel_default_wheel = w;
	return 0;
}

void twheel_facility_exit(void)
{
	twheel_destroy(twheel_default_wheel);
	twheel_default_wheel = NULL;
	debugfs_remove_recursive(twheel_debugfs_root);
}
