// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel MPA API (include/net/mpa.h), driven through its sample
 * consumer samples/mpa/mpa_echo.ko from userspace MPA sockets on loopback:
 *
 *   echo       our Initiator against the module's Responder, which echoes
 *              every ULPDU from its own pages (zero-copy send), over the
 *              Markers and CRC combinations, IPv4 and IPv6; sizes 1..64768
 *   sink       the module counts and checksums what we send
 *   slow       the module refuses each ULPDU once and takes it later
 *              (mpa_kresume()): our sends block or get EAGAIN, nothing lost
 *   answer     the module rejects (ECONNREFUSED here, with its Private
 *              Data), or answers late from a work item
 *   held       the module's Responder sends before our first ULPDU:
 *              MPA holds its ULPDUs, mpa_ksend() says EAGAIN once the send
 *              buffer is full, writable once there is room again, or once
 *              our FIN before any ULPDU made the hold last for good
 *   noio       the module's sockets set up as a consumer in the memory
 *              reclaim path does (GFP_NOIO), copy mode included
 *   initiator  the module's Initiator against our Responder
 *   errors     what the module's error callback hears: a bad Request, the
 *              startup timeout, CRC and Marker errors, a FIN inside an
 *              FPDU, a reset (from a raw TCP peer that frames by hand)
 *   misc       odd cases: nothing listening, Rev 2 both ways, C=0 without
 *              the administrator's leave, many connections at once
 *   unload     rmmod mpa_echo with connections open in every phase
 *   closing    the module releases a socket whose FPDUs wait in MPA for a
 *              peer that does not read: sock_release() returns at once, and
 *              the peer then gets every ULPDU and a FIN (an error closes
 *              it), or a reset (rmmod: SO_LINGER 0)
 *   flood      the module closes connections, in the startup phase and in
 *              Full Operation (copy mode, mpa_kresume()), while raw peers
 *              flood them; then mpa itself unloads
 *
 * Each test loads the module with its own parameters (modprobe) and unloads
 * it afterwards; the module shows its connections in
 * /sys/kernel/debug/mpa_echo/conns. Run as root, with samples/mpa's module
 * installed (tools/testing/vm/run does that).
 */
#include <arpa/inet.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define KE_PORT		17175
#define KE_DIR		"/sys/kernel/debug/mpa_echo/"
#define KE_WAIT		20000	/* how long a test waits for the module */
#define KE_REQ_PD	"userspace-says-hello"
#define KE_ACCEPT_PD	"kernel-says-welcome"
#define KE_REJECT_PD	"kernel-says-go-away"
#define KE_INIT_PD	"kernel-initiator-hello"
#define KE_USER_PD	"userspace-responder-welcome"
#define KE_USER_NO	"userspace-responder-says-no"
/* result flags that do not change after the startup */
#define KE_RES_MASK	(MPA_RESULT_TX_MARKERS | MPA_RESULT_RX_MARKERS | \
			 MPA_RESULT_CRC | MPA_RESULT_ENHANCED |		\
			 MPA_RESULT_PEER_TO_PEER)

/* Sizes over 1..64768 (at most 128: the module's connect file takes no more) */
static const size_t sweep[] = {
	1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 63, 64, 65, 127, 128, 129, 255,
	256, 257, 500, 503, 504, 505, 507, 508, 509, 511, 512, 513, 1000,
	1023, 1024, 1025, 1400, 1447, 1448, 1449, 1460, 2047, 2048, 2049,
	4093, 4095, 4096, 4097, 8191, 8192, 8193, 9000, 12345, 16384, 20000,
	32767, 32768, 32769, 40000, 50000, 60000, 64000, 64511, 64512, 64513,
	64766, 64767, 64768, 1, 64768, 2, 64767, 3,
};

#define NSWEEP (sizeof(sweep) / sizeof(sweep[0]))

/* Shell commands, the module */

static bool ke_loaded(void)
{
	return !access("/sys/module/mpa_echo", F_OK);
}

static int ke_unload(void)
{
	if (!ke_loaded())
		return 0;
	return t_sh("rmmod mpa_echo");
}

/* (Re)load mpa_echo on KE_PORT with @args: 0, or modprobe's status. */
static int ke_load(const char *fmt, ...)
{
	char args[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	/* modprobe of a module still loaded would keep its parameters */
	if (ke_unload())
		return -1;
	return t_sh("modprobe mpa_echo port=%d accept_pd=%s reject_pd=%s request_pd=%s %s",
		    KE_PORT, KE_ACCEPT_PD, KE_REJECT_PD, KE_INIT_PD, args);
}

/*
 * The namespace's policy as it was when the program started (the tests
 * change crc-off-allowed); without it, crc-off-allowed's default.
 */
static struct mpa_t_policy ke_saved_policy = {
	.has = MPA_T_HAS(MPA_A_POLICY_CRC_OFF_ALLOWED),
	.crc_off_allowed = 0,
};

static void __attribute__((constructor)) ke_init(void)
{
	struct mpa_t_policy pol;

	if (t_sh("modprobe mpa 2>/dev/null") == 0 && !mpa_policy_get(&pol))
		ke_saved_policy = pol;
}

static void ke_restore(void)
{
	ke_unload();
	mpa_policy_set(&ke_saved_policy);
}

/* Write the connect file: 0, or -1 with errno. */
static int ke_connect(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int fd, n;
	ssize_t r;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fd = open(KE_DIR "connect", O_WRONLY);
	if (fd < 0)
		return -1;
	r = write(fd, line, n);
	n = r == n ? 0 : -1;
	r = errno;
	close(fd);
	errno = r;
	return n;
}

/* The module's connections: one line each, key=value pairs */

struct ke_info {
	char line[4096];
};

/* The value of @key in @ki, into @val; false if there is none. */
static bool ke_str(const struct ke_info *ki, const char *key, char *val,
		   size_t size)
{
	char pat[64];
	const char *p;
	size_t n;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(ki->line, pat);
	if (p) {
		p += strlen(pat);
	} else if (!strncmp(ki->line, pat + 1, strlen(pat + 1))) {
		p = ki->line + strlen(pat + 1);
	} else {
		if (size)
			val[0] = 0;
		return false;
	}
	n = strcspn(p, " \n");
	if (n >= size)
		n = size - 1;
	memcpy(val, p, n);
	val[n] = 0;
	return true;
}

/* A number of @ki; LLONG_MIN if there is none. */
static long long ke_num(const struct ke_info *ki, const char *key)
{
	char v[64];

	if (!ke_str(ki, key, v, sizeof(v)))
		return LLONG_MIN;
	return strtoll(v, NULL, 0);
}

static bool ke_is(const struct ke_info *ki, const char *key, const char *want)
{
	char v[256];

	return ke_str(ki, key, v, sizeof(v)) && !strcmp(v, want);
}

/* The peer's Private Data the module saw is @pd. */
static bool ke_pd_is(const struct ke_info *ki, const char *pd)
{
	char hex[2 * MPA_MAX_PRIVATE_DATA + 1];
	size_t i;

	if (!*pd)
		return ke_is(ki, "pd", "-");
	for (i = 0; pd[i] && i < MPA_MAX_PRIVATE_DATA; i++)
		sprintf(hex + 2 * i, "%02x", (unsigned char)pd[i]);
	return ke_is(ki, "pd", hex);
}

/* The line of the connection whose @key is @val: 0, or -1. */
static int ke_find(const char *key, const char *val, struct ke_info *ki)
{
	char want[256];
	FILE *f;
	int ret = -1;

	f = fopen(KE_DIR "conns", "r");
	if (!f)
		return -1;
	while (fgets(ki->line, sizeof(ki->line), f)) {
		if (ke_str(ki, key, want, sizeof(want)) && !strcmp(want, val)) {
			ret = 0;
			break;
		}
	}
	fclose(f);
	if (ret)
		ki->line[0] = 0;
	return ret;
}

static int ke_count(void)
{
	struct ke_info ki;
	FILE *f;
	int n = 0;

	f = fopen(KE_DIR "conns", "r");
	if (!f)
		return -1;
	while (fgets(ki.line, sizeof(ki.line), f))
		n++;
	fclose(f);
	return n;
}

/* "peer=" of the module's end of our socket @fd: our own address. */
static void ke_peer_of(int fd, char *out, size_t size)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char a[INET6_ADDRSTRLEN];

	out[0] = 0;
	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return;
	if (ss.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(out, size, "%s:%u", a, ntohs(sin->sin_port));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(out, size, "[%s]:%u", a, ntohs(sin6->sin6_port));
	}
}

/* The module's connection for our socket @fd, waiting for it to appear. */
static int ke_get_fd(int fd, struct ke_info *ki)
{
	long end = t_now_ms() + KE_WAIT;
	char peer[128];

	ke_peer_of(fd, peer, sizeof(peer));
	while (ke_find("peer", peer, ki)) {
		if (t_now_ms() > end)
			return -1;
		t_sleep_ms(10);
	}
	return 0;
}

static int ke_get_id(int id, struct ke_info *ki)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", id);
	return ke_find("id", v, ki);
}

/*
 * Wait until the number @key of the connection (our socket @fd, or the
 * module's connection @id when @fd < 0) is at least @min: 0, or -1 on
 * timeout (*ki then has the last line seen).
 */
static int ke_wait_num(int fd, int id, const char *key, long long min,
		       struct ke_info *ki)
{
	long end = t_now_ms() + KE_WAIT;

	for (;;) {
		int ret = fd >= 0 ? ke_get_fd(fd, ki) : ke_get_id(id, ki);

		if (!ret && ke_num(ki, key) >= min)
			return 0;
		if (t_now_ms() > end)
			return -1;
		t_sleep_ms(10);
	}
}

/* Wait until the module's @key of our connection @fd reads @want. */
static int ke_wait_is(int fd, const char *key, const char *want,
		      struct ke_info *ki)
{
	long end = t_now_ms() + KE_WAIT;

	for (;;) {
		if (!ke_get_fd(fd, ki) && ke_is(ki, key, want))
			return 0;
		if (t_now_ms() > end)
			return -1;
		t_sleep_ms(10);
	}
}

#define ASSERT_WAIT(fd, id, key, min, ki)				\
	ASSERT_EQ(0, ke_wait_num(fd, id, key, min, ki))			\
		TH_LOG("waiting for %s >= %lld: %s", key,		\
		       (long long)(min), (ki)->line)

#define EXPECT_KE(ki, key, val)						\
	EXPECT_EQ((long long)(val), ke_num(ki, key))			\
		TH_LOG("%s: %s", key, (ki)->line)

#define EXPECT_KE_IS(ki, key, val)					\
	EXPECT_TRUE(ke_is(ki, key, val))				\
		TH_LOG("%s is not %s: %s", key, val, (ki)->line)

/* Userspace ends */

/*
 * A TCP connection to the module's listener (with TCP_MAXSEG @mss, and
 * SO_SNDBUF @sndbuf and SO_RCVBUF @rcvbuf unless 0, all from before the
 * handshake).
 */
