// SPDX-License-Identifier: GPL-2.0
/*
 * What an MPA socket refuses (mpa.rst, "What else the socket refuses"):
 * nothing reads or writes its stream except through the framing.
 *
 *   blocked  In FULL state splice() both ways, sendfile(), MSG_ZEROCOPY,
 *            MSG_OOB, TCP_ZEROCOPY_RECEIVE, mmap() and SIOCOUTQ fail with
 *            EOPNOTSUPP; in STREAMING and REJECTED state they reach TCP
 *            unchanged and work as on any TCP socket (an SO_OOBINLINE
 *            one: urgent data comes inline).
 *   startup  During the startup phase the stream operations fail with
 *            EINPROGRESS.
 * In every state sockmap and sockhash insertion (raw bpf(2)), the
 * TCP_REPAIR options and connect(AF_UNSPEC) fail with EOPNOTSUPP (the
 * last leaves the socket connected: connect() again is EISCONN); from the
 * startup phase on SO_RCVLOWAT above 1 does too, and MPA_START refuses a
 * socket with one (rcvlowat_start). A send's control message that TCP
 * refuses (malformed, or of a type it does not know) fails with EINVAL in
 * FULL state as on TCP, a valid one is accepted, and after the socket's
 * own shutdown(SHUT_WR) EPIPE comes first (cmsg_after_shutdown), as for
 * every send then (sends_after_shutdown). MSG_FASTOPEN is EOPNOTSUPP in
 * FULL state, TCP's EISCONN otherwise. After each refusal nothing was
 * sent or taken and the socket carries on.
 */
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include "mpa_bpf.h"
#include <linux/sockios.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY	60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY	0x4000000
#endif

enum { S_FULL, S_STREAMING, S_REJECTED, S_STARTUP };

/* The socket under test and its peer. */
struct b_ctx {
	int fd;		/* the MPA socket under test */
	int peer;	/* the other end */
	int state;	/* S_*, and for S_STARTUP the MPA state it is in */
	long mpa_state;
};

/* What a stream operation must fail with; 0: it works as on TCP. */
static int refused(const struct b_ctx *c)
{
	switch (c->state) {
	case S_FULL:
		return EOPNOTSUPP;
	case S_STARTUP:
		return EINPROGRESS;
	}
	return 0;
}

/* The peer sends @len octets: a ULPDU in FULL state, else bytes. */
static void peer_sends(struct __test_metadata *_metadata, struct b_ctx *c,
		       const void *buf, size_t len)
{
	ASSERT_EQ((ssize_t)len, send(c->peer, buf, len, MSG_NOSIGNAL));
	ASSERT_EQ(POLLIN, t_poll(c->fd, POLLIN, T_WAIT) & POLLIN);
}

/*
 * After a refused operation nothing was sent or taken: the next octets
 * each way are the next ones sent (in FULL state whole ULPDUs); during
 * the startup phase the state is as it was and nothing went out.
 */
static void still_works(struct __test_metadata *_metadata, struct b_ctx *c)
{
	char buf[64];
	ssize_t r;

	EXPECT_TRUE(t_quiet(c->peer, c->fd));
	if (c->state == S_STARTUP) {
		EXPECT_EQ(c->mpa_state, mpa_state(c->fd));
		return;
	}
	ASSERT_EQ(4, send(c->fd, "next", 4, MSG_NOSIGNAL));
	r = recv(c->peer, buf, sizeof(buf), 0);
	EXPECT_EQ(4, r);
	EXPECT_BYTES("next", buf, 4);
	ASSERT_EQ(4, send(c->peer, "back", 4, MSG_NOSIGNAL));
	r = recv(c->fd, buf, sizeof(buf), 0);
	EXPECT_EQ(4, r);
	EXPECT_BYTES("back", buf, 4);
}

/* The errno of a refused call that returned @r. */
static void expect_err(struct __test_metadata *_metadata, ssize_t r, int err)
{
	int e = errno;

	EXPECT_EQ(-1, r);
	EXPECT_EQ(err, e) TH_LOG("errno %d (%s)", e, strerror(e));
}

