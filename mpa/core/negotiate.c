// SPDX-License-Identifier: GPL-2.0
/*
 * MPA startup negotiation (RFC 5044 section 7.1, Appendix C; RFC 6581).
 *
 * Revision defaults (see also Documentation/networking/mpa.rst):
 *
 * - An Initiator sends Rev 1 unless its policy asks for Rev 2 (RFC 6581
 *   enhanced setup, always with the IRD/ORD block) or Rev 0 (acting as an
 *   upgraded RDMAC endpoint, which always sends M=1 and C=1).
 * - A Responder accepts Rev 1 and Rev 2 and answers with the revision it
 *   received; for an enhanced Rev 2 Request it answers with the block,
 *   IRD/ORD cross-mapped (its IRD covers the Initiator's ORD and the other
 *   way round), the peer-to-peer flag echoed and exactly one RTR type.
 * - Rev 0 is accepted only in permissive mode; Markers and CRCs are then on
 *   in both directions and a Responder answers Rev 0 with M=1 and C=1
 *   (Appendix C.2.4, C.2.5).  A Responder that is not permissive answers a
 *   Rev 0 Request with a Rev 1 Reply and then closes gracefully
 *   (Appendix C.2.1); an Initiator that is not permissive closes on a Rev 0
 *   Reply (Appendix C.2.2).
 * - Revisions above 2 are refused.
 *
 * Markers are per direction (requirements A2, A25): each side sends
 * Markers if the peer's frame had M=1 and expects them if its own had.
 * CRCs are on in both directions if either frame had C=1 (R-7.1.1-10), and
 * a Responder's Reply says C=1 whenever CRCs will be used (A18).
 *
 * RTR choice: when an enhanced peer-to-peer Request offers several RTR
 * types, the Responder picks one, preferring a zero-length RDMA Write (no
 * reply traffic, no IRD needed), then a zero-length RDMA Read, then a
 * zero-length Send.
 */

#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "core.h"

/* Default IRD and ORD offered when the layers above set none */
#define MPA_DEFAULT_IRD_ORD	16

/**
 * mpa_policy_default() - the default local policy
 * @pol: policy to fill
 *
 * Rev 1, no Markers wanted, CRCs wanted (R-4.4-5), not permissive, Rev 1
 * and Rev 2 accepted as Responder, and for Rev 2: no peer-to-peer, every
 * RTR type acceptable, IRD and ORD 16.
 */
void mpa_policy_default(struct mpa_policy *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->rev = MPA_REVISION_1;
	pol->crc = true;
	pol->revs = BIT(MPA_REVISION_1) | BIT(MPA_REVISION_2);
	pol->rtr = MPA_RTR_ALL;
	pol->ird = MPA_DEFAULT_IRD_ORD;
	pol->ord = MPA_DEFAULT_IRD_ORD;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_policy_default);

/*
 * RFC 6581's zero-length RDMA Read as the RTR takes an outbound Read of
 * the Initiator (its ORD) and an inbound one of the Responder (its IRD):
 * with either negotiated to 0 it could not be sent, and the connection
 * would fail on its first message. @agreed: the Responder's IRD as agreed,
 * the lesser of its own and the Initiator's ORD, which is also the
 * Initiator's ORD as agreed.
 */
static bool mpa_rtr_read_ok(u16 agreed)
{
	return agreed;
}

/**
 * mpa_rtr_choose() - pick the one RTR type to use
 * @offered: mask of acceptable %MPA_RTR_* types
 *
 * Return: %MPA_RTR_WRITE, %MPA_RTR_READ or %MPA_RTR_SEND, in that order of
 * preference, or 0 if @offered holds none of them.
 */
u8 mpa_rtr_choose(u8 offered)
{
	if (offered & MPA_RTR_WRITE)
		return MPA_RTR_WRITE;
	if (offered & MPA_RTR_READ)
		return MPA_RTR_READ;
	if (offered & MPA_RTR_SEND)
		return MPA_RTR_SEND;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rtr_choose);

