#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make deb`: the Debian packages of debian/, built from a copy of the work
# tree with `dpkg-buildpackage -us -uc -b` into build/deb/, then lintian
# over them:
#   twheel-dkms     the module's source in /usr/src/twheel-<version>, its
#                   dkms.conf (DKMS builds it for every kernel with headers)
#                   and the udev rule
#   libtwheel1      libtwheel.so.1
#   libtwheel-dev   libtwheel.h, <twheel/linux/twheel.h>, libtwheel.a,
#                   libtwheel.so and libtwheel.pc
#   twheel-tools    twheelctl
# The copy is what `git ls-files -co --exclude-standard` lists, so that no
# build product of the tree gets in.  lintian must report no error and no
# warning (debian/*.lintian-overrides say why for each override); its
# info and pedantic tags are printed.  Ends with "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

"$TWHEEL_ROOT/scripts/deps.sh" deb

OUT=$TWHEEL_BUILD/deb
version=$(dpkg-parsechangelog -SVersion)
src=$OUT/src/twheel-$version
rm -rf "$OUT"
mkdir -p "$src"
git ls-files -z -co --exclude-standard |
	while IFS= read -r -d '' f; do [[ ! -e "$f" ]] || printf '%s\0' "$f"; done |
	xargs -0 cp --parents -a -t "$src"

pass=0 fail=0
log "dpkg-buildpackage -us -uc -b in $src"
if (cd "$src" && dpkg-buildpackage -us -uc -b) >"$OUT/build.log" 2>&1; then
	echo "ok - dpkg-buildpackage -us -uc -b"
	pass=$((pass + 1))
else
	tail -n 40 "$OUT/build.log"
	echo "not ok - dpkg-buildpackage -us -uc -b (log: $OUT/build.log)"
	summary "$pass" 1
	exit 1
fi
mv "$OUT"/src/*.deb "$OUT"/src/*.changes "$OUT"/src/*.buildinfo "$OUT/"
rm -rf "$OUT/src"
(cd "$OUT" && ls -1 ./*.deb)

changes=$(echo "$OUT"/*.changes)
if lintian --fail-on error,warning --display-info --pedantic \
	--suppress-tags-from-file /dev/null "$changes" >"$OUT/lintian.log" 2>&1; then
	echo "ok - lintian: no error or warning"
	pass=$((pass + 1))
else
	echo "not ok - lintian: errors or warnings"
	fail=$((fail + 1))
fi
sed 's/^/# /' "$OUT/lintian.log"
summary "$pass" "$fail"
((fail == 0))
