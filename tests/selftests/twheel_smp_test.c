// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of /dev/twheel on per-CPU wheel bases: two threads pinned to
 * different CPUs arm and cancel timers at the same time, on one shared
 * file and on a file each.  A timer is armed on the base of the CPU whose
 * thread issues the ioctl, and a cancel from the other CPU locks that
 * base, so the two CPUs' arms never share a lock while their cancels
 * cross over.
 *
 * Each thread arms ROUNDS timers 1-20 ms out, one by one, and cancels
 * every third timer of the other thread as soon as that one is armed (the
 * handles are published through an array), and every fifth of its own.
 * Afterwards the test reads the events: every timer that was not
 * cancelled while pending (or whose fired event the cancel withdrew) must
 * come exactly once, never before its expiry, and nothing else may come.
 *
 *  - two_cpus_one_file:        both threads on one file
 *  - two_cpus_separate_files:  a file per thread
 *  - modify_from_other_cpu:    timers armed from CPU A are re-armed from
 *                              CPU B, by single MODIFY ioctls and by a
 *                              batch of MODIFY records, which moves them
 *                              to B's base: each must fire once, at its
 *                              new expiry, with its new cookie
 *
 * Nothing waits by sleeping: the threads spin (bounded) on the published
 * handles, events are waited for with poll(), every loop is bounded by a
 * count and a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define ROUNDS		2000
#define CPU_A		0
#define CPU_B		1

/**
 * struct side - one thread's timers
 * @fd:       the file it arms on
 * @cpu:      the CPU it is pinned to
 * @handle:   per round, the handle (0 until armed; read by the other side)
 * @expires:  per round, the absolute expiry it was armed with
 * @gone:     per round, cancelled while pending or its event withdrawn
 * @err:      first unexpected errno, 0 if none
 * @other:    the other side
 */
struct side {
	int fd;
	int cpu;
	uint64_t handle[ROUNDS];
	uint64_t expires[ROUNDS];
	bool gone[ROUNDS];
	int err;
	struct side *other;
};

static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static bool two_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	return CPU_ISSET(CPU_A, &set) && CPU_ISSET(CPU_B, &set);
}

/* Cancel @s's timer @i; record whether it will never deliver an event. */
static void cancel_one(struct side *s, int fd, int i, int *err)
{
	uint32_t status = 0;
	int ret = _test_ioctl_cancel(fd, s->handle[i], &status);

	if (!ret)	/* PENDING: never fires; FIRED: its event withdrawn */
		s->gone[i] = true;
	else if (ret != -ENOENT && !*err)	/* ENOENT: event already read */
		*err = -ret;
}

static void *side_fn(void *arg)
{
	struct side *s = arg, *o = s->other;
	uint64_t handle, t;
	int i, ret;

	ret = pin_to(s->cpu);
	if (ret) {
		s->err = -ret;
		return NULL;
	}
	for (i = 0; i < ROUNDS; i++) {
		uint64_t deadline;

		t = now_ns() + (1 + (i * 7919 + s->cpu * 13) % 20) * NSEC_PER_MSEC;
		ret = _test_ioctl_arm(s->fd, TWHEEL_ARM_ABS, t, 0, 0,
				      ((uint64_t)s->cpu << 32) | i, &handle);
		if (ret) {
			if (!s->err)
				s->err = -ret;
			break;
		}
		s->expires[i] = t;
		__atomic_store_n(&s->handle[i], handle, __ATOMIC_RELEASE);
		if (!(i % 5))
			cancel_one(s, s->fd, i, &s->err);
		if (i % 3)
			continue;
		/* the other thread's i-th timer, from this CPU, once armed */
		deadline = now_ns() + 5 * NSEC_PER_SEC;
		while (!__atomic_load_n(&o->handle[i], __ATOMIC_ACQUIRE) &&
		       now_ns() < deadline)
			;
		if (o->handle[i])
			cancel_one(o, o->fd, i, &s->err);
	}
	return NULL;
}

/*
 * Read events from @fd until @want have come or 5 s passed; check each
 * against @sides.  Returns the number read, -1 after a bad event.
 */
static int read_events(struct __test_metadata *_metadata, int fd,
		       struct side **sides, int nsides, int want, int *seen)
{
	uint64_t deadline = now_ns() + 5 * NSEC_PER_SEC;
	struct twheel_event ev[64];
	int got = 0;

	while (got < want) {
		int n = read_by(fd, ev, ARRAY_SIZE(ev), deadline), k;

		if (n == -ETIMEDOUT)
			break;
		if (n < 0)
			return -1;
		for (k = 0; k < n; k++) {
			int cpu = ev[k].cookie >> 32, i = ev[k].cookie & 0xffffffff;
			struct side *s = NULL;
			int j;

			for (j = 0; j < nsides; j++)
				if (sides[j]->cpu == cpu)
					s = sides[j];
			EXPECT_NE(NULL, s);
			if (!s || i >= ROUNDS)
				return -1;
			EXPECT_EQ(s->handle[i], ev[k].handle);
			EXPECT_GE(ev[k].fired, ev[k].expires);
			EXPECT_EQ(s->expires[i], ev[k].expires);
			EXPECT_FALSE(s->gone[i]) {
				TH_LOG("cpu%d timer %d: cancelled, yet its event came", cpu, i);
			}
			EXPECT_EQ(0, seen[cpu * ROUNDS + i]++) {
				TH_LOG("cpu%d timer %d: a second event", cpu, i);
			}
			got++;
		}
	}
	return got;
}

static int expected(struct side *s)
{
	int i, n = 0;

	for (i = 0; i < ROUNDS; i++)
		n += s->handle[i] && !s->gone[i];
	return n;
}

