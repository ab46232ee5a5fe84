/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the twheel selftests share: the device path, time units, the poison
 * value of batch results, the clock, and thin wrappers of the ioctls that
 * return 0 (or the ioctl's value) or -errno.  Included after
 * kselftest_harness.h.
 */
#ifndef TWHEEL_SELFTEST_H
#define TWHEEL_SELFTEST_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/twheel.h>

#define TWHEEL_DEV		"/dev/twheel"
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL
/* A value the kernel never writes into a result field. */
#define POISON			0x5a5a5a5a5a5a5a5aLL

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Milliseconds left until @deadline (CLOCK_MONOTONIC ns), 0 when past. */
static inline int ms_until(uint64_t deadline)
{
	uint64_t now = now_ns();

	if (now >= deadline)
		return 0;
	return (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/* 1 if @fd becomes readable within @timeout_ms, 0 if not, -errno. */
static inline int wait_in(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r > 0 && (p.revents & POLLIN);
}

static inline int tw_api(int fd, struct twheel_api *api)
{
	memset(api, 0, sizeof(*api));
	return ioctl(fd, TWHEEL_IOC_API, api) ? -errno : 0;
}

/* On failure *@handle is 0, never a handle. */
static inline int tw_arm(int fd, uint32_t flags, uint64_t expires,
			 uint64_t period, uint64_t slack, uint64_t cookie,
			 uint64_t *handle)
{
	struct twheel_arm a = {
		.flags = flags,
		.expires = expires,
		.period = period,
		.slack = slack,
		.cookie = cookie,
	};
	int ret = ioctl(fd, TWHEEL_IOC_ARM, &a) ? -errno : 0;

	if (handle)
		*handle = ret ? 0 : a.handle;
	return ret;
}

static inline int tw_modify(int fd, uint64_t handle, uint32_t flags,
			    uint64_t expires, uint64_t period, uint64_t slack,
			    uint64_t cookie)
{
	struct twheel_arm a = {
		.flags = flags,
		.handle = handle,
		.expires = expires,
		.period = period,
		.slack = slack,
		.cookie = cookie,
	};

	return ioctl(fd, TWHEEL_IOC_MODIFY, &a) ? -errno : 0;
}

/* @status, if not NULL, gets TWHEEL_CANCEL_PENDING or _FIRED. */
static inline int tw_cancel(int fd, uint64_t handle, uint32_t *status)
{
	struct twheel_cancel c = { .handle = handle };
	int ret = ioctl(fd, TWHEEL_IOC_CANCEL, &c) ? -errno : 0;

	if (status)
		*status = c.status;
	return ret;
}

static inline int tw_query(int fd, uint64_t handle, struct twheel_query *q)
{
	memset(q, 0, sizeof(*q));
	q->handle = handle;
	return ioctl(fd, TWHEEL_IOC_QUERY, q) ? -errno : 0;
}

/* The ioctl's value (records processed) or -errno. */
static inline long tw_batch(int fd, struct twheel_batch_op *ops,
			    uint32_t count, uint32_t *done)
{
	struct twheel_batch b = {
		.ops = (uintptr_t)ops,
		.count = count,
	};
	int ret = ioctl(fd, TWHEEL_IOC_BATCH, &b);

	if (done)
		*done = b.done;
	return ret < 0 ? -errno : ret;
}

/* One batch record, its result poisoned to show whether it was written. */
static inline void op_set(struct twheel_batch_op *op, uint32_t code,
			  uint64_t handle, uint64_t expires, uint64_t cookie)
{
	memset(op, 0, sizeof(*op));
	op->op = code;
	op->handle = handle;
	op->expires = expires;
	op->cookie = cookie;
	op->result = POISON;
}

/* The timers: line of /proc/self/fdinfo/@fd, or -errno. */
static inline long fd_timers(int fd)
{
	char path[64], line[128];
	long n = -ENODATA;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "timers: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

#endif /* TWHEEL_SELFTEST_H */
