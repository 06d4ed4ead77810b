// SPDX-License-Identifier: GPL-2.0
/*
 * TCP urgent data at an MPA socket (mpa.rst, "Urgent data"): MPA carries
 * none, and an MPA socket is SO_OOBINLINE from the moment MPA is attached,
 * so a peer's urgent octet is an ordinary octet of the stream, in every
 * phase. A raw TCP peer sends MPA frames and FPDUs with one octet marked
 * urgent (send(MSG_OOB) of the octets up to it): the frame or FPDU is
 * delivered as it was sent. A stray urgent octet the peer slips in is a
 * stray octet in the framing: an invalid startup frame (code 4) or a bad
 * FPDU (code 2). Never a stall (every wait has a deadline far below the
 * startup timeout), never a silent end of file. Urgent data before
 * MPA_START is read inline, and the startup that follows works.
 */
#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000
/* far above T_WAIT: a frame that stalls shows as a missed deadline */
#define T_STARTUP_TIMEOUT 60000

static uint8_t wbuf[T_FPDU_MAX], ubuf[T_ULPDU_BUF], rbuf[T_ULPDU_BUF];

/* Send @len octets with octet @k urgent (the last one of a MSG_OOB send). */
static int send_urgent_at(int fd, const void *buf, size_t len, size_t k)
{
	if (send(fd, buf, k + 1, MSG_OOB | MSG_NOSIGNAL) != (ssize_t)(k + 1))
		return -1;
	if (k + 1 < len &&
	    t_send(fd, (const char *)buf + k + 1, len - k - 1) !=
	    (ssize_t)(len - k - 1))
		return -1;
	return 0;
}

/*
 * The next recv() of the MPA socket @fd returns the ULPDU @u of @len
 * octets whole (MSG_EOR); poll never reports POLLPRI on the way.
 */
static void expect_ulpdu(struct __test_metadata *_metadata, int fd,
			 const uint8_t *u, size_t len)
{
	int ev, flags;
	ssize_t n;

	ev = t_poll(fd, POLLIN, T_WAIT);
	ASSERT_EQ(POLLIN, ev & POLLIN)
		TH_LOG("revents 0x%x, state %ld: no ULPDU of %zu octets",
		       ev, mpa_state(fd), len);
	/* MPA has no urgent data to offer */
	EXPECT_EQ(0, t_poll(fd, POLLPRI, 0) & POLLPRI);
	n = t_recv_flags(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT, &flags);
	ASSERT_EQ((ssize_t)len, n) TH_LOG("errno %d (%s)", errno,
					  strerror(errno));
	EXPECT_BYTES(u, rbuf, len);
	EXPECT_TRUE(flags & MSG_EOR);
}

/* The peer's FIN reads as end of file, within the deadline. */
static void expect_eof(struct __test_metadata *_metadata, int fd)
{
	int ev = t_poll(fd, POLLIN, T_WAIT);

	ASSERT_EQ(POLLIN, ev & POLLIN) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(0, recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT))
		TH_LOG("errno %d (%s)", errno, strerror(errno));
}

FIXTURE(urgent)
{
	int m;		/* the MPA socket: the Responder, in Full Operation */
	int raw;	/* the raw Initiator */
	uint32_t pos;	/* the raw peer's stream position */
};

FIXTURE_VARIANT(urgent)
{
	bool markers;	/* the MPA socket wants Markers in what it receives */
};

FIXTURE_VARIANT_ADD(urgent, plain)
{
	.markers = false,
};

FIXTURE_VARIANT_ADD(urgent, markers)
{
	.markers = true,
};

FIXTURE_SETUP(urgent)
{
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &self->raw, &self->m));
	ASSERT_LE(0, t_raw_initiator(self->m, self->raw, T_C, variant->markers,
				     true));
	self->pos = 0;
}

FIXTURE_TEARDOWN(urgent)
{
	close(self->m);
	close(self->raw);
}