static int ke_tcp2(int family, int mss, int sndbuf, int rcvbuf)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd;

	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(KE_PORT);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		sin6->sin6_port = htons(KE_PORT);
		len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	if ((mss && setsockopt(fd, SOL_TCP, TCP_MAXSEG, &mss, sizeof(mss))) ||
	    (sndbuf && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf,
				  sizeof(sndbuf))) ||
	    (rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf,
				  sizeof(rcvbuf))) ||
	    connect(fd, (struct sockaddr *)&ss, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int ke_tcp(int family, int mss, int sndbuf)
{
	return ke_tcp2(family, mss, sndbuf, 0);
}

/* Configure @fd as an Initiator with Markers @m and CRC @crc. */
static int ke_user_config(int fd, bool m, bool crc, const char *pd)
{
	if (mpa_config(fd, MPA_ROLE_INITIATOR, 10000) ||
	    mpa_set(fd, MPA_MARKERS, m) ||
	    (!crc && mpa_set(fd, MPA_CRC, 0)) ||
	    mpa_set_pd(fd, pd, strlen(pd)))
		return -1;
	return 0;
}

static int ke_set_timeouts(int fd, int ms)
{
	if (t_set_timeo(fd, SO_RCVTIMEO, ms) || t_set_timeo(fd, SO_SNDTIMEO, ms))
		return -1;
	return 0;
}

/*
 * Our Initiator against the module: connect, MPA_START (blocking). The
 * socket in Full Operation, with 20 s send and receive timeouts, or -1.
 */
static int ke_open(struct __test_metadata *_metadata, int family, bool m,
		   bool crc, int mss, int sndbuf)
{
	char got[MPA_MAX_PRIVATE_DATA];
	int fd, n;

	fd = ke_tcp(family, mss, sndbuf);
	EXPECT_LE(0, fd) TH_LOG("connect: %s", strerror(errno));
	if (fd < 0)
		return -1;
	if (ke_user_config(fd, m, crc, KE_REQ_PD) || ke_set_timeouts(fd, KE_WAIT)) {
		EXPECT_TRUE(0) TH_LOG("config: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (mpa_start(fd)) {
		t_why(fd, errno);
		EXPECT_TRUE(0) TH_LOG("MPA_START failed");
		close(fd);
		return -1;
	}
	n = mpa_peer_pd(fd, got, sizeof(got));
	EXPECT_EQ((int)strlen(KE_ACCEPT_PD), n);
	if (n == (int)strlen(KE_ACCEPT_PD))
		EXPECT_BYTES(KE_ACCEPT_PD, got, n);
	return fd;
}

static void ke_result(struct __test_metadata *_metadata, int fd,
		      struct mpa_result *res)
{
	ASSERT_EQ(0, mpa_getstruct(fd, MPA_RESULT, res, sizeof(*res)));
}

/* Read until end of file or an error: 0 for EOF, -1 for a reset, -2 else. */
static int ke_wait_end(int fd, int ms, size_t *data)
{
	static char buf[T_ULPDU_BUF];
	long end = t_now_ms() + ms;
	ssize_t r;

	*data = 0;
	while (t_now_ms() < end) {
		if (!(t_poll(fd, POLLIN, 100) & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r == 0)
			return 0;
		if (r > 0) {
			*data += r;
			continue;
		}
		if (errno == EAGAIN || errno == EINTR)
			continue;
		return errno == ECONNRESET || errno == EPIPE ||
		       errno == EPROTO ? -1 : -2;
	}
	return -2;
}

/* The connection ended: a FIN or a reset reached our socket in time. */
#define EXPECT_ENDS(fd, ms) do {					\
	size_t __d;							\
	int __e = ke_wait_end(fd, ms, &__d);				\
	EXPECT_LE(-1, __e) TH_LOG("no end of file nor reset (errno %d)", errno); \
} while (0)

static void ke_sizes_str(char *out, size_t size, const size_t *sizes,
			 size_t n)
{
	size_t i;
	int o = 0;

	out[0] = 0;
	for (i = 0; i < n && o < (int)size; i++)
		o += snprintf(out + o, size - o, "%s%zu", i ? "," : "",
			      sizes[i]);
}

static size_t ke_sum(const size_t *sizes, size_t n)
{
	size_t i, s = 0;

	for (i = 0; i < n; i++)
		s += sizes[i];
	return s;
}

/* Expected module result flags for our Markers @m, the module's @km. */
static unsigned int ke_flags(bool tx_m, bool rx_m, bool crc)
{
	return (tx_m ? MPA_RESULT_TX_MARKERS : 0) |
	       (rx_m ? MPA_RESULT_RX_MARKERS : 0) |
	       (crc ? MPA_RESULT_CRC : 0);
}

/*
 * echo: our Initiator, the module's echoing Responder. @user_m, @mod_m:
 * the Markers each side wants to receive; @user_crc, @mod_crc: C=1; the
 * module places and sends ULPDUs in bio_vecs at odd offsets with @odd.
 */
FIXTURE(echo)
{
	int fd;
};

FIXTURE_VARIANT(echo)
{
	int family;
	bool user_m;
	bool mod_m;
	bool user_crc;
	bool mod_crc;
	bool odd;
	bool inline_resume;
};

#define ECHO(name, fam, um, mm, uc, mc, o, ir)				\
	FIXTURE_VARIANT_ADD(echo, name)					\
	{								\
		.family = fam, .user_m = um, .mod_m = mm,		\
		.user_crc = uc, .mod_crc = mc, .odd = o,		\
		.inline_resume = ir,					\
	}

ECHO(v4_m00_crc, AF_INET, 0, 0, 1, 1, 0, 0);
ECHO(v6_m01_crc, AF_INET6, 0, 1, 1, 1, 0, 0);
ECHO(v4_m10_crc, AF_INET, 1, 0, 1, 1, 0, 0);
ECHO(v6_m11_crc, AF_INET6, 1, 1, 1, 1, 0, 0);
ECHO(v6_m00_nocrc, AF_INET6, 0, 0, 0, 0, 0, 0);
ECHO(v4_m11_nocrc, AF_INET, 1, 1, 0, 0, 0, 0);
ECHO(v4_m01_usernocrc, AF_INET, 0, 1, 0, 1, 0, 0);
ECHO(v6_m10_modnocrc, AF_INET6, 1, 0, 1, 0, 0, 0);
ECHO(v4_m11_crc_odd, AF_INET, 1, 1, 1, 1, 1, 0);
ECHO(v6_m00_crc_odd, AF_INET6, 0, 0, 1, 1, 1, 0);
/* mpa_kresume() from inside the writable callback */
ECHO(v4_m00_crc_inline, AF_INET, 0, 0, 1, 1, 0, 1);
ECHO(v6_m01_crc_inline, AF_INET6, 0, 1, 1, 1, 1, 1);

FIXTURE_SETUP(echo)
{
	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	if (!variant->user_crc || !variant->mod_crc)
		ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, ke_load("markers=%d crc=%d odd_bvecs=%d inline_resume=%d",
			     variant->mod_m, variant->mod_crc, variant->odd,
			     variant->inline_resume));
}

FIXTURE_TEARDOWN_PARENT(echo)
{
	ke_restore();
}

/* Open, and check both ends' view of the startup. */
static int echo_open(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(echo) *variant, int mss,
		     int sndbuf)
{
	bool crc = variant->user_crc || variant->mod_crc;
	struct mpa_result res;
	struct ke_info ki;
	int fd;

	fd = ke_open(_metadata, variant->family, variant->user_m,
		     variant->user_crc, mss, sndbuf);
	if (fd < 0)
		return -1;
	ke_result(_metadata, fd, &res);
	EXPECT_EQ(1, res.revision);
	EXPECT_EQ(ke_flags(variant->mod_m, variant->user_m, crc),
		  res.flags & KE_RES_MASK);
	EXPECT_EQ(0, ke_get_fd(fd, &ki));
	/* the module's established callback ran (it may lag behind us) */
	EXPECT_EQ(0, ke_wait_num(fd, -1, "rev", 1, &ki)) TH_LOG("%s", ki.line);
	EXPECT_KE_IS(&ki, "role", "responder");
	EXPECT_KE_IS(&ki, "state", "full");
	EXPECT_TRUE(ke_pd_is(&ki, KE_REQ_PD)) TH_LOG("%s", ki.line);
	EXPECT_KE(&ki, "frame_flags", (variant->user_m ? MPA_FRAME_MARKERS : 0) |
		  (variant->user_crc ? MPA_FRAME_CRC : 0));
	EXPECT_EQ(ke_flags(variant->user_m, variant->mod_m, crc),
		  ke_num(&ki, "res_flags") & KE_RES_MASK) TH_LOG("%s", ki.line);
	EXPECT_LE(MPA_MIN_MULPDU, ke_num(&ki, "mulpdu"));
	EXPECT_GE(MPA_MAX_ULPDU, ke_num(&ki, "mulpdu"));
	return fd;
}

/* Send @sizes from a thread, read the echoes here. */
static void echo_xfer(struct __test_metadata *_metadata, int fd,
		      const size_t *sizes, size_t n, uint64_t seed)
{
	struct t_tx p;

	ASSERT_EQ(0, t_tx_start(&p, fd, sizes, n, seed));
	t_rx_check(_metadata, fd, sizes, n, seed);
	pthread_join(p.thr, NULL);
	EXPECT_EQ(n, p.sent)
		TH_LOG("send %zu: %zd, errno %d (%s)", p.sent, p.rc, p.err,
		       strerror(p.err));
}

/* We close our half; the module closes too, after the last echo. */
static void echo_close(struct __test_metadata *_metadata, int fd, size_t n)
{
	struct ke_info ki;
	size_t data;

	ASSERT_EQ(0, shutdown(fd, SHUT_WR));
	EXPECT_EQ(0, ke_wait_end(fd, KE_WAIT, &data));
	EXPECT_EQ(0, data);
	ASSERT_WAIT(fd, -1, "released", 1, &ki);
	EXPECT_KE(&ki, "peer_closed", 1);
	EXPECT_KE(&ki, "err_code", 0);
	EXPECT_KE(&ki, "kerr", 0);
	/* TCP let go of every page the module sent */
	ASSERT_WAIT(fd, -1, "tx_done", n, &ki);
	EXPECT_KE(&ki, "tx_done", n);
}

/* Every size from 1 to 64768 echoed back byte-exact, in order. */
TEST_F_TIMEOUT(echo, sweep, 180)
{
	struct ke_info ki;

	self->fd = echo_open(_metadata, variant, 0, 0);
	ASSERT_LE(0, self->fd);
	echo_xfer(_metadata, self->fd, sweep, NSWEEP, 100);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", NSWEEP);
	EXPECT_KE(&ki, "rx_octets", ke_sum(sweep, NSWEEP));
	EXPECT_KE(&ki, "tx", NSWEEP);
	EXPECT_KE(&ki, "tx_octets", ke_sum(sweep, NSWEEP));
	echo_close(_metadata, self->fd, NSWEEP);
	close(self->fd);
}

/* Many small ULPDUs, sent and echoed at once. */
TEST_F_TIMEOUT(echo, burst, 180)
{
	static size_t sizes[3000];
	uint64_t s = 5;
	size_t i;

	for (i = 0; i < 3000; i++)
		sizes[i] = 1 + t_rand64(&s) % 200;
	self->fd = echo_open(_metadata, variant, 0, 0);
	ASSERT_LE(0, self->fd);
	echo_xfer(_metadata, self->fd, sizes, 3000, 200);
	echo_close(_metadata, self->fd, 3000);
	close(self->fd);
}

/*
 * We send without reading the echoes: the module's sends find no room,
 * it leaves ULPDUs queued, its window closes and our sends stop (EAGAIN).
 * Then we read everything: nothing was lost.
 */
TEST_F_TIMEOUT(echo, backpressure, 300)
{
	static size_t sizes[4096];
	size_t n = 0, i;
	struct ke_info ki;
	uint8_t *buf;
	ssize_t r;

	buf = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, buf);
	self->fd = echo_open(_metadata, variant, 0, 0);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < 4096; i++)
		sizes[i] = 16000 + i % 7;
	/* at most 64 MiB: a consumer without back-pressure would take all */
	for (n = 0; n < 4096; n++) {
		t_fill(buf, sizes[n], 300 + n);
		r = send(self->fd, buf, sizes[n], MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EAGAIN) {
			/* the window may reopen once: wait, then try again */
			if (t_poll(self->fd, POLLOUT, 1000) & POLLOUT) {
				n--;
				continue;
			}
			break;
		}
		ASSERT_EQ((ssize_t)sizes[n], r) TH_LOG("errno %d", errno);
	}
	EXPECT_GT(4096, n) TH_LOG("64 MiB sent, never blocked");
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	TH_LOG("blocked after %zu ULPDUs; module: %s", n, ki.line);
	/* the module's sends found no room: it left ULPDUs queued */
	EXPECT_LT(0, ke_num(&ki, "send_eagain"));
	EXPECT_LT(0, ke_num(&ki, "refused"));
	t_rx_check(_metadata, self->fd, sizes, n, 300);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", n);
	EXPECT_KE(&ki, "tx", n);
	/* and was told of room again */
	EXPECT_LT(0, ke_num(&ki, "writable"));
	echo_close(_metadata, self->fd, n);
	free(buf);
	close(self->fd);
}

/*
 * mpa_kmulpdu() follows the connection's MSS: with TCP_MAXSEG 1000 on
 * our end, both ends' EMSS is the same small value.
 */
