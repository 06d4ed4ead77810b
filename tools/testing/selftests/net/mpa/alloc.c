// SPDX-License-Identifier: GPL-2.0
/*
 * Allocation failures in the module's own call paths (debug kernel:
 * CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS,
 * CONFIG_FAULT_INJECTION_STACKTRACE_FILTER). Both fault attributes are
 * restricted with require-start/require-end to mpa.ko's text: an
 * allocation fails (with the chosen probability) only when an mpa.ko
 * function is on its stack, whatever the context: our syscalls, MPA's
 * work items, the socket callbacks in softirq, TCP called by MPA, and the
 * callbacks of mpa_echo (samples/mpa/) that MPA makes. Under that:
 *
 *   peer_pd    no memory for the peer's Private Data alone (injection in
 *              one function, every time)
 *   stranded   no memory for TCP's skb while TCP holds nothing: the FPDU
 *              goes out once memory is back, the sender doing nothing
 *   shut_short the same, then shutdown(SHUT_WR): the FIN waits behind the
 *              FPDU, no reset; a reset once memory stays short for 5 s
 *   shut_short_busy
 *              the same while the connection's work keeps running for
 *              other reasons (copy mode): the reset waits for 5 s of
 *              retries, not for as many runs
 *   shut_behind_reply
 *              no memory for a Responder's Reply (accept or reject), then
 *              shutdown(SHUT_WR): the FIN waits behind the Reply
 *   reply_behind_held
 *              no memory for a Responder's Reply, its application's ULPDUs
 *              held behind it (injection in one function)
 *   run_kick_in_flight
 *              no memory for the FPDUs Nagle's algorithm held when the
 *              ACK comes, more in flight (injection in one function; netem
 *              on the test's own loopback: needs ip and tc)
 *   startup    attaching MPA and the startup phase, then a ULPDU each way
 *   traffic    ULPDUs both ways at once on several connections (Markers
 *              and CRC combinations, MSG_MORE pieces, one receiver in copy
 *              mode with a small SO_RCVBUF), then shutdown(SHUT_WR)
 *   pingpong   one small ULPDU at a time, each waited for at the other end
 *   kapi       the in-kernel API through mpa_echo: its Responder echoing
 *              our ULPDUs, its Initiator against our echoing Responder
 *   ending     connections with data queued both ways ended by close(),
 *              shutdown() or a reset from either side
 *   unload     the failures counted, then mpa_echo and mpa unload
 *
 * What must hold: every failure is a documented error to its caller
 * (ENOMEM from setsockopt(TCP_ULP), from MPA_START and from send(), which
 * then changed nothing and are simply repeated; a startup that fails does
 * so with one of MPA_START's errors, ENOMEM among them when the peer's
 * Private Data found no memory), a ULPDU a send() accepted is delivered, intact and
 * in order, unless the connection reports an error at the receiver
 * (never a clean end of file short of it), a receiver never gets a
 * corrupted or partial ULPDU, nothing hangs, and the kernel log stays
 * clean (KASAN, lockdep, kmemleak: the suite checks the guest's log).
 *
 * MPA_ALLOC_PROB sets the failure probability in percent (10), and
 * MPA_ALLOC_SEED the seed of the sizes (printed).
 */
#include <elf.h>
#include <dirent.h>
#include <signal.h>
#include <stddef.h>
#include <stdarg.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"
#include "mpa_stress.h"

#define FI_SLAB		"/sys/kernel/debug/failslab/"
#define FI_PAGE		"/sys/kernel/debug/fail_page_alloc/"
#define FI_TIMES	10000000L	/* failures allowed: counts down */
#define AL_PROB		10
#define AL_PINGPONG_PROB 40	/* pingpong: TCP's skb fails twice in a row */
#define AL_STRANDED_WAIT 10000	/* ms: stranded, MPA retries every 100 */
#define AL_SHORT	300	/* ms: stranded, memory stays short */
#define AL_WAIT		30000	/* ms: no step may take longer */
#define AL_DIR_WAIT	240000	/* ms: one direction of the traffic test */
#define AL_TIMEOUT	4000	/* ms: MPA_TIMEOUT of the startups */
#define AL_RETRIES	10000	/* ENOMEM on one send, at most */
#define AL_PORT		17176
#define AL_MIN_FAILS	200	/* "hundreds" of injected failures */
#define KE_DIR		"/sys/kernel/debug/mpa_echo/"

/* Fault injection */

