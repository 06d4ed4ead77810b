// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile startup bytes from a raw peer: each gives the documented errno,
 * reason and RFC 5044 section 8 code, leaves the socket FAILED, closes TCP
 * (a FIN for code 4) and delivers nothing. Also what must be accepted:
 * reserved bits and R=1 in a Request, and a slow but timely trickle.
 */
#include <signal.h>
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_TIMEOUT	8000
#define T_SHORT		300
#define T_WAIT		10000

FIXTURE(hostile)
{
	int mpa;	/* the module's socket */
	int raw;	/* the raw peer */
};

FIXTURE_VARIANT(hostile)
{
	int family;
};

FIXTURE_VARIANT_ADD(hostile, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(hostile, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(hostile)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->raw, &self->mpa));
}

FIXTURE_TEARDOWN(hostile)
{
	close(self->mpa);
	if (self->raw >= 0)
		close(self->raw);
}

/*
 * The socket failed as it should: errno already checked by the caller;
 * MPA_ERROR, state FAILED, nothing readable on it.
 */
static void check_failed(struct __test_metadata *_metadata, int m,
			 __u32 code, __u32 reason, int err)
{
	char buf[64];
	ssize_t r;

	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, code, reason, err);
	r = recv(m, buf, sizeof(buf), MSG_DONTWAIT);
	EXPECT_GE(0, r);
	if (r > 0)
		TH_LOG("%zd octets delivered after a failed startup", r);
}

/* Responder, blocking: the raw initiator's @len octets, then EPROTO. */
static void responder_fails(struct __test_metadata *_metadata,
			    FIXTURE_DATA(hostile) *self, const void *bytes,
			    size_t len, __u32 reason)
{
	if (mpa_get(self->mpa, MPA_ROLE) != MPA_ROLE_RESPONDER)
		ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER,
					T_TIMEOUT));
	ASSERT_EQ(len, t_send(self->raw, bytes, len));
	EXPECT_EQ(-1, mpa_start(self->mpa));
	EXPECT_EQ(EPROTO, errno);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP, reason, EPROTO);
	/* Closed with a FIN, no Reply before it. */
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
}

TEST_F(hostile, bad_key_http)
{
	static const char http[] =
		"GET / HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n";

	responder_fails(_metadata, self, http, sizeof(http) - 1,
			MPA_REASON_BAD_KEY);
}

TEST_F(hostile, bad_key_zeros)
{
	uint8_t zeros[T_HDR] = {};

	responder_fails(_metadata, self, zeros, sizeof(zeros),
			MPA_REASON_BAD_KEY);
}

TEST_F(hostile, bad_key_tls_hello)
{
	uint8_t hello[T_HDR + 12] = { 0x16, 0x03, 0x01, 0x00, 0x1c, 0x01 };

	responder_fails(_metadata, self, hello, sizeof(hello),
			MPA_REASON_BAD_KEY);
}

TEST_F(hostile, bad_key_one_octet)
{
	uint8_t req[T_HDR];

	t_frame(req, false, T_C, 1, NULL, 0);
	req[15] ^= 0x20;	/* "MPA ID Req FramE" */
	responder_fails(_metadata, self, req, sizeof(req), MPA_REASON_BAD_KEY);
}

/*
 * A greeting shorter than a frame (a POP3 server's): not MPA from its
 * first octet (R-7.1.1-2), refused then, not left waiting for 20 octets
 * that never come until the startup timeout (which it was: ETIMEDOUT,
 * reason TIMEOUT). A greeting that is a Key's start waits on
 * (header_cut_stall).
 */
TEST_F(hostile, bad_key_short_greeting)
{
	static const char ok[] = "+OK\r\n";

	responder_fails(_metadata, self, ok, sizeof(ok) - 1,
			MPA_REASON_BAD_KEY);
}

TEST_F(hostile, bad_revision_3)
{
	uint8_t req[T_HDR];

	t_frame(req, false, T_C, 3, NULL, 0);
	responder_fails(_metadata, self, req, sizeof(req), MPA_REASON_BAD_REV);
}

