/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libtwheel - a small C library around the /dev/twheel ioctl ABI
 *
 * Copyright (c) 2026 twheel developers
 *
 * The kernel ABI itself is <linux/twheel.h> (include/uapi/linux/twheel.h in
 * the twheel tree), version 2; its DOC blocks define the semantics and the
 * errno values.  This library adds no semantics of its own: it fills the
 * size-prefixed ioctl structures, splits batches larger than the kernel's
 * max_batch, and gives the results back in one uniform way.
 *
 * Names: everything of the library is libtwheel_* (functions),
 * struct libtwheel_* and LIBTWHEEL_* (macros); twheel_* and TWHEEL_* are the
 * kernel's (struct twheel_timer_spec, struct twheel_event, ...).
 *
 * Error convention: every function that can fail returns a negative errno
 * value (-EINVAL, -ENOENT, ...) on failure and a value >= 0 on success, as
 * the kernel's own functions do.  errno is not used to report errors (it
 * may be clobbered).  libtwheel_strerror() turns one into a message.
 *
 * Thread safety: the library keeps no global state.  Calls on the same fd
 * from several threads are serialised by the kernel; a struct
 * libtwheel_batch must not be used by two threads at once.
 *
 * Times are nanoseconds of the file's clock, as in the kernel ABI:
 * CLOCK_MONOTONIC, which libtwheel_now() reads, unless libtwheel_setup()
 * chose CLOCK_BOOTTIME (libtwheel_clock_now() reads either).
 */
#ifndef LIBTWHEEL_H
#define LIBTWHEEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <linux/twheel.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LIBTWHEEL_BUILDING) && defined(__GNUC__)
#define LIBTWHEEL_EXPORT __attribute__((visibility("default")))
#else
#define LIBTWHEEL_EXPORT
#endif

/** The device node the library opens. */
#define LIBTWHEEL_DEVICE_PATH "/dev/twheel"

/** The ABI version this library speaks (TWHEEL_ABI_VERSION it was built with). */
#define LIBTWHEEL_ABI_VERSION TWHEEL_ABI_VERSION

/*
 * Structure sizes.  The structures of <linux/twheel.h> grow at their end
 * (new fields, older ones unchanged), and libtwheel.so.1 may be built
 * against a newer header than a program that uses it, or an older one.  So
 * the library never uses its own idea of their sizes for the caller's
 * memory: the functions below that take a struct twheel_api, twheel_query
 * or twheel_timer_spec, or fill a batch's array of struct twheel_batch_op,
 * are inline wrappers that pass the sizes the program was compiled with
 * to a libtwheel_*_sz() function (symbol version LIBTWHEEL_1.1).  The
 * library zeroes, copies and strides by those sizes, passes fields it
 * does not know on to the kernel, and never touches bytes beyond them.
 * The unsized symbols of libtwheel 1.0 stay, for the programs built
 * against it, with the sizes of ABI version 2's first structures (the
 * library's own build declares them instead of the inline functions).  A
 * struct twheel_event of another size is another ABI version
 * (libtwheel_api() refuses it with -EPROTO).  A change that cannot keep
 * to this, such as a field of struct libtwheel_batch, changes the soname.
 */

/*
 * The sized functions behind the inline ones below (see "Structure
 * sizes" above): each takes the size of the caller's structure, at least
 * that of ABI version 2's first version and at most
 * TWHEEL_STRUCT_SIZE_MAX, else -EINVAL.
 */
LIBTWHEEL_EXPORT int libtwheel_api_sz(int fd, struct twheel_api *api, size_t api_size);
LIBTWHEEL_EXPORT int libtwheel_arm_sz(int fd, const struct twheel_timer_spec *spec,
				      size_t spec_size, uint64_t *handle);
LIBTWHEEL_EXPORT int libtwheel_modify_sz(int fd, uint64_t handle,
					 const struct twheel_timer_spec *spec,
					 size_t spec_size);
LIBTWHEEL_EXPORT int libtwheel_query_sz(int fd, uint64_t handle,
					struct twheel_query *q, size_t q_size);

/* ---- Files ------------------------------------------------------------- */

