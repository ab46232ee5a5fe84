/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _TWHEEL_WHEEL_H
#define _TWHEEL_WHEEL_H
#endif
