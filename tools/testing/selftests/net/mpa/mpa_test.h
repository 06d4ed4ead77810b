/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the mpa selftests. */
#ifndef _MPA_TEST_H
#define _MPA_TEST_H

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/genetlink.h>
#include <linux/mpa.h>
#include <linux/mpa_netlink.h>
#include <linux/netlink.h>

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

/* What a loopback pair has set before its handshake; 0: TCP's default. */
struct t_pair_opts {
	int mss;		/* TCP_MAXSEG, both ends */
	int rcvbuf;		/* SO_RCVBUF of the accepted end (the server) */
	int client_rcvbuf;	/* SO_RCVBUF of the client */
	bool client_nodelay;	/* TCP_NODELAY on the client */
};

static inline int t_setint(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

/* A connected pair over loopback with @o: *client and *server, or -1. */
static inline int mpa_tcp_pair_opts(int family, const struct t_pair_opts *o,
				    int *client, int *server)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int lfd;

	*client = *server = -1;
	lfd = mpa_listener(family, &addr, &len);
	if (lfd < 0)
		return -1;
	if ((o->mss && t_setint(lfd, SOL_TCP, TCP_MAXSEG, o->mss)) ||
	    (o->rcvbuf && t_setint(lfd, SOL_SOCKET, SO_RCVBUF, o->rcvbuf)))
		goto fail;
	*client = socket(family, SOCK_STREAM, 0);
	if (*client < 0 ||
	    (o->mss && t_setint(*client, SOL_TCP, TCP_MAXSEG, o->mss)) ||
	    (o->client_rcvbuf &&
	     t_setint(*client, SOL_SOCKET, SO_RCVBUF, o->client_rcvbuf)) ||
	    (o->client_nodelay && t_setint(*client, SOL_TCP, TCP_NODELAY, 1)) ||
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

/*
 * A connected pair over loopback: *client and *server, or -1. With @mss,
 * both ends had TCP_MAXSEG @mss before the handshake.
 */
static inline int mpa_tcp_pair_mss(int family, int mss, int *client,
				   int *server)
{
	struct t_pair_opts o = { .mss = mss };

	return mpa_tcp_pair_opts(family, &o, client, server);
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

/*
 * Only for negative checks ("nothing arrives within @ms"), never to wait
 * for something to happen: t_wait_acked(), t_wait_sleeping_in() and
 * poll() are the readiness signals for that.
 */
static inline void t_sleep_ms(int ms)
{
	usleep(ms * 1000);
}

/* The state letter of thread @tid in /proc (S, R, D...), or 0. */
static inline char t_task_state(pid_t tid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	p = f && fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	if (f)
		fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Wait until thread @tid sleeps in system call @nr (its /proc stat says
 * S before and after its syscall file names @nr, so that the sleep is
 * that call's): 0, or -1 after @ms.
 */
static inline int t_wait_sleeping_in(pid_t tid, long nr, int ms)
{
	long end = t_now_ms() + ms;
	char path[64];
	long got;
	FILE *f;

	for (;;) {
		bool before = t_task_state(tid) == 'S';

		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
		f = fopen(path, "r");
		got = f && fscanf(f, "%ld", &got) == 1 ? got : -1;
		if (f)
			fclose(f);
		if (before && got == nr && t_task_state(tid) == 'S')
			return 0;
		if (t_now_ms() > end)
			return -1;
		/* no event says "asleep": look again shortly */
		poll(NULL, 0, 2);
	}
}

/* TCP_INFO as far as tcpi_rcv_wnd (glibc's struct ends earlier). */
struct t_tcp_info {
	struct tcp_info base;
	uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
	uint32_t segs_out, segs_in, notsent_bytes, min_rtt;
	uint32_t data_segs_in, data_segs_out;
	uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
	uint32_t delivered, delivered_ce;
	uint64_t bytes_sent, bytes_retrans;
	uint32_t dsack_dups, reord_seen, rcv_ooopack, snd_wnd, rcv_wnd;
};

static_assert(offsetof(struct t_tcp_info, notsent_bytes) == 144 &&
	      offsetof(struct t_tcp_info, snd_wnd) == 228,
	      "struct tcp_info of Linux 6.12");

/*
 * The octets TCP socket @fd has taken from its writer: sent (once each)
 * and not sent yet. -1 on error.
 */
static inline long long t_tcp_taken(int fd)
{
	struct t_tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len) || len < sizeof(ti))
		return -1;
	return (long long)(ti.bytes_sent - ti.bytes_retrans) +
	       ti.notsent_bytes;
}

/*
 * Wait until the peer has acknowledged everything TCP socket @fd wrote,
 * a FIN included: what @fd sent is in the peer's receive queue then. The
 * readiness signal for "the octets have arrived". (Octets an MPA socket
 * still holds itself, not yet given to TCP, are not counted.) 0, or -1 on
 * timeout or error.
 */
static inline int t_wait_acked(int fd, int timeout_ms)
{
	long end = t_now_ms() + timeout_ms;
	struct t_tcp_info ti;
	socklen_t len;

	for (;;) {
		len = sizeof(ti);
		if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len) ||
		    len < sizeof(ti))
			return -1;
		if (!ti.base.tcpi_unacked && !ti.notsent_bytes)
			return 0;
		if (t_now_ms() > end)
			return -1;
		/* No event says "acknowledged": look again shortly. */
		poll(NULL, 0, 1);
	}
}

/*
 * Is the peer's receive window closed to TCP socket @fd: nothing of what
 * it sent is unacknowledged and more waits to go? No acknowledgment will
 * make room in @fd's send buffer then, until the peer reads. 1, 0, or -1
 * on error.
 */
static inline int t_window_closed(int fd)
{
	struct t_tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len) || len < sizeof(ti))
		return -1;
	return !ti.base.tcpi_unacked && ti.notsent_bytes;
}

static inline int t_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * poll() one socket; the returned events, 0 on timeout. A failed poll()
 * returns POLLNVAL, which no test waits for: -1 would have every event
 * bit set, and pass any test of one.
 */
static inline int t_poll(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n = poll(&p, 1, timeout_ms);

	if (n < 0) {
		fprintf(stderr, "# %s: %s\n", __func__, strerror(errno));
		return POLLNVAL;
	}
	return n ? p.revents : 0;
}

/*
 * Readiness of a socket, through poll() or through epoll (EPOLLIN,
 * EPOLLOUT and the rest have poll()'s values): the events, 0 when none
 * came within @ms, POLLNVAL on error. t_ready_open() waits for POLLIN |
 * POLLOUT, t_ready_open_ev() for @events (POLLERR and POLLHUP always
 * count).
 */
struct t_ready {
	int fd;
	int ep;
	short events;
};

