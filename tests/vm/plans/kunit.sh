# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: the KUnit suites (debug and kcsan kernels).  KUnit runs a
# module's suites when it is loaded and prints KTAP on the console, which
# the host counts: first twheel_kunit's fast suites (tests/kunit/), then
# twheel_kunit_stress's long ones (tests/stress/).  Unloading afterwards
# lets kmemleak and ODEBUG see the teardown.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

load kunit
load twheel
load twheel_kunit
unload twheel_kunit
load twheel_kunit_stress
unload twheel_kunit_stress
unload twheel
