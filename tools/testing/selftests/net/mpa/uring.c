// SPDX-License-Identifier: GPL-2.0
/*
 * MPA sockets through io_uring (mpa.rst, "io_uring"), with Debian's
 * liburing: records keep their boundaries, errors come back in the CQE,
 * and what MPA refuses is refused cleanly.
 *
 *   uring    Two MPA sockets in Full Operation (Markers off over IPv4, on
 *            over IPv6). IORING_OP_SEND, SENDMSG (one ULPDU from several
 *            iovecs) and WRITE: one SQE is one ULPDU, one FPDU (MPA_STATS),
 *            for ULPDUs of 1 octet to 64768 octets around the MULPDU, one
 *            at a time, in a linked chain, and through a small send
 *            buffer (io_uring waits for room with its internal poll).
 *            IORING_OP_RECV, RECVMSG (MSG_EOR in msg_flags), READ, and RECV
 *            through io-wq (IOSQE_ASYNC), submitted before the peer sends
 *            (io_uring's internal poll waits for a whole FPDU): each CQE
 *            is exactly one ULPDU, or its first part for a short buffer
 *            and the rest next; a linked chain of RECVs; a multishot RECV
 *            with provided buffers gives one CQE per ULPDU, and 0 at end
 *            of file. MSG_WAITALL on a RECV makes io_uring itself join
 *            ULPDUs (documented). Errors: a SEND of 0 octets, of 64769
 *            octets and with MSG_OOB, and WRITE of 0 and 64769 octets,
 *            fail in their CQE with the errno send(2) and write(2) give,
 *            and nothing goes on the wire for them; SEND_ZC and
 *            SENDMSG_ZC fail with EOPNOTSUPP (then their notification
 *            CQE), nothing on the wire, from the attach on, while on a
 *            plain TCP socket they work; SPLICE from the socket fails with
 *            EOPNOTSUPP; URING_CMD's SIOCINQ and SIOCOUTQ answer as
 *            ioctl(2) does. A Responder's SEND before the Initiator's
 *            first FPDU completes and is held, as send(2) is. MSG_MORE
 *            keeps a ULPDU open across SENDs and IORING_OP_SHUTDOWN
 *            sends it before the FIN. Both sockets closed with requests
 *            waiting: the ring's exit cancels them cleanly.
 *   startup  During the startup phase RECV and SEND fail with
 *            -EINPROGRESS, and POLL_ADD waits for its end as poll(2)
 *            does (POLLIN: a Request to judge; POLLOUT: the Initiator's
 *            non-blocking MPA_START is over).
 *   uraw     An MPA socket against a raw TCP peer that writes FPDUs
 *            itself: POLL_ADD and RECV do not complete on half an FPDU,
 *            both do when the rest comes; a RECV waiting when an FPDU with
 *            a bad CRC arrives gets -EBADMSG, and every RECV after it;
 *            a FIN at an FPDU boundary gives 0, inside an FPDU -EPROTO,
 *            a reset -ECONNRESET.
 *
 * io_uring must be there: a kernel without it, or with io_uring disabled
 * (kernel.io_uring_disabled), fails these tests rather than skip them.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <linux/sockios.h>
#include <liburing.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000	/* how long a test waits for an event */
#define T_QUIET		250	/* how long "nothing happens" is watched */
#define U_MAX		16	/* ULPDUs in one run */
#define U_BUF		65536	/* a buffer that holds any ULPDU */

static uint8_t rx_buf[T_ULPDU_BUF], exp_buf[T_ULPDU_BUF];

/* One CQE, copied out of the ring. */
struct u_cqe {
	__u64 data;
	int res;
	unsigned int flags;
};

static const char *u_disabled(void)
{
	static char v[16] = "(none)";
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");

	if (f) {
		if (!fgets(v, sizeof(v), f))
			snprintf(v, sizeof(v), "(unreadable)");
		v[strcspn(v, "\n")] = 0;
		fclose(f);
	}
	return v;
}

/* The next CQE within @ms: 0, or -ETIME (nothing came), or -errno. */
static int u_next(struct io_uring *ring, struct u_cqe *out, int ms)
{
	long end = t_now_ms() + ms;
	struct io_uring_cqe *cqe;
	int ret;

	do {
		long left = end - t_now_ms();
		struct __kernel_timespec ts = {
			.tv_sec = left > 0 ? left / 1000 : 0,
			.tv_nsec = left > 0 ? (left % 1000) * 1000000L : 0,
		};

		ret = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
	} while (ret == -EINTR && t_now_ms() < end);
	if (ret)
		return ret;
	out->data = cqe->user_data;
	out->res = cqe->res;
	out->flags = cqe->flags;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

/*
 * The next CQE must be for @data with result @res (@what: for the log).
 * Its flags.
 */
static unsigned int u_expect(struct __test_metadata *_metadata,
			     struct io_uring *ring, __u64 data, int res,
			     const char *what)
{
	struct u_cqe c;
	int rc = u_next(ring, &c, T_WAIT);

	ASSERT_EQ(0, rc) TH_LOG("%s: no CQE for %llu: %s", what,
				(unsigned long long)data, strerror(-rc));
	EXPECT_EQ(data, c.data) TH_LOG("%s", what);
	EXPECT_EQ(res, c.res)
		TH_LOG("%s: CQE %llu: %d (%s)", what,
		       (unsigned long long)c.data, c.res,
		       c.res < 0 ? strerror(-c.res) : "-");
	return c.flags;
}

#define EXPECT_CQE(ring, data, res) u_expect(_metadata, ring, data, res, "")

/* Nothing completes within T_QUIET (a negative check: it sleeps). */
#define EXPECT_NO_CQE(ring) do {					\
	struct u_cqe __c;						\
	int __rc = u_next(ring, &__c, T_QUIET);				\
	EXPECT_EQ(-ETIME, __rc)						\
		TH_LOG("CQE %llu completed early: %d",			\
		       (unsigned long long)__c.data, __c.res);		\
} while (0)

