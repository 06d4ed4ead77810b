// SPDX-License-Identifier: GPL-2.0
/*
 * MPA on networks that misbehave: network namespaces joined by veth pairs,
 * with tc on the path (run as root; needs ip and tc from iproute2, netem,
 * u32, pedit and csum).
 *
 *   impaired  netem on both sides of the path (delay 20 ms +- 5 ms, 2 %
 *             loss, 5 % reordering, 1 % duplication, 20 Mbit/s): four
 *             connections at once, Markers x CRC, random ULPDUs of
 *             1..64768 octets both ways at once, every ULPDU checked end
 *             to end (count, lengths, content, a CRC32c of all), no MPA
 *             error, both ends close cleanly; netem dropped packets both
 *             ways and every end retransmitted (the path was impaired)
 *   corrupt   a tc filter rewrites a payload octet of a chosen segment and
 *             recomputes the TCP checksum (act_pedit + act_csum, a faulty
 *             NIC or middlebox): TCP delivers the corrupted octets. With
 *             CRC every corruption is caught (code 2, EBADMSG) and nothing
 *             corrupted reaches the reader; with C=0 corrupted ULPDUs are
 *             delivered (the contrast)
 *   window    a bad FPDU found with the receive window closed: the peer's
 *             data keeps flowing without another recv()
 *   pmtu      the path MTU falls and rises while a transfer runs (PMTU
 *             discovery through a router namespace): MULPDU follows the
 *             EMSS (R-4.5-7), an FPDU sized for the current MULPDU stays in
 *             one segment (a packet socket watches the receiver's side),
 *             nothing is lost; an EMSS below 128 + overhead keeps MULPDU at
 *             128 (R-4.5-8)
 *   unreach   a router answers with ICMP "host unreachable" for a while:
 *             with IP_RECVERR a soft error, which MPA's own pushes neither
 *             stop at nor clear; what MPA holds goes once the route is
 *             back, also behind a shutdown(SHUT_WR); recv() reports the
 *             error once and the stream goes on; a startup goes on
 *   kmulpdu   mpa_kmulpdu() of a kernel consumer (samples/mpa/mpa_echo.ko)
 *             follows its connection's MTU the same way
 *
 * Each test builds its namespaces (ip netns add mpaf-*) and removes them.
 * The figures (octets, ULPDUs, time, retransmissions, corruptions caught)
 * go to the log.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define F_PORT		17400
#define F_ECHO_PORT	17176
#define F_WAIT		60000	/* a send or receive that makes no progress */
#define F_ECHO_DIR	"/sys/kernel/debug/mpa_echo/"

/* The network namespace the program started in. */
static int f_home = -1;

static void __attribute__((constructor)) f_init(void)
{
	f_home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
}

/* Run a shell command: 0 if it exited 0, else -1 (logged). */
static int __printf(1, 2) f_sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;
	int st;

	va_start(ap, fmt);
	st = t_vsh(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (st) {
		fprintf(stderr, "# faults: \"%s\" failed (exit status %d)\n",
			cmd, st);
		return -1;
	}
	return 0;
}

/* A network namespace of a test: /run/netns/mpaf-TAG-PID. */
struct f_ns {
	char name[40];
	int fd;
};

static int f_ns_add(struct f_ns *ns, const char *tag)
{
	char path[80];

	snprintf(ns->name, sizeof(ns->name), "mpaf-%s-%d", tag, getpid());
	ns->fd = -1;
	if (f_sh("ip netns add %s", ns->name))
		return -1;
	snprintf(path, sizeof(path), "/run/netns/%s", ns->name);
	ns->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (ns->fd < 0 || f_sh("ip -n %s link set lo up", ns->name))
		return -1;
	return 0;
}

static void f_ns_del(struct f_ns *ns)
{
	if (!ns->name[0])
		return;
	if (ns->fd >= 0)
		close(ns->fd);
	f_sh("ip netns del %s", ns->name);
	ns->name[0] = 0;
}

/* Move this thread into @ns (NULL: back where the program started). */
static int f_enter(const struct f_ns *ns)
{
	return setns(ns ? ns->fd : f_home, CLONE_NEWNET);
}

/* "-n NAME" for ip and tc, or nothing for the namespace we started in. */
static const char *f_n(const struct f_ns *ns)
{
	static char buf[4][48];
	static int i;

	if (!ns)
		return "";
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "-n %s", ns->name);
	return buf[i];
}

/* Write @val to /proc/sys/@path in @ns: 0 or -1 (logged). */
static int f_sysctl(const struct f_ns *ns, const char *path, const char *val)
{
	char p[160];
	int fd, ret = -1;

	if (f_enter(ns))
		return -1;
	snprintf(p, sizeof(p), "/proc/sys/%s", path);
	fd = open(p, O_WRONLY);
	if (fd >= 0) {
		ret = write(fd, val, strlen(val)) == (ssize_t)strlen(val) ? 0 : -1;
		close(fd);
	}
	f_enter(NULL);
	if (ret)
		fprintf(stderr, "# faults: %s = %s in %s failed: %s\n", p, val,
			ns ? ns->name : "our namespace", strerror(errno));
	return ret;
}

/*
 * A veth pair: @a_if (address @a_addr) in @a, @b_if (@b_addr) in @b (NULL:
 * the namespace we started in), both up. 0 or -1.
 */
static int f_veth(const struct f_ns *a, const char *a_if, const char *a_addr,
		  const struct f_ns *b, const char *b_if, const char *b_addr)
{
	char an[64] = "", bn[64] = "";

	if (a)
		snprintf(an, sizeof(an), "netns %s", a->name);
	if (b)
		snprintf(bn, sizeof(bn), "netns %s", b->name);
	if (f_sh("ip link add %s %s type veth peer name %s %s", a_if, an,
		 b_if, bn) ||
	    f_sh("ip %s addr add %s dev %s", f_n(a), a_addr, a_if) ||
	    f_sh("ip %s addr add %s dev %s", f_n(b), b_addr, b_if) ||
	    f_sh("ip %s link set %s up", f_n(a), a_if) ||
	    f_sh("ip %s link set %s up", f_n(b), b_if))
		return -1;
	return 0;
}

/* The MPA policy item @attr set to @val in @ns: 0 or -errno. */
static int f_policy1(const struct f_ns *ns, int attr, __u32 val)
{
	int ret;

	if (f_enter(ns))
		return -errno;
	ret = mpa_policy_set1(attr, val);
	f_enter(NULL);
	return ret;
}

/* A TCP socket of @family in @ns, or -1. */
static int f_socket(const struct f_ns *ns, int family)
{
	int fd, err;

	if (f_enter(ns))
		return -1;
	fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	err = errno;
	f_enter(NULL);
	errno = err;
	return fd;
}

/* @addr:@port, IPv6 when @addr has a colon: its length, or 0. */
static socklen_t f_addr(struct sockaddr_storage *ss, const char *addr,
			int port)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;

	memset(ss, 0, sizeof(*ss));
	if (strchr(addr, ':')) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		return inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1 ?
		       sizeof(*sin6) : 0;
	}
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, addr, &sin->sin_addr) == 1 ? sizeof(*sin) : 0;
}

/*
 * A listening socket on port @port of every address of @ns of @family,
 * or -1.
 */
