/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the libFuzzer targets of the MPA protocol core. */
#ifndef _MPA_FUZZ_H
#define _MPA_FUZZ_H

#include <stdint.h>

static inline uint32_t fuzz_get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint32_t fuzz_min(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* xorshift32: deterministic splits derived from the input */
static inline uint32_t fuzz_rand(uint32_t *state)
{
	uint32_t x = *state ? *state : 0x2545f491;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return x;
}

/* FNV-1a over octets, to compare delivered data between runs */
#define FUZZ_HASH_INIT	2166136261u

static inline uint32_t fuzz_hash(uint32_t h, const uint8_t *p, uint32_t n)
{
	while (n--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

#endif
