// SPDX-License-Identifier: GPL-2.0
/*
 * Selftest of /dev/twheel: no hold of a base's lock does work that grows
 * with the number of timers (Documentation/design.rst, "Bounded work under
 * the lock").
 *
 * one_upper_slot: a thread pinned to CPU 0 arms, in batches, up to 10^6
 * timers (as many as the per-user limit allows, at least 2 * 10^5) with
 * TWHEEL_ARM_ABS expiries inside one window of 64 ticks about 20 s out:
 * more than a revolution of the default hierarchical wheel, so they wait
 * on one upper slot (the window crosses a slot boundary in fewer than one
 * case in a hundred; its larger part is then the slot that counts).  A
 * little before the window, when the clock has passed the slot's block
 * start but the tick handler has not woken yet, one more ARM on CPU 0 runs
 * the arm path's clock forward; then every event is read.  The debugfs
 * statistic max_hold_moves, the most timers moved between the engine's
 * lists under one hold of a base lock since the module was loaded, must
 * stay within TWHEEL_HOLD_MOVES (256) after that ARM and after the
 * slot's cascade by the tick handler.  Every timer must fire once, never
 * early.
 *
 * Meanwhile a SCHED_FIFO thread on CPU 0, the CPU that owns the timers,
 * sleeps 1 ms at a time (cyclictest's measurement) and the test logs its
 * largest wakeup overshoot before the window and around the cascade:
 * figures for the record, not asserted (TCG's timing is not the
 * hardware's).
 *
 * Skips when the default wheel's engine is not the hierarchical one (the
 * others move no timers) or debugfs cannot be read.
 *
 * unprivileged_open: the other engines do not bound the work under a lock,
 * so with engine=scheme6 or engine=lawn only CAP_SYS_ADMIN may open the
 * device: a process that dropped to user nobody gets EPERM from open(),
 * and with hier it gets a file.  The selftest plan runs this program on
 * every engine.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define STATS		"/sys/kernel/debug/twheel/default/stats"
/* TWHEEL_HOLD_MOVES of include/linux/twheel.h */
#define HOLD_MOVES	256
#define WANT		1000000
#define AT_LEAST	200000
#define BATCH		1024
#define WINDOW_TICKS	64
#define LEAD_NS		(20 * NSEC_PER_SEC)

/* A "name:\tvalue" line of the debugfs stats, or -1. */
static long long stat_of(const char *name)
{
	size_t len = strlen(name);
	char line[256];
	long long v = -1;
	FILE *f;

	f = fopen(STATS, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtoll(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static bool engine_is_hier(void)
{
	char line[256];
	bool hier = false;
	FILE *f;

	f = fopen(STATS, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "engine:", 7)) {
			hier = strstr(line, "hier");
			break;
		}
	fclose(f);
	return hier;
}

/*
 * The latency probe: sleep 1 ms to an absolute time, again and again, and
 * keep the largest overshoot of each phase (0: before the cascade, 1:
 * around it) until @stop.
 */
struct probe {
	pthread_t thread;
	int phase;
	bool stop;
	uint64_t worst[2];
	bool fifo;
};

static void *probe_main(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	struct probe *p = arg;
	struct timespec ts;
	uint64_t next;

	p->fifo = !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	next = now_ns();
	while (!__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
		int ph = __atomic_load_n(&p->phase, __ATOMIC_RELAXED);
		uint64_t late;

		next += NSEC_PER_MSEC;
		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		late = now_ns() - next;
		if (late > p->worst[ph])
			p->worst[ph] = late;
		/* a long stall: start again from now, not with a burst */
		if (late > NSEC_PER_MSEC)
			next = now_ns();
	}
	return NULL;
}

FIXTURE(bounded) {
	int fd;
	uint64_t tick_ns;
};

FIXTURE_SETUP(bounded)
{
	struct twheel_api api;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpus), &cpus));
	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	test_ioctl_api(self->fd, &api);
	self->tick_ns = api.out_tick_ns;
}

FIXTURE_TEARDOWN(bounded)
{
	close(self->fd);
}

