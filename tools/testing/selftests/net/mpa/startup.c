// SPDX-License-Identifier: GPL-2.0
/*
 * MPA startup phase through SOL_MPA, against a raw peer: a plain TCP socket
 * on the other end that writes and reads exact bytes. Both roles, IPv4 and
 * IPv6, blocking and non-blocking, Rev 1, Rev 2 and Rev 0, reject and
 * passthrough, timeouts, and the configuration options themselves.
 */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <linux/sockios.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_TIMEOUT	8000	/* MPA_TIMEOUT where no timeout is expected */
#define T_SHORT		300	/* MPA_TIMEOUT where it is the point */
#define T_WAIT		10000	/* how long a test waits for an event */

/* Options: a connected pair with MPA attached on one end. */
FIXTURE(opt)
{
	int fd;
	int peer;
};

FIXTURE_SETUP(opt)
{
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &self->fd, &self->peer));
	ASSERT_EQ(0, mpa_attach(self->fd));
}

FIXTURE_TEARDOWN(opt)
{
	close(self->fd);
	close(self->peer);
}

TEST_F(opt, defaults)
{
	char pd[MPA_MAX_PRIVATE_DATA];
	struct mpa_t_policy pol;
	struct mpa_enhanced e;
	socklen_t len = sizeof(pd);

	/* The namespace's policy gives the defaults (policy.c varies it). */
	ASSERT_EQ(0, mpa_policy_get(&pol));
	EXPECT_MPA_STATE(self->fd, MPA_STATE_STREAMING);
	EXPECT_EQ(0, mpa_get(self->fd, MPA_ROLE));
	EXPECT_EQ(pol.markers, mpa_get(self->fd, MPA_MARKERS));
	/* R-4.4-5: CRCs on, whatever the policy allows */
	EXPECT_EQ(1, mpa_get(self->fd, MPA_CRC));
	EXPECT_EQ(pol.initiator_rev, mpa_get(self->fd, MPA_REVISION));
	EXPECT_EQ(pol.permissive, mpa_get(self->fd, MPA_PERMISSIVE));
	EXPECT_EQ(pol.timeout_ms, mpa_get(self->fd, MPA_TIMEOUT));
	EXPECT_LT(0, mpa_get(self->fd, MPA_TIMEOUT));
	ASSERT_EQ(0, getsockopt(self->fd, SOL_MPA, MPA_PRIVATE_DATA, pd, &len));
	EXPECT_EQ(0, len);
	/* The protocol core's Rev 2 defaults: IRD/ORD 16, every RTR type. */
	ASSERT_EQ(0, mpa_getstruct(self->fd, MPA_ENHANCED, &e, sizeof(e)));
	EXPECT_EQ(16, e.ird);
	EXPECT_EQ(16, e.ord);
	EXPECT_EQ(0, e.flags);
	EXPECT_EQ(MPA_RTR_ALL, e.rtr);
	EXPECT_EQ(0, e.reserved);
}

TEST_F(opt, set_and_get)
{
	uint8_t pd[100], got[MPA_MAX_PRIVATE_DATA];
	struct mpa_enhanced e;
	socklen_t len = sizeof(got);

	t_pattern(pd, sizeof(pd), 1);
	ASSERT_EQ(0, mpa_set(self->fd, MPA_ROLE, MPA_ROLE_INITIATOR));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_MARKERS, 1));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_PERMISSIVE, 1));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_TIMEOUT, 1234));
	ASSERT_EQ(0, mpa_set_enh(self->fd, 5, 0x3fff, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ | MPA_RTR_WRITE));
	ASSERT_EQ(0, mpa_set_pd(self->fd, pd, sizeof(pd)));

	EXPECT_EQ(MPA_ROLE_INITIATOR, mpa_get(self->fd, MPA_ROLE));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_MARKERS));
	EXPECT_EQ(2, mpa_get(self->fd, MPA_REVISION));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_PERMISSIVE));
	EXPECT_EQ(1234, mpa_get(self->fd, MPA_TIMEOUT));
	ASSERT_EQ(0, mpa_getstruct(self->fd, MPA_ENHANCED, &e, sizeof(e)));
	EXPECT_EQ(5, e.ird);
	EXPECT_EQ(0x3fff, e.ord);
	EXPECT_EQ(MPA_ENH_PEER_TO_PEER, e.flags);
	EXPECT_EQ(MPA_RTR_READ | MPA_RTR_WRITE, e.rtr);
	ASSERT_EQ(0, getsockopt(self->fd, SOL_MPA, MPA_PRIVATE_DATA, got, &len));
	ASSERT_EQ(sizeof(pd), len);
	EXPECT_BYTES(pd, got, sizeof(pd));

	/* Back the other way, and the role can still change before start. */
	ASSERT_EQ(0, mpa_set(self->fd, MPA_ROLE, MPA_ROLE_RESPONDER));
	EXPECT_EQ(MPA_ROLE_RESPONDER, mpa_get(self->fd, MPA_ROLE));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_MARKERS, 0));
	EXPECT_EQ(0, mpa_get(self->fd, MPA_MARKERS));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_REVISION, 0));
	EXPECT_EQ(0, mpa_get(self->fd, MPA_REVISION));
	ASSERT_EQ(0, mpa_set_pd(self->fd, NULL, 0));
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->fd, SOL_MPA, MPA_PRIVATE_DATA, got, &len));
	EXPECT_EQ(0, len);
}

TEST_F(opt, exact_optlen)
{
	static const int u32_opts[] = {
		MPA_ROLE, MPA_MARKERS, MPA_CRC, MPA_REVISION, MPA_PERMISSIVE,
		MPA_TIMEOUT,
	};
	struct mpa_enhanced e = { .ird = 1, .ord = 1 };
	uint64_t big = 1;
	__u16 small = 1;
	socklen_t len;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(u32_opts); i++) {
		EXPECT_EQ(-1, setsockopt(self->fd, SOL_MPA, u32_opts[i],
					 &small, sizeof(small)))
			TH_LOG("option %d", u32_opts[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("option %d", u32_opts[i]);
		EXPECT_EQ(-1, setsockopt(self->fd, SOL_MPA, u32_opts[i],
					 &big, sizeof(big)))
			TH_LOG("option %d", u32_opts[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("option %d", u32_opts[i]);
		len = sizeof(small);
		EXPECT_EQ(-1, getsockopt(self->fd, SOL_MPA, u32_opts[i],
					 &small, &len))
			TH_LOG("option %d", u32_opts[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("option %d", u32_opts[i]);
	}
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_MPA, MPA_ENHANCED, &e, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_MPA, MPA_ENHANCED, &e,
				 sizeof(e) + 1));
	EXPECT_EQ(EINVAL, errno);
	/* Nothing was changed by the refused calls. */
	EXPECT_EQ(0, mpa_get(self->fd, MPA_ROLE));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_CRC));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_REVISION));
}

TEST_F(opt, bad_values)
{
	struct mpa_enhanced e = {};

	EXPECT_EQ(-1, mpa_set(self->fd, MPA_ROLE, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set(self->fd, MPA_ROLE, 3));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set(self->fd, MPA_MARKERS, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set(self->fd, MPA_PERMISSIVE, 2));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set(self->fd, MPA_REVISION, 3));
	EXPECT_EQ(EINVAL, errno);
	e.reserved = 1;
	EXPECT_EQ(-1, setsockopt(self->fd, SOL_MPA, MPA_ENHANCED, &e, sizeof(e)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set_enh(self->fd, MPA_IRD_ORD_MAX + 1, 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_set_enh(self->fd, 1, MPA_IRD_ORD_MAX + 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, mpa_get(self->fd, MPA_ROLE));
	EXPECT_EQ(0, mpa_get(self->fd, MPA_MARKERS));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_REVISION));
	EXPECT_LT(0, mpa_get(self->fd, MPA_TIMEOUT));
}

/* MPA_TIMEOUT 0 is no limit (mpa.rst), not a refused value. */
TEST_F(opt, timeout_zero)
{
	ASSERT_EQ(0, mpa_set(self->fd, MPA_TIMEOUT, 0));
	EXPECT_EQ(0, mpa_get(self->fd, MPA_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_TIMEOUT, 1));
	EXPECT_EQ(1, mpa_get(self->fd, MPA_TIMEOUT));
}

TEST_F(opt, private_data_limit)
{
	uint8_t pd[MPA_MAX_PRIVATE_DATA + 1], got[MPA_MAX_PRIVATE_DATA + 8];
	socklen_t len = sizeof(got);

	t_pattern(pd, sizeof(pd), 2);
	EXPECT_EQ(-1, mpa_set_pd(self->fd, pd, MPA_MAX_PRIVATE_DATA + 1));
	EXPECT_EQ(EMSGSIZE, errno);
	ASSERT_EQ(0, mpa_set_pd(self->fd, pd, MPA_MAX_PRIVATE_DATA));
	ASSERT_EQ(0, getsockopt(self->fd, SOL_MPA, MPA_PRIVATE_DATA, got, &len));
	ASSERT_EQ(MPA_MAX_PRIVATE_DATA, len);
	EXPECT_BYTES(pd, got, MPA_MAX_PRIVATE_DATA);
	/* A refused one leaves the one set before. */
	EXPECT_EQ(-1, mpa_set_pd(self->fd, pd + 1, MPA_MAX_PRIVATE_DATA + 1));
	EXPECT_EQ(EMSGSIZE, errno);
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->fd, SOL_MPA, MPA_PRIVATE_DATA, got, &len));
	ASSERT_EQ(MPA_MAX_PRIVATE_DATA, len);
	EXPECT_BYTES(pd, got, MPA_MAX_PRIVATE_DATA);
}

TEST_F(opt, start_needs_role)
{
	EXPECT_EQ(-1, mpa_start(self->fd));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_MPA_STATE(self->fd, MPA_STATE_STREAMING);
	/* Nothing went out, nor goes later. */
	EXPECT_TRUE(t_quiet(self->peer, self->fd));
}

