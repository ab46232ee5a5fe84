// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of /dev/twheel operations that race a timer's callback running
 * on another CPU, and of a read() that stalls while copying out.
 *
 * The wheel's hrtimer runs where it was last started, so the timers are
 * armed from a thread pinned to CPU_FIRE and their callbacks run there,
 * while the test thread, pinned to CPU_USER, queries, cancels, modifies,
 * reads and closes.  /proc/softirqs shows where the HRTIMER softirqs ran,
 * which the first four tests check afterwards.
 *
 *  - query_periodic_mid_callback: a periodic timer is armed until it is
 *    cancelled, so QUERY reports it PENDING, with its next expiry, also
 *    while its callback runs (the timer is off the wheel then and re-armed
 *    at the end of the callback) and while its event waits.
 *  - cancel_periodic_mid_callback: CANCEL of a periodic timer reports
 *    TWHEEL_CANCEL_PENDING, also in the middle of its callback, and no
 *    event of it is read after CANCEL returned.
 *  - modify_periodic_mid_callback: after MODIFY returns, QUERY shows the
 *    new expiry, period and cookie, and no event with the old cookie is read.
 *  - close_after_reading_fired_oneshot: the callback of a one-shot timer
 *    queues its event and wakes the readers; another CPU reads the event
 *    (which ends the timer) and closes the file at once.  The callback must
 *    not touch the file after that: the test cannot see it, KASAN on the
 *    debug kernel reports it and the VM verdict fails the run.
 *  - ioctls_during_stalled_read: a read() whose copy to user space waits
 *    for a page fault (a userfaultfd-registered page) must not block the
 *    file's ioctls meanwhile.
 *  - failed_read_wakes_poller: when that copy fails instead, the events go
 *    back on the file, and a poll() that went to sleep while they were out
 *    must wake up.
 *  - kill_reader_behind_stalled_batch, kill_ioctl_behind_stalled_batch: a
 *    batch whose records fault (a userfaultfd page) holds the file's mutex
 *    meanwhile; a read() or ioctl of another process sharing the file waits
 *    for it, and SIGKILL must end that process (the event it wanted stays).
 *  - kill_during_batch: SIGKILL stops a batch between two runs of records,
 *    the later records untouched (debug kernels only: the delay point
 *    batch_run_us makes the batch long enough to be killed in).
 *
 * The windows of the first four are a few instructions wide, so on the
 * stock kernels the loops hit them by chance.  The debug kernel's modules
 * have delay points (src/delay.c): the tests widen the windows with
 * /sys/kernel/debug/twheel/delay/{callback_us,event_queued_us} and hit them
 * every time.  They put the delays back to 0 in teardown; a guard process
 * does it too if the test dies without one (a timeout's SIGKILL).
 *
 * Nothing waits by sleeping: events are waited for with poll() or a bounded
 * non-blocking read() loop, the stalled read() with the userfaultfd
 * message, and every loop is bounded by a count and a deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define EV_SIZE			sizeof(struct twheel_event)
/* Bound for an event that must come.  Generous: TCG, KASAN, lockdep. */
#define EVENT_WAIT_MS		10000
#define FAR			(3600 * NSEC_PER_SEC)
#define FEATURES_USED		(TWHEEL_FEATURE_PERIODIC | TWHEEL_FEATURE_BATCH | \
				 TWHEEL_FEATURE_QUERY)

/* The callbacks run on CPU_FIRE; the test thread races them from CPU_USER. */
#define CPU_FIRE		0
#define CPU_USER		1

#define DELAY_DIR		"/sys/kernel/debug/twheel/delay/"
/* Busy-waits of the delay points, in us (the debug kernel only). */
#define CALLBACK_DELAY_US	2000
#define QUEUED_DELAY_US		3000

/* query_periodic_mid_callback */
#define QUERY_TIMERS		4
#define QUERY_MAX		1000000
#define QUERY_SECS		2
#define QUERY_COOKIE		0x9e71000000000000ULL

/* cancel_ and modify_periodic_mid_callback: timers per round, rounds */
#define MID_TIMERS		64
#define MID_TIMERS_DELAYED	8
#define MID_ROUNDS_DELAYED	40
#define MID_SECS		2
#define MID_OLD_COOKIE		0x01d0000000000000ULL
#define MID_NEW_COOKIE		0x0e70000000000000ULL
#define SENTINEL_COOKIE		0x5e47149e00000000ULL

/* close_after_reading_fired_oneshot */
#define CLOSE_ITERS		5000
#define CLOSE_ITERS_DELAYED	200
#define CLOSE_SECS		3
#define CLOSE_COOKIE		0xc105e00000000000ULL

/* rearm_after_reading_fired_oneshot: the callback's tail, in us */
#define TAIL_DELAY_US		50000
#define TAIL_ITERS		5
#define TAIL_COOKIE		0x7a11000000000000ULL

/* ioctls_during_stalled_read: how long the ioctls may take */
#define STALL_WAIT_MS		10000
#define STALL_EV_COOKIE		0x57a1100000000001ULL
#define STALL_FAR_COOKIE	0x57a1100000000002ULL
#define STALL_NEW_COOKIE	0x57a1100000000003ULL

/* kill_during_batch: the kernel's runs (the uapi header: up to 32) */
#define KILL_RUN		32
#define KILL_RECORDS		(200 * KILL_RUN)
#define KILL_DELAY_US		5000
#define KILL_COOKIE		0x4b11100000000000ULL

/* ---- CPUs ---- */

static bool cpus_available(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	return CPU_ISSET(CPU_FIRE, &set) && CPU_ISSET(CPU_USER, &set);
}

/* Pin the calling thread to @cpu: 0 or -errno. */
static int pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/* Start @fn(@arg) in a thread that runs on @cpu only: 0 or an errno. */
static int start_on(pthread_t *th, int cpu, void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int ret;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ret = pthread_attr_init(&attr);
	if (ret)
		return ret;
	ret = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!ret)
		ret = pthread_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return ret;
}

/* ---- where the callbacks ran ---- */

struct softirqs {
	uint64_t fire, user;	/* HRTIMER softirqs on CPU_FIRE, CPU_USER */
	bool ok;
};

/* The HRTIMER line of /proc/softirqs: one column per possible CPU. */
static int hrtimer_softirqs(struct softirqs *s)
{
	char line[1024];
	FILE *f = fopen("/proc/softirqs", "re");
	int ret = -ENODATA;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "HRTIMER:"), *end;
		uint64_t col[2];
		int i;

		if (!p)
			continue;
		p += strlen("HRTIMER:");
		for (i = 0; i < 2; i++) {
			col[i] = strtoull(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		if (i == 2) {
			s->fire = col[CPU_FIRE];
			s->user = col[CPU_USER];
			ret = 0;
		}
		break;
	}
	fclose(f);
	return ret;
}

