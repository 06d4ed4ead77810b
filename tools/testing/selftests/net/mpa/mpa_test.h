/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the mpa selftests. */
#ifndef _MPA_TEST_H
#define _MPA_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/mpa.h>

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

static inline int mpa_attach(int fd)
{
	return setsockopt(fd, SOL_TCP, TCP_ULP, MPA_ULP_NAME,
			  sizeof(MPA_ULP_NAME));
}

/* A listening socket on the loopback address of @family, any free port. */
static inline int mpa_listener(int family, struct sockaddr_storage *addr,
			       socklen_t *len)
{
	int one = 1;
	int fd;

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		*len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)addr, *len) ||
	    listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)addr, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Close with SO_LINGER 0: the socket is gone when close() returns. */
static inline void mpa_close_abort(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/*
 * A connected pair over loopback: *client and *server, or -1. With @mss,
 * both ends had TCP_MAXSEG @mss before the handshake.
 */
static inline int mpa_tcp_pair_mss(int family, int mss, int *client,
				   int *server)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int lfd;

	*client = *server = -1;
	lfd = mpa_listener(family, &addr, &len);
	if (lfd < 0)
		return -1;
	if (mss && setsockopt(lfd, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss)))
		goto fail;
	*client = socket(family, SOCK_STREAM, 0);
	if (*client < 0 ||
	    (mss && setsockopt(*client, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss))) ||
	    connect(*client, (struct sockaddr *)&addr, len))
		goto fail;
	*server = accept(lfd, NULL, NULL);
	if (*server < 0)
		goto fail;
	close(lfd);
	return 0;
fail:
	if (*client >= 0)
		close(*client);
	*client = -1;
	close(lfd);
	return -1;
}

static inline int mpa_tcp_pair(int family, int *client, int *server)
{
	return mpa_tcp_pair_mss(family, 0, client, server);
}

/*
 * MPA Request and Reply frames, built and parsed here independently of the
 * module's protocol core (RFC 5044 7.1.1, RFC 6581 for Rev 2):
 *
 *  0-15  Key   16  M 0x80 C 0x40 R 0x20 Res 0x1f (Rev 2: E 0x10, Res 0x0f)
 *  17    Rev   18-19 PD_Length (big-endian)   then the Private Data
 *
 * Rev 2's IRD/ORD block leads the Private Data and counts in PD_Length:
 *  be16 A 0x8000 (peer-to-peer) | B 0x4000 (Send RTR) | IRD
 *  be16 C 0x8000 (Write RTR) | D 0x4000 (Read RTR) | ORD
 */
#define T_KEY_REQ	"MPA ID Req Frame"
#define T_KEY_REP	"MPA ID Rep Frame"
#define T_KEY_LEN	16
#define T_HDR		20
#define T_M		0x80
#define T_C		0x40
#define T_R		0x20
#define T_E		0x10
#define T_FRAME_MAX	(T_HDR + 520)

/* The 20-octet header alone, PD_Length as given (it may lie). */
static inline size_t t_hdr(uint8_t *b, bool reply, uint8_t flags,
			   uint8_t rev, uint16_t pd_length)
{
	memcpy(b, reply ? T_KEY_REP : T_KEY_REQ, T_KEY_LEN);
	b[16] = flags;
	b[17] = rev;
	b[18] = pd_length >> 8;
	b[19] = pd_length & 0xff;
	return T_HDR;
}

/* A whole frame: header, then @len octets of @pd. */
static inline size_t t_frame(uint8_t *b, bool reply, uint8_t flags,
			     uint8_t rev, const void *pd, uint16_t len)
{
	t_hdr(b, reply, flags, rev, len);
	if (len)
		memcpy(b + T_HDR, pd, len);
	return T_HDR + len;
}

/* The IRD/ORD block of Rev 2 (four octets at @b). */
static inline void t_block(uint8_t *b, bool p2p, uint8_t rtr, uint16_t ird,
			   uint16_t ord)
{
	uint16_t w1 = ird | (p2p ? 0x8000 : 0) |
		      (rtr & MPA_RTR_SEND ? 0x4000 : 0);
	uint16_t w2 = ord | (rtr & MPA_RTR_WRITE ? 0x8000 : 0) |
		      (rtr & MPA_RTR_READ ? 0x4000 : 0);

	b[0] = w1 >> 8;
	b[1] = w1 & 0xff;
	b[2] = w2 >> 8;
	b[3] = w2 & 0xff;
}

/* A Rev 2 enhanced frame: E set in @flags' place, block, then @pd. */
static inline size_t t_frame_v2(uint8_t *b, bool reply, uint8_t flags,
				bool p2p, uint8_t rtr, uint16_t ird,
				uint16_t ord, const void *pd, uint16_t len)
{
	t_hdr(b, reply, flags | T_E, 2, len + 4);
	t_block(b + T_HDR, p2p, rtr, ird, ord);
	if (len)
		memcpy(b + T_HDR + 4, pd, len);
	return T_HDR + 4 + len;
}

