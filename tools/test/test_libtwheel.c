// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of libtwheel's own logic, without the kernel module.
 *
 * What libtwheel does beyond filling structures is the batch buffer and
 * twheel_batch_submit(): growing or bounding the record array, splitting
 * into ioctls of at most max_batch records, and keeping exact progress
 * when the kernel stops a batch early.  This test links libtwheel.so and
 * interposes ioctl() with a model of the TWHEEL_IOC_API/BATCH contract of
 * include/uapi/linux/twheel.h (E2BIG, per-record results, a short count on
 * ENOMEM, "records from done on are untouched"), so that the library's
 * side of that contract can be checked record by record.  Whether the real
 * kernel keeps the contract is what selftests/ and twheelctl demo check.
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

#include "twheel.h"

#define FAKE_FD 1000

/* ---- the model device ------------------------------------------------- */

static struct {
	uint32_t max_batch;
	uint32_t abi_version;
	uint64_t next_handle;		/* handles the model hands out */
	uint64_t records_seen;		/* records processed so far, all ioctls */
	uint64_t enomem_at;		/* stop with ENOMEM at this record... */
	int enomem_times;		/* ...this many times (0: never) */
	unsigned int ioctls;		/* TWHEEL_IOC_BATCH calls */
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

static long dev_batch(struct twheel_batch *b)
{
	struct twheel_batch_op *ops = (void *)(uintptr_t)b->ops;
	uint32_t i;

	if (b->flags || b->__reserved || b->done)
		return -EINVAL;
	if (b->count > dev.max_batch)
		return -E2BIG;
	if (dev.ioctls < 64)
		dev.counts[dev.ioctls] = b->count;
	dev.ioctls++;
	for (i = 0; i < b->count; i++) {
		struct twheel_batch_op *op = &ops[i];

		if (dev.enomem_times && dev.records_seen == dev.enomem_at) {
			dev.enomem_times--;
			if (!i)
				return -ENOMEM;
			break;
		}
		switch (op->op) {
		case TWHEEL_OP_ARM:
			if (dev.next_handle >= 4096) {
				op->result = -ENOSPC;
				break;
			}
			op->handle = dev.next_handle++;
			dev.live[op->handle] = true;
			op->result = 0;
			break;
		case TWHEEL_OP_CANCEL:
			if (op->handle >= 4096 || !dev.live[op->handle]) {
				op->result = -ENOENT;
				break;
			}
			dev.live[op->handle] = false;
			op->result = 0;
			break;
		default:
			op->result = -EINVAL;
		}
		dev.records_seen++;
	}
	b->done = i;
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

	switch (cmd) {
	case TWHEEL_IOC_API: {
		struct twheel_api *api = arg;

		memset(api, 0, sizeof(*api));
		api->abi_version = dev.abi_version;
		api->event_size = sizeof(struct twheel_event);
		api->features = TWHEEL_FEATURE_BATCH;
		api->tick_ns = 1000000;
		api->slots = 4096;
		api->max_batch = dev.max_batch;
		ret = 0;
		break;
	}
	case TWHEEL_IOC_BATCH:
		ret = dev_batch(arg);
		break;
	case TWHEEL_IOC_CANCEL: {
		struct twheel_cancel *c = arg;

		if (c->handle >= 4096 || !dev.live[c->handle]) {
			ret = -ENOENT;
			break;
		}
		dev.live[c->handle] = false;
		c->status = TWHEEL_CANCEL_PENDING;
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

static void test_plain_calls(void)
{
	struct twheel_event ev;
	struct twheel_api api;
	uint64_t h;

	ok(twheel_open(O_RDWR) == -EINVAL,
	   "twheel_open rejects flags other than O_NONBLOCK|O_CLOEXEC");
	ok(twheel_read_events(FAKE_FD, &ev, 0) == -EINVAL,
	   "twheel_read_events(max=0) is -EINVAL");

	dev_reset(8);
	ok(twheel_api(FAKE_FD, &api) == 0 && api.max_batch == 8,
	   "twheel_api passes the handshake through");
	dev.abi_version = TWHEEL_ABI_VERSION + 1;
	ok(twheel_api(FAKE_FD, &api) == -EPROTONOSUPPORT &&
	   api.abi_version == TWHEEL_ABI_VERSION + 1,
	   "twheel_api: other ABI version is -EPROTONOSUPPORT, struct still filled");
	ok(twheel_arm(FAKE_FD, 0, 1, 0, 0, 0, &h) == -ENOTTY,
	   "errors come back as -errno");

	dev_reset(8);
	dev.live[5] = true;
	ok(twheel_cancel(FAKE_FD, 5) == TWHEEL_CANCEL_PENDING,
	   "twheel_cancel returns the status");
	ok(twheel_cancel(FAKE_FD, 5) == -ENOENT,
	   "twheel_cancel of a gone handle is -ENOENT");
}

static void test_buffers(void)
{
	struct twheel_batch_op ops[3];
	struct twheel_batchbuf b;
	ssize_t r = 0;
	bool seq = true;
	int i;

	twheel_batch_init(&b, ops, 3);
	for (i = 0; i < 3; i++)
		if (twheel_batch_arm(&b, 0, 1, 0, 0, (uint64_t)i) != i)
			seq = false;
	ok(seq && b.count == 3, "caller-owned buffer: appends return their index");
	ok(twheel_batch_cancel(&b, 1) == -ENOSPC && b.count == 3,
	   "caller-owned buffer: a full array is -ENOSPC");
	twheel_batch_free(&b);	/* must not free the caller's array */

	twheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 10000 && r >= 0; i++) {
		r = twheel_batch_modify(&b, (uint64_t)i + 1, TWHEEL_ARM_ABS,
					(uint64_t)i, 0, 7, (uint64_t)i * 3);
		if (r != i)
			seq = false;
	}
	ok(seq && b.count == 10000 && b.capacity >= 10000,
	   "library buffer grows: 10000 appends, capacity %zu", b.capacity);
	ok(b.ops[9999].op == TWHEEL_OP_MODIFY && b.ops[9999].handle == 10000 &&
	   b.ops[9999].flags == TWHEEL_ARM_ABS && b.ops[9999].expires == 9999 &&
	   b.ops[9999].slack == 7 && b.ops[9999].cookie == 29997 &&
	   !b.ops[9999].result,
	   "records hold what was appended");
	twheel_batch_reset(&b);
	ok(b.count == 0 && b.done == 0 && b.ops, "reset keeps the array");
	twheel_batch_free(&b);
	ok(!b.ops && !b.count, "free empties the buffer");
}

static void test_split(void)
{
	struct twheel_batchbuf b;
	bool good = true;
	ssize_t r;
	int i;

	dev_reset(5);
	twheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 23; i++)
		twheel_batch_arm(&b, 0, 1000, 0, 0, (uint64_t)i);
	r = twheel_batch_submit(FAKE_FD, &b);
	ok(r == 23 && b.done == 23 && b.failed == 0 && b.max_batch == 5,
	   "23 records, max_batch 5: all processed (r=%zd)", r);
	ok(dev.ioctls == 5 && dev.counts[0] == 5 && dev.counts[3] == 5 &&
	   dev.counts[4] == 3, "split into ioctls of 5,5,5,5,3");
	for (i = 0; i < 23; i++)
		if (b.ops[i].handle != (uint64_t)i + 1 || b.ops[i].result)
			good = false;
	ok(good, "every record got its handle and result, in order");
	ok(twheel_batch_submit(FAKE_FD, &b) == 0 && dev.ioctls == 5,
	   "submitting again with nothing new is a no-op");

	/* Appending after a submit sends only the new records. */
	twheel_batch_cancel(&b, 3);
	twheel_batch_cancel(&b, 3);	/* gone by now: ENOENT */
	twheel_batch_cancel(&b, 4);
	r = twheel_batch_submit(FAKE_FD, &b);
	ok(r == 3 && b.done == 26 && b.failed == 1 && b.ops[24].result == -ENOENT &&
	   !b.ops[23].result && !b.ops[25].result,
	   "a failing record does not stop the batch, counted in failed");
	twheel_batch_free(&b);
}

static void test_short_counts(void)
{
	struct twheel_batchbuf b;
	bool untouched = true;
	ssize_t r;
	int i;

	/* A transient ENOMEM in the middle of an ioctl: resumed. */
	dev_reset(10);
	dev.enomem_at = 7;
	dev.enomem_times = 1;
	twheel_batch_init(&b, NULL, 0);
	for (i = 0; i < 25; i++)
		twheel_batch_arm(&b, 0, 1000, 0, 0, (uint64_t)i);
	r = twheel_batch_submit(FAKE_FD, &b);
	ok(r == 25 && b.done == 25 && dev.records_seen == 25,
	   "short count (transient ENOMEM) is resumed: r=%zd done=%zu", r, b.done);
	ok(dev.counts[0] == 10 && dev.counts[1] == 10 && dev.counts[2] == 8,
	   "resumed from the record that stopped the batch");

	/* A persistent ENOMEM: exact progress, the rest untouched. */
	dev_reset(10);
	dev.enomem_at = 12;
	dev.enomem_times = 2;
	twheel_batch_reset(&b);
	for (i = 0; i < 25; i++)
		twheel_batch_arm(&b, 0, 1000, 0, 0, (uint64_t)i);
	r = twheel_batch_submit(FAKE_FD, &b);
	for (i = 12; i < 25; i++)
		if (b.ops[i].handle || b.ops[i].result)
			untouched = false;
	ok(r == -ENOMEM && b.done == 12 && untouched,
	   "persistent ENOMEM: -ENOMEM, done=%zu exact, the rest untouched", b.done);
	r = twheel_batch_submit(FAKE_FD, &b);
	ok(r == 13 && b.done == 25 && b.ops[12].handle == 13 && b.ops[24].handle == 25,
	   "submitting again resumes where it stopped (r=%zd)", r);

	/* max_batch set too high by the caller: asks the kernel again. */
	dev_reset(4);
	twheel_batch_reset(&b);
	b.max_batch = 100;
	for (i = 0; i < 9; i++)
		twheel_batch_arm(&b, 0, 1000, 0, 0, (uint64_t)i);
	r = twheel_batch_submit(FAKE_FD, &b);
	ok(r == 9 && b.max_batch == 4 && dev.ioctls == 3,
	   "E2BIG: lowers max_batch to the kernel's and goes on");
	twheel_batch_free(&b);
}

int main(void)
{
	printf("TAP version 13\n");
	test_plain_calls();
	test_buffers();
	test_split();
	test_short_counts();
	printf("1..%d\n", tests);
	/* The plain summary line that make check adds up. */
	printf("%d passed, %d failed\n", tests - failures, failures);
	return failures ? 1 : 0;
}
