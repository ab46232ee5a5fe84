// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the hashed timing wheel (Varghese & Lauck, "Scheme 6")
 *
 * Data structure
 * --------------
 * Time is counted in ticks.  A timer is kept as a node carrying the
 * absolute tick @key at whose *end* it fires.  The wheel is a power-of-two
 * array of unsorted doubly linked lists (hlist); a node with key k sits in
 * slot (k & mask).  Nodes whose key lies one or more revolutions ahead share
 * the slot with nearer ones: instead of the "remaining rounds" counter that
 * Scheme 6 decrements on every visit, the absolute key is compared, so a
 * visit only *reads* the entries that are not yet due.
 *
 * A bitmap @occupied has one bit per non-empty slot.  It lets an advance
 * over many ticks (a late tick, a sparse wheel, tickless operation) jump
 * straight to the next non-empty slot.
 *
 * Each slot also keeps @low, a lower bound of the keys in it: insertion
 * lowers it, removal leaves it (still a bound), and a visit that walks the
 * whole slot sets it to the exact minimum of what stays.  An advance skips
 * a slot whose bound is not yet due without reading its list, and the next
 * expiry bound is the smallest slot bound.  Without it, a wheel holding
 * timers a revolution or more away would be woken, and walk a slot, on
 * every tick where some slot is occupied: Scheme 6's known weak spot.
 *
 * @clk is the first tick that has not been processed.  Invariant: every
 * node in the wheel has key >= @clk.  Insertion clamps keys below @clk up to
 * @clk, which is how an expiry in the past fires at the next advance.
 *
 * Costs
 * -----
 * insert, remove: O(1).  Advancing by one tick visits at most one slot.  An
 * advance by d ticks visits at most min(d, slots) slots and skips empty ones
 * through the bitmap, so its cost is the bitmap words read plus the length
 * of the visited slots that hold a due entry (a slot with nothing due costs
 * one comparison).  next_lower_bound() reads the bitmap and the slot bounds
 * in tick order until the tick reached is past the best bound found: O(1)
 * when the first occupied slot has something due in its own revolution, at
 * most one pass over the bitmap otherwise.  next_key(bound) walks slots in
 * tick order, skips those whose bound cannot improve on the best key found,
 * and stops once the tick reached is past that key or @bound.
 *
 * Guarantees and their proof sketch
 * ---------------------------------
 * Never early: tw_wheel_advance(w, upto, ...) hands out a node only if
 * key < upto, i.e. only once the caller says tick @key is over.
 *
 * Nothing lost, exactly once: a node is either in its slot, or handed out
 * once (unlinked from the slot and linked on @expired).  An advance walks
 * the occupied slots in tick order starting at @clk.  Slot s is first met at
 * the smallest tick t >= clk with t & mask == s; by the invariant no node in
 * s has a key below t, and every node in s with key < upto is handed out in
 * that visit (when the slot's bound is >= upto there is none, and the list
 * is not read).  Once the walk has covered a whole revolution every slot has
 * been visited, so every due node has been handed out and @clk may jump to
 * @upto.  Otherwise @clk moves past each visited tick only after its slot
 * has no due nodes left, which keeps the invariant.
 *
 * Execution cap: when @max nodes have been handed out the walk stops
 * *inside* the current slot and leaves @clk at that slot's tick, so the
 * nodes still due are found first by the next advance, before anything
 * that became due later.  None is lost and none is reordered after a later
 * tick.  (When one advance spans more than a revolution the nodes it hands
 * out are in slot order, not strictly in key order.)
 *
 * Range scheduling: tw_wheel_pick_key() chooses, in [lo, hi], the tick with
 * the most trailing zero bits, the latest such.  Timers with overlapping
 * ranges thus meet on the same coarse ticks (fewer wakeups, as Ratas'
 * schedule_in_range), and a timer is never placed before @lo.
 *
 * This file does no locking, reads no clock and allocates nothing; the
 * caller owns all nodes and the slot and bitmap memory and serialises all
 * calls on one wheel.  It builds unchanged in userspace (tools/).
 */
#include <linux/bitops.h>
#include <linux/bitmap.h>
#include <linux/kernel.h>
#include <linux/list.h>

#include "wheel.h"

