/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hand-out work and the tickless drain of case (c), shared by the
 * native benchmark (bench_engines.c) and its callgrind driver
 * (engine_prof.c), which must run the same loop.  Included after the
 * engines' sources.
 */
#ifndef _TWHEEL_DRAIN_H
#define _TWHEEL_DRAIN_H

#include <stdio.h>
#include <stdlib.h>

/* Every handed-out key is added here, so that no work is optimised out. */
static u64 sink;

/* Hand-out work: what the facility's tick handler does per expired node. */
static inline u64 drain_expired(struct hlist_head *expired)
{
	struct twheel_node *node;
	u64 n = 0;

	while (!hlist_empty(expired)) {
		node = hlist_entry(expired->first, struct twheel_node, entry);
		hlist_del_init(&node->entry);
		sink += node->key;
		n++;
	}
	return n;
}

/*
 * Advance @e to @upto and do the hand-out work, as the facility's tick
 * handler does: the engine may hand out a due slot unread, which the
 * hand-out work counts (there is no cap here).  Returns the nodes handed
 * out.
 */
static inline u64 drain_advance(struct tw_engine *e, u64 upto,
				struct hlist_head *expired)
{
	unsigned int got = tw_engine_advance_loose(e, upto, 0, expired);
	u64 n = drain_expired(expired);

	if (got == TW_UNCOUNTED)
		tw_engine_settle(e, n, NULL);
	return n;
}

/*
 * A next expiry bound that cannot move the clock would make a drain loop
 * for ever: a broken engine fails the run instead.
 */
static void __noreturn drain_stuck(const struct tw_engine *e, u64 lb)
{
	fprintf(stderr, "%s: %lu timers, next expiry bound %llu at clock %llu\n",
		tw_engine_name(e->kind), (unsigned long)tw_engine_count(e),
		(unsigned long long)lb, (unsigned long long)tw_engine_clk(e));
	exit(1);
}

/*
 * Drain @e tickless, as the facility's hrtimer does: advance to the next
 * expiry bound + 1 until it is empty.  Returns the nodes handed out.
 *
 * Out of line: inlined into bench_engines' replay loop, its registers
 * pushed that loop's counter and node array onto the stack, and the
 * loop's extra stores made every start and cancel of case (b) 10-30 %
 * slower (stores to cold list neighbours already fill the store buffer
 * there).  A drain is one call per replay, so the call costs nothing.
 */
static noinline u64 drain_all(struct tw_engine *e, struct hlist_head *expired)
{
	u64 n = 0;

	while (tw_engine_count(e)) {
		u64 lb = tw_engine_next_lower_bound(e);

		if (lb == TW_NO_TICK || lb < tw_engine_clk(e))
			drain_stuck(e, lb);
		n += drain_advance(e, lb + 1, expired);
	}
	return n;
}

#endif /* _TWHEEL_DRAIN_H */
