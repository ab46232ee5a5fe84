# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: what only the PREEMPT_RT kernels (rt61, rt612) check.  It runs
# after the selftest plan in the same boot (tests/vm/selftest.sh runs
# `vm-run.sh rt61 selftest rt`, the same on rt612), so the selftests
# themselves are not repeated here: this is the place for steps that make
# sense on RT alone.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

# The selftests passing proves nothing about RT if the guest did not boot
# an RT kernel: /sys/kernel/realtime exists only on PREEMPT_RT and says 1.
is_preempt_rt() {
	[ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ] &&
		uname -v | grep -q PREEMPT_RT
}
check "the kernel is PREEMPT_RT ($(uname -r))" is_preempt_rt

# twheel_test_rt (tests/stress/), the check that matters most here, runs
# in the selftest plan on every kernel whose modules have the delay points.
# RT-only steps go below, e.g.:
#   load twheel
#   check "..." insmod /modules/<something>.ko
#   unload twheel
