// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_ubench - userspace benchmark of /dev/twheel (ABI version 2)
 * against one timerfd per timer, POSIX timers (SIGEV_NONE), io_uring
 * timeouts and an in-process heap with one timerfd: arm, modify, cancel
 * and churn costs, kernel memory per armed timer, and the CPU cost of
 * delivering expirations, by read(), through io_uring and in process.
 *
 * Suite "user", for each implementation and N, with N timers outstanding
 * at the end of the arm phase:
 *   arm     arm N timers (expiries uniform in settle + [1, 60] s), ns per
 *           timer, wall clock over the whole phase
 *   rearm   modify every armed timer, in random order, 1 s later (twheel:
 *           MODIFY; timerfd, POSIX: settime on the armed timer; io_uring:
 *           IORING_TIMEOUT_UPDATE of a random sample, see cancel)
 *   churn   start-now-cancel-later at occupancy N: start a new timer and
 *           cancel a random outstanding (older) one, min(N, 10000) pairs,
 *           ns per pair (twheel: ARM + CANCEL, batched as pairs of
 *           records; timerfd, POSIX: the pooled object's disarm + arm;
 *           io_uring: TIMEOUT + TIMEOUT_REMOVE of a random sample)
 *   cancel  cancel them in random order, ns per timer (io_uring: a random
 *           sample, because each removal walks the ring's timeout list:
 *           at most -u timers, fewer at large N, min(N, -u,
 *           max(64, -u * 10^5 / N)); the ring's teardown removes the rest)
 *   arm_cancel  arm + cancel of the same repetition
 * uheap: the timers in the process (libev's or libuv's way): a 4-ary heap
 * of absolute expiries from a "now" read once per phase, and one timerfd
 * armed for the earliest, re-armed only when that changes; no kernel
 * memory per timer, so no "mem" rows.
 *   create / close  creating and destroying the objects where that is a
 *           separate call (timerfd_create/close, timer_create/delete)
 * Suite "mem": bytes_per_timer, kernel memory per armed timer: the growth
 * of Slab + VmallocUsed in /proc/meminfo from before the objects were
 * created to after all N are armed, divided by N (bytes_per_timer_memfree:
 * the same from MemFree), in every repetition.
 * Suite "deliver", per rate R of expirations per second (-e): one-shot
 * timers spread evenly over a window (-w; R * window timers), and
 * periodic timers (R * period timers of period -P, first expiries spread
 * over one period) for a window, delivered by
 *   twheel          one file, timers armed with TWHEEL_IOC_BATCH, one
 *                   epoll watch, read() of up to 256 events
 *   timerfd         one per timer, all in one epoll set, read() of each
 *                   ready fd's count
 *   twheel_mshot    twheel's timers, their events read by one
 *                   IORING_OP_READ_MULTISHOT into provided buffers (6.7+)
 *   twheel_uring_expiry  each timer an ARM uring_cmd with
 *                   TWHEEL_ARM_URING_EXPIRY, a CQE per expiry (6.7+)
 *   io_uring        each timer an IORING_OP_TIMEOUT (absolute)
 *   uheap           an in-process 4-ary heap, one timerfd for the
 *                   earliest (epoll), re-armed when that changes
 * The ones without periodic timers in the kernel (twheel_uring_expiry,
 * io_uring, uheap) arm a timer's next expiry when its completion comes,
 * as a program would; an implementation the kernel lacks is skipped with
 * a note.
 * Per expiry delivered:
 *   oneshot_cpu, periodic_cpu  CPU time of this process
 *           (CLOCK_PROCESS_CPUTIME_ID: user + system time of epoll_wait,
 *           read and the loop) over the window
 *   oneshot_busy, periodic_busy  non-idle time of all CPUs over the
 *           same window: window x CPUs - idle and iowait time of
 *           /proc/stat, which NO_HZ kernels account exactly at idle entry
 *           and exit.  It adds to the process's time the interrupt and
 *           softirq time that expires the timers wherever it runs (and
 *           whatever else ran); each reading is exact to 10 ms per CPU
 *           (USER_HZ), so short windows at low rates are coarse
 * Timer counts are capped at the largest -n (the window or the period
 * shrinks to keep the rate).
 * Suite "prims": getppid() and an unknown ioctl on /dev/twheel (ENOTTY:
 * the whole ioctl path, fd lookup, LSM hook and dispatch, without work);
 * page_chase_random / page_chase_inorder, ns per dependent load, one per
 * 4 KiB page, over N pages in a random or in address order (N = 256,
 * 2,000, 20,000: the pages that the table entries of about 10^4, 10^5 and
 * 10^6 timers span), the cost of a first touch of a random page.
 *
 * Every case runs -r repetitions (default 5; at every N, 10^6 included),
 * each repetition running all implementations one after another in an
 * order rotated from one repetition to the next, after one discarded
 * warm-up run of each.  Output lines, the median and the spread:
 *   twheel_ubench: csv,<suite>,<impl>,<n>,<op>,<median>,<min>,<max>,<reps>
 * Must run as root (raises RLIMIT_NOFILE, fs.nr_open, RLIMIT_SIGPENDING).
 *
 * -M: for bench/run.sh --insn, end a window of the insn_prof QEMU plugin
 * (bench/insn) at each phase boundary of twheel and timerfd in "user" and
 * around each "deliver" window, and print "insn-mark: IMPL/PHASE/COUNT"
 * for each ("insn-mark: -" for what lies between), COUNT being the
 * operations or expiries of the phase.
 *
 * Usage: twheel_ubench [-n N,N,...] [-i impl,...] [-r reps] [-s settle_s]
 *                      [-u uring_sample] [-p posix_max_n] [-e rate,...]
 *                      [-w window_ms] [-P period_ms] [-S suite,...] [-M]
 * impls: twheel twheel_b64 twheel_b4096 timerfd posix io_uring twheel_uring
 *        twheel_uring_b4096 uheap (user); twheel timerfd twheel_mshot
 *        twheel_uring_expiry io_uring uheap (deliver)
 * (twheel_uring: twheel's ARM, MODIFY and CANCEL as IORING_OP_URING_CMD,
 * one SQE per operation, up to 4096 SQEs per io_uring_enter(); churn:
 * an ARM and a CANCEL; twheel_uring_b4096: twheel_b4096's batches each
 * submitted as one IORING_OP_URING_CMD)
 * (-e 0 skips deliver)
 * suites: prims user deliver (all by default; "user" includes "mem")
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>
#include <linux/types.h>
#include <linux/twheel.h>

#include "../insn/insn_mark.h"
#include "../kernel/bench_order.h"

#define PFX "twheel_ubench: "
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static unsigned long ns_list[16] = { 1000, 10000, 100000, 1000000 };
static int ns_count = 4;
static const char *impls;	/* -i; NULL: all */
static const char *suites = "prims,user,deliver";
static unsigned int reps = 5;
static unsigned int settle_s = 120;
static unsigned int uring_sample = 1024;
/*
 * 6.1 keeps every POSIX timer of the system in one 512-bucket hash, so
 * timer_create/settime/delete walk chains of N/512 at large N: 10^6 takes
 * about 20 minutes in the VM.  Measured up to this N unless -p says more.
 */
static unsigned long posix_max = 100000;
static unsigned long rates[8] = { 1000, 100000 };
static int rates_count = 2;
static unsigned int window_ms = 1000;
static unsigned int period_ms = 100;
static unsigned long nmax;
static int failures;

#define MAX_REPS	32
#define CHURN_MAX	10000

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One CSV row: the median of @n repetitions, then their min, max and
 * count.  The first five columns are the old format's.
 */
static void emit(const char *suite, const char *impl, unsigned long n,
		 const char *op, const double *v, unsigned int k)
{
	double s[MAX_REPS], med;

	if (!k)
		return;
	memcpy(s, v, k * sizeof(*v));
	qsort(s, k, sizeof(*s), cmp_double);
	med = k & 1 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	printf(PFX "csv,%s,%s,%lu,%s,%.3f,%.3f,%.3f,%u\n", suite, impl, n, op,
	       med, s[0], s[k - 1], k);
	fflush(stdout);
}

static bool insn_marks;		/* -M */
static const char *insn_impl = "-";	/* the implementation being run */

/*
 * -M: end the plugin's window here and name it: @what of @impl, @count
 * operations; "-" for a window that is not measured.
 */
static void insn_mark(const char *what, unsigned long count)
{
	static insn_mark_fn mark;
	char label[128];

	if (!insn_marks)
		return;
	if (!mark) {
		mark = insn_mark_map();
		if (!mark) {
			perror(PFX "insn mark: mmap");
			exit(1);
		}
	}
	if (strcmp(what, "-"))
		snprintf(label, sizeof(label), "%s/%s/%lu", insn_impl, what,
			 count);
	else
		snprintf(label, sizeof(label), "-");
	insn_mark_end(mark, label);
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

static bool impl_wanted(const char *impl)
{
	return !impls || listed(impls, impl);
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

static long long mem_kernel(struct mem m)
{
	return m.slab + m.vmalloc;
}

/*
 * The implementation run before may still be returning memory: io_uring
 * tears a ring down in a work item after close(), a timerfd's file is
 * freed after an RCU grace period.  Userspace cannot wait for either, so
 * wait until Slab + VmallocUsed stop moving: less than 16 kB away from
 * one reading over the next 100 ms (longer than io_uring's exit work
 * waits between its passes), at most 3 s.  Otherwise those frees are
 * counted against the next implementation, which then reads a negative
 * growth.  Returns the last reading, the "before" of the next
 * measurement.
 */
static struct mem mem_settle(void)
{
	struct mem m = mem_read(), m1;
	int i, quiet = 0;

	for (i = 0; i < 150; i++) {
		usleep(20000);
		m1 = mem_read();
		if (llabs(mem_kernel(m1) - mem_kernel(m)) >= 16 * 1024) {
			m = m1;
			quiet = 0;
		} else if (++quiet == 5) {
			return m1;
		}
	}
	printf(PFX "note: kernel memory still moving after 3 s\n");
	return m1;
}

static void mem_begin(void)
{
	mem0 = mem_settle();
	nslab0 = slab_read(slab0);
}

/*
 * After N timers are armed: per-timer kernel memory into @bytes and
 * @memfree; with @slabs, also print the slab caches that grew most.
 */
static void mem_end(const char *impl, unsigned long n, bool slabs,
		    double *bytes, double *memfree)
{
	struct mem m1 = mem_read();
	static struct slab s1[SLABS];
	int n1, i, j, k;

	*bytes = (double)(mem_kernel(m1) - mem_kernel(mem0)) / n;
	*memfree = (double)(mem0.memfree - m1.memfree) / n;
	if (!slabs || n < 100000)
		return;
	n1 = slab_read(s1);
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

/* One repetition of one implementation; NAN: not measured. */
struct result {
	double arm, rearm, churn, cancel, create, close, mem, memfree;
};

#define RESULT_NONE { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN }

/* What a run measures besides the timings. */
struct runopts {
	bool mem;	/* memory per timer */
	bool slabs;	/* and the slab caches that grew (first repetition) */
};

/* Pairs of the churn phase. */
static unsigned long churn_count(unsigned long n)
{
	return n < CHURN_MAX ? n : CHURN_MAX;
}

/* The io_uring sample: each removal walks a list of about N timeouts. */
static unsigned long uring_sample_of(unsigned long n)
{
	unsigned long s = uring_sample * 100000ULL / n;

	if (s < 64)
		s = 64;
	if (s > uring_sample)
		s = uring_sample;
	return s < n ? s : n;
}

static void set_its(struct itimerspec *its, __u64 exp, __u64 period)
{
	its->it_value.tv_sec = exp / 1000000000ULL;
	its->it_value.tv_nsec = exp % 1000000000ULL;
	its->it_interval.tv_sec = period / 1000000000ULL;
	its->it_interval.tv_nsec = period % 1000000000ULL;
}

/* Re-arm: one second later than the first expiry, so every timer moves. */
#define REARM_NS 1000000000ULL

/* ---- twheel ---------------------------------------------------------------- */

static int twheel_fd(unsigned long n, int flags)
{
	struct twheel_api api = { .size = sizeof(api) };
	int fd = open("/dev/twheel", O_RDWR | O_CLOEXEC | flags);

	if (fd < 0) {
		fail("open /dev/twheel: %s", strerror(errno));
		return -1;
	}
	if (ioctl(fd, TWHEEL_IOC_API, &api)) {
		fail("TWHEEL_IOC_API: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (api.out_abi_version != TWHEEL_ABI_VERSION) {
		fail("twheel module of ABI version %u, this benchmark needs %u",
		     api.out_abi_version, TWHEEL_ABI_VERSION);
		close(fd);
		return -1;
	}
	if (api.out_max_timers_per_fd < n || api.out_max_timers_per_user < n) {
		fail("twheel limits (%llu per fd, %llu per user) below N=%lu",
		     (unsigned long long)api.out_max_timers_per_fd,
		     (unsigned long long)api.out_max_timers_per_user, n);
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * One TWHEEL_IOC_BATCH of @c records.  out_result is written only for a
 * record that fails, so out_failed is what says whether all went well.
 */
static struct io_uring *batch_ring;	/* twheel_uring_b4096: batches via the ring */

/* The batch as an IORING_OP_URING_CMD: its res, out_failed in *@failed. */
static int twheel_batch_ring(int fd, struct twheel_batch *bt, __u32 *failed)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(batch_ring);
	struct io_uring_cqe *cqe;
	int ret;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, 2 * sizeof(*sqe));	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = TWHEEL_IOC_BATCH;
	memcpy(sqe->cmd, bt, sizeof(*bt));
	ret = io_uring_submit_and_wait(batch_ring, 1);
	if (ret < 0)
		return ret;
	ret = io_uring_wait_cqe(batch_ring, &cqe);
	if (ret)
		return ret;
	ret = cqe->res;
	*failed = cqe->big_cqe[0];
	io_uring_cqe_seen(batch_ring, cqe);
	return ret;
}

static int twheel_batch(int fd, struct twheel_batch_op *ops, unsigned int c,
			const char *what)
{
	struct twheel_batch bt = {
		.size = sizeof(bt),
		.ops = (uintptr_t)ops,
		.count = c,
		.op_size = sizeof(*ops),
	};
	unsigned int j;
	int ret;

	if (batch_ring) {
		ret = twheel_batch_ring(fd, &bt, &bt.out_failed);
		if (ret < 0) {
			errno = -ret;
			ret = -1;
		}
	} else {
		ret = ioctl(fd, TWHEEL_IOC_BATCH, &bt);
	}

	if (ret != (int)c) {
		fail("TWHEEL_IOC_BATCH %s: %d, %s", what, ret, strerror(errno));
		return -1;
	}
	if (bt.out_failed) {
		for (j = 0; j < c && !ops[j].out_result; j++)
			;
		fail("TWHEEL_IOC_BATCH %s: %u records failed, #%u: %d", what,
		     bt.out_failed, j, j < c ? ops[j].out_result : 0);
		return -1;
	}
	return 0;
}

static void twheel_op(struct twheel_batch_op *op, __u32 code, __u64 handle,
		      __u64 expires)
{
	memset(op, 0, sizeof(*op));	/* out_result 0: written on failure only */
	op->op = code;
	op->handle = handle;
	op->spec.expires = expires;
}

static int run_twheel(struct work *w, unsigned int b, struct runopts o,
		      struct result *r)
{
	unsigned long n = w->n, i, nc = churn_count(n);
	struct twheel_batch_op *ops = NULL;
	__u64 *h = calloc(n, sizeof(*h));
	__u64 t0;
	int fd, ret = -1;

	if (b)
		ops = calloc(b, sizeof(*ops));
	if (!h || (b && !ops)) {
		fail("out of memory");
		goto out;
	}
	if (o.mem)
		mem_begin();
	fd = twheel_fd(n, 0);
	if (fd < 0)
		goto out;

	insn_mark("-", 0);
	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			struct twheel_arm a = {
				.size = sizeof(a), .spec.expires = w->exp[i]
			};

			if (ioctl(fd, TWHEEL_IOC_ARM, &a)) {
				fail("TWHEEL_IOC_ARM #%lu: %s", i, strerror(errno));
				goto out_close;
			}
			h[i] = a.out_handle;
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;

			for (j = 0; j < c; j++)
				twheel_op(&ops[j], TWHEEL_OP_ARM, 0, w->exp[i + j]);
			if (twheel_batch(fd, ops, c, "arm"))
				goto out_close;
			for (j = 0; j < c; j++)
				h[i + j] = ops[j].handle;
		}
	}
	r->arm = (double)(now_ns() - t0) / n;
	insn_mark("arm", n);
	if (o.mem)
		mem_end("twheel", n, o.slabs, &r->mem, &r->memfree);

	insn_mark("-", 0);
	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			__u32 k = w->perm[i];
			struct twheel_modify m = {
				.size = sizeof(m),
				.handle = h[k],
				.spec.expires = w->exp[k] + REARM_NS,
			};

			if (ioctl(fd, TWHEEL_IOC_MODIFY, &m)) {
				fail("TWHEEL_IOC_MODIFY #%lu: %s", i, strerror(errno));
				goto out_close;
			}
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;

			for (j = 0; j < c; j++) {
				__u32 k = w->perm[i + j];

				twheel_op(&ops[j], TWHEEL_OP_MODIFY, h[k],
					  w->exp[k] + REARM_NS);
			}
			if (twheel_batch(fd, ops, c, "modify"))
				goto out_close;
		}
	}
	r->rearm = (double)(now_ns() - t0) / n;
	insn_mark("rearm", n);

	/*
	 * Churn: a new timer now, a random older one cancelled, occupancy
	 * stays N.  The victims are the last entries of the cancel order,
	 * each at most once, and the new timer takes the victim's place.
	 */
	insn_mark("-", 0);
	t0 = now_ns();
	if (!b) {
		for (i = 0; i < nc; i++) {
			__u32 k = w->perm[n - 1 - i];
			struct twheel_arm a = {
				.size = sizeof(a),
				.spec.expires = w->exp[k] + 2 * REARM_NS,
			};
			struct twheel_cancel c = { .size = sizeof(c), .handle = h[k] };

			if (ioctl(fd, TWHEEL_IOC_ARM, &a) ||
			    ioctl(fd, TWHEEL_IOC_CANCEL, &c)) {
				fail("churn #%lu: %s", i, strerror(errno));
				goto out_close;
			}
			h[k] = a.out_handle;
		}
	} else {
		for (i = 0; i < nc; i += b / 2) {
			unsigned int c = nc - i < b / 2 ? nc - i : b / 2, j;

			for (j = 0; j < c; j++) {
				__u32 k = w->perm[n - 1 - (i + j)];

				twheel_op(&ops[2 * j], TWHEEL_OP_ARM, 0,
					  w->exp[k] + 2 * REARM_NS);
				twheel_op(&ops[2 * j + 1], TWHEEL_OP_CANCEL, h[k], 0);
			}
			if (twheel_batch(fd, ops, 2 * c, "churn"))
				goto out_close;
			for (j = 0; j < c; j++)
				h[w->perm[n - 1 - (i + j)]] = ops[2 * j].handle;
		}
	}
	r->churn = (double)(now_ns() - t0) / nc;
	insn_mark("churn", nc);

	insn_mark("-", 0);
	t0 = now_ns();
	if (!b) {
		for (i = 0; i < n; i++) {
			struct twheel_cancel c = {
				.size = sizeof(c), .handle = h[w->perm[i]]
			};

			if (ioctl(fd, TWHEEL_IOC_CANCEL, &c) ||
			    c.out_status != TWHEEL_CANCEL_PENDING) {
				fail("TWHEEL_IOC_CANCEL #%lu: %s (status %u)", i,
				     strerror(errno), c.out_status);
				goto out_close;
			}
		}
	} else {
		for (i = 0; i < n; i += b) {
			unsigned int c = n - i < b ? n - i : b, j;

			for (j = 0; j < c; j++)
				twheel_op(&ops[j], TWHEEL_OP_CANCEL, h[w->perm[i + j]], 0);
			if (twheel_batch(fd, ops, c, "cancel"))
				goto out_close;
		}
	}
	r->cancel = (double)(now_ns() - t0) / n;
	insn_mark("cancel", n);
	ret = 0;
out_close:
	close(fd);
out:
	free(ops);
	free(h);
	return ret;
}

/* ---- twheel through io_uring (IORING_OP_URING_CMD) --------------------------- */

#define UCMD_DEPTH	4096
#define UCMD_ARM_TAG	0x8000000000000000ULL	/* user_data: an ARM, its timer's index */

struct ucmd_ring {
	struct io_uring ring;
	int fd;
	unsigned int queued;
	__u64 *h;		/* where each ARM's handle goes */
};

/* Queue one command, submitting and reaping first when the ring is full. */
static int ucmd_flush(struct ucmd_ring *u, const char *what);

static int ucmd_queue(struct ucmd_ring *u, __u32 cmd_op, const void *arg,
		      size_t len, __u64 user_data, const char *what)
{
	struct io_uring_sqe *sqe;

	if (u->queued == UCMD_DEPTH && ucmd_flush(u, what))
		return -1;
	sqe = io_uring_get_sqe(&u->ring);
	if (!sqe) {
		fail("no SQE for %s", what);
		return -1;
	}
	memset(sqe, 0, 2 * sizeof(*sqe));	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = u->fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = user_data;
	memcpy(sqe->cmd, arg, len);
	u->queued++;
	return 0;
}

/* Submit what is queued and reap every completion. */
static int ucmd_flush(struct ucmd_ring *u, const char *what)
{
	struct io_uring_cqe *cqe;
	unsigned int i;

	if (!u->queued)
		return 0;
	if (io_uring_submit_and_wait(&u->ring, u->queued) < 0) {
		fail("io_uring_submit %s: %s", what, strerror(errno));
		return -1;
	}
	for (i = 0; i < u->queued; i++) {
		if (io_uring_wait_cqe(&u->ring, &cqe)) {
			fail("io_uring_wait_cqe %s", what);
			return -1;
		}
		if (cqe->res < 0) {
			fail("uring_cmd %s: %s", what, strerror(-cqe->res));
			return -1;
		}
		if (cqe->user_data & UCMD_ARM_TAG)
			u->h[cqe->user_data & ~UCMD_ARM_TAG] = cqe->big_cqe[0];
		io_uring_cqe_seen(&u->ring, cqe);
	}
	u->queued = 0;
	return 0;
}

static int ucmd_arm(struct ucmd_ring *u, unsigned long k, __u64 expires)
{
	struct twheel_arm a = { .size = sizeof(a), .spec.expires = expires };

	return ucmd_queue(u, TWHEEL_IOC_ARM, &a, sizeof(a), UCMD_ARM_TAG | k,
			  "arm");
}

static int ucmd_cancel(struct ucmd_ring *u, __u64 handle)
{
	struct twheel_cancel c = { .size = sizeof(c), .handle = handle };

	return ucmd_queue(u, TWHEEL_IOC_CANCEL, &c, sizeof(c), 0, "cancel");
}

static int run_twheel_uring(struct work *w, struct runopts o,
			    struct result *r)
{
	unsigned long n = w->n, i, nc = churn_count(n);
	struct ucmd_ring u = { .h = calloc(n, sizeof(__u64)) };
	int ret = -1, err;
	__u64 t0;

	if (!u.h) {
		fail("out of memory");
		return -1;
	}
	if (o.mem)
		mem_begin();
	u.fd = twheel_fd(n, 0);
	if (u.fd < 0)
		goto out;
	err = io_uring_queue_init(UCMD_DEPTH, &u.ring,
				  IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (err) {
		fail("io_uring_queue_init: %s", strerror(-err));
		goto out_close;
	}

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (ucmd_arm(&u, i, w->exp[i]))
			goto out_ring;
	if (ucmd_flush(&u, "arm"))
		goto out_ring;
	r->arm = (double)(now_ns() - t0) / n;
	insn_mark("arm", n);
	if (o.mem)
		mem_end("twheel_uring", n, o.slabs, &r->mem, &r->memfree);

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		__u32 k = w->perm[i];
		struct twheel_modify m = {
			.size = sizeof(m),
			.handle = u.h[k],
			.spec.expires = w->exp[k] + REARM_NS,
		};

		if (ucmd_queue(&u, TWHEEL_IOC_MODIFY, &m, sizeof(m), 0, "modify"))
			goto out_ring;
	}
	if (ucmd_flush(&u, "modify"))
		goto out_ring;
	r->rearm = (double)(now_ns() - t0) / n;
	insn_mark("rearm", n);

	/* churn as run_twheel()'s: the new timer takes the victim's place */
	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < nc; i++) {
		__u32 k = w->perm[n - 1 - i];

		if (ucmd_cancel(&u, u.h[k]) ||
		    ucmd_arm(&u, k, w->exp[k] + 2 * REARM_NS))
			goto out_ring;
	}
	if (ucmd_flush(&u, "churn"))
		goto out_ring;
	r->churn = (double)(now_ns() - t0) / nc;
	insn_mark("churn", nc);

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (ucmd_cancel(&u, u.h[w->perm[i]]))
			goto out_ring;
	if (ucmd_flush(&u, "cancel"))
		goto out_ring;
	r->cancel = (double)(now_ns() - t0) / n;
	insn_mark("cancel", n);
	ret = 0;
out_ring:
	io_uring_queue_exit(&u.ring);
out_close:
	close(u.fd);
out:
	free(u.h);
	return ret;
}

