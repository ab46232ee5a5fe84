/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tools/include's __ffs() is the generic C bisection; the kernel on x86
 * uses one bsf/tzcnt instruction (arch/x86/include/asm/bitops.h).  The
 * engines' costs measured here must be the kernel's, so use the
 * instruction.  The include guard is tools/include's, which this file
 * shadows (shim/ comes first on the include path).
 */
#ifndef _TOOLS_LINUX_ASM_GENERIC_BITOPS___FFS_H_
#define _TOOLS_LINUX_ASM_GENERIC_BITOPS___FFS_H_

/* Undefined if no bit exists, as the kernel's. */
static __always_inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

#endif
