/* SPDX-License-Identifier: GPL-2.0 */
/* Userspace stand-in for <linux/minmax.h> */
#ifndef _FUZZ_LINUX_MINMAX_H
#define _FUZZ_LINUX_MINMAX_H

#define min(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a < _b ? _a : _b; })
#define max(a, b) ({ __typeof__(a) _a = (a); __typeof__(b) _b = (b); \
		     _a > _b ? _a : _b; })
#define min_t(t, a, b) ({ t _a = (a); t _b = (b); _a < _b ? _a : _b; })
#define max_t(t, a, b) ({ t _a = (a); t _b = (b); _a > _b ? _a : _b; })
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)

#endif
