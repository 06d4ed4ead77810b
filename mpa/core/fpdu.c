// SPDX-License-Identifier: GPL-2.0
/*
 * MPA FPDU layout and encoding (RFC 5044 sections 4.1 to 4.4).
 *
 * An FPDU's "span" starts where the previous FPDU's CRC ended.  If Markers
 * are enabled and a Marker falls exactly there, that Marker belongs to this
 * FPDU with FPDUPTR 0 (R-4.3-7); it is only ever emitted as the head of the
 * FPDU that follows it, never on its own after the last FPDU
 * (requirements A8).  Markers then follow every 512 octets of stream; each
 * one that starts before this FPDU's CRC field belongs to this FPDU and
 * points back at its ULPDU_Length field (R-4.3-10), including a Marker that
 * sits between the PAD and the CRC (A9).  A Marker that would start right
 * after the CRC belongs to the next FPDU.
 *
 * Every FPDU is a multiple of 4 octets and so is a Marker, so in a
 * conforming stream FPDUs start at positions that are multiples of 4 from
 * SeqStart; a Marker then never splits the ULPDU_Length, PAD or CRC fields
 * (requirements section 2.8).  mpa_fpdu_layout() insists on that alignment
 * when Markers are enabled.
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>

#include "core.h"

/**
 * mpa_fpdu_layout() - compute where the parts of one FPDU go on the wire
 * @lo: layout to fill
 * @pos: stream position of the span's first octet (right after the previous
 *	FPDU, or SeqStart for the first one), relative to SeqStart
 * @markers: Markers are enabled in this direction
 * @ulpdu_len: ULPDU_Length, 0..%MPA_MAX_ULPDU
 *
 * Return: 0, -EMSGSIZE if @ulpdu_len is above %MPA_MAX_ULPDU, or -EINVAL if
 * Markers are enabled and @pos is not a multiple of 4.
 */
