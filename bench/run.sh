#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# twheel benchmarks: build the in-kernel benchmark module and the static
# userspace benchmark, boot the stock 6.1 kernel once through the harness
# (tests/vm/vm-run.sh) with a plan that runs both, and collect the results.
#
# Usage: bench/run.sh [--smoke | --profile | --insn] [--plots] [--kernel KERNEL]
#   (no option)  full run (N = 10^3 .. 10^6, 5 repetitions, implementations
#                rotated; about 40 minutes); writes
#                build/bench/results-KERNEL.csv and prints the tables and
#                targets (bench/report.sh).  Publish it with
#                `bench/publish.sh kernel-KERNEL build/bench/results-KERNEL.csv`
#                (or `make -C bench publish KERNEL=...`): bench/results/
#                holds the latest full run per kernel, at these defaults
#   --smoke      seconds-long run with tiny N and one repetition, for
#                `make check`; writes build/bench/results-smoke-KERNEL.csv
#   --profile    instead of the benchmarks, run chosen workloads under
#                twheel_prof.ko (a sampling profiler: perf has no PMU in
#                TCG) and write the hottest functions of each to
#                build/bench/profile.txt
#   --insn       instead of the benchmarks, count the kernel instructions
#                that chosen workloads execute, per function, exactly (a
#                QEMU TCG plugin, bench/insn/insn_prof.c: it sees the
#                interrupt-off regions the sampling profiler cannot) and
#                write the largest shares of each to build/bench/insn.txt
#   --plots      also draw the figures of the run into build/bench/plots/
#                (bench/plot.sh, needs gnuplot); Documentation/'s are
#                drawn from bench/results/ (make -C bench plots)
#   --kernel K   stock61 (default) | stock612; KASAN kernels are pointless
#
# BENCH_PROFILE, with --profile: a file of plan lines run instead of the
# default workloads, e.g. "prof deliver $U -S deliver -i twheel" ($U is
# twheel_ubench; "kb PARAMS" loads and unloads twheel_bench.ko).
# BENCH_INSN, with --insn: the same, with "iprof LABEL CMD..." lines.
#
# Both modes check that the CSV is well formed, has the header
# suite,impl,n,op,ns_per_op,min,max,reps (the median of the repetitions,
# their min and max, and how many there were) and rows from every suite,
# and exit non-zero otherwise.  The last line is "N passed, N failed".
#
# Environment: TWHEEL_VM_MEM (default here 4G, smoke 1G: 10^6 timerfds need
# ~1 GiB),
# TWHEEL_VM_APPEND (tsc=reliable is always added, see below),
# TWHEEL_VM_TIMEOUT (default here 7200 s, smoke 600 s), BENCH_KPARAMS /
# BENCH_UARGS (extra twheel_bench.ko parameters / twheel_ubench options,
# appended to the mode's defaults).
#
# How the binaries reach the VM: the harness's initramfs carries the
# modules built for the kernel, the selftests and the plan.  The plan this
# script writes carries the benchmark module and binary as a base64 tar
# after an `exit`, and unpacks itself into /tmp/bench in the guest.
set -euo pipefail
BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$BENCH_DIR/../scripts/lib.sh"

smoke=0
plots=0
kernel=stock61
while (($#)); do
	case "$1" in
	--smoke) smoke=1; shift ;;
	--profile) smoke=2; shift ;;
	--insn) smoke=3; shift ;;
	--plots) plots=1; shift ;;
	--kernel) kernel=$2; shift 2 ;;
	-h | --help) sed -n '4,34p' "$0"; exit 0 ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
done
check_kernel_name "$kernel"

out=$TWHEEL_BUILD/bench
mkdir -p "$out"
if ((smoke == 3)); then
	mode=insn
	kparams=
	uargs=
	: "${TWHEEL_VM_TIMEOUT:=3600}"
elif ((smoke == 2)); then
	mode=profile
	csv=$out/results-profile.csv
	kparams=
	uargs=
	: "${TWHEEL_VM_TIMEOUT:=3600}"
