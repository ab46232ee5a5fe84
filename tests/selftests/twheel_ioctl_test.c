// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of the /dev/twheel ioctl ABI and of event delivery.
 *
 * Every ioctl's success path and each of its error paths (one test case per
 * path, tables as FIXTURE_VARIANTs as in tools/testing/selftests/iommu),
 * read()/poll()/epoll, one-shot and periodic delivery (never early), modify,
 * query, exactly-once delivery of 100k timers armed in batches, cancel
 * racing the firing, close with timers in flight, fork, isolation between
 * files and the 32-bit compat path.
 *
 * The errno meanings checked here are the ones the DOC block of
 * include/uapi/linux/twheel.h fixes.
 *
 * Timing: the tests run under qemu TCG, where a millisecond tick can come
 * tens of milliseconds late.  Nothing waits by sleeping: an event that must
 * come is waited for with poll()/epoll_wait() bounded by EVENT_WAIT_MS, and
 * "no event of X is ever read" is shown with a sentinel barrier (see
 * barrier()).  Conditions that have no wakeup (a timer's query state, a
 * thread's state) are polled at short intervals up to a deadline.  The only
 * sleeps let time pass on purpose (a periodic timer left unread for several
 * periods, a remaining time that must shrink) and are not synchronisation.
 *
 * Built static by selftests/Makefile (-I include/uapi) against the
 * kselftest_harness.h of Debian's linux-source-6.1.  The file also builds
 * with -m32, where every test runs through the compat ioctl path.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

#define EV_SIZE			sizeof(struct twheel_event)
/* struct twheel_api before out_clockid: a program built then passes it */
#define TWHEEL_API_SIZE0	64
/* Bound for an event that must come.  Generous: TCG, KASAN, lockdep. */
#define EVENT_WAIT_MS		10000
/* Cookies of the barrier's sentinel timers. */
#define SENTINEL_COOKIE		0x5e47149e00000000ULL
#define FEATURES_USED		(TWHEEL_FEATURE_PERIODIC | TWHEEL_FEATURE_BATCH | \
				 TWHEEL_FEATURE_QUERY)

/* The ABI promises one layout for 32 and 64-bit callers. */
static_assert(sizeof(struct twheel_api) == 72, "twheel_api layout");
static_assert(sizeof(struct twheel_setup) == 24, "twheel_setup layout");
static_assert(sizeof(struct twheel_timer_spec) == 40, "twheel_timer_spec layout");
static_assert(sizeof(struct twheel_arm) == 56, "twheel_arm layout");
static_assert(sizeof(struct twheel_modify) == 56, "twheel_modify layout");
static_assert(sizeof(struct twheel_cancel) == 24, "twheel_cancel layout");
static_assert(sizeof(struct twheel_query) == 56, "twheel_query layout");
static_assert(sizeof(struct twheel_batch_op) == 56, "twheel_batch_op layout");
static_assert(sizeof(struct twheel_batch) == 32, "twheel_batch layout");
static_assert(sizeof(struct twheel_event) == 48, "twheel_event layout");
static_assert(sizeof(struct twheel_v1_api) == 48, "version 1 twheel_api layout");

/*
 * Pointer checks through uintptr_t: the harness prints values as
 * uintmax_t, which a pointer of a 32-bit build cannot be cast to.
 */
#define ASSERT_NONNULL(p)	ASSERT_NE(0, (uintptr_t)(p))
#define ASSERT_MAPPED(p)	ASSERT_NE((uintptr_t)MAP_FAILED, (uintptr_t)(p))

/* ---- helpers ---- */

/* Let time pass until @t: for tests that leave a timer unread on purpose. */
static void pass_time_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = t / NSEC_PER_SEC,
		.tv_nsec = t % NSEC_PER_SEC,
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * An address with nothing mapped.  Taken right before use, so no later
 * mapping of the test can have landed there.
 */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, page_size());
	return p;
}

/* A page holding a copy of @len bytes of @src, then made read-only. */
static void *readonly_copy(const void *src, size_t len)
{
	void *p = mmap(NULL, page_size(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, src, len);
	if (mprotect(p, page_size(), PROT_READ)) {
		munmap(p, page_size());
		return NULL;
	}
	return p;
}

/*
 * The interval of a bounded polling loop: a loop that re-checks a condition
 * the kernel gives no wakeup for (a query result, a thread's state), always
 * with an overall deadline.
 */
static void poll_interval(void)
{
	poll(NULL, 0, 2);
}

/* What every event must satisfy, whoever it belongs to. */
static void check_event(struct __test_metadata *_metadata,
			const struct twheel_event *ev, uint64_t read_at)
{
	EXPECT_LE(ev->expires, ev->fired)
		TH_LOG("handle %#llx fired %lld ns early",
		       (unsigned long long)ev->handle,
		       (long long)(ev->expires - ev->fired));
	EXPECT_LE(ev->fired, read_at)
		TH_LOG("handle %#llx: fire time in the future",
		       (unsigned long long)ev->handle);
	EXPECT_NE(0, ev->handle);
	EXPECT_EQ(0, ev->__reserved);
	EXPECT_EQ(0, ev->flags & ~TWHEEL_EVENT_PERIODIC);
	if (!(ev->flags & TWHEEL_EVENT_PERIODIC))
		EXPECT_EQ(0, ev->overrun);
}

/*
 * Read events into @evs until @want have come or @timeout_ms passed.  Reads
 * only when poll() says an event waits, so it never blocks on a blocking fd
 * (one reader).  Returns the number read.
 */
static int collect(struct __test_metadata *_metadata, int fd,
		   struct twheel_event *evs, int max, int want, int timeout_ms)
{
	uint64_t deadline = now_ns() + timeout_ms * NSEC_PER_MSEC;
	int got = 0;

	while (got < want) {
		ssize_t n;
		uint64_t t;
		int i, r;

		r = wait_in(fd, ms_until(deadline));
		ASSERT_LE(0, r);
		if (!r)
			break;
		n = read(fd, &evs[got], (max - got) * EV_SIZE);
		t = now_ns();
		ASSERT_LT(0, n) TH_LOG("read: %s", strerror(errno));
		ASSERT_EQ(0, n % EV_SIZE);
		for (i = 0; i < n / (ssize_t)EV_SIZE; i++)
			check_event(_metadata, &evs[got + i], t);
		got += n / EV_SIZE;
		if (got == max)
			break;
	}
	return got;
}

/* Drain what waits now; returns the number of events read. */
static int drain(struct __test_metadata *_metadata, int fd,
		 struct twheel_event *evs, int max)
{
	int got = 0;

	while (got < max && wait_in(fd, 0) > 0)
		got += collect(_metadata, fd, &evs[got], max - got, 1, 0);
	return got;
}

/*
 * Barrier: after it returns, every event of a timer of @fd that fired
 * before the barrier began (and every event of a timer due @delay_ns after
 * it began) has been read into @out, which gets all non-sentinel events.
 *
 * Sentinel S1 is armed @delay_ns out and waited for.  The wheel may run the
 * timers of one tick handler pass in any order, so S1 can be read while
 * callbacks of its pass are still being run; S2, armed after S1 was read,
 * lands in a later pass, which starts only after that one ended.
 */
static int barrier(struct __test_metadata *_metadata, int fd,
		   uint64_t delay_ns, struct twheel_event *out, int max)
{
	struct twheel_event ev[64];
	int got = 0, stage;

	for (stage = 0; stage < 2; stage++) {
		uint64_t deadline, s;
		bool seen = false;

		test_ioctl_arm(fd, 0, stage ? 0 : delay_ns, 0, 0,
			       SENTINEL_COOKIE | stage, &s);
		deadline = now_ns() + delay_ns + EVENT_WAIT_MS * NSEC_PER_MSEC;
		while (!seen) {
			int i, n;

			n = collect(_metadata, fd, ev, 64, 1, ms_until(deadline));
			ASSERT_LT(0, n) TH_LOG("sentinel %d never fired", stage);
			for (i = 0; i < n; i++) {
				if (ev[i].handle == s) {
					EXPECT_EQ(SENTINEL_COOKIE | stage, ev[i].cookie);
					seen = true;
					continue;
				}
				ASSERT_LT(got, max) TH_LOG("too many events");
				out[got++] = ev[i];
			}
		}
	}
	return got;
}

/* Wait until every one of @handles has an unread event (query says so). */
static void wait_events_queued(struct __test_metadata *_metadata, int fd,
			       const uint64_t *handles, int n)
{
	uint64_t deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	int i = 0;

	while (i < n) {
		struct twheel_query q;

		test_ioctl_query(fd, handles[i], &q);
		if (q.out_state & TWHEEL_QUERY_EVENT) {
			i++;
			continue;
		}
		ASSERT_LT(0, ms_until(deadline))
			TH_LOG("timer %d of %d never fired", i, n);
		poll_interval();
	}
}

static void open_dev(struct __test_metadata *_metadata, int *fd,
		     struct twheel_api *api)
{
	*fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, *fd) TH_LOG("open %s: %s (is twheel.ko loaded?)",
				 TWHEEL_DEV, strerror(errno));
	ASSERT_EQ(0, _test_ioctl_api(*fd, api));
	ASSERT_EQ(TWHEEL_ABI_VERSION, api->out_abi_version);
	ASSERT_EQ(FEATURES_USED, api->out_features & FEATURES_USED);
	ASSERT_LT(0, api->out_tick_ns);
}

/* A period that is >= 1 tick and at least @ms milliseconds. */
static uint64_t period_of(const struct twheel_api *api, uint64_t ms)
{
	uint64_t p = ms * NSEC_PER_MSEC;

	return p < api->out_tick_ns ? api->out_tick_ns : p;
}

/* ---- the plain fixture: one open file ---- */

FIXTURE(twheel) {
	int fd;
	struct twheel_api api;
};

FIXTURE_SETUP(twheel)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* ---- TWHEEL_IOC_API ---- */

TEST_F(twheel, api_handshake)
{
	struct twheel_api api;

	/* every output is written by the kernel, whatever was there */
	memset(&api, 0xa5, sizeof(api));
	api.size = sizeof(api);
	api.flags = 0;
	api.__reserved = 0;
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_IOC_API, &api));
	EXPECT_EQ(sizeof(api), api.size);
	EXPECT_EQ(TWHEEL_ABI_VERSION, api.out_abi_version);
	EXPECT_EQ(sizeof(struct twheel_event), api.out_event_size);
	EXPECT_EQ(sizeof(struct twheel_batch_op), api.out_batch_op_size);
	EXPECT_EQ(0, api.__reserved);
	EXPECT_EQ(FEATURES_USED, api.out_features & FEATURES_USED);
	/* exactly one engine bit: the engine of the file's wheel */
	EXPECT_EQ(1, __builtin_popcountll(api.out_features & TWHEEL_FEATURE_ENGINE_MASK))
		TH_LOG("features %#llx", (unsigned long long)api.out_features);
	EXPECT_LT(0, api.out_tick_ns);
	EXPECT_NE(0, api.out_slots);
	EXPECT_EQ(0, api.out_slots & (api.out_slots - 1))
		TH_LOG("slots %u is not a power of two", api.out_slots);
	EXPECT_LE(4096, api.out_max_batch);
	EXPECT_LT(0, api.out_max_timers_per_fd);
	EXPECT_NE(0xa5a5a5a5a5a5a5a5ULL, api.out_max_timers_per_user);
	TH_LOG("tick %llu ns, %u slots, max_batch %u, per fd %llu, per user %llu",
	       (unsigned long long)api.out_tick_ns, api.out_slots, api.out_max_batch,
	       (unsigned long long)api.out_max_timers_per_fd,
	       (unsigned long long)api.out_max_timers_per_user);
}

/* ---- TWHEEL_IOC_ARM ---- */

/* Handles are non-zero and never reused during the life of the file. */
TEST_F(twheel, arm_handles_unique)
{
	enum { N = 1000 };
	uint64_t h[N];
	int i, j;

	for (i = 0; i < N; i++) {
		test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, i, &h[i]);
		ASSERT_NE(0, h[i]);
		/* every other one is cancelled right away: its id is free */
		if (i % 2)
			test_ioctl_cancel(self->fd, h[i], NULL);
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			ASSERT_NE(h[i], h[j]) TH_LOG("handle %d reused as %d", i, j);
}

/* The shortest legal period is one tick. */
TEST_F(twheel, arm_period_one_tick)
{
	struct twheel_event ev[16];
	uint64_t h = 0;
	uint32_t st;
	int i, n;

	test_ioctl_arm(self->fd, 0, self->api.out_tick_ns, self->api.out_tick_ns,
		       0, 77, &h);
	n = collect(_metadata, self->fd, ev, 1, 1, EVENT_WAIT_MS);
	ASSERT_EQ(1, n);
	n = collect(_metadata, self->fd, ev, 16, 1, EVENT_WAIT_MS);
	ASSERT_LE(1, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(h, ev[i].handle);
		EXPECT_EQ(77, ev[i].cookie);
		EXPECT_TRUE(ev[i].flags & TWHEEL_EVENT_PERIODIC);
	}
	test_ioctl_cancel(self->fd, h, &st);
}

/*
 * The largest legal values (2^63 - 1 ns) are accepted: relative expiries
 * saturate, nothing fires, and the timers can be queried and cancelled.
 */
TEST_F(twheel, arm_max_values)
{
	const uint64_t max = INT64_MAX;
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t h[4];
	int i;

	test_ioctl_arm(self->fd, 0, max, 0, 0, 0, &h[0]);
	test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, max, 0, 0, 1, &h[1]);
	test_ioctl_arm(self->fd, 0, max, max, max, 2, &h[2]);
	test_ioctl_arm(self->fd, 0, NSEC_PER_SEC * 3600, max, max, 3, &h[3]);
	test_ioctl_query(self->fd, h[1], &q);
	EXPECT_EQ(max, q.out_expires);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	test_ioctl_query(self->fd, h[0], &q);
	EXPECT_LT(max / 2, q.out_expires) TH_LOG("relative expiry wrapped");
	EXPECT_LT(max / 2, q.out_remaining);
	test_ioctl_query(self->fd, h[2], &q);
	EXPECT_EQ(max, q.out_period);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, _test_ioctl_cancel(self->fd, h[i], NULL));
}

/* ---- TWHEEL_IOC_CANCEL ---- */

TEST_F(twheel, cancel_pending)
{
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t h = 0, t0, t1;
	uint32_t st = 0;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, 50 * NSEC_PER_MSEC, 0, 0, 1, &h);
	test_ioctl_cancel(self->fd, h, &st);
	t1 = now_ns();
	/*
	 * Pending for certain only if the cancel came before the expiry; a
	 * slow guest may pass it, and then the event is withdrawn (FIRED).
	 */
	if (t1 < t0 + 50 * NSEC_PER_MSEC) {
		EXPECT_EQ(TWHEEL_CANCEL_PENDING, st);
	} else {
		EXPECT_TRUE(st == TWHEEL_CANCEL_PENDING ||
			    st == TWHEEL_CANCEL_FIRED)
			TH_LOG("cancel %llu ns after arming: status %u",
			       (unsigned long long)(t1 - t0), st);
	}
	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(self->fd, h, &st));
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h, &q));
	/* it never fires: nothing but the sentinels after its expiry */
	EXPECT_EQ(0, barrier(_metadata, self->fd, 100 * NSEC_PER_MSEC, ev, 8));
}

/* Cancel of a fired, unread one-shot: FIRED, and the event is withdrawn. */
TEST_F(twheel, cancel_fired_withdraws_event)
{
	struct twheel_event ev[8];
	uint64_t h = 0;
	uint32_t st = 0;

	test_ioctl_arm(self->fd, 0, 0, 0, 0, 2, &h);
	wait_events_queued(_metadata, self->fd, &h, 1);
	ASSERT_EQ(1, wait_in(self->fd, 0));
	test_ioctl_cancel(self->fd, h, &st);
	EXPECT_EQ(TWHEEL_CANCEL_FIRED, st);
	EXPECT_EQ(0, wait_in(self->fd, 0)) TH_LOG("still readable after cancel");
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(self->fd, h, &st));
}

/*
 * A periodic timer's waiting event is withdrawn by cancel as well; the
 * timer was armed until then (PENDING), however many times it fired.
 */
TEST_F(twheel, cancel_periodic_with_event)
{
	uint64_t p = period_of(&self->api, 5);
	struct twheel_event ev[8];
	uint64_t h = 0;
	uint32_t st = 0;

	test_ioctl_arm(self->fd, 0, p, p, 0, 3, &h);
	wait_events_queued(_metadata, self->fd, &h, 1);
	test_ioctl_cancel(self->fd, h, &st);
	EXPECT_EQ(TWHEEL_CANCEL_PENDING, st);
	EXPECT_EQ(0, wait_in(self->fd, 0));
	EXPECT_EQ(0, barrier(_metadata, self->fd, 5 * p, ev, 8));
}

/*
 * @status is an output.  The DOC block lists the EINVAL causes (unknown
 * flags, non-zero __reserved, ...); a status left over from a previous call
 * on the same struct is none of them.
 */
TEST_F(twheel, cancel_status_is_output_only)
{
	struct twheel_cancel c = { .size = sizeof(c) };
	uint64_t h1 = 0, h2 = 0;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h1);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 2, &h2);
	c.handle = h1;
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_IOC_CANCEL, &c));
	ASSERT_EQ(TWHEEL_CANCEL_PENDING, c.out_status);
	/* the same struct again, as a loop over handles would */
	c.handle = h2;
	EXPECT_EQ(0, ioctl(self->fd, TWHEEL_IOC_CANCEL, &c))
		TH_LOG("cancel with status=%u left from the last call: %s",
		       c.out_status, strerror(errno));
}

/* ---- TWHEEL_IOC_QUERY ---- */

TEST_F(twheel, query_pending_oneshot)
{
	const uint64_t d = 10 * NSEC_PER_SEC;
	struct twheel_query q1, q2;
	uint64_t h, t0, t1, t2;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, d, 0, 0, 0x1234, &h);
	t1 = now_ns();
	test_ioctl_query(self->fd, h, &q1);
	t2 = now_ns();
	EXPECT_EQ(h, q1.handle);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q1.out_state);
	EXPECT_EQ(0, q1.out_period);
	EXPECT_EQ(0x1234, q1.out_cookie);
	EXPECT_EQ(0, q1.flags);
	EXPECT_LE(t0 + d, q1.out_expires);
	EXPECT_GE(t1 + d, q1.out_expires);
	EXPECT_LT(0, q1.out_remaining);
	EXPECT_GE(d, q1.out_remaining);
	EXPECT_LE(q1.out_expires - t2, q1.out_remaining);
	EXPECT_GE(q1.out_expires - t0, q1.out_remaining);

	/* remaining counts down */
	pass_time_until(t2 + 3 * NSEC_PER_MSEC);
	test_ioctl_query(self->fd, h, &q2);
	EXPECT_EQ(q1.out_expires, q2.out_expires);
	EXPECT_LT(q2.out_remaining, q1.out_remaining);
	EXPECT_LE(3 * NSEC_PER_MSEC, q1.out_remaining - q2.out_remaining);
	test_ioctl_cancel(self->fd, h, NULL);
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h, &q2));
}

