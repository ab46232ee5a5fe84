/* SPDX-License-Identifier: GPL-2.0 */
/*
 * See ktime.h: tools/include's <linux/math64.h> plus div64_u64(), which
 * include/linux/twheel.h's inline forward helper uses.
 */
#ifndef _SHIM_LINUX_MATH64_H
#define _SHIM_LINUX_MATH64_H

#include_next <linux/math64.h>

static inline u64 div64_u64(u64 dividend, u64 divisor)
{
	return dividend / divisor;
}

#endif
