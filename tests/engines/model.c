// SPDX-License-Identifier: GPL-2.0
/*
 * The engines' reference model (model.h), built in the kernel (linked into
 * twheel_kunit.ko by tests/kunit/mod.c) and in user space on this
 * directory's shim (tests/engines/Makefile), as the engines are.
 */
#ifdef __KERNEL__
#include <linux/kernel.h>
#include <linux/minmax.h>
#else
#include <stdarg.h>
#include <stdio.h>
#include <linux/kernel.h>
#endif

#include "model.h"

static __printf(2, 3) void twm_fail(struct twm *t, const char *fmt, ...)
{
	va_list ap;

	if (t->errors++)
		return;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
}

/**
 * twm_init() - start a model of an empty engine
 * @t:     the model
 * @e:     the engine, initialised and empty
 * @nodes: @n nodes, initialised here
 * @model: @n node models, cleared here
 * @n:     number of nodes
 */
void twm_init(struct twm *t, struct tw_engine *e, struct twheel_node *nodes,
	      struct twm_node *model, unsigned int n)
{
	unsigned int i;

	t->e = e;
	t->nodes = nodes;
	t->node = model;
	t->n = n;
	for (i = 0; i < n; i++) {
		tw_node_init(&nodes[i]);
		model[i] = (struct twm_node){ 0 };
	}
	t->pending = 0;
	t->floor = 0;
	t->got = 0;
	t->kmin = TW_NO_TICK;
	t->kmax = 0;
	t->errors = 0;
	t->msg[0] = '\0';
}

/* Smallest key the model holds, TW_NO_TICK when it holds none. */
u64 twm_min(const struct twm *t)
{
	u64 best = TW_NO_TICK;
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->node[i].state == TWM_PENDING && t->node[i].key < best)
			best = t->node[i].key;
	return best;
}

static bool twm_is_pending(struct twm *t, unsigned int i, const char *op)
{
	if (i >= t->n) {
		twm_fail(t, "%s of node %u of %u", op, i, t->n);
		return false;
	}
	if (t->node[i].state != TWM_PENDING) {
		twm_fail(t, "%s of node %u, not pending", op, i);
		return false;
	}
	return true;
}

/* Node @i now pending at @key, asked for, or the clock if that is later. */
static void twm_placed(struct twm *t, unsigned int i, u64 key, u64 clk,
		       const char *op)
{
	struct twheel_node *node = &t->nodes[i];
	u64 want = max(key, clk);

	if (want == TW_NO_TICK)
		twm_fail(t, "%s of node %u at %llu: the clock is at TW_NO_TICK",
			 op, i, (unsigned long long)key);
	if (node->key != want)
		twm_fail(t, "%s of node %u at %llu (clock %llu): key %llu", op,
			 i, (unsigned long long)key, (unsigned long long)clk,
			 (unsigned long long)node->key);
	if (!tw_node_linked(node))
		twm_fail(t, "%s of node %u: not linked", op, i);
	t->node[i].key = want;
	/* a key earlier than what was handed out may come next */
	t->floor = min(t->floor, want);
	if (tw_engine_count(t->e) != t->pending)
		twm_fail(t, "%s of node %u: count %lu, model %lu", op, i,
			 tw_engine_count(t->e), t->pending);
}

/**
 * twm_insert() - insert node @i at @key
 * @t:   the model
 * @i:   a node that is not pending
 * @key: its key; one below the clock is moved up to it
 */
void twm_insert(struct twm *t, unsigned int i, u64 key)
{
	u64 clk = tw_engine_clk(t->e);

	if (i >= t->n || t->node[i].state == TWM_PENDING ||
	    tw_node_linked(&t->nodes[i])) {
		twm_fail(t, "insert of node %u: out of range or pending", i);
		return;
	}
	tw_engine_insert(t->e, &t->nodes[i], key);
	t->node[i].state = TWM_PENDING;
	t->pending++;
	twm_placed(t, i, key, clk, "insert");
}

/**
 * twm_remove() - remove pending node @i
 * @t: the model
 * @i: the node
 */
void twm_remove(struct twm *t, unsigned int i)
{
	if (!twm_is_pending(t, i, "remove"))
		return;
	tw_engine_remove(t->e, &t->nodes[i]);
	t->node[i].state = TWM_REMOVED;
	t->pending--;
	if (tw_node_linked(&t->nodes[i]))
		twm_fail(t, "node %u still linked after remove", i);
	if (tw_engine_count(t->e) != t->pending)
		twm_fail(t, "remove of node %u: count %lu, model %lu", i,
			 tw_engine_count(t->e), t->pending);
}

/**
 * twm_move() - move pending node @i to @key (tw_engine_move())
 * @t:   the model
 * @i:   the node
 * @key: its new key; one below the clock is moved up to it
 */
