// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of MPA startup negotiation: RFC 5044 section 7.1, every cell
 * of the Appendix C interoperability table, the project's revision
 * defaults and RFC 6581 enhanced connection setup.
 */
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/errno.h>
#include <linux/module.h>

#include "core/core.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

/* One side's view after a complete exchange */
struct exchange {
	struct mpa_negotiation resp;	/* Responder's decision */
	struct mpa_negotiation init;	/* Initiator's decision */
	struct mpa_frame req, rep;	/* frames as parsed by the peer */
	u8 req_bytes[MPA_FRAME_MAX_SIZE];
	u8 rep_bytes[MPA_FRAME_MAX_SIZE];
	int req_len, rep_len;
	bool init_ran;
};

/*
 * Run the startup exchange over real frame bytes: the Initiator builds its
 * Request, the Responder parses and decides, builds its Reply (accepting,
 * or rejecting with @reject), the Initiator parses and decides.
 */
static void run_exchange(struct kunit *test, const struct mpa_policy *ipol,
			 const struct mpa_policy *rpol, bool reject,
			 struct exchange *x)
{
	struct mpa_frame req;

	memset(x, 0, sizeof(*x));
	mpa_request_frame(ipol, &req);
	x->req_len = mpa_frame_build(&req, "req", 3, x->req_bytes,
				     sizeof(x->req_bytes));
	KUNIT_ASSERT_GT(test, x->req_len, 0);

	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&x->req, x->req_bytes,
						  MPA_RESPONDER), MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, MPA_FRAME_HDR_SIZE + x->req.pd_len, x->req_len);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&x->req, x->req_bytes + 20),
			MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, x->req.ulp_pd_len, 3);
	mpa_negotiate_request(rpol, &x->req, &x->resp);
	if (x->resp.action == MPA_NEG_CLOSE) {
		KUNIT_EXPECT_EQ(test, mpa_reply_build(&x->resp, false, NULL, 0,
						      x->rep_bytes, 64),
				-EINVAL);
		return;
	}

	x->rep_len = mpa_reply_build(&x->resp, reject, "rep", 3, x->rep_bytes,
				     sizeof(x->rep_bytes));
	KUNIT_ASSERT_GT(test, x->rep_len, 0);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&x->rep, x->rep_bytes,
						  MPA_INITIATOR), MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&x->rep, x->rep_bytes + 20),
			MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, x->rep.ulp_pd_len, 3);
	mpa_negotiate_reply(ipol, &x->rep, &x->init);
	x->init_ran = true;
}

static bool exchange_closed(const struct exchange *x)
{
	return x->resp.action == MPA_NEG_CLOSE ||
	       x->resp.action == MPA_NEG_REPLY_CLOSE ||
	       x->init.action == MPA_NEG_CLOSE;
}

/* A zeroed exchange for @test, and both sides' policies at the defaults */
static struct exchange *exchange_new(struct kunit *test,
				     struct mpa_policy *ipol,
				     struct mpa_policy *rpol)
{
	struct exchange *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	mpa_policy_default(ipol);
	mpa_policy_default(rpol);
	return x;
}

/* An Initiator's Rev 2 peer-to-peer policy, offering the RTR types @rtr */
static void p2p_policy(struct mpa_policy *pol, u8 rtr)
{
	mpa_policy_default(pol);
	pol->rev = MPA_REVISION_2;
	pol->p2p = true;
	pol->rtr = rtr;
}

/* The endpoint kinds of RFC 5044 Appendix C, Figure 16 */
enum kind { RDMAC, NP_M0, NP_M1, P_M0, P_M1 };

static void kind_policy(enum kind k, struct mpa_policy *pol)
{
	mpa_policy_default(pol);
	switch (k) {
	case RDMAC:
		pol->rev = MPA_REVISION_0;
		pol->markers = true;
		break;
	case NP_M0:
		break;
	case NP_M1:
		pol->markers = true;
		break;
	case P_M0:
		pol->permissive = true;
		break;
	case P_M1:
		pol->permissive = true;
		pol->markers = true;
		break;
	}
}

struct appc_cell {
	const char *name;
	enum kind init, resp;
	bool close;
	u8 rev;
	bool x, y;	/* receive Markers at Initiator / Responder */
};

