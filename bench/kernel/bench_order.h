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
 * each repetition starts one further on and every other one runs in
 * reverse, so that none always runs first, nor always after the same one
 * (whose frees or cache state it might inherit).
 */
static inline unsigned int rep_order(unsigned int r, unsigned int j,
				     unsigned int n)
{
	return (r & 1 ? r + n - 1 - j : r + j) % n;
}

#endif /* _TWHEEL_BENCH_ORDER_H */
