# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: load twheel.ko and the sample module, run every selftest binary
# (kselftest harness, TAP output), unload.
# shellcheck source=scripts/vm/lib.sh
. /lib/twheel.sh

load twheel
check "twheel_sample loads" insmod /modules/twheel_sample.ko

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
