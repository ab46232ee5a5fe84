#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Static checks, each counted as one test:
#   checkpatch   checkpatch.pl --strict over every .c/.h we own
#   kernel-doc   kernel-doc -none -Wall over src/*.c and include/linux/twheel.h
#   W=1 <k>      the modules compiled with W=1 -Werror for each stock kernel
#   sparse <k>   make C=2 (sparse on every file) for each stock kernel, with
#                the debug-only delay points (TWHEEL_DEBUG=1) compiled in
#   W=1 rt61     the modules for Debian's PREEMPT_RT 6.1 headers
#                (linux-headers-rt-amd64, the KDIR of the rt61 kernel),
#                with the delay points: the RT branches of the facility
#                (expiry lock) compile only there and for rt612
#   W=1 rt612    the same against the PREEMPT_RT 6.12 headers
#                (linux-headers-6.12-rt-amd64, rt612's KDIR), whose RT is
#                mainline's
#   uaccess <k>  the modules for each stock kernel compiled with the bounds
#                sanitizer (KCFLAGS=-fsanitize=bounds, as CONFIG_UBSAN_BOUNDS
#                builds them; Debian's kernels have it off), and objtool
#                must find no call inside a user access window: a subscript
#                gcc cannot prove in range there is a sanitizer call, which
#                objtool flags on kernels that enable UBSAN (sid's 7.2).
#                Objects only: modpost's "undefined __ubsan_*" is expected
#   shell        shellcheck over the harness and benchmark scripts
#   tree         Documentation/ holds prose and figures only (no data: the
#                results live in bench/results/), and the README's
#                performance lines are what bench/summary.sh prints from
#                bench/results/
#   subjects     every commit after $LINT_SUBJECTS_BASE has a kernel-style
#                subject: "area: summary", at most 72 characters, the
#                area one of tests/README.md's list
# checkpatch.pl and kernel-doc come from the extracted linux-source-6.1 tree
# (tests/vm/kernels.sh source), so their data files (spelling.txt,
# const_structs.checkpatch) sit next to them as they expect.
# Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

LINT_KERNELS=(stock61 stock612)
KSRC=$("$TWHEEL_ROOT/tests/vm/kernels.sh" source)

# Run "$@", print its output, and fail if it failed or printed any line
# matching the regex $1 (a warning that does not change the exit code).
quiet_if_clean() {
	local re=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	[[ -n "$out" ]] && printf '%s\n' "$out"
	if grep -qE "$re" <<<"$out"; then
		echo "lint: $(grep -cE "$re" <<<"$out") finding(s)"
		return 1
	fi
	return "$rc"
}

