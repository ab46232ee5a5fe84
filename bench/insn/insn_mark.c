// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mark LABEL - end a window of the insn_prof QEMU plugin and name it
 * (insn_mark.h).  Static: the test VM has no libc.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "insn_mark.h"

int main(int argc, char **argv)
{
	insn_mark_fn mark;

	if (argc != 2 || strchr(argv[1], ' ')) {
		fprintf(stderr, "usage: insn_mark LABEL (no spaces)\n");
		return 2;
	}
	mark = insn_mark_map();
	if (!mark) {
		perror("insn_mark: mmap");
		return 1;
	}
	insn_mark_end(mark, argv[1]);
	return 0;
}