static int fi_set(const char *dir, const char *attr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fi_set(const char *dir, const char *attr, const char *fmt, ...)
{
	char path[256], val[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s%s", dir, attr);
	return s_write_file(path, val);
}

static long long fi_get(const char *dir, const char *attr)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s%s", dir, attr);
	if (s_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	/* addresses do not fit a long long: read them unsigned */
	return (long long)strtoull(buf, NULL, 0);
}

/*
 * mpa.ko's text: the addresses of its loaded sections, the sizes from the
 * module file. [*start, *end) covers every executable section still
 * loaded (the init sections are gone).
 */
static int fi_module_text(unsigned long long *start, unsigned long long *end)
{
	char path[512], buf[64], *shstr = NULL;
	unsigned long long a;
	Elf64_Shdr *sh = NULL;
	Elf64_Ehdr eh;
	FILE *f, *p;
	unsigned int k;
	int ret = -1;

	p = popen("modinfo -n mpa", "r");
	if (!p)
		return -1;
	if (!fgets(path, sizeof(path), p)) {
		pclose(p);
		return -1;
	}
	pclose(p);
	path[strcspn(path, "\n")] = 0;
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fread(&eh, sizeof(eh), 1, f) != 1 ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	sh = calloc(eh.e_shnum, sizeof(*sh));
	if (!sh || fseek(f, eh.e_shoff, SEEK_SET) ||
	    fread(sh, sizeof(*sh), eh.e_shnum, f) != eh.e_shnum)
		goto out;
	shstr = malloc(sh[eh.e_shstrndx].sh_size);
	if (!shstr || fseek(f, sh[eh.e_shstrndx].sh_offset, SEEK_SET) ||
	    fread(shstr, 1, sh[eh.e_shstrndx].sh_size, f) !=
	    sh[eh.e_shstrndx].sh_size)
		goto out;
	*start = ~0ull;
	*end = 0;
	for (k = 0; k < eh.e_shnum; k++) {
		const char *name = shstr + sh[k].sh_name;

		if (!(sh[k].sh_flags & SHF_EXECINSTR) || !sh[k].sh_size)
			continue;
		snprintf(path, sizeof(path), "/sys/module/mpa/sections/%s",
			 name);
		if (s_read_file(path, buf, sizeof(buf)) <= 0)
			continue;	/* not loaded (init) */
		a = strtoull(buf, NULL, 0);
		if (!a)
			continue;
		if (a < *start)
			*start = a;
		if (a + sh[k].sh_size > *end)
			*end = a + sh[k].sh_size;
	}
	ret = *end > *start ? 0 : -1;
out:
	free(sh);
	free(shstr);
	fclose(f);
	return ret;
}

/* A line of /proc/kallsyms: address, type, name, module ("": the kernel) */
static bool ks_line(const char *line, unsigned long long *a, char *t,
		    char *sym, char *mod)
{
	mod[0] = 0;
	return sscanf(line, "%llx %c %255s [%63[^]]", a, t, sym, mod) >= 3;
}

/*
 * Function @name of module @mod (NULL: the kernel's own) as loaded:
 * [*start, *end) from its address in /proc/kallsyms to the next function
 * of the same place.
 */
static int ks_func(const char *mod, const char *name, unsigned long long *start,
		   unsigned long long *end)
{
	unsigned long long a, next = ~0ull;
	char line[512], sym[256], m[64];
	FILE *f;
	char t;

	*start = 0;
	f = fopen("/proc/kallsyms", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (ks_line(line, &a, &t, sym, m) && !strcmp(m, mod ?: "") &&
		    !strcmp(sym, name))
			*start = a;
	rewind(f);
	while (*start && fgets(line, sizeof(line), f))
		if (ks_line(line, &a, &t, sym, m) && !strcmp(m, mod ?: "") &&
		    (t == 't' || t == 'T') && a > *start && a < next)
			next = a;
	fclose(f);
	*end = next;
	return *start && next != ~0ull ? 0 : -1;
}

/*
 * TCP drops a FIN or a reset it cannot allocate (tcp_send_fin(),
 * tcp_send_active_reset(): they are never retried), which leaves the peer
 * waiting for ever whatever MPA does. Failures are not injected there: the
 * range from the first of the two to the end of the second (they are
 * neighbours in tcp_output.c).
 */
static int fi_tcp_fin_rst(unsigned long long *start, unsigned long long *end)
{
	/* the kernel's text does not move: look it up once per run */
	static unsigned long long rs, re;
	unsigned long long fin, fin_end, rst, rst_end;

	if (!rs) {
		if (ks_func(NULL, "tcp_send_fin", &fin, &fin_end) ||
		    ks_func(NULL, "tcp_send_active_reset", &rst, &rst_end))
			return -1;
		rs = fin < rst ? fin : rst;
		re = fin < rst ? rst_end : fin_end;
	}
	*start = rs;
	*end = re;
	return 0;
}

static int fi_setup_one(const char *dir, unsigned long long start,
			unsigned long long end)
{
	unsigned long long rs, re;

	if (fi_tcp_fin_rst(&rs, &re))
		return -1;

	if (fi_set(dir, "probability", "0") ||
	    fi_set(dir, "interval", "1") ||
	    fi_set(dir, "times", "%ld", FI_TIMES) ||
	    fi_set(dir, "space", "0") ||
	    fi_set(dir, "verbose", "0") ||
	    fi_set(dir, "task-filter", "N") ||
	    fi_set(dir, "ignore-gfp-wait", "N") ||
	    fi_set(dir, "require-start", "0x%llx", start) ||
	    fi_set(dir, "require-end", "0x%llx", end) ||
	    fi_set(dir, "reject-start", "0x%llx", rs) ||
	    fi_set(dir, "reject-end", "0x%llx", re) ||
	    fi_set(dir, "stacktrace-depth", "32"))
		return -1;
	/*
	 * Not into user pages (__GFP_HIGHMEM: a page fault while MPA copies
	 * to or from the caller's buffer), which are not the module's.
	 */
	if (!strcmp(dir, FI_PAGE) &&
	    (fi_set(dir, "ignore-gfp-highmem", "Y") ||
	     fi_set(dir, "min-order", "0")))
		return -1;
	return 0;
}

/* Failures injected so far, both kinds */
struct fi_count {
	long long slab, page;
};

/* 0, or -1 if a count could not be read (not a count of FI_TIMES + 1) */
static int fi_read(struct fi_count *n)
{
	long long slab = fi_get(FI_SLAB, "times");
	long long page = fi_get(FI_PAGE, "times");

	n->slab = FI_TIMES - slab;
	n->page = FI_TIMES - page;
	return slab < 0 || page < 0 ? -1 : 0;
}

/* Slab allocations failed since the last fi_prepare(); -1 if unreadable */
static long long fi_slab_fails(void)
{
	long long left = fi_get(FI_SLAB, "times");

	return left < 0 ? -1 : FI_TIMES - left;
}

static int fi_on_prob(long p)
{
	return fi_set(FI_SLAB, "probability", "%ld", p) ||
	       fi_set(FI_PAGE, "probability", "%ld", p);
}

static int fi_on(void)
{
	return fi_on_prob(s_env_long("MPA_ALLOC_PROB", AL_PROB));
}

static void fi_off(void)
{
	fi_set(FI_SLAB, "probability", "0");
	fi_set(FI_PAGE, "probability", "0");
}

/*
 * Set both attributes up once per run (the failure counts run from
 * then), and check the range every time: the module must be where it was.
 */
static int fi_prepare(struct __test_metadata *_metadata, struct fi_count *n)
{
	unsigned long long start, end, have;

	if (system("modprobe mpa"))
		return -1;
	if (fi_module_text(&start, &end)) {
		TH_LOG("cannot find mpa.ko's text");
		return -1;
	}
	have = (unsigned long long)fi_get(FI_SLAB, "require-start");
	if (have != start || fi_get(FI_SLAB, "times") < 0) {
		if (fi_setup_one(FI_SLAB, start, end) ||
		    fi_setup_one(FI_PAGE, start, end)) {
			TH_LOG("cannot set fault injection up (debugfs)");
			return -1;
		}
		fprintf(stderr, "# injecting into mpa.ko's text 0x%llx-0x%llx (%llu octets), probability %ld%%\n",
			start, end, end - start,
			s_env_long("MPA_ALLOC_PROB", AL_PROB));
	}
	return fi_read(n);
}

/* The failures injected since @before, both kinds (logged), or -1. */
static long long fi_report(const char *what, const struct fi_count *before)
{
	struct fi_count now;

	if (fi_read(&now))
		return -1;
	fprintf(stderr, "# %s: %lld slab and %lld page allocations failed\n",
		what, now.slab - before->slab, now.page - before->page);
	return now.slab - before->slab + now.page - before->page;
}

/* What each test counts */
struct al_stats {
	unsigned long enomem_attach, enomem_start, enomem_send, send_eagain;
	/* ETIMEDOUT ECONNREFUSED EPROTO ECONNRESET ENOMEM */
	unsigned long startup_errs[5];
	unsigned long full, ulpdus, rx_resets, rx_eproto;
};

/* errno values MPA_START (or a state's MPA_ERROR) may report */
static int al_startup_errno_idx(int e)
{
	switch (e) {
	case ETIMEDOUT:
		return 0;
	case ECONNREFUSED:
		return 1;
	case EPROTO:
		return 2;
	case ECONNRESET:
		return 3;
	case ENOMEM:
		return 4;
	}
	return -1;
}

/*
 * MPA_START, made again while it fails with ENOMEM before the startup
 * began (no memory for the startup phase: nothing changed). A startup
 * that began and then failed is not repeated.
 */
static int al_start(int fd, struct al_stats *st)
{
	unsigned int tries = 0;
	int e;

	for (;;) {
		if (!mpa_start(fd))
			return 0;
		e = errno;
		if (e != ENOMEM || mpa_state(fd) != MPA_STATE_STREAMING ||
		    ++tries >= AL_RETRIES)
			break;
		if (st)
			st->enomem_start++;
	}
	errno = e;
	return -1;
}

/*
 * Send one ULPDU, in @pieces calls (MSG_MORE on all but the last). A call
 * that fails with ENOMEM queued nothing: it is made again. 0, or the errno
 * of a call that failed otherwise.
 */
static int al_send(int fd, const uint8_t *b, size_t len, unsigned int pieces,
		   struct al_stats *st)
{
	long end = t_now_ms() + AL_WAIT;
	size_t off = 0, part;
	unsigned int tries = 0;
	ssize_t r;

	while (off < len) {
		part = pieces > 1 ? (len - off + pieces - 1) / pieces : len - off;
		if (!part)
			part = 1;
		r = send(fd, b + off, part,
			 MSG_NOSIGNAL | (off + part < len ? MSG_MORE : 0));
		if (r == (ssize_t)part) {
			off += part;
			if (pieces > 1)
				pieces--;
			continue;
		}
		if (r >= 0)
			return EMSGSIZE;	/* never a partial count */
		if (errno == ENOMEM && ++tries < AL_RETRIES) {
			st->enomem_send++;
			continue;
		}
		if (errno == EAGAIN && t_now_ms() < end) {
			/* SO_SNDTIMEO ran out: waiting for room */
			st->send_eagain++;
			continue;
		}
		return errno;
	}
	return 0;
}

/*
 * Receive one whole ULPDU: its length; 0 at end of file; -errno. A
 * blocking socket with SO_RCVTIMEO AL_WAIT: -EAGAIN means it stalled.
 */
static ssize_t al_recv(int fd, uint8_t *b, size_t size)
{
	size_t got = 0;
	ssize_t r;
	int fl;

	for (;;) {
		r = t_recv_flags(fd, b + got, size - got, 0, &fl);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			return got ? -EPIPE : 0;	/* EOF inside a ULPDU */
		got += r;
		if (fl & MSG_EOR)
			return got;
		if (got == size)
			return -EMSGSIZE;
	}
}

static size_t al_size(uint64_t *s)
{
	switch (t_rand64(s) % 8) {
	case 0:
		return 1 + t_rand64(s) % MPA_MAX_ULPDU;
	case 1:
	case 2:
		return 1 + t_rand64(s) % 16384;
	default:
		return 1 + t_rand64(s) % 2000;
	}
}

/*
 * Two MPA sockets in Full Operation, both blocking with AL_WAIT timeouts:
 * *i the Initiator (the accepted end), *r the Responder (the client), made
 * with the options @o. Without injection.
 */
static int al_pair_opts(const struct t_pair_opts *o, bool mi, bool mr,
			int *i, int *r)
{
	if (mpa_tcp_pair_opts(AF_INET, o, r, i))
		return -1;
	if (t_mpa_establish_ms(*i, *r, mi, mr, true, AL_WAIT) ||
	    t_set_timeo(*i, SO_SNDTIMEO, AL_WAIT) ||
	    t_set_timeo(*i, SO_RCVTIMEO, AL_WAIT) ||
	    t_set_timeo(*r, SO_SNDTIMEO, AL_WAIT) ||
	    t_set_timeo(*r, SO_RCVTIMEO, AL_WAIT)) {
		close(*i);
		close(*r);
		*i = *r = -1;
		return -1;
	}
	return 0;
}

/* The same, the Responder with SO_RCVBUF @rcvbuf if not 0 */
static int al_pair(bool mi, bool mr, int rcvbuf, int *i, int *r)
{
	struct t_pair_opts o = { .client_rcvbuf = rcvbuf };

	return al_pair_opts(&o, mi, mr, i, r);
}

/*
 * The test's helper threads take no signal: the SIGCHLD of a t_sh() child
 * goes to a thread that does not block it (system() blocks it in its own
 * thread only), and a socket call waiting with SO_SNDTIMEO or SO_RCVTIMEO
 * set would fail with EINTR (as on TCP).
 */
static void al_thread_nosig(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
}

/* One end's state, for the report of a stall */
static int al_end_state(char *p, size_t size, const char *who, int fd)
{
	struct mpa_stats st = {};
	struct t_tcp_info ti = {};
	socklen_t len = sizeof(ti);

	mpa_getstruct(fd, MPA_STATS, &st, sizeof(st));
	if (getsockopt(fd, SOL_TCP, TCP_INFO, &ti, &len))
		memset(&ti, 0, sizeof(ti));
	return snprintf(p, size,
			"%s: MPA state %ld, FPDUs tx %llu rx %llu, inq %d; TCP state %u ca %u backoff %u probes %u, unacked %u notsent %u, snd_wnd %u rcv_wnd %u, segs out %u in %u, retrans %llu; ",
			who, mpa_state(fd), (unsigned long long)st.tx_fpdus,
			(unsigned long long)st.rx_fpdus, t_inq(fd),
			ti.base.tcpi_state, ti.base.tcpi_ca_state,
			ti.base.tcpi_backoff, ti.base.tcpi_probes,
			ti.base.tcpi_unacked, ti.notsent_bytes, ti.snd_wnd,
			ti.rcv_wnd, ti.segs_out, ti.segs_in,
			(unsigned long long)ti.bytes_retrans);
}

/* One direction of a connection: a sender thread and a receiver thread */
struct al_dir {
	pthread_t tx, rx;
	int tx_fd, rx_fd;
	uint64_t seed;
	unsigned int n;
	struct al_stats st;
	/* sender */
	unsigned int accepted;
	int send_err, shut_err;
	/* receiver */
	unsigned int received, bad;
	ssize_t rx_end;		/* 0: end of file; -errno */
	char why[200];
	char stall[2][600];	/* both ends, when the sender or receiver gave up */
};

/* Both ends' state when side @k (0 sender, 1 receiver) gives up waiting */
static void al_dir_stall(struct al_dir *d, int k)
{
	int n;

	n = al_end_state(d->stall[k], sizeof(d->stall[k]), "sender",
			 d->tx_fd);
	if (n > 0 && (size_t)n < sizeof(d->stall[k]))
		al_end_state(d->stall[k] + n, sizeof(d->stall[k]) - n,
			     "receiver", d->rx_fd);
}

static void *al_dir_tx(void *arg)
{
	struct al_dir *d = arg;
	uint8_t *b = malloc(MPA_MAX_ULPDU);
	uint64_t s = d->seed;
	unsigned int k;
	size_t len;

	long end = t_now_ms() + AL_DIR_WAIT;

	al_thread_nosig();
	for (k = 0; b && k < d->n; k++) {
		if (t_now_ms() > end) {
			d->send_err = ETIME;	/* gave up: too slow */
			break;
		}
		len = al_size(&s);
		t_fill(b, len, d->seed + k);
		d->send_err = al_send(d->tx_fd, b, len,
				      t_rand64(&s) % 4 ? 1 : 2 + k % 3,
				      &d->st);
		if (d->send_err == EAGAIN)
			al_dir_stall(d, 0);
		if (d->send_err)
			break;
		d->accepted++;
	}
	if (!b)
		d->send_err = ENOMEM;
	if (shutdown(d->tx_fd, SHUT_WR))
		d->shut_err = errno;
	free(b);
	return NULL;
}

static void *al_dir_rx(void *arg)
{
	struct al_dir *d = arg;
	uint8_t *b = malloc(T_ULPDU_BUF), *exp = malloc(MPA_MAX_ULPDU);
	uint64_t s = d->seed;
	size_t len;
	ssize_t r;

	al_thread_nosig();
	while (b && exp) {
		r = al_recv(d->rx_fd, b, T_ULPDU_BUF);
		if (r == -EAGAIN)
			al_dir_stall(d, 1);
		if (r <= 0) {
			d->rx_end = r;
			break;
		}
		len = al_size(&s);
		t_rand64(&s);		/* the pieces' draw */
		t_fill(exp, len, d->seed + d->received);
		if ((size_t)r != len || memcmp(b, exp, len)) {
			snprintf(d->why, sizeof(d->why),
				 "ULPDU %u: %zd octets, expected %zu%s",
				 d->received, r, len,
				 (size_t)r == len ? ", content differs" : "");
			d->bad++;
			d->rx_end = 1;
			break;
		}
		d->received++;
	}
	free(b);
	free(exp);
	return NULL;
}

/*
 * Check a direction once both threads are done: nothing corrupted; every
 * accepted ULPDU arrived, or the receiver was told of an error (a reset:
 * what is lost is never silent); no stall.
 */
static void al_dir_check(struct __test_metadata *_metadata, struct al_dir *d,
			 const char *name)
{
	EXPECT_EQ(0, d->bad) TH_LOG("%s: %s", name, d->why);
	EXPECT_EQ(0, d->send_err)
		TH_LOG("%s: send() failed with %s after %u ULPDUs", name,
		       strerror(d->send_err), d->accepted);
	EXPECT_NE(-EAGAIN, d->rx_end)
		TH_LOG("%s: the receiver stalled after %u of %u ULPDUs", name,
		       d->received, d->accepted);
	if (d->rx_end == 0) {
		/* a clean end of file: everything accepted came */
		EXPECT_EQ(d->accepted, d->received)
			TH_LOG("%s: end of file after %u of %u accepted ULPDUs (silent loss)",
			       name, d->received, d->accepted);
	} else if (d->rx_end < 0 && d->rx_end != -EAGAIN) {
		EXPECT_TRUE(d->rx_end == -ECONNRESET || d->rx_end == -EPIPE)
			TH_LOG("%s: recv() failed with %s after %u of %u ULPDUs",
			       name, strerror(-d->rx_end), d->received,
			       d->accepted);
	}
	if (d->rx_end == -ECONNRESET || d->rx_end == -EPIPE)
		d->st.rx_resets++;
	if (d->stall[0][0])
		TH_LOG("%s: when the sender gave up: %s", name, d->stall[0]);
	if (d->stall[1][0])
		TH_LOG("%s: when the receiver gave up: %s", name, d->stall[1]);
}

FIXTURE(inject) {
	struct fi_count start;
};

FIXTURE_SETUP(inject)
{
	fi_off();
	ASSERT_EQ(0, fi_prepare(_metadata, &self->start));
}

FIXTURE_TEARDOWN(inject)
{
	fi_off();
}

/*
 * No memory for the peer's Private Data alone: every allocation fails, but
 * only under mpa_startup_process(), which reads the peer's frame (a raw
 * peer's Request with Private Data at our Responder, its Reply at our
 * Initiator). The startup fails with ENOMEM and code 0 (mpa.rst, the
 * startup errors), and TCP is closed. (First in the file: it points the
 * injection at one function, then back at the whole module, which starts
 * the failure counts afresh for the tests after it.)
 */
TEST_F_TIMEOUT(inject, peer_pd, 300)
{
	uint8_t pd[100], fr[T_HDR + sizeof(pd)], b[64];
	unsigned long long fs, fe, ms, me;
	struct mpa_error_info err;
	int m, raw, k;
	ssize_t n;

	ASSERT_EQ(0, ks_func("mpa", "mpa_startup_process", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	/*
	 * Pointed at the function before any startup begins, the injection
	 * still off: setting it up takes long on a slow guest, which would
	 * eat into the startup's AL_TIMEOUT (the startup then fails with a
	 * timeout, not for want of memory).
	 */
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, fs, fe));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, fs, fe));
	memset(pd, 'p', sizeof(pd));
	for (k = 0; k < 2; k++) {
		bool responder = !k;
		long long times;

		ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &m, &raw));
		ASSERT_EQ(0, mpa_config(m, responder ? MPA_ROLE_RESPONDER :
						       MPA_ROLE_INITIATOR,
					AL_TIMEOUT));
		ASSERT_EQ(0, t_nonblock(m));
		ASSERT_EQ(-1, mpa_start(m));
		ASSERT_EQ(EINPROGRESS, errno);
		if (!responder)
			ASSERT_EQ(T_HDR, t_read(raw, fr, T_HDR, AL_WAIT));

		times = fi_get(FI_SLAB, "times");
		ASSERT_EQ(0, fi_on_prob(100));
		n = t_frame(fr, !responder, 0, 1, pd, sizeof(pd));
		ASSERT_EQ(n, t_send(raw, fr, n));
		EXPECT_LE(0, t_wait_startup(m, AL_WAIT));
		fi_off();
		EXPECT_LE(1, times - fi_get(FI_SLAB, "times"))
			TH_LOG("no allocation failed");

		EXPECT_EQ(MPA_STATE_FAILED, mpa_state(m));
		ASSERT_EQ(0, mpa_getstruct(m, MPA_ERROR, &err, sizeof(err)));
		EXPECT_EQ(0, err.code);
		EXPECT_EQ(ENOMEM, err.errnum)
			TH_LOG("%s: errno %d, code %u, reason %u",
			       responder ? "Responder" : "Initiator",
			       err.errnum, err.code, err.reason);
		/* TCP closed: the raw peer reads the end, or a reset */
		ASSERT_EQ(0, t_set_timeo(raw, SO_RCVTIMEO, AL_WAIT));
		n = recv(raw, b, sizeof(b), 0);
		EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET))
			TH_LOG("the raw peer read %zd (%s)", n,
			       n < 0 ? strerror(errno) : "octets");
		close(m);
		close(raw);
	}
	/* the whole module again, for the tests after this one */
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * A connection with Markers @m or not, the Initiator *@i, the Responder
 * *@r, and an FPDU of @len octets of @b that the Initiator's send()
 * accepted but TCP, with nothing in flight, has no memory for: every
 * allocation under tcp_sendmsg_locked() ([@fs, @fe)) fails from here on,
 * until fi_off().
 */
