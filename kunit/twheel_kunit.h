/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Suites of the twheel_kunit module.  wheel_kunit.c registers all of them
 * in its single kunit_test_suites() call, so the module's suites are listed
 * in one place; other files only define their suite under the name below.
 */
#ifndef _TWHEEL_KUNIT_H
#define _TWHEEL_KUNIT_H

#include <kunit/test.h>

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