int mpa_fpdu_layout(struct mpa_fpdu_layout *lo, u32 pos, bool markers,
		    u32 ulpdu_len)
{
	u32 hdr, first;

	if (ulpdu_len > MPA_MAX_ULPDU)
		return -EMSGSIZE;
	if (markers && (pos & 3))
		return -EINVAL;

	mpa_fpdu_layout_plain(lo, pos, ulpdu_len);
	if (markers) {
		lo->markers = true;
		lo->lead_marker = mpa_marker_at(pos);
		lo->hdr_off = lo->lead_marker ? MPA_MARKER_SIZE : 0;
		/*
		 * Distance from ULPDU_Length to the next Marker, 32-bit wrap
		 * included (R-4.3-6).  It is never 0: a Marker at the header
		 * is the leading one, which moved the header by 4.
		 */
		hdr = pos + lo->hdr_off;
		first = (0U - hdr) & (MPA_MARKER_INTERVAL - 1);
		/*
		 * The k-th Marker inside sits first + k * 508 framed octets
		 * after the header.  It belongs here if the CRC field has
		 * not ended by then (A9); at exactly lo->framed it would
		 * follow the CRC and belong to the next FPDU (A8).
		 */
		if (first < lo->framed) {
			lo->first_ptr = first;
			lo->nr_markers = (lo->framed - first - 1) /
					 MPA_MARKER_STRIDE + 1;
		}
		lo->span = lo->hdr_off + lo->framed +
			   lo->nr_markers * MPA_MARKER_SIZE;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_fpdu_layout);

/**
 * mpa_fpdu_next_piece() - walk the wire pieces of an FPDU in stream order
 * @lo: layout from mpa_fpdu_layout()
 * @it: cursor, started with mpa_piece_iter_init()
 * @p: filled with the next piece
 *
 * The pieces are, in order: [Marker] ULPDU_Length, ULPDU octets interrupted
 * by Markers, [PAD], [Marker], CRC.  Their lengths add up to @lo->span.
 *
 * Return: true if @p was filled, false after the CRC piece.
 */
bool mpa_fpdu_next_piece(const struct mpa_fpdu_layout *lo,
			 struct mpa_piece_iter *it, struct mpa_piece *p)
{
	u32 ulpdu_end = MPA_HDR_SIZE + lo->ulpdu_len;
	u32 pad_end = ulpdu_end + lo->pad;
	u32 c = it->framed;
	u32 end, mark = lo->framed;

	p->off = it->wire;
	p->ulpdu_off = 0;
	p->fpduptr = 0;

	if (lo->lead_marker && !it->wire) {
		p->type = MPA_PIECE_MARKER;
		p->len = MPA_MARKER_SIZE;
		it->wire = MPA_MARKER_SIZE;
		return true;
	}
	if (c >= lo->framed)
		return false;

	if (it->marker < lo->nr_markers) {
		mark = lo->first_ptr + it->marker * MPA_MARKER_STRIDE;
		if (mark == c) {
			p->type = MPA_PIECE_MARKER;
			p->len = MPA_MARKER_SIZE;
			p->fpduptr = lo->first_ptr +
				     it->marker * MPA_MARKER_INTERVAL;
			it->wire += MPA_MARKER_SIZE;
			it->marker++;
			return true;
		}
	}

	if (c < MPA_HDR_SIZE) {
		p->type = MPA_PIECE_HDR;
		end = MPA_HDR_SIZE;
	} else if (c < ulpdu_end) {
		p->type = MPA_PIECE_ULPDU;
		p->ulpdu_off = c - MPA_HDR_SIZE;
		end = ulpdu_end;
	} else if (c < pad_end) {
		p->type = MPA_PIECE_PAD;
		end = pad_end;
	} else {
		p->type = MPA_PIECE_CRC;
		end = lo->framed;
	}
	end = min(end, mark);
	p->len = end - c;
	it->framed = end;
	it->wire += p->len;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_fpdu_next_piece);

/**
 * mpa_piece_fill() - write the octets of a Marker, ULPDU_Length or PAD piece
 * @lo: layout the piece comes from
 * @p: the piece
 * @dst: room for @p->len octets
 *
 * Markers are written with RESERVED 0 (R-4.2-2), PAD with zeroes
 * (R-4.1-3).  ULPDU and CRC pieces are left to the caller.
 */
void mpa_piece_fill(const struct mpa_fpdu_layout *lo,
		    const struct mpa_piece *p, u8 *dst)
{
	switch (p->type) {
	case MPA_PIECE_MARKER:
		put_unaligned_be16(0, dst);
		put_unaligned_be16(p->fpduptr, dst + 2);
		break;
	case MPA_PIECE_HDR:
		put_unaligned_be16(lo->ulpdu_len, dst);
		break;
	case MPA_PIECE_PAD:
		memset(dst, 0, p->len);
		break;
	default:
		break;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mpa_piece_fill);

/**
 * mpa_fpdu_frame() - frame a ULPDU in place, as an FPDU without Markers
 * @lo: layout from mpa_fpdu_layout(), with no Marker in its span
 * @buf: the @lo->span octets of the FPDU, its ULPDU in place at
 *	@buf + %MPA_HDR_SIZE
 * @crc: compute the CRC; else the CRC field is written as zero (CRCs off,
 *	requirements A10)
 *
 * Writes ULPDU_Length, the PAD (zeroes, R-4.1-3) and then the CRC, in one
 * CRC call over everything before its field: the octets that
 * mpa_fpdu_next_piece() and mpa_piece_fill() give for such an FPDU,
 * without the walk over its pieces.
 *
 * Return: 0, or -EINVAL if @lo has a Marker (nothing written).
 */
int mpa_fpdu_frame(const struct mpa_fpdu_layout *lo, u8 *buf, bool crc)
{
	u32 crc_off = lo->span - MPA_CRC_SIZE;

	if (mpa_fpdu_has_markers(lo))
		return -EINVAL;
	put_unaligned_be16(lo->ulpdu_len, buf);
	memset(buf + MPA_HDR_SIZE + lo->ulpdu_len, 0, lo->pad);
	mpa_crc_put(buf + crc_off,
		    crc ? mpa_crc_final(mpa_crc_update(mpa_crc_init(), buf,
						       crc_off)) : 0);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_fpdu_frame);

/**
 * mpa_marker_ptr_ok() - check a received Marker's FPDUPTR
 * @marker: the four Marker octets
 * @expected: FPDUPTR the ULPDU_Length chain predicts
 *
 * RESERVED is ignored (R-4.2-3) and the two low FPDUPTR bits are read as 0
 * (R-4.2-6).
 *
 * Return: true if the Marker agrees with the chain.
 */
bool mpa_marker_ptr_ok(const void *marker, u16 expected)
{
	u16 ptr = get_unaligned_be16((const u8 *)marker + 2);

	return (ptr & MPA_FPDUPTR_MASK) == (expected & MPA_FPDUPTR_MASK);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_marker_ptr_ok);