static inline int t_ready_open_ev(struct t_ready *w, int fd, bool use_epoll,
				  short events)
{
	struct epoll_event ev = { .events = (uint16_t)events };

	w->fd = fd;
	w->ep = -1;
	w->events = events;
	if (!use_epoll)
		return 0;
	w->ep = epoll_create1(0);
	if (w->ep < 0)
		return -1;
	return epoll_ctl(w->ep, EPOLL_CTL_ADD, fd, &ev);
}

static inline int t_ready_open(struct t_ready *w, int fd, bool use_epoll)
{
	return t_ready_open_ev(w, fd, use_epoll, POLLIN | POLLOUT);
}

static inline int t_ready_wait(struct t_ready *w, int ms)
{
	struct epoll_event out;
	int n;

	if (w->ep < 0)
		return t_poll(w->fd, w->events, ms);
	n = epoll_wait(w->ep, &out, 1, ms);
	if (n < 0) {
		/* as t_poll(): no event bits that a test would take */
		fprintf(stderr, "# %s: %s\n", __func__, strerror(errno));
		return POLLNVAL;
	}
	return n ? (int)out.events : 0;
}

static inline void t_ready_close(struct t_ready *w)
{
	if (w->ep >= 0)
		close(w->ep);
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

/*
 * Nothing more arrives at @fd from its peer @from: once everything @from
 * wrote is acknowledged, and a short grace period later (for what the
 * module might still send on its own), nothing is pending at @fd.
 */
static inline bool t_quiet(int fd, int from)
{
	if (t_wait_acked(from, 10000))
		return false;
	t_sleep_ms(20);
	return t_nothing_pending(fd);
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

/*
 * The network namespace's MPA policy, through the "mpa" generic netlink
 * family (Documentation/netlink/specs/mpa.yaml), with a client of our own:
 * CTRL_CMD_GETFAMILY resolves the family, then MPA_CMD_POLICY_GET or
 * MPA_CMD_POLICY_SET. Each call opens a netlink socket of its own, so it
 * works on the namespace the caller is in at the time (after unshare() or
 * setns()). Errors come back as -errno; the kernel's extended ACK message,
 * if any, goes to stderr.
 *
 * A test that changes the policy saves it first (mpa_policy_get()) and
 * puts it back in its teardown (mpa_policy_set() of what it saved).
 */
struct mpa_t_policy {
	__u32 has;		/* MPA_T_HAS() of each attribute read or to send */
	__u32 crc_off_allowed;
	__u32 markers;
	__u32 initiator_rev;
	__u32 responder_revs;	/* MPA_REVS_REV1 | MPA_REVS_REV2 */
	__u32 permissive;
	__u32 timeout_ms;
};

#define MPA_T_HAS(attr)	(1u << (attr))
#define MPA_T_HAS_ALL	(MPA_T_HAS(MPA_A_POLICY_MAX + 1) - MPA_T_HAS(1))

/* The field of @attr in @p, or NULL for an attribute we do not know. */
static inline __u32 *mpa_t_policy_field(struct mpa_t_policy *p, int attr)
{
	switch (attr) {
	case MPA_A_POLICY_CRC_OFF_ALLOWED:
		return &p->crc_off_allowed;
	case MPA_A_POLICY_MARKERS:
		return &p->markers;
	case MPA_A_POLICY_INITIATOR_REV:
		return &p->initiator_rev;
	case MPA_A_POLICY_RESPONDER_REVS:
		return &p->responder_revs;
	case MPA_A_POLICY_PERMISSIVE:
		return &p->permissive;
	case MPA_A_POLICY_TIMEOUT_MS:
		return &p->timeout_ms;
	}
	return NULL;
}

/* The attribute's width on the wire (the spec's u8 or u32). */
static inline size_t mpa_t_policy_width(int attr)
{
	return attr == MPA_A_POLICY_RESPONDER_REVS ||
	       attr == MPA_A_POLICY_TIMEOUT_MS ? 4 : 1;
}

/* A request or a reply: the headers and room for the attributes. */
struct t_nl_msg {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	uint8_t attrs[4096];
};

static inline void t_nl_init(struct t_nl_msg *m, __u16 type, __u8 cmd,
			     __u8 version)
{
	memset(m, 0, sizeof(*m));
	m->nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->nh.nlmsg_type = type;
	m->nh.nlmsg_flags = NLM_F_REQUEST;
	m->nh.nlmsg_seq = 1;
	m->gh.cmd = cmd;
	m->gh.version = version;
}

/* Append an attribute of @len octets (padded to 4). */
static inline void t_nl_put(struct t_nl_msg *m, __u16 type, const void *data,
			    __u16 len)
{
	struct nlattr *a = (struct nlattr *)((char *)m + m->nh.nlmsg_len);

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	memset((char *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	m->nh.nlmsg_len += NLA_ALIGN(a->nla_len);
}

/* The attribute after @a (NULL: the first) in the message @m, or NULL. */
static inline struct nlattr *t_nl_attr_next(struct t_nl_msg *m,
					    struct nlattr *a)
{
	char *end = (char *)m + m->nh.nlmsg_len;
	char *p = a ? (char *)a + NLA_ALIGN(a->nla_len) : (char *)m->attrs;

	a = (struct nlattr *)p;
	if (p + NLA_HDRLEN > end || a->nla_len < NLA_HDRLEN ||
	    p + a->nla_len > end)
		return NULL;
	return a;
}

#define t_nla_data(a)	((void *)((char *)(a) + NLA_HDRLEN))
#define t_nla_len(a)	((a)->nla_len - NLA_HDRLEN)

/* The extended ACK's message after a netlink error, to stderr. */
static inline void t_nl_log_extack(const struct nlmsghdr *nh, int err)
{
	const struct nlmsgerr *e = NLMSG_DATA(nh);
	const struct nlattr *a;
	size_t off = sizeof(*e), end = nh->nlmsg_len - NLMSG_HDRLEN;

	if (!(nh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	if (!(nh->nlmsg_flags & NLM_F_CAPPED))
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	while (off + NLA_HDRLEN <= end) {
		a = (const struct nlattr *)((const char *)e + off);
		if (a->nla_len < NLA_HDRLEN || off + a->nla_len > end)
			break;
		if (a->nla_type == NLMSGERR_ATTR_MSG)
			fprintf(stderr, "#   netlink: %s: %.*s\n",
				strerror(-err), (int)t_nla_len(a),
				(const char *)t_nla_data(a));
		off += NLA_ALIGN(a->nla_len);
	}
}

/*
 * Send @req on a new NETLINK_GENERIC socket, receive the answer into
 * @rep: 0 and the reply in @rep, or -errno (the error the kernel sent
 * back, or the one a socket call failed with).
 */
static inline int t_nl_xfer(const struct t_nl_msg *req, struct t_nl_msg *rep)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	int one = 1, fd, ret;
	ssize_t n;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	n = send(fd, req, req->nh.nlmsg_len, 0);
	if (n != (ssize_t)req->nh.nlmsg_len)
		goto fail;
	do {
		n = recv(fd, rep, sizeof(*rep), MSG_TRUNC);
		if (n < 0)
			goto fail;
	} while (n >= (ssize_t)NLMSG_HDRLEN &&
		 rep->nh.nlmsg_seq != req->nh.nlmsg_seq);
	close(fd);
	if (n > (ssize_t)sizeof(*rep))
		return -EMSGSIZE;
	if (n < (ssize_t)NLMSG_HDRLEN || !NLMSG_OK(&rep->nh, n))
		return -EBADMSG;
	if (rep->nh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&rep->nh);

		if (rep->nh.nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EBADMSG;
		/* an ACK without a reply is not what a "do" answers */
		ret = e->error ?: -ENOMSG;
		if (e->error)
			t_nl_log_extack(&rep->nh, e->error);
		return ret;
	}
	if (rep->nh.nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EBADMSG;
	return 0;
fail:
	ret = -errno;
	close(fd);
	return ret ?: -EIO;
}

/* The id of the "mpa" family (in the caller's namespace), or -errno. */
static inline int mpa_genl_family(void)
{
	struct t_nl_msg req, rep;
	struct nlattr *a;
	int ret;

	t_nl_init(&req, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 2);
	t_nl_put(&req, CTRL_ATTR_FAMILY_NAME, MPA_FAMILY_NAME,
		 sizeof(MPA_FAMILY_NAME));
	ret = t_nl_xfer(&req, &rep);
	if (ret)
		return ret;
	for (a = t_nl_attr_next(&rep, NULL); a; a = t_nl_attr_next(&rep, a))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID &&
		    t_nla_len(a) == sizeof(__u16))
			return *(__u16 *)t_nla_data(a);
	return -ENOENT;
}

/*
 * One policy request: @cmd MPA_CMD_POLICY_GET or MPA_CMD_POLICY_SET with
 * the attributes of @req in @req->has (@req may be NULL: none); the
 * reply's attributes into @rep (may be NULL), @rep->has saying which came.
 * 0 or -errno.
 */
static inline int mpa_policy_xfer(__u8 cmd, const struct mpa_t_policy *req,
				  struct mpa_t_policy *rep)
{
	struct mpa_t_policy in = {}, out = {};
	struct t_nl_msg m, r;
	struct nlattr *a;
	int id, attr, ret;
	__u32 *f;
	__u8 v8;

	id = mpa_genl_family();
	if (id < 0)
		return id;
	t_nl_init(&m, id, cmd, MPA_FAMILY_VERSION);
	if (req)
		out = *req;
	for (attr = 1; attr <= MPA_A_POLICY_MAX; attr++) {
		if (!(out.has & MPA_T_HAS(attr)))
			continue;
		f = mpa_t_policy_field(&out, attr);
		v8 = *f;
		if (mpa_t_policy_width(attr) == 1)
			t_nl_put(&m, attr, &v8, 1);
		else
			t_nl_put(&m, attr, f, 4);
	}
	ret = t_nl_xfer(&m, &r);
	if (ret)
		return ret;
	if (r.nh.nlmsg_type != id || r.gh.cmd != cmd)
		return -EBADMSG;
	for (a = t_nl_attr_next(&r, NULL); a; a = t_nl_attr_next(&r, a)) {
		f = mpa_t_policy_field(&in, a->nla_type);
		if (!f || t_nla_len(a) != mpa_t_policy_width(a->nla_type))
			continue;
		if (t_nla_len(a) == 1)
			*f = *(__u8 *)t_nla_data(a);
		else
			memcpy(f, t_nla_data(a), 4);
		in.has |= MPA_T_HAS(a->nla_type);
	}
	if (rep)
		*rep = in;
	return 0;
}

/*
 * One counter of the caller's namespace's statistics (MPA_A_STATS_*, a
 * uint: 4 or 8 octets) into *@val: 0 or -errno.
 */
static inline int mpa_stats_get1(int attr, __u64 *val)
{
	struct t_nl_msg m, r;
	struct nlattr *a;
	__u32 v32;
	int id, ret;

	id = mpa_genl_family();
	if (id < 0)
		return id;
	t_nl_init(&m, id, MPA_CMD_STATS_GET, MPA_FAMILY_VERSION);
	ret = t_nl_xfer(&m, &r);
	if (ret)
		return ret;
	if (r.nh.nlmsg_type != id || r.gh.cmd != MPA_CMD_STATS_GET)
		return -EBADMSG;
	for (a = t_nl_attr_next(&r, NULL); a; a = t_nl_attr_next(&r, a)) {
		if (a->nla_type != attr)
			continue;
		switch (t_nla_len(a)) {
		case 4:
			memcpy(&v32, t_nla_data(a), 4);
			*val = v32;
			return 0;
		case 8:
			memcpy(val, t_nla_data(a), 8);
			return 0;
		}
		return -EBADMSG;
	}
	return -ENOENT;
}

/* The whole policy into @p: 0 or -errno. */
static inline int mpa_policy_get(struct mpa_t_policy *p)
{
	int ret = mpa_policy_xfer(MPA_CMD_POLICY_GET, NULL, p);

	if (ret)
		return ret;
	/* the reply has every attribute */
	return p->has == MPA_T_HAS_ALL ? 0 : -EBADMSG;
}

/*
 * Set the attributes in @p->has (a saved policy: all of them), the rest
 * unchanged: 0 or -errno.
 */
static inline int mpa_policy_set(const struct mpa_t_policy *p)
{
	return mpa_policy_xfer(MPA_CMD_POLICY_SET, p, NULL);
}

/* Set one attribute: 0 or -errno. */
static inline int mpa_policy_set1(int attr, __u32 val)
{
	struct mpa_t_policy p = { .has = MPA_T_HAS(attr) };
	__u32 *f = mpa_t_policy_field(&p, attr);

	if (!f)
		return -EINVAL;
	*f = val;
	return mpa_policy_set(&p);
}

/* Peers run in threads: they only record what happened, never assert. */

/*
 * A plain TCP peer that reads, waits, writes, then maybe ends the stream.
 * It waits for a readiness signal, never a fixed time: with @wait_tid set
 * (before the thread starts), until thread @wait_tid is asleep in system
 * call @wait_nr, as MPA_START's caller in setsockopt. It writes all the
 * same after 10 s; @wait_rc tells, 0 or -1, for the test to check.
 */
struct t_raw_peer {
	int fd;
	size_t rd_len;		/* octets to read first */
	int rd_timeout_ms;	/* 0: 5000 */
	uint8_t rd[T_FRAME_MAX];
	ssize_t rd_got;
	pid_t wait_tid;		/* 0: no wait */
	long wait_nr;
	int wait_rc;
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
	if (p->wait_tid)
		p->wait_rc = t_wait_sleeping_in(p->wait_tid, p->wait_nr,
						10000);
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

/*
 * Full Operation
 *
 * FPDUs (RFC 5044 section 4), encoded and decoded here independently of
 * the module's protocol core. Stream positions are octets after SeqStart of
 * one direction (a u32 that wraps like a TCP sequence number): with
 * Markers, one starts at every position that is a multiple of 512. A
 * Marker right where an FPDU starts belongs to it with FPDUPTR 0 and is
 * covered by its CRC; a Marker between PAD and CRC belongs to the FPDU
 * before it; every other Marker inside an FPDU holds the distance back to
 * the FPDU's ULPDU_Length field. The CRC32c covers every octet of the FPDU
 * except the CRC field, Markers included, and goes on the wire least
 * significant octet first. Everything else is big-endian. Every FPDU is a
 * multiple of 4 octets (Markers excluded), so is every Marker: a Marker
 * never splits ULPDU_Length or the CRC.
 */
#define T_MARKER_IVL	512
/* The largest FPDU on the wire: a 65535-octet ULPDU_Length with Markers. */
#define T_FPDU_MAX	(4 + 2 + 65535 + 3 + 4 + 4 * (65544 / 512 + 2))

/* CRC32c (Castagnoli: reflected polynomial 0x82f63b78), table-driven. */
static uint32_t t_crc32c_tab[256];
static pthread_once_t t_crc32c_once = PTHREAD_ONCE_INIT;

static inline void t_crc32c_init(void)
{
	uint32_t c;
	int i, k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
		t_crc32c_tab[i] = c;
	}
}

/*
 * Threads of a test sum their streams at once: the table is built once,
 * and whole before any of them reads it.
 */
static inline uint32_t t_crc32c_update(uint32_t crc, const void *buf,
				       size_t len)
{
	const uint8_t *b = buf;

	pthread_once(&t_crc32c_once, t_crc32c_init);
	while (len--)
		crc = t_crc32c_tab[(crc ^ *b++) & 0xff] ^ (crc >> 8);
	return crc;
}

/* The iSCSI digest: initial value and final XOR all ones. */
static inline uint32_t t_crc32c(const void *buf, size_t len)
{
	return ~t_crc32c_update(~0u, buf, len);
}

static inline void t_put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

static inline uint32_t t_get_le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void t_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline uint16_t t_get_be16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static inline bool t_at_marker(bool markers, uint32_t pos)
{
	return markers && pos % T_MARKER_IVL == 0;
}

static inline unsigned int t_pad(size_t ulpdu_len)
{
	return (4 - (2 + ulpdu_len) % 4) % 4;
}

/* Where the Markers of one FPDU fell. */
struct t_fpdu_info {
	size_t wire;		/* octets on the wire, Markers included */
	unsigned int markers;	/* Markers in it */
	bool lead;		/* it starts with a Marker (FPDUPTR 0) */
	bool before_crc;	/* a Marker between PAD and CRC */
	size_t marker_off[130];	/* wire offsets of its Markers */
};

/*
 * The wire image of one FPDU carrying @len octets of @ulpdu at stream
 * position @pos, into @out (NULL: only the layout); its length. The CRC
 * is always computed (a C=0 sender may send any value there). @len may be
 * above 64768, which a conforming sender never sends, to build hostile
 * FPDUs.
 */
static inline size_t t_fpdu_encode(uint8_t *out, uint32_t pos, bool markers,
				   const void *ulpdu, size_t len,
				   struct t_fpdu_info *info)
{
	const uint8_t *u = ulpdu;
	size_t flen = 2 + len + t_pad(len), k, o = 0;
	struct t_fpdu_info tmp;
	uint32_t p = pos, hdr;
	uint8_t b;

	if (!info)
		info = &tmp;
	info->markers = 0;
	info->lead = info->before_crc = false;
#define T_MARKER_OUT(ptr) do {						\
		if (out) {						\
			t_put_be16(out + o, 0);				\
			t_put_be16(out + o + 2, (ptr));			\
		}							\
		info->marker_off[info->markers++] = o;			\
		o += 4;							\
		p += 4;							\
	} while (0)
	if (t_at_marker(markers, p)) {
		info->lead = true;
		T_MARKER_OUT(0);
	}
	hdr = p;
	for (k = 0; k < flen; k++) {
		if (t_at_marker(markers, p))
			T_MARKER_OUT(p - hdr);
		if (k < 2)
			b = k ? len & 0xff : (len >> 8) & 0xff;
		else if (k < 2 + len)
			b = u[k - 2];
		else
			b = 0;
		if (out)
			out[o] = b;
		o++;
		p++;
	}
	if (t_at_marker(markers, p)) {
		info->before_crc = true;
		T_MARKER_OUT(p - hdr);
	}
#undef T_MARKER_OUT
	if (out)
		t_put_le32(out + o, t_crc32c(out, o));
	o += 4;
	info->wire = o;
	return o;
}

/* Octets one FPDU of @len takes on the wire at @pos. */
static inline size_t t_fpdu_wire(uint32_t pos, bool markers, size_t len)
{
	struct t_fpdu_info info;

	return t_fpdu_encode(NULL, pos, markers, NULL, len, &info);
}

/* Markers in one FPDU of @len at @pos. */
static inline unsigned int t_fpdu_markers(uint32_t pos, bool markers,
					  size_t len)
{
	struct t_fpdu_info info;

	t_fpdu_encode(NULL, pos, markers, NULL, len, &info);
	return info.markers;
}

/* Recompute the CRC of a (patched) FPDU image of @wire octets. */
static inline void t_fpdu_recrc(uint8_t *fpdu, size_t wire)
{
	t_put_le32(fpdu + wire - 4, t_crc32c(fpdu, wire - 4));
}

/* What t_fpdu_decode() found. */
struct t_fpdu_dec {
	size_t wire;		/* octets of the FPDU on the wire */
	uint16_t len;		/* its ULPDU_Length */
	unsigned int markers;	/* Markers in it */
	uint32_t crc_wire;	/* the CRC field, read least significant first */
	uint32_t crc_calc;	/* the CRC32c over the rest */
};

/*
 * Decode one FPDU at stream position @pos from the @avail octets at @in,
 * the ULPDU into @ulpdu (room for 65535 octets): 1 for a whole FPDU that
 * passes every check, 0 when @avail is too short to tell, -1 when it does
 * not pass (@why says why). Strict, for what a conforming sender puts on
 * the wire: Marker RESERVED and PAD are zero, every FPDUPTR is exact (low
 * bits included), ULPDU_Length is at most 64768 and, with @check_crc, the
 * CRC matches.
 */
static inline int t_fpdu_decode(const uint8_t *in, size_t avail, uint32_t pos,
				bool markers, bool check_crc, uint8_t *ulpdu,
				struct t_fpdu_dec *d, char *why, size_t whylen)
{
	size_t o = 0, k, flen = 2, ulen = 0;
	uint32_t p = pos, hdr, want;
	uint8_t b;

	memset(d, 0, sizeof(*d));
	snprintf(why, whylen, "ok");
#define T_NEED(n) do { if (avail < o + (n)) return 0; } while (0)
#define T_MARKER_IN(exp) do {						\
		T_NEED(4);						\
		want = (exp);						\
		if (t_get_be16(in + o) != 0 ||				\
		    t_get_be16(in + o + 2) != want) {			\
			snprintf(why, whylen,				\
				 "Marker at stream %u (FPDU octet %zu): %02x%02x %02x%02x, want 0000 %04x", \
				 p, o, in[o], in[o + 1], in[o + 2],	\
				 in[o + 3], want);			\
			return -1;					\
		}							\
		d->markers++;						\
		o += 4;							\
		p += 4;							\
	} while (0)
	if (t_at_marker(markers, p))
		T_MARKER_IN(0);
	hdr = p;
	for (k = 0; k < flen; k++) {
		if (t_at_marker(markers, p))
			T_MARKER_IN(p - hdr);
		T_NEED(1);
		b = in[o];
		if (k == 1) {
			ulen = in[o - 1] << 8 | b;
			d->len = ulen;
			if (ulen > MPA_MAX_ULPDU) {
				snprintf(why, whylen,
					 "ULPDU_Length %zu above 64768", ulen);
				return -1;
			}
			flen = 2 + ulen + t_pad(ulen);
		} else if (k >= 2 && k < 2 + ulen) {
			ulpdu[k - 2] = b;
		} else if (k >= 2 && b) {
			snprintf(why, whylen, "PAD octet %zu is 0x%02x",
				 k - 2 - ulen, b);
			return -1;
		}
		o++;
		p++;
	}
	if (t_at_marker(markers, p))
		T_MARKER_IN(p - hdr);
#undef T_MARKER_IN
	T_NEED(4);
#undef T_NEED
	d->crc_wire = t_get_le32(in + o);
	d->crc_calc = t_crc32c(in, o);
	o += 4;
	d->wire = o;
	if (check_crc && d->crc_wire != d->crc_calc) {
		snprintf(why, whylen, "CRC field %08x, CRC32c %08x",
			 d->crc_wire, d->crc_calc);
		return -1;
	}
	return 1;
}

/* Test data: a deterministic pseudo-random stream (splitmix64). */
static inline uint64_t t_rand64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* @n octets that depend on @seed only. */
static inline void t_fill(void *buf, size_t n, uint64_t seed)
{
	uint8_t *b = buf;
	uint64_t s = seed * 0x2545f4914f6cdd1dull + 1, v;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		v = t_rand64(&s);
		memcpy(b + i, &v, 8);
	}
	if (i < n) {
		v = t_rand64(&s);
		memcpy(b + i, &v, n - i);
	}
}

/* recvmsg() into one buffer: the count, or -1; *msg_flags its flags. */
static inline ssize_t t_recv_flags(int fd, void *buf, size_t len, int flags,
				   int *msg_flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t r;

	r = recvmsg(fd, &msg, flags);
	*msg_flags = r < 0 ? 0 : msg.msg_flags;
	return r;
}

static inline int t_set_timeo(int fd, int opt, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
			      .tv_usec = (ms % 1000) * 1000 };

	return setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

static inline int t_blocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* Markers and CRC of an MPA socket (its Full Operation start options). */
static inline int t_mpa_options(int fd, int role, bool markers, bool crc)
{
	if (mpa_config(fd, role, 10000) ||
	    mpa_set(fd, MPA_MARKERS, markers) ||
	    (!crc && mpa_set(fd, MPA_CRC, 0)))
		return -1;
	return 0;
}

/*
 * Take the connected TCP sockets @i (the Initiator) and @r (the Responder)
 * to Full Operation. @init_m and @resp_m: the Markers each wants in what it
 * receives; !@crc: both announce C=0 (crc-off-allowed must be set); the
 * Initiator waits @ms at most (t_mpa_establish(): 10 s). 0, or -1 with
 * what failed on stderr (the sockets stay open).
 */
static inline int t_mpa_establish_ms(int i, int r, bool init_m,
				     bool resp_m, bool crc, int ms)
{
	const char *what;

	what = "options";
	if (t_mpa_options(i, MPA_ROLE_INITIATOR, init_m, crc) ||
	    t_mpa_options(r, MPA_ROLE_RESPONDER, resp_m, crc))
		goto fail;
	what = "Initiator's non-blocking MPA_START";
	if (t_nonblock(i) || mpa_start(i) != -1 || errno != EINPROGRESS)
		goto fail;
	what = "Responder's MPA_START";
	if (mpa_start(r))
		goto fail;
	what = "MPA_ACCEPT";
	if (mpa_answer(r, MPA_ACCEPT, NULL, 0))
		goto fail;
	what = "the Initiator's startup";
	if (t_wait_startup(i, ms) < 0 || t_blocking(i))
		goto fail;
	what = "Full Operation";
	if (mpa_state(i) != MPA_STATE_FULL || mpa_state(r) != MPA_STATE_FULL)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "# t_mpa_establish: %s failed: %s; states %ld/%ld\n",
		what, strerror(errno), mpa_state(i), mpa_state(r));
	return -1;
}

static inline int t_mpa_establish(int i, int r, bool init_m, bool resp_m,
				  bool crc)
{
	return t_mpa_establish_ms(i, r, init_m, resp_m, crc, 10000);
}

/*
 * Two MPA sockets in Full Operation over loopback: *i the Initiator (the
 * client), *r the Responder. @init_m, @resp_m and @crc as for
 * t_mpa_establish(). @o as for mpa_tcp_pair_opts() (the Responder is the
 * server). 0, or -1 with what failed on stderr (both sockets closed).
 */
static inline int t_mpa_pair_opts(int family, const struct t_pair_opts *o,
				  bool init_m, bool resp_m, bool crc, int *i,
				  int *r)
{
	if (mpa_tcp_pair_opts(family, o, i, r)) {
		fprintf(stderr, "# t_mpa_pair: no TCP pair: %s\n",
			strerror(errno));
		return -1;
	}
	if (!t_mpa_establish(*i, *r, init_m, resp_m, crc))
		return 0;
	close(*i);
	close(*r);
	*i = *r = -1;
	return -1;
}

/* t_mpa_pair_opts() with TCP_MAXSEG @mss (0: none) alone */
static inline int t_mpa_pair(int family, int mss, bool init_m, bool resp_m,
			     bool crc, int *i, int *r)
{
	struct t_pair_opts o = { .mss = mss };

	return t_mpa_pair_opts(family, &o, init_m, resp_m, crc, i, r);
}

/*
 * One MPA socket @m against a raw peer @raw that writes the startup frame
 * itself (Rev 1, no Private Data, @raw_flags: T_M, T_C), @m with
 * @m_markers and @m_crc. Afterwards both directions start at stream
 * position 0. The frame @m sent (its flags octet), or -1 with what failed
 * on stderr.
 *
 * t_raw_initiator(): @m is the Responder; the raw peer sends the Request,
 * @m accepts, the raw peer reads the Reply.
 */
static inline int t_raw_initiator(int m, int raw, uint8_t raw_flags,
				  bool m_markers, bool m_crc)
{
	uint8_t fr[T_HDR];
	struct t_hdr_view h;
	const char *what;

	what = "options";
	if (t_mpa_options(m, MPA_ROLE_RESPONDER, m_markers, m_crc))
		goto fail;
	t_frame(fr, false, raw_flags, 1, NULL, 0);
	what = "sending the Request";
	if (t_send(raw, fr, T_HDR) != T_HDR)
		goto fail;
	what = "MPA_START";
	if (mpa_start(m))
		goto fail;
	what = "MPA_ACCEPT";
	if (mpa_answer(m, MPA_ACCEPT, NULL, 0))
		goto fail;
	what = "reading the Reply";
	if (t_read(raw, fr, T_HDR, 10000) != T_HDR)
		goto fail;
	t_parse(fr, &h);
	what = "the Reply";
	if (h.key != 'p' || h.rev != 1 || h.pd_length)
		goto fail;
	return fr[16];
fail:
	fprintf(stderr, "# t_raw_initiator: %s failed: %s; state %ld\n", what,
		strerror(errno), mpa_state(m));
	return -1;
}

/* @m is the Initiator; the raw peer reads the Request and replies. */
static inline int t_raw_responder(int m, int raw, uint8_t raw_flags,
				  bool m_markers, bool m_crc)
{
	uint8_t fr[T_HDR], flags;
	struct t_hdr_view h;
	const char *what;

	what = "options";
	if (t_mpa_options(m, MPA_ROLE_INITIATOR, m_markers, m_crc))
		goto fail;
	what = "non-blocking MPA_START";
	if (t_nonblock(m) || mpa_start(m) != -1 || errno != EINPROGRESS)
		goto fail;
	what = "reading the Request";
	if (t_read(raw, fr, T_HDR, 10000) != T_HDR)
		goto fail;
	t_parse(fr, &h);
	what = "the Request";
	if (h.key != 'q' || h.rev != 1 || h.pd_length)
		goto fail;
	flags = fr[16];
	t_frame(fr, true, raw_flags, 1, NULL, 0);
	what = "sending the Reply";
	if (t_send(raw, fr, T_HDR) != T_HDR)
		goto fail;
	what = "the startup";
	if (t_wait_startup(m, 10000) < 0 || t_blocking(m) ||
	    mpa_state(m) != MPA_STATE_FULL)
		goto fail;
	return flags;
fail:
	fprintf(stderr, "# t_raw_responder: %s failed: %s; state %ld\n", what,
		strerror(errno), mpa_state(m));
	return -1;
}

/*
 * Test data over Full Operation (these use the harness: include
 * kselftest_harness.h first).
 */
#include <stdlib.h>
#include <sys/ioctl.h>

static inline void t_get_result(struct __test_metadata *_metadata, int fd,
				struct mpa_result *res)
{
	ASSERT_EQ(0, mpa_getstruct(fd, MPA_RESULT, res, sizeof(*res)));
}

static inline void t_get_stats(struct __test_metadata *_metadata, int fd,
			       struct mpa_stats *st)
{
	ASSERT_EQ(0, mpa_getstruct(fd, MPA_STATS, st, sizeof(*st)));
}

static inline void t_get_frame(struct __test_metadata *_metadata, int fd,
			       struct mpa_frame_info *fi)
{
	ASSERT_EQ(0, mpa_getstruct(fd, MPA_PEER_FRAME, fi, sizeof(*fi)));
}

/* A non-blocking MPA_START on @fd: it must say EINPROGRESS. */
static inline void t_start_nonblock(struct __test_metadata *_metadata, int fd)
{
	ASSERT_EQ(0, t_nonblock(fd));
	ASSERT_EQ(-1, mpa_start(fd));
	ASSERT_EQ(EINPROGRESS, errno);
}

/* The next @len octets on @fd, within @ms, are exactly @exp. */
static inline void t_expect_read(struct __test_metadata *_metadata, int fd,
				 const void *exp, size_t len, int ms)
{
	uint8_t got[T_FRAME_MAX + 8];

	ASSERT_GE(sizeof(got), len);
	ASSERT_EQ((ssize_t)len, t_read(fd, got, len, ms));
	EXPECT_BYTES(exp, got, len);
}

/* @len octets of @buf written on @from arrive unchanged on @to. */
static inline void t_flow(struct __test_metadata *_metadata, int from, int to,
			  const void *buf, size_t len, int ms)
{
	ASSERT_EQ((ssize_t)len, t_send(from, buf, len));
	t_expect_read(_metadata, to, buf, len, ms);
}

/*
 * MPA_START on @m (blocking) while a peer runs in a thread: @run(@peer),
 * t_raw_peer_run() or t_mpa_peer_run(). MPA_START's result, and in *err
 * its errno (0 when it succeeded); the peer has finished.
 */
static inline int t_start_against(struct __test_metadata *_metadata,
				  void *(*run)(void *), void *peer, int m,
				  int *err)
{
	pthread_t t;
	int rc;

	ASSERT_EQ(0, pthread_create(&t, NULL, run, peer));
	rc = mpa_start(m);
	*err = rc ? errno : 0;
	pthread_join(t, NULL);
	return rc;
}

/* SIOCINQ (FIONREAD), or -1. */
static inline int t_inq(int fd)
{
	int n = -1;

	if (ioctl(fd, FIONREAD, &n))
		return -1;
	return n;
}

/* Room for any ULPDU a recv() may return, and then some. */
#define T_ULPDU_BUF	(MPA_MAX_ULPDU + 4096)

/*
 * Seeded ULPDU streams: ULPDU k of the stream @seed is t_fill(seed + k),
 * its size the next of the t_rand64() sequence from @seed, 1 to
 * MPA_MAX_ULPDU octets. A stream ends after at least @total octets, with
 * a FIN. One struct t_stream for each end, sender and receiver.
 */
struct t_stream {
	pthread_t thr;
	int fd;
	uint64_t seed, total;
	uint64_t ulpdus, octets;
	uint32_t crc;		/* CRC32c register over what went through */
	int err;		/* sender: errno of a failed send or shutdown */
	bool eof;		/* receiver: EOF right after the last ULPDU */
	char why[256];		/* receiver: the first problem, "" if none */
	long done_ms;		/* receiver: t_now_ms() when it finished */
};

static inline size_t t_stream_size(uint64_t *s)
{
	return 1 + t_rand64(s) % MPA_MAX_ULPDU;
}

/* The sender: the stream on @t->fd, then shutdown(SHUT_WR). */
static inline void *t_stream_tx(void *arg)
{
	uint8_t *buf = malloc(MPA_MAX_ULPDU);
	struct t_stream *t = arg;
	uint64_t s = t->seed;
	size_t len;
	ssize_t r;

	t->crc = ~0u;
	while (buf && t->octets < t->total) {
		len = t_stream_size(&s);
		t_fill(buf, len, t->seed + t->ulpdus);
		r = send(t->fd, buf, len, MSG_NOSIGNAL);
		if (r != (ssize_t)len) {
			t->err = r < 0 ? errno : EMSGSIZE;
			break;
		}
		t->crc = t_crc32c_update(t->crc, buf, len);
		t->ulpdus++;
		t->octets += len;
	}
	if (!buf)
		t->err = ENOMEM;
	if (shutdown(t->fd, SHUT_WR) && !t->err)
		t->err = errno;
	free(buf);
	return NULL;
}

/* The receiver: every ULPDU whole and as sent (MSG_EOR), then EOF. */
static inline void *t_stream_rx(void *arg)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(MPA_MAX_ULPDU);
	struct t_stream *b = arg;
	uint64_t s = b->seed;
	size_t len;
	ssize_t r;
	int fl;

	b->crc = ~0u;
	if (!got || !exp) {
		snprintf(b->why, sizeof(b->why), "no memory");
		goto out;
	}
	while (b->octets < b->total) {
		len = t_stream_size(&s);
		r = t_recv_flags(b->fd, got, T_ULPDU_BUF, 0, &fl);
		if (r != (ssize_t)len || !(fl & MSG_EOR)) {
			snprintf(b->why, sizeof(b->why),
				 "ULPDU %llu at octet %llu: recv %zd (%s), flags 0x%x; want %zu with MSG_EOR",
				 (unsigned long long)b->ulpdus,
				 (unsigned long long)b->octets, r,
				 r < 0 ? strerror(errno) : "-", fl, len);
			goto out;
		}
		t_fill(exp, len, b->seed + b->ulpdus);
		if (memcmp(exp, got, len)) {
			snprintf(b->why, sizeof(b->why),
				 "ULPDU %llu (%zu octets) differs",
				 (unsigned long long)b->ulpdus, len);
			goto out;
		}
		b->crc = t_crc32c_update(b->crc, got, len);
		b->ulpdus++;
		b->octets += len;
	}
	r = recv(b->fd, got, T_ULPDU_BUF, 0);
	b->eof = r == 0;
	if (!b->eof)
		snprintf(b->why, sizeof(b->why),
			 "after the last ULPDU: recv %zd (%s), not EOF", r,
			 r < 0 ? strerror(errno) : "-");
out:
	b->done_ms = t_now_ms();
	free(got);
	free(exp);
	return NULL;
}

