// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: the /dev/twheel device - file contexts, handles and events
 *
 * Every open file gets a context (struct twheel_ctx) that owns its timers.
 * A timer (struct twheel_utimer) is a twheel_timer on the default wheel,
 * armed on the base of the CPU whose thread issued the ioctl (see
 * Documentation/design.rst for why), plus what userspace gave and needs
 * back: handle, cookie, period, slack, and the state of its pending
 * event.
 *
 * Handles: timers sit in an xarray indexed by a 32-bit id allocated
 * cyclically, so an id is not reused until the id space wraps; each wrap
 * bumps a generation kept in the handle's upper 32 bits.  A lookup checks
 * the full 64-bit handle, so a stale handle never names a newer timer.
 *
 * Events: the callback allocates nothing.  It links the timer itself onto
 * the context's ready list (or, if its previous event is still unread,
 * counts an overrun), so no expiration can be dropped for lack of memory.
 * read() takes events off that list.  A one-shot timer ends when its event
 * has been copied out; a periodic one re-arms from its callback, counting
 * the periods a late tick skipped as overruns.
 *
 * Locking, lifetimes and what QUERY and CANCEL report mid-callback: the
 * DOC block below, which Documentation/design.rst includes.
 */

/**
 * DOC: Device locking and lifetimes
 *
 * Locking: the file's @mutex serialises the ioctls and read()'s bookkeeping, so a
 * handle cannot be freed under a concurrent operation; read() drops it
 * while it copies events out, so a slow-faulting buffer stalls no ioctl.
 * @lock (taken in the callback, softirq) protects the ready list and the
 * event fields.  Order: mutex -> lock -> the lock of the timer's wheel
 * base, and lock -> the wait queue's lock (wake-ups happen under @lock).
 * Cancel and modify stop the timer with
 * twheel_timer_shutdown_sync()/cancel_sync() with only the mutex held, so
 * a running callback finishes first and cannot re-queue a withdrawn event.
 *
 * Lifetimes: release() runs when no ioctl or read() can, and stops every
 * timer still in @timers before freeing it and the context.  A one-shot
 * timer is hidden from the ioctls once read() took its event and leaves
 * @timers when read() has delivered it, possibly while its callback is
 * still returning; the callback therefore touches neither
 * the timer nor the context after dropping @lock (it wakes readers before),
 * and read() can only take the event after that point.
 *
 * What QUERY and CANCEL report about a timer whose callback runs: a
 * periodic timer is armed until it is cancelled, so QUERY shows it
 * PENDING throughout (due now, until its callback re-armed it) and CANCEL
 * reports TWHEEL_CANCEL_PENDING; a one-shot timer is PENDING until its
 * callback queued the event, then has that EVENT.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/twheel.h>
#include <uapi/linux/twheel.h>

#include "twheel_internal.h"

/* Limits and sizes of the userspace API. */
#define TWHEEL_MAX_BATCH	65536	/* records per TWHEEL_IOC_BATCH */
#define TWHEEL_READ_CHUNK	64	/* events gathered per lock hold in read() */

static unsigned long twheel_max_timers_per_fd;
static unsigned long twheel_max_timers_per_user;
static struct kmem_cache *twheel_utimer_cache;

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

/**
 * struct twheel_ctx - the state of one open /dev/twheel file
 * @mutex:   serialises ioctls and read()
 * @lock:    protects @ready and the event fields of the timers
 * @ready:   timers with an unread event, oldest first
 * @nready:  length of @ready
 * @wq:      readers and pollers wait here for @ready to fill
 * @timers:  live timers by handle id
 * @next_id: cyclic allocation cursor of @timers
 * @gen:     generation in the upper half of handles, bumped on wrap
 * @count:   live timers
 * @wheel:   the wheel the timers run on
 * @tick_ns: its tick length
 * @user:    the opener, charged for every timer of the file
 */
