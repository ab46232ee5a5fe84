// SPDX-License-Identifier: GPL-2.0
/*
 * tsc_khz - print this machine's TSC rate in kHz, for tests/vm/vm-run.sh.
 *
 * A qemu TCG guest's TSC follows the host's (qemu reads it with rdtsc).
 * The kernels built from source have no HPET or ACPI PM timer to calibrate
 * the TSC against, and their calibration against the PIT fails when the
 * host is loaded; told the rate (tsc_early_khz=), they skip it.  The rate
 * is the median of five 20 ms measurements against CLOCK_MONOTONIC_RAW.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define ROUNDS	5

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	const struct timespec gap = { .tv_nsec = 20 * 1000 * 1000 };
	uint64_t khz[ROUNDS], t0, t1, c0, c1;
	int i;

	for (i = 0; i < ROUNDS; i++) {
		t0 = now_ns();
		c0 = __rdtsc();
		nanosleep(&gap, NULL);
		c1 = __rdtsc();
		t1 = now_ns();
		khz[i] = (c1 - c0) * 1000000 / (t1 - t0);
	}
	qsort(khz, ROUNDS, sizeof(khz[0]), cmp_u64);
	printf("%llu\n", (unsigned long long)khz[ROUNDS / 2]);
	return 0;
}