/*
 * The receiver @rx got all the sender @tx sent, the whole stream and
 * then EOF, and its MPA_STATS count just that, with no CRC or Marker
 * error; with @markers, at least one Marker every 512 octets, else none.
 * @what for the log.
 */
static inline void t_stream_check(struct __test_metadata *_metadata,
				  const char *what, const struct t_stream *tx,
				  const struct t_stream *rx, bool markers)
{
	struct mpa_stats st;

	EXPECT_EQ(0, tx->err) TH_LOG("%s: send: %s", what, strerror(tx->err));
	EXPECT_STREQ("", rx->why) TH_LOG("%s", what);
	EXPECT_EQ(tx->ulpdus, rx->ulpdus) TH_LOG("%s", what);
	EXPECT_EQ(tx->octets, rx->octets) TH_LOG("%s", what);
	EXPECT_EQ(tx->crc, rx->crc) TH_LOG("%s", what);
	EXPECT_LE(rx->total, rx->octets) TH_LOG("%s", what);
	EXPECT_TRUE(rx->eof) TH_LOG("%s", what);

	t_get_stats(_metadata, rx->fd, &st);
	EXPECT_EQ(rx->ulpdus, st.rx_fpdus) TH_LOG("%s", what);
	EXPECT_EQ(rx->octets, st.rx_octets) TH_LOG("%s", what);
	EXPECT_EQ(0, st.crc_errors) TH_LOG("%s", what);
	EXPECT_EQ(0, st.marker_errors) TH_LOG("%s", what);
	if (markers) {
		EXPECT_LT(rx->octets / 512, st.rx_markers) TH_LOG("%s", what);
	} else {
		EXPECT_EQ(0, st.rx_markers) TH_LOG("%s", what);
	}
}

