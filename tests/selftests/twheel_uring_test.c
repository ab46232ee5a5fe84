// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/twheel through io_uring (liburing, linked statically).
 *
 * Reads: the file supports IOCB_NOWAIT (FMODE_NOWAIT, read_iter) and poll,
 * so io_uring completes an IORING_OP_READ on the submitting task, by
 * poll-driven retry, and never starts an io-wq worker for it; a worker is
 * a thread of the process named "iou-wrk-<pid>", which the tests look for
 * in /proc/self/task.  That check is itself checked: a read forced to a
 * worker (IOSQE_ASYNC) must show one.  On 6.7 and later,
 * IORING_OP_READ_MULTISHOT with provided buffers delivers events from one
 * SQE; on older kernels that test skips.
 *
 * Commands: ARM, MODIFY, CANCEL and BATCH as IORING_OP_URING_CMD on an
 * SQE128 and CQE32 ring, each error of the ioctls' table through the
 * ring, the ring's own requirements (EOPNOTSUPP), and a command that
 * meets the file's mutex taken: it must not sleep for it on the
 * submitting task, but complete from a worker once the mutex is free.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/userfaultfd.h>

#include <liburing.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"
#include "twheel_uring_utils.h"

/* 6.7's opcode; liburing 2.3 (Debian 12) does not name it. */
#define TW_IORING_OP_READ_MULTISHOT	49

/*
 * Threads of this process, or -errno: the test's own and io-wq workers.
 * A worker is named iou-wrk-<pid> only once it runs, so count them all.
 */
static int nr_tasks(void)
{
	struct dirent *d;
	DIR *dir;
	int n = 0;

	dir = opendir("/proc/self/task");
	if (!dir)
		return -errno;
	while ((d = readdir(dir)))
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

/* io-wq workers of a process that has @own threads of its own. */
static int iou_workers_besides(int own)
{
	int n = nr_tasks();

	return n < 0 ? n : n - own;
}

/* ...of a test that started no thread. */
static int iou_workers(void)
{
	return iou_workers_besides(1);
}

/* Check @n events read into @ev: cookies in [base, base + max), never early. */
static int check_events(struct __test_metadata *_metadata,
			const struct twheel_event *ev, int n, uint64_t base,
			unsigned int max, uint8_t *seen)
{
	int i;

	for (i = 0; i < n; i++) {
		EXPECT_LE(ev[i].expires, ev[i].fired);
		EXPECT_LE(base, ev[i].cookie);
		EXPECT_GT(base + max, ev[i].cookie);
		if (ev[i].cookie >= base && ev[i].cookie < base + max) {
			EXPECT_EQ(0, seen[ev[i].cookie - base])
				TH_LOG("cookie %llu read twice",
				       (unsigned long long)ev[i].cookie);
			seen[ev[i].cookie - base] = 1;
		}
	}
	return n;
}

FIXTURE(twheel_uring) {
	int fd;
	struct io_uring ring;
};

FIXTURE_SETUP(twheel_uring)
{
	int ret;

	/* Blocking, as most programs open it: no O_NONBLOCK to lean on. */
	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
	ret = io_uring_queue_init(16, &self->ring, 0);
	/* disabled (sysctl kernel.io_uring_disabled) or not built in */
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, iou_workers());
}

FIXTURE_TEARDOWN(twheel_uring)
{
	io_uring_queue_exit(&self->ring);
	close(self->fd);
}

/*
 * A read submitted before any event: it waits for EPOLLIN, then completes
 * from the submitting task.  Three timers, all due in the same tick.
 */
TEST_F(twheel_uring, read_waits_without_worker)
{
	struct twheel_event ev[8];
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint64_t t = now_ns() + 30 * NSEC_PER_MSEC;
	uint8_t seen[3] = { 0 };
	int got = 0, i;

	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
	sqe->user_data = 1;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	/* nothing to read yet: the read must be parked, not completed */
	ASSERT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));

	for (i = 0; i < 3; i++)
		test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, t, 0, 0, 100 + i, NULL);
	while (got < 3) {
		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
		ASSERT_EQ(1, cqe->user_data);
		ASSERT_LT(0, cqe->res) TH_LOG("read: %s", strerror(-cqe->res));
		ASSERT_EQ(0, cqe->res % sizeof(ev[0]));
		got += check_events(_metadata, ev, cqe->res / sizeof(ev[0]),
				    100, 3, seen);
		io_uring_cqe_seen(&self->ring, cqe);
		if (got < 3) {
			sqe = io_uring_get_sqe(&self->ring);
			io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
			sqe->user_data = 1;
			ASSERT_EQ(1, io_uring_submit(&self->ring));
		}
	}
	ASSERT_EQ(3, got);
	EXPECT_EQ(0, iou_workers()) TH_LOG("an io-wq worker did the read");
}

/* Events already there: the read completes inline, many times over. */
TEST_F(twheel_uring, read_ready_inline)
{
	struct twheel_event ev[4];
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint8_t seen[64] = { 0 };
	int got = 0, i;

	for (i = 0; i < 64; i++)
		test_ioctl_arm(self->fd, 0, 1, 0, 0, 1000 + i, NULL);
	while (got < 64) {
		ASSERT_EQ(1, wait_in(self->fd, 5000));
		sqe = io_uring_get_sqe(&self->ring);
		io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
		ASSERT_EQ(1, io_uring_submit(&self->ring));
		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
		ASSERT_LT(0, cqe->res) TH_LOG("read: %s", strerror(-cqe->res));
		got += check_events(_metadata, ev, cqe->res / sizeof(ev[0]),
				    1000, 64, seen);
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(64, got);
	EXPECT_EQ(0, iou_workers()) TH_LOG("an io-wq worker did a read");
}

/* A buffer shorter than one event: EINVAL, as read() says. */
TEST_F(twheel_uring, read_short_buffer)
{
	struct twheel_event ev;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	test_ioctl_arm(self->fd, 0, 1, 0, 0, 1, NULL);
	ASSERT_EQ(1, wait_in(self->fd, 5000));
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->fd, &ev, sizeof(ev) - 1, 0);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
}

/*
 * The worker check can fail: a read forced to io-wq (IOSQE_ASYNC) runs on
 * a thread of its own, which /proc/self/task shows.
 */
TEST_F(twheel_uring, forced_async_read_shows_worker)
{
	struct twheel_event ev[4];
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;

	test_ioctl_arm(self->fd, 0, 20 * NSEC_PER_MSEC, 0, 0, 7, NULL);
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_read(sqe, self->fd, ev, sizeof(ev), 0);
	sqe->flags |= IOSQE_ASYNC;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	ASSERT_EQ(sizeof(ev[0]), cqe->res);
	EXPECT_EQ(7, ev[0].cookie);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_LT(0, iou_workers());
}

