# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: the KUnit suites (debug and kcsan kernels).  KUnit runs a
# module's suites when it is loaded and prints KTAP on the console, which
# the host counts.  Unloading afterwards lets kmemleak and ODEBUG see the teardown.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

load kunit
load twheel
load twheel_kunit
unload twheel_kunit
unload twheel
