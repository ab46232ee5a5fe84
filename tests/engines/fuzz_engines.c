// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_engines - differential fuzz target for the pure engines (src/wheel.c,
 * src/hier.c, src/lawn.c through src/engine.h), built unchanged in
 * userspace against the kernel tree's tools/include.
 *
 * Every input is run once per engine.  Input bytes:  [bits] [clk mode]
 * [clk bytes...] then a stream of operations, each an opcode byte followed
 * by its argument bytes; a short input reads as zeros.  The operations act
 * on a pool of NODES nodes and the engines' reference model, model.c (the
 * contract of engine.h: never early, exactly once, nothing lost, the cap,
 * order, the count and both next-expiry queries; the KUnit suites use the
 * same model).  After every operation the engine is checked against the
 * model and its own invariants; any violation prints what broke and
 * abort()s.  pick_key(lo, hi) is checked here: in [lo, hi], with the most
 * trailing zeros and the latest such; brute force over small ranges.
 * Two operations drive the hierarchical engine's bounded work: setting
 * its chunk of moves per advance (1-8, or none), after which the model
 * accepts an advance cut short only with exactly the chunk moved and the
 * clock left on the cascade point, and forward(to), to <= the lower
 * bound, which must hand out nothing, move no node and stop at @to or the
 * next cascade point; the structure check then allows the half-cascaded
 * slot at the clock.
 * And per engine, its structure: Scheme 6 slots, bitmap and slot bounds;
 * the hierarchical engine's level/slot of every node (level 0 less than a
 * revolution ahead, upper levels by the highest bit differing from the
 * clock), bitmaps and summary, the cached earliest level-0 key,
 * no occupied slot at or behind the clock, a node never moving up a level
 * (so at most levels - 1 moves), and a node placed on a bucket start never
 * cascading; the Lawn's sorted FIFOs, sentinels and heap.
 *
 * Scheme 6 keys are kept below 2^62 (it promises nothing near U64_MAX);
 * the others use the whole range up to U64_MAX - 1 (U64_MAX is "no tick").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bitops.h>
#include <linux/kernel.h>

#include "engine.h"
#include "model.h"

#define NODES		64
/* level-0 sizes: 2^4 .. 2^SMALL_BITS, and 2^MAX_BITS (two summary words) */
#define SMALL_BITS	10
#define MAX_BITS	13
#define MAX_OPS		4096

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

/* Per node, what the structure checks of the hierarchical engine track. */
struct model {
	bool fixed;	/* placed on a bucket start, must not move */
	int level;	/* level at the last full check */
	u64 placed;	/* the key its slot was chosen by */
};

static struct tw_engine E;
static unsigned long mem[(1 << MAX_BITS) * 8 + 4096];
static struct twheel_node pool[NODES];
static struct twm M;
static struct twm_node mn[NODES];
static struct model m[NODES];
static struct twheel_node sentinel[2];
static unsigned int op_no;
static u64 key_limit;

#define CLK	tw_engine_clk(&E)
#define COUNT	tw_engine_count(&E)

#define FAIL(fmt, ...) do {						\
	fprintf(stderr, "wheel-fuzz: %s: op %u: " fmt			\
		" (slots %llu clk %llu count %lu)\n",			\
		tw_engine_name(E.kind), op_no, ##__VA_ARGS__,		\
		(unsigned long long)tw_engine_slots(&E),		\
		(unsigned long long)CLK, COUNT);			\
	abort();							\
} while (0)

/* What the model (model.c) found wrong, if anything. */
#define MODEL_OK() do {							\
	if (M.errors)							\
		FAIL("%s", M.msg);					\
} while (0)

static bool linked(int i)
{
	return mn[i].state == TWM_PENDING;
}

/*
 * With TWHEEL_FUZZ_TRACE in the environment, each run and operation is
 * printed on stdout as decoded from the input, so that the decodings of
 * one input by two builds (gcc's replay and clang's) can be compared: C
 * leaves the order of two reads in one expression to the compiler.
 */
static int trace = -1;

#define TRACE(fmt, ...) do {						\
	if (trace)							\
		printf(fmt "\n", ##__VA_ARGS__);			\
} while (0)

static u64 cap(u64 v)
{
	return v < key_limit ? v : key_limit - 1;
}