TEST_F(hostile, bad_revision_255)
{
	uint8_t req[T_HDR + 4];
	struct mpa_frame_info fi;

	t_frame(req, false, T_M | T_C, 255, "abcd", 4);
	responder_fails(_metadata, self, req, sizeof(req), MPA_REASON_BAD_REV);
	/* a whole frame is taken in as any other: it says what came */
	t_get_frame(_metadata, self->mpa, &fi);
	EXPECT_EQ(255, fi.revision);
	EXPECT_EQ(4, fi.pd_len);
}

/*
 * R-7.1.1-16: a Rev it cannot work with is refused on the header alone,
 * not after the Private Data it announces, which need not come: the
 * startup waited for it until its timeout (ETIMEDOUT, reason TIMEOUT).
 */
TEST_F(hostile, bad_revision_pd_unsent)
{
	uint8_t req[T_HDR];

	t_hdr(req, false, T_C, 3, 100);
	responder_fails(_metadata, self, req, sizeof(req), MPA_REASON_BAD_REV);
}

TEST_F(hostile, pd_length_513)
{
	uint8_t req[T_HDR + 513];

	t_hdr(req, false, T_C, 1, 513);
	t_pattern(req + T_HDR, 513, 1);
	responder_fails(_metadata, self, req, sizeof(req),
			MPA_REASON_PD_TOO_LONG);
}

TEST_F(hostile, pd_length_65535)
{
	uint8_t req[T_HDR];

	t_hdr(req, false, T_C, 1, 0xffff);
	responder_fails(_metadata, self, req, sizeof(req),
			MPA_REASON_PD_TOO_LONG);
}

/* Rev 2 with E set but no room for the IRD/ORD block. */
TEST_F(hostile, rev2_block_missing)
{
	uint8_t req[T_HDR + 2];

	t_hdr(req, false, T_C | T_E, 2, 2);
	req[T_HDR] = req[T_HDR + 1] = 0;
	responder_fails(_metadata, self, req, sizeof(req), MPA_REASON_V2_SHORT);
}

TEST_F(hostile, reply_at_responder)
{
	uint8_t rep[T_HDR];

	t_frame(rep, true, T_C, 1, NULL, 0);
	responder_fails(_metadata, self, rep, sizeof(rep),
			MPA_REASON_REPLY_AT_RESPONDER);
}

/*
 * Rev 2 peer-to-peer with no RTR type the Responder accepts: it answers
 * with a Reply, R=1, its IRD/ORD block and no RTR type (R-7.1.2-18), and
 * keeps TCP open (R-7.1.2-7).
 */
TEST_F(hostile, rev2_no_common_rtr)
{
	uint8_t req[T_HDR + 4], rep[T_HDR + 4], exp[T_HDR + 4];

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->mpa, 4, 4, 0, MPA_RTR_WRITE));
	t_frame_v2(req, false, T_C, true, MPA_RTR_READ | MPA_RTR_SEND, 4, 4,
		   NULL, 0);
	ASSERT_EQ(sizeof(req), t_send(self->raw, req, sizeof(req)));
	EXPECT_EQ(-1, mpa_start(self->mpa));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_MPA_STATE(self->mpa, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(self->mpa, MPA_ERR_NONE, MPA_REASON_NO_RTR,
			 ECONNREFUSED);
	ASSERT_EQ(sizeof(rep), t_read(self->raw, rep, sizeof(rep), T_WAIT));
	t_frame_v2(exp, true, T_C | T_R, true, 0, 4, 4, NULL, 0);
	EXPECT_BYTES(exp, rep, sizeof(rep));
	/* no FIN: the plain stream flows both ways */
	EXPECT_TRUE(t_nothing_pending(self->raw));
	t_flow(_metadata, self->raw, self->mpa, "ping", 4, T_WAIT);
	t_flow(_metadata, self->mpa, self->raw, "pong", 4, T_WAIT);
}

