/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <kunit/visibility.h> */
#ifndef _FUZZ_KUNIT_VISIBILITY_H
#define _FUZZ_KUNIT_VISIBILITY_H
#define VISIBLE_IF_KUNIT
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#endif
