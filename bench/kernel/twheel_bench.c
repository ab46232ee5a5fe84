// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_bench - in-kernel benchmark of twheel against timer_list, hrtimer
 * and a sorted list (Varghese & Lauck's Scheme 2, the old BSD callout).
 *
 * Everything runs from module_init, in the insmod task pinned to one CPU;
 * the module then stays loaded, holding nothing, until rmmod.  Results are
 * printed as
 *
 *	twheel_bench: csv,<suite>,<impl>,<n>,<op>,<value>
 *
 * and bench/run.sh turns them into build/bench/results.csv.  The method is
 * described in Documentation/benchmarks.rst; in short:
 *
 * prims     costs of building blocks in this VM: div_u64, ktime_get,
 *           a spin_lock_irqsave/unlock pair, hlist add+del, and the two
 *           per-timer costs of /dev/twheel's arm+cancel: a zeroed
 *           allocation and free from a SLAB_ACCOUNT cache of its timer size,
 *           and an xa_alloc_cyclic()+xa_erase() pair.
 * ops       N timers outstanding, expiries uniform in [min_ms, max_ms]
 *           after a base instant settle_ms in the future (so that none
 *           fires during the case; early fires are counted and reported).
 *           Each repetition times, with bottom halves disabled, a batch of
 *           @batch starts of extra timers, their cancels (random order),
 *           @batch start+cancel pairs and @batch modifies of random
 *           outstanding timers.  ns per op = batch time / batch, median
 *           over @reps repetitions.
 * fire      N timers all due at the same instant T, armed on one CPU while
 *           the benchmark waits on the other.  fire = (last callback -
 *           instant the implementation is due to start expiring) / N,
 *           i.e. the busy period the expiry path needs per timer,
 *           wakeup included; fire_busy = (last - first callback) / (N-1).
 * setcancel Costello & Varghese's figure: time of @sc_pairs set/cancel
 *           pairs with N timers outstanding.
 * tick      N timers an hour out on a private wheel: hrtimer wakeups/s,
 *           longest slot walked, and the time spent in the wheel's tick
 *           handler (a kretprobe on twheel_tick, when it can be placed).
 * wakeups   wakeups/s of an empty private wheel and of one holding a
 *           single timer 10 s out (twheel_get_stats()).
 * mixed     a Ratas-style mix of short, long and medium timers driven for
 *           @mix_ms, with and without slack: ops/s.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <linux/twheel.h>

#include "bench_compat.h"

/* ---- parameters ------------------------------------------------------------ */

static char *suites = "prims,ops,fire,setcancel,tick,wakeups,mixed";
module_param(suites, charp, 0444);
MODULE_PARM_DESC(suites, "Comma-separated suites: prims,ops,fire,setcancel,tick,wakeups,mixed");

static char *impls = "twheel,timer_list,hrtimer,sorted";
module_param(impls, charp, 0444);
MODULE_PARM_DESC(impls, "Implementations to measure: twheel,timer_list,hrtimer,sorted");

static ulong ns[8] = { 1000, 10000, 100000, 1000000 };
static int ns_count = 4;
module_param_array(ns, ulong, &ns_count, 0444);
MODULE_PARM_DESC(ns, "Outstanding timer counts N (ops, fire, tick)");

static uint reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "Repetitions per measurement; the median is reported");

static uint batch = 1000;
module_param(batch, uint, 0444);
MODULE_PARM_DESC(batch, "Operations per timed batch (ops suite)");

static uint min_ms = 1000;
module_param(min_ms, uint, 0444);
static uint max_ms = 60000;
module_param(max_ms, uint, 0444);
MODULE_PARM_DESC(max_ms, "Expiries are uniform in [min_ms, max_ms] after the base instant");

static uint settle_ms = 60000;
module_param(settle_ms, uint, 0444);
MODULE_PARM_DESC(settle_ms, "Base instant of the expiries, ms after a case starts");

static ulong sorted_max = 10000;
module_param(sorted_max, ulong, 0444);
MODULE_PARM_DESC(sorted_max, "Largest N for the sorted-list baseline");

static ulong fire_max = 1000000;
module_param(fire_max, ulong, 0444);
MODULE_PARM_DESC(fire_max, "Largest N for the fire suite");

static ulong sc_ns[12] = { 0, 500, 1000, 2000, 3000, 5000, 7500, 10000 };
static int sc_ns_count = 8;
module_param_array(sc_ns, ulong, &sc_ns_count, 0444);
MODULE_PARM_DESC(sc_ns, "Outstanding timer counts of the set/cancel figure");

static uint sc_pairs = 10000;
module_param(sc_pairs, uint, 0444);
MODULE_PARM_DESC(sc_pairs, "Set/cancel pairs timed per point of the figure");

static ulong tw_tick_ns = 1000000;
module_param(tw_tick_ns, ulong, 0444);
static uint tw_bits = 12;
module_param(tw_bits, uint, 0444);
static uint tw_budget = 4096;
module_param(tw_budget, uint, 0444);
MODULE_PARM_DESC(tw_budget, "Tick, log2 slots and budget of the private wheels");

static uint tick_ms = 2000;
module_param(tick_ms, uint, 0444);
MODULE_PARM_DESC(tick_ms, "Measuring interval of the tick suite");

static uint wake_ms = 8000;
module_param(wake_ms, uint, 0444);
MODULE_PARM_DESC(wake_ms, "Measuring interval of the wakeups suite (< 10 s)");

static uint mix_n = 10000;
module_param(mix_n, uint, 0444);
static uint mix_ms = 2000;
module_param(mix_ms, uint, 0444);
static uint mix_slack_pct = 12;
module_param(mix_slack_pct, uint, 0444);
MODULE_PARM_DESC(mix_slack_pct, "Mixed suite: timers, duration, slack as % of the delay");

static char *mix_variants = "plain,slack";
module_param(mix_variants, charp, 0444);
MODULE_PARM_DESC(mix_variants, "Mixed suite: run without slack (plain), with slack (slack) or both");

static ulong seed = 12345;
module_param(seed, ulong, 0444);

static int bench_cpu = -1;
module_param(bench_cpu, int, 0444);
MODULE_PARM_DESC(bench_cpu, "CPU the benchmark arms timers on (-1: the last online CPU)");

/* ---- output, random numbers, statistics ------------------------------------ */

static bool quiet;

