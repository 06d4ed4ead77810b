/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/export.h> */
#ifndef _FUZZ_LINUX_EXPORT_H
#define _FUZZ_LINUX_EXPORT_H
#define EXPORT_SYMBOL(sym)
#define EXPORT_SYMBOL_GPL(sym)
#endif
