// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_stress - exactly-once delivery under concurrent arm, modify,
 * cancel and read through /dev/twheel.
 *
 * Usage: twheel_stress [-n TIMERS] [-j THREADS] [-f FDS] [-d SPREAD_MS]
 *                      [-b BATCH] [-g GRACE_S] [-s SEED] [-i]
 *
 * THREADS threads (default 4) share TIMERS one-shot timers (default
 * 1,000,000), each thread owning a contiguous range.  A thread arms its
 * timers in TWHEEL_IOC_BATCH chunks at absolute expiries spread over
 * SPREAD_MS from the time of arming; after each chunk it modifies (once or
 * twice) and cancels some of the timers of the previous chunk, through
 * batches and single ioctls, queries a few, and reads whatever events are
 * ready.  Then it only reads until every expected event has come or the
 * deadline (last expiry plus GRACE_S) has passed.  Every thread reads
 * events of every thread's timers.  The test runs once per fd layout:
 * with -f, only that many fds (1: all threads on one shared fd; else
 * thread t arms on fd t % FDS and reads all fds through its own epoll);
 * without -f, once on one shared fd and once on one fd per thread.
 *
 * The cookie of a timer names its index and generation (bumped by each
 * successful MODIFY).  The owner thread keeps, per timer, its handle, the
 * generation it last set and the absolute expiry it asked for, and
 * follows the ABI exactly: a MODIFY or CANCEL that succeeds means the
 * timer's earlier events can no longer be read; one that fails with
 * ENOENT means the one-shot's event has been (or is being) read, so the
 * generation set last is the one that must be delivered.  Any other
 * result is a violation.  At the end every timer that was not cancelled
 * must have produced exactly one event, of the last generation, on the fd
 * it was armed on, with the handle it was given, reporting the requested
 * expiry, fired no earlier than it and read no earlier than it; a
 * cancelled one none.  Nothing may be left on the fds (fdinfo: no timers,
 * no events; a last read gets EAGAIN).
 *
 * Output: TAP, one result line per fd layout with the counts (armed,
 * modified, cancelled, fired, early, lost, duplicates...) and timings;
 * -i indents it as a subtest of the calling plan's check.  Exit status 0
 * when every layout passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#include "twheel_utils.h"

#define MAX_THREADS		64
#define MAX_FDS			MAX_THREADS
#define READ_EVENTS		256
/* Cookie: magic in bits 63..48, generation in 47..32, index in 31..0. */
#define COOKIE_MAGIC		0x7e57ULL
#define COOKIE(idx, gen)	(COOKIE_MAGIC << 48 | (uint64_t)(gen) << 32 | (idx))
#define COOKIE_IDX(c)		((uint32_t)(c))
#define COOKIE_GEN(c)		((uint16_t)((c) >> 32))
/* Detailed messages printed per kind of violation, the rest only counted. */
#define MAX_REPORTS		10

enum { T_NONE, T_LIVE, T_GONE, T_CANCELLED };

/*
 * One timer.  The first group is written by the owner thread only, the
 * second by whichever thread read the timer's first event (claimed through
 * @nev), and both are read by the main thread after the workers joined.
 */
struct trec {
	uint64_t handle;	/* from ARM */
	uint64_t req;		/* requested expiry of generation @gen */
	uint16_t gen;		/* generation of the last successful ARM/MODIFY */
	uint8_t state;		/* T_* */
	uint8_t ev_fd;		/* fd index the first event came from */
	uint32_t nev;		/* events read (atomic) */
	uint16_t ev_gen;
	uint64_t ev_handle;
	uint64_t ev_expires;
	uint64_t ev_fired;
	uint64_t ev_seen;	/* CLOCK_MONOTONIC after the read returned */
};

/* Counters of one run, atomically updated by the workers. */
struct counts {
	uint64_t armed, modified, modify_late, cancelled, cancel_pending,
		 cancel_fired, cancel_late, queried, events, reads, batches,
		 singles;
	/* violations */
	uint64_t errors, unknown, bad, foreign, dead_op;
};

