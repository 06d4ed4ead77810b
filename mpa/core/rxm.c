// SPDX-License-Identifier: GPL-2.0
/*
 * The MPA receive machine (RFC 5044 sections 4, 6 and 8): every decision
 * the receive path makes about the octets of one half connection.
 *
 * The caller feeds the octets of the stream as they become available, in
 * pieces of any size; the machine reads each FPDU's ULPDU_Length, lays the
 * FPDU out (mpa_fpdu_layout(), shared with the sender), runs the CRC over
 * everything it covers, checks every Marker's FPDUPTR and, once the FPDU's
 * last octet is in, judges it: valid (%MPA_RXM_FPDU), or the section 8
 * error that ends the half connection (%MPA_RXM_ERROR). It consumes no
 * octet beyond the end of the current FPDU, nor beyond the octet that
 * decided an error, so the caller always knows where it stands.
 *
 * The machine keeps no ULPDU: the octets stay with the caller (in place
 * in TCP's receive queue) until the verdict, and nothing of an FPDU may be
 * delivered before it (R-6-1). Then mpa_rxm_locate() says where each ULPDU
 * octet sits in the FPDU's span, Markers skipped (R-4.3-13), and
 * mpa_rxm_next() moves on to the FPDU that follows.
 *
 * The verdicts, and the octets consumed up to them, are the same however
 * the stream is cut into pieces:
 *  - ULPDU_Length above 64768: the FPDU is not one a conforming sender
 *    makes (R-3-5) and its end cannot be trusted: code 2 (%MPA_ERR_CRC,
 *    the "corrupt FPDU" code that applies with and without Markers) with
 *    reason %MPA_REASON_BAD_LENGTH, as soon as the field is read
 *    (requirements A12).
 *  - Otherwise at the FPDU's last octet: the CRC first (code 2,
 *    %MPA_REASON_CRC), only when CRCs are on (R-4.1-6); then the Markers
 *    (code 3, %MPA_REASON_MARKER): a CRC failure takes precedence
 *    (requirements A16). PAD and RESERVED are not checked (R-4.1-4,
 *    R-4.2-3), nor the two low bits of FPDUPTR (R-4.2-6).
 *  - An empty ULPDU is a valid FPDU with nothing to deliver (A12).
 *  - The stream ending inside an FPDU (mpa_rxm_fin()): code 1 with
 *    reason %MPA_REASON_TRUNCATED (requirements A15).
 * Errors are sticky: nothing more is consumed or delivered (R-8-9).
 *
 * Positions are u32 and wrap modulo 2^32 like TCP sequence numbers; as
 * 2^32 is a multiple of 512, a Marker's place is (pos & 511) == 0 across
 * the wrap, and FPDUPTR is a difference of wire offsets inside one FPDU,
 * so the wrap needs no care here (R-4.3-6).
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>

#include "core.h"

/* The FPDU at m->pos begins: nothing of it seen yet. */
static void mpa_rxm_begin(struct mpa_rxm *m)
{
	m->fed = 0;
	m->reg = mpa_crc_init();
	/* R-4.3-7: a Marker at the FPDU's first octet is its own */
	m->hdr_off = mpa_fpdu_hdr_off(m->pos, m->markers);
	m->have_lo = false;
	m->bad_marker = false;
	m->state = MPA_RXM_MORE;
}

/**
 * mpa_rxm_init() - set up the machine at the start of Full Operation
 * @m: the machine
 * @pos: stream position of the first octet to be fed, relative to the
 *	receive SeqStart (0 from SeqStart on); must be an FPDU boundary
 * @markers: Markers are enabled in this direction (our own M bit)
 * @crc: check CRCs
 *
 * Return: 0, or -EINVAL if Markers are enabled and @pos is not a multiple
 * of 4 (no FPDU boundary can be there).
 */