static int f_listen_family(const struct f_ns *ns, int family, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	len = f_addr(&ss, family == AF_INET6 ? "::" : "0.0.0.0", port);
	fd = f_socket(ns, family);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int f_listen(const struct f_ns *ns, int port)
{
	return f_listen_family(ns, AF_INET, port);
}

/*
 * A TCP connection from @ns to @addr:@port (whose listener is @lfd, or -1
 * for one that is not ours): *c our end, *a the accepted end. 0 or -1.
 */
static int f_connect(const struct f_ns *ns, const char *addr, int port,
		     int lfd, int *c, int *a)
{
	struct sockaddr_storage ss;
	socklen_t len = f_addr(&ss, addr, port);

	*a = -1;
	*c = len ? f_socket(ns, ss.ss_family) : -1;
	if (*c < 0)
		return -1;
	if (connect(*c, (struct sockaddr *)&ss, len))
		goto fail;
	if (lfd < 0)
		return 0;
	if (!(t_poll(lfd, POLLIN, 20000) & POLLIN))
		goto fail;
	*a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (*a >= 0)
		return 0;
fail:
	fprintf(stderr, "# faults: connecting to %s:%d: %s\n", addr, port,
		strerror(errno));
	close(*c);
	*c = -1;
	return -1;
}

static int f_timeouts(int fd, int ms)
{
	return t_set_timeo(fd, SO_SNDTIMEO, ms) ||
	       t_set_timeo(fd, SO_RCVTIMEO, ms);
}

static int f_tcp_info(int fd, struct t_tcp_info *ti)
{
	socklen_t len = sizeof(*ti);

	memset(ti, 0, sizeof(*ti));
	return getsockopt(fd, SOL_TCP, TCP_INFO, ti, &len) ||
	       len < sizeof(*ti) ? -1 : 0;
}

/* The current MULPDU of an MPA socket (MPA_RESULT), or 0. */
static uint32_t f_mulpdu(int fd)
{
	struct mpa_result res;

	if (mpa_getstruct(fd, MPA_RESULT, &res, sizeof(res)))
		return 0;
	return res.mulpdu;
}

/*
 * What the startup negotiated on @fd is Markers both ways or none, and CRC
 * or not: 0, or -1 (logged).
 */
static int f_flags_are(int fd, bool markers, bool crc)
{
	uint8_t want = (markers ? MPA_RESULT_TX_MARKERS |
				  MPA_RESULT_RX_MARKERS : 0) |
		       (crc ? MPA_RESULT_CRC : 0);
	uint8_t mask = MPA_RESULT_TX_MARKERS | MPA_RESULT_RX_MARKERS |
		       MPA_RESULT_CRC;
	struct mpa_result res;

	if (mpa_getstruct(fd, MPA_RESULT, &res, sizeof(res)))
		return -1;
	if ((res.flags & mask) == want)
		return 0;
	fprintf(stderr, "# faults: MPA_RESULT flags 0x%x, want 0x%x of 0x%x\n",
		res.flags, want, mask);
	return -1;
}

/*
 * impaired: two namespaces, a veth pair with netem on both ends. Four
 * connections at once, one per combination of Markers and CRC; on each,
 * both ends send at once and check everything they receive. (TCP's loss
 * recovery sets the pace, not the CPU: they share the path, not its rate.)
 */
#define IMP_TOTAL	(3ull << 20)	/* octets each way, each connection */
#define IMP_NETEM	"delay 20ms 5ms loss 2% reorder 5% duplicate 1% rate 20mbit"
#define IMP_CONNS	4

struct imp_conn {
	bool markers, crc;
	int i, r;
	struct t_stream ti, tr;		/* the senders */
	struct t_stream ri, rr;		/* and the receivers */
	long t0;
};

FIXTURE(impaired)
{
	struct f_ns a, b;
	int lfd;
	struct imp_conn c[IMP_CONNS];
};

FIXTURE_SETUP(impaired)
{
	int k;

	signal(SIGPIPE, SIG_IGN);
	self->lfd = -1;
	for (k = 0; k < IMP_CONNS; k++)
		self->c[k].i = self->c[k].r = -1;
	ASSERT_EQ(0, f_ns_add(&self->a, "a"));
	ASSERT_EQ(0, f_ns_add(&self->b, "b"));
	ASSERT_EQ(0, f_veth(&self->a, "va", "10.77.0.1/24", &self->b, "vb",
			    "10.77.0.2/24"));
	/* one segment per packet, so that netem loses segments, not bursts */
	ASSERT_EQ(0, f_sh("ip %s link set va gso_max_segs 1", f_n(&self->a)));
	ASSERT_EQ(0, f_sh("ip %s link set vb gso_max_segs 1", f_n(&self->b)));
	ASSERT_EQ(0, f_sh("tc %s qdisc add dev va root netem %s",
			  f_n(&self->a), IMP_NETEM));
	ASSERT_EQ(0, f_sh("tc %s qdisc add dev vb root netem %s",
			  f_n(&self->b), IMP_NETEM));
	/* (the connections with CRC ask for it whatever the policy) */
	ASSERT_EQ(0, f_policy1(&self->a, MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, f_policy1(&self->b, MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	self->lfd = f_listen(&self->b, F_PORT);
	ASSERT_LE(0, self->lfd);
}

FIXTURE_TEARDOWN(impaired)
{
	int k;

	for (k = 0; k < IMP_CONNS; k++) {
		if (self->c[k].i >= 0)
			close(self->c[k].i);
		if (self->c[k].r >= 0)
			close(self->c[k].r);
	}
	if (self->lfd >= 0)
		close(self->lfd);
	f_ns_del(&self->a);
	f_ns_del(&self->b);
}

/* The receiving end of @t's stream, after the transfer. */
static void imp_check(struct __test_metadata *_metadata, const char *what,
		      struct t_stream *t, struct t_stream *b, bool markers)
{
	struct mpa_error_info ei;

	t_stream_check(_metadata, what, t, b, markers);
	/* The peer's FIN at an FPDU boundary is the only "error" (code 1). */
	ASSERT_EQ(0, mpa_getstruct(b->fd, MPA_ERROR, &ei, sizeof(ei)));
	EXPECT_TRUE(ei.code == MPA_ERR_NONE ||
		    (ei.code == MPA_ERR_TCP_CLOSED &&
		     ei.reason == MPA_REASON_PEER_CLOSED))
		TH_LOG("%s: MPA_ERROR code %u reason %u", what, ei.code,
		       ei.reason);
	EXPECT_EQ(0, ei.errnum) TH_LOG("%s", what);
}

/* The packets the netem qdisc on @dev of @ns dropped (tc -s), or -1. */
static long long imp_netem_dropped(const struct f_ns *ns, const char *dev)
{
	unsigned long long dropped;
	char cmd[128], line[512];
	long long n = -1;
	bool netem = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "tc %s -s qdisc show dev %s", f_n(ns),
		 dev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "qdisc ", 6))
			netem = !strncmp(line, "qdisc netem ", 12);
		else if (netem && n < 0 &&
			 sscanf(line, " Sent %*u bytes %*u pkt (dropped %llu",
				&dropped) == 1)
			n = dropped;
	}
	if (pclose(f))
		return -1;
	return n;
}

/* Wait until TCP is done with @fd (both FINs acknowledged): 0 or -1. */
static int imp_wait_closed(int fd, int ms)
{
	long end = t_now_ms() + ms;
	struct t_tcp_info ti;

	for (;;) {
		if (f_tcp_info(fd, &ti))
			return -1;
		if (ti.base.tcpi_state == TCP_CLOSE)
			return 0;
		if (t_now_ms() > end)
			return -1;
		/* no event tells: look again shortly */
		poll(NULL, 0, 10);
	}
}

TEST_F_TIMEOUT(impaired, markers_x_crc_both_ways, 300)
{
	struct t_tcp_info tii, tir;
	long long drop_a, drop_b;
	struct imp_conn *c;
	char what[64];
	long ms;
	int k;

	for (k = 0; k < IMP_CONNS; k++) {
		c = &self->c[k];
		c->markers = k & 1;
		c->crc = !(k & 2);
		ASSERT_EQ(0, f_connect(&self->a, "10.77.0.2", F_PORT,
				       self->lfd, &c->i, &c->r));
		ASSERT_EQ(0, t_mpa_establish(c->i, c->r, c->markers,
					     c->markers, c->crc));
		ASSERT_EQ(0, f_flags_are(c->i, c->markers, c->crc));
		ASSERT_EQ(0, f_flags_are(c->r, c->markers, c->crc));
		ASSERT_EQ(0, f_timeouts(c->i, F_WAIT));
		ASSERT_EQ(0, f_timeouts(c->r, F_WAIT));
		c->ti = (struct t_stream){ .fd = c->i, .seed = 0x1a770 + k,
					   .total = IMP_TOTAL };
		c->tr = (struct t_stream){ .fd = c->r, .seed = 0x2b880 + k,
					   .total = IMP_TOTAL };
		c->rr = (struct t_stream){ .fd = c->r, .seed = c->ti.seed,
					   .total = IMP_TOTAL };
		c->ri = (struct t_stream){ .fd = c->i, .seed = c->tr.seed,
					   .total = IMP_TOTAL };
	}
	for (k = 0; k < IMP_CONNS; k++) {
		c = &self->c[k];
		c->t0 = t_now_ms();
		ASSERT_EQ(0, pthread_create(&c->rr.thr, NULL, t_stream_rx,
					    &c->rr));
		ASSERT_EQ(0, pthread_create(&c->ri.thr, NULL, t_stream_rx,
					    &c->ri));
		ASSERT_EQ(0, pthread_create(&c->tr.thr, NULL, t_stream_tx,
					    &c->tr));
		ASSERT_EQ(0, pthread_create(&c->ti.thr, NULL, t_stream_tx,
					    &c->ti));
	}
	for (k = 0; k < IMP_CONNS; k++) {
		c = &self->c[k];
		pthread_join(c->ti.thr, NULL);
		pthread_join(c->tr.thr, NULL);
		pthread_join(c->ri.thr, NULL);
		pthread_join(c->rr.thr, NULL);
	}
	for (k = 0; k < IMP_CONNS; k++) {
		c = &self->c[k];
		snprintf(what, sizeof(what), "M=%d CRC=%d, Initiator to Responder",
			 c->markers, c->crc);
		imp_check(_metadata, what, &c->ti, &c->rr, c->markers);
		snprintf(what, sizeof(what), "M=%d CRC=%d, Responder to Initiator",
			 c->markers, c->crc);
		imp_check(_metadata, what, &c->tr, &c->ri, c->markers);
		/*
		 * Both FINs went out and were acknowledged, no error: a
		 * clean close. (Resets are no sign: one for a duplicate
		 * netem delivers after LAST_ACK is TCP doing its job.)
		 */
		EXPECT_EQ(0, imp_wait_closed(c->i, 30000));
		EXPECT_EQ(0, imp_wait_closed(c->r, 30000));
		EXPECT_EQ(0, t_so_error(c->i));
		EXPECT_EQ(0, t_so_error(c->r));
		ASSERT_EQ(0, f_tcp_info(c->i, &tii));
		ASSERT_EQ(0, f_tcp_info(c->r, &tir));
		ms = (c->rr.done_ms > c->ri.done_ms ? c->rr.done_ms :
						      c->ri.done_ms) - c->t0;
		ksft_print_msg("impaired M=%d CRC=%d: %llu + %llu octets in %llu + %llu ULPDUs both ways at once, %ld.%03ld s; segments retransmitted %u + %u of %u + %u\n",
			       c->markers, c->crc,
			       (unsigned long long)c->rr.octets,
			       (unsigned long long)c->ri.octets,
			       (unsigned long long)c->rr.ulpdus,
			       (unsigned long long)c->ri.ulpdus, ms / 1000,
			       ms % 1000, tii.base.tcpi_total_retrans,
			       tir.base.tcpi_total_retrans, tii.segs_out,
			       tir.segs_out);
		/*
		 * Over 3000 segments each way through 2 % loss: TCP's loss
		 * recovery ran at both ends. (TCP retransmits now and then
		 * on a clean path too: netem's drops below are the proof.)
		 */
		EXPECT_LT(0, tii.base.tcpi_total_retrans)
			TH_LOG("M=%d CRC=%d: the Initiator retransmitted nothing",
			       c->markers, c->crc);
		EXPECT_LT(0, tir.base.tcpi_total_retrans)
			TH_LOG("M=%d CRC=%d: the Responder retransmitted nothing",
			       c->markers, c->crc);
	}
	/* netem dropped packets both ways, or it impaired nothing */
	drop_a = imp_netem_dropped(&self->a, "va");
	drop_b = imp_netem_dropped(&self->b, "vb");
	ksft_print_msg("impaired: netem dropped %lld + %lld packets\n", drop_a,
		       drop_b);
	EXPECT_LT(0, drop_a)
		TH_LOG("netem on va (Initiators to Responders) dropped nothing");
	EXPECT_LT(0, drop_b)
		TH_LOG("netem on vb (Responders to Initiators) dropped nothing");
}

/*
 * corrupt: the Initiator's veth end has a tc filter per kind of damage and
 * Markers. Filter j matches a TCP segment (32-octet header: timestamps)
 * whose payload starts with ULPDU_Length COR_LEN and the octets COR_MAGIC
 * + j, i.e. one that starts the FPDU of the ULPDU the test marked for it,
 * changes payload octet cor_kinds[j / 2].off and recomputes the TCP
 * checksum. Every other ULPDU has another length, so no other segment
 * matches (an FPDU that does not start a segment is one larger than
 * MULPDU, whose later segments match only by a chance of 2^-32).
 * Retransmissions of the segment are corrupted alike, so TCP delivers the
 * corruption whatever copy arrives. The filter's counters say whether it
 * struck.
 *
 * Rounds run in batches of COR_SLOTS connections at once, one per filter:
 * each kind of damage, without and with Markers.
 */
#define COR_LEN		1001
#define COR_MAGIC	0xc0d0
#define COR_ROUNDS	126	/* 7 batches */

/*
 * Payload offsets of one FPDU of COR_LEN octets (Markers shift them) and
 * what is done there: the octet inverted, or set to 0xff (which makes
 * ULPDU_Length 0xffe9, above 64768; inverted it is 0xfce9, below).
 */
static const struct {
	uint16_t off;
	const char *cmd;
	const char *what;
} cor_kinds[] = {
	{ 0, "set 0xff", "ULPDU_Length above 64768" },
	{ 0, "invert", "ULPDU_Length, high octet" },
	{ 1, "invert", "ULPDU_Length, low octet" },
	{ 4, "invert", "ULPDU, third octet" },
	{ 502, "invert", "ULPDU, middle" },
	{ 1002, "invert", "ULPDU, last octet" },
	{ 1003, "invert", "PAD" },
	{ 1004, "invert", "CRC, first octet" },
	{ 1007, "invert", "CRC, last octet" },
};

#define COR_KINDS	ARRAY_SIZE(cor_kinds)
#define COR_SLOTS	(2 * COR_KINDS)

/* A round's ULPDUs; ULPDU i is t_fill(seed + i), the marked one tagged. */
struct cor_plan {
	size_t sizes[64];
	size_t n, k;
	uint64_t seed;
	uint16_t tag;
};

/* What one round (a connection of its own) saw. */
struct cor_round {
	bool markers;
	int kind;
	struct cor_plan plan;
	int i, r;
	pthread_t tx_thr, rx_thr;
	int tx_err;
	uint64_t hits;		/* the filter struck this many segments */
	size_t good;		/* leading ULPDUs delivered intact */
	size_t bad;		/* ULPDUs delivered that differ */
	int err;		/* recv's errno at the end, 0: EOF */
	size_t err_at;		/* ULPDUs delivered before it */
	struct mpa_error_info ei;
	uint64_t crc_errors;
};

FIXTURE(corrupt)
{
	struct f_ns a, b;
	int lfd;
	uint64_t hits[COR_SLOTS];
	struct cor_round rd[COR_SLOTS];
};

FIXTURE_VARIANT(corrupt)
{
	bool crc;
};

FIXTURE_VARIANT_ADD(corrupt, crc) { .crc = true, };
FIXTURE_VARIANT_ADD(corrupt, no_crc) { .crc = false, };

/* The filters' hit counts (pedit's packets), from tc -s: 0 or -1. */
static int cor_hits(struct f_ns *a, uint64_t *hits)
{
	unsigned long long bytes, pkts, over;
	char cmd[128], line[512];
	int pref = -1, n = 0;
	bool pedit = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "tc %s -s filter show dev va egress",
		 f_n(a));
	f = popen(cmd, "r");
	if (!f)
		return -1;
	memset(hits, 0, COR_SLOTS * sizeof(*hits));
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " pref ");

		if (!strncmp(line, "filter ", 7) && p) {
			pref = atoi(p + 6) - 10;
			pedit = false;
		} else if (strstr(line, " pedit ")) {
			pedit = true;
		} else if (pedit && sscanf(line,
			   " Sent %llu bytes %llu pkt (dropped %*u, overlimits %llu",
			   &bytes, &pkts, &over) == 3) {
			if (pref >= 0 && pref < (int)COR_SLOTS) {
				hits[pref] = pkts - over;
				n++;
			}
			pedit = false;
		}
	}
	if (pclose(f))
		return -1;
	return n == COR_SLOTS ? 0 : -1;
}

