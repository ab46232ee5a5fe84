# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: load twheel.ko and the sample module, run every selftest binary
# (kselftest harness, TAP output), unload.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

# The debug kernel (KASAN, kmemleak, lockdep; the kcsan one is as slow)
# arms about 40 timers per ms under TCG: filling its default per-user
# limit (a tenth of the VM's 1 GiB, about a million timers) took 25 s in
# each of the 64- and 32-bit runs of twheel_ioctl_test's enospc_per_user,
# near the 30 s past which that test skips.  It fills a quarter of a
# million there; the stock kernels fill the default.
LIMITS=
case "$TWHEEL_KERNEL" in
debug | debug612 | kcsan)
	LIMITS=max_timers_per_user=250000
	;;
esac
# shellcheck disable=SC2086 # no parameter or one
load twheel $LIMITS
# Record the twheel tracepoints from here on: the sample's callbacks re-arm
# with twheel_timer_modify(), the trace check below looks for that too.
TRACEFS=/sys/kernel/tracing
if [ -d "$TRACEFS/events/twheel" ]; then
	echo >"$TRACEFS/trace"
	echo 1 >"$TRACEFS/events/twheel/enable"
fi
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

# The module is pinned while a file is open, and the file shows its state.
rmmod_refused_while_open() {
	exec 3</dev/twheel
	_rc=0
	grep -q '^timers:' /proc/self/fdinfo/3 || _rc=1
	rmmod twheel 2>/dev/null && _rc=1
	exec 3<&-
	return "$_rc"
}
check "rmmod refused while /dev/twheel is open; fdinfo shows timers" \
	rmmod_refused_while_open
# README.md's C example, built as printed: one timer 100 ms out, cookie 42.
check "README's libtwheel example runs" sh -c 'readme_example | grep -q "^cookie 42 fired "'
# twheelctl's --clock and --tick: a file of its own clock and tick
# (TWHEEL_IOC_SETUP), an absolute timer on it, none early.
ctl_setup() {
	twheelctl info -c boottime -t 0.25 >/tmp/info || return 1
	grep -q '^clock  *boottime$' /tmp/info || { cat /tmp/info; return 1; }
	grep -q '^tick_ns  *250000$' /tmp/info || { cat /tmp/info; return 1; }
	twheelctl arm -c boottime -t 0.25 -a 20 | grep -q '^event ' || return 1
	twheelctl arm -c monotonic -t 5 -p 10 -n 2 20 >/dev/null
}
check "twheelctl --clock boottime --tick: info and arm" ctl_setup
# Documentation/userspace-api.rst's io_uring example, built as printed: a
# timer armed and read through the ring, another armed and cancelled.
uring_example() {
	_out=$(/selftests/twheel_uring_example) || return 1
	echo "$_out"
	echo "$_out" | grep -q "cookie 7 fired " &&
		echo "$_out" | grep -q "^cancel: pending$"
}
check "userspace-api's io_uring example runs" uring_example
check "debugfs stats of the default wheel" \
	grep -q '^wakeups:' /sys/kernel/debug/twheel/default/stats

# Tracepoints (on since the sample loaded): arm one timer through the
# device; the trace must show it started, the wheel ticking, it expiring,
# and the sample's re-arms as modifies.
trace_shows_timer() {
	[ -d "$TRACEFS/events/twheel" ] || return 1
	twheelctl arm 5 >/dev/null
	_rc=$?
	echo 0 >"$TRACEFS/events/twheel/enable"
	[ "$_rc" -eq 0 ] || return 1
	for _ev in twheel_timer_start twheel_timer_modify twheel_tick \
		twheel_timer_expire; do
		grep -q "$_ev:" "$TRACEFS/trace" || { echo "no $_ev in the trace"; return 1; }
	done
	# the device's wheel and the sample's tick side by side: named
	grep -q "twheel_tick: wheel=" "$TRACEFS/trace" ||
		{ echo "twheel_tick names no instance"; return 1; }
}
check "tracepoints: start, modify, tick and expire of timers" trace_shows_timer

