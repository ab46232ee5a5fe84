// SPDX-License-Identifier: GPL-2.0
/*
 * order_test - what bench/kernel/bench_order.h promises the benchmarks:
 * over 2n repetitions every repetition runs each of n implementations
 * once, each implementation runs first in some repetition, and (from
 * three on) none always runs right after the same one.
 */
#include <stdio.h>
#include <string.h>

#include "../kernel/bench_order.h"

#define NMAX	8

int main(void)
{
	unsigned int n, r, j, fail = 0;

	for (n = 1; n <= NMAX; n++) {
		unsigned int first = 0, pred[NMAX] = { 0 }, i;

		for (r = 0; r < 2 * n; r++) {
			unsigned int seen = 0, prev = NMAX;

			for (j = 0; j < n; j++) {
				i = rep_order(r, j, n);
				if (i >= n || (seen & 1U << i)) {
					printf("n=%u rep %u: not a permutation\n", n, r);
					fail++;
					break;
				}
				seen |= 1U << i;
				if (!j)
					first |= 1U << i;
				else
					pred[i] |= 1U << prev;
				prev = i;
			}
		}
		if (first != (1U << n) - 1) {
			printf("n=%u: some never run first (mask %#x)\n", n, first);
			fail++;
		}
		for (i = 0; n >= 3 && i < n; i++)
			if (__builtin_popcount(pred[i]) < 2) {
				printf("n=%u: %u always runs after the same one\n", n, i);
				fail++;
			}
	}
	printf("rep_order: %s\n", fail ? "FAILED" : "ok");
	return !!fail;
}