/* ---- timerfd ---------------------------------------------------------------- */

static int run_timerfd(struct work *w, struct runopts o, struct result *r)
{
	unsigned long n = w->n, i, made = 0, nc = churn_count(n);
	int *fds = malloc(n * sizeof(*fds));
	struct itimerspec zero = { 0 };
	__u64 t0;
	int ret = -1;

	if (!fds) {
		fail("out of memory");
		return -1;
	}
	memset(fds, 0xff, n * sizeof(*fds));
	if (o.mem)
		mem_begin();
	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++, made++) {
		fds[i] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[i] < 0) {
			fail("timerfd_create #%lu: %s", i, strerror(errno));
			goto out;
		}
	}
	r->create = (double)(now_ns() - t0) / n;
	insn_mark("create", n);

	insn_mark("-", 0);
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
	insn_mark("arm", n);
	if (o.mem)
		mem_end("timerfd", n, o.slabs, &r->mem, &r->memfree);

	insn_mark("-", 0);
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
	insn_mark("rearm", n);

	/* Churn with a pool of timerfds: the victim's fd is the new timer's. */
	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < nc; i++) {
		__u32 k = w->perm[n - 1 - i];
		struct itimerspec its = { 0 };

		set_its(&its, w->exp[k] + 2 * REARM_NS, 0);
		if (timerfd_settime(fds[k], 0, &zero, NULL) ||
		    timerfd_settime(fds[k], 0, &its, NULL)) {
			fail("timerfd churn: %s", strerror(errno));
			goto out;
		}
	}
	r->churn = (double)(now_ns() - t0) / nc;
	insn_mark("churn", nc);

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (timerfd_settime(fds[w->perm[i]], 0, &zero, NULL)) {
			fail("timerfd_settime (disarm): %s", strerror(errno));
			goto out;
		}
	r->cancel = (double)(now_ns() - t0) / n;
	insn_mark("cancel", n);
	ret = 0;