FIXTURE_SETUP(corrupt)
{
	char cmd[64];
	size_t j;
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	self->lfd = -1;
	ASSERT_EQ(0, f_ns_add(&self->a, "a"));
	ASSERT_EQ(0, f_ns_add(&self->b, "b"));
	ASSERT_EQ(0, f_veth(&self->a, "va", "10.77.0.1/24", &self->b, "vb",
			    "10.77.0.2/24"));
	ASSERT_EQ(0, f_sh("ip %s link set va gso_max_segs 1", f_n(&self->a)));
	ASSERT_EQ(0, f_sh("tc %s qdisc add dev va clsact", f_n(&self->a)));
	/* All filters with one tc: each command costs in a slow guest. */
	snprintf(cmd, sizeof(cmd), "tc %s -batch -", f_n(&self->a));
	f = popen(cmd, "w");
	ASSERT_NE(NULL, f);
	for (j = 0; j < COR_SLOTS; j++)
		fprintf(f, "filter add dev va egress pref %zu protocol ip u32 match ip protocol 6 0xff match u8 0x80 0xf0 at 32 match u32 0x%04x%04x 0xffffffff at 52 action pedit munge offset %u u8 %s pipe action csum tcp\n",
			10 + j, COR_LEN, (unsigned int)(COR_MAGIC + j),
			52 + cor_kinds[j / 2].off, cor_kinds[j / 2].cmd);
	ASSERT_EQ(0, pclose(f));
	ASSERT_EQ(0, cor_hits(&self->a, self->hits));
	if (!variant->crc) {
		ASSERT_EQ(0, f_policy1(&self->a, MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
		ASSERT_EQ(0, f_policy1(&self->b, MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	}
	self->lfd = f_listen(&self->b, F_PORT);
	ASSERT_LE(0, self->lfd);
}

FIXTURE_TEARDOWN(corrupt)
{
	size_t j;

	for (j = 0; j < COR_SLOTS; j++) {
		if (self->rd[j].i > 0)
			close(self->rd[j].i);
		if (self->rd[j].r > 0)
			close(self->rd[j].r);
	}
	if (self->lfd >= 0)
		close(self->lfd);
	f_ns_del(&self->a);
	f_ns_del(&self->b);
}

static void cor_ulpdu(const struct cor_plan *p, size_t i, uint8_t *buf)
{
	t_fill(buf, p->sizes[i], p->seed + i);
	if (i == p->k)
		t_put_be16(buf, p->tag);
}

/*
 * Leading ULPDUs of 1..3000 octets, the marked one (never where a Marker
 * starts its FPDU: its payload would not start with ULPDU_Length), then
 * more than 64 KiB: whatever the damage, the receiver holds all the
 * octets a corrupted ULPDU_Length could claim before the FIN comes.
 */
static void cor_plan(struct cor_plan *p, uint64_t seed, bool markers,
		     int slot)
{
	uint64_t s = seed;
	uint32_t pos = 0;
	size_t i, lead = t_rand64(&s) % 17;

	memset(p, 0, sizeof(*p));
	p->seed = seed << 8;
	p->tag = COR_MAGIC + slot;
	for (i = 0; i < lead || (markers && pos % T_MARKER_IVL == 0); i++) {
		do {
			p->sizes[i] = 1 + t_rand64(&s) % 3000;
		} while (p->sizes[i] == COR_LEN);
		pos += t_fpdu_wire(pos, markers, p->sizes[i]);
	}
	p->k = i;
	p->sizes[i++] = COR_LEN;
	p->sizes[i++] = 30000 + t_rand64(&s) % 30000;
	p->sizes[i++] = 30000 + t_rand64(&s) % 30000;
	p->sizes[i++] = 1 + t_rand64(&s) % 3000;
	p->n = i;
}

static void *cor_tx_run(void *arg)
{
	uint8_t *buf = malloc(MPA_MAX_ULPDU);
	struct cor_round *rd = arg;
	const struct cor_plan *p = &rd->plan;
	size_t i;
	ssize_t r;

	for (i = 0; buf && i < p->n; i++) {
		cor_ulpdu(p, i, buf);
		/*
		 * The filter looks for the marked FPDU at the start of a
		 * segment. MPA packs FPDUs into a segment when the sender is
		 * ahead of the wire: send the marked one on an idle
		 * connection, where it goes out at once in a segment of its
		 * own making.
		 */
		if (i == p->k && t_wait_acked(rd->i, F_WAIT)) {
			rd->tx_err = ETIMEDOUT;
			break;
		}
		r = send(rd->i, buf, p->sizes[i], MSG_NOSIGNAL);
		if (r != (ssize_t)p->sizes[i]) {
			rd->tx_err = r < 0 ? errno : EMSGSIZE;
			break;
		}
	}
	if (!buf)
		rd->tx_err = ENOMEM;
	if (shutdown(rd->i, SHUT_WR) && !rd->tx_err)
		rd->tx_err = errno;
	free(buf);
	return NULL;
}

/* Receive and compare everything up to an error or EOF. */
static void *cor_rx_run(void *arg)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(T_ULPDU_BUF);
	struct cor_round *rd = arg;
	const struct cor_plan *p = &rd->plan;
	size_t d = 0;
	ssize_t n;
	int fl;

	while (got && exp) {
		n = t_recv_flags(rd->r, got, T_ULPDU_BUF, 0, &fl);
		if (n <= 0) {
			rd->err = n < 0 ? errno : 0;
			rd->err_at = d;
			break;
		}
		if (d < p->n && (size_t)n == p->sizes[d] && (fl & MSG_EOR)) {
			cor_ulpdu(p, d, exp);
			if (!memcmp(exp, got, n)) {
				rd->good += !rd->bad;
				d++;
				continue;
			}
		}
		rd->bad++;
		d++;
	}
	if (!got || !exp)
		rd->err = ENOMEM;
	free(got);
	free(exp);
	return NULL;
}

/* One batch: a connection per filter, all at once. */
static void cor_batch(struct __test_metadata *_metadata,
		      FIXTURE_DATA(corrupt) *self, bool crc, int batch)
{
	uint64_t hits[COR_SLOTS];
	struct cor_round *rd;
	struct mpa_stats st;
	size_t j;

	for (j = 0; j < COR_SLOTS; j++) {
		rd = &self->rd[j];
		memset(rd, 0, sizeof(*rd));
		rd->i = rd->r = -1;
		rd->markers = j & 1;
		rd->kind = j / 2;
		cor_plan(&rd->plan, 0xc0de0000ull + batch * COR_SLOTS + j,
			 rd->markers, j);
		ASSERT_EQ(0, f_connect(&self->a, "10.77.0.2", F_PORT,
				       self->lfd, &rd->i, &rd->r));
		ASSERT_EQ(0, t_mpa_establish(rd->i, rd->r, rd->markers,
					     rd->markers, crc));
		ASSERT_EQ(0, f_flags_are(rd->r, rd->markers, crc));
		ASSERT_EQ(0, f_timeouts(rd->i, 20000));
		ASSERT_EQ(0, f_timeouts(rd->r, 20000));
	}
	for (j = 0; j < COR_SLOTS; j++) {
		rd = &self->rd[j];
		ASSERT_EQ(0, pthread_create(&rd->rx_thr, NULL, cor_rx_run, rd));
		ASSERT_EQ(0, pthread_create(&rd->tx_thr, NULL, cor_tx_run, rd));
	}
	for (j = 0; j < COR_SLOTS; j++) {
		rd = &self->rd[j];
		pthread_join(rd->tx_thr, NULL);
		pthread_join(rd->rx_thr, NULL);
		ASSERT_EQ(0, mpa_getstruct(rd->r, MPA_ERROR, &rd->ei,
					   sizeof(rd->ei)));
		ASSERT_EQ(0, mpa_getstruct(rd->r, MPA_STATS, &st, sizeof(st)));
		rd->crc_errors = st.crc_errors;
		close(rd->i);
		close(rd->r);
		rd->i = rd->r = -1;
	}
	ASSERT_EQ(0, cor_hits(&self->a, hits));
	for (j = 0; j < COR_SLOTS; j++) {
		self->rd[j].hits = hits[j] - self->hits[j];
		self->hits[j] = hits[j];
	}
}

/* Count how a round that delivered nothing bad ended. */
static void cor_count_end(const struct cor_round *rd, size_t *by_len,
			  size_t *by_crc, size_t *by_marker, size_t *by_fin,
			  size_t *intact)
{
	if (rd->err == EBADMSG && rd->ei.code == MPA_ERR_CRC &&
	    rd->ei.reason == MPA_REASON_BAD_LENGTH)
		(*by_len)++;
	else if (rd->err == EBADMSG && rd->ei.code == MPA_ERR_CRC)
		(*by_crc)++;
	else if (rd->err == EBADMSG && rd->ei.code == MPA_ERR_MARKER)
		(*by_marker)++;
	else if (rd->err == EPROTO)
		(*by_fin)++;
	else if (!rd->err && rd->good == rd->plan.n)
		(*intact)++;
}

TEST_F_TIMEOUT(corrupt, rounds, 600)
{
	size_t corrupted = 0, caught = 0, bad = 0, bad_conns = 0, intact = 0;
	size_t by_len = 0, by_marker = 0, by_crc = 0, by_fin = 0;
	size_t kind_bad[COR_KINDS][2] = {}, kind_n[COR_KINDS][2] = {};
	long t0 = t_now_ms(), ms;
	struct cor_round *rd;
	int batch, round;
	size_t j;

	for (batch = 0; batch * COR_SLOTS < COR_ROUNDS; batch++) {
		cor_batch(_metadata, self, variant->crc, batch);
		for (j = 0; j < COR_SLOTS; j++) {
			rd = &self->rd[j];
			round = batch * COR_SLOTS + j;
			/* The filter struck this connection's marked ULPDU. */
			EXPECT_LE(1, rd->hits)
				TH_LOG("round %d: no corruption", round);
			/* Everything before the corruption arrives intact. */
			EXPECT_LE(rd->plan.k, rd->good)
				TH_LOG("round %d (%s, M=%d)", round,
				       cor_kinds[rd->kind].what, rd->markers);
			EXPECT_EQ(0, rd->tx_err)
				TH_LOG("round %d: %s", round,
				       strerror(rd->tx_err));
			corrupted += rd->hits > 0;
			bad += rd->bad;
			bad_conns += rd->bad > 0;
			kind_n[rd->kind][rd->markers]++;
			kind_bad[rd->kind][rd->markers] += rd->bad > 0;
			/* Nothing bad delivered: how did it end? */
			if (!rd->bad)
				cor_count_end(rd, &by_len, &by_crc, &by_marker,
					      &by_fin, &intact);
			if (!variant->crc)
				continue;
			/*
			 * CRC: the corrupted FPDU is the first one not
			 * delivered, with code 2 and EBADMSG; nothing
			 * after it either.
			 */
			if (rd->hits && !rd->bad && rd->good == rd->plan.k &&
			    rd->err == EBADMSG && rd->err_at == rd->plan.k &&
			    rd->ei.code == MPA_ERR_CRC &&
			    rd->ei.errnum == EBADMSG && rd->crc_errors == 1)
				caught++;
			else
				TH_LOG("round %d (%s, M=%d): %zu hits, ULPDU %zu of %zu marked, %zu intact, %zu bad, recv %s after %zu, MPA_ERROR %u/%u/%d, crc_errors %llu",
				       round, cor_kinds[rd->kind].what,
				       rd->markers, (size_t)rd->hits,
				       rd->plan.k, rd->plan.n, rd->good,
				       rd->bad,
				       rd->err ? strerror(rd->err) : "EOF",
				       rd->err_at, rd->ei.code, rd->ei.reason,
				       rd->ei.errnum,
				       (unsigned long long)rd->crc_errors);
		}
	}
	ms = t_now_ms() - t0;
	EXPECT_LE(100, corrupted);
	EXPECT_EQ(batch * COR_SLOTS, corrupted);
	/* every connection ended one of these ways */
	EXPECT_EQ(corrupted, bad_conns + by_len + by_crc + by_marker +
			     by_fin + intact);
	if (variant->crc) {
		EXPECT_EQ(corrupted, caught);
		EXPECT_EQ(0, bad);
		ksft_print_msg("CRC on: corrupted: %zu, caught: %zu, delivered bad: %zu (one corruption per connection; %ld.%03ld s)\n",
			       corrupted, caught, bad, ms / 1000, ms % 1000);
		ksft_print_msg("CRC on: caught as a CRC mismatch: %zu, as ULPDU_Length above 64768: %zu\n",
			       by_crc, by_len);
	} else {
		/* TCP alone delivers corrupted ULPDUs: the contrast. */
		EXPECT_LT(0, bad);
		ksft_print_msg("CRC off: corrupted: %zu, delivered bad: %zu ULPDUs on %zu connections; stopped before anything bad was delivered: %zu (ULPDU_Length above 64768: %zu, Marker: %zu, FIN inside an FPDU: %zu); no effect: %zu (%ld.%03ld s)\n",
			       corrupted, bad, bad_conns,
			       by_len + by_marker + by_crc + by_fin, by_len,
			       by_marker, by_fin, intact, ms / 1000,
			       ms % 1000);
		for (j = 0; j < COR_KINDS; j++)
			ksft_print_msg("CRC off: %-24s bad ULPDUs delivered on %zu of %zu connections without Markers, %zu of %zu with\n",
				       cor_kinds[j].what, kind_bad[j][0],
				       kind_n[j][0], kind_bad[j][1],
				       kind_n[j][1]);
	}
}

/*
 * window: the reader was slow, TCP's receive queue is full
 * (a zero window) when the corrupted FPDU at its head is found by recv().
 * The receive machine judges an FPDU as soon as its last octet is queued,
 * but only the FPDU at the head of the stream: so a valid FPDU leads, the
 * machine stops at its end until it is read, and the corrupted one behind
 * it is judged only once recv() has taken the first. recv()
 * returns EBADMSG once; from then on the module discards what arrives
 * without another recv(), so TCP keeps flowing and the peer's sends
 * complete (it can still be told, e.g. by a Terminate) instead of
 * stalling against a window that never opens again.
 */
#define CWF_MORE	(4 << 20)	/* octets the peer sends after it */

FIXTURE(window)
{
	int unused;
};

FIXTURE_SETUP(window)
{
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN(window)
{
}

TEST_F_TIMEOUT(window, full_at_crc_error, 120)
{
	uint8_t *fp = malloc(T_FPDU_MAX), *u = malloc(MPA_MAX_ULPDU);
	static uint8_t filler[65536];
	struct t_tcp_info ti;
	struct mpa_stats st;
	size_t w, sent = 0, closed_at;
	int raw, m, rc;
	long end;
	ssize_t r;

	ASSERT_NE(NULL, fp);
	ASSERT_NE(NULL, u);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &raw, &m));
	/*
	 * Our socket is the Initiator: a Responder's work would validate the
	 * first FPDU at once (R-7.1.2-15), not its reader.
	 */
	rc = t_raw_responder(m, raw, T_C, false, true);
	ASSERT_LE(0, rc);
	ASSERT_EQ(0, t_nonblock(raw));
	/* A valid FPDU, for the reader to take... */
	t_fill(u, 1000, 7);
	w = t_fpdu_encode(fp, 0, false, u, 1000, NULL);
	ASSERT_EQ(w, send(raw, fp, w, 0));
	/* ...the next one's CRC broken (a corruption TCP did not see)... */
	w = t_fpdu_encode(fp, w, false, u, 1000, NULL);
	fp[w - 1] ^= 0x5a;
	ASSERT_EQ(w, send(raw, fp, w, 0));
	/*
	 * ...then whatever follows, until the reader's window is closed:
	 * everything sent is acknowledged and more waits (the receive
	 * buffer grows as it fills, so keep at it).
	 */
	end = t_now_ms() + 20000;
	for (;;) {
		ASSERT_GT(end, t_now_ms()) TH_LOG("%zu octets and open", sent);
		r = send(raw, filler, sizeof(filler), MSG_DONTWAIT);
		if (r > 0) {
			sent += r;
			continue;
		}
		ASSERT_EQ(EAGAIN, errno);
		ASSERT_EQ(0, f_tcp_info(raw, &ti));
		if (!ti.base.tcpi_unacked && ti.notsent_bytes)
			break;
		ASSERT_GT(end, t_now_ms()) TH_LOG("unacked %u, notsent %u",
						  ti.base.tcpi_unacked,
						  ti.notsent_bytes);
		/* no event says "the window closed": look again shortly */
		poll(NULL, 0, 5);
	}
	closed_at = sent;
	sent = 0;
	/* The reader comes: the valid ULPDU, then EBADMSG, code 2. */
	ASSERT_EQ(1000, recv(m, u, MPA_MAX_ULPDU, MSG_DONTWAIT));
	ASSERT_EQ(-1, recv(m, u, MPA_MAX_ULPDU, MSG_DONTWAIT));
	ASSERT_EQ(EBADMSG, errno);
	EXPECT_MPA_ERROR(m, MPA_ERR_CRC, MPA_REASON_CRC, EBADMSG);
	/* No more recv(): the peer's data still flows, all of it. */
	end = t_now_ms() + 20000;
	while (sent < CWF_MORE && t_now_ms() < end) {
		if (!(t_poll(raw, POLLOUT, 200) & POLLOUT))
			continue;
		r = send(raw, filler, sizeof(filler), MSG_DONTWAIT);
		if (r > 0)
			sent += r;
	}
	EXPECT_LE(CWF_MORE, sent);
	EXPECT_EQ(0, t_wait_acked(raw, 20000));
	ASSERT_EQ(0, f_tcp_info(raw, &ti));
	EXPECT_EQ(0, ti.notsent_bytes);
	/* Nothing of it was delivered; the error stays. */
	EXPECT_EQ(-1, recv(m, u, MPA_MAX_ULPDU, MSG_DONTWAIT));
	EXPECT_EQ(EBADMSG, errno);
	t_get_stats(_metadata, m, &st);
	EXPECT_EQ(1, st.crc_errors);
	EXPECT_EQ(1, st.rx_fpdus);
	ksft_print_msg("window: closed after %zu octets; then %zu more flowed past the bad FPDU without a recv()\n",
		       closed_at, sent);
	close(raw);
	close(m);
	free(fp);
	free(u);
}

/*
 * Packets of one direction of one connection, as a packet socket on the
 * receiver's interface sees them arrive.
 */
struct f_seg {
	uint32_t seq;
	uint32_t len;
};

struct f_cap {
	pthread_t thr;
	int fd;
	uint16_t sport, dport;
	volatile bool stop;	/* drain what is queued, then end */
	bool running;
	struct f_seg *segs;
	size_t n, max;
	bool overflow;
};

static void *f_cap_run(void *arg)
{
	struct f_cap *cp = arg;
	struct sockaddr_ll sll;
	const struct iphdr *ip;
	const uint8_t *tcp;
	uint32_t plen, thl;
	uint8_t pkt[256];
	socklen_t sl;
	ssize_t r;

	for (;;) {
		bool last = cp->stop;

		sl = sizeof(sll);
		r = recvfrom(cp->fd, pkt, sizeof(pkt),
			     MSG_TRUNC | (last ? MSG_DONTWAIT : 0),
			     (struct sockaddr *)&sll, &sl);
		if (r < 0 && last)
			break;
		if (r < (ssize_t)sizeof(*ip) || sll.sll_pkttype != PACKET_HOST ||
		    ntohs(sll.sll_protocol) != ETH_P_IP)
			continue;
		ip = (const void *)pkt;
		if (ip->protocol != IPPROTO_TCP || r < ip->ihl * 4 + 20)
			continue;
		tcp = pkt + ip->ihl * 4;
		plen = ntohs(ip->tot_len) - ip->ihl * 4;
		if (t_get_be16(tcp) != cp->sport || t_get_be16(tcp + 2) != cp->dport)
			continue;
		thl = (tcp[12] >> 4) * 4;
		if (plen <= thl)
			continue;
		if (cp->n == cp->max) {
			cp->overflow = true;
			continue;
		}
		cp->segs[cp->n].seq = (uint32_t)tcp[4] << 24 | tcp[5] << 16 |
				      tcp[6] << 8 | tcp[7];
		cp->segs[cp->n].len = plen - thl;
		cp->n++;
	}
	return NULL;
}

/* Watch interface @ifname of @ns for data from @sport to @dport. */
static int f_cap_start(struct f_cap *cp, const struct f_ns *ns,
		       const char *ifname, int sport, int dport)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	int big = 64 << 20;

	memset(cp, 0, sizeof(*cp));
	cp->sport = sport;
	cp->dport = dport;
	cp->max = 200000;
	cp->segs = calloc(cp->max, sizeof(*cp->segs));
	if (!cp->segs || f_enter(ns))
		return -1;
	cp->fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ALL));
	sll.sll_ifindex = if_nametoindex(ifname);
	f_enter(NULL);
	if (cp->fd < 0 || !sll.sll_ifindex ||
	    bind(cp->fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    t_set_timeo(cp->fd, SO_RCVTIMEO, 100) ||
	    setsockopt(cp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)) ||
	    pthread_create(&cp->thr, NULL, f_cap_run, cp))
		return -1;
	cp->running = true;
	return 0;
}

