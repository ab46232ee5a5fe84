// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_fuzz - random and malformed use of /dev/twheel from several
 * threads and processes, with an oracle for every result.
 *
 * Usage: twheel_fuzz [-t SECONDS] [-s SEED] [-j THREADS] [-p PROCS] [-i]
 *
 * Phase 1 (random, 70% of SECONDS): PROCS processes of THREADS threads
 * each issue random ioctls and reads: every command with structures that
 * are valid, carry random flag and reserved bits, out-of-range expiries,
 * periods and slacks; stale, foreign, random and impossible handles;
 * batches of 0 to max_batch records and counts past it; unknown commands
 * and known ones with a wrong size or direction; arguments that are NULL,
 * unmapped, kernel addresses, read-only, or end in a guard page part-way;
 * read() with odd sizes and bad buffers, blocking and non-blocking;
 * poll(), epoll; O_NONBLOCK flipped under other threads.  Two fds are
 * opened before the fork and shared by all processes, four are each
 * process's own.  A thread per process replaces fds with dup2() (an
 * atomic switch to a fresh file) while others are inside ioctl, read or
 * epoll_wait, and forks children that use the inherited fds; in all
 * processes but the first it also close()s fds outright and dup2()s one
 * slot over another.
 *
 * Phase 2 (close races, 30% of SECONDS): a thread blocked in read(), one
 * in epoll_wait() and one inside a batch of up to 2048 arms, while the fd is
 * closed, dup2()ed over, or closed and reopened.  The blocked reader must
 * get an event of a timer armed for it (the file lives as long as the
 * read), the batch must complete or see EBADF.
 *
 * Phase 3 (sharing): a forked child reads the events of timers its parent
 * armed on a shared fd, the parent reads those a child armed; a child
 * exits with timers in flight on its own fd; events whose copy to user
 * space failed are not lost (read into bad buffers, then a good one).
 *
 * The oracle: every ioctl result is success or an errno that the ABI
 * (include/uapi/linux/twheel.h, DOC: General ioctl format) gives for
 * exactly that input: EINVAL for bad flags, reserved bits and ranges,
 * EFAULT for unreadable arguments, ENOENT only where a handle may be dead,
 * E2BIG above max_batch, ENOTTY for unknown commands, ENOSPC/ENOMEM only
 * for arms; plus EBADF where the fd may have been closed by this process.
 * Batches process exactly the records that are readable, each with its own
 * result, and leave the rest alone.  read() returns whole events, EINVAL
 * below one event, EFAULT for bad buffers, EAGAIN / EINTR when it found
 * nothing.  Every event read is well formed: non-zero handle, a cookie
 * this program set, flags matching the timer's periodicity, fired no
 * earlier than its expiry and not after the read; never an event of an arm
 * that failed with EFAULT (those carry a cookie of their own).
 *
 * Output: TAP, one line per phase with counts of the calls and of each
 * result; -i indents it as a subtest of the calling plan's check.  Exits
 * 1 on any violation.  The kernel side (KASAN, lockdep, list debugging,
 * kmemleak) is judged by whoever reads the console.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#include "twheel_utils.h"

#define DEV			"/dev/twheel"
#define KTIME_MAX		((uint64_t)INT64_MAX)
#define EV_SIZE			sizeof(struct twheel_event)
#define OP_SIZE			sizeof(struct twheel_batch_op)
#define MAX_THREADS		32
#define MAX_PROCS		16
#define NSLOT			6	/* fds per process: 2 shared, 4 own */
#define NSHARED			2
#define POOL			512	/* handles remembered per process */
#define READ_EVENTS		256
#define MAX_REPORTS		40
#define NERR			134
/* A blocked read or wait longer than this is interrupted (SIGUSR1). */
#define BLOCK_MAX_NS		(300 * NSEC_PER_MSEC)
/* Cookies: magic in 63..48, bit 47 set when the timer is periodic. */
#define FZ_MAGIC		0xf022ULL
#define UNDO_MAGIC		0xdeadULL	/* arms that must have been undone */
#define BIT_ULL(n)		(1ULL << (n))
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define COOKIE_PERIODIC		BIT_ULL(47)

/* errno sets as bit masks; bit 0 stands for success. */
#define B(e)			BIT_ULL(e)
#define OK			B(0)

/* Where an argument lives. */
enum { A_GOOD, A_END, A_RO, A_NULL, A_UNMAPPED, A_KERNEL, A_STRADDLE };

/* Counters of the whole run, in memory shared by all processes. */
struct fstats {
	uint64_t ioctls, ioctl_res[NERR];	/* [0]: successes */
	uint64_t reads, read_res[NERR];
	uint64_t events, polls, epolls, replaces, closes, dup2s, forks,
		 flips, batches, batch_records, batch_max, batch_e2big,
		 batch_short, interrupts, child_timeouts;
	uint64_t violations, reports;
	/* phase 2 */
	uint64_t race_iters, race_read_events, race_read_ebadf,
		 race_batch_done, race_batch_ebadf, race_epoll_ready;
	/* phase 3 */
	uint64_t share_events;
};

static struct fstats *st;

static struct {
	unsigned int seconds;
	unsigned int charge_wait;	/* s: see open_with_timer() */
	uint64_t seed;
	int threads;
	int procs;
	const char *indent;
} opt = {
	.seconds = 20,
	.charge_wait = 10,
	.threads = 4,
	.procs = 2,
	.indent = "",
};

/* What TWHEEL_IOC_API said at the start; it must not change. */
static struct twheel_api api0;

/* ---- per process ------------------------------------------------------ */

static int slotfd[NSLOT];	/* fixed numbers; each a twheel file or closed */
/*
 * Non-zero: this process closes fds outright.  An int set by a plain
 * store: qemu 7.2's TCG loses the flags of a setcc whose store to a
 * copy-on-write page faults, and "chaos = pidx > 0" came out false.
 */
static int chaos;
static uint64_t pool[POOL];	/* handles seen, of any of our files */
static int stop;		/* atomic */
static long pagesz;

struct fz {
	pthread_t tid;
	int id;
	bool chaos_thread;
	bool in_child;		/* forked child: no blocking, no fork */
	uint64_t rng;
	int ep;
	unsigned char *arena;	/* rw_len bytes read-write, then a guard page */
	size_t rw_len;
	unsigned char *guard;
	unsigned char *ro;	/* a read-only page (after its own guard) */
	struct twheel_event *evbuf;
	uint64_t block_since;	/* CLOCK_MONOTONIC ns, 0 when not blocking */
	uint64_t actions;
	int done;
};

static struct fz workers[MAX_THREADS];

/* ---- helpers ------------------------------------------------------------ */

static unsigned int pct(struct fz *z)
{
	return rnd(&z->rng) % 100;
}

static void add(uint64_t *c, uint64_t v)
{
	__atomic_fetch_add(c, v, __ATOMIC_RELAXED);
}

static const char *errname(int e)
{
	static const char *const names[] = {
		[0] = "0", [EPERM] = "EPERM", [ENOENT] = "ENOENT",
		[EINTR] = "EINTR", [E2BIG] = "E2BIG", [EBADF] = "EBADF",
		[EAGAIN] = "EAGAIN", [ENOMEM] = "ENOMEM", [EFAULT] = "EFAULT",
		[EBUSY] = "EBUSY", [EINVAL] = "EINVAL", [ENOTTY] = "ENOTTY",
		[ENOSPC] = "ENOSPC", [ERANGE] = "ERANGE", [EOVERFLOW] = "EOVERFLOW",
	};

	if (e >= 0 && e < (int)ARRAY_SIZE(names) && names[e])
		return names[e];
	return "E?";
}

/*
 * Report a violation.  Async-signal-safe enough for a forked child of a
 * threaded process: snprintf into a stack buffer and write(2), no stdio
 * locks, no allocation.
 */