struct t_hdr_view {
	int key;		/* 'q' Request, 'p' Reply, 0 anything else */
	uint8_t flags;
	uint8_t rev;
	uint16_t pd_length;
};

static inline void t_parse(const uint8_t *b, struct t_hdr_view *h)
{
	h->key = !memcmp(b, T_KEY_REQ, T_KEY_LEN) ? 'q' :
		 !memcmp(b, T_KEY_REP, T_KEY_LEN) ? 'p' : 0;
	h->flags = b[16];
	h->rev = b[17];
	h->pd_length = (b[18] << 8) | b[19];
}

/* Private Data filler: distinct per @seed, not all zeros. */
static inline void t_pattern(uint8_t *b, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + seed * 13 + 1);
}

/* RFC 5044 4.5: MULPDU for an EMSS, with or without Markers, clamped. */
static inline uint32_t t_mulpdu(uint32_t emss, bool markers)
{
	uint32_t over = 6 + emss % 4;
	int64_t v;

	if (markers)
		over += 4 * ((emss + 511) / 512);
	v = (int64_t)emss - over;
	if (v < MPA_MIN_MULPDU)
		v = MPA_MIN_MULPDU;
	if (v > MPA_MAX_ULPDU)
		v = MPA_MAX_ULPDU;
	return v;
}

/* Time and plain socket I/O */

static inline long t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void t_sleep_ms(int ms)
{
	usleep(ms * 1000);
}

static inline int t_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* poll() one socket; the returned events, 0 on timeout, -1 on error. */
static inline int t_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	return n < 0 ? -1 : n ? p.revents : 0;
}

static inline ssize_t t_send(int fd, const void *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL);
}

/*
 * Read exactly @n octets, waiting at most @timeout_ms in all. Returns how
 * many arrived: less than @n on EOF, error or timeout.
 */
static inline ssize_t t_read(int fd, void *buf, size_t n, int timeout_ms)
{
	long end = t_now_ms() + timeout_ms;
	size_t got = 0;
	ssize_t r;

	while (got < n) {
		long left = end - t_now_ms();

		if (left <= 0 || !(t_poll(fd, POLLIN, left) & (POLLIN | POLLHUP | POLLERR)))
			break;
		r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;
		}
		got += r;
	}
	return got;
}

/*
 * Wait for the end of the stream. 0: EOF (a FIN) after no data; a positive
 * count: data came first (then EOF or not); -1: timeout or error (e.g. RST).
 */
static inline ssize_t t_wait_eof(int fd, int timeout_ms)
{
	long end = t_now_ms() + timeout_ms;
	ssize_t total = 0, r;
	char buf[256];

	for (;;) {
		long left = end - t_now_ms();

		if (left <= 0 || !t_poll(fd, POLLIN, left))
			return -1;
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r == 0)
			return total;
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		total += r;
	}
}

/* No octet waiting to be read right now (the peer sent nothing more). */
static inline bool t_nothing_pending(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) < 0 && errno == EAGAIN;
}

static inline int t_so_error(int fd)
{
	int err = -1;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return -1;
	return err;
}

static inline int t_emss(int fd)
{
	int mss = -1;
	socklen_t len = sizeof(mss);

	if (getsockopt(fd, SOL_TCP, TCP_MAXSEG, &mss, &len))
		return -1;
	return mss;
}

/* SOL_MPA options */

static inline int mpa_set(int fd, int opt, __u32 val)
{
	return setsockopt(fd, SOL_MPA, opt, &val, sizeof(val));
}

/* The value of a __u32 option, or -1 (errno set). */
static inline long mpa_get(int fd, int opt)
{
	__u32 val = 0;
	socklen_t len = sizeof(val);

	if (getsockopt(fd, SOL_MPA, opt, &val, &len))
		return -1;
	if (len != sizeof(val)) {
		errno = EMSGSIZE;
		return -1;
	}
	return val;
}

static inline long mpa_state(int fd)
{
	return mpa_get(fd, MPA_STATE);
}

static inline int mpa_start(int fd)
{
	return setsockopt(fd, SOL_MPA, MPA_START, NULL, 0);
}

/* MPA_ACCEPT or MPA_REJECT with the Reply's Private Data. */
static inline int mpa_answer(int fd, int opt, const void *pd, size_t len)
{
	return setsockopt(fd, SOL_MPA, opt, len ? pd : NULL, len);
}

static inline int mpa_set_pd(int fd, const void *pd, size_t len)
{
	return setsockopt(fd, SOL_MPA, MPA_PRIVATE_DATA, len ? pd : NULL, len);
}

