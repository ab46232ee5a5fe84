# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: the race selftest (tests/selftests/twheel_race_test.c) alone, for the
# kcsan kernel: callbacks racing QUERY, CANCEL, MODIFY, read() and close()
# of the file on the other CPU, with the delay points widening the windows
# (the modules of the kernels built from source have them).  The selftest
# plan runs it on the other kernels among all the selftests.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

load twheel
echo "+ /selftests/twheel_race_test"
/selftests/twheel_race_test || fail "twheel_race_test exited with status $?"
unload twheel
