#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Compare the benchmark results two revisions publish: bench/results/FILE
# as committed at OLD and at NEW (git show REV:bench/results/FILE), row by
# row.
#
# Usage: bench/compare.sh OLD NEW [FILE...]
#   OLD, NEW  git revisions (bench/results/ exists since commit afd1bf0)
#   FILE      e.g. kernel-stock61.csv; default: every CSV of bench/results/
#             that both revisions hold
#
# kernel-*.csv, smp-*.csv (suite,impl,n,op,ns_per_op,min,max,reps; a
# five-column row is one repetition): per (suite, impl, n, op) the two
# medians, the ratio NEW / OLD with its range [min_new/max_old,
# max_new/min_old], and a verdict by bench/report-lib.awk's rules (its
# change()): "lower" or "higher" when that whole range is below or above
# 1, which is when the two runs' min-max ranges do not overlap, else
# "inconclusive"; * when either side has fewer than 5 repetitions.
#
# engines.csv (case,impl,n,range,ns_per_unit,spread,ratio,ratio_min,
# ratio_max) keeps no min and max of its times, only their spread, so it
# is compared on each implementation's ratio to heap4 instead: the median
# and range of the per-repetition ratios, which the engine targets use and
# from which the host's speed on the day cancels out (op "ratio_r<R>",
# R the case's range of delays; heap4's own rows are left out).  A file
# with other columns is refused.
#
# Two runs made hours apart also differ by the host's drift: a verdict
# here is a lead to confirm with an A/B of the two builds in one VM
# (bench/ab.sh), not a measurement of the change.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '8,12p' "$0" >&2; exit 2; }
(($# >= 2)) || usage
old=$1
new=$2
shift 2
lib=$(<"$here/report-lib.awk")
cd "$here/.."

for rev in "$old" "$new"; do
	git rev-parse -q --verify "$rev^{commit}" >/dev/null ||
		{ echo "${0##*/}: $rev: not a revision" >&2; exit 2; }
done

# The CSVs of bench/results/ at REV, one a line
files_at() {
	git ls-tree --name-only "$1" bench/results/ | sed -n 's|^bench/results/\(.*\.csv\)$|\1|p'
}

if (($# == 0)); then
	mapfile -t files < <(comm -12 <(files_at "$old" | sort) <(files_at "$new" | sort))
	((${#files[@]})) || { echo "${0##*/}: no CSV of bench/results/ at both $old and $new" >&2; exit 1; }
	set -- "${files[@]}"
fi

# rows REV FILE TAG: the file at REV as rows of report-lib.awk's eight
# columns, the implementation prefixed with TAG; its "# commit=" line
# first, as "#TAG <line>"
rows() {
	git show "$1:bench/results/$2" 2>/dev/null |
		awk -F, -v OFS=, -v tag="$3" -v file="$2" '
		NR == 1 && /^# / {
			print "#" tag " " substr($0, 3)
			if (match($0, /reps=[0-9]+/)) reps = substr($0, RSTART + 5, RLENGTH - 5)
			next
		}
		/^#/ { next }
		!kind {
			if ($0 ~ /^suite,impl,n,op,/) kind = "suite"
			else if ($0 == "case,impl,n,range,ns_per_unit,spread,ratio,ratio_min,ratio_max") kind = "engines"
			else { print file ": unknown columns: " $0 > "/dev/stderr"; bad = 1; exit }
			next
		}
		kind == "suite" { $2 = tag "|" $2; print; next }
		# engines: the ratio to heap4, with the range of the per-repetition ratios
		$2 != "heap4" { print $1, tag "|" $2, $3, "ratio_r" $4, $7, $8, $9, (reps ? reps : 1) }
		END { exit bad }'
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
status=0
for f in "$@"; do
	f=${f##*/}
	for rev in "$old" "$new"; do
		git cat-file -e "$rev:bench/results/$f" 2>/dev/null ||
			{ echo "${0##*/}: $rev has no bench/results/$f" >&2; exit 1; }
	done
	{ rows "$old" "$f" old && rows "$new" "$f" new; } >"$tmp" || {
		echo "${0##*/}: $f: cannot compare (see above)" >&2
		exit 1
	}
	echo "== bench/results/$f =="
	# (the header lines before the library, which skips every # line)
	awk -F, -v oldrev="$old" -v newrev="$new" '
/^#old / { hdr["old"] = substr($0, 6) }
/^#new / { hdr["new"] = substr($0, 6) }
'"$lib"'
{
	split($2, t, "|")
	row = $1 SUBSEP t[2] SUBSEP $3 SUBSEP $4
	if (!(row in seen)) { seen[row] = 1; order[++nrows] = row }
}
END {
	printf "OLD %s: %s\nNEW %s: %s\n\n", oldrev, hdr["old"], newrev, hdr["new"]
	printf "%-10s %-17s %8s %-30s %10s %10s  %-28s %s\n", "suite", "impl", "n", "op",
		"OLD", "NEW", "NEW/OLD (range)", "verdict"
	for (r = 1; r <= nrows; r++) {
		split(order[r], q, SUBSEP)
		s = q[1]; i = q[2]; n = q[3]; o = q[4]
		a = has(s, "new|" i, n, o); b = has(s, "old|" i, n, o)
		if (a && b && ratio(s, "new|" i, "old|" i, n, o)) {
			w = change(); txt = rtxt()
		} else {
			w = a && b ? "no ratio (a zero)" : a ? "only in NEW" : "only in OLD"; txt = "-"
		}
		printf "%-10s %-17s %8s %-30s %10s %10s  %-28s %s\n", s, i, n, o,
			b ? rfmt(g(s, "old|" i, n, o)) : "-", a ? rfmt(g(s, "new|" i, n, o)) : "-", txt, w
		sub(/\*$/, "", w); count[w]++
	}
	printf "\n%d rows: %d lower, %d higher, %d inconclusive", nrows,
		count["lower"], count["higher"], count["inconclusive"]
	for (w in count)
		if (w != "lower" && w != "higher" && w != "inconclusive") printf ", %d %s", count[w], w
	print ""
}' "$tmp" || status=1
	echo
done
exit "$status"