TEST_F_TIMEOUT(echo, mulpdu, 60)
{
	size_t one = 300;
	struct ke_info ki;
	int emss;

	self->fd = echo_open(_metadata, variant, 1000, 0);
	ASSERT_LE(0, self->fd);
	echo_xfer(_metadata, self->fd, &one, 1, 400);
	emss = t_emss(self->fd);
	ASSERT_LT(0, emss);
	ASSERT_GE(1000, emss);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	/* the module sends Markers if we want them */
	EXPECT_KE(&ki, "mulpdu", t_mulpdu(emss, variant->user_m));
	echo_close(_metadata, self->fd, 1);
	close(self->fd);
}

/* sink: the module counts and checksums the ULPDU stream. */
FIXTURE(sink)
{
	int fd;
};

FIXTURE_VARIANT(sink)
{
	int family;
	bool mod_m;
};

FIXTURE_VARIANT_ADD(sink, v4) { .family = AF_INET, .mod_m = 0, };
FIXTURE_VARIANT_ADD(sink, v6_markers) { .family = AF_INET6, .mod_m = 1, };

FIXTURE_SETUP(sink)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, ke_load("sink=1 markers=%d", variant->mod_m));
}

FIXTURE_TEARDOWN_PARENT(sink)
{
	ke_restore();
}

TEST_F_TIMEOUT(sink, stream, 180)
{
	static size_t sizes[600];
	uint32_t reg = ~0u;
	uint64_t s = 9;
	struct ke_info ki;
	struct t_tx p;
	uint8_t *buf;
	size_t i;
	char csum[16];

	buf = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, buf);
	for (i = 0; i < 600; i++) {
		sizes[i] = i % 50 ? 1 + t_rand64(&s) % 9000 : MPA_MAX_ULPDU;
		t_fill(buf, sizes[i], 500 + i);
		reg = t_crc32c_update(reg, buf, sizes[i]);
	}
	self->fd = ke_open(_metadata, variant->family, 0, 1, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, t_tx_start(&p, self->fd, sizes, 600, 500));
	pthread_join(p.thr, NULL);
	ASSERT_EQ(600, p.sent);
	ASSERT_EQ(0, shutdown(self->fd, SHUT_WR));
	ASSERT_WAIT(self->fd, -1, "rx", 600, &ki);
	EXPECT_KE(&ki, "rx_octets", ke_sum(sizes, 600));
	snprintf(csum, sizeof(csum), "0x%08x", ~reg);
	EXPECT_KE_IS(&ki, "csum", csum);
	EXPECT_KE(&ki, "tx", 0);
	EXPECT_KE(&ki, "res_flags", ke_flags(0, variant->mod_m, 1) |
		  (ke_num(&ki, "res_flags") & MPA_RESULT_TX_HELD));
	EXPECT_ENDS(self->fd, KE_WAIT);
	ASSERT_WAIT(self->fd, -1, "released", 1, &ki);
	EXPECT_KE(&ki, "peer_closed", 1);
	free(buf);
	close(self->fd);
}

/*
 * held: the module's Responder greets us with ULPDUs of its own as soon as
 * the connection is established. MPA holds them until our first FPDU
 * (R-7.1.2-15), and counts them in the socket's send buffer, the
 * consumer's pages included: mpa_ksend() says -EAGAIN once the buffer is
 * full, not only after the module sent greet_max (64 MiB). Our first
 * ULPDU releases them; they all arrive, then its echo; and the module's
 * writable callback tells it of room again.
 */
#define HELD_SIZE	16000
#define HELD_SEED	5000	/* mpa_echo's ECHO_GREET_SEED */

FIXTURE(held)
{
	int fd;
};

FIXTURE_VARIANT(held)
{
	int family;
	bool mod_m;
	bool user_m;
};

FIXTURE_VARIANT_ADD(held, v4) { .family = AF_INET, };
FIXTURE_VARIANT_ADD(held, v6_markers) {
	.family = AF_INET6, .mod_m = 1, .user_m = 1,
};

FIXTURE_SETUP(held)
{
	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	ASSERT_EQ(0, ke_load("greet=%d markers=%d", HELD_SIZE, variant->mod_m));
}

FIXTURE_TEARDOWN_PARENT(held)
{
	ke_restore();
}

/* tcp_wmem's maximum: a TCP socket's send buffer grows no larger. */
static long ke_wmem_max(void)
{
	long lo, def, max = -1;
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");

	if (f) {
		if (fscanf(f, "%ld %ld %ld", &lo, &def, &max) != 3)
			max = -1;
		fclose(f);
	}
	return max;
}

TEST_F_TIMEOUT(held, send_buffer, 180)
{
	static size_t sizes[4200];
	long wmem_max = ke_wmem_max();
	size_t one = 100, n, i;
	struct ke_info ki;
	uint8_t first[100];

	ASSERT_LT(0, wmem_max);
	self->fd = ke_open(_metadata, variant->family, variant->user_m, 1, 0, 0);
	ASSERT_LE(0, self->fd);
	/* the greeting stops at the first -EAGAIN */
	ASSERT_WAIT(self->fd, -1, "send_eagain", 1, &ki);
	n = ke_num(&ki, "greeted");
	TH_LOG("held: %zu ULPDUs of %d octets queued, then -EAGAIN (tcp_wmem max %ld): %s",
	       n, HELD_SIZE, wmem_max, ki.line);
	ASSERT_LT(0, n);
	ASSERT_GE(4096, n);
	EXPECT_GE(wmem_max + HELD_SIZE, (long)(n * HELD_SIZE));
	EXPECT_KE(&ki, "tx", n);
	EXPECT_KE(&ki, "writable", 0);
	/*
	 * Zero copy: the pages are MPA's until TCP lets go of them. With
	 * Markers every 512 octets a ULPDU this long takes more pieces than
	 * an FPDU record holds: it is copied, and done at once.
	 */
	EXPECT_KE(&ki, "tx_done", variant->user_m ? n : 0);
	EXPECT_KE(&ki, "kerr", 0);

	/* Our first ULPDU releases them; it comes back after them. */
	t_fill(first, one, 42);
	ASSERT_EQ((ssize_t)one, t_send(self->fd, first, one));
	for (i = 0; i < n; i++)
		sizes[i] = HELD_SIZE;
	t_rx_check(_metadata, self->fd, sizes, n, HELD_SEED);
	t_rx_check(_metadata, self->fd, &one, 1, 42);
	/* and the module was told of room again */
	ASSERT_WAIT(self->fd, -1, "writable", 1, &ki);
	echo_close(_metadata, self->fd, n + 1);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", 1);
	EXPECT_KE(&ki, "tx", n + 1);
	close(self->fd);
}

/*
 * Our FIN before any ULPDU: no FPDU of ours can end the module's hold now
 * (R-7.1.2-15). The module, told -EAGAIN by its greeting's mpa_ksend(),
 * hears closed and writable (a send no longer waits); greeting again from
 * writable (greet_retry), its mpa_ksend() fails at once with -EPIPE, and
 * nothing of the greeting reaches us.
 */
TEST_F_TIMEOUT(held, fin_first, 180)
{
	struct ke_info ki;
	char c;

	ASSERT_EQ(0, ke_load("greet=%d markers=%d keep_open=1 greet_retry=1",
			     HELD_SIZE, variant->mod_m));
	self->fd = ke_open(_metadata, variant->family, variant->user_m, 1, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_WAIT(self->fd, -1, "send_eagain", 1, &ki);
	ASSERT_EQ(0, shutdown(self->fd, SHUT_WR));
	ASSERT_WAIT(self->fd, -1, "send_epipe", 1, &ki);
	EXPECT_KE(&ki, "send_epipe", 1);
	EXPECT_KE(&ki, "kerr", -EPIPE);
	EXPECT_KE(&ki, "peer_closed", 1);
	EXPECT_KE(&ki, "errors", 0);
	EXPECT_KE(&ki, "rx", 0);
	EXPECT_EQ(-1, recv(self->fd, &c, 1, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);
	close(self->fd);
}

/*
 * noio: the module's sockets run as a consumer in the memory reclaim path
 * sets them up (sk_allocation GFP_NOIO, no task page fragment; mpa.rst,
 * "Memory"), with a small receive buffer, so that large ULPDUs go through
 * copy mode: every ULPDU still comes back.
 */
FIXTURE(noio)
{
	int fd;
};

FIXTURE_VARIANT(noio)
{
	int family;
	bool mod_m;
};

FIXTURE_VARIANT_ADD(noio, v4) { .family = AF_INET, };
FIXTURE_VARIANT_ADD(noio, v6_markers) { .family = AF_INET6, .mod_m = 1, };

FIXTURE_SETUP(noio)
{
	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	ASSERT_EQ(0, ke_load("noio=1 rcvbuf=4096 markers=%d", variant->mod_m));
}

FIXTURE_TEARDOWN_PARENT(noio)
{
	ke_restore();
}

TEST_F_TIMEOUT(noio, echo, 180)
{
	struct ke_info ki;

	self->fd = ke_open(_metadata, variant->family, 0, 1, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "noio", 1);
	echo_xfer(_metadata, self->fd, sweep, NSWEEP, 700);
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", NSWEEP);
	EXPECT_KE(&ki, "tx", NSWEEP);
	echo_close(_metadata, self->fd, NSWEEP);
	close(self->fd);
}

/*
 * slow: the module refuses every ULPDU once (-EAGAIN from its ulpdu
 * callback) and takes it @slow_ms later (mpa_kresume() from a delayed
 * work). Small buffers on both ends, so that our sends stop soon.
 */
#define SLOW_N		60
#define SLOW_SIZE	4000

FIXTURE(slow)
{
	int fd;
};

FIXTURE_VARIANT(slow)
{
	int family;
	bool sink;
	bool markers;
	int slow_ms;
};

FIXTURE_VARIANT_ADD(slow, echo_v4) {
	.family = AF_INET, .sink = 0, .markers = 0, .slow_ms = 20,
};

FIXTURE_VARIANT_ADD(slow, sink_v6) {
	.family = AF_INET6, .sink = 1, .markers = 0, .slow_ms = 20,
};

FIXTURE_VARIANT_ADD(slow, echo_v6_markers) {
	.family = AF_INET6, .sink = 0, .markers = 1, .slow_ms = 15,
};

FIXTURE_SETUP(slow)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, ke_load("slow_ms=%d rcvbuf=32768 sink=%d markers=%d",
			     variant->slow_ms, variant->sink,
			     variant->markers));
}

FIXTURE_TEARDOWN_PARENT(slow)
{
	ke_restore();
}

/* A sender that counts how often it was stopped. */
struct slow_tx {
	pthread_t thr;
	int fd;
	bool nonblock;
	size_t sent;
	int eagain;
	long longest_ms;	/* the longest send() */
	int err;
};

static void *slow_tx_run(void *arg)
{
	struct slow_tx *p = arg;
	uint8_t buf[SLOW_SIZE];
	long t0;
	ssize_t r;

	while (p->sent < SLOW_N) {
		t_fill(buf, SLOW_SIZE, 700 + p->sent);
		t0 = t_now_ms();
		r = send(p->fd, buf, SLOW_SIZE,
			 MSG_NOSIGNAL | (p->nonblock ? MSG_DONTWAIT : 0));
		if (t_now_ms() - t0 > p->longest_ms)
			p->longest_ms = t_now_ms() - t0;
		if (r == SLOW_SIZE) {
			p->sent++;
			continue;
		}
		if (r < 0 && errno == EAGAIN && p->nonblock) {
			p->eagain++;
			if (t_poll(p->fd, POLLOUT, KE_WAIT) & POLLOUT)
				continue;
		}
		p->err = r < 0 ? errno : -1;
		break;
	}
	return NULL;
}