#define CELL(i, r, c, v, xx, yy) \
	{ #i "_x_" #r, i, r, c, v, xx, yy }

/* requirements 4.1: Initiator (rows) x Responder (columns) */
static const struct appc_cell appc_cells[] = {
	CELL(RDMAC, RDMAC, false, 0, 1, 1),
	CELL(RDMAC, NP_M0, true, 0, 0, 0),
	CELL(RDMAC, NP_M1, true, 0, 0, 0),
	/* "N/A": a permissive Responder never answers Rev 0 with M=0 */
	CELL(RDMAC, P_M0, false, 0, 1, 1),
	CELL(RDMAC, P_M1, false, 0, 1, 1),
	CELL(NP_M0, RDMAC, true, 0, 0, 0),
	CELL(NP_M0, NP_M0, false, 1, 0, 0),
	CELL(NP_M0, NP_M1, false, 1, 0, 1),
	CELL(NP_M0, P_M0, false, 1, 0, 0),
	CELL(NP_M0, P_M1, false, 1, 0, 1),
	CELL(NP_M1, RDMAC, true, 0, 0, 0),
	CELL(NP_M1, NP_M0, false, 1, 1, 0),
	CELL(NP_M1, NP_M1, false, 1, 1, 1),
	CELL(NP_M1, P_M0, false, 1, 1, 0),
	CELL(NP_M1, P_M1, false, 1, 1, 1),
	CELL(P_M0, RDMAC, false, 0, 1, 1),
	CELL(P_M0, NP_M0, false, 1, 0, 0),
	CELL(P_M0, NP_M1, false, 1, 0, 1),
	CELL(P_M0, P_M0, false, 1, 0, 0),
	CELL(P_M0, P_M1, false, 1, 0, 1),
	CELL(P_M1, RDMAC, false, 0, 1, 1),
	CELL(P_M1, NP_M0, false, 1, 1, 0),
	CELL(P_M1, NP_M1, false, 1, 1, 1),
	CELL(P_M1, P_M0, false, 1, 1, 0),
	CELL(P_M1, P_M1, false, 1, 1, 1),
};

KUNIT_ARRAY_PARAM_DESC(appc, appc_cells, name);

static void appendix_c_cell(struct kunit *test)
{
	const struct appc_cell *cell = test->param_value;
	struct mpa_policy ipol, rpol;
	struct exchange *x;

	x = exchange_new(test, &ipol, &rpol);
	kind_policy(cell->init, &ipol);
	kind_policy(cell->resp, &rpol);
	run_exchange(test, &ipol, &rpol, false, x);

	KUNIT_ASSERT_EQ(test, exchange_closed(x), cell->close);
	if (cell->close) {
		const struct mpa_negotiation *n = x->init.action ==
			MPA_NEG_CLOSE ? &x->init : &x->resp;

		KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(n->reason),
				MPA_ERR_STARTUP);
		return;
	}
	KUNIT_ASSERT_EQ(test, x->resp.action, MPA_NEG_ACCEPT);
	KUNIT_ASSERT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_EQ(test, x->init.params.rev, cell->rev);
	KUNIT_EXPECT_EQ(test, x->resp.params.rev, cell->rev);
	KUNIT_EXPECT_EQ(test, x->init.params.rx_markers, cell->x);
	KUNIT_EXPECT_EQ(test, x->resp.params.rx_markers, cell->y);
	/* what one side sends is what the other expects */
	KUNIT_EXPECT_EQ(test, x->init.params.tx_markers, cell->y);
	KUNIT_EXPECT_EQ(test, x->resp.params.tx_markers, cell->x);
	/* C.1: CRCs in both directions (the defaults and RDMAC ask) */
	KUNIT_EXPECT_TRUE(test, x->init.params.crc);
	KUNIT_EXPECT_TRUE(test, x->resp.params.crc);
}

/* C.2.1: a non-permissive Responder answers Rev 0 with Rev 1, then closes */
static void rev0_nonpermissive_responder(struct kunit *test)
{
	static const u8 rdmac_req[20] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
		0xc0, 0x00, 0x00, 0x00,
	};
	struct mpa_negotiation neg;
	struct mpa_policy pol;
	struct mpa_frame req;
	u8 buf[32];

	mpa_policy_default(&pol);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&req, rdmac_req,
						  MPA_RESPONDER), MPA_SR_OK);
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_REPLY_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_REV0);
	KUNIT_ASSERT_EQ(test, mpa_reply_build(&neg, false, NULL, 0, buf, 32),
			20);
	KUNIT_EXPECT_EQ(test, buf[9], 0x70);	/* Rep key */
	KUNIT_EXPECT_EQ(test, buf[16], 0x40);	/* M=0 C=1 */
	KUNIT_EXPECT_EQ(test, buf[17], 1);	/* Rev 1 */
}

/* C.2.4: a permissive Responder answers Rev 0 with Rev 0, M=1, C=1 */
static void rev0_permissive_responder(struct kunit *test)
{
	struct mpa_frame req = { .rev = 0, .m = true, .c = true };
	struct mpa_negotiation neg;
	struct mpa_policy pol;
	u8 buf[32];

	mpa_policy_default(&pol);
	pol.permissive = true;
	pol.crc = false;
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_ACCEPT);
	KUNIT_ASSERT_EQ(test, mpa_reply_build(&neg, false, NULL, 0, buf, 32),
			20);
	KUNIT_EXPECT_EQ(test, buf[16], 0xc0);
	KUNIT_EXPECT_EQ(test, buf[17], 0);
	KUNIT_EXPECT_TRUE(test, neg.params.crc);
	KUNIT_EXPECT_TRUE(test, neg.params.rx_markers);
	KUNIT_EXPECT_TRUE(test, neg.params.tx_markers);
}