/*
 * The same Request with octets right behind it (the plain stream the
 * Initiator would send after a reject it cannot have seen yet): not the
 * reject, but a failed startup, code 4, EARLY_DATA (requirements A6); no
 * Reply before our FIN.
 */
TEST_F(hostile, rev2_no_common_rtr_early_data)
{
	uint8_t req[T_HDR + 4 + 4];

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->mpa, 4, 4, 0, MPA_RTR_WRITE));
	t_frame_v2(req, false, T_C, true, MPA_RTR_READ | MPA_RTR_SEND, 4, 4,
		   NULL, 0);
	memcpy(req + T_HDR + 4, "ping", 4);
	responder_fails(_metadata, self, req, sizeof(req),
			MPA_REASON_EARLY_DATA);
	EXPECT_EQ(-1, mpa_answer(self->mpa, MPA_REJECT, NULL, 0));
	EXPECT_EQ(EPROTO, errno);
}

/*
 * A Rev 2 peer-to-peer Initiator that sends its RTR (a zero-length RDMA
 * Write, its first FPDU) with its Request, before the Reply: RFC 6581 has
 * it follow the Reply. Code 4, EARLY_DATA (A6), no Reply.
 */
TEST_F(hostile, rev2_rtr_before_reply)
{
	static const uint8_t rtr_write[] = {
		0xc1, 0x40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	};
	uint8_t buf[T_HDR + 4 + 64];
	struct t_fpdu_info info;
	size_t n;

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->mpa, 4, 4, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_WRITE));
	n = t_frame_v2(buf, false, T_C, true, MPA_RTR_WRITE, 4, 4, NULL, 0);
	n += t_fpdu_encode(buf + n, 0, false, rtr_write, sizeof(rtr_write),
			   &info);
	responder_fails(_metadata, self, buf, n, MPA_REASON_EARLY_DATA);
	EXPECT_EQ(-1, mpa_answer(self->mpa, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EPROTO, errno);
}

/*
 * The same Request after the Responder's own shutdown(SHUT_WR): its Reply
 * cannot go, and the reject stands all the same (REJECTED, NO_RTR,
 * ECONNREFUSED); it was a failure blamed on the peer (FAILED, code 1,
 * PEER_CLOSED, ECONNRESET). The peer gets our FIN, no Reply.
 */
TEST_F(hostile, rev2_no_common_rtr_after_shut_wr)
{
	uint8_t req[T_HDR + 4];

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set_enh(self->mpa, 4, 4, 0, MPA_RTR_WRITE));
	t_start_nonblock(_metadata, self->mpa);
	ASSERT_EQ(0, shutdown(self->mpa, SHUT_WR));
	t_frame_v2(req, false, T_C, true, MPA_RTR_READ | MPA_RTR_SEND, 4, 4,
		   NULL, 0);
	ASSERT_EQ(sizeof(req), t_send(self->raw, req, sizeof(req)));
	ASSERT_LE(0, t_wait_startup(self->mpa, T_WAIT));
	EXPECT_MPA_STATE(self->mpa, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(self->mpa, MPA_ERR_NONE, MPA_REASON_NO_RTR,
			 ECONNREFUSED);
	EXPECT_EQ(ECONNREFUSED, t_so_error(self->mpa));
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
	/* the plain stream still comes in */
	t_flow(_metadata, self->raw, self->mpa, "ping", 4, T_WAIT);
}

/* The non-blocking face of the same: EPOLLERR, SO_ERROR, MPA_ERROR. */
TEST_F(hostile, bad_key_nonblocking)
{
	static const char junk[] = "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n";

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, self->mpa);
	ASSERT_EQ(sizeof(junk) - 1, t_send(self->raw, junk, sizeof(junk) - 1));
	EXPECT_POLLERR(self->mpa, T_WAIT);
	EXPECT_EQ(EPROTO, t_so_error(self->mpa));
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP, MPA_REASON_BAD_KEY,
		     EPROTO);
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
}

