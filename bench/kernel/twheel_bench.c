// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_bench - in-kernel benchmark of twheel against timer_list, hrtimer
 * and a sorted list (Varghese & Lauck's Scheme 2, the old BSD callout).
 *
 * Everything runs from module_init, in the insmod task pinned to one CPU;
 * the module then stays loaded, holding nothing, until rmmod.  Results are
 * printed as
 *
 *	twheel_bench: csv,<suite>,<impl>,<n>,<op>,<median>,<min>,<max>,<reps>
 *
 * over the repetitions (implementations rotated between them),
 * and bench/run.sh turns them into build/bench/results-<kernel>.csv.  The method is
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
 *           cancel_random: cancels of distinct random long-armed timers.
 *           twheel_slack, hrtimer_slack: slack = timer_list's granularity.
 * ops_short the same with the batch's timers 100-250 ms out.
 * fire      N timers all due at the same instant T, armed on one CPU while
 *           the benchmark waits on the other.  fire = (last callback -
 *           instant the implementation is due to start expiring) / N,
 *           i.e. the busy period the expiry path needs per timer,
 *           wakeup included; fire_busy = (last - first callback) / (N-1);
 *           fire_cpu = the benchmark CPU's busy time (wall - NO_HZ idle,
 *           less the background) / N: the expiry path's CPU time.
 * spread    N timers due uniformly over 10^4 or 10^6 ticks: CPU time per
 *           expiry and per second in the steady state, per twheel engine,
 *           and twheel_slack: slack = timer_list's granularity.
 * late      p50/p99/max of fired - expires: idle, 10^6 timers, a burst
 *           (twheel_slack too, if listed in late_impls).
 * ratas     the Ratas blog post's workload, event driven: CPU, softirqs,
 *           wakeups, active and idle.
 * setcancel Costello & Varghese's figure: time of @sc_pairs set/cancel
 *           pairs with N timers outstanding, N to 10^6.
 * tick      N timers an hour out on a private wheel: hrtimer wakeups/s,
 *           longest slot walked, and the time spent in the wheel's tick
 *           handler (a kretprobe on twheel_tick, when it can be placed).
 *           Each repetition builds a fresh wheel per N (N rotated).
 * wakeups   wakeups/s of an empty private wheel and of one holding a
 *           single timer 10 s out (twheel_get_stats()); each repetition
 *           runs the three cases on fresh wheels, rotated.
 * mixed     a Ratas-style mix of short, long and medium timers driven for
 *           @mix_ms, with and without slack: ops/s; each repetition runs
 *           every case, rotated.
 * Every suite repeats @reps times; the intervals (tick_ms, wake_ms,
 * mix_ms) are per repetition.  Every run also writes two "wheel" rows,
 * the private wheels' tick (tw_tick_ns) and slot count (2^tw_bits), from
 * which the reports title their tables and figures.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/kernel_stat.h>
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
#include <linux/tick.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include <linux/twheel.h>

#include "bench_compat.h"
#include "bench_order.h"

/* ---- parameters ------------------------------------------------------------ */

static char *suites = "prims,ops,ops_short,fire,spread,late,setcancel,tick,wakeups,mixed,ratas";
module_param(suites, charp, 0444);
MODULE_PARM_DESC(suites, "Comma-separated suites: prims,ops,ops_short,fire,spread,late,setcancel,tick,wakeups,mixed,ratas");

static char *impls = "twheel,timer_list,hrtimer,sorted,twheel_slack,hrtimer_slack";
module_param(impls, charp, 0444);
MODULE_PARM_DESC(impls, "Implementations of ops, fire, setcancel: twheel,timer_list,hrtimer,sorted,twheel_slack,hrtimer_slack (the _slack ones: ops suites only)");

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

static uint short_min_ms = 100;
module_param(short_min_ms, uint, 0444);
static uint short_max_ms = 250;
module_param(short_max_ms, uint, 0444);
MODULE_PARM_DESC(short_max_ms, "ops_short: batch delays uniform in [short_min_ms, short_max_ms] from now (< 252 ms: timer_list level 0 at HZ=250)");

static uint settle_ms = 60000;
module_param(settle_ms, uint, 0444);
MODULE_PARM_DESC(settle_ms, "Base instant of the expiries, ms after a case starts");

static ulong sorted_max = 10000;
module_param(sorted_max, ulong, 0444);
MODULE_PARM_DESC(sorted_max, "Largest N for the sorted-list baseline");

static ulong fire_max = 1000000;
module_param(fire_max, ulong, 0444);
MODULE_PARM_DESC(fire_max, "Largest N for the fire suite");

/* Costello & Varghese's range, then on to 10^6 (the sorted list stops at sorted_max). */
static ulong sc_ns[12] = { 0, 500, 1000, 2000, 5000, 10000, 100000, 1000000 };
static int sc_ns_count = 8;
module_param_array(sc_ns, ulong, &sc_ns_count, 0444);
MODULE_PARM_DESC(sc_ns, "Outstanding timer counts of the set/cancel figure");

static uint sc_pairs = 10000;
module_param(sc_pairs, uint, 0444);
MODULE_PARM_DESC(sc_pairs, "Set/cancel pairs timed per point of the figure");

static ulong tw_tick_ns = 1000000;
module_param(tw_tick_ns, ulong, 0444);
static uint tw_bits = TWHEEL_BITS_DEFAULT;
module_param(tw_bits, uint, 0444);
static uint tw_budget = 4096;
module_param(tw_budget, uint, 0444);
MODULE_PARM_DESC(tw_budget, "Tick, log2 slots and budget of the private wheels");

static uint tick_ms = 2000;
module_param(tick_ms, uint, 0444);
MODULE_PARM_DESC(tick_ms, "Measuring interval of the tick suite, per repetition");

static uint wake_ms = 8000;
module_param(wake_ms, uint, 0444);
MODULE_PARM_DESC(wake_ms, "Measuring interval of the wakeups suite, per repetition and case (< 10 s)");

static uint mix_n = 10000;
module_param(mix_n, uint, 0444);
static uint mix_ms = 2000;
module_param(mix_ms, uint, 0444);
static uint mix_slack_pct = 12;
module_param(mix_slack_pct, uint, 0444);
MODULE_PARM_DESC(mix_slack_pct, "Mixed suite: timers, duration per repetition, slack as % of the delay");

static char *mix_variants = "plain,slack";
module_param(mix_variants, charp, 0444);
MODULE_PARM_DESC(mix_variants, "Mixed suite: run without slack (plain), with slack (slack) or both");

static char *spread_impls = "twheel,twheel_scheme6,twheel_lawn,twheel_slack,timer_list,hrtimer";
module_param(spread_impls, charp, 0444);
MODULE_PARM_DESC(spread_impls, "spread suite: twheel,twheel_scheme6,twheel_lawn,twheel_slack,timer_list,hrtimer");

static ulong spread_ticks[4] = { 10000, 1000000 };
static int spread_ticks_count = 2;
module_param_array(spread_ticks, ulong, &spread_ticks_count, 0444);
MODULE_PARM_DESC(spread_ticks, "spread suite: deadlines uniform over this many twheel ticks");

static ulong spread_max = 1000000;
module_param(spread_max, ulong, 0444);
static uint spread_ms = 1000;
module_param(spread_ms, uint, 0444);
MODULE_PARM_DESC(spread_ms, "spread suite: largest N, measuring interval");

static char *late_impls = "twheel,timer_list,hrtimer";
module_param(late_impls, charp, 0444);
MODULE_PARM_DESC(late_impls, "late suite: twheel,twheel_scheme6,twheel_lawn,twheel_slack,timer_list,hrtimer");
static ulong late_idle_n = 1000;
module_param(late_idle_n, ulong, 0444);
static uint late_idle_ms = 2000;
module_param(late_idle_ms, uint, 0444);
MODULE_PARM_DESC(late_idle_ms, "late suite, idle: late_idle_n timers due over late_idle_ms");
static ulong late_load_n = 1000000;
module_param(late_load_n, ulong, 0444);
static uint late_win_ms = 1000;
module_param(late_win_ms, uint, 0444);
MODULE_PARM_DESC(late_win_ms, "late suite, load: late_load_n timers over 10^4 ticks, recorded for late_win_ms");
static ulong late_burst_n = 16384;
module_param(late_burst_n, ulong, 0444);
MODULE_PARM_DESC(late_burst_n, "late suite, burst: timers due at one instant (4x the budget)");
static ulong late_cap = 262144;
module_param(late_cap, ulong, 0444);
MODULE_PARM_DESC(late_cap, "late suite: most lateness samples kept per run");

static char *ratas_impls = "twheel,timer_list,hrtimer";
module_param(ratas_impls, charp, 0444);
static ulong ratas_units[6] = { 100, 1000, 10000 };
static int ratas_units_count = 3;
module_param_array(ratas_units, ulong, &ratas_units_count, 0444);
MODULE_PARM_DESC(ratas_units, "ratas suite: work units of ten timers");
static uint ratas_short_ms = 100;
module_param(ratas_short_ms, uint, 0444);
static uint ratas_ms = 2000;
module_param(ratas_ms, uint, 0444);
static uint ratas_idle_ms = 2000;
module_param(ratas_idle_ms, uint, 0444);
MODULE_PARM_DESC(ratas_idle_ms, "ratas suite: short period, active and idle phases (ms)");

static ulong seed = 12345;
module_param(seed, ulong, 0444);

static int bench_cpu = -1;
module_param(bench_cpu, int, 0444);
MODULE_PARM_DESC(bench_cpu, "CPU the benchmark arms timers on (-1: the last online CPU)");

static bool insn_marks;
module_param(insn_marks, bool, 0444);
MODULE_PARM_DESC(insn_marks, "Cut insn_prof windows around the ops, fire and spread cases (bench/run.sh --insn): needs reps=1");

/* ---- output, random numbers, statistics ------------------------------------ */

static bool quiet;

#define MAX_REPS 64

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

/*
 * One CSV row: the median of @nr per-repetition values (milli-units),
 * their minimum and maximum and @nr, the repetitions behind them:
 * suite,impl,n,op,median,min,max,reps.  Sorts @v.
 */
