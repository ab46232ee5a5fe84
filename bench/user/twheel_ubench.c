// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_ubench - userspace benchmark: arm + cancel throughput and kernel
 * memory per armed timer of /dev/twheel against one timerfd per timer,
 * POSIX timers (SIGEV_NONE) and io_uring timeouts.
 *
 * For each implementation and N, with N timers outstanding at the end of
 * the arm phase:
 *   arm     arm N timers (expiries uniform in settle + [1, 60] s), ns per
 *           timer, wall clock over the whole phase
 *   rearm   re-arm every armed timer, in random order, 1 s later (twheel:
 *           MODIFY; timerfd, POSIX: settime on the armed timer); not for
 *           io_uring, whose timeout update walks the list as removal does
 *   cancel  cancel them in random order, ns per timer (io_uring: a random
 *           sample of at most --uring-sample timers, because each removal
 *           walks the ring's timeout list; the ring's teardown removes the
 *           rest)
 *   create / close  creating and destroying the objects where that is a
 *           separate call (timerfd_create/close, timer_create/delete)
 *   bytes_per_timer  kernel memory per armed timer: the growth of
 *           Slab + VmallocUsed in /proc/meminfo from before the objects
 *           were created to after all N are armed, divided by N
 * and, first, the cost of a system call in this VM (suite "prims"):
 * getppid() and an unknown ioctl on /dev/twheel (ENOTTY: the whole ioctl
 * path, fd lookup, LSM hook and dispatch, without any work).
 * Median over the repetitions.  Output lines:
 *   twheel_ubench: csv,<suite>,<impl>,<n>,<op>,<value>
 * Must run as root (raises RLIMIT_NOFILE, fs.nr_open, RLIMIT_SIGPENDING).
 *
 * Usage: twheel_ubench [-n N,N,...] [-i impl,...] [-r reps] [-s settle_s]
 *                      [-u uring_sample] [-p posix_max_n]
 * impls: twheel twheel_b64 twheel_b4096 timerfd posix io_uring
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/types.h>
#include <linux/twheel.h>

#define PFX "twheel_ubench: "
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long ns_list[16] = { 1000, 10000, 100000, 1000000 };
static int ns_count = 4;
static const char *impls = "twheel,twheel_b64,twheel_b4096,timerfd,posix,io_uring";
static unsigned int reps = 5;
static unsigned int settle_s = 120;
static unsigned int uring_sample = 1024;
/*
 * 6.1 keeps every POSIX timer of the system in one 512-bucket hash, so
 * timer_create/settime/delete walk chains of N/512 at large N: 10^6 takes
 * about 20 minutes in the VM.  Measured up to this N unless -p says more.
 */
static unsigned long posix_max = 100000;
static int failures;

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(PFX "error: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
	failures++;
}

static void emit(const char *suite, const char *impl, unsigned long n,
		 const char *op, double v)
{
	printf(PFX "csv,%s,%s,%lu,%s,%.3f\n", suite, impl, n, op, v);
	fflush(stdout);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static __u64 rng = 88172645463325252ULL;

static __u64 rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 2685821657736338717ULL;
}

static bool listed(const char *list, const char *word)
{
	size_t len = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		if ((p == list || p[-1] == ',') && (p[len] == ',' || !p[len]))
			return true;
		p += len;
	}
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- memory accounting -------------------------------------------------- */

struct mem {
	long long slab, vmalloc, memfree;	/* bytes */
};

static struct mem mem_read(void)
{
	struct mem m = { 0, 0, 0 };
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		long long kb;

		if (sscanf(line, "Slab: %lld kB", &kb) == 1)
			m.slab = kb * 1024;
		else if (sscanf(line, "VmallocUsed: %lld kB", &kb) == 1)
			m.vmalloc = kb * 1024;
		else if (sscanf(line, "MemFree: %lld kB", &kb) == 1)
			m.memfree = kb * 1024;
	}
	fclose(f);
	return m;
}

#define SLABS 512
struct slab {
	char name[64];
	long long bytes;
};

static int slab_read(struct slab *s)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return 0;
	while (n < SLABS && fgets(line, sizeof(line), f)) {
		long long active, num, size;

		if (sscanf(line, "%63s %lld %lld %lld", s[n].name, &active, &num,
			   &size) == 4) {
			s[n].bytes = active * size;
			n++;
		}
	}
	fclose(f);
	return n;
}

static struct mem mem0;
static struct slab slab0[SLABS];
static int nslab0;

