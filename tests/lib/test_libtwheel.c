// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of libtwheel's own logic, without the kernel module.
 *
 * What libtwheel does beyond filling structures is the handshake (which
 * tells a module of ABI version 1 apart), the batch buffer and
 * libtwheel_batch_submit(): growing or bounding the record array,
 * splitting into ioctls of at most max_batch records, zeroing out_result
 * that the kernel writes only on failure, and keeping exact progress when
 * the kernel stops a batch early.  This test links libtwheel.so and
 * interposes ioctl() with a model of the ABI version 2 contract of
 * include/uapi/linux/twheel.h (size fields, E2BIG, out_result only on
 * failure, out_done and out_failed, a short count on ENOMEM, "records from
 * out_done on are untouched"), so that the library's side of that
 * contract can be checked record by record.  Whether the real
 * kernel keeps the contract is what tests/selftests/ and twheelctl demo check.
 *
 * The structures grow at their end, so the model takes any size from ABI
 * version 2's first one up, as the kernel does, and records the sizes it
 * was given: the library must pass the caller's sizes and stay within
 * the caller's memory.  `make -C tools check` runs this test a second time
 * against a libtwheel.so.1 built with a header whose structures grew
 * (tools/Makefile, abi-grown): the program's structures, of the sizes it
 * was compiled with, must be what the library touches and reports.
 *
 * Output is TAP.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/io_uring.h>

#include "libtwheel.h"

#define FAKE_FD 1000

/* ---- the model device ------------------------------------------------- */

/* TWHEEL_IOC_API of ABI version 1: _IOR(0xE8, 0x00, 48 bytes). */
#define V1_IOC_API	_IOC(_IOC_READ, TWHEEL_IOCTL_MAGIC, 0x00, 48)

static struct {
	uint32_t max_batch;
	uint32_t abi_version;		/* 1: the module of ABI version 1 */
	uint64_t next_handle;		/* handles the model hands out */
	uint64_t records_seen;		/* records processed so far, all ioctls */
	uint64_t enomem_at;		/* stop with ENOMEM at this record... */
	int enomem_times;		/* ...this many times (0: never) */
	bool no_out_done;		/* out_done cannot be written back */
	unsigned int ioctls;		/* TWHEEL_IOC_BATCH calls */
	unsigned int bad_size;		/* calls with a wrong size or op_size */
	uint32_t api_size, arm_size;	/* the last sizes given */
	uint32_t op_size;		/* the last batch's op_size */
	uint32_t counts[64];		/* their counts */
	bool live[4096];		/* model timers by handle */
} dev;

static void dev_reset(uint32_t max_batch)
{
	memset(&dev, 0, sizeof(dev));
	dev.max_batch = max_batch;
	dev.abi_version = TWHEEL_ABI_VERSION;
	dev.next_handle = 1;
}

/*
 * As the kernel: out_result is written only for a record that fails (and
 * for ARM), the handle only for an ARM that succeeds; out_done and
 * out_failed at the end.
 */
static long dev_batch(struct twheel_batch *b)
{
	unsigned char *ops = (void *)(uintptr_t)b->ops;
	uint32_t i, failed = 0;

	if (b->size < 32 || b->op_size < 56 || b->op_size > TWHEEL_STRUCT_SIZE_MAX) {
		dev.bad_size++;
		return -EINVAL;
	}
	dev.op_size = b->op_size;
	if (b->flags)
		return -EINVAL;
	if (b->count > dev.max_batch)
		return -E2BIG;
	if (dev.ioctls < 64)
		dev.counts[dev.ioctls] = b->count;
	dev.ioctls++;
	for (i = 0; i < b->count; i++) {
		struct twheel_batch_op *op = (void *)(ops + (size_t)i * b->op_size);
		int32_t err = 0;

		if (dev.enomem_times && dev.records_seen == dev.enomem_at) {
			dev.enomem_times--;
			if (!i)
				return -ENOMEM;
			break;
		}
		switch (op->op) {
		case TWHEEL_OP_ARM:
			if (dev.next_handle >= 4096) {
				err = -ENOSPC;
				break;
			}
			op->handle = dev.next_handle++;
			dev.live[op->handle] = true;
			op->out_result = 0;
			break;
		case TWHEEL_OP_CANCEL:
			if (op->handle >= 4096 || !dev.live[op->handle]) {
				err = -ENOENT;
				break;
			}
			dev.live[op->handle] = false;
			break;
		default:
			err = -EINVAL;
		}
		if (err) {
			op->out_result = err;
			failed++;
		}
		dev.records_seen++;
	}
	if (!dev.no_out_done) {
		b->out_done = i;
		b->out_failed = failed;
	}
	return i;
}

/* Interposes the libc function for libtwheel.so. */
int ioctl(int fd, unsigned long cmd, ...)
{
	va_list ap;
	void *arg;
	long ret;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd != FAKE_FD)
		return (int)syscall(SYS_ioctl, fd, cmd, arg);

	if (dev.abi_version == 1) {
		/* A version 1 module knows none of the version 2 numbers. */
		if (cmd == V1_IOC_API) {
			uint32_t *v1 = arg;

			memset(v1, 0, 48);
			v1[0] = 1;
			v1[1] = sizeof(struct twheel_event);
			return 0;
		}
		errno = ENOTTY;
		return -1;
	}

	switch (cmd) {
	case TWHEEL_IOC_API: {
		struct twheel_api *api = arg;

		if (api->size < 64 || api->size > TWHEEL_STRUCT_SIZE_MAX) {
			dev.bad_size++;
			ret = -EINVAL;
			break;
		}
		dev.api_size = api->size;
		api->out_abi_version = dev.abi_version;
		api->out_event_size = sizeof(struct twheel_event);
		api->out_features = TWHEEL_FEATURE_BATCH;
		api->out_tick_ns = 1000000;
		api->out_slots = 4096;
		api->out_max_batch = dev.max_batch;
		api->out_batch_op_size = sizeof(struct twheel_batch_op);
		ret = 0;
		break;
	}
	case TWHEEL_IOC_BATCH:
		ret = dev_batch(arg);
		break;
	case TWHEEL_IOC_ARM: {
		struct twheel_arm *a = arg;

		if (a->size < 56 || a->size > TWHEEL_STRUCT_SIZE_MAX) {
			dev.bad_size++;
			ret = -EINVAL;
			break;
		}
		dev.arm_size = a->size;
		if (a->spec.flags & ~TWHEEL_ARM_ABS) {
			ret = -EINVAL;
			break;
		}
		a->out_handle = dev.next_handle++;
		dev.live[a->out_handle] = true;
		ret = 0;
		break;
	}
	case TWHEEL_IOC_CANCEL: {
		struct twheel_cancel *c = arg;

		if (c->size != sizeof(*c)) {
			dev.bad_size++;
			ret = -EINVAL;
			break;
		}
		if (c->handle >= 4096 || !dev.live[c->handle]) {
			ret = -ENOENT;
			break;
		}
		dev.live[c->handle] = false;
		c->out_status = TWHEEL_CANCEL_PENDING;
		ret = 0;
		break;
	}
	default:
		ret = -ENOTTY;
	}
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return (int)ret;
}

