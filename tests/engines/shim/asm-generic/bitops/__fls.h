/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's x86 __fls() is one bsr instruction: see __ffs.h here. */
#ifndef _ASM_GENERIC_BITOPS___FLS_H_
#define _ASM_GENERIC_BITOPS___FLS_H_

/* Undefined if no bit exists, as the kernel's. */
static __always_inline unsigned long __fls(unsigned long word)
{
	return 8 * sizeof(word) - 1 - __builtin_clzl(word);
}

#endif