static void al_strand(struct __test_metadata *_metadata, int m,
		      bool blocking, unsigned long long fs,
		      unsigned long long fe, const uint8_t *b, size_t len,
		      int *i, int *r)
{
	uint8_t got[16];

	ASSERT_EQ(0, al_pair(m, m, 0, i, r));
	/* a round trip: TCP at the Initiator has nothing in flight */
	ASSERT_EQ(4, send(*i, "ping", 4, MSG_NOSIGNAL));
	ASSERT_EQ(4, recv(*r, got, sizeof(got), 0));
	ASSERT_EQ(4, send(*r, "pong", 4, MSG_NOSIGNAL));
	ASSERT_EQ(4, recv(*i, got, sizeof(got), 0));

	ASSERT_EQ(0, fi_setup_one(FI_SLAB, fs, fe));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, fs, fe));
	if (blocking)
		ASSERT_EQ(0, t_set_timeo(*i, SO_SNDTIMEO, AL_SHORT));
	ASSERT_EQ(0, fi_on_prob(100));
	/* blocking, it waits AL_SHORT for TCP to take it all: accepted */
	EXPECT_EQ(len, send(*i, b, len,
			    MSG_NOSIGNAL | (blocking ? 0 : MSG_DONTWAIT)))
		TH_LOG("send: %s", strerror(errno));
}