static void viol(const char *fmt, ...)
{
	char msg[320];
	va_list ap;
	int n;

	add(&st->violations, 1);
	if (__atomic_fetch_add(&st->reports, 1, __ATOMIC_RELAXED) >= MAX_REPORTS)
		return;
	n = snprintf(msg, sizeof(msg), "%s# VIOLATION [pid %d]: ", opt.indent, (int)getpid());
	va_start(ap, fmt);
	n += vsnprintf(msg + n, sizeof(msg) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	msg[n++] = '\n';
	if (write(STDOUT_FILENO, msg, n) < 0)
		return;
}

/* Count an ioctl's result (0 or errno) and check it is in @allowed. */
static void ioctl_result(const char *what, int err, uint64_t allowed)
{
	add(&st->ioctls, 1);
	add(&st->ioctl_res[err < NERR ? err : NERR - 1], 1);
	if (chaos)
		allowed |= B(EBADF);
	if (err >= 64 || !(allowed & B(err)))
		viol("%s: %s (%d), allowed mask %#" PRIx64, what, errname(err), err, allowed);
}

static bool impossible_handle(uint64_t h)
{
	/*
	 * The index in the lower half is never 0; the generation in the
	 * upper half starts at a random value per file, so any is possible.
	 */
	return !(uint32_t)h;
}

static uint64_t pick_handle(struct fz *z)
{
	unsigned int p = pct(z);
	uint64_t h = __atomic_load_n(&pool[rnd(&z->rng) % POOL], __ATOMIC_RELAXED);

	if (p < 55)
		return h;
	if (p < 65)
		return h ^ (rnd(&z->rng) | 1) << 32;	/* another generation */
	if (p < 72)
		return 0;
	if (p < 85)
		return 1 + rnd(&z->rng) % 2000;		/* a small id: may be live */
	if (p < 95)
		return rnd(&z->rng);
	return ~0ULL;
}

static void remember(struct fz *z, uint64_t h)
{
	__atomic_store_n(&pool[rnd(&z->rng) % POOL], h, __ATOMIC_RELAXED);
}

static int pick_fd(struct fz *z)
{
	/* now and then a number that is never open */
	if (rnd(&z->rng) % 64 == 0)
		return 900 + rnd(&z->rng) % 50;
	return slotfd[rnd(&z->rng) % NSLOT];
}

static bool never_open(int fd)
{
	return fd >= 900;
}

static uint64_t cookie(struct fz *z, uint64_t magic, uint64_t period)
{
	return magic << 48 | (period ? COOKIE_PERIODIC : 0) | (rnd(&z->rng) & 0xffffffff);
}

/* Arming parameters: mostly valid, each field now and then out of range. */
struct armp {
	uint32_t flags, reserved;
	uint64_t expires, period, slack;
};

static void gen_arm(struct fz *z, struct armp *a)
{
	unsigned int p = pct(z);
	uint64_t now = now_ns();

	a->flags = p < 45 ? 0 : p < 92 ? TWHEEL_ARM_ABS :
		   p < 96 ? 1U << (rnd(&z->rng) % 32) : (uint32_t)rnd(&z->rng);
	a->reserved = pct(z) < 96 ? 0 : (uint32_t)rnd(&z->rng) | 1;

	p = pct(z);
	if (p < 85)
		a->expires = rnd(&z->rng) % (20 * NSEC_PER_MSEC);
	else if (p < 89)
		a->expires = rnd(&z->rng);		/* mostly > KTIME_MAX */
	else if (p < 92)
		a->expires = KTIME_MAX;
	else if (p < 94)
		a->expires = KTIME_MAX + 1;
	else if (p < 97)
		a->expires = 0;
	else
		a->expires = rnd(&z->rng) % (3600 * NSEC_PER_SEC);
	if ((a->flags & TWHEEL_ARM_ABS) && a->expires < 20 * NSEC_PER_MSEC)
		a->expires += pct(z) < 90 ? now : now / 2;	/* or in the past */

	p = pct(z);
	if (p < 97)
		a->period = 0;
	else if (p < 99)
		a->period = 10 * NSEC_PER_MSEC + rnd(&z->rng) % (90 * NSEC_PER_MSEC);
	else if (rnd(&z->rng) % 2)
		a->period = 1 + rnd(&z->rng) % api0.out_tick_ns;	/* may be < tick */
	else
		a->period = rnd(&z->rng);

	p = pct(z);
	a->slack = p < 80 ? 0 : p < 96 ? rnd(&z->rng) % (5 * NSEC_PER_MSEC) :
		   p < 98 ? rnd(&z->rng) : KTIME_MAX + (p & 1);
}

static bool arm_valid(const struct armp *a)
{
	return !(a->flags & ~TWHEEL_ARM_ABS) && !a->reserved &&
	       a->expires <= KTIME_MAX && a->period <= KTIME_MAX &&
	       a->slack <= KTIME_MAX && !(a->period && a->period < api0.out_tick_ns);
}

/*
 * Put a copy of @len bytes of @src where @kind says and return the address
 * to pass.  A_GOOD: a private copy; A_END: ends right at the guard page;
 * A_RO: in the read-only page; A_STRADDLE: the last bytes fall into the
 * guard page.  The others point at nothing usable.
 */
static void *place(struct fz *z, const void *src, size_t len, int kind, void *good)
{
	unsigned char *p;

	switch (kind) {
	case A_GOOD:
		memcpy(good, src, len);
		return good;
	case A_END:
		p = z->guard - len;
		memcpy(p, src, len);
		return p;
	case A_RO:
		if (mprotect(z->ro, pagesz, PROT_READ | PROT_WRITE))
			return NULL;
		memcpy(z->ro, src, len);
		mprotect(z->ro, pagesz, PROT_READ);
		return z->ro;
	case A_STRADDLE: {
		size_t in = 1 + rnd(&z->rng) % (len - 1);	/* bytes readable */

		p = z->guard - in;
		memcpy(p, src, in);
		return p;
	}
	case A_NULL:
		return NULL;
	case A_UNMAPPED:
		return z->guard + rnd(&z->rng) % (pagesz - len);
	default:
		return (void *)(uintptr_t)(0xffff888000000000ULL + (rnd(&z->rng) & 0xffffff8));
	}
}

static int pick_kind(struct fz *z)
{
	unsigned int p = pct(z);

	return p < 70 ? A_GOOD : p < 85 ? A_END : p < 90 ? A_RO : p < 92 ? A_NULL :
	       p < 95 ? A_UNMAPPED : p < 97 ? A_KERNEL : A_STRADDLE;
}

static bool readable(int kind)
{
	return kind == A_GOOD || kind == A_END || kind == A_RO;
}

static bool writable(int kind)
{
	return kind == A_GOOD || kind == A_END;
}

/* ---- events --------------------------------------------------------------- */

static void check_event(const struct twheel_event *ev, uint64_t seen)
{
	bool periodic = ev->cookie & COOKIE_PERIODIC;

	add(&st->events, 1);
	if (ev->cookie >> 48 == UNDO_MAGIC) {
		viol("event %#" PRIx64 " of an arm that failed with EFAULT", (uint64_t)ev->cookie);
		return;
	}
	if (ev->cookie >> 48 != FZ_MAGIC || !ev->handle ||
	    (ev->flags & ~TWHEEL_EVENT_PERIODIC) || ev->__reserved ||
	    !!(ev->flags & TWHEEL_EVENT_PERIODIC) != periodic ||
	    (!periodic && ev->overrun) || ev->fired < ev->expires || ev->fired > seen)
		viol("bad event: handle %#" PRIx64 " cookie %#" PRIx64 " expires %" PRIu64
		     " fired %" PRIu64 " (read at %" PRIu64 ") overrun %" PRIu64
		     " flags %#x res %#x",
		     (uint64_t)ev->handle, (uint64_t)ev->cookie, (uint64_t)ev->expires,
		     (uint64_t)ev->fired, seen, (uint64_t)ev->overrun, ev->flags, ev->__reserved);
}

/* ---- ioctl actions ---------------------------------------------------------- */

/*
 * The @size a structure of @len bytes is passed with: mostly @len; below
 * @min, its first version's size (EINVAL); longer with a zero tail (as
 * @len); longer with a non-zero byte in the tail (E2BIG); above
 * TWHEEL_STRUCT_SIZE_MAX (E2BIG, whatever follows the structure).  @raw
 * holds the structure and room for the tail; returns how many bytes of it
 * to place.
 */
enum { SZ_EXACT, SZ_SHORT, SZ_LONG0, SZ_LONGX, SZ_HUGE };
#define SZ_TAIL		32

/* A @size or @op_size above TWHEEL_STRUCT_SIZE_MAX, up to UINT32_MAX. */
static uint32_t huge_size(struct fz *z)
{
	return TWHEEL_STRUCT_SIZE_MAX + 1 +
	       rnd(&z->rng) % (UINT32_MAX - TWHEEL_STRUCT_SIZE_MAX);
}

static size_t pick_size_min(struct fz *z, unsigned char *raw, size_t len,
			    size_t min, int *skind)
{
	unsigned int p = pct(z);
	uint32_t size = len;

	memset(raw + len, 0, SZ_TAIL);
	*skind = p < 94 ? SZ_EXACT : p < 96 ? SZ_SHORT : p < 97 ? SZ_HUGE :
		 p < 98 ? SZ_LONG0 : SZ_LONGX;
	switch (*skind) {
	case SZ_SHORT:
		size = rnd(&z->rng) % min;
		break;
	case SZ_HUGE:
		size = huge_size(z);
		break;
	case SZ_LONG0:
		size = len + 1 + rnd(&z->rng) % SZ_TAIL;
		break;
	case SZ_LONGX:
		size = len + 1 + rnd(&z->rng) % SZ_TAIL;
		raw[len + rnd(&z->rng) % (size - len)] = 1 + rnd(&z->rng) % 255;
		break;
	}
	memcpy(raw, &size, sizeof(size));
	/* a huge @size is refused before anything past it is read */
	return *skind != SZ_HUGE && size > len ? size : len;
}

/* A structure whose first version is its whole: shorter is EINVAL. */
static size_t pick_size(struct fz *z, unsigned char *raw, size_t len, int *skind)
{
	return pick_size_min(z, raw, len, len, skind);
}

/*
 * The errors the size of a structure at @kind decides, before its fields:
 * 0 if they decide nothing.  A structure straddling the guard page may
 * have its @size read before the fault.
 */
static uint64_t size_errors(int kind, int skind)
{
	/*
	 * Straddling the end of the readable memory: what the kernel reads
	 * before it faults may already be wrong (a short size, a non-zero
	 * byte of an unknown tail).
	 */
	if (!readable(kind))
		return B(EFAULT) |
		       (kind == A_STRADDLE && skind == SZ_SHORT ? B(EINVAL) : 0) |
		       (kind == A_STRADDLE && (skind == SZ_LONGX || skind == SZ_HUGE) ?
			B(E2BIG) : 0);
	if (skind == SZ_SHORT)
		return B(EINVAL);
	if (skind == SZ_LONGX || skind == SZ_HUGE)
		return B(E2BIG);
	return 0;
}

static void do_api(struct fz *z)
{
	unsigned char raw[sizeof(struct twheel_api) + SZ_TAIL], buf[sizeof(raw)];
	int kind = pick_kind(z), err, fd = pick_fd(z), skind;
	struct twheel_api a;
	uint64_t allowed;
	size_t len;
	void *p;

	memset(&a, 0xa5, sizeof(a));	/* outputs: garbage in */
	a.flags = pct(z) < 97 ? 0 : (uint32_t)rnd(&z->rng) | 1;
	a.__reserved = pct(z) < 97 ? 0 : (uint32_t)rnd(&z->rng) | 1;
	memcpy(raw, &a, sizeof(a));
	/* ABI version 2's first struct twheel_api ended here: 64 bytes */
	len = pick_size_min(z, raw, sizeof(a),
			    offsetof(struct twheel_api, out_max_timers_per_user) + 8,
			    &skind);
	p = place(z, raw, len, kind, buf);
	err = ioctl(fd, TWHEEL_IOC_API, p) ? errno : 0;
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(kind, skind))
		allowed = size_errors(kind, skind);
	else if (a.flags || a.__reserved)
		allowed = B(EINVAL);
	else
		allowed = writable(kind) ? OK : B(EFAULT);
	ioctl_result("API", err, allowed);
	if (err)
		return;
	memcpy(&a, p, sizeof(a));
	if (a.out_abi_version != api0.out_abi_version || a.out_event_size != EV_SIZE ||
	    a.out_features != api0.out_features || a.out_tick_ns != api0.out_tick_ns ||
	    a.out_slots != api0.out_slots || a.out_max_batch != api0.out_max_batch ||
	    a.out_batch_op_size != OP_SIZE ||
	    a.out_max_timers_per_fd != api0.out_max_timers_per_fd ||
	    a.out_max_timers_per_user != api0.out_max_timers_per_user)
		viol("API changed: abi %u size %u features %#" PRIx64 " tick %" PRIu64
		     " batch %u op size %u",
		     a.out_abi_version, a.out_event_size, (uint64_t)a.out_features,
		     (uint64_t)a.out_tick_ns, a.out_max_batch, a.out_batch_op_size);
}

