// SPDX-License-Identifier: GPL-2.0
/*
 * Churn: MPA connections opened and closed by the thousand, from several
 * threads at once, in a network namespace of the test's own. Each
 * connection is taken to a random point of its life (seeded) and ended
 * there, by either side, with close(), shutdown(SHUT_WR),
 * shutdown(SHUT_RDWR) or a reset (SO_LINGER 0); the other side then
 * either closes at once or first reads what the end left it, which must be
 * a documented result (end of file, ECONNRESET, EPROTO, ...). The points:
 *
 *   attached        MPA attached to both ends, no startup
 *   request-sent    the Initiator's Request is out, the Responder has not
 *                   started (the Request waits in its receive queue)
 *   await-request   the Responder waits for a Request that never comes
 *   request-rcvd    the Responder holds a Request and has not answered
 *   partial-request a raw peer sent part of a Request
 *   rejected        the Responder rejected: both ends are plain streams
 *   init-init       two Initiators: the startup fails on both ends
 *   full-idle       Full Operation, nothing sent
 *   full-data       ULPDUs (some built with MSG_MORE) each way, checked
 *   held            the Responder's ULPDUs are held (R-7.1.2-15)
 *   mid-fpdu        a ULPDU of up to 64768 octets still on its way
 *   mid-fpdu-raw    a raw peer sent part of an FPDU
 *   rcvq-full       the sender filled everything until EAGAIN; the
 *                   receiver never reads
 *   more-open       a ULPDU kept open with MSG_MORE
 *   copy-mode       a receiver with a small SO_RCVBUF collects a 64768
 *                   octet FPDU in copy mode (and sometimes reads it)
 *
 * Afterwards, once TCP has torn the connections down (TIME_WAIT holds no
 * MPA object), what must be back where it started: the namespace's TCP
 * sockets in use (/proc/net/sockstat), its MPA connections by state
 * (/proc/net/mpa_stat), and the module's slab objects (mpa_conn,
 * mpa_startup, and mpa_tx_rec unless its cache is shared with another): no
 * object leaked, none freed twice. MpaAttached must count every attach.
 *
 * MPA_CHURN_SEED, MPA_CHURN_CONNS and MPA_CHURN_THREADS override the seed
 * (printed), the number of connections (2000) and threads (4).
 */
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"
#include "mpa_stress.h"

#define CH_CONNS	2000
#define CH_THREADS	4
#define CH_MAX_THREADS	16
#define CH_WAIT		10000	/* ms: any one step of a connection */
#define CH_SETTLE	180000	/* ms: TCP's teardown and RCU, at the end */
#define CH_SLOW_CLOSE	2000	/* ms: a close() this slow is reported */

enum ch_scen {
	CH_ATTACHED,
	CH_REQ_SENT,
	CH_AWAIT_REQ,
	CH_REQ_RCVD,
	CH_PARTIAL_REQ,
	CH_REJECTED,
	CH_INIT_INIT,
	CH_FULL_IDLE,
	CH_FULL_DATA,
	CH_HELD,
	CH_MID_FPDU,
	CH_MID_FPDU_RAW,
	CH_RCVQ_FULL,
	CH_MORE_OPEN,
	CH_COPY_MODE,
	CH_NSCEN,
};

static const char *const ch_scen_names[CH_NSCEN] = {
	[CH_ATTACHED]		= "attached",
	[CH_REQ_SENT]		= "request-sent",
	[CH_AWAIT_REQ]		= "await-request",
	[CH_REQ_RCVD]		= "request-rcvd",
	[CH_PARTIAL_REQ]	= "partial-request",
	[CH_REJECTED]		= "rejected",
	[CH_INIT_INIT]		= "init-init",
	[CH_FULL_IDLE]		= "full-idle",
	[CH_FULL_DATA]		= "full-data",
	[CH_HELD]		= "held",
	[CH_MID_FPDU]		= "mid-fpdu",
	[CH_MID_FPDU_RAW]	= "mid-fpdu-raw",
	[CH_RCVQ_FULL]		= "rcvq-full",
	[CH_MORE_OPEN]		= "more-open",
	[CH_COPY_MODE]		= "copy-mode",
};