/*
 * At least one buffer per timer: every completion of the read carries one
 * event or more, so the read can never run out of buffers, however long
 * the test task waits before it gives them back (running out ends a
 * multishot read with -ENOBUFS, as io_uring should; with 8 buffers it did
 * in a loaded host's VM).
 */
#define MS_BUFS		64	/* provided buffers, a power of 2 */
#define MS_BUF_EVENTS	4	/* events per buffer */
#define MS_TIMERS	40
#define MS_BGID		7

/*
 * IORING_OP_READ_MULTISHOT (6.7+): one SQE, a completion per read with
 * IORING_CQE_F_MORE, each into a provided buffer, for events that arrive
 * over 200 ms; then cancelled.  Every timer is read once, none early, and
 * no worker runs.
 */
TEST_F(twheel_uring, read_multishot)
{
	size_t bsz = MS_BUF_EVENTS * sizeof(struct twheel_event);
	struct io_uring_buf_reg reg = { .ring_entries = MS_BUFS, .bgid = MS_BGID };
	struct io_uring_buf_ring *br;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	uint8_t seen[MS_TIMERS] = { 0 };
	uint64_t t0 = now_ns() + 20 * NSEC_PER_MSEC;
	int got = 0, reads = 0, ret, i;
	bool more = true;
	char *bufs;

	br = mmap(NULL, MS_BUFS * sizeof(struct io_uring_buf), PROT_READ | PROT_WRITE,
		  MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	ASSERT_NE(MAP_FAILED, br);
	bufs = malloc(MS_BUFS * bsz);
	ASSERT_NE(NULL, bufs);
	reg.ring_addr = (uintptr_t)br;
	ret = io_uring_register_buf_ring(&self->ring, &reg, 0);
	if (ret == -EINVAL)
		SKIP(return, "no provided buffer rings in this kernel (5.19+)");
	ASSERT_EQ(0, ret);
	io_uring_buf_ring_init(br);
	for (i = 0; i < MS_BUFS; i++)
		io_uring_buf_ring_add(br, bufs + i * bsz, bsz, i,
				      io_uring_buf_ring_mask(MS_BUFS), i);
	io_uring_buf_ring_advance(br, MS_BUFS);

	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_rw(TW_IORING_OP_READ_MULTISHOT, sqe, self->fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = MS_BGID;
	sqe->user_data = 2;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ret = io_uring_peek_cqe(&self->ring, &cqe);
	if (!ret && cqe->res == -EINVAL && !(cqe->flags & IORING_CQE_F_MORE))
		SKIP(return, "no IORING_OP_READ_MULTISHOT in this kernel (6.7+)");
	ASSERT_EQ(-EAGAIN, ret) TH_LOG("multishot read completed at once: %d",
				       cqe->res);

	/* 40 timers over 200 ms, 5 ms apart: many reads, one SQE */
	for (i = 0; i < MS_TIMERS; i++)
		test_ioctl_arm(self->fd, TWHEEL_ARM_ABS,
			       t0 + i * 5 * NSEC_PER_MSEC, 0, 0, 500 + i, NULL);
	while (got < MS_TIMERS && more) {
		int bid;

		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe))
			TH_LOG("%d of %d events after %d reads", got, MS_TIMERS,
			       reads);
		ASSERT_EQ(2, cqe->user_data);
		ASSERT_LT(0, cqe->res) TH_LOG("read: %s", strerror(-cqe->res));
		ASSERT_TRUE(cqe->flags & IORING_CQE_F_BUFFER);
		more = cqe->flags & IORING_CQE_F_MORE;
		bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		ASSERT_GT(MS_BUFS, bid);
		ASSERT_EQ(0, cqe->res % sizeof(struct twheel_event));
		got += check_events(_metadata,
				    (struct twheel_event *)(bufs + bid * bsz),
				    cqe->res / sizeof(struct twheel_event),
				    500, MS_TIMERS, seen);
		reads++;
		io_uring_cqe_seen(&self->ring, cqe);
		/* give the buffer back */
		io_uring_buf_ring_add(br, bufs + bid * bsz, bsz, bid,
				      io_uring_buf_ring_mask(MS_BUFS), 0);
		io_uring_buf_ring_advance(br, 1);
	}
	EXPECT_EQ(MS_TIMERS, got);
	EXPECT_TRUE(more) TH_LOG("the multishot read ended after %d reads", reads);
	EXPECT_LT(1, reads);
	EXPECT_EQ(0, iou_workers()) TH_LOG("an io-wq worker did a read");

	/* still armed: cancel it, its last completion without F_MORE */
	sqe = io_uring_get_sqe(&self->ring);
	io_uring_prep_cancel64(sqe, 2, 0);
	sqe->user_data = 3;
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
		if (cqe->user_data == 2) {
			EXPECT_EQ(-ECANCELED, cqe->res);
			EXPECT_FALSE(cqe->flags & IORING_CQE_F_MORE);
		} else {
			EXPECT_EQ(3, cqe->user_data);
			EXPECT_EQ(0, cqe->res);
		}
		io_uring_cqe_seen(&self->ring, cqe);
	}
	free(bufs);
}

/* ---- timer operations as IORING_OP_URING_CMD -------------------------- */

/*
 * Submit one command with @len bytes of @arg in the SQE's command area
 * (the rest zero) and wait for it: its res, and in *@res2 (if not NULL)
 * the CQE's first extra field on a CQE32 ring.
 */
static int ucmd_submit(struct io_uring *ring, int fd, uint32_t cmd_op,
		       const void *arg, size_t len)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	size_t sqe_size = ring->flags & IORING_SETUP_SQE128 ? 128 : 64;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = cmd_op;
	if (len > sqe_size - offsetof(struct io_uring_sqe, cmd))
		return -E2BIG;
	memcpy(sqe->cmd, arg, len);
	return io_uring_submit(ring) == 1 ? 0 : -EIO;
}