TEST_F(twheel, query_periodic)
{
	uint64_t p = period_of(&self->api, 50);
	struct twheel_query q;
	uint64_t h = 0;

	test_ioctl_arm(self->fd, 0, 5 * NSEC_PER_SEC, p, 0, ~0ULL, &h);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(p, q.out_period);
	EXPECT_EQ(~0ULL, q.out_cookie);
	EXPECT_LT(0, q.out_remaining);

	/*
	 * With an event waiting it is still pending: it re-armed itself, and
	 * while its callback runs it counts as pending too (the header: a
	 * periodic timer is always pending).
	 */
	test_ioctl_modify(self->fd, h, 0, 0, p, 0, 5);
	wait_events_queued(_metadata, self->fd, &h, 1);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING | TWHEEL_QUERY_EVENT, q.out_state);
	EXPECT_EQ(p, q.out_period);
	EXPECT_EQ(5, q.out_cookie);
	test_ioctl_cancel(self->fd, h, NULL);
}

/* EVENT while unread, then the one-shot ends when its event is read. */
TEST_F(twheel, query_event_state)
{
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t h = 0;

	test_ioctl_arm(self->fd, 0, 0, 0, 0, 9, &h);
	wait_events_queued(_metadata, self->fd, &h, 1);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_EVENT, q.out_state);
	EXPECT_EQ(0, q.out_remaining);
	EXPECT_EQ(9, q.out_cookie);
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h, &q));
}

/* Output fields of struct twheel_query are not input: reusing it works. */
TEST_F(twheel, query_outputs_are_output_only)
{
	struct twheel_query q = { .size = sizeof(q) };
	uint64_t h = 0;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 42, &h);
	q.handle = h;
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_IOC_QUERY, &q));
	ASSERT_EQ(42, q.out_cookie);
	/* the same struct again, as a polling loop would */
	EXPECT_EQ(0, ioctl(self->fd, TWHEEL_IOC_QUERY, &q))
		TH_LOG("second query on the same struct: %s", strerror(errno));
}

/* ---- TWHEEL_IOC_MODIFY ---- */

/* Moved later: it does not fire at the old time, but after the new one. */
TEST_F(twheel, modify_later)
{
	const uint64_t later = 400 * NSEC_PER_MSEC;
	struct twheel_event ev[8];
	uint64_t h, s, t0, t1;
	bool seen_s = false;
	int i, n;

	test_ioctl_arm(self->fd, 0, 30 * NSEC_PER_MSEC, 0, 0, 1, &h);
	t0 = now_ns();
	test_ioctl_modify(self->fd, h, 0, later, 0, 0, 2);
	t1 = now_ns();
	/* a sentinel between the old and the new expiry comes first */
	test_ioctl_arm(self->fd, 0, 150 * NSEC_PER_MSEC, 0, 0, 3, &s);
	while (!seen_s) {
		n = collect(_metadata, self->fd, ev, 8, 1, EVENT_WAIT_MS);
		ASSERT_LT(0, n);
		for (i = 0; i < n; i++) {
			if (ev[i].handle == s) {
				seen_s = true;
				continue;
			}
			EXPECT_GE(ev[i].expires, t0 + later)
				TH_LOG("fired at the old expiry");
			EXPECT_EQ(h, ev[i].handle);
			goto check_h;	/* already here: check it below */
		}
	}
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 1, 1, EVENT_WAIT_MS));
	i = 0;
check_h:
	EXPECT_EQ(h, ev[i].handle);
	EXPECT_EQ(2, ev[i].cookie);
	EXPECT_LE(t0 + later, ev[i].expires);
	EXPECT_GE(t1 + later, ev[i].expires);
	EXPECT_LE(ev[i].expires, ev[i].fired);
}

TEST_F(twheel, modify_earlier)
{
	const uint64_t d = 20 * NSEC_PER_MSEC;
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t h, t0, t1;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	t0 = now_ns();
	test_ioctl_modify(self->fd, h, 0, d, 0, 0, 2);
	t1 = now_ns();
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS))
		TH_LOG("did not fire after being moved earlier");
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(2, ev.cookie);
	EXPECT_LE(t0 + d, ev.expires);
	EXPECT_GE(t1 + d, ev.expires);
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h, &q));
}

/* Absolute modify, to a time already past: fires at once. */
TEST_F(twheel, modify_abs_past)
{
	struct twheel_event ev;
	uint64_t h, t;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	t = now_ns() - NSEC_PER_SEC;
	test_ioctl_modify(self->fd, h, TWHEEL_ARM_ABS, t, 0, 0, 7);
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(7, ev.cookie);
	EXPECT_EQ(t, ev.expires);
}

/* An unread event is withdrawn by modify, as timerfd_settime does. */
TEST_F(twheel, modify_withdraws_event)
{
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t h = 0;

	test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h);
	wait_events_queued(_metadata, self->fd, &h, 1);
	test_ioctl_modify(self->fd, h, 0, 3600 * NSEC_PER_SEC, 0, 0, 2);
	EXPECT_EQ(0, wait_in(self->fd, 0)) TH_LOG("event survived modify");
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(2, q.out_cookie);
	EXPECT_LT(3000 * NSEC_PER_SEC, q.out_remaining);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
}

/*
 * The same in a batch, whose locked pass leaves that record to the
 * single-timer path; a pending timer modified after it is re-armed under
 * the lock.
 */
TEST_F(twheel, batch_modify_withdraws_event)
{
	struct twheel_batch_op ops[2];
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t h = 0, far = 0;
	uint32_t done = 0;

	test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 3, &far);
	wait_events_queued(_metadata, self->fd, &h, 1);
	op_modify(&ops[0], h, 3600 * NSEC_PER_SEC, 2);
	op_modify(&ops[1], far, 7200 * NSEC_PER_SEC, 4);
	test_ioctl_batch(self->fd, ops, 2, &done);
	EXPECT_EQ(2, done);
	EXPECT_EQ(0, wait_in(self->fd, 0)) TH_LOG("event survived modify");
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(2, q.out_cookie);
	EXPECT_LT(3000 * NSEC_PER_SEC, q.out_remaining);
	test_ioctl_query(self->fd, far, &q);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(4, q.out_cookie);
	EXPECT_LT(7000 * NSEC_PER_SEC, q.out_remaining);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
}

/* Modify may turn a one-shot timer into a periodic one. */
TEST_F(twheel, modify_to_periodic)
{
	uint64_t p = period_of(&self->api, 10);
	struct twheel_event ev[4];
	struct twheel_query q;
	uint64_t h = 0;
	int i;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	test_ioctl_modify(self->fd, h, 0, p, p, 0, 8);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(p, q.out_period);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(1, collect(_metadata, self->fd, &ev[i], 1, 1, EVENT_WAIT_MS));
		EXPECT_EQ(h, ev[i].handle);
		EXPECT_EQ(8, ev[i].cookie);
		EXPECT_EQ(TWHEEL_EVENT_PERIODIC, ev[i].flags);
	}
	EXPECT_EQ(ev[0].expires + p * (1 + ev[0].overrun), ev[1].expires);
	/* still alive after its events were read */
	test_ioctl_cancel(self->fd, h, NULL);
}

/* ---- TWHEEL_IOC_BATCH ---- */

/*
 * MODIFY of a periodic timer whose unread event has counted overruns:
 * the event is withdrawn, and the first event of the new arming is for
 * the new expiry, its overrun counted from there, not carried over.
 */
TEST_F(twheel, modify_periodic_restarts_overrun)
{
	uint64_t p = period_of(&self->api, 5), h, t0, t1, ta;
	struct twheel_event ev;
	struct twheel_query q;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, p, p, 0, 1, &h);
	pass_time_until(t0 + 10 * p);	/* leave it unread on purpose */
	wait_events_queued(_metadata, self->fd, &h, 1);
	t1 = now_ns() + 50 * p;
	test_ioctl_modify(self->fd, h, TWHEEL_ARM_ABS, t1, p, 0, 2);
	test_ioctl_query(self->fd, h, &q);
	/* nothing of the new arming can be queued before t1 */
	if (now_ns() < t1)
		EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state)
			TH_LOG("the old event was not withdrawn");
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	ta = now_ns();
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(2, ev.cookie);
	EXPECT_EQ(t1, ev.expires) TH_LOG("an event of the old arming");
	/* at most the periods that passed between t1 and the read */
	EXPECT_GE((ta - t1) / p, ev.overrun);
	test_ioctl_cancel(self->fd, h, NULL);
}

TEST_F(twheel, batch_mixed_ops)
{
	struct twheel_batch_op ops[5];
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t far, mod, abs_t;
	uint32_t done = 0, failed = 7;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &far);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 2, &mod);
	abs_t = now_ns() + 3600 * NSEC_PER_SEC;
	op_arm(&ops[0], 0, 3600 * NSEC_PER_SEC, 0, 100);
	op_arm(&ops[1], TWHEEL_ARM_ABS, abs_t, 0, 101);
	op_modify(&ops[2], mod, 7200 * NSEC_PER_SEC, 102);
	op_cancel(&ops[3], far);
	op_arm(&ops[4], 0, 0, 0, 104);
	ASSERT_EQ(5, _test_ioctl_batch_sz(self->fd, ops, 5, sizeof(ops[0]),
					  &done, &failed));
	EXPECT_EQ(5, done);
	EXPECT_EQ(0, failed);
	/* out_result: written for ARM, left alone for a MODIFY or CANCEL that worked */
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(0, ops[1].out_result);
	EXPECT_EQ(RESULT_POISON, ops[2].out_result);
	EXPECT_EQ(RESULT_POISON, ops[3].out_result);
	EXPECT_EQ(0, ops[4].out_result);
	EXPECT_NE(0, ops[0].handle);
	EXPECT_NE(0, ops[1].handle);
	EXPECT_NE(ops[0].handle, ops[1].handle);
	EXPECT_NE(far, ops[0].handle);
	EXPECT_NE(mod, ops[1].handle);
	/* the records' inputs are left alone */
	EXPECT_EQ(TWHEEL_OP_MODIFY, ops[2].op);
	EXPECT_EQ(mod, ops[2].handle);
	EXPECT_EQ(far, ops[3].handle);

	test_ioctl_query(self->fd, ops[0].handle, &q);
	EXPECT_EQ(100, q.out_cookie);
	test_ioctl_query(self->fd, ops[1].handle, &q);
	EXPECT_EQ(101, q.out_cookie);
	EXPECT_EQ(abs_t, q.out_expires);
	test_ioctl_query(self->fd, mod, &q);
	EXPECT_EQ(102, q.out_cookie);
	EXPECT_LT(3600 * NSEC_PER_SEC, q.out_remaining);
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, far, &q));
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(ops[4].handle, ev.handle);
	EXPECT_EQ(104, ev.cookie);
}

/* Failing records in the middle: the others are processed, each gets its result. */
TEST_F(twheel, batch_bad_records_in_middle)
{
	struct twheel_batch_op ops[10];
	struct twheel_query q;
	uint64_t live, h8;
	uint32_t done = 0, failed = 0;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &live);
	op_arm(&ops[0], 0, 3600 * NSEC_PER_SEC, 0, 10);
	op_arm(&ops[1], 0, 3600 * NSEC_PER_SEC, 0, 11);
	ops[1].op = 0;					/* unknown operation */
	op_arm(&ops[2], 1U << 1, 3600 * NSEC_PER_SEC, 0, 12);	/* unknown flag */
	op_cancel(&ops[3], 0xdead00000000beefULL);	/* unknown handle */
	op_modify(&ops[4], 0xdead00000000beefULL, NSEC_PER_SEC, 14);
	op_cancel(&ops[5], live);
	ops[5].spec.flags = 1U << 31;		/* CANCEL ignores the spec */
	ops[5].spec.__reserved = 1;
	ops[5].spec.expires = 1ULL << 63;
	op_arm(&ops[6], 0, NSEC_PER_SEC, self->api.out_tick_ns - 1, 16); /* period < tick */
	op_arm(&ops[7], 0, 3600 * NSEC_PER_SEC, 0, 17);
	op_arm(&ops[8], 0, 3600 * NSEC_PER_SEC, 0, 18);
	ops[8].op = UINT32_MAX;			/* unknown, the largest code */
	ops[8].handle = 0x1234;
	h8 = ops[8].handle;
	op_arm(&ops[9], 0, 1ULL << 63, 0, 19);		/* negative expiry */

	ASSERT_EQ(10, _test_ioctl_batch_sz(self->fd, ops, 10, sizeof(ops[0]),
					   &done, &failed));
	EXPECT_EQ(10, done);
	EXPECT_EQ(7, failed);
	EXPECT_EQ(0, ops[0].out_result);
	EXPECT_EQ(-EINVAL, ops[1].out_result);
	EXPECT_EQ(-EINVAL, ops[2].out_result);
	EXPECT_EQ(-ENOENT, ops[3].out_result);
	EXPECT_EQ(-ENOENT, ops[4].out_result);
	EXPECT_EQ(RESULT_POISON, ops[5].out_result);
	EXPECT_EQ(-EINVAL, ops[6].out_result);
	EXPECT_EQ(0, ops[7].out_result);
	EXPECT_EQ(-EINVAL, ops[8].out_result);
	EXPECT_EQ(-EINVAL, ops[9].out_result);

	test_ioctl_query(self->fd, ops[0].handle, &q);
	EXPECT_EQ(10, q.out_cookie);
	test_ioctl_query(self->fd, ops[7].handle, &q);
	EXPECT_EQ(17, q.out_cookie);
	/* the CANCEL with a garbage spec worked */
	test_err_query(ENOENT, self->fd, live, &q);
	/* a failed ARM does not write its handle */
	EXPECT_EQ(h8, ops[8].handle);
}

/*
 * A record's spec has a __reserved field that must be zero, as the
 * ioctls' have: an ARM or MODIFY record with it set fails with EINVAL
 * and changes nothing.
 */
TEST_F(twheel, batch_spec_reserved_einval)
{
	struct twheel_batch_op ops[2];
	struct twheel_query q;
	uint32_t done = 0, failed = 0;
	uint64_t live;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &live);
	op_arm(&ops[0], 0, 3600 * NSEC_PER_SEC, 0, 10);
	ops[0].spec.__reserved = 1;
	op_modify(&ops[1], live, 7200 * NSEC_PER_SEC, 11);
	ops[1].spec.__reserved = 1;
	ASSERT_EQ(2, _test_ioctl_batch_sz(self->fd, ops, 2, sizeof(ops[0]),
					  &done, &failed));
	EXPECT_EQ(2, failed);
	EXPECT_EQ(-EINVAL, ops[0].out_result);
	EXPECT_EQ(-EINVAL, ops[1].out_result);
	EXPECT_EQ(1, fd_timers(self->fd));
	test_ioctl_query(self->fd, live, &q);
	EXPECT_EQ(1, q.out_cookie);
	EXPECT_GT(3600 * NSEC_PER_SEC, q.out_remaining);
}

/*
 * The batch's return value is the authority: when out_done cannot be
 * written back (the struct twheel_batch is read-only), the records were
 * still processed and the ioctl returns their number, not EFAULT.
 */
TEST_F(twheel, batch_readonly_struct_returns_count)
{
	struct twheel_batch b = { .size = sizeof(b), .count = 1 }, *ro;
	struct twheel_batch_op op;
	struct twheel_query q;

	op_arm(&op, 0, 3600 * NSEC_PER_SEC, 0, 5);
	b.op_size = sizeof(op);
	b.ops = (uintptr_t)&op;
	ro = readonly_copy(&b, sizeof(b));
	ASSERT_NONNULL(ro);
	EXPECT_EQ(1, ioctl(self->fd, TWHEEL_IOC_BATCH, ro))
		TH_LOG("ioctl: %s", strerror(errno));
	EXPECT_EQ(0, ro->out_done);
	EXPECT_EQ(0, op.out_result);
	test_ioctl_query(self->fd, op.handle, &q);
	EXPECT_EQ(5, q.out_cookie);
	munmap(ro, page_size());
}

/* Where a batch's ops array stops being usable, at a page end. */
enum batch_fault {
	FAULT_UNMAPPED,		/* the next page is not mapped */
	FAULT_STRADDLE,		/* the same, a record crossing into it */
	FAULT_READONLY,		/* the next page is readable, not writable */
};

/*
 * The ops array runs into an unmapped page: the batch stops at the first
 * record it cannot read, returns how many it processed, and the records
 * before were written back.  Or into a read-only page: the batch reports
 * the records before the first it cannot write back, returns how many,
 * and undoes the ARMs it could not report -- they would fire (their
 * expiry is 0) without the caller ever getting their handles.
 */
static void batch_partial_fault(struct __test_metadata *_metadata, int fd,
				enum batch_fault fault)
{
	const uint32_t k = 5, count = 9;
	bool straddle = fault == FAULT_STRADDLE;
	struct twheel_batch_op *ops;
	struct twheel_event ev[8];
	struct twheel_batch b;
	struct twheel_query q;
	long psz = page_size();
	char *map;
	uint32_t i;
	int ret;

	map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_MAPPED(map);
	ops = (struct twheel_batch_op *)(map + psz - k * sizeof(*ops) -
					 (straddle ? 24 : 0));
	for (i = 0; i < k; i++)
		op_arm(&ops[i], 0, 3600 * NSEC_PER_SEC, 0, 500 + i);
	if (fault == FAULT_READONLY) {
		for (i = k; i < count; i++)
			op_arm(&ops[i], 0, 0, 0, 500 + i);
		ASSERT_EQ(0, mprotect(map + psz, psz, PROT_READ));
	} else {
		ASSERT_EQ(0, munmap(map + psz, psz));
	}
	if (straddle) {
		/* the readable part of record k: op, flags, handle */
		ops[k].op = TWHEEL_OP_ARM;
		ops[k].spec.flags = 0;
		ops[k].handle = 0x1111;
	}

	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.op_size = sizeof(*ops);
	b.ops = (uintptr_t)ops;
	b.count = count;
	ret = ioctl(fd, TWHEEL_IOC_BATCH, &b);
	ASSERT_EQ(k, ret) TH_LOG("ioctl: %d (%s)", ret, strerror(errno));
	EXPECT_EQ(k, b.out_done);
	for (i = 0; i < k; i++) {
		EXPECT_EQ(0, ops[i].out_result) TH_LOG("record %u", i);
		test_ioctl_query(fd, ops[i].handle, &q) TH_LOG("record %u", i);
		EXPECT_EQ(500 + i, q.out_cookie);
	}
	if (straddle) {
		EXPECT_EQ(TWHEEL_OP_ARM, ops[k].op);
		EXPECT_EQ(0x1111, ops[k].handle);
	}
	EXPECT_EQ(0, barrier(_metadata, fd, 0, ev, 8))
		TH_LOG("a timer the caller got no handle for fired");
	munmap(map, fault == FAULT_READONLY ? 2 * psz : psz);
}