static void slow_run(struct __test_metadata *_metadata,
		     const FIXTURE_VARIANT(slow) *variant, int *fdp,
		     bool nonblock)
{
	size_t sizes[SLOW_N];
	struct slow_tx p = {};
	uint32_t reg = ~0u;
	uint8_t buf[SLOW_SIZE];
	struct ke_info ki;
	char csum[16];
	long t0;
	size_t i;

	for (i = 0; i < SLOW_N; i++) {
		sizes[i] = SLOW_SIZE;
		t_fill(buf, SLOW_SIZE, 700 + i);
		reg = t_crc32c_update(reg, buf, SLOW_SIZE);
	}
	*fdp = ke_open(_metadata, variant->family, 0, 1, 0, 4096);
	ASSERT_LE(0, *fdp);
	p.fd = *fdp;
	p.nonblock = nonblock;
	t0 = t_now_ms();
	ASSERT_EQ(0, pthread_create(&p.thr, NULL, slow_tx_run, &p));
	if (!variant->sink)
		t_rx_check(_metadata, *fdp, sizes, SLOW_N, 700);
	pthread_join(p.thr, NULL);
	EXPECT_EQ(SLOW_N, p.sent) TH_LOG("errno %d", p.err);
	ASSERT_WAIT(*fdp, -1, "rx", SLOW_N, &ki);
	TH_LOG("%ld ms; sends stopped %d times, longest send %ld ms; module: %s",
	       t_now_ms() - t0, p.eagain, p.longest_ms, ki.line);
	/* every ULPDU was refused once, then taken after a resume */
	EXPECT_LE(SLOW_N, ke_num(&ki, "refused"));
	EXPECT_LE(SLOW_N, ke_num(&ki, "resumes"));
	EXPECT_LE((SLOW_N - 1) * variant->slow_ms, t_now_ms() - t0);
	if (nonblock) {
		EXPECT_LT(0, p.eagain);
	} else {
		EXPECT_LE(variant->slow_ms / 2, p.longest_ms);
	}
	EXPECT_KE(&ki, "rx_octets", SLOW_N * SLOW_SIZE);
	if (variant->sink) {
		snprintf(csum, sizeof(csum), "0x%08x", ~reg);
		EXPECT_KE_IS(&ki, "csum", csum);
	} else {
		EXPECT_KE(&ki, "tx", SLOW_N);
	}
	ASSERT_EQ(0, shutdown(*fdp, SHUT_WR));
	EXPECT_ENDS(*fdp, KE_WAIT);
	ASSERT_WAIT(*fdp, -1, "released", 1, &ki);
}

/* Non-blocking sends get EAGAIN until the module takes ULPDUs again. */
TEST_F_TIMEOUT(slow, nonblocking, 180)
{
	slow_run(_metadata, variant, &self->fd, true);
	close(self->fd);
}

/* Blocking sends wait for the module. */
TEST_F_TIMEOUT(slow, blocking, 180)
{
	slow_run(_metadata, variant, &self->fd, false);
	close(self->fd);
}

/*
 * answer: the module rejects the Request (ECONNREFUSED with its Private
 * Data), or answers @answer_ms late from a work item.
 */
FIXTURE(answer)
{
	int fd;
};

FIXTURE_VARIANT(answer)
{
	int family;
	bool reject;
	int answer_ms;
};

FIXTURE_VARIANT_ADD(answer, reject_v4) {
	.family = AF_INET, .reject = 1, .answer_ms = 0,
};

FIXTURE_VARIANT_ADD(answer, reject_v6) {
	.family = AF_INET6, .reject = 1, .answer_ms = 0,
};

FIXTURE_VARIANT_ADD(answer, reject_late_v4) {
	.family = AF_INET, .reject = 1, .answer_ms = 600,
};

FIXTURE_VARIANT_ADD(answer, accept_late_v6) {
	.family = AF_INET6, .reject = 0, .answer_ms = 600,
};

FIXTURE_SETUP(answer)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, ke_load("reject=%d answer_ms=%d", variant->reject,
			     variant->answer_ms));
}

FIXTURE_TEARDOWN_PARENT(answer)
{
	ke_restore();
}

