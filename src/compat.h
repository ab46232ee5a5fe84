/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API drift between the releases twheel supports (6.1 .. 6.12+).
 * One small helper per changed interface, so the code that uses them reads
 * like current mainline.
 */
#ifndef _TWHEEL_COMPAT_H
#define _TWHEEL_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/version.h>

/*
 * hrtimer_setup() appeared in 6.13 and hrtimer_init() was removed in 6.15;
 * setting ->function by hand is what hrtimer_setup() replaces.
 */
static inline void twheel_hrtimer_setup(struct hrtimer *timer,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock_id, enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(timer, fn, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
#endif
}

#endif /* _TWHEEL_COMPAT_H */
