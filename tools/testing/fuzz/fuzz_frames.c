// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: startup frames (mpa/core/frames.c) and negotiation
 * (mpa/core/negotiate.c).  Arbitrary octets are parsed as a Request (at a
 * Responder) or a Reply (at an Initiator) under an arbitrary local policy.
 * Whatever parses must survive a rebuild/reparse round trip, and every
 * Reply a Responder decides to send must parse at the Initiator with the
 * same contents.
 *
 * Input: policy (4) | frame octets
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "fuzz.h"

static void same_frame(const struct mpa_frame *a, const struct mpa_frame *b)
{
	if (a->reply != b->reply || a->m != b->m || a->c != b->c ||
	    a->r != b->r || a->rev != b->rev || a->enhanced != b->enhanced ||
	    a->pd_len != b->pd_len || a->ulp_pd_len != b->ulp_pd_len ||
	    memcmp(a->pd, b->pd, a->ulp_pd_len))
		abort();
	if (a->enhanced && (a->ird != b->ird || a->ord != b->ord ||
			    a->p2p != b->p2p || a->rtr != b->rtr))
		abort();
}

/* Build @f with its Private Data, parse it back as @role, compare */
static void round_trip(const struct mpa_frame *f, enum mpa_role role)
{
	static u8 buf[MPA_FRAME_MAX_SIZE];
	struct mpa_frame g;
	int n;

	n = mpa_frame_build(f, f->pd, f->ulp_pd_len, buf, sizeof(buf));
	if (n < 0) {
		/* only a Rev above 2 cannot be rebuilt */
		if (f->rev <= MPA_REVISION_2)
			abort();
		return;
	}
	if (n != MPA_FRAME_HDR_SIZE + f->pd_len)
		abort();
	if (mpa_frame_parse_hdr(&g, buf, role) != MPA_SR_OK ||
	    mpa_frame_parse_pd(&g, buf + MPA_FRAME_HDR_SIZE) != MPA_SR_OK)
		abort();
	same_frame(f, &g);
}

static void check_reason(enum mpa_startup_reason r)
{
	if ((unsigned int)r >= MPA_SR_NR)
		abort();
	if (mpa_startup_reason_code(r) != (r ? MPA_ERR_STARTUP : 0))
		abort();
}