/*
 * TCP refuses an FPDU for want of memory while it holds nothing, sent or
 * not, so that no ACK will come: every allocation under TCP's
 * tcp_sendmsg_locked() fails while a non-blocking send() hands it a ULPDU
 * (after a round trip, so that TCP has nothing in flight); MPA's own
 * allocations do not. Once memory is back, MPA must hand the FPDU to TCP
 * by itself: the peer receives it, with nothing more done by the sender.
 * (TCP's sendmsg calls sk_write_space() when it refuses with its queues
 * empty.) MPA tries again after a while, not at once: while memory stays
 * short (AL_SHORT ms), TCP is asked a few times, not thousands, also by
 * a blocking send() that waits for TCP to take it all. Like peer_pd, it
 * points the injection at one function, then back at the whole module.
 */
TEST_F_TIMEOUT(inject, stranded, 300)
{
	unsigned long long fs, fe, ms, me;
	uint8_t b[1000], got[2000];
	int i, r, m, k;
	long long fails;
	long t0;

	ASSERT_EQ(0, ks_func(NULL, "tcp_sendmsg_locked", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	t_fill(b, sizeof(b), 77);
	for (k = 0; k < 4; k++) {
		m = k % 2;
		t0 = t_now_ms();
		al_strand(_metadata, m, k >= 2, fs, fe, b, sizeof(b), &i, &r);
		/* a negative check: no busy retrying while memory is short */
		usleep(AL_SHORT * 1000);
		fi_off();
		t0 = t_now_ms() - t0;
		fails = fi_slab_fails();
		EXPECT_LE(1, fails)
			TH_LOG("TCP's allocation did not fail");
		/* the send, its push, then every 100 ms; 4 to spare */
		EXPECT_GE(2 + t0 / 100 + 4, fails)
			TH_LOG("Markers %d%s: TCP refused %lld times in %ld ms",
			       m, k >= 2 ? ", blocking" : "", fails, t0);

		/* nothing more from the sender: the FPDU must come */
		ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, AL_STRANDED_WAIT));
		EXPECT_EQ(sizeof(b), recv(r, got, sizeof(got), 0))
			TH_LOG("Markers %d: the queued FPDU never came (%s)",
			       m, strerror(errno));
		EXPECT_EQ(0, memcmp(b, got, sizeof(b)));
		close(i);
		close(r);
	}
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * A pair whose Responder @r has the Request in (the non-blocking
 * Initiator @i waits for the Reply), without Markers, with CRCs, and the
 * injection pointed at [@fs, @fe) (off until fi_on_prob()).
 */
static void al_request_in(struct __test_metadata *_metadata,
			  unsigned long long fs, unsigned long long fe,
			  int *i, int *r)
{
	struct t_pair_opts o = {};

	ASSERT_EQ(0, mpa_tcp_pair_opts(AF_INET, &o, r, i));
	ASSERT_EQ(0, t_mpa_options(*i, MPA_ROLE_INITIATOR, false, true));
	ASSERT_EQ(0, t_mpa_options(*r, MPA_ROLE_RESPONDER, false, true));
	ASSERT_EQ(0, t_nonblock(*i));
	ASSERT_EQ(-1, mpa_start(*i));
	ASSERT_EQ(EINPROGRESS, errno);
	ASSERT_EQ(0, mpa_start(*r));		/* the Request is in */

	ASSERT_EQ(0, fi_setup_one(FI_SLAB, fs, fe));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, fs, fe));
}

/*
 * The Responder's Reply, which TCP has no memory for, and behind it the
 * ULPDUs its application sent meanwhile (Full Operation began with the
 * Reply; they are held, R-7.1.2-15) until the send buffer is full. Every
 * allocation under tcp_sendmsg_locked() fails while the Reply is answered
 * and the ULPDUs sent. A blocking MPA_ACCEPT waits for the Reply without
 * asking TCP again and again (SO_SNDTIMEO, then EAGAIN, mpa.rst), as in
 * stranded. Once memory is back the Reply must go, whatever MPA holds
 * behind it: the Initiator reaches Full Operation, and its first FPDU
 * brings every held ULPDU.
 */
TEST_F_TIMEOUT(inject, reply_behind_held, 300)
{
	unsigned long long fs, fe, ms, me;
	uint8_t *b = malloc(T_ULPDU_BUF);
	unsigned int held = 0, k;
	long long fails;
	int i, r;
	ssize_t n;
	long t0;

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, ks_func(NULL, "tcp_sendmsg_locked", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	al_request_in(_metadata, fs, fe, &i, &r);
	ASSERT_EQ(0, t_set_timeo(r, SO_SNDTIMEO, AL_SHORT));
	t0 = t_now_ms();
	ASSERT_EQ(0, fi_on_prob(100));
	EXPECT_EQ(-1, mpa_answer(r, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(EAGAIN, errno);
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(r));
	for (k = 0; k < 64; k++) {
		t_fill(b, 16384, 500 + k);
		n = send(r, b, 16384, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0)
			break;
		ASSERT_EQ(16384, n);
		held++;
	}
	EXPECT_EQ(EAGAIN, errno) TH_LOG("send: %s", strerror(errno));
	fi_off();
	t0 = t_now_ms() - t0;
	fails = fi_slab_fails();
	EXPECT_LE(1, fails) TH_LOG("TCP's allocation for the Reply did not fail");
	/* the answer, its wait's push, then every 100 ms; 4 to spare */
	EXPECT_GE(2 + t0 / 100 + 4, fails)
		TH_LOG("TCP refused the Reply %lld times in %ld ms", fails, t0);
	ASSERT_LE(1, held);

	EXPECT_LE(0, t_wait_startup(i, AL_WAIT))
		TH_LOG("the Reply never came (%u ULPDUs held behind it)", held);
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(i));
	ASSERT_EQ(0, t_blocking(i));
	ASSERT_EQ(0, t_blocking(r));
	ASSERT_EQ(0, t_set_timeo(i, SO_RCVTIMEO, AL_WAIT));
	ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, AL_WAIT));
	ASSERT_EQ(4, send(i, "ping", 4, MSG_NOSIGNAL));
	ASSERT_EQ(4, recv(r, b, T_ULPDU_BUF, 0));
	for (k = 0; k < held; k++) {
		uint8_t exp[16384];

		n = al_recv(i, b, T_ULPDU_BUF);
		ASSERT_EQ(16384, n) TH_LOG("held ULPDU %u of %u: %zd", k, held, n);
		t_fill(exp, sizeof(exp), 500 + k);
		ASSERT_EQ(0, memcmp(exp, b, sizeof(exp)));
	}
	close(i);
	close(r);
	free(b);
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * shutdown(SHUT_WR) while MPA holds an FPDU that TCP has no memory for:
 * every allocation under tcp_sendmsg_locked() fails, as in stranded, and
 * TCP holds nothing. shutdown() returns at once; the FIN must wait behind
 * the FPDU, and both come once memory is back: the peer reads the ULPDU
 * whole, then the end of file, not a reset (mpa.rst, Closing). The
 * Initiator still receives. Memory that never comes back ends in a reset.
 */
TEST_F_TIMEOUT(inject, shut_short, 300)
{
	unsigned long long fs, fe, ms, me;
	uint8_t b[1000], got[2000];
	int i, r, m, e;
	ssize_t n;

	ASSERT_EQ(0, ks_func(NULL, "tcp_sendmsg_locked", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	t_fill(b, sizeof(b), 78);
	for (m = 0; m < 2; m++) {
		al_strand(_metadata, m, false, fs, fe, b, sizeof(b), &i, &r);
		EXPECT_EQ(0, shutdown(i, SHUT_WR))
			TH_LOG("shutdown: %s", strerror(errno));
		fi_off();
		EXPECT_LE(1, fi_slab_fails())
			TH_LOG("TCP's allocation did not fail");

		ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, AL_STRANDED_WAIT));
		EXPECT_EQ(sizeof(b), recv(r, got, sizeof(got), 0))
			TH_LOG("Markers %d: the FPDU held at shutdown never came (%s)",
			       m, strerror(errno));
		EXPECT_EQ(0, memcmp(b, got, sizeof(b)));
		EXPECT_EQ(0, recv(r, got, sizeof(got), 0))
			TH_LOG("Markers %d: no end of file behind it (%s)", m,
			       strerror(errno));
		EXPECT_EQ(4, send(r, "back", 4, MSG_NOSIGNAL));
		EXPECT_EQ(4, recv(i, got, sizeof(got), 0))
			TH_LOG("Markers %d: the Initiator no longer receives (%s)",
			       m, strerror(errno));
		close(i);
		close(r);
	}

	/*
	 * Memory that does not come back: after its tries (MPA_FIN_TRIES,
	 * 5 s) MPA resets the connection, as before a gap, rather than keep
	 * the FIN back for ever.
	 */
	al_strand(_metadata, 0, false, fs, fe, b, sizeof(b), &i, &r);
	EXPECT_EQ(0, shutdown(i, SHUT_WR));
	ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, AL_WAIT));
	n = recv(r, got, sizeof(got), 0);
	e = errno;
	fi_off();
	EXPECT_LE(1, fi_slab_fails())
		TH_LOG("TCP's allocation did not fail");
	EXPECT_EQ(-1, n) TH_LOG("recv: %zd octets", n);
	EXPECT_EQ(ECONNRESET, e)
		TH_LOG("memory stays short: %s, not the reset",
		       strerror(e));
	close(i);
	close(r);
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * As shut_short, while the connection's work runs again and again for
 * other reasons than its retry timer: the stranded end (the Responder,
 * its SO_RCVBUF small) reads ULPDUs far larger than its receive buffer,
 * in copy mode, whose work runs at each window's worth that arrives
 * (AL_BUSY_ULPDUS of them take more runs than MPA_FIN_TRIES). Those
 * ULPDUs lie in the Initiator's TCP, its send buffer large, before the
 * injection begins: TCP sends them as ACKs open the window, which no
 * allocation under tcp_sendmsg_locked() does. Only retries count toward
 * the reset, so memory that is back well within 5 s gets the FPDU and the
 * FIN through; every run used to count, and the connection was reset.
 */
