// SPDX-License-Identifier: GPL-2.0
/*
 * Closing an MPA socket (mpa.rst, "Closing"): close() and shutdown() never
 * wait for a peer that does not read. What MPA holds goes to TCP at once,
 * past the send buffer and TCP_NOTSENT_LOWAT, and TCP sends it in the
 * background, FIN last, as it does for an orphan; SO_LINGER {1, 0} resets
 * instead; SO_LINGER {1, N} waits at most N seconds, as on TCP (fixture
 * "stuck": an MPA pair whose Responder stops reading). A Responder's held
 * sends (R-7.1.2-15) keep its FIN behind them: it follows them once the
 * Initiator's first FPDU ends the hold (held_shutdown); close() resets
 * (data.c, held.reset_on_close).
 *
 * The Reply goes out whole and first (R-7.1.2-5, R-7.1.2-7; fixture
 * "reply"): a Responder's send buffer is full of plain stream data sent
 * before MPA_START, so a non-blocking MPA_REJECT or MPA_ACCEPT returns
 * EINPROGRESS with the Reply only partly queued. Stream sends then wait
 * (EAGAIN, no EPOLLOUT) until the whole Reply is queued, and close() and
 * shutdown() queue its rest before the FIN. A raw peer that reads nothing
 * at first then checks every octet: the stream data, the whole Reply, what
 * followed, the end.
 */
#include <signal.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		20000	/* how long a test waits for an event */
#define T_QUIET		300	/* how long "no more room" is watched */
/*
 * close() returns within this: a guard against a hang, not a timing (the
 * peer reads nothing before, so any return shows the call did not wait
 * for it)
 */
#define T_CLOSE_MAX	T_WAIT
/* SO_LINGER's 2 s wait returns within this more (a loose bound) */
#define T_LINGER_SLACK	5000
#define T_LOWAT		16384
#define T_SIZE		MPA_MAX_ULPDU	/* ULPDUs of this size fill the queue */
#define T_MAX_ULPDUS	4096

/* A thread that closes (or shuts down) a socket and times the call. */
struct t_closer {
	pthread_t thr;
	int fd;
	bool shut;		/* shutdown(SHUT_WR) rather than close() */
	long ms;		/* how long it took */
	int rc;
	bool done;
};

