// SPDX-License-Identifier: GPL-2.0
/*
 * MPA Request and Reply frames (RFC 5044 section 7.1.1, RFC 6581).
 *
 *  octets 0-15   Key: "MPA ID Req Frame" or "MPA ID Rep Frame"
 *  octet  16     M(0x80) C(0x40) R(0x20) Res(0x1f); in Rev 2, E(0x10)
 *  octet  17     Rev
 *  octets 18-19  PD_Length, big-endian, 0..512
 *  then          Private Data
 *
 * With Rev 2 and E set, the Private Data opens with the RFC 6581 IRD/ORD
 * block, counted in PD_Length:
 *
 *  be16  A(0x8000, peer-to-peer) B(0x4000, zero-length Send RTR) IRD
 *  be16  C(0x8000, RDMA Write RTR) D(0x4000, RDMA Read RTR) ORD
 *
 * so the ULP has at most 508 octets of its own.  Parsing is split in two:
 * mpa_frame_parse_hdr() looks at the fixed 20 octets and says how much
 * Private Data to read; mpa_frame_parse_pd() then takes exactly that.
 */

#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <kunit/visibility.h>

#include "core.h"

static const char mpa_key_req[] = "MPA ID Req Frame";	/* R-7.1.1-1 */
static const char mpa_key_rep[] = "MPA ID Rep Frame";	/* R-7.1.1-3 */

#define MPA_FLAG_RES		0x1f
#define MPA_V2_IRD_ORD_MASK	0x3fff

/**
 * mpa_frame_build() - write a Request or Reply frame
 * @f: frame contents; @f->pd and @f->ulp_pd_len are ignored
 * @pd: the ULP's Private Data (may be NULL if @pd_len is 0)
 * @pd_len: its length: at most 512, or 508 with the Rev 2 IRD/ORD block
 * @buf: output
 * @size: room at @buf; %MPA_FRAME_MAX_SIZE always suffices
 *
 * Res is sent as zero (R-7.1.1-13).  With @f->enhanced the E bit is set and
 * the IRD/ORD block from @f->ird, @f->ord, @f->p2p and @f->rtr leads the
 * Private Data.
 *
 * Return: octets written, -EINVAL for a Rev above 2, an E bit outside
 * Rev 2 or IRD/ORD above 0x3fff, -EMSGSIZE for too much Private Data, or
 * -ENOSPC if @size is too small.
 */
int mpa_frame_build(const struct mpa_frame *f, const void *pd, u32 pd_len,
		    void *buf, u32 size)
{
	u32 block = f->enhanced ? MPA_V2_BLOCK_SIZE : 0;
	u8 *out = buf;
	u16 ird, ord;

	if (f->rev > MPA_REVISION_2)
		return -EINVAL;
	if (f->enhanced && (f->rev != MPA_REVISION_2 ||
			    f->ird > MPA_IRD_ORD_MAX ||
			    f->ord > MPA_IRD_ORD_MAX))
		return -EINVAL;
	if (pd_len > MPA_MAX_PRIVATE_DATA - block)
		return -EMSGSIZE;
	if (size < MPA_FRAME_HDR_SIZE + block + pd_len)
		return -ENOSPC;

	memcpy(out, f->reply ? mpa_key_rep : mpa_key_req, MPA_KEY_SIZE);
	out[16] = (f->m ? MPA_FLAG_M : 0) | (f->c ? MPA_FLAG_C : 0) |
		  (f->r ? MPA_FLAG_R : 0) | (f->enhanced ? MPA_FLAG_E : 0);
	out[17] = f->rev;
	put_unaligned_be16(block + pd_len, out + 18);
	out += MPA_FRAME_HDR_SIZE;

	if (block) {
		ird = f->ird;
		if (f->p2p)
			ird |= MPA_V2_FLAG_A;
		if (f->rtr & MPA_RTR_SEND)
			ird |= MPA_V2_FLAG_B;
		ord = f->ord;
		if (f->rtr & MPA_RTR_WRITE)
			ord |= MPA_V2_FLAG_C;
		if (f->rtr & MPA_RTR_READ)
			ord |= MPA_V2_FLAG_D;
		put_unaligned_be16(ird, out);
		put_unaligned_be16(ord, out + 2);
		out += block;
	}
	if (pd_len)
		memcpy(out, pd, pd_len);
	return MPA_FRAME_HDR_SIZE + block + pd_len;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frame_build);

/**
 * mpa_frame_key_prefix_ok() - could these octets begin a startup frame?
 * @buf: the first octets received
 * @len: how many of them (those past the Key are not looked at)
 *
 * A peer that speaks anything else shows it in its first octets that
 * differ from both Keys, and is closed on then (R-7.1.1-2, R-7.1.1-4: on
 * any other value, close), not only once 20 octets came: a shorter
 * greeting would hold the startup until its timeout. Which of the two
 * Keys, and so INIT_INIT or REPLY_AT_RESPONDER, is left to
 * mpa_frame_parse_hdr().
 *
 * Return: true if they match the start of the Request or the Reply Key.
 */
