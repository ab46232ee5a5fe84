// SPDX-License-Identifier: GPL-2.0
/*
 * Periodic timers as multishot io_uring commands (liburing, static).
 *
 * A periodic ARM with TWHEEL_ARM_URING_EXPIRY, submitted with
 * IORING_URING_CMD_MULTISHOT and a provided-buffer group
 * (IOSQE_BUFFER_SELECT, sqe->buf_group), posts a CQE per expiry record
 * with IORING_CQE_F_MORE: the selected buffer holds a struct
 * twheel_event, as read() returns it, with the expirations merged into
 * it in @overrun.  The command ends once: -ECANCELED on a CANCEL or the
 * ring's teardown, -ENOBUFS when the group has no buffer (its timer is
 * then gone).  Kernels without multishot uring_cmd (6.1, 6.12) do not
 * report TWHEEL_FEATURE_URING_MSHOT and refuse the SQE with EOPNOTSUPP:
 * the other cases skip there.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <liburing.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"
#include "twheel_uring_utils.h"

/* 6.18's flag; liburing 2.3 (Debian 12) does not name it. */
#ifndef IORING_URING_CMD_MULTISHOT
#define IORING_URING_CMD_MULTISHOT	2U	/* bit 1 */
#endif

#define BGID		7
#define NBUF		64
#define EV_SIZE		((int)sizeof(struct twheel_event))

#define NO_MSHOT "no multishot io_uring commands in this kernel (6.18+)"

/* user_data of the buffers' SQEs: their completions are skipped */
#define UD_PROVIDE	(~0ULL)

/*
 * Give @nr buffers of @len bytes at @base, ids from @bid, to group BGID;
 * submitted, its completion left for the loops to skip.
 */
static int provide_nowait(struct io_uring *ring, void *base, int len, int nr,
			  int bid)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int ret;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 128);
	io_uring_prep_provide_buffers(sqe, base, len, nr, BGID, bid);
	sqe->user_data = UD_PROVIDE;
	ret = io_uring_submit(ring);
	return ret < 0 ? ret : 0;
}