static int ucmd_reap(struct io_uring *ring, uint64_t *res2)
{
	struct io_uring_cqe *cqe;
	int ret = wait_cqe(ring, &cqe);

	if (ret)
		return ret == -ETIME ? -ETIMEDOUT : ret;
	ret = cqe->res;
	if (res2)
		*res2 = ring->flags & IORING_SETUP_CQE32 ? cqe->big_cqe[0] : POISON;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

static int ucmd(struct io_uring *ring, int fd, uint32_t cmd_op,
		const void *arg, size_t len, uint64_t *res2)
{
	int ret = ucmd_submit(ring, fd, cmd_op, arg, len);

	return ret ? ret : ucmd_reap(ring, res2);
}

static int ucmd_arm(struct io_uring *ring, int fd, uint32_t flags,
		    uint64_t expires, uint64_t period, uint64_t cookie,
		    uint64_t *handle)
{
	struct twheel_arm a = { .size = sizeof(a) };

	tw_spec(&a.spec, flags, expires, period, 0, cookie);
	return ucmd(ring, fd, TWHEEL_IOC_ARM, &a, sizeof(a), handle);
}

static int ucmd_modify(struct io_uring *ring, int fd, uint64_t handle,
		       uint32_t flags, uint64_t expires, uint64_t cookie)
{
	struct twheel_modify m = { .size = sizeof(m), .handle = handle };

	tw_spec(&m.spec, flags, expires, 0, 0, cookie);
	return ucmd(ring, fd, TWHEEL_IOC_MODIFY, &m, sizeof(m), NULL);
}

static int ucmd_cancel(struct io_uring *ring, int fd, uint64_t handle)
{
	struct twheel_cancel c = { .size = sizeof(c), .handle = handle };

	return ucmd(ring, fd, TWHEEL_IOC_CANCEL, &c, sizeof(c), NULL);
}

/* The batch's res; *@failed gets the CQE's out_failed. */
static int ucmd_batch(struct io_uring *ring, int fd,
		      struct twheel_batch_op *ops, uint32_t count,
		      uint64_t *failed)
{
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)ops,
		.count = count,
		.op_size = sizeof(*ops),
	};

	return ucmd(ring, fd, TWHEEL_IOC_BATCH, &b, sizeof(b), failed);
}

FIXTURE(twheel_ucmd) {
	int fd;
	struct io_uring ring;
	struct twheel_api api;
};

FIXTURE_SETUP(twheel_ucmd)
{
	int ret;

	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
	test_ioctl_api(self->fd, &self->api);
	ASSERT_TRUE(self->api.out_features & TWHEEL_FEATURE_URING_CMD);
	ret = io_uring_queue_init(16, &self->ring,
				  IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	/* disabled (sysctl kernel.io_uring_disabled) or not built in */
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(twheel_ucmd)
{
	io_uring_queue_exit(&self->ring);
	close(self->fd);
}

/* ARM, MODIFY, CANCEL through the ring; QUERY (ioctl) sees each. */
TEST_F(twheel_ucmd, arm_modify_cancel)
{
	struct twheel_query q;
	uint64_t h = POISON, t = now_ns() + 100 * NSEC_PER_SEC;

	ASSERT_EQ(0, ucmd_arm(&self->ring, self->fd, TWHEEL_ARM_ABS, t, 0, 42, &h));
	ASSERT_NE(POISON, h);
	ASSERT_NE(0, h);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_LE(t, q.out_expires);
	EXPECT_EQ(42, q.out_cookie);
	EXPECT_EQ(1, fd_timers(self->fd));

	ASSERT_EQ(0, ucmd_modify(&self->ring, self->fd, h, TWHEEL_ARM_ABS,
				 t + NSEC_PER_SEC, 43));
	test_ioctl_query(self->fd, h, &q);
	EXPECT_LE(t + NSEC_PER_SEC, q.out_expires);
	EXPECT_EQ(43, q.out_cookie);

	EXPECT_EQ(TWHEEL_CANCEL_PENDING, ucmd_cancel(&self->ring, self->fd, h));
	test_err_query(ENOENT, self->fd, h, &q);
	EXPECT_EQ(0, fd_timers(self->fd));
	/* the handle is gone for the ring too */
	EXPECT_EQ(-ENOENT, ucmd_cancel(&self->ring, self->fd, h));
	EXPECT_EQ(-ENOENT, ucmd_modify(&self->ring, self->fd, h, 0, 1, 0));
}

/* A timer armed through the ring fires, never early; CANCEL says FIRED. */
TEST_F(twheel_ucmd, armed_timer_fires)
{
	struct twheel_event ev;
	uint64_t h, h2;

	ASSERT_EQ(0, ucmd_arm(&self->ring, self->fd, 0, 5 * NSEC_PER_MSEC, 0, 9, &h));
	ASSERT_EQ(1, read_by(self->fd, &ev, 1, now_ns() + 5 * NSEC_PER_SEC));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(9, ev.cookie);
	EXPECT_LE(ev.expires, ev.fired);

	ASSERT_EQ(0, ucmd_arm(&self->ring, self->fd, 0, 1, 0, 10, &h2));
	ASSERT_EQ(1, wait_in(self->fd, 5000));
	EXPECT_EQ(TWHEEL_CANCEL_FIRED, ucmd_cancel(&self->ring, self->fd, h2));
	EXPECT_EQ(0, fd_timers(self->fd));
}

/* A batch through the ring: arms, then cancels with one stale handle. */
TEST_F(twheel_ucmd, batch)
{
	struct twheel_batch_op ops[100];
	uint64_t handles[100], failed = POISON;
	int i;

	for (i = 0; i < 100; i++)
		op_arm(&ops[i], 0, 100 * NSEC_PER_SEC, 0, i);
	ASSERT_EQ(100, ucmd_batch(&self->ring, self->fd, ops, 100, &failed));
	EXPECT_EQ(0, failed);
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, ops[i].out_result);
		handles[i] = ops[i].handle;
	}
	EXPECT_EQ(100, fd_timers(self->fd));
	for (i = 0; i < 100; i++)
		op_cancel(&ops[i], handles[i]);
	ops[50].handle = handles[50] + (1ULL << 32);	/* stale */
	ASSERT_EQ(100, ucmd_batch(&self->ring, self->fd, ops, 100, &failed));
	EXPECT_EQ(1, failed);
	EXPECT_EQ(-ENOENT, ops[50].out_result);
	EXPECT_EQ(1, fd_timers(self->fd));
	EXPECT_EQ(0, op_res(&ops[49]));
}

/* An ioctl structure, raw, as a case of the errno table puts it in the SQE. */
union ucmd_arg {
	struct twheel_arm arm;
	struct twheel_modify modify;
	struct twheel_cancel cancel;
	struct twheel_batch batch;
	uint8_t bytes[TWHEEL_URING_CMD_SIZE_MAX];
};

/*
 * Each error of the ioctls' table (and the ring's own) through the ring:
 * @cmd_op, a structure prepared by @prep from a valid one, the errno.
 * @len: bytes put in the SQE (default: the whole command area).
 */
