/* SPDX-License-Identifier: GPL-2.0 */
/* See ktime.h: a stand-in for the userspace build of src/wheel.c. */
#ifndef _SHIM_LINUX_LOCKDEP_H
#define _SHIM_LINUX_LOCKDEP_H

struct lock_class_key {
	int dummy;
};

#endif
