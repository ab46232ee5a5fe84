/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The engine interface: what the facility calls to keep its timers.
 *
 * An engine is a pure data structure (no locks, no clock, no allocation)
 * over struct twheel_node, counting time in ticks:
 *
 *   insert(node, key)   link an unlinked node; a key below the clock is
 *                       moved up to it; every key is below TW_NO_TICK
 *   remove(node)        unlink a linked node
 *   move(node, key)     remove + insert, possibly without the unlink
 *   advance(upto, max, expired)
 *                       hand out the nodes with key < @upto, at most @max
 *                       (0: no cap), appended to @expired; when capped the
 *                       clock stays below @upto and the rest come first;
 *                       the clock never passes TW_NO_TICK - 1 (an advance
 *                       to TW_NO_TICK hands out every node and leaves it
 *                       there), so that every key stays below TW_NO_TICK
 *   set_chunk(n)        at most @n node moves per advance (0: no limit);
 *                       an advance cut short by it also leaves the clock
 *                       below @upto (or at it, with its bookkeeping left
 *                       for the next advance, which the bounds account for)
 *   forward(to)         move the clock on to at most @to, which is no later
 *                       than next_lower_bound(), handing out nothing: O(1)
 *                       for the hierarchical engine, which stops at its next
 *                       cascade point rather than do it
 *   advance_loose(upto, max, expired), settle(taken, rest)
 *                       the same for a caller that reads every node it is
 *                       handed anyway: the engine may hand out a list it
 *                       has not read (TW_UNCOUNTED), and the caller counts
 *                       and caps it and settles
 *   next_lower_bound()  a tick <= every key (TW_NO_TICK when empty): when
 *                       to wake up; may be a bookkeeping point before the
 *                       earliest key (a cascade), never after it
 *   next_key(bound)     the earliest key if <= @bound, else TW_NO_TICK:
 *                       exact
 *   pick_key(lo, hi)    the key for a timer that may fire in [lo, hi]
 *
 * plus the clock, the count of linked nodes and statistics.  One file per
 * engine (wheel.c, hier.c, lawn.c); this header dispatches with a switch
 * rather than a table of function pointers, so that the calls under the
 * wheel's lock are direct (no retpoline or IBT cost) and inlined where the
 * compiler sees fit.
 */
#ifndef _TWHEEL_ENGINE_H
#define _TWHEEL_ENGINE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/twheel.h>

#include "wheel.h"
#include "hier.h"
#include "lawn.h"

/**
 * struct tw_engine - an engine instance
 * @kind:   enum twheel_engine
 * @wheel:  state of TWHEEL_ENGINE_SCHEME6
 * @hier:   state of TWHEEL_ENGINE_HIER
 * @lawn:   state of TWHEEL_ENGINE_LAWN
 */
struct tw_engine {
	enum twheel_engine kind;
	union {
		struct tw_wheel wheel;
		struct tw_hier hier;
		struct tw_lawn lawn;
	};
};

size_t tw_engine_mem_size(enum twheel_engine kind, unsigned int bits);
void tw_engine_init(struct tw_engine *e, enum twheel_engine kind, void *mem,
		    unsigned int bits, u64 clk);
const char *tw_engine_name(enum twheel_engine kind);

static inline void tw_engine_insert(struct tw_engine *e,
				    struct twheel_node *node, u64 key)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		tw_wheel_insert(&e->wheel, node, key);
		break;
	case TWHEEL_ENGINE_LAWN:
		tw_lawn_insert(&e->lawn, node, key);
		break;
	default:
		tw_hier_insert(&e->hier, node, key);
		break;
	}
}

static inline void tw_engine_remove(struct tw_engine *e,
				    struct twheel_node *node)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		tw_wheel_remove(&e->wheel, node);
		break;
	case TWHEEL_ENGINE_LAWN:
		tw_lawn_remove(&e->lawn, node);
		break;
	default:
		tw_hier_remove(&e->hier, node);
		break;
	}
}

/*
 * remove + insert, which an engine may do in fewer steps: the hierarchical
 * one leaves a node on an upper level in place when its key goes up.
 */
static inline void tw_engine_move(struct tw_engine *e,
				  struct twheel_node *node, u64 key)
{
	if (e->kind == TWHEEL_ENGINE_HIER) {
		tw_hier_move(&e->hier, node, key);
	} else {
		tw_engine_remove(e, node);
		tw_engine_insert(e, node, key);
	}
}

static inline unsigned int tw_engine_advance(struct tw_engine *e, u64 upto,
					     unsigned int max,
					     struct hlist_head *expired)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return tw_wheel_advance(&e->wheel, upto, max, expired);
	case TWHEEL_ENGINE_LAWN:
		return tw_lawn_advance(&e->lawn, upto, max, expired);
	default:
		return tw_hier_advance(&e->hier, upto, max, expired);
	}
}