static void *t_closer_run(void *arg)
{
	struct t_closer *c = arg;
	long t0 = t_now_ms();

	c->rc = c->shut ? shutdown(c->fd, SHUT_WR) : close(c->fd);
	c->ms = t_now_ms() - t0;
	__atomic_store_n(&c->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static int t_closer_start(struct t_closer *c, int fd, bool shut)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->shut = shut;
	return pthread_create(&c->thr, NULL, t_closer_run, c);
}

/* Wait up to @ms for the call to return: true if it did. */
static bool t_closer_wait(struct t_closer *c, int ms)
{
	long end = t_now_ms() + ms;

	while (!__atomic_load_n(&c->done, __ATOMIC_ACQUIRE)) {
		if (t_now_ms() > end)
			return false;
		t_sleep_ms(5);
	}
	return true;
}

/*
 * stuck: an MPA pair, the Initiator @i the sender, the Responder @r a
 * peer with a small receive buffer that reads nothing until the test says
 * so. The Initiator's sends stop for want of room in TCP (the variant's
 * TCP_NOTSENT_LOWAT or SO_SNDBUF), with ULPDUs still in MPA's own queue.
 */
FIXTURE(stuck)
{
	int i, r;
	size_t sizes[T_MAX_ULPDUS];
	size_t n;
	uint8_t buf[T_SIZE];
};

FIXTURE_VARIANT(stuck)
{
	int family;
	bool markers;
	bool lowat;		/* TCP_NOTSENT_LOWAT, else a small SO_SNDBUF */
};

FIXTURE_VARIANT_ADD(stuck, v4_lowat)
{
	.family = AF_INET, .markers = false, .lowat = true,
};

FIXTURE_VARIANT_ADD(stuck, v6_markers_lowat)
{
	.family = AF_INET6, .markers = true, .lowat = true,
};

FIXTURE_VARIANT_ADD(stuck, v4_sndbuf)
{
	.family = AF_INET, .markers = false, .lowat = false,
};

/*
 * An MPA pair over loopback whose Responder (the accepted end) has a
 * receive buffer of @rcvbuf from before the handshake: the Initiator's TCP
 * then sees a small window and builds segments of half of it at most, so
 * that it may stop taking an FPDU half way. 0, or -1.
 */
static int stuck_pair(int family, int rcvbuf, bool markers, int *i, int *r)
{
	struct t_pair_opts o = { .rcvbuf = rcvbuf };

	if (mpa_tcp_pair_opts(family, &o, i, r))
		return -1;
	if (t_mpa_establish_ms(*i, *r, markers, markers, true, T_WAIT)) {
		close(*i);
		close(*r);
		*i = *r = -1;
		return -1;
	}
	return 0;
}

FIXTURE_SETUP(stuck)
{
	int sndbuf = 16384, lowat = T_LOWAT;
	struct mpa_stats st;
	size_t k;
	ssize_t r;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, stuck_pair(variant->family, 8192, variant->markers,
				&self->i, &self->r));
	if (variant->lowat) {
		ASSERT_EQ(0, setsockopt(self->i, SOL_TCP, TCP_NOTSENT_LOWAT,
					&lowat, sizeof(lowat)));
	} else {
		ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_SNDBUF,
					&sndbuf, sizeof(sndbuf)));
	}

	/* Send until no room comes back for a while. */
	ASSERT_EQ(0, t_nonblock(self->i));
	for (k = 0; k < T_MAX_ULPDUS; k++) {
		self->sizes[k] = T_SIZE - k % 7;
		t_fill(self->buf, self->sizes[k], 7000 + k);
		r = send(self->i, self->buf, self->sizes[k], MSG_NOSIGNAL);
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			if (t_poll(self->i, POLLOUT, T_QUIET) & POLLOUT) {
				k--;
				continue;
			}
			break;
		}
		ASSERT_EQ((ssize_t)self->sizes[k], r);
	}
	ASSERT_GT(T_MAX_ULPDUS, k) TH_LOG("the sender never stopped");
	self->n = k;
	/* MPA holds some: TCP did not take every FPDU whole */
	ASSERT_EQ(0, mpa_getstruct(self->i, MPA_STATS, &st, sizeof(st)));
	TH_LOG("%zu ULPDUs sent, %llu of them taken by TCP", self->n,
	       (unsigned long long)st.tx_fpdus);
	ASSERT_LT(st.tx_fpdus, self->n);
}

FIXTURE_TEARDOWN(stuck)
{
	if (self->i >= 0)
		close(self->i);
	if (self->r >= 0)
		close(self->r);
}

/* The peer reads every ULPDU, intact and in order, then end of file. */
static void stuck_read_all(struct __test_metadata *_metadata,
			   FIXTURE_DATA(stuck) *self)
{
	uint8_t b[8];

	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, T_WAIT));
	t_rx_check(_metadata, self->r, self->sizes, self->n, 7000);
	EXPECT_EQ(0, recv(self->r, b, sizeof(b), 0))
		TH_LOG("no end of file: errno %d", errno);
	EXPECT_MPA_ERROR(self->r, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 0);
}

/*
 * The call must have returned within T_CLOSE_MAX. If it has not, the peer
 * reads to let it return, and the test fails.
 */
static void stuck_wait(struct __test_metadata *_metadata,
		       FIXTURE_DATA(stuck) *self, struct t_closer *c, int ms)
{
	uint8_t *b;
	bool ok = t_closer_wait(c, ms);

	if (!ok) {
		b = malloc(T_ULPDU_BUF);
		while (b && !t_closer_wait(c, 0) &&
		       (t_poll(self->r, POLLIN, 1000) & POLLIN))
			recv(self->r, b, T_ULPDU_BUF, MSG_DONTWAIT);
		free(b);
	}
	pthread_join(c->thr, NULL);
	EXPECT_TRUE(ok) TH_LOG("the call blocked (it took %ld ms once the peer read)",
			       c->ms);
	EXPECT_EQ(0, c->rc);
}

/* close() returns at once; TCP delivers it all in the background. */
TEST_F_TIMEOUT(stuck, close, 120)
{
	struct t_closer c;

	ASSERT_EQ(0, t_closer_start(&c, self->i, false));
	self->i = -1;
	stuck_wait(_metadata, self, &c, T_CLOSE_MAX);
	TH_LOG("close() took %ld ms", c.ms);
	stuck_read_all(_metadata, self);
}

