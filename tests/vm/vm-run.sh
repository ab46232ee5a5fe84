#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one of the harness kernels in qemu (TCG) with a busybox initramfs,
# run a test plan inside and turn what the console shows into a verdict.
#
# Usage: vm-run.sh [--timeout SEC] [--min-tests N] KERNEL PLAN [PLAN...]
#   KERNEL  stock61 | stock612 | rt61 | rt612 | debug | debug612 | kcsan | sid
#   PLAN    a name in tests/vm/plans/ (kunit, selftest) or a path to a POSIX
#           sh script; it runs under busybox `sh -e` as the guest's plan
#   Several plans run in one boot, one after the other, each under its own
#   `sh -e` after a "TWHEEL-PART: <plan>" line; a failing one does not stop
#   the later ones.  A boot and, on the debug kernel, the closing kmemleak
#   scans cost about 50 s of TCG time, which one VM per plan paid again.
#
# The initramfs holds busybox (static) with its applet links, the modules
# built for KERNEL in /modules (and, for the kernels built from source,
# debug, debug612 and kcsan, the kernel's own modules such as kunit.ko in
# /modules/kernel),
# the static selftest binaries in /selftests, twheelctl and README.md's C
# example in /bin, the plan as /plan, the plan helpers as /lib/twheel.sh,
# Documentation/admin-guide.rst as /doc/admin-guide.rst (tests/vm/plans/
# docs.sh) and tests/vm/guest/init as /init.
#
# The run fails when: qemu times out; the guest's "TWHEEL-EXIT: <rc>"
# sentinel is missing or rc != 0; the console shows a kernel splat (BUG,
# WARNING, KASAN, KCSAN, lockdep, Oops, ODEBUG, kmemleak, panic, a call
# trace...); a TAP/KTAP test case failed; fewer than --min-tests cases ran.
#
# KCSAN reports (kcsan kernel) count only when they are twheel's: a report
# is the block from "BUG: KCSAN: ..." to the next "=====" separator, and it
# is twheel's when its header or the stack of one of its two accesses names
# twheel code -- a frame tagged "[twheel...]" or a twheel_, tw_wheel_ or
# twk_ symbol.  Of an interrupt's stack only the interrupt's own frames
# count, not those of the code it interrupted (below asm_sysvec_*); the
# held locks, irq events and "Comm:" of the current task never count
# (tests/vm/kcsan-filter.awk).  The core kernel races with itself while
# twheel runs or the guest idles (APIC, tick, scheduler...), and failing on
# that would make the verdict useless; those reports are listed as "#" info
# lines with their headers and counted, and the console log keeps them.
# Every other splat still fails the run, on kcsan as everywhere.  A twheel
# report is printed in full and kept in build/vm/<kernel>-<plan>.kcsan.log.
#
# A warning that a test announced on the console ("TWHEEL-EXPECT-WARN:
# NAME" right before it triggers it) is not a splat: the next warning
# report naming NAME is taken out (tests/vm/warn-filter.awk), and the run
# fails if none came.  This is for paths whose documented behaviour is to
# warn, such as twheel_timer_cancel_sync() from the timer's own callback.
#
# The full console log is kept in build/vm/<kernel>-<plan>.log.  The last
# line printed is "N passed, N failed" over the test cases, plus one failure
# for a bad verdict that no test case accounts for (splat, crash, timeout).
#
# Environment: TWHEEL_VM_TIMEOUT (default 300 s), TWHEEL_VM_BOOT_TIMEOUT
# (300 s from qemu's start to the plan's banner), TWHEEL_VM_MEM (1G),
# TWHEEL_VM_CPUS (2), TWHEEL_VM_APPEND (extra kernel command line),
# TWHEEL_VM_VERBOSE=1 (print the whole console, not only the plan's part),
# TWHEEL_VM_QEMU_ARGS (more qemu arguments, split at spaces: bench/run.sh
# --insn adds its TCG plugin with it).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/../../scripts/lib.sh"

timeout_s=${TWHEEL_VM_TIMEOUT:-300}
min_tests=0
while (($#)); do
	case "$1" in
	--timeout) timeout_s=$2; shift 2 ;;
	--min-tests) min_tests=$2; shift 2 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