/* PD_Length says 100; 10 octets, then the FIN. */
/*
 * The first @len octets of @req come once MPA_START sleeps in its
 * setsockopt, then the FIN, in the middle of the frame: a truncated frame.
 */
static void cut_fin(struct __test_metadata *_metadata,
		    FIXTURE_DATA(hostile) *self, const uint8_t *req, size_t len)
{
	struct t_raw_peer p = { .fd = self->raw, .wait_tid = gettid(),
				.wait_nr = SYS_setsockopt, .wr = req,
				.wr_len = len, .end = SHUT_WR };
	int err;

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	EXPECT_EQ(-1, t_start_against(_metadata, t_raw_peer_run, &p, self->mpa,
				      &err));
	ASSERT_EQ(0, p.wait_rc);
	EXPECT_EQ(EPROTO, err);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP,
		     MPA_REASON_TRUNCATED, EPROTO);
}

/* The first @len octets of @req, then nothing: the timeout bounds it. */
static void cut_stall(struct __test_metadata *_metadata,
		      FIXTURE_DATA(hostile) *self, const uint8_t *req,
		      size_t len)
{
	long t0;

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_SHORT));
	ASSERT_EQ(len, t_send(self->raw, req, len));
	t0 = t_now_ms();
	EXPECT_EQ(-1, mpa_start(self->mpa));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(T_SHORT - 50, t_now_ms() - t0);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT,
		     ETIMEDOUT);
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
}

TEST_F(hostile, pd_length_lie_fin)
{
	uint8_t req[T_HDR + 10];

	t_hdr(req, false, T_C, 1, 100);
	t_pattern(req + T_HDR, 10, 2);
	cut_fin(_metadata, self, req, sizeof(req));
}

/* The same, all of it (and the FIN) queued before MPA_START. */
TEST_F(hostile, pd_length_lie_fin_before_start)
{
	uint8_t req[T_HDR + 10];

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_hdr(req, false, T_C, 1, 100);
	t_pattern(req + T_HDR, 10, 2);
	ASSERT_EQ(sizeof(req), t_send(self->raw, req, sizeof(req)));
	ASSERT_EQ(0, shutdown(self->raw, SHUT_WR));
	ASSERT_EQ(0, t_wait_acked(self->raw, T_WAIT));
	EXPECT_EQ(-1, mpa_start(self->mpa));
	EXPECT_EQ(EPROTO, errno);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP,
		     MPA_REASON_TRUNCATED, EPROTO);
}

/* PD_Length says 100; 10 octets, then nothing: the timeout bounds it. */
TEST_F(hostile, pd_length_lie_stall)
{
	uint8_t req[T_HDR + 10];

	t_hdr(req, false, T_C, 1, 100);
	t_pattern(req + T_HDR, 10, 3);
	cut_stall(_metadata, self, req, sizeof(req));
}

TEST_F(hostile, header_cut_fin)
{
	uint8_t req[T_HDR];

	t_frame(req, false, T_C, 1, NULL, 0);
	cut_fin(_metadata, self, req, 11);
}

TEST_F(hostile, header_cut_stall)
{
	uint8_t req[T_HDR];

	t_frame(req, false, T_C, 1, NULL, 0);
	cut_stall(_metadata, self, req, 19);
}

