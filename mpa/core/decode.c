// SPDX-License-Identifier: GPL-2.0
/*
 * Incremental MPA FPDU decoder (RFC 5044 sections 4, 6 and 8).
 *
 * The decoder is fed the stream of one half connection in pieces of any
 * size.  It strips Markers, runs the CRC over everything it covers, checks
 * every Marker's FPDUPTR against the ULPDU_Length chain and reports each
 * ULPDU's octets as they stream past (%MPA_RX_EV_DATA), followed by the
 * verdict on the whole FPDU (%MPA_RX_EV_FPDU or %MPA_RX_EV_ERROR).
 *
 * It never stages a ULPDU itself, so a hostile ULPDU_Length costs nothing.
 * The price is a rule for the caller: octets reported by DATA events are
 * NOT validated.  They must be staged (or left in place in TCP's receive
 * queue) and may be delivered only once the FPDU event arrives; on an
 * error event they must be dropped (R-6-1, R-8-9).
 *
 * Errors are sticky: after an error event every feed consumes nothing and
 * repeats it (R-8-9).  A CRC mismatch (code 2) takes precedence over a
 * Marker mismatch (code 3) in the same FPDU (requirements A16).  With CRCs
 * off the CRC field is skipped unchecked (R-4.1-6, R-7.1.1-11).
 *
 * Received ULPDU_Length values (requirements A12): 0 is an empty ULPDU and
 * is delivered like any other once its FPDU validates.  Above 64768 the
 * FPDU is not one a conforming sender can produce (R-3-5) and its end
 * cannot be trusted, so it is a fatal error at once: %MPA_RX_ERR_LENGTH,
 * reported as code 2 (%MPA_ERR_CRC), the "corrupt FPDU" code that applies
 * with and without Markers.
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>

#include "core.h"

enum {
	MPA_RX_S_START,		/* at an FPDU boundary */
	MPA_RX_S_LEAD,		/* in a leading Marker */
	MPA_RX_S_HDR,		/* in ULPDU_Length */
	MPA_RX_S_BODY,		/* in the pieces after ULPDU_Length */
	MPA_RX_S_DEAD,		/* after an error */
};

/**
 * mpa_rx_init() - set up a decoder at the start of Full Operation
 * @rx: decoder
 * @pos: stream position of the first octet to be fed, relative to the
 *	receive SeqStart (0 when fed from SeqStart on); must be an FPDU
 *	boundary
 * @markers: Markers are enabled in this direction (our own M bit)
 * @crc: check CRCs
 *
 * Return: 0, or -EINVAL if Markers are enabled and @pos is not a multiple
 * of 4 (no FPDU boundary can be there).
 */
int mpa_rx_init(struct mpa_rx *rx, u32 pos, bool markers, bool crc)
{
	if (markers && (pos & 3))
		return -EINVAL;
	memset(rx, 0, sizeof(*rx));
	rx->pos = pos;
	rx->markers = markers;
	rx->crc = crc;
	rx->state = MPA_RX_S_START;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rx_init);

/**
 * mpa_rx_at_boundary() - whether the decoder sits between two FPDUs
 * @rx: decoder
 *
 * Lets the caller tell a FIN at an FPDU boundary from one inside an FPDU
 * (requirements A15).
 *
 * Return: true if no FPDU is partly fed and no error happened.
 */
bool mpa_rx_at_boundary(const struct mpa_rx *rx)
{
	return rx->state == MPA_RX_S_START;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rx_at_boundary);

/**
 * mpa_rx_error_str() - human-readable name of a decoder error
 * @err: the error
 *
 * Return: a constant string.
 */
const char *mpa_rx_error_str(enum mpa_rx_error err)
{
	switch (err) {
	case MPA_RX_OK:
		return "no error";
	case MPA_RX_ERR_CRC:
		return "FPDU CRC mismatch";
	case MPA_RX_ERR_MARKER:
		return "Marker FPDUPTR disagrees with ULPDU_Length chain";
	case MPA_RX_ERR_LENGTH:
		return "ULPDU_Length above 64768";
	}
	return "unknown error";
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rx_error_str);