enum ch_end {
	CH_CLOSE,
	CH_SHUT_WR,
	CH_SHUT_RDWR,
	CH_RESET,
	CH_NEND,
};

static const char *const ch_end_names[CH_NEND] = {
	[CH_CLOSE]	= "close",
	[CH_SHUT_WR]	= "shutdown-wr",
	[CH_SHUT_RDWR]	= "shutdown-rdwr",
	[CH_RESET]	= "reset",
};

/* What the second end's last recv() returned */
enum ch_seen {
	CH_SEEN_DATA,
	CH_SEEN_EOF,
	CH_SEEN_EAGAIN,
	CH_SEEN_ECONNRESET,
	CH_SEEN_EPROTO,
	CH_SEEN_EINPROGRESS,
	CH_SEEN_ETIMEDOUT,
	CH_SEEN_EPIPE,
	CH_SEEN_NONE,		/* it closed without looking */
	CH_NSEEN,
};

static const char *const ch_seen_names[CH_NSEEN] = {
	[CH_SEEN_DATA]		= "data",
	[CH_SEEN_EOF]		= "eof",
	[CH_SEEN_EAGAIN]	= "EAGAIN",
	[CH_SEEN_ECONNRESET]	= "ECONNRESET",
	[CH_SEEN_EPROTO]	= "EPROTO",
	[CH_SEEN_EINPROGRESS]	= "EINPROGRESS",
	[CH_SEEN_ETIMEDOUT]	= "ETIMEDOUT",
	[CH_SEEN_EPIPE]		= "EPIPE",
	[CH_SEEN_NONE]		= "not-read",
};

struct ch_counts {
	unsigned long scen[CH_NSCEN];
	long scen_ms[CH_NSCEN];
	unsigned long end[CH_NEND];
	unsigned long seen[CH_NSEEN];
	unsigned long attaches;
	unsigned long failures;
	unsigned long slow_closes;
	long slowest_close_ms;
};

struct ch_thread {
	pthread_t thr;
	int id;
	uint64_t seed;
	unsigned int first, count;
	int lfd;
	struct sockaddr_in addr;
	struct ch_counts n;
	char why[512];
	uint8_t *buf, *exp;
};

/* One connection: its two ends and its random stream */
struct ch_conn {
	struct ch_thread *th;
	unsigned int idx;
	enum ch_scen sc;
	uint64_t rs;
	int i, r;		/* Initiator's and Responder's end (or raw) */
	bool i_mpa, r_mpa;	/* MPA attached there */
	bool markers_i, markers_r;
	uint32_t tx_pos;	/* raw Initiator: its stream position */
};

static unsigned int ch_rand(struct ch_conn *cc, unsigned int n)
{
	return t_rand64(&cc->rs) % n;
}

/* Record the first unexpected thing a thread saw; count them all. */
static void ch_fail(struct ch_conn *cc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ch_fail(struct ch_conn *cc, const char *fmt, ...)
{
	struct ch_thread *th = cc->th;
	int err = errno;
	va_list ap;
	int n;

	if (!th->n.failures++) {
		n = snprintf(th->why, sizeof(th->why),
			     "connection %u (%s): ", cc->idx,
			     ch_scen_names[cc->sc]);
		va_start(ap, fmt);
		n += vsnprintf(th->why + n, sizeof(th->why) - n, fmt, ap);
		va_end(ap);
		snprintf(th->why + n, sizeof(th->why) - n,
			 " (errno %d %s; states %ld/%ld)", err, strerror(err),
			 cc->i >= 0 && cc->i_mpa ? mpa_state(cc->i) : -1L,
			 cc->r >= 0 && cc->r_mpa ? mpa_state(cc->r) : -1L);
	}
	errno = err;
}

static int ch_timeouts(int fd)
{
	return t_set_timeo(fd, SO_SNDTIMEO, CH_WAIT) ||
	       t_set_timeo(fd, SO_RCVTIMEO, CH_WAIT);
}

/* A TCP connection to the thread's listener; @small_rcv: client's SO_RCVBUF. */
static int ch_tcp(struct ch_thread *th, bool small_rcv, int *cli, int *srv)
{
	int rcv = 4096;

	*srv = -1;
	*cli = socket(AF_INET, SOCK_STREAM, 0);
	if (*cli < 0)
		return -1;
	if ((small_rcv &&
	     setsockopt(*cli, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv))) ||
	    connect(*cli, (struct sockaddr *)&th->addr, sizeof(th->addr)))
		return -1;
	*srv = accept(th->lfd, NULL, NULL);
	if (*srv < 0)
		return -1;
	if (ch_timeouts(*cli) || ch_timeouts(*srv))
		return -1;
	return 0;
}