#define AL_BUSY_ULPDUS	8
#define AL_BUSY_SHORT	6	/* of them read while memory is short */
#define AL_SHORT_MS	4000	/* for this long at most (the reset: 5 s) */

/* Memory comes back after @ms, or when @efd is written to. */
struct al_timed_off {
	pthread_t thr;
	int efd;
	long ms;
	bool off;		/* fi_off() has run */
};

static void *al_timed_off_run(void *arg)
{
	struct al_timed_off *t = arg;
	struct pollfd p = { .fd = t->efd, .events = POLLIN };

	poll(&p, 1, t->ms);
	fi_off();
	__atomic_store_n(&t->off, true, __ATOMIC_RELEASE);
	return NULL;
}

TEST_F_TIMEOUT(inject, shut_short_busy, 300)
{
	uint8_t b[1000], *big = malloc(MPA_MAX_ULPDU);
	uint8_t *got = malloc(T_ULPDU_BUF);
	unsigned long long fs, fe, ms, me;
	long long taken, want;
	struct al_timed_off to = { .ms = AL_SHORT_MS };
	int i, r, k, short_k = 0, sndbuf = 4 << 20;
	long t0;

	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, ks_func(NULL, "tcp_sendmsg_locked", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	t_fill(b, sizeof(b), 79);
	t_fill(big, MPA_MAX_ULPDU, 80);
	ASSERT_EQ(0, al_pair(false, false, 4096, &i, &r));
	/* past net.core.wmem_max */
	ASSERT_EQ(0, setsockopt(i, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf,
				sizeof(sndbuf)));
	/* a round trip: the Responder's hold is over, its TCP idle */
	ASSERT_EQ(4, send(i, "ping", 4, MSG_NOSIGNAL));
	ASSERT_EQ(4, recv(r, got, T_ULPDU_BUF, 0));
	ASSERT_EQ(4, send(r, "pong", 4, MSG_NOSIGNAL));
	ASSERT_EQ(4, recv(i, got, T_ULPDU_BUF, 0));

	/* the Initiator's TCP takes them all (each FPDU 8 octets more) */
	taken = t_tcp_taken(i);
	ASSERT_LE(0, taken);
	want = taken + AL_BUSY_ULPDUS * (MPA_MAX_ULPDU + 8LL);
	for (k = 0; k < AL_BUSY_ULPDUS; k++)
		ASSERT_EQ(MPA_MAX_ULPDU, send(i, big, MPA_MAX_ULPDU,
					      MSG_NOSIGNAL))
			TH_LOG("send %d: %s", k, strerror(errno));
	for (t0 = t_now_ms(); (taken = t_tcp_taken(i)) < want;) {
		ASSERT_LE(0, taken);
		ASSERT_GT(t0 + AL_WAIT, t_now_ms())
			TH_LOG("TCP took %lld of %lld octets", taken, want);
		/* no event says "taken": look again shortly */
		poll(NULL, 0, 1);
	}

	/* the Responder's FPDU stranded, then its FIN behind it */
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, fs, fe));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, fs, fe));
	to.efd = eventfd(0, 0);
	ASSERT_LE(0, to.efd);
	ASSERT_EQ(0, fi_on_prob(100));
	t0 = t_now_ms();
	/* memory is back well within the 5 s the reset waits for */
	ASSERT_EQ(0, pthread_create(&to.thr, NULL, al_timed_off_run, &to));
	EXPECT_EQ(sizeof(b), send(r, b, sizeof(b),
				  MSG_NOSIGNAL | MSG_DONTWAIT))
		TH_LOG("send: %s", strerror(errno));
	EXPECT_EQ(0, shutdown(r, SHUT_WR));
	for (k = 0; k < AL_BUSY_ULPDUS; k++) {
		ssize_t n = recv(r, got, T_ULPDU_BUF, 0);

		ASSERT_EQ(MPA_MAX_ULPDU, n)
			TH_LOG("ULPDU %d: %s", k,
			       n < 0 ? strerror(errno) : "short");
		ASSERT_EQ(0, memcmp(big, got, MPA_MAX_ULPDU));
		if (!__atomic_load_n(&to.off, __ATOMIC_ACQUIRE))
			short_k = k + 1;
	}
	EXPECT_EQ(0, eventfd_write(to.efd, 1));
	pthread_join(to.thr, NULL);
	close(to.efd);
	ksft_print_msg("%d of %d ULPDUs read while memory was short, all in %ld ms\n",
		       short_k, AL_BUSY_ULPDUS, t_now_ms() - t0);
	EXPECT_LE(1, fi_slab_fails())
		TH_LOG("TCP's allocation did not fail");
	/* the reset used to come at the 6th */
	EXPECT_LE(AL_BUSY_SHORT, short_k)
		TH_LOG("%d ULPDUs read while memory was short", short_k);

	/* memory is back: the FPDU, then the end of file, not a reset */
	EXPECT_EQ(sizeof(b), recv(i, got, T_ULPDU_BUF, 0))
		TH_LOG("the FPDU held at shutdown never came (%s)",
		       strerror(errno));
	EXPECT_EQ(0, memcmp(b, got, sizeof(b)));
	EXPECT_EQ(0, recv(i, got, T_ULPDU_BUF, 0))
		TH_LOG("no end of file behind it (%s)", strerror(errno));
	close(i);
	close(r);
	free(big);
	free(got);
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * shutdown(SHUT_WR) at a Responder whose Reply TCP has no memory for:
 * every allocation under tcp_sendmsg_locked() fails while MPA_ACCEPT or
 * MPA_REJECT tries to queue it, and at the shutdown. The FIN waits behind
 * the Reply (mpa.rst, Closing), and both go once memory is back. After
 * an accept the Initiator comes to Full Operation and reads the end of
 * file: the Responder holds no FPDU (the FIN used to wait for the
 * Initiator's first FPDU). After a reject the Initiator is refused and
 * reads the end of file of the plain stream (it used to be reset).
 */
TEST_F_TIMEOUT(inject, shut_behind_reply, 300)
{
	static const int answers[] = { MPA_ACCEPT, MPA_REJECT };
	static const long states[] = { MPA_STATE_FULL, MPA_STATE_REJECTED };
	unsigned long long fs, fe, ms, me;
	uint8_t got[64];
	int i, r, k;
	ssize_t n;

	ASSERT_EQ(0, ks_func(NULL, "tcp_sendmsg_locked", &fs, &fe));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	for (k = 0; k < 2; k++) {
		al_request_in(_metadata, fs, fe, &i, &r);
		ASSERT_EQ(0, t_nonblock(r));
		ASSERT_EQ(0, fi_on_prob(100));
		EXPECT_EQ(-1, mpa_answer(r, answers[k], NULL, 0));
		EXPECT_EQ(EINPROGRESS, errno)
			TH_LOG("answer %d: %s", k, strerror(errno));
		EXPECT_EQ(0, shutdown(r, SHUT_WR))
			TH_LOG("shutdown: %s", strerror(errno));
		fi_off();
		EXPECT_LE(1, fi_slab_fails())
			TH_LOG("TCP's allocation for the Reply did not fail");

		EXPECT_LE(0, t_wait_startup(i, AL_WAIT))
			TH_LOG("answer %d: the Reply never came", k);
		EXPECT_EQ(states[k], mpa_state(i));
		if (k) {
			EXPECT_MPA_ERROR(i, MPA_ERR_NONE, MPA_REASON_REJECTED,
					 ECONNREFUSED);
			/* told as a refused connect() is */
			EXPECT_EQ(ECONNREFUSED, t_so_error(i));
		}
		ASSERT_EQ(0, t_blocking(i));
		ASSERT_EQ(0, t_set_timeo(i, SO_RCVTIMEO, AL_STRANDED_WAIT));
		n = recv(i, got, sizeof(got), 0);
		EXPECT_EQ(0, n)
			TH_LOG("answer %d: no end of file behind the Reply: %zd (%s)",
			       k, n, strerror(errno));
		close(i);
		close(r);
	}
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * A run (mpa/tx.c: small FPDUs MPA holds while Nagle's algorithm would)
 * that TCP has no memory for when an ACK comes, with more still in
 * flight: each ACK after it must bring it back to MPA, and once nothing
 * is in flight MPA's retry timer sends it. netem delays both ways on
 * the test's own loopback, so that the ACKs of a ULPDU of three segments
 * come apart (a 40 ms RTT makes TCP give each skb two segments; a short
 * one, all); the small ULPDU sent right behind it waits in the run. Every
 * allocation under mpa_tx_run_kick() fails.
 */
TEST_F_TIMEOUT(inject, run_kick_in_flight, 300)
{
	static const size_t sizes[] = { 2 * 1460 + 700, 8 };
	struct t_pair_opts o = { .mss = 1460 };
	uint8_t *b = malloc(T_ULPDU_BUF), *got = malloc(T_ULPDU_BUF);
	unsigned long long ks, ke, ms, me;
	unsigned int round, k;
	long long times;
	ssize_t n;
	long t0;
	int i, r;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, t_sh("ip link set lo up && tc qdisc add dev lo root netem delay 20ms"));
	ASSERT_EQ(0, ks_func("mpa", "mpa_tx_run_kick", &ks, &ke));
	ASSERT_EQ(0, fi_module_text(&ms, &me));
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ks, ke));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ks, ke));
	ASSERT_EQ(0, al_pair_opts(&o, false, false, &i, &r));
	times = fi_get(FI_SLAB, "times");
	ASSERT_EQ(0, fi_on_prob(100));
	for (round = 0; round < 4; round++) {
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			t_fill(b, sizes[k], 2 * round + k);
			ASSERT_EQ((ssize_t)sizes[k],
				  send(i, b, sizes[k], MSG_NOSIGNAL));
		}
		t0 = t_now_ms();
		for (k = 0; k < ARRAY_SIZE(sizes); k++) {
			n = al_recv(r, got, T_ULPDU_BUF);
			ASSERT_EQ((ssize_t)sizes[k], n)
				TH_LOG("round %u, ULPDU %u: %s after %ld ms",
				       round, k, n < 0 ? strerror(-n) : "end",
				       t_now_ms() - t0);
			t_fill(b, sizes[k], 2 * round + k);
			ASSERT_EQ(0, memcmp(b, got, sizes[k]));
		}
	}
	fi_off();
	EXPECT_LE(1, times - fi_get(FI_SLAB, "times"))
		TH_LOG("no allocation under mpa_tx_run_kick() failed: no run waited for an ACK");
	fprintf(stderr, "# %lld allocations under mpa_tx_run_kick() failed\n",
		times - fi_get(FI_SLAB, "times"));
	close(i);
	close(r);
	free(b);
	free(got);
	/* the whole module again, for the tests after this one */
	ASSERT_EQ(0, fi_setup_one(FI_SLAB, ms, me));
	ASSERT_EQ(0, fi_setup_one(FI_PAGE, ms, me));
}

