/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel - a hashed timing wheel timer facility (Varghese & Lauck, Scheme 6)
 *
 * In-kernel API.  See Documentation/kernel-api.rst and the head comment of
 * src/facility.c for the design, the guarantees and the synchronization
 * rules.
 */
#ifndef _LINUX_TWHEEL_H
#define _LINUX_TWHEEL_H

#include <linux/bits.h>
#include <linux/types.h>
#include <linux/list.h>
#include <linux/container_of.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/timekeeping.h>

struct twheel;

/**
 * struct twheel_node - wheel linkage of a timer (private to twheel)
 * @entry: link in an engine's slot or FIFO, or in the list of expired
 *         timers
 * @key:   absolute tick at whose end the timer fires, while it is pending
 * @fired: once the timer is no longer pending: the time its callback was
 *         last run for (twheel_fire_time()), which the facility stores
 *         over the dead key
 *
 * Every engine finds what it needs from @entry and @key: the hierarchical
 * one the level from the key and its clock, the Lawn a FIFO head from
 * @entry.pprev.  @fired shares the dead key's storage so that a stopped
 * timer can say when it fired without a field of its own: /dev/twheel
 * keeps millions of timers in its tables.
 */
struct twheel_node {
	struct hlist_node entry;
	union {
		u64 key;
		ktime_t fired;
	};
};

/**
 * struct twheel_timer - a caller-owned timer on a twheel
 * @node:     wheel linkage; private
 * @expires:  requested expiry, on the wheel's clock; valid while pending
 * @function: callback, runs in softirq context
 * @wheel:    the wheel the timer was set up on
 * @state:    private: state bits, and the index of the per-CPU base the
 *            timer is on (see src/facility.c)
 * @flags:    flags given to twheel_timer_setup() (TWHEEL_TIMER_*)
 * @lockdep_map: lockdep map of the callback, for cancel_sync checks
 *
 * Callers embed this in their own structure, set it up once with
 * twheel_timer_setup() and must not touch the fields directly.
 */
struct twheel_timer {
	struct twheel_node node;
	ktime_t expires;
	void (*function)(struct twheel_timer *timer);
	struct twheel *wheel;
	u32 state;
	u32 flags;
#ifdef CONFIG_LOCKDEP
	struct lockdep_map lockdep_map;
#endif
};

/*
 * Flags of twheel_timer_setup(): which CPU's base a timer is armed on.
 * Without either, start and modify arm the timer on the calling CPU's base
 * (moving it there if it is pending elsewhere), except while its callback
 * runs: then it stays on the base running it.
 *
 * TWHEEL_TIMER_PINNED:  the timer stays on the base of the CPU that armed it
 *                       first after twheel_timer_setup(), whichever CPU arms
 *                       it later; it moves only when that CPU goes offline
 * TWHEEL_TIMER_ANY_CPU: the timer may fire on any CPU: start and modify of a
 *                       pending timer leave it on its base (no move, one
 *                       lock), an idle one is armed on the calling CPU's;
 *                       the cheap choice for a timer re-armed from
 *                       several CPUs, as a move takes two bases' locks
 */
#define TWHEEL_TIMER_PINNED	BIT(0)
#define TWHEEL_TIMER_ANY_CPU	BIT(1)
#define TWHEEL_TIMER_FLAGS	(TWHEEL_TIMER_PINNED | TWHEEL_TIMER_ANY_CPU)

/*
 * Flags of twheel_create_flags().
 *
 * TWHEEL_CREATE_SINGLE_BASE: one base for the whole instance instead of one
 *                       per online CPU: every timer shares one lock and one
 *                       hrtimer, and callbacks of the instance never run
 *                       concurrently with each other (the promise of twheel
 *                       before per-CPU bases)
 */
#define TWHEEL_CREATE_SINGLE_BASE	BIT(0)
#define TWHEEL_CREATE_FLAGS		TWHEEL_CREATE_SINGLE_BASE

/**
 * enum twheel_mode - how the expiry passed to start/modify is read
 * @TWHEEL_MODE_ABS: absolute time of the wheel's clock (struct twheel_attr)
 * @TWHEEL_MODE_REL: delay from now
 */
enum twheel_mode {
	TWHEEL_MODE_ABS = 0,
	TWHEEL_MODE_REL = 1,
};

