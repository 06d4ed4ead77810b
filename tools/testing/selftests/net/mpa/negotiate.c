// SPDX-License-Identifier: GPL-2.0
/*
 * Two MPA sockets against each other: every Appendix C cell (M bits,
 * permissive or not, Rev 0 initiators), every M and C combination, Rev 2
 * IRD/ORD and peer-to-peer RTR, reject in both directions with passthrough
 * after it, Responder/Responder and Initiator/Initiator starts, and MULPDU
 * from the current MSS.
 */
#include <signal.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_TIMEOUT	8000
#define T_SHORT		300
#define T_WAIT		10000

/*
 * Run the exchange: @i non-blocking initiator, @r blocking responder that
 * answers with @answer. Returns the events poll reports on the initiator
 * once its startup phase is over (-1 if it is not, in time); *rc and *err
 * get the responder's MPA_START outcome.
 */
static int exchange_nonblocking(struct __test_metadata *_metadata, int i,
				int r, int answer, const void *pd, size_t len,
				int *rc, int *err)
{
	ASSERT_EQ(0, t_nonblock(i));
	EXPECT_EQ(-1, mpa_start(i));
	EXPECT_EQ(EINPROGRESS, errno);
	*rc = mpa_start(r);
	*err = *rc ? errno : 0;
	if (*rc)
		t_why(r, *err);
	if (!*rc && answer)
		EXPECT_EQ(0, mpa_answer(r, answer, pd, len));
	return t_wait_startup(i, T_WAIT);
}

/* The same, accepted with @pd: both ends get to the end of it. */
static void accept_nonblocking(struct __test_metadata *_metadata, int i,
			       int r, const void *pd, size_t len)
{
	int ev, rc, err;

	ev = exchange_nonblocking(_metadata, i, r, MPA_ACCEPT, pd, len, &rc,
				  &err);
	ASSERT_EQ(0, rc);
	ASSERT_LE(0, ev);
}

/* Appendix C, Figure 16: X/Y = Markers the Initiator/Responder receives. */
FIXTURE(appc)
{
	int i;
	int r;
};

FIXTURE_VARIANT(appc)
{
	int family;
	int init_rev;
	int init_perm, init_m;
	int resp_perm, resp_m;
	bool ok;
	int rev;
	int x, y;
	__u32 init_reason, resp_reason;
};

#define IETF(name, fam, ip, im, rp, rm)					\
	FIXTURE_VARIANT_ADD(appc, name)					\
	{								\
		.family = fam, .init_rev = 1,				\
		.init_perm = ip, .init_m = im,				\
		.resp_perm = rp, .resp_m = rm,				\
		.ok = true, .rev = 1, .x = im, .y = rm,			\
	}

/*
 * Initiator non-permissive (n) or permissive (p), M; the same for the
 * Responder: V=1 in every IETF cell, Markers as each side asked.
 */
IETF(in0_rn0, AF_INET, 0, 0, 0, 0);
IETF(in0_rn1, AF_INET6, 0, 0, 0, 1);
IETF(in0_rp0, AF_INET, 0, 0, 1, 0);
IETF(in0_rp1, AF_INET6, 0, 0, 1, 1);
IETF(in1_rn0, AF_INET, 0, 1, 0, 0);
IETF(in1_rn1, AF_INET6, 0, 1, 0, 1);
IETF(in1_rp0, AF_INET, 0, 1, 1, 0);
IETF(in1_rp1, AF_INET6, 0, 1, 1, 1);
IETF(ip0_rn0, AF_INET, 1, 0, 0, 0);
IETF(ip0_rn1, AF_INET6, 1, 0, 0, 1);
IETF(ip0_rp0, AF_INET, 1, 0, 1, 0);
IETF(ip0_rp1, AF_INET6, 1, 0, 1, 1);
IETF(ip1_rn0, AF_INET, 1, 1, 0, 0);
IETF(ip1_rn1, AF_INET6, 1, 1, 0, 1);
IETF(ip1_rp0, AF_INET, 1, 1, 1, 0);
IETF(ip1_rp1, AF_INET6, 1, 1, 1, 1);