# Only the test programs: /selftests also holds the fuzzer and the stress
# program that the robust plan runs.
found=
for t in /selftests/*_test /selftests/*_test32; do
	[ -x "$t" ] || continue
	found=1
	# A kernel built without IA32_EMULATION cannot run them.
	if [ "${t%32}" != "$t" ] && [ ! -e /proc/sys/abi/vsyscall32 ]; then
		skip "$t" "no 32-bit syscall support in this kernel"
		continue
	fi
	# The 32-bit build runs the same ioctl handlers (the layouts are the
	# same, compat_ptr_ioctl) on the four other kernels; on this one it
	# took 39 s of make check's longer lane.
	if [ "${t%32}" != "$t" ] && [ "$TWHEEL_KERNEL" = debug ]; then
		skip "$t" "run on the stock and PREEMPT_RT kernels"
		continue
	fi
	echo "+ $t"
	_t0=$(date +%s)
	"$t" || fail "$t exited with status $?"
	echo "# $t took $(($(date +%s) - _t0)) s"
done
[ -n "$found" ] || fail "no selftest binaries in the initramfs"

# The limit cases of twheel_unpriv_test and twheel_uring_test, and the
# fault test's check that no per-user charge leaked, skip at the default
# per-user limit (a tenth of RAM: too many timers to reach quickly here).
# Reload twheel with small limits, the per-file one below the per-user
# one, and run them again.
SMALL_LIMITS="max_timers_per_user=1000 max_timers_per_fd=600"
small=
for t in /selftests/twheel_unpriv_test /selftests/twheel_fault_test \
	/selftests/twheel_uring_test; do
	[ -x "$t" ] || continue
	if [ -z "$small" ]; then
		small=1
		check "twheel_sample unloads for the small-limits reload" \
			rmmod twheel_sample
		unload twheel
		# shellcheck disable=SC2086 # two parameters
		load twheel $SMALL_LIMITS
		check "twheel_sample loads again" insmod /modules/twheel_sample.ko
	fi
	echo "+ $t ($SMALL_LIMITS)"
	"$t" || fail "$t ($SMALL_LIMITS) exited with status $?"
done

# twheelctl demo without -n sizes itself to the limits of the handshake
# (its default, a million, is above the default per-user limit of a
# machine with less than about 1.2 GiB of RAM): here the per-file one.
demo_sized() {
	_out=$(twheelctl demo -q -l 50 -s 100) || return 1
	echo "$_out" | grep -q '^twheelctl demo: 600 timers '
}
if [ -n "$small" ]; then
	check "twheelctl demo sizes itself to max_timers_per_fd=600" demo_sized
fi
check "twheel_sample unloads" rmmod twheel_sample

# The test module of builds with the delay points (tests/stress/): a canceller
# of higher priority on the CPU of a timer's mover, and a sync canceller
# on the CPU of its callback, must not spin (it matters on PREEMPT_RT).
# Its load is the test.
if [ -e /modules/twheel_test_rt.ko ]; then
	check "twheel_test_rt: waiters of higher priority let the mover and the callback run" \
		insmod /modules/twheel_test_rt.ko
	dmesg | grep 'twheel_test_rt:'
	if [ -d /sys/module/twheel_test_rt ]; then
		rmmod twheel_test_rt
	fi

	# Module exit with an in-kernel timer still armed on the default
	# wheel (a user's bug, which twheel_destroy() refuses): twheel must
	# stop every base's hrtimer and drop its hotplug instance and debugfs
	# files all the same, and say what it abandoned.  The leaked timer is
	# due 5 s after it was armed: the plan looks until 6 s have passed,
	# when an hrtimer left armed would have fired into the freed module.
	t0=$(centis)
	check "twheel_test_rt leaks a timer on the default wheel" \
		insmod /modules/twheel_test_rt.ko leak_timer=1
	rmmod twheel_test_rt
	check "twheel unloads with a leaked timer" rmmod twheel
	check "twheel's debugfs directory is gone" test ! -e /sys/kernel/debug/twheel
	check "twheel's exit reports the abandoned timer" \
		sh -c "dmesg | grep -q 'twheel: .*1 timers pending.*abandon'"
	while [ $(($(centis) - t0)) -lt 600 ]; do
		sleep 1
	done
	load twheel
fi

# The device's wheel on the other engines (engine=; the runs above used
# the default, hier): the ioctl test again on each, and the sample's
# re-arming timers.  The engine shows in debugfs and in TWHEEL_IOC_API.
# The engines are the same pure code on every kernel, so the ioctl test
# runs on them on stock61 only (about 10 s each); the other kernels run
# the sample on each, and the debug and kcsan kernels' KUnit plans cover
# every engine.
check "default wheel runs the hier engine" \
	grep -q '^engine:[[:space:]]*hier$' /sys/kernel/debug/twheel/default/stats
for e in scheme6 lawn; do
	unload twheel
	load twheel engine=$e
	check "default wheel runs the $e engine" \
		grep -q "^engine:[[:space:]]*$e\$" /sys/kernel/debug/twheel/default/stats
	if [ -x /selftests/twheel_ioctl_test ] && [ "$TWHEEL_KERNEL" = stock61 ]; then
		echo "+ /selftests/twheel_ioctl_test (engine=$e)"
		/selftests/twheel_ioctl_test || fail "twheel_ioctl_test (engine=$e) exited with status $?"
	fi
	# Only root may open the device on an engine without a bound of the
	# work under a lock (its one_upper_slot case skips here).
	if [ -x /selftests/twheel_bounded_test ]; then
		echo "+ /selftests/twheel_bounded_test (engine=$e)"
		/selftests/twheel_bounded_test || fail "twheel_bounded_test (engine=$e) exited with status $?"
	fi
	check "twheel_sample timers fire on $e" insmod /modules/twheel_sample.ko
	check "twheel_sample fires 10 times on $e, none early" sample_fired
	check "twheel_sample unloads ($e)" rmmod twheel_sample
done

# twheelctl arm --abs checks the expiry QUERY reports; with 10 us ticks a
# timer due now has fired by then, which the check must allow (a one-shot
# timer reports none, a periodic one its next period).
unload twheel
load twheel tick_ns=10000
arm_due_now() {
	_i=0
	while [ "$_i" -lt 20 ]; do
		twheelctl arm -a 0 >/dev/null || return 1
		twheelctl arm -a -p 1 -n 2 0 >/dev/null || return 1
		_i=$((_i + 1))
	done
}
check "twheelctl arm --abs of a timer due now, 20 times" arm_due_now
check "twheel unloads" rmmod twheel