static void check_params(const struct mpa_params *p)
{
	if (p->rev > MPA_REVISION_2)
		abort();
	if (p->rev == MPA_REVISION_0 &&
	    !(p->tx_markers && p->rx_markers && p->crc))
		abort();
	if (p->rtr & (p->rtr - 1))
		abort();
	if (p->p2p != !!p->rtr)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static u8 rep_buf[MPA_FRAME_MAX_SIZE];
	struct mpa_negotiation neg, ineg;
	enum mpa_startup_reason r;
	struct mpa_frame f, rep;
	struct mpa_policy pol;
	enum mpa_role role;
	u32 p;
	int n;

	if (size < 4 + MPA_FRAME_HDR_SIZE)
		return 0;
	p = fuzz_get32(data);
	data += 4;
	size -= 4;

	mpa_policy_default(&pol);
	role = p & 1 ? MPA_INITIATOR : MPA_RESPONDER;
	pol.rev = (p >> 1) % 3;
	pol.markers = p & 0x8;
	pol.crc = p & 0x10;
	pol.permissive = p & 0x20;
	pol.p2p = p & 0x40;
	pol.rtr = (p >> 7) & 0xff;
	pol.ird = (p >> 15) & 0x3fff;
	pol.ord = (p >> 18) & 0x3fff;
	/* the revisions a Responder accepts: any mask of Rev 1 and Rev 2 */
	pol.revs = (p >> 29) & 0x6;

	r = mpa_frame_parse_hdr(&f, data, role);
	check_reason(r);
	/*
	 * The early Key check agrees with the header's parser: a header it
	 * takes begins with a Key at every length; one it refuses as a bad
	 * Key differs from both from some octet on.
	 */
	for (n = 0; n <= MPA_KEY_SIZE; n++) {
		bool ok = mpa_frame_key_prefix_ok(data, n);

		if (!ok && r != MPA_SR_BAD_KEY)
			abort();
		if (n == MPA_KEY_SIZE && ok == (r == MPA_SR_BAD_KEY))
			abort();
	}
	if (r != MPA_SR_OK)
		return 0;
	if (f.pd_len > MPA_MAX_PRIVATE_DATA)
		abort();
	if (size < MPA_FRAME_HDR_SIZE + f.pd_len)
		return 0;	/* the socket layer waits or times out */
	r = mpa_frame_parse_pd(&f, data + MPA_FRAME_HDR_SIZE);
	check_reason(r);
	if (r != MPA_SR_OK)
		return 0;
	if (f.pd + f.ulp_pd_len > data + MPA_FRAME_HDR_SIZE + f.pd_len)
		abort();
	round_trip(&f, role);

	if (role == MPA_INITIATOR) {
		mpa_negotiate_reply(&pol, &f, &neg);
		check_reason(neg.reason);
		if ((neg.action == MPA_NEG_CLOSE) != (neg.reason != MPA_SR_OK))
			abort();
		if (neg.action == MPA_NEG_REPLY_CLOSE)
			abort();
		if (neg.action != MPA_NEG_CLOSE)
			check_params(&neg.params);
		return 0;
	}

	mpa_negotiate_request(&pol, &f, &neg);
	check_reason(neg.reason);
	if (neg.action == MPA_NEG_REJECTED)
		abort();
	if (neg.action == MPA_NEG_CLOSE) {
		if (mpa_reply_build(&neg, false, NULL, 0, rep_buf,
				    sizeof(rep_buf)) != -EINVAL)
			abort();
		return 0;
	}
	if (neg.action == MPA_NEG_ACCEPT)
		check_params(&neg.params);
	/* R-7.1.1-16: only an accepted Rev 1 or Rev 2 gets this far */
	if (f.rev && pol.rev && !(pol.revs & (1u << f.rev)))
		abort();

	/* Send the decided Reply (with the Request's PD as ours) */
	n = mpa_reply_build(&neg, p & 0x80000000, f.pd,
			    fuzz_min(f.ulp_pd_len, MPA_V2_PRIVATE_DATA),
			    rep_buf, sizeof(rep_buf));
	if (n < MPA_FRAME_HDR_SIZE)
		abort();
	if (mpa_frame_parse_hdr(&rep, rep_buf, MPA_INITIATOR) != MPA_SR_OK ||
	    mpa_frame_parse_pd(&rep, rep_buf + MPA_FRAME_HDR_SIZE) != MPA_SR_OK)
		abort();
	/* a Request the Responder cannot accept is rejected, R=1, whatever */
	if (rep.rev != neg.reply.rev || rep.m != neg.reply.m ||
	    rep.c != neg.reply.c || rep.enhanced != neg.reply.enhanced ||
	    rep.r != (!!(p & 0x80000000) ||
		      neg.action == MPA_NEG_REPLY_REJECT))
		abort();
	if (neg.action == MPA_NEG_REPLY_REJECT && neg.reason == MPA_SR_OK)
		abort();
	if (rep.enhanced && (rep.p2p != f.p2p || rep.ird > f.ord ||
			     rep.ord > f.ird))
		abort();
	/* the Reply's C says whether CRCs run (A18) */
	if (neg.action == MPA_NEG_ACCEPT && rep.c != neg.params.crc)
		abort();

	/* A Rev 1/2 Initiator that sent this Request accepts this Reply */
	if (neg.action == MPA_NEG_ACCEPT && f.rev && pol.rev && !rep.r) {
		struct mpa_policy ipol;

		mpa_policy_default(&ipol);
		ipol.rev = f.rev;
		ipol.markers = f.m;
		ipol.crc = f.c;
		ipol.p2p = f.enhanced && f.p2p;
		ipol.rtr = f.rtr;
		ipol.ird = f.ird;
		ipol.ord = f.ord;
		if (f.enhanced != (f.rev == MPA_REVISION_2))
			return 0;
		mpa_negotiate_reply(&ipol, &rep, &ineg);
		if (ineg.action != MPA_NEG_ACCEPT)
			abort();
		if (ineg.params.crc != neg.params.crc ||
		    ineg.params.rev != neg.params.rev ||
		    ineg.params.tx_markers != neg.params.rx_markers ||
		    ineg.params.rx_markers != neg.params.tx_markers ||
		    ineg.params.rtr != neg.params.rtr ||
		    ineg.params.ird != neg.params.ord ||
		    ineg.params.ord != neg.params.ird)
			abort();
	}
	return 0;
}