# checkpatch_files IGNORES PATHSPEC...: checkpatch every tracked (or new,
# not ignored) .c/.h file under the pathspecs.  checkpatch -f judges a file
# by its text alone, so a file it found clean is remembered under a hash of
# its text, the ignores and checkpatch's script and data files, in the
# kernel cache (~/.cache/twheel/checkpatch/, shared by every clone, as CI
# runs on a fresh one), and checked again only when one of them changes:
# the full pass takes over a minute of CPU, most of the lint step.
checkpatch_files() {
	local ignores=$1 files=() todo=() f key tool out tmp rc=0
	local cache=$TWHEEL_CACHE/checkpatch
	shift
	mapfile -t files < <(git ls-files -co --exclude-standard -- "$@" | sort -u)
	((${#files[@]})) || return 0
	mkdir -p "$cache"
	tool=$({
		echo "$ignores"
		cat "$KSRC/scripts/checkpatch.pl" "$KSRC/scripts/spelling.txt" \
			"$KSRC/scripts/const_structs.checkpatch"
	} | sha256sum | cut -d' ' -f1)
	declare -A keys=()
	for f in "${files[@]}"; do
		key=$({ echo "$tool"; cat "$f"; } | sha256sum | cut -d' ' -f1)
		keys[$f]=$key
		[[ -e $cache/$key ]] || todo+=("$f")
	done
	echo "checkpatch.pl --strict --no-tree --ignore $ignores -f:" \
		"${#todo[@]} of ${#files[@]} files (the others unchanged since found clean): ${todo[*]}"
	((${#todo[@]})) || return 0
	# a process per CPU, each on its share of the files, its output in a
	# file of its own so that their findings do not interleave
	tmp=$(mktemp -d)
	# shellcheck disable=SC2016 # expanded by the sh that xargs runs
	printf '%s\0' "${todo[@]}" |
		xargs -0 -P "$(nproc)" -n $(((${#todo[@]} + $(nproc) - 1) / $(nproc))) \
			sh -c 'ign=$1 dir=$2; shift 2
				perl "$0" --strict --no-tree --show-types --ignore "$ign" \
					--quiet --no-summary -f "$@" >"$(mktemp -p "$dir")" 2>&1' \
			"$KSRC/scripts/checkpatch.pl" "$ignores" "$tmp" || rc=1
	out=$(cat "$tmp"/*)
	rm -rf "$tmp"
	[[ -n "$out" ]] && printf '%s\n' "$out"
	# a finding names its file ("#12: FILE: src/x.c:12:"); the rest are clean
	for f in "${todo[@]}"; do
		grep -qF "FILE: $f:" <<<"$out" || : >"$cache/${keys[$f]}"
	done
	# a failure that names no file: remember none of them
	if ((rc)) && ! grep -q 'FILE: ' <<<"$out"; then
		for f in "${todo[@]}"; do
			rm -f "$cache/${keys[$f]}"
		done
	fi
	return "$rc"
}

lint_checkpatch() {
	local rc=0
	# Ignored, because they cannot apply here:
	#  LINUX_VERSION_CODE  "code should be for the version to which it is
	#      merged" -- twheel is never merged, it must build against 6.1 and
	#      6.12 at once, and its compat helpers are where version tests go.
	#  PREFER_KERNEL_TYPES (userspace only) u64/u32 do not exist in user
	#      space; programs use <stdint.h> types and the uapi __u64.
	#  CAMELCASE (userspace only) names fixed by others' ABIs, such as
	#      libFuzzer's LLVMFuzzerTestOneInput.
	#  MACRO_ARG_REUSE (the wheel's userspace shim only) its list and
	#      bitops macros reimplement the kernel's, whose for-each pattern
	#      reuses its arguments by design.
	# With -f the patch-only checks (FILE_PATH_CHANGES, commit message
	# rules) do not fire, and our files carry SPDX tags as in-tree ones do.
	# tests/stress/ holds kernel code (the stress KUnit suites, the RT
	# test module) and the user-space programs the plans drive.
	local stress_progs=(tests/stress/twheel_fuzz.c tests/stress/twheel_stress.c
		tests/stress/twheel_lifecycle.c)
	checkpatch_files LINUX_VERSION_CODE \
		'src/*.[ch]' 'include/*.[ch]' 'samples/*.[ch]' \
		'tests/kunit/*.[ch]' 'tests/stress/*.[ch]' \
		"${stress_progs[@]/#/:!}" || rc=1
	checkpatch_files LINUX_VERSION_CODE,PREFER_KERNEL_TYPES,CAMELCASE \
		'tests/selftests/*.[ch]' 'tests/engines/*.[ch]' 'tests/lib/*.[ch]' \
		'tools/*.[ch]' 'bench/*.[ch]' "${stress_progs[@]}" \
		':!tests/engines/shim' || rc=1
	checkpatch_files PREFER_KERNEL_TYPES \
		'tests/engines/shim/*.h' || rc=1
	return "$rc"
}

lint_kernel_doc() {
	local files=() flag=-Wall out
	mapfile -t files < <(ls src/*.c include/linux/twheel.h 2>/dev/null)
	((${#files[@]})) || { echo "no files"; return 0; }
	# -Wall (Return:, short description, contents before sections) is
	# kernel-doc's -v in 6.1, where -Wall does not exist yet (6.3).
	grep -q '"Wall"' "$KSRC/scripts/kernel-doc" || flag=-v
	echo "kernel-doc -none $flag ${files[*]}"
	# -v also reports "info: Scanning doc for ..." for every comment
	out=$(perl "$KSRC/scripts/kernel-doc" -none "$flag" "${files[@]}" 2>&1 | grep -v ': info: ' || true)
	[[ -z "$out" ]] && return 0
	printf '%s\n' "$out"
	return 1
}

# A separate tree per kernel and set of flags under build/lint/, W=1
# -Werror always (not only in CI): the plain build and the sparse pass
# with the delay points each keep their objects, so that a warm run
# recompiles only what changed (a file that warned has no object, -Werror
# failed it) and C=2 only adds the checker.
lint_build() {
	local k=$1 kdir dest jobs=()
	shift
	kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k") || return 1
	dest=$TWHEEL_BUILD/lint/$k
	[[ " $* " == *" TWHEEL_DEBUG=1 "* ]] && dest+=-debug
	sync_module_sources "$dest"
	add_make_jobs jobs
	echo "make -C $kdir M=$dest W=1 KCFLAGS=-Werror $* ${jobs[*]} modules"
	quiet_if_clean ': (warning|error):' \
		make -C "$kdir" M="$dest" W=1 KCFLAGS=-Werror "$@" "${jobs[@]}" modules
}

# The bounds sanitizer's build for kernel $1, checked for objtool's
# warnings only (the module cannot link: the kernel lacks the sanitizer's
# handlers, which modpost reports as a warning with KBUILD_MODPOST_WARN).
lint_uaccess() {
	local k=$1 kdir dest jobs=()
	kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k") || return 1
	dest=$TWHEEL_BUILD/lint/$k-ubsan
	sync_module_sources "$dest"
	# objtool runs on twheel.o as it is linked (IBT kernels) or on each
	# object: remove them all, so that every run sees objtool's verdict
	find "$dest" \( -name '*.o' -o -name '*.ko' \) -delete
	add_make_jobs jobs
	echo "make -C $kdir M=$dest KCFLAGS='-Werror -fsanitize=bounds' KBUILD_MODPOST_WARN=1 ${jobs[*]} modules"
	quiet_if_clean 'objtool:' make -C "$kdir" M="$dest" \
		KCFLAGS="-Werror -fsanitize=bounds" KBUILD_MODPOST_WARN=1 \
		"${jobs[@]}" modules
}

# W=1 for kernel $1, with the flags $2... that build-modules.sh gives its
# modules.  The harness's builds fail on any warning (unless WERROR=0):
# its own build of $1 is that very check, and after make check's modules
# step it is current: make then only confirms it, where a tree of lint's
# own would compile everything again.
lint_w1() {
	local k=$1
	shift
	if [[ ${WERROR:-1} == 1 ]]; then
		echo "WERROR=1: the harness's build of the $k modules (build/mod/$k)"
		quiet_if_clean ': (warning|error):' with_build_lock "modules-$k" \
			"$TWHEEL_ROOT/tests/vm/build-modules.sh" "$k"
		return
	fi
	lint_build "$k" "$@"
}

lint_tree() {
	local bad rc=0 want have
	bad=$(git ls-files Documentation | grep -vE '^Documentation/[^/]+\.(rst|png|svg)$|^Documentation/conf\.py$' || true)
	if [[ -n "$bad" ]]; then
		echo "Documentation/ is for prose and figures; move these to bench/results/ or drop them:"
		printf '  %s\n' "${bad//$'\n'/$'\n  '}"
		rc=1
	fi
	want=$(bench/summary.sh) || return 1
	have=$(sed -n '/^<!-- bench\/summary.sh -->$/,/^<!-- end bench\/summary.sh -->$/p' README.md | sed '1d;$d')
	if [[ "$want" != "$have" ]]; then
		echo "README.md's performance lines differ from bench/summary.sh's (bench/results/):"
		diff <(printf '%s\n' "$have") <(printf '%s\n' "$want") || true
		rc=1
	fi
	return "$rc"
}

# The commit before the tree got its layout and its subject rule; earlier
# subjects are history.  Areas: tests/README.md, "Commit subjects".
LINT_SUBJECTS_BASE=0e9bd18
LINT_AREAS="build|bench|ci|ctl|dev|docs|engine|facility|hier|kunit|lawn|lib|samples|selftests|stress|tests|uapi|wheel"

lint_subjects() {
	local range subj bad=0
	if ! git rev-parse -q --verify "$LINT_SUBJECTS_BASE^{commit}" >/dev/null; then
		echo "skip: $LINT_SUBJECTS_BASE is not in this clone's history"
		return 0
	fi
	range=$LINT_SUBJECTS_BASE..HEAD
	while IFS= read -r subj; do
		if ((${#subj} > 72)) || ! [[ "$subj" =~ ^($LINT_AREAS):\ [^[:space:]] ]]; then
			echo "bad subject: $subj"
			bad=$((bad + 1))
		fi
	done < <(git log --no-merges --format=%s "$range")
	echo "$(git rev-list --no-merges --count "$range") subjects after $LINT_SUBJECTS_BASE, $bad bad"
	((bad == 0))
}

lint_shellcheck() {
	local files=()
	mapfile -t files < <(git ls-files -co --exclude-standard -- \
		'scripts/*.sh' 'tests/*.sh' 'tests/vm/guest/*' '.ci/run' \
		'bench/*.sh' | sort -u)
	echo "shellcheck -x ${files[*]}"
	shellcheck -x "${files[@]}"
}

run_counted checkpatch lint_checkpatch || true
run_counted kernel-doc lint_kernel_doc || true
for k in "${LINT_KERNELS[@]}"; do
	run_counted "W=1 $k" lint_w1 "$k" || true
	run_counted "sparse $k" lint_build "$k" C=2 TWHEEL_DEBUG=1 || true
done
for k in rt61 rt612; do
	run_counted "W=1 $k" lint_w1 "$k" TWHEEL_DEBUG=1 || true
done
for k in "${LINT_KERNELS[@]}"; do
	run_counted "uaccess $k" lint_uaccess "$k" || true
done
run_counted shellcheck lint_shellcheck || true
run_counted tree lint_tree || true
run_counted subjects lint_subjects || true
report_counted lint