struct twheel_ctx {
	struct mutex mutex;	/* serialises ioctls and read() */
	spinlock_t lock;	/* ready list and event fields; softirq-safe */
	struct list_head ready;
	unsigned long nready;
	wait_queue_head_t wq;
	struct xarray timers;
	u32 next_id;
	u32 gen;
	unsigned long count;
	struct twheel *wheel;
	u64 tick_ns;
	struct twheel_user *user;
};

/**
 * struct twheel_utimer - a timer created through /dev/twheel
 * @timer:   the wheel timer
 * @ctx:     owning file context
 * @handle:  full 64-bit handle
 * @cookie:  user cookie
 * @period:  ns, 0 for one-shot
 * @slack:   ns
 * @ready:   link on @ctx->ready while an event is unread, else empty
 * @ev_expires: expiry reported by the unread event
 * @ev_fired: when it fired
 * @overrun: expirations merged into the unread event
 * @arm_seq: bumped by every MODIFY, so that read() can tell that an event it
 *           took is of an older arming
 * @delivering: a one-shot timer whose event read() is copying out; it is
 *           gone for the ioctls, and read() frees it or puts it back
 */
struct twheel_utimer {
	struct twheel_timer timer;
	struct twheel_ctx *ctx;
	u64 handle;
	u64 cookie;
	u64 period;
	u64 slack;
	struct list_head ready;
	ktime_t ev_expires;
	ktime_t ev_fired;
	u64 overrun;
	u32 arm_seq;
	bool delivering;
};

static void twheel_utimer_fire(struct twheel_timer *timer)
{
	struct twheel_utimer *ut = container_of(timer, struct twheel_utimer, timer);
	struct twheel_ctx *ctx = ut->ctx;
	ktime_t expires = twheel_timer_expires(timer);
	ktime_t now = twheel_fire_time(timer);
	bool wake = false;

	spin_lock(&ctx->lock);
	if (list_empty(&ut->ready)) {
		ut->ev_expires = expires;
		ut->ev_fired = now;
		ut->overrun = 0;
		list_add_tail(&ut->ready, &ctx->ready);
		ctx->nready++;
		wake = true;
	} else {
		ut->overrun++;
	}
	if (ut->period) {
		/* Periods skipped by a late tick are overruns, not bursts. */
		u64 missed = div64_u64(ktime_sub(now, expires), ut->period);

		ut->overrun += missed;
		/*
		 * Saturate: with a period near KTIME_MAX the sum wraps, and a
		 * negative expiry would be refused, leaving the timer unarmed.
		 */
		expires = ktime_add_safe(expires,
					 ns_to_ktime((missed + 1) * ut->period));
		/* Fails only with -ESHUTDOWN, when cancel is stopping us. */
		twheel_timer_start(timer, expires, ut->slack, TWHEEL_MODE_ABS);
	}
	/*
	 * Wake with the lock held.  Once it is dropped, read() may take the
	 * event and free a one-shot timer, and then close() the file, whose
	 * release() frees @ctx without waiting for this callback (the timer is
	 * no longer in @ctx->timers): nothing of either may be touched after
	 * the unlock.
	 */
	if (wake)
		wake_up_interruptible_poll(&ctx->wq, EPOLLIN | EPOLLRDNORM);
	spin_unlock(&ctx->lock);
	twheel_delay(TWHEEL_DELAY_EVENT_QUEUED);
}

static struct twheel_utimer *twheel_lookup(struct twheel_ctx *ctx, u64 handle)
{
	struct twheel_utimer *ut;

	lockdep_assert_held(&ctx->mutex);
	ut = xa_load(&ctx->timers, lower_32_bits(handle));
	if (!ut || ut->handle != handle || ut->delivering)
		return NULL;
	return ut;
}