static void softirqs_begin(struct softirqs *s)
{
	s->ok = !hrtimer_softirqs(s);
}

/*
 * The wheel's hrtimer is a soft one: its handler, which runs the callbacks,
 * runs in the HRTIMER softirq of its CPU.  At least @min_fire of those must
 * have run on CPU_FIRE, and CPU_USER must have run few (a stray other soft
 * hrtimer may run there), or the test raced nothing.
 */
static void callbacks_ran_on_fire_cpu(struct __test_metadata *_metadata,
				      const struct softirqs *before,
				      uint64_t min_fire)
{
	struct softirqs now;

	if (!before->ok || hrtimer_softirqs(&now)) {
		TH_LOG("no HRTIMER line in /proc/softirqs: not checked where the callbacks ran");
		return;
	}
	now.fire -= before->fire;
	now.user -= before->user;
	TH_LOG("HRTIMER softirqs: %llu on CPU %d, %llu on CPU %d",
	       (unsigned long long)now.fire, CPU_FIRE,
	       (unsigned long long)now.user, CPU_USER);
	EXPECT_LE(min_fire, now.fire)
		TH_LOG("the callbacks did not run on CPU %d", CPU_FIRE);
	EXPECT_GT(now.fire, 4 * now.user)
		TH_LOG("the callbacks ran on CPU %d, the test's own", CPU_USER);
}

/* ---- arming on CPU_FIRE ---- */

/* @n timers due now, period @period, cookies @cookie, @cookie + 1... */
struct arm_job {
	int fd;
	int n;
	uint64_t period;
	uint64_t cookie;
	struct twheel_batch_op *ops;	/* out: the records, with the handles */
	uint64_t armed_at;		/* CLOCK_MONOTONIC before the batch */
	int cpu;			/* where the batch ran */
	int err;			/* 0 or -errno */
	int done;			/* set (release) when finished */
};

