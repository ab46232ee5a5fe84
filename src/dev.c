// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the /dev/twheel device - file contexts, handles and events
 *
 * Every open file gets a context (struct twheel_ctx) that owns its timers.
 * A timer (struct twheel_utimer) is a twheel_timer on the default wheel,
 * armed on the base of the CPU whose thread issued the ioctl (see
 * Documentation/design.rst for why), plus what userspace needs back: its
 * cookie and the state of its pending event.
 *
 * The timer table, events and batches: the DOC block below, which
 * Documentation/design.rst includes.
 *
 * Locking, lifetimes and what QUERY and CANCEL report mid-callback: the
 * DOC block below, which Documentation/design.rst includes.
 */

/**
 * DOC: Timer table, events and batches
 *
 * The timer table: a file's timers live in page-sized chunks (struct
 * twheel_uchunk), allocated as the file needs them, charged to the memory
 * cgroup of the task whose call allocates them (as a pipe's buffers are) and
 * kept until the file is closed.  An entry's index in the table is the lower
 * half of its handle; its generation, bumped each time the entry is freed,
 * the upper half, so a stale handle names a newer timer only after its entry
 * was freed 2^32 times.  Free entries form a stack through their @next link,
 * so a freed entry, still in the cache, is the next one used.  A timer finds
 * its file through the chunk it sits in (chunks are page-aligned), and the
 * state that only periodic timers need (period, slack, overruns) sits in a
 * side array of the chunk, allocated with its first periodic timer: a
 * one-shot timer costs sizeof(struct twheel_utimer) plus its share of the
 * chunk header (82 bytes on x86-64 without lockdep: the time it fired stays
 * in the stopped timer, see twheel_fire_time()), a periodic one 48 bytes
 * more.
 *
 * Events: the callback allocates nothing.  It links the timer itself onto
 * the context's ready list (or, if its previous event is still unread,
 * counts an overrun), so no expiration can be dropped for lack of memory.
 * The list is linked by table index, not by pointers, to keep entries
 * small.  An event wakes the file's waiters when the list was empty or
 * when somebody polled the file since the last wake-up; otherwise every
 * waiter has been woken and not yet looked, and the event joins what that
 * wake-up announced.  So a tick that queues a hundred events on a file
 * wakes it once, not a hundred times (each wake-up of an epoll-watched
 * file runs epoll's callback under two locks), and an edge-triggered
 * epoll watcher still gets an edge for every event that arrives after it
 * looked.  read() takes events off that list and copies them out through
 * a buffer of the file, so it allocates nothing either.  A one-shot timer
 * ends when its event has been copied out: until then a flag hides it
 * from every lookup by handle, so read() frees the entry it took without
 * looking it up again.  A periodic one re-arms from its callback,
 * counting the periods a late tick skipped as overruns.
 *
 * The ioctls: one table (twheel_ioctl_ops) gives each command its
 * structure's size, the size of its first version and its handler; one
 * copy-in extends or checks the caller's structure (iommufd's
 * copy_struct_from_user() scheme) and the handler copies its answer out.
 *
 * Batches work on runs of up to 32 records.  A run is copied in, its
 * handles are looked up (a CANCEL claims its timer, so that a later record
 * of the batch finds it gone), its ARMs are charged to the user at once
 * and take table entries; then the whole run is armed, stopped and
 * re-armed under one lock of this CPU's base and one clock reading
 * (facility.c's twheel_batch_begin()), and only what userspace needs is
 * written back, in one user access window per run: the handles of new
 * timers and the results of records that failed.  A timer on another
 * base is taken over to this one first, if that base's lock is free
 * (twheel_batch_take()).  What cannot be done under the run's lock -- a
 * timer on a base another CPU holds, one whose callback runs, a MODIFY
 * whose timer has an event to withdraw -- takes the single-timer path
 * after it.  Near the per-user limit, where a CANCEL must give room
 * to a later ARM, the run is processed one record at a time.  A batch of
 * MODIFY and CANCEL records allocates nothing, but for the side array of
 * periodic entries of a table chunk the first time one of its timers is
 * made periodic (twheel_ut_prepare()).
 */

/**
 * DOC: Device locking and lifetimes
 *
 * Locking: the file's @mutex serialises the ioctls and read()'s bookkeeping,
 * so a handle cannot be freed under a concurrent operation; read() drops it
 * while it copies events out, so a slow-faulting buffer stalls no ioctl.  An
 * ioctl holds it while it copies records in and out, so its waiters take it
 * killably: a fatal signal ends a task stuck behind another's page
 * fault.  @lock (taken in the callback, softirq) protects the ready list, the
 * event fields and the table's chunk array (the callback follows ready-list
 * links through it; the array is only replaced, under the mutex and @lock,
 * when it grows).  Order: @read_mutex (readers only) -> mutex -> lock -> the
 * lock of the timer's wheel base, and lock -> the wait queue's lock
 * (wake-ups happen under @lock).  Cancel and modify stop the timer with only
 * the mutex held: in a batch under its base's lock when its callback is not
 * running, else with twheel_timer_shutdown_sync()/cancel_sync(), so a
 * running callback finishes first and cannot re-queue a withdrawn event.
 *
 * Lifetimes: release() runs when no ioctl or read() can, and stops every
 * live timer before freeing the table and the context.  A one-shot timer
 * is hidden from the ioctls once read() took its event and is freed when
 * read() has delivered it, possibly while its callback is still
 * returning; the callback therefore touches neither the timer nor the
 * context after dropping @lock (it wakes readers before), and read() can
 * only take the event after that point.  The freed entry is not set up
 * for a new timer before the tick handler is done with the old one
 * (twheel_ut_alloc()), as __twheel_timer_setup() requires.
 *
 * What QUERY and CANCEL report about a timer whose callback runs: a
 * periodic timer is armed until it is cancelled, so QUERY shows it
 * PENDING throughout (due now, until its callback re-armed it) and CANCEL
 * reports TWHEEL_CANCEL_PENDING; a one-shot timer is PENDING until its
 * callback queued the event, then has that EVENT.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/highmem.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/twheel.h>
#include <uapi/linux/twheel.h>

#include "compat.h"
#include "twheel_internal.h"

/* Limits and sizes of the userspace API. */
#define TWHEEL_MAX_BATCH	65536	/* records per TWHEEL_IOC_BATCH */
#define TWHEEL_BATCH_RUN	32	/* records per lock hold in a batch */
#define TWHEEL_READ_CHUNK	32	/* events per copy in read() */

static unsigned long twheel_max_timers_per_fd;
static unsigned long twheel_max_timers_per_user;

/**
 * struct twheel_inst - a wheel of the device other than the default one
 * @node:    link in twheel_insts
 * @wheel:   the instance, one base per possible CPU like the default's
 * @clockid: its clock
 * @tick_ns: its tick
 * @users:   files whose timers run on it
 *
 * Files that chose the same clock and tick with TWHEEL_IOC_SETUP share
 * one; it is created for the first and destroyed with the last.  All of
 * it is under twheel_insts_mutex.
 */
struct twheel_inst {
	struct list_head node;
	struct twheel *wheel;
	clockid_t clockid;
	u64 tick_ns;
	unsigned int users;
};

static LIST_HEAD(twheel_insts);
static DEFINE_MUTEX(twheel_insts_mutex);
static unsigned int twheel_nr_insts;
static unsigned int twheel_max_insts;
/* The default wheel's parameters: the others differ in clock or tick. */
static struct twheel_attr twheel_dflt;

/**
 * struct twheel_user - timers of one user over all of its files
 * @node:   link in twheel_users
 * @uid:    the user (the opener's effective uid)
 * @ref:    files of this user that are open
 * @timers: live timers of this user
 */
struct twheel_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_long_t timers;
};

/* Users with an open file, by uid; lookups only at open and release. */
static DEFINE_HASHTABLE(twheel_users, 6);
static DEFINE_MUTEX(twheel_users_mutex);

struct twheel_uchunk;

/* What became of a batch record (struct twheel_batch_run::state). */
enum twheel_rec_state {
	TWHEEL_REC_FAILED,	/* @ret is its errno */
	TWHEEL_REC_TODO,	/* checked, timer looked up or taken */
	TWHEEL_REC_DONE,	/* armed or re-armed */
	TWHEEL_REC_STOPPED,	/* CANCEL: stopped, to be freed */
	TWHEEL_REC_SLOW,	/* for the single-timer path */
};

/**
 * struct twheel_batch_run - a run of batch records, and what became of them
 * @ops:   the records as userspace gave them (extended to the kernel's size)
 * @ut:    the timer of each record (new for ARM)
 * @ret:   the errno of each failed record (0 for a success), to report
 * @state: enum twheel_rec_state of each record
 * @e2big: the records with unknown fields set, to fail with E2BIG (their
 *         @ops entry is zeroed): a flag apart, as every value of an
 *         operation code may come from userspace
 * @freed: timers its CANCELs freed and not yet uncharged
 */
struct twheel_batch_run {
	struct twheel_batch_op ops[TWHEEL_BATCH_RUN];
	struct twheel_utimer *ut[TWHEEL_BATCH_RUN];
	int ret[TWHEEL_BATCH_RUN];
	u8 state[TWHEEL_BATCH_RUN];
	DECLARE_BITMAP(e2big, TWHEEL_BATCH_RUN);
	unsigned int freed;
};

/**
 * struct twheel_ctx - the state of one open /dev/twheel file
 * @mutex:    serialises ioctls and read()
 * @lock:     protects the ready list, the event fields and @chunks
 * @ready_head: index + 1 of the oldest timer with an unread event, or 0
 * @ready_tail: index + 1 of the newest one, or 0
 * @nready:   length of the ready list
 * @wq:       readers and pollers wait here for the ready list to fill
 * @polled:   poll() looked at the file since the last wake-up (under @lock)
 * @chunks:   the timer table, @nr_chunks of @max_chunks used
 * @nr_chunks: chunks allocated
 * @max_chunks: size of the @chunks array
 * @free:     index + 1 of the top of the free-entry stack, or 0
 * @gen:      generation of the entries of the next chunk
 * @count:    live timers
 * @wheel:    the wheel the timers run on
 * @tick_ns:  its tick length
 * @clockid:  its clock
 * @inst:     the shared instance @wheel is, NULL for the default wheel
 * @user:     the opener, charged for every timer of the file
 * @batch:    a batch's run of records: part of the file, so that a batch
 *            of MODIFY and CANCEL records allocates nothing
 * @read_mutex: serialises readers, owners of @revs, @rseqs and @ruts
 * @revs:     events on their way out, part of the file for the same reason
 * @rseqs:    the arming of each periodic one in @revs
 * @ruts:     the timer of each event in @revs
 * @ucmds:    io_uring commands pending until their timer fires, by
 *            table index (TWHEEL_ARM_URING_EXPIRY)
 */
struct twheel_ctx {
	struct mutex mutex;	/* serialises ioctls and read() */
	spinlock_t lock;	/* ready list, event fields; softirq-safe */
	u32 ready_head;
	u32 ready_tail;
	unsigned long nready;
	wait_queue_head_t wq;
	bool polled;
	struct twheel_uchunk **chunks;
	u32 nr_chunks;
	u32 max_chunks;
	u32 free;
	u32 gen;
	unsigned long count;
	struct twheel *wheel;
	u64 tick_ns;
	clockid_t clockid;
	struct twheel_inst *inst;
	struct twheel_user *user;
	struct twheel_batch_run batch;
	struct mutex read_mutex;	/* serialises readers */
	struct twheel_event revs[TWHEEL_READ_CHUNK];
	u32 rseqs[TWHEEL_READ_CHUNK];
	struct twheel_utimer *ruts[TWHEEL_READ_CHUNK];
	struct xarray ucmds;
};

/* struct twheel_utimer flags, changed under the mutex */
#define TWHEEL_UT_LIVE		BIT(0)	/* a timer: its handle is valid */
#define TWHEEL_UT_PERIODIC	BIT(1)	/* has a period (side entry) */
#define TWHEEL_UT_DELIVERING	BIT(2)	/* one-shot event taken by read() */
#define TWHEEL_UT_DELIVERED	BIT(3)	/* free; its callback may be returning */
#define TWHEEL_UT_URING		BIT(4)	/* its expiry completes a command */

/**
 * struct twheel_utimer - a timer created through /dev/twheel
 * @timer:    the wheel timer
 * @cookie:   user cookie
 * @next:     ready list (index + 1 of the next, 0 at the tail) while
 *            @queued; free stack while not live
 * @prev:     ready list: index + 1 of the previous, 0 at the head
 * @gen:      generation: the upper half of the handle
 * @flags:    TWHEEL_UT_* (under the mutex)
 * @queued:   on the ready list (under @lock; read by mutex holders
 *            while the callback cannot run)
 * @claimed:  taken by a CANCEL record of the batch being processed, so
 *            that later records of the batch find it gone (mutex)
 *
 * A one-shot timer's event reports its own expiry and fire time, which
 * the stopped timer keeps (twheel_fire_time()); the rest of a periodic
 * timer's state is in its struct twheel_uperiodic.  80 bytes on 64-bit:
 * 50 to a page.
 */
struct twheel_utimer {
	struct twheel_timer timer;
	u64 cookie;
	u32 next;
	u32 prev;
	u32 gen;
	u8 flags;
	u8 queued;
	u8 claimed;
};

/**
 * struct twheel_uperiodic - what only a periodic timer needs
 * @period:     ns
 * @slack:      ns, for the re-arms
 * @ev_expires: expiry reported by the unread event
 * @ev_fired:   when the unread event fired (the timer is armed again)
 * @overrun:    expirations merged into the unread event
 * @seq:        bumped by every MODIFY, so that read() can tell that an
 *              event it took is of an older arming
 */