/* An (upgraded) RDMAC initiator: Rev 0, M=1, C=1. */
FIXTURE_VARIANT_ADD(appc, rdmac_rn0)
{
	.family = AF_INET, .init_rev = 0, .init_m = 1,
	.resp_perm = 0, .resp_m = 0, .ok = false,
	.init_reason = MPA_REASON_REV_MISMATCH,
	.resp_reason = MPA_REASON_REV0,
};

FIXTURE_VARIANT_ADD(appc, rdmac_rn1)
{
	.family = AF_INET6, .init_rev = 0, .init_m = 1,
	.resp_perm = 0, .resp_m = 1, .ok = false,
	.init_reason = MPA_REASON_REV_MISMATCH,
	.resp_reason = MPA_REASON_REV0,
};

/* A permissive responder answers Rev 0 with M=1 even if it wanted M=0. */
FIXTURE_VARIANT_ADD(appc, rdmac_rp0)
{
	.family = AF_INET, .init_rev = 0, .init_m = 1,
	.resp_perm = 1, .resp_m = 0, .ok = true, .rev = 0, .x = 1, .y = 1,
};

FIXTURE_VARIANT_ADD(appc, rdmac_rp1)
{
	.family = AF_INET6, .init_rev = 0, .init_m = 1,
	.resp_perm = 1, .resp_m = 1, .ok = true, .rev = 0, .x = 1, .y = 1,
};

FIXTURE_SETUP(appc)
{
	const FIXTURE_VARIANT(appc) *v = variant;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair(v->family, &self->i, &self->r));
	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_REVISION, v->init_rev));
	ASSERT_EQ(0, mpa_set(self->i, MPA_PERMISSIVE, v->init_perm));
	ASSERT_EQ(0, mpa_set(self->i, MPA_MARKERS, v->init_m));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->r, MPA_PERMISSIVE, v->resp_perm));
	ASSERT_EQ(0, mpa_set(self->r, MPA_MARKERS, v->resp_m));
}

FIXTURE_TEARDOWN(appc)
{
	close(self->i);
	close(self->r);
}

static void check_cell(struct __test_metadata *_metadata,
		       const FIXTURE_VARIANT(appc) *v, int i, int r)
{
	struct mpa_frame_info fi;
	struct mpa_result res;

	if (!v->ok) {
		EXPECT_MPA_STATE(i, MPA_STATE_FAILED);
		EXPECT_MPA_STATE(r, MPA_STATE_FAILED);
		EXPECT_MPA_ERROR(i, MPA_ERR_STARTUP, v->init_reason, EPROTO);
		EXPECT_MPA_ERROR(r, MPA_ERR_STARTUP, v->resp_reason, EPROTO);
		return;
	}
	EXPECT_MPA_STATE(i, MPA_STATE_FULL);
	EXPECT_MPA_STATE(r, MPA_STATE_FULL);

	/* Initiator: sends Markers if the Responder receives them (Y). */
	t_get_result(_metadata, i, &res);
	EXPECT_EQ(v->rev, res.revision);
	EXPECT_EQ((v->y ? MPA_RESULT_TX_MARKERS : 0) |
		  (v->x ? MPA_RESULT_RX_MARKERS : 0) | MPA_RESULT_CRC,
		  res.flags);
	EXPECT_EQ(MPA_ROLE_INITIATOR, res.role);
	EXPECT_MULPDU(i, res.mulpdu, v->y);
	t_get_result(_metadata, r, &res);
	EXPECT_EQ(v->rev, res.revision);
	EXPECT_EQ((v->x ? MPA_RESULT_TX_MARKERS : 0) |
		  (v->y ? MPA_RESULT_RX_MARKERS : 0) | MPA_RESULT_CRC |
		  MPA_RESULT_TX_HELD, res.flags);
	EXPECT_EQ(MPA_ROLE_RESPONDER, res.role);
	EXPECT_MULPDU(r, res.mulpdu, v->x);

	/* The frames as each side received them. */
	t_get_frame(_metadata, r, &fi);
	EXPECT_EQ(v->init_rev, fi.revision);
	EXPECT_EQ((v->init_m ? MPA_FRAME_MARKERS : 0) | MPA_FRAME_CRC,
		  fi.flags);
	t_get_frame(_metadata, i, &fi);
	EXPECT_EQ(v->rev, fi.revision);
	EXPECT_EQ((v->y ? MPA_FRAME_MARKERS : 0) | MPA_FRAME_CRC, fi.flags);
}

