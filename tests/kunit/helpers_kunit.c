// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite of the helpers of <linux/twheel.h> that a timer_list or
 * hrtimer user reaches for: twheel_timer_container_of() (as
 * timer_container_of()), twheel_timer_remaining() (as
 * hrtimer_get_remaining()) and twheel_timer_forward() (as
 * hrtimer_forward(), with its overrun count).
 *
 * The arithmetic of twheel_timer_forward() is checked on a table against
 * what hrtimer_forward() returns for the same expiry, now and interval;
 * the rest on a private wheel of 1 ms ticks, with real callbacks.  Waits
 * are bounded (HK_TIMEOUT_MS): a lost callback fails its case.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/jiffies.h>
#include <linux/twheel.h>

#define HK_TICK_NS	NSEC_PER_MSEC
#define HK_TIMEOUT_MS	5000

/* A user's structure with its timer inside, not at its start. */
struct hk_owner {
	u64 before;
	struct twheel_timer timer;
	struct completion done;
	unsigned int calls;
	ktime_t armed;		/* the expiry first armed */
	ktime_t fired[2];	/* twheel_fire_time() in each call */
	ktime_t forwarded_to;	/* twheel_timer_expires() after the forward */
	u64 forwarded;		/* twheel_timer_forward()'s return */
};

/* What the last callback's twheel_timer_container_of() gave. */
static struct hk_owner *hk_seen;

static struct twheel *hk_wheel(struct kunit *test)
{
	struct twheel *w = twheel_create(HK_TICK_NS, 8, 64);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_OR_NULL(w), "twheel_create(1 ms, 8, 64)");
	return w;
}

static bool hk_wait(struct hk_owner *o)
{
	return wait_for_completion_timeout(&o->done,
					   msecs_to_jiffies(HK_TIMEOUT_MS));
}

static void hk_done(struct kunit *test, struct twheel *w, struct hk_owner *o)
{
	twheel_timer_shutdown_sync(&o->timer);
	KUNIT_EXPECT_EQ(test, twheel_destroy(w), 0);
}

/* ---- twheel_timer_container_of() ---------------------------------------- */

static void hk_record_owner(struct twheel_timer *t)
{
	struct hk_owner *o = twheel_timer_container_of(o, t, timer);

	WRITE_ONCE(hk_seen, o);
	complete(&o->done);
}

static void container_of_gives_the_owner(struct kunit *test)
{
	struct hk_owner o = { 0 };
	struct hk_owner *p = NULL;
	struct twheel *w;

	KUNIT_EXPECT_PTR_EQ(test, twheel_timer_container_of(p, &o.timer, timer), &o);

	w = hk_wheel(test);
	init_completion(&o.done);
	WRITE_ONCE(hk_seen, NULL);
	twheel_timer_setup(&o.timer, w, hk_record_owner, 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&o.timer, ms_to_ktime(2), 0,
						 TWHEEL_MODE_REL), 0);
	KUNIT_EXPECT_TRUE_MSG(test, hk_wait(&o), "the callback did not run");
	KUNIT_EXPECT_PTR_EQ(test, READ_ONCE(hk_seen), &o);
	hk_done(test, w, &o);
}

/* ---- twheel_timer_remaining() ------------------------------------------- */

static void hk_nop(struct twheel_timer *t)
{
}

static void remaining_while_pending_only(struct kunit *test)
{
	struct hk_owner o = { 0 };
	struct twheel *w = hk_wheel(test);
	ktime_t left;

	twheel_timer_setup(&o.timer, w, hk_nop, 0);
	KUNIT_EXPECT_EQ(test, twheel_timer_remaining(&o.timer), 0);

	KUNIT_ASSERT_EQ(test, twheel_timer_start(&o.timer, ms_to_ktime(10000), 0,
						 TWHEEL_MODE_REL), 0);
	left = twheel_timer_remaining(&o.timer);
	KUNIT_EXPECT_LE(test, left, ms_to_ktime(10000));
	/* a slow test VM may take a while between the two calls */
	KUNIT_EXPECT_GT(test, left, ms_to_ktime(9000));

	/* the expiry a modify gives, not the first one */
	KUNIT_ASSERT_GE(test, twheel_timer_modify(&o.timer, ms_to_ktime(20000), 0,
						  TWHEEL_MODE_REL), 0);
	left = twheel_timer_remaining(&o.timer);
	KUNIT_EXPECT_GT(test, left, ms_to_ktime(19000));

	KUNIT_EXPECT_EQ(test, twheel_timer_cancel(&o.timer), 1);
	KUNIT_EXPECT_EQ(test, twheel_timer_remaining(&o.timer), 0);
	hk_done(test, w, &o);
}

/*
 * On a CLOCK_BOOTTIME wheel the expiry is boot time, and so is the time it
 * is measured from.  The two clocks part only across a suspend, which the
 * test VMs cannot resume from, so this case checks the clock read against
 * its bounds rather than catching ktime_get() in the act.
 */
