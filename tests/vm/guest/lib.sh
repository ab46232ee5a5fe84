# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Helpers for test plans, installed as /lib/twheel.sh in the test VM.
# Plans run under `sh -e` (busybox); source this with `. /lib/twheel.sh`.
#
#   load NAME [PARAM=VALUE...]  insmod /modules/NAME.ko (or a kernel module
#                               from /modules/kernel); a failure ends the
#                               plan loudly
#   unload NAME                 rmmod NAME; a failure ends the plan loudly
#   check DESC CMD [ARG...]     run CMD, print a TAP line "ok N DESC" or
#                               "not ok N DESC"; a failure fails the run but
#                               lets the plan go on
#   fail MSG                    mark the run failed and go on
#   skip DESC REASON            print "ok N DESC # SKIP REASON"
#   centis                      print the uptime in centiseconds

TWHEEL_TAP_N=0

centis() {
	read -r _up _idle </proc/uptime
	_s=${_up%.*}
	_c=${_up#*.}
	echo $((_s * 100 + ${_c#0}))
}

fail() {
	echo "TWHEEL-FAIL: $*"
	: >/tmp/twheel-failed
}

_modpath() {
	for _p in /modules/"$1".ko /modules/kernel/"$1".ko; do
		[ -e "$_p" ] && { echo "$_p"; return 0; }
	done
	return 1
}

load() {
	_name=$1
	shift
	if ! _path=$(_modpath "$_name"); then
		echo "TWHEEL-FAIL: module $_name.ko is not in the initramfs"
		exit 1
	fi
	echo "+ insmod $_path $*"
	if ! insmod "$_path" "$@"; then
		echo "TWHEEL-FAIL: insmod $_name failed"
		exit 1
	fi
}

unload() {
	echo "+ rmmod $1"
	if ! rmmod "$1"; then
		echo "TWHEEL-FAIL: rmmod $1 failed"
		exit 1
	fi
}

check() {
	_desc=$1
	shift
	TWHEEL_TAP_N=$((TWHEEL_TAP_N + 1))
	if "$@"; then
		echo "ok $TWHEEL_TAP_N $_desc"
	else
		echo "not ok $TWHEEL_TAP_N $_desc"
		: >/tmp/twheel-failed
	fi
}

skip() {
	TWHEEL_TAP_N=$((TWHEEL_TAP_N + 1))
	echo "ok $TWHEEL_TAP_N $1 # SKIP $2"
}
