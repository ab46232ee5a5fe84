# SPDX-License-Identifier: GPL-2.0
#
# twheel: build and test entry points.  What is compiled is described by
# Kbuild (kbuild reads it in preference to this file for M= builds).
#
#   make              build src/twheel.ko (and the sample) for KDIR, in place,
#                     and tools/ (libtwheel, twheelctl)
#   make modules-all  build for the six test kernels, in build/mod/<kernel>/
#   make kunit        KUnit suites in the debug kernel VM
#   make kcsan        KUnit suites, ioctl fuzzer and stress in VMs of the
#                     kcsan (race detector) kernel
#   make selftest     tests/selftests/ in stock 6.1, stock 6.12, debug and
#                     PREEMPT_RT 6.1 and 6.12 (rt61, rt612) VMs
#   make lint         checkpatch, kernel-doc, W=1 and sparse on both stock
#                     header sets, W=1 on the PREEMPT_RT ones, shellcheck
#   make check        all of the above (what CI runs), in two lanes side by
#                     side (scripts/check.sh; TWHEEL_CHECK_JOBS=1: in turn),
#                     and beside them sid's modules and selftest plan
#   make check-sid    Debian sid's kernel (7.2): modules, selftests and
#                     tools built in a sid chroot, the selftest plan in a
#                     VM, DKMS (scripts/sid-check.sh)
#   make demo         boot stock 6.1, load twheel, run a million timers
#                     through /dev/twheel (twheelctl demo)
#   make bench        benchmarks (Documentation/benchmarks.rst)
#   make fuzz         libFuzzer on the userspace build of the engines
#                     (FUZZ_SECONDS, default 60)
#   make stress       the long and random tests of tests/stress/: the ioctl
#                     fuzzer, stress and lifecycle plans in stock 6.1 and
#                     debug VMs (Documentation/robustness.rst); the kcsan
#                     kernel's runs are make kcsan (make robust: the same)
#   make docs         Sphinx HTML in build/docs/html, warnings are errors
#   make dkms-check   dkms add/build for the 6.1 and 6.12 headers, modinfo
#   make deb          the Debian packages (debian/) into build/deb/, lintian
#   make deb-check    make deb, then install, check and purge them in a
#                     throwaway root (DKMS for 6.1 and 6.12, paths,
#                     pkg-config, the README example)
#   make install      modules_install for KDIR plus the udev rule
#                     (scripts/install.sh), then libtwheel, its headers and
#                     twheelctl under PREFIX (make -C tools install)
#   make uninstall    undo make install
#   make clean
#
# Every test target ends with a line "N passed, N failed"; the build
# targets print what they build.  tests/README.md lists the tests and
# Documentation/testing.rst describes the harness.

# The running kernel's build tree, and no other unless KDIR= names it: a
# module built against other headers (the newest installed, say) does not
# load ("Invalid module format").  KRELEASE only stands in for `uname -r`
# (make dkms-check tests the message for a kernel without headers).
KRELEASE ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KRELEASE)/build
KDIR_HELP = $(if $(filter file,$(origin KDIR)),no build tree for the running kernel $(KRELEASE): \
	$(KDIR) does not exist.  Install its headers (Debian: apt install \
	linux-headers-$(KRELEASE)) or build for another kernel with KDIR=<its build tree>$(if \
	$(wildcard /usr/src/linux-headers-*/.config),; installed: $(patsubst %/.config,%,$(wildcard \
	/usr/src/linux-headers-*/.config))),KDIR=$(KDIR) is not a kernel build tree)

# W=1 always; warnings are errors in CI (or with WERROR=1) for this build,
# the user's.  Not exported: the harness's own builds (build-modules.sh,
# lint) fail on any warning unless WERROR=0 is given, which reaches them
# from the command line or the environment.
WERROR ?= $(if $(CI),1,0)
KBUILD_ARGS = -C $(KDIR) M=$(CURDIR) W=1 \
	$(if $(filter 1,$(WERROR)),KCFLAGS="$(strip $(KCFLAGS) -Werror)")

all: modules tools

tools:
	@$(MAKE) --no-print-directory -C tools all

modules:
	@test -f "$(KDIR)/Makefile" || { echo "error: $(strip $(KDIR_HELP))" >&2; exit 1; }
	@echo "make $(KBUILD_ARGS) modules"
	@$(MAKE) --no-print-directory $(KBUILD_ARGS) modules

modules-all:
	@tests/vm/build-modules.sh stock61 stock612 rt61 rt612 debug kcsan

kunit:
	@tests/vm/vm-run.sh --min-tests 1 debug kunit

kcsan:
	@tests/vm/kcsan.sh

selftest:
	@tests/vm/selftest.sh stock61 stock612 debug rt61 rt612

lint:
	@scripts/lint.sh

check:
	@scripts/check.sh

check-sid:
	@scripts/sid-check.sh

# 2G: the default per-user limit is a tenth of RAM, and the demo holds a
# million timers.  tsc=reliable: TCG's TSC is fine, and the HPET fallback
# costs a microsecond per clock read.
demo:
	@scripts/deps.sh all
	@TWHEEL_VM_MEM=2G TWHEEL_VM_APPEND=tsc=reliable \
		tests/vm/vm-run.sh --min-tests 2 stock61 demo

bench:
	@scripts/deps.sh all
	@bench/run.sh

fuzz:
	@scripts/deps.sh lint
	@$(MAKE) --no-print-directory -C tests/engines fuzz

clean:
	@if [ -f "$(KDIR)/Makefile" ]; then $(MAKE) --no-print-directory -C $(KDIR) M=$(CURDIR) clean; fi
	$(MAKE) --no-print-directory -C tools clean
	rm -rf build .checkpatch-camelcase.*

stress robust:
	@tests/vm/robust.sh

docs:
	@scripts/docs.sh

dkms-check:
	@scripts/dkms-check.sh

deb:
	@scripts/deb.sh

deb-check:
	@scripts/deb-check.sh

install uninstall:
	@KDIR="$(KDIR)" scripts/install.sh $@

.PHONY: all tools modules modules-all kunit kcsan selftest lint check check-sid clean demo bench docs fuzz \
	stress robust dkms-check deb deb-check install uninstall
