/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _TWHEEL_INTERNAL_H
#define _TWHEEL_INTERNAL_H

int twheel_facility_init(void);
void twheel_facility_exit(void);

#endif