/* A sender thread: @n ULPDUs of @sizes, ULPDU k filled by t_fill(seed + k). */
struct t_tx {
	pthread_t thr;
	int fd;
	const size_t *sizes;
	size_t n;
	uint64_t seed;
	int flags;
	size_t sent;		/* ULPDUs sent */
	ssize_t rc;		/* the first failing send's result */
	int err;		/* and its errno */
};

static inline void *t_tx_run(void *arg)
{
	struct t_tx *p = arg;
	uint8_t *buf = malloc(T_ULPDU_BUF);
	ssize_t r;
	size_t k;

	p->rc = 0;
	for (k = 0; buf && k < p->n; k++) {
		t_fill(buf, p->sizes[k], p->seed + k);
		r = send(p->fd, buf, p->sizes[k], MSG_NOSIGNAL | p->flags);
		if (r != (ssize_t)p->sizes[k]) {
			p->rc = r;
			p->err = errno;
			break;
		}
		p->sent++;
	}
	free(buf);
	return NULL;
}

static inline int t_tx_start(struct t_tx *p, int fd, const size_t *sizes,
			     size_t n, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->sizes = sizes;
	p->n = n;
	p->seed = seed;
	return pthread_create(&p->thr, NULL, t_tx_run, p);
}

/*
 * Receive @n ULPDUs of @sizes from @fd, ULPDU k filled by t_fill(seed + k):
 * each recv() with room for more returns exactly one whole ULPDU with
 * MSG_EOR. Stops at the first difference.
 */
