// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of the fuzz targets (make corpus): for the stream
 * target, the RFC 5044 Figure 5 and 6 FPDUs, the requirements' derived
 * vectors and the hostile frames of the selftests (wire.c: bad CRCs,
 * ULPDU_Length 64769 and 65535, lies and truncation before a FIN, garbage
 * and text after valid FPDUs, lying Markers, ignored bits), framed by the
 * reference encoder (ref.c) and cut in various pieces; the startup frame
 * bytes of requirements 2.6 for the frames target; a few shapes for the
 * round trip.  The seeds are committed; this only documents and
 * regenerates them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ref.h"

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

/* A stream being built, FPDU after FPDU, for the stream target */
static u8 sbuf[1 << 17];
static u32 slen;
static u32 spos;	/* stream position of sbuf[0] */
static bool smarkers;

static void sbegin(u32 pos, bool markers)
{
	slen = 0;
	spos = pos;
	smarkers = markers;
}

/* Append one FPDU; return its offset in the stream. */
static u32 sfpdu(const void *u, u32 len)
{
	u32 at = slen;
	size_t n = ref_encode(spos + slen, smarkers, u, len, sbuf + slen,
			      sizeof(sbuf) - slen);

	if (!n) {
		fprintf(stderr, "mkcorpus: stream too long\n");
		exit(1);
	}
	slen += n;
	return at;
}

static void sraw(const void *p, u32 n)
{
	memcpy(sbuf + slen, p, n);
	slen += n;
}

/* Where ULPDU_Length is in the FPDU at offset @at */
static u32 shdr(u32 at)
{
	return smarkers && !((spos + at) & 511) ? at + 4 : at;
}

static void put_be16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = v;
}

/* The CRC of the FPDU at @at of @span octets, after a change in it */
static void srecrc(u32 at, u32 span)
{
	put32(sbuf + at + span - 4, ref_crc32c(sbuf + at, span - 4));
}

/*
 * stream seed: flags (Markers, CRC, fix-ups off), start position, no
 * flip, piece sizes (@pieces octets of them), the stream
 */
static void stream_seed(const char *name, u8 flags, const u8 *pieces,
			u8 npieces)
{
	static u8 h[9 + 256];

	memset(h, 0, sizeof(h));
	h[0] = flags | (smarkers ? 1 : 0);
	put32(h + 1, spos);
	h[8] = npieces;
	memcpy(h + 9, pieces, npieces);
	emit("stream", name, h, 9 + npieces, sbuf, slen);
}

/* piece sizes: one octet at a time; 1, 2, 3 ... 7; segments */
static const u8 octets[] = { 0 };
static const u8 ragged[] = { 0, 1, 2, 3, 4, 5, 6 };
static const u8 segments[] = { 0xf0, 0xb4, 3, 0xf1 };

#define CRC	2

/* pseudo-random ULPDU octets, like the selftests' t_fill() */
static void fill(u8 *b, u32 n, u64 seed)
{
	u64 s = seed * 0x2545f4914f6cdd1dull + 1;
	u32 i;

	for (i = 0; i < n; i++) {
		s ^= s >> 12;
		s ^= s << 25;
		s ^= s >> 27;
		b[i] = (s * 0x2545f4914f6cdd1dull) >> 56;
	}
}

static const char ulp_a[] = "A: the first valid ULPDU";
static const char ulp_b[] = "B: the second one, somewhat longer than A";

/* A stream from SeqStart that begins with the valid FPDUs A and B */
static void ab(bool m)
{
	sbegin(0, m);
	sfpdu(ulp_a, sizeof(ulp_a));
	sfpdu(ulp_b, sizeof(ulp_b));
}

static void hostile_seed(const char *nm, const u8 *pieces, u8 npieces)
{
	char name[64];

	snprintf(name, sizeof(name), "hostile-%s%s", nm,
		 smarkers ? "-markers" : "");
	stream_seed(name, CRC, pieces, npieces);
}

#define SEED(nm, p) hostile_seed(nm, p, sizeof(p))

