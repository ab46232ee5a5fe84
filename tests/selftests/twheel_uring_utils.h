/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the selftests that drive /dev/twheel through liburing
 * (twheel_uring_test.c, twheel_uring_mshot_test.c); include after
 * kselftest_harness.h, twheel_utils.h and <liburing.h>.
 */
#ifndef TWHEEL_URING_UTILS_H
#define TWHEEL_URING_UTILS_H

/* How long a test waits for a completion that must come. */
#define CQE_WAIT_NS	(5 * NSEC_PER_SEC)

/* The next completion, within CQE_WAIT_NS: 0 or -errno (-ETIME). */
static inline int wait_cqe(struct io_uring *ring, struct io_uring_cqe **cqe)
{
	struct __kernel_timespec ts = {
		.tv_sec = CQE_WAIT_NS / NSEC_PER_SEC,
	};

	return io_uring_wait_cqe_timeout(ring, cqe, &ts);
}

/* Submit everything queued; 0 or -errno. */
static inline int submit_all(struct io_uring *ring)
{
	int ret = io_uring_submit(ring);

	return ret < 0 ? ret : 0;
}

/* Wait until @fd has @n timers (fdinfo), within 10 s: 0 or -ETIMEDOUT. */
static inline int wait_timers(int fd, long n)
{
	uint64_t deadline = now_ns() + 10 * NSEC_PER_SEC;

	while (fd_timers(fd) != n) {
		if (now_ns() > deadline)
			return -ETIMEDOUT;
		pause_ns(NSEC_PER_MSEC);
	}
	return 0;
}

/*
 * The 80-byte command area of an SQE128 entry: liburing declares
 * sqe->cmd as 16 bytes, which gcc 16 takes for the whole object (a copy
 * of a structure into it is -Wstringop-overflow); hide the pointer's
 * origin.
 */
static inline void *cmd_area(struct io_uring_sqe *sqe)
{
	void *p = sqe->cmd;

	__asm__("" : "+r" (p));
	return p;
}

/*
 * Queue (not submit) an ARM with @flags as IORING_OP_URING_CMD: absolute
 * @expires, @period, cookie and user_data @ud, the handle written to
 * *@handle (if not NULL).  Returns the SQE for more flags, or NULL when
 * the ring is full.
 */
static inline struct io_uring_sqe *
uring_arm_prep(struct io_uring *ring, int fd, uint32_t flags, uint64_t expires,
	       uint64_t period, uint64_t ud, uint64_t *handle)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct twheel_arm a = {
		.size = sizeof(a),
		.flags = flags,
	};

	if (!sqe)
		return NULL;
	tw_spec(&a.spec, TWHEEL_ARM_ABS, expires, period, 0, ud);
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = TWHEEL_IOC_ARM;
	sqe->addr = (uintptr_t)handle;
	sqe->user_data = ud;
	memcpy(cmd_area(sqe), &a, sizeof(a));
	return sqe;
}

#endif /* TWHEEL_URING_UTILS_H */
