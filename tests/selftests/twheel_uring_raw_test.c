// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring commands of /dev/twheel through a ring driven by raw system
 * calls, without liburing: built 64-bit and, as twheel_uring_raw_test32,
 * 32-bit, so that the SQE layout, the structures in its command area and
 * a batch's record pointer are checked from a compat task too (a 32-bit
 * liburing is not packaged with Debian's gcc-multilib).
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <linux/io_uring.h>

#include "kselftest_harness.h"
#include "twheel_utils.h"

/* What the kernel reads, the same for 32- and 64-bit programs. */
_Static_assert(sizeof(struct io_uring_sqe) == 64, "SQE");
_Static_assert(offsetof(struct io_uring_sqe, cmd_op) == 8, "cmd_op");
_Static_assert(offsetof(struct io_uring_sqe, user_data) == 32, "user_data");
_Static_assert(offsetof(struct io_uring_sqe, cmd) == 48, "cmd");
_Static_assert(sizeof(struct io_uring_cqe) == 16, "CQE");
_Static_assert(offsetof(struct twheel_arm, spec) == 16, "twheel_arm");
_Static_assert(offsetof(struct twheel_batch, ops) == 8, "twheel_batch");
_Static_assert(sizeof(struct twheel_arm) <= TWHEEL_URING_CMD_SIZE_MAX, "room");

#define RING_ENTRIES	4

struct raw_ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	uint8_t *sqes;		/* 128-byte entries */
	uint8_t *cqes;		/* 32-byte entries */
};

static int raw_ring_init(struct raw_ring *r)
{
	struct io_uring_params p = {
		.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
	};
	uint8_t *sq, *cq;

	r->fd = syscall(__NR_io_uring_setup, RING_ENTRIES, &p);
	if (r->fd < 0)
		return -errno;
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned int),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * 32,
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * 128, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -ENOMEM;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = cq + p.cq_off.cqes;
	return 0;
}

/* One command, @len bytes of @arg in its command area: res, *@res2. */
static int raw_cmd(struct raw_ring *r, int fd, uint32_t cmd_op,
		   const void *arg, size_t len, uint64_t *res2)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = (void *)(r->sqes + idx * 128);
	struct io_uring_cqe *cqe;
	int ret;

	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
	sqe->user_data = 0x1234567890abcdefULL;
	memcpy(sqe->cmd, arg, len);
	r->sq_array[idx] = idx;
	atomic_store_explicit((_Atomic unsigned int *)r->sq_tail, tail + 1,
			      memory_order_release);
	ret = syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		      NULL, 0);
	if (ret != 1)
		return ret < 0 ? -errno : -EIO;
	head = *r->cq_head;
	if (atomic_load_explicit((_Atomic unsigned int *)r->cq_tail,
				 memory_order_acquire) == head)
		return -ENODATA;
	cqe = (void *)(r->cqes + (head & *r->cq_mask) * 32);
	if (cqe->user_data != 0x1234567890abcdefULL)
		return -EPROTO;
	ret = cqe->res;
	*res2 = cqe->big_cqe[0];
	atomic_store_explicit((_Atomic unsigned int *)r->cq_head, head + 1,
			      memory_order_release);
	return ret;
}

FIXTURE(twheel_raw) {
	int fd;
	struct raw_ring ring;
};

FIXTURE_SETUP(twheel_raw)
{
	struct twheel_api api;
	int ret;

	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
	test_ioctl_api(self->fd, &api);
	ASSERT_TRUE(api.out_features & TWHEEL_FEATURE_URING_CMD);
	ret = raw_ring_init(&self->ring);
	/* disabled (sysctl kernel.io_uring_disabled) or not built in */
	if (ret)
		SKIP(return, "io_uring unavailable: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(twheel_raw)
{
	close(self->ring.fd);
	close(self->fd);
}

/* ARM, CANCEL and a BATCH of ARMs and CANCELs, with their outputs. */
TEST_F(twheel_raw, arm_batch_cancel)
{
	struct twheel_cancel c = { .size = sizeof(c) };
	struct twheel_arm a = { .size = sizeof(a) };
	struct twheel_batch_op ops[10];
	struct twheel_batch b = {
		.size = sizeof(b),
		.ops = (uintptr_t)ops,
		.count = 10,
		.op_size = sizeof(ops[0]),
	};
	struct twheel_query q;
	uint64_t h, res2;
	int i;

	tw_spec(&a.spec, 0, 100 * NSEC_PER_SEC, 0, 0, 77);
	ASSERT_EQ(0, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_ARM, &a,
			     sizeof(a), &h));
	test_ioctl_query(self->fd, h, &q);
	EXPECT_EQ(77, q.out_cookie);
	EXPECT_EQ(TWHEEL_QUERY_PENDING, q.out_state);

	for (i = 0; i < 10; i++)
		op_arm(&ops[i], 0, 100 * NSEC_PER_SEC, 0, i);
	ASSERT_EQ(10, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_BATCH, &b,
			      sizeof(b), &res2));
	EXPECT_EQ(0, res2);
	for (i = 0; i < 10; i++) {
		EXPECT_EQ(0, ops[i].out_result);
		test_ioctl_query(self->fd, ops[i].handle, &q);
		EXPECT_EQ(i, q.out_cookie);
		op_cancel(&ops[i], ops[i].handle);
	}
	EXPECT_EQ(11, fd_timers(self->fd));
	ASSERT_EQ(10, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_BATCH, &b,
			      sizeof(b), &res2));
	EXPECT_EQ(0, res2);

	c.handle = h;
	EXPECT_EQ(TWHEEL_CANCEL_PENDING,
		  raw_cmd(&self->ring, self->fd, TWHEEL_IOC_CANCEL, &c,
			  sizeof(c), &res2));
	EXPECT_EQ(0, fd_timers(self->fd));
	EXPECT_EQ(-ENOENT, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_CANCEL,
				   &c, sizeof(c), &res2));
}

/* An unknown field set, and a size beyond the area, from this ABI too. */
TEST_F(twheel_raw, errors)
{
	struct twheel_arm a = { .size = sizeof(a) };
	uint8_t area[TWHEEL_URING_CMD_SIZE_MAX] = { 0 };
	uint64_t res2;

	tw_spec(&a.spec, 0, NSEC_PER_SEC, 0, 0, 1);
	a.size = TWHEEL_URING_CMD_SIZE_MAX;
	memcpy(area, &a, sizeof(a));
	area[TWHEEL_URING_CMD_SIZE_MAX - 1] = 1;
	EXPECT_EQ(-E2BIG, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_ARM, area,
				  sizeof(area), &res2));
	a.size = TWHEEL_URING_CMD_SIZE_MAX + 8;
	EXPECT_EQ(-EINVAL, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_ARM, &a,
				   sizeof(a), &res2));
	EXPECT_EQ(-ENOTTY, raw_cmd(&self->ring, self->fd, TWHEEL_IOC_QUERY, &a,
				   sizeof(a), &res2));
	EXPECT_EQ(0, fd_timers(self->fd));
}

TEST_HARNESS_MAIN
