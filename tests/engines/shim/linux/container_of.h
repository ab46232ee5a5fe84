/* SPDX-License-Identifier: GPL-2.0 */
/*
 * See ktime.h: a stand-in for the userspace build of the engines.
 * include/linux/twheel.h takes container_of() from <linux/container_of.h>,
 * which tools/include of 6.1 does not have; its <linux/kernel.h> defines
 * the macro.
 */
#ifndef _SHIM_LINUX_CONTAINER_OF_H
#define _SHIM_LINUX_CONTAINER_OF_H

#include <linux/kernel.h>

#endif