/*
 * Attach and run the startup phase under injection; a ULPDU each way on
 * the connections that reach Full Operation.
 */
TEST_F_TIMEOUT(inject, startup, 900)
{
	uint64_t seed = s_seed("MPA_ALLOC_SEED"), s = seed;
	unsigned int k, n = s_env_long("MPA_ALLOC_STARTUPS", 150);
	struct al_stats st = {};
	uint8_t b[2048], got[2048];
	int i, r, e, idx;
	ssize_t len;

	fprintf(stderr, "# seed %llu (MPA_ALLOC_SEED repeats it)\n",
		(unsigned long long)seed);
	for (k = 0; k < n; k++) {
		ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &r, &i));
		ASSERT_EQ(0, fi_on());
		if (mpa_attach(i) || mpa_attach(r)) {
			e = errno;
			fi_off();
			EXPECT_EQ(ENOMEM, e)
				TH_LOG("setsockopt(TCP_ULP): %s", strerror(e));
			st.enomem_attach++;
			close(i);
			close(r);
			continue;
		}
		ASSERT_EQ(0, mpa_set(i, MPA_ROLE, MPA_ROLE_INITIATOR));
		ASSERT_EQ(0, mpa_set(r, MPA_ROLE, MPA_ROLE_RESPONDER));
		ASSERT_EQ(0, mpa_set(i, MPA_TIMEOUT, AL_TIMEOUT));
		ASSERT_EQ(0, mpa_set(r, MPA_TIMEOUT, AL_TIMEOUT));
		ASSERT_EQ(0, mpa_set(i, MPA_MARKERS, t_rand64(&s) & 1));
		ASSERT_EQ(0, mpa_set(r, MPA_MARKERS, t_rand64(&s) & 1));
		ASSERT_EQ(0, t_nonblock(i));
		ASSERT_EQ(-1, al_start(i, &st));
		ASSERT_EQ(EINPROGRESS, errno);
		if (al_start(r, &st) == 0) {
			e = mpa_answer(r, MPA_ACCEPT, NULL, 0) ? errno : 0;
			/* accept's own errors: only a failed startup's */
			if (e)
				EXPECT_LE(0, al_startup_errno_idx(e))
					TH_LOG("MPA_ACCEPT: %s", strerror(e));
		} else {
			e = errno;
			EXPECT_LE(0, al_startup_errno_idx(e))
				TH_LOG("the Responder's MPA_START: %s",
				       strerror(e));
		}
		EXPECT_LE(0, t_wait_startup(i, AL_TIMEOUT + AL_WAIT))
			TH_LOG("connection %u: the Initiator's startup never ended",
			       k);
		ASSERT_EQ(0, t_blocking(i));
		ASSERT_EQ(0, t_set_timeo(i, SO_RCVTIMEO, AL_WAIT));
		ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, AL_WAIT));
		if (mpa_state(i) == MPA_STATE_FULL &&
		    mpa_state(r) == MPA_STATE_FULL) {
			st.full++;
			len = 1 + t_rand64(&s) % sizeof(b);
			t_fill(b, len, k);
			EXPECT_EQ(0, al_send(i, b, len, 1, &st));
			EXPECT_EQ(len, al_recv(r, got, sizeof(got)));
			EXPECT_EQ(0, memcmp(b, got, len));
			EXPECT_EQ(0, al_send(r, b, len, 1 + k % 2, &st));
			EXPECT_EQ(len, al_recv(i, got, sizeof(got)));
			EXPECT_EQ(0, memcmp(b, got, len));
			st.ulpdus += 2;
		} else {
			/* failed: with one of the documented errors */
			struct mpa_error_info err;
			int fd = mpa_state(i) == MPA_STATE_FULL ? r : i;

			ASSERT_EQ(0, mpa_getstruct(fd, MPA_ERROR, &err,
						   sizeof(err)));
			idx = al_startup_errno_idx(err.errnum);
			EXPECT_LE(0, idx)
				TH_LOG("connection %u: state %ld/%ld, errno %d",
				       k, mpa_state(i), mpa_state(r),
				       err.errnum);
			if (idx >= 0)
				st.startup_errs[idx]++;
		}
		fi_off();
		close(i);
		close(r);
	}
	fprintf(stderr, "# %u connections: %lu ENOMEM from TCP_ULP, %lu from MPA_START, %lu in Full Operation (%lu ULPDUs checked), startups failed with ETIMEDOUT %lu, ECONNREFUSED %lu, EPROTO %lu, ECONNRESET %lu, ENOMEM %lu; ENOMEM from send %lu\n",
		n, st.enomem_attach, st.enomem_start, st.full, st.ulpdus,
		st.startup_errs[0], st.startup_errs[1], st.startup_errs[2],
		st.startup_errs[3], st.startup_errs[4], st.enomem_send);
	/* failures were injected, and connections got through them */
	EXPECT_LT(0, fi_report("startup", &self->start))
		TH_LOG("no allocation failed: nothing was injected");
	EXPECT_LT(0, st.full)
		TH_LOG("no connection of %u reached Full Operation", n);
}

/* ULPDUs both ways at once on several connections, under injection. */
TEST_F_TIMEOUT(inject, traffic, 900)
{
	static const struct { bool mi, mr; int rcvbuf; } cfg[] = {
		{ false, false, 0 }, { true, true, 0 }, { true, false, 0 },
		{ false, true, 0 }, { false, false, 4096 }, { true, true, 4096 },
	};
	uint64_t seed = s_seed("MPA_ALLOC_SEED");
	unsigned int n = s_env_long("MPA_ALLOC_ULPDUS", 120);
	struct al_dir d[2 * ARRAY_SIZE(cfg)] = {};
	int fds[2 * ARRAY_SIZE(cfg)];
	unsigned long enomem = 0, resets = 0, ulpdus = 0;
	unsigned int k;
	char name[64];

	for (k = 0; k < ARRAY_SIZE(cfg); k++) {
		ASSERT_EQ(0, al_pair(cfg[k].mi, cfg[k].mr, cfg[k].rcvbuf,
				     &fds[2 * k], &fds[2 * k + 1]));
		/* Initiator to Responder, and back */
		d[2 * k].tx_fd = fds[2 * k];
		d[2 * k].rx_fd = fds[2 * k + 1];
		d[2 * k + 1].tx_fd = fds[2 * k + 1];
		d[2 * k + 1].rx_fd = fds[2 * k];
	}
	ASSERT_EQ(0, fi_on());
	for (k = 0; k < ARRAY_SIZE(d); k++) {
		d[k].seed = seed + 1000003ull * k;
		d[k].n = n;
		ASSERT_EQ(0, pthread_create(&d[k].rx, NULL, al_dir_rx, &d[k]));
		ASSERT_EQ(0, pthread_create(&d[k].tx, NULL, al_dir_tx, &d[k]));
	}
	for (k = 0; k < ARRAY_SIZE(d); k++) {
		pthread_join(d[k].tx, NULL);
		pthread_join(d[k].rx, NULL);
	}
	fi_off();
	for (k = 0; k < ARRAY_SIZE(d); k++) {
		snprintf(name, sizeof(name), "connection %u (M %d/%d%s), %s",
			 k / 2, cfg[k / 2].mi, cfg[k / 2].mr,
			 cfg[k / 2].rcvbuf ? ", copy mode" : "",
			 k % 2 ? "Responder to Initiator" :
				 "Initiator to Responder");
		al_dir_check(_metadata, &d[k], name);
		enomem += d[k].st.enomem_send;
		resets += d[k].st.rx_resets;
		ulpdus += d[k].received;
	}
	for (k = 0; k < ARRAY_SIZE(fds); k++)
		close(fds[k]);
	fprintf(stderr, "# %lu ULPDUs delivered and checked on %zu connections, %lu sends repeated after ENOMEM, %lu directions ended by a reset\n",
		ulpdus, ARRAY_SIZE(cfg), enomem, resets);
	EXPECT_LT(0, fi_report("traffic", &self->start))
		TH_LOG("no allocation failed: nothing was injected");
	EXPECT_LT(0, ulpdus) TH_LOG("no ULPDU was delivered");
}