/**
 * libtwheel_open() - open /dev/twheel
 * @flags: 0 or a combination of O_NONBLOCK and O_CLOEXEC
 *
 * Every open file is an independent set of timers; closing it cancels them
 * all.  O_NONBLOCK makes libtwheel_read_events() return -EAGAIN instead of
 * blocking; the fd can always be watched with poll() or epoll (EPOLLIN
 * while events wait).  Call libtwheel_api() next: it refuses a module of
 * another ABI version.
 *
 * Return: the file descriptor, -EINVAL for other flag bits, or the negative
 * errno of open(2) (-ENOENT if the module is not loaded).
 */
LIBTWHEEL_EXPORT int libtwheel_open(int flags);

/**
 * libtwheel_close() - close a file from libtwheel_open()
 * @fd: the file
 *
 * Cancels and frees every timer of the file (unless another descriptor
 * still refers to the same open file, e.g. after fork() or dup()).
 *
 * Return: 0 or the negative errno of close(2).
 */
LIBTWHEEL_EXPORT int libtwheel_close(int fd);

/**
 * libtwheel_api() - the handshake: ABI version, features and limits
 * @fd:  a twheel file
 * @api: filled with the kernel's answer (struct twheel_api, out_* fields)
 *
 * Programs call this once after opening and check the features they need
 * (TWHEEL_FEATURE_*).  A module of ABI version 1 does not know this
 * ioctl; the library then asks it with the version 1 command only to
 * learn its version, which it reports in @api->out_abi_version.
 *
 * Return: 0; -EPROTO if the module speaks another ABI version than
 * LIBTWHEEL_ABI_VERSION or reports another event size (@api->out_abi_version
 * and @api->out_event_size tell what it speaks; libtwheel_strerror(-EPROTO)
 * says what to do); or the negative errno of the ioctl.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT int libtwheel_api(int fd, struct twheel_api *api);
#else
static inline int libtwheel_api(int fd, struct twheel_api *api)
{
	return libtwheel_api_sz(fd, api, sizeof(*api));
}
#endif

/**
 * libtwheel_strerror() - a message for an error of this library
 * @err: a negative errno value returned by a libtwheel function (or its
 *       absolute value)
 *
 * What the error means for /dev/twheel, and what to do about it, for
 * the errors a user can act on: -ENOSPC (which limit was reached, and how
 * to raise it; from libtwheel_setup(), max_instances), -ENOENT (a handle
 * this file does not know; from libtwheel_open(), no device: the module
 * is not loaded), -ENODEV and -ENXIO (no device), -EINVAL (an argument
 * out of range, a period below the tick included), -E2BIG and -EPROTO
 * (the ABI mismatch that libtwheel_api() found).  strerror() for the
 * others.
 *
 * Return: a static string.
 */
LIBTWHEEL_EXPORT const char *libtwheel_strerror(int err);

/**
 * libtwheel_setup() - choose the clock and tick of a file's timers
 * @fd:      an open /dev/twheel file without timers
 * @clockid: CLOCK_MONOTONIC (the default of a file) or CLOCK_BOOTTIME,
 *           which goes on counting while the system is suspended
 * @tick_ns: the tick in ns, 1000 (1 us) to 1000000000 (1 s); 0 for the
 *           module's (its tick_ns parameter)
 *
 * TWHEEL_IOC_SETUP: needs TWHEEL_FEATURE_SETUP in libtwheel_api()'s
 * out_features, which then reports the file's clock and tick.
 *
 * Return: 0; -EBUSY if the file has a timer; -EINVAL for another clock or
 * a tick out of range; -ENOSPC if the module's limit of wheel instances
 * (max_instances) is reached; -ENOTTY from a module without it; or
 * another negative errno of the ioctl.
 */
LIBTWHEEL_EXPORT int libtwheel_setup(int fd, clockid_t clockid,
				     uint64_t tick_ns);

/**
 * libtwheel_now() - the current CLOCK_MONOTONIC time in ns
 *
 * Return: the time in ns on the clock of the times of a file that
 * libtwheel_setup() did not put on CLOCK_BOOTTIME (absolute expiries,
 * TWHEEL_ARM_ABS, and the expires/fired fields of events), as the
 * caller's time namespace reads it.
 */
