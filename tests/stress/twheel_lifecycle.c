// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_lifecycle - keep timers in flight on /dev/twheel until killed
 *
 * The holder process of the lifecycle plan (tests/vm/plans/lifecycle.sh),
 * which loads and unloads twheel.ko a hundred times and must find the
 * module pinned while this program has the device open.  Not a kselftest:
 * it runs until a signal ends it.
 *
 * It opens two files.  On the first it arms, per kind, COUNT timers:
 * periodic ones (1 to 4 times a period of at least 5 ms), near one-shots
 * (relative, 2 to 20 ms), absolute one-shots with slack (4 to 36 ms) and
 * far one-shots (an hour) that must not fire.  It reads events with poll()
 * and re-arms every near one-shot whose event it read, so that timers keep
 * expiring until the end.  On the second file it arms COUNT periodic 10 ms timers and
 * never reads them: their events pile up as overruns and are still queued
 * when the file is released.
 *
 * Once the first event has been read it creates READY_FILE, the plan's cue
 * that timers are in flight.  SIGTERM or SIGINT make it print one summary
 * line and exit, leaving both files open for exit() to release with their
 * timers pending; SIGKILL ends it anywhere.  Exit status 1 on any early,
 * duplicate or unexpected event or failed call, 2 on a usage error.
 *
 * Usage: twheel_lifecycle [-n COUNT (default 8)] -r READY_FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <linux/twheel.h>

#include "twheel_utils.h"

#define MAX_COUNT	256

enum kind { K_PERIODIC, K_NEAR, K_ABS, K_FAR, NR_KINDS };

/* Per timer of the first file, indexed by cookie. */
struct slot {
	uint64_t handle;
	uint64_t want;		/* earliest allowed expiry */
	bool armed;		/* one-shot armed, its event not read yet */
};

static struct slot *slots;
static unsigned int count = 8;
static uint64_t tick_ns, rng = 0x7768656c;
static unsigned long long events, early, dups, unexpected, failures;

static uint64_t rand_below(uint64_t n)
{
	return rnd(&rng) % n;
}

static void failed(const char *what)
{
	fprintf(stderr, "twheel_lifecycle: %s: %s\n", what, strerror(errno));
	failures++;
}

static enum kind kind_of(uint64_t cookie)
{
	return cookie / count;
}

/* Fill @op to arm the timer with cookie @c of the first file. */
static void fill_arm(struct twheel_batch_op *op, uint64_t c, uint64_t t0)
{
	uint64_t period = tick_ns > 5 * NSEC_PER_MSEC ? tick_ns : 5 * NSEC_PER_MSEC;

	memset(op, 0, sizeof(*op));
	op->op = TWHEEL_OP_ARM;
	op->spec.cookie = c;
	switch (kind_of(c)) {
	case K_PERIODIC:
		op->spec.period = period * (1 + c % 4);
		op->spec.expires = op->spec.period;
		slots[c].want = t0 + op->spec.expires;
		break;
	case K_NEAR:
		op->spec.expires = 2 * NSEC_PER_MSEC + rand_below(18 * NSEC_PER_MSEC);
		slots[c].want = t0 + op->spec.expires;
		break;
	case K_ABS:
		op->spec.flags = TWHEEL_ARM_ABS;
		op->spec.expires = t0 + 4 * NSEC_PER_MSEC + rand_below(32 * NSEC_PER_MSEC);
		op->spec.slack = tick_ns;
		slots[c].want = op->spec.expires;
		break;
	default:
		op->spec.expires = 3600 * NSEC_PER_SEC;
		slots[c].want = t0 + op->spec.expires;
		break;
	}
}

/* Arm @n timers with the cookies in @c through one batch. */
static void arm_batch(int fd, const uint64_t *c, unsigned int n)
{
	struct twheel_batch_op ops[NR_KINDS * MAX_COUNT];
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)ops,
		.count = n,
		.op_size = sizeof(ops[0]),
	};
	uint64_t t0 = now_ns();
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++)
		fill_arm(&ops[i], c[i], t0);
	ret = ioctl(fd, TWHEEL_IOC_BATCH, &b);
	if (ret != (int)n) {
		if (ret < 0)
			failed("TWHEEL_IOC_BATCH");
		else
			failures++;
		return;
	}
	for (i = 0; i < n; i++) {
		if (ops[i].out_result) {
			errno = (int)-ops[i].out_result;
			failed("batch record");
			continue;
		}
		slots[c[i]].handle = ops[i].handle;
		slots[c[i]].armed = true;
	}
}