/* Validate the user's arming parameters. */
static int twheel_check_arm(u32 flags, u64 expires, u64 period, u64 slack,
			    u64 tick_ns)
{
	if (flags & ~TWHEEL_ARM_ABS)
		return -EINVAL;
	if (expires > KTIME_MAX || slack > KTIME_MAX || period > KTIME_MAX)
		return -EINVAL;
	if (period && period < tick_ns)
		return -EINVAL;
	return 0;
}

static int twheel_start_utimer(struct twheel_utimer *ut, u32 flags,
			       u64 expires)
{
	return twheel_timer_start(&ut->timer, expires, ut->slack,
				  flags & TWHEEL_ARM_ABS ? TWHEEL_MODE_ABS :
							   TWHEEL_MODE_REL);
}

/*
 * Withdraw the unread event of a timer that can no longer fire.  The caller
 * has stopped the timer, so its callback, the only one to queue its event,
 * cannot run; and it holds the mutex (or is release()), so read(), the only
 * other one to dequeue it, cannot either.  An empty ut->ready therefore
 * stays empty and needs no lock; a queued one may see its neighbours change
 * under ctx->lock, but never becomes empty by itself.
 */
static bool twheel_withdraw_event(struct twheel_ctx *ctx,
				  struct twheel_utimer *ut)
{
	bool had_event;

	if (list_empty(&ut->ready))
		return false;
	spin_lock_bh(&ctx->lock);
	had_event = !list_empty(&ut->ready);
	if (had_event) {
		list_del_init(&ut->ready);
		ctx->nready--;
	}
	spin_unlock_bh(&ctx->lock);
	return had_event;
}

static int twheel_do_arm(struct twheel_ctx *ctx, u32 flags, u64 expires,
			 u64 period, u64 slack, u64 cookie, u64 *handle)
{
	struct twheel_utimer *ut;
	u32 id;
	int ret;

	ret = twheel_check_arm(flags, expires, period, slack, ctx->tick_ns);
	if (ret)
		return ret;
	if (ctx->count >= twheel_max_timers_per_fd)
		return -ENOSPC;
	if (atomic_long_inc_return(&ctx->user->timers) >
	    twheel_max_timers_per_user) {
		ret = -ENOSPC;
		goto err_uncharge;
	}

	ut = kmem_cache_zalloc(twheel_utimer_cache, GFP_KERNEL_ACCOUNT);
	if (!ut) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	ret = xa_alloc_cyclic(&ctx->timers, &id, ut, xa_limit_32b,
			      &ctx->next_id, GFP_KERNEL_ACCOUNT);
	if (ret < 0)
		goto err_free_utimer;
	/*
	 * The id space wrapped, or the xarray failed to allocate at the
	 * cursor and retried from the lowest free id (it returns 1 for both):
	 * either way the id may have been used before, so a new generation.
	 */
	if (ret == 1)
		ctx->gen++;

	ut->ctx = ctx;
	ut->handle = (u64)ctx->gen << 32 | id;
	ut->cookie = cookie;
	ut->period = period;
	ut->slack = slack;
	INIT_LIST_HEAD(&ut->ready);
	twheel_timer_setup(&ut->timer, ctx->wheel, twheel_utimer_fire, 0);
	ret = twheel_start_utimer(ut, flags, expires);
	if (ret)
		goto err_erase_id;
	WRITE_ONCE(ctx->count, ctx->count + 1);
	*handle = ut->handle;
	return 0;

err_erase_id:
	xa_erase(&ctx->timers, id);
err_free_utimer:
	kmem_cache_free(twheel_utimer_cache, ut);
err_uncharge:
	atomic_long_dec(&ctx->user->timers);
	return ret;
}