/* A reset in the middle of a frame: a truncated frame, SO_ERROR ECONNRESET. */
TEST_F(hostile, header_cut_rst)
{
	struct mpa_error_info ei;
	uint8_t req[T_HDR];

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	t_start_nonblock(_metadata, self->mpa);
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(8, t_send(self->raw, req, 8));
	ASSERT_EQ(0, t_wait_acked(self->raw, T_WAIT));
	mpa_close_abort(self->raw);
	self->raw = -1;
	EXPECT_POLLERR(self->mpa, T_WAIT);
	EXPECT_EQ(ECONNRESET, t_so_error(self->mpa));
	EXPECT_MPA_STATE(self->mpa, MPA_STATE_FAILED);
	ASSERT_EQ(0, mpa_getstruct(self->mpa, MPA_ERROR, &ei, sizeof(ei)));
	/*
	 * What was queued of the frame makes it a truncated frame, code 4
	 * (mpa.rst): unless the reset took the queue with it before MPA
	 * looked, which leaves a connection closed before any frame, code 1.
	 */
	if (ei.reason == MPA_REASON_TRUNCATED) {
		EXPECT_EQ(MPA_ERR_STARTUP, ei.code);
		EXPECT_EQ(EPROTO, ei.errnum);
	} else {
		EXPECT_EQ(MPA_REASON_PEER_CLOSED, ei.reason);
		EXPECT_EQ(MPA_ERR_TCP_CLOSED, ei.code);
		EXPECT_EQ(ECONNRESET, ei.errnum);
	}
}

/* Res bits and R=1 in a Request are never checked (R-7.1.1-12/13). */
/* The Request @req (@len octets) is taken: the frame as the peer's. */
static void request_taken(struct __test_metadata *_metadata,
			  FIXTURE_DATA(hostile) *self, const uint8_t *req,
			  size_t len, struct mpa_frame_info *fi)
{
	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(len, t_send(self->raw, req, len));
	ASSERT_START(self->mpa);
	t_get_frame(_metadata, self->mpa, fi);
}

/* MPA_ACCEPT: Full Operation, and our Reply has Res zero. */
static void reply_plain(struct __test_metadata *_metadata,
			FIXTURE_DATA(hostile) *self)
{
	uint8_t exp[T_HDR];

	ASSERT_EQ(0, mpa_answer(self->mpa, MPA_ACCEPT, NULL, 0));
	EXPECT_MPA_STATE(self->mpa, MPA_STATE_FULL);
	t_frame(exp, true, T_C, 1, NULL, 0);
	t_expect_read(_metadata, self->raw, exp, T_HDR, T_WAIT);
}

TEST_F(hostile, request_res_bits_accepted)
{
	uint8_t req[T_FRAME_MAX];
	struct mpa_frame_info fi;

	request_taken(_metadata, self, req,
		      t_frame(req, false, T_C | 0x1f, 1, "r", 1), &fi);
	EXPECT_EQ(0x1f, fi.res);
	EXPECT_EQ(MPA_FRAME_CRC, fi.flags);
	reply_plain(_metadata, self);
}

TEST_F(hostile, request_r_bit_accepted)
{
	uint8_t req[T_HDR];
	struct mpa_frame_info fi;

	request_taken(_metadata, self, req,
		      t_frame(req, false, T_M | T_C | T_R, 1, NULL, 0), &fi);
	EXPECT_EQ(MPA_FRAME_MARKERS | MPA_FRAME_CRC | MPA_FRAME_REJECT,
		  fi.flags);
	reply_plain(_metadata, self);
}

/* In Rev 2, 0x10 is E and only 0x0f are Res. */
TEST_F(hostile, rev2_res_bits_accepted)
{
	uint8_t req[T_FRAME_MAX];
	struct mpa_frame_info fi;

	request_taken(_metadata, self, req,
		      t_frame_v2(req, false, T_C | 0x0f, false, 0, 1, 1, NULL,
				 0), &fi);
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(0x0f, fi.res);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED, fi.flags);
}

/* One octet every 20 ms: slow, but within the timeout. */
TEST_F(hostile, trickle_in_time)
{
	uint8_t req[T_FRAME_MAX], got[16];
	struct t_raw_peer p = { .fd = self->raw, .trickle_ms = 20, .wr = req };
	int one = 1, err;

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_TIMEOUT));
	ASSERT_EQ(0, setsockopt(self->raw, SOL_TCP, TCP_NODELAY, &one,
				sizeof(one)));
	p.wr_len = t_frame(req, false, T_C, 1, "trickled", 8);
	EXPECT_EQ(0, t_start_against(_metadata, t_raw_peer_run, &p, self->mpa,
				     &err))
		TH_LOG("errno %d", err);
	EXPECT_EQ((ssize_t)p.wr_len, p.wr_done);
	EXPECT_MPA_STATE(self->mpa, MPA_STATE_REQUEST_RECEIVED);
	ASSERT_EQ(8, mpa_peer_pd(self->mpa, got, sizeof(got)));
	EXPECT_BYTES("trickled", got, 8);
}

