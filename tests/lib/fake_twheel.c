// SPDX-License-Identifier: GPL-2.0
/*
 * A fake /dev/twheel for testing twheelctl's output on a host without the
 * module: an LD_PRELOAD object that opens /dev/null in place of the
 * device and answers TWHEEL_IOC_API and TWHEEL_IOC_SETUP with fixed
 * values (below), and makes geteuid() return 1000, so that the output is
 * the same on every host.  tests/lib/test_twheelctl.sh runs twheelctl
 * under it and compares what it prints with what it should.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/twheel.h>

/*
 * glibc's fortified open()s, which a _FORTIFY_SOURCE build of libtwheel
 * (Debian's) calls and no header declares, and ioctl(), declared with
 * another type than it is defined with
 */
#pragma GCC diagnostic ignored "-Wmissing-prototypes"

static int fake_fd = -1;
static clockid_t fake_clock = CLOCK_MONOTONIC;
static unsigned long long fake_tick = 1000000;

static int fake_open(const char *path, int flags, int (*real)(const char *, int, ...),
		     mode_t mode)
{
	if (strcmp(path, "/dev/twheel"))
		return real(path, flags, mode);
	fake_fd = real("/dev/null", O_RDWR | (flags & O_CLOEXEC), 0);
	return fake_fd;
}

#define REAL(name) ((int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name))

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return fake_open(path, flags, REAL("open"), mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return fake_open(path, flags, REAL("open64"), mode);
}

int __open_2(const char *path, int flags)
{
	return fake_open(path, flags, REAL("open"), 0);
}

int __open64_2(const char *path, int flags)
{
	return fake_open(path, flags, REAL("open64"), 0);
}

uid_t geteuid(void)
{
	return 1000;
}

int ioctl(int fd, unsigned long cmd, ...)
{
	struct twheel_api api = {
		.out_abi_version = TWHEEL_ABI_VERSION,
		.out_event_size = sizeof(struct twheel_event),
		.out_features = TWHEEL_FEATURE_PERIODIC | TWHEEL_FEATURE_SLACK |
				TWHEEL_FEATURE_BATCH | TWHEEL_FEATURE_QUERY |
				TWHEEL_FEATURE_ENGINE_HIER | TWHEEL_FEATURE_SETUP |
				TWHEEL_FEATURE_URING_CMD | TWHEEL_FEATURE_URING_EXPIRY |
				TWHEEL_FEATURE_URING_MSHOT,
		.out_slots = 8192,
		.out_max_batch = 65536,
		.out_batch_op_size = sizeof(struct twheel_batch_op),
		.out_max_timers_per_fd = 1000,
		.out_max_timers_per_user = 5000,
		.out_max_instances = 8,
	};
	struct twheel_setup setup;
	va_list ap;
	void *arg;
	__u32 size;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != fake_fd || fd < 0)
		return (int)syscall(SYS_ioctl, fd, cmd, arg);
	memcpy(&size, arg, sizeof(size));
	switch (cmd) {
	case TWHEEL_IOC_API:
		api.size = size;
		api.out_tick_ns = fake_tick;
		api.out_clockid = fake_clock;
		memcpy(arg, &api, size < sizeof(api) ? size : sizeof(api));
		return 0;
	case TWHEEL_IOC_SETUP:
		memset(&setup, 0, sizeof(setup));
		memcpy(&setup, arg, size < sizeof(setup) ? size : sizeof(setup));
		fake_clock = setup.clockid;
		fake_tick = setup.tick_ns ? setup.tick_ns : 1000000;
		return 0;
	}
	errno = ENOTTY;
	return -1;
}
