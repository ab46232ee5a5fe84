/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's x86-64 fls64() is one bsr instruction: see __ffs.h here. */
#ifndef _ASM_GENERIC_BITOPS_FLS64_H_
#define _ASM_GENERIC_BITOPS_FLS64_H_

#include <linux/types.h>

static __always_inline int fls64(__u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

#endif