elif ((smoke)); then
	mode=smoke
	csv=$out/results-smoke-$kernel.csv
	# Tiny N, one repetition, short intervals: a few seconds in the guest.
	kparams="ns=100,1000 reps=1 batch=100 settle_ms=10000 sorted_max=1000 fire_max=1000 sc_ns=0,100 sc_pairs=200 tick_ms=200 wake_ms=300 mix_n=400 mix_ms=200"
	kparams+=" spread_ticks=10000 spread_ms=100 late_idle_n=100 late_idle_ms=200 late_load_n=2000 late_win_ms=100 late_burst_n=5000 ratas_units=10 ratas_ms=200 ratas_idle_ms=200"
	# deliver: windows of 200 ms and a 50 ms period, so that its six ways
	# take no longer than the two of before them did with 1 s and 100 ms
	uargs="-n 100,1000 -r 1 -w 200 -P 50"
	: "${TWHEEL_VM_TIMEOUT:=600}"
	: "${TWHEEL_VM_MEM:=1G}"
else
	mode=full
	csv=$out/results-$kernel.csv
	# 5 repetitions in and out of the kernel: what bench/results/ publishes
	kparams="reps=5"
	uargs="-r 5 -p 100000"
	: "${TWHEEL_VM_TIMEOUT:=7200}"
fi
kparams="$kparams ${BENCH_KPARAMS:-}"
uargs="$uargs ${BENCH_UARGS:-}"
: "${TWHEEL_VM_MEM:=4G}"
# Under TCG the kernel finds the vCPUs' TSCs "unsynchronized" and falls back
# to the HPET, whose every read (ktime_get()) is an emulated MMIO access of
# about a microsecond: clock reads would then dominate every path that takes
# the time.  Real machines run on the TSC, so the benchmark VM does too.
TWHEEL_VM_APPEND="${TWHEEL_VM_APPEND:-} tsc=reliable"
if [[ $mode == insn ]]; then
	# One address per function from boot to boot: the plan prints them.
	TWHEEL_VM_APPEND+=" nokaslr"
	rm -rf "$out/insn"
	mkdir -p "$out/insn"
	TWHEEL_VM_QEMU_ARGS="${TWHEEL_VM_QEMU_ARGS:-} -plugin $out/insn_prof.so,out=$out/insn/window"
	export TWHEEL_VM_QEMU_ARGS
fi
export TWHEEL_VM_TIMEOUT TWHEEL_VM_MEM TWHEEL_VM_APPEND

pass=0
fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
notok() { echo "not ok - $*"; fail=$((fail + 1)); }
finish() {
	summary "$pass" "$fail"
	((fail == 0))
	exit
}

# ---- build ----------------------------------------------------------------

for f in /usr/lib/x86_64-linux-gnu/liburing.a /usr/include/liburing.h; do
	[[ -e "$f" ]] || die "$f missing: apt-get install liburing-dev"
done

buildlog=$out/build.log
: >"$buildlog"
log "building twheel for $kernel (tests/vm/build-modules.sh)"
if ! "$TWHEEL_ROOT/tests/vm/build-modules.sh" "$kernel" >>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	notok "twheel modules for $kernel"
	finish
fi
kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$kernel")
symvers=$TWHEEL_BUILD/mod/$kernel/Module.symvers

# The benchmark module, out of tree: its own copy per kernel and mode, as
# make check runs the smoke and insn modes side by side.
kmod=$out/kmod-$kernel-$mode
mkdir -p "$kmod"
rsync -a --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude='.*.cmd' --exclude='*.order' \
	--exclude='*.symvers' "$BENCH_DIR/kernel/" "$kmod/"
WERROR=${WERROR:-$([[ -n "${CI:-}" ]] && echo 1 || echo 0)}
margs=(-C "$kdir" M="$kmod" W=1 TWHEEL_INCLUDE="$TWHEEL_ROOT/include"
	KBUILD_EXTRA_SYMBOLS="$symvers")
((WERROR)) && margs+=(KCFLAGS="-Werror")
log "building twheel_bench.ko for $kernel"
if ! make "${margs[@]}" modules >>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	notok "twheel_bench.ko for $kernel"
	finish
fi

log "building twheel_ubench (static)"
if ! make -C "$BENCH_DIR/user" --no-print-directory O="$out" >>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	notok "twheel_ubench"
	finish