static inline void t_rx_check(struct __test_metadata *_metadata, int fd,
			      const size_t *sizes, size_t n, uint64_t seed)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(T_ULPDU_BUF);
	size_t k;
	ssize_t r;
	int fl;

	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, exp);
	for (k = 0; k < n; k++) {
		r = t_recv_flags(fd, got, T_ULPDU_BUF, 0, &fl);
		if (r != (ssize_t)sizes[k]) {
			EXPECT_EQ((ssize_t)sizes[k], r)
				TH_LOG("ULPDU %zu of %zu: errno %d (%s)", k, n,
				       r < 0 ? errno : 0,
				       r < 0 ? strerror(errno) : "-");
			break;
		}
		EXPECT_EQ(MSG_EOR, fl & (MSG_EOR | MSG_TRUNC))
			TH_LOG("ULPDU %zu of %zu (%zu octets)", k, n, sizes[k]);
		t_fill(exp, sizes[k], seed + k);
		if (memcmp(exp, got, sizes[k])) {
			TH_LOG("ULPDU %zu of %zu (%zu octets) differs", k, n,
			       sizes[k]);
			EXPECT_BYTES(exp, got, sizes[k]);
			break;
		}
	}
	free(got);
	free(exp);
}

/*
 * Sizes whose FPDUs, at stream position *pos, hit the Markers in ways a
 * receiver must get right. Each kind asks for the smallest ULPDU of at
 * least @min whose FPDU:
 */
