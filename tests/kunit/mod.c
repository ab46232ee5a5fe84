// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_kunit.ko: the fast KUnit suites, one per file (*_kunit.c), each
 * registering itself with kunit_test_suite(); the module's loader collects
 * every registration from its .kunit_test_suites section (6.1 on).  The
 * long and randomised suites are twheel_kunit_stress.ko's (tests/stress/).
 *
 * The pure engines are linked privately into the module, so that their
 * internals need not be exported from twheel.ko just for testing, with
 * their reference model, which the userspace fuzzer shares.
 */
#include <linux/module.h>
#include <linux/version.h>

#include "../../src/wheel.c"
#include "../../src/hier.c"
#include "../../src/lawn.c"
#include "../../src/engine.c"
#include "../engines/model.c"

MODULE_DESCRIPTION("KUnit suites for twheel: the engines and the facility");
MODULE_LICENSE("GPL");
/*
 * the facility's internal batch functions (EXPORT_SYMBOL_IF_KUNIT); the
 * namespace is a string from 6.13 on
 */
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
#else
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
#endif