static int twheel_do_modify(struct twheel_ctx *ctx, u64 handle, u32 flags,
			    u64 expires, u64 period, u64 slack, u64 cookie)
{
	struct twheel_utimer *ut;
	int ret;

	ret = twheel_check_arm(flags, expires, period, slack, ctx->tick_ns);
	if (ret)
		return ret;
	ut = twheel_lookup(ctx, handle);
	if (!ut)
		return -ENOENT;

	/* Stop it (a periodic callback may be re-arming it right now)... */
	twheel_timer_cancel_sync(&ut->timer);
	twheel_withdraw_event(ctx, ut);
	/* ...then no callback runs and nothing else touches it. */
	ut->arm_seq++;
	ut->cookie = cookie;
	ut->period = period;
	ut->slack = slack;
	return twheel_start_utimer(ut, flags, expires);
}

static void twheel_free_utimer(struct twheel_ctx *ctx, struct twheel_utimer *ut)
{
	xa_erase(&ctx->timers, lower_32_bits(ut->handle));
	WRITE_ONCE(ctx->count, ctx->count - 1);
	atomic_long_dec(&ctx->user->timers);
	kmem_cache_free(twheel_utimer_cache, ut);
}

static int twheel_do_cancel(struct twheel_ctx *ctx, u64 handle, u32 *status)
{
	struct twheel_utimer *ut = twheel_lookup(ctx, handle);
	int pending;

	if (!ut)
		return -ENOENT;
	/* Shutdown: a periodic callback running now cannot re-arm it. */
	pending = twheel_timer_shutdown_sync(&ut->timer);
	twheel_withdraw_event(ctx, ut);
	/*
	 * A periodic timer is armed until it is cancelled, even while its
	 * callback runs or its event waits; a one-shot one is no longer once
	 * its callback began.
	 */
	*status = pending || ut->period ? TWHEEL_CANCEL_PENDING :
					  TWHEEL_CANCEL_FIRED;
	twheel_free_utimer(ctx, ut);
	return 0;
}

static long twheel_ioctl_api(struct twheel_ctx *ctx, void __user *arg)
{
	struct twheel_api api;
	struct twheel_stats st;

	twheel_get_stats(ctx->wheel, &st);
	memset(&api, 0, sizeof(api));
	api.abi_version = TWHEEL_ABI_VERSION;
	api.event_size = sizeof(struct twheel_event);
	api.features = TWHEEL_FEATURE_PERIODIC | TWHEEL_FEATURE_SLACK |
		       TWHEEL_FEATURE_BATCH | TWHEEL_FEATURE_QUERY;
	switch (st.engine) {
	case TWHEEL_ENGINE_SCHEME6:
		api.features |= TWHEEL_FEATURE_ENGINE_SCHEME6;
		break;
	case TWHEEL_ENGINE_LAWN:
		api.features |= TWHEEL_FEATURE_ENGINE_LAWN;
		break;
	default:
		api.features |= TWHEEL_FEATURE_ENGINE_HIER;
		break;
	}
	api.tick_ns = st.tick_ns;
	api.slots = st.slots;
	api.max_batch = TWHEEL_MAX_BATCH;
	api.max_timers_per_fd = twheel_max_timers_per_fd;
	api.max_timers_per_user = twheel_max_timers_per_user;
	return copy_to_user(arg, &api, sizeof(api)) ? -EFAULT : 0;
}

static long twheel_ioctl_arm(struct twheel_ctx *ctx, void __user *arg,
			     bool modify)
{
	struct twheel_arm a;
	int ret;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (a.__reserved)
		return -EINVAL;
	if (modify)
		return twheel_do_modify(ctx, a.handle, a.flags, a.expires,
					a.period, a.slack, a.cookie);

	ret = twheel_do_arm(ctx, a.flags, a.expires, a.period, a.slack,
			    a.cookie, &a.handle);
	if (ret)
		return ret;
	if (put_user(a.handle, &((struct twheel_arm __user *)arg)->handle)) {
		/* The caller cannot learn the handle: undo the arm. */
		u32 status;

		twheel_do_cancel(ctx, a.handle, &status);
		return -EFAULT;
	}
	return 0;
}

