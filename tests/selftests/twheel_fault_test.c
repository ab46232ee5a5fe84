// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of /dev/twheel when the kernel runs out of memory.
 *
 * failslab and /proc/thread-self/fail-nth (see the kernel's
 * Documentation/fault-injection/fault-injection.rst) make the n-th slab
 * allocation of the next system call fail.  Each test makes one operation
 * -- open, ARM, BATCH, read -- with n = 1, 2, 3... until the operation runs
 * without reaching the n-th allocation, so that every allocation it makes
 * fails once.  After each attempt it checks what the UAPI promises: the
 * call fails with ENOMEM and leaves the file unchanged, or succeeds
 * completely (an allocation that has a fallback); a batch stops at the
 * record that failed, reports the records processed and leaves the later
 * records untouched.  Then the file must still work (a timer is armed,
 * fires and is read) and its fdinfo counts must match.  Leaks are found by
 * kmemleak at the end of the debug VM; a per-user charge that was not given
 * back is found by filling the per-user limit exactly, where it is small
 * enough (the selftest plan reruns this program with small limits).
 *
 * Needs root (it configures failslab in debugfs) and a kernel with
 * CONFIG_FAULT_INJECTION, CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS
 * (the debug kernel); elsewhere every test skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define FAIL_NTH		"/proc/thread-self/fail-nth"
#define MAKE_IT_FAIL		"/proc/thread-self/make-it-fail"
#define FAILSLAB		"/sys/kernel/debug/failslab"
#define FAR			(3600 * NSEC_PER_SEC)
/* Bound for an event that must come.  Generous: TCG, KASAN, lockdep. */
#define EVENT_WAIT_MS		10000
/* No operation of twheel makes this many allocations. */
#define MAX_NTH			200
/* Per-user limits above this are not filled here (too slow). */
#define LIMIT_MAX		20000
#define MAX_FILES		8
#define PROBE_COOKIE		0x9b0be00000000000ULL
/* More timers than a chunk of a file's table holds, on any kernel. */
#define PRE_MAX			512
/* Cookies of those timers: PRE_COOKIE + their index. */
#define PRE_COOKIE		100

/* Wait (bounded) for one event and read it: 0 or -errno. */
static int read_event(int fd, struct twheel_event *ev)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t r;

	if (poll(&p, 1, EVENT_WAIT_MS) != 1)
		return -ETIMEDOUT;
	r = read(fd, ev, sizeof(*ev));
	if (r < 0)
		return -errno;
	return r == sizeof(*ev) ? 0 : -EIO;
}

/* The file works: a new timer fires and its event is read. */
static void file_works(struct __test_metadata *_metadata, int fd)
{
	struct twheel_event ev;
	uint64_t h;

	test_ioctl_arm(fd, 0, NSEC_PER_MSEC, 0, 0, PROBE_COOKIE, &h);
	ASSERT_EQ(0, read_event(fd, &ev));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(PROBE_COOKIE, ev.cookie);
	EXPECT_LE(ev.expires, ev.fired);
}

/* @h is pending with @cookie. */
static void timer_is(struct __test_metadata *_metadata, int fd, uint64_t h,
		     uint64_t cookie)
{
	struct twheel_query q;

	test_ioctl_query(fd, h, &q) TH_LOG("handle %#llx", (unsigned long long)h);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(cookie, q.out_cookie);
}

/*
 * A new file with @n timers an hour out, their handles in @h and their
 * cookies PRE_COOKIE + i: the file descriptor.
 */
static int open_with_timers(struct __test_metadata *_metadata, int n,
			    uint64_t *h)
{
	int fd, i;

	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	for (i = 0; i < n; i++)
		test_ioctl_arm(fd, 0, FAR, 0, 0, PRE_COOKIE + i, &h[i]);
	return fd;
}

/* ---- fail-nth ---- */

