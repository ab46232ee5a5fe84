// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the timer facility around the hashed wheel
 *
 * A wheel instance (struct twheel) is one base (struct twheel_base) per
 * CPU that has been online since its creation, or a single one with
 * TWHEEL_CREATE_SINGLE_BASE.  A base is
 * an engine (engine.h: the hierarchical wheel of hier.c by default, the pure
 * Scheme 6 wheel of wheel.c or the Timer Lawn of lawn.c, chosen per
 * instance, the same for all its bases) guarded by the base's own spinlock
 * and driven by the base's own hrtimer in soft mode (callbacks in softirq
 * context) on the instance's clock (CLOCK_MONOTONIC, or CLOCK_BOOTTIME
 * chosen at creation), with its own list of expired timers, running
 * timer and counters.  This is the kernel's timer_bases: timers armed on
 * different CPUs never share a lock, a cache line of wheel state or an
 * hrtimer.  The engines stay pure; this file is the only one that knows
 * there are several.  It only calls an engine through engine.h: insert,
 * remove, move, advance, next_lower_bound, next_key, pick_key.
 *
 * The instance keeps what all its bases share and never changes after
 * creation: the time origin, the tick length, the budget (per base and
 * handler run) and the engine parameters.  So a tick number means the same
 * time on every base, and a timer keeps its tick when it moves.
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
 * A base's hrtimer is not armed while the base is empty: a CPU that arms no
 * timers costs no wakeups.  Otherwise it is programmed for the end of the
 * earliest tick at which a timer of that base may be due (the engine's
 * lower bound), not for every tick: a base holding timers
 * ten seconds or an hour out sleeps until the first of them is due, however
 * full its slots are.  The bound may be earlier than the earliest timer:
 * Scheme 6 leaves a slot's bound low after a cancel (one early wakeup per
 * slot, which walks that slot and tightens it); the hierarchical engine
 * keeps such bounds for its upper slots, and the advance that hands a far
 * timer out does its cascades on the way (one wakeup per timer due, none
 * per level or per tick).  A late hrtimer (or a
 * long-running callback) is caught up by advancing over all ticks that
 * have passed; nothing is lost.  Since only the tick handler advances the
 * engine, its clock stays where the last tick left it while the base
 * sleeps; a timer armed then would be placed by its distance from that
 * stale clock, on an upper level of the hierarchical engine when the
 * sleep plus its delay exceeds a revolution, and cascade on its way down.
 * So arming first moves the engine's clock on to the present, at most
 * once per jiffy, as timer.c's forward_timer_base() does
 * (twheel_forward()).  A base's hrtimer is started pinned, on the base's
 * own CPU: another CPU that needs it earlier kicks that CPU with an IPI
 * (twheel_program()), so a base's callbacks run on its CPU while that CPU
 * is online, and never wait for a task to be scheduled there.  The
 * handler itself re-arms it by returning HRTIMER_RESTART, or restarts it
 * if it was started again before the handler took the base lock
 * (twheel_tick_rearm()).
 *
 * Callbacks
 * ---------
 * A base's tick handler moves the due timers (at most @budget of them)
 * from its engine onto its @expired, then runs them one by one with the
 * base's lock dropped.  A timer on @expired still counts as pending: cancel
 * or modify take it off before its callback runs.  The engine's own work,
 * the hierarchical engine's cascades, comes in chunks of at most
 * TWHEEL_HOLD_MOVES timers per hold of the lock: the handler drops the
 * lock between two chunks as between two callbacks.  If the budget was
 * used up, @budget timers handed out or moved, the handler re-arms the
 * hrtimer for "now" and returns, so the rest run in a fresh softirq pass
 * and no single pass is unbounded.  Callbacks
 * may start, modify or cancel any timer of the instance, including their
 * own, and may free their own timer: the handler does not touch a timer
 * after its callback began, unless the callback asked it to with
 * twheel_timer_restart(): then the handler arms it when the callback has
 * returned, under the lock it retakes then anyway (hrtimer's
 * HRTIMER_RESTART), which spares a periodic timer a lock round trip.  The
 * handlers of different bases run in parallel, so callbacks of different
 * timers may run concurrently; those of one timer never do (see below).
 *
 * CPU hotplug
 * -----------
 * A per-CPU instance has a base for every CPU that has been online since
 * it was created: for those online at creation, and, from a dynamic
 * prepare-stage hotplug state's startup, for each CPU before it first
 * comes online (a failed allocation fails the CPU's bring-up, not a later
 * arm).  A base is kept, empty, when its CPU goes offline, until the
 * instance is destroyed: an idle timer's state word may still name it,
 * and the CPU's next bring-up then needs no memory.  When a CPU has gone
 * offline, that state's teardown (it runs on a live CPU, as
 * timers_dead_cpu() does) moves every timer pending on its base of every
 * per-CPU instance to the base of the CPU running the callback, keeping
 * its tick: none is lost, none fires early.
 *
 * Timer states, the base protocol and synchronization rules: the DOC block
 * below, which Documentation/design.rst includes.
 */

/**
 * DOC: Timer states and synchronization
 *
 * A timer is in one of these states, all changed under the lock of the
 * base it is on:
 *
 * - idle: not linked, callback not running.  start/modify link it.
 * - pending: linked into an engine slot of its base.  cancel unlinks it;
 *   modify moves it; the tick handler moves it to @expired when due.  For
 *   a moment it may be in transit to another base (TWHEEL_TS_TRANSIT):
 *   chosen its key there, linked nowhere yet (see below).
 * - due: linked on its base's @expired (TWHEEL_TS_EXPIRED), still pending:
 *   cancel and modify take it off before its callback runs.
 * - running: unlinked, its base's @running points at it, its callback runs
 *   with the lock dropped.  The callback, or another CPU, may arm it again,
 *   so a timer can be running and pending at once; it cannot be running
 *   twice (see below).
 * - shut down (TWHEEL_TS_SHUTDOWN, orthogonal to the above): start and
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
 * Which base a timer is on: the index of its base is kept in its @state
 * word with the state bits, and changes only (a) under the lock of the
 * base it names, when a start or modify moves the timer (below), a run of
 * operations takes it over (twheel_batch_take(), holding both bases'
 * locks) or hotplug empties a dead CPU's base (the same), or (b) under the
 * new base's lock only, by twheel_batch_arm(), for a timer just set up or
 * stopped in the same run: linked nowhere, not running, and every other
 * operation on it excluded by the batch's caller.  Every operation on a
 * timer finds and locks its base with twheel_lock_base(), timer.c's
 * lock_timer_base(): read the word, lock the base it names and check the
 * word still names it, else unlock and retry.  So whoever holds the lock
 * of the base the word names owns the timer.  Start and modify move a
 * timer to the calling CPU's base (unless TWHEEL_TIMER_PINNED or, while
 * pending, TWHEEL_TIMER_ANY_CPU keep it), with timer.c's rule from
 * __mod_timer(): a timer whose callback runs is never moved; it is armed
 * on the base running its callback.  So a running timer's base stays put
 * until its callback returns, which is what lets a sync cancel wait on the
 * right base, and a timer's callbacks cannot run on two bases at once:
 * callbacks of one timer never run concurrently.
 *
 * A move holds one base lock at a time.  Under the old base's lock the
 * mover takes the timer off that base, chooses its key and writes the
 * word: the new base, and TWHEEL_TS_TRANSIT, "pending, linked nowhere
 * yet".  Then it unlocks the old base and locks the new one.  From the
 * word's change on, the new base's lock owns the timer as any other of
 * its timers: whoever takes it first, the mover or an operation looking
 * for the timer, links the timer at that key (twheel_transit_end(), in
 * twheel_lock_base()) before anything else.  timer.c instead marks the
 * timer migrating, which makes everyone else spin until the mover holds
 * the new lock; its locks are raw, so the mover cannot be preempted in
 * between.  twheel's are not (on PREEMPT_RT they sleep), and a waiter of
 * higher priority spinning on the mover's CPU would keep it from ever
 * getting there.  Nor does a move hold both locks, which two CPUs moving
 * timers to each other's bases would serialize on.  The new base is the
 * mover's CPU's, and that CPU cannot go offline before the mover holds its
 * lock (interrupts stay off; on PREEMPT_RT, migration): so hotplug never
 * finds a timer in transit to a dead CPU's base.
 *
 * Two base locks are held together only by hotplug, to move all of a dead
 * CPU's timers, and by a run of operations taking a timer over from
 * another base (twheel_batch_take()).  They nest in the order of the
 * bases' indices, as double_rq_lock() does for runqueues: from a base to
 * one of a higher index hotplug takes the second lock nested; to a lower
 * index it tries the lock, and if that fails, drops its own, waits for the
 * other holding neither and starts over.  A run only ever tries the
 * second lock, whatever the order, and leaves the timer where it is when
 * that fails.
 *
 * All timer state of one base is protected by its lock, a spinlock_t
 * taken with interrupts disabled.  The non-sleeping API may be called from
 * any context, hard interrupts included, except on PREEMPT_RT, where
 * spinlock_t sleeps and hard interrupt context is excluded (as for any
 * spinlock_t user; the work under the lock is not bounded enough for a
 * raw lock: a tick may walk a slot of far timers).  Callbacks of one timer
 * never run concurrently with each other.  Callbacks of one base do not
 * either (an hrtimer's callback does not run on two CPUs at once), so an
 * instance created with TWHEEL_CREATE_SINGLE_BASE keeps the promise that
 * callbacks of the instance never run concurrently with each other.
 *
 * twheel_timer_cancel() does not wait: if the callback is running it
 * unlinks whatever is pending and returns, while the callback may still
 * be executing.  twheel_timer_cancel_sync() and
 * twheel_timer_shutdown_sync() sleep until a running callback has
 * returned (might_sleep()): on a wait queue of the base running it that the
 * handler wakes after each callback, or with PREEMPT_RT on an expiry lock
 * that the handler holds while callbacks run, so that the waiter boosts the
 * softirq thread (timer.c's and hrtimer.c's expiry lock).  As with
 * timer_delete_sync() the caller must not hold a lock the callback takes
 * (lockdep reports this through the timer's lockdep map), and cancel_sync
 * cannot stop a callback that re-arms its timer right after the wait -
 * twheel_timer_shutdown_sync() marks the timer shut down first, so such
 * re-arms fail with -ESHUTDOWN.  Calling either from the timer's own
 * callback would wait forever; it is reported with a warning and degrades
 * to twheel_timer_cancel().
 *
 * A wheel is destroyed only when no timer is pending on any of its bases:
 * its timers point at it and its slots link them.  twheel_destroy()
 * refuses otherwise.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/overflow.h>
#include <linux/preempt.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/wait.h>
#include <linux/twheel.h>
#include <kunit/visibility.h>

#include "compat.h"
#include "twheel_internal.h"
#include "engine.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

/*
 * Private timer state (struct twheel_timer::state): bits 0-7 are state
 * bits, bits 8-31 the index of the base the timer is on.  Written with
 * WRITE_ONCE() under the lock of that base (a move writes the new base's
 * index under the old one's: see the DOC block below); read locklessly
 * only by twheel_lock_base(), twheel_batch_hold(), twheel_batch_take()
 * and twheel_own_callback_base().  The base index starts at bit
 * TWHEEL_TS_BASE_SHIFT (twheel_internal.h, for twheel_batch_take()).
 */
#define TWHEEL_TS_EXPIRED	BIT(0)	/* on base->expired, callback due */
#define TWHEEL_TS_SHUTDOWN	BIT(1)	/* re-arming refused */
#define TWHEEL_TS_TRANSIT	BIT(2)	/* pending, not linked yet: see below */
#define TWHEEL_TS_PLACED	BIT(3)	/* armed since set up (PINNED) */
#define TWHEEL_TS_MOVING	BIT(4)	/* pending, relinked: see below */
#define TWHEEL_TS_BITS		(BIT(TWHEEL_TS_BASE_SHIFT) - 1)