struct twheel_uperiodic {
	u64 period;
	u64 slack;
	ktime_t ev_expires;
	ktime_t ev_fired;
	u64 overrun;
	u32 seq;
};

/**
 * struct twheel_uchunk - a page of timer table entries
 * @ctx:      the file
 * @periodic: side entries for periodic timers, or NULL before the first
 * @first:    table index of @timers[0]
 * @timers:   the entries
 */
struct twheel_uchunk {
	struct twheel_ctx *ctx;
	struct twheel_uperiodic *periodic;
	u32 first;
	struct twheel_utimer timers[];
};

#define TWHEEL_UCHUNK_TIMERS \
	((PAGE_SIZE - sizeof(struct twheel_uchunk)) / sizeof(struct twheel_utimer))

static struct twheel_uchunk *twheel_ut_chunk(const struct twheel_utimer *ut)
{
	return (struct twheel_uchunk *)((unsigned long)ut & PAGE_MASK);
}

static u32 twheel_ut_index(const struct twheel_utimer *ut)
{
	struct twheel_uchunk *c = twheel_ut_chunk(ut);

	return c->first + (ut - c->timers);
}

static u64 twheel_ut_handle(const struct twheel_utimer *ut)
{
	return (u64)ut->gen << 32 | (twheel_ut_index(ut) + 1);
}

static struct twheel_uperiodic *twheel_ut_periodic(struct twheel_utimer *ut)
{
	struct twheel_uchunk *c = twheel_ut_chunk(ut);

	return &c->periodic[ut - c->timers];
}

/* Entry @pos (index + 1, non-zero) of the table; mutex or @lock held. */
static struct twheel_utimer *twheel_ut_at(struct twheel_ctx *ctx, u32 pos)
{
	u32 i = pos - 1;

	return &ctx->chunks[i / TWHEEL_UCHUNK_TIMERS]->timers[i % TWHEEL_UCHUNK_TIMERS];
}

/* Ready list operations, under @ctx->lock. */
static void twheel_ready_add(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	u32 pos = twheel_ut_index(ut) + 1;

	ut->next = 0;
	ut->prev = ctx->ready_tail;
	if (ctx->ready_tail)
		twheel_ut_at(ctx, ctx->ready_tail)->next = pos;
	else
		ctx->ready_head = pos;
	ctx->ready_tail = pos;
	WRITE_ONCE(ut->queued, 1);
	ctx->nready++;
}

static void twheel_ready_add_head(struct twheel_ctx *ctx,
				  struct twheel_utimer *ut)
{
	u32 pos = twheel_ut_index(ut) + 1;

	ut->prev = 0;
	ut->next = ctx->ready_head;
	if (ctx->ready_head)
		twheel_ut_at(ctx, ctx->ready_head)->prev = pos;
	else
		ctx->ready_tail = pos;
	ctx->ready_head = pos;
	WRITE_ONCE(ut->queued, 1);
	ctx->nready++;
}

static void twheel_ready_del(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	if (ut->prev)
		twheel_ut_at(ctx, ut->prev)->next = ut->next;
	else
		ctx->ready_head = ut->next;
	if (ut->next)
		twheel_ut_at(ctx, ut->next)->prev = ut->prev;
	else
		ctx->ready_tail = ut->prev;
	WRITE_ONCE(ut->queued, 0);
	ctx->nready--;
}

/* Take the first timer, @ut, off the ready list. */
static void twheel_ready_pop(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	ctx->ready_head = ut->next;
	if (ut->next)
		twheel_ut_at(ctx, ut->next)->prev = 0;
	else
		ctx->ready_tail = 0;
	WRITE_ONCE(ut->queued, 0);
	ctx->nready--;
}

/* Wake the file's readers and pollers; they have not looked since. */
static void twheel_wake_readers(struct twheel_ctx *ctx)
{
	lockdep_assert_held(&ctx->lock);
	ctx->polled = false;
	wake_up_interruptible_poll(&ctx->wq, EPOLLIN | EPOLLRDNORM);
}

#ifdef TWHEEL_HAVE_URING_EXPIRY
static void twheel_uring_expired(struct twheel_ctx *ctx,
				 struct twheel_utimer *ut);
static bool twheel_uring_drop(struct twheel_ctx *ctx, struct twheel_utimer *ut);
#else
static void twheel_uring_expired(struct twheel_ctx *ctx,
				 struct twheel_utimer *ut)
{
}

static bool twheel_uring_drop(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	return false;
}
#endif
#ifdef TWHEEL_HAVE_URING_MSHOT
static bool twheel_uring_mshot_fired(struct twheel_ctx *ctx,
				     struct twheel_utimer *ut);
#else
static bool twheel_uring_mshot_fired(struct twheel_ctx *ctx,
				     struct twheel_utimer *ut)
{
	return false;
}
#endif

static void twheel_utimer_fire(struct twheel_timer *timer)
{
	struct twheel_utimer *ut = container_of(timer, struct twheel_utimer, timer);
	struct twheel_ctx *ctx = twheel_ut_chunk(ut)->ctx;
	struct twheel_uperiodic *p = NULL;
	ktime_t expires = 0, now = 0;
	bool wake = false, fresh;

	/*
	 * Set while the timer was stopped, as TWHEEL_UT_PERIODIC is.  A
	 * periodic one is a multishot command's: its expiries are recorded
	 * as read()'s are, but for the command instead of the ready list.
	 */
	if ((ut->flags & (TWHEEL_UT_URING | TWHEEL_UT_PERIODIC)) ==
	    TWHEEL_UT_URING) {
		twheel_uring_expired(ctx, ut);
		return;
	}
	/*
	 * Set while the timer is stopped; it cannot change while we run.  A
	 * one-shot timer keeps its expiry and fire time for read() to take.
	 */
	if (ut->flags & TWHEEL_UT_PERIODIC) {
		p = twheel_ut_periodic(ut);
		expires = twheel_timer_expires(timer);
		now = twheel_fire_time(timer);
	}

	spin_lock(&ctx->lock);
	if (ut->flags & TWHEEL_UT_URING)
		fresh = twheel_uring_mshot_fired(ctx, ut);
	else
		fresh = !ut->queued;
	if (fresh) {
		if (p) {
			p->ev_expires = expires;
			p->ev_fired = now;
			p->overrun = 0;
		}
		/* See "Events" above: who could still be waiting for it. */
		if (!(ut->flags & TWHEEL_UT_URING)) {
			wake = !ctx->ready_head || ctx->polled;
			twheel_ready_add(ctx, ut);
		}
	} else if (p) {
		p->overrun++;
	}
	if (p) {
		/*
		 * Periods skipped by a late tick are overruns, not bursts.
		 * Rarely any: spare the division then.
		 */
		u64 late = ktime_sub(now, expires);
		u64 missed = late < p->period ? 0 : div64_u64(late, p->period);

		p->overrun += missed;
		/*
		 * Saturate: with a period near KTIME_MAX the sum wraps, and a
		 * negative expiry would be refused, leaving the timer unarmed.
		 */
		expires = ktime_add_safe(expires,
					 ns_to_ktime((missed + 1) * p->period));
		/*
		 * Armed when we return, under the base lock the tick handler
		 * takes again then.  A CANCEL's shutdown drops it; a MODIFY's
		 * cancel_sync cancels it after we returned.
		 */
		twheel_timer_restart(timer, expires, p->slack, TWHEEL_MODE_ABS);
	}
	/*
	 * Wake with the lock held.  Once it is dropped, read() may take the
	 * event and free a one-shot timer, and then close() the file, whose
	 * release() frees @ctx without waiting for this callback (the timer is
	 * no longer live): nothing of either may be touched after the unlock.
	 */
	if (wake)
		twheel_wake_readers(ctx);
	spin_unlock(&ctx->lock);
	twheel_delay(TWHEEL_DELAY_EVENT_QUEUED);
}

/* Make room for one more chunk in the table. */
static int twheel_table_grow(struct twheel_ctx *ctx)
{
	struct twheel_uchunk **chunks, **old;
	u32 max;

	if (ctx->nr_chunks < ctx->max_chunks)
		return 0;
	max = max(ctx->max_chunks * 2, 16U);
	if (max > U32_MAX / TWHEEL_UCHUNK_TIMERS)
		return -ENOSPC;
	chunks = kvmalloc_array(max, sizeof(*chunks), GFP_KERNEL_ACCOUNT);
	if (!chunks)
		return -ENOMEM;
	spin_lock_bh(&ctx->lock);
	old = ctx->chunks;
	if (old)
		memcpy(chunks, old, ctx->nr_chunks * sizeof(*chunks));
	ctx->chunks = chunks;
	ctx->max_chunks = max;
	spin_unlock_bh(&ctx->lock);
	kvfree(old);
	return 0;
}

/* A new chunk, its entries pushed on the free stack lowest index on top. */
static int twheel_table_add_chunk(struct twheel_ctx *ctx)
{
	struct twheel_uchunk *c;
	u32 i;
	int ret;

	ret = twheel_table_grow(ctx);
	if (ret)
		return ret;
	/*
	 * Page-aligned, so that a timer finds its chunk by masking its
	 * address: kmalloc() aligns power-of-two sizes naturally (and, unlike
	 * the page allocator, is seen by failslab and kmemleak).
	 */
	c = kzalloc(PAGE_SIZE, GFP_KERNEL_ACCOUNT);
	if (!c)
		return -ENOMEM;
	if (WARN_ON_ONCE(!PAGE_ALIGNED(c))) {
		kfree(c);
		return -ENOMEM;
	}
	c->ctx = ctx;
	c->first = ctx->nr_chunks * TWHEEL_UCHUNK_TIMERS;
	for (i = TWHEEL_UCHUNK_TIMERS; i--; ) {
		c->timers[i].gen = ctx->gen;
		c->timers[i].next = ctx->free;
		ctx->free = c->first + i + 1;
	}
	/* Readers of @chunks beyond @nr_chunks hold the mutex: no @lock. */
	ctx->chunks[ctx->nr_chunks++] = c;
	return 0;
}

static int twheel_ut_alloc(struct twheel_ctx *ctx, struct twheel_utimer **utp)
{
	struct twheel_utimer *ut;
	int ret;

	lockdep_assert_held(&ctx->mutex);
	if (!ctx->free) {
		ret = twheel_table_add_chunk(ctx);
		if (ret)
			return ret;
	}
	ut = twheel_ut_at(ctx, ctx->free);
	/*
	 * read() frees a one-shot timer once it delivered its event, which
	 * the callback queued before its last instructions: the tick handler
	 * may still be running it.  A timer is not set up again before its
	 * callback has returned, so the entry is taken only then.
	 */
	if (ut->flags & TWHEEL_UT_DELIVERED)
		twheel_timer_wait_idle(&ut->timer);
	ctx->free = ut->next;
	ut->flags = TWHEEL_UT_LIVE;
	twheel_timer_setup(&ut->timer, ctx->wheel, twheel_utimer_fire, 0);
	WRITE_ONCE(ctx->count, ctx->count + 1);
	*utp = ut;
	return 0;
}

/*
 * The timer at @pos (its index + 1) is stopped, its event withdrawn or
 * delivered; not charged.
 */
static void twheel_ut_free_at(struct twheel_ctx *ctx, struct twheel_utimer *ut,
			      u32 pos)
{
	lockdep_assert_held(&ctx->mutex);
	ut->flags = 0;
	ut->claimed = 0;
	ut->gen++;
	ut->next = ctx->free;
	ctx->free = pos;
	WRITE_ONCE(ctx->count, ctx->count - 1);
}

static void twheel_ut_free(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	twheel_ut_free_at(ctx, ut, twheel_ut_index(ut) + 1);
}

static struct twheel_utimer *twheel_lookup(struct twheel_ctx *ctx, u64 handle)
{
	u32 pos = lower_32_bits(handle);
	struct twheel_utimer *ut;

	lockdep_assert_held(&ctx->mutex);
	if (!pos || pos > ctx->nr_chunks * TWHEEL_UCHUNK_TIMERS)
		return NULL;
	ut = twheel_ut_at(ctx, pos);
	if ((ut->flags & (TWHEEL_UT_LIVE | TWHEEL_UT_DELIVERING)) !=
	    TWHEEL_UT_LIVE || ut->claimed || ut->gen != upper_32_bits(handle))
		return NULL;
	return ut;
}

/* Charge @n timers to the file and its user, or none. */
static int twheel_charge(struct twheel_ctx *ctx, unsigned int n)
{
	if (ctx->count + n > twheel_max_timers_per_fd)
		return -ENOSPC;
	if (atomic_long_add_return(n, &ctx->user->timers) >
	    twheel_max_timers_per_user) {
		atomic_long_sub(n, &ctx->user->timers);
		return -ENOSPC;
	}
	return 0;
}

static void twheel_uncharge(struct twheel_ctx *ctx, unsigned int n)
{
	atomic_long_sub(n, &ctx->user->timers);
}

/* Validate the user's arming parameters. */
static int twheel_check_spec(const struct twheel_timer_spec *spec,
			     u64 tick_ns)
{
	if ((spec->flags & ~TWHEEL_ARM_ABS) || spec->__reserved)
		return -EINVAL;
	if (spec->expires > KTIME_MAX || spec->slack > KTIME_MAX ||
	    spec->period > KTIME_MAX)
		return -EINVAL;
	if (spec->period && spec->period < tick_ns)
		return -EINVAL;
	return 0;
}

static enum twheel_mode twheel_spec_mode(const struct twheel_timer_spec *spec)
{
	return spec->flags & TWHEEL_ARM_ABS ? TWHEEL_MODE_ABS : TWHEEL_MODE_REL;
}