/* a + b, saturated to the key limit */
static u64 add(u64 a, u64 b)
{
	return a + b < a ? key_limit - 1 : cap(a + b);
}

static int node_index(const struct twheel_node *node)
{
	if (node < pool || node >= pool + NODES)
		return -1;
	return (int)(node - pool);
}

/* One node found on a list of the engine: a pending pool node, once. */
NO_COVERAGE static int check_node(const struct twheel_node *node, bool *seen,
				  const char *where, u64 s)
{
	int i = node_index(node);

	if (i < 0)
		FAIL("foreign node %p in %s %llu", (void *)node, where,
		     (unsigned long long)s);
	if (seen[i])
		FAIL("node %d linked twice (%s %llu)", i, where,
		     (unsigned long long)s);
	seen[i] = true;
	if (!linked(i))
		FAIL("node %d in %s %llu but not pending in the model", i,
		     where, (unsigned long long)s);
	if (node->key != mn[i].key)
		FAIL("node %d key %llu, model %llu", i,
		     (unsigned long long)node->key,
		     (unsigned long long)mn[i].key);
	if (node->key < CLK)
		FAIL("node %d key %llu below clk", i,
		     (unsigned long long)node->key);
	if (node->key == TW_NO_TICK)
		FAIL("node %d key TW_NO_TICK", i);
	return i;
}

/*
 * Scheme 6: one slot against the model: every node in it is in the right
 * slot and not below the slot's bound; the occupied bit says whether the
 * slot is non-empty.  Returns its length.
 */