/* Make the @n-th allocation from now on fail (0: none). */
static void nth_set(struct __test_metadata *_metadata, int nth, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	ASSERT_EQ(len, pwrite(nth, buf, len, 0))
		TH_LOG("fail-nth: %s", strerror(errno));
}

/*
 * Whether the fault set by nth_set() was injected.  If it was not, it is
 * cancelled, so that it cannot hit anything after the call under test.
 */
static bool nth_injected(struct __test_metadata *_metadata, int nth)
{
	char buf[16];
	ssize_t r = pread(nth, buf, sizeof(buf) - 1, 0);

	if (r <= 0) {
		nth_set(_metadata, nth, 0);
		EXPECT_LT(0, r) TH_LOG("fail-nth: %s", strerror(errno));
		return false;
	}
	buf[r] = 0;
	if (!strtoul(buf, NULL, 10))
		return true;
	nth_set(_metadata, nth, 0);
	return false;
}

/**
 * struct inject - the faults of one attempt
 * @nth:   /proc/thread-self/fail-nth
 * @mif:   /proc/thread-self/make-it-fail
 * @depth: 1: the n-th allocation fails; 2: the one after it too
 *
 * Depth 2 reaches what one fault cannot: an allocation right after a
 * failed one (when the table of a file grows, its chunk array and the new
 * chunk).  fail-nth fails the n-th
 * allocation; failslab's own injection (probability 100, only for this
 * thread: task-filter and make-it-fail) fails the next, and "times" = 2
 * counts both, so nothing after them fails.
 */
struct inject {
	int nth;
	int mif;
	int depth;
};

static int read_str(const char *path, char *buf, size_t size);
static int write_str(const char *path, const char *s);

/* Make the @n-th allocation from now on fail, and at depth 2 the next. */
static void inject_begin(struct __test_metadata *_metadata,
			 struct inject *inj, unsigned int n)
{
	if (inj->depth > 1) {
		ASSERT_EQ(0, write_str("/sys/kernel/debug/failslab/times", "2"));
		ASSERT_EQ(1, pwrite(inj->mif, "1", 1, 0));
	}
	nth_set(_metadata, inj->nth, n);
}

/* Whether the n-th allocation was reached (and failed); disarms the rest. */
static bool inject_end(struct __test_metadata *_metadata, struct inject *inj)
{
	bool injected = nth_injected(_metadata, inj->nth);

	if (inj->depth > 1)
		ASSERT_EQ(1, pwrite(inj->mif, "0", 1, 0));
	return injected;
}

static int read_str(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = read(fd, buf, size - 1);
	close(fd);
	if (r < 0)
		return -errno;
	buf[r] = 0;
	return 0;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, s, strlen(s));
	close(fd);
	return r == (ssize_t)strlen(s) ? 0 : -EIO;
}

/* failslab's settings that the tests change, restored by the teardown */
static const char * const failslab_attrs[] = {
	"ignore-gfp-wait", "verbose", "cache-filter", "task-filter",
	"probability", "times",
};

#define NATTRS	ARRAY_SIZE(failslab_attrs)

FIXTURE(fault) {
	struct inject inj;
	const char *skip;	/* why the tests cannot run here */
	bool configured;	/* failslab settings changed, to restore */
	char saved[NATTRS][24];
	struct twheel_api api;
	int holder;		/* a file of the user, open throughout */
};

static int failslab_set(const char *attr, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", FAILSLAB, attr);
	return write_str(path, val);
}

/*
 * failslab by default leaves alone allocations that may sleep (GFP_KERNEL,
 * which is all of twheel's) and prints a stack trace for every fault, which
 * the VM harness would take for a kernel splat.
 */
FIXTURE_VARIANT(fault) {
	int depth;
};

FIXTURE_VARIANT_ADD(fault, one) {
	.depth = 1,
};

FIXTURE_VARIANT_ADD(fault, two) {
	.depth = 2,
};