/*
 * At most @moves node moves per advance (0: none, the default): only the
 * hierarchical engine moves nodes between its lists; the others hand out
 * or read them where they are (see Documentation/design.rst, "Bounded
 * work under the lock").
 */
static inline void tw_engine_set_chunk(struct tw_engine *e,
				       unsigned int moves)
{
	if (e->kind == TWHEEL_ENGINE_HIER)
		e->hier.chunk = moves;
}

/*
 * Move the clock on to @to, at most next_lower_bound(), so that inserts
 * place keys from the present: nothing is due before @to, so nothing is
 * handed out (returns how many were, onto @expired: 0).  The hierarchical
 * engine stops short at its next cascade point and leaves that to an
 * advance: O(1).  The others advance, which for Scheme 6 skips the slots
 * on the way through its bitmap.
 */
static inline unsigned int tw_engine_forward(struct tw_engine *e, u64 to,
					     struct hlist_head *expired)
{
	if (e->kind == TWHEEL_ENGINE_HIER) {
		tw_hier_forward(&e->hier, to);
		return 0;
	}
	return tw_engine_advance(e, to, 0, expired);
}

/*
 * tw_engine_advance() for a caller that reads every node handed out: the
 * hierarchical engine may hand out a due level-0 slot whole and unread, and
 * return TW_UNCOUNTED; the caller then takes at most @max nodes from the
 * front of @expired, counting them, and calls tw_engine_settle() with that
 * count and the first node left (NULL if none) before any other call.  The
 * other engines read each node as they unlink it and never return it.
 */
static inline unsigned int tw_engine_advance_loose(struct tw_engine *e,
						   u64 upto, unsigned int max,
						   struct hlist_head *expired)
{
	if (e->kind == TWHEEL_ENGINE_HIER)
		return tw_hier_advance_loose(&e->hier, upto, max, expired);
	return tw_engine_advance(e, upto, max, expired);
}

/* Only after TW_UNCOUNTED, which only the hierarchical engine returns. */
static inline void tw_engine_settle(struct tw_engine *e, unsigned int taken,
				    struct hlist_node *rest)
{
	tw_hier_settle(&e->hier, taken, rest);
}

static inline u64 tw_engine_next_lower_bound(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return tw_wheel_next_lower_bound(&e->wheel);
	case TWHEEL_ENGINE_LAWN:
		return tw_lawn_next_lower_bound(&e->lawn);
	default:
		return tw_hier_next_lower_bound(&e->hier);
	}
}

static inline u64 tw_engine_next_key(const struct tw_engine *e, u64 bound)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return tw_wheel_next_key(&e->wheel, bound);
	case TWHEEL_ENGINE_LAWN:
		return tw_lawn_next_key(&e->lawn, bound);
	default:
		return tw_hier_next_key(&e->hier, bound);
	}
}

/*
 * Every engine places ranges the same way today: the most trailing zeros,
 * the latest such (for the hierarchical engine that is a bucket start, so
 * the timer never cascades; for the Lawn it keeps one duration's keys in
 * order).
 */
static inline u64 tw_engine_pick_key(const struct tw_engine *e, u64 lo, u64 hi)
{
	return tw_wheel_pick_key(lo, hi);
}

static inline u64 tw_engine_clk(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return e->wheel.clk;
	case TWHEEL_ENGINE_LAWN:
		return e->lawn.clk;
	default:
		return e->hier.clk;
	}
}

static inline unsigned long tw_engine_count(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return e->wheel.count;
	case TWHEEL_ENGINE_LAWN:
		return e->lawn.count;
	default:
		return e->hier.count;
	}
}

/* Level-0 slots (FIFOs for the Lawn). */
static inline u64 tw_engine_slots(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return tw_wheel_size(&e->wheel);
	case TWHEEL_ENGINE_LAWN:
		return 1ULL << e->lawn.qbits;
	default:
		return 1ULL << e->hier.bits;
	}
}

static inline unsigned long tw_engine_max_slot(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return e->wheel.max_slot;
	case TWHEEL_ENGINE_LAWN:
		return e->lawn.max_slot;
	default:
		return e->hier.max_slot;
	}
}

/* Cascade moves (hierarchical), sorted inserts (Lawn), 0 (Scheme 6). */
static inline u64 tw_engine_moves(const struct tw_engine *e)
{
	switch (e->kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return 0;
	case TWHEEL_ENGINE_LAWN:
		return e->lawn.sorted;
	default:
		return e->hier.moves;
	}
}

#endif /* _TWHEEL_ENGINE_H */