/*
 * Time namespaces: absolute times cross the ABI in the caller's clock, as
 * timerfd's and POSIX timers' do, and the wheel keeps the host's.  The
 * offset is the namespace's of the task making the call: a file passed to
 * a task of another namespace gives each its own clock.
 * timens_ktime_to_host() cannot be used here: it is an inline over
 * do_timens_ktime_to_host() and init_time_ns, which 6.1 and 6.12 do not
 * export to modules.  The offsets themselves are reachable, as the
 * timens_add_monotonic() inline reads them, and fixed once a task has
 * entered the namespace.
 */
static ktime_t twheel_timens_offset(clockid_t clockid)
{
#ifdef CONFIG_TIME_NS
	struct nsproxy *ns = current->nsproxy;
	struct timens_offsets *o;

	/*
	 * An exiting task has left its namespaces before it runs its last
	 * task work, io_uring's completions among them: nobody reads
	 * those times any more, give them in the host's clock.
	 */
	if (!ns)
		return 0;
	o = &ns->time_ns->offsets;
	return timespec64_to_ktime(clockid == CLOCK_BOOTTIME ? o->boottime :
							       o->monotonic);
#else
	return 0;
#endif
}

/*
 * A time of the caller's clock as the host's.  One before the host's zero
 * is already due (0), as do_timens_ktime_to_host() has it; @t is at most
 * KTIME_MAX and the offset at most KTIME_SEC_MAX seconds either way, so
 * neither sum wraps.
 */
static ktime_t twheel_time_to_host(u64 t, ktime_t off)
{
	if (off >= 0)
		return t < off ? 0 : t - off;
	return t > KTIME_MAX + off ? KTIME_MAX : t - off;
}

/*
 * A host time in the caller's clock.  Only a time before the namespace's
 * zero, which its clock never reads (the kernel refuses offsets that would
 * make it negative), saturates: at 0.
 */
static u64 twheel_time_to_user(ktime_t t, ktime_t off)
{
	if (off < 0)
		return t < -off ? 0 : t + off;
	return t > KTIME_MAX - off ? KTIME_MAX : t + off;
}

/* The expiry of @spec as the facility takes it: host time if absolute. */
static ktime_t twheel_expiry(const struct twheel_ctx *ctx,
			     const struct twheel_timer_spec *spec)
{
	if (!(spec->flags & TWHEEL_ARM_ABS))
		return spec->expires;
	return twheel_time_to_host(spec->expires,
				   twheel_timens_offset(ctx->clockid));
}

/*
 * The side array of a chunk is allocated with its first periodic timer,
 * before the timer is stopped, so that twheel_ut_set() cannot fail.
 */
static int twheel_ut_prepare(struct twheel_utimer *ut,
			     const struct twheel_timer_spec *spec)
{
	struct twheel_uchunk *c = twheel_ut_chunk(ut);

	if (!spec->period || c->periodic)
		return 0;
	c->periodic = kvcalloc(TWHEEL_UCHUNK_TIMERS, sizeof(*c->periodic),
			       GFP_KERNEL_ACCOUNT);
	return c->periodic ? 0 : -ENOMEM;
}

/*
 * Record @spec in a stopped (or new) timer: its cookie, and period and
 * slack in its side entry when it has a period.  A periodic callback reads
 * them, so only while none can run.
 */
static void twheel_ut_set(struct twheel_utimer *ut,
			  const struct twheel_timer_spec *spec)
{
	struct twheel_uperiodic *p;

	if (spec->period) {
		p = twheel_ut_periodic(ut);
		p->period = spec->period;
		p->slack = spec->slack;
		p->seq++;
		ut->flags |= TWHEEL_UT_PERIODIC;
	} else if (ut->flags & TWHEEL_UT_PERIODIC) {
		twheel_ut_periodic(ut)->seq++;
		ut->flags &= ~TWHEEL_UT_PERIODIC;
	}
	ut->cookie = spec->cookie;
}

/*
 * Withdraw the unread event of a timer that can no longer fire.  The caller
 * has stopped the timer, so its callback, the only one to queue its event,
 * cannot run; and it holds the mutex (or is release()), so read(), the only
 * other one to dequeue it, cannot either.  So @queued cannot change under
 * us, and a timer without an event needs no lock.
 */
static bool twheel_withdraw_event(struct twheel_ctx *ctx,
				  struct twheel_utimer *ut)
{
	if (!READ_ONCE(ut->queued))
		return false;
	spin_lock_bh(&ctx->lock);
	twheel_ready_del(ctx, ut);
	spin_unlock_bh(&ctx->lock);
	return true;
}

/*
 * The single-timer operations, also the batch's way out for what it
 * cannot do under one base lock.  The charge is the caller's.
 */
static int twheel_do_arm(struct twheel_ctx *ctx,
			 const struct twheel_timer_spec *spec,
			 struct twheel_utimer **utp)
{
	struct twheel_utimer *ut;
	int ret;

	ret = twheel_ut_alloc(ctx, &ut);
	if (ret)
		return ret;
	ret = twheel_ut_prepare(ut, spec);
	if (!ret) {
		twheel_ut_set(ut, spec);
		ret = twheel_timer_start(&ut->timer, twheel_expiry(ctx, spec),
					 spec->slack, twheel_spec_mode(spec));
	}
	if (ret) {
		twheel_ut_free(ctx, ut);
		return ret;
	}
	*utp = ut;
	return 0;
}

static int twheel_do_modify(struct twheel_ctx *ctx, struct twheel_utimer *ut,
			    const struct twheel_timer_spec *spec)
{
	int ret;

	ret = twheel_ut_prepare(ut, spec);
	if (ret)
		return ret;
	/* Stop it (a periodic callback may be re-arming it right now)... */
	twheel_timer_cancel_sync(&ut->timer);
	twheel_withdraw_event(ctx, ut);
	/* ...then no callback runs and nothing else touches it. */
	twheel_ut_set(ut, spec);
	return twheel_timer_start(&ut->timer, twheel_expiry(ctx, spec),
				  spec->slack, twheel_spec_mode(spec));
}

/*
 * Free a stopped timer: @pending is what stopping it returned.  Its charge
 * is the caller's to give back.
 */
static u32 twheel_finish_cancel(struct twheel_ctx *ctx,
				struct twheel_utimer *ut, int pending)
{
	u32 status;

	twheel_withdraw_event(ctx, ut);
	/* its pending io_uring command, if any: -ECANCELED */
	twheel_uring_drop(ctx, ut);
	/*
	 * A periodic timer is armed until it is cancelled, even while its
	 * callback runs or its event waits; a one-shot one is no longer once
	 * its callback began.
	 */
	status = pending || (ut->flags & TWHEEL_UT_PERIODIC) ?
		 TWHEEL_CANCEL_PENDING : TWHEEL_CANCEL_FIRED;
	twheel_ut_free(ctx, ut);
	return status;
}

static u32 twheel_do_cancel(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	u32 status;

	/* Shutdown: a periodic callback running now cannot re-arm it. */
	status = twheel_finish_cancel(ctx, ut,
				      twheel_timer_shutdown_sync(&ut->timer));
	twheel_uncharge(ctx, 1);
	return status;
}

/**
 * struct twheel_ucmd - one ioctl's structure, in and out
 * @ctx:       the file
 * @ubuffer:   the caller's structure; NULL for an io_uring command, whose
 *             outputs go to its completion from @cmd
 * @user_size: its size as the caller gave it
 * @cmd:       the kernel's copy, extended to the kernel's size
 * @ioucmd:    the io_uring command it came in, NULL for an ioctl
 * @issue_flags: io_uring's flags of this attempt at @ioucmd
 */
struct twheel_ucmd {
	struct twheel_ctx *ctx;
	void __user *ubuffer;
	u32 user_size;
	void *cmd;
	struct io_uring_cmd *ioucmd;
	unsigned int issue_flags;
};

#ifdef TWHEEL_HAVE_URING_EXPIRY
static int twheel_uring_arm_expiry(struct twheel_ucmd *ucmd);
#else
static int twheel_uring_arm_expiry(struct twheel_ucmd *ucmd)
{
	/* an ioctl, or a kernel that cannot cancel a pending command */
	return ucmd->ioucmd ? -EOPNOTSUPP : -EINVAL;
}
#endif

/* Copy the answer out, as much of it as the caller's structure holds. */
static int twheel_ucmd_respond(struct twheel_ucmd *ucmd, size_t len)
{
	if (!ucmd->ubuffer)
		return 0;
	if (copy_to_user(ucmd->ubuffer, ucmd->cmd, min_t(size_t, ucmd->user_size, len)))
		return -EFAULT;
	return 0;
}

static void twheel_fill_api(struct twheel_ctx *ctx, u32 *abi, u32 *event_size,
			    u64 *features, u64 *tick_ns, u32 *slots)
{
	struct twheel_stats st;

	twheel_get_stats(ctx->wheel, &st);
	*abi = TWHEEL_ABI_VERSION;
	*event_size = sizeof(struct twheel_event);
	*features = TWHEEL_FEATURE_PERIODIC | TWHEEL_FEATURE_SLACK |
		    TWHEEL_FEATURE_BATCH | TWHEEL_FEATURE_QUERY |
		    TWHEEL_FEATURE_SETUP;
	if (IS_ENABLED(CONFIG_IO_URING))
		*features |= TWHEEL_FEATURE_URING_CMD;
#ifdef TWHEEL_HAVE_URING_EXPIRY
	*features |= TWHEEL_FEATURE_URING_EXPIRY;
#endif
#ifdef TWHEEL_HAVE_URING_MSHOT
	*features |= TWHEEL_FEATURE_URING_MSHOT;
#endif
	switch (st.engine) {
	case TWHEEL_ENGINE_SCHEME6:
		*features |= TWHEEL_FEATURE_ENGINE_SCHEME6;
		break;
	case TWHEEL_ENGINE_LAWN:
		*features |= TWHEEL_FEATURE_ENGINE_LAWN;
		break;
	default:
		*features |= TWHEEL_FEATURE_ENGINE_HIER;
		break;
	}
	*tick_ns = st.tick_ns;
	*slots = st.slots;
}

/*
 * The instance of @clockid and @tick_ns, shared or new: ENOSPC when there
 * are max_instances already.
 */
static struct twheel_inst *twheel_inst_get(clockid_t clockid, u64 tick_ns)
{
	struct twheel_attr attr = twheel_dflt;
	struct twheel_inst *inst;
	char name[40];

	mutex_lock(&twheel_insts_mutex);
	list_for_each_entry(inst, &twheel_insts, node) {
		if (inst->clockid == clockid && inst->tick_ns == tick_ns) {
			inst->users++;
			goto out;
		}
	}
	inst = ERR_PTR(-ENOSPC);
	if (twheel_nr_insts >= twheel_max_insts)
		goto out;
	inst = kzalloc(sizeof(*inst), GFP_KERNEL);
	if (!inst) {
		inst = ERR_PTR(-ENOMEM);
		goto out;
	}
	attr.clockid = clockid;
	attr.tick_ns = tick_ns;
	snprintf(name, sizeof(name), "dev-%s-%llu",
		 clockid == CLOCK_BOOTTIME ? "boottime" : "monotonic", tick_ns);
	inst->wheel = twheel_create_named(&attr, name);
	if (IS_ERR(inst->wheel)) {
		struct twheel *err = inst->wheel;

		kfree(inst);
		inst = ERR_CAST(err);
		goto out;
	}
	inst->clockid = clockid;
	inst->tick_ns = tick_ns;
	inst->users = 1;
	list_add(&inst->node, &twheel_insts);
	twheel_nr_insts++;
out:
	mutex_unlock(&twheel_insts_mutex);
	return inst;
}

/* Drop a file's use of @inst, which has no timer of it left; NULL is none. */
static void twheel_inst_put(struct twheel_inst *inst)
{
	if (!inst)
		return;
	mutex_lock(&twheel_insts_mutex);
	if (!--inst->users) {
		list_del(&inst->node);
		twheel_nr_insts--;
		/*
		 * Under the mutex, so that a new instance of the same clock
		 * and tick does not meet this one's debugfs directory.
		 */
		twheel_destroy(inst->wheel);
		kfree(inst);
	}
	mutex_unlock(&twheel_insts_mutex);
}

/*
 * TWHEEL_IOC_SETUP: put the file on the wheel of the clock and tick asked
 * for, while it has no timer: its timers are set up on their wheel.
 */
static int twheel_ioctl_setup(struct twheel_ucmd *ucmd)
{
	struct twheel_setup *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	u64 tick_ns = cmd->tick_ns ?: twheel_dflt.tick_ns;
	struct twheel_inst *inst = NULL;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	if (cmd->clockid != CLOCK_MONOTONIC && cmd->clockid != CLOCK_BOOTTIME)
		return -EINVAL;
	if (tick_ns < TWHEEL_TICK_NS_MIN || tick_ns > TWHEEL_TICK_NS_MAX)
		return -EINVAL;
	if (ctx->count)
		return -EBUSY;
	/* The default wheel is the module's: not counted, never freed. */
	if (cmd->clockid != CLOCK_MONOTONIC || tick_ns != twheel_dflt.tick_ns) {
		inst = twheel_inst_get(cmd->clockid, tick_ns);
		if (IS_ERR(inst))
			return PTR_ERR(inst);
	}
	twheel_inst_put(ctx->inst);
	ctx->inst = inst;
	ctx->wheel = inst ? inst->wheel : twheel_default();
	ctx->clockid = cmd->clockid;
	/* fdinfo reads it without the mutex */
	WRITE_ONCE(ctx->tick_ns, tick_ns);
	return 0;
}