/* @r of a call that sent "hello": refused with @err, or the peer has it. */
static void hello_sent(struct __test_metadata *_metadata, struct b_ctx *c,
		       ssize_t r, int err)
{
	char buf[16];

	if (err) {
		expect_err(_metadata, r, err);
		return;
	}
	EXPECT_EQ(5, r);
	EXPECT_EQ(5, t_read(c->peer, buf, 5, T_WAIT));
	EXPECT_BYTES("hello", buf, 5);
}

static void splice_from(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int p[2], n = -1, err = refused(c);
	char buf[16];
	ssize_t r;

	ASSERT_EQ(0, pipe(p));
	if (c->state != S_STARTUP)
		peer_sends(_metadata, c, "hello", 5);
	r = splice(c->fd, NULL, p[1], NULL, 100, SPLICE_F_NONBLOCK);
	if (err) {
		expect_err(_metadata, r, err);
		EXPECT_EQ(0, ioctl(p[0], FIONREAD, &n));
		EXPECT_EQ(0, n);
		if (c->state == S_FULL) {
			/* The ULPDU is still there, whole. */
			EXPECT_EQ(5, recv(c->fd, buf, sizeof(buf), 0));
			EXPECT_BYTES("hello", buf, 5);
		}
	} else {
		EXPECT_EQ(5, r);
		EXPECT_EQ(5, read(p[0], buf, sizeof(buf)));
		EXPECT_BYTES("hello", buf, 5);
	}
	close(p[0]);
	close(p[1]);
	still_works(_metadata, c);
}

static void splice_to(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int p[2], err = refused(c);
	char buf[16];
	ssize_t r;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(5, write(p[1], "hello", 5));
	r = splice(p[0], NULL, c->fd, NULL, 5, 0);
	hello_sent(_metadata, c, r, err);
	/* Refused, nothing was taken from the pipe. */
	if (err)
		EXPECT_EQ(5, read(p[0], buf, sizeof(buf)));
	close(p[0]);
	close(p[1]);
	still_works(_metadata, c);
}

static void sendfile_to(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int mfd = memfd_create("mpa-sendfile", 0), err = refused(c);
	off_t off = 0;
	ssize_t r;

	ASSERT_LE(0, mfd);
	ASSERT_EQ(5, write(mfd, "hello", 5));
	r = sendfile(c->fd, mfd, &off, 5);
	hello_sent(_metadata, c, r, err);
	close(mfd);
	still_works(_metadata, c);
}

/* MSG_ZEROCOPY with SO_ZEROCOPY set (an option of the socket level). */
static void zerocopy(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int one = 1, err = refused(c);
	ssize_t r;

	ASSERT_EQ(0, setsockopt(c->fd, SOL_SOCKET, SO_ZEROCOPY, &one,
				sizeof(one)));
	r = send(c->fd, "hello", 5, MSG_ZEROCOPY | MSG_NOSIGNAL);
	hello_sent(_metadata, c, r, err);
	still_works(_metadata, c);
}

static void oob_send(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int err = refused(c), inline_peer = 0;
	socklen_t len = sizeof(inline_peer);
	char buf[16];
	ssize_t r;

	/* an MPA peer (the rejected variant's) is SO_OOBINLINE */
	ASSERT_EQ(0, getsockopt(c->peer, SOL_SOCKET, SO_OOBINLINE,
				&inline_peer, &len));
	r = send(c->fd, "ab", 2, MSG_OOB | MSG_NOSIGNAL);
	if (err) {
		expect_err(_metadata, r, err);
	} else if (inline_peer) {
		EXPECT_EQ(2, r);
		EXPECT_EQ(2, t_read(c->peer, buf, 2, T_WAIT));
		EXPECT_BYTES("ab", buf, 2);
	} else {
		/* TCP: "a" in band, "b" the urgent octet. */
		EXPECT_EQ(2, r);
		EXPECT_EQ(1, t_read(c->peer, buf, 1, T_WAIT));
		EXPECT_EQ('a', buf[0]);
		EXPECT_EQ(POLLPRI, t_poll(c->peer, POLLPRI, T_WAIT) & POLLPRI);
		EXPECT_EQ(1, recv(c->peer, buf, 1, MSG_OOB));
		EXPECT_EQ('b', buf[0]);
	}
	still_works(_metadata, c);
}