enum {
	B_END,		/* ends where a Marker goes: the next starts with one */
	B_BEFORE_CRC,	/* has a Marker between PAD and CRC */
	B_AFTER_HDR,	/* has a Marker behind ULPDU_Length and 2 octets */
	B_LAST4,	/* has a Marker before the ULPDU's last 1-3 octets */
	B_END_508,	/* ends 4 octets before a Marker: the next FPDU of 3
			 * octets or more is B_AFTER_HDR
			 */
};
/* (A Marker never falls inside PAD or right before it: see above.) */

static inline bool t_b_match(uint32_t pos, bool markers, size_t len,
			     int kind)
{
	struct t_fpdu_info in;
	size_t lead, k;

	t_fpdu_encode(NULL, pos, markers, NULL, len, &in);
	lead = in.lead ? 4 : 0;
	switch (kind) {
	case B_END:
		return (pos + in.wire) % T_MARKER_IVL == 0;
	case B_END_508:
		return (pos + in.wire) % T_MARKER_IVL == T_MARKER_IVL - 4;
	case B_BEFORE_CRC:
		return in.before_crc;
	}
	for (k = in.lead; k < in.markers; k++) {
		/* The framed octet the Marker sits in front of. */
		size_t at = in.marker_off[k] - lead - 4 * (k - in.lead);

		if (kind == B_AFTER_HDR && at == 4 && at < 2 + len)
			return true;
		if (kind == B_LAST4 && at < 2 + len && 2 + len - at < 4 &&
		    at > 2)
			return true;
	}
	return false;
}