static int ch_attach(struct ch_conn *cc, int fd, int role, bool markers)
{
	if (mpa_config(fd, role, CH_WAIT))
		return -1;
	cc->th->n.attaches++;
	if (fd == cc->i)
		cc->i_mpa = true;
	else
		cc->r_mpa = true;
	return mpa_set(fd, MPA_MARKERS, markers);
}

/* MPA on both ends, startup options set, not started. */
static int ch_configure(struct ch_conn *cc)
{
	cc->markers_i = ch_rand(cc, 2);
	cc->markers_r = ch_rand(cc, 2);
	if (ch_attach(cc, cc->i, MPA_ROLE_INITIATOR, cc->markers_i) ||
	    ch_attach(cc, cc->r, MPA_ROLE_RESPONDER, cc->markers_r)) {
		ch_fail(cc, "attaching MPA");
		return -1;
	}
	return 0;
}

/* The Initiator's non-blocking MPA_START: the Request goes out. */
static int ch_start_initiator(struct ch_conn *cc)
{
	if (t_nonblock(cc->i) || mpa_start(cc->i) != -1 ||
	    errno != EINPROGRESS) {
		ch_fail(cc, "the Initiator's MPA_START");
		return -1;
	}
	return 0;
}

/* Both ends in Full Operation; the Initiator non-blocking. */
static int ch_full(struct ch_conn *cc)
{
	if (ch_configure(cc) || ch_start_initiator(cc))
		return -1;
	if (mpa_start(cc->r) || mpa_answer(cc->r, MPA_ACCEPT, NULL, 0)) {
		ch_fail(cc, "the Responder's MPA_START and MPA_ACCEPT");
		return -1;
	}
	if (t_wait_startup(cc->i, CH_WAIT) < 0 ||
	    mpa_state(cc->i) != MPA_STATE_FULL ||
	    mpa_state(cc->r) != MPA_STATE_FULL) {
		ch_fail(cc, "Full Operation");
		return -1;
	}
	return 0;
}

/* One ULPDU, with @fd blocking or not; split in two with MSG_MORE. */
static int ch_send(struct ch_conn *cc, int fd, const uint8_t *b, size_t len,
		   bool split)
{
	size_t part = split ? 1 + ch_rand(cc, len) : len;
	long end = t_now_ms() + CH_WAIT;
	ssize_t r;

	for (;;) {
		r = send(fd, b, part, MSG_NOSIGNAL |
			 (part < len ? MSG_MORE : 0));
		if (r == (ssize_t)part) {
			if (part == len)
				return 0;
			b += part;
			len -= part;
			part = len;
			continue;
		}
		if (r >= 0 || errno != EAGAIN || t_now_ms() > end) {
			ch_fail(cc, "sending a ULPDU of %zu octets: %zd",
				len, r);
			return -1;
		}
		t_poll(fd, POLLOUT, 100);
	}
}

/* Receive one whole ULPDU into @b: its length, or -1. */
static ssize_t ch_recv(int fd, uint8_t *b, size_t size)
{
	long end = t_now_ms() + CH_WAIT;
	size_t got = 0;
	ssize_t r;
	int fl;

	while (got < size) {
		if (!(t_poll(fd, POLLIN, 100) & (POLLIN | POLLERR | POLLHUP))) {
			if (t_now_ms() > end) {
				errno = ETIMEDOUT;
				return -1;
			}
			continue;
		}
		r = t_recv_flags(fd, b + got, size - got, MSG_DONTWAIT, &fl);
		if (r < 0 && errno == EAGAIN)
			continue;
		if (r <= 0)
			return -1;
		got += r;
		if (fl & MSG_EOR)
			return got;
	}
	errno = EMSGSIZE;
	return -1;
}