struct ucmd_case {
	const char *name;
	uint32_t cmd_op;
	void (*prep)(union ucmd_arg *a, uint64_t live, uint64_t stale);
	int err;
};

#define FAR_NS (1000 * NSEC_PER_SEC)

static void arm_ok(union ucmd_arg *a, uint64_t live, uint64_t stale)
{
	a->arm.size = sizeof(a->arm);
	a->arm.spec.expires = FAR_NS;
}

static void modify_ok(union ucmd_arg *a, uint64_t live, uint64_t stale)
{
	a->modify.size = sizeof(a->modify);
	a->modify.handle = live;
	a->modify.spec.expires = FAR_NS;
}

static void cancel_ok(union ucmd_arg *a, uint64_t live, uint64_t stale)
{
	a->cancel.size = sizeof(a->cancel);
	a->cancel.handle = stale;	/* a valid structure; ENOENT */
}

static struct twheel_batch_op case_ops[4];

static void batch_ok(union ucmd_arg *a, uint64_t live, uint64_t stale)
{
	a->batch.size = sizeof(a->batch);
	a->batch.ops = (uintptr_t)case_ops;
	a->batch.count = 1;
	a->batch.op_size = sizeof(case_ops[0]);
	op_modify(&case_ops[0], live, FAR_NS, 0);
}

#define CASE_FN(fn, base, stmt)						\
static void fn(union ucmd_arg *a, uint64_t live, uint64_t stale)	\
{									\
	base(a, live, stale);						\
	stmt;								\
}

CASE_FN(arm_flags, arm_ok, a->arm.flags = 2)
CASE_FN(arm_spec_flags, arm_ok, a->arm.spec.flags = 2)
CASE_FN(arm_spec_reserved, arm_ok, a->arm.spec.__reserved = 1)
CASE_FN(arm_expires, arm_ok, a->arm.spec.expires = 1ULL << 63)
CASE_FN(arm_period, arm_ok, a->arm.spec.period = 1)
CASE_FN(arm_slack, arm_ok, a->arm.spec.slack = 1ULL << 63)
CASE_FN(arm_size0, arm_ok, a->arm.size = 0)
CASE_FN(arm_size_short, arm_ok, a->arm.size = sizeof(a->arm) - 1)
CASE_FN(arm_size_area, arm_ok, a->arm.size = TWHEEL_URING_CMD_SIZE_MAX + 1)
CASE_FN(arm_tail_zero, arm_ok, a->arm.size = TWHEEL_URING_CMD_SIZE_MAX)
CASE_FN(arm_tail_set, arm_ok,
	(a->arm.size = TWHEEL_URING_CMD_SIZE_MAX, a->bytes[79] = 1))
CASE_FN(modify_flags, modify_ok, a->modify.flags = 1)
CASE_FN(modify_spec_flags, modify_ok, a->modify.spec.flags = 2)
CASE_FN(modify_expires, modify_ok, a->modify.spec.expires = 1ULL << 63)
CASE_FN(modify_period, modify_ok, a->modify.spec.period = 1)
CASE_FN(modify_stale, modify_ok, a->modify.handle = stale)
CASE_FN(modify_zero, modify_ok, a->modify.handle = 0)
CASE_FN(modify_size, modify_ok, a->modify.size = sizeof(a->modify) - 8)
CASE_FN(modify_tail_set, modify_ok,
	(a->modify.size = sizeof(a->modify) + 8, a->bytes[sizeof(a->modify)] = 1))
CASE_FN(cancel_flags, cancel_ok, (a->cancel.handle = live, a->cancel.flags = 1))
CASE_FN(cancel_reserved, cancel_ok,
	(a->cancel.handle = live, a->cancel.__reserved = 1))
CASE_FN(cancel_zero, cancel_ok, a->cancel.handle = 0)
CASE_FN(cancel_size, cancel_ok, (a->cancel.handle = live, a->cancel.size = 16))
CASE_FN(cancel_tail_set, cancel_ok,
	(a->cancel.handle = live, a->cancel.size = 32, a->bytes[31] = 1))
CASE_FN(batch_flags, batch_ok, a->batch.flags = 1)
CASE_FN(batch_count, batch_ok, a->batch.count = 65537)
CASE_FN(batch_op_size_small, batch_ok, a->batch.op_size = 55)
CASE_FN(batch_op_size_big, batch_ok, a->batch.op_size = 4097)
CASE_FN(batch_efault, batch_ok, a->batch.ops = 8)
CASE_FN(batch_size, batch_ok, a->batch.size = sizeof(a->batch) - 4)
CASE_FN(batch_tail_set, batch_ok,
	(a->batch.size = sizeof(a->batch) + 8, a->bytes[sizeof(a->batch) + 7] = 1))