/* C.2.2: a non-permissive Initiator closes on a Rev 0 Reply */
static void rev0_nonpermissive_initiator(struct kunit *test)
{
	struct mpa_frame rep = { .reply = true, .rev = 0, .m = true,
				 .c = true };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_REV0);
}

/* Issue 3 must 6: the revision defaults */
static void default_policy(struct kunit *test)
{
	static const u8 expect[20] = {
		0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52,
		0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65,
		0x40, 0x01, 0x00, 0x00,
	};
	struct mpa_policy pol;
	struct mpa_frame req;
	u8 buf[32];

	mpa_policy_default(&pol);
	KUNIT_EXPECT_EQ(test, pol.rev, MPA_REVISION_1);
	KUNIT_EXPECT_TRUE(test, pol.crc);		/* R-4.4-5 */
	KUNIT_EXPECT_FALSE(test, pol.markers);
	KUNIT_EXPECT_FALSE(test, pol.permissive);
	mpa_request_frame(&pol, &req);
	KUNIT_ASSERT_EQ(test, mpa_frame_build(&req, NULL, 0, buf, 32), 20);
	KUNIT_EXPECT_MEMEQ(test, buf, expect, 20);
}

static void rev2_request_enhanced(struct kunit *test)
{
	struct mpa_policy pol;
	struct mpa_frame req;

	mpa_policy_default(&pol);
	pol.rev = MPA_REVISION_2;
	mpa_request_frame(&pol, &req);
	KUNIT_EXPECT_EQ(test, req.rev, 2);
	KUNIT_EXPECT_TRUE(test, req.enhanced);
	KUNIT_EXPECT_FALSE(test, req.p2p);
	KUNIT_EXPECT_EQ(test, req.rtr, 0);
	pol.p2p = true;
	mpa_request_frame(&pol, &req);
	KUNIT_EXPECT_TRUE(test, req.p2p);
	KUNIT_EXPECT_EQ(test, req.rtr, MPA_RTR_ALL);
}

static void rev0_request_forces_m_c(struct kunit *test)
{
	struct mpa_policy pol;
	struct mpa_frame req;

	mpa_policy_default(&pol);
	pol.rev = MPA_REVISION_0;
	pol.crc = false;
	mpa_request_frame(&pol, &req);
	KUNIT_EXPECT_EQ(test, req.rev, 0);
	KUNIT_EXPECT_TRUE(test, req.m);
	KUNIT_EXPECT_TRUE(test, req.c);
}

/* The Responder answers with the revision it received */
static void responder_echoes_rev(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;
	u8 rev;

	x = exchange_new(test, &ipol, &rpol);
	for (rev = 1; rev <= 2; rev++) {
		ipol.rev = rev;
		run_exchange(test, &ipol, &rpol, false, x);
		KUNIT_EXPECT_EQ(test, x->rep.rev, rev);
		KUNIT_EXPECT_EQ(test, x->rep.enhanced, rev == 2);
		KUNIT_EXPECT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
		KUNIT_EXPECT_EQ(test, x->init.params.rev, rev);
		KUNIT_EXPECT_EQ(test, x->resp.params.rev, rev);
		KUNIT_EXPECT_EQ(test, x->init.params.enhanced, rev == 2);
	}
}

