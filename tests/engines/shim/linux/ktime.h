/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stand-ins for the two kernel headers that include/linux/twheel.h needs
 * and the kernel tree's tools/include lacks, for the userspace build of
 * the engines (tests/engines).
 */
#ifndef _SHIM_LINUX_KTIME_H
#define _SHIM_LINUX_KTIME_H

#include <linux/types.h>

#ifndef U64_MAX
#define U64_MAX ((u64)~0ULL)
#endif

typedef s64 ktime_t;

/* for include/linux/twheel.h's inline helpers, which the engines never call */
#define ktime_sub(lhs, rhs)	((lhs) - (rhs))
#define ktime_add(lhs, rhs)	((lhs) + (rhs))
#define ktime_add_ns(kt, nsval)	((kt) + (nsval))

#endif
