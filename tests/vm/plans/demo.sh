# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# make demo: a million timers through /dev/twheel.  twheelctl demo arms
# them in batches at random deadlines over three seconds, cancels a tenth,
# reads the rest with epoll and exits non-zero if any fired early, was lost,
# came twice or came after its cancel.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

load twheel
check "twheelctl info" twheelctl info
check "twheelctl demo" twheelctl demo -n 1000000
unload twheel