/* A ULPDU each way, or several, checked. */
static int ch_exchange(struct ch_conn *cc, int from, int to, unsigned int n)
{
	struct ch_thread *th = cc->th;
	unsigned int k;
	size_t len;
	ssize_t got;

	for (k = 0; k < n; k++) {
		len = 1 + (ch_rand(cc, 4) ? ch_rand(cc, 2000) :
			   ch_rand(cc, MPA_MAX_ULPDU));
		t_fill(th->buf, len, cc->rs + k);
		if (ch_send(cc, from, th->buf, len, ch_rand(cc, 3) == 0))
			return -1;
		got = ch_recv(to, th->exp, MPA_MAX_ULPDU);
		if (got != (ssize_t)len || memcmp(th->buf, th->exp, len)) {
			ch_fail(cc, "ULPDU %u of %zu octets came as %zd", k,
				len, got);
			return -1;
		}
	}
	return 0;
}

/* Raw Initiator: the Request, the MPA Responder accepts it. */
static int ch_raw_full(struct ch_conn *cc)
{
	cc->markers_r = ch_rand(cc, 2);
	if (t_raw_initiator(cc->r, cc->i, T_C, cc->markers_r, true) < 0) {
		ch_fail(cc, "a raw Initiator's startup");
		return -1;
	}
	cc->th->n.attaches++;
	cc->r_mpa = true;
	return 0;
}