/* ...and wait for it, on a ring with nothing else to complete. */
static int provide(struct io_uring *ring, void *base, int len, int nr, int bid)
{
	struct io_uring_cqe *cqe;
	int ret;

	ret = provide_nowait(ring, base, len, nr, bid);
	if (ret)
		return ret;
	ret = wait_cqe(ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res < 0 ? cqe->res : 0;
	io_uring_cqe_seen(ring, cqe);
	return ret;
}

/*
 * A 256-entry SQE128 and CQE32 ring with NBUF event buffers of @bufs
 * provided as group 0: 0, or the step that failed (2: the ring, 3: the
 * buffers), which a child passes to _exit().
 */
static int mshot_ring(struct io_uring *ring, void *bufs)
{
	if (io_uring_queue_init(256, ring,
				IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		return 2;
	if (provide(ring, bufs, EV_SIZE, NBUF, 0))
		return 3;
	return 0;
}

/*
 * Queue a multishot ARM: absolute @expires, @period, cookie and
 * user_data @ud, the handle written to *@handle; @mshot false leaves out
 * the flag and the buffer group (a plain expiry ARM).
 */
static int mshot_prep_flags(struct io_uring *ring, int fd, uint64_t expires,
			    uint64_t period, uint64_t ud, uint64_t *handle,
			    bool mshot, uint32_t flags)
{
	struct io_uring_sqe *sqe = uring_arm_prep(ring, fd, flags, expires,
						  period, ud, handle);

	if (!sqe)
		return -EBUSY;
	if (mshot) {
		sqe->flags = IOSQE_BUFFER_SELECT;
		sqe->buf_group = BGID;
		sqe->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	}
	return 0;
}

static int mshot_prep(struct io_uring *ring, int fd, uint64_t expires,
		      uint64_t period, uint64_t ud, uint64_t *handle, bool mshot)
{
	return mshot_prep_flags(ring, fd, expires, period, ud, handle, mshot,
				TWHEEL_ARM_URING_EXPIRY);
}

FIXTURE(mshot) {
	int fd;
	struct io_uring ring;
	struct twheel_api api;
	struct twheel_event *bufs;
};

FIXTURE_SETUP(mshot)
{
	int ret;

	self->bufs = NULL;
	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
	test_ioctl_api(self->fd, &self->api);
	ret = io_uring_queue_init(256, &self->ring,
				  IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
	self->bufs = calloc(NBUF, sizeof(*self->bufs));
	ASSERT_NE(NULL, self->bufs);
}

FIXTURE_TEARDOWN(mshot)
{
	io_uring_queue_exit(&self->ring);
	close(self->fd);
	free(self->bufs);
}

static bool has_mshot(const struct twheel_api *api)
{
	return api->out_features & TWHEEL_FEATURE_URING_MSHOT;
}

/*
 * Without multishot uring_cmd the SQE is refused (io_uring itself: no
 * buffer select for IORING_OP_URING_CMD), nothing is armed, no handle
 * written: never a command left pending.
 */
TEST_F(mshot, refused_without_support)
{
	struct io_uring_cqe *cqe;
	uint64_t h = POISON;

	if (has_mshot(&self->api))
		SKIP(return, "this kernel has multishot io_uring commands");
	ASSERT_EQ(0, provide(&self->ring, self->bufs, EV_SIZE, NBUF, 0));
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, now_ns(),
				NSEC_PER_MSEC, 5, &h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EOPNOTSUPP, cqe->res);
	EXPECT_EQ(0, cqe->flags & IORING_CQE_F_MORE);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(POISON, h);
	EXPECT_EQ(0, fd_timers(self->fd));
	/* and a periodic expiry ARM without the flag stays EINVAL */
	if (self->api.out_features & TWHEEL_FEATURE_URING_EXPIRY) {
		ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, now_ns(),
					NSEC_PER_MSEC, 6, &h, false));
		ASSERT_EQ(0, submit_all(&self->ring));
		ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
		EXPECT_EQ(-EINVAL, cqe->res);
		io_uring_cqe_seen(&self->ring, cqe);
	}
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * Take the next record of the command @ud: 1 with *@ev filled (F_MORE)
 * and its buffer given back, or 0 with *@res the final completion's res.
 */
static bool give_back = true;

static int next_record(struct __test_metadata *_metadata,
		       struct io_uring *ring, struct twheel_event *bufs,
		       uint64_t ud, struct twheel_event *ev, int *res)
{
	struct io_uring_cqe *cqe;
	int bid = NBUF, more, ret = 0;

	for (;;) {
		if (wait_cqe(ring, &cqe))
			return -ETIME;
		if (cqe->user_data != UD_PROVIDE)
			break;
		EXPECT_LE(0, cqe->res);
		io_uring_cqe_seen(ring, cqe);
	}
	EXPECT_EQ(ud, cqe->user_data);
	more = !!(cqe->flags & IORING_CQE_F_MORE);
	*res = cqe->res;
	if (more) {
		EXPECT_EQ(EV_SIZE, cqe->res);
		EXPECT_TRUE(cqe->flags & IORING_CQE_F_BUFFER);
		bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
		EXPECT_GT(NBUF, bid);
		if (bid < NBUF)
			*ev = bufs[bid];
	}
	io_uring_cqe_seen(ring, cqe);
	if (bid < NBUF && give_back)
		ret = provide_nowait(ring, &bufs[bid], EV_SIZE, 1, bid);
	EXPECT_EQ(0, ret);
	return more;
}

/*
 * Record after record: the expiries of the timer in order, each
 * recorded once (the next record's expiry is this one's plus
 * 1 + overrun periods), never early (fired and the time the CQE is seen
 * are past the expiry).  Returns the expirations the records cover.
 */
static uint64_t check_record(struct __test_metadata *_metadata,
			     const struct twheel_event *ev, uint64_t h,
			     uint64_t cookie, uint64_t next_exp,
			     uint64_t period)
{
	EXPECT_EQ(h, ev->handle);
	EXPECT_EQ(cookie, ev->cookie);
	EXPECT_EQ(TWHEEL_EVENT_PERIODIC, ev->flags);
	EXPECT_EQ(next_exp, ev->expires)
		TH_LOG("record expires %llu, the next expiry is %llu",
		       (unsigned long long)ev->expires,
		       (unsigned long long)next_exp);
	EXPECT_LE(ev->expires, ev->fired);
	EXPECT_LE(ev->expires, now_ns());
	return 1 + ev->overrun;
}

/*
 * 30 expiries, 10 ms apart, as records with F_MORE; a CANCEL then ends
 * the command with -ECANCELED, once, and frees the timer.
 */
TEST_F(mshot, periodic_records_then_cancel)
{
	enum { N = 30 };
	uint64_t period = 10 * NSEC_PER_MSEC, t0 = now_ns() + 50 * NSEC_PER_MSEC;
	uint64_t h = 0, got = 0, recs = 0;
	struct io_uring_cqe *cqe;
	struct twheel_event ev;
	uint32_t status;
	int res, more;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	ASSERT_EQ(0, provide(&self->ring, self->bufs, EV_SIZE, NBUF, 0));
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, t0, period, 42, &h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));
	ASSERT_NE(0, h);
	EXPECT_EQ(1, fd_timers(self->fd));
	while (got < N) {
		more = next_record(_metadata, &self->ring, self->bufs, 42, &ev, &res);
		ASSERT_EQ(1, more) TH_LOG("ended with %d after %llu expiries",
					  res, (unsigned long long)got);
		got += check_record(_metadata, &ev, h, 42, t0 + got * period, period);
		recs++;
	}
	TH_LOG("%llu expiries in %llu records", (unsigned long long)got,
	       (unsigned long long)recs);
	test_ioctl_cancel(self->fd, h, &status);
	EXPECT_EQ(TWHEEL_CANCEL_PENDING, status);
	/* records posted before the cancel, then the end, once */
	for (;;) {
		more = next_record(_metadata, &self->ring, self->bufs, 42, &ev, &res);
		ASSERT_LE(0, more) TH_LOG("no final completion");
		if (!more)
			break;
	}
	EXPECT_EQ(-ECANCELED, res);
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));
	EXPECT_EQ(0, fd_timers(self->fd));
	test_err_cancel(ENOENT, self->fd, h, NULL);
}