static struct io_uring_sqe *u_sqe(struct io_uring *ring)
{
	return io_uring_get_sqe(ring);
}

static void u_ring_init(struct __test_metadata *_metadata,
			struct io_uring *ring)
{
	int ret = io_uring_queue_init(64, ring, 0);

	ASSERT_EQ(0, ret)
		TH_LOG("io_uring_queue_init: %s (kernel.io_uring_disabled %s)",
		       strerror(-ret), u_disabled());
}

/* Submit every SQE prepared: exactly @n. */
#define ASSERT_SUBMIT(ring, n) ASSERT_EQ((int)(n), io_uring_submit(ring))

/*
 * The peer receives the next ULPDU with recvmsg(): @len octets of
 * t_fill(@seed), whole, with MSG_EOR. It waits with poll() (so that
 * io_uring's task work runs meanwhile) and reads without blocking.
 */
static void p_expect(struct __test_metadata *_metadata, int fd, size_t len,
		     uint64_t seed)
{
	ssize_t r;
	int fl;

	ASSERT_EQ(POLLIN, t_poll(fd, POLLIN, T_WAIT) & POLLIN)
		TH_LOG("no ULPDU of %zu octets", len);
	r = t_recv_flags(fd, rx_buf, sizeof(rx_buf), MSG_DONTWAIT, &fl);
	ASSERT_EQ((ssize_t)len, r)
		TH_LOG("errno %d (%s)", r < 0 ? errno : 0,
		       r < 0 ? strerror(errno) : "-");
	EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC));
	t_fill(exp_buf, len, seed);
	EXPECT_BYTES(exp_buf, rx_buf, len);
}

/* The peer sends one ULPDU of @len octets of t_fill(@seed). */
static void p_send(struct __test_metadata *_metadata, int fd, size_t len,
		   uint64_t seed)
{
	static uint8_t buf[T_ULPDU_BUF];

	t_fill(buf, len, seed);
	ASSERT_EQ((ssize_t)len, send(fd, buf, len, MSG_NOSIGNAL))
		TH_LOG("errno %d (%s)", errno, strerror(errno));
}

/* Nothing came to @fd within T_QUIET (a negative check: it sleeps). */
static void p_quiet(struct __test_metadata *_metadata, int fd)
{
	EXPECT_EQ(0, t_poll(fd, POLLIN, T_QUIET));
	EXPECT_TRUE(t_nothing_pending(fd));
}

static void u_expect_fpdus(struct __test_metadata *_metadata, int tx, int rx,
			   uint64_t n)
{
	struct mpa_stats st;

	t_get_stats(_metadata, tx, &st);
	EXPECT_EQ(n, st.tx_fpdus);
	t_get_stats(_metadata, rx, &st);
	EXPECT_EQ(n, st.rx_fpdus);
}

FIXTURE(uring)
{
	struct io_uring ring;
	bool ring_ok;
	int i, r;		/* Initiator and Responder, in FULL */
	size_t sizes[U_MAX];
	size_t n;
	uint8_t *buf[U_MAX];	/* a buffer per request in flight */
};

FIXTURE_VARIANT(uring)
{
	int family;
	bool markers;		/* both ways */
};

FIXTURE_VARIANT_ADD(uring, markers0_ipv4)
{
	.family = AF_INET, .markers = false,
};

FIXTURE_VARIANT_ADD(uring, markers1_ipv6)
{
	.family = AF_INET6, .markers = true,
};

FIXTURE_SETUP(uring)
{
	struct mpa_result res;
	size_t k, mulpdu;

	signal(SIGPIPE, SIG_IGN);
	self->i = -1;
	self->r = -1;
	u_ring_init(_metadata, &self->ring);
	self->ring_ok = true;
	ASSERT_EQ(0, t_mpa_pair(variant->family, 0, variant->markers,
				variant->markers, true, &self->i, &self->r));
	t_get_result(_metadata, self->i, &res);
	mulpdu = res.mulpdu;
	/* 1 to 64768 octets, around the MULPDU and the Marker interval */
	{
		const size_t s[] = {
			1, mulpdu, MPA_MAX_ULPDU, 2, mulpdu - 1, mulpdu + 1,
			513, MPA_MAX_ULPDU - 1, 3, 1000,
		};

		self->n = ARRAY_SIZE(s);
		memcpy(self->sizes, s, sizeof(s));
	}
	for (k = 0; k < U_MAX; k++) {
		self->buf[k] = malloc(U_BUF);
		ASSERT_NE(NULL, self->buf[k]);
	}
}

FIXTURE_TEARDOWN(uring)
{
	size_t k;

	/* first the ring: it cancels what is still in flight */
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->i >= 0)
		mpa_close_abort(self->i);
	if (self->r >= 0)
		mpa_close_abort(self->r);
	for (k = 0; k < U_MAX; k++)
		free(self->buf[k]);
}

enum {
	OP_SEND, OP_SENDMSG, OP_WRITE, OP_RECV, OP_RECVMSG, OP_READ,
	OP_RECV_ASYNC,
};

static const char *const op_name[] = {
	"SEND", "SENDMSG", "WRITE", "RECV", "RECVMSG", "READ", "RECV(async)",
};

/* Per request: the iovecs and msghdr that SENDMSG/RECVMSG point to. */
static struct iovec u_iov[U_MAX][3];
static struct msghdr u_msg[U_MAX];

/*
 * Prepare request @k: @op on @fd with @len octets of @buf (sends: one
 * ULPDU from three iovecs for SENDMSG; receives: two iovecs for RECVMSG).
 */