fi
if [[ $mode == insn ]] &&
	! make -C "$BENCH_DIR/insn" --no-print-directory O="$out" >>"$buildlog" 2>&1; then
	cat "$buildlog" >&2
	notok "insn_prof.so and insn_mark"
	finish
fi
ok "built twheel_bench.ko ($kernel) and twheel_ubench"

# ---- the plan, with the binaries as its payload -----------------------------------

pay=$out/payload
rm -rf "$pay"
mkdir -p "$pay"
strip --strip-debug -o "$pay/twheel_bench.ko" "$kmod/twheel_bench.ko"
strip --strip-debug -o "$pay/twheel_prof.ko" "$kmod/twheel_prof.ko"
strip -o "$pay/twheel_ubench" "$out/twheel_ubench"
payload=(twheel_bench.ko twheel_prof.ko twheel_ubench)
if [[ $mode == insn ]]; then
	strip -o "$pay/insn_mark" "$out/insn_mark"
	payload+=(insn_mark)
fi

# The guest's part of the plan, by mode.
plan_body() {
	if [[ $mode == insn ]]; then
		# Each workload in a window of its own, named by the marks'
		# console lines (twheel_ubench -M adds its own per phase);
		# twheel_bench.ko stays loaded to the window's end, for its
		# addresses (insn-sym lines).
		cat <<'EOF'
U=/tmp/bench/twheel_ubench
K=/tmp/bench/twheel_bench.ko
kb() { insmod $K "$@"; }
iprof() {
	label=$1
	shift
	/tmp/bench/insn_mark -
	"$@" || fail "$label: $* failed"
	/tmp/bench/insn_mark "$label"
	if grep -q '^twheel_bench ' /proc/modules; then
		grep '\[twheel_bench\]$' /proc/kallsyms | sed 's/^/insn-sym /'
		rmmod twheel_bench
	fi
}
EOF
		if [[ -n "${BENCH_INSN:-}" ]]; then
			cat "$BENCH_INSN"
		else
			cat <<'EOF'
iprof user_tail $U -M -S user -i twheel_b4096,timerfd -n 1000,100000 -r 1
iprof deliver_tail $U -M -S deliver -e 1000,100000 -n 100000 -r 1 -s 0
iprof k_fire_twheel kb suites=fire impls=twheel ns=100000 reps=1
iprof k_fire_timer_list kb suites=fire impls=timer_list ns=100000 reps=1
EOF
		fi
		# The kernel's and twheel.ko's functions, for all windows.
		cat <<'EOF'
loglevel=$(cut -f1 /proc/sys/kernel/printk)
echo 1 >/proc/sys/kernel/printk
echo "insn-kallsyms-begin"
grep ' [tT] ' /proc/kallsyms | gzip -1 | base64
echo "insn-kallsyms-end"
echo "$loglevel" >/proc/sys/kernel/printk
EOF
	elif [[ $mode == profile ]]; then
		# Each workload between insmod and rmmod of the profiler.
		cat <<'EOF'
prof() {
	label=$1
	shift
	insmod /tmp/bench/twheel_prof.ko label="$label" period_us=50
	"$@" || fail "$label: $* failed"
	rmmod twheel_prof
}
U=/tmp/bench/twheel_ubench
K=/tmp/bench/twheel_bench.ko
kb() { insmod $K "$@" && rmmod twheel_bench; }
EOF
		if [[ -n "${BENCH_PROFILE:-}" ]]; then
			cat "$BENCH_PROFILE"
			return
		fi
		cat <<'EOF'
prof user_twheel_b4096 $U -i twheel_b4096 -n 100000 -r 5
prof user_twheel_single $U -i twheel -n 100000 -r 5
prof user_timerfd $U -i timerfd -n 100000 -r 5
prof k_ops_twheel kb suites=ops impls=twheel ns=100000 batch=20000 reps=25
prof k_ops_timer_list kb suites=ops impls=timer_list ns=100000 batch=20000 reps=25
prof k_fire_twheel kb suites=fire impls=twheel ns=1000000 reps=3
prof k_fire_timer_list kb suites=fire impls=timer_list ns=1000000 reps=3
prof k_mixed_twheel kb suites=mixed impls=twheel mix_ms=3000 mix_variants=plain
prof k_mixed_twheel_slack kb suites=mixed impls=twheel mix_ms=3000 mix_variants=slack
prof k_mixed_timer_list kb suites=mixed impls=timer_list mix_ms=3000
prof k_tick_twheel kb suites=tick ns=1000000 tick_ms=5000
EOF
	else
		cat <<EOF
check "twheel_bench.ko runs" insmod /tmp/bench/twheel_bench.ko $kparams
check "twheel_bench.ko unloads" rmmod twheel_bench
check "twheel_ubench runs" /tmp/bench/twheel_ubench $uargs
EOF
	fi
}