TEST_F(opt, answer_before_start)
{
	EXPECT_EQ(-1, mpa_answer(self->fd, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_answer(self->fd, MPA_REJECT, "x", 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, mpa_set(self->fd, MPA_ROLE, MPA_ROLE_RESPONDER));
	EXPECT_EQ(-1, mpa_answer(self->fd, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_MPA_STATE(self->fd, MPA_STATE_STREAMING);
	EXPECT_TRUE(t_quiet(self->peer, self->fd));
}

TEST_F(opt, peer_data_before_frame)
{
	char buf[MPA_MAX_PRIVATE_DATA];

	EXPECT_EQ(-1, mpa_peer_pd(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(ENODATA, errno);
	ASSERT_EQ(0, mpa_set(self->fd, MPA_ROLE, MPA_ROLE_RESPONDER));
	t_start_nonblock(_metadata, self->fd);
	EXPECT_EQ(-1, mpa_peer_pd(self->fd, buf, sizeof(buf)));
	EXPECT_EQ(ENODATA, errno);
}

/*
 * The policy's crc-off-allowed is flipped: every test puts back what it
 * found.
 */
FIXTURE(crc)
{
	struct mpa_t_policy saved;
	int a, b;
};

FIXTURE_SETUP(crc)
{
	self->a = self->b = -1;
	ASSERT_EQ(0, mpa_policy_get(&self->saved));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, &self->a, &self->b));
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN_PARENT(crc)
{
	mpa_policy_set(&self->saved);
	close(self->a);
	close(self->b);
}

TEST_F(crc, off_needs_permission)
{
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 0));
	ASSERT_EQ(0, mpa_attach(self->a));
	EXPECT_EQ(-1, mpa_set(self->a, MPA_CRC, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(1, mpa_get(self->a, MPA_CRC));
	/* Asking for CRCs needs no permission. */
	EXPECT_EQ(0, mpa_set(self->a, MPA_CRC, 1));
	EXPECT_EQ(-1, mpa_set(self->a, MPA_CRC, 2));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	EXPECT_EQ(0, mpa_set(self->a, MPA_CRC, 0));
	EXPECT_EQ(0, mpa_get(self->a, MPA_CRC));
}

/*
 * C on the wire: an initiator with C=0 sends C=0; the responder says C=1
 * in its Reply whenever CRCs will be used (@rep_flags: the Reply's).
 */
static void crc_initiator(struct __test_metadata *_metadata, int m, int r,
			  uint8_t rep_flags, bool crc_on)
{
	uint8_t exp[T_HDR], rep[T_HDR];
	struct mpa_result res;

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(m, MPA_CRC, 0));
	t_start_nonblock(_metadata, m);
	t_frame(exp, false, 0, 1, NULL, 0);
	t_expect_read(_metadata, r, exp, T_HDR, T_WAIT);
	t_frame(rep, true, rep_flags, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(r, rep, T_HDR));
	ASSERT_LE(0, t_wait_startup(m, T_WAIT));
	EXPECT_MPA_STATE(m, MPA_STATE_FULL);
	t_get_result(_metadata, m, &res);
	EXPECT_EQ(crc_on ? MPA_RESULT_CRC : 0, res.flags & MPA_RESULT_CRC);
}

/* A Reply with C=0 too: no CRCs. */
TEST_F(crc, wire_bits_initiator)
{
	crc_initiator(_metadata, self->a, self->b, 0, false);
}

TEST_F(crc, wire_bits_initiator_reply_c1)
{
	crc_initiator(_metadata, self->a, self->b, T_C, true);
}

static void crc_responder(struct __test_metadata *_metadata, int m, int r,
			  int our_crc, uint8_t req_flags, uint8_t rep_flags,
			  bool crc_on)
{
	uint8_t req[T_HDR], exp[T_HDR];
	struct mpa_result res;

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(m, MPA_CRC, our_crc));
	t_frame(req, false, req_flags, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(r, req, T_HDR));
	ASSERT_START(m);
	ASSERT_EQ(0, mpa_answer(m, MPA_ACCEPT, NULL, 0));
	t_frame(exp, true, rep_flags, 1, NULL, 0);
	t_expect_read(_metadata, r, exp, T_HDR, T_WAIT);
	ASSERT_EQ(0, mpa_getstruct(m, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(crc_on ? MPA_RESULT_CRC : 0, res.flags & MPA_RESULT_CRC);
}

TEST_F(crc, wire_bits_responder_both_off)
{
	crc_responder(_metadata, self->a, self->b, 0, 0, 0, false);
}

TEST_F(crc, wire_bits_responder_request_c1)
{
	crc_responder(_metadata, self->a, self->b, 0, T_C, T_C, true);
}

TEST_F(crc, wire_bits_responder_we_want_crc)
{
	crc_responder(_metadata, self->a, self->b, 1, 0, T_C, true);
}

/* Both roles against a raw peer, IPv4 and IPv6. */
FIXTURE(raw)
{
	int cli;
	int srv;
};

FIXTURE_VARIANT(raw)
{
	int family;
};

FIXTURE_VARIANT_ADD(raw, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(raw, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(raw)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->cli, &self->srv));
}

FIXTURE_TEARDOWN(raw)
{
	close(self->cli);
	close(self->srv);
}

#define RESP	self->srv	/* the module as responder */
#define RAW_I	self->cli	/* ... and its raw initiator */
#define INIT	self->cli	/* the module as initiator */
#define RAW_R	self->srv	/* ... and its raw responder */

/*
 * The module as initiator @m, blocking, against a raw responder on @raw
 * that reads what @m sends, which must be exactly @exp (@exp_len octets),
 * and answers with @rep: MPA_START must succeed.
 */
static void raw_reply(struct __test_metadata *_metadata, int m, int raw,
		      const void *exp, size_t exp_len, const void *rep,
		      size_t rep_len)
{
	struct t_raw_peer p = { .fd = raw, .rd_len = exp_len, .wr = rep,
				.wr_len = rep_len };
	int rc, err;

	rc = t_start_against(_metadata, t_raw_peer_run, &p, m, &err);
	if (rc)
		t_why(m, err);
	EXPECT_EQ(0, rc);
	ASSERT_EQ((ssize_t)exp_len, p.rd_got);
	EXPECT_BYTES(exp, p.rd, exp_len);
}

/* A Request from the raw peer; the responder's view of it; the Reply. */
TEST_F(raw, responder_accept)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	struct mpa_frame_info fi;
	struct mpa_result res;
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(req, false, T_M | T_C, 1, "hello-req", 9);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);

	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(1, fi.revision);
	EXPECT_EQ(MPA_FRAME_MARKERS | MPA_FRAME_CRC, fi.flags);
	EXPECT_EQ(0, fi.res);
	EXPECT_EQ(0, fi.rtr);
	EXPECT_EQ(9, fi.pd_len);
	ASSERT_EQ(9, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES("hello-req", got, 9);
	/* Nothing is answered before the ULP decides. */
	EXPECT_TRUE(t_nothing_pending(RAW_I));

	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, "ok", 2));
	EXPECT_MPA_STATE(RESP, MPA_STATE_FULL);
	n = t_frame(exp, true, T_C, 1, "ok", 2);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
	EXPECT_TRUE(t_quiet(RAW_I, RESP));

	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ(MPA_RESULT_TX_MARKERS | MPA_RESULT_CRC | MPA_RESULT_TX_HELD,
		  res.flags);
	EXPECT_EQ(0, res.rtr);
	EXPECT_EQ(MPA_ROLE_RESPONDER, res.role);
	EXPECT_MULPDU(RESP, res.mulpdu, true);
	EXPECT_MPA_ERROR(RESP, 0, MPA_REASON_NONE, 0);
	/* The exchange is over. */
	EXPECT_EQ(-1, mpa_start(RESP));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
}

/* The Request was queued before the ULP was even attached. */
TEST_F(raw, responder_request_before_attach)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	size_t n;

	n = t_frame(req, false, T_C, 1, "early", 5);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_EQ(0, t_wait_acked(RAW_I, T_WAIT));
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(RESP, MPA_MARKERS, 1));
	ASSERT_START(RESP);
	ASSERT_EQ(5, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES("early", got, 5);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	n = t_frame(exp, true, T_M | T_C, 1, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
}

/*
 * Delayed startup (RFC 5044 7.1.3): plain stream both ways first, then the
 * Request; not an octet lost or taken twice at the switch.
 */
TEST_F(raw, responder_delayed_startup)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_flow(_metadata, RAW_I, RESP, "<Hello>", 7, T_WAIT);
	t_flow(_metadata, RESP, RAW_I, "<Hello Ack>", 11, T_WAIT);
	EXPECT_MPA_STATE(RESP, MPA_STATE_STREAMING);

	n = t_frame(req, false, T_C, 1, "after", 5);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(5, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES("after", got, 5);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	n = t_frame(exp, true, T_C, 1, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
	EXPECT_TRUE(t_quiet(RAW_I, RESP));
}

TEST_F(raw, initiator_delayed_startup)
{
	uint8_t exp[T_FRAME_MAX], rep[T_HDR];
	size_t n;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(7, t_send(INIT, "<Hello>", 7));
	t_flow(_metadata, RAW_R, INIT, "<Hello Ack>", 11, T_WAIT);
	ASSERT_EQ(0, mpa_set_pd(INIT, "go", 2));
	t_start_nonblock(_metadata, INIT);
	/* The stream octets, then the Request right behind them. */
	n = t_frame(exp + 7, false, T_C, 1, "go", 2);
	memcpy(exp, "<Hello>", 7);
	t_expect_read(_metadata, RAW_R, exp, n + 7, T_WAIT);
	t_frame(rep, true, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_R, rep, T_HDR));
	ASSERT_LE(0, t_wait_startup(INIT, T_WAIT));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
}

/*
 * Blocking responder: MPA_START waits for a Request sent later, once it
 * sleeps in its setsockopt.
 */
TEST_F(raw, responder_blocking_waits)
{
	uint8_t req[T_FRAME_MAX];
	struct t_raw_peer p = { .fd = RAW_I, .wait_tid = gettid(),
				.wait_nr = SYS_setsockopt };
	pthread_t t;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	p.wr = req;
	p.wr_len = t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(0, pthread_create(&t, NULL, t_raw_peer_run, &p));
	EXPECT_START(RESP);
	pthread_join(t, NULL);
	ASSERT_EQ(0, p.wait_rc);
	EXPECT_EQ((ssize_t)p.wr_len, p.wr_done);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
}

static void responder_nonblock(struct __test_metadata *_metadata, int m,
			       int r, bool use_epoll)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	struct t_ready w;
	size_t n;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, m);
	EXPECT_MPA_STATE(m, MPA_STATE_AWAIT_REQUEST);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_EQ(0, t_ready_open(&w, m, use_epoll));
	EXPECT_EQ(0, t_ready_wait(&w, 200));

	n = t_frame(req, false, T_C, 1, "nb", 2);
	ASSERT_EQ(n, t_send(r, req, n));
	EXPECT_EQ(POLLIN, t_ready_wait(&w, T_WAIT));
	t_ready_close(&w);
	EXPECT_MPA_STATE(m, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(2, mpa_peer_pd(m, got, sizeof(got)));
	EXPECT_BYTES("nb", got, 2);
	ASSERT_EQ(0, mpa_answer(m, MPA_ACCEPT, "ack", 3));
	EXPECT_MPA_STATE(m, MPA_STATE_FULL);
	n = t_frame(exp, true, T_C, 1, "ack", 3);
	t_expect_read(_metadata, r, exp, n, T_WAIT);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EISCONN, errno);
}

/*
 * A blocking MPA_START waits at most the socket's timeout, as accept()
 * (a Responder's SO_RCVTIMEO) and connect() (an Initiator's SO_SNDTIMEO)
 * do: then EINPROGRESS, and the exchange goes on as after a non-blocking
 * start. It waited for MPA_TIMEOUT instead (ETIMEDOUT, the startup
 * failed), or for ever without one. A second blocking MPA_START waits
 * again, as a second connect() does.
 */
TEST_F(raw, start_within_socket_timeout)
{
	uint8_t req[T_FRAME_MAX], rep[T_FRAME_MAX];
	struct t_raw_peer p = { .fd = RAW_I, .wait_tid = gettid(),
				.wait_nr = SYS_setsockopt };
	size_t n;
	int err;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, t_set_timeo(RESP, SO_RCVTIMEO, 100));
	EXPECT_EQ(-1, mpa_start(RESP));
	EXPECT_EQ(EINPROGRESS, errno);
	EXPECT_MPA_STATE(RESP, MPA_STATE_AWAIT_REQUEST);
	/* and again: EALREADY once the wait runs out again */
	EXPECT_EQ(-1, mpa_start(RESP));
	EXPECT_EQ(EALREADY, errno);
	/*
	 * A second blocking start waits as a second connect() does: the
	 * Request comes while it sleeps, and it returns the exchange's
	 * result (it said EALREADY at once)
	 */
	ASSERT_EQ(0, t_set_timeo(RESP, SO_RCVTIMEO, T_WAIT));
	n = t_frame(req, false, T_C, 1, "late", 4);
	p.wr = req;
	p.wr_len = n;
	EXPECT_EQ(0, t_start_against(_metadata, t_raw_peer_run, &p, RESP,
				     &err)) TH_LOG("errno %d", err);
	EXPECT_EQ(0, p.wait_rc);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_MPA_STATE(RESP, MPA_STATE_FULL);
	close(RESP);
	RESP = -1;
	close(RAW_I);
	RAW_I = -1;

	/* the Initiator, on a new pair */
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->cli, &self->srv));
	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, t_set_timeo(INIT, SO_SNDTIMEO, 100));
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EINPROGRESS, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_AWAIT_REPLY);
	t_expect_read(_metadata, RAW_R, req,
		      t_frame(req, false, T_C, 1, NULL, 0), T_WAIT);
	n = t_frame(rep, true, T_C, 1, NULL, 0);
	ASSERT_EQ(n, t_send(RAW_R, rep, n));
	EXPECT_EQ(POLLOUT, t_poll(INIT, POLLOUT, T_WAIT));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
}

TEST_F(raw, responder_nonblocking_poll)
{
	responder_nonblock(_metadata, RESP, RAW_I, false);
}

TEST_F(raw, responder_nonblocking_epoll)
{
	responder_nonblock(_metadata, RESP, RAW_I, true);
}

/*
 * Reject: R=1 goes out, MPA is left; what the Initiator sends once it has
 * the Reply is plain stream, every octet of it.
 */
TEST_F(raw, responder_reject_passthrough)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(req, false, T_C, 1, "who", 3);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(3, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES("who", got, 3);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_REJECT, "no", 2));
	EXPECT_MPA_STATE(RESP, MPA_STATE_REJECTED);
	n = t_frame(exp, true, T_C | T_R, 1, "no", 2);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);

	/* Exactly the octets behind the Reply, then plain stream. */
	ASSERT_EQ(5, t_send(RAW_I, "hello", 5));
	t_expect_read(_metadata, RESP, "hello", 5, T_WAIT);
	EXPECT_TRUE(t_quiet(RESP, RAW_I));
	t_flow(_metadata, RESP, RAW_I, "back", 4, T_WAIT);
	t_flow(_metadata, RAW_I, RESP, "again", 5, T_WAIT);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * Requirements A6: octets the raw Initiator sent behind its Request
 * before any Reply (it may send no FPDU before it has the Reply,
 * R-7.1.2-15, nor plain stream before it knows of a reject, and it cannot
 * have the Reply before the Responder queued it). The Responder @m failed
 * its startup as for an invalid frame: FAILED, code 4, EARLY_DATA,
 * EPROTO, nothing readable; the answer @answer (MPA_ACCEPT or MPA_REJECT)
 * and then the other one fail with EPROTO and change nothing; the raw
 * peer @raw reads our FIN, no Reply before it.
 */