static inline int mpa_set_enh(int fd, __u16 ird, __u16 ord, __u8 flags,
			      __u8 rtr)
{
	struct mpa_enhanced e = {
		.ird = ird, .ord = ord, .flags = flags, .rtr = rtr,
	};

	return setsockopt(fd, SOL_MPA, MPA_ENHANCED, &e, sizeof(e));
}

/* Read a fixed-size struct option: 0, or -1 (errno set). */
static inline int mpa_getstruct(int fd, int opt, void *p, socklen_t size)
{
	socklen_t len = size;

	memset(p, 0xa5, size);
	if (getsockopt(fd, SOL_MPA, opt, p, &len))
		return -1;
	if (len != size) {
		errno = EMSGSIZE;
		return -1;
	}
	return 0;
}

/* MPA_PEER_PRIVATE_DATA into @buf: its length, or -1 (errno set). */
static inline int mpa_peer_pd(int fd, void *buf, size_t size)
{
	socklen_t len = size;

	if (getsockopt(fd, SOL_MPA, MPA_PEER_PRIVATE_DATA, buf, &len))
		return -1;
	return len;
}

/*
 * Attach MPA and set a role and a startup timeout (@timeout_ms 0: leave
 * the module's default). 0, or -1 with errno set.
 */
static inline int mpa_config(int fd, int role, int timeout_ms)
{
	if (mpa_attach(fd))
		return -1;
	if (role && mpa_set(fd, MPA_ROLE, role))
		return -1;
	if (timeout_ms && mpa_set(fd, MPA_TIMEOUT, timeout_ms))
		return -1;
	return 0;
}

/* The startup phase of @fd is over: FULL, REJECTED or FAILED. */
static inline bool t_startup_over(int fd)
{
	long st = mpa_state(fd);

	return st == MPA_STATE_FULL || st == MPA_STATE_REJECTED ||
	       st == MPA_STATE_FAILED || st < 0;
}

/*
 * Wait through poll() until the startup phase of @fd is over, whatever
 * events poll reports on the way: the events it reports then, or -1 on
 * timeout. (The events poll must report are the point of other tests.)
 */
static inline int t_wait_startup(int fd, int timeout_ms)
{
	long end = t_now_ms() + timeout_ms;

	while (!t_startup_over(fd)) {
		long left = end - t_now_ms();

		if (left <= 0)
			return -1;
		if (t_poll(fd, POLLIN | POLLOUT, left < 100 ? left : 100))
			usleep(1000);
	}
	return t_poll(fd, POLLIN | POLLOUT, 0);
}

/* Module parameters */

#define MPA_PARAMS "/sys/module/mpa/parameters/"

static inline int mpa_param_get(const char *name, char *buf, size_t size)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), MPA_PARAMS "%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fgets(buf, size, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static inline int mpa_param_set(const char *name, const char *val)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), MPA_PARAMS "%s", name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fputs(val, f) >= 0;
	if (fclose(f))
		ok = 0;
	return ok ? 0 : -1;
}

/* Peers run in threads: they only record what happened, never assert. */

/* A plain TCP peer that reads, waits, writes, then maybe ends the stream. */
struct t_raw_peer {
	int fd;
	size_t rd_len;		/* octets to read first */
	int rd_timeout_ms;	/* 0: 5000 */
	uint8_t rd[T_FRAME_MAX];
	ssize_t rd_got;
	int delay_ms;		/* before writing */
	const void *wr;
	size_t wr_len;
	int trickle_ms;		/* >0: one octet at a time, this far apart */
	ssize_t wr_done;
	int end;		/* after writing: 0 or SHUT_WR (a FIN) */
};

static inline void *t_raw_peer_run(void *arg)
{
	struct t_raw_peer *p = arg;
	size_t i;

	if (p->rd_len)
		p->rd_got = t_read(p->fd, p->rd, p->rd_len,
				   p->rd_timeout_ms ?: 5000);
	if (p->delay_ms)
		t_sleep_ms(p->delay_ms);
	if (p->trickle_ms) {
		for (i = 0; i < p->wr_len; i++) {
			if (i)
				t_sleep_ms(p->trickle_ms);
			if (t_send(p->fd, (const char *)p->wr + i, 1) != 1)
				break;
			p->wr_done = i + 1;
		}
	} else if (p->wr_len) {
		p->wr_done = t_send(p->fd, p->wr, p->wr_len);
	}
	if (p->end == SHUT_WR)
		shutdown(p->fd, SHUT_WR);
	return NULL;
}

/* An MPA socket running MPA_START, then (responder) MPA_ACCEPT/REJECT. */
struct t_mpa_peer {
	int fd;
	int answer;		/* 0, MPA_ACCEPT or MPA_REJECT */
	const void *pd;
	size_t pd_len;
	int start_rc, start_errno;
	int answer_rc, answer_errno;
	long start_ms;		/* how long MPA_START took */
};