static int ch_scenario(struct ch_conn *cc, enum ch_scen sc)
{
	struct ch_thread *th = cc->th;
	uint8_t frame[T_FRAME_MAX];
	struct mpa_result res;
	size_t len, wire;
	unsigned int k;
	ssize_t r;

	switch (sc) {
	case CH_ATTACHED:
		return ch_configure(cc);
	case CH_REQ_SENT:
		return ch_configure(cc) ?: ch_start_initiator(cc);
	case CH_AWAIT_REQ:
		if (ch_configure(cc))
			return -1;
		if (t_nonblock(cc->r) || mpa_start(cc->r) != -1 ||
		    errno != EINPROGRESS ||
		    mpa_state(cc->r) != MPA_STATE_AWAIT_REQUEST) {
			ch_fail(cc, "the Responder's MPA_START");
			return -1;
		}
		return 0;
	case CH_REQ_RCVD:
		if (ch_configure(cc) || ch_start_initiator(cc))
			return -1;
		if (mpa_start(cc->r) ||
		    mpa_state(cc->r) != MPA_STATE_REQUEST_RECEIVED) {
			ch_fail(cc, "the Responder's MPA_START");
			return -1;
		}
		return 0;
	case CH_PARTIAL_REQ:
		if (ch_attach(cc, cc->r, MPA_ROLE_RESPONDER, ch_rand(cc, 2)) ||
		    t_nonblock(cc->r) || mpa_start(cc->r) != -1 ||
		    errno != EINPROGRESS) {
			ch_fail(cc, "the Responder's MPA_START");
			return -1;
		}
		len = t_frame(frame, false, T_C, 1, NULL, 0);
		len = 1 + ch_rand(cc, len - 1);
		if (t_send(cc->i, frame, len) != (ssize_t)len) {
			ch_fail(cc, "a raw partial Request");
			return -1;
		}
		return 0;
	case CH_REJECTED:
		if (ch_configure(cc) || ch_start_initiator(cc))
			return -1;
		if (mpa_start(cc->r) || mpa_answer(cc->r, MPA_REJECT, "no", 2) ||
		    t_wait_startup(cc->i, CH_WAIT) < 0 ||
		    mpa_state(cc->i) != MPA_STATE_REJECTED ||
		    t_so_error(cc->i) != ECONNREFUSED) {
			ch_fail(cc, "a reject");
			return -1;
		}
		/* plain streams now: an octet each way */
		if (ch_rand(cc, 2) &&
		    (t_send(cc->r, "x", 1) != 1 || t_blocking(cc->i) ||
		     t_read(cc->i, frame, 1, CH_WAIT) != 1)) {
			ch_fail(cc, "the plain stream after a reject");
			return -1;
		}
		return 0;
	case CH_INIT_INIT:
		if (ch_attach(cc, cc->i, MPA_ROLE_INITIATOR, ch_rand(cc, 2)) ||
		    ch_attach(cc, cc->r, MPA_ROLE_INITIATOR, ch_rand(cc, 2))) {
			ch_fail(cc, "attaching MPA");
			return -1;
		}
		/* the second may find the first's Request there already */
		if (t_nonblock(cc->i) || t_nonblock(cc->r) ||
		    mpa_start(cc->i) != -1 || errno != EINPROGRESS ||
		    mpa_start(cc->r) != -1 ||
		    (errno != EINPROGRESS && errno != EPROTO) ||
		    t_wait_startup(cc->i, CH_WAIT) < 0 ||
		    t_wait_startup(cc->r, CH_WAIT) < 0 ||
		    mpa_state(cc->i) != MPA_STATE_FAILED ||
		    mpa_state(cc->r) != MPA_STATE_FAILED) {
			ch_fail(cc, "two Initiators");
			return -1;
		}
		return 0;
	case CH_FULL_IDLE:
		return ch_full(cc);
	case CH_FULL_DATA:
		if (ch_full(cc) ||
		    ch_exchange(cc, cc->i, cc->r, 1 + ch_rand(cc, 3)) ||
		    ch_exchange(cc, cc->r, cc->i, 1 + ch_rand(cc, 3)))
			return -1;
		return 0;
	case CH_HELD:
		if (ch_full(cc))
			return -1;
		for (k = 1 + ch_rand(cc, 3); k; k--) {
			len = 1 + ch_rand(cc, 3000);
			t_fill(th->buf, len, k);
			if (ch_send(cc, cc->r, th->buf, len, false))
				return -1;
		}
		if (mpa_getstruct(cc->r, MPA_RESULT, &res, sizeof(res)) ||
		    !(res.flags & MPA_RESULT_TX_HELD)) {
			ch_fail(cc, "the Responder's sends are not held");
			return -1;
		}
		return 0;
	case CH_MID_FPDU:
		if (ch_full(cc))
			return -1;
		len = 16384 + ch_rand(cc, MPA_MAX_ULPDU - 16384 + 1);
		t_fill(th->buf, len, cc->idx);
		return ch_send(cc, cc->i, th->buf, len, ch_rand(cc, 2));
	case CH_MID_FPDU_RAW:
		if (ch_raw_full(cc))
			return -1;
		len = 1 + ch_rand(cc, 5000);
		t_fill(th->buf, len, cc->idx);
		wire = t_fpdu_encode(th->exp, 0, cc->markers_r, th->buf, len,
				     NULL);
		wire = 1 + ch_rand(cc, wire - 1);
		if (t_send(cc->i, th->exp, wire) != (ssize_t)wire) {
			ch_fail(cc, "a raw partial FPDU");
			return -1;
		}
		return 0;
	case CH_RCVQ_FULL:
		/* small buffers: the queues fill after some 100 KiB */
		k = 32768;
		if (setsockopt(cc->i, SOL_SOCKET, SO_SNDBUF, &k, sizeof(k)) ||
		    setsockopt(cc->r, SOL_SOCKET, SO_RCVBUF, &k, sizeof(k)) ||
		    ch_full(cc))
			return -1;
		/* the Initiator is non-blocking after ch_full() */
		for (k = 0; k < 100000; k++) {
			len = 1 + ch_rand(cc, MPA_MAX_ULPDU);
			r = send(cc->i, th->buf, len, MSG_NOSIGNAL);
			if (r == (ssize_t)len)
				continue;
			if (r < 0 && errno == EAGAIN)
				return 0;
			ch_fail(cc, "filling the queues: %zd", r);
			return -1;
		}
		ch_fail(cc, "the queues never filled");
		return -1;
	case CH_MORE_OPEN:
		if (ch_full(cc))
			return -1;
		len = 1 + ch_rand(cc, 30000);
		if (send(cc->i, th->buf, len, MSG_NOSIGNAL | MSG_MORE) !=
		    (ssize_t)len) {
			ch_fail(cc, "an open ULPDU");
			return -1;
		}
		return 0;
	case CH_COPY_MODE:
		if (ch_full(cc))
			return -1;
		t_fill(th->buf, MPA_MAX_ULPDU, cc->idx);
		if (ch_send(cc, cc->i, th->buf, MPA_MAX_ULPDU, false))
			return -1;
		if (ch_rand(cc, 2)) {
			r = ch_recv(cc->r, th->exp, MPA_MAX_ULPDU);
			if (r != MPA_MAX_ULPDU ||
			    memcmp(th->buf, th->exp, MPA_MAX_ULPDU)) {
				ch_fail(cc, "a copy mode ULPDU came as %zd", r);
				return -1;
			}
		}
		return 0;
	case CH_NSCEN:
		break;
	}
	return -1;
}