static void check_early_data(struct __test_metadata *_metadata, int m,
			     int raw, int answer)
{
	int other = answer == MPA_ACCEPT ? MPA_REJECT : MPA_ACCEPT;
	int n = -1;
	char c;

	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_EARLY_DATA, EPROTO);
	/* the early octets are still in TCP, and no reader's */
	EXPECT_EQ(0, ioctl(m, SIOCINQ, &n));
	EXPECT_EQ(0, n);
	EXPECT_GE(0, recv(m, &c, 1, MSG_DONTWAIT));
	EXPECT_EQ(-1, mpa_answer(m, answer, "pd", 2));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_EQ(-1, mpa_answer(m, other, NULL, 0));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_EARLY_DATA, EPROTO);
	EXPECT_EQ(0, t_wait_eof(raw, T_WAIT));
}

/* An FPDU of @len octets of @u at stream position 0, no Markers, at @b. */
static size_t early_fpdu(uint8_t *b, const void *u, size_t len)
{
	struct t_fpdu_info info;

	return t_fpdu_encode(b, 0, false, u, len, &info);
}

/*
 * The Request and a valid FPDU right behind it, in one segment: MPA_START
 * fails as for an invalid frame (the Request is never REQUEST_RECEIVED),
 * and so does the answer (A6).
 */
static void early_data_with_request(struct __test_metadata *_metadata,
				    int m, int raw, int answer)
{
	uint8_t buf[T_FRAME_MAX + 64];
	size_t n;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(buf, false, T_C, 1, "who", 3);
	n += early_fpdu(buf + n, "too early", 9);
	ASSERT_EQ(n, t_send(raw, buf, n));
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EPROTO, errno);
	check_early_data(_metadata, m, raw, answer);
}

TEST_F(raw, responder_early_data_with_request_accept)
{
	early_data_with_request(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

TEST_F(raw, responder_early_data_with_request_reject)
{
	early_data_with_request(_metadata, RESP, RAW_I, MPA_REJECT);
}

/*
 * The Request alone, then, while the application judges it (MPA_START
 * returned, REQUEST_RECEIVED), octets from the Initiator: once TCP has
 * them, the answer fails with EPROTO and sends no Reply, whether the
 * startup failed as they arrived or at the answer (A6).
 */
static void early_data_while_judged(struct __test_metadata *_metadata,
				    int m, int raw, int answer)
{
	uint8_t req[T_HDR], fpdu[64];
	size_t n;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(raw, req, T_HDR));
	ASSERT_START(m);
	EXPECT_MPA_STATE(m, MPA_STATE_REQUEST_RECEIVED);
	n = early_fpdu(fpdu, "too early", 9);
	ASSERT_EQ(n, t_send(raw, fpdu, n));
	ASSERT_EQ(0, t_wait_acked(raw, T_WAIT));
	EXPECT_EQ(-1, mpa_answer(m, answer, NULL, 0));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_EQ(EPROTO, t_so_error(m));
	check_early_data(_metadata, m, raw, answer);
}

TEST_F(raw, responder_early_data_while_judged_accept)
{
	early_data_while_judged(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

TEST_F(raw, responder_early_data_while_judged_reject)
{
	early_data_while_judged(_metadata, RESP, RAW_I, MPA_REJECT);
}

/*
 * The raw Initiator @raw sends its Request to the Responder @m, whose
 * MPA_START is made first without blocking (@nonblock), or else after it,
 * returning with the Request unanswered.
 */
static void request_sent(struct __test_metadata *_metadata, int m, int raw,
			 int timeout_ms, bool nonblock)
{
	uint8_t req[T_HDR];

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, timeout_ms));
	if (nonblock)
		t_start_nonblock(_metadata, m);
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(raw, req, T_HDR));
	if (nonblock)
		return;
	ASSERT_START(m);
	EXPECT_MPA_STATE(m, MPA_STATE_REQUEST_RECEIVED);
}

/* ...and its startup fails while it waits: EPOLLERR, SO_ERROR @err. */
static void waiting_request_fails(struct __test_metadata *_metadata, int m,
				  int err)
{
	/* not writable while the Request waits: only the failure wakes it */
	int ev = t_poll(m, POLLOUT, T_WAIT);

	EXPECT_EQ(POLLERR, ev & POLLERR) TH_LOG("revents 0x%x, state %ld",
						ev, mpa_state(m));
	EXPECT_EQ(err, t_so_error(m));
}

/*
 * One octet after the Request, while it waits for its answer: the startup
 * fails as it arrives, without an answer (EPOLLERR, SO_ERROR EPROTO), as
 * for a frame that was invalid (A6); a late answer gets EPROTO.
 */
TEST_F(raw, responder_early_data_fails_on_arrival)
{
	request_sent(_metadata, RESP, RAW_I, T_TIMEOUT, false);
	ASSERT_EQ(1, t_send(RAW_I, "x", 1));
	waiting_request_fails(_metadata, RESP, EPROTO);
	check_early_data(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

/*
 * Non-blocking, the Request and the octets behind it in two segments
 * that may be read together or not: either way the startup fails with
 * EARLY_DATA (EPOLLERR), whether or not the Request was shown first.
 */
TEST_F(raw, responder_early_data_nonblocking)
{
	request_sent(_metadata, RESP, RAW_I, T_TIMEOUT, true);
	ASSERT_EQ(4, t_send(RAW_I, "ping", 4));
	ASSERT_EQ(POLLERR, t_poll(RESP, POLLOUT, T_WAIT) & POLLERR);
	EXPECT_EQ(EPROTO, t_so_error(RESP));
	check_early_data(_metadata, RESP, RAW_I, MPA_REJECT);
}

TEST_F(raw, responder_reply_pd_too_long)
{
	uint8_t req[T_HDR], pd[MPA_MAX_PRIVATE_DATA + 1], got[T_FRAME_MAX];
	size_t n;

	t_pattern(pd, sizeof(pd), 3);
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	ASSERT_START(RESP);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, pd, sizeof(pd)));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_REJECT, pd, sizeof(pd)));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_TRUE(t_nothing_pending(RAW_I));
	/* Still answerable, with the most there may be. */
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, pd, MPA_MAX_PRIVATE_DATA));
	n = T_HDR + MPA_MAX_PRIVATE_DATA;
	ASSERT_EQ(n, t_read(RAW_I, got, n, T_WAIT));
	EXPECT_EQ(0x02, got[18]);
	EXPECT_EQ(0x00, got[19]);
	EXPECT_BYTES(pd, got + T_HDR, MPA_MAX_PRIVATE_DATA);
}

TEST_F(raw, responder_peer_pd_erange)
{
	uint8_t req[T_FRAME_MAX], pd[100], got[T_FRAME_MAX];
	socklen_t len;
	size_t n;

	t_pattern(pd, sizeof(pd), 4);
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(req, false, T_C, 1, pd, sizeof(pd));
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	len = 10;
	EXPECT_EQ(-1, getsockopt(RESP, SOL_MPA, MPA_PEER_PRIVATE_DATA, got, &len));
	EXPECT_EQ(ERANGE, errno);
	EXPECT_EQ(sizeof(pd), len);
	len = sizeof(pd);
	ASSERT_EQ(0, getsockopt(RESP, SOL_MPA, MPA_PEER_PRIVATE_DATA, got, &len));
	ASSERT_EQ(sizeof(pd), len);
	EXPECT_BYTES(pd, got, sizeof(pd));
}

/* Every configuration option is frozen once MPA_START ran. */
static void options_frozen(struct __test_metadata *_metadata, int fd)
{
	static const int opts[] = {
		MPA_ROLE, MPA_MARKERS, MPA_CRC, MPA_REVISION, MPA_PERMISSIVE,
		MPA_TIMEOUT,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(opts); i++) {
		EXPECT_EQ(-1, mpa_set(fd, opts[i], 1))
			TH_LOG("option %d", opts[i]);
		EXPECT_EQ(EBUSY, errno) TH_LOG("option %d", opts[i]);
	}
	EXPECT_EQ(-1, mpa_set_enh(fd, 1, 1, 0, MPA_RTR_ALL));
	EXPECT_EQ(EBUSY, errno);
	EXPECT_EQ(-1, mpa_set_pd(fd, "x", 1));
	EXPECT_EQ(EBUSY, errno);
}

TEST_F(raw, options_after_start)
{
	uint8_t req[T_HDR];

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, RESP);
	options_frozen(_metadata, RESP);
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT));
	options_frozen(_metadata, RESP);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	options_frozen(_metadata, RESP);
	EXPECT_EQ(MPA_ROLE_RESPONDER, mpa_get(RESP, MPA_ROLE));
	EXPECT_EQ(T_TIMEOUT, mpa_get(RESP, MPA_TIMEOUT));
}

/* No plain stream while the startup phase runs, in either direction. */
static void io_refused(struct __test_metadata *_metadata, int fd)
{
	long t0 = t_now_ms();
	char c;

	EXPECT_EQ(-1, send(fd, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EINPROGRESS, errno);
	EXPECT_EQ(-1, recv(fd, &c, 1, 0));
	EXPECT_EQ(EINPROGRESS, errno);
	/* at once, not after a blocking socket's timeout (10 s and more) */
	EXPECT_GT(5000, t_now_ms() - t0);
}

TEST_F(raw, io_during_startup)
{
	struct timeval tv = { .tv_sec = 10 };
	uint8_t req[T_HDR];
	int n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, setsockopt(RESP, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	ASSERT_EQ(0, setsockopt(RESP, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	t_start_nonblock(_metadata, RESP);
	io_refused(_metadata, RESP);

	/*
	 * Blocking again: still refused, not waiting. Octets queued in the
	 * startup are not the reader's: SIOCINQ says 0, as recv gives none,
	 * for the first octets of the Request (AWAIT_REQUEST), and in
	 * REQUEST_RECEIVED. (Octets behind a whole Request fail the startup,
	 * requirements A6: see responder_early_data_*, which checks SIOCINQ
	 * after that failure.)
	 */
	ASSERT_EQ(0, fcntl(RESP, F_SETFL, fcntl(RESP, F_GETFL) & ~O_NONBLOCK));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(7, t_send(RAW_I, req, 7));
	ASSERT_EQ(0, t_wait_acked(RAW_I, T_WAIT));
	EXPECT_MPA_STATE(RESP, MPA_STATE_AWAIT_REQUEST);
	n = -1;
	EXPECT_EQ(0, ioctl(RESP, SIOCINQ, &n));
	EXPECT_EQ(0, n);
	io_refused(_metadata, RESP);
	ASSERT_EQ(T_HDR - 7, t_send(RAW_I, req + 7, T_HDR - 7));
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT));
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	n = -1;
	EXPECT_EQ(0, ioctl(RESP, SIOCINQ, &n));
	EXPECT_EQ(0, n);
	io_refused(_metadata, RESP);
	/* Nothing leaked to the peer, nor leaks later. */
	EXPECT_TRUE(t_quiet(RAW_I, RESP));
}

/*
 * A Responder that shut its sending side down while the Request waits
 * cannot send a Reply: MPA_ACCEPT and MPA_REJECT fail with EPIPE and
 * change nothing; the peer gets the FIN, no Reply.
 */
TEST_F(raw, answer_after_shutdown)
{
	request_sent(_metadata, RESP, RAW_I, T_TIMEOUT, true);
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT));
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(0, shutdown(RESP, SHUT_WR));
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_EQ(0, t_so_error(RESP));
	EXPECT_EQ(0, t_wait_eof(RAW_I, T_WAIT));
}

/*
 * The Responder's own shutdown(SHUT_RD) is not the peer closing: TCP
 * still receives, and a Request that comes in parts afterwards is read
 * whole (not a frame cut short, code 4, nor TCP closed, code 1).
 */
