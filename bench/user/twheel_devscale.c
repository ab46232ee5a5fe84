// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_devscale - batched arm + cancel throughput of /dev/twheel from
 * 1, 2, 4... threads pinned to different CPUs.
 *
 * For each outstanding count N and thread count T: T threads, thread t
 * pinned to CPU t, each on its own file (layout "files") or all on one
 * shared file (layout "shared"), first arm N / T timers 60-120 s out in
 * batches of 1024; then, after a barrier, each repeats for @ms
 * milliseconds: one TWHEEL_IOC_BATCH of 256 ARM records (10-70 s out),
 * then one of 256 CANCEL records of those timers.  Throughput = all
 * threads' arm+cancel pairs / the measuring time; median over @reps.
 *
 * Output: twheel_devscale: csv,devsmp,twheel_<layout>,<N>,pairs_per_s_t<T>,<v>
 *
 * With -x N (two online CPUs), instead: what a MODIFY record costs when
 * the timer is on another CPU's base.  The device arms and re-arms on the
 * ioctl's CPU, so such a record moves the timer there.  One thread, one
 * file, pools of N timers 60-120 s out: in each of 20 phases the thread
 * runs on CPU p % 2 and re-arms (TWHEEL_OP_MODIFY, batches of 256, 10-70
 * s out) every timer of one pool -- mode "move": the pool it re-armed
 * from the other CPU in the phase before, so every record moves its timer
 * -- or of the pool of this CPU -- mode "stay": none moves.  Only the
 * ioctls are timed; the modes alternate, which goes first changing from
 * repetition to repetition.
 *
 * Output: twheel_devscale: csv,devmove,twheel,<N>,ns_per_modify_<mode>,<v>
 * and move_permille (move / stay per repetition), median over @reps, and
 * its min and max.
 *
 * Usage: twheel_devscale [-n N,N] [-t T,T,...] [-m ms] [-r reps] [-x N]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/types.h>
#include <linux/twheel.h>

#define PFX "twheel_devscale: "
#define BATCH		256
#define ARM_CHUNK	1024
#define MAX_THREADS	16
#define MAX_REPS	15

static unsigned long ns_list[4] = { 1000, 1000000 };
static int ns_count = 2;
static unsigned int t_list[4] = { 1, 2, 4 };
static int t_count = 3;
static unsigned int run_ms = 1000;
static unsigned int reps = 3;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct run;

struct thr {
	struct run *r;
	int cpu;
	int fd;
	unsigned long nout;
	uint64_t pairs[MAX_REPS];
	int err;
};

struct run {
	unsigned int nthr;
	atomic_uint ready;
	atomic_uint go;
	uint64_t stop[MAX_REPS];
	struct thr th[MAX_THREADS];
};

static int batch(int fd, struct twheel_batch_op *ops, unsigned int n)
{
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)ops,
		.count = n,
		.op_size = sizeof(*ops),
	};
	int ret = ioctl(fd, TWHEEL_IOC_BATCH, &b);

	if (ret < 0)
		return -errno;
	/* ABI 2: out_result is written only for failures, counted here. */
	return b.out_done == n && !b.out_failed ? 0 : -EIO;
}

static int arm_many(int fd, struct twheel_batch_op *ops, unsigned int n,
		    unsigned int base_ms, unsigned int *seed)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&ops[i], 0, sizeof(ops[i]));
		ops[i].op = TWHEEL_OP_ARM;
		ops[i].spec.expires = (base_ms + rand_r(seed) % 60000) * 1000000ULL;
	}
	return batch(fd, ops, n);
}

/* Pin the calling thread to @cpu. */
static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