static void *arm_job_fn(void *arg)
{
	struct arm_job *j = arg;
	long ret;
	int i;

	j->cpu = sched_getcpu();
	for (i = 0; i < j->n; i++) {
		op_set(&j->ops[i], TWHEEL_OP_ARM, 0, 0, j->cookie + i);
		j->ops[i].spec.period = j->period;
	}
	j->armed_at = now_ns();
	ret = _test_ioctl_batch(j->fd, j->ops, j->n, NULL);
	if (ret < 0)
		j->err = ret;
	else if (ret != j->n)
		j->err = -EIO;
	for (i = 0; !j->err && i < j->n; i++)
		j->err = j->ops[i].out_result;
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void arm_on_fire_cpu(struct __test_metadata *_metadata,
			    struct arm_job *j)
{
	pthread_t th;

	ASSERT_EQ(0, start_on(&th, CPU_FIRE, arm_job_fn, j));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(CPU_FIRE, j->cpu);
	ASSERT_EQ(0, j->err) TH_LOG("arming on CPU %d: %s", CPU_FIRE,
				    strerror(-j->err));
}

/* ---- events ---- */

/* What waits now on the O_NONBLOCK @fd, into @evs: the count or -errno. */
static int read_now(int fd, struct twheel_event *evs, int max)
{
	ssize_t n = read(fd, evs, max * EV_SIZE);

	if (n < 0)
		return errno == EAGAIN ? 0 : -errno;
	return n / EV_SIZE;
}

/*
 * Like wait_in(), but spinning: returns within microseconds of the event,
 * where a wakeup from poll() can take longer than the race window.
 */
static int spin_in(int fd, int timeout_ms)
{
	uint64_t deadline = now_ns() + timeout_ms * NSEC_PER_MSEC;
	int r;

	while (!(r = wait_in(fd, 0)) && now_ns() < deadline)
		;
	return r;
}

/* ---- delay points (debug kernel) ---- */

static bool delays_available(void)
{
	return !access(DELAY_DIR "callback_us", W_OK) &&
	       !access(DELAY_DIR "event_queued_us", W_OK);
}

static int delay_set(const char *name, unsigned int us)
{
	char path[128], buf[16];
	int fd, len, ret = 0;

	snprintf(path, sizeof(path), DELAY_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", us);
	if (write(fd, buf, len) != len)
		ret = -EIO;
	close(fd);
	return ret;
}

static int delays_off(void)
{
	int a = delay_set("callback_us", 0);
	int b = delay_set("event_queued_us", 0);
	int c = delay_set("batch_run_us", 0);

	return a ? a : b ? b : c;
}

/*
 * A process that puts the delays back to 0 when the write end of a pipe
 * closes, i.e. when the test ends however it ends: teardown does it too,
 * but a test killed by the harness's timeout runs no teardown, and a delay
 * left in every callback would slow every later test of the VM.  It leaves
 * the test's process group, which the harness kills on a timeout.
 */
static int delay_guard(int *wfd, pid_t *pid)
{
	int p[2];
	char c;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	*pid = fork();
	if (*pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!*pid) {
		setpgid(0, 0);
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		delays_off();
		_exit(0);
	}
	setpgid(*pid, *pid);
	close(p[0]);
	*wfd = p[1];
	return 0;
}

/* ---- the fixture: one open file ---- */

FIXTURE(twheel_race) {
	int fd;			/* O_NONBLOCK */
	struct twheel_api api;
	bool delays;		/* the delay points exist (debug kernel) */
	int guard;		/* write end of the delay guard's pipe */
	pid_t guard_pid;
	int uffd;
};

FIXTURE_SETUP(twheel_race)
{
	self->guard = -1;
	self->uffd = -1;
	self->fd = -1;
	self->delays = delays_available();
	/* Before the open: the guard must not hold the file. */
	if (self->delays)
		ASSERT_EQ(0, delay_guard(&self->guard, &self->guard_pid));
	self->fd = open(TWHEEL_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s (is twheel.ko loaded?)",
				      TWHEEL_DEV, strerror(errno));
	ASSERT_EQ(0, _test_ioctl_api(self->fd, &self->api));
	ASSERT_EQ(TWHEEL_ABI_VERSION, self->api.out_abi_version);
	ASSERT_EQ(FEATURES_USED, self->api.out_features & FEATURES_USED);
	ASSERT_LT(0, self->api.out_tick_ns);
}

FIXTURE_TEARDOWN(twheel_race)
{
	/* Wakes a reader still stalled on the registered page. */
	if (self->uffd >= 0)
		close(self->uffd);
	if (self->guard >= 0) {
		EXPECT_EQ(0, delays_off());
		close(self->guard);
		waitpid(self->guard_pid, NULL, 0);
	}
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- QUERY of periodic timers ---- */

/*
 * Periodic timers with a period of one tick fire every tick on CPU_FIRE,
 * while CPU_USER queries them in a loop and reads their events as they
 * come.  Every answer must be PENDING with an expiry: between being taken
 * off the wheel and re-armed at the end of its callback a periodic timer
 * is still armed, and its queued event does not change that.  With
 * callback_us every callback spends 2 ms in that window.
 */
TEST_F(twheel_race, query_periodic_mid_callback)
{
	struct twheel_batch_op ops[QUERY_TIMERS];
	struct arm_job job = {
		.fd = self->fd,
		.n = QUERY_TIMERS,
		.period = self->api.out_tick_ns,
		.cookie = QUERY_COOKIE,
		.ops = ops,
	};
	long queries = 0, events = 0, neither = 0, event_only = 0;
	long no_expiry = 0, bad_fields = 0, bad_events = 0;
	struct twheel_query bad = { 0 };
	uint64_t start, deadline;
	struct softirqs si;

	if (!cpus_available())
		SKIP(return, "needs CPUs %d and %d", CPU_FIRE, CPU_USER);
	ASSERT_EQ(0, pin_to(CPU_USER));
	if (self->delays)
		ASSERT_EQ(0, delay_set("callback_us", CALLBACK_DELAY_US));
	softirqs_begin(&si);
	arm_on_fire_cpu(_metadata, &job);

	start = now_ns();
	deadline = start + QUERY_SECS * NSEC_PER_SEC;
	while (queries < QUERY_MAX && now_ns() < deadline) {
		const struct twheel_batch_op *op = &ops[queries % QUERY_TIMERS];
		struct twheel_event ev[QUERY_TIMERS];
		struct twheel_query q;
		int i, n;

		test_ioctl_query(self->fd, op->handle, &q);
		queries++;
		if (!(q.out_state & TWHEEL_QUERY_PENDING)) {
			if (q.out_state & TWHEEL_QUERY_EVENT)
				event_only++;
			else
				neither++;
			if (!bad.handle)
				bad = q;
		} else if (!q.out_expires) {
			no_expiry++;
		}
		if (q.out_period != op->spec.period || q.out_cookie != op->spec.cookie)
			bad_fields++;
		if (!(q.out_state & TWHEEL_QUERY_EVENT))
			continue;
		/* Keep the queue empty, as a program reading its events does. */
		n = read_now(self->fd, ev, QUERY_TIMERS);
		ASSERT_LE(0, n) TH_LOG("read: %s", strerror(-n));
		for (i = 0; i < n; i++) {
			int k = (int)(ev[i].cookie - QUERY_COOKIE);

			if (k < 0 || k >= QUERY_TIMERS ||
			    ev[i].handle != ops[k].handle ||
			    ev[i].fired < ev[i].expires ||
			    ev[i].flags != TWHEEL_EVENT_PERIODIC)
				bad_events++;
		}
		events += n;
	}

	TH_LOG("%ld queries in %llu ms, %ld events read, callback_us %d",
	       queries, (unsigned long long)((now_ns() - start) / NSEC_PER_MSEC),
	       events, self->delays ? CALLBACK_DELAY_US : 0);
	EXPECT_EQ(0, neither)
		TH_LOG("%ld of %ld answers: neither PENDING nor EVENT (state %u)",
		       neither, queries, bad.out_state);
	EXPECT_EQ(0, event_only)
		TH_LOG("%ld of %ld answers had EVENT but not PENDING", event_only,
		       queries);
	EXPECT_EQ(0, no_expiry)
		TH_LOG("%ld of %ld answers were PENDING with expires 0", no_expiry,
		       queries);
	EXPECT_EQ(0, bad_fields) TH_LOG("period or cookie wrong");
	EXPECT_EQ(0, bad_events) TH_LOG("wrong events read");
	EXPECT_LT(0, events) TH_LOG("the periodic timers never fired");
	callbacks_ran_on_fire_cpu(_metadata, &si, 1);
}

/* ---- CANCEL and MODIFY of periodic timers ---- */

/*
 * Rounds of: arm timers due at the next tick, period one tick, on CPU_FIRE;
 * spin on CPU_USER until the first event is queued, so that the tick's pass
 * over them is under way; then cancel (or modify) them one by one, in the
 * order they were armed, which is the reverse of the pass's (the wheel's
 * slots are LIFO), so the two meet at the one whose callback runs.  Without delays the pass
 * takes microseconds and the loop meets a running callback by chance; with
 * callback_us, MID_TIMERS_DELAYED callbacks take 2 ms each and a round
 * meets one almost always.  An operation that took longer than half the
 * delay waited for a running callback: counted, to show the window was hit.
 *
 * After CANCEL: status PENDING.  After MODIFY (to an hour out, a period of
 * two ticks, a new cookie): QUERY shows exactly that and no event.  After
 * the round no event of any of them may be read: the cancelled timers are
 * gone and the modified ones an hour out.  At the end a sentinel timer
 * fires in a later pass than any callback of the rounds, and nothing but
 * it may be read (it is armed from CPU_USER, its pass runs there).
 */
static void mid_callback_rounds(struct __test_metadata *_metadata, int fd,
				uint64_t tick, bool delays, bool modify)
{
	int n = delays ? MID_TIMERS_DELAYED : MID_TIMERS;
	int max_rounds = delays ? MID_ROUNDS_DELAYED : 1000000;
	uint64_t start, deadline, s;
	long ops_done = 0, waited = 0, not_pending = 0, bad_query = 0;
	long late_events = 0;
	struct twheel_event ev[64], late = { 0 };
	struct twheel_batch_op *ops;
	struct twheel_query badq = { 0 };
	uint32_t bad_status = 0;
	struct softirqs si;
	bool seen = false;
	int round, i, k;

	if (!cpus_available())
		SKIP(return, "needs CPUs %d and %d", CPU_FIRE, CPU_USER);
	ops = calloc(n, sizeof(*ops));
	ASSERT_NE(0, (uintptr_t)ops);
	ASSERT_EQ(0, pin_to(CPU_USER));
	if (delays)
		ASSERT_EQ(0, delay_set("callback_us", CALLBACK_DELAY_US));
	softirqs_begin(&si);

	start = now_ns();
	deadline = start + MID_SECS * NSEC_PER_SEC;
	for (round = 0; round < max_rounds && now_ns() < deadline; round++) {
		struct arm_job job = {
			.fd = fd,
			.n = n,
			.period = tick,
			.cookie = MID_OLD_COOKIE | (uint64_t)round << 16,
			.ops = ops,
		};

		arm_on_fire_cpu(_metadata, &job);
		ASSERT_EQ(1, spin_in(fd, EVENT_WAIT_MS))
			TH_LOG("round %d: the timers never fired", round);

		for (i = 0; i < n; i++) {
			uint64_t h = ops[i].handle, t0 = now_ns(), t1;
			uint64_t exp = t0 + FAR, cookie = MID_NEW_COOKIE | ops[i].spec.cookie;
			struct twheel_query q;
			uint32_t st = 0;

			if (modify) {
				test_ioctl_modify(fd, h, TWHEEL_ARM_ABS, exp,
						  2 * tick, 0, cookie);
			} else {
				test_ioctl_cancel(fd, h, &st);
			}
			t1 = now_ns();
			ops_done++;
			if (t1 - t0 > CALLBACK_DELAY_US * 1000ULL / 2)
				waited++;
			if (!modify) {
				if (st != TWHEEL_CANCEL_PENDING && !not_pending++)
					bad_status = st;
				continue;
			}
			test_ioctl_query(fd, h, &q);
			if (q.out_state != TWHEEL_QUERY_PENDING || q.out_expires != exp ||
			    q.out_period != 2 * tick || q.out_cookie != cookie) {
				if (!bad_query++)
					badq = q;
			}
		}

		for (;;) {
			k = read_now(fd, ev, 64);
			ASSERT_LE(0, k) TH_LOG("read: %s", strerror(-k));
			if (!k)
				break;
			if (!late_events)
				late = ev[0];
			late_events += k;
		}
		for (i = 0; modify && i < n; i++)
			test_ioctl_cancel(fd, ops[i].handle, NULL);
	}
	TH_LOG("%d rounds of %d timers, %llu ms: %ld %s, %ld waited for a callback, callback_us %d",
	       round, n, (unsigned long long)((now_ns() - start) / NSEC_PER_MSEC),
	       ops_done, modify ? "modifies" : "cancels", waited,
	       delays ? CALLBACK_DELAY_US : 0);
	/* with the delay point, some call must have met a callback */
	if (delays)
		EXPECT_LT(0, waited);

	/* The sentinel: due now, so in a pass after every one of the rounds. */
	test_ioctl_arm(fd, 0, 0, 0, 0, SENTINEL_COOKIE, &s);
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while (!seen) {
		ASSERT_EQ(1, wait_in(fd, ms_until(deadline)))
			TH_LOG("the sentinel never fired");
		k = read_now(fd, ev, 64);
		ASSERT_LE(0, k);
		for (i = 0; i < k; i++) {
			if (ev[i].handle == s && ev[i].cookie == SENTINEL_COOKIE) {
				seen = true;
				continue;
			}
			if (!late_events++)
				late = ev[i];
		}
	}

	if (!modify) {
		EXPECT_EQ(0, not_pending)
			TH_LOG("%ld of %ld cancels: status %u, not CANCEL_PENDING",
			       not_pending, ops_done, bad_status);
	} else {
		EXPECT_EQ(0, bad_query)
			TH_LOG("%ld of %ld modified: state %u period %llu cookie %#llx",
			       bad_query, ops_done, badq.out_state,
			       (unsigned long long)badq.out_period,
			       (unsigned long long)badq.out_cookie);
	}
	EXPECT_EQ(0, late_events)
		TH_LOG("%ld events read after their timer was %s, e.g. handle %#llx cookie %#llx",
		       late_events, modify ? "modified" : "cancelled",
		       (unsigned long long)late.handle,
		       (unsigned long long)late.cookie);
	callbacks_ran_on_fire_cpu(_metadata, &si, 1);
	free(ops);
}

TEST_F(twheel_race, cancel_periodic_mid_callback)
{
	mid_callback_rounds(_metadata, self->fd, self->api.out_tick_ns,
			    self->delays, false);
}

TEST_F(twheel_race, modify_periodic_mid_callback)
{
	mid_callback_rounds(_metadata, self->fd, self->api.out_tick_ns,
			    self->delays, true);
}

/* ---- close() right after reading a just-fired one-shot ---- */

/*
 * Each iteration opens a file and arms, on CPU_FIRE, a one-shot timer due
 * at the next tick; CPU_USER spins on a non-blocking read() until its event
 * comes and closes the file at once.  Reading the event ends the timer, and
 * with no timer left release() frees the file's context right away, while
 * the callback on CPU_FIRE may still be between queuing the event and
 * waking the file's readers.  With event_queued_us the callback stays there
 * for 3 ms and every iteration closes the file inside that window.
 */
TEST_F(twheel_race, close_after_reading_fired_oneshot)
{
	int max = self->delays ? CLOSE_ITERS_DELAYED : CLOSE_ITERS;
	uint64_t start, deadline;
	struct softirqs si;
	long spins = 0;
	int it;

	if (!cpus_available())
		SKIP(return, "needs CPUs %d and %d", CPU_FIRE, CPU_USER);
	ASSERT_EQ(0, pin_to(CPU_USER));
	if (self->delays)
		ASSERT_EQ(0, delay_set("event_queued_us", QUEUED_DELAY_US));
	softirqs_begin(&si);

	start = now_ns();
	deadline = start + CLOSE_SECS * NSEC_PER_SEC;
	for (it = 0; it < max && now_ns() < deadline; it++) {
		struct twheel_batch_op op;
		struct arm_job job = {
			.n = 1,
			.cookie = CLOSE_COOKIE | it,
			.ops = &op,
		};
		struct twheel_event ev;
		uint64_t give_up;
		pthread_t th;
		ssize_t r;
		int err;

		job.fd = open(TWHEEL_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
		ASSERT_LE(0, job.fd) TH_LOG("open: %s", strerror(errno));
		ASSERT_EQ(0, start_on(&th, CPU_FIRE, arm_job_fn, &job));
		give_up = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
		for (;;) {
			r = read(job.fd, &ev, sizeof(ev));
			err = errno;
			if (r >= 0 || err != EAGAIN)
				break;
			spins++;
			if ((__atomic_load_n(&job.done, __ATOMIC_ACQUIRE) &&
			     job.err) || now_ns() > give_up)
				break;
		}
		close(job.fd);
		ASSERT_EQ(0, pthread_join(th, NULL));
		ASSERT_EQ(CPU_FIRE, job.cpu);
		ASSERT_EQ(0, job.err) TH_LOG("arm: %s", strerror(-job.err));
		ASSERT_EQ(EV_SIZE, r)
			TH_LOG("iteration %d: read: %s", it,
			       r < 0 ? strerror(err) : "short");
		ASSERT_EQ(op.handle, ev.handle) TH_LOG("iteration %d", it);
		ASSERT_EQ(job.cookie, ev.cookie) TH_LOG("iteration %d", it);
		ASSERT_LE(job.armed_at, ev.expires) TH_LOG("iteration %d", it);
		ASSERT_LE(ev.expires, ev.fired)
			TH_LOG("iteration %d: fired %lld ns early", it,
			       (long long)(ev.expires - ev.fired));
		ASSERT_EQ(0, ev.flags);
		ASSERT_EQ(0, ev.overrun);
	}
	TH_LOG("%d files closed at their event, %llu ms, %ld empty reads, event_queued_us %d",
	       it, (unsigned long long)((now_ns() - start) / NSEC_PER_MSEC), spins,
	       self->delays ? QUEUED_DELAY_US : 0);
	callbacks_ran_on_fire_cpu(_metadata, &si, it);
}

/* ---- an ARM that reuses the entry of a just-delivered one-shot ---- */

/*
 * read() frees a one-shot timer's table entry once it has delivered its
 * event, and the callback on CPU_FIRE may then still be returning (with
 * event_queued_us, for TAIL_DELAY_US after it queued the event, which is
 * after the event's fire time).  The next ARM takes that entry (the free
 * entries are a stack) and sets its timer up again, which must wait until
 * the callback has returned (__twheel_timer_setup()'s rule: a timer whose
 * callback runs is still the handler's): so the ARM cannot return before
 * fired + TAIL_DELAY_US.  Without the delay point, on stock kernels, the
 * window is a few instructions and the test only checks the events.
 */
TEST_F(twheel_race, rearm_after_reading_fired_oneshot)
{
	int it;

	if (!cpus_available())
		SKIP(return, "needs CPUs %d and %d", CPU_FIRE, CPU_USER);
	ASSERT_EQ(0, pin_to(CPU_USER));
	if (self->delays)
		ASSERT_EQ(0, delay_set("event_queued_us", TAIL_DELAY_US));

	for (it = 0; it < TAIL_ITERS; it++) {
		struct twheel_batch_op op, op2;
		struct arm_job job = {
			.fd = self->fd,
			.n = 1,
			.cookie = TAIL_COOKIE | it,
			.ops = &op,
		};
		struct twheel_event ev;
		uint64_t back;

		arm_on_fire_cpu(_metadata, &job);
		ASSERT_EQ(1, spin_in(self->fd, EVENT_WAIT_MS));
		ASSERT_EQ(EV_SIZE, read(self->fd, &ev, sizeof(ev)));
		ASSERT_EQ(op.handle, ev.handle);
		/* the same entry again, from CPU_USER */
		op_set(&op2, TWHEEL_OP_ARM, 0, 60 * NSEC_PER_SEC,
		       TAIL_COOKIE | 0x100 | it);
		ASSERT_EQ(1, _test_ioctl_batch(self->fd, &op2, 1, NULL));
		back = now_ns();
		ASSERT_EQ(0, op_res(&op2));
		ASSERT_EQ((uint32_t)op.handle, (uint32_t)op2.handle)
			TH_LOG("iteration %d: the entry was not reused", it);
		if (self->delays)
			ASSERT_LE(ev.fired + TAIL_DELAY_US * 1000ULL, back)
				TH_LOG("iteration %d: ARM %llu us after the fire, in its tail",
				       it, (unsigned long long)(back - ev.fired) / 1000);
		op_set(&op2, TWHEEL_OP_CANCEL, op2.handle, 0, 0);
		ASSERT_EQ(1, _test_ioctl_batch(self->fd, &op2, 1, NULL));
		ASSERT_EQ(0, op_res(&op2));
	}
}

/* ---- ioctls while a read() waits for a page fault ---- */

struct stalled_read {
	int fd;
	void *buf;
	ssize_t ret;
	int err;
};

static void *stalled_read_fn(void *arg)
{
	struct stalled_read *r = arg;

	r->ret = read(r->fd, r->buf, EV_SIZE);
	r->err = errno;
	return NULL;
}

/* A userfaultfd, or -1 with errno set if the kernel has none. */
static int uffd_open(struct __test_metadata *_metadata)
{
	struct uffdio_api uapi = { .api = UFFD_API };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd >= 0)
		ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &uapi));
	return uffd;
}

/*
 * A page registered with @uffd for missing pages: the first copy to it
 * faults and waits until the test resolves (or abandons) the fault.
 */
static void *uffd_page(struct __test_metadata *_metadata, int uffd, long psz)
{
	struct uffdio_register reg = { 0 };
	void *page;

	page = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)page);
	reg.range.start = (uintptr_t)page;
	reg.range.len = psz;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg))
		TH_LOG("UFFDIO_REGISTER: %s", strerror(errno));
	return page;
}

