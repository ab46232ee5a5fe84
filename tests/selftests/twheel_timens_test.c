// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces: every absolute time that crosses /dev/twheel's ABI is
 * in the caller's clock, as timerfd's are.  Each test unshares a time
 * namespace (CLONE_NEWTIME), sets its monotonic offset in
 * /proc/self/timens_offsets and runs its checks in a child, the first task
 * inside.  A positive offset puts the namespace's clock ahead of the
 * host's, a negative one behind (as far as the kernel allows: the
 * namespace's clock may not read below zero).  Before twheel converted,
 * an absolute arm fired 1000 s late in the first and at once (early by
 * the namespace's clock) in the second, and the times read back were the
 * host's.
 *
 * The child checks with CHECK(), which exits with status 1 after saying
 * what failed: the harness's ASSERTs end a forked child by means that
 * differ between versions of kselftest_harness.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define TIMENS_AHEAD_S	1000
/* a deadline of the tests; a timer that fires this late is not converted */
#define BOUND_NS	(2 * NSEC_PER_SEC)
#define DELAY_NS	(100 * NSEC_PER_MSEC)

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "# %s:%d: %s: " fmt "\n",	\
				__FILE__, __LINE__, #cond, ##__VA_ARGS__); \
			_exit(1);					\
		}							\
	} while (0)

/* Read one event within BOUND_NS of @from. */
static void read_one(int fd, struct twheel_event *ev, uint64_t from)
{
	int n = read_by(fd, ev, 1, from + BOUND_NS);

	CHECK(n == 1, "read_by: %d (no event within %llu ns)", n,
	      (unsigned long long)BOUND_NS);
}

static int open_dev(void)
{
	int fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);

	CHECK(fd >= 0, "open: %s", strerror(errno));
	return fd;
}

/*
 * The event of a timer due at @deadline of the namespace's clock, read at
 * @t1 of that clock: not fired before @deadline, expires and fired in the
 * namespace's clock.
 */
static void check_event(const struct twheel_event *ev, uint64_t deadline,
			uint64_t t1)
{
	CHECK(t1 >= deadline, "read at %llu, before the deadline %llu",
	      (unsigned long long)t1, (unsigned long long)deadline);
	CHECK(t1 < deadline + BOUND_NS, "read at %llu, deadline %llu",
	      (unsigned long long)t1, (unsigned long long)deadline);
	CHECK(ev->expires >= deadline && ev->expires <= t1,
	      "expires %llu, deadline %llu, read at %llu",
	      (unsigned long long)ev->expires, (unsigned long long)deadline,
	      (unsigned long long)t1);
	CHECK(ev->fired >= ev->expires && ev->fired <= t1,
	      "fired %llu, expires %llu, read at %llu",
	      (unsigned long long)ev->fired, (unsigned long long)ev->expires,
	      (unsigned long long)t1);
}

/* TWHEEL_IOC_ARM with TWHEEL_ARM_ABS at the namespace's now + 100 ms */
static void child_arm_abs(void)
{
	struct twheel_event ev;
	uint64_t t0, deadline, h;
	int fd = open_dev(), ret;

	t0 = now_ns();
	deadline = t0 + DELAY_NS;
	ret = _test_ioctl_arm(fd, TWHEEL_ARM_ABS, deadline, 0, 0, 1, &h);
	CHECK(!ret, "arm: %d", ret);
	read_one(fd, &ev, t0);
	check_event(&ev, deadline, now_ns());
	CHECK(ev.expires == deadline, "expires %llu, armed for %llu",
	      (unsigned long long)ev.expires, (unsigned long long)deadline);
	CHECK(ev.handle == h && ev.cookie == 1, "handle or cookie");
}

