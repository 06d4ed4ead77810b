/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/crc32c.h>; see ../../crc32c.c */
#ifndef _FUZZ_LINUX_CRC32C_H
#define _FUZZ_LINUX_CRC32C_H
#include <linux/types.h>
u32 crc32c(u32 crc, const void *address, unsigned int length);
#endif
