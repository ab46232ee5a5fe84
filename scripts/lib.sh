#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the twheel harness scripts.  Sourced, never run.
#
# Conventions: every script is bash with `set -euo pipefail`; progress goes to
# stderr prefixed with the script name, so that stdout stays usable for values
# (paths, counts) that callers capture.

# shellcheck disable=SC2034  # variables here are used by the sourcing scripts

TWHEEL_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Downloaded kernels, the extracted linux-source tree and the debug kernel
# build live outside the repository so that clones share them and `git clean`
# or `make clean` never throws away a 6-minute kernel build.
TWHEEL_CACHE=${TWHEEL_CACHE:-${HOME:-/root}/.cache/twheel}
TWHEEL_BUILD=${TWHEEL_BUILD:-$TWHEEL_ROOT/build}

# All kernels the harness knows, in the order `make check` runs them.
TWHEEL_KERNELS=(stock61 stock612 debug)

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${0##*/}" "$*" >&2; exit 1; }

# Print "N passed, N failed" -- the line every make target ends with.
summary() { printf '%d passed, %d failed\n' "$1" "$2"; }

check_kernel_name() {
	case "$1" in
	stock61 | stock612 | debug) ;;
	*) die "unknown kernel '$1' (expected one of: ${TWHEEL_KERNELS[*]})" ;;
	esac
}

# Run "$@" while holding an exclusive lock named $1 in the cache, so that
# concurrent harness runs (several clones, several engineers) never build or
# extract the same cache entry at the same time.
with_lock() {
	local name=$1
	shift
	mkdir -p "$TWHEEL_CACHE"
	(
		flock 9
		"$@"
	) 9>"$TWHEEL_CACHE/.lock-$name"
}