out:
	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < made; i++)
		close(fds[i]);
	r->close = (double)(now_ns() - t0) / n;
	insn_mark("close", n);
	free(fds);
	return ret;
}

/* ---- POSIX timers -------------------------------------------------------------- */

static int run_posix(struct work *w, struct runopts o, struct result *r)
{
	unsigned long n = w->n, i, made = 0, nc = churn_count(n);
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
	if (o.mem)
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
	if (o.mem)
		mem_end("posix", n, o.slabs, &r->mem, &r->memfree);

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

	/* Churn with a pool of timers: the victim's is the new timer's. */
	t0 = now_ns();
	for (i = 0; i < nc; i++) {
		__u32 k = w->perm[n - 1 - i];
		struct itimerspec its = { 0 };

		set_its(&its, w->exp[k] + 2 * REARM_NS, 0);
		if (timer_settime(ids[k], 0, &zero, NULL) ||
		    timer_settime(ids[k], 0, &its, NULL)) {
			fail("posix churn: %s", strerror(errno));
			goto out;
		}
	}
	r->churn = (double)(now_ns() - t0) / nc;

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
/* List entries the updates or removals of one io_uring_enter() may walk. */
#define URING_WALK	4194304UL	/* 2^22 */

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

/* Submit what was prepared and reap until @want CQEs have come. */
static int uring_submit_wait(struct io_uring *ring, unsigned long c,
			     unsigned long want, const char *what)
{
	unsigned long got = 0;
	int ret = io_uring_submit(ring);

	if (ret != (int)c) {
		fail("io_uring_submit (%s): %d", what, ret);
		return -1;
	}
	while (got < want) {
		struct io_uring_cqe *cqe;

		ret = io_uring_wait_cqe(ring, &cqe);
		if (ret) {
			fail("io_uring_wait_cqe: %s", strerror(-ret));
			return -1;
		}
		got += uring_reap(ring);
	}
	return 0;
}

/*
 * Updates and removals per io_uring_enter(): each walks the ring's list of
 * about @n timeouts, and the kernel does not reschedule between the SQEs
 * of one submission.  102 removals at 10^6 timers in one call kept a CPU
 * of a 6.12 VM busy for 22 s, a soft lockup; 2^22 entries per call stay
 * far below that, and the syscall's own cost is still negligible beside
 * the walks it carries.
 */
static unsigned long uring_walk_batch(unsigned long n, unsigned long max)
{
	unsigned long c = URING_WALK / n;

	return c < 1 ? 1 : c > max ? max : c;
}

static void uring_ts(struct __kernel_timespec *ts, __u64 exp)
{
	ts->tv_sec = exp / 1000000000ULL;
	ts->tv_nsec = exp % 1000000000ULL;
}

static int run_uring(struct work *w, struct runopts o, struct result *r)
{
	static struct __kernel_timespec ts[URING_SQ];
	unsigned long n = w->n, i, k, sample = uring_sample_of(n), nc, batch;
	struct io_uring_params p;
	struct io_uring ring;
	__u64 *ud = malloc(n * sizeof(*ud));	/* user_data of each timer */
	__u64 t0;
	int ret;

	if (!ud) {
		fail("out of memory");
		return -1;
	}
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_CQSIZE;
	p.cq_entries = 4 * URING_SQ;
	if (o.mem)
		mem_begin();
	ret = io_uring_queue_init_params(URING_SQ, &ring, &p);
	if (ret) {
		fail("io_uring_queue_init: %s", strerror(-ret));
		free(ud);
		return -1;
	}
	ret = -1;
	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i += URING_SQ) {
		unsigned long c = n - i < URING_SQ ? n - i : URING_SQ;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			uring_ts(&ts[k], w->exp[i + k]);
			io_uring_prep_timeout(sqe, &ts[k], 0, 0);
			ud[i + k] = i + k + 1;
			sqe->user_data = ud[i + k];
		}
		if (uring_submit_wait(&ring, c, 0, "timeouts"))
			goto out;
		uring_reap(&ring);
	}
	r->arm = (double)(now_ns() - t0) / n;
	insn_mark("arm", n);
	if (o.mem)
		mem_end("io_uring", n, o.slabs, &r->mem, &r->memfree);

	/* Each update and removal walks the timeout list: time samples. */
	insn_mark("-", 0);
	t0 = now_ns();
	batch = uring_walk_batch(n, URING_SQ);
	for (i = 0; i < sample; i += batch) {
		unsigned long c = sample - i < batch ? sample - i : batch;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			__u32 t = w->perm[i + k];

			uring_ts(&ts[k], w->exp[t] + REARM_NS);
			io_uring_prep_timeout_update(sqe, &ts[k], ud[t], 0);
			sqe->user_data = URING_REMOVE | (i + k);
		}
		if (uring_submit_wait(&ring, c, c, "updates"))
			goto out;
	}
	r->rearm = (double)(now_ns() - t0) / sample;
	insn_mark("rearm", sample);

	/* Churn: a new timeout and the removal of a random older one. */
	nc = churn_count(n) < sample ? churn_count(n) : sample;
	insn_mark("-", 0);
	t0 = now_ns();
	batch = uring_walk_batch(n, URING_SQ / 2);
	for (i = 0; i < nc; i += batch) {
		unsigned long c = nc - i < batch ? nc - i : batch;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			__u32 t = w->perm[n - 1 - (i + k)];

			uring_ts(&ts[k], w->exp[t] + 2 * REARM_NS);
			io_uring_prep_timeout(sqe, &ts[k], 0, 0);
			sqe->user_data = n + 1 + i + k;
			sqe = io_uring_get_sqe(&ring);
			io_uring_prep_timeout_remove(sqe, ud[t], 0);
			sqe->user_data = URING_REMOVE | (i + k);
			ud[t] = n + 1 + i + k;
		}
		/* the removals' and the removed timeouts' CQEs */
		if (uring_submit_wait(&ring, 2 * c, 2 * c, "churn"))
			goto out;
	}
	r->churn = (double)(now_ns() - t0) / nc;
	insn_mark("churn", nc);

	insn_mark("-", 0);
	t0 = now_ns();
	batch = uring_walk_batch(n, URING_SQ / 2);
	for (i = 0; i < sample; i += batch) {
		unsigned long c = sample - i < batch ? sample - i : batch;

		for (k = 0; k < c; k++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_timeout_remove(sqe, ud[w->perm[i + k]], 0);
			sqe->user_data = URING_REMOVE | (i + k);
		}
		if (uring_submit_wait(&ring, c, 2 * c, "removals"))
			goto out;
	}
	r->cancel = (double)(now_ns() - t0) / sample;
	insn_mark("cancel", sample);
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
	free(ud);
	return ret;
}