/* RFC 6581: IRD/ORD cross-mapped, A echoed, one RTR type picked */
static void rev2_enhanced_exchange(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;

	x = exchange_new(test, &ipol, &rpol);
	p2p_policy(&ipol, MPA_RTR_READ | MPA_RTR_SEND);
	ipol.ird = 32;
	ipol.ord = 1;
	rpol.ird = 8;
	rpol.ord = 64;
	run_exchange(test, &ipol, &rpol, false, x);

	KUNIT_ASSERT_EQ(test, x->resp.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_TRUE(test, x->rep.enhanced);
	KUNIT_EXPECT_TRUE(test, x->rep.p2p);
	KUNIT_EXPECT_EQ(test, x->rep.rtr, MPA_RTR_READ);
	/* Reply IRD serves the Request's ORD, Reply ORD its IRD */
	KUNIT_EXPECT_EQ(test, x->rep.ird, 1);
	KUNIT_EXPECT_EQ(test, x->rep.ord, 32);
	KUNIT_EXPECT_EQ(test, x->resp.params.ird, 1);
	KUNIT_EXPECT_EQ(test, x->resp.params.ord, 32);
	KUNIT_ASSERT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_TRUE(test, x->init.params.p2p);
	KUNIT_EXPECT_EQ(test, x->init.params.rtr, MPA_RTR_READ);
	KUNIT_EXPECT_EQ(test, x->init.params.ird, 32);
	KUNIT_EXPECT_EQ(test, x->init.params.ord, 1);
	/* the Reply's Private Data still carries the ULP's 3 octets */
	KUNIT_EXPECT_EQ(test, x->rep.pd_len, 7);
}

struct rtr_vec {
	const char *name;
	u8 offered, chosen;
};

static const struct rtr_vec rtr_vecs[] = {
	{ "all", MPA_RTR_ALL, MPA_RTR_WRITE },
	{ "write_read", MPA_RTR_WRITE | MPA_RTR_READ, MPA_RTR_WRITE },
	{ "read_send", MPA_RTR_READ | MPA_RTR_SEND, MPA_RTR_READ },
	{ "send", MPA_RTR_SEND, MPA_RTR_SEND },
	{ "write", MPA_RTR_WRITE, MPA_RTR_WRITE },
	{ "none", 0, 0 },
	{ "unknown_bits", 0xf8, 0 },
};

KUNIT_ARRAY_PARAM_DESC(rtr, rtr_vecs, name);

static void rtr_preference(struct kunit *test)
{
	const struct rtr_vec *v = test->param_value;

	KUNIT_EXPECT_EQ(test, mpa_rtr_choose(v->offered), v->chosen);
}

/*
 * No RTR type in common: the Responder rejects with a Reply, R=1, its
 * IRD/ORD block and no RTR type (R-7.1.2-5, R-7.1.2-18), whatever its ULP
 * would say; the Initiator sees a reject, not a close.
 */
static void rev2_no_common_rtr(struct kunit *test)
{
	struct mpa_frame req = { .rev = 2, .enhanced = true, .p2p = true,
				 .rtr = MPA_RTR_SEND, .ird = 3, .ord = 5 };
	struct mpa_negotiation neg, ineg;
	struct mpa_policy pol, ipol;
	struct mpa_frame rep;
	u8 buf[32];		/* the Reply: header and IRD/ORD block */
	int n;

	mpa_policy_default(&pol);
	pol.rtr = MPA_RTR_WRITE | MPA_RTR_READ;
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_REPLY_REJECT);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_NO_RTR);
	KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(neg.reason),
			MPA_ERR_STARTUP);

	n = mpa_reply_build(&neg, false, NULL, 0, buf, sizeof(buf));
	KUNIT_ASSERT_EQ(test, n, MPA_FRAME_HDR_SIZE + MPA_V2_BLOCK_SIZE);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_hdr(&rep, buf, MPA_INITIATOR),
			MPA_SR_OK);
	KUNIT_ASSERT_EQ(test, mpa_frame_parse_pd(&rep, buf + 20), MPA_SR_OK);
	KUNIT_EXPECT_TRUE(test, rep.r);
	KUNIT_EXPECT_EQ(test, rep.rev, 2);
	KUNIT_EXPECT_TRUE(test, rep.enhanced);
	KUNIT_EXPECT_TRUE(test, rep.p2p);
	KUNIT_EXPECT_EQ(test, rep.rtr, 0);
	KUNIT_EXPECT_EQ(test, rep.ird, 5);	/* min(16, their ORD) */
	KUNIT_EXPECT_EQ(test, rep.ord, 3);	/* min(16, their IRD) */

	p2p_policy(&ipol, MPA_RTR_SEND);
	ipol.ird = 3;
	ipol.ord = 5;
	mpa_negotiate_reply(&ipol, &rep, &ineg);
	KUNIT_EXPECT_EQ(test, ineg.action, MPA_NEG_REJECTED);
}

static void rev2_reply_checks(struct kunit *test)
{
	struct mpa_frame rep = { .reply = true, .rev = 2, .enhanced = true,
				 .p2p = true, .rtr = MPA_RTR_WRITE };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	p2p_policy(&pol, MPA_RTR_WRITE | MPA_RTR_READ);
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_ACCEPT);

	rep.p2p = false;	/* RFC 6581: A=1 must come back */
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_P2P_MISMATCH);
	rep.p2p = true;

	rep.rtr = MPA_RTR_WRITE | MPA_RTR_READ;	/* not exactly one */
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_RTR_MISMATCH);
	rep.rtr = MPA_RTR_SEND;			/* not offered */
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_RTR_MISMATCH);
	rep.rtr = 0;
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_RTR_MISMATCH);
	rep.rtr = MPA_RTR_READ;

	rep.enhanced = false;
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_V2_MISMATCH);
}