LIBTWHEEL_EXPORT uint64_t libtwheel_now(void);

/**
 * libtwheel_clock_now() - the current time of @clockid in ns
 * @clockid: CLOCK_MONOTONIC or CLOCK_BOOTTIME, the clock of the file
 *
 * Return: the time, or 0 if clock_gettime() fails.
 */
LIBTWHEEL_EXPORT uint64_t libtwheel_clock_now(clockid_t clockid);

/* ---- Single timers ----------------------------------------------------- */

/**
 * libtwheel_arm() - create a timer
 * @fd:     a twheel file
 * @spec:   the timer (struct twheel_timer_spec): @spec->flags
 *          TWHEEL_ARM_ABS if @spec->expires is an absolute CLOCK_MONOTONIC
 *          time, 0 if it is a delay from now; @spec->expires (at most
 *          INT64_MAX), @spec->period (0 for a one-shot timer, else at least
 *          one tick), @spec->slack and @spec->cookie in ns and as returned
 *          in every event
 * @handle: out: the timer's handle; may be NULL only if the caller never
 *          needs to modify, cancel or query the timer
 *
 * A one-shot timer ends once its event has been read; a periodic one lives
 * until cancelled or until the file is closed.
 *
 * Return: 0, or -EINVAL (bad flags or range), -ENOSPC (timer limit),
 * -ENOMEM, -EFAULT.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT int libtwheel_arm(int fd, const struct twheel_timer_spec *spec,
				   uint64_t *handle);
#else
static inline int libtwheel_arm(int fd, const struct twheel_timer_spec *spec,
				uint64_t *handle)
{
	return libtwheel_arm_sz(fd, spec, sizeof(*spec), handle);
}
#endif

/**
 * libtwheel_modify() - re-arm an existing timer
 * @fd:     a twheel file
 * @handle: the timer
 * @spec:   its new expiry, period, slack and cookie, as for libtwheel_arm()
 *
 * Replaces expiry, period, slack and cookie in O(1).  An event of the timer
 * that was not read yet is withdrawn.
 *
 * Return: 0, or -ENOENT (no such timer in this file), -EINVAL, -EFAULT,
 * -ENOMEM (the first periodic timer of a table chunk needs memory).
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT int libtwheel_modify(int fd, uint64_t handle,
				      const struct twheel_timer_spec *spec);
#else
static inline int libtwheel_modify(int fd, uint64_t handle,
				   const struct twheel_timer_spec *spec)
{
	return libtwheel_modify_sz(fd, handle, spec, sizeof(*spec));
}
#endif

/**
 * libtwheel_cancel() - cancel and free a timer
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
LIBTWHEEL_EXPORT int libtwheel_cancel(int fd, uint64_t handle);

/**
 * libtwheel_query() - look at a timer
 * @fd:     a twheel file
 * @handle: the timer
 * @q:      out: state (TWHEEL_QUERY_*), remaining time, next expiry,
 *          period and cookie (the out_* fields of struct
 *          twheel_query)
 *
 * Return: 0, or -ENOENT, -EFAULT.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT int libtwheel_query(int fd, uint64_t handle,
				     struct twheel_query *q);
#else
static inline int libtwheel_query(int fd, uint64_t handle,
				  struct twheel_query *q)
{
	return libtwheel_query_sz(fd, handle, q, sizeof(*q));
}
#endif

/* ---- Events ------------------------------------------------------------ */

/**
 * libtwheel_read_events() - read expirations
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
LIBTWHEEL_EXPORT ssize_t libtwheel_read_events(int fd, struct twheel_event *evs,
					       size_t max);

/* ---- Batches ----------------------------------------------------------- */

/**
 * struct libtwheel_batch - a list of arm/modify/cancel records to submit
 * @ops:       the records (struct twheel_batch_op)
 * @count:     records appended so far
 * @capacity:  room in @ops
 * @done:      records the kernel has processed; [0, @done) carry their
 *             result (and, for arms, the new handle), [@done, @count) are
 *             untouched
 * @failed:    processed records whose out_result is a negative errno
 * @max_batch: most records per ioctl; 0 until the first submit asks the
 *             kernel (libtwheel_api(), which also checks the ABI version),
 *             may be lowered by the caller after that
 * @owned:     the library allocated @ops and grows it as needed
 *
 * Set one up with libtwheel_batch_init(), append records with
 * libtwheel_batch_arm(), libtwheel_batch_modify() and
 * libtwheel_batch_cancel(), send them with libtwheel_batch_submit() and
 * read each record's out_result and handle from @ops.  The fields are
 * public so that results can be read directly; change them only through
 * the functions below (except @max_batch).
 */