/* ---- uheap: an in-process 4-ary heap and one timerfd -------------------------- */

/*
 * What a program with many timers most often does instead of asking the
 * kernel for each (libev's 4-ary heap, libuv's heap): keep them in
 * process, in a heap of absolute expiries, and arm one timerfd for the
 * earliest, re-armed (timerfd_settime) only when the earliest changes.
 * The timers' times are absolute from a "now" read once per phase, as an
 * event loop caches its time per iteration.
 */
#define UHEAP_NONE	UINT32_MAX

struct uheap {
	__u64 *key;		/* absolute expiry of each timer */
	__u32 *heap;		/* timer indices, a 4-ary min-heap by key */
	__u32 *pos;		/* each timer's place in @heap, or UHEAP_NONE */
	unsigned long size;
	__u64 armed;		/* the timerfd's expiry, 0 when disarmed */
	int tfd;
};

static void uheap_put(struct uheap *h, unsigned long i, __u32 t)
{
	h->heap[i] = t;
	h->pos[t] = i;
}

static void uheap_up(struct uheap *h, unsigned long i)
{
	__u32 t = h->heap[i];

	while (i) {
		unsigned long p = (i - 1) / 4;

		if (h->key[h->heap[p]] <= h->key[t])
			break;
		uheap_put(h, i, h->heap[p]);
		i = p;
	}
	uheap_put(h, i, t);
}

static void uheap_down(struct uheap *h, unsigned long i)
{
	__u32 t = h->heap[i];

	for (;;) {
		unsigned long c = 4 * i + 1, m = c, e = c + 4 < h->size ? c + 4 : h->size;

		if (c >= h->size)
			break;
		for (c++; c < e; c++)
			if (h->key[h->heap[c]] < h->key[h->heap[m]])
				m = c;
		if (h->key[h->heap[m]] >= h->key[t])
			break;
		uheap_put(h, i, h->heap[m]);
		i = m;
	}
	uheap_put(h, i, t);
}

