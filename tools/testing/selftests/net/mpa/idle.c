// SPDX-License-Identifier: GPL-2.0
/*
 * 10 000 idle MPA connections in one namespace (both ends here, so 20 000
 * MPA sockets), all in Full Operation, and what MPA costs each of them.
 *
 * The connections are plain TCP first: established, a message each way,
 * and the memory in use is measured (M1). Then MPA is attached to both
 * ends of every one of those same sockets and the startup phase brings
 * each to Full Operation (M2), and a ULPDU goes each way on every
 * connection, checked (M3). TCP's own memory (sockets, files, buffers) is
 * in M1 already: M2 - M1 and M3 - M1 are MPA's, per MPA socket:
 *
 *   - the mpa_conn slab cache holds exactly one object per MPA socket;
 *   - no startup object (mpa_startup) is left in Full Operation: the
 *     startup's buffers go as soon as it is over;
 *   - no FPDU record (mpa_tx_rec) is left once the ULPDUs went out;
 *   - the memory in use (MemTotal - MemFree, after dropping caches) grew
 *     by at most ID_BOUND octets per MPA socket (1024): an idle
 *     connection holds no page fragment, no copy buffer, no startup
 *     buffer;
 *   - no startup timer is left armed: the timer events (tracefs) show an
 *     mpa_conn_timeout timer started per MPA_START (and perhaps again as
 *     the Responder's Request arrives) and none expiring,
 *     after waiting out the startup timeout past the last one.
 *
 * The figures go to the log; the precise cost is measured by make bench.
 * MPA_IDLE_CONNS overrides the number of connections.
 */
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "mpa_test.h"
#include "mpa_stress.h"

#define ID_CONNS	10000
#define ID_LISTENERS	8
#define ID_WAIT		20000	/* ms: one step of one connection */
#define ID_BOUND	1024	/* octets of memory per MPA socket, at most */
#define ID_MSG		64	/* the plain TCP message each way */

struct id_pair {
	int i, r;		/* the Initiator (client) and the Responder */
};

/* Memory in use, in KiB, after dropping what the kernel can drop */
struct id_mem {
	long long used, slab, sunreclaim;
	long long conns, starts, recs;
	long long conn_slabs;
	int rec_aliases;	/* caches sharing mpa_tx_rec's: none */
};

static int id_mem(struct id_mem *m)
{
	long long total, free;

	sync();
	if (s_write_file("/proc/sys/vm/drop_caches", "3"))
		return -1;
	m->conns = s_slab_objects("mpa_conn", NULL);
	m->starts = s_slab_objects("mpa_startup", NULL);
	m->recs = s_slab_objects("mpa_tx_rec", &m->rec_aliases);
	m->conn_slabs = s_slab_attr("mpa_conn", "slabs");
	total = s_meminfo("MemTotal");
	free = s_meminfo("MemFree");
	m->slab = s_meminfo("Slab");
	m->sunreclaim = s_meminfo("SUnreclaim");
	m->used = total - free;
	return total < 0 || free < 0 || m->slab < 0 ? -1 : 0;
}

static void id_print(const char *what, const struct id_mem *m)
{
	fprintf(stderr, "# %s: used %lld KiB, Slab %lld KiB (unreclaimable %lld KiB); mpa_conn %lld objects in %lld slabs; mpa_startup %lld objects; mpa_tx_rec %lld objects\n",
		what, m->used, m->slab, m->sunreclaim, m->conns, m->conn_slabs,
		m->starts, m->recs);
}

/* tracefs: the startup timer's events */
static const char *id_tracefs(void)
{
	static const char *const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	char path[128];
	unsigned int k;

	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/events/timer", dirs[k]);
		if (!access(path, F_OK))
			return dirs[k];
	}
	if (!mount("nodev", dirs[0], "tracefs", 0, NULL) &&
	    !access("/sys/kernel/tracing/events/timer", F_OK))
		return dirs[0];
	return NULL;
}