FIXTURE_SETUP(fault)
{
	unsigned int i;

	self->inj.depth = variant->depth;
	self->inj.mif = -1;
	self->holder = -1;
	self->inj.nth = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	if (self->inj.nth < 0) {
		self->skip = "no " FAIL_NTH ": kernel without CONFIG_FAULT_INJECTION";
		return;
	}
	if (geteuid() != 0) {
		self->skip = "not root: cannot configure failslab";
		return;
	}
	if (access(FAILSLAB, F_OK)) {
		self->skip = "no " FAILSLAB ": no CONFIG_FAILSLAB or its debugfs";
		return;
	}
	for (i = 0; i < NATTRS; i++) {
		char path[128];

		snprintf(path, sizeof(path), "%s/%s", FAILSLAB, failslab_attrs[i]);
		ASSERT_EQ(0, read_str(path, self->saved[i], sizeof(self->saved[i])))
			TH_LOG("%s", path);
	}
	self->configured = true;
	ASSERT_EQ(0, failslab_set("ignore-gfp-wait", "N"));
	ASSERT_EQ(0, failslab_set("verbose", "0"));
	if (self->inj.depth > 1) {
		self->inj.mif = open(MAKE_IT_FAIL, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, self->inj.mif);
		ASSERT_EQ(0, failslab_set("times", "0"));
		ASSERT_EQ(0, failslab_set("task-filter", "Y"));
		ASSERT_EQ(0, failslab_set("probability", "100"));
	}

	/*
	 * The user's accounting lives while one of its files is open: keep
	 * one, so that a charge leaked by a failed call stays until
	 * user_room_exact() counts.
	 */
	self->holder = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->holder) TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
	test_ioctl_api(self->holder, &self->api);
}

FIXTURE_TEARDOWN(fault)
{
	/* no ASSERT here: it would jump back into the teardown */
	if (self->holder >= 0)
		close(self->holder);
	if (self->inj.nth >= 0) {
		EXPECT_EQ(1, pwrite(self->inj.nth, "0", 1, 0));
		close(self->inj.nth);
	}
	if (self->inj.mif >= 0) {
		EXPECT_EQ(1, pwrite(self->inj.mif, "0", 1, 0));
		close(self->inj.mif);
	}
	if (self->configured) {
		unsigned int i;

		/* the probability first: nothing fails at random meanwhile */
		for (i = 0; i < NATTRS; i++) {
			unsigned int k = NATTRS - 1 - i;

			EXPECT_EQ(0, failslab_set(failslab_attrs[k], self->saved[k]))
				TH_LOG("restoring %s", failslab_attrs[k]);
		}
	}
}

/*
 * Nothing of the user's per-user charge was lost or given back twice: the
 * user, whose files other than the fixture's holder are closed, can have
 * exactly the limit of timers.
 */
static void user_room_exact(struct __test_metadata *_metadata,
			    const struct twheel_api *api)
{
	uint64_t lim = api->out_max_timers_per_user, per_fd = api->out_max_timers_per_fd;
	uint64_t left = lim, h;
	int fds[MAX_FILES], nf = 0;

	if (!lim || lim > LIMIT_MAX) {
		TH_LOG("per-user limit %llu: the user's charge is not checked",
		       (unsigned long long)lim);
		return;
	}
	while (left) {
		uint64_t k = left < per_fd ? left : per_fd;
		struct twheel_batch_op ops[256];
		uint64_t i;

		ASSERT_GT(MAX_FILES, nf);
		fds[nf] = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[nf]);
		while (k) {
			uint32_t b = k < 256 ? k : 256, j;

			for (j = 0; j < b; j++)
				op_set(&ops[j], TWHEEL_OP_ARM, 0, FAR, j);
			ASSERT_EQ(b, _test_ioctl_batch(fds[nf], ops, b, NULL));
			for (i = 0; i < b; i++)
				ASSERT_EQ(0, ops[i].out_result)
					TH_LOG("%llu timers of %llu: %s",
					       (unsigned long long)(lim - left + i),
					       (unsigned long long)lim,
					       strerror(-ops[i].out_result));
			k -= b;
			left -= b;
		}
		nf++;
	}
	ASSERT_GT(MAX_FILES, nf);
	fds[nf] = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fds[nf]);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fds[nf], 0, FAR, 0, 0, 0, &h))
		TH_LOG("the user has more room than its limit");
	while (nf >= 0)
		close(fds[nf--]);
}