/**
 * struct twheel_base - one CPU's share of a wheel instance
 * @lock:       protects everything below and the timers on this base
 * @wheel:      the instance
 * @cpu:        the CPU the base belongs to (of a single base: the first
 *              possible CPU, for its NUMA node only)
 * @index:      its index in the instance's @bases, as kept in timer state
 * @engine:     the pure engine keeping the base's timers
 * @expired:    timers handed out by the engine whose callbacks have not run
 * @nr_expired: number of timers on @expired
 * @running:    the timer whose callback runs now, or NULL
 * @running_cpu: CPU running the callbacks, valid while @running is set
 * @restart:    @running, when its callback asked twheel_timer_restart() to
 *              re-arm it on return; NULL otherwise.  Written by that
 *              callback without the lock: only the handler running it
 *              reads and clears it, on the same CPU, after it returned
 * @restart_expires: the absolute expiry of that re-arm
 * @restart_slack: its slack
 * @running_wq: cancel_sync waiters for @running to change (!PREEMPT_RT)
 * @nr_sync_waiters: how many sleep on @running_wq or are about to
 *              (!PREEMPT_RT)
 * @expiry_lock: held by the tick handler while callbacks run (PREEMPT_RT)
 * @sync_waiters: cancel_sync callers waiting on @expiry_lock (PREEMPT_RT)
 * @tick_now:   the clock as the running tick handler read it
 * @tick:       the hrtimer driving the base (soft mode)
 * @kick:       soft hrtimer on the base's CPU that starts @tick there for
 *              another CPU (twheel_kick_remote())
 * @kick_csd:   the IPI that starts @kick
 * @programmed: tick whose end @tick is set for (or, with a kick under way,
 *              is to be set for), TW_NO_TICK when not armed
 * @in_tick:    the tick handler runs; it programs @tick on its way out
 * @stopped:    twheel_quiesce() stopped the base: nothing starts @tick
 * @fwd_jiffies: jiffies when twheel_forward() last looked at the clock
 * @stats:      event counters; the size fields are filled in by get_stats
 * @mem:        the engine's slots, bitmaps or FIFOs (one allocation)
 */
struct twheel_base {
	spinlock_t lock;	/* see the synchronization rules above */
	struct twheel *wheel;
	unsigned int cpu;
	unsigned int index;
	struct tw_engine engine;
	struct hlist_head expired;
	unsigned long nr_expired;
	struct twheel_timer *running;
	int running_cpu;
	struct twheel_timer *restart;
	ktime_t restart_expires;
	u64 restart_slack;
#ifdef CONFIG_PREEMPT_RT
	spinlock_t expiry_lock;	/* see twheel_sync_wait() */
	atomic_t sync_waiters;
#else
	wait_queue_head_t running_wq;
	unsigned int nr_sync_waiters;
#endif
	ktime_t tick_now;
	struct hrtimer tick;
	struct hrtimer kick;
	call_single_data_t kick_csd;
	u64 programmed;
	bool in_tick;
	bool stopped;
	unsigned long fwd_jiffies;
	struct twheel_stats stats;
	void *mem;
} ____cacheline_aligned_in_smp;

/**
 * struct twheel - a wheel instance
 * @start:      time of the start of tick 0, on @clockid
 * @tick_ns:    tick length in ns
 * @last_tick:  first tick whose end is beyond KTIME_MAX
 * @budget:     most callbacks per tick handler run, per base
 * @bits:       log2 of the engine's level-0 slot count
 * @kind:       enum twheel_engine of every base
 * @flags:      TWHEEL_CREATE_* flags
 * @clockid:    CLOCK_MONOTONIC or CLOCK_BOOTTIME: what every time of the
 *              instance (expiries, fire times, @start) is read on
 * @nr_bases:   entries of @bases: nr_cpu_ids, or 1 for a single base
 * @cpuhp_node: link in the hotplug state's instances (per-CPU bases only)
 * @debugfs:    directory of the instance under /sys/kernel/debug/twheel
 * @bases:      the bases by index (CPU number); NULL for a CPU that has not
 *              been online since creation.  Set once, by twheel_create() or
 *              the hotplug state's startup, and kept until the instance is
 *              destroyed: read with twheel_base_at() where one may be set
 *              meanwhile
 *
 * Nothing else here changes after twheel_create(), so it is read without
 * a lock.
 */
struct twheel {
	ktime_t start;
	u32 tick_ns;
	u64 last_tick;
	unsigned int budget;
	unsigned int bits;
	enum twheel_engine kind;
	unsigned int flags;
	clockid_t clockid;
	unsigned int nr_bases;
	struct hlist_node cpuhp_node;
	struct dentry *debugfs;
	struct twheel_base *bases[];
};

static struct twheel *twheel_default_wheel;
static struct dentry *twheel_debugfs_root;
static atomic_t twheel_next_id = ATOMIC_INIT(0);
/* The dynamic hotplug state whose teardown empties a dead CPU's bases. */
static int twheel_cpuhp_state = -1;

/* The instance's clock, as its hrtimers run on it. */
static ktime_t twheel_now(const struct twheel *w)
{
	return w->clockid == CLOCK_BOOTTIME ? ktime_get_boottime() : ktime_get();
}

static bool twheel_single(const struct twheel *w)
{
	return w->flags & TWHEEL_CREATE_SINGLE_BASE;
}

/*
 * Base @i of @w, or NULL, where the hotplug state's startup may set it
 * meanwhile (twheel_base_alloc()).  A base that a timer's state word
 * names, or the base of the CPU we run on, was set before and is read
 * plainly.
 */
static struct twheel_base *twheel_base_at(const struct twheel *w,
					  unsigned int i)
{
	return READ_ONCE(w->bases[i]);
}

/* The base that timers armed on @cpu go to, or NULL if it has none. */
static struct twheel_base *twheel_cpu_base(const struct twheel *w,
					   unsigned int cpu)
{
	return twheel_base_at(w, twheel_single(w) ? 0 : cpu);
}

static unsigned int twheel_ts_base(u32 state)
{
	return state >> TWHEEL_TS_BASE_SHIFT;
}

/* State changes: lockless readers see the old word or the new one. */
static void twheel_ts_set(struct twheel_timer *timer, u32 bits)
{
	WRITE_ONCE(timer->state, timer->state | bits);
}

static void twheel_ts_clear(struct twheel_timer *timer, u32 bits)
{
	WRITE_ONCE(timer->state, timer->state & ~bits);
}

/*
 * A pending timer that is unlinked to be linked again, elsewhere on its
 * base or on another one, is pending throughout: timer.c's __mod_timer()
 * detaches it with detach_if_pending(..., false), which leaves its pprev
 * set, so timer_pending() never reads false in between.  The engines'
 * removals clear the node's pprev, so TWHEEL_TS_MOVING says it instead,
 * from before the unlink until after the timer is linked again, for
 * twheel_timer_pending(); under the base lock nobody else sees it.
 */
static void twheel_moving_begin(struct twheel_timer *timer)
{
	twheel_ts_set(timer, TWHEEL_TS_MOVING);
	/* the bit before the unlink: pairs with twheel_timer_pending() */
	smp_wmb();
}

static void twheel_moving_end(struct twheel_timer *timer, u32 bits)
{
	/* the link before the bit: pairs with twheel_timer_pending() */
	smp_store_release(&timer->state,
			  timer->state & ~(TWHEEL_TS_MOVING | bits));
}

/*
 * Take @base's lock; true if another CPU held it when we came, for the
 * statistics (the trylock costs what the lock costs when it is free).
 */
static __always_inline bool twheel_base_lock(struct twheel_base *base,
					     unsigned long *flags)
	__acquires(&base->lock)
{
	/*
	 * sparse cannot merge the contexts of a failed trylock and the lock
	 * after it ("different lock contexts for basic block"): it checks the
	 * plain lock.
	 */
#ifndef __CHECKER__
	if (spin_trylock_irqsave(&base->lock, *flags))
		return false;
#endif
	spin_lock_irqsave(&base->lock, *flags);
	return true;
}

static noinline void twheel_transit_end(struct twheel_base *base,
					struct twheel_timer *timer);

/*
 * Find and lock the base @timer is on: timer.c's lock_timer_base().  The
 * base named in the state word can change until we hold its lock, so
 * check it again then.  A timer in transit to that base is linked there
 * first, so that the caller finds it as any pending timer.
 */
static __always_inline struct twheel_base *
twheel_lock_base(struct twheel_timer *timer, unsigned long *flags)
	__acquires(&base->lock)
{
	struct twheel *w = timer->wheel;

	for (;;) {
		u32 st = READ_ONCE(timer->state);
		struct twheel_base *base = w->bases[twheel_ts_base(st)];
		bool contended = twheel_base_lock(base, flags);

		/* acquire: the mover's key and expiry before its word */
		st = smp_load_acquire(&timer->state);
		if (twheel_ts_base(st) == base->index) {
			base->stats.contended += contended;
			if (unlikely(st & TWHEEL_TS_TRANSIT))
				twheel_transit_end(base, timer);
			return base;
		}
		spin_unlock_irqrestore(&base->lock, *flags);
	}
}

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

static bool twheel_base_empty(const struct twheel_base *base)
{
	return !tw_engine_count(&base->engine) && hlist_empty(&base->expired);
}

/*
 * An hrtimer fires on the CPU that started it.  A base's callbacks should
 * run on the base's CPU (a pinned timer's callback on its CPU, and each
 * CPU's share of the work on it), so another CPU that needs the hrtimer
 * earlier (a modify of a pinned timer, of a running one, the handler run
 * on another CPU while the base's was offline) does not start it itself
 * but records the tick in @programmed and kicks the base's CPU, which
 * starts it there.  The kick must not wait for a task on that CPU: a work
 * item, as it once was, waited behind any SCHED_FIFO task there (for good
 * with RT throttling off), where add_timer_on() and hrtimers fire from
 * interrupts.  So it is an IPI (smp_call_function_single_async(), as
 * timer.c's and hrtimer.c's remote wake-ups are IPIs; irq_work_queue_on()
 * is not exported to modules in 6.1).  The IPI cannot take the base's
 * lock, a sleeping lock on PREEMPT_RT, and the hrtimer must not be started
 * without it (twheel_tick_rearm()), so it starts @kick, an hrtimer of its
 * own that only the base's CPU starts, due at once; @kick's handler runs
 * in the same softirq as the base's own and starts @tick under the lock.
 * A single base, or the base of an offline CPU, is started wherever.
 * twheel_kick_remote() sends the kick and returns true when the base's CPU
 * is another, online one; false means: start it here.
 */
static bool twheel_kick_remote(struct twheel_base *base)
{
	if (twheel_single(base->wheel) ||
	    base->cpu == raw_smp_processor_id() || !cpu_online(base->cpu))
		return false;
	/*
	 * -EBUSY: an IPI is queued and has not begun; its @kick takes the
	 * lock after we drop it and sees our @programmed.  -ENXIO: the CPU
	 * went offline after all (possible on PREEMPT_RT, where the lock
	 * leaves interrupts on): start it here.
	 */
	return smp_call_function_single_async(base->cpu,
					      &base->kick_csd) != -ENXIO;
}

/* The IPI of twheel_kick_remote(), on the base's CPU. */
static void twheel_kick_ipi(void *info)
{
	struct twheel_base *base = info;

	hrtimer_start(&base->kick, 0, HRTIMER_MODE_REL_PINNED_SOFT);
}

static enum hrtimer_restart twheel_kick(struct hrtimer *hrt)
{
	struct twheel_base *base = container_of(hrt, struct twheel_base, kick);

	spin_lock_irq(&base->lock);
	/* The handler programs on its way out; TW_NO_TICK: nothing left. */
	if (!base->in_tick && !base->stopped &&
	    base->programmed != TW_NO_TICK)
		hrtimer_start(&base->tick,
			      twheel_tick_end(base->wheel, base->programmed),
			      HRTIMER_MODE_ABS_PINNED_SOFT);
	spin_unlock_irq(&base->lock);
	return HRTIMER_NORESTART;
}

/*
 * Arm the base's hrtimer so that it fires no later than the end of @tick,
 * or, with TW_NO_TICK, let it go idle.  An hrtimer set earlier than needed
 * is left alone: it only costs a wakeup that re-evaluates.
 */
static noinline void __twheel_program(struct twheel_base *base, u64 tick)
{
	/*
	 * The handler cannot cancel its own hrtimer, and programs it from the
	 * engine when it is done anyway: don't start it meanwhile.
	 */
	if (base->in_tick || base->stopped)
		return;
	if (tick == TW_NO_TICK) {
		if (base->programmed != TW_NO_TICK) {
			/* Fails only as the handler starts; it re-programs. */
			hrtimer_try_to_cancel(&base->tick);
			base->programmed = TW_NO_TICK;
		}
		return;
	}
	if (tick >= base->programmed)
		return;
	base->programmed = tick;
	if (!twheel_kick_remote(base))
		hrtimer_start(&base->tick, twheel_tick_end(base->wheel, tick),
			      HRTIMER_MODE_ABS_PINNED_SOFT);
}

/*
 * __twheel_program(), with the commonest case inline: a timer due no
 * earlier than the tick the hrtimer is set for needs nothing.  (While the
 * handler runs or the base is stopped @programmed may be anything, and
 * __twheel_program() returns without a change then too.)
 */
static __always_inline void twheel_program(struct twheel_base *base, u64 tick)
{
	lockdep_assert_held(&base->lock);

	if (tick != TW_NO_TICK && tick >= base->programmed)
		return;
	__twheel_program(base, tick);
}