TEST_F(twheel, batch_partial_fault_page)
{
	batch_partial_fault(_metadata, self->fd, FAULT_UNMAPPED);
}

TEST_F(twheel, batch_partial_fault_straddle)
{
	batch_partial_fault(_metadata, self->fd, FAULT_STRADDLE);
}

TEST_F(twheel, batch_report_fault_mid_run)
{
	batch_partial_fault(_metadata, self->fd, FAULT_READONLY);
}

/*
 * A CANCEL may name the timer that an ARM earlier in its run has just
 * armed: a handle is a table index and a generation, both predictable.
 * When that ARM's output then cannot be written, the ARM is not undone
 * on top of the CANCEL: the table entry is freed once, the file counts
 * no timer, and the next two ARMs get entries of their own.
 */
TEST_F(twheel, batch_undo_skips_arm_cancelled_in_run)
{
	struct twheel_batch b = { .size = sizeof(b), .count = 2 };
	struct twheel_batch_op ops[2], *ro;
	uint64_t h, h1, h2;

	/* the entry the batch's ARM takes, and the handle it will get */
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	test_ioctl_cancel(self->fd, h, NULL);
	op_arm(&ops[0], 0, 3600 * NSEC_PER_SEC, 0, 2);
	op_cancel(&ops[1], h + (1ULL << 32));
	ro = readonly_copy(ops, sizeof(ops));
	ASSERT_NE(0, (uintptr_t)ro);
	b.op_size = sizeof(ops[0]);
	b.ops = (uintptr_t)ro;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, TWHEEL_IOC_BATCH, &b));
	EXPECT_EQ(0, fd_timers(self->fd));
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 3, &h1);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 4, &h2);
	ASSERT_NE((uint32_t)h1, (uint32_t)h2) TH_LOG("one table entry, twice");
	EXPECT_EQ(2, fd_timers(self->fd));
	munmap(ro, page_size());
}

/*
 * When an ARM's handle cannot be written back, the ARM is undone, but the
 * CANCEL and MODIFY records of its run have taken effect (the header says
 * so): the caller gets EFAULT and must not assume that nothing happened.
 */
TEST_F(twheel, batch_report_fault_keeps_cancel_and_modify)
{
	struct twheel_batch b = { .size = sizeof(b), .count = 3 };
	struct twheel_batch_op ops[3], *ro;
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t c, m;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 10, &c);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 11, &m);
	op_arm(&ops[0], 0, 0, 0, 1);
	op_cancel(&ops[1], c);
	op_modify(&ops[2], m, 7200 * NSEC_PER_SEC, 5);
	ro = readonly_copy(ops, sizeof(ops));
	ASSERT_NONNULL(ro);
	b.op_size = sizeof(ops[0]);
	b.ops = (uintptr_t)ro;
	EXPECT_ERRNO(EFAULT, ioctl(self->fd, TWHEEL_IOC_BATCH, &b));
	test_err_query(ENOENT, self->fd, c, &q);
	test_ioctl_query(self->fd, m, &q);
	EXPECT_EQ(5, q.out_cookie);
	EXPECT_EQ(1, fd_timers(self->fd)) TH_LOG("the ARM was not undone");
	/* the undone ARM (due at once) never fires */
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
	munmap(ro, page_size());
}

TEST_F(twheel, batch_e2big)
{
	uint32_t n = self->api.out_max_batch + 1, i;
	struct twheel_batch_op *ops = calloc(n, sizeof(*ops));
	struct twheel_batch b;
	struct twheel_event ev[8];

	ASSERT_NONNULL(ops);
	for (i = 0; i < n; i++)
		op_arm(&ops[i], 0, 0, 0, i);
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.op_size = sizeof(*ops);
	b.ops = (uintptr_t)ops;
	b.count = n;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_BATCH, &b));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(0, b.out_done);
	b.count = UINT32_MAX;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_IOC_BATCH, &b));
	EXPECT_EQ(E2BIG, errno);
	/* nothing was processed */
	EXPECT_EQ(RESULT_POISON, ops[0].out_result);
	EXPECT_EQ(RESULT_POISON, ops[n - 1].out_result);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 8));
	free(ops);
}

/* Exactly max_batch records are accepted. */
TEST_F(twheel, batch_max_count)
{
	uint32_t n = self->api.out_max_batch, i, done = 0, failed = 0;
	struct twheel_batch_op *ops = calloc(n, sizeof(*ops));

	ASSERT_NONNULL(ops);
	for (i = 0; i < n; i++)
		op_cancel(&ops[i], 0xffffffff00000000ULL | i);
	ASSERT_EQ(n, _test_ioctl_batch_sz(self->fd, ops, n, sizeof(*ops),
					  &done, &failed));
	EXPECT_EQ(n, done);
	EXPECT_EQ(n, failed);
	for (i = 0; i < n; i++)
		if (ops[i].out_result != -ENOENT)
			break;
	EXPECT_EQ(n, i) TH_LOG("record %u: result %lld", i,
			       i < n ? (long long)ops[i].out_result : 0);
	free(ops);
}

TEST_F(twheel, batch_count_zero)
{
	struct twheel_batch_op op;
	uint32_t done = 7;

	op_arm(&op, 0, 0, 0, 1);
	EXPECT_EQ(0, _test_ioctl_batch(self->fd, &op, 0, &done));
	EXPECT_EQ(0, done);
	EXPECT_EQ(RESULT_POISON, op.out_result);
}

/* @done is an output: a struct twheel_batch can be reused for the next batch. */
TEST_F(twheel, batch_done_is_output_only)
{
	struct twheel_batch_op op;
	struct twheel_batch b;

	op_arm(&op, 1U << 30, 3600 * NSEC_PER_SEC, 0, 1);	/* fails */
	memset(&b, 0, sizeof(b));
	b.size = sizeof(b);
	b.op_size = sizeof(op);
	b.ops = (uintptr_t)&op;
	b.count = 1;
	ASSERT_EQ(1, ioctl(self->fd, TWHEEL_IOC_BATCH, &b));
	ASSERT_EQ(1, b.out_done);
	ASSERT_EQ(1, b.out_failed);
	op_arm(&op, 0, 3600 * NSEC_PER_SEC, 0, 2);
	EXPECT_EQ(1, ioctl(self->fd, TWHEEL_IOC_BATCH, &b))
		TH_LOG("second batch with done=%u failed=%u left from the first: %s",
		       b.out_done, b.out_failed, strerror(errno));
	EXPECT_EQ(0, b.out_failed);
}

/* ---- read() ---- */

TEST_F(twheel, read_short_buffer_einval)
{
	struct twheel_event ev[2];
	uint64_t h = 0;

	EXPECT_EQ(-1, read(self->fd, ev, EV_SIZE - 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, ev, 0));
	EXPECT_EQ(EINVAL, errno);
	/* also while an event waits, which stays */
	test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h);
	wait_events_queued(_metadata, self->fd, &h, 1);
	EXPECT_EQ(-1, read(self->fd, ev, EV_SIZE - 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 2, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev[0].handle);
}

TEST_F(twheel, read_nonblock_eagain)
{
	struct twheel_event ev;
	uint64_t h = 0;
	int fd = open(TWHEEL_DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	/* a pending timer is no event */
	test_ioctl_arm(fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	EXPECT_EQ(-1, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	/* and an event that waits is returned */
	test_ioctl_arm(fd, 0, 0, 0, 0, 2, &h);
	wait_events_queued(_metadata, fd, &h, 1);
	ASSERT_EQ(EV_SIZE, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(h, ev.handle);
	/* O_NONBLOCK set later with fcntl() counts too */
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
	close(fd);
}

static void sigalrm_nop(int sig)
{
	(void)sig;
}

/* A blocking read() sleeps until the timer fires and returns its event. */
TEST_F(twheel, read_blocking_wakes_on_fire)
{
	const uint64_t d = 100 * NSEC_PER_MSEC;
	struct sigaction sa = { .sa_handler = sigalrm_nop };
	struct twheel_event ev[4];
	uint64_t h, t0, t1;
	ssize_t n;

	/* a bound on the read: SIGALRM without SA_RESTART gives EINTR */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, d, 0, 0, 5, &h);
	alarm(EVENT_WAIT_MS / 1000);
	n = read(self->fd, ev, sizeof(ev));
	alarm(0);
	t1 = now_ns();
	ASSERT_EQ(EV_SIZE, n) TH_LOG("read: %s", strerror(errno));
	check_event(_metadata, &ev[0], t1);
	EXPECT_EQ(h, ev[0].handle);
	EXPECT_EQ(5, ev[0].cookie);
	EXPECT_LE(t0 + d, t1) TH_LOG("read returned before the expiry");
}

/* A large buffer gets every waiting event, a partial one only whole events. */
TEST_F(twheel, read_whole_events)
{
	enum { N = 10 };
	struct twheel_event ev[64];
	uint64_t h[N];
	bool seen[N] = { 0 };
	ssize_t n;
	int i, j;

	for (i = 0; i < N; i++)
		test_ioctl_arm(self->fd, 0, 0, 0, 0, i, &h[i]);
	wait_events_queued(_metadata, self->fd, h, N);
	/* 2.5 events of room: two whole events */
	n = read(self->fd, ev, 2 * EV_SIZE + EV_SIZE / 2);
	ASSERT_EQ(2 * EV_SIZE, n);
	n = read(self->fd, &ev[2], sizeof(ev) - 2 * EV_SIZE);
	ASSERT_EQ((N - 2) * EV_SIZE, n);
	for (i = 0; i < N; i++) {
		check_event(_metadata, &ev[i], now_ns());
		ASSERT_GT(N, ev[i].cookie);
		j = ev[i].cookie;
		EXPECT_FALSE(seen[j]) TH_LOG("event %d twice", j);
		seen[j] = true;
		EXPECT_EQ(h[j], ev[i].handle);
	}
	EXPECT_EQ(0, wait_in(self->fd, 0));
}

/* A read() that cannot write its buffer fails with EFAULT; no event is lost. */
TEST_F(twheel, read_efault_keeps_events)
{
	enum { N = 3 };
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t h[N];
	bool seen[N] = { 0 };
	void *bad;
	int i;

	for (i = 0; i < N; i++)
		test_ioctl_arm(self->fd, 0, 0, 0, 0, i, &h[i]);
	wait_events_queued(_metadata, self->fd, h, N);
	bad = unmapped_page();
	ASSERT_NONNULL(bad);
	EXPECT_EQ(-1, read(self->fd, bad, 8 * EV_SIZE));
	EXPECT_EQ(EFAULT, errno);
	/* syscall(): read() is declared nonnull */
	EXPECT_EQ(-1, syscall(SYS_read, self->fd, NULL, 8 * EV_SIZE));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(1, wait_in(self->fd, 0));
	for (i = 0; i < N; i++) {
		test_ioctl_query(self->fd, h[i], &q);
		EXPECT_EQ(TWHEEL_QUERY_EVENT, q.out_state);
	}
	ASSERT_EQ(N, collect(_metadata, self->fd, ev, 8, N, EVENT_WAIT_MS));
	for (i = 0; i < N; i++) {
		ASSERT_GT(N, ev[i].cookie);
		EXPECT_FALSE(seen[ev[i].cookie]);
		seen[ev[i].cookie] = true;
		EXPECT_EQ(h[ev[i].cookie], ev[i].handle);
	}
	EXPECT_EQ(0, drain(_metadata, self->fd, ev, 8));
}

/*
 * Events are read oldest first, and a read() that could not copy them out
 * gives them back in the same order.
 */
TEST_F(twheel, read_oldest_first)
{
	enum { N = 3 };
	struct twheel_event ev[N];
	uint64_t h[N];
	void *bad;
	int i;

	/* each fired and queued before the next is armed */
	for (i = 0; i < N; i++) {
		test_ioctl_arm(self->fd, 0, 0, 0, 0, i, &h[i]);
		wait_events_queued(_metadata, self->fd, &h[i], 1);
	}
	bad = unmapped_page();
	ASSERT_NONNULL(bad);
	test_err_read(EFAULT, self->fd, bad, N * EV_SIZE);
	ASSERT_EQ(N * EV_SIZE, read(self->fd, ev, N * EV_SIZE));
	for (i = 0; i < N; i++) {
		check_event(_metadata, &ev[i], now_ns());
		EXPECT_EQ(h[i], ev[i].handle) TH_LOG("event %d", i);
	}
}

/*
 * The buffer ends in an unmapped page part-way through the events: what
 * read() cannot copy stays queued.  Every event is read exactly once over
 * this read() and the next ones, whatever the first one returned.
 */
TEST_F(twheel, read_efault_partway_keeps_events)
{
	enum { N = 100, FIT = 70 };
	struct twheel_event ev[N];
	struct twheel_batch_op ops[N];
	const long psz = page_size();
	const size_t len = N * EV_SIZE, maplen = len + 2 * psz;
	/* FIT whole events and half of the next one are writable */
	const size_t good = FIT * EV_SIZE + EV_SIZE / 2;
	const size_t end = (good + psz - 1) / psz * psz;
	bool seen[N] = { 0 };
	uint64_t hs[N];
	int i, got = 0;
	uint32_t done;
	char *map, *buf;
	ssize_t n;

	for (i = 0; i < N; i++)
		op_arm(&ops[i], 0, 0, 0, i);
	ASSERT_EQ(N, _test_ioctl_batch(self->fd, ops, N, &done));
	for (i = 0; i < N; i++)
		hs[i] = ops[i].handle;
	wait_events_queued(_metadata, self->fd, hs, N);

	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_MAPPED(map);
	ASSERT_EQ(0, munmap(map + end, maplen - end));
	buf = map + end - good;
	n = read(self->fd, buf, len);
	TH_LOG("read() with room for %d.5 events returned %zd", FIT, n);
	if (n < 0) {
		EXPECT_EQ(EFAULT, errno);
	} else {
		EXPECT_EQ(0, n % EV_SIZE);
		EXPECT_GE(FIT * EV_SIZE, n);
		got = n / EV_SIZE;
		memcpy(ev, buf, got * EV_SIZE);
	}
	got += collect(_metadata, self->fd, &ev[got], N - got, N - got, EVENT_WAIT_MS);
	EXPECT_EQ(N, got);
	for (i = 0; i < got; i++) {
		check_event(_metadata, &ev[i], now_ns());
		ASSERT_GT(N, ev[i].cookie);
		EXPECT_FALSE(seen[ev[i].cookie]) TH_LOG("event %d twice", (int)ev[i].cookie);
		seen[ev[i].cookie] = true;
		EXPECT_EQ(ops[ev[i].cookie].handle, ev[i].handle);
	}
	munmap(map, end);
}

/*
 * A periodic timer's event that read() could not copy is kept, and the
 * expirations it missed meanwhile are merged into it: the expiry of the
 * event after it still moves by exactly (1 + overrun) periods.
 */
TEST_F(twheel, read_efault_periodic_keeps_count)
{
	uint64_t p = period_of(&self->api, 5);
	struct twheel_event ev[2];
	uint64_t h, t0, t1;
	void *bad;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, p, p, 0, 1, &h);
	t1 = now_ns();
	wait_events_queued(_metadata, self->fd, &h, 1);
	bad = unmapped_page();
	ASSERT_NONNULL(bad);
	EXPECT_EQ(-1, read(self->fd, bad, sizeof(ev)));
	EXPECT_EQ(EFAULT, errno);
	pass_time_until(now_ns() + 4 * p);	/* let it expire meanwhile */
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev[0], 1, 1, EVENT_WAIT_MS));
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev[1], 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev[0].handle);
	EXPECT_EQ(h, ev[1].handle);
	/* the first expiry was kept, not replaced by a later one */
	EXPECT_LE(t0 + p, ev[0].expires);
	EXPECT_GE(t1 + p, ev[0].expires);
	EXPECT_EQ(ev[0].expires + p * (1 + ev[0].overrun), ev[1].expires);
	test_ioctl_cancel(self->fd, h, NULL);
}

/* A signal ends a blocking read() with EINTR; nothing is lost. */
TEST_F(twheel, read_blocking_interrupted)
{
	struct sigaction sa = { .sa_handler = sigalrm_nop };
	/*
	 * Every 100 ms until the read returns: a signal that comes before
	 * read() blocks is followed by one that finds it blocked.
	 */
	struct itimerval it = {
		.it_interval = { .tv_usec = 100000 },
		.it_value = { .tv_usec = 100000 },
	};
	struct itimerval off = { 0 };
	struct twheel_event ev;
	uint64_t h;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));	/* no SA_RESTART */
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(EINTR, errno);
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &off, NULL));
	test_ioctl_modify(self->fd, h, 0, 0, 0, 0, 2);
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(2, ev.cookie);
}

/* ---- one-shot delivery ---- */

TEST_F(twheel, oneshot_relative)
{
	enum { N = 16 };
	struct twheel_event ev[N];
	uint64_t h[N], t0[N], t1[N], rel[N];
	bool seen[N] = { 0 };
	struct twheel_query q;
	int i, j;

	for (i = 0; i < N; i++) {
		rel[i] = (i + 1) * 5 * NSEC_PER_MSEC;
		t0[i] = now_ns();
		/* half of them with slack: still never early */
		test_ioctl_arm(self->fd, 0, rel[i], 0,
			       i % 2 ? 3 * NSEC_PER_MSEC : 0, 1000 + i, &h[i]);
		t1[i] = now_ns();
	}
	ASSERT_EQ(N, collect(_metadata, self->fd, ev, N, N, EVENT_WAIT_MS));
	for (i = 0; i < N; i++) {
		ASSERT_LE(1000, ev[i].cookie);
		ASSERT_GT(1000 + N, ev[i].cookie);
		j = ev[i].cookie - 1000;
		EXPECT_FALSE(seen[j]);
		seen[j] = true;
		EXPECT_EQ(h[j], ev[i].handle);
		EXPECT_EQ(0, ev[i].flags);
		EXPECT_LE(t0[j] + rel[j], ev[i].expires);
		EXPECT_GE(t1[j] + rel[j], ev[i].expires);
		EXPECT_LE(t0[j] + rel[j], ev[i].fired);
	}
	/* read: the one-shot timers are gone */
	for (i = 0; i < N; i++)
		EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h[i], &q));
	EXPECT_EQ(0, wait_in(self->fd, 0));
}

