// SPDX-License-Identifier: GPL-2.0
/*
 * Teardown under fire: an MPA socket is closed while a raw TCP peer floods
 * it, so that TCP runs MPA's socket callbacks (and they schedule MPA's
 * work) on one CPU while close() tears the connection down on the other.
 * One test per phase, each at least T_ROUNDS closes, by T_WORKERS workers
 * at once, each with a flooding thread of its own on the other CPU:
 *
 *   await_request     a Responder waiting for a Request that arrives in
 *                     pieces of 1 to 16 octets, and never whole, with a startup timeout of 20
 *                     to 320 ms (some rounds fail first: the timer runs too)
 *   request_received  the Request is there, unanswered; stream octets
 *                     keep coming behind it (too early: the first of them
 *                     fail the startup, requirements A6, and the close
 *                     races that failure and the flood's callbacks)
 *   full_copy         Full Operation in copy mode (a receive buffer too
 *                     small for the FPDUs), reading a few ULPDUs first
 *   held              a Responder with held sends (R-7.1.2-15) while the
 *                     Initiator's first FPDU arrives in small pieces
 *
 * Each round closes in one of three ways: close(), SO_LINGER {1, 0}, or
 * shutdown(SHUT_RDWR) then close(). After the rounds the test waits for
 * every MPA socket to be gone, unloads mpa (delete_module() must succeed:
 * nothing of MPA's may run once its sockets are destroyed) and loads it
 * again for the tests that follow. The guest's kernel log (KASAN, lockdep,
 * kmemleak on the debug lane) is checked by the runner.
 */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_ROUNDS	200	/* per phase, all workers together */
#define T_WORKERS	2
#define T_WAIT		10000	/* how long a round waits for an event */
#define T_GONE		120000	/* how long the sockets may take to go */

enum t_phase {
	P_AWAIT_REQUEST,
	P_REQUEST_RECEIVED,
	P_FULL_COPY,
	P_HELD,
};

/*
 * Wait until the peer has sent @n octets: 0; 1 if @m failed first (the
 * startup timeout: POLLERR), -1 if the flood stopped.
 */
static int t_flood_wait(struct t_flood *f, int m, size_t n)
{
	long end = t_now_ms() + T_WAIT;

	while (t_flood_sent(f) < n) {
		if (t_poll(m, 0, 0) & POLLERR)
			return 1;
		if (t_now_ms() > end)
			return -1;
		sched_yield();
	}
	return 0;
}

/* What the floods send, built once. */
static uint8_t *t_req_slow;	/* a Request with 512 octets of PD */
static size_t t_req_slow_len;
static uint8_t *t_req_junk;	/* a Request, then stream octets */
static size_t t_req_junk_len;
static uint8_t *t_fpdus;	/* FPDUs without Markers, CRC on */
static size_t t_fpdus_len, t_fpdu0_len;

#define T_FPDUS		8
#define T_FPDU_ULPDU	9000
#define T_JUNK		(256 << 10)

static void t_build(void)
{
	uint8_t *u = malloc(MPA_MAX_ULPDU);
	uint8_t pd[MPA_MAX_PRIVATE_DATA];
	size_t k, len;

	if (t_fpdus || !u)
		goto out;
	t_fill(pd, sizeof(pd), 11);
	t_req_slow = malloc(T_FRAME_MAX);
	t_req_slow_len = t_frame(t_req_slow, false, T_C, 1, pd, sizeof(pd));
	t_req_junk = malloc(T_HDR + T_JUNK);
	t_req_junk_len = t_frame(t_req_junk, false, T_C, 1, NULL, 0);
	t_fill(t_req_junk + t_req_junk_len, T_JUNK, 12);
	t_req_junk_len += T_JUNK;
	/* the first FPDU is the largest: a held Responder waits for it */
	t_fpdus = malloc(T_FPDUS * (MPA_MAX_ULPDU + 16));
	for (k = 0; k < T_FPDUS; k++) {
		len = k ? T_FPDU_ULPDU : MPA_MAX_ULPDU;
		t_fill(u, len, 100 + k);
		t_fpdus_len += t_fpdu_encode(t_fpdus + t_fpdus_len, 0, false,
					     u, len, NULL);
		if (!k)
			t_fpdu0_len = t_fpdus_len;
	}
out:
	free(u);
}

/* How the rounds ended, over all workers. */
struct t_counts {
	unsigned long rounds;
	unsigned long by_state[MPA_STATE_FAILED + 1];
	unsigned long flooded;	/* octets the floods sent */
	unsigned long fails;
	char why[256];
};

struct t_worker {
	pthread_t thr;
	int id;
	enum t_phase phase;
	unsigned int rounds;
	uint64_t seed;
	struct t_counts c;
	uint8_t buf[T_ULPDU_BUF];
};

#define T_FAIL(w, ...) do {						\
		if (!(w)->c.fails++)					\
			snprintf((w)->c.why, sizeof((w)->c.why), __VA_ARGS__); \
	} while (0)