static int id_trace_set(const char *tr, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", tr, file);
	return s_write_file(path, val);
}

/* The address of a module symbol from /proc/kallsyms, 0 if none. */
static unsigned long long id_ksym(const char *name)
{
	char line[512], sym[256];
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	char t;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &t, sym) == 3 &&
		    !strcmp(sym, name)) {
			fclose(f);
			return a;
		}
	}
	fclose(f);
	return 0;
}

/* Filter both timer events to mpa_conn_timeout; enable them. */
static int id_trace_on(const char *tr)
{
	static const char *const evs[] = { "timer_start", "timer_expire_entry" };
	unsigned long long a = id_ksym("mpa_conn_timeout");
	char filter[128], file[128];
	unsigned int k;

	if (!a)
		return -1;
	snprintf(filter, sizeof(filter), "function == 0x%llx", a);
	if (id_trace_set(tr, "tracing_on", "0") ||
	    id_trace_set(tr, "trace", "") ||
	    id_trace_set(tr, "buffer_size_kb", "4096"))
		return -1;
	for (k = 0; k < 2; k++) {
		snprintf(file, sizeof(file), "events/timer/%s/filter", evs[k]);
		if (id_trace_set(tr, file, filter))
			return -1;
		snprintf(file, sizeof(file), "events/timer/%s/enable", evs[k]);
		if (id_trace_set(tr, file, "1"))
			return -1;
	}
	return id_trace_set(tr, "tracing_on", "1");
}

/* Count the two events in the trace; -1 if the buffer overran. */
static int id_trace_count(const char *tr, long *starts, long *expiries)
{
	char path[256], line[1024];
	long overrun = 0;
	FILE *f;
	int cpu;

	*starts = *expiries = 0;
	for (cpu = 0; cpu < 64; cpu++) {
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/stats", tr, cpu);
		f = fopen(path, "r");
		if (!f)
			break;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "overrun:", 8))
				overrun += atol(line + 8);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/trace", tr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (strstr(line, " timer_start:"))
			(*starts)++;
		else if (strstr(line, " timer_expire_entry:"))
			(*expiries)++;
	}
	fclose(f);
	return overrun ? -1 : 0;
}

static void id_trace_off(const char *tr)
{
	id_trace_set(tr, "events/timer/timer_start/enable", "0");
	id_trace_set(tr, "events/timer/timer_expire_entry/enable", "0");
	id_trace_set(tr, "events/timer/timer_start/filter", "0");
	id_trace_set(tr, "events/timer/timer_expire_entry/filter", "0");
	id_trace_set(tr, "trace", "");
	id_trace_set(tr, "buffer_size_kb", "1408");
}

/* Read exactly @n octets of the plain stream. */
static int id_read(int fd, void *buf, size_t n)
{
	return t_read(fd, buf, n, ID_WAIT) == (ssize_t)n ? 0 : -1;
}

/* One ULPDU of @len octets, t_fill(@seed): exactly that, with MSG_EOR. */
static int id_recv_ulpdu(int fd, uint8_t *buf, uint8_t *exp, size_t len,
			 uint64_t seed)
{
	ssize_t r;
	int fl;

	if (!(t_poll(fd, POLLIN, ID_WAIT) & POLLIN))
		return -1;
	r = t_recv_flags(fd, buf, T_ULPDU_BUF, MSG_DONTWAIT, &fl);
	if (r != (ssize_t)len || !(fl & MSG_EOR))
		return -1;
	t_fill(exp, len, seed);
	return memcmp(buf, exp, len) ? -1 : 0;
}

FIXTURE(idle) {
	struct id_pair *p;
	long n;
	const char *tr;
};

FIXTURE_SETUP(idle)
{
	self->p = NULL;
	self->tr = NULL;
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, s_netns_new());
	/* one port per client end: let the namespace have many */
	ASSERT_EQ(0, s_write_file("/proc/sys/net/ipv4/ip_local_port_range",
				  "1024 65000"));
}