static struct io_uring_sqe *u_prep(struct io_uring *ring, int op, int fd,
				   uint8_t *buf, size_t len, __u64 k,
				   int msg_flags)
{
	struct io_uring_sqe *sqe = u_sqe(ring);
	size_t a = len / 3, b = len / 2;

	switch (op) {
	case OP_SEND:
		io_uring_prep_send(sqe, fd, buf, len, msg_flags);
		break;
	case OP_SENDMSG:
		u_iov[k][0] = (struct iovec){ buf, a };
		u_iov[k][1] = (struct iovec){ buf + a, 0 };
		u_iov[k][2] = (struct iovec){ buf + a, len - a };
		u_msg[k] = (struct msghdr){ .msg_iov = u_iov[k],
					    .msg_iovlen = 3 };
		io_uring_prep_sendmsg(sqe, fd, &u_msg[k], msg_flags);
		break;
	case OP_WRITE:
		io_uring_prep_write(sqe, fd, buf, len, 0);
		break;
	case OP_RECV:
	case OP_RECV_ASYNC:
		io_uring_prep_recv(sqe, fd, buf, len, msg_flags);
		if (op == OP_RECV_ASYNC)
			sqe->flags |= IOSQE_ASYNC;
		break;
	case OP_RECVMSG:
		u_iov[k][0] = (struct iovec){ buf, b };
		u_iov[k][1] = (struct iovec){ buf + b, len - b };
		u_msg[k] = (struct msghdr){ .msg_iov = u_iov[k],
					    .msg_iovlen = 2 };
		io_uring_prep_recvmsg(sqe, fd, &u_msg[k], msg_flags);
		break;
	case OP_READ:
		io_uring_prep_read(sqe, fd, buf, len, 0);
		break;
	}
	sqe->user_data = k;
	return sqe;
}

/* Link @sqe to the next one unless it is the last (@k of @n). */
static void u_link(struct io_uring_sqe *sqe, size_t k, size_t n)
{
	if (k + 1 < n)
		sqe->flags |= IOSQE_IO_LINK;
}

/* A linked chain of SENDs: in order, one ULPDU and one FPDU each. */
TEST_F(uring, send_linked)
{
	size_t k;

	for (k = 0; k < self->n; k++) {
		t_fill(self->buf[k], self->sizes[k], 100 + k);
		u_link(u_prep(&self->ring, OP_SEND, self->i, self->buf[k],
			      self->sizes[k], k, 0), k, self->n);
	}
	ASSERT_SUBMIT(&self->ring, self->n);
	for (k = 0; k < self->n; k++)
		p_expect(_metadata, self->r, self->sizes[k], 100 + k);
	for (k = 0; k < self->n; k++)
		EXPECT_CQE(&self->ring, k, self->sizes[k]);
	u_expect_fpdus(_metadata, self->i, self->r, self->n);
}

/* SEND, SENDMSG (three iovecs, one ULPDU) and WRITE, one at a time. */
TEST_F(uring, send_each)
{
	size_t k;

	for (k = 0; k < self->n; k++) {
		int op = OP_SEND + k % 3;

		t_fill(self->buf[0], self->sizes[k], 200 + k);
		u_prep(&self->ring, op, self->i, self->buf[0],
		       self->sizes[k], k, 0);
		ASSERT_SUBMIT(&self->ring, 1);
		u_expect(_metadata, &self->ring, k, self->sizes[k],
			 op_name[op]);
		p_expect(_metadata, self->r, self->sizes[k], 200 + k);
	}
	u_expect_fpdus(_metadata, self->i, self->r, self->n);
}

/*
 * Through a small send buffer: SENDs that find no room wait in io_uring's
 * poll for EPOLLOUT, and still go out whole and in order.
 */
TEST_F(uring, send_backpressure)
{
	int small = 4096, cnt;
	struct u_cqe c;
	size_t k, n = U_MAX;

	ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_SNDBUF, &small,
				sizeof(small)));
	for (k = 0; k < n; k++) {
		t_fill(self->buf[k], MPA_MAX_ULPDU, 300 + k);
		u_link(u_prep(&self->ring, OP_SEND, self->i, self->buf[k],
			      MPA_MAX_ULPDU, k, 0), k, n);
	}
	ASSERT_SUBMIT(&self->ring, n);
	/* about 1 MiB cannot all be taken while nobody reads */
	t_sleep_ms(T_QUIET);
	cnt = io_uring_cq_ready(&self->ring);
	EXPECT_GT((int)n, cnt);
	for (k = 0; k < n; k++)
		p_expect(_metadata, self->r, MPA_MAX_ULPDU, 300 + k);
	for (k = 0; k < n; k++) {
		ASSERT_EQ(0, u_next(&self->ring, &c, T_WAIT));
		EXPECT_EQ(k, c.data);
		EXPECT_EQ(MPA_MAX_ULPDU, c.res);
	}
	u_expect_fpdus(_metadata, self->i, self->r, n);
}

/*
 * RECV, RECVMSG (two iovecs), READ and RECV through io-wq, each submitted
 * before the peer sends: nothing completes until the whole FPDU is there,
 * then exactly one ULPDU.
 */
TEST_F(uring, recv_waiting)
{
	size_t k;

	for (k = 0; k < self->n; k++) {
		int op = OP_RECV + k % 4;

		u_prep(&self->ring, op, self->r, self->buf[0], U_BUF, k, 0);
		ASSERT_SUBMIT(&self->ring, 1);
		if (k < 4)
			EXPECT_NO_CQE(&self->ring);
		p_send(_metadata, self->i, self->sizes[k], 400 + k);
		u_expect(_metadata, &self->ring, k, self->sizes[k],
			 op_name[op]);
		t_fill(exp_buf, self->sizes[k], 400 + k);
		EXPECT_BYTES(exp_buf, self->buf[0], self->sizes[k]);
		if (op == OP_RECVMSG)
			EXPECT_EQ(MSG_EOR, u_msg[k].msg_flags &
					   (MSG_EOR | MSG_TRUNC));
	}
	u_expect_fpdus(_metadata, self->i, self->r, self->n);
}