/*
 * A zero-length RDMA Read as the RTR needs a Read slot on both sides: with
 * the Responder's IRD (or the Initiator's ORD) at 0 the Responder picks
 * another offered type, or rejects for want of one; an Initiator with ORD
 * 0 does not offer the Read, and refuses a Reply that picks it with IRD 0.
 */
static void rev2_read_rtr_needs_ird(struct kunit *test)
{
	struct mpa_frame rep = { .reply = true, .rev = 2, .enhanced = true,
				 .p2p = true, .rtr = MPA_RTR_READ, .ord = 4 };
	struct mpa_policy ipol, rpol;
	struct mpa_negotiation neg;
	struct exchange *x;

	/* the Responder has no inbound Read: Send instead */
	x = exchange_new(test, &ipol, &rpol);
	p2p_policy(&ipol, MPA_RTR_READ | MPA_RTR_SEND);
	rpol.ird = 0;
	run_exchange(test, &ipol, &rpol, false, x);
	KUNIT_ASSERT_EQ(test, x->resp.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_EQ(test, x->rep.rtr, MPA_RTR_SEND);
	KUNIT_EXPECT_EQ(test, x->rep.ird, 0);
	KUNIT_ASSERT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_EQ(test, x->init.params.rtr, MPA_RTR_SEND);

	/* only the Read offered: rejected, R=1 and no RTR type */
	p2p_policy(&ipol, MPA_RTR_READ);
	run_exchange(test, &ipol, &rpol, false, x);
	KUNIT_EXPECT_EQ(test, x->resp.action, MPA_NEG_REPLY_REJECT);
	KUNIT_EXPECT_EQ(test, x->resp.reason, MPA_SR_NO_RTR);
	KUNIT_EXPECT_TRUE(test, x->rep.r);
	KUNIT_EXPECT_EQ(test, x->rep.rtr, 0);
	KUNIT_EXPECT_EQ(test, x->init.action, MPA_NEG_REJECTED);

	/* an Initiator without outbound Reads offers Write and Send only */
	mpa_policy_default(&rpol);
	p2p_policy(&ipol, MPA_RTR_ALL);
	ipol.ord = 0;
	run_exchange(test, &ipol, &rpol, false, x);
	KUNIT_EXPECT_EQ(test, x->req.rtr, MPA_RTR_WRITE | MPA_RTR_SEND);
	KUNIT_EXPECT_EQ(test, x->init.params.rtr, MPA_RTR_WRITE);
	p2p_policy(&ipol, MPA_RTR_READ | MPA_RTR_SEND);
	ipol.ord = 0;
	run_exchange(test, &ipol, &rpol, false, x);
	KUNIT_EXPECT_EQ(test, x->req.rtr, MPA_RTR_SEND);
	KUNIT_EXPECT_EQ(test, x->init.params.rtr, MPA_RTR_SEND);

	/* a Reply picking the Read with IRD 0: refused */
	p2p_policy(&ipol, MPA_RTR_READ | MPA_RTR_SEND);
	mpa_negotiate_reply(&ipol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_RTR_MISMATCH);
	rep.ird = 1;
	mpa_negotiate_reply(&ipol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_EQ(test, neg.params.rtr, MPA_RTR_READ);
	KUNIT_EXPECT_EQ(test, neg.params.ord, 1);
}

static void rev_mismatch(struct kunit *test)
{
	struct mpa_frame rep = { .reply = true, .rev = 2, .enhanced = true };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_REV_MISMATCH);
	pol.rev = MPA_REVISION_2;
	rep.rev = 1;
	rep.enhanced = false;
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_REV_MISMATCH);
	/* an RDMAC Initiator cannot follow an IETF Reply */
	pol.rev = MPA_REVISION_0;
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_REV_MISMATCH);
}

/* R-7.1.1-16: a revision we cannot work with closes, either side */
static void rev_unsupported(struct kunit *test)
{
	struct mpa_frame f = { .rev = 3 };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	pol.permissive = true;
	mpa_negotiate_request(&pol, &f, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_BAD_REV);
	f.reply = true;
	f.rev = 0xff;
	mpa_negotiate_reply(&pol, &f, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_BAD_REV);
}

/*
 * mpa_negotiate_rev(), which the startup asks on a header alone, says
 * exactly what the whole negotiation closes for on revision grounds: for
 * every policy revision, permissive or not, responder-revs set and frame
 * Rev, either role, a reason from it is the negotiation's CLOSE, and the
 * negotiation never closes for a revision reason it let through.
 */
