// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the Timer Lawn engine (Lev-Libfeld)
 *
 * Data structure
 * --------------
 * Timers of one timeout duration started in time order expire in that
 * order: a FIFO per duration is sorted for free.  The Lawn keeps a fixed
 * array of FIFOs (hlists ending in a sentinel, so that the tail is found
 * from the sentinel and a real node is never last) and a binary min-heap
 * of the non-empty FIFOs ordered by their head's key.
 *
 * A key k arriving when the clock is c has duration d = k - c.  It goes to
 * FIFO hash(d), or one of the next TW_LAWN_PROBES - 1, the first that is
 * empty or ends with a key <= k: an append, O(1).  If none does (more
 * durations in play than FIFOs, or a duration measured against a clock
 * that moved), k is sorted into FIFO hash(d) by walking back from its end:
 * correct, but O(distance); @sorted and @max_slot count these.  So every
 * FIFO is sorted whatever the workload; the Lawn's premise, few distinct
 * durations, only decides the cost.
 *
 * The node needs no field of its own: a node is the head of a FIFO iff its
 * pprev points into the FIFO array (an address range check), which is the
 * only case where a removal changes the heap.
 *
 * Costs
 * -----
 * insert: O(1) when the key fits a probed FIFO's end (plus O(log q) when it
 * starts a FIFO); remove: O(1), plus O(log q) when it was a FIFO's head.
 * advance: O(log q) per handed-out node (the heap sift after its FIFO's
 * head moved), nodes strictly in key order.  next_lower_bound() and
 * next_key(): O(1), exact (the heap's top).
 *
 * Guarantees: never early (key < @upto), exactly once (one list at a time),
 * in key order; with the cap, @clk stops at the first key not handed out.
 *
 * This file does no locking, reads no clock and allocates nothing.
 */
#include <linux/bitops.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/list.h>

#include "lawn.h"
#include "wheel.h"

static inline unsigned int tw_lawn_nq(const struct tw_lawn *l)
{
	return 1U << l->qbits;
}

static inline bool tw_lawn_q_empty(const struct tw_lawn_q *q)
{
	return q->head.first == &q->end.entry;
}

static inline u64 tw_lawn_head_key(const struct tw_lawn *l, u32 qi)
{
	return hlist_entry(l->q[qi].head.first, struct twheel_node, entry)->key;
}

/* The node before @node in @q, NULL if @node is the first. */
static inline struct twheel_node *tw_lawn_prev(struct tw_lawn_q *q,
					       struct twheel_node *node)
{
	if (node->entry.pprev == &q->head.first)
		return NULL;
	return container_of(node->entry.pprev, struct twheel_node, entry.next);
}

/* The FIFO whose head @node is, or -1: where does its pprev point? */
static inline long tw_lawn_head_of(const struct tw_lawn *l,
				   const struct twheel_node *node)
{
	unsigned long off = (unsigned long)node->entry.pprev -
			    (unsigned long)l->q;

	if (off >= (unsigned long)sizeof(*l->q) << l->qbits)
		return -1;
	return off / sizeof(*l->q);
}

static void tw_lawn_heap_set(struct tw_lawn *l, u32 pos, u32 qi)
{
	l->heap[pos] = qi;
	l->q[qi].pos = pos;
}

static void tw_lawn_sift_up(struct tw_lawn *l, u32 pos)
{
	u32 qi = l->heap[pos];
	u64 key = tw_lawn_head_key(l, qi);

	while (pos) {
		u32 parent = (pos - 1) / 2;

		if (tw_lawn_head_key(l, l->heap[parent]) <= key)
			break;
		tw_lawn_heap_set(l, pos, l->heap[parent]);
		pos = parent;
	}
	tw_lawn_heap_set(l, pos, qi);
}

static void tw_lawn_sift_down(struct tw_lawn *l, u32 pos)
{
	u32 qi = l->heap[pos];
	u64 key = tw_lawn_head_key(l, qi);

	for (;;) {
		u32 child = 2 * pos + 1;
		u64 ck;

		if (child >= l->nr_heap)
			break;
		ck = tw_lawn_head_key(l, l->heap[child]);
		if (child + 1 < l->nr_heap) {
			u64 rk = tw_lawn_head_key(l, l->heap[child + 1]);

			if (rk < ck) {
				child++;
				ck = rk;
			}
		}
		if (key <= ck)
			break;
		tw_lawn_heap_set(l, pos, l->heap[child]);
		pos = child;
	}
	tw_lawn_heap_set(l, pos, qi);
}

/* Take the (now empty) FIFO @qi off the heap. */
static void tw_lawn_heap_del(struct tw_lawn *l, u32 qi)
{
	u32 pos = l->q[qi].pos, last = l->heap[--l->nr_heap];

	if (last == qi)
		return;
	tw_lawn_heap_set(l, pos, last);
	tw_lawn_sift_down(l, pos);
	tw_lawn_sift_up(l, l->q[last].pos);
}

/**
 * tw_lawn_mem_size() - bytes of memory tw_lawn_init() needs
 * @bits: log2 of the FIFO count wanted (at most TW_LAWN_MAX_QBITS is used)
 *
 * Return: the size of the block to pass to tw_lawn_init().
 */
size_t tw_lawn_mem_size(unsigned int bits)
{
	unsigned int nq = 1U << min_t(unsigned int, bits, TW_LAWN_MAX_QBITS);

	return nq * (sizeof(struct tw_lawn_q) + sizeof(u32));
}

/**
 * tw_lawn_init() - initialise an empty Lawn
 * @l:    the engine
 * @mem:  tw_lawn_mem_size(@bits) bytes, pointer-aligned, owned by the caller
 * @bits: log2 of the FIFO count wanted
 * @clk:  the first tick to process
 */
void tw_lawn_init(struct tw_lawn *l, void *mem, unsigned int bits, u64 clk)
{
	unsigned int i;

	l->clk = clk;
	l->count = 0;
	l->qbits = min_t(unsigned int, bits, TW_LAWN_MAX_QBITS);
	l->nr_heap = 0;
	l->max_slot = 0;
	l->sorted = 0;
	l->q = mem;
	l->heap = (u32 *)(l->q + tw_lawn_nq(l));
	for (i = 0; i < tw_lawn_nq(l); i++) {
		struct tw_lawn_q *q = &l->q[i];

		q->head.first = &q->end.entry;
		q->end.entry.next = NULL;
		q->end.entry.pprev = &q->head.first;
		q->end.key = TW_NO_TICK;
		q->pos = 0;
	}
}

/**
 * tw_lawn_insert() - add a node that is not linked anywhere
 * @l:    the engine
 * @node: the node, unlinked
 * @key:  the tick at whose end it fires; keys before the clock are moved up
 *        to it, so they fire at the next advance
 */
void tw_lawn_insert(struct tw_lawn *l, struct twheel_node *node, u64 key)
{
	u32 h, qi, i, mask = tw_lawn_nq(l) - 1;
	struct twheel_node *prev;
	struct tw_lawn_q *q;
	unsigned long len = 0;

	key = max(key, l->clk);
	node->key = key;
	l->count++;
	h = hash_64(key - l->clk, l->qbits);
	for (i = 0; i < TW_LAWN_PROBES; i++) {
		qi = (h + i) & mask;
		q = &l->q[qi];
		if (tw_lawn_q_empty(q)) {
			hlist_add_before(&node->entry, &q->end.entry);
			tw_lawn_heap_set(l, l->nr_heap++, qi);
			tw_lawn_sift_up(l, l->nr_heap - 1);
			return;
		}
		if (tw_lawn_prev(q, &q->end)->key <= key) {
			hlist_add_before(&node->entry, &q->end.entry);
			return;
		}
	}
	/* Sort it into FIFO h, walking back from its end. */
	q = &l->q[h & mask];
	l->sorted++;
	for (prev = tw_lawn_prev(q, &q->end); prev && prev->key > key;
	     prev = tw_lawn_prev(q, prev))
		len++;
	if (len > l->max_slot)
		l->max_slot = len;
	if (prev) {
		hlist_add_behind(&node->entry, &prev->entry);
	} else {
		hlist_add_head(&node->entry, &q->head);
		tw_lawn_sift_up(l, q->pos);
	}
}

/**
 * tw_lawn_remove() - unlink a node that is in one of @l's FIFOs
 * @l:    the engine
 * @node: the node
 */
void tw_lawn_remove(struct tw_lawn *l, struct twheel_node *node)
{
	long qi = tw_lawn_head_of(l, node);

	hlist_del_init(&node->entry);
	l->count--;
	if (qi < 0)
		return;
	if (tw_lawn_q_empty(&l->q[qi]))
		tw_lawn_heap_del(l, qi);
	else
		tw_lawn_sift_down(l, l->q[qi].pos);
}

/**
 * tw_lawn_advance() - process the ticks before @upto
 * @l:       the engine
 * @upto:    first tick that is not over yet
 * @max:     most nodes to hand out (the execution cap); 0 means no cap
 * @expired: list receiving the due nodes, unlinked, appended in key order
 *
 * Return: the number of nodes moved to @expired.  If it is @max, due nodes
 * may remain: @l->clk is then below @upto and the next advance returns
 * them first.
 */
unsigned int tw_lawn_advance(struct tw_lawn *l, u64 upto, unsigned int max,
			     struct hlist_head *expired)
{
	struct hlist_node *last = NULL;
	unsigned int n = 0;

	if (upto <= l->clk)
		return 0;
	if (!hlist_empty(expired))
		for (last = expired->first; last->next; last = last->next)
			;
	while (l->nr_heap) {
		u32 qi = l->heap[0];
		struct tw_lawn_q *q = &l->q[qi];
		struct twheel_node *node;

		node = hlist_entry(q->head.first, struct twheel_node, entry);
		if (node->key >= upto)
			break;
		if (max && n == max) {
			l->clk = node->key;
			return n;
		}
		__hlist_del(&node->entry);
		if (last)
			hlist_add_behind(&node->entry, last);
		else
			hlist_add_head(&node->entry, expired);
		last = &node->entry;
		l->count--;
		n++;
		if (tw_lawn_q_empty(q))
			tw_lawn_heap_del(l, qi);
		else
			tw_lawn_sift_down(l, 0);
	}
	/* The last tick is never over: every key stays below TW_NO_TICK. */
	l->clk = min(upto, TW_NO_TICK - 1);
	return n;
}

/**
 * tw_lawn_next_lower_bound() - the earliest key (exact, O(1))
 * @l: the engine
 *
 * Return: the smallest key, or TW_NO_TICK if @l is empty.
 */
u64 tw_lawn_next_lower_bound(const struct tw_lawn *l)
{
	return l->nr_heap ? tw_lawn_head_key(l, l->heap[0]) : TW_NO_TICK;
}

/**
 * tw_lawn_next_key() - the earliest key, if no later than @bound
 * @l:     the engine
 * @bound: the last tick of interest
 *
 * Return: the smallest key if it is <= @bound, else TW_NO_TICK.
 */
u64 tw_lawn_next_key(const struct tw_lawn *l, u64 bound)
{
	u64 key = tw_lawn_next_lower_bound(l);

	return key <= bound ? key : TW_NO_TICK;
}