TEST_F_TIMEOUT(answer, answer, 60)
{
	char got[MPA_MAX_PRIVATE_DATA];
	const char *pd = variant->reject ? KE_REJECT_PD : KE_ACCEPT_PD;
	struct mpa_frame_info fi;
	struct ke_info ki;
	int rc, err, n;
	long t0;

	self->fd = ke_tcp(variant->family, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ke_user_config(self->fd, 1, 1, KE_REQ_PD));
	ASSERT_EQ(0, ke_set_timeouts(self->fd, KE_WAIT));
	t0 = t_now_ms();
	rc = mpa_start(self->fd);
	err = errno;
	/*
	 * The answer came from the late work item, not at once. A delayed
	 * work may run up to a tick early (HZ=100 on the debug lane), and a
	 * TCG guest's clocks drift by some more: 100 ms of slack, far from
	 * the 0 ms of an answer at once.
	 */
	EXPECT_LE(variant->answer_ms - 100, t_now_ms() - t0);
	if (variant->reject) {
		EXPECT_EQ(-1, rc);
		EXPECT_EQ(ECONNREFUSED, err) TH_LOG("%s", strerror(err));
		EXPECT_MPA_STATE(self->fd, MPA_STATE_REJECTED);
	} else {
		EXPECT_EQ(0, rc) TH_LOG("%s", strerror(err));
		EXPECT_MPA_STATE(self->fd, MPA_STATE_FULL);
	}
	ASSERT_EQ(0, mpa_getstruct(self->fd, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(variant->reject ? MPA_FRAME_REJECT : 0,
		  fi.flags & MPA_FRAME_REJECT);
	n = mpa_peer_pd(self->fd, got, sizeof(got));
	ASSERT_EQ((int)strlen(pd), n);
	EXPECT_BYTES(pd, got, n);

	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_TRUE(ke_pd_is(&ki, KE_REQ_PD)) TH_LOG("%s", ki.line);
	if (variant->reject) {
		/* its Reply reaches us before the module marks its reject */
		EXPECT_EQ(0, ke_wait_is(self->fd, "state", "rejected", &ki))
			TH_LOG("state is not rejected: %s", ki.line);
		TH_LOG("module after its reject: %s", ki.line);
		/* the module closes what is left: the plain stream ends */
		EXPECT_ENDS(self->fd, KE_WAIT);
		ASSERT_WAIT(self->fd, -1, "released", 1, &ki);
	} else {
		size_t one = 777;

		ASSERT_WAIT(self->fd, -1, "rev", 1, &ki);
		EXPECT_KE_IS(&ki, "state", "full");
		echo_xfer(_metadata, self->fd, &one, 1, 800);
		echo_close(_metadata, self->fd, 1);
	}
	EXPECT_KE(&ki, "kerr", 0);
	close(self->fd);
}

/*
 * initiator: the module connects out as the Initiator to our Responder,
 * sends ULPDUs (t_fill(seed + k)), checks that what we send back is the
 * same, and closes.
 */
FIXTURE(initiator)
{
	int lfd, fd;
	struct sockaddr_storage addr;
	socklen_t len;
	char where[128];	/* "ADDR PORT" of our listener */
};

FIXTURE_VARIANT(initiator)
{
	int family;
	bool mod_m;	/* the module wants Markers */
	bool user_m;	/* we want Markers */
	bool mod_crc;
	bool user_crc;
};

#define INIT(name, fam, mm, um, mc, uc)					\
	FIXTURE_VARIANT_ADD(initiator, name)				\
	{								\
		.family = fam, .mod_m = mm, .user_m = um,		\
		.mod_crc = mc, .user_crc = uc,				\
	}

INIT(v4_m00_crc, AF_INET, 0, 0, 1, 1);
INIT(v6_m11_crc, AF_INET6, 1, 1, 1, 1);
INIT(v4_m10_crc, AF_INET, 1, 0, 1, 1);
INIT(v6_m01_crc, AF_INET6, 0, 1, 1, 1);
INIT(v6_m11_nocrc, AF_INET6, 1, 1, 0, 0);
INIT(v4_m00_nocrc, AF_INET, 0, 0, 0, 0);
INIT(v4_m01_modnocrc, AF_INET, 0, 1, 0, 1);

FIXTURE_SETUP(initiator)
{
	char a[INET6_ADDRSTRLEN];

	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	if (!variant->user_crc || !variant->mod_crc)
		ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, ke_load("port=0"));
	self->lfd = mpa_listener(variant->family, &self->addr, &self->len);
	ASSERT_LE(0, self->lfd);
	if (variant->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&self->addr;

		inet_ntop(AF_INET, &sin->sin_addr, a, sizeof(a));
		snprintf(self->where, sizeof(self->where), "%s %u", a,
			 ntohs(sin->sin_port));
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&self->addr;

		inet_ntop(AF_INET6, &sin6->sin6_addr, a, sizeof(a));
		snprintf(self->where, sizeof(self->where), "%s %u", a,
			 ntohs(sin6->sin6_port));
	}
}

FIXTURE_TEARDOWN_PARENT(initiator)
{
	ke_restore();
}

/* The module connects; we accept and read its Request. */
static int init_accept(struct __test_metadata *_metadata,
		       FIXTURE_DATA(initiator) *self,
		       const FIXTURE_VARIANT(initiator) *variant,
		       const char *extra)
{
	char got[MPA_MAX_PRIVATE_DATA];
	struct mpa_frame_info fi;
	int n;

	EXPECT_EQ(0, ke_connect("%s markers=%d crc=%d pd=%s %s", self->where,
				variant->mod_m, variant->mod_crc, KE_INIT_PD,
				extra)) TH_LOG("connect: %s", strerror(errno));
	self->fd = accept(self->lfd, NULL, NULL);
	if (self->fd < 0)
		return -1;
	if (mpa_config(self->fd, MPA_ROLE_RESPONDER, 10000) ||
	    mpa_set(self->fd, MPA_MARKERS, variant->user_m) ||
	    (!variant->user_crc && mpa_set(self->fd, MPA_CRC, 0)) ||
	    ke_set_timeouts(self->fd, KE_WAIT))
		return -1;
	if (mpa_start(self->fd)) {
		t_why(self->fd, errno);
		return -1;
	}
	EXPECT_EQ(0, mpa_getstruct(self->fd, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(1, fi.revision);
	EXPECT_EQ((variant->mod_m ? MPA_FRAME_MARKERS : 0) |
		  (variant->mod_crc ? MPA_FRAME_CRC : 0), fi.flags);
	n = mpa_peer_pd(self->fd, got, sizeof(got));
	EXPECT_EQ((int)strlen(KE_INIT_PD), n);
	if (n == (int)strlen(KE_INIT_PD))
		EXPECT_BYTES(KE_INIT_PD, got, n);
	return 0;
}

/* Every size from 1 to 64768 from the module, and back. */
TEST_F_TIMEOUT(initiator, echo, 180)
{
	bool crc = variant->user_crc || variant->mod_crc;
	char list[1024], extra[1100];
	struct mpa_result res;
	struct ke_info ki;
	struct t_tx p;

	ke_sizes_str(list, sizeof(list), sweep, NSWEEP);
	snprintf(extra, sizeof(extra), "seed=1000 sizes=%s", list);
	ASSERT_EQ(0, init_accept(_metadata, self, variant, extra));
	ASSERT_EQ(0, mpa_answer(self->fd, MPA_ACCEPT, KE_USER_PD,
				strlen(KE_USER_PD)));
	ke_result(_metadata, self->fd, &res);
	EXPECT_EQ(ke_flags(variant->mod_m, variant->user_m, crc),
		  res.flags & KE_RES_MASK);

	/* the module's ULPDUs, then ours back */
	t_rx_check(_metadata, self->fd, sweep, NSWEEP, 1000);
	ASSERT_EQ(0, t_tx_start(&p, self->fd, sweep, NSWEEP, 1000));
	pthread_join(p.thr, NULL);
	EXPECT_EQ(NSWEEP, p.sent);
	ASSERT_WAIT(-1, 1, "verified", NSWEEP, &ki);
	EXPECT_KE(&ki, "bad", 0);
	EXPECT_KE_IS(&ki, "role", "initiator");
	EXPECT_KE_IS(&ki, "state", "full");
	EXPECT_KE(&ki, "rev", 1);
	EXPECT_TRUE(ke_pd_is(&ki, KE_USER_PD)) TH_LOG("%s", ki.line);
	EXPECT_KE(&ki, "frame_flags", (variant->user_m ? MPA_FRAME_MARKERS : 0) |
		  (crc ? MPA_FRAME_CRC : 0));
	EXPECT_EQ(ke_flags(variant->user_m, variant->mod_m, crc),
		  ke_num(&ki, "res_flags") & KE_RES_MASK) TH_LOG("%s", ki.line);
	EXPECT_KE(&ki, "tx", NSWEEP);
	EXPECT_KE(&ki, "tx_octets", ke_sum(sweep, NSWEEP));
	/* all came back: the module closes */
	EXPECT_ENDS(self->fd, KE_WAIT);
	ASSERT_WAIT(-1, 1, "released", 1, &ki);
	ASSERT_WAIT(-1, 1, "tx_done", NSWEEP, &ki);
	EXPECT_KE(&ki, "err_code", 0);
	EXPECT_KE(&ki, "kerr", 0);
	close(self->fd);
	close(self->lfd);
}

/* We reject the module's Request: it sees R=1 and our Private Data. */
TEST_F_TIMEOUT(initiator, rejected, 60)
{
	struct ke_info ki;

	ASSERT_EQ(0, init_accept(_metadata, self, variant, "sizes=10"));
	ASSERT_EQ(0, mpa_answer(self->fd, MPA_REJECT, KE_USER_NO,
				strlen(KE_USER_NO)));
	EXPECT_MPA_STATE(self->fd, MPA_STATE_REJECTED);
	ASSERT_WAIT(-1, 1, "released", 1, &ki);
	EXPECT_KE_IS(&ki, "state", "rejected");
	EXPECT_TRUE(ke_pd_is(&ki, KE_USER_NO)) TH_LOG("%s", ki.line);
	EXPECT_EQ(MPA_FRAME_REJECT, ke_num(&ki, "frame_flags") & MPA_FRAME_REJECT);
	/* the reply callback, then the error callback: rejected */
	EXPECT_KE(&ki, "err_reason", MPA_REASON_REJECTED);
	EXPECT_KE(&ki, "err_errno", ECONNREFUSED);
	EXPECT_KE(&ki, "tx", 0);
	/* the plain stream behind the Reply ends */
	EXPECT_ENDS(self->fd, KE_WAIT);
	close(self->fd);
	close(self->lfd);
}

/*
 * errors: a raw TCP Initiator frames by hand (mpa_test.h's encoder) and
 * breaks the rules; the module (a sink) hears of it through its error
 * callback, then closes.
 */
FIXTURE(errors)
{
	int fd;
	uint8_t fpdu[T_FPDU_MAX];
	uint8_t ulpdu[2000];
};

FIXTURE_SETUP(errors)
{
	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
	t_fill(self->ulpdu, sizeof(self->ulpdu), 42);
}

FIXTURE_TEARDOWN_PARENT(errors)
{
	ke_restore();
}

/* Our Request (Rev 1, @flags); the module's Reply read and checked. */
static int raw_start(struct __test_metadata *_metadata, int family,
		     uint8_t flags, bool mod_m)
{
	size_t rep_len = T_HDR + strlen(KE_ACCEPT_PD);
	uint8_t fr[T_FRAME_MAX];
	struct t_hdr_view h;
	size_t n;
	int fd;

	fd = ke_tcp(family, 0, 0);
	EXPECT_LE(0, fd);
	if (fd < 0)
		return -1;
	n = t_frame(fr, false, flags, 1, KE_REQ_PD, strlen(KE_REQ_PD));
	EXPECT_EQ((ssize_t)n, t_send(fd, fr, n));
	EXPECT_EQ((ssize_t)rep_len, t_read(fd, fr, rep_len, KE_WAIT));
	t_parse(fr, &h);
	EXPECT_EQ('p', h.key);
	EXPECT_EQ(1, h.rev);
	EXPECT_EQ((mod_m ? T_M : 0) | T_C, fr[16]);
	EXPECT_EQ(strlen(KE_ACCEPT_PD), h.pd_length);
	return fd;
}

/* The module's error callback said @code, @reason; then it closed. */
static void raw_expect_error(struct __test_metadata *_metadata, int fd,
			     int code, int reason, const char *state)
{
	struct ke_info ki;

	ASSERT_WAIT(fd, -1, "err_code", code, &ki);
	EXPECT_KE(&ki, "err_code", code);
	EXPECT_KE(&ki, "err_reason", reason);
	EXPECT_KE_IS(&ki, "state", state);
	EXPECT_ENDS(fd, KE_WAIT);
	ASSERT_WAIT(fd, -1, "released", 1, &ki);
	EXPECT_KE(&ki, "kerr", 0);
}

/*
 * Reset our connection *@fd (closed, -1 after) and wait for the module to
 * release its end; @ki gets the connection's last line. Return: 0, or -1
 * when the module's line for it is gone.
 */
static int ke_abort_wait_released(int *fd, struct ke_info *ki)
{
	long end = t_now_ms() + KE_WAIT;
	char peer[128];

	ke_peer_of(*fd, peer, sizeof(peer));
	mpa_close_abort(*fd);
	*fd = -1;
	do {
		t_sleep_ms(10);
		if (ke_find("peer", peer, ki))
			return -1;
	} while (ke_num(ki, "released") != 1 && t_now_ms() < end);
	return 0;
}

/* A Request with a wrong Key: startup error, code 4. */
TEST_F(errors, bad_request)
{
	static const char junk[T_HDR] = "GET / HTTP/1.0\r\n\r\n.";

	ASSERT_EQ(0, ke_load("sink=1"));
	self->fd = ke_tcp(AF_INET, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(T_HDR, t_send(self->fd, junk, T_HDR));
	raw_expect_error(_metadata, self->fd, MPA_ERR_STARTUP,
			 MPA_REASON_BAD_KEY, "failed");
	close(self->fd);
}

/* No Request within the module's timeout_ms: code 4. */
TEST_F(errors, timeout)
{
	long t0 = t_now_ms();

	ASSERT_EQ(0, ke_load("sink=1 timeout_ms=500"));
	self->fd = ke_tcp(AF_INET6, 0, 0);
	ASSERT_LE(0, self->fd);
	raw_expect_error(_metadata, self->fd, MPA_ERR_STARTUP,
			 MPA_REASON_TIMEOUT, "failed");
	EXPECT_LE(500, t_now_ms() - t0);
	close(self->fd);
}

/* A good FPDU, then one with a bad CRC: code 2. */
TEST_F(errors, crc)
{
	struct ke_info ki;
	size_t w1, w2;

	ASSERT_EQ(0, ke_load("sink=1"));
	self->fd = raw_start(_metadata, AF_INET, T_C, false);
	ASSERT_LE(0, self->fd);
	w1 = t_fpdu_encode(self->fpdu, 0, false, self->ulpdu, 100, NULL);
	ASSERT_EQ((ssize_t)w1, t_send(self->fd, self->fpdu, w1));
	ASSERT_WAIT(self->fd, -1, "rx", 1, &ki);
	w2 = t_fpdu_encode(self->fpdu, w1, false, self->ulpdu, 1000, NULL);
	self->fpdu[w2 - 1] ^= 0x10;
	ASSERT_EQ((ssize_t)w2, t_send(self->fd, self->fpdu, w2));
	raw_expect_error(_metadata, self->fd, MPA_ERR_CRC, MPA_REASON_CRC,
			 "full");
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", 1);
	close(self->fd);
}

/* A Marker whose FPDUPTR is off (CRC good): code 3. */
TEST_F(errors, marker)
{
	struct t_fpdu_info info;
	struct ke_info ki;
	size_t w1, w2, off;
	uint16_t ptr;

	ASSERT_EQ(0, ke_load("sink=1 markers=1"));
	self->fd = raw_start(_metadata, AF_INET6, T_C, true);
	ASSERT_LE(0, self->fd);
	w1 = t_fpdu_encode(self->fpdu, 0, true, self->ulpdu, 1000, NULL);
	ASSERT_EQ((ssize_t)w1, t_send(self->fd, self->fpdu, w1));
	ASSERT_WAIT(self->fd, -1, "rx", 1, &ki);
	w2 = t_fpdu_encode(self->fpdu, w1, true, self->ulpdu, 1500, &info);
	ASSERT_LT(1, info.markers);
	off = info.marker_off[info.markers - 1];
	ptr = t_get_be16(self->fpdu + off + 2);
	t_put_be16(self->fpdu + off + 2, ptr + 4);
	t_fpdu_recrc(self->fpdu, w2);
	ASSERT_EQ((ssize_t)w2, t_send(self->fd, self->fpdu, w2));
	raw_expect_error(_metadata, self->fd, MPA_ERR_MARKER,
			 MPA_REASON_MARKER, "full");
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", 1);
	close(self->fd);
}

/* Our FIN inside an FPDU: code 1, truncated; the half FPDU is not had. */
TEST_F(errors, truncated)
{
	struct ke_info ki;
	size_t w1, w2;

	ASSERT_EQ(0, ke_load("sink=1"));
	self->fd = raw_start(_metadata, AF_INET, T_C, false);
	ASSERT_LE(0, self->fd);
	w1 = t_fpdu_encode(self->fpdu, 0, false, self->ulpdu, 10, NULL);
	w2 = t_fpdu_encode(self->fpdu + w1, w1, false, self->ulpdu, 1000,
			   NULL);
	ASSERT_EQ((ssize_t)(w1 + w2 / 2),
		  t_send(self->fd, self->fpdu, w1 + w2 / 2));
	ASSERT_WAIT(self->fd, -1, "rx", 1, &ki);
	ASSERT_EQ(0, shutdown(self->fd, SHUT_WR));
	raw_expect_error(_metadata, self->fd, MPA_ERR_TCP_CLOSED,
			 MPA_REASON_TRUNCATED, "full");
	ASSERT_EQ(0, ke_get_fd(self->fd, &ki));
	EXPECT_KE(&ki, "rx", 1);
	EXPECT_KE(&ki, "rx_octets", 10);
	EXPECT_KE(&ki, "peer_closed", 0);
	close(self->fd);
}

/* A reset after a good FPDU: code 1. */
TEST_F(errors, reset)
{
	struct ke_info ki;
	size_t w1;

	ASSERT_EQ(0, ke_load("sink=1"));
	self->fd = raw_start(_metadata, AF_INET6, T_C, false);
	ASSERT_LE(0, self->fd);
	w1 = t_fpdu_encode(self->fpdu, 0, false, self->ulpdu, 333, NULL);
	ASSERT_EQ((ssize_t)w1, t_send(self->fd, self->fpdu, w1));
	ASSERT_WAIT(self->fd, -1, "rx", 1, &ki);
	ASSERT_EQ(0, ke_abort_wait_released(&self->fd, &ki));
	EXPECT_KE(&ki, "released", 1);
	EXPECT_KE(&ki, "err_code", MPA_ERR_TCP_CLOSED);
	EXPECT_KE(&ki, "err_reason", MPA_REASON_PEER_CLOSED);
	EXPECT_KE(&ki, "rx", 1);
	EXPECT_KE(&ki, "peer_closed", 0);
}

/*
 * The peer closes its half at an FPDU boundary (the closed callback; the
 * module stays open, as it may to send), then resets: the error callback
 * still tells, code 1, once, with TCP's errno for a reset after the
 * peer's FIN (EPIPE: tcp_reset() in CLOSE_WAIT).
 */
TEST_F(errors, reset_after_close)
{
	struct ke_info ki;
	size_t w1;

	ASSERT_EQ(0, ke_load("sink=1 keep_open=1"));
	self->fd = raw_start(_metadata, AF_INET, T_C, false);
	ASSERT_LE(0, self->fd);
	w1 = t_fpdu_encode(self->fpdu, 0, false, self->ulpdu, 333, NULL);
	ASSERT_EQ((ssize_t)w1, t_send(self->fd, self->fpdu, w1));
	ASSERT_EQ(0, shutdown(self->fd, SHUT_WR));
	ASSERT_WAIT(self->fd, -1, "peer_closed", 1, &ki);
	EXPECT_KE(&ki, "rx", 1);
	EXPECT_KE(&ki, "err_errno", 0);
	EXPECT_KE(&ki, "released", 0);
	ASSERT_EQ(0, ke_abort_wait_released(&self->fd, &ki));
	EXPECT_KE(&ki, "released", 1);
	EXPECT_KE(&ki, "err_code", MPA_ERR_TCP_CLOSED);
	EXPECT_KE(&ki, "err_reason", MPA_REASON_PEER_CLOSED);
	EXPECT_KE(&ki, "err_errno", EPIPE);
	EXPECT_KE(&ki, "errors", 1);
	EXPECT_KE(&ki, "peer_closed", 1);
	EXPECT_KE(&ki, "rx", 1);
}

/*
 * We reset while the module judges our Request (it answers only after
 * answer_ms, a minute): the startup fails at once with code 1, not at the
 * answer or at the startup timeout (code 4), and the module closes.
 */
TEST_F_TIMEOUT(errors, reset_before_answer, 60)
{
	uint8_t fr[T_FRAME_MAX];
	struct ke_info ki;
	size_t n;

	ASSERT_EQ(0, ke_load("sink=1 answer_ms=60000 timeout_ms=60000"));
	self->fd = ke_tcp(AF_INET6, 0, 0);
	ASSERT_LE(0, self->fd);
	n = t_frame(fr, false, T_C, 1, KE_REQ_PD, strlen(KE_REQ_PD));
	ASSERT_EQ((ssize_t)n, t_send(self->fd, fr, n));
	/* the request callback ran: the module judges it */
	ASSERT_WAIT(self->fd, -1, "frame_rev", 1, &ki);
	ASSERT_EQ(0, ke_abort_wait_released(&self->fd, &ki));
	EXPECT_KE(&ki, "released", 1);
	EXPECT_KE_IS(&ki, "state", "failed");
	EXPECT_KE(&ki, "err_code", MPA_ERR_TCP_CLOSED);
	EXPECT_KE(&ki, "err_reason", MPA_REASON_PEER_CLOSED);
	EXPECT_KE(&ki, "err_errno", ECONNRESET);
	EXPECT_KE(&ki, "errors", 1);
}

/* misc: one of each */
FIXTURE(misc)
{
	int fd;
};

FIXTURE_SETUP(misc)
{
	signal(SIGPIPE, SIG_IGN);
	self->fd = -1;
}

FIXTURE_TEARDOWN_PARENT(misc)
{
	ke_restore();
}

/* An Initiator to where nothing listens: the write fails. */
TEST_F(misc, connect_refused)
{
	ASSERT_EQ(0, ke_load(""));
	EXPECT_EQ(-1, ke_connect("127.0.0.1 1"));
	EXPECT_EQ(ECONNREFUSED, errno);
	EXPECT_EQ(-1, ke_connect("::1 1 markers=1"));
	EXPECT_EQ(ECONNREFUSED, errno);
	/* and what the module cannot parse */
	EXPECT_EQ(-1, ke_connect("127.0.0.1 %d sizes=0", KE_PORT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ke_connect("127.0.0.1 %d sizes=64769", KE_PORT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ke_connect("not-an-address %d", KE_PORT));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ke_count());
}

/*
 * C=0 needs the administrator's crc-off-allowed: without it mpa_kattach()
 * refuses (EPERM) and the module closes the connection.
 */
TEST_F(misc, no_crc_refused)
{
	struct ke_info ki;

	size_t data;

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 0));
	ASSERT_EQ(0, ke_load("crc=0"));
	self->fd = ke_tcp(AF_INET, 0, 0);
	ASSERT_LE(0, self->fd);
	/* closed at once, without a word */
	EXPECT_EQ(0, ke_wait_end(self->fd, KE_WAIT, &data));
	EXPECT_EQ(0, data);
	ASSERT_WAIT(self->fd, -1, "released", 1, &ki);
	EXPECT_KE_IS(&ki, "state", "failed");
	EXPECT_KE(&ki, "kerr", -EPERM);
	EXPECT_KE(&ki, "released", 1);
	close(self->fd);
}

/* Rev 2 with our Initiator: IRD/ORD cross-mapped, one RTR type. */
TEST_F(misc, rev2_responder)
{
	struct mpa_result res;
	struct ke_info ki;
	size_t one = 100;

	ASSERT_EQ(0, ke_load("ird=2 ord=7 rtr=%d", MPA_RTR_ALL));
	self->fd = ke_tcp(AF_INET6, 0, 0);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ke_user_config(self->fd, 0, 1, KE_REQ_PD));
	ASSERT_EQ(0, mpa_set(self->fd, MPA_REVISION, 2));
	ASSERT_EQ(0, mpa_set_enh(self->fd, 10, 3, MPA_ENH_PEER_TO_PEER,
				 MPA_RTR_READ | MPA_RTR_SEND));
	ASSERT_EQ(0, ke_set_timeouts(self->fd, KE_WAIT));
	ASSERT_START(self->fd);
	ke_result(_metadata, self->fd, &res);
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED | MPA_RESULT_PEER_TO_PEER,
		  res.flags & KE_RES_MASK);
	EXPECT_EQ(MPA_RTR_READ, res.rtr);
	EXPECT_EQ(7, res.ird);
	EXPECT_EQ(2, res.ord);
	ASSERT_WAIT(self->fd, -1, "rev", 2, &ki);
	EXPECT_KE(&ki, "rtr", MPA_RTR_READ);
	EXPECT_KE(&ki, "ird", 2);	/* min(2, our ord 3) */
	EXPECT_KE(&ki, "ord", 7);	/* min(7, our ird 10) */
	EXPECT_KE(&ki, "frame_rev", 2);
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED | MPA_RESULT_PEER_TO_PEER,
		  ke_num(&ki, "res_flags") & KE_RES_MASK);
	EXPECT_TRUE(ke_pd_is(&ki, KE_REQ_PD)) TH_LOG("%s", ki.line);
	echo_xfer(_metadata, self->fd, &one, 1, 900);
	echo_close(_metadata, self->fd, 1);
	close(self->fd);
}