static void f_cap_stop(struct f_cap *cp)
{
	cp->stop = true;
	if (cp->running)
		pthread_join(cp->thr, NULL);
	cp->running = false;
}

static void f_cap_free(struct f_cap *cp)
{
	f_cap_stop(cp);
	if (cp->fd > 0)
		close(cp->fd);
	free(cp->segs);
	cp->segs = NULL;
}

static int f_port(int fd, bool peer)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&sin,
					       &len))
		return -1;
	return ntohs(sin.sin_port);
}

/*
 * How the FPDUs of a stream lay in the captured segments: seg_split[k]
 * when a segment holds part of FPDU k only, seg_whole[k] when one holds
 * it exactly; the count of segments that hold the end of one FPDU and
 * the start of another (none, ever: each FPDU starts a segment). The
 * first data segment is the Request (T_HDR octets): the FPDUs start
 * behind it.
 */
static size_t f_cap_layout(const struct f_cap *cp, const uint32_t *start,
			   size_t n, bool *seg_split, bool *seg_whole)
{
	size_t i, lo, hi, mid, shared = 0;
	uint32_t seq0, rel, end;

	if (!cp->n || cp->segs[0].len != T_HDR)
		return SIZE_MAX;
	seq0 = cp->segs[0].seq + T_HDR;
	for (i = 1; i < cp->n; i++) {
		rel = cp->segs[i].seq - seq0;
		end = rel + cp->segs[i].len;
		if ((int32_t)rel < 0 || rel >= start[n])
			continue;	/* the Request again, or past the end */
		/* the FPDU k with start[k] <= rel < start[k + 1] */
		lo = 0;
		hi = n;
		while (hi - lo > 1) {
			mid = (lo + hi) / 2;
			if (start[mid] <= rel)
				lo = mid;
			else
				hi = mid;
		}
		/*
		 * Several whole FPDUs may share a segment (MPA packs them
		 * when the sender is ahead of the wire); an FPDU the segment
		 * holds only part of is split. A segment that cuts an FPDU at
		 * both of its ends splits two FPDUs at once.
		 */
		if (rel != start[lo] && end < start[n]) {
			mid = lo;
			while (mid < n && start[mid + 1] < end)
				mid++;
			if (mid != lo && end != start[mid + 1])
				shared++;
		}
		for (; lo < n && start[lo] < end; lo++) {
			if (rel <= start[lo] && start[lo + 1] <= end)
				seg_whole[lo] = true;
			else
				seg_split[lo] = true;
		}
	}
	return shared;
}

