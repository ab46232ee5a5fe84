/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The random keys of the callgrind drivers (wheel_prof.c, engine_prof.c):
 * xorshift64*, one fixed seed, so that every profile replays the same
 * sequence.  bench_engines.c keeps its own generator: its workloads are
 * the ones published in benchmarks.rst.
 */
#ifndef _TWHEEL_PROF_RNG_H
#define _TWHEEL_PROF_RNG_H

static unsigned long long prof_rng = 88172645463325252ULL;

static inline unsigned long long rnd(void)
{
	prof_rng ^= prof_rng >> 12;
	prof_rng ^= prof_rng << 25;
	prof_rng ^= prof_rng >> 27;
	return prof_rng * 2685821657736338717ULL;
}

#endif /* _TWHEEL_PROF_RNG_H */
