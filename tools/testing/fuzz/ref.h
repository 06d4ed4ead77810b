/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An MPA FPDU reference decoder and encoder for the fuzzers, written from
 * RFC 5044 section 4 alone: simple rather than fast, and sharing no code
 * with mpa/core/ (which it checks).
 */
#ifndef _MPA_FUZZ_REF_H
#define _MPA_FUZZ_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REF_MAX_ULPDU	64768	/* the largest ULPDU_Length accepted */

/* How the reference decoder stopped */
enum ref_error {
	REF_OK,		/* the stream ended at an FPDU boundary */
	REF_LENGTH,	/* ULPDU_Length above 64768: code 2 */
	REF_CRC,	/* CRC field differs from the CRC: code 2 */
	REF_MARKER,	/* a Marker's FPDUPTR is wrong: code 3 */
	REF_TRUNCATED,	/* the stream ended inside an FPDU: code 1 */
};

/* One valid FPDU, whose ULPDU is delivered */
struct ref_fpdu {
	uint32_t start;		/* offset of its first octet in the stream */
	uint32_t end;		/* offset right after its CRC field */
	uint32_t len;		/* ULPDU_Length */
	uint32_t data;		/* offset of its ULPDU in ref_result.ulpdus */
};

struct ref_result {
	uint32_t nr;			/* FPDUs delivered */
	uint32_t max;			/* room in @fpdus */
	struct ref_fpdu *fpdus;
	uint8_t *ulpdus;		/* the ULPDUs, back to back */
	uint32_t total;			/* their octets */
	enum ref_error error;
	int code;			/* RFC 5044 section 8 code, 0 if none */
	uint32_t err_start;		/* offset of the FPDU in error */
	uint32_t err_at;		/* octets read when it was decided */
};

uint32_t ref_crc32c(const uint8_t *p, size_t n);
void ref_decode(const uint8_t *s, uint32_t n, uint32_t pos, bool markers,
		bool crc, struct ref_result *r);
size_t ref_encode(uint32_t pos, bool markers, const uint8_t *ulpdu,
		  uint32_t len, uint8_t *out, size_t room);
void ref_repair(uint8_t *s, uint32_t n, uint32_t pos, bool markers,
		bool fix_markers, bool fix_crc);

#endif