/*
 * Re-arm the handler's own hrtimer for @expires on its way out.  Nobody
 * starts it while @in_tick is set (see twheel_program()), so it is
 * normally off its queue and is re-armed by returning HRTIMER_RESTART,
 * which the hrtimer core does under the lock it already holds, rather
 * than by hrtimer_start(); should somebody start it between our unlock
 * and the return, the core leaves that arming alone.  But between the
 * core taking it off its queue and the handler taking the base lock,
 * twheel_program() may have started it again (a cancel of the base's last
 * timer could not stop it, an arm then started it).  The expiry of a
 * queued hrtimer must not be rewritten, or it would sit out of order in
 * its CPU's queue and hold back the soft hrtimers due before it: restart
 * it instead.
 */
static enum hrtimer_restart twheel_tick_rearm(struct twheel_base *base,
					      ktime_t expires)
{
	lockdep_assert_held(&base->lock);

	if (hrtimer_is_queued(&base->tick)) {
		hrtimer_start(&base->tick, expires,
			      HRTIMER_MODE_ABS_PINNED_SOFT);
		return HRTIMER_NORESTART;
	}
	hrtimer_set_expires(&base->tick, expires);
	return HRTIMER_RESTART;
}

/* twheel_program() for the handler on its way out */
static enum hrtimer_restart twheel_tick_program(struct twheel_base *base,
						u64 tick)
{
	lockdep_assert_held(&base->lock);

	/* @programmed is TW_NO_TICK since the handler began. */
	if (tick == TW_NO_TICK || base->stopped)
		return HRTIMER_NORESTART;
	base->programmed = tick;
	if (twheel_kick_remote(base))
		return HRTIMER_NORESTART;
	return twheel_tick_rearm(base, twheel_tick_end(base->wheel, tick));
}

/* Take a pending timer off its base's engine or expired list. */
static __always_inline void twheel_detach(struct twheel_base *base,
					  struct twheel_timer *timer)
{
	if (timer->state & TWHEEL_TS_EXPIRED) {
		hlist_del_init(&timer->node.entry);
		twheel_ts_clear(timer, TWHEEL_TS_EXPIRED);
		base->nr_expired--;
	} else {
		tw_engine_remove(&base->engine, &timer->node);
	}
}

/*
 * Waiting for a running callback.  Without PREEMPT_RT the waiter sleeps on
 * the base's @running_wq and the handler wakes it after each callback.
 * With PREEMPT_RT, as timer.c and hrtimer.c do, the handler holds the
 * base's @expiry_lock while callbacks run and the waiter blocks on it: the
 * lock is an rt_mutex there, so a high-priority waiter boosts the softirq
 * thread running the callback instead of waiting behind lower-priority
 * work.  Between callbacks the handler lets waiters in.
 */
#ifdef CONFIG_PREEMPT_RT
static void twheel_sync_init(struct twheel_base *base)
{
	spin_lock_init(&base->expiry_lock);
	atomic_set(&base->sync_waiters, 0);
}

static void twheel_expiry_lock(struct twheel_base *base)
{
	spin_lock(&base->expiry_lock);
}

static void twheel_expiry_unlock(struct twheel_base *base)
{
	spin_unlock(&base->expiry_lock);
}

/* Called with @lock held after a callback returned. */
static void twheel_sync_wake(struct twheel_base *base)
{
	if (atomic_read(&base->sync_waiters)) {
		spin_unlock_irq(&base->lock);
		spin_unlock(&base->expiry_lock);
		spin_lock(&base->expiry_lock);
		spin_lock_irq(&base->lock);
	}
}

static void twheel_sync_wait(struct twheel_base *base,
			     struct twheel_timer *timer)
{
	atomic_inc(&base->sync_waiters);
	spin_lock_bh(&base->expiry_lock);
	atomic_dec(&base->sync_waiters);
	spin_unlock_bh(&base->expiry_lock);
}
#else
static void twheel_sync_init(struct twheel_base *base)
{
	init_waitqueue_head(&base->running_wq);
	base->nr_sync_waiters = 0;
}

static void twheel_expiry_lock(struct twheel_base *base) { }
static void twheel_expiry_unlock(struct twheel_base *base) { }

/*
 * Called with @lock held after a callback returned and @running was
 * cleared.  The waiters count themselves under the same lock, so no
 * barrier is needed here (wq_has_sleeper()'s was one per callback).
 */
static __always_inline void twheel_sync_wake(struct twheel_base *base)
{
	if (unlikely(base->nr_sync_waiters))
		wake_up(&base->running_wq);
}

static bool twheel_not_running(struct twheel_base *base,
			       struct twheel_timer *timer)
{
	return READ_ONCE(base->running) != timer;
}

static void twheel_sync_wait(struct twheel_base *base,
			     struct twheel_timer *timer)
{
	/*
	 * We count ourselves under the base lock, under which the handler
	 * clears @running and then looks at the count: if it looked first,
	 * @running is clear by now and wait_event() returns at once; else
	 * it wakes us, and wait_event()'s queueing and check of @running
	 * under the queue's lock cannot miss that wakeup.  A running timer
	 * does not leave its base, so this is the base to wait on until its
	 * callback returned.
	 */
	spin_lock_irq(&base->lock);
	base->nr_sync_waiters++;
	spin_unlock_irq(&base->lock);
	wait_event(base->running_wq, twheel_not_running(base, timer));
	spin_lock_irq(&base->lock);
	base->nr_sync_waiters--;
	spin_unlock_irq(&base->lock);
}
#endif

static void twheel_restart_rearm(struct twheel_base *base);

/*
 * The first key that is not late at @now, on ticks of @tick_ns from
 * @start: a timer of key k is late when @now is more than a tick past the
 * end of k, now - tick_ns > start + (k + 1) * tick_ns, i.e. when
 * k + 1 < ceil((now - tick_ns - start) / tick_ns).  One division per
 * handler run instead of a multiplication per timer.
 */
VISIBLE_IF_KUNIT u64 twheel_late_below(ktime_t start, u32 tick_ns,
				       ktime_t now)
{
	s64 d = now - tick_ns - start;

	if (d <= 0)
		return 0;
	return div_u64(d + tick_ns - 1, tick_ns) - 1;
}
EXPORT_SYMBOL_IF_KUNIT(twheel_late_below);

static void twheel_run_expired(struct twheel_base *base, ktime_t now)
{
	struct twheel *w = base->wheel;
	u64 late_below = twheel_late_below(w->start, w->tick_ns, now);

	lockdep_assert_held(&base->lock);

	/* valid while @running is set, which it is only from here on */
	WRITE_ONCE(base->running_cpu, smp_processor_id());
	while (!hlist_empty(&base->expired)) {
		struct twheel_timer *timer;
		void (*fn)(struct twheel_timer *timer);
#ifdef CONFIG_LOCKDEP
		struct lockdep_map lockdep_map;
#endif

		struct hlist_node *next;

		timer = hlist_entry(base->expired.first, struct twheel_timer,
				    node.entry);
		/* twheel_detach() of the first timer on @expired */
		next = timer->node.entry.next;
		WRITE_ONCE(base->expired.first, next);
		if (next)
			WRITE_ONCE(next->pprev, &base->expired.first);
		INIT_HLIST_NODE(&timer->node.entry);
		twheel_ts_clear(timer, TWHEEL_TS_EXPIRED);
		base->nr_expired--;
		if (timer->node.key < late_below)
			base->stats.late++;
		/* The key is dead now; arming the timer again overwrites this. */
		WRITE_ONCE(timer->node.fired, now);
		base->stats.fired++;
		trace_twheel_timer_expire(timer, timer->expires,
					  ktime_sub(now, timer->expires));
		WRITE_ONCE(base->running, timer);
		fn = timer->function;
#ifdef CONFIG_LOCKDEP
		/* The callback may free the timer: use a copy of its map. */
		lockdep_copy_map(&lockdep_map, &timer->lockdep_map);
#endif
		spin_unlock_irq(&base->lock);
		twheel_delay(TWHEEL_DELAY_CALLBACK);

		lock_map_acquire(&lockdep_map);
		fn(timer);
		lock_map_release(&lockdep_map);

		spin_lock_irq(&base->lock);
		if (base->restart)
			twheel_restart_rearm(base);
		/*
		 * The last time the handler names @timer: whoever sees it
		 * changed may set the timer up again or reuse its memory
		 * (twheel_timer_wait_idle(), the device's one-shot entries).
		 * Do not touch @timer below.
		 */
		smp_store_release(&base->running, NULL);
		twheel_sync_wake(base);
	}
}

/*
 * Note the timers the engine moved between its lists (its count was
 * @before) under the hold of the base lock that is ending: the largest
 * such is the statistic that shows the bound of TWHEEL_HOLD_MOVES.
 */
static __always_inline void twheel_hold_moves(struct twheel_base *base,
					      u64 before)
{
	u64 moved = tw_engine_moves(&base->engine) - before;

	if (unlikely(moved > base->stats.max_hold_moves))
		base->stats.max_hold_moves = moved;
}

/*
 * Move at most @budget due timers from the engine to the expired list and
 * mark them.  The marking reads every timer anyway, so the engine may hand
 * out a due slot unread, and this loop counts and caps it: one pass over
 * cold timers instead of two.  The list is empty here: only this handler
 * fills it, and twheel_run_expired() empties it before the handler ends.
 * Returns how many were moved.
 */
static unsigned int twheel_take_expired(struct twheel_base *base, u64 upto,
					unsigned int budget)
{
	u64 moves = tw_engine_moves(&base->engine);
	struct hlist_node *rest = NULL;
	struct twheel_timer *timer;
	unsigned int got, n = 0;

	WARN_ON_ONCE(!hlist_empty(&base->expired));
	got = tw_engine_advance_loose(&base->engine, upto, budget,
				      &base->expired);
	twheel_hold_moves(base, moves);
	hlist_for_each_entry(timer, &base->expired, node.entry) {
		if (n == budget) {
			rest = &timer->node.entry;
			break;
		}
		twheel_ts_set(timer, TWHEEL_TS_EXPIRED);
		n++;
	}
	if (got == TW_UNCOUNTED)
		tw_engine_settle(&base->engine, n, rest);
	base->nr_expired += n;
	return n;
}

static enum hrtimer_restart twheel_tick(struct hrtimer *hrt)
{
	struct twheel_base *base = container_of(hrt, struct twheel_base, tick);
	struct twheel *w = base->wheel;
	unsigned int budget = w->budget, left, n;
	enum hrtimer_restart ret;
	u64 clk, upto, moves;
	ktime_t now;

	/* the hrtimer is off its queue: twheel_program() may start it again */
	twheel_delay(TWHEEL_DELAY_TICK);
	twheel_expiry_lock(base);
	spin_lock_irq(&base->lock);
	base->programmed = TW_NO_TICK;
	base->in_tick = true;
	base->stats.wakeups++;
	now = twheel_now(w);
	WRITE_ONCE(base->tick_now, now);
	upto = twheel_time_to_tick(w, now);
	moves = tw_engine_moves(&base->engine);
	for (left = budget;;) {
		clk = tw_engine_clk(&base->engine);
		n = twheel_take_expired(base, upto, left);
		trace_twheel_tick(w, base->index, clk, upto,
				  clk & (tw_engine_slots(&base->engine) - 1), n);
		left -= n;
		if (n)
			twheel_run_expired(base, now);
		if (tw_engine_clk(&base->engine) >= upto || !left ||
		    tw_engine_moves(&base->engine) - moves >= budget)
			break;
		/*
		 * The engine stopped a cascade at its chunk of moves: let the
		 * lock's waiters in before the next, as __run_timers() does
		 * between callbacks (which dropped it already if any ran).
		 */
		if (!n) {
			spin_unlock_irq(&base->lock);
			spin_lock_irq(&base->lock);
		}
	}

	base->in_tick = false;
	if (base->stopped) {
		ret = HRTIMER_NORESTART;
	} else if (tw_engine_clk(&base->engine) < upto) {
		/*
		 * Budget used up, in timers handed out or moved: do the rest
		 * in a fresh softirq pass (this pass's expiry check uses the
		 * time it started at).
		 */
		base->programmed = tw_engine_clk(&base->engine);
		ret = twheel_tick_rearm(base, twheel_now(w));
	} else {
		ret = twheel_tick_program(base,
					  tw_engine_next_lower_bound(&base->engine));
	}
	spin_unlock_irq(&base->lock);
	twheel_expiry_unlock(base);
	return ret;
}

/* A consistent snapshot of one base's counters. */
static void twheel_base_stats(struct twheel_base *base,
			      struct twheel_stats *st)
{
	unsigned long flags;

	spin_lock_irqsave(&base->lock, flags);
	*st = base->stats;
	/* The rest is derived from the engine rather than kept twice. */
	st->pending = tw_engine_count(&base->engine) + base->nr_expired;
	st->max_slot = tw_engine_max_slot(&base->engine);
	st->moves = tw_engine_moves(&base->engine);
	spin_unlock_irqrestore(&base->lock, flags);
	st->tick_ns = base->wheel->tick_ns;
	st->slots = tw_engine_slots(&base->engine);
	st->engine = base->wheel->kind;
	st->bases = 1;
}

