# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# CPU hotplug plan (make robust; stock 6.1, 6.12 and debug VMs): cpu1 goes
# offline and online again and again while timers run on both CPUs'
# bases of the default wheel.  twheel_stress (4 threads, one shared fd,
# timers spread over 2 s, arming, modifying, cancelling and reading) runs
# in the background and checks that every timer not cancelled comes
# exactly once and never early; meanwhile the plan writes 0 and 1 to
# /sys/devices/system/cpu/cpu1/online, 300 ms apart, and after each
# offline reads cpu1's line of the wheel's debugfs stats: its base must
# hold no timer (the hotplug teardown moved them to a live CPU's base).
# The stress runs again (up to three runs) until cpu1 went offline twice
# while timers ran.
# The kernel side (KASAN, lockdep, list debugging on debug) is judged by
# vm-run.sh as always.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

ONLINE=/sys/devices/system/cpu/cpu1/online
STATS=/sys/kernel/debug/twheel/default/stats
# 200,000 timers take a few seconds on stock; the debug kernel gets
# through about 2,000 a second (tests/vm/plans/robust.sh), so 20,000.
STRESS_N=200000
# The stress's timers are due over this many ms: long enough for two
# offline/online toggles (each takes 2-3 s on the debug kernel) while
# they run.
SPREAD_MS=2000
case "$TWHEEL_KERNEL" in
debug | debug612 | kcsan)
	STRESS_N=20000
	SPREAD_MS=6000
	;;
esac

# Pending timers on cpu1's base: the second column of its line.
cpu1_pending() {
	awk '$1 == "cpu1" { print $2 }' "$STATS"
}

# The default wheel's bases: one per CPU online since the load.
nr_bases() {
	awk '$1 == "bases:" { print $2 }' "$STATS"
}

if [ ! -w "$ONLINE" ]; then
	load twheel
	skip "cpu1 offline and online while timers run" "no $ONLINE"
	unload twheel
	exit 0
fi

# Loaded with cpu1 offline, the default wheel has no base (no engine
# memory) for it until cpu1 comes online.
echo 0 >"$ONLINE"
online=$(grep -c ^processor /proc/cpuinfo)
load twheel
bases_off=$(nr_bases)
echo 1 >"$ONLINE"
bases_on=$(nr_bases)
echo "# default wheel: $bases_off bases for $online online CPUs; $bases_on with cpu1"
check "no base for cpu1 while it was offline since the load" \
	test "$bases_off" = "$online"
check "a base for cpu1 once it came online" test "$bases_on" = $((online + 1))

# A toggle takes 2-3 s on the debug kernel, and up to 5 s on a loaded
# host: a stress run can end before the second one.  Then another run
# (at most three), until cpu1 went offline twice while timers ran; every
# run's verdict counts.
toggles=0
stray=0
loaded=0
rc=0
runs=0
broken=
while [ "$toggles" -lt 2 ] && [ "$runs" -lt 3 ] && [ -z "$broken" ]; do
	runs=$((runs + 1))
	/selftests/twheel_stress -n "$STRESS_N" -j 4 -f 1 -d "$SPREAD_MS" -i >/tmp/stress.out 2>&1 &
	pid=$!
	# The stress arms its timers in well under a second: toggle once
	# cpu1's base holds some of them (or after 5 s, which the checks
	# below report).
	i=0
	while [ "$i" -lt 50 ] && [ "$(cpu1_pending)" = 0 ] && kill -0 "$pid" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	while kill -0 "$pid" 2>/dev/null; do
		before=$(cpu1_pending)
		[ "${before:-0}" -gt 0 ] && loaded=$((loaded + 1))
		echo 0 >"$ONLINE" || { fail "writing 0 to $ONLINE"; broken=1; break; }
		after=$(cpu1_pending)
		if [ "$after" != 0 ]; then
			echo "# cpu1 offline with $after timers on its base"
			stray=$((stray + 1))
		fi
		sleep 0.3
		echo 1 >"$ONLINE" || { fail "writing 1 to $ONLINE"; broken=1; break; }
		toggles=$((toggles + 1))
		sleep 0.3
	done
	wait "$pid" || rc=$?
	cat /tmp/stress.out
done
echo "# $runs stress run(s)"
grep -E '^(bases|migrated|pending):' "$STATS" | sed 's/^/# /'
check "cpu1 went offline and online again while timers ran ($toggles times)" \
	[ "$toggles" -ge 2 ]
check "cpu1's base held timers when it went offline ($loaded of $toggles times)" \
	[ "$loaded" -ge 1 ]
check "no timer left on cpu1's base while it was offline" [ "$stray" -eq 0 ]
check "twheel_stress across hotplug: every timer once, none early" [ "$rc" -eq 0 ]
check "cpu1 is online at the end" grep -q 1 "$ONLINE"
unload twheel
