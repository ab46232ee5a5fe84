/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the twheel selftests and test programs share, in the manner of
 * tools/testing/selftests/iommu/iommufd_utils.h:
 *
 *  - the device path, time units, the clock and a PRNG;
 *  - _test_ioctl_*(): thin wrappers of the ABI version 2 ioctls that fill
 *    the size-prefixed structures and return 0 (the batch: the ioctl's
 *    value) or -errno, usable without the kselftest harness (twheel_fuzz,
 *    twheel_stress, twheel_lifecycle);
 *  - with kselftest_harness.h included first: test_ioctl_*() that assert
 *    success, test_err_*(errno, ...) and EXPECT_ERRNO() that assert a
 *    failure with that errno;
 *  - the version 1 ioctl numbers and API layout, for the tests that
 *    version 1 programs are turned away.
 */
#ifndef TWHEEL_UTILS_H
#define TWHEEL_UTILS_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#define TWHEEL_DEV		"/dev/twheel"
#define NSEC_PER_USEC		1000ULL
#define NSEC_PER_MSEC		1000000ULL
#define NSEC_PER_SEC		1000000000ULL
/* A value the kernel never writes into an output field. */
#define POISON			0x5a5a5a5a5a5a5a5aLL
/* The same for the 32-bit out_result of a batch record. */
#define RESULT_POISON		((int32_t)0x5a5a5a5a)

/*
 * The first version of every structure is version 2's, whole: a @size
 * below sizeof() is EINVAL.  The batch record's, as the header gives it.
 */
#define TWHEEL_BATCH_OP_SIZE0	56

/*
 * ABI version 1, for the tests that its programs are turned away: its API
 * ioctl still answers (abi_version 2, in this layout), every other command
 * gets ENOTTY.
 */
struct twheel_v1_api {
	uint32_t abi_version;
	uint32_t event_size;
	uint64_t features;
	uint64_t tick_ns;
	uint32_t slots;
	uint32_t max_batch;
	uint64_t max_timers_per_fd;
	uint64_t max_timers_per_user;
};

#define TWHEEL_V1_IOC_API	_IOC(_IOC_READ, TWHEEL_IOCTL_MAGIC, 0x00, 48)
#define TWHEEL_V1_IOC_ARM	_IOC(_IOC_READ | _IOC_WRITE, TWHEEL_IOCTL_MAGIC, 0x01, 48)
#define TWHEEL_V1_IOC_MODIFY	_IOC(_IOC_WRITE, TWHEEL_IOCTL_MAGIC, 0x02, 48)
#define TWHEEL_V1_IOC_CANCEL	_IOC(_IOC_READ | _IOC_WRITE, TWHEEL_IOCTL_MAGIC, 0x03, 16)
#define TWHEEL_V1_IOC_QUERY	_IOC(_IOC_READ | _IOC_WRITE, TWHEEL_IOCTL_MAGIC, 0x04, 48)
#define TWHEEL_V1_IOC_BATCH	_IOC(_IOC_READ | _IOC_WRITE, TWHEEL_IOCTL_MAGIC, 0x05, 24)

/* ---- clock and randomness ---------------------------------------------- */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/* Sleep @ns, across signals. */
static inline void pause_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = ns / NSEC_PER_SEC,
		.tv_nsec = ns % NSEC_PER_SEC,
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* xorshift64*: the next value of the generator *@s (never seeded 0). */
static inline uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
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

/*
 * Wait until @fd is readable or @deadline (CLOCK_MONOTONIC ns) has passed,
 * then read up to @max events into @ev.  Returns how many were read (0:
 * another reader was first), -ETIMEDOUT at the deadline (or when the wait
 * failed), or -errno of the read().
 */