/* One octet every 50 ms of 28: longer than MPA_TIMEOUT allows. */
TEST_F(hostile, trickle_too_slow)
{
	struct t_raw_peer p = { .fd = self->raw, .trickle_ms = 50 };
	uint8_t req[T_FRAME_MAX];
	int one = 1;
	pthread_t t;
	long t0;

	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_RESPONDER, T_SHORT));
	ASSERT_EQ(0, setsockopt(self->raw, SOL_TCP, TCP_NODELAY, &one,
				sizeof(one)));
	p.wr = req;
	p.wr_len = t_frame(req, false, T_C, 1, "trickled", 8);
	t0 = t_now_ms();
	ASSERT_EQ(0, pthread_create(&t, NULL, t_raw_peer_run, &p));
	EXPECT_EQ(-1, mpa_start(self->mpa));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(T_SHORT - 50, t_now_ms() - t0);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT,
		     ETIMEDOUT);
	pthread_join(t, NULL);
}

/* The initiator's side: what a hostile "responder" can send back. */
static void initiator_fails(struct __test_metadata *_metadata,
			    FIXTURE_DATA(hostile) *self, const void *bytes,
			    size_t len, int end, __u32 reason)
{
	struct t_raw_peer p = { .fd = self->raw, .wr = bytes, .wr_len = len,
				.end = end };
	int err;

	if (mpa_get(self->mpa, MPA_ROLE) != MPA_ROLE_INITIATOR)
		ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_INITIATOR,
					T_TIMEOUT));
	/* An initiator configured for Rev 2 sends the IRD/ORD block too. */
	p.rd_len = mpa_get(self->mpa, MPA_REVISION) == 2 ? T_HDR + 4 : T_HDR;
	EXPECT_EQ(-1, t_start_against(_metadata, t_raw_peer_run, &p, self->mpa,
				      &err));
	EXPECT_EQ(EPROTO, err);
	ASSERT_EQ(p.rd_len, p.rd_got);
	EXPECT_EQ('q', p.rd[9]);
	check_failed(_metadata, self->mpa, MPA_ERR_STARTUP, reason, EPROTO);
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
}

/* Initiator/Initiator: a Request where the Reply belongs. */
TEST_F(hostile, request_at_initiator)
{
	uint8_t req[T_HDR];

	t_frame(req, false, T_C, 1, NULL, 0);
	initiator_fails(_metadata, self, req, sizeof(req), 0,
			MPA_REASON_INIT_INIT);
}

TEST_F(hostile, initiator_bad_key)
{
	static const char resp[] = "HTTP/1.1 400 Bad Request\r\n\r\n";

	initiator_fails(_metadata, self, resp, sizeof(resp) - 1, 0,
			MPA_REASON_BAD_KEY);
}

/*
 * A short bad Key at an Initiator (bad_key_short_greeting): 10 octets of
 * the Reply Key, one of them off
 */
TEST_F(hostile, initiator_bad_key_short)
{
	static const char rep[] = "MPA ID Rxp";

	initiator_fails(_metadata, self, rep, sizeof(rep) - 1, 0,
			MPA_REASON_BAD_KEY);
}

TEST_F(hostile, initiator_bad_revision)
{
	uint8_t rep[T_HDR];

	t_frame(rep, true, T_C, 3, NULL, 0);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_BAD_REV);
}

/* bad_revision_pd_unsent at an Initiator: Rev 3, then a Rev 2 Reply */
TEST_F(hostile, initiator_bad_revision_pd_unsent)
{
	uint8_t rep[T_HDR];

	t_hdr(rep, true, T_C, 3, 100);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_BAD_REV);
}