/* Rev 2 with the module's Initiator. */
TEST_F(misc, rev2_initiator)
{
	struct sockaddr_storage addr;
	struct mpa_frame_info fi;
	struct mpa_result res;
	struct ke_info ki;
	size_t one = 100;
	struct t_tx p;
	socklen_t len;
	int lfd;

	ASSERT_EQ(0, ke_load("port=0"));
	lfd = mpa_listener(AF_INET, &addr, &len);
	ASSERT_LE(0, lfd);
	EXPECT_EQ(0, ke_connect("127.0.0.1 %u rev=2 ird=10 ord=3 p2p=1 rtr=%d sizes=100 seed=5",
				ntohs(((struct sockaddr_in *)&addr)->sin_port),
				MPA_RTR_READ | MPA_RTR_SEND));
	self->fd = accept(lfd, NULL, NULL);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, mpa_config(self->fd, MPA_ROLE_RESPONDER, 10000));
	ASSERT_EQ(0, mpa_set_enh(self->fd, 2, 7, 0, MPA_RTR_ALL));
	ASSERT_EQ(0, ke_set_timeouts(self->fd, KE_WAIT));
	ASSERT_START(self->fd);
	ASSERT_EQ(0, mpa_getstruct(self->fd, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(2, fi.revision);
	EXPECT_EQ(MPA_FRAME_CRC | MPA_FRAME_ENHANCED | MPA_FRAME_PEER_TO_PEER,
		  fi.flags);
	EXPECT_EQ(MPA_RTR_READ | MPA_RTR_SEND, fi.rtr);
	EXPECT_EQ(10, fi.ird);
	EXPECT_EQ(3, fi.ord);
	ASSERT_EQ(0, mpa_answer(self->fd, MPA_ACCEPT, NULL, 0));
	ke_result(_metadata, self->fd, &res);
	EXPECT_EQ(2, res.revision);
	EXPECT_EQ(MPA_RTR_READ, res.rtr);
	t_rx_check(_metadata, self->fd, &one, 1, 5);
	ASSERT_EQ(0, t_tx_start(&p, self->fd, &one, 1, 5));
	pthread_join(p.thr, NULL);
	ASSERT_WAIT(-1, 1, "verified", 1, &ki);
	EXPECT_KE(&ki, "rev", 2);
	EXPECT_KE(&ki, "rtr", MPA_RTR_READ);
	EXPECT_KE(&ki, "ird", 7);	/* min(10, our ord 7) */
	EXPECT_KE(&ki, "ord", 2);	/* min(3, our ird 2) */
	EXPECT_EQ(MPA_RESULT_CRC | MPA_RESULT_ENHANCED | MPA_RESULT_PEER_TO_PEER,
		  ke_num(&ki, "res_flags") & KE_RES_MASK);
	EXPECT_TRUE(ke_pd_is(&ki, "")) TH_LOG("%s", ki.line);
	EXPECT_ENDS(self->fd, KE_WAIT);
	close(self->fd);
	close(lfd);
}

/* Many connections at once, IPv4 and IPv6, each echoing in a thread. */
#define CONC_N		6
#define CONC_ULPDUS	300

struct conc {
	pthread_t thr;
	int fd;
	int family;
	size_t sizes[CONC_ULPDUS];
	uint64_t seed;
	size_t got;		/* ULPDUs echoed right */
	int err;
};

static void *conc_run(void *arg)
{
	struct conc *c = arg;
	uint8_t *exp = malloc(T_ULPDU_BUF), *got = malloc(T_ULPDU_BUF);
	struct t_tx p;
	size_t k;
	ssize_t r;
	int fl;

	if (!exp || !got || t_tx_start(&p, c->fd, c->sizes, CONC_ULPDUS,
					c->seed)) {
		c->err = -1;
		goto out;
	}
	for (k = 0; k < CONC_ULPDUS; k++) {
		r = t_recv_flags(c->fd, got, T_ULPDU_BUF, 0, &fl);
		if (r != (ssize_t)c->sizes[k] || !(fl & MSG_EOR)) {
			c->err = r < 0 ? errno : -2;
			break;
		}
		t_fill(exp, c->sizes[k], c->seed + k);
		if (memcmp(exp, got, r)) {
			c->err = -3;
			break;
		}
		c->got++;
	}
	pthread_join(p.thr, NULL);
out:
	free(exp);
	free(got);
	return NULL;
}

TEST_F_TIMEOUT(misc, concurrent, 300)
{
	static struct conc cs[CONC_N];
	struct ke_info ki;
	uint64_t s = 77;
	int i, k;

	ASSERT_EQ(0, ke_load("markers=1"));
	for (i = 0; i < CONC_N; i++) {
		cs[i].family = i % 2 ? AF_INET6 : AF_INET;
		cs[i].seed = 10000 * (i + 1);
		for (k = 0; k < CONC_ULPDUS; k++)
			cs[i].sizes[k] = 1 + t_rand64(&s) % (k % 10 ? 3000 : 40000);
		cs[i].fd = echo_open(_metadata, &(FIXTURE_VARIANT(echo)){
			.family = cs[i].family, .user_m = i % 3 == 0,
			.mod_m = 1, .user_crc = 1, .mod_crc = 1, },
			0, 0);
		ASSERT_LE(0, cs[i].fd);
	}
	for (i = 0; i < CONC_N; i++)
		ASSERT_EQ(0, pthread_create(&cs[i].thr, NULL, conc_run, &cs[i]));
	for (i = 0; i < CONC_N; i++) {
		pthread_join(cs[i].thr, NULL);
		EXPECT_EQ(CONC_ULPDUS, cs[i].got) TH_LOG("connection %d: %d", i,
							  cs[i].err);
	}
	EXPECT_EQ(CONC_N, ke_count());
	for (i = 0; i < CONC_N; i++) {
		ASSERT_EQ(0, ke_get_fd(cs[i].fd, &ki));
		EXPECT_KE(&ki, "rx", CONC_ULPDUS);
		EXPECT_KE(&ki, "rx_octets", ke_sum(cs[i].sizes, CONC_ULPDUS));
		echo_close(_metadata, cs[i].fd, CONC_ULPDUS);
		close(cs[i].fd);
	}
}

/*
 * unload: rmmod mpa_echo with connections open. The module detaches MPA
 * from each (mpa_kdetach()), closes it and waits for TCP to let go of its
 * pages; our ends see end of file or a reset, the module is gone, and the
 * kernel log stays clean (the runner checks that).
 */
/*
 * closing: FPDUs wait in MPA's queue, not in TCP's, when the module
 * releases the socket: TCP_NOTSENT_LOWAT (the namespace's sysctl, which
 * kernel sockets follow) stops TCP early, and our small receive buffer
 * makes it build small segments, so that it stops inside an FPDU.
 */
#define KE_LOWAT_SYSCTL	"/proc/sys/net/ipv4/tcp_notsent_lowat"

FIXTURE(closing)
{
	int fd, lfd;
	char lowat[32];
	uint8_t *buf, *exp;
};

FIXTURE_SETUP(closing)
{
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	self->fd = self->lfd = -1;
	self->buf = malloc(T_FPDU_MAX);
	self->exp = malloc(T_FPDU_MAX);
	ASSERT_NE(NULL, self->buf);
	ASSERT_NE(NULL, self->exp);
	f = fopen(KE_LOWAT_SYSCTL, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(self->lowat, sizeof(self->lowat), f));
	fclose(f);
	ASSERT_EQ(0, t_sh("echo 16384 > " KE_LOWAT_SYSCTL));
}

/* In the parent, whatever happened to the test (self is shared) */
FIXTURE_TEARDOWN_PARENT(closing)
{
	FILE *f = fopen(KE_LOWAT_SYSCTL, "w");

	if (f) {
		fputs(self->lowat[0] ? self->lowat : "4294967295\n", f);
		fclose(f);
	}
	ke_restore();
}

/* Read raw octets until @n are there, or @ms pass: how many there are. */
static size_t closing_fill(int fd, uint8_t *buf, size_t have, size_t n,
			   int ms)
{
	ssize_t r = t_read(fd, buf + have, n - have, ms);

	return have + (r > 0 ? r : 0);
}

/*
 * The module's Initiator sends 64768-octet ULPDUs (t_fill(@seed + k)) to our
 * raw Responder, self->fd, which reads none of them, until its sends stop:
 * TCP has no room and MPA holds the rest. @ki: its line then.
 */
static void closing_stall(struct __test_metadata *_metadata,
			  FIXTURE_DATA(closing) *self, uint64_t seed,
			  struct ke_info *ki)
{
	struct sockaddr_storage addr;
	uint8_t fr[T_FRAME_MAX];
	int small = 4096;
	socklen_t alen;
	size_t rep_len;

	ASSERT_EQ(0, ke_load("port=0"));
	self->lfd = mpa_listener(AF_INET, &addr, &alen);
	ASSERT_LE(0, self->lfd);
	ASSERT_EQ(0, setsockopt(self->lfd, SOL_SOCKET, SO_RCVBUF, &small,
				sizeof(small)));
	ASSERT_EQ(0, ke_connect("127.0.0.1 %u sizes=64768 repeat=50 seed=%llu",
				ntohs(((struct sockaddr_in *)&addr)->sin_port),
				(unsigned long long)seed));
	self->fd = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(T_HDR + strlen(KE_INIT_PD),
		  t_read(self->fd, fr, T_HDR + strlen(KE_INIT_PD), KE_WAIT));
	rep_len = t_frame(fr, true, T_C, 1, NULL, 0);
	ASSERT_EQ((ssize_t)rep_len, t_send(self->fd, fr, rep_len));
	ASSERT_WAIT(-1, 1, "send_eagain", 1, ki);
	TH_LOG("the module's sends stopped: %s", ki->line);
}

/*
 * The module's Initiator sends 64768-octet ULPDUs to our raw Responder,
 * which reads none of them, until its sends stop; then our FPDU with a bad
 * CRC has its error callback close: sock_release() from its work item.
 * It must return (released=1) without our reading anything, and then we
 * read every ULPDU the module sent, intact, and a FIN.
 */
TEST_F_TIMEOUT(closing, queued_error, 120)
{
	size_t len, have = 0, k, nsent;
	static uint8_t want[MPA_MAX_ULPDU];
	uint8_t ulpdu[100];
	struct t_fpdu_dec d;
	struct ke_info ki;
	uint64_t seed = 4242;
	char why[128];
	int ret;

	closing_stall(_metadata, self, seed, &ki);
	nsent = ke_num(&ki, "tx");

	t_fill(ulpdu, sizeof(ulpdu), 1);
	len = t_fpdu_encode(self->buf, 0, false, ulpdu, sizeof(ulpdu), NULL);
	self->buf[len - 1] ^= 1;
	ASSERT_EQ((ssize_t)len, t_send(self->fd, self->buf, len));
	ASSERT_WAIT(-1, 1, "released", 1, &ki);
	EXPECT_KE(&ki, "err_code", MPA_ERR_CRC);
	nsent = ke_num(&ki, "tx");
	ASSERT_LE(1, nsent);

	/* every ULPDU it sent arrives intact, then the FIN */
	ASSERT_EQ(0, t_set_timeo(self->fd, SO_RCVTIMEO, KE_WAIT));
	for (k = 0; k < nsent; k++) {
		for (;;) {
			ret = t_fpdu_decode(self->buf, have, 0, false, true,
					    self->exp, &d, why, sizeof(why));
			if (ret)
				break;
			len = have;
			have = closing_fill(self->fd, self->buf, have,
					    have + 4096 > T_FPDU_MAX ?
					    T_FPDU_MAX : have + 4096, KE_WAIT);
			if (have == len)
				break;
		}
		ASSERT_EQ(1, ret) TH_LOG("ULPDU %zu of %zu: %s (%zu octets)",
					 k, nsent, why, have);
		ASSERT_EQ(MPA_MAX_ULPDU, d.len);
		t_fill(want, MPA_MAX_ULPDU, seed + k);
		EXPECT_EQ(0, memcmp(want, self->exp, d.len))
			TH_LOG("ULPDU %zu of %zu differs", k, nsent);
		memmove(self->buf, self->buf + d.wire, have - d.wire);
		have -= d.wire;
	}
	EXPECT_EQ(0, have);
	EXPECT_EQ(0, recv(self->fd, self->buf, 1, 0))
		TH_LOG("no FIN after %zu ULPDUs: errno %d", nsent, errno);
}

/*
 * Our Initiator sends ULPDUs the module echoes, and reads none of the
 * echoes, until the module's sends stop; then rmmod mpa_echo, which closes
 * with SO_LINGER 0: it returns at once and we see a reset.
 */
TEST_F_TIMEOUT(closing, queued_unload, 120)
{
	char got[MPA_MAX_PRIVATE_DATA];
	struct ke_info ki;
	long end;
	size_t k;
	ssize_t r;
	bool gone;

	ASSERT_EQ(0, ke_load(""));
	self->fd = ke_tcp2(AF_INET6, 0, 0, 4096);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ke_user_config(self->fd, 0, 1, KE_REQ_PD));
	ASSERT_EQ(0, mpa_start(self->fd));
	ASSERT_EQ((int)strlen(KE_ACCEPT_PD),
		  mpa_peer_pd(self->fd, got, sizeof(got)));
	t_fill(self->buf, MPA_MAX_ULPDU, 9);
	ASSERT_EQ(0, t_nonblock(self->fd));
	for (k = 0; k < 200; k++) {
		r = send(self->fd, self->buf, MPA_MAX_ULPDU, MSG_NOSIGNAL);
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			if (!(t_poll(self->fd, POLLOUT, 300) & POLLOUT))
				break;
		}
	}
	ASSERT_WAIT(self->fd, -1, "send_eagain", 1, &ki);
	TH_LOG("the module's sends stopped: %s", ki.line);

	/* rmmod, in the background: it must not wait for us */
	ASSERT_EQ(0, t_sh("rmmod mpa_echo > /dev/null 2>&1 &"));
	end = t_now_ms() + KE_WAIT;
	while (ke_loaded() && t_now_ms() < end)
		t_sleep_ms(20);
	gone = !ke_loaded();
	if (!gone) {
		/* let it finish: take what it sends */
		end = t_now_ms() + KE_WAIT;
		while (ke_loaded() && t_now_ms() < end)
			recv(self->fd, self->buf, T_FPDU_MAX, MSG_DONTWAIT);
	}
	EXPECT_TRUE(gone) TH_LOG("rmmod waited for the peer to read");
	/* whole ULPDUs, then the reset */
	ASSERT_EQ(0, t_blocking(self->fd));
	while ((r = recv(self->fd, self->buf, T_FPDU_MAX, 0)) > 0)
		ASSERT_EQ(MPA_MAX_ULPDU, r);
	EXPECT_EQ(-1, r);
	EXPECT_EQ(ECONNRESET, errno);
}