/* One FPDU of @len octets (seed @seed) into wbuf: its wire length. */
static size_t fpdu(FIXTURE_DATA(urgent) *self, bool markers, size_t len,
		   unsigned int seed)
{
	size_t n;

	t_fill(ubuf, len, seed);
	n = t_fpdu_encode(wbuf, self->pos, markers, ubuf, len, NULL);
	self->pos += n;
	return n;
}

/* An urgent octet in the middle of an FPDU: it is delivered whole. */
TEST_F(urgent, inside_fpdu)
{
	size_t n;

	n = fpdu(self, variant->markers, 1000, 1);
	ASSERT_EQ(0, send_urgent_at(self->raw, wbuf, n, n / 2));
	expect_ulpdu(_metadata, self->m, ubuf, 1000);

	n = fpdu(self, variant->markers, 100, 2);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));
	expect_ulpdu(_metadata, self->m, ubuf, 100);

	shutdown(self->raw, SHUT_WR);
	expect_eof(_metadata, self->m);
	EXPECT_MPA_ERROR(self->m, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED, 0);
}

/*
 * The urgent octet is the first octet of an FPDU (the mark on an FPDU
 * boundary): that FPDU and the next are delivered, then the end of file.
 */
TEST_F(urgent, on_fpdu_boundary)
{
	int atmark = -1;
	size_t n;

	n = fpdu(self, variant->markers, 200, 3);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));
	expect_ulpdu(_metadata, self->m, ubuf, 200);

	n = fpdu(self, variant->markers, 300, 4);
	ASSERT_EQ(0, send_urgent_at(self->raw, wbuf, n, 0));
	/*
	 * The FPDU is here, TCP's urgent mark on its first octet: no mark
	 * for MPA's reader (as no EPOLLPRI); it used to say 1
	 */
	ASSERT_TRUE(t_poll(self->m, POLLIN, T_WAIT) & POLLIN);
	ASSERT_EQ(0, ioctl(self->m, SIOCATMARK, &atmark));
	EXPECT_EQ(0, atmark);
	expect_ulpdu(_metadata, self->m, ubuf, 300);

	n = fpdu(self, variant->markers, 400, 5);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));
	expect_ulpdu(_metadata, self->m, ubuf, 400);

	shutdown(self->raw, SHUT_WR);
	expect_eof(_metadata, self->m);
	EXPECT_MPA_ERROR(self->m, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED, 0);
}

/*
 * The first octet behind the Reply, the Initiator's first FPDU's first
 * (a Marker's with Markers), is urgent: that FPDU is delivered, and it
 * ends the hold on the Responder's sends (R-7.1.2-15), whose ULPDU sent
 * before then goes out.
 */
TEST_F(urgent, first_fpdu_first_octet)
{
	uint8_t exp[64];
	size_t n, e;

	ASSERT_EQ(4, send(self->m, "pong", 4, MSG_NOSIGNAL));
	EXPECT_TRUE(t_quiet(self->raw, self->m));
	n = fpdu(self, variant->markers, 50, 11);
	ASSERT_EQ(0, send_urgent_at(self->raw, wbuf, n, 0));
	expect_ulpdu(_metadata, self->m, ubuf, 50);
	/* the Responder's octets start right behind its Reply, no Markers */
	e = t_fpdu_encode(exp, 0, false, "pong", 4, NULL);
	ASSERT_EQ((ssize_t)e, t_read(self->raw, rbuf, e, T_WAIT));
	EXPECT_BYTES(exp, rbuf, e);

	shutdown(self->raw, SHUT_WR);
	expect_eof(_metadata, self->m);
	EXPECT_MPA_ERROR(self->m, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED, 0);
}

/* The last octet of an FPDU (its CRC) is urgent: delivered. */
TEST_F(urgent, last_octet)
{
	size_t n;

	n = fpdu(self, variant->markers, 64, 6);
	ASSERT_EQ(0, send_urgent_at(self->raw, wbuf, n, n - 1));
	expect_ulpdu(_metadata, self->m, ubuf, 64);
	n = fpdu(self, variant->markers, 64, 7);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));
	expect_ulpdu(_metadata, self->m, ubuf, 64);
}

