/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the engine suites (wheel, engine, hier, lawn) share: an engine of a
 * chosen kind in test-managed memory, its nodes, and the engines' one
 * reference model (tests/engines/model.h, shared with the userspace
 * fuzzer).  Every call through here is followed by an assertion that the
 * model found nothing wrong, which prints the first violation.
 */
#ifndef _TWHEEL_KUNIT_ENGINE_UTIL_H
#define _TWHEEL_KUNIT_ENGINE_UTIL_H

#include <kunit/test.h>
#include <linux/types.h>

#include "engine.h"
#include "model.h"

/**
 * struct twe - an engine under test and its model
 * @test:  the running test
 * @e:     the engine
 * @m:     the model, over @nodes
 * @nodes: the nodes, all owned by the test
 * @n:     number of nodes
 * @rng:   xorshift state for randomised cases (fixed seed)
 * @loose: advance through tw_engine_advance_loose(), as the facility does
 */
struct twe {
	struct kunit *test;
	struct tw_engine e;
	struct twm m;
	struct twheel_node *nodes;
	unsigned int n;
	u64 rng;
	bool loose;
};

struct twe *twe_new(struct kunit *test, enum twheel_engine kind,
		    unsigned int bits, u64 clk, unsigned int n);
u64 twe_rand(struct twe *t);
void twe_insert(struct twe *t, unsigned int i, u64 key);
void twe_move(struct twe *t, unsigned int i, u64 key);
void twe_remove(struct twe *t, unsigned int i);
unsigned int twe_advance(struct twe *t, u64 upto, unsigned int max);
void twe_check_queries(struct twe *t);
unsigned long twe_drain(struct twe *t, unsigned long limit);
void twe_run_random(struct twe *t, unsigned int steps, u64 span);

/* Fail the case, saying why, if the model found anything wrong. */
static inline void twe_ok(struct twe *t)
{
	KUNIT_ASSERT_EQ_MSG(t->test, t->m.errors, 0UL, "%s", t->m.msg);
}

static inline u64 twe_clk(const struct twe *t)
{
	return tw_engine_clk(&t->e);
}

static inline bool twe_pending(const struct twe *t, unsigned int i)
{
	return t->m.node[i].state == TWM_PENDING;
}

static inline unsigned long twe_hits(const struct twe *t, unsigned int i)
{
	return t->m.node[i].hits;
}

/* The engine of a case parameterised by engine (twe_gen_params). */
static inline enum twheel_engine twe_param(struct kunit *test)
{
	return *(const enum twheel_engine *)test->param_value;
}

/*
 * From 6.18 (which added KUNIT_CASE_PARAM_WITH_INIT()) a KUNIT_CASE_PARAM()
 * generator gets the test first.
 */
#ifdef KUNIT_CASE_PARAM_WITH_INIT
const void *twe_gen_params(struct kunit *test, const void *prev, char *desc);
#else
const void *twe_gen_params(const void *prev, char *desc);
#endif

#endif /* _TWHEEL_KUNIT_ENGINE_UTIL_H */