/**
 * struct twheel_stats - cumulative counters of a wheel or of one base
 * @armed:     timers started or modified while idle
 * @fired:     callbacks run
 * @cancelled: pending timers cancelled
 * @late:      timers that fired more than one tick plus their slack late
 * @max_slot:  longest slot list seen by an advance
 * @wakeups:   tick handler runs (hrtimer expiries)
 * @pending:   timers pending now
 * @tick_ns:   tick length
 * @slots:     number of level-0 slots (FIFOs for the Lawn)
 * @engine:    enum twheel_engine of the wheel
 * @moves:     timers moved by cascades (hierarchical engine), or sorted
 *             into a FIFO instead of appended (Lawn)
 * @migrated:  pending timers that moved onto this base (the instance: onto
 *             any base) from another: re-armed on another CPU, or taken
 *             over from a CPU that went offline
 * @contended: start, modify, cancel and state calls that found the lock
 *             of the timer's base held by another CPU and had to wait
 * @bases:     number of bases the figures cover
 * @max_hold_moves: the most timers moved between an engine's lists (the
 *             cascades of the hierarchical engine) under one hold of a
 *             base's lock, by the tick handler or an arm; at most
 *             TWHEEL_HOLD_MOVES (hotplug's hand-over of a dead CPU's
 *             timers, which moves them all, is not counted)
 */
struct twheel_stats {
	u64 armed;
	u64 fired;
	u64 cancelled;
	u64 late;
	u64 max_slot;
	u64 wakeups;
	u64 pending;
	u64 tick_ns;
	u64 slots;
	u64 engine;
	u64 moves;
	u64 migrated;
	u64 contended;
	u64 bases;
	u64 max_hold_moves;
};

/*
 * The most timers a base moves under one hold of its lock (see
 * Documentation/design.rst, "Bounded work under the lock").
 */
#define TWHEEL_HOLD_MOVES	256

/**
 * enum twheel_engine - the data structure a wheel instance keeps timers in
 * @TWHEEL_ENGINE_HIER:    Scheme 6 for the ticks of the current revolution,
 *                         hierarchical levels (Scheme 7) above; the default
 * @TWHEEL_ENGINE_SCHEME6: the pure hashed wheel: far timers share the slots
 *                         of near ones (for timers all within a revolution)
 * @TWHEEL_ENGINE_LAWN:    the Timer Lawn: a FIFO per timeout duration (for
 *                         few distinct durations)
 * @TWHEEL_NR_ENGINES:     number of engines
 *
 * Documentation/design.rst compares them.
 */
enum twheel_engine {
	TWHEEL_ENGINE_HIER = 0,
	TWHEEL_ENGINE_SCHEME6 = 1,
	TWHEEL_ENGINE_LAWN = 2,
	TWHEEL_NR_ENGINES
};

/**
 * struct twheel_attr - what twheel_create_attr() creates
 * @size:    sizeof(struct twheel_attr) as the caller was built with: fields
 *           added later are appended, and read as 0 for a shorter struct
 * @flags:   0 or TWHEEL_CREATE_SINGLE_BASE
 * @clockid: CLOCK_MONOTONIC, which stops while the system is suspended, or
 *           CLOCK_BOOTTIME, which counts the suspended time too: the clock
 *           of every expiry and fire time of the instance and of its
 *           hrtimers
 * @engine:  enum twheel_engine
 * @bits:    log2 of the level-0 slot count, TWHEEL_BITS_MIN ..
 *           TWHEEL_BITS_MAX (the Lawn uses at most 2^10 FIFOs)
 * @budget:  most callbacks run per tick and base, at least 1
 * @tick_ns: tick length in ns, TWHEEL_TICK_NS_MIN .. TWHEEL_TICK_NS_MAX
 */
struct twheel_attr {
	u32 size;
	u32 flags;
	clockid_t clockid;
	enum twheel_engine engine;
	unsigned int bits;
	unsigned int budget;
	u64 tick_ns;
};

/* Limits of wheel parameters. */
#define TWHEEL_TICK_NS_MIN	1000ULL		/* 1 us */
#define TWHEEL_TICK_NS_MAX	1000000000ULL	/* 1 s */
#define TWHEEL_BITS_MIN		4
#define TWHEEL_BITS_MAX		20
/* The default wheel's, the module's wheel_bits: 8192 level-0 slots. */
#define TWHEEL_BITS_DEFAULT	13

struct twheel *twheel_create_attr(const struct twheel_attr *attr);
struct twheel *twheel_create(u64 tick_ns, unsigned int bits,
			     unsigned int budget);
struct twheel *twheel_create_engine(u64 tick_ns, unsigned int bits,
				    unsigned int budget,
				    enum twheel_engine engine);
struct twheel *twheel_create_flags(u64 tick_ns, unsigned int bits,
				   unsigned int budget,
				   enum twheel_engine engine, unsigned int flags);
const char *twheel_engine_name(enum twheel_engine engine);
int twheel_destroy(struct twheel *wheel);
struct twheel *twheel_default(void);

void __twheel_timer_setup(struct twheel_timer *timer, struct twheel *wheel,
			  void (*function)(struct twheel_timer *), u32 flags,
			  const char *name, struct lock_class_key *key);

