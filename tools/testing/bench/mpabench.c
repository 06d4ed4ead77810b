// SPDX-License-Identifier: GPL-2.0
/*
 * mpabench: MPA sockets against plain TCP, in one guest (make bench).
 *
 * Every figure is a comparison made in the same guest, in the same run:
 * under TCG the absolute speeds mean little and vary several-fold with the
 * host's load, so each MPA run is paired with a plain TCP run made just
 * before it over a fresh connection of the same kind, driven by the same
 * code (one send() per ULPDU, recv() into a 64 KiB buffer), and the tables
 * give ratios: the median, minimum and maximum over the rounds.
 *
 * Paths: "veth" is a veth pair between two network namespaces (MTU 1500,
 * MSS 1448: the realistic path), "lo" the loopback device of one of them.
 * The guest script (tools/testing/bench/guest.sh) sets them up and names
 * the namespaces' files in the environment.
 *
 * Parts, each printed as it completes:
 *   crc        the CRC32c limit: the kernel's crc32c through AF_ALG
 *   throughput ULPDU sizes x CRC on/off x Markers off/on x one way/both
 *              ways, on both paths; "x TCP" is the ratio to the round's TCP
 *              run, "x limit" the ratio to 1 / (1/TCP + 1/CRC), what MPA
 *              could reach if it paid nothing but one CRC pass per octet
 *   sides      veth, one way, no CRC: MPA at one end only, the other a
 *              plain TCP socket that speaks MPA's wire format (a reader of
 *              the FPDUs' octets, or a writer of whole FPDUs), beside MPA
 *              at both ends: what MPA's sender and its receiver each cost;
 *              and plain TCP with its writer slowed by a fixed time per
 *              send (-W), to read the MPA rows against: what a cost on
 *              the writer's side costs on this path; per row also each
 *              end's CPU time per octet and how often it slept
 *   align      veth: a packet socket watches the segments the sender puts
 *              on the wire; the share that start with an FPDU (a leading
 *              Marker included) and hold whole FPDUs only (RFC 5044
 *              Appendix A)
 *   pingpong   64-octet round trips, MPA against TCP
 *   setup      connections per second: TCP connect, and TCP connect plus
 *              the MPA startup (Request and Reply)
 *   memory     10 000 idle connections in Full Operation against 10 000
 *              plain TCP connections: slab memory per MPA socket
 *
 * Usage: mpabench [-r ROUNDS] [-s SCALE%] [-n CONNS] [-p PARTS] [-N]
 *                 [-c 0|1|2] [-P veth|lo] [-D one|both] [-S SIZE] [-M MODES]
 *                 [-O tcp|mpa] [-W NS] [-X KIND] [-a]
 * (ROUNDS: 5 by default, at most 101, the crc part at most 11; the more,
 * the narrower each median's confidence interval; PARTS: a comma-separated
 * list of the part names above, default all;
 * -N: TCP_NODELAY on every connection, TCP and MPA alike; -c: the
 * throughput threads free, all on CPU 0, or sender on 0 and receiver on
 * 1; -P, -D, -S: one path, direction or ULPDU size only, 0 for MULPDU;
 * -M: the MPA modes of the throughput part, a string of their numbers:
 * 0 CRC, 1 CRC and Markers, 2 no CRC, 3 no CRC and Markers, default 0123;
 * -O: the throughput part runs only the plain TCP or only the MPA run of
 * each pair, and prints speeds without ratios: for profiling one side,
 * e.g. perf record -a around the whole program, see the README); -a: an
 * A/A check of the method: the MPA run of each pair is a plain TCP run
 * too (with the TCP run's ULPDU size), so its ratios read 1.00 unless the
 * method favours one side of a pair); -W: the sides part's slowed writer
 * spins NS nanoseconds before each send, default 1000, 0: no such row;
 * -X: the sides part runs -r transfers of one kind only, for the
 * instruction counter, tools/testing/bench/icount.sh).
 */
#include <arpa/inet.h>
#include <linux/if_alg.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define VETH_CLIENT	"10.0.0.1"
#define VETH_SERVER	"10.0.0.2"
#define RBUF		65536
#define MAX_ROUNDS	101
#define NR_CELLS	5	/* ULPDU sizes of the throughput part */

static int rounds = 5;
static int scale = 100;		/* percent of the default transfer sizes */
static int nconns = 10000;
static int nodelay;		/* -N: TCP_NODELAY on every data socket */
static int cpus_mode;		/* -c: 0 free, 1 all on CPU 0, 2 tx 0 rx 1 */
static const char *only_path, *only_dir;	/* -P veth|lo, -D one|both */
static long only_size = -1;		/* -S: one ULPDU size (0: MULPDU) */
static const char *only_modes = "0123";	/* -M: throughput modes */
static const char *only_side;	/* -O tcp|mpa: one side of each pair only */
static long slow_ns = 1000;	/* -W: the sides part's slowed TCP writer */
static const char *count_kind;	/* -X: transfers of one kind, for icount */
static int aa_check;		/* -a: the "MPA" run of a pair is plain TCP */
static const char *parts = "crc,throughput,sides,align,pingpong,setup,memory";
static double crc_mbs;		/* the CRC limit, MB/s; 0: not measured */

static int ns_a = -1, ns_b = -1;	/* the namespaces' files */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "mpabench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool want(const char *part)
{
	size_t n = strlen(part);
	const char *p = parts;

	while ((p = strstr(p, part))) {
		if ((p == parts || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
		p += n;
	}
	return false;
}

static void enter_ns(int fd)
{
	if (setns(fd, CLONE_NEWNET))
		die("setns: %s", strerror(errno));
}

/*
 * Run the calling thread (and the threads it creates) on @cpu only, or on
 * every CPU again (-1). Round trips between two threads on two vCPUs of a
 * TCG guest mostly measure how soon the host runs an idle vCPU's thread:
 * the latency parts pin both ends to one CPU.
 */
static void pin(int cpu)
{
	cpu_set_t set;
	int k;

	CPU_ZERO(&set);
	for (k = 0; k < CPU_SETSIZE; k++)
		if (cpu < 0 ? k < sysconf(_SC_NPROCESSORS_ONLN) : k == cpu)
			CPU_SET(k, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		die("pthread_setaffinity_np");
}

/* Statistics over rounds */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rank k of a distribution-free 95 % confidence interval of the
 * median of @n values: the interval runs from the k-th smallest value to
 * the k-th largest, k the largest rank with P(Bin(n, 1/2) < k) <= 0.025.
 * 0 below 6 values, where no such interval exists.
 */
static int ci_rank(int n)
{
	double p = 1, cdf = 0;	/* p: P(Bin(n, 1/2) = i) */
	int i;

	for (i = 0; i < n; i++)
		p /= 2;
	for (i = 0; i < n; i++) {
		cdf += p;
		if (cdf > 0.025)
			break;
		p = p * (n - i) / (i + 1);
	}
	return i;
}

/*
 * Median, min and max; lo..hi: the median's 95 % confidence interval
 * (min..max below 6 rounds). The wider it is, the less a median tells:
 * under TCG one run's speed can be twice the next's.
 */
struct stat3 {
	double med, min, max, lo, hi;
};

static struct stat3 stat3(const double *v, int n)
{
	double s[MAX_ROUNDS];
	struct stat3 r;
	int k = ci_rank(n);

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	r.min = s[0];
	r.max = s[n - 1];
	r.med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	r.lo = k ? s[k - 1] : r.min;
	r.hi = k ? s[n - k] : r.max;
	return r;
}

/* Connections */

enum path { VETH, LO };
static const char *const path_name[] = { "veth", "lo" };

struct listener {
	int fd;
	struct sockaddr_in addr;
};

static struct listener lsn[2];

static void listen_on(struct listener *l, int ns, const char *ip)
{
	socklen_t len = sizeof(l->addr);
	int one = 1;

	enter_ns(ns);
	l->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (l->fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&l->addr, 0, sizeof(l->addr));
	l->addr.sin_family = AF_INET;
	inet_pton(AF_INET, ip, &l->addr.sin_addr);
	if (bind(l->fd, (struct sockaddr *)&l->addr, sizeof(l->addr)) ||
	    listen(l->fd, 4096) ||
	    getsockname(l->fd, (struct sockaddr *)&l->addr, &len))
		die("listen on %s: %s", ip, strerror(errno));
	enter_ns(ns_a);
}

/* A new client socket (namespace a) connecting to @p's listener. */
static int dial(enum path p)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&lsn[p].addr,
			      sizeof(lsn[p].addr)))
		die("connect (%s): %s", path_name[p], strerror(errno));
	return fd;
}