static long twheel_ioctl_cancel(struct twheel_ctx *ctx, void __user *arg)
{
	struct twheel_cancel c;
	int ret;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (c.flags)
		return -EINVAL;
	ret = twheel_do_cancel(ctx, c.handle, &c.status);
	if (ret)
		return ret;
	/* The timer is gone either way; report status when we can. */
	return put_user(c.status, &((struct twheel_cancel __user *)arg)->status) ?
		-EFAULT : 0;
}

static long twheel_ioctl_query(struct twheel_ctx *ctx, void __user *arg)
{
	struct twheel_utimer *ut;
	struct twheel_query q;
	unsigned int st;
	ktime_t expires;
	u64 handle;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	if (q.flags)
		return -EINVAL;
	handle = q.handle;
	ut = twheel_lookup(ctx, handle);
	if (!ut)
		return -ENOENT;

	memset(&q, 0, sizeof(q));
	q.handle = handle;
	q.period = ut->period;
	q.cookie = ut->cookie;
	/*
	 * One snapshot: with @ctx->lock held the callback is either before
	 * the point where it queues the event and re-arms, or past it.  The
	 * ioctls that stop the timer are excluded by the mutex.
	 */
	spin_lock_bh(&ctx->lock);
	st = twheel_timer_state(&ut->timer, &expires);
	if (!list_empty(&ut->ready))
		q.state |= TWHEEL_QUERY_EVENT;
	spin_unlock_bh(&ctx->lock);
	/*
	 * Running but not pending: the callback has not queued its event
	 * yet.  The timer is due now: a periodic one is re-armed by that
	 * callback, a one-shot one has not fired for userspace yet.  Past
	 * that point a one-shot timer has its event instead.
	 */
	if ((st & TWHEEL_STATE_PENDING) ||
	    ((st & TWHEEL_STATE_RUNNING) &&
	     (ut->period || !(q.state & TWHEEL_QUERY_EVENT)))) {
		ktime_t now = ktime_get();

		q.state |= TWHEEL_QUERY_PENDING;
		q.expires = expires;
		q.remaining = expires > now ? expires - now : 0;
	}
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static int twheel_batch_one(struct twheel_ctx *ctx, struct twheel_batch_op *op)
{
	u32 status;

	switch (op->op) {
	case TWHEEL_OP_ARM:
		return twheel_do_arm(ctx, op->flags, op->expires, op->period,
				     op->slack, op->cookie, &op->handle);
	case TWHEEL_OP_MODIFY:
		return twheel_do_modify(ctx, op->handle, op->flags, op->expires,
					op->period, op->slack, op->cookie);
	case TWHEEL_OP_CANCEL:
		if (op->flags)
			return -EINVAL;
		return twheel_do_cancel(ctx, op->handle, &status);
	default:
		return -EINVAL;
	}
}

static long twheel_ioctl_batch(struct twheel_ctx *ctx, void __user *arg)
{
	struct twheel_batch __user *ubatch = arg;
	struct twheel_batch_op __user *uops;
	struct twheel_batch b;
	u32 i, status;
	bool fresh;
	int err = 0;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.flags || b.__reserved)
		return -EINVAL;
	if (b.count > TWHEEL_MAX_BATCH)
		return -E2BIG;
	uops = u64_to_user_ptr(b.ops);

	for (i = 0; i < b.count; i++) {
		struct twheel_batch_op op;
		int ret;

		if (copy_from_user(&op, &uops[i], sizeof(op))) {
			err = -EFAULT;
			break;
		}
		ret = twheel_batch_one(ctx, &op);
		if (ret == -ENOMEM) {
			err = ret;
			break;
		}
		/* Only the outputs: the handle of a fresh timer, the result. */
		fresh = op.op == TWHEEL_OP_ARM && !ret;
		if ((fresh && put_user(op.handle, &uops[i].handle)) ||
		    put_user((__s64)ret, &uops[i].result)) {
			/* Not reported: undo a fresh arm, as the single ioctl. */
			if (fresh)
				twheel_do_cancel(ctx, op.handle, &status);
			err = -EFAULT;
			break;
		}
		if (fatal_signal_pending(current)) {
			i++;
			break;
		}
		cond_resched();
	}
	if (!i && err)
		return err;
	/* The return value is authoritative; @done is a convenience copy. */
	if (put_user(i, &ubatch->done) && !i)
		return -EFAULT;
	return i;
}

