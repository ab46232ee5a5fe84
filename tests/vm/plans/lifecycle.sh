# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan (make robust): load and unload twheel.ko 100 times (12 on the
# kernels built from source) with timers in flight.  Every cycle
#
#   - loads twheel.ko (module parameters vary with the cycle: default,
#     100 us ticks on 256 slots, budget=1, 4 ms ticks on 16 slots) and
#     twheel_sample.ko with a 2 ms periodic timer that never runs out;
#   - starts /selftests/twheel_lifecycle, which keeps a few dozen timers
#     expiring on one /dev/twheel file, far ones pending, and periodic
#     timers with unread events on a second file; waits (bounded) until it
#     read its first event and the sample's timer fired;
#   - checks that rmmod twheel is refused while both hold the module, then,
#     alternating, with only the sample loaded (the holder is gone) or only
#     the file open (the sample is gone), and that the module stays live;
#   - ends the holder with SIGTERM (it then checks its events: none early,
#     none twice, none unexpected) or every third cycle with SIGKILL, and
#     removes the sample (shutdown of a timer that re-arms itself) and
#     twheel, whose device node and sysfs directory must be gone.
#
# The kernel checks the rest: twheel_destroy() warns about a wheel that
# still holds timers, kmem_cache_destroy() about timers left allocated,
# and the debug kernel adds KASAN, lockdep, ODEBUG and kmemleak (scanned by
# /init after the plan).  A few TAP lines summarise the counts.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

CYCLES=100
# A cycle costs about 2.6 s on the debug kernel (KASAN, kmemleak and
# lockdep on every load and unload; 105 s for 40 cycles in make check)
# against 0.4 s on stock: they find a bad access or a leak in any cycle,
# while the races between unloading and the module's users want many
# cycles, which the stock kernel runs.  12 cycles run each of the 12 pairs
# of cycle % 4 (the parameters, and with them the order of release) and
# cycle % 3 (the signal) once.
case "$TWHEEL_KERNEL" in
debug | debug612 | kcsan)
	CYCLES=12
	;;
esac
HOLDER=/selftests/twheel_lifecycle
READY=/tmp/lifecycle.ready
OUT=/tmp/lifecycle.out

ok_cycles=0
refused_both=0
refused_sample=0
tried_sample=0
refused_fd=0
tried_fd=0
holder_ok=0
holder_term=0
holder_killed=0
events=0
problems=0

problem() {
	problems=$((problems + 1))
	# the first few in full; the count says how many there were
	[ "$problems" -le 10 ] && echo "# cycle $cycle: $*"
	return 0
}

# Poll (bounded: 10 s in 20 ms steps) until "$@" succeeds.
wait_for() {
	_i=0
	until "$@"; do
		_i=$((_i + 1))
		[ "$_i" -le 500 ] || return 1
		sleep 0.02
	done
}

# (sysfs is read with the shell's read: a cat per poll costs a process)
sample_fired() {
	read -r _n </sys/module/twheel_sample/parameters/fired && [ "$_n" -gt 0 ]
}

twheel_live() {
	_s=
	read -r _s </sys/module/twheel/initstate 2>/dev/null
	[ "$_s" = live ] && [ -c /dev/twheel ]
}

# rmmod twheel must fail and leave the module as it was.
rmmod_refused() {
	_rc=0
	if [ "$cycle" -le 2 ]; then
		# show the message once per case
		_msg=$(rmmod twheel 2>&1) || _rc=$?
		echo "# refused ($1): $_msg"
	else
		rmmod twheel 2>/dev/null || _rc=$?
	fi
	if [ "$_rc" -eq 0 ]; then
		problem "rmmod twheel succeeded while held ($1)"
		return 1
	fi
	if ! twheel_live; then
		problem "twheel not live after a refused rmmod ($1)"
		return 1
	fi
	return 0
}