/* a relative arm: fires 100 ms later, whatever the offset */
static void child_arm_rel(void)
{
	struct twheel_event ev;
	uint64_t t0;
	int fd = open_dev(), ret;

	t0 = now_ns();
	ret = _test_ioctl_arm(fd, 0, DELAY_NS, 0, 0, 2, NULL);
	CHECK(!ret, "arm: %d", ret);
	read_one(fd, &ev, t0);
	check_event(&ev, t0 + DELAY_NS, now_ns());
}

/* TWHEEL_IOC_MODIFY with TWHEEL_ARM_ABS, of a timer armed an hour out */
static void child_modify_abs(void)
{
	struct twheel_event ev;
	uint64_t t0, deadline, h;
	int fd = open_dev(), ret;

	ret = _test_ioctl_arm(fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 3, &h);
	CHECK(!ret, "arm: %d", ret);
	t0 = now_ns();
	deadline = t0 + DELAY_NS;
	ret = _test_ioctl_modify(fd, h, TWHEEL_ARM_ABS, deadline, 0, 0, 3);
	CHECK(!ret, "modify: %d", ret);
	read_one(fd, &ev, t0);
	check_event(&ev, deadline, now_ns());
	CHECK(ev.expires == deadline, "expires %llu, modified to %llu",
	      (unsigned long long)ev.expires, (unsigned long long)deadline);
}

/* TWHEEL_IOC_BATCH: an absolute ARM and an absolute MODIFY */
static void child_batch_abs(void)
{
	struct twheel_event ev[2];
	struct twheel_batch_op ops[2];
	uint64_t t0, deadline, h;
	int fd = open_dev(), ret, n = 0;

	ret = _test_ioctl_arm(fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 4, &h);
	CHECK(!ret, "arm: %d", ret);
	t0 = now_ns();
	deadline = t0 + DELAY_NS;
	op_arm(&ops[0], TWHEEL_ARM_ABS, deadline, 0, 5);
	op_modify(&ops[1], h, deadline, 4);
	ops[1].spec.flags = TWHEEL_ARM_ABS;
	ret = _test_ioctl_batch_all(fd, ops, 2, NULL);
	CHECK(!ret, "batch: %d", ret);
	while (n < 2) {
		int r = read_by(fd, ev + n, 2 - n, t0 + BOUND_NS);

		CHECK(r > 0, "read_by: %d after %d events", r, n);
		n += r;
	}
	t0 = now_ns();
	check_event(&ev[0], deadline, t0);
	check_event(&ev[1], deadline, t0);
	CHECK(ev[0].expires == deadline && ev[1].expires == deadline,
	      "expires %llu and %llu, armed for %llu",
	      (unsigned long long)ev[0].expires,
	      (unsigned long long)ev[1].expires,
	      (unsigned long long)deadline);
}

/* a periodic timer's events: their expiries are its periods */
static void child_periodic_abs(void)
{
	struct twheel_event ev;
	uint64_t t0, first, h;
	int fd = open_dev(), ret, i;

	t0 = now_ns();
	first = t0 + DELAY_NS;
	ret = _test_ioctl_arm(fd, TWHEEL_ARM_ABS, first, DELAY_NS, 0, 6, &h);
	CHECK(!ret, "arm: %d", ret);
	for (i = 0; i < 2; i++) {
		uint64_t due = first + i * DELAY_NS;

		read_one(fd, &ev, due - DELAY_NS);
		/* a late read merges periods: the first it stands for */
		check_event(&ev, due, now_ns());
		CHECK(ev.expires == due, "event %d: expires %llu, due %llu", i,
		      (unsigned long long)ev.expires, (unsigned long long)due);
		CHECK(ev.flags & TWHEEL_EVENT_PERIODIC, "flags %#x", ev.flags);
		if (ev.overrun)
			break;
	}
	ret = _test_ioctl_cancel(fd, h, NULL);
	CHECK(!ret, "cancel: %d", ret);
}