FIXTURE_TEARDOWN(idle)
{
	long k;

	if (self->tr)
		id_trace_off(self->tr);
	for (k = 0; self->p && k < self->n; k++) {
		if (self->p[k].i >= 0)
			close(self->p[k].i);
		if (self->p[k].r >= 0)
			close(self->p[k].r);
	}
	free(self->p);
}

TEST_F_TIMEOUT(idle, ten_thousand, 1500)
{
	struct sockaddr_in addr[ID_LISTENERS];
	int lfd[ID_LISTENERS];
	long n = s_env_long("MPA_IDLE_CONNS", ID_CONNS), k, starts, expiries;
	long t0, t1, t2, t3, t_full, timeout_ms;
	struct id_mem m0, m1, m2, m3;
	uint8_t *buf, *exp, msg[ID_MSG];
	struct mpa_t_policy pol;
	long long per2, per3;
	size_t len;

	ASSERT_GT(n, 0);
	self->n = n;
	ASSERT_EQ(0, s_nofile(2 * n + 64)) TH_LOG("RLIMIT_NOFILE for %ld", 2 * n);
	self->p = calloc(n, sizeof(*self->p));
	buf = malloc(T_ULPDU_BUF);
	exp = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, self->p);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, exp);
	for (k = 0; k < n; k++)
		self->p[k].i = self->p[k].r = -1;
	for (k = 0; k < ID_LISTENERS; k++) {
		lfd[k] = s_listen4(1 + k, 0, 128, &addr[k]);
		ASSERT_LE(0, lfd[k]);
	}
	ASSERT_EQ(0, mpa_policy_get(&pol));
	timeout_ms = pol.timeout_ms;
	/* before M0: the trace buffer takes memory of its own */
	self->tr = id_tracefs();
	ASSERT_NE(NULL, self->tr) TH_LOG("no tracefs with timer events");
	ASSERT_EQ(0, id_trace_on(self->tr));
	ASSERT_EQ(0, id_mem(&m0));
	id_print("before", &m0);

	/* Plain TCP: connected, a message each way */
	t0 = t_now_ms();
	for (k = 0; k < n; k++) {
		struct id_pair *p = &self->p[k];
		int l = k % ID_LISTENERS;

		p->i = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, p->i);
		ASSERT_EQ(0, connect(p->i, (struct sockaddr *)&addr[l],
				     sizeof(addr[l])))
			TH_LOG("connection %ld: %s", k, strerror(errno));
		p->r = accept(lfd[l], NULL, NULL);
		ASSERT_LE(0, p->r);
		t_fill(msg, ID_MSG, k);
		ASSERT_EQ(ID_MSG, t_send(p->i, msg, ID_MSG));
		ASSERT_EQ(0, id_read(p->r, buf, ID_MSG));
		ASSERT_EQ(ID_MSG, t_send(p->r, msg, ID_MSG));
		ASSERT_EQ(0, id_read(p->i, buf, ID_MSG));
	}
	for (k = 0; k < ID_LISTENERS; k++)
		close(lfd[k]);
	t1 = t_now_ms();
	ASSERT_EQ(0, id_mem(&m1));
	id_print("TCP connections", &m1);

	/* MPA on both ends of each, through the startup phase */
	for (k = 0; k < n; k++) {
		struct id_pair *p = &self->p[k];

		ASSERT_EQ(0, mpa_config(p->i, MPA_ROLE_INITIATOR, 0));
		ASSERT_EQ(0, mpa_config(p->r, MPA_ROLE_RESPONDER, 0));
		ASSERT_EQ(0, t_nonblock(p->i));
		ASSERT_EQ(-1, mpa_start(p->i));
		ASSERT_EQ(EINPROGRESS, errno);
		ASSERT_EQ(0, mpa_start(p->r)) TH_LOG("connection %ld", k);
		ASSERT_EQ(0, mpa_answer(p->r, MPA_ACCEPT, NULL, 0));
		ASSERT_LE(0, t_wait_startup(p->i, ID_WAIT));
		ASSERT_EQ(MPA_STATE_FULL, mpa_state(p->i))
			TH_LOG("connection %ld", k);
		ASSERT_EQ(MPA_STATE_FULL, mpa_state(p->r));
	}
	t_full = t2 = t_now_ms();
	ASSERT_EQ(0, id_mem(&m2));
	id_print("in Full Operation", &m2);

	/* A ULPDU each way on every one: the Initiator's first (R-7.1.2-15) */
	for (k = 0; k < n; k++) {
		struct id_pair *p = &self->p[k];

		len = 1 + k % 1400;
		t_fill(buf, len, 2 * k);
		ASSERT_EQ(len, t_send(p->i, buf, len));
		ASSERT_EQ(0, id_recv_ulpdu(p->r, buf, exp, len, 2 * k))
			TH_LOG("connection %ld, Initiator to Responder", k);
		t_fill(buf, len, 2 * k + 1);
		ASSERT_EQ(len, t_send(p->r, buf, len));
		ASSERT_EQ(0, id_recv_ulpdu(p->i, buf, exp, len, 2 * k + 1))
			TH_LOG("connection %ld, Responder to Initiator", k);
	}
	t3 = t_now_ms();
	ASSERT_EQ(0, id_mem(&m3));
	id_print("after a ULPDU each way", &m3);

	fprintf(stderr, "# %ld connections (%ld MPA sockets): TCP %ld ms, MPA startups %ld ms, ULPDUs %ld ms\n",
		n, 2 * n, t1 - t0, t2 - t1, t3 - t2);
	per2 = (m2.used - m1.used) * 1024 / (2 * n);
	per3 = (m3.used - m1.used) * 1024 / (2 * n);
	fprintf(stderr, "# TCP's own: %lld octets per connection (both ends)\n",
		(m1.used - m0.used) * 1024 / n);
	fprintf(stderr, "# MPA's own, per MPA socket: %lld octets in Full Operation, %lld after the ULPDUs (slab %lld); struct mpa_conn %lld octets, %lld per %lld KiB slab\n",
		per2, per3, (m3.slab - m1.slab) * 1024 / (2 * n),
		s_slab_attr("mpa_conn", "object_size"),
		s_slab_attr("mpa_conn", "objs_per_slab"),
		(4LL << s_slab_attr("mpa_conn", "order")));
	fprintf(stderr, "# MPA's own, per connection (two MPA sockets): %lld octets\n",
		2 * per3);
	EXPECT_EQ(m1.conns + 2 * n, m2.conns);
	EXPECT_EQ(m1.conns + 2 * n, m3.conns);
	EXPECT_LE(0, m2.starts);
	EXPECT_EQ(m1.starts, m2.starts);
	EXPECT_EQ(m1.starts, m3.starts);
	EXPECT_EQ(0, m3.rec_aliases);
	EXPECT_LE(0, m3.recs);
	EXPECT_EQ(m1.recs, m3.recs);
	EXPECT_GE(ID_BOUND, per2);
	EXPECT_GE(ID_BOUND, per3);

	/*
	 * A startup timer left armed would fire timeout_ms after its start:
	 * nothing may happen until the last one is that old.
	 */
	k = t_full + timeout_ms + 1000 - t_now_ms();
	if (k > 0)
		t_sleep_ms(k);
	ASSERT_EQ(0, id_trace_count(self->tr, &starts, &expiries))
		TH_LOG("the trace buffer overran");
	fprintf(stderr, "# startup timers: %ld started, %ld expired (startup timeout %ld ms)\n",
		starts, expiries, timeout_ms);
	/*
	 * One start per MPA_START; a Responder's timer starts again when the
	 * Request arrives (A24), traced only when that moves it to another
	 * bucket of the timer wheel.
	 */
	EXPECT_LE(2 * n, starts);
	EXPECT_GE(3 * n, starts);
	EXPECT_EQ(0, expiries);
	free(buf);
	free(exp);
}

TEST_HARNESS_MAIN