/* shutdown(SHUT_WR): the same, and nothing is lost behind the FIN. */
TEST_F_TIMEOUT(stuck, shutdown, 120)
{
	struct t_closer c;

	ASSERT_EQ(0, t_closer_start(&c, self->i, true));
	stuck_wait(_metadata, self, &c, T_CLOSE_MAX);
	stuck_read_all(_metadata, self);
	EXPECT_EQ(-1, send(self->i, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
}

/* SO_LINGER {1, 0}: close() returns at once and the peer gets a reset. */
TEST_F_TIMEOUT(stuck, linger_zero, 120)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	struct t_closer c;
	uint8_t *b;
	size_t k = 0;
	ssize_t r;

	ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_LINGER, &l,
				sizeof(l)));
	ASSERT_EQ(0, t_closer_start(&c, self->i, false));
	self->i = -1;
	stuck_wait(_metadata, self, &c, T_CLOSE_MAX);
	/* whole FPDUs that arrived before the reset, then ECONNRESET */
	b = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, T_WAIT));
	while ((r = recv(self->r, b, T_ULPDU_BUF, 0)) > 0) {
		ASSERT_GT(self->n, k);
		ASSERT_EQ((ssize_t)self->sizes[k], r);
		k++;
	}
	free(b);
	EXPECT_EQ(-1, r) TH_LOG("end of file after %zu ULPDUs", k);
	EXPECT_EQ(ECONNRESET, errno);
	TH_LOG("%zu of %zu ULPDUs before the reset", k, self->n);
}

/*
 * The peer resets while MPA holds FPDUs, after an FPDU of its own arrived.
 * The reset is the reader's to report, whatever MPA does with what it
 * holds meanwhile: a shutdown(SHUT_WR) then, which hands that to TCP,
 * must not take the socket's error (TCP's sendmsg reads and clears it on
 * a closed socket), nor drop what TCP received before the reset (a TCP
 * closed already has nobody to reset). recv() returns the peer's ULPDU,
 * then ECONNRESET, not an end of file.
 */
TEST_F_TIMEOUT(stuck, peer_reset, 120)
{
	long end = t_now_ms() + T_WAIT;
	uint8_t got[64], want[sizeof(got)];

	t_fill(want, sizeof(want), 77);
	ASSERT_EQ((ssize_t)sizeof(want), send(self->r, want, sizeof(want),
					      MSG_NOSIGNAL));
	ASSERT_TRUE(t_poll(self->i, POLLIN, T_WAIT) & POLLIN);
	/* SO_LINGER {1, 0}: the peer's close resets */
	mpa_close_abort(self->r);
	self->r = -1;
	while (!(t_poll(self->i, 0, 100) & POLLERR) && t_now_ms() < end)
		;
	ASSERT_TRUE(t_poll(self->i, 0, 0) & POLLERR)
		TH_LOG("no reset within %d ms", T_WAIT);
	/* as on TCP: the socket is closed */
	EXPECT_EQ(-1, shutdown(self->i, SHUT_WR));
	EXPECT_EQ(ENOTCONN, errno);
	ASSERT_EQ((ssize_t)sizeof(got), recv(self->i, got, sizeof(got),
					     MSG_DONTWAIT))
		TH_LOG("the ULPDU received before the reset: errno %d", errno);
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
	EXPECT_EQ(-1, recv(self->i, got, sizeof(got), MSG_DONTWAIT))
		TH_LOG("recv() returned, not the reset");
	EXPECT_EQ(ECONNRESET, errno);
}

/*
 * The peer shuts down (its FIN, at an FPDU boundary), then resets. As on
 * TCP, the FIN ended the receive half: recv() returns the ULPDU, then end
 * of file, and leaves the reset's error (TCP's EPIPE once the FIN is in)
 * for SO_ERROR; MPA_ERROR says code 1 with that errno, never a clean
 * end. recv() used to return EPIPE, an errno the table of receive errors
 * does not have.
 */
