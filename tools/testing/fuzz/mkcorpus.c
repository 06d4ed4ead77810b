// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the fuzz targets (make corpus): the RFC 5044
 * Figure 5 and 6 FPDUs and the requirements' derived vectors for the
 * decoder, the startup frame bytes of requirements 2.6 for the frames
 * target, and a few shapes for the round trip.  The seeds are committed;
 * this only documents and regenerates them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static const char *dir;

static void put32(u8 *p, u32 v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static void emit(const char *target, const char *name, const u8 *head,
		 size_t hlen, const u8 *body, size_t blen)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, target, name);
	f = fopen(path, "wb");
	if (!f || fwrite(head, 1, hlen, f) != hlen ||
	    (blen && fwrite(body, 1, blen, f) != blen) || fclose(f)) {
		perror(path);
		exit(1);
	}
}

/* decoder seed: flags, start position, split seed, stream */
static void dec(const char *name, u8 flags, u32 pos, const u8 *s, size_t n)
{
	u8 h[9] = { flags };

	put32(h + 1, pos);
	put32(h + 5, 0x9e3779b9);
	emit("decode", name, h, 9, s, n);
}

static void fig_ulpdu(u8 *u, u8 ctl0, u8 ctl1, u8 msn)
{
	memset(u, 0, 42);
	u[0] = ctl0;
	u[1] = ctl1;
	u[13] = msn;
}

static void decode_seeds(void)
{
	static u8 s[2048], u[512];
	int n, m;

	fig_ulpdu(u, 0x41, 0x43, 1);
	n = mpa_fpdu_encode(0, true, u, 42, s, sizeof(s));
	dec("rfc5044-fig5", 3, 0, s, n);
	dec("rfc5044-fig5-crc-off", 1, 0, s, n);
	s[30] ^= 0x10;
	dec("rfc5044-fig5-bad-crc", 3, 0, s, n);

	fig_ulpdu(u, 0x41, 0x43, 2);
	n = mpa_fpdu_encode(492, true, u, 42, s, sizeof(s));
	dec("rfc5044-fig6", 3, 492, s, n);
	s[23] = 0x18;
	mpa_crc_put(s + 48, mpa_crc_value(s, 48));
	dec("rfc5044-fig6-bad-fpduptr", 3, 492, s, n);

	/* the 544-octet stream behind Figure 6 */
	memset(u, 0, sizeof(u));
	fig_ulpdu(u, 0x41, 0x43, 1);
	n = mpa_fpdu_encode(0, true, u, 482, s, sizeof(s));
	fig_ulpdu(u, 0x41, 0x43, 2);
	n += mpa_fpdu_encode(n, true, u, 42, s + n, sizeof(s) - n);
	dec("rfc5044-fig6-stream", 3, 0, s, n);

	fig_ulpdu(u, 0x40, 0x03, 1);
	n = mpa_fpdu_encode(0, true, u, 42, s, sizeof(s));
	dec("draft01-fig5", 3, 0, s, n);
	fig_ulpdu(u, 0x40, 0x03, 2);
	n = mpa_fpdu_encode(492, true, u, 42, s, sizeof(s));
	dec("draft01-fig6", 3, 492, s, n);

	for (m = 0; m < 16; m++)
		u[m] = m;
	n = mpa_fpdu_encode(500, true, u, 16, s, sizeof(s));
	dec("fig4-shaped", 3, 500, s, n);

	fig_ulpdu(u, 0x41, 0x43, 1);
	n = 0;
	for (m = 0; m < 6; m++)
		n += mpa_fpdu_encode(n, false, u, 40 + m, s + n,
				     sizeof(s) - n);
	dec("no-markers-packed", 2, 0, s, n);

	n = 0;
	for (m = 0; m < 4; m++)
		n += mpa_fpdu_encode(0xffffff00 + n, true, u, 100 + m,
				     s + n, sizeof(s) - n);
	dec("markers-across-wrap", 3, 0xffffff00, s, n);

	n = mpa_fpdu_encode(0, false, NULL, 0, s, sizeof(s));
	dec("empty-ulpdu", 2, 0, s, n);
	s[0] = 0xfd;
	s[1] = 0x01;
	dec("length-too-big", 2, 0, s, n);
}

/* frames seed: policy word, frame */
static void frm(const char *name, u32 policy, const void *f, size_t n)
{
	u8 h[4];

	put32(h, policy);
	emit("frames", name, h, 4, f, n);
}

static void frames_seeds(void)
{
	struct mpa_frame f;
	u8 b[MPA_FRAME_MAX_SIZE];
	int n;

	frm("request-c", 0, "MPA ID Req Frame\x40\x01\x00\x00", 20);
	frm("request-m-c-hi", 0, "MPA ID Req Frame\xc0\x01\x00\x02hi", 22);
	frm("reply-accept", 1, "MPA ID Rep Frame\x40\x01\x00\x00", 20);
	frm("reply-reject", 1, "MPA ID Rep Frame\x60\x01\x00\x00", 20);
	frm("rdmac-request", 0x20, "MPA ID Req Frame\xc0\x00\x00\x00", 20);
	frm("rdmac-reply", 0x21, "MPA ID Rep Frame\xc0\x00\x00\x00", 20);
	frm("init-init", 1, "MPA ID Req Frame\x40\x01\x00\x00", 20);
	frm("http", 0, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27);

	/* a siw-like Rev 2 Request: peer-to-peer, Read RTR, IRD 32 ORD 1 */
	memset(&f, 0, sizeof(f));
	f.rev = 2;
	f.enhanced = true;
	f.p2p = true;
	f.rtr = MPA_RTR_READ;
	f.ird = 32;
	f.ord = 1;
	n = mpa_frame_build(&f, "siw", 3, b, sizeof(b));
	frm("rev2-request-p2p", 0x7fffff80, b, n);
	f.reply = true;
	n = mpa_frame_build(&f, NULL, 0, b, sizeof(b));
	frm("rev2-reply-p2p", 0x7fffffc5, b, n);
}

/* round-trip seed: flags, position, seed, be16 lengths */
static void rt(const char *name, u8 flags, u32 pos, const u16 *lens, int nr)
{
	u8 h[9 + 64] = { flags };
	int i;

	put32(h + 1, pos);
	put32(h + 5, 12345);
	for (i = 0; i < nr; i++) {
		h[9 + 2 * i] = lens[i] >> 8;
		h[10 + 2 * i] = lens[i];
	}
	emit("roundtrip", name, h, 9 + 2 * nr, NULL, 0);
}

static void roundtrip_seeds(void)
{
	static const u16 fig[] = { 482, 42 };
	static const u16 small[] = { 1, 2, 3, 4, 0, 5, 128, 507, 508, 509 };
	static const u16 big[] = { 64768, 1, 64768 };

	rt("rfc5044-fig6-shape", 3, 0, fig, 2);
	rt("small-near-wrap", 7, 0x200, small, 10);
	rt("small-no-markers", 2, 3, small, 10);
	rt("max-ulpdus", 0x33, 4, big, 3);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	dir = argv[1];
	decode_seeds();
	frames_seeds();
	roundtrip_seeds();
	return 0;
}