/*
 * Start @rd's read() into @page (registered with @uffd) in thread @th and
 * wait for the userfaultfd message that says its copy faults there.
 */
static void start_stalled_read(struct __test_metadata *_metadata, int uffd,
			       struct stalled_read *rd, void *page, long psz,
			       pthread_t *th)
{
	struct uffd_msg msg;

	rd->buf = page;
	ASSERT_EQ(0, pthread_create(th, NULL, stalled_read_fn, rd));
	ASSERT_EQ(1, wait_in(uffd, EVENT_WAIT_MS))
		TH_LOG("read() did not fault on the registered page");
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);
	ASSERT_EQ((uintptr_t)page, msg.arg.pagefault.address & ~(uint64_t)(psz - 1));
}

/*
 * The case's userfaultfd in *@uffd, a page registered with it
 * (*@page) and a page of zeroes to resolve its fault with (*@zeros);
 * false if the kernel has no userfaultfd (errno says why).
 */
static bool uffd_setup(struct __test_metadata *_metadata, int *uffd,
		       long psz, void **page, void **zeros)
{
	*uffd = uffd_open(_metadata);
	if (*uffd < 0)
		return false;
	*page = uffd_page(_metadata, *uffd, psz);
	*zeros = mmap(NULL, psz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)*zeros);
	return true;
}