static void *thr_fn(void *arg)
{
	struct thr *t = arg;
	struct run *r = t->r;
	struct twheel_batch_op ops[ARM_CHUNK];
	unsigned int seed = t->cpu + 1, rep, i;
	unsigned long done;

	t->err = -pin(t->cpu);
	if (t->err)
		return NULL;
	for (done = 0; done < t->nout; done += ARM_CHUNK) {
		unsigned int n = t->nout - done < ARM_CHUNK ? t->nout - done : ARM_CHUNK;

		t->err = -arm_many(t->fd, ops, n, 60000, &seed);
		if (t->err)
			return NULL;
	}
	for (rep = 0; rep < reps; rep++) {
		uint64_t pairs = 0;

		atomic_fetch_add(&r->ready, 1);
		while (atomic_load(&r->go) != rep + 1)
			;
		while (now_ns() < r->stop[rep]) {
			t->err = -arm_many(t->fd, ops, BATCH, 10000, &seed);
			if (t->err)
				return NULL;
			for (i = 0; i < BATCH; i++) {
				__u64 h = ops[i].handle;

				memset(&ops[i], 0, sizeof(ops[i]));
				ops[i].op = TWHEEL_OP_CANCEL;
				ops[i].handle = h;
			}
			t->err = -batch(t->fd, ops, BATCH);
			if (t->err)
				return NULL;
			pairs += BATCH;
		}
		t->pairs[rep] = pairs;
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int run_case(unsigned long n, unsigned int nthr, bool shared)
{
	pthread_t tid[MAX_THREADS];
	uint64_t rate[MAX_REPS];
	struct run *r = calloc(1, sizeof(*r));
	unsigned int i, rep;
	int fd0 = -1, ret = 0;

	if (!r)
		return -ENOMEM;
	r->nthr = nthr;
	for (i = 0; i < nthr; i++) {
		struct thr *t = &r->th[i];

		t->r = r;
		t->cpu = i;
		t->nout = n / nthr;
		if (shared && i)
			t->fd = fd0;
		else
			t->fd = open("/dev/twheel", O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (t->fd < 0)
			return -errno;
		if (!i)
			fd0 = t->fd;
	}
	for (i = 0; i < nthr; i++)
		pthread_create(&tid[i], NULL, thr_fn, &r->th[i]);
	for (rep = 0; rep < reps; rep++) {
		uint64_t sum = 0, t0;

		while (atomic_load(&r->ready) < (rep + 1) * nthr) {
			for (i = 0; i < nthr; i++)
				if (r->th[i].err)
					goto out;
			usleep(1000);
		}
		t0 = now_ns();
		r->stop[rep] = t0 + run_ms * 1000000ULL;
		atomic_store(&r->go, rep + 1);
		usleep(run_ms * 1000);
		/* the threads finish their last batch pair after stop */
		while (1) {
			bool all = true;

			for (i = 0; i < nthr; i++)
				all &= r->th[i].pairs[rep] || r->th[i].err;
			if (all)
				break;
			usleep(1000);
		}
		for (i = 0; i < nthr; i++)
			sum += r->th[i].pairs[rep];
		rate[rep] = sum * 1000000000ULL / (now_ns() - t0);
	}
out:
	for (i = 0; i < nthr; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < nthr; i++) {
		if (r->th[i].err) {
			fprintf(stderr, PFX "thread %u: %s\n", i, strerror(r->th[i].err));
			ret = -r->th[i].err;
		}
		if (!shared || !i)
			close(r->th[i].fd);
	}
	if (!ret) {
		qsort(rate, reps, sizeof(rate[0]), cmp_u64);
		printf(PFX "csv,devsmp,twheel_%s,%lu,pairs_per_s_t%u,%llu\n",
		       shared ? "shared" : "files", n, nthr,
		       (unsigned long long)rate[reps / 2]);
		fflush(stdout);
	}
	free(r);
	return ret;
}

#define MOVE_PHASES	20

/* Arm @n timers 60-120 s out from the current CPU, their handles into @h. */
static int pool_arm(int fd, __u64 *h, unsigned long n, unsigned int *seed)
{
	struct twheel_batch_op ops[ARM_CHUNK];
	unsigned long done;
	unsigned int i, k;
	int ret;

	for (done = 0; done < n; done += k) {
		k = n - done < ARM_CHUNK ? n - done : ARM_CHUNK;
		ret = arm_many(fd, ops, k, 60000, seed);
		if (ret)
			return ret;
		for (i = 0; i < k; i++)
			h[done + i] = ops[i].handle;
	}
	return 0;
}

/*
 * Re-arm the @n timers of @h 10-70 s out from the current CPU, in batches
 * of BATCH MODIFY records; add the ns the ioctls took to @ns if not NULL.
 */
static int pool_modify(int fd, const __u64 *h, unsigned long n,
		       unsigned int *seed, uint64_t *ns)
{
	struct twheel_batch_op ops[BATCH];
	unsigned long done;
	unsigned int i, k;
	uint64_t t0;
	int ret;

	for (done = 0; done < n; done += k) {
		k = n - done < BATCH ? n - done : BATCH;
		for (i = 0; i < k; i++) {
			memset(&ops[i], 0, sizeof(ops[i]));
			ops[i].op = TWHEEL_OP_MODIFY;
			ops[i].handle = h[done + i];
			ops[i].spec.expires = (10000 + rand_r(seed) % 60000) *
					      1000000ULL;
		}
		t0 = now_ns();
		ret = batch(fd, ops, k);
		if (ns)
			*ns += now_ns() - t0;
		if (ret)
			return ret;
	}
	return 0;
}

/* One repetition of mode move (@move) or stay: ns per MODIFY record. */
static int move_rep(int fd, __u64 *pool[2], unsigned long n, bool move,
		    unsigned int *seed, uint64_t *per)
{
	uint64_t ns = 0;
	unsigned int p;
	int ret;

	/* pool c's timers start on CPU c's base */
	for (p = 0; p < 2; p++) {
		ret = pin(p);
		if (!ret)
			ret = pool_modify(fd, pool[p], n, seed, NULL);
		if (ret)
			return ret;
	}
	for (p = 0; p < MOVE_PHASES; p++) {
		/* move: pool 0 alone, re-armed from the other CPU each time */
		ret = pin(move ? (p + 1) % 2 : p % 2);
		if (!ret)
			ret = pool_modify(fd, pool[move ? 0 : p % 2], n, seed,
					  &ns);
		if (ret)
			return ret;
	}
	*per = ns / (MOVE_PHASES * n);
	return 0;
}

static int run_move(unsigned long n)
{
	uint64_t ns[2][MAX_REPS], ratio[MAX_REPS];
	static const char *const mode[2] = { "stay", "move" };
	unsigned int seed = 1, rep, m, k;
	__u64 *pool[2];
	int fd, ret = 0;

	fd = open("/dev/twheel", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	pool[0] = calloc(n, sizeof(__u64));
	pool[1] = calloc(n, sizeof(__u64));
	if (!pool[0] || !pool[1]) {
		ret = -ENOMEM;
		goto out;
	}
	for (m = 0; m < 2 && !ret; m++) {
		ret = pin(m);
		if (!ret)
			ret = pool_arm(fd, pool[m], n, &seed);
	}
	for (rep = 0; rep < reps && !ret; rep++)
		for (k = 0; k < 2 && !ret; k++) {
			m = (rep + k) % 2;
			ret = move_rep(fd, pool, n, m, &seed, &ns[m][rep]);
		}
	if (ret)
		goto out;
	for (rep = 0; rep < reps; rep++)
		ratio[rep] = ns[1][rep] * 1000 / (ns[0][rep] ? ns[0][rep] : 1);
	for (m = 0; m < 2; m++) {
		qsort(ns[m], reps, sizeof(ns[m][0]), cmp_u64);
		printf(PFX "csv,devmove,twheel,%lu,ns_per_modify_%s,%llu\n", n,
		       mode[m], (unsigned long long)ns[m][reps / 2]);
	}
	qsort(ratio, reps, sizeof(ratio[0]), cmp_u64);
	printf(PFX "csv,devmove,twheel,%lu,move_permille,%llu\n", n,
	       (unsigned long long)ratio[reps / 2]);
	printf(PFX "csv,devmove,twheel,%lu,move_min_permille,%llu\n", n,
	       (unsigned long long)ratio[0]);
	printf(PFX "csv,devmove,twheel,%lu,move_max_permille,%llu\n", n,
	       (unsigned long long)ratio[reps - 1]);
	fflush(stdout);
out:
	free(pool[0]);
	free(pool[1]);
	close(fd);
	return ret;
}

static int parse_list(char *s, unsigned long *v, int max)
{
	int n = 0;
	char *tok;

	for (tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
		v[n++] = strtoul(tok, NULL, 0);
	return n;
}

int main(int argc, char **argv)
{
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long tmp[4], move_n = 0;
	int opt, a, b, i, s;

	while ((opt = getopt(argc, argv, "n:t:m:r:x:")) != -1) {
		switch (opt) {
		case 'n':
			ns_count = parse_list(optarg, ns_list, 4);
			break;
		case 't':
			t_count = parse_list(optarg, tmp, 4);
			for (i = 0; i < t_count; i++)
				t_list[i] = tmp[i];
			break;
		case 'm':
			run_ms = atoi(optarg);
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'x':
			move_n = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-n N,N] [-t T,T] [-m ms] [-r reps] [-x N]\n",
				argv[0]);
			return 2;
		}
	}
	if (!reps || reps > MAX_REPS)
		return 2;
	if (move_n) {
		if (online < 2) {
			fprintf(stderr, PFX "-x needs two online CPUs\n");
			return 2;
		}
		printf(PFX "move case: %lu timers per pool, %u phases, %u repetitions\n",
		       move_n, MOVE_PHASES, reps);
		if (run_move(move_n)) {
			printf(PFX "failed: move case\n");
			return 1;
		}
		return 0;
	}
	printf(PFX "%ld online CPUs, %u ms per repetition, %u repetitions\n",
	       online, run_ms, reps);
	for (s = 0; s < 2; s++)
		for (a = 0; a < ns_count; a++)
			for (b = 0; b < t_count; b++) {
				if (!t_list[b] || t_list[b] > online || t_list[b] > MAX_THREADS)
					continue;
				if (run_case(ns_list[a], t_list[b], s)) {
					printf(PFX "failed: n=%lu t=%u\n", ns_list[a], t_list[b]);
					return 1;
				}
			}
	return 0;
}