static int answer(enum path p)
{
	int fd = accept(lsn[p].fd, NULL, NULL);

	if (fd < 0)
		die("accept (%s): %s", path_name[p], strerror(errno));
	return fd;
}

static void tcp_pair(enum path p, int *cli, int *srv)
{
	*cli = dial(p);
	*srv = answer(p);
	if (nodelay &&
	    (setsockopt(*cli, SOL_TCP, TCP_NODELAY, &nodelay, sizeof(int)) ||
	     setsockopt(*srv, SOL_TCP, TCP_NODELAY, &nodelay, sizeof(int))))
		die("TCP_NODELAY: %s", strerror(errno));
}

/* What an MPA connection runs with */
struct mode {
	bool mpa;
	bool crc;
	bool markers;
	const char *name;
};

static const struct mode m_tcp = { false, false, false, "TCP" };
static const struct mode m_mpa[] = {
	{ true, true, false, "CRC" },
	{ true, true, true, "CRC, Markers" },
	{ true, false, false, "no CRC" },
	{ true, false, true, "no CRC, Markers" },
};

#define NR_MPA	ARRAY_SIZE(m_mpa)

/* Both ends through the startup phase: @i the Initiator, @r the Responder. */
static void mpa_up(int i, int r, const struct mode *m)
{
	const char *what = "options";

	if (t_mpa_options(i, MPA_ROLE_INITIATOR, m->markers, m->crc) ||
	    t_mpa_options(r, MPA_ROLE_RESPONDER, m->markers, m->crc))
		goto fail;
	what = "MPA_START (Initiator)";
	if (t_nonblock(i) || mpa_start(i) != -1 || errno != EINPROGRESS)
		goto fail;
	what = "MPA_START (Responder)";
	if (mpa_start(r))
		goto fail;
	what = "MPA_ACCEPT";
	if (mpa_answer(r, MPA_ACCEPT, NULL, 0))
		goto fail;
	what = "the Initiator's startup";
	while (!t_startup_over(i))
		if (t_poll(i, POLLOUT, 10000) <= 0)
			goto fail;
	if (t_blocking(i) || mpa_state(i) != MPA_STATE_FULL ||
	    mpa_state(r) != MPA_STATE_FULL)
		goto fail;
	return;
fail:
	die("%s failed: %s (states %ld, %ld)", what, strerror(errno),
	    mpa_state(i), mpa_state(r));
}

static void conn(enum path p, const struct mode *m, int *cli, int *srv)
{
	tcp_pair(p, cli, srv);
	if (m->mpa)
		mpa_up(*cli, *srv, m);
}

static u_int32_t mulpdu_of(int fd)
{
	struct mpa_result res;

	if (mpa_getstruct(fd, MPA_RESULT, &res, sizeof(res)))
		die("MPA_RESULT: %s", strerror(errno));
	return res.mulpdu;
}

static void close_abort(int fd)
{
	mpa_close_abort(fd);
}

/* Part: the CRC limit */

/* MB/s of the kernel's crc32c over @total octets in @chunk-octet updates. */
static double crc_run(size_t chunk, size_t total)
{
	struct sockaddr_alg sa = {
		.salg_family = AF_ALG,
		.salg_type = "hash",
		.salg_name = "crc32c",
	};
	static uint8_t buf[1 << 16];
	uint32_t digest;
	size_t done = 0;
	double t0, t;
	int tfm, op;

	tfm = socket(AF_ALG, SOCK_SEQPACKET, 0);
	if (tfm < 0 || bind(tfm, (struct sockaddr *)&sa, sizeof(sa)))
		die("AF_ALG crc32c: %s (modprobe algif_hash?)",
		    strerror(errno));
	op = accept(tfm, NULL, 0);
	if (op < 0)
		die("AF_ALG accept: %s", strerror(errno));
	t_fill(buf, sizeof(buf), 7);
	t0 = now();
	while (done < total) {
		if (send(op, buf, chunk, MSG_MORE) != (ssize_t)chunk)
			die("AF_ALG send: %s", strerror(errno));
		done += chunk;
	}
	if (send(op, NULL, 0, 0) < 0 || read(op, &digest, 4) != 4)
		die("AF_ALG digest: %s", strerror(errno));
	t = now() - t0;
	close(op);
	close(tfm);
	return total / t / 1e6;
}

/* Which implementation "crc32c" binds to: the highest priority. */
static void crc_driver(char *out, size_t size)
{
	FILE *f = fopen("/proc/crypto", "r");
	char line[256], name[64] = "", drv[64] = "";
	int prio = -1, best = -1;

	snprintf(out, size, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "name : %63s", name) == 1)
			continue;
		if (sscanf(line, "driver : %63s", drv) == 1)
			continue;
		if (sscanf(line, "priority : %d", &prio) == 1 &&
		    !strcmp(name, "crc32c") && prio > best) {
			best = prio;
			snprintf(out, size, "%s", drv);
		}
	}
	fclose(f);
}

/*
 * The CRC runs vary far less than the transfers (no scheduling, no
 * wakeups): the many rounds and large transfers asked of a precise
 * throughput figure (-r 101 -s 4000) would only make this part last.
 */
#define CRC_MAX_ROUNDS	11
#define CRC_MAX_TOTAL	(256 << 20)

static void part_crc(void)
{
	size_t total = (size_t)(64 << 20) * scale / 100;
	int r, n = rounds < CRC_MAX_ROUNDS ? rounds : CRC_MAX_ROUNDS;
	double v[MAX_ROUNDS];
	struct stat3 s;
	char drv[64];

	if (total > CRC_MAX_TOTAL)
		total = CRC_MAX_TOTAL;
	crc_driver(drv, sizeof(drv));
	crc_run(1 << 16, 1 << 20);	/* warm up */
	for (r = 0; r < n; r++)
		v[r] = crc_run(1 << 16, total);
	s = stat3(v, n);
	crc_mbs = s.med;
	printf("\n== crc: the CRC limit\n");
	printf("crc32c (%s) through AF_ALG, 64 KiB updates, %zu MiB, %d rounds:\n"
	       "%.1f MB/s (%.1f..%.1f)\n", drv, total >> 20, n, s.med, s.min,
	       s.max);
	printf("MPA pays one pass per octet on each side: an MPA cell's limit is\n"
	       "1 / (1/TCP + 1/CRC), TCP being the cell's own plain TCP figure.\n");
	fflush(stdout);
}

/* Part: throughput */

