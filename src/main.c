// SPDX-License-Identifier: GPL-2.0
/*
 * twheel module glue: parameters, the default wheel and /dev/twheel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>

#include "twheel_internal.h"

static int twheel_open(struct inode *inode, struct file *file)
{
	return 0;
}

static int twheel_release(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations twheel_fops = {
	.owner = THIS_MODULE,
	.open = twheel_open,
	.release = twheel_release,
};

static struct miscdevice twheel_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "twheel",
	.fops = &twheel_fops,
	.mode = 0666,
};

static int __init twheel_init(void)
{
	int ret;

	ret = twheel_facility_init();
	if (ret)
		return ret;

	ret = misc_register(&twheel_misc);
	if (ret)
		goto err_facility;

	return 0;

err_facility:
	twheel_facility_exit();
	return ret;
}

static void __exit twheel_exit(void)
{
	misc_deregister(&twheel_misc);
	twheel_facility_exit();
}

module_init(twheel_init);
module_exit(twheel_exit);

MODULE_DESCRIPTION("Hashed timing wheel timer facility (Varghese & Lauck Scheme 6)");
MODULE_AUTHOR("twheel developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("0.1.0");
