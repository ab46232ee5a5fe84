/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ending a window of the insn_prof QEMU plugin from a guest program:
 * executing the block at INSN_MARK_VADDR ends it, and a console line
 * "insn-mark: LABEL" names it ("-": a window not to report; the n-th such
 * line names window n - 1).  insn_mark and twheel_ubench -M both use it.
 */
#ifndef INSN_MARK_H
#define INSN_MARK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define INSN_MARK_VADDR 0x7e5700000000ULL

typedef void (*insn_mark_fn)(void);

/* Map the marker block, a single "ret"; NULL if the address is taken. */
static inline insn_mark_fn insn_mark_map(void)
{
	void *p = mmap((void *)INSN_MARK_VADDR, 4096,
		       PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != (void *)INSN_MARK_VADDR)
		return NULL;
	*(unsigned char *)p = 0xc3;	/* ret */
	return (insn_mark_fn)p;
}

/*
 * End the window and name it @label.  The console line goes into the
 * window that is not measured: before the mark for "-", after it else.
 */
static inline void insn_mark_end(insn_mark_fn mark, const char *label)
{
	bool skip = !strcmp(label, "-");

	if (skip) {
		printf("insn-mark: -\n");
		fflush(stdout);
	}
	mark();
	if (!skip) {
		printf("insn-mark: %s\n", label);
		fflush(stdout);
	}
}

#endif