TEST_F(raw, responder_shut_rd)
{
	uint8_t req[T_HDR];

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, RESP);
	ASSERT_EQ(0, shutdown(RESP, SHUT_RD));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(10, t_send(RAW_I, req, 10));
	ASSERT_EQ(0, t_wait_acked(RAW_I, T_WAIT));
	EXPECT_MPA_STATE(RESP, MPA_STATE_AWAIT_REQUEST);
	ASSERT_EQ(T_HDR - 10, t_send(RAW_I, req + 10, T_HDR - 10));
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT) & POLLIN);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_EQ(0, t_so_error(RESP));
}

static void check_timeout(struct __test_metadata *_metadata, int m, int r,
			  int skip)
{
	uint8_t got[T_HDR];

	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT, ETIMEDOUT);
	if (skip)
		ASSERT_EQ(skip, t_read(r, got, skip, T_WAIT));
	/* TCP closed with a FIN, nothing before it. */
	EXPECT_EQ(0, t_wait_eof(r, T_WAIT));
}

/*
 * @m in @role, MPA_TIMEOUT T_SHORT, against a peer @r that never answers:
 * MPA_START, blocking or not, fails with ETIMEDOUT once the time is up;
 * @skip octets (what @m sent) come before the FIN.
 */
static void timeout(struct __test_metadata *_metadata, int m, int r,
		    int role, bool nonblocking, int skip)
{
	long t0;

	ASSERT_EQ(0, mpa_config(m, role, T_SHORT));
	t0 = t_now_ms();
	if (nonblocking) {
		t_start_nonblock(_metadata, m);
		EXPECT_POLLERR(m, T_WAIT);
		EXPECT_EQ(ETIMEDOUT, t_so_error(m));
	} else {
		EXPECT_EQ(-1, mpa_start(m));
		EXPECT_EQ(ETIMEDOUT, errno);
	}
	EXPECT_LE(T_SHORT - 50, t_now_ms() - t0);
	check_timeout(_metadata, m, r, skip);
}

TEST_F(raw, responder_timeout)
{
	timeout(_metadata, RESP, RAW_I, MPA_ROLE_RESPONDER, false, 0);
}

TEST_F(raw, responder_timeout_nonblocking)
{
	timeout(_metadata, RESP, RAW_I, MPA_ROLE_RESPONDER, true, 0);
}

/*
 * The Responder's application judging the Request is bounded too
 * (R-7.1.2-25, requirements A24): MPA_TIMEOUT after the Request arrived
 * without MPA_ACCEPT or MPA_REJECT, the startup fails (code 4, TIMEOUT)
 * and TCP is closed with a FIN, no Reply before it. A late answer gets
 * the failure's errno.
 */
TEST_F(raw, responder_timeout_request_received)
{
	request_sent(_metadata, RESP, RAW_I, T_SHORT, false);
	waiting_request_fails(_metadata, RESP, ETIMEDOUT);
	check_timeout(_metadata, RESP, RAW_I, 0);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
}

/*
 * The Initiator's FIN behind its Request, then its reset, while the Request
 * is judged: TCP calls a reset in CLOSE_WAIT EPIPE, but the startup fails
 * as for any reset (code 1, PEER_CLOSED, ECONNRESET), and a late answer
 * gets ECONNRESET: EPIPE is for the Responder's own shutdown(SHUT_WR),
 * after which the Request still waits.
 */
TEST_F(raw, responder_fin_then_reset_request_received)
{
	request_sent(_metadata, RESP, RAW_I, T_TIMEOUT, false);
	ASSERT_EQ(0, shutdown(RAW_I, SHUT_WR));
	mpa_close_abort(RAW_I);
	RAW_I = -1;
	EXPECT_EQ(POLLERR, t_poll(RESP, POLLOUT, T_WAIT) & POLLERR);
	EXPECT_MPA_STATE(RESP, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(RESP, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 ECONNRESET);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/* The peer closed TCP during the startup: MPA failed, nothing to read. */
static void check_peer_closed(struct __test_metadata *_metadata, int m)
{
	char c;

	EXPECT_MPA_ERROR(m, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 ECONNRESET);
	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_GE(0, recv(m, &c, 1, MSG_DONTWAIT));
}

/* The peer's FIN comes while MPA_START sleeps in its setsockopt. */
TEST_F(raw, responder_peer_fin)
{
	struct t_raw_peer p = { .fd = RAW_I, .wait_tid = gettid(),
				.wait_nr = SYS_setsockopt, .end = SHUT_WR };
	int err;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	EXPECT_EQ(-1, t_start_against(_metadata, t_raw_peer_run, &p, RESP,
				      &err));
	ASSERT_EQ(0, p.wait_rc);
	EXPECT_EQ(ECONNRESET, err);
	check_peer_closed(_metadata, RESP);
}

/* The peer's FIN was already there when MPA_START ran: no Request. */
TEST_F(raw, responder_peer_fin_before_start)
{
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, shutdown(RAW_I, SHUT_WR));
	ASSERT_EQ(0, t_wait_acked(RAW_I, T_WAIT));
	EXPECT_EQ(-1, mpa_start(RESP));
	EXPECT_EQ(ECONNRESET, errno);
	check_peer_closed(_metadata, RESP);
}

/*
 * A Request and then the Initiator's FIN, no octet behind the Request:
 * requirements A6 counts octets, and a FIN is none
 * (mpa_startup_early_data()). MPA_START starts on CLOSE_WAIT and lets the
 * frame decide; a whole one is the application's to judge as any other:
 * not EARLY_DATA, nor PEER_CLOSED (code 1 is for a frame of which nothing
 * came, mpa.rst). Only TCP closing (a reset) or the startup timeout ends
 * REQUEST_RECEIVED; a FIN half-closes it.
 */

/*
 * The raw Initiator @raw sends a Request with Private Data "fin" and its
 * FIN in one segment (MSG_MORE holds the Request until the FIN joins it),
 * acknowledged before the Responder @m starts: MPA_START shows it.
 */
static void request_fin_before_start(struct __test_metadata *_metadata,
				     int m, int raw)
{
	uint8_t req[T_FRAME_MAX], got[T_FRAME_MAX];
	size_t n;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(req, false, T_C, 1, "fin", 3);
	ASSERT_EQ((ssize_t)n, send(raw, req, n, MSG_MORE | MSG_NOSIGNAL));
	ASSERT_EQ(0, shutdown(raw, SHUT_WR));
	ASSERT_EQ(0, t_wait_acked(raw, T_WAIT));
	ASSERT_START(m);
	EXPECT_MPA_STATE(m, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(3, mpa_peer_pd(m, got, sizeof(got)));
	EXPECT_BYTES("fin", got, 3);
}

/*
 * The Responder @m, in REQUEST_RECEIVED with the raw Initiator @raw's FIN
 * behind the Request, answers @answer with Private Data "ok": the Reply
 * goes (TCP's sending half is open), nothing failed. @raw reads exactly
 * the Reply, then (after what a reject lets pass) our FIN; @m reads the
 * end of file.
 */
static void request_fin_answered(struct __test_metadata *_metadata, int m,
				 int raw, int answer)
{
	uint8_t exp[T_FRAME_MAX];
	int ev, n = -1;
	char c;

	/* the FIN is there (RDHUP) and failed nothing: no EPOLLERR */
	ev = t_poll(m, POLLIN | POLLRDHUP, T_WAIT);
	EXPECT_EQ(POLLIN | POLLRDHUP, ev) TH_LOG("revents 0x%x", ev);
	EXPECT_MPA_STATE(m, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_MPA_ERROR(m, MPA_ERR_NONE, MPA_REASON_NONE, 0);
	EXPECT_EQ(0, t_so_error(m));
	EXPECT_EQ(0, ioctl(m, SIOCINQ, &n));
	EXPECT_EQ(0, n);
	EXPECT_TRUE(t_nothing_pending(raw));

	ASSERT_EQ(0, mpa_answer(m, answer, "ok", 2));
	n = t_frame(exp, true, answer == MPA_REJECT ? T_C | T_R : T_C, 1,
		    "ok", 2);
	t_expect_read(_metadata, raw, exp, n, T_WAIT);
	EXPECT_TRUE(t_quiet(raw, m));
	if (answer == MPA_REJECT) {
		EXPECT_MPA_STATE(m, MPA_STATE_REJECTED);
		/* the plain stream: the peer's end of file, our octets */
		EXPECT_EQ(0, recv(m, &c, 1, MSG_DONTWAIT));
		t_flow(_metadata, m, raw, "after", 5, T_WAIT);
	} else {
		EXPECT_MPA_STATE(m, MPA_STATE_FULL);
		/* the FIN at an FPDU boundary: a clean end of file */
		ASSERT_EQ(POLLIN, t_poll(m, POLLIN, T_WAIT) & POLLIN);
		EXPECT_EQ(0, recv(m, &c, 1, MSG_DONTWAIT));
		EXPECT_MPA_ERROR(m, MPA_ERR_TCP_CLOSED,
				 MPA_REASON_PEER_CLOSED, 0);
	}
	EXPECT_EQ(0, t_so_error(m));
	/* nothing more from us but our FIN */
	ASSERT_EQ(0, shutdown(m, SHUT_WR));
	EXPECT_EQ(0, t_wait_eof(raw, T_WAIT));
}

TEST_F(raw, responder_request_fin_before_start_accept)
{
	request_fin_before_start(_metadata, RESP, RAW_I);
	request_fin_answered(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

TEST_F(raw, responder_request_fin_before_start_reject)
{
	request_fin_before_start(_metadata, RESP, RAW_I);
	request_fin_answered(_metadata, RESP, RAW_I, MPA_REJECT);
}

/*
 * The FIN comes while the Request waits for its answer: unlike an octet
 * (responder_early_data_fails_on_arrival) it ends nothing as it arrives.
 */
static void request_then_fin(struct __test_metadata *_metadata, int m,
			     int raw)
{
	int ev;

	request_sent(_metadata, m, raw, T_TIMEOUT, false);
	ASSERT_EQ(0, shutdown(raw, SHUT_WR));
	/* the readiness signal of the FIN's arrival at TCP */
	ev = t_poll(m, POLLRDHUP, T_WAIT);
	ASSERT_EQ(POLLRDHUP, ev & POLLRDHUP) TH_LOG("revents 0x%x", ev);
	/* negative check: no failure follows (POLLOUT stays off too) */
	EXPECT_EQ(0, t_poll(m, POLLOUT, 200));
}

TEST_F(raw, responder_request_fin_while_judged_accept)
{
	request_then_fin(_metadata, RESP, RAW_I);
	request_fin_answered(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

TEST_F(raw, responder_request_fin_while_judged_reject)
{
	request_then_fin(_metadata, RESP, RAW_I);
	request_fin_answered(_metadata, RESP, RAW_I, MPA_REJECT);
}

/* The Request and the FIN come while MPA_START sleeps in its setsockopt. */
TEST_F(raw, responder_request_fin_while_waiting)
{
	uint8_t req[T_HDR];
	struct t_raw_peer p = { .fd = RAW_I, .wait_tid = gettid(),
				.wait_nr = SYS_setsockopt, .wr = req,
				.wr_len = T_HDR, .end = SHUT_WR };
	int err;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_frame(req, false, T_C, 1, NULL, 0);
	if (t_start_against(_metadata, t_raw_peer_run, &p, RESP, &err))
		t_why(RESP, err);
	ASSERT_EQ(0, err);
	ASSERT_EQ(0, p.wait_rc);
	ASSERT_EQ(T_HDR, p.wr_done);
	/* MPA_START may have returned before the FIN came */
	ASSERT_EQ(0, t_wait_acked(RAW_I, T_WAIT));
	request_fin_answered(_metadata, RESP, RAW_I, MPA_ACCEPT);
}

/*
 * Accepted behind the Initiator's FIN, the Responder's FPDUs are held for
 * good (R-7.1.2-15: no FPDU from the Initiator can come now to end the
 * hold): send() fails with EPIPE, blocking or not, poll() says writable
 * (a send does not wait), and the peer reads nothing behind the Reply but
 * the FIN of a shutdown(SHUT_WR), which nothing held keeps back.
 */
TEST_F(raw, responder_request_fin_held_for_good)
{
	struct mpa_result res;
	uint8_t exp[T_HDR];
	char c;

	request_fin_before_start(_metadata, RESP, RAW_I);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	EXPECT_MPA_STATE(RESP, MPA_STATE_FULL);
	t_frame(exp, true, T_C, 1, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, T_HDR, T_WAIT);
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT) & POLLIN);
	EXPECT_EQ(0, recv(RESP, &c, 1, MSG_DONTWAIT));

	/* MPA_ACCEPT settled the hold: sends fail, without waiting */
	ASSERT_EQ(POLLOUT, t_poll(RESP, POLLOUT, 0) & POLLOUT);
	EXPECT_EQ(-1, send(RESP, "held", 4, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(-1, send(RESP, "held", 4, MSG_NOSIGNAL | MSG_DONTWAIT));
	EXPECT_EQ(EPIPE, errno);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(MPA_RESULT_TX_HELD, res.flags & MPA_RESULT_TX_HELD);
	EXPECT_TRUE(t_quiet(RAW_I, RESP));
	ASSERT_EQ(0, shutdown(RESP, SHUT_WR));
	ASSERT_EQ(POLLIN, t_poll(RAW_I, POLLIN, T_WAIT) & POLLIN);
	EXPECT_EQ(0, recv(RAW_I, &c, 1, MSG_DONTWAIT));
}

TEST_F(raw, responder_peer_rst)
{
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, RESP);
	mpa_close_abort(RAW_I);
	RAW_I = -1;
	EXPECT_POLLERR(RESP, T_WAIT);
	check_peer_closed(_metadata, RESP);
}

/*
 * The same, with the reset's SO_ERROR read as soon as poll says EPOLLERR,
 * which may be before the connection's work saw the reset: the startup
 * must still end (no MPA_TIMEOUT here to end it otherwise). Twenty times,
 * for either order.
 */
TEST_F(raw, responder_peer_rst_error_read)
{
	int k, i, r;

	for (k = 0; k < 20; k++) {
		ASSERT_EQ(0, mpa_tcp_pair(variant->family, &i, &r));
		ASSERT_EQ(0, mpa_config(r, MPA_ROLE_RESPONDER, 0));
		t_start_nonblock(_metadata, r);
		mpa_close_abort(i);
		EXPECT_POLLERR(r, T_WAIT);
		EXPECT_EQ(ECONNRESET, t_so_error(r));
		EXPECT_MPA_STATE(r, MPA_STATE_FAILED);
		/* told once: MPA adds no error of its own (recv would read it) */
		EXPECT_EQ(0, t_so_error(r));
		check_peer_closed(_metadata, r);
		close(r);
	}
}

/* Rev 2 (RFC 6581): IRD/ORD cross-mapped, peer-to-peer echoed, one RTR. */
TEST_F(raw, responder_rev2)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX], got[T_FRAME_MAX];
	struct mpa_frame_info fi;
	struct mpa_result res;
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(RESP, 8, 20, 0, MPA_RTR_ALL));
	n = t_frame_v2(req, false, T_C, true, MPA_RTR_WRITE | MPA_RTR_READ,
		       10, 5, "abc", 3);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED | MPA_FRAME_PEER_TO_PEER,
		  fi.flags);
	EXPECT_EQ(0, fi.res);
	EXPECT_EQ(MPA_RTR_WRITE | MPA_RTR_READ, fi.rtr);
	EXPECT_EQ(3, fi.pd_len);
	EXPECT_EQ(10, fi.ird);
	EXPECT_EQ(5, fi.ord);
	ASSERT_EQ(3, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES("abc", got, 3);

	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, "xy", 2));
	/* ird = min(8, their ord 5), ord = min(20, their ird 10); WRITE */
	n = t_frame_v2(exp, true, T_C, true, MPA_RTR_WRITE, 5, 10, "xy", 2);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED |
		  MPA_RESULT_PEER_TO_PEER | MPA_RESULT_TX_HELD, res.flags);
	EXPECT_EQ(MPA_RTR_WRITE, res.rtr);
	EXPECT_EQ(5, res.ird);
	EXPECT_EQ(10, res.ord);
	EXPECT_EQ(MPA_ROLE_RESPONDER, res.role);
}