static void ch_close(struct ch_conn *cc, int *fd)
{
	struct ch_thread *th = cc->th;
	long t = t_now_ms();

	if (*fd < 0)
		return;
	close(*fd);
	*fd = -1;
	t = t_now_ms() - t;
	if (t > th->n.slowest_close_ms)
		th->n.slowest_close_ms = t;
	if (t > CH_SLOW_CLOSE)
		th->n.slow_closes++;
}

/* End @fd with @how; a shutdown leaves it open. */
static void ch_end_one(struct ch_conn *cc, int *fd, enum ch_end how)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	cc->th->n.end[how]++;
	switch (how) {
	case CH_CLOSE:
		ch_close(cc, fd);
		break;
	case CH_SHUT_WR:
		/* ENOTCONN once the peer's reset closed TCP: fine */
		if (shutdown(*fd, SHUT_WR) && errno != ENOTCONN)
			ch_fail(cc, "shutdown(SHUT_WR)");
		break;
	case CH_SHUT_RDWR:
		if (shutdown(*fd, SHUT_RDWR) && errno != ENOTCONN)
			ch_fail(cc, "shutdown(SHUT_RDWR)");
		break;
	case CH_RESET:
		setsockopt(*fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		ch_close(cc, fd);
		break;
	case CH_NEND:
		break;
	}
}

/*
 * The other end reads what the first end's ending left it: data, the end
 * of the stream, or a documented error; never EBADMSG (nothing was
 * corrupted) nor anything undocumented.
 */
static void ch_observe(struct ch_conn *cc, int fd)
{
	struct ch_thread *th = cc->th;
	enum ch_seen seen;
	ssize_t r;

	t_poll(fd, POLLIN, 200);
	r = recv(fd, th->exp, MPA_MAX_ULPDU, MSG_DONTWAIT);
	if (r > 0)
		seen = CH_SEEN_DATA;
	else if (!r)
		seen = CH_SEEN_EOF;
	else if (errno == EAGAIN)
		seen = CH_SEEN_EAGAIN;
	else if (errno == ECONNRESET)
		seen = CH_SEEN_ECONNRESET;
	else if (errno == EPROTO)
		seen = CH_SEEN_EPROTO;
	else if (errno == EINPROGRESS)
		seen = CH_SEEN_EINPROGRESS;
	else if (errno == ETIMEDOUT)
		seen = CH_SEEN_ETIMEDOUT;
	else if (errno == EPIPE)
		/* TCP's errno for a reset after the peer's FIN */
		seen = CH_SEEN_EPIPE;
	else
		seen = CH_NSEEN;
	if (seen == CH_NSEEN) {
		ch_fail(cc, "recv() after the peer's end returned %zd", r);
		return;
	}
	th->n.seen[seen]++;
}

