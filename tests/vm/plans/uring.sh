# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: the io_uring selftests alone (twheel_uring_test,
# twheel_uring_raw_test, twheel_uring_mshot_test), for the debug612 and
# kcsan kernels: 6.12's io_uring has what 6.1's lacks (multishot reads,
# cancelable commands, hence the expiry completions and their teardown),
# so these paths get KASAN, lockdep and kmemleak (debug612) and KCSAN
# (kcsan) nowhere else.  The selftest plan runs them on the other kernels
# among all the selftests.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

# 10^4 commands at once for the teardown test (twheel_ucmd.
# expiry_ring_teardown) rather than 10^5: under TCG with KASAN and
# kmemleak, io_uring's flush of their overflowing completions, one
# allocation each under its completion lock, takes about 280 us a CQE.
LIMITS=
case "$TWHEEL_KERNEL" in
debug | debug612 | kcsan)
	LIMITS=max_timers_per_fd=10000
	;;
esac
# shellcheck disable=SC2086 # no parameter or one
load twheel $LIMITS
for t in /selftests/twheel_uring_test /selftests/twheel_uring_raw_test \
	/selftests/twheel_uring_mshot_test; do
	echo "+ $t"
	_t0=$(date +%s)
	"$t" || fail "$t exited with status $?"
	echo "# $t took $(($(date +%s) - _t0)) s"
done
# A ring's teardown ends in a worker (io_ring_exit_work) after the test
# has exited, and its commands hold the file, hence the module, until
# then: wait for the last reference (bounded: 120 s) before unloading.
unused() {
	_i=0
	while [ "$(cat /sys/module/twheel/refcnt)" -ne 0 ]; do
		_i=$((_i + 1))
		[ "$_i" -le 1200 ] || return 1
		sleep 0.1
	done
}
check "the rings' teardowns let go of twheel" unused
unload twheel