static void remaining_on_a_boottime_wheel(struct kunit *test)
{
	struct twheel_attr attr = {
		.size = sizeof(attr),
		.clockid = CLOCK_BOOTTIME,
		.tick_ns = HK_TICK_NS,
		.bits = 8,
		.budget = 64,
	};
	struct hk_owner o = { 0 };
	struct twheel *w = twheel_create_attr(&attr);
	ktime_t before, now, after, left;

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_OR_NULL(w), "twheel_create_attr(BOOTTIME)");
	before = ktime_get_boottime();
	now = twheel_clock_now(w);
	after = ktime_get_boottime();
	KUNIT_EXPECT_GE(test, now, before);
	KUNIT_EXPECT_LE(test, now, after);

	twheel_timer_setup(&o.timer, w, hk_nop, 0);
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&o.timer,
						 ktime_add_ms(after, 10000), 0,
						 TWHEEL_MODE_ABS), 0);
	left = twheel_timer_remaining(&o.timer);
	KUNIT_EXPECT_LE(test, left, ms_to_ktime(10000));
	KUNIT_EXPECT_GT(test, left, ms_to_ktime(9000));
	hk_done(test, w, &o);
}

/* ---- twheel_timer_forward() --------------------------------------------- */

struct forward_param {
	const char *name;
	s64 expires, now, interval;
	u64 ret;		/* what hrtimer_forward() returns */
	s64 expires_after;	/* and the expiry it leaves */
};

static const struct forward_param forward_params[] = {
	{ "expiry after now: nothing", 100, 50, 10, 0, 100 },
	{ "now at the expiry: one period", 100, 100, 10, 1, 110 },
	{ "within the first period", 100, 105, 10, 1, 110 },
	{ "now one period on: two", 100, 110, 10, 2, 120 },
	{ "three and a half periods late: four", 100, 135, 10, 4, 140 },
	{ "a whole number of periods late", 100, 130, 10, 4, 140 },
	{ "interval 0: nothing", 100, 500, 0, 0, 100 },
	{ "negative interval: nothing", 100, 500, -10, 0, 100 },
	{ "1 ms periods, a second late", 5000000, 1005000000, 1000000, 1001, 1006000000 },
	{ "far expiries", KTIME_MAX / 2, KTIME_MAX / 2 + 3 * 1000000000LL + 1,
	  1000000000LL, 4, KTIME_MAX / 2 + 4 * 1000000000LL },
};

static void forward_desc(const struct forward_param *p, char *desc)
{
	strscpy(desc, p->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(forward, forward_params, forward_desc);

static void forward_as_hrtimer_forward(struct kunit *test)
{
	const struct forward_param *p = test->param_value;
	struct twheel_timer t = { 0 };

	t.expires = p->expires;
	KUNIT_EXPECT_EQ(test, twheel_timer_forward(&t, p->now, p->interval), p->ret);
	KUNIT_EXPECT_EQ(test, twheel_timer_expires(&t), (ktime_t)p->expires_after);
	if (p->ret) {
		/* the first expiry after now, on the old expiry's phase */
		KUNIT_EXPECT_GT(test, t.expires, (ktime_t)p->now);
		KUNIT_EXPECT_LE(test, t.expires - p->interval, (ktime_t)p->now);
	}
}

/*
 * The pattern a periodic user writes: in the callback, forward past the
 * fire time and re-arm there.  Armed 10 ms in the past, the first call
 * forwards over at least 11 periods and keeps the phase; the second runs
 * at the forwarded expiry, never before.
 */
static void hk_forward_and_restart(struct twheel_timer *t)
{
	struct hk_owner *o = twheel_timer_container_of(o, t, timer);
	unsigned int call = o->calls++;

	o->fired[call] = twheel_fire_time(t);
	if (call == 0) {
		o->forwarded = twheel_timer_forward(t, o->fired[0], ms_to_ktime(1));
		o->forwarded_to = twheel_timer_expires(t);
		twheel_timer_restart(t, o->forwarded_to, 0, TWHEEL_MODE_ABS);
		return;
	}
	complete(&o->done);
}

static void forward_in_callback_keeps_the_phase(struct kunit *test)
{
	struct hk_owner o = { 0 };
	struct twheel *w = hk_wheel(test);

	init_completion(&o.done);
	twheel_timer_setup(&o.timer, w, hk_forward_and_restart, 0);
	o.armed = ktime_sub(ktime_get(), ms_to_ktime(10));
	KUNIT_ASSERT_EQ(test, twheel_timer_start(&o.timer, o.armed, 0,
						 TWHEEL_MODE_ABS), 0);
	KUNIT_ASSERT_TRUE_MSG(test, hk_wait(&o), "the re-armed timer did not fire again");
	KUNIT_EXPECT_EQ(test, o.calls, 2U);
	KUNIT_EXPECT_GE(test, o.forwarded, 11ULL);
	KUNIT_EXPECT_GT(test, o.forwarded_to, o.fired[0]);
	KUNIT_EXPECT_LE(test, ktime_sub(o.forwarded_to, ms_to_ktime(1)), o.fired[0]);
	KUNIT_EXPECT_EQ(test, ktime_sub(o.forwarded_to, o.armed),
			(ktime_t)o.forwarded * ms_to_ktime(1));
	KUNIT_EXPECT_GE(test, o.fired[1], o.forwarded_to);
	hk_done(test, w, &o);
}

static struct kunit_case twheel_helpers_cases[] = {
	KUNIT_CASE(container_of_gives_the_owner),
	KUNIT_CASE(remaining_while_pending_only),
	KUNIT_CASE(remaining_on_a_boottime_wheel),
	KUNIT_CASE_PARAM(forward_as_hrtimer_forward, forward_gen_params),
	KUNIT_CASE(forward_in_callback_keeps_the_phase),
	{}
};

static struct kunit_suite twheel_helpers_suite = {
	.name = "twheel_helpers",
	.test_cases = twheel_helpers_cases,
};

kunit_test_suite(twheel_helpers_suite);