/* Resolve the fault on @page with @zeros: the stalled reader goes on. */
static void uffd_resolve(struct __test_metadata *_metadata, int uffd,
			 void *page, void *zeros, long psz)
{
	struct uffdio_copy copy = {
		.dst = (uintptr_t)page, .src = (uintptr_t)zeros, .len = psz,
	};

	ASSERT_EQ(0, ioctl(uffd, UFFDIO_COPY, &copy))
		TH_LOG("UFFDIO_COPY: %s", strerror(errno));
}

struct ioctls_job {
	int fd;
	uint64_t query;		/* the timer to query */
	int done_fd;		/* written to when both ioctls returned */
	int query_ret, arm_ret;
	struct twheel_query q;
	uint64_t armed;
};

static void *ioctls_fn(void *arg)
{
	struct ioctls_job *j = arg;

	j->query_ret = _test_ioctl_query(j->fd, j->query, &j->q);
	j->arm_ret = _test_ioctl_arm(j->fd, 0, FAR, 0, 0, STALL_NEW_COOKIE, &j->armed);
	if (write(j->done_fd, "", 1) != 1)
		j->arm_ret = -EIO;
	return NULL;
}

/*
 * A thread reads an event into a page registered with userfaultfd for
 * missing pages: the copy to user space faults and waits until the test
 * resolves the fault.  The userfaultfd message says it waits; then QUERY
 * and ARM on the same file must complete (in a thread, waited for with a
 * bound, so that a blocked ioctl is a failure and not a hang).  Then the
 * fault is resolved and the read must return the event.
 */