static int twheel_ioctl_api(struct twheel_ucmd *ucmd)
{
	struct twheel_api *cmd = ucmd->cmd;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	twheel_fill_api(ucmd->ctx, &cmd->out_abi_version, &cmd->out_event_size,
			&cmd->out_features, &cmd->out_tick_ns, &cmd->out_slots);
	cmd->out_max_batch = TWHEEL_MAX_BATCH;
	cmd->out_batch_op_size = sizeof(struct twheel_batch_op);
	cmd->out_max_timers_per_fd = twheel_max_timers_per_fd;
	cmd->out_max_timers_per_user = twheel_max_timers_per_user;
	cmd->out_clockid = ucmd->ctx->clockid;
	cmd->out_max_instances = twheel_max_insts;
	return twheel_ucmd_respond(ucmd, sizeof(*cmd));
}

static int twheel_ioctl_arm(struct twheel_ucmd *ucmd)
{
	struct twheel_arm *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	struct twheel_utimer *ut;
	int ret;

	if (cmd->flags & ~TWHEEL_ARM_URING_EXPIRY)
		return -EINVAL;
	if (cmd->flags)
		return twheel_uring_arm_expiry(ucmd);
	ret = twheel_check_spec(&cmd->spec, ctx->tick_ns);
	if (ret)
		return ret;
	ret = twheel_charge(ctx, 1);
	if (ret)
		return ret;
	ret = twheel_do_arm(ctx, &cmd->spec, &ut);
	if (ret) {
		twheel_uncharge(ctx, 1);
		return ret;
	}
	cmd->out_handle = twheel_ut_handle(ut);
	ret = twheel_ucmd_respond(ucmd, sizeof(*cmd));
	/* The caller cannot learn the handle: undo the arm. */
	if (ret)
		twheel_do_cancel(ctx, ut);
	return ret;
}

static int twheel_ioctl_modify(struct twheel_ucmd *ucmd)
{
	struct twheel_modify *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	struct twheel_utimer *ut;
	int ret;

	if (cmd->flags)
		return -EINVAL;
	ret = twheel_check_spec(&cmd->spec, ctx->tick_ns);
	if (ret)
		return ret;
	ut = twheel_lookup(ctx, cmd->handle);
	if (!ut)
		return -ENOENT;
	/* its command completes at the expiry it was armed for */
	if (ut->flags & TWHEEL_UT_URING)
		return -EINVAL;
	return twheel_do_modify(ctx, ut, &cmd->spec);
}

static int twheel_ioctl_cancel(struct twheel_ucmd *ucmd)
{
	struct twheel_cancel *cmd = ucmd->cmd;
	struct twheel_utimer *ut;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	ut = twheel_lookup(ucmd->ctx, cmd->handle);
	if (!ut)
		return -ENOENT;
	cmd->out_status = twheel_do_cancel(ucmd->ctx, ut);
	/* The timer is gone either way; report status when we can. */
	return twheel_ucmd_respond(ucmd, sizeof(*cmd));
}

static int twheel_ioctl_query(struct twheel_ucmd *ucmd)
{
	struct twheel_query *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	struct twheel_utimer *ut;
	unsigned int st;
	ktime_t expires;
	bool periodic;

	if (cmd->flags || cmd->__reserved)
		return -EINVAL;
	ut = twheel_lookup(ctx, cmd->handle);
	if (!ut)
		return -ENOENT;

	periodic = ut->flags & TWHEEL_UT_PERIODIC;
	cmd->out_state = 0;
	cmd->out_remaining = 0;
	cmd->out_expires = 0;
	cmd->out_period = periodic ? twheel_ut_periodic(ut)->period : 0;
	cmd->out_cookie = ut->cookie;
	/*
	 * One snapshot: with @ctx->lock held the callback is either before
	 * the point where it queues the event and re-arms, or past it.  The
	 * ioctls that stop the timer are excluded by the mutex.
	 */
	spin_lock_bh(&ctx->lock);
	st = twheel_timer_state(&ut->timer, &expires);
	if (ut->queued)
		cmd->out_state |= TWHEEL_QUERY_EVENT;
	spin_unlock_bh(&ctx->lock);
	/*
	 * Running but not pending: the callback has not queued its event
	 * yet.  The timer is due now: a periodic one is re-armed by that
	 * callback, a one-shot one has not fired for userspace yet.  Past
	 * that point a one-shot timer has its event instead.
	 */
	if ((st & TWHEEL_STATE_PENDING) ||
	    ((st & TWHEEL_STATE_RUNNING) &&
	     (periodic || !(cmd->out_state & TWHEEL_QUERY_EVENT)))) {
		ktime_t now = ctx->clockid == CLOCK_BOOTTIME ?
			      ktime_get_boottime() : ktime_get();
		ktime_t off = twheel_timens_offset(ctx->clockid);

		cmd->out_state |= TWHEEL_QUERY_PENDING;
		cmd->out_expires = twheel_time_to_user(expires, off);
		cmd->out_remaining = expires > now ? expires - now : 0;
	}
	return twheel_ucmd_respond(ucmd, sizeof(*cmd));
}

/*
 * A batch works on runs of records in three passes.  First, without a
 * lock: check each record, look its timer up (a CANCEL claims it, so that
 * later records find it gone) or take a table entry for an ARM, and
 * allocate what a periodic spec needs.  ENOMEM stops the batch at its
 * record, which leaves the file unchanged: returns the end of the records
 * to go on with.  @charged: the run's ARMs are already charged; else each
 * is charged on its own.
 */
static unsigned int twheel_batch_prepare(struct twheel_ctx *ctx,
					 struct twheel_batch_run *run,
					 unsigned int from, unsigned int to,
					 bool charged)
{
	unsigned int i;
	int ret;

	for (i = from; i < to; i++) {
		struct twheel_batch_op *op = &run->ops[i];
		struct twheel_utimer *ut = NULL;

		switch (op->op) {
		case TWHEEL_OP_ARM:
			ret = twheel_check_spec(&op->spec, ctx->tick_ns);
			if (!ret && !charged)
				ret = twheel_charge(ctx, 1);
			else if (ret && charged)
				twheel_uncharge(ctx, 1);
			if (ret)
				break;
			ret = twheel_ut_alloc(ctx, &ut);
			if (!ret) {
				ret = twheel_ut_prepare(ut, &op->spec);
				if (ret)
					twheel_ut_free(ctx, ut);
			}
			if (ret) {
				twheel_uncharge(ctx, 1);
				break;
			}
			/* the output, should the ARM succeed */
			op->handle = twheel_ut_handle(ut);
			break;
		case TWHEEL_OP_MODIFY:
		case TWHEEL_OP_CANCEL:
			ret = 0;
			if (op->op == TWHEEL_OP_MODIFY)
				ret = twheel_check_spec(&op->spec, ctx->tick_ns);
			if (ret)
				break;
			ut = twheel_lookup(ctx, op->handle);
			if (!ut)
				ret = -ENOENT;
			else if (op->op == TWHEEL_OP_MODIFY &&
				 (ut->flags & TWHEEL_UT_URING))
				ret = -EINVAL;
			else if (op->op == TWHEEL_OP_MODIFY)
				ret = twheel_ut_prepare(ut, &op->spec);
			else
				ut->claimed = 1;
			break;
		default:
			ret = test_bit(i, run->e2big) ? -E2BIG : -EINVAL;
			break;
		}
		if (ret == -ENOMEM) {
			unsigned int j;

			/* Give back the charge of the ARMs not reached. */
			for (j = i + 1; charged && j < to; j++)
				if (run->ops[j].op == TWHEEL_OP_ARM)
					twheel_uncharge(ctx, 1);
			return i;
		}
		run->ut[i] = ut;
		run->ret[i] = ret;
		run->state[i] = ret ? TWHEEL_REC_FAILED : TWHEEL_REC_TODO;
	}
	return to;
}

/*
 * Record @i of the locked pass: what became of it.  Whatever the run
 * cannot do under its lock is left for the single-timer path
 * (TWHEEL_REC_SLOW), which finds the reason again.
 */
static enum twheel_rec_state twheel_batch_one(struct twheel_ctx *ctx,
					      struct twheel_batch_lock *bl,
					      struct twheel_batch_run *run,
					      unsigned int i)
{
	const struct twheel_timer_spec *spec = &run->ops[i].spec;
	struct twheel_utimer *ut = run->ut[i];

	if (run->ops[i].op == TWHEEL_OP_ARM) {
		/* a new timer, on no base yet: twheel_batch_arm() places it */
		twheel_ut_set(ut, spec);
		if (twheel_batch_arm(bl, &ut->timer, twheel_expiry(ctx, spec),
				     spec->slack, twheel_spec_mode(spec)))
			return TWHEEL_REC_SLOW;
		return TWHEEL_REC_DONE;
	}
	if (twheel_batch_take(bl, &ut->timer))
		return TWHEEL_REC_SLOW;
	if (run->ops[i].op == TWHEEL_OP_CANCEL) {
		if (twheel_batch_stop(bl, &ut->timer, true) < 0)
			return TWHEEL_REC_SLOW;
		return TWHEEL_REC_STOPPED;
	}
	if (READ_ONCE(ut->queued) ||
	    twheel_batch_modify(bl, &ut->timer, twheel_expiry(ctx, spec),
				spec->slack, twheel_spec_mode(spec)) < 0)
		return TWHEEL_REC_SLOW;
	/* read by the callback, which cannot run yet */
	twheel_ut_set(ut, spec);
	return TWHEEL_REC_DONE;
}

/*
 * Second pass, under one lock of this CPU's base and one clock reading:
 * arm the new timers, stop the cancelled ones, and re-arm the modified
 * ones, taking over those on another base first (twheel_batch_take()).
 * What stays on another base (its lock is busy), or whose callback runs,
 * is left for the single-timer path, and so is a MODIFY whose timer has an
 * unread event: that is withdrawn under @ctx->lock, which nests outside
 * the base lock.  A MODIFY may test @queued after the take and before
 * twheel_batch_modify(): read() is excluded by the mutex, and the only
 * other writer, the timer's callback, either runs now (then
 * twheel_batch_modify() refuses), ran before the take (then its write is
 * seen), or cannot start while the base is locked.  The pass ends at a
 * record left for the single-timer path, which the caller completes before
 * the later records are done, so that they see its effect (a later CANCEL
 * of the same timer must not shut it down under a MODIFY still to come).
 * Returns the end of the records it went through.
 */
static unsigned int twheel_batch_locked(struct twheel_ctx *ctx,
					struct twheel_batch_run *run,
					unsigned int from, unsigned int to)
{
	struct twheel_batch_lock bl;
	unsigned int i;

	twheel_batch_begin(ctx->wheel, &bl);
	for (i = from; i < to; i++) {
		if (run->state[i] != TWHEEL_REC_TODO)
			continue;
		run->state[i] = twheel_batch_one(ctx, &bl, run, i);
		if (run->state[i] == TWHEEL_REC_SLOW) {
			i++;
			break;
		}
	}
	twheel_batch_end(&bl);
	return i;
}

/* Third pass, for one record: what the base lock did not finish. */
static int twheel_batch_finish(struct twheel_ctx *ctx,
			       struct twheel_batch_run *run, unsigned int i)
{
	const struct twheel_timer_spec *spec = &run->ops[i].spec;
	struct twheel_utimer *ut = run->ut[i];
	int ret = 0;

	switch (run->state[i]) {
	case TWHEEL_REC_FAILED:
		return run->ret[i];
	case TWHEEL_REC_STOPPED:
		/* A batch reports no cancel status: withdraw and free. */
		twheel_withdraw_event(ctx, ut);
		twheel_uring_drop(ctx, ut);
		twheel_ut_free_at(ctx, ut, lower_32_bits(run->ops[i].handle));
		/* uncharged with the run's others: one atomic, not one each */
		run->freed++;
		return 0;
	case TWHEEL_REC_SLOW:
		break;
	default:
		return 0;
	}
	switch (run->ops[i].op) {
	case TWHEEL_OP_ARM:
		ret = twheel_timer_start(&ut->timer, twheel_expiry(ctx, spec),
					 spec->slack, twheel_spec_mode(spec));
		if (ret) {
			twheel_ut_free(ctx, ut);
			twheel_uncharge(ctx, 1);
		}
		break;
	case TWHEEL_OP_MODIFY:
		ret = twheel_do_modify(ctx, ut, spec);
		break;
	default:
		twheel_do_cancel(ctx, ut);
		break;
	}
	return ret;
}

/* Give back the charge of the timers the run's CANCELs freed so far. */
static void twheel_batch_uncharge(struct twheel_ctx *ctx,
				  struct twheel_batch_run *run)
{
	if (run->freed)
		twheel_uncharge(ctx, run->freed);
	run->freed = 0;
}

/*
 * Do what is left of a record now, before the records after it, its
 * charge included: near the limit an ARM after it may need the room.
 */
static void twheel_batch_complete(struct twheel_ctx *ctx,
				  struct twheel_batch_run *run, unsigned int i)
{
	run->ret[i] = twheel_batch_finish(ctx, run, i);
	run->state[i] = run->ret[i] ? TWHEEL_REC_FAILED : TWHEEL_REC_DONE;
	twheel_batch_uncharge(ctx, run);
}

/*
 * Record @i of the run, finished, armed a new timer that is still its own.
 * A later CANCEL of the run may have named it (a handle is predictable)
 * and freed its entry, which a later ARM may even have taken again: the
 * generation tells.
 */
static bool twheel_batch_armed(const struct twheel_batch_run *run,
			       unsigned int i)
{
	const struct twheel_utimer *ut = run->ut[i];

	return run->ops[i].op == TWHEEL_OP_ARM && !run->ret[i] &&
	       (ut->flags & TWHEEL_UT_LIVE) &&
	       ut->gen == upper_32_bits(run->ops[i].handle);
}

