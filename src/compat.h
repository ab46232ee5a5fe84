/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API drift between the releases twheel supports (6.1 .. 6.12+).
 * One small helper per changed interface, so the code that uses them reads
 * like current mainline.
 */
#ifndef _TWHEEL_COMPAT_H
#define _TWHEEL_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/io_uring.h>
#include <linux/version.h>
/* struct io_uring_cmd and its helpers moved to a header of their own in 6.8 */
#if KERNEL_VERSION(6, 8, 0) <= LINUX_VERSION_CODE
#include <linux/io_uring/cmd.h>
#endif

/*
 * hrtimer_setup() appeared in 6.13 and hrtimer_init() was removed in 6.15;
 * setting ->function by hand is what hrtimer_setup() replaces.
 */
static inline void twheel_hrtimer_setup(struct hrtimer *timer,
					enum hrtimer_restart (*fn)(struct hrtimer *),
					clockid_t clock_id, enum hrtimer_mode mode)
{
#if KERNEL_VERSION(6, 13, 0) <= LINUX_VERSION_CODE
	hrtimer_setup(timer, fn, clock_id, mode);
#else
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
#endif
}

#ifdef CONFIG_IO_URING
/*
 * The command area of an IORING_OP_URING_CMD SQE (16 bytes, 80 with
 * IORING_SETUP_SQE128): ->cmd up to 6.5, the whole SQE as ->sqe from 6.6
 * on.  Either may be the SQ ring, which userspace writes: read it once.
 * The SQE's ->cmd directly: io_uring_sqe_cmd(sqe) became a macro taking
 * the command's type in 6.18 (7.2 has it), with a size check that
 * twheel's variable-sized area does not fit.  ->cmd is declared cmd[0],
 * so a compiler that sizes objects by their field (gcc 16 under
 * FORTIFY_SOURCE, as 7.2's headers build) takes any copy from it for an
 * overflow: hide where the pointer came from, the area is as long as
 * the ring's SQEs make it.
 */
static inline const void *twheel_uring_cmd_area(const struct io_uring_cmd *ioucmd)
{
#if KERNEL_VERSION(6, 6, 0) <= LINUX_VERSION_CODE
	const void *area = ioucmd->sqe->cmd;

	OPTIMIZER_HIDE_VAR(area);
	return area;
#else
	return ioucmd->cmd;
#endif
}

/*
 * Complete a command with @ret in the CQE's res and @res2 in its first
 * extra field (IORING_SETUP_CQE32 rings).  6.1.0 had no @issue_flags;
 * 6.3 added them and Debian's 6.1 (6.1.192) has them, as 6.12 does; 6.1
 * takes @res2 as ssize_t, 6.12 as u64: the bits are the same.  6.18
 * (IORING_SETUP_CQE_MIXED) dropped @res2 from io_uring_cmd_done() and
 * gives it to io_uring_cmd_done32(), which fills the extra field on a
 * CQE32 ring as io_uring_cmd_done() did (and posts a 32-byte CQE on a
 * mixed ring).
 */
static inline void twheel_uring_cmd_done(struct io_uring_cmd *ioucmd,
					 ssize_t ret, u64 res2,
					 unsigned int issue_flags)
{
#ifdef IORING_SETUP_CQE_MIXED
	io_uring_cmd_done32(ioucmd, ret, res2, issue_flags);
#else
	io_uring_cmd_done(ioucmd, ret, res2, issue_flags);
#endif
}

/*
 * TWHEEL_DEFINE_URING_TW(fn) defines fn_tw, the task-work callback to
 * give io_uring_cmd_complete_in_task() for
 * void fn(struct io_uring_cmd *ioucmd, unsigned int issue_flags).  Up to
 * 6.18 io_uring called such a function through the command's
 * ->task_work_cb; 6.19 removed that field and calls an io_req_tw_func_t,
 * which finds its command with io_uring_cmd_from_tw() and completes with
 * IO_URING_CMD_TASK_WORK_ISSUE_FLAGS, as io_uring passed before (the
 * change that brought that macro to drivers, hence the test).
 */
#ifdef IO_URING_CMD_TASK_WORK_ISSUE_FLAGS
#define TWHEEL_DEFINE_URING_TW(fn)					\
static void fn##_tw(struct io_tw_req tw_req, io_tw_token_t tw)		\
{									\
	fn(io_uring_cmd_from_tw(tw_req),				\
	   IO_URING_CMD_TASK_WORK_ISSUE_FLAGS);				\
}
#else
#define TWHEEL_DEFINE_URING_TW(fn)					\
static void fn##_tw(struct io_uring_cmd *ioucmd, unsigned int issue_flags) \
{									\
	fn(ioucmd, issue_flags);					\
}
#endif

/*
 * Commands that stay pending until an event of the driver completes them
 * need io_uring to cancel them when the ring goes away: cancelable
 * commands (io_uring_cmd_mark_cancelable(), IO_URING_F_CANCEL), 6.7 on.
 * Without them a pending command would hold the ring's teardown until it
 * completed by itself.
 */
#ifdef IORING_URING_CMD_CANCELABLE
#define TWHEEL_HAVE_URING_EXPIRY	1
#endif

/*
 * Multishot uring_cmd (6.18 on; sid's 7.2 has it): one command posts a
 * CQE per event into a provided buffer it selects
 * (io_uring_cmd_buffer_select(), io_uring_mshot_cmd_post_cqe()), which
 * is how a periodic timer's expiries reach the ring.  The uapi flag
 * came with the two functions.
 */
#if defined(TWHEEL_HAVE_URING_EXPIRY) && defined(IORING_URING_CMD_MULTISHOT)
#define TWHEEL_HAVE_URING_MSHOT	1
#endif
#endif /* CONFIG_IO_URING */

#endif /* _TWHEEL_COMPAT_H */