TEST_F(twheel_race, ioctls_during_stalled_read)
{
	struct ioctls_job job = { .fd = self->fd };
	struct stalled_read rd = { .fd = self->fd };
	long psz = sysconf(_SC_PAGESIZE);
	struct twheel_event ev;
	pthread_t rth, ith;
	uint64_t ev_handle;
	int done[2], ok;
	void *page, *zeros;

	if (!uffd_setup(_metadata, &self->uffd, psz, &page, &zeros))
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));

	/* A timer to query, and an event waiting to be read. */
	test_ioctl_arm(self->fd, 0, FAR, 0, 0, STALL_FAR_COOKIE, &job.query);
	test_ioctl_arm(self->fd, 0, 0, 0, 0, STALL_EV_COOKIE, &ev_handle);
	ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS)) TH_LOG("no event");
	start_stalled_read(_metadata, self->uffd, &rd, page, psz, &rth);

	/* read() waits in the fault now: the file's ioctls must not. */
	job.done_fd = done[1];
	ASSERT_EQ(0, pthread_create(&ith, NULL, ioctls_fn, &job));
	ok = wait_in(done[0], STALL_WAIT_MS);
	EXPECT_EQ(1, ok)
		TH_LOG("QUERY and ARM blocked for %d ms by a read() waiting for a fault",
		       STALL_WAIT_MS);

	/* Resolve the fault (this wakes the reader), then all must end. */
	uffd_resolve(_metadata, self->uffd, page, zeros, psz);
	ASSERT_EQ(0, pthread_join(rth, NULL));
	ASSERT_EQ(0, pthread_join(ith, NULL));
	TH_LOG("ioctls %s the stalled read()", ok == 1 ? "completed during" : "waited for");

	ASSERT_EQ(EV_SIZE, rd.ret) TH_LOG("read: %s", strerror(rd.err));
	memcpy(&ev, page, sizeof(ev));
	EXPECT_EQ(ev_handle, ev.handle);
	EXPECT_EQ(STALL_EV_COOKIE, ev.cookie);
	EXPECT_LE(ev.expires, ev.fired);
	EXPECT_EQ(0, job.query_ret);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, job.q.out_state);
	EXPECT_EQ(STALL_FAR_COOKIE, job.q.out_cookie);
	EXPECT_EQ(0, job.arm_ret);
	EXPECT_EQ(0, _test_ioctl_cancel(self->fd, job.armed, NULL));
	EXPECT_EQ(0, _test_ioctl_cancel(self->fd, job.query, NULL));

	close(done[0]);
	close(done[1]);
	munmap(zeros, psz);
	munmap(page, psz);
}

struct poller {
	int fd;
	int done_fd;		/* written to when poll() returned */
	pid_t tid;
	int ret;
	short revents;
};

/* poll() without a timeout: it returns only when woken. */
static void *poller_fn(void *arg)
{
	struct poller *p = arg;
	struct pollfd pfd = { .fd = p->fd, .events = POLLIN };

	__atomic_store_n(&p->tid, gettid(), __ATOMIC_RELEASE);
	p->ret = poll(&pfd, 1, -1);
	p->revents = pfd.revents;
	if (write(p->done_fd, "", 1) != 1)
		p->ret = -2;
	return NULL;
}

/* The scheduler state in the stat file @path ('R', 'S', ...), or '?'. */
static char stat_state(const char *path)
{
	char buf[256], *p;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = 0;
	p = strrchr(buf, ')');	/* after the command name */
	return p && p[1] == ' ' ? p[2] : '?';
}

/* The scheduler state of thread @tid of this process. */
static char thread_state(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	return stat_state(path);
}

/*
 * A read() takes the event and stalls copying it out (a userfaultfd page,
 * as above); a poll() in another thread finds nothing and goes to sleep.
 * The test then unmaps the page and wakes the fault: the copy fails, read()
 * returns EFAULT and puts the event back on the file.  Nothing else
 * happens on the file, so unless putting the event back wakes the poller,
 * it sleeps on with an event waiting (the test then arms a timer to end
 * it).  The event must still be there to read.
 */