static inline void *t_mpa_peer_run(void *arg)
{
	struct t_mpa_peer *p = arg;
	long t0 = t_now_ms();

	p->answer_rc = -1;
	p->answer_errno = 0;
	errno = 0;
	p->start_rc = mpa_start(p->fd);
	p->start_errno = p->start_rc ? errno : 0;
	p->start_ms = t_now_ms() - t0;
	if (!p->start_rc && p->answer) {
		p->answer_rc = mpa_answer(p->fd, p->answer, p->pd, p->pd_len);
		p->answer_errno = p->answer_rc ? errno : 0;
	}
	return NULL;
}

/*
 * Checks, for use inside TEST()/TEST_F() bodies (they need the harness's
 * _metadata).
 */

/* Byte-exact comparison, with a hex dump of both on a mismatch. */
#define EXPECT_BYTES(exp, got, len) do {				\
	const uint8_t *__e = (const uint8_t *)(exp);			\
	const uint8_t *__g = (const uint8_t *)(got);			\
	size_t __n = (len), __i;					\
	if (memcmp(__e, __g, __n)) {					\
		for (__i = 0; __i < __n && __e[__i] == __g[__i]; __i++)	\
			;						\
		TH_LOG("bytes differ from offset %zu of %zu", __i, __n); \
		t_hexdump("expected", __e, __n, __i);			\
		t_hexdump("got     ", __g, __n, __i);			\
		_metadata->exit_code = KSFT_FAIL;			\
	}								\
} while (0)

static inline void t_hexdump(const char *what, const uint8_t *b, size_t n,
			     size_t from)
{
	char line[3 * 24 + 1];
	size_t i, start = from > 4 ? from - 4 : 0;
	int pos = 0;

	for (i = start; i < n && i < start + 24; i++)
		pos += snprintf(line + pos, sizeof(line) - pos, "%02x ", b[i]);
	fprintf(stderr, "#   %s @%zu: %s\n", what, start, line);
}

/* Why MPA_START failed, for the log. */
static inline void t_why(int fd, int err)
{
	struct mpa_error_info ei = {};

	mpa_getstruct(fd, MPA_ERROR, &ei, sizeof(ei));
	fprintf(stderr, "#   MPA_START: errno %d (%s), state %ld, MPA_ERROR code %u reason %u errnum %d\n",
		err, strerror(err), mpa_state(fd), ei.code, ei.reason,
		ei.errnum);
}

/* MPA_START must return 0; if not, say why. */
#define EXPECT_START(fd) do {						\
	int __rc = mpa_start(fd), __err = errno;			\
	if (__rc)							\
		t_why(fd, __err);					\
	EXPECT_EQ(0, __rc);						\
} while (0)

#define ASSERT_START(fd) do {						\
	int __rc = mpa_start(fd), __err = errno;			\
	if (__rc)							\
		t_why(fd, __err);					\
	ASSERT_EQ(0, __rc);						\
} while (0)

/*
 * MPA_RESULT's mulpdu: RFC 5044 4.5 from the socket's current MSS (what
 * TCP_MAXSEG reads: on a fresh loopback connection TCP bounds it by half
 * the peer's largest window), by the Markers we send.
 */
#define EXPECT_MULPDU(fd, mulpdu, tx_markers) do {			\
	int __emss = t_emss(fd);					\
	EXPECT_LT(0, __emss);						\
	EXPECT_EQ(t_mulpdu(__emss, tx_markers), (mulpdu))		\
		TH_LOG("EMSS %d, Markers %d", __emss, !!(tx_markers));	\
	EXPECT_GE(MPA_MAX_ULPDU, (mulpdu));				\
} while (0)

/* poll() reports EPOLLERR (with whatever else) within @ms; log if not. */
#define EXPECT_POLLERR(fd, ms) do {					\
	int __ev = t_poll(fd, POLLIN | POLLOUT, ms);			\
	EXPECT_EQ(POLLERR, __ev & POLLERR)				\
		TH_LOG("revents 0x%x, state %ld", __ev, mpa_state(fd));	\
} while (0)

#define EXPECT_MPA_STATE(fd, st) EXPECT_EQ((long)(st), mpa_state(fd))

#define EXPECT_MPA_ERROR(fd, _code, _reason, _errnum) do {		\
	struct mpa_error_info __ei;					\
	ASSERT_EQ(0, mpa_getstruct(fd, MPA_ERROR, &__ei, sizeof(__ei))); \
	EXPECT_EQ((__u32)(_code), __ei.code);				\
	EXPECT_EQ((__u32)(_reason), __ei.reason);			\
	EXPECT_EQ((__s32)(_errnum), __ei.errnum);			\
} while (0)

#endif /* _MPA_TEST_H */
