#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make docs`: the Sphinx HTML documentation in build/docs/html, from
# Documentation/ (conf.py, index.rst and the pages it lists), and the man
# pages in build/docs/man (Sphinx's man builder, conf.py's man_pages):
# twheel(4) from userspace-api.rst, twheelctl(1) and libtwheel(3), which
# make install and the Debian packages install.
#
# kernel-doc comments are extracted at build time with the kernel's own
# tooling from the extracted linux-source-6.1 tree (tests/vm/kernels.sh
# source): conf.py puts its Documentation/sphinx on sys.path for the
# kerneldoc extension, which runs its scripts/kernel-doc on our sources.
#
# The build is strict, so one run is one test:
#   - every Sphinx warning is an error (-W), reported all at once
#     (--keep-going), including unresolved C cross-references (-n);
#   - kernel-doc warnings are errors (KDOC_WERROR), with the checks of
#     kernel-doc -v (KBUILD_VERBOSE: Return: sections and the like);
#   - every page is read again on every run (-E), so an unchanged page's
#     warnings are not hidden by the saved environment;
#   - the result must document every exported function of src/ and
#     every structure, enum and macro of include/linux/twheel.h and of the
#     UAPI header (ioctls, flags), and libtwheel(3) every function of
#     libtwheel.h (checked in the HTML);
#   - lists in the prose must be the code's: the module parameters in the
#     tables of the admin guide and robustness.rst (no more, no fewer),
#     the KUnit suites in testing.rst, the delay points in kernel-api.rst;
#   - the man builder, as strict, must write the three pages, each with a
#     NAME line lexgrog can read and nothing man --warnings complains
#     about but tbl's layout of the wide tables of twheel(4), and no
#     option whose "--" became an en dash;
# A second test: every C snippet of Documentation/ (each .. code-block::
# c) and of README.md (each ```c block) compiles, user-space ones against
# libtwheel.h and the uapi header, kernel ones as objects of a module
# against the stock 6.1 headers, as
# printed or, for a fragment, inside the template of the ".. snippet:"
# comment before it; C in a plain literal block is an error
# (scripts/doc-snippets.py says how).
# Ends with "2 passed, 0 failed" (or what failed).
#
# Environment: SPHINXOPTS (extra sphinx-build options).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

OUT=$TWHEEL_BUILD/docs

fail() {
	log "$*"
	summary 0 1
	exit 1
}