TEST_F_TIMEOUT(stuck, peer_fin_then_reset, 120)
{
	long end = t_now_ms() + T_WAIT;
	uint8_t got[64], want[sizeof(got)];
	int err = 0;
	socklen_t len = sizeof(err);

	t_fill(want, sizeof(want), 78);
	ASSERT_EQ((ssize_t)sizeof(want), send(self->r, want, sizeof(want),
					      MSG_NOSIGNAL));
	ASSERT_EQ(0, shutdown(self->r, SHUT_WR));
	ASSERT_TRUE(t_poll(self->i, POLLRDHUP, T_WAIT) & POLLRDHUP)
		TH_LOG("the peer's FIN did not come");
	mpa_close_abort(self->r);
	self->r = -1;
	while (!(t_poll(self->i, 0, 100) & POLLERR) && t_now_ms() < end)
		;
	ASSERT_TRUE(t_poll(self->i, 0, 0) & POLLERR)
		TH_LOG("no reset within %d ms", T_WAIT);
	ASSERT_EQ((ssize_t)sizeof(got), recv(self->i, got, sizeof(got),
					     MSG_DONTWAIT))
		TH_LOG("the ULPDU received before the FIN: errno %d", errno);
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
	EXPECT_EQ(0, recv(self->i, got, sizeof(got), MSG_DONTWAIT))
		TH_LOG("not end of file: errno %d", errno);
	EXPECT_EQ(0, recv(self->i, got, sizeof(got), MSG_DONTWAIT));
	ASSERT_EQ(0, getsockopt(self->i, SOL_SOCKET, SO_ERROR, &err, &len));
	EXPECT_EQ(EPIPE, err);
	EXPECT_MPA_ERROR(self->i, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 EPIPE);
}

/*
 * SO_LINGER {1, 2}: close() waits for the peer to take it all, 2 s at
 * most, then returns; as on TCP the rest still goes out afterwards.
 */
TEST_F_TIMEOUT(stuck, linger_two, 120)
{
	struct linger l = { .l_onoff = 1, .l_linger = 2 };
	struct t_closer c;

	ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_LINGER, &l,
				sizeof(l)));
	ASSERT_EQ(0, t_closer_start(&c, self->i, false));
	self->i = -1;
	stuck_wait(_metadata, self, &c, 2000 + T_LINGER_SLACK);
	TH_LOG("close() took %ld ms", c.ms);
	/* it did wait (a loose bound: a starved guest's timers drift) */
	EXPECT_LE(500, c.ms);
	stuck_read_all(_metadata, self);
}

/*
 * held: a Responder whose sends are held (R-7.1.2-15) shuts down for
 * sending. Its FIN waits behind the held ULPDUs: the Initiator sees
 * neither data nor an end of file, and the Responder no more sends
 * (EPIPE). The Initiator's first FPDU ends the hold: the ULPDUs come, in
 * order, then the end of file; closing is clean, no reset.
 */
