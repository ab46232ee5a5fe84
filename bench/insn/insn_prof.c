// SPDX-License-Identifier: GPL-2.0
/*
 * insn_prof - a QEMU TCG plugin: guest instructions executed, per kernel
 * address, in windows that the guest marks.
 *
 * The sampling profiler (twheel_prof.ko) cannot see inside regions that run
 * with interrupts off, where the wheel does its work.  Under TCG the cost of
 * a path is mostly its instruction count, and that QEMU can count exactly:
 * every translation block of the kernel half of the address space gets an
 * inline counter; user blocks share one.  A guest program executing the
 * block at MARK_VADDR (bench/insn/insn_mark.c) ends a window: the counts
 * since the previous mark are written to OUT.<window> as "vaddr insns"
 * lines (blocks of one address summed, several translations of it
 * included), "user insns" last, and zeroed.  Window 0 runs from boot to the
 * first mark.  A kernel block holding the no-op KMARK_INSN (twheel_bench.ko's
 * insn_mark(), with insn_marks=1) ends a window too, so that a window can
 * hold just a loop of operations.
 *
 * Kernel blocks are counted per vCPU (an execution callback, which
 * knows the vCPU; QEMU 7.2's inline counters do not): each line carries,
 * after the totals, the instructions each vCPU ran there, so that a window
 * can be read for the CPU that did the work alone, without what the other
 * did meanwhile.  A vCPU's counters are written by its own thread only;
 * the user count is inline and shared, and may lose a count when both
 * vCPUs run the same block at once.  A block that an exception leaves
 * early is counted whole.
 *
 * Usage: qemu-system-x86_64 ... -plugin insn_prof.so,out=PREFIX
 *
 * qemu_plugin_api.h declares the part of QEMU's plugin API it uses.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "insn_mark.h"
#include "qemu_plugin_api.h"

#define EXPORT __attribute__((visibility("default")))

/* nopl 0x4c485754(%rax,%rax,1): the kernel's mark (twheel_bench.c) */
static const unsigned char KMARK_INSN[] = {
	0x0f, 0x1f, 0x84, 0x00, 0x54, 0x57, 0x48, 0x4c
};

/* The block holds the kernel's mark. */
static int has_kmark(struct qemu_plugin_tb *tb, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);

		if (qemu_plugin_insn_size(insn) == sizeof(KMARK_INSN) &&
		    !memcmp(qemu_plugin_insn_data(insn), KMARK_INSN,
			    sizeof(KMARK_INSN)))
			return 1;
	}
	return 0;
}

EXPORT int qemu_plugin_version = 1;

#define MAX_VCPUS 8

/* One translation of a kernel block, counted by on_exec(). */
struct block {
	uint64_t vaddr;
	uint64_t insns;			/* in the block */
	uint64_t execs[MAX_VCPUS];	/* since the last mark, per vCPU */
	struct block *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct block *blocks;
static size_t nr_blocks;
static uint64_t user_insns;
static const char *out = "insn_prof";
static unsigned int window;

static int by_vaddr(const void *a, const void *b)
{
	const struct block *x = *(struct block *const *)a;
	const struct block *y = *(struct block *const *)b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Write this window's counts and start the next one; @lock held. */
static void end_window(void)
{
	struct block **v = malloc(nr_blocks * sizeof(*v)), *b;
	char name[4096];
	size_t i = 0, j;
	FILE *f;

	snprintf(name, sizeof(name), "%s.%u", out, window++);
	f = fopen(name, "w");
	if (!f || !v) {
		perror(name);
		exit(1);
	}
	for (b = blocks; b; b = b->next)
		v[i++] = b;
	qsort(v, nr_blocks, sizeof(*v), by_vaddr);
	for (i = 0; i < nr_blocks; i = j) {
		uint64_t insns = 0, execs = 0, cpu[MAX_VCPUS] = { 0 };
		unsigned int c;

		for (j = i; j < nr_blocks && v[j]->vaddr == v[i]->vaddr; j++) {
			for (c = 0; c < MAX_VCPUS; c++) {
				cpu[c] += v[j]->execs[c] * v[j]->insns;
				execs += v[j]->execs[c];
				v[j]->execs[c] = 0;
			}
		}
		for (c = 0; c < MAX_VCPUS; c++)
			insns += cpu[c];
		if (!execs)
			continue;
		/* vaddr insns execs, then the insns of each vCPU */
		fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64,
			v[i]->vaddr, insns, execs);
		for (c = 0; c < MAX_VCPUS; c++)
			fprintf(f, " %" PRIu64, cpu[c]);
		fputc('\n', f);
	}
	fprintf(f, "user %" PRIu64 "\n", user_insns);
	user_insns = 0;
	fclose(f);
	free(v);
}

static void on_exec(unsigned int vcpu_index, void *userdata)
{
	struct block *b = userdata;

	b->execs[vcpu_index % MAX_VCPUS]++;
}

static void on_mark(unsigned int vcpu_index, void *userdata)
{
	pthread_mutex_lock(&lock);
	end_window();
	pthread_mutex_unlock(&lock);
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct block *b;

	if (vaddr == INSN_MARK_VADDR)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark,
						     QEMU_PLUGIN_CB_NO_REGS,
						     NULL);
	if (vaddr < 0xffff800000000000ULL) {
		qemu_plugin_register_vcpu_tb_exec_inline(tb,
							 QEMU_PLUGIN_INLINE_ADD_U64,
							 &user_insns, n);
		return;
	}
	if (has_kmark(tb, n))
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_mark,
						     QEMU_PLUGIN_CB_NO_REGS,
						     NULL);
	b = calloc(1, sizeof(*b));
	if (!b)
		abort();
	b->vaddr = vaddr;
	b->insns = n;
	pthread_mutex_lock(&lock);
	b->next = blocks;
	blocks = b;
	nr_blocks++;
	pthread_mutex_unlock(&lock);
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS,
					     b);
}

static void on_exit_qemu(qemu_plugin_id_t id, void *userdata)
{
	pthread_mutex_lock(&lock);
	end_window();
	pthread_mutex_unlock(&lock);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
			       const struct qemu_info_t *info,
			       int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4)) {
			out = strdup(argv[i] + 4);
		} else {
			fprintf(stderr, "insn_prof: unknown argument %s\n",
				argv[i]);
			return -1;
		}
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, on_exit_qemu, NULL);
	return 0;
}
