/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/lockdep.h>: empty types only. */
#ifndef _WF_SHIM_LINUX_LOCKDEP_H
#define _WF_SHIM_LINUX_LOCKDEP_H

struct lock_class_key {
	int dummy;
};

struct lockdep_map {
	const char *name;
};

#endif