static const struct ucmd_case ucmd_cases[] = {
	{ "arm: valid", TWHEEL_IOC_ARM, arm_ok, 0 },
	{ "arm: flags", TWHEEL_IOC_ARM, arm_flags, EINVAL },
	{ "arm: spec.flags", TWHEEL_IOC_ARM, arm_spec_flags, EINVAL },
	{ "arm: spec.__reserved", TWHEEL_IOC_ARM, arm_spec_reserved, EINVAL },
	{ "arm: expires 2^63", TWHEEL_IOC_ARM, arm_expires, EINVAL },
	{ "arm: period under a tick", TWHEEL_IOC_ARM, arm_period, EINVAL },
	{ "arm: slack 2^63", TWHEEL_IOC_ARM, arm_slack, EINVAL },
	{ "arm: size 0", TWHEEL_IOC_ARM, arm_size0, EINVAL },
	{ "arm: size below the first version", TWHEEL_IOC_ARM, arm_size_short, EINVAL },
	{ "arm: size beyond the command area", TWHEEL_IOC_ARM, arm_size_area, EINVAL },
	{ "arm: longer, zero tail", TWHEEL_IOC_ARM, arm_tail_zero, 0 },
	{ "arm: longer, tail set", TWHEEL_IOC_ARM, arm_tail_set, E2BIG },
	{ "modify: valid", TWHEEL_IOC_MODIFY, modify_ok, 0 },
	{ "modify: flags", TWHEEL_IOC_MODIFY, modify_flags, EINVAL },
	{ "modify: spec.flags", TWHEEL_IOC_MODIFY, modify_spec_flags, EINVAL },
	{ "modify: expires 2^63", TWHEEL_IOC_MODIFY, modify_expires, EINVAL },
	{ "modify: period under a tick", TWHEEL_IOC_MODIFY, modify_period, EINVAL },
	{ "modify: stale handle", TWHEEL_IOC_MODIFY, modify_stale, ENOENT },
	{ "modify: handle 0", TWHEEL_IOC_MODIFY, modify_zero, ENOENT },
	{ "modify: size below the first version", TWHEEL_IOC_MODIFY, modify_size, EINVAL },
	{ "modify: longer, tail set", TWHEEL_IOC_MODIFY, modify_tail_set, E2BIG },
	{ "cancel: stale handle", TWHEEL_IOC_CANCEL, cancel_ok, ENOENT },
	{ "cancel: flags", TWHEEL_IOC_CANCEL, cancel_flags, EINVAL },
	{ "cancel: __reserved", TWHEEL_IOC_CANCEL, cancel_reserved, EINVAL },
	{ "cancel: handle 0", TWHEEL_IOC_CANCEL, cancel_zero, ENOENT },
	{ "cancel: size below the first version", TWHEEL_IOC_CANCEL, cancel_size, EINVAL },
	{ "cancel: longer, tail set", TWHEEL_IOC_CANCEL, cancel_tail_set, E2BIG },
	{ "batch: valid", TWHEEL_IOC_BATCH, batch_ok, 0 },
	{ "batch: flags", TWHEEL_IOC_BATCH, batch_flags, EINVAL },
	{ "batch: count above out_max_batch", TWHEEL_IOC_BATCH, batch_count, E2BIG },
	{ "batch: op_size below 56", TWHEEL_IOC_BATCH, batch_op_size_small, EINVAL },
	{ "batch: op_size above 4096", TWHEEL_IOC_BATCH, batch_op_size_big, E2BIG },
	{ "batch: records unreadable", TWHEEL_IOC_BATCH, batch_efault, EFAULT },
	{ "batch: size below the first version", TWHEEL_IOC_BATCH, batch_size, EINVAL },
	{ "batch: longer, tail set", TWHEEL_IOC_BATCH, batch_tail_set, E2BIG },
	/* commands the ring does not carry, and commands of no version */
	{ "API", TWHEEL_IOC_API, arm_ok, ENOTTY },
	{ "QUERY", TWHEEL_IOC_QUERY, modify_ok, ENOTTY },
	{ "version 1 ARM", TWHEEL_V1_IOC_ARM, arm_ok, ENOTTY },
	{ "version 1 CANCEL", TWHEEL_V1_IOC_CANCEL, cancel_ok, ENOTTY },
	{ "next number", _IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_BATCH + 8), arm_ok, ENOTTY },
	{ "other type", _IO(0xee, TWHEEL_CMD_ARM), arm_ok, ENOTTY },
	{ "0", 0, arm_ok, ENOTTY },
};

/*
 * Every case, on a live timer and a stale handle: its errno, and the
 * file's timers unchanged by a failure.
 */
TEST_F(twheel_ucmd, errno_table)
{
	uint64_t live, stale, res2;
	size_t i;

	test_ioctl_arm(self->fd, 0, FAR_NS, 0, 0, 1, &stale);
	test_ioctl_cancel(self->fd, stale, NULL);
	test_ioctl_arm(self->fd, 0, FAR_NS, 0, 0, 1, &live);
	for (i = 0; i < ARRAY_SIZE(ucmd_cases); i++) {
		const struct ucmd_case *c = &ucmd_cases[i];
		long before = fd_timers(self->fd);
		union ucmd_arg a;
		int ret;

		memset(&a, 0, sizeof(a));
		c->prep(&a, live, stale);
		ret = ucmd(&self->ring, self->fd, c->cmd_op, &a, sizeof(a), &res2);
		if (c->err) {
			EXPECT_EQ(-c->err, ret) TH_LOG("%s: %d", c->name, ret);
			EXPECT_EQ(before, fd_timers(self->fd)) TH_LOG("%s", c->name);
			continue;
		}
		/* the valid ones: ARM's handle, BATCH's one record */
		if (c->cmd_op == TWHEEL_IOC_BATCH) {
			EXPECT_EQ(1, ret) TH_LOG("%s", c->name);
			EXPECT_EQ(0, res2) TH_LOG("%s", c->name);
		} else {
			EXPECT_EQ(0, ret) TH_LOG("%s: %d", c->name, ret);
		}
		if (c->cmd_op == TWHEEL_IOC_ARM && !ret)
			test_ioctl_cancel(self->fd, res2, NULL);
	}
	EXPECT_EQ(1, fd_timers(self->fd));
}

/* A batch record's own errors come back in its out_result. */
TEST_F(twheel_ucmd, batch_record_errors)
{
	struct twheel_batch_op ops[4];
	uint64_t failed;

	op_arm(&ops[0], 0, FAR_NS, 0, 1);
	op_arm(&ops[1], 4, FAR_NS, 0, 2);		/* spec.flags */
	op_cancel(&ops[2], 0);				/* no such timer */
	op_set(&ops[3], 99, 0, 0, 0);			/* no such op */
	ASSERT_EQ(4, ucmd_batch(&self->ring, self->fd, ops, 4, &failed));
	EXPECT_EQ(3, failed);
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(-EINVAL, ops[1].out_result);
	EXPECT_EQ(-ENOENT, ops[2].out_result);
	EXPECT_EQ(-EINVAL, ops[3].out_result);
	EXPECT_EQ(1, fd_timers(self->fd));
}

/* The ring's requirements: SQE128 for every command, CQE32 for ARM. */
TEST_F(twheel_ucmd, ring_setup)
{
	struct twheel_cancel c = { .size = sizeof(c) };
	struct twheel_arm a = { .size = sizeof(a) };
	struct io_uring r64, r128;
	uint64_t h;

	a.spec.expires = FAR_NS;
	ASSERT_EQ(0, io_uring_queue_init(4, &r64, 0));
	/* 16 bytes of the structure are all a 64-byte SQE holds */
	EXPECT_EQ(-EOPNOTSUPP, ucmd(&r64, self->fd, TWHEEL_IOC_CANCEL, &c, 16, NULL));
	EXPECT_EQ(-EOPNOTSUPP, ucmd(&r64, self->fd, TWHEEL_IOC_ARM, &a, 16, NULL));
	io_uring_queue_exit(&r64);

	ASSERT_EQ(0, io_uring_queue_init(4, &r128, IORING_SETUP_SQE128));
	EXPECT_EQ(-EOPNOTSUPP, ucmd(&r128, self->fd, TWHEEL_IOC_ARM, &a, sizeof(a), NULL));
	EXPECT_EQ(0, fd_timers(self->fd));
	/* the others need no CQE32 */
	test_ioctl_arm(self->fd, 0, FAR_NS, 0, 0, 1, &h);
	c.handle = h;
	EXPECT_EQ(TWHEEL_CANCEL_PENDING,
		  ucmd(&r128, self->fd, TWHEEL_IOC_CANCEL, &c, sizeof(c), NULL));
	io_uring_queue_exit(&r128);
}

