/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The order in which the benchmarks run their implementations (or cases)
 * within a repetition: the modules here, twheel_ubench and bench_engines
 * (both plain C, in userspace).
 */
#ifndef _TWHEEL_BENCH_ORDER_H
#define _TWHEEL_BENCH_ORDER_H

/*
 * Item @j of repetition @r's order over @n implementations (or cases):
 * repetition @r starts with item @r (modulo @n) and every other one runs
 * backwards from there, so that each runs first in turn and none always
 * runs after the same one (whose frees or cache state it might inherit).
 * Backwards from @r, not from @r - 1: with an even @n that start left the
 * odd items never first (bench/engines/order_test.c).
 */
static inline unsigned int rep_order(unsigned int r, unsigned int j,
				     unsigned int n)
{
	return (r & 1 ? r % n + n - j : r + j) % n;
}

#endif /* _TWHEEL_BENCH_ORDER_H */
