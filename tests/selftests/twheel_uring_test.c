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
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <liburing.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

/* 6.7's opcode; liburing 2.3 (Debian 12) does not name it. */
#define TW_IORING_OP_READ_MULTISHOT	49

/* How long a test waits for a completion that must come. */
#define CQE_WAIT_NS	(5 * NSEC_PER_SEC)

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

/* The next completion, within CQE_WAIT_NS: 0 or -errno (-ETIME). */
static int wait_cqe(struct io_uring *ring, struct io_uring_cqe **cqe)
{
	struct __kernel_timespec ts = {
		.tv_sec = CQE_WAIT_NS / NSEC_PER_SEC,
	};

	return io_uring_wait_cqe_timeout(ring, cqe, &ts);
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
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	ASSERT_EQ(0, ret);
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

#define MS_BUFS		8	/* provided buffers */
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

TEST_HARNESS_MAIN