struct libtwheel_batch {
	struct twheel_batch_op *ops;
	size_t count;
	size_t capacity;
	size_t done;
	size_t failed;
	uint32_t max_batch;
	int owned;
};

/*
 * The sized batch functions behind the inline ones below: @spec_size and
 * @op_size are the sizes of the caller's struct twheel_timer_spec and of
 * the records of @b->ops.
 */
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_arm_sz(struct libtwheel_batch *b,
						const struct twheel_timer_spec *spec,
						size_t spec_size, size_t op_size);
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_modify_sz(struct libtwheel_batch *b,
						   uint64_t handle,
						   const struct twheel_timer_spec *spec,
						   size_t spec_size, size_t op_size);
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_cancel_sz(struct libtwheel_batch *b,
						   uint64_t handle, size_t op_size);
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_submit_sz(int fd, struct libtwheel_batch *b,
						   size_t op_size);

/**
 * libtwheel_batch_init() - set up a batch buffer
 * @b:        the buffer
 * @ops:      caller-owned array of @capacity records, or NULL to let the
 *            library allocate and grow the array (free it with
 *            libtwheel_batch_free())
 * @capacity: size of @ops; with @ops NULL, a hint for the first allocation
 *            (0 for a default)
 */
LIBTWHEEL_EXPORT void libtwheel_batch_init(struct libtwheel_batch *b,
					   struct twheel_batch_op *ops,
					   size_t capacity);

/**
 * libtwheel_batch_free() - release a library-managed array
 * @b: the buffer; it is empty afterwards and may be initialised again
 *
 * Does not free a caller-owned array.
 */
LIBTWHEEL_EXPORT void libtwheel_batch_free(struct libtwheel_batch *b);

/**
 * libtwheel_batch_reset() - forget all records, keep the array
 * @b: the buffer
 */
LIBTWHEEL_EXPORT void libtwheel_batch_reset(struct libtwheel_batch *b);

/**
 * libtwheel_batch_arm() - append an arm record
 * @b:    the buffer
 * @spec: the timer, as for libtwheel_arm()
 *
 * Return: the index of the record in @b->ops (its handle appears there
 * after the submit), or -ENOSPC (a caller-owned array is full), -ENOMEM.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_arm(struct libtwheel_batch *b,
					     const struct twheel_timer_spec *spec);
#else
static inline ssize_t libtwheel_batch_arm(struct libtwheel_batch *b,
					  const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_arm_sz(b, spec, sizeof(*spec), sizeof(*b->ops));
}
#endif

/**
 * libtwheel_batch_modify() - append a modify record
 * @b:      the buffer
 * @handle: the timer
 * @spec:   its new expiry, period, slack and cookie
 *
 * Return: the index of the record, or -ENOSPC, -ENOMEM.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_modify(struct libtwheel_batch *b,
						uint64_t handle,
						const struct twheel_timer_spec *spec);
#else
static inline ssize_t libtwheel_batch_modify(struct libtwheel_batch *b,
					     uint64_t handle,
					     const struct twheel_timer_spec *spec)
{
	return libtwheel_batch_modify_sz(b, handle, spec, sizeof(*spec),
					 sizeof(*b->ops));
}
#endif

/**
 * libtwheel_batch_cancel() - append a cancel record
 * @b:      the buffer
 * @handle: the timer
 *
 * Return: the index of the record, or -ENOSPC, -ENOMEM.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_cancel(struct libtwheel_batch *b,
						uint64_t handle);
#else
static inline ssize_t libtwheel_batch_cancel(struct libtwheel_batch *b,
					     uint64_t handle)
{
	return libtwheel_batch_cancel_sz(b, handle, sizeof(*b->ops));
}
#endif

/**
 * libtwheel_batch_submit() - send the unprocessed records to the kernel
 * @fd: a twheel file
 * @b:  the buffer
 *
 * Submits records [@b->done, @b->count) in order with TWHEEL_IOC_BATCH, in
 * as many ioctls as max_batch requires, and advances @b->done by what the
 * kernel processed.  The kernel writes a record's out_result only when it
 * fails (and for an arm): the library zeroes out_result (and an arm's
 * handle) of every record before sending it, so afterwards every processed
 * record reads 0 or a negative errno in @b->ops[i].out_result and, for a
 * successful arm, the new handle in @b->ops[i].handle.  A failing record
 * does not stop the others; the kernel's out_failed count of them is added
 * to @b->failed, so a caller needs to look at the records only when
 * @b->failed grew.
 *
 * The kernel stops a batch early only on EFAULT or ENOMEM.  The function
 * then resubmits from the record that stopped it; if that record cannot
 * be processed either, it returns the kernel's errno with @b->done telling
 * exactly how far the kernel got, and calling it again resumes from there.
 * (After an EFAULT on writing a record back, the CANCEL and MODIFY records
 * of the same run of up to 32 beyond @b->done may have taken effect: see
 * struct twheel_batch.  @b->ops in valid memory never causes one.)
 *
 * Return: the number of records processed by this call (all remaining
 * ones), or a negative errno with @b->done giving the exact progress.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT ssize_t libtwheel_batch_submit(int fd,
						struct libtwheel_batch *b);
#else
static inline ssize_t libtwheel_batch_submit(int fd, struct libtwheel_batch *b)
{
	return libtwheel_batch_submit_sz(fd, b, sizeof(*b->ops));
}
#endif

/* ---- io_uring (TWHEEL_FEATURE_URING_CMD) ------------------------------ */