static int uheap_init(struct uheap *h, unsigned long n)
{
	memset(h, 0, sizeof(*h));
	h->key = malloc(n * sizeof(*h->key));
	h->heap = malloc(n * sizeof(*h->heap));
	h->pos = malloc(n * sizeof(*h->pos));
	h->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!h->key || !h->heap || !h->pos || h->tfd < 0) {
		fail("uheap: %s", strerror(errno));
		return -1;
	}
	memset(h->pos, 0xff, n * sizeof(*h->pos));
	return 0;
}

static void uheap_free(struct uheap *h)
{
	if (h->tfd >= 0)
		close(h->tfd);
	free(h->key);
	free(h->heap);
	free(h->pos);
}

/* Arm the timerfd for the earliest timer, if that changed. */
static int uheap_sync(struct uheap *h)
{
	__u64 first = h->size ? h->key[h->heap[0]] : 0;
	struct itimerspec its = { 0 };

	if (first == h->armed)
		return 0;
	set_its(&its, first, 0);
	if (timerfd_settime(h->tfd, TFD_TIMER_ABSTIME, &its, NULL)) {
		fail("uheap timerfd_settime: %s", strerror(errno));
		return -1;
	}
	h->armed = first;
	return 0;
}

static void uheap_add(struct uheap *h, __u32 t, __u64 exp)
{
	h->key[t] = exp;
	uheap_put(h, h->size++, t);
	uheap_up(h, h->size - 1);
}

static void uheap_set(struct uheap *h, __u32 t, __u64 exp)
{
	__u64 old = h->key[t];

	h->key[t] = exp;
	if (exp < old)
		uheap_up(h, h->pos[t]);
	else
		uheap_down(h, h->pos[t]);
}

static void uheap_del(struct uheap *h, __u32 t)
{
	unsigned long i = h->pos[t];
	__u32 last = h->heap[--h->size];

	h->pos[t] = UHEAP_NONE;
	if (i == h->size)
		return;
	uheap_put(h, i, last);
	if (h->key[last] < h->key[t])
		uheap_up(h, i);
	else
		uheap_down(h, i);
}

static int run_uheap(struct work *w, struct runopts o, struct result *r)
{
	unsigned long n = w->n, i, nc = churn_count(n);
	struct uheap h;
	__u64 t0, now;
	int ret = -1;

	(void)o;	/* its memory is the process's, not the kernel's */
	if (uheap_init(&h, n))
		goto out;

	insn_mark("-", 0);
	now = now_ns();
	t0 = now;
	for (i = 0; i < n; i++) {
		uheap_add(&h, i, now + w->exp[i]);
		if (uheap_sync(&h))
			goto out;
	}
	r->arm = (double)(now_ns() - t0) / n;
	insn_mark("arm", n);

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		__u32 k = w->perm[i];

		uheap_set(&h, k, h.key[k] + REARM_NS);
		if (uheap_sync(&h))
			goto out;
	}
	r->rearm = (double)(now_ns() - t0) / n;
	insn_mark("rearm", n);

	/* churn as run_twheel()'s: the new timer takes the victim's place */
	insn_mark("-", 0);
	now = now_ns();
	t0 = now;
	for (i = 0; i < nc; i++) {
		__u32 k = w->perm[n - 1 - i];

		uheap_del(&h, k);
		uheap_add(&h, k, now + w->exp[k] + 2 * REARM_NS);
		if (uheap_sync(&h))
			goto out;
	}
	r->churn = (double)(now_ns() - t0) / nc;
	insn_mark("churn", nc);

	insn_mark("-", 0);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		uheap_del(&h, w->perm[i]);
		if (uheap_sync(&h))
			goto out;
	}
	r->cancel = (double)(now_ns() - t0) / n;
	insn_mark("cancel", n);
	ret = 0;
out:
	uheap_free(&h);
	return ret;
}

/* ---- event delivery ------------------------------------------------------------ */

/*
 * Idle time of all CPUs so far, ns: idle + iowait of /proc/stat.  With
 * NO_HZ the kernel accumulates them exactly at each idle entry and exit
 * (not by sampling ticks, as it does user and system time); they are
 * printed in USER_HZ units, so a reading is exact to 10 ms per CPU.
 */
static double idle_ns(void)
{
	unsigned long long u, ni, sy, id, io;
	static long hz;
	double v = -1;
	FILE *f = fopen("/proc/stat", "r");

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	if (!f)
		return -1;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu", &u, &ni, &sy, &id, &io) == 5)
		v = (double)(id + io) * 1e9 / hz;
	fclose(f);
	return v;
}

static double proc_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * A delivery case: @nt timers; one-shot ones expire at base + i * window /
 * nt, periodic ones first at base + i * period / nt, then every period,
 * and are counted until base + window.
 */
struct dcase {
	unsigned long nt;
	bool periodic;
	__u64 period, window;
	__u64 base;
};

struct dres {
	double cpu, busy;	/* ns per expiry */
};

/* Arming takes time in the VM: start the window after it, generously. */
static __u64 deliver_base(unsigned long nt)
{
	return now_ns() + 300000000ULL + (__u64)nt * 40000ULL;
}

static __u64 dcase_first(const struct dcase *c, unsigned long i)
{
	return c->base + (c->periodic ? c->period : c->window) * i / c->nt;
}

/* Measure from now until the case is over; @drain reads what is ready. */
struct dmeter {
	double cpu0, idle0;
	__u64 wall0;
	unsigned long long expiries;
};

static void dmeter_start(struct dmeter *m, const struct dcase *c, const char *impl)
{
	if (now_ns() > c->base)
		printf(PFX "note: deliver %s: arming %lu timers overran the lead by %.1f ms\n",
		       impl, c->nt, (double)(now_ns() - c->base) / 1e6);
	m->expiries = 0;
	insn_mark("-", 0);
	m->idle0 = idle_ns();
	m->wall0 = now_ns();
	m->cpu0 = proc_cpu_ns();
}

static int dmeter_end(struct dmeter *m, const struct dcase *c,
		      const char *impl, struct dres *d)
{
	double cpu = proc_cpu_ns() - m->cpu0;
	double wall = (double)(now_ns() - m->wall0);
	double busy = wall * sysconf(_SC_NPROCESSORS_ONLN) - (idle_ns() - m->idle0);

	insn_impl = impl;
	insn_mark(c->periodic ? "deliver_periodic" : "deliver_oneshot",
		  m->expiries);

	if (!m->expiries) {
		fail("deliver %s: no expiry in the window", impl);
		return -1;
	}
	if (!c->periodic && m->expiries != c->nt) {
		fail("deliver %s: %llu of %lu one-shot timers delivered", impl,
		     m->expiries, c->nt);
		return -1;
	}
	d->cpu = cpu / m->expiries;
	d->busy = busy / m->expiries;
	return 0;
}

/* Whether to go on waiting, and for how long (ms). */
static int dcase_wait_ms(const struct dcase *c, const struct dmeter *m)
{
	__u64 now = now_ns(), end = c->base + c->window;

	if (c->periodic) {
		if (now >= end)
			return -1;
	} else {
		if (m->expiries >= c->nt)
			return -1;
		end += 5000000000ULL;	/* then give up: lost */
		if (now >= end)
			return -1;
	}
	return (end - now) / 1000000 > 100 ? 100 : (int)((end - now) / 1000000) + 1;
}

static int deliver_twheel_arm(struct dcase *c, int fd);

static int deliver_twheel(struct dcase *c, struct dres *d)
{
	static struct twheel_event ev[256];
	struct epoll_event ee = { .events = EPOLLIN };
	struct dmeter m;
	int fd, ep = -1, ret = -1, tmo;

	fd = twheel_fd(c->nt, O_NONBLOCK);
	if (fd < 0)
		goto out;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee)) {
		fail("epoll: %s", strerror(errno));
		goto out;
	}
	if (deliver_twheel_arm(c, fd))
		goto out;
	dmeter_start(&m, c, "twheel");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		if (epoll_wait(ep, &ee, 1, tmo) <= 0)
			continue;
		for (;;) {
			ssize_t got = read(fd, ev, sizeof(ev)), k;

			if (got <= 0)
				break;
			for (k = 0; k < got / (ssize_t)sizeof(ev[0]); k++)
				m.expiries += 1 + ev[k].overrun;
			if (got < (ssize_t)sizeof(ev))
				break;
		}
	}
	ret = dmeter_end(&m, c, "twheel", d);
out:
	if (ep >= 0)
		close(ep);
	if (fd >= 0)
		close(fd);
	return ret;
}