TEST_F(twheel, oneshot_absolute)
{
	enum { N = 8 };
	struct twheel_event ev[N];
	uint64_t h[N], at[N], base = now_ns();
	bool seen[N] = { 0 };
	int i, j;

	for (i = 0; i < N; i++) {
		at[i] = base + (i + 1) * 7 * NSEC_PER_MSEC + i;
		test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, at[i], 0, 0, i, &h[i]);
	}
	ASSERT_EQ(N, collect(_metadata, self->fd, ev, N, N, EVENT_WAIT_MS));
	for (i = 0; i < N; i++) {
		ASSERT_GT(N, ev[i].cookie);
		j = ev[i].cookie;
		EXPECT_FALSE(seen[j]);
		seen[j] = true;
		EXPECT_EQ(h[j], ev[i].handle);
		EXPECT_EQ(at[j], ev[i].expires);
		EXPECT_LE(at[j], ev[i].fired);
	}
}

/* An expiry in the past (absolute or relative 0) fires promptly. */
TEST_F(twheel, oneshot_past_fires_promptly)
{
	struct twheel_event ev[4];
	uint64_t h[4], t0, t1, at[4];
	bool seen[4] = { 0 };
	int i, j;

	t0 = now_ns();
	at[0] = 1;				/* the dawn of CLOCK_MONOTONIC */
	at[1] = t0 - NSEC_PER_SEC;
	at[2] = t0;
	test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, at[0], 0, 0, 0, &h[0]);
	test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, at[1], 0, 0, 1, &h[1]);
	test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, at[2], 0, 0, 2, &h[2]);
	test_ioctl_arm(self->fd, 0, 0, 0, 0, 3, &h[3]);
	/* how soon is logged, not asserted: TCG hosts vary */
	ASSERT_EQ(4, collect(_metadata, self->fd, ev, 4, 4, EVENT_WAIT_MS));
	t1 = now_ns();
	TH_LOG("4 past timers delivered %llu us after arming",
	       (unsigned long long)(t1 - t0) / 1000);
	for (i = 0; i < 4; i++) {
		ASSERT_GT(4, ev[i].cookie);
		j = ev[i].cookie;
		EXPECT_FALSE(seen[j]);
		seen[j] = true;
		EXPECT_EQ(h[j], ev[i].handle);
		if (j < 3)
			EXPECT_EQ(at[j], ev[i].expires);
		EXPECT_LE(t0, ev[i].fired);
	}
}

/* ---- periodic delivery ---- */

/*
 * Events keep coming, and between two consecutive events the expiry moves
 * by exactly (1 + overrun) periods: every expiration is either an event
 * or counted in one.
 */
TEST_F(twheel, periodic_delivery)
{
	enum { N = 6 };
	uint64_t p = period_of(&self->api, 20);
	struct twheel_event ev[N];
	uint64_t h, t0, t1;
	uint32_t st;
	int i;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, p, p, 0, 0xc0c0, &h);
	t1 = now_ns();
	for (i = 0; i < N; i++) {
		ASSERT_EQ(1, collect(_metadata, self->fd, &ev[i], 1, 1, EVENT_WAIT_MS))
			TH_LOG("periodic event %d missing", i);
		EXPECT_EQ(h, ev[i].handle);
		EXPECT_EQ(0xc0c0, ev[i].cookie);
		EXPECT_EQ(TWHEEL_EVENT_PERIODIC, ev[i].flags);
		if (i)
			EXPECT_EQ(ev[i - 1].expires + p * (1 + ev[i - 1].overrun),
				  ev[i].expires) TH_LOG("event %d", i);
	}
	EXPECT_LE(t0 + p, ev[0].expires);
	EXPECT_GE(t1 + p, ev[0].expires);
	test_ioctl_cancel(self->fd, h, &st);
}

/* Not reading for several periods: the next event carries an overrun. */
TEST_F(twheel, periodic_overrun)
{
	uint64_t p = period_of(&self->api, 10);
	struct twheel_event ev[2];
	uint64_t h, t0, tb, ta;

	t0 = now_ns();
	test_ioctl_arm(self->fd, 0, p, p, 0, 1, &h);
	pass_time_until(t0 + 12 * p);	/* leave it unread on purpose */
	ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS));
	tb = now_ns();
	ASSERT_EQ(EV_SIZE, read(self->fd, &ev[0], EV_SIZE));
	ta = now_ns();
	check_event(_metadata, &ev[0], ta);
	EXPECT_EQ(h, ev[0].handle);
	EXPECT_LT(0, ev[0].overrun) TH_LOG("no overrun after 12 periods unread");
	TH_LOG("overrun %llu", (unsigned long long)ev[0].overrun);

	ASSERT_EQ(1, collect(_metadata, self->fd, &ev[1], 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev[1].handle);
	EXPECT_EQ(ev[0].expires + p * (1 + ev[0].overrun), ev[1].expires);
	/* the merged expirations all came before the read took the event... */
	EXPECT_GE(ta + p, ev[1].expires);
	/*
	 * ...and the next event came from a tick after it.  Its fire time is
	 * that tick's clock reading, taken before the callback queues the
	 * event, so it may precede @tb a little; an event queued while the
	 * first was unread would precede it by periods.
	 */
	EXPECT_LE(tb, ev[1].fired + p);
	test_ioctl_cancel(self->fd, h, NULL);
}

/*
 * The longest period: the second expiry saturates at the end of time
 * instead of wrapping, so the timer stays armed after its first event.
 */
TEST_F(twheel, periodic_max_period_stays_pending)
{
	uint64_t p = period_of(&self->api, 10);
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t h;

	test_ioctl_arm(self->fd, 0, p, INT64_MAX, 0, 7, &h);
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev.handle);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_TRUE(q.out_state & TWHEEL_QUERY_PENDING)
		TH_LOG("periodic timer lost after its first expiry");
	EXPECT_EQ(INT64_MAX, q.out_expires);
	test_ioctl_cancel(self->fd, h, NULL);
}

TEST_F(twheel, periodic_cancel_stops)
{
	uint64_t p = period_of(&self->api, 10);
	struct twheel_event ev[16];
	struct twheel_query q;
	uint64_t h = 0;
	uint32_t st = 0;
	int i, n;

	test_ioctl_arm(self->fd, 0, p, p, 0, 1, &h);
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 1, 1, EVENT_WAIT_MS));
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 1, 1, EVENT_WAIT_MS));
	test_ioctl_cancel(self->fd, h, &st);
	/* a periodic timer is armed until cancelled, its events read or not */
	EXPECT_EQ(TWHEEL_CANCEL_PENDING, st);
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, h, &q));
	n = barrier(_metadata, self->fd, 5 * p, ev, 16);
	for (i = 0; i < n; i++)
		EXPECT_NE(h, ev[i].handle) TH_LOG("event after cancel");
	EXPECT_EQ(0, n);
}

/* ---- exactly once, at scale ---- */

TEST_F_TIMEOUT(twheel, exactly_once_100k, 180)
{
	enum { N = 100000, B = 4096, RBUF = 4096 };
	const uint64_t lead = 200 * NSEC_PER_MSEC, spread = 500 * NSEC_PER_MSEC;
	struct twheel_batch_op *ops = calloc(B, sizeof(*ops));
	struct twheel_event *evs = calloc(RBUF, sizeof(*evs));
	uint64_t *expires = calloc(N, sizeof(*expires));
	uint64_t *handles = calloc(N, sizeof(*handles));
	unsigned char *seen = calloc(N, 1);
	uint64_t base, deadline, t_armed, max_late = 0;
	long dup = 0, early = 0, wrong = 0, got = 0;
	struct epoll_event e = { .events = EPOLLIN };
	struct twheel_query q;
	int efd, i;

	ASSERT_NONNULL(ops);
	ASSERT_NONNULL(evs);
	ASSERT_NONNULL(expires);
	ASSERT_NONNULL(handles);
	ASSERT_NONNULL(seen);
	ASSERT_LE(B, self->api.out_max_batch);
	base = now_ns() + lead;
	for (i = 0; i < N; i += B) {
		int n = N - i < B ? N - i : B, j;
		uint32_t done = 0;

		for (j = 0; j < n; j++) {
			/* a fixed scatter of the expiries over the spread */
			uint64_t k = ((uint64_t)(i + j) * 7919) % N;

			expires[i + j] = base + k * spread / N;
			op_arm(&ops[j], TWHEEL_ARM_ABS, expires[i + j], 0, i + j);
		}
		ASSERT_EQ(n, _test_ioctl_batch(self->fd, ops, n, &done));
		ASSERT_EQ(n, done);
		for (j = 0; j < n; j++) {
			ASSERT_EQ(0, ops[j].out_result) TH_LOG("record %d", i + j);
			handles[i + j] = ops[j].handle;
		}
	}
	t_armed = now_ns();
	TH_LOG("armed %d timers in %llu ms", N,
	       (unsigned long long)(t_armed - base + lead) / NSEC_PER_MSEC);

	efd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, efd);
	ASSERT_EQ(0, epoll_ctl(efd, EPOLL_CTL_ADD, self->fd, &e));
	deadline = (t_armed > base + spread ? t_armed : base + spread) +
		   60 * NSEC_PER_SEC;
	while (got < N && now_ns() < deadline) {
		ssize_t n;
		uint64_t t;
		int r, k;

		r = epoll_wait(efd, &e, 1, 1000);
		if (r < 0 && errno == EINTR)
			continue;
		ASSERT_LE(0, r);
		if (!r)
			continue;
		n = read(self->fd, evs, RBUF * EV_SIZE);
		t = now_ns();
		ASSERT_LT(0, n) TH_LOG("read: %s", strerror(errno));
		ASSERT_EQ(0, n % EV_SIZE);
		for (k = 0; k < n / (ssize_t)EV_SIZE; k++) {
			struct twheel_event *ev = &evs[k];
			uint64_t c = ev->cookie;

			if (c >= N) {
				if (wrong++ < 5)
					TH_LOG("unknown cookie %llu", (unsigned long long)c);
				continue;
			}
			if (seen[c]++) {
				if (dup++ < 5)
					TH_LOG("timer %llu delivered twice", (unsigned long long)c);
				continue;
			}
			got++;
			if (ev->fired < ev->expires || ev->expires != expires[c] ||
			    ev->fired > t) {
				if (early++ < 5)
					TH_LOG("timer %llu: expires %llu (armed %llu) fired %llu",
					       (unsigned long long)c,
					       (unsigned long long)ev->expires,
					       (unsigned long long)expires[c],
					       (unsigned long long)ev->fired);
			} else if (ev->fired - ev->expires > max_late) {
				max_late = ev->fired - ev->expires;
			}
			if (ev->handle != handles[c] || ev->flags || ev->overrun) {
				if (wrong++ < 5)
					TH_LOG("timer %llu: handle %#llx flags %u overrun %llu",
					       (unsigned long long)c,
					       (unsigned long long)ev->handle,
					       ev->flags, (unsigned long long)ev->overrun);
			}
		}
	}
	if (got < N) {
		for (i = 0; i < N; i++)
			if (!seen[i])
				break;
		TH_LOG("%ld of %d timers missing, first: %d (expires %llu)",
		       N - got, N, i, (unsigned long long)expires[i]);
	}
	TH_LOG("max lateness %llu us", (unsigned long long)max_late / 1000);
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, early);
	EXPECT_EQ(0, wrong);
	EXPECT_EQ(N, got);
	/* and nothing more: every timer was read, so every one-shot is gone */
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, handles[0], &q));
	close(efd);
	free(seen);
	free(handles);
	free(expires);
	free(evs);
	free(ops);
}

/* ---- limits: ENOSPC ---- */

/*
 * Filling a limit takes hundreds of thousands of arms: the tests measure
 * the arm rate on the first part and skip when the rest would take longer
 * than this (the debug kernel with lockdep and KASAN arms ~4k timers/s).
 */
#define ENOSPC_FILL_BUDGET_MS	30000
#define ENOSPC_PROBE		16384

/*
 * Arm @n far-away one-shot timers on @fd in batches; returns the handle of
 * the last one.  With @probe, arm that many first and return 0 without
 * arming the rest if they would take more than ENOSPC_FILL_BUDGET_MS.
 */
static uint64_t fill(struct __test_metadata *_metadata, int fd,
		     const struct twheel_api *api, uint64_t n, uint64_t probe)
{
	uint32_t b = api->out_max_batch < 65536 ? api->out_max_batch : 65536;
	struct twheel_batch_op *ops = calloc(b, sizeof(*ops));
	uint64_t last = 0, t0 = now_ns(), total = n;

	ASSERT_NONNULL(ops);
	while (n) {
		uint32_t k = n < b ? n : b, i, done = 0;

		if (probe && k > 4096)	/* small batches until the probe decides */
			k = 4096;
		for (i = 0; i < k; i++)
			op_arm(&ops[i], 0, 3600 * NSEC_PER_SEC, 0, i);
		ASSERT_EQ(k, _test_ioctl_batch(fd, ops, k, &done));
		for (i = 0; i < k; i++)
			ASSERT_EQ(0, ops[i].out_result)
				TH_LOG("record %u: %s", i, strerror(-ops[i].out_result));
		last = ops[k - 1].handle;
		n -= k;
		if (probe && total - n >= probe) {
			uint64_t ms = (now_ns() - t0) / NSEC_PER_MSEC;

			probe = 0;
			if (ms * n / (total - n) > ENOSPC_FILL_BUDGET_MS) {
				TH_LOG("%llu arms took %llu ms: %llu more would take too long",
				       (unsigned long long)(total - n),
				       (unsigned long long)ms, (unsigned long long)n);
				free(ops);
				return 0;
			}
		}
	}
	TH_LOG("armed %llu timers in %llu ms", (unsigned long long)total,
	       (unsigned long long)(now_ns() - t0) / NSEC_PER_MSEC);
	free(ops);
	return last;
}

/*
 * The per-user limit counts the timers of all files of the user: once it is
 * reached every file of the user gets ENOSPC (the single ioctl and each
 * batch record, without stopping the batch), and timers freed by cancel,
 * by reading a one-shot's event or by closing a file make room again.
 */
TEST_F_TIMEOUT(twheel, enospc_per_user, 300)
{
	uint64_t lim = self->api.out_max_timers_per_user;
	struct twheel_batch_op ops[4];
	struct twheel_event ev;
	uint64_t h2[10], h, last;
	uint32_t done;
	int fd2, i;

	if (!lim)
		SKIP(return, "no per-user limit");
	if (lim < 20)
		SKIP(return, "per-user limit %llu: too small for this test",
		     (unsigned long long)lim);
	if (lim > self->api.out_max_timers_per_fd)
		SKIP(return, "the per-file limit (%llu) is below the per-user one",
		     (unsigned long long)self->api.out_max_timers_per_fd);
	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);

	last = fill(_metadata, self->fd, &self->api, lim - 10, ENOSPC_PROBE);
	if (!last)
		SKIP(return,
		     "per-user limit %llu: too slow to fill here (max_timers_per_user)",
		     (unsigned long long)lim);
	for (i = 0; i < 10; i++)
		test_ioctl_arm(fd2, 0, 3600 * NSEC_PER_SEC, 0, 0, i, &h2[i]);
	/* the user is at the limit, on both files */
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fd2, 0, 0, 0, 0, 1, &h));
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h));
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, self->api.out_tick_ns, 0, 1, &h));
	/* a batch goes on past ENOSPC; a cancel in it makes room for one */
	op_arm(&ops[0], 0, 3600 * NSEC_PER_SEC, 0, 1);
	op_cancel(&ops[1], last);
	op_arm(&ops[2], 0, 0, 0, 2);
	op_arm(&ops[3], 0, 3600 * NSEC_PER_SEC, 0, 3);
	ASSERT_EQ(4, _test_ioctl_batch(self->fd, ops, 4, &done));
	EXPECT_EQ(4, done);
	EXPECT_EQ(-ENOSPC, ops[0].out_result);
	EXPECT_EQ(RESULT_POISON, ops[1].out_result);	/* a CANCEL that worked */
	EXPECT_EQ(0, ops[2].out_result);
	EXPECT_EQ(-ENOSPC, ops[3].out_result);
	/* reading the one-shot's event ends it and frees its place */
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(ops[2].handle, ev.handle);
	test_ioctl_arm(fd2, 0, 3600 * NSEC_PER_SEC, 0, 0, 4, &h);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(fd2, 0, 0, 0, 0, 5, &h));
	/* cancel frees a place */
	test_ioctl_cancel(fd2, h2[0], NULL);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 6, &h);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, 0, 0, 7, &h));
	/* closing fd2 gives its 10 places back to the user */
	ASSERT_EQ(0, close(fd2));
	for (i = 0; i < 10; i++)
		test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, i, &h)
			TH_LOG("place %d of the closed file not given back", i);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, 0, 0, 8, &h));
}

/* The per-file limit, where it is below the per-user one. */
TEST_F_TIMEOUT(twheel, enospc_per_fd, 300)
{
	uint64_t lim = self->api.out_max_timers_per_fd;
	uint64_t h, last;
	int fd2;

	if (self->api.out_max_timers_per_user && self->api.out_max_timers_per_user <= lim)
		SKIP(return, "the per-user limit (%llu) is reached first",
		     (unsigned long long)self->api.out_max_timers_per_user);
	last = fill(_metadata, self->fd, &self->api, lim, ENOSPC_PROBE);
	if (!last)
		SKIP(return,
		     "per-file limit %llu: too slow to fill here (max_timers_per_fd)",
		     (unsigned long long)lim);
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h));
	/* another file of the same user still has room */
	fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(0, _test_ioctl_arm(fd2, 0, 3600 * NSEC_PER_SEC, 0, 0, 2, &h));
	close(fd2);
	test_ioctl_cancel(self->fd, last, NULL);
	EXPECT_EQ(0, _test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 3, &h));
	EXPECT_EQ(-ENOSPC, _test_ioctl_arm(self->fd, 0, 0, 0, 0, 4, &h));
}