/* QUERY: out_expires in the namespace's clock, absolute or relative arm */
static void child_query(void)
{
	struct twheel_query q;
	uint64_t t0, t1, abs_at, ha, hr;
	int fd = open_dev(), ret;

	t0 = now_ns();
	abs_at = t0 + 3600 * NSEC_PER_SEC;
	ret = _test_ioctl_arm(fd, TWHEEL_ARM_ABS, abs_at, 0, 0, 7, &ha);
	CHECK(!ret, "arm: %d", ret);
	ret = _test_ioctl_arm(fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 8, &hr);
	CHECK(!ret, "arm: %d", ret);
	t1 = now_ns();

	ret = _test_ioctl_query(fd, ha, &q);
	CHECK(!ret, "query: %d", ret);
	CHECK(q.out_state == TWHEEL_QUERY_PENDING, "state %#x", q.out_state);
	CHECK(q.out_expires == abs_at, "out_expires %llu, armed for %llu",
	      (unsigned long long)q.out_expires, (unsigned long long)abs_at);
	CHECK(q.out_remaining <= abs_at - t0 &&
	      q.out_remaining > abs_at - t0 - BOUND_NS,
	      "out_remaining %llu", (unsigned long long)q.out_remaining);

	ret = _test_ioctl_query(fd, hr, &q);
	CHECK(!ret, "query: %d", ret);
	CHECK(q.out_expires >= t0 + 3600 * NSEC_PER_SEC &&
	      q.out_expires <= t1 + 3600 * NSEC_PER_SEC,
	      "out_expires %llu, armed between %llu and %llu + 3600 s",
	      (unsigned long long)q.out_expires, (unsigned long long)t0,
	      (unsigned long long)t1);
}

/*
 * A CLOCK_BOOTTIME file (TWHEEL_IOC_SETUP) takes and gives its times with
 * the namespace's boottime offset, which differs from the monotonic one.
 */
static void child_boottime(void)
{
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t t0, t1, deadline, h;
	int fd = open_dev(), ret;
	struct twheel_api api;

	ret = _test_ioctl_api(fd, &api);
	CHECK(!ret, "api: %d", ret);
	if (!(api.out_features & TWHEEL_FEATURE_SETUP)) {
		fprintf(stderr, "# no TWHEEL_FEATURE_SETUP: not checked\n");
		return;
	}
	ret = _test_ioctl_setup(fd, CLOCK_BOOTTIME, 0);
	CHECK(!ret, "setup: %d", ret);
	t0 = clock_ns(CLOCK_BOOTTIME);
	deadline = t0 + DELAY_NS;
	ret = _test_ioctl_arm(fd, TWHEEL_ARM_ABS, deadline, 0, 0, 9, &h);
	CHECK(!ret, "arm: %d", ret);
	ret = _test_ioctl_query(fd, h, &q);
	CHECK(!ret, "query: %d", ret);
	CHECK(q.out_expires == deadline, "out_expires %llu, armed for %llu",
	      (unsigned long long)q.out_expires, (unsigned long long)deadline);
	read_one(fd, &ev, now_ns() - DELAY_NS);
	t1 = clock_ns(CLOCK_BOOTTIME);
	check_event(&ev, deadline, t1);
	CHECK(ev.expires == deadline, "expires %llu, armed for %llu",
	      (unsigned long long)ev.expires, (unsigned long long)deadline);

	t0 = clock_ns(CLOCK_BOOTTIME);
	ret = _test_ioctl_arm(fd, 0, DELAY_NS, 0, 0, 10, NULL);
	CHECK(!ret, "arm: %d", ret);
	read_one(fd, &ev, now_ns());
	check_event(&ev, t0 + DELAY_NS, clock_ns(CLOCK_BOOTTIME));
}

/* The host's @clock in whole seconds. */
static long host_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec;
}

FIXTURE(timens) {
	long offset_s;
	long boot_offset_s;
	/* why the tests skip, set by the setup */
	const char *skip;
};