/* ---- open ---- */

TEST_F_TIMEOUT(fault, open_enomem, 120)
{
	int n, fd, err, failed = 0;
	bool injected = true;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	/* no file of the user open: open allocates its accounting too */
	close(self->holder);
	self->holder = -1;
	for (n = 1; injected && n <= MAX_NTH; n++) {
		inject_begin(_metadata, &self->inj, n);
		fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		err = errno;
		injected = inject_end(_metadata, &self->inj);
		if (fd < 0) {
			EXPECT_TRUE(injected);
			EXPECT_EQ(ENOMEM, err) TH_LOG("allocation %d: %s", n,
						      strerror(err));
			failed++;
			continue;
		}
		EXPECT_EQ(0, fd_timers(fd));
		file_works(_metadata, fd);
		EXPECT_EQ(0, fd_timers(fd));
		close(fd);
	}
	ASSERT_FALSE(injected) TH_LOG("open still faulting after %d", MAX_NTH);
	TH_LOG("open: %d allocations, %d made it fail", n - 2, failed);
	EXPECT_LE(1, failed);
}

/* ---- ARM ---- */

/*
 * ARM on a file with @pre live timers, making each allocation fail in
 * turn.  The file's timers live in chunks of its table: an ARM allocates
 * only when it needs a new chunk, as the first one of a file does (@pre =
 * 0) and the one after a full chunk does (@pre = table_chunk()).  Before,
 * the first timer was cancelled and its entry reused (a freed entry is the
 * next one taken) by a filler timer: its stale handle must name nothing.
 */
static void arm_faults(struct __test_metadata *_metadata, struct inject *inj,
		       const struct twheel_api *api, int pre)
{
	int n, fd, i, ret, failed = 0, recovered = 0;
	uint64_t h, hfill = 0, hpre[PRE_MAX];
	struct twheel_query q;
	bool injected = true;

	ASSERT_GE(PRE_MAX, pre);
	for (n = 1; injected && n <= MAX_NTH; n++) {
		fd = open_with_timers(_metadata, pre, hpre);
		if (pre) {
			test_ioctl_cancel(fd, hpre[0], NULL);
			test_ioctl_arm(fd, 0, FAR, 0, 0, 99, &hfill);
			/* the same entry, a new generation */
			EXPECT_EQ((uint32_t)hpre[0], (uint32_t)hfill);
			EXPECT_NE(hpre[0], hfill);
		}

		inject_begin(_metadata, inj, n);
		ret = _test_ioctl_arm(fd, 0, FAR, 0, 0, 1, &h);
		injected = inject_end(_metadata, inj);

		if (ret) {
			EXPECT_TRUE(injected);
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %d: %s", n,
						       strerror(-ret));
			EXPECT_EQ(pre, fd_timers(fd));
			failed++;
		} else {
			recovered += injected;
			EXPECT_EQ(pre + 1, fd_timers(fd));
			timer_is(_metadata, fd, h, 1);
		}
		for (i = 0; i < pre; i++) {
			EXPECT_NE(h, hpre[i]);
			if (i)
				timer_is(_metadata, fd, hpre[i], PRE_COOKIE + i);
		}
		if (pre) {
			timer_is(_metadata, fd, hfill, 99);
			/* a stale handle never names a newer timer */
			EXPECT_EQ(-ENOENT, _test_ioctl_query(fd, hpre[0], &q));
		}
		file_works(_metadata, fd);
		EXPECT_EQ(pre + !ret, fd_timers(fd));
		/* a failed ARM left no handle behind: the next is new */
		test_ioctl_arm(fd, 0, FAR, 0, 0, 2, &h);
		for (i = 0; i < pre; i++)
			EXPECT_NE(h, hpre[i]);
		EXPECT_EQ(pre + !ret + 1, fd_timers(fd));
		close(fd);
	}
	ASSERT_FALSE(injected) TH_LOG("ARM still faulting after %d", MAX_NTH);
	TH_LOG("ARM after %d timers: %d allocations, %d failed it, %d recovered",
	       pre, n - 2, failed, recovered);
	/* the new chunk's allocation at least */
	EXPECT_LE(1, failed);
	user_room_exact(_metadata, api);
}