/* A linked chain of RECVs, all waiting before the peer sends. */
TEST_F(uring, recv_linked)
{
	size_t k;

	for (k = 0; k < self->n; k++)
		u_link(u_prep(&self->ring, k % 2 ? OP_RECVMSG : OP_RECV,
			      self->r, self->buf[k], U_BUF, k, 0), k, self->n);
	ASSERT_SUBMIT(&self->ring, self->n);
	EXPECT_NO_CQE(&self->ring);
	for (k = 0; k < self->n; k++)
		p_send(_metadata, self->i, self->sizes[k], 500 + k);
	for (k = 0; k < self->n; k++) {
		EXPECT_CQE(&self->ring, k, self->sizes[k]);
		t_fill(exp_buf, self->sizes[k], 500 + k);
		EXPECT_BYTES(exp_buf, self->buf[k], self->sizes[k]);
		if (k % 2)
			EXPECT_EQ(MSG_EOR, u_msg[k].msg_flags &
					   (MSG_EOR | MSG_TRUNC));
	}
	u_expect_fpdus(_metadata, self->i, self->r, self->n);
}

/*
 * Through a small receive buffer, where MPA moves each FPDU into a buffer
 * of its own as it comes (copy mode) and wakes the reader from its work:
 * waiting RECVs still complete, one ULPDU each.
 */
TEST_F(uring, recv_small_rcvbuf)
{
	static const size_t sizes[] = {
		64768, 64768, 30000, 64768, 1, 64767, 64768, 5000,
	};
	const size_t n = ARRAY_SIZE(sizes);
	int small = 4096;
	size_t k;

	ASSERT_EQ(0, setsockopt(self->r, SOL_SOCKET, SO_RCVBUF, &small,
				sizeof(small)));
	for (k = 0; k < n; k++)
		u_link(u_prep(&self->ring, k % 2 ? OP_RECVMSG : OP_RECV,
			      self->r, self->buf[k], U_BUF, k, 0), k, n);
	ASSERT_SUBMIT(&self->ring, n);
	for (k = 0; k < n; k++)
		p_send(_metadata, self->i, sizes[k], 1400 + k);
	for (k = 0; k < n; k++) {
		EXPECT_CQE(&self->ring, k, sizes[k]);
		t_fill(exp_buf, sizes[k], 1400 + k);
		EXPECT_BYTES(exp_buf, self->buf[k], sizes[k]);
	}
	u_expect_fpdus(_metadata, self->i, self->r, n);
}

/*
 * A buffer shorter than the ULPDU gets its first part (RECVMSG without
 * MSG_EOR), the next request the rest, as with recvmsg().
 */
TEST_F(uring, recv_short)
{
	uint8_t *b = self->buf[0];

	p_send(_metadata, self->i, 1000, 600);
	p_send(_metadata, self->i, MPA_MAX_ULPDU, 601);
	t_fill(exp_buf, 1000, 600);

	ASSERT_EQ(POLLIN, t_poll(self->r, POLLIN, T_WAIT) & POLLIN);
	u_prep(&self->ring, OP_RECV, self->r, b, 100, 0, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	/* more is queued, but MPA gives io_uring no msg_inq to tell */
	EXPECT_EQ(0, EXPECT_CQE(&self->ring, 0, 100) &
		     IORING_CQE_F_SOCK_NONEMPTY);
	EXPECT_BYTES(exp_buf, b, 100);
	u_prep(&self->ring, OP_RECVMSG, self->r, b, 300, 1, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 1, 300);
	EXPECT_BYTES(exp_buf + 100, b, 300);
	EXPECT_EQ(0, u_msg[1].msg_flags & (MSG_EOR | MSG_TRUNC));
	u_prep(&self->ring, OP_READ, self->r, b, U_BUF, 2, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 2, 600);
	EXPECT_BYTES(exp_buf + 400, b, 600);

	t_fill(exp_buf, MPA_MAX_ULPDU, 601);
	u_prep(&self->ring, OP_RECVMSG, self->r, b, MPA_MAX_ULPDU - 1, 3, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 3, MPA_MAX_ULPDU - 1);
	EXPECT_BYTES(exp_buf, b, MPA_MAX_ULPDU - 1);
	EXPECT_EQ(0, u_msg[3].msg_flags & MSG_EOR);
	u_prep(&self->ring, OP_RECVMSG, self->r, b, U_BUF, 4, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 4, 1);
	EXPECT_EQ(exp_buf[MPA_MAX_ULPDU - 1], b[0]);
	EXPECT_EQ(MSG_EOR, u_msg[4].msg_flags & MSG_EOR);
	u_expect_fpdus(_metadata, self->i, self->r, 2);
}

/*
 * A multishot RECV with provided buffers: one CQE per ULPDU, then 0 (and
 * no more CQEs) at the end of the stream.
 */
TEST_F(uring, recv_multishot)
{
	static uint8_t pool[U_MAX * U_BUF];
	struct io_uring_sqe *sqe;
	struct u_cqe c;
	size_t k;

	sqe = u_sqe(&self->ring);
	io_uring_prep_provide_buffers(sqe, pool, U_BUF, U_MAX, 7, 0);
	sqe->user_data = 1000;
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 1000, 0);

	sqe = u_sqe(&self->ring);
	io_uring_prep_recv_multishot(sqe, self->r, NULL, 0, 0);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	sqe->buf_group = 7;
	sqe->user_data = 1;
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_NO_CQE(&self->ring);
	for (k = 0; k < self->n; k++)
		p_send(_metadata, self->i, self->sizes[k], 700 + k);
	for (k = 0; k < self->n; k++) {
		unsigned int bid;

		ASSERT_EQ(0, u_next(&self->ring, &c, T_WAIT));
		EXPECT_EQ(1, c.data);
		ASSERT_EQ((int)self->sizes[k], c.res)
			TH_LOG("ULPDU %zu: %d", k, c.res);
		EXPECT_EQ(IORING_CQE_F_BUFFER | IORING_CQE_F_MORE,
			  c.flags & (IORING_CQE_F_BUFFER | IORING_CQE_F_MORE));
		bid = c.flags >> IORING_CQE_BUFFER_SHIFT;
		ASSERT_GT(U_MAX, bid);
		t_fill(exp_buf, self->sizes[k], 700 + k);
		EXPECT_BYTES(exp_buf, pool + (size_t)bid * U_BUF,
			     self->sizes[k]);
	}
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	ASSERT_EQ(0, u_next(&self->ring, &c, T_WAIT));
	EXPECT_EQ(1, c.data);
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(0, c.flags & IORING_CQE_F_MORE);
	u_expect_fpdus(_metadata, self->i, self->r, self->n);
}