static void mem_begin(void)
{
	nslab0 = slab_read(slab0);
	mem0 = mem_read();
}

/* After N timers are armed: report per-timer kernel memory. */
static void mem_end(const char *impl, unsigned long n)
{
	struct mem m1 = mem_read();
	static struct slab s1[SLABS];
	int n1 = slab_read(s1), i, j, k;

	emit("mem", impl, n, "bytes_per_timer",
	     (double)((m1.slab - mem0.slab) + (m1.vmalloc - mem0.vmalloc)) / n);
	emit("mem", impl, n, "bytes_per_timer_memfree",
	     (double)(mem0.memfree - m1.memfree) / n);
	if (n < 100000)
		return;
	/* the four slab caches that grew most */
	for (k = 0; k < 4; k++) {
		long long best = 0;
		int bi = -1;

		for (i = 0; i < n1; i++) {
			long long d = s1[i].bytes;

			for (j = 0; j < nslab0; j++)
				if (!strcmp(slab0[j].name, s1[i].name)) {
					d -= slab0[j].bytes;
					break;
				}
			if (d > best) {
				best = d;
				bi = i;
			}
		}
		if (bi < 0)
			break;
		printf(PFX "slab,%s,%lu,%s,%.1f\n", impl, n, s1[bi].name,
		       (double)best / n);
		s1[bi].bytes -= best;	/* exclude from the next round */
	}
}

/* ---- workload ------------------------------------------------------------ */

struct work {
	unsigned long n;
	__u64 *exp;		/* relative expiry, ns */
	__u32 *perm;		/* cancel order */
};

static void work_make(struct work *w, unsigned long n)
{
	unsigned long i;

	w->n = n;
	w->exp = malloc(n * sizeof(*w->exp));
	w->perm = malloc(n * sizeof(*w->perm));
	if (!w->exp || !w->perm) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (i = 0; i < n; i++) {
		w->exp[i] = (__u64)settle_s * 1000000000ULL +
			    1000000000ULL + rnd() % 59000000000ULL;
		w->perm[i] = i;
	}
	for (i = n; i > 1; i--) {
		unsigned long j = rnd() % i;
		__u32 t = w->perm[i - 1];

		w->perm[i - 1] = w->perm[j];
		w->perm[j] = t;
	}
}

static void work_free(struct work *w)
{
	free(w->exp);
	free(w->perm);
}

struct result {
	double arm, rearm, cancel, create, close;
};

/* Re-arm: one second later than the first expiry, so every timer moves. */
#define REARM_NS 1000000000ULL

/* ---- twheel ---------------------------------------------------------------- */