static int deliver_timerfd(struct dcase *c, struct dres *d)
{
	static struct epoll_event ee[256];
	int *fds = malloc(c->nt * sizeof(*fds));
	unsigned long i, made = 0;
	struct dmeter m;
	int ep, ret = -1, tmo, k, got;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!fds || ep < 0) {
		fail("deliver timerfd: %s", strerror(errno));
		goto out;
	}
	for (; made < c->nt; made++) {
		struct epoll_event e = { .events = EPOLLIN, .data.u32 = made };

		fds[made] = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (fds[made] < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fds[made], &e)) {
			fail("deliver timerfd #%lu: %s", made, strerror(errno));
			if (fds[made] >= 0)
				made++;
			goto out;
		}
	}
	c->base = deliver_base(c->nt);
	for (i = 0; i < c->nt; i++) {
		struct itimerspec its;

		set_its(&its, dcase_first(c, i), c->periodic ? c->period : 0);
		if (timerfd_settime(fds[i], TFD_TIMER_ABSTIME, &its, NULL)) {
			fail("deliver timerfd_settime: %s", strerror(errno));
			goto out;
		}
	}
	dmeter_start(&m, c, "timerfd");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		got = epoll_wait(ep, ee, 256, tmo);
		for (k = 0; k < got; k++) {
			__u64 cnt;

			if (read(fds[ee[k].data.u32], &cnt, sizeof(cnt)) == sizeof(cnt))
				m.expiries += cnt;
		}
	}
	ret = dmeter_end(&m, c, "timerfd", d);
out:
	for (i = 0; i < made; i++)
		close(fds[i]);
	if (ep >= 0)
		close(ep);
	free(fds);
	return ret;
}

/* ---- delivery through io_uring, and by the in-process heap ------------------ */

#define TW_IORING_OP_READ_MULTISHOT	49	/* 6.7+, not in liburing 2.3 */
#define DRING_DEPTH	4096
#define DRING_CQ	65536
#define MSHOT_BUFS	64
#define MSHOT_BGID	7

/* Arm @c's timers on @fd with TWHEEL_IOC_BATCH (deliver_twheel's way). */
static int deliver_twheel_arm(struct dcase *c, int fd)
{
	struct twheel_batch_op *ops = calloc(4096, sizeof(*ops));
	unsigned long i;
	int ret = -1;

	if (!ops) {
		fail("out of memory");
		return -1;
	}
	c->base = deliver_base(c->nt);
	for (i = 0; i < c->nt; i += 4096) {
		unsigned int n = c->nt - i < 4096 ? c->nt - i : 4096, j;

		for (j = 0; j < n; j++) {
			twheel_op(&ops[j], TWHEEL_OP_ARM, 0, dcase_first(c, i + j));
			ops[j].spec.flags = TWHEEL_ARM_ABS;
			ops[j].spec.period = c->periodic ? c->period : 0;
		}
		if (twheel_batch(fd, ops, n, "deliver arm"))
			goto out;
	}
	ret = 0;
out:
	free(ops);
	return ret;
}

/* Wait up to @ms for a completion; 0 with one in *@cqe, else no CQE. */
static int dring_wait(struct io_uring *ring, struct io_uring_cqe **cqe, int ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000LL
	};

	return io_uring_wait_cqe_timeout(ring, cqe, &ts);
}

/*
 * twheel_mshot: the timers armed by batch as for "twheel", their events
 * read by one IORING_OP_READ_MULTISHOT with a ring of provided buffers
 * (6.7+); a read that ends (no buffer left) is submitted again.
 */
static int mshot_submit(struct io_uring *ring, int fd)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_rw(TW_IORING_OP_READ_MULTISHOT, sqe, fd, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = MSHOT_BGID;
	sqe->user_data = 1;
	return io_uring_submit(ring) == 1 ? 0 : -1;
}

static int deliver_mshot(struct dcase *c, struct dres *d)
{
	const unsigned int bsz = 256 * sizeof(struct twheel_event);
	struct io_uring_buf_reg reg = { .ring_entries = MSHOT_BUFS, .bgid = MSHOT_BGID };
	struct io_uring_buf_ring *br = MAP_FAILED;
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct dmeter m;
	char *bufs = malloc(MSHOT_BUFS * bsz);
	int fd, ret = -1, tmo, i, rinit;

	fd = twheel_fd(c->nt, O_NONBLOCK);
	rinit = io_uring_queue_init(64, &ring, 0);
	if (fd < 0 || rinit || !bufs) {
		fail("deliver twheel_mshot: setup");
		goto out;
	}
	br = mmap(NULL, MSHOT_BUFS * sizeof(struct io_uring_buf),
		  PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
	reg.ring_addr = (uintptr_t)br;
	if (br == MAP_FAILED || io_uring_register_buf_ring(&ring, &reg, 0)) {
		ret = 1;	/* no provided buffer rings */
		goto out;
	}
	io_uring_buf_ring_init(br);
	for (i = 0; i < MSHOT_BUFS; i++)
		io_uring_buf_ring_add(br, bufs + i * bsz, bsz, i,
				      io_uring_buf_ring_mask(MSHOT_BUFS), i);
	io_uring_buf_ring_advance(br, MSHOT_BUFS);
	if (mshot_submit(&ring, fd)) {
		fail("deliver twheel_mshot: submit");
		goto out;
	}
	if (!io_uring_peek_cqe(&ring, &cqe) && cqe->res == -EINVAL) {
		ret = 1;	/* no IORING_OP_READ_MULTISHOT (6.7+) */
		goto out;
	}
	if (deliver_twheel_arm(c, fd))
		goto out;
	dmeter_start(&m, c, "twheel_mshot");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		unsigned int head, seen = 0;

		if (dring_wait(&ring, &cqe, tmo))
			continue;
		io_uring_for_each_cqe(&ring, head, cqe) {
			seen++;
			if (cqe->res > 0) {
				const struct twheel_event *ev;
				int bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT, k;

				ev = (const void *)(bufs + bid * bsz);
				for (k = 0; k < cqe->res / (int)sizeof(*ev); k++)
					m.expiries += 1 + ev[k].overrun;
				io_uring_buf_ring_add(br, bufs + bid * bsz, bsz, bid,
						      io_uring_buf_ring_mask(MSHOT_BUFS), 0);
				io_uring_buf_ring_advance(br, 1);
			} else if (cqe->res != -ENOBUFS && cqe->res != 0) {
				fail("deliver twheel_mshot: read %d", cqe->res);
				goto out;
			}
			if (!(cqe->flags & IORING_CQE_F_MORE) && mshot_submit(&ring, fd)) {
				fail("deliver twheel_mshot: resubmit");
				goto out;
			}
		}
		io_uring_cq_advance(&ring, seen);
	}
	ret = dmeter_end(&m, c, "twheel_mshot", d);
out:
	if (!rinit)
		io_uring_queue_exit(&ring);
	if (br != MAP_FAILED)
		munmap(br, MSHOT_BUFS * sizeof(struct io_uring_buf));
	if (fd >= 0)
		close(fd);
	free(bufs);
	return ret;
}

/*
 * The kernels without periodic timers in the ring (twheel's expiry
 * completions are one-shot, io_uring's multishot timeouts start one
 * period from now): the program arms a timer's next expiry when its
 * completion comes, as it would.  @fired late by @late ns: the expiries
 * it stands for, and where the next one lies.
 */
static unsigned long long next_expiry(const struct dcase *c, __u64 *exp, __u64 now)
{
	unsigned long long n = 1;

	if (now > *exp)
		n += (now - *exp) / c->period;
	*exp += n * c->period;
	return n;
}

/*
 * twheel_uring_expiry: each timer an ARM with TWHEEL_ARM_URING_EXPIRY
 * (6.7+), its expiry a CQE (the fire time in big_cqe[0]).
 */
static int uexp_queue(struct io_uring *ring, int fd, unsigned long t, __u64 exp)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	struct twheel_arm a = {
		.size = sizeof(a), .flags = TWHEEL_ARM_URING_EXPIRY,
		.spec.flags = TWHEEL_ARM_ABS, .spec.expires = exp,
	};

	if (!sqe) {
		if (io_uring_submit(ring) < 0)
			return -1;
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			return -1;
	}
	memset(sqe, 0, 2 * sizeof(*sqe));	/* SQE128 */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = TWHEEL_IOC_ARM;
	sqe->user_data = t;
	memcpy(sqe->cmd, &a, sizeof(a));
	return 0;
}

static int deliver_uring_expiry(struct dcase *c, struct dres *d)
{
	struct twheel_api api = { .size = sizeof(api) };
	__u64 *exp = malloc(c->nt * sizeof(*exp));
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 |
				     IORING_SETUP_CQE32 | IORING_SETUP_CQSIZE,
				     .cq_entries = DRING_CQ };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct dmeter m;
	unsigned long i;
	int fd, ret = -1, tmo, rinit = -1;

	fd = twheel_fd(c->nt, 0);
	if (fd < 0 || !exp)
		goto out;
	if (ioctl(fd, TWHEEL_IOC_API, &api) ||
	    !(api.out_features & TWHEEL_FEATURE_URING_EXPIRY)) {
		ret = 1;
		goto out;
	}
	rinit = io_uring_queue_init_params(DRING_DEPTH, &ring, &p);
	if (rinit) {
		fail("deliver twheel_uring_expiry: io_uring_queue_init: %s",
		     strerror(-rinit));
		goto out;
	}
	c->base = deliver_base(c->nt);
	for (i = 0; i < c->nt; i++) {
		exp[i] = dcase_first(c, i);
		if (uexp_queue(&ring, fd, i, exp[i]))
			goto out;
	}
	if (io_uring_submit(&ring) < 0)
		goto out;
	dmeter_start(&m, c, "twheel_uring_expiry");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		unsigned int head, seen = 0;
		bool rearmed = false;

		if (dring_wait(&ring, &cqe, tmo))
			continue;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned long t = cqe->user_data;

			seen++;
			if (cqe->res) {
				fail("deliver twheel_uring_expiry: %s", strerror(-cqe->res));
				goto out;
			}
			if (!c->periodic) {
				m.expiries++;
				continue;
			}
			m.expiries += next_expiry(c, &exp[t], cqe->big_cqe[0]);
			if (uexp_queue(&ring, fd, t, exp[t]))
				goto out;
			rearmed = true;
		}
		io_uring_cq_advance(&ring, seen);
		if (rearmed && io_uring_submit(&ring) < 0)
			goto out;
	}
	ret = dmeter_end(&m, c, "twheel_uring_expiry", d);