/*
 * MSG_WAITALL: recv(2) on an MPA socket ignores it (one ULPDU per call),
 * but io_uring repeats a short RECV on a stream socket itself until the
 * buffer is full, joining ULPDUs. mpa.rst warns against it; this shows
 * what happens.
 */
TEST_F(uring, recv_waitall_joins)
{
	uint8_t *b = self->buf[0];

	u_prep(&self->ring, OP_RECV, self->r, b, 1500, 0, MSG_WAITALL);
	ASSERT_SUBMIT(&self->ring, 1);
	p_send(_metadata, self->i, 1000, 800);
	p_send(_metadata, self->i, 1000, 801);
	EXPECT_CQE(&self->ring, 0, 1500);
	t_fill(exp_buf, 1000, 800);
	EXPECT_BYTES(exp_buf, b, 1000);
	t_fill(exp_buf, 1000, 801);
	EXPECT_BYTES(exp_buf, b + 1000, 500);
	/* recv(2) with MSG_WAITALL: the rest of that ULPDU, no more */
	p_send(_metadata, self->i, 10, 802);
	EXPECT_EQ(500, recv(self->r, rx_buf, sizeof(rx_buf), MSG_WAITALL));
	EXPECT_EQ(10, recv(self->r, rx_buf, sizeof(rx_buf), MSG_WAITALL));
}

/*
 * What send(2) and write(2) refuse, io_uring's SEND, SENDMSG and WRITE
 * refuse with the same errno in their CQE (write(2) of 0 octets too: a
 * socket's write reaches sendmsg). Nothing goes on the wire for any.
 */
TEST_F(uring, send_errors)
{
	static const struct {
		int op;
		size_t len;
		int flags;
		int err;	/* the CQE's -errno */
	} c[] = {
		{ OP_SEND, 0, 0, EINVAL },
		{ OP_SENDMSG, 0, 0, EINVAL },
		{ OP_SEND, MPA_MAX_ULPDU + 1, 0, EMSGSIZE },
		{ OP_SENDMSG, MPA_MAX_ULPDU + 1, 0, EMSGSIZE },
		{ OP_WRITE, MPA_MAX_ULPDU + 1, 0, EMSGSIZE },
		{ OP_SEND, 10, MSG_OOB, EOPNOTSUPP },
		{ OP_WRITE, 0, 0, EINVAL },
	};
	uint8_t *b = self->buf[0];
	size_t k;
	ssize_t r;

	for (k = 0; k < ARRAY_SIZE(c); k++) {
		u_prep(&self->ring, c[k].op, self->i, b, c[k].len, k,
		       c[k].flags);
		ASSERT_SUBMIT(&self->ring, 1);
		u_expect(_metadata, &self->ring, k, -c[k].err,
			 op_name[c[k].op]);
		/* the system call says the same */
		if (c[k].op == OP_WRITE)
			r = write(self->i, b, c[k].len);
		else
			r = send(self->i, b, c[k].len,
				 c[k].flags | MSG_NOSIGNAL);
		EXPECT_EQ(-1, r);
		EXPECT_EQ(c[k].err, errno);
	}
	p_quiet(_metadata, self->r);
	u_expect_fpdus(_metadata, self->i, self->r, 0);
	/* and the socket carries on */
	t_fill(b, 4, 900);
	u_prep(&self->ring, OP_SEND, self->i, b, 4, 99, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 99, 4);
	p_expect(_metadata, self->r, 4, 900);
}

/*
 * A zero-copy send: the request's CQE has -@err and IORING_CQE_F_MORE,
 * then its notification CQE comes (IORING_CQE_F_NOTIF, result 0).
 * @err 0: it works and sends @len octets.
 */
static void u_send_zc(struct __test_metadata *_metadata,
		      struct io_uring *ring, int fd, bool msg, uint8_t *buf,
		      size_t len, int err)
{
	struct io_uring_sqe *sqe = u_sqe(ring);
	static struct iovec iov;
	static struct msghdr mh;
	struct u_cqe c;

	if (msg) {
		iov = (struct iovec){ buf, len };
		mh = (struct msghdr){ .msg_iov = &iov, .msg_iovlen = 1 };
		io_uring_prep_sendmsg_zc(sqe, fd, &mh, 0);
	} else {
		io_uring_prep_send_zc(sqe, fd, buf, len, 0, 0);
	}
	sqe->user_data = 42;
	ASSERT_SUBMIT(ring, 1);
	ASSERT_EQ(0, u_next(ring, &c, T_WAIT));
	EXPECT_EQ(42, c.data);
	EXPECT_EQ(err ? -err : (int)len, c.res)
		TH_LOG("%s: %d (%s)", msg ? "SENDMSG_ZC" : "SEND_ZC", c.res,
		       c.res < 0 ? strerror(-c.res) : "-");
	EXPECT_EQ(IORING_CQE_F_MORE, c.flags & (IORING_CQE_F_MORE |
						IORING_CQE_F_NOTIF));
	ASSERT_EQ(0, u_next(ring, &c, T_WAIT));
	EXPECT_EQ(42, c.data);
	EXPECT_EQ(0, c.res);
	EXPECT_EQ(IORING_CQE_F_NOTIF, c.flags & (IORING_CQE_F_MORE |
						 IORING_CQE_F_NOTIF));
}