struct flow {
	pthread_t thr;
	int fd;
	size_t size;		/* octets per send() */
	size_t total;		/* octets to move */
	size_t done;
	double t_end;
	int err;
	bool framed;		/* a plain TCP writer of whole FPDUs (-p sides) */
	long spin_ns;		/* a writer spins this long before each send() */
	double cpu;		/* the thread's CPU time, s (softirqs in it too) */
	long sleeps;		/* its voluntary context switches */
};

/* What the flow's thread used, from its own end */
static void flow_account(struct flow *f)
{
	struct timespec ts;
	struct rusage ru;

	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		f->cpu = ts.tv_sec + ts.tv_nsec / 1e9;
	if (!getrusage(RUSAGE_THREAD, &ru))
		f->sleeps = ru.ru_nvcsw;
}

/* The ends of the last one-way transfer: [0] the sender, [1] the reader */
static struct flow last_ends[2];

/* Keep the CPU busy in user space for @ns nanoseconds. */
static void spin(long ns)
{
	double until = now() + ns / 1e9;

	while (now() < until)
		;
}

static long tx_spin_ns;	/* the spin_ns of the writers started now */

static void *tx_run(void *arg)
{
	static uint8_t buf[MPA_MAX_ULPDU], fpdu[MPA_MAX_ULPDU + 16];
	struct flow *f = arg;
	size_t w = 0;
	ssize_t r;

	if (cpus_mode)
		pin(0);
	if (f->framed)	/* the same FPDU each time: a ULPDU of zeroes */
		w = t_fpdu_encode(fpdu, 0, false, buf, f->size, NULL);

	while (f->done < f->total) {
		size_t n = f->size < f->total - f->done ? f->size :
			   f->total - f->done;

		if (f->framed) {
			/* one send() per FPDU, as MPA's sender hands TCP one */
			size_t k = 0;	/* every ULPDU is @size: n == size */

			for (r = 1; k < w && r > 0; k += r > 0 ? r : 0)
				r = send(f->fd, fpdu + k, w - k, MSG_NOSIGNAL);
			if (r <= 0) {
				f->err = r ? errno : EPIPE;
				break;
			}
			f->done += n;
			continue;
		}
		if (f->spin_ns)
			spin(f->spin_ns);
		r = send(f->fd, buf, n, MSG_NOSIGNAL);
		if (r <= 0) {
			f->err = r ? errno : EPIPE;
			break;
		}
		f->done += r;
	}
	flow_account(f);
	return NULL;
}

static void *rx_run(void *arg)
{
	struct flow *f = arg;
	uint8_t *buf = malloc(RBUF);
	ssize_t r;

	if (cpus_mode)
		pin(cpus_mode == 2 ? 1 : 0);

	while (buf && f->done < f->total) {
		r = recv(f->fd, buf, RBUF, 0);
		if (r <= 0) {
			f->err = r ? errno : EPIPE;
			break;
		}
		f->done += r;
	}
	f->t_end = now();
	flow_account(f);
	free(buf);
	return NULL;
}

static void flow_start_framed(struct flow *f, int fd, size_t size,
			      size_t total, void *(*fn)(void *), bool framed)
{
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->size = size;
	f->total = total;
	f->framed = framed;
	f->spin_ns = tx_spin_ns;
	if (pthread_create(&f->thr, NULL, fn, f))
		die("pthread_create");
}

static void flow_start(struct flow *f, int fd, size_t size, size_t total,
		       void *(*fn)(void *))
{
	flow_start_framed(f, fd, size, total, fn, false);
}

static void flow_join(struct flow *f, const char *what)
{
	pthread_join(f->thr, NULL);
	if (f->done != f->total)
		die("%s: %zu of %zu octets, then %s", what, f->done, f->total,
		    strerror(f->err));
}

/*
 * One transfer: @total octets in sends of @size from the Initiator (both
 * ways: from each end at once). MB/s of ULPDU (payload) octets.
 */
static double xfer(enum path p, const struct mode *m, size_t size,
		   size_t total, bool both)
{
	struct flow tx[2], rx[2];
	int cli, srv, k, n = both ? 2 : 1;
	double t0, t1 = 0;

	total -= total % size;	/* every ULPDU of @size octets */
	conn(p, m, &cli, &srv);
	/* the receivers wait first; the clock starts with the senders */
	flow_start(&rx[0], srv, size, total, rx_run);
	if (both)
		flow_start(&rx[1], cli, size, total, rx_run);
	t0 = now();
	flow_start(&tx[0], cli, size, total, tx_run);
	if (both)
		flow_start(&tx[1], srv, size, total, tx_run);
	for (k = 0; k < n; k++) {
		flow_join(&tx[k], "send");
		flow_join(&rx[k], "receive");
		if (rx[k].t_end > t1)
			t1 = rx[k].t_end;
	}
	last_ends[0] = tx[0];
	last_ends[1] = rx[0];
	close(cli);
	close(srv);
	return n * total / (t1 - t0) / 1e6;
}

/* The ULPDU sizes (0: the path's MULPDU, at most 1448) and octets moved. */
static const struct {
	size_t size;
	size_t total;
} cells[NR_CELLS] = {
	{ 64, 256 << 10 },
	{ 512, 1 << 20 },
	{ 0, 2 << 20 },
	{ 16384, 4 << 20 },
	{ 64768, 8 << 20 },
};

static size_t mulpdu[2][2];	/* [path][markers] */

static void probe_mulpdu(void)
{
	int p, mk, cli, srv;

	for (p = VETH; p <= LO; p++)
		for (mk = 0; mk < 2; mk++) {
			conn(p, &m_mpa[mk], &cli, &srv);
			mulpdu[p][mk] = mulpdu_of(cli);
			close(cli);
			close(srv);
		}
}

static size_t cell_size(enum path p, size_t size, const struct mode *m)
{
	size_t mss_cell = 1448;

	if (size)
		return size;
	if (!m->mpa)
		return mss_cell;
	return mulpdu[p][m->markers] < mss_cell ? mulpdu[p][m->markers] :
	       mss_cell;
}

/* Is MPA mode @k (m_mpa[]) in -M's list? */
static bool mode_wanted(unsigned int k)
{
	return strchr(only_modes, '0' + k);
}

/* Are the throughput runs of @name ("tcp", "mpa") wanted (-O)? */
static bool side(const char *name)
{
	return !only_side || !strcmp(only_side, name);
}

/* One pair of runs of a cell: plain TCP, and MPA in mode @m */
struct pair {
	enum path p;
	size_t tcp_size, mpa_size, total;
	bool both;
	const struct mode *m;
};

static double pair_side(const struct pair *pr, bool mpa)
{
	if (!side(mpa ? "mpa" : "tcp"))
		return 0;
	if (!mpa || aa_check)
		return xfer(pr->p, &m_tcp, pr->tcp_size, pr->total, pr->both);
	return xfer(pr->p, pr->m, pr->mpa_size, pr->total, pr->both);
}

/*
 * Round @r of a pair, over fresh connections: TCP then MPA, or MPA then
 * TCP in odd rounds. The order alternates because it matters: in an A/A
 * check (-a: both runs plain TCP) the second run of a pair read 5 % slower
 * than the first (median of 101 pairs, 95 % interval 1 to 10 %), which a
 * fixed order would charge to MPA.
 */
static void pair_run(const struct pair *pr, int r, double *tcp, double *mpa)
{
	if (r % 2) {
		*mpa = pair_side(pr, true);
		*tcp = pair_side(pr, false);
	} else {
		*tcp = pair_side(pr, false);
		*mpa = pair_side(pr, true);
	}
}

