// SPDX-License-Identifier: GPL-2.0
/*
 * An MPA reference decoder and encoder for the fuzzers, written from
 * RFC 5044 section 4 alone (requirements A1, A8, A9, A12, A15, A16 where
 * the RFC leaves a choice). It shares no code with mpa/core/, whose
 * receive machine it checks, and it is simple rather than fast: it walks
 * the stream one octet at a time, asking at each octet whether a Marker
 * stands in front of it.
 *
 * The FPDU (section 4.1): ULPDU_Length (2 octets, big-endian), ULPDU, PAD
 * to a multiple of 4, CRC (4 octets, least significant octet first, A1).
 * With Markers (section 4.3), a 4-octet Marker starts at every stream
 * position that is a multiple of 512 from SeqStart. A Marker belongs to
 * the FPDU whose octets are being read when it comes up; one that comes up
 * right after an FPDU's CRC field belongs to the next FPDU, in front of
 * its ULPDU_Length, with FPDUPTR 0. Every other Marker's FPDUPTR counts
 * the octets from the FPDU's ULPDU_Length field to the Marker. The CRC
 * (section 4.4) covers the FPDU's octets from its first (Marker or
 * ULPDU_Length) to the last before the CRC field, Markers included.
 */
#include <stdlib.h>
#include <string.h>

#include "ref.h"

#define MARKER_EVERY	512
#define MARKER_OCTETS	4
#define MAX_MARKERS	160	/* an FPDU holds at most 129 */

static uint32_t crc_table[256];