static long twheel_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twheel_ctx *ctx = file->private_data;
	void __user *uarg = (void __user *)arg;
	long ret;

	switch (cmd) {
	case TWHEEL_IOC_API:
	case TWHEEL_IOC_ARM:
	case TWHEEL_IOC_MODIFY:
	case TWHEEL_IOC_CANCEL:
	case TWHEEL_IOC_QUERY:
	case TWHEEL_IOC_BATCH:
		break;
	default:
		return -ENOTTY;
	}

	mutex_lock(&ctx->mutex);
	switch (cmd) {
	case TWHEEL_IOC_API:
		ret = twheel_ioctl_api(ctx, uarg);
		break;
	case TWHEEL_IOC_ARM:
		ret = twheel_ioctl_arm(ctx, uarg, false);
		break;
	case TWHEEL_IOC_MODIFY:
		ret = twheel_ioctl_arm(ctx, uarg, true);
		break;
	case TWHEEL_IOC_CANCEL:
		ret = twheel_ioctl_cancel(ctx, uarg);
		break;
	case TWHEEL_IOC_QUERY:
		ret = twheel_ioctl_query(ctx, uarg);
		break;
	default:
		ret = twheel_ioctl_batch(ctx, uarg);
		break;
	}
	mutex_unlock(&ctx->mutex);
	return ret;
}

/*
 * Take up to @max events off the ready list into @evs, noting the arming
 * each one belongs to in @seqs.  Called with the mutex held; the one-shot
 * timers taken are marked delivering, so that no ioctl finds (and frees)
 * them while read() copies their events without the mutex.
 */
static unsigned int twheel_take_events(struct twheel_ctx *ctx,
				       struct twheel_event *evs, u32 *seqs,
				       unsigned int max)
{
	unsigned int n = 0;

	lockdep_assert_held(&ctx->mutex);
	spin_lock_bh(&ctx->lock);
	while (n < max && !list_empty(&ctx->ready)) {
		struct twheel_utimer *ut;
		struct twheel_event *ev = &evs[n];

		ut = list_first_entry(&ctx->ready, struct twheel_utimer, ready);
		list_del_init(&ut->ready);
		ctx->nready--;
		memset(ev, 0, sizeof(*ev));
		ev->handle = ut->handle;
		ev->cookie = ut->cookie;
		ev->expires = ut->ev_expires;
		ev->fired = ut->ev_fired;
		ev->overrun = ut->overrun;
		if (ut->period)
			ev->flags |= TWHEEL_EVENT_PERIODIC;
		else
			ut->delivering = true;
		seqs[n++] = ut->arm_seq;
	}
	spin_unlock_bh(&ctx->lock);
	return n;
}

/* The timer of an event taken by twheel_take_events(), if still there. */
static struct twheel_utimer *twheel_event_timer(struct twheel_ctx *ctx,
						const struct twheel_event *ev,
						u32 seq)
{
	struct twheel_utimer *ut;

	lockdep_assert_held(&ctx->mutex);
	ut = xa_load(&ctx->timers, lower_32_bits(ev->handle));
	if (!ut || ut->handle != ev->handle || ut->arm_seq != seq)
		return NULL;
	return ut;
}

/*
 * The events were copied out: a one-shot timer ends here.  A periodic one
 * may have been cancelled meanwhile; it was not touched since the take.
 */