static int twheel_fd(unsigned long n)
{
	struct twheel_api api;
	int fd = open("/dev/twheel", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fail("open /dev/twheel: %s", strerror(errno));
		return -1;
	}
	if (ioctl(fd, TWHEEL_IOC_API, &api)) {
		fail("TWHEEL_IOC_API: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (api.max_timers_per_fd < n ||
	    (api.max_timers_per_user && api.max_timers_per_user < n)) {
		fail("twheel limits (%llu per fd, %llu per user) below N=%lu",
		     (unsigned long long)api.max_timers_per_fd,
		     (unsigned long long)api.max_timers_per_user, n);
		close(fd);
		return -1;
	}
	return fd;
}

static int run_twheel(struct work *w, unsigned int b, bool mem, struct result *r)
{
	unsigned long n = w->n, i;
	struct twheel_batch_op *ops = NULL;
	__u64 *h = malloc(n * sizeof(*h));
	__u64 t0;
	int fd, ret = -1;

	if (b)
		ops = calloc(b, sizeof(*ops));
	if (!h || (b && !ops)) {
		fail("out of memory");
		goto out;
	}
	memset(h, 0, n * sizeof(*h));
	if (b)
		memset(ops, 0, b * sizeof(*ops));
	if (mem)
		mem_begin();
	fd = twheel_fd(n);
	if (fd < 0)
		goto out;

	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			struct twheel_arm a = { .expires = w->exp[i] };

			if (ioctl(fd, TWHEEL_IOC_ARM, &a)) {
				fail("TWHEEL_IOC_ARM #%lu: %s", i, strerror(errno));
				goto out_close;
			}
			h[i] = a.handle;
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;
			struct twheel_batch bt = { .ops = (uintptr_t)ops, .count = c };

			for (j = 0; j < c; j++) {
				memset(&ops[j], 0, sizeof(ops[j]));
				ops[j].op = TWHEEL_OP_ARM;
				ops[j].expires = w->exp[i + j];
			}
			if (ioctl(fd, TWHEEL_IOC_BATCH, &bt) != (int)c) {
				fail("TWHEEL_IOC_BATCH arm: %s", strerror(errno));
				goto out_close;
			}
			for (j = 0; j < c; j++) {
				if (ops[j].result) {
					fail("batch arm: %lld", (long long)ops[j].result);
					goto out_close;
				}
				h[i + j] = ops[j].handle;
			}
		}
	}
	r->arm = (double)(now_ns() - t0) / n;
	if (mem)
		mem_end("twheel", n);

	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			__u32 k = w->perm[i];
			struct twheel_arm a = {
				.handle = h[k], .expires = w->exp[k] + REARM_NS
			};

			if (ioctl(fd, TWHEEL_IOC_MODIFY, &a)) {
				fail("TWHEEL_IOC_MODIFY #%lu: %s", i, strerror(errno));
				goto out_close;
			}
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;
			struct twheel_batch bt = { .ops = (uintptr_t)ops, .count = c };

			for (j = 0; j < c; j++) {
				__u32 k = w->perm[i + j];

				memset(&ops[j], 0, sizeof(ops[j]));
				ops[j].op = TWHEEL_OP_MODIFY;
				ops[j].handle = h[k];
				ops[j].expires = w->exp[k] + REARM_NS;
			}
			if (ioctl(fd, TWHEEL_IOC_BATCH, &bt) != (int)c) {
				fail("TWHEEL_IOC_BATCH modify: %s", strerror(errno));
				goto out_close;
			}
			for (j = 0; j < c; j++)
				if (ops[j].result) {
					fail("batch modify: %lld", (long long)ops[j].result);
					goto out_close;
				}
		}
	}
	r->rearm = (double)(now_ns() - t0) / n;

	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			struct twheel_cancel c = { .handle = h[w->perm[i]] };

			if (ioctl(fd, TWHEEL_IOC_CANCEL, &c) ||
			    c.status != TWHEEL_CANCEL_PENDING) {
				fail("TWHEEL_IOC_CANCEL #%lu: %s (status %u)", i,
				     strerror(errno), c.status);
				goto out_close;
			}
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;
			struct twheel_batch bt = { .ops = (uintptr_t)ops, .count = c };

			for (j = 0; j < c; j++) {
				memset(&ops[j], 0, sizeof(ops[j]));
				ops[j].op = TWHEEL_OP_CANCEL;
				ops[j].handle = h[w->perm[i + j]];
			}
			if (ioctl(fd, TWHEEL_IOC_BATCH, &bt) != (int)c) {
				fail("TWHEEL_IOC_BATCH cancel: %s", strerror(errno));
				goto out_close;
			}
			for (j = 0; j < c; j++)
				if (ops[j].result) {
					fail("batch cancel: %lld", (long long)ops[j].result);
					goto out_close;
				}
		}
	}
	r->cancel = (double)(now_ns() - t0) / n;
	r->create = -1;
	r->close = -1;
	ret = 0;
out_close:
	close(fd);
out:
	free(ops);
	free(h);
	return ret;
}

/* ---- timerfd ---------------------------------------------------------------- */

static int run_timerfd(struct work *w, bool mem, struct result *r)
{
	unsigned long n = w->n, i, made = 0;
	int *fds = malloc(n * sizeof(*fds));
	struct itimerspec zero = { 0 };
	__u64 t0;
	int ret = -1;

	if (!fds) {
		fail("out of memory");
		return -1;
	}
	memset(fds, 0xff, n * sizeof(*fds));
	if (mem)
		mem_begin();
	t0 = now_ns();
	for (i = 0; i < n; i++, made++) {
		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0) {
			fail("timerfd_create #%lu: %s", i, strerror(errno));
			goto out;
		}
	}
	r->create = (double)(now_ns() - t0) / n;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = w->exp[i] / 1000000000ULL;
		its.it_value.tv_nsec = w->exp[i] % 1000000000ULL;
		if (timerfd_settime(fds[i], 0, &its, NULL)) {
			fail("timerfd_settime: %s", strerror(errno));
			goto out;
		}
	}
	r->arm = (double)(now_ns() - t0) / n;
	if (mem)
		mem_end("timerfd", n);

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		__u32 k = w->perm[i];
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = (w->exp[k] + REARM_NS) / 1000000000ULL;
		its.it_value.tv_nsec = (w->exp[k] + REARM_NS) % 1000000000ULL;
		if (timerfd_settime(fds[k], 0, &its, NULL)) {
			fail("timerfd re-arm: %s", strerror(errno));
			goto out;
		}
	}
	r->rearm = (double)(now_ns() - t0) / n;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (timerfd_settime(fds[w->perm[i]], 0, &zero, NULL)) {
			fail("timerfd_settime (disarm): %s", strerror(errno));
			goto out;
		}
	r->cancel = (double)(now_ns() - t0) / n;
	ret = 0;