/*
 * Write the outputs of records [0, @n) of the run, whose results are in
 * @ret: the errno of a failed record, the handle of a new timer (and its
 * result, 0); nothing for the others.  One user access window for all,
 * as a run of ARMs writes one handle per record.  Returns how many
 * records were reported: short of @n at the first that could not be;
 * adds the failed ones among them to @failed.
 */
static unsigned int twheel_batch_report(const struct twheel_batch_run *run,
					u8 __user *urun, u32 op_size,
					unsigned int n, u32 *failed)
{
	const struct twheel_batch_op *op = run->ops;
	const int *ret = run->ret;
	unsigned int i = 0;

	/*
	 * Nothing may call out of line between user_access_begin() and
	 * user_access_end() (objtool: "call ... with UACCESS enabled"), and
	 * an array subscript the compiler cannot prove in range is a call to
	 * the bounds sanitizer's report (CONFIG_UBSAN_BOUNDS).  So the window
	 * walks the arrays by pointer, with @n bounded by their length
	 * before it opens.
	 */
	n = min_t(unsigned int, n, TWHEEL_BATCH_RUN);
	if (!user_access_begin(urun, (size_t)n * op_size))
		return 0;
	for (; i < n; i++, op++, ret++) {
		struct twheel_batch_op __user *uop = (void __user *)
			(urun + (size_t)i * op_size);

		if (*ret) {
			unsafe_put_user(*ret, &uop->out_result, efault);
			(*failed)++;
		} else if (op->op == TWHEEL_OP_ARM) {
			unsafe_put_user(0, &uop->out_result, efault);
			unsafe_put_user(op->handle, &uop->handle, efault);
		}
	}
efault:
	user_access_end();
	return i;
}

/*
 * Copy a run of records in.  Returns how many could be read: fewer than
 * @n when one could not (EFAULT stops the batch before that record).  A
 * record with unknown fields set is marked in @e2big, to fail alone.
 */
static unsigned int twheel_batch_copy_in(struct twheel_batch_run *run,
					 const u8 __user *uops, u32 op_size,
					 unsigned int n)
{
	unsigned int i;
	int ret;

	bitmap_zero(run->e2big, TWHEEL_BATCH_RUN);
	if (op_size == sizeof(run->ops[0]) &&
	    !copy_from_user(run->ops, uops, n * op_size))
		return n;
	for (i = 0; i < n; i++) {
		ret = copy_struct_from_user(&run->ops[i], sizeof(run->ops[i]),
					    uops + (size_t)i * op_size, op_size);
		if (ret == -E2BIG) {
			memset(&run->ops[i], 0, sizeof(run->ops[i]));
			__set_bit(i, run->e2big);
		} else if (ret) {
			break;
		}
	}
	return i;
}

/*
 * Process records [@from, @to) of the run.  Their ARMs are charged at once
 * when the user has room for all of them; else (near a limit, where a
 * CANCEL before an ARM must make room for it) one record at a time, in
 * order.  Returns the end of the records processed: short of @to only for
 * ENOMEM.
 */
static unsigned int twheel_batch_process(struct twheel_ctx *ctx,
					 struct twheel_batch_run *run,
					 unsigned int from, unsigned int to)
{
	unsigned int i, arms = 0, end;

	for (i = from; i < to; i++)
		arms += run->ops[i].op == TWHEEL_OP_ARM;
	if (!arms || !twheel_charge(ctx, arms)) {
		end = twheel_batch_prepare(ctx, run, from, to, arms);
		for (i = from; i < end; ) {
			i = twheel_batch_locked(ctx, run, i, end);
			if (run->state[i - 1] == TWHEEL_REC_SLOW)
				twheel_batch_complete(ctx, run, i - 1);
		}
		return end;
	}
	for (i = from; i < to; i++) {
		end = twheel_batch_prepare(ctx, run, i, i + 1, false);
		if (end == i)
			return i;
		twheel_batch_locked(ctx, run, i, end);
		/* what the record changed must be seen by the next one */
		twheel_batch_complete(ctx, run, i);
	}
	return to;
}

static int twheel_ioctl_batch(struct twheel_ucmd *ucmd)
{
	struct twheel_batch *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	u8 __user *uops = u64_to_user_ptr(cmd->ops);
	struct twheel_batch_run *run;
	u32 done = 0, failed = 0;
	int err = 0;

	if (cmd->flags)
		return -EINVAL;
	if (cmd->count > TWHEEL_MAX_BATCH)
		return -E2BIG;
	if (cmd->op_size < offsetofend(struct twheel_batch_op, spec))
		return -EINVAL;
	if (cmd->op_size > TWHEEL_STRUCT_SIZE_MAX)
		return -E2BIG;
	run = &ctx->batch;

	while (done < cmd->count && !err) {
		unsigned int n = min_t(u32, cmd->count - done, TWHEEL_BATCH_RUN);
		u8 __user *urun = uops + (size_t)done * cmd->op_size;
		unsigned int i, got, end, reported;

		got = twheel_batch_copy_in(run, urun, cmd->op_size, n);
		if (got < n)
			err = -EFAULT;
		end = twheel_batch_process(ctx, run, 0, got);
		if (end < got)
			err = -ENOMEM;
		/* what the locked pass armed or re-armed is done (ret 0) */
		for (i = 0; i < end; i++)
			if (run->state[i] != TWHEEL_REC_DONE)
				run->ret[i] = twheel_batch_finish(ctx, run, i);
		reported = twheel_batch_report(run, urun, cmd->op_size, end,
					       &failed);
		if (reported < end)
			err = -EFAULT;
		i = reported;
		/*
		 * Not reported (this record's output could not be written, or
		 * an earlier one's): undo a fresh arm, as the single ioctl
		 * does.  CANCEL and MODIFY records of the run after the failed
		 * one have taken effect.
		 */
		for (; i < end; i++)
			if (twheel_batch_armed(run, i))
				twheel_do_cancel(ctx, run->ut[i]);
		twheel_batch_uncharge(ctx, run);
		done += reported;
		twheel_delay(TWHEEL_DELAY_BATCH_RUN);
		if (fatal_signal_pending(current))
			break;
		cond_resched();
	}
	if (!done && err)
		return err;
	cmd->out_done = done;
	cmd->out_failed = failed;
	/* The return value is authoritative; out_done is a convenience copy. */
	if (twheel_ucmd_respond(ucmd, sizeof(*cmd)) && !done)
		return -EFAULT;
	return done;
}

/**
 * struct twheel_ioctl_op - one ioctl command
 * @size:     the kernel's structure
 * @min_size: the first version of it
 * @execute:  the handler, with the mutex held
 */
struct twheel_ioctl_op {
	unsigned int size;
	unsigned int min_size;
	int (*execute)(struct twheel_ucmd *ucmd);
};

static const struct twheel_ioctl_op twheel_ioctl_ops[] = {
	[TWHEEL_CMD_API - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_api),
		.min_size = offsetofend(struct twheel_api,
					out_max_timers_per_user),
		.execute = twheel_ioctl_api,
	},
	[TWHEEL_CMD_ARM - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_arm),
		.min_size = offsetofend(struct twheel_arm, spec),
		.execute = twheel_ioctl_arm,
	},
	[TWHEEL_CMD_MODIFY - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_modify),
		.min_size = offsetofend(struct twheel_modify, spec),
		.execute = twheel_ioctl_modify,
	},
	[TWHEEL_CMD_CANCEL - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_cancel),
		.min_size = offsetofend(struct twheel_cancel, __reserved),
		.execute = twheel_ioctl_cancel,
	},
	[TWHEEL_CMD_QUERY - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_query),
		.min_size = offsetofend(struct twheel_query, out_cookie),
		.execute = twheel_ioctl_query,
	},
	[TWHEEL_CMD_BATCH - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_batch),
		.min_size = offsetofend(struct twheel_batch, out_failed),
		.execute = twheel_ioctl_batch,
	},
	[TWHEEL_CMD_SETUP - TWHEEL_CMD_BASE] = {
		.size = sizeof(struct twheel_setup),
		.min_size = offsetofend(struct twheel_setup, tick_ns),
		.execute = twheel_ioctl_setup,
	},
};

union twheel_ucmd_buffer {
	struct twheel_api api;
	struct twheel_arm arm;
	struct twheel_modify modify;
	struct twheel_cancel cancel;
	struct twheel_query query;
	struct twheel_batch batch;
	struct twheel_setup setup;
};

/*
 * ABI version 1's TWHEEL_IOC_API, kept so that a program built for it
 * learns the version and stops: its handshake refuses abi_version 2.
 */
struct twheel_api_v1 {
	__u32 abi_version;
	__u32 event_size;
	__aligned_u64 features;
	__aligned_u64 tick_ns;
	__u32 slots;
	__u32 max_batch;
	__aligned_u64 max_timers_per_fd;
	__aligned_u64 max_timers_per_user;
};

#define TWHEEL_IOC_API_V1	_IOR(TWHEEL_IOCTL_MAGIC, 0x00, struct twheel_api_v1)

static long twheel_ioctl_api_v1(struct twheel_ctx *ctx, void __user *arg)
{
	struct twheel_api_v1 api = {
		.max_batch = TWHEEL_MAX_BATCH,
		.max_timers_per_fd = twheel_max_timers_per_fd,
		.max_timers_per_user = twheel_max_timers_per_user,
	};

	twheel_fill_api(ctx, &api.abi_version, &api.event_size, &api.features,
			&api.tick_ns, &api.slots);
	return copy_to_user(arg, &api, sizeof(api)) ? -EFAULT : 0;
}

/*
 * Run a command whose structure has been read, for an ioctl or an io_uring
 * command.  Killable: the holder of the mutex may wait in a page fault on
 * the caller's memory (a userfaultfd or FUSE mapping) for as long as it
 * likes.  @nowait: the caller must not sleep for the mutex (io_uring's
 * first attempt, from the submitting task), EAGAIN if it is taken.
 */
static int twheel_ucmd_run(const struct twheel_ioctl_op *op,
			   struct twheel_ucmd *ucmd, bool nowait)
{
	struct twheel_ctx *ctx = ucmd->ctx;
	int ret;

	if (nowait) {
		if (!mutex_trylock(&ctx->mutex))
			return -EAGAIN;
	} else if (mutex_lock_killable(&ctx->mutex)) {
		return -EINTR;
	}
	ret = op->execute(ucmd);
	mutex_unlock(&ctx->mutex);
	return ret;
}

static long twheel_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twheel_ctx *ctx = file->private_data;
	const struct twheel_ioctl_op *op;
	union twheel_ucmd_buffer buf;
	struct twheel_ucmd ucmd = {
		.ctx = ctx,
		.ubuffer = (void __user *)arg,
		.cmd = &buf,
	};
	unsigned int nr = _IOC_NR(cmd);
	long ret;

	if (cmd == TWHEEL_IOC_API_V1)
		return twheel_ioctl_api_v1(ctx, ucmd.ubuffer);
	if (_IOC_TYPE(cmd) != TWHEEL_IOCTL_MAGIC || _IOC_SIZE(cmd) ||
	    _IOC_DIR(cmd) != _IOC_NONE || nr < TWHEEL_CMD_BASE ||
	    nr - TWHEEL_CMD_BASE >= ARRAY_SIZE(twheel_ioctl_ops))
		return -ENOTTY;
	op = &twheel_ioctl_ops[nr - TWHEEL_CMD_BASE];

	if (get_user(ucmd.user_size, (u32 __user *)ucmd.ubuffer))
		return -EFAULT;
	if (ucmd.user_size < op->min_size)
		return -EINVAL;
	/* a tail of gigabytes would be read for zeroes without a resched */
	if (ucmd.user_size > TWHEEL_STRUCT_SIZE_MAX)
		return -E2BIG;
	ret = copy_struct_from_user(&buf, op->size, ucmd.ubuffer,
				    ucmd.user_size);
	if (ret)
		return ret;
	return twheel_ucmd_run(op, &ucmd, false);
}

/*
 * Take up to @max events off the ready list into @evs, noting the arming
 * of each periodic one in @seqs.  Called with the mutex held; the one-shot
 * timers taken are marked delivering, so that no ioctl finds (and frees)
 * them while read() copies their events without the mutex.
 */
static unsigned int twheel_take_events(struct twheel_ctx *ctx,
				       struct twheel_event *evs, u32 *seqs,
				       struct twheel_utimer **uts,
				       unsigned int max)
{
	unsigned int n = 0;

	lockdep_assert_held(&ctx->mutex);
	spin_lock_bh(&ctx->lock);
	while (n < max && ctx->ready_head) {
		u32 pos = ctx->ready_head;
		struct twheel_utimer *ut = twheel_ut_at(ctx, pos);
		struct twheel_event *ev = &evs[n];

		twheel_ready_pop(ctx, ut);
		*ev = (struct twheel_event) {
			.handle = (u64)ut->gen << 32 | pos,
			.cookie = ut->cookie,
		};
		uts[n] = ut;
		if (ut->flags & TWHEEL_UT_PERIODIC) {
			struct twheel_uperiodic *p = twheel_ut_periodic(ut);

			ev->expires = p->ev_expires;
			ev->fired = p->ev_fired;
			ev->overrun = p->overrun;
			ev->flags |= TWHEEL_EVENT_PERIODIC;
			seqs[n] = p->seq;
		} else {
			ev->expires = twheel_timer_expires(&ut->timer);
			ev->fired = twheel_fire_time(&ut->timer);
			ut->flags |= TWHEEL_UT_DELIVERING;
		}
		n++;
	}
	spin_unlock_bh(&ctx->lock);
	return n;
}

