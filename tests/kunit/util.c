// SPDX-License-Identifier: GPL-2.0
/*
 * The facility suites' shared helpers: see util.h.
 */
#include <kunit/resource.h>
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/twheel.h>
#include <linux/wait.h>

#include "util.h"

/* ------------------------------------------------------------------------ */
/* Shared per-case state, probes and their callbacks                       */
/* ------------------------------------------------------------------------ */

/*
 * Record one run of @p's callback.  Callbacks of one timer never run
 * concurrently, so the plain fields need no lock; the fully ordered
 * atomic_inc_return() publishes them to a test thread that reads
 * ctx->fired with acquire semantics.
 */
void twk_record(struct twk_probe *p)
{
	ktime_t now = ktime_get();
	ktime_t exp = twheel_timer_expires(&p->timer);

	if (now < exp)
		atomic_inc(&p->ctx->early);
	if (!atomic_read(&p->fires)) {
		p->fired_at = now;
		p->exp_at_fire = exp;
	}
	atomic_inc_return(&p->fires);
	atomic_inc_return(&p->ctx->fired);
	wake_up(&p->ctx->wq);
}

void twk_cb_record(struct twheel_timer *timer)
{
	twk_record(twk_of(timer));
}

/* Counts only: with concurrent modifies the expiry may change under it. */
void twk_cb_count(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	atomic_inc_return(&p->fires);
	atomic_inc_return(&p->ctx->fired);
}

struct twk_ctx *twk_ctx_new(struct kunit *test)
{
	struct twk_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	init_waitqueue_head(&ctx->wq);
	init_completion(&ctx->done);
	return ctx;
}

/* Wait until at least @n callbacks ran; false on timeout. */
bool twk_wait_fired(struct twk_ctx *ctx, int n, unsigned int ms)
{
	return wait_event_timeout(ctx->wq, atomic_read_acquire(&ctx->fired) >= n,
				  msecs_to_jiffies(ms)) > 0;
}

struct twheel_stats twk_stats(struct twheel *w)
{
	struct twheel_stats st;

	twheel_get_stats(w, &st);
	return st;
}

u64 twk_wakeups(struct twheel *w)
{
	return twk_stat(w, wakeups);
}

/*
 * Expect every one of @nr records armed (@ret 0), then wait until all @nr
 * probes fired and expect each once, none before its @want, none early.
 */
void twk_expect_each_fired_once(struct kunit *test, struct twk_ctx *ctx,
				const struct twk_probe *p, const int *ret,
				int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		KUNIT_EXPECT_EQ_MSG(test, ret[i], 0, "probe %d", i);
	KUNIT_ASSERT_TRUE(test, twk_wait_fired(ctx, nr, TWK_TIMEOUT_MS));
	for (i = 0; i < nr; i++) {
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&p[i].fires), 1, "probe %d", i);
		KUNIT_EXPECT_GE_MSG(test, p[i].fired_at, p[i].want, "probe %d", i);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&ctx->early), 0);
}

/* Uniform in [0, @n) for @n < 2^32, without a division. */
u64 twk_rand(struct rnd_state *rs, u64 n)
{
	if (WARN_ON_ONCE(n > U32_MAX))
		n = U32_MAX;
	return ((u64)prandom_u32_state(rs) * n) >> 32;
}

/* ------------------------------------------------------------------------ */
/* Test-managed wheels, timers and threads                                 */
/* ------------------------------------------------------------------------ */

static int twk_wheel_init(struct kunit_resource *res, void *context)
{
	const struct twk_wheel_args *a = context;
	struct twheel *w = a->flags || a->engine ?
		twheel_create_flags(a->tick_ns, a->bits, a->budget,
				    a->engine, a->flags) :
		twheel_create(a->tick_ns, a->bits, a->budget);

	if (IS_ERR(w))
		return PTR_ERR(w);
	res->data = w;
	return 0;
}