/* A cell's ratios over its rounds: to TCP, to the CRC limit */
struct ratios {
	struct stat3 tcp, limit;
};

/* " median [its 95 % confidence interval] (min..max)" */
static void print_stat(const struct stat3 *s)
{
	printf("  %5.2f [%4.2f-%4.2f] (%4.2f..%4.2f)", s->med, s->lo, s->hi,
	       s->min, s->max);
}

static struct ratios print_ratio(const char *label, const double *tcp,
				 const double *mpa, int n, bool crc)
{
	double rt[MAX_ROUNDS], rl[MAX_ROUNDS];
	struct stat3 st, sm, a, b;
	int r;

	if (only_side) {
		/* -O: one side's speed, for a profiler; no ratio */
		printf("  %-20s %7.2f %7.2f  (-O %s: no ratios)\n", label,
		       stat3(tcp, n).med, stat3(mpa, n).med, only_side);
		return (struct ratios){};
	}
	for (r = 0; r < n; r++) {
		rt[r] = mpa[r] / tcp[r];
		rl[r] = crc_mbs ? mpa[r] * (1 / tcp[r] + 1 / crc_mbs) : 0;
	}
	st = stat3(tcp, n);
	sm = stat3(mpa, n);
	a = stat3(rt, n);
	b = stat3(rl, n);
	printf("  %-20s %7.2f %7.2f", label, st.med, sm.med);
	print_stat(&a);
	if (crc && crc_mbs)
		print_stat(&b);
	else
		b = (struct stat3){};
	printf("\n");
	fflush(stdout);
	return (struct ratios){ a, b };
}

/*
 * What the targets of issue 18 are judged on: veth, one way, Markers off,
 * [cell][crc on]; 0 where not measured.
 */
static struct ratios veth_one[NR_CELLS][2];
static double align_min = -1;	/* the lowest alignment share, percent */
static long long mem_per_socket = -1;

static void part_throughput(void)
{
	double tcp[NR_MPA][MAX_ROUNDS], mpa[NR_MPA][MAX_ROUNDS];
	unsigned int c, k;
	int p, both, r;

	printf("\n== throughput: MPA against plain TCP\n");
	printf("MB/s: medians; x TCP: MPA / the TCP run made next to it (TCP,\n"
	       "MPA, MPA, TCP, TCP, MPA ...: odd rounds run MPA first); x limit:\n"
	       "MPA / (1 / (1/TCP + 1/CRC)); each a\n"
	       "median [its 95 %% confidence interval%s] (min..max) over %d rounds\n",
	       ci_rank(rounds) ? "" : ": none below 6 rounds, min-max shown",
	       rounds);
	if (aa_check)
		printf("A/A check (-a): the MPA column is plain TCP as well\n");
	for (p = VETH; p <= LO; p++) {
		if (only_path && strcmp(only_path, path_name[p]))
			continue;
		for (both = 0; both < 2; both++) {
			if (only_dir && strcmp(only_dir, both ? "both" : "one"))
				continue;
			printf("\n%s, %s\n", path_name[p],
			       both ? "both ways at once" : "one way");
			printf("  %-20s %7s %7s  %-29s  %s\n", "ULPDU, MPA mode",
			       "TCP", "MPA", "x TCP", "x limit");
			for (c = 0; c < ARRAY_SIZE(cells); c++) {
				size_t total = cells[c].total * scale / 100;

				if (only_size >= 0 && cells[c].size != (size_t)only_size)
					continue;
				size_t ts = cell_size(p, cells[c].size, &m_tcp);

				for (r = 0; r < rounds; r++)
					for (k = 0; k < NR_MPA; k++) {
						struct pair pr = {
							p, ts,
							cell_size(p, cells[c].size,
								  &m_mpa[k]),
							total, both, &m_mpa[k]
						};

						if (mode_wanted(k))
							pair_run(&pr, r, &tcp[k][r],
								 &mpa[k][r]);
					}
				for (k = 0; k < NR_MPA; k++) {
					char label[40];

					if (!mode_wanted(k))
						continue;

					snprintf(label, sizeof(label), "%zu %s",
						 cell_size(p, cells[c].size,
							   &m_mpa[k]),
						 m_mpa[k].name);
					struct ratios q;

					q = print_ratio(label, tcp[k], mpa[k],
							rounds, m_mpa[k].crc);
					if (p == VETH && !both &&
					    !m_mpa[k].markers)
						veth_one[c][m_mpa[k].crc] = q;
				}
			}
		}
	}
}

/* Part: one end MPA, the other plain TCP speaking MPA's wire format */

enum sides {
	SIDES_BOTH, SIDES_WRITER, SIDES_READER,
	SIDES_SLOWED,	/* no MPA: TCP, its writer slowed by -W's time */
	NR_SIDES
};

static const char *const sides_name[NR_SIDES] = {
	"MPA both ends", "MPA writes", "MPA reads", "TCP slowed",
};

/*
 * One transfer over veth, CRC and Markers off, in ULPDUs of @size: MPA at
 * both ends, or at one end only, the other end a plain TCP socket that
 * runs the startup phase itself (the tests' raw peer: t_raw_responder(),
 * t_raw_initiator()) and then either reads the FPDUs as a byte stream or
 * writes them whole, one send() each (t_fpdu_encode(): the CRC field
 * carries a CRC, which a C=0 receiver ignores). MB/s of ULPDU octets.
 */
static double xfer_sides(enum sides sd, size_t size, size_t total)
{
	size_t wire = t_fpdu_wire(0, false, size);
	struct mpa_result res;
	struct flow tx, rx;
	int cli, srv, ret;
	double t0, mbs;

	if (sd == SIDES_BOTH)
		return xfer(VETH, &m_mpa[2], size, total, false);
	if (sd == SIDES_SLOWED) {
		tx_spin_ns = slow_ns;
		mbs = xfer(VETH, &m_tcp, size, total, false);
		tx_spin_ns = 0;
		return mbs;
	}
	total -= total % size;
	tcp_pair(VETH, &cli, &srv);
	if (sd == SIDES_WRITER)
		ret = t_raw_responder(cli, srv, 0, false, false);
	else
		ret = t_raw_initiator(srv, cli, 0, false, false);
	if (ret < 0 ||
	    mpa_getstruct(sd == SIDES_WRITER ? cli : srv, MPA_RESULT, &res,
			  sizeof(res)) || (res.flags & MPA_RESULT_CRC))
		die("%s: the startup with a plain TCP peer failed",
		    sides_name[sd]);
	flow_start(&rx, srv, size,
		   sd == SIDES_WRITER ? total / size * wire : total, rx_run);
	t0 = now();
	flow_start_framed(&tx, cli, size, total, tx_run, sd == SIDES_READER);
	flow_join(&tx, "send");
	flow_join(&rx, "receive");
	last_ends[0] = tx;
	last_ends[1] = rx;
	close(cli);
	close(srv);
	return total / (rx.t_end - t0) / 1e6;
}

/* What both ends of a kind of transfer used, summed over the rounds */
struct sides_use {
	double cpu[2];		/* s: [0] the sender's thread, [1] the reader's */
	double sleeps[2];	/* voluntary context switches */
	double octets;		/* ULPDU octets moved */
	double sends;		/* send() calls made */
};

/* Add what the ends of the last transfer used to @u. */
static void sides_use(struct sides_use *u)
{
	const struct flow *tx = &last_ends[0];
	int e;

	for (e = 0; e < 2; e++) {
		u->cpu[e] += last_ends[e].cpu;
		u->sleeps[e] += last_ends[e].sleeps;
	}
	u->octets += tx->done;
	u->sends += tx->done / tx->size;
}

