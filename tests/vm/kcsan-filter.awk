# SPDX-License-Identifier: GPL-2.0
#
# Sort the KCSAN reports of a kcsan-kernel console log (tests/vm/vm-run.sh).
#
#   awk -v ours=FILE -v ignored=FILE -f kcsan-filter.awk CLEAN_LOG >JUDGED_LOG
#
# A report is the block from its header line ("BUG: KCSAN: data-race in
# f1 / f2", "BUG: KCSAN: assert: race in ...") up to the next "=====..."
# separator.  It is twheel's when its header or the stack of one of its
# accesses names twheel code: a frame tagged with a twheel module
# ("[twheel]", "[twheel_kunit]", ...) or a symbol starting with twheel_,
# tw_wheel_ or twk_.  An access made by an interrupt has the interrupted
# code's frames below the interrupt entry (asm_sysvec_*,
# asm_common_interrupt): those do not count, nor do KCSAN_VERBOSE's held
# locks and irq events or the "Comm:" line, which all describe the task
# that happened to be current (twheel_stress, say), not the code that
# raced.  Other reports are core-kernel races that merely happened while
# twheel ran or the guest idled (the 6.1 tick, APIC, scheduler ...).
#
# Output: the log itself with the lines of every report blanked (so that
# the line numbers stay those of CLEAN_LOG), except lines that are not the
# kernel's (no timestamp: a test's output on the console) and lines that
# match ENVIRON["SPLAT_RE"] other than the header (another CPU's splat
# printed in the middle of a report): vm-run.sh greps the output for every
# other kind of splat.  The whole of each twheel report goes to the file
# `ours` and the header of each other report to the file `ignored`.

BEGIN {
	splat_re = ENVIRON["SPLAT_RE"]
	stamp_re = "^\\[ *[0-9]+\\.[0-9]+\\] "
	tw_re = "\\[twheel[A-Za-z0-9_]*\\]|(^|[^A-Za-z0-9_])(twheel|tw_wheel|twk)_[A-Za-z0-9_]"
	# " func+0x1a/0x40" or " func+0x1a/0x40 [module]" after the stamp
	frame_re = "^\\[ *[0-9]+\\.[0-9]+\\]  *[A-Za-z0-9_.$]+\\+0x[0-9a-f]+/0x[0-9a-f]+( \\[[A-Za-z0-9_]+\\])?$"
	# an access's stack begins: "write to 0x... of 8 bytes by task 12 on
	# cpu 1:", "... by interrupt on cpu 0:", "race at unknown origin, ..."
	access_re = " by (task [0-9]+|interrupt) on cpu [0-9]+:$"
	irq_entry_re = " asm_(sysvec_|common_interrupt|spurious_interrupt)"
	inblk = 0
	n = 0
	printf "" >ours
	printf "" >ignored
}

function flush(i, mine, cut) {
	mine = blk[1] ~ tw_re
	cut = 0
	for (i = 2; i <= n; i++) {
		if (blk[i] ~ access_re)
			cut = 0
		else if (blk[i] !~ frame_re || cut)
			continue
		else if (blk[i] ~ irq_entry_re)
			cut = 1
		else if (blk[i] ~ tw_re)
			mine = 1
	}
	if (mine) {
		for (i = 1; i <= n; i++)
			print blk[i] >ours
		print "" >ours
	} else {
		print blk[1] >ignored
	}
	n = 0
	inblk = 0
}

/\] BUG: KCSAN: / && $0 ~ stamp_re {
	if (inblk)
		flush()
	inblk = 1
	blk[n = 1] = $0
	print ""
	next
}

inblk && $0 ~ stamp_re {
	blk[++n] = $0
	if ($0 ~ /\] =========+$/) {
		flush()
		print
	} else if ($0 ~ splat_re) {
		print
	} else {
		print ""
	}
	next
}

{ print }

END {
	if (inblk)
		flush()
}
