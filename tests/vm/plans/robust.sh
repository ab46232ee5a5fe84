# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Robustness plan (make robust, tests/vm/robust.sh): the ioctl fuzzer and
# the multi-threaded stress through /dev/twheel.
#
#  1. twheel with small limits (1024 timers per file, 4096 per user) so
#     that the fuzzer runs into ENOSPC; twheel_fuzz: random and malformed
#     ioctls, reads and fd games from 2 processes x 4 threads, then close
#     races and sharing through fork (see tests/stress/twheel_fuzz.c);
#     rmmod (nothing the fuzzer did kept a module reference).
#  2. twheel with room for the stress; twheel_stress: 4 threads arm,
#     modify, cancel and read a million one-shot timers, once on one
#     shared fd and once on one fd per thread; every timer not cancelled
#     must come exactly once, never early; rmmod.
#
# The kernel side (KASAN, KCSAN, lockdep, list debugging, ODEBUG splats)
# is judged by vm-run.sh; /init scans kmemleak on the debug kernel.  Each
# program prints its own TAP lines, indented as subtests of the check.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

# A million timers on the stock kernels.  The debug kernel (KASAN, lockdep,
# kmemleak under TCG) gets through about 2,000 timers a second: a million
# took 9 minutes per fd layout, so it runs 50,000 to stay within the few
# minutes make robust has.  The kcsan kernel (KCSAN, lockdep) is about ten
# times slower than stock, as fast as debug or a little faster: 50,000
# timers took 12-22 s per fd layout (2,300-4,000 a second) on a loaded
# 2-core host, the whole VM 100-155 s, which keeps make kcsan (this plan
# and KUnit) within about 4 minutes (136-215 s measured).  The fuzzer runs for its 20 s on every kernel.
FUZZ_SECONDS=20
STRESS_N=1000000
# How long the fuzzer's close races wait for the charge of files just
# closed to be released before a fresh file's ENOSPC counts (twheel_fuzz
# -w): on kcsan it once took longer than the default 10 s.
CHARGE_WAIT=10
case "$TWHEEL_KERNEL" in
debug | debug612 | kcsan)
	STRESS_N=50000
	CHARGE_WAIT=60
	;;
esac

load twheel max_timers_per_fd=1024 max_timers_per_user=4096
check "twheel_fuzz: $FUZZ_SECONDS s, 2 processes x 4 threads" \
	/selftests/twheel_fuzz -i -t "$FUZZ_SECONDS" -p 2 -j 4 -w "$CHARGE_WAIT"
check "twheel unloads after the fuzzer" rmmod twheel

load twheel max_timers_per_fd=$((STRESS_N + 1)) max_timers_per_user=$((STRESS_N + 1))
check "twheel_stress: $STRESS_N timers, 4 threads, one shared fd" \
	/selftests/twheel_stress -i -n "$STRESS_N" -j 4 -f 1
check "twheel_stress: $STRESS_N timers, 4 threads, one fd per thread" \
	/selftests/twheel_stress -i -n "$STRESS_N" -j 4 -f 4
check "twheel unloads after the stress" rmmod twheel