/*
 * The kernel's (and liburing's) SQE and CQE; libtwheel needs no liburing,
 * and a program may use any io_uring library or none.  As for the ioctls
 * (see "Structure sizes" above), the helpers that put a struct
 * twheel_timer_spec or batch records in an SQE are inline wrappers that
 * pass the sizes the program was compiled with to a
 * libtwheel_uring_prep_*_sz() function (symbol version LIBTWHEEL_1.3);
 * libtwheel 1.2's unsized symbols stay, with ABI version 2's first
 * sizes.  A spec must fit the SQE's command area after the command's
 * 16-byte head (TWHEEL_URING_CMD_SIZE_MAX - 16 = 64 bytes).
 */
struct io_uring_sqe;
struct io_uring_cqe;

/*
 * The sized helpers behind the inline ones below: @spec_size is the size
 * of the caller's struct twheel_timer_spec (at least ABI version 2's
 * first, 40, and at most 64), @op_size that of its batch records (at
 * least 56, at most TWHEEL_STRUCT_SIZE_MAX).  Return: 0, or -EINVAL for
 * a size out of range; the SQE is then still filled, as a command of
 * size 0 that the kernel completes with -EINVAL, so that an SQE already
 * taken from the ring never goes out half prepared.
 */
LIBTWHEEL_EXPORT int libtwheel_uring_prep_arm_sz(struct io_uring_sqe *sqe, int fd,
						 const struct twheel_timer_spec *spec,
						 size_t spec_size);
LIBTWHEEL_EXPORT int libtwheel_uring_prep_arm_expiry_sz(struct io_uring_sqe *sqe,
							int fd,
							const struct twheel_timer_spec *spec,
							size_t spec_size,
							uint64_t *handle);
LIBTWHEEL_EXPORT int libtwheel_uring_prep_arm_mshot_sz(struct io_uring_sqe *sqe,
						       int fd,
						       const struct twheel_timer_spec *spec,
						       size_t spec_size,
						       uint64_t *handle,
						       uint16_t buf_group);
LIBTWHEEL_EXPORT int libtwheel_uring_prep_modify_sz(struct io_uring_sqe *sqe,
						    int fd, uint64_t handle,
						    const struct twheel_timer_spec *spec,
						    size_t spec_size);
LIBTWHEEL_EXPORT int libtwheel_uring_prep_batch_sz(struct io_uring_sqe *sqe,
						   int fd, struct twheel_batch_op *ops,
						   uint32_t count, size_t op_size);