static void rev_on_header_alone(struct kunit *test)
{
	struct mpa_negotiation neg;
	enum mpa_startup_reason why;
	struct mpa_policy pol;
	struct mpa_frame f;
	unsigned int i;
	bool rev_reason;

	for (i = 0; i < 3 * 2 * 4 * 5 * 2; i++) {
		mpa_policy_default(&pol);
		pol.rev = i % 3;
		pol.permissive = i / 3 % 2;
		pol.revs = i / 6 % 4 << 1;
		memset(&f, 0, sizeof(f));
		f.rev = i / 24 % 5;
		f.reply = i / 120;
		f.c = true;
		why = mpa_negotiate_rev(&pol, &f, f.reply ? MPA_INITIATOR :
							    MPA_RESPONDER);
		if (f.reply)
			mpa_negotiate_reply(&pol, &f, &neg);
		else
			mpa_negotiate_request(&pol, &f, &neg);
		rev_reason = neg.reason == MPA_SR_BAD_REV ||
			     neg.reason == MPA_SR_REV0 ||
			     neg.reason == MPA_SR_REV_MISMATCH;
		if (why != MPA_SR_OK) {
			KUNIT_EXPECT_EQ_MSG(test, neg.action, MPA_NEG_CLOSE,
					    "case %u", i);
			KUNIT_EXPECT_EQ_MSG(test, neg.reason, why, "case %u", i);
		} else {
			KUNIT_EXPECT_FALSE_MSG(test, neg.action == MPA_NEG_CLOSE &&
					       rev_reason, "case %u", i);
		}
	}
	/* the Rev 0 Responder's refusal answers first: not on the header */
	mpa_policy_default(&pol);
	memset(&f, 0, sizeof(f));
	KUNIT_EXPECT_EQ(test, mpa_negotiate_rev(&pol, &f, MPA_RESPONDER),
			MPA_SR_OK);
	mpa_negotiate_request(&pol, &f, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_REPLY_CLOSE);
	/* and a few cells by name */
	f.rev = 3;
	KUNIT_EXPECT_EQ(test, mpa_negotiate_rev(&pol, &f, MPA_RESPONDER),
			MPA_SR_BAD_REV);
	f.rev = 2;
	pol.revs = BIT(1);
	KUNIT_EXPECT_EQ(test, mpa_negotiate_rev(&pol, &f, MPA_RESPONDER),
			MPA_SR_BAD_REV);
	f.reply = true;
	KUNIT_EXPECT_EQ(test, mpa_negotiate_rev(&pol, &f, MPA_INITIATOR),
			MPA_SR_REV_MISMATCH);
	f.rev = 0;
	KUNIT_EXPECT_EQ(test, mpa_negotiate_rev(&pol, &f, MPA_INITIATOR),
			MPA_SR_REV0);
}

/* R-7.1.2-5, R-7.1.2-13: reject with R=1; Initiator exits, TCP stays */
static void reject_flow(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;

	x = exchange_new(test, &ipol, &rpol);
	run_exchange(test, &ipol, &rpol, true, x);
	KUNIT_EXPECT_EQ(test, x->resp.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_TRUE(test, x->rep.r);
	KUNIT_EXPECT_EQ(test, x->rep_bytes[16], 0x60);
	KUNIT_EXPECT_EQ(test, x->init.action, MPA_NEG_REJECTED);
	KUNIT_EXPECT_EQ(test, x->init.reason, MPA_SR_OK);
	KUNIT_EXPECT_MEMEQ(test, x->rep.pd, "rep", 3);
}

/* A rejecting Rev 2 Reply is a rejection, not an RTR failure */
static void reject_rev2_skips_rtr(struct kunit *test)
{
	struct mpa_frame rep = { .reply = true, .r = true, .rev = 2,
				 .enhanced = true };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	pol.rev = MPA_REVISION_2;
	pol.p2p = true;
	mpa_negotiate_reply(&pol, &rep, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_REJECTED);
}

/* R-7.1.1-9, R-7.1.1-10, A18: CRC on if either side asks */
static void crc_either_side(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;
	int i;

	x = exchange_new(test, &ipol, &rpol);
	for (i = 0; i < 4; i++) {
		bool want = i != 0;

		ipol.crc = i & 1;
		rpol.crc = i & 2;
		run_exchange(test, &ipol, &rpol, false, x);
		KUNIT_EXPECT_EQ(test, x->init.params.crc, want);
		KUNIT_EXPECT_EQ(test, x->resp.params.crc, want);
		KUNIT_EXPECT_EQ(test, x->rep.c, want);
	}
}

/* A2, A25: Markers per direction, all four combinations */
static void markers_per_direction(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;
	int i;

	x = exchange_new(test, &ipol, &rpol);
	for (i = 0; i < 4; i++) {
		ipol.markers = i & 1;
		rpol.markers = i & 2;
		run_exchange(test, &ipol, &rpol, false, x);
		KUNIT_EXPECT_EQ(test, x->init.params.rx_markers, ipol.markers);
		KUNIT_EXPECT_EQ(test, x->init.params.tx_markers, rpol.markers);
		KUNIT_EXPECT_EQ(test, x->resp.params.rx_markers, rpol.markers);
		KUNIT_EXPECT_EQ(test, x->resp.params.tx_markers, ipol.markers);
		KUNIT_EXPECT_EQ(test, x->req.m, ipol.markers);
		KUNIT_EXPECT_EQ(test, x->rep.m, rpol.markers);
	}
}

/* A Responder's R in a Request is not checked (R-7.1.1-12) */
static void request_r_ignored(struct kunit *test)
{
	struct mpa_frame req = { .rev = 1, .r = true, .c = true };
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_ACCEPT);
	KUNIT_EXPECT_FALSE(test, neg.reply.r);
}