TEST_F_TIMEOUT(bounded, one_upper_slot, 300)
{
	uint64_t t0 = now_ns() + LEAD_NS, span = WINDOW_TICKS * self->tick_ns;
	static struct twheel_event ev[4096];
	struct twheel_batch_op *ops;
	long long moves_arm, moves;
	unsigned long armed = 0, seen = 0, early = 0;
	uint64_t handle, deadline, last = 0;
	struct probe probe = { 0 };
	bool full = false;

	if (stat_of("max_hold_moves") < 0)
		SKIP(return, "cannot read max_hold_moves in %s", STATS);
	if (!engine_is_hier())
		SKIP(return, "the default wheel's engine is not hier");
	ops = calloc(BATCH, sizeof(*ops));
	ASSERT_NE(NULL, ops);
	while (armed < WANT && !full) {
		uint32_t done = 0, i, n = BATCH;

		if (n > WANT - armed)
			n = WANT - armed;
		for (i = 0; i < n; i++)
			op_arm(&ops[i], TWHEEL_ARM_ABS,
			       t0 + (armed + i) % span, 0, armed + i);
		_test_ioctl_batch(self->fd, ops, n, &done);
		for (i = 0; i < done; i++) {
			if (op_res(&ops[i]) == -ENOSPC) {
				full = true;
				break;
			}
			ASSERT_EQ(0, op_res(&ops[i]));
			last = ops[i].handle;
			armed++;
		}
		if (done < n)
			full = true;
	}
	free(ops);
	/* At the per-user limit: make room for the ARM after the block start. */
	if (full && armed) {
		test_ioctl_cancel(self->fd, last, NULL);
		armed--;
	}
	TH_LOG("%lu timers armed, the last %.1f s before the window",
	       armed, (double)(t0 - now_ns()) / NSEC_PER_SEC);
	ASSERT_LE(AT_LEAST, armed);
	/* Well before the window: the upper slot still holds them. */
	ASSERT_LT(now_ns() + 9 * NSEC_PER_SEC, t0);

	/* The probe, inheriting CPU 0: two seconds before the cascade... */
	pause_ns(t0 - 3 * NSEC_PER_SEC - now_ns());
	ASSERT_EQ(0, pthread_create(&probe.thread, NULL, probe_main, &probe));

	/* Past the slot's block start (unless it is within 30 ms of t0). */
	pause_ns(t0 - 1 * NSEC_PER_SEC - now_ns());
	__atomic_store_n(&probe.phase, 1, __ATOMIC_RELAXED);
	pause_ns(t0 - 30 * NSEC_PER_MSEC - now_ns());
	ASSERT_EQ(0, _test_ioctl_arm(self->fd, 0, NSEC_PER_SEC, 0, 0,
				     ~0ULL, &handle));
	moves_arm = stat_of("max_hold_moves");
	TH_LOG("max_hold_moves after the ARM: %lld", moves_arm);

	deadline = t0 + span + 120 * NSEC_PER_SEC;
	while (seen < armed + 1) {
		int i, n = read_by(self->fd, ev, 4096, deadline);

		ASSERT_LE(0, n);
		for (i = 0; i < n; i++) {
			if (ev[i].fired < ev[i].expires)
				early++;
			seen++;
		}
	}
	__atomic_store_n(&probe.stop, true, __ATOMIC_RELAXED);
	pthread_join(probe.thread, NULL);
	/* "around": from 1 s before the window to its last event */
	TH_LOG("probe (%s, 1 ms sleeps, CPU 0): worst overshoot %.3f ms before, %.3f ms around",
	       probe.fifo ? "SCHED_FIFO 1" : "not SCHED_FIFO",
	       probe.worst[0] / 1e6, probe.worst[1] / 1e6);
	moves = stat_of("max_hold_moves");
	TH_LOG("max_hold_moves after the cascade: %lld (moves: %lld)", moves,
	       stat_of("moves"));
	EXPECT_EQ(0, early);
	EXPECT_EQ(armed + 1, seen);
	EXPECT_LE(moves_arm, HOLD_MOVES);
	EXPECT_LE(moves, HOLD_MOVES);
}

TEST(unprivileged_open)
{
	bool hier = engine_is_hier();
	int status, fd;
	pid_t pid;

	if (stat_of("max_hold_moves") < 0)
		SKIP(return, "cannot read %s", STATS);
	if (geteuid())
		SKIP(return, "must start as root to drop to nobody");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(100);
		fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		_exit(fd >= 0 ? 0 : errno);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	TH_LOG("engine %s: open() as nobody: %s", hier ? "hier" : "other",
	       WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : "ok");
	EXPECT_EQ(hier ? 0 : EPERM, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
