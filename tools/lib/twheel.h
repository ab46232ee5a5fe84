/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libtwheel - a small C library around the /dev/twheel ioctl ABI
 *
 * Copyright (c) 2026 twheel developers
 *
 * The kernel ABI itself is <linux/twheel.h> (include/uapi/linux/twheel.h in
 * the twheel tree); its DOC blocks define the semantics and the errno
 * values.  This library adds no semantics of its own: it fills the ioctl
 * structures, splits batches larger than the kernel's max_batch, and gives
 * the results back in one uniform way.
 *
 * Error convention: every function that can fail returns a negative errno
 * value (-EINVAL, -ENOENT, ...) on failure and a value >= 0 on success, as
 * the kernel's own functions do.  errno is not used to report errors (it
 * may be clobbered).  Use strerror(-ret) to print one.
 *
 * Thread safety: the library keeps no global state.  Calls on the same fd
 * from several threads are serialised by the kernel; a struct
 * twheel_batchbuf must not be used by two threads at once.
 *
 * Times are nanoseconds of CLOCK_MONOTONIC, as in the kernel ABI;
 * twheel_now() reads that clock.
 */
#ifndef TWHEEL_LIB_H
#define TWHEEL_LIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TWHEEL_BUILDING_LIB) && defined(__GNUC__)
#define TWHEEL_EXPORT __attribute__((visibility("default")))
#else
#define TWHEEL_EXPORT
#endif

/** The device node the library opens. */
#define TWHEEL_DEVICE_PATH "/dev/twheel"

/* ---- Files ------------------------------------------------------------- */

/**
 * twheel_open() - open /dev/twheel
 * @flags: 0 or a combination of O_NONBLOCK and O_CLOEXEC
 *
 * Every open file is an independent set of timers; closing it cancels them
 * all.  O_NONBLOCK makes twheel_read_events() return -EAGAIN instead of
 * blocking; the fd can always be watched with poll() or epoll (EPOLLIN
 * while events wait).
 *
 * Return: the file descriptor, -EINVAL for other flag bits, or the negative
 * errno of open(2) (-ENOENT if the module is not loaded).
 */
TWHEEL_EXPORT int twheel_open(int flags);

/**
 * twheel_close() - close a file from twheel_open()
 * @fd: the file
 *
 * Cancels and frees every timer of the file (unless another descriptor
 * still refers to the same open file, e.g. after fork() or dup()).
 *
 * Return: 0 or the negative errno of close(2).
 */
TWHEEL_EXPORT int twheel_close(int fd);

/**
 * twheel_api() - the handshake: ABI version, features and limits
 * @fd:  a twheel file
 * @api: filled with the kernel's answer (struct twheel_api)
 *
 * Programs call this once after opening and check the features they need
 * (TWHEEL_FEATURE_*).
 *
 * Return: 0; -EPROTONOSUPPORT if the kernel's abi_version or event_size
 * differ from the ones this library was built for (@api is filled anyway);
 * or the negative errno of the ioctl.
 */
TWHEEL_EXPORT int twheel_api(int fd, struct twheel_api *api);

/**
 * twheel_now() - the current CLOCK_MONOTONIC time in ns
 *
 * The clock of all twheel times: absolute expiries (TWHEEL_ARM_ABS) and the
 * expires/fired fields of events.
 */
TWHEEL_EXPORT uint64_t twheel_now(void);

/* ---- Single timers ----------------------------------------------------- */

/**
 * twheel_arm() - create a timer
 * @fd:      a twheel file
 * @flags:   TWHEEL_ARM_ABS if @expires is an absolute CLOCK_MONOTONIC time,
 *           0 if it is a delay from now
 * @expires: the first expiry in ns (at most INT64_MAX)
 * @period:  0 for a one-shot timer, else the period in ns (at least one
 *           tick, see twheel_api())
 * @slack:   how much later than each expiry the timer may fire, in ns
 * @cookie:  opaque value returned in every event of the timer
 * @handle:  out: the timer's handle; may be NULL only if the caller never
 *           needs to modify, cancel or query the timer
 *
 * A one-shot timer ends once its event has been read; a periodic one lives
 * until cancelled or until the file is closed.
 *
 * Return: 0, or -EINVAL (bad flags or range), -ENOSPC (timer limit),
 * -ENOMEM, -EFAULT.
 */