NO_COVERAGE static unsigned long check_slot(u64 s, bool *seen)
{
	struct tw_wheel *w = &E.wheel;
	u64 mask = tw_wheel_size(w) - 1;
	struct twheel_node *node;
	unsigned long len = 0;
	int i;

	hlist_for_each_entry(node, &w->slots[s], entry) {
		i = check_node(node, seen, "slot", s);
		if ((node->key & mask) != s)
			FAIL("node %d key %llu in wrong slot %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)s);
		if (node->key < w->low[s])
			FAIL("node %d key %llu below slot %llu's bound %llu", i,
			     (unsigned long long)node->key,
			     (unsigned long long)s,
			     (unsigned long long)w->low[s]);
		if (len++ > NODES)
			FAIL("slot %llu list loops", (unsigned long long)s);
	}
	if (!!len != test_bit(s, w->occupied))
		FAIL("slot %llu has %lu nodes but occupied bit %d",
		     (unsigned long long)s, len, (int)test_bit(s, w->occupied));
	return len;
}

NO_COVERAGE static unsigned long check_wheel(bool *seen)
{
	struct tw_wheel *w = &E.wheel;
	u64 size = tw_wheel_size(w), s;
	unsigned long total = 0;

	for (s = 0; s < size; s++)
		total += check_slot(s, seen);
	for (s = size; s < BITS_TO_LONGS(size) * BITS_PER_LONG; s++)
		if (test_bit(s, w->occupied))
			FAIL("occupied bit %llu beyond the wheel",
			     (unsigned long long)s);
	return total;
}

/* The upper level the highest bit where @key and the clock differ picks. */
static int xor_level(const struct tw_hier *h, u64 key)
{
	u64 diff = key ^ h->clk;

	if (!(diff >> h->bits))
		return 0;
	return 1 + (fls64(diff) - 1 - h->bits) / TW_HIER_LVL_BITS;
}

/* The shift of upper level @level's slots: S(L) of hier.c. */
static unsigned int lvl_shift(const struct tw_hier *h, unsigned int level)
{
	return h->bits + (level - 1) * TW_HIER_LVL_BITS;
}

/* Whether @key belongs on upper level @level, slot @s, at the clock. */
static bool on_slot(const struct tw_hier *h, u64 key, unsigned int level,
		    u64 s)
{
	unsigned int sh = lvl_shift(h, level);

	return xor_level(h, key) == (int)level &&
	       ((key >> sh) & (TW_HIER_LVL_SIZE - 1)) == s;
}

NO_COVERAGE static unsigned long check_hier(bool *seen)
{
	struct tw_hier *h = &E.hier;
	u64 size = 1ULL << h->bits, mask = size - 1, s, min0 = TW_NO_TICK;
	unsigned long total = 0, words = BITS_TO_LONGS(size), wi;
	struct twheel_node *node;
	bool lazy[NODES] = { false };
	unsigned int level;
	int i;

	for (s = 0; s < size; s++) {
		unsigned long len = 0;

		hlist_for_each_entry(node, &h->l0[s], entry) {
			i = check_node(node, seen, "level-0 slot", s);
			if ((node->key & mask) != s ||
			    (node->key - h->clk) >> h->bits)
				FAIL("node %d key %llu in level-0 slot %llu", i,
				     (unsigned long long)node->key,
				     (unsigned long long)s);
			if (tw_hier_node_level(h, node))
				FAIL("node %d level-0 but level says %d", i,
				     tw_hier_node_level(h, node));
			min0 = min(min0, node->key);
			if (len++ > NODES)
				FAIL("level-0 slot list loops");
		}
		/* a removal may leave an emptied slot's bit set */
		if (len && !test_bit(s, h->l0_map))
			FAIL("level-0 slot %llu: %lu nodes, bit clear",
			     (unsigned long long)s, len);
		total += len;
	}
	for (wi = 0; wi < BITS_TO_LONGS(words) * BITS_PER_LONG; wi++)
		if (test_bit(wi, h->l0_sum) != (wi < words && h->l0_map[wi]))
			FAIL("summary bit %lu wrong", wi);
	if (h->next0 != min0)
		FAIL("next0 %llu, earliest level-0 key %llu",
		     (unsigned long long)h->next0, (unsigned long long)min0);
	for (level = 1; level <= TW_HIER_MAX_UP; level++) {
		unsigned int sh = lvl_shift(h, level);
		u64 cur = sh < 64 ? (h->clk >> sh) & (TW_HIER_LVL_SIZE - 1) : 0;
		/* a cascade not done (or cut short) at the clock's slot */
		bool pend = h->tc == h->clk && sh < 64 &&
			    !(h->clk & ((1ULL << sh) - 1));

		if (!(h->up_levels & BIT(level - 1)) != !h->up_map[level - 1])
			FAIL("level %u: map %llx, levels %lx", level,
			     (unsigned long long)h->up_map[level - 1],
			     (unsigned long)h->up_levels);

		for (s = 0; s < TW_HIER_LVL_SIZE; s++) {
			unsigned int idx = tw_hier_up_idx(level, s);
			struct hlist_head *head = &h->up[idx];
			unsigned long len = 0;

			hlist_for_each_entry(node, head, entry) {
				u64 k;

				i = check_node(node, seen, "upper slot",
					       level * 100 + s);
				if (level > h->levels)
					FAIL("node %d on unused level %u", i, level);
				/*
				 * Where its key puts it, or, moved later in
				 * place by tw_engine_move(), where the key it
				 * was placed by does.
				 */
				k = node->key;
				lazy[i] = !on_slot(h, k, level, s) &&
					  !(pend && s == cur &&
					    k >> sh == h->clk >> sh);
				if (lazy[i])
					k = m[i].placed;
				if (!on_slot(h, k, level, s) &&
				    !(pend && s == cur && k >> sh == h->clk >> sh))
					FAIL("node %d key %llu (placed %llu) on level %u slot %llu",
					     i, (unsigned long long)node->key,
					     (unsigned long long)m[i].placed, level,
					     (unsigned long long)s);
				if (node->key < h->up_low[idx])
					FAIL("node %d key %llu below its slot's bound %llu",
					     i, (unsigned long long)node->key,
					     (unsigned long long)h->up_low[idx]);
				if (h->tc > (k >> sh << sh))
					FAIL("cascade point %llu after node %d's block",
					     (unsigned long long)h->tc, i);
				if (len++ > NODES)
					FAIL("upper slot list loops");
			}
			if (!!len != !!(h->up_map[level - 1] & BIT_ULL(s)))
				FAIL("level %u slot %llu: %lu nodes, bit wrong",
				     level, (unsigned long long)s, len);
			if (!len && h->up_low[idx] != TW_NO_TICK)
				FAIL("level %u slot %llu empty, its bound %llu",
				     level, (unsigned long long)s,
				     (unsigned long long)h->up_low[idx]);
			if (len && (s < cur || (s == cur && !pend)))
				FAIL("level %u slot %llu occupied at or behind the clock's %llu",
				     level, (unsigned long long)s,
				     (unsigned long long)cur);
			total += len;
		}
	}
	/*
	 * Levels only go down, and a node on its bucket start stays put; a
	 * node moved in place is placed anew by its cascade, on any level.
	 */
	for (i = 0; i < NODES; i++) {
		int lv;

		if (!linked(i))
			continue;
		lv = tw_hier_node_level(h, &pool[i]);
		if (lazy[i]) {
			m[i].level = INT_MAX;
			continue;
		}
		m[i].placed = mn[i].key;
		if (lv > m[i].level)
			FAIL("node %d moved up from level %d to %d", i,
			     m[i].level, lv);
		if (m[i].fixed && lv != m[i].level)
			FAIL("node %d on a bucket start (key %llu) cascaded from level %d to %d",
			     i, (unsigned long long)mn[i].key, m[i].level, lv);
		m[i].level = lv;
	}
	return total;
}

NO_COVERAGE static unsigned long check_lawn(bool *seen)
{
	struct tw_lawn *l = &E.lawn;
	unsigned int qi, nq = 1U << l->qbits, nonempty = 0, p;
	unsigned long total = 0;

	for (qi = 0; qi < nq; qi++) {
		struct tw_lawn_q *q = &l->q[qi];
		struct hlist_node *pos;
		u64 prev = 0;
		unsigned long len = 0;

		for (pos = q->head.first; pos != &q->end.entry; pos = pos->next) {
			struct twheel_node *node =
				hlist_entry(pos, struct twheel_node, entry);
			int i;

			if (!pos)
				FAIL("FIFO %u lost its sentinel", qi);
			i = check_node(node, seen, "FIFO", qi);
			if (node->key < prev)
				FAIL("FIFO %u unsorted: key %llu after %llu (node %d)",
				     qi, (unsigned long long)node->key,
				     (unsigned long long)prev, i);
			prev = node->key;
			if (len++ > NODES)
				FAIL("FIFO %u loops", qi);
		}
		if (q->end.entry.next)
			FAIL("FIFO %u sentinel not last", qi);
		if (len) {
			nonempty++;
			if (q->pos >= l->nr_heap || l->heap[q->pos] != qi)
				FAIL("FIFO %u not in the heap", qi);
		}
		total += len;
	}
	if (nonempty != l->nr_heap)
		FAIL("%u non-empty FIFOs, heap holds %u", nonempty, l->nr_heap);
	for (p = 1; p < l->nr_heap; p++) {
		u64 kp = hlist_entry(l->q[l->heap[(p - 1) / 2]].head.first,
				     struct twheel_node, entry)->key;
		u64 kc = hlist_entry(l->q[l->heap[p]].head.first,
				     struct twheel_node, entry)->key;

		if (kc < kp)
			FAIL("heap order broken at %u", p);
	}
	return total;
}

/* Count and linked-ness of every node against the model. */
NO_COVERAGE static void check_nodes(const bool *seen)
{
	unsigned long nlinked = 0;
	int i;

	for (i = 0; i < NODES; i++) {
		if (linked(i))
			nlinked++;
		if (seen && linked(i) != seen[i])
			FAIL("node %d pending in model %d, found in engine %d", i,
			     linked(i), seen[i]);
		if (tw_node_linked(&pool[i]) != linked(i))
			FAIL("node %d tw_node_linked %d, model %d", i,
			     tw_node_linked(&pool[i]), linked(i));
	}
	if (nlinked != COUNT)
		FAIL("count %lu, model %lu", COUNT, nlinked);
}

/* Full consistency check of the engine against the model. */
NO_COVERAGE static void check_engine(void)
{
	bool seen[NODES] = { false };
	unsigned long total;

	switch (E.kind) {
	case TWHEEL_ENGINE_SCHEME6:
		total = check_wheel(seen);
		break;
	case TWHEEL_ENGINE_LAWN:
		total = check_lawn(seen);
		break;
	default:
		total = check_hier(seen);
		break;
	}
	if (total != COUNT)
		FAIL("count %lu, lists hold %lu", COUNT, total);
	check_nodes(seen);
}

/* A key relative to the clock, in the shapes that stress the engines. */
static u64 pick_insert_key(struct input *in)
{
	u64 size = tw_engine_slots(&E), clk = CLK, back, a;
	unsigned int sel = get8(in);
	int other;

	switch (sel % 8) {
	case 0:		/* near future (or now) */
		return add(clk, get8(in));
	case 1:		/* past: clamped to clk */
		back = get8(in) + 1;
		return back > clk ? 0 : clk - back;
	case 2:		/* exact multiples of the span */
		return add(clk, size * (get8(in) % 5));
	case 3:		/* a revolution or more out, off the slot of clk */
		/* the bytes in order: a C expression does not sequence them */
		a = get8(in);
		return add(clk, size * (1 + a % 4) + get8(in) % size);
	case 4:		/* far future, beyond 2^32 ticks, or a power of two */
		if (sel & 0x80)
			return cap(1ULL << (get8(in) % 64));
		return add(clk, (1ULL << 32) + getn(in, 4));
	case 5:		/* a bucket start of a random level */
		a = add(clk, getn(in, 2));
		if (sel & 0x80)
			a &= ~((1ULL << (get8(in) % 40)) - 1);
		return a;
	case 6:		/* absolute, anywhere (often in the past) */
		return cap(getn(in, (sel & 0x80) ? 8 : 6));
	default:	/* share a key (or its slot) with another node */
		other = get8(in) % NODES;
		if (linked(other))
			return add(mn[other].key, size * (sel / 8 % 3));
		return clk;
	}
}

/* The model of a node just placed by its key (the clock's if earlier). */
static void set_placed(struct twheel_node *node, int i)
{
	m[i].level = 0;
	m[i].fixed = false;
	m[i].placed = mn[i].key;
	if (E.kind == TWHEEL_ENGINE_HIER) {
		int lv = tw_hier_node_level(&E.hier, node);

		m[i].level = lv;
		m[i].fixed = lv && !(mn[i].key &
				     ((1ULL << lvl_shift(&E.hier, lv)) - 1));
	}
}

static void do_insert(struct twheel_node *node, int i, u64 key)
{
	TRACE("insert %d %llu", i, (unsigned long long)key);
	twm_insert(&M, i, key);
	MODEL_OK();
	set_placed(node, i);
}

/*
 * The slot of upper level @level that @node, linked there, is on: the
 * index of the list head its list starts from.
 */
static u64 up_slot(const struct tw_hier *h, const struct twheel_node *node,
		   int level)
{
	const struct hlist_node *n = &node->entry;
	unsigned long off;

	for (;;) {
		off = (unsigned long)n->pprev - (unsigned long)h->up;
		if (off < sizeof(struct hlist_head) * TW_HIER_MAX_UP *
			  TW_HIER_LVL_SIZE)
			break;
		n = container_of(n->pprev, struct hlist_node, next);
	}
	return off / sizeof(struct hlist_head) - tw_hier_up_idx(level, 0);
}

/*
 * A pending node to a new key.  The hierarchical engine may leave it in
 * its slot, its list links unchanged, when it is on an upper level and its
 * key goes up: the key it was placed by then still decides where it is,
 * until its slot is cascaded (check_hier()).  A node alone on its list
 * that is removed and put back on that list has the same links too: a key
 * that went down must belong on the slot the node is on (that node was
 * placed by its new key, as set_placed() recorded; the key it was placed
 * by before may be stale, as a cascade places a moved node by its key).
 */
static void do_move(struct twheel_node *node, int i, u64 key)
{
	struct hlist_node *next = node->entry.next, **pprev = node->entry.pprev;
	u64 old = mn[i].key, placed = m[i].placed, s;

	TRACE("move %d %llu", i, (unsigned long long)key);
	twm_move(&M, i, key);
	MODEL_OK();
	set_placed(node, i);
	/* Same links on an upper level: in place, or put back on that list. */
	if (E.kind != TWHEEL_ENGINE_HIER || !m[i].level ||
	    node->entry.next != next || node->entry.pprev != pprev)
		return;
	s = up_slot(&E.hier, node, m[i].level);
	if (mn[i].key < old) {
		if (!on_slot(&E.hier, mn[i].key, m[i].level, s))
			FAIL("node %d left in place, its key down from %llu to %llu",
			     i, (unsigned long long)old,
			     (unsigned long long)mn[i].key);
		return;
	}
	/*
	 * Its cascade places it by the new key, on any level.  Until then
	 * its slot is the one of the key before this move if that key
	 * explains it (a cascade since the last check_hier() placed it by
	 * that key), else of the key recorded.
	 */
	m[i].placed = on_slot(&E.hier, old, m[i].level, s) ? old : placed;
	m[i].fixed = false;
	m[i].level = INT_MAX;
}

static void do_remove(struct twheel_node *node, int i)
{
	TRACE("remove %d", i);
	twm_remove(&M, i);
	MODEL_OK();
}

static void op_advance(struct input *in)
{
	u64 size = tw_engine_slots(&E), from = CLK, upto, step = 0, prev;
	unsigned int sel = get8(in), capb = get8(in), max, n;
	struct hlist_head expired = HLIST_HEAD_INIT;
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
		step = getn(in, 4) + 1;
		step <<= get8(in) % 24;
		break;
	case 5:		/* to the next slot-0 boundary, or a few after */
		step = size - (from & (size - 1)) + get8(in) % 3;
		break;
	case 6:		/* exactly one revolution, or to the end of time */
		step = (sel & 0x20) ? TW_NO_TICK - from : size;
		break;
	default:	/* to just past the earliest pending key */
		prev = twm_min(&M);
		step = prev == TW_NO_TICK ? 0 : prev - from + 1 + get8(in) % 2;
		break;
	}
	upto = from + step < from ? TW_NO_TICK : from + step;
	if (E.kind == TWHEEL_ENGINE_SCHEME6)
		upto = cap(upto);
	max = (capb & 0x80) ? 1 + capb % 16 : 0;
	TRACE("advance %llu max %u sentinels %d%s", (unsigned long long)upto,
	      max, sentinels, (sel & 0x10) ? " loose" : "");

	/* Entries already on @expired must stay first. */
	for (i = sentinels - 1; i >= 0; i--) {
		INIT_HLIST_NODE(&sentinel[i].entry);
		hlist_add_head(&sentinel[i].entry, &expired);
	}
	/* A bucket start that an advance stops on is moved to level 0. */
	for (i = 0; i < NODES; i++)
		if (linked(i) && mn[i].key == upto)
			m[i].fixed = false;

	/* the facility's way (sel & 0x10): a due slot may come unread */
	n = twm_advance(&M, upto, max, sel & 0x10, &expired);
	MODEL_OK();
	/* A capped cascade leaves the due rest on level 0. */
	if (max && n == max)
		for (i = 0; i < NODES; i++)
			if (linked(i) && mn[i].key == CLK)
				m[i].fixed = false;
	/* the model took the nodes handed out off the list */
	for (i = 0; i < sentinels; i++)
		hlist_del_init(&sentinel[i].entry);
}