static void emit(const char *suite, const char *impl, unsigned long n,
		 const char *op, u64 milli)
{
	if (quiet)
		return;
	pr_info("csv,%s,%s,%lu,%s,%llu.%03llu\n", suite, impl, n, op,
		milli / 1000, milli % 1000);
}

/* milli-units of @num / @den */
static u64 per(u64 num, u64 den)
{
	return den ? mul_u64_u64_div_u64(num, 1000, den) : 0;
}

/* milli-units of @num per second of @el_ns */
static u64 rate(u64 num, u64 el_ns)
{
	return el_ns ? mul_u64_u64_div_u64(num, 1000ULL * NSEC_PER_SEC, el_ns) : 0;
}

static u64 rng_state;

static u64 rnd(void)
{
	/* xorshift64*: deterministic for a given seed */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static u32 rnd_range(u32 lo, u32 hi)
{
	return lo + (u32)((rnd() >> 32) % ((u64)hi - lo + 1));
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	if (!n)
		return 0;
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

/* ---- the implementations under test ---------------------------------------- */

enum impl_id { IMPL_TWHEEL, IMPL_TL, IMPL_HR, IMPL_SL, IMPL_NR };
static const char *const impl_name[IMPL_NR] = {
	"twheel", "timer_list", "hrtimer", "sorted"
};

/* Scheme 2: one list sorted by expiry, insertion scans from the head. */
struct sl_timer {
	struct list_head node;
	u64 expires;
};

static DEFINE_SPINLOCK(sl_lock);
static LIST_HEAD(sl_head);

static void sl_arm(struct sl_timer *t, u64 expires)
{
	struct sl_timer *pos;
	unsigned long flags;

	spin_lock_irqsave(&sl_lock, flags);
	if (!list_empty(&t->node))
		list_del(&t->node);
	t->expires = expires;
	list_for_each_entry(pos, &sl_head, node)
		if (pos->expires > expires)
			break;
	list_add_tail(&t->node, &pos->node);	/* before @pos */
	spin_unlock_irqrestore(&sl_lock, flags);
}

static void sl_cancel(struct sl_timer *t)
{
	unsigned long flags;

	spin_lock_irqsave(&sl_lock, flags);
	list_del_init(&t->node);
	spin_unlock_irqrestore(&sl_lock, flags);
}

/*
 * One element per timer, the same 64-byte stride for every
 * implementation so that none gets a cache or TLB advantage.
 */
union btimer {
	struct twheel_timer tw;
	struct timer_list tl;
	struct hrtimer hr;
	struct sl_timer sl;
};

/* What the callbacks do. */
enum cb_mode { CB_COUNT, CB_FIRE, CB_MIX };
static enum cb_mode cb_mode;
static atomic_long_t cb_count;		/* CB_COUNT, CB_FIRE, CB_MIX */
static unsigned long fire_target;
static u64 fire_first, fire_last;
static union btimer *cur_arr;		/* CB_MIX: index -> class */
static void mix_fired(union btimer *t);

static void on_fire(union btimer *t)
{
	long c = atomic_long_inc_return(&cb_count);

	switch (cb_mode) {
	case CB_COUNT:
		break;
	case CB_FIRE:
		if (c == 1)
			fire_first = ktime_get_ns();
		if (c == fire_target)
			fire_last = ktime_get_ns();
		break;
	case CB_MIX:
		mix_fired(t);
		break;
	}
}

static void cb_tw(struct twheel_timer *t)
{
	on_fire(container_of(t, union btimer, tw));
}

static void cb_tl(struct timer_list *t)
{
	on_fire(container_of(t, union btimer, tl));
}

static enum hrtimer_restart cb_hr(struct hrtimer *t)
{
	on_fire(container_of(t, union btimer, hr));
	return HRTIMER_NORESTART;
}

static struct twheel *cur_wheel;	/* the private wheel of a case */
static u64 base_ns;			/* expiry base: ktime (ns) ... */
static unsigned long base_j;		/* ... and the same instant in jiffies */
static bool pinned;			/* fire suite: pin timers to the CPU */

static void b_setup(int impl, union btimer *t)
{
	switch (impl) {
	case IMPL_TWHEEL:
		twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
		break;
	case IMPL_TL:
		timer_setup(&t->tl, cb_tl, pinned ? TIMER_PINNED : 0);
		break;
	case IMPL_HR:
		bench_hrtimer_setup(&t->hr, cb_hr, pinned ? HRTIMER_MODE_ABS_PINNED :
							   HRTIMER_MODE_ABS);
		break;
	case IMPL_SL:
		INIT_LIST_HEAD(&t->sl.node);
		break;
	}
}

/* Arm (or re-arm, @modify) to expire @off_ms after the base instant. */
static __always_inline void b_arm(int impl, union btimer *t, u32 off_ms,
				  u64 slack_ns, bool modify)
{
	u64 exp = base_ns + (u64)off_ms * NSEC_PER_MSEC;

	switch (impl) {
	case IMPL_TWHEEL:
		if (modify)
			twheel_timer_modify(&t->tw, exp, slack_ns, TWHEEL_MODE_ABS);
		else
			twheel_timer_start(&t->tw, exp, slack_ns, TWHEEL_MODE_ABS);
		break;
	case IMPL_TL:
		mod_timer(&t->tl, base_j + msecs_to_jiffies(off_ms));
		break;
	case IMPL_HR:
		hrtimer_start_range_ns(&t->hr, ns_to_ktime(exp), slack_ns,
				       pinned ? HRTIMER_MODE_ABS_PINNED :
						HRTIMER_MODE_ABS);
		break;
	case IMPL_SL:
		sl_arm(&t->sl, exp);
		break;
	}
}

static __always_inline void b_cancel(int impl, union btimer *t)
{
	switch (impl) {
	case IMPL_TWHEEL:
		twheel_timer_cancel(&t->tw);
		break;
	case IMPL_TL:
		bench_timer_delete(&t->tl);
		break;
	case IMPL_HR:
		hrtimer_cancel(&t->hr);
		break;
	case IMPL_SL:
		sl_cancel(&t->sl);
		break;
	}
}

/* Stop for good: no callback runs or will run after this. */
static void b_shutdown(int impl, union btimer *t)
{
	switch (impl) {
	case IMPL_TWHEEL:
		twheel_timer_shutdown_sync(&t->tw);
		break;
	case IMPL_TL:
		bench_timer_delete_sync(&t->tl);
		break;
	case IMPL_HR:
		hrtimer_cancel(&t->hr);
		break;
	case IMPL_SL:
		sl_cancel(&t->sl);
		break;
	}
}

static bool b_pending(int impl, union btimer *t)
{
	switch (impl) {
	case IMPL_TWHEEL:
		return twheel_timer_pending(&t->tw);
	case IMPL_TL:
		return timer_pending(&t->tl);
	case IMPL_HR:
		return hrtimer_is_queued(&t->hr);
	default:
		return !list_empty(&t->sl.node);
	}
}

/* A private wheel for a case that runs on twheel. */
static int wheel_get(void)
{
	cur_wheel = twheel_create(tw_tick_ns, tw_bits, tw_budget);
	if (IS_ERR(cur_wheel)) {
		int ret = PTR_ERR(cur_wheel);

		cur_wheel = NULL;
		pr_err("twheel_create(%lu, %u, %u) failed: %d\n", tw_tick_ns,
		       tw_bits, tw_budget, ret);
		return ret;
	}
	return 0;
}

static void wheel_put(void)
{
	twheel_destroy(cur_wheel);
	cur_wheel = NULL;
}

static void set_base(u64 delay_ms)
{
	unsigned long j = jiffies;

	base_ns = ktime_get_ns() + delay_ms * NSEC_PER_MSEC;
	base_j = j + msecs_to_jiffies(delay_ms);
}

/* Timed sections run with bottom halves off: no timer softirq between ops. */
static u64 t_begin(void)
{
	local_bh_disable();
	return ktime_get_ns();
}

static u64 t_end(u64 t0)
{
	u64 d = ktime_get_ns() - t0;

	local_bh_enable();
	return d;
}

/* Keep chunks of work with bottom halves off short. */
#define CHUNK 1000

/* ---- suite: ops --------------------------------------------------------------- */

/*
 * The implementations of one case are populated side by side and each
 * repetition runs all of them in turn, in an order rotated from one
 * repetition to the next: a slow spell of the (shared, noisy) host hits
 * every implementation of a repetition alike instead of one whole case.
 */

/* Populate times (ns per timer) by impl and N index, for the fire suite. */
static u64 populate_ns[IMPL_NR][ARRAY_SIZE(ns)];

/* One implementation's timers in a case. */
struct side {
	bool on;
	union btimer *arr;
	u64 *res;
};

static void sides_free(struct side *sd)
{
	int i;

	if (sd[IMPL_TWHEEL].on && cur_wheel)
		wheel_put();
	for (i = 0; i < IMPL_NR; i++) {
		vfree(sd[i].arr);
		kfree(sd[i].res);
	}
	memset(sd, 0, IMPL_NR * sizeof(*sd));
}

static int sides_alloc(struct side *sd, const bool *want,
		       unsigned long total, unsigned int nres)
{
	int i;

	memset(sd, 0, IMPL_NR * sizeof(*sd));
	for (i = 0; i < IMPL_NR; i++) {
		if (!want[i])
			continue;
		sd[i].arr = vzalloc(array_size(total, sizeof(union btimer)));
		sd[i].res = kcalloc(nres, sizeof(u64), GFP_KERNEL);
		if (!sd[i].arr || !sd[i].res) {
			sides_free(sd);
			return -ENOMEM;
		}
		sd[i].on = true;
	}
	if (sd[IMPL_TWHEEL].on && wheel_get()) {
		sd[IMPL_TWHEEL].on = false;
		sides_free(sd);
		return -ENOMEM;
	}
	return 0;
}

/* Arm timers [0, n) at their offsets; returns ns per timer. */
static u64 populate(int impl, union btimer *arr, const u32 *off, unsigned long n)
{
	unsigned long i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < n; i++) {
		b_arm(impl, &arr[i], off[i], 0, false);
		if ((i & 255) == 255)
			cond_resched();
	}
	return n ? div64_u64(ktime_get_ns() - t0, n) : 0;
}

static void teardown(int impl, union btimer *arr, unsigned long total)
{
	unsigned long i;

	for (i = 0; i < total; i++) {
		b_shutdown(impl, &arr[i]);
		if ((i & 255) == 255)
			cond_resched();
	}
}

static void shuffle(u32 *v, unsigned int n)
{
	unsigned int i;

	for (i = n; i > 1; i--) {
		unsigned int j = (rnd() >> 33) % i;

		swap(v[i - 1], v[j]);
	}
}

/* Median of column @col of @rows rows of @cols results. */
static u64 col_median(const u64 *res, unsigned int rows, unsigned int cols,
		      unsigned int col)
{
	u64 v[64];
	unsigned int r;

	for (r = 0; r < rows && r < ARRAY_SIZE(v); r++)
		v[r] = res[r * cols + col];
	return median(v, r);
}

enum { OP_START, OP_CANCEL, OP_PAIR, OP_MODIFY, OP_NR };

/* One repetition of the ops suite on one implementation. */
static void ops_rep(int impl, union btimer *arr, unsigned long n, unsigned int b,
		    const u32 *off2, const u32 *perm, const u32 *idx, u64 *res)
{
	unsigned int j;
	u64 t0;

	/* start: @b extra timers */
	t0 = t_begin();
	for (j = 0; j < b; j++)
		b_arm(impl, &arr[n + j], off2[j], 0, false);
	res[OP_START] = t_end(t0);
	/* cancel them, in random order */
	t0 = t_begin();
	for (j = 0; j < b; j++)
		b_cancel(impl, &arr[perm[j]]);
	res[OP_CANCEL] = t_end(t0);
	/* start + cancel pairs */
	t0 = t_begin();
	for (j = 0; j < b; j++) {
		b_arm(impl, &arr[n + j], off2[j], 0, false);
		b_cancel(impl, &arr[n + j]);
	}
	res[OP_PAIR] = t_end(t0);
	/* modify @b random outstanding timers to new random expiries */
	if (n) {
		t0 = t_begin();
		for (j = 0; j < b; j++)
			b_arm(impl, &arr[idx[j]], off2[j], 0, true);
		res[OP_MODIFY] = t_end(t0);
	}
}

static void ops_n(const bool *want_in, unsigned long n, int nidx)
{
	static const char *const opname[OP_NR] = {
		"start", "cancel", "start_cancel", "modify"
	};
	unsigned int b = batch, r, j, k;
	unsigned long total = n + b, i;
	struct side sd[IMPL_NR];
	bool want[IMPL_NR];
	u32 *off, *off2, *idx, *perm;
	int impl;
	long early;

	for (i = 0; i < IMPL_NR; i++)
		want[i] = want_in[i] && (i != IMPL_SL || n <= sorted_max);
	off = vmalloc(array_size(total, sizeof(u32)));
	off2 = vmalloc(array_size(b, sizeof(u32)));
	idx = vmalloc(array_size(b, sizeof(u32)));
	perm = vmalloc(array_size(b, sizeof(u32)));
	if (!off || !off2 || !idx || !perm ||
	    sides_alloc(sd, want, total, OP_NR * reps)) {
		pr_err("ops n=%lu: out of memory\n", n);
		goto out;
	}
	cb_mode = CB_COUNT;
	atomic_long_set(&cb_count, 0);
	for (i = 0; i < total; i++)
		off[i] = rnd_range(min_ms, max_ms);
	for (impl = 0; impl < IMPL_NR; impl++)
		for (i = 0; sd[impl].on && i < total; i++)
			b_setup(impl, &sd[impl].arr[i]);
	set_base(settle_ms);
	for (impl = 0; impl < IMPL_NR; impl++)
		if (sd[impl].on)
			populate_ns[impl][nidx] = populate(impl, sd[impl].arr, off, n);

	for (r = 0; r < reps; r++) {
		for (j = 0; j < b; j++) {
			off2[j] = rnd_range(min_ms, max_ms);
			perm[j] = n + j;
			idx[j] = n ? (rnd() >> 32) % n : 0;
		}
		shuffle(perm, b);
		for (k = 0; k < IMPL_NR; k++) {
			impl = (r + k) % IMPL_NR;
			if (sd[impl].on)
				ops_rep(impl, sd[impl].arr, n, b, off2, perm, idx,
					sd[impl].res + r * OP_NR);
			cond_resched();
		}
	}
	early = atomic_long_read(&cb_count);
	for (impl = 0; impl < IMPL_NR; impl++) {
		if (!sd[impl].on)
			continue;
		teardown(impl, sd[impl].arr, total);
		for (k = 0; k < OP_NR; k++)
			if (k != OP_MODIFY || n)
				emit("ops", impl_name[impl], n, opname[k],
				     per(col_median(sd[impl].res, reps, OP_NR, k), b));
		emit("ops", impl_name[impl], n, "populate",
		     populate_ns[impl][nidx] * 1000);
	}
	if (early) {
		pr_info("note: ops n=%lu: %ld timers fired during the case (raise settle_ms)\n",
			n, early);
		emit("ops", "all", n, "early_fires", early * 1000);
	}
	sides_free(sd);
out:
	vfree(off);
	vfree(off2);
	vfree(idx);
	vfree(perm);
}

/* ---- suite: setcancel (Costello & Varghese's figure) ------------------------- */

static void setcancel_n(const bool *want, unsigned long n)
{
	struct side sd[IMPL_NR];
	unsigned int r, j, k, done;
	u32 *off, *off2;
	unsigned long i;
	int impl;

	off = vmalloc(array_size(n + 1, sizeof(u32)));
	off2 = vmalloc(array_size(CHUNK, sizeof(u32)));
	if (!off || !off2 || sides_alloc(sd, want, n + 1, reps)) {
		pr_err("setcancel n=%lu: out of memory\n", n);
		goto out;
	}
	cb_mode = CB_COUNT;
	for (i = 0; i <= n; i++)
		off[i] = rnd_range(min_ms, max_ms);
	for (impl = 0; impl < IMPL_NR; impl++)
		for (i = 0; sd[impl].on && i <= n; i++)
			b_setup(impl, &sd[impl].arr[i]);
	set_base(settle_ms);
	for (impl = 0; impl < IMPL_NR; impl++)
		if (sd[impl].on)
			populate(impl, sd[impl].arr, off, n);
	for (r = 0; r < reps; r++) {
		for (k = 0; k < IMPL_NR; k++) {
			u64 sum = 0;

			impl = (r + k) % IMPL_NR;
			if (!sd[impl].on)
				continue;
			for (done = 0; done < sc_pairs; done += CHUNK) {
				unsigned int c = min_t(unsigned int, CHUNK, sc_pairs - done);
				union btimer *t = &sd[impl].arr[n];
				u64 t0;

				for (j = 0; j < c; j++)
					off2[j] = rnd_range(min_ms, max_ms);
				t0 = t_begin();
				for (j = 0; j < c; j++) {
					b_arm(impl, t, off2[j], 0, false);
					b_cancel(impl, t);
				}
				sum += t_end(t0);
				cond_resched();
			}
			sd[impl].res[r] = sum;
		}
	}
	for (impl = 0; impl < IMPL_NR; impl++) {
		if (!sd[impl].on)
			continue;
		teardown(impl, sd[impl].arr, n + 1);
		emit("setcancel", impl_name[impl], n, "set_cancel",
		     per(median(sd[impl].res, reps), sc_pairs));
	}
	sides_free(sd);
out:
	vfree(off);
	vfree(off2);
}

/* ---- suite: fire ------------------------------------------------------------------ */

static int other_cpu;

static void pin_to(int cpu)
{
	set_cpus_allowed_ptr(current, cpumask_of(cpu));
}

/*
 * Arm @n timers of @impl, all due at one instant T, on the benchmark CPU;
 * wait on the other CPU until the last callback ran.  *@wake_to_last: from
 * the instant the implementation is due to start expiring them (twheel: the
 * end of T's tick, from twheel_next_expiry(); hrtimer: T; timer_list: the
 * moment jiffies reaches the expiry, watched from the other CPU) to the
 * last callback; *@busy: first to last callback.
 */
static int fire_one(int impl, union btimer *arr, unsigned long n, u64 *delay_ns,
		    u64 *wake_to_last, u64 *busy)
{
	unsigned int attempt;
	unsigned long i;
	int ret = -ETIME;

	for (attempt = 0; attempt < 4; attempt++) {
		u64 t, t_wake = 0, deadline;

		pin_to(bench_cpu);
		pinned = true;
		for (i = 0; i < n; i++)
			b_setup(impl, &arr[i]);
		cb_mode = CB_FIRE;
		fire_target = n;
		fire_first = 0;
		fire_last = 0;
		atomic_long_set(&cb_count, 0);
		t = ktime_get_ns() + *delay_ns;
		base_ns = t;
		base_j = jiffies + nsecs_to_jiffies(*delay_ns) + 1;
		for (i = 0; i < n; i++) {
			b_arm(impl, &arr[i], 0, 0, false);
			if ((i & 255) == 255)
				cond_resched();
		}
		if (atomic_long_read(&cb_count) || ktime_get_ns() >= t) {
			/* too slow to arm: start over with more time */
			teardown(impl, arr, n);
			*delay_ns *= 4;
			continue;
		}
		if (impl == IMPL_TWHEEL)
			t_wake = ktime_to_ns(twheel_next_expiry(cur_wheel, KTIME_MAX));
		else if (impl == IMPL_HR)
			t_wake = t;
		/* Wait on the other CPU; timer_list: watch jiffies reach base_j. */
		pin_to(other_cpu);
		while (ktime_get_ns() + 20 * NSEC_PER_MSEC < t)
			usleep_range(5000, 6000);
		if (impl == IMPL_TL) {
			while (time_before(jiffies, base_j))
				cpu_relax();
			t_wake = ktime_get_ns();
		}
		deadline = ktime_get_ns() + 30 * NSEC_PER_SEC + n * 100000ULL;
		while (atomic_long_read(&cb_count) < n && ktime_get_ns() < deadline)
			usleep_range(2000, 3000);
		pin_to(bench_cpu);
		pinned = false;
		if (atomic_long_read(&cb_count) < n) {
			pr_err("fire %s n=%lu: only %ld of %lu fired\n", impl_name[impl],
			       n, atomic_long_read(&cb_count), n);
			teardown(impl, arr, n);
			return -EIO;
		}
		teardown(impl, arr, n);	/* nothing pending: only syncs */
		*wake_to_last = fire_last > t_wake ? fire_last - t_wake : 0;
		*busy = fire_last - fire_first;
		return 0;
	}
	pinned = false;
	pin_to(bench_cpu);
	pr_err("fire %s n=%lu: could not arm before the due time\n",
	       impl_name[impl], n);
	return ret;
}

static void fire_n(const bool *want_in, unsigned long n, int nidx)
{
	unsigned int r, k, nrep = n >= 1000000 ? min_t(unsigned int, reps, 3) : reps;
	u64 delay[IMPL_NR], wl[IMPL_NR][16], bu[IMPL_NR][16];
	unsigned int ok[IMPL_NR] = {};
	bool want[IMPL_NR], failed[IMPL_NR] = {};
	union btimer *arr;
	int impl;

	if (!n)
		return;
	for (impl = 0; impl < IMPL_NR; impl++) {
		want[impl] = want_in[impl] && impl != IMPL_SL;
		/* arming must be over before T: allow 3x the populate time seen */
		delay[impl] = max_t(u64, 200 * NSEC_PER_MSEC,
				    3 * n * (populate_ns[impl][nidx] ?: 2000));
	}
	arr = vzalloc(array_size(n, sizeof(*arr)));
	if (!arr)
		return;
	if (want[IMPL_TWHEEL] && wheel_get()) {
		vfree(arr);
		return;
	}
	nrep = min_t(unsigned int, nrep, 16);
	for (r = 0; r < nrep; r++)
		for (k = 0; k < IMPL_SL; k++) {
			impl = (r + k) % IMPL_SL;
			if (!want[impl] || failed[impl])
				continue;
			if (fire_one(impl, arr, n, &delay[impl], &wl[impl][ok[impl]],
				     &bu[impl][ok[impl]]))
				failed[impl] = true;
			else
				ok[impl]++;
		}
	if (want[IMPL_TWHEEL])
		wheel_put();
	for (impl = 0; impl < IMPL_SL; impl++) {
		if (!ok[impl])
			continue;
		emit("fire", impl_name[impl], n, "fire",
		     per(median(wl[impl], ok[impl]), n));
		if (n > 1)
			emit("fire", impl_name[impl], n, "fire_busy",
			     per(median(bu[impl], ok[impl]), n - 1));
	}
	vfree(arr);
}

/* ---- suite: tick (per-tick bookkeeping with N far timers) ------------------- */

#define TICK_SAMPLES 65536
static u64 *tick_samples;
static atomic_t tick_nsamples;
static atomic64_t tick_sum;
static bool tick_probe_ok;

struct tick_data {
	u64 t0;
};

static int tick_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	((struct tick_data *)ri->data)->t0 = ktime_get_ns();
	return 0;
}

