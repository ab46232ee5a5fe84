// SPDX-License-Identifier: GPL-2.0
/*
 * wheel_prof - drive the pure wheel (src/wheel.c, built unchanged in
 * userspace against the kernel's tools/include) through the paths the
 * benchmarks time, for callgrind: instruction counts and simulated cache
 * misses per operation, free of the VM's noise.
 *
 *   wheel_prof tick N     N timers an hour out (1 ms ticks, 4096 slots);
 *                         advance tick by tick over one revolution: the
 *                         per-tick bookkeeping of Scheme 6
 *   wheel_prof fire N     N timers due in one tick; advance with the
 *                         facility's budget (4096), flag and unlink the
 *                         expired ones as twheel_tick/twheel_run_expired do
 *   wheel_prof ops N      N outstanding; 100000 insert + remove pairs at
 *                         random keys 1..60 s out, with the facility's
 *                         time-to-tick conversion (two 64-bit divisions)
 *
 * Only the functions named measure_* are meant to be counted
 * (valgrind --tool=callgrind --toggle-collect='measure_*').
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bitops.h>
#include <linux/compiler.h>

#include "wheel.h"
#include "prof_rng.h"

#define BITS	12
#define TICK_NS	1000000ULL
#define BUDGET	4096

struct timer {
	struct twheel_node node;
	unsigned int state;
};

static struct tw_wheel w;
static struct hlist_head slots[1 << BITS];
static unsigned long occupied[BITS_TO_LONGS(1 << BITS)];
static u64 low[1 << BITS];

static struct timer *make(unsigned long n)
{
	struct timer *t = calloc(n + 1, sizeof(*t));
	unsigned long i;

	if (!t)
		exit(1);
	for (i = 0; i <= n; i++)
		tw_node_init(&t[i].node);
	return t;
}

noinline void measure_tick(unsigned long ticks)
{
	struct hlist_head expired = HLIST_HEAD_INIT;
	unsigned long i;

	for (i = 0; i < ticks; i++)
		tw_wheel_advance(&w, w.clk + 1, BUDGET, &expired);
	if (!hlist_empty(&expired))
		abort();
}

noinline unsigned long measure_fire(void)
{
	unsigned long done = 0;

	while (w.count) {
		struct hlist_head expired = HLIST_HEAD_INIT;
		struct timer *t;

		tw_wheel_advance(&w, w.clk + 1, BUDGET, &expired);
		hlist_for_each_entry(t, &expired, node.entry)
			t->state |= 1;
		while (!hlist_empty(&expired)) {
			t = hlist_entry(expired.first, struct timer, node.entry);
			hlist_del_init(&t->node.entry);
			t->state &= ~1U;
			done++;
		}
	}
	return done;
}

/* twheel_time_to_tick(): what twheel_arm() computes twice per start. */
static noinline u64 to_tick(u64 t, u64 start, u32 tick_ns)
{
	return t <= start ? 0 : (t - start) / tick_ns;
}

noinline void measure_ops(struct timer *x, const u64 *exp,
					   unsigned long pairs, u64 start)
{
	unsigned long i;

	for (i = 0; i < pairs; i++) {
		u64 lo = to_tick(exp[i], start, TICK_NS);
		u64 hi = to_tick(exp[i] + 0, start, TICK_NS);

		lo = lo > w.clk ? lo : w.clk;
		hi = hi > lo ? hi : lo;
		tw_wheel_insert(&w, &x->node, tw_wheel_pick_key(lo, hi));
		tw_wheel_remove(&w, &x->node);
	}
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	struct timer *t;

	if (argc != 3) {
		fprintf(stderr, "usage: wheel_prof tick|fire|ops N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 0);
	t = make(n);
	tw_wheel_init(&w, slots, low, occupied, BITS, 0);
	if (!strcmp(argv[1], "tick")) {
		for (i = 0; i < n; i++)
			tw_wheel_insert(&w, &t[i].node, 3600000 + rnd() % 60000);
		measure_tick(1 << BITS);
		printf("tick: %lu timers, %u ticks, max_slot %lu\n", n, 1 << BITS,
		       w.max_slot);
	} else if (!strcmp(argv[1], "fire")) {
		for (i = 0; i < n; i++)
			tw_wheel_insert(&w, &t[i].node, 0);
		printf("fire: %lu expired of %lu\n", measure_fire(), n);
	} else if (!strcmp(argv[1], "ops")) {
		unsigned long pairs = 100000;
		u64 *exp = malloc(pairs * sizeof(*exp));
		u64 start = 1000000000ULL;

		for (i = 0; i < n; i++)
			tw_wheel_insert(&w, &t[i].node, 1000 + rnd() % 59000);
		for (i = 0; i < pairs; i++)
			exp[i] = start + 1000000000ULL + rnd() % 59000000000ULL;
		measure_ops(&t[n], exp, pairs, start);
		printf("ops: %lu outstanding, %lu insert+remove pairs\n", n, pairs);
		free(exp);
	} else {
		return 2;
	}
	free(t);
	return 0;
}
