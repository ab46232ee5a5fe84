/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interfaces between twheel's layers that are not exported.
 */
#ifndef _TWHEEL_INTERNAL_H
#define _TWHEEL_INTERNAL_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/ktime.h>
#include <linux/types.h>
#include <linux/twheel.h>

struct dentry;

enum twheel_engine;

int twheel_facility_init(u64 tick_ns, unsigned int bits, unsigned int budget,
			 enum twheel_engine engine);
void twheel_facility_exit(void);
struct twheel *twheel_create_named(const struct twheel_attr *attr,
				   const char *name);
clockid_t twheel_tick_clockid(struct twheel *w);

struct twheel_timer;

/* Bits of twheel_timer_state(). */
#define TWHEEL_STATE_PENDING	BIT(0)	/* on the wheel or due, not begun */
#define TWHEEL_STATE_RUNNING	BIT(1)	/* its callback runs now */

unsigned int twheel_timer_state(struct twheel_timer *timer,
				ktime_t *expires);
void twheel_timer_wait_idle(struct twheel_timer *timer);

/* Runs of operations under one base lock: see facility.c. */
struct twheel;
struct twheel_base;
enum twheel_mode;

/**
 * struct twheel_batch_lock - a run of operations under one base lock
 * @base:  the locked base
 * @flags: interrupt state to restore
 * @now:   the clock, read once when the run began
 * @index: @base's index, as timer state keeps it
 */
struct twheel_batch_lock {
	struct twheel_base *base;
	unsigned long flags;
	ktime_t now;
	unsigned int index;
};

/*
 * struct twheel_timer::state keeps the index of the timer's base from this
 * bit up (facility.c, "Private timer state").
 */
#define TWHEEL_TS_BASE_SHIFT	8

void twheel_batch_begin(struct twheel *wheel, struct twheel_batch_lock *bl);
void twheel_batch_end(struct twheel_batch_lock *bl);
int __twheel_batch_take(struct twheel_batch_lock *bl,
			struct twheel_timer *timer);
int twheel_batch_stop(struct twheel_batch_lock *bl, struct twheel_timer *timer,
		      bool shutdown);
int twheel_batch_arm(struct twheel_batch_lock *bl, struct twheel_timer *timer,
		     ktime_t expires, u64 slack_ns, enum twheel_mode mode);
int twheel_batch_modify(struct twheel_batch_lock *bl,
			struct twheel_timer *timer, ktime_t expires,
			u64 slack_ns, enum twheel_mode mode);

/*
 * __twheel_batch_take(), inline for the common case, a timer already on
 * the run's base: a batch calls it for every CANCEL and MODIFY record.
 */
static inline int twheel_batch_take(struct twheel_batch_lock *bl,
				    struct twheel_timer *timer)
{
	if (likely(READ_ONCE(timer->state) >> TWHEEL_TS_BASE_SHIFT ==
		   bl->index))
		return 0;
	return __twheel_batch_take(bl, timer);
}

#if IS_ENABLED(CONFIG_KUNIT)
u64 twheel_late_below(ktime_t start, u32 tick_ns, ktime_t now);
#endif

int twheel_dev_init(unsigned long max_per_fd, unsigned long max_per_user,
		    unsigned int max_instances, const struct twheel_attr *dflt);
void twheel_dev_exit(void);

/*
 * Delay points (src/delay.c): windows of a race that tests widen.  Only
 * builds with TWHEEL_DEBUG=1 have them.
 */
enum twheel_delay_point {
	/* facility: a timer is taken off the wheel, its callback not begun */
	TWHEEL_DELAY_CALLBACK,
	/* device: a callback queued its event and dropped the file's lock */
	TWHEEL_DELAY_EVENT_QUEUED,
	/* facility: a timer in transit to another base, neither locked */
	TWHEEL_DELAY_MIGRATE,
	/* facility: a base's hrtimer fired, its handler has no lock yet */
	TWHEEL_DELAY_TICK,
	/* device: a batch did a run of records, fatal signals not checked */
	TWHEEL_DELAY_BATCH_RUN,
	/* facility: a run chose the calling CPU's base, has not locked it */
	TWHEEL_DELAY_BATCH_BEGIN,
	TWHEEL_NR_DELAYS
};

#ifdef TWHEEL_DEBUG_DELAYS
void twheel_delay(enum twheel_delay_point point);
void twheel_delay_init(struct dentry *root);
void twheel_delay_set(enum twheel_delay_point point, u32 us);
unsigned int twheel_delay_hits(enum twheel_delay_point point);
#else
static inline void twheel_delay(enum twheel_delay_point point) { }
static inline void twheel_delay_init(struct dentry *root) { }
#endif

#endif /* _TWHEEL_INTERNAL_H */