/*
 * Round trips of small ULPDUs, one at a time: when TCP finds no memory
 * for the skb of an FPDU MPA pushes, nothing is in flight, so no ACK will
 * call sk_write_space(); MPA must try again by itself, or the ULPDU send()
 * accepted sits in its queue while both ends wait for each other. (The
 * sender pushes twice before it sleeps: a higher probability,
 * MPA_ALLOC_PINGPONG_PROB, makes the double failure common.)
 */
TEST_F_TIMEOUT(inject, pingpong, 900)
{
	uint64_t seed = s_seed("MPA_ALLOC_SEED"), s = seed;
	unsigned int k, m, n = s_env_long("MPA_ALLOC_ROUNDS", 150);
	uint8_t *b = malloc(T_ULPDU_BUF), *got = malloc(T_ULPDU_BUF);
	struct al_stats st = {};
	unsigned long rounds = 0;
	int fd[2];
	size_t len;
	long t0;

	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, got);
	for (m = 0; m < 2; m++) {
		ASSERT_EQ(0, al_pair(m, m, 0, &fd[0], &fd[1]));
		ASSERT_EQ(0, fi_on_prob(s_env_long("MPA_ALLOC_PINGPONG_PROB",
						   AL_PINGPONG_PROB)));
		for (k = 0; k < n; k++) {
			len = 1 + t_rand64(&s) % 2000;
			t_fill(b, len, seed + k);
			t0 = t_now_ms();
			ASSERT_EQ(0, al_send(fd[k % 2], b, len, 1, &st));
			ASSERT_EQ(len, al_recv(fd[1 - k % 2], got, T_ULPDU_BUF))
				TH_LOG("Markers %u, round %u: stalled after %ld ms",
				       m, k, t_now_ms() - t0);
			ASSERT_EQ(0, memcmp(b, got, len));
			rounds++;
		}
		fi_off();
		close(fd[0]);
		close(fd[1]);
	}
	fprintf(stderr, "# %lu ULPDUs each waited for, %lu sends repeated after ENOMEM\n",
		rounds, st.enomem_send);
	free(b);
	free(got);
	EXPECT_LT(0, fi_report("pingpong", &self->start))
		TH_LOG("no allocation failed: nothing was injected");
	EXPECT_LT(0, rounds) TH_LOG("no round trip was made");
}

/* mpa_echo: load, the connections file */

/* Our echoing Responder for the module's Initiator */
struct al_echo {
	pthread_t thr;
	int lfd;
	struct sockaddr_in addr;
	unsigned int conns, ulpdus;
	int err;
	struct al_stats st;
	char ends[512];		/* how each connection ended */
};

static void al_echo_end(struct al_echo *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void al_echo_end(struct al_echo *e, const char *fmt, ...)
{
	size_t n = strlen(e->ends);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->ends + n, sizeof(e->ends) - n, fmt, ap);
	va_end(ap);
}

static void *al_echo_run(void *arg)
{
	struct al_echo *e = arg;
	uint8_t *b = malloc(T_ULPDU_BUF);
	unsigned int n;
	ssize_t r;
	long t0;
	int fd;

	al_thread_nosig();
	while (b) {
		if (!(t_poll(e->lfd, POLLIN, AL_WAIT) & POLLIN))
			break;
		fd = accept(e->lfd, NULL, NULL);
		if (fd < 0)
			break;
		t_set_timeo(fd, SO_RCVTIMEO, AL_WAIT);
		t_set_timeo(fd, SO_SNDTIMEO, AL_WAIT);
		if (mpa_config(fd, MPA_ROLE_RESPONDER, AL_TIMEOUT)) {
			/*
			 * ENOMEM: the module's Initiator sees its startup
			 * fail; ENOTCONN: its attach failed, it closed
			 */
			if (errno != ENOMEM && errno != ENOTCONN)
				e->err = errno;
			close(fd);
			continue;
		}
		e->conns++;
		t0 = t_now_ms();
		n = 0;
		if (al_start(fd, NULL) || mpa_answer(fd, MPA_ACCEPT, NULL, 0)) {
			al_echo_end(e, " startup: %s;", strerror(errno));
			close(fd);
			continue;
		}
		while ((r = al_recv(fd, b, T_ULPDU_BUF)) > 0) {
			r = al_send(fd, b, r, 1, &e->st);
			if (r) {
				al_echo_end(e, " send: %s;", strerror(r));
				break;
			}
			e->ulpdus++;
			n++;
		}
		if (r <= 0)
			al_echo_end(e, " recv %zd after %u in %ld ms;", r, n,
				    t_now_ms() - t0);
		close(fd);
	}
	free(b);
	return NULL;
}

/* The module's connections file, and a number from one of its lines */
static long long al_ke_num(const char *line, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), " %s=", key);
	p = strstr(line, pat);
	return p ? strtoll(p + strlen(pat), NULL, 0) : -1;
}