/* CRC-32C as iSCSI defines it: reflected 0x82f63b78, inverted in and out */
uint32_t ref_crc32c(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffff;
	unsigned int i, j;

	if (!crc_table[1]) {
		for (i = 0; i < 256; i++) {
			c = i;
			for (j = 0; j < 8; j++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
			crc_table[i] = c;
		}
		c = 0xffffffff;
	}
	while (n--)
		c = (c >> 8) ^ crc_table[(c ^ *p++) & 0xff];
	return ~c;
}

/* Reading FPDUs from a stream */
struct reader {
	const uint8_t *s;
	uint32_t n;		/* octets in the stream */
	uint32_t pos;		/* stream position of s[0] from SeqStart */
	bool markers;
	uint32_t c;		/* the next octet to read */
};

/* What one FPDU is made of */
struct fpdu {
	uint32_t start;		/* its first octet */
	uint32_t hdr;		/* its ULPDU_Length field */
	uint32_t len;		/* ULPDU_Length */
	uint32_t crc;		/* its CRC field */
	uint32_t end;		/* right after the CRC field */
	uint32_t nmark;
	uint32_t mark[MAX_MARKERS];	/* its Markers */
};

enum { READ_OK, READ_SHORT, READ_TOO_LONG };

/*
 * The offset of the FPDU's next octet, a Marker in front of it taken into
 * the FPDU; -1 if the stream ends first.
 */
static int64_t next_octet(struct reader *rd, struct fpdu *f)
{
	if (rd->markers && (uint32_t)(rd->pos + rd->c) % MARKER_EVERY == 0) {
		if (rd->n - rd->c < MARKER_OCTETS) {
			rd->c = rd->n;
			return -1;
		}
		if (f->nmark == MAX_MARKERS)
			abort();
		f->mark[f->nmark++] = rd->c;
		rd->c += MARKER_OCTETS;
	}
	if (rd->c >= rd->n)
		return -1;
	return rd->c++;
}

/* Read the FPDU at rd->c; its ULPDU goes to @ulpdu if not NULL. */
static int read_fpdu(struct reader *rd, struct fpdu *f, uint8_t *ulpdu)
{
	uint32_t i, pad;
	int64_t o;
	uint8_t h[2];

	memset(f, 0, sizeof(*f));
	f->start = rd->c;
	for (i = 0; i < 2; i++) {
		o = next_octet(rd, f);
		if (o < 0)
			return READ_SHORT;
		if (!i)
			f->hdr = o;
		h[i] = rd->s[o];
	}
	f->len = h[0] << 8 | h[1];
	if (f->len > REF_MAX_ULPDU)
		return READ_TOO_LONG;
	pad = (4 - (2 + f->len) % 4) % 4;
	for (i = 0; i < f->len + pad; i++) {
		o = next_octet(rd, f);
		if (o < 0)
			return READ_SHORT;
		if (ulpdu && i < f->len)
			ulpdu[i] = rd->s[o];
	}
	for (i = 0; i < 4; i++) {
		o = next_octet(rd, f);
		if (o < 0)
			return READ_SHORT;
		if (!i)
			f->crc = o;
		else if (o != f->crc + i)
			abort();	/* a Marker never splits the CRC */
	}
	f->end = rd->c;
	return READ_OK;
}

static uint16_t marker_wants(const struct fpdu *f, uint32_t at)
{
	return at == f->start ? 0 : at - f->hdr;
}

static uint32_t crc_of(const uint8_t *s, const struct fpdu *f)
{
	return ref_crc32c(s + f->start, f->crc - f->start);
}

static uint32_t get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void fail(struct ref_result *r, enum ref_error e, int code,
		 uint32_t start, uint32_t at)
{
	r->error = e;
	r->code = code;
	r->err_start = start;
	r->err_at = at;
}

/*
 * Decode a whole stream that starts at an FPDU boundary at stream
 * position @pos and ends with the peer's FIN: every valid FPDU's ULPDU in
 * order, then how it ended. A too long ULPDU_Length is decided as soon as
 * it is read; a bad CRC (if checked) then a bad Marker at the FPDU's end.
 */
void ref_decode(const uint8_t *s, uint32_t n, uint32_t pos, bool markers,
		bool crc, struct ref_result *r)
{
	struct reader rd = { s, n, pos, markers, 0 };
	struct fpdu f;
	uint32_t i;
	int ret;

	r->nr = 0;
	r->total = 0;
	fail(r, REF_OK, 0, 0, 0);
	while (rd.c < n) {
		ret = read_fpdu(&rd, &f, r->ulpdus + r->total);
		if (ret == READ_SHORT) {
			fail(r, REF_TRUNCATED, 1, f.start, n);
			return;
		}
		if (ret == READ_TOO_LONG) {
			fail(r, REF_LENGTH, 2, f.start, rd.c);
			return;
		}
		if (crc && crc_of(s, &f) != get_le32(s + f.crc)) {
			fail(r, REF_CRC, 2, f.start, f.end);
			return;
		}
		for (i = 0; i < f.nmark; i++) {
			uint32_t at = f.mark[i];
			uint16_t got = s[at + 2] << 8 | s[at + 3];

			/* the two low bits of FPDUPTR read as 0 */
			if ((got ^ marker_wants(&f, at)) & 0xfffc) {
				fail(r, REF_MARKER, 3, f.start, f.end);
				return;
			}
		}
		if (r->nr == r->max)
			abort();
		r->fpdus[r->nr].start = f.start;
		r->fpdus[r->nr].end = f.end;
		r->fpdus[r->nr].len = f.len;
		r->fpdus[r->nr].data = r->total;
		r->nr++;
		r->total += f.len;
	}
	r->err_start = n;
	r->err_at = n;
}

/*
 * Frame one ULPDU as the FPDU that starts at stream position @pos: Markers
 * with RESERVED 0, PAD 0. Return: its length, 0 if @room is too small.
 */
size_t ref_encode(uint32_t pos, bool markers, const uint8_t *ulpdu,
		  uint32_t len, uint8_t *out, size_t room)
{
	uint32_t pad = (4 - (2 + len) % 4) % 4;
	uint32_t framed = 2 + len + pad + 4, k, c = 0, hdr = 0, crc = 0;
	uint32_t v;

	for (k = 0; k < framed; k++) {
		if (markers && (uint32_t)(pos + c) % MARKER_EVERY == 0) {
			uint16_t ptr = c ? c - hdr : 0;

			if (room - c < MARKER_OCTETS)
				return 0;
			out[c] = 0;
			out[c + 1] = 0;
			out[c + 2] = ptr >> 8;
			out[c + 3] = ptr;
			c += MARKER_OCTETS;
		}
		if (c >= room)
			return 0;
		if (!k)
			hdr = c;
		if (k == framed - 4)
			crc = c;
		if (k < 2)
			out[c++] = k ? len & 0xff : len >> 8;
		else if (k < 2 + len)
			out[c++] = ulpdu[k - 2];
		else
			out[c++] = 0;
	}
	if (crc + 4 != c)
		abort();
	v = ref_crc32c(out, crc);
	for (k = 0; k < 4; k++)
		out[crc + k] = v >> (8 * k);
	return c;
}

/*
 * Make the whole FPDUs at the start of a stream valid: each Marker's
 * FPDUPTR (keeping RESERVED and the two low bits) and then the CRC field.
 * Stops at the first FPDU that is cut short or too long.
 */
void ref_repair(uint8_t *s, uint32_t n, uint32_t pos, bool markers,
		bool fix_markers, bool fix_crc)
{
	struct reader rd = { s, n, pos, markers, 0 };
	struct fpdu f;
	uint32_t i, v;

	while (rd.c < n && read_fpdu(&rd, &f, NULL) == READ_OK) {
		for (i = 0; fix_markers && i < f.nmark; i++) {
			uint32_t at = f.mark[i];
			uint16_t want = marker_wants(&f, at);

			s[at + 2] = want >> 8;
			s[at + 3] = (want & 0xfc) | (s[at + 3] & 3);
		}
		if (fix_crc) {
			v = crc_of(s, &f);
			for (i = 0; i < 4; i++)
				s[f.crc + i] = v >> (8 * i);
		}
	}
}