static inline size_t t_b_size(uint32_t pos, bool markers, int kind,
			      size_t min)
{
	size_t len;

	for (len = min; len < min + 2 * T_MARKER_IVL + 8; len++)
		if (len <= MPA_MAX_ULPDU && t_b_match(pos, markers, len, kind))
			return len;
	return 0;
}

/*
 * A run of ULPDU sizes for a direction at *pos (advanced past them): FPDUs
 * that end at a Marker, Markers in every place an FPDU can hold one, runs
 * of tiny FPDUs across Markers, the largest ULPDU. Without Markers only
 * the stream positions are special. The count.
 */
static inline size_t t_boundary_plan(struct __test_metadata *_metadata,
				     uint32_t *pos, bool markers,
				     size_t *sizes, size_t max)
{
	static const int kinds[] = {
		B_END, B_BEFORE_CRC, B_END, B_END_508, B_AFTER_HDR, B_END,
		B_LAST4, B_BEFORE_CRC, B_END_508, B_AFTER_HDR, B_LAST4, B_END,
		B_END,
	};
	static const size_t mins[] = { 1, 600, 1000, 1, 3000, 1 };
	size_t n = 0, k, m, len;

	for (m = 0; m < sizeof(mins) / sizeof(mins[0]); m++) {
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			if (!markers && kinds[k] != B_END &&
			    kinds[k] != B_END_508)
				continue;
			len = t_b_size(*pos, markers, kinds[k], mins[m]);
			EXPECT_NE(0, len)
				TH_LOG("kind %d at %u", kinds[k], *pos);
			if (!len || n >= max)
				continue;
			sizes[n++] = len;
			*pos += t_fpdu_wire(*pos, markers, len);
		}
		/* Tiny FPDUs across the next Markers, then the largest. */
		for (k = 0; k < 300 && n < max; k++) {
			sizes[n++] = 1 + (k * 7 + m) % 13;
			*pos += t_fpdu_wire(*pos, markers, sizes[n - 1]);
		}
		if (n < max) {
			sizes[n++] = m % 2 ? MPA_MAX_ULPDU :
					     MPA_MAX_ULPDU - 1 - m;
			*pos += t_fpdu_wire(*pos, markers, sizes[n - 1]);
		}
	}
	return n;
}