/**
 * libtwheel_uring_prep_arm() - prepare an SQE that arms a timer
 * @sqe:  a 128-byte SQE of a ring set up with IORING_SETUP_SQE128 and
 *        IORING_SETUP_CQE32 (the handle comes back in the CQE)
 * @fd:   the file (from libtwheel_open(); a registered file's index works
 *        too, with IOSQE_FIXED_FILE set in sqe->flags after this call)
 * @spec: the timer, as for libtwheel_arm()
 *
 * Fills the whole SQE (128 bytes, user_data 0) as IORING_OP_URING_CMD with
 * TWHEEL_IOC_ARM: set user_data and flags afterwards, as after liburing's
 * io_uring_prep_*() calls.  The completion's res is 0 or a negative errno
 * (those of libtwheel_arm()); libtwheel_uring_cqe_handle() reads the new
 * timer's handle from it.
 *
 * Return: 0, or -EINVAL if the program's struct twheel_timer_spec does
 * not fit the SQE (the SQE then fails with -EINVAL; see the sized
 * helpers above).  libtwheel 1.2's symbol returned nothing.
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT void libtwheel_uring_prep_arm(struct io_uring_sqe *sqe, int fd,
					       const struct twheel_timer_spec *spec);
#else
static inline int libtwheel_uring_prep_arm(struct io_uring_sqe *sqe, int fd,
					   const struct twheel_timer_spec *spec)
{
	return libtwheel_uring_prep_arm_sz(sqe, fd, spec, sizeof(*spec));
}
#endif

/**
 * libtwheel_uring_prep_arm_expiry() - prepare an ARM that completes at expiry
 * @sqe:    a 128-byte SQE (IORING_SETUP_SQE128 and IORING_SETUP_CQE32)
 * @fd:     the file
 * @spec:   the timer: one-shot (a period is -EINVAL)
 * @handle: where the kernel writes the timer's handle at submission, for
 *          a CANCEL; NULL if not wanted.  It must stay valid until then
 *
 * As libtwheel_uring_prep_arm(), with TWHEEL_ARM_URING_EXPIRY (check
 * TWHEEL_FEATURE_URING_EXPIRY first: 6.7 and later): the completion comes
 * when the timer fires, res 0 and the fire time in big_cqe[0], or with
 * -ECANCELED when it is cancelled or the ring is torn down.
 *
 * Return: as libtwheel_uring_prep_arm().
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT void libtwheel_uring_prep_arm_expiry(struct io_uring_sqe *sqe,
						      int fd,
						      const struct twheel_timer_spec *spec,
						      uint64_t *handle);
#else
static inline int libtwheel_uring_prep_arm_expiry(struct io_uring_sqe *sqe,
						  int fd,
						  const struct twheel_timer_spec *spec,
						  uint64_t *handle)
{
	return libtwheel_uring_prep_arm_expiry_sz(sqe, fd, spec, sizeof(*spec),
						  handle);
}
#endif

/**
 * libtwheel_uring_prep_arm_mshot() - prepare a periodic ARM completing per expiry
 * @sqe:       a 128-byte SQE (IORING_SETUP_SQE128 and IORING_SETUP_CQE32)
 * @fd:        the file
 * @spec:      the timer: periodic (a one-shot spec is -EINVAL)
 * @handle:    as for libtwheel_uring_prep_arm_expiry()
 * @buf_group: the provided-buffer group each expiry record is written to
 *             (buffers of at least the handshake's event size)
 *
 * As libtwheel_uring_prep_arm_expiry(), submitted as a multishot command
 * (IORING_URING_CMD_MULTISHOT, IOSQE_BUFFER_SELECT; check
 * TWHEEL_FEATURE_URING_MSHOT first: 6.18 and later, elsewhere the
 * completion is -EOPNOTSUPP): each expiry posts a completion with
 * IORING_CQE_F_MORE whose selected buffer holds a struct twheel_event
 * (expirations the program has not yet taken merged into its overrun),
 * until a CANCEL or the ring's teardown ends it with -ECANCELED, or it
 * runs out of buffers (-ENOBUFS, the timer then gone).
 *
 * Return: as libtwheel_uring_prep_arm().
 */
