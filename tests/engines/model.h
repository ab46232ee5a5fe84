/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engines' reference model: what src/engine.h promises, checked
 * against a plain array of the keys the nodes must carry.  One model for
 * every engine and every test of them: the KUnit suites of tests/kunit/
 * (through engine_util.h) and the userspace fuzzer fuzz_engines.c, which
 * build model.c in the kernel and on this directory's shim.
 *
 * The model drives the engine itself (twm_insert() calls
 * tw_engine_insert(), ...) and checks after each call:
 *
 *  - a node's key is the one asked for, or the clock if that is later;
 *  - never early: every node handed out by an advance has key < @upto;
 *  - exactly once: a node handed out was pending, and leaves the model;
 *  - nothing lost: an advance the cap did not stop leaves no node with key
 *    < @upto and the clock at @upto;
 *  - the cap: an advance hands out at most @max; a capped one leaves the
 *    clock below @upto when due nodes are left, and they come first;
 *  - order: keys come out non-decreasing, within an advance and across
 *    advances (the cap defers, never reorders), except that Scheme 6
 *    orders only within an advance spanning at most one revolution;
 *  - every key pending or handed out is at or after the clock;
 *  - what was on the list before an advance stays first;
 *  - the count, next_key(bound) (exact) and next_lower_bound() (between
 *    the clock and the earliest key; exact for the Lawn).
 *
 * A violation does not stop the model: it counts in @errors, and the
 * first is described in @msg, for the caller to report its own way (a
 * KUnit assertion, or abort()).
 */
#ifndef _TWHEEL_ENGINE_MODEL_H
#define _TWHEEL_ENGINE_MODEL_H

#include <linux/types.h>
#include <linux/list.h>

#include "engine.h"

/* States of a node in the model. */
enum twm_state {
	TWM_IDLE,	/* never inserted */
	TWM_PENDING,	/* in the engine */
	TWM_FIRED,	/* handed out by an advance */
	TWM_REMOVED,	/* removed before it was due */
};

/**
 * struct twm_node - the model of one node
 * @key:      the key the node carries while pending
 * @fired_at: @upto of the advance that last handed it out
 * @hits:     times it was handed out
 * @state:    enum twm_state
 */
struct twm_node {
	u64 key;
	u64 fired_at;
	unsigned int hits;
	u8 state;
};

/* Entries an advance's list may hold before it (checked to stay first). */
#define TWM_PREFIX	4

/**
 * struct twm - an engine and its model
 * @e:       the engine under test
 * @nodes:   its nodes, @n of them, owned by the caller
 * @node:    the model of each node
 * @n:       number of nodes
 * @pending: nodes pending in the model
 * @floor:   the next advance must hand out no key below it (see model.c)
 * @got:     nodes handed out by the last advance
 * @kmin:    smallest key handed out by the last advance (TW_NO_TICK: none)
 * @kmax:    largest key handed out by the last advance
 * @errors:  violations seen
 * @msg:     the first of them
 */
struct twm {
	struct tw_engine *e;
	struct twheel_node *nodes;
	struct twm_node *node;
	unsigned int n;
	unsigned long pending;
	u64 floor;
	unsigned int got;
	u64 kmin, kmax;
	unsigned long errors;
	char msg[256];
};

void twm_init(struct twm *t, struct tw_engine *e, struct twheel_node *nodes,
	      struct twm_node *model, unsigned int n);
void twm_insert(struct twm *t, unsigned int i, u64 key);
void twm_remove(struct twm *t, unsigned int i);
void twm_move(struct twm *t, unsigned int i, u64 key);
unsigned int twm_advance(struct twm *t, u64 upto, unsigned int max,
			 bool loose, struct hlist_head *expired);
u64 twm_min(const struct twm *t);
void twm_check_next_key(struct twm *t, u64 bound);
void twm_check_queries(struct twm *t);

#endif /* _TWHEEL_ENGINE_MODEL_H */
