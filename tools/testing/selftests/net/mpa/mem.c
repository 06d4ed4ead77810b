// SPDX-License-Identifier: GPL-2.0
/*
 * What MPA holds in memory, where it is charged, and what a kernel consumer
 * in the memory reclaim path needs (mpa.rst, "Memory"):
 *
 *   workqueue     the connections' work runs on mpa's own WQ_MEM_RECLAIM
 *                 workqueue: its rescuer thread, kworker/R-mpa, exists
 *   tx.charged    the FPDUs a held Responder queues (R-7.1.2-15) count in
 *                 TCP's memory accounting (/proc/net/sockstat "TCP: mem")
 *                 while MPA holds them, once only when TCP has them, and
 *                 not at all after the peer read them
 *   copy.one_octet_short  a peer holds 1000 connections, each one octet short of a
 *                 whole FPDU of 64768 octets in copy mode (a small
 *                 SO_RCVBUF): the copy buffers are charged to the sockets'
 *                 memory cgroup (where the kernel has memory cgroups: not
 *                 the debug lane's; the stock lane's must), the memory
 *                 used stays within a bound, and it is freed as soon as
 *                 the FPDUs complete, the connections still open
 *   copy.one_octet_short_bad_crc  the same, the last octet failing the CRC:
 *                 freed once the receive halves failed
 *   copy.one_octet_short_reset  the same, a reset instead of the last
 *                 octet: freed once recv told of the reset
 *
 *   over.alone_sends  over TCP's hard memory limit (tcp_mem), an FPDU
 *                 that does not fit a segment still goes when nothing
 *                 else is queued, as TCP sends its first skb then
 *
 * The figures measured are printed (TH_LOG). Run as root.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <linux/sockios.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define KIB	1024L
#define MIB	(1024 * KIB)

/* An integer from a /proc or /sys file, after @key if given; -1 if none. */
static long long m_read_num(const char *path, const char *key)
{
	char line[512], *p;
	long long v = -1;
	FILE *f;

	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key) {
			v = strtoll(line, NULL, 10);
			break;
		}
		p = strstr(line, key);
		if (p) {
			v = strtoll(p + strlen(key), NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* /proc/net/sockstat "TCP: ... mem N": pages TCP has charged, all sockets. */
static long m_tcp_mem_pages(void)
{
	char line[256], *p;
	long v = -1;
	FILE *f;

	f = fopen("/proc/net/sockstat", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "TCP:", 4))
			continue;
		p = strstr(line, " mem ");
		if (p)
			v = strtol(p + 5, NULL, 10);
	}
	fclose(f);
	return v;
}

/*
 * How far the global figure may be off: every CPU keeps up to
 * net.core.mem_pcpu_rsv pages of TCP's memory accounting to itself.
 */
static long m_tcp_mem_slack(void)
{
	long rsv = m_read_num("/proc/sys/net/core/mem_pcpu_rsv", NULL);
	long cpus = sysconf(_SC_NPROCESSORS_CONF);

	if (rsv < 0)
		rsv = 256;
	return rsv * (cpus > 0 ? cpus : 1) + 64;
}

/*
 * Memory in use, in octets (MemTotal - MemFree), and the part of it in
 * the slab caches (Slab: kmalloc's pages of 64 KiB objects count there).
 * Shrinking every slab cache first frees what KASAN's quarantine keeps of
 * what was freed (the debug lane), so that it is not counted.
 */
static void m_used(long long *used, long long *slab)
{
	char path[300];
	struct dirent *de;
	DIR *d;

	d = opendir("/sys/kernel/slab");
	while (d && (de = readdir(d))) {
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		/* a cache that cannot be shrunk is no matter */
		(void)!write(fd, "1", 1);
		close(fd);
	}
	if (d)
		closedir(d);
	*slab = m_read_num("/proc/meminfo", "Slab:") * KIB;
	*used = (m_read_num("/proc/meminfo", "MemTotal:") -
		 m_read_num("/proc/meminfo", "MemFree:")) * KIB;
}