TEST_F(appc, nonblocking_initiator)
{
	int ev, rc, err;

	ev = exchange_nonblocking(_metadata, self->i, self->r, MPA_ACCEPT,
				  NULL, 0, &rc, &err);
	if (variant->ok) {
		EXPECT_EQ(0, rc);
		EXPECT_EQ(POLLOUT, ev & (POLLOUT | POLLERR));
	} else {
		EXPECT_EQ(-1, rc);
		EXPECT_EQ(EPROTO, err);
		EXPECT_EQ(POLLERR, ev & POLLERR);
		EXPECT_EQ(EPROTO, t_so_error(self->i));
	}
	check_cell(_metadata, variant, self->i, self->r);
}

TEST_F(appc, blocking_both)
{
	struct t_mpa_peer p = { .fd = self->r, .answer = MPA_ACCEPT };
	int rc, err;

	rc = t_start_against(_metadata, t_mpa_peer_run, &p, self->i, &err);
	if (variant->ok) {
		EXPECT_EQ(0, rc);
		EXPECT_EQ(0, p.start_rc);
		EXPECT_EQ(0, p.answer_rc);
	} else {
		EXPECT_EQ(-1, rc);
		EXPECT_EQ(EPROTO, err);
		EXPECT_EQ(-1, p.start_rc);
		EXPECT_EQ(EPROTO, p.start_errno);
	}
	check_cell(_metadata, variant, self->i, self->r);
}

/*
 * Every M and C combination of both ends (C=0 needs crc-off-allowed): each
 * side sends Markers iff the other's frame had M=1; CRCs are off only if
 * both frames say C=0 (R-7.1.1-9/10), and the Reply says C=1 whenever
 * CRCs are used. Variants: initiator M, C _ responder M, C.
 */
FIXTURE(mc)
{
	struct mpa_t_policy saved;
	int i, r;
};

FIXTURE_VARIANT(mc)
{
	int family;
	int init_m, init_c;
	int resp_m, resp_c;
};

#define MC(name, fam, im, ic, rm, rc)					\
	FIXTURE_VARIANT_ADD(mc, name)					\
	{								\
		.family = fam, .init_m = im, .init_c = ic,		\
		.resp_m = rm, .resp_c = rc,				\
	}

MC(m0c0_m0c0, AF_INET, 0, 0, 0, 0);
MC(m0c0_m0c1, AF_INET6, 0, 0, 0, 1);
MC(m0c0_m1c0, AF_INET6, 0, 0, 1, 0);
MC(m0c0_m1c1, AF_INET, 0, 0, 1, 1);
MC(m0c1_m0c0, AF_INET6, 0, 1, 0, 0);
MC(m0c1_m0c1, AF_INET, 0, 1, 0, 1);
MC(m0c1_m1c0, AF_INET, 0, 1, 1, 0);
MC(m0c1_m1c1, AF_INET6, 0, 1, 1, 1);
MC(m1c0_m0c0, AF_INET6, 1, 0, 0, 0);
MC(m1c0_m0c1, AF_INET, 1, 0, 0, 1);
MC(m1c0_m1c0, AF_INET, 1, 0, 1, 0);
MC(m1c0_m1c1, AF_INET6, 1, 0, 1, 1);
MC(m1c1_m0c0, AF_INET, 1, 1, 0, 0);
MC(m1c1_m0c1, AF_INET6, 1, 1, 0, 1);
MC(m1c1_m1c0, AF_INET6, 1, 1, 1, 0);
MC(m1c1_m1c1, AF_INET, 1, 1, 1, 1);

FIXTURE_SETUP(mc)
{
	self->i = self->r = -1;
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_policy_get(&self->saved));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->i, &self->r));
}

FIXTURE_TEARDOWN_PARENT(mc)
{
	mpa_policy_set(&self->saved);
	close(self->i);
	close(self->r);
}

