// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: delay points, for tests only
 *
 * A race that needs another CPU to act inside a window a few instructions
 * wide is rarely hit by chance, so a test could pass with the race there.
 * The windows that matter are named here (enum twheel_delay_point) and the
 * code of each layer calls twheel_delay() at them.  A test widens a window
 * by writing a delay in microseconds to
 * /sys/kernel/debug/twheel/delay/<name> (0, the default, is no delay) and
 * can then reproduce the race deterministically.
 *
 * This file is built only with TWHEEL_DEBUG=1 (the harness's debug and
 * race-detector kernels); otherwise twheel_delay() is an empty inline and
 * the production module has neither the points nor the files.  The delay
 * busy-waits: the points sit in softirq context or with interrupts off,
 * and under no lock.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/processor.h>

#include "twheel_internal.h"

/* Longest delay a point accepts, so a typo cannot wedge the machine. */
#define TWHEEL_DELAY_MAX_US	100000

static u32 twheel_delay_us[TWHEEL_NR_DELAYS];
static atomic_t twheel_delay_hit[TWHEEL_NR_DELAYS];

static const char *const twheel_delay_names[TWHEEL_NR_DELAYS] = {
	[TWHEEL_DELAY_CALLBACK] = "callback_us",
	[TWHEEL_DELAY_EVENT_QUEUED] = "event_queued_us",
	[TWHEEL_DELAY_MIGRATE] = "migrate_us",
	[TWHEEL_DELAY_TICK] = "tick_us",
	[TWHEEL_DELAY_BATCH_RUN] = "batch_run_us",
	[TWHEEL_DELAY_BATCH_BEGIN] = "batch_begin_us",
};

void twheel_delay(enum twheel_delay_point point)
{
	u32 us = min_t(u32, READ_ONCE(twheel_delay_us[point]),
		       TWHEEL_DELAY_MAX_US);
	u64 end;

	if (!us)
		return;
	atomic_inc(&twheel_delay_hit[point]);
	/*
	 * On the clock, not mdelay(): udelay() counts loops_per_jiffy, which
	 * each CPU calibrates at boot.  Under TCG the second CPU's came out
	 * at 48-100 % of the first's, by the host's load at boot, and a
	 * window widened to 100 ms lasted 82-98 ms there, or half as long:
	 * too short for another CPU, descheduled by the host, to see it.
	 */
	end = ktime_get_ns() + us * NSEC_PER_USEC;
	while (ktime_get_ns() < end)
		cpu_relax();
}

/**
 * twheel_delay_set() - set a delay point, as its debugfs file does
 * @point: the delay point
 * @us:    its delay in microseconds, 0 for none
 *
 * For KUnit cases, which cannot write a debugfs attribute file from the
 * kernel.  Only in builds with TWHEEL_DEBUG=1.
 *
 * Context: any context.
 */
void twheel_delay_set(enum twheel_delay_point point, u32 us)
{
	WRITE_ONCE(twheel_delay_us[point], us);
}
EXPORT_SYMBOL_GPL(twheel_delay_set);

/**
 * twheel_delay_hits() - how many times a delay point has delayed
 * @point: the delay point
 *
 * For KUnit cases that must act while another CPU sits in a window: they
 * wait for the count to move.  Only in builds with TWHEEL_DEBUG=1.
 *
 * Context: any context.
 * Return: the number of delays at @point since the module was loaded.
 */
unsigned int twheel_delay_hits(enum twheel_delay_point point)
{
	return atomic_read(&twheel_delay_hit[point]);
}
EXPORT_SYMBOL_GPL(twheel_delay_hits);

void twheel_delay_init(struct dentry *root)
{
	struct dentry *dir = debugfs_create_dir("delay", root);
	int i;

	for (i = 0; i < TWHEEL_NR_DELAYS; i++)
		debugfs_create_u32(twheel_delay_names[i], 0600, dir,
				   &twheel_delay_us[i]);
}