static void oob_recv(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int err = refused(c);
	char buf[16];
	ssize_t r;

	if (c->state == S_FULL) {
		peer_sends(_metadata, c, "ulpdu", 5);
	} else if (!err) {
		ASSERT_EQ(2, send(c->peer, "xy", 2, MSG_OOB | MSG_NOSIGNAL));
		ASSERT_EQ(POLLPRI, t_poll(c->fd, POLLPRI, T_WAIT) & POLLPRI);
	}
	r = recv(c->fd, buf, sizeof(buf), MSG_OOB | MSG_DONTWAIT);
	if (err) {
		expect_err(_metadata, r, err);
		if (c->state == S_FULL) {
			EXPECT_EQ(5, recv(c->fd, buf, sizeof(buf), 0));
			EXPECT_BYTES("ulpdu", buf, 5);
		}
	} else {
		/*
		 * SO_OOBINLINE since MPA was attached (mpa.rst, "Urgent
		 * data"): nothing out of band, the urgent "y" comes inline.
		 */
		expect_err(_metadata, r, EINVAL);
		EXPECT_EQ(2, t_read(c->fd, buf, 2, T_WAIT));
		EXPECT_BYTES("xy", buf, 2);
	}
	still_works(_metadata, c);
}

/* bpf(2) without libbpf */
/*
 * A plain established TCP socket goes into the map (so the map works);
 * the MPA socket does not.
 */
static void sockmap(struct __test_metadata *_metadata, struct b_ctx *c,
		    int type)
{
	int map, a, b;

	map = map_create(type);
	ASSERT_LE(0, map) TH_LOG("BPF_MAP_CREATE %d: %s", type,
				 strerror(errno));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	EXPECT_EQ(0, map_update(map, 0, a)) TH_LOG("plain TCP: %s",
						   strerror(errno));
	expect_err(_metadata, map_update(map, 1, c->fd), EOPNOTSUPP);
	close(map);
	close(a);
	close(b);
	still_works(_metadata, c);
}

/* The TCP_REPAIR options; plain TCP (as root) takes TCP_REPAIR. */
static void repair(struct __test_metadata *_metadata, struct b_ctx *c)
{
	struct tcp_repair_window w = {};
	struct tcp_repair_opt o = { .opt_code = TCPOPT_MAXSEG,
				    .opt_val = 1000 };
	int one = 1, q = TCP_SEND_QUEUE, seq = 1, a, b;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	EXPECT_EQ(0, setsockopt(a, SOL_TCP, TCP_REPAIR, &one, sizeof(one)))
		TH_LOG("plain TCP: %s", strerror(errno));
	close(a);
	close(b);

	expect_err(_metadata, setsockopt(c->fd, SOL_TCP, TCP_REPAIR, &one,
					 sizeof(one)), EOPNOTSUPP);
	expect_err(_metadata, setsockopt(c->fd, SOL_TCP, TCP_REPAIR_QUEUE, &q,
					 sizeof(q)), EOPNOTSUPP);
	expect_err(_metadata, setsockopt(c->fd, SOL_TCP, TCP_QUEUE_SEQ, &seq,
					 sizeof(seq)), EOPNOTSUPP);
	expect_err(_metadata, setsockopt(c->fd, SOL_TCP, TCP_REPAIR_OPTIONS,
					 &o, sizeof(o)), EOPNOTSUPP);
	expect_err(_metadata, setsockopt(c->fd, SOL_TCP, TCP_REPAIR_WINDOW,
					 &w, sizeof(w)), EOPNOTSUPP);
	still_works(_metadata, c);
}

/*
 * MSG_FASTOPEN, data with a SYN, on a connected socket: TCP says EISCONN
 * (TCP_FASTOPEN's client part is on by default); in FULL state MPA refuses
 * it as kTLS does. It was framed and sent as a ULPDU.
 */
static void fastopen(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int err = refused(c);
	ssize_t r;

	r = send(c->fd, "hello", 5, MSG_FASTOPEN | MSG_NOSIGNAL);
	expect_err(_metadata, r, err ?: EISCONN);
	still_works(_metadata, c);
}