static inline int read_by(int fd, struct twheel_event *ev, int max,
			  uint64_t deadline)
{
	ssize_t n;

	if (ms_until(deadline) <= 0 || wait_in(fd, ms_until(deadline)) <= 0)
		return -ETIMEDOUT;
	n = read(fd, ev, max * sizeof(*ev));
	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n / sizeof(*ev);
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

/* ---- the ioctls: 0 (or the ioctl's value) or -errno ---------------------- */

static inline void tw_spec(struct twheel_timer_spec *s, uint32_t flags,
			   uint64_t expires, uint64_t period, uint64_t slack,
			   uint64_t cookie)
{
	memset(s, 0, sizeof(*s));
	s->flags = flags;
	s->expires = expires;
	s->period = period;
	s->slack = slack;
	s->cookie = cookie;
}

static inline int _test_ioctl_api(int fd, struct twheel_api *api)
{
	memset(api, 0, sizeof(*api));
	api->size = sizeof(*api);
	return ioctl(fd, TWHEEL_IOC_API, api) ? -errno : 0;
}

/* On failure *@handle is 0, never a handle. */
static inline int _test_ioctl_arm(int fd, uint32_t flags, uint64_t expires,
				  uint64_t period, uint64_t slack,
				  uint64_t cookie, uint64_t *handle)
{
	struct twheel_arm a = { .size = sizeof(a) };
	int ret;

	tw_spec(&a.spec, flags, expires, period, slack, cookie);
	ret = ioctl(fd, TWHEEL_IOC_ARM, &a) ? -errno : 0;
	if (handle)
		*handle = ret ? 0 : a.out_handle;
	return ret;
}

static inline int _test_ioctl_modify(int fd, uint64_t handle, uint32_t flags,
				     uint64_t expires, uint64_t period,
				     uint64_t slack, uint64_t cookie)
{
	struct twheel_modify m = { .size = sizeof(m), .handle = handle };

	tw_spec(&m.spec, flags, expires, period, slack, cookie);
	return ioctl(fd, TWHEEL_IOC_MODIFY, &m) ? -errno : 0;
}

/* @status, if not NULL, gets TWHEEL_CANCEL_PENDING or _FIRED. */
static inline int _test_ioctl_cancel(int fd, uint64_t handle, uint32_t *status)
{
	struct twheel_cancel c = { .size = sizeof(c), .handle = handle };
	int ret = ioctl(fd, TWHEEL_IOC_CANCEL, &c) ? -errno : 0;

	if (status)
		*status = c.out_status;
	return ret;
}

static inline int _test_ioctl_query(int fd, uint64_t handle,
				    struct twheel_query *q)
{
	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	q->handle = handle;
	return ioctl(fd, TWHEEL_IOC_QUERY, q) ? -errno : 0;
}

/* TWHEEL_IOC_SETUP: the file's clock and tick (0: the module's). */
static inline int _test_ioctl_setup(int fd, uint32_t clockid, uint64_t tick_ns)
{
	struct twheel_setup st = {
		.size = sizeof(st),
		.clockid = clockid,
		.tick_ns = tick_ns,
	};

	return ioctl(fd, TWHEEL_IOC_SETUP, &st) ? -errno : 0;
}

/* @clock in ns */
static inline uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

/*
 * The ioctl's value (records processed) or -errno; @done and @failed, if
 * not NULL, get out_done and out_failed.
 */
static inline long _test_ioctl_batch_sz(int fd, void *ops, uint32_t count,
					uint32_t op_size, uint32_t *done,
					uint32_t *failed)
{
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)ops,
		.count = count,
		.op_size = op_size,
	};
	int ret = ioctl(fd, TWHEEL_IOC_BATCH, &b);

	ret = ret < 0 ? -errno : ret;
	if (done)
		*done = b.out_done;
	if (failed)
		*failed = b.out_failed;
	return ret;
}

static inline long _test_ioctl_batch(int fd, struct twheel_batch_op *ops,
				     uint32_t count, uint32_t *done)
{
	return _test_ioctl_batch_sz(fd, ops, count, sizeof(*ops), done, NULL);
}

/* 0 if all @count records were processed, else -errno (-EIO: some). */
static inline long _test_ioctl_batch_all(int fd, struct twheel_batch_op *ops,
					 uint32_t count, uint32_t *done)
{
	long ret = _test_ioctl_batch(fd, ops, count, done);

	return ret == (long)count ? 0 : ret < 0 ? ret : -EIO;
}

/* ---- batch records, out_result poisoned to show whether it was written -- */

static inline void op_set(struct twheel_batch_op *op, uint32_t code,
			  uint64_t handle, uint64_t expires, uint64_t cookie)
{
	memset(op, 0, sizeof(*op));
	op->op = code;
	op->handle = handle;
	op->spec.expires = expires;
	op->spec.cookie = cookie;
	op->out_result = RESULT_POISON;
}