TEST_F_TIMEOUT(fault, arm_first_timer_enomem, 120)
{
	if (self->skip)
		SKIP(return, "%s", self->skip);
	arm_faults(_metadata, &self->inj, &self->api, 0);
}

/*
 * How many timers fill the first chunk of a file's table: ARM with the
 * first allocation failing until one fails, which is the first ARM (the
 * file's first chunk) and then the one that needs the second chunk.
 */
static int table_chunk(struct __test_metadata *_metadata, struct inject *inj)
{
	int fd, k, ret = 0;
	uint64_t h;

	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (k = 0; k < PRE_MAX; k++) {
		inject_begin(_metadata, inj, 1);
		ret = _test_ioctl_arm(fd, 0, FAR, 0, 0, k, &h);
		inject_end(_metadata, inj);
		if (ret == -ENOMEM && k)
			break;
		if (ret == -ENOMEM)
			ret = _test_ioctl_arm(fd, 0, FAR, 0, 0, k, &h);
		if (ret)
			break;
	}
	close(fd);
	return ret == -ENOMEM ? k : -1;
}

TEST_F_TIMEOUT(fault, arm_new_chunk_enomem, 120)
{
	int chunk;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	chunk = table_chunk(_metadata, &self->inj);
	ASSERT_LT(0, chunk) TH_LOG("no ARM up to %d timers allocated", PRE_MAX);
	TH_LOG("a chunk of the table holds %d timers", chunk);
	arm_faults(_metadata, &self->inj, &self->api, chunk);
}

/* ---- BATCH ---- */

/*
 * A batch of arms, a cancel and a modify on a file whose first chunk has
 * one free entry: its first ARM takes it, the second needs a new chunk.
 * Every allocation fails in turn.  A batch stops at the record whose
 * allocation failed: records before it are done with their results, the
 * failed one and all later ones are left untouched, and the return value
 * counts the records processed (or the ioctl fails with ENOMEM if that is
 * the first record).
 */
