// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32c over a range of an skb: linear part, page fragments and frag list,
 * without copying.  The receive path runs it over FPDUs still sitting in
 * TCP's receive queue.  This is the only file of the core that knows what
 * an skb is; the userspace fuzzer does not build it.
 */

#include <linux/crc32.h>
#include <linux/crc32c.h>
#include <linux/export.h>
#include <linux/skbuff.h>
#include <kunit/visibility.h>

#include "core.h"

static __wsum mpa_skb_crc_update(const void *p, int len, __wsum reg)
{
	return (__force __wsum)crc32c((__force u32)reg, p, len);
}

/*
 * __skb_checksum() runs each fragment from a zero register and combines;
 * the raw CRC32c register is linear, so shifting the first part over the
 * second one's length and adding (xor) joins them.
 */
static __wsum mpa_skb_crc_combine(__wsum reg, __wsum reg2, int offset,
				  int len)
{
	return (__force __wsum)__crc32c_le_combine((__force u32)reg,
						   (__force u32)reg2, len);
}

static const struct skb_checksum_ops mpa_skb_crc_ops = {
	.update = mpa_skb_crc_update,
	.combine = mpa_skb_crc_combine,
};

/**
 * mpa_crc_skb() - feed a range of an skb into a raw CRC32c register
 * @crc: register value
 * @skb: the skb
 * @offset: offset of the first octet in @skb
 * @len: number of octets
 *
 * Return: the updated register, as if mpa_crc_update() had been given the
 * range as one flat buffer.
 */
u32 mpa_crc_skb(u32 crc, const struct sk_buff *skb, int offset, int len)
{
	return (__force u32)__skb_checksum(skb, offset, len, (__force __wsum)crc,
					   &mpa_skb_crc_ops);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_crc_skb);