static struct {
	uint64_t n;
	int threads;
	int fds_opt;
	uint64_t spread_ns;
	unsigned int batch;
	uint64_t grace_ns;
	uint64_t seed;
	const char *indent;
} opt = {
	.n = 1000000,
	.threads = 4,
	.spread_ns = 3000 * NSEC_PER_MSEC,
	.batch = 1024,
	.grace_ns = 60 * NSEC_PER_SEC,
	.indent = "",
};

/* State of the current run. */
static struct trec *recs;
static int fds[MAX_FDS];
static int nfds;
static uint64_t per_thread;
static struct counts cnt;
static uint64_t max_req;		/* latest requested expiry (atomic max) */
static int threads_done;		/* workers past their arm/modify phase */
static uint64_t t_ops_done;		/* when the last one got there */
static unsigned int reports[8];	/* detailed messages printed, per kind */

struct worker {
	pthread_t tid;
	int id;
	int fd;			/* index in fds[] of the fd this thread arms on */
	int ep;			/* its epoll: all fds */
	uint64_t lo, hi;	/* its timers */
	uint64_t rng;
	struct twheel_batch_op *ops;
	struct twheel_event *evbuf;
};

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static uint64_t get(uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_ACQUIRE);
}

enum { R_ERROR, R_UNKNOWN, R_BAD, R_FOREIGN, R_DUP, R_DEAD, R_CHECK };