/* ---- TAP -------------------------------------------------------------- */

static int tests, failures;

static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	tests++;
	if (!cond)
		failures++;
	printf("%sok %d - ", cond ? "" : "not ", tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- tests ------------------------------------------------------------ */

static const struct twheel_timer_spec one_ms = { .expires = 1000000 };

static void test_plain_calls(void)
{
	struct twheel_timer_spec bad = { .flags = 0x80, .expires = 1 };
	struct twheel_event ev;
	struct twheel_api api;
	uint64_t h = 0;

	ok(libtwheel_open(O_RDWR) == -EINVAL,
	   "libtwheel_open rejects flags other than O_NONBLOCK|O_CLOEXEC");
	ok(libtwheel_read_events(FAKE_FD, &ev, 0) == -EINVAL,
	   "libtwheel_read_events(max=0) is -EINVAL");

	dev_reset(8);
	ok(libtwheel_api(FAKE_FD, &api) == 0 && api.out_max_batch == 8 &&
	   api.out_abi_version == 2 && !dev.bad_size,
	   "libtwheel_api passes the handshake through, size set");
	dev.abi_version = TWHEEL_ABI_VERSION + 1;
	ok(libtwheel_api(FAKE_FD, &api) == -EPROTO &&
	   api.out_abi_version == TWHEEL_ABI_VERSION + 1,
	   "libtwheel_api: another ABI version is -EPROTO, struct still filled");
	dev.abi_version = 1;
	ok(libtwheel_api(FAKE_FD, &api) == -EPROTO && api.out_abi_version == 1,
	   "libtwheel_api: a version 1 module (ENOTTY) is told apart: -EPROTO, version 1");
	ok(strstr(libtwheel_strerror(-EPROTO), "ABI version") &&
	   !strcmp(libtwheel_strerror(-EBADF), strerror(EBADF)),
	   "libtwheel_strerror names the ABI mismatch, strerror otherwise");
	ok(strstr(libtwheel_strerror(-ENOSPC), "max_timers_per_user") &&
	   strstr(libtwheel_strerror(ENOSPC), "max_timers_per_fd") &&
	   strstr(libtwheel_strerror(-ENOSPC), "modprobe.d") &&
	   strstr(libtwheel_strerror(-ENOSPC), "max_instances"),
	   "libtwheel_strerror(-ENOSPC) names the three limits and how to raise them");
	ok(strstr(libtwheel_strerror(-ENOENT), "twheel.ko loaded") &&
	   strstr(libtwheel_strerror(-ENODEV), "twheel.ko loaded"),
	   "libtwheel_strerror(-ENOENT/-ENODEV) asks whether the module is loaded");
	ok(strstr(libtwheel_strerror(-EINVAL), "tick"),
	   "libtwheel_strerror(-EINVAL) names a period below the tick");
	ok(libtwheel_strerror(-ENOSPC) == libtwheel_strerror(-ENOSPC),
	   "libtwheel_strerror returns a static string");

	dev_reset(8);
	ok(libtwheel_arm(FAKE_FD, &one_ms, &h) == 0 && h == 1 && !dev.bad_size,
	   "libtwheel_arm returns out_handle, size set");
	ok(libtwheel_arm(FAKE_FD, &bad, &h) == -EINVAL,
	   "errors come back as -errno");
	ok(libtwheel_query(FAKE_FD, 1, &(struct twheel_query){ 0 }) == -ENOTTY,
	   "an unknown command is -ENOTTY");

	dev_reset(8);
	dev.live[5] = true;
	ok(libtwheel_cancel(FAKE_FD, 5) == TWHEEL_CANCEL_PENDING && !dev.bad_size,
	   "libtwheel_cancel returns out_status");
	ok(libtwheel_cancel(FAKE_FD, 5) == -ENOENT,
	   "libtwheel_cancel of a gone handle is -ENOENT");
}

/*
 * The program's structures are of the sizes it was compiled with; bytes
 * beyond them (a canary) are not the library's, whatever header it was
 * built with.
 */
#define CANARY 0xa5

static bool canary_intact(const unsigned char *p, size_t n)
{
	while (n--)
		if (*p++ != CANARY)
			return false;
	return true;
}

static void test_sizes(void)
{
	struct {
		struct twheel_api api;
		unsigned char canary[64];
	} a;
	struct {
		struct twheel_query q;
		unsigned char canary[64];
	} q;
	struct {
		struct twheel_batch_op ops[3];
		unsigned char canary[128];
	} r;
	struct {
		struct twheel_api api;
		uint64_t grown[2];
	} big;
	struct libtwheel_batch b;
	ssize_t n = 0;
	int i;

	dev_reset(8);
	memset(&a, CANARY, sizeof(a));
	ok(libtwheel_api(FAKE_FD, &a.api) == 0 && dev.api_size == sizeof(a.api) &&
	   canary_intact(a.canary, sizeof(a.canary)),
	   "libtwheel_api: the kernel is told the program's size, nothing beyond it is written");
	memset(&q, CANARY, sizeof(q));
	libtwheel_query(FAKE_FD, 1, &q.q);
	ok(q.q.size == sizeof(q.q) && canary_intact(q.canary, sizeof(q.canary)),
	   "libtwheel_query: the program's size, nothing beyond it is written");
	ok(libtwheel_arm(FAKE_FD, &one_ms, NULL) == 0 &&
	   dev.arm_size == 16 + sizeof(one_ms),
	   "libtwheel_arm: the command carries the program's spec size");

	/* the program's records, a canary after them */
	memset(&r, CANARY, sizeof(r));
	libtwheel_batch_init(&b, r.ops, 3);
	for (i = 0; i < 3 && n >= 0; i++)
		n = libtwheel_batch_arm(&b, &one_ms);
	n = n < 0 ? n : libtwheel_batch_submit(FAKE_FD, &b);
	ok(n == 3 && dev.op_size == sizeof(r.ops[0]) && r.ops[0].handle == 2 &&
	   r.ops[1].handle == 3 && r.ops[2].handle == 4 && !r.ops[2].out_result &&
	   canary_intact(r.canary, sizeof(r.canary)),
	   "batch: records strided by the program's op size, nothing beyond them written");

	/* a program built with a larger header than the library's */
	memset(&big, CANARY, sizeof(big));
	ok(libtwheel_api_sz(FAKE_FD, &big.api, sizeof(big)) == 0 &&
	   dev.api_size == sizeof(big) && !big.grown[0] && !big.grown[1],
	   "libtwheel_api_sz: a larger structure is passed on whole, zeroed first");
	ok(libtwheel_api_sz(FAKE_FD, &big.api, 40) == -EINVAL &&
	   libtwheel_api_sz(FAKE_FD, &big.api, TWHEEL_STRUCT_SIZE_MAX + 1) == -EINVAL &&
	   libtwheel_arm_sz(FAKE_FD, &one_ms, 32, NULL) == -EINVAL &&
	   libtwheel_batch_cancel_sz(&b, 1, 48) == -EINVAL,
	   "sizes below ABI version 2's first structures, or above the kernel's largest, are -EINVAL");
}

static void test_buffers(void)
{
	struct twheel_batch_op ops[3];
	struct libtwheel_batch b;
	ssize_t r = 0;
	bool seq = true;
	int i;

	libtwheel_batch_init(&b, ops, 3);
	for (i = 0; i < 3; i++)
		if (libtwheel_batch_arm(&b, &one_ms) != i)
			seq = false;
	ok(seq && b.count == 3, "caller-owned buffer: appends return their index");
	ok(libtwheel_batch_cancel(&b, 1) == -ENOSPC && b.count == 3,
	   "caller-owned buffer: a full array is -ENOSPC");
	libtwheel_batch_free(&b);	/* must not free the caller's array */

	libtwheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 10000 && r >= 0; i++) {
		struct twheel_timer_spec spec = {
			.flags = TWHEEL_ARM_ABS, .expires = (uint64_t)i,
			.slack = 7, .cookie = (uint64_t)i * 3,
		};

		r = libtwheel_batch_modify(&b, (uint64_t)i + 1, &spec);
		if (r != i)
			seq = false;
	}
	ok(seq && b.count == 10000 && b.capacity >= 10000,
	   "library buffer grows: 10000 appends, capacity %zu", b.capacity);
	ok(b.ops[9999].op == TWHEEL_OP_MODIFY && b.ops[9999].handle == 10000 &&
	   b.ops[9999].spec.flags == TWHEEL_ARM_ABS &&
	   b.ops[9999].spec.expires == 9999 && b.ops[9999].spec.slack == 7 &&
	   b.ops[9999].spec.cookie == 29997 && !b.ops[9999].out_result,
	   "records hold what was appended");
	libtwheel_batch_reset(&b);
	ok(b.count == 0 && b.done == 0 && b.ops, "reset keeps the array");
	libtwheel_batch_free(&b);
	ok(!b.ops && !b.count, "free empties the buffer");

	/* a hint whose size in bytes does not fit in a size_t */
	libtwheel_batch_init(&b, NULL, SIZE_MAX / sizeof(*b.ops) + 1);
	r = libtwheel_batch_arm(&b, &one_ms);
	ok(r == -ENOMEM && !b.count && !b.ops,
	   "a first allocation of more than SIZE_MAX bytes is -ENOMEM (r=%zd)", r);
	libtwheel_batch_free(&b);
}

