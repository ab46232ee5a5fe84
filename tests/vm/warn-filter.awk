# SPDX-License-Identifier: GPL-2.0
#
# Take the warnings that a test announced out of a console log
# (tests/vm/vm-run.sh), so that a test can check a path whose documented
# behaviour is to warn.
#
#   awk -v unmet=FILE -f warn-filter.awk JUDGED_LOG >JUDGED_LOG2
#
# A test announces one warning by printing "TWHEEL-EXPECT-WARN: NAME"
# on the console right before it triggers it (KUnit: kunit_info()).  The
# next warning report -- from its "WARNING: CPU: n PID: n at ..." line to
# its "---[ end trace ...]---" line -- that names NAME in any of its lines
# (the WARNING line, RIP or a frame of the call trace: a test names the
# function it calls from, whose frame inlining and tail calls cannot take
# away) is blanked, keeping the line numbers, and meets the announcement.  One announcement takes one report; other warnings stay
# where they are, for vm-run.sh to count as splats.  Announcements that no
# report met go to the file `unmet`, one per line: the expected warning
# did not come.

function flush(    i, hit) {
	hit = 0
	if (nwant > met)
		for (i = 1; i <= nb; i++)
			if (index(buf[i], want[met + 1])) {
				hit = 1
				break
			}
	if (hit)
		met++
	for (i = 1; i <= nb; i++)
		print hit ? "" : buf[i]
	nb = 0
	inblock = 0
}

{
	if (inblock) {
		buf[++nb] = $0
		if ($0 ~ /---\[ end trace/)
			flush()
		next
	}
	if (match($0, /TWHEEL-EXPECT-WARN: [^ ]+/)) {
		want[++nwant] = substr($0, RSTART + 20, RLENGTH - 20)
		print
		next
	}
	if (nwant > met && $0 ~ /\] WARNING: CPU: [0-9]+ PID: [0-9]+ at /) {
		inblock = 1
		buf[++nb] = $0
		next
	}
	print
}

END {
	if (inblock)
		for (i = 1; i <= nb; i++)
			print buf[i]
	for (i = met + 1; i <= nwant; i++)
		print want[i] > unmet
}