/* connect(AF_UNSPEC) would disconnect TCP under MPA: refused. */
static void connect_unspec(struct __test_metadata *_metadata,
			   struct b_ctx *c)
{
	struct sockaddr sa = { .sa_family = AF_UNSPEC };
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	expect_err(_metadata, connect(c->fd, &sa, sizeof(sa)), EOPNOTSUPP);
	EXPECT_EQ(0, getpeername(c->fd, (struct sockaddr *)&ss, &len));
	/* the socket is as it was: still connected, not disconnecting */
	expect_err(_metadata, connect(c->fd, (struct sockaddr *)&ss, len),
		   EISCONN);
	still_works(_metadata, c);
}

/*
 * SO_RCVLOWAT: TCP would not tell MPA of frames and FPDUs shorter than
 * it. On the plain stream it is TCP's; from the startup phase on a value
 * above 1 is refused.
 */
static void rcvlowat(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int lowat = 4096, one = 1, v = 0;
	socklen_t len = sizeof(v);
	bool mpa = c->state == S_FULL || c->state == S_STARTUP;
	int r;

	r = setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
	if (mpa)
		expect_err(_metadata, r, EOPNOTSUPP);
	else
		EXPECT_EQ(0, r) TH_LOG("errno %d", errno);
	ASSERT_EQ(0, getsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &v, &len));
	EXPECT_EQ(mpa ? 1 : lowat, v);
	EXPECT_EQ(0, setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &one,
				sizeof(one)));
	still_works(_metadata, c);
}

enum { CM_VALID, CM_SHORT, CM_UNKNOWN };

/* A send of "hello" with one control message. */
struct cmsg_msg {
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov;
	struct msghdr msg;
};

/*
 * Build @m with a control message of @kind: a valid SO_TIMESTAMPING
 * (flags 0: valid without privilege), one whose cmsg_len is shorter than
 * its header, or one of a SOL_SOCKET type no kernel knows.
 */
static struct msghdr *cmsg_build(struct cmsg_msg *m, int kind)
{
	struct cmsghdr *cm;
	int flags = 0;

	memset(m, 0, sizeof(*m));
	m->iov.iov_base = "hello";
	m->iov.iov_len = 5;
	m->msg.msg_iov = &m->iov;
	m->msg.msg_iovlen = 1;
	m->msg.msg_control = m->u.buf;
	m->msg.msg_controllen = sizeof(m->u.buf);
	cm = CMSG_FIRSTHDR(&m->msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = kind == CM_UNKNOWN ? 0x7fff : SO_TIMESTAMPING;
	cm->cmsg_len = CMSG_LEN(sizeof(flags));
	if (kind == CM_SHORT)
		cm->cmsg_len = sizeof(*cm) - 1;
	memcpy(CMSG_DATA(cm), &flags, sizeof(flags));
	return &m->msg;
}

/*
 * A send carrying a control message of @kind (cmsg_build()). TCP refuses
 * the malformed and the unknown one with EINVAL, and so does MPA in Full
 * Operation, where a valid one is accepted and takes no effect (mpa.rst).
 * Refused, nothing went out.
 */
static void cmsg_send(struct __test_metadata *_metadata, struct b_ctx *c,
		      int kind)
{
	struct cmsg_msg m;
	int err = refused(c);

	if (err != EINPROGRESS)
		err = kind == CM_VALID ? 0 : EINVAL;
	hello_sent(_metadata, c,
		   sendmsg(c->fd, cmsg_build(&m, kind), MSG_NOSIGNAL), err);
	still_works(_metadata, c);
}

/*
 * The refusals both fixtures check, each a test of its own; the fixture
 * keeps its context in self->c.
 */
static void zerocopy_receive(struct __test_metadata *_metadata,
			     struct b_ctx *c)
{
	struct tcp_zerocopy_receive zc = {};
	socklen_t len = sizeof(zc);
	int r, err = refused(c);

