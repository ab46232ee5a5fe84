// SPDX-License-Identifier: GPL-2.0
/*
 * engine_prof - drive one engine (src/hier.c, src/wheel.c or src/lawn.c
 * behind src/engine.h, built unchanged in userspace against the kernel's
 * tools/include) through two cases of the native benchmark, for callgrind:
 * instructions and mispredicted branches per operation, which the timings
 * of bench_engines cannot split.
 *
 *   engine_prof sc ENGINE N R     N timers with delays uniform in [1, R],
 *                                 then 10^6 pairs of remove + insert of a
 *                                 random one at a new delay: case (b)
 *   engine_prof drain ENGINE N R  N timers uniform in [1, R], drained
 *                                 tickless (advance to the next expiry
 *                                 bound + 1, as the facility's hrtimer
 *                                 does), 100 times: case (c)
 *
 * ENGINE is hier, scheme6 or lawn.  TWHEEL_PROF_CHUNK=M in the environment
 * caps the engine's moves per advance at M (tw_engine_set_chunk(), as the
 * facility sets TWHEEL_HOLD_MOVES).  Only the functions named measure_* are
 * meant to be counted (valgrind --tool=callgrind --branch-sim=yes
 * --toggle-collect='measure_*'); profile.sh divides by the operations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/kernel.h>

/* As in bench_engines.c: every engine gets the same chance to be inlined. */
#include "../../src/wheel.c"
#include "../../src/hier.c"
#include "../../src/lawn.c"
#include "../../src/engine.c"

#include "prof_rng.h"
#include "drain.h"

#define BITS		TWHEEL_BITS_DEFAULT
#define PAIRS		1000000
#define DRAINS		100
#define CLK0		1000

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

noinline void measure_drain(void)
{
	struct hlist_head expired = HLIST_HEAD_INIT;

	drain_all(&e, &expired);
}

static unsigned int chunk;

static void fill(void *mem, enum twheel_engine kind, unsigned long n, u64 r)
{
	unsigned long i;

	memset(mem, 0, tw_engine_mem_size(kind, BITS));
	tw_engine_init(&e, kind, mem, BITS, CLK0);
	tw_engine_set_chunk(&e, chunk);
	for (i = 0; i < n; i++) {
		tw_node_init(&nodes[i]);
		tw_engine_insert(&e, &nodes[i], CLK0 + 1 + rnd() % r);
	}
}

int main(int argc, char **argv)
{
	enum twheel_engine kind;
	unsigned long n, i;
	void *mem;
	u64 r;

	if (argc != 5)
		goto usage;
	if (getenv("TWHEEL_PROF_CHUNK"))
		chunk = strtoul(getenv("TWHEEL_PROF_CHUNK"), NULL, 0);
	if (!strcmp(argv[2], "hier"))
		kind = TWHEEL_ENGINE_HIER;
	else if (!strcmp(argv[2], "scheme6"))
		kind = TWHEEL_ENGINE_SCHEME6;
	else if (!strcmp(argv[2], "lawn"))
		kind = TWHEEL_ENGINE_LAWN;
	else
		goto usage;
	n = strtoul(argv[3], NULL, 0);
	r = strtoull(argv[4], NULL, 0);
	if (!n || !r)
		goto usage;
	mem = malloc(tw_engine_mem_size(kind, BITS));
	nodes = calloc(n, sizeof(*nodes));
	if (!mem || !nodes)
		return 1;
	if (!strcmp(argv[1], "sc")) {
		u32 *pick = malloc(PAIRS * sizeof(*pick));
		u64 *key = malloc(PAIRS * sizeof(*key));

		if (!pick || !key)
			return 1;
		for (i = 0; i < PAIRS; i++) {
			pick[i] = rnd() % n;
			key[i] = CLK0 + 1 + rnd() % r;
		}
		fill(mem, kind, n, r);
		measure_sc(pick, key, PAIRS);
		printf("sc: %s, %lu timers, R %llu, %u pairs\n", argv[2], n,
		       (unsigned long long)r, PAIRS);
		free(pick);
		free(key);
	} else if (!strcmp(argv[1], "drain")) {
		for (i = 0; i < DRAINS; i++) {
			fill(mem, kind, n, r);
			measure_drain();
		}
		printf("drain: %s, %lu timers, R %llu, %lu expiries (%llu)\n",
		       argv[2], n, (unsigned long long)r, n * DRAINS,
		       (unsigned long long)sink);
	} else {
		goto usage;
	}
	free(nodes);
	free(mem);
	return 0;
usage:
	fprintf(stderr, "usage: engine_prof sc|drain hier|scheme6|lawn N R\n");
	return 2;
}