static void spec_of(struct twheel_timer_spec *s, const struct armp *ap, uint64_t cookie)
{
	*s = (struct twheel_timer_spec){
		.flags = ap->flags, .__reserved = ap->reserved,
		.expires = ap->expires, .period = ap->period, .slack = ap->slack,
		.cookie = cookie,
	};
}

/* The flags of an ioctl structure: must be 0. */
static uint32_t gen_flags(struct fz *z)
{
	return pct(z) < 97 ? 0 : (uint32_t)rnd(&z->rng) | 1;
}

static void do_arm(struct fz *z)
{
	unsigned char raw[sizeof(struct twheel_arm) + SZ_TAIL], buf[sizeof(raw)];
	int kind = pick_kind(z), err, fd = pick_fd(z), skind;
	struct twheel_arm a;
	struct armp ap;
	uint64_t allowed;
	size_t len;
	void *p;

	gen_arm(z, &ap);
	a = (struct twheel_arm){
		.flags = gen_flags(z),
		.out_handle = rnd(&z->rng),			/* output only */
	};
	/* an arm whose handle cannot be written back must be undone */
	spec_of(&a.spec, &ap, cookie(z, kind == A_RO ? UNDO_MAGIC : FZ_MAGIC, ap.period));
	memcpy(raw, &a, sizeof(a));
	len = pick_size(z, raw, sizeof(a), &skind);
	p = place(z, raw, len, kind, buf);
	err = ioctl(fd, TWHEEL_IOC_ARM, p) ? errno : 0;
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(kind, skind))
		allowed = size_errors(kind, skind);
	else if (a.flags || !arm_valid(&ap))
		allowed = B(EINVAL);
	else
		allowed = B(ENOSPC) | B(ENOMEM) | (kind == A_RO ? B(EFAULT) : OK);
	ioctl_result("ARM", err, allowed);
	if (!err) {
		memcpy(&a, p, sizeof(a));
		if (impossible_handle(a.out_handle))
			viol("ARM returned handle %#" PRIx64, (uint64_t)a.out_handle);
		remember(z, a.out_handle);
	}
}

static void do_modify(struct fz *z)
{
	unsigned char raw[sizeof(struct twheel_modify) + SZ_TAIL], buf[sizeof(raw)];
	int kind = pick_kind(z), err, fd = pick_fd(z), skind;
	struct twheel_modify m;
	struct armp ap;
	uint64_t allowed;
	size_t len;
	void *p;

	gen_arm(z, &ap);
	m = (struct twheel_modify){
		.flags = gen_flags(z),
		.handle = pick_handle(z),
	};
	spec_of(&m.spec, &ap, cookie(z, FZ_MAGIC, ap.period));
	memcpy(raw, &m, sizeof(m));
	len = pick_size(z, raw, sizeof(m), &skind);
	p = place(z, raw, len, kind, buf);
	err = ioctl(fd, TWHEEL_IOC_MODIFY, p) ? errno : 0;
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(kind, skind))
		allowed = size_errors(kind, skind);
	else if (m.flags || !arm_valid(&ap))
		allowed = B(EINVAL);
	else if (impossible_handle(m.handle))
		allowed = B(ENOENT);
	else
		allowed = OK | B(ENOENT);
	ioctl_result("MODIFY", err, allowed);
}

static void do_cancel(struct fz *z)
{
	unsigned char raw[sizeof(struct twheel_cancel) + SZ_TAIL], buf[sizeof(raw)];
	int kind = pick_kind(z), err, fd = pick_fd(z), skind;
	struct twheel_cancel c;
	uint64_t allowed;
	size_t len;
	void *p;

	c = (struct twheel_cancel){
		.handle = pick_handle(z),
		.flags = gen_flags(z),
		.out_status = (uint32_t)rnd(&z->rng),	/* output only */
		.__reserved = gen_flags(z),
	};
	memcpy(raw, &c, sizeof(c));
	len = pick_size(z, raw, sizeof(c), &skind);
	p = place(z, raw, len, kind, buf);
	err = ioctl(fd, TWHEEL_IOC_CANCEL, p) ? errno : 0;
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(kind, skind))
		allowed = size_errors(kind, skind);
	else if (c.flags || c.__reserved)
		allowed = B(EINVAL);
	else if (impossible_handle(c.handle))
		allowed = B(ENOENT);
	else
		allowed = B(ENOENT) | (kind == A_RO ? B(EFAULT) : OK);
	ioctl_result("CANCEL", err, allowed);
	if (!err) {
		memcpy(&c, p, sizeof(c));
		if (c.out_status != TWHEEL_CANCEL_PENDING && c.out_status != TWHEEL_CANCEL_FIRED)
			viol("CANCEL status %u", c.out_status);
	}
}

static void do_query(struct fz *z)
{
	unsigned char raw[sizeof(struct twheel_query) + SZ_TAIL], buf[sizeof(raw)];
	int kind = pick_kind(z), err, fd = pick_fd(z), skind;
	struct twheel_query q;
	uint64_t allowed, h;
	size_t len;
	void *p;

	memset(&q, 0xa5, sizeof(q));	/* outputs: garbage in */
	h = pick_handle(z);
	q.handle = h;
	q.flags = gen_flags(z);
	q.__reserved = gen_flags(z);
	memcpy(raw, &q, sizeof(q));
	len = pick_size(z, raw, sizeof(q), &skind);
	p = place(z, raw, len, kind, buf);
	err = ioctl(fd, TWHEEL_IOC_QUERY, p) ? errno : 0;
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(kind, skind))
		allowed = size_errors(kind, skind);
	else if (q.flags || q.__reserved)
		allowed = B(EINVAL);
	else if (impossible_handle(h))
		allowed = B(ENOENT);
	else
		allowed = B(ENOENT) | (kind == A_RO ? B(EFAULT) : OK);
	ioctl_result("QUERY", err, allowed);
	if (err)
		return;
	memcpy(&q, p, sizeof(q));
	if (q.handle != h || q.flags ||
	    (q.out_state & ~(uint32_t)(TWHEEL_QUERY_PENDING | TWHEEL_QUERY_EVENT)) ||
	    (!(q.out_state & TWHEEL_QUERY_PENDING) && (q.out_expires || q.out_remaining)) ||
	    ((q.out_state & TWHEEL_QUERY_PENDING) && q.out_remaining > q.out_expires) ||
	    q.out_cookie >> 48 != FZ_MAGIC ||
	    !!(q.out_cookie & COOKIE_PERIODIC) != !!q.out_period ||
	    (q.out_period && q.out_period < api0.out_tick_ns))
		viol("QUERY %#" PRIx64 ": handle %#" PRIx64 " state %#x remaining %" PRIu64
		     " expires %" PRIu64 " period %" PRIu64 " cookie %#" PRIx64,
		     h, (uint64_t)q.handle, q.out_state, (uint64_t)q.out_remaining,
		     (uint64_t)q.out_expires, (uint64_t)q.out_period, (uint64_t)q.out_cookie);
}

