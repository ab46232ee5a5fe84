// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_wheel - differential fuzz target for the pure wheel (src/wheel.c,
 * built unchanged in userspace against shim/).
 *
 * Input bytes:  [bits] [clk mode] [clk bytes...] then a stream of
 * operations, each an opcode byte followed by its argument bytes; a short
 * input reads as zeros.  The operations act on a pool of NODES nodes and a
 * reference model (per node: linked?, key).  After every operation the
 * wheel is checked against the model and its own invariants; any
 * violation prints what broke and abort()s.
 *
 * Checked (the contract of wheel.c's head comment):
 *  - never early: every node handed out by an advance has key < upto;
 *  - exactly once: a handed-out node was linked in the model, and is
 *    handed out once (it then leaves the model);
 *  - nothing lost: after an advance that did not hit its cap, no model
 *    node with key < upto remains and clk == upto;
 *  - a capped advance returns exactly the cap and leaves clk <= upto;
 *  - within an advance spanning at most one revolution, keys come out in
 *    non-decreasing order, appended after whatever @expired held;
 *  - count, occupied bitmap and slot contents agree; every node in slot s
 *    has key & mask == s and key >= clk; linked-ness matches the model;
 *  - next_key(bound) == model minimum if <= bound, else TW_NO_TICK;
 *  - next_lower_bound() <= model minimum (TW_NO_TICK when empty);
 *  - pick_key(lo, hi) in [lo, hi], with the most trailing zeros and the
 *    latest such; brute force over small ranges.
 *
 * Keys and ticks are kept below KEY_LIMIT (2^62): the wheel uses U64_MAX
 * as "no tick" and does not promise anything about ticks that near it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bitops.h>
#include <linux/kernel.h>

#include "wheel.h"

#define NODES		64
#define MAX_BITS	10
#define MAX_OPS		4096
#define KEY_LIMIT	BIT_ULL(62)

/*
 * The checkers walk every slot after most operations; their own branches
 * are no coverage worth steering by, and instrumenting them costs most of
 * the run time.  (gcc builds have no coverage instrumentation anyway.)
 */
#if defined(__clang__) && __clang_major__ >= 13
#define NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define NO_COVERAGE
#endif

struct input {
	const unsigned char *p;
	size_t left;
};

static unsigned int get8(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

static u64 getn(struct input *in, int bytes)
{
	u64 v = 0;

	while (bytes--)
		v = (v << 8) | get8(in);
	return v;
}

struct model {
	bool linked;
	u64 key;
};

static struct tw_wheel w;
static struct hlist_head slots[1 << MAX_BITS];
static unsigned long occupied[BITS_TO_LONGS(1 << MAX_BITS)];
static u64 low[1 << MAX_BITS];
static struct twheel_node pool[NODES];
static struct model m[NODES];
static struct twheel_node sentinel[2];
static unsigned int op_no;

#define FAIL(fmt, ...) do {						\
	fprintf(stderr, "wheel-fuzz: op %u: " fmt			\
		" (bits %u clk %llu count %lu)\n", op_no, ##__VA_ARGS__,	\
		w.bits, (unsigned long long)w.clk, w.count);		\
	abort();							\
} while (0)

static u64 cap(u64 v)
{
	return v < KEY_LIMIT ? v : KEY_LIMIT - 1;
}

static int node_index(const struct twheel_node *node)
{
	if (node < pool || node >= pool + NODES)
		return -1;
	return (int)(node - pool);
}

NO_COVERAGE static u64 model_min(void)
{
	u64 best = TW_NO_TICK;
	int i;

	for (i = 0; i < NODES; i++)
		if (m[i].linked && m[i].key < best)
			best = m[i].key;
	return best;
}

/*
 * Check one slot against the model: every node in it is a pending pool
 * node, once, with the model's key, in the right slot, not below clk; the
 * occupied bit says whether the slot is non-empty.  Returns its length.
 */
NO_COVERAGE static unsigned long check_slot(u64 s, bool *seen)
{
	u64 mask = tw_wheel_size(&w) - 1;
	struct twheel_node *node;
	unsigned long len = 0;
	int i;

	hlist_for_each_entry(node, &w.slots[s], entry) {
		i = node_index(node);
		if (i < 0)
			FAIL("foreign node %p in slot %llu", (void *)node,
			     (unsigned long long)s);
		if (seen[i])
			FAIL("node %d linked twice (slot %llu)", i,
			     (unsigned long long)s);
		seen[i] = true;
		if (!m[i].linked)
			FAIL("node %d in slot %llu but not pending in the model",
			     i, (unsigned long long)s);
		if (node->key != m[i].key)
			FAIL("node %d key %llu, model %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)m[i].key);
		if ((node->key & mask) != s)
			FAIL("node %d key %llu in wrong slot %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)s);
		if (node->key < w.clk)
			FAIL("node %d key %llu below clk", i,
			     (unsigned long long)node->key);
		if (node->key < w.low[s])
			FAIL("node %d key %llu below slot %llu's bound %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)s,
			     (unsigned long long)w.low[s]);
		if (len++ > NODES)
			FAIL("slot %llu list loops", (unsigned long long)s);
	}
	if (!!len != test_bit(s, w.occupied))
		FAIL("slot %llu has %lu nodes but occupied bit %d",
		     (unsigned long long)s, len, (int)test_bit(s, w.occupied));
	return len;
}

/* Count and linked-ness of every node against the model. */
NO_COVERAGE static void check_nodes(const bool *seen)
{
	unsigned long linked = 0;
	int i;

	for (i = 0; i < NODES; i++) {
		if (m[i].linked)
			linked++;
		if (seen && m[i].linked != seen[i])
			FAIL("node %d pending in model %d, found in wheel %d", i,
			     m[i].linked, seen[i]);
		if (tw_node_linked(&pool[i]) != m[i].linked)
			FAIL("node %d tw_node_linked %d, model %d", i,
			     tw_node_linked(&pool[i]), m[i].linked);
	}
	if (linked != w.count)
		FAIL("count %lu, model %lu", w.count, linked);
}

/* Full consistency check of the wheel against the model. */
NO_COVERAGE static void check_wheel(void)
{
	u64 size = tw_wheel_size(&w), s;
	bool seen[NODES] = { false };
	unsigned long total = 0;

	for (s = 0; s < size; s++)
		total += check_slot(s, seen);
	for (s = size; s < BITS_TO_LONGS(size) * BITS_PER_LONG; s++)
		if (test_bit(s, w.occupied))
			FAIL("occupied bit %llu beyond the wheel",
			     (unsigned long long)s);
	if (total != w.count)
		FAIL("count %lu, slots hold %lu", w.count, total);
	check_nodes(seen);
}

/*
 * The cheap check after an insert or remove of pool node @i whose key was
 * @old_key (if it was pending): the slots of its old and new keys, and the
 * counts.  The next advance (or the end of the input) checks everything.
 */
NO_COVERAGE static void check_touched(int i, u64 old_key)
{
	u64 mask = tw_wheel_size(&w) - 1;
	bool seen[NODES] = { false };

	check_slot(old_key & mask, seen);
	if ((m[i].key & mask) != (old_key & mask))
		check_slot(m[i].key & mask, seen);
	check_nodes(NULL);
}

/* A key relative to the clock, in the shapes that stress the wheel. */
static u64 pick_insert_key(struct input *in)
{
	u64 size = tw_wheel_size(&w), clk = w.clk, back;
	unsigned int sel = get8(in);
	int other;

	switch (sel % 8) {
	case 0:		/* near future (or now) */
		return cap(clk + get8(in));
	case 1:		/* past: clamped to clk */
		back = get8(in) + 1;
		return back > clk ? 0 : clk - back;
	case 2:		/* exact multiples of the span */
		return cap(clk + size * (get8(in) % 5));
	case 3:		/* a revolution or more out, off the slot of clk */
		return cap(clk + size * (1 + get8(in) % 4) + get8(in) % size);
	case 4:		/* far future, beyond 2^32 ticks */
		return cap(clk + (1ULL << 32) + getn(in, 4));
	case 5:
		return cap(clk + getn(in, 2));
	case 6:		/* absolute, anywhere (often in the past) */
		return cap(getn(in, 6));
	default:	/* share a key (or its slot) with another node */
		other = get8(in) % NODES;
		if (m[other].linked)
			return cap(m[other].key + size * (sel / 8 % 3));
		return clk;
	}
}

static void do_insert(struct twheel_node *node, int i, u64 key)
{
	tw_wheel_insert(&w, node, key);
	m[i].linked = true;
	m[i].key = key < w.clk ? w.clk : key;
}

static void do_remove(struct twheel_node *node, int i)
{
	tw_wheel_remove(&w, node);
	m[i].linked = false;
	if (tw_node_linked(node))
		FAIL("node %d still linked after remove", i);
}

static void op_advance(struct input *in)
{
	u64 size = tw_wheel_size(&w), from = w.clk, upto, step = 0, prev;
	unsigned int sel = get8(in), capb = get8(in), max, n, got = 0;
	struct hlist_head expired = HLIST_HEAD_INIT;
	struct hlist_node *pos;
	int sentinels = (sel & 0x80) ? 1 + !!(sel & 0x40) : 0;
	int i;

	switch (sel % 8) {
	case 0:
	case 1:
		step = 1;
		break;
	case 2:
		step = get8(in);
		break;
	case 3:		/* more than one revolution */
		step = size + 1 + getn(in, 2);
		break;
	case 4:		/* huge */
		step = (getn(in, 4) + 1) << (get8(in) % 24);
		break;
	case 5:		/* to the next slot-0 boundary, or a few after */
		step = size - (from & (size - 1)) + get8(in) % 3;
		break;
	case 6:		/* exactly one revolution */
		step = size;
		break;
	default:	/* to just past the earliest pending key */
		prev = model_min();
		step = prev == TW_NO_TICK ? 0 : prev - from + 1 + get8(in) % 2;
		break;
	}
	upto = cap(from + step);
	max = (capb & 0x80) ? 1 + capb % 16 : 0;

	/* Entries already on @expired must stay first. */
	for (i = sentinels - 1; i >= 0; i--) {
		INIT_HLIST_NODE(&sentinel[i].entry);
		hlist_add_head(&sentinel[i].entry, &expired);
	}

	n = tw_wheel_advance(&w, upto, max, &expired);

	pos = expired.first;
	for (i = 0; i < sentinels; i++) {
		if (pos != &sentinel[i].entry)
			FAIL("advance did not append after the existing entries");
		pos = pos->next;
	}
	prev = 0;
	while (pos) {
		struct twheel_node *node = hlist_entry(pos, struct twheel_node, entry);
		struct hlist_node *next = pos->next;

		i = node_index(node);
		if (i < 0)
			FAIL("advance handed out a foreign node");
		if (!m[i].linked)
			FAIL("node %d handed out but not pending (twice?)", i);
		if (node->key != m[i].key)
			FAIL("node %d handed out with key %llu, model %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)m[i].key);
		if (node->key >= upto)
			FAIL("early fire: node %d key %llu handed out by advance to %llu",
			     i, (unsigned long long)node->key,
			     (unsigned long long)upto);
		if (upto - from <= size && node->key < prev)
			FAIL("out of order within a revolution: key %llu after %llu",
			     (unsigned long long)node->key,
			     (unsigned long long)prev);
		prev = node->key;
		m[i].linked = false;
		got++;
		if (got > NODES)
			FAIL("expired list loops");
		pos = next;
	}
	if (got != n)
		FAIL("advance returned %u, expired list holds %u", n, got);
	if (max && n > max)
		FAIL("advance handed out %u, cap %u", n, max);
	if (w.clk > upto)
		FAIL("clk %llu past upto %llu", (unsigned long long)w.clk,
		     (unsigned long long)upto);
	if (w.clk < from)
		FAIL("clk went back from %llu", (unsigned long long)from);
	if (!max || n < max) {
		if (w.clk != upto)
			FAIL("uncapped advance left clk below upto %llu",
			     (unsigned long long)upto);
		for (i = 0; i < NODES; i++)
			if (m[i].linked && m[i].key < upto)
				FAIL("lost: node %d key %llu still pending after advance to %llu",
				     i, (unsigned long long)m[i].key,
				     (unsigned long long)upto);
	}
	/* The caller owns the handed-out nodes: unlink them for reuse. */
	for (i = 0; i < NODES; i++)
		if (!m[i].linked && !hlist_unhashed(&pool[i].entry))
			hlist_del_init(&pool[i].entry);
	for (i = 0; i < sentinels; i++)
		hlist_del_init(&sentinel[i].entry);
}

static void op_next_key(struct input *in)
{
	u64 min = model_min(), bound, got, want;

	switch (get8(in) % 6) {
	case 0:
		bound = cap(w.clk + get8(in));
		break;
	case 1:
		bound = min;
		break;
	case 2:
		bound = min == TW_NO_TICK ? 0 : min - 1;
		break;
	case 3:
		bound = TW_NO_TICK;
		break;
	case 4:
		bound = cap(w.clk + getn(in, 5));
		break;
	default:
		bound = cap(w.clk + tw_wheel_size(&w) * (get8(in) % 4));
		break;
	}
	got = tw_wheel_next_key(&w, bound);
	want = min <= bound ? min : TW_NO_TICK;
	if (got != want)
		FAIL("next_key(%llu) = %llu, model wants %llu",
		     (unsigned long long)bound, (unsigned long long)got,
		     (unsigned long long)want);

	got = tw_wheel_next_lower_bound(&w);
	if (got > min)
		FAIL("next_lower_bound %llu above the earliest key %llu",
		     (unsigned long long)got, (unsigned long long)min);
	if (min != TW_NO_TICK && got < w.clk)
		FAIL("next_lower_bound %llu below clk", (unsigned long long)got);
}

static int tz(u64 x)
{
	return x ? __builtin_ctzll(x) : 64;
}

static void op_pick_key(struct input *in)
{
	unsigned int sel = get8(in);
	u64 lo, hi, r, t, best;
	int z;

	switch (sel % 4) {
	case 0:
		lo = get8(in);
		break;
	case 1:
		lo = w.clk;
		break;
	case 2:
		lo = getn(in, 8);
		break;
	default:
		lo = getn(in, 3) << (get8(in) % 48);
		break;
	}
	hi = lo + ((sel & 0x40) ? getn(in, 8) : get8(in) * (get8(in) + 1));
	if (hi < lo)
		hi = TW_NO_TICK;

	r = tw_wheel_pick_key(lo, hi);
	if (r < lo || r > hi)
		FAIL("pick_key(%llu, %llu) = %llu outside the range",
		     (unsigned long long)lo, (unsigned long long)hi,
		     (unsigned long long)r);
	/* Exact check for any range: no tick in range with more zeros... */
	z = tz(r);
	if (z < 63) {
		u64 unit = 1ULL << (z + 1);
		u64 next = (lo + unit - 1) & ~(unit - 1);	/* first multiple >= lo */

		if (next >= lo && next <= hi)
			FAIL("pick_key(%llu, %llu) = %llu, but %llu has more trailing zeros",
			     (unsigned long long)lo, (unsigned long long)hi,
			     (unsigned long long)r, (unsigned long long)next);
	}
	/* ...and none later with as many. */
	if (z < 64 && r + (1ULL << z) > r && r + (1ULL << z) <= hi)
		FAIL("pick_key(%llu, %llu) = %llu, but %llu is later and as round",
		     (unsigned long long)lo, (unsigned long long)hi,
		     (unsigned long long)r,
		     (unsigned long long)(r + (1ULL << z)));
	/* Brute force over small ranges. */
	if (hi - lo <= 4096) {
		best = lo;
		for (t = lo;; t++) {
			if (tz(t) >= tz(best))
				best = t;
			if (t == hi)
				break;
		}
		if (best != r)
			FAIL("pick_key(%llu, %llu) = %llu, brute force %llu",
			     (unsigned long long)lo, (unsigned long long)hi,
			     (unsigned long long)r, (unsigned long long)best);
	}
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct input in = { data, size };
	unsigned int bits = 4 + get8(&in) % (MAX_BITS - 4 + 1);
	u64 clk;
	int i;

	switch (get8(&in) % 4) {
	case 0:
		clk = 0;
		break;
	case 1:
		clk = getn(&in, 2);
		break;
	case 2:
		clk = getn(&in, 5);
		break;
	default:
		clk = (1ULL << 40) - getn(&in, 1) - 1;
		break;
	}
	op_no = 0;
	tw_wheel_init(&w, slots, low, occupied, bits, clk);
	for (i = 0; i < NODES; i++) {
		tw_node_init(&pool[i]);
		m[i].linked = false;
		m[i].key = 0;
	}
	check_wheel();

	while (in.left && op_no < MAX_OPS) {
		unsigned int op = get8(&in);
		struct twheel_node *node;
		u64 old_key = 0;
		bool full;

		op_no++;
		full = op % 10 >= 5 || w.bits <= 6;
		if (op % 10 <= 4) {
			i = get8(&in) % NODES;
			node = &pool[i];
			old_key = m[i].key;
		} else {
			i = -1;
			node = NULL;
		}
		switch (op % 10) {
		case 0:
		case 1:
		case 2:	/* insert; a pending node is moved (remove + insert) */
			if (m[i].linked)
				do_remove(node, i);
			do_insert(node, i, pick_insert_key(&in));
			break;
		case 3:	/* remove if pending */
			if (m[i].linked)
				do_remove(node, i);
			break;
		case 4:	/* re-insert a pending node at the same or a new key */
			if (m[i].linked) {
				u64 key = (op & 0x80) ? m[i].key : pick_insert_key(&in);

				do_remove(node, i);
				do_insert(node, i, key);
			}
			break;
		case 5:
		case 6:
		case 7:
			op_advance(&in);
			break;
		case 8:
			op_next_key(&in);
			break;
		default:
			op_pick_key(&in);
			break;
		}
		if (full)
			check_wheel();
		else
			check_touched(i, old_key);
	}
	check_wheel();
	return 0;
}