/* The timer of an event taken by twheel_take_events(), if still there. */
static struct twheel_utimer *twheel_event_timer(struct twheel_ctx *ctx,
						const struct twheel_event *ev)
{
	u32 pos = lower_32_bits(ev->handle);
	struct twheel_utimer *ut;

	lockdep_assert_held(&ctx->mutex);
	ut = twheel_ut_at(ctx, pos);
	if (!(ut->flags & TWHEEL_UT_LIVE) || ut->gen != upper_32_bits(ev->handle))
		return NULL;
	return ut;
}

/*
 * The events were copied out: a one-shot timer ends here.  A periodic one
 * may have been cancelled meanwhile; it was not touched since the take.
 * A one-shot one was not: TWHEEL_UT_DELIVERING hides it from every lookup
 * by handle, so @uts still holds it, under the generation of its event.
 */
static void twheel_deliver_events(struct twheel_ctx *ctx,
				  const struct twheel_event *evs,
				  struct twheel_utimer *const *uts,
				  unsigned int n)
{
	unsigned int i, freed = 0;

	lockdep_assert_held(&ctx->mutex);
	for (i = 0; i < n; i++) {
		struct twheel_utimer *ut = uts[i];

		if (evs[i].flags & TWHEEL_EVENT_PERIODIC)
			continue;
		if (WARN_ON_ONCE(!(ut->flags & TWHEEL_UT_DELIVERING) ||
				 ut->gen != upper_32_bits(evs[i].handle)))
			continue;
		twheel_ut_free_at(ctx, ut, lower_32_bits(evs[i].handle));
		/* see twheel_ut_alloc() */
		ut->flags = TWHEEL_UT_DELIVERED;
		freed++;
	}
	twheel_uncharge(ctx, freed);
}

/*
 * The copy to userspace failed: give the events back, oldest first.  A
 * periodic timer may have been cancelled or modified while the mutex was
 * dropped: its event then is gone as the ioctl said.  It may also have
 * fired again meanwhile and queued a newer event; the returned one is
 * older, so it absorbs the newer one as an overrun.
 */
static void twheel_return_events(struct twheel_ctx *ctx,
				 const struct twheel_event *evs,
				 const u32 *seqs, unsigned int n)
{
	lockdep_assert_held(&ctx->mutex);
	spin_lock_bh(&ctx->lock);
	while (n--) {
		struct twheel_utimer *ut = twheel_event_timer(ctx, &evs[n]);
		struct twheel_uperiodic *p;

		if (!ut)
			continue;
		if (!(evs[n].flags & TWHEEL_EVENT_PERIODIC)) {
			/* Not armed since: it still has its fire time. */
			ut->flags &= ~TWHEEL_UT_DELIVERING;
			twheel_ready_add_head(ctx, ut);
			continue;
		}
		if (!(ut->flags & TWHEEL_UT_PERIODIC))
			continue;
		p = twheel_ut_periodic(ut);
		if (p->seq != seqs[n])
			continue;
		if (ut->queued) {
			p->overrun += evs[n].overrun + 1;
			twheel_ready_del(ctx, ut);
		} else {
			p->overrun = evs[n].overrun;
		}
		p->ev_expires = evs[n].expires;
		p->ev_fired = evs[n].fired;
		twheel_ready_add_head(ctx, ut);
	}
	/* Another reader may have gone to sleep while they were out. */
	if (ctx->ready_head)
		twheel_wake_readers(ctx);
	spin_unlock_bh(&ctx->lock);
}

/*
 * Events leave in the reader's clock: @evs, host times, converted for the
 * copy (@to_user) and back if it failed.  Back is exact but for a time
 * before the namespace's zero, which the reader could not be given anyway.
 */
static void twheel_events_convert(struct twheel_event *evs, unsigned int n,
				  ktime_t off, bool to_user)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (to_user) {
			evs[i].expires = twheel_time_to_user(evs[i].expires, off);
			evs[i].fired = twheel_time_to_user(evs[i].fired, off);
		} else {
			evs[i].expires = twheel_time_to_host(evs[i].expires, off);
			evs[i].fired = twheel_time_to_host(evs[i].fired, off);
		}
	}
}

static bool twheel_has_events(struct twheel_ctx *ctx)
{
	return READ_ONCE(ctx->ready_head);
}

/*
 * A read that must not sleep (IOCB_NOWAIT: io_uring's attempt from the
 * submitting task, before it waits for EPOLLIN or hands the read to a
 * worker).  It takes the two mutexes by trylock only, and holds them
 * across the copy, which cannot sleep either: the buffer is faulted in
 * first, with no lock held, and the copy runs with page faults disabled.
 * So no event taken off the list ever waits for the mutex to be delivered
 * or given back.  A copy that faults anyway gives its run back and ends
 * the read there; with nothing read, EAGAIN sends io_uring to the blocking
 * path, where the fault is taken.
 */
static ssize_t twheel_read_nowait(struct twheel_ctx *ctx, struct iov_iter *to)
{
	struct twheel_event *evs = ctx->revs;
	struct twheel_utimer **uts = ctx->ruts;
	u32 *seqs = ctx->rseqs;
	size_t want, copied;
	ssize_t done = 0;
	unsigned int n;
	ktime_t off;

	spin_lock_bh(&ctx->lock);
	want = min_t(size_t, ctx->nready, iov_iter_count(to) / sizeof(*evs));
	spin_unlock_bh(&ctx->lock);
	if (!want)
		return -EAGAIN;
	/* Not one byte writable: as the blocking read() reports it. */
	want *= sizeof(*evs);
	if (fault_in_iov_iter_writeable(to, want) == want)
		return -EFAULT;

	if (!mutex_trylock(&ctx->read_mutex))
		return -EAGAIN;
	if (!mutex_trylock(&ctx->mutex)) {
		mutex_unlock(&ctx->read_mutex);
		return -EAGAIN;
	}
	/* the clock of the events, which SETUP cannot change meanwhile */
	off = twheel_timens_offset(ctx->clockid);
	while (iov_iter_count(to) >= sizeof(*evs)) {
		n = twheel_take_events(ctx, evs, seqs, uts,
				       min_t(size_t, TWHEEL_READ_CHUNK,
					     iov_iter_count(to) / sizeof(*evs)));
		if (!n)
			break;
		if (off)
			twheel_events_convert(evs, n, off, true);
		pagefault_disable();
		copied = copy_to_iter(evs, n * sizeof(*evs), to);
		pagefault_enable();
		if (copied < n * sizeof(*evs)) {
			iov_iter_revert(to, copied);
			if (off)
				twheel_events_convert(evs, n, off, false);
			twheel_return_events(ctx, evs, seqs, n);
			break;
		}
		twheel_deliver_events(ctx, evs, uts, n);
		done += copied;
	}
	mutex_unlock(&ctx->mutex);
	mutex_unlock(&ctx->read_mutex);
	return done ?: -EAGAIN;
}

/*
 * The mutex is held to take events and to finish their delivery, but not
 * across the copy to userspace: a buffer that faults slowly (userfaultfd,
 * a network file mapping) must not stall the file's ioctls.  It only
 * stalls other readers of the file: the events pass through the file's
 * own buffer, a run at a time, which @read_mutex gives to one reader.  So
 * read() allocates nothing.  IOCB_NOWAIT: twheel_read_nowait().
 */
static ssize_t twheel_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct twheel_ctx *ctx = iocb->ki_filp->private_data;
	struct twheel_event *evs = ctx->revs;
	struct twheel_utimer **uts = ctx->ruts;
	size_t count = iov_iter_count(to);
	u32 *seqs = ctx->rseqs;
	ssize_t done = 0;
	int ret;

	if (count < sizeof(struct twheel_event))
		return -EINVAL;
	if (iocb->ki_flags & IOCB_NOWAIT)
		return twheel_read_nowait(ctx, to);

	for (;;) {
		if (!twheel_has_events(ctx)) {
			if (done)
				break;
			if (iocb->ki_filp->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(ctx->wq,
						       twheel_has_events(ctx));
			if (ret)
				return ret;
		}

		/*
		 * Events wait: a caught signal must not turn that into EINTR
		 * (which the header keeps for a read() before any event), as a
		 * pipe's reader waits for its mutex.  A fatal one ends it.
		 */
		if (mutex_lock_killable(&ctx->read_mutex))
			return done ?: -EINTR;
		while (count - done >= sizeof(*evs)) {
			unsigned int want = min_t(size_t, TWHEEL_READ_CHUNK,
						  (count - done) / sizeof(*evs));
			size_t copied;
			unsigned int n;
			ktime_t off;
			bool left;

			/*
			 * An ioctl may hold it while it faults on user
			 * memory: killable, as in twheel_ioctl().
			 */
			if (mutex_lock_killable(&ctx->mutex)) {
				mutex_unlock(&ctx->read_mutex);
				return done ?: -EINTR;
			}
			n = twheel_take_events(ctx, evs, seqs, uts, want);
			/* the clock of the events, which SETUP cannot change */
			off = twheel_timens_offset(ctx->clockid);
			mutex_unlock(&ctx->mutex);
			if (!n)
				break;
			if (off)
				twheel_events_convert(evs, n, off, true);
			copied = copy_to_iter(evs, n * sizeof(*evs), to);
			left = copied < n * sizeof(*evs);
			if (left) {
				iov_iter_revert(to, copied);
				if (off)
					twheel_events_convert(evs, n, off, false);
			}
			/* not killable: the events taken must go somewhere */
			mutex_lock(&ctx->mutex);
			if (left)
				twheel_return_events(ctx, evs, seqs, n);
			else
				twheel_deliver_events(ctx, evs, uts, n);
			mutex_unlock(&ctx->mutex);
			if (left) {
				mutex_unlock(&ctx->read_mutex);
				return done ?: -EFAULT;
			}
			done += n * sizeof(*evs);
		}
		mutex_unlock(&ctx->read_mutex);
		if (done)
			break;
	}
	return done;
}

static __poll_t twheel_poll(struct file *file, poll_table *wait)
{
	struct twheel_ctx *ctx = file->private_data;
	__poll_t mask;

	poll_wait(file, &ctx->wq, wait);
	/*
	 * Under @lock with the callback's test: an event queued after this
	 * look wakes us (and an edge-triggered epoll gets its edge), one
	 * queued before it is seen here.
	 */
	spin_lock_bh(&ctx->lock);
	ctx->polled = true;
	mask = ctx->ready_head ? EPOLLIN | EPOLLRDNORM : 0;
	spin_unlock_bh(&ctx->lock);
	return mask;
}

static struct twheel_user *twheel_user_get(kuid_t uid)
{
	struct twheel_user *user;

	mutex_lock(&twheel_users_mutex);
	hash_for_each_possible(twheel_users, user, node, __kuid_val(uid)) {
		if (uid_eq(user->uid, uid)) {
			refcount_inc(&user->ref);
			goto unlock;
		}
	}
	user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
	if (user) {
		user->uid = uid;
		refcount_set(&user->ref, 1);
		atomic_long_set(&user->timers, 0);
		hash_add(twheel_users, &user->node, __kuid_val(uid));
	}
unlock:
	mutex_unlock(&twheel_users_mutex);
	return user;
}

static void twheel_user_put(struct twheel_user *user)
{
	mutex_lock(&twheel_users_mutex);
	if (refcount_dec_and_test(&user->ref)) {
		WARN_ON_ONCE(atomic_long_read(&user->timers));
		hash_del(&user->node);
		kfree(user);
	}
	mutex_unlock(&twheel_users_mutex);
}

/* /proc/<pid>/fdinfo/<fd>, like timerfd's. */
static void twheel_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	unsigned long nready;

	spin_lock_bh(&ctx->lock);
	nready = ctx->nready;
	spin_unlock_bh(&ctx->lock);
	seq_printf(m, "timers:\t%lu\n", READ_ONCE(ctx->count));
	seq_printf(m, "events:\t%lu\n", nready);
	seq_printf(m, "tick_ns:\t%llu\n", READ_ONCE(ctx->tick_ns));
}