static void reply_pd_limit(struct kunit *test)
{
	struct mpa_frame req = { .rev = 2, .enhanced = true };
	static u8 pd[MPA_MAX_PRIVATE_DATA], buf[MPA_FRAME_MAX_SIZE];
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, mpa_reply_build(&neg, false, pd,
					      MPA_V2_PRIVATE_DATA, buf,
					      sizeof(buf)),
			MPA_FRAME_MAX_SIZE);
	KUNIT_EXPECT_EQ(test, mpa_reply_build(&neg, false, pd,
					      MPA_V2_PRIVATE_DATA + 1, buf,
					      sizeof(buf)), -EMSGSIZE);
}

/*
 * R-7.1.1-15, R-7.1.1-16: a Responder examines Rev and closes on one its
 * policy's revs mask does not accept (the namespace's responder-revs);
 * Rev 0 is never the mask's business but the permissive flag's.
 */
struct revs_vec {
	const char *name;
	u8 revs;		/* the Responder's mask */
	bool permissive;	/* the Responder's */
	u8 rev;			/* the Initiator's Rev */
	enum mpa_neg_action action;
	enum mpa_startup_reason reason;
};

#define REVS_BIT(n)	BIT(MPA_REVISION_##n)
#define REVS_VEC(n, mask, perm, r, act, why)				\
	{ #n, mask, perm, r, MPA_NEG_##act, MPA_SR_##why }

static const struct revs_vec revs_vecs[] = {
	REVS_VEC(rev1_rev2_take_rev1, REVS_BIT(1) | REVS_BIT(2), false, 1,
		 ACCEPT, OK),
	REVS_VEC(rev1_rev2_take_rev2, REVS_BIT(1) | REVS_BIT(2), false, 2,
		 ACCEPT, OK),
	REVS_VEC(rev1_takes_rev1, REVS_BIT(1), false, 1, ACCEPT, OK),
	REVS_VEC(rev1_refuses_rev2, REVS_BIT(1), false, 2, CLOSE, BAD_REV),
	REVS_VEC(rev1_refuses_rev2_permissive, REVS_BIT(1), true, 2, CLOSE,
		 BAD_REV),
	REVS_VEC(rev2_refuses_rev1, REVS_BIT(2), false, 1, CLOSE, BAD_REV),
	REVS_VEC(rev2_takes_rev2, REVS_BIT(2), false, 2, ACCEPT, OK),
	REVS_VEC(none_refuses_rev1, 0, false, 1, CLOSE, BAD_REV),
	REVS_VEC(none_refuses_rev2, 0, true, 2, CLOSE, BAD_REV),
	/* Rev 0 follows permissive: C.2.1 or C.2.4, whatever the mask */
	REVS_VEC(rev1_rev0_strict, REVS_BIT(1), false, 0, REPLY_CLOSE, REV0),
	REVS_VEC(rev2_rev0_strict, REVS_BIT(2), false, 0, REPLY_CLOSE, REV0),
	REVS_VEC(bit0_rev0_strict, REVS_BIT(0) | REVS_BIT(1) | REVS_BIT(2),
		 false, 0, REPLY_CLOSE, REV0),
	REVS_VEC(rev1_rev0_permissive, REVS_BIT(1), true, 0, ACCEPT, OK),
	REVS_VEC(rev2_rev0_permissive, REVS_BIT(2), true, 0, ACCEPT, OK),
	REVS_VEC(none_rev0_permissive, 0, true, 0, ACCEPT, OK),
};

KUNIT_ARRAY_PARAM_DESC(revs, revs_vecs, name);

static void responder_revs(struct kunit *test)
{
	const struct revs_vec *v = test->param_value;
	struct mpa_policy ipol, rpol;
	struct exchange *x;

	x = exchange_new(test, &ipol, &rpol);
	ipol.rev = v->rev;
	rpol.revs = v->revs;
	rpol.permissive = v->permissive;
	run_exchange(test, &ipol, &rpol, false, x);

	KUNIT_EXPECT_EQ(test, x->req.rev, v->rev);
	KUNIT_EXPECT_EQ(test, x->resp.action, v->action);
	KUNIT_EXPECT_EQ(test, x->resp.reason, v->reason);
	switch (v->action) {
	case MPA_NEG_ACCEPT:
		/* answered in kind, and the Initiator follows */
		KUNIT_EXPECT_EQ(test, x->resp.params.rev, v->rev);
		KUNIT_EXPECT_EQ(test, x->rep.rev, v->rev);
		KUNIT_EXPECT_EQ(test, x->rep.enhanced, v->rev == 2);
		KUNIT_EXPECT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
		KUNIT_EXPECT_EQ(test, x->init.params.rev, v->rev);
		break;
	case MPA_NEG_CLOSE:
		/* no Reply at all (run_exchange() checked), code 4 */
		KUNIT_EXPECT_FALSE(test, x->init_ran);
		KUNIT_EXPECT_EQ(test, mpa_startup_reason_code(x->resp.reason),
				MPA_ERR_STARTUP);
		break;
	default:
		/* C.2.1: what we speak, Rev 1, then the close */
		KUNIT_EXPECT_EQ(test, x->rep.rev, 1);
		break;
	}
}

/* mpa_policy_default() accepts Rev 1 and Rev 2, and takes both. */
static void revs_default(struct kunit *test)
{
	struct mpa_policy ipol, rpol;
	struct exchange *x;
	u8 rev;

	x = exchange_new(test, &ipol, &rpol);
	KUNIT_EXPECT_EQ(test, rpol.revs, REVS_BIT(1) | REVS_BIT(2));
	for (rev = MPA_REVISION_1; rev <= MPA_REVISION_2; rev++) {
		ipol.rev = rev;
		run_exchange(test, &ipol, &rpol, false, x);
		KUNIT_EXPECT_EQ(test, x->resp.action, MPA_NEG_ACCEPT);
		KUNIT_EXPECT_EQ(test, x->resp.reason, MPA_SR_OK);
		KUNIT_EXPECT_EQ(test, x->resp.params.rev, rev);
		KUNIT_EXPECT_EQ(test, x->init.action, MPA_NEG_ACCEPT);
	}
}

/*
 * The mask is checked before anything of the refused revision: an
 * enhanced Rev 2 Request with no RTR type in common is a Rev problem
 * first. No mask lets a Rev above 2 in.
 */
static void revs_checked_first(struct kunit *test)
{
	struct mpa_frame req = {
		.rev = MPA_REVISION_2, .enhanced = true, .p2p = true,
		.rtr = MPA_RTR_SEND, .ird = 1, .ord = 1,
	};
	struct mpa_negotiation neg;
	struct mpa_policy pol;

	mpa_policy_default(&pol);
	pol.rtr = MPA_RTR_WRITE;
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_REPLY_REJECT);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_NO_RTR);
	pol.revs = REVS_BIT(1);
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_BAD_REV);

	req = (struct mpa_frame){ .rev = 3 };
	pol.revs = 0xff;
	pol.permissive = true;
	mpa_negotiate_request(&pol, &req, &neg);
	KUNIT_EXPECT_EQ(test, neg.action, MPA_NEG_CLOSE);
	KUNIT_EXPECT_EQ(test, neg.reason, MPA_SR_BAD_REV);
}

