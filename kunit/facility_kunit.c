// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the twheel facility (placeholder: one real case until the
 * facility suite lands).  The suite is registered by wheel_kunit.c under the
 * name declared in twheel_kunit.h.
 */
#include <kunit/test.h>
#include <linux/twheel.h>

#include "twheel_kunit.h"

static void twheel_default_returns_wheel(struct kunit *test)
{
	KUNIT_EXPECT_NOT_ERR_OR_NULL(test, twheel_default());
}

static struct kunit_case twheel_facility_cases[] = {
	KUNIT_CASE(twheel_default_returns_wheel),
	{}
};

struct kunit_suite twheel_facility_suite = {
	.name = "twheel_facility",
	.test_cases = twheel_facility_cases,
};