/* An ioctl command that is not one of ours: must be ENOTTY. */
static void do_badcmd(struct fz *z)
{
	static const unsigned int v1[] = {
		TWHEEL_V1_IOC_ARM, TWHEEL_V1_IOC_MODIFY, TWHEEL_V1_IOC_CANCEL,
		TWHEEL_V1_IOC_QUERY, TWHEEL_V1_IOC_BATCH,
	};
	static const unsigned int good[] = {
		TWHEEL_IOC_API, TWHEEL_IOC_ARM, TWHEEL_IOC_MODIFY,
		TWHEEL_IOC_CANCEL, TWHEEL_IOC_QUERY, TWHEEL_IOC_BATCH,
		TWHEEL_IOC_SETUP,
		TWHEEL_V1_IOC_API,	/* still answers */
	};
	unsigned int cmd, type, i, p = pct(z);
	char buf[256] = { 0 };
	int err, fd = pick_fd(z);

	/*
	 * One of ours (version 1's numbers, or version 2's) with a size or
	 * direction; version 1's exact commands are among them.
	 */
	if (p < 40)
		cmd = _IOC(rnd(&z->rng) % 4, TWHEEL_IOCTL_MAGIC,
			   (rnd(&z->rng) % 2 ? TWHEEL_CMD_BASE : 0) + rnd(&z->rng) % 6,
			   rnd(&z->rng) % 2 ? rnd(&z->rng) % 256 : rnd(&z->rng) % (1 << 14));
	else if (p < 45)	/* exactly a version 1 command */
		cmd = v1[rnd(&z->rng) % ARRAY_SIZE(v1)];
	else if (p < 70)	/* our type, another number */
		cmd = _IOC(rnd(&z->rng) % 4, TWHEEL_IOCTL_MAGIC, 6 + rnd(&z->rng) % 250,
			   rnd(&z->rng) % 64);
	else
		cmd = (unsigned int)rnd(&z->rng);
	for (i = 0; i < ARRAY_SIZE(good); i++)
		if (cmd == good[i])
			return;
	/* The VFS answers these types itself (FIONBIO, FIFREEZE, FICLONE...). */
	type = _IOC_TYPE(cmd);
	if (type == 0 || type == 'T' || type == 'X' || type == 'f' || type == 0x94)
		return;
	err = ioctl(fd, cmd, p < 90 ? (void *)buf : place(z, buf, 8, pick_kind(z), buf)) ?
	      errno : 0;
	ioctl_result("unknown command", err, never_open(fd) ? B(EBADF) : B(ENOTTY));
}

/* One random batch record; mostly cheap ones in a big batch. */
static void gen_record(struct fz *z, struct twheel_batch_op *op, bool big)
{
	unsigned int p = pct(z);
	struct armp ap;

	memset(op, 0, sizeof(*op));
	op->out_result = RESULT_POISON;
	if (big && p < 92) {
		op->op = TWHEEL_OP_CANCEL;
		op->handle = rnd(&z->rng) | 1ULL << 40;	/* impossible */
		return;
	}
	gen_arm(z, &ap);
	p = pct(z);
	op->op = p < 55 ? TWHEEL_OP_ARM : p < 72 ? TWHEEL_OP_MODIFY :
		 p < 92 ? TWHEEL_OP_CANCEL : p < 96 ? 0 : (uint32_t)rnd(&z->rng);
	op->handle = op->op == TWHEEL_OP_ARM ? rnd(&z->rng) : pick_handle(z);
	/* CANCEL ignores the spec, garbage or not */
	spec_of(&op->spec, &ap, 0);
	op->spec.expires = ap.expires;
	op->spec.period = ap.period;
	op->spec.slack = ap.slack;
	op->spec.cookie = cookie(z, FZ_MAGIC, ap.period);
}

static uint64_t record_allowed(const struct twheel_batch_op *op)
{
	struct armp ap = {
		.flags = op->spec.flags, .reserved = op->spec.__reserved,
		.expires = op->spec.expires, .period = op->spec.period,
		.slack = op->spec.slack,
	};

	switch (op->op) {
	case TWHEEL_OP_ARM:
		return arm_valid(&ap) ? OK | B(ENOSPC) : B(EINVAL);
	case TWHEEL_OP_MODIFY:
		if (!arm_valid(&ap))
			return B(EINVAL);
		return impossible_handle(op->handle) ? B(ENOENT) : OK | B(ENOENT);
	case TWHEEL_OP_CANCEL:
		return impossible_handle(op->handle) ? B(ENOENT) : OK | B(ENOENT);
	default:
		return B(EINVAL);
	}
}

static void do_batch(struct fz *z)
{
	uint32_t max = api0.out_max_batch, count, nrec, i, want = 0, op_size;
	unsigned char raw[sizeof(struct twheel_batch) + SZ_TAIL], bbuf[sizeof(raw)];
	uint32_t nfailed = 0;
	struct twheel_batch b;
	size_t len;
	int szkind;
	struct twheel_batch_op *in = NULL, out;
	unsigned char *ops;
	int skind, okind, err, fd = pick_fd(z);
	unsigned int p = rnd(&z->rng) % 1000;
	uint64_t allowed;
	long ret;
	void *bp;

	/* the count; one batch in 200 at max_batch or one below */
	if (p < 450)
		count = 1 + rnd(&z->rng) % 16;
	else if (p < 850)
		count = 17 + rnd(&z->rng) % 500;
	else if (p < 930)
		count = 512 + rnd(&z->rng) % 3584;
	else if (p < 935)
		count = max - rnd(&z->rng) % 2;
	else if (p < 985)
		count = p & 1 ? max + 1 + rnd(&z->rng) % 3 : (uint32_t)rnd(&z->rng) | 1U << 31;
	else
		count = 0;
	nrec = count <= max ? count : 0;

	/*
	 * Where the records are: ending at the guard page (A_END), or only
	 * @want whole ones before it, maybe with a partial one (A_STRADDLE),
	 * read-only, or nowhere.  The inputs are generated in @in.
	 */
	p = pct(z);
	okind = p < 85 ? A_END : p < 91 ? A_STRADDLE : p < 94 ? A_RO :
		p < 96 ? A_NULL : p < 98 ? A_UNMAPPED : A_KERNEL;
	if (okind == A_RO && nrec * OP_SIZE > (size_t)pagesz)
		okind = A_END;
	want = okind == A_END ? nrec : okind == A_STRADDLE && nrec ? rnd(&z->rng) % nrec : 0;
	if (okind == A_END || okind == A_STRADDLE || okind == A_RO) {
		uint32_t n = okind == A_RO ? nrec : want;

		in = malloc((n ? n : 1) * OP_SIZE);
		if (!in)
			return;
		for (i = 0; i < n; i++) {
			gen_record(z, &in[i], nrec > 4096);
			/* arms in a read-only buffer must be undone */
			if (okind == A_RO && in[i].op == TWHEEL_OP_ARM)
				in[i].spec.cookie = cookie(z, UNDO_MAGIC, in[i].spec.period);
		}
		if (okind == A_RO) {
			ops = place(z, in, n * OP_SIZE, A_RO, NULL);
		} else {
			ops = z->guard - n * OP_SIZE;
			if (okind == A_STRADDLE && pct(z) < 50)
				ops -= 1 + rnd(&z->rng) % (OP_SIZE - 1);
			memcpy(ops, in, n * OP_SIZE);
		}
	} else {
		ops = place(z, NULL, OP_SIZE, okind, NULL);
	}

	/* below the first version 1%, above the largest 1% */
	p = pct(z);
	op_size = p < 98 ? OP_SIZE : p < 99 ? huge_size(z) : rnd(&z->rng) % OP_SIZE;
	b = (struct twheel_batch){
		.ops = (uintptr_t)ops, .count = count,
		.flags = gen_flags(z),
		.op_size = op_size,
		.out_done = (uint32_t)rnd(&z->rng),
		.out_failed = (uint32_t)rnd(&z->rng),
	};
	memcpy(raw, &b, sizeof(b));
	len = pick_size(z, raw, sizeof(b), &szkind);
	p = pct(z);
	skind = p < 90 ? A_GOOD : p < 94 ? A_RO : p < 96 ? A_STRADDLE : p < 98 ? A_NULL : A_KERNEL;
	bp = place(z, raw, len, skind, bbuf);

	ret = ioctl(fd, TWHEEL_IOC_BATCH, bp);
	err = ret < 0 ? errno : 0;
	add(&st->batches, 1);
	if (count == max)
		add(&st->batch_max, 1);
	if (count > max)
		add(&st->batch_e2big, 1);

	/* the expected outcome */
	if (never_open(fd))
		allowed = B(EBADF);
	else if (size_errors(skind, szkind))
		allowed = size_errors(skind, szkind);
	else if (b.flags)
		allowed = B(EINVAL);
	else if (b.op_size < OP_SIZE)	/* whether or not count is checked first */
		allowed = B(EINVAL) | (count > max ? B(E2BIG) : 0) |
			  (!count ? (writable(skind) ? OK : B(EFAULT)) : 0);
	else if (count > max || b.op_size > TWHEEL_STRUCT_SIZE_MAX)
		allowed = B(E2BIG);
	else if (!count)
		allowed = writable(skind) ? OK : B(EFAULT);
	else if (okind == A_RO)
		/*
		 * Outputs cannot be written: the batch stops at the first
		 * record that has one (an ARM, a failure), after the records
		 * before it, which write nothing.
		 */
		allowed = OK | B(EFAULT);
	else if (!want)
		allowed = B(EFAULT);	/* the first record could not be done */
	else
		allowed = OK | B(ENOMEM);
	add(&st->ioctls, 1);
	add(&st->ioctl_res[err < NERR ? err : NERR - 1], 1);
	if (chaos)
		allowed |= B(EBADF);
	if (err >= 64 || !(allowed & B(err))) {
		viol("BATCH (count %u, ops/struct/size kinds %d/%d/%d, flags %#x, op_size %u): %s",
		     count, okind, skind, szkind, b.flags, b.op_size, errname(err));
		goto out;
	}
	if (err || !(allowed & OK))
		goto out;
	if (okind == A_RO) {
		/* none of the records it did had an output: no ARM among them */
		for (i = 0; i < nrec && i < ret; i++)
			if (in[i].op == TWHEEL_OP_ARM)
				break;
		if (ret > nrec || i < ret)
			viol("BATCH of %u read-only records returned %ld (ARM at %u)",
			     nrec, ret, i);
		goto out;
	}

	/* processed: exactly the readable records; only ENOMEM stops early */
	if (ret != want) {
		memcpy(&out, ops + (ret > 0 && ret < want ? ret : 0) * OP_SIZE, OP_SIZE);
		if (ret > 0 && ret < want && out.out_result == RESULT_POISON) {
			add(&st->batch_short, 1);
		} else {
			viol("BATCH of %u (%u readable) returned %ld", count, want, ret);
			goto out;
		}
	}
	if (writable(skind) && ((struct twheel_batch *)bp)->out_done != ret)
		viol("BATCH returned %ld, done %u", ret, ((struct twheel_batch *)bp)->out_done);
	for (i = 0; i < want; i++) {
		uint64_t ok = record_allowed(&in[i]);
		int64_t r;

		memcpy(&out, ops + i * OP_SIZE, OP_SIZE);
		/* written for a failure and for ARM only */
		r = out.out_result;
		if (r == RESULT_POISON && in[i].op != TWHEEL_OP_ARM)
			r = 0;
		if (i >= ret) {
			/* after the last processed: untouched */
			if (memcmp(&out, &in[i], OP_SIZE))
				viol("BATCH record %u after %ld processed was written", i, ret);
			continue;
		}
		add(&st->batch_records, 1);
		nfailed += r != 0;
		if (r > 0 || r < -63 || !(ok & B(-r)))
			viol("BATCH record %u (op %u flags %#x handle %#" PRIx64
			     "): result %" PRId64,
			     i, in[i].op, in[i].spec.flags, (uint64_t)in[i].handle, r);
		else if (!r && in[i].op == TWHEEL_OP_ARM && impossible_handle(out.handle))
			viol("BATCH arm: handle %#" PRIx64, (uint64_t)out.handle);
		else if (!r && in[i].op == TWHEEL_OP_ARM && rnd(&z->rng) % 4 == 0)
			remember(z, out.handle);
		else if (r && in[i].op == TWHEEL_OP_ARM && out.handle != in[i].handle)
			viol("BATCH arm failed with %" PRId64 " but wrote a handle", r);
	}
	if (writable(skind) && ret == want &&
	    ((struct twheel_batch *)bp)->out_failed != nfailed)
		viol("BATCH: %u records failed, out_failed %u", nfailed,
		     ((struct twheel_batch *)bp)->out_failed);
out:
	free(in);
}