static int tick_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	u64 d = ktime_get_ns() - ((struct tick_data *)ri->data)->t0;
	int i = atomic_inc_return(&tick_nsamples) - 1;

	atomic64_add(d, &tick_sum);
	if (i < TICK_SAMPLES)
		tick_samples[i] = d;
	return 0;
}

static struct kretprobe tick_probe = {
	.kp.symbol_name = "twheel_tick",
	.entry_handler = tick_entry,
	.handler = tick_ret,
	.data_size = sizeof(struct tick_data),
	.maxactive = 8,
};

/*
 * Calibration of the probe: the same kretprobe pair around an empty
 * function gives the share of the probe's own cost that lands inside the
 * measured interval, subtracted from the tick handler's time.
 */
static noinline void bench_probe_target(void)
{
	barrier();
}

static struct kretprobe cal_probe = {
	.kp.symbol_name = "bench_probe_target",
	.entry_handler = tick_entry,
	.handler = tick_ret,
	.data_size = sizeof(struct tick_data),
	.maxactive = 8,
};

static u64 probe_overhead;

static void tick_reset(void)
{
	atomic_set(&tick_nsamples, 0);
	atomic64_set(&tick_sum, 0);
}

/*
 * Fire one short timer on the current private wheel so that its tick
 * handler runs: a wheel that was only armed has its hrtimer set for the
 * earliest key, and only after a handler run does it follow the occupied
 * slots (tw_wheel_next_lower_bound()).
 */