static void ch_one(struct ch_thread *th, unsigned int idx)
{
	struct ch_conn cc = {
		.th = th, .idx = idx, .i = -1, .r = -1,
		.rs = th->seed ^ ((uint64_t)idx * 0x9e3779b97f4a7c15ull),
	};
	long t0 = t_now_ms();
	enum ch_scen sc;
	int cli, srv, *first, *second;
	bool cli_init;

	t_rand64(&cc.rs);
	sc = ch_rand(&cc, CH_NSCEN);
	cc.sc = sc;
	th->n.scen[sc]++;
	/* copy mode: the client receives, as the Responder */
	cli_init = sc == CH_COPY_MODE ? false : ch_rand(&cc, 4) != 0;
	if (ch_tcp(th, sc == CH_COPY_MODE, &cli, &srv)) {
		ch_fail(&cc, "a TCP connection");
		goto out;
	}
	cc.i = cli_init ? cli : srv;
	cc.r = cli_init ? srv : cli;
	cli = srv = -1;

	if (ch_scenario(&cc, sc))
		goto out;

	if (ch_rand(&cc, 2)) {
		first = &cc.i;
		second = &cc.r;
	} else {
		first = &cc.r;
		second = &cc.i;
	}
	ch_end_one(&cc, first, ch_rand(&cc, CH_NEND));
	if (ch_rand(&cc, 2))
		ch_observe(&cc, *second);
	else
		th->n.seen[CH_SEEN_NONE]++;
	ch_end_one(&cc, second, ch_rand(&cc, CH_NEND));
out:
	ch_close(&cc, &cc.i);
	ch_close(&cc, &cc.r);
	if (cli >= 0)
		close(cli);
	if (srv >= 0)
		close(srv);
	th->n.scen_ms[sc] += t_now_ms() - t0;
}

static void *ch_run(void *arg)
{
	struct ch_thread *th = arg;
	unsigned int k;

	for (k = 0; k < th->count; k++)
		ch_one(th, th->first + k);
	return NULL;
}

static void ch_sum(struct ch_counts *sum, const struct ch_counts *n)
{
	unsigned int k;

	for (k = 0; k < CH_NSCEN; k++) {
		sum->scen[k] += n->scen[k];
		sum->scen_ms[k] += n->scen_ms[k];
	}
	for (k = 0; k < CH_NEND; k++)
		sum->end[k] += n->end[k];
	for (k = 0; k < CH_NSEEN; k++)
		sum->seen[k] += n->seen[k];
	sum->attaches += n->attaches;
	sum->failures += n->failures;
	sum->slow_closes += n->slow_closes;
	if (n->slowest_close_ms > sum->slowest_close_ms)
		sum->slowest_close_ms = n->slowest_close_ms;
}

/* What must come back to where it started */
struct ch_level {
	struct s_sockstat ss;
	struct s_mpa_stat ms;
	long long conns, starts, recs;
};

static int ch_level(struct ch_level *lv, int *rec_aliases)
{
	if (s_sockstat(&lv->ss) || s_mpa_stat(&lv->ms))
		return -1;
	lv->conns = s_slab_objects("mpa_conn", NULL);
	lv->starts = s_slab_objects("mpa_startup", NULL);
	lv->recs = s_slab_objects("mpa_tx_rec", rec_aliases);
	return lv->conns < 0 || lv->starts < 0 ? -1 : 0;
}

static void ch_print_level(const char *what, const struct ch_level *lv)
{
	fprintf(stderr,
		"# %s: TCP inuse %lld tw %lld (orphans %lld machine-wide); MPA connections listed %lld (Full %lld); slab objects mpa_conn %lld mpa_startup %lld mpa_tx_rec %lld\n",
		what, lv->ss.inuse, lv->ss.tw, lv->ss.orphan,
		lv->ms.curr_total, lv->ms.curr[MPA_STATE_FULL], lv->conns,
		lv->starts, lv->recs);
}

FIXTURE(churn) {
	int dummy;
};

FIXTURE_SETUP(churn)
{
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, s_netns_new());
}

FIXTURE_TEARDOWN(churn)
{
}