TEST_F(hostile, initiator_rev_mismatch_pd_unsent)
{
	uint8_t rep[T_HDR];

	t_hdr(rep, true, T_C | T_E, 2, 100);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_REV_MISMATCH);
}

/* A Rev 0 Reply, the Initiator not permissive (Appendix C.2.3). */
TEST_F(hostile, initiator_rev0_pd_unsent)
{
	uint8_t rep[T_HDR];

	t_hdr(rep, true, T_M | T_C, 0, 100);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_REV0);
}

TEST_F(hostile, initiator_pd_length_513)
{
	uint8_t rep[T_HDR + 513];

	t_hdr(rep, true, T_C, 1, 513);
	t_pattern(rep + T_HDR, 513, 4);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_PD_TOO_LONG);
}

/* A Rev 1 Request answered with Rev 2. */
TEST_F(hostile, initiator_rev_mismatch)
{
	uint8_t rep[T_HDR + 4];

	t_frame_v2(rep, true, T_C, false, 0, 1, 1, NULL, 0);
	initiator_fails(_metadata, self, rep, sizeof(rep), 0,
			MPA_REASON_REV_MISMATCH);
}

TEST_F(hostile, initiator_reply_cut_fin)
{
	uint8_t rep[T_HDR + 10];

	t_hdr(rep, true, T_C, 1, 100);
	t_pattern(rep + T_HDR, 10, 5);
	initiator_fails(_metadata, self, rep, sizeof(rep), SHUT_WR,
			MPA_REASON_TRUNCATED);
}

/* Rev 2 Replies that do not answer the enhanced Request. */
static void rev2_reply_fails(struct __test_metadata *_metadata,
			     FIXTURE_DATA(hostile) *self, const uint8_t *rep,
			     size_t len, __u32 reason)
{
	ASSERT_EQ(0, mpa_config(self->mpa, MPA_ROLE_INITIATOR, T_TIMEOUT));
	ASSERT_EQ(0, mpa_set(self->mpa, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(self->mpa, 4, 4, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_WRITE | MPA_RTR_READ));
	initiator_fails(_metadata, self, rep, len, 0, reason);
}

TEST_F(hostile, rev2_reply_rev1)
{
	uint8_t rep[T_HDR];

	t_frame(rep, true, T_C, 1, NULL, 0);
	rev2_reply_fails(_metadata, self, rep, sizeof(rep),
			 MPA_REASON_REV_MISMATCH);
}

TEST_F(hostile, rev2_reply_not_enhanced)
{
	uint8_t rep[T_HDR];

	t_frame(rep, true, T_C, 2, NULL, 0);
	rev2_reply_fails(_metadata, self, rep, sizeof(rep),
			 MPA_REASON_V2_MISMATCH);
}

TEST_F(hostile, rev2_reply_no_p2p)
{
	uint8_t rep[T_HDR + 4];

	t_frame_v2(rep, true, T_C, false, 0, 4, 4, NULL, 0);
	rev2_reply_fails(_metadata, self, rep, sizeof(rep),
			 MPA_REASON_P2P_MISMATCH);
}

TEST_F(hostile, rev2_reply_two_rtr)
{
	uint8_t rep[T_HDR + 4];

	t_frame_v2(rep, true, T_C, true, MPA_RTR_WRITE | MPA_RTR_READ, 4, 4,
		   NULL, 0);
	rev2_reply_fails(_metadata, self, rep, sizeof(rep),
			 MPA_REASON_RTR_MISMATCH);
}

TEST_F(hostile, rev2_reply_rtr_not_offered)
{
	uint8_t rep[T_HDR + 4];

	t_frame_v2(rep, true, T_C, true, MPA_RTR_SEND, 4, 4, NULL, 0);
	rev2_reply_fails(_metadata, self, rep, sizeof(rep),
			 MPA_REASON_RTR_MISMATCH);
}

TEST_HARNESS_MAIN
