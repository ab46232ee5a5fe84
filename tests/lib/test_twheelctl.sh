#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# twheelctl's output without the module: `twheelctl info` under
# fake_twheel.so (LD_PRELOAD: a fake /dev/twheel with fixed answers, uid
# 1000) must print exactly what is below, the limits of that user
# included, and with --clock/--tick the file's clock and tick; and the
# synopsis of twheelctl(1) must be each command's usage.  Run by
# `make -C tools check`.  TAP lines.
#
# Usage: test_twheelctl.sh TWHEELCTL FAKE_SO
set -u
ctl=$1
fake=$2
rc=0

expect() {
	desc=$1
	shift
	want=$(cat)
	got=$(LD_PRELOAD=$fake "$ctl" "$@" 2>&1)
	if [ "$got" = "$want" ]; then
		echo "ok - twheelctl $*: $desc"
	else
		echo "not ok - twheelctl $*: $desc"
		printf '%s\n' "$want" >/tmp/twheelctl-want.$$
		printf '%s\n' "$got" | diff -u /tmp/twheelctl-want.$$ - | sed 's/^/# /'
		rm -f /tmp/twheelctl-want.$$
		rc=1
	fi
}

expect "the handshake and the limits of uid 1000" info <<'OUT'
device              /dev/twheel
abi_version         2
event_size          48
features            0x79f periodic slack batch query engine=hier setup uring_cmd uring_expiry uring_mshot
clock               monotonic
tick_ns             1000000
slots               8192
wheel_span_ns       8192000000
batch_op_size       56
user                uid 1000 (the limits below; beyond them arming fails with ENOSPC)
max_timers_per_fd   1000 live timers per open file
max_timers_per_user 5000 live timers over all files of uid 1000
max_instances       8 wheels of other clocks and ticks, all users together
max_batch           65536 records per TWHEEL_IOC_BATCH (more: E2BIG)
OUT

expect "a file set up for CLOCK_BOOTTIME and a 250 us tick" info -c boottime -t 0.25 <<'OUT'
device              /dev/twheel
abi_version         2
event_size          48
features            0x79f periodic slack batch query engine=hier setup uring_cmd uring_expiry uring_mshot
clock               boottime
tick_ns             250000
slots               8192
wheel_span_ns       2048000000
batch_op_size       56
user                uid 1000 (the limits below; beyond them arming fails with ENOSPC)
max_timers_per_fd   1000 live timers per open file
max_timers_per_user 5000 live timers over all files of uid 1000
max_instances       8 wheels of other clocks and ticks, all users together
max_batch           65536 records per TWHEEL_IOC_BATCH (more: E2BIG)
OUT
# twheelctl(1)'s synopsis (Documentation/twheelctl.rst) against each
# command's usage, continuation lines joined, as the man page prints it
rst=$(dirname "$0")/../../Documentation/twheelctl.rst
for cmd in info arm demo; do
	want=$("$ctl" "$cmd" --help | sed -n '1,/^$/p' | sed 's/^usage: //' | tr -s ' \n' ' ' |
		sed 's/ $//')
	got=$(sed -n "s/^| \*\*twheelctl $cmd\*\*/twheelctl $cmd/p" "$rst" | tr -d '*')
	if [ "$got" = "$want" ]; then
		echo "ok - twheelctl(1)'s synopsis of $cmd is its usage"
	else
		echo "not ok - twheelctl(1)'s synopsis of $cmd is its usage"
		echo "#   usage:    $want"
		echo "#   synopsis: $got"
		rc=1
	fi
done
exit "$rc"