#ifdef CONFIG_LOCKDEP
#define twheel_timer_setup(_timer, _wheel, _fn, _flags)			\
	do {								\
		static struct lock_class_key __key;			\
		__twheel_timer_setup((_timer), (_wheel), (_fn), (_flags),\
				     #_timer, &__key);			\
	} while (0)
#else
#define twheel_timer_setup(_timer, _wheel, _fn, _flags)			\
	__twheel_timer_setup((_timer), (_wheel), (_fn), (_flags), NULL, NULL)
#endif

int twheel_timer_start(struct twheel_timer *timer, ktime_t expires,
		       u64 slack_ns, enum twheel_mode mode);
int twheel_timer_modify(struct twheel_timer *timer, ktime_t expires,
			u64 slack_ns, enum twheel_mode mode);
int twheel_timer_restart(struct twheel_timer *timer, ktime_t expires,
			 u64 slack_ns, enum twheel_mode mode);
int twheel_timer_cancel(struct twheel_timer *timer);
int twheel_timer_cancel_sync(struct twheel_timer *timer);
int twheel_timer_shutdown_sync(struct twheel_timer *timer);
bool twheel_timer_pending(const struct twheel_timer *timer);
ktime_t twheel_timer_expires(const struct twheel_timer *timer);
ktime_t twheel_fire_time(const struct twheel_timer *timer);
ktime_t twheel_clock_now(const struct twheel *wheel);

ktime_t twheel_next_expiry(struct twheel *wheel, ktime_t bound);
void twheel_get_stats(struct twheel *wheel, struct twheel_stats *stats);
int twheel_get_cpu_stats(struct twheel *wheel, unsigned int cpu,
			 struct twheel_stats *stats);
bool twheel_tick_armed(struct twheel *wheel);

/* Helpers in the style of timer_list's and hrtimer's */

/**
 * twheel_timer_container_of() - the structure a timer is embedded in
 * @var:        a pointer of the structure's type (only its type is used)
 * @timer:      the struct twheel_timer, as a callback gets it
 * @field:      the name of the timer's member in the structure
 *
 * timer_container_of() (from_timer() before 6.16) for twheel: in a
 * callback, ``struct foo *foo = twheel_timer_container_of(foo, timer,
 * timer);``.
 */
#define twheel_timer_container_of(var, timer, field)			\
	container_of(timer, typeof(*(var)), field)

/**
 * twheel_timer_remaining() - the time left until a timer's expiry
 * @timer: the timer
 *
 * hrtimer_get_remaining() for twheel, from twheel_timer_pending() and
 * twheel_timer_expires(): a snapshot, which a concurrent start, modify,
 * cancel or expiry may make stale at once (serialise against them for
 * an exact answer).  The timer fires at most one tick plus its slack
 * after that.  It reads the clock of the timer's wheel
 * (twheel_clock_now()), so on a CLOCK_BOOTTIME wheel the time asleep
 * counts as it does for the expiry.
 *
 * Context: any context.
 * Return: the time until the expiry the pending @timer was armed with, 0
 * if it is due or not pending.
 */
static inline ktime_t twheel_timer_remaining(const struct twheel_timer *timer)
{
	ktime_t left;

	if (!twheel_timer_pending(timer))
		return 0;
	left = ktime_sub(twheel_timer_expires(timer),
			 twheel_clock_now(timer->wheel));
	return left > 0 ? left : 0;
}

/**
 * twheel_timer_forward() - move a timer's expiry past @now by whole periods
 * @timer:    the timer, not pending (in its callback, typically)
 * @now:      the time to forward past, e.g. twheel_fire_time(@timer)
 * @interval: the period, positive
 *
 * hrtimer_forward() for twheel: adds @interval to the expiry the timer
 * was last armed with as many times as it takes to be after @now, so that
 * a periodic timer keeps its phase however late it ran.  It does not arm
 * the timer: re-arm it at twheel_timer_expires(@timer), from its callback
 * with twheel_timer_restart() (%TWHEEL_MODE_ABS).  The periods missed are
 * the return value less one.
 *
 * Context: the timer's own callback, or while it is neither pending nor
 * armed concurrently (the caller serialises, as for twheel_fire_time()).
 * Return: the number of periods added (overruns + 1); 0 if the expiry is
 * after @now already or @interval is not positive (nothing changed).
 */
static inline u64 twheel_timer_forward(struct twheel_timer *timer, ktime_t now,
				       ktime_t interval)
{
	ktime_t expires = READ_ONCE(timer->expires);
	ktime_t delta = ktime_sub(now, expires);
	u64 orun = 1;

	if (delta < 0 || interval <= 0)
		return 0;
	if (delta >= interval) {
		orun = div64_u64(delta, interval);
		expires = ktime_add_ns(expires, orun * interval);
		if (expires > now) {
			WRITE_ONCE(timer->expires, expires);
			return orun;
		}
		orun++;
	}
	WRITE_ONCE(timer->expires, ktime_add(expires, interval));
	return orun;
}

#endif /* _LINUX_TWHEEL_H */