/* Move the clock on to at most the next lower bound: no work done. */
static void op_forward(struct input *in)
{
	u64 from = CLK, bound = tw_engine_next_lower_bound(&E), to, moves;
	struct hlist_head expired = HLIST_HEAD_INIT;
	unsigned int n;

	to = (get8(in) & 1) ? bound : add(from, getn(in, 3));
	to = min(to, bound);
	if (E.kind == TWHEEL_ENGINE_SCHEME6)
		to = cap(to);
	TRACE("forward %llu", (unsigned long long)to);
	moves = tw_engine_moves(&E);
	n = tw_engine_forward(&E, to, &expired);
	if (n || !hlist_empty(&expired))
		FAIL("forward to %llu handed out %u", (unsigned long long)to, n);
	if (E.kind == TWHEEL_ENGINE_HIER && tw_engine_moves(&E) != moves)
		FAIL("forward to %llu moved nodes", (unsigned long long)to);
	if (CLK < from || (to > from && CLK > to))
		FAIL("forward from %llu to %llu left clk there",
		     (unsigned long long)from, (unsigned long long)to);
	if (E.kind == TWHEEL_ENGINE_HIER && to > from &&
	    CLK != min(to, TW_NO_TICK - 1) && CLK != E.hier.tc)
		FAIL("forward to %llu stopped short of it and of the cascade point",
		     (unsigned long long)to);
	/* A bucket start the clock stops on may be cascaded down a level. */
	for (n = 0; n < NODES; n++)
		if (linked(n) && mn[n].key == CLK)
			m[n].fixed = false;
}

