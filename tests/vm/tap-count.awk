# SPDX-License-Identifier: GPL-2.0
#
# Count TAP / KTAP test results in a VM console log.
# Prints "PASSED FAILED SKIPPED".
#
# Console lines may carry a printk timestamp ("[   12.345678] ") and a
# trailing CR; both are stripped.  Results are "ok N ..." / "not ok N ..."
# at any indentation.  KTAP (KUnit) nests: a suite's result line, and a
# parameterised case's result line, *summarise* the indented results printed
# just before them:
#
#       # Subtest: twheel_wheel
#       ok 1 case_a                  <- leaf, counted
#           ok 1 param-0             <- leaf, counted
#           ok 2 param-1             <- leaf, counted
#       ok 2 case_b                  <- summary of its params, not counted
#   ok 1 twheel_wheel                <- summary of the suite, not counted
#
# So a result line is a leaf unless a deeper-indented result appeared after
# the previous result at its own indentation.  `deeper[i]` records exactly
# that; each result sets it for every shallower indentation and clears its
# own.  Plain TAP (the kselftest harness, the plans' own checks) is all at
# one indentation, so every line is a leaf.  A "TAP version"/"KTAP version"
# line starts a new document at its indentation and resets the state below
# it, so a stream cut short (a crashed suite) does not leak into the next.
# "# SKIP" in the directive counts as skipped, whatever ok/not ok says.

function reset_from(ind,    i) {
	for (i in deeper)
		if (i + 0 >= ind)
			delete deeper[i]
}

{
	line = $0
	sub(/\r+$/, "", line)
	sub(/^\[ *[0-9]+\.[0-9]+\] ?/, "", line)
	match(line, /^[ \t]*/)
	ind = RLENGTH
	body = substr(line, ind + 1)

	if (body ~ /^K?TAP version [0-9]+/) {
		reset_from(ind)
		next
	}
	if (body !~ /^(not )?ok [0-9]+([ \t]|$)/)
		next

	leaf = !deeper[ind]
	deeper[ind] = 0
	for (i = 0; i < ind; i++)
		deeper[i] = 1
	if (!leaf)
		next

	if (body ~ /#[ \t]*[Ss][Kk][Ii][Pp]/)
		skipped++
	else if (body ~ /^not ok/)
		failed++
	else
		passed++
}

END { printf "%d %d %d\n", passed, failed, skipped }
