// SPDX-License-Identifier: GPL-2.0
/*
 * Full Operation between two MPA sockets on loopback (mpa.rst, "Full
 * Operation: sending and receiving ULPDUs"): every send() is one ULPDU,
 * every recv() returns octets of one ULPDU with MSG_EOR on its last octet,
 * in both directions, over every combination of Markers each way and CRC
 * (fixture "data"); the socket calls around it, blocking and not (fixture
 * "sock"); the Responder rule (fixture "held").
 *
 * Stream positions are tracked with the test's own FPDU layout
 * (mpa_test.h), to pick ULPDU sizes whose FPDUs end or start right at a
 * Marker, put a Marker between PAD and CRC, and so on, and to count the
 * Markers MPA_STATS must report.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <linux/sockios.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000	/* how long a test waits for an event */
#define T_QUIET		250	/* how long "nothing happens" is watched */
#define T_BUF		(MPA_MAX_ULPDU + 4096)

static uint8_t tx_buf[T_BUF], rx_buf[T_BUF], exp_buf[T_BUF];

/* Directions: Initiator to Responder, and back. */
enum { I2R, R2I };

/* Send @sizes from @tx in a thread, receive and check them at @rx. */
static void xfer_fds(struct __test_metadata *_metadata, int tx, int rx,
		     const size_t *sizes, size_t n, uint64_t seed)
{
	struct t_tx p;

	ASSERT_EQ(0, t_tx_start(&p, tx, sizes, n, seed));
	t_rx_check(_metadata, rx, sizes, n, seed);
	pthread_join(p.thr, NULL);
	EXPECT_EQ(n, p.sent)
		TH_LOG("send %zu (%zu octets): %zd, errno %d (%s)", p.sent,
		       p.sent < n ? sizes[p.sent] : 0, p.rc, p.err,
		       strerror(p.err));
}

/* One ULPDU @buf of @len from @tx, read back whole at @rx. */
static void one_ulpdu(struct __test_metadata *_metadata, int tx, int rx,
		      const void *buf, size_t len)
{
	ssize_t r;
	int fl;

	ASSERT_EQ((ssize_t)len, send(tx, buf, len, MSG_NOSIGNAL));
	r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("errno %d", r < 0 ? errno : 0);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES(buf, rx_buf, len);
}

/* Sizes sampled over 1..64768. */
static const size_t sweep[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 31, 32, 33,
	63, 64, 65, 100, 127, 128, 129, 255, 256, 257, 479, 482, 500, 502,
	503, 504, 505, 506, 507, 508, 509, 510, 511, 512, 513, 1000, 1023,
	1024, 1025, 1400, 1446, 1447, 1448, 1449, 1460, 2047, 2048, 2049,
	4093, 4094, 4095, 4096, 4097, 8191, 8192, 8193, 9000, 12345, 16384,
	20000, 32000, 32767, 32768, 32769, 40000, 50000, 60000, 64000, 64511,
	64512, 64513, 64766, 64767, 64768, 1, 64768, 2, 64767, 3,
};

/* data: every Markers and CRC combination, both directions. */
FIXTURE(data)
{
	struct mpa_t_policy saved;
	int i, r;
	uint32_t pos[2];	/* stream positions, I2R and R2I */
};

FIXTURE_VARIANT(data)
{
	bool tx_m;		/* the Initiator sends Markers */
	bool rx_m;		/* the Initiator receives Markers */
	bool crc;
	int family;
	int mss;		/* TCP_MAXSEG before the handshake (0: none) */
};

#define DATA(name, t, r, c, fam, m)					\
	FIXTURE_VARIANT_ADD(data, name)					\
	{								\
		.tx_m = t, .rx_m = r, .crc = c, .family = fam, .mss = m, \
	}

DATA(tx0_rx0_crc1, 0, 0, 1, AF_INET, 0);
DATA(tx0_rx1_crc1, 0, 1, 1, AF_INET6, 1460);
DATA(tx1_rx0_crc1, 1, 0, 1, AF_INET6, 0);
DATA(tx1_rx1_crc1, 1, 1, 1, AF_INET, 1460);
DATA(tx0_rx0_crc0, 0, 0, 0, AF_INET6, 1460);
DATA(tx0_rx1_crc0, 0, 1, 0, AF_INET, 0);
DATA(tx1_rx0_crc0, 1, 0, 0, AF_INET, 1460);
DATA(tx1_rx1_crc0, 1, 1, 0, AF_INET6, 0);

/*
 * A fresh pair in Full Operation, nothing sent yet. C=0 needs the
 * administrator's crc-off-allowed, set for the startup and restored.
 */