/*
 * A -- R -- B, three new namespaces: A's va (10.78.1.1, fd78:1::1) joined
 * to R's ra (10.78.1.2, fd78:1::2), R's rb (10.78.2.1, fd78:2::1) to B's
 * vb (10.78.2.2, fd78:2::2), no duplicate address detection. R forwards,
 * and answers what it cannot forward with ICMP errors, the general ICMP
 * rate limits off (ip_error() still limits its "unreachable" answers to
 * each source: a burst of 5, then one a second). 0, or -1.
 */
static int f_routed(struct f_ns *a, struct f_ns *r, struct f_ns *b)
{
	if (f_ns_add(a, "a") || f_ns_add(r, "r") || f_ns_add(b, "b") ||
	    f_veth(a, "va", "10.78.1.1/24", r, "ra", "10.78.1.2/24") ||
	    f_veth(r, "rb", "10.78.2.1/24", b, "vb", "10.78.2.2/24") ||
	    f_sh("ip %s addr add fd78:1::1/64 dev va nodad", f_n(a)) ||
	    f_sh("ip %s addr add fd78:1::2/64 dev ra nodad", f_n(r)) ||
	    f_sh("ip %s addr add fd78:2::1/64 dev rb nodad", f_n(r)) ||
	    f_sh("ip %s addr add fd78:2::2/64 dev vb nodad", f_n(b)) ||
	    f_sh("ip %s route add 10.78.2.0/24 via 10.78.1.2", f_n(a)) ||
	    f_sh("ip %s route add 10.78.1.0/24 via 10.78.2.1", f_n(b)) ||
	    f_sh("ip %s -6 route add fd78:2::/64 via fd78:1::2", f_n(a)) ||
	    f_sh("ip %s -6 route add fd78:1::/64 via fd78:2::1", f_n(b)) ||
	    f_sysctl(r, "net/ipv4/ip_forward", "1") ||
	    f_sysctl(r, "net/ipv6/conf/all/forwarding", "1") ||
	    f_sysctl(r, "net/ipv6/icmp/ratelimit", "0"))
		return -1;
	return f_sysctl(r, "net/ipv4/icmp_ratelimit", "0");
}

/* Close @fds (3 of them, -1: none), then remove f_routed()'s namespaces. */
static void f_routed_del(struct f_ns *a, struct f_ns *r, struct f_ns *b,
			 const int *fds)
{
	int k;

	for (k = 0; k < 3; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	f_ns_del(a);
	f_ns_del(r);
	f_ns_del(b);
}

/*
 * pmtu: A (the Initiator, which sends) -- R (a router) -- B (the
 * Responder, which receives). The MTU of R's interface towards B changes
 * while A sends; R answers a segment too large with ICMP "fragmentation
 * needed", A's TCP lowers its MSS (PMTU discovery), and MPA's MULPDU must
 * follow. A raise is learnt when A forgets the learnt PMTU (what its expiry
 * does, mtu_expires later: here ip route flush cache at once).
 */
#define PM_ULPDUS	60000	/* room for the sender's records */
#define PM_PER_PHASE	32	/* ULPDUs sent at each MULPDU, at least */

static const int pm_mtus[] = { 1500, 1000, 600, 1500, 150, 1500 };

#define PM_PHASES	ARRAY_SIZE(pm_mtus)

/* What the sender sent: ULPDU k's size, MULPDU and EMSS before and after. */
struct pm_rec {
	uint32_t size;
	uint32_t m1, m2;
	int emss1;
};

struct pm_tx {
	pthread_t thr;
	int fd;
	uint64_t seed;
	volatile bool stop;
	struct pm_rec *rec;
	size_t n;		/* records written (atomic) */
	int err;
};

static void *pm_tx_run(void *arg)
{
	uint8_t *buf = malloc(MPA_MAX_ULPDU);
	struct pm_tx *t = arg;
	uint64_t s = t->seed;
	struct pm_rec *r;
	size_t k = 0;
	ssize_t sent;

	while (buf && !t->stop && k < PM_ULPDUS) {
		r = &t->rec[k];
		r->m1 = f_mulpdu(t->fd);
		r->emss1 = t_emss(t->fd);
		if (!r->m1 || r->emss1 <= 0) {
			t->err = errno ?: EINVAL;
			break;
		}
		/* at MULPDU, below it, and now and then well above it */
		if (k % 16 == 15) {
			r->size = r->m1 + 1 + t_rand64(&s) % (7 * r->m1);
			if (r->size > MPA_MAX_ULPDU)
				r->size = MPA_MAX_ULPDU;
		} else if (k % 4 == 0) {
			r->size = r->m1;
		} else {
			r->size = 1 + t_rand64(&s) % r->m1;
		}
		t_fill(buf, r->size, t->seed + k);
		sent = send(t->fd, buf, r->size, MSG_NOSIGNAL);
		if (sent != (ssize_t)r->size) {
			t->err = sent < 0 ? errno : EMSGSIZE;
			break;
		}
		r->m2 = f_mulpdu(t->fd);
		k++;
		__atomic_store_n(&t->n, k, __ATOMIC_RELEASE);
	}
	if (!buf)
		t->err = ENOMEM;
	if (shutdown(t->fd, SHUT_WR) && !t->err)
		t->err = errno;
	free(buf);
	return NULL;
}

/* The receiver: ULPDU k must be t_fill(seed + k); its lengths recorded. */
struct pm_rx {
	pthread_t thr;
	int fd;
	uint64_t seed;
	uint32_t *len;
	size_t n;
	bool eof;
	char why[256];
};

static void *pm_rx_run(void *arg)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(T_ULPDU_BUF);
	struct pm_rx *b = arg;
	ssize_t r;
	int fl;

	while (got && exp && b->n < PM_ULPDUS) {
		r = t_recv_flags(b->fd, got, T_ULPDU_BUF, 0, &fl);
		if (r == 0) {
			b->eof = true;
			break;
		}
		if (r < 0 || !(fl & MSG_EOR)) {
			snprintf(b->why, sizeof(b->why),
				 "ULPDU %zu: recv %zd (%s), flags 0x%x", b->n,
				 r, r < 0 ? strerror(errno) : "-", fl);
			break;
		}
		t_fill(exp, r, b->seed + b->n);
		if (memcmp(exp, got, r)) {
			snprintf(b->why, sizeof(b->why),
				 "ULPDU %zu (%zd octets) differs", b->n, r);
			break;
		}
		b->len[b->n++] = r;
	}
	free(got);
	free(exp);
	return NULL;
}