TEST_F(raw, responder_rev2_client_server)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX];
	struct mpa_result res;
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame_v2(req, false, T_M, false, 0, 3, 7, NULL, 0);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	/* Default IRD/ORD 16: ird = min(16, 7), ord = min(16, 3). */
	n = t_frame_v2(exp, true, T_C, false, 0, 7, 3, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_TX_MARKERS | MPA_RESULT_CRC |
		  MPA_RESULT_ENHANCED | MPA_RESULT_TX_HELD, res.flags);
	EXPECT_EQ(0, res.rtr);
	EXPECT_EQ(7, res.ird);
	EXPECT_EQ(3, res.ord);
}

TEST_F(raw, responder_rev2_pd_limit)
{
	uint8_t req[T_FRAME_MAX], pd[MPA_V2_PRIVATE_DATA + 1];
	uint8_t got[T_FRAME_MAX];
	size_t n;

	t_pattern(pd, sizeof(pd), 5);
	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	/* The Request's own 508 octets: PD_Length 512 with the block. */
	n = t_frame_v2(req, false, T_C, false, 0, 1, 1, pd,
		       MPA_V2_PRIVATE_DATA);
	ASSERT_EQ(T_HDR + 512, n);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(MPA_V2_PRIVATE_DATA, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES(pd, got, MPA_V2_PRIVATE_DATA);
	EXPECT_EQ(-1, mpa_answer(RESP, MPA_ACCEPT, pd, MPA_V2_PRIVATE_DATA + 1));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_MPA_STATE(RESP, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, pd, MPA_V2_PRIVATE_DATA));
	ASSERT_EQ(n, t_read(RAW_I, got, n, T_WAIT));
	EXPECT_EQ(0x02, got[18]);
	EXPECT_EQ(0x00, got[19]);
	EXPECT_BYTES(pd, got + T_HDR + 4, MPA_V2_PRIVATE_DATA);
}

/* Appendix C.2.1: a Rev 1 Reply, then a graceful close. */
TEST_F(raw, responder_rev0_not_permissive)
{
	uint8_t req[T_HDR], exp[T_HDR];
	char c;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_frame(req, false, T_M | T_C, 0, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	EXPECT_EQ(-1, mpa_start(RESP));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_MPA_ERROR(RESP, MPA_ERR_STARTUP, MPA_REASON_REV0, EPROTO);
	EXPECT_MPA_STATE(RESP, MPA_STATE_FAILED);
	t_frame(exp, true, T_C, 1, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, T_HDR, T_WAIT);
	EXPECT_EQ(0, t_wait_eof(RAW_I, T_WAIT));
	EXPECT_GE(0, recv(RESP, &c, 1, MSG_DONTWAIT));
}

/* Appendix C.2.4: Rev 0, M=1 and C=1 back; Markers and CRC both ways. */
TEST_F(raw, responder_rev0_permissive)
{
	uint8_t req[T_HDR], exp[T_HDR];
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(RESP, MPA_PERMISSIVE, 1));
	t_frame(req, false, T_M | T_C, 0, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	ASSERT_START(RESP);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(0, fi.revision);
	EXPECT_EQ(MPA_FRAME_MARKERS | MPA_FRAME_CRC, fi.flags);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	t_frame(exp, true, T_M | T_C, 0, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, T_HDR, T_WAIT);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(0, res.revision);
	EXPECT_EQ(MPA_RESULT_TX_MARKERS | MPA_RESULT_RX_MARKERS |
		  MPA_RESULT_CRC | MPA_RESULT_TX_HELD, res.flags);
	EXPECT_MULPDU(RESP, res.mulpdu, true);
}

/* Initiator: the exact Request, the Reply's view, the result. */
TEST_F(raw, initiator_blocking)
{
	uint8_t exp[T_FRAME_MAX], rep[T_FRAME_MAX], got[T_FRAME_MAX];
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_MARKERS, 1));
	ASSERT_EQ(0, mpa_set_pd(INIT, "req", 3));
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame(exp, false, T_M | T_C, 1, "req", 3), rep,
		  t_frame(rep, true, T_C, 1, "rep", 3));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
	t_get_frame(_metadata, INIT, &fi);
	EXPECT_EQ(1, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC, fi.flags);
	EXPECT_EQ(3, fi.pd_len);
	ASSERT_EQ(3, mpa_peer_pd(INIT, got, sizeof(got)));
	EXPECT_BYTES("rep", got, 3);
	t_get_result(_metadata, INIT, &res);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ(MPA_RESULT_RX_MARKERS | MPA_RESULT_CRC, res.flags);
	EXPECT_EQ(0, res.rtr);
	EXPECT_EQ(MPA_ROLE_INITIATOR, res.role);
	EXPECT_MULPDU(INIT, res.mulpdu, false);
	EXPECT_MPA_ERROR(INIT, 0, MPA_REASON_NONE, 0);
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(t_quiet(RAW_R, INIT));
}

/* The initiator is who sends the Request, not who sent the SYN. */
TEST_F(raw, initiator_on_accepted_socket)
{
	uint8_t exp[T_HDR], rep[T_HDR];

	ASSERT_EQ(0, mpa_config(self->srv, MPA_ROLE_INITIATOR, T_TIMEOUT));
	raw_reply(_metadata, self->srv, self->cli, exp,
		  t_frame(exp, false, T_C, 1, NULL, 0), rep,
		  t_frame(rep, true, T_M, 1, NULL, 0));
	EXPECT_MPA_STATE(self->srv, MPA_STATE_FULL);
}

static void initiator_nonblock(struct __test_metadata *_metadata, int m,
			       int r, bool use_epoll)
{
	uint8_t exp[T_HDR], rep[T_HDR];
	struct t_ready w;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, m);
	EXPECT_MPA_STATE(m, MPA_STATE_AWAIT_REPLY);
	t_frame(exp, false, T_C, 1, NULL, 0);
	t_expect_read(_metadata, r, exp, T_HDR, T_WAIT);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EALREADY, errno);
	ASSERT_EQ(0, t_ready_open(&w, m, use_epoll));
	EXPECT_EQ(0, t_ready_wait(&w, 200));
	t_frame(rep, true, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(r, rep, T_HDR));
	/*
	 * As after a non-blocking connect(), the exchange is over when the
	 * socket is writable; readable would mean a whole ULPDU is there.
	 */
	EXPECT_EQ(POLLOUT, t_ready_wait(&w, T_WAIT));
	t_ready_close(&w);
	EXPECT_MPA_STATE(m, MPA_STATE_FULL);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EISCONN, errno);
}

TEST_F(raw, initiator_nonblocking_poll)
{
	initiator_nonblock(_metadata, INIT, RAW_R, false);
}

TEST_F(raw, initiator_nonblocking_epoll)
{
	initiator_nonblock(_metadata, INIT, RAW_R, true);
}

static void check_rejected(struct __test_metadata *_metadata, int m, int r)
{
	struct mpa_frame_info fi;
	uint8_t got[16];

	EXPECT_MPA_STATE(m, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(m, MPA_ERR_NONE, MPA_REASON_REJECTED, ECONNREFUSED);
	ASSERT_EQ(0, mpa_getstruct(m, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_REJECT, fi.flags);
	EXPECT_EQ(2, fi.pd_len);
	ASSERT_EQ(2, mpa_peer_pd(m, got, sizeof(got)));
	EXPECT_BYTES("no", got, 2);
	/* What followed the Reply, then plain stream both ways. */
	t_expect_read(_metadata, m, "world", 5, T_WAIT);
	EXPECT_TRUE(t_quiet(m, r));
	t_flow(_metadata, m, r, "abc", 3, T_WAIT);
	t_flow(_metadata, r, m, "xyz", 3, T_WAIT);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EISCONN, errno);
}

TEST_F(raw, initiator_rejected)
{
	uint8_t rep[T_FRAME_MAX];
	struct t_raw_peer p = { .fd = RAW_R, .rd_len = T_HDR, .wr = rep };
	int err;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	p.wr_len = t_frame(rep, true, T_C | T_R, 1, "no", 2);
	memcpy(rep + p.wr_len, "world", 5);
	p.wr_len += 5;
	EXPECT_EQ(-1, t_start_against(_metadata, t_raw_peer_run, &p, INIT,
				      &err));
	EXPECT_EQ(ECONNREFUSED, err);
	/* the blocking call told it: no error left on the socket */
	EXPECT_EQ(0, t_so_error(INIT));
	ASSERT_EQ(T_HDR, p.rd_got);
	check_rejected(_metadata, INIT, RAW_R);
}

TEST_F(raw, initiator_rejected_nonblocking)
{
	uint8_t rep[T_FRAME_MAX], got[T_HDR];
	size_t n;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	ASSERT_EQ(T_HDR, t_read(RAW_R, got, T_HDR, T_WAIT));
	n = t_frame(rep, true, T_C | T_R, 1, "no", 2);
	memcpy(rep + n, "world", 5);
	ASSERT_EQ(n + 5, t_send(RAW_R, rep, n + 5));
	/*
	 * Over (writable), refused as a connect() is (EPOLLERR, SO_ERROR
	 * ECONNREFUSED: it said neither, and a connect()-style caller took
	 * the reject for success), and plain stream again: "world" is
	 * readable.
	 */
	EXPECT_EQ(POLLIN | POLLOUT | POLLERR,
		  t_poll(INIT, POLLIN | POLLOUT, T_WAIT));
	/*
	 * MPA_START made again takes the error, as a second connect()
	 * after a refusal does (it said EISCONN, the error left pending)
	 */
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_EQ(0, t_so_error(INIT));
	check_rejected(_metadata, INIT, RAW_R);
}

/*
 * The raw Responder takes the started Initiator's Request and replies with
 * Private Data "unwelcome": the Initiator, blocking again, is in Full
 * Operation.
 */
static void unwelcome_reply(struct __test_metadata *_metadata,
			    FIXTURE_DATA(raw) *self)
{
	uint8_t rep[T_FRAME_MAX], got[T_HDR];
	size_t n;

	ASSERT_EQ(T_HDR, t_read(RAW_R, got, T_HDR, T_WAIT));
	n = t_frame(rep, true, T_C, 1, "unwelcome", 9);
	ASSERT_EQ(n, t_send(RAW_R, rep, n));
	ASSERT_LE(0, t_wait_startup(INIT, T_WAIT));
	ASSERT_EQ(0, t_blocking(INIT));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(INIT));
}

