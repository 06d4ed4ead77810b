// SPDX-License-Identifier: GPL-2.0
/*
 * MULPDU, the largest ULPDU that fits one TCP segment (RFC 5044 section 4.5).
 */

#include <linux/export.h>
#include <linux/minmax.h>
#include <kunit/visibility.h>

#include "core.h"

/**
 * mpa_mulpdu_raw() - the section 4.5 formula, unclamped
 * @emss: effective maximum segment size in octets
 * @markers: Markers are sent in this direction (the peer's M bit)
 *
 * With Markers: EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4) (R-4.5-2);
 * without: EMSS - (6 + EMSS mod 4) (R-4.5-3).  The worst-case Marker count
 * is assumed because the segment's position relative to the Markers is not
 * known in advance.
 *
 * Return: the formula's value, or 0 if the overhead exceeds @emss.
 */
u32 mpa_mulpdu_raw(u32 emss, bool markers)
{
	u32 overhead = MPA_FPDU_OVERHEAD + (emss & 3);

	if (markers)
		overhead += MPA_MARKER_SIZE *
			    (emss / MPA_MARKER_INTERVAL +
			     !!(emss % MPA_MARKER_INTERVAL));
	return emss > overhead ? emss - overhead : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_mulpdu_raw);

/**
 * mpa_mulpdu() - MULPDU of an empty segment
 * @emss: effective maximum segment size in octets
 * @markers: Markers are sent in this direction (the peer's M bit)
 *
 * The formula of mpa_mulpdu_raw() clamped to 128..64768: never below 128
 * however small the EMSS (R-4.5-8), never above the largest ULPDU (R-3-4,
 * requirements A23 for loopback MSS values).
 *
 * Return: the MULPDU to report to the ULP.
 */
u32 mpa_mulpdu(u32 emss, bool markers)
{
	return clamp_t(u32, mpa_mulpdu_raw(emss, markers), MPA_MIN_MULPDU,
		       MPA_MAX_ULPDU);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_mulpdu);
