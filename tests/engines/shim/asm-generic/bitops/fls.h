/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's x86 fls() is one bsr instruction: see __ffs.h here. */
#ifndef _ASM_GENERIC_BITOPS_FLS_H_
#define _ASM_GENERIC_BITOPS_FLS_H_

static __always_inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

#endif