static void wheel_kick(union btimer *t)
{
	twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
	twheel_timer_start(&t->tw, 2 * NSEC_PER_MSEC, 0, TWHEEL_MODE_REL);
	msleep(30);
	twheel_timer_shutdown_sync(&t->tw);
}

static u64 wakeups_over(unsigned int ms, u64 *el)
{
	struct twheel_stats s0, s1;
	u64 t0;

	twheel_get_stats(cur_wheel, &s0);
	t0 = ktime_get_ns();
	msleep(ms);
	twheel_get_stats(cur_wheel, &s1);
	*el = ktime_get_ns() - t0;
	return s1.wakeups - s0.wakeups;
}

static void tick_case(unsigned long n)
{
	struct twheel_stats st;
	union btimer *arr;
	unsigned long i;
	u64 el, w;
	u32 *off;
	int cnt;

	arr = vzalloc(array_size(n + 1, sizeof(*arr)));
	off = vmalloc(array_size(n + 1, sizeof(*off)));
	if (!arr || !off || wheel_get()) {
		vfree(arr);
		vfree(off);
		return;
	}
	cb_mode = CB_COUNT;
	atomic_long_set(&cb_count, 0);
	/* an hour out, spread over a minute: every slot holds N/slots timers */
	for (i = 0; i < n; i++) {
		b_setup(IMPL_TWHEEL, &arr[i]);
		off[i] = rnd_range(0, 60000);
	}
	set_base(3600 * 1000);
	populate(IMPL_TWHEEL, arr, off, n);
	msleep(20);

	/* cold: only armed, the hrtimer waits for the earliest key */
	w = wakeups_over(tick_ms / 2, &el);
	emit("tick", "twheel", n, "wakeups_per_s_cold", rate(w, el));

	/* warm: after one expiry the wheel visits every occupied slot */
	wheel_kick(&arr[n]);
	msleep(20);
	tick_reset();
	w = wakeups_over(tick_ms, &el);
	cnt = atomic_read(&tick_nsamples);
	twheel_get_stats(cur_wheel, &st);
	emit("tick", "twheel", n, "wakeups_per_s", rate(w, el));
	emit("tick", "twheel", n, "max_slot", st.max_slot * 1000);
	if (tick_probe_ok && cnt) {
		u64 med = median(tick_samples, min(cnt, TICK_SAMPLES));

		emit("tick", "twheel", n, "ns_per_tick_raw", med * 1000);
		emit("tick", "twheel", n, "ns_per_tick",
		     (med > probe_overhead ? med - probe_overhead : 0) * 1000);
		emit("tick", "twheel", n, "mean_ns_per_tick",
		     per(atomic64_read(&tick_sum), cnt));
		/* ns of tick handler per second of wall time */
		emit("tick", "twheel", n, "cpu_ns_per_s",
		     rate(max_t(s64, 0, atomic64_read(&tick_sum) -
				(s64)(cnt * probe_overhead)), el));
	}
	teardown(IMPL_TWHEEL, arr, n);
	wheel_put();
	vfree(arr);
	vfree(off);
}