static void pair_setup(struct __test_metadata *_metadata,
		       struct mpa_t_policy *saved, int family,
		       const struct t_pair_opts *o, bool tx_m, bool rx_m,
		       bool crc, int *i, int *r)
{
	int rc;

	signal(SIGPIPE, SIG_IGN);
	*i = *r = -1;
	ASSERT_EQ(0, mpa_policy_get(saved));
	if (!crc)
		ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	rc = t_mpa_pair_opts(family, o, rx_m, tx_m, crc, i, r);
	mpa_policy_set(saved);
	ASSERT_EQ(0, rc);
	/* A stuck test fails instead of hanging. */
	ASSERT_EQ(0, t_set_timeo(*i, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(*r, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(*i, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(*r, SO_SNDTIMEO, T_WAIT));
}

FIXTURE_SETUP(data)
{
	struct t_pair_opts o = { .mss = variant->mss };

	pair_setup(_metadata, &self->saved, variant->family, &o,
		   variant->tx_m, variant->rx_m, variant->crc, &self->i,
		   &self->r);
	self->pos[I2R] = self->pos[R2I] = 0;
}

FIXTURE_TEARDOWN_PARENT(data)
{
	mpa_policy_set(&self->saved);
}

static int d_tx(FIXTURE_DATA(data) *self, int dir)
{
	return dir == I2R ? self->i : self->r;
}

static int d_rx(FIXTURE_DATA(data) *self, int dir)
{
	return dir == I2R ? self->r : self->i;
}

static bool d_markers(const FIXTURE_VARIANT(data) *v, int dir)
{
	return dir == I2R ? v->tx_m : v->rx_m;
}

/* Send and check @sizes one way, keeping track of the stream position. */
static void d_xfer(struct __test_metadata *_metadata, FIXTURE_DATA(data) *self,
		   const FIXTURE_VARIANT(data) *v, int dir, const size_t *sizes,
		   size_t n, uint64_t seed)
{
	size_t k;

	xfer_fds(_metadata, d_tx(self, dir), d_rx(self, dir), sizes, n, seed);
	for (k = 0; k < n; k++)
		self->pos[dir] += t_fpdu_wire(self->pos[dir],
					      d_markers(v, dir), sizes[k]);
}

/* The Initiator's first FPDU, which lets the Responder send (R-7.1.2-15). */
static void d_prime(struct __test_metadata *_metadata,
		    FIXTURE_DATA(data) *self, const FIXTURE_VARIANT(data) *v)
{
	static const size_t one[] = { 16 };
	struct mpa_result res;

	d_xfer(_metadata, self, v, I2R, one, 1, 0xfeed);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(0, res.flags & MPA_RESULT_TX_HELD);
}

TEST_F(data, result)
{
	struct mpa_result res;
	__u8 crc = variant->crc ? MPA_RESULT_CRC : 0;

	t_get_result(_metadata, self->i, &res);
	EXPECT_EQ(MPA_ROLE_INITIATOR, res.role);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ((variant->tx_m ? MPA_RESULT_TX_MARKERS : 0) |
		  (variant->rx_m ? MPA_RESULT_RX_MARKERS : 0) | crc, res.flags);
	EXPECT_MULPDU(self->i, res.mulpdu, variant->tx_m);
	t_get_result(_metadata, self->r, &res);
	EXPECT_EQ(MPA_ROLE_RESPONDER, res.role);
	EXPECT_EQ((variant->rx_m ? MPA_RESULT_TX_MARKERS : 0) |
		  (variant->tx_m ? MPA_RESULT_RX_MARKERS : 0) | crc |
		  MPA_RESULT_TX_HELD, res.flags);
	EXPECT_MULPDU(self->r, res.mulpdu, variant->rx_m);
	if (variant->mss)
		EXPECT_GE(variant->mss, res.mulpdu);
}

TEST_F(data, sizes_i2r)
{
	d_xfer(_metadata, self, variant, I2R, sweep, ARRAY_SIZE(sweep), 100);
}

TEST_F(data, sizes_r2i)
{
	d_prime(_metadata, self, variant);
	d_xfer(_metadata, self, variant, R2I, sweep, ARRAY_SIZE(sweep), 200);
}

/* Both directions at once, each with a sender thread. */
TEST_F(data, sizes_both_ways)
{
	struct t_tx a, b;

	d_prime(_metadata, self, variant);
	ASSERT_EQ(0, t_tx_start(&a, self->i, sweep, ARRAY_SIZE(sweep), 300));
	ASSERT_EQ(0, t_tx_start(&b, self->r, sweep, ARRAY_SIZE(sweep), 400));
	t_rx_check(_metadata, self->r, sweep, ARRAY_SIZE(sweep), 300);
	t_rx_check(_metadata, self->i, sweep, ARRAY_SIZE(sweep), 400);
	pthread_join(a.thr, NULL);
	pthread_join(b.thr, NULL);
	EXPECT_EQ(ARRAY_SIZE(sweep), a.sent) TH_LOG("errno %d", a.err);
	EXPECT_EQ(ARRAY_SIZE(sweep), b.sent) TH_LOG("errno %d", b.err);
}

/* MULPDU-1, MULPDU, MULPDU+1 of the sender, each way. */
TEST_F(data, mulpdu_edges)
{
	struct mpa_result res;
	size_t sizes[3];
	int dir;

	d_prime(_metadata, self, variant);
	for (dir = I2R; dir <= R2I; dir++) {
		t_get_result(_metadata, d_tx(self, dir), &res);
		ASSERT_LE(MPA_MIN_MULPDU, res.mulpdu);
		ASSERT_GE(MPA_MAX_ULPDU, res.mulpdu);
		sizes[0] = res.mulpdu - 1;
		sizes[1] = res.mulpdu;
		sizes[2] = res.mulpdu + 1;
		if (sizes[2] > MPA_MAX_ULPDU) {
			/* MULPDU is 64768: one more is one too many. */
			EXPECT_EQ(-1, send(d_tx(self, dir), tx_buf, sizes[2],
					   MSG_NOSIGNAL));
			EXPECT_EQ(EMSGSIZE, errno);
			d_xfer(_metadata, self, variant, dir, sizes, 2,
			       500 + dir);
		} else {
			d_xfer(_metadata, self, variant, dir, sizes, 3,
			       500 + dir);
		}
	}
}

/* FPDUs that end and start right at Markers, Markers in every place. */
TEST_F(data, marker_boundaries)
{
	static size_t sizes[2][2000];
	uint32_t plan;
	size_t n[2];
	int dir;

	d_prime(_metadata, self, variant);
	for (dir = I2R; dir <= R2I; dir++) {
		plan = self->pos[dir];
		n[dir] = t_boundary_plan(_metadata, &plan,
				       d_markers(variant, dir), sizes[dir],
				       ARRAY_SIZE(sizes[dir]));
		ASSERT_LT(100, n[dir]);
	}
	for (dir = I2R; dir <= R2I; dir++)
		d_xfer(_metadata, self, variant, dir, sizes[dir], n[dir],
		       600 + dir);
}

/* 64768 each way; 64769 and more fail with EMSGSIZE and send nothing. */
TEST_F(data, largest_and_too_large)
{
	static const size_t max[] = { MPA_MAX_ULPDU };
	static const size_t big[] = { 65535, 65536, 100000, 1 << 20 };
	int dir;
	size_t k;

	d_prime(_metadata, self, variant);
	for (dir = I2R; dir <= R2I; dir++) {
		d_xfer(_metadata, self, variant, dir, max, 1, 700 + dir);
		EXPECT_EQ(-1, send(d_tx(self, dir), tx_buf, MPA_MAX_ULPDU + 1,
				   MSG_NOSIGNAL));
		EXPECT_EQ(EMSGSIZE, errno);
		for (k = 0; k < ARRAY_SIZE(big); k++) {
			uint8_t *b = malloc(big[k]);

			ASSERT_NE(NULL, b);
			EXPECT_EQ(-1, send(d_tx(self, dir), b, big[k],
					   MSG_NOSIGNAL));
			EXPECT_EQ(EMSGSIZE, errno) TH_LOG("%zu", big[k]);
			free(b);
		}
		/* Nothing of them went out: the next ULPDU is next. */
		EXPECT_TRUE(t_nothing_pending(d_rx(self, dir)));
		one_ulpdu(_metadata, d_tx(self, dir), d_rx(self, dir), "ok", 2);
	}
}

/*
 * A send from memory that faults, part way through the ULPDU or at its
 * first octet: EFAULT, and nothing of it is queued or sent (the copy from
 * the caller may be made before the socket is locked: mpa_tx_prepare();
 * with CRCs and Markers off, a ULPDU above the MULPDU goes to TCP to copy,
 * mpa_tx_copy()). The next ULPDU is the next one received, whole.
 */
TEST_F(data, bad_buffer)
{
	static const size_t sizes[] = { 512, 5000, 40000 };
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m, *hole;
	int dir, fl;
	size_t k;
	ssize_t r;

	/* 16 pages, then a hole of one */
	m = mmap(NULL, 17 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, m);
	hole = m + 16 * pg;
	ASSERT_EQ(0, munmap(hole, pg));
	memset(m, 0xa5, 16 * pg);
	d_prime(_metadata, self, variant);
	for (dir = I2R; dir <= R2I; dir++) {
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			/* its first half readable, then the hole */
			EXPECT_EQ(-1, send(d_tx(self, dir),
					   hole - sizes[k] / 2, sizes[k],
					   MSG_NOSIGNAL));
			EXPECT_EQ(EFAULT, errno) TH_LOG("%zu", sizes[k]);
		}
		EXPECT_EQ(-1, send(d_tx(self, dir), hole, 100, MSG_NOSIGNAL));
		EXPECT_EQ(EFAULT, errno);
		EXPECT_TRUE(t_nothing_pending(d_rx(self, dir)));
		t_fill(tx_buf, 700, 77 + dir);
		one_ulpdu(_metadata, d_tx(self, dir), d_rx(self, dir), tx_buf,
			  700);
		/*
		 * A later piece of a MSG_MORE ULPDU that faults adds nothing:
		 * the ULPDU stays open with its first piece, and the next
		 * piece ends it.
		 */
		t_fill(tx_buf, 1500, 88 + dir);
		EXPECT_EQ(1000, send(d_tx(self, dir), tx_buf, 1000,
				     MSG_NOSIGNAL | MSG_MORE));
		EXPECT_EQ(-1, send(d_tx(self, dir), hole - 300, 600,
				   MSG_NOSIGNAL | MSG_MORE));
		EXPECT_EQ(EFAULT, errno);
		EXPECT_EQ(-1, send(d_tx(self, dir), hole - 300, 600,
				   MSG_NOSIGNAL));
		EXPECT_EQ(EFAULT, errno);
		EXPECT_TRUE(t_nothing_pending(d_rx(self, dir)));
		EXPECT_EQ(500, send(d_tx(self, dir), tx_buf + 1000, 500,
				    MSG_NOSIGNAL));
		r = t_recv_flags(d_rx(self, dir), rx_buf, T_BUF, 0, &fl);
		ASSERT_EQ(1500, r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES(tx_buf, rx_buf, 1500);
	}
	munmap(m, 16 * pg);
}

/* A zero-length send with no ULPDU open: EINVAL, nothing on the wire. */
TEST_F(data, zero_length)
{
	struct msghdr msg = {};
	struct iovec iov = { .iov_base = tx_buf, .iov_len = 0 };

	EXPECT_EQ(-1, send(self->i, tx_buf, 0, MSG_NOSIGNAL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sendmsg(self->i, &msg, MSG_NOSIGNAL));
	EXPECT_EQ(EINVAL, errno);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	EXPECT_EQ(-1, sendmsg(self->i, &msg, MSG_NOSIGNAL | MSG_EOR));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, write(self->i, tx_buf, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_TRUE(t_quiet(self->r, self->i));
	one_ulpdu(_metadata, self->i, self->r, "x", 1);
	d_prime(_metadata, self, variant);
	EXPECT_EQ(-1, send(self->r, tx_buf, 0, MSG_NOSIGNAL));
	EXPECT_EQ(EINVAL, errno);
	one_ulpdu(_metadata, self->r, self->i, "y", 1);
}

/* MSG_MORE builds one ULPDU; the first call without it sends it. */
TEST_F(data, msg_more)
{
	static const size_t pieces[] = { 1, 2, 509, 0, 1000, 3, 20000, 7 };
	size_t k, off = 0, total = 0;
	ssize_t r;
	int fl, dir;

	d_prime(_metadata, self, variant);
	for (k = 0; k < ARRAY_SIZE(pieces); k++)
		total += pieces[k];
	t_fill(tx_buf, total, 800);
	for (dir = I2R; dir <= R2I; dir++) {
		off = 0;
		for (k = 0; k < ARRAY_SIZE(pieces); k++) {
			int more = k + 1 < ARRAY_SIZE(pieces) ? MSG_MORE : 0;

			if (!pieces[k] && !more)
				continue;
			EXPECT_EQ((ssize_t)pieces[k],
				  send(d_tx(self, dir), tx_buf + off, pieces[k],
				       MSG_NOSIGNAL | more));
			off += pieces[k];
			if (more) {
				/* Nothing is readable while it is open. */
				EXPECT_TRUE(t_nothing_pending(d_rx(self, dir)));
			}
		}
		r = t_recv_flags(d_rx(self, dir), rx_buf, T_BUF, 0, &fl);
		ASSERT_EQ((ssize_t)total, r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES(tx_buf, rx_buf, total);

		/* Closed by a 0-octet call; MSG_EOR changes nothing. */
		EXPECT_EQ(3, send(d_tx(self, dir), "abc", 3,
				  MSG_NOSIGNAL | MSG_MORE));
		EXPECT_EQ(0, send(d_tx(self, dir), "", 0, MSG_NOSIGNAL));
		EXPECT_EQ(2, send(d_tx(self, dir), "de", 2,
				  MSG_NOSIGNAL | MSG_EOR));
		r = t_recv_flags(d_rx(self, dir), rx_buf, T_BUF, 0, &fl);
		EXPECT_EQ(3, r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES("abc", rx_buf, 3);
		r = t_recv_flags(d_rx(self, dir), rx_buf, T_BUF, 0, &fl);
		EXPECT_EQ(2, r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES("de", rx_buf, 2);
	}
}

/*
 * An open ULPDU appended to in many pieces while the same task sends on
 * another socket between them (which moves the task's page fragment on)
 * is still one ULPDU, small pieces or large: no ENOMEM.
 */
TEST_F(data, msg_more_interleaved)
{
	static const size_t piece[] = { 4, 600 };
	size_t k, n, i;
	ssize_t r;
	int a, b, fl;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &a, &b));
	for (i = 0; i < ARRAY_SIZE(piece); i++) {
		n = 60000 / piece[i] < 100 ? 60000 / piece[i] : 100;
		t_fill(tx_buf, n * piece[i], 910 + i);
		for (k = 0; k < n; k++) {
			ASSERT_EQ((ssize_t)piece[i],
				  send(self->i, tx_buf + k * piece[i],
				       piece[i], MSG_NOSIGNAL | MSG_MORE))
				TH_LOG("piece %zu of %zu: %s", k, piece[i],
				       strerror(errno));
			ASSERT_EQ(1, send(a, "p", 1, MSG_NOSIGNAL));
		}
		ASSERT_EQ(0, send(self->i, "", 0, MSG_NOSIGNAL));
		r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
		ASSERT_EQ((ssize_t)(n * piece[i]), r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES(tx_buf, rx_buf, n * piece[i]);
	}
	close(a);
	close(b);
}

/*
 * MSG_TRUNC has TCP's meaning: octets of the ULPDU taken (or, with
 * MSG_PEEK, counted) without a copy, no buffer needed. SO_PEEK_OFF,
 * which MPA's recv does not follow, is refused.
 */
TEST_F(data, msg_trunc_peek_off)
{
	ssize_t r;
	int fl;

	EXPECT_EQ(-1, t_setint(self->r, SOL_SOCKET, SO_PEEK_OFF, 0));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ASSERT_EQ(8, send(self->i, "abcdefgh", 8, MSG_NOSIGNAL));
	ASSERT_EQ(3, send(self->i, "xyz", 3, MSG_NOSIGNAL));
	EXPECT_EQ(3, recv(self->r, NULL, 3, MSG_TRUNC | MSG_PEEK));
	EXPECT_EQ(3, recv(self->r, NULL, 3, MSG_TRUNC));
	r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
	ASSERT_EQ(5, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES("defgh", rx_buf, 5);
	r = t_recv_flags(self->r, NULL, 100, MSG_TRUNC, &fl);
	ASSERT_EQ(3, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	one_ulpdu(_metadata, self->i, self->r, "next", 4);
}

/* Growing an open ULPDU beyond 64768 fails and leaves it as it was. */
TEST_F(data, msg_more_limit)
{
	ssize_t r;
	int fl;

	t_fill(tx_buf, MPA_MAX_ULPDU + 100, 900);
	EXPECT_EQ(60000, send(self->i, tx_buf, 60000, MSG_NOSIGNAL | MSG_MORE));
	EXPECT_EQ(-1, send(self->i, tx_buf + 60000, 4769,
			   MSG_NOSIGNAL | MSG_MORE));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(-1, send(self->i, tx_buf + 60000, 4769, MSG_NOSIGNAL));
	EXPECT_EQ(EMSGSIZE, errno);
	EXPECT_EQ(4000, send(self->i, tx_buf + 60000, 4000,
			     MSG_NOSIGNAL | MSG_MORE));
	EXPECT_EQ(768, send(self->i, tx_buf + 64000, 768, MSG_NOSIGNAL));
	r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
	ASSERT_EQ(MPA_MAX_ULPDU, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES(tx_buf, rx_buf, MPA_MAX_ULPDU);
	one_ulpdu(_metadata, self->i, self->r, "next", 4);
}

/* sendmsg() with several iovecs is one ULPDU; recvmsg() scatters it. */
TEST_F(data, iovecs)
{
	struct iovec iov[4];
	struct msghdr msg = { .msg_iov = iov };
	uint8_t a[100], b[7000];
	ssize_t r;

	t_fill(tx_buf, 5010, 1000);
	iov[0] = (struct iovec){ tx_buf, 10 };
	iov[1] = (struct iovec){ tx_buf + 10, 0 };
	iov[2] = (struct iovec){ tx_buf + 10, 4990 };
	iov[3] = (struct iovec){ tx_buf + 5000, 10 };
	msg.msg_iovlen = 4;
	EXPECT_EQ(5010, sendmsg(self->i, &msg, MSG_NOSIGNAL));
	EXPECT_EQ(3, send(self->i, "xyz", 3, MSG_NOSIGNAL));
	iov[0] = (struct iovec){ a, sizeof(a) };
	iov[1] = (struct iovec){ b, sizeof(b) };
	msg.msg_iovlen = 2;
	r = recvmsg(self->r, &msg, 0);
	ASSERT_EQ(5010, r);
	EXPECT_EQ(MSG_EOR, msg.msg_flags & MSG_EOR);
	EXPECT_BYTES(tx_buf, a, sizeof(a));
	EXPECT_BYTES(tx_buf + sizeof(a), b, 5010 - sizeof(a));
	r = recvmsg(self->r, &msg, 0);
	ASSERT_EQ(3, r);
	EXPECT_BYTES("xyz", a, 3);
}

/* A short buffer gets the first part, the next calls the rest. */
TEST_F(data, short_buffer)
{
	static const size_t parts[] = { 1, 1000, 999, 3000, 17, 1 };
	size_t len = 0, k, off = 0;
	ssize_t r;
	int fl, dir;

	d_prime(_metadata, self, variant);
	for (k = 0; k < ARRAY_SIZE(parts); k++)
		len += parts[k];
	t_fill(tx_buf, len, 1100);
	for (dir = I2R; dir <= R2I; dir++) {
		int tx = d_tx(self, dir), rx = d_rx(self, dir);

		ASSERT_EQ((ssize_t)len, send(tx, tx_buf, len, MSG_NOSIGNAL));
		ASSERT_EQ(2, send(tx, "zz", 2, MSG_NOSIGNAL));
		off = 0;
		for (k = 0; k < ARRAY_SIZE(parts); k++) {
			r = t_recv_flags(rx, rx_buf + off, parts[k], 0, &fl);
			ASSERT_EQ((ssize_t)parts[k], r) TH_LOG("part %zu", k);
			EXPECT_EQ(k + 1 == ARRAY_SIZE(parts) ? MSG_EOR : 0,
				  fl & MSG_EOR) TH_LOG("part %zu", k);
			off += r;
		}
		EXPECT_BYTES(tx_buf, rx_buf, len);
		/* The next ULPDU is not joined to the last part. */
		r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
		EXPECT_EQ(2, r);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES("zz", rx_buf, 2);
	}

	/* The largest ULPDU in 1000-octet parts. */
	t_fill(tx_buf, MPA_MAX_ULPDU, 1101);
	ASSERT_EQ(MPA_MAX_ULPDU, send(self->i, tx_buf, MPA_MAX_ULPDU,
				      MSG_NOSIGNAL));
	for (off = 0; off < MPA_MAX_ULPDU; off += r) {
		r = t_recv_flags(self->r, rx_buf + off, 1000, 0, &fl);
		ASSERT_EQ(off + 1000 > MPA_MAX_ULPDU ? MPA_MAX_ULPDU - off :
			  1000, r);
		EXPECT_EQ(off + r == MPA_MAX_ULPDU ? MSG_EOR : 0, fl & MSG_EOR);
	}
	EXPECT_BYTES(tx_buf, rx_buf, MPA_MAX_ULPDU);
}

/* MSG_PEEK copies without consuming. */
TEST_F(data, peek)
{
	ssize_t r;
	int fl;

	t_fill(tx_buf, 3000, 1200);
	ASSERT_EQ(3000, send(self->i, tx_buf, 3000, MSG_NOSIGNAL));
	ASSERT_EQ(5, send(self->i, "after", 5, MSG_NOSIGNAL));
	r = t_recv_flags(self->r, rx_buf, T_BUF, MSG_PEEK, &fl);
	ASSERT_EQ(3000, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES(tx_buf, rx_buf, 3000);
	r = t_recv_flags(self->r, rx_buf, 100, MSG_PEEK, &fl);
	ASSERT_EQ(100, r);
	EXPECT_EQ(0, fl & MSG_EOR);
	EXPECT_BYTES(tx_buf, rx_buf, 100);
	/* Consume a part; peek sees the rest of the same ULPDU only. */
	r = t_recv_flags(self->r, rx_buf, 1000, 0, &fl);
	ASSERT_EQ(1000, r);
	EXPECT_EQ(0, fl & MSG_EOR);
	memset(rx_buf, 0, T_BUF);
	r = t_recv_flags(self->r, rx_buf, T_BUF, MSG_PEEK | MSG_DONTWAIT, &fl);
	ASSERT_EQ(2000, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES(tx_buf + 1000, rx_buf, 2000);
	r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
	ASSERT_EQ(2000, r);
	EXPECT_BYTES(tx_buf + 1000, rx_buf, 2000);
	r = t_recv_flags(self->r, rx_buf, T_BUF, MSG_PEEK, &fl);
	ASSERT_EQ(5, r);
	EXPECT_BYTES("after", rx_buf, 5);
	r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
	ASSERT_EQ(5, r);
	EXPECT_BYTES("after", rx_buf, 5);
	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, MSG_PEEK | MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
}

/* MSG_WAITALL never joins ULPDUs. */
TEST_F(data, waitall)
{
	ssize_t r;
	int fl;

	ASSERT_EQ(100, send(self->i, tx_buf, 100, MSG_NOSIGNAL));
	ASSERT_EQ(200, send(self->i, tx_buf, 200, MSG_NOSIGNAL));
	/* Both are queued at the receiver before it asks. */
	ASSERT_EQ(0, t_wait_acked(self->i, T_WAIT));
	r = t_recv_flags(self->r, rx_buf, 1000, MSG_WAITALL, &fl);
	EXPECT_EQ(100, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	r = t_recv_flags(self->r, rx_buf, 1000, MSG_WAITALL, &fl);
	EXPECT_EQ(200, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
}

/*
 * Receive like an event loop: a non-blocking recv(), and on EAGAIN wait
 * until poll() or epoll says readable. Every ULPDU must come that way;
 * a wait that ends without EPOLLIN while a recv() would have returned
 * data is a readiness bug.
 */
static void rx_check_polled(struct __test_metadata *_metadata, int fd,
			    const size_t *sizes, size_t n, uint64_t seed,
			    bool use_epoll)
{
	struct t_ready w;
	size_t k;
	ssize_t r;
	int fl, ev;

	ASSERT_EQ(0, t_ready_open_ev(&w, fd, use_epoll, POLLIN));
	for (k = 0; k < n; k++) {
		for (;;) {
			r = t_recv_flags(fd, rx_buf, T_BUF, MSG_DONTWAIT, &fl);
			if (r >= 0 || errno != EAGAIN)
				break;
			ev = t_ready_wait(&w, T_WAIT);
			if (!(ev & POLLIN)) {
				r = t_recv_flags(fd, rx_buf, T_BUF, MSG_DONTWAIT,
						 &fl);
				EXPECT_EQ(POLLIN, ev)
					TH_LOG("ULPDU %zu of %zu (%zu octets): no EPOLLIN in %d ms; recv() now %zd, errno %d",
					       k, n, sizes[k], T_WAIT, r,
					       r < 0 ? errno : 0);
				break;
			}
		}
		if (r != (ssize_t)sizes[k]) {
			EXPECT_EQ((ssize_t)sizes[k], r)
				TH_LOG("ULPDU %zu of %zu: errno %d", k, n,
				       r < 0 ? errno : 0);
			break;
		}
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		t_fill(exp_buf, sizes[k], seed + k);
		if (memcmp(exp_buf, rx_buf, sizes[k])) {
			TH_LOG("ULPDU %zu of %zu differs", k, n);
			EXPECT_BYTES(exp_buf, rx_buf, sizes[k]);
			break;
		}
	}
	t_ready_close(&w);
}

/* The sweep each way, received by poll() and by epoll. */
TEST_F(data, sizes_event_loop)
{
	struct t_tx p;
	int dir;

	d_prime(_metadata, self, variant);
	for (dir = I2R; dir <= R2I; dir++) {
		ASSERT_EQ(0, t_tx_start(&p, d_tx(self, dir), sweep, ARRAY_SIZE(sweep),
					3100 + dir));
		rx_check_polled(_metadata, d_rx(self, dir), sweep, ARRAY_SIZE(sweep),
				3100 + dir, dir == R2I);
		pthread_join(p.thr, NULL);
		EXPECT_EQ(ARRAY_SIZE(sweep), p.sent) TH_LOG("errno %d", p.err);
	}
}

/* Many tiny ULPDUs, packed however TCP likes: each comes back alone. */
/* 6000 FPDUs: minutes in a loaded debug guest, not the default 30 s */
TEST_F_TIMEOUT(data, many_small, 300)
{
	static size_t sizes[3000];
	size_t k;

	d_prime(_metadata, self, variant);
	for (k = 0; k < ARRAY_SIZE(sizes); k++)
		sizes[k] = 1 + (k * 11) % 29;
	d_xfer(_metadata, self, variant, I2R, sizes, ARRAY_SIZE(sizes), 1300);
	d_xfer(_metadata, self, variant, R2I, sizes, ARRAY_SIZE(sizes), 1301);
}

/*
 * @n small ULPDUs sent back to back from @tx, blocking, with Nagle's
 * algorithm on (the default); then, with no further call on @tx, each
 * read at @rx, whole and in order. Once the first is out TCP would hold
 * the next ones until its ACK, and MPA keeps them itself meanwhile, as one
 * run (mpa/tx.c): the ACK alone must send them.
 */
static void burst(struct __test_metadata *_metadata, int tx, int rx,
		  size_t n, unsigned int salt)
{
	size_t k, j, len;
	ssize_t r;
	int fl;

	for (k = 0; k < n; k++) {
		len = 1 + (k * 13 + salt) % 64;
		for (j = 0; j < len; j++)
			tx_buf[j] = (uint8_t)(k * 31 + j + salt);
		ASSERT_EQ((ssize_t)len, send(tx, tx_buf, len, MSG_NOSIGNAL));
	}
	for (k = 0; k < n; k++) {
		len = 1 + (k * 13 + salt) % 64;
		for (j = 0; j < len; j++)
			exp_buf[j] = (uint8_t)(k * 31 + j + salt);
		r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
		ASSERT_EQ((ssize_t)len, r)
			TH_LOG("ULPDU %zu: errno %d", k, r < 0 ? errno : 0);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		EXPECT_BYTES(exp_buf, rx_buf, len);
	}
}

/*
 * run_full: a run (mpa/tx.c) that comes to a whole segment goes to TCP at
 * once, as TCP sends a full segment whatever Nagle's algorithm holds back.
 * TCP_MAXSEG 1460: an MSS of 1448 with timestamps. With nothing in
 * flight the first, small FPDU goes at once; the receiver delays its ACKs
 * (TCP_QUICKACK off) and reads nothing meanwhile, so it stays
 * unacknowledged: TCP would hold the next small one, and
 * MPA keeps it in a run; the next fills the run to a whole segment (each
 * ULPDU starts on an 8-octet boundary of the page fragment, mpa_tx_skew():
 * FPDUs whose spans are multiples of 8 lie back to back, as a run needs).
 * TCP must have taken it by the time that send returns (its count of the
 * octets it took, TCP_INFO), not once the delayed ACK (40 ms or more)
 * comes back.
 */
FIXTURE(run_full)
{
	int i, r;
};

FIXTURE_VARIANT(run_full)
{
	int family;
	bool crc;
};

FIXTURE_VARIANT_ADD(run_full, v4)
{
	.family = AF_INET, .crc = true,
};

FIXTURE_VARIANT_ADD(run_full, v6_crc_off)
{
	.family = AF_INET6, .crc = false,
};

FIXTURE_SETUP(run_full)
{
	struct t_pair_opts o = { .mss = 1460 };
	struct mpa_t_policy saved;

	pair_setup(_metadata, &saved, variant->family, &o, false, false,
		   variant->crc, &self->i, &self->r);
}

FIXTURE_TEARDOWN(run_full)
{
	close(self->i);
	close(self->r);
}

TEST_F(run_full, goes_at_once)
{
	/* spans 16, 720 and 728: a multiple of 8, so back to back */
	static const size_t sizes[] = { 8, 714, 722 };
	int tx = self->i, rx = self->r, off = 0, mss, fl;
	socklen_t len = sizeof(mss);
	long long base, wire = 0;
	unsigned int round;
	size_t k, j;
	ssize_t r;

	ASSERT_EQ(0, getsockopt(tx, SOL_TCP, TCP_MAXSEG, &mss, &len));
	ASSERT_EQ(1448, mss);
	for (k = 0; k < ARRAY_SIZE(sizes); k++)
		wire += t_fpdu_wire(0, false, sizes[k]);
	ASSERT_EQ(16 + 1448, wire);
	for (round = 0; round < 4; round++) {
		/* nothing in flight: the first FPDU goes at once */
		ASSERT_EQ(0, t_wait_acked(tx, 20000));
		ASSERT_EQ(0, setsockopt(rx, SOL_TCP, TCP_QUICKACK, &off,
					sizeof(off)));
		base = t_tcp_taken(tx);
		ASSERT_LE(0, base);
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			for (j = 0; j < sizes[k]; j++)
				tx_buf[j] = (uint8_t)(j * 7 + round + k);
			ASSERT_EQ((ssize_t)sizes[k],
				  send(tx, tx_buf, sizes[k], MSG_NOSIGNAL));
		}
		EXPECT_EQ(base + wire, t_tcp_taken(tx))
			TH_LOG("round %u: a run of one whole segment held back",
			       round);
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			for (j = 0; j < sizes[k]; j++)
				exp_buf[j] = (uint8_t)(j * 7 + round + k);
			r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
			ASSERT_EQ((ssize_t)sizes[k], r)
				TH_LOG("round %u, ULPDU %zu: errno %d", round,
				       k, r < 0 ? errno : 0);
			EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
			EXPECT_BYTES(exp_buf, rx_buf, sizes[k]);
		}
	}
}

/* Bursts both ways, each the reply to the other; every FPDU counted once. */
TEST_F(data, burst_then_wait)
{
	const size_t n = 300;
	struct mpa_stats si, sr;
	uint64_t octets = 0;
	size_t k;

	d_prime(_metadata, self, variant);
	burst(_metadata, self->i, self->r, n, 0);
	burst(_metadata, self->r, self->i, n, 5);
	burst(_metadata, self->i, self->r, n, 9);
	t_get_stats(_metadata, self->i, &si);
	t_get_stats(_metadata, self->r, &sr);
	for (k = 0; k < n; k++)
		octets += 1 + (k * 13 + 0) % 64 + 1 + (k * 13 + 9) % 64;
	EXPECT_EQ(1 + 2 * n, si.tx_fpdus);
	EXPECT_EQ(16 + octets, si.tx_octets);
	EXPECT_EQ(1 + 2 * n, sr.rx_fpdus);
	EXPECT_EQ(n, sr.tx_fpdus);
	EXPECT_EQ(n, si.rx_fpdus);
}

/*
 * A send buffer smaller than a ULPDU queued behind a run: SO_SNDBUF set
 * small (and locked) here; TCP itself shrinks the buffer to half of what
 * is queued when it finds no memory for an skb. The receiver delays its
 * ACKs (TCP_QUICKACK off), so that Nagle's algorithm holds the second
 * small FPDU in a run (mpa/tx.c) while the large ULPDU queues behind it,
 * whole or in MSG_MORE pieces. The ACK must send the run, then the rest:
 * what MPA queued must not count against TCP taking the run. (Runs are
 * made without Markers only, and on loopback's MSS the whole ULPDU may
 * join the run: the other variants check that nothing else goes wrong.)
 */
TEST_F(data, run_before_large_small_sndbuf)
{
	static const size_t sizes[] = { 8, 8, 9000 };
	int tx = self->i, rx = self->r, sndbuf = 2304, off = 0, fl;
	unsigned int round, salt;
	size_t k, j;
	ssize_t r;

	d_prime(_metadata, self, variant);
	ASSERT_EQ(0, setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	for (round = 0; round < 6; round++) {
		/* the delayed ACK timer ends the mode: set it each round */
		ASSERT_EQ(0, setsockopt(rx, SOL_TCP, TCP_QUICKACK, &off,
					sizeof(off)));
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			salt = round * 7 + k;
			for (j = 0; j < sizes[k]; j++)
				tx_buf[j] = (uint8_t)(j * 13 + salt);
			if (k == 2 && round % 2) {
				ASSERT_EQ(4000, send(tx, tx_buf, 4000,
						     MSG_NOSIGNAL | MSG_MORE));
				ASSERT_EQ(5000, send(tx, tx_buf + 4000, 5000,
						     MSG_NOSIGNAL));
				continue;
			}
			ASSERT_EQ((ssize_t)sizes[k],
				  send(tx, tx_buf, sizes[k], MSG_NOSIGNAL));
		}
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			salt = round * 7 + k;
			for (j = 0; j < sizes[k]; j++)
				exp_buf[j] = (uint8_t)(j * 13 + salt);
			r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
			ASSERT_EQ((ssize_t)sizes[k], r)
				TH_LOG("round %u, ULPDU %zu: errno %d", round,
				       k, r < 0 ? errno : 0);
			EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
			EXPECT_BYTES(exp_buf, rx_buf, sizes[k]);
		}
	}
}

/*
 * Large ULPDUs sent without waiting while the reader does not read: once
 * the peer's window is full they wait in TCP's queue, until the send
 * buffer is; TCP then takes only part of the last (it checks the buffer
 * for each new skb: with CRCs and Markers off it copies the caller's
 * octets itself, mpa_tx_copy(), and MPA queues the rest of the FPDU), and
 * the next send fails with EAGAIN, having queued nothing. Every ULPDU
 * accepted then arrives whole, in order, and the stream carries on. The
 * reader's buffer is locked small, so that each round ends the same way;
 * with CRCs and Markers off, TCP's count of the octets it took shows that
 * it took part of an FPDU at least once (mpa_tx_copy()'s rest queued).
 */
TEST_F(data, large_in_part_nonblocking)
{
	const size_t len = 40000, span = t_fpdu_wire(0, false, len);
	bool copy = !variant->tx_m && !variant->crc;
	int tx = self->i, rx = self->r, sndbuf = 32768, fl;
	unsigned int round, sent, k, seed = 500, in_part = 0;
	long long taken;
	ssize_t r;

	d_prime(_metadata, self, variant);
	ASSERT_EQ(0, setsockopt(tx, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	ASSERT_EQ(0, setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &sndbuf,
				sizeof(sndbuf)));
	for (round = 0; round < 4; round++) {
		taken = t_tcp_taken(tx);
		ASSERT_LE(0, taken);
		for (sent = 0;; sent++) {
			ASSERT_GT(64U, sent) TH_LOG("never EAGAIN");
			t_fill(tx_buf, len, seed + sent);
			r = send(tx, tx_buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (r < 0)
				break;
			ASSERT_EQ((ssize_t)len, r);
		}
		EXPECT_EQ(EAGAIN, errno);
		EXPECT_LT(0U, sent);
		/* the round began with nothing held: the rest is MPA's */
		taken = t_tcp_taken(tx) - taken;
		in_part += copy && taken % span;
		for (k = 0; k < sent; k++) {
			t_fill(exp_buf, len, seed + k);
			r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
			ASSERT_EQ((ssize_t)len, r)
				TH_LOG("round %u, ULPDU %u of %u: errno %d",
				       round, k, sent, r < 0 ? errno : 0);
			EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
			EXPECT_BYTES(exp_buf, rx_buf, len);
		}
		EXPECT_TRUE(t_nothing_pending(rx));
		seed += sent;
	}
	if (copy)
		EXPECT_LT(0U, in_part) TH_LOG("TCP never took part of one");
	one_ulpdu(_metadata, tx, rx, "after", 5);
}

/*
 * Not readable until the whole ULPDU is sent, with MSG_MORE its first
 * part held by the sender; poll() and epoll. (An FPDU that arrives in
 * part: wire.c's half_fpdu.)
 */
static void readable(struct __test_metadata *_metadata, int tx, int rx,
		     bool use_epoll)
{
	struct t_ready w;

	ASSERT_EQ(0, t_ready_open_ev(&w, rx, use_epoll, POLLIN));
	EXPECT_EQ(0, t_ready_wait(&w, T_QUIET));
	ASSERT_EQ(1000, send(tx, tx_buf, 1000, MSG_NOSIGNAL | MSG_MORE));
	EXPECT_EQ(0, t_ready_wait(&w, T_QUIET));
	ASSERT_EQ(1000, send(tx, tx_buf, 1000, MSG_NOSIGNAL));
	EXPECT_EQ(POLLIN, t_ready_wait(&w, T_WAIT) & (POLLIN | POLLERR));
	EXPECT_EQ(2000, recv(rx, rx_buf, 1500, 0) + recv(rx, rx_buf, 1500, 0));
	EXPECT_EQ(0, t_ready_wait(&w, 50));
	t_ready_close(&w);
}

TEST_F(data, poll_readable)
{
	d_prime(_metadata, self, variant);
	readable(_metadata, self->i, self->r, false);
	readable(_metadata, self->r, self->i, false);
}

TEST_F(data, epoll_readable)
{
	d_prime(_metadata, self, variant);
	readable(_metadata, self->i, self->r, true);
	readable(_metadata, self->r, self->i, true);
}

/*
 * SIOCINQ: the unread octets of the next ULPDU once complete, else 0 (its
 * sender holding it open with MSG_MORE here; wire.c's half_fpdu has one
 * arrive in part).
 */
TEST_F(data, siocinq)
{
	int fl;

	EXPECT_EQ(0, t_inq(self->r));
	ASSERT_EQ(700, send(self->i, tx_buf, 700, MSG_NOSIGNAL | MSG_MORE));
	ASSERT_EQ(0, t_wait_acked(self->i, T_WAIT));
	EXPECT_EQ(0, t_inq(self->r));
	ASSERT_EQ(300, send(self->i, tx_buf, 300, MSG_NOSIGNAL));
	ASSERT_EQ(5, send(self->i, tx_buf, 5, MSG_NOSIGNAL));
	ASSERT_EQ(POLLIN, t_poll(self->r, POLLIN, T_WAIT));
	EXPECT_EQ(1000, t_inq(self->r));
	ASSERT_EQ(400, t_recv_flags(self->r, rx_buf, 400, 0, &fl));
	EXPECT_EQ(600, t_inq(self->r));
	ASSERT_EQ(600, t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl));
	/* (The small FPDU may trail behind, e.g. by Nagle's algorithm.) */
	ASSERT_EQ(POLLIN, t_poll(self->r, POLLIN, T_WAIT));
	EXPECT_EQ(5, t_inq(self->r));
	ASSERT_EQ(5, t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl));
	EXPECT_EQ(0, t_inq(self->r));
}

/* Every ULPDU sent before close() arrives, then end of file. */
static void close_pending(struct __test_metadata *_metadata, int tx, int rx,
			  int *txp)
{
	static size_t sizes[40];
	size_t k;
	ssize_t r;
	int fl;

	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		sizes[k] = 1 + k * 997 % 9000;
		t_fill(tx_buf, sizes[k], 1400 + k);
		ASSERT_EQ((ssize_t)sizes[k],
			  send(tx, tx_buf, sizes[k], MSG_NOSIGNAL));
	}
	/* And an open one, which close() sends before the FIN. */
	ASSERT_EQ(4, send(tx, "open", 4, MSG_NOSIGNAL | MSG_MORE));
	close(tx);
	*txp = -1;
	t_rx_check(_metadata, rx, sizes, ARRAY_SIZE(sizes), 1400);
	r = t_recv_flags(rx, rx_buf, T_BUF, 0, &fl);
	EXPECT_EQ(4, r);
	EXPECT_BYTES("open", rx_buf, 4);
	EXPECT_EQ(0, recv(rx, rx_buf, T_BUF, 0));
	EXPECT_EQ(0, recv(rx, rx_buf, T_BUF, 0));
	EXPECT_MPA_ERROR(rx, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED, 0);
}

TEST_F(data, close_pending_i2r)
{
	close_pending(_metadata, self->i, self->r, &self->i);
}

TEST_F(data, close_pending_r2i)
{
	d_prime(_metadata, self, variant);
	close_pending(_metadata, self->r, self->i, &self->r);
}

static int sigpipes;

static void on_sigpipe(int sig)
{
	sigpipes++;
}

/*
 * shutdown(SHUT_WR): data, then end of file; the open ULPDU goes first;
 * later sends fail with EPIPE (and SIGPIPE); the other way still works.
 */
TEST_F(data, shutdown_wr)
{
	static const size_t sizes[] = { 10, 5000, 64768, 1 };
	ssize_t r;
	int fl;

	d_prime(_metadata, self, variant);
	d_xfer(_metadata, self, variant, R2I, sizes, ARRAY_SIZE(sizes), 1500);
	ASSERT_EQ(3, send(self->r, "end", 3, MSG_NOSIGNAL | MSG_MORE));
	ASSERT_EQ(0, shutdown(self->r, SHUT_WR));
	r = t_recv_flags(self->i, rx_buf, T_BUF, 0, &fl);
	EXPECT_EQ(3, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_BYTES("end", rx_buf, 3);
	EXPECT_EQ(0, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(POLLIN, t_poll(self->i, POLLIN, 0) & POLLIN);
	EXPECT_EQ(0, recv(self->i, rx_buf, T_BUF, MSG_DONTWAIT));
	EXPECT_MPA_ERROR(self->i, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 0);
	EXPECT_EQ(0, t_so_error(self->i));

	EXPECT_EQ(-1, send(self->r, "x", 1, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	sigpipes = 0;
	signal(SIGPIPE, on_sigpipe);
	EXPECT_EQ(-1, send(self->r, "x", 1, 0));
	EXPECT_EQ(EPIPE, errno);
	EXPECT_EQ(1, sigpipes);
	signal(SIGPIPE, SIG_IGN);

	/* The Initiator still sends; the Responder still receives. */
	d_xfer(_metadata, self, variant, I2R, sizes, ARRAY_SIZE(sizes), 1501);
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	EXPECT_EQ(0, recv(self->r, rx_buf, T_BUF, 0));
}

/* MPA_STATS counts FPDUs, octets and Markers each way, exactly. */
TEST_F(data, stats)
{
	static const size_t a[] = { 1, 600, 5000, 64768, 3 };
	static const size_t b[] = { 7, 64768, 511, 512 };
	struct mpa_stats si, sr;
	uint64_t ao = 0, bo = 0;
	unsigned int am = 0, bm = 0;
	uint32_t pa = 0, pb = 0;
	size_t k;

	t_get_stats(_metadata, self->i, &si);
	t_get_stats(_metadata, self->r, &sr);
	EXPECT_EQ(20, si.startup_octets_tx);
	EXPECT_EQ(20, si.startup_octets_rx);
	EXPECT_EQ(20, sr.startup_octets_tx);
	EXPECT_EQ(20, sr.startup_octets_rx);
	EXPECT_EQ(0, si.tx_fpdus + si.rx_fpdus + si.tx_octets + si.rx_octets +
		     si.tx_markers + si.rx_markers + si.crc_errors +
		     si.marker_errors);
	EXPECT_EQ(0, sr.tx_fpdus + sr.rx_fpdus + sr.tx_octets + sr.rx_octets +
		     sr.tx_markers + sr.rx_markers + sr.crc_errors +
		     sr.marker_errors);

	for (k = 0; k < ARRAY_SIZE(a); k++) {
		ao += a[k];
		am += t_fpdu_markers(pa, variant->tx_m, a[k]);
		pa += t_fpdu_wire(pa, variant->tx_m, a[k]);
	}
	for (k = 0; k < ARRAY_SIZE(b); k++) {
		bo += b[k];
		bm += t_fpdu_markers(pb, variant->rx_m, b[k]);
		pb += t_fpdu_wire(pb, variant->rx_m, b[k]);
	}
	d_xfer(_metadata, self, variant, I2R, a, ARRAY_SIZE(a), 1600);
	d_xfer(_metadata, self, variant, R2I, b, ARRAY_SIZE(b), 1601);
	if (variant->tx_m)
		EXPECT_LT(0, am);
	if (variant->rx_m)
		EXPECT_LT(0, bm);

	t_get_stats(_metadata, self->i, &si);
	t_get_stats(_metadata, self->r, &sr);
	EXPECT_EQ(ARRAY_SIZE(a), si.tx_fpdus);
	EXPECT_EQ(ao, si.tx_octets);
	EXPECT_EQ(am, si.tx_markers);
	EXPECT_EQ(ARRAY_SIZE(b), si.rx_fpdus);
	EXPECT_EQ(bo, si.rx_octets);
	EXPECT_EQ(bm, si.rx_markers);
	EXPECT_EQ(ARRAY_SIZE(b), sr.tx_fpdus);
	EXPECT_EQ(bo, sr.tx_octets);
	EXPECT_EQ(bm, sr.tx_markers);
	EXPECT_EQ(ARRAY_SIZE(a), sr.rx_fpdus);
	EXPECT_EQ(ao, sr.rx_octets);
	EXPECT_EQ(am, sr.rx_markers);
	EXPECT_EQ(0, si.crc_errors + si.marker_errors + sr.crc_errors +
		     sr.marker_errors);
	EXPECT_EQ(20, si.startup_octets_tx);
	EXPECT_EQ(20, sr.startup_octets_rx);
}

/*
 * A receive buffer too small for a whole FPDU: MPA collects it on its own
 * (copy mode, mpa/rx.c) and the connection never stalls. SO_RCVBUF is set
 * before the handshake, as socket(7) asks, so TCP's window and segments
 * are sized for it from the start (sock.event_loop_small_rcvbuf shrinks
 * the buffer of a running connection instead).
 */
/* The pair again, both receive buffers 4096 octets (copy mode), primed. */
static void d_small_rcvbuf(struct __test_metadata *_metadata,
			   FIXTURE_DATA(data) *self,
			   const FIXTURE_VARIANT(data) *variant)
{
	struct t_pair_opts o = {
		.mss = variant->mss, .rcvbuf = 4096, .client_rcvbuf = 4096,
	};

	close(self->i);
	close(self->r);
	pair_setup(_metadata, &self->saved, variant->family, &o,
		   variant->tx_m, variant->rx_m, variant->crc, &self->i,
		   &self->r);
	d_prime(_metadata, self, variant);
}

TEST_F(data, small_rcvbuf)
{
	static const size_t sizes[] = {
		64768, 64768, 30000, 64768, 1, 64767, 64768, 5000, 64768,
	};

	d_small_rcvbuf(_metadata, self, variant);
	d_xfer(_metadata, self, variant, I2R, sizes, ARRAY_SIZE(sizes), 1700);
	d_xfer(_metadata, self, variant, R2I, sizes, ARRAY_SIZE(sizes), 1701);
}

/*
 * close() with a whole ULPDU unread that copy mode took out of TCP's
 * queue: the peer is reset, as TCP resets when it closes with data unread
 * (RFC 2525), not told of a clean end by a FIN.
 */
TEST_F(data, close_unread_copy_mode)
{
	static uint8_t buf[64768];
	char c;

	d_small_rcvbuf(_metadata, self, variant);
	t_fill(buf, sizeof(buf), 1702);
	ASSERT_EQ((ssize_t)sizeof(buf), send(self->i, buf, sizeof(buf),
					     MSG_NOSIGNAL));
	/* whole, judged, in MPA's buffer (it does not fit TCP's) */
	ASSERT_TRUE(t_poll(self->r, POLLIN, T_WAIT) & POLLIN);
	close(self->r);
	self->r = -1;
	ASSERT_EQ(0, t_set_timeo(self->i, SO_RCVTIMEO, T_WAIT));
	EXPECT_EQ(-1, recv(self->i, &c, 1, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/*
 * sock: the socket calls around the data path, which do not depend on
 * Markers or CRC (two variants, each family once).
 */
FIXTURE(sock)
{
	struct mpa_t_policy saved;
	int i, r;
};

FIXTURE_VARIANT(sock)
{
	int family;
	bool markers;
	bool crc;
};

FIXTURE_VARIANT_ADD(sock, ipv4_markers_crc)
{
	.family = AF_INET, .markers = true, .crc = true,
};

FIXTURE_VARIANT_ADD(sock, ipv6_plain)
{
	.family = AF_INET6, .markers = false, .crc = false,
};

FIXTURE_SETUP(sock)
{
	static const struct t_pair_opts o;

	pair_setup(_metadata, &self->saved, variant->family, &o,
		   variant->markers, variant->markers, variant->crc, &self->i,
		   &self->r);
	one_ulpdu(_metadata, self->i, self->r, "prime", 5);
}

FIXTURE_TEARDOWN_PARENT(sock)
{
	mpa_policy_set(&self->saved);
}

/*
 * Large ULPDUs into a receive buffer shrunk on the running connection,
 * received by epoll. The window TCP offered before stays larger than the
 * segments the sender may cut now: TCP sends only what its window probes
 * carry, about 8 KiB each 200 ms, cutting FPDUs wherever the window ends.
 * So a few ULPDUs only.
 */
TEST_F(sock, event_loop_small_rcvbuf)
{
	static const size_t sizes[] = { 64768, 1, 64767, 2 };
	int sz = 4096;
	struct t_tx p;

	ASSERT_EQ(0, setsockopt(self->r, SOL_SOCKET, SO_RCVBUF, &sz,
				sizeof(sz)));
	ASSERT_EQ(0, t_tx_start(&p, self->i, sizes, ARRAY_SIZE(sizes), 3200));
	rx_check_polled(_metadata, self->r, sizes, ARRAY_SIZE(sizes), 3200, true);
	pthread_join(p.thr, NULL);
	EXPECT_EQ(ARRAY_SIZE(sizes), p.sent) TH_LOG("errno %d", p.err);
}

/* Nothing there: MSG_DONTWAIT and O_NONBLOCK give EAGAIN. */
TEST_F(sock, nonblocking_recv)
{
	ssize_t r;
	int fl;

	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, t_nonblock(self->i));
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(EAGAIN, errno);
	/* An open ULPDU (MSG_MORE, held by its sender) is nothing either. */
	ASSERT_EQ(10, send(self->r, tx_buf, 10, MSG_NOSIGNAL | MSG_MORE));
	ASSERT_EQ(0, t_wait_acked(self->r, T_WAIT));
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(10, send(self->r, tx_buf, 10, MSG_NOSIGNAL));
	ASSERT_EQ(POLLIN, t_poll(self->i, POLLIN, T_WAIT));
	r = t_recv_flags(self->i, rx_buf, T_BUF, 0, &fl);
	EXPECT_EQ(20, r);
	EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(EAGAIN, errno);
}

/* SO_RCVTIMEO: a blocking recv() gives up with EAGAIN. */
TEST_F(sock, rcvtimeo)
{
	long t0;

	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, 300));
	t0 = t_now_ms();
	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(250, t_now_ms() - t0);
	EXPECT_GT(T_WAIT, t_now_ms() - t0);	/* not for ever */
	/*
	 * Still the same while the sender holds a ULPDU open (MSG_MORE:
	 * nothing of it is sent; wire.c's half_fpdu has half an FPDU come)
	 */
	ASSERT_EQ(10, send(self->i, tx_buf, 10, MSG_NOSIGNAL | MSG_MORE));
	t0 = t_now_ms();
	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(250, t_now_ms() - t0);
	ASSERT_EQ(1, send(self->i, tx_buf, 1, MSG_NOSIGNAL));
	EXPECT_EQ(11, recv(self->r, rx_buf, T_BUF, 0));
}

static void on_alarm(int sig)
{
}

/* A signal interrupts a blocking recv() with EINTR; nothing is lost. */
TEST_F(sock, eintr_recv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };

	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_EQ(EINTR, errno);
	one_ulpdu(_metadata, self->i, self->r, "after", 5);
}

/*
 * Fill everything while the peer does not read: a non-blocking send fails
 * with EAGAIN and EPOLLOUT is off; once the peer reads, EPOLLOUT is back
 * and every ULPDU arrives in order.
 */
TEST_F(sock, nonblocking_send)
{
	struct t_ready w;
	size_t n = 0, k;
	ssize_t r;
	int fl;

	ASSERT_EQ(0, t_nonblock(self->i));
	for (k = 0; k < 4000; k++) {
		t_fill(tx_buf, MPA_MAX_ULPDU, 1800 + n);
		r = send(self->i, tx_buf, MPA_MAX_ULPDU, MSG_NOSIGNAL);
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			/*
			 * Full, unless acknowledgements still make room
			 * (EPOLLOUT): then fill that too.
			 */
			if (!(t_poll(self->i, POLLOUT, 100) & POLLOUT))
				break;
			continue;
		}
		ASSERT_EQ(MPA_MAX_ULPDU, r);
		n++;
	}
	ASSERT_GT(4000, k) TH_LOG("%zu ULPDUs and never full", n);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, t_ready_open_ev(&w, self->i, true, POLLOUT));
	EXPECT_EQ(0, t_ready_wait(&w, 0));
	EXPECT_EQ(0, t_poll(self->i, POLLOUT, 0));
	for (k = 0; k < n; k++) {
		r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
		ASSERT_EQ(MPA_MAX_ULPDU, r) TH_LOG("ULPDU %zu of %zu", k, n);
		EXPECT_EQ(MSG_EOR, fl & MSG_EOR);
		t_fill(exp_buf, MPA_MAX_ULPDU, 1800 + k);
		ASSERT_EQ(0, memcmp(exp_buf, rx_buf, MPA_MAX_ULPDU))
			TH_LOG("ULPDU %zu of %zu", k, n);
	}
	EXPECT_EQ(POLLOUT, t_ready_wait(&w, T_WAIT) & POLLOUT);
	t_ready_close(&w);
	EXPECT_TRUE(t_nothing_pending(self->r));
	EXPECT_EQ(3, send(self->i, "end", 3, MSG_NOSIGNAL));
}

/*
 * Queue 64768-octet ULPDUs without blocking until there is no room and
 * none will come: the reader's window is closed, so no acknowledgment
 * still on its way makes room for a sender that is meant to wait (the
 * first EAGAIN alone does not say that). The count.
 */
static size_t fill(struct __test_metadata *_metadata, int fd)
{
	long end = t_now_ms() + 3 * T_WAIT;
	size_t n = 0;
	ssize_t r;

	ASSERT_EQ(0, t_nonblock(fd));
	for (;;) {
		r = send(fd, tx_buf, MPA_MAX_ULPDU, MSG_NOSIGNAL);
		if (r >= 0) {
			ASSERT_EQ(MPA_MAX_ULPDU, r);
			ASSERT_GT(4000, ++n) TH_LOG("never EAGAIN");
			continue;
		}
		ASSERT_EQ(EAGAIN, errno);
		if (t_window_closed(fd) == 1)
			break;
		ASSERT_GT(end, t_now_ms()) TH_LOG("%zu ULPDUs, window open",
						  n);
		/* No event says "the window closed": look again shortly. */
		poll(NULL, 0, 5);
	}
	ASSERT_EQ(0, t_blocking(fd));
	return n;
}

/* Read @n 64768-octet ULPDUs from @from, then nothing more is there. */
static void drain(struct __test_metadata *_metadata, int fd, int from,
		  size_t n)
{
	size_t k;

	for (k = 0; k < n; k++)
		ASSERT_EQ(MPA_MAX_ULPDU, recv(fd, rx_buf, T_BUF, 0))
			TH_LOG("ULPDU %zu of %zu", k, n);
	EXPECT_TRUE(t_quiet(fd, from));
}

/* SO_SNDTIMEO: a blocking send() with no room gives up with EAGAIN. */
TEST_F(sock, sndtimeo)
{
	size_t n, k;
	ssize_t r = 0;
	long t0 = 0;

	n = fill(_metadata, self->i);
	ASSERT_EQ(0, t_set_timeo(self->i, SO_SNDTIMEO, 300));
	/* (Acknowledgements may still have made room for a few.) */
	for (k = 0; k < 100; k++) {
		t0 = t_now_ms();
		r = send(self->i, tx_buf, MPA_MAX_ULPDU, MSG_NOSIGNAL);
		if (r < 0)
			break;
		n++;
	}
	ASSERT_EQ(-1, r) TH_LOG("%zu ULPDUs and no timeout", n);
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_LE(250, t_now_ms() - t0);
	drain(_metadata, self->r, self->i, n);
}

/* A signal interrupts a blocking send() waiting for room: EINTR. */
TEST_F(sock, eintr_send)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = {
		.it_value = { .tv_usec = 300000 },
		.it_interval = { .tv_usec = 300000 },
	};
	struct itimerval off = {};
	size_t n, k;
	ssize_t r = 0;

	n = fill(_metadata, self->i);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	for (k = 0; k < 100; k++) {
		r = send(self->i, tx_buf, MPA_MAX_ULPDU, MSG_NOSIGNAL);
		if (r < 0)
			break;
		n++;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	ASSERT_EQ(-1, r);
	EXPECT_EQ(EINTR, errno);
	drain(_metadata, self->r, self->i, n);
}

/* A thread making one send() (two_senders_msg_more) */
struct sender {
	int fd;
	int flags;
	pid_t tid;
	int started;
	int done;
	ssize_t rc;
	int err;
	uint8_t buf[40000];
};

static void *sender_run(void *arg)
{
	struct sender *sd = arg;

	sd->tid = gettid();
	__atomic_store_n(&sd->started, 1, __ATOMIC_RELEASE);
	sd->rc = send(sd->fd, sd->buf, sizeof(sd->buf),
		      MSG_NOSIGNAL | sd->flags);
	sd->err = errno;
	__atomic_store_n(&sd->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The sender's state in /proc (S: asleep, waiting for room; R, D...), or
 * 'done' once its send() returned, '-' before it started or unreadable.
 */
static char sender_state(struct sender *sd)
{
	char st;

	if (__atomic_load_n(&sd->done, __ATOMIC_ACQUIRE))
		return 'd';
	if (!__atomic_load_n(&sd->started, __ATOMIC_ACQUIRE))
		return '-';
	st = t_task_state(sd->tid);
	return st ?: '-';
}

/* Is the sender asleep (waiting for room), or done? */
static bool sender_parked(struct sender *sd)
{
	char st = sender_state(sd);

	return st == 'S' || st == 'd';
}

/*
 * Start @sd and wait until it is asleep in its send(). A TCG guest on a
 * busy host may leave a thread unscheduled for seconds: T_WAIT * 3.
 */
static void sender_start(struct __test_metadata *_metadata, pthread_t *thr,
			 struct sender *sd, int round)
{
	long end = t_now_ms() + 3 * T_WAIT;

	ASSERT_EQ(0, pthread_create(thr, NULL, sender_run, sd));
	while (!sender_parked(sd) && t_now_ms() < end)
		sched_yield();
	ASSERT_TRUE(sender_parked(sd))
		TH_LOG("round %d: the %s sender is in state %c", round,
		       sd->flags & MSG_MORE ? "MSG_MORE" : "whole",
		       sender_state(sd));
}

/*
 * Two threads send on one socket while the send buffer is full: A a whole
 * ULPDU of 40000 octets, B 40000 with MSG_MORE. Room comes, and whichever
 * takes the socket first goes first. When B does, its ULPDU is open and
 * A's send joins it (MSG_MORE is the socket's, not the thread's), which
 * does not fit in 64768 octets: EMSGSIZE for A, checked again after its
 * wait (requirements A11), never a ULPDU over the limit nor octets lost.
 * Before, A's wait kept the check it made before B opened: A's octets
 * went past the end of the open ULPDU, and the copy looped for ever with
 * the socket locked.
 */
TEST_F_TIMEOUT(sock, two_senders_msg_more, 120)
{
	static struct sender a, b;
	int round, a_first = 0, b_first = 0;
	pthread_t ta, tb;
	size_t n, k;
	ssize_t r;

	for (round = 0; round < 10; round++) {
		n = fill(_metadata, self->i);
		a = (struct sender){ .fd = self->i };
		b = (struct sender){ .fd = self->i, .flags = MSG_MORE };
		t_fill(a.buf, sizeof(a.buf), 11);
		t_fill(b.buf, sizeof(b.buf), 12);
		sender_start(_metadata, &ta, &a, round);
		sender_start(_metadata, &tb, &b, round);
		for (k = 0; k < n; k++)
			ASSERT_EQ(MPA_MAX_ULPDU, recv(self->r, rx_buf, T_BUF, 0))
				TH_LOG("round %d, ULPDU %zu of %zu", round, k,
				       n);
		pthread_join(ta, NULL);
		pthread_join(tb, NULL);
		ASSERT_EQ((ssize_t)sizeof(b.buf), b.rc)
			TH_LOG("round %d: B: %s", round, strerror(b.err));
		ASSERT_EQ(3, send(self->i, "end", 3, MSG_NOSIGNAL));
		if (a.rc < 0) {
			EXPECT_EQ(EMSGSIZE, a.err) TH_LOG("round %d: A: %s",
							  round,
							  strerror(a.err));
			b_first++;
		} else {
			ASSERT_EQ((ssize_t)sizeof(a.buf), a.rc);
			r = recv(self->r, rx_buf, T_BUF, 0);
			ASSERT_EQ((ssize_t)sizeof(a.buf), r)
				TH_LOG("round %d", round);
			EXPECT_BYTES(a.buf, rx_buf, sizeof(a.buf));
			a_first++;
		}
		r = recv(self->r, rx_buf, T_BUF, 0);
		ASSERT_EQ((ssize_t)sizeof(b.buf) + 3, r) TH_LOG("round %d",
								round);
		EXPECT_BYTES(b.buf, rx_buf, sizeof(b.buf));
		EXPECT_BYTES("end", rx_buf + sizeof(b.buf), 3);
	}
	TH_LOG("A first %d times, B first %d times", a_first, b_first);
	EXPECT_TRUE(t_quiet(self->r, self->i));
}

/*
 * held: the Responder rule (R-7.1.2-15) between two MPA sockets: a
 * Responder's sends are held until the Initiator's first FPDU arrives.
 */
FIXTURE(held)
{
	struct mpa_t_policy saved;
	int i, r;
};

FIXTURE_VARIANT(held)
{
	int family;
	bool markers;
};

FIXTURE_VARIANT_ADD(held, ipv4_markers)
{
	.family = AF_INET, .markers = true,
};

FIXTURE_VARIANT_ADD(held, ipv6)
{
	.family = AF_INET6, .markers = false,
};

FIXTURE_SETUP(held)
{
	static const struct t_pair_opts o;

	pair_setup(_metadata, &self->saved, variant->family, &o,
		   variant->markers, variant->markers, true, &self->i,
		   &self->r);
}

FIXTURE_TEARDOWN_PARENT(held)
{
	mpa_policy_set(&self->saved);
}

static bool held_flag(struct __test_metadata *_metadata, int fd)
{
	struct mpa_result res;

	t_get_result(_metadata, fd, &res);
	return res.flags & MPA_RESULT_TX_HELD;
}

TEST_F(held, until_first_fpdu)
{
	static const size_t sizes[] = { 5, 100, 1 };
	struct t_tx p;

	EXPECT_TRUE(held_flag(_metadata, self->r));
	EXPECT_FALSE(held_flag(_metadata, self->i));
	/* Queued: the calls succeed, nothing reaches the Initiator. */
	ASSERT_EQ(0, t_tx_start(&p, self->r, sizes, ARRAY_SIZE(sizes), 1900));
	pthread_join(p.thr, NULL);
	EXPECT_EQ(ARRAY_SIZE(sizes), p.sent) TH_LOG("errno %d", p.err);
	EXPECT_EQ(0, t_poll(self->i, POLLIN, T_QUIET));
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ(0, t_inq(self->i));
	EXPECT_TRUE(held_flag(_metadata, self->r));

	one_ulpdu(_metadata, self->i, self->r, "first", 5);
	EXPECT_FALSE(held_flag(_metadata, self->r));
	t_rx_check(_metadata, self->i, sizes, ARRAY_SIZE(sizes), 1900);
	one_ulpdu(_metadata, self->r, self->i, "later", 5);
}

/* Released when the FPDU is complete, whether or not it was read. */
TEST_F(held, released_unread)
{
	ssize_t r;
	int fl;

	ASSERT_EQ(5, send(self->r, "early", 5, MSG_NOSIGNAL));
	ASSERT_EQ(5, send(self->i, "first", 5, MSG_NOSIGNAL));
	r = t_recv_flags(self->i, rx_buf, T_BUF, 0, &fl);
	EXPECT_EQ(5, r);
	EXPECT_BYTES("early", rx_buf, 5);
	EXPECT_FALSE(held_flag(_metadata, self->r));
	r = t_recv_flags(self->r, rx_buf, T_BUF, 0, &fl);
	EXPECT_EQ(5, r);
	EXPECT_BYTES("first", rx_buf, 5);
}

/* An open (MSG_MORE) ULPDU of the Initiator releases nothing. */
TEST_F(held, not_by_half_a_ulpdu)
{
	ASSERT_EQ(5, send(self->r, "early", 5, MSG_NOSIGNAL));
	ASSERT_EQ(3, send(self->i, "fir", 3, MSG_NOSIGNAL | MSG_MORE));
	EXPECT_EQ(0, t_poll(self->i, POLLIN, T_QUIET));
	EXPECT_TRUE(held_flag(_metadata, self->r));
	ASSERT_EQ(2, send(self->i, "st", 2, MSG_NOSIGNAL));
	EXPECT_EQ(5, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_BYTES("early", rx_buf, 5);
	EXPECT_EQ(5, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_BYTES("first", rx_buf, 5);
}

/*
 * A Responder that closes while its sends are held: they can never go
 * (R-7.1.2-15), and the peer hears of the loss: a reset, never a clean
 * end of file short of what the Responder's send() accepted.
 */
TEST_F(held, reset_on_close)
{
	ASSERT_EQ(5, send(self->r, "early", 5, MSG_NOSIGNAL));
	close(self->r);
	self->r = -1;
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/*
 * A Responder that shuts down while its sends are held, and then the
 * Initiator's FIN, no FPDU before it: the hold can never end, and the
 * FIN that shutdown() kept behind those sends would follow a gap. Both
 * ends learn of it with a reset, as on close(), at once: the Initiator
 * used to wait for a FIN that only the Responder's close() would end.
 */
TEST_F(held, shut_then_peer_fin)
{
	ASSERT_EQ(5, send(self->r, "early", 5, MSG_NOSIGNAL));
	ASSERT_EQ(0, shutdown(self->r, SHUT_WR));
	EXPECT_EQ(0, t_poll(self->i, POLLIN, T_QUIET));
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(ECONNRESET, errno);
	EXPECT_EQ(-1, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/* The same with the Initiator's FIN first: the reset at the shutdown. */
TEST_F(held, peer_fin_then_shut)
{
	ASSERT_EQ(5, send(self->r, "early", 5, MSG_NOSIGNAL));
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	/* the end of file: the hold is over for good */
	EXPECT_EQ(0, recv(self->r, rx_buf, T_BUF, 0));
	EXPECT_EQ(-1, send(self->r, "late", 4, MSG_NOSIGNAL));
	EXPECT_EQ(EPIPE, errno);
	ASSERT_EQ(0, shutdown(self->r, SHUT_WR));
	EXPECT_EQ(-1, recv(self->i, rx_buf, T_BUF, 0));
	EXPECT_EQ(ECONNRESET, errno);
}

/* A Responder held with nothing to send closes with a FIN. */
TEST_F(held, fin_on_close_unsent)
{
	EXPECT_TRUE(held_flag(_metadata, self->r));
	close(self->r);
	self->r = -1;
	EXPECT_EQ(0, recv(self->i, rx_buf, T_BUF, 0));
}

/* The Responder may receive (and read) before it has sent anything. */
TEST_F(held, responder_reads_first)
{
	static const size_t sizes[] = { 64768, 1, 2 };

	xfer_fds(_metadata, self->i, self->r, sizes, ARRAY_SIZE(sizes), 2000);
	EXPECT_FALSE(held_flag(_metadata, self->r));
	xfer_fds(_metadata, self->r, self->i, sizes, ARRAY_SIZE(sizes), 2001);
}

TEST_HARNESS_MAIN