static void emit_v(const char *suite, const char *impl, unsigned long n,
		   const char *op, u64 *v, unsigned int nr)
{
	u64 med;

	if (quiet || !nr)
		return;
	med = median(v, nr);
	pr_info("csv,%s,%s,%lu,%s,%llu.%03llu,%llu.%03llu,%llu.%03llu,%u\n",
		suite, impl, n, op, med / 1000, med % 1000, v[0] / 1000,
		v[0] % 1000, v[nr - 1] / 1000, v[nr - 1] % 1000, nr);
}

/* A single measurement: median = min = max, one repetition. */
static void emit(const char *suite, const char *impl, unsigned long n,
		 const char *op, u64 milli)
{
	emit_v(suite, impl, n, op, &milli, 1);
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

/* emit_v() of @raw[r] / @den per repetition (ns per op from batch times) */
static void emit_per(const char *suite, const char *impl, unsigned long n,
		     const char *op, const u64 *raw, unsigned int nr, u64 den)
{
	u64 v[MAX_REPS];
	unsigned int r;

	nr = min_t(unsigned int, nr, MAX_REPS);
	for (r = 0; r < nr; r++)
		v[r] = per(raw[r], den);
	emit_v(suite, impl, n, op, v, nr);
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

/*
 * The _slack variants are twheel and hrtimer given, on every arm, a slack
 * equal to timer_list's granularity at that distance (tl_gran_ns()): the
 * same precision as timer_list, for the ops suites only.
 */
enum impl_id { IMPL_TWHEEL, IMPL_TL, IMPL_HR, IMPL_SL, IMPL_TWS, IMPL_HRS, IMPL_NR };
static const char *const impl_name[IMPL_NR] = {
	"twheel", "timer_list", "hrtimer", "sorted", "twheel_slack", "hrtimer_slack"
};

/* The implementation an impl_id runs on. */
static __always_inline int kind(int impl)
{
	return impl == IMPL_TWS ? IMPL_TWHEEL : impl == IMPL_HRS ? IMPL_HR : impl;
}

static __always_inline bool has_slack(int impl)
{
	return impl == IMPL_TWS || impl == IMPL_HRS;
}

/*
 * timer_list's granularity for a timer @delay_ns ahead: the level
 * calc_wheel_index() puts it in (LVL_CLK_SHIFT 3, LVL_BITS 6), whose
 * buckets are 8^level jiffies wide; the timer fires at the end of its
 * bucket, so up to that much late.  2.048 s at 61-120 s with HZ=250.
 */
static u64 tl_gran_ns(u64 delay_ns)
{
	unsigned long dj = nsecs_to_jiffies(delay_ns);
	unsigned int lvl = 0;

	while (lvl < 8 && dj >= (63UL << (3 * lvl)))
		lvl++;
	return (u64)jiffies_to_nsecs(1UL << (3 * lvl));
}

/* tl_gran_ns() for a timer due at @exp_ns, armed at @now_ns */
static u64 tl_gran_at(u64 exp_ns, u64 now_ns)
{
	return tl_gran_ns(exp_ns > now_ns ? exp_ns - now_ns : 0);
}

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
enum cb_mode { CB_COUNT, CB_FIRE, CB_MIX, CB_LATE, CB_RATAS };
static enum cb_mode cb_mode;
static atomic_long_t cb_count;		/* CB_COUNT, CB_FIRE, CB_MIX */
static unsigned long fire_target;
static u64 fire_first, fire_last;
static DECLARE_COMPLETION(fire_done);	/* insn_marks: the last callback ran */
static union btimer *cur_arr;		/* CB_MIX: index -> class */
static void mix_fired(union btimer *t);
static void late_fired(union btimer *t);
static void ratas_fired(union btimer *t);

static void on_fire(union btimer *t)
{
	long c = atomic_long_inc_return(&cb_count);

	switch (cb_mode) {
	case CB_COUNT:
		break;
	case CB_FIRE:
		if (c == 1)
			fire_first = ktime_get_ns();
		if (c == fire_target) {
			fire_last = ktime_get_ns();
			if (insn_marks)
				complete(&fire_done);
		}
		break;
	case CB_MIX:
		mix_fired(t);
		break;
	case CB_LATE:
		late_fired(t);
		break;
	case CB_RATAS:
		ratas_fired(t);
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
	switch (kind(impl)) {
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

	switch (kind(impl)) {
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
	switch (kind(impl)) {
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
	switch (kind(impl)) {
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
	switch (kind(impl)) {
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

/*
 * End a window of the insn_prof QEMU plugin (bench/insn/insn_prof.c) from
 * here, as bench/insn/insn_mark.h does from user space: the plugin ends
 * the window when it runs a block holding this no-op's encoding,
 * "nopl 0x4c485754(%rax,%rax,1)" (its displacement spells TWHL).  The
 * console line "insn-mark: LABEL" names the window; "-" is one not
 * reported, named before the mark so that the printk falls outside the
 * windows that are.  @label/@count (count > 0): per operation figures,
 * of the benchmark CPU's instructions alone ("@bench_cpu": the ops loops
 * run there, and the fire and spread timers expire there; the waiter's
 * sleeps and wakeups on the other CPU are not counted).
 * The warm-up (@quiet) cuts no windows.
 * With interrupts off from the "-" mark to the next, a window holds the
 * operations and only the other CPU's rare noise (insn_window_begin()).
 */
static noinline void insn_mark(const char *label, const char *impl,
			       unsigned long n, unsigned long count)
{
	if (!label)
		pr_info("insn-mark: -\n");
	asm volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x54, 0x57, 0x48, 0x4c"
		     ::: "memory");
	/* the work of every marked case is done on the benchmark CPU */
	if (label)
		pr_info("insn-mark: %s.%s.%lu@%d/%lu\n", label, impl, n,
			bench_cpu, count);
}

static unsigned long insn_flags;

/*
 * Name the window that the next mark ends "-", ahead of time: a console
 * line takes milliseconds on the VM's serial port, in which the timers of
 * the fire and spread cases would fire before their window began.
 */
static void insn_window_announce(void)
{
	if (insn_marks && !quiet)
		pr_info("insn-mark: -\n");
}

/* Begin a window; @announced: insn_window_announce() named the last. */
static void __insn_window_begin(bool irqs_off, bool announced)
{
	if (!insn_marks || quiet)
		return;
	if (announced)
		asm volatile(".byte 0x0f, 0x1f, 0x84, 0x00, 0x54, 0x57, 0x48, 0x4c"
			     ::: "memory");
	else
		insn_mark(NULL, NULL, 0, 0);
	if (irqs_off)
		local_irq_save(insn_flags);
}

static void insn_window_begin(bool irqs_off)
{
	__insn_window_begin(irqs_off, false);
}

static void insn_window_end(bool irqs_off, const char *label,
			    const char *impl, unsigned long n,
			    unsigned long count)
{
	if (!insn_marks || quiet)
		return;
	if (irqs_off)
		local_irq_restore(insn_flags);
	insn_mark(label, impl, n, count);
}

/* ---- suite: ops --------------------------------------------------------------- */

/*
 * The implementations of one case are populated side by side and each
 * repetition runs all of them in turn, in an order that changes from one
 * repetition to the next (rep_order()): a slow spell of the (shared,
 * noisy) host hits every implementation of a repetition alike instead of
 * one whole case.
 */

/* Populate times (ns per timer) by impl and N index, for the fire suite. */
static u64 populate_ns[IMPL_NR][ARRAY_SIZE(ns)];

/* One implementation's timers in a case, on a private wheel for twheel. */
struct side {
	bool on;
	union btimer *arr;
	u64 *res;
	struct twheel *wheel;
};

static void sides_free(struct side *sd)
{
	int i;

	for (i = 0; i < IMPL_NR; i++) {
		if (sd[i].wheel)
			twheel_destroy(sd[i].wheel);
		vfree(sd[i].arr);
		kfree(sd[i].res);
	}
	cur_wheel = NULL;
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
		if (!sd[i].arr || !sd[i].res)
			goto fail;
		if (kind(i) == IMPL_TWHEEL) {
			if (wheel_get())
				goto fail;
			sd[i].wheel = cur_wheel;
		}
		sd[i].on = true;
	}
	return 0;
fail:
	sides_free(sd);
	return -ENOMEM;
}

/* b_setup() of timers [0, @total) of a side, on its own wheel. */
static void side_setup(struct side *sd, int impl, unsigned long total)
{
	unsigned long i;

	cur_wheel = sd[impl].wheel;
	for (i = 0; i < total; i++)
		b_setup(impl, &sd[impl].arr[i]);
}

/*
 * Arm timers [0, n) at their offsets, with slacks @slk (NULL: none);
 * returns ns per timer.
 */
static u64 populate(int impl, union btimer *arr, const u32 *off,
		    const u64 *slk, unsigned long n)
{
	unsigned long i;
	u64 t0 = ktime_get_ns();

	for (i = 0; i < n; i++) {
		b_arm(impl, &arr[i], off[i], slk ? slk[i] : 0, false);
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

/* Column @col of @rows rows of @cols results, into @v. */
static unsigned int col_get(const u64 *res, unsigned int rows, unsigned int cols,
			    unsigned int col, u64 *v)
{
	unsigned int r;

	for (r = 0; r < rows && r < MAX_REPS; r++)
		v[r] = res[r * cols + col];
	return r;
}

enum { OP_START, OP_CANCEL, OP_PAIR, OP_MODIFY, OP_CANCEL_RND, OP_NR };

/* A base instant, in ktime and jiffies. */
struct tbase {
	u64 ns;
	unsigned long j;
};

static void base_save(struct tbase *b)
{
	b->ns = base_ns;
	b->j = base_j;
}

static void base_use(const struct tbase *b)
{
	base_ns = b->ns;
	base_j = b->j;
}

/* timer_list's granularity for a timer @off_ms after the base instant */
static u64 slack_for(u32 off_ms)
{
	return tl_gran_at(base_ns + (u64)off_ms * NSEC_PER_MSEC, ktime_get_ns());
}

/* What one repetition of an ops case works on, the same for every impl. */
struct ops_batch {
	const u32 *off;		/* the N outstanding timers' offsets ... */
	const u64 *slk;		/* ... and slacks (for the _slack impls) */
	struct tbase pop;	/* ... from this base instant */
	const u32 *off2;	/* offsets of the batch's arms ... */
	const u64 *slk2;	/* ... and their slacks */
	const u32 *perm;	/* cancel order of the started timers */
	const u32 *idx;		/* modify: random outstanding timers */
	const u32 *pick;	/* cancel_random: distinct outstanding timers */
	unsigned int npick;
	bool short_delays;	/* off2 counts from now, not from pop */
};

/* One repetition of an ops case on one implementation. */
static void ops_rep(int impl, union btimer *arr, unsigned long n, unsigned int b,
		    const struct ops_batch *ob, u64 *res)
{
	const u64 *slk2 = has_slack(impl) ? ob->slk2 : NULL;
	const u64 *slk = has_slack(impl) ? ob->slk : NULL;
	unsigned int j;
	u64 t0;

	if (ob->short_delays)
		set_base(0);
	/* start: @b extra timers */
	t0 = t_begin();
	insn_window_begin(true);
	for (j = 0; j < b; j++)
		b_arm(impl, &arr[n + j], ob->off2[j], slk2 ? slk2[j] : 0, false);
	insn_window_end(true, ob->short_delays ? "ops_short_start" : "ops_start",
			impl_name[impl], n, b);
	res[OP_START] = t_end(t0);
	/* cancel them, in random order */
	t0 = t_begin();
	insn_window_begin(true);
	for (j = 0; j < b; j++)
		b_cancel(impl, &arr[ob->perm[j]]);
	insn_window_end(true, ob->short_delays ? "ops_short_cancel" : "ops_cancel",
			impl_name[impl], n, b);
	res[OP_CANCEL] = t_end(t0);
	/* start + cancel pairs */
	t0 = t_begin();
	insn_window_begin(true);
	for (j = 0; j < b; j++) {
		b_arm(impl, &arr[n + j], ob->off2[j], slk2 ? slk2[j] : 0, false);
		b_cancel(impl, &arr[n + j]);
	}
	insn_window_end(true, ob->short_delays ? "ops_short_pair" : "ops_pair",
			impl_name[impl], n, b);
	res[OP_PAIR] = t_end(t0);
	if (!n)
		goto out;
	/* modify @b random outstanding timers to new random expiries */
	t0 = t_begin();
	insn_window_begin(true);
	for (j = 0; j < b; j++)
		b_arm(impl, &arr[ob->idx[j]], ob->off2[j], slk2 ? slk2[j] : 0, true);
	insn_window_end(true, ob->short_delays ? "ops_short_modify" : "ops_modify",
			impl_name[impl], n, b);
	res[OP_MODIFY] = ktime_get_ns() - t0;
	if (ob->short_delays) {
		/* back to their far expiries, before any can fire */
		base_use(&ob->pop);
		for (j = 0; j < b; j++) {
			u32 i = ob->idx[j];

			b_arm(impl, &arr[i], ob->off[i], slk ? slk[i] : 0, true);
		}
	}
	local_bh_enable();
	/* start now, cancel later: cancel long-armed (cold) random timers */
	t0 = t_begin();
	for (j = 0; j < ob->npick; j++)
		b_cancel(impl, &arr[ob->pick[j]]);
	res[OP_CANCEL_RND] = t_end(t0);
	/* and re-arm them: N stays N */
	base_use(&ob->pop);
	for (j = 0; j < ob->npick; j++) {
		u32 i = ob->pick[j];

		b_arm(impl, &arr[i], ob->off[i], slk ? slk[i] : 0, false);
	}
out:
	base_use(&ob->pop);
}

/*
 * The ops suite for @n outstanding timers.  @short_delays (suite
 * ops_short): the batch's timers are armed 100-250 ms ahead, where
 * timer_list is exact to a jiffy, instead of at the N timers' distance.
 */
static void ops_n(const bool *want_in, unsigned long n, int nidx, bool short_delays)
{
	static const char *const opname[OP_NR] = {
		"start", "cancel", "start_cancel", "modify", "cancel_random"
	};
	const char *suite = short_delays ? "ops_short" : "ops";
	unsigned int b = batch, r, j, k;
	unsigned long total = n + b, i;
	struct side sd[IMPL_NR];
	struct ops_batch ob = { .short_delays = short_delays };
	bool want[IMPL_NR];
	u32 *off, *off2, *idx, *perm, *pool;
	u64 *slk, *slk2, v[MAX_REPS];
	int impl;
	long early;

	for (i = 0; i < IMPL_NR; i++)
		want[i] = want_in[i] && (i != IMPL_SL || n <= sorted_max);
	off = vmalloc(array_size(total, sizeof(u32)));
	slk = vmalloc(array_size(total, sizeof(u64)));
	pool = vmalloc(array_size(n + 1, sizeof(u32)));
	off2 = vmalloc(array_size(b, sizeof(u32)));
	slk2 = vmalloc(array_size(b, sizeof(u64)));
	idx = vmalloc(array_size(b, sizeof(u32)));
	perm = vmalloc(array_size(b, sizeof(u32)));
	if (!off || !slk || !pool || !off2 || !slk2 || !idx || !perm ||
	    sides_alloc(sd, want, total, OP_NR * reps)) {
		pr_err("%s n=%lu: out of memory\n", suite, n);
		goto out;
	}
	cb_mode = CB_COUNT;
	atomic_long_set(&cb_count, 0);
	set_base(settle_ms);
	for (i = 0; i < total; i++) {
		off[i] = rnd_range(min_ms, max_ms);
		slk[i] = slack_for(off[i]);
	}
	for (i = 0; i < n; i++)
		pool[i] = i;
	for (impl = 0; impl < IMPL_NR; impl++)
		if (sd[impl].on)
			side_setup(sd, impl, total);
	for (impl = 0; impl < IMPL_NR; impl++)
		if (sd[impl].on)
			populate_ns[impl][nidx] = populate(impl, sd[impl].arr, off,
							   has_slack(impl) ? slk : NULL, n);
	base_save(&ob.pop);
	ob.off = off;
	ob.slk = slk;
	ob.off2 = off2;
	ob.slk2 = slk2;
	ob.perm = perm;
	ob.idx = idx;
	ob.pick = pool;
	ob.npick = min_t(unsigned long, b, n);

	for (r = 0; r < reps; r++) {
		for (j = 0; j < b; j++) {
			if (short_delays) {
				off2[j] = rnd_range(short_min_ms, short_max_ms);
				slk2[j] = tl_gran_ns((u64)off2[j] * NSEC_PER_MSEC);
			} else {
				off2[j] = rnd_range(min_ms, max_ms);
				slk2[j] = slack_for(off2[j]);
			}
			perm[j] = n + j;
			idx[j] = n ? (rnd() >> 32) % n : 0;
		}
		shuffle(perm, b);
		/* the first npick of pool: distinct random outstanding timers */
		for (j = 0; j < ob.npick; j++)
			swap(pool[j], pool[j + (rnd() >> 32) % (n - j)]);
		for (k = 0; k < IMPL_NR; k++) {
			impl = rep_order(r, k, IMPL_NR);
			if (sd[impl].on)
				ops_rep(impl, sd[impl].arr, n, b, &ob,
					sd[impl].res + r * OP_NR);
			cond_resched();
		}
	}
	early = atomic_long_read(&cb_count);
	for (impl = 0; impl < IMPL_NR; impl++) {
		if (!sd[impl].on)
			continue;
		teardown(impl, sd[impl].arr, total);
		for (k = 0; k < OP_NR; k++) {
			if (k >= OP_MODIFY && !n)
				continue;
			emit_per(suite, impl_name[impl], n, opname[k], v,
				 col_get(sd[impl].res, reps, OP_NR, k, v),
				 k == OP_CANCEL_RND ? ob.npick : b);
		}
		if (!short_delays)
			emit(suite, impl_name[impl], n, "populate",
			     populate_ns[impl][nidx] * 1000);
	}
	if (early) {
		pr_info("note: %s n=%lu: %ld timers fired during the case (raise settle_ms)\n",
			suite, n, early);
		emit(suite, "all", n, "early_fires", early * 1000);
	}
	sides_free(sd);
out:
	vfree(off);
	vfree(slk);
	vfree(pool);
	vfree(off2);
	vfree(slk2);
	vfree(idx);
	vfree(perm);
}

/* ---- suite: setcancel (Costello & Varghese's figure) ------------------------- */

static void setcancel_n(const bool *want_in, unsigned long n)
{
	struct side sd[IMPL_NR];
	unsigned int r, j, k, done;
	bool want[IMPL_NR];
	u32 *off, *off2;
	unsigned long i;
	int impl;

	for (i = 0; i < IMPL_NR; i++)
		want[i] = want_in[i] && (i != IMPL_SL || n <= sorted_max);
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
		if (sd[impl].on)
			side_setup(sd, impl, n + 1);
	set_base(settle_ms);
	for (impl = 0; impl < IMPL_NR; impl++)
		if (sd[impl].on)
			populate(impl, sd[impl].arr, off, NULL, n);
	for (r = 0; r < reps; r++) {
		for (k = 0; k < IMPL_NR; k++) {
			u64 sum = 0;

			impl = rep_order(r, k, IMPL_NR);
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
		emit_per("setcancel", impl_name[impl], n, "set_cancel",
			 sd[impl].res, reps, sc_pairs);
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
 * CPU time of the benchmark CPU, from outside: wall time minus the idle
 * time NO_HZ accounts for it (get_cpu_idle_time_us(); interrupts and
 * softirqs that run while it idles stop its idle clock), and its timer
 * and hrtimer softirq counts.  While a case measures, the benchmark task
 * waits on the other CPU, so the benchmark CPU's busy time is what the
 * expiry path (wakeups, softirq, callbacks) costs plus the background,
 * measured the same way with nothing armed (cpu_bg_ns_per_s).
 */
struct cpu_snap {
	u64 t;
	u64 idle_us;
	unsigned int tsoft;
	unsigned int hsoft;
};

static bool cpu_time_ok;	/* get_cpu_idle_time_us() works (NO_HZ on) */
static u64 cpu_bg_ns_per_s;	/* background busy ns per second */
static u64 bg_softirqs_per_s;	/* background timer + hrtimer softirqs/s */

static void snap(struct cpu_snap *c)
{
	c->idle_us = get_cpu_idle_time_us(bench_cpu, NULL);
	c->t = ktime_get_ns();
	c->tsoft = kstat_softirqs_cpu(TIMER_SOFTIRQ, bench_cpu);
	c->hsoft = kstat_softirqs_cpu(HRTIMER_SOFTIRQ, bench_cpu);
}

static u64 snap_wall(const struct cpu_snap *a, const struct cpu_snap *b)
{
	return b->t - a->t;
}

/* busy ns between the snapshots, the background's share taken off */
static u64 snap_cpu(const struct cpu_snap *a, const struct cpu_snap *b)
{
	u64 wall = b->t - a->t, idle = (b->idle_us - a->idle_us) * NSEC_PER_USEC;
	u64 bg = mul_u64_u64_div_u64(cpu_bg_ns_per_s, wall, NSEC_PER_SEC);
	u64 busy = wall > idle ? wall - idle : 0;

	return busy > bg ? busy - bg : 0;
}

static unsigned int snap_softirqs(const struct cpu_snap *a, const struct cpu_snap *b)
{
	return (b->tsoft - a->tsoft) + (b->hsoft - a->hsoft);
}

/*
 * Measure the background before a suite, with nothing of ours armed:
 * three windows of @ms after a pause, of which the quietest is what is
 * subtracted (a transient, such as the deferred freeing of the previous
 * case's memory, would otherwise be taken off every measurement after
 * it).  All three are reported, as impl background_<suite>.
 */
static void cpu_background(const char *suite, unsigned int ms)
{
	struct cpu_snap a, b;
	u64 busy[3], sirq[3], wall, idle, best = U64_MAX;
	char name[32];
	int w;

	cpu_time_ok = get_cpu_idle_time_us(bench_cpu, NULL) != (u64)-1;
	if (!cpu_time_ok) {
		pr_info("note: no NO_HZ idle accounting: CPU-time figures not measured\n");
		return;
	}
	pin_to(other_cpu);
	msleep(100);
	for (w = 0; w < 3; w++) {
		snap(&a);
		msleep(ms);
		snap(&b);
		wall = snap_wall(&a, &b);
		idle = (b.idle_us - a.idle_us) * NSEC_PER_USEC;
		busy[w] = wall > idle ? mul_u64_u64_div_u64(wall - idle, NSEC_PER_SEC, wall) : 0;
		sirq[w] = rate(snap_softirqs(&a, &b), wall);
		if (busy[w] < best) {
			best = busy[w];
			bg_softirqs_per_s = div_u64(sirq[w], 1000);
		}
		busy[w] *= 1000;
	}
	pin_to(bench_cpu);
	cpu_bg_ns_per_s = best;
	snprintf(name, sizeof(name), "background_%s", suite);
	emit_v("cpu", name, 0, "busy_ns_per_s", busy, 3);
	emit_v("cpu", name, 0, "softirqs_per_s", sirq, 3);
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
		    u64 *wake_to_last, u64 *busy, u64 *cpu)
{
	struct cpu_snap c0, c1;

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
		reinit_completion(&fire_done);
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
		/*
		 * Wait on the other CPU; timer_list: watch jiffies reach
		 * base_j.  The CPU-time window opens 1 ms before T and closes
		 * 0.5 ms after the last callback was seen: the less of it,
		 * the less background in it.
		 */
		pin_to(other_cpu);
		if (insn_marks && !quiet) {
			/*
			 * Counting instructions: from before T to the last
			 * callback, with one sleep of ours in the window
			 * rather than a wakeup every 200 us (nor a spin on
			 * jiffies), and the console line, which takes
			 * milliseconds, long before.  No timeout: its
			 * timer_list timer may sit on the expiring CPU's
			 * base, whose lock the waiter would then spin on in
			 * the window (a lost callback hangs the VM until
			 * the harness's timeout).  Times mean nothing
			 * here: the plugin's marks stall the VM.
			 */
			insn_window_announce();
			snap(&c0);
			__insn_window_begin(false, true);
			wait_for_completion(&fire_done);
			insn_window_end(false, "fire", impl_name[impl], n, n);
			t_wake = fire_first;
			goto waited;
		}
		while (ktime_get_ns() + 20 * NSEC_PER_MSEC < t)
			usleep_range(5000, 6000);
		while (ktime_get_ns() + NSEC_PER_MSEC < t)
			usleep_range(200, 300);
		snap(&c0);
		if (impl == IMPL_TL) {
			while (time_before(jiffies, base_j))
				cpu_relax();
			t_wake = ktime_get_ns();
		}
		deadline = ktime_get_ns() + 30 * NSEC_PER_SEC + n * 100000ULL;
		while (atomic_long_read(&cb_count) < n && ktime_get_ns() < deadline)
			usleep_range(200, 300);
waited:
		usleep_range(500, 600);		/* the softirq's tail */
		snap(&c1);
		*cpu = snap_cpu(&c0, &c1);
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
	unsigned int r, k, nrep = min_t(unsigned int, reps, 16);
	u64 delay[IMPL_NR], wl[IMPL_SL][16], bu[IMPL_SL][16], cpu[IMPL_SL][16];
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
	for (r = 0; r < nrep; r++)
		for (k = 0; k < IMPL_SL; k++) {
			impl = rep_order(r, k, IMPL_SL);
			if (!want[impl] || failed[impl])
				continue;
			if (fire_one(impl, arr, n, &delay[impl], &wl[impl][ok[impl]],
				     &bu[impl][ok[impl]], &cpu[impl][ok[impl]]))
				failed[impl] = true;
			else
				ok[impl]++;
		}
	if (want[IMPL_TWHEEL])
		wheel_put();
	for (impl = 0; impl < IMPL_SL; impl++) {
		if (!ok[impl])
			continue;
		emit_per("fire", impl_name[impl], n, "fire", wl[impl], ok[impl], n);
		if (n > 1)
			emit_per("fire", impl_name[impl], n, "fire_busy", bu[impl],
				 ok[impl], n - 1);
		if (cpu_time_ok)
			emit_per("fire", impl_name[impl], n, "fire_cpu", cpu[impl],
				 ok[impl], n);
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

/* One repetition of a tick case: what tick_one() measured. */
struct tick_res {
	u64 cold, warm, max_slot;	/* milli-units */
	u64 raw, net, mean, cpu;	/* milli-units; only if probed */
	bool probed;
};

/*
 * One repetition at @n: a fresh private wheel, @n timers an hour out,
 * the cold interval, one expiry, the warm interval, teardown.  @arr and
 * @off hold at least @n + 1 entries.
 */
static int tick_one(unsigned long n, union btimer *arr, u32 *off,
		    struct tick_res *res)
{
	struct twheel_stats st;
	unsigned long i;
	u64 el, w;
	int cnt;

	if (wheel_get())
		return -ENOMEM;
	cb_mode = CB_COUNT;
	atomic_long_set(&cb_count, 0);
	/* an hour out, spread over a minute: every slot holds N/slots timers */
	for (i = 0; i < n; i++) {
		b_setup(IMPL_TWHEEL, &arr[i]);
		off[i] = rnd_range(0, 60000);
	}
	set_base(3600 * 1000);
	populate(IMPL_TWHEEL, arr, off, NULL, n);
	msleep(20);

	/* cold: only armed, the hrtimer waits for the earliest key */
	w = wakeups_over(tick_ms / 2, &el);
	res->cold = rate(w, el);

	/* warm: after one expiry the wheel visits every occupied slot */
	wheel_kick(&arr[n]);
	msleep(20);
	tick_reset();
	w = wakeups_over(tick_ms, &el);
	cnt = atomic_read(&tick_nsamples);
	twheel_get_stats(cur_wheel, &st);
	res->warm = rate(w, el);
	res->max_slot = (u64)st.max_slot * 1000;
	res->probed = tick_probe_ok && cnt;
	if (res->probed) {
		u64 med = median(tick_samples, min(cnt, TICK_SAMPLES));

		res->raw = med * 1000;
		res->net = (med > probe_overhead ? med - probe_overhead : 0) * 1000;
		res->mean = per(atomic64_read(&tick_sum), cnt);
		/* ns of tick handler per second of wall time */
		res->cpu = rate(max_t(s64, 0, atomic64_read(&tick_sum) -
				      (s64)(cnt * probe_overhead)), el);
	}
	teardown(IMPL_TWHEEL, arr, n);
	wheel_put();
	return 0;
}

/*
 * emit_v() of one u64 field of the repetitions @res[0..nr), only of those
 * the kretprobe saw if @probed_only.
 */
#define TICK_EMIT(n, op, res, nr, field, probed_only)			\
	do {								\
		const struct tick_res *res_ = (res);			\
		unsigned int r_, m_ = 0;				\
		u64 v_[MAX_REPS];					\
									\
		for (r_ = 0; r_ < (nr); r_++)				\
			if (!(probed_only) || res_[r_].probed)		\
				v_[m_++] = res_[r_].field;		\
		emit_v("tick", "twheel", n, op, v_, m_);		\
	} while (0)

/*
 * @reps repetitions; each runs every N once, in the order of rep_order(),
 * so that a slow stretch of the host lands on different N in different
 * repetitions.
 */
static void tick_suite(void)
{
	struct tick_res (*res)[MAX_REPS];
	unsigned int r, j, ok[ARRAY_SIZE(ns)] = {};
	unsigned long nmax = 0;
	union btimer *arr;
	u32 *off;
	int k;

	for (k = 0; k < ns_count; k++)
		nmax = max(nmax, ns[k]);
	arr = vzalloc(array_size(nmax + 1, sizeof(*arr)));
	off = vmalloc(array_size(nmax + 1, sizeof(*off)));
	res = kcalloc(ARRAY_SIZE(ns), sizeof(*res), GFP_KERNEL);
	if (!arr || !off || !res || !ns_count)
		goto out;
	for (r = 0; r < reps; r++)
		for (j = 0; j < ns_count; j++) {
			k = rep_order(r, j, ns_count);
			if (ns[k] && !tick_one(ns[k], arr, off, &res[k][ok[k]]))
				ok[k]++;
		}
	for (k = 0; k < ns_count; k++) {
		unsigned long n = ns[k];

		if (!ok[k])
			continue;
		TICK_EMIT(n, "wakeups_per_s_cold", res[k], ok[k], cold, false);
		TICK_EMIT(n, "wakeups_per_s", res[k], ok[k], warm, false);
		TICK_EMIT(n, "max_slot", res[k], ok[k], max_slot, false);
		/* the handler's time, from the repetitions the probe saw */
		TICK_EMIT(n, "ns_per_tick_raw", res[k], ok[k], raw, true);
		TICK_EMIT(n, "ns_per_tick", res[k], ok[k], net, true);
		TICK_EMIT(n, "mean_ns_per_tick", res[k], ok[k], mean, true);
		TICK_EMIT(n, "cpu_ns_per_s", res[k], ok[k], cpu, true);
	}
out:
	kfree(res);
	vfree(off);
	vfree(arr);
}

/* ---- suite: wakeups ------------------------------------------------------------ */

enum { WAKE_EMPTY, WAKE_ONE_COLD, WAKE_ONE_WARM, WAKE_NR };

/*
 * One repetition of case @c, on a fresh private wheel; *@res = wakeups
 * per second (milli-units).
 * WAKE_EMPTY: an empty wheel, after a timer fired on it (the wheel went
 * idle).  WAKE_ONE_COLD, WAKE_ONE_WARM: one timer 10 s out, measured
 * before it fires: cold (the timer was the first thing armed on a fresh
 * wheel) and warm (armed right after another timer fired, so the handler
 * follows the occupied slot, once per revolution).
 */
static int wakeups_one(unsigned int c, union btimer *t, u64 *res)
{
	u64 el, w;

	if (wheel_get())
		return -ENOMEM;
	cb_mode = CB_COUNT;
	switch (c) {
	case WAKE_EMPTY:
		wheel_kick(&t[1]);
		w = wakeups_over(wake_ms, &el);
		break;
	case WAKE_ONE_COLD:
		twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
		twheel_timer_start(&t->tw, 10 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
		w = wakeups_over(wake_ms, &el);
		twheel_timer_shutdown_sync(&t->tw);
		break;
	default:
		twheel_timer_setup(&t[1].tw, cur_wheel, cb_tw, 0);
		twheel_timer_setup(&t->tw, cur_wheel, cb_tw, 0);
		twheel_timer_start(&t[1].tw, 2 * NSEC_PER_MSEC, 0, TWHEEL_MODE_REL);
		twheel_timer_start(&t->tw, 10 * NSEC_PER_SEC, 0, TWHEEL_MODE_REL);
		msleep(30);
		w = wakeups_over(wake_ms, &el);
		twheel_timer_shutdown_sync(&t->tw);
		twheel_timer_shutdown_sync(&t[1].tw);
		break;
	}
	wheel_put();
	*res = rate(w, el);
	return 0;
}

/* @reps repetitions of the three cases, their order rotated. */
static void wakeups_suite(void)
{
	static const struct {
		unsigned int n;
		const char *op;
	} wc[WAKE_NR] = {
		[WAKE_EMPTY] = { 0, "wakeups_per_s" },
		[WAKE_ONE_COLD] = { 1, "wakeups_per_s" },
		[WAKE_ONE_WARM] = { 1, "wakeups_per_s_warm" },
	};
	unsigned int r, j, c, ok[WAKE_NR] = {};
	u64 (*v)[MAX_REPS];
	union btimer *t;

	t = kcalloc(2, sizeof(*t), GFP_KERNEL);
	v = kcalloc(WAKE_NR, sizeof(*v), GFP_KERNEL);
	if (!t || !v)
		goto out;
	for (r = 0; r < reps; r++)
		for (j = 0; j < WAKE_NR; j++) {
			c = rep_order(r, j, WAKE_NR);
			if (!wakeups_one(c, t, &v[c][ok[c]]))
				ok[c]++;
		}
	for (c = 0; c < WAKE_NR; c++)
		emit_v("wakeups", "twheel", wc[c].n, wc[c].op, v[c], ok[c]);
out:
	kfree(v);
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

/* One repetition of a mixed case, in milli-units. */
struct mix_res {
	u64 ops_per_s, ns_per_op, fires_per_s, wakeups_per_s;
};

static int mixed_case(int impl, unsigned int slack_pct, struct mix_res *res)
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
		mix_exp = NULL;
		vfree(arr);
		return -ENOMEM;
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

	res->ops_per_s = rate(main_ops + fires, el);
	res->ns_per_op = per(el, main_ops);
	res->fires_per_s = rate(fires, el);
	res->wakeups_per_s = rate(s1.wakeups - s0.wakeups, el);
	vfree(mix_exp);
	mix_exp = NULL;
	cur_arr = NULL;
	vfree(arr);
	return 0;
}

/* emit_v() of one field of the repetitions @res[0..nr) of a mixed case */
#define MIX_EMIT(label, op, res, nr, field)				\
	do {								\
		unsigned int r_, nr_ = (nr);				\
		u64 v_[MAX_REPS];					\
									\
		for (r_ = 0; r_ < nr_; r_++)				\
			v_[r_] = (res)[r_].field;			\
		emit_v("mixed", label, mix_n & ~3U, op, v_, nr_);	\
	} while (0)

/*
 * @reps repetitions; each runs every wanted case once (twheel and hrtimer
 * without and with slack, timer_list), in the order of rep_order().
 */
static void mixed_suite(const bool *want)
{
	static const struct {
		const char *label;
		int impl;
		bool slack;
	} mc[] = {	/* timer_list has its own built-in slack: one case */
		{ "twheel", IMPL_TWHEEL, false },
		{ "twheel_slack", IMPL_TWHEEL, true },
		{ "hrtimer", IMPL_HR, false },
		{ "hrtimer_slack", IMPL_HR, true },
		{ "timer_list", IMPL_TL, false },
	};
	bool plain = listed(mix_variants, "plain");
	bool slack = listed(mix_variants, "slack");
	unsigned int r, j, c, nc = 0, idx[ARRAY_SIZE(mc)], ok[ARRAY_SIZE(mc)] = {};
	struct mix_res (*res)[MAX_REPS];

	for (c = 0; c < ARRAY_SIZE(mc); c++)
		if (want[mc[c].impl] && (mc[c].slack ? slack : plain))
			idx[nc++] = c;
	if (!nc)
		return;
	res = kcalloc(ARRAY_SIZE(mc), sizeof(*res), GFP_KERNEL);
	if (!res)
		return;
	for (r = 0; r < reps; r++)
		for (j = 0; j < nc; j++) {
			c = idx[rep_order(r, j, nc)];
			if (!mixed_case(mc[c].impl, mc[c].slack ? mix_slack_pct : 0,
					&res[c][ok[c]]))
				ok[c]++;
		}
	for (j = 0; j < nc; j++) {
		c = idx[j];
		if (!ok[c])
			continue;
		MIX_EMIT(mc[c].label, "ops_per_s", res[c], ok[c], ops_per_s);
		MIX_EMIT(mc[c].label, "ns_per_op", res[c], ok[c], ns_per_op);
		MIX_EMIT(mc[c].label, "fires_per_s", res[c], ok[c], fires_per_s);
		if (mc[c].impl == IMPL_TWHEEL)
			MIX_EMIT(mc[c].label, "wakeups_per_s", res[c], ok[c],
				 wakeups_per_s);
	}
	kfree(res);
}

/* ---- helpers of the spread, late and ratas suites ------------------------------- */

/*
 * A variant: an implementation, and for twheel the engine of its wheel.
 * @slack: armed with timer_list's granularity at its delay as slack
 * (tl_gran_ns()), as the ops suites' twheel_slack: the same precision as
 * timer_list, which otherwise batches its far timers in coarse buckets
 * while twheel fires each on its own tick.
 */
struct variant {
	const char *name;
	int impl;
	enum twheel_engine engine;
	bool slack;
};

static const struct variant variants[] = {
	{ "twheel", IMPL_TWHEEL, TWHEEL_ENGINE_HIER, false },
	{ "twheel_scheme6", IMPL_TWHEEL, TWHEEL_ENGINE_SCHEME6, false },
	{ "twheel_lawn", IMPL_TWHEEL, TWHEEL_ENGINE_LAWN, false },
	{ "twheel_slack", IMPL_TWHEEL, TWHEEL_ENGINE_HIER, true },
	{ "timer_list", IMPL_TL, 0, false },
	{ "hrtimer", IMPL_HR, 0, false },
};

#define NVAR ARRAY_SIZE(variants)

/*
 * The variants named in @list, in variants[] order, leaving out those with
 * slack unless @slack_ok (a suite that arms its timers itself, not with
 * var_populate(), would run them without); returns how many.
 */
static unsigned int variants_pick(const char *list, const struct variant **out,
				  bool slack_ok)
{
	unsigned int i, nr = 0;

	for (i = 0; i < NVAR; i++)
		if (listed(list, variants[i].name) &&
		    (slack_ok || !variants[i].slack))
			out[nr++] = &variants[i];
	return nr;
}

/* Set up @n timers of @v (on a new private wheel for twheel). */
static int var_setup(const struct variant *v, union btimer *arr, unsigned long n)
{
	unsigned long i;

	if (v->impl == IMPL_TWHEEL) {
		cur_wheel = twheel_create_engine(tw_tick_ns, tw_bits, tw_budget,
						 v->engine);
		if (IS_ERR(cur_wheel)) {
			pr_err("twheel_create_engine(%s): %ld\n", v->name,
			       PTR_ERR(cur_wheel));
			cur_wheel = NULL;
			return -ENOMEM;
		}
	}
	for (i = 0; i < n; i++)
		b_setup(v->impl, &arr[i]);
	return 0;
}

static void var_teardown(const struct variant *v, union btimer *arr, unsigned long n)
{
	teardown(v->impl, arr, n);
	if (v->impl == IMPL_TWHEEL)
		wheel_put();
}

/*
 * Arm @t to expire at @exp (ktime ns); @now and @now_j are the clock and
 * jiffies read together (jiffies first).  timer_list gets msleep()'s
 * never-early rounding: the jiffies that cover the delay, plus one for
 * the current, partly elapsed jiffy.
 */
static void arm_abs(int impl, union btimer *t, u64 exp, u64 now,
		    unsigned long now_j, u64 slack)
{
	switch (kind(impl)) {
	case IMPL_TWHEEL:
		twheel_timer_modify(&t->tw, exp, slack, TWHEEL_MODE_ABS);
		break;
	case IMPL_TL:
		mod_timer(&t->tl, now_j + 1 +
			  (exp > now ? DIV_ROUND_UP_ULL(exp - now, TICK_NSEC) : 0));
		break;
	case IMPL_HR:
		hrtimer_start_range_ns(&t->hr, ns_to_ktime(exp), slack,
				       pinned ? HRTIMER_MODE_ABS_PINNED : HRTIMER_MODE_ABS);
		break;
	}
}

/*
 * The smallest and largest (clock - jiffies * TICK_NSEC) seen by
 * var_populate() since jiffy_off_reset(): with jiffies up to date they lie
 * within one jiffy of each other; a wider spread is how far jiffies lagged
 * the clock at some reading (NO_HZ moves jiffies on at the tick, which a
 * loaded CPU, or a loaded host under TCG, may take late).
 */
static s64 jiffy_off_min, jiffy_off_max;

static void jiffy_off_reset(void)
{
	jiffy_off_min = S64_MAX;
	jiffy_off_max = S64_MIN;
}

static void now_pair(u64 *now, unsigned long *now_j)
{
	*now_j = jiffies;
	*now = ktime_get_ns();
}

/*
 * Arm timers [0, n) of @v on the benchmark CPU to @base + @off[i] ns, with
 * @v's slack, re-reading the clock every 256 timers, and move to the other CPU.
 */
static void var_populate(const struct variant *v, union btimer *arr,
			 const u64 *off, unsigned long n, u64 base)
{
	unsigned long i, nj = 0;
	u64 now = 0, exp;

	for (i = 0; i < n; i++) {
		if (!(i & 255)) {
			s64 jo;

			cond_resched();
			now_pair(&now, &nj);
			jo = (s64)(now - (u64)nj * TICK_NSEC);
			jiffy_off_min = min(jiffy_off_min, jo);
			jiffy_off_max = max(jiffy_off_max, jo);
		}
		exp = base + off[i];
		arm_abs(v->impl, &arr[i], exp, now, nj,
			v->slack ? tl_gran_at(exp, now) : 0);
	}
}

/* ---- suite: spread (steady-state expiry, deadlines spread over S ticks) -------- */

/*
 * N timers due uniformly over S ticks (1 ms) from shortly after they are
 * armed; once arming is over, the benchmark task leaves the benchmark CPU
 * and its busy time is measured over spread_ms while the timers expire at
 * the steady rate N/S per tick.  With S = 10^6 a Scheme 6 slot holds the
 * timers of 244 revolutions, of which the expiry path must skip all but
 * one; the hierarchical engine and timer_list cascade or file them by
 * level instead.
 */
struct spread_res {
	u64 cpu, fires, wall, wakeups, softirqs;
};

static int spread_one(const struct variant *v, union btimer *arr, u64 *off,
		      unsigned long n, u64 span_ns, struct spread_res *res)
{
	struct twheel_stats s0 = {}, s1 = {};
	struct cpu_snap c0, c1;
	unsigned long i;
	long f0;

	pin_to(bench_cpu);
	pinned = true;
	cb_mode = CB_COUNT;
	if (var_setup(v, arr, n)) {
		pinned = false;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		off[i] = rnd() % span_ns;
	var_populate(v, arr, off, n, ktime_get_ns() + 50 * NSEC_PER_MSEC);
	pin_to(other_cpu);
	insn_window_announce();
	msleep(20);
	if (v->impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s0);
	__insn_window_begin(false, true);
	f0 = atomic_long_read(&cb_count);
	snap(&c0);
	msleep(spread_ms);
	snap(&c1);
	res->fires = atomic_long_read(&cb_count) - f0;
	if (insn_marks) {
		char label[32];

		snprintf(label, sizeof(label), "spread_s%llu",
			 div64_u64(span_ns, tw_tick_ns));
		insn_window_end(false, label, v->name, n, res->fires);
	}
	if (v->impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s1);
	res->wakeups = s1.wakeups - s0.wakeups;
	res->cpu = snap_cpu(&c0, &c1);
	res->wall = snap_wall(&c0, &c1);
	res->softirqs = snap_softirqs(&c0, &c1);
	pin_to(bench_cpu);
	var_teardown(v, arr, n);
	pinned = false;
	return 0;
}

static void spread_n(unsigned long n, u64 span_ticks)
{
	const struct variant *vs[NVAR];
	unsigned int nv = variants_pick(spread_impls, vs, true), r, k, ok[NVAR] = {};
	struct spread_res (*res)[MAX_REPS];
	u64 span_ns = span_ticks * tw_tick_ns, v[MAX_REPS];
	union btimer *arr;
	char op[48];
	u64 *off;

	if (!n || !nv || !cpu_time_ok)
		return;
	arr = vzalloc(array_size(n, sizeof(*arr)));
	off = vmalloc(array_size(n, sizeof(*off)));
	res = kcalloc(NVAR, sizeof(*res), GFP_KERNEL);
	if (!arr || !off || !res) {
		pr_err("spread n=%lu: out of memory\n", n);
		goto out;
	}
	for (r = 0; r < reps; r++)
		for (k = 0; k < nv; k++) {
			unsigned int x = rep_order(r, k, nv);

			if (!spread_one(vs[x], arr, off, n, span_ns, &res[x][ok[x]]))
				ok[x]++;
		}
	for (k = 0; k < nv; k++) {
		unsigned int m = ok[k];

		for (r = 0; r < m; r++)
			v[r] = per(res[k][r].cpu, res[k][r].fires);
		snprintf(op, sizeof(op), "cpu_ns_per_fire_s%llu", span_ticks);
		emit_v("spread", vs[k]->name, n, op, v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(res[k][r].cpu, res[k][r].wall);
		snprintf(op, sizeof(op), "cpu_ns_per_s_s%llu", span_ticks);
		emit_v("spread", vs[k]->name, n, op, v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(res[k][r].fires, res[k][r].wall);
		snprintf(op, sizeof(op), "fires_per_s_s%llu", span_ticks);
		emit_v("spread", vs[k]->name, n, op, v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(res[k][r].softirqs, res[k][r].wall);
		snprintf(op, sizeof(op), "softirqs_per_s_s%llu", span_ticks);
		emit_v("spread", vs[k]->name, n, op, v, m);
		if (vs[k]->impl != IMPL_TWHEEL)
			continue;
		for (r = 0; r < m; r++)
			v[r] = rate(res[k][r].wakeups, res[k][r].wall);
		snprintf(op, sizeof(op), "wakeups_per_s_s%llu", span_ticks);
		emit_v("spread", vs[k]->name, n, op, v, m);
	}
out:
	kfree(res);
	vfree(off);
	vfree(arr);
}

/* ---- suite: late (lateness distribution) --------------------------------------- */

/*
 * fired - expires for every callback recorded while late_rec is set:
 * in ns against the expiry asked for, and in the implementation's own
 * ticks (twheel: whole ticks of tw_tick_ns; timer_list: jiffies past
 * timer->expires; hrtimer: none).
 *
 * Early means before the expiry in the implementation's own terms: for
 * twheel and hrtimer the ns asked for, for timer_list timer->expires.  A
 * timer_list timer that fires at its jiffy but before the ns expiry the
 * benchmark converted to that jiffy (lat_lag, by at most lat_lag_ns) shows
 * that jiffies lagged the clock when it was armed, which the jiffies
 * offset spread of var_populate() measures; it is reported, not counted early.
 */
static bool late_rec;
static u64 *late_exp;		/* by timer index: the expiry asked for */
static u64 *lat_ns, *lat_tk;
static atomic_long_t lat_nr, lat_early, lat_lag;
static atomic64_t lat_lag_ns;
static int late_kind;

static void late_fired(union btimer *t)
{
	u64 now = ktime_get_ns(), exp = late_exp[t - cur_arr];
	long c;

	if (!READ_ONCE(late_rec))
		return;
	c = atomic_long_inc_return(&lat_nr) - 1;
	if (c >= late_cap)
		return;
	if (late_kind == IMPL_TL && time_before(jiffies, t->tl.expires))
		atomic_long_inc(&lat_early);
	if (now < exp) {
		if (late_kind == IMPL_TL) {
			s64 old = atomic64_read(&lat_lag_ns);

			atomic_long_inc(&lat_lag);
			while (old < (s64)(exp - now) &&
			       !atomic64_try_cmpxchg(&lat_lag_ns, &old, exp - now))
				;
		} else {
			atomic_long_inc(&lat_early);
		}
		now = exp;
	}
	lat_ns[c] = now - exp;
	if (late_kind == IMPL_TL)
		lat_tk[c] = jiffies - t->tl.expires;
	else
		lat_tk[c] = div64_u64(now - exp, tw_tick_ns);
}

enum { LATE_IDLE, LATE_LOAD, LATE_BURST, LATE_NR };
static const char *const late_scen[LATE_NR] = { "idle", "load", "burst" };
enum { LQ_P50, LQ_P99, LQ_MAX, LQ_NR };
static const char *const lq_name[LQ_NR] = { "p50", "p99", "max" };
static const unsigned int lq_pct[LQ_NR] = { 50, 99, 100 };

/*
 * One scenario on one variant; @q[0..LQ_NR) the ns quantiles,
 * @q[LQ_NR..2 LQ_NR) the tick quantiles.  idle: @n timers due uniformly
 * over late_idle_ms, all recorded; load: @n due uniformly over 10^4
 * ticks, those that fire in late_win_ms after arming is over recorded;
 * burst: @n all due at one instant, all recorded.
 */
static int late_one(const struct variant *v, union btimer *arr, unsigned long n,
		    int scen, u64 *q)
{
	u64 span, lead, deadline, now, base;
	unsigned long i, cnt;
	unsigned int k;

	pin_to(bench_cpu);
	pinned = true;
	cb_mode = CB_LATE;
	late_kind = v->impl;
	cur_arr = arr;
	WRITE_ONCE(late_rec, false);
	atomic_long_set(&lat_nr, 0);
	atomic_long_set(&lat_early, 0);
	atomic_long_set(&lat_lag, 0);
	atomic64_set(&lat_lag_ns, 0);
	jiffy_off_reset();
	if (var_setup(v, arr, n)) {
		pinned = false;
		return -ENOMEM;
	}
	span = scen == LATE_IDLE ? (u64)late_idle_ms * NSEC_PER_MSEC :
	       scen == LATE_LOAD ? 10000 * tw_tick_ns : 0;
	/* idle and burst: all armed before the first is due */
	lead = scen == LATE_LOAD ? 50 * NSEC_PER_MSEC :
	       max_t(u64, 100 * NSEC_PER_MSEC, n * 10000ULL);
	for (i = 0; i < n; i++)
		late_exp[i] = span ? rnd() % span : 0;
	now = ktime_get_ns();
	base = now + lead;
	for (i = 0; i < n; i++)
		late_exp[i] += base;
	if (scen != LATE_LOAD)
		WRITE_ONCE(late_rec, true);
	var_populate(v, arr, late_exp, n, 0);
	pin_to(other_cpu);
	if (scen == LATE_LOAD) {
		msleep(20);
		WRITE_ONCE(late_rec, true);
		msleep(late_win_ms);
		WRITE_ONCE(late_rec, false);
	} else {
		deadline = base + span + 10 * NSEC_PER_SEC;
		while (atomic_long_read(&lat_nr) < n && ktime_get_ns() < deadline)
			usleep_range(5000, 6000);
		if (ktime_get_ns() < base)
			pr_info("note: late %s %s n=%lu: recording began late\n",
				late_scen[scen], v->name, n);
	}
	pin_to(bench_cpu);
	var_teardown(v, arr, n);
	pinned = false;
	cnt = min_t(unsigned long, atomic_long_read(&lat_nr), late_cap);
	if (atomic_long_read(&lat_early))
		pr_info("note: late %s %s n=%lu: %ld fired early\n", late_scen[scen],
			v->name, n, atomic_long_read(&lat_early));
	if (atomic_long_read(&lat_lag))
		pr_info("note: late %s %s n=%lu: %ld at their jiffy but before the ns expiry, by up to %lld ns; jiffies offset spread while arming %lld ns (one jiffy: %lu)\n",
			late_scen[scen], v->name, n, atomic_long_read(&lat_lag),
			atomic64_read(&lat_lag_ns), jiffy_off_max - jiffy_off_min,
			TICK_NSEC);
	if (!cnt)
		return -ENODATA;
	sort(lat_ns, cnt, sizeof(u64), cmp_u64, NULL);
	sort(lat_tk, cnt, sizeof(u64), cmp_u64, NULL);
	for (k = 0; k < LQ_NR; k++) {
		q[k] = lat_ns[(cnt - 1) * lq_pct[k] / 100];
		q[LQ_NR + k] = lat_tk[(cnt - 1) * lq_pct[k] / 100];
	}
	return 0;
}

static void late_suite(void)
{
	const unsigned long scen_n[LATE_NR] = { late_idle_n, late_load_n, late_burst_n };
	const struct variant *vs[NVAR];
	unsigned int nv = variants_pick(late_impls, vs, true), r, k, x, ok[NVAR];
	u64 (*q)[MAX_REPS][2 * LQ_NR], v[MAX_REPS];
	unsigned long nmax = max3(late_idle_n, late_load_n, late_burst_n);
	union btimer *arr;
	char op[48];
	int scen;

	arr = vzalloc(array_size(nmax, sizeof(*arr)));
	late_exp = vmalloc(array_size(nmax, sizeof(u64)));
	lat_ns = vmalloc(array_size(late_cap, sizeof(u64)));
	lat_tk = vmalloc(array_size(late_cap, sizeof(u64)));
	q = kcalloc(NVAR, sizeof(*q), GFP_KERNEL);
	if (!arr || !late_exp || !lat_ns || !lat_tk || !q || !nv) {
		pr_err("late: out of memory\n");
		goto out;
	}
	for (scen = 0; scen < LATE_NR; scen++) {
		unsigned long n = scen_n[scen];

		if (!n)
			continue;
		memset(ok, 0, sizeof(ok));
		for (r = 0; r < reps; r++)
			for (k = 0; k < nv; k++) {
				x = rep_order(r, k, nv);
				if (!late_one(vs[x], arr, n, scen, q[x][ok[x]]))
					ok[x]++;
			}
		for (k = 0; k < nv; k++)
			for (x = 0; x < 2 * LQ_NR; x++) {
				if (x >= LQ_NR && vs[k]->impl == IMPL_HR)
					break;
				for (r = 0; r < ok[k]; r++)
					v[r] = q[k][r][x] * 1000;
				snprintf(op, sizeof(op), "%s_%s_%s", late_scen[scen],
					 lq_name[x % LQ_NR], x < LQ_NR ? "ns" : "ticks");
				emit_v("late", vs[k]->name, n, op, v, ok[k]);
			}
	}
out:
	cb_mode = CB_COUNT;
	cur_arr = NULL;
	kfree(q);
	vfree(lat_tk);
	vfree(lat_ns);
	vfree(late_exp);
	late_exp = NULL;
	vfree(arr);
}

/* ---- suite: ratas (the Ratas benchmark's workload, event driven) --------------- */

/*
 * After the benchmark of the Ratas blog post: work units of ten timers of
 * five kinds, by slot in the unit:
 *   0-1  short (about ratas_short_ms, 0.8-1.2x by unit, +-10 % jitter):
 *        re-armed by their own callback, almost always executed; each
 *        run is the unit's work, which drives the other kinds
 *   2    long, set once at the start (due in the second half of the
 *        active phase), executed
 *   3-5  long (10 s), pushed back to now + 10 s by every short run of
 *        the unit: never executed
 *   6-7  medium (200-600 ms), started by one short run in four when
 *        idle: executed every time they are started
 *   8-9  medium (300-900 ms), touched by one short run in four: started
 *        when idle, else moved to half its remaining time or cancelled
 * The units' different periods vary the access pattern over time.  All
 * of it runs in the timers' own callbacks on the benchmark CPU (as a
 * protocol stack's timers do), for ratas_ms; then the short timers stop
 * re-arming and the run goes on idle for ratas_idle_ms with the pushed
 * timers still pending.  Measured on the benchmark CPU from outside:
 * busy time (snap_cpu()), timer + hrtimer softirqs, and for twheel its
 * wakeups (twheel_get_stats()).
 */
#define RATAS_UNIT 10

static bool ratas_stop;
static int ratas_impl;
static u64 *ratas_exp;
static atomic_long_t ratas_ops;

static void ratas_arm(union btimer *t, u64 exp, u64 now, unsigned long nj)
{
	ratas_exp[t - cur_arr] = exp;
	arm_abs(ratas_impl, t, exp, now, nj, 0);
	atomic_long_inc(&ratas_ops);
}

static u64 ratas_period(unsigned long u)
{
	return (u64)ratas_short_ms * NSEC_PER_MSEC * (8 + u % 5) / 10;
}

static void ratas_fired(union btimer *t)
{
	unsigned long i = t - cur_arr, u = i / RATAS_UNIT, nj;
	union btimer *base = &cur_arr[u * RATAS_UNIT], *o;
	u64 now, h, p;

	if (i % RATAS_UNIT >= 2 || READ_ONCE(ratas_stop))
		return;
	now_pair(&now, &nj);
	h = (i + 1) * 0x9E3779B97F4A7C15ULL ^ now;
	h ^= h >> 29;
	h *= 0xBF58476D1CE4E5B9ULL;
	h ^= h >> 32;
	p = ratas_period(u);
	ratas_arm(t, now + p - p / 10 + h % (p / 5 + 1), now, nj);
	ratas_arm(&base[3 + (h >> 20) % 3], now + 10 * NSEC_PER_SEC, now, nj);
	if (!((h >> 24) & 3)) {
		o = &base[6 + ((h >> 26) & 1)];
		if (!b_pending(ratas_impl, o))
			ratas_arm(o, now + (200 + (h >> 32) % 401) * NSEC_PER_MSEC, now, nj);
	}
	if (!((h >> 28) & 3)) {
		o = &base[8 + ((h >> 30) & 1)];
		if (!b_pending(ratas_impl, o)) {
			ratas_arm(o, now + (300 + (h >> 40) % 601) * NSEC_PER_MSEC, now, nj);
		} else if ((h >> 50) & 1 && ratas_exp[o - cur_arr] > now) {
			ratas_arm(o, now + (ratas_exp[o - cur_arr] - now) / 2, now, nj);
		} else {
			b_cancel(ratas_impl, o);
			atomic_long_inc(&ratas_ops);
		}
	}
}

enum { RT_CPU, RT_EVENTS, RT_SOFTIRQS, RT_WAKEUPS, RT_WALL, RT_NR };

/* One run; @a active-phase figures, @z idle-phase figures. */
static int ratas_one(const struct variant *v, union btimer *arr, unsigned long units,
		     u64 *a, u64 *z)
{
	unsigned long n = units * RATAS_UNIT, i, nj;
	struct twheel_stats s0 = {}, s1 = {}, s2 = {};
	struct cpu_snap c0, c1, c2;
	long ev0, ev1;
	u64 now;

	pin_to(bench_cpu);
	pinned = true;
	cb_mode = CB_RATAS;
	ratas_impl = v->impl;
	cur_arr = arr;
	WRITE_ONCE(ratas_stop, false);
	atomic_long_set(&cb_count, 0);
	atomic_long_set(&ratas_ops, 0);
	if (var_setup(v, arr, n)) {
		pinned = false;
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		unsigned int slot = i % RATAS_UNIT;

		if (!(i & 255)) {
			cond_resched();
			now_pair(&now, &nj);
		}
		if (slot < 2)
			ratas_arm(&arr[i], now + 50 * NSEC_PER_MSEC +
				  rnd() % ratas_period(i / RATAS_UNIT), now, nj);
		else if (slot == 2)
			ratas_arm(&arr[i], now + (u64)ratas_ms * NSEC_PER_MSEC *
				  rnd_range(50, 100) / 100, now, nj);
		else if (slot < 6)
			ratas_arm(&arr[i], now + 10 * NSEC_PER_SEC, now, nj);
	}
	pin_to(other_cpu);
	msleep(20);
	if (v->impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s0);
	ev0 = atomic_long_read(&cb_count) + atomic_long_read(&ratas_ops);
	snap(&c0);
	msleep(ratas_ms);
	WRITE_ONCE(ratas_stop, true);
	snap(&c1);
	ev1 = atomic_long_read(&cb_count) + atomic_long_read(&ratas_ops);
	if (v->impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s1);
	msleep(ratas_idle_ms);
	snap(&c2);
	if (v->impl == IMPL_TWHEEL)
		twheel_get_stats(cur_wheel, &s2);
	pin_to(bench_cpu);
	var_teardown(v, arr, n);
	pinned = false;
	cur_arr = NULL;
	cb_mode = CB_COUNT;
	a[RT_CPU] = snap_cpu(&c0, &c1);
	a[RT_EVENTS] = ev1 - ev0;
	a[RT_SOFTIRQS] = snap_softirqs(&c0, &c1);
	a[RT_WAKEUPS] = s1.wakeups - s0.wakeups;
	a[RT_WALL] = snap_wall(&c0, &c1);
	z[RT_CPU] = snap_cpu(&c1, &c2);
	z[RT_EVENTS] = 0;
	z[RT_SOFTIRQS] = snap_softirqs(&c1, &c2);
	z[RT_WAKEUPS] = s2.wakeups - s1.wakeups;
	z[RT_WALL] = snap_wall(&c1, &c2);
	return 0;
}

static void ratas_units_n(unsigned long units)
{
	const struct variant *vs[NVAR];
	unsigned int nv = variants_pick(ratas_impls, vs, false), r, k, ok[NVAR] = {};
	u64 (*a)[MAX_REPS][RT_NR], (*z)[MAX_REPS][RT_NR], v[MAX_REPS];
	unsigned long n = units * RATAS_UNIT;
	union btimer *arr;

	if (!units || !nv || !cpu_time_ok)
		return;
	arr = vzalloc(array_size(n, sizeof(*arr)));
	ratas_exp = vzalloc(array_size(n, sizeof(u64)));
	a = kcalloc(NVAR, sizeof(*a), GFP_KERNEL);
	z = kcalloc(NVAR, sizeof(*z), GFP_KERNEL);
	if (!arr || !ratas_exp || !a || !z) {
		pr_err("ratas units=%lu: out of memory\n", units);
		goto out;
	}
	for (r = 0; r < reps; r++)
		for (k = 0; k < nv; k++) {
			unsigned int x = rep_order(r, k, nv);

			if (!ratas_one(vs[x], arr, units, a[x][ok[x]], z[x][ok[x]]))
				ok[x]++;
		}
	for (k = 0; k < nv; k++) {
		const char *name = vs[k]->name;
		unsigned int m = ok[k];
		u64 bg;

		for (r = 0; r < m; r++)
			v[r] = per(a[k][r][RT_CPU], a[k][r][RT_EVENTS]);
		emit_v("ratas", name, units, "cpu_ns_per_event", v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(a[k][r][RT_EVENTS], a[k][r][RT_WALL]);
		emit_v("ratas", name, units, "events_per_s", v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(a[k][r][RT_CPU], a[k][r][RT_WALL]);
		emit_v("ratas", name, units, "cpu_ns_per_s", v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(z[k][r][RT_CPU], z[k][r][RT_WALL]);
		emit_v("ratas", name, units, "idle_cpu_ns_per_s", v, m);
		/* softirqs per s above the background's */
		for (r = 0; r < m; r++) {
			bg = bg_softirqs_per_s * 1000;
			v[r] = rate(a[k][r][RT_SOFTIRQS], a[k][r][RT_WALL]);
			v[r] = v[r] > bg ? v[r] - bg : 0;
		}
		emit_v("ratas", name, units, "softirqs_per_s", v, m);
		for (r = 0; r < m; r++) {
			bg = bg_softirqs_per_s * 1000;
			v[r] = rate(z[k][r][RT_SOFTIRQS], z[k][r][RT_WALL]);
			v[r] = v[r] > bg ? v[r] - bg : 0;
		}
		emit_v("ratas", name, units, "idle_softirqs_per_s", v, m);
		if (vs[k]->impl != IMPL_TWHEEL)
			continue;
		for (r = 0; r < m; r++)
			v[r] = rate(a[k][r][RT_WAKEUPS], a[k][r][RT_WALL]);
		emit_v("ratas", name, units, "wakeups_per_s", v, m);
		for (r = 0; r < m; r++)
			v[r] = rate(z[k][r][RT_WAKEUPS], z[k][r][RT_WALL]);
		emit_v("ratas", name, units, "idle_wakeups_per_s", v, m);
	}
out:
	kfree(z);
	kfree(a);
	vfree(ratas_exp);
	ratas_exp = NULL;
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
	emit_per("prims", "kernel", 0, "slab_account_alloc_free", v, nr, PRIM_OBJS);
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
	emit_per("prims", "kernel", 0, "xa_alloc_cyclic_erase", v, nr, PRIM_OBJS);
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
	emit_per("prims", "kernel", 0, "div_u64", v, nr, loops);
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++)
			sum += ktime_get_ns();
		v[r] = t_end(t0);
	}
	emit_per("prims", "kernel", 0, "ktime_get", v, nr, loops);
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++) {
			spin_lock_irqsave(&lock, flags);
			spin_unlock_irqrestore(&lock, flags);
		}
		v[r] = t_end(t0);
	}
	emit_per("prims", "kernel", 0, "lock_irqsave_pair", v, nr, loops);
	for (r = 0; r < nr; r++) {
		t0 = t_begin();
		for (i = 0; i < loops; i++) {
			hlist_add_head(&node, &head);
			hlist_del_init(&node);
		}
		v[r] = t_end(t0);
	}
	emit_per("prims", "kernel", 0, "hlist_add_del", v, nr, loops);
	prims_slab_xa(v, nr);
	/* keep @sum alive */
	if (sum == 42)
		pr_info("%s: %llu\n", __func__, sum);
}

/* ---- driver -------------------------------------------------------------------------- */

/* Log how long a suite took, for estimating full runs. */
static void suite_time(const char *suite, u64 *t)
{
	u64 now = ktime_get_ns();

	if (listed(suites, suite))
		pr_info("time: %s %llu ms\n", suite, div_u64(now - *t, NSEC_PER_MSEC));
	*t = now;
}

static int __init bench_init(void)
{
	bool want[IMPL_NR], want_ops[IMPL_NR];
	int i, k, ret;
	u64 t0 = ktime_get_ns(), ts;

	if (!batch || !reps || min_ms > max_ms || mix_n < 8 || !sc_pairs)
		return -EINVAL;
	reps = min_t(uint, reps, MAX_REPS);
	rng_state = seed ?: 1;
	for (i = 0; i < IMPL_NR; i++) {
		want_ops[i] = listed(impls, impl_name[i]);
		want[i] = want_ops[i] && !has_slack(i);
	}

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
	/* the private wheels' geometry, for the reports' headings */
	emit("wheel", "twheel", 0, "tick_ns", (u64)tw_tick_ns * 1000);
	if (tw_bits < 32)
		emit("wheel", "twheel", 0, "slots", BIT_ULL(tw_bits) * 1000);

	if (listed(suites, "prims"))
		prims();

	/* warm up code paths and caches; results discarded */
	quiet = true;
	ops_n(want_ops, 1000, 0, false);
	quiet = false;
	memset(populate_ns, 0, sizeof(populate_ns));
	ts = ktime_get_ns();

	if (listed(suites, "ops"))
		for (k = 0; k < ns_count; k++)
			ops_n(want_ops, ns[k], k, false);

	suite_time("ops", &ts);

	if (listed(suites, "ops_short"))
		for (k = 0; k < ns_count; k++)
			ops_n(want_ops, ns[k], k, true);

	suite_time("ops_short", &ts);

	if (listed(suites, "fire"))
		cpu_background("fire", 200);
	if (listed(suites, "fire"))
		for (k = 0; k < ns_count; k++)
			if (ns[k] <= fire_max)
				fire_n(want, ns[k], k);

	suite_time("fire", &ts);

	if (listed(suites, "spread"))
		cpu_background("spread", 200);
	if (listed(suites, "spread"))
		for (i = 0; i < spread_ticks_count; i++)
			for (k = 0; k < ns_count; k++)
				if (ns[k] <= spread_max)
					spread_n(ns[k], spread_ticks[i]);

	suite_time("spread", &ts);

	if (listed(suites, "late"))
		late_suite();
	suite_time("late", &ts);

	if (listed(suites, "setcancel"))
		for (k = 0; k < sc_ns_count; k++)
			setcancel_n(want, sc_ns[k]);

	suite_time("setcancel", &ts);

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
		tick_suite();
		if (tick_probe_ok)
			unregister_kretprobe(&tick_probe);
		vfree(tick_samples);
		tick_samples = NULL;
	}

	suite_time("tick", &ts);

	if (listed(suites, "wakeups"))
		wakeups_suite();

	suite_time("wakeups", &ts);

	if (listed(suites, "mixed"))
		mixed_suite(want);

	suite_time("mixed", &ts);

	if (listed(suites, "ratas"))
		cpu_background("ratas", 200);
	if (listed(suites, "ratas"))
		for (k = 0; k < ratas_units_count; k++)
			ratas_units_n(ratas_units[k]);
	suite_time("ratas", &ts);

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