static inline void op_arm(struct twheel_batch_op *op, uint32_t flags,
			  uint64_t expires, uint64_t period, uint64_t cookie)
{
	op_set(op, TWHEEL_OP_ARM, 0, expires, cookie);
	op->spec.flags = flags;
	op->spec.period = period;
}

static inline void op_modify(struct twheel_batch_op *op, uint64_t handle,
			     uint64_t expires, uint64_t cookie)
{
	op_set(op, TWHEEL_OP_MODIFY, handle, expires, cookie);
}

static inline void op_cancel(struct twheel_batch_op *op, uint64_t handle)
{
	op_set(op, TWHEEL_OP_CANCEL, handle, 0, 0);
}

/*
 * The result of a processed record: out_result, or 0 where the kernel left
 * it alone (a MODIFY or CANCEL that worked).  For records set up by
 * op_set().
 */
static inline int32_t op_res(const struct twheel_batch_op *op)
{
	return op->out_result == RESULT_POISON ? 0 : op->out_result;
}

/* ---- assertions, for programs built on kselftest_harness.h --------------- */
#ifdef __KSELFTEST_HARNESS_H

/*
 * @cmd failed with @expected_errno: @cmd is a _test_ioctl_*() value
 * (-errno) or a raw system call's -1 with errno set.
 */
#define EXPECT_ERRNO(expected_errno, cmd)				\
	({								\
		long __r = (cmd);					\
		if (__r == -1)						\
			__r = -errno;					\
		ASSERT_EQ(-(long)(expected_errno), __r);		\
	})

#define test_ioctl_api(fd, api)	ASSERT_EQ(0, _test_ioctl_api(fd, api))
#define test_ioctl_arm(fd, flags, expires, period, slack, cookie, handle) \
	ASSERT_EQ(0, _test_ioctl_arm(fd, flags, expires, period, slack,	\
				     cookie, handle))
#define test_err_arm(_errno, fd, flags, expires, period, slack, cookie, handle) \
	EXPECT_ERRNO(_errno, _test_ioctl_arm(fd, flags, expires, period,	\
					     slack, cookie, handle))
#define test_ioctl_modify(fd, handle, flags, expires, period, slack, cookie) \
	ASSERT_EQ(0, _test_ioctl_modify(fd, handle, flags, expires,	\
					period, slack, cookie))
#define test_err_modify(_errno, fd, handle, flags, expires, period, slack, cookie) \
	EXPECT_ERRNO(_errno, _test_ioctl_modify(fd, handle, flags,	\
						expires, period, slack, cookie))
#define test_ioctl_setup(fd, clockid, tick_ns)				\
	ASSERT_EQ(0, _test_ioctl_setup(fd, clockid, tick_ns))
#define test_err_setup(_errno, fd, clockid, tick_ns)			\
	EXPECT_ERRNO(_errno, _test_ioctl_setup(fd, clockid, tick_ns))
#define test_ioctl_cancel(fd, handle, status)				\
	ASSERT_EQ(0, _test_ioctl_cancel(fd, handle, status))
#define test_err_cancel(_errno, fd, handle, status)			\
	EXPECT_ERRNO(_errno, _test_ioctl_cancel(fd, handle, status))
#define test_ioctl_query(fd, handle, q)					\
	ASSERT_EQ(0, _test_ioctl_query(fd, handle, q))
#define test_err_query(_errno, fd, handle, q)				\
	EXPECT_ERRNO(_errno, _test_ioctl_query(fd, handle, q))
/* The whole batch was processed. */
#define test_ioctl_batch(fd, ops, count, done)				\
	ASSERT_EQ(0, _test_ioctl_batch_all(fd, ops, count, done))
#define test_err_batch(_errno, fd, ops, count, done)			\
	EXPECT_ERRNO(_errno, _test_ioctl_batch(fd, ops, count, done))
/* read() of @len bytes failed with @_errno. */
#define test_err_read(_errno, fd, buf, len)				\
	EXPECT_ERRNO(_errno, read(fd, buf, len))

#endif /* __KSELFTEST_HARNESS_H */

#endif /* TWHEEL_UTILS_H */