/* Get @m into the phase; the flood @f is set up, not yet started. */
static int t_round_setup(struct t_worker *w, int raw, int m,
			 struct t_flood *f)
{
	uint8_t b[8];
	int i;

	switch (w->phase) {
	case P_AWAIT_REQUEST:
		if (mpa_config(m, MPA_ROLE_RESPONDER,
			       20 + t_rand64(&w->seed) % 300) ||
		    t_nonblock(m) || !mpa_start(m) || errno != EINPROGRESS)
			return -1;
		/* all of it but its last octet: the startup never ends */
		f->data = t_req_slow;
		f->len = f->loop = t_req_slow_len - 1;
		f->chunk_max = 16;
		return 0;
	case P_REQUEST_RECEIVED:
		if (mpa_config(m, MPA_ROLE_RESPONDER, 10000) ||
		    t_nonblock(m) || !mpa_start(m) || errno != EINPROGRESS)
			return -1;
		f->data = t_req_junk;
		f->len = t_req_junk_len;
		f->loop = T_HDR;
		f->chunk_max = 4096;
		return 0;
	case P_FULL_COPY:
	case P_HELD:
		if (t_raw_initiator(m, raw, T_C, false, true) < 0)
			return -1;
		if (w->phase == P_HELD) {
			if (t_nonblock(m))
				return -1;
			for (i = 0; i < 3; i++)
				if (send(m, w->buf, 1000 + i, MSG_NOSIGNAL) !=
				    1000 + i)
					return -1;
			/* held: nothing of them reaches the peer */
			if (recv(raw, b, sizeof(b), MSG_DONTWAIT) != -1)
				return -1;
		}
		/* copy mode: the 9000-octet FPDUs over a 4096-octet buffer */
		f->data = t_fpdus;
		f->len = t_fpdus_len;
		f->loop = w->phase == P_HELD ? 0 : t_fpdu0_len;
		f->start = f->loop;
		f->chunk_max = w->phase == P_HELD ? 2000 : 16384;
		return 0;
	}
	return -1;
}

/* Read a few ULPDUs in copy mode, as the flood goes on. */
static ssize_t t_full_read(struct t_worker *w, int m, unsigned int n)
{
	unsigned int k;
	ssize_t r = 0;

	for (k = 0; k < n; k++) {
		errno = 0;
		r = recv(m, w->buf, sizeof(w->buf), 0);
		if (r != T_FPDU_ULPDU)
			return r < 0 ? r : -2 - r;
	}
	return 0;
}

static void t_close(struct t_worker *w, int m)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	switch (t_rand64(&w->seed) % 3) {
	case 0:
		setsockopt(m, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		break;
	case 1:
		shutdown(m, SHUT_RDWR);
		break;
	}
	close(m);
}