/* ---- suite: wakeups ------------------------------------------------------------ */

/*
 * n = 0: an empty wheel, after a timer fired on it (the wheel went idle).
 * n = 1: one timer 10 s out, measured before it fires: cold (the timer was
 * the first thing armed on a fresh wheel) and warm (armed right after
 * another timer fired, so the handler follows the occupied slot, once
 * per revolution).
 */
static void wakeups_case(unsigned int n)
{
	union btimer *t;
	u64 el, w;

	t = kcalloc(2, sizeof(*t), GFP_KERNEL);
	if (!t)
		return;
	if (wheel_get()) {
		kfree(t);
		return;
	}
	cb_mode = CB_COUNT;
	if (!n) {
		wheel_kick(&t[1]);
		w = wakeups_over(wake_ms, &el);
		emit("wakeups", "twheel", 0, "wakeups_per_s", rate(w, el));
	} else {
		twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
		twheel_timer_start(&t->tw, 10 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
		w = wakeups_over(wake_ms, &el);
		emit("wakeups", "twheel", 1, "wakeups_per_s", rate(w, el));
		twheel_timer_shutdown_sync(&t->tw);
		wheel_put();
		if (wheel_get()) {
			kfree(t);
			return;
		}
		twheel_timer_setup(&t[1].tw, cur_wheel, cb_tw, 0);
		twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
		twheel_timer_start(&t[1].tw, 2 * NSEC_PER_MSEC, 0, TWHEEL_MODE_REL);
		twheel_timer_start(&t->tw, 10 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
		msleep(30);
		w = wakeups_over(wake_ms, &el);
		emit("wakeups", "twheel", 1, "wakeups_per_s_warm", rate(w, el));
		twheel_timer_shutdown_sync(&t->tw);
		twheel_timer_shutdown_sync(&t[1].tw);
	}
	wheel_put();
	kfree(t);
}

/* ---- suite: mixed (after Ratas' benchmark) -------------------------------------- */

/*
 * Four classes, a quarter of the timers each, by index:
 *   short      20..100 ms, re-armed from their own callback when they fire
 *              and rescheduled by the driver: usually fired
 *   long_once  60..120 s, set once, cancelled at the end
 *   long_push  30 s, pushed back to now + 30 s by the driver: never fired
 *   medium     1..5 s; the driver moves a pending one earlier (to half its
 *              remaining time) or cancels it, and restarts an idle one
 * The driver picks short, long_push or medium uniformly, but touches each
 * short timer only every 200 ms on average (so that they usually fire:
 * their own callback is what reschedules them most of the time).
 */
enum { MIX_SHORT, MIX_LONG_ONCE, MIX_LONG_PUSH, MIX_MEDIUM };

static int mix_impl;
static u64 mix_slack_num;	/* slack = delay * pct / 100 */
static bool mix_stop;
static u64 *mix_exp;		/* our record of each timer's expiry (ns) */

static unsigned long mix_per;	/* timers per class */

static unsigned int mix_class(unsigned long i)
{
	return min_t(unsigned long, i / mix_per, MIX_MEDIUM);
}

static void mix_arm(union btimer *t, u64 now, u64 delay_ns, bool modify)
{
	u64 slack = div_u64(delay_ns * mix_slack_num, 100);
	u64 exp = now + delay_ns;

	mix_exp[t - cur_arr] = exp;
	switch (mix_impl) {
	case IMPL_TWHEEL:
		if (modify)
			twheel_timer_modify(&t->tw, exp, slack, TWHEEL_MODE_ABS);
		else
			twheel_timer_start(&t->tw, exp, slack, TWHEEL_MODE_ABS);
		break;
	case IMPL_TL:
		mod_timer(&t->tl, jiffies + nsecs_to_jiffies(delay_ns) + 1);
		break;
	case IMPL_HR:
		hrtimer_start_range_ns(&t->hr, ns_to_ktime(exp), slack,
				       HRTIMER_MODE_ABS);
		break;
	}
}

static void mix_fired(union btimer *t)
{
	unsigned long i = t - cur_arr;

	if (mix_class(i) != MIX_SHORT || READ_ONCE(mix_stop))
		return;
	/* pseudo-random 20..100 ms without shared state */
	mix_arm(t, ktime_get_ns(),
		(20 + (i * 2654435761UL + atomic_long_read(&cb_count)) % 81) *
		NSEC_PER_MSEC, false);
}

static void mixed_case(int impl, unsigned int slack_pct, const char *label)
{
	unsigned long n = mix_n & ~3U, i, per_class = n / 4, main_ops = 0;
	u64 short_touched = 0, short_allowed;
	struct twheel_stats s0 = {}, s1 = {};
	union btimer *arr;
	u64 t0, now, el, deadline;
	long fires;

	arr = vzalloc(array_size(n, sizeof(*arr)));
	mix_exp = vzalloc(array_size(n, sizeof(u64)));
	if (!arr || !mix_exp || (impl == IMPL_TWHEEL && wheel_get())) {
		vfree(mix_exp);
		vfree(arr);
		return;
	}
	mix_impl = impl;
	mix_per = per_class;
	mix_slack_num = slack_pct;
	mix_stop = false;
	cur_arr = arr;
	cb_mode = CB_MIX;
	atomic_long_set(&cb_count, 0);
	for (i = 0; i < n; i++)
		b_setup(impl, &arr[i]);
	now = ktime_get_ns();
	for (i = 0; i < n; i++) {
		u64 d;

		switch (mix_class(i)) {
		case MIX_SHORT:
			d = rnd_range(20, 100) * NSEC_PER_MSEC;
			break;
		case MIX_LONG_ONCE:
			d = (u64)rnd_range(60000, 120000) * NSEC_PER_MSEC;
			break;
		case MIX_LONG_PUSH:
			d = 30 * NSEC_PER_SEC;
			break;
		default:
			d = rnd_range(1000, 5000) * NSEC_PER_MSEC;
			break;
		}
		mix_arm(&arr[i], now, d, false);
		if ((i & 255) == 255)
			cond_resched();
	}
	if (impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s0);
	atomic_long_set(&cb_count, 0);
	t0 = ktime_get_ns();
	deadline = t0 + (u64)mix_ms * NSEC_PER_MSEC;
	do {
		unsigned int k;

		now = ktime_get_ns();
		/* each short timer is touched every 200 ms on average */
		short_allowed = div_u64((now - t0) * per_class * 5, NSEC_PER_SEC);
		for (k = 0; k < 256; k++) {
			u64 r = rnd();
			unsigned long j = (r >> 8) % per_class;
			unsigned int cls = r % 3;
			union btimer *t;

			if (cls == 0 && short_touched >= short_allowed)
				cls = 1 + ((r >> 3) & 1);
			switch (cls) {
			case 0:
				short_touched++;
				t = &arr[MIX_SHORT * per_class + j];
				mix_arm(t, now, (20 + (r >> 40) % 81) * NSEC_PER_MSEC, true);
				break;
			case 1:
				t = &arr[MIX_LONG_PUSH * per_class + j];
				mix_arm(t, now, 30 * NSEC_PER_SEC, true);
				break;
			default:
				t = &arr[MIX_MEDIUM * per_class + j];
				if (b_pending(impl, t)) {
					u64 e = mix_exp[t - arr];

					if ((r >> 60) & 1 && e > now)
						mix_arm(t, now, (e - now) / 2, true);
					else
						b_cancel(impl, t);
				} else {
					mix_arm(t, now, (1000 + (r >> 40) % 4001) *
						NSEC_PER_MSEC, false);
				}
				break;
			}
		}
		main_ops += 256;
		cond_resched();
	} while (ktime_get_ns() < deadline);
	el = ktime_get_ns() - t0;
	fires = atomic_long_read(&cb_count);
	if (impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s1);
	WRITE_ONCE(mix_stop, true);
	teardown(impl, arr, n);
	if (impl == IMPL_TWHEEL)
		wheel_put();

	emit("mixed", label, n, "ops_per_s", rate(main_ops + fires, el));
	emit("mixed", label, n, "ns_per_op", per(el, main_ops));
	emit("mixed", label, n, "fires_per_s", rate(fires, el));
	if (impl == IMPL_TWHEEL)
		emit("mixed", label, n, "wakeups_per_s",
		     rate(s1.wakeups - s0.wakeups, el));
	vfree(mix_exp);
	mix_exp = NULL;
	cur_arr = NULL;
	vfree(arr);
}

/* ---- suite: prims (building blocks, to read the others by) ---------------------- */

static noinline u64 prim_div(u64 a, u32 b)
{
	return div_u64(a, b);
}

/* What /dev/twheel allocates per timer (struct twheel_utimer in src/dev.c). */
#define PRIM_OBJ_SIZE 144
#define PRIM_OBJS 1000

/*
 * Allocation and handle costs: these may sleep, so they are timed without
 * t_begin()'s bottom-half section, in chunks of PRIM_OBJS live objects.
 */
static void prims_slab_xa(u64 *v, unsigned int nr)
{
	struct kmem_cache *cache;
	DEFINE_XARRAY_ALLOC(xa);
	unsigned long idx;
	void **objs, *entry;
	u32 next = 0, id;
	unsigned int i, r;
	u64 t0;

	cache = kmem_cache_create("twheel_bench_prim", PRIM_OBJ_SIZE, 0,
				  SLAB_ACCOUNT, NULL);
	objs = kcalloc(PRIM_OBJS, sizeof(*objs), GFP_KERNEL);
	if (!cache || !objs)
		goto out;
	for (r = 0; r < nr; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < PRIM_OBJS; i++)
			objs[i] = kmem_cache_zalloc(cache, GFP_KERNEL_ACCOUNT);
		for (i = 0; i < PRIM_OBJS; i++)
			kmem_cache_free(cache, objs[i]);
		v[r] = ktime_get_ns() - t0;
	}
	emit("prims", "kernel", 0, "slab_account_alloc_free", per(median(v, nr), PRIM_OBJS));
	for (r = 0; r < nr; r++) {
		t0 = ktime_get_ns();
		for (i = 0; i < PRIM_OBJS; i++)
			if (xa_alloc_cyclic(&xa, &id, objs, xa_limit_32b, &next,
					    GFP_KERNEL_ACCOUNT) < 0)
				break;
		xa_for_each(&xa, idx, entry)
			xa_erase(&xa, idx);
		v[r] = ktime_get_ns() - t0;
	}
	emit("prims", "kernel", 0, "xa_alloc_cyclic_erase", per(median(v, nr), PRIM_OBJS));
	xa_destroy(&xa);
out:
	kfree(objs);
	kmem_cache_destroy(cache);
}

static void prims(void)
{
	static DEFINE_SPINLOCK(lock);
	const unsigned int loops = 100000;
	struct hlist_head head = HLIST_HEAD_INIT;
	struct hlist_node node;
	unsigned long flags;
	u64 t0, sum = 0, v[16];
	unsigned int i, r, nr = min_t(unsigned int, reps, ARRAY_SIZE(v));

	/* a 64-by-32 division, as twheel's time-to-tick conversion does */
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++)
			sum += prim_div(0x123456789abcULL + i * 7919ULL, 1000000 + (i & 7));
		v[r] = t_end(t0);
	}
	emit("prims", "kernel", 0, "div_u64", per(median(v, nr), loops));
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++)
			sum += ktime_get_ns();
		v[r] = t_end(t0);
	}
	emit("prims", "kernel", 0, "ktime_get", per(median(v, nr), loops));
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++) {
			spin_lock_irqsave(&lock, flags);
			spin_unlock_irqrestore(&lock, flags);
		}
		v[r] = t_end(t0);
	}
	emit("prims", "kernel", 0, "lock_irqsave_pair", per(median(v, nr), loops));
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++) {
			hlist_add_head(&node, &head);
			hlist_del_init(&node);
		}
		v[r] = t_end(t0);
	}
	emit("prims", "kernel", 0, "hlist_add_del", per(median(v, nr), loops));
	prims_slab_xa(v, nr);
	/* keep @sum alive */
	if (sum == 42)
		pr_info("%s: %llu\n", __func__, sum);
}

