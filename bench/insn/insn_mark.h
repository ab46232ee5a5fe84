/* SPDX-License-Identifier: GPL-2.0 */
/* Where insn_mark puts the block whose execution ends an insn_prof window. */
#define INSN_MARK_VADDR 0x7e5700000000ULL