FIXTURE(pmtu)
{
	struct f_ns a, r, b;
	int lfd, i, resp;
	struct f_cap cap;
};

FIXTURE_VARIANT(pmtu)
{
	bool markers;
};

FIXTURE_VARIANT_ADD(pmtu, plain) { .markers = false, };
FIXTURE_VARIANT_ADD(pmtu, markers) { .markers = true, };

FIXTURE_SETUP(pmtu)
{
	signal(SIGPIPE, SIG_IGN);
	self->lfd = self->i = self->resp = -1;
	ASSERT_EQ(0, f_routed(&self->a, &self->r, &self->b));
	/* accept a PMTU below 552 (R-4.5-8's case) instead of fragmenting */
	ASSERT_EQ(0, f_sysctl(&self->a, "net/ipv4/route/min_pmtu", "68"));
	/* one segment per packet: the capture sees the segments */
	ASSERT_EQ(0, f_sh("ip %s link set va gso_max_segs 1", f_n(&self->a)));
	self->lfd = f_listen(&self->b, F_PORT);
	ASSERT_LE(0, self->lfd);
}

FIXTURE_TEARDOWN(pmtu)
{
	f_cap_free(&self->cap);
	f_routed_del(&self->a, &self->r, &self->b,
		     (int []){ self->i, self->resp, self->lfd });
}

/* The stream octets A's peer acknowledged (FPDUs only). */
static uint32_t pm_acked(int fd)
{
	struct t_tcp_info ti;
	struct mpa_stats st;

	if (f_tcp_info(fd, &ti) ||
	    mpa_getstruct(fd, MPA_STATS, &st, sizeof(st)))
		return 0;
	return ti.bytes_acked - st.startup_octets_tx;
}

/* Wait until A's peer has acknowledged stream octet @pos: 0, or -1. */
static int pm_wait_acked(int fd, uint32_t pos, int ms)
{
	long end = t_now_ms() + ms;

	while ((int32_t)(pm_acked(fd) - pos) < 0) {
		if (t_now_ms() > end)
			return -1;
		/* no event says "acknowledged": look again shortly */
		poll(NULL, 0, 5);
	}
	return 0;
}

/*
 * Wait until the sender has sent PM_PER_PHASE ULPDUs since record @from
 * with MULPDU @m before and after: 0, or -1 after @ms.
 */
static int pm_wait_phase(struct pm_tx *t, size_t from, uint32_t m, int ms)
{
	long end = t_now_ms() + ms;
	size_t k, n, seen = 0;

	for (k = from;;) {
		n = __atomic_load_n(&t->n, __ATOMIC_ACQUIRE);
		for (; k < n; k++)
			seen += t->rec[k].m1 == m && t->rec[k].m2 == m;
		if (seen >= PM_PER_PHASE)
			return 0;
		if (t->err || t_now_ms() > end)
			return -1;
		/* the sender's records are the signal: look again shortly */
		poll(NULL, 0, 5);
	}
}

TEST_F_TIMEOUT(pmtu, mulpdu_follows, 300)
{
	uint32_t acked[PM_PHASES], want[PM_PHASES], *start, pos = 0;
	size_t first[PM_PHASES + 1], p, k, n, shared, done = 0;
	size_t whole_at_m[PM_PHASES] = {}, split[PM_PHASES] = {};
	size_t required = 0, broken = 0;
	bool markers = variant->markers, *seg_split, *seg_whole;
	struct f_cap *cp = &self->cap;
	struct pm_rx rx = {};
	struct pm_tx tx = {};
	long t0 = t_now_ms();
	int emss;

	tx.rec = calloc(PM_ULPDUS, sizeof(*tx.rec));
	rx.len = calloc(PM_ULPDUS, sizeof(*rx.len));
	ASSERT_NE(NULL, tx.rec);
	ASSERT_NE(NULL, rx.len);
	ASSERT_EQ(0, f_connect(&self->a, "10.78.2.2", F_PORT, self->lfd,
			       &self->i, &self->resp));
	ASSERT_EQ(0, f_cap_start(cp, &self->b, "vb", f_port(self->i, false),
				 F_PORT));
	ASSERT_EQ(0, t_mpa_establish(self->i, self->resp, markers, markers,
				     true));
	ASSERT_EQ(0, f_timeouts(self->i, F_WAIT));
	ASSERT_EQ(0, f_timeouts(self->resp, F_WAIT));
	tx.fd = self->i;
	tx.seed = rx.seed = 0x9417 + markers;
	rx.fd = self->resp;
	ASSERT_EQ(0, pthread_create(&rx.thr, NULL, pm_rx_run, &rx));
	ASSERT_EQ(0, pthread_create(&tx.thr, NULL, pm_tx_run, &tx));

	for (p = 0; p < PM_PHASES; p++) {
		acked[p] = pm_acked(self->i);
		first[p] = __atomic_load_n(&tx.n, __ATOMIC_ACQUIRE);
		if (p) {
			ASSERT_EQ(0, f_sh("ip %s link set rb mtu %d",
					  f_n(&self->r), pm_mtus[p]));
			if (pm_mtus[p] > pm_mtus[p - 1])
				ASSERT_EQ(0, f_sh("ip %s route flush cache",
						  f_n(&self->a)));
		}
		/* IPv4 20, TCP 20, timestamps 12 */
		want[p] = t_mulpdu(pm_mtus[p] - 52, markers);
		EXPECT_EQ(0, pm_wait_phase(&tx, first[p], want[p], 60000))
			TH_LOG("MTU %d: MULPDU %u, EMSS %d; want %u, sender: %s",
			       pm_mtus[p], f_mulpdu(self->i), t_emss(self->i),
			       want[p], strerror(tx.err));
		emss = t_emss(self->i);
		EXPECT_EQ(pm_mtus[p] - 52, emss);
		/*
		 * Before the next change, those FPDUs are acknowledged: the
		 * change cannot excuse them (the sender goes on meanwhile).
		 */
		for (n = __atomic_load_n(&tx.n, __ATOMIC_ACQUIRE); done < n;
		     done++)
			pos += t_fpdu_wire(pos, markers, tx.rec[done].size);
		EXPECT_EQ(0, pm_wait_acked(self->i, pos, 60000))
			TH_LOG("MTU %d: acknowledged %u of %u", pm_mtus[p],
			       pm_acked(self->i), pos);
		/*
		 * R-4.5-8: never below 128, even for a smaller EMSS (the
		 * module's own, as the FPDUs above were checked against the
		 * test's model, which has the same floor)
		 */
		if (pm_mtus[p] - 52 < MPA_MIN_MULPDU + 6)
			EXPECT_EQ(MPA_MIN_MULPDU, f_mulpdu(self->i));
	}
	tx.stop = true;
	pthread_join(tx.thr, NULL);
	pthread_join(rx.thr, NULL);
	EXPECT_EQ(0, tx.err) TH_LOG("send: %s", strerror(tx.err));
	/* nothing lost: every ULPDU, in order, intact, then EOF */
	EXPECT_STREQ("", rx.why);
	EXPECT_TRUE(rx.eof);
	n = tx.n;
	first[PM_PHASES] = n;
	ASSERT_EQ(n, rx.n);
	for (k = 0; k < n; k++)
		if (rx.len[k] != tx.rec[k].size) {
			EXPECT_EQ(tx.rec[k].size, rx.len[k]) TH_LOG("ULPDU %zu", k);
			break;
		}
	/* every packet has passed the capture (B read it all): drain it */
	f_cap_stop(cp);
	ASSERT_FALSE(cp->overflow);

	start = calloc(n + 1, sizeof(*start));
	seg_split = calloc(n, sizeof(bool));
	seg_whole = calloc(n, sizeof(bool));
	ASSERT_NE(NULL, start);
	ASSERT_NE(NULL, seg_split);
	ASSERT_NE(NULL, seg_whole);
	for (k = 0; k < n; k++)
		start[k + 1] = start[k] + t_fpdu_wire(start[k], markers,
						      tx.rec[k].size);
	shared = f_cap_layout(cp, start, n, seg_split, seg_whole);
	/*
	 * Not asserted: TCP re-segments what it holds unacknowledged when the
	 * MSS falls, across FPDUs packed in one skb; the FPDUs that must be
	 * whole are checked one by one below.
	 */
	ASSERT_NE(SIZE_MAX, shared);
	TH_LOG("%zu segments cut two FPDUs (re-segmented after an MSS drop)",
	       shared);

	/*
	 * An FPDU sized for the MULPDU that held while it was sent, which
	 * fits that EMSS, is one segment, unless a later drop of the MSS
	 * caught it unacknowledged: TCP re-segments what it holds, and as
	 * MPA packs small FPDUs into one skb, the new segments may cut any
	 * of them, however small.
	 */
	for (p = 0; p < PM_PHASES; p++) {
		for (k = first[p]; k < first[p + 1]; k++) {
			const struct pm_rec *r = &tx.rec[k];
			bool req = r->m1 == r->m2 && r->size <= r->m1 &&
				   start[k + 1] - start[k] <= (uint32_t)r->emss1;
			size_t q;

			/*
			 * ...the change that began this phase too: what
			 * was sent before A learnt the new PMTU
			 */
			for (q = p ? p : 1; req && q < PM_PHASES; q++)
				if (start[k + 1] > acked[q] &&
				    (start[k + 1] - start[k] + 52 > (uint32_t)pm_mtus[q] ||
				     (pm_mtus[q] < pm_mtus[q - 1] &&
				      (q > p || r->m1 != want[q]))))
					req = false;
			if (seg_split[k])
				split[p]++;
			if (!req)
				continue;
			required++;
			if (seg_split[k] || !seg_whole[k]) {
				if (broken++ < 10)
					TH_LOG("FPDU %zu (ULPDU %u, MULPDU %u, EMSS %d, phase MTU %d) at %u..%u: %s",
					       k, r->size, r->m1, r->emss1,
					       pm_mtus[p], start[k],
					       start[k + 1],
					       seg_split[k] ? "split" : "not seen");
				continue;
			}
			whole_at_m[p] += r->size == want[p] && r->m1 == want[p];
		}
		if (want[p] + 6 <= (uint32_t)pm_mtus[p] - 52) {
			EXPECT_LE(PM_PER_PHASE / 8, whole_at_m[p])
				TH_LOG("MTU %d: FPDUs of exactly MULPDU %u in one segment",
				       pm_mtus[p], want[p]);
		}
		ksft_print_msg("path MTU %4d: EMSS %4d, MULPDU %4u: %4zu ULPDUs, %3zu of exactly MULPDU in one segment each, %3zu FPDUs in more than one\n",
			       pm_mtus[p], pm_mtus[p] - 52, want[p],
			       first[p + 1] - first[p], whole_at_m[p],
			       split[p]);
	}
	EXPECT_EQ(0, broken) TH_LOG("%zu of %zu FPDUs that fit their segment were split",
				    broken, required);
	ksft_print_msg("pmtu M=%d: %zu ULPDUs, %u octets, %zu segments seen, %zu FPDUs required whole, %ld.%03ld s\n",
		       markers, n, start[n], cp->n, required,
		       (t_now_ms() - t0) / 1000, (t_now_ms() - t0) % 1000);
	free(start);
	free(seg_split);
	free(seg_whole);
	free(tx.rec);
	free(rx.len);
}