TEST_F_TIMEOUT(fault, batch_enomem, 180)
{
	enum { K = 7 };
	struct twheel_batch_op ops[K], orig[K];
	int n, fd, i, pre, failed = 0, stopped[K] = { 0 };
	uint64_t hpre[PRE_MAX];
	bool injected = true;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	pre = table_chunk(_metadata, &self->inj) - 1;
	ASSERT_LT(1, pre);
	for (n = 1; injected && n <= MAX_NTH; n++) {
		long r, processed, timers = pre;
		uint32_t done;
		struct twheel_query q;

		fd = open_with_timers(_metadata, pre, hpre);
		op_set(&ops[0], TWHEEL_OP_ARM, 0xdead0, FAR, 10);
		op_set(&ops[1], TWHEEL_OP_CANCEL, hpre[0], 0, 0);
		op_set(&ops[2], TWHEEL_OP_ARM, 0xdead2, FAR, 12);
		op_set(&ops[3], TWHEEL_OP_MODIFY, hpre[1], FAR, 13);
		op_set(&ops[4], TWHEEL_OP_ARM, 0xdead4, FAR, 14);
		op_set(&ops[5], TWHEEL_OP_CANCEL, hpre[0], 0, 0);	/* gone */
		op_set(&ops[6], TWHEEL_OP_ARM, 0xdead6, FAR, 16);
		memcpy(orig, ops, sizeof(ops));

		inject_begin(_metadata, &self->inj, n);
		r = _test_ioctl_batch(fd, ops, K, &done);
		injected = inject_end(_metadata, &self->inj);

		if (r < 0) {
			EXPECT_EQ(-ENOMEM, r) TH_LOG("allocation %d: %s", n,
						     strerror(-r));
			processed = 0;
		} else {
			EXPECT_EQ(r, done);
			ASSERT_GE(K, r);
			processed = r;
		}
		if (processed < K) {
			/* only the ARM that needs a new chunk allocates */
			EXPECT_TRUE(injected);
			EXPECT_EQ(2, processed);
			stopped[processed]++;
			failed++;
		}
		for (i = 0; i < K; i++) {
			if (i >= processed) {
				EXPECT_EQ(0, memcmp(&orig[i], &ops[i], sizeof(ops[i])))
					TH_LOG("record %d of %ld changed", i, processed);
				continue;
			}
			if (i == 5) {
				EXPECT_EQ(-ENOENT, ops[i].out_result);
				continue;
			}
			EXPECT_EQ(0, op_res(&ops[i])) TH_LOG("record %d: %s", i,
							     strerror(-op_res(&ops[i])));
			if (ops[i].op == TWHEEL_OP_ARM) {
				timer_is(_metadata, fd, ops[i].handle,
					 orig[i].spec.cookie);
				timers++;
			}
		}
		/* the cancel and the modify took effect iff processed */
		if (processed > 1) {
			timers--;
			EXPECT_EQ(-ENOENT, _test_ioctl_query(fd, hpre[0], &q));
		} else {
			timer_is(_metadata, fd, hpre[0], PRE_COOKIE);
		}
		timer_is(_metadata, fd, hpre[1], processed > 3 ? 13 : PRE_COOKIE + 1);
		EXPECT_EQ(timers, fd_timers(fd));
		file_works(_metadata, fd);
		EXPECT_EQ(timers, fd_timers(fd));
		close(fd);
	}
	ASSERT_FALSE(injected) TH_LOG("BATCH still faulting after %d", MAX_NTH);
	TH_LOG("BATCH: %d allocations, %d stopped it at record 2", n - 2, failed);
	/* the new chunk's allocation at least */
	EXPECT_LE(1, failed);
	user_room_exact(_metadata, &self->api);
}

/*
 * The same with the file's first chunk full, so that the batch's first
 * record, an ARM, needs the new chunk: when that allocation fails no record
 * is processed, and the ioctl fails with ENOMEM (not a count of 0) and
 * changes nothing, the CANCEL after it included.
 */
TEST_F_TIMEOUT(fault, batch_first_record_enomem, 180)
{
	enum { K = 2 };
	struct twheel_batch_op ops[K], orig[K];
	int n, fd, chunk, failed = 0;
	uint64_t hpre[PRE_MAX];
	bool injected = true;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	chunk = table_chunk(_metadata, &self->inj);
	ASSERT_LT(1, chunk);
	for (n = 1; injected && n <= MAX_NTH; n++) {
		long r;

		fd = open_with_timers(_metadata, chunk, hpre);
		op_set(&ops[0], TWHEEL_OP_ARM, 0xdead0, FAR, 10);
		op_set(&ops[1], TWHEEL_OP_CANCEL, hpre[0], 0, 0);
		memcpy(orig, ops, sizeof(ops));

		inject_begin(_metadata, &self->inj, n);
		r = _test_ioctl_batch(fd, ops, K, NULL);
		injected = inject_end(_metadata, &self->inj);

		if (r != K) {
			EXPECT_TRUE(injected);
			EXPECT_EQ(-ENOMEM, r) TH_LOG("allocation %d: %ld", n, r);
			EXPECT_EQ(0, memcmp(orig, ops, sizeof(ops)))
				TH_LOG("allocation %d: records changed", n);
			timer_is(_metadata, fd, hpre[0], PRE_COOKIE);
			EXPECT_EQ(chunk, fd_timers(fd));
			failed++;
		} else {
			EXPECT_EQ(0, op_res(&ops[0]));
			EXPECT_EQ(0, op_res(&ops[1]));
			timer_is(_metadata, fd, ops[0].handle, 10);
			EXPECT_EQ(chunk, fd_timers(fd));
		}
		file_works(_metadata, fd);
		close(fd);
	}
	ASSERT_FALSE(injected) TH_LOG("BATCH still faulting after %d", MAX_NTH);
	TH_LOG("BATCH: %d allocations, %d failed it at its first record",
	       n - 2, failed);
	EXPECT_LE(1, failed);
	user_room_exact(_metadata, &self->api);
}