static void op_set_chunk(struct input *in)
{
	unsigned int chunk = get8(in) % 9;

	TRACE("chunk %u", chunk);
	tw_engine_set_chunk(&E, chunk);
}

static void op_next_key(struct input *in)
{
	u64 min = twm_min(&M), bound;

	switch (get8(in) % 6) {
	case 0:
		bound = add(CLK, get8(in));
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
		bound = add(CLK, getn(in, 5));
		break;
	default:
		bound = add(CLK, tw_engine_slots(&E) * (get8(in) % 4));
		break;
	}
	TRACE("next_key %llu", (unsigned long long)bound);
	twm_check_next_key(&M, bound);
	twm_check_queries(&M);
	MODEL_OK();
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
		lo = CLK;
		break;
	case 2:
		lo = getn(in, 8);
		break;
	default:
		lo = getn(in, 3);
		lo <<= get8(in) % 48;
		break;
	}
	if (sel & 0x40) {
		hi = lo + getn(in, 8);
	} else {
		hi = get8(in);
		hi = lo + hi * (get8(in) + 1);
	}
	if (hi < lo)
		hi = TW_NO_TICK;
	TRACE("pick_key %llu %llu", (unsigned long long)lo,
	      (unsigned long long)hi);

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

static void run(enum twheel_engine kind, const unsigned char *data,
		size_t size)
{
	struct input in = { data, size };
	unsigned int bits = 4 + get8(&in) % (SMALL_BITS - 4 + 2);
	u64 clk;
	int i;

	if (bits > SMALL_BITS)
		bits = MAX_BITS;
	key_limit = kind == TWHEEL_ENGINE_SCHEME6 ? BIT_ULL(62) : TW_NO_TICK;
	switch (get8(&in) % 6) {
	case 0:
		clk = 0;
		break;
	case 1:
		clk = getn(&in, 2);
		break;
	case 2:
		clk = getn(&in, 5);
		break;
	case 3:
		clk = (1ULL << 40) - getn(&in, 1) - 1;
		break;
	case 4:		/* just below 2^32 */
		clk = (1ULL << 32) - getn(&in, 1) - 1;
		break;
	default:	/* just below 2^64 */
		clk = cap(TW_NO_TICK - getn(&in, 2) - 1);
		break;
	}
	clk = cap(clk);
	op_no = 0;
	TRACE("%s bits %u clk %llu", tw_engine_name(kind), bits,
	      (unsigned long long)clk);
	if (tw_engine_mem_size(kind, bits) > sizeof(mem))
		FAIL("engine needs %zu bytes", tw_engine_mem_size(kind, bits));
	tw_engine_init(&E, kind, mem, bits, clk);
	twm_init(&M, &E, pool, mn, NODES);
	memset(m, 0, sizeof(m));
	check_engine();

	while (in.left && op_no < MAX_OPS) {
		unsigned int op = get8(&in);
		struct twheel_node *node;

		op_no++;
		if (op % 10 <= 4) {
			i = get8(&in) % NODES;
			node = &pool[i];
		} else {
			i = -1;
			node = NULL;
		}
		switch (op % 10) {
		case 0:
		case 1:
		case 2:	/* insert; a pending node is moved (remove + insert) */
			if (linked(i))
				do_remove(node, i);
			do_insert(node, i, pick_insert_key(&in));
			break;
		case 3:	/* remove if pending */
			if (linked(i))
				do_remove(node, i);
			break;
		case 4:	/* move a pending node to the same or a new key */
			if (linked(i)) {
				u64 key = (op & 0x80) ? mn[i].key : pick_insert_key(&in);

				do_move(node, i, key);
			}
			break;
		case 5:
		case 6:
		case 7:
			op_advance(&in);
			break;
		case 8:
			if (op & 0x80)
				op_forward(&in);
			else
				op_next_key(&in);
			break;
		default:
			if (op & 0x80)
				op_set_chunk(&in);
			else
				op_pick_key(&in);
			break;
		}
		if ((op % 10 >= 5 && bits < MAX_BITS) || bits <= 6 ||
		    !(op_no & 7))
			check_engine();
		else
			check_nodes(NULL);
	}
	check_engine();
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	if (trace < 0)
		trace = !!getenv("TWHEEL_FUZZ_TRACE");
	run(TWHEEL_ENGINE_HIER, data, size);
	run(TWHEEL_ENGINE_SCHEME6, data, size);
	run(TWHEEL_ENGINE_LAWN, data, size);
	return 0;
}