static int twheel_stats_show(struct seq_file *m, void *unused)
{
	struct twheel *w = m->private;
	struct twheel_stats st;
	unsigned int i;

	twheel_get_stats(w, &st);
	seq_printf(m, "engine:\t\t%s\n", tw_engine_name(st.engine));
	seq_printf(m, "clock:\t\t%s\n",
		   w->clockid == CLOCK_BOOTTIME ? "boottime" : "monotonic");
	seq_printf(m, "tick_ns:\t%llu\n", st.tick_ns);
	seq_printf(m, "slots:\t\t%llu\n", st.slots);
	seq_printf(m, "budget:\t\t%u\n", w->budget);
	seq_printf(m, "bases:\t\t%llu\n", st.bases);
	seq_printf(m, "pending:\t%llu\n", st.pending);
	seq_printf(m, "armed:\t\t%llu\n", st.armed);
	seq_printf(m, "fired:\t\t%llu\n", st.fired);
	seq_printf(m, "cancelled:\t%llu\n", st.cancelled);
	seq_printf(m, "late:\t\t%llu\n", st.late);
	seq_printf(m, "max_slot:\t%llu\n", st.max_slot);
	seq_printf(m, "moves:\t\t%llu\n", st.moves);
	seq_printf(m, "max_hold_moves:\t%llu\n", st.max_hold_moves);
	seq_printf(m, "migrated:\t%llu\n", st.migrated);
	seq_printf(m, "contended:\t%llu\n", st.contended);
	seq_printf(m, "wakeups:\t%llu\n", st.wakeups);
	seq_printf(m, "tick_armed:\t%d\n", twheel_tick_armed(w));
	/* One line per base: its CPU (or "all") and its own counters. */
	seq_puts(m, "base\tpending\tarmed\tfired\tcancelled\tlate\tmigrated\twakeups\ttick_armed\tcontended\n");
	for (i = 0; i < w->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(w, i);

		if (!base)
			continue;
		twheel_base_stats(base, &st);
		if (twheel_single(w))
			seq_puts(m, "all");
		else
			seq_printf(m, "cpu%u", base->cpu);
		seq_printf(m, "\t%llu\t%llu\t%llu\t%llu\t\t%llu\t%llu\t\t%llu\t%d\t\t%llu\n",
			   st.pending, st.armed, st.fired, st.cancelled,
			   st.late, st.migrated, st.wakeups,
			   hrtimer_active(&base->tick), st.contended);
	}
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

static void twheel_free(struct twheel *w)
{
	unsigned int i;

	for (i = 0; i < w->nr_bases; i++) {
		if (!w->bases[i])
			continue;
		kvfree(w->bases[i]->mem);
		kfree(w->bases[i]);
	}
	kfree(w);
}

static int twheel_base_alloc(struct twheel *w, unsigned int index,
			     unsigned int cpu)
{
	int node = cpu_to_node(cpu);
	struct twheel_base *base;

	base = kzalloc_node(sizeof(*base), GFP_KERNEL, node);
	if (!base)
		return -ENOMEM;
	base->mem = kvzalloc_node(tw_engine_mem_size(w->kind, w->bits),
				  GFP_KERNEL, node);
	if (!base->mem) {
		kfree(base);
		return -ENOMEM;
	}
	spin_lock_init(&base->lock);
	twheel_sync_init(base);
	INIT_HLIST_HEAD(&base->expired);
	base->wheel = w;
	base->cpu = cpu;
	base->index = index;
	base->programmed = TW_NO_TICK;
	/* a base made for a CPU that comes online later starts at its time */
	tw_engine_init(&base->engine, w->kind, base->mem, w->bits,
		       twheel_time_to_tick(w, twheel_now(w)));
	tw_engine_set_chunk(&base->engine, TWHEEL_HOLD_MOVES);
	twheel_hrtimer_setup(&base->tick, twheel_tick, w->clockid,
			     HRTIMER_MODE_ABS_SOFT);
	twheel_hrtimer_setup(&base->kick, twheel_kick, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_SOFT);
	INIT_CSD(&base->kick_csd, twheel_kick_ipi, base);
	/* initialised before it is seen: pairs with twheel_base_at() */
	smp_store_release(&w->bases[index], base);
	return 0;
}

/*
 * Startup of twheel's hotplug state, for every per-CPU instance: @cpu is
 * about to come online (we run on another, and may sleep).  Its base is
 * made the first time; a CPU that was online before kept its own.
 */
static int twheel_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	struct twheel *w = hlist_entry(node, struct twheel, cpuhp_node);

	if (w->bases[cpu])
		return 0;
	return twheel_base_alloc(w, cpu, cpu);
}

/* twheel_create_attr() with the name of the instance's debugfs directory */
struct twheel *twheel_create_named(const struct twheel_attr *uattr,
				   const char *name)
{
	struct twheel_attr attr = {};
	unsigned int nr, cpu;
	struct twheel *w;
	int ret = 0;

	/* A caller built against a shorter struct gets 0 for the rest. */
	if (uattr->size < offsetofend(struct twheel_attr, tick_ns))
		return ERR_PTR(-EINVAL);
	if (uattr->size > sizeof(attr) &&
	    memchr_inv((const u8 *)uattr + sizeof(attr), 0,
		       uattr->size - sizeof(attr)))
		return ERR_PTR(-E2BIG);
	memcpy(&attr, uattr, min_t(size_t, uattr->size, sizeof(attr)));
	if (attr.tick_ns < TWHEEL_TICK_NS_MIN ||
	    attr.tick_ns > TWHEEL_TICK_NS_MAX ||
	    attr.bits < TWHEEL_BITS_MIN || attr.bits > TWHEEL_BITS_MAX ||
	    !attr.budget || (unsigned int)attr.engine >= TWHEEL_NR_ENGINES ||
	    (attr.flags & ~TWHEEL_CREATE_FLAGS) ||
	    (attr.clockid != CLOCK_MONOTONIC && attr.clockid != CLOCK_BOOTTIME))
		return ERR_PTR(-EINVAL);

	nr = (attr.flags & TWHEEL_CREATE_SINGLE_BASE) ? 1 : nr_cpu_ids;
	w = kzalloc(struct_size(w, bases, nr), GFP_KERNEL);
	if (!w)
		return ERR_PTR(-ENOMEM);
	w->tick_ns = attr.tick_ns;
	w->budget = attr.budget;
	w->bits = attr.bits;
	w->kind = attr.engine;
	w->flags = attr.flags;
	w->clockid = attr.clockid;
	w->nr_bases = nr;
	w->start = twheel_now(w);
	w->last_tick = div_u64(KTIME_MAX - w->start, w->tick_ns);

	if (twheel_single(w)) {
		ret = twheel_base_alloc(w, 0, cpumask_first(cpu_possible_mask));
	} else {
		/*
		 * From here the hotplug state's startup makes the base of each
		 * CPU that comes online; then, with none coming or going, we
		 * make those of the CPUs online already.  (Modules cannot add
		 * an instance with the hotplug lock held.)
		 */
		ret = cpuhp_state_add_instance_nocalls(twheel_cpuhp_state,
						       &w->cpuhp_node);
		if (!ret) {
			cpus_read_lock();
			for_each_online_cpu(cpu) {
				if (w->bases[cpu])
					continue;
				ret = twheel_base_alloc(w, cpu, cpu);
				if (ret)
					break;
			}
			cpus_read_unlock();
			if (ret)
				cpuhp_state_remove_instance_nocalls(twheel_cpuhp_state,
								    &w->cpuhp_node);
		}
	}
	if (ret) {
		twheel_free(w);
		return ERR_PTR(ret);
	}
	twheel_debugfs_add(w, name);
	return w;
}

/**
 * twheel_create_attr() - create a wheel instance from its attributes
 * @attr: what to create; @attr->size is sizeof(struct twheel_attr) as the
 *        caller was built with, and fields beyond it are taken as 0
 *
 * The one constructor the others wrap: tick, size, budget, engine, flags
 * and clock (struct twheel_attr).  On CLOCK_BOOTTIME every time of the
 * instance, absolute expiries and fire times included, is that clock's,
 * which goes on counting while the system is suspended: a timer due
 * during a suspend fires as soon as the system resumes.
 *
 * Context: process context, may sleep.
 * Return: the new instance; ERR_PTR(-EINVAL) for a @size below the first
 * version of the struct or a field out of range (an unknown engine, flag
 * or clock included), ERR_PTR(-E2BIG) for non-zero bytes beyond the struct
 * this module knows, and ERR_PTR(-ENOMEM) when memory runs out.
 */
struct twheel *twheel_create_attr(const struct twheel_attr *attr)
{
	return twheel_create_named(attr, NULL);
}
EXPORT_SYMBOL_GPL(twheel_create_attr);

/* The clock the bases' hrtimers run on, for KUnit: -1 for none. */
clockid_t twheel_tick_clockid(struct twheel *w)
{
	unsigned int i;

	for (i = 0; i < w->nr_bases; i++)
		if (w->bases[i])
			return w->bases[i]->tick.base->clockid;
	return -1;
}
EXPORT_SYMBOL_IF_KUNIT(twheel_tick_clockid);

/**
 * twheel_create() - create a wheel instance
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 * @bits:    log2 of the slot count, TWHEEL_BITS_MIN .. TWHEEL_BITS_MAX
 * @budget:  most callbacks run per tick and base, at least 1
 *
 * The instance has one base per CPU that is or comes online
 * (twheel_create_flags() with TWHEEL_CREATE_SINGLE_BASE gives it one).
 * Each base's level 0 spans (1 << @bits) ticks; timers further out wait
 * on coarser levels and move down as they come near (the hierarchical
 * engine; twheel_create_engine() picks another).
 *
 * Context: process context, may sleep.
 * Return: the new instance, or ERR_PTR(-EINVAL) for parameters out of range
 * and ERR_PTR(-ENOMEM) when memory runs out.
 */
struct twheel *twheel_create(u64 tick_ns, unsigned int bits,
			     unsigned int budget)
{
	return twheel_create_flags(tick_ns, bits, budget, TWHEEL_ENGINE_HIER,
				   0);
}
EXPORT_SYMBOL_GPL(twheel_create);

/**
 * twheel_create_engine() - create a wheel instance on a chosen engine
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 * @bits:    log2 of the level-0 slot count, TWHEEL_BITS_MIN ..
 *           TWHEEL_BITS_MAX (the Lawn uses at most 2^10 FIFOs)
 * @budget:  most callbacks run per tick and base, at least 1
 * @engine:  enum twheel_engine: TWHEEL_ENGINE_HIER (what twheel_create()
 *           uses), TWHEEL_ENGINE_SCHEME6 or TWHEEL_ENGINE_LAWN
 *
 * The engines keep the same guarantees (never early, exactly once, the
 * budget) and differ in cost: see Documentation/design.rst.  The instance
 * has one base per CPU that is or comes online, each with its own engine.
 *
 * Context: process context, may sleep.
 * Return: the new instance, or ERR_PTR(-EINVAL) for parameters out of range
 * or an unknown engine, and ERR_PTR(-ENOMEM) when memory runs out.
 */
struct twheel *twheel_create_engine(u64 tick_ns, unsigned int bits,
				    unsigned int budget,
				    enum twheel_engine engine)
{
	return twheel_create_flags(tick_ns, bits, budget, engine, 0);
}
EXPORT_SYMBOL_GPL(twheel_create_engine);

/**
 * twheel_create_flags() - create a wheel instance with creation flags
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 * @bits:    log2 of the level-0 slot count, TWHEEL_BITS_MIN ..
 *           TWHEEL_BITS_MAX (the Lawn uses at most 2^10 FIFOs)
 * @budget:  most callbacks run per tick and base, at least 1
 * @engine:  enum twheel_engine
 * @flags:   0 or TWHEEL_CREATE_SINGLE_BASE
 *
 * With TWHEEL_CREATE_SINGLE_BASE the instance is one base, one lock and one
 * hrtimer whichever CPU arms its timers, and its callbacks never run
 * concurrently with each other: for callers that rely on that.  Without it,
 * as twheel_create_engine().
 *
 * Context: process context, may sleep.
 * Return: the new instance, or ERR_PTR(-EINVAL) for parameters out of range,
 * an unknown engine or unknown flags, and ERR_PTR(-ENOMEM) when memory runs
 * out.
 */
struct twheel *twheel_create_flags(u64 tick_ns, unsigned int bits,
				   unsigned int budget,
				   enum twheel_engine engine, unsigned int flags)
{
	struct twheel_attr attr = {
		.size = sizeof(attr),
		.flags = flags,
		.clockid = CLOCK_MONOTONIC,
		.engine = engine,
		.bits = bits,
		.budget = budget,
		.tick_ns = tick_ns,
	};

	return twheel_create_attr(&attr);
}
EXPORT_SYMBOL_GPL(twheel_create_flags);

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

/*
 * Stop every base's hrtimers; from here no tick handler runs, and none
 * starts until twheel_resume().  Returns the timers still pending.
 */