/*
 * A stray urgent octet between two FPDUs (send(fd, "x", 1, MSG_OOB)):
 * the framing reads it as the start of an FPDU whose ULPDU_Length is
 * 0x78.., and its CRC is wrong: EBADMSG, code 2, nothing more delivered.
 */
TEST_F(urgent, stray_octet)
{
	size_t n;
	int ev;

	n = fpdu(self, variant->markers, 100, 8);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));
	ASSERT_EQ(1, send(self->raw, "x", 1, MSG_OOB | MSG_NOSIGNAL));
	/* long enough to complete the misframed FPDU (30720 + octets) */
	n = fpdu(self, variant->markers, 40000, 9);
	ASSERT_EQ((ssize_t)n, t_send(self->raw, wbuf, n));

	t_fill(ubuf, 100, 8);
	expect_ulpdu(_metadata, self->m, ubuf, 100);
	ev = t_poll(self->m, POLLIN, T_WAIT);
	ASSERT_EQ(POLLIN, ev & POLLIN) TH_LOG("revents 0x%x", ev);
	EXPECT_EQ(0, t_poll(self->m, POLLPRI, 0) & POLLPRI);
	EXPECT_EQ(-1, recv(self->m, rbuf, sizeof(rbuf), MSG_DONTWAIT));
	EXPECT_EQ(EBADMSG, errno) TH_LOG("errno %d (%s)", errno,
					 strerror(errno));
	EXPECT_MPA_ERROR(self->m, MPA_ERR_CRC, MPA_REASON_CRC, EBADMSG);
	/* sticky: the FIN changes nothing */
	shutdown(self->raw, SHUT_WR);
	EXPECT_EQ(-1, recv(self->m, rbuf, sizeof(rbuf), 0));
	EXPECT_EQ(EBADMSG, errno);
}

/* Startup: a Responder against a raw Initiator, an Initiator likewise. */

static void responder(struct __test_metadata *_metadata, int *m, int *raw)
{
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, raw, m));
	ASSERT_EQ(0, mpa_config(*m, MPA_ROLE_RESPONDER, T_STARTUP_TIMEOUT));
	ASSERT_EQ(0, t_nonblock(*m));
}

/* The Responder @m got the Request: accept; an FPDU comes through. */
static void accept_and_fpdu(struct __test_metadata *_metadata, int m,
			    int raw)
{
	uint8_t fr[T_HDR];
	struct t_hdr_view h;
	size_t n;

	ASSERT_EQ(0, t_blocking(m));
	ASSERT_EQ(0, mpa_answer(m, MPA_ACCEPT, NULL, 0));
	ASSERT_EQ(T_HDR, t_read(raw, fr, T_HDR, T_WAIT));
	t_parse(fr, &h);
	EXPECT_EQ('p', h.key);
	t_fill(ubuf, 77, 10);
	n = t_fpdu_encode(wbuf, 0, false, ubuf, 77, NULL);
	ASSERT_EQ((ssize_t)n, t_send(raw, wbuf, n));
	expect_ulpdu(_metadata, m, ubuf, 77);
}

/* @m, a non-blocking Responder, has the Request with Private Data @pd. */
static void request_arrives(struct __test_metadata *_metadata, int m,
			    const char *pd)
{
	int ev, rc;

	rc = mpa_start(m);
	EXPECT_TRUE(!rc || errno == EINPROGRESS) TH_LOG("MPA_START: %s",
							 strerror(errno));
	ev = t_poll(m, POLLIN, T_WAIT);
	ASSERT_EQ(POLLIN, ev & POLLIN)
		TH_LOG("revents 0x%x, state %ld", ev, mpa_state(m));
	EXPECT_EQ(0, t_poll(m, POLLPRI, 0) & POLLPRI);
	ASSERT_EQ(MPA_STATE_REQUEST_RECEIVED, mpa_state(m));
	ASSERT_EQ((int)strlen(pd), mpa_peer_pd(m, rbuf, sizeof(rbuf)));
	EXPECT_BYTES(pd, rbuf, strlen(pd));
}

/*
 * An octet of the Request urgent: its first (the mark on the Key's first
 * octet), one of its Key, one of its Private Data, its last (the mark
 * right at the end of the frame, nothing behind it). SO_OOBINLINE: an
 * ordinary octet, not one behind the Request (requirements A6, never
 * EARLY_DATA), and the startup does not stall.
 */