static int twheel_open(struct inode *inode, struct file *file)
{
	struct twheel_stats st;
	struct twheel_ctx *ctx;

	/*
	 * Only the hierarchical engine bounds the work one hold of a base
	 * lock does; with Scheme 6 or the Lawn the timers of one user can
	 * make a single tick or arm walk all of them (design.rst, "Bounded
	 * work under the lock").  So those are for the administrator only.
	 */
	twheel_get_stats(twheel_default(), &st);
	if (st.engine != TWHEEL_ENGINE_HIER && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->user = twheel_user_get(current_euid());
	if (!ctx->user) {
		kfree(ctx);
		return -ENOMEM;
	}
	mutex_init(&ctx->mutex);
	mutex_init(&ctx->read_mutex);
	spin_lock_init(&ctx->lock);
	init_waitqueue_head(&ctx->wq);
	xa_init_flags(&ctx->ucmds, XA_FLAGS_LOCK_BH);
	/*
	 * A random first generation keeps the handles of different files
	 * apart, so that a handle given to the wrong file gets ENOENT instead
	 * of naming that file's own timer of the same index (but for a 2^-32
	 * chance).
	 */
	ctx->gen = get_random_u32();
	ctx->wheel = twheel_default();
	twheel_get_stats(ctx->wheel, &st);
	ctx->tick_ns = st.tick_ns;
	ctx->clockid = CLOCK_MONOTONIC;
	file->private_data = ctx;
	/* read_iter() honours IOCB_NOWAIT: io_uring reads without a worker */
	file->f_mode |= FMODE_NOWAIT;
	return nonseekable_open(inode, file);
}

static int twheel_release(struct inode *inode, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	u32 c, i;

	/*
	 * No ioctl or read can run now.  Stop each timer, then unlink its
	 * event: callbacks of the timers not yet stopped still queue events
	 * on the ready list, linked through the table, so it is freed last.
	 */
	for (c = 0; c < ctx->nr_chunks; c++) {
		for (i = 0; i < TWHEEL_UCHUNK_TIMERS; i++) {
			struct twheel_utimer *ut = &ctx->chunks[c]->timers[i];

			if (!(ut->flags & TWHEEL_UT_LIVE))
				continue;
			twheel_timer_shutdown_sync(&ut->timer);
			twheel_withdraw_event(ctx, ut);
		}
		cond_resched();
	}
	for (c = 0; c < ctx->nr_chunks; c++) {
		kvfree(ctx->chunks[c]->periodic);
		kfree(ctx->chunks[c]);
	}
	kvfree(ctx->chunks);
	/* every timer of it is stopped: the last file frees the instance */
	twheel_inst_put(ctx->inst);
	twheel_uncharge(ctx, ctx->count);
	/* a pending command holds the file: none is left */
	WARN_ON_ONCE(!xa_empty(&ctx->ucmds));
	xa_destroy(&ctx->ucmds);
	twheel_user_put(ctx->user);
	mutex_destroy(&ctx->read_mutex);
	mutex_destroy(&ctx->mutex);
	kfree(ctx);
	return 0;
}

#ifdef CONFIG_IO_URING
/*
 * io_uring commands (the uapi header's "io_uring commands"): ARM, MODIFY,
 * CANCEL and BATCH as IORING_OP_URING_CMD, the ioctl's structure in the
 * SQE, its outputs in the CQE, run by the ioctl's own handlers.
 */

/*
 * Read the structure of @op from the command area of an SQE128, as
 * copy_struct_from_user() reads an ioctl's: @size at least the first
 * version, a longer structure's unknown tail zero.  The area may be the
 * SQ ring, which userspace may write meanwhile: @size is read once, and
 * what is checked is not read again.
 */
static int twheel_uring_copy_in(const struct twheel_ioctl_op *op, void *buf,
				const u8 *area)
{
	u32 size;

	memcpy(&size, area, sizeof(size));
	if (size < op->min_size || size > TWHEEL_URING_CMD_SIZE_MAX)
		return -EINVAL;
	if (size > op->size) {
		if (memchr_inv(area + op->size, 0, size - op->size))
			return -E2BIG;
		size = op->size;
	}
	memcpy(buf, area, size);
	memset(buf + size, 0, op->size - size);
	return 0;
}

#ifdef TWHEEL_HAVE_URING_EXPIRY
/**
 * struct twheel_uring_pdu - an ARM command pending until its expiry
 * @ctx:    the file
 * @handle: its timer, 0 until armed
 * @fired:  when it fired, for the completion
 * @res:    the completion's res; multishot: the final one, 0 until the
 *          command ends (under @ctx->lock)
 * @group:  multishot: the provided-buffer group of the records
 * @free:   the completion frees the timer (it fired)
 * @mshot:  TWHEEL_MSHOT_* bits (under @ctx->lock)
 *
 * In the command's own pdu: it lives as long as the command.
 */
struct twheel_uring_pdu {
	struct twheel_ctx *ctx;
	u64 handle;
	u64 fired;
	s32 res;
	u16 group;
	u8 free;
	u8 mshot;
};

/* struct twheel_uring_pdu mshot bits */
#define TWHEEL_MSHOT_ON		BIT(0)	/* a multishot command */
#define TWHEEL_MSHOT_TW		BIT(1)	/* its task work is queued or runs */
#define TWHEEL_MSHOT_REC	BIT(2)	/* an expiry record waits for it */

static struct twheel_uring_pdu *twheel_uring_pdu(struct io_uring_cmd *ioucmd)
{
	BUILD_BUG_ON(sizeof(struct twheel_uring_pdu) > sizeof(ioucmd->pdu));
	return (struct twheel_uring_pdu *)ioucmd->pdu;
}

/*
 * Before the ARM runs: the state a cancellation needs, and, on a worker
 * (IO_URING_F_UNLOCKED), the command's place among the ring's cancelable
 * ones, which io_uring_cmd_mark_cancelable() takes the ring's lock for:
 * a lock that IO_URING_F_CANCEL holds when it takes the file's mutex, so
 * it must not be taken under that mutex.  From the submitting task, which
 * holds the ring's lock, twheel_uring_arm_expiry() marks it once the ARM
 * can no longer be sent to a worker.  A cancellation before the timer is
 * armed finds @handle 0 and leaves the command for a later pass.
 */
static void twheel_uring_expiry_prepare(struct io_uring_cmd *ioucmd,
					struct twheel_ctx *ctx,
					unsigned int issue_flags)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);

	pdu->ctx = ctx;
	pdu->handle = 0;
	pdu->res = 0;
	pdu->mshot = 0;
	if (issue_flags & IO_URING_F_UNLOCKED)
		io_uring_cmd_mark_cancelable(ioucmd, issue_flags);
}

/*
 * Post the completion from the task of the command's ring.  After an
 * expiry, free the timer first, if no CANCEL did (a CANCEL after the
 * expiry finds the timer and reports it fired).  The mutex, then @lock:
 * the callback that queued this has left its critical section, and
 * touches neither the timer nor the file after it.  The file lives until
 * the command completes.
 */
static void twheel_uring_complete(struct io_uring_cmd *ioucmd,
				  unsigned int issue_flags)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);
	struct twheel_ctx *ctx = pdu->ctx;
	struct twheel_utimer *ut;

	if (pdu->free) {
		mutex_lock(&ctx->mutex);
		spin_lock_bh(&ctx->lock);
		spin_unlock_bh(&ctx->lock);
		ut = twheel_lookup(ctx, pdu->handle);
		if (ut && (ut->flags & TWHEEL_UT_URING)) {
			twheel_ut_free(ctx, ut);
			/* its callback may be returning: see twheel_ut_alloc() */
			ut->flags = TWHEEL_UT_DELIVERED;
			twheel_uncharge(ctx, 1);
		}
		mutex_unlock(&ctx->mutex);
		/* in the clock of the ring's task, as read() gives it */
		pdu->fired = twheel_time_to_user(pdu->fired,
						 twheel_timens_offset(ctx->clockid));
	}
	twheel_uring_cmd_done(ioucmd, pdu->res, pdu->fired, issue_flags);
}

TWHEEL_DEFINE_URING_TW(twheel_uring_complete);

/* The timer's callback (softirq): its command completes, with 0. */
static void twheel_uring_expired(struct twheel_ctx *ctx,
				 struct twheel_utimer *ut)
{
	struct io_uring_cmd *ioucmd;
	struct twheel_uring_pdu *pdu;

	spin_lock(&ctx->lock);
	ioucmd = xa_erase(&ctx->ucmds, twheel_ut_index(ut));
	if (ioucmd) {
		pdu = twheel_uring_pdu(ioucmd);
		pdu->res = 0;
		pdu->fired = twheel_fire_time(&ut->timer);
		pdu->free = true;
		io_uring_cmd_complete_in_task(ioucmd, twheel_uring_complete_tw);
	}
	spin_unlock(&ctx->lock);
}

#ifdef TWHEEL_HAVE_URING_MSHOT
/*
 * Multishot ARM (IORING_URING_CMD_MULTISHOT, a periodic timer): every
 * expiry is recorded in the timer's side entry as for read(), merged
 * into the waiting record as an overrun if the task has not taken it
 * yet, and the command's task work posts each record in a buffer of the
 * SQE's group, with IORING_CQE_F_MORE.  One task work at a time
 * (TWHEEL_MSHOT_TW): a request has one task-work node.  The command
 * ends once, by whoever erases it from @ucmds (under @ctx->lock): a
 * CANCEL, the ring's cancellation, or the task work itself when it has
 * no buffer; @res says how, and the task work, or the ring's
 * cancellation if none is queued, posts that final completion.
 */
static bool twheel_uring_is_mshot(const struct io_uring_cmd *ioucmd)
{
	return ioucmd->flags & IORING_URING_CMD_MULTISHOT;
}

static void twheel_uring_mshot_work(struct io_uring_cmd *ioucmd,
				    unsigned int issue_flags);
TWHEEL_DEFINE_URING_TW(twheel_uring_mshot_work);

/* Queue the task work unless it is queued or running; @ctx->lock held. */
static void twheel_uring_mshot_kick(struct io_uring_cmd *ioucmd,
				    struct twheel_uring_pdu *pdu)
{
	if (pdu->mshot & TWHEEL_MSHOT_TW)
		return;
	pdu->mshot |= TWHEEL_MSHOT_TW;
	io_uring_cmd_complete_in_task(ioucmd, twheel_uring_mshot_work_tw);
}

/*
 * The timer's callback, @ctx->lock held: a record waits for the task
 * work from now on.  Returns whether it is a new one (else the expiry is
 * an overrun of the waiting one).
 */
static bool twheel_uring_mshot_fired(struct twheel_ctx *ctx,
				     struct twheel_utimer *ut)
{
	struct io_uring_cmd *ioucmd = xa_load(&ctx->ucmds, twheel_ut_index(ut));
	struct twheel_uring_pdu *pdu;

	/* ended: the ender is stopping the timer */
	if (!ioucmd)
		return false;
	pdu = twheel_uring_pdu(ioucmd);
	if (pdu->mshot & TWHEEL_MSHOT_REC)
		return false;
	pdu->mshot |= TWHEEL_MSHOT_REC;
	twheel_uring_mshot_kick(ioucmd, pdu);
	return true;
}

/*
 * End the multishot command of @ut, stopped, mutex held: unless another
 * ender came first, it completes with @res, by its task work if that is
 * queued, else by the caller if @now is given (*@now set), else by a
 * task work queued here.  A waiting record is dropped, as a CANCEL
 * withdraws read()'s event.  Returns whether this call ended it: then
 * the caller frees the timer.
 */
static bool twheel_uring_mshot_end(struct twheel_ctx *ctx,
				   struct twheel_utimer *ut, int res, bool *now)
{
	struct io_uring_cmd *ioucmd;
	struct twheel_uring_pdu *pdu;

	lockdep_assert_held(&ctx->mutex);
	spin_lock_bh(&ctx->lock);
	ioucmd = xa_erase(&ctx->ucmds, twheel_ut_index(ut));
	if (ioucmd) {
		pdu = twheel_uring_pdu(ioucmd);
		pdu->res = res;
		pdu->mshot &= ~TWHEEL_MSHOT_REC;
		if (now && !(pdu->mshot & TWHEEL_MSHOT_TW)) {
			pdu->mshot |= TWHEEL_MSHOT_TW;
			*now = true;
		} else {
			twheel_uring_mshot_kick(ioucmd, pdu);
		}
	}
	spin_unlock_bh(&ctx->lock);
	return ioucmd;
}

/*
 * The task work could not post a record (@res): stop the timer and end
 * the command with @res, unless a CANCEL ended it meanwhile.  The timer
 * is freed: nothing would take its expiries.
 */
static void twheel_uring_mshot_stop(struct io_uring_cmd *ioucmd, int res)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);
	struct twheel_ctx *ctx = pdu->ctx;
	struct twheel_utimer *ut;

	mutex_lock(&ctx->mutex);
	ut = twheel_lookup(ctx, pdu->handle);
	if (ut && (ut->flags & TWHEEL_UT_URING)) {
		twheel_timer_shutdown_sync(&ut->timer);
		if (twheel_uring_mshot_end(ctx, ut, res, NULL)) {
			twheel_ut_free(ctx, ut);
			twheel_uncharge(ctx, 1);
		}
	}
	mutex_unlock(&ctx->mutex);
}

/*
 * Copy @ev into a buffer of the command's group and post it, with
 * IORING_CQE_F_MORE.  Returns 0, or why the command must end: ENOBUFS
 * (the group is empty), EMSGSIZE (the buffer cannot hold a record),
 * EFAULT, EOVERFLOW (the completion queue took no CQE).
 */
static int twheel_uring_mshot_post(struct io_uring_cmd *ioucmd,
				   const struct twheel_event *ev,
				   unsigned int issue_flags)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);
	size_t len = sizeof(*ev);
	struct io_br_sel sel;
	int ret = 0;

	sel = io_uring_cmd_buffer_select(ioucmd, pdu->group, &len, issue_flags);
	if (sel.val < 0)
		return sel.val;
	if (!sel.addr)
		return -ENOBUFS;
	if (len < sizeof(*ev))
		ret = -EMSGSIZE;
	else if (copy_to_user(sel.addr, ev, sizeof(*ev)))
		ret = -EFAULT;
	/* 0 gives the buffer back */
	sel.val = ret ? 0 : sizeof(*ev);
	if (io_uring_mshot_cmd_post_cqe(ioucmd, &sel, issue_flags) && !ret)
		ret = -EOVERFLOW;
	return ret;
}

/*
 * Task work: post the waiting records, then, once the command ended,
 * its final completion, without IORING_CQE_F_MORE.  The record is read
 * under @ctx->lock while the command has not ended, so while its timer
 * is live: an ender frees the timer only after it erased the command.
 */