static inline int libtwheel_uring_prep_arm_mshot(struct io_uring_sqe *sqe,
						 int fd,
						 const struct twheel_timer_spec *spec,
						 uint64_t *handle,
						 uint16_t buf_group)
{
	return libtwheel_uring_prep_arm_mshot_sz(sqe, fd, spec, sizeof(*spec),
						 handle, buf_group);
}

/**
 * libtwheel_uring_prep_modify() - prepare an SQE that re-arms a timer
 * @sqe:    a 128-byte SQE (IORING_SETUP_SQE128)
 * @fd:     the file
 * @handle: the timer
 * @spec:   its new expiry, period, slack and cookie
 *
 * As libtwheel_uring_prep_arm(), with TWHEEL_IOC_MODIFY; res is 0 or a
 * negative errno (those of libtwheel_modify()).
 *
 * Return: as libtwheel_uring_prep_arm().
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT void libtwheel_uring_prep_modify(struct io_uring_sqe *sqe,
						  int fd, uint64_t handle,
						  const struct twheel_timer_spec *spec);
#else
static inline int libtwheel_uring_prep_modify(struct io_uring_sqe *sqe,
					      int fd, uint64_t handle,
					      const struct twheel_timer_spec *spec)
{
	return libtwheel_uring_prep_modify_sz(sqe, fd, handle, spec, sizeof(*spec));
}
#endif

/**
 * libtwheel_uring_prep_cancel() - prepare an SQE that cancels a timer
 * @sqe:    a 128-byte SQE (IORING_SETUP_SQE128)
 * @fd:     the file
 * @handle: the timer
 *
 * As libtwheel_uring_prep_arm(), with TWHEEL_IOC_CANCEL; res is
 * TWHEEL_CANCEL_PENDING or TWHEEL_CANCEL_FIRED, or a negative errno (those
 * of libtwheel_cancel()).
 */
LIBTWHEEL_EXPORT void libtwheel_uring_prep_cancel(struct io_uring_sqe *sqe,
						  int fd, uint64_t handle);

/**
 * libtwheel_uring_prep_batch() - prepare an SQE that submits a batch
 * @sqe:   a 128-byte SQE (IORING_SETUP_SQE128)
 * @fd:    the file
 * @ops:   @count records of the program's struct twheel_batch_op (the
 *         SQE says their size), their out_result zeroed; they must stay
 *         where they are until the completion
 * @count: at most out_max_batch of libtwheel_api()
 *
 * As libtwheel_uring_prep_arm(), with TWHEEL_IOC_BATCH: res is the number
 * of records processed, or a negative errno when none was, as the ioctl
 * returns; on a CQE32 ring libtwheel_uring_cqe_handle() gives out_failed.
 * The records' out_result and handle are written as by the ioctl.
 *
 * Return: 0 (-EINVAL only from libtwheel_uring_prep_batch_sz(), for a
 * record size out of range).
 */
#ifdef LIBTWHEEL_BUILDING
LIBTWHEEL_EXPORT void libtwheel_uring_prep_batch(struct io_uring_sqe *sqe,
						 int fd, struct twheel_batch_op *ops,
						 uint32_t count);
#else
static inline int libtwheel_uring_prep_batch(struct io_uring_sqe *sqe,
					     int fd, struct twheel_batch_op *ops,
					     uint32_t count)
{
	return libtwheel_uring_prep_batch_sz(sqe, fd, ops, count, sizeof(*ops));
}
#endif

/**
 * libtwheel_uring_cqe_handle() - the output of a command's completion
 * @cqe: a 32-byte CQE (IORING_SETUP_CQE32) of a command prepared here
 *
 * Return: the CQE's first extra field: the new timer's handle after an
 * ARM whose res is 0, the time the timer fired after an ARM prepared by
 * libtwheel_uring_prep_arm_expiry() that completed with 0, out_failed
 * after a BATCH, else 0.
 */
LIBTWHEEL_EXPORT uint64_t libtwheel_uring_cqe_handle(const struct io_uring_cqe *cqe);

#ifdef __cplusplus
}
#endif

#endif /* LIBTWHEEL_H */