(($# >= 2)) || die "usage: ${0##*/} [--timeout SEC] [--min-tests N] KERNEL PLAN [PLAN...]"
kernel=$1
shift
check_kernel_name "$kernel"
plan_files=()
plan_names=()
for plan in "$@"; do
	if [[ -f "$plan" ]]; then
		plan_files+=("$(realpath "$plan")")
		plan_names+=("$(basename "$plan" .sh)")
	else
		plan_files+=("$TWHEEL_ROOT/tests/vm/plans/$plan.sh")
		plan_names+=("$plan")
		[[ -f "${plan_files[-1]}" ]] || die "no plan '$plan' (not a file, not in tests/vm/plans/)"
	fi
done
plan_name=$(IFS=+; echo "${plan_names[*]}")

# Lines that mean the kernel is unhappy.  Lockdep reports start with
# "WARNING: possible ..." / "WARNING: inconsistent lock state" and its other
# complaints with "INFO:", as do hung tasks and RCU stalls; DEBUG_LIST,
# ODEBUG and KASAN print their own headers; "Call Trace:" catches any other
# stack dump.  Only kernel lines count (they carry a printk timestamp, see
# printk.time=1 below), so a test program that prints "WARNING:" is not a
# splat.  kmemleak's report is printed by /init with cat, hence no stamp.
SPLAT_RE='\[ *[0-9]+\.[0-9]+\] .*(BUG:|WARNING:|KASAN:|UBSAN:|Oops|ODEBUG:|Kernel panic|kernel BUG at|general protection fault|possible recursive locking|possible circular locking|inconsistent lock state|INFO: (task |possible |trying to register|lockdep|rcu_)|list_(add|del) corruption|Call Trace:)|unreferenced object 0x'

run_id=$kernel-$plan_name
vmdir=$TWHEEL_BUILD/vm
stage=$vmdir/$run_id.root
initrd=$vmdir/$run_id.cpio.gz
console=$vmdir/$run_id.log
mkdir -p "$vmdir"

# ---- ingredients ----------------------------------------------------------------

image=$("$TWHEEL_ROOT/tests/vm/kernels.sh" image "$kernel")
kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$kernel")

buildlog=$vmdir/$run_id.build.log
if ! with_build_lock "modules-$kernel" "$TWHEEL_ROOT/tests/vm/build-modules.sh" "$kernel" \
	>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	die "$kernel: module build failed"
fi
ksrc=$("$TWHEEL_ROOT/tests/vm/kernels.sh" source)
# The static selftest programs (30 s one at a time, 18 s with two jobs on
# the 2-core machine): the first VM run of a tree builds them, in make
# check at the start of lane 2.
mkjobs=()
add_make_jobs mkjobs
if ! with_build_lock userland make "${mkjobs[@]}" -C "$TWHEEL_ROOT/tests/selftests" --no-print-directory \
	KSFT_DIR="$ksrc/tools/testing/selftests" OUTPUT="$TWHEEL_BUILD/selftests" \
	>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	die "selftest build failed"
fi
# twheelctl and the README example for the demo and for plans that drive
# the device: static (the initramfs has no libc), in a directory of their
# own, since tools/ holds the dynamic build a user makes
ustatic=$TWHEEL_BUILD/tools-static
if ! with_build_lock userland make -C "$TWHEEL_ROOT/tools" --no-print-directory \
	STATIC=1 O="$ustatic" TWHEELCTL="$ustatic/twheelctl" all >"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	die "tools build failed"
fi

# ---- initramfs --------------------------------------------------------------------

rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,lib,proc,sys,dev,tmp,modules/kernel,selftests}
cp /bin/busybox "$stage/bin/busybox"
# "bin/sh", "usr/sbin/rdate", ...: one link per applet, as `busybox --install -s`
while read -r applet; do
	[[ "$applet" == bin/busybox ]] || ln -sf /bin/busybox "$stage/$applet"
done < <(/bin/busybox --list-full)
# The modules of the last build, as its modules.order lists them (.ko
# paths on 6.1, .o on 6.12): the build tree keeps the .ko of a module whose
# source has gone, which must not be tested.
mods=$TWHEEL_BUILD/mod/$kernel
[[ -s "$mods/modules.order" ]] || die "no modules built for $kernel in $mods"
while read -r ko; do
	ko=${ko%.o}
	ko=${ko%.ko}.ko
	[[ "$ko" == /* ]] || ko=$mods/$ko
	cp "$ko" "$stage/modules/"
done <"$mods/modules.order"
# the built kernels' own modules (kunit.ko); stock kernels need none of theirs
is_built_kernel "$kernel" && find "$kdir" -name '*.ko' -exec cp {} "$stage/modules/kernel/" \;
find "$TWHEEL_BUILD/selftests" -maxdepth 1 -type f -perm -u+x -exec cp {} "$stage/selftests/" \;
install -m 0755 "$ustatic/twheelctl" "$stage/bin/twheelctl"
# README.md's C example, as cut out and built by tools/Makefile
install -m 0755 "$ustatic/readme_example" "$stage/bin/readme_example"
install -m 0755 "$TWHEEL_ROOT/tests/vm/guest/init" "$stage/init"
install -m 0644 "$TWHEEL_ROOT/tests/vm/guest/lib.sh" "$stage/lib/twheel.sh"
# the pages whose examples the docs plan compares with what the guest shows
install -D -m 0644 "$TWHEEL_ROOT/Documentation/admin-guide.rst" "$stage/doc/admin-guide.rst"
if ((${#plan_files[@]} == 1)); then
	install -m 0644 "${plan_files[0]}" "$stage/plan"
else
	mkdir -p "$stage/plans"
	for i in "${!plan_files[@]}"; do
		install -m 0644 "${plan_files[i]}" "$stage/plans/${plan_names[i]}.sh"
	done
	cat >"$stage/plan" <<EOF
# Generated by vm-run.sh: ${plan_names[*]}, one after the other.
rc=0
for p in ${plan_names[*]}; do
	echo "TWHEEL-PART: \$p"
	sh -e "/plans/\$p.sh" || rc=1
done
exit "\$rc"
EOF
fi
printf 'TWHEEL_KERNEL=%s\nTWHEEL_PLAN=%s\nexport TWHEEL_KERNEL TWHEEL_PLAN\n' \
	"$kernel" "$plan_name" >"$stage/etc/twheel.env"
(cd "$stage" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 >"$initrd"

# ---- boot -----------------------------------------------------------------------------

mem=${TWHEEL_VM_MEM:-1G}
append="console=ttyS0 printk.time=1 panic=-1 oops=panic rdinit=/init ${TWHEEL_VM_APPEND:-}"
# The built kernels have no ACPI, so no HPET or ACPI PM timer, and TCG's
# vCPUs fail the TSC synchronisation check: they kept time with jiffies,
# CLOCK_MONOTONIC in 4 ms steps and hrtimers (twheel's tick among them)
# in low resolution mode.  TCG's TSC is one clock for all vCPUs: trust it.
# Its rate is the host's, and the guest's calibration against the PIT
# fails on a loaded host: tell it the rate (tests/vm/tsc_khz.c).
tsc_khz=$TWHEEL_BUILD/tsc_khz
build_tsc_khz() {
	[[ $tsc_khz -nt $TWHEEL_ROOT/tests/vm/tsc_khz.c ]] ||
		gcc -O2 -o "$tsc_khz" "$TWHEEL_ROOT/tests/vm/tsc_khz.c"
}
if is_built_kernel "$kernel"; then
	append+=" tsc=reliable"
	if grep -qw constant_tsc /proc/cpuinfo &&
		with_build_lock userland build_tsc_khz >>"$buildlog" 2>&1 &&
		khz=$("$tsc_khz") && [[ $khz =~ ^[1-9][0-9]*$ ]]; then
		append+=" tsc_early_khz=$khz"
	else
		log "$run_id: host TSC rate unknown; the guest calibrates it"
	fi
fi
# Two sockets of one core: the debug kernel has no ACPI and finds CPUs in
# SeaBIOS's MP table, which lists one CPU per socket.  TWHEEL_VM_CPUS
# (default 2) sets how many, for the scaling benchmark (bench/smp.sh).
cpus=${TWHEEL_VM_CPUS:-2}
smp=$cpus,sockets=$cpus,cores=1,threads=1
qemu=(qemu-system-x86_64 -accel tcg -smp "$smp" -m "$mem" -no-reboot
	-display none -monitor none -serial "file:$console"
	-kernel "$image" -initrd "$initrd" -append "$append")
read -r -a extra <<<"${TWHEEL_VM_QEMU_ARGS:-}"
qemu+=("${extra[@]}")
log "$run_id: ${qemu[*]}"
# qemu under the run's timeout; meanwhile, a boot watchdog: a guest that
# has not printed the plan's banner after $boot_s seconds is stopped
# (boot_hung=1).  A watchdog's poll, not a test's synchronisation.
run_qemu() {
	local pid waited=0
	# not the banner of an earlier run, before qemu truncates the file
	rm -f "$console"
	# -k: a qemu that ignores SIGTERM is killed 10 s later
	timeout -k 10 "$timeout_s" "${qemu[@]}" </dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && ! grep -q 'TWHEEL-PLAN: ' "$console" 2>/dev/null; do
		if ((waited >= boot_s)); then
			boot_hung=1
			kill "$pid" 2>/dev/null || true
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	wait "$pid" || qemu_rc=$?
}

# The boot takes 3-25 s of a 2-core host alone, a few times that in
# make check's lanes.
boot_s=${TWHEEL_VM_BOOT_TIMEOUT:-300}
start=$SECONDS
rm -f "$console.boot1"
# A guest that dies or hangs before /init prints the plan's banner never
# ran any of our code: TCG's live text patching occasionally oopses a stock
# kernel at boot (an int3 in run_timer_softirq() on 6.12), and a stock 6.1
# boot under the instruction profiler once waited forever in i8042_probe()
# for a 250 ms timeout, hung-task reports every 120 s, until the run's
# 3600 s timeout.  Such a boot is tried once more, and says so; a timeout
# after the banner is not (it may have taken hours).
for attempt in 1 2; do
	qemu_rc=0
	boot_hung=0
	run_qemu
	((attempt == 1)) || break
	((!boot_hung && (qemu_rc == 124 || qemu_rc == 137))) && break
	grep -q 'TWHEEL-PLAN: ' "$console" && break
	mv -f "$console" "$console.boot1"
	if ((boot_hung)); then
		log "$run_id: no plan banner after $boot_s s: the boot hung; booting once more" \
			"(first console: $console.boot1)"
	else
		log "$run_id: the guest died before the plan started; booting once more" \
			"(first console: $console.boot1)"
	fi
	grep -m 3 -E 'Oops:|BUG:|Kernel panic|INFO: task' "$console.boot1" | sed 's/^/    /' >&2 || true
done
elapsed=$((SECONDS - start))

# ---- verdict ----------------------------------------------------------------------------

clean=$vmdir/$run_id.clean.log
tr -d '\r' <"$console" >"$clean"

if [[ -n "${TWHEEL_VM_VERBOSE:-}" ]]; then
	cat "$clean"
else
	# what the plan ran: from the plan's banner to the sentinel
	sed -n '/TWHEEL-PLAN: /,/TWHEEL-EXIT: /p' "$clean"
fi

# reasons: why the run failed; verdict_bad: a reason that no TAP/KTAP
# result accounts for (a splat, a crash, a timeout, too few cases) and that
# therefore counts as one failure of its own in the summary.
reasons=()
verdict_bad=0
bad() {
	reasons+=("$1")
	verdict_bad=1
}
if ((boot_hung)); then
	bad "no plan banner after $boot_s s, twice: the boot hung"
else
	((qemu_rc == 124 || qemu_rc == 137)) && bad "timed out after ${timeout_s} s"
	((qemu_rc != 0 && qemu_rc != 124 && qemu_rc != 137)) && bad "qemu exited with status $qemu_rc"
fi
read -r passed failed skipped < <(awk -f "$TWHEEL_ROOT/tests/vm/tap-count.awk" "$clean")
guest_rc=$(sed -n 's/^.*TWHEEL-EXIT: \([0-9]*\).*$/\1/p' "$clean" | tail -n 1)
if [[ -z "$guest_rc" ]]; then
	bad "no TWHEEL-EXIT sentinel: the guest crashed, hung or never ran the plan"
elif ((guest_rc != 0)); then
	# a test program's failing status is already counted by its TAP lines
	reasons+=("the plan failed (guest rc $guest_rc)")
	((failed)) || verdict_bad=1
fi
# judged: the console with the KCSAN reports taken out (blank lines, so
# that line numbers stay those of $clean); on other kernels, the console.
judged=$clean
kcsan_ours=$vmdir/$run_id.kcsan.log
kcsan_ignored=$vmdir/$run_id.kcsan-ignored.log
rm -f "$kcsan_ours" "$kcsan_ignored"
n_ours=0
n_ignored=0
if [[ "$kernel" == kcsan ]]; then
	judged=$vmdir/$run_id.judged.log
	SPLAT_RE=$SPLAT_RE awk -v ours="$kcsan_ours" -v ignored="$kcsan_ignored" \
		-f "$TWHEEL_ROOT/tests/vm/kcsan-filter.awk" "$clean" >"$judged"
	n_ours=$(grep -c 'BUG: KCSAN:' "$kcsan_ours" || true)
	n_ignored=$(grep -c . "$kcsan_ignored" || true)
fi
# The warnings a test announced (tests/vm/warn-filter.awk) are no splats;
# an announced warning that did not come is a failure.
warn_unmet=$vmdir/$run_id.warn-unmet
rm -f "$warn_unmet"
awk -v unmet="$warn_unmet" -f "$TWHEEL_ROOT/tests/vm/warn-filter.awk" \
	"$judged" >"$vmdir/$run_id.judged-warn.log"
judged=$vmdir/$run_id.judged-warn.log
if [[ -s "$warn_unmet" ]]; then
	while IFS= read -r w; do
		bad "a test announced a warning (named $w), which did not come"
	done <"$warn_unmet"
fi
splats=$(grep -cE "$SPLAT_RE" "$judged" || true)
((splats)) && bad "$splats kernel splat line(s) on the console"
((n_ours)) && bad "$n_ours KCSAN report(s) involving twheel"
((failed)) && reasons+=("$failed test case(s) failed")
total=$((passed + failed + skipped))
((total < min_tests)) && bad "only $total test case(s) ran, expected at least $min_tests"

# The KCSAN reports outside twheel: info, not a failure.
if ((n_ignored)); then
	echo "# $run_id: $n_ignored KCSAN report(s) outside twheel, not counted:"
	sed -e 's/^\[ *[0-9]*\.[0-9]*\] /#   /' "$kcsan_ignored"
fi
if [[ "$kernel" == kcsan ]]; then
	echo "# $run_id: KCSAN reports: $n_ours involving twheel, $n_ignored outside"
	# the guest's /sys/kernel/debug/kcsan counters (tests/vm/guest/init)
	sed -n 's/^TWHEEL-KCSAN: /# '"$run_id"': KCSAN counters: /p' "$clean"
fi

if ((${#reasons[@]})); then
	log "$run_id: FAIL after ${elapsed} s; console: $console"
	printf '    - %s\n' "${reasons[@]}" >&2
	if ((splats)); then
		echo "---- kernel splats (with up to 30 lines of context) ----" >&2
		grep -nE -A 30 "$SPLAT_RE" "$judged" | head -n 200 >&2 || true
	fi
	if ((n_ours)); then
		echo "---- KCSAN reports involving twheel (all in $kcsan_ours) ----" >&2
		head -n 400 "$kcsan_ours" >&2
	fi
	grep -n 'TWHEEL-FAIL:' "$clean" >&2 || true
	if [[ -z "$guest_rc" ]]; then
		echo "---- last 40 console lines ----" >&2
		tail -n 40 "$clean" >&2
	fi
	echo "# $run_id: $skipped skipped"
	summary "$passed" $((failed + verdict_bad))
	exit 1
fi
log "$run_id: PASS in ${elapsed} s ($total test cases, $skipped skipped; console: $console)"
summary "$passed" "$failed"