static unsigned long twheel_quiesce(struct twheel *w)
{
	unsigned long pending = 0;
	unsigned int i;

	/* What starts @tick or sends a kick checks @stopped under the lock. */
	for (i = 0; i < w->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(w, i);

		if (!base)
			continue;
		spin_lock_irq(&base->lock);
		base->stopped = true;
		spin_unlock_irq(&base->lock);
		hrtimer_cancel(&base->tick);
	}
	/*
	 * Kicks sent before: an IPI still queued would start @kick, and
	 * free a base under its own feet.  IPIs are run in the order they
	 * were queued, so one more to every other CPU, waited for, comes
	 * after them (one to this CPU ran when it was sent).
	 */
	kick_all_cpus_sync();
	for (i = 0; i < w->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(w, i);

		if (!base)
			continue;
		hrtimer_cancel(&base->kick);
		spin_lock_irq(&base->lock);
		base->programmed = TW_NO_TICK;
		pending += tw_engine_count(&base->engine) + base->nr_expired;
		spin_unlock_irq(&base->lock);
	}
	return pending;
}

/* Undo twheel_quiesce() for a wheel that is left running. */
static void twheel_resume(struct twheel *w)
{
	unsigned int i;

	for (i = 0; i < w->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(w, i);

		if (!base)
			continue;
		spin_lock_irq(&base->lock);
		base->stopped = false;
		base->programmed = TW_NO_TICK;
		twheel_program(base, tw_engine_next_lower_bound(&base->engine));
		if (!hlist_empty(&base->expired))
			twheel_program(base, 0);
		spin_unlock_irq(&base->lock);
	}
}

/*
 * twheel_destroy(); with @abandon (the module's exit) a wheel that still
 * has timers pending is stopped and freed all the same.
 */
static int __twheel_destroy(struct twheel *wheel, bool abandon)
{
	unsigned long pending;

	if (IS_ERR_OR_NULL(wheel))
		return 0;
	might_sleep();
	/* No hotplug teardown moves timers while we look. */
	if (!twheel_single(wheel))
		cpuhp_state_remove_instance_nocalls(twheel_cpuhp_state,
						    &wheel->cpuhp_node);
	pending = twheel_quiesce(wheel);
	if (pending && !abandon) {
		twheel_resume(wheel);
		if (!twheel_single(wheel))
			cpuhp_state_add_instance_nocalls(twheel_cpuhp_state,
							 &wheel->cpuhp_node);
		pr_err("refusing to destroy wheel %pd with %lu timers pending\n",
		       wheel->debugfs, pending);
		return -EBUSY;
	}
	/*
	 * Abandoned timers are not touched: their owners are gone (a module
	 * that armed one depends on this one, so it was unloaded first) and
	 * their memory may be too.  Nothing of ours refers to them any more.
	 */
	if (pending)
		pr_err("%lu timers pending on wheel %pd at module exit: abandoned, their callbacks will not run\n",
		       pending, wheel->debugfs);
	debugfs_remove_recursive(wheel->debugfs);
	twheel_free(wheel);
	return pending ? -EBUSY : 0;
}

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
 * Context: process context, may sleep; not from a CPU hotplug callback.
 * Return: 0 when the wheel was freed (or @wheel was NULL or an ERR_PTR);
 * -EBUSY when timers were still pending on it.
 */
int twheel_destroy(struct twheel *wheel)
{
	return __twheel_destroy(wheel, false);
}
EXPORT_SYMBOL_GPL(twheel_destroy);

/**
 * twheel_default() - the module's default wheel instance
 *
 * Context: any context.
 * Return: the default instance, with one base per online CPU.  Its tick
 * length, size and budget are the module parameters tick_ns, wheel_bits and
 * budget; it lives as long as the module.
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
 * @flags:    0, TWHEEL_TIMER_PINNED or TWHEEL_TIMER_ANY_CPU: which base
 *            start and modify arm it on (see include/linux/twheel.h)
 * @name:     lockdep name of the callback
 * @key:      lockdep class of the callback
 *
 * Must not be called on a pending timer, nor while its callback runs.
 * Clears a previous shutdown.
 *
 * Context: any context.
 */
void __twheel_timer_setup(struct twheel_timer *timer, struct twheel *wheel,
			  void (*function)(struct twheel_timer *), u32 flags,
			  const char *name, struct lock_class_key *key)
{
	unsigned int index = 0;

	WARN_ON_ONCE(flags & ~TWHEEL_TIMER_FLAGS);
	/* Any base will do until the first arm; this CPU's is likely next. */
	if (wheel && !twheel_single(wheel))
		index = raw_smp_processor_id();
	tw_node_init(&timer->node);
	timer->expires = 0;
	timer->function = function;
	timer->wheel = wheel;
	WRITE_ONCE(timer->state, index << TWHEEL_TS_BASE_SHIFT);
	timer->flags = flags & TWHEEL_TIMER_FLAGS;
	lockdep_init_map(&timer->lockdep_map, name, key, 0);
}
EXPORT_SYMBOL_GPL(__twheel_timer_setup);

/*
 * The base @timer, now on @base (locked), is to be armed on.  A running
 * timer stays where its callback runs: see the DOC block.
 */
static __always_inline struct twheel_base *
twheel_target(struct twheel *w, struct twheel_timer *timer,
	      struct twheel_base *base, bool pending)
{
	if (twheel_single(w) || base->running == timer)
		return base;
	if (timer->flags & TWHEEL_TIMER_PINNED) {
		if ((timer->state & TWHEEL_TS_PLACED) && cpu_online(base->cpu))
			return base;
	} else if ((timer->flags & TWHEEL_TIMER_ANY_CPU) && pending) {
		return base;
	}
	/*
	 * The base lock keeps us on this CPU (it disables preemption, or
	 * migration on PREEMPT_RT); and any base would be correct anyway.
	 */
	return w->bases[raw_smp_processor_id()];
}

/*
 * Base locks nest in the order of the bases' indices (see the DOC block).
 * Holding @base's lock, a caller that needs @to's too takes it nested if
 * @to comes later, else tries it; if someone holds it, twheel_lock_wait()
 * drops @base's lock (restoring @flags), waits for @to's holding neither
 * (on PREEMPT_RT boosting its holder), and the caller starts over.
 */
static void twheel_lock_wait(struct twheel_base *base, struct twheel_base *to,
			     unsigned long flags)
	__releases(&base->lock)
{
	spin_unlock_irqrestore(&base->lock, flags);
	spin_lock_irqsave(&to->lock, flags);
	spin_unlock_irqrestore(&to->lock, flags);
}

/*
 * Move @base's engine clock on to the present tick, or to the engine's
 * next lower bound if that comes first: no key is below the bound, so
 * nothing is handed out, and the hierarchical engine stops at its next
 * cascade point rather than do it here, on the arm path, where a slot of
 * a million timers held the lock for a fifth of a second (the tick
 * handler does it, in chunks).  Never past the present: a timer armed later
 * for an expiry already past still gets the tick after it.  At most once
 * per jiffy, which bounds the clock reads and pure Scheme 6's bound
 * search, a pass over its slots; the test of the jiffy is inline, the
 * rest is not.
 */
static noinline void twheel_forward_clock(struct twheel_base *base,
					  unsigned long j)
{
	struct tw_engine *e = &base->engine;
	u64 moves = tw_engine_moves(e), to;

	base->fwd_jiffies = j;
	to = min(twheel_time_to_tick(base->wheel, twheel_now(base->wheel)),
		 tw_engine_next_lower_bound(e));
	if (to > tw_engine_clk(e))
		WARN_ON_ONCE(tw_engine_forward(e, to, &base->expired));
	twheel_hold_moves(base, moves);
}

static __always_inline void twheel_forward(struct twheel_base *base)
{
	unsigned long j = READ_ONCE(jiffies);

	if (unlikely(j != base->fwd_jiffies))
		twheel_forward_clock(base, j);
}

/* The ticks a timer due at @expires, with @slack_ns, may fire at on @base. */
static __always_inline void twheel_range(struct twheel_base *base,
					 ktime_t expires, u64 slack_ns,
					 u64 *lo, u64 *hi)
{
	struct twheel *w = base->wheel;

	*lo = max(twheel_time_to_tick(w, expires), tw_engine_clk(&base->engine));
	*hi = *lo;
	if (slack_ns)
		*hi = max(twheel_time_to_tick(w, ktime_add_safe(expires, slack_ns)),
			  *lo);
}

/*
 * The key in [@lo, @hi] for a timer on @base; without slack (@lo == @hi,
 * the commonest call) there is nothing to choose.
 */
static __always_inline u64 twheel_pick_key(struct twheel_base *base,
					   u64 lo, u64 hi)
{
	return lo == hi ? lo : tw_engine_pick_key(&base->engine, lo, hi);
}

/* Put @timer, on no list, on @base's engine with a key in [@lo, @hi]. */
static __always_inline void twheel_insert(struct twheel_base *base,
					  struct twheel_timer *timer,
					  u64 lo, u64 hi)
{
	u64 key = twheel_pick_key(base, lo, hi);

	tw_engine_insert(&base->engine, &timer->node, key);
	/* the engine may have moved a key below its clock up to it */
	twheel_program(base, timer->node.key);
}

/*
 * Link @timer, moved to @base (locked) and linked nowhere, at the key it
 * had; the engine moves a key @base's clock has passed up to it: later,
 * never earlier.
 */
static void twheel_link_at_key(struct twheel_base *base,
			       struct twheel_timer *timer)
{
	tw_engine_insert(&base->engine, &timer->node, timer->node.key);
	twheel_program(base, timer->node.key);
}

/* Link @timer, in transit to @base (locked), at the key its mover chose. */
static noinline void twheel_transit_end(struct twheel_base *base,
					struct twheel_timer *timer)
{
	twheel_forward(base);
	twheel_link_at_key(base, timer);
	twheel_moving_end(timer, TWHEEL_TS_TRANSIT);
}

/*
 * Move @timer, linked nowhere, its key chosen, from @base to @to: name @to
 * in its state word with TWHEEL_TS_TRANSIT, unlock @base, lock @to and link
 * the timer there unless whoever took @to's lock first did (see the DOC
 * block).  Interrupts stay disabled (the caller restores them when it
 * unlocks @to), and on PREEMPT_RT, where they do not, migration: either
 * keeps this CPU, whose base @to is, from going offline in between.
 */
static struct twheel_base *twheel_transit(struct twheel_timer *timer,
					  struct twheel_base *base,
					  struct twheel_base *to)
	__releases(&base->lock) __acquires(&to->lock)
{
	u32 st;

	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		migrate_disable();
	/* release: the key and expiry before the word that hands them on */
	smp_store_release(&timer->state,
			  (timer->state & TWHEEL_TS_BITS) | TWHEEL_TS_TRANSIT |
			  (to->index << TWHEEL_TS_BASE_SHIFT));
	spin_unlock(&base->lock);
	twheel_delay(TWHEEL_DELAY_MIGRATE);
	spin_lock(&to->lock);
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		migrate_enable();
	/* under @to's lock a word that names @to is stable */
	st = smp_load_acquire(&timer->state);
	if ((st & TWHEEL_TS_TRANSIT) && twheel_ts_base(st) == to->index)
		twheel_transit_end(to, timer);
	return to;
}

/*
 * Re-arm @timer, pending on @base's engine (not handed out), for a key in
 * [@lo, @hi]: it stays where it is when its key is in range, else the
 * engine moves it, which for a later key far out writes only the key.
 */
static __always_inline void twheel_move(struct twheel_base *base,
					struct twheel_timer *timer,
					u64 lo, u64 hi)
{
	if (timer->node.key >= lo && timer->node.key <= hi)
		return;
	twheel_moving_begin(timer);
	tw_engine_move(&base->engine, &timer->node,
		       twheel_pick_key(base, lo, hi));
	twheel_moving_end(timer, 0);
	twheel_program(base, timer->node.key);
}

/* The checks of the arguments every arming call takes, alike. */
static __always_inline bool twheel_args_valid(ktime_t expires, u64 slack_ns,
					      enum twheel_mode mode)
{
	return expires >= 0 && slack_ns <= KTIME_MAX &&
	       (mode == TWHEEL_MODE_ABS || mode == TWHEEL_MODE_REL);
}

/*
 * The base running @timer's callback when called from that callback on
 * this CPU, else NULL.
 */
static __always_inline struct twheel_base *
twheel_own_callback_base(struct twheel_timer *timer)
{
	struct twheel *w = timer->wheel;
	struct twheel_base *base;
	u32 st = READ_ONCE(timer->state);

	/*
	 * Inside its callback the timer cannot leave the base running it,
	 * so the word names that base; a stale word means we are not there.
	 */
	if (!w)
		return NULL;
	base = w->bases[twheel_ts_base(st)];
	/* Softirqs do not nest: this CPU is inside that callback. */
	if (in_serving_softirq() && READ_ONCE(base->running) == timer &&
	    READ_ONCE(base->running_cpu) == raw_smp_processor_id())
		return base;
	return NULL;
}

