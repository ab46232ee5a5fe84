// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mark LABEL - end a window of the insn_prof QEMU plugin and name it:
 * run one instruction at INSN_MARK_VADDR, which the plugin watches for,
 * then print "insn-mark: LABEL" ("-": a window not to report).  The n-th
 * such line of the console names window n - 1.  Static: the test VM has
 * no libc.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "insn_mark.h"

int main(int argc, char **argv)
{
	void *p = mmap((void *)INSN_MARK_VADDR, 4096,
		       PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (argc != 2 || strchr(argv[1], ' ')) {
		fprintf(stderr, "usage: insn_mark LABEL (no spaces)\n");
		return 2;
	}
	if (p != (void *)INSN_MARK_VADDR) {
		perror("insn_mark: mmap");
		return 1;
	}
	memset(p, 0xc3, 1);	/* ret */
	/* The line goes into the window that is not measured. */
	if (!strcmp(argv[1], "-")) {
		printf("insn-mark: -\n");
		fflush(stdout);
	}
	((void (*)(void))p)();
	if (strcmp(argv[1], "-"))
		printf("insn-mark: %s\n", argv[1]);
	return 0;
}