plan=$out/bench-$mode.sh
{
	cat <<EOF
# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
# Generated by bench/run.sh ($mode).
# The binaries follow the 'exit' below as a base64 tar.gz.
. /lib/twheel.sh
mkdir -p /tmp/bench
sed -n '/^__TWHEEL_BENCH_PAYLOAD__\$/,\$p' /plan | sed 1d | base64 -d | gunzip | tar -xf - -C /tmp/bench
echo "bench: MemTotal \$(sed -n 's/^MemTotal: *//p' /proc/meminfo), \$(grep -c ^processor /proc/cpuinfo) CPUs, \$(uname -r), clocksource \$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
# 10^6 timers on one file need a per-user limit above the RAM-sized default
load twheel max_timers_per_user=4000000
EOF
	plan_body
	cat <<EOF
check "twheel unloads" rmmod twheel
exit 0
__TWHEEL_BENCH_PAYLOAD__
EOF
	tar -C "$pay" -cf - "${payload[@]}" | gzip -9 | base64
} >"$plan"

# ---- run ----------------------------------------------------------------------------

log "booting $kernel ($mode run; TWHEEL_VM_MEM=$TWHEEL_VM_MEM, timeout ${TWHEEL_VM_TIMEOUT} s)"
vmout=$out/vm-$mode.out
vm_rc=0
"$TWHEEL_ROOT/tests/vm/vm-run.sh" --min-tests 1 "$kernel" "$plan" >"$vmout" 2>&1 || vm_rc=$?
# (not the CSV rows, nor the symbols --insn prints in base64)
grep -avE 'csv,|^[A-Za-z0-9+/=]{40,}$' "$vmout" | tail -n 40
if ((vm_rc == 0)); then
	ok "VM run ($kernel, $mode)"
else
	notok "VM run ($kernel, $mode): see $vmout"
fi

# ---- results --------------------------------------------------------------------------

if [[ $mode == insn ]]; then
	console=$TWHEEL_BUILD/vm/$kernel-bench-$mode.clean.log
	if "$BENCH_DIR/insn/report.py" "$console" "$out/insn/window" \
		--csv "$out/insn.csv" >"$out/insn.txt"; then
		ok "instruction profile: $out/insn.txt"
		cut -c1-110 "$out/insn.txt"
	else
		notok "instruction profile from $console"
	fi
	# The module's own functions were counted and found by name.
	if grep -q '\[twheel\]$' "$out/insn.txt"; then
		ok "twheel's functions in the instruction profile"
	else
		notok "twheel's functions in the instruction profile"
	fi
	# Issue 59's targets, where the plan counted both (insn_marks=1).
	if grep -q '\.timer_list\.' "$out/insn.csv" 2>/dev/null; then
		while IFS= read -r line; do
			case "$line" in
			"ok - "*) ok "${line#ok - }" ;;
			"not ok - "*) notok "${line#not ok - }" ;;
			*) echo "$line" ;;
			esac
		done < <("$BENCH_DIR/insn/gate.py" "$out/insn.csv" || true)
	fi
	finish
fi
if [[ $mode == profile ]]; then
	console=$TWHEEL_BUILD/vm/$kernel-bench-$mode.clean.log
	grep -aoE 'twheel_prof: prof,.*' "$console" | sed 's/^twheel_prof: prof,//' >"$out/profile.txt" || true
	if [[ -s "$out/profile.txt" ]]; then
		ok "profile: $out/profile.txt"
		awk -F, '$1 != last { print ""; print "== " $1 " =="; last = $1 } { print "  " $0 }' "$out/profile.txt" | cut -c1-110
	else
		notok "profile: no samples in $console"
	fi
	finish
fi