static void run(struct __test_metadata *_metadata, bool one_file)
{
	struct side *a, *b, *sides[2];
	pthread_t ta, tb;
	int want, got, *seen, fdb;

	if (!two_cpus())
		SKIP(return, "needs CPUs %d and %d", CPU_A, CPU_B);
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	seen = calloc(2 * ROUNDS, sizeof(*seen));
	ASSERT_TRUE(a && b && seen);
	a->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, a->fd);
	fdb = one_file ? a->fd : open(TWHEEL_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, fdb);
	b->fd = fdb;
	a->cpu = CPU_A;
	b->cpu = CPU_B;
	a->other = b;
	b->other = a;
	sides[0] = a;
	sides[1] = b;

	ASSERT_EQ(0, pthread_create(&ta, NULL, side_fn, a));
	ASSERT_EQ(0, pthread_create(&tb, NULL, side_fn, b));
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_EQ(0, a->err);
	EXPECT_EQ(0, b->err);

	if (one_file) {
		want = expected(a) + expected(b);
		got = read_events(_metadata, a->fd, sides, 2, want, seen);
		EXPECT_EQ(want, got);
	} else {
		want = expected(a);
		got = read_events(_metadata, a->fd, sides, 2, want, seen);
		EXPECT_EQ(want, got);
		want = expected(b);
		got = read_events(_metadata, b->fd, sides, 2, want, seen);
		EXPECT_EQ(want, got);
	}
	TH_LOG("%d + %d timers, %d + %d delivered", ROUNDS, ROUNDS,
	       expected(a), expected(b));
	/* Nothing more comes: everything was delivered or cancelled. */
	EXPECT_EQ(0, fd_timers(a->fd));
	EXPECT_EQ(0, fd_timers(b->fd));
	close(a->fd);
	if (!one_file)
		close(b->fd);
	free(a);
	free(b);
	free(seen);
}

TEST(two_cpus_one_file)
{
	run(_metadata, true);
}

TEST(two_cpus_separate_files)
{
	run(_metadata, false);
}

#define MOVED		64

/*
 * Arm 3 * MOVED timers 10 s out from CPU A, then from CPU B cancel the
 * last MOVED by one batch and re-arm the others 20-33 ms out with new
 * cookies: the first MOVED by single MODIFY ioctls, the second by one
 * batch.  Each re-arm moves a pending timer from A's base to B's
 * (kernel-api.rst); the batches take each record's timer over under B's
 * base lock.  Then every re-armed timer must fire once, not before its
 * new expiry, with the new expiry and cookie, no cancelled one may fire,
 * and none may be left.
 */
TEST(modify_from_other_cpu)
{
	struct twheel_batch_op ops[MOVED];
	uint64_t handle[3 * MOVED], want[2 * MOVED], deadline, t0;
	int seen[2 * MOVED] = { 0 }, got = 0, fd, i;
	struct twheel_event ev[64];
	uint32_t done;

	if (!two_cpus())
		SKIP(return, "needs CPUs %d and %d", CPU_A, CPU_B);
	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pin_to(CPU_A));
	for (i = 0; i < 3 * MOVED; i++)
		test_ioctl_arm(fd, 0, 10 * NSEC_PER_SEC, 0, 0, i, &handle[i]);

	ASSERT_EQ(0, pin_to(CPU_B));
	for (i = 0; i < MOVED; i++)
		op_cancel(&ops[i], handle[2 * MOVED + i]);
	test_ioctl_batch(fd, ops, MOVED, &done);
	ASSERT_EQ(MOVED, done);
	for (i = 0; i < MOVED; i++)
		EXPECT_EQ(0, op_res(&ops[i]));
	EXPECT_EQ(2 * MOVED, fd_timers(fd));
	t0 = now_ns();
	for (i = 0; i < MOVED; i++)
		test_ioctl_modify(fd, handle[i], TWHEEL_ARM_ABS,
				  t0 + (20 + i / 5) * NSEC_PER_MSEC, 0, 0,
				  1000 + i);
	for (i = 0; i < MOVED; i++) {
		op_modify(&ops[i], handle[MOVED + i],
			  t0 + (20 + i / 5) * NSEC_PER_MSEC, 1000 + MOVED + i);
		ops[i].spec.flags = TWHEEL_ARM_ABS;
	}
	test_ioctl_batch(fd, ops, MOVED, &done);
	ASSERT_EQ(MOVED, done);
	for (i = 0; i < MOVED; i++)
		EXPECT_EQ(0, op_res(&ops[i]));
	for (i = 0; i < 2 * MOVED; i++)
		want[i] = t0 + (20 + i % MOVED / 5) * NSEC_PER_MSEC;

	deadline = now_ns() + 5 * NSEC_PER_SEC;
	while (got < 2 * MOVED) {
		int n = read_by(fd, ev, ARRAY_SIZE(ev), deadline), k;

		if (n == -ETIMEDOUT)
			break;
		ASSERT_LE(0, n);
		for (k = 0; k < n; k++) {
			int c = (int)ev[k].cookie - 1000;

			ASSERT_TRUE(c >= 0 && c < 2 * MOVED) {
				TH_LOG("cookie %llu: not a re-armed timer's",
				       (unsigned long long)ev[k].cookie);
			}
			EXPECT_EQ(handle[c], ev[k].handle);
			EXPECT_EQ(want[c], ev[k].expires);
			EXPECT_GE(ev[k].fired, want[c]);
			EXPECT_EQ(0, seen[c]++) {
				TH_LOG("timer %d: a second event", c);
			}
			got++;
		}
	}
	EXPECT_EQ(2 * MOVED, got);
	EXPECT_EQ(0, fd_timers(fd));
	close(fd);
}

TEST_HARNESS_MAIN