/**
 * mpa_request_frame() - the Request an Initiator sends under a policy
 * @pol: local policy
 * @req: filled; build it with mpa_frame_build()
 *
 * Rev 0 is sent with M=1 and C=1, as an RDMAC endpoint does.  Rev 2 is
 * always enhanced; the RTR types are offered only with peer-to-peer.
 */
void mpa_request_frame(const struct mpa_policy *pol, struct mpa_frame *req)
{
	memset(req, 0, sizeof(*req));
	req->rev = pol->rev;
	if (pol->rev == MPA_REVISION_0) {
		req->m = true;
		req->c = true;
		return;
	}
	req->m = pol->markers;
	req->c = pol->crc;
	if (pol->rev == MPA_REVISION_2) {
		req->enhanced = true;
		req->ird = min_t(u16, pol->ird, MPA_IRD_ORD_MAX);
		req->ord = min_t(u16, pol->ord, MPA_IRD_ORD_MAX);
		req->p2p = pol->p2p;
		req->rtr = pol->p2p ? pol->rtr & MPA_RTR_ALL : 0;
		/* no outbound Read: no Read for the RTR (mpa_rtr_read_ok()) */
		if (!req->ord)
			req->rtr &= ~MPA_RTR_READ;
	}
}
EXPORT_SYMBOL_IF_KUNIT(mpa_request_frame);

static void mpa_neg_fail(struct mpa_negotiation *neg,
			 enum mpa_neg_action action,
			 enum mpa_startup_reason reason)
{
	neg->action = action;
	neg->reason = reason;
}

/* Appendix C: Rev 0 means Markers both ways and CRCs, whatever M said. */
static void mpa_params_rev0(struct mpa_params *params)
{
	params->rev = MPA_REVISION_0;
	params->tx_markers = true;
	params->rx_markers = true;
	params->crc = true;
}

/**
 * mpa_negotiate_rev() - does the peer's revision alone end the startup?
 * @pol: local policy (for an Initiator, the one its Request was made from)
 * @f: the peer's frame: its header through mpa_frame_parse_hdr() is
 *	enough, only its Rev is read
 * @role: ours: a Responder judges a Request, an Initiator a Reply
 *
 * The revision checks of mpa_negotiate_request() and mpa_negotiate_reply()
 * that end the startup without a Reply, on the 20 octets of the header
 * alone: the startup uses it to refuse such a frame as soon as they are
 * queued, without waiting for the PD_Length octets it announces (a peer
 * need not send them; waiting, the startup would end at its timeout, or
 * never without one, with the wrong reason).
 *
 * A Request: a Rev above 2 (R-7.1.1-14), or a Rev 1 or 2 outside
 * &mpa_policy.revs (R-7.1.1-16). A Rev 0 Request, or any Request to a
 * Rev 0 policy, is left to mpa_negotiate_request() (Appendix C.2: it
 * answers). A Reply: a Rev above 2, a Reply to a Rev 0 Request in
 * another Rev or the other way round (Appendix C.2.2, C.2.3; Rev 0 taken
 * only when &mpa_policy.permissive), or one in a Rev other than the
 * Request's (R-7.1.1-16, requirements A4: a Responder answers with the
 * Rev it received).
 *
 * Return: %MPA_SR_OK if the revision lets the negotiation go on, else the
 * reason it closes the connection for (code 4).
 */
enum mpa_startup_reason mpa_negotiate_rev(const struct mpa_policy *pol,
					  const struct mpa_frame *f,
					  enum mpa_role role)
{
	u8 ours;

