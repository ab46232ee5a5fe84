/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interfaces between twheel's layers that are not exported.
 */
#ifndef _TWHEEL_INTERNAL_H
#define _TWHEEL_INTERNAL_H

#include <linux/types.h>

int twheel_facility_init(u64 tick_ns, unsigned int bits, unsigned int budget);
void twheel_facility_exit(void);

#endif /* _TWHEEL_INTERNAL_H */