static void twheel_deliver_events(struct twheel_ctx *ctx,
				  const struct twheel_event *evs,
				  const u32 *seqs, unsigned int n)
{
	unsigned int i;

	lockdep_assert_held(&ctx->mutex);
	for (i = 0; i < n; i++) {
		struct twheel_utimer *ut;

		if (evs[i].flags & TWHEEL_EVENT_PERIODIC)
			continue;
		ut = twheel_event_timer(ctx, &evs[i], seqs[i]);
		if (!WARN_ON_ONCE(!ut || !ut->delivering))
			twheel_free_utimer(ctx, ut);
	}
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
		struct twheel_utimer *ut;

		ut = twheel_event_timer(ctx, &evs[n], seqs[n]);
		if (!ut)
			continue;
		ut->delivering = false;
		if (!list_empty(&ut->ready)) {
			ut->overrun += evs[n].overrun + 1;
		} else {
			ut->overrun = evs[n].overrun;
			ctx->nready++;
		}
		ut->ev_expires = evs[n].expires;
		ut->ev_fired = evs[n].fired;
		list_move(&ut->ready, &ctx->ready);
	}
	spin_unlock_bh(&ctx->lock);
}

static bool twheel_has_events(struct twheel_ctx *ctx)
{
	return !list_empty_careful(&ctx->ready);
}

/*
 * The mutex is held to take events and to finish their delivery, but not
 * across copy_to_user(): a buffer that faults slowly (userfaultfd, a
 * network file mapping) must not stall the file's ioctls.
 */
static ssize_t twheel_read(struct file *file, char __user *buf, size_t count,
			   loff_t *ppos)
{
	struct twheel_ctx *ctx = file->private_data;
	size_t max = min_t(size_t, count / sizeof(struct twheel_event),
			   TWHEEL_READ_CHUNK);
	struct twheel_event *evs;
	ssize_t done = 0;
	u32 *seqs;
	int ret;

	if (count < sizeof(struct twheel_event))
		return -EINVAL;

	evs = kmalloc_array(max, sizeof(*evs), GFP_KERNEL);
	seqs = kmalloc_array(max, sizeof(*seqs), GFP_KERNEL);
	if (!evs || !seqs) {
		done = -ENOMEM;
		goto out_free;
	}

	for (;;) {
		if (!twheel_has_events(ctx)) {
			if (done)
				break;
			if (file->f_flags & O_NONBLOCK) {
				done = -EAGAIN;
				break;
			}
			ret = wait_event_interruptible(ctx->wq,
						       twheel_has_events(ctx));
			if (ret) {
				done = ret;
				break;
			}
		}

		while (count - done >= sizeof(*evs)) {
			unsigned int want = min_t(size_t, max,
						  (count - done) / sizeof(*evs));
			unsigned long left;
			unsigned int n;

			mutex_lock(&ctx->mutex);
			n = twheel_take_events(ctx, evs, seqs, want);
			mutex_unlock(&ctx->mutex);
			if (!n)
				break;
			left = copy_to_user(buf + done, evs, n * sizeof(*evs));
			mutex_lock(&ctx->mutex);
			if (left)
				twheel_return_events(ctx, evs, seqs, n);
			else
				twheel_deliver_events(ctx, evs, seqs, n);
			mutex_unlock(&ctx->mutex);
			if (left) {
				if (!done)
					done = -EFAULT;
				goto out_free;
			}
			done += n * sizeof(*evs);
		}
		if (done)
			break;
	}
out_free:
	kfree(seqs);
	kfree(evs);
	return done;
}

static __poll_t twheel_poll(struct file *file, poll_table *wait)
{
	struct twheel_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wq, wait);
	return twheel_has_events(ctx) ? EPOLLIN | EPOLLRDNORM : 0;
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
	seq_printf(m, "tick_ns:\t%llu\n", ctx->tick_ns);
}

