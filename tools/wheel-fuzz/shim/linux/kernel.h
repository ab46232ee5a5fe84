/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/kernel.h>: min/max, U64_MAX, container_of. */
#ifndef _WF_SHIM_LINUX_KERNEL_H
#define _WF_SHIM_LINUX_KERNEL_H

#include <linux/types.h>
#include <linux/minmax.h>

#ifndef U64_MAX
#define U64_MAX ((u64)~0ULL)
#endif

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#endif