/*
 * Zero-copy sends are refused: the kernel clears SOCK_SUPPORT_ZC when a
 * ULP attaches, and io_uring then fails SEND_ZC and SENDMSG_ZC with
 * EOPNOTSUPP before the socket sees them. Nothing goes on the wire.
 */
TEST_F(uring, send_zc_refused)
{
	uint8_t *b = self->buf[0];

	t_fill(b, 100, 1000);
	u_send_zc(_metadata, &self->ring, self->i, false, b, 100, EOPNOTSUPP);
	u_send_zc(_metadata, &self->ring, self->i, true, b, 100, EOPNOTSUPP);
	p_quiet(_metadata, self->r);
	u_expect_fpdus(_metadata, self->i, self->r, 0);
	u_prep(&self->ring, OP_SEND, self->i, b, 100, 1, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 1, 100);
	p_expect(_metadata, self->r, 100, 1000);
}

/* SPLICE out of the socket is refused as splice(2) is. */
TEST_F(uring, splice_refused)
{
	struct io_uring_sqe *sqe;
	int p[2];

	p_send(_metadata, self->i, 100, 1100);
	ASSERT_EQ(POLLIN, t_poll(self->r, POLLIN, T_WAIT) & POLLIN);
	ASSERT_EQ(0, pipe(p));
	sqe = u_sqe(&self->ring);
	io_uring_prep_splice(sqe, self->r, -1, p[1], -1, 100, 0);
	sqe->user_data = 5;
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 5, -EOPNOTSUPP);
	close(p[0]);
	close(p[1]);
	/* the ULPDU is still there, whole */
	p_expect(_metadata, self->r, 100, 1100);
}

/*
 * A Responder's SEND before the Initiator's first FPDU completes, like a
 * non-blocking send(2): the ULPDU is held (R-7.1.2-15) and goes out after
 * the Initiator's first FPDU arrived.
 */
TEST_F(uring, send_held)
{
	struct mpa_result res;
	uint8_t *b = self->buf[0];

	t_fill(b, 300, 1200);
	u_prep(&self->ring, OP_SEND, self->r, b, 300, 0, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 0, 300);
	t_get_result(_metadata, self->r, &res);
	EXPECT_TRUE(res.flags & MPA_RESULT_TX_HELD);
	p_quiet(_metadata, self->i);
	p_send(_metadata, self->i, 10, 1201);
	p_expect(_metadata, self->r, 10, 1201);
	p_expect(_metadata, self->i, 300, 1200);
}

/* io_uring's socket commands (Linux 6.7; not in liburing 2.3's headers) */
#define U_SOCKET_URING_OP_SIOCINQ	0
#define U_SOCKET_URING_OP_SIOCOUTQ	1

static void u_prep_cmd(struct io_uring *ring, int fd, __u32 cmd_op, __u64 k)
{
	struct io_uring_sqe *sqe = u_sqe(ring);

	io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, NULL, 0, 0);
	sqe->cmd_op = cmd_op;
	sqe->user_data = k;
}

/*
 * IORING_OP_URING_CMD's SIOCINQ and SIOCOUTQ answer as ioctl(2) does:
 * the octets of the next ULPDU not yet read (0 while its FPDU is not
 * complete), and EOPNOTSUPP.
 */
TEST_F(uring, uring_cmd_ioctl)
{
	int n = -1;

	u_prep_cmd(&self->ring, self->r, U_SOCKET_URING_OP_SIOCINQ, 1);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 1, 0);
	p_send(_metadata, self->i, 1000, 1300);
	ASSERT_EQ(POLLIN, t_poll(self->r, POLLIN, T_WAIT) & POLLIN);
	EXPECT_EQ(0, ioctl(self->r, SIOCINQ, &n));
	EXPECT_EQ(1000, n);
	u_prep_cmd(&self->ring, self->r, U_SOCKET_URING_OP_SIOCINQ, 2);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 2, 1000);
	EXPECT_EQ(-1, ioctl(self->i, SIOCOUTQ, &n));
	EXPECT_EQ(EOPNOTSUPP, errno);
	u_prep_cmd(&self->ring, self->i, U_SOCKET_URING_OP_SIOCOUTQ, 3);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_CQE(&self->ring, 3, -EOPNOTSUPP);
	p_expect(_metadata, self->r, 1000, 1300);
}

/*
 * Both sockets closed while requests wait on them (a RECV, SENDs held up
 * by a small send buffer): the ring's exit cancels them; the sockets go
 * away cleanly (the debug lane checks for leaks and splats).
 */
TEST_F(uring, close_pending)
{
	int small = 4096;
	size_t k;

	ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_SNDBUF, &small,
				sizeof(small)));
	u_prep(&self->ring, OP_RECV, self->r, self->buf[0], U_BUF, 0, 0);
	for (k = 1; k < U_MAX; k++)
		u_link(u_prep(&self->ring, OP_SEND, self->i, self->buf[k],
			      MPA_MAX_ULPDU, k, 0), k, U_MAX);
	ASSERT_SUBMIT(&self->ring, U_MAX);
	EXPECT_GT(U_MAX, io_uring_cq_ready(&self->ring));
	close(self->i);
	close(self->r);
	self->i = -1;
	self->r = -1;
	io_uring_queue_exit(&self->ring);
	self->ring_ok = false;
}

/*
 * MSG_MORE keeps a ULPDU open across SENDs as across send(2) calls, and
 * IORING_OP_SHUTDOWN sends it before the FIN as shutdown(2) does.
 */
