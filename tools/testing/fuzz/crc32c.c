// SPDX-License-Identifier: GPL-2.0
/*
 * Userspace CRC32c (Castagnoli, reflected polynomial 0x82f63b78) with the
 * semantics of the kernel's crc32c(): the raw register in and out, no
 * inversion on either side.  Slice-by-one table, built on first use.
 */
#include <linux/crc32c.h>

static u32 crc32c_table[256];

static void crc32c_init_table(void)
{
	u32 i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? 0x82f63b78 : 0);
		crc32c_table[i] = c;
	}
}

u32 crc32c(u32 crc, const void *address, unsigned int length)
{
	const u8 *p = address;

	if (!crc32c_table[1])
		crc32c_init_table();
	while (length--)
		crc = (crc >> 8) ^ crc32c_table[(crc ^ *p++) & 0xff];
	return crc;
}