TEST_F_TIMEOUT(churn, connections, 1500)
{
	uint64_t seed = s_seed("MPA_CHURN_SEED");
	long conns = s_env_long("MPA_CHURN_CONNS", CH_CONNS);
	long nthr = s_env_long("MPA_CHURN_THREADS", CH_THREADS);
	struct ch_thread th[CH_MAX_THREADS] = {};
	struct ch_counts sum = {};
	struct ch_level start, now;
	int rec_aliases = -1;
	long t0, t1, t2, k;
	unsigned int done = 0;

	ASSERT_GT(conns, 0);
	ASSERT_GT(nthr, 0);
	ASSERT_LE(nthr, CH_MAX_THREADS);
	ASSERT_EQ(0, s_nofile(4096));
	fprintf(stderr, "# churn: seed %llu (MPA_CHURN_SEED=%llu repeats it), %ld connections, %ld threads\n",
		(unsigned long long)seed, (unsigned long long)seed, conns,
		nthr);
	ASSERT_EQ(0, ch_level(&start, &rec_aliases));
	ch_print_level("before", &start);

	for (k = 0; k < nthr; k++) {
		th[k].id = k;
		th[k].seed = seed + k;
		th[k].first = done;
		th[k].count = conns / nthr + (k < conns % nthr);
		done += th[k].count;
		th[k].buf = malloc(MPA_MAX_ULPDU);
		th[k].exp = malloc(T_FPDU_MAX);
		ASSERT_NE(NULL, th[k].buf);
		ASSERT_NE(NULL, th[k].exp);
		memset(th[k].buf, 0x5a, MPA_MAX_ULPDU);
		th[k].lfd = s_listen4(1 + k, 0, 64, &th[k].addr);
		ASSERT_LE(0, th[k].lfd);
	}
	t0 = t_now_ms();
	for (k = 0; k < nthr; k++)
		ASSERT_EQ(0, pthread_create(&th[k].thr, NULL, ch_run, &th[k]));
	for (k = 0; k < nthr; k++) {
		pthread_join(th[k].thr, NULL);
		close(th[k].lfd);
		ch_sum(&sum, &th[k].n);
		if (th[k].n.failures)
			fprintf(stderr, "# thread %ld: %lu unexpected, the first: %s\n",
				k, th[k].n.failures, th[k].why);
		free(th[k].buf);
		free(th[k].exp);
	}
	t1 = t_now_ms();

	for (k = 0; k < CH_NSCEN; k++)
		fprintf(stderr, "# ended at %-16s %4lu, %6ld ms in all\n",
			ch_scen_names[k], sum.scen[k], sum.scen_ms[k]);
	for (k = 0; k < CH_NEND; k++)
		fprintf(stderr, "# ended by %-16s %lu\n", ch_end_names[k],
			sum.end[k]);
	for (k = 0; k < CH_NSEEN; k++)
		fprintf(stderr, "# the other end saw %-12s %lu\n",
			ch_seen_names[k], sum.seen[k]);
	fprintf(stderr, "# %ld connections in %ld ms (%.1f per second), %lu MPA attaches; slowest close() %ld ms, %lu over %d ms\n",
		conns, t1 - t0, conns * 1000.0 / (t1 - t0 + 1), sum.attaches,
		sum.slowest_close_ms, sum.slow_closes, CH_SLOW_CLOSE);
	EXPECT_EQ(0, sum.failures);

	/*
	 * TCP tears the connections down (FIN handshakes, orphans, RCU) on
	 * its own time: wait for the levels, with a deadline.
	 */
	for (;;) {
		ASSERT_EQ(0, ch_level(&now, NULL));
		if (now.ss.inuse == start.ss.inuse &&
		    now.ms.curr_total == start.ms.curr_total &&
		    now.conns == start.conns && now.starts == start.starts &&
		    now.recs == start.recs)
			break;
		if (t_now_ms() - t1 > CH_SETTLE)
			break;
		/* no event tells that TCP and RCU are done: look again */
		poll(NULL, 0, 100);
	}
	t2 = t_now_ms();
	ch_print_level("after", &now);
	fprintf(stderr, "# back to the start %ld ms after the last close; MpaAttached %lld Established %lld Rejected %lld StartupFailed %lld\n",
		t2 - t1, now.ms.attached, now.ms.established,
		now.ms.rejected, now.ms.startup_failed);
	EXPECT_EQ(start.ss.inuse, now.ss.inuse);
	EXPECT_EQ(start.ms.curr_total, now.ms.curr_total);
	EXPECT_EQ(start.conns, now.conns);
	EXPECT_EQ(start.starts, now.starts);
	/* the module's own cache (SLAB_NO_MERGE), so its own records */
	EXPECT_EQ(0, rec_aliases);
	EXPECT_LE(0, now.recs);
	EXPECT_EQ(start.recs, now.recs);
	EXPECT_EQ((long long)sum.attaches, now.ms.attached - start.ms.attached);
}

TEST_HARNESS_MAIN