/*
 * The task does not take its completions for a while (DEFER_TASKRUN:
 * its task work waits for it): the expiries meanwhile merge into one
 * record as its overrun, and the records still cover each expiry once.
 */
TEST_F(mshot, overruns_merge)
{
	uint64_t period = 2 * NSEC_PER_MSEC, t0 = now_ns() + 20 * NSEC_PER_MSEC;
	uint64_t h = 0, got = 0, recs = 0, maxover = 0;
	struct io_uring ring;
	struct twheel_event ev;
	uint32_t status;
	int res, more, ret;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	ret = io_uring_queue_init(64, &ring, IORING_SETUP_SQE128 |
				  IORING_SETUP_CQE32 |
				  IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_DEFER_TASKRUN);
	if (ret)
		SKIP(return, "no DEFER_TASKRUN: %s", strerror(-ret));
	ASSERT_EQ(0, provide(&ring, self->bufs, EV_SIZE, NBUF, 0));
	ASSERT_EQ(0, mshot_prep(&ring, self->fd, t0, period, 9, &h, true));
	ASSERT_EQ(0, submit_all(&ring));
	/* not a synchronisation: the expiries this leaves unread are the test */
	pause_ns(t0 - now_ns() + 50 * period);
	while (got < 60) {
		more = next_record(_metadata, &ring, self->bufs, 9, &ev, &res);
		ASSERT_EQ(1, more) TH_LOG("ended with %d", res);
		got += check_record(_metadata, &ev, h, 9, t0 + got * period, period);
		if (ev.overrun > maxover)
			maxover = ev.overrun;
		recs++;
	}
	TH_LOG("%llu expiries in %llu records, largest overrun %llu",
	       (unsigned long long)got, (unsigned long long)recs,
	       (unsigned long long)maxover);
	EXPECT_LT(recs, got);
	EXPECT_LE(40, maxover);
	test_ioctl_cancel(self->fd, h, &status);
	do
		more = next_record(_metadata, &ring, self->bufs, 9, &ev, &res);
	while (more == 1);
	ASSERT_EQ(0, more);
	EXPECT_EQ(-ECANCELED, res);
	io_uring_queue_exit(&ring);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * Buffers run out: the records fill the 3 given, then the command ends
 * with -ENOBUFS and its timer is gone.  An empty group ends it at the
 * first expiry.
 */
TEST_F(mshot, no_buffers_ends)
{
	uint64_t period = 5 * NSEC_PER_MSEC, t0 = now_ns() + 20 * NSEC_PER_MSEC;
	uint64_t h = 0, got = 0;
	struct io_uring_cqe *cqe;
	struct twheel_event ev;
	int res, more, recs = 0;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	give_back = false;
	ASSERT_EQ(0, provide(&self->ring, self->bufs, EV_SIZE, 3, 0));
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, t0, period, 1, &h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	while ((more = next_record(_metadata, &self->ring, self->bufs, 1,
				   &ev, &res)) == 1) {
		got += check_record(_metadata, &ev, h, 1, t0 + got * period, period);
		recs++;
	}
	ASSERT_EQ(0, more);
	EXPECT_EQ(3, recs);
	EXPECT_EQ(-ENOBUFS, res);
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&self->ring, &cqe));
	EXPECT_EQ(0, fd_timers(self->fd));
	test_err_cancel(ENOENT, self->fd, h, NULL);

	/* the group is empty now */
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, now_ns(), period, 2,
				&h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, next_record(_metadata, &self->ring, self->bufs, 2, &ev, &res));
	EXPECT_EQ(-ENOBUFS, res);
	EXPECT_EQ(0, fd_timers(self->fd));

	/* a buffer too small for a record: EMSGSIZE, the buffer kept */
	ASSERT_EQ(0, provide(&self->ring, self->bufs, EV_SIZE - 8, 1, 0));
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, now_ns(), period, 3,
				&h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, next_record(_metadata, &self->ring, self->bufs, 3, &ev, &res));
	EXPECT_EQ(-EMSGSIZE, res);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/* The flag is for a periodic expiry ARM only. */