out:
	t0 = now_ns();
	for (i = 0; i < made; i++)
		close(fds[i]);
	r->close = (double)(now_ns() - t0) / n;
	free(fds);
	return ret;
}

/* ---- POSIX timers -------------------------------------------------------------- */

static int run_posix(struct work *w, bool mem, struct result *r)
{
	unsigned long n = w->n, i, made = 0;
	timer_t *ids = malloc(n * sizeof(*ids));
	struct itimerspec zero = { 0 };
	struct sigevent sev;
	__u64 t0;
	int ret = -1;

	if (!ids) {
		fail("out of memory");
		return -1;
	}
	memset(ids, 0, n * sizeof(*ids));
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_NONE;
	if (mem)
		mem_begin();
	t0 = now_ns();
	for (i = 0; i < n; i++, made++)
		if (timer_create(CLOCK_MONOTONIC, &sev, &ids[i])) {
			fail("timer_create #%lu: %s", i, strerror(errno));
			goto out;
		}
	r->create = (double)(now_ns() - t0) / n;

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = w->exp[i] / 1000000000ULL;
		its.it_value.tv_nsec = w->exp[i] % 1000000000ULL;
		if (timer_settime(ids[i], 0, &its, NULL)) {
			fail("timer_settime: %s", strerror(errno));
			goto out;
		}
	}
	r->arm = (double)(now_ns() - t0) / n;
	if (mem)
		mem_end("posix", n);

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		__u32 k = w->perm[i];
		struct itimerspec its = { 0 };

		its.it_value.tv_sec = (w->exp[k] + REARM_NS) / 1000000000ULL;
		its.it_value.tv_nsec = (w->exp[k] + REARM_NS) % 1000000000ULL;
		if (timer_settime(ids[k], 0, &its, NULL)) {
			fail("posix re-arm: %s", strerror(errno));
			goto out;
		}
	}
	r->rearm = (double)(now_ns() - t0) / n;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (timer_settime(ids[w->perm[i]], 0, &zero, NULL)) {
			fail("timer_settime (disarm): %s", strerror(errno));
			goto out;
		}
	r->cancel = (double)(now_ns() - t0) / n;
	ret = 0;
out:
	t0 = now_ns();
	for (i = 0; i < made; i++)
		timer_delete(ids[i]);
	r->close = (double)(now_ns() - t0) / n;
	free(ids);
	return ret;
}

/* ---- io_uring ---------------------------------------------------------------- */

#define URING_SQ	4096
#define URING_REMOVE	0x4000000000000000ULL	/* user_data of removals */

static unsigned long uring_expired;

/* Reap what is there; count CQEs and complain about unexpected results. */
static unsigned long uring_reap(struct io_uring *ring)
{
	struct io_uring_cqe *cqes[256];
	unsigned long got = 0;
	unsigned int k, c;

	while ((c = io_uring_peek_batch_cqe(ring, cqes, 256)) > 0) {
		for (k = 0; k < c; k++) {
			int res = cqes[k]->res;
			bool remove = cqes[k]->user_data & URING_REMOVE;

			/*
			 * A removal: 0; the timeout it removed: -ECANCELED.  A
			 * timeout that expired first (-ETIME; its removal then
			 * fails with -ENOENT) means the run outlasted the
			 * settle time: counted and reported, not an error.
			 */
			if ((!remove && res == -ETIME) || (remove && res == -ENOENT))
				uring_expired++;
			else if ((remove && res) || (!remove && res != -ECANCELED))
				fail("io_uring cqe %llx: %d",
				     (unsigned long long)cqes[k]->user_data, res);
		}
		io_uring_cq_advance(ring, c);
		got += c;
	}
	return got;
}