/* @m's CPU per octet at end @e, as a ratio to @t's */
static double sides_cpu(const struct sides_use *m, const struct sides_use *t,
			int e)
{
	return m->cpu[e] / m->octets / (t->cpu[e] / t->octets);
}

static const char *const count_kinds[] = {
	"tcp", "both", "writes", "reads",	/* then as enum sides */
};

/*
 * -X KIND: only transfers of one kind, -r of them (no pairs, no ratios),
 * between two sync() calls, for tools/testing/bench/icount.sh: its
 * instruction counter counts from the kernel's ksys_sync() to the next.
 * KIND: tcp (plain TCP, the TCP runs of this part), both, writes or reads
 * (MPA at both ends, at the writer only, at the reader only).
 */
static void sides_counted(size_t size, size_t ts, size_t total)
{
	struct sides_use u = {};
	unsigned int k;
	int r;

	for (k = 0; k < ARRAY_SIZE(count_kinds); k++)
		if (!strcmp(count_kind, count_kinds[k]))
			break;
	if (k == ARRAY_SIZE(count_kinds))
		die("-X %s: tcp, both, writes or reads", count_kind);
	sync();
	for (r = 0; r < rounds; r++) {
		if (k)
			xfer_sides(k - 1, size, total);
		else
			xfer(VETH, &m_tcp, ts, total, false);
		sides_use(&u);
	}
	sync();
	printf("icount: %s, %d transfers, %.0f sends, %.0f octets\n",
	       count_kind, rounds, u.sends, u.octets);
}

/*
 * Where MPA's cost lies: each way of a transfer against plain TCP, MPA's
 * sender (against a plain reader of its FPDUs) and MPA's receiver
 * (against a plain writer of FPDUs) apart, beside MPA at both ends. The
 * MULPDU without CRC (or -S's size), veth, one way; each run paired with
 * a plain TCP run as in the throughput part.
 */
static void part_sides(void)
{
	size_t want_size = only_size > 0 ? only_size : 0, total = 2 << 20;
	size_t size = cell_size(VETH, want_size, &m_mpa[2]);
	size_t ts = cell_size(VETH, want_size, &m_tcp);
	double tcp[NR_SIDES][MAX_ROUNDS], mpa[NR_SIDES][MAX_ROUNDS];
	struct sides_use use[NR_SIDES][2];	/* [side][TCP, MPA] */
	int r, k, nr = slow_ns ? NR_SIDES : SIDES_SLOWED;
	unsigned int c;

	if (want_size > MPA_MAX_ULPDU)
		die("-S %zu: above the largest ULPDU, %d", want_size,
		    MPA_MAX_ULPDU);
	/* as much as the throughput part's cell of that size moves */
	for (c = 0; c < ARRAY_SIZE(cells); c++)
		if (cells[c].size == want_size)
			total = cells[c].total;
	total = total * scale / 100;
	if (count_kind) {
		sides_counted(size, ts, total);
		return;
	}

	printf("\n== sides: MPA at one end only, the other plain TCP speaking MPA's\n"
	       "wire format (veth, one way, no CRC, no Markers); x TCP as in the\n"
	       "throughput part, over %d rounds\n", rounds);
	if (slow_ns)
		printf("  (TCP slowed: no MPA, the writer spins %ld ns before each send)\n",
		       slow_ns);
	printf("  %-20s %7s %7s  %s\n", "ULPDU, MPA at", "TCP", "MPA",
	       "x TCP");
	memset(use, 0, sizeof(use));
	for (r = 0; r < rounds; r++)
		for (k = 0; k < nr; k++) {
			/* the slowed writer sends as TCP's does */
			size_t sz = k == SIDES_SLOWED ? ts : size;

			if (r % 2) {
				mpa[k][r] = xfer_sides(k, sz, total);
				sides_use(&use[k][1]);
				tcp[k][r] = xfer(VETH, &m_tcp, ts, total, false);
				sides_use(&use[k][0]);
			} else {
				tcp[k][r] = xfer(VETH, &m_tcp, ts, total, false);
				sides_use(&use[k][0]);
				mpa[k][r] = xfer_sides(k, sz, total);
				sides_use(&use[k][1]);
			}
		}
	for (k = 0; k < nr; k++) {
		char label[40];

		snprintf(label, sizeof(label), "%zu %s",
			 k == SIDES_SLOWED ? ts : size, sides_name[k]);
		print_ratio(label, tcp[k], mpa[k], rounds, false);
	}
	printf("  each end's thread, all rounds: CPU per octet x TCP (softirqs\n"
	       "  that ran in the thread included); sleeps per 1000 sends, MPA (TCP)\n");
	printf("  %-20s %8s %8s %14s %14s\n", "ULPDU, MPA at", "sender",
	       "reader", "sender sleeps", "reader sleeps");
	for (k = 0; k < nr; k++) {
		const struct sides_use *t = &use[k][0], *m = &use[k][1];
		char label[40];

		snprintf(label, sizeof(label), "%zu %s",
			 k == SIDES_SLOWED ? ts : size, sides_name[k]);
		printf("  %-20s %8.2f %8.2f %6.1f (%5.1f) %6.1f (%5.1f)\n",
		       label, sides_cpu(m, t, 0), sides_cpu(m, t, 1),
		       1000 * m->sleeps[0] / m->sends,
		       1000 * t->sleeps[0] / t->sends,
		       1000 * m->sleeps[1] / m->sends,
		       1000 * t->sleeps[1] / t->sends);
	}
}

/* Part: FPDU alignment on the wire (veth) */

struct seg {
	uint32_t seq;
	uint32_t len;
	uint16_t gso;
};

struct capture {
	pthread_t thr;
	int fd;
	uint16_t sport, dport;
	volatile bool stop;
	struct seg *segs;
	size_t n, max;
	bool overflow;
};

/*
 * The sender's packets as the veth device gets them (PACKET_OUTGOING):
 * GSO packets whole, with the virtio-net header telling the segment size
 * TCP asked for, so the segments on the wire are computed exactly.
 */
static void *capture_run(void *arg)
{
	struct capture *cp = arg;
	uint8_t pkt[sizeof(struct virtio_net_hdr) + 14 + 60 + 60];
	struct virtio_net_hdr *vh = (void *)pkt;
	struct sockaddr_ll sll;
	socklen_t sl;
	ssize_t r;

	for (;;) {
		bool last = cp->stop;
		const struct iphdr *ip;
		const uint8_t *tcp;
		uint32_t plen, thl, off = sizeof(*vh) + 14;

		sl = sizeof(sll);
		r = recvfrom(cp->fd, pkt, sizeof(pkt),
			     MSG_TRUNC | (last ? MSG_DONTWAIT : 0),
			     (struct sockaddr *)&sll, &sl);
		if (r < 0 && last)
			break;
		if (r < (ssize_t)(off + 40) || sll.sll_pkttype != PACKET_OUTGOING ||
		    ntohs(sll.sll_protocol) != ETH_P_IP)
			continue;
		ip = (const void *)(pkt + off);
		if (ip->protocol != IPPROTO_TCP)
			continue;
		tcp = pkt + off + ip->ihl * 4;
		if (t_get_be16(tcp) != cp->sport ||
		    t_get_be16(tcp + 2) != cp->dport)
			continue;
		thl = (tcp[12] >> 4) * 4;
		plen = r - off - ip->ihl * 4;
		if (plen <= thl)
			continue;
		if (cp->n == cp->max) {
			cp->overflow = true;
			continue;
		}
		cp->segs[cp->n].seq = (uint32_t)tcp[4] << 24 | tcp[5] << 16 |
				      tcp[6] << 8 | tcp[7];
		cp->segs[cp->n].len = plen - thl;
		cp->segs[cp->n].gso = vh->gso_type != VIRTIO_NET_HDR_GSO_NONE ?
				      vh->gso_size : 0;
		cp->n++;
	}
	return NULL;
}