/* ---- reading and waiting ------------------------------------------------------- */

static void blocking(struct fz *z, bool on)
{
	__atomic_store_n(&z->block_since, on ? now_ns() : 0, __ATOMIC_RELAXED);
}

static void do_read(struct fz *z)
{
	int fd = pick_fd(z), kind, err, i, n;
	size_t count, room;
	unsigned int p = pct(z);
	uint64_t allowed, seen;
	unsigned char *buf;
	ssize_t ret;

	if (z->in_child) {
		/* a child must not block: make the shared file non-blocking */
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
			return;
	}
	if (p < 5)
		count = rnd(&z->rng) % EV_SIZE;			/* too small */
	else if (p < 75)
		count = EV_SIZE * (1 + rnd(&z->rng) % 64);
	else if (p < 90)
		count = EV_SIZE * (1 + rnd(&z->rng) % READ_EVENTS) + rnd(&z->rng) % EV_SIZE;
	else
		count = p & 1 ? 1 << 20 : (size_t)INT32_MAX;	/* huge */

	p = pct(z);
	kind = p < 80 ? A_GOOD : p < 90 ? A_END : p < 93 ? A_RO : p < 95 ? A_NULL :
	       p < 97 ? A_KERNEL : A_STRADDLE;
	if (kind == A_GOOD && count > READ_EVENTS * EV_SIZE)
		kind = A_END;
	switch (kind) {
	case A_GOOD:
		buf = (unsigned char *)z->evbuf;
		room = count;
		break;
	case A_END:	/* up to 256 events fit before the guard page */
	case A_STRADDLE:
		room = rnd(&z->rng) % (READ_EVENTS * EV_SIZE + 1);
		buf = z->guard - room;
		break;
	case A_RO:
		buf = z->ro;
		room = 0;
		break;
	default:
		buf = place(z, NULL, EV_SIZE, kind, NULL);
		room = 0;
		break;
	}
	blocking(z, true);
	ret = read(fd, buf, count);
	seen = now_ns();
	blocking(z, false);
	err = ret < 0 ? errno : 0;
	add(&st->reads, 1);
	add(&st->read_res[err < NERR ? err : NERR - 1], 1);
	if (err == EINTR)
		add(&st->interrupts, 1);

	if (never_open(fd))
		allowed = B(EBADF);
	else if (kind == A_KERNEL)
		allowed = B(EFAULT);		/* access_ok() in vfs_read */
	else if (count < EV_SIZE)
		allowed = B(EINVAL);
	else if (room < EV_SIZE)
		allowed = B(EFAULT) | B(EAGAIN) | B(EINTR);
	else	/* EFAULT: a chunk that did not fit, its events put back */
		allowed = OK | B(EAGAIN) | B(EINTR) | (room < count ? B(EFAULT) : 0);
	if (chaos)
		allowed |= B(EBADF);
	if (err >= 64 || !(allowed & B(err))) {
		viol("read(%zu bytes, kind %d, room %zu): %s", count, kind, room, errname(err));
		return;
	}
	if (err)
		return;
	if (ret == 0 || ret % EV_SIZE || (size_t)ret > count || (size_t)ret > room) {
		viol("read(%zu bytes, room %zu) returned %zd", count, room, ret);
		return;
	}
	n = ret / EV_SIZE;
	for (i = 0; i < n; i++) {
		struct twheel_event ev;

		memcpy(&ev, buf + i * EV_SIZE, EV_SIZE);
		check_event(&ev, seen);
	}
}

static void do_poll(struct fz *z)
{
	struct pollfd pfd[3];
	int i, n = 1 + rnd(&z->rng) % 3, ret;
	short bad = (short)~(POLLIN | POLLRDNORM | (chaos ? POLLNVAL : 0));

	for (i = 0; i < n; i++) {
		pfd[i].fd = slotfd[rnd(&z->rng) % NSLOT];
		pfd[i].events = POLLIN | (rnd(&z->rng) % 2 ? POLLOUT | POLLPRI : 0);
		pfd[i].revents = 0;
	}
	add(&st->polls, 1);
	ret = poll(pfd, n, z->in_child ? 0 : (int)(rnd(&z->rng) % 5));
	if (ret < 0) {
		if (errno != EINTR)
			viol("poll: %s", errname(errno));
		return;
	}
	for (i = 0; i < n; i++)
		if (pfd[i].revents & bad)
			viol("poll revents %#x", pfd[i].revents);
}

static void do_epoll(struct fz *z)
{
	struct epoll_event ev[8];
	int i, n, slot = rnd(&z->rng) % NSLOT;

	add(&st->epolls, 1);
	if (pct(z) < 40) {
		/* epoll's own errors (EEXIST, ENOENT, EBADF) are not ours */
		struct epoll_event e = {
			.events = EPOLLIN | (rnd(&z->rng) % 4 ? 0 : EPOLLET) |
				  (rnd(&z->rng) % 8 ? 0 : EPOLLONESHOT),
			.data.u32 = slot,
		};

		epoll_ctl(z->ep, EPOLL_CTL_ADD + rnd(&z->rng) % 3, slotfd[slot], &e);
		return;
	}
	if (!z->in_child)
		blocking(z, true);
	n = epoll_wait(z->ep, ev, 8, z->in_child ? 0 : (int)(rnd(&z->rng) % 10));
	blocking(z, false);
	if (n < 0) {
		if (errno != EINTR)
			viol("epoll_wait: %s", errname(errno));
		return;
	}
	for (i = 0; i < n; i++)
		if (ev[i].events & ~(uint32_t)(EPOLLIN | EPOLLRDNORM))
			viol("epoll events %#x", ev[i].events);
}

static void do_flip(struct fz *z)
{
	int fd = slotfd[rnd(&z->rng) % NSLOT];
	int fl = fcntl(fd, F_GETFL);

	add(&st->flips, 1);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl ^ O_NONBLOCK);
}

/* ---- fd table games --------------------------------------------------------- */

/* Atomically switch a slot to a fresh file: the old one may be in use. */
static void do_replace(struct fz *z)
{
	int slot = rnd(&z->rng) % NSLOT;
	int nfd = open(DEV, O_RDWR | O_CLOEXEC | (rnd(&z->rng) % 4 ? O_NONBLOCK : 0));

	if (nfd < 0) {
		viol("open %s: %s", DEV, errname(errno));
		return;
	}
	add(&st->replaces, 1);
	if (nfd != slotfd[slot]) {
		/* no other fd number is ever opened: nfd is free or a slot */
		dup2(nfd, slotfd[slot]);
		close(nfd);
	}
}

static void do_close(struct fz *z)
{
	add(&st->closes, 1);
	close(slotfd[rnd(&z->rng) % NSLOT]);
}

static void do_dup2(struct fz *z)
{
	add(&st->dup2s, 1);
	dup2(slotfd[rnd(&z->rng) % NSLOT], slotfd[rnd(&z->rng) % NSLOT]);
}

static void action(struct fz *z);

static void do_fork(struct fz *z)
{
	int status = 0, i;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		/* Uses only the inherited fds, its copies of them, no locks. */
		z->in_child = true;
		chaos = 1;	/* it closes fds */
		alarm(10);	/* a read blocked on a shared file is no bug */
		for (i = 0; i < 40; i++)
			action(z);
		_exit(0);
	}
	add(&st->forks, 1);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;	/* SIGUSR1 at the end of the phase */
	if (!(WIFEXITED(status) && !WEXITSTATUS(status))) {
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
			add(&st->child_timeouts, 1);
		else
			viol("forked child: status %#x", status);
	}
}

