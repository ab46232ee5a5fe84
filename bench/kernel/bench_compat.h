/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API drift between the kernels the benchmark modules build for
 * (6.1 .. 6.12+), one helper per changed interface.
 */
#ifndef _TWHEEL_BENCH_COMPAT_H
#define _TWHEEL_BENCH_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/timer.h>
#include <linux/version.h>

/* timer_delete() is 6.2's name for del_timer(). */
#if KERNEL_VERSION(6, 2, 0) <= LINUX_VERSION_CODE
#define bench_timer_delete(t)		timer_delete(t)
#define bench_timer_delete_sync(t)	timer_delete_sync(t)
#else
#define bench_timer_delete(t)		del_timer(t)
#define bench_timer_delete_sync(t)	del_timer_sync(t)
#endif

/* hrtimer_setup() appeared in 6.13; hrtimer_init() went away in 6.15. */
static inline void bench_hrtimer_setup(struct hrtimer *t,
				       enum hrtimer_restart (*fn)(struct hrtimer *),
				       enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, mode);
#else
	hrtimer_init(t, CLOCK_MONOTONIC, mode);
	t->function = fn;
#endif
}

#endif /* _TWHEEL_BENCH_COMPAT_H */
