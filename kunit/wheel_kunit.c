// SPDX-License-Identifier: GPL-2.0
#include <kunit/test.h>
#include <linux/twheel.h>

static void twheel_placeholder_node_layout(struct kunit *test)
{
	struct twheel_timer t = {};

	KUNIT_EXPECT_EQ(test, t.node.key, 0ULL);
}

static struct kunit_case wheel_cases[] = {
	KUNIT_CASE(twheel_placeholder_node_layout),
	{}
};

static struct kunit_suite wheel_suite = {
	.name = "twheel_wheel",
	.test_cases = wheel_cases,
};

kunit_test_suites(&wheel_suite);
MODULE_DESCRIPTION("KUnit tests for twheel");
MODULE_LICENSE("GPL");