TEST_F(mc, negotiate)
{
	const FIXTURE_VARIANT(mc) *v = variant;
	__u8 crc = v->init_c || v->resp_c ? MPA_RESULT_CRC : 0;
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_MARKERS, v->init_m));
	ASSERT_EQ(0, mpa_set(self->i, MPA_CRC, v->init_c));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->r, MPA_MARKERS, v->resp_m));
	ASSERT_EQ(0, mpa_set(self->r, MPA_CRC, v->resp_c));
	accept_nonblocking(_metadata, self->i, self->r, NULL, 0);
	EXPECT_MPA_STATE(self->i, MPA_STATE_FULL);
	EXPECT_MPA_STATE(self->r, MPA_STATE_FULL);

	t_get_result(_metadata, self->i, &res);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ((v->resp_m ? MPA_RESULT_TX_MARKERS : 0) |
		  (v->init_m ? MPA_RESULT_RX_MARKERS : 0) | crc, res.flags);
	EXPECT_MULPDU(self->i, res.mulpdu, v->resp_m);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ((v->init_m ? MPA_RESULT_TX_MARKERS : 0) |
		  (v->resp_m ? MPA_RESULT_RX_MARKERS : 0) | crc |
		  MPA_RESULT_TX_HELD, res.flags);
	EXPECT_MULPDU(self->r, res.mulpdu, v->init_m);

	/* The Request as sent: the initiator's M and C. */
	t_get_frame(_metadata, self->r, &fi);
	EXPECT_EQ((v->init_m ? MPA_FRAME_MARKERS : 0) |
		  (v->init_c ? MPA_FRAME_CRC : 0), fi.flags);
	/* The Reply: the responder's M, C=1 whenever CRCs are used. */
	t_get_frame(_metadata, self->i, &fi);
	EXPECT_EQ((v->resp_m ? MPA_FRAME_MARKERS : 0) |
		  (crc ? MPA_FRAME_CRC : 0), fi.flags);
}

/* Two module sockets, IPv4 and IPv6. */
FIXTURE(pair)
{
	int i;
	int r;
};

FIXTURE_VARIANT(pair)
{
	int family;
};

FIXTURE_VARIANT_ADD(pair, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(pair, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(pair)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->i, &self->r));
}

FIXTURE_TEARDOWN(pair)
{
	close(self->i);
	close(self->r);
}

static void check_passthrough(struct __test_metadata *_metadata, int a,
			      int b)
{
	t_flow(_metadata, a, b, "ping", 4, T_WAIT);
	t_flow(_metadata, b, a, "pong", 4, T_WAIT);
	EXPECT_TRUE(t_quiet(a, b));
	EXPECT_TRUE(t_quiet(b, a));
}

static void check_reject(struct __test_metadata *_metadata, int i, int r)
{
	struct mpa_frame_info fi;
	char buf[16];

	EXPECT_MPA_STATE(i, MPA_STATE_REJECTED);
	EXPECT_MPA_STATE(r, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(i, MPA_ERR_NONE, MPA_REASON_REJECTED, ECONNREFUSED);
	t_get_frame(_metadata, i, &fi);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_REJECT, fi.flags);
	ASSERT_EQ(4, mpa_peer_pd(i, buf, sizeof(buf)));
	EXPECT_BYTES("busy", buf, 4);
	check_passthrough(_metadata, i, r);
}

TEST_F(pair, reject_nonblocking)
{
	int ev, rc, err;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ev = exchange_nonblocking(_metadata, self->i, self->r, MPA_REJECT,
				  "busy", 4, &rc, &err);
	ASSERT_EQ(0, rc);
	/*
	 * Over, so writable; refused, as a connect() is: EPOLLERR and
	 * ECONNREFUSED in SO_ERROR (it said EPOLLOUT alone, SO_ERROR 0, and
	 * a connect()-style caller took the reject for success); no stream
	 * octet yet, so not readable.
	 */
	EXPECT_EQ(POLLOUT | POLLERR, ev);
	EXPECT_EQ(ECONNREFUSED, t_so_error(self->i));
	check_reject(_metadata, self->i, self->r);
}

TEST_F(pair, reject_blocking)
{
	struct t_mpa_peer p = {
		.fd = self->r, .answer = MPA_REJECT, .pd = "busy", .pd_len = 4,
	};
	int err;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	EXPECT_EQ(-1, t_start_against(_metadata, t_mpa_peer_run, &p, self->i,
				      &err));
	EXPECT_EQ(ECONNREFUSED, err);
	/* the blocking call told it: no error left on the socket */
	EXPECT_EQ(0, t_so_error(self->i));
	EXPECT_EQ(0, p.start_rc);
	EXPECT_EQ(0, p.answer_rc);
	check_reject(_metadata, self->i, self->r);
}

