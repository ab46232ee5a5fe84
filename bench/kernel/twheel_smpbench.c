// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_smpbench - start+cancel throughput of one timer facility
 * instance from 1, 2, 4... kthreads pinned to different CPUs.
 *
 * For each implementation, outstanding count N and thread count T (T <=
 * online CPUs): T kthreads, thread t bound to the t-th online CPU, first
 * arm N / T outstanding timers each (60-120 s out, so none fires during
 * the case), then meet at a barrier and each run @pairs start+cancel
 * pairs on a private pool of 64 timers with random expiries 10-70 s out.
 * The throughput of the case is T * @pairs / the longest thread's time.
 * Repetitions are rounds: each round runs every (implementation, T) case
 * of an N once, starting from another implementation each round, so that
 * a case and its one-thread twin ran close together; the scaling from 1 to
 * T threads is taken per round (round r's T-thread throughput over round
 * r's one-thread throughput) and reported as its median, minimum and
 * maximum over the @reps rounds, with the medians of the throughput and
 * of one thread's ns per pair.  Implementations:
 *
 *   twheel         a twheel instance with one base per CPU
 *                  (twheel_create(): what issue 13 built)
 *   twheel_single  a twheel instance with one base for all CPUs
 *                  (TWHEEL_CREATE_SINGLE_BASE: the structure before it,
 *                  one lock and one wheel for every CPU)
 *   timer_list     mod_timer() + del_timer() of the kernel's timer wheel,
 *                  one base per CPU
 *   twheel_anycpu  the move case only: as twheel, the timers set up with
 *                  TWHEEL_TIMER_ANY_CPU, which leaves a pending timer on
 *                  its base when it is re-armed (the start+cancel cases
 *                  arm idle timers, for which the flag changes nothing)
 *
 * The move case (@move_timers > 0, two online CPUs): what a re-arm of a
 * pending timer costs when it moves the timer to the caller's CPU, which
 * for twheel takes both bases' locks, one after the other (the timer in
 * transit in between).  Two threads on the first two online CPUs each arm a pool
 * of @move_timers timers; then, in each of @move_phases phases, thread t
 * re-arms (mod_timer(), twheel_timer_modify()) every timer of pool
 * (t + phase) % 2, which the other thread re-armed in the phase before
 * (mode "move": every re-arm moves a timer, in both directions at once),
 * or of its own pool t (mode "stay": none does).  A barrier ends each
 * phase, so that no timer is re-armed by both threads at once.  Modes
 * "move_one" and "stay_one" do the same one thread at a time: in phase p
 * only thread p % 2 re-arms, so no move waits for the other thread's.
 * mod_timer() moves a pending timer to the caller's CPU as well;
 * twheel_single has one base and moves nothing, but its timers' cache
 * lines travel the same way, and twheel_anycpu re-arms them on the other
 * CPU's base, where they are.  Each round runs both modes of each
 * implementation, the order changing from round to round.
 *
 * Output, one line per figure:
 *
 *	twheel_smpbench: csv,smp,<impl>,<n>,<op>,<value>
 *
 * with op pairs_per_s_t<T> (start+cancel pairs per second, all threads),
 * ns_per_pair_t<T> (one thread's median cost of a pair), for T > 1
 * scale_permille_t<T>, scale_min_permille_t<T> and scale_max_permille_t<T>
 * (the per-round scaling from one thread, in thousandths) and, for twheel,
 * contended_per_1k_pairs_t<T> (lock acquisitions of the pairs that found
 * the base's lock held by another CPU, per 1000 pairs: twheel's
 * contended counter over all repetitions); for the move case, with N the
 * pool size, ns_per_rearm_move_t2 and ns_per_rearm_stay_t2 (medians of
 * the mean cost of a re-arm), move_permille_t2, move_min_permille_t2 and
 * move_max_permille_t2 (per round, the move mode's cost over the stay
 * mode's) and, for twheel, migrated_per_1k_rearms_move_t2 and
 * contended_per_1k_rearms_move_t2, and the same with move_one and
 * stay_one in place of move and stay
 * (twheel's counters).  Runs from
 * module_init in the insmod task; loads, prints, then stays loaded
 * holding nothing until rmmod.  bench/smp.sh drives it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/twheel.h>

#include "bench_compat.h"
#include "bench_order.h"

static ulong ns[4] = { 1000, 1000000 };
static int ns_count = 2;
module_param_array(ns, ulong, &ns_count, 0444);
MODULE_PARM_DESC(ns, "Outstanding timer counts N");

static uint threads[4] = { 1, 2, 4 };
static int threads_count = 3;
module_param_array(threads, uint, &threads_count, 0444);
MODULE_PARM_DESC(threads, "Thread counts T (each <= online CPUs)");

static char *impls = "twheel,twheel_single,timer_list,twheel_anycpu";
module_param(impls, charp, 0444);
MODULE_PARM_DESC(impls, "Implementations: twheel,twheel_single,timer_list,twheel_anycpu");

static uint pairs = 100000;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "start+cancel pairs per thread and repetition");

static uint move_timers = 4096;
module_param(move_timers, uint, 0444);
MODULE_PARM_DESC(move_timers, "Timers per thread of the move case (0: none)");

static uint move_phases = 20;
module_param(move_phases, uint, 0444);
MODULE_PARM_DESC(move_phases, "Phases of the move case per repetition");

static uint reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "Rounds over all cases; medians and ranges are reported");

#define POOL		64
#define MAX_THREADS	16
#define MAX_REPS	15

enum impl { TWHEEL, TWHEEL_SINGLE, TIMER_LIST, TWHEEL_ANYCPU, NR_IMPLS };

static const char *const impl_names[NR_IMPLS] = {
	"twheel", "twheel_single", "timer_list", "twheel_anycpu",
};

/* A timer of either kind; the bench never lets one fire. */
union btimer {
	struct twheel_timer tw;
	struct timer_list tl;
};

struct bcase;

/**
 * struct bthread - one pinned thread of a case
 * @c:      the case
 * @cpu:    its CPU
 * @out:    its share of the outstanding timers
 * @nout:   how many
 * @pool:   its private timers for the start+cancel pairs
 * @ns:     time of its pairs (ns), per repetition
 */
struct bthread {
	struct bcase *c;
	unsigned int cpu;
	union btimer *out;
	unsigned long nout;
	union btimer pool[POOL];
	u64 ns[MAX_REPS];
};

/**
 * struct bcase - one (impl, N, T) case
 * @impl:   the implementation
 * @wheel:  its twheel instance (twheel impls)
 * @nthr:   threads
 * @nrep:   repetitions the threads run
 * @rep:    the repetition now
 * @ready:  threads at the barrier of this repetition
 * @go:     the repetition may start (its number + 1)
 * @left:   threads not done with the repetition
 * @done:   completed when @left reaches 0
 * @th:     the threads
 */
struct bcase {
	enum impl impl;
	struct twheel *wheel;
	unsigned int nthr;
	unsigned int nrep;
	unsigned int rep;
	atomic_t ready;
	atomic_t go;
	atomic_t left;
	struct completion done;
	struct bthread *th[MAX_THREADS];
};

static void bench_fn(struct twheel_timer *t)
{
	pr_err_ratelimited("a benchmark timer fired\n");
}

static void bench_tl_fn(struct timer_list *t)
{
	pr_err_ratelimited("a benchmark timer_list fired\n");
}

static void bt_setup(struct bcase *c, union btimer *b)
{
	if (c->impl == TIMER_LIST)
		timer_setup(&b->tl, bench_tl_fn, 0);
	else
		twheel_timer_setup(&b->tw, c->wheel, bench_fn,
				   c->impl == TWHEEL_ANYCPU ?
				   TWHEEL_TIMER_ANY_CPU : 0);
}

static void bt_start(struct bcase *c, union btimer *b, u64 ms)
{
	if (c->impl == TIMER_LIST)
		mod_timer(&b->tl, jiffies + msecs_to_jiffies(ms));
	else
		twheel_timer_start(&b->tw, ms * NSEC_PER_MSEC, 0, TWHEEL_MODE_REL);
}

/* Re-arm a pending timer: mod_timer(), twheel_timer_modify(). */
static void bt_modify(struct bcase *c, union btimer *b, u64 ms)
{
	if (c->impl == TIMER_LIST)
		mod_timer(&b->tl, jiffies + msecs_to_jiffies(ms));
	else
		twheel_timer_modify(&b->tw, ms * NSEC_PER_MSEC, 0,
				    TWHEEL_MODE_REL);
}

static void bt_cancel(struct bcase *c, union btimer *b)
{
	if (c->impl == TIMER_LIST)
		bench_timer_delete(&b->tl);
	else
		twheel_timer_cancel(&b->tw);
}

static void bt_cancel_sync(struct bcase *c, union btimer *b)
{
	if (c->impl == TIMER_LIST)
		bench_timer_delete_sync(&b->tl);
	else
		twheel_timer_cancel_sync(&b->tw);
}

static int bench_thread(void *data)
{
	struct bthread *t = data;
	struct bcase *c = t->c;
	struct rnd_state rs;
	unsigned long i;
	unsigned int r;

	prandom_seed_state(&rs, t->cpu + 1);
	for (i = 0; i < t->nout; i++) {
		bt_setup(c, &t->out[i]);
		bt_start(c, &t->out[i], 60000 + prandom_u32_state(&rs) % 60000);
		if (!(i % 1024))
			cond_resched();
	}
	for (i = 0; i < POOL; i++)
		bt_setup(c, &t->pool[i]);

	for (r = 0; r < c->nrep; r++) {
		ktime_t t0;

		/*
		 * barrier: every thread armed its share and is here.  Yield
		 * while waiting: without preemption, threads spinning on every
		 * CPU would keep the coordinator from ever releasing them.
		 */
		atomic_inc(&c->ready);
		while (atomic_read_acquire(&c->go) != r + 1)
			cond_resched();
		t0 = ktime_get();
		for (i = 0; i < pairs; i++) {
			union btimer *b = &t->pool[i % POOL];

			bt_start(c, b, 10000 + (prandom_u32_state(&rs) & 0xffff));
			bt_cancel(c, b);
		}
		t->ns[r] = ktime_get() - t0;
		if (atomic_dec_and_test(&c->left))
			complete(&c->done);
	}
	for (i = 0; i < t->nout; i++) {
		bt_cancel_sync(c, &t->out[i]);
		if (!(i % 1024))
			cond_resched();
	}
	for (i = 0; i < POOL; i++)
		bt_cancel_sync(c, &t->pool[i]);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return v[n / 2];
}

static void emit(enum impl impl, unsigned long n, const char *op,
		 unsigned int nthr, u64 value)
{
	pr_info("csv,smp,%s,%lu,%s_t%u,%llu\n", impl_names[impl], n, op, nthr,
		value);
}

/* The twheel instance @impl runs on; NULL for timer_list. */
static struct twheel *bench_wheel(enum impl impl)
{
	if (impl == TWHEEL || impl == TWHEEL_ANYCPU)
		return twheel_create(NSEC_PER_MSEC, TWHEEL_BITS_DEFAULT, 4096);
	if (impl == TWHEEL_SINGLE)
		return twheel_create_flags(NSEC_PER_MSEC, TWHEEL_BITS_DEFAULT,
					   4096, TWHEEL_ENGINE_HIER,
					   TWHEEL_CREATE_SINGLE_BASE);
	return NULL;
}

/* @tasks[@i]: a thread "@name/@i" of @fn(@arg) bound to @cpu, not woken. */
static int bench_thread_create(struct task_struct **tasks, unsigned int i,
			       int (*fn)(void *), void *arg, unsigned int cpu,
			       const char *name)
{
	struct task_struct *t = kthread_create(fn, arg, "%s/%u", name, i);

	if (IS_ERR(t))
		return PTR_ERR(t);
	kthread_bind(t, cpu);
	get_task_struct(t);
	tasks[i] = t;
	return 0;
}

/* Stop and release the threads of @tasks[0..@n) that were created. */
static void bench_threads_stop(struct task_struct **tasks, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (tasks[i]) {
			kthread_stop(tasks[i]);
			put_task_struct(tasks[i]);
		}
	}
}