TEST_F(uring, send_more_shutdown)
{
	struct io_uring_sqe *sqe;
	uint8_t *b = self->buf[0];

	t_fill(b, 150, 1500);
	u_link(u_prep(&self->ring, OP_SEND, self->i, b, 100, 1, MSG_MORE),
	       0, 2);
	u_link(u_prep(&self->ring, OP_SEND, self->i, b + 100, 50, 2,
		      MSG_MORE), 0, 2);
	sqe = u_sqe(&self->ring);
	io_uring_prep_shutdown(sqe, self->i, SHUT_WR);
	sqe->user_data = 3;
	ASSERT_SUBMIT(&self->ring, 3);
	EXPECT_CQE(&self->ring, 1, 100);
	EXPECT_CQE(&self->ring, 2, 50);
	EXPECT_CQE(&self->ring, 3, 0);
	p_expect(_metadata, self->r, 150, 1500);
	EXPECT_EQ(0, t_wait_eof(self->r, T_WAIT));
	u_expect_fpdus(_metadata, self->i, self->r, 1);
}

/*
 * The startup phase through io_uring: RECV and SEND fail with
 * -EINPROGRESS as recv(2) and send(2) do; a POLL_ADD waits for it as
 * poll(2) does: POLLIN when a Responder has a Request to judge, POLLOUT
 * when an Initiator's non-blocking MPA_START is over.
 */
TEST(startup_poll)
{
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	struct u_cqe c;
	uint8_t buf[16];
	int i, r;

	u_ring_init(_metadata, &ring);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, &i, &r));
	ASSERT_EQ(0, mpa_config(i, MPA_ROLE_INITIATOR, T_WAIT));
	ASSERT_EQ(0, mpa_config(r, MPA_ROLE_RESPONDER, T_WAIT));
	ASSERT_EQ(0, t_nonblock(r));
	ASSERT_EQ(-1, mpa_start(r));
	ASSERT_EQ(EINPROGRESS, errno);

	sqe = u_sqe(&ring);
	io_uring_prep_poll_add(sqe, r, POLLIN);
	sqe->user_data = 1;
	u_prep(&ring, OP_RECV, r, buf, sizeof(buf), 2, 0);
	u_prep(&ring, OP_SEND, r, buf, sizeof(buf), 3, 0);
	ASSERT_SUBMIT(&ring, 3);
	EXPECT_CQE(&ring, 2, -EINPROGRESS);
	EXPECT_CQE(&ring, 3, -EINPROGRESS);
	EXPECT_NO_CQE(&ring);

	ASSERT_EQ(0, t_nonblock(i));
	ASSERT_EQ(-1, mpa_start(i));
	ASSERT_EQ(EINPROGRESS, errno);
	sqe = u_sqe(&ring);
	io_uring_prep_poll_add(sqe, i, POLLOUT);
	sqe->user_data = 4;
	ASSERT_SUBMIT(&ring, 1);
	ASSERT_EQ(0, u_next(&ring, &c, T_WAIT));
	EXPECT_EQ(1, c.data);
	EXPECT_EQ(POLLIN, c.res & (POLLIN | POLLERR));
	EXPECT_MPA_STATE(r, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_NO_CQE(&ring);

	ASSERT_EQ(0, mpa_answer(r, MPA_ACCEPT, NULL, 0));
	ASSERT_EQ(0, u_next(&ring, &c, T_WAIT));
	EXPECT_EQ(4, c.data);
	EXPECT_EQ(POLLOUT, c.res & (POLLOUT | POLLERR));
	EXPECT_MPA_STATE(i, MPA_STATE_FULL);
	io_uring_queue_exit(&ring);
	mpa_close_abort(i);
	mpa_close_abort(r);
}

/* Zero-copy sends are refused as soon as MPA is attached. */
TEST(send_zc_streaming)
{
	struct io_uring ring;
	uint8_t buf[64];
	int a, b;

	u_ring_init(_metadata, &ring);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	memset(buf, 'z', sizeof(buf));
	/* plain TCP: io_uring's zero-copy send works here */
	u_send_zc(_metadata, &ring, a, false, buf, sizeof(buf), 0);
	ASSERT_EQ(sizeof(buf), t_read(b, rx_buf, sizeof(buf), T_WAIT));
	ASSERT_EQ(0, mpa_attach(a));
	EXPECT_MPA_STATE(a, MPA_STATE_STREAMING);
	u_send_zc(_metadata, &ring, a, false, buf, sizeof(buf), EOPNOTSUPP);
	u_send_zc(_metadata, &ring, a, true, buf, sizeof(buf), EOPNOTSUPP);
	p_quiet(_metadata, b);
	/* a plain send still reaches TCP in STREAMING state */
	ASSERT_EQ(3, send(a, "abc", 3, MSG_NOSIGNAL));
	ASSERT_EQ(3, t_read(b, rx_buf, 3, T_WAIT));
	io_uring_queue_exit(&ring);
	mpa_close_abort(a);
	mpa_close_abort(b);
}

/* An MPA socket (the Responder) against a raw TCP peer writing FPDUs. */
FIXTURE(uraw)
{
	struct io_uring ring;
	bool ring_ok;
	int m, raw;
	uint32_t pos;		/* the raw peer's stream position */
	uint8_t *buf;
};

FIXTURE_VARIANT(uraw)
{
	int family;
	bool markers;		/* in what the MPA socket receives */
};

FIXTURE_VARIANT_ADD(uraw, markers0_ipv6)
{
	.family = AF_INET6, .markers = false,
};

FIXTURE_VARIANT_ADD(uraw, markers1_ipv4)
{
	.family = AF_INET, .markers = true,
};

FIXTURE_SETUP(uraw)
{
	self->m = -1;
	self->raw = -1;
	signal(SIGPIPE, SIG_IGN);
	u_ring_init(_metadata, &self->ring);
	self->ring_ok = true;
	self->buf = malloc(U_BUF);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->raw, &self->m));
	ASSERT_LE(0, t_raw_initiator(self->m, self->raw, T_C,
				     variant->markers, true));
	self->pos = 0;
}