static void test_split(void)
{
	struct libtwheel_batch b;
	bool good = true;
	ssize_t r;
	int i;

	dev_reset(5);
	libtwheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 23; i++) {
		struct twheel_timer_spec spec = { .expires = 1000, .cookie = (uint64_t)i };

		libtwheel_batch_arm(&b, &spec);
	}
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 23 && b.done == 23 && b.failed == 0 && b.max_batch == 5 &&
	   !dev.bad_size,
	   "23 records, max_batch 5: all processed, size and op_size set (r=%zd)", r);
	ok(dev.ioctls == 5 && dev.counts[0] == 5 && dev.counts[3] == 5 &&
	   dev.counts[4] == 3, "split into ioctls of 5,5,5,5,3");
	for (i = 0; i < 23; i++)
		if (b.ops[i].handle != (uint64_t)i + 1 || b.ops[i].out_result)
			good = false;
	ok(good, "every record got its handle and result, in order");
	ok(libtwheel_batch_submit(FAKE_FD, &b) == 0 && dev.ioctls == 5,
	   "submitting again with nothing new is a no-op");

	/*
	 * Appending after a submit sends only the new records.  The kernel
	 * writes out_result only on failure: garbage left in a record must
	 * not read as its result.
	 */
	libtwheel_batch_cancel(&b, 3);
	libtwheel_batch_cancel(&b, 3);	/* gone by now: ENOENT */
	libtwheel_batch_cancel(&b, 4);
	b.ops[23].out_result = -EBADF;
	b.ops[25].out_result = -EBADF;
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 3 && b.done == 26 && b.failed == 1 &&
	   b.ops[24].out_result == -ENOENT,
	   "a failing record does not stop the batch, counted from out_failed");
	ok(!b.ops[23].out_result && !b.ops[25].out_result,
	   "out_result is zeroed before submitting: a success reads 0");

	/* out_done not written back: the library counts failures itself. */
	dev.no_out_done = true;
	libtwheel_batch_cancel(&b, 5);
	libtwheel_batch_cancel(&b, 5);
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 2 && b.failed == 2 && b.ops[27].out_result == -ENOENT,
	   "without out_done, failures are counted from out_result");
	libtwheel_batch_free(&b);
}