TEST_F(mshot, rules)
{
	uint64_t t = now_ns() + 100 * NSEC_PER_SEC, h = POISON;
	struct twheel_cancel c = { .size = sizeof(c), .handle = 1 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	ASSERT_EQ(0, provide(&self->ring, self->bufs, EV_SIZE, NBUF, 0));
	/* one-shot */
	ASSERT_EQ(0, mshot_prep(&self->ring, self->fd, t, 0, 1, &h, true));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	EXPECT_EQ(0, cqe->flags & IORING_CQE_F_MORE);
	io_uring_cqe_seen(&self->ring, cqe);
	/* an ARM without TWHEEL_ARM_URING_EXPIRY */
	ASSERT_EQ(0, mshot_prep_flags(&self->ring, self->fd, t, NSEC_PER_SEC, 2,
				      &h, true, 0));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	/* a CANCEL */
	sqe = io_uring_get_sqe(&self->ring);
	ASSERT_NE(NULL, sqe);
	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = self->fd;
	sqe->cmd_op = TWHEEL_IOC_CANCEL;
	sqe->flags = IOSQE_BUFFER_SELECT;
	sqe->buf_group = BGID;
	sqe->uring_cmd_flags = IORING_URING_CMD_MULTISHOT;
	memcpy(cmd_area(sqe), &c, sizeof(c));
	ASSERT_EQ(0, submit_all(&self->ring));
	ASSERT_EQ(0, wait_cqe(&self->ring, &cqe));
	EXPECT_EQ(-EINVAL, cqe->res);
	io_uring_cqe_seen(&self->ring, cqe);
	EXPECT_EQ(POISON, h);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/*
 * Teardown with armed multishot commands, firing (1 ms periods) and
 * not yet due: the ring's exit, a child's exit, and a close of the file
 * before the ring's exit; nothing hangs, every timer goes.
 */
TEST_F(mshot, teardown_with_armed)
{
	enum { N = 200 };
	static uint64_t handles[N];
	struct io_uring ring;
	int i, status, fd2;
	pid_t pid;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	ASSERT_EQ(0, mshot_ring(&ring, self->bufs));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, mshot_prep(&ring, self->fd,
					now_ns() + (i % 2 ? 100 * NSEC_PER_SEC : 0),
					NSEC_PER_MSEC, i, &handles[i], true));
	ASSERT_EQ(0, submit_all(&ring));
	/* the firing ones may have run out of buffers already */
	EXPECT_LE(N / 2, fd_timers(self->fd));
	io_uring_queue_exit(&ring);
	ASSERT_EQ(0, wait_timers(self->fd, 0));

	/* a child's ring, on the parent's file */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int ret = mshot_ring(&ring, self->bufs);

		if (ret)
			_exit(ret);
		for (i = 0; i < N; i++)
			if (mshot_prep(&ring, self->fd,
				       now_ns() + (i % 2 ? 100 * NSEC_PER_SEC : 0),
				       NSEC_PER_MSEC, i, NULL, true))
				_exit(4);
		if (submit_all(&ring))
			_exit(5);
		if (fd_timers(self->fd) < N / 2)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, wait_timers(self->fd, 0));

	/* the file closed first: the commands hold it until the ring goes */
	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, mshot_ring(&ring, self->bufs));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, mshot_prep(&ring, fd2,
					now_ns() + (i % 2 ? 100 * NSEC_PER_SEC : 0),
					NSEC_PER_MSEC, i, NULL, true));
	ASSERT_EQ(0, submit_all(&ring));
	EXPECT_LE(N / 2, fd_timers(fd2));
	close(fd2);
	io_uring_queue_exit(&ring);
}