static void mpa_rx_fill_ev(const struct mpa_rx *rx, struct mpa_rx_event *ev,
			   enum mpa_rx_event_type type)
{
	ev->type = type;
	ev->fpdu_pos = rx->lo.pos;
	ev->ulpdu_len = rx->lo.ulpdu_len;
	ev->error = rx->ev_error;
	ev->detail = rx->ev_detail;
}

static void mpa_rx_fail(struct mpa_rx *rx, struct mpa_rx_event *ev,
			enum mpa_rx_error detail)
{
	rx->state = MPA_RX_S_DEAD;
	rx->ev_detail = detail;
	rx->ev_error = detail == MPA_RX_ERR_MARKER ? MPA_ERR_MARKER :
						     MPA_ERR_CRC;
	mpa_rx_fill_ev(rx, ev, MPA_RX_EV_ERROR);
}

/* Gather a field of @want octets that may arrive in pieces. */
static bool mpa_rx_collect(struct mpa_rx *rx, const u8 **p, u32 *left,
			   u32 want)
{
	u32 n = min_t(u32, want - rx->ntmp, *left);

	memcpy(rx->tmp + rx->ntmp, *p, n);
	rx->ntmp += n;
	*p += n;
	*left -= n;
	rx->pos += n;
	if (rx->ntmp < want)
		return false;
	rx->ntmp = 0;
	return true;
}

/* Feed CRC-covered octets to the CRC, if CRCs are checked at all. */
static void mpa_rx_crc(struct mpa_rx *rx, const u8 *p, u32 n)
{
	if (rx->crc)
		rx->reg = mpa_crc_update(rx->reg, p, n);
}

/* ULPDU_Length is in: lay the FPDU out and skip what was already read. */
static void mpa_rx_begin_body(struct mpa_rx *rx)
{
	struct mpa_piece p;

	mpa_piece_iter_init(&rx->it);
	do {
		mpa_fpdu_next_piece(&rx->lo, &rx->it, &p);
	} while (p.type != MPA_PIECE_HDR);
	mpa_fpdu_next_piece(&rx->lo, &rx->it, &rx->piece);
	rx->done = 0;
	rx->state = MPA_RX_S_BODY;
}

static void mpa_rx_next_piece(struct mpa_rx *rx)
{
	mpa_fpdu_next_piece(&rx->lo, &rx->it, &rx->piece);
	rx->done = 0;
}

/**
 * mpa_rx_feed() - feed stream octets to the decoder
 * @rx: decoder
 * @buf: the next octets of the stream
 * @len: how many
 * @ev: filled with what happened
 *
 * Consumes octets until it has something to report or the input ends.
 * The caller loops, advancing by the return value, until all is consumed:
 *
 * %MPA_RX_EV_DATA - @ev->len ULPDU octets at @ev->data (inside @buf) for
 * ULPDU offset @ev->ulpdu_off; not validated yet.
 * %MPA_RX_EV_FPDU - the FPDU at @ev->fpdu_pos is valid; its ULPDU of
 * @ev->ulpdu_len octets (all reported by earlier DATA events) may be
 * delivered.
 * %MPA_RX_EV_ERROR - @ev->error (RFC 5044 section 8 code) and @ev->detail
 * say why; nothing more will be decoded.
 * %MPA_RX_EV_NONE - all of @buf was consumed.
 *
 * The events, their ULPDU octets and the octets consumed up to an error are
 * the same however the stream is split into calls.
 *
 * Return: the number of octets of @buf consumed.
 */
u32 mpa_rx_feed(struct mpa_rx *rx, const void *buf, u32 len,
		struct mpa_rx_event *ev)
{
	const u8 *p = buf;
	u32 left = len;
	u32 n;

	memset(ev, 0, sizeof(*ev));
	if (rx->state == MPA_RX_S_DEAD) {
		mpa_rx_fill_ev(rx, ev, MPA_RX_EV_ERROR);
		return 0;
	}