static void twk_wheel_free(struct kunit_resource *res)
{
	twheel_destroy(res->data);
}

/* A wheel created from @a, destroyed at the end of the case. */
struct twheel *twk_wheel_args(struct kunit *test, struct twk_ctx *ctx,
			      struct twk_wheel_args a)
{
	u64 tick_ns = a.tick_ns;
	unsigned int bits = a.bits, budget = a.budget;
	struct twheel *w;

	w = kunit_alloc_resource(test, twk_wheel_init, twk_wheel_free,
				 GFP_KERNEL, &a);
	KUNIT_ASSERT_NOT_NULL_MSG(test, w, "twheel_create(%llu, %u, %u)",
				  tick_ns, bits, budget);
	if (ctx) {
		ctx->wheel = w;
		ctx->tick_ns = tick_ns;
	}
	return w;
}

/* A wheel destroyed at the end of the case. */
struct twheel *twk_wheel(struct kunit *test, struct twk_ctx *ctx,
			 u64 tick_ns, unsigned int bits,
			 unsigned int budget)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, bits, budget, 0 });
}

/* The same with a single base (TWHEEL_CREATE_SINGLE_BASE). */
struct twheel *twk_wheel_single(struct kunit *test, struct twk_ctx *ctx,
				u64 tick_ns, unsigned int bits,
				unsigned int budget)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, bits, budget, TWHEEL_CREATE_SINGLE_BASE });
}

struct twk_group {
	struct twk_probe *probes;
	unsigned int nr;
};

static void twk_group_free(struct kunit_resource *res)
{
	struct twk_group *g = res->data;
	unsigned int i;

	/* Shut down, not just cancel: a self re-arming callback stops too. */
	for (i = 0; i < g->nr; i++)
		twheel_timer_shutdown_sync(&g->probes[i].timer);
	kvfree(g->probes);
	kfree(g);
}

/* @nr probes on @w with callback @fn, shut down at the end of the case. */
struct twk_probe *twk_probes(struct kunit *test, struct twk_ctx *ctx,
			     struct twheel *w, unsigned int nr,
			     void (*fn)(struct twheel_timer *))
{
	struct twk_group *g;
	unsigned int i;

	g = kzalloc(sizeof(*g), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, g);
	g->probes = kvcalloc(nr, sizeof(*g->probes), GFP_KERNEL);
	if (!g->probes) {
		kfree(g);
		KUNIT_FAIL_AND_ABORT(test, "no memory for %u probes", nr);
	}
	g->nr = nr;
	for (i = 0; i < nr; i++) {
		struct twk_probe *p = &g->probes[i];

		p->ctx = ctx;
		twheel_timer_setup(&p->timer, w, fn, 0);
	}
	if (!kunit_alloc_resource(test, NULL, twk_group_free, GFP_KERNEL, g)) {
		kvfree(g->probes);
		kfree(g);
		KUNIT_FAIL_AND_ABORT(test, "cannot register probes");
	}
	return g->probes;
}

static void twk_threads_free(struct kunit_resource *res)
{
	struct twk_threads *t = res->data;
	unsigned int i;

	for (i = 0; i < t->nr; i++) {
		if (!t->tasks[i])
			continue;
		kthread_stop(t->tasks[i]);
		put_task_struct(t->tasks[i]);
	}
	kfree(t->tasks);
	kfree(t);
}

/* Room for @nr kthreads, stopped at the end of the case. */
struct twk_threads *twk_threads(struct kunit *test, unsigned int nr)
{
	struct twk_threads *t;