/* The initiator's side of a reject: it closes, the responder sees EOF. */
TEST_F(pair, reject_then_initiator_closes)
{
	char c;
	int ev, rc, err;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ev = exchange_nonblocking(_metadata, self->i, self->r, MPA_REJECT,
				  "busy", 4, &rc, &err);
	ASSERT_EQ(0, rc);
	ASSERT_LE(0, ev);
	EXPECT_MPA_STATE(self->i, MPA_STATE_REJECTED);
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	EXPECT_EQ(0, t_wait_eof(self->r, T_WAIT));
	/* Half-closed is still plain TCP: the other way works. */
	ASSERT_EQ(1, t_send(self->r, "z", 1));
	ASSERT_EQ(1, t_read(self->i, &c, 1, T_WAIT));
	EXPECT_EQ('z', c);
}

TEST_F(pair, private_data_both_ways)
{
	uint8_t a[MPA_MAX_PRIVATE_DATA], b[MPA_MAX_PRIVATE_DATA];
	uint8_t got[MPA_MAX_PRIVATE_DATA + 8];
	socklen_t len;

	t_pattern(a, sizeof(a), 10);
	t_pattern(b, sizeof(b), 11);
	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_pd(self->i, a, sizeof(a)));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	accept_nonblocking(_metadata, self->i, self->r, b, sizeof(b));
	ASSERT_EQ(sizeof(a), mpa_peer_pd(self->r, got, sizeof(got)));
	EXPECT_BYTES(a, got, sizeof(a));
	ASSERT_EQ(sizeof(b), mpa_peer_pd(self->i, got, sizeof(got)));
	EXPECT_BYTES(b, got, sizeof(b));
	/* The startup's buffers are gone: what it reported stays readable */
	EXPECT_MPA_STATE(self->i, MPA_STATE_FULL);
	EXPECT_MPA_STATE(self->r, MPA_STATE_FULL);
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->i, SOL_MPA, MPA_PRIVATE_DATA, got, &len));
	ASSERT_EQ(sizeof(a), len);
	EXPECT_BYTES(a, got, sizeof(a));
}

/*
 * MPA_REVISION is the Initiator's (mpa.rst): a Responder given 0 (set for
 * both roles alike, or before the role changed) answers by the policy's
 * responder-revs and by MPA_PERMISSIVE, as any Responder. A Rev 1 Request
 * gets a Rev 1 Reply, Markers as asked: not the Rev 0 Reply, M=1 and C=1,
 * of an RDMA Consortium Responder, which the Initiator refuses.
 */
TEST_F(pair, responder_revision_ignored)
{
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_MARKERS, 0));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->r, MPA_REVISION, 0));
	ASSERT_EQ(0, mpa_set(self->r, MPA_MARKERS, 0));
	accept_nonblocking(_metadata, self->i, self->r, NULL, 0);
	EXPECT_MPA_STATE(self->i, MPA_STATE_FULL);
	EXPECT_MPA_STATE(self->r, MPA_STATE_FULL);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ(0, res.flags & (MPA_RESULT_TX_MARKERS |
				  MPA_RESULT_RX_MARKERS));
	t_get_result(_metadata, self->i, &res);
	EXPECT_EQ(1, res.revision);
}

TEST_F(pair, rev2_private_data_both_ways)
{
	uint8_t a[MPA_V2_PRIVATE_DATA], b[MPA_V2_PRIVATE_DATA];
	uint8_t got[MPA_MAX_PRIVATE_DATA + 8];
	struct mpa_frame_info fi;

	t_pattern(a, sizeof(a), 12);
	t_pattern(b, sizeof(b), 13);
	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_pd(self->i, a, sizeof(a)));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	accept_nonblocking(_metadata, self->i, self->r, b, sizeof(b));
	t_get_frame(_metadata, self->r, &fi);
	EXPECT_EQ(MPA_V2_PRIVATE_DATA, fi.pd_len);
	ASSERT_EQ(sizeof(a), mpa_peer_pd(self->r, got, sizeof(got)));
	EXPECT_BYTES(a, got, sizeof(a));
	t_get_frame(_metadata, self->i, &fi);
	EXPECT_EQ(MPA_V2_PRIVATE_DATA, fi.pd_len);
	ASSERT_EQ(sizeof(b), mpa_peer_pd(self->i, got, sizeof(got)));
	EXPECT_BYTES(b, got, sizeof(b));
}