	while (left) {
		switch (rx->state) {
		case MPA_RX_S_START:
			rx->lo.pos = rx->pos;
			rx->lo.ulpdu_len = 0;
			rx->reg = mpa_crc_init();
			rx->bad_marker = false;
			rx->ntmp = 0;
			/* R-4.3-7: a Marker here is this FPDU's, FPDUPTR 0 */
			if (rx->markers && mpa_marker_at(rx->pos))
				rx->state = MPA_RX_S_LEAD;
			else
				rx->state = MPA_RX_S_HDR;
			break;

		case MPA_RX_S_LEAD:
			if (!mpa_rx_collect(rx, &p, &left, MPA_MARKER_SIZE))
				break;
			mpa_rx_crc(rx, rx->tmp, MPA_MARKER_SIZE);
			if (!mpa_marker_ptr_ok(rx->tmp, 0))
				rx->bad_marker = true;
			rx->state = MPA_RX_S_HDR;
			break;

		case MPA_RX_S_HDR:
			if (!mpa_rx_collect(rx, &p, &left, MPA_HDR_SIZE))
				break;
			mpa_rx_crc(rx, rx->tmp, MPA_HDR_SIZE);
			rx->lo.ulpdu_len = get_unaligned_be16(rx->tmp);
			if (rx->lo.ulpdu_len > MPA_MAX_ULPDU) {
				mpa_rx_fail(rx, ev, MPA_RX_ERR_LENGTH);
				return len - left;
			}
			mpa_fpdu_layout(&rx->lo, rx->lo.pos, rx->markers,
					rx->lo.ulpdu_len);
			mpa_rx_begin_body(rx);
			break;

		case MPA_RX_S_BODY:
			switch (rx->piece.type) {
			case MPA_PIECE_ULPDU:
				n = min(rx->piece.len - rx->done, left);
				mpa_rx_crc(rx, p, n);
				mpa_rx_fill_ev(rx, ev, MPA_RX_EV_DATA);
				ev->data = p;
				ev->len = n;
				ev->ulpdu_off = rx->piece.ulpdu_off + rx->done;
				p += n;
				left -= n;
				rx->pos += n;
				rx->done += n;
				if (rx->done == rx->piece.len)
					mpa_rx_next_piece(rx);
				return len - left;

			case MPA_PIECE_PAD:
				/* R-4.1-4: value ignored, but CRC-covered */
				n = min(rx->piece.len - rx->done, left);
				mpa_rx_crc(rx, p, n);
				p += n;
				left -= n;
				rx->pos += n;
				rx->done += n;
				if (rx->done == rx->piece.len)
					mpa_rx_next_piece(rx);
				break;

			case MPA_PIECE_MARKER:
				if (!mpa_rx_collect(rx, &p, &left,
						    MPA_MARKER_SIZE))
					break;
				mpa_rx_crc(rx, rx->tmp, MPA_MARKER_SIZE);
				if (!mpa_marker_ptr_ok(rx->tmp,
						       rx->piece.fpduptr))
					rx->bad_marker = true;
				mpa_rx_next_piece(rx);
				break;

			default:
				/* The CRC field itself is not CRC-covered. */
				if (!mpa_rx_collect(rx, &p, &left,
						    MPA_CRC_SIZE))
					break;
				if (rx->crc && mpa_crc_get(rx->tmp) !=
					       mpa_crc_final(rx->reg)) {
					mpa_rx_fail(rx, ev, MPA_RX_ERR_CRC);
					return len - left;
				}
				if (rx->bad_marker) {
					mpa_rx_fail(rx, ev, MPA_RX_ERR_MARKER);
					return len - left;
				}
				rx->fpdus++;
				rx->state = MPA_RX_S_START;
				mpa_rx_fill_ev(rx, ev, MPA_RX_EV_FPDU);
				return len - left;
			}
			break;

		default:
			mpa_rx_fill_ev(rx, ev, MPA_RX_EV_ERROR);
			return len - left;
		}
	}
	ev->type = MPA_RX_EV_NONE;
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rx_feed);
