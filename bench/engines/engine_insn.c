// SPDX-License-Identifier: GPL-2.0
/*
 * engine_insn - the engines' instruction counts under callgrind, the engine
 * alone: src/wheel.c, src/hier.c, src/lawn.c and src/engine.c are linked
 * in as separate objects, as the facility calls them in the module (no
 * LTO), so that every engine entry point is a real call and callgrind's
 * inclusive cost of the calls the driver makes into the engine (insn.sh
 * sums them from the call arcs) counts the engine's instructions and
 * nothing of the driver's loop.  engine_prof.c is the other view: the
 * engines inlined into the driver, as the native benchmark builds them.
 *
 *   engine_insn sc ENGINE N R P    N timers with delays uniform in [1, R],
 *                                  then P remove + insert pairs of a
 *                                  random one at a new delay: start +
 *                                  cancel, case (b)
 *   engine_insn drain ENGINE N R   N timers uniform in [1, R], drained
 *                                  tickless (advance to the next expiry
 *                                  bound + 1): case (c); R = 1 has them
 *                                  all due at once
 *   engine_insn far ENGINE N       N timers 10..100 revolutions out and
 *                                  1,000 near ones re-armed on expiry,
 *                                  advanced tick by tick for 8
 *                                  revolutions: case (d)
 *
 * Only the functions named measure_* are meant to be counted (valgrind
 * --tool=callgrind --toggle-collect='measure_*'): the set-up is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kernel.h>

#include "engine.h"

#include "prof_rng.h"
#include "drain.h"

#define BITS		TWHEEL_BITS_DEFAULT
#define CLK0		1000
/* bench_engines.c's revolution for cases (d) and (e) */
#define REV		4096
#define NEAR		1000

static struct tw_engine e;
static struct twheel_node *nodes;

noinline void measure_sc(const u32 *pick, const u64 *key, unsigned long pairs)
{
	unsigned long i;

	for (i = 0; i < pairs; i++) {
		struct twheel_node *node = &nodes[pick[i]];

		tw_engine_remove(&e, node);
		tw_engine_insert(&e, node, key[i]);
	}
}

noinline u64 measure_drain(void)
{
	struct hlist_head expired = HLIST_HEAD_INIT;

	return drain_all(&e, &expired);
}

/* Tick by tick; the near timers (ids >= @far) are re-armed as they fire. */
noinline u64 measure_far(unsigned long far, unsigned long ticks)
{
	struct hlist_head expired = HLIST_HEAD_INIT;
	u64 n = 0, t;

	for (t = 0; t < ticks; t++) {
		u64 upto = tw_engine_clk(&e) + 1;
		unsigned int got;

		got = tw_engine_advance(&e, upto, 0, &expired);
		n += got;
		while (!hlist_empty(&expired)) {
			struct twheel_node *node;

			node = hlist_entry(expired.first, struct twheel_node,
					   entry);
			hlist_del_init(&node->entry);
			if (node - nodes >= far)
				tw_engine_insert(&e, node,
						 upto + 1 + rnd() % REV);
		}
	}
	return n;
}

static void fill(void *mem, enum twheel_engine kind, unsigned long n,
		 u64 lo, u64 r)
{
	unsigned long i;

	memset(mem, 0, tw_engine_mem_size(kind, BITS));
	tw_engine_init(&e, kind, mem, BITS, CLK0);
	for (i = 0; i < n; i++) {
		tw_node_init(&nodes[i]);
		tw_engine_insert(&e, &nodes[i], CLK0 + lo + rnd() % r);
	}
}

int main(int argc, char **argv)
{
	enum twheel_engine kind;
	unsigned long n, i, p = 0;
	void *mem;
	u64 r = 0, got;

	if (argc < 4)
		goto usage;
	if (!strcmp(argv[2], "hier"))
		kind = TWHEEL_ENGINE_HIER;
	else if (!strcmp(argv[2], "scheme6"))
		kind = TWHEEL_ENGINE_SCHEME6;
	else if (!strcmp(argv[2], "lawn"))
		kind = TWHEEL_ENGINE_LAWN;
	else
		goto usage;
	n = strtoul(argv[3], NULL, 0);
	if (argc > 4)
		r = strtoull(argv[4], NULL, 0);
	if (argc > 5)
		p = strtoul(argv[5], NULL, 0);
	if (!n)
		goto usage;
	mem = malloc(tw_engine_mem_size(kind, BITS));
	nodes = calloc(n + NEAR, sizeof(*nodes));
	if (!mem || !nodes)
		return 1;
	if (!strcmp(argv[1], "sc") && argc == 6 && r && p) {
		u32 *pick = malloc(p * sizeof(*pick));
		u64 *key = malloc(p * sizeof(*key));

		if (!pick || !key)
			return 1;
		for (i = 0; i < p; i++) {
			pick[i] = rnd() % n;
			key[i] = CLK0 + 1 + rnd() % r;
		}
		fill(mem, kind, n, 1, r);
		measure_sc(pick, key, p);
		printf("sc %s %lu %llu: %lu pairs\n", argv[2], n,
		       (unsigned long long)r, p);
		free(pick);
		free(key);
	} else if (!strcmp(argv[1], "drain") && argc == 5 && r) {
		fill(mem, kind, n, 1, r);
		got = measure_drain();
		if (got != n)
			return 1;
		printf("drain %s %lu %llu: %llu expiries\n", argv[2], n,
		       (unsigned long long)r, (unsigned long long)got);
	} else if (!strcmp(argv[1], "far") && argc == 4) {
		fill(mem, kind, n, 10 * REV, 90 * REV);
		for (i = n; i < n + NEAR; i++) {
			tw_node_init(&nodes[i]);
			tw_engine_insert(&e, &nodes[i], CLK0 + 1 + rnd() % REV);
		}
		got = measure_far(n, 8 * REV);
		printf("far %s %lu: %d ticks, %llu expiries\n", argv[2], n,
		       8 * REV, (unsigned long long)got);
	} else {
		goto usage;
	}
	free(nodes);
	free(mem);
	return 0;
usage:
	fprintf(stderr, "usage: engine_insn sc ENGINE N R P | drain ENGINE N R | far ENGINE N\n");
	return 2;
}