/*
 * Children that exit while their commands fire: the last task work of a
 * task runs after it left its namespaces (do_exit()), and a record
 * posted then must not look for the task's time namespace (it did, and
 * oopsed on the NULL nsproxy).  20 children, 100 commands each due at
 * once with 1 ms periods, each child spinning 2 ms in user space so
 * that expiries keep queueing task work up to its exit.
 */
TEST_F(mshot, exit_while_firing)
{
	enum { N = 100, CHILDREN = 20 };
	struct io_uring ring;
	int c, i, status;
	uint64_t end;
	pid_t pid;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	for (c = 0; c < CHILDREN; c++) {
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			int ret = mshot_ring(&ring, self->bufs);

			if (ret)
				_exit(ret);
			for (i = 0; i < N; i++)
				if (mshot_prep(&ring, self->fd, now_ns(),
					       NSEC_PER_MSEC, i, NULL, true))
					_exit(4);
			if (submit_all(&ring))
				_exit(5);
			end = now_ns() + 2 * NSEC_PER_MSEC;
			while (now_ns() < end)
				;
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
			TH_LOG("child %d: status %#x", c, status);
	}
	ASSERT_EQ(0, wait_timers(self->fd, 0));
}

/*
 * CANCELs racing expiries: 100 commands with 1 ms periods, cancelled
 * one by one while they fire, their buffers given back as the records
 * are reaped.  Each ends exactly once and nothing of it comes after its
 * end: with -ECANCELED when its CANCEL found it, else (the group ran
 * dry first, and the CANCEL found no timer) with -ENOBUFS.
 */
TEST_F(mshot, cancel_races_expiries)
{
	enum { N = 100 };
	static uint64_t handles[N];
	static int8_t ended[N], cancelled[N];
	static int res[N];
	struct twheel_cancel c = { .size = sizeof(c) };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int i, done = 0, bid, ret, nc = 0;
	uint64_t ud = 0;

	if (!has_mshot(&self->api))
		SKIP(return, NO_MSHOT);
	ASSERT_EQ(0, mshot_ring(&ring, self->bufs));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, mshot_prep(&ring, self->fd, now_ns(), NSEC_PER_MSEC,
					i, &handles[i], true));
	ASSERT_EQ(0, submit_all(&ring));
	for (i = 0; i <= N; i++) {
		if (i < N) {
			c.handle = handles[i];
			ret = ioctl(self->fd, TWHEEL_IOC_CANCEL, &c);
			/* or it ran out of buffers first: ENOBUFS below */
			EXPECT_EQ(ret ? ENOENT : 0, ret ? errno : 0);
			EXPECT_EQ(ret ? 0 : TWHEEL_CANCEL_PENDING,
				  ret ? 0 : c.out_status);
			cancelled[i] = !ret;
		}
		/* reap, giving buffers back; at the end, all that must come */
		while (i < N ? !io_uring_peek_cqe(&ring, &cqe) :
		       done < N && !wait_cqe(&ring, &cqe)) {
			ud = cqe->user_data;
			if (ud == UD_PROVIDE) {
				EXPECT_LE(0, cqe->res);
				io_uring_cqe_seen(&ring, cqe);
				continue;
			}
			ASSERT_GT(N, ud);
			EXPECT_EQ(0, ended[ud]) TH_LOG("CQE after the end of %d", (int)ud);
			if (cqe->flags & IORING_CQE_F_MORE) {
				bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
				io_uring_cqe_seen(&ring, cqe);
				ASSERT_EQ(0, provide_nowait(&ring, &self->bufs[bid],
							    EV_SIZE, 1, bid));
				continue;
			}
			ended[ud] = 1;
			res[ud] = cqe->res;
			done++;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	ASSERT_EQ(N, done);
	for (i = 0; i < N; i++) {
		EXPECT_EQ(cancelled[i] ? -ECANCELED : -ENOBUFS, res[i])
			TH_LOG("command %d", i);
		nc += cancelled[i];
	}
	TH_LOG("%d of %d cancelled, the rest ran out of buffers", nc, N);
	EXPECT_EQ(-EAGAIN, io_uring_peek_cqe(&ring, &cqe));
	EXPECT_EQ(0, fd_timers(self->fd));
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
