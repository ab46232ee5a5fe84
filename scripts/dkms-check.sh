#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make dkms-check`: the packaging paths, without touching the host's DKMS
# state or module trees.
#
#   dkms      for each stock kernel (stock61, stock612): `dkms add` of the
#             work tree (as `sudo dkms add .` does), `dkms build` and
#             `dkms install -k <release>` into private trees (--dkmstree,
#             --sourcetree, --installtree, --no-depmod, --kernelsourcedir
#             from tests/vm/kernels.sh kdir), then modinfo of the installed
#             twheel.ko: vermagic, description, author and license as in
#             the source, version equal to dkms.conf's PACKAGE_VERSION and
#             MODULE_VERSION(), and every module_param of src/ present with
#             a description.  The admin guide's table of parameters must
#             list exactly those, each with the default its description
#             gives ("default N", "(0: ...)" for 0, "NAME (... default)").  Then `dkms remove --all` must empty the
#             install tree.  dkms must not call anything deprecated.
#             POST_BUILD (dkms-post-build.sh) must have kept the build's
#             Module.symvers in the DKMS tree (make deb-check builds
#             samples/dkms.conf's consumer module against it).
#   kdir      `make modules` for a running kernel without headers (KRELEASE
#             standing in for `uname -r`) fails, names the headers package
#             and KDIR=, and builds nothing: no fallback to other headers.
#   install   for each stock kernel, `make modules` in a copy of the work
#             tree, then `make install` / `make uninstall` into DESTDIR
#             staging dirs (scripts/install.sh, then tools/'s install):
#             paths (lib/modules/<uname -r>/extra/twheel/, usr/local/),
#             modes and contents, LOAD_AT_BOOT, INSTALL_MOD_PATH, refusal
#             of a module built for the other kernel, and nothing left
#             after uninstall; udev/twheel.conf must name the module.
#   sample    samples/twheel_sample.c built as its head comment says, out
#             of tree against the copy's header and Module.symvers, with
#             the Kbuild lines cut out of that comment
#   live      (in a mount namespace only) `make install` and `make uninstall`
#             as root on a live system, with /lib/modules, /etc/udev/rules.d,
#             /etc/modules-load.d and /usr/local private, and ldconfig
#             writing a private cache: depmod indexes the module, ldconfig
#             lists libtwheel.so.1, uninstall un-indexes and removes them.
#   host      /var/lib/dkms, /etc/dkms, /lib/modules, /etc/udev/rules.d,
#             /etc/modules-load.d and /usr/src are listed before and after
#             and must not have changed.
#
# Isolation: dkms keeps its MOK signing key in /var/lib/dkms (creating one on
# first use) and reads /etc/dkms; no option moves those.  So every dkms
# command runs in a private mount namespace (unshare -m; as a normal user
# unshare -rm, a user namespace in which dkms sees uid 0) with private
# directories bound over /var/lib/dkms and /etc/dkms.  Without namespaces,
# as root, dkms runs directly and a MOK key it creates is removed again;
# without namespaces and root, `dkms install` (root only) is skipped.
# TWHEEL_DKMS_NS=0 forces the way without namespaces.
#
# TAP output; the last line is "N passed, N failed".
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TWHEEL_ROOT"

"$TWHEEL_ROOT/scripts/deps.sh" dkms

KERNELS=(stock61 stock612)
HOST_DIRS=(/var/lib/dkms /etc/dkms /lib/modules /etc/udev/rules.d /etc/modules-load.d)

# ---- TAP ----------------------------------------------------------------------

# shellcheck source=scripts/tap.sh
. "$(dirname "$0")/tap.sh"

# ---- what the source says -----------------------------------------------------------

# The value of variable $1 in dkms.conf, sourced the way dkms does.
conf_value() {
	# shellcheck disable=SC2016  # expanded by the inner shell
	kernel_source_dir=/k dkms_tree=/d bash -c '. ./dkms.conf >/dev/null; echo "${!1}"' _ "$1"
}

# The string argument of MODULE_$1("...") in src/*.c, one line per use.
src_macro() {
	sed -n "s/^MODULE_$1(\"\(.*\)\");\$/\1/p" src/*.c
}

# Names of every module_param*() in src/*.c.
src_params() {
	sed -nE 's/^[[:space:]]*module_param(_named|_cb|_array|_string|_unsafe)?\([[:space:]]*([A-Za-z0-9_]+).*/\2/p' \
		src/*.c | sort -u
}

