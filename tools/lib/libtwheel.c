// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libtwheel - a small C library around the /dev/twheel ioctl ABI
 *
 * Copyright (c) 2026 twheel developers
 *
 * See twheel.h for the API and its error convention (negative errno).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "twheel.h"

/* The ABI fixes these sizes for 32 and 64-bit callers alike. */
static_assert(sizeof(struct twheel_api) == 48, "struct twheel_api");
static_assert(sizeof(struct twheel_arm) == 48, "struct twheel_arm");
static_assert(sizeof(struct twheel_cancel) == 16, "struct twheel_cancel");
static_assert(sizeof(struct twheel_query) == 48, "struct twheel_query");
static_assert(sizeof(struct twheel_batch_op) == 56, "struct twheel_batch_op");
static_assert(sizeof(struct twheel_batch) == 24, "struct twheel_batch");
static_assert(sizeof(struct twheel_event) == 48, "struct twheel_event");

/* Records of a library-managed batch buffer allocated on first use. */
#define TWHEEL_BATCH_DEFAULT_CAPACITY	256

/* ioctl() returning the kernel's value or -errno. */
static long twheel_ioctl(int fd, unsigned long cmd, void *arg)
{
	long ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

int twheel_open(int flags)
{
	int fd;

	if (flags & ~(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	fd = open(TWHEEL_DEVICE_PATH, O_RDWR | flags);
	return fd < 0 ? -errno : fd;
}

int twheel_close(int fd)
{
	return close(fd) ? -errno : 0;
}

int twheel_api(int fd, struct twheel_api *api)
{
	long ret;

	memset(api, 0, sizeof(*api));
	ret = twheel_ioctl(fd, TWHEEL_IOC_API, api);
	if (ret < 0)
		return ret;
	if (api->abi_version != TWHEEL_ABI_VERSION ||
	    api->event_size != sizeof(struct twheel_event))
		return -EPROTONOSUPPORT;
	return 0;
}

uint64_t twheel_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int twheel_arm(int fd, uint32_t flags, uint64_t expires, uint64_t period,
	       uint64_t slack, uint64_t cookie, uint64_t *handle)
{
	struct twheel_arm a = {
		.flags = flags,
		.expires = expires,
		.period = period,
		.slack = slack,
		.cookie = cookie,
	};
	long ret = twheel_ioctl(fd, TWHEEL_IOC_ARM, &a);

	if (ret < 0)
		return ret;
	if (handle)
		*handle = a.handle;
	return 0;
}

int twheel_modify(int fd, uint64_t handle, uint32_t flags, uint64_t expires,
		  uint64_t period, uint64_t slack, uint64_t cookie)
{
	struct twheel_arm a = {
		.flags = flags,
		.handle = handle,
		.expires = expires,
		.period = period,
		.slack = slack,
		.cookie = cookie,
	};
	long ret = twheel_ioctl(fd, TWHEEL_IOC_MODIFY, &a);

	return ret < 0 ? ret : 0;
}

int twheel_cancel(int fd, uint64_t handle)
{
	struct twheel_cancel c = { .handle = handle };
	long ret = twheel_ioctl(fd, TWHEEL_IOC_CANCEL, &c);

	return ret < 0 ? ret : (int)c.status;
}

int twheel_query(int fd, uint64_t handle, struct twheel_query *q)
{
	long ret;

	memset(q, 0, sizeof(*q));
	q->handle = handle;
	ret = twheel_ioctl(fd, TWHEEL_IOC_QUERY, q);
	return ret < 0 ? ret : 0;
}

ssize_t twheel_read_events(int fd, struct twheel_event *evs, size_t max)
{
	ssize_t n;

	if (!max)
		return -EINVAL;
	/* read() cannot return more than SSIZE_MAX bytes anyway. */
	if (max > SSIZE_MAX / sizeof(*evs))
		max = SSIZE_MAX / sizeof(*evs);
	n = read(fd, evs, max * sizeof(*evs));
	if (n < 0)
		return -errno;
	return n / (ssize_t)sizeof(*evs);
}

/* ---- Batches ----------------------------------------------------------- */

void twheel_batch_init(struct twheel_batchbuf *b, struct twheel_batch_op *ops,
		       size_t capacity)
{
	memset(b, 0, sizeof(*b));
	if (ops) {
		b->ops = ops;
		b->capacity = capacity;
	} else {
		b->owned = 1;
		/* Remembered as the first allocation's size. */
		b->capacity = capacity;
	}
}

void twheel_batch_free(struct twheel_batchbuf *b)
{
	if (b->owned)
		free(b->ops);
	memset(b, 0, sizeof(*b));
}

void twheel_batch_reset(struct twheel_batchbuf *b)
{
	b->count = 0;
	b->done = 0;
	b->failed = 0;
}

/* Make room for one more record; returns its slot or NULL with -errno. */
static struct twheel_batch_op *twheel_batch_slot(struct twheel_batchbuf *b,
						 int *err)
{
	struct twheel_batch_op *op;

	if (b->count == b->capacity || (b->owned && !b->ops)) {
		size_t cap;

		if (!b->owned) {
			*err = -ENOSPC;
			return NULL;
		}
		if (!b->ops)
			cap = b->capacity ? b->capacity :
					    TWHEEL_BATCH_DEFAULT_CAPACITY;
		else if (b->capacity > SIZE_MAX / 2 / sizeof(*op))
			cap = 0;
		else
			cap = b->capacity * 2;
		op = cap ? realloc(b->ops, cap * sizeof(*op)) : NULL;
		if (!op) {
			*err = -ENOMEM;
			return NULL;
		}
		b->ops = op;
		b->capacity = cap;
	}
	op = &b->ops[b->count];
	memset(op, 0, sizeof(*op));
	return op;
}

static ssize_t twheel_batch_add(struct twheel_batchbuf *b, uint32_t opcode,
				uint64_t handle, uint32_t flags,
				uint64_t expires, uint64_t period,
				uint64_t slack, uint64_t cookie)
{
	struct twheel_batch_op *op;
	int err;

	if (b->count >= SSIZE_MAX)
		return -ENOSPC;
	op = twheel_batch_slot(b, &err);
	if (!op)
		return err;
	op->op = opcode;
	op->flags = flags;
	op->handle = handle;
	op->expires = expires;
	op->period = period;
	op->slack = slack;
	op->cookie = cookie;
	return (ssize_t)b->count++;
}

ssize_t twheel_batch_arm(struct twheel_batchbuf *b, uint32_t flags,
			 uint64_t expires, uint64_t period, uint64_t slack,
			 uint64_t cookie)
{
	return twheel_batch_add(b, TWHEEL_OP_ARM, 0, flags, expires, period,
				slack, cookie);
}

ssize_t twheel_batch_modify(struct twheel_batchbuf *b, uint64_t handle,
			    uint32_t flags, uint64_t expires, uint64_t period,
			    uint64_t slack, uint64_t cookie)
{
	return twheel_batch_add(b, TWHEEL_OP_MODIFY, handle, flags, expires,
				period, slack, cookie);
}

ssize_t twheel_batch_cancel(struct twheel_batchbuf *b, uint64_t handle)
{
	return twheel_batch_add(b, TWHEEL_OP_CANCEL, handle, 0, 0, 0, 0, 0);
}

/* Ask the kernel how many records one TWHEEL_IOC_BATCH takes. */
static int twheel_batch_limit(int fd, uint32_t *max_batch)
{
	struct twheel_api api;
	int ret = twheel_api(fd, &api);

	if (ret < 0)
		return ret;
	if (!(api.features & TWHEEL_FEATURE_BATCH) || !api.max_batch)
		return -EOPNOTSUPP;
	*max_batch = api.max_batch;
	return 0;
}

ssize_t twheel_batch_submit(int fd, struct twheel_batchbuf *b)
{
	size_t start = b->done;
	int ret;

	if (!b->max_batch) {
		ret = twheel_batch_limit(fd, &b->max_batch);
		if (ret < 0)
			return ret;
	}

	while (b->done < b->count) {
		size_t left = b->count - b->done;
		uint32_t chunk = left < b->max_batch ? (uint32_t)left :
						       b->max_batch;
		struct twheel_batch batch = {
			.ops = (uintptr_t)&b->ops[b->done],
			.count = chunk,
		};
		long n = twheel_ioctl(fd, TWHEEL_IOC_BATCH, &batch);
		size_t i;

		if (n == -E2BIG) {
			/* max_batch was set too high by the caller: re-ask. */
			uint32_t limit;

			ret = twheel_batch_limit(fd, &limit);
			if (ret < 0)
				return ret;
			if (limit >= chunk)
				return -E2BIG;
			b->max_batch = limit;
			continue;
		}
		if (n < 0)
			return n;
		if (n == 0 || (uint64_t)n > chunk)
			return -EIO;	/* the kernel broke its contract */
		for (i = b->done; i < b->done + (size_t)n; i++)
			if (b->ops[i].result < 0)
				b->failed++;
		b->done += (size_t)n;
		/*
		 * A short count means the kernel stopped on EFAULT or ENOMEM
		 * (or we are being killed).  Just go on: the next ioctl starts
		 * with the record that stopped it and fails with its errno, or
		 * makes progress if the condition has passed.
		 */
	}
	return (ssize_t)(b->done - start);
}