	r = getsockopt(c->fd, SOL_TCP, TCP_ZEROCOPY_RECEIVE, &zc, &len);
	if (err) {
		expect_err(_metadata, r, err);
	} else {
		/* TCP: nothing queued, nothing mapped. */
		EXPECT_EQ(0, r) TH_LOG("errno %d", errno);
		EXPECT_EQ(0, zc.length);
	}
	still_works(_metadata, c);
}

static void mmap_socket(struct __test_metadata *_metadata, struct b_ctx *c)
{
	void *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, c->fd, 0);
	int err = refused(c), e = errno;

	/* refused with @err, or mapped by TCP */
	EXPECT_EQ(!!err, p == MAP_FAILED) TH_LOG("errno %d (%s)", e,
						 strerror(e));
	EXPECT_EQ(err, p == MAP_FAILED ? e : 0);
	if (p != MAP_FAILED)
		munmap(p, 4096);
	still_works(_metadata, c);
}

/*
 * TCP's figures count wire octets, Markers and CRCs: refused in FULL
 * state. Elsewhere, the startup phase included, they are TCP's, which
 * count what it holds (a startup frame too).
 */
static void siocoutq(struct __test_metadata *_metadata, struct b_ctx *c)
{
	int n = -1;

	if (c->state == S_FULL) {
		expect_err(_metadata, ioctl(c->fd, SIOCOUTQ, &n), EOPNOTSUPP);
		expect_err(_metadata, ioctl(c->fd, SIOCOUTQNSD, &n),
			   EOPNOTSUPP);
	} else {
		EXPECT_EQ(0, ioctl(c->fd, SIOCOUTQ, &n));
		EXPECT_LE(0, n);
		n = -1;
		EXPECT_EQ(0, ioctl(c->fd, SIOCOUTQNSD, &n));
		EXPECT_LE(0, n);
	}
	still_works(_metadata, c);
}

