// SPDX-License-Identifier: GPL-2.0
#include <linux/module.h>
static int __init s_init(void) { return 0; }
static void __exit s_exit(void) { }
module_init(s_init);
module_exit(s_exit);
MODULE_LICENSE("GPL");