/* ENOSPC at the per-file limit, when it is small enough to reach here. */
TEST_F(twheel_ucmd, enospc)
{
	uint64_t limit = self->api.out_max_timers_per_fd, h, failed;
	struct twheel_batch_op *ops, op;
	uint64_t i;

	if (limit > 100000)
		SKIP(return, "per-file limit %llu: run with small limits",
		     (unsigned long long)limit);
	ops = calloc(limit, sizeof(*ops));
	ASSERT_NE(NULL, ops);
	for (i = 0; i < limit; i++)
		op_arm(&ops[i], 0, FAR_NS, 0, i);
	/* the per-user limit may be the lower: fill what it allows */
	_test_ioctl_batch(self->fd, ops, limit, NULL);
	free(ops);
	EXPECT_EQ(-ENOSPC, ucmd_arm(&self->ring, self->fd, 0, FAR_NS, 0, 0, &h));
	op_arm(&op, 0, FAR_NS, 0, 0);
	EXPECT_EQ(1, ucmd_batch(&self->ring, self->fd, &op, 1, &failed));
	EXPECT_EQ(1, failed);
	EXPECT_EQ(-ENOSPC, op.out_result);
}

/* ---- a command meets the file's mutex taken ---------------------------- */

struct stalled_batch {
	int fd;
	struct twheel_batch_op *ops;
	long ret;
};

static void *stalled_batch_fn(void *arg)
{
	struct stalled_batch *b = arg;

	b->ret = _test_ioctl_batch(b->fd, b->ops, 1, NULL);
	return NULL;
}

/*
 * A thread's BATCH ioctl holds the file's mutex while it faults on its
 * records (a userfaultfd page).  A CANCEL submitted through the ring then
 * must not sleep for the mutex in io_uring_enter(): it returns at once,
 * not completed, and a worker thread takes it over; when the fault is
 * resolved and the ioctl is done, the CANCEL completes.
 */
TEST_F(twheel_ucmd, mutex_taken_goes_to_worker)
{
	struct uffdio_api uapi = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct twheel_cancel c = { .size = sizeof(c) };
	long psz = sysconf(_SC_PAGESIZE);
	struct stalled_batch b;
	struct uffdio_copy copy;
	struct io_uring_cqe *cqe;
	struct uffd_msg msg;
	void *page, *zeros;
	pthread_t th;
	uint64_t h;
	int uffd;

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &uapi));
	page = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	zeros = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, page);
	ASSERT_NE(MAP_FAILED, zeros);
	reg.range.start = (uintptr_t)page;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	test_ioctl_arm(self->fd, 0, FAR_NS, 0, 0, 1, &h);
	/* the record is read under the mutex: the copy-in faults there */
	b.fd = self->fd;
	b.ops = page;
	ASSERT_EQ(0, pthread_create(&th, NULL, stalled_batch_fn, &b));
	ASSERT_EQ(1, wait_in(uffd, 5000)) TH_LOG("the batch did not fault");
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));

	c.handle = h;
	ASSERT_EQ(0, ucmd_submit(&self->ring, self->fd, TWHEEL_IOC_CANCEL,
				 &c, sizeof(c)));
	/* io_uring_enter() returned: nothing completed, a worker waits */
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));
	/* this thread and the batch's */
	EXPECT_LT(0, iou_workers_besides(2));

	/* the zeroed record is an invalid op: the batch fails it, then goes */
	copy.dst = (uintptr_t)page;
	copy.src = (uintptr_t)zeros;
	copy.len = psz;
	copy.mode = 0;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1, b.ret);
	EXPECT_EQ(TWHEEL_CANCEL_PENDING, ucmd_reap(&self->ring, NULL));
	EXPECT_EQ(0, fd_timers(self->fd));
	close(uffd);
}

/* ---- the expiry as the completion (6.7+) --------------------------------- */

/*
 * Queue (not submit) an ARM that completes at its expiry: absolute
 * @expires, @user_data, the handle written to *@handle (if not NULL).
 */
static int expiry_prep(struct io_uring *ring, int fd, uint64_t expires,
		       uint64_t period, uint64_t user_data, uint64_t *handle)
{
	return uring_arm_prep(ring, fd, TWHEEL_ARM_URING_EXPIRY, expires, period,
			      user_data, handle) ? 0 : -EBUSY;
}

/* The module completes ARMs at their expiry (TWHEEL_FEATURE_URING_EXPIRY). */
static bool has_expiry(const struct twheel_api *api)
{
	return api->out_features & TWHEEL_FEATURE_URING_EXPIRY;
}

#define NO_EXPIRY "no cancelable io_uring commands in this kernel (6.7+)"