/* ---- poll / epoll ---- */

TEST_F(twheel, epoll_level_triggered)
{
	struct epoll_event e = { .events = EPOLLIN };
	struct twheel_event ev;
	uint64_t far, h, h2;
	int efd = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, epoll_ctl(efd, EPOLL_CTL_ADD, self->fd, &e));
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	/* a pending timer is no event */
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &far);
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	test_ioctl_arm(self->fd, 0, 20 * NSEC_PER_MSEC, 0, 0, 2, &h);
	ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS));
	EXPECT_EQ(EPOLLIN, e.events & (EPOLLIN | EPOLLERR | EPOLLHUP));
	/* level-triggered: still there until read */
	EXPECT_EQ(1, epoll_wait(efd, &e, 1, 0));
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, 0));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	/* an event withdrawn by cancel takes EPOLLIN with it */
	test_ioctl_arm(self->fd, 0, 0, 0, 0, 3, &h2);
	ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS));
	test_ioctl_cancel(self->fd, h2, NULL);
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	test_ioctl_cancel(self->fd, far, NULL);
	close(efd);
}

/* Edge-triggered epoll: a new event re-arms the edge. */
TEST_F(twheel, epoll_edge_triggered)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct twheel_event ev[2];
	uint64_t h = 0;
	int efd = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, epoll_ctl(efd, EPOLL_CTL_ADD, self->fd, &e));
	test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h);
	ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS));
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 2, 1, 0));
	test_ioctl_arm(self->fd, 0, 10 * NSEC_PER_MSEC, 0, 0, 2, &h);
	ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS))
		TH_LOG("no edge for the second event");
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 2, 1, 0));
	EXPECT_EQ(h, ev[0].handle);
	close(efd);
}

/*
 * Edge-triggered epoll with events left unread: every event that arrives
 * after epoll_wait() reported the file is a new edge, although the file
 * stayed readable (the device coalesces wake-ups only for waiters that
 * have not looked since the last one).
 */
TEST_F(twheel, epoll_edge_triggered_unread)
{
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	struct twheel_event ev[3];
	uint64_t h = 0;
	int efd = epoll_create1(EPOLL_CLOEXEC), i;

	ASSERT_LE(0, efd);
	ASSERT_EQ(0, epoll_ctl(efd, EPOLL_CTL_ADD, self->fd, &e));
	test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &h);
	ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS));
	EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	for (i = 1; i < 3; i++) {
		test_ioctl_arm(self->fd, 0, 10 * NSEC_PER_MSEC, 0, 0, i + 1, &h);
		ASSERT_EQ(1, epoll_wait(efd, &e, 1, EVENT_WAIT_MS))
			TH_LOG("no edge for event %d with %d unread", i + 1, i);
		EXPECT_EQ(0, epoll_wait(efd, &e, 1, 0));
	}
	ASSERT_EQ(3, collect(_metadata, self->fd, ev, 3, 3, 0));
	EXPECT_EQ(h, ev[2].handle);
	close(efd);
}

TEST_F(twheel, poll_pollin)
{
	struct pollfd p = { .fd = self->fd, .events = POLLIN | POLLOUT };
	struct twheel_event ev;
	uint64_t h = 0;

	EXPECT_EQ(0, poll(&p, 1, 0));
	test_ioctl_arm(self->fd, 0, 30 * NSEC_PER_MSEC, 0, 0, 1, &h);
	ASSERT_EQ(1, poll(&p, 1, EVENT_WAIT_MS));
	EXPECT_EQ(POLLIN, p.revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL));
	ASSERT_EQ(1, collect(_metadata, self->fd, &ev, 1, 1, 0));
	EXPECT_EQ(0, poll(&p, 1, 0));
}

/* ---- close / reopen ---- */

/*
 * Closing a file with many timers in every state (pending, due in the
 * current tick, fired and unread, periodic re-arming every tick) frees them
 * all; a new file works.  Repeated so that close meets running callbacks.
 */
TEST_F_TIMEOUT(twheel, close_with_pending_timers, 90)
{
	enum { N = 2048, ROUNDS = 4 };
	struct twheel_batch_op *ops = calloc(N, sizeof(*ops));
	struct twheel_event ev;
	struct twheel_api api;
	uint64_t h = 0;
	int round, i, fd;

	ASSERT_NONNULL(ops);
	for (round = 0; round < ROUNDS; round++) {
		uint32_t done;

		fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		for (i = 0; i < N; i++) {
			if (i % 16 == 0)	/* periodic, every tick */
				op_arm(&ops[i], 0, 0, self->api.out_tick_ns, i);
			else if (i % 16 < 4)	/* far away */
				op_arm(&ops[i], 0, 3600 * NSEC_PER_SEC, 0, i);
			else			/* around now */
				op_arm(&ops[i], 0, (i % 50) * NSEC_PER_MSEC / 10, 0, i);
		}
		ASSERT_EQ(N, _test_ioctl_batch(fd, ops, N, &done));
		/* some have fired and wait unread */
		ASSERT_EQ(1, wait_in(fd, EVENT_WAIT_MS));
		/* a partial read, to have read and unread events */
		ASSERT_EQ(EV_SIZE, read(fd, &ev, EV_SIZE));
		ASSERT_EQ(0, close(fd));
	}
	fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, _test_ioctl_api(fd, &api));
	test_ioctl_arm(fd, 0, 0, 0, 0, 1234, &h);
	ASSERT_EQ(1, collect(_metadata, fd, &ev, 1, 1, EVENT_WAIT_MS));
	EXPECT_EQ(h, ev.handle);
	EXPECT_EQ(1234, ev.cookie);
	close(fd);
	free(ops);
}

struct blocked_reader {
	int fd;
	pid_t tid;
	int started;	/* __atomic */
	int returned;	/* __atomic */
	ssize_t ret;
	int err;
	struct twheel_event ev;
};

static void *blocked_reader_fn(void *arg)
{
	struct blocked_reader *r = arg;

	r->tid = syscall(SYS_gettid);
	__atomic_store_n(&r->started, 1, __ATOMIC_RELEASE);
	r->ret = read(r->fd, &r->ev, sizeof(r->ev));
	r->err = errno;
	__atomic_store_n(&r->returned, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* 'S' if thread @tid sleeps; 0 if its state cannot be read. */
static char thread_state(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Every fd of the file is closed while another thread sleeps in read() on
 * one of them.  Linux keeps the file alive for the running read(), so the
 * timer still fires and that read() returns its event; the file is freed
 * when it returns.  The timer is armed once the reader sleeps, and if it
 * fired before both closes were done (a host that stalled for 200 ms),
 * the case did not happen: skip rather than pass.
 */
TEST_F(twheel, close_while_reader_blocked)
{
	struct blocked_reader r = { 0 };
	uint64_t deadline, h;
	bool closed_first;
	pthread_t th;
	char st = 0;

	r.fd = dup(self->fd);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, blocked_reader_fn, &r));
	deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
	while (st != 'S' && ms_until(deadline)) {
		poll_interval();
		if (__atomic_load_n(&r.started, __ATOMIC_ACQUIRE))
			st = thread_state(r.tid);
	}
	ASSERT_EQ('S', st) TH_LOG("the reader never slept in read()");
	test_ioctl_arm(self->fd, 0, 200 * NSEC_PER_MSEC, 0, 0, 99, &h);
	ASSERT_EQ(0, close(r.fd));
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	closed_first = !__atomic_load_n(&r.returned, __ATOMIC_ACQUIRE);
	ASSERT_EQ(0, pthread_join(th, NULL));
	if (!closed_first)
		SKIP(return, "the timer fired before the fds were closed");
	ASSERT_EQ(EV_SIZE, r.ret) TH_LOG("read: %s", strerror(r.err));
	EXPECT_EQ(h, r.ev.handle);
	EXPECT_EQ(99, r.ev.cookie);
	EXPECT_LE(r.ev.expires, r.ev.fired);
}

/* ---- fork ---- */

/*
 * The child's fd is the same open file description: it cancels a timer the
 * parent armed, reads an event of the parent's timer and arms one the
 * parent then reads.  Every event is read once overall.
 */
TEST_F(twheel, fork_shares_timers)
{
	struct twheel_event ev[4];
	struct twheel_query q;
	uint64_t a, b, c = 0;
	int pfd[2], status;
	pid_t pid;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &a);
	test_ioctl_arm(self->fd, 0, 30 * NSEC_PER_MSEC, 0, 0, 2, &b);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct twheel_event cev;
		uint32_t st = 0;
		uint64_t hc;

		if (_test_ioctl_cancel(self->fd, a, &st) || st != TWHEEL_CANCEL_PENDING)
			_exit(10);
		if (wait_in(self->fd, EVENT_WAIT_MS) != 1)
			_exit(11);
		if (read(self->fd, &cev, sizeof(cev)) != EV_SIZE)
			_exit(12);
		if (cev.handle != b || cev.cookie != 2)
			_exit(13);
		if (_test_ioctl_arm(self->fd, 0, 0, 0, 0, 3, &hc))
			_exit(14);
		if (write(pfd[1], &hc, sizeof(hc)) != sizeof(hc))
			_exit(15);
		_exit(0);
	}
	close(pfd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status)) TH_LOG("child failed at step %d",
						 WEXITSTATUS(status));
	ASSERT_EQ(sizeof(c), read(pfd[0], &c, sizeof(c)));
	close(pfd[0]);

	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(self->fd, a, NULL));
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, b, &q));
	/* the child's timer outlives the child and is read here, once */
	ASSERT_EQ(1, collect(_metadata, self->fd, ev, 4, 1, EVENT_WAIT_MS));
	EXPECT_EQ(c, ev[0].handle);
	EXPECT_EQ(3, ev[0].cookie);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 4));
}

/* ---- two files ---- */

TEST_F(twheel, two_fds_isolated)
{
	enum { NA = 4 };
	struct twheel_event ev[16];
	struct twheel_api api;
	struct twheel_query q;
	uint64_t a[NA], b;
	uint32_t st;
	int fdb, i, n;

	fdb = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fdb);
	ASSERT_EQ(0, _test_ioctl_api(fdb, &api));
	for (i = 0; i < NA; i++)
		test_ioctl_arm(self->fd, 0, i ? 0 : 3600 * NSEC_PER_SEC, 0, 0,
			       0xa0 + i, &a[i]);
	test_ioctl_arm(fdb, 0, 0, 0, 0, 0xb0, &b);
	for (i = 0; i < NA; i++) {
		if (a[i] == b)	/* same number, different file: skip it */
			continue;
		EXPECT_EQ(-ENOENT, _test_ioctl_query(fdb, a[i], &q)) TH_LOG("a[%d]", i);
		EXPECT_EQ(-ENOENT, _test_ioctl_modify(fdb, a[i], 0, 0, 0, 0, 0)) TH_LOG("a[%d]", i);
		EXPECT_EQ(-ENOENT, _test_ioctl_cancel(fdb, a[i], &st)) TH_LOG("a[%d]", i);
	}
	/*
	 * A's events only on A, B's only on B.  Wait for the expected ones
	 * first: the sentinels of barrier() may land on another CPU's base
	 * than the timers, whose tick may then come later.
	 */
	n = collect(_metadata, self->fd, ev, 16, NA - 1, EVENT_WAIT_MS);
	n += barrier(_metadata, self->fd, 0, ev + n, 16 - n);
	EXPECT_EQ(NA - 1, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0xa0, ev[i].cookie & ~0xfULL);
	n = collect(_metadata, fdb, ev, 16, 1, EVENT_WAIT_MS);
	n += barrier(_metadata, fdb, 0, ev + n, 16 - n);
	ASSERT_EQ(1, n);
	EXPECT_EQ(b, ev[0].handle);
	EXPECT_EQ(0xb0, ev[0].cookie);
	/* and A's far timer is still there, untouched by B */
	test_ioctl_query(self->fd, a[0], &q);
	EXPECT_EQ(0xa0, q.out_cookie);
	close(fdb);
}

/*
 * The first timer of two new files takes the same table index in each;
 * their handles still differ (each file starts its generations at random),
 * so a handle given to the wrong file names nothing there instead of that
 * file's own timer.  two_fds_isolated cannot see this: it skips equal
 * handles.
 */
TEST_F(twheel, other_file_same_index_enoent)
{
	struct twheel_query q;
	uint64_t a, b;
	uint32_t st;
	int fdb;

	fdb = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fdb);
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 0xa, &a);
	test_ioctl_arm(fdb, 0, 3600 * NSEC_PER_SEC, 0, 0, 0xb, &b);
	ASSERT_EQ((uint32_t)a, (uint32_t)b) TH_LOG("not the same index");
	/* fails once in 2^32 runs by chance: a price for a test that can fail */
	ASSERT_NE(a, b) TH_LOG("both files drew the same generation");
	test_err_query(ENOENT, self->fd, b, &q);
	test_err_modify(ENOENT, self->fd, b, 0, 0, 0, 0, 0);
	test_err_cancel(ENOENT, self->fd, b, &st);
	test_ioctl_query(self->fd, a, &q);
	EXPECT_EQ(0xa, q.out_cookie);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	close(fdb);
}

/* ---- 32-bit compat ---- */

/*
 * The core ioctls and read() through the compat syscall entry.  On x86_64
 * the test issues them with int $0x80, which the kernel runs as 32-bit
 * syscalls (in_compat_syscall(), so .compat_ioctl); built with -m32 the
 * whole file is a 32-bit process anyway.  Arguments must then live below
 * 4 GiB: MAP_32BIT.
 */
#if defined(__x86_64__)
#define COMPAT_NR_READ	3
#define COMPAT_NR_GETPID 20
#define COMPAT_NR_IOCTL	54
#define COMPAT_MAP	MAP_32BIT

static long compat_syscall(long nr, long a, long b, long c)
{
	long ret;

	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"(nr), "b"(a), "c"(b), "d"(c)
		     : "memory", "cc", "r8", "r9", "r10", "r11");
	return (int)ret;
}
#elif defined(__i386)
#define COMPAT_NR_READ	__NR_read
#define COMPAT_NR_GETPID __NR_getpid
#define COMPAT_NR_IOCTL	__NR_ioctl
#define COMPAT_MAP	0

static long compat_syscall(long nr, long a, long b, long c)
{
	long ret = syscall(nr, a, b, c);

	return ret < 0 ? -errno : ret;
}
#endif

#if defined(__x86_64__) || defined(__i386)
static void compat_probe_fault(int sig)
{
	_exit(2);
}
#endif

TEST_F(twheel, compat32_core_ioctls)
{
#if defined(__x86_64__) || defined(__i386)
	struct {
		struct twheel_api api;
		struct twheel_arm arm;
		struct twheel_modify mod;
		struct twheel_query q;
		struct twheel_cancel c;
		struct twheel_batch b;
		struct twheel_batch_op ops[2];
		struct twheel_event ev[4];
		struct twheel_v1_api v1;
	} *m;
	long psz = page_size(), r;
	uint64_t h1 = 0, h2 = 0;
	bool seen1 = false, seen2 = false;
	char *map;
	int status, got = 0, i;
	pid_t pid;

	/*
	 * Is there a compat entry?  Without IA32 emulation int $0x80 faults:
	 * probe in a child, with the fault handled so that the kernel does
	 * not log it as an unhandled one (the harness reads the console).
	 */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		signal(SIGSEGV, compat_probe_fault);
		signal(SIGBUS, compat_probe_fault);
		_exit(compat_syscall(COMPAT_NR_GETPID, 0, 0, 0) == getpid() ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		SKIP(return,
		     "no 32-bit syscalls here (no IA32 emulation in this kernel)");

	map = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | COMPAT_MAP, -1, 0);
	ASSERT_MAPPED(map);
	ASSERT_GT(1ULL << 32, (uint64_t)(uintptr_t)map + 2 * psz);
	ASSERT_EQ(0, munmap(map + psz, psz));	/* a low unmapped page */
	m = (void *)map;
	memset(m, 0, sizeof(*m));

#define CIOCTL(cmd, p) compat_syscall(COMPAT_NR_IOCTL, self->fd, (long)(cmd), (long)(uintptr_t)(p))
	m->api.size = sizeof(m->api);
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_API, &m->api));
	EXPECT_EQ(self->api.out_batch_op_size, m->api.out_batch_op_size);
	EXPECT_EQ(self->api.out_abi_version, m->api.out_abi_version);
	EXPECT_EQ(self->api.out_event_size, m->api.out_event_size);
	EXPECT_EQ(self->api.out_features, m->api.out_features);
	EXPECT_EQ(self->api.out_tick_ns, m->api.out_tick_ns);
	EXPECT_EQ(self->api.out_slots, m->api.out_slots);
	EXPECT_EQ(self->api.out_max_batch, m->api.out_max_batch);
	EXPECT_EQ(self->api.out_max_timers_per_fd, m->api.out_max_timers_per_fd);

	m->arm.size = sizeof(m->arm);
	m->arm.spec.expires = 20 * NSEC_PER_MSEC;
	m->arm.spec.cookie = 0x123456789abcdef0ULL;
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_ARM, &m->arm));
	h1 = m->arm.out_handle;
	ASSERT_NE(0, h1);

	memset(&m->arm, 0, sizeof(m->arm));
	m->arm.size = sizeof(m->arm);
	m->arm.spec.expires = 3600 * NSEC_PER_SEC;
	m->arm.spec.period = self->api.out_tick_ns * 1000;
	m->arm.spec.cookie = 2;
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_ARM, &m->arm));
	h2 = m->arm.out_handle;

	m->q.size = sizeof(m->q);
	m->q.handle = h2;
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_QUERY, &m->q));
	EXPECT_EQ(TWHEEL_QUERY_PENDING, m->q.out_state);
	EXPECT_EQ(2, m->q.out_cookie);
	EXPECT_EQ(self->api.out_tick_ns * 1000, m->q.out_period);
	EXPECT_LT(0, m->q.out_remaining);

	m->mod.size = sizeof(m->mod);
	m->mod.handle = h2;
	m->mod.spec.expires = 7200 * NSEC_PER_SEC;
	m->mod.spec.cookie = 3;
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_MODIFY, &m->mod));
	memset(&m->q, 0, sizeof(m->q));
	m->q.size = sizeof(m->q);
	m->q.handle = h2;
	ASSERT_EQ(0, CIOCTL(TWHEEL_IOC_QUERY, &m->q));
	EXPECT_EQ(3, m->q.out_cookie);
	EXPECT_EQ(0, m->q.out_period);

	/* batch: the ops pointer is a 64-bit field holding a 32-bit address */
	op_arm(&m->ops[0], 0, 0, 0, 4);
	op_cancel(&m->ops[1], h2);
	m->b.size = sizeof(m->b);
	m->b.op_size = sizeof(m->ops[0]);
	m->b.ops = (uintptr_t)m->ops;
	m->b.count = 2;
	ASSERT_EQ(2, CIOCTL(TWHEEL_IOC_BATCH, &m->b));
	EXPECT_EQ(2, m->b.out_done);
	EXPECT_EQ(0, m->b.out_failed);
	EXPECT_EQ(0, m->ops[0].out_result);
	EXPECT_EQ(RESULT_POISON, m->ops[1].out_result);

	m->c.size = sizeof(m->c);
	m->c.handle = h2;
	EXPECT_EQ(-ENOENT, CIOCTL(TWHEEL_IOC_CANCEL, &m->c));
	EXPECT_EQ(-ENOTTY, CIOCTL(_IO(TWHEEL_IOCTL_MAGIC, 0x7f), 0));
	/* version 1: the API answers in its layout, the rest is gone */
	ASSERT_EQ(0, CIOCTL(TWHEEL_V1_IOC_API, &m->v1));
	EXPECT_EQ(2, m->v1.abi_version);
	EXPECT_EQ(self->api.out_tick_ns, m->v1.tick_ns);
	EXPECT_EQ(-ENOTTY, CIOCTL(TWHEEL_V1_IOC_ARM, &m->arm));
	EXPECT_EQ(-ENOTTY, CIOCTL(TWHEEL_V1_IOC_BATCH, &m->b));
	EXPECT_EQ(-EFAULT, CIOCTL(TWHEEL_IOC_API, map + psz));
	EXPECT_EQ(-EFAULT, compat_syscall(COMPAT_NR_READ, self->fd,
					  (long)(uintptr_t)(map + psz), 4 * EV_SIZE));
	EXPECT_EQ(-EINVAL, compat_syscall(COMPAT_NR_READ, self->fd,
					  (long)(uintptr_t)m->ev, EV_SIZE - 1));

	/* both one-shot events through the compat read() */
	while (got < 2) {
		ASSERT_EQ(1, wait_in(self->fd, EVENT_WAIT_MS));
		r = compat_syscall(COMPAT_NR_READ, self->fd, (long)(uintptr_t)m->ev,
				   sizeof(m->ev));
		ASSERT_LT(0, r);
		ASSERT_EQ(0, r % EV_SIZE);
		for (i = 0; i < r / (long)EV_SIZE; i++, got++) {
			check_event(_metadata, &m->ev[i], now_ns());
			if (m->ev[i].handle == h1) {
				EXPECT_EQ(0x123456789abcdef0ULL, m->ev[i].cookie);
				seen1 = true;
			} else {
				EXPECT_EQ(m->ops[0].handle, m->ev[i].handle);
				EXPECT_EQ(4, m->ev[i].cookie);
				seen2 = true;
			}
		}
	}
	EXPECT_TRUE(seen1 && seen2);
	munmap(map, psz);