static void t_round(struct t_worker *w)
{
	struct t_flood f = { .cpu = w->id % 2, .seed = t_rand64(&w->seed) };
	struct t_pair_opts o = {
		.rcvbuf = w->phase >= P_FULL_COPY ? 4096 : 32768,
		.client_nodelay = true,
	};
	struct timeval tv = { .tv_usec = 200000 };
	struct timeval tv_wait = { .tv_sec = T_WAIT / 1000 };
	int raw, m, family = w->seed & 1 ? AF_INET6 : AF_INET;
	size_t want;
	long st;

	if (mpa_tcp_pair_opts(family, &o, &raw, &m)) {
		T_FAIL(w, "no TCP pair: %s", strerror(errno));
		return;
	}
	/* a flood blocked by a closed window ends soon after the round */
	setsockopt(raw, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (t_round_setup(w, raw, m, &f)) {
		T_FAIL(w, "phase %d setup: %s, state %ld", w->phase,
		       strerror(errno), mpa_state(m));
		goto out;
	}
	setsockopt(m, SOL_SOCKET, SO_RCVTIMEO, &tv_wait, sizeof(tv_wait));
	f.fd = raw;
	if (pthread_create(&f.thr, NULL, t_flood_run, &f)) {
		T_FAIL(w, "no flood thread");
		goto out;
	}

	/* close when the flood is under way: after a random amount */
	switch (w->phase) {
	case P_AWAIT_REQUEST:
		want = 1 + t_rand64(&w->seed) % (t_req_slow_len - 1);
		break;
	case P_REQUEST_RECEIVED:
		want = T_HDR + t_rand64(&w->seed) % 8192;
		break;
	case P_FULL_COPY:
		want = 1 + t_rand64(&w->seed) % 4096;
		break;
	default:
		/* mostly inside the first FPDU: the sends stay held */
		want = 1 + t_rand64(&w->seed) % 20000;
		break;
	}
	/* (a held Responder's window may close first) */
	if (t_flood_wait(&f, m, want) < 0 && w->phase != P_HELD)
		T_FAIL(w, "phase %d: the flood stopped at %zu of %zu",
		       w->phase, t_flood_sent(&f), want);
	if (w->phase == P_FULL_COPY) {
		ssize_t r = t_full_read(w, m, t_rand64(&w->seed) % 3);

		if (r)
			T_FAIL(w, "copy mode: recv: %zd octets, errno %d (%s)",
			       r < -1 ? -2 - r : r, errno, strerror(errno));
	}

	st = mpa_state(m);
	if (st >= 0 && st <= MPA_STATE_FAILED)
		w->c.by_state[st]++;
	t_close(w, m);
	m = -1;
	__atomic_store_n(&f.stop, true, __ATOMIC_RELAXED);
	pthread_join(f.thr, NULL);
	w->c.flooded += f.sent;
	w->c.rounds++;
out:
	if (m >= 0)
		close(m);
	mpa_close_abort(raw);
}

static void *t_worker_run(void *arg)
{
	struct t_worker *w = arg;
	unsigned int k;

	t_pin((w->id + 1) % 2);
	t_fill(w->buf, sizeof(w->buf), 5);
	for (k = 0; k < w->rounds; k++)
		t_round(w);
	return NULL;
}

/*
 * Every MPA socket is gone once the reference count is 0: then mpa
 * unloads, and nothing of it may run any more. Load it again.
 */
static void t_unload(struct __test_metadata *_metadata)
{
	long end = t_now_ms() + T_GONE, t0 = t_now_ms(), n;

	while ((n = t_mpa_refcnt()) > 0 && t_now_ms() < end)
		t_sleep_ms(20);
	ASSERT_EQ(0, n) TH_LOG("mpa still has %ld users", n);
	TH_LOG("the sockets were gone after %ld ms", t_now_ms() - t0);
	ASSERT_EQ(0, syscall(SYS_delete_module, "mpa", O_NONBLOCK))
		TH_LOG("delete_module: %s", strerror(errno));
	EXPECT_EQ(-1, t_mpa_refcnt());
	ASSERT_EQ(0, system("modprobe mpa"));
	EXPECT_EQ(0, t_mpa_refcnt());
}

static void t_phase_run(struct __test_metadata *_metadata,
			enum t_phase phase)
{
	static struct t_worker w[T_WORKERS];
	struct t_counts sum = {};
	long t0 = t_now_ms();
	int i, s;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, system("modprobe mpa"));
	t_build();
	ASSERT_NE(NULL, t_fpdus);
	for (i = 0; i < T_WORKERS; i++) {
		memset(&w[i].c, 0, sizeof(w[i].c));
		w[i].id = i;
		w[i].phase = phase;
		w[i].rounds = (T_ROUNDS + T_WORKERS - 1) / T_WORKERS;
		w[i].seed = 1000 * phase + i;
		ASSERT_EQ(0, pthread_create(&w[i].thr, NULL, t_worker_run,
					    &w[i]));
	}
	for (i = 0; i < T_WORKERS; i++) {
		pthread_join(w[i].thr, NULL);
		sum.rounds += w[i].c.rounds;
		sum.flooded += w[i].c.flooded;
		sum.fails += w[i].c.fails;
		for (s = 0; s <= MPA_STATE_FAILED; s++)
			sum.by_state[s] += w[i].c.by_state[s];
		EXPECT_EQ(0, w[i].c.fails)
			TH_LOG("worker %d: %lu failures, the first: %s", i,
			       w[i].c.fails, w[i].c.why);
	}
	TH_LOG("%lu rounds in %ld ms, %lu MiB flooded; closed in AWAIT_REQUEST %lu, REQUEST_RECEIVED %lu, FULL %lu, FAILED %lu",
	       sum.rounds, t_now_ms() - t0, sum.flooded >> 20,
	       sum.by_state[MPA_STATE_AWAIT_REQUEST],
	       sum.by_state[MPA_STATE_REQUEST_RECEIVED],
	       sum.by_state[MPA_STATE_FULL],
	       sum.by_state[MPA_STATE_FAILED]);
	EXPECT_LE(T_ROUNDS, sum.rounds);
	t_unload(_metadata);
}

FIXTURE(teardown)
{
};

FIXTURE_VARIANT(teardown)
{
	enum t_phase phase;
};

FIXTURE_VARIANT_ADD(teardown, await_request)
{
	.phase = P_AWAIT_REQUEST,
};

FIXTURE_VARIANT_ADD(teardown, request_received)
{
	.phase = P_REQUEST_RECEIVED,
};

FIXTURE_VARIANT_ADD(teardown, full_copy)
{
	.phase = P_FULL_COPY,
};

FIXTURE_VARIANT_ADD(teardown, held)
{
	.phase = P_HELD,
};

FIXTURE_SETUP(teardown)
{
}

FIXTURE_TEARDOWN(teardown)
{
}

TEST_F_TIMEOUT(teardown, close_under_flood, 900)
{
	t_phase_run(_metadata, variant->phase);
}

TEST_HARNESS_MAIN
