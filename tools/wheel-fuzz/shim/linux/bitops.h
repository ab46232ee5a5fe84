/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Userspace stand-in for <linux/bitops.h>: the non-atomic bit helpers,
 * fls64 and BITS_TO_LONGS.  Written bit by bit: correctness over speed.
 */
#ifndef _WF_SHIM_LINUX_BITOPS_H
#define _WF_SHIM_LINUX_BITOPS_H

#include <limits.h>
#include <linux/types.h>

#define BITS_PER_LONG		((int)(sizeof(long) * CHAR_BIT))
#define BIT_ULL(nr)		(1ULL << (nr))
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define BITS_TO_LONGS(nr)	DIV_ROUND_UP(nr, BITS_PER_LONG)

static inline void __set_bit(unsigned long nr, unsigned long *addr)
{
	addr[BIT_WORD(nr)] |= BIT_MASK(nr);
}

static inline void __clear_bit(unsigned long nr, unsigned long *addr)
{
	addr[BIT_WORD(nr)] &= ~BIT_MASK(nr);
}

static inline bool test_bit(unsigned long nr, const unsigned long *addr)
{
	return addr[BIT_WORD(nr)] & BIT_MASK(nr);
}

/* 1-based index of the most significant set bit; 0 if @x is 0. */
static inline int fls64(u64 x)
{
	int n = 0;

	while (x) {
		n++;
		x >>= 1;
	}
	return n;
}

/* The first set bit at index >= @offset and < @size; @size if none. */
static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	unsigned long i = offset;

	while (i < size) {
		/* Skip a whole zero word when at its start. */
		if (i % BITS_PER_LONG == 0 && !addr[BIT_WORD(i)]) {
			i += BITS_PER_LONG;
			continue;
		}
		if (test_bit(i, addr))
			return i;
		i++;
	}
	return size;
}

static inline unsigned long find_first_bit(const unsigned long *addr,
					   unsigned long size)
{
	return find_next_bit(addr, size, 0);
}

#endif
