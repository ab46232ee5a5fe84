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
 * a handle only ever names a timer of the file it is used on, and a stale
 * handle (of a timer that was cancelled or whose one-shot event was read)
 * is rejected with ENOENT.  A handle is an index into the file's timer
 * table and a generation of that entry, bumped each time the entry is
 * freed: the same handle comes back only after its entry was reused 2^32
 * times.  Each file starts its generations at a random value, so a handle
 * taken from another file gets ENOENT too (but for a 2^-32 chance of naming
 * this file's own timer).  Handle 0 is never valid.
 *
 * Times are nanoseconds of the file's clock, CLOCK_MONOTONIC unless
 * TWHEEL_IOC_SETUP chose CLOCK_BOOTTIME, as the calling task reads it:
 * in a time namespace (CLONE_NEWTIME), with that namespace's offset, as
 * timerfd and POSIX timers take them.  Every absolute time is converted
 * at the call with the caller's namespace: an expiry armed with
 * TWHEEL_ARM_ABS, and the times an event or TWHEEL_IOC_QUERY report.  So
 * tasks of different namespaces that share a file each see their own
 * clock.  Relative times and periods need no conversion.  A timer never
 * fires before its expiry.  Expirations are read() from the file as arrays
 * of struct twheel_event; poll() and epoll report EPOLLIN while events
 * wait.
 *
 * A one-shot timer ends when its event is read: its handle is released
 * from the moment a read() takes the event (if read() cannot copy it out,
 * the event and the handle come back).  A periodic timer lives until it is
 * cancelled or the file is closed.  Closing the file cancels and frees all
 * of its timers.
 *
 * Extensible structures, as iommufd's: every ioctl structure starts with
 * a __u32 @size that the caller sets to sizeof() the structure it was
 * built with, and the ioctl number does not encode the size.  The kernel
 * reads @size bytes: a shorter structure (an older program) is extended
 * with zeroes, a longer one (a newer program) is accepted only if every
 * byte the kernel does not know is zero, else E2BIG.  @size may be at most
 * TWHEEL_STRUCT_SIZE_MAX, as may a batch record's @op_size, else E2BIG
 * whatever the tail holds: as for clone3() and openat2(), a structure
 * does not outgrow a page.  Outputs are written back up to @size bytes.
 * Fields named out_* are outputs and ignored on input, so a structure may
 * be reused for the next call; fields named __reserved and flag bits not
 * defined here must be zero.  All fields have fixed widths and the layout
 * is the same for 32 and 64-bit callers.
 *
 * The errno values have a fixed meaning:
 *
 *  - ENOTTY: unknown ioctl command, or a command of ABI version 1 (see
 *    TWHEEL_ABI_VERSION)
 *  - EINVAL: @size smaller than the first version of the structure (or,
 *    for an io_uring command, larger than the SQE's command area),
 *    unknown flag bit or operation, non-zero reserved field, negative
 *    expiry, period or slack out of range, a clock or tick that
 *    TWHEEL_IOC_SETUP does not offer, read() buffer smaller than one
 *    event
 *  - E2BIG: non-zero bytes beyond the structure the kernel knows, a @size
 *    or @op_size above TWHEEL_STRUCT_SIZE_MAX, or a batch count above
 *    out_max_batch of TWHEEL_IOC_API
 *  - EFAULT: a user pointer could not be read or written.  An operation
 *    that already took effect is not undone when only its output could not
 *    be written, except arming, which cancels the new timer because its
 *    handle would be lost
 *  - ENOENT: no timer with this handle in this file
 *  - ENOSPC: the per-file or per-user limit of timers is reached, or
 *    (TWHEEL_IOC_SETUP) the limit of wheel instances
 *  - EBUSY: TWHEEL_IOC_SETUP on a file that has a timer
 *  - ENOMEM: the kernel ran out of memory; the file is unchanged
 *  - EAGAIN: read() on an O_NONBLOCK file with no event waiting
 *  - EOPNOTSUPP: an io_uring command on a ring without IORING_SETUP_SQE128
 *    (ARM: or without IORING_SETUP_CQE32); see "io_uring commands"
 *  - EINTR: a blocking read() was interrupted by a signal before any
 *    event arrived
 *  - EPERM: open() without CAP_SYS_ADMIN of a module loaded with
 *    engine=scheme6 or engine=lawn, engines that do not bound the work
 *    under a lock
 */

/**
 * DOC: io_uring commands
 *
 * ARM, MODIFY, CANCEL and BATCH may also be submitted as
 * IORING_OP_URING_CMD on a ring set up with IORING_SETUP_SQE128, when
 * TWHEEL_IOC_API reports TWHEEL_FEATURE_URING_CMD.  They are the ioctls:
 * the same handlers, checks, limits and errno values.  The SQE's @cmd_op
 * is the ioctl number (TWHEEL_IOC_ARM...), its @fd the file, and its
 * command area (sqe->cmd, 80 bytes, TWHEEL_URING_CMD_SIZE_MAX) holds the
 * ioctl's structure, @size first.  It is read once, as an ioctl reads its
 * structure: a @size below the first version is EINVAL, and so is one
 * beyond the command area; bytes from the kernel's size up to @size must
 * be zero, else E2BIG.  The other fields of the SQE are io_uring's
 * (@uring_cmd_flags must be 0).
 *
 * Results come back in the completion, not in the structure: @res is 0
 * or a negative errno (CANCEL: TWHEEL_CANCEL_PENDING or
 * TWHEEL_CANCEL_FIRED; BATCH: the records processed, as the ioctl
 * returns), and on a ring set up with IORING_SETUP_CQE32 the first
 * extra field, big_cqe[0], holds the output: the new timer's handle for
 * ARM, out_failed for BATCH, 0 otherwise.  ARM needs IORING_SETUP_CQE32,
 * since its handle has nowhere else to go.  A BATCH reads and writes its
 * records in user memory as the ioctl does.
 *
 * Errors besides the ioctls': EOPNOTSUPP for a ring without
 * IORING_SETUP_SQE128 (any command) or without IORING_SETUP_CQE32 (ARM);
 * io_uring itself answers EOPNOTSUPP for a module without
 * TWHEEL_FEATURE_URING_CMD and on an IORING_SETUP_IOPOLL ring.  ENOTTY
 * for a @cmd_op that is not one of the four (TWHEEL_IOC_API and
 * TWHEEL_IOC_QUERY have more outputs than a completion holds).
 *
 * The expiry as the completion (TWHEEL_FEATURE_URING_EXPIRY, 6.7 and
 * later): an ARM with TWHEEL_ARM_URING_EXPIRY in @flags of struct
 * twheel_arm stays pending until its timer fires, and then completes with
 * res 0 and, on a CQE32 ring, the time it fired (ns of the file's clock,
 * as the submitting task reads it) in big_cqe[0]; the SQE's user_data
 * identifies it.  The timer is one-shot (a period is EINVAL, but see
 * below) and queues no event for read().  If the SQE's
 * @addr is not 0 it points to a __u64 that receives the timer's handle
 * when the command is submitted (EFAULT, nothing armed, if it cannot be
 * written).  A CANCEL of the handle (ioctl, command or batch record)
 * completes the pending command with ECANCELED and reports
 * TWHEEL_CANCEL_PENDING; one that comes after the expiry reports
 * TWHEEL_CANCEL_FIRED, and the command completes with 0.  Each command
 * completes exactly once.  MODIFY of such a timer is EINVAL.  Until its
 * completion is posted the timer counts against the limits, and a
 * pending command keeps the file open: closing the file's descriptors
 * does not cancel it, but tearing the ring down (or the submitting
 * task's exit) does, with ECANCELED.  Kernels before 6.7 cannot cancel a
 * pending command when its ring goes away, so there the flag is
 * EOPNOTSUPP.
 *
 * A completion per expiry (TWHEEL_FEATURE_URING_MSHOT, 6.18 and later): a
 * periodic ARM with TWHEEL_ARM_URING_EXPIRY submitted with
 * IORING_URING_CMD_MULTISHOT in @uring_cmd_flags, IOSQE_BUFFER_SELECT and
 * a provided-buffer group in @buf_group posts a completion per expiry
 * record with IORING_CQE_F_MORE: res is sizeof(struct twheel_event) and
 * the selected buffer holds the record as read() returns it, @overrun
 * counting the expirations merged into it while the task had not taken
 * the previous one.  The command ends with one completion without
 * IORING_CQE_F_MORE: ECANCELED after a CANCEL of the handle (a record
 * not posted yet is dropped), the ring's teardown or the task's exit;
 * ENOBUFS when an expiry finds no buffer, EMSGSIZE for a buffer shorter
 * than a record, EFAULT, or EOVERFLOW when the completion queue takes no
 * more: then the timer is cancelled and freed (its handle is gone).  The
 * multishot flag on anything else is EINVAL.  Kernels without multishot
 * commands refuse the SQE themselves (EOPNOTSUPP: no buffer select for
 * IORING_OP_URING_CMD).
 *
 * A command is done from the submitting task, in the io_uring_enter()
 * that submits it, unless the file's mutex is taken, by another thread's
 * ioctl or command: then io_uring runs it from a worker thread, where it
 * waits.  Like the ioctl, a MODIFY or CANCEL of a timer whose expiry is
 * being processed at that moment waits for that to finish (microseconds).
 */
#define TWHEEL_URING_CMD_SIZE_MAX	80

/*
 * Version 2 made every structure size-prefixed and moved the ioctl numbers
 * to TWHEEL_CMD_BASE.  A program built for version 1 still gets an answer
 * to its TWHEEL_IOC_API, with abi_version 2, which its handshake refuses;
 * every other version 1 command fails with ENOTTY.  From version 2 on,
 * structures grow at their end and the version stays.
 */
#define TWHEEL_ABI_VERSION	2

/*
 * The ioctl type; 0xE8 is unassigned in
 * Documentation/userspace-api/ioctl/ioctl-number.rst.
 */
#define TWHEEL_IOCTL_MAGIC	0xE8

/* The largest @size of an ioctl structure and @op_size of a batch record */
#define TWHEEL_STRUCT_SIZE_MAX	4096

enum {
	TWHEEL_CMD_BASE = 0x80,
	TWHEEL_CMD_API = TWHEEL_CMD_BASE,
	TWHEEL_CMD_ARM,
	TWHEEL_CMD_MODIFY,
	TWHEEL_CMD_CANCEL,
	TWHEEL_CMD_QUERY,
	TWHEEL_CMD_BATCH,
	TWHEEL_CMD_SETUP,
};

/* Feature bits reported by TWHEEL_IOC_API. */
#define TWHEEL_FEATURE_PERIODIC	(1ULL << 0)	/* struct twheel_timer_spec period */
#define TWHEEL_FEATURE_SLACK	(1ULL << 1)	/* struct twheel_timer_spec slack */
#define TWHEEL_FEATURE_BATCH	(1ULL << 2)	/* TWHEEL_IOC_BATCH */
#define TWHEEL_FEATURE_QUERY	(1ULL << 3)	/* TWHEEL_IOC_QUERY */
/* The engine of the wheel the file's timers run on: exactly one is set. */
#define TWHEEL_FEATURE_ENGINE_HIER	(1ULL << 4)	/* Scheme 6 + levels */
#define TWHEEL_FEATURE_ENGINE_SCHEME6	(1ULL << 5)	/* pure hashed wheel */
#define TWHEEL_FEATURE_ENGINE_LAWN	(1ULL << 6)	/* Timer Lawn */
#define TWHEEL_FEATURE_ENGINE_MASK	(7ULL << 4)
/* TWHEEL_IOC_SETUP, and out_clockid and out_max_instances of the API */
#define TWHEEL_FEATURE_SETUP	(1ULL << 7)
/*
 * IORING_OP_URING_CMD: TWHEEL_IOC_ARM, _MODIFY, _CANCEL and _BATCH through
 * io_uring (see "io_uring commands" below)
 */
#define TWHEEL_FEATURE_URING_CMD	(1ULL << 8)
/* TWHEEL_ARM_URING_EXPIRY: an io_uring ARM completes at the expiry */
#define TWHEEL_FEATURE_URING_EXPIRY	(1ULL << 9)
/* a periodic ARM as a multishot command: a CQE per expiry */
#define TWHEEL_FEATURE_URING_MSHOT	(1ULL << 10)

/**
 * struct twheel_api - ioctl(TWHEEL_IOC_API)
 * @size: sizeof(struct twheel_api)
 * @flags: must be 0
 * @out_abi_version: TWHEEL_ABI_VERSION of the running module
 * @out_event_size: sizeof(struct twheel_event)
 * @out_features: TWHEEL_FEATURE_* bits
 * @out_tick_ns: tick length of the wheel the file's timers run on
 * @out_slots: number of slots of that wheel (level 0; FIFOs for the Lawn)
 * @out_max_batch: most records one TWHEEL_IOC_BATCH accepts
 * @out_batch_op_size: sizeof(struct twheel_batch_op) of the running module
 * @__reserved: must be 0
 * @out_max_timers_per_fd: limit of live timers per file, in effect
 * @out_max_timers_per_user: limit of live timers per user over all files,
 *	in effect (the module parameter, or when that is 0 the default sized
 *	from RAM); never 0
 * @out_clockid: the clock of the file's timers, CLOCK_MONOTONIC unless
 *	TWHEEL_IOC_SETUP chose CLOCK_BOOTTIME (TWHEEL_FEATURE_SETUP)
 * @out_max_instances: most wheels of other clocks and ticks than the
 *	default's that files may use at once (TWHEEL_FEATURE_SETUP)
 *
 * The handshake: programs check @out_abi_version and @out_features before
 * use.  @out_tick_ns and @out_clockid are the file's: the module's
 * default, or what TWHEEL_IOC_SETUP chose.
 */
struct twheel_api {
	__u32 size;
	__u32 flags;
	__u32 out_abi_version;
	__u32 out_event_size;
	__aligned_u64 out_features;
	__aligned_u64 out_tick_ns;
	__u32 out_slots;
	__u32 out_max_batch;
	__u32 out_batch_op_size;
	__u32 __reserved;
	__aligned_u64 out_max_timers_per_fd;
	__aligned_u64 out_max_timers_per_user;
	__u32 out_clockid;
	__u32 out_max_instances;
};

/**
 * struct twheel_setup - ioctl(TWHEEL_IOC_SETUP)
 * @size: sizeof(struct twheel_setup)
 * @flags: must be 0
 * @clockid: CLOCK_MONOTONIC, or CLOCK_BOOTTIME, which goes on counting
 *	while the system is suspended; any other clock is EINVAL
 * @__reserved: must be 0
 * @tick_ns: the tick of the file's wheel in ns: 0 for the module's
 *	(tick_ns parameter), else from 1000 (1 us) to 1000000000 (1 s), else
 *	EINVAL
 *
 * Chooses the clock and the tick of the file's timers, before it has any:
 * EBUSY once a timer exists (armed and not yet cancelled or read).  It
 * may be called again while the file has no timer.  Every time of the
 * file is then of @clockid (as the caller's time namespace reads it):
 * absolute expiries, events, TWHEEL_IOC_QUERY.  Expiries are rounded up
 * to the end of a tick, as with the default wheel, and a period must be
 * at least one tick.
 *
 * Files that choose the same clock and tick share one wheel, created for
 * the first and freed with the last; CLOCK_MONOTONIC at the module's tick
 * is the default wheel, which is never counted.  At most
 * out_max_instances other wheels exist at once (module parameter
 * max_instances): a file that would need one more gets ENOSPC.
 */
struct twheel_setup {
	__u32 size;
	__u32 flags;
	__u32 clockid;
	__u32 __reserved;
	__aligned_u64 tick_ns;
};

/* struct twheel_timer_spec flags */
#define TWHEEL_ARM_ABS	(1U << 0)	/* @expires is absolute, not relative */

/**
 * struct twheel_timer_spec - how a timer is armed
 * @flags: TWHEEL_ARM_ABS or 0
 * @__reserved: must be 0
 * @expires: first expiry in ns: a delay from now, or with TWHEEL_ARM_ABS a
 *	time of the file's clock (CLOCK_MONOTONIC unless TWHEEL_IOC_SETUP
 *	chose CLOCK_BOOTTIME) in the caller's time namespace; at most
 *	2^63 - 1.  One before the host's boot is due at once
 * @period: 0 for a one-shot timer, else the period in ns (>= 1 tick)
 * @slack: how much later than each expiry the timer may fire, in ns; the
 *	kernel uses it to place timers on fewer ticks
 * @cookie: opaque value returned in every event of the timer
 *
 * Embedded in struct twheel_arm, struct twheel_modify and struct
 * twheel_batch_op.
 */
struct twheel_timer_spec {
	__u32 flags;
	__u32 __reserved;
	__aligned_u64 expires;
	__aligned_u64 period;
	__aligned_u64 slack;
	__aligned_u64 cookie;
};

/*
 * struct twheel_arm flags: io_uring only (an ioctl gets EINVAL); the
 * command completes when the timer fires, or with ECANCELED when it is
 * cancelled (see "io_uring commands")
 */
#define TWHEEL_ARM_URING_EXPIRY	(1U << 0)

/**
 * struct twheel_arm - ioctl(TWHEEL_IOC_ARM)
 * @size: sizeof(struct twheel_arm)
 * @flags: 0, or TWHEEL_ARM_URING_EXPIRY for an io_uring command
 * @out_handle: the new timer's handle
 * @spec: the timer
 *
 * Creates a timer.
 */
struct twheel_arm {
	__u32 size;
	__u32 flags;
	__aligned_u64 out_handle;
	struct twheel_timer_spec spec;
};

/**
 * struct twheel_modify - ioctl(TWHEEL_IOC_MODIFY)
 * @size: sizeof(struct twheel_modify)
 * @flags: must be 0
 * @handle: the timer
 * @spec: its new expiry, period, slack and cookie
 *
 * Re-arms an existing timer in O(1).  An event of the timer that was not
 * read yet is withdrawn, as a re-armed timerfd discards its count (one that
 * a read() in another thread has already taken off the file is that
 * read()'s).
 */
struct twheel_modify {
	__u32 size;
	__u32 flags;
	__aligned_u64 handle;
	struct twheel_timer_spec spec;
};

/* struct twheel_cancel out_status */
#define TWHEEL_CANCEL_PENDING	1	/* the timer was armed */
#define TWHEEL_CANCEL_FIRED	2	/* one-shot: it had fired; event withdrawn */

/**
 * struct twheel_cancel - ioctl(TWHEEL_IOC_CANCEL)
 * @size: sizeof(struct twheel_cancel)
 * @flags: must be 0
 * @handle: the timer to cancel
 * @out_status: TWHEEL_CANCEL_PENDING or TWHEEL_CANCEL_FIRED
 * @__reserved: must be 0
 *
 * Cancels and frees the timer.  After the ioctl returns no event of it is
 * read, even one that was already queued, and the handle is invalid; only
 * a read() running in another thread may still return an event of a
 * periodic timer that it took off the file before the cancel (of a
 * one-shot timer, the cancel then fails with ENOENT).  A
 * periodic timer is armed until it is cancelled: its status is always
 * TWHEEL_CANCEL_PENDING, even while its callback runs or an event of it
 * waits.  A one-shot timer reports TWHEEL_CANCEL_FIRED once its expiry
 * was processed (its callback ran or was running; the event is withdrawn).
 */
struct twheel_cancel {
	__u32 size;
	__u32 flags;
	__aligned_u64 handle;
	__u32 out_status;
	__u32 __reserved;
};

/* struct twheel_query out_state bits */
#define TWHEEL_QUERY_PENDING	(1U << 0)	/* armed: see struct twheel_query */
#define TWHEEL_QUERY_EVENT	(1U << 1)	/* an event waits to be read */

/**
 * struct twheel_query - ioctl(TWHEEL_IOC_QUERY)
 * @size: sizeof(struct twheel_query)
 * @flags: must be 0
 * @handle: the timer to look at
 * @out_state: TWHEEL_QUERY_* bits
 * @__reserved: must be 0
 * @out_remaining: ns until the next expiry, 0 if due or not pending
 * @out_expires: the next expiry (ns of the file's clock, in the caller's
 *	time namespace), if pending
 * @out_period: the period, 0 for a one-shot timer
 * @out_cookie: the cookie
 *
 * The answer is one consistent snapshot.  TWHEEL_QUERY_PENDING: the timer
 * will fire (again) unless cancelled.  A periodic timer is always PENDING;
 * while the kernel is firing it, @out_expires is the expiry being fired
 * and @out_remaining 0, until it is re-armed for the next period.  A
 * one-shot timer is PENDING until its event is queued, then has
 * TWHEEL_QUERY_EVENT only.
 */
struct twheel_query {
	__u32 size;
	__u32 flags;
	__aligned_u64 handle;
	__u32 out_state;
	__u32 __reserved;
	__aligned_u64 out_remaining;
	__aligned_u64 out_expires;
	__aligned_u64 out_period;
	__aligned_u64 out_cookie;
};

/* struct twheel_batch_op op */
#define TWHEEL_OP_ARM		1	/* as TWHEEL_IOC_ARM */
#define TWHEEL_OP_MODIFY	2	/* as TWHEEL_IOC_MODIFY */
#define TWHEEL_OP_CANCEL	3	/* as TWHEEL_IOC_CANCEL */

/**
 * struct twheel_batch_op - one record of a batch
 * @op: TWHEEL_OP_*
 * @out_result: 0 or a negative errno.  Written only for a record that
 *	failed (and for ARM): a caller that looks at it zeroes it first, or
 *	looks only when out_failed of struct twheel_batch is non-zero
 * @handle: out for ARM (written only when it succeeded), in for MODIFY and
 *	CANCEL
 * @spec: ARM and MODIFY: the timer; ignored for CANCEL
 *
 * CANCEL reports success as 0 whichever status TWHEEL_IOC_CANCEL would
 * give.
 */
struct twheel_batch_op {
	__u32 op;
	__s32 out_result;
	__aligned_u64 handle;
	struct twheel_timer_spec spec;
};

/**
 * struct twheel_batch - ioctl(TWHEEL_IOC_BATCH)
 * @size: sizeof(struct twheel_batch)
 * @flags: must be 0
 * @ops: user pointer to an array of @count records of @op_size bytes
 * @count: number of records, at most out_max_batch (else E2BIG)
 * @op_size: sizeof(struct twheel_batch_op) as the caller knows it; records
 *	are read and extended as the ioctl structures are (a record whose
 *	unknown tail is not zero fails with E2BIG); at least the size of the
 *	first version (56), else EINVAL, and at most TWHEEL_STRUCT_SIZE_MAX,
 *	else E2BIG
 * @out_done: records processed
 * @out_failed: records among them whose @out_result is an error
 *
 * Records are processed in order.  A record that fails (ENOENT, EINVAL,
 * ENOSPC...) does not stop the batch.  The batch stops early only when a
 * record cannot be read or written back (EFAULT), on ENOMEM, or for a fatal
 * signal; the ioctl's return value (and @out_done, if it can be written)
 * then gives the number of records processed, and later records are
 * untouched, with one exception: the kernel reads the records in runs of
 * up to 32 and does a run's work before writing its outputs, so when an
 * output cannot be written, the ARM records after it in its run are undone
 * but its CANCEL and MODIFY records have taken effect.  If not even the
 * first record could be processed the ioctl fails with that errno.  On
 * success the return value is @count.
 */
struct twheel_batch {
	__u32 size;
	__u32 flags;
	__aligned_u64 ops;
	__u32 count;
	__u32 op_size;
	__u32 out_done;
	__u32 out_failed;
};

/* struct twheel_event flags */
#define TWHEEL_EVENT_PERIODIC	(1U << 0)	/* the timer is periodic */

/**
 * struct twheel_event - one expiration, as read() from the file
 * @handle: the timer
 * @cookie: its cookie
 * @expires: the expiry that fired (ns of the file's clock, in the
 *	reader's time namespace)
 * @fired: when the kernel fired it, in the same clock; never less than
 *	@expires
 * @overrun: periodic timers: further expirations that happened before this
 *	event was read (they are merged into it); 0 for one-shot timers
 * @flags: TWHEEL_EVENT_* bits
 * @__reserved: 0
 *
 * read() returns as many whole events as fit in the buffer, EINVAL for a
 * buffer smaller than one event, blocks while there is none unless the
 * file is O_NONBLOCK (then EAGAIN).  With events waiting it may wait, even
 * if O_NONBLOCK, for another thread's read() or ioctl of the file that is
 * in a page fault.  The layout is the same as in ABI version 1.
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

#define TWHEEL_IOC_API		_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_API)
#define TWHEEL_IOC_ARM		_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_ARM)
#define TWHEEL_IOC_MODIFY	_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_MODIFY)
#define TWHEEL_IOC_CANCEL	_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_CANCEL)
#define TWHEEL_IOC_QUERY	_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_QUERY)
#define TWHEEL_IOC_BATCH	_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_BATCH)
#define TWHEEL_IOC_SETUP	_IO(TWHEEL_IOCTL_MAGIC, TWHEEL_CMD_SETUP)

#endif /* _UAPI_LINUX_TWHEEL_H */
