/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for the kernel's <linux/bits.h>, for the fuzzers. */
#ifndef _FUZZ_LINUX_BITS_H
#define _FUZZ_LINUX_BITS_H

#define BIT(nr)		(1UL << (nr))

#endif