static void test_short_counts(void)
{
	struct libtwheel_batch b;
	bool untouched = true;
	ssize_t r;
	int i;

	/* A transient ENOMEM in the middle of an ioctl: resumed. */
	dev_reset(10);
	dev.enomem_at = 7;
	dev.enomem_times = 1;
	libtwheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 25; i++)
		libtwheel_batch_arm(&b, &one_ms);
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 25 && b.done == 25 && dev.records_seen == 25,
	   "short count (transient ENOMEM) is resumed: r=%zd done=%zu", r, b.done);
	ok(dev.counts[0] == 10 && dev.counts[1] == 10 && dev.counts[2] == 8,
	   "resumed from the record that stopped the batch");

	/* A persistent ENOMEM: exact progress, the rest untouched. */
	dev_reset(10);
	dev.enomem_at = 12;
	dev.enomem_times = 2;
	libtwheel_batch_reset(&b);
	for (i = 0; i < 25; i++)
		libtwheel_batch_arm(&b, &one_ms);
	r = libtwheel_batch_submit(FAKE_FD, &b);
	for (i = 12; i < 25; i++)
		if (b.ops[i].handle || b.ops[i].out_result)
			untouched = false;
	ok(r == -ENOMEM && b.done == 12 && untouched,
	   "persistent ENOMEM: -ENOMEM, done=%zu exact, the rest untouched", b.done);
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 13 && b.done == 25 && b.ops[12].handle == 13 && b.ops[24].handle == 25,
	   "submitting again resumes where it stopped (r=%zd)", r);

	/* max_batch set too high by the caller: asks the kernel again. */
	dev_reset(4);
	libtwheel_batch_reset(&b);
	b.max_batch = 100;
	for (i = 0; i < 9; i++)
		libtwheel_batch_arm(&b, &one_ms);
	r = libtwheel_batch_submit(FAKE_FD, &b);
	ok(r == 9 && b.max_batch == 4 && dev.ioctls == 3,
	   "E2BIG: lowers max_batch to the kernel's and goes on");

	/* A version 1 module: the first submit's handshake refuses it. */
	dev_reset(4);
	dev.abi_version = 1;
	libtwheel_batch_reset(&b);
	b.max_batch = 0;
	libtwheel_batch_arm(&b, &one_ms);
	ok(libtwheel_batch_submit(FAKE_FD, &b) == -EPROTO && b.done == 0,
	   "a version 1 module: submit is -EPROTO, nothing done");
	libtwheel_batch_free(&b);
}