# End the holder with signal $1; with TERM its exit status is its verdict.
stop_holder() {
	kill "-$1" "$holder" 2>/dev/null || problem "the holder was gone before SIGTERM/KILL"
	_rc=0
	# (busybox reports a job killed by a signal on stderr: not news here)
	{ wait "$holder"; } 2>/dev/null || _rc=$?
	holder=
	if [ "$1" = KILL ]; then
		holder_killed=$((holder_killed + 1))
		[ "$_rc" -eq 137 ] || problem "holder killed, status $_rc"
		return 0
	fi
	holder_term=$((holder_term + 1))
	_line=$(grep '^twheel_lifecycle: events=' "$OUT" || true)
	_n=${_line#*events=}
	_n=${_n%% *}
	if [ "$_rc" -eq 0 ] && [ -n "$_line" ]; then
		holder_ok=$((holder_ok + 1))
		events=$((events + _n))
	else
		problem "holder status $_rc: $(cat "$OUT")"
	fi
}

# One cycle; returns non-zero when the module could not be removed, which
# ends the loop (nothing after it would mean anything).
cycle() {
	case $((cycle % 4)) in
	0) params= ;;
	1) params="tick_ns=100000 wheel_bits=8" ;;
	2) params="budget=1" ;;
	*) params="tick_ns=4000000 wheel_bits=4" ;;
	esac
	# shellcheck disable=SC2086  # $params is a list of words
	if ! insmod /modules/twheel.ko $params; then
		problem "insmod twheel $params failed"
		return 1
	fi
	twheel_live || problem "no live twheel and /dev/twheel after insmod"
	if ! insmod /modules/twheel_sample.ko period_ms=2 periods=1000000000; then
		problem "insmod twheel_sample failed"
		rmmod twheel || true
		return 1
	fi

	rm -f "$READY"
	"$HOLDER" -r "$READY" >"$OUT" 2>&1 &
	holder=$!
	wait_for test -e "$READY" || problem "the holder read no event within 10 s"
	wait_for sample_fired || problem "the sample's timer did not fire within 10 s"

	rmmod_refused "file open, sample loaded" && refused_both=$((refused_both + 1))
	if [ $((cycle % 3)) -eq 0 ]; then sig=KILL; else sig=TERM; fi
	if [ $((cycle % 2)) -eq 0 ]; then
		stop_holder "$sig"
		tried_sample=$((tried_sample + 1))
		[ -d /sys/module/twheel/holders/twheel_sample ] ||
			problem "twheel_sample is not listed as a holder"
		rmmod_refused "sample loaded" && refused_sample=$((refused_sample + 1))
		rmmod twheel_sample || problem "rmmod twheel_sample failed"
	else
		rmmod twheel_sample || problem "rmmod twheel_sample failed"
		tried_fd=$((tried_fd + 1))
		read -r refcnt </sys/module/twheel/refcnt
		[ "$refcnt" -gt 0 ] || problem "refcnt 0 with a file open"
		rmmod_refused "file open" && refused_fd=$((refused_fd + 1))
		stop_holder "$sig"
	fi

	if ! rmmod twheel; then
		problem "rmmod twheel failed once released"
		return 1
	fi
	if [ -e /sys/module/twheel ] || [ -e /dev/twheel ]; then
		problem "/sys/module/twheel or /dev/twheel still there after rmmod"
		return 1
	fi
	return 0
}

echo "# lifecycle: $CYCLES cycles, holder $HOLDER"
[ -x "$HOLDER" ] || fail "$HOLDER is not in the initramfs"
holder=
t0=$(centis)
cycle=1
while [ "$cycle" -le "$CYCLES" ]; do
	before=$problems
	if ! cycle; then
		if [ -n "$holder" ]; then
			kill -KILL "$holder"
			{ wait "$holder"; } 2>/dev/null || true
		fi
		echo "# stopped in cycle $cycle"
		break
	fi
	[ "$problems" -eq "$before" ] && ok_cycles=$((ok_cycles + 1))
	cycle=$((cycle + 1))
done
t1=$(centis)
el=$((t1 - t0))
echo "# lifecycle: $ok_cycles clean cycles in $((el / 100)).$((el % 100 / 10)) s," \
	"$events events read by $holder_term holders ended with SIGTERM," \
	"$holder_killed killed, $problems problem(s)"

check "$CYCLES load/unload cycles with timers in flight: $ok_cycles/$CYCLES clean" \
	[ "$ok_cycles" -eq "$CYCLES" ]
check "rmmod refused while held by a file and twheel_sample: $refused_both/$CYCLES" \
	[ "$refused_both" -eq "$CYCLES" ]
check "rmmod refused while held by twheel_sample alone: $refused_sample/$tried_sample" \
	[ "$refused_sample" -eq $((CYCLES / 2)) ]
check "rmmod refused while held by an open file alone: $refused_fd/$tried_fd" \
	[ "$refused_fd" -eq $((CYCLES - CYCLES / 2)) ]
holders_clean() {
	[ "$holder_ok" -eq "$holder_term" ] && [ "$holder_term" -gt 0 ] &&
		[ "$events" -gt 0 ]
}
check "holders ended by SIGTERM read events, none early, twice or unexpected: $holder_ok/$holder_term" \
	holders_clean
# twheel_sample complains (pr_err) about any early expiration.
check "twheel_sample reported no early expiration" \
	sh -c '! dmesg | grep -q "twheel_sample: .*early"'