#define MPA_REFUSED_TEST(f, name, fn, ...)				\
	TEST_F(f, name)							\
	{								\
		fn(_metadata, &self->c, ##__VA_ARGS__);			\
	}

#define MPA_REFUSED_TESTS(f)						\
	MPA_REFUSED_TEST(f, splice_from_socket, splice_from)		\
	MPA_REFUSED_TEST(f, splice_to_socket, splice_to)		\
	MPA_REFUSED_TEST(f, sendfile_to_socket, sendfile_to)		\
	MPA_REFUSED_TEST(f, msg_zerocopy, zerocopy)			\
	MPA_REFUSED_TEST(f, oob_send, oob_send)				\
	MPA_REFUSED_TEST(f, oob_recv, oob_recv)				\
	MPA_REFUSED_TEST(f, fastopen, fastopen)				\
	MPA_REFUSED_TEST(f, sockmap, sockmap, BPF_MAP_TYPE_SOCKMAP)	\
	MPA_REFUSED_TEST(f, sockhash, sockmap, BPF_MAP_TYPE_SOCKHASH)	\
	MPA_REFUSED_TEST(f, tcp_repair, repair)				\
	MPA_REFUSED_TEST(f, connect_unspec, connect_unspec)		\
	MPA_REFUSED_TEST(f, rcvlowat, rcvlowat)				\
	MPA_REFUSED_TEST(f, cmsg_valid, cmsg_send, CM_VALID)		\
	MPA_REFUSED_TEST(f, cmsg_short, cmsg_send, CM_SHORT)		\
	MPA_REFUSED_TEST(f, cmsg_unknown, cmsg_send, CM_UNKNOWN)	\
	MPA_REFUSED_TEST(f, tcp_zerocopy_receive, zerocopy_receive)	\
	MPA_REFUSED_TEST(f, mmap, mmap_socket)				\
	MPA_REFUSED_TEST(f, siocoutq, siocoutq)

/* blocked: FULL, STREAMING and REJECTED state */
FIXTURE(blocked)
{
	struct b_ctx c;
};

FIXTURE_VARIANT(blocked)
{
	int state;
	int family;
	bool markers;
};

FIXTURE_VARIANT_ADD(blocked, full_ipv4)
{
	.state = S_FULL, .family = AF_INET, .markers = true,
};

FIXTURE_VARIANT_ADD(blocked, full_ipv6)
{
	.state = S_FULL, .family = AF_INET6, .markers = false,
};

FIXTURE_VARIANT_ADD(blocked, streaming)
{
	.state = S_STREAMING, .family = AF_INET,
};

FIXTURE_VARIANT_ADD(blocked, rejected)
{
	.state = S_REJECTED, .family = AF_INET6,
};

FIXTURE_SETUP(blocked)
{
	struct b_ctx *c = &self->c;
	char buf[8];

	signal(SIGPIPE, SIG_IGN);
	c->fd = c->peer = -1;
	c->state = variant->state;
	switch (variant->state) {
	case S_FULL:
		/* The Initiator, never held; a ULPDU went each way. */
		ASSERT_EQ(0, t_mpa_pair(variant->family, 0, variant->markers,
					variant->markers, true, &c->fd,
					&c->peer));
		ASSERT_EQ(2, send(c->fd, "hi", 2, MSG_NOSIGNAL));
		ASSERT_EQ(2, recv(c->peer, buf, sizeof(buf), 0));
		break;
	case S_STREAMING:
		ASSERT_EQ(0, mpa_tcp_pair(variant->family, &c->fd, &c->peer));
		ASSERT_EQ(0, mpa_attach(c->fd));
		break;
	case S_REJECTED:
		ASSERT_EQ(0, mpa_tcp_pair(variant->family, &c->fd, &c->peer));
		ASSERT_EQ(0, mpa_config(c->fd, MPA_ROLE_INITIATOR, T_WAIT));
		ASSERT_EQ(0, mpa_config(c->peer, MPA_ROLE_RESPONDER, T_WAIT));
		t_start_nonblock(_metadata, c->fd);
		ASSERT_START(c->peer);
		ASSERT_EQ(0, mpa_answer(c->peer, MPA_REJECT, "no", 2));
		ASSERT_LE(0, t_wait_startup(c->fd, T_WAIT));
		ASSERT_EQ(0, t_blocking(c->fd));
		ASSERT_EQ(MPA_STATE_REJECTED, mpa_state(c->fd));
		/* told as a refused connect() is; read, the stream goes on */
		ASSERT_EQ(ECONNREFUSED, t_so_error(c->fd));
		ASSERT_EQ(MPA_STATE_REJECTED, mpa_state(c->peer));
		break;
	}
	ASSERT_EQ(0, t_set_timeo(c->fd, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(c->peer, SO_RCVTIMEO, T_WAIT));
}

FIXTURE_TEARDOWN(blocked)
{
	close(self->c.fd);
	close(self->c.peer);
}


/* SIOCINQ is answered: a ULPDU's octets in FULL state, else TCP's. */
TEST_F(blocked, siocinq)
{
	char buf[8];
	int n = -1;

	peer_sends(_metadata, &self->c, "12345", 5);
	ASSERT_EQ(0, ioctl(self->c.fd, SIOCINQ, &n));
	EXPECT_EQ(5, n);
	EXPECT_EQ(5, recv(self->c.fd, buf, sizeof(buf), 0));
	still_works(_metadata, &self->c);
}

/*
 * After the socket's own shutdown(SHUT_WR) a send fails with EPIPE, also
 * with a control message TCP would refuse: TCP tells the state first.
 */
TEST_F(blocked, cmsg_after_shutdown)
{
	struct cmsg_msg m;
	int kind;

	ASSERT_EQ(0, shutdown(self->c.fd, SHUT_WR));
	for (kind = CM_VALID; kind <= CM_UNKNOWN; kind++)
		expect_err(_metadata,
			   sendmsg(self->c.fd, cmsg_build(&m, kind),
				   MSG_NOSIGNAL), EPIPE);
	EXPECT_EQ(0, t_wait_eof(self->c.peer, T_WAIT));
}

/*
 * After its own shutdown(SHUT_WR) every send fails with EPIPE, as on TCP,
 * whatever it is: in FULL state an empty send said EINVAL (or 0 with
 * MSG_MORE), one too long EMSGSIZE, one with MSG_OOB EOPNOTSUPP.
 */
TEST_F(blocked, sends_after_shutdown)
{
	static char big[MPA_MAX_ULPDU + 1];

	ASSERT_EQ(0, shutdown(self->c.fd, SHUT_WR));
	expect_err(_metadata, send(self->c.fd, big, 0, MSG_NOSIGNAL), EPIPE);
	expect_err(_metadata, send(self->c.fd, big, 0,
				   MSG_MORE | MSG_NOSIGNAL), EPIPE);
	expect_err(_metadata, send(self->c.fd, big, sizeof(big),
				   MSG_NOSIGNAL), EPIPE);
	expect_err(_metadata, send(self->c.fd, big, 2,
				   MSG_OOB | MSG_NOSIGNAL), EPIPE);
	EXPECT_EQ(0, t_wait_eof(self->c.peer, T_WAIT));
}

MPA_REFUSED_TESTS(blocked)

/*
 * startup: an Initiator waiting for a Reply that does not come, a
 * Responder that has the Request and has not answered.
 */
FIXTURE(startup)
{
	struct b_ctx c;
};

FIXTURE_VARIANT(startup)
{
	long mpa_state;
};

FIXTURE_VARIANT_ADD(startup, await_reply)
{
	.mpa_state = MPA_STATE_AWAIT_REPLY,
};

FIXTURE_VARIANT_ADD(startup, request_received)
{
	.mpa_state = MPA_STATE_REQUEST_RECEIVED,
};

FIXTURE_SETUP(startup)
{
	struct b_ctx *c = &self->c;
	uint8_t fr[T_HDR];

	signal(SIGPIPE, SIG_IGN);
	c->state = S_STARTUP;
	c->mpa_state = variant->mpa_state;
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &c->fd, &c->peer));
	if (variant->mpa_state == MPA_STATE_AWAIT_REPLY) {
		ASSERT_EQ(0, mpa_config(c->fd, MPA_ROLE_INITIATOR, 30000));
		t_start_nonblock(_metadata, c->fd);
		ASSERT_EQ(T_HDR, t_read(c->peer, fr, T_HDR, T_WAIT));
		ASSERT_EQ(0, t_blocking(c->fd));
	} else {
		ASSERT_EQ(0, mpa_config(c->fd, MPA_ROLE_RESPONDER, 30000));
		t_frame(fr, false, T_C, 1, NULL, 0);
		ASSERT_EQ(T_HDR, t_send(c->peer, fr, T_HDR));
		ASSERT_START(c->fd);
	}
	ASSERT_EQ(variant->mpa_state, mpa_state(c->fd));
}