int mpa_rxm_init(struct mpa_rxm *m, u32 pos, bool markers, bool crc)
{
	if (markers && (pos & 3))
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->pos = pos;
	m->markers = markers;
	m->crc = crc;
	mpa_rxm_begin(m);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxm_init);

static void mpa_rxm_fail(struct mpa_rxm *m, u32 code, u32 reason)
{
	m->state = MPA_RXM_ERROR;
	m->code = code;
	m->reason = reason;
}

/* ULPDU_Length is in: lay the FPDU out, or refuse it (A12). */
static void mpa_rxm_layout(struct mpa_rxm *m)
{
	u32 len = get_unaligned_be16(m->field);

	if (len > MPA_MAX_ULPDU) {
		mpa_rxm_fail(m, MPA_ERR_CRC, MPA_REASON_BAD_LENGTH);
		return;
	}
	mpa_fpdu_layout(&m->lo, m->pos, m->markers, len);
	m->have_lo = true;
}

/* The FPDU's last octet is in: the CRC first, then the Markers (A16). */
static void mpa_rxm_judge(struct mpa_rxm *m)
{
	if (m->crc && mpa_crc_get(m->field) != mpa_crc_final(m->reg))
		mpa_rxm_fail(m, MPA_ERR_CRC, MPA_REASON_CRC);
	else if (m->bad_marker)
		mpa_rxm_fail(m, MPA_ERR_MARKER, MPA_REASON_MARKER);
	else
		m->state = MPA_RXM_FPDU;
}

/*
 * A Marker's four octets are in. It says how far back the FPDU's
 * ULPDU_Length field is (R-4.3-10), 0 when it leads the FPDU (R-4.3-7).
 */
static void mpa_rxm_marker(struct mpa_rxm *m, u32 at)
{
	u16 want = at ? at - m->hdr_off : 0;

	if (!mpa_marker_ptr_ok(m->field, want))
		m->bad_marker = true;
}

/**
 * mpa_rxm_feed() - feed the next octets of the stream to the machine
 * @m: the machine
 * @buf: the octets that follow those fed before
 * @len: how many
 *
 * Reads them as the current FPDU's Markers, ULPDU_Length, ULPDU, PAD and
 * CRC field, and judges the FPDU at its last octet. Stops there (or at the
 * octet that decided an error), so the return value can be less than
 * @len: then mpa_rxm_state() has the verdict. In %MPA_RXM_FPDU and
 * %MPA_RXM_ERROR nothing is consumed until mpa_rxm_next().
 *
 * Return: the number of octets of @buf consumed.
 */
u32 mpa_rxm_feed(struct mpa_rxm *m, const void *buf, u32 len)
{
	const u8 *p = buf, *sum = NULL;	/* CRC-covered, not summed: [sum, p) */
	u32 left = len;

	while (left && m->state == MPA_RXM_MORE) {
		u32 w = m->fed, end, moff, n;

		/* CRC-covered octets: to ULPDU_Length, later to the CRC */
		end = m->have_lo ? m->lo.span - MPA_CRC_SIZE :
				   m->hdr_off + MPA_HDR_SIZE;
		if (w >= end) {
			if (sum) {
				m->reg = mpa_crc_update(m->reg, sum, p - sum);
				sum = NULL;
			}
			/* The CRC field, never CRC-covered itself */
			n = min(m->lo.span - w, left);
			memcpy(m->field + (w - end), p, n);
			m->fed += n;
			p += n;
			left -= n;
			if (m->fed == m->lo.span)
				mpa_rxm_judge(m);
			continue;
		}

		/* where w sits from the last Marker position (none: no Marker) */
		moff = m->markers ? (m->pos + w) & (MPA_MARKER_INTERVAL - 1) :
				    MPA_MARKER_SIZE;
		if (moff < MPA_MARKER_SIZE) {
			/* A Marker: CRC-covered, RESERVED ignored (R-4.2-3) */
			n = min(MPA_MARKER_SIZE - moff, left);
			memcpy(m->field + moff, p, n);
		} else if (!m->have_lo) {
			/* ULPDU_Length; Markers never split it (pos & 3 == 0) */
			n = min(end - w, left);
			memcpy(m->field + (w - m->hdr_off), p, n);
		} else {
			/* ULPDU and PAD, up to the next Marker or the CRC */
			n = min(end - w, left);
			if (m->markers)
				n = min(n, MPA_MARKER_INTERVAL - moff);
		}
		/*
		 * Covered octets follow each other in @buf up to the CRC
		 * field: one CRC call for all of them, at the field or at
		 * the end of @buf.
		 */
		if (m->crc && !sum)
			sum = p;
		m->fed += n;
		p += n;
		left -= n;

		if (moff < MPA_MARKER_SIZE) {
			if (moff + n == MPA_MARKER_SIZE)
				mpa_rxm_marker(m, w - moff);
		} else if (!m->have_lo && m->fed == end) {
			mpa_rxm_layout(m);
		}
	}
	if (sum)
		m->reg = mpa_crc_update(m->reg, sum, p - sum);
	return len - left;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxm_feed);

