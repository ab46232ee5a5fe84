/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every suite of tests/kunit/ and tests/stress/ may use; the facility
 * suites' helpers are util.h's.
 */
#ifndef _TWHEEL_KUNIT_H
#define _TWHEEL_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>
#include <linux/timer.h>

/*
 * Kernel drift the suites meet (src/compat.h has the module's): 6.13
 * renamed KUNIT_ASSERT_FAILURE() to KUNIT_FAIL_AND_ABORT(), 6.16 replaced
 * from_timer() with timer_container_of().
 */
#ifndef KUNIT_FAIL_AND_ABORT
#define KUNIT_FAIL_AND_ABORT KUNIT_ASSERT_FAILURE
#endif
#ifndef timer_container_of
#define timer_container_of from_timer
#endif

/*
 * KUNIT_ARRAY_PARAM() for the table @prefix##_params of struct
 * @prefix##_param, whose @name member names the case, with the
 * description callback that copies it (KUNIT_ARRAY_PARAM_DESC() does this
 * from 6.6 on; 6.1 lacks it).
 */
#define TWK_ARRAY_PARAM_BY_NAME(prefix)					\
	static void prefix##_desc(const struct prefix##_param *p,	\
				  char *desc)				\
	{								\
		strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);		\
	}								\
	KUNIT_ARRAY_PARAM(prefix, prefix##_params, prefix##_desc)

#endif /* _TWHEEL_KUNIT_H */