PKG=$(conf_value PACKAGE_NAME)
VER=$(conf_value PACKAGE_VERSION)
SRC_VER=$(src_macro VERSION)
# libtwheel's full version, the name of the installed shared object
LIB_VERSION=$(sed -n 's/^VERSION *:= *//p' tools/Makefile)
is "dkms.conf PACKAGE_NAME is twheel" "$PKG" twheel
is "dkms.conf PACKAGE_VERSION ($VER) equals MODULE_VERSION in src/ ($SRC_VER)" "$VER" "$SRC_VER"
mapfile -t PARAMS < <(src_params)
echo "# module parameters in src/: ${PARAMS[*]}"
check "src/ declares module parameters" test "${#PARAMS[@]}" -gt 0

# ---- private trees and isolation -------------------------------------------------

W=$(mktemp -d "${TMPDIR:-/tmp}/twheel-dkms.XXXXXX")
MODE=direct
had_mok=1
# drop_mok: remove the MOK key pair dkms generated in the host's
# /var/lib/dkms when it ran there (no namespace) and there was none before
drop_mok() {
	if [[ $MODE == direct ]] && ((!had_mok)) && [[ -e /var/lib/dkms/mok.key ]]; then
		echo "# dkms created /var/lib/dkms/mok.{key,pub}: removing them"
		rm -f /var/lib/dkms/mok.key /var/lib/dkms/mok.pub
	fi
}
cleanup() {
	drop_mok
	rm -rf "$W"
}
trap cleanup EXIT
mkdir -p "$W/dkms" "$W/src" "$W/modules" "$W/masks" "$W/log"
DKMS_OPTS=(--dkmstree "$W/dkms" --sourcetree "$W/src" --installtree "$W/modules" --no-depmod)

UNSHARE=(unshare --mount --propagation private)
(($(id -u) == 0)) || UNSHARE+=(--map-root-user)
mkdir -p "$W/probe/a" "$W/probe/b"
if [[ ${TWHEEL_DKMS_NS:-1} != 0 ]] &&
	"${UNSHARE[@]}" mount --bind "$W/probe/a" "$W/probe/b" 2>/dev/null; then
	MODE=ns
fi
rm -rf "$W/probe"
if [[ $MODE == ns ]]; then
	echo "# isolation: dkms runs under ${UNSHARE[*]}"
else
	echo "# isolation: none (uid $(id -u), mount namespaces unavailable)"
fi

# ns_run "PRIVATE=HOST ..." CMD...: run CMD in a new mount namespace where
# each existing HOST directory is replaced by the PRIVATE one (created
# empty if need be).  No spaces in the paths.
# shellcheck disable=SC2016  # expanded by the inner shell
NS_SETUP='
for b in $TWHEEL_BINDS; do
	[ -d "${b#*=}" ] || continue
	mkdir -p "${b%%=*}"
	mount --bind "${b%%=*}" "${b#*=}"
done
exec "$@"'
ns_run() {
	local binds=$1
	shift
	TWHEEL_BINDS=$binds "${UNSHARE[@]}" sh -c "$NS_SETUP" sh "$@"
}

# dkms_run LOG ARGS...: dkms ARGS with the private trees, output in LOG.
dkms_run() {
	local logf=$1
	shift
	echo "# dkms $*" >>"$W/log/commands"
	if [[ $MODE == ns ]]; then
		# dkms' MOK key and configuration: private
		ns_run "$W/masks/var-lib-dkms=/var/lib/dkms $W/masks/etc-dkms=/etc/dkms" \
			dkms "$@" "${DKMS_OPTS[@]}" >"$logf" 2>&1
	else
		dkms "$@" "${DKMS_OPTS[@]}" >"$logf" 2>&1
	fi
}

# List what the host holds where dkms or make install could write: every
# entry with its type, mode and owner, and size and mtime of non-directories
# (a directory's mtime would only repeat that an entry came and went).
host_listing() {
	{
		find "${HOST_DIRS[@]}" ! -type d -printf '%p %y %m %U %s %T@ %l\n' 2>/dev/null || true
		find "${HOST_DIRS[@]}" -type d -printf '%p %y %m %U\n' 2>/dev/null || true
		find /usr/src -maxdepth 1 -printf '%p %y\n' 2>/dev/null || true
	} | sort
}
host_listing >"$W/host.before"
[[ -e /var/lib/dkms/mok.key ]] || had_mok=0

