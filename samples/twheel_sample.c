// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_sample - the smallest useful in-kernel user of twheel
 *
 * Copy this to start a module that uses twheel.  It arms one periodic
 * timer on the default wheel that re-arms itself from its callback
 * @periods times, @period_ms apart, and counts its expirations in the
 * read-only parameter "fired" (/sys/module/twheel_sample/parameters/fired).
 *
 * Build it against twheel's header and its Module.symvers (which make
 * writes at the top of the twheel tree): in a directory of its own, with a
 * Kbuild of
 *   obj-m := twheel_sample.o
 *   ccflags-y := -I$(TWHEEL)/include
 * run
 *   make -C $KDIR M=$PWD TWHEEL=/path/to/twheel \
 *        KBUILD_EXTRA_SYMBOLS=/path/to/twheel/Module.symvers modules
 * and load it after twheel.ko.  make dkms-check builds it so.  With twheel
 * installed through DKMS, samples/dkms.conf builds it through DKMS too,
 * against twheel's build for each kernel (make deb-check does).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/module.h>
#include <linux/twheel.h>

static uint period_ms = 20;
module_param(period_ms, uint, 0444);
MODULE_PARM_DESC(period_ms, "Period of the sample timer in ms (default 20)");

static uint periods = 10;
module_param(periods, uint, 0444);
MODULE_PARM_DESC(periods, "Number of expirations before the timer stops (default 10)");

static atomic_t fired = ATOMIC_INIT(0);
module_param_named(fired, fired.counter, int, 0444);
MODULE_PARM_DESC(fired, "Expirations seen so far (read-only)");

static struct twheel_timer sample_timer;
static ktime_t sample_next;

static void sample_fn(struct twheel_timer *timer)
{
	ktime_t now = ktime_get();
	int n = atomic_inc_return(&fired);

	/* twheel never fires early: check it, loudly, in the sample too. */
	if (now < sample_next)
		pr_err("expiration %d fired %lld ns early\n", n,
		       ktime_to_ns(ktime_sub(sample_next, now)));
	if (n >= periods) {
		pr_info("done: %d expirations\n", n);
		return;
	}
	/*
	 * Re-arm from the callback, drift-free from the previous expiry.
	 * twheel_timer_modify() is mod_timer(): it arms the timer whether or
	 * not it is pending, so the callback need not know.
	 */
	sample_next = ktime_add_ms(sample_next, period_ms);
	twheel_timer_modify(timer, sample_next, 0, TWHEEL_MODE_ABS);
}

static int __init sample_init(void)
{
	if (!period_ms || !periods)
		return -EINVAL;
	twheel_timer_setup(&sample_timer, twheel_default(), sample_fn, 0);
	sample_next = ktime_add_ms(ktime_get(), period_ms);
	return twheel_timer_start(&sample_timer, sample_next, 0, TWHEEL_MODE_ABS);
}

static void __exit sample_exit(void)
{
	/* The callback re-arms itself: shutdown, not just cancel. */
	twheel_timer_shutdown_sync(&sample_timer);
}

module_init(sample_init);
module_exit(sample_exit);

MODULE_DESCRIPTION("Sample in-kernel user of the twheel timer facility");
MODULE_AUTHOR("twheel developers");
MODULE_LICENSE("GPL");