/* What the workqueue check looks for in /proc: the rescuer's name. */
static bool m_task_named(const char *name)
{
	char path[300], comm[64];
	struct dirent *de;
	bool found = false;
	DIR *d;
	FILE *f;

	d = opendir("/proc");
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = 0;
			found = !strcmp(comm, name);
		}
		fclose(f);
	}
	closedir(d);
	return found;
}

/*
 * The connections' work must make progress while the system reclaims
 * memory (a storage consumer's socket writes back dirty pages): mpa has a
 * workqueue of its own with WQ_MEM_RECLAIM, so a rescuer thread.
 */
TEST(workqueue)
{
	ASSERT_EQ(0, system("modprobe mpa"));
	EXPECT_TRUE(m_task_named("kworker/R-mpa"))
		TH_LOG("no rescuer thread kworker/R-mpa: no WQ_MEM_RECLAIM workqueue of mpa's own");
}

/* Wait until MPA has handed @n FPDUs to TCP: 0, or -1 after @ms. */
static int m_wait_tx_fpdus(int fd, uint64_t n, int ms)
{
	long end = t_now_ms() + ms;
	struct mpa_stats st;

	for (;;) {
		if (mpa_getstruct(fd, MPA_STATS, &st, sizeof(st)))
			return -1;
		if (st.tx_fpdus >= n)
			return 0;
		if (t_now_ms() > end)
			return -1;
		/* nothing signals "TCP took it": look again shortly */
		poll(NULL, 0, 2);
	}
}

#define TX_ULPDU	MPA_MAX_ULPDU
#define TX_SNDBUF	(8 * MIB)	/* SO_SNDBUFFORCE: sk_sndbuf 16 MiB */
#define TX_MAX		1024		/* ULPDUs: 64 MiB, far above sk_sndbuf */

/*
 * A held Responder (R-7.1.2-15) queues FPDUs until its send buffer is
 * full; they are MPA's alone, and TCP's memory accounting must see them
 * (tcp_mem, the memory cgroup). Once the Initiator's first FPDU released
 * them, TCP holds them and they count once, not twice. Once the peer read
 * them they count no more.
 */
FIXTURE(tx)
{
};

FIXTURE_SETUP(tx)
{
}

FIXTURE_TEARDOWN(tx)
{
}

