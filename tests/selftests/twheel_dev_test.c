// SPDX-License-Identifier: GPL-2.0
/*
 * Selftests of the /dev/twheel character device.
 *
 * Built static by selftests/Makefile and run inside the test VMs by
 * `make selftest`, after twheel.ko has been loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define TWHEEL_DEV "/dev/twheel"

/* misc devices are character devices of major 10 */
#define MISC_MAJOR 10

/*
 * An ioctl command no version of twheel defines: a type byte that is not
 * twheel's and a number at the top of the range.  Generic ioctls handled by
 * the VFS before the driver (FIOCLEX, FIONBIO, ...) use other types.
 */
#define TWHEEL_TEST_BOGUS_IOCTL _IO(0xee, 0xfe)

FIXTURE(twheel_dev) {
	int fd;
};

FIXTURE_SETUP(twheel_dev)
{
	self->fd = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", TWHEEL_DEV, strerror(errno));
}

FIXTURE_TEARDOWN(twheel_dev)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST(node_is_misc_chardev)
{
	struct stat st;

	ASSERT_EQ(0, stat(TWHEEL_DEV, &st))
		TH_LOG("stat %s: %s", TWHEEL_DEV, strerror(errno));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(MISC_MAJOR, major(st.st_rdev));
}

TEST_F(twheel_dev, close_succeeds)
{
	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
}

TEST_F(twheel_dev, reopen_while_open)
{
	int fd2 = open(TWHEEL_DEV, O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, fd2) TH_LOG("second open: %s", strerror(errno));
	EXPECT_EQ(0, close(fd2));
}

TEST_F(twheel_dev, unknown_ioctl_is_enotty)
{
	errno = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TWHEEL_TEST_BOGUS_IOCTL, 0));
	EXPECT_EQ(ENOTTY, errno);
}

TEST_HARNESS_MAIN