# ---- dkms -------------------------------------------------------------------------

# The work tree as `dkms add .` would copy it: tracked and new files, without
# build products or anything .gitignore'd.
mkdir -p "$W/checkout"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# (tracked files deleted in the work tree are listed too: skip them)
	git ls-files -z -co --exclude-standard |
		while IFS= read -r -d '' f; do [[ ! -e "$f" ]] || printf '%s\0' "$f"; done |
		xargs -0 cp --parents -a -t "$W/checkout"
else
	rsync -a --exclude=/build --exclude='*.o' --exclude='*.ko' ./ "$W/checkout/"
fi

t0=$SECONDS
if [[ $MODE == direct && $(id -u) -ne 0 ]]; then
	# `dkms add <dir>` is root only; the module/version form is not
	cp -a "$W/checkout" "$W/src/$PKG-$VER"
	dkms_run "$W/log/add" add -m "$PKG" -v "$VER" && rc=0 || rc=$?
else
	dkms_run "$W/log/add" add "$W/checkout" && rc=0 || rc=$?
fi
if ((rc == 0)); then ok "dkms add"; else
	not_ok "dkms add (exit $rc)"
	note "$W/log/add"
fi
check "dkms add registered $PKG/$VER in the private tree" test -d "$W/dkms/$PKG/$VER"