TEST_F_TIMEOUT(tx, charged, 300)
{
	long slack = m_tcp_mem_slack(), m0, m1, m2, m3, pages;
	long t0 = t_now_ms();
	uint8_t *buf, *ulpdu, *exp, fpdu[64];
	int raw, m, sb = TX_SNDBUF;
	size_t k, wire = 0, got;
	struct t_fpdu_dec d;
	char why[160];
	uint32_t pos = 0;
	ssize_t r;

	signal(SIGPIPE, SIG_IGN);
	buf = malloc(T_FPDU_MAX * 2);
	ulpdu = malloc(T_ULPDU_BUF);
	exp = malloc(T_ULPDU_BUF);
	ASSERT_TRUE(buf && ulpdu && exp);
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &raw, &m));
	ASSERT_EQ(0, setsockopt(m, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)));
	ASSERT_LE(0, t_raw_initiator(m, raw, T_C, false, true));
	m0 = m_tcp_mem_pages();
	ASSERT_LE(0, m0);

	/* The raw Initiator sends nothing: every FPDU stays in MPA. */
	for (k = 0; k < TX_MAX; k++) {
		t_fill(buf, TX_ULPDU, 1000 + k);
		r = send(m, buf, TX_ULPDU, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EAGAIN)
			break;
		ASSERT_EQ(TX_ULPDU, r) TH_LOG("send %zu: %s", k, strerror(errno));
		wire += t_fpdu_wire(wire, false, TX_ULPDU);
	}
	ASSERT_LT(0, k);
	ASSERT_GT(TX_MAX, k) TH_LOG("64 MiB queued and no EAGAIN");
	pages = wire / 4096;
	m1 = m_tcp_mem_pages();
	TH_LOG("held: %zu FPDUs, %zu octets (%ld pages) queued in MPA; TCP mem %ld -> %ld pages (+%ld), slack %ld",
	       k, wire, pages, m0, m1, m1 - m0, slack);
	EXPECT_LE(pages - slack, m1 - m0)
		TH_LOG("the FPDUs MPA holds are not charged to TCP's memory");
	EXPECT_GE(pages * 5 / 4 + slack, m1 - m0);

	/*
	 * The Initiator's first FPDU: MPA hands all it held to TCP, which
	 * keeps it (the peer does not read): room for all of it there.
	 */
	sb = 2 * TX_SNDBUF;
	ASSERT_EQ(0, setsockopt(m, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb)));
	t_fill(ulpdu, 10, 7);
	r = t_fpdu_encode(fpdu, 0, false, ulpdu, 10, NULL);
	ASSERT_EQ(r, t_send(raw, fpdu, r));
	ASSERT_EQ(0, m_wait_tx_fpdus(m, k, 60000));
	m2 = m_tcp_mem_pages();
	TH_LOG("released: TCP mem %ld pages (+%ld), %ld ms", m2, m2 - m0,
	       t_now_ms() - t0);
	EXPECT_LE(m2 - m0, pages * 3 / 2 + slack)
		TH_LOG("counted twice: MPA kept its charge once TCP had the FPDUs");
	EXPECT_LE(pages - slack, m2 - m0);

	/* The peer reads and checks it all; then nothing stays charged. */
	got = 0;
	for (k = 0, pos = 0; pos < wire;) {
		int ret;

		ASSERT_TRUE(t_poll(raw, POLLIN, 20000) & POLLIN)
			TH_LOG("FPDU %zu: nothing more", k);
		r = recv(raw, buf + got, T_FPDU_MAX * 2 - got, MSG_DONTWAIT);
		if (r < 0 && errno == EAGAIN)
			continue;
		ASSERT_LT(0, r) TH_LOG("FPDU %zu: %s", k, strerror(errno));
		got += r;
		while ((ret = t_fpdu_decode(buf, got, pos, false, true, ulpdu,
					    &d, why, sizeof(why))) == 1) {
			ASSERT_EQ(TX_ULPDU, d.len);
			t_fill(exp, TX_ULPDU, 1000 + k);
			ASSERT_EQ(0, memcmp(ulpdu, exp, TX_ULPDU))
				TH_LOG("ULPDU %zu differs", k);
			memmove(buf, buf + d.wire, got - d.wire);
			got -= d.wire;
			pos += d.wire;
			k++;
		}
		ASSERT_EQ(0, ret) TH_LOG("FPDU %zu: %s", k, why);
	}
	ASSERT_EQ(0, got);
	ASSERT_EQ(10, t_read(m, ulpdu, 10, 10000));
	ASSERT_EQ(0, t_wait_acked(m, 20000));
	ASSERT_EQ(0, t_wait_acked(raw, 20000));
	m3 = m_tcp_mem_pages();
	TH_LOG("read: TCP mem %ld pages (%+ld), %ld ms", m3, m3 - m0,
	       t_now_ms() - t0);
	EXPECT_GE(slack, m3 - m0);
	close(raw);
	close(m);
	free(buf);
	free(ulpdu);
	free(exp);
}

/*
 * copy_buffers: @N connections, each with a raw Initiator that sent all but
 * the last octet of an FPDU carrying CB_ULPDU octets, to an MPA Responder
 * whose small receive buffer forces copy mode. The test runs in a memory
 * cgroup of its own, so that the sockets (and what MPA charges for them)
 * are charged there.
 */
#define CB_CONNS	1000
#define CB_ULPDU	MPA_MAX_ULPDU
#define CB_RCVBUF	16384		/* sk_rcvbuf 32 KiB: copy mode */
#define CB_CGROUP_ROOT	"/sys/fs/cgroup"

FIXTURE(copy)
{
	int raw[CB_CONNS];
	int m[CB_CONNS];
	int n;
	char cg[128];
	bool in_cg;
};

static int m_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, s, strlen(s));
	close(fd);
	return r == (ssize_t)strlen(s) ? 0 : -1;
}