TEST_F(twheel_race, failed_read_wakes_poller)
{
	struct stalled_read rd = { .fd = self->fd };
	struct poller pl = { .fd = self->fd };
	long psz = sysconf(_SC_PAGESIZE);
	struct uffdio_range wake = { 0 };
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN };
	struct twheel_event ev;
	pthread_t rth, pth;
	uint64_t h, h2, give_up;
	int done[2], woken;
	void *page;
	char st;

	self->uffd = uffd_open(_metadata);
	if (self->uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(errno));
	page = uffd_page(_metadata, self->uffd, psz);

	test_ioctl_arm(self->fd, 0, 0, 0, 0, STALL_EV_COOKIE, &h);
	ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS)) TH_LOG("no event");
	start_stalled_read(_metadata, self->uffd, &rd, page, psz, &rth);
	/* The event is out with the stalled read(). */
	ASSERT_EQ(0, poll(&pfd, 1, 0));

	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));
	pl.done_fd = done[1];
	ASSERT_EQ(0, pthread_create(&pth, NULL, poller_fn, &pl));
	give_up = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	do {
		pause_ns(2 * NSEC_PER_MSEC);	/* a bounded re-check */
		st = __atomic_load_n(&pl.tid, __ATOMIC_ACQUIRE) ?
		     thread_state(pl.tid) : '?';
	} while (st != 'S' && now_ns() < give_up);
	ASSERT_EQ('S', st) TH_LOG("the poller did not go to sleep");

	ASSERT_EQ(0, munmap(page, psz));
	wake.start = (uintptr_t)page;
	wake.len = psz;
	ASSERT_EQ(0, ioctl(self->uffd, UFFDIO_WAKE, &wake))
		TH_LOG("UFFDIO_WAKE: %s", strerror(errno));
	ASSERT_EQ(0, pthread_join(rth, NULL));
	EXPECT_EQ(-1, rd.ret);
	EXPECT_EQ(EFAULT, rd.err);
	woken = wait_in(done[0], EVENT_WAIT_MS);
	EXPECT_EQ(1, woken)
		TH_LOG("poll() still asleep %d ms after the event was put back",
		       EVENT_WAIT_MS);
	if (woken != 1)		/* a new event wakes it */
		test_ioctl_arm(self->fd, 0, 0, 0, 0, STALL_NEW_COOKIE, &h2);
	ASSERT_EQ(0, pthread_join(pth, NULL));
	EXPECT_EQ(1, pl.ret);
	EXPECT_EQ(POLLIN, pl.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL));
	ASSERT_EQ(EV_SIZE, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(STALL_EV_COOKIE, ev.cookie);
	close(done[0]);
	close(done[1]);
}

/* ---- a signal to a reader that waits for another reader ---- */

struct waiting_read {
	int fd;
	pid_t tid;		/* __atomic */
	ssize_t ret;
	int err;
	int done;		/* __atomic */
	struct twheel_event ev;
};

static void *waiting_read_fn(void *arg)
{
	struct waiting_read *w = arg;

	__atomic_store_n(&w->tid, gettid(), __ATOMIC_RELEASE);
	w->ret = read(w->fd, &w->ev, EV_SIZE);
	w->err = errno;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void sigusr1_caught(int sig)
{
	(void)sig;
}

/*
 * A second reader waits for the first, whose copy to user space waits in
 * a page fault (userfaultfd), while an event waits for it.  A signal it
 * catches (no SA_RESTART) must not make its read() fail with EINTR: an
 * event is there, and the header keeps EINTR for a read() interrupted
 * before any arrived.  It returns that event once the first reader is done.
 */
TEST_F(twheel_race, signal_to_reader_waiting_for_reader)
{
	struct stalled_read rd = { .fd = self->fd };
	struct waiting_read wr = { .fd = self->fd };
	struct sigaction sa = { .sa_handler = sigusr1_caught };
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t h1, h2, deadline;
	pthread_t rth, wth;
	void *page, *zeros;
	char st = 0;
	pid_t tid;

	if (!uffd_setup(_metadata, &self->uffd, psz, &page, &zeros))
		SKIP(return, "userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));

	/* the first reader takes one event and stalls copying it out */
	test_ioctl_arm(self->fd, 0, 0, 0, 0, STALL_EV_COOKIE, &h1);
	ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS)) TH_LOG("no event");
	start_stalled_read(_metadata, self->uffd, &rd, page, psz, &rth);
	/* the second finds another event and waits for the first */
	test_ioctl_arm(self->fd, 0, 0, 0, 0, STALL_NEW_COOKIE, &h2);
	ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS)) TH_LOG("no second event");
	ASSERT_EQ(0, pthread_create(&wth, NULL, waiting_read_fn, &wr));
	/* asleep in read(): 'S', or 'D' where only a fatal signal wakes it */
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while (st != 'S' && st != 'D' && now_ns() < deadline) {
		pause_ns(2 * NSEC_PER_MSEC);	/* a bounded re-check */
		tid = __atomic_load_n(&wr.tid, __ATOMIC_ACQUIRE);
		if (tid)
			st = thread_state(tid);
	}
	ASSERT_TRUE(st == 'S' || st == 'D') TH_LOG("the second reader never waited");
	ASSERT_EQ(0, pthread_kill(wth, SIGUSR1));
	/*
	 * Interrupted, it would return within a millisecond; give it 200 ms
	 * before the first reader goes on (which would let it take the lock).
	 */
	deadline = now_ns() + 200 * NSEC_PER_MSEC;
	while (!__atomic_load_n(&wr.done, __ATOMIC_ACQUIRE) && now_ns() < deadline)
		pause_ns(2 * NSEC_PER_MSEC);	/* a bounded re-check */
	EXPECT_FALSE(__atomic_load_n(&wr.done, __ATOMIC_ACQUIRE))
		TH_LOG("the signal ended the second read(): %s", strerror(wr.err));

	uffd_resolve(_metadata, self->uffd, page, zeros, psz);
	ASSERT_EQ(0, pthread_join(rth, NULL));
	ASSERT_EQ(0, pthread_join(wth, NULL));
	ASSERT_EQ(EV_SIZE, rd.ret) TH_LOG("first read: %s", strerror(rd.err));
	ASSERT_EQ(EV_SIZE, wr.ret) TH_LOG("second read: %s", strerror(wr.err));
	EXPECT_EQ(h2, wr.ev.handle);
	EXPECT_EQ(STALL_NEW_COOKIE, wr.ev.cookie);
	munmap(zeros, psz);
	munmap(page, psz);
}

/* ---- a fatal signal to a task that waits behind a stalled batch ---- */

struct stalled_batch {
	int fd;
	void *ops;		/* a page registered with the userfaultfd */
	long ret;
};

static void *stalled_batch_fn(void *arg)
{
	struct stalled_batch *b = arg;

	b->ret = _test_ioctl_batch(b->fd, b->ops, 1, NULL);
	return NULL;
}

/* The scheduler state of process @pid ('R', 'S', 'D', 'Z'...). */
static char process_state(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return stat_state(path);
}

/*
 * A batch whose records sit in a userfaultfd-registered page faults while
 * it holds the file's mutex, and waits until the test resolves the fault.
 * A child sharing the file then calls read() with an event waiting
 * (@reader) or QUERY: it sleeps on that mutex ('D').  SIGKILL must end the
 * child while the batch still waits, and the event, if any, must still be
 * there afterwards.  Waited for with a bound, and the fault is resolved
 * either way, so a child that stays asleep is a failure, not a hang.
 */