static uint16_t port_of(int fd, bool peer)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);

	if ((peer ? getpeername : getsockname)(fd, (struct sockaddr *)&sin,
					       &len))
		die("getsockname: %s", strerror(errno));
	return ntohs(sin.sin_port);
}

struct align_result {
	size_t segs, aligned, fpdus, retrans;
	size_t drops;
	uint32_t bad_at, bad_len, bad_fpdu;	/* the first misaligned one */
};

/*
 * Send @total octets of @size-octet ULPDUs from the Initiator over veth
 * while capturing; classify each data segment on the wire.
 */
static void align_run(const struct mode *m, size_t size, size_t total,
		      struct align_result *ar)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ALL),
	};
	struct tpacket_stats ps;
	socklen_t pslen = sizeof(ps);
	struct capture cp = { .max = 1 << 20 };
	uint32_t seq0, pos = 0, next, seen = 0;
	int cli, srv, one = 1;
	struct flow tx, rx;
	size_t j;

	total -= total % size;	/* every ULPDU of @size octets */
	memset(ar, 0, sizeof(*ar));
	cp.segs = calloc(cp.max, sizeof(*cp.segs));
	sll.sll_ifindex = if_nametoindex("va");
	cp.fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (!cp.segs || !sll.sll_ifindex || cp.fd < 0 ||
	    setsockopt(cp.fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) ||
	    bind(cp.fd, (struct sockaddr *)&sll, sizeof(sll)) ||
	    t_set_timeo(cp.fd, SO_RCVTIMEO, 100) ||
	    setsockopt(cp.fd, SOL_SOCKET, SO_RCVBUFFORCE, &(int){ 64 << 20 },
		       sizeof(int)))
		die("packet socket on va: %s", strerror(errno));
	tcp_pair(VETH, &cli, &srv);
	cp.sport = port_of(cli, false);
	cp.dport = port_of(cli, true);
	if (pthread_create(&cp.thr, NULL, capture_run, &cp))
		die("pthread_create");
	mpa_up(cli, srv, m);
	flow_start(&rx, srv, size, total, rx_run);
	flow_start(&tx, cli, size, total, tx_run);
	flow_join(&tx, "send");
	flow_join(&rx, "receive");
	/* the receiver has it all: every packet passed the packet socket */
	cp.stop = true;
	pthread_join(cp.thr, NULL);
	if (!getsockopt(cp.fd, SOL_PACKET, PACKET_STATISTICS, &ps, &pslen))
		ar->drops = ps.tp_drops;
	if (cp.overflow)
		ar->drops++;
	close(cp.fd);
	close(cli);
	close(srv);

	/* The first data the Initiator sends is the Request (20 octets). */
	if (!cp.n || cp.segs[0].len != T_HDR)
		die("align: no Request captured");
	seq0 = cp.segs[0].seq + T_HDR;
	next = t_fpdu_wire(pos, m->markers, size);
	for (j = 1; j < cp.n; j++) {
		uint32_t rel = cp.segs[j].seq - seq0;
		uint32_t end = rel + cp.segs[j].len;
		uint32_t cut = cp.segs[j].gso ?: cp.segs[j].len;
		uint32_t a, b;

		if (j > 1 && (int32_t)(rel - seen) < 0) {
			ar->retrans++;
			continue;
		}
		seen = end;
		/* each segment TCP's GSO cuts this packet into */
		for (a = rel; a < end; a = b) {
			bool ok;

			b = a + cut < end ? a + cut : end;
			while (next <= a) {	/* FPDUs before this segment */
				pos = next;
				next = pos + t_fpdu_wire(pos, m->markers, size);
			}
			/* starts at an FPDU (its span: a leading Marker too) */
			ok = pos == a;
			/* and every FPDU that starts in it ends in it */
			while (next <= b) {
				if (pos >= a)
					ar->fpdus++;
				pos = next;
				next = pos + t_fpdu_wire(pos, m->markers, size);
			}
			ok = ok && pos == b;
			if (!ok && ar->segs == ar->aligned) {
				ar->bad_at = a;
				ar->bad_len = b - a;
				ar->bad_fpdu = pos;
			}
			ar->segs++;
			ar->aligned += ok;
		}
	}
	free(cp.segs);
}

static void part_align(void)
{
	size_t sizes[3] = { 64, 512, 0 }, total = (size_t)(4 << 20) * scale / 100;
	struct align_result ar;
	unsigned int k, mk;

	printf("\n== align: FPDUs and TCP segments on veth (CRC on, %zu MiB each)\n",
	       total >> 20);
	printf("  %-16s %8s %8s %9s %11s\n", "ULPDU, Markers", "segments",
	       "aligned", "share", "FPDUs/seg");
	for (mk = 0; mk < 2; mk++)
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			const struct mode *m = &m_mpa[mk];
			size_t size = sizes[k] ?: mulpdu[VETH][mk];
			char label[40];

			align_run(m, size, total, &ar);
			snprintf(label, sizeof(label), "%zu %s", size,
				 mk ? "Markers" : "none");
			if (ar.segs && (align_min < 0 ||
					100.0 * ar.aligned / ar.segs < align_min))
				align_min = 100.0 * ar.aligned / ar.segs;
			printf("  %-16s %8zu %8zu %8.2f%% %11.2f", label,
			       ar.segs, ar.aligned,
			       ar.segs ? 100.0 * ar.aligned / ar.segs : 0,
			       ar.segs ? (double)ar.fpdus / ar.segs : 0);
			if (ar.retrans || ar.drops)
				printf("  (%zu retransmissions, %zu drops)",
				       ar.retrans, ar.drops);
			if (ar.aligned < ar.segs)
				printf("  (first: %u octets at %u, FPDU at %u)",
				       ar.bad_len, ar.bad_at, ar.bad_fpdu);
			printf("\n");
			fflush(stdout);
		}
}

/* Part: ping-pong */

struct echo {
	pthread_t thr;
	int fd;
	int n;
	int err;
};

static void *echo_run(void *arg)
{
	struct echo *e = arg;
	uint8_t buf[64];
	int k;

	for (k = 0; k < e->n; k++) {
		if (recv(e->fd, buf, sizeof(buf), MSG_WAITALL) != sizeof(buf) ||
		    send(e->fd, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf)) {
			e->err = errno ?: EPIPE;
			break;
		}
	}
	return NULL;
}

/* Microseconds per 64-octet round trip. */
static double pingpong(enum path p, const struct mode *m, int n)
{
	uint8_t buf[64] = { 1 };
	struct echo e = { .n = n };
	int cli, srv, k;
	double t0, t;

	conn(p, m, &cli, &srv);
	e.fd = srv;
	if (pthread_create(&e.thr, NULL, echo_run, &e))
		die("pthread_create");
	t0 = now();
	for (k = 0; k < n; k++)
		if (send(cli, buf, sizeof(buf), MSG_NOSIGNAL) != sizeof(buf) ||
		    recv(cli, buf, sizeof(buf), MSG_WAITALL) != sizeof(buf))
			die("ping-pong: %s", strerror(errno));
	t = now() - t0;
	pthread_join(e.thr, NULL);
	if (e.err)
		die("ping-pong echo: %s", strerror(e.err));
	close(cli);
	close(srv);
	return t / n * 1e6;
}