console=$TWHEEL_BUILD/vm/$kernel-bench-$mode.clean.log
[[ -f "$console" ]] || console=$vmout
# Rows of 5 fields (a single measurement, from a twheel_ubench of before
# the min,max,reps columns) become median = min = max, reps 1.
{
	echo "suite,impl,n,op,ns_per_op,min,max,reps"
	grep -aoE 'twheel_u?bench: csv,[^[:space:]]*' "$console" |
		sed -E 's/^twheel_u?bench: csv,//' |
		awk -F, -v OFS=, 'NF == 5 { print $0, $5, $5, 1; next } { print }' || true
} >"$csv.tmp"
mv "$csv.tmp" "$csv"

# Well formed: header, 8 fields, numeric n and values, min <= median <= max;
# every suite present.
bad=$(awk -F, 'NR == 1 { if ($0 != "suite,impl,n,op,ns_per_op,min,max,reps") print "header: " $0; next }
	function num(x) { return x ~ /^-?[0-9]+(\.[0-9]+)?$/ }
	NF != 8 || $1 !~ /^[a-z_]+$/ || $2 !~ /^[a-z0-9_]+$/ || $3 !~ /^[0-9]+$/ ||
	$4 !~ /^[a-z0-9_]+$/ || !num($5) || !num($6) || !num($7) || $8 !~ /^[0-9]+$/ ||
	$6 + 0 > $5 + 0 || $5 + 0 > $7 + 0 { print NR ": " $0 }' "$csv")
rows=$(($(wc -l <"$csv") - 1))
missing=()
for s in wheel prims ops ops_short fire spread late setcancel tick wakeups mixed ratas user mem; do
	grep -q "^$s," "$csv" || missing+=("$s")
done
if [[ -z "$bad" && $rows -gt 0 && ${#missing[@]} -eq 0 ]]; then
	ok "$csv: $rows rows, every suite present"
else
	[[ -n "$bad" ]] && printf 'malformed: %s\n' "$bad" | head -n 20 >&2
	((${#missing[@]})) && echo "no rows from: ${missing[*]}" >&2
	notok "$csv well formed and complete ($rows rows)"
fi
grep -a 'twheel_u\?bench: \(note\|error\)' "$console" || true

# What must hold whatever the noise: no timer fired before its expiry in
# the lateness runs; the spread, late and ratas runs fired timers; each
# in-kernel suite compared the implementations it is meant to.
sane=()
grep -aq 'twheel_bench: note: late .* fired early' "$console" && sane+=("a timer fired early")
for want in "spread,twheel,fires_per_s" "spread,timer_list,fires_per_s" \
	"spread,twheel_slack,fires_per_s" \
	"ratas,twheel,events_per_s" "ratas,timer_list,events_per_s"; do
	IFS=, read -r s i o <<<"$want"
	awk -F, -v s="$s" -v i="$i" -v o="$o" '$1 == s && $2 == i && index($4, o) == 1 && $5 > 0 { f = 1 }
		END { exit !f }' "$csv" || sane+=("no $o > 0 for $s $i")
done
for i in twheel timer_list hrtimer; do
	for sc in idle load burst; do
		grep -q "^late,$i,[0-9]*,${sc}_p99_ns," "$csv" || sane+=("no late $sc row for $i")
	done
done
for i in twheel_slack timer_list; do
	grep -q "^ops_short,$i,[0-9]*,cancel_random," "$csv" || sane+=("no ops_short cancel_random for $i")
done
if ((${#sane[@]} == 0)); then
	ok "sanity: never early; spread, late, ratas and matched-precision rows present"
else
	printf '%s\n' "${sane[@]}" >&2
	notok "sanity (${#sane[@]} problems)"
fi

if ((rows > 0)); then
	echo
	"$BENCH_DIR/report.sh" "$csv" || true
fi
if [[ $mode == full && -z "${BENCH_KPARAMS:-}${BENCH_UARGS:-}" ]]; then
	echo "to publish this run: bench/publish.sh kernel-$kernel ${csv#"$TWHEEL_ROOT"/}"
fi
if ((plots)); then
	mkdir -p "$out/plots"
	if "$BENCH_DIR/plot.sh" "$csv" "$out/plots"; then
		ok "plots"
	else
		notok "plots"
	fi
fi
finish