/* Rev 2 peer-to-peer: IRD/ORD cross-mapped on both ends, one RTR. */
TEST_F(pair, rev2_peer_to_peer)
{
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(self->i, 10, 3, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ | MPA_RTR_SEND));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->r, 2, 7, 0, MPA_RTR_ALL));
	accept_nonblocking(_metadata, self->i, self->r, NULL, 0);

	t_get_frame(_metadata, self->r, &fi);
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED | MPA_FRAME_PEER_TO_PEER,
		  fi.flags);
	EXPECT_EQ(MPA_RTR_READ | MPA_RTR_SEND, fi.rtr);
	EXPECT_EQ(10, fi.ird);
	EXPECT_EQ(3, fi.ord);
	EXPECT_EQ(0, fi.pd_len);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED |
		  MPA_RESULT_PEER_TO_PEER | MPA_RESULT_TX_HELD, res.flags);
	EXPECT_EQ(MPA_RTR_READ, res.rtr);
	EXPECT_EQ(2, res.ird);		/* min(2, their ord 3) */
	EXPECT_EQ(7, res.ord);		/* min(7, their ird 10) */

	t_get_frame(_metadata, self->i, &fi);
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED | MPA_FRAME_PEER_TO_PEER,
		  fi.flags);
	EXPECT_EQ(MPA_RTR_READ, fi.rtr);
	EXPECT_EQ(2, fi.ird);
	EXPECT_EQ(7, fi.ord);
	t_get_result(_metadata, self->i, &res);
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED |
		  MPA_RESULT_PEER_TO_PEER, res.flags);
	EXPECT_EQ(MPA_RTR_READ, res.rtr);
	EXPECT_EQ(7, res.ird);		/* min(10, their ord 7) */
	EXPECT_EQ(2, res.ord);		/* min(3, their ird 2) */
}

/*
 * No RTR type in common (RFC 6581): the Responder rejects, R=1
 * (R-7.1.2-5, R-7.1.2-18), and both leave MPA with TCP open (R-7.1.2-7,
 * R-7.1.2-13): the Initiator sees a reject, not a closed connection; the
 * Responder's MPA_START says so too, and the plain stream flows again.
 */
TEST_F(pair, rev2_no_common_rtr)
{
	struct mpa_frame_info fi;
	int ev, rc, err;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(self->i, 1, 1, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_SEND));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->r, 1, 1, 0,
				 MPA_RTR_WRITE | MPA_RTR_READ));
	ev = exchange_nonblocking(_metadata, self->i, self->r, MPA_ACCEPT,
				  NULL, 0, &rc, &err);
	EXPECT_EQ(-1, rc);
	EXPECT_EQ(ECONNREFUSED, err);
	EXPECT_MPA_STATE(self->r, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(self->r, MPA_ERR_NONE, MPA_REASON_NO_RTR,
			 ECONNREFUSED);
	/* the blocking MPA_START reported it: no error left on the socket */
	EXPECT_EQ(0, t_so_error(self->r));

	EXPECT_EQ(POLLOUT | POLLERR, ev & (POLLOUT | POLLERR));
	EXPECT_EQ(ECONNREFUSED, t_so_error(self->i));
	EXPECT_MPA_STATE(self->i, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(self->i, MPA_ERR_NONE, MPA_REASON_REJECTED,
			 ECONNREFUSED);
	t_get_frame(_metadata, self->i, &fi);
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_REJECT | MPA_FRAME_ENHANCED |
		  MPA_FRAME_PEER_TO_PEER, fi.flags);
	EXPECT_EQ(0, fi.rtr);
	EXPECT_EQ(0, fi.pd_len);

	/* TCP stayed open: plain octets both ways */
	ASSERT_EQ(0, t_blocking(self->i));
	check_passthrough(_metadata, self->i, self->r);
}