static inline u64 tw_slot(const struct tw_wheel *w, u64 tick)
{
	return tick & (tw_wheel_size(w) - 1);
}

/*
 * The first tick >= @from whose slot is occupied, searching one revolution;
 * TW_NO_TICK when the wheel is empty.
 */
static u64 tw_next_occupied(const struct tw_wheel *w, u64 from)
{
	unsigned long size = tw_wheel_size(w);
	unsigned long start = tw_slot(w, from);
	unsigned long s;

	s = find_next_bit(w->occupied, size, start);
	if (s < size)
		return from + (s - start);
	s = find_first_bit(w->occupied, start);
	if (s < start)
		return from + (size - start) + s;
	return TW_NO_TICK;
}

/**
 * tw_wheel_init() - initialise an empty wheel
 * @w:        the wheel
 * @slots:    array of 1 << @bits list heads, owned by the caller
 * @low:      array of 1 << @bits slot bounds, owned by the caller
 * @occupied: bitmap of 1 << @bits bits, owned by the caller
 * @bits:     log2 of the slot count
 * @clk:      the first tick to process
 */
void tw_wheel_init(struct tw_wheel *w, struct hlist_head *slots, u64 *low,
		   unsigned long *occupied, unsigned int bits, u64 clk)
{
	u64 i;

	w->clk = clk;
	w->count = 0;
	w->bits = bits;
	w->max_slot = 0;
	w->slots = slots;
	w->low = low;
	w->occupied = occupied;
	for (i = 0; i < tw_wheel_size(w); i++)
		INIT_HLIST_HEAD(&slots[i]);
	bitmap_zero(occupied, tw_wheel_size(w));
}

/**
 * tw_wheel_insert() - add a node that is not linked anywhere
 * @w:    the wheel
 * @node: the node, unlinked
 * @key:  the tick at whose end it fires; keys before the wheel's clock are
 *        moved up to it, so they fire at the next advance
 */
void tw_wheel_insert(struct tw_wheel *w, struct twheel_node *node, u64 key)
{
	u64 s;

	if (key < w->clk)
		key = w->clk;
	node->key = key;
	s = tw_slot(w, key);
	if (!test_bit(s, w->occupied)) {
		__set_bit(s, w->occupied);
		w->low[s] = key;
	} else if (key < w->low[s]) {
		w->low[s] = key;
	}
	hlist_add_head(&node->entry, &w->slots[s]);
	w->count++;
}

/**
 * tw_wheel_remove() - unlink a node that is in one of @w's slots
 * @w:    the wheel
 * @node: the node
 */
void tw_wheel_remove(struct tw_wheel *w, struct twheel_node *node)
{
	u64 s = tw_slot(w, node->key);

	hlist_del_init(&node->entry);
	if (hlist_empty(&w->slots[s]))
		__clear_bit(s, w->occupied);
	w->count--;
}

/**
 * tw_wheel_advance() - process the ticks before @upto
 * @w:       the wheel
 * @upto:    first tick that is not over yet
 * @max:     most nodes to hand out (the execution cap); 0 means no cap
 * @expired: list receiving the due nodes, unlinked from the wheel; they are
 *           appended in the order of their ticks (within one revolution)
 *
 * Return: the number of nodes moved to @expired.  If it is @max, due nodes
 * may remain: @w->clk is then below @upto and the next advance returns
 * them first.
 */
unsigned int tw_wheel_advance(struct tw_wheel *w, u64 upto, unsigned int max,
			      struct hlist_head *expired)
{
	struct hlist_node *last = NULL;
	u64 from = w->clk;
	unsigned int n = 0;

	/* Append, so that nodes come out in the order their ticks passed. */
	if (!hlist_empty(expired))
		for (last = expired->first; last->next; last = last->next)
			;