/* A violation: count it, print the first few of each kind. */
static void violation(uint64_t *counter, int kind, const char *fmt, ...)
{
	va_list ap;
	char msg[256];

	if (counter)
		add(counter, 1);
	if (__atomic_fetch_add(&reports[kind], 1, __ATOMIC_RELAXED) >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("%s# VIOLATION: %s\n", opt.indent, msg);
	fflush(stdout);
}

static int owner_fd(uint32_t idx)
{
	return (int)(idx / per_thread) % nfds;
}

/* ---- reading ---------------------------------------------------------- */

static void record_event(const struct twheel_event *ev, int fdi, uint64_t seen)
{
	uint32_t idx = COOKIE_IDX(ev->cookie);
	struct trec *r;

	if (ev->cookie >> 48 != COOKIE_MAGIC || idx >= opt.n) {
		violation(&cnt.unknown, R_UNKNOWN,
			  "unknown event: handle %#" PRIx64 " cookie %#" PRIx64,
			  (uint64_t)ev->handle, (uint64_t)ev->cookie);
		return;
	}
	if (ev->handle == 0 || ev->flags || ev->overrun || ev->__reserved ||
	    ev->fired < ev->expires || ev->fired > seen)
		violation(&cnt.bad, R_BAD,
			  "malformed event of timer %u: handle %#" PRIx64 " flags %#x overrun %"
			  PRIu64 " reserved %#x expires %" PRIu64 " fired %" PRIu64 " read at %"
			  PRIu64,
			  idx, (uint64_t)ev->handle, ev->flags, (uint64_t)ev->overrun,
			  ev->__reserved, (uint64_t)ev->expires, (uint64_t)ev->fired, seen);
	if (owner_fd(idx) != fdi)
		violation(&cnt.foreign, R_FOREIGN,
			  "event of timer %u (armed on fd #%d) read from fd #%d",
			  idx, owner_fd(idx), fdi);
	r = &recs[idx];
	if (__atomic_fetch_add(&r->nev, 1, __ATOMIC_RELAXED) == 0) {
		r->ev_fd = fdi;
		r->ev_gen = COOKIE_GEN(ev->cookie);
		r->ev_handle = ev->handle;
		r->ev_expires = ev->expires;
		r->ev_fired = ev->fired;
		r->ev_seen = seen;
	} else {
		violation(NULL, R_DUP,
			  "duplicate event of timer %u: generation %u, expires %" PRIu64,
			  idx, COOKIE_GEN(ev->cookie), (uint64_t)ev->expires);
	}
	add(&cnt.events, 1);
}

/*
 * One read() of fd #@fdi (non-blocking).  Returns the events read, 0 when
 * there were none (EAGAIN: another thread took them).
 */
static int read_fd(struct twheel_event *buf, int fdi)
{
	ssize_t len = read(fds[fdi], buf, READ_EVENTS * sizeof(*buf));
	uint64_t seen = now_ns();
	int i, n;

	add(&cnt.reads, 1);
	if (len < 0) {
		if (errno != EAGAIN)
			violation(&cnt.errors, R_ERROR, "read: %s", strerror(errno));
		return 0;
	}
	if (len == 0 || len % sizeof(*buf) || len > READ_EVENTS * (ssize_t)sizeof(*buf)) {
		violation(&cnt.bad, R_BAD, "read returned %zd bytes", len);
		return 0;
	}
	n = len / sizeof(*buf);
	for (i = 0; i < n; i++)
		record_event(&buf[i], fdi, seen);
	return n;
}

/* Wait up to @timeout_ms for events on the worker's epoll and read them. */
static int drain(struct worker *w, int timeout_ms)
{
	struct epoll_event eev[MAX_FDS];
	int i, n, got = 0;

	n = epoll_wait(w->ep, eev, MAX_FDS, timeout_ms);
	if (n < 0) {
		if (errno != EINTR)
			violation(&cnt.errors, R_ERROR, "epoll_wait: %s", strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		if (eev[i].events & ~(uint32_t)(EPOLLIN | EPOLLRDNORM))
			violation(&cnt.bad, R_BAD, "epoll events %#x", eev[i].events);
		got += read_fd(w->evbuf, (int)eev[i].data.u32);
	}
	return got;
}

/* ---- arming, modifying, cancelling ------------------------------------ */

static uint64_t pick_slack(struct worker *w)
{
	/* mostly none; some up to 2 ms, so that coalescing is exercised */
	return rnd(&w->rng) % 4 ? 0 : rnd(&w->rng) % (2 * NSEC_PER_MSEC);
}

static void note_req(uint64_t req)
{
	uint64_t cur = __atomic_load_n(&max_req, __ATOMIC_RELAXED);

	while (req > cur &&
	       !__atomic_compare_exchange_n(&max_req, &cur, req, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Run @count records; every one must be processed. */
static bool run_batch(struct worker *w, unsigned int count)
{
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)w->ops,
		.count = count,
		.op_size = sizeof(*w->ops),
	};
	int ret;

	if (!count)
		return true;
	ret = ioctl(fds[w->fd], TWHEEL_IOC_BATCH, &b);
	add(&cnt.batches, 1);
	if (ret != (int)count || b.out_done != count) {
		violation(&cnt.errors, R_ERROR,
			  "TWHEEL_IOC_BATCH of %u records returned %d (%s), done %u",
			  count, ret, ret < 0 ? strerror(errno) : "short", b.out_done);
		return false;
	}
	return true;
}

static void arm_chunk(struct worker *w, uint64_t a, uint64_t b)
{
	uint64_t now = now_ns(), i;
	unsigned int k = 0;

	for (i = a; i < b; i++) {
		struct twheel_batch_op *op = &w->ops[k++];

		memset(op, 0, sizeof(*op));
		op->op = TWHEEL_OP_ARM;
		op->spec.flags = TWHEEL_ARM_ABS;
		op->spec.expires = now + rnd(&w->rng) % opt.spread_ns;
		op->spec.slack = pick_slack(w);
		op->spec.cookie = COOKIE(i, 0);
		op->out_result = INT32_MIN;	/* ARM always writes it */
		note_req(op->spec.expires);
	}
	if (!run_batch(w, k))
		return;
	for (k = 0, i = a; i < b; i++, k++) {
		struct twheel_batch_op *op = &w->ops[k];
		struct trec *r = &recs[i];

		if (op->out_result || !op->handle) {
			violation(&cnt.errors, R_ERROR, "arm of timer %" PRIu64 ": result %" PRId64
				  " (%s), handle %#" PRIx64, i, (int64_t)op->out_result,
				  strerror((int)-op->out_result), (uint64_t)op->handle);
			continue;
		}
		r->handle = op->handle;
		r->req = op->spec.expires;
		r->gen = 0;
		r->state = T_LIVE;
		add(&cnt.armed, 1);
	}
}

/*
 * The result of a MODIFY (@gen, @req) or CANCEL of timer @idx, applied in
 * the order the kernel processed them.  @status: the single CANCEL's
 * status, 0 from a batch record.
 */
static void apply(uint32_t idx, uint32_t op, int64_t result, uint16_t gen,
		  uint64_t req, uint32_t status)
{
	struct trec *r = &recs[idx];
	const char *name = op == TWHEEL_OP_MODIFY ? "MODIFY" : "CANCEL";

	if (result == 0) {
		if (r->state != T_LIVE) {
			/* A handle that was released must stay dead. */
			violation(&cnt.dead_op, R_DEAD,
				  "%s of timer %u succeeded after %s", name, idx,
				  r->state == T_GONE ? "ENOENT" : "its cancel");
			return;
		}
		if (op == TWHEEL_OP_MODIFY) {
			r->gen = gen;
			r->req = req;
			add(&cnt.modified, 1);
			return;
		}
		r->state = T_CANCELLED;
		add(&cnt.cancelled, 1);
		if (status == TWHEEL_CANCEL_PENDING)
			add(&cnt.cancel_pending, 1);
		else if (status == TWHEEL_CANCEL_FIRED)
			add(&cnt.cancel_fired, 1);
		else if (status)
			violation(&cnt.errors, R_ERROR, "CANCEL of timer %u: status %u",
				  idx, status);
		return;
	}
	if (result != -ENOENT) {
		violation(&cnt.errors, R_ERROR, "%s of timer %u: %s", name, idx,
			  strerror((int)-result));
		return;
	}
	/* The one-shot's event was read: the last generation set is final. */
	if (r->state == T_LIVE) {
		r->state = T_GONE;
		add(op == TWHEEL_OP_MODIFY ? &cnt.modify_late : &cnt.cancel_late, 1);
	}
}

static void single_op(struct worker *w, uint32_t idx, uint32_t op,
		      uint16_t gen, uint64_t req, uint64_t slack)
{
	struct trec *r = &recs[idx];
	int ret;

	add(&cnt.singles, 1);
	if (op == TWHEEL_OP_MODIFY) {
		struct twheel_modify a = {
			.size = sizeof(a),
			.handle = r->handle,
			.spec.flags = TWHEEL_ARM_ABS,
			.spec.expires = req,
			.spec.slack = slack,
			.spec.cookie = COOKIE(idx, gen),
		};

		ret = ioctl(fds[w->fd], TWHEEL_IOC_MODIFY, &a) ? -errno : 0;
		apply(idx, op, ret, gen, req, 0);
	} else {
		struct twheel_cancel c = { .size = sizeof(c), .handle = r->handle };

		ret = ioctl(fds[w->fd], TWHEEL_IOC_CANCEL, &c) ? -errno : 0;
		apply(idx, op, ret, 0, 0, ret ? 0 : c.out_status);
	}
}

/* Check what QUERY says about a timer against what its owner knows. */
static void query(struct worker *w, uint32_t idx)
{
	struct trec *r = &recs[idx];
	struct twheel_query q = { .size = sizeof(q), .handle = r->handle };
	int ret = ioctl(fds[w->fd], TWHEEL_IOC_QUERY, &q) ? -errno : 0;

	add(&cnt.queried, 1);
	if (ret == -ENOENT) {
		if (r->state == T_LIVE)
			r->state = T_GONE;	/* read meanwhile */
		return;
	}
	if (ret) {
		violation(&cnt.errors, R_ERROR, "QUERY of timer %u: %s", idx,
			  strerror(-ret));
		return;
	}
	if (r->state != T_LIVE) {
		violation(&cnt.dead_op, R_DEAD, "QUERY of released timer %u succeeded", idx);
		return;
	}
	if (q.handle != r->handle || q.out_cookie != COOKIE(idx, r->gen) || q.out_period ||
	    (q.out_state & ~(uint32_t)(TWHEEL_QUERY_PENDING | TWHEEL_QUERY_EVENT)) ||
	    ((q.out_state & TWHEEL_QUERY_PENDING) && q.out_expires != r->req))
		violation(&cnt.bad, R_BAD,
			  "QUERY of timer %u: handle %#" PRIx64 " cookie %#" PRIx64
			  " state %#x expires %" PRIu64 ", expected cookie %#" PRIx64
			  " expires %" PRIu64,
			  idx, (uint64_t)q.handle, (uint64_t)q.out_cookie, q.out_state,
			  (uint64_t)q.out_expires, COOKIE(idx, r->gen), r->req);
}

/*
 * Modify and cancel some timers of [@a, @b): per timer, 25% one MODIFY,
 * 5% two, 7% a CANCEL, 3% a MODIFY then a CANCEL; one timer in 16 of
 * those through single ioctls, the rest through one batch.  1% queried.
 */
static void ops_chunk(struct worker *w, uint64_t a, uint64_t b)
{
	struct {
		uint32_t idx;
		uint16_t gen;
	} meta[3 * 4096];
	uint64_t i, now = now_ns();
	unsigned int k = 0, j;

	for (i = a; i < b; i++) {
		struct trec *r = &recs[i];
		unsigned int p = rnd(&w->rng) % 100, nmod, cancel, m;
		bool single = rnd(&w->rng) % 16 == 0;
		uint16_t gen = r->gen;

		if (r->state == T_NONE)
			continue;
		if (p < 1)
			query(w, i);
		nmod = p < 25 ? 1 : p < 30 ? 2 : p < 37 ? 0 : p < 40 ? 1 : 0;
		cancel = p >= 30 && p < 40;
		for (m = 0; m < nmod + cancel; m++) {
			bool is_cancel = m == nmod;
			uint64_t req = now + rnd(&w->rng) % opt.spread_ns;
			uint64_t slack = pick_slack(w);
			struct twheel_batch_op *op;

			if (!is_cancel) {
				gen++;
				note_req(req);
			}
			if (single) {
				single_op(w, i, is_cancel ? TWHEEL_OP_CANCEL : TWHEEL_OP_MODIFY,
					  gen, req, slack);
				continue;
			}
			op = &w->ops[k];
			memset(op, 0, sizeof(*op));
			op->op = is_cancel ? TWHEEL_OP_CANCEL : TWHEEL_OP_MODIFY;
			op->handle = r->handle;
			/* written only if the record fails */
			op->out_result = 0;
			if (!is_cancel) {
				op->spec.flags = TWHEEL_ARM_ABS;
				op->spec.expires = req;
				op->spec.slack = slack;
				op->spec.cookie = COOKIE(i, gen);
			}
			meta[k].idx = i;
			meta[k].gen = gen;
			k++;
		}
	}
	if (!run_batch(w, k))
		return;
	for (j = 0; j < k; j++) {
		struct twheel_batch_op *op = &w->ops[j];

		apply(meta[j].idx, op->op, op->out_result, meta[j].gen, op->spec.expires, 0);
	}
}

static bool all_delivered(void)
{
	return __atomic_load_n(&threads_done, __ATOMIC_ACQUIRE) == opt.threads &&
	       get(&cnt.events) >= get(&cnt.armed) - get(&cnt.cancelled);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t a, prev = w->lo, deadline;

	for (a = w->lo; a < w->hi; a += opt.batch) {
		uint64_t b = a + opt.batch < w->hi ? a + opt.batch : w->hi;

		arm_chunk(w, a, b);
		if (a > w->lo)
			ops_chunk(w, prev, a);
		prev = a;
		while (drain(w, 0) > 0)
			;
	}
	if (prev < w->hi)
		ops_chunk(w, prev, w->hi);
	if (__atomic_add_fetch(&threads_done, 1, __ATOMIC_ACQ_REL) == opt.threads)
		__atomic_store_n(&t_ops_done, now_ns(), __ATOMIC_RELEASE);

	/* Bounded: the last expiry asked for plus the grace time. */
	while (!all_delivered()) {
		deadline = __atomic_load_n(&max_req, __ATOMIC_RELAXED) + opt.grace_ns;
		if (now_ns() > deadline)
			break;
		drain(w, 100);
	}
	return NULL;
}

/* ---- one run ------------------------------------------------------------ */

/* "timers:" and "events:" of /proc/self/fdinfo/@fd; false if unreadable. */
static bool fdinfo(int fd, unsigned long *timers, unsigned long *events)
{
	char path[64], line[128];
	bool t = false, e = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/%s/%d", "fdinfo", fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "timers: %lu", timers) == 1)
			t = true;
		else if (sscanf(line, "events: %lu", events) == 1)
			e = true;
	}
	fclose(f);
	return t && e;
}

static int test_no;

static bool run(int nf)
{
	struct worker ws[MAX_THREADS];
	uint64_t t0, t_end, lost = 0, dups = 0, early = 0, stale = 0,
		 wrong = 0, after_cancel = 0, never_armed = 0, fired = 0,
		 leftover = 0, late_max = 0, late_sum = 0, late_100ms = 0, i;
	struct twheel_event ev[READ_EVENTS];
	bool ok;
	int t, f;

	memset(&cnt, 0, sizeof(cnt));
	memset(reports, 0, sizeof(reports));
	max_req = 0;
	threads_done = 0;
	t_ops_done = 0;
	nfds = nf;
	per_thread = (opt.n + opt.threads - 1) / opt.threads;
	recs = calloc(opt.n, sizeof(*recs));
	if (!recs) {
		printf("%snot ok %d stress %d fd(s): out of memory\n", opt.indent, ++test_no, nf);
		return false;
	}
	for (f = 0; f < nfds; f++) {
		fds[f] = open("/dev/twheel", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (fds[f] < 0) {
			printf("%snot ok %d stress %d fd(s): open /dev/twheel: %s\n",
			       opt.indent, ++test_no, nf, strerror(errno));
			return false;
		}
	}
	t0 = now_ns();
	for (t = 0; t < opt.threads; t++) {
		struct worker *w = &ws[t];

		memset(w, 0, sizeof(*w));
		w->id = t;
		w->fd = t % nfds;
		w->lo = t * per_thread < opt.n ? t * per_thread : opt.n;
		w->hi = (t + 1) * per_thread < opt.n ? (t + 1) * per_thread : opt.n;
		w->rng = opt.seed * 0x9e3779b97f4a7c15ULL + (uint64_t)t * 7919 + (uint64_t)nf + 1;
		w->ops = calloc(3 * opt.batch, sizeof(*w->ops));
		w->evbuf = calloc(READ_EVENTS, sizeof(*w->evbuf));
		w->ep = epoll_create1(EPOLL_CLOEXEC);
		if (!w->ops || !w->evbuf || w->ep < 0) {
			perror("twheel_stress: setup");
			exit(2);
		}
		for (f = 0; f < nfds; f++) {
			struct epoll_event e = { .events = EPOLLIN, .data.u32 = f };

			if (epoll_ctl(w->ep, EPOLL_CTL_ADD, fds[f], &e)) {
				perror("twheel_stress: epoll_ctl");
				exit(2);
			}
		}
	}
	for (t = 0; t < opt.threads; t++) {
		if (pthread_create(&ws[t].tid, NULL, worker_main, &ws[t])) {
			perror("twheel_stress: pthread_create");
			exit(2);
		}
	}
	for (t = 0; t < opt.threads; t++) {
		pthread_join(ws[t].tid, NULL);
		close(ws[t].ep);
		free(ws[t].ops);
		free(ws[t].evbuf);
	}
	t_end = now_ns();

	/* Whatever is still there is counted (and is a violation below). */
	for (f = 0; f < nfds; f++) {
		unsigned long timers = 0, events = 0;

		while (read_fd(ev, f) > 0)
			;
		if (!fdinfo(fds[f], &timers, &events))
			violation(&cnt.errors, R_CHECK, "no fdinfo for fd #%d", f);
		if (timers || events)
			violation(NULL, R_CHECK, "fd #%d still holds %lu timers, %lu events",
				  f, timers, events);
		leftover += timers + events;
		close(fds[f]);
	}

	for (i = 0; i < opt.n; i++) {
		struct trec *r = &recs[i];

		if (r->nev > 1)
			dups += r->nev - 1;
		switch (r->state) {
		case T_NONE:
			never_armed++;
			continue;
		case T_CANCELLED:
			if (r->nev) {
				after_cancel++;
				violation(NULL, R_CHECK, "timer %" PRIu64
					  " delivered after its cancel", i);
			}
			continue;
		}
		if (!r->nev) {
			lost++;
			violation(NULL, R_CHECK, "timer %" PRIu64
				  " lost: generation %u expires %" PRIu64, i, r->gen, r->req);
			continue;
		}
		fired++;
		if (r->ev_gen != r->gen) {
			stale++;
			violation(NULL, R_CHECK, "timer %" PRIu64
				  ": event of generation %u, expected %u", i, r->ev_gen, r->gen);
			continue;
		}
		if (r->ev_handle != r->handle || r->ev_expires != r->req) {
			wrong++;
			violation(NULL, R_CHECK, "timer %" PRIu64 ": event handle %#" PRIx64
				  " expires %" PRIu64 ", armed as %#" PRIx64 " at %" PRIu64,
				  i, r->ev_handle, r->ev_expires, r->handle, r->req);
		}
		if (r->ev_fired < r->req || r->ev_seen < r->req) {
			early++;
			violation(NULL, R_CHECK, "timer %" PRIu64 " early: expires %" PRIu64
				  " fired %" PRIu64 " read at %" PRIu64,
				  i, r->req, r->ev_fired, r->ev_seen);
			continue;
		}
		late_sum += r->ev_fired - r->req;
		if (r->ev_fired - r->req > late_max)
			late_max = r->ev_fired - r->req;
		if (r->ev_fired - r->req > 100 * NSEC_PER_MSEC)
			late_100ms++;
	}

	ok = !(cnt.errors | cnt.unknown | cnt.bad | cnt.foreign | cnt.dead_op |
	       lost | dups | early | stale | wrong | after_cancel | never_armed | leftover) &&
	     fired + cnt.cancelled == cnt.armed && cnt.armed == opt.n;
	printf("%s# %d fd(s), %d threads: armed %" PRIu64 " modified %" PRIu64
	       " (%" PRIu64 " too late) cancelled %" PRIu64 " (%" PRIu64 " pending, %" PRIu64
	       " fired, %" PRIu64 " in batches; %" PRIu64 " too late) queried %" PRIu64 "\n",
	       opt.indent, nf, opt.threads, cnt.armed, cnt.modified, cnt.modify_late,
	       cnt.cancelled, cnt.cancel_pending, cnt.cancel_fired,
	       cnt.cancelled - cnt.cancel_pending - cnt.cancel_fired, cnt.cancel_late,
	       cnt.queried);
	printf("%s# fired %" PRIu64 " early %" PRIu64 " lost %" PRIu64 " duplicates %" PRIu64
	       " stale %" PRIu64 " after-cancel %" PRIu64 " unknown %" PRIu64 " malformed %" PRIu64
	       " foreign %" PRIu64 " wrong %" PRIu64 " errors %" PRIu64 " dead-handle ops %" PRIu64
	       " leftover %" PRIu64 "\n",
	       opt.indent, fired, early, lost, dups, stale, after_cancel, cnt.unknown, cnt.bad,
	       cnt.foreign, wrong, cnt.errors, cnt.dead_op, leftover);
	printf("%s# %" PRIu64 " batches, %" PRIu64 " single ioctls, %" PRIu64
	       " reads; ops done after %.2f s, all read after %.2f s; lateness mean %.2f ms max %.2f ms, %"
	       PRIu64 " over 100 ms\n",
	       opt.indent, cnt.batches, cnt.singles, cnt.reads,
	       (t_ops_done ? t_ops_done - t0 : 0) / 1e9, (t_end - t0) / 1e9,
	       fired ? late_sum / (double)fired / 1e6 : 0.0, late_max / 1e6, late_100ms);
	printf("%s%sok %d stress %d fd(s), %d threads: armed %" PRIu64 " modified %" PRIu64
	       " cancelled %" PRIu64 " fired %" PRIu64 " early %" PRIu64 " lost %" PRIu64
	       " duplicates %" PRIu64 " stale %" PRIu64 " after cancel %" PRIu64 "\n",
	       opt.indent, ok ? "" : "not ", ++test_no, nf, opt.threads, cnt.armed,
	       cnt.modified, cnt.cancelled, fired, early, lost, dups, stale, after_cancel);
	fflush(stdout);
	free(recs);
	return ok;
}

static void bad_usage(void)
{
	fprintf(stderr,
		"usage: %s [-n TIMERS] [-j THREADS] [-f FDS] [-d SPREAD_MS]\n"
		"                     [-b BATCH] [-g GRACE_S] [-s SEED] [-i]\n", "twheel_stress");
	exit(2);
}

int main(int argc, char **argv)
{
	struct twheel_api api = { .size = sizeof(api) };
	int c, fd, runs[2], nruns, r;
	bool ok = true;

	opt.seed = (uint64_t)time(NULL);
	while ((c = getopt(argc, argv, "n:j:f:d:b:g:s:i")) != -1) {
		switch (c) {
		case 'n':
			opt.n = strtoull(optarg, NULL, 0);
			break;
		case 'j':
			opt.threads = atoi(optarg);
			break;
		case 'f':
			opt.fds_opt = atoi(optarg);
			break;
		case 'd':
			opt.spread_ns = strtoull(optarg, NULL, 0) * NSEC_PER_MSEC;
			break;
		case 'b':
			opt.batch = strtoul(optarg, NULL, 0);
			break;
		case 'g':
			opt.grace_ns = strtoull(optarg, NULL, 0) * NSEC_PER_SEC;
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'i':
			opt.indent = "    ";
			break;
		default:
			bad_usage();
		}
	}
	if (opt.n < 1 || opt.n > UINT32_MAX || opt.threads < 1 ||
	    opt.threads > MAX_THREADS || opt.fds_opt < 0 || opt.fds_opt > MAX_FDS ||
	    opt.batch < 1 || opt.batch > 4096 || !opt.spread_ns)
		bad_usage();

	printf("%sTAP version 13\n", opt.indent);
	if (opt.fds_opt) {
		runs[0] = opt.fds_opt;
		nruns = 1;
	} else {
		runs[0] = 1;
		runs[1] = opt.threads;
		nruns = opt.threads > 1 ? 2 : 1;
	}
	printf("%s1..%d\n", opt.indent, nruns);
	fd = open("/dev/twheel", O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, TWHEEL_IOC_API, &api)) {
		printf("%sBail out! /dev/twheel: %s\n", opt.indent, strerror(errno));
		return 1;
	}
	close(fd);
	printf("%s# seed %" PRIu64 ", %" PRIu64 " timers, spread %" PRIu64 " ms, batch %u; tick %"
	       PRIu64 " ns, max_timers_per_fd %" PRIu64 ", max_timers_per_user %" PRIu64 "\n",
	       opt.indent, opt.seed, opt.n, (uint64_t)(opt.spread_ns / NSEC_PER_MSEC), opt.batch,
	       (uint64_t)api.out_tick_ns, (uint64_t)api.out_max_timers_per_fd,
	       (uint64_t)api.out_max_timers_per_user);
	if (api.out_max_timers_per_fd < opt.n || api.out_max_timers_per_user < opt.n) {
		printf("%sBail out! the timer limits are below %" PRIu64
		       ": load twheel with larger max_timers_per_fd/max_timers_per_user\n",
		       opt.indent, opt.n);
		return 1;
	}
	for (r = 0; r < nruns; r++)
		ok &= run(runs[r]);
	return ok ? 0 : 1;
}