/*
 * unreach: A (the Initiator, which sends, with IP_RECVERR) -- R -- B (the
 * Responder), over IPv4 and IPv6. R loses its route to B for a while and
 * answers A's segments with ICMP "host unreachable" (ICMPv6 "no route").
 * On a TCP still open that is a soft error: with IP_RECVERR
 * (IPV6_RECVERR), tcp_v4_err() (tcp_v6_err()) sets it on A's socket for A's
 * user to read (once: SO_ERROR, recv, send), and TCP goes on sending what
 * it holds once the route is back. The same must hold for the FPDUs MPA
 * holds: its own pushes neither stop at the error nor take it from A's
 * user (TCP's sendmsg reads and clears it), a shutdown(SHUT_WR) sends the
 * FIN behind them rather than a reset, and a recv() that returns the error
 * does not end the stream as a reset would.
 */
#define UR_SIZE		4000
#define UR_MAX		256
#define UR_SEED		9100

FIXTURE(unreach)
{
	struct f_ns a, r, b;
	int lfd, i, resp;
	size_t sizes[UR_MAX];
	size_t n;
	uint8_t buf[UR_SIZE];
};

FIXTURE_VARIANT(unreach)
{
	int family;
	const char *b_addr;	/* B, and the route R loses */
	int err;		/* the ICMP error's errno */
};

/* ICMP destination unreachable, host unreachable */
FIXTURE_VARIANT_ADD(unreach, v4)
{
	.family = AF_INET, .b_addr = "10.78.2.2", .err = EHOSTUNREACH,
};

/* ICMPv6 destination unreachable, no route */
FIXTURE_VARIANT_ADD(unreach, v6)
{
	.family = AF_INET6, .b_addr = "fd78:2::2", .err = ENETUNREACH,
};

FIXTURE_SETUP(unreach)
{
	int one = 1, rcvbuf = 8192, ret;

	signal(SIGPIPE, SIG_IGN);
	self->lfd = self->i = self->resp = -1;
	ASSERT_EQ(0, f_routed(&self->a, &self->r, &self->b));
	self->lfd = f_listen_family(&self->b, variant->family, F_PORT);
	ASSERT_LE(0, self->lfd);
	/*
	 * B's small window makes A's TCP build small skbs, so that it may
	 * stop taking an FPDU half way (MPA then holds the FPDU)
	 */
	ASSERT_EQ(0, setsockopt(self->lfd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				sizeof(rcvbuf)));
	ASSERT_EQ(0, f_connect(&self->a, variant->b_addr, F_PORT, self->lfd,
			       &self->i, &self->resp));
	if (variant->family == AF_INET6)
		ret = setsockopt(self->i, SOL_IPV6, IPV6_RECVERR, &one,
				 sizeof(one));
	else
		ret = setsockopt(self->i, SOL_IP, IP_RECVERR, &one, sizeof(one));
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, f_timeouts(self->resp, F_WAIT));
}

FIXTURE_TEARDOWN(unreach)
{
	f_routed_del(&self->a, &self->r, &self->b,
		     (int []){ self->i, self->resp, self->lfd });
}

/* R loses its route to B: A's segments get ICMP errors. */
static int ur_route_lost(FIXTURE_DATA(unreach) *self,
			 const FIXTURE_VARIANT(unreach) *variant)
{
	return f_sh("ip %s route add unreachable %s", f_n(&self->r),
		    variant->b_addr);
}

/* R has its route to B again. */
static int ur_route_back(FIXTURE_DATA(unreach) *self,
			 const FIXTURE_VARIANT(unreach) *variant)
{
	return f_sh("ip %s route del unreachable %s", f_n(&self->r),
		    variant->b_addr);
}

/* Wait until A has an error to read (EPOLLERR): 0, or -1 after F_WAIT. */
static int ur_wait_error(FIXTURE_DATA(unreach) *self)
{
	long end = t_now_ms() + F_WAIT;

	while (!(t_poll(self->i, 0, 100) & POLLERR))
		if (t_now_ms() > end)
			return -1;
	return 0;
}

/*
 * Full Operation, then R loses its route and A sends until its send
 * buffer is full: nothing is acknowledged, so TCP's queue fills and MPA
 * holds what TCP cannot take. A send that reports the error (TCP's way:
 * once, nothing taken) is made again. Ends when A has the error to read,
 * from TCP's retransmissions.
 */
static void ur_stall(struct __test_metadata *_metadata,
		     FIXTURE_DATA(unreach) *self,
		     const FIXTURE_VARIANT(unreach) *variant)
{
	int sndbuf = 16384, soft = 0;
	struct mpa_stats st;
	size_t k;
	ssize_t r;

	ASSERT_EQ(0, t_mpa_establish(self->i, self->resp, false, false,
				     true));
	ASSERT_EQ(0, setsockopt(self->i, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				sizeof(sndbuf)));
	ASSERT_EQ(0, t_nonblock(self->i));
	ASSERT_EQ(0, ur_route_lost(self, variant));
	/* with nothing acknowledged, room never comes back: EAGAIN ends it */
	for (k = 0; k < UR_MAX; k++) {
		self->sizes[k] = UR_SIZE - k % 7;
		t_fill(self->buf, self->sizes[k], UR_SEED + k);
		r = send(self->i, self->buf, self->sizes[k], MSG_NOSIGNAL);
		if (r < 0 && errno == variant->err) {
			soft++;
			k--;
			continue;
		}
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			break;
		}
		ASSERT_EQ((ssize_t)self->sizes[k], r);
	}
	ASSERT_GT(UR_MAX, k) TH_LOG("the sender never stopped");
	self->n = k;
	ASSERT_EQ(0, mpa_getstruct(self->i, MPA_STATS, &st, sizeof(st)));
	TH_LOG("%zu ULPDUs sent, %llu of them taken by TCP; %d sends told of the error",
	       self->n, (unsigned long long)st.tx_fpdus, soft);
	ASSERT_LT(st.tx_fpdus, self->n) TH_LOG("MPA holds none");
	ASSERT_EQ(0, ur_wait_error(self))
		TH_LOG("no ICMP error within %d ms", F_WAIT);
}

/*
 * A's user does nothing: TCP and MPA send it all once the route is back,
 * and the error is still A's to read.
 */
TEST_F_TIMEOUT(unreach, held_go, 180)
{
	uint8_t b[8];

	ur_stall(_metadata, self, variant);
	ASSERT_EQ(0, ur_route_back(self, variant));
	t_rx_check(_metadata, self->resp, self->sizes, self->n, UR_SEED);
	EXPECT_EQ(variant->err, t_so_error(self->i));
	EXPECT_MPA_ERROR(self->i, 0, 0, 0);
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	EXPECT_EQ(0, recv(self->resp, b, sizeof(b), 0))
		TH_LOG("no end of file: errno %d", errno);
}

/*
 * shutdown(SHUT_WR) with the error set: the FIN goes behind what MPA
 * holds, as on TCP, not a reset. The error stays A's, also once B's FIN
 * has closed A's TCP: recv() then returns the end of file and MPA_ERROR
 * tells of a clean close (the error was soft, not a reset).
 */
TEST_F_TIMEOUT(unreach, shutdown, 180)
{
	uint8_t b[8];

	ur_stall(_metadata, self, variant);
	ASSERT_EQ(0, shutdown(self->i, SHUT_WR));
	ASSERT_EQ(0, ur_route_back(self, variant));
	t_rx_check(_metadata, self->resp, self->sizes, self->n, UR_SEED);
	EXPECT_EQ(0, recv(self->resp, b, sizeof(b), 0))
		TH_LOG("no end of file: errno %d (%s)", errno,
		       strerror(errno));
	ASSERT_EQ(0, shutdown(self->resp, SHUT_WR));
	ASSERT_TRUE(t_poll(self->i, POLLIN, F_WAIT) & POLLIN);
	EXPECT_EQ(0, recv(self->i, b, sizeof(b), MSG_DONTWAIT))
		TH_LOG("no end of file: errno %d (%s)", errno,
		       strerror(errno));
	EXPECT_MPA_ERROR(self->i, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 0);
	EXPECT_EQ(variant->err, t_so_error(self->i));
}

/*
 * recv() returns the error, once, as on TCP; it is not a reset: no MPA
 * error, and the stream goes on both ways to a clean end.
 */