bool mpa_frame_key_prefix_ok(const void *buf, u32 len)
{
	len = min_t(u32, len, MPA_KEY_SIZE);
	return !memcmp(buf, mpa_key_req, len) || !memcmp(buf, mpa_key_rep, len);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frame_key_prefix_ok);

/**
 * mpa_frame_parse_hdr() - parse and check the fixed 20 octets of a frame
 * @f: filled with what the header says; &mpa_frame.pd_len tells how many
 *	Private Data octets to read next
 * @hdr: %MPA_FRAME_HDR_SIZE octets
 * @role: our role: a Responder expects the Request key, an Initiator the
 *	Reply key (R-7.1.1-2, R-7.1.1-4)
 *
 * Checks the Key and PD_Length <= 512 (R-7.1.1-19).  A Reply at a
 * Responder and a Request at an Initiator (Initiator/Initiator, R-7.1.2-20)
 * are told apart from a foreign Key.  Res and, in a Request, R are not
 * checked (R-7.1.1-12, R-7.1.1-13).  Rev is left to the negotiation, which
 * knows the local policy; only a Rev 2 enhanced frame too short for its
 * IRD/ORD block is refused here.
 *
 * Return: %MPA_SR_OK or the reason the frame is malformed (code 4).
 */
enum mpa_startup_reason mpa_frame_parse_hdr(struct mpa_frame *f,
					    const void *hdr,
					    enum mpa_role role)
{
	const u8 *in = hdr;
	u8 flags = in[16];

	memset(f, 0, sizeof(*f));
	if (!memcmp(in, mpa_key_req, MPA_KEY_SIZE))
		f->reply = false;
	else if (!memcmp(in, mpa_key_rep, MPA_KEY_SIZE))
		f->reply = true;
	else
		return MPA_SR_BAD_KEY;

	if (role == MPA_INITIATOR && !f->reply)
		return MPA_SR_INIT_INIT;
	if (role == MPA_RESPONDER && f->reply)
		return MPA_SR_REPLY_AT_RESPONDER;

	f->m = flags & MPA_FLAG_M;
	f->c = flags & MPA_FLAG_C;
	f->r = flags & MPA_FLAG_R;
	f->rev = in[17];
	f->pd_len = get_unaligned_be16(in + 18);
	/* E exists from Rev 2 on; before that it is one of the Res bits. */
	if (f->rev == MPA_REVISION_2) {
		f->enhanced = flags & MPA_FLAG_E;
		f->res = flags & (MPA_FLAG_RES & ~MPA_FLAG_E);
	} else {
		f->res = flags & MPA_FLAG_RES;
	}

	if (f->pd_len > MPA_MAX_PRIVATE_DATA)
		return MPA_SR_PD_TOO_LONG;
	if (f->enhanced && f->pd_len < MPA_V2_BLOCK_SIZE)
		return MPA_SR_V2_SHORT;
	return MPA_SR_OK;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frame_parse_hdr);

/**
 * mpa_frame_parse_pd() - take in the Private Data of a parsed header
 * @f: frame from a successful mpa_frame_parse_hdr()
 * @pd: exactly @f->pd_len octets that followed the header; must stay
 *	valid while @f->pd is used
 *
 * For a Rev 2 enhanced frame, decodes the IRD/ORD block and points @f->pd
 * past it; otherwise all of @pd belongs to the ULP.
 *
 * Return: %MPA_SR_OK, or %MPA_SR_V2_SHORT if the block does not fit.
 */
enum mpa_startup_reason mpa_frame_parse_pd(struct mpa_frame *f,
					   const void *pd)
{
	const u8 *in = pd;
	u16 ird, ord;

	if (!f->enhanced) {
		f->pd = in;
		f->ulp_pd_len = f->pd_len;
		return MPA_SR_OK;
	}
	if (f->pd_len < MPA_V2_BLOCK_SIZE)
		return MPA_SR_V2_SHORT;

	ird = get_unaligned_be16(in);
	ord = get_unaligned_be16(in + 2);
	f->p2p = ird & MPA_V2_FLAG_A;
	f->rtr = (ird & MPA_V2_FLAG_B ? MPA_RTR_SEND : 0) |
		 (ord & MPA_V2_FLAG_C ? MPA_RTR_WRITE : 0) |
		 (ord & MPA_V2_FLAG_D ? MPA_RTR_READ : 0);
	f->ird = ird & MPA_V2_IRD_ORD_MASK;
	f->ord = ord & MPA_V2_IRD_ORD_MASK;
	f->pd = in + MPA_V2_BLOCK_SIZE;
	f->ulp_pd_len = f->pd_len - MPA_V2_BLOCK_SIZE;
	return MPA_SR_OK;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_frame_parse_pd);

/**
 * mpa_startup_reason_code() - RFC 5044 section 8 code of a startup failure
 * @reason: the reason
 *
 * Return: %MPA_ERR_NONE for %MPA_SR_OK, else %MPA_ERR_STARTUP (code 4).
 */
int mpa_startup_reason_code(enum mpa_startup_reason reason)
{
	return reason == MPA_SR_OK ? MPA_ERR_NONE : MPA_ERR_STARTUP;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_startup_reason_code);
