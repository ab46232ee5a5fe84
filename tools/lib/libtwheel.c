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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/io_uring.h>

#include "libtwheel.h"

/*
 * The sizes of ABI version 2's first structures, the same for 32 and
 * 64-bit callers: what every program built against libtwheel 1.0 passes,
 * and the least a caller's structure may have.  The structures grow at
 * their end (include/uapi/linux/twheel.h), never shrink; the library uses
 * the caller's sizes (the _sz functions), never its own, for the caller's
 * memory.
 */
#define LIBTWHEEL_API_SIZE_V2		64
#define LIBTWHEEL_SPEC_SIZE_V2		40
#define LIBTWHEEL_QUERY_SIZE_V2		56
#define LIBTWHEEL_OP_SIZE_V2		56

static_assert(sizeof(struct twheel_api) >= LIBTWHEEL_API_SIZE_V2, "struct twheel_api");
static_assert(offsetof(struct twheel_api, out_max_timers_per_user) + 8 ==
	      LIBTWHEEL_API_SIZE_V2, "struct twheel_api");
static_assert(sizeof(struct twheel_timer_spec) >= LIBTWHEEL_SPEC_SIZE_V2,
	      "struct twheel_timer_spec");
static_assert(offsetof(struct twheel_timer_spec, cookie) + 8 == LIBTWHEEL_SPEC_SIZE_V2,
	      "struct twheel_timer_spec");
static_assert(offsetof(struct twheel_arm, spec) == 16, "struct twheel_arm");
static_assert(offsetof(struct twheel_modify, spec) == 16, "struct twheel_modify");
static_assert(sizeof(struct twheel_cancel) >= 24, "struct twheel_cancel");
static_assert(offsetof(struct twheel_query, out_cookie) + 8 == LIBTWHEEL_QUERY_SIZE_V2,
	      "struct twheel_query");
static_assert(offsetof(struct twheel_batch_op, spec) == 16, "struct twheel_batch_op");
static_assert(sizeof(struct twheel_batch_op) >= LIBTWHEEL_OP_SIZE_V2, "struct twheel_batch_op");
static_assert(sizeof(struct twheel_batch) >= 32, "struct twheel_batch");
static_assert(sizeof(struct twheel_setup) == 24, "struct twheel_setup");
/* a new event size is a new ABI version (libtwheel_api() checks it) */
static_assert(sizeof(struct twheel_event) == 48, "struct twheel_event");

/* A size the kernel takes, at least @v2, ABI version 2's first. */
static int libtwheel_size_ok(size_t size, size_t v2)
{
	return size >= v2 && size <= TWHEEL_STRUCT_SIZE_MAX;
}

/*
 * libtwheel_api(), libtwheel_arm() and the other unsized functions are
 * libtwheel 1.0's symbols, kept for the programs built against it: they
 * pass no sizes, and were compiled with ABI version 2's first structures.
 * Programs built since call the _sz functions (libtwheel.h's inline
 * wrappers of the same names).
 */

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

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

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

