// SPDX-License-Identifier: GPL-2.0
/*
 * The pure engines are linked privately into the test module, so that its
 * internals need not be exported from twheel.ko just for testing.
 */
#include "../../src/wheel.c"
#include "../../src/hier.c"
#include "../../src/lawn.c"
#include "../../src/engine.c"