#undef CIOCTL
#else
	SKIP(return, "no 32-bit compat syscall entry on this architecture");
#endif
}

/* ---- unknown commands and the commands of ABI version 1: ENOTTY ---- */

FIXTURE(twheel_badcmd) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_badcmd) {
	unsigned long cmd;
};

FIXTURE_SETUP(twheel_badcmd)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_badcmd)
{
	close(self->fd);
}

/* numbers around the version 2 commands */
FIXTURE_VARIANT_ADD(twheel_badcmd, nr_7f) {
	.cmd = _IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_BASE - 1),
};

FIXTURE_VARIANT_ADD(twheel_badcmd, nr_after_setup) {
	.cmd = _IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_SETUP + 1),
};

/* a version 2 number with size and direction bits, as version 1 encoded */
FIXTURE_VARIANT_ADD(twheel_badcmd, arm_with_size_bits) {
	.cmd = _IOWR(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_ARM, struct twheel_arm),
};

/* twheel's numbers under another type byte */
FIXTURE_VARIANT_ADD(twheel_badcmd, other_type) {
	.cmd = _IO(TWHEEL_IOCTL_MAGIC + 1, TWHEEL_CMD_ARM),
};

/* version 1: every command but the API is gone */
FIXTURE_VARIANT_ADD(twheel_badcmd, v1_arm) {
	.cmd = TWHEEL_V1_IOC_ARM,
};

FIXTURE_VARIANT_ADD(twheel_badcmd, v1_modify) {
	.cmd = TWHEEL_V1_IOC_MODIFY,
};

FIXTURE_VARIANT_ADD(twheel_badcmd, v1_cancel) {
	.cmd = TWHEEL_V1_IOC_CANCEL,
};

FIXTURE_VARIANT_ADD(twheel_badcmd, v1_query) {
	.cmd = TWHEEL_V1_IOC_QUERY,
};

FIXTURE_VARIANT_ADD(twheel_badcmd, v1_batch) {
	.cmd = TWHEEL_V1_IOC_BATCH,
};

/* the version 1 API number with another size */
FIXTURE_VARIANT_ADD(twheel_badcmd, v1_api_wrong_size) {
	.cmd = _IOR(TWHEEL_IOCTL_MAGIC, 0x00, __u64),
};

TEST_F(twheel_badcmd, enotty)
{
	/* a zeroed buffer whose every struct is valid: only the command is wrong */
	static uint64_t buf[512];
	struct twheel_event ev[4];

	memset(buf, 0, sizeof(buf));
	/* a version 2 structure's size, for the numbers that are close to one */
	buf[0] = sizeof(struct twheel_arm);	/* little-endian: @size */
	EXPECT_ERRNO(ENOTTY, ioctl(self->fd, variant->cmd, buf));
	/* nothing was armed (a zeroed timer would fire at once) */
	EXPECT_EQ(0, fd_timers(self->fd));
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 4));
}

/*
 * A version 1 program still gets an answer to its handshake, in its layout,
 * with abi_version 2 so that it refuses the device.
 */
TEST_F(twheel, v1_api_answers_version_2)
{
	struct twheel_v1_api v1;

	memset(&v1, 0xa5, sizeof(v1));
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_V1_IOC_API, &v1));
	EXPECT_EQ(2, v1.abi_version);
	EXPECT_EQ(sizeof(struct twheel_event), v1.event_size);
	EXPECT_EQ(self->api.out_features, v1.features);
	EXPECT_EQ(self->api.out_tick_ns, v1.tick_ns);
	EXPECT_EQ(self->api.out_slots, v1.slots);
	EXPECT_EQ(self->api.out_max_batch, v1.max_batch);
	EXPECT_EQ(self->api.out_max_timers_per_fd, v1.max_timers_per_fd);
	EXPECT_EQ(self->api.out_max_timers_per_user, v1.max_timers_per_user);
}

/* ---- bad user pointers: EFAULT ---- */

enum { IOC_API, IOC_ARM, IOC_MODIFY, IOC_CANCEL, IOC_QUERY, IOC_BATCH, IOC_BATCH_OPS };

static const unsigned long ioc_cmds[] = {
	[IOC_API] = TWHEEL_IOC_API,
	[IOC_ARM] = TWHEEL_IOC_ARM,
	[IOC_MODIFY] = TWHEEL_IOC_MODIFY,
	[IOC_CANCEL] = TWHEEL_IOC_CANCEL,
	[IOC_QUERY] = TWHEEL_IOC_QUERY,
	[IOC_BATCH] = TWHEEL_IOC_BATCH,
	[IOC_BATCH_OPS] = TWHEEL_IOC_BATCH,
};

static const uint32_t ioc_sizes[] = {
	[IOC_API] = sizeof(struct twheel_api),
	[IOC_ARM] = sizeof(struct twheel_arm),
	[IOC_MODIFY] = sizeof(struct twheel_modify),
	[IOC_CANCEL] = sizeof(struct twheel_cancel),
	[IOC_QUERY] = sizeof(struct twheel_query),
	[IOC_BATCH] = sizeof(struct twheel_batch),
	[IOC_BATCH_OPS] = sizeof(struct twheel_batch),
};

/* Any of the ioctl structures, its size field first. */
union ioc_arg {
	uint32_t size;
	struct twheel_api api;
	struct twheel_arm arm;
	struct twheel_modify mod;
	struct twheel_cancel c;
	struct twheel_query q;
	struct twheel_batch b;
	uint64_t raw[32];	/* room for a longer structure's tail */
};

/*
 * Fill @u for @ioc with valid values: @live is a live timer (cookie 77)
 * for MODIFY, CANCEL and QUERY, @op one ARM record for BATCH; a timer that
 * a wrongly accepted ARM or MODIFY created would fire at once.
 */
static void ioc_fill(union ioc_arg *u, int ioc, uint64_t live,
		     struct twheel_batch_op *op)
{
	memset(u, 0, sizeof(*u));
	u->size = ioc_sizes[ioc];
	op_arm(op, 0, 0, 0, 1);
	switch (ioc) {
	case IOC_ARM:
		u->arm.spec.cookie = 79;
		break;
	case IOC_MODIFY:
		u->mod.handle = live;
		u->mod.spec.cookie = 78;
		break;
	case IOC_CANCEL:
		u->c.handle = live;
		break;
	case IOC_QUERY:
		u->q.handle = live;
		break;
	case IOC_BATCH:
	case IOC_BATCH_OPS:
		u->b.ops = (uintptr_t)op;
		u->b.count = 1;
		u->b.op_size = sizeof(*op);
		break;
	}
}

/*
 * After an ioctl on @u was refused: the live timer (cookie 77) is as it
 * was, and no other timer exists.
 */
static void ioc_nothing_happened(struct __test_metadata *_metadata, int fd,
				 uint64_t live)
{
	struct twheel_event ev[8];
	struct twheel_query q;
	int n;

	test_ioctl_query(fd, live, &q);
	EXPECT_EQ(77, q.out_cookie);
	EXPECT_EQ(0, q.out_period);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_LT(3000 * NSEC_PER_SEC, q.out_remaining);
	EXPECT_EQ(1, fd_timers(fd));
	n = barrier(_metadata, fd, 0, ev, 8);
	EXPECT_EQ(0, n) TH_LOG("cookie %llu fired",
			       n ? (unsigned long long)ev[0].cookie : 0ULL);
}

FIXTURE(twheel_efault) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_efault) {
	int ioc;
	bool readonly;	/* readable but not writable, else unmapped */
};

FIXTURE_SETUP(twheel_efault)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_efault)
{
	close(self->fd);
}

FIXTURE_VARIANT_ADD(twheel_efault, api_unmapped) { .ioc = IOC_API };

FIXTURE_VARIANT_ADD(twheel_efault, api_readonly) { .ioc = IOC_API, .readonly = true };

FIXTURE_VARIANT_ADD(twheel_efault, arm_unmapped) { .ioc = IOC_ARM };

FIXTURE_VARIANT_ADD(twheel_efault, arm_readonly) { .ioc = IOC_ARM, .readonly = true };

FIXTURE_VARIANT_ADD(twheel_efault, modify_unmapped) { .ioc = IOC_MODIFY };

FIXTURE_VARIANT_ADD(twheel_efault, cancel_unmapped) { .ioc = IOC_CANCEL };

FIXTURE_VARIANT_ADD(twheel_efault, cancel_readonly) { .ioc = IOC_CANCEL, .readonly = true };

FIXTURE_VARIANT_ADD(twheel_efault, query_unmapped) { .ioc = IOC_QUERY };

FIXTURE_VARIANT_ADD(twheel_efault, query_readonly) { .ioc = IOC_QUERY, .readonly = true };

FIXTURE_VARIANT_ADD(twheel_efault, batch_unmapped) { .ioc = IOC_BATCH };

FIXTURE_VARIANT_ADD(twheel_efault, batch_ops_unmapped) { .ioc = IOC_BATCH_OPS };

FIXTURE_VARIANT_ADD(twheel_efault, batch_ops_readonly) { .ioc = IOC_BATCH_OPS, .readonly = true };

/*
 * The structures hold valid values (a live handle, an expiry of 0 so that a
 * wrongly created timer would fire at once): only the pointer is bad.
 */
TEST_F(twheel_efault, efault)
{
	struct twheel_batch_op op;
	struct twheel_event ev[8];
	struct twheel_query q;
	union ioc_arg u;
	uint64_t live;
	void *arg, *ops_ro = NULL;
	int n;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 77, &live);
	ioc_fill(&u, variant->ioc, live, &op);
	if (variant->ioc == IOC_BATCH_OPS) {
		if (variant->readonly) {
			ops_ro = readonly_copy(&op, sizeof(op));
			ASSERT_NONNULL(ops_ro);
			u.b.ops = (uintptr_t)ops_ro;
		} else {
			u.b.ops = (uintptr_t)unmapped_page();
			ASSERT_NE(0, u.b.ops);
		}
		arg = &u;
	} else if (variant->readonly) {
		arg = readonly_copy(&u, sizeof(u));
	} else {
		arg = unmapped_page();
	}
	ASSERT_NONNULL(arg);

	EXPECT_ERRNO(EFAULT, ioctl(self->fd, ioc_cmds[variant->ioc], arg));

	/* and nothing happened that the caller cannot know about */
	switch (variant->ioc) {
	case IOC_MODIFY:
	case IOC_CANCEL:
	case IOC_QUERY:
		if (variant->ioc == IOC_CANCEL && variant->readonly) {
			/* the cancel took effect; only its status was lost */
			test_err_query(ENOENT, self->fd, live, &q);
			EXPECT_EQ(0, fd_timers(self->fd));
			break;
		}
		test_ioctl_query(self->fd, live, &q);
		EXPECT_EQ(77, q.out_cookie);
		EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
		break;
	case IOC_BATCH_OPS:
		EXPECT_EQ(0, u.b.out_done);
		break;
	}
	n = barrier(_metadata, self->fd, 0, ev, 8);
	EXPECT_EQ(0, n) TH_LOG("a timer the caller got no handle for fired");
}

/* ---- invalid arguments: EINVAL ---- */

#define PERIOD_SUBTICK	1	/* stands for api.tick_ns - 1 */

FIXTURE(twheel_einval) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_einval) {
	int ioc;
	uint32_t flags;		/* of the ioctl structure */
	uint32_t reserved;	/* its __reserved (API, CANCEL, QUERY) */
	uint32_t spec_flags;	/* of struct twheel_timer_spec (ARM, MODIFY) */
	uint32_t spec_reserved;
	uint64_t expires;
	uint64_t period;
	uint64_t slack;
};

FIXTURE_SETUP(twheel_einval)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_einval)
{
	close(self->fd);
}

FIXTURE_VARIANT_ADD(twheel_einval, api_flags) {
	.ioc = IOC_API, .flags = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, api_reserved) {
	.ioc = IOC_API, .reserved = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_flags) {
	.ioc = IOC_ARM, .flags = TWHEEL_ARM_ABS,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_reserved) {
	.ioc = IOC_ARM, .spec_reserved = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_flag_bit1) {
	.ioc = IOC_ARM, .spec_flags = 1U << 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_flag_bit31) {
	.ioc = IOC_ARM, .spec_flags = TWHEEL_ARM_ABS | 1U << 31,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_expires_negative) {
	.ioc = IOC_ARM, .expires = 1ULL << 63,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_abs_expires_negative) {
	.ioc = IOC_ARM, .spec_flags = TWHEEL_ARM_ABS, .expires = UINT64_MAX,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_period_below_tick) {
	.ioc = IOC_ARM, .period = PERIOD_SUBTICK,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_period_negative) {
	.ioc = IOC_ARM, .period = 1ULL << 63,
};

FIXTURE_VARIANT_ADD(twheel_einval, arm_slack_negative) {
	.ioc = IOC_ARM, .slack = UINT64_MAX,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_flags) {
	.ioc = IOC_MODIFY, .flags = 1U << 31,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_reserved) {
	.ioc = IOC_MODIFY, .spec_reserved = 0x80000000,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_flag_bit1) {
	.ioc = IOC_MODIFY, .spec_flags = 1U << 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_expires_negative) {
	.ioc = IOC_MODIFY, .expires = 1ULL << 63,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_period_below_tick) {
	.ioc = IOC_MODIFY, .period = PERIOD_SUBTICK,
};

FIXTURE_VARIANT_ADD(twheel_einval, modify_slack_negative) {
	.ioc = IOC_MODIFY, .slack = 1ULL << 63,
};

FIXTURE_VARIANT_ADD(twheel_einval, cancel_flags) {
	.ioc = IOC_CANCEL, .flags = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, cancel_reserved) {
	.ioc = IOC_CANCEL, .reserved = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, query_flags) {
	.ioc = IOC_QUERY, .flags = 1,
};

FIXTURE_VARIANT_ADD(twheel_einval, query_reserved) {
	.ioc = IOC_QUERY, .reserved = 1U << 31,
};

FIXTURE_VARIANT_ADD(twheel_einval, batch_flags) {
	.ioc = IOC_BATCH, .flags = 1,
};

/*
 * One bad field, everything else valid.  A timer that must not exist would
 * fire at once (expiry 0, or a period below one tick), so the barrier shows
 * that nothing was created; a timer that must not change is queried.
 */
TEST_F(twheel_einval, einval)
{
	uint64_t period = variant->period == PERIOD_SUBTICK ?
			  self->api.out_tick_ns - 1 : variant->period;
	struct twheel_timer_spec *spec = NULL;
	struct twheel_batch_op op;
	union ioc_arg u;
	uint64_t live;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 77, &live);
	ioc_fill(&u, variant->ioc, live, &op);
	switch (variant->ioc) {
	case IOC_API:
		u.api.flags = variant->flags;
		u.api.__reserved = variant->reserved;
		break;
	case IOC_ARM:
		u.arm.flags = variant->flags;
		spec = &u.arm.spec;
		break;
	case IOC_MODIFY:
		u.mod.flags = variant->flags;
		spec = &u.mod.spec;
		break;
	case IOC_CANCEL:
		u.c.flags = variant->flags;
		u.c.__reserved = variant->reserved;
		break;
	case IOC_QUERY:
		u.q.flags = variant->flags;
		u.q.__reserved = variant->reserved;
		break;
	case IOC_BATCH:
		u.b.flags = variant->flags;
		break;
	}
	if (spec) {
		spec->flags = variant->spec_flags;
		spec->__reserved = variant->spec_reserved;
		spec->expires = variant->expires;
		spec->period = period;
		spec->slack = variant->slack;
	}
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, ioc_cmds[variant->ioc], &u));
	if (variant->ioc == IOC_BATCH) {
		EXPECT_EQ(0, u.b.out_done);
		EXPECT_EQ(RESULT_POISON, op.out_result) TH_LOG("a record was processed");
	}
	ioc_nothing_happened(_metadata, self->fd, live);
}