TEST_F_TIMEOUT(unreach, recv, 180)
{
	uint8_t want[64], got[sizeof(want)];

	ur_stall(_metadata, self, variant);
	ASSERT_EQ(0, ur_route_back(self, variant));
	EXPECT_EQ(-1, recv(self->i, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(variant->err, errno);
	EXPECT_MPA_ERROR(self->i, 0, 0, 0);
	EXPECT_EQ(-1, recv(self->i, got, sizeof(got), MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	t_rx_check(_metadata, self->resp, self->sizes, self->n, UR_SEED);
	t_fill(want, sizeof(want), 78);
	ASSERT_EQ((ssize_t)sizeof(want), send(self->resp, want, sizeof(want),
					      MSG_NOSIGNAL));
	ASSERT_TRUE(t_poll(self->i, POLLIN, F_WAIT) & POLLIN);
	ASSERT_EQ((ssize_t)sizeof(got), recv(self->i, got, sizeof(got),
					     MSG_DONTWAIT))
		TH_LOG("the peer's ULPDU: errno %d", errno);
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
	ASSERT_EQ(0, shutdown(self->resp, SHUT_WR));
	ASSERT_TRUE(t_poll(self->i, POLLIN, F_WAIT) & POLLIN);
	EXPECT_EQ(0, recv(self->i, got, sizeof(got), MSG_DONTWAIT))
		TH_LOG("no end of file: errno %d", errno);
	EXPECT_MPA_ERROR(self->i, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			 0);
}

struct ur_start {
	pthread_t thr;
	int fd;
	int ret, err;
};

static void *ur_start_run(void *arg)
{
	struct ur_start *st = arg;
	sigset_t set;

	/* the router's shell commands end with SIGCHLD: not for this call */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	st->ret = mpa_start(st->fd);
	st->err = errno;
	return NULL;
}

/*
 * The Initiator's Request meets the lost route: its blocking MPA_START
 * wakes for the error, which ends nothing. Once the route is back TCP
 * delivers the Request, the Responder accepts, and the startup completes;
 * the error is still A's to read.
 *
 * The startup timeout is F_WAIT, not t_mpa_options()' 10 s: how soon TCP
 * sends the Request again after the route is back is TCP's business, and
 * can take seconds. On these fresh namespaces the first IPv6 connection's
 * RTT sample can include neighbour discovery (srtt 1 s, RTO 3 s), and each
 * retransmission that got no ICMP error to revert it (RFC 6069) doubles
 * that: the Request then came 3 s after the route, 10.2 s after it was
 * first sent, on a busy TCG guest.
 */
TEST_F_TIMEOUT(unreach, startup, 180)
{
	struct ur_start st = { .fd = self->i };
	uint8_t want[64], got[sizeof(want)];
	long t0, t_err, t_back, t_req;

	ASSERT_EQ(0, t_mpa_options(self->i, MPA_ROLE_INITIATOR, false, true));
	ASSERT_EQ(0, t_mpa_options(self->resp, MPA_ROLE_RESPONDER, false,
				   true));
	ASSERT_EQ(0, mpa_set(self->i, MPA_TIMEOUT, F_WAIT));
	ASSERT_EQ(0, mpa_set(self->resp, MPA_TIMEOUT, F_WAIT));
	ASSERT_EQ(0, f_timeouts(self->i, F_WAIT));
	ASSERT_EQ(0, ur_route_lost(self, variant));
	t0 = t_now_ms();
	ASSERT_EQ(0, pthread_create(&st.thr, NULL, ur_start_run, &st));
	ASSERT_EQ(0, ur_wait_error(self))
		TH_LOG("no ICMP error within %d ms", F_WAIT);
	t_err = t_now_ms() - t0;
	ASSERT_EQ(0, ur_route_back(self, variant));
	t_back = t_now_ms() - t0;
	EXPECT_EQ(0, mpa_start(self->resp)) TH_LOG("errno %d", errno);
	t_req = t_now_ms() - t0;
	EXPECT_EQ(0, mpa_answer(self->resp, MPA_ACCEPT, NULL, 0));
	pthread_join(st.thr, NULL);
	TH_LOG("ms after the Request: error %ld, route back %ld, at B %ld, done %ld",
	       t_err, t_back, t_req, t_now_ms() - t0);
	EXPECT_EQ(0, st.ret) TH_LOG("the Initiator's MPA_START: errno %d (%s)",
				    st.err, strerror(st.err));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(self->i));
	EXPECT_EQ(variant->err, t_so_error(self->i));
	t_fill(want, sizeof(want), 79);
	ASSERT_EQ((ssize_t)sizeof(want), send(self->i, want, sizeof(want),
					      MSG_NOSIGNAL));
	ASSERT_EQ((ssize_t)sizeof(got), recv(self->resp, got, sizeof(got), 0));
	EXPECT_EQ(0, memcmp(want, got, sizeof(got)));
}

/*
 * The Initiator's Request meets the lost route, which does not come back:
 * TCP gives up (TCP_USER_TIMEOUT) with its own error, the ICMP error it
 * kept or ETIMEDOUT. MPA_START fails with that error, code 1 (R-8-1), as
 * SO_ERROR would tell it: not ECONNRESET, a reset that never came.
 */
TEST_F_TIMEOUT(unreach, startup_tcp_gives_up, 180)
{
	struct ur_start st = { .fd = self->i };
	struct mpa_error_info e;
	int ut = 2000;

	ASSERT_EQ(0, t_mpa_options(self->i, MPA_ROLE_INITIATOR, false, true));
	ASSERT_EQ(0, mpa_set(self->i, MPA_TIMEOUT, F_WAIT));
	ASSERT_EQ(0, f_timeouts(self->i, F_WAIT));
	ASSERT_EQ(0, setsockopt(self->i, SOL_TCP, TCP_USER_TIMEOUT, &ut,
				sizeof(ut)));
	ASSERT_EQ(0, ur_route_lost(self, variant));
	ASSERT_EQ(0, pthread_create(&st.thr, NULL, ur_start_run, &st));
	pthread_join(st.thr, NULL);
	EXPECT_EQ(-1, st.ret);
	EXPECT_TRUE(st.err == variant->err || st.err == ETIMEDOUT)
		TH_LOG("errno %d (%s)", st.err, strerror(st.err));
	EXPECT_MPA_STATE(self->i, MPA_STATE_FAILED);
	ASSERT_EQ(0, mpa_getstruct(self->i, MPA_ERROR, &e, sizeof(e)));
	EXPECT_EQ(MPA_ERR_TCP_CLOSED, e.code);
	EXPECT_EQ(st.err, e.errnum);
}

/*
 * kmulpdu: our Initiator in namespace B, mpa_echo's Responder in ours,
 * a veth between. The MTU of both ends changes; after each change a few
 * ULPDUs of our MULPDU go to the module and come back, and both ends'
 * MULPDU must be what RFC 5044 4.5 makes of the new EMSS (the module's is
 * mpa_kmulpdu(), as mpa_echo last saw it, in its debugfs line).
 */
static const int km_mtus[] = { 9000, 1500, 150, 1000, 9000 };

FIXTURE(kmulpdu)
{
	struct f_ns b;
	char ifname[16];
	char min_pmtu[32];
	int fd;
};

FIXTURE_VARIANT(kmulpdu)
{
	bool markers;
};

FIXTURE_VARIANT_ADD(kmulpdu, plain) { .markers = false, };
FIXTURE_VARIANT_ADD(kmulpdu, markers) { .markers = true, };

static int km_read(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (f && fgets(buf, size, f)) {
		buf[strcspn(buf, "\n")] = 0;
		ret = 0;
	}
	if (f)
		fclose(f);
	return ret;
}

FIXTURE_SETUP(kmulpdu)
{
	char addr[32];

	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	snprintf(self->ifname, sizeof(self->ifname), "mpafk%d",
		 getpid() % 100000);
	ASSERT_EQ(0, km_read("/proc/sys/net/ipv4/route/min_pmtu",
			     self->min_pmtu, sizeof(self->min_pmtu)));
	ASSERT_EQ(0, f_ns_add(&self->b, "b"));
	ASSERT_EQ(0, f_veth(NULL, self->ifname, "10.79.0.1/24", &self->b, "vb",
			    "10.79.0.2/24"));
	ASSERT_EQ(0, f_sysctl(NULL, "net/ipv4/route/min_pmtu", "68"));
	ASSERT_EQ(0, f_sysctl(&self->b, "net/ipv4/route/min_pmtu", "68"));
	/* the connection starts with a large MSS, so that it can rise again */
	ASSERT_EQ(0, f_sh("ip link set %s mtu %d", self->ifname, km_mtus[0]));
	ASSERT_EQ(0, f_sh("ip %s link set vb mtu %d", f_n(&self->b),
			  km_mtus[0]));
	f_sh("rmmod mpa_echo 2> /dev/null; true");
	ASSERT_EQ(0, f_sh("modprobe mpa_echo port=%d markers=%d",
			  F_ECHO_PORT, variant->markers));
	snprintf(addr, sizeof(addr), "10.79.0.1");
	ASSERT_EQ(0, f_connect(&self->b, addr, F_ECHO_PORT, -1, &self->fd,
			       &(int){ 0 }));
}

FIXTURE_TEARDOWN(kmulpdu)
{
	if (self->fd >= 0)
		close(self->fd);
	f_sh("rmmod mpa_echo");
	f_ns_del(&self->b);	/* and the veth with it */
	if (self->min_pmtu[0])
		f_sysctl(NULL, "net/ipv4/route/min_pmtu", self->min_pmtu);
}

/* mpa_echo's MULPDU for the connection from local port @port, or -1. */
static long km_echo_mulpdu(int port)
{
	char line[4096], want[64];
	long ret = -1;
	const char *p;
	FILE *f;

	snprintf(want, sizeof(want), " peer=10.79.0.2:%d ", port);
	f = fopen(F_ECHO_DIR "conns", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, want))
			continue;
		p = strstr(line, " mulpdu=");
		if (p)
			ret = strtol(p + 8, NULL, 10);
	}
	fclose(f);
	return ret;
}

TEST_F_TIMEOUT(kmulpdu, follows_mtu, 120)
{
	int port = f_port(self->fd, false), fl;
	uint8_t *buf = malloc(T_ULPDU_BUF), *exp = malloc(T_ULPDU_BUF);
	bool m = variant->markers;
	uint64_t seed = 0x6b6d;
	size_t p, j;
	uint32_t mul;
	ssize_t r;
	long km;

	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, exp);
	/* We want Markers as the module does: both send them, or neither. */
	ASSERT_EQ(0, t_mpa_options(self->fd, MPA_ROLE_INITIATOR, m, true));
	ASSERT_START(self->fd);
	ASSERT_EQ(0, f_timeouts(self->fd, 20000));
	for (p = 0; p < ARRAY_SIZE(km_mtus); p++) {
		if (p) {
			ASSERT_EQ(0, f_sh("ip link set %s mtu %d", self->ifname,
					  km_mtus[p]));
			ASSERT_EQ(0, f_sh("ip %s link set vb mtu %d",
					  f_n(&self->b), km_mtus[p]));
		}
		/* ULPDUs of our MULPDU there and back: both ends send */
		for (j = 0; j < 3; j++, seed++) {
			mul = f_mulpdu(self->fd);
			ASSERT_LT(0, mul);
			t_fill(buf, mul, seed);
			ASSERT_EQ(mul, send(self->fd, buf, mul, 0));
			r = t_recv_flags(self->fd, exp, T_ULPDU_BUF, 0, &fl);
			ASSERT_EQ(mul, r) TH_LOG("%s", strerror(errno));
			EXPECT_BYTES(buf, exp, mul);
		}
		/* the echo's MULPDU is from after its last send */
		km = km_echo_mulpdu(port);
		/* EMSS: the MTU less IPv4, TCP and timestamps (both ends) */
		EXPECT_EQ(km_mtus[p] - 52, t_emss(self->fd));
		EXPECT_EQ(t_mulpdu(km_mtus[p] - 52, m), f_mulpdu(self->fd))
			TH_LOG("MTU %d", km_mtus[p]);
		EXPECT_EQ(t_mulpdu(km_mtus[p] - 52, m), km)
			TH_LOG("MTU %d: mpa_kmulpdu() %ld", km_mtus[p], km);
		ksft_print_msg("MTU %d: EMSS %d, MULPDU %u here, mpa_kmulpdu() %ld\n",
			       km_mtus[p], t_emss(self->fd), f_mulpdu(self->fd),
			       km);
	}
	free(buf);
	free(exp);
}

TEST_HARNESS_MAIN