static void action(struct fz *z)
{
	unsigned int p = rnd(&z->rng) % 1000;

	if (p < 170)
		do_arm(z);
	else if (p < 250)
		do_modify(z);
	else if (p < 330)
		do_cancel(z);
	else if (p < 380)
		do_query(z);
	else if (p < 390)
		do_api(z);
	else if (p < 470)
		do_batch(z);
	else if (p < 520)
		do_badcmd(z);
	else if (p < 760)
		do_read(z);
	else if (p < 810)
		do_poll(z);
	else if (p < 900)
		do_epoll(z);
	else if (p < 910)
		do_flip(z);
	else if (z->in_child)
		do_close(z);	/* its own table only */
	else if (!z->chaos_thread || p >= 950)
		return;
	else if (p < 920)
		do_fork(z);
	else if (p < 940 || !chaos)
		do_replace(z);
	else if (p < 945)
		do_close(z);
	else
		do_dup2(z);
}

/* ---- phase 1 ------------------------------------------------------------------ */

static void on_usr1(int sig)
{
	(void)sig;
}

static int setup_worker(struct fz *z, int id, uint64_t seed, bool chaos_thread)
{
	size_t rw = ((size_t)api0.out_max_batch * OP_SIZE + pagesz - 1) & ~(pagesz - 1);
	unsigned char *m;

	memset(z, 0, sizeof(*z));
	z->id = id;
	z->chaos_thread = chaos_thread;
	z->rng = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)id * 7919 + 1;
	/* [rw][guard][ro][guard] */
	m = mmap(NULL, rw + 3 * pagesz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	z->arena = m;
	z->rw_len = rw;
	z->guard = m + rw;
	z->ro = m + rw + pagesz;
	if (mprotect(z->guard, pagesz, PROT_NONE) ||
	    mprotect(z->ro, pagesz, PROT_READ) ||
	    mprotect(z->ro + pagesz, pagesz, PROT_NONE))
		return -1;
	z->evbuf = malloc(READ_EVENTS * EV_SIZE);
	z->ep = epoll_create1(EPOLL_CLOEXEC);
	if (!z->evbuf || z->ep < 0)
		return -1;
	return 0;
}

static void teardown_worker(struct fz *z)
{
	munmap(z->arena, z->rw_len + 3 * pagesz);
	free(z->evbuf);
	close(z->ep);
}

