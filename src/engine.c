// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: engine selection (see engine.h).  Pure: the caller allocates the
 * block tw_engine_mem_size() asks for.
 */
#include <linux/bitmap.h>
#include <linux/kernel.h>

#include "engine.h"

static const char *const tw_engine_names[TWHEEL_NR_ENGINES] = {
	[TWHEEL_ENGINE_HIER] = "hier",
	[TWHEEL_ENGINE_SCHEME6] = "scheme6",
	[TWHEEL_ENGINE_LAWN] = "lawn",
};

/**
 * tw_engine_name() - the name of an engine, as the engine= parameter takes
 * @kind: enum twheel_engine
 *
 * Return: "hier", "scheme6", "lawn", or "?" for anything else.
 */
const char *tw_engine_name(enum twheel_engine kind)
{
	if ((unsigned int)kind >= TWHEEL_NR_ENGINES)
		return "?";
	return tw_engine_names[kind];
}

static size_t tw_wheel_mem_size(unsigned int bits)
{
	return ((sizeof(struct hlist_head) + sizeof(u64)) << bits) +
	       BITS_TO_LONGS(1UL << bits) * sizeof(unsigned long);
}

/**
 * tw_engine_mem_size() - bytes of memory an engine needs
 * @kind: enum twheel_engine
 * @bits: log2 of the level-0 slot count (of the FIFO count for the Lawn)
 *
 * Return: the size of the block tw_engine_init() takes.
 */
size_t tw_engine_mem_size(enum twheel_engine kind, unsigned int bits)
{
	switch (kind) {
	case TWHEEL_ENGINE_SCHEME6:
		return tw_wheel_mem_size(bits);
	case TWHEEL_ENGINE_LAWN:
		return tw_lawn_mem_size(bits);
	default:
		return tw_hier_mem_size(bits);
	}
}

/**
 * tw_engine_init() - initialise an empty engine
 * @e:    the engine
 * @kind: enum twheel_engine
 * @mem:  tw_engine_mem_size(@kind, @bits) bytes, pointer-aligned
 * @bits: log2 of the level-0 slot count
 * @clk:  the first tick to process
 */
void tw_engine_init(struct tw_engine *e, enum twheel_engine kind, void *mem,
		    unsigned int bits, u64 clk)
{
	struct hlist_head *slots = mem;
	u64 *low;

	e->kind = kind;
	switch (kind) {
	case TWHEEL_ENGINE_SCHEME6:
		low = (u64 *)(slots + (1UL << bits));
		tw_wheel_init(&e->wheel, slots, low,
			      (unsigned long *)(low + (1UL << bits)), bits, clk);
		break;
	case TWHEEL_ENGINE_LAWN:
		tw_lawn_init(&e->lawn, mem, bits, clk);
		break;
	default:
		tw_hier_init(&e->hier, mem, bits, clk);
		break;
	}
}
