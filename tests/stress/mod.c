// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_kunit_stress.ko: the long and randomised KUnit suites, one per
 * file (*_stress_kunit.c), each registering itself; they share the
 * facility suites' helpers, compiled into this module from tests/kunit/.
 */
#include <linux/module.h>

#include "../kunit/util.c"

MODULE_DESCRIPTION("KUnit stress suites for twheel: the facility under load");
MODULE_LICENSE("GPL");
