/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/ktime.h>. */
#ifndef _WF_SHIM_LINUX_KTIME_H
#define _WF_SHIM_LINUX_KTIME_H

#include <linux/kernel.h>

typedef s64 ktime_t;

#endif
