/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the facility's KUnit suites share (util.c): the per-case state the
 * callbacks report into, probes (timers that record how they fired), and
 * wheels, timers and helper threads that are kunit resources.
 *
 * How the facility's cases are written
 * ------------------------------------
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
 * util.c is linked into both test modules: twheel_kunit.ko (tests/kunit/)
 * and twheel_kunit_stress.ko (tests/stress/).
 */
#ifndef _TWHEEL_KUNIT_UTIL_H
#define _TWHEEL_KUNIT_UTIL_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/ktime.h>
#include <linux/prandom.h>
#include <linux/stddef.h>
#include <linux/twheel.h>
#include <linux/wait.h>

#include "twheel_kunit.h"

/* Bound of every wait for something that must happen (ms). */
#define TWK_TIMEOUT_MS		5000
/* Longest a callback spins waiting for a helper thread (ms). */
#define TWK_SPIN_MS		3000
#define TWK_US			1000ULL
#define TWK_MS			1000000ULL
/* Timers of the stress cases that share them among threads. */
#define TWK_STRESS_TIMERS	64

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

static inline struct twk_probe *twk_of(struct twheel_timer *timer)
{
	return container_of(timer, struct twk_probe, timer);
}

/**
 * struct twk_wheel_args - how twk_wheel_args() creates a wheel
 * @tick_ns: tick
 * @bits:    log2 of the level-0 slots
 * @budget:  execution cap per tick
 * @flags:   TWHEEL_CREATE_* flags
 * @engine:  0: the default, hierarchical
 */
struct twk_wheel_args {
	u64 tick_ns;
	unsigned int bits;
	unsigned int budget;
	unsigned int flags;
	enum twheel_engine engine;
};

/**
 * struct twk_threads - helper kthreads, stopped at the end of the case
 * @tasks: the threads, NULL where none was created
 * @nr:    room in @tasks
 */
struct twk_threads {
	struct task_struct **tasks;
	unsigned int nr;
};

void twk_record(struct twk_probe *p);
void twk_cb_record(struct twheel_timer *timer);
void twk_cb_count(struct twheel_timer *timer);
void twk_cb_cpu(struct twheel_timer *timer);
struct twk_ctx *twk_ctx_new(struct kunit *test);
bool twk_wait_fired(struct twk_ctx *ctx, int n, unsigned int ms);
unsigned long twk_wait_done(struct completion *done, unsigned int ms);
struct twheel_stats twk_stats(struct twheel *w);
u64 twk_wakeups(struct twheel *w);
struct twheel_stats twk_cpu_stats(struct twheel *w, unsigned int cpu);
u64 twk_stat_at(struct twheel *w, int cpu, size_t off);
/*
 * One counter of twheel_get_stats() (of one CPU's base): the accessors
 * return a u64 rather than the structure, since a case that reads several
 * counters would otherwise keep a copy of the whole structure on its
 * stack for each read (KASAN does not share the slots) and overflow the
 * 1 KiB frame limit.
 */
#define twk_stat(w, field)						\
	twk_stat_at(w, -1, offsetof(struct twheel_stats, field))
#define twk_cpu_stat(w, cpu, field)					\
	twk_stat_at(w, cpu, offsetof(struct twheel_stats, field))
void twk_expect_each_fired_once(struct kunit *test, struct twk_ctx *ctx,
				const struct twk_probe *p, const int *ret,
				int nr);
u64 twk_rand(struct rnd_state *rs, u64 n);
void twk_two_cpus(struct kunit *test, unsigned int *a, unsigned int *b);

struct twheel *twk_wheel_args(struct kunit *test, struct twk_ctx *ctx,
			      struct twk_wheel_args a);
struct twheel *twk_wheel(struct kunit *test, struct twk_ctx *ctx,
			 u64 tick_ns, unsigned int bits, unsigned int budget);
struct twheel *twk_wheel_single(struct kunit *test, struct twk_ctx *ctx,
				u64 tick_ns, unsigned int bits,
				unsigned int budget);
struct twheel *twk_wheel_flags(struct kunit *test, struct twk_ctx *ctx,
			       u64 tick_ns, unsigned int flags);
struct twk_probe *twk_probes(struct kunit *test, struct twk_ctx *ctx,
			     struct twheel *w, unsigned int nr,
			     void (*fn)(struct twheel_timer *));
int twk_on_cpu(struct kunit *test, unsigned int cpu, struct twk_probe *p,
	       int op, ktime_t expires);

struct twk_threads *twk_threads(struct kunit *test, unsigned int nr);
struct task_struct *twk_thread_create(struct kunit *test,
				      struct twk_threads *t, unsigned int i,
				      unsigned int cpu, int (*fn)(void *),
				      void *data);
void twk_idle_until_stop(void);

#endif /* _TWHEEL_KUNIT_UTIL_H */