/*
 * The module's Initiator sends to our raw Responder, which reads none of
 * it, until MPA holds FPDUs TCP has no room for; then we reset. The reset
 * must reach the consumer as one: error code 1 with ECONNRESET, not an
 * end of file. MPA's work, woken by the reset, pushes what it holds before
 * it reports; that push must not take the socket's error from the
 * consumer (TCP's sendmsg on a closed socket reads and clears it).
 */
TEST_F_TIMEOUT(closing, queued_reset, 120)
{
	__u64 before, after;
	struct ke_info ki;

	ASSERT_EQ(0, t_sh("modprobe mpa"));
	ASSERT_EQ(0, mpa_stats_get1(MPA_A_STATS_TX_FPDUS, &before));
	closing_stall(_metadata, self, 1, &ki);
	/* MPA holds some: TCP did not take every ULPDU the module sent */
	ASSERT_EQ(0, mpa_stats_get1(MPA_A_STATS_TX_FPDUS, &after));
	ASSERT_GT(ke_num(&ki, "tx"), (long long)(after - before));
	/* SO_LINGER {1, 0}: the close resets */
	mpa_close_abort(self->fd);
	self->fd = -1;
	ASSERT_WAIT(-1, 1, "released", 1, &ki);
	EXPECT_KE(&ki, "err_code", MPA_ERR_TCP_CLOSED);
	EXPECT_KE(&ki, "err_reason", MPA_REASON_PEER_CLOSED);
	EXPECT_KE(&ki, "err_errno", ECONNRESET);
	EXPECT_KE(&ki, "peer_closed", 0);
}

/*
 * flood: the module closes connections while raw peers flood them. Each
 * round a raw peer sends either junk for a Request (the module's error
 * callback closes in the startup phase) or a Request, reads the Reply (an
 * Initiator sends nothing behind its Request before it has the Reply,
 * requirements A6) and then floods FPDUs, one of them with a bad CRC (it
 * closes in Full Operation, in copy mode: the module's receive buffer is
 * small; slow_ms has it refuse each ULPDU once and take it with
 * mpa_kresume() a millisecond later), and goes on flooding until the
 * connection is reset. Then mpa_echo unloads, and mpa.
 */
#define F_ROUNDS	200
#define F_WORKERS	2
#define F_FPDUS		8

/* The floods: a Request, FPDUs (one bad), good FPDUs again and again */
static uint8_t *f_data;
static size_t f_req_len, f_len, f_loop, f_bad_end;
static uint8_t f_junk[4096];

static void f_build(void)
{
	uint8_t *u = malloc(20000);
	size_t k, n;

	if (f_data || !u)
		goto out;
	f_data = malloc(T_FRAME_MAX + 2 * F_FPDUS * 20100);
	if (!f_data)
		goto out;
	f_len = t_frame(f_data, false, T_C, 1, KE_REQ_PD, strlen(KE_REQ_PD));
	f_req_len = f_len;
	for (k = 0; k < 2 * F_FPDUS; k++) {
		n = 1000 + k * 1237 % 19000;
		t_fill(u, n, k);
		if (k == F_FPDUS)
			f_loop = f_len;
		n = t_fpdu_encode(f_data + f_len, 0, false, u, n, NULL);
		if (k == F_FPDUS / 2) {
			f_data[f_len + n - 1] ^= 0x20;
			f_bad_end = f_len + n;
		}
		f_len += n;
	}
	t_fill(f_junk, sizeof(f_junk), 77);
out:
	free(u);
}

struct f_worker {
	pthread_t thr;
	int id;
	unsigned int rounds;
	uint64_t seed;
	unsigned long done, junk, fails;
	char why[200];
};

