/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the twheel selftests share: the device path, time units, the poison
 * value of batch results, and thin wrappers of the ioctls that return 0 (or
 * the ioctl's value) or -errno.  Included after kselftest_harness.h.
 */
#ifndef TWHEEL_SELFTEST_H
#define TWHEEL_SELFTEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/twheel.h>

#define TWHEEL_DEV		"/dev/twheel"
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL
/* A value the kernel never writes into a result field. */
#define POISON			0x5a5a5a5a5a5a5a5aLL

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