/*
 * R-7.1.2-13: an Initiator whose application does not accept the Reply's
 * Private Data leaves MPA and keeps TCP open: MPA_REJECT (without Private
 * Data: nothing is sent) after MPA_PEER_PRIVATE_DATA, before its first
 * FPDU. The socket carries the plain stream again.
 */
TEST_F(raw, initiator_refuses_reply_pd)
{
	static const char big[MPA_MAX_PRIVATE_DATA + 1];
	struct mpa_result res;
	char buf[16];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	/* no Reply yet: nothing to refuse */
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);
	unwelcome_reply(_metadata, self);
	ASSERT_EQ(9, mpa_peer_pd(INIT, buf, sizeof(buf)));
	EXPECT_BYTES("unwelcome", buf, 9);

	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, "x", 1));
	EXPECT_EQ(EINVAL, errno);
	/* any Private Data: its length or address does not matter */
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, big, sizeof(big)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, (void *)8, 4));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_ACCEPT, big, sizeof(big)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
	ASSERT_EQ(0, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_MPA_STATE(INIT, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(INIT, MPA_ERR_NONE, MPA_REASON_NONE, 0);
	EXPECT_EQ(-1, mpa_getstruct(INIT, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EINVAL, errno);

	/* nothing went out; the plain stream flows both ways */
	EXPECT_TRUE(t_nothing_pending(RAW_R));
	t_flow(_metadata, INIT, RAW_R, "plain", 5, T_WAIT);
	t_flow(_metadata, RAW_R, INIT, "back", 4, T_WAIT);
}

/* A thread making one blocking call on the stream: recv, splice or send */
enum { T_CALL_RECV, T_CALL_SPLICE, T_CALL_SEND };

struct t_reader {
	pthread_t thr;
	int fd;
	int call;
	pid_t tid;
	ssize_t r;
	int err;
	char buf[16];
};

static void *t_reader_run(void *arg)
{
	static char out[4096];
	struct t_reader *rd = arg;
	int p[2] = { -1, -1 };

	if (rd->call == T_CALL_SPLICE && pipe(p)) {
		rd->r = -1;
		rd->err = errno;
		return NULL;
	}
	__atomic_store_n(&rd->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	switch (rd->call) {
	case T_CALL_RECV:
		rd->r = recv(rd->fd, rd->buf, sizeof(rd->buf), 0);
		break;
	case T_CALL_SPLICE:
		rd->r = splice(rd->fd, NULL, p[1], NULL, sizeof(rd->buf), 0);
		break;
	case T_CALL_SEND:
		/* no MSG_NOSIGNAL: a SIGPIPE would end the test */
		rd->r = send(rd->fd, out, sizeof(out), 0);
		break;
	}
	rd->err = errno;
	if (p[0] >= 0) {
		close(p[0]);
		close(p[1]);
	}
	return NULL;
}

static const long t_call_nr[] = {
	[T_CALL_RECV] = SYS_recvfrom,
	[T_CALL_SPLICE] = SYS_splice,
	[T_CALL_SEND] = SYS_sendto,
};

/* Start @rd's call, and wait until it sleeps in the kernel. */
static void t_reader_start(struct __test_metadata *_metadata,
			   struct t_reader *rd)
{
	ASSERT_EQ(0, pthread_create(&rd->thr, NULL, t_reader_run, rd));
	while (!__atomic_load_n(&rd->tid, __ATOMIC_ACQUIRE))
		poll(NULL, 0, 1);
	ASSERT_EQ(0, t_wait_sleeping_in(rd->tid, t_call_nr[rd->call], T_WAIT));
}

/*
 * A reader that sleeps in recv() in Full Operation while the Initiator
 * refuses the Reply: its recv goes on as one of the plain stream, and
 * returns the peer's plain octets (not parsed as an FPDU).
 */
TEST_F(raw, initiator_refuses_while_reading)
{
	struct t_reader rd = { .fd = INIT };

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	unwelcome_reply(_metadata, self);
	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));

	t_reader_start(_metadata, &rd);
	ASSERT_EQ(0, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	ASSERT_EQ(5, t_send(RAW_R, "plain", 5));
	pthread_join(rd.thr, NULL);
	EXPECT_EQ(5, rd.r) TH_LOG("recv: errno %d (%s)", rd.err,
				  strerror(rd.err));
	EXPECT_BYTES("plain", rd.buf, 5);
	t_flow(_metadata, INIT, RAW_R, "back", 4, T_WAIT);
}

/*
 * Fill TCP's send buffer of @fd with plain octets until a send would sleep
 * and stays so: the peer reads none, and nothing is in flight, so that no
 * ACK makes room. Return: the octets sent, or -1.
 */
static ssize_t fill_sndbuf(int fd, void *buf, size_t len, int ms)
{
	long end = t_now_ms() + ms;
	struct t_tcp_info ti;
	size_t total = 0;
	socklen_t tlen;
	ssize_t r;

	for (;;) {
		while ((r = send(fd, buf, len, MSG_DONTWAIT)) > 0)
			total += r;
		if (errno != EAGAIN)
			return -1;
		tlen = sizeof(ti);
		if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &tlen) ||
		    tlen < sizeof(ti))
			return -1;
		/* all acknowledged: a send still refused stays refused */
		if (!ti.base.tcpi_unacked) {
			r = send(fd, buf, len, MSG_DONTWAIT);
			if (r < 0 && errno == EAGAIN)
				return total;
			if (r < 0)
				return -1;
			total += r;
		}
		if (t_now_ms() > end)
			return -1;
		/* no event says "acknowledged": look again shortly */
		poll(NULL, 0, 1);
	}
}

/*
 * Another thread starts the startup phase while @rd's call sleeps in TCP
 * on the plain stream: MPA_START sends it back out of TCP first, and it is
 * answered as a call made during the startup phase: EINPROGRESS. Then the
 * Reply, and an FPDU that must arrive as a ULPDU, not as plain octets.
 */
static void start_while_calling(struct __test_metadata *_metadata,
				FIXTURE_DATA(raw) *self, int call)
{
	struct t_reader rd = { .fd = INIT, .call = call };
	uint8_t rep[T_FRAME_MAX], got[T_HDR], fpdu[64];
	static uint8_t fill[65536];
	size_t plain = 0, n;
	char buf[16];
	ssize_t r;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	/* the old code's call slept on until these ran out */
	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(INIT, SO_SNDTIMEO, T_WAIT));
	/* a send sleeps once TCP's send buffer is full of plain octets */
	if (call == T_CALL_SEND) {
		r = fill_sndbuf(INIT, fill, sizeof(fill), T_WAIT);
		ASSERT_LT(0, r);
		plain = r;
	}

	t_reader_start(_metadata, &rd);
	t_start_nonblock(_metadata, INIT);
	pthread_join(rd.thr, NULL);
	EXPECT_EQ(-1, rd.r);
	EXPECT_EQ(EINPROGRESS, rd.err) TH_LOG("call %d: errno %d (%s)", call,
					      rd.err, strerror(rd.err));

	/* the plain octets, then the Request: nothing between them */
	while (plain) {
		n = plain < sizeof(fill) ? plain : sizeof(fill);
		ASSERT_EQ((ssize_t)n, t_read(RAW_R, fill, n, T_WAIT));
		plain -= n;
	}
	ASSERT_EQ(T_HDR, t_read(RAW_R, got, T_HDR, T_WAIT));
	EXPECT_BYTES("MPA ID Req Frame", got, 16);
	n = t_frame(rep, true, T_C, 1, NULL, 0);
	ASSERT_EQ(n, t_send(RAW_R, rep, n));
	ASSERT_LE(0, t_wait_startup(INIT, T_WAIT));
	ASSERT_EQ(0, t_blocking(INIT));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(INIT));
	n = t_fpdu_encode(fpdu, 0, false, "abc", 3, NULL);
	ASSERT_EQ(n, t_send(RAW_R, fpdu, n));
	ASSERT_EQ(3, recv(INIT, buf, sizeof(buf), 0));
	EXPECT_BYTES("abc", buf, 3);
}

TEST_F(raw, initiator_starts_while_reading)
{
	start_while_calling(_metadata, self, T_CALL_RECV);
}

TEST_F(raw, initiator_starts_while_splicing)
{
	start_while_calling(_metadata, self, T_CALL_SPLICE);
}

/* The sender is not told EPIPE, and gets no SIGPIPE. */
TEST_F(raw, initiator_starts_while_writing)
{
	signal(SIGPIPE, SIG_DFL);
	start_while_calling(_metadata, self, T_CALL_SEND);
}

/*
 * MPA_START after the application's own shutdown(SHUT_WR) cannot start
 * (ENOTCONN, nothing changed): it must not send a reader of the plain
 * stream, asleep in TCP meanwhile, back out of TCP first, where the call
 * then failed with TCP's EPIPE on a connection that still receives. The
 * call gets the peer's octets.
 */
static void start_after_shut_wr(struct __test_metadata *_metadata,
				FIXTURE_DATA(raw) *self, int call)
{
	struct t_reader rd = { .fd = INIT, .call = call };
	char buf[16];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, shutdown(INIT, SHUT_WR));
	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));
	t_reader_start(_metadata, &rd);
	EXPECT_EQ(-1, setsockopt(INIT, SOL_MPA, MPA_START, NULL, 0));
	EXPECT_EQ(ENOTCONN, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_STREAMING);
	ASSERT_EQ(5, t_send(RAW_R, "plain", 5));
	pthread_join(rd.thr, NULL);
	EXPECT_EQ(5, rd.r) TH_LOG("call %d: errno %d (%s)", call, rd.err,
				  strerror(rd.err));
	if (call == T_CALL_RECV)
		EXPECT_BYTES("plain", rd.buf, 5);
	/* the stream goes on: the peer's FIN next */
	ASSERT_EQ(0, shutdown(RAW_R, SHUT_WR));
	EXPECT_EQ(0, recv(INIT, buf, sizeof(buf), 0));
}

TEST_F(raw, start_after_shut_wr_keeps_reader)
{
	start_after_shut_wr(_metadata, self, T_CALL_RECV);
}

TEST_F(raw, start_after_shut_wr_keeps_splicer)
{
	start_after_shut_wr(_metadata, self, T_CALL_SPLICE);
}

/* A blocking MPA_REJECT in a thread of its own */
struct t_answer {
	pthread_t thr;
	int fd;
	pid_t tid;
	int ret, err;
};

static void *t_answer_run(void *arg)
{
	struct t_answer *a = arg;

	__atomic_store_n(&a->tid, syscall(SYS_gettid), __ATOMIC_RELEASE);
	a->ret = mpa_answer(a->fd, MPA_REJECT, NULL, 0);
	a->err = errno;
	return NULL;
}

/*
 * A blocking MPA_REJECT waits behind a send buffer full of stream data
 * for its Reply to go; the peer resets meanwhile. The reject stands
 * (REJECTED), but the answer fails with TCP's ECONNRESET, as documented;
 * it returned 0, as if the Reply had gone.
 */
