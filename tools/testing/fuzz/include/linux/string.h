/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/string.h> */
#include <string.h>