static void part_pingpong(void)
{
	int n = 2000 * scale / 100, p, r;
	double tcp[MAX_ROUNDS], mpa[2][MAX_ROUNDS];
	unsigned int k;

	printf("\n== pingpong: 64-octet ULPDUs back and forth, %d round trips a run,\n"
	       "both ends on CPU 0\n", n);
	pin(0);
	printf("  %-20s %9s %9s  %s\n", "path, MPA mode", "TCP us", "MPA us",
	       "MPA time / TCP time, median (min..max)");
	for (p = VETH; p <= LO; p++) {
		for (r = 0; r < rounds; r++) {
			/* odd rounds run MPA first, as pair_run() does */
			if (!(r % 2))
				tcp[r] = pingpong(p, &m_tcp, n);
			for (k = 0; k < 2; k++)
				mpa[k][r] = pingpong(p, &m_mpa[k], n);
			if (r % 2)
				tcp[r] = pingpong(p, &m_tcp, n);
		}
		for (k = 0; k < 2; k++) {
			double q[MAX_ROUNDS];
			struct stat3 a, b, c;
			char label[40];

			for (r = 0; r < rounds; r++)
				q[r] = mpa[k][r] / tcp[r];
			a = stat3(tcp, rounds);
			b = stat3(mpa[k], rounds);
			c = stat3(q, rounds);
			snprintf(label, sizeof(label), "%s %s", path_name[p],
				 m_mpa[k].name);
			printf("  %-20s %9.1f %9.1f  %5.2f (%4.2f..%4.2f)\n",
			       label, a.med, b.med, c.med, c.min, c.max);
			fflush(stdout);
		}
	}
	pin(-1);
}

/* Part: connection setup */

struct acceptor {
	pthread_t thr;
	enum path p;
	bool mpa;
	int n;
	int *fds;
	const char *err;
	int errnum;
};

/* The server's side: accept, and as the Responder accept the Request. */
static void *acceptor_run(void *arg)
{
	struct acceptor *a = arg;
	int k, fd;

	for (k = 0; k < a->n; k++) {
		fd = accept(lsn[a->p].fd, NULL, NULL);
		a->fds[k] = fd;
		if (fd < 0) {
			a->err = "accept";
			break;
		}
		if (!a->mpa)
			continue;
		if (mpa_config(fd, MPA_ROLE_RESPONDER, 0) || mpa_start(fd) ||
		    mpa_answer(fd, MPA_ACCEPT, NULL, 0)) {
			a->err = "Responder's startup";
			break;
		}
	}
	if (a->err)
		a->errnum = errno;
	return NULL;
}

/*
 * @n connections one after the other (client and server side run in
 * threads of their own), kept open in @cfd and @sfd: connections a second.
 */
static double open_conns(enum path p, bool mpa, int n, int *cfd, int *sfd)
{
	struct acceptor a = { .p = p, .mpa = mpa, .n = n, .fds = sfd };
	double t0, t;
	int k;

	t0 = now();
	if (pthread_create(&a.thr, NULL, acceptor_run, &a))
		die("pthread_create");
	for (k = 0; k < n; k++) {
		cfd[k] = dial(p);
		if (mpa && (mpa_config(cfd[k], MPA_ROLE_INITIATOR, 0) ||
			    mpa_start(cfd[k])))
			die("Initiator's startup (connection %d): %s", k,
			    strerror(errno));
	}
	pthread_join(a.thr, NULL);
	t = now() - t0;
	if (a.err)
		die("%s (connection %d): %s", a.err, k, strerror(a.errnum));
	for (k = 0; mpa && k < n; k++)
		if (mpa_state(cfd[k]) != MPA_STATE_FULL ||
		    mpa_state(sfd[k]) != MPA_STATE_FULL)
			die("connection %d not in Full Operation", k);
	return n / t;
}

static void close_conns(int *cfd, int *sfd, int n)
{
	int k;

	for (k = 0; k < n; k++) {
		close_abort(cfd[k]);
		close_abort(sfd[k]);
	}
}

/* Connections a second over veth, opened and then closed */
static double setup_run(bool mpa, int n, int *cfd, int *sfd)
{
	double rate = open_conns(VETH, mpa, n, cfd, sfd);

	close_conns(cfd, sfd, n);
	return rate;
}

static void part_setup(void)
{
	int n = 300 * scale / 100, r;
	int *cfd = calloc(n, sizeof(int)), *sfd = calloc(n, sizeof(int));
	double tcp[MAX_ROUNDS], mpa[MAX_ROUNDS], q[MAX_ROUNDS];
	struct stat3 a, b, c;

	if (!cfd || !sfd)
		die("out of memory");
	printf("\n== setup: connections a second over veth, %d a run, one after the\n"
	       "other, both ends on CPU 0\n", n);
	pin(0);
	for (r = 0; r < rounds; r++) {
		/* odd rounds run MPA first, as pair_run() does */
		if (r % 2)
			mpa[r] = setup_run(true, n, cfd, sfd);
		tcp[r] = setup_run(false, n, cfd, sfd);
		if (!(r % 2))
			mpa[r] = setup_run(true, n, cfd, sfd);
		q[r] = mpa[r] / tcp[r];
	}
	a = stat3(tcp, rounds);
	b = stat3(mpa, rounds);
	c = stat3(q, rounds);
	printf("  TCP connect: %.0f/s; TCP connect + MPA startup: %.0f/s; ratio %.2f (%.2f..%.2f)\n",
	       a.med, b.med, c.med, c.min, c.max);
	pin(-1);
	fflush(stdout);
	free(cfd);
	free(sfd);
}

/* Part: memory per idle connection */

#define MAX_CACHES	512

struct slabs {
	int n;
	char name[MAX_CACHES][64];
	long long bytes[MAX_CACHES];	/* active objects x object size */
	long long total;
};

static void slab_read(struct slabs *s)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512], name[64];
	long long act, num, size;

	memset(s, 0, sizeof(*s));
	if (!f)
		die("/proc/slabinfo: %s", strerror(errno));
	while (fgets(line, sizeof(line), f) && s->n < MAX_CACHES) {
		if (sscanf(line, "%63s %lld %lld %lld", name, &act, &num,
			   &size) != 4)
			continue;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s", name);
		s->bytes[s->n] = act * size;
		s->total += act * size;
		s->n++;
	}
	fclose(f);
}

static long long slab_of(const struct slabs *s, const char *name)
{
	int k;

	for (k = 0; k < s->n; k++)
		if (!strcmp(s->name[k], name))
			return s->bytes[k];
	return 0;
}

/* Wait (with a deadline) until freed sockets have left the slabs. */
static void slab_settle(long long base)
{
	double end = now() + 30;
	struct slabs s;

	do {
		/* kfree_rcu() and the TCP timers free in the background */
		poll(NULL, 0, 200);
		slab_read(&s);
	} while (s.total > base + (4 << 20) && now() < end);
}