TEST_F_TIMEOUT(inject, kapi, 900)
{
	unsigned int k, m, n = s_env_long("MPA_ALLOC_KCONNS", 12);
	unsigned int kinit = 4, total = 20, done, lines, checked = 0;
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_port = htons(AL_PORT),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	struct al_stats st = {};
	uint8_t *b, *got;
	unsigned long full = 0, echoed = 0, failed_startup = 0;
	struct al_echo echo = {};
	char buf[65536], *line, *save;
	long end;
	ssize_t len;
	int fd, e;

	b = malloc(MPA_MAX_ULPDU);
	got = malloc(T_ULPDU_BUF);
	ASSERT_NE(NULL, b);
	ASSERT_NE(NULL, got);
	t_sh("rmmod mpa_echo 2>/dev/null");
	ASSERT_EQ(0, t_sh("modprobe mpa_echo port=%d", AL_PORT));

	/* Our Initiators against its echoing Responder */
	ASSERT_EQ(0, fi_on());
	for (k = 0; k < n; k++) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, connect(fd, (struct sockaddr *)&sin, sizeof(sin)));
		ASSERT_EQ(0, t_set_timeo(fd, SO_RCVTIMEO, AL_WAIT));
		ASSERT_EQ(0, t_set_timeo(fd, SO_SNDTIMEO, AL_WAIT));
		if (mpa_config(fd, MPA_ROLE_INITIATOR, AL_TIMEOUT)) {
			/* or the module's attach failed and it closed */
			EXPECT_TRUE(errno == ENOMEM || errno == ENOTCONN)
				TH_LOG("TCP_ULP: %s", strerror(errno));
			st.enomem_attach++;
			close(fd);
			continue;
		}
		if (al_start(fd, &st)) {
			e = errno;
			EXPECT_LE(0, al_startup_errno_idx(e))
				TH_LOG("MPA_START: %s", strerror(e));
			failed_startup++;
			close(fd);
			continue;
		}
		full++;
		for (m = 0; m < 10; m++) {
			len = 1 + (m * 7919 + k * 104729) % (m % 3 ? 3000 : MPA_MAX_ULPDU);
			t_fill(b, len, k * 100 + m);
			e = al_send(fd, b, len, 1 + m % 2, &st);
			EXPECT_EQ(0, e) TH_LOG("send: %s", strerror(e));
			if (e)
				break;
			EXPECT_EQ(len, al_recv(fd, got, T_ULPDU_BUF))
				TH_LOG("connection %u, echo %u", k, m);
			if (memcmp(b, got, len)) {
				EXPECT_EQ(0, 1) TH_LOG("connection %u: echo %u differs",
						       k, m);
				break;
			}
			echoed++;
		}
		EXPECT_EQ(0, shutdown(fd, SHUT_WR));
		len = al_recv(fd, got, T_ULPDU_BUF);
		EXPECT_EQ(0, len) {
			char line[8192];

			TH_LOG("connection %u: %zd at the end", k, len);
			if (s_read_file(KE_DIR "conns", line, sizeof(line)) > 0)
				TH_LOG("%s", line);
		}
		close(fd);
	}
	fi_off();
	fprintf(stderr, "# our Initiators: %u connections, %lu ENOMEM from TCP_ULP, %lu from MPA_START, %lu failed startups, %lu in Full Operation, %lu ULPDUs echoed intact, %lu sends repeated after ENOMEM\n",
		n, st.enomem_attach, st.enomem_start, failed_startup, full,
		echoed, st.enomem_send);
	EXPECT_LT(0, echoed) TH_LOG("none of our %u Initiators had an echo", n);

	/* Its Initiators against our echoing Responder */
	echo.lfd = s_listen4(1, 0, 16, &echo.addr);
	ASSERT_LE(0, echo.lfd);
	ASSERT_EQ(0, pthread_create(&echo.thr, NULL, al_echo_run, &echo));
	ASSERT_EQ(0, fi_on());
	for (k = 0; k < kinit; k++) {
		snprintf(buf, sizeof(buf),
			 "echo '127.0.0.1 %d sizes=1,100,2000,9000,64768 repeat=%u seed=%u timeout=%d' > %sconnect",
			 ntohs(echo.addr.sin_port), total / 5, k * 1000,
			 AL_TIMEOUT, KE_DIR);
		/* writing may fail with ENOMEM: its attach failed */
		e = t_sh("%s 2>/dev/null", buf);
		if (e)
			fprintf(stderr, "# the module's Initiator %u: the connect file said %d\n",
				k, e);
	}
	/* wait until each of its connections has ended */
	end = t_now_ms() + 3 * AL_WAIT;
	for (;;) {
		ASSERT_LT(0, s_read_file(KE_DIR "conns", buf, sizeof(buf)));
		done = lines = 0;
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (!strstr(line, "role=initiator"))
				continue;
			lines++;
			if (al_ke_num(line, "released") == 1)
				done++;
		}
		if ((lines && done == lines) || t_now_ms() > end)
			break;
		/* no event tells of the module's progress: look again */
		poll(NULL, 0, 200);
	}
	fi_off();
	ASSERT_LT(0, s_read_file(KE_DIR "conns", buf, sizeof(buf)));
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		long long verified, bad, err, kerr;

		if (!strstr(line, "role=initiator"))
			continue;
		verified = al_ke_num(line, "verified");
		bad = al_ke_num(line, "bad");
		err = al_ke_num(line, "err_errno");
		kerr = al_ke_num(line, "kerr");
		fprintf(stderr, "# the module's Initiator: %s\n", line);
		fprintf(stderr, "#   verified %lld of %u, bad %lld, error %lld, call error %lld\n",
			verified, total, bad, err, kerr);
		checked++;
		EXPECT_EQ(0, bad);
		EXPECT_EQ(1, al_ke_num(line, "released"))
			TH_LOG("a connection of the module never ended");
		/*
		 * All came back, unless its startup failed with a documented
		 * error: mpa_kattach()'s -ENOMEM, or MPA_START's.
		 */
		if (!strstr(line, "state=failed") ||
		    (kerr != -ENOMEM && al_startup_errno_idx(err) < 0))
			EXPECT_EQ(total, verified)
				TH_LOG("%lld of %u echoes, error %lld, call error %lld",
				       verified, total, err, kerr);
	}
	/* each connect made a connection (its attach may have failed) */
	EXPECT_EQ(kinit, checked)
		TH_LOG("%u of the module's %u Initiators in its connections file (%u when waiting)",
		       checked, kinit, lines);
	close(echo.lfd);
	pthread_join(echo.thr, NULL);
	EXPECT_EQ(0, echo.err) TH_LOG("our Responder: %s", strerror(echo.err));
	fprintf(stderr, "# our Responder: %u connections, %u ULPDUs echoed; ends:%s\n",
		echo.conns, echo.ulpdus, echo.ends);
	EXPECT_EQ(0, t_sh("rmmod mpa_echo"));
	free(b);
	free(got);
	EXPECT_LT(0, fi_report("kapi", &self->start))
		TH_LOG("no allocation failed: nothing was injected");
}

/* Connections with data queued both ways, ended under injection. */
TEST_F_TIMEOUT(inject, ending, 900)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };
	uint64_t s = s_seed("MPA_ALLOC_SEED");
	unsigned int k, n = s_env_long("MPA_ALLOC_TEARDOWNS", 60), q;
	unsigned int ended = 0;
	int fd[2], first, how, e;
	uint8_t *b = malloc(MPA_MAX_ULPDU);
	long t, slowest = 0;
	struct al_stats st;
	bool isent, more;
	size_t len;
	ssize_t r;

	ASSERT_NE(NULL, b);
	memset(b, 0x3c, MPA_MAX_ULPDU);
	for (k = 0; k < n; k++) {
		ASSERT_EQ(0, al_pair(t_rand64(&s) & 1, t_rand64(&s) & 1,
				     t_rand64(&s) % 3 ? 0 : 4096,
				     &fd[0], &fd[1]));
		ASSERT_EQ(0, t_nonblock(fd[0]));
		ASSERT_EQ(0, t_nonblock(fd[1]));
		ASSERT_EQ(0, fi_on());
		isent = false;
		for (q = t_rand64(&s) % 20; q; q--) {
			/* the last may stay open (MSG_MORE): not sent */
			more = q == 1 && (s & 1);
			len = 1 + t_rand64(&s) % MPA_MAX_ULPDU;
			if (send(fd[0], b, len, MSG_NOSIGNAL |
				 (more ? MSG_MORE : 0)) > 0 && !more)
				isent = true;
			send(fd[1], b, 1 + t_rand64(&s) % 3000, MSG_NOSIGNAL);
		}
		first = t_rand64(&s) & 1;
		how = t_rand64(&s) % 4;
		t = t_now_ms();
		switch (how) {
		case 0:
			close(fd[first]);
			break;
		case 1:
			shutdown(fd[first], SHUT_WR);
			break;
		case 2:
			shutdown(fd[first], SHUT_RDWR);
			break;
		default:
			setsockopt(fd[first], SOL_SOCKET, SO_LINGER, &l,
				   sizeof(l));
			close(fd[first]);
			break;
		}
		/*
		 * A Responder's FIN waits behind its held ULPDUs until the
		 * Initiator's first FPDU (R-7.1.2-15): the Initiator speaks
		 * first, as the protocol has it, if it has not yet (unless
		 * the shutdown reset the connection: TCP refused MPA's
		 * octets).
		 */
		if (first && (how == 1 || how == 2) && !isent) {
			ASSERT_EQ(0, t_blocking(fd[0]));
			memset(&st, 0, sizeof(st));
			e = al_send(fd[0], b, 1, 1, &st);
			EXPECT_TRUE(!e || e == ECONNRESET || e == EPIPE)
				TH_LOG("connection %u: the Initiator's send: %s",
				       k, strerror(e));
			ASSERT_EQ(0, t_nonblock(fd[0]));
		}
		/* the other end reads until its end: documented results */
		for (;;) {
			if (!(t_poll(fd[!first], POLLIN, AL_WAIT) &
			      (POLLIN | POLLHUP | POLLERR))) {
				struct mpa_error_info err = {};
				struct t_tcp_info ti = {};
				socklen_t tl = sizeof(ti);

				mpa_getstruct(fd[!first], MPA_ERROR, &err,
					      sizeof(err));
				getsockopt(fd[!first], SOL_TCP, TCP_INFO, &ti,
					   &tl);
				EXPECT_EQ(0, 1)
					TH_LOG("connection %u: no end after %s by the %s; state %ld, TCP state %u, error %u/%u/%u, unacked %u notsent %u, inq %d",
					       k, (const char *[]){ "close",
					       "shutdown(SHUT_WR)",
					       "shutdown(SHUT_RDWR)",
					       "reset" }[how],
					       first ? "Responder" : "Initiator",
					       mpa_state(fd[!first]),
					       ti.base.tcpi_state, err.code,
					       err.reason, err.errnum,
					       ti.base.tcpi_unacked,
					       ti.notsent_bytes,
					       t_inq(fd[!first]));
				break;
			}
			r = recv(fd[!first], b, MPA_MAX_ULPDU, MSG_DONTWAIT);
			if (r > 0 || (r < 0 && errno == EAGAIN))
				continue;
			if (r < 0)
				EXPECT_TRUE(errno == ECONNRESET ||
					    errno == EPIPE || errno == EPROTO)
					TH_LOG("connection %u: recv: %s", k,
					       strerror(errno));
			break;
		}
		if (how == 1 || how == 2)
			close(fd[first]);
		close(fd[!first]);
		t = t_now_ms() - t;
		if (t > slowest)
			slowest = t;
		fi_off();
		ended++;
	}
	free(b);
	fprintf(stderr, "# %u connections ended with data queued; the slowest end took %ld ms\n",
		ended, slowest);
	EXPECT_LT(0, fi_report("ending", &self->start))
		TH_LOG("no allocation failed: nothing was injected");
	EXPECT_LT(0, ended) TH_LOG("no connection was ended");
}

/* The failures counted; the modules unload. */
TEST_F_TIMEOUT(inject, unload, 300)
{
	struct fi_count total = {};
	long end = t_now_ms() + 120000;
	char buf[64];

	ASSERT_EQ(0, fi_read(&total));
	fprintf(stderr, "# injected: %lld slab and %lld page allocation failures in mpa.ko's call paths\n",
		total.slab, total.page);
	EXPECT_LE(AL_MIN_FAILS, total.slab + total.page);
	t_sh("rmmod mpa_echo 2>/dev/null");
	/* closed sockets let go of the module once TCP is done with them */
	while (s_read_file("/sys/module/mpa/refcnt", buf, sizeof(buf)) > 0 &&
	       atoi(buf) && t_now_ms() < end)
		poll(NULL, 0, 100);
	EXPECT_EQ(0, t_sh("rmmod mpa")) TH_LOG("mpa refcnt %s", buf);
}

TEST_HARNESS_MAIN