TWHEEL_EXPORT int twheel_arm(int fd, uint32_t flags, uint64_t expires,
			     uint64_t period, uint64_t slack, uint64_t cookie,
			     uint64_t *handle);

/**
 * twheel_modify() - re-arm an existing timer
 * @fd:      a twheel file
 * @handle:  the timer
 * @flags, @expires, @period, @slack, @cookie: as for twheel_arm()
 *
 * Replaces expiry, period, slack and cookie in O(1).  An event of the timer
 * that was not read yet is withdrawn.
 *
 * Return: 0, or -ENOENT (no such timer in this file), -EINVAL, -EFAULT.
 */
TWHEEL_EXPORT int twheel_modify(int fd, uint64_t handle, uint32_t flags,
				uint64_t expires, uint64_t period,
				uint64_t slack, uint64_t cookie);

/**
 * twheel_cancel() - cancel and free a timer
 * @fd:     a twheel file
 * @handle: the timer
 *
 * After this returns no event of the timer is read, not even one that was
 * already queued, and the handle is invalid.
 *
 * Return: TWHEEL_CANCEL_PENDING (1) if the timer was armed,
 * TWHEEL_CANCEL_FIRED (2) if it had fired and its unread event was
 * withdrawn, or -ENOENT (no such timer: never armed, cancelled, or a
 * one-shot timer whose event was already read), -EFAULT.
 */
TWHEEL_EXPORT int twheel_cancel(int fd, uint64_t handle);

/**
 * twheel_query() - look at a timer
 * @fd:     a twheel file
 * @handle: the timer
 * @q:      out: state (TWHEEL_QUERY_*), remaining time, next expiry,
 *          period and cookie (struct twheel_query)
 *
 * Return: 0, or -ENOENT, -EFAULT.
 */
TWHEEL_EXPORT int twheel_query(int fd, uint64_t handle, struct twheel_query *q);

/* ---- Events ------------------------------------------------------------ */

/**
 * twheel_read_events() - read expirations
 * @fd:  a twheel file
 * @evs: buffer for up to @max events
 * @max: its capacity in events, at least 1
 *
 * Reads as many waiting events as fit.  Blocks while there is none, unless
 * the file is O_NONBLOCK.  Every event carries the timer's handle and
 * cookie, the expiry that fired, when the kernel fired it (never before
 * the expiry) and, for periodic timers, the overrun count.
 *
 * Return: the number of events read (>= 1), or -EAGAIN (O_NONBLOCK and no
 * event), -EINTR (a signal arrived while blocked), -EINVAL (@max is 0),
 * -EFAULT.
 */
TWHEEL_EXPORT ssize_t twheel_read_events(int fd, struct twheel_event *evs,
					 size_t max);

/* ---- Batches ----------------------------------------------------------- */

/**
 * struct twheel_batchbuf - a list of arm/modify/cancel records to submit
 * @ops:       the records (struct twheel_batch_op)
 * @count:     records appended so far
 * @capacity:  room in @ops
 * @done:      records the kernel has processed; [0, @done) carry their
 *             result (and, for arms, the new handle), [@done, @count) are
 *             untouched
 * @failed:    processed records whose result is a negative errno
 * @max_batch: most records per ioctl; 0 until the first submit asks the
 *             kernel (twheel_api()), may be lowered by the caller
 * @owned:     the library allocated @ops and grows it as needed
 *
 * Set one up with twheel_batch_init(), append records with
 * twheel_batch_arm(), twheel_batch_modify() and twheel_batch_cancel(),
 * send them with twheel_batch_submit() and read each record's @result and
 * @handle from @ops.  The fields are public so that results can be read
 * directly; change them only through the functions below (except
 * @max_batch).
 */
