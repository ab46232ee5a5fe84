#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# TAP output for the host-side checks that print one line per test
# (scripts/dkms-check.sh, scripts/deb-check.sh).  Sourced after lib.sh
# (finish() prints its summary line), never run.

# shellcheck disable=SC2034  # the counters are the sourcing script's too

n=0
pass=0
fail=0
ok() {
	n=$((n + 1)) pass=$((pass + 1))
	echo "ok $n - $*"
}
not_ok() {
	n=$((n + 1)) fail=$((fail + 1))
	echo "not ok $n - $*"
}
skip() {
	n=$((n + 1)) pass=$((pass + 1))
	echo "ok $n - $1 # SKIP $2"
}
# check DESC CMD...: one test, passing when CMD succeeds
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
# is DESC GOT WANT
is() {
	if [[ "$2" == "$3" ]]; then
		ok "$1"
	else
		not_ok "$1"
		printf '#   got:  %s\n#   want: %s\n' "${2//$'\n'/ | }" "${3//$'\n'/ | }"
	fi
}
note() { sed 's/^/#   /' "$@"; }

finish() {
	echo "1..$n"
	summary "$pass" "$fail"
	((fail == 0))
}