static struct kunit_case mpa_negotiate_cases[] = {
	KUNIT_CASE_PARAM(appendix_c_cell, appc_gen_params),
	KUNIT_CASE(rev0_nonpermissive_responder),
	KUNIT_CASE(rev0_permissive_responder),
	KUNIT_CASE(rev0_nonpermissive_initiator),
	KUNIT_CASE(default_policy),
	KUNIT_CASE(rev2_request_enhanced),
	KUNIT_CASE(rev0_request_forces_m_c),
	KUNIT_CASE(responder_echoes_rev),
	KUNIT_CASE(rev2_enhanced_exchange),
	KUNIT_CASE_PARAM(rtr_preference, rtr_gen_params),
	KUNIT_CASE(rev2_no_common_rtr),
	KUNIT_CASE(rev2_reply_checks),
	KUNIT_CASE(rev2_read_rtr_needs_ird),
	KUNIT_CASE(rev_mismatch),
	KUNIT_CASE(rev_unsupported),
	KUNIT_CASE(rev_on_header_alone),
	KUNIT_CASE(reject_flow),
	KUNIT_CASE(reject_rev2_skips_rtr),
	KUNIT_CASE(crc_either_side),
	KUNIT_CASE(markers_per_direction),
	KUNIT_CASE(request_r_ignored),
	KUNIT_CASE(reply_pd_limit),
	KUNIT_CASE_PARAM(responder_revs, revs_gen_params),
	KUNIT_CASE(revs_default),
	KUNIT_CASE(revs_checked_first),
	{}
};

static struct kunit_suite mpa_negotiate_suite = {
	.name = "mpa_negotiate",
	.test_cases = mpa_negotiate_cases,
};

kunit_test_suite(mpa_negotiate_suite);
