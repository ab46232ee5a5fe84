// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libtwheel - a small C library around the /dev/twheel ioctl ABI
 *
 * Copyright (c) 2026 twheel developers
 *
 * See libtwheel.h for the API and its error convention (negative errno).
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

#include "libtwheel.h"

/* The ABI fixes these sizes for 32 and 64-bit callers alike. */
static_assert(sizeof(struct twheel_api) == 72, "struct twheel_api");
static_assert(sizeof(struct twheel_setup) == 24, "struct twheel_setup");
static_assert(sizeof(struct twheel_timer_spec) == 40, "struct twheel_timer_spec");
static_assert(sizeof(struct twheel_arm) == 56, "struct twheel_arm");
static_assert(sizeof(struct twheel_modify) == 56, "struct twheel_modify");
static_assert(sizeof(struct twheel_cancel) == 24, "struct twheel_cancel");
static_assert(sizeof(struct twheel_query) == 56, "struct twheel_query");
static_assert(sizeof(struct twheel_batch_op) == 56, "struct twheel_batch_op");
static_assert(sizeof(struct twheel_batch) == 32, "struct twheel_batch");
static_assert(sizeof(struct twheel_event) == 48, "struct twheel_event");

/*
 * The handshake of ABI version 1, only to tell a version 1 module apart
 * from a file that is not twheel's: its TWHEEL_IOC_API was
 * _IOR(0xE8, 0x00, struct twheel_api) with the version and the event size
 * first in a 48-byte structure.
 */
struct libtwheel_api_v1 {
	__u32 abi_version;
	__u32 event_size;
	__u64 rest[5];
};

#define LIBTWHEEL_IOC_API_V1 _IOR(TWHEEL_IOCTL_MAGIC, 0x00, struct libtwheel_api_v1)

/* Records of a library-managed batch buffer allocated on first use. */
#define LIBTWHEEL_BATCH_DEFAULT_CAPACITY	256

/* ioctl() returning the kernel's value or -errno. */
static long libtwheel_ioctl(int fd, unsigned long cmd, void *arg)
{
	long ret = ioctl(fd, cmd, arg);

	return ret < 0 ? -errno : ret;
}

int libtwheel_open(int flags)
{
	int fd;

	if (flags & ~(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	fd = open(LIBTWHEEL_DEVICE_PATH, O_RDWR | flags);
	return fd < 0 ? -errno : fd;
}

int libtwheel_close(int fd)
{
	return close(fd) ? -errno : 0;
}

int libtwheel_api(int fd, struct twheel_api *api)
{
	long ret;

	memset(api, 0, sizeof(*api));
	api->size = sizeof(*api);
	ret = libtwheel_ioctl(fd, TWHEEL_IOC_API, api);
	if (ret == -ENOTTY) {
		struct libtwheel_api_v1 v1;

		/* A version 1 module, or not twheel at all? */
		memset(&v1, 0, sizeof(v1));
		if (libtwheel_ioctl(fd, LIBTWHEEL_IOC_API_V1, &v1) < 0 ||
		    !v1.abi_version)
			return -ENOTTY;
		memset(api, 0, sizeof(*api));
		api->size = sizeof(*api);
		api->out_abi_version = v1.abi_version;
		api->out_event_size = v1.event_size;
		return -EPROTO;
	}
	if (ret < 0)
		return ret;
	if (api->out_abi_version != LIBTWHEEL_ABI_VERSION ||
	    api->out_event_size != sizeof(struct twheel_event))
		return -EPROTO;
	return 0;
}

const char *libtwheel_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err == EPROTO)
		return "twheel module of another ABI version than libtwheel's (2)";
	return strerror(err);
}

int libtwheel_setup(int fd, clockid_t clockid, uint64_t tick_ns)
{
	struct twheel_setup st = {
		.size = sizeof(st),
		.clockid = (__u32)clockid,
		.tick_ns = tick_ns,
	};
	long ret;

	if (clockid < 0)
		return -EINVAL;
	ret = libtwheel_ioctl(fd, TWHEEL_IOC_SETUP, &st);
	return ret < 0 ? ret : 0;
}