static int run_uring(struct work *w, bool mem, struct result *r)
{
	static struct __kernel_timespec ts[URING_SQ];
	unsigned long n = w->n, i, k, sample;
	struct io_uring_params p;
	struct io_uring ring;
	__u64 t0;
	int ret;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4 * URING_SQ;
	if (mem)
		mem_begin();
	ret = io_uring_queue_init_params(URING_SQ, &ring, &p);
	if (ret) {
		fail("io_uring_queue_init: %s", strerror(-ret));
		return -1;
	}
	t0 = now_ns();
	for (i = 0; i < n; i += URING_SQ) {
		unsigned long c = n - i < URING_SQ ? n - i : URING_SQ;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			ts[k].tv_sec = w->exp[i + k] / 1000000000ULL;
			ts[k].tv_nsec = w->exp[i + k] % 1000000000ULL;
			io_uring_prep_timeout(sqe, &ts[k], 0, 0);
			sqe->user_data = i + k + 1;
		}
		ret = io_uring_submit(&ring);
		if (ret != (int)c) {
			fail("io_uring_submit (timeouts): %d", ret);
			goto out;
		}
		uring_reap(&ring);
	}
	r->arm = (double)(now_ns() - t0) / n;
	if (mem)
		mem_end("io_uring", n);

	/* each removal walks the timeout list: time a random sample */
	sample = n < uring_sample ? n : uring_sample;
	t0 = now_ns();
	for (i = 0; i < sample; i += URING_SQ / 2) {
		unsigned long c = sample - i < URING_SQ / 2 ? sample - i : URING_SQ / 2;
		unsigned long want = 2 * c, got = 0;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_timeout_remove(sqe, w->perm[i + k] + 1, 0);
			sqe->user_data = URING_REMOVE | (i + k);
		}
		ret = io_uring_submit(&ring);
		if (ret != (int)c) {
			fail("io_uring_submit (removals): %d", ret);
			goto out;
		}
		while (got < want) {
			struct io_uring_cqe *cqe;

			ret = io_uring_wait_cqe(&ring, &cqe);
			if (ret) {
				fail("io_uring_wait_cqe: %s", strerror(-ret));
				goto out;
			}
			got += uring_reap(&ring);
		}
	}
	r->cancel = (double)(now_ns() - t0) / sample;
	r->create = -1;
	if (uring_expired) {
		printf(PFX "note: io_uring N=%lu: %lu timeouts expired %s\n",
		       n, uring_expired / 2, "before their removal (raise -s)");
		uring_expired = 0;
	}
	ret = 0;
out:
	t0 = now_ns();
	io_uring_queue_exit(&ring);
	r->close = (double)(now_ns() - t0) / n;
	return ret;
}

/* ---- driver ---------------------------------------------------------------------- */

static void raise_limits(unsigned long nmax)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned long want = nmax + 4096;
	char buf[32];
	FILE *f;

	f = fopen("/proc/sys/fs/nr_open", "w");
	if (f) {
		fprintf(f, "%lu\n", want < 1048576 ? 1048576 : want);
		fclose(f);
	}
	f = fopen("/proc/sys/fs/file-max", "w");
	if (f) {
		fprintf(f, "%lu\n", 4 * want);
		fclose(f);
	}
	setrlimit(RLIMIT_SIGPENDING, &rl);
	setrlimit(RLIMIT_MEMLOCK, &rl);
	rl.rlim_cur = want;
	rl.rlim_max = want;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		fail("setrlimit(RLIMIT_NOFILE, %lu): %s", want, strerror(errno));
	(void)buf;
}

static int run_one(int a, struct work *w, bool mem, struct result *res)
{
	switch (a) {
	case 0:
		return run_twheel(w, 0, mem, res);
	case 1:
		return run_twheel(w, 64, false, res);
	case 2:
		return run_twheel(w, 4096, false, res);
	case 3:
		return run_timerfd(w, mem, res);
	case 4:
		return run_posix(w, mem, res);
	default:
		return run_uring(w, mem, res);
	}
}

static void print_usage(void)
{
	fprintf(stderr, "usage: twheel_ubench [-n N,...] [-i impl,...] [-r reps] [-s settle_s]\n"
		"                     [-u uring_sample] [-p posix_max_n]\n");
	exit(2);
}

#define SYSCALL_LOOPS 100000

