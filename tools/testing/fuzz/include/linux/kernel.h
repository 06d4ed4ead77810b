/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/kernel.h> */
#include <linux/minmax.h>
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