uint64_t libtwheel_clock_now(clockid_t clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t libtwheel_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int libtwheel_arm(int fd, const struct twheel_timer_spec *spec,
		  uint64_t *handle)
{
	struct twheel_arm a = {
		.size = sizeof(a),
		.spec = *spec,
	};
	long ret = libtwheel_ioctl(fd, TWHEEL_IOC_ARM, &a);

	if (ret < 0)
		return ret;
	if (handle)
		*handle = a.out_handle;
	return 0;
}

int libtwheel_modify(int fd, uint64_t handle,
		     const struct twheel_timer_spec *spec)
{
	struct twheel_modify m = {
		.size = sizeof(m),
		.handle = handle,
		.spec = *spec,
	};
	long ret = libtwheel_ioctl(fd, TWHEEL_IOC_MODIFY, &m);

	return ret < 0 ? ret : 0;
}

int libtwheel_cancel(int fd, uint64_t handle)
{
	struct twheel_cancel c = { .size = sizeof(c), .handle = handle };
	long ret = libtwheel_ioctl(fd, TWHEEL_IOC_CANCEL, &c);

	return ret < 0 ? ret : (int)c.out_status;
}

int libtwheel_query(int fd, uint64_t handle, struct twheel_query *q)
{
	long ret;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = handle;
	ret = libtwheel_ioctl(fd, TWHEEL_IOC_QUERY, q);
	return ret < 0 ? ret : 0;
}

ssize_t libtwheel_read_events(int fd, struct twheel_event *evs, size_t max)
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

void libtwheel_batch_init(struct libtwheel_batch *b,
			  struct twheel_batch_op *ops, size_t capacity)
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

void libtwheel_batch_free(struct libtwheel_batch *b)
{
	if (b->owned)
		free(b->ops);
	memset(b, 0, sizeof(*b));
}

void libtwheel_batch_reset(struct libtwheel_batch *b)
{
	b->count = 0;
	b->done = 0;
	b->failed = 0;
}

/* Make room for one more record; returns its slot or NULL with -errno. */
static struct twheel_batch_op *libtwheel_batch_slot(struct libtwheel_batch *b,
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
					    LIBTWHEEL_BATCH_DEFAULT_CAPACITY;
		else if (b->capacity > SIZE_MAX / 2)
			cap = 0;
		else
			cap = b->capacity * 2;
		/* the caller's hint, as the doubling, may not fit in bytes */
		op = cap && cap <= SIZE_MAX / sizeof(*op) ?
		     realloc(b->ops, cap * sizeof(*op)) : NULL;
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

static ssize_t libtwheel_batch_add(struct libtwheel_batch *b, uint32_t opcode,
				   uint64_t handle,
				   const struct twheel_timer_spec *spec)
{
	struct twheel_batch_op *op;
	int err;

	if (b->count >= SSIZE_MAX)
		return -ENOSPC;
	op = libtwheel_batch_slot(b, &err);
	if (!op)
		return err;
	op->op = opcode;
	op->handle = handle;
	if (spec)
		op->spec = *spec;
	return (ssize_t)b->count++;
}

ssize_t libtwheel_batch_arm(struct libtwheel_batch *b,
			    const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_add(b, TWHEEL_OP_ARM, 0, spec);
}

ssize_t libtwheel_batch_modify(struct libtwheel_batch *b, uint64_t handle,
			       const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_add(b, TWHEEL_OP_MODIFY, handle, spec);
}

ssize_t libtwheel_batch_cancel(struct libtwheel_batch *b, uint64_t handle)
{
	return libtwheel_batch_add(b, TWHEEL_OP_CANCEL, handle, NULL);
}

/* Ask the kernel how many records one TWHEEL_IOC_BATCH takes. */
static int libtwheel_batch_limit(int fd, uint32_t *max_batch)
{
	struct twheel_api api;
	int ret = libtwheel_api(fd, &api);

	if (ret < 0)
		return ret;
	if (!(api.out_features & TWHEEL_FEATURE_BATCH) || !api.out_max_batch)
		return -EOPNOTSUPP;
	*max_batch = api.out_max_batch;
	return 0;
}

ssize_t libtwheel_batch_submit(int fd, struct libtwheel_batch *b)
{
	size_t start = b->done;
	int ret;

	if (!b->max_batch) {
		ret = libtwheel_batch_limit(fd, &b->max_batch);
		if (ret < 0)
			return ret;
	}

	while (b->done < b->count) {
		size_t left = b->count - b->done;
		uint32_t chunk = left < b->max_batch ? (uint32_t)left :
						       b->max_batch;
		struct twheel_batch_op *ops = &b->ops[b->done];
		struct twheel_batch batch = {
			.size = sizeof(batch),
			.ops = (uintptr_t)ops,
			.count = chunk,
			.op_size = sizeof(*ops),
		};
		long n;
		size_t i;

		/*
		 * The kernel writes out_result only for a record that fails
		 * (and for an arm), an arm's handle only when it succeeds:
		 * start every record from 0, so that each reads as its
		 * outcome afterwards whatever the buffer held before.
		 */
		for (i = 0; i < chunk; i++) {
			ops[i].out_result = 0;
			if (ops[i].op == TWHEEL_OP_ARM)
				ops[i].handle = 0;
		}
		n = libtwheel_ioctl(fd, TWHEEL_IOC_BATCH, &batch);
		if (n == -E2BIG) {
			/* max_batch was set too high by the caller: re-ask. */
			uint32_t limit;

			ret = libtwheel_batch_limit(fd, &limit);
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
		if (batch.out_done == (uint32_t)n) {
			if (batch.out_failed > (uint32_t)n)
				return -EIO;
			b->failed += batch.out_failed;
		} else {
			/* out_done could not be written: count ourselves. */
			for (i = 0; i < (size_t)n; i++)
				if (ops[i].out_result < 0)
					b->failed++;
		}
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