/* Per-call cost of the bare system call paths, median over @reps. */
static void run_prims(void)
{
	double gp[32], nt[32];
	unsigned int r, i;
	__u64 t0;
	int fd = open("/dev/twheel", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		fail("open /dev/twheel: %s", strerror(errno));
		return;
	}
	for (r = 0; r < reps; r++) {
		t0 = now_ns();
		for (i = 0; i < SYSCALL_LOOPS; i++)
			syscall(SYS_getppid);
		gp[r] = (double)(now_ns() - t0) / SYSCALL_LOOPS;
		t0 = now_ns();
		for (i = 0; i < SYSCALL_LOOPS; i++)
			if (ioctl(fd, _IO(TWHEEL_IOCTL_MAGIC, 0x7f)) != -1 || errno != ENOTTY)
				break;
		if (i < SYSCALL_LOOPS) {
			fail("unknown ioctl did not fail with ENOTTY");
			break;
		}
		nt[r] = (double)(now_ns() - t0) / SYSCALL_LOOPS;
	}
	close(fd);
	if (r == reps) {
		emit("prims", "user", 0, "syscall_getppid", median(gp, reps));
		emit("prims", "user", 0, "ioctl_enotty", median(nt, reps));
	}
}

int main(int argc, char **argv)
{
	static const char *const all[] = {
		"twheel", "twheel_b64", "twheel_b4096", "timerfd", "posix", "io_uring"
	};
	bool warmed[6] = { false };
	unsigned long nmax = 0;
	int opt, k, a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "n:i:r:s:u:p:")) != -1) {
		char *p, *end;

		switch (opt) {
		case 'n':
			ns_count = 0;
			for (p = optarg; *p && ns_count < 16; p = end + (*end == ',')) {
				ns_list[ns_count++] = strtoul(p, &end, 0);
				if (end == p)
					print_usage();
			}
			break;
		case 'i':
			impls = optarg;
			break;
		case 'r':
			reps = strtoul(optarg, NULL, 0);
			break;
		case 's':
			settle_s = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			uring_sample = strtoul(optarg, NULL, 0);
			break;
		case 'p':
			posix_max = strtoul(optarg, NULL, 0);
			break;
		default:
			print_usage();
		}
	}
	if (!reps || reps > 32 || !uring_sample)
		print_usage();
	for (k = 0; k < ns_count; k++)
		if (ns_list[k] > nmax)
			nmax = ns_list[k];
	raise_limits(nmax);
	printf(PFX "start: impls=%s reps=%u settle=%us\n", impls, reps, settle_s);
	run_prims();

	for (k = 0; k < ns_count; k++) {
		unsigned long n = ns_list[k];
		unsigned int rr = n >= 1000000 ? 1 : n >= 100000 ? (reps < 3 ? reps : 3) : reps;

		if (!n)
			continue;
		for (a = 0; a < (int)ARRAY_SIZE(all); a++) {
			double arm[32], rea[32], can[32], cre[32], clo[32];
			unsigned int r, ok = 0;

			if (!listed(impls, all[a]))
				continue;
			if (a == 4 && n > posix_max) {
				printf(PFX "note: posix skipped at N=%lu (> -p %lu)\n",
				       n, posix_max);
				continue;
			}
			/* first use of each implementation: one discarded run */
			if (!warmed[a]) {
				struct result res;
				struct work w;

				warmed[a] = true;
				work_make(&w, n < 1000 ? n : 1000);
				run_one(a, &w, false, &res);
				work_free(&w);
			}
			for (r = 0; r < rr; r++) {
				struct result res = { -1, -1, -1, -1, -1 };
				struct work w;
				int ret;

				work_make(&w, n);
				ret = run_one(a, &w, r == 0, &res);
				work_free(&w);
				if (ret)
					break;
				arm[ok] = res.arm;
				rea[ok] = res.rearm;
				can[ok] = res.cancel;
				cre[ok] = res.create;
				clo[ok] = res.close;
				ok++;
			}
			if (!ok)
				continue;
			emit("user", all[a], n, "arm", median(arm, ok));
			emit("user", all[a], n, "cancel", median(can, ok));
			emit("user", all[a], n, "arm_cancel",
			     median(arm, ok) + median(can, ok));
			if (rea[0] >= 0)
				emit("user", all[a], n, "rearm", median(rea, ok));
			if (cre[0] >= 0)
				emit("user", all[a], n, "create", median(cre, ok));
			if (clo[0] >= 0)
				emit("user", all[a], n, "close", median(clo, ok));
		}
	}
	printf(PFX "done, %d error(s)\n", failures);
	return failures ? 1 : 0;
}