/*
 * The io_uring helpers: an SQE128 as the kernel reads it (the ioctl's
 * structure in the command area, every other byte zero, whatever the SQE
 * held before), and the handle from a CQE32.
 */
static void test_uring(void)
{
	struct twheel_timer_spec spec = { .expires = 5, .cookie = 9 };
	struct twheel_batch_op ops[3];
	union {
		struct io_uring_sqe sqe;
		uint8_t bytes[128];
	} u;
	union {
		struct io_uring_cqe cqe;
		uint64_t words[4];
	} c = { .words = { 0, 0, 0x1234, 0 } };
	const struct twheel_arm *arm = (const void *)u.sqe.cmd;
	const struct twheel_modify *mod = (const void *)u.sqe.cmd;
	const struct twheel_cancel *can = (const void *)u.sqe.cmd;
	const struct twheel_batch *bat = (const void *)u.sqe.cmd;
	bool rest_zero = true;
	size_t i;
	int ret;

	memset(&u, 0xa5, sizeof(u));
	libtwheel_uring_prep_arm(&u.sqe, 7, &spec);
	/* all but opcode (0), fd (4-7), cmd_op (8-11) and the structure */
	for (i = 1; i < sizeof(u); i++)
		if ((i < 4 || i >= 12) && (i < 48 || i >= 48 + sizeof(*arm)))
			rest_zero &= !u.bytes[i];
	ok(u.sqe.opcode == IORING_OP_URING_CMD && u.sqe.fd == 7 &&
	   u.sqe.cmd_op == TWHEEL_IOC_ARM && u.sqe.user_data == 0 &&
	   arm->size == sizeof(*arm) && arm->flags == 0 &&
	   arm->spec.expires == 5 && arm->spec.cookie == 9 && rest_zero,
	   "libtwheel_uring_prep_arm fills the whole SQE128");

	memset(&u, 0xa5, sizeof(u));
	libtwheel_uring_prep_arm_expiry(&u.sqe, 7, &spec, &c.words[3]);
	ok(u.sqe.cmd_op == TWHEEL_IOC_ARM &&
	   arm->flags == TWHEEL_ARM_URING_EXPIRY && arm->spec.cookie == 9 &&
	   u.sqe.addr == (uintptr_t)&c.words[3] && u.sqe.len == 0,
	   "libtwheel_uring_prep_arm_expiry: the flag, addr for the handle");

	memset(&u, 0xa5, sizeof(u));
	spec.period = 1000000;
	ret = libtwheel_uring_prep_arm_mshot(&u.sqe, 7, &spec, &c.words[3], 5);
	ok(ret == 0 && u.sqe.cmd_op == TWHEEL_IOC_ARM &&
	   arm->flags == TWHEEL_ARM_URING_EXPIRY && arm->spec.period == 1000000 &&
	   u.sqe.addr == (uintptr_t)&c.words[3] &&
	   u.sqe.flags == IOSQE_BUFFER_SELECT && u.sqe.buf_group == 5 &&
	   u.sqe.uring_cmd_flags == 2 /* IORING_URING_CMD_MULTISHOT, 6.18 */,
	   "libtwheel_uring_prep_arm_mshot: multishot, buffer select, the group");
	spec.period = 0;

	memset(&u, 0xa5, sizeof(u));
	libtwheel_uring_prep_modify(&u.sqe, 3, 42, &spec);
	ok(u.sqe.cmd_op == TWHEEL_IOC_MODIFY && mod->size == sizeof(*mod) &&
	   mod->handle == 42 && mod->spec.cookie == 9 && u.sqe.ioprio == 0,
	   "libtwheel_uring_prep_modify");
	libtwheel_uring_prep_cancel(&u.sqe, 3, 43);
	ok(u.sqe.cmd_op == TWHEEL_IOC_CANCEL && can->size == sizeof(*can) &&
	   can->handle == 43 && can->out_status == 0 && can->__reserved == 0,
	   "libtwheel_uring_prep_cancel");
	libtwheel_uring_prep_batch(&u.sqe, 3, ops, 3);
	ok(u.sqe.cmd_op == TWHEEL_IOC_BATCH && bat->size == sizeof(*bat) &&
	   bat->ops == (uintptr_t)ops && bat->count == 3 &&
	   bat->op_size == sizeof(ops[0]),
	   "libtwheel_uring_prep_batch");
	ok(libtwheel_uring_cqe_handle(&c.cqe) == 0x1234,
	   "libtwheel_uring_cqe_handle reads big_cqe[0]");
}