TEST(held_shutdown)
{
	uint8_t b[2000], got[2000];
	struct mpa_result res;
	struct tcp_info ti;
	socklen_t len;
	int i, r, k;
	long end;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, t_mpa_pair(AF_INET, 0, false, false, true, &i, &r));
	t_fill(b, sizeof(b), 5);
	for (k = 0; k < 3; k++)
		ASSERT_EQ(1000 + k, send(r, b, 1000 + k, MSG_NOSIGNAL));
	ASSERT_EQ(0, mpa_getstruct(r, MPA_RESULT, &res, sizeof(res)));
	ASSERT_EQ(MPA_RESULT_TX_HELD, res.flags & MPA_RESULT_TX_HELD);
	ASSERT_EQ(0, shutdown(r, SHUT_WR));
	EXPECT_EQ(-1, send(r, b, 10, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	/* no FIN before the held ULPDUs: nothing to read yet */
	EXPECT_EQ(0, t_poll(i, POLLIN, T_QUIET));
	EXPECT_EQ(-1, recv(i, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	/* the Initiator's first FPDU ends the hold: they go, the FIN last */
	ASSERT_EQ(100, send(i, b, 100, MSG_NOSIGNAL));
	ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(100, recv(r, got, sizeof(got), 0));
	ASSERT_EQ(0, t_set_timeo(i, SO_RCVTIMEO, T_WAIT));
	for (k = 0; k < 3; k++) {
		EXPECT_EQ(1000 + k, recv(i, got, sizeof(got), 0))
			TH_LOG("held ULPDU %d: errno %d", k, errno);
		EXPECT_EQ(0, memcmp(b, got, 1000 + k));
	}
	EXPECT_EQ(0, recv(i, got, sizeof(got), 0)) TH_LOG("errno %d", errno);
	close(r);
	/* our FIN, its ACK (or the reset): the connection is over */
	EXPECT_EQ(0, shutdown(i, SHUT_WR)) TH_LOG("shutdown: %s", strerror(errno));
	end = t_now_ms() + T_WAIT;
	do {
		len = sizeof(ti);
		ASSERT_EQ(0, getsockopt(i, SOL_TCP, TCP_INFO, &ti, &len));
		if (ti.tcpi_state == TCP_CLOSE)
			break;
		t_sleep_ms(10);
	} while (t_now_ms() < end);
	EXPECT_EQ(TCP_CLOSE, ti.tcpi_state);
	EXPECT_EQ(0, t_so_error(i));
	EXPECT_EQ(0, recv(i, b, sizeof(b), 0)) TH_LOG("errno %d", errno);
	close(i);
}

/*
 * reply, rejected: MPA Responder @m, raw Initiator @p. @m's send buffer is
 * full of stream data (@stream_len octets of @stream) when it answers.
 */
#define R_STREAM_MAX	(4 << 20)
#define R_AFTER		3000
#define R_PD		400

struct r_ctx {
	int m, p;
	uint8_t *stream;
	size_t stream_len;
	uint8_t after[R_AFTER];
	uint8_t pd[R_PD];
	uint8_t reply[T_FRAME_MAX];
	size_t reply_len;
};

static void r_setup(struct __test_metadata *_metadata, struct r_ctx *x,
		    int family, int answer)
{
	int small = 4096;
	uint8_t req[T_HDR];
	ssize_t r;

	signal(SIGPIPE, SIG_IGN);
	x->m = x->p = -1;
	x->stream = malloc(R_STREAM_MAX);
	ASSERT_NE(NULL, x->stream);
	t_fill(x->stream, R_STREAM_MAX, 1);
	t_fill(x->after, R_AFTER, 2);
	t_fill(x->pd, R_PD, 3);
	x->reply_len = t_frame(x->reply, true,
			       T_C | (answer == MPA_REJECT ? T_R : 0), 1,
			       x->pd, R_PD);
	ASSERT_EQ(0, mpa_tcp_pair(family, &x->p, &x->m));
	ASSERT_EQ(0, setsockopt(x->p, SOL_SOCKET, SO_RCVBUF, &small,
				sizeof(small)));
	ASSERT_EQ(0, setsockopt(x->m, SOL_SOCKET, SO_SNDBUF, &small,
				sizeof(small)));
	ASSERT_EQ(0, mpa_config(x->m, MPA_ROLE_RESPONDER, 10000));

	/* plain stream data until the send buffer stays full */
	ASSERT_EQ(0, t_nonblock(x->m));
	x->stream_len = 0;
	while (x->stream_len < R_STREAM_MAX) {
		r = send(x->m, x->stream + x->stream_len,
			 R_STREAM_MAX - x->stream_len, MSG_NOSIGNAL);
		if (r > 0) {
			x->stream_len += r;
			continue;
		}
		ASSERT_EQ(-1, r);
		ASSERT_EQ(EAGAIN, errno);
		if (!(t_poll(x->m, POLLOUT, T_QUIET) & POLLOUT))
			break;
	}
	ASSERT_GT(R_STREAM_MAX, x->stream_len);

	/* the Request arrives; the answer cannot go out whole */
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(x->p, req, T_HDR));
	if (mpa_start(x->m)) {
		ASSERT_EQ(EINPROGRESS, errno);
		ASSERT_EQ(POLLIN, t_poll(x->m, POLLIN, T_WAIT) & POLLIN);
	}
	ASSERT_EQ(MPA_STATE_REQUEST_RECEIVED, mpa_state(x->m));
	ASSERT_EQ(-1, mpa_answer(x->m, answer, x->pd, R_PD));
	ASSERT_EQ(EINPROGRESS, errno);
	TH_LOG("%zu octets of stream data queued before the Reply",
	       x->stream_len);
}

static void r_teardown(struct r_ctx *x)
{
	if (x->m >= 0)
		close(x->m);
	if (x->p >= 0)
		close(x->p);
	free(x->stream);
}

/* The raw peer reads to the end of the stream, in a thread. */
struct r_reader {
	pthread_t thr;
	int fd;
	uint8_t *buf;
	size_t size, len;
	int end;		/* 0: end of file; else errno (ETIMEDOUT) */
};

static void *r_reader_run(void *arg)
{
	struct r_reader *rd = arg;
	long end = t_now_ms() + T_WAIT;
	ssize_t r;

	rd->end = ETIMEDOUT;
	while (t_now_ms() < end) {
		if (!(t_poll(rd->fd, POLLIN, 100) & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(rd->fd, rd->buf + rd->len, rd->size - rd->len,
			 MSG_DONTWAIT);
		if (r == 0) {
			rd->end = 0;
			break;
		}
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			rd->end = errno;
			break;
		}
		rd->len += r;
		if (rd->len == rd->size) {
			rd->end = EMSGSIZE;
			break;
		}
	}
	return NULL;
}

static int r_reader_start(struct r_reader *rd, int fd)
{
	memset(rd, 0, sizeof(*rd));
	rd->fd = fd;
	rd->size = R_STREAM_MAX + 8192;
	rd->buf = malloc(rd->size);
	if (!rd->buf)
		return -1;
	return pthread_create(&rd->thr, NULL, r_reader_run, rd);
}

/*
 * What the peer read: the stream data, the whole Reply, @after_len octets
 * of x->after, then end of file.
 */
static void r_check(struct __test_metadata *_metadata, struct r_ctx *x,
		    struct r_reader *rd, size_t after_len)
{
	size_t want = x->stream_len + x->reply_len + after_len;
	const uint8_t *b = rd->buf;
	size_t n;

	pthread_join(rd->thr, NULL);
	EXPECT_EQ(0, rd->end) TH_LOG("no end of file: %s", strerror(rd->end));
	EXPECT_EQ(want, rd->len)
		TH_LOG("read %zu octets: %zu of stream data, a %zu-octet Reply and %zu more expected",
		       rd->len, x->stream_len, x->reply_len, after_len);
	n = rd->len < x->stream_len ? rd->len : x->stream_len;
	EXPECT_EQ(0, memcmp(x->stream, b, n)) TH_LOG("stream data differs");
	if (rd->len > x->stream_len) {
		b += x->stream_len;
		n = rd->len - x->stream_len;
		if (n > x->reply_len)
			n = x->reply_len;
		EXPECT_BYTES(x->reply, b, n);
	}
	if (rd->len > x->stream_len + x->reply_len) {
		b += x->reply_len;
		n = rd->len - x->stream_len - x->reply_len;
		if (n > after_len)
			n = after_len;
		EXPECT_BYTES(x->after, b, n);
	}
	free(rd->buf);
}

/* reply: closing right after a Reply that could not go out whole */
FIXTURE(reply)
{
	struct r_ctx x;
};

FIXTURE_VARIANT(reply)
{
	int family;
	int answer;		/* MPA_REJECT or MPA_ACCEPT */
};

FIXTURE_VARIANT_ADD(reply, reject_v4)
{
	.family = AF_INET, .answer = MPA_REJECT,
};

FIXTURE_VARIANT_ADD(reply, reject_v6)
{
	.family = AF_INET6, .answer = MPA_REJECT,
};

FIXTURE_VARIANT_ADD(reply, accept_v4)
{
	.family = AF_INET, .answer = MPA_ACCEPT,
};

FIXTURE_VARIANT_ADD(reply, accept_v6)
{
	.family = AF_INET6, .answer = MPA_ACCEPT,
};

FIXTURE_SETUP(reply)
{
	r_setup(_metadata, &self->x, variant->family, variant->answer);
}

FIXTURE_TEARDOWN(reply)
{
	r_teardown(&self->x);
}

/* close(): the rest of the Reply goes before the FIN. */
TEST_F(reply, close)
{
	struct r_reader rd;

	close(self->x.m);
	self->x.m = -1;
	ASSERT_EQ(0, r_reader_start(&rd, self->x.p));
	r_check(_metadata, &self->x, &rd, 0);
}

/* shutdown(SHUT_WR): the same; the socket stays as it was. */
TEST_F(reply, shutdown)
{
	struct r_reader rd;

	ASSERT_EQ(0, shutdown(self->x.m, SHUT_WR));
	ASSERT_EQ(0, r_reader_start(&rd, self->x.p));
	r_check(_metadata, &self->x, &rd, 0);
	EXPECT_EQ(variant->answer == MPA_REJECT ? MPA_STATE_REJECTED :
						  MPA_STATE_FULL,
		  mpa_state(self->x.m));
}

/*
 * rejected: after a reject the socket carries the plain stream again,
 * behind the Reply (R-7.1.2-7).
 */
FIXTURE(rejected)
{
	struct r_ctx x;
};

FIXTURE_VARIANT(rejected)
{
	int family;
};

FIXTURE_VARIANT_ADD(rejected, v4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(rejected, v6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(rejected)
{
	r_setup(_metadata, &self->x, variant->family, MPA_REJECT);
}

FIXTURE_TEARDOWN(rejected)
{
	r_teardown(&self->x);
}

/*
 * Non-blocking: until the whole Reply is queued no EPOLLOUT, and a send
 * gets EAGAIN; then the data goes behind the Reply.
 */
TEST_F(rejected, send_nonblocking)
{
	struct r_ctx *x = &self->x;
	struct r_reader rd;
	size_t sent = 0;
	long end;
	ssize_t r;

	EXPECT_EQ(0, t_poll(x->m, POLLOUT, 0) & POLLOUT);
	EXPECT_EQ(-1, send(x->m, x->after, R_AFTER, MSG_NOSIGNAL));
	EXPECT_EQ(EAGAIN, errno);

	ASSERT_EQ(0, r_reader_start(&rd, x->p));
	end = t_now_ms() + T_WAIT;
	while (sent < R_AFTER && t_now_ms() < end) {
		if (!(t_poll(x->m, POLLOUT, 100) & POLLOUT))
			continue;
		r = send(x->m, x->after + sent, R_AFTER - sent, MSG_NOSIGNAL);
		if (r < 0 && errno == EAGAIN)
			continue;
		ASSERT_LT(0, r) TH_LOG("send: %s", strerror(errno));
		sent += r;
	}
	ASSERT_EQ(R_AFTER, sent);
	ASSERT_EQ(0, shutdown(x->m, SHUT_WR));
	r_check(_metadata, x, &rd, R_AFTER);
}

/* A blocking send waits for the whole Reply, then goes behind it. */
TEST_F(rejected, send_blocking)
{
	struct r_ctx *x = &self->x;
	struct r_reader rd;

	ASSERT_EQ(0, t_blocking(x->m));
	ASSERT_EQ(0, t_set_timeo(x->m, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, r_reader_start(&rd, x->p));
	EXPECT_EQ(R_AFTER, send(x->m, x->after, R_AFTER, MSG_NOSIGNAL));
	close(x->m);
	x->m = -1;
	r_check(_metadata, x, &rd, R_AFTER);
}

/* SO_SNDTIMEO bounds that wait: EAGAIN, nothing sent. */
TEST_F(rejected, send_timeout)
{
	struct r_ctx *x = &self->x;
	struct r_reader rd;
	long t0;

	ASSERT_EQ(0, t_blocking(x->m));
	ASSERT_EQ(0, t_set_timeo(x->m, SO_SNDTIMEO, 300));
	t0 = t_now_ms();
	EXPECT_EQ(-1, send(x->m, x->after, R_AFTER, MSG_NOSIGNAL));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(250, t_now_ms() - t0);
	ASSERT_EQ(0, r_reader_start(&rd, x->p));
	close(x->m);
	x->m = -1;
	r_check(_metadata, x, &rd, 0);
}

/*
 * The peer resets while the Reply waits behind the stream data: the
 * reject stands (REJECTED; the Reply's rest is dropped) and the stream is
 * TCP's, whose error a send then gets. It used to become FAILED, code 1,
 * as if the startup had failed after the reject.
 */
TEST_F(rejected, peer_reset_during_reply)
{
	struct r_ctx *x = &self->x;
	long end = t_now_ms() + T_WAIT;

	mpa_close_abort(x->p);
	x->p = -1;
	while (!(t_poll(x->m, 0, 100) & POLLERR) && t_now_ms() < end)
		;
	ASSERT_TRUE(t_poll(x->m, 0, 0) & POLLERR)
		TH_LOG("no reset within %d ms", T_WAIT);
	EXPECT_EQ(-1, send(x->m, x->after, R_AFTER, MSG_NOSIGNAL));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_MPA_STATE(x->m, MPA_STATE_REJECTED);
	EXPECT_MPA_ERROR(x->m, MPA_ERR_NONE, MPA_REASON_NONE, 0);
}

TEST_HARNESS_MAIN