	t = kzalloc(sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->tasks = kcalloc(nr, sizeof(*t->tasks), GFP_KERNEL);
	if (!t->tasks) {
		kfree(t);
		KUNIT_FAIL_AND_ABORT(test, "no memory for %u threads", nr);
	}
	t->nr = nr;
	if (!kunit_alloc_resource(test, NULL, twk_threads_free, GFP_KERNEL, t)) {
		kfree(t->tasks);
		kfree(t);
		KUNIT_FAIL_AND_ABORT(test, "cannot register threads");
	}
	return t;
}

/* Create slot @i of @t bound to @cpu, not yet woken. */
struct task_struct *twk_thread_create(struct kunit *test,
				      struct twk_threads *t,
				      unsigned int i, unsigned int cpu,
				      int (*fn)(void *), void *data)
{
	struct task_struct *task;

	task = kthread_create(fn, data, "twk/%u", i);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(task), "kthread_create: %ld",
			       PTR_ERR(task));
	kthread_bind(task, cpu);
	get_task_struct(task);
	t->tasks[i] = task;
	return task;
}

/* The end of every helper thread: idle until kthread_stop(). */
void twk_idle_until_stop(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

/* ------------------------------------------------------------------------ */
/* Two CPUs: code run on a chosen one (the smp, batch and stress suites)    */
/* ------------------------------------------------------------------------ */

/* wait_for_completion_timeout() in ms: the jiffies left, 0 on timeout. */
unsigned long twk_wait_done(struct completion *done, unsigned int ms)
{
	return wait_for_completion_timeout(done, msecs_to_jiffies(ms));
}

void twk_two_cpus(struct kunit *test, unsigned int *a, unsigned int *b)
{
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two online CPUs");
	*a = cpumask_first(cpu_online_mask);
	*b = cpumask_next(*a, cpu_online_mask);
}

/* One CPU's base's counters; every field U64_MAX if there is none. */
struct twheel_stats twk_cpu_stats(struct twheel *w, unsigned int cpu)
{
	struct twheel_stats st;

	if (twheel_get_cpu_stats(w, cpu, &st))
		memset(&st, 0xff, sizeof(st));
	return st;
}

u64 twk_stat_at(struct twheel *w, int cpu, size_t off)
{
	struct twheel_stats st;

	st = cpu < 0 ? twk_stats(w) : twk_cpu_stats(w, cpu);
	return *(u64 *)((char *)&st + off);
}

/* A timer armed with twk_on_cpu(): what to do and what it returned. */
struct twk_call {
	struct twk_probe *p;
	ktime_t expires;
	int op;			/* 0 start, 1 modify, 2 cancel, 3 cancel_sync */
	int ret;
};

static int twk_call_fn(void *data)
{
	struct twk_call *c = data;
	struct twheel_timer *t = &c->p->timer;

	switch (c->op) {
	case 0:
		c->ret = twheel_timer_start(t, c->expires, 0, TWHEEL_MODE_ABS);
		break;
	case 1:
		c->ret = twheel_timer_modify(t, c->expires, 0, TWHEEL_MODE_ABS);
		break;
	case 2:
		c->ret = twheel_timer_cancel(t);
		break;
	default:
		c->ret = twheel_timer_cancel_sync(t);
		break;
	}
	return 0;
}

/* Run @op on @p's timer on @cpu and return what it returned. */
int twk_on_cpu(struct kunit *test, unsigned int cpu,
	       struct twk_probe *p, int op, ktime_t expires)
{
	struct twk_call c = { .p = p, .expires = expires, .op = op };

	KUNIT_ASSERT_EQ(test, smp_call_on_cpu(cpu, twk_call_fn, &c, false), 0);
	return c.ret;
}

/* As twk_cb_record, and which CPU ran the callback (in @data). */
void twk_cb_cpu(struct twheel_timer *timer)
{
	struct twk_probe *p = twk_of(timer);

	p->data = raw_smp_processor_id();
	twk_record(p);
}

/* A 16-slot wheel with budget 64 and @flags, destroyed after the case. */
struct twheel *twk_wheel_flags(struct kunit *test, struct twk_ctx *ctx,
			       u64 tick_ns, unsigned int flags)
{
	return twk_wheel_args(test, ctx, (struct twk_wheel_args){
		tick_ns, 4, 64, flags });
}