/*
 * The io_uring helpers pass the program's sizes (the grown-header canary,
 * as test_sizes() for the ioctls): the spec in the SQE is the program's,
 * nothing of the bytes after it in the program's memory, and the records'
 * stride is the program's, whatever the library was built with.
 */
static void test_uring_sizes(void)
{
	struct {
		struct twheel_timer_spec spec;
		unsigned char canary[64];
	} s;
	struct {
		struct twheel_timer_spec spec;
		uint64_t grown[2];
		unsigned char canary[64];
	} big;
	struct twheel_batch_op ops[2];
	union {
		struct io_uring_sqe sqe;
		uint8_t bytes[128];
	} u;
	const struct twheel_arm *arm = (const void *)u.sqe.cmd;
	const struct twheel_batch *bat = (const void *)u.sqe.cmd;
	const size_t cmd = offsetof(struct io_uring_sqe, cmd);
	size_t end = cmd + 16 + sizeof(s.spec), i;
	bool beyond_zero = true;
	int ret;

	memset(&s, CANARY, sizeof(s));
	s.spec = (struct twheel_timer_spec){ .expires = 5, .cookie = 9 };
	ret = libtwheel_uring_prep_arm(&u.sqe, 7, &s.spec);
	for (i = end; i < sizeof(u); i++)
		beyond_zero &= !u.bytes[i];
	ok(ret == 0 && arm->size == 16 + sizeof(s.spec) && arm->spec.cookie == 9 &&
	   beyond_zero,
	   "libtwheel_uring_prep_arm: the program's spec size, nothing beyond the spec read");
	beyond_zero = true;
	ret = libtwheel_uring_prep_modify(&u.sqe, 7, 42, &s.spec);
	for (i = end; i < sizeof(u); i++)
		beyond_zero &= !u.bytes[i];
	ok(ret == 0 && arm->size == 16 + sizeof(s.spec) && beyond_zero,
	   "libtwheel_uring_prep_modify: the program's spec size");
	beyond_zero = true;
	ret = libtwheel_uring_prep_arm_expiry(&u.sqe, 7, &s.spec, NULL);
	for (i = end; i < sizeof(u); i++)
		beyond_zero &= !u.bytes[i];
	ok(ret == 0 && arm->size == 16 + sizeof(s.spec) &&
	   arm->flags == TWHEEL_ARM_URING_EXPIRY && beyond_zero,
	   "libtwheel_uring_prep_arm_expiry: the program's spec size");
	ret = libtwheel_uring_prep_batch(&u.sqe, 7, ops, 2);
	ok(ret == 0 && bat->op_size == sizeof(ops[0]) && bat->count == 2,
	   "libtwheel_uring_prep_batch: the program's record size");

	/* a program built with a larger header than the library's */
	memset(&big, CANARY, sizeof(big));
	big.spec = s.spec;
	memset(big.grown, 0, sizeof(big.grown));
	end = cmd + 16 + sizeof(big.spec) + sizeof(big.grown);
	beyond_zero = true;
	ret = libtwheel_uring_prep_arm_sz(&u.sqe, 7, &big.spec,
					  sizeof(big.spec) + sizeof(big.grown));
	for (i = end; i < sizeof(u); i++)
		beyond_zero &= !u.bytes[i];
	ok(ret == 0 && arm->size == 16 + sizeof(big.spec) + sizeof(big.grown) &&
	   !memcmp(u.bytes + cmd + 16 + sizeof(big.spec), big.grown, sizeof(big.grown)) &&
	   beyond_zero,
	   "libtwheel_uring_prep_arm_sz: a larger spec goes into the SQE whole");
	ret = libtwheel_uring_prep_batch_sz(&u.sqe, 7, ops, 2, 72);
	ok(ret == 0 && bat->op_size == 72, "libtwheel_uring_prep_batch_sz: a larger record");

	/* out of range: -EINVAL, and an SQE the kernel fails with EINVAL */
	memset(&u, 0xa5, sizeof(u));
	ret = libtwheel_uring_prep_arm_sz(&u.sqe, 7, &big.spec, 32);
	ok(ret == -EINVAL && u.sqe.opcode == IORING_OP_URING_CMD &&
	   u.sqe.cmd_op == TWHEEL_IOC_ARM && arm->size == 0,
	   "libtwheel_uring_prep_arm_sz: a spec below 40 bytes is -EINVAL, the SQE's size 0");
	memset(&u, 0xa5, sizeof(u));
	ret = libtwheel_uring_prep_modify_sz(&u.sqe, 7, 1, &big.spec,
					     TWHEEL_URING_CMD_SIZE_MAX - 16 + 8);
	ok(ret == -EINVAL && arm->size == 0 && u.sqe.addr == 0,
	   "libtwheel_uring_prep_modify_sz: a spec beyond the command area is -EINVAL");
	memset(&u, 0xa5, sizeof(u));
	ret = libtwheel_uring_prep_arm_expiry_sz(&u.sqe, 7, &big.spec, 72, &big.grown[0]);
	ok(ret == -EINVAL && arm->size == 0 && u.sqe.addr == 0,
	   "libtwheel_uring_prep_arm_expiry_sz: -EINVAL leaves no handle address");
	ok(libtwheel_uring_prep_batch_sz(&u.sqe, 7, ops, 2, 48) == -EINVAL &&
	   bat->size == 0 &&
	   libtwheel_uring_prep_batch_sz(&u.sqe, 7, ops, 2, TWHEEL_STRUCT_SIZE_MAX + 1) ==
	   -EINVAL,
	   "libtwheel_uring_prep_batch_sz: a record size out of range is -EINVAL");
}

int main(void)
{
	printf("TAP version 13\n");
	test_sizes();
	test_plain_calls();
	test_buffers();
	test_split();
	test_short_counts();
	test_uring();
	test_uring_sizes();
	printf("1..%d\n", tests);
	/* The plain summary line that make check adds up. */
	printf("%d passed, %d failed\n", tests - failures, failures);
	return failures ? 1 : 0;
}
