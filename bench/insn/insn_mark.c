// SPDX-License-Identifier: GPL-2.0
/*
 * insn_mark - end a window of the insn_prof QEMU plugin: run one
 * instruction at INSN_MARK_VADDR, which the plugin watches for.  Static:
 * the test VM has no libc.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "insn_mark.h"

int main(void)
{
	void *p = mmap((void *)INSN_MARK_VADDR, 4096,
		       PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p != (void *)INSN_MARK_VADDR) {
		perror("insn_mark: mmap");
		return 1;
	}
	memset(p, 0xc3, 1);	/* ret */
	((void (*)(void))p)();
	return 0;
}