int libtwheel_api_sz(int fd, struct twheel_api *api, size_t api_size)
{
	long ret;

	if (!libtwheel_size_ok(api_size, LIBTWHEEL_API_SIZE_V2))
		return -EINVAL;
	memset(api, 0, api_size);
	api->size = (uint32_t)api_size;
	ret = libtwheel_ioctl(fd, TWHEEL_IOC_API, api);
	if (ret == -ENOTTY) {
		struct libtwheel_api_v1 v1;

		/* A version 1 module, or not twheel at all? */
		memset(&v1, 0, sizeof(v1));
		if (libtwheel_ioctl(fd, LIBTWHEEL_IOC_API_V1, &v1) < 0 ||
		    !v1.abi_version)
			return -ENOTTY;
		memset(api, 0, api_size);
		api->size = (uint32_t)api_size;
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

int libtwheel_api(int fd, struct twheel_api *api)
{
	return libtwheel_api_sz(fd, api, LIBTWHEEL_API_SIZE_V2);
}

/*
 * What an errno means for /dev/twheel and what to do about it, for the
 * errors a user can act on.
 */
static const struct {
	int err;
	const char *msg;
} libtwheel_messages[] = {
	{ EPROTO,
	  "twheel module of another ABI version than libtwheel's (2): use a libtwheel and a twheel.ko of the same release"
	},
	{ ENOSPC,
	  "limit of live timers reached: max_timers_per_fd for this file or max_timers_per_user for this user (twheelctl info shows both; raise them with the module parameters, e.g. options twheel max_timers_per_user=N in /etc/modprobe.d/); from libtwheel_setup(), the limit of wheel instances of other clocks and ticks, max_instances"
	},
	{ ENOENT,
	  "no timer with this handle in this file, or (from libtwheel_open()) no /dev/twheel: is twheel.ko loaded? (modprobe twheel)"
	},
	{ ENODEV, "no twheel device: is twheel.ko loaded? (modprobe twheel)" },
	{ ENXIO, "no twheel device: is twheel.ko loaded? (modprobe twheel)" },
	{ EINVAL,
	  "invalid argument: an expiry, period or slack out of range (a period shorter than the wheel's tick, tick_ns in twheelctl info, included), an unknown flag, or a structure size below its first version"
	},
	{ E2BIG,
	  "structure or record with fields this module does not know, or a batch above max_batch"
	},
};

const char *libtwheel_strerror(int err)
{
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < ARRAY_SIZE(libtwheel_messages); i++)
		if (libtwheel_messages[i].err == err)
			return libtwheel_messages[i].msg;
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

/*
 * An arm or modify command: @head_size bytes of header (size, flags, then
 * out_handle or handle), then the caller's timer spec of @spec_size bytes,
 * all of it passed on, fields this library does not know included.
 */
union libtwheel_spec_cmd {
	struct twheel_arm arm;
	struct twheel_modify modify;
	unsigned char bytes[TWHEEL_STRUCT_SIZE_MAX];
};

static long libtwheel_spec_ioctl(int fd, unsigned long cmd,
				 union libtwheel_spec_cmd *c,
				 const struct twheel_timer_spec *spec,
				 size_t spec_size)
{
	size_t head = offsetof(struct twheel_arm, spec);

	if (!libtwheel_size_ok(spec_size, LIBTWHEEL_SPEC_SIZE_V2) ||
	    spec_size > sizeof(c->bytes) - head)
		return -EINVAL;
	memcpy(c->bytes + head, spec, spec_size);
	c->arm.size = (uint32_t)(head + spec_size);
	return libtwheel_ioctl(fd, cmd, c);
}

int libtwheel_arm_sz(int fd, const struct twheel_timer_spec *spec,
		     size_t spec_size, uint64_t *handle)
{
	union libtwheel_spec_cmd c;
	long ret;

	memset(&c, 0, offsetof(struct twheel_arm, spec));
	ret = libtwheel_spec_ioctl(fd, TWHEEL_IOC_ARM, &c, spec, spec_size);
	if (ret < 0)
		return ret;
	if (handle)
		*handle = c.arm.out_handle;
	return 0;
}

int libtwheel_arm(int fd, const struct twheel_timer_spec *spec,
		  uint64_t *handle)
{
	return libtwheel_arm_sz(fd, spec, LIBTWHEEL_SPEC_SIZE_V2, handle);
}

int libtwheel_modify_sz(int fd, uint64_t handle,
			const struct twheel_timer_spec *spec, size_t spec_size)
{
	union libtwheel_spec_cmd c;
	long ret;

	memset(&c, 0, offsetof(struct twheel_modify, spec));
	c.modify.handle = handle;
	ret = libtwheel_spec_ioctl(fd, TWHEEL_IOC_MODIFY, &c, spec, spec_size);
	return ret < 0 ? ret : 0;
}

int libtwheel_modify(int fd, uint64_t handle,
		     const struct twheel_timer_spec *spec)
{
	return libtwheel_modify_sz(fd, handle, spec, LIBTWHEEL_SPEC_SIZE_V2);
}

int libtwheel_cancel(int fd, uint64_t handle)
{
	struct twheel_cancel c = { .size = sizeof(c), .handle = handle };
	long ret = libtwheel_ioctl(fd, TWHEEL_IOC_CANCEL, &c);

	return ret < 0 ? ret : (int)c.out_status;
}

int libtwheel_query_sz(int fd, uint64_t handle, struct twheel_query *q,
		       size_t q_size)
{
	long ret;

	if (!libtwheel_size_ok(q_size, LIBTWHEEL_QUERY_SIZE_V2))
		return -EINVAL;
	memset(q, 0, q_size);
	q->size = (uint32_t)q_size;
	q->handle = handle;
	ret = libtwheel_ioctl(fd, TWHEEL_IOC_QUERY, q);
	return ret < 0 ? ret : 0;
}

int libtwheel_query(int fd, uint64_t handle, struct twheel_query *q)
{
	return libtwheel_query_sz(fd, handle, q, LIBTWHEEL_QUERY_SIZE_V2);
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

/* Record @i of @b's array, whose records are @op_size bytes each. */
static struct twheel_batch_op *libtwheel_batch_op(const struct libtwheel_batch *b,
						  size_t i, size_t op_size)
{
	return (struct twheel_batch_op *)((unsigned char *)b->ops + i * op_size);
}

/* Make room for one more record; returns its slot or NULL with -errno. */
static struct twheel_batch_op *libtwheel_batch_slot(struct libtwheel_batch *b,
						    size_t op_size, int *err)
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
		op = cap && cap <= SIZE_MAX / op_size ?
		     realloc(b->ops, cap * op_size) : NULL;
		if (!op) {
			*err = -ENOMEM;
			return NULL;
		}
		b->ops = op;
		b->capacity = cap;
	}
	op = libtwheel_batch_op(b, b->count, op_size);
	memset(op, 0, op_size);
	return op;
}

/*
 * Append a record.  The caller's records are @op_size bytes and hold a
 * spec of @spec_size bytes (both sizeof in the caller's build): a spec
 * larger than this library's goes into the record whole.
 */
static ssize_t libtwheel_batch_add(struct libtwheel_batch *b, uint32_t opcode,
				   uint64_t handle,
				   const struct twheel_timer_spec *spec,
				   size_t spec_size, size_t op_size)
{
	size_t head = offsetof(struct twheel_batch_op, spec);
	struct twheel_batch_op *op;
	int err;

	if (!libtwheel_size_ok(op_size, LIBTWHEEL_OP_SIZE_V2) ||
	    (spec && (!libtwheel_size_ok(spec_size, LIBTWHEEL_SPEC_SIZE_V2) ||
		      spec_size > op_size - head)))
		return -EINVAL;
	if (b->count >= SSIZE_MAX)
		return -ENOSPC;
	op = libtwheel_batch_slot(b, op_size, &err);
	if (!op)
		return err;
	op->op = opcode;
	op->handle = handle;
	if (spec)
		memcpy((unsigned char *)op + head, spec, spec_size);
	return (ssize_t)b->count++;
}

ssize_t libtwheel_batch_arm_sz(struct libtwheel_batch *b,
			       const struct twheel_timer_spec *spec,
			       size_t spec_size, size_t op_size)
{
	return libtwheel_batch_add(b, TWHEEL_OP_ARM, 0, spec, spec_size, op_size);
}

ssize_t libtwheel_batch_arm(struct libtwheel_batch *b,
			    const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_arm_sz(b, spec, LIBTWHEEL_SPEC_SIZE_V2,
				      LIBTWHEEL_OP_SIZE_V2);
}

ssize_t libtwheel_batch_modify_sz(struct libtwheel_batch *b, uint64_t handle,
				  const struct twheel_timer_spec *spec,
				  size_t spec_size, size_t op_size)
{
	return libtwheel_batch_add(b, TWHEEL_OP_MODIFY, handle, spec, spec_size,
				   op_size);
}

ssize_t libtwheel_batch_modify(struct libtwheel_batch *b, uint64_t handle,
			       const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_modify_sz(b, handle, spec, LIBTWHEEL_SPEC_SIZE_V2,
					 LIBTWHEEL_OP_SIZE_V2);
}

ssize_t libtwheel_batch_cancel_sz(struct libtwheel_batch *b, uint64_t handle,
				  size_t op_size)
{
	return libtwheel_batch_add(b, TWHEEL_OP_CANCEL, handle, NULL, 0, op_size);
}

ssize_t libtwheel_batch_cancel(struct libtwheel_batch *b, uint64_t handle)
{
	return libtwheel_batch_cancel_sz(b, handle, LIBTWHEEL_OP_SIZE_V2);
}

/* Ask the kernel how many records one TWHEEL_IOC_BATCH takes. */
static int libtwheel_batch_limit(int fd, uint32_t *max_batch)
{
	struct twheel_api api;
	int ret = libtwheel_api_sz(fd, &api, sizeof(api));

	if (ret < 0)
		return ret;
	if (!(api.out_features & TWHEEL_FEATURE_BATCH) || !api.out_max_batch)
		return -EOPNOTSUPP;
	*max_batch = api.out_max_batch;
	return 0;
}

ssize_t libtwheel_batch_submit_sz(int fd, struct libtwheel_batch *b,
				  size_t op_size)
{
	size_t start = b->done;
	int ret;

	if (!libtwheel_size_ok(op_size, LIBTWHEEL_OP_SIZE_V2))
		return -EINVAL;

	if (!b->max_batch) {
		ret = libtwheel_batch_limit(fd, &b->max_batch);
		if (ret < 0)
			return ret;
	}

	while (b->done < b->count) {
		size_t left = b->count - b->done;
		uint32_t chunk = left < b->max_batch ? (uint32_t)left :
						       b->max_batch;
		struct twheel_batch_op *ops = libtwheel_batch_op(b, b->done, op_size);
		struct twheel_batch batch = {
			.size = sizeof(batch),
			.ops = (uintptr_t)ops,
			.count = chunk,
			.op_size = (uint32_t)op_size,
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
			struct twheel_batch_op *op = libtwheel_batch_op(b, b->done + i,
									op_size);

			op->out_result = 0;
			if (op->op == TWHEEL_OP_ARM)
				op->handle = 0;
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
				if (libtwheel_batch_op(b, b->done + i, op_size)->out_result < 0)
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

ssize_t libtwheel_batch_submit(int fd, struct libtwheel_batch *b)
{
	return libtwheel_batch_submit_sz(fd, b, LIBTWHEEL_OP_SIZE_V2);
}

/*
 * io_uring: the ioctl's structure in the SQE's command area (80 bytes of
 * an SQE128), whose layout <linux/io_uring.h> gives as liburing's does.
 * Built at the caller's sizes (the _sz functions), never the library's
 * own (see "Structure sizes" in libtwheel.h); libtwheel 1.2's unsized
 * symbols pass ABI version 2's first ones.  The kernel zero-extends them.
 */
#define LIBTWHEEL_HDR_SIZE	16	/* size, flags, out_handle or handle */
#define LIBTWHEEL_CANCEL_SIZE_V2	24
#define LIBTWHEEL_BATCH_SIZE_V2		32

static void uring_prep(struct io_uring_sqe *sqe, int fd, uint32_t cmd_op)
{
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
}

/*
 * ARM or MODIFY: size, flags, a handle (0 for ARM), the spec.  A spec of
 * a size out of range leaves the command's size 0, which the kernel
 * completes with EINVAL.
 */
static int uring_prep_spec(struct io_uring_sqe *sqe, int fd, uint32_t cmd_op,
			   uint32_t flags, uint64_t handle,
			   const struct twheel_timer_spec *spec, size_t spec_size)
{
	uint32_t size = (uint32_t)(LIBTWHEEL_HDR_SIZE + spec_size);

	uring_prep(sqe, fd, cmd_op);
	if (!libtwheel_size_ok(spec_size, LIBTWHEEL_SPEC_SIZE_V2) ||
	    spec_size > TWHEEL_URING_CMD_SIZE_MAX - LIBTWHEEL_HDR_SIZE)
		return -EINVAL;
	memcpy(sqe->cmd, &size, 4);
	memcpy(sqe->cmd + 4, &flags, 4);
	memcpy(sqe->cmd + 8, &handle, 8);
	memcpy(sqe->cmd + LIBTWHEEL_HDR_SIZE, spec, spec_size);
	return 0;
}

int libtwheel_uring_prep_arm_sz(struct io_uring_sqe *sqe, int fd,
				const struct twheel_timer_spec *spec,
				size_t spec_size)
{
	return uring_prep_spec(sqe, fd, TWHEEL_IOC_ARM, 0, 0, spec, spec_size);
}

void libtwheel_uring_prep_arm(struct io_uring_sqe *sqe, int fd,
			      const struct twheel_timer_spec *spec)
{
	libtwheel_uring_prep_arm_sz(sqe, fd, spec, LIBTWHEEL_SPEC_SIZE_V2);
}

int libtwheel_uring_prep_arm_expiry_sz(struct io_uring_sqe *sqe, int fd,
				       const struct twheel_timer_spec *spec,
				       size_t spec_size, uint64_t *handle)
{
	int ret = uring_prep_spec(sqe, fd, TWHEEL_IOC_ARM, TWHEEL_ARM_URING_EXPIRY,
				  0, spec, spec_size);

	if (!ret)
		sqe->addr = (uintptr_t)handle;
	return ret;
}

void libtwheel_uring_prep_arm_expiry(struct io_uring_sqe *sqe, int fd,
				     const struct twheel_timer_spec *spec,
				     uint64_t *handle)
{
	libtwheel_uring_prep_arm_expiry_sz(sqe, fd, spec, LIBTWHEEL_SPEC_SIZE_V2,
					   handle);
}

/* 6.18's flag: the host's <linux/io_uring.h> may predate it. */
#ifndef IORING_URING_CMD_MULTISHOT
#define IORING_URING_CMD_MULTISHOT	2U	/* bit 1 */
#endif

int libtwheel_uring_prep_arm_mshot_sz(struct io_uring_sqe *sqe, int fd,
				      const struct twheel_timer_spec *spec,
				      size_t spec_size, uint64_t *handle,
				      uint16_t buf_group)
{
	int ret = libtwheel_uring_prep_arm_expiry_sz(sqe, fd, spec, spec_size,
						     handle);

	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = buf_group;
	sqe->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	return ret;
}

int libtwheel_uring_prep_modify_sz(struct io_uring_sqe *sqe, int fd,
				   uint64_t handle,
				   const struct twheel_timer_spec *spec,
				   size_t spec_size)
{
	return uring_prep_spec(sqe, fd, TWHEEL_IOC_MODIFY, 0, handle, spec,
			       spec_size);
}

void libtwheel_uring_prep_modify(struct io_uring_sqe *sqe, int fd,
				 uint64_t handle,
				 const struct twheel_timer_spec *spec)
{
	libtwheel_uring_prep_modify_sz(sqe, fd, handle, spec, LIBTWHEEL_SPEC_SIZE_V2);
}

void libtwheel_uring_prep_cancel(struct io_uring_sqe *sqe, int fd,
				 uint64_t handle)
{
	uint32_t size = LIBTWHEEL_CANCEL_SIZE_V2;

	uring_prep(sqe, fd, TWHEEL_IOC_CANCEL);
	memcpy(sqe->cmd, &size, 4);
	memcpy(sqe->cmd + 8, &handle, 8);
}

int libtwheel_uring_prep_batch_sz(struct io_uring_sqe *sqe, int fd,
				  struct twheel_batch_op *ops, uint32_t count,
				  size_t op_size)
{
	struct {
		uint32_t size, flags;
		uint64_t ops;
		uint32_t count, op_size;
	} b = {
		.size = LIBTWHEEL_BATCH_SIZE_V2,
		.ops = (uintptr_t)ops,
		.count = count,
		.op_size = (uint32_t)op_size,
	};

	uring_prep(sqe, fd, TWHEEL_IOC_BATCH);
	if (!libtwheel_size_ok(op_size, LIBTWHEEL_OP_SIZE_V2))
		return -EINVAL;
	memcpy(sqe->cmd, &b, sizeof(b));
	return 0;
}

void libtwheel_uring_prep_batch(struct io_uring_sqe *sqe, int fd,
				struct twheel_batch_op *ops, uint32_t count)
{
	libtwheel_uring_prep_batch_sz(sqe, fd, ops, count, LIBTWHEEL_OP_SIZE_V2);
}

uint64_t libtwheel_uring_cqe_handle(const struct io_uring_cqe *cqe)
{
	return cqe->big_cqe[0];
}