TEST(request_octet_urgent)
{
	const char *pd = "hello, urgent";
	const size_t len = T_HDR + 13;
	const size_t at[] = { 0, 5, 25, len - 1 };
	uint8_t fr[T_FRAME_MAX];
	int m, raw, failed;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(at); i++) {
		failed = _metadata->exit_code;
		/* an ASSERT below ends the test: say the case first */
		TH_LOG("the Request's octet %zu urgent", at[i]);
		responder(_metadata, &m, &raw);
		ASSERT_EQ(len, t_frame(fr, false, T_C, 1, pd, 13));
		ASSERT_EQ(0, send_urgent_at(raw, fr, len, at[i]));
		request_arrives(_metadata, m, pd);
		EXPECT_MPA_ERROR(m, MPA_ERR_NONE, MPA_REASON_NONE, 0);
		accept_and_fpdu(_metadata, m, raw);
		if (_metadata->exit_code != failed)
			TH_LOG("... failed with the Request's octet %zu urgent",
			       at[i]);
		close(m);
		close(raw);
	}
}

/*
 * A stray urgent octet inside the Request's Key: an invalid frame, code 4
 * (BAD_KEY), the Responder closes; the startup fails at once.
 */
TEST(request_stray_octet)
{
	uint8_t fr[T_FRAME_MAX];
	size_t len;
	int m, raw, ev;

	responder(_metadata, &m, &raw);
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EINPROGRESS, errno);
	len = t_frame(fr, false, T_C, 1, NULL, 0);
	ASSERT_EQ(8, t_send(raw, fr, 8));
	ASSERT_EQ(1, send(raw, "x", 1, MSG_OOB | MSG_NOSIGNAL));
	ASSERT_EQ((ssize_t)len - 8, t_send(raw, fr + 8, len - 8));
	ev = t_poll(m, POLLIN | POLLOUT, T_WAIT);
	EXPECT_EQ(POLLERR, ev & POLLERR) TH_LOG("revents 0x%x, state %ld", ev,
						mpa_state(m));
	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_BAD_KEY, EPROTO);
	EXPECT_EQ(0, t_wait_eof(raw, T_WAIT));
	close(m);
	close(raw);
}

/* An Initiator gets a Reply with an urgent octet: Full Operation. */
TEST(reply_octet_urgent)
{
	uint8_t fr[T_FRAME_MAX];
	struct t_hdr_view h;
	int m, raw;
	size_t len, n;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &m, &raw));
	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_INITIATOR, T_STARTUP_TIMEOUT));
	ASSERT_EQ(0, t_nonblock(m));
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EINPROGRESS, errno);
	ASSERT_EQ(T_HDR, t_read(raw, fr, T_HDR, T_WAIT));
	t_parse(fr, &h);
	ASSERT_EQ('q', h.key);
	len = t_frame(fr, true, T_C, 1, "reply", 5);
	ASSERT_EQ(0, send_urgent_at(raw, fr, len, 17));
	ASSERT_LE(0, t_wait_startup(m, T_WAIT));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(m));
	ASSERT_EQ(5, mpa_peer_pd(m, rbuf, sizeof(rbuf)));
	EXPECT_BYTES("reply", rbuf, 5);
	/* and the Initiator's first FPDU goes out */
	ASSERT_EQ(0, t_blocking(m));
	ASSERT_EQ(3, send(m, "abc", 3, MSG_NOSIGNAL));
	n = t_fpdu_encode(ubuf, 0, false, "abc", 3, NULL);
	ASSERT_EQ((ssize_t)n, t_read(raw, wbuf, n, T_WAIT));
	EXPECT_BYTES(ubuf, wbuf, n);
	EXPECT_EQ(0, t_poll(m, POLLPRI, 0) & POLLPRI);
	close(m);
	close(raw);
}

/*
 * Urgent data before MPA is attached, and while the attached socket still
 * carries the plain stream: read inline (recv(MSG_OOB) has nothing to
 * give), and the startup that follows works.
 */
