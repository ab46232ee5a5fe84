# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Test plan: the examples of Documentation/admin-guide.rst (in the guest as
# /doc/admin-guide.rst) against what this kernel shows, so that the most
# copied output in the docs cannot drift from the code:
#   - `twheelctl info` (the block after "$ twheelctl info"), run as uid
#     1000: every line, the limits' descriptions included, as the guide
#     shows it; but for the features (6.12 has uring_expiry, 6.1 not) and
#     the limits sized from RAM (max_timers_*), which must match only on
#     the kernel the example was taken on (TWHEEL_DOC_KERNEL, stock61) with
#     the default parameters;
#   - the debugfs stats file (the block after "# cat .../default/stats"):
#     the same fields in the same order and the same per-base header line;
#     the values are the example's own.
# Used by tests/vm/selftest.sh after the selftest plan, in the same boot.
# shellcheck source=tests/vm/guest/lib.sh
. /lib/twheel.sh

DOC=/doc/admin-guide.rst
TWHEEL_DOC_KERNEL=stock61

# doc_block PATTERN: the literal block lines after the line "  PATTERN",
# up to the first blank line, unindented
doc_block() {
	awk -v want="  $1" '$0 == want { f = 1; next } f && /^$/ { exit } f { sub(/^  /, ""); print }' "$DOC"
}

# mask what may differ on this kernel
info_mask() {
	if [ "$TWHEEL_KERNEL" = "$TWHEEL_DOC_KERNEL" ]; then
		cat
	else
		sed -E -e 's/^(features +).*/\1(masked)/' \
			-e 's/^(max_timers_per_[a-z]+ +)[0-9]+/\1(masked)/'
	fi
}

info_matches() {
	doc_block '$ twheelctl info' | info_mask >/tmp/info.doc
	[ -s /tmp/info.doc ] || { echo "no twheelctl info example in $DOC"; return 1; }
	# a user of uid 1000 for busybox su, as the example's "$ " prompt
	grep -q '^root:' /etc/passwd 2>/dev/null || echo 'root:x:0:0::/:/bin/sh' >>/etc/passwd
	grep -q '^user:' /etc/passwd || echo 'user:x:1000:1000::/tmp:/bin/sh' >>/etc/passwd
	su -s /bin/sh user -c 'twheelctl info' >/tmp/info.out || return 1
	echo "# twheelctl info as uid 1000 on $TWHEEL_KERNEL:"
	sed 's/^/# /' /tmp/info.out
	info_mask </tmp/info.out >/tmp/info.run
	diff -u /tmp/info.doc /tmp/info.run
}

# field names ("name:") and the per-base header of a stats file
stats_shape() {
	sed -n -e 's/^\([a-z_]*\):.*/\1/p' -e '/^base[[:space:]]/p' | tr -s ' \t' ' '
}

stats_matches() {
	twheelctl arm 1 >/dev/null || return 1
	doc_block '# cat /sys/kernel/debug/twheel/default/stats' | stats_shape >/tmp/stats.doc
	[ -s /tmp/stats.doc ] || { echo "no debugfs stats example in $DOC"; return 1; }
	stats_shape </sys/kernel/debug/twheel/default/stats >/tmp/stats.run
	diff -u /tmp/stats.doc /tmp/stats.run
}

load twheel
check "admin guide: the twheelctl info example is what this kernel prints" info_matches
check "admin guide: the debugfs stats example has this kernel's fields" stats_matches
unload twheel