/* ---- driver -------------------------------------------------------------------------- */

static int __init bench_init(void)
{
	bool want[IMPL_NR];
	int i, k, ret;
	u64 t0 = ktime_get_ns();

	if (!batch || !reps || min_ms > max_ms || mix_n < 8 || !sc_pairs)
		return -EINVAL;
	reps = min_t(uint, reps, 64);
	rng_state = seed ?: 1;
	for (i = 0; i < IMPL_NR; i++)
		want[i] = listed(impls, impl_name[i]);

	if (bench_cpu < 0 || !cpu_online(bench_cpu))
		bench_cpu = cpumask_last(cpu_online_mask);
	other_cpu = cpumask_first(cpu_online_mask);
	if (other_cpu == bench_cpu)
		other_cpu = cpumask_next(bench_cpu, cpu_online_mask);
	if (other_cpu >= nr_cpu_ids)
		other_cpu = bench_cpu;
	pin_to(bench_cpu);
	pr_info("start: suites=%s impls=%s reps=%u batch=%u cpus=%u (bench on %d, waits on %d) HZ=%d\n",
		suites, impls, reps, batch, num_online_cpus(), bench_cpu,
		other_cpu, HZ);

	if (listed(suites, "prims"))
		prims();

	/* warm up code paths and caches; results discarded */
	quiet = true;
	ops_n(want, 1000, 0);
	quiet = false;
	memset(populate_ns, 0, sizeof(populate_ns));

	if (listed(suites, "ops"))
		for (k = 0; k < ns_count; k++)
			ops_n(want, ns[k], k);

	if (listed(suites, "fire"))
		for (k = 0; k < ns_count; k++)
			if (ns[k] <= fire_max)
				fire_n(want, ns[k], k);

	if (listed(suites, "setcancel"))
		for (k = 0; k < sc_ns_count; k++)
			setcancel_n(want, sc_ns[k]);

	if (listed(suites, "tick")) {
		tick_samples = vmalloc(array_size(TICK_SAMPLES, sizeof(u64)));
		ret = tick_samples ? register_kretprobe(&tick_probe) : -ENOMEM;
		tick_probe_ok = !ret;
		if (ret)
			pr_info("note: no kretprobe on twheel_tick (%d): tick handler time not measured\n",
				ret);
		if (tick_probe_ok && !register_kretprobe(&cal_probe)) {
			tick_reset();
			for (k = 0; k < 2000; k++)
				bench_probe_target();
			unregister_kretprobe(&cal_probe);
			probe_overhead = median(tick_samples,
						min(atomic_read(&tick_nsamples), TICK_SAMPLES));
			emit("tick", "probe", 0, "probe_overhead_ns", probe_overhead * 1000);
		}
		for (k = 0; k < ns_count; k++)
			tick_case(ns[k]);
		if (tick_probe_ok)
			unregister_kretprobe(&tick_probe);
		vfree(tick_samples);
		tick_samples = NULL;
	}

	if (listed(suites, "wakeups")) {
		wakeups_case(0);
		wakeups_case(1);
	}

	if (listed(suites, "mixed")) {
		bool plain = listed(mix_variants, "plain");
		bool slack = listed(mix_variants, "slack");

		if (want[IMPL_TWHEEL] && plain)
			mixed_case(IMPL_TWHEEL, 0, "twheel");
		if (want[IMPL_TWHEEL] && slack)
			mixed_case(IMPL_TWHEEL, mix_slack_pct, "twheel_slack");
		if (want[IMPL_HR] && plain)
			mixed_case(IMPL_HR, 0, "hrtimer");
		if (want[IMPL_HR] && slack)
			mixed_case(IMPL_HR, mix_slack_pct, "hrtimer_slack");
		if (want[IMPL_TL] && plain)
			mixed_case(IMPL_TL, 0, "timer_list");
	}

	set_cpus_allowed_ptr(current, cpu_possible_mask);
	pr_info("done in %llu ms\n", div_u64(ktime_get_ns() - t0, NSEC_PER_MSEC));
	return 0;
}

static void __exit bench_exit(void)
{
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_DESCRIPTION("Benchmark of twheel against timer_list, hrtimer and a sorted list");
MODULE_AUTHOR("twheel developers");
MODULE_LICENSE("GPL");