out:
	/* the ring's teardown cancels what is still pending */
	if (!rinit)
		io_uring_queue_exit(&ring);
	if (fd >= 0)
		close(fd);
	free(exp);
	return ret;
}

/* io_uring: each timer an IORING_OP_TIMEOUT (absolute), -ETIME at expiry. */
static int uto_queue(struct io_uring *ring, struct __kernel_timespec *ts,
		     unsigned int *nts, unsigned long t, __u64 exp)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	/* the timespecs are read at submission: submit before reusing them */
	if (!sqe || *nts == DRING_DEPTH) {
		if (io_uring_submit(ring) < 0)
			return -1;
		*nts = 0;
		sqe = io_uring_get_sqe(ring);
		if (!sqe)
			return -1;
	}
	uring_ts(&ts[*nts], exp);
	io_uring_prep_timeout(sqe, &ts[*nts], 0, IORING_TIMEOUT_ABS);
	sqe->user_data = t;
	(*nts)++;
	return 0;
}

static int deliver_uring_timeout(struct dcase *c, struct dres *d)
{
	static struct __kernel_timespec ts[DRING_DEPTH];
	__u64 *exp = malloc(c->nt * sizeof(*exp));
	struct io_uring_params p = { .flags = IORING_SETUP_CQSIZE,
				     .cq_entries = DRING_CQ };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	struct dmeter m;
	unsigned int nts = 0;
	unsigned long i;
	int ret = -1, tmo, rinit;

	rinit = io_uring_queue_init_params(DRING_DEPTH, &ring, &p);
	if (rinit || !exp) {
		fail("deliver io_uring: setup");
		goto out;
	}
	c->base = deliver_base(c->nt);
	for (i = 0; i < c->nt; i++) {
		exp[i] = dcase_first(c, i);
		if (uto_queue(&ring, ts, &nts, i, exp[i]))
			goto out;
	}
	if (io_uring_submit(&ring) < 0)
		goto out;
	nts = 0;
	dmeter_start(&m, c, "io_uring");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		unsigned int head, seen = 0;
		bool rearmed = false;
		__u64 now = 0;

		if (dring_wait(&ring, &cqe, tmo))
			continue;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned long t = cqe->user_data;

			seen++;
			if (cqe->res != -ETIME) {
				fail("deliver io_uring: timeout %d", cqe->res);
				goto out;
			}
			if (!c->periodic) {
				m.expiries++;
				continue;
			}
			if (!now)
				now = now_ns();
			m.expiries += next_expiry(c, &exp[t], now);
			if (uto_queue(&ring, ts, &nts, t, exp[t]))
				goto out;
			rearmed = true;
		}
		io_uring_cq_advance(&ring, seen);
		if (rearmed) {
			if (io_uring_submit(&ring) < 0)
				goto out;
			nts = 0;
		}
	}
	ret = dmeter_end(&m, c, "io_uring", d);
out:
	if (!rinit)
		io_uring_queue_exit(&ring);
	free(exp);
	return ret;
}

/*
 * uheap: the timers in the process's heap, one timerfd for the earliest
 * (epoll, as for timerfd); at its expiry every due timer is popped (a
 * periodic one goes back with its next expiry) and the timerfd re-armed.
 */
static int deliver_uheap(struct dcase *c, struct dres *d)
{
	struct epoll_event ee = { .events = EPOLLIN };
	struct uheap h;
	struct dmeter m;
	unsigned long i;
	int ep = -1, ret = -1, tmo;

	if (uheap_init(&h, c->nt))
		goto out;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, h.tfd, &ee)) {
		fail("epoll: %s", strerror(errno));
		goto out;
	}
	c->base = deliver_base(c->nt);
	for (i = 0; i < c->nt; i++)
		uheap_add(&h, i, dcase_first(c, i));
	if (uheap_sync(&h))
		goto out;
	dmeter_start(&m, c, "uheap");
	while ((tmo = dcase_wait_ms(c, &m)) >= 0) {
		__u64 cnt, now;

		if (epoll_wait(ep, &ee, 1, tmo) <= 0)
			continue;
		if (read(h.tfd, &cnt, sizeof(cnt)) != sizeof(cnt))
			continue;
		now = now_ns();
		while (h.size && h.key[h.heap[0]] <= now) {
			__u32 t = h.heap[0];

			if (c->periodic) {
				__u64 e = h.key[t];

				m.expiries += next_expiry(c, &e, now);
				uheap_set(&h, t, e);
			} else {
				m.expiries++;
				uheap_del(&h, t);
			}
		}
		if (uheap_sync(&h))
			goto out;
	}
	ret = dmeter_end(&m, c, "uheap", d);
out:
	if (ep >= 0)
		close(ep);
	uheap_free(&h);
	return ret;
}

/*
 * Every implementation, both kinds, every rate, rotated per repetition.
 * One a kernel lacks (the 6.7+ ones on 6.1) is skipped with a note.
 */
#define NDELIV 6
static const char *const deliv_names[NDELIV] = {
	"twheel", "timerfd", "twheel_mshot", "twheel_uring_expiry", "io_uring",
	"uheap"
};

static int deliver_one(int a, struct dcase *c, struct dres *d)
{
	switch (a) {
	case 0:
		return deliver_twheel(c, d);
	case 1:
		return deliver_timerfd(c, d);
	case 2:
		return deliver_mshot(c, d);
	case 3:
		return deliver_uring_expiry(c, d);
	case 4:
		return deliver_uring_timeout(c, d);
	default:
		return deliver_uheap(c, d);
	}
}