FIXTURE_TEARDOWN(uraw)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->m >= 0)
		mpa_close_abort(self->m);
	if (self->raw >= 0)
		close(self->raw);
	free(self->buf);
}

/*
 * The raw peer's next FPDU, of @len octets of t_fill(@seed): its wire
 * image into @out (room for T_FPDU_MAX), its length; the position moves.
 */
static size_t r_fpdu(uint32_t *pos, bool markers, uint8_t *out, size_t len,
		     uint64_t seed)
{
	static uint8_t u[T_ULPDU_BUF];
	size_t wire;

	t_fill(u, len, seed);
	wire = t_fpdu_encode(out, *pos, markers, u, len, NULL);
	*pos += wire;
	return wire;
}

static void r_send(struct __test_metadata *_metadata, int fd,
		   const uint8_t *b, size_t len)
{
	ASSERT_EQ((ssize_t)len, t_send(fd, b, len));
}

/*
 * Half an FPDU completes neither a POLL_ADD for POLLIN nor a RECV; the
 * rest completes both, with the whole ULPDU.
 */
TEST_F(uraw, half_fpdu)
{
	static uint8_t w[T_FPDU_MAX];
	size_t wire = r_fpdu(&self->pos, variant->markers, w, 3000, 1);
	struct io_uring_sqe *sqe;
	struct u_cqe c[2];
	int k;

	sqe = u_sqe(&self->ring);
	io_uring_prep_poll_add(sqe, self->m, POLLIN);
	sqe->user_data = 1;
	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 2, 0);
	ASSERT_SUBMIT(&self->ring, 2);
	r_send(_metadata, self->raw, w, wire / 2);
	EXPECT_NO_CQE(&self->ring);
	r_send(_metadata, self->raw, w + wire / 2, wire - wire / 2);
	for (k = 0; k < 2; k++)
		ASSERT_EQ(0, u_next(&self->ring, &c[k], T_WAIT));
	if (c[0].data == 2) {
		struct u_cqe t = c[0];

		c[0] = c[1];
		c[1] = t;
	}
	EXPECT_EQ(1, c[0].data);
	EXPECT_EQ(POLLIN, c[0].res & POLLIN);
	EXPECT_EQ(2, c[1].data);
	EXPECT_EQ(3000, c[1].res);
	t_fill(exp_buf, 3000, 1);
	EXPECT_BYTES(exp_buf, self->buf, 3000);
}

/* A RECV waiting when a bad CRC arrives gets -EBADMSG, and so on. */
TEST_F(uraw, crc_error)
{
	static uint8_t w[T_FPDU_MAX];
	size_t wire;

	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 1, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	wire = r_fpdu(&self->pos, variant->markers, w, 100, 2);
	r_send(_metadata, self->raw, w, wire);
	EXPECT_CQE(&self->ring, 1, 100);

	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 2, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	EXPECT_NO_CQE(&self->ring);
	wire = r_fpdu(&self->pos, variant->markers, w, 700, 3);
	w[wire - 1] ^= 0x40;		/* the CRC field */
	r_send(_metadata, self->raw, w, wire);
	EXPECT_CQE(&self->ring, 2, -EBADMSG);
	/* sticky, whatever comes next */
	wire = r_fpdu(&self->pos, variant->markers, w, 10, 4);
	r_send(_metadata, self->raw, w, wire);
	u_prep(&self->ring, OP_RECVMSG, self->m, self->buf, U_BUF, 3, 0);
	u_prep(&self->ring, OP_READ, self->m, self->buf, U_BUF, 4, 0);
	ASSERT_SUBMIT(&self->ring, 2);
	EXPECT_CQE(&self->ring, 3, -EBADMSG);
	EXPECT_CQE(&self->ring, 4, -EBADMSG);
	EXPECT_MPA_ERROR(self->m, MPA_ERR_CRC, MPA_REASON_CRC, EBADMSG);
}

/* A FIN at an FPDU boundary: the FPDU, then 0. */
TEST_F(uraw, fin)
{
	static uint8_t w[T_FPDU_MAX];
	size_t wire = r_fpdu(&self->pos, variant->markers, w, 40, 5);

	u_link(u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 1, 0),
	       0, 2);
	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 2, 0);
	ASSERT_SUBMIT(&self->ring, 2);
	r_send(_metadata, self->raw, w, wire);
	ASSERT_EQ(0, shutdown(self->raw, SHUT_WR));
	EXPECT_CQE(&self->ring, 1, 40);
	EXPECT_CQE(&self->ring, 2, 0);
}

/* A FIN inside an FPDU: -EPROTO, the partial FPDU never delivered. */
TEST_F(uraw, fin_inside)
{
	static uint8_t w[T_FPDU_MAX];
	size_t wire = r_fpdu(&self->pos, variant->markers, w, 2000, 6);

	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 1, 0);
	ASSERT_SUBMIT(&self->ring, 1);
	r_send(_metadata, self->raw, w, wire - 8);
	ASSERT_EQ(0, shutdown(self->raw, SHUT_WR));
	EXPECT_CQE(&self->ring, 1, -EPROTO);
}

/* A reset after an FPDU: the FPDU, then -ECONNRESET. */
TEST_F(uraw, reset)
{
	static uint8_t w[T_FPDU_MAX];
	size_t wire = r_fpdu(&self->pos, variant->markers, w, 64, 7);

	r_send(_metadata, self->raw, w, wire);
	ASSERT_EQ(POLLIN, t_poll(self->m, POLLIN, T_WAIT) & POLLIN);
	mpa_close_abort(self->raw);
	self->raw = -1;
	u_link(u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 1, 0),
	       0, 2);
	u_prep(&self->ring, OP_RECV, self->m, self->buf, U_BUF, 2, 0);
	ASSERT_SUBMIT(&self->ring, 2);
	EXPECT_CQE(&self->ring, 1, 64);
	EXPECT_CQE(&self->ring, 2, -ECONNRESET);
}

TEST_HARNESS_MAIN
