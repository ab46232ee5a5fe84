// SPDX-License-Identifier: GPL-2.0
/*
 * twheel module glue: parameters, the default wheel and /dev/twheel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/stringify.h>

#include <linux/twheel.h>

#include "twheel_internal.h"

/* Parameters of the default wheel; read-only once loaded. */
static ulong tick_ns = 1000000;
module_param(tick_ns, ulong, 0444);
MODULE_PARM_DESC(tick_ns, "Tick length of the default wheel in ns (1000..1000000000, default 1000000)");

static uint wheel_bits = TWHEEL_BITS_DEFAULT;
module_param(wheel_bits, uint, 0444);
MODULE_PARM_DESC(wheel_bits, "log2 of the slot count of the default wheel (4..20, default "
		 __stringify(TWHEEL_BITS_DEFAULT) ")");

/* Limits of /dev/twheel users; 0 picks a default from the memory size. */
static ulong max_timers_per_fd;
module_param(max_timers_per_fd, ulong, 0444);
MODULE_PARM_DESC(max_timers_per_fd, "Most live timers per open /dev/twheel file (0: same as max_timers_per_user)");

static ulong max_timers_per_user;
module_param(max_timers_per_user, ulong, 0444);
MODULE_PARM_DESC(max_timers_per_user, "Most live timers per user over all files (0: as many as fit in 10% of RAM)");

/* Engine of the default wheel (and so of /dev/twheel): see design.rst. */
static char *engine = "hier";
module_param(engine, charp, 0444);
MODULE_PARM_DESC(engine, "Engine of the default wheel and /dev/twheel: hier (Scheme 6 near + hierarchical far, default), scheme6 (pure hashed wheel) or lawn (Timer Lawn, a FIFO per duration)");

/* Wheels of /dev/twheel files that chose another clock or tick. */
static uint max_instances = 8;
module_param(max_instances, uint, 0444);
MODULE_PARM_DESC(max_instances, "Most wheel instances /dev/twheel files may create besides the default wheel, one per clock and tick in use (default 8)");

static uint budget = 4096;
module_param(budget, uint, 0444);
MODULE_PARM_DESC(budget, "Most callbacks run per tick before deferring to a re-tick (>= 1, default 4096)");

static int __init twheel_init(void)
{
	struct twheel_attr attr = {
		.size = sizeof(attr),
		.clockid = CLOCK_MONOTONIC,
	};
	enum twheel_engine kind;
	int ret;

	for (kind = 0; kind < TWHEEL_NR_ENGINES; kind++)
		if (sysfs_streq(engine, twheel_engine_name(kind)))
			break;
	if (kind == TWHEEL_NR_ENGINES) {
		pr_err("engine=%s unknown (hier, scheme6 or lawn)\n", engine);
		return -EINVAL;
	}
	if (tick_ns < TWHEEL_TICK_NS_MIN || tick_ns > TWHEEL_TICK_NS_MAX) {
		pr_err("tick_ns=%lu out of range [%llu, %llu]\n", tick_ns,
		       TWHEEL_TICK_NS_MIN, TWHEEL_TICK_NS_MAX);
		return -EINVAL;
	}
	if (wheel_bits < TWHEEL_BITS_MIN || wheel_bits > TWHEEL_BITS_MAX) {
		pr_err("wheel_bits=%u out of range [%d, %d]\n", wheel_bits,
		       TWHEEL_BITS_MIN, TWHEEL_BITS_MAX);
		return -EINVAL;
	}
	if (!budget) {
		pr_err("budget must be at least 1\n");
		return -EINVAL;
	}

	ret = twheel_facility_init(tick_ns, wheel_bits, budget, kind);
	if (ret)
		return ret;

	attr.engine = kind;
	attr.bits = wheel_bits;
	attr.budget = budget;
	attr.tick_ns = tick_ns;
	ret = twheel_dev_init(max_timers_per_fd, max_timers_per_user,
			      max_instances, &attr);
	if (ret)
		goto err_facility;

	return 0;

err_facility:
	twheel_facility_exit();
	return ret;
}

static void __exit twheel_exit(void)
{
	twheel_dev_exit();
	twheel_facility_exit();
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_DESCRIPTION("Hashed timing wheel timer facility (Varghese & Lauck Scheme 6 near, Scheme 7 far; Timer Lawn)");
MODULE_INFO(engines, "hier scheme6 lawn");
MODULE_AUTHOR("twheel developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