static void twheel_uring_mshot_work(struct io_uring_cmd *ioucmd,
				    unsigned int issue_flags)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);
	struct twheel_ctx *ctx = pdu->ctx;
	struct twheel_uperiodic *p;
	struct twheel_utimer *ut;
	struct twheel_event ev;
	ktime_t off;
	int ret;

	for (;;) {
		spin_lock_bh(&ctx->lock);
		if (pdu->res)
			break;
		if (!(pdu->mshot & TWHEEL_MSHOT_REC)) {
			pdu->mshot &= ~TWHEEL_MSHOT_TW;
			spin_unlock_bh(&ctx->lock);
			return;
		}
		pdu->mshot &= ~TWHEEL_MSHOT_REC;
		ut = twheel_ut_at(ctx, lower_32_bits(pdu->handle));
		p = twheel_ut_periodic(ut);
		ev = (struct twheel_event) {
			.handle = pdu->handle,
			.cookie = ut->cookie,
			.expires = p->ev_expires,
			.fired = p->ev_fired,
			.overrun = p->overrun,
			.flags = TWHEEL_EVENT_PERIODIC,
		};
		spin_unlock_bh(&ctx->lock);
		/* in the clock of the ring's task, as read() gives it */
		off = twheel_timens_offset(ctx->clockid);
		ev.expires = twheel_time_to_user(ev.expires, off);
		ev.fired = twheel_time_to_user(ev.fired, off);
		ret = twheel_uring_mshot_post(ioucmd, &ev, issue_flags);
		if (ret)
			twheel_uring_mshot_stop(ioucmd, ret);
	}
	spin_unlock_bh(&ctx->lock);
	twheel_uring_cmd_done(ioucmd, pdu->res, 0, issue_flags);
}
#else
static bool twheel_uring_is_mshot(const struct io_uring_cmd *ioucmd)
{
	return false;
}

static bool twheel_uring_mshot_end(struct twheel_ctx *ctx,
				   struct twheel_utimer *ut, int res, bool *now)
{
	return false;
}
#endif /* TWHEEL_HAVE_URING_MSHOT */

/*
 * A CANCEL stopped the timer, mutex held: its command, if the expiry did
 * not take it, completes with ECANCELED.  Returns whether it had one.
 */
static bool twheel_uring_drop(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	struct io_uring_cmd *ioucmd;
	struct twheel_uring_pdu *pdu;

	if (!(ut->flags & TWHEEL_UT_URING))
		return false;
	if (ut->flags & TWHEEL_UT_PERIODIC)
		return twheel_uring_mshot_end(ctx, ut, -ECANCELED, NULL);
	ioucmd = xa_erase_bh(&ctx->ucmds, twheel_ut_index(ut));
	if (!ioucmd)
		return false;
	pdu = twheel_uring_pdu(ioucmd);
	pdu->res = -ECANCELED;
	pdu->fired = 0;
	pdu->free = false;
	io_uring_cmd_complete_in_task(ioucmd, twheel_uring_complete_tw);
	return true;
}

/*
 * ARM with TWHEEL_ARM_URING_EXPIRY, mutex held: a one-shot timer whose
 * command stays pending (-EIOCBQUEUED) until it fires or is cancelled.
 * The command is in @ucmds before the timer can fire.
 */
static int twheel_uring_arm_expiry(struct twheel_ucmd *ucmd)
{
	struct io_uring_cmd *ioucmd = ucmd->ioucmd;
	struct twheel_arm *cmd = ucmd->cmd;
	struct twheel_ctx *ctx = ucmd->ctx;
	const struct twheel_timer_spec *spec = &cmd->spec;
	struct twheel_uring_pdu *pdu;
	struct twheel_utimer *ut;
	u64 __user *uhandle;
	u64 handle;
	int ret;

	if (!ioucmd)
		return -EINVAL;
	ret = twheel_check_spec(spec, ctx->tick_ns);
	if (ret)
		return ret;
	/* one completion per command, but for a multishot one's period */
	if (!spec->period != !twheel_uring_is_mshot(ioucmd))
		return -EINVAL;
	uhandle = u64_to_user_ptr(READ_ONCE(ioucmd->sqe->addr));
	ret = twheel_charge(ctx, 1);
	if (ret)
		return ret;
	ret = twheel_ut_alloc(ctx, &ut);
	if (ret)
		goto uncharge;
	ret = twheel_ut_prepare(ut, spec);
	if (ret)
		goto free;
	ret = xa_insert_bh(&ctx->ucmds, twheel_ut_index(ut), ioucmd,
			   GFP_KERNEL_ACCOUNT);
	if (ret)
		goto free;
	handle = twheel_ut_handle(ut);
	if (uhandle && put_user(handle, uhandle)) {
		ret = -EFAULT;
		goto erase;
	}
	twheel_ut_set(ut, spec);
	ut->flags |= TWHEEL_UT_URING;
	pdu = twheel_uring_pdu(ioucmd);
	pdu->handle = handle;
	if (spec->period) {
		pdu->group = READ_ONCE(ioucmd->sqe->buf_group);
		pdu->mshot = TWHEEL_MSHOT_ON;
	}
	if (!(ucmd->issue_flags & IO_URING_F_UNLOCKED))
		io_uring_cmd_mark_cancelable(ioucmd, ucmd->issue_flags);
	ret = twheel_timer_start(&ut->timer, twheel_expiry(ctx, spec),
				 spec->slack, twheel_spec_mode(spec));
	if (!ret)
		return -EIOCBQUEUED;
	pdu->handle = 0;
erase:
	xa_erase_bh(&ctx->ucmds, twheel_ut_index(ut));
free:
	twheel_ut_free(ctx, ut);
uncharge:
	twheel_uncharge(ctx, 1);
	return ret;
}

/*
 * IO_URING_F_CANCEL: the ring goes away (or its task exits) with the
 * command pending.  Stop the timer and complete the command with
 * ECANCELED, unless the expiry took it first: then its completion is on
 * its way.  A command not armed yet (@handle 0) is left for the next pass.
 */
static void twheel_uring_cancel(struct io_uring_cmd *ioucmd,
				unsigned int issue_flags)
{
	struct twheel_uring_pdu *pdu = twheel_uring_pdu(ioucmd);
	struct twheel_ctx *ctx = pdu->ctx;
	struct twheel_utimer *ut;
	bool mine = false;

	mutex_lock(&ctx->mutex);
	ut = pdu->handle ? twheel_lookup(ctx, pdu->handle) : NULL;
	if (ut && (ut->flags & (TWHEEL_UT_URING | TWHEEL_UT_PERIODIC)) ==
		  (TWHEEL_UT_URING | TWHEEL_UT_PERIODIC)) {
		/* multishot: its task work, if queued, completes it */
		twheel_timer_shutdown_sync(&ut->timer);
		if (twheel_uring_mshot_end(ctx, ut, -ECANCELED, &mine)) {
			twheel_ut_free(ctx, ut);
			twheel_uncharge(ctx, 1);
		}
	} else if (ut && (ut->flags & TWHEEL_UT_URING)) {
		twheel_timer_shutdown_sync(&ut->timer);
		if (xa_erase_bh(&ctx->ucmds, twheel_ut_index(ut))) {
			twheel_ut_free(ctx, ut);
			twheel_uncharge(ctx, 1);
			mine = true;
		}
	}
	mutex_unlock(&ctx->mutex);
	if (mine)
		twheel_uring_cmd_done(ioucmd, -ECANCELED, 0, issue_flags);
}
#else
static void twheel_uring_expiry_prepare(struct io_uring_cmd *ioucmd,
					struct twheel_ctx *ctx,
					unsigned int issue_flags)
{
}
#endif /* TWHEEL_HAVE_URING_EXPIRY */

/*
 * Run one command.  Returns its result for the CQE's res and sets *@res2
 * for its first extra field, or returns -EAGAIN from the submitting task
 * when the file's mutex is taken, for io_uring to run it again from a
 * worker thread, which may sleep for it.
 */
static int twheel_uring_cmd_run(struct io_uring_cmd *ioucmd,
				unsigned int issue_flags, u64 *res2)
{
	union twheel_ucmd_buffer buf;
	struct twheel_ucmd ucmd = {
		.ctx = ioucmd->file->private_data,
		.cmd = &buf,
		.ioucmd = ioucmd,
		.issue_flags = issue_flags,
	};
	const struct twheel_ioctl_op *op;
	int ret;

	switch (ioucmd->cmd_op) {
	case TWHEEL_IOC_ARM:
		/* the handle has nowhere else to go */
		if (!(issue_flags & IO_URING_F_CQE32))
			return -EOPNOTSUPP;
		break;
	case TWHEEL_IOC_MODIFY:
	case TWHEEL_IOC_CANCEL:
	case TWHEEL_IOC_BATCH:
		break;
	default:
		return -ENOTTY;
	}
	/* A registered buffer means nothing to these commands. */
	if (ioucmd->flags & IORING_URING_CMD_FIXED)
		return -EINVAL;
	/* A 64-byte SQE's 16 bytes hold no structure of ours. */
	if (!(issue_flags & IO_URING_F_SQE128))
		return -EOPNOTSUPP;
	op = &twheel_ioctl_ops[_IOC_NR(ioucmd->cmd_op) - TWHEEL_CMD_BASE];
	ret = twheel_uring_copy_in(op, &buf, twheel_uring_cmd_area(ioucmd));
	if (ret)
		return ret;
	ucmd.user_size = op->size;
#ifdef TWHEEL_HAVE_URING_MSHOT
	/* multishot: an ARM that completes at its (periodic) expiries */
	if (twheel_uring_is_mshot(ioucmd) &&
	    (ioucmd->cmd_op != TWHEEL_IOC_ARM ||
	     !(buf.arm.flags & TWHEEL_ARM_URING_EXPIRY)))
		return -EINVAL;
#endif
	if (ioucmd->cmd_op == TWHEEL_IOC_ARM &&
	    (buf.arm.flags & TWHEEL_ARM_URING_EXPIRY))
		twheel_uring_expiry_prepare(ioucmd, ucmd.ctx, issue_flags);
	ret = twheel_ucmd_run(op, &ucmd, issue_flags & IO_URING_F_NONBLOCK);
	if (ret < 0)
		return ret;
	switch (ioucmd->cmd_op) {
	case TWHEEL_IOC_ARM:
		*res2 = buf.arm.out_handle;
		break;
	case TWHEEL_IOC_CANCEL:
		ret = buf.cancel.out_status;
		break;
	case TWHEEL_IOC_BATCH:
		*res2 = buf.batch.out_failed;
		break;
	}
	return ret;
}

/*
 * ->uring_cmd(): every command completes here, in the call, but for
 * EAGAIN and an ARM that completes at its expiry; the outputs need
 * io_uring_cmd_done() to reach the CQE.
 */
static int twheel_uring_cmd(struct io_uring_cmd *ioucmd,
			    unsigned int issue_flags)
{
	u64 res2 = 0;
	int ret;

#ifdef TWHEEL_HAVE_URING_EXPIRY
	if (issue_flags & IO_URING_F_CANCEL) {
		twheel_uring_cancel(ioucmd, issue_flags);
		return 0;
	}
#endif
	ret = twheel_uring_cmd_run(ioucmd, issue_flags, &res2);
	/* EIOCBQUEUED: an ARM pending until its expiry */
	if (ret == -EAGAIN || ret == -EIOCBQUEUED)
		return ret;
	twheel_uring_cmd_done(ioucmd, ret, res2, issue_flags);
	return -EIOCBQUEUED;
}
#endif /* CONFIG_IO_URING */

static const struct file_operations twheel_fops = {
	.owner = THIS_MODULE,
	.open = twheel_open,
	.release = twheel_release,
	.read_iter = twheel_read_iter,
	.poll = twheel_poll,
	.unlocked_ioctl = twheel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
#ifdef CONFIG_IO_URING
	.uring_cmd = twheel_uring_cmd,
#endif
	.show_fdinfo = twheel_show_fdinfo,
};

static struct miscdevice twheel_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "twheel",
	.fops = &twheel_fops,
	.mode = 0666,
};

int twheel_dev_init(unsigned long max_per_fd, unsigned long max_per_user,
		    unsigned int max_instances, const struct twheel_attr *dflt)
{
	/* The ABI is the same for 32 and 64-bit callers: no padding holes. */
	BUILD_BUG_ON(sizeof(struct twheel_api) != 72);
	BUILD_BUG_ON(sizeof(struct twheel_setup) != 24);
	BUILD_BUG_ON(sizeof(struct twheel_timer_spec) != 40);
	BUILD_BUG_ON(sizeof(struct twheel_arm) != 56);
	BUILD_BUG_ON(sizeof(struct twheel_modify) != 56);
	BUILD_BUG_ON(sizeof(struct twheel_cancel) != 24);
	BUILD_BUG_ON(sizeof(struct twheel_query) != 56);
	BUILD_BUG_ON(sizeof(struct twheel_batch_op) != 56);
	BUILD_BUG_ON(sizeof(struct twheel_batch) != 32);
	BUILD_BUG_ON(sizeof(struct twheel_event) != 48);
	BUILD_BUG_ON(sizeof(struct twheel_api_v1) != 48);
	BUILD_BUG_ON(TWHEEL_UCHUNK_TIMERS < 8);

	/*
	 * As inotify sizes max_user_watches: a share of the memory the chunks
	 * can come from (not highmem), here as if every timer were periodic;
	 * divided before it is turned into bytes, which a 32-bit unsigned
	 * long could not hold.
	 */
	if (!max_per_user)
		max_per_user = max((totalram_pages() - totalhigh_pages()) / 10 *
				   PAGE_SIZE / (sizeof(struct twheel_utimer) +
						sizeof(struct twheel_uperiodic)),
				   1024UL);
	twheel_max_timers_per_user = max_per_user;
	twheel_max_timers_per_fd = max_per_fd ? max_per_fd : max_per_user;
	twheel_max_insts = max_instances;
	twheel_dflt = *dflt;
	return misc_register(&twheel_misc);
}

void twheel_dev_exit(void)
{
	misc_deregister(&twheel_misc);
}