/**
 * mpa_rxm_locate() - where ULPDU octets sit in the valid FPDU
 * @m: the machine, in %MPA_RXM_FPDU
 * @off: offset in the ULPDU, below mpa_rxm_ulpdu_len()
 * @wire: set to the wire offset of that octet from the FPDU's first octet
 *
 * Return: how many ULPDU octets, from @off on, follow each other on the
 * wire there (up to the next Marker or the ULPDU's end); 0 if @off is not
 * inside the ULPDU.
 */
u32 mpa_rxm_locate(const struct mpa_rxm *m, u32 off, u32 *wire)
{
	const struct mpa_fpdu_layout *lo = &m->lo;
	u32 f = MPA_HDR_SIZE + off;	/* Marker-free offset from the header */
	u32 k = 0, n;

	if (off >= lo->ulpdu_len)
		return 0;
	n = lo->ulpdu_len - off;
	/* Markers inside sit before framed octets first_ptr + k * 508 */
	if (lo->nr_markers && f >= lo->first_ptr)
		k = min_t(u32, (f - lo->first_ptr) / MPA_MARKER_STRIDE + 1,
			  lo->nr_markers);
	*wire = lo->hdr_off + f + k * MPA_MARKER_SIZE;
	if (k < lo->nr_markers)
		n = min(n, lo->first_ptr + k * MPA_MARKER_STRIDE - f);
	return n;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxm_locate);

/**
 * mpa_rxm_next() - the valid FPDU was delivered: on to the next one
 * @m: the machine
 *
 * The next FPDU starts right after the span of this one. Does nothing
 * unless the machine is in %MPA_RXM_FPDU.
 */
void mpa_rxm_next(struct mpa_rxm *m)
{
	if (m->state != MPA_RXM_FPDU)
		return;
	m->pos += m->lo.span;
	mpa_rxm_begin(m);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxm_next);

/**
 * mpa_rxm_fin() - the stream ended after the octets fed (the peer's FIN)
 * @m: the machine
 *
 * At an FPDU boundary that is the end of the stream; inside an FPDU the
 * partial FPDU is never delivered and the half connection fails with code
 * 1, %MPA_REASON_TRUNCATED (requirements A15).
 *
 * Return: the state afterwards: %MPA_RXM_MORE at a boundary (a clean end
 * of file), %MPA_RXM_ERROR for a truncated FPDU or an earlier error,
 * %MPA_RXM_FPDU if a valid FPDU still awaits delivery.
 */
enum mpa_rxm_state mpa_rxm_fin(struct mpa_rxm *m)
{
	if (m->state == MPA_RXM_MORE && m->fed)
		mpa_rxm_fail(m, MPA_ERR_TCP_CLOSED, MPA_REASON_TRUNCATED);
	return m->state;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxm_fin);
