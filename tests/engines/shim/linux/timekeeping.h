/* SPDX-License-Identifier: GPL-2.0 */
/*
 * See ktime.h: a stand-in for the userspace build of the engines.
 * include/linux/twheel.h's inline helpers read the clock; the engines
 * never call them, so a declaration is all they need here.
 */
#ifndef _SHIM_LINUX_TIMEKEEPING_H
#define _SHIM_LINUX_TIMEKEEPING_H

#include <linux/ktime.h>

ktime_t ktime_get(void);

#endif