/*
 * The callback of @base's running timer asked for a restart and has
 * returned: arm the timer on this base, under the lock the handler holds
 * again anyway, unless it was shut down or armed again meanwhile.
 */
static void twheel_restart_rearm(struct twheel_base *base)
{
	struct twheel_timer *timer = base->restart;
	ktime_t expires = base->restart_expires;
	u64 lo, hi;

	lockdep_assert_held(&base->lock);
	base->restart = NULL;
	if ((timer->state & TWHEEL_TS_SHUTDOWN) || tw_node_linked(&timer->node))
		return;
	/* The handler's advance moved the engine's clock on: no forward. */
	twheel_range(base, expires, base->restart_slack, &lo, &hi);
	base->stats.armed++;
	twheel_insert(base, timer, lo, hi);
	WRITE_ONCE(timer->expires, expires);
	trace_twheel_timer_start(timer, expires, base->restart_slack,
				 timer->node.key, false);
}

static __always_inline int twheel_arm(struct twheel_timer *timer,
				      ktime_t expires, u64 slack_ns,
				      enum twheel_mode mode, bool idle_only)
{
	struct twheel *w = timer->wheel;
	struct twheel_base *base, *to;
	unsigned long flags;
	u64 lo, hi, key;
	int ret;

	if (WARN_ON_ONCE(!w || !timer->function))
		return -EINVAL;
	if (!twheel_args_valid(expires, slack_ns, mode))
		return -EINVAL;

	base = twheel_lock_base(timer, &flags);
	if (timer->state & TWHEEL_TS_SHUTDOWN) {
		ret = -ESHUTDOWN;
		goto unlock;
	}
	ret = tw_node_linked(&timer->node);
	if (ret && idle_only) {
		ret = -EBUSY;
		goto unlock;
	}
	if (mode == TWHEEL_MODE_REL)
		expires = ktime_add_safe(twheel_now(w), expires);

	to = twheel_target(w, timer, base, ret);
	/* after twheel_target(): a pinned timer not placed yet may move */
	twheel_ts_set(timer, TWHEEL_TS_PLACED);
	if (to != base) {
		if (ret) {
			/* pending until twheel_transit_end() linked it */
			twheel_moving_begin(timer);
			twheel_detach(base, timer);
			if (twheel_base_empty(base))
				twheel_program(base, TW_NO_TICK);
		}
		/* @to's clock may differ: its engine clamps the key to it */
		twheel_range(base, expires, slack_ns, &lo, &hi);
		key = tw_engine_pick_key(&base->engine, lo, hi);
		timer->node.key = key;
		WRITE_ONCE(timer->expires, expires);
		base = twheel_transit(timer, base, to);
		/* counted under the lock of the base that got it */
		if (ret)
			base->stats.migrated++;
		else
			base->stats.armed++;
	} else {
		twheel_forward(base);
		twheel_range(base, expires, slack_ns, &lo, &hi);
		if (ret && !(timer->state & TWHEEL_TS_EXPIRED)) {
			twheel_move(base, timer, lo, hi);
		} else if (ret) {
			/* due, its callback not begun: back on the engine */
			twheel_moving_begin(timer);
			twheel_detach(base, timer);
			twheel_insert(base, timer, lo, hi);
			twheel_moving_end(timer, 0);
		} else {
			base->stats.armed++;
			twheel_insert(base, timer, lo, hi);
		}
		key = timer->node.key;
		WRITE_ONCE(timer->expires, expires);
	}
	if (idle_only)
		trace_twheel_timer_start(timer, expires, slack_ns, key, false);
	else
		trace_twheel_timer_modify(timer, expires, slack_ns, key, ret);
unlock:
	spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/**
 * twheel_timer_start() - start a timer that is not pending
 * @timer:   the timer, set up with twheel_timer_setup()
 * @expires: expiry, absolute on the wheel's clock or relative to now (@mode)
 * @slack_ns: how much later than @expires the timer may fire, in ns
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * The timer fires no earlier than @expires and, when the wheel's ticks are
 * on time, no later than one tick plus @slack_ns after it.  An expiry in
 * the past fires at the next tick.  It is armed on the calling CPU's base
 * (unless TWHEEL_TIMER_PINNED keeps it on its own, or its callback is
 * running: then on the base running it).
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
 * @expires: new expiry, absolute on the wheel's clock or relative to now (@mode)
 * @slack_ns: how much later than @expires the timer may fire, in ns
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * O(1).  If the timer is pending on the calling CPU's base and its
 * current tick already lies within [@expires, @expires + @slack_ns] it is
 * not moved at all.  If it is on another base it moves to this CPU's,
 * unless its callback is running (it stays on the base running it),
 * TWHEEL_TIMER_PINNED keeps it on its own or TWHEEL_TIMER_ANY_CPU leaves a
 * pending timer where it is.  A timer whose callback was due but has not
 * started yet is re-armed instead of firing.
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

/**
 * twheel_timer_restart() - re-arm a timer from its callback, on return
 * @timer:   the timer whose callback is running on this CPU
 * @expires: the next expiry, absolute on the wheel's clock or relative to now
 *           (@mode)
 * @slack_ns: how much later than @expires the timer may fire, in ns
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * hrtimer's HRTIMER_RESTART for twheel: the timer is armed as if
 * twheel_timer_start() were the last thing its callback did, but by the
 * tick handler once the callback has returned, under the base lock it
 * takes again then anyway, so a periodic timer's re-arm costs neither a
 * lock round trip nor a search for its base.  It is armed on the base
 * that ran the callback, with the same guarantees as twheel_timer_start()
 * (never before @expires, a relative expiry counted from this call).  A
 * later call from the same callback replaces the expiry.  The re-arm is
 * dropped if, when the callback returns, the timer is pending again
 * (started or modified meanwhile, by the callback or another CPU: that
 * arming stands, as hrtimer does) or has been shut down.  As with a start
 * at the end of the callback, a twheel_timer_cancel() that returns while
 * the callback runs does not prevent the re-arm; the sync calls do, as
 * they wait for the callback and cancel after it.  The callback must not
 * free the timer once it asked for a restart.
 *
 * Context: only from @timer's own callback.
 * Return: 0 if the timer will be re-armed when its callback returns (unless
 * armed or shut down by then); -ESHUTDOWN if it is already shut down;
 * -EINVAL for a negative expiry, an unknown @mode, or a call from anywhere
 * but the timer's own running callback (use twheel_timer_start() there).
 */
int twheel_timer_restart(struct twheel_timer *timer, ktime_t expires,
			 u64 slack_ns, enum twheel_mode mode)
{
	struct twheel_base *base = twheel_own_callback_base(timer);

	if (!base || !twheel_args_valid(expires, slack_ns, mode))
		return -EINVAL;
	if (mode == TWHEEL_MODE_REL)
		expires = ktime_add_safe(twheel_now(base->wheel), expires);
	/* Checked again on return, under the lock: shutdown may come later. */
	if (READ_ONCE(timer->state) & TWHEEL_TS_SHUTDOWN)
		return -ESHUTDOWN;
	base->restart_expires = expires;
	base->restart_slack = slack_ns;
	base->restart = timer;
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_timer_restart);

/**
 * DOC: Runs of operations under one base lock
 *
 * The device arms and cancels thousands of timers per ioctl.  Taking a
 * base's lock and reading the clock once per timer costs more than the
 * wheel operation itself, so twheel_batch_begin() locks the calling CPU's
 * base and reads the clock once, twheel_batch_stop(), twheel_batch_arm()
 * and twheel_batch_modify() work on timers of that base, and
 * twheel_batch_end() unlocks.  A modify moves a pending timer within the
 * engine, as twheel_timer_modify() does, instead of a stop and an arm.
 * They are for a caller that serialises all operations on its timers
 * itself (the device's file mutex): no other CPU starts, modifies or
 * cancels them meanwhile; only their callbacks run concurrently.  A timer
 * on another base is brought over first by twheel_batch_take(), which
 * tries that base's lock while the run holds its own.  What they cannot
 * do this way (a timer whose base's lock another CPU holds, or whose
 * callback runs) they refuse, and the caller uses the ordinary functions
 * after twheel_batch_end().  A relative expiry counts from the
 * clock reading of twheel_batch_begin(), which is no later than any
 * operation of the run: a timer still never fires before the delay its
 * caller asked for.
 */

/**
 * twheel_batch_begin() - lock the calling CPU's base for a run of operations
 * @wheel: the instance
 * @bl:    the run, filled in
 *
 * The run stays on the calling CPU until twheel_batch_end(), so the base
 * it holds is the base of the CPU it runs on, and that CPU stays online.
 *
 * Context: process or softirq context; takes the base lock with interrupts
 * disabled until twheel_batch_end().
 */
void twheel_batch_begin(struct twheel *wheel, struct twheel_batch_lock *bl)
	__acquires(&bl->base->lock)
{
	struct twheel_base *base;
	bool contended;

	/*
	 * Not just the lock's own: between reading the CPU and locking its
	 * base we could be moved to another CPU, and ours taken offline and
	 * its base emptied by hotplug, which we would then arm timers on.
	 */
	migrate_disable();
	base = twheel_cpu_base(wheel, smp_processor_id());
	twheel_delay(TWHEEL_DELAY_BATCH_BEGIN);
	contended = twheel_base_lock(base, &bl->flags);

	/* Not "+= twheel_base_lock()": C may read the counter before the call. */
	base->stats.contended += contended;
	bl->base = base;
	bl->index = base->index;
	bl->now = twheel_now(wheel);
	twheel_forward(base);
}
EXPORT_SYMBOL_IF_KUNIT(twheel_batch_begin);

/**
 * twheel_batch_end() - unlock the base of a run of operations
 * @bl: the run
 *
 * Context: as twheel_batch_begin(); restores interrupts and lets the
 * caller migrate again.
 */
void twheel_batch_end(struct twheel_batch_lock *bl)
	__releases(&bl->base->lock)
{
	struct twheel_base *base = bl->base;

	if (twheel_base_empty(base))
		twheel_program(base, TW_NO_TICK);
	spin_unlock_irqrestore(&base->lock, bl->flags);
	migrate_enable();
}
EXPORT_SYMBOL_IF_KUNIT(twheel_batch_end);

/*
 * A timer the run may stop or re-arm: on its base (-EXDEV if not), its
 * callback not running (-EBUSY).  The state word names the base only
 * while no one else may move the timer; one in transit to it is linked
 * there first, as twheel_lock_base() does.
 */
static int twheel_batch_hold(struct twheel_base *base,
			     struct twheel_timer *timer)
{
	/* acquire: the mover's key and expiry before its word */
	u32 st = smp_load_acquire(&timer->state);

	if (twheel_ts_base(st) != base->index)
		return -EXDEV;
	if (unlikely(st & TWHEEL_TS_TRANSIT))
		twheel_transit_end(base, timer);
	if (base->running == timer)
		return -EBUSY;
	return 0;
}

/**
 * __twheel_batch_take() - bring a timer onto the run's base
 * @bl:    the run
 * @timer: the timer; no other CPU may start, modify or cancel it
 *
 * twheel_batch_stop() and twheel_batch_modify() act on timers of the run's
 * base.  A timer on another base is moved here, as a start or modify from
 * this CPU would move it (twheel_target()): pending, it keeps its key,
 * which this base's engine moves up to its clock if that is past (later,
 * never earlier); due and not run yet, it goes back onto the engine and
 * the next advance hands it out.  The run holds its own base's lock and
 * base locks nest only in index order ("Timer states and
 * synchronization"), so the other base's lock is only tried: a trylock
 * cannot wait, so it cannot deadlock with a CPU doing the same the other
 * way round.  When it comes back 0, the timer's callback cannot start
 * before twheel_batch_end(), and one that ran before is seen to have run:
 * what it wrote before its base's handler took that lock again is
 * visible.
 *
 * Context: between twheel_batch_begin() and twheel_batch_end().
 * Return: 0 if the timer is on the run's base (pending or not); -EXDEV if
 * it stays on another (that base's lock is held, or the timer is pinned
 * there) and -EBUSY if its callback runs there: then nothing was changed,
 * and the caller uses the single-timer functions after twheel_batch_end().
 */
int __twheel_batch_take(struct twheel_batch_lock *bl,
			struct twheel_timer *timer)
{
	struct twheel_base *base = bl->base, *from;
	bool pending;
	u32 st;
	int ret;