TEST_F(raw, reject_blocking_cut_by_reset)
{
	struct t_answer a = { .fd = RESP };
	static uint8_t fill[65536];
	uint8_t req[T_HDR];

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_LT(0, fill_sndbuf(RESP, fill, sizeof(fill), T_WAIT));
	t_start_nonblock(_metadata, RESP);
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	ASSERT_EQ(POLLIN, t_poll(RESP, POLLIN, T_WAIT) & POLLIN);
	ASSERT_EQ(MPA_STATE_REQUEST_RECEIVED, mpa_state(RESP));
	ASSERT_EQ(0, t_blocking(RESP));
	ASSERT_EQ(0, t_set_timeo(RESP, SO_SNDTIMEO, T_WAIT));

	ASSERT_EQ(0, pthread_create(&a.thr, NULL, t_answer_run, &a));
	while (!__atomic_load_n(&a.tid, __ATOMIC_ACQUIRE))
		poll(NULL, 0, 1);
	ASSERT_EQ(0, t_wait_sleeping_in(a.tid, SYS_setsockopt, T_WAIT));
	mpa_close_abort(RAW_I);
	RAW_I = -1;
	pthread_join(a.thr, NULL);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(ECONNRESET, a.err) TH_LOG("errno %d (%s)", a.err,
					    strerror(a.err));
	EXPECT_MPA_STATE(RESP, MPA_STATE_REJECTED);
}

/*
 * Send the plain stream @buf of @len octets again and again, from its
 * start, on @fd (non-blocking) until TCP refuses more with the peer's
 * window shut (zero, all sent acknowledged: a window smaller than a
 * segment is not enough, TCP's window probe would send into it and an
 * ACK make room) and at least STUFF_UNSENT octets waiting behind it.
 * Then shrink the send buffer to its least (about 4.5 KiB): what is sent
 * next waits behind them until the peer reads (MSG_EOR: it needs a new
 * skb, which the full send buffer refuses), and stays out of TCP even if
 * the peer opens its window again by some KiB without reading, as a peer
 * was seen to do, and an ACK frees as much of the send buffer. Return:
 * the octets sent.
 */
#define STUFF_UNSENT	32768
static size_t stuff_stream(struct __test_metadata *_metadata, int fd,
			   const uint8_t *buf, size_t len)
{
	long end = t_now_ms() + 3 * T_WAIT;
	int sndbuf = 65536, unsent = 0;
	struct t_tcp_info ti;
	size_t sent = 0;
	socklen_t tlen;
	ssize_t r;

	EXPECT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	EXPECT_EQ(0, t_nonblock(fd));
	for (;;) {
		r = send(fd, buf + sent % len, len - sent % len,
			 MSG_NOSIGNAL | MSG_EOR);
		if (r > 0) {
			sent += r;
			continue;
		}
		EXPECT_EQ(EAGAIN, errno);
		tlen = sizeof(ti);
		EXPECT_EQ(0, getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &tlen));
		if (!ti.snd_wnd && !ti.base.tcpi_unacked) {
			EXPECT_EQ(0, ioctl(fd, SIOCOUTQNSD, &unsent));
			if (unsent >= STUFF_UNSENT)
				break;
			/* acknowledged since: room to send more */
		}
		/* the test's premise: TCP can send nothing more */
		if (t_now_ms() > end) {
			EXPECT_GE(end, t_now_ms())
				TH_LOG("%zu octets sent, %d waiting, window %u",
				       sent, unsent, ti.snd_wnd);
			break;
		}
		/* No event says "the window closed": look again shortly. */
		poll(NULL, 0, 5);
	}
	sndbuf = 0;
	EXPECT_EQ(0, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	EXPECT_EQ(0, ioctl(fd, SIOCOUTQNSD, &unsent));
	TH_LOG("%zu octets of the plain stream queued, %d not sent", sent,
	       unsent);
	return sent;
}

/*
 * Appendix C.2.1 with a Reply that cannot go: a Responder that is not
 * permissive answers a Rev 0 Request with a Rev 1 Reply, then closes; but
 * the peer reads nothing, and TCP's send buffer is full of stream data
 * sent before MPA_START. The startup's timeout bounds that wait too: the
 * rest of the Reply is dropped, the FIN goes, and a poller hears of the
 * failure (code 4, REV0, EPROTO). It heard nothing, and TCP stayed open.
 */
TEST_F(raw, rev0_reply_stuck_closes_at_timeout)
{
	static uint8_t fill[65536];
	size_t sent, got = 0;
	uint8_t req[T_HDR];
	long t0;
	ssize_t r;
	int ev;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_SHORT));
	sent = stuff_stream(_metadata, RESP, fill, sizeof(fill));
	t0 = t_now_ms();
	t_start_nonblock(_metadata, RESP);
	t_frame(req, false, T_M | T_C, 0, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(RAW_I, req, T_HDR));
	ev = t_poll(RESP, POLLIN | POLLOUT, T_WAIT);
	EXPECT_EQ(POLLERR | POLLHUP, ev & (POLLERR | POLLHUP))
		TH_LOG("revents 0x%x, state %ld", ev, mpa_state(RESP));
	/* the startup's timeout ended the wait, not anything before it */
	EXPECT_LE(T_SHORT - 50, t_now_ms() - t0);
	EXPECT_MPA_STATE(RESP, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(RESP, MPA_ERR_STARTUP, MPA_REASON_REV0, EPROTO);
	EXPECT_EQ(EPROTO, t_so_error(RESP));

	/* TCP delivers the stream and what of the Reply it took, then the FIN */
	ASSERT_EQ(0, t_set_timeo(RAW_I, SO_RCVTIMEO, T_WAIT));
	while ((r = recv(RAW_I, fill, sizeof(fill), 0)) > 0)
		got += r;
	EXPECT_EQ(0, r) TH_LOG("recv after %zu octets: %s", got,
			       strerror(errno));
	EXPECT_LE(sent, got);
	EXPECT_GT(sent + T_HDR, got);
}

/*
 * A call made before MPA was attached is TCP's: MPA cannot count it, but
 * sends it back out of TCP all the same, with TCP's EPIPE, rather than let
 * it read the startup frames and FPDUs later.
 */
TEST_F(raw, initiator_starts_while_reading_before_attach)
{
	struct t_reader rd = { .fd = INIT, .call = T_CALL_RECV };

	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));
	t_reader_start(_metadata, &rd);
	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	pthread_join(rd.thr, NULL);
	EXPECT_EQ(-1, rd.r);
	EXPECT_EQ(EPIPE, rd.err) TH_LOG("errno %d (%s)", rd.err,
					strerror(rd.err));
	unwelcome_reply(_metadata, self);
}

/*
 * An FPDU from the Responder (against R-7.1.2-15) that recv showed, even
 * with MSG_PEEK, even in part: too late to refuse (EISCONN), or the plain
 * stream would show its octets again, framing and all.
 */
TEST_F(raw, initiator_refuses_after_reading)
{
	uint8_t fpdu[64];
	char buf[16];
	size_t n;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	unwelcome_reply(_metadata, self);
	n = t_fpdu_encode(fpdu, 0, false, "abcdef", 6, NULL);
	ASSERT_EQ(n, t_send(RAW_R, fpdu, n));
	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(2, recv(INIT, buf, 2, MSG_PEEK));
	EXPECT_BYTES("ab", buf, 2);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EISCONN, errno);
	ASSERT_EQ(2, recv(INIT, buf, 2, 0));
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
	ASSERT_EQ(4, recv(INIT, buf, sizeof(buf), 0));
	EXPECT_BYTES("cdef", buf, 4);
}

/*
 * A reset in the middle of an FPDU whose error the application reads
 * first (SO_ERROR, as an epoll loop does on EPOLLERR): recv still returns
 * the whole FPDU before it, then the end, and MPA_ERROR tells of the reset
 * (code 1), not of a clean end.
 */
TEST_F(raw, initiator_reset_error_read_first)
{
	uint8_t fpdu[128];
	char buf[16];
	size_t n, m;

	ASSERT_LE(0, t_raw_responder(INIT, RAW_R, T_C, false, true));
	n = t_fpdu_encode(fpdu, 0, false, "whole", 5, NULL);
	m = t_fpdu_encode(fpdu + n, n, false, "halfhalf", 8, NULL);
	ASSERT_EQ(n + m / 2, t_send(RAW_R, fpdu, n + m / 2));
	ASSERT_EQ(0, t_wait_acked(RAW_R, T_WAIT));
	mpa_close_abort(RAW_R);
	RAW_R = -1;
	EXPECT_POLLERR(INIT, T_WAIT);
	EXPECT_EQ(ECONNRESET, t_so_error(INIT));
	ASSERT_EQ(0, t_set_timeo(INIT, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(5, recv(INIT, buf, sizeof(buf), 0));
	EXPECT_BYTES("whole", buf, 5);
	EXPECT_EQ(0, recv(INIT, buf, sizeof(buf), 0));
	EXPECT_MPA_ERROR(INIT, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 ECONNRESET);
}

/*
 * SO_PEEK_OFF is TCP's before MPA_START; MPA's recv does not follow it,
 * so a value set then is dropped when the startup phase starts, and a new
 * one refused.
 */
TEST_F(raw, initiator_peek_off_dropped)
{
	int v = 7;
	socklen_t len = sizeof(v);

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, t_setint(INIT, SOL_SOCKET, SO_PEEK_OFF, 0));
	t_start_nonblock(_metadata, INIT);
	ASSERT_EQ(0, getsockopt(INIT, SOL_SOCKET, SO_PEEK_OFF, &v, &len));
	EXPECT_EQ(-1, v);
	EXPECT_EQ(-1, t_setint(INIT, SOL_SOCKET, SO_PEEK_OFF, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	unwelcome_reply(_metadata, self);
}

/* After the first FPDU Full Operation has begun: too late (EISCONN). */
TEST_F(raw, initiator_refuses_too_late)
{
	uint8_t exp[64];
	size_t n;

	ASSERT_LE(0, t_raw_responder(INIT, RAW_R, T_C, false, true));
	ASSERT_EQ(3, t_send(INIT, "abc", 3));
	n = t_fpdu_encode(exp, 0, false, "abc", 3, NULL);
	t_expect_read(_metadata, RAW_R, exp, n, T_WAIT);
	EXPECT_EQ(-1, mpa_answer(INIT, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EISCONN, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
}

/* The Request went out, then the FIN. */
TEST_F(raw, initiator_timeout)
{
	timeout(_metadata, INIT, RAW_R, MPA_ROLE_INITIATOR, false, T_HDR);
}

TEST_F(raw, initiator_timeout_nonblocking)
{
	timeout(_metadata, INIT, RAW_R, MPA_ROLE_INITIATOR, true, T_HDR);
}

/*
 * The Initiator's plain stream fills TCP's send buffer before MPA_START,
 * so its Request waits behind it, and the peer reads nothing until the
 * startup timed out (TCP closed with a FIN, A5). close() then lets TCP
 * deliver the stream and the FIN, not a reset that drops it: what send()
 * accepted is not lost. The Request's rest that never left TCP is dropped.
 */
TEST_F(raw, initiator_timeout_behind_stream)
{
	static uint8_t out[1 << 16], in[1 << 16];
	size_t sent, got = 0;
	ssize_t r;

	t_fill(out, sizeof(out), 4711);
	sent = stuff_stream(_metadata, INIT, out, sizeof(out));
	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_SHORT));
	ASSERT_EQ(-1, mpa_start(INIT));
	ASSERT_EQ(EINPROGRESS, errno);
	EXPECT_POLLERR(INIT, T_WAIT);
	EXPECT_EQ(ETIMEDOUT, t_so_error(INIT));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FAILED);
	close(INIT);
	INIT = -1;

	ASSERT_EQ(0, t_set_timeo(RAW_R, SO_RCVTIMEO, T_WAIT));
	while ((r = recv(RAW_R, in, sizeof(in), 0)) > 0) {
		/* the stream is the pattern sent again and again */
		for (ssize_t k = 0; k < r && got + k < sent; k++)
			if (in[k] != out[(got + k) % sizeof(out)]) {
				ASSERT_EQ(out[(got + k) % sizeof(out)], in[k])
					TH_LOG("octet %zu", got + k);
			}
		got += r;
	}
	EXPECT_EQ(0, r) TH_LOG("recv after %zu of %zu octets: %s", got, sent,
			       strerror(errno));
	EXPECT_LE(sent, got);
}

TEST_F(raw, initiator_io_during_startup)
{
	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	io_refused(_metadata, INIT);
	options_frozen(_metadata, INIT);
}

TEST_F(raw, initiator_peer_fin)
{
	uint8_t got[T_HDR];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	t_start_nonblock(_metadata, INIT);
	ASSERT_EQ(T_HDR, t_read(RAW_R, got, T_HDR, T_WAIT));
	ASSERT_EQ(0, shutdown(RAW_R, SHUT_WR));
	EXPECT_POLLERR(INIT, T_WAIT);
	EXPECT_EQ(ECONNRESET, t_so_error(INIT));
	check_peer_closed(_metadata, INIT);
}

/* Rev 2 initiator: the exact enhanced Request, then a valid Reply. */
TEST_F(raw, initiator_rev2)
{
	uint8_t exp[T_FRAME_MAX], rep[T_FRAME_MAX];
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(INIT, 16, 4, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ | MPA_RTR_WRITE));
	ASSERT_EQ(0, mpa_set_pd(INIT, "pd", 2));
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame_v2(exp, false, T_C, true,
			     MPA_RTR_READ | MPA_RTR_WRITE, 16, 4, "pd", 2),
		  rep,
		  t_frame_v2(rep, true, T_C, true, MPA_RTR_READ, 3, 12, NULL,
			     0));

	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
	t_get_frame(_metadata, INIT, &fi);
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED | MPA_FRAME_PEER_TO_PEER,
		  fi.flags);
	EXPECT_EQ(MPA_RTR_READ, fi.rtr);
	EXPECT_EQ(0, fi.pd_len);
	EXPECT_EQ(3, fi.ird);
	EXPECT_EQ(12, fi.ord);
	t_get_result(_metadata, INIT, &res);
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED |
		  MPA_RESULT_PEER_TO_PEER, res.flags);
	EXPECT_EQ(MPA_RTR_READ, res.rtr);
	/* Our IRD serves their ORD: min(16, 12); our ORD: min(4, 3). */
	EXPECT_EQ(12, res.ird);
	EXPECT_EQ(3, res.ord);
}