static void part_memory(void)
{
	int *cfd = calloc(nconns, sizeof(int)), *sfd = calloc(nconns, sizeof(int));
	static struct slabs s0, s1, s2, s3;
	struct rlimit rl = { 4 * nconns + 256, 4 * nconns + 256 };
	long long dt, dm, best[5] = { 0 };
	int k, j, top[5] = { -1, -1, -1, -1, -1 };

	if (!cfd || !sfd)
		die("out of memory");
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("RLIMIT_NOFILE %lu: %s", rl.rlim_cur, strerror(errno));
	printf("\n== memory: %d idle connections over lo, slab octets in use\n",
	       nconns);
	fflush(stdout);
	pin(0);	/* as for setup: faster */
	slab_read(&s0);
	open_conns(LO, false, nconns, cfd, sfd);
	slab_read(&s1);
	close_conns(cfd, sfd, nconns);
	slab_settle(s0.total);
	slab_read(&s2);
	open_conns(LO, true, nconns, cfd, sfd);
	slab_read(&s3);
	close_conns(cfd, sfd, nconns);

	dt = s1.total - s0.total;
	dm = s3.total - s2.total;
	printf("  %d plain TCP connections: %+lld octets (%lld per socket)\n",
	       nconns, dt, dt / (2 * nconns));
	printf("  %d MPA connections:       %+lld octets (%lld per socket)\n",
	       nconns, dm, dm / (2 * nconns));
	mem_per_socket = (dm - dt) / (2 * nconns);
	printf("  MPA's own memory per idle socket (each end of a connection): %lld octets\n",
	       mem_per_socket);
	/* where it went: the caches that grew most beyond TCP's growth */
	for (k = 0; k < s3.n; k++) {
		long long d = (s3.bytes[k] - slab_of(&s2, s3.name[k])) -
			      (slab_of(&s1, s3.name[k]) - slab_of(&s0, s3.name[k]));

		for (j = 0; j < 5; j++)
			if (top[j] < 0 || d > best[j]) {
				memmove(&top[j + 1], &top[j], (4 - j) * sizeof(int));
				memmove(&best[j + 1], &best[j],
					(4 - j) * sizeof(long long));
				top[j] = k;
				best[j] = d;
				break;
			}
	}
	printf("  caches that grew beyond TCP's own growth, per MPA socket:");
	for (j = 0; j < 5 && top[j] >= 0 && best[j] >= 2 * nconns; j++)
		printf(" %s %lld", s3.name[top[j]], best[j] / (2 * nconns));
	printf("\n");
	fflush(stdout);
	pin(-1);
	free(cfd);
	free(sfd);
}

static void target(const char *what, bool measured, const char *verdict,
		   const char *fmt, ...)
{
	va_list ap;

	printf("  %-46s ", what);
	if (!measured) {
		printf("not measured\n");
		return;
	}
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("  %s\n", verdict);
}

/*
 * A ratio target over cells @first..@last (veth, one way, Markers off): met
 * when each cell's confidence interval lies at or above it, NOT met when
 * one lies below it, and "unsure" when one straddles it: more rounds
 * would tell (-r, -S).
 */
static void ratio_target(const char *what, unsigned int first,
			 unsigned int last, bool crc, double goal)
{
	const struct stat3 *low = NULL, *s;
	bool all = !crc || crc_mbs, above = true, below = false;
	unsigned int c;

	for (c = first; c <= last; c++) {
		s = crc ? &veth_one[c][1].limit : &veth_one[c][0].tcp;
		all &= s->med > 0;
		above &= s->lo >= goal;
		below |= s->hi < goal;
		if (!low || s->med < low->med)
			low = s;
	}
	target(what, all, below ? "NOT met" : above ? "met" : "unsure",
	       "lowest %.2f [%.2f-%.2f]", low->med, low->lo, low->hi);
}

/* The targets of issue 18, from the ratios above (veth, one way). */
static void print_targets(void)
{
	printf("\n== targets (issue 18; veth, one way, Markers off; [95 %% CI])\n");
	ratio_target("64..MULPDU, CRC on: x limit >= 0.80", 0, 2, true, 0.8);
	ratio_target("MULPDU..64768, CRC off: x TCP >= 0.90", 2, 4, false, 0.9);
	ratio_target("64768, CRC on: x limit >= 0.95", 4, 4, true, 0.95);
	target("alignment share >= 99 %", align_min >= 0,
	       align_min >= 99 ? "met" : "NOT met", "lowest %.2f %%", align_min);
	target("memory per idle socket <= 1024 octets", mem_per_socket >= 0,
	       mem_per_socket <= 1024 ? "met" : "NOT met", "%lld",
	       mem_per_socket);
}

static int open_ns(const char *var)
{
	const char *path = getenv(var);
	int fd;

	if (!path)
		die("%s is not set (run through tools/testing/bench/guest.sh)",
		    var);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	double t0 = now();
	struct utsname u;
	int opt, mss[2], cli, srv;

	while ((opt = getopt(argc, argv, "r:s:n:p:Nc:P:D:S:M:O:W:X:a")) != -1) {
		switch (opt) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			scale = atoi(optarg);
			break;
		case 'n':
			nconns = atoi(optarg);
			break;
		case 'p':
			parts = optarg;
			break;
		case 'N':
			nodelay = 1;
			break;
		case 'c':
			cpus_mode = atoi(optarg);
			break;
		case 'P':
			only_path = optarg;
			break;
		case 'D':
			only_dir = optarg;
			break;
		case 'S':
			only_size = atol(optarg);
			break;
		case 'M':
			only_modes = optarg;
			break;
		case 'O':
			only_side = optarg;
			break;
		case 'W':
			slow_ns = atol(optarg);
			break;
		case 'X':
			count_kind = optarg;
			break;
		case 'a':
			aa_check = 1;
			break;
		default:
			fprintf(stderr, "usage: mpabench [-r ROUNDS] [-s SCALE%%] [-n CONNS] [-p PARTS] [-N] [-c 0|1|2] [-P veth|lo] [-D one|both] [-S SIZE] [-M MODES] [-O tcp|mpa] [-W NS] [-X KIND] [-a]\n");
			return 2;
		}
	}
	if (count_kind && !want("sides"))
		die("-X: a kind of the sides part, which -p leaves out");
	if (rounds < 1 || rounds > MAX_ROUNDS || scale < 1 || nconns < 1 ||
	    slow_ns < 0 || slow_ns > 1000000 ||
	    (only_side && strcmp(only_side, "tcp") && strcmp(only_side, "mpa")))
		die("bad arguments");
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	ns_a = open_ns("MPA_BENCH_NS_A");
	ns_b = open_ns("MPA_BENCH_NS_B");
	/* CRC off needs the namespaces' permission (R-4.4-4) */
	enter_ns(ns_b);
	if (mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1))
		die("policy crc-off-allowed in namespace b");
	enter_ns(ns_a);
	if (mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1))
		die("policy crc-off-allowed in namespace a");
	listen_on(&lsn[VETH], ns_b, VETH_SERVER);
	listen_on(&lsn[LO], ns_a, "127.0.0.1");

	uname(&u);
	tcp_pair(VETH, &cli, &srv);
	mss[VETH] = t_emss(cli);
	close(cli);
	close(srv);
	tcp_pair(LO, &cli, &srv);
	mss[LO] = t_emss(cli);
	close(cli);
	close(srv);
	probe_mulpdu();
	printf("mpabench: Linux %s, %ld CPUs; %d rounds, transfer sizes at %d%%\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN), rounds, scale);
	printf("veth: MSS %d, MULPDU %zu (%zu with Markers); lo: MSS %d, MULPDU %zu (%zu)\n",
	       mss[VETH], mulpdu[VETH][0], mulpdu[VETH][1], mss[LO],
	       mulpdu[LO][0], mulpdu[LO][1]);

	if (want("crc"))
		part_crc();
	if (want("throughput"))
		part_throughput();
	if (want("sides"))
		part_sides();
	if (want("align"))
		part_align();
	if (want("pingpong"))
		part_pingpong();
	if (want("setup"))
		part_setup();
	if (want("memory"))
		part_memory();
	print_targets();
	printf("\nmpabench: done in %.0f s\n", now() - t0);
	return 0;
}
