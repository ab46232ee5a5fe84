#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# dkms.conf's POST_BUILD: keep twheel's Module.symvers for the modules that
# build against twheel's exports.  DKMS (3.0.10, Debian 12) deletes its
# build directory after every build and keeps only the .ko files and
# make.log, so without this nothing of the build says what twheel exports
# for that kernel.  Runs in the build directory; DEST is
# /var/lib/dkms/twheel/<version>/<kernel release>/<arch>, which
# `dkms remove` deletes with the module.  A consumer module's dkms.conf
# (samples/dkms.conf) passes DEST/Module.symvers as KBUILD_EXTRA_SYMBOLS.
#
# Usage: dkms-post-build.sh DEST
set -e
mkdir -p "$1"
cp Module.symvers "$1/Module.symvers"