# Every name in $2... must be an object id ("c.NAME") of HTML page $1.
check_documented() {
	local page=$OUT/html/$1 missing=() name
	shift
	for name in "$@"; do
		grep -q "id=\"c\\.$name\"" "$page" || missing+=("$name")
	done
	((${#missing[@]} == 0)) && return 0
	log "not documented in ${page#"$TWHEEL_ROOT"/}: ${missing[*]}"
	return 1
}

"$TWHEEL_ROOT/scripts/deps.sh" docs || fail "missing packages"
KSRC=$("$TWHEEL_ROOT/tests/vm/kernels.sh" source) || fail "no linux-source tree"

# Debian's Sphinx (python3-sphinx), not whatever python3 comes first in PATH.
SPHINX=/usr/bin/sphinx-build
[[ -x "$SPHINX" ]] || SPHINX=$(command -v sphinx-build) || fail "sphinx-build not found"

rm -rf "$OUT/html"
mkdir -p "$OUT"
# The result tables are derived from bench/results/: generated here, into
# the git-ignored Documentation/generated/ that benchmarks.rst includes.
"$TWHEEL_ROOT/bench/results-rst.sh" Documentation/generated ||
	fail "bench/results-rst.sh failed"
read -r -a extra <<<"${SPHINXOPTS:-}"
log "$SPHINX -b html -W --keep-going -n -E Documentation ${OUT#"$TWHEEL_ROOT"/}/html"
start=$SECONDS
# kernel-doc -v also says "info: Scanning doc for ..." of every comment,
# which kerneldoc.py passes on when kernel-doc fails: leave those out.
if ! TWHEEL_KSRC=$KSRC KDOC_WERROR=1 KBUILD_VERBOSE=1 \
	"$SPHINX" -b html -W --keep-going -n -E -q -d "$OUT/doctrees" \
	"${extra[@]}" Documentation "$OUT/html" 2>&1 |
	{ grep -v ': info: Scanning doc for ' || true; }; then
	fail "sphinx-build failed"
fi

mapfile -t exported < <(sed -n 's/^EXPORT_SYMBOL\(_GPL\)\{0,1\}(\([A-Za-z0-9_]*\));$/\2/p' src/*.c)
mapfile -t kstructs < <(sed -n 's/^\(struct\|enum\) \(twheel_[a-z0-9_]*\) {$/\2/p' include/linux/twheel.h)
mapfile -t kmacros < <(sed -n 's/^#define[[:space:]]\{1,\}\([A-Za-z0-9_]*\)[[:space:](].*/\1/p' \
	include/linux/twheel.h | grep -v '^_' | sort -u)
mapfile -t ustructs < <(sed -n 's/^struct \(twheel_[a-z0-9_]*\) {$/\1/p' include/uapi/linux/twheel.h)
mapfile -t umacros < <(sed -n 's/^#define[[:space:]]\{1,\}\(TWHEEL_[A-Z0-9_]*\)[[:space:]].*/\1/p' \
	include/uapi/linux/twheel.h)
((${#exported[@]} && ${#kstructs[@]} && ${#ustructs[@]} && ${#umacros[@]})) ||
	fail "found no exports, structures or macros to check"
ok=1
check_documented kernel-api.html "${exported[@]}" "${kstructs[@]}" "${kmacros[@]}" || ok=0
check_documented userspace-api.html "${ustructs[@]}" "${umacros[@]}" || ok=0
# libtwheel(3): every function of the library but the _sz ones behind the
# inline wrappers
mapfile -t libfns < <(sed -n 's/^LIBTWHEEL_EXPORT .*[ *]\(libtwheel_[a-z_]*\)(.*/\1/p' \
	tools/lib/libtwheel.h | grep -v '_sz$' | sort -u)
((${#libfns[@]})) || fail "found no libtwheel functions to check"
check_documented libtwheel.html "${libfns[@]}" || ok=0
((ok)) || fail "API reference incomplete"

# Lists in the prose that the code defines (each name of the code named on
# the page, and for the parameter tables nothing else either):
# same_names WHAT WANT HAVE: the two newline-separated lists are equal
same_names() {
	[[ "$2" == "$3" ]] && return 0
	log "$1: the code has [$(tr '\n' ' ' <<<"$2")], the page [$(tr '\n' ' ' <<<"$3")]"
	return 1
}
# the module parameters of src/, against the tables of the admin guide and
# of robustness.rst (dkms-check also compares the admin guide's defaults
# with modinfo)
params=$(sed -nE 's/^[[:space:]]*module_param(_named|_cb)?\([[:space:]]*([a-z_]+),.*/\2/p' src/*.c | sort -u)
for page in admin-guide robustness; do
	same_names "module parameters in Documentation/$page.rst's table" "$params" \
		"$(awk '/^=+  =+/ { if (t) t++; next } /^parameter  / { t = 1; next }
			t == 2 && /^``[a-z_]+``/ { gsub(/``/, "", $1); print $1 }' \
			"Documentation/$page.rst" | sort -u)" || ok=0
done
# the KUnit suites, in testing.rst's tables
while read -r suite; do
	grep -q "\`\`$suite\`\`" Documentation/testing.rst ||
		{ log "KUnit suite $suite not in Documentation/testing.rst"; ok=0; }
done < <(sed -n 's/^[[:space:]]*\.name = "\(twheel_[a-z_]*\)",$/\1/p' tests/kunit/*.c tests/stress/*.c)
# the debug-only delay points, in kernel-api.rst
while read -r point; do
	grep -q "\`\`$point\`\`" Documentation/kernel-api.rst ||
		{ log "delay point $point not in Documentation/kernel-api.rst"; ok=0; }
done < <(sed -n 's/^[[:space:]]*\(TWHEEL_DELAY_[A-Z_]*\),.*/\1/p' src/twheel_internal.h)
((ok)) || fail "a list of the code is not the page's"

# The man pages, from the environment the HTML build has just read.
rm -rf "$OUT/man"
log "$SPHINX -b man -W --keep-going -n Documentation ${OUT#"$TWHEEL_ROOT"/}/man"
if ! TWHEEL_KSRC=$KSRC KDOC_WERROR=1 KBUILD_VERBOSE=1 \
	"$SPHINX" -b man -W --keep-going -n -q -d "$OUT/doctrees" \
	"${extra[@]}" Documentation "$OUT/man" 2>&1 |
	{ grep -v ': info: Scanning doc for ' || true; }; then
	fail "sphinx-build -b man failed"
fi
for page in twheel.4 twheelctl.1 libtwheel.3; do
	[[ -s "$OUT/man/$page" ]] || fail "no man page $page"
	lexgrog "$OUT/man/$page" >/dev/null || fail "$page: lexgrog finds no NAME line"
	# tbl cannot always fit twheel(4)'s wide tables in 80 columns
	warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l "$OUT/man/$page" 2>&1 >/dev/null |
		grep -vE "cannot adjust line|can't break line|character above first line discarded|table wider than line width|^warning: file '<standard input>', around line [0-9]+:$" || true)
	[[ -z "$warn" ]] || fail "$page: man --warnings: $warn"
	# an option whose "--" became an en dash (Sphinx's smart quotes)
	dash=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -E UTF-8 -l "$OUT/man/$page" 2>/dev/null |
		grep -E '(^|[[ ])–[a-z]' || true)
	[[ -z "$dash" ]] || fail "$page: an option's -- printed as an en dash: $dash"
done

pages=$(find "$OUT/html" -maxdepth 1 -name '*.html' ! -name genindex.html ! -name search.html | wc -l)
log "$pages pages in ${OUT#"$TWHEEL_ROOT"/}/html, 3 man pages ($((SECONDS - start)) s); checked ${#exported[@]} exports, $((${#kstructs[@]} + ${#ustructs[@]})) structures, $((${#kmacros[@]} + ${#umacros[@]})) macros"

# The C snippets.
start=$SECONDS
rm -rf "$OUT/snippets"
if python3 "$TWHEEL_ROOT/scripts/doc-snippets.py" "$OUT/snippets" \
	"$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir stock61)"; then
	log "C snippets compiled ($((SECONDS - start)) s)"
	summary 2 0
else
	log "a C snippet does not compile, or C is in a literal block"
	summary 1 1
	exit 1
fi