TEST_F(raw, initiator_rev2_pd_too_long)
{
	uint8_t pd[MPA_V2_PRIVATE_DATA + 1];

	t_pattern(pd, sizeof(pd), 6);
	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_pd(INIT, pd, sizeof(pd)));
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_STREAMING);
	EXPECT_TRUE(t_quiet(RAW_R, INIT));
}

/*
 * Peer-to-peer with no RTR type to offer (none set, or only the Read with
 * an ORD of 0, which the Request leaves out): no Responder could pick one
 * (RFC 6581), so MPA_START refuses it at once, nothing sent. It sent a
 * Request with A=1 and no RTR flag, which could only be rejected.
 */
TEST_F(raw, initiator_p2p_no_rtr)
{
	uint8_t exp[T_FRAME_MAX];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(INIT, 4, 4, MPA_ENH_PEER_TO_PEER, 0));
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, mpa_set_enh(INIT, 4, 0, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ));
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_MPA_STATE(INIT, MPA_STATE_STREAMING);
	EXPECT_TRUE(t_quiet(RAW_R, INIT));
	/* with a type to offer, it starts: the Send, not the Read */
	ASSERT_EQ(0, mpa_set_enh(INIT, 4, 0, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ | MPA_RTR_SEND));
	ASSERT_EQ(0, fcntl(INIT, F_SETFL, fcntl(INIT, F_GETFL) | O_NONBLOCK));
	EXPECT_EQ(-1, mpa_start(INIT));
	EXPECT_EQ(EINPROGRESS, errno);
	t_expect_read(_metadata, RAW_R, exp,
		      t_frame_v2(exp, false, T_C, true, MPA_RTR_SEND, 4, 0,
				 NULL, 0), T_WAIT);
}

/* Rev 0 initiator: M=1 C=1 whatever was asked. */
TEST_F(raw, initiator_rev0)
{
	uint8_t exp[T_HDR], rep[T_HDR];
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_REVISION, 0));
	ASSERT_EQ(0, mpa_set(INIT, MPA_MARKERS, 0));
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame(exp, false, T_M | T_C, 0, NULL, 0), rep,
		  t_frame(rep, true, T_M | T_C, 0, NULL, 0));
	t_get_result(_metadata, INIT, &res);
	EXPECT_EQ(0, res.revision);
	EXPECT_EQ(MPA_RESULT_TX_MARKERS | MPA_RESULT_RX_MARKERS |
		  MPA_RESULT_CRC, res.flags);
}

/* Appendix C.2.5: a permissive initiator takes a Rev 0 Reply. */
TEST_F(raw, initiator_rev0_reply_permissive)
{
	uint8_t exp[T_HDR], rep[T_HDR];
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_PERMISSIVE, 1));
	/* A permissive initiator still sends Rev 1, M as configured. */
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame(exp, false, T_C, 1, NULL, 0), rep,
		  t_frame(rep, true, T_M | T_C, 0, NULL, 0));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
	t_get_frame(_metadata, INIT, &fi);
	EXPECT_EQ(0, fi.revision);
	t_get_result(_metadata, INIT, &res);
	EXPECT_EQ(0, res.revision);
	EXPECT_EQ(MPA_RESULT_TX_MARKERS | MPA_RESULT_RX_MARKERS |
		  MPA_RESULT_CRC, res.flags);
	EXPECT_MULPDU(INIT, res.mulpdu, true);
}

/* Appendix C.2.2: not permissive, a Rev 0 Reply closes. */
TEST_F(raw, initiator_rev0_reply_not_permissive)
{
	uint8_t rep[T_HDR];
	struct t_raw_peer p = { .fd = RAW_R, .rd_len = T_HDR, .wr = rep };
	int err;

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	p.wr_len = t_frame(rep, true, T_M | T_C, 0, NULL, 0);
	EXPECT_EQ(-1, t_start_against(_metadata, t_raw_peer_run, &p, INIT,
				      &err));
	EXPECT_EQ(EPROTO, err);
	EXPECT_MPA_STATE(INIT, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(INIT, MPA_ERR_STARTUP, MPA_REASON_REV0, EPROTO);
	EXPECT_EQ(0, t_wait_eof(RAW_R, T_WAIT));
}

/* Private Data of 0, 1, 508 and 512 octets, each way, byte-exact. */
FIXTURE(pd)
{
	int cli;
	int srv;
	uint8_t pd[MPA_MAX_PRIVATE_DATA];
};

FIXTURE_VARIANT(pd)
{
	int family;
	unsigned int len;
};

FIXTURE_VARIANT_ADD(pd, len0)
{
	.family = AF_INET, .len = 0,
};

FIXTURE_VARIANT_ADD(pd, len1)
{
	.family = AF_INET6, .len = 1,
};

FIXTURE_VARIANT_ADD(pd, len508)
{
	.family = AF_INET, .len = 508,
};

FIXTURE_VARIANT_ADD(pd, len512)
{
	.family = AF_INET6, .len = 512,
};

FIXTURE_SETUP(pd)
{
	signal(SIGPIPE, SIG_IGN);
	t_pattern(self->pd, sizeof(self->pd), variant->len);
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->cli, &self->srv));
}

FIXTURE_TEARDOWN(pd)
{
	close(self->cli);
	close(self->srv);
}

TEST_F(pd, request_sent)
{
	uint8_t exp[T_FRAME_MAX], rep[T_HDR];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_pd(INIT, self->pd, variant->len));
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame(exp, false, T_C, 1, self->pd, variant->len), rep,
		  t_frame(rep, true, T_C, 1, NULL, 0));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
}

TEST_F(pd, request_received)
{
	uint8_t req[T_FRAME_MAX], got[T_FRAME_MAX];
	struct mpa_frame_info fi;
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	n = t_frame(req, false, T_C, 1, self->pd, variant->len);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(variant->len, fi.pd_len);
	ASSERT_EQ(variant->len, mpa_peer_pd(RESP, got, sizeof(got)));
	EXPECT_BYTES(self->pd, got, variant->len);
}

static void pd_answer(struct __test_metadata *_metadata, int m, int r,
		      int answer, const uint8_t *pd, unsigned int len)
{
	uint8_t req[T_HDR], exp[T_FRAME_MAX];
	size_t n;

	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(r, req, T_HDR));
	ASSERT_START(m);
	ASSERT_EQ(0, mpa_answer(m, answer, pd, len));
	n = t_frame(exp, true, T_C | (answer == MPA_REJECT ? T_R : 0), 1,
		    pd, len);
	t_expect_read(_metadata, r, exp, n, T_WAIT);
	EXPECT_TRUE(t_quiet(r, m));
	EXPECT_MPA_STATE(m, answer == MPA_REJECT ? MPA_STATE_REJECTED :
						    MPA_STATE_FULL);
}

TEST_F(pd, accept_sent)
{
	pd_answer(_metadata, RESP, RAW_I, MPA_ACCEPT, self->pd, variant->len);
}

TEST_F(pd, reject_sent)
{
	pd_answer(_metadata, RESP, RAW_I, MPA_REJECT, self->pd, variant->len);
}

TEST_F(pd, reply_received)
{
	uint8_t exp[T_HDR], rep[T_FRAME_MAX], got[T_FRAME_MAX];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame(exp, false, T_C, 1, NULL, 0), rep,
		  t_frame(rep, true, T_C, 1, self->pd, variant->len));
	ASSERT_EQ(variant->len, mpa_peer_pd(INIT, got, sizeof(got)));
	EXPECT_BYTES(self->pd, got, variant->len);
}

/* With Rev 2 the block takes 4 of the 512: 512 is refused at MPA_START. */
TEST_F(pd, rev2_request_sent)
{
	uint8_t exp[T_FRAME_MAX], rep[T_FRAME_MAX];

	ASSERT_EQ(0, mpa_config(INIT, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(INIT, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(INIT, 2, 2, 0, 0));
	ASSERT_EQ(0, mpa_set_pd(INIT, self->pd, variant->len));
	if (variant->len > MPA_V2_PRIVATE_DATA) {
		EXPECT_EQ(-1, mpa_start(INIT));
		EXPECT_EQ(EMSGSIZE, errno);
		EXPECT_MPA_STATE(INIT, MPA_STATE_STREAMING);
		return;
	}
	raw_reply(_metadata, INIT, RAW_R, exp,
		  t_frame_v2(exp, false, T_C, false, 0, 2, 2, self->pd,
			     variant->len),
		  rep, t_frame_v2(rep, true, T_C, false, 0, 2, 2, NULL, 0));
	EXPECT_MPA_STATE(INIT, MPA_STATE_FULL);
}

/* The one RTR type a responder picks: WRITE, then READ, then SEND. */
FIXTURE(rtr)
{
	int cli;
	int srv;
};

FIXTURE_VARIANT(rtr)
{
	__u8 offered;
	__u8 accepted;
	__u8 chosen;
};

FIXTURE_VARIANT_ADD(rtr, all_all)
{
	.offered = MPA_RTR_ALL, .accepted = MPA_RTR_ALL,
	.chosen = MPA_RTR_WRITE,
};

FIXTURE_VARIANT_ADD(rtr, read_send)
{
	.offered = MPA_RTR_READ | MPA_RTR_SEND, .accepted = MPA_RTR_ALL,
	.chosen = MPA_RTR_READ,
};

FIXTURE_VARIANT_ADD(rtr, send_only)
{
	.offered = MPA_RTR_SEND, .accepted = MPA_RTR_ALL,
	.chosen = MPA_RTR_SEND,
};

FIXTURE_VARIANT_ADD(rtr, all_but_write_accepted)
{
	.offered = MPA_RTR_ALL, .accepted = MPA_RTR_READ | MPA_RTR_SEND,
	.chosen = MPA_RTR_READ,
};

FIXTURE_VARIANT_ADD(rtr, write_send_send_accepted)
{
	.offered = MPA_RTR_WRITE | MPA_RTR_SEND, .accepted = MPA_RTR_SEND,
	.chosen = MPA_RTR_SEND,
};

FIXTURE_SETUP(rtr)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, &self->cli, &self->srv));
}

FIXTURE_TEARDOWN(rtr)
{
	close(self->cli);
	close(self->srv);
}

TEST_F(rtr, responder_choice)
{
	uint8_t req[T_FRAME_MAX], exp[T_FRAME_MAX];
	struct mpa_result res;
	size_t n;

	ASSERT_EQ(0, mpa_config(RESP, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(RESP, 9, 9, 0, variant->accepted));
	n = t_frame_v2(req, false, T_C, true, variant->offered, 4, 6, NULL, 0);
	ASSERT_EQ(n, t_send(RAW_I, req, n));
	ASSERT_START(RESP);
	ASSERT_EQ(0, mpa_answer(RESP, MPA_ACCEPT, NULL, 0));
	n = t_frame_v2(exp, true, T_C, true, variant->chosen, 6, 4, NULL, 0);
	t_expect_read(_metadata, RAW_I, exp, n, T_WAIT);
	ASSERT_EQ(0, mpa_getstruct(RESP, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(variant->chosen, res.rtr);
	EXPECT_EQ(MPA_RESULT_PEER_TO_PEER, res.flags & MPA_RESULT_PEER_TO_PEER);
}

TEST_HARNESS_MAIN