/*
 * A MODIFY that makes a one-shot timer periodic allocates the side array
 * of its table chunk, the first time one of the chunk's timers is made
 * periodic: with that allocation failing, MODIFY (or a batch whose first
 * record is that MODIFY) fails with ENOMEM and leaves the timer as it was,
 * a pending one-shot with its cookie.
 */
static void modify_periodic_faults(struct __test_metadata *_metadata,
				   struct inject *inj, bool batch)
{
	int n, fd, ret, failed = 0, recovered = 0;
	struct twheel_batch_op op;
	struct twheel_query q;
	bool injected = true;
	uint64_t h;

	for (n = 1; injected && n <= MAX_NTH; n++) {
		fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		test_ioctl_arm(fd, 0, FAR, 0, 0, 1, &h);
		op_set(&op, TWHEEL_OP_MODIFY, h, FAR, 2);
		op.spec.period = FAR;

		inject_begin(_metadata, inj, n);
		ret = batch ? _test_ioctl_batch(fd, &op, 1, NULL) :
			      _test_ioctl_modify(fd, h, 0, FAR, FAR, 0, 2);
		injected = inject_end(_metadata, inj);

		test_ioctl_query(fd, h, &q);
		if (ret < 0) {
			EXPECT_TRUE(injected);
			EXPECT_EQ(-ENOMEM, ret) TH_LOG("allocation %d: %s", n,
						       strerror(-ret));
			EXPECT_EQ(1, q.out_cookie);
			EXPECT_EQ(0, q.out_period);
			if (batch)
				EXPECT_EQ(RESULT_POISON, op.out_result);
			failed++;
		} else {
			recovered += injected;
			EXPECT_EQ(batch ? 1 : 0, ret);
			EXPECT_EQ(2, q.out_cookie);
			EXPECT_EQ(FAR, q.out_period);
		}
		EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
		EXPECT_EQ(1, fd_timers(fd));
		file_works(_metadata, fd);
		close(fd);
	}
	ASSERT_FALSE(injected) TH_LOG("MODIFY still faulting after %d", MAX_NTH);
	TH_LOG("MODIFY to periodic%s: %d allocations, %d failed it, %d recovered",
	       batch ? " (batch)" : "", n - 2, failed, recovered);
	/* the side array's allocation */
	EXPECT_LE(1, failed);
}

TEST_F_TIMEOUT(fault, modify_to_periodic_enomem, 120)
{
	if (self->skip)
		SKIP(return, "%s", self->skip);
	modify_periodic_faults(_metadata, &self->inj, false);
}

TEST_F_TIMEOUT(fault, batch_modify_to_periodic_enomem, 120)
{
	if (self->skip)
		SKIP(return, "%s", self->skip);
	modify_periodic_faults(_metadata, &self->inj, true);
}

/* ---- read ---- */

/*
 * read() allocates nothing (events pass through a buffer of the file), so
 * it cannot fail for memory: the first allocation after fail-nth = 1 is
 * never reached, and all events arrive.
 */