static int twheel_open(struct inode *inode, struct file *file)
{
	struct twheel_stats st;
	struct twheel_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	ctx->user = twheel_user_get(current_euid());
	if (!ctx->user) {
		kfree(ctx);
		return -ENOMEM;
	}
	mutex_init(&ctx->mutex);
	spin_lock_init(&ctx->lock);
	INIT_LIST_HEAD(&ctx->ready);
	init_waitqueue_head(&ctx->wq);
	xa_init_flags(&ctx->timers, XA_FLAGS_ALLOC1 | XA_FLAGS_ACCOUNT);
	/*
	 * Every file numbers its timers from id 1.  A random first
	 * generation keeps the handles of different files apart, so that a
	 * handle given to the wrong file gets ENOENT instead of naming that
	 * file's own timer of the same number (but for a 2^-32 chance).
	 */
	ctx->gen = get_random_u32();
	ctx->wheel = twheel_default();
	twheel_get_stats(ctx->wheel, &st);
	ctx->tick_ns = st.tick_ns;
	file->private_data = ctx;
	return nonseekable_open(inode, file);
}

static int twheel_release(struct inode *inode, struct file *file)
{
	struct twheel_ctx *ctx = file->private_data;
	struct twheel_utimer *ut;
	unsigned long id;

	/*
	 * No ioctl or read can run now.  Stop each timer, then unlink its
	 * event before freeing it: callbacks of the timers not yet stopped
	 * still queue events on the ready list.
	 */
	xa_for_each(&ctx->timers, id, ut) {
		twheel_timer_shutdown_sync(&ut->timer);
		twheel_withdraw_event(ctx, ut);
		kmem_cache_free(twheel_utimer_cache, ut);
		cond_resched();
	}
	xa_destroy(&ctx->timers);
	atomic_long_sub(ctx->count, &ctx->user->timers);
	twheel_user_put(ctx->user);
	mutex_destroy(&ctx->mutex);
	kfree(ctx);
	return 0;
}

static const struct file_operations twheel_fops = {
	.owner = THIS_MODULE,
	.open = twheel_open,
	.release = twheel_release,
	.read = twheel_read,
	.poll = twheel_poll,
	.unlocked_ioctl = twheel_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.show_fdinfo = twheel_show_fdinfo,
};

static struct miscdevice twheel_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "twheel",
	.fops = &twheel_fops,
	.mode = 0666,
};

int twheel_dev_init(unsigned long max_per_fd, unsigned long max_per_user)
{
	int ret;

	/* The ABI is the same for 32 and 64-bit callers: no padding holes. */
	BUILD_BUG_ON(sizeof(struct twheel_api) != 48);
	BUILD_BUG_ON(sizeof(struct twheel_arm) != 48);
	BUILD_BUG_ON(sizeof(struct twheel_cancel) != 16);
	BUILD_BUG_ON(sizeof(struct twheel_query) != 48);
	BUILD_BUG_ON(sizeof(struct twheel_batch_op) != 56);
	BUILD_BUG_ON(sizeof(struct twheel_batch) != 24);
	BUILD_BUG_ON(sizeof(struct twheel_event) != 48);

	/* As inotify sizes max_user_watches: a share of memory per user. */
	if (!max_per_user)
		max_per_user = max(totalram_pages() * PAGE_SIZE / 10 /
				   (sizeof(struct twheel_utimer) + 16), 1024UL);
	twheel_max_timers_per_user = max_per_user;
	twheel_max_timers_per_fd = max_per_fd ? max_per_fd : max_per_user;
	twheel_utimer_cache = KMEM_CACHE(twheel_utimer, SLAB_ACCOUNT);
	if (!twheel_utimer_cache)
		return -ENOMEM;
	ret = misc_register(&twheel_misc);
	if (ret)
		goto err_destroy_cache;
	return 0;

err_destroy_cache:
	kmem_cache_destroy(twheel_utimer_cache);
	return ret;
}

void twheel_dev_exit(void)
{
	misc_deregister(&twheel_misc);
	kmem_cache_destroy(twheel_utimer_cache);
}
