/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * twheel userspace API: the /dev/twheel character device
 *
 * Copyright (c) 2026 twheel developers
 */
#ifndef _UAPI_LINUX_TWHEEL_H
#define _UAPI_LINUX_TWHEEL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/**
 * DOC: General ioctl format
 *
 * Every open file description of /dev/twheel owns a set of timers.  Timers
 * are armed, modified, cancelled and queried by a 64-bit handle that the
 * kernel returns when the timer is armed.  Handles are private to the file:
 * a handle is never reused during the life of the file, so a stale handle
 * is rejected with ENOENT, and a handle only ever names a timer of the file
 * it is used on.  Each file starts its handles at a random generation, so
 * one taken from another file gets ENOENT too (but for a 2^-32 chance of
 * naming this file's own timer).  Handle 0 is never valid.
 *
 * Times are nanoseconds of CLOCK_MONOTONIC.  A timer never fires before its
 * expiry.  Expirations are read() from the file as arrays of struct
 * twheel_event; poll() and epoll report EPOLLIN while events wait.
 *
 * A one-shot timer ends when its event is read: its handle is released
 * from the moment a read() takes the event (if read() cannot copy it out,
 * the event and the handle come back).  A periodic timer lives until it is cancelled or the file is
 * closed.  Closing the file cancels and frees all of its timers.
 *
 * All ioctl structures have fixed-width fields, explicit padding and the
 * same layout for 32 and 64-bit callers.  Fields named __reserved and flag
 * bits not defined here must be zero; output fields are ignored on input,
 * so a structure may be reused for the next call.
 *
 * The errno values have a fixed meaning:
 *
 *  - ENOTTY: unknown ioctl command
 *  - EINVAL: unknown flag bit or operation, non-zero reserved field,
 *    negative expiry, period or slack out of range, read() buffer smaller
 *    than one event
 *  - EFAULT: a user pointer could not be read or written.  An operation
 *    that already took effect is not undone when only its output could not
 *    be written, except TWHEEL_IOC_ARM, which cancels the new timer because
 *    its handle would be lost
 *  - ENOENT: no timer with this handle in this file
 *  - ENOSPC: the per-file or per-user limit of timers is reached
 *  - ENOMEM: the kernel ran out of memory; the file is unchanged
 *  - E2BIG: a batch count above the max_batch reported by TWHEEL_IOC_API
 *  - EAGAIN: read() on an O_NONBLOCK file with no event waiting
 *  - EINTR: a blocking read() was interrupted by a signal before any
 *    event arrived
 */

#define TWHEEL_ABI_VERSION	1

/*
 * The ioctl type; 0xE8 is unassigned in
 * Documentation/userspace-api/ioctl/ioctl-number.rst.
 */
#define TWHEEL_IOCTL_MAGIC	0xE8

/* Feature bits reported by TWHEEL_IOC_API. */
#define TWHEEL_FEATURE_PERIODIC	(1ULL << 0)	/* period in struct twheel_arm */
#define TWHEEL_FEATURE_SLACK	(1ULL << 1)	/* slack in struct twheel_arm */
#define TWHEEL_FEATURE_BATCH	(1ULL << 2)	/* TWHEEL_IOC_BATCH */
#define TWHEEL_FEATURE_QUERY	(1ULL << 3)	/* TWHEEL_IOC_QUERY */
/*
 * The engine of the wheel the file's timers run on: exactly one of these is
 * set.  Old programs ignore them; struct twheel_api keeps its size (ABI 1).
 */
#define TWHEEL_FEATURE_ENGINE_HIER	(1ULL << 4)	/* Scheme 6 + levels */
#define TWHEEL_FEATURE_ENGINE_SCHEME6	(1ULL << 5)	/* pure hashed wheel */
#define TWHEEL_FEATURE_ENGINE_LAWN	(1ULL << 6)	/* Timer Lawn */
#define TWHEEL_FEATURE_ENGINE_MASK	(7ULL << 4)

/**
 * struct twheel_api - ioctl(TWHEEL_IOC_API)
 * @abi_version: TWHEEL_ABI_VERSION of the running module
 * @event_size: sizeof(struct twheel_event)
 * @features: TWHEEL_FEATURE_* bits
 * @tick_ns: tick length of the wheel the file's timers run on
 * @slots: number of slots of that wheel (level 0; FIFOs for the Lawn)
 * @max_batch: most records one TWHEEL_IOC_BATCH accepts
 * @max_timers_per_fd: limit of live timers per file, in effect
 * @max_timers_per_user: limit of live timers per user over all files, in
 *	effect (the module parameter, or when that is 0 the default sized
 *	from RAM); never 0
 *
 * The handshake: programs check @abi_version and @features before use.
 * Output only.
 */
struct twheel_api {
	__u32 abi_version;
	__u32 event_size;
	__aligned_u64 features;
	__aligned_u64 tick_ns;
	__u32 slots;
	__u32 max_batch;
	__aligned_u64 max_timers_per_fd;
	__aligned_u64 max_timers_per_user;
};

/* struct twheel_arm flags */
#define TWHEEL_ARM_ABS	(1U << 0)	/* @expires is absolute, not relative */

/**
 * struct twheel_arm - ioctl(TWHEEL_IOC_ARM) and ioctl(TWHEEL_IOC_MODIFY)
 * @flags: TWHEEL_ARM_ABS or 0
 * @__reserved: must be 0
 * @handle: out for ARM: the new timer's handle; in for MODIFY
 * @expires: first expiry in ns: a delay from now, or with TWHEEL_ARM_ABS a
 *	CLOCK_MONOTONIC time; at most 2^63 - 1
 * @period: 0 for a one-shot timer, else the period in ns (>= 1 tick)
 * @slack: how much later than each expiry the timer may fire, in ns; the
 *	kernel uses it to place timers on fewer ticks
 * @cookie: opaque value returned in every event of the timer
 *
 * ARM creates a timer.  MODIFY re-arms an existing one in O(1) with a new
 * expiry, period, slack and cookie; an event of the timer that was not read
 * yet is withdrawn, as a re-armed timerfd discards its count.
 */
struct twheel_arm {
	__u32 flags;
	__u32 __reserved;
	__aligned_u64 handle;
	__aligned_u64 expires;
	__aligned_u64 period;
	__aligned_u64 slack;
	__aligned_u64 cookie;
};

/* struct twheel_cancel status */
#define TWHEEL_CANCEL_PENDING	1	/* the timer was armed */
#define TWHEEL_CANCEL_FIRED	2	/* one-shot: it had fired; event withdrawn */

/**
 * struct twheel_cancel - ioctl(TWHEEL_IOC_CANCEL)
 * @handle: the timer to cancel
 * @flags: must be 0
 * @status: out: TWHEEL_CANCEL_PENDING or TWHEEL_CANCEL_FIRED
 *
 * Cancels and frees the timer.  After the ioctl returns no event of it is
 * read, even one that was already queued, and the handle is invalid.  A
 * periodic timer is armed until it is cancelled: its status is always
 * TWHEEL_CANCEL_PENDING, even while its callback runs or an event of it
 * waits.  A one-shot timer reports TWHEEL_CANCEL_FIRED once its expiry
 * was processed (its callback ran or was running; the event is withdrawn).
 */
struct twheel_cancel {
	__aligned_u64 handle;
	__u32 flags;
	__u32 status;
};

/* struct twheel_query state bits */
#define TWHEEL_QUERY_PENDING	(1U << 0)	/* armed: see struct twheel_query */
#define TWHEEL_QUERY_EVENT	(1U << 1)	/* an event waits to be read */

/**
 * struct twheel_query - ioctl(TWHEEL_IOC_QUERY)
 * @handle: the timer to look at
 * @flags: must be 0
 * @state: out: TWHEEL_QUERY_* bits
 * @remaining: out: ns until the next expiry, 0 if due or not pending
 * @expires: out: the next expiry (CLOCK_MONOTONIC ns), if pending
 * @period: out: the period, 0 for a one-shot timer
 * @cookie: out: the cookie
 *
 * The answer is one consistent snapshot.  TWHEEL_QUERY_PENDING: the timer
 * will fire (again) unless cancelled.  A periodic timer is always PENDING;
 * while the kernel is firing it, @expires is the expiry being fired and
 * @remaining 0, until it is re-armed for the next period.  A one-shot timer
 * is PENDING until its event is queued, then has TWHEEL_QUERY_EVENT only.
 */
struct twheel_query {
	__aligned_u64 handle;
	__u32 flags;
	__u32 state;
	__aligned_u64 remaining;
	__aligned_u64 expires;
	__aligned_u64 period;
	__aligned_u64 cookie;
};

/* struct twheel_batch_op op */
#define TWHEEL_OP_ARM		1	/* as TWHEEL_IOC_ARM */
#define TWHEEL_OP_MODIFY	2	/* as TWHEEL_IOC_MODIFY */
#define TWHEEL_OP_CANCEL	3	/* as TWHEEL_IOC_CANCEL */

/**
 * struct twheel_batch_op - one record of a batch
 * @op: TWHEEL_OP_*
 * @flags: TWHEEL_ARM_ABS for ARM and MODIFY, else 0
 * @handle: out for ARM, in for MODIFY and CANCEL
 * @expires: as in struct twheel_arm (ARM, MODIFY)
 * @period: as in struct twheel_arm (ARM, MODIFY)
 * @slack: as in struct twheel_arm (ARM, MODIFY)
 * @cookie: as in struct twheel_arm (ARM, MODIFY)
 * @result: out: 0 or a negative errno; for CANCEL, 0 stands for either
 *	status of struct twheel_cancel
 */
struct twheel_batch_op {
	__u32 op;
	__u32 flags;
	__aligned_u64 handle;
	__aligned_u64 expires;
	__aligned_u64 period;
	__aligned_u64 slack;
	__aligned_u64 cookie;
	__s64 result;
};

/**
 * struct twheel_batch - ioctl(TWHEEL_IOC_BATCH)
 * @ops: user pointer to an array of @count struct twheel_batch_op
 * @count: number of records, at most max_batch (else E2BIG)
 * @flags: must be 0
 * @done: out: records processed
 * @__reserved: must be 0
 *
 * Records are processed in order.  Each one gets its own @result: a record
 * that fails (ENOENT, EINVAL, ENOSPC...) does not stop the batch.  The batch
 * stops early only when a record cannot be read or written back (EFAULT) or
 * on ENOMEM; the ioctl's return value (and @done, if it can be written)
 * then gives the number of records processed, and later records are
 * untouched.  If not even the first record could be processed the ioctl
 * fails with that errno.
 */
struct twheel_batch {
	__aligned_u64 ops;
	__u32 count;
	__u32 flags;
	__u32 done;
	__u32 __reserved;
};

/* struct twheel_event flags */
#define TWHEEL_EVENT_PERIODIC	(1U << 0)	/* the timer is periodic */

/**
 * struct twheel_event - one expiration, as read() from the file
 * @handle: the timer
 * @cookie: its cookie
 * @expires: the expiry that fired (CLOCK_MONOTONIC ns)
 * @fired: when the kernel fired it; never less than @expires
 * @overrun: periodic timers: further expirations that happened before this
 *	event was read (they are merged into it); 0 for one-shot timers
 * @flags: TWHEEL_EVENT_* bits
 * @__reserved: 0
 *
 * read() returns as many whole events as fit in the buffer, EINVAL for a
 * buffer smaller than one event, blocks while there is none unless the
 * file is O_NONBLOCK (then EAGAIN).
 */
struct twheel_event {
	__aligned_u64 handle;
	__aligned_u64 cookie;
	__aligned_u64 expires;
	__aligned_u64 fired;
	__aligned_u64 overrun;
	__u32 flags;
	__u32 __reserved;
};

#define TWHEEL_IOC_API		_IOR(TWHEEL_IOCTL_MAGIC, 0x00, struct twheel_api)
#define TWHEEL_IOC_ARM		_IOWR(TWHEEL_IOCTL_MAGIC, 0x01, struct twheel_arm)
#define TWHEEL_IOC_MODIFY	_IOW(TWHEEL_IOCTL_MAGIC, 0x02, struct twheel_arm)
#define TWHEEL_IOC_CANCEL	_IOWR(TWHEEL_IOCTL_MAGIC, 0x03, struct twheel_cancel)
#define TWHEEL_IOC_QUERY	_IOWR(TWHEEL_IOCTL_MAGIC, 0x04, struct twheel_query)
#define TWHEEL_IOC_BATCH	_IOWR(TWHEEL_IOCTL_MAGIC, 0x05, struct twheel_batch)

#endif /* _UAPI_LINUX_TWHEEL_H */