/* The same Responder, non-blocking: EPOLLERR and SO_ERROR tell it. */
TEST_F(pair, rev2_no_common_rtr_nonblocking)
{
	uint8_t req[T_HDR + 4];
	int ev;

	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->r, 1, 1, 0, MPA_RTR_WRITE));
	t_start_nonblock(_metadata, self->r);
	/* self->i is plain TCP here: it writes the Request itself */
	t_frame_v2(req, false, T_C, true, MPA_RTR_SEND, 4, 4, NULL, 0);
	ASSERT_EQ((ssize_t)sizeof(req), t_send(self->i, req, sizeof(req)));
	ev = t_poll(self->r, POLLIN, T_WAIT);
	EXPECT_EQ(POLLERR, ev & POLLERR) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(ECONNREFUSED, t_so_error(self->r));
	EXPECT_EQ(0, t_so_error(self->r));
	EXPECT_MPA_STATE(self->r, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(self->r, MPA_ERR_NONE, MPA_REASON_NO_RTR,
			 ECONNREFUSED);
}

/*
 * Responder/Responder: nobody sends a Request; both time out (RFC 5044
 * rule 8). The first to give up closes with a FIN, which may reach the
 * other before its own timer fires: that one then reports the close.
 */
/* Both ends in @role, MPA_TIMEOUT @ms. */
static void same_role(struct __test_metadata *_metadata, int i, int r,
		      int role, int ms)
{
	ASSERT_EQ(0, mpa_config(i, role, ms));
	ASSERT_EQ(0, mpa_config(r, role, ms));
}

/* A Responder that nobody sent a Request: its timer, or the other's FIN. */
static void gave_up(struct __test_metadata *_metadata,
		    const struct mpa_error_info *e)
{
	if (e->reason == MPA_REASON_TIMEOUT) {
		EXPECT_EQ(MPA_ERR_STARTUP, e->code);
		EXPECT_EQ(ETIMEDOUT, e->errnum);
	} else {
		EXPECT_EQ(MPA_REASON_PEER_CLOSED, e->reason);
		EXPECT_EQ(ECONNRESET, e->errnum);
	}
}

TEST_F(pair, responder_responder)
{
	struct mpa_error_info ea, eb;
	long t0;

	same_role(_metadata, self->i, self->r, MPA_ROLE_RESPONDER, T_SHORT);
	t0 = t_now_ms();
	t_start_nonblock(_metadata, self->i);
	t_start_nonblock(_metadata, self->r);
	EXPECT_POLLERR(self->i, T_WAIT);
	EXPECT_POLLERR(self->r, T_WAIT);
	EXPECT_LE(T_SHORT - 50, t_now_ms() - t0);
	EXPECT_MPA_STATE(self->i, MPA_STATE_FAILED);
	EXPECT_MPA_STATE(self->r, MPA_STATE_FAILED);
	ASSERT_EQ(0, mpa_getstruct(self->i, MPA_ERROR, &ea, sizeof(ea)));
	ASSERT_EQ(0, mpa_getstruct(self->r, MPA_ERROR, &eb, sizeof(eb)));
	/* At least one timed out; each either timed out or saw that FIN. */
	EXPECT_TRUE(ea.reason == MPA_REASON_TIMEOUT ||
		    eb.reason == MPA_REASON_TIMEOUT);
	gave_up(_metadata, &ea);
	gave_up(_metadata, &eb);
}

/*
 * The same, blocking: both give up, each by its own timer or by the
 * other's FIN, and at least one by its timer.
 */
TEST_F(pair, responder_responder_blocking)
{
	struct t_mpa_peer p = { .fd = self->r };
	int err;

	same_role(_metadata, self->i, self->r, MPA_ROLE_RESPONDER, T_SHORT);
	EXPECT_EQ(-1, t_start_against(_metadata, t_mpa_peer_run, &p, self->i,
				      &err));
	EXPECT_TRUE(err == ETIMEDOUT || err == ECONNRESET);
	EXPECT_EQ(-1, p.start_rc);
	EXPECT_TRUE(p.start_errno == ETIMEDOUT || p.start_errno == ECONNRESET);
	EXPECT_TRUE(err == ETIMEDOUT || p.start_errno == ETIMEDOUT);
	EXPECT_LE(T_SHORT - 50, p.start_ms);
}