/* Has the kernel the memory cgroup controller ("memory" in /proc/cgroups)? */
static bool m_have_memcg(void)
{
	char line[256], name[64];
	int hier, num, enabled;
	bool have = false;
	FILE *f;

	f = fopen("/proc/cgroups", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d %d %d", name, &hier, &num,
			   &enabled) == 4 && !strcmp(name, "memory"))
			have = enabled;
	fclose(f);
	return have;
}

/*
 * Must the kernel have memory cgroups? The stock lane's does (Debian's
 * kernel); the debug lane's has no cgroups at all. The test runner says
 * which lane (MPA_LANE, as tools/testing/guest-suite.sh reads it); without
 * it, a Debian kernel (a release "...+debN-amd64") has them.
 */
static bool m_want_memcg(char *why, size_t size)
{
	const char *lane = getenv("MPA_LANE");
	struct utsname u;
	size_t n;

	if (lane) {
		snprintf(why, size, "lane %s", lane);
		return !strcmp(lane, "stock");
	}
	if (uname(&u))
		return false;
	snprintf(why, size, "kernel %s", u.release);
	n = strlen(u.release);
	return strstr(u.release, "+deb") && n > 6 &&
	       !strcmp(u.release + n - 6, "-amd64");
}

/* A memory cgroup of our own, with us in it: 0, or -1. */
static int m_cgroup_enter(char *cg, size_t size)
{
	char path[256], pid[32];

	if (access(CB_CGROUP_ROOT "/cgroup.controllers", F_OK) &&
	    mount("cgroup2", CB_CGROUP_ROOT, "cgroup2", 0, NULL))
		return -1;
	if (m_write(CB_CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		return -1;
	snprintf(cg, size, CB_CGROUP_ROOT "/mpa-mem-%d", getpid());
	if (mkdir(cg, 0755) && errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return m_write(path, pid);
}

/* memory.current of @cg, 0 outside a memory cgroup */
static long long m_cg_current(bool in_cg, const char *cg)
{
	char path[256];

	if (!in_cg)
		return 0;
	snprintf(path, sizeof(path), "%s/memory.current", cg);
	return m_read_num(path, NULL);
}

FIXTURE_SETUP(copy)
{
	struct rlimit rl = { CB_CONNS * 2 + 100, CB_CONNS * 2 + 100 };
	char why[128] = "";

	signal(SIGPIPE, SIG_IGN);
	self->n = 0;
	self->in_cg = false;
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	/*
	 * The debug lane's kernel has no cgroups: the bounds only, there.
	 * Where the kernel has them, their checks are not left out.
	 */
	if (!m_have_memcg()) {
		ASSERT_FALSE(m_want_memcg(why, sizeof(why)))
			TH_LOG("no memory cgroup controller, and %s has one",
			       why);
		TH_LOG("no memory cgroup controller: what is charged to it is not checked");
		return;
	}
	ASSERT_EQ(0, m_cgroup_enter(self->cg, sizeof(self->cg)))
		TH_LOG("no memory cgroup: %s", strerror(errno));
	self->in_cg = true;
}

FIXTURE_TEARDOWN(copy)
{
	char pid[32];
	int i;

	for (i = 0; i < self->n; i++) {
		mpa_close_abort(self->raw[i]);
		mpa_close_abort(self->m[i]);
	}
	if (self->in_cg) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		m_write(CB_CGROUP_ROOT "/cgroup.procs", pid);
		rmdir(self->cg);
	}
}

/* Send @len octets of @buf on the non-blocking @fd, waiting for room. */
static int m_send_all(int fd, const uint8_t *buf, size_t len, int ms)
{
	long end = t_now_ms() + ms;
	ssize_t r;

	while (len) {
		r = send(fd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r > 0) {
			buf += r;
			len -= r;
			continue;
		}
		if (r < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if (t_now_ms() > end)
			return -1;
		t_poll(fd, POLLOUT, 100);
	}
	return 0;
}

/* How the FPDUs one octet short end */
enum copy_end {
	COPY_WHOLE,		/* the last octet comes */
	COPY_BAD_CRC,		/* the last octet, its bits flipped */
	COPY_RESET,		/* a reset (the peer closes with SO_LINGER 0) */
};

/*
 * Every connection gets all but the last octet of an FPDU too large for
 * its receive buffer (copy mode); then how it ends (@end): the copy
 * buffers must be gone once the ULPDUs were read, once the receive halves
 * failed (R-8-9), or once recv told of the reset, the connections still
 * open.
 */
static void copy_run(struct __test_metadata *_metadata,
		     FIXTURE_DATA(copy) *self, enum copy_end end)
{
	static const char * const how[] = {
		[COPY_WHOLE] = "FPDUs complete and read",
		[COPY_BAD_CRC] = "FPDUs failed the CRC",
		[COPY_RESET] = "reset told",
	};
	long long used0, used1, used2, slab0, slab1, slab2, cg0, cg1, cg2;
	long long bound;
	long tm0, tm1, tm2, t_start = t_now_ms(), t_setup, t_fill_done;
	struct sockaddr_storage addr;
	uint8_t *ulpdu, *fpdu, *got;
	int lfd, sz = CB_RCVBUF, i, fl;
	long long wire;
	socklen_t len;
	ssize_t r;

	ulpdu = malloc(T_ULPDU_BUF);
	fpdu = malloc(T_FPDU_MAX);
	got = malloc(T_ULPDU_BUF);
	ASSERT_TRUE(ulpdu && fpdu && got);
	t_fill(ulpdu, CB_ULPDU, 77);
	wire = t_fpdu_encode(fpdu, 0, false, ulpdu, CB_ULPDU, NULL);

	lfd = mpa_listener(AF_INET, &addr, &len);
	ASSERT_LE(0, lfd);
	/* accepted sockets inherit it: copy mode for FPDUs above ~16 KiB */
	ASSERT_EQ(0, setsockopt(lfd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz)));
	for (i = 0; i < CB_CONNS; i++) {
		int raw = socket(AF_INET, SOCK_STREAM, 0);

		ASSERT_LE(0, raw);
		ASSERT_EQ(0, connect(raw, (struct sockaddr *)&addr, len))
			TH_LOG("connection %d: %s", i, strerror(errno));
		self->raw[i] = raw;
		self->m[i] = accept(lfd, NULL, NULL);
		ASSERT_LE(0, self->m[i]);
		self->n = i + 1;
		ASSERT_LE(0, t_raw_initiator(self->m[i], raw, T_C, false, true))
			TH_LOG("connection %d", i);
		ASSERT_EQ(0, t_nonblock(raw));
		ASSERT_EQ(0, t_set_timeo(self->m[i], SO_RCVTIMEO, 60000));
	}
	close(lfd);
	t_setup = t_now_ms();

	m_used(&used0, &slab0);
	cg0 = m_cg_current(self->in_cg, self->cg);
	tm0 = m_tcp_mem_pages();
	if (self->in_cg)
		ASSERT_LT(0, cg0);

	/* All but the last octet of the FPDU, on every connection. */
	for (i = 0; i < CB_CONNS; i++)
		ASSERT_EQ(0, m_send_all(self->raw[i], fpdu, wire - 1, 60000))
			TH_LOG("connection %d: %s", i, strerror(errno));
	/* They only fit in through copy mode: TCP acknowledged them all. */
	for (i = 0; i < CB_CONNS; i++)
		ASSERT_EQ(0, t_wait_acked(self->raw[i], 120000))
			TH_LOG("connection %d: not all acknowledged", i);
	t_fill_done = t_now_ms();
	m_used(&used1, &slab1);
	cg1 = m_cg_current(self->in_cg, self->cg);
	tm1 = m_tcp_mem_pages();

	/*
	 * The copy buffers hold at most an FPDU each (64776 octets here),
	 * TCP's queue at most the receive buffer (sk_rcvbuf, twice
	 * SO_RCVBUF): a generous bound.
	 */
	bound = (long long)CB_CONNS * (wire + 2 * sz + 16 * KIB);
	TH_LOG("%d connections, FPDUs of %lld octets one short (setup %ld ms, filling %ld ms):",
	       CB_CONNS, wire, t_setup - t_start, t_fill_done - t_setup);
	TH_LOG("  memory used %+lld KiB (%lld per connection; slab caches %+lld KiB), bound %lld KiB",
	       (used1 - used0) / KIB, (used1 - used0) / CB_CONNS,
	       (slab1 - slab0) / KIB, bound / KIB);
	TH_LOG("  memory cgroup %+lld KiB (%lld per connection); TCP mem %+ld pages",
	       (cg1 - cg0) / KIB, (cg1 - cg0) / CB_CONNS, tm1 - tm0);
	EXPECT_GE(bound, used1 - used0);
	/* the copy buffers are charged to the sockets' memory cgroup */
	if (self->in_cg) {
		EXPECT_LE((long long)CB_CONNS * (wire - 1) * 3 / 4, cg1 - cg0)
			TH_LOG("the copy buffers are not charged to the memory cgroup");
		EXPECT_GE(bound, cg1 - cg0);
	}

	/*
	 * The last octets: every ULPDU arrives whole and right, or every
	 * connection's receive half fails with code 2; or a reset, told by
	 * recv.
	 */
	if (end == COPY_BAD_CRC)
		fpdu[wire - 1] ^= 0xff;
	for (i = 0; i < CB_CONNS; i++) {
		if (end != COPY_RESET) {
			ASSERT_EQ(1, t_send(self->raw[i], fpdu + wire - 1, 1));
			continue;
		}
		mpa_close_abort(self->raw[i]);
		self->raw[i] = -1;
	}
	for (i = 0; i < CB_CONNS; i++) {
		r = t_recv_flags(self->m[i], got, T_ULPDU_BUF, 0, &fl);
		if (end != COPY_WHOLE) {
			ASSERT_EQ(-1, r) TH_LOG("connection %d: %zd", i, r);
			ASSERT_EQ(end == COPY_RESET ? ECONNRESET : EBADMSG,
				  errno)
				TH_LOG("connection %d: %s", i, strerror(errno));
			continue;
		}
		ASSERT_EQ(CB_ULPDU, r) TH_LOG("connection %d: %s", i,
					      strerror(errno));
		ASSERT_TRUE(fl & MSG_EOR);
		ASSERT_EQ(0, memcmp(got, ulpdu, CB_ULPDU));
	}
	m_used(&used2, &slab2);
	cg2 = m_cg_current(self->in_cg, self->cg);
	tm2 = m_tcp_mem_pages();
	TH_LOG("  %s (%ld ms in all): memory used %+lld KiB (slab caches %+lld KiB), memory cgroup %+lld KiB, TCP mem %+ld pages",
	       how[end],
	       t_now_ms() - t_start, (used2 - used0) / KIB,
	       (slab2 - slab0) / KIB, (cg2 - cg0) / KIB, tm2 - tm0);
	/* Idle connections hold no copy buffer. */
	EXPECT_GE((long long)CB_CONNS * 16 * KIB, used2 - used0)
		TH_LOG("the copy buffers outlive their FPDUs");
	if (self->in_cg)
		EXPECT_GE((long long)CB_CONNS * 16 * KIB, cg2 - cg0)
			TH_LOG("the copy buffers outlive their FPDUs");
	free(ulpdu);
	free(fpdu);
	free(got);
}

TEST_F_TIMEOUT(copy, one_octet_short, 900)
{
	copy_run(_metadata, self, COPY_WHOLE);
}

TEST_F_TIMEOUT(copy, one_octet_short_bad_crc, 900)
{
	copy_run(_metadata, self, COPY_BAD_CRC);
}

TEST_F_TIMEOUT(copy, one_octet_short_reset, 900)
{
	copy_run(_metadata, self, COPY_RESET);
}

/*
 * Over TCP's hard memory limit every charge is refused but the one a
 * socket with nothing queued needs to make progress: TCP forces its first
 * skb (sk_forced_mem_schedule()), so a sender that got EAGAIN is woken by
 * that skb's ACK later. MPA's FPDU that does not fit a segment is queued
 * in MPA first, charged as TCP's skbs are: below a send buffer that
 * SO_SNDBUF keeps from shrinking it was refused, EAGAIN while poll said
 * EPOLLOUT, for as long as the limit held, with nothing in flight to wake
 * the sender. The limit is global: the test holds it for two sends only.
 */
#define OVER_ULPDU	8000	/* over what the socket has in hand */
#define OVER_MSS	1000	/* the FPDU does not fit a segment */
#define OVER_SNDBUF	65536	/* SO_SNDBUF: sk_sndbuf 128 KiB, locked */

#define OVER_MEM	"/proc/sys/net/ipv4/tcp_mem"

FIXTURE(over)
{
	char saved[128];
};

static void over_read(struct __test_metadata *_metadata, const char *path,
		      char *buf, int size)
{
	FILE *f = fopen(path, "r");

	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(buf, size, f));
	fclose(f);
}

FIXTURE_SETUP(over)
{
	over_read(_metadata, OVER_MEM, self->saved, sizeof(self->saved));
	/* not the limit a run killed mid-test left behind */
	ASSERT_LT(1000, atol(self->saved))
		TH_LOG("net.ipv4.tcp_mem is \"%s\": set it back first",
		       self->saved);
}

static int over_limit(bool on, const char *saved)
{
	return m_write(OVER_MEM, on ? "1 1 1" : saved);
}

/* in the parent: also after the test's child was killed mid-way */
FIXTURE_TEARDOWN_PARENT(over)
{
	EXPECT_EQ(0, over_limit(false, self->saved));
}

TEST_F_TIMEOUT(over, alone_sends, 120)
{
	static uint8_t out[OVER_ULPDU], in[OVER_ULPDU], stuff[65536];
	int i, r, tc, ts, sc, ss, err;
	ssize_t n, tn;
	long pages;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, t_mpa_pair(AF_INET, OVER_MSS, false, false, true, &i,
				&r));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &tc, &ts));
	ASSERT_EQ(0, t_setint(i, SOL_SOCKET, SO_SNDBUF, OVER_SNDBUF));
	ASSERT_EQ(0, t_setint(tc, SOL_SOCKET, SO_SNDBUF, OVER_SNDBUF));
	t_fill(out, sizeof(out), 42);
	/*
	 * Megabytes queued on a pair whose reader does not read: over what
	 * each CPU keeps of the figure to itself (net.core.mem_pcpu_rsv),
	 * so the global figure, which the limit is checked against, is
	 * well over one page.
	 */
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &sc, &ss));
	while (send(sc, stuff, sizeof(stuff), MSG_DONTWAIT) > 0)
		;
	ASSERT_EQ(EAGAIN, errno);
	pages = m_tcp_mem_pages();
	TH_LOG("TCP mem: %ld pages", pages);
	ASSERT_LT(2, pages);

	ASSERT_EQ(0, over_limit(true, self->saved));
	/*
	 * The premise: TCP, nothing queued, sends what its first skb
	 * holds, and no more (the limit holds)
	 */
	tn = send(tc, out, OVER_ULPDU, MSG_DONTWAIT);
	n = send(i, out, OVER_ULPDU, MSG_DONTWAIT);
	err = errno;
	ASSERT_EQ(0, over_limit(false, self->saved));

	EXPECT_LT(0, tn);
	EXPECT_GT(OVER_ULPDU, tn);
	TH_LOG("over the limit: TCP took %zd of %d octets", tn, OVER_ULPDU);
	EXPECT_EQ(OVER_ULPDU, n) TH_LOG("MPA's send: %s", strerror(err));
	if (n == OVER_ULPDU) {
		/* and it arrives, once the limit is gone */
		EXPECT_EQ(OVER_ULPDU, t_read(r, in, sizeof(in), 20000));
		EXPECT_EQ(0, memcmp(in, out, OVER_ULPDU));
	}
	close(i);
	close(r);
	close(tc);
	close(ts);
	close(sc);
	close(ss);
}

TEST_HARNESS_MAIN