FIXTURE_TEARDOWN(startup)
{
	close(self->c.fd);
	close(self->c.peer);
}

MPA_REFUSED_TESTS(startup)

/*
 * MPA_START refuses a socket with SO_RCVLOWAT above 1 (EINVAL, a
 * configuration error): a frame or FPDU shorter than it would never be
 * seen. With 1 again it starts.
 */
TEST(rcvlowat_start)
{
	int i, r, lowat = 4096, one = 1;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &i, &r));
	ASSERT_EQ(0, t_mpa_options(i, MPA_ROLE_INITIATOR, false, true));
	ASSERT_EQ(0, t_mpa_options(r, MPA_ROLE_RESPONDER, false, true));
	/* the plain stream's: TCP's to take */
	ASSERT_EQ(0, setsockopt(i, SOL_SOCKET, SO_RCVLOWAT, &lowat,
				sizeof(lowat)));
	EXPECT_EQ(-1, mpa_start(i));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MPA_STATE_STREAMING, mpa_state(i));
	EXPECT_TRUE(t_quiet(r, i));
	ASSERT_EQ(0, setsockopt(i, SOL_SOCKET, SO_RCVLOWAT, &one,
				sizeof(one)));
	t_start_nonblock(_metadata, i);
	ASSERT_START(r);
	ASSERT_EQ(0, mpa_answer(r, MPA_ACCEPT, NULL, 0));
	ASSERT_LE(0, t_wait_startup(i, T_WAIT));
	EXPECT_EQ(MPA_STATE_FULL, mpa_state(i));
	close(i);
	close(r);
}

TEST_HARNESS_MAIN