static void run_deliver(void)
{
	bool skipped[NDELIV] = { false };
	int q, kind, a, j;

	for (q = 0; q < rates_count; q++) {
		unsigned long rate = rates[q];

		if (!rate)
			continue;
		for (kind = 0; kind < 2; kind++) {
			static double cpu[NDELIV][MAX_REPS], busy[NDELIV][MAX_REPS];
			unsigned int ok[NDELIV] = { 0 }, r;
			struct dcase c = { .periodic = kind };
			int active[NDELIV], na = 0;

			if (kind) {
				c.period = (__u64)period_ms * 1000000ULL;
				c.nt = rate * period_ms / 1000;
			} else {
				c.nt = rate * window_ms / 1000;
			}
			if (c.nt > nmax)
				c.nt = nmax;
			if (!c.nt)
				c.nt = 1;
			/* the rate stays: the period or the window shrinks */
			if (kind)
				c.period = (__u64)c.nt * 1000000000ULL / rate;
			c.window = kind ? (__u64)window_ms * 1000000ULL :
					  (__u64)c.nt * 1000000000ULL / rate;
			for (a = 0; a < NDELIV; a++)
				if (impl_wanted(deliv_names[a]))
					active[na++] = a;
			for (r = 0; r < reps; r++)
				for (j = 0; j < na; j++) {
					struct dres d;
					int ret;

					a = active[rep_order(r, j, na)];
					if (skipped[a])
						continue;
					insn_impl = deliv_names[a];
					ret = deliver_one(a, &c, &d);
					if (ret > 0) {
						printf(PFX "note: deliver %s: %s\n", deliv_names[a],
						       "not supported by this kernel, skipped");
						skipped[a] = true;
					}
					if (ret)
						continue;
					cpu[a][ok[a]] = d.cpu;
					busy[a][ok[a]] = d.busy;
					ok[a]++;
				}
			for (a = 0; a < NDELIV; a++) {
				emit("deliver", deliv_names[a], rate,
				     kind ? "periodic_cpu" : "oneshot_cpu", cpu[a], ok[a]);
				emit("deliver", deliv_names[a], rate,
				     kind ? "periodic_busy" : "oneshot_busy", busy[a], ok[a]);
			}
		}
	}
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

#define NIMPL 9
static const char *const impl_names[NIMPL] = {
	"twheel", "twheel_b64", "twheel_b4096", "timerfd", "posix", "io_uring",
	"twheel_uring", "twheel_uring_b4096", "uheap"
};

/* twheel_b4096 with each batch submitted through an SQE128/CQE32 ring. */
static int run_twheel_uring_b(struct work *w, struct runopts o,
			      struct result *res)
{
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(8, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (ret) {
		fail("io_uring_queue_init: %s", strerror(-ret));
		return -1;
	}
	batch_ring = &ring;
	ret = run_twheel(w, 4096, o, res);
	batch_ring = NULL;
	io_uring_queue_exit(&ring);
	return ret;
}

static int run_one(int a, struct work *w, struct runopts o, struct result *res)
{
	insn_impl = impl_names[a];
	switch (a) {
	case 0:
		return run_twheel(w, 0, o, res);
	case 1:
		return run_twheel(w, 64, o, res);
	case 2:
		return run_twheel(w, 4096, o, res);
	case 3:
		return run_timerfd(w, o, res);
	case 4:
		return run_posix(w, o, res);
	case 5:
		return run_uring(w, o, res);
	case 6:
		return run_twheel_uring(w, o, res);
	case 7:
		return run_twheel_uring_b(w, o, res);
	default:
		return run_uheap(w, o, res);
	}
}

static void print_usage(void)
{
	fprintf(stderr, "usage: twheel_ubench [-n N,...] [-i impl,...] [-r reps] [-s settle_s]\n"
		"                     [-u uring_sample] [-p posix_max_n] [-e rate,...]\n"
		"                     [-w window_ms] [-P period_ms] [-S suite,...] [-M]\n");
	exit(2);
}

#define SYSCALL_LOOPS 100000

/*
 * Dependent loads, one per 4 KiB page, over P pages: the page order of a
 * random cycle or of the pages' addresses, at a random cache line of each
 * page either way.  P is what the table entries of 1.3 x 10^4, 10^5 and
 * 10^6 timers span (50 to a page).  Under TCG a load from a page that
 * QEMU's software TLB does not hold costs a page walk in the emulator; a
 * random order shows what a first touch of a random table entry costs
 * (the "user" suite's random CANCELs), the page order whether the pages
 * fit in that TLB at all.  Natively: the CPU's TLB and caches.
 */
#define CHASE_LOADS	(256U * 1024)
#define CHASE_PAGE	4096

static const size_t chase_pages[] = { 256, 2000, 20000 };

static double page_chase(char *const *start)
{
	char *const *p = start;
	unsigned int i;
	__u64 t0;

	/* the next address comes from this load: no two loads overlap */
	for (i = 0; i < CHASE_LOADS / 4; i++)
		p = (char *const *)*p;
	t0 = now_ns();
	for (i = 0; i < CHASE_LOADS; i++)
		p = (char *const *)*p;
	t0 = now_ns() - t0;
	/* keep the chain's result alive */
	__asm__ volatile("" : : "r"(p));
	return (double)t0 / CHASE_LOADS;
}

/* Link @a's lines into one cycle, page @order[i] to @order[i + 1]. */
static char *const *chase_link(char *a, const size_t *line,
			       const size_t *order, size_t np)
{
	size_t i;

	for (i = 0; i < np; i++)
		*(char **)(a + line[order[i]]) = a + line[order[(i + 1) % np]];
	return (char *const *)(a + line[order[0]]);
}

static void run_page_chase(void)
{
	double rnd_ns[ARRAY_SIZE(chase_pages)][MAX_REPS];
	double seq_ns[ARRAY_SIZE(chase_pages)][MAX_REPS];
	unsigned int k, r;

	for (k = 0; k < ARRAY_SIZE(chase_pages); k++) {
		size_t np = chase_pages[k], i;
		size_t *order = malloc(np * sizeof(*order));
		size_t *line = malloc(np * sizeof(*line));
		char *a = mmap(NULL, np * CHASE_PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

		if (!order || !line || a == MAP_FAILED) {
			fail("page chase: out of memory at %zu pages", np);
			free(order);
			free(line);
			if (a != MAP_FAILED)
				munmap(a, np * CHASE_PAGE);
			return;
		}
		for (i = 0; i < np; i++)
			line[i] = i * CHASE_PAGE + rnd() % 64 * 64;
		for (r = 0; r < reps; r++) {
			/* page order, then a random cycle (Fisher-Yates) */
			for (i = 0; i < np; i++)
				order[i] = i;
			seq_ns[k][r] = page_chase(chase_link(a, line, order, np));
			for (i = np - 1; i > 0; i--) {
				size_t j = rnd() % (i + 1), t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
			rnd_ns[k][r] = page_chase(chase_link(a, line, order, np));
		}
		munmap(a, np * CHASE_PAGE);
		free(order);
		free(line);
	}
	for (k = 0; k < ARRAY_SIZE(chase_pages); k++) {
		emit("prims", "user", chase_pages[k], "page_chase_inorder",
		     seq_ns[k], reps);
		emit("prims", "user", chase_pages[k], "page_chase_random",
		     rnd_ns[k], reps);
	}
}

/* Per-call cost of the bare system call paths, over @reps. */
static void run_prims(void)
{
	double gp[MAX_REPS], nt[MAX_REPS];
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
		emit("prims", "user", 0, "syscall_getppid", gp, reps);
		emit("prims", "user", 0, "ioctl_enotty", nt, reps);
	}
}

/* Parse a comma-separated list of numbers into @v (at most @max). */
static int parse_list(const char *arg, unsigned long *v, int max)
{
	const char *p;
	char *end;
	int k = 0;

	for (p = arg; *p && k < max; p = end + (*end == ',')) {
		v[k++] = strtoul(p, &end, 0);
		if (end == p)
			print_usage();
	}
	return k;
}

int main(int argc, char **argv)
{
	static double v[8][NIMPL][MAX_REPS];	/* by field of struct result */
	static const char *const ops[8] = {
		"arm", "rearm", "churn", "cancel", "create", "close",
		"bytes_per_timer", "bytes_per_timer_memfree"
	};
	bool warmed[NIMPL] = { false };
	int opt, k, a, f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "n:i:r:s:u:p:e:w:P:S:M")) != -1) {
		switch (opt) {
		case 'M':
			insn_marks = true;
			break;
		case 'S':
			suites = optarg;
			break;
		case 'n':
			ns_count = parse_list(optarg, ns_list, ARRAY_SIZE(ns_list));
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
		case 'e':
			rates_count = parse_list(optarg, rates, ARRAY_SIZE(rates));
			break;
		case 'w':
			window_ms = strtoul(optarg, NULL, 0);
			break;
		case 'P':
			period_ms = strtoul(optarg, NULL, 0);
			break;
		default:
			print_usage();
		}
	}
	if (!reps || reps > MAX_REPS || !uring_sample || !window_ms || !period_ms)
		print_usage();
	for (k = 0; k < ns_count; k++)
		if (ns_list[k] > nmax)
			nmax = ns_list[k];
	raise_limits(nmax);
	printf(PFX "start: impls=%s reps=%u settle=%us\n", impls ? impls : "all", reps,
	       settle_s);
	if (listed(suites, "prims")) {
		run_prims();
		run_page_chase();
	}

	for (k = 0; k < ns_count && listed(suites, "user"); k++) {
		unsigned long n = ns_list[k];
		unsigned int ok[NIMPL] = { 0 }, r;
		int active[NIMPL], na = 0, j;

		if (!n)
			continue;
		for (a = 0; a < NIMPL; a++) {
			if (!impl_wanted(impl_names[a]))
				continue;
			if (a == 4 && n > posix_max) {
				printf(PFX "note: posix skipped at N=%lu (> -p %lu)\n",
				       n, posix_max);
				continue;
			}
			active[na++] = a;
			/* first use of each implementation: one discarded run */
			if (!warmed[a]) {
				struct result res = RESULT_NONE;
				struct runopts o = { false, false };
				struct work w;

				warmed[a] = true;
				work_make(&w, n < 1000 ? n : 1000);
				run_one(a, &w, o, &res);
				work_free(&w);
			}
		}
		/*
		 * Every repetition runs every implementation in rep_order(),
		 * so that a slow stretch of the host does not land on one of
		 * them only and none always runs after the same one (whose
		 * frees it would see in its memory figures).
		 */
		for (r = 0; r < reps; r++)
			for (j = 0; j < na; j++) {
				struct result res = RESULT_NONE;
				struct runopts o = { true, r == 0 };
				struct work w;
				double *fld = &res.arm;

				a = active[rep_order(r, j, na)];
				work_make(&w, n);
				if (!run_one(a, &w, o, &res)) {
					for (f = 0; f < 8; f++)
						v[f][a][ok[a]] = fld[f];
					ok[a]++;
				}
				work_free(&w);
			}
		for (j = 0; j < na; j++) {
			double ac[MAX_REPS];
			unsigned int i;

			a = active[j];
			if (!ok[a])
				continue;
			for (i = 0; i < ok[a]; i++)
				ac[i] = v[0][a][i] + v[3][a][i];
			for (f = 0; f < 8; f++) {
				if (isnan(v[f][a][0]))
					continue;
				emit(f >= 6 ? "mem" : "user", impl_names[a], n, ops[f],
				     v[f][a], ok[a]);
				if (f == 3)
					emit("user", impl_names[a], n, "arm_cancel", ac, ok[a]);
			}
		}
	}
	if (listed(suites, "deliver"))
		run_deliver();
	printf(PFX "done, %d error(s)\n", failures);
	return failures ? 1 : 0;
}
