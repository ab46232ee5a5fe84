// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_prof - a sampling profiler for the benchmark VM, where perf has
 * no PMU to use (qemu TCG) and no userland to run in (busybox).
 *
 * While loaded, one pinned hrtimer per online CPU fires every @period_us
 * and records the instruction pointer it interrupted.  On unload the
 * samples taken in the kernel are resolved to functions and the @top most
 * frequent are printed as
 *
 *	twheel_prof: prof,<label>,<percent>,<samples>,<function>
 *
 * with percentages of all non-idle samples (user mode counted as
 * "[user]").  Idle samples (the CPU was halted) are left out.  bench/run.sh
 * --profile loads it around the workloads it profiles.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <asm/irq_regs.h>

#include "bench_compat.h"

static uint period_us = 100;
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "Sampling period per CPU in us (default 100)");

static uint top = 25;
module_param(top, uint, 0444);
MODULE_PARM_DESC(top, "Functions to print (default 25)");

static char *label = "run";
module_param(label, charp, 0444);
MODULE_PARM_DESC(label, "Label of the printed lines");

#define MAX_SAMPLES BIT(21)
static unsigned long *samples;
static atomic_t nsamples;
static atomic_t nuser, nidle;

static DEFINE_PER_CPU(struct hrtimer, prof_timer);
static struct cpumask started;

static enum hrtimer_restart prof_tick(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();

	if (regs) {
		if (user_mode(regs)) {
			atomic_inc(&nuser);
		} else if (is_idle_task(current)) {
			atomic_inc(&nidle);
		} else {
			int i = atomic_inc_return(&nsamples) - 1;

			if (i < MAX_SAMPLES)
				samples[i] = instruction_pointer(regs);
		}
	}
	hrtimer_forward_now(t, ns_to_ktime(period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void prof_start(void *unused)
{
	struct hrtimer *t = this_cpu_ptr(&prof_timer);

	bench_hrtimer_setup(t, prof_tick, HRTIMER_MODE_REL_PINNED_HARD);
	hrtimer_start(t, ns_to_ktime(period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	cpumask_set_cpu(smp_processor_id(), &started);
}

static int cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

struct func {
	char name[KSYM_NAME_LEN];
	unsigned int count;
};

static int cmp_func(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->count > y->count ? -1 : x->count < y->count;
}

static void prof_report(void)
{
	unsigned int n = min_t(unsigned int, atomic_read(&nsamples), MAX_SAMPLES);
	unsigned int user = atomic_read(&nuser), total = n + user;
	unsigned int i, nf = 0, maxf = 2048;
	struct func *f = vzalloc(array_size(maxf, sizeof(*f)));
	char buf[KSYM_SYMBOL_LEN];

	pr_info("prof,%s,samples,%u kernel,%u user,%u idle,period %u us\n", label,
		n, user, atomic_read(&nidle), period_us);
	if (!f || !total) {
		vfree(f);
		return;
	}
	sort(samples, n, sizeof(*samples), cmp_ulong, NULL);
	for (i = 0; i < n;) {
		unsigned int j = i, k;

		while (j < n && samples[j] == samples[i])
			j++;
		sprint_symbol_no_offset(buf, samples[i]);
		for (k = 0; k < nf; k++)
			if (!strcmp(f[k].name, buf))
				break;
		if (k == nf && nf < maxf)
			strscpy(f[nf++].name, buf, KSYM_NAME_LEN);
		if (k < nf)
			f[k].count += j - i;
		i = j;
	}
	if (nf < maxf) {
		strscpy(f[nf].name, "[user]", KSYM_NAME_LEN);
		f[nf++].count = user;
	}
	sort(f, nf, sizeof(*f), cmp_func, NULL);
	for (i = 0; i < nf && i < top; i++)
		pr_info("prof,%s,%u.%u,%u,%s\n", label, f[i].count * 100 / total,
			(f[i].count * 1000 / total) % 10, f[i].count, f[i].name);
	vfree(f);
}

static int __init prof_init(void)
{
	if (!period_us)
		return -EINVAL;
	samples = vmalloc(array_size(MAX_SAMPLES, sizeof(*samples)));
	if (!samples)
		return -ENOMEM;
	on_each_cpu(prof_start, NULL, 1);
	return 0;
}

static void __exit prof_exit(void)
{
	int cpu;

	for_each_cpu(cpu, &started)
		hrtimer_cancel(per_cpu_ptr(&prof_timer, cpu));
	prof_report();
	vfree(samples);
}

module_init(prof_init);
module_exit(prof_exit);

MODULE_DESCRIPTION("Sampling profiler for the twheel benchmark VM");
MODULE_AUTHOR("twheel developers");
MODULE_LICENSE("GPL");