static void f_round(struct f_worker *w)
{
	struct t_flood f = { .cpu = w->id % 2, .seed = t_rand64(&w->seed),
			     .chunk_max = 8192 };
	struct timeval tv = { .tv_usec = 200000 };
	bool junk = t_rand64(&w->seed) % 4 == 0;
	long end;

	f.fd = ke_tcp(w->seed & 1 ? AF_INET6 : AF_INET, 0, 0);
	if (f.fd < 0) {
		if (!w->fails++)
			snprintf(w->why, sizeof(w->why), "connect: %s",
				 strerror(errno));
		return;
	}
	setsockopt(f.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (junk) {
		f.data = f_junk;
		f.len = sizeof(f_junk);
		f.loop = 0;
	} else {
		uint8_t rep[T_HDR + sizeof(KE_ACCEPT_PD) - 1];

		/* the Request, and the Reply, before any FPDU */
		if (t_send(f.fd, f_data, f_req_len) != (ssize_t)f_req_len ||
		    t_read(f.fd, rep, sizeof(rep), KE_WAIT) !=
		    (ssize_t)sizeof(rep)) {
			if (!w->fails++)
				snprintf(w->why, sizeof(w->why),
					 "no Reply: %s", strerror(errno));
			mpa_close_abort(f.fd);
			return;
		}
		f.data = f_data;
		f.len = f_len;
		f.loop = f_loop;
		f.start = f_req_len;
		f.sent = f_req_len;
	}
	if (pthread_create(&f.thr, NULL, t_flood_run, &f)) {
		close(f.fd);
		w->fails++;
		return;
	}
	/* the module closes once it has the junk or the bad FPDU */
	end = t_now_ms() + KE_WAIT;
	while (!junk && t_flood_sent(&f) < f_bad_end &&
	       t_now_ms() < end)
		sched_yield();
	pthread_join(f.thr, NULL);	/* it ends with the reset */
	if (!junk && f.sent < f_bad_end && !w->fails++)
		snprintf(w->why, sizeof(w->why),
			 "the flood stopped after %zu octets", f.sent);
	w->done++;
	w->junk += junk;
	mpa_close_abort(f.fd);
}

static void *f_worker_run(void *arg)
{
	struct f_worker *w = arg;
	unsigned int k;

	t_pin((w->id + 1) % 2);
	for (k = 0; k < w->rounds; k++)
		f_round(w);
	return NULL;
}

FIXTURE(flood)
{
};

FIXTURE_SETUP(flood)
{
	signal(SIGPIPE, SIG_IGN);
}

FIXTURE_TEARDOWN_PARENT(flood)
{
	ke_restore();
}

TEST_F_TIMEOUT(flood, close_under_flood, 900)
{
	static struct f_worker w[F_WORKERS];
	unsigned long done = 0, junk = 0, startup_errs = 0;
	long t0 = t_now_ms(), end, n;
	struct ke_info ki;
	int i, id;

	f_build();
	ASSERT_NE(NULL, f_data);
	ASSERT_EQ(0, ke_load("sink=1 rcvbuf=4096 slow_ms=1"));
	for (i = 0; i < F_WORKERS; i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].id = i;
		w[i].rounds = (F_ROUNDS + F_WORKERS - 1) / F_WORKERS;
		w[i].seed = 31 + i;
		ASSERT_EQ(0, pthread_create(&w[i].thr, NULL, f_worker_run,
					    &w[i]));
	}
	for (i = 0; i < F_WORKERS; i++) {
		pthread_join(w[i].thr, NULL);
		done += w[i].done;
		junk += w[i].junk;
		EXPECT_EQ(0, w[i].fails)
			TH_LOG("worker %d: %lu failures, the first: %s", i,
			       w[i].fails, w[i].why);
	}
	EXPECT_LE(F_ROUNDS, done);
	TH_LOG("%lu rounds (%lu with junk for a Request) in %ld ms", done,
	       junk, t_now_ms() - t0);

	/*
	 * The module heard of each error and released each socket: junk for
	 * a Request is code 4, the bad FPDU code 2 (each round waited for
	 * the module's reset before it closed)
	 */
	ASSERT_EQ((int)done, ke_count());
	for (id = 1; id <= (int)done; id++) {
		long long code;

		ASSERT_WAIT(-1, id, "released", 1, &ki);
		code = ke_num(&ki, "err_code");
		EXPECT_TRUE(code == MPA_ERR_STARTUP || code == MPA_ERR_CRC)
			TH_LOG("%s", ki.line);
		startup_errs += code == MPA_ERR_STARTUP;
		EXPECT_KE(&ki, "kerr", 0);
	}
	EXPECT_EQ(junk, startup_errs);

	/* then the modules go, mpa too, and mpa comes back */
	ASSERT_EQ(0, ke_unload());
	end = t_now_ms() + 120000;
	while ((n = t_mpa_refcnt()) > 0 && t_now_ms() < end)
		t_sleep_ms(20);
	ASSERT_EQ(0, n) TH_LOG("mpa still has %ld users", n);
	ASSERT_EQ(0, syscall(SYS_delete_module, "mpa", O_NONBLOCK))
		TH_LOG("delete_module: %s", strerror(errno));
	ASSERT_EQ(0, t_sh("modprobe mpa"));
	EXPECT_EQ(0, t_mpa_refcnt());
}

FIXTURE(unload)
{
	int fd[4];
	int lfd;
};

FIXTURE_SETUP(unload)
{
	int i;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < 4; i++)
		self->fd[i] = -1;
	self->lfd = -1;
}

FIXTURE_TEARDOWN_PARENT(unload)
{
	ke_restore();
}

/* rmmod works within @ms and leaves nothing behind. */
static void unload_now(struct __test_metadata *_metadata, int ms)
{
	long t0 = t_now_ms();

	ASSERT_EQ(0, ke_unload());
	EXPECT_GE(ms, t_now_ms() - t0);
	EXPECT_FALSE(ke_loaded());
	EXPECT_NE(0, access(KE_DIR "conns", F_OK));
	TH_LOG("rmmod took %ld ms", t_now_ms() - t0);
}

/* Connections in Full Operation, one with ULPDUs on the way. */
TEST_F_TIMEOUT(unload, full, 120)
{
	size_t one = 1000, big[8];
	struct ke_info ki;
	struct t_tx p;
	int i;

	ASSERT_EQ(0, ke_load("markers=1"));
	for (i = 0; i < 3; i++) {
		self->fd[i] = ke_open(_metadata, i % 2 ? AF_INET6 : AF_INET,
				      1, 1, 0, 0);
		ASSERT_LE(0, self->fd[i]);
	}
	echo_xfer(_metadata, self->fd[0], &one, 1, 1);
	echo_xfer(_metadata, self->fd[1], &one, 1, 2);
	for (i = 0; i < 8; i++)
		big[i] = MPA_MAX_ULPDU;
	ASSERT_EQ(0, t_tx_start(&p, self->fd[2], big, 8, 3));
	pthread_join(p.thr, NULL);
	ASSERT_WAIT(self->fd[2], -1, "rx", 1, &ki);
	ASSERT_EQ(3, ke_count());

	unload_now(_metadata, 30000);
	for (i = 0; i < 3; i++)
		EXPECT_ENDS(self->fd[i], KE_WAIT);

	/* and it comes back */
	ASSERT_EQ(0, ke_load(""));
	EXPECT_EQ(0, ke_count());
	self->fd[3] = ke_open(_metadata, AF_INET, 0, 1, 0, 0);
	ASSERT_LE(0, self->fd[3]);
	echo_xfer(_metadata, self->fd[3], &one, 1, 4);
	for (i = 0; i < 4; i++)
		close(self->fd[i]);
}

/*
 * Connections in the startup phase: no Request yet; a Request the module
 * will answer only in a minute; the module's Initiator waiting for a
 * Reply.
 */
TEST_F_TIMEOUT(unload, startup, 120)
{
	struct sockaddr_storage addr;
	struct ke_info ki;
	uint8_t fr[T_FRAME_MAX];
	socklen_t len;
	int ev;

	ASSERT_EQ(0, ke_load("answer_ms=60000"));
	/* attached, waiting for a Request */
	self->fd[0] = ke_tcp(AF_INET, 0, 0);
	ASSERT_LE(0, self->fd[0]);
	ASSERT_EQ(0, ke_get_fd(self->fd[0], &ki));
	/* a Request the module has, unanswered */
	self->fd[1] = ke_tcp(AF_INET6, 0, 0);
	ASSERT_LE(0, self->fd[1]);
	ASSERT_EQ(0, ke_user_config(self->fd[1], 1, 1, KE_REQ_PD));
	ASSERT_EQ(0, t_nonblock(self->fd[1]));
	ASSERT_EQ(-1, mpa_start(self->fd[1]));
	ASSERT_EQ(EINPROGRESS, errno);
	ASSERT_WAIT(self->fd[1], -1, "frame_rev", 1, &ki);
	EXPECT_KE_IS(&ki, "state", "startup");
	/* the module's Initiator, waiting for a Reply that never comes */
	self->lfd = mpa_listener(AF_INET, &addr, &len);
	ASSERT_LE(0, self->lfd);
	ASSERT_EQ(0, ke_connect("127.0.0.1 %u",
				ntohs(((struct sockaddr_in *)&addr)->sin_port)));
	self->fd[2] = accept(self->lfd, NULL, NULL);
	ASSERT_LE(0, self->fd[2]);
	ASSERT_EQ(T_HDR + strlen(KE_INIT_PD),
		  t_read(self->fd[2], fr, T_HDR + strlen(KE_INIT_PD), KE_WAIT));
	ASSERT_EQ(3, ke_count());

	unload_now(_metadata, 30000);
	EXPECT_ENDS(self->fd[0], KE_WAIT);
	ev = t_wait_startup(self->fd[1], KE_WAIT);
	EXPECT_LE(0, ev);
	EXPECT_MPA_STATE(self->fd[1], MPA_STATE_FAILED);
	EXPECT_ENDS(self->fd[2], KE_WAIT);
	close(self->fd[0]);
	close(self->fd[1]);
	close(self->fd[2]);
	close(self->lfd);
}

/*
 * A slow consumer with ULPDUs refused and a resume pending, and a peer
 * that does not read the echoes, so that the module's sends are stuck.
 */
TEST_F_TIMEOUT(unload, stuck, 180)
{
	static size_t sizes[4096];
	struct ke_info ki;
	uint8_t *buf;
	size_t n;
	ssize_t r;

	buf = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, ke_load("slow_ms=1000"));
	/* the slow one: a ULPDU refused, its resume a second away */
	self->fd[0] = ke_open(_metadata, AF_INET6, 0, 1, 0, 0);
	ASSERT_LE(0, self->fd[0]);
	ASSERT_EQ(100, send(self->fd[0], buf, 100, MSG_NOSIGNAL));
	ASSERT_WAIT(self->fd[0], -1, "refused", 1, &ki);
	ASSERT_EQ(0, ke_unload());
	ASSERT_EQ(0, ke_load(""));
	EXPECT_ENDS(self->fd[0], KE_WAIT);

	/*
	 * The stuck one: we send until our sends stop, reading nothing.
	 * Without Markers the module's echoes go out zero-copy: its pages
	 * wait in TCP's send queue.
	 */
	self->fd[1] = ke_open(_metadata, AF_INET, 0, 1, 0, 0);
	ASSERT_LE(0, self->fd[1]);
	/* and an idle one, with Markers */
	self->fd[2] = ke_open(_metadata, AF_INET6, 1, 1, 0, 0);
	ASSERT_LE(0, self->fd[2]);
	for (n = 0; n < 4096; n++) {
		sizes[n] = 16000;
		t_fill(buf, sizes[n], n);
		r = send(self->fd[1], buf, sizes[n], MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EAGAIN) {
			if (t_poll(self->fd[1], POLLOUT, 1000) & POLLOUT) {
				n--;
				continue;
			}
			break;
		}
		ASSERT_EQ((ssize_t)sizes[n], r);
	}
	ASSERT_EQ(0, ke_get_fd(self->fd[1], &ki));
	TH_LOG("stopped after %zu ULPDUs: %s", n, ki.line);
	/* zero-copy sends wait in TCP's send queue */
	EXPECT_LT(ke_num(&ki, "tx_done"), ke_num(&ki, "tx"));

	unload_now(_metadata, 60000);
	EXPECT_ENDS(self->fd[1], KE_WAIT);
	EXPECT_ENDS(self->fd[2], KE_WAIT);
	free(buf);
	close(self->fd[0]);
	close(self->fd[1]);
	close(self->fd[2]);
}

TEST_HARNESS_MAIN
