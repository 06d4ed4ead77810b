/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/errno.h>: the uAPI numbers suffice. */
#include_next <linux/errno.h>