/* ---- extensible structures: @size and @op_size ---- */

enum {
	SZ_ZERO, SZ_BELOW_MIN, SZ_LONG_ZERO_TAIL, SZ_LONG_TAIL_SET, SZ_AT_MAX,
	SZ_ABOVE_MAX,
};

FIXTURE(twheel_size) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_size) {
	int ioc;
	int kind;
	bool op_size;	/* BATCH: the kind applies to @op_size, not @size */
};

FIXTURE_SETUP(twheel_size)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_size)
{
	close(self->fd);
}

FIXTURE_VARIANT_ADD(twheel_size, api_zero) { .ioc = IOC_API, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, api_below_min) { .ioc = IOC_API, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, api_long_zero_tail) { .ioc = IOC_API, .kind = SZ_LONG_ZERO_TAIL };

FIXTURE_VARIANT_ADD(twheel_size, api_long_tail_set) { .ioc = IOC_API, .kind = SZ_LONG_TAIL_SET };

FIXTURE_VARIANT_ADD(twheel_size, api_at_max) { .ioc = IOC_API, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, api_above_max) { .ioc = IOC_API, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, arm_zero) { .ioc = IOC_ARM, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, arm_below_min) { .ioc = IOC_ARM, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, arm_long_zero_tail) { .ioc = IOC_ARM, .kind = SZ_LONG_ZERO_TAIL };

FIXTURE_VARIANT_ADD(twheel_size, arm_long_tail_set) { .ioc = IOC_ARM, .kind = SZ_LONG_TAIL_SET };

FIXTURE_VARIANT_ADD(twheel_size, arm_at_max) { .ioc = IOC_ARM, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, arm_above_max) { .ioc = IOC_ARM, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, modify_zero) { .ioc = IOC_MODIFY, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, modify_below_min) { .ioc = IOC_MODIFY, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, modify_long_zero_tail) {
	.ioc = IOC_MODIFY, .kind = SZ_LONG_ZERO_TAIL,
};

FIXTURE_VARIANT_ADD(twheel_size, modify_long_tail_set) {
	.ioc = IOC_MODIFY, .kind = SZ_LONG_TAIL_SET,
};

FIXTURE_VARIANT_ADD(twheel_size, modify_at_max) { .ioc = IOC_MODIFY, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, modify_above_max) { .ioc = IOC_MODIFY, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, cancel_zero) { .ioc = IOC_CANCEL, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, cancel_below_min) { .ioc = IOC_CANCEL, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, cancel_long_zero_tail) {
	.ioc = IOC_CANCEL, .kind = SZ_LONG_ZERO_TAIL,
};

FIXTURE_VARIANT_ADD(twheel_size, cancel_long_tail_set) {
	.ioc = IOC_CANCEL, .kind = SZ_LONG_TAIL_SET,
};

FIXTURE_VARIANT_ADD(twheel_size, cancel_at_max) { .ioc = IOC_CANCEL, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, cancel_above_max) { .ioc = IOC_CANCEL, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, query_zero) { .ioc = IOC_QUERY, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, query_below_min) { .ioc = IOC_QUERY, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, query_long_zero_tail) {
	.ioc = IOC_QUERY, .kind = SZ_LONG_ZERO_TAIL,
};

FIXTURE_VARIANT_ADD(twheel_size, query_long_tail_set) {
	.ioc = IOC_QUERY, .kind = SZ_LONG_TAIL_SET,
};

FIXTURE_VARIANT_ADD(twheel_size, query_at_max) { .ioc = IOC_QUERY, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, query_above_max) { .ioc = IOC_QUERY, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, batch_zero) { .ioc = IOC_BATCH, .kind = SZ_ZERO };

FIXTURE_VARIANT_ADD(twheel_size, batch_below_min) { .ioc = IOC_BATCH, .kind = SZ_BELOW_MIN };

FIXTURE_VARIANT_ADD(twheel_size, batch_long_zero_tail) {
	.ioc = IOC_BATCH, .kind = SZ_LONG_ZERO_TAIL,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_long_tail_set) {
	.ioc = IOC_BATCH, .kind = SZ_LONG_TAIL_SET,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_at_max) { .ioc = IOC_BATCH, .kind = SZ_AT_MAX };

FIXTURE_VARIANT_ADD(twheel_size, batch_above_max) { .ioc = IOC_BATCH, .kind = SZ_ABOVE_MAX };

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_zero) {
	.ioc = IOC_BATCH, .kind = SZ_ZERO, .op_size = true,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_below_min) {
	.ioc = IOC_BATCH, .kind = SZ_BELOW_MIN, .op_size = true,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_long_zero_tail) {
	.ioc = IOC_BATCH, .kind = SZ_LONG_ZERO_TAIL, .op_size = true,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_long_tail_set) {
	.ioc = IOC_BATCH, .kind = SZ_LONG_TAIL_SET, .op_size = true,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_at_max) {
	.ioc = IOC_BATCH, .kind = SZ_AT_MAX, .op_size = true,
};

FIXTURE_VARIANT_ADD(twheel_size, batch_op_size_above_max) {
	.ioc = IOC_BATCH, .kind = SZ_ABOVE_MAX, .op_size = true,
};

/* How much longer than the kernel's structure the long ones are. */
#define SIZE_TAIL	40

/*
 * The first version of every structure is the one of this header, so a
 * shorter one (an older program's, zero-extended) cannot be built yet:
 * below it is EINVAL.  A longer one is accepted if its tail is zero,
 * else E2BIG, and the outputs are written back within @size; one longer
 * than TWHEEL_STRUCT_SIZE_MAX is E2BIG even with a zero tail.
 */
TEST_F(twheel_size, size)
{
	union {		/* a structure of a newer program, up to past the cap */
		union ioc_arg arg;
		uint8_t bytes[TWHEEL_STRUCT_SIZE_MAX + SIZE_TAIL];
	} *big;
	uint32_t min = ioc_sizes[variant->ioc];
	struct twheel_batch_op op, *rec0, *rec1;
	struct twheel_query q;
	uint8_t *bytes, *recs;
	union ioc_arg *u;
	uint64_t live;
	uint32_t size, i;
	int expect = 0, ret;

	big = calloc(1, sizeof(*big));
	ASSERT_NE(0, (uintptr_t)big);
	u = &big->arg;
	bytes = big->bytes;
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 77, &live);
	ioc_fill(u, variant->ioc, live, &op);
	if (variant->ioc == IOC_BATCH && variant->op_size)
		min = TWHEEL_BATCH_OP_SIZE0;

	switch (variant->kind) {
	case SZ_ZERO:
		size = 0;
		expect = EINVAL;
		break;
	case SZ_BELOW_MIN:
		/* the API's first version ended at out_max_timers_per_user */
		size = (variant->ioc == IOC_API ? TWHEEL_API_SIZE0 : min) - 8;
		expect = EINVAL;
		break;
	case SZ_LONG_ZERO_TAIL:
		size = min + SIZE_TAIL;
		break;
	case SZ_LONG_TAIL_SET:
		size = min + SIZE_TAIL;
		expect = E2BIG;
		break;
	case SZ_AT_MAX:
		size = TWHEEL_STRUCT_SIZE_MAX;
		break;
	default:
		size = TWHEEL_STRUCT_SIZE_MAX + 8;
		expect = E2BIG;
		break;
	}

	if (variant->op_size) {
		/* two records in the caller's stride: the second fires at once */
		recs = calloc(2, size + sizeof(op));
		ASSERT_NE(0, (uintptr_t)recs);
		rec0 = (void *)recs;
		rec1 = (void *)(recs + (size < sizeof(op) ? sizeof(op) : size));
		op_arm(rec0, 0, 3600 * NSEC_PER_SEC, 0, 80);
		op_arm(rec1, 0, 0, 0, 81);
		if (variant->kind == SZ_LONG_TAIL_SET)
			recs[size - 1] = 1;
		u->b.ops = (uintptr_t)recs;
		u->b.count = 2;
		u->b.op_size = size;
		if (variant->kind == SZ_LONG_TAIL_SET) {
			/* the record fails, not the batch */
			ASSERT_EQ(2, ioctl(self->fd, TWHEEL_IOC_BATCH, u));
			EXPECT_EQ(2, u->b.out_done);
			EXPECT_EQ(1, u->b.out_failed);
			EXPECT_EQ(-E2BIG, rec0->out_result);
			EXPECT_EQ(0, rec0->handle);
			EXPECT_EQ(0, rec1->out_result);
			test_ioctl_cancel(self->fd, rec1->handle, NULL);
			ioc_nothing_happened(_metadata, self->fd, live);
			return;
		}
		if (expect) {
			EXPECT_ERRNO(expect, ioctl(self->fd, TWHEEL_IOC_BATCH, u));
			EXPECT_EQ(RESULT_POISON, rec0->out_result);
			ioc_nothing_happened(_metadata, self->fd, live);
			return;
		}
		ASSERT_EQ(2, ioctl(self->fd, TWHEEL_IOC_BATCH, u));
		EXPECT_EQ(0, u->b.out_failed);
		EXPECT_EQ(0, rec0->out_result);
		EXPECT_EQ(0, rec1->out_result);
		test_ioctl_query(self->fd, rec0->handle, &q);
		EXPECT_EQ(80, q.out_cookie);
		test_ioctl_query(self->fd, rec1->handle, &q);
		EXPECT_EQ(81, q.out_cookie);
		return;
	}

	u->size = size;
	if (variant->kind == SZ_LONG_TAIL_SET)
		bytes[size - 1] = 1;
	ret = ioctl(self->fd, ioc_cmds[variant->ioc], u);
	if (expect) {
		EXPECT_ERRNO(expect, ret);
		if (variant->ioc == IOC_BATCH)
			EXPECT_EQ(RESULT_POISON, op.out_result);
		ioc_nothing_happened(_metadata, self->fd, live);
		return;
	}

	/* accepted, and as if the tail were not there */
	ASSERT_LE(0, ret) TH_LOG("size %u: %s", size, strerror(errno));
	EXPECT_EQ(size, u->size);
	for (i = min; i < size; i++)
		EXPECT_EQ(0, bytes[i]) TH_LOG("tail byte %u written", i - min);
	switch (variant->ioc) {
	case IOC_API:
		EXPECT_EQ(TWHEEL_ABI_VERSION, u->api.out_abi_version);
		EXPECT_EQ(self->api.out_tick_ns, u->api.out_tick_ns);
		EXPECT_EQ(self->api.out_max_timers_per_user,
			  u->api.out_max_timers_per_user);
		break;
	case IOC_ARM:
		test_ioctl_query(self->fd, u->arm.out_handle, &q);
		EXPECT_EQ(79, q.out_cookie);
		break;
	case IOC_MODIFY:
		test_ioctl_query(self->fd, live, &q);
		EXPECT_EQ(78, q.out_cookie);
		break;
	case IOC_CANCEL:
		EXPECT_EQ(TWHEEL_CANCEL_PENDING, u->c.out_status);
		test_err_query(ENOENT, self->fd, live, &q);
		break;
	case IOC_QUERY:
		EXPECT_EQ(77, u->q.out_cookie);
		EXPECT_EQ(TWHEEL_QUERY_PENDING, u->q.out_state);
		break;
	case IOC_BATCH:
		EXPECT_EQ(1, ret);
		EXPECT_EQ(1, u->b.out_done);
		EXPECT_EQ(0, u->b.out_failed);
		EXPECT_EQ(0, op.out_result);
		test_ioctl_query(self->fd, op.handle, &q);
		EXPECT_EQ(1, q.out_cookie);
		break;
	}
}

/*
 * The outputs of a failed call: an ARM that fails writes no handle, a
 * batch record writes out_result only when it fails (and for ARM).
 */
TEST_F(twheel, outputs_on_failure)
{
	struct twheel_batch_op ops[4];
	struct twheel_arm a = { .size = sizeof(a), .out_handle = POISON };
	struct twheel_cancel c = { .size = sizeof(c), .handle = 0x1234 };
	uint32_t done = 0, failed = 0;
	uint64_t h;

	a.spec.flags = 1U << 7;
	EXPECT_ERRNO(EINVAL, ioctl(self->fd, TWHEEL_IOC_ARM, &a));
	EXPECT_EQ(POISON, a.out_handle);
	c.out_status = 0x5a5a5a5a;
	EXPECT_ERRNO(ENOENT, ioctl(self->fd, TWHEEL_IOC_CANCEL, &c));

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	op_modify(&ops[0], h, 7200 * NSEC_PER_SEC, 2);	/* works */
	op_modify(&ops[1], h ^ 1, NSEC_PER_SEC, 3);	/* ENOENT */
	op_cancel(&ops[2], h);				/* works */
	op_cancel(&ops[3], h);				/* ENOENT: just cancelled */
	ASSERT_EQ(4, _test_ioctl_batch_sz(self->fd, ops, 4, sizeof(ops[0]),
					  &done, &failed));
	EXPECT_EQ(4, done);
	EXPECT_EQ(2, failed);
	EXPECT_EQ(RESULT_POISON, ops[0].out_result);
	EXPECT_EQ(-ENOENT, ops[1].out_result);
	EXPECT_EQ(RESULT_POISON, ops[2].out_result);
	EXPECT_EQ(-ENOENT, ops[3].out_result);
	/* the handles are inputs of MODIFY and CANCEL */
	EXPECT_EQ(h, ops[0].handle);
	EXPECT_EQ(h, ops[3].handle);
	EXPECT_EQ(0, fd_timers(self->fd));
}

/* ---- handles that name no timer: ENOENT ---- */

enum { H_ZERO, H_RANDOM, H_CANCELLED, H_READ_ONESHOT, H_OTHER_GEN, H_NEXT_ID, H_OTHER_FD };

FIXTURE(twheel_enoent) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_enoent) {
	int kind;
};

FIXTURE_SETUP(twheel_enoent)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_enoent)
{
	close(self->fd);
}

FIXTURE_VARIANT_ADD(twheel_enoent, zero) { .kind = H_ZERO };

FIXTURE_VARIANT_ADD(twheel_enoent, random) { .kind = H_RANDOM };

FIXTURE_VARIANT_ADD(twheel_enoent, cancelled) { .kind = H_CANCELLED };

FIXTURE_VARIANT_ADD(twheel_enoent, oneshot_read) { .kind = H_READ_ONESHOT };
/* the id of a live timer with another generation in the upper half */
FIXTURE_VARIANT_ADD(twheel_enoent, other_generation) { .kind = H_OTHER_GEN };

FIXTURE_VARIANT_ADD(twheel_enoent, not_yet_allocated) { .kind = H_NEXT_ID };

FIXTURE_VARIANT_ADD(twheel_enoent, other_file) { .kind = H_OTHER_FD };

/* CANCEL, MODIFY, QUERY and both batch records all say ENOENT. */
TEST_F(twheel_enoent, enoent)
{
	struct twheel_batch_op ops[2];
	struct twheel_event ev[4];
	struct twheel_query q;
	uint64_t live, bad = 0, tmp[4];
	uint32_t st = 0, done = 0;
	int fd2, i;

	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 77, &live);
	switch (variant->kind) {
	case H_ZERO:
		bad = 0;
		break;
	case H_RANDOM:
		bad = 0x8badf00d5eed1234ULL;
		break;
	case H_CANCELLED:
		test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &bad);
		test_ioctl_cancel(self->fd, bad, NULL);
		break;
	case H_READ_ONESHOT:
		test_ioctl_arm(self->fd, 0, 0, 0, 0, 1, &bad);
		ASSERT_EQ(1, collect(_metadata, self->fd, ev, 4, 1, EVENT_WAIT_MS));
		ASSERT_EQ(bad, ev[0].handle);
		break;
	case H_OTHER_GEN:
		bad = live ^ (1ULL << 32);
		break;
	case H_NEXT_ID:
		bad = live + 1;
		break;
	case H_OTHER_FD:
		fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd2);
		/* its 4th timer: an id this file has not handed out */
		for (i = 0; i < 4; i++)
			test_ioctl_arm(fd2, 0, 3600 * NSEC_PER_SEC, 0, 0, i, &tmp[i]);
		bad = tmp[3];
		ASSERT_NE(live, bad);
		test_ioctl_query(fd2, bad, &q);
		close(fd2);
		break;
	}
	ASSERT_NE(live, bad);

	EXPECT_EQ(-ENOENT, _test_ioctl_cancel(self->fd, bad, &st));
	EXPECT_EQ(-ENOENT, _test_ioctl_modify(self->fd, bad, 0, 0, 0, 0, 5));
	EXPECT_EQ(-ENOENT, _test_ioctl_query(self->fd, bad, &q));
	op_modify(&ops[0], bad, 0, 6);
	op_cancel(&ops[1], bad);
	ASSERT_EQ(2, _test_ioctl_batch(self->fd, ops, 2, &done));
	EXPECT_EQ(2, done);
	EXPECT_EQ(-ENOENT, ops[0].out_result);
	EXPECT_EQ(-ENOENT, ops[1].out_result);

	/* the file's own timer was not touched */
	test_ioctl_query(self->fd, live, &q);
	EXPECT_EQ(77, q.out_cookie);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);
	EXPECT_EQ(0, barrier(_metadata, self->fd, 0, ev, 4));
}

/* ---- cancel racing the firing ---- */

FIXTURE(twheel_cancel_race) {
	int fd;
	struct twheel_api api;
};

FIXTURE_VARIANT(twheel_cancel_race) {
	bool periodic;
	bool batch_cancel;
	bool reader;	/* a thread reads events while the cancels run */
};

FIXTURE_SETUP(twheel_cancel_race)
{
	open_dev(_metadata, &self->fd, &self->api);
}

FIXTURE_TEARDOWN(twheel_cancel_race)
{
	close(self->fd);
}

FIXTURE_VARIANT_ADD(twheel_cancel_race, oneshot) { };

FIXTURE_VARIANT_ADD(twheel_cancel_race, oneshot_batch_cancel) { .batch_cancel = true };

FIXTURE_VARIANT_ADD(twheel_cancel_race, periodic) { .periodic = true };

FIXTURE_VARIANT_ADD(twheel_cancel_race, oneshot_with_reader) { .reader = true };

#define RACE_N		1000
#define RACE_ROUNDS	8
#define RACE_TAG	0x7ace000000000000ULL

struct race_reader {
	int fd;
	uint64_t stop;		/* cookie that ends the reader */
	uint64_t *cookies;	/* cookies of the events read */
	int n, max, err;
};