/* Without cancelable commands (6.1) the flag is refused, nothing armed. */
TEST_F(twheel_ucmd, expiry_refused_without_support)
{
	struct io_uring_cqe *cqe;
	uint64_t h = POISON;

	if (has_expiry(&self->api))
		SKIP(return, "this kernel completes ARMs at their expiry");
	ASSERT_EQ(0, expiry_prep(&self->ring, self->fd, now_ns(), 0, 5, &h));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EOPNOTSUPP, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(POISON, h);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * 200 ARMs complete at their expiries, 1 ms apart: each once, never
 * early (the fire time in big_cqe[0], and the time the completion is
 * seen), none as an event to read; their timers are gone afterwards.
 */
TEST_F(twheel_ucmd, expiry_completes)
{
	enum { N = 200 };
	uint64_t handles[N], t0 = now_ns() + 100 * NSEC_PER_MSEC;
	uint8_t seen[N] = { 0 };
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	int i;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	ASSERT_EQ(0, io_uring_queue_init(256, &ring,
					 IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, expiry_prep(&ring, self->fd,
					 t0 + i * NSEC_PER_MSEC, 0, i, &handles[i]));
	ASSERT_EQ(0, submit_all(&ring));
	for (i = 0; i < N; i++) {
		uint64_t now, exp;

		ASSERT_EQ(0, wait_cqe(&ring, &cqe)) TH_LOG("%d of %d completed", i, N);
		now = now_ns();
		ASSERT_GT(N, cqe->user_data);
		exp = t0 + cqe->user_data * NSEC_PER_MSEC;
		EXPECT_EQ(0, cqe->res);
		EXPECT_EQ(0, seen[cqe->user_data]);
		seen[cqe->user_data] = 1;
		EXPECT_LE(exp, cqe->big_cqe[0]);
		EXPECT_LE(exp, now);
		EXPECT_NE(0, handles[cqe->user_data]);
		io_uring_cqe_seen(&ring, cqe);
	}
	EXPECT_EQ(0, io_uring_peek_cqe(&ring, &cqe) == 0);
	EXPECT_EQ(0, wait_in(self->fd, 0));
	EXPECT_EQ(0, fd_timers(self->fd));
	/* a handle after its completion: gone */
	test_err_cancel(ENOENT, self->fd, handles[0], NULL);
	io_uring_queue_exit(&ring);
}

/* The flag's other rules: no period, no MODIFY, no ioctl, EFAULT. */
TEST_F(twheel_ucmd, expiry_rules)
{
	struct twheel_arm a = { .size = sizeof(a), .flags = TWHEEL_ARM_URING_EXPIRY };
	struct io_uring_cqe *cqe;
	uint64_t h = 0, t = now_ns() + 100 * NSEC_PER_SEC;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	/* the ioctl knows no such flag */
	a.spec.expires = NSEC_PER_SEC;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	/* periodic: one completion per command */
	ASSERT_EQ(0, expiry_prep(&self->ring, self->fd, t, NSEC_PER_SEC, 1, &h));
	ASSERT_EQ(0, submit_all(&self->ring));
	EXPECT_EQ(-EINVAL, ucmd_reap(&self->ring, NULL));
	/* the handle cannot be written: EFAULT, nothing armed */
	ASSERT_EQ(0, expiry_prep(&self->ring, self->fd, t, 0, 2, (uint64_t *)8));
	ASSERT_EQ(0, submit_all(&self->ring));
	EXPECT_EQ(-EFAULT, ucmd_reap(&self->ring, NULL));
	EXPECT_EQ(0, fd_timers(self->fd));

	ASSERT_EQ(0, expiry_prep(&self->ring, self->fd, t, 0, 3, &h));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));
	EXPECT_EQ(1, fd_timers(self->fd));
	test_err_modify(EINVAL, self->fd, h, 0, NSEC_PER_SEC, 0, 0, 0);
	EXPECT_EQ(-EINVAL, ucmd_modify(&self->ring, self->fd, h, 0, 1, 0));
	/* CANCEL through the ring: its own completion, and the ARM's */
	ASSERT_EQ(0, ucmd_submit(&self->ring, self->fd, TWHEEL_IOC_CANCEL,
				 &(struct twheel_cancel){ .size = 24, .handle = h }, 24));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
		/* the ARM (3) and the CANCEL */
		EXPECT_EQ(cqe->user_data == 3 ? -ECANCELED : TWHEEL_CANCEL_PENDING,
			  cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * Cancels racing expiries: 1000 commands due 1 ms apart, from 300 ms
 * after they are queued, or four times what queueing the first 100 took
 * (TCG, and KASAN or KCSAN on top of it), cancelled one by one in that
 * order once the first half is due.
 * So about half fire and half are cancelled, and around the point where
 * the cancels catch up the two race.  Each completes exactly once: with
 * ECANCELED when its CANCEL found it pending, with 0 when it had fired
 * (CANCEL said FIRED, or ENOENT once the completion freed the timer).
 */
TEST_F(twheel_ucmd, expiry_cancel_races)
{
	enum { N = 1000 };
	static uint64_t handles[N];
	static int8_t cancel_said[N], cqe_said[N];
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int i, got = 0, fired = 0;
	uint64_t t0, lead;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	if (self->api.out_max_timers_per_fd < N)
		SKIP(return, "per-file limit below %d", N);
	ASSERT_EQ(0, io_uring_queue_init(N, &ring,
					 IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	/* the pace of this kernel: 100 far commands armed and cancelled */
	t0 = now_ns();
	for (i = 0; i < N / 10; i++)
		ASSERT_EQ(0, expiry_prep(&ring, self->fd, t0 + 3600 * NSEC_PER_SEC,
					 0, N + i, &handles[i]));
	ASSERT_EQ(0, submit_all(&ring));
	lead = (now_ns() - t0) * 10 * 4;
	for (i = 0; i < N / 10; i++) {
		uint32_t st;

		test_ioctl_cancel(self->fd, handles[i], &st);
		ASSERT_EQ(0, wait_cqe(&ring, &cqe));
		ASSERT_EQ(-ECANCELED, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
	}
	if (lead < 300 * NSEC_PER_MSEC)
		lead = 300 * NSEC_PER_MSEC;
	t0 = now_ns() + lead;
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, expiry_prep(&ring, self->fd, t0 + i * NSEC_PER_MSEC,
					 0, i, &handles[i]));
	ASSERT_EQ(0, submit_all(&ring));
	ASSERT_GT(t0, now_ns()) TH_LOG("the submission took over %llu ms",
				       (unsigned long long)lead / NSEC_PER_MSEC);
	/* the first half due: a time to start at, nothing to wait for */
	while (now_ns() < t0 + N / 2 * NSEC_PER_MSEC)
		pause_ns(NSEC_PER_MSEC);
	for (i = 0; i < N; i++) {
		uint32_t st = 0;
		int ret = _test_ioctl_cancel(self->fd, handles[i], &st);

		cancel_said[i] = ret == -ENOENT ? 0 :
				 !ret && st == TWHEEL_CANCEL_PENDING ? 1 :
				 !ret && st == TWHEEL_CANCEL_FIRED ? 2 : -1;
		EXPECT_LE(0, cancel_said[i]) TH_LOG("cancel %d: %d", i, ret);
	}
	while (got < N) {
		ASSERT_EQ(0, wait_cqe(&ring, &cqe)) TH_LOG("%d of %d completed", got, N);
		ASSERT_GT(N, cqe->user_data);
		EXPECT_EQ(0, cqe_said[cqe->user_data]) TH_LOG("two completions");
		cqe_said[cqe->user_data] = cqe->res == -ECANCELED ? 1 :
					   cqe->res == 0 ? 2 : -1;
		EXPECT_LT(0, cqe_said[cqe->user_data]) TH_LOG("res %d", cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		got++;
	}
	for (i = 0; i < N; i++) {
		/* ECANCELED exactly when the CANCEL found it pending */
		EXPECT_EQ(cancel_said[i] == 1, cqe_said[i] == 1)
			TH_LOG("timer %d: cancel %d, completion %d", i,
			       cancel_said[i], cqe_said[i]);
		fired += cqe_said[i] == 2;
	}
	TH_LOG("%d of %d fired before their cancel", fired, N);
	/* both ends: unless a cancel took a millisecond */
	EXPECT_LT(0, fired);
	EXPECT_GT(N, fired);
	EXPECT_EQ(0, io_uring_peek_cqe(&ring, &cqe) == 0);
	EXPECT_EQ(0, fd_timers(self->fd));
	io_uring_queue_exit(&ring);
}

/*
 * Tear a ring down with 10^5 commands pending (far expiries): the exit
 * does not hang, each timer is cancelled, and the file stays usable.
 * Fewer where the per-file limit is lower: the debug and kcsan kernels'
 * plan sets 10^4 (tests/vm/plans/uring.sh).
 */
TEST_F(twheel_ucmd, expiry_ring_teardown)
{
	enum { CHUNK = 1024 };
	uint64_t far = now_ns() + 3600 * NSEC_PER_SEC;
	struct io_uring ring;
	int i, N = 100000;
	uint64_t h;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	if (self->api.out_max_timers_per_fd < N)
		N = self->api.out_max_timers_per_fd;
	/* most of their completions overflow the CQ ring (2 * CHUNK) */
	if (N < 4 * CHUNK)
		SKIP(return, "per-file limit below %d", 4 * CHUNK);
	TH_LOG("%d commands", N);
	ASSERT_EQ(0, io_uring_queue_init(CHUNK, &ring,
					 IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	for (i = 0; i < N; i++) {
		if (expiry_prep(&ring, self->fd, far, 0, i, NULL)) {
			ASSERT_EQ(0, submit_all(&ring));
			ASSERT_EQ(0, expiry_prep(&ring, self->fd, far, 0, i, NULL));
		}
	}
	ASSERT_EQ(0, submit_all(&ring));
	ASSERT_EQ(N, fd_timers(self->fd));
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, wait_timers(self->fd, 0))
		TH_LOG("%ld timers left after the ring's teardown", fd_timers(self->fd));
	test_ioctl_arm(self->fd, 0, 1, 0, 0, 1, &h);
	EXPECT_EQ(1, fd_timers(self->fd));
}

/*
 * The file closed with commands pending: they hold it, so those due
 * still complete at their expiry (res 0), and the ring's teardown then
 * cancels the rest (the plan checks that the module is let go).
 */
TEST_F(twheel_ucmd, expiry_file_closed_first)
{
	enum { N = 200 };
	uint64_t t0 = now_ns(), far = t0 + 3600 * NSEC_PER_SEC, due;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int i, fd2, got = 0;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, io_uring_queue_init(N, &ring,
					 IORING_SETUP_SQE128 | IORING_SETUP_CQE32));
	/* the odd ones in an hour; their submission sets the pace */
	for (i = 1; i < N; i += 2)
		ASSERT_EQ(0, expiry_prep(&ring, fd2, far, 0, i, NULL));
	ASSERT_EQ(0, submit_all(&ring));
	/* the even ones due after four times that, 50 ms at least */
	due = now_ns() + 4 * (now_ns() - t0);
	if (due < now_ns() + 50 * NSEC_PER_MSEC)
		due = now_ns() + 50 * NSEC_PER_MSEC;
	for (i = 0; i < N; i += 2)
		ASSERT_EQ(0, expiry_prep(&ring, fd2, due, 0, i, NULL));
	ASSERT_EQ(0, submit_all(&ring));
	ASSERT_EQ(N, fd_timers(fd2));
	ASSERT_EQ(0, close(fd2));
	ASSERT_GT(due, now_ns()) TH_LOG("closed after the expiry");
	while (got < N / 2) {
		ASSERT_EQ(0, wait_cqe(&ring, &cqe)) TH_LOG("%d of %d fired", got, N / 2);
		EXPECT_EQ(0, cqe->user_data % 2);
		EXPECT_EQ(0, cqe->res);
		io_uring_cqe_seen(&ring, cqe);
		got++;
	}
	EXPECT_LE(due, now_ns());
	io_uring_queue_exit(&ring);
}

/*
 * A process exits with commands pending on a file it shares with its
 * parent: its ring goes with it, the commands are cancelled, and the
 * parent's file is left without the timers.
 */
TEST_F(twheel_ucmd, expiry_task_exit)
{
	uint64_t far = now_ns() + 3600 * NSEC_PER_SEC;
	int status, i;
	pid_t pid;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	if (self->api.out_max_timers_per_fd < 1000)
		SKIP(return, "per-file limit below 1000");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct io_uring ring;

		if (io_uring_queue_init(1024, &ring,
					IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
			_exit(2);
		for (i = 0; i < 1000; i++)
			if (expiry_prep(&ring, self->fd, far, 0, i, NULL))
				_exit(3);
		if (io_uring_submit(&ring) != 1000 || fd_timers(self->fd) != 1000)
			_exit(4);
		_exit(0);	/* the ring is left to the exit */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, wait_timers(self->fd, 0))
		TH_LOG("%ld timers left after the exit", fd_timers(self->fd));
}

/*
 * A process killed while it submits commands (SIGKILL lands inside
 * io_uring_enter() most of the time: that is where it spends it): its
 * ring goes with it, every timer is cancelled, and nothing leaks
 * (kmemleak, on the debug kernels), the completions that overflow the
 * CQ ring included.
 */
TEST_F(twheel_ucmd, expiry_killed_while_submitting)
{
	enum { CHUNK = 1024, ROUNDS = 8 };
	uint64_t far = now_ns() + 3600 * NSEC_PER_SEC;
	int status, i, r;
	pid_t pid;

	if (!has_expiry(&self->api))
		SKIP(return, NO_EXPIRY);
	if (self->api.out_max_timers_per_fd < CHUNK * ROUNDS)
		SKIP(return, "per-file limit below %d", CHUNK * ROUNDS);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct io_uring ring;

		if (io_uring_queue_init(CHUNK, &ring,
					IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
			_exit(2);
		for (r = 0; r < ROUNDS; r++) {
			for (i = 0; i < CHUNK; i++)
				if (expiry_prep(&ring, self->fd, far, 0, i, NULL))
					_exit(3);
			if (io_uring_submit(&ring) != CHUNK)
				_exit(4);
		}
		pause();
		_exit(0);
	}
	/*
	 * Once three rounds are in, the kill meets a later one, and most
	 * ECANCELED completions overflow the CQ ring (2 * CHUNK).
	 */
	while (fd_timers(self->fd) < 3 * CHUNK)
		pause_ns(NSEC_PER_MSEC / 10);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	TH_LOG("%ld timers armed when killed", fd_timers(self->fd));
	ASSERT_EQ(0, wait_timers(self->fd, 0))
		TH_LOG("%ld timers left after the kill", fd_timers(self->fd));
}

TEST_HARNESS_MAIN
