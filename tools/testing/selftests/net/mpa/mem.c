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
 *
 * The figures measured are printed (TH_LOG). Run as root.
 */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define MIB	(1024 * 1024L)

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

TEST_HARNESS_MAIN