FIXTURE_VARIANT(timens) {
	/* the namespace's clock ahead of the host's, or behind it */
	bool ahead;
};

FIXTURE_VARIANT_ADD(timens, ahead) {
	.ahead = true,
};

FIXTURE_VARIANT_ADD(timens, behind) {
	.ahead = false,
};

/*
 * Unshare a time namespace for the children and give it its offset.  The
 * test process stays in the host's namespace.
 */
FIXTURE_SETUP(timens)
{
	char buf[96];
	int fd, len;

	if (unshare(CLONE_NEWTIME)) {
		if (errno == EINVAL)
			self->skip = "the kernel has no time namespaces";
		else if (errno == EPERM)
			self->skip = "unshare(CLONE_NEWTIME) needs CAP_SYS_ADMIN";
		ASSERT_NE(NULL, self->skip) TH_LOG("unshare: %s", strerror(errno));
		return;
	}
	if (variant->ahead) {
		self->offset_s = TIMENS_AHEAD_S;
		self->boot_offset_s = 2 * TIMENS_AHEAD_S;
	} else {
		/*
		 * As far behind as the kernel lets it go, nearly: the
		 * namespace's clock may not be negative.  Boottime half as
		 * far, to tell the offsets apart.
		 */
		self->offset_s = -(host_seconds(CLOCK_MONOTONIC) - 1);
		self->boot_offset_s = -(host_seconds(CLOCK_BOOTTIME) / 2);
		if (self->offset_s > -4) {
			self->skip = "the host's clock is too young for a negative offset";
			return;
		}
	}
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open timens_offsets: %s", strerror(errno));
	len = snprintf(buf, sizeof(buf), "monotonic %ld 0\nboottime %ld 0\n",
		       self->offset_s, self->boot_offset_s);
	ASSERT_EQ(len, write(fd, buf, len))
		TH_LOG("write '%s': %s", buf, strerror(errno));
	close(fd);
}

FIXTURE_TEARDOWN(timens)
{
}

/*
 * Run @fn in a child, the first task in the namespace; it must exit 0.
 * @skip: why not to, from the setup.
 */
static void in_timens(struct __test_metadata *_metadata, const char *skip,
		      void (*fn)(void))
{
	int status;
	pid_t pid;

	if (skip)
		SKIP(return, "%s", skip);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		fn();
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_F(timens, arm_abs)
{
	in_timens(_metadata, self->skip, child_arm_abs);
}

TEST_F(timens, arm_rel)
{
	in_timens(_metadata, self->skip, child_arm_rel);
}

TEST_F(timens, modify_abs)
{
	in_timens(_metadata, self->skip, child_modify_abs);
}

TEST_F(timens, batch_abs)
{
	in_timens(_metadata, self->skip, child_batch_abs);
}

TEST_F(timens, periodic_abs)
{
	in_timens(_metadata, self->skip, child_periodic_abs);
}

TEST_F(timens, query)
{
	in_timens(_metadata, self->skip, child_query);
}

TEST_F(timens, boottime)
{
	in_timens(_metadata, self->skip, child_boottime);
}

/*
 * The offset is in effect in the child: its clock differs from the
 * parent's by it.  Without this the tests above would prove nothing.
 */
TEST_F(timens, offset_in_effect)
{
	int pipefd[2], status;
	uint64_t child_ns, before, after;
	int64_t off = self->offset_s * (int64_t)NSEC_PER_SEC;
	pid_t pid;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	ASSERT_EQ(0, pipe(pipefd));
	before = now_ns();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		uint64_t t = now_ns();

		_exit(write(pipefd[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	after = now_ns();
	ASSERT_EQ(0, status);
	ASSERT_EQ(sizeof(child_ns), read(pipefd[0], &child_ns, sizeof(child_ns)));
	EXPECT_LE(before + off, child_ns);
	EXPECT_GE(after + off, child_ns);
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST_HARNESS_MAIN
