/* SPDX-License-Identifier: GPL-2.0 */
/* Test vectors and helpers shared by the KUnit suites of the protocol core. */
#ifndef _MPA_TEST_VECTORS_H
#define _MPA_TEST_VECTORS_H

#include <linux/types.h>

/* RFC 5044 Figure 5: the first FPDU of a stream, led by a Marker */
extern const u8 mpa_test_rfc_fig5[52];
/* RFC 5044 Figure 6: an FPDU at stream offset 492 with a Marker inside */
extern const u8 mpa_test_rfc_fig6[52];

u32 mpa_test_crc(const void *p, u32 len);
int mpa_test_encode(u32 pos, bool markers, const void *ulpdu, u32 len,
		    void *buf, u32 size);

#endif /* _MPA_TEST_VECTORS_H */
