/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interfaces between twheel's layers that are not exported.
 */
#ifndef _TWHEEL_INTERNAL_H
#define _TWHEEL_INTERNAL_H

#include <linux/types.h>

int twheel_facility_init(u64 tick_ns, unsigned int bits, unsigned int budget);
void twheel_facility_exit(void);

int twheel_dev_init(unsigned long max_per_fd, unsigned long max_per_user);
void twheel_dev_exit(void);

#endif /* _TWHEEL_INTERNAL_H */