# modinfo_checks KERNEL RELEASE KO: the module's metadata
modinfo_checks() {
	local k=$1 rel=$2 ko=$3 p f parms line desc missing=() want
	is "$k: vermagic is $rel" "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$rel"
	is "$k: modinfo version equals dkms.conf PACKAGE_VERSION" "$(modinfo -F version "$ko")" "$VER"
	for f in description author license; do
		want=$(src_macro "${f^^}")
		if [[ -n "$want" ]]; then
			is "$k: modinfo $f as MODULE_${f^^} in src/" "$(modinfo -F "$f" "$ko")" "$want"
		else
			check "$k: modinfo $f is set (MODULE_${f^^} not parsed from src/)" \
				test -n "$(modinfo -F "$f" "$ko")"
		fi
	done
	# "name:description (type)" per parameter; no description gives
	# "name:(type)" or no line at all
	parms=$(modinfo -F parm "$ko")
	for p in "${PARAMS[@]}"; do
		line=$(grep -m1 "^$p:" <<<"$parms" || true)
		desc=${line#"$p":}
		desc=${desc%" ("*")"}
		[[ -n "$line" && -n "${desc// /}" && "$desc" != "("*")" ]] || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		ok "$k: modinfo lists all ${#PARAMS[@]} parameters of src/ with a description"
	else
		not_ok "$k: parameters without a description in modinfo: ${missing[*]}"
		note <<<"$parms"
	fi
	is "$k: modinfo has no parameter src/ does not declare" \
		"$(cut -d: -f1 <<<"$parms" | sort -u)" "$(printf '%s\n' "${PARAMS[@]}")"
	doc_params_checks "$k" "$parms"
}

# doc_params_checks KERNEL PARMS: the admin guide's parameter table (name
# and default of each row, between its second and third rule) against
# modinfo's "name:description (type)" lines
doc_params_checks() {
	local k=$1 parms=$2 name def desc bad=()
	local table
	table=$(awk '/^=======================  =========/ { n++; next }
		n == 2 && /^``[a-z_]+``/ { gsub(/``/, "", $1); print $1, $2 }' \
		Documentation/admin-guide.rst)
	is "$k: the admin guide's parameter table lists modinfo's parameters" \
		"$(cut -d' ' -f1 <<<"$table" | sort)" "$(cut -d: -f1 <<<"$parms" | sort -u)"
	while read -r name def; do
		desc=$(grep -m1 "^$name:" <<<"$parms" || true)
		if grep -qE "default $def\b" <<<"$desc" ||
			{ [[ $def == 0 ]] && grep -qF '(0: ' <<<"$desc"; } ||
			grep -qE ": .*\b$def \([^)]*default\)" <<<"$desc"; then
			continue
		fi
		bad+=("$name=$def")
	done <<<"$table"
	if ((${#bad[@]} == 0)); then
		ok "$k: the admin guide's defaults are the ones modinfo gives"
	else
		not_ok "$k: the admin guide's defaults differ from modinfo's: ${bad[*]}"
		note <<<"$parms"
	fi
}

declare -A DKMS_TIME
for k in "${KERNELS[@]}"; do
	kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k")
	rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
	opts=(-m "$PKG" -v "$VER" -k "$rel" --kernelsourcedir "$kdir")
	mkdir -p "$W/modules/$rel"
	t=$SECONDS
	if dkms_run "$W/log/build-$k" build "${opts[@]}"; then
		ok "$k: dkms build -k $rel ($((SECONDS - t)) s)"
	else
		not_ok "$k: dkms build -k $rel"
		note "$W/log/build-$k"
		tail -n 40 "$W/dkms/$PKG/$VER/build/make.log" 2>/dev/null | note || true
	fi
	DKMS_TIME[$k]=$((SECONDS - t))
	# dkms deletes its build directory: POST_BUILD keeps what modules
	# that use twheel's API build against (samples/dkms.conf)
	check "$k: POST_BUILD kept <dkmstree>/$PKG/$VER/$rel/$(uname -m)/Module.symvers" \
		grep -q 'twheel_timer_start' "$W/dkms/$PKG/$VER/$rel/$(uname -m)/Module.symvers"
	if [[ $MODE == direct && $(id -u) -ne 0 ]]; then
		skip "$k: dkms install -k $rel" "dkms install needs root, and there are no user namespaces"
		ko=$(find "$W/dkms/$PKG/$VER/$rel" -name "$PKG.ko*" -print -quit 2>/dev/null || true)
	else
		if dkms_run "$W/log/install-$k" install "${opts[@]}"; then
			ok "$k: dkms install -k $rel"
		else
			not_ok "$k: dkms install -k $rel"
			note "$W/log/install-$k"
		fi
		ko=$(find "$W/modules/$rel/updates/dkms" -name "$PKG.ko*" -print -quit 2>/dev/null || true)
		check "$k: installed as <installtree>/$rel/updates/dkms/${ko##*/}" test -n "$ko"
	fi
	if [[ -n "$ko" ]]; then
		modinfo_checks "$k" "$rel" "$ko"
	else
		not_ok "$k: no twheel.ko to run modinfo on"
	fi
	dkms_run "$W/log/status-$k" status "$PKG/$VER" -k "$rel" || true
	note "$W/log/status-$k"
done

dkms_run "$W/log/remove" remove "$PKG/$VER" --all && rc=0 || rc=$?
if ((rc == 0)); then ok "dkms remove --all"; else
	not_ok "dkms remove --all (exit $rc)"
	note "$W/log/remove"
fi
left=$(find "$W/modules" -name "$PKG.ko*")
is "dkms remove left no twheel.ko in the install tree" "$left" ""
check "dkms remove unregistered $PKG/$VER" test ! -e "$W/dkms/$PKG/$VER"

# Anything dkms found deprecated or malformed in dkms.conf, in any command.
if grep -hiE 'deprecat|dkms\.conf: (error|warning)' "$W"/log/* >"$W/deprecated"; then
	not_ok "dkms reported nothing deprecated or malformed"
	note "$W/deprecated"
else
	ok "dkms reported nothing deprecated or malformed"
fi
# What dkms printed that matters: its signing decisions (with a namespace,
# /var/lib/dkms is the private directory bound over it).
grep -hE '^(Sign command|Signing key|Public certificate|Binary .* not found|Certificate or key)' \
	"$W"/log/build-* 2>/dev/null | sort -u | note || true
dkms_secs=$((SECONDS - t0))
drop_mok

# ---- make install / uninstall -----------------------------------------------------

# Every file and symlink under $1, relative, with its mode.
staged() {
	[[ -d "$1" ]] || return 0
	(cd "$1" && find . \( -type f -o -type l \) -printf '%P %m\n' | sort)
}

# sample_check KERNEL KDIR TREE: samples/twheel_sample.c in a directory of
# its own, built as its head comment says against TREE's header and
# Module.symvers, the Kbuild cut out of the comment; modpost must find
# every twheel symbol.
sample_check() {
	local k=$1 kdir=$2 tree=$3 ext=$W/sample-$1
	mkdir -p "$ext"
	cp samples/twheel_sample.c "$ext/"
	sed -n 's/^ \*   \(obj-m := .*\|ccflags-y := .*\)$/\1/p' samples/twheel_sample.c >"$ext/Kbuild"
	is "$k: the sample's comment gives a Kbuild of two lines" "$(wc -l <"$ext/Kbuild")" 2
	if make --no-print-directory -C "$kdir" M="$ext" TWHEEL="$tree" \
		KBUILD_EXTRA_SYMBOLS="$tree/Module.symvers" modules >"$W/log/sample-$k" 2>&1 &&
		[[ -f "$ext/twheel_sample.ko" ]] && ! grep -q 'WARNING' "$W/log/sample-$k"; then
		ok "$k: samples/twheel_sample.c builds out of tree as its comment says"
	else
		not_ok "$k: samples/twheel_sample.c builds out of tree as its comment says"
		tail -n 20 "$W/log/sample-$k" | note
	fi
}

# install_checks KERNEL OTHER: build in a copy of the tree for KERNEL, then
# make install/uninstall into staging dirs; OTHER is a kernel the build is
# not for.
install_checks() {
	local k=$1 other=$2 kdir rel other_kdir tree stage moddir ko others
	kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k")
	rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
	other_kdir=$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$other")
	tree=$W/tree-$k
	stage=$W/stage-$k
	moddir=lib/modules/$rel/extra/twheel
	cp -a "$W/checkout" "$tree"

	# mk LOG ARGS...: make ARGS in the copy, for this kernel
	mk() {
		local logf=$1
		shift
		make --no-print-directory -C "$tree" KDIR="$kdir" "$@" >"$logf" 2>&1
	}

	if mk "$W/log/make-$k" modules; then
		ok "$k: make modules in a copy of the tree"
	else
		not_ok "$k: make modules in a copy of the tree"
		tail -n 40 "$W/log/make-$k" | note
	fi
	sample_check "$k" "$kdir" "$tree"

	if mk "$W/log/install-$k" install DESTDIR="$stage"; then
		ok "$k: make install DESTDIR=<stage>"
	else
		not_ok "$k: make install DESTDIR=<stage>"
		note "$W/log/install-$k"
	fi
	is "$k: make install ends with its summary line" "$(tail -n 1 "$W/log/install-$k")" "1 passed, 0 failed"
	ko=$(find "$stage/$moddir" -name 'twheel.ko*' -print -quit 2>/dev/null || true)
	check "$k: module installed under $moddir/" test -n "$ko"
	if [[ -n "$ko" ]]; then
		is "$k: installed module is mode 644" "$(stat -c %a "$ko")" 644
		is "$k: installed module is for $rel" "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" "$rel"
	fi
	check "$k: udev rule installed as etc/udev/rules.d/60-twheel.rules, same content" \
		cmp -s "$stage/etc/udev/rules.d/60-twheel.rules" udev/60-twheel.rules
	is "$k: udev rule is mode 644" "$(stat -c %a "$stage/etc/udev/rules.d/60-twheel.rules" 2>/dev/null)" 644
	check "$k: no modules-load.d file without LOAD_AT_BOOT=1" \
		test ! -e "$stage/etc/modules-load.d/twheel.conf"
	is "$k: make install staged the library, headers and twheelctl under usr/local" \
		"$(staged "$stage" | grep -o '^usr/local/[^ ]* [0-9]*' | tr '\n' ' ')" \
		"usr/local/bin/twheelctl 755 usr/local/include/libtwheel.h 644 usr/local/include/twheel/linux/twheel.h 644 usr/local/lib/libtwheel.a 644 usr/local/lib/libtwheel.so 777 usr/local/lib/libtwheel.so.1 777 usr/local/lib/libtwheel.so.$LIB_VERSION 644 usr/local/lib/pkgconfig/libtwheel.pc 644 "
	# Nothing else: no depmod output when staging, no stray files.
	others=$(staged "$stage" | while read -r f _; do
		case "$f" in
		"$moddir"/*.ko | "$moddir"/*.ko.?z | "$moddir"/*.ko.zst) ;;
		etc/udev/rules.d/60-twheel.rules) ;;
		usr/local/*) ;;
		*) echo "$f" ;;
		esac
	done)
	is "$k: make install staged nothing but modules, the rule and usr/local" "$others" ""
	staged "$stage" | note

	if mk "$W/log/install-boot-$k" install DESTDIR="$stage" LOAD_AT_BOOT=1; then
		ok "$k: make install DESTDIR=<stage> LOAD_AT_BOOT=1"
	else
		not_ok "$k: make install DESTDIR=<stage> LOAD_AT_BOOT=1"
		note "$W/log/install-boot-$k"
	fi
	check "$k: LOAD_AT_BOOT=1 installs etc/modules-load.d/twheel.conf, same content" \
		cmp -s "$stage/etc/modules-load.d/twheel.conf" udev/twheel.conf
	is "$k: modules-load.d file is mode 644" \
		"$(stat -c %a "$stage/etc/modules-load.d/twheel.conf" 2>/dev/null)" 644

	if mk "$W/log/uninstall-$k" uninstall DESTDIR="$stage"; then
		ok "$k: make uninstall DESTDIR=<stage>"
	else
		not_ok "$k: make uninstall DESTDIR=<stage>"
		note "$W/log/uninstall-$k"
	fi
	is "$k: make uninstall left no file behind" "$(staged "$stage")" ""
	is "$k: make uninstall left no twheel directory behind" \
		"$(find "$stage" -name '*twheel*' -printf '%P\n')" ""

	# INSTALL_MOD_PATH: the modules there, the rest under DESTDIR.
	mk "$W/log/install-imp-$k" install DESTDIR="$stage-2" INSTALL_MOD_PATH="$stage-mods" || true
	check "$k: INSTALL_MOD_PATH=<root> puts the module under <root>/$moddir" \
		test -n "$(find "$stage-mods/$moddir" -name 'twheel.ko*' 2>/dev/null)"
	check "$k: INSTALL_MOD_PATH leaves the module out of DESTDIR" test ! -e "$stage-2/lib"
	check "$k: INSTALL_MOD_PATH keeps the rule in DESTDIR" \
		test -f "$stage-2/etc/udev/rules.d/60-twheel.rules"
	mk "$W/log/uninstall-imp-$k" uninstall DESTDIR="$stage-2" INSTALL_MOD_PATH="$stage-mods" || true
	is "$k: uninstall with INSTALL_MOD_PATH removes both" \
		"$(staged "$stage-2")$(staged "$stage-mods")" ""

	# The build is for $k: installing it for $other must fail.
	if make --no-print-directory -C "$tree" KDIR="$other_kdir" install \
		DESTDIR="$stage-other" >"$W/log/install-other-$k" 2>&1; then
		not_ok "$k: make install KDIR=<$other> refuses the $k build"
	else
		ok "$k: make install KDIR=<$other> refuses the $k build"
	fi
	grep 'error:' "$W/log/install-other-$k" | note || true
	is "$k: nothing staged by the refused install" "$(staged "$stage-other")" ""
}

is "udev/twheel.conf loads the twheel module" "$(grep -Ev '^(#|$)' udev/twheel.conf)" twheel
# live_checks KERNEL: make install/uninstall without DESTDIR, the way root
# runs it on a real system, in a namespace where /lib/modules and the two
# /etc directories are private and empty: depmod must index the module, and
# uninstall must take it out of the index and remove the files again.
live_checks() {
	local k=$1 rel live=$W/live d
	local dirs=(/lib/modules /etc/udev/rules.d /etc/modules-load.d /usr/local)
	rel=$("$TWHEEL_ROOT/tests/vm/kernels.sh" release "$k")
	if [[ $MODE != ns ]]; then
		skip "$k: live make install/uninstall" "needs a mount namespace"
		return
	fi
	for d in "${dirs[@]}"; do
		[[ -d "$d" ]] && continue
		skip "$k: live make install/uninstall" "no $d on this host to stand in for"
		return
	done
	# live_mk LOG ARGS...: make ARGS in the $k copy, in the namespace
	live_mk() {
		local logf=$1
		shift
		ns_run "$live/modules=/lib/modules $live/rules=/etc/udev/rules.d $live/load=/etc/modules-load.d $live/local=/usr/local" \
			make --no-print-directory -C "$W/tree-$k" \
			KDIR="$("$TWHEEL_ROOT/tests/vm/kernels.sh" kdir "$k")" \
			LDCONFIG="ldconfig -C $live/ld.so.cache" "$@" >"$logf" 2>&1
	}
	# ldconfig_lists: the private cache names the installed library
	# (/usr/local/lib is in Debian's /etc/ld.so.conf.d/libc.conf).  Not
	# grep -q: it would stop reading at the match, and ldconfig's
	# SIGPIPE fail the pipeline (pipefail).
	ldconfig_lists() {
		ldconfig -p -C "$live/ld.so.cache" 2>/dev/null |
			grep "libtwheel\.so\.1 .*=> /usr/local/lib/libtwheel\.so\.1\$" >/dev/null
	}
	if live_mk "$W/log/live-install-$k" install LOAD_AT_BOOT=1; then
		ok "$k: live make install LOAD_AT_BOOT=1"
	else
		not_ok "$k: live make install LOAD_AT_BOOT=1"
		note "$W/log/live-install-$k"
	fi
	check "$k: depmod indexed extra/twheel/src/twheel.ko in modules.dep" \
		grep -qE '^extra/twheel/src/twheel\.ko[.a-z]*:' "$live/modules/$rel/modules.dep"
	check "$k: live install put the rule in /etc/udev/rules.d" test -f "$live/rules/60-twheel.rules"
	check "$k: live install put twheel.conf in /etc/modules-load.d" test -f "$live/load/twheel.conf"
	check "$k: live install put libtwheel.so.1 in /usr/local/lib" test -e "$live/local/lib/libtwheel.so.1"
	check "$k: live install ran ldconfig: its cache lists libtwheel.so.1" ldconfig_lists
	if live_mk "$W/log/live-uninstall-$k" uninstall; then
		ok "$k: live make uninstall"
	else
		not_ok "$k: live make uninstall"
		note "$W/log/live-uninstall-$k"
	fi
	check "$k: depmod after uninstall dropped twheel from modules.dep" \
		test -z "$(grep twheel "$live/modules/$rel/modules.dep" 2>/dev/null)"
	if ldconfig_lists; then
		not_ok "$k: ldconfig after uninstall dropped libtwheel.so.1"
	else
		ok "$k: ldconfig after uninstall dropped libtwheel.so.1"
	fi
	is "$k: live uninstall left no twheel file" \
		"$(find "$live" -name '*twheel*' | sed "s|^$live/||")" ""
}

# No headers for the running kernel: make must say so, not build for
# whichever other headers are installed.
kdir_checks() {
	local tree=$W/tree-kdir rc=0
	cp -a "$W/checkout" "$tree"
	make --no-print-directory -C "$tree" KRELEASE=0.0.0-twheel-none modules \
		>"$W/log/kdir" 2>&1 || rc=$?
	check "make modules without headers for the running kernel fails" test "$rc" -ne 0
	check "its message names the headers package and KDIR=" \
		grep -q 'linux-headers-0.0.0-twheel-none.*KDIR=' "$W/log/kdir"
	is "it built nothing" "$(find "$tree" -name '*.o' -o -name '*.ko')" ""
	note "$W/log/kdir"
	rc=0
	make --no-print-directory -C "$tree" KDIR="$W/no-such-dir" modules >"$W/log/kdir2" 2>&1 || rc=$?
	((rc != 0)) || echo "(make succeeded)" >>"$W/log/kdir2"
	check "make modules KDIR=<not a build tree> fails and says so" \
		grep -q "KDIR=$W/no-such-dir is not a kernel build tree" "$W/log/kdir2"
}

t1=$SECONDS
kdir_checks
install_checks stock61 stock612
install_checks stock612 stock61
live_checks stock61
install_secs=$((SECONDS - t1))

# ---- the host ---------------------------------------------------------------------

host_listing >"$W/host.after"
if diff -u "$W/host.before" "$W/host.after" >"$W/host.diff"; then
	ok "host ${HOST_DIRS[*]} /usr/src unchanged"
else
	not_ok "host ${HOST_DIRS[*]} /usr/src unchanged"
	head -n 40 "$W/host.diff" | note
fi

echo "# timings: dkms ${dkms_secs} s (build: $(for k in "${KERNELS[@]}"; do printf '%s %s s ' "$k" "${DKMS_TIME[$k]}"; done| sed 's/ $//')), install/uninstall ${install_secs} s"
finish