/* The hostile frames of selftests/net/mpa/wire.c, Markers @m */
static void hostile_seeds(bool m)
{
	static u8 u[66000];
	static const char text[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
	u8 junk[200];
	u32 at;

	ab(m);
	fill(u, 2000, 1000);
	at = sfpdu(u, 2000);
	sbuf[at + (slen - at) / 2] ^= 0x40;
	sfpdu("C: valid but after", 18);
	sfpdu("D", 1);
	SEED("bad-crc", octets);

	ab(m);
	fill(u, 100, 1100);
	at = sfpdu(u, 100);
	put_be16(sbuf + shdr(at), MPA_MAX_ULPDU + 1);
	SEED("length-64769", ragged);

	ab(m);
	fill(u, 65535, 1200);
	at = sfpdu(u, 1000);
	put_be16(sbuf + shdr(at), 0xffff);
	SEED("length-65535", segments);

	ab(m);
	fill(u, 500, 1300);
	at = sfpdu(u, 500);
	put_be16(sbuf + shdr(at), 1000);
	SEED("length-lie-then-fin", ragged);

	ab(m);
	fill(u, 1500, 1400);
	at = sfpdu(u, 1500);
	slen = at + (slen - at) / 2;
	SEED("truncated-at-fin", segments);

	ab(m);
	fill(junk, sizeof(junk), 1500);
	junk[0] = 0;
	junk[4] = 0;
	junk[1] = 32;
	junk[5] = 32;
	junk[2] = 0;
	junk[3] = 0;
	sraw(junk, sizeof(junk));
	SEED("garbage-after-valid", octets);

	ab(m);
	sraw(text, sizeof(text) - 1);
	SEED("text-after-valid-then-fin", octets);

	sbegin(0, m);
	at = sfpdu("first but bad", 13);
	sbuf[slen - 1] ^= 0x80;
	SEED("bad-first-fpdu", octets);

	/* an FPDU of 64768 octets, CRC and Markers right */
	sbegin(0, m);
	fill(u, MPA_MAX_ULPDU, 1250);
	sfpdu(u, MPA_MAX_ULPDU);
	sfpdu(ulp_a, sizeof(ulp_a));
	SEED("max-ulpdu", segments);
}

enum { LEAD, INSIDE, BEFORE_CRC };

/* The span of an FPDU of @len octets appended now */
static u32 sspan(u32 len)
{
	static u8 u[2000], out[2100];

	return ref_encode(spos + slen, smarkers, u, len, out, sizeof(out));
}

/*
 * The marker fixture of wire.c: after A and B, an FPDU with a Marker of
 * some @kind whose FPDUPTR is off by @delta, its CRC recomputed or not,
 * then a valid one.
 */
static void lying_seed(const char *name, int kind, int delta, bool recrc)
{
	static u8 u[2000];
	u32 at, span, len = kind == LEAD ? 100 : 700, f, mk;

	sbegin(0, true);
	sfpdu(ulp_a, sizeof(ulp_a));
	sfpdu(ulp_b, sizeof(ulp_b));
	if (kind == LEAD) {
		/* a filler that ends right at a Marker */
		for (f = 0; (slen + sspan(f)) & 511; f++)
			;
		fill(u, f, 1701);
		sfpdu(u, f);
	}
	if (kind == BEFORE_CRC)
		for (len = 400; (slen + sspan(len) - 8) & 511; len++)
			;
	fill(u, len, 1700);
	at = sfpdu(u, len);
	span = slen - at;
	if (kind == LEAD)
		mk = at;
	else if (kind == BEFORE_CRC)
		mk = at + span - 8;
	else
		mk = (at & ~511U) + 512;
	put_be16(sbuf + mk + 2, (sbuf[mk + 2] << 8 | sbuf[mk + 3]) + delta);
	if (recrc)
		srecrc(at, span);
	sfpdu("after", 5);
	stream_seed(name, CRC, octets, sizeof(octets));
}

static void marker_seeds(void)
{
	static u8 u[600];
	u32 at;

	lying_seed("marker-lying-inside", INSIDE, 4, true);
	lying_seed("marker-lying-leading", LEAD, 8, true);
	lying_seed("marker-lying-before-crc", BEFORE_CRC, -4, true);
	lying_seed("marker-lying-and-bad-crc", INSIDE, 4, false);

	/* RESERVED and the two low FPDUPTR bits: ignored */
	sbegin(0, true);
	fill(u, 300, 1800);
	at = sfpdu(u, 300);
	sbuf[0] = 0x80;
	sbuf[1] = 0x01;
	sbuf[3] |= 2;
	srecrc(at, slen - at);
	at = sfpdu(u, 300);
	sbuf[512] = 0x12;
	sbuf[513] = 0x34;
	sbuf[515] |= 1;
	srecrc(at, slen - at);
	stream_seed("marker-ignored-bits", CRC, ragged, sizeof(ragged));
}

static void fig_ulpdu(u8 *u, u8 ctl0, u8 ctl1, u8 msn)
{
	memset(u, 0, 42);
	u[0] = ctl0;
	u[1] = ctl1;
	u[13] = msn;
}

static void stream_seeds(void)
{
	static u8 u[1024];
	u32 at, m;

	fig_ulpdu(u, 0x41, 0x43, 1);
	sbegin(0, true);
	at = sfpdu(u, 42);
	stream_seed("rfc5044-fig5", CRC, octets, sizeof(octets));
	stream_seed("rfc5044-fig5-crc-off", 0, NULL, 0);
	sbuf[30] ^= 0x10;
	stream_seed("rfc5044-fig5-bad-crc", CRC, ragged, sizeof(ragged));

	fig_ulpdu(u, 0x41, 0x43, 2);
	sbegin(492, true);
	at = sfpdu(u, 42);
	stream_seed("rfc5044-fig6", CRC, octets, sizeof(octets));
	sbuf[23] = 0x18;
	srecrc(at, 52);
	stream_seed("rfc5044-fig6-bad-fpduptr", CRC, NULL, 0);

	/* the 544-octet stream behind Figure 6 */
	memset(u, 0, sizeof(u));
	fig_ulpdu(u, 0x41, 0x43, 1);
	sbegin(0, true);
	sfpdu(u, 482);
	fig_ulpdu(u, 0x41, 0x43, 2);
	sfpdu(u, 42);
	stream_seed("rfc5044-fig6-stream", CRC, octets, sizeof(octets));

	fig_ulpdu(u, 0x40, 0x03, 1);
	sbegin(0, true);
	sfpdu(u, 42);
	stream_seed("draft01-fig5", CRC, NULL, 0);
	fig_ulpdu(u, 0x40, 0x03, 2);
	sbegin(492, true);
	sfpdu(u, 42);
	stream_seed("draft01-fig6", CRC, NULL, 0);

	for (m = 0; m < 16; m++)
		u[m] = m;
	sbegin(500, true);
	sfpdu(u, 16);
	stream_seed("fig4-shaped", CRC, octets, sizeof(octets));

	fig_ulpdu(u, 0x41, 0x43, 1);
	sbegin(0, false);
	for (m = 0; m < 6; m++)
		sfpdu(u, 40 + m);
	stream_seed("no-markers-packed", CRC, ragged, sizeof(ragged));

	sbegin(0xffffff00, true);
	for (m = 0; m < 8; m++)
		sfpdu(u, 100 + 33 * m);
	stream_seed("markers-across-wrap", CRC, ragged, sizeof(ragged));
	sbegin(0xfffffff3, false);
	for (m = 0; m < 8; m++)
		sfpdu(u, 100 + 33 * m);
	stream_seed("across-wrap", CRC, octets, sizeof(octets));

	sbegin(0, false);
	sfpdu(NULL, 0);
	sfpdu(u, 3);
	stream_seed("empty-ulpdu", CRC, NULL, 0);

	hostile_seeds(true);
	hostile_seeds(false);
	marker_seeds();
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
	stream_seeds();
	frames_seeds();
	roundtrip_seeds();
	return 0;
}