	if (f->rev > MPA_REVISION_2)
		return MPA_SR_BAD_REV;
	if (role == MPA_RESPONDER) {
		if (pol->rev == MPA_REVISION_0 || f->rev == MPA_REVISION_0)
			return MPA_SR_OK;
		return pol->revs & BIT(f->rev) ? MPA_SR_OK : MPA_SR_BAD_REV;
	}
	ours = pol->rev;
	if (ours == f->rev)
		return MPA_SR_OK;
	/* We spoke RDMAC, or the peer did and we are not permissive. */
	if (ours == MPA_REVISION_0 || f->rev != MPA_REVISION_0)
		return MPA_SR_REV_MISMATCH;
	return pol->permissive ? MPA_SR_OK : MPA_SR_REV0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_negotiate_rev);

/**
 * mpa_negotiate_request() - a Responder's decision on a parsed Request
 * @pol: local policy
 * @req: the Request, through mpa_frame_parse_hdr() and mpa_frame_parse_pd()
 * @neg: the outcome: the action, the parameters for Full Operation and the
 *	Reply to send
 *
 * The decision does not look at the Private Data: with %MPA_NEG_ACCEPT the
 * ULP still judges it and has the Reply sent with R=0 or R=1 by
 * mpa_reply_build() (requirements A24).
 */
void mpa_negotiate_request(const struct mpa_policy *pol,
			   const struct mpa_frame *req,
			   struct mpa_negotiation *neg)
{
	struct mpa_params *params = &neg->params;
	struct mpa_frame *rep = &neg->reply;
	enum mpa_startup_reason why;
	u8 rtr, offered;

	memset(neg, 0, sizeof(*neg));
	rep->reply = true;

	why = mpa_negotiate_rev(pol, req, MPA_RESPONDER);
	if (why != MPA_SR_OK) {
		mpa_neg_fail(neg, MPA_NEG_CLOSE, why);
		return;
	}

	if (pol->rev == MPA_REVISION_0 || req->rev == MPA_REVISION_0) {
		if (pol->rev != MPA_REVISION_0 && !pol->permissive) {
			/* C.2.1: tell the peer what we speak, then close */
			rep->rev = MPA_REVISION_1;
			rep->m = pol->markers;
			rep->c = pol->crc || req->c;
			mpa_neg_fail(neg, MPA_NEG_REPLY_CLOSE, MPA_SR_REV0);
			return;
		}
		/* C.2.4: an RDMAC peer (or we are one): Rev 0, M=1, C=1 */
		mpa_params_rev0(params);
		rep->rev = MPA_REVISION_0;
		rep->m = true;
		rep->c = true;
		neg->action = MPA_NEG_ACCEPT;
		return;
	}

	params->rev = req->rev;
	params->tx_markers = req->m;		/* R-7.1.1-6, R-7.1.1-7 */
	params->rx_markers = pol->markers;
	params->crc = pol->crc || req->c;	/* R-7.1.1-10 */
	rep->rev = req->rev;
	rep->m = pol->markers;
	rep->c = params->crc;

	if (req->enhanced) {
		params->enhanced = true;
		rep->enhanced = true;
		/* Cross-mapped: our IRD serves their ORD and vice versa. */
		rep->ird = min_t(u16, pol->ird, req->ord);
		rep->ord = min_t(u16, pol->ord, req->ird);
		params->ird = rep->ird;
		params->ord = rep->ord;
		if (req->p2p) {
			/* RFC 6581: A=1 in the Request needs A=1 back */
			rep->p2p = true;
			offered = req->rtr & pol->rtr;
			if (!mpa_rtr_read_ok(rep->ird))
				offered &= ~MPA_RTR_READ;
			rtr = mpa_rtr_choose(offered);
			if (!rtr) {
				/*
				 * A well-formed Request we cannot accept:
				 * a Reply with R=1 and no RTR type tells the
				 * Initiator so (R-7.1.2-5, R-7.1.2-18).
				 */
				mpa_neg_fail(neg, MPA_NEG_REPLY_REJECT,
					     MPA_SR_NO_RTR);
				return;
			}
			params->p2p = true;
			params->rtr = rtr;
			rep->rtr = rtr;
		}
	}
	neg->action = MPA_NEG_ACCEPT;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_negotiate_request);

