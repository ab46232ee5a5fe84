// SPDX-License-Identifier: GPL-2.0
/*
 * twheelctl - look at and exercise /dev/twheel from the command line
 *
 * Copyright (c) 2026 twheel developers
 *
 *   twheelctl info                 the handshake: ABI version, features, limits
 *   twheelctl arm [opts] DELAY_MS  arm one timer and print its events
 *   twheelctl demo [opts]          arm a million timers, cancel some, check
 *                                  that every other one fires once, on time
 *   twheelctl COMMAND --help       each command's options
 *   twheelctl --version
 *
 * Exit status: 0 on success, 1 on a failure, 2 on a command line error.
 *
 * Built on libtwheel (tools/lib).  All times are ns of the file's clock:
 * CLOCK_MONOTONIC, or CLOCK_BOOTTIME with --clock boottime.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "libtwheel.h"

typedef unsigned long long u64;	/* printed with %llu everywhere */

#define NSEC_PER_USEC	1000ULL
#define NSEC_PER_MSEC	1000000ULL
#define NSEC_PER_SEC	1000000000ULL

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *prog = "twheelctl";

/*
 * Messages go to stderr, prefixed with the program name.  Macros rather
 * than functions so that the compiler checks the printf formats.
 */
#define msg(...)	(fprintf(stderr, "%s: ", prog), fprintf(stderr, __VA_ARGS__), \
			 fputc('\n', stderr))
/* A failure: exit status 1. */
#define die(...)	(msg(__VA_ARGS__), exit(1))
/* A command line error: exit status 2. */
#define usage_error(...) \
	(msg(__VA_ARGS__), fprintf(stderr, "Try '%s help'.\n", prog), exit(2))

/* twheel's version (dkms.conf's PACKAGE_VERSION), from tools/Makefile */
#ifndef TWHEEL_VERSION
#define TWHEEL_VERSION "unknown"
#endif

/* The exit statuses of every command, for the help texts. */
#define EXIT_HELP \
	"Exit status: 0 on success, 1 on a failure (the device, a check), 2 on\n" \
	"a command line error.\n"

/* A non-negative integer with an optional k/M/G (x1000) suffix. */
static u64 parse_count(const char *s, const char *what)
{
	u64 v, mult = 1;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		usage_error("bad %s '%s'", what, s);
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1000;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1000000;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1000000000;
		end++;
		break;
	}
	if (*end || v > ULLONG_MAX / mult)
		usage_error("bad %s '%s'", what, s);
	return v * mult;
}

/* Milliseconds, fractions allowed, to ns. */
static u64 parse_ms(const char *s, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 9e12)
		usage_error("bad %s '%s'", what, s);
	return (u64)llround(v * NSEC_PER_MSEC);
}

/* Open the device and do the handshake; dies unless the ABI matches. */
static int open_checked(int flags, struct twheel_api *api)
{
	int fd = libtwheel_open(flags), ret;

	if (fd < 0)
		die("cannot open %s: %s%s", LIBTWHEEL_DEVICE_PATH, strerror(-fd),
		    fd == -ENOENT ? " (is twheel.ko loaded?)" :
		    fd == -EPERM ? " (engine=scheme6 or lawn: CAP_SYS_ADMIN only)" :
		    "");
	ret = libtwheel_api(fd, api);
	if (ret == -EPROTO)
		die("twheel module of ABI version %u (event size %u), twheelctl needs %u (%zu)",
		    api->out_abi_version, api->out_event_size,
		    LIBTWHEEL_ABI_VERSION, sizeof(struct twheel_event));
	if (ret < 0)
		die("TWHEEL_IOC_API: %s", libtwheel_strerror(ret));
	return fd;
}

/* --clock NAME: CLOCK_MONOTONIC or CLOCK_BOOTTIME */
static clockid_t parse_clock(const char *s)
{
	if (!strcmp(s, "monotonic"))
		return CLOCK_MONOTONIC;
	if (!strcmp(s, "boottime"))
		return CLOCK_BOOTTIME;
	usage_error("bad clock '%s' (monotonic or boottime)", s);
}

/*
 * Put the file on @clock and @tick (0: the module's) unless they are the
 * default, and do the handshake again: @api then reports what it got.
 */
static void setup_checked(int fd, struct twheel_api *api, clockid_t clock,
			  u64 tick)
{
	int ret;

	if (clock == CLOCK_MONOTONIC && !tick)
		return;
	if (!(api->out_features & TWHEEL_FEATURE_SETUP))
		die("this twheel module has no TWHEEL_IOC_SETUP: no --clock or --tick");
	ret = libtwheel_setup(fd, clock, tick);
	if (ret < 0)
		die("TWHEEL_IOC_SETUP: %s", libtwheel_strerror(ret));
	ret = libtwheel_api(fd, api);
	if (ret < 0)
		die("TWHEEL_IOC_API: %s", libtwheel_strerror(ret));
}