/*
 * One (impl, N, T) case, @nrep repetitions: throughput per repetition in
 * @thr, one thread's mean ns per pair in @one, and the lock acquisitions
 * that waited (twheel) added to @contended.
 */
static int run_case(enum impl impl, unsigned long n, unsigned int nthr,
		    unsigned int nrep, u64 *thr, u64 *one, u64 *contended)
{
	struct task_struct *tasks[MAX_THREADS] = {};
	u64 cont0 = 0;
	struct twheel_stats st;
	struct bcase *c;
	unsigned int i, r, cpu;
	int ret = 0;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->impl = impl;
	c->nthr = nthr;
	c->nrep = nrep;
	init_completion(&c->done);
	c->wheel = bench_wheel(impl);
	if (IS_ERR(c->wheel)) {
		ret = PTR_ERR(c->wheel);
		kfree(c);
		return ret;
	}

	cpu = cpumask_first(cpu_online_mask);
	for (i = 0; i < nthr; i++, cpu = cpumask_next(cpu, cpu_online_mask)) {
		struct bthread *t = kvzalloc(sizeof(*t), GFP_KERNEL);

		if (!t) {
			ret = -ENOMEM;
			break;
		}
		c->th[i] = t;
		t->c = c;
		t->cpu = cpu;
		t->nout = n / nthr;
		t->out = vzalloc(array_size(t->nout ?: 1, sizeof(*t->out)));
		if (!t->out) {
			ret = -ENOMEM;
			break;
		}
	}
	for (i = 0; !ret && i < nthr; i++)
		ret = bench_thread_create(tasks, i, bench_thread, c->th[i],
					  c->th[i]->cpu, "twsmp");
	if (ret) {
		/* Threads created are not woken: stop them before they run. */
		bench_threads_stop(tasks, nthr);
		goto out;
	}
	for (i = 0; i < nthr; i++)
		wake_up_process(tasks[i]);

	for (r = 0; r < nrep; r++) {
		u64 longest = 0, sum = 0;

		while (atomic_read(&c->ready) != (r + 1) * nthr)
			schedule_timeout_uninterruptible(1);
		/* the pairs' lock waits: from the first barrier on */
		if (!r && c->wheel) {
			twheel_get_stats(c->wheel, &st);
			cont0 = st.contended;
		}
		reinit_completion(&c->done);
		atomic_set(&c->left, nthr);
		atomic_set_release(&c->go, r + 1);
		wait_for_completion(&c->done);
		for (i = 0; i < nthr; i++) {
			longest = max(longest, c->th[i]->ns[r]);
			sum += c->th[i]->ns[r];
		}
		thr[r] = div64_u64((u64)nthr * pairs * NSEC_PER_SEC, longest ?: 1);
		one[r] = div64_u64(sum, (u64)nthr * pairs);
	}
	/* before the threads' teardown cancels count too */
	if (c->wheel) {
		twheel_get_stats(c->wheel, &st);
		*contended += st.contended - cont0;
	}
	bench_threads_stop(tasks, nthr);
out:
	for (i = 0; i < nthr; i++) {
		if (!c->th[i])
			continue;
		vfree(c->th[i]->out);
		kvfree(c->th[i]);
	}
	if (c->wheel && twheel_destroy(c->wheel))
		ret = -EBUSY;
	kfree(c);
	return ret;
}