/**
 * mpa_reply_build() - write the Reply a Responder's negotiation decided on
 * @neg: outcome of mpa_negotiate_request()
 * @reject: set R=1: the ULP rejects the Request's Private Data
 * @pd: the ULP's Private Data for the Reply
 * @pd_len: its length
 * @buf: output
 * @size: room at @buf
 *
 * With %MPA_NEG_REPLY_REJECT the Reply says R=1 whatever @reject says.
 *
 * Return: octets written, -EINVAL if @neg->action is %MPA_NEG_CLOSE (there
 * is no Reply to send), or an error of mpa_frame_build().
 */
int mpa_reply_build(const struct mpa_negotiation *neg, bool reject,
		    const void *pd, u32 pd_len, void *buf, u32 size)
{
	struct mpa_frame rep = neg->reply;

	if (neg->action == MPA_NEG_CLOSE || neg->action == MPA_NEG_REJECTED)
		return -EINVAL;
	rep.r = reject || neg->action == MPA_NEG_REPLY_REJECT;
	return mpa_frame_build(&rep, pd, pd_len, buf, size);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_reply_build);

/**
 * mpa_negotiate_reply() - an Initiator's decision on a parsed Reply
 * @pol: local policy, the one the Request was made from
 * @rep: the Reply, through mpa_frame_parse_hdr() and mpa_frame_parse_pd()
 * @neg: the outcome; @neg->reply is unused
 *
 * A Reply with R=1 whose revision is acceptable gives %MPA_NEG_REJECTED:
 * leave MPA, keep TCP open, hand the Private Data to the ULP
 * (R-7.1.2-13, requirements A3); the enhanced checks are skipped for it.
 */
void mpa_negotiate_reply(const struct mpa_policy *pol,
			 const struct mpa_frame *rep,
			 struct mpa_negotiation *neg)
{
	struct mpa_params *params = &neg->params;
	enum mpa_startup_reason why;
	struct mpa_frame req;

	memset(neg, 0, sizeof(*neg));
	mpa_request_frame(pol, &req);

	why = mpa_negotiate_rev(pol, rep, MPA_INITIATOR);
	if (why != MPA_SR_OK) {
		mpa_neg_fail(neg, MPA_NEG_CLOSE, why);
		return;
	}
	if (rep->rev == MPA_REVISION_0) {
		mpa_params_rev0(params);
		goto out;
	}

	params->rev = rep->rev;
	params->tx_markers = rep->m;
	params->rx_markers = req.m;
	params->crc = req.c || rep->c;
	if (rep->r)
		goto out;

	if (req.enhanced != rep->enhanced) {
		mpa_neg_fail(neg, MPA_NEG_CLOSE, MPA_SR_V2_MISMATCH);
		return;
	}
	if (req.enhanced) {
		params->enhanced = true;
		params->ird = min_t(u16, req.ird, rep->ord);
		params->ord = min_t(u16, req.ord, rep->ird);
		if (req.p2p) {
			if (!rep->p2p) {
				mpa_neg_fail(neg, MPA_NEG_CLOSE,
					     MPA_SR_P2P_MISMATCH);
				return;
			}
			/* exactly one type, and one that was offered */
			if (!rep->rtr || (rep->rtr & (rep->rtr - 1)) ||
			    !(rep->rtr & req.rtr) ||
			    (rep->rtr == MPA_RTR_READ &&
			     !mpa_rtr_read_ok(params->ord))) {
				mpa_neg_fail(neg, MPA_NEG_CLOSE,
					     MPA_SR_RTR_MISMATCH);
				return;
			}
			params->p2p = true;
			params->rtr = rep->rtr;
		}
	}
out:
	neg->action = rep->r ? MPA_NEG_REJECTED : MPA_NEG_ACCEPT;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_negotiate_reply);