static void *race_reader_fn(void *arg)
{
	struct race_reader *r = arg;
	struct twheel_event ev[64];

	for (;;) {
		ssize_t n = read(r->fd, ev, sizeof(ev));
		int i;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r->err = errno;
			return NULL;
		}
		for (i = 0; i < n / (ssize_t)EV_SIZE; i++) {
			if (ev[i].fired < ev[i].expires)
				r->err = -1;
			if (ev[i].cookie == r->stop)
				return NULL;
			if (r->n < r->max)
				r->cookies[r->n++] = ev[i].cookie;
		}
	}
}

/*
 * Timers due around now are cancelled right away, racing their firing.
 * Without a reader every cancel succeeds (PENDING, or FIRED for an unread
 * event) and no event of them is ever read.  With a reader, for each timer
 * exactly one of "cancel succeeded" and "its event was read" holds.
 */
TEST_F_TIMEOUT(twheel_cancel_race, no_event_after_cancel, 120)
{
	struct twheel_batch_op *ops = calloc(RACE_N, sizeof(*ops));
	int *cancel_ret = calloc(RACE_ROUNDS * RACE_N, sizeof(int));
	uint64_t p = variant->periodic ? self->api.out_tick_ns : 0;
	long status_count[3] = { 0 };
	struct race_reader rr = { 0 };
	uint64_t step;
	struct twheel_event ev[64];
	pthread_t th;
	int round, i, n;

	ASSERT_NONNULL(ops);
	ASSERT_NONNULL(cancel_ret);
	if (variant->reader) {
		rr.fd = self->fd;
		rr.stop = RACE_TAG - 1;
		rr.max = 2 * RACE_ROUNDS * RACE_N;
		rr.cookies = calloc(rr.max, sizeof(uint64_t));
		ASSERT_NONNULL(rr.cookies);
		ASSERT_EQ(0, pthread_create(&th, NULL, race_reader_fn, &rr));
	}

	for (round = 0, step = 0; round < RACE_ROUNDS; round++) {
		uint64_t base = now_ns();
		uint32_t done = 0;

		/*
		 * Due over 4 ticks, from now in round 0 and @step later in
		 * each further round, @step being half the time round 0 took
		 * to arm: whether arming and cancelling take 5 ms (stock) or
		 * 200 ms (lockdep, KASAN), the expiries of some rounds fall
		 * while the cancels run.
		 */
		for (i = 0; i < RACE_N; i++)
			op_arm(&ops[i], TWHEEL_ARM_ABS,
			       base + (uint64_t)(i % 16) * self->api.out_tick_ns / 4 +
			       round * step, p,
			       RACE_TAG | (uint64_t)round << 32 | i);
		ASSERT_EQ(RACE_N, _test_ioctl_batch(self->fd, ops, RACE_N, &done));
		if (!round)
			step = (now_ns() - base) / 2 + self->api.out_tick_ns;
		for (i = 0; i < RACE_N; i++)
			ASSERT_EQ(0, ops[i].out_result);

		if (variant->batch_cancel) {
			for (i = 0; i < RACE_N; i++)
				op_cancel(&ops[i], ops[i].handle);
			ASSERT_EQ(RACE_N, _test_ioctl_batch(self->fd, ops, RACE_N, &done));
			for (i = 0; i < RACE_N; i++)
				cancel_ret[round * RACE_N + i] = op_res(&ops[i]);
		} else {
			for (i = 0; i < RACE_N; i++) {
				uint32_t st = 0;
				int r = _test_ioctl_cancel(self->fd, ops[i].handle, &st);

				cancel_ret[round * RACE_N + i] = r;
				if (!r && st <= 2)
					status_count[st]++;
			}
		}
	}
	if (!variant->batch_cancel)
		TH_LOG("cancel status: %ld pending, %ld fired, %d ENOENT",
		       status_count[1], status_count[2],
		       RACE_ROUNDS * RACE_N - (int)(status_count[1] + status_count[2]));

	if (variant->reader) {
		uint64_t s;
		int *seen = calloc(RACE_ROUNDS * RACE_N, sizeof(int));
		long read_n = 0, cancelled = 0;

		ASSERT_NONNULL(seen);
		/* two stages, as barrier(): the second one stops the reader */
		test_ioctl_arm(self->fd, 0, 20 * NSEC_PER_MSEC, 0, 0,
			       SENTINEL_COOKIE, &s);
		n = 0;
		for (;;) {
			struct twheel_query q;

			if (_test_ioctl_query(self->fd, s, &q) == -ENOENT)
				break;		/* the reader read it */
			ASSERT_GT(EVENT_WAIT_MS / 2, n++);
			poll_interval();
		}
		test_ioctl_arm(self->fd, 0, 0, 0, 0, rr.stop, &s);
		ASSERT_EQ(0, pthread_join(th, NULL));
		ASSERT_EQ(0, rr.err);
		for (i = 0; i < rr.n; i++) {
			uint64_t c = rr.cookies[i];
			int k;

			if (c == SENTINEL_COOKIE)
				continue;
			ASSERT_EQ(RACE_TAG, c & 0xffff000000000000ULL);
			k = (int)((c >> 32) & 0xffff) * RACE_N + (int)(c & 0xffffffff);
			ASSERT_GT(RACE_ROUNDS * RACE_N, k);
			EXPECT_EQ(0, seen[k]) TH_LOG("timer %d read twice", k);
			seen[k]++;
			read_n++;
		}
		for (i = 0; i < RACE_ROUNDS * RACE_N; i++) {
			if (cancel_ret[i] == 0) {
				cancelled++;
				EXPECT_EQ(0, seen[i])
					TH_LOG("timer %d: cancelled, but its event was read", i);
			} else {
				EXPECT_EQ(-ENOENT, cancel_ret[i]);
				EXPECT_EQ(1, seen[i])
					TH_LOG("timer %d: cancel said ENOENT, no event read", i);
			}
		}
		TH_LOG("%ld cancelled, %ld read by the reader", cancelled, read_n);
		free(seen);
		free(rr.cookies);
	} else {
		for (i = 0; i < RACE_ROUNDS * RACE_N; i++)
			EXPECT_EQ(0, cancel_ret[i]) TH_LOG("timer %d", i);
		n = barrier(_metadata, self->fd, 10 * NSEC_PER_MSEC, ev, 64);
		for (i = 0; i < n; i++)
			EXPECT_NE(RACE_TAG, ev[i].cookie & 0xffff000000000000ULL)
				TH_LOG("event of cancelled timer %#llx",
				       (unsigned long long)ev[i].cookie);
		EXPECT_EQ(0, n);
	}
	free(cancel_ret);
	free(ops);
}

/* ---- TWHEEL_IOC_SETUP: the file's clock and tick ---- */

#define SETUP_CALL(fd, st)	(ioctl(fd, TWHEEL_IOC_SETUP, st) ? -errno : 0)

/* Each error of TWHEEL_IOC_SETUP, and that none changed the file. */
TEST_F(twheel, setup_errors)
{
	struct {
		struct twheel_setup st;
		uint64_t tail;
	} big;
	struct twheel_setup st;
	struct twheel_api api;
	uint64_t h;

	if (!(self->api.out_features & TWHEEL_FEATURE_SETUP))
		SKIP(return, "no TWHEEL_FEATURE_SETUP");
#define SETUP_INIT() (st = (struct twheel_setup){ .size = sizeof(st), \
						  .clockid = CLOCK_BOOTTIME })
	SETUP_INIT();
	st.flags = 1;
	EXPECT_ERRNO(EINVAL, SETUP_CALL(self->fd, &st));
	SETUP_INIT();
	st.__reserved = 1;
	EXPECT_ERRNO(EINVAL, SETUP_CALL(self->fd, &st));
	SETUP_INIT();
	st.size = offsetof(struct twheel_setup, tick_ns);
	EXPECT_ERRNO(EINVAL, SETUP_CALL(self->fd, &st));
	test_err_setup(EINVAL, self->fd, CLOCK_REALTIME, 0);
	test_err_setup(EINVAL, self->fd, CLOCK_TAI, 0);
	test_err_setup(EINVAL, self->fd, CLOCK_BOOTTIME_ALARM, 0);
	test_err_setup(EINVAL, self->fd, 99, 0);
	test_err_setup(EINVAL, self->fd, CLOCK_MONOTONIC, 999);
	test_err_setup(EINVAL, self->fd, CLOCK_MONOTONIC, NSEC_PER_SEC + 1);
	memset(&big, 0, sizeof(big));
	big.st.size = sizeof(big);
	big.st.clockid = CLOCK_BOOTTIME;
	big.tail = 1;
	EXPECT_ERRNO(E2BIG, SETUP_CALL(self->fd, &big));
	big.st.size = TWHEEL_STRUCT_SIZE_MAX + 8;
	EXPECT_ERRNO(E2BIG, SETUP_CALL(self->fd, &big));
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_MONOTONIC, api.out_clockid);
	EXPECT_EQ(self->api.out_tick_ns, api.out_tick_ns);

	/* a longer structure with a zero tail is taken */
	big.st.size = sizeof(big);
	big.tail = 0;
	ASSERT_EQ(0, SETUP_CALL(self->fd, &big));
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_BOOTTIME, api.out_clockid);

	/* not once a timer exists, again once it is gone */
	test_ioctl_arm(self->fd, 0, 3600 * NSEC_PER_SEC, 0, 0, 1, &h);
	test_err_setup(EBUSY, self->fd, CLOCK_MONOTONIC, 0);
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_BOOTTIME, api.out_clockid);
	test_ioctl_cancel(self->fd, h, NULL);
	test_ioctl_setup(self->fd, CLOCK_MONOTONIC, 0);
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_MONOTONIC, api.out_clockid);
#undef SETUP_INIT
}

/* The handshake reports what the file got; a period is >= its tick. */
TEST_F(twheel, setup_reported)
{
	uint64_t tick = 2 * self->api.out_tick_ns, h;
	struct twheel_api api;
	char line[128];
	bool seen = false;
	FILE *f;

	if (!(self->api.out_features & TWHEEL_FEATURE_SETUP))
		SKIP(return, "no TWHEEL_FEATURE_SETUP");
	EXPECT_EQ(CLOCK_MONOTONIC, self->api.out_clockid);
	EXPECT_LE(1, self->api.out_max_instances);

	test_ioctl_setup(self->fd, CLOCK_BOOTTIME, 0);
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_BOOTTIME, api.out_clockid);
	EXPECT_EQ(self->api.out_tick_ns, api.out_tick_ns);

	test_ioctl_setup(self->fd, CLOCK_MONOTONIC, tick);
	test_ioctl_api(self->fd, &api);
	EXPECT_EQ(CLOCK_MONOTONIC, api.out_clockid);
	EXPECT_EQ(tick, api.out_tick_ns);
	snprintf(line, sizeof(line), "/proc/self/fdinfo/%d", self->fd);
	f = fopen(line, "re");
	ASSERT_NE(0, (uintptr_t)f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long t;

		if (sscanf(line, "tick_ns: %llu", &t) == 1) {
			EXPECT_EQ(tick, t);
			seen = true;
		}
	}
	fclose(f);
	EXPECT_TRUE(seen);
	test_err_arm(EINVAL, self->fd, 0, NSEC_PER_SEC, tick - 1, 0, 1, &h);
	test_ioctl_arm(self->fd, 0, NSEC_PER_SEC, tick, 0, 1, &h);

	/* a program built before out_clockid: its 64 bytes, no more */
	memset(&api, 0xa5, sizeof(api));
	api.size = TWHEEL_API_SIZE0;
	api.flags = 0;
	api.__reserved = 0;
	ASSERT_EQ(0, ioctl(self->fd, TWHEEL_IOC_API, &api));
	EXPECT_EQ(tick, api.out_tick_ns);
	EXPECT_EQ(0xa5a5a5a5, api.out_clockid);
	EXPECT_EQ(0xa5a5a5a5, api.out_max_instances);
}

/* A CLOCK_BOOTTIME file: every time of it is that clock's. */
TEST_F(twheel, setup_boottime_times)
{
	struct twheel_event ev;
	struct twheel_query q;
	uint64_t t0, t1, deadline, h;

	if (!(self->api.out_features & TWHEEL_FEATURE_SETUP))
		SKIP(return, "no TWHEEL_FEATURE_SETUP");
	test_ioctl_setup(self->fd, CLOCK_BOOTTIME, 0);
	t0 = clock_ns(CLOCK_BOOTTIME);
	deadline = t0 + 50 * NSEC_PER_MSEC;
	test_ioctl_arm(self->fd, TWHEEL_ARM_ABS, deadline, 0, 0, 1, &h);
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(deadline, q.out_expires);
	ASSERT_EQ(1, read_by(self->fd, &ev, 1, now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC));
	t1 = clock_ns(CLOCK_BOOTTIME);
	EXPECT_LE(deadline, t1);
	EXPECT_EQ(deadline, ev.expires);
	EXPECT_LE(ev.expires, ev.fired);
	EXPECT_GE(t1, ev.fired);

	t0 = clock_ns(CLOCK_BOOTTIME);
	test_ioctl_arm(self->fd, 0, 50 * NSEC_PER_MSEC, 0, 0, 2, &h);
	ASSERT_EQ(1, read_by(self->fd, &ev, 1, now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC));
	t1 = clock_ns(CLOCK_BOOTTIME);
	EXPECT_LE(t0 + 50 * NSEC_PER_MSEC, ev.expires);
	EXPECT_LE(ev.expires, ev.fired);
	EXPECT_GE(t1, ev.fired);
}

/*
 * Files of different ticks at once: 10 timers 50 ms apart on each.  None
 * fires early or later than its tick plus LATE_NS; those of the 500 ms
 * tick come in at most two handler runs (their expiries span one tick),
 * those of the finer ticks in several.  LATE_NS is TCG's, not twheel's:
 * a VM on a busy host stalled 229 ms right after boot, and
 * exactly_once_100k sees 100-300 ms.
 */
#define LATE_NS		(1000 * NSEC_PER_MSEC)
TEST(setup_ticks_at_once)
{
	enum { FILES = 3, N = 10 };
	const uint64_t ticks[FILES] = { 100 * NSEC_PER_USEC, 0, 500 * NSEC_PER_MSEC };
	struct twheel_event ev[N];
	struct twheel_api api;
	int fd[FILES], f, i;

	for (f = 0; f < FILES; f++) {
		open_dev(_metadata, &fd[f], &api);
		if (!(api.out_features & TWHEEL_FEATURE_SETUP))
			SKIP(return, "no TWHEEL_FEATURE_SETUP");
		test_ioctl_setup(fd[f], CLOCK_MONOTONIC, ticks[f]);
	}
	for (i = 0; i < N; i++)
		for (f = 0; f < FILES; f++)
			test_ioctl_arm(fd[f], 0, (25 + 50 * i) * NSEC_PER_MSEC,
				       0, 0, i, NULL);
	for (f = 0; f < FILES; f++) {
		uint64_t deadline = now_ns() + EVENT_WAIT_MS * NSEC_PER_MSEC;
		uint64_t tick, fired[N];
		int n = 0, distinct = 0, j;

		test_ioctl_api(fd[f], &api);
		tick = api.out_tick_ns;
		while (n < N) {
			int r = read_by(fd[f], ev + n, N - n, deadline);

			ASSERT_LT(0, r) TH_LOG("tick %llu: %d of %d events",
					       (unsigned long long)tick, n, N);
			n += r;
		}
		for (i = 0; i < N; i++) {
			EXPECT_LE(ev[i].expires, ev[i].fired);
			EXPECT_GE(ev[i].expires + tick + LATE_NS, ev[i].fired)
				TH_LOG("tick %llu: %llu ns late", (unsigned long long)tick,
				       (unsigned long long)(ev[i].fired - ev[i].expires));
			for (j = 0; j < distinct && fired[j] != ev[i].fired; j++)
				;
			if (j == distinct)
				fired[distinct++] = ev[i].fired;
		}
		TH_LOG("tick %llu ns: %d handler runs", (unsigned long long)tick,
		       distinct);
		/* harness macros are loops: no if/else around them */
		EXPECT_TRUE(tick >= 500 * NSEC_PER_MSEC ? distinct <= 2 : distinct >= 3);
		close(fd[f]);
	}
}

/* Whether the debugfs directory of the instance of @tick exists: -1 unknown. */
static int inst_dir(uint64_t tick)
{
	char path[96];

	if (access("/sys/kernel/debug/twheel/default", F_OK))
		return -1;
	snprintf(path, sizeof(path), "/sys/kernel/debug/twheel/dev-monotonic-%llu",
		 (unsigned long long)tick);
	return !access(path, F_OK);
}

/*
 * Instances: shared by clock and tick, freed with their last file, at
 * most out_max_instances of them (ENOSPC beyond); the default wheel does
 * not count.
 */
TEST(setup_instances)
{
	struct twheel_api api;
	int fd[64], extra, i, max;

	open_dev(_metadata, &extra, &api);
	if (!(api.out_features & TWHEEL_FEATURE_SETUP))
		SKIP(return, "no TWHEEL_FEATURE_SETUP");
	max = api.out_max_instances;
	if (max > 64)
		SKIP(return, "max_instances %d: more files than this test opens", max);
#define TICK(i)	(3 * NSEC_PER_MSEC + (i) * NSEC_PER_USEC)
	for (i = 0; i < max; i++) {
		open_dev(_metadata, &fd[i], &api);
		test_ioctl_setup(fd[i], CLOCK_MONOTONIC, TICK(i));
	}
	EXPECT_NE(0, inst_dir(TICK(0)));
	test_err_setup(ENOSPC, extra, CLOCK_MONOTONIC, TICK(max));
	test_err_setup(ENOSPC, extra, CLOCK_BOOTTIME, 0);
	/* a wheel in use is shared; the default one is always there */
	test_ioctl_setup(extra, CLOCK_MONOTONIC, TICK(0));
	test_ioctl_setup(extra, CLOCK_MONOTONIC, 0);
	test_ioctl_setup(extra, CLOCK_MONOTONIC, api.out_tick_ns);
	/* its last file closed, an instance is gone and one may be made */
	close(fd[0]);
	EXPECT_NE(1, inst_dir(TICK(0)));
	test_ioctl_setup(extra, CLOCK_MONOTONIC, TICK(max));
	test_err_setup(ENOSPC, fd[1], CLOCK_MONOTONIC, TICK(0));
	for (i = 1; i < max; i++)
		close(fd[i]);
	test_ioctl_setup(fd[1] = extra, CLOCK_BOOTTIME, 0);
	close(extra);
#undef TICK
}

TEST_HARNESS_MAIN