/* ---- info ------------------------------------------------------------- */

static const char info_help[] =
	"usage: twheelctl info [-c CLOCK] [-t TICK_MS]\n"
	"\n"
	"Opens /dev/twheel, sets the file up with -c, --clock (monotonic or\n"
	"boottime) and -t, --tick (TWHEEL_IOC_SETUP) if given, and prints its\n"
	"handshake (TWHEEL_IOC_API): ABI version, event size, features and\n"
	"engine, the file's clock, the wheel's tick and slots, then the limits\n"
	"that apply to the calling user (by effective uid), each with what it\n"
	"bounds: max_timers_per_fd live timers per open file and\n"
	"max_timers_per_user over all of the user's files (arming beyond either\n"
	"fails with ENOSPC), max_instances wheels of other clocks and ticks for\n"
	"all users together (TWHEEL_IOC_SETUP beyond it: ENOSPC), max_batch\n"
	"records per batch.  The module parameters of the same names set them.\n"
	"\n"
	EXIT_HELP;

static int cmd_info(int argc, char **argv)
{
	static const char *const names[] = {
		"periodic", "slack", "batch", "query",
		"engine=hier", "engine=scheme6", "engine=lawn", "setup",
		"uring_cmd", "uring_expiry", "uring_mshot",
	};
	static const struct option longopts[] = {
		{ "clock", required_argument, NULL, 'c' },
		{ "tick", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	clockid_t clock = CLOCK_MONOTONIC;
	uid_t uid = geteuid();
	struct twheel_api api;
	unsigned int i;
	u64 tick = 0;
	int fd, opt;

	while ((opt = getopt_long(argc, argv, "+c:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			clock = parse_clock(optarg);
			break;
		case 't':
			tick = parse_ms(optarg, "tick");
			break;
		case 'h':
			fputs(info_help, stdout);
			return 0;
		default:
			usage_error("info: bad option");
		}
	}
	if (optind < argc)
		usage_error("info: unexpected argument '%s'", argv[optind]);
	fd = open_checked(O_CLOEXEC, &api);
	setup_checked(fd, &api, clock, tick);
	printf("device              %s\n", LIBTWHEEL_DEVICE_PATH);
	printf("abi_version         %u\n", api.out_abi_version);
	printf("event_size          %u\n", api.out_event_size);
	printf("features            0x%llx", (u64)api.out_features);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (api.out_features & (1ULL << i))
			printf(" %s", names[i]);
	if (api.out_features >> i)
		printf(" unknown:0x%llx", (u64)(api.out_features >> i << i));
	printf("\n");
	if (api.out_features & TWHEEL_FEATURE_SETUP)
		printf("clock               %s\n",
		       api.out_clockid == CLOCK_BOOTTIME ? "boottime" : "monotonic");
	printf("tick_ns             %llu\n", (u64)api.out_tick_ns);
	printf("slots               %u\n", api.out_slots);
	printf("wheel_span_ns       %llu\n", (u64)api.out_tick_ns * api.out_slots);
	printf("batch_op_size       %u\n", api.out_batch_op_size);
	/*
	 * The limits, as the module applies them to this user: the per-user
	 * one counts the files opened with this effective uid.
	 */
	printf("user                uid %u (%s)\n", (unsigned int)uid,
	       "the limits below; beyond them arming fails with ENOSPC");
	printf("max_timers_per_fd   %llu live timers per open file\n",
	       (u64)api.out_max_timers_per_fd);
	printf("max_timers_per_user %llu live timers over all files of uid %u\n",
	       (u64)api.out_max_timers_per_user, (unsigned int)uid);
	if (api.out_features & TWHEEL_FEATURE_SETUP)
		printf("max_instances       %u %s\n", api.out_max_instances,
		       "wheels of other clocks and ticks, all users together");
	printf("max_batch           %u records per TWHEEL_IOC_BATCH (more: E2BIG)\n",
	       api.out_max_batch);
	libtwheel_close(fd);
	return 0;
}

/* ---- arm -------------------------------------------------------------- */

static const char arm_help[] =
	"usage: twheelctl arm [-p PERIOD_MS] [-s SLACK_MS] [-n COUNT] [-k COOKIE]\n"
	"                     [-a] [-c CLOCK] [-t TICK_MS] DELAY_MS\n"
	"\n"
	"Arms one timer DELAY_MS from now (with -a, --abs: at CLOCK_MONOTONIC\n"
	"time DELAY_MS, TWHEEL_ARM_ABS), periodic with -p, --period, with -s,\n"
	"--slack and the cookie -k, --cookie.  Prints its handle and what\n"
	"TWHEEL_IOC_QUERY reports, then its first COUNT events (-n, --count;\n"
	"default 1, 3 if periodic) as they are read, and cancels a periodic\n"
	"timer.  -c, --clock and -t, --tick set the file's clock (monotonic or\n"
	"boottime; -a's time is then on that clock) and tick first.  Times are\n"
	"in ms, fractions allowed.\n"
	"\n"
	EXIT_HELP
	"A timer that fired before its expiry is a failure (1).\n";

static void print_event(const struct twheel_event *ev, u64 now)
{
	printf("event handle=0x%llx cookie=%llu expires=%llu fired=%llu",
	       (u64)ev->handle, (u64)ev->cookie, (u64)ev->expires,
	       (u64)ev->fired);
	printf(" late_us=%.3f read_us=%.3f overrun=%llu%s\n",
	       ((double)ev->fired - (double)ev->expires) / NSEC_PER_USEC,
	       ((double)now - (double)ev->expires) / NSEC_PER_USEC,
	       (u64)ev->overrun,
	       ev->flags & TWHEEL_EVENT_PERIODIC ? " periodic" : "");
}

static int cmd_arm(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "period", required_argument, NULL, 'p' },
		{ "slack", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "cookie", required_argument, NULL, 'k' },
		{ "abs", no_argument, NULL, 'a' },
		{ "clock", required_argument, NULL, 'c' },
		{ "tick", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	u64 delay, period = 0, slack = 0, cookie = 0, count = 0, seen = 0;
	clockid_t clock = CLOCK_MONOTONIC;
	u64 tick = 0;
	u64 start, expires;
	bool early = false, abs_mode = false;
	struct twheel_timer_spec spec;
	struct twheel_query q;
	struct twheel_api api;
	uint64_t handle;
	int fd, opt, ret;

	while ((opt = getopt_long(argc, argv, "+p:s:n:k:ac:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			clock = parse_clock(optarg);
			break;
		case 't':
			tick = parse_ms(optarg, "tick");
			break;
		case 'p':
			period = parse_ms(optarg, "period");
			break;
		case 's':
			slack = parse_ms(optarg, "slack");
			break;
		case 'n':
			count = parse_count(optarg, "count");
			break;
		case 'k':
			cookie = parse_count(optarg, "cookie");
			break;
		case 'a':
			abs_mode = true;
			break;
		case 'h':
			fputs(arm_help, stdout);
			return 0;
		default:
			usage_error("arm: bad option");
		}
	}
	if (optind != argc - 1)
		usage_error("arm: expected one DELAY_MS argument");
	delay = parse_ms(argv[optind], "delay");
	if (!count)
		count = period ? 3 : 1;
	if (!period && count > 1)
		usage_error("arm: --count above 1 needs --period");

	fd = open_checked(O_CLOEXEC, &api);
	setup_checked(fd, &api, clock, tick);
	start = libtwheel_clock_now(clock);
	/* With --abs the tool computes the deadline itself (TWHEEL_ARM_ABS). */
	expires = abs_mode ? start + delay : delay;
	spec = (struct twheel_timer_spec){
		.flags = abs_mode ? TWHEEL_ARM_ABS : 0,
		.expires = expires,
		.period = period,
		.slack = slack,
		.cookie = cookie,
	};
	ret = libtwheel_arm(fd, &spec, &handle);
	if (ret < 0)
		die("TWHEEL_IOC_ARM: %s", libtwheel_strerror(ret));
	ret = libtwheel_query(fd, handle, &q);
	if (ret < 0)
		die("TWHEEL_IOC_QUERY: %s", libtwheel_strerror(ret));
	printf("armed handle=0x%llx expires=%llu remaining_us=%.3f state=0x%x\n",
	       (u64)handle, (u64)q.out_expires, (double)q.out_remaining / NSEC_PER_USEC,
	       q.out_state);
	fflush(stdout);
	/*
	 * A timer that fired in between reports no expiry (one-shot) or one
	 * of its next periods.
	 */
	if (abs_mode && (q.out_state & TWHEEL_QUERY_PENDING) &&
	    (period ? q.out_expires < expires || (q.out_expires - expires) % period :
		      q.out_expires != expires))
		die("query reports expiry %llu, armed for %llu", (u64)q.out_expires,
		    expires);

	while (seen < count) {
		struct twheel_event ev[16];
		ssize_t n = libtwheel_read_events(fd, ev, ARRAY_SIZE(ev));
		u64 now = libtwheel_clock_now(clock);
		ssize_t i;

		if (n == -EINTR)
			continue;
		if (n < 0)
			die("read: %s", strerror(-n));
		for (i = 0; i < n; i++, seen++) {
			print_event(&ev[i], now);
			/* A relative expiry counts from after @start. */
			if (ev[i].fired < ev[i].expires || now < ev[i].expires ||
			    ev[i].expires < start + delay)
				early = true;
		}
		fflush(stdout);
	}
	if (period) {
		ret = libtwheel_cancel(fd, handle);
		if (ret < 0)
			die("TWHEEL_IOC_CANCEL: %s", strerror(-ret));
		printf("cancelled status=%s\n",
		       ret == TWHEEL_CANCEL_PENDING ? "pending" : "fired");
	}
	libtwheel_close(fd);
	if (early)
		msg("a timer fired EARLY");
	return early;
}

/* ---- demo ------------------------------------------------------------- */

enum { T_NONE, T_ARMED, T_CANCELLED, T_FIRED };

struct demo {
	/* options */
	u64 n;
	u64 spread_ns;
	u64 lead_ns;
	u64 grace_ns;
	u64 slack_ns;
	double cancel_fraction;
	unsigned int batch;
	u64 seed;

	int fd;
	struct twheel_api api;
	u64 rng;
	/* cookie = key + index * mul; index = (cookie - key) * mul_inv */
	u64 key, mul, mul_inv;

	/* per timer, by index */
	u64 *expiry;
	uint64_t *handle;
	unsigned char *state;
	long long *lateness;	/* fired - expiry of the events, ns */

	/* results */
	u64 armed, cancelled, fired, early, duplicates, unexpected;
	u64 mismatched, errors;
	u64 last_expiry;	/* of all armed timers */
	u64 arm_ns, cancel_ns;	/* time spent in batch ioctls */
	int first_errno;
};

static u64 splitmix64(u64 *x)
{
	u64 z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound) (bound > 0), without modulo bias. */
static u64 rand_below(u64 *x, u64 bound)
{
	u64 limit = ULLONG_MAX - ULLONG_MAX % bound, r;

	do
		r = splitmix64(x);
	while (r >= limit);
	return r % bound;
}

static void demo_error(struct demo *d, long err, const char *what)
{
	if (!d->errors++) {
		d->first_errno = (int)-err;
		msg("%s: %s", what, strerror((int)-err));
	}
}

/*
 * Redraw the progress line on an interactive terminal.  A serial or system
 * console is taken for a log (the test VM's is): no redraws there.
 */
static bool stderr_is_interactive(void)
{
	const char *name;

	if (!isatty(STDERR_FILENO))
		return false;
	name = ttyname(STDERR_FILENO);
	return name && strcmp(name, "/dev/console") &&
	       strncmp(name, "/dev/ttyS", strlen("/dev/ttyS"));
}

/* The demo's progress output on stderr. */
static struct {
	bool quiet;	/* none at all */
	bool live;	/* redraw a live line */
	bool final;	/* the line being printed ends a phase */
	u64 last;	/* when the last line was printed */
} progress_out;

/*
 * Whether to print a progress line now: live lines at most every 100 ms,
 * and only where they can be redrawn; @final lines (one per phase) always,
 * unless quiet.
 */
static bool progress_begin(bool final)
{
	u64 now = libtwheel_now();

	if (progress_out.quiet || (!progress_out.live && !final))
		return false;
	if (!final && now - progress_out.last < 100 * NSEC_PER_MSEC)
		return false;
	progress_out.last = now;
	progress_out.final = final;
	fprintf(stderr, "%s%s: ", progress_out.live ? "\r\033[K" : "", prog);
	return true;
}

static void progress_end(void)
{
	if (progress_out.final)
		fputc('\n', stderr);
	fflush(stderr);
}

#define progress(final, ...)						\
	do {								\
		if (progress_begin(final)) {				\
			fprintf(stderr, __VA_ARGS__);			\
			progress_end();					\
		}							\
	} while (0)

static void demo_arm(struct demo *d, struct libtwheel_batch *bb)
{
	u64 i = 0, t0 = libtwheel_now();

	while (i < d->n) {
		u64 first = i, now = libtwheel_now(), t;
		ssize_t ret;
		size_t j;

		libtwheel_batch_reset(bb);
		for (; i < d->n && bb->count < d->batch; i++) {
			struct twheel_timer_spec spec = {
				.flags = TWHEEL_ARM_ABS,
				.expires = now + d->lead_ns +
					   rand_below(&d->rng, d->spread_ns),
				.slack = d->slack_ns,
				.cookie = d->key + i * d->mul,
			};

			d->expiry[i] = spec.expires;
			ret = libtwheel_batch_arm(bb, &spec);
			if (ret < 0)
				die("libtwheel_batch_arm: %s", strerror((int)-ret));
		}
		t = libtwheel_now();
		ret = libtwheel_batch_submit(d->fd, bb);
		d->arm_ns += libtwheel_now() - t;
		for (j = 0; j < bb->done; j++) {
			const struct twheel_batch_op *op = &bb->ops[j];

			/* Zeroed by the library, written by the kernel. */
			if (op->out_result) {
				demo_error(d, op->out_result, "arm record");
				continue;
			}
			d->handle[first + j] = op->handle;
			d->state[first + j] = T_ARMED;
			d->armed++;
			if (d->expiry[first + j] > d->last_expiry)
				d->last_expiry = d->expiry[first + j];
		}
		if (ret < 0) {
			demo_error(d, ret, "TWHEEL_IOC_BATCH (arm)");
			break;
		}
		progress(false, "arming %llu/%llu", i, d->n);
	}
	progress(true, "armed %llu timers in %.2f s (%.2f s in ioctls)",
		 d->armed, (double)(libtwheel_now() - t0) / NSEC_PER_SEC,
		 (double)d->arm_ns / NSEC_PER_SEC);
}

static void demo_cancel(struct demo *d, struct libtwheel_batch *bb)
{
	u64 want = (u64)llround((double)d->armed * d->cancel_fraction);
	u64 i, k = 0, pos = 0, t0 = libtwheel_now();
	unsigned int *victims;

	if (!want)
		return;
	/* Pick exactly @want armed timers: a partial Fisher-Yates shuffle. */
	victims = malloc(d->armed * sizeof(*victims));
	if (!victims)
		die("out of memory");
	for (i = 0; i < d->n; i++)
		if (d->state[i] == T_ARMED)
			victims[k++] = (unsigned int)i;
	for (i = 0; i < want; i++) {
		u64 r = i + rand_below(&d->rng, d->armed - i);
		unsigned int tmp = victims[i];

		victims[i] = victims[r];
		victims[r] = tmp;
	}

	while (pos < want) {
		u64 first = pos, t;
		ssize_t ret;
		size_t j;

		libtwheel_batch_reset(bb);
		for (; pos < want && bb->count < d->batch; pos++) {
			ret = libtwheel_batch_cancel(bb, d->handle[victims[pos]]);
			if (ret < 0)
				die("libtwheel_batch_cancel: %s", strerror((int)-ret));
		}
		t = libtwheel_now();
		ret = libtwheel_batch_submit(d->fd, bb);
		d->cancel_ns += libtwheel_now() - t;
		/*
		 * Nothing was read yet, so every timer still exists: a cancel
		 * succeeds whether the timer is pending or has fired (its
		 * queued event is withdrawn).  Any failure is an error; the
		 * records need a look only if the kernel counted one.
		 */
		for (j = 0; j < bb->done; j++) {
			if (bb->failed && bb->ops[j].out_result) {
				demo_error(d, bb->ops[j].out_result, "cancel record");
				continue;
			}
			d->state[victims[first + j]] = T_CANCELLED;
			d->cancelled++;
		}
		if (ret < 0) {
			demo_error(d, ret, "TWHEEL_IOC_BATCH (cancel)");
			break;
		}
		progress(false, "cancelling %llu/%llu", pos, want);
	}
	free(victims);
	progress(true, "cancelled %llu timers in %.2f s (%.2f s in ioctls)",
		 d->cancelled, (double)(libtwheel_now() - t0) / NSEC_PER_SEC,
		 (double)d->cancel_ns / NSEC_PER_SEC);
}

/* Account one event read at time @now. */
static void demo_event(struct demo *d, const struct twheel_event *ev, u64 now)
{
	u64 idx = (ev->cookie - d->key) * d->mul_inv;
	u64 exp;

	if (idx >= d->n || d->handle[idx] != ev->handle) {
		d->unexpected++;	/* not a timer of ours */
		return;
	}
	switch (d->state[idx]) {
	case T_NONE:
	case T_CANCELLED:
		d->unexpected++;
		return;
	case T_FIRED:
		d->duplicates++;
		return;
	}
	d->state[idx] = T_FIRED;
	exp = d->expiry[idx];
	d->lateness[d->fired++] = (long long)(ev->fired - exp);
	/* Early as the kernel reports it, or as we observe it. */
	if (ev->fired < exp || now < exp)
		d->early++;
	/* The event must describe what we armed, and lie in the past. */
	if (ev->expires != exp || ev->overrun || ev->flags || ev->fired > now)
		d->mismatched++;
}

/* Read events with epoll until all have come or it is time to give up. */
static void demo_wait(struct demo *d)
{
	const size_t bufsize = 4096;
	u64 expected = d->armed - d->cancelled;
	u64 t0 = libtwheel_now();
	/* Missing events are given up on here; they count as lost. */
	u64 give_up = (d->last_expiry > t0 ? d->last_expiry : t0) + d->grace_ns;
	/*
	 * Stay until every deadline, also those of cancelled timers, is
	 * safely past, to see events that must not come.
	 */
	u64 linger = d->last_expiry + d->slack_ns + 2 * d->api.out_tick_ns +
		     100 * NSEC_PER_MSEC;
	struct twheel_event *buf = malloc(bufsize * sizeof(*buf));
	struct epoll_event eev = { .events = EPOLLIN };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (!buf)
		die("out of memory");
	if (ep < 0)
		die("epoll_create1: %s", strerror(errno));
	if (epoll_ctl(ep, EPOLL_CTL_ADD, d->fd, &eev) < 0)
		die("epoll_ctl: %s", strerror(errno));

	for (;;) {
		u64 now = libtwheel_now(), until;
		int n, timeout_ms;

		if (now >= give_up)
			break;
		if (d->fired >= expected && now >= linger)
			break;
		until = d->fired >= expected ? linger : give_up;
		/* Wake up at least every 100 ms to redraw the progress line. */
		timeout_ms = (int)((until - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		if (timeout_ms > 100)
			timeout_ms = 100;
		n = epoll_wait(ep, &eev, 1, timeout_ms);
		if (n < 0 && errno != EINTR) {
			demo_error(d, -errno, "epoll_wait");
			break;
		}
		/* Drain: read in large buffers until EAGAIN. */
		while (n > 0) {
			ssize_t got = libtwheel_read_events(d->fd, buf, bufsize);
			ssize_t i;

			if (got == -EAGAIN)
				break;
			if (got == -EINTR)
				continue;
			if (got < 0) {
				demo_error(d, got, "read");
				goto out;
			}
			now = libtwheel_now();
			for (i = 0; i < got; i++)
				demo_event(d, &buf[i], now);
			if ((size_t)got < bufsize)
				break;
		}
		progress(false, "fired %llu/%llu  early %llu  duplicates %llu  unexpected %llu",
			 d->fired, expected, d->early, d->duplicates, d->unexpected);
	}
out:
	progress(true, "fired %llu/%llu after %.2f s of waiting", d->fired,
		 expected, (double)(libtwheel_now() - t0) / NSEC_PER_SEC);
	close(ep);
	free(buf);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array of ns, in µs. */
static double percentile_us(const long long *v, u64 n, double p)
{
	u64 rank;

	if (!n)
		return 0;
	rank = (u64)ceil(p / 100.0 * (double)n);
	if (rank < 1)
		rank = 1;
	return (double)v[rank - 1] / NSEC_PER_USEC;
}

static double per_sec(u64 ops, u64 ns)
{
	return ns ? (double)ops * NSEC_PER_SEC / (double)ns : 0;
}

static void demo_summary(const struct demo *d, u64 wall, bool ok)
{
	u64 lost = d->armed - d->cancelled - d->fired;
	double p50 = percentile_us(d->lateness, d->fired, 50);
	double p99 = percentile_us(d->lateness, d->fired, 99);
	double max = percentile_us(d->lateness, d->fired, 100);
	double arm_rate = per_sec(d->armed, d->arm_ns);
	double cancel_rate = per_sec(d->cancelled, d->cancel_ns);

	printf("  armed       %10llu   %.0f ops/s\n", d->armed, arm_rate);
	printf("  cancelled   %10llu   %.0f ops/s\n", d->cancelled, cancel_rate);
	printf("  fired       %10llu\n", d->fired);
	printf("  early       %10llu\n", d->early);
	printf("  lost        %10llu\n", lost);
	printf("  duplicates  %10llu\n", d->duplicates);
	printf("  unexpected  %10llu\n", d->unexpected);
	printf("  mismatched  %10llu\n", d->mismatched);
	printf("  errors      %10llu", d->errors);
	if (d->errors)
		printf("   first: %s", strerror(d->first_errno));
	printf("\n");
	printf("  lateness    p50 %.0f us, p99 %.0f us, max %.0f us (fired - expiry)\n",
	       p50, p99, max);
	printf("  wall time   %.2f s\n", (double)wall / NSEC_PER_SEC);

	/* The same on one line, for scripts. */
	printf("twheel-demo: result=%s", ok ? "pass" : "FAIL");
	printf(" armed=%llu cancelled=%llu fired=%llu", d->armed, d->cancelled,
	       d->fired);
	printf(" early=%llu lost=%llu duplicates=%llu unexpected=%llu", d->early,
	       lost, d->duplicates, d->unexpected);
	printf(" mismatched=%llu errors=%llu", d->mismatched, d->errors);
	printf(" late_p50_us=%.0f late_p99_us=%.0f late_max_us=%.0f", p50, p99,
	       max);
	printf(" arm_ops_per_s=%.0f cancel_ops_per_s=%.0f", arm_rate,
	       cancel_rate);
	printf(" wall_s=%.2f\n", (double)wall / NSEC_PER_SEC);
}

static const char demo_help[] =
	"usage: twheelctl demo [-n N] [-s SPREAD_MS] [-c FRACTION] [-b BATCH]\n"
	"                      [-l LEAD_MS] [-g GRACE_MS] [--slack MS] [--seed S] [-q]\n"
	"\n"
	"Arms N one-shot timers with TWHEEL_IOC_BATCH: by default 1M, or fewer\n"
	"when the limits the handshake reports (max_timers_per_fd and\n"
	"max_timers_per_user) allow fewer.  BATCH records at a time (default\n"
	"4096; the library splits batches above max_batch), each due LEAD_MS\n"
	"(default 1000) plus a random [0, SPREAD_MS) (default 3000) after its\n"
	"batch is built.  Cancels FRACTION of them (default 0.1)\n"
	"in batches, then reads the others with epoll until all have fired, or\n"
	"GRACE_MS (default 30000) after the last deadline.\n"
	"\n"
	"Checks that every timer that was not cancelled fires exactly once, never\n"
	"early, with the expiry it was armed for, and that no cancelled timer\n"
	"fires.  Prints a summary; its last line, \"twheel-demo: result=pass ...\",\n"
	"is key=value for scripts.  Operations per second count the time spent in\n"
	"the batch ioctls.\n"
	"\n"
	EXIT_HELP
	"The checks fail (1) unless early, lost, duplicates, unexpected,\n"
	"mismatched and errors are all 0.\n";

static int cmd_demo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "spread", required_argument, NULL, 's' },
		{ "cancel", required_argument, NULL, 'c' },
		{ "batch", required_argument, NULL, 'b' },
		{ "lead", required_argument, NULL, 'l' },
		{ "grace", required_argument, NULL, 'g' },
		{ "slack", required_argument, NULL, 'S' },
		{ "seed", required_argument, NULL, 'r' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct demo d = {
		.n = 1000000,
		.spread_ns = 3000 * NSEC_PER_MSEC,
		.lead_ns = 1000 * NSEC_PER_MSEC,
		.grace_ns = 30000 * NSEC_PER_MSEC,
		.cancel_fraction = 0.1,
		.batch = 4096,
	};
	struct twheel_batch_op *ops;
	struct libtwheel_batch bb;
	bool seeded = false, counted = false, ok;
	u64 t0, wall, b, i, slots, limit;
	char *end;
	int opt;

	while ((opt = getopt_long(argc, argv, "+n:s:c:b:l:g:qh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			d.n = parse_count(optarg, "count");
			counted = true;
			break;
		case 's':
			d.spread_ns = parse_ms(optarg, "spread");
			break;
		case 'c':
			d.cancel_fraction = strtod(optarg, &end);
			if (*end || end == optarg ||
			    !(d.cancel_fraction >= 0 && d.cancel_fraction <= 1))
				usage_error("bad cancel fraction '%s' (0..1)", optarg);
			break;
		case 'b':
			b = parse_count(optarg, "batch");
			if (!b || b > UINT_MAX)
				usage_error("bad batch size '%s'", optarg);
			d.batch = (unsigned int)b;
			break;
		case 'l':
			d.lead_ns = parse_ms(optarg, "lead");
			break;
		case 'g':
			d.grace_ns = parse_ms(optarg, "grace");
			break;
		case 'S':
			d.slack_ns = parse_ms(optarg, "slack");
			break;
		case 'r':
			d.seed = parse_count(optarg, "seed");
			seeded = true;
			break;
		case 'q':
			progress_out.quiet = true;
			break;
		case 'h':
			fputs(demo_help, stdout);
			return 0;
		default:
			usage_error("demo: bad option");
		}
	}
	if (optind != argc)
		usage_error("demo: unexpected argument '%s'", argv[optind]);
	if (d.n > UINT_MAX)
		usage_error("demo: at most %u timers", UINT_MAX);
	if (!d.spread_ns)
		d.spread_ns = 1;

	progress_out.live = stderr_is_interactive();
	if (!seeded)
		d.seed = libtwheel_now() ^ ((u64)getpid() << 32);
	d.rng = d.seed;
	d.key = splitmix64(&d.rng);
	d.mul = splitmix64(&d.rng) | 1;	/* odd: invertible mod 2^64 */
	d.mul_inv = d.mul;		/* Newton: each step doubles the bits */
	for (i = 0; i < 5; i++)
		d.mul_inv *= 2 - d.mul * d.mul_inv;

	d.fd = open_checked(O_NONBLOCK | O_CLOEXEC, &d.api);
	/* what this file may hold: a default the limits do not allow fails */
	limit = d.api.out_max_timers_per_fd;
	if (d.api.out_max_timers_per_user &&
	    (!limit || d.api.out_max_timers_per_user < limit))
		limit = d.api.out_max_timers_per_user;
	if (limit && d.n > limit && !counted) {
		msg("%llu timers: the most this user may hold (limits: per fd %llu, per user %llu)",
		    limit, (u64)d.api.out_max_timers_per_fd,
		    (u64)d.api.out_max_timers_per_user);
		d.n = limit;
	} else if (limit && d.n > limit) {
		msg("warning: %llu timers, limits: per fd %llu, per user %llu",
		    d.n, (u64)d.api.out_max_timers_per_fd,
		    (u64)d.api.out_max_timers_per_user);
	}
	slots = d.n ? d.n : 1;
	d.expiry = calloc(slots, sizeof(*d.expiry));
	d.handle = calloc(slots, sizeof(*d.handle));
	d.state = calloc(slots, sizeof(*d.state));
	d.lateness = calloc(slots, sizeof(*d.lateness));
	ops = calloc(d.batch, sizeof(*ops));
	if (!d.expiry || !d.handle || !d.state || !d.lateness || !ops)
		die("out of memory for %llu timers", d.n);
	libtwheel_batch_init(&bb, ops, d.batch);

	printf("twheelctl demo: %llu timers due %.0f ms + [0, %.0f ms) after arming,",
	       d.n, (double)d.lead_ns / NSEC_PER_MSEC,
	       (double)d.spread_ns / NSEC_PER_MSEC);
	printf(" cancel %.1f%%, batch %u, slack %llu ns, tick %llu ns, seed %llu\n",
	       d.cancel_fraction * 100, d.batch, d.slack_ns,
	       (u64)d.api.out_tick_ns, d.seed);
	fflush(stdout);

	t0 = libtwheel_now();
	demo_arm(&d, &bb);
	demo_cancel(&d, &bb);
	demo_wait(&d);
	wall = libtwheel_now() - t0;
	libtwheel_close(d.fd);

	qsort(d.lateness, d.fired, sizeof(*d.lateness), cmp_ll);
	ok = !d.early && d.fired == d.armed - d.cancelled && !d.duplicates &&
	     !d.unexpected && !d.mismatched && !d.errors && d.armed == d.n;
	demo_summary(&d, wall, ok);

	free(ops);
	free(d.expiry);
	free(d.handle);
	free(d.state);
	free(d.lateness);
	return ok ? 0 : 1;
}

/* ---- main ------------------------------------------------------------- */

static const char help[] =
	"usage: twheelctl COMMAND [ARGS]\n"
	"\n"
	"  info [-c CLOCK] [-t TICK_MS]\n"
	"                       print the ABI handshake of /dev/twheel (of a\n"
	"                       file set up with that clock and tick)\n"
	"  arm [-p PERIOD_MS] [-s SLACK_MS] [-n COUNT] [-k COOKIE] [-a]\n"
	"      [-c CLOCK] [-t TICK_MS] DELAY_MS\n"
	"                       arm one timer (relative, or absolute with -a),\n"
	"                       print COUNT events (default 1, 3 if periodic);\n"
	"                       exits 1 if one fired early.  CLOCK is\n"
	"                       monotonic (default) or boottime, TICK_MS the\n"
	"                       file's tick (default: the module's)\n"
	"  demo [OPTIONS]       arm, cancel and check a million timers (or as\n"
	"                       many as the limits allow)\n"
	"  help, --help, -h     this text\n"
	"  --version            twheel's version and the ABI version spoken\n"
	"\n"
	"'twheelctl COMMAND --help' describes each command and its options.\n"
	"\n"
	EXIT_HELP;

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2)
		usage_error("missing command");
	cmd = argv[1];
	argc--;
	argv++;
	if (!strcmp(cmd, "info"))
		return cmd_info(argc, argv);
	if (!strcmp(cmd, "arm"))
		return cmd_arm(argc, argv);
	if (!strcmp(cmd, "demo"))
		return cmd_demo(argc, argv);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		fputs(help, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("twheelctl %s (ABI version %u of /dev/twheel)\n",
		       TWHEEL_VERSION, LIBTWHEEL_ABI_VERSION);
		return 0;
	}
	usage_error("unknown command '%s'", cmd);
}