TEST(oob_before_startup)
{
	uint8_t fr[T_FRAME_MAX];
	int m, raw, ev;
	size_t len;
	char c[4];

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &raw, &m));
	ASSERT_EQ(1, send(raw, "x", 1, MSG_OOB | MSG_NOSIGNAL));
	ev = t_poll(m, POLLPRI, T_WAIT);
	ASSERT_EQ(POLLPRI, ev & POLLPRI);
	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_RESPONDER, T_STARTUP_TIMEOUT));
	EXPECT_EQ(1, t_read(m, c, 1, T_WAIT));
	EXPECT_EQ('x', c[0]);

	ASSERT_EQ(2, send(raw, "yz", 2, MSG_OOB | MSG_NOSIGNAL));
	ASSERT_EQ(POLLIN, t_poll(m, POLLIN, T_WAIT) & POLLIN);
	EXPECT_EQ(-1, recv(m, c, 1, MSG_OOB | MSG_DONTWAIT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(2, t_read(m, c, 2, T_WAIT));
	EXPECT_BYTES("yz", c, 2);
	EXPECT_TRUE(t_nothing_pending(m));

	ASSERT_EQ(0, t_nonblock(m));
	len = t_frame(fr, false, T_C, 1, "after", 5);
	ASSERT_EQ((ssize_t)len, t_send(raw, fr, len));
	request_arrives(_metadata, m, "after");
	accept_and_fpdu(_metadata, m, raw);
	close(m);
	close(raw);
}

/* SO_OOBINLINE is on from the attach on, and stays on. */
TEST(oobinline_stays_on)
{
	int a, b, v, zero = 0, one = 1;
	socklen_t len = sizeof(v);

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_OOBINLINE, &v, &len));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, mpa_attach(a));
	ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_OOBINLINE, &v, &len));
	EXPECT_EQ(1, v);
	EXPECT_EQ(-1, setsockopt(a, SOL_SOCKET, SO_OOBINLINE, &zero,
				 sizeof(zero)));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, setsockopt(a, SOL_SOCKET, SO_OOBINLINE, &one,
				sizeof(one)));
	ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_OOBINLINE, &v, &len));
	EXPECT_EQ(1, v);
	/* the other SOL_SOCKET options still work */
	EXPECT_EQ(0, setsockopt(a, SOL_SOCKET, SO_KEEPALIVE, &one,
				sizeof(one)));
	ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_KEEPALIVE, &v, &len));
	EXPECT_EQ(1, v);
	close(a);
	close(b);
}

struct oob_flip {
	pthread_t thr;
	volatile int v;
	volatile bool stop;
};

static void *oob_flip_run(void *arg)
{
	struct oob_flip *f = arg;

	while (!f->stop)
		f->v = !f->v;
	return NULL;
}

/*
 * The value MPA checks is the value set: a caller's thread that flips it
 * between MPA's check and the socket layer's read does not turn
 * SO_OOBINLINE off.
 */
TEST(oobinline_flipped)
{
	struct oob_flip f = { .v = 1 };
	socklen_t len = sizeof(int);
	int a, b, v = 1, k, zeros = 0;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	ASSERT_EQ(0, mpa_attach(a));
	ASSERT_EQ(0, pthread_create(&f.thr, NULL, oob_flip_run, &f));
	for (k = 0; k < 20000 && v; k++) {
		if (setsockopt(a, SOL_SOCKET, SO_OOBINLINE, (const void *)&f.v,
			       sizeof(int)))
			zeros++;
		ASSERT_EQ(0, getsockopt(a, SOL_SOCKET, SO_OOBINLINE, &v, &len));
	}
	f.stop = true;
	pthread_join(f.thr, NULL);
	TH_LOG("%d calls, %d refused", k, zeros);
	EXPECT_EQ(1, v) TH_LOG("SO_OOBINLINE off after %d calls", k);
	/* the flips met the calls: some were given 0, some 1 */
	EXPECT_LT(0, zeros);
	EXPECT_LT(zeros, k);
	close(a);
	close(b);
}

TEST_HARNESS_MAIN