/* Is @name one of the comma-separated names of @impls? */
static bool impl_selected(const char *name)
{
	size_t len = strlen(name);
	const char *p = impls;

	while (p && *p) {
		if (!strncmp(p, name, len) && (p[len] == ',' || !p[len]))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* Results of one N: per implementation and thread-count index, per round. */
static u64 res_thr[NR_IMPLS][4][MAX_REPS], res_one[NR_IMPLS][4][MAX_REPS];
static u64 res_cont[NR_IMPLS][4];

static bool thread_count_ok(unsigned int t)
{
	return t && t <= num_online_cpus() && t <= MAX_THREADS;
}

/* The medians, and the per-round scaling over the one-thread case. */
static void emit_n(enum impl impl, unsigned long n)
{
	u64 v[MAX_REPS];
	int b, one = -1;
	unsigned int r;

	for (b = 0; b < threads_count; b++)
		if (threads[b] == 1)
			one = b;
	for (b = 0; b < threads_count; b++) {
		if (!thread_count_ok(threads[b]))
			continue;
		memcpy(v, res_thr[impl][b], sizeof(v));
		emit(impl, n, "pairs_per_s", threads[b], median(v, reps));
		memcpy(v, res_one[impl][b], sizeof(v));
		emit(impl, n, "ns_per_pair", threads[b], median(v, reps));
		/* lock acquisitions that waited, per 1000 start+cancel pairs */
		if (impl != TIMER_LIST)
			emit(impl, n, "contended_per_1k_pairs", threads[b],
			     div64_u64(res_cont[impl][b] * 1000,
				       (u64)reps * threads[b] * pairs));
		if (one < 0 || threads[b] == 1)
			continue;
		for (r = 0; r < reps; r++)
			v[r] = div64_u64(res_thr[impl][b][r] * 1000,
					 res_thr[impl][one][r] ?: 1);
		emit(impl, n, "scale_permille", threads[b], median(v, reps));
		emit(impl, n, "scale_min_permille", threads[b], v[0]);
		emit(impl, n, "scale_max_permille", threads[b], v[reps - 1]);
	}
}

struct mcase;

/**
 * struct mthread - one of the move case's two threads
 * @m:   the case
 * @t:   its index, 0 or 1
 * @cpu: its CPU
 * @ns:  time of its re-arms in the timed phases (ns)
 */
struct mthread {
	struct mcase *m;
	unsigned int t;
	unsigned int cpu;
	u64 ns;
};

/**
 * struct mcase - one (impl, mode) run of the move case
 * @c:       the implementation and its twheel instance (only @impl and
 *           @wheel of it are used)
 * @move:    mode "move" (true) or "stay"
 * @one:     one thread at a time: in phase p only thread p % 2 re-arms
 * @pool:    the two pools of @move_timers timers
 * @arrived: threads that finished a phase, over all phases
 * @phase:   the last phase every thread finished
 * @th:      the threads
 */
struct mcase {
	struct bcase c;
	bool move;
	bool one;
	union btimer *pool[2];
	atomic_t arrived;
	atomic_t phase;
	struct mthread th[2];
};

/*
 * Wait until both threads are done with phase @p (the setup is phase 0).
 * The coordinator, run_move(), ends the setup and the last phase itself,
 * after it read twheel's counters, so that they cover the timed phases.
 */
static void move_barrier(struct mcase *m, unsigned int p)
{
	if (atomic_inc_return(&m->arrived) == 2 * (p + 1) && p &&
	    p < move_phases)
		atomic_set_release(&m->phase, p);
	/* yield, as bench_thread() does: see there */
	while (atomic_read_acquire(&m->phase) != p)
		cond_resched();
}

static int move_thread(void *data)
{
	struct mthread *mt = data;
	struct mcase *m = mt->m;
	union btimer *own = m->pool[mt->t];
	struct rnd_state rs;
	unsigned int i, p;

	prandom_seed_state(&rs, mt->t + 1);
	for (i = 0; i < move_timers; i++) {
		bt_setup(&m->c, &own[i]);
		bt_start(&m->c, &own[i], 60000 + prandom_u32_state(&rs) % 60000);
	}
	move_barrier(m, 0);
	for (p = 1; p <= move_phases; p++) {
		union btimer *pool = m->pool[m->move ? (mt->t + p) % 2 : mt->t];
		ktime_t t0 = ktime_get();

		for (i = 0; i < move_timers && (!m->one || p % 2 == mt->t); i++)
			bt_modify(&m->c, &pool[i],
				  10000 + (prandom_u32_state(&rs) & 0xffff));
		mt->ns += ktime_get() - t0;
		move_barrier(m, p);
	}
	/* after the last barrier each thread alone cancels its own pool */
	for (i = 0; i < move_timers; i++)
		bt_cancel_sync(&m->c, &own[i]);
	return 0;
}

/*
 * One run of the move case: the mean ns per re-arm in @ns, twheel's
 * migrations and lock waits during the timed phases added to @migrated
 * and @contended.
 */
static int run_move(enum impl impl, bool move, bool one, u64 *ns,
		    u64 *migrated, u64 *contended)
{
	struct task_struct *tasks[2] = {};
	struct twheel_stats st0 = {}, st = {};
	struct mcase *m;
	unsigned int i, cpu;
	int ret = 0;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->c.impl = impl;
	m->move = move;
	m->one = one;
	atomic_set(&m->phase, -1);
	m->c.wheel = bench_wheel(impl);
	if (IS_ERR(m->c.wheel)) {
		ret = PTR_ERR(m->c.wheel);
		kfree(m);
		return ret;
	}
	cpu = cpumask_first(cpu_online_mask);
	for (i = 0; i < 2; i++, cpu = cpumask_next(cpu, cpu_online_mask)) {
		m->th[i].m = m;
		m->th[i].t = i;
		m->th[i].cpu = cpu;
		m->pool[i] = vzalloc(array_size(move_timers, sizeof(union btimer)));
		if (!m->pool[i])
			ret = -ENOMEM;
	}
	for (i = 0; !ret && i < 2; i++)
		ret = bench_thread_create(tasks, i, move_thread, &m->th[i],
					  m->th[i].cpu, "twmove");
	if (ret) {
		/* Threads created are not woken: stop them before they run. */
		bench_threads_stop(tasks, 2);
		goto out;
	}
	for (i = 0; i < 2; i++)
		wake_up_process(tasks[i]);
	/* the counters from the end of the setup to the end of the phases */
	while (atomic_read_acquire(&m->arrived) < 2)
		schedule_timeout_uninterruptible(1);
	if (m->c.wheel)
		twheel_get_stats(m->c.wheel, &st0);
	atomic_set_release(&m->phase, 0);
	while (atomic_read_acquire(&m->arrived) < 2 * (move_phases + 1))
		schedule_timeout_uninterruptible(1);
	if (m->c.wheel)
		twheel_get_stats(m->c.wheel, &st);
	atomic_set_release(&m->phase, move_phases);
	*migrated += st.migrated - st0.migrated;
	*contended += st.contended - st0.contended;
	bench_threads_stop(tasks, 2);
	*ns = div64_u64(m->th[0].ns + m->th[1].ns,
			(one ? 1ULL : 2ULL) * move_phases * move_timers);
out:
	for (i = 0; i < 2; i++)
		vfree(m->pool[i]);
	if (m->c.wheel && twheel_destroy(m->c.wheel))
		ret = -EBUSY;
	kfree(m);
	return ret;
}

/* Modes of the move case: move or stay, both threads or one at a time. */
enum { MV_STAY, MV_MOVE, MV_STAY_ONE, MV_MOVE_ONE, MV_NR };

static const char *const mv_names[MV_NR] = {
	"stay", "move", "stay_one", "move_one",
};

/* The figures of one pair of modes: move and stay, both or one. */
static void emit_moves(enum impl impl, u64 ns[MV_NR][MAX_REPS],
		       unsigned int move, u64 migrated, u64 contended)
{
	u64 rearms = (u64)reps * move_phases * move_timers, v[MAX_REPS];
	unsigned int stay = move - 1, r;
	char op[48];

	if (move == MV_MOVE)
		rearms *= 2;
	memcpy(v, ns[move], sizeof(v));
	snprintf(op, sizeof(op), "ns_per_rearm_%s", mv_names[move]);
	emit(impl, move_timers, op, 2, median(v, reps));
	memcpy(v, ns[stay], sizeof(v));
	snprintf(op, sizeof(op), "ns_per_rearm_%s", mv_names[stay]);
	emit(impl, move_timers, op, 2, median(v, reps));
	for (r = 0; r < reps; r++)
		v[r] = div64_u64(ns[move][r] * 1000, ns[stay][r] ?: 1);
	snprintf(op, sizeof(op), "%s_permille", mv_names[move]);
	emit(impl, move_timers, op, 2, median(v, reps));
	snprintf(op, sizeof(op), "%s_min_permille", mv_names[move]);
	emit(impl, move_timers, op, 2, v[0]);
	snprintf(op, sizeof(op), "%s_max_permille", mv_names[move]);
	emit(impl, move_timers, op, 2, v[reps - 1]);
	if (impl == TIMER_LIST)
		return;
	snprintf(op, sizeof(op), "migrated_per_1k_rearms_%s", mv_names[move]);
	emit(impl, move_timers, op, 2, div64_u64(migrated * 1000, rearms));
	snprintf(op, sizeof(op), "contended_per_1k_rearms_%s", mv_names[move]);
	emit(impl, move_timers, op, 2, div64_u64(contended * 1000, rearms));
}

/* The move case, @reps rounds, and its figures. */
static int run_moves(void)
{
	static u64 ns[NR_IMPLS][MV_NR][MAX_REPS];
	u64 migrated[NR_IMPLS][MV_NR] = {}, contended[NR_IMPLS][MV_NR] = {};
	unsigned int r, k, j, mv;
	enum impl impl;
	int ret;

	if (!move_timers || !move_phases)
		return 0;
	if (num_online_cpus() < 2) {
		pr_info("move case: needs two online CPUs, skipped\n");
		return 0;
	}
	for (r = 0; r < reps; r++) {
		for (k = 0; k < NR_IMPLS; k++) {
			impl = rep_order(r, k, NR_IMPLS);
			if (!impl_selected(impl_names[impl]))
				continue;
			/* the modes in an order that changes every round */
			for (j = 0; j < MV_NR; j++) {
				mv = rep_order(r, j, MV_NR);
				ret = run_move(impl, mv & 1, mv >= MV_STAY_ONE,
					       &ns[impl][mv][r],
					       &migrated[impl][mv],
					       &contended[impl][mv]);
				if (ret) {
					pr_err("%s %s: %d\n", impl_names[impl],
					       mv_names[mv], ret);
					return ret;
				}
			}
		}
	}
	for (impl = 0; impl < NR_IMPLS; impl++) {
		if (!impl_selected(impl_names[impl]))
			continue;
		emit_moves(impl, ns[impl], MV_MOVE, migrated[impl][MV_MOVE],
			   contended[impl][MV_MOVE]);
		emit_moves(impl, ns[impl], MV_MOVE_ONE,
			   migrated[impl][MV_MOVE_ONE],
			   contended[impl][MV_MOVE_ONE]);
	}
	return 0;
}

static int __init twheel_smpbench_init(void)
{
	unsigned int online = num_online_cpus(), r, k;
	enum impl impl;
	int a, b, ret;

	if (!reps || reps > MAX_REPS || !pairs)
		return -EINVAL;
	pr_info("%u online CPUs, %u pairs per thread, %u rounds\n",
		online, pairs, reps);
	for (a = 0; a < ns_count; a++) {
		memset(res_cont, 0, sizeof(res_cont));
		for (r = 0; r < reps; r++) {
			for (k = 0; k < NR_IMPLS; k++) {
				impl = rep_order(r, k, NR_IMPLS);
				if (impl == TWHEEL_ANYCPU ||
				    !impl_selected(impl_names[impl]))
					continue;
				for (b = 0; b < threads_count; b++) {
					if (!thread_count_ok(threads[b]))
						continue;
					ret = run_case(impl, ns[a], threads[b], 1,
						       &res_thr[impl][b][r],
						       &res_one[impl][b][r],
						       &res_cont[impl][b]);
					if (ret) {
						pr_err("%s n=%lu t=%u: %d\n",
						       impl_names[impl], ns[a],
						       threads[b], ret);
						return ret;
					}
				}
			}
		}
		for (impl = 0; impl < NR_IMPLS; impl++)
			if (impl != TWHEEL_ANYCPU &&
			    impl_selected(impl_names[impl]))
				emit_n(impl, ns[a]);
	}
	ret = run_moves();
	if (ret)
		return ret;
	pr_info("done\n");
	return 0;
}

static void __exit twheel_smpbench_exit(void)
{
}

module_init(twheel_smpbench_init);
module_exit(twheel_smpbench_exit);

MODULE_DESCRIPTION("twheel: start+cancel scaling over CPUs, and moves between bases, against timer_list");
MODULE_LICENSE("GPL");