static void kill_waiter_of_stalled_batch(struct __test_metadata *_metadata,
					 int fd, int *uffd, bool reader)
{
	struct stalled_batch sb = { .fd = fd };
	long psz = sysconf(_SC_PAGESIZE);
	uint64_t h = 0, far, deadline;
	struct twheel_event ev;
	struct uffd_msg msg;
	pid_t child, reaped = 0;
	void *page, *zeros;
	int status;
	pthread_t th;
	char st = 0;

	if (!uffd_setup(_metadata, &*uffd, psz, &page, &zeros))
		SKIP(return, "userfaultfd: %s", strerror(errno));
	test_ioctl_arm(fd, 0, FAR, 0, 0, STALL_FAR_COOKIE, &far);
	if (reader) {
		test_ioctl_arm(fd, 0, 0, 0, 0, STALL_EV_COOKIE, &h);
		ASSERT_EQ(1, wait_in(fd, EVENT_WAIT_MS)) TH_LOG("no event");
	}

	sb.ops = page;
	ASSERT_EQ(0, pthread_create(&th, NULL, stalled_batch_fn, &sb));
	ASSERT_EQ(1, wait_in(*uffd, EVENT_WAIT_MS))
		TH_LOG("the batch did not fault on the registered page");
	ASSERT_EQ(sizeof(msg), read(*uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	child = fork();
	ASSERT_LE(0, child);
	if (!child) {
		struct twheel_query q;

		if (reader)
			_exit(read(fd, &ev, EV_SIZE) < 0 ? 1 : 0);
		_exit(_test_ioctl_query(fd, far, &q) ? 1 : 0);
	}
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while (st != 'D' && now_ns() < deadline) {
		pause_ns(2 * NSEC_PER_MSEC);	/* a bounded re-check */
		st = process_state(child);
	}
	EXPECT_EQ('D', st) TH_LOG("the child never waited for the file");

	ASSERT_EQ(0, kill(child, SIGKILL));
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while (!(reaped = waitpid(child, &status, WNOHANG)) &&
	       now_ns() < deadline)
		pause_ns(2 * NSEC_PER_MSEC);	/* a bounded re-check */
	EXPECT_EQ(child, reaped)
		TH_LOG("SIGKILL left the child in %s for %d ms, behind a batch waiting for a fault",
		       reader ? "read()" : "QUERY", EVENT_WAIT_MS);

	/* The batch goes on with a record of zeroes (EINVAL, processed). */
	uffd_resolve(_metadata, *uffd, page, zeros, psz);
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(1, sb.ret);
	if (reaped != child)
		ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	if (reader) {
		ASSERT_EQ(EV_SIZE, read(fd, &ev, EV_SIZE))
			TH_LOG("the killed reader lost the event: %s",
			       strerror(errno));
		EXPECT_EQ(h, ev.handle);
		EXPECT_EQ(STALL_EV_COOKIE, ev.cookie);
	}
	EXPECT_EQ(0, _test_ioctl_cancel(fd, far, NULL));
	munmap(zeros, psz);
	munmap(page, psz);
}

TEST_F(twheel_race, kill_reader_behind_stalled_batch)
{
	kill_waiter_of_stalled_batch(_metadata, self->fd, &self->uffd, true);
}

TEST_F(twheel_race, kill_ioctl_behind_stalled_batch)
{
	kill_waiter_of_stalled_batch(_metadata, self->fd, &self->uffd, false);
}

/*
 * A fatal signal stops a batch between two runs of records, and leaves the
 * later records untouched (the uapi header's promise).  A child sharing the
 * file arms KILL_RECORDS far timers in one batch, from records in shared
 * memory; the delay point batch_run_us holds the batch 5 ms after each run
 * of 32, so the whole of it would take a second, and the test kills the
 * child as soon as fdinfo counts the first run's timers.  Then the records
 * that carry a handle must be whole runs, short of the batch, all before
 * any untouched one, and the file must hold exactly their timers.
 */
TEST_F(twheel_race, kill_during_batch)
{
	size_t sz = KILL_RECORDS * sizeof(struct twheel_batch_op);
	struct twheel_batch_op *ops;
	int status, i, done;
	uint64_t deadline;
	pid_t child;
	long n;

	if (!self->delays || access(DELAY_DIR "batch_run_us", W_OK))
		SKIP(return, "needs the delay point batch_run_us (debug kernels)");
	ops = mmap(NULL, sz, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ops);
	for (i = 0; i < KILL_RECORDS; i++)
		op_arm(&ops[i], 0, FAR, 0, KILL_COOKIE + i);
	ASSERT_EQ(0, delay_set("batch_run_us", KILL_DELAY_US));

	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(_test_ioctl_batch(self->fd, ops, KILL_RECORDS, NULL) ==
		      KILL_RECORDS ? 0 : 1);
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while ((n = fd_timers(self->fd)) >= 0 && n < KILL_RUN &&
	       now_ns() < deadline)
		pause_ns(NSEC_PER_MSEC);	/* a bounded re-check */
	ASSERT_EQ(0, kill(child, SIGKILL));
	ASSERT_EQ(child, waitpid(child, &status, 0));
	EXPECT_EQ(0, delay_set("batch_run_us", 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ASSERT_LE(KILL_RUN, n)
		TH_LOG("fdinfo did not count the first run in %d ms", EVENT_WAIT_MS);

	for (done = 0; done < KILL_RECORDS && ops[done].handle; done++)
		ASSERT_EQ(0, op_res(&ops[done])) TH_LOG("record %d", done);
	for (i = done; i < KILL_RECORDS; i++)
		if (ops[i].handle || ops[i].out_result != RESULT_POISON)
			break;
	EXPECT_EQ(KILL_RECORDS, i)
		TH_LOG("record %d, after the last processed one (%d), was written",
		       i, done - 1);
	EXPECT_GT(KILL_RECORDS, done)
		TH_LOG("SIGKILL did not stop the batch: all %d records were processed",
		       KILL_RECORDS);
	EXPECT_EQ(0, done % KILL_RUN) TH_LOG("%d records processed", done);
	EXPECT_EQ(done, fd_timers(self->fd));
	TH_LOG("SIGKILL stopped the batch after %d of %d records", done,
	       KILL_RECORDS);
	munmap(ops, sz);
}

TEST_HARNESS_MAIN