TEST_F_TIMEOUT(fault, read_allocates_nothing, 120)
{
	uint64_t deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	struct twheel_event ev[3];
	uint64_t h[3];
	bool injected;
	int fd, i;
	ssize_t r;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, fd);
	for (i = 0; i < 3; i++)
		test_ioctl_arm(fd, 0, 0, 0, 0, 1 + i, &h[i]);
	/* bounded wait until all three events are queued */
	for (i = 0; i < 3;) {
		struct twheel_query q;

		test_ioctl_query(fd, h[i], &q);
		if (q.out_state & TWHEEL_QUERY_EVENT) {
			i++;
			continue;
		}
		ASSERT_GT(deadline, now_ns()) TH_LOG("timer %d never fired", i);
		poll(NULL, 0, 2);
	}

	inject_begin(_metadata, &self->inj, 1);
	r = read(fd, ev, sizeof(ev));
	injected = inject_end(_metadata, &self->inj);
	EXPECT_FALSE(injected) TH_LOG("read() allocated");
	/* timers due on the same tick come in any order */
	ASSERT_EQ(sizeof(ev), r);
	for (i = 0; i < 3; i++) {
		int j = ev[i].cookie - 1;

		ASSERT_TRUE(j >= 0 && j < 3) TH_LOG("cookie %llu",
						    (unsigned long long)ev[i].cookie);
		EXPECT_EQ(h[j], ev[i].handle);
		h[j] = 0;	/* each once */
	}
	EXPECT_EQ(0, fd_timers(fd));
	file_works(_metadata, fd);
	close(fd);
}

/*
 * MODIFY, CANCEL, QUERY and a batch of modify and cancel records allocate
 * nothing (but a MODIFY that makes a timer periodic: see above): the
 * first allocation after fail-nth = 1 is never reached.
 */
TEST_F(fault, no_allocation_outside_arm)
{
	struct twheel_batch_op ops[2];
	struct twheel_query q;
	uint64_t h1, h2;
	int fd;

	if (self->skip)
		SKIP(return, "%s", self->skip);
	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	test_ioctl_arm(fd, 0, FAR, 0, 0, 1, &h1);
	test_ioctl_arm(fd, 0, FAR, 0, 0, 2, &h2);

	inject_begin(_metadata, &self->inj, 1);
	EXPECT_EQ(0, _test_ioctl_modify(fd, h1, 0, FAR, 0, 0, 3));
	EXPECT_FALSE(inject_end(_metadata, &self->inj)) TH_LOG("MODIFY");

	inject_begin(_metadata, &self->inj, 1);
	EXPECT_EQ(0, _test_ioctl_query(fd, h1, &q));
	EXPECT_FALSE(inject_end(_metadata, &self->inj)) TH_LOG("QUERY");
	EXPECT_EQ(3, q.out_cookie);

	inject_begin(_metadata, &self->inj, 1);
	op_set(&ops[0], TWHEEL_OP_MODIFY, h2, FAR, 4);
	op_set(&ops[1], TWHEEL_OP_CANCEL, h1, 0, 0);
	EXPECT_EQ(2, _test_ioctl_batch(fd, ops, 2, NULL));
	EXPECT_FALSE(inject_end(_metadata, &self->inj)) TH_LOG("BATCH");
	/* out_result is left alone for a MODIFY or CANCEL that worked */
	EXPECT_EQ(RESULT_POISON, ops[0].out_result);
	EXPECT_EQ(RESULT_POISON, ops[1].out_result);

	inject_begin(_metadata, &self->inj, 1);
	EXPECT_EQ(0, _test_ioctl_cancel(fd, h2, NULL));
	EXPECT_FALSE(inject_end(_metadata, &self->inj)) TH_LOG("CANCEL");
	EXPECT_EQ(0, fd_timers(fd));
	close(fd);
}

TEST_HARNESS_MAIN
