/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Suites of the twheel_kunit module.  wheel_kunit.c registers all of them
 * in its single kunit_test_suites() call, so the module's suites are listed
 * in one place; other files only define their suite under the name below.
 */
#ifndef _TWHEEL_KUNIT_H
#define _TWHEEL_KUNIT_H

#include <kunit/test.h>
#include <linux/string.h>

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

/* The facility suite, defined in facility_kunit.c. */
extern struct kunit_suite twheel_facility_suite;
/* The engine suite, every engine against the model: engine_kunit.c. */
extern struct kunit_suite twheel_engine_suite;
/* Per-CPU bases, and their stress cases: facility_kunit.c. */
extern struct kunit_suite twheel_smp_suite;
extern struct kunit_suite twheel_smp_stress_suite;
/* Runs under one base lock (the device's batches): facility_kunit.c. */
extern struct kunit_suite twheel_batch_suite;

#endif /* _TWHEEL_KUNIT_H */