#include <sched.h>

/*
 * A flooding peer thread, pinned to CPU @cpu: writes @data from @start,
 * on from @loop at the end (@loop == @len: it stops there), in send()s
 * of 1 to @chunk_max octets, until told to stop or a send fails.
 */
struct t_flood {
	pthread_t thr;
	int fd;
	int cpu;
	const uint8_t *data;
	size_t len;
	size_t start;		/* where to start */
	size_t loop;		/* where to go on from at the end (@len: stop) */
	size_t chunk_max;	/* octets per send(): 1..chunk_max */
	uint64_t seed;
	size_t sent;		/* so far: t_flood_sent() */
	bool stop;
};

static inline void t_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	/* a guest with one CPU runs everything on it */
	sched_setaffinity(0, sizeof(set), &set);
}

static inline void *t_flood_run(void *arg)
{
	struct t_flood *f = arg;
	size_t off = f->start, n;
	ssize_t r;

	t_pin(f->cpu);
	while (!__atomic_load_n(&f->stop, __ATOMIC_RELAXED)) {
		if (off == f->len)
			off = f->loop;
		if (off == f->len)
			break;		/* nothing more to send */
		n = 1 + t_rand64(&f->seed) % f->chunk_max;
		if (n > f->len - off)
			n = f->len - off;
		r = send(f->fd, f->data + off, n, MSG_NOSIGNAL);
		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			break;	/* reset or closed: the round is over */
		}
		off += r;
		__atomic_add_fetch(&f->sent, r, __ATOMIC_RELEASE);
	}
	return NULL;
}

static inline size_t t_flood_sent(struct t_flood *f)
{
	return __atomic_load_n(&f->sent, __ATOMIC_ACQUIRE);
}

#include <stdarg.h>
#include <sys/wait.h>

/*
 * Run the shell command @fmt: its exit status, or -1 when it did not run
 * or did not exit. t_vsh() leaves the command in @cmd, for the log.
 */
static inline int t_vsh(char *cmd, size_t size, const char *fmt, va_list ap)
{
	int st;

	vsnprintf(cmd, size, fmt, ap);
	st = system(cmd);
	return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static inline __printf(1, 2) int t_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = t_vsh(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return st;
}

/* mpa's reference count, or -1 when it is not loaded. */
static inline long t_mpa_refcnt(void)
{
	FILE *f = fopen("/sys/module/mpa/refcnt", "r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

#endif /* _MPA_TEST_H */