	while (w->clk < upto) {
		struct twheel_node *node;
		struct hlist_node *tmp;
		unsigned long len = 0;
		u64 t, s, low;

		t = tw_next_occupied(w, w->clk);
		/* Nothing due before @upto, or a whole revolution was walked. */
		if (t >= upto || t - from >= tw_wheel_size(w)) {
			w->clk = upto;
			break;
		}
		s = tw_slot(w, t);
		if (w->low[s] >= upto) {
			/* Nothing due in this slot: leave its list unread. */
			w->clk = t + 1;
			continue;
		}
		low = TW_NO_TICK;
		hlist_for_each_entry_safe(node, tmp, &w->slots[s], entry) {
			len++;
			if (node->key >= upto) {
				/* a later revolution: read only */
				low = min(low, node->key);
				continue;
			}
			if (max && n == max) {
				/* Not all read: the old bound stays valid. */
				w->clk = t;
				goto out;
			}
			hlist_del(&node->entry);
			if (last)
				hlist_add_behind(&node->entry, last);
			else
				hlist_add_head(&node->entry, expired);
			last = &node->entry;
			w->count--;
			n++;
		}
		if (hlist_empty(&w->slots[s]))
			__clear_bit(s, w->occupied);
		else
			w->low[s] = low;
		w->clk = t + 1;
		if (len > w->max_slot)
			w->max_slot = len;
	}
out:
	/* The last tick is never over: every key stays below TW_NO_TICK. */
	if (unlikely(w->clk == TW_NO_TICK))
		w->clk = TW_NO_TICK - 1;
	return n;
}

/*
 * What is known of the keys in the occupied slot met at tick @t: none is
 * below @t (the invariant) nor below the slot's bound.
 */
static u64 tw_slot_bound(const struct tw_wheel *w, u64 t)
{
	return max(t, w->low[tw_slot(w, t)]);
}

/**
 * tw_wheel_next_lower_bound() - lower bound of the next key, from the bitmap
 * and the slot bounds only
 * @w: the wheel
 *
 * Walks the occupied slots in tick order, keeping the smallest slot bound,
 * until the tick reached is no smaller than it: no later slot can hold a
 * smaller key.  No list is read.  The bound is exact unless nodes were
 * removed from a slot since it was last walked.
 *
 * Return: a tick <= every key in the wheel, or TW_NO_TICK if it is empty.
 */
u64 tw_wheel_next_lower_bound(const struct tw_wheel *w)
{
	u64 best = TW_NO_TICK;
	u64 t;

	if (!w->count)
		return TW_NO_TICK;
	for (t = tw_next_occupied(w, w->clk);
	     t != TW_NO_TICK && t < best && t - w->clk < tw_wheel_size(w);
	     t = tw_next_occupied(w, t + 1))
		best = min(best, tw_slot_bound(w, t));
	return best;
}

/**
 * tw_wheel_next_key() - the earliest key, searching no further than @bound
 * @w:     the wheel
 * @bound: the last tick of interest
 *
 * Return: the smallest key in the wheel if it is <= @bound, else
 * TW_NO_TICK.
 */
u64 tw_wheel_next_key(const struct tw_wheel *w, u64 bound)
{
	u64 best = TW_NO_TICK;
	u64 t;

	if (!w->count)
		return TW_NO_TICK;

	/*
	 * Every node in the slot met at tick t has key >= t, so once t reaches
	 * the best key found (or @bound) no later slot can hold a better one.
	 */
	for (t = tw_next_occupied(w, w->clk);
	     t != TW_NO_TICK && t < best && t <= bound &&
	     t - w->clk < tw_wheel_size(w);
	     t = tw_next_occupied(w, t + 1)) {
		struct twheel_node *node;

		if (tw_slot_bound(w, t) >= best)
			continue;
		hlist_for_each_entry(node, &w->slots[tw_slot(w, t)], entry)
			best = min(best, node->key);
	}
	return best <= bound ? best : TW_NO_TICK;
}

/**
 * tw_wheel_pick_key() - choose a tick in [@lo, @hi] for range scheduling
 * @lo: earliest acceptable tick
 * @hi: latest acceptable tick, >= @lo
 *
 * Return: the latest tick in the range with the most trailing zero bits.
 */
u64 tw_wheel_pick_key(u64 lo, u64 hi)
{
	u64 low;

	if (hi <= lo)
		return lo;
	/*
	 * Bit b, the highest bit where @lo and @hi differ, is 0 in @lo and 1
	 * in @hi.  The common prefix with bit b set and zeros below (b
	 * trailing zeros) is in range; only @lo itself can do better, when
	 * bits b..0 of @lo are all zero.
	 */
	low = (1ULL << (fls64(lo ^ hi) - 1)) - 1;
	if (!(lo & (2 * low + 1)))
		return lo;
	return hi & ~low;
}
