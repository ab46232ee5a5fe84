// SPDX-License-Identifier: GPL-2.0
#include <linux/twheel.h>
#include "twheel_internal.h"

int twheel_facility_init(void)
{
	return 0;
}

void twheel_facility_exit(void)
{
}
