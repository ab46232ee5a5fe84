# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: load twheel.ko and the sample module, run every selftest binary
# (kselftest harness, TAP output), unload.
# shellcheck source=scripts/vm/lib.sh
. /lib/twheel.sh

load twheel
check "twheel_sample loads" insmod /modules/twheel_sample.ko

# The sample re-arms its timer from the callback ten times, 20 ms apart, and
# counts in /sys/module/twheel_sample/parameters/fired.  Poll that counter
# (bounded: 10 s) and require no "early" complaint from the sample.
sample_fired() {
	_i=0
	while [ "$(cat /sys/module/twheel_sample/parameters/fired)" -lt 10 ]; do
		_i=$((_i + 1))
		[ "$_i" -le 100 ] || return 1
		sleep 0.1
	done
	! dmesg | grep -q 'twheel_sample: .*early'
}
check "twheel_sample timers fire 10 times, none early" sample_fired

found=
for t in /selftests/*; do
	[ -x "$t" ] || continue
	found=1
	# The debug kernel is built without IA32_EMULATION.
	if [ "${t%32}" != "$t" ] && [ ! -e /proc/sys/abi/vsyscall32 ]; then
		skip "$t" "no 32-bit syscall support in this kernel"
		continue
	fi
	echo "+ $t"
	"$t" || fail "$t exited with status $?"
done
[ -n "$found" ] || fail "no selftest binaries in the initramfs"

check "twheel_sample unloads" rmmod twheel_sample
check "twheel unloads" rmmod twheel
