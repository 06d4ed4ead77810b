/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/bug.h>: a warning is a fuzzing finding. */
#ifndef _FUZZ_LINUX_BUG_H
#define _FUZZ_LINUX_BUG_H
#include <stdlib.h>
#define WARN_ON(c) ({ int _c = !!(c); if (_c) abort(); _c; })
#define WARN_ON_ONCE(c) WARN_ON(c)
#define BUILD_BUG_ON(c) _Static_assert(!(c), #c)
#endif