/* Check one event of the first file; returns the cookie to re-arm or -1. */
static int64_t check_event(const struct twheel_event *ev)
{
	uint64_t c = ev->cookie;

	events++;
	if (c >= NR_KINDS * count || ev->handle != slots[c].handle) {
		unexpected++;
		return -1;
	}
	if (ev->fired < ev->expires || ev->expires < slots[c].want)
		early++;
	switch (kind_of(c)) {
	case K_PERIODIC:
		if (!(ev->flags & TWHEEL_EVENT_PERIODIC))
			unexpected++;
		return -1;
	case K_NEAR:
	case K_ABS:
		if (!slots[c].armed)
			dups++;
		slots[c].armed = false;
		return c;
	default:
		unexpected++;	/* an hour away */
		return -1;
	}
}

static int open_dev(void)
{
	struct twheel_api api;
	int fd = open("/dev/twheel", O_RDWR | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		failed("open /dev/twheel");
		exit(1);
	}
	if (_test_ioctl_api(fd, &api)) {
		failed("TWHEEL_IOC_API");
		exit(1);
	}
	if (api.out_abi_version != TWHEEL_ABI_VERSION ||
	    api.out_event_size != sizeof(struct twheel_event)) {
		fprintf(stderr, "twheel_lifecycle: ABI %u, event size %u\n",
			api.out_abi_version, api.out_event_size);
		exit(1);
	}
	tick_ns = api.out_tick_ns;
	return fd;
}

/* The second file: periodic 1 ms timers whose events are never read. */
static void arm_unread(int fd)
{
	uint64_t period = tick_ns > 10 * NSEC_PER_MSEC ? tick_ns : 10 * NSEC_PER_MSEC;
	unsigned int i;

	for (i = 0; i < count; i++)
		if (_test_ioctl_arm(fd, 0, period, period, 0, 0, NULL))
			failed("TWHEEL_IOC_ARM");
}

static void signal_ready(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		failed(path);
		return;
	}
	if (write(fd, "ready\n", 6) != 6)
		failed(path);
	close(fd);
}

int main(int argc, char **argv)
{
	uint64_t rearm[NR_KINDS * MAX_COUNT];
	const char *ready = NULL;
	int fd, idle, sfd, opt;
	bool stop = false;
	unsigned int i;
	sigset_t mask;

	while ((opt = getopt(argc, argv, "n:r:")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			ready = optarg;
			break;
		default:
			count = 0;
		}
	}
	if (!ready || !count || count > MAX_COUNT || optind != argc) {
		fprintf(stderr, "usage: %s [-n COUNT(1..%d)] -r READY_FILE\n",
			argv[0], MAX_COUNT);
		return 2;
	}

	/* SIGTERM and SIGINT arrive through a signalfd polled with the file. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0) {
		failed("signalfd");
		return 1;
	}

	slots = calloc(NR_KINDS * count, sizeof(*slots));
	if (!slots) {
		failed("calloc");
		return 1;
	}
	rng ^= (uint64_t)getpid() << 32 | now_ns();
	fd = open_dev();
	idle = open_dev();
	for (i = 0; i < NR_KINDS * count; i++)
		rearm[i] = i;
	arm_batch(fd, rearm, NR_KINDS * count);
	arm_unread(idle);

	while (!stop) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = sfd, .events = POLLIN },
		};
		struct twheel_event ev[64];
		unsigned int n = 0;
		ssize_t got;
		int k;

		if (poll(pfd, 2, -1) < 0) {
			failed("poll");
			break;
		}
		if (pfd[1].revents) {
			stop = true;
			continue;
		}
		got = read(fd, ev, sizeof(ev));
		if (got < 0) {
			if (errno != EAGAIN)
				failed("read");
			continue;
		}
		if (got % sizeof(ev[0]))
			unexpected++;
		for (k = 0; k < got / (ssize_t)sizeof(ev[0]); k++) {
			int64_t c = check_event(&ev[k]);

			if (c >= 0)
				rearm[n++] = c;
		}
		if (n)
			arm_batch(fd, rearm, n);
		if (ready && events) {
			signal_ready(ready);
			ready = NULL;
		}
	}

	/* Both files stay open: exit() releases them, timers pending. */
	printf("twheel_lifecycle: events=%llu early=%llu dups=%llu unexpected=%llu failures=%llu\n",
	       events, early, dups, unexpected, failures);
	fflush(stdout);
	return early || dups || unexpected || failures;
}