void twm_move(struct twm *t, unsigned int i, u64 key)
{
	if (!twm_is_pending(t, i, "move"))
		return;
	tw_engine_move(t->e, &t->nodes[i], key);
	twm_placed(t, i, key, tw_engine_clk(t->e), "move");
}

/* One node handed out by an advance to @upto; false to stop the walk. */
static bool twm_handed_out(struct twm *t, struct twheel_node *node, u64 from,
			   u64 upto, bool ordered, u64 *prev)
{
	struct twm_node *m;
	unsigned int i;

	if (node < t->nodes || node >= t->nodes + t->n) {
		twm_fail(t, "advance to %llu handed out a foreign node",
			 (unsigned long long)upto);
		return false;
	}
	i = node - t->nodes;
	m = &t->node[i];
	if (m->state != TWM_PENDING)
		twm_fail(t, "node %u handed out in state %u (twice?)", i,
			 m->state);
	else if (node->key != m->key)
		twm_fail(t, "node %u handed out with key %llu, model %llu", i,
			 (unsigned long long)node->key,
			 (unsigned long long)m->key);
	if (node->key >= upto)
		twm_fail(t, "early: node %u key %llu handed out by advance to %llu",
			 i, (unsigned long long)node->key,
			 (unsigned long long)upto);
	if (node->key < from)
		twm_fail(t, "node %u key %llu handed out, below the clock %llu",
			 i, (unsigned long long)node->key,
			 (unsigned long long)from);
	if (ordered && node->key < *prev)
		twm_fail(t, "out of order: key %llu after %llu",
			 (unsigned long long)node->key,
			 (unsigned long long)*prev);
	*prev = node->key;
	hlist_del_init(&node->entry);
	if (m->state == TWM_PENDING)
		t->pending--;
	m->state = TWM_FIRED;
	m->hits++;
	m->fired_at = upto;
	t->kmin = min(t->kmin, node->key);
	t->kmax = max(t->kmax, node->key);
	if (++t->got > t->n) {
		twm_fail(t, "expired list loops");
		return false;
	}
	return true;
}

/*
 * The caller's side of tw_engine_advance_loose(): a slot handed out whole
 * (TW_UNCOUNTED) is counted and capped here, as the facility does.
 */
static unsigned int twm_advance_loose(struct twm *t, u64 upto,
				      unsigned int max, bool prefix,
				      struct hlist_head *expired)
{
	unsigned int n = tw_engine_advance_loose(t->e, upto, max, expired);
	struct hlist_node *pos;

	if (n != TW_UNCOUNTED)
		return n;
	if (prefix)
		twm_fail(t, "a slot handed out whole onto a non-empty list");
	n = 0;
	for (pos = expired->first; pos && (!max || n < max); pos = pos->next)
		n++;
	tw_engine_settle(t->e, n, pos);
	return n;
}

/**
 * twm_advance() - advance the engine to @upto and check what it did
 * @t:       the model
 * @upto:    every tick below it is over
 * @max:     cap (0: none)
 * @loose:   through tw_engine_advance_loose(), as the facility does
 * @expired: the list to append to; what it holds (at most TWM_PREFIX
 *           entries, none of the model's nodes) must stay first, and stays
 *           on it, while the nodes handed out are taken off it
 *
 * Return: the number of nodes handed out.
 */