/* Initiator/Initiator: each receives the other's Request (rule 8). */
static void both_initiators_failed(struct __test_metadata *_metadata, int i,
				   int r)
{
	EXPECT_MPA_STATE(i, MPA_STATE_FAILED);
	EXPECT_MPA_STATE(r, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(i, MPA_ERR_STARTUP, MPA_REASON_INIT_INIT, EPROTO);
	EXPECT_MPA_ERROR(r, MPA_ERR_STARTUP, MPA_REASON_INIT_INIT, EPROTO);
}

TEST_F(pair, initiator_initiator)
{
	int rc;

	same_role(_metadata, self->i, self->r, MPA_ROLE_INITIATOR, T_TIMEOUT);
	t_start_nonblock(_metadata, self->i);
	/* The other's Request may already be there: then at once. */
	ASSERT_EQ(0, t_nonblock(self->r));
	rc = mpa_start(self->r);
	EXPECT_EQ(-1, rc);
	EXPECT_TRUE(errno == EINPROGRESS || errno == EPROTO);
	EXPECT_POLLERR(self->i, T_WAIT);
	EXPECT_POLLERR(self->r, T_WAIT);
	both_initiators_failed(_metadata, self->i, self->r);
}

TEST_F(pair, initiator_initiator_blocking)
{
	struct t_mpa_peer p = { .fd = self->r };
	int err;

	same_role(_metadata, self->i, self->r, MPA_ROLE_INITIATOR, T_TIMEOUT);
	EXPECT_EQ(-1, t_start_against(_metadata, t_mpa_peer_run, &p, self->i,
				      &err));
	EXPECT_EQ(EPROTO, err);
	EXPECT_EQ(-1, p.start_rc);
	EXPECT_EQ(EPROTO, p.start_errno);
	both_initiators_failed(_metadata, self->i, self->r);
}

/*
 * MULPDU from the current MSS (RFC 5044 4.5), by the Markers we send (the
 * peer's M): a listener with TCP_MAXSEG 1460 before the handshake.
 */
FIXTURE(mss)
{
	int i;
	int r;
};

FIXTURE_VARIANT(mss)
{
	int family;
	int init_m, resp_m;
};

FIXTURE_VARIANT_ADD(mss, m0_m0)
{
	.family = AF_INET, .init_m = 0, .resp_m = 0,
};

FIXTURE_VARIANT_ADD(mss, m0_m1)
{
	.family = AF_INET6, .init_m = 0, .resp_m = 1,
};

FIXTURE_VARIANT_ADD(mss, m1_m0)
{
	.family = AF_INET, .init_m = 1, .resp_m = 0,
};

FIXTURE_VARIANT_ADD(mss, m1_m1)
{
	.family = AF_INET6, .init_m = 1, .resp_m = 1,
};

FIXTURE_SETUP(mss)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair_mss(variant->family, 1460, &self->i,
				      &self->r));
}

FIXTURE_TEARDOWN(mss)
{
	close(self->i);
	close(self->r);
}

/* The worked numbers of requirements 2.7, to check t_mulpdu() itself. */
static uint32_t known_mulpdu(int emss, bool markers)
{
	switch (emss) {
	case 1460:
		return markers ? 1442 : 1454;
	case 1448:	/* 1460 less the timestamp option */
		return markers ? 1430 : 1442;
	}
	return 0;
}

TEST_F(mss, mulpdu)
{
	struct mpa_result res;
	int emss;

	ASSERT_EQ(0, mpa_config(self->i, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->i, MPA_MARKERS, variant->init_m));
	ASSERT_EQ(0, mpa_config(self->r, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->r, MPA_MARKERS, variant->resp_m));
	accept_nonblocking(_metadata, self->i, self->r, NULL, 0);

	/* The initiator sends Markers if the responder asked (its M). */
	emss = t_emss(self->i);
	TH_LOG("initiator EMSS %d", emss);
	ASSERT_TRUE(emss == 1460 || emss == 1448);
	t_get_result(_metadata, self->i, &res);
	EXPECT_EQ(t_mulpdu(emss, variant->resp_m), res.mulpdu);
	EXPECT_EQ(known_mulpdu(emss, variant->resp_m), res.mulpdu);

	emss = t_emss(self->r);
	TH_LOG("responder EMSS %d", emss);
	ASSERT_TRUE(emss == 1460 || emss == 1448);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(t_mulpdu(emss, variant->init_m), res.mulpdu);
	EXPECT_EQ(known_mulpdu(emss, variant->init_m), res.mulpdu);
}

TEST_HARNESS_MAIN