struct twheel_batchbuf {
	struct twheel_batch_op *ops;
	size_t count;
	size_t capacity;
	size_t done;
	size_t failed;
	uint32_t max_batch;
	int owned;
};

/**
 * twheel_batch_init() - set up a batch buffer
 * @b:        the buffer
 * @ops:      caller-owned array of @capacity records, or NULL to let the
 *            library allocate and grow the array (free it with
 *            twheel_batch_free())
 * @capacity: size of @ops; with @ops NULL, a hint for the first allocation
 *            (0 for a default)
 */
TWHEEL_EXPORT void twheel_batch_init(struct twheel_batchbuf *b,
				     struct twheel_batch_op *ops,
				     size_t capacity);

/**
 * twheel_batch_free() - release a library-managed array
 * @b: the buffer; it is empty afterwards and may be initialised again
 *
 * Does not free a caller-owned array.
 */
TWHEEL_EXPORT void twheel_batch_free(struct twheel_batchbuf *b);

/**
 * twheel_batch_reset() - forget all records, keep the array
 * @b: the buffer
 */
TWHEEL_EXPORT void twheel_batch_reset(struct twheel_batchbuf *b);

/**
 * twheel_batch_arm() - append an arm record
 * @b: the buffer
 * @flags, @expires, @period, @slack, @cookie: as for twheel_arm()
 *
 * Return: the index of the record in @b->ops (its handle appears there
 * after the submit), or -ENOSPC (a caller-owned array is full), -ENOMEM.
 */
TWHEEL_EXPORT ssize_t twheel_batch_arm(struct twheel_batchbuf *b,
				       uint32_t flags, uint64_t expires,
				       uint64_t period, uint64_t slack,
				       uint64_t cookie);

/**
 * twheel_batch_modify() - append a modify record
 * @b:      the buffer
 * @handle: the timer
 * @flags, @expires, @period, @slack, @cookie: as for twheel_arm()
 *
 * Return: the index of the record, or -ENOSPC, -ENOMEM.
 */
TWHEEL_EXPORT ssize_t twheel_batch_modify(struct twheel_batchbuf *b,
					  uint64_t handle, uint32_t flags,
					  uint64_t expires, uint64_t period,
					  uint64_t slack, uint64_t cookie);

/**
 * twheel_batch_cancel() - append a cancel record
 * @b:      the buffer
 * @handle: the timer
 *
 * Return: the index of the record, or -ENOSPC, -ENOMEM.
 */
TWHEEL_EXPORT ssize_t twheel_batch_cancel(struct twheel_batchbuf *b,
					  uint64_t handle);

/**
 * twheel_batch_submit() - send the unprocessed records to the kernel
 * @fd: a twheel file
 * @b:  the buffer
 *
 * Submits records [@b->done, @b->count) in order with TWHEEL_IOC_BATCH, in
 * as many ioctls as max_batch requires, and advances @b->done by what the
 * kernel processed.  Each processed record has its own result in
 * @b->ops[i].result (0 or a negative errno) and, for an arm, the new handle
 * in @b->ops[i].handle; a failing record does not stop the others, it is
 * counted in @b->failed.
 *
 * The kernel stops a batch early only on EFAULT or ENOMEM.  The function
 * then resubmits from the record that stopped it; if that record cannot
 * be processed either, it returns the kernel's errno with @b->done telling
 * exactly how far the kernel got, and calling it again resumes from there.
 *
 * Return: the number of records processed by this call (all remaining
 * ones), or a negative errno with @b->done giving the exact progress.
 */
TWHEEL_EXPORT ssize_t twheel_batch_submit(int fd, struct twheel_batchbuf *b);

#ifdef __cplusplus
}
#endif

#endif /* TWHEEL_LIB_H */