	lockdep_assert_held(&base->lock);
	st = READ_ONCE(timer->state);
	if (twheel_ts_base(st) == base->index)
		return 0;
	from = base->wheel->bases[twheel_ts_base(st)];
	if (!spin_trylock(&from->lock))
		return -EXDEV;
	/* under @from's lock, as a run holds its own base */
	ret = twheel_batch_hold(from, timer);
	if (ret)
		goto unlock;
	pending = tw_node_linked(&timer->node);
	ret = -EXDEV;
	if (twheel_target(base->wheel, timer, from, pending) != base)
		goto unlock;
	if (pending) {
		twheel_moving_begin(timer);
		twheel_detach(from, timer);
		if (twheel_base_empty(from))
			twheel_program(from, TW_NO_TICK);
	}
	/* under the lock of the base the word names, as any move */
	WRITE_ONCE(timer->state, (timer->state & TWHEEL_TS_BITS) |
		   (base->index << TWHEEL_TS_BASE_SHIFT));
	if (pending) {
		twheel_link_at_key(base, timer);
		twheel_moving_end(timer, 0);
		base->stats.migrated++;
	}
	ret = 0;
unlock:
	spin_unlock(&from->lock);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(__twheel_batch_take);

/**
 * twheel_batch_stop() - take a timer of the run's base off it
 * @bl:       the run
 * @timer:    the timer
 * @shutdown: mark it shut down, as twheel_timer_shutdown_sync()
 *
 * Context: between twheel_batch_begin() and twheel_batch_end().
 * Return: 1 if the timer was pending, 0 if not: either way it is now idle
 * and its callback not running.  -EXDEV if it is not on the run's base,
 * -EBUSY if its callback is running: then nothing was changed.
 */
int twheel_batch_stop(struct twheel_batch_lock *bl, struct twheel_timer *timer,
		      bool shutdown)
{
	struct twheel_base *base = bl->base;
	int ret;

	lockdep_assert_held(&base->lock);
	ret = twheel_batch_hold(base, timer);
	if (ret)
		return ret;
	if (shutdown)
		twheel_ts_set(timer, TWHEEL_TS_SHUTDOWN);
	if (!tw_node_linked(&timer->node))
		return 0;
	twheel_detach(base, timer);
	base->stats.cancelled++;
	trace_twheel_timer_cancel(timer);
	return 1;
}
EXPORT_SYMBOL_IF_KUNIT(twheel_batch_stop);

/* What twheel_batch_arm() and twheel_batch_modify() refuse alike. */
static __always_inline int
twheel_batch_check(const struct twheel_batch_lock *bl,
		   const struct twheel_timer *timer, ktime_t expires,
		   u64 slack_ns, enum twheel_mode mode)
{
	if (WARN_ON_ONCE(timer->wheel != bl->base->wheel || !timer->function))
		return -EINVAL;
	if (!twheel_args_valid(expires, slack_ns, mode))
		return -EINVAL;
	if (timer->state & TWHEEL_TS_SHUTDOWN)
		return -ESHUTDOWN;
	return 0;
}

/**
 * twheel_batch_arm() - arm an idle timer on the run's base
 * @bl:      the run
 * @timer:   the timer: just set up, or stopped by twheel_batch_stop() in
 *           this run; no other CPU may operate on it
 * @expires: expiry, absolute or relative to the run's clock reading
 * @slack_ns: as for twheel_timer_start()
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * Context: between twheel_batch_begin() and twheel_batch_end().
 * Return: 0; -EBUSY if the timer is pending, -ESHUTDOWN if it is shut
 * down, -EXDEV if it is pinned to another base, -EINVAL as for
 * twheel_timer_start().
 */
int twheel_batch_arm(struct twheel_batch_lock *bl, struct twheel_timer *timer,
		     ktime_t expires, u64 slack_ns, enum twheel_mode mode)
{
	struct twheel_base *base = bl->base;
	u32 st = timer->state;
	u64 lo, hi;
	int ret;

	lockdep_assert_held(&base->lock);
	ret = twheel_batch_check(bl, timer, expires, slack_ns, mode);
	if (ret)
		return ret;
	if (tw_node_linked(&timer->node) || (st & TWHEEL_TS_TRANSIT))
		return -EBUSY;
	if (twheel_ts_base(st) != base->index) {
		if ((timer->flags & TWHEEL_TIMER_PINNED) &&
		    (st & TWHEEL_TS_PLACED))
			return -EXDEV;
		/*
		 * Idle, its callback not running, and nobody else operates on
		 * it: no one can be looking for it on its old base.
		 */
		WRITE_ONCE(timer->state, (st & TWHEEL_TS_BITS) |
			   (base->index << TWHEEL_TS_BASE_SHIFT));
	}
	twheel_ts_set(timer, TWHEEL_TS_PLACED);

	if (mode == TWHEEL_MODE_REL)
		expires = ktime_add_safe(bl->now, expires);
	twheel_range(base, expires, slack_ns, &lo, &hi);
	base->stats.armed++;
	twheel_insert(base, timer, lo, hi);
	WRITE_ONCE(timer->expires, expires);
	trace_twheel_timer_start(timer, expires, slack_ns, timer->node.key,
				 false);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(twheel_batch_arm);

/**
 * twheel_batch_modify() - re-arm a timer of the run's base
 * @bl:      the run
 * @timer:   the timer; no other CPU may start, modify or cancel it
 * @expires: expiry, absolute or relative to the run's clock reading
 * @slack_ns: as for twheel_timer_start()
 * @mode:    TWHEEL_MODE_ABS or TWHEEL_MODE_REL
 *
 * As twheel_batch_stop() without shutdown followed by twheel_batch_arm(),
 * but a timer pending on the run's engine is not taken off it: it keeps its
 * place when its key fits the new range, and is moved (tw_engine_move())
 * otherwise, as twheel_timer_modify() does.  When it returns 0 or 1 the
 * timer's callback is not running, and cannot start before
 * twheel_batch_end().
 *
 * Context: between twheel_batch_begin() and twheel_batch_end().
 * Return: 1 if the timer was pending, 0 if not; -EXDEV if it is on another
 * base (or pinned to one) and -EBUSY if its callback is running, with
 * nothing changed; -ESHUTDOWN, -EINVAL as twheel_batch_arm().
 */
int twheel_batch_modify(struct twheel_batch_lock *bl,
			struct twheel_timer *timer, ktime_t expires,
			u64 slack_ns, enum twheel_mode mode)
{
	struct twheel_base *base = bl->base;
	u64 lo, hi;
	int ret;

	lockdep_assert_held(&base->lock);
	ret = twheel_batch_hold(base, timer);
	if (ret)
		return ret;
	if (!tw_node_linked(&timer->node))
		return twheel_batch_arm(bl, timer, expires, slack_ns, mode);
	ret = twheel_batch_check(bl, timer, expires, slack_ns, mode);
	if (ret)
		return ret;

	if (mode == TWHEEL_MODE_REL)
		expires = ktime_add_safe(bl->now, expires);
	twheel_range(base, expires, slack_ns, &lo, &hi);
	if (timer->state & TWHEEL_TS_EXPIRED) {
		/* handed out, its callback not started: back on the engine */
		twheel_moving_begin(timer);
		twheel_detach(base, timer);
		twheel_insert(base, timer, lo, hi);
		twheel_moving_end(timer, 0);
	} else {
		twheel_move(base, timer, lo, hi);
	}
	WRITE_ONCE(timer->expires, expires);
	trace_twheel_timer_modify(timer, expires, slack_ns, timer->node.key, 1);
	return 1;
}
EXPORT_SYMBOL_IF_KUNIT(twheel_batch_modify);

/*
 * Take @timer off its base's engine (or expired list), as timer.c's
 * __try_to_del_timer_sync() does for @sync callers: while the timer's
 * callback runs, a sync caller leaves it alone, gets -1 and in @waitbase
 * the base running the callback, so that it waits there and tries again
 * once the callback returned; whatever the callback (or another CPU) armed
 * meanwhile is cancelled then.  Otherwise returns 1 if the timer was
 * pending, 0 if not.  @shutdown marks the timer shut down first, even when
 * -1 is returned, so re-arming fails from then on.
 */
static __always_inline int twheel_try_cancel(struct twheel_timer *timer,
					     bool shutdown, bool sync,
					     struct twheel_base **waitbase)
{
	struct twheel_base *base;
	unsigned long flags;
	int ret = 0;

	base = twheel_lock_base(timer, &flags);
	if (shutdown)
		twheel_ts_set(timer, TWHEEL_TS_SHUTDOWN);
	if (sync && base->running == timer) {
		*waitbase = base;
		ret = -1;
	} else if (tw_node_linked(&timer->node)) {
		twheel_detach(base, timer);
		base->stats.cancelled++;
		trace_twheel_timer_cancel(timer);
		ret = 1;
		if (twheel_base_empty(base))
			twheel_program(base, TW_NO_TICK);
	}
	spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/**
 * twheel_timer_cancel() - cancel a timer without waiting for its callback
 * @timer: the timer
 *
 * After this returns the timer is not pending, but its callback may still
 * be running on another CPU, and may arm the timer again, itself or with
 * twheel_timer_restart() as it returns; see twheel_timer_cancel_sync().
 * Locks only the base the timer is on.
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: 1 if the timer was pending, 0 if it was not.
 */
int twheel_timer_cancel(struct twheel_timer *timer)
{
	if (!timer->wheel)
		return 0;
	return twheel_try_cancel(timer, false, false, NULL);
}
EXPORT_SYMBOL_GPL(twheel_timer_cancel);

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
	struct twheel_base *base = NULL;
	int ret;

	if (!timer->wheel)
		return 0;

	/*
	 * Before the lockdep check: the callback holds the timer's map, so
	 * lockdep would report recursion and switch itself off for the boot.
	 */
	if (WARN_ON_ONCE(twheel_own_callback_base(timer)))
		return twheel_try_cancel(timer, shutdown, false, NULL);
	twheel_lockdep_wait(timer);
	might_sleep();

	for (;;) {
		ret = twheel_try_cancel(timer, shutdown, true, &base);
		if (ret >= 0)
			return ret;
		twheel_sync_wait(base, timer);
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

/*
 * For the device, before it sets up a stopped timer again
 * (__twheel_timer_setup()'s rule): wait until the callback of @timer, if
 * it still runs, has returned.  Nobody may arm @timer meanwhile.  Cheap
 * when it does not run, the common case: one lockless look at the base
 * it ran on, where it stays while the callback runs.
 */
void twheel_timer_wait_idle(struct twheel_timer *timer)
{
	u32 st = READ_ONCE(timer->state);
	struct twheel_base *base = timer->wheel->bases[twheel_ts_base(st)];

	/* acquire: pairs with the handler's release once it is done with it */
	if (smp_load_acquire(&base->running) == timer)
		twheel_cancel_wait(timer, false);
}

/**
 * twheel_timer_pending() - is the timer armed?
 * @timer: the timer
 *
 * Lockless, like timer_pending(): the answer may be stale by the time the
 * caller looks at it unless the caller serialises against the timer.  A
 * pending timer that a modify moves, to another base included, reads as
 * pending throughout, as a timer_list does in __mod_timer().
 *
 * Context: any context.
 * Return: true if the timer is pending (armed and its callback not begun).
 */
bool twheel_timer_pending(const struct twheel_timer *timer)
{
	if (!hlist_unhashed_lockless(&timer->node.entry))
		return true;
	/*
	 * Unlinked: idle, or moving (twheel_moving_begin()).  A mover sets
	 * the bit before it unlinks and clears it after it linked again: if
	 * we read it clear after we saw the timer unlinked, the timer is
	 * idle, or linked again and the second look sees it.
	 */
	smp_rmb();	/* the unlink before the bit */
	if (READ_ONCE(timer->state) & TWHEEL_TS_MOVING)
		return true;
	smp_rmb();	/* the bit before the link */
	return !hlist_unhashed_lockless(&timer->node.entry);
}
EXPORT_SYMBOL_GPL(twheel_timer_pending);

/*
 * For the device's QUERY: whether @timer is pending and whether its
 * callback runs, and the expiry in force, as one snapshot under the lock
 * of its base (twheel_timer_pending() alone cannot tell a timer whose
 * callback is about to re-arm it from one that is idle).
 */
unsigned int twheel_timer_state(struct twheel_timer *timer,
				ktime_t *expires)
{
	struct twheel_base *base;
	unsigned int state = 0;
	unsigned long flags;

	base = twheel_lock_base(timer, &flags);
	if (tw_node_linked(&timer->node))
		state |= TWHEEL_STATE_PENDING;
	if (base->running == timer)
		state |= TWHEEL_STATE_RUNNING;
	*expires = timer->expires;
	spin_unlock_irqrestore(&base->lock, flags);
	return state;
}

/**
 * twheel_timer_expires() - the expiry the timer was last armed with
 * @timer: the timer
 *
 * Context: any context.
 * Return: the absolute expiry last passed to start/modify, on the wheel's
 * clock (meaningful while the timer is pending).
 */
ktime_t twheel_timer_expires(const struct twheel_timer *timer)
{
	return READ_ONCE(timer->expires);
}
EXPORT_SYMBOL_GPL(twheel_timer_expires);

/**
 * twheel_clock_now() - the current time on a wheel's clock
 * @wheel: the wheel
 *
 * Every time a wheel takes or gives (expiries, twheel_fire_time(),
 * twheel_next_expiry()) is on the clock it was created with
 * (struct twheel_attr): CLOCK_MONOTONIC, or CLOCK_BOOTTIME, which runs on
 * across suspend.  This reads that clock.
 *
 * Context: any context.
 * Return: ktime_get() for a CLOCK_MONOTONIC wheel, ktime_get_boottime()
 * for a CLOCK_BOOTTIME one.
 */
ktime_t twheel_clock_now(const struct twheel *wheel)
{
	return twheel_now(wheel);
}
EXPORT_SYMBOL_GPL(twheel_clock_now);

/**
 * twheel_fire_time() - the time at which a timer last fired
 * @timer: the timer
 *
 * The tick handler reads the clock once per run and fires every timer due
 * by then; this is that reading.  It is never before the timer's expiry,
 * and saves a callback that wants its fire time a clock read of its own
 * (costly with some clocksources, and a callback may run thousands of
 * times per tick).  After the callback it stays readable in the stopped
 * timer until the timer is armed again, so that a user who reports the
 * expiry later need not copy it.
 *
 * Context: the timer's own callback, or after it while the timer is not
 * armed again (the caller serialises against arming it, as for
 * twheel_timer_expires()).
 * Return: the fire time, on the wheel's clock.
 */
ktime_t twheel_fire_time(const struct twheel_timer *timer)
{
	/* The timer stays on the base running its callback. */
	u32 st = READ_ONCE(timer->state);
	struct twheel_base *base = timer->wheel->bases[twheel_ts_base(st)];

	/* A callback may have armed its timer again, over the fire time. */
	if (READ_ONCE(base->running) == timer)
		return READ_ONCE(base->tick_now);
	return READ_ONCE(timer->node.fired);
}
EXPORT_SYMBOL_GPL(twheel_fire_time);

/* The end of the earliest tick of @base's timers if <= @bound. */
static ktime_t twheel_base_next(struct twheel_base *base, u64 bound)
{
	unsigned long flags;
	ktime_t ret = KTIME_MAX;
	u64 key;

	spin_lock_irqsave(&base->lock, flags);
	if (!hlist_empty(&base->expired))
		key = max(tw_engine_clk(&base->engine), 1ULL) - 1;
	else
		key = tw_engine_next_key(&base->engine, bound);
	if (key != TW_NO_TICK)
		ret = twheel_tick_end(base->wheel, key);
	spin_unlock_irqrestore(&base->lock, flags);
	return ret;
}

/**
 * twheel_next_expiry() - when the next timer will fire
 * @wheel: the instance
 * @bound: search no further than timers due by this time of the wheel's clock
 *
 * The earliest over all bases, each locked in turn (so a snapshot per
 * base, not of the instance).  Per base, the search costs what the
 * engine's exact next key costs: O(levels) plus one upper slot's walk for
 * the hierarchical engine, O(1) for the Lawn, for Scheme 6 the slots in
 * tick order up to the first tick past @bound.
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: the time at which the earliest pending timer fires (the end of its
 * tick), if that tick starts no later than @bound; KTIME_MAX otherwise.
 */
ktime_t twheel_next_expiry(struct twheel *wheel, ktime_t bound)
{
	u64 tick = twheel_time_to_tick(wheel, bound);
	ktime_t ret = KTIME_MAX;
	unsigned int i;

	for (i = 0; i < wheel->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(wheel, i);

		if (base)
			ret = min(ret, twheel_base_next(base, tick));
	}
	return ret;
}
EXPORT_SYMBOL_GPL(twheel_next_expiry);

/**
 * twheel_get_stats() - read the counters of a wheel
 * @wheel: the instance
 * @stats: filled with the totals over its bases
 *
 * Each base is read as a consistent snapshot under its lock; the totals
 * add them up (max_slot is the largest).  The size fields (tick_ns, slots,
 * engine) are those of one base; @bases counts the bases.
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 */
void twheel_get_stats(struct twheel *wheel, struct twheel_stats *stats)
{
	struct twheel_stats st;
	unsigned int i;

	memset(stats, 0, sizeof(*stats));
	for (i = 0; i < wheel->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(wheel, i);

		if (!base)
			continue;
		twheel_base_stats(base, &st);
		stats->armed += st.armed;
		stats->fired += st.fired;
		stats->cancelled += st.cancelled;
		stats->late += st.late;
		stats->max_slot = max(stats->max_slot, st.max_slot);
		stats->max_hold_moves = max(stats->max_hold_moves,
					    st.max_hold_moves);
		stats->wakeups += st.wakeups;
		stats->pending += st.pending;
		stats->moves += st.moves;
		stats->migrated += st.migrated;
		stats->contended += st.contended;
		stats->bases += st.bases;
		stats->tick_ns = st.tick_ns;
		stats->slots = st.slots;
		stats->engine = st.engine;
	}
}
EXPORT_SYMBOL_GPL(twheel_get_stats);

/**
 * twheel_get_cpu_stats() - read the counters of one CPU's base
 * @wheel: the instance
 * @cpu:   a possible CPU
 * @stats: filled with a consistent snapshot of the base that timers armed
 *         on @cpu go to (of a single-base instance: its only base); all
 *         zero, @bases too, for a CPU that has not been online since the
 *         instance was created, which has no base
 *
 * Context: any context; on PREEMPT_RT not hard interrupt context.
 * Return: 0, or -EINVAL if @cpu is not a possible CPU.
 */
int twheel_get_cpu_stats(struct twheel *wheel, unsigned int cpu,
			 struct twheel_stats *stats)
{
	struct twheel_base *base;

	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	base = twheel_cpu_base(wheel, cpu);
	if (base) {
		twheel_base_stats(base, stats);
	} else {
		memset(stats, 0, sizeof(*stats));
		stats->tick_ns = wheel->tick_ns;
		stats->engine = wheel->kind;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(twheel_get_cpu_stats);

/**
 * twheel_tick_armed() - is any of the wheel's hrtimers armed?
 * @wheel: the instance
 *
 * Shows tickless operation: an empty, quiescent wheel has no hrtimer armed
 * on any base.
 *
 * Context: any context.
 * Return: true while the hrtimer of some base is queued or its handler is
 * running.
 */
bool twheel_tick_armed(struct twheel *wheel)
{
	unsigned int i;

	for (i = 0; i < wheel->nr_bases; i++) {
		struct twheel_base *base = twheel_base_at(wheel, i);

		if (base && hrtimer_active(&base->tick))
			return true;
	}
	return false;
}
EXPORT_SYMBOL_GPL(twheel_tick_armed);

/* Link the timers on @list into @to's engine at their ticks. */
static unsigned long twheel_move_list(struct hlist_head *list,
				      struct twheel_base *to)
{
	struct twheel_timer *timer;
	struct hlist_node *tmp;
	unsigned long moved = 0;

	hlist_for_each_entry_safe(timer, tmp, list, node.entry) {
		u64 key = timer->node.key;

		/*
		 * Not PLACED any more: a pinned timer goes to the base of
		 * the CPU that arms it next, not back to @to's every time.
		 */
		WRITE_ONCE(timer->state,
			   (timer->state & TWHEEL_TS_BITS &
			    ~(TWHEEL_TS_EXPIRED | TWHEEL_TS_PLACED)) |
			   TWHEEL_TS_MOVING | (to->index << TWHEEL_TS_BASE_SHIFT));
		smp_wmb();	/* see twheel_moving_begin() */
		hlist_del_init(&timer->node.entry);
		tw_engine_insert(&to->engine, &timer->node, key);
		twheel_moving_end(timer, 0);
		moved++;
	}
	return moved;
}

/*
 * Move everything pending on @from to @to, both locked: timers_dead_cpu().
 * The engine offers no walk, so advance it to the end of time (which hands
 * out every node) and start it afresh, empty, at its old clock.  Each
 * timer keeps its tick: a tick below @to's clock is clamped up to it,
 * which is later, never earlier.  Due timers whose callbacks @from's
 * handler has not started (it is not running: see the caller) go into
 * @to's engine the same way, at their tick, which is already over.
 */
static unsigned long twheel_base_move(struct twheel_base *from,
				      struct twheel_base *to)
{
	struct twheel *w = from->wheel;
	unsigned long moved;
	HLIST_HEAD(all);
	u64 clk;

	clk = tw_engine_clk(&from->engine);
	/* Every timer goes, so no hold here is bounded: chunks do not help. */
	tw_engine_set_chunk(&from->engine, 0);
	tw_engine_advance(&from->engine, w->last_tick + 1, 0, &all);
	memset(from->mem, 0, tw_engine_mem_size(w->kind, w->bits));
	tw_engine_init(&from->engine, w->kind, from->mem, w->bits, clk);
	tw_engine_set_chunk(&from->engine, TWHEEL_HOLD_MOVES);
	moved = twheel_move_list(&from->expired, to);
	from->nr_expired = 0;
	moved += twheel_move_list(&all, to);
	to->stats.migrated += moved;
	return moved;
}

/*
 * Teardown of twheel's hotplug state, for every per-CPU instance: @cpu is
 * dead; move its base's pending timers to the base of the CPU we run on
 * (a live one: the hotplug control thread, which may sleep).
 */
static int twheel_cpu_dead(unsigned int cpu, struct hlist_node *node)
{
	struct twheel *w = hlist_entry(node, struct twheel, cpuhp_node);
	struct twheel_base *from = w->bases[cpu], *to;
	unsigned long moved, flags;

	/*
	 * No base: twheel_create_named() has not made it yet, or a failed
	 * bring-up undoes the startup of a CPU that was never up.
	 */
	if (!from)
		return 0;

	/*
	 * Its hrtimer may still be queued, on the dead CPU or, programmed
	 * from elsewhere, on a live one: stop it and wait for a handler that
	 * runs callbacks, so that nothing walks @from->expired meanwhile.
	 * One that starts after that (re-programmed by an arm on @from, of
	 * a timer with TWHEEL_TIMER_ANY_CPU) finishes first, then we retry.
	 */
	for (;;) {
		hrtimer_cancel(&from->tick);
		spin_lock_irqsave(&from->lock, flags);
		/* Any live base would do; interrupts are off. */
		to = twheel_base_at(w, raw_smp_processor_id());
		/*
		 * None only while twheel_create_named() makes the bases of
		 * the online CPUs: nothing is armed on the instance yet.
		 */
		if (!to) {
			spin_unlock_irqrestore(&from->lock, flags);
			return 0;
		}
		if (from->in_tick) {
			spin_unlock_irqrestore(&from->lock, flags);
			continue;
		}
		if (from->index < to->index) {
			spin_lock_nested(&to->lock, SINGLE_DEPTH_NESTING);
			break;
		}
		if (spin_trylock(&to->lock))
			break;
		twheel_lock_wait(from, to, flags);
	}
	moved = twheel_base_move(from, to);
	if (moved)
		twheel_program(to, tw_engine_next_lower_bound(&to->engine));
	spin_unlock(&to->lock);
	hrtimer_try_to_cancel(&from->tick);
	from->programmed = TW_NO_TICK;
	spin_unlock_irqrestore(&from->lock, flags);
	if (moved)
		pr_debug("cpu%u offline: %lu timers of %pd moved to cpu%u\n",
			 cpu, moved, w->debugfs, to->cpu);
	return 0;
}

int twheel_facility_init(u64 tick_ns, unsigned int bits, unsigned int budget,
			 enum twheel_engine engine)
{
	struct twheel_attr attr = {
		.size = sizeof(attr),
		.clockid = CLOCK_MONOTONIC,
		.engine = engine,
		.bits = bits,
		.budget = budget,
		.tick_ns = tick_ns,
	};
	struct twheel *w;
	int ret;

	ret = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "twheel:prepare",
				      twheel_cpu_prepare, twheel_cpu_dead);
	if (ret < 0)
		return ret;
	twheel_cpuhp_state = ret;
	twheel_debugfs_root = debugfs_create_dir("twheel", NULL);
	twheel_delay_init(twheel_debugfs_root);
	w = twheel_create_named(&attr, "default");
	if (IS_ERR(w)) {
		debugfs_remove_recursive(twheel_debugfs_root);
		cpuhp_remove_multi_state(twheel_cpuhp_state);
		return PTR_ERR(w);
	}
	twheel_default_wheel = w;
	return 0;
}

void twheel_facility_exit(void)
{
	/*
	 * A timer left pending by an in-kernel user (a bug: twheel_destroy()
	 * would refuse) must not keep the module's hrtimers armed, its
	 * hotplug instance registered or its debugfs files up once the
	 * module is gone: stop and free the wheel whatever it holds.
	 */
	__twheel_destroy(twheel_default_wheel, true);
	twheel_default_wheel = NULL;
	debugfs_remove_recursive(twheel_debugfs_root);
	cpuhp_remove_multi_state(twheel_cpuhp_state);
}
