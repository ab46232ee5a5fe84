/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/bitmap.h>: bitmap_zero. */
#ifndef _WF_SHIM_LINUX_BITMAP_H
#define _WF_SHIM_LINUX_BITMAP_H

#include <string.h>
#include <linux/bitops.h>

static inline void bitmap_zero(unsigned long *dst, unsigned long nbits)
{
	memset(dst, 0, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

#endif