static void *worker_main(void *arg)
{
	struct fz *z = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		action(z);
		z->actions++;
	}
	__atomic_store_n(&z->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Interrupt the workers blocked longer than BLOCK_MAX_NS (all: @all). */
static void kick(bool all)
{
	uint64_t now = now_ns();
	int t;

	for (t = 0; t < opt.threads; t++) {
		uint64_t since = __atomic_load_n(&workers[t].block_since, __ATOMIC_RELAXED);

		if (__atomic_load_n(&workers[t].done, __ATOMIC_ACQUIRE))
			continue;
		if (all || (since && now - since > BLOCK_MAX_NS))
			pthread_kill(workers[t].tid, SIGUSR1);
	}
}

static int fuzz_process(int pidx, uint64_t deadline)
{
	int t, s, fails = 0;
	uint64_t end;

	chaos = pidx;
	for (s = NSHARED; s < NSLOT; s++) {
		int fd = open(DEV, O_RDWR | O_CLOEXEC | (s % 2 ? O_NONBLOCK : 0));

		/* park it on a fixed number, away from what open() hands out */
		if (fd < 0 || dup2(fd, 100 + s) < 0)
			return 1;
		close(fd);
		slotfd[s] = 100 + s;
	}
	for (t = 0; t < opt.threads; t++) {
		if (setup_worker(&workers[t], t, opt.seed + 1000 * pidx, !t))
			return 1;
	}
	for (t = 0; t < opt.threads; t++)
		if (pthread_create(&workers[t].tid, NULL, worker_main, &workers[t]))
			return 1;
	while (now_ns() < deadline) {
		pause_ns(20 * NSEC_PER_MSEC);
		kick(false);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	/* Bounded: every worker must come out within 30 s. */
	end = now_ns() + 30 * NSEC_PER_SEC;
	for (t = 0; t < opt.threads; t++) {
		while (!__atomic_load_n(&workers[t].done, __ATOMIC_ACQUIRE) && now_ns() < end) {
			kick(true);
			pause_ns(10 * NSEC_PER_MSEC);
		}
		if (!__atomic_load_n(&workers[t].done, __ATOMIC_ACQUIRE)) {
			viol("worker %d of process %d did not stop", t, pidx);
			fails++;
		}
	}
	if (fails)
		_exit(1);	/* the kernel tears the rest down */
	{
		char msg[256];
		int n = snprintf(msg, sizeof(msg), "%s# process %d: actions per thread", opt.indent,
				 pidx);

		for (t = 0; t < opt.threads; t++) {
			pthread_join(workers[t].tid, NULL);
			teardown_worker(&workers[t]);
			if (n < (int)sizeof(msg) - 24)
				n += snprintf(msg + n, sizeof(msg) - n, " %" PRIu64,
					      workers[t].actions);
		}
		msg[n++] = '\n';
		if (write(STDOUT_FILENO, msg, n) < 0)
			return 1;
	}
	for (s = 0; s < NSLOT; s++)
		close(slotfd[s]);
	return 0;
}

static void print_counts(const char *label, const uint64_t *res)
{
	char line[1024];
	int e, n = 0;

	for (e = 0; e < NERR; e++)
		if (res[e])
			n += snprintf(line + n, sizeof(line) - n, " %s%s %" PRIu64,
				      n ? "," : "", e ? errname(e) : "ok", res[e]);
	printf("%s# %s:%s\n", opt.indent, label, n ? line : " none");
}

static int test_no;

static bool tap(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s%sok %d ", opt.indent, ok ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok;
}

static bool phase_random(uint64_t secs_ns)
{
	uint64_t t0 = now_ns(), v0 = st->violations, el;
	pid_t pids[MAX_PROCS];
	int p, s, status;
	bool ok = true;

	/* the shared slots: inherited by every process */
	for (s = 0; s < NSHARED; s++) {
		int fd = open(DEV, O_RDWR | O_CLOEXEC | (s ? O_NONBLOCK : 0));

		if (fd < 0 || dup2(fd, 100 + s) < 0) {
			viol("open %s: %s", DEV, errname(errno));
			return tap(false, "fuzz: cannot open %s", DEV);
		}
		close(fd);
		slotfd[s] = 100 + s;
	}
	fflush(stdout);
	for (p = 0; p < opt.procs; p++) {
		pids[p] = fork();
		if (pids[p] < 0) {
			viol("fork: %s", errname(errno));
			opt.procs = p;
			break;
		}
		if (!pids[p])
			_exit(fuzz_process(p, t0 + secs_ns));
	}
	for (p = 0; p < opt.procs; p++) {
		if (waitpid(pids[p], &status, 0) != pids[p] ||
		    !WIFEXITED(status) || WEXITSTATUS(status)) {
			viol("fuzz process %d: status %#x", p, status);
			ok = false;
		}
	}
	for (s = 0; s < NSHARED; s++)
		close(slotfd[s]);
	el = now_ns() - t0;
	printf("%s# %d processes x %d threads, %.1f s, seed %" PRIu64 "\n", opt.indent,
	       opt.procs, opt.threads, el / 1e9, opt.seed);
	print_counts("ioctl results", st->ioctl_res);
	print_counts("read results", st->read_res);
	printf("%s# batches %" PRIu64 " (%" PRIu64 " records checked, %" PRIu64 " of max_batch, %"
	       PRIu64 " past it, %" PRIu64 " short), events %" PRIu64 ", polls %" PRIu64
	       ", epolls %" PRIu64 ", interrupted %" PRIu64 "\n",
	       opt.indent, st->batches, st->batch_records, st->batch_max, st->batch_e2big,
	       st->batch_short, st->events, st->polls, st->epolls, st->interrupts);
	printf("%s# fd games: %" PRIu64 " replaced, %" PRIu64 " closed, %" PRIu64 " dup2, %" PRIu64
	       " O_NONBLOCK flips, %" PRIu64 " forked children (%" PRIu64 " timed out)\n",
	       opt.indent, st->replaces, st->closes, st->dup2s, st->flips, st->forks,
	       st->child_timeouts);
	ok &= st->violations == v0 && st->ioctls > 0;
	return tap(ok, "fuzz random: %" PRIu64 " ioctls (%.0f/s), %" PRIu64 " reads, %" PRIu64
		   " events, %" PRIu64 " violations",
		   st->ioctls, st->ioctls / (el / 1e9), st->reads, st->events,
		   st->violations - v0);
}

/* ---- phase 2: close races ------------------------------------------------------- */

struct race {
	int fd;			/* the number being raced on */
	int ep;
	int entered;		/* atomic */
	ssize_t read_ret;
	int read_err;
	int ep_ret;
	uint32_t ep_events;
	long batch_ret;
	int batch_err;
	struct twheel_batch_op *ops;
	unsigned int nops;
	struct twheel_event evs[16];
};

static void *race_reader(void *arg)
{
	struct race *r = arg;

	__atomic_store_n(&r->entered, 1, __ATOMIC_RELEASE);
	r->read_ret = read(r->fd, r->evs, sizeof(r->evs));
	r->read_err = r->read_ret < 0 ? errno : 0;
	return NULL;
}

static void *race_waiter(void *arg)
{
	struct race *r = arg;
	struct epoll_event ev;

	r->ep_ret = epoll_wait(r->ep, &ev, 1, 200);
	r->ep_events = r->ep_ret > 0 ? ev.events : 0;
	return NULL;
}

static void *race_batcher(void *arg)
{
	struct race *r = arg;
	struct twheel_batch b = {
		.size = sizeof(b), .ops = (uintptr_t)r->ops,
		.count = r->nops, .op_size = OP_SIZE,
	};

	r->batch_ret = ioctl(r->fd, TWHEEL_IOC_BATCH, &b);
	r->batch_err = r->batch_ret < 0 ? errno : 0;
	return NULL;
}

/*
 * Who holds the user's timers: every open /dev/twheel file of every
 * process, with its fdinfo (timers, events).  Printed when a fresh file
 * stays at ENOSPC, to tell a file still held open from a charge that
 * outlives its files.
 */
static void print_twheel_holders(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;
	unsigned long files = 0, timers = 0;

	if (!proc)
		return;
	while ((p = readdir(proc))) {
		char path[640], link[64], line[128], comm[32] = "?";
		struct dirent *f;
		DIR *fds;
		FILE *fp;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", p->d_name);
		fp = fopen(path, "r");
		if (fp) {
			if (fgets(comm, sizeof(comm), fp))
				comm[strcspn(comm, "\n")] = 0;
			fclose(fp);
		}
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((f = readdir(fds))) {
			unsigned long t = 0, e = 0;
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%s/fd/%s", p->d_name, f->d_name);
			n = readlink(path, link, sizeof(link) - 1);
			if (n < 0)
				continue;
			link[n] = 0;
			if (strcmp(link, DEV))
				continue;
			snprintf(path, sizeof(path), "/proc/%s/fdinfo/%s", p->d_name, f->d_name);
			fp = fopen(path, "r");
			while (fp && fgets(line, sizeof(line), fp)) {
				if (!strncmp(line, "timers:", 7))
					t = strtoul(line + 7, NULL, 10);
				else if (!strncmp(line, "events:", 7))
					e = strtoul(line + 7, NULL, 10);
			}
			if (fp)
				fclose(fp);
			printf("%s# holder: pid %s (%s) fd %s: %lu timers, %lu events\n",
			       opt.indent, p->d_name, comm, f->d_name, t, e);
			files++;
			timers += t;
		}
		closedir(fds);
	}
	closedir(proc);
	printf("%s# holders: %lu open files, %lu timers (max_timers_per_user %" PRIu64 ")\n",
	       opt.indent, files, timers, (uint64_t)api0.out_max_timers_per_user);
}

/*
 * A file with a one-shot timer @delay_ms out, so a reader of it wakes.
 *
 * ENOSPC on a fresh file means the user's other files still hold the
 * per-user limit: the file of the round before lives until its reader
 * and batcher let go of it.  Wait for it, bounded (-w, 10 s by default,
 * longer on the slow kernels), and say how long it took; only a charge
 * that stays is a violation.  (The ENOSPC that once outlasted 60 s on
 * kcsan was the per-file limit: the round's batch, of the whole limit,
 * had landed on the reopened file first; print_twheel_holders() showed
 * it, and the batch now leaves room.)
 */
static int open_with_timer(uint64_t delay_ms, uint64_t ck)
{
	struct twheel_arm a = {
		.size = sizeof(a),
		.spec.expires = delay_ms * NSEC_PER_MSEC, .spec.cookie = ck,
	};
	int fd = open(DEV, O_RDWR | O_CLOEXEC);
	uint64_t t0 = now_ns(), waited;
	int err = 0;

	if (fd < 0)
		return fd;
	while (ioctl(fd, TWHEEL_IOC_ARM, &a)) {
		err = errno;
		if (err != ENOSPC ||
		    now_ns() - t0 > (uint64_t)opt.charge_wait * NSEC_PER_SEC) {
			viol("ARM on a fresh file: %s", errname(err));
			if (err == ENOSPC)
				print_twheel_holders();
			close(fd);
			return -1;
		}
		pause_ns(10 * NSEC_PER_MSEC);
	}
	waited = now_ns() - t0;
	if (err)
		printf("%s# ARM on a fresh file: ENOSPC for %" PRIu64 " ms\n", opt.indent,
		       (uint64_t)(waited / NSEC_PER_MSEC));
	return fd;
}

static bool join_within(pthread_t t, uint64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * NSEC_PER_MSEC;
	if (ts.tv_nsec >= (long)NSEC_PER_SEC) {
		ts.tv_sec++;
		ts.tv_nsec -= NSEC_PER_SEC;
	}
	return !pthread_timedjoin_np(t, NULL, &ts);
}

static bool race_once(struct fz *z, struct race *r, int variant)
{
	pthread_t tr, tw, tb;
	uint64_t ck = FZ_MAGIC << 48 | (rnd(&z->rng) & 0xffffffff);
	struct epoll_event e = { .events = EPOLLIN };
	unsigned int i;
	int other = -1;
	bool ok = true;

	r->fd = open_with_timer(20, ck);
	if (r->fd < 0)
		return false;
	r->ep = epoll_create1(EPOLL_CLOEXEC);
	epoll_ctl(r->ep, EPOLL_CTL_ADD, r->fd, &e);
	r->entered = 0;
	/*
	 * Within the limits, leaving room for the timers that wake the reader:
	 * the batch may land on the file reopened under its number (variant 2)
	 * before open_with_timer() arms that file's own timer, and a batch of
	 * the whole per-file limit would leave it ENOSPC for good.
	 */
	r->nops = 2048;
	if (api0.out_max_timers_per_fd - 1 < r->nops)
		r->nops = api0.out_max_timers_per_fd - 1;
	if (api0.out_max_timers_per_user / 2 < r->nops)
		r->nops = api0.out_max_timers_per_user / 2;
	for (i = 0; i < r->nops; i++)
		r->ops[i] = (struct twheel_batch_op){
			.op = TWHEEL_OP_ARM,
			.spec.expires = (5 + rnd(&z->rng) % 30) * NSEC_PER_MSEC,
			.spec.cookie = ck | (uint64_t)(i + 1) << 32,
		};
	if (variant == 1) {	/* dup2 onto it: that file wakes a reader too */
		other = open_with_timer(20, ck);
		if (other < 0)
			return false;
	}
	pthread_create(&tr, NULL, race_reader, r);
	pthread_create(&tw, NULL, race_waiter, r);
	pthread_create(&tb, NULL, race_batcher, r);
	/* vary the moment: right away, or once the reader is on its way */
	if (rnd(&z->rng) % 2)
		while (!__atomic_load_n(&r->entered, __ATOMIC_ACQUIRE))
			sched_yield();
	for (i = rnd(&z->rng) % 20000; i; i--)
		__asm__ __volatile__("" ::: "memory");
	switch (variant) {
	case 0:
		close(r->fd);
		break;
	case 1:
		dup2(other, r->fd);
		close(other);
		break;
	default: {
		/* close and reopen: the number now names a new file */
		int nfd;

		close(r->fd);
		nfd = open_with_timer(20, ck);
		if (nfd >= 0 && nfd != r->fd) {
			dup2(nfd, r->fd);
			close(nfd);
		}
		break;
	}
	}
	/* The reader's file lives while it reads: a timer fires for it. */
	if (!join_within(tr, 10000)) {
		viol("close race %d: reader still blocked after 10 s", variant);
		pthread_kill(tr, SIGUSR1);
		pthread_join(tr, NULL);
		ok = false;
	}
	pthread_join(tw, NULL);
	pthread_join(tb, NULL);
	add(&st->race_iters, 1);
	if (r->read_ret > 0) {
		uint64_t seen = now_ns();

		add(&st->race_read_events, 1);
		if (r->read_ret % EV_SIZE)
			viol("close race: read returned %zd", r->read_ret);
		for (i = 0; i < r->read_ret / EV_SIZE; i++) {
			check_event(&r->evs[i], seen);
			if ((r->evs[i].cookie & 0xffffffff) != (ck & 0xffffffff))
				viol("close race: foreign event cookie %#" PRIx64,
				     (uint64_t)r->evs[i].cookie);
		}
	} else if (r->read_err == EBADF) {
		add(&st->race_read_ebadf, 1);
	} else {
		viol("close race %d: read: %s", variant, errname(r->read_err));
		ok = false;
	}
	if (r->batch_ret == (long)r->nops)
		add(&st->race_batch_done, 1);
	else if (r->batch_err == EBADF)
		add(&st->race_batch_ebadf, 1);
	else
		viol("close race %d: batch returned %ld (%s)", variant, r->batch_ret,
		     errname(r->batch_err));
	if (r->ep_ret < 0 || (r->ep_events & ~(uint32_t)(EPOLLIN | EPOLLRDNORM)))
		viol("close race: epoll_wait %d events %#x", r->ep_ret, r->ep_events);
	else if (r->ep_ret > 0)
		add(&st->race_epoll_ready, 1);
	close(r->ep);
	close(r->fd);	/* all timers and events of the file(s) in flight */
	return ok;
}

static bool phase_races(uint64_t secs_ns)
{
	uint64_t t0 = now_ns(), v0 = st->violations;
	struct race r = { 0 };
	struct fz z = { .rng = opt.seed ^ 0x5eed };
	int v = 0;

	r.ops = calloc(2048, OP_SIZE);
	if (!r.ops)
		return tap(false, "fuzz close races: out of memory");
	while (now_ns() - t0 < secs_ns)
		race_once(&z, &r, v++ % 3);
	free(r.ops);
	printf("%s# %" PRIu64 " rounds: reader got events %" PRIu64 ", EBADF %" PRIu64
	       "; batch done %" PRIu64 ", EBADF %" PRIu64 "; epoll ready %" PRIu64 "\n",
	       opt.indent, st->race_iters, st->race_read_events, st->race_read_ebadf,
	       st->race_batch_done, st->race_batch_ebadf, st->race_epoll_ready);
	return tap(st->violations == v0 && st->race_iters > 0,
		   "fuzz close races: %" PRIu64 " rounds of read/epoll_wait/batch vs close/dup2, %"
		   PRIu64 " violations", st->race_iters, st->violations - v0);
}

/* ---- phase 3: sharing through fork; events put back ------------------------------- */

#define SHARE_N		200

/* Read until @n events with cookies base+0..n-1 came, each once. */
static bool read_exactly(int fd, uint64_t base, int n, const char *who)
{
	static unsigned char seen_idx[SHARE_N];
	struct twheel_event ev[64];
	uint64_t deadline = now_ns() + 20 * NSEC_PER_SEC;
	int got = 0, i;

	memset(seen_idx, 0, sizeof(seen_idx));
	while (got < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t len;

		if (now_ns() > deadline) {
			viol("%s: %d of %d events after 20 s", who, got, n);
			return false;
		}
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		len = read(fd, ev, sizeof(ev));
		if (len < 0 && errno == EAGAIN)
			continue;
		if (len <= 0 || len % EV_SIZE) {
			viol("%s: read returned %zd (%s)", who, len, errname(errno));
			return false;
		}
		for (i = 0; i < len / (ssize_t)EV_SIZE; i++) {
			uint64_t k = ev[i].cookie - base;

			check_event(&ev[i], now_ns());
			add(&st->share_events, 1);
			if (k >= (uint64_t)n || seen_idx[k]++) {
				viol("%s: unexpected event, cookie %#" PRIx64, who,
				     (uint64_t)ev[i].cookie);
				return false;
			}
			got++;
		}
	}
	return true;
}

static bool arm_many(int fd, uint64_t base, int n, uint64_t *handles)
{
	int i;

	for (i = 0; i < n; i++) {
		struct twheel_arm a = {
			.size = sizeof(a),
			.spec.expires = (1 + i % 40) * NSEC_PER_MSEC,
			.spec.cookie = base + i,
		};

		if (ioctl(fd, TWHEEL_IOC_ARM, &a)) {
			viol("ARM: %s", errname(errno));
			return false;
		}
		if (handles)
			handles[i] = a.out_handle;
	}
	return true;
}

static bool child_ok(pid_t pid)
{
	int status;

	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* NULL, out of sight of the compiler's checks of read()'s arguments */
static __attribute__((noipa)) void *null_ptr(void)
{
	return NULL;
}

static bool phase_share(void)
{
	uint64_t v0 = st->violations, base = FZ_MAGIC << 48 | 0x1000, handles[SHARE_N], deadline;
	struct twheel_event ev[16];
	unsigned char *m;
	pid_t pid;
	int fd, i, e1, e2;
	bool ok = true;

	fflush(stdout);
	fd = open(DEV, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return tap(false, "fuzz sharing: open: %s", errname(errno));

	/* 1. the parent arms, a child reads them all from the shared file */
	if (!arm_many(fd, base, SHARE_N, handles))
		ok = false;
	pid = fork();
	if (!pid)
		_exit(read_exactly(fd, base, SHARE_N, "child reading the parent's timers") ? 0 : 1);
	if (pid < 0 || !child_ok(pid)) {
		viol("child reading the parent's timers failed");
		ok = false;
	}
	/* read by the child: released, and nothing left for the parent */
	if (read(fd, ev, sizeof(ev)) != -1 || errno != EAGAIN) {
		viol("parent: read after the child read everything did not get EAGAIN");
		ok = false;
	}
	for (i = 0; i < SHARE_N; i++) {
		struct twheel_cancel c = { .size = sizeof(c), .handle = handles[i] };

		if (!ioctl(fd, TWHEEL_IOC_CANCEL, &c) || errno != ENOENT) {
			viol("CANCEL of a timer whose event was read: %s",
			     errname(errno));
			ok = false;
			break;
		}
	}

	/* 2. a child arms on the shared file and exits; the parent reads */
	pid = fork();
	if (!pid)
		_exit(arm_many(fd, base, SHARE_N, NULL) ? 0 : 1);
	if (pid < 0 || !child_ok(pid) ||
	    !read_exactly(fd, base, SHARE_N, "parent reading a child's timers")) {
		viol("parent reading a child's timers failed");
		ok = false;
	}

	/* 3. a child exits with timers, periodic ones included, on its own file */
	pid = fork();
	if (!pid) {
		int cfd = open(DEV, O_RDWR | O_CLOEXEC);
		struct twheel_arm a = {
			.size = sizeof(a), .spec.period = api0.out_tick_ns,
			.spec.cookie = FZ_MAGIC << 48,
		};

		if (cfd < 0 || ioctl(cfd, TWHEEL_IOC_ARM, &a) ||
		    !arm_many(cfd, base, SHARE_N, NULL))
			_exit(1);
		pause_ns(20 * NSEC_PER_MSEC);	/* let some fire: events queued at exit */
		_exit(0);
	}
	if (pid < 0 || !child_ok(pid)) {
		viol("child exiting with timers failed");
		ok = false;
	}

	/* 4. events whose copy-out failed are put back, not lost */
	if (!arm_many(fd, base, 10, NULL))
		ok = false;
	for (deadline = now_ns() + 20 * NSEC_PER_SEC;;) {	/* until all 10 wait */
		char info[256] = "";
		char path[64];
		FILE *f;

		if (now_ns() > deadline) {
			viol("10 timers of 1 to 10 ms did not fire within 20 s");
			ok = false;
			break;
		}
		pause_ns(2 * NSEC_PER_MSEC);
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
		f = fopen(path, "r");
		if (f) {
			size_t n = fread(info, 1, sizeof(info) - 1, f);

			info[n] = 0;
			fclose(f);
		}
		if (strstr(info, "events:\t10\n"))
			break;
	}
	m = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED || mprotect(m + pagesz, pagesz, PROT_NONE)) {
		viol("mmap: %s", errname(errno));
		ok = false;
	} else {
		e1 = read(fd, null_ptr(), 10 * EV_SIZE) < 0 ? errno : 0;
		/* room for 3 of the 10: the chunk does not fit */
		e2 = read(fd, m + pagesz - 3 * EV_SIZE, 10 * EV_SIZE) < 0 ? errno : 0;
		if (e1 != EFAULT || e2 != EFAULT) {
			viol("read into bad buffers: %s, %s", errname(e1), errname(e2));
			ok = false;
		}
		munmap(m, 2 * pagesz);
		if (!read_exactly(fd, base, 10, "reading events put back after EFAULT"))
			ok = false;
	}
	close(fd);
	ok &= st->violations == v0;
	return tap(ok, "fuzz sharing: %" PRIu64 " events read across fork(), %s",
		   st->share_events, "exit with timers, events put back after EFAULT");
}

static void bad_usage(void)
{
	fprintf(stderr, "usage: %s [-t SECONDS] [-s SEED] [-j THREADS] [-p PROCS] [-i] %s\n",
		"twheel_fuzz", "[-w CHARGE_WAIT_SECONDS]");
	exit(2);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };	/* no SA_RESTART */
	uint64_t total;
	bool ok = true;
	int c, fd;

	opt.seed = (uint64_t)time(NULL);
	while ((c = getopt(argc, argv, "t:s:j:p:iw:")) != -1) {
		switch (c) {
		case 't':
			opt.seconds = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			opt.charge_wait = strtoul(optarg, NULL, 0);
			break;
		case 's':
			opt.seed = strtoull(optarg, NULL, 0);
			break;
		case 'j':
			opt.threads = atoi(optarg);
			break;
		case 'p':
			opt.procs = atoi(optarg);
			break;
		case 'i':
			opt.indent = "    ";
			break;
		default:
			bad_usage();
		}
	}
	if (!opt.seconds || opt.threads < 1 || opt.threads > MAX_THREADS ||
	    opt.procs < 1 || opt.procs > MAX_PROCS)
		bad_usage();
	pagesz = sysconf(_SC_PAGESIZE);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	st = mmap(NULL, sizeof(*st), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED) {
		perror("twheel_fuzz: mmap");
		return 2;
	}
	printf("%sTAP version 13\n%s1..3\n", opt.indent, opt.indent);
	fd = open(DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || _test_ioctl_api(fd, &api0)) {
		printf("%sBail out! %s: %s\n", opt.indent, DEV, strerror(errno));
		return 1;
	}
	close(fd);
	printf("%s# seed %" PRIu64 "; tick %" PRIu64 " ns, max_batch %u, max_timers_per_fd %" PRIu64
	       ", max_timers_per_user %" PRIu64 "\n", opt.indent, opt.seed,
	       (uint64_t)api0.out_tick_ns, api0.out_max_batch, (uint64_t)api0.out_max_timers_per_fd,
	       (uint64_t)api0.out_max_timers_per_user);
	if (api0.out_abi_version != TWHEEL_ABI_VERSION || api0.out_event_size != EV_SIZE ||
	    !api0.out_max_batch || !api0.out_tick_ns || !api0.out_max_timers_per_fd ||
	    !api0.out_max_timers_per_user) {
		printf("%sBail out! unexpected TWHEEL_IOC_API answer\n", opt.indent);
		return 1;
	}
	total = opt.seconds * NSEC_PER_SEC;
	ok &= phase_random(total * 7 / 10);
	ok &= phase_races(total * 3 / 10);
	ok &= phase_share();
	return ok ? 0 : 1;
}