unsigned int twm_advance(struct twm *t, u64 upto, unsigned int max,
			 bool loose, struct hlist_head *expired)
{
	struct hlist_node *prefix[TWM_PREFIX], *pos, *next;
	u64 from = tw_engine_clk(t->e), end = max(upto, from), prev = 0, clk;
	bool ordered = t->e->kind != TWHEEL_ENGINE_SCHEME6 ||
		       end - from <= tw_engine_slots(t->e);

	/* the last tick is never over: every key stays below TW_NO_TICK */
	end = min(end, TW_NO_TICK - 1);
	u64 moves = tw_engine_moves(t->e);
	unsigned int np = 0, n, i;
	unsigned long due = 0;
	bool cut = false;
	int lost = -1;

	for (pos = expired->first; pos; pos = pos->next) {
		if (np == TWM_PREFIX) {
			twm_fail(t, "more than %d entries before an advance",
				 TWM_PREFIX);
			return 0;
		}
		prefix[np++] = pos;
	}
	t->got = 0;
	t->kmin = TW_NO_TICK;
	t->kmax = 0;
	if (loose)
		n = twm_advance_loose(t, upto, max, np, expired);
	else
		n = tw_engine_advance(t->e, upto, max, expired);

	pos = expired->first;
	for (i = 0; i < np; i++, pos = pos->next) {
		if (pos != prefix[i]) {
			twm_fail(t, "advance to %llu did not append after the entries on the list",
				 (unsigned long long)upto);
			return n;
		}
	}
	for (; pos; pos = next) {
		next = pos->next;
		if (!twm_handed_out(t, hlist_entry(pos, struct twheel_node, entry),
				    from, upto, ordered, &prev))
			return n;
	}

	clk = tw_engine_clk(t->e);
	if (t->got != n)
		twm_fail(t, "advance to %llu returned %u, handed out %u",
			 (unsigned long long)upto, n, t->got);
	if (max && n > max)
		twm_fail(t, "advance handed out %u, cap %u", n, max);
	if (clk < from || clk > end)
		twm_fail(t, "advance from %llu to %llu left the clock at %llu",
			 (unsigned long long)from, (unsigned long long)upto,
			 (unsigned long long)clk);
	if (tw_engine_count(t->e) != t->pending)
		twm_fail(t, "advance to %llu: count %lu, model %lu",
			 (unsigned long long)upto, tw_engine_count(t->e),
			 t->pending);
	for (i = 0; i < t->n; i++) {
		if (t->node[i].state != TWM_PENDING)
			continue;
		if (t->node[i].key < clk)
			twm_fail(t, "node %u key %llu left below the clock %llu",
				 i, (unsigned long long)t->node[i].key,
				 (unsigned long long)clk);
		if (t->node[i].key >= upto)
			continue;
		due++;
		if (lost < 0)
			lost = i;
	}
	/*
	 * A cascade cut short by the hierarchical engine's chunk: exactly the
	 * chunk moved, the clock left on the cascade point (@tc), the rest
	 * for the next advance.
	 */
	if (t->e->kind == TWHEEL_ENGINE_HIER && t->e->hier.chunk) {
		moves = tw_engine_moves(t->e) - moves;
		if (moves > t->e->hier.chunk)
			twm_fail(t, "advance to %llu moved %llu nodes, chunk %u",
				 (unsigned long long)upto,
				 (unsigned long long)moves, t->e->hier.chunk);
		cut = moves == t->e->hier.chunk && t->e->hier.tc == clk &&
		      clk < end;
	}
	if ((!max || n < max) && !cut) {
		if (due)
			twm_fail(t, "lost: node %d key %llu (and %lu more) left by advance to %llu",
				 lost, (unsigned long long)t->node[lost].key,
				 due - 1, (unsigned long long)upto);
		if (clk != end)
			twm_fail(t, "uncapped advance to %llu left the clock at %llu",
				 (unsigned long long)upto,
				 (unsigned long long)clk);
	} else if (due && clk >= upto && !cut) {
		twm_fail(t, "capped advance to %llu left %lu due, clock at %llu",
			 (unsigned long long)upto, due,
			 (unsigned long long)clk);
	}

	/*
	 * The cap defers nodes but never lets a later tick overtake them:
	 * keys come out non-decreasing across advances, but for an insert
	 * below what came out (twm_placed() lowers the floor) and a Scheme 6
	 * advance over more than a revolution, which hands out in slot order.
	 */
	if (t->got && ordered) {
		if (t->kmin < t->floor)
			twm_fail(t, "key %llu handed out after key %llu",
				 (unsigned long long)t->kmin,
				 (unsigned long long)t->floor);
		t->floor = max(t->floor, t->kmax);
	} else if (t->got) {
		t->floor = clk;
	}
	return n;
}

/**
 * twm_check_next_key() - check tw_engine_next_key(@bound) against the model
 * @t:     the model
 * @bound: the bound
 */
void twm_check_next_key(struct twm *t, u64 bound)
{
	u64 min = twm_min(t), got = tw_engine_next_key(t->e, bound);
	u64 want = min <= bound ? min : TW_NO_TICK;

	if (got != want)
		twm_fail(t, "next_key(%llu) = %llu, model %llu",
			 (unsigned long long)bound, (unsigned long long)got,
			 (unsigned long long)want);
}

/**
 * twm_check_queries() - check the count and both next-expiry queries
 * @t: the model
 */
void twm_check_queries(struct twm *t)
{
	u64 min = twm_min(t), lb = tw_engine_next_lower_bound(t->e);
	u64 clk = tw_engine_clk(t->e);

	if (tw_engine_count(t->e) != t->pending)
		twm_fail(t, "count %lu, model %lu", tw_engine_count(t->e),
			 t->pending);
	twm_check_next_key(t, TW_NO_TICK);
	if (min != TW_NO_TICK) {
		twm_check_next_key(t, min);
		if (min)
			twm_check_next_key(t, min - 1);
		if (lb < clk)
			twm_fail(t, "next_lower_bound %llu below the clock %llu",
				 (unsigned long long)lb,
				 (unsigned long long)clk);
	} else if (lb != TW_NO_TICK) {
		twm_fail(t, "next_lower_bound %llu of an empty engine",
			 (unsigned long long)lb);
	}
	if (lb > min)
		twm_fail(t, "next_lower_bound %llu after the earliest key %llu",
			 (unsigned long long)lb, (unsigned long long)min);
	if (t->e->kind == TWHEEL_ENGINE_LAWN && lb != min)
		twm_fail(t, "Lawn next_lower_bound %llu, earliest key %llu",
			 (unsigned long long)lb, (unsigned long long)min);
}
