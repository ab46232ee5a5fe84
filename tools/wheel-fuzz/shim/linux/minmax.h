/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/minmax.h>: type-checked, single-evaluation. */
#ifndef _WF_SHIM_LINUX_MINMAX_H
#define _WF_SHIM_LINUX_MINMAX_H

#define __wf_cmp(x, y, op) ({					\
	__typeof__(x) __x = (x);				\
	__typeof__(y) __y = (y);				\
	(void)(&__x == &__y);	/* warns on mixed types */	\
	__x op __y ? __x : __y; })

#define min(x, y)	__wf_cmp(x, y, <)
#define max(x, y)	__wf_cmp(x, y, >)

#endif
