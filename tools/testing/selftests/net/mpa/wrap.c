// SPDX-License-Identifier: GPL-2.0
/*
 * The 32-bit wrap of the stream position in the module's own data path
 * (R-4.3-6): more than 4 GiB of ULPDUs from the Initiator to the Responder
 * through one MPA connection, Markers both ways and CRC, so that the
 * Initiator's transmit position (tx.c) and the Responder's receive machine
 * (rx.c) pass 2^32 and go on, with Markers every 512 octets across the
 * wrap. Every ULPDU is checked: its length against the seeded sequence,
 * MSG_EOR, its content octet for octet; then their count against the
 * sender's, and the module's statistics (FPDUs, octets, Markers, no CRC
 * or Marker error) on both ends. And pack.past_2gib: small FPDUs still
 * share segments once the stream is 2 GiB on (the sender's sequence
 * number comparisons are modulo 2^31).
 *
 * The ULPDUs are the first 1..64768 octets of one of 64 seeded random
 * buffers: the sender generates nothing and the receiver compares with
 * memcmp(), which under TCG runs several times faster than a CRC32c of
 * the content would (the CRC32c instruction included, which QEMU emulates
 * bit by bit), so the time goes to the module. Stock lane only: the debug
 * lane's kernel (KASAN) would take hours; guest-suite.sh and check.sh
 * leave this program out there. The duration goes to the log.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define WRAP_TOTAL	((1ull << 32) + (64ull << 20))	/* past 2^32 */
#define WRAP_POOL	64
#define T_WAIT		30000

static uint8_t *pool[WRAP_POOL];

static int pool_init(void)
{
	int k;

	for (k = 0; k < WRAP_POOL; k++) {
		pool[k] = malloc(MPA_MAX_ULPDU);
		if (!pool[k])
			return -1;
		t_fill(pool[k], MPA_MAX_ULPDU, 0x77726170ull + k);
	}
	return 0;
}

/* The size of the next ULPDU of the seeded sequence */
static size_t wrap_size(uint64_t *s)
{
	return 1 + t_rand64(s) % MPA_MAX_ULPDU;
}

/* What the sender reports through a pipe */
struct wrap_report {
	uint64_t ulpdus, octets;
	struct mpa_stats st;	/* the sending socket's, at the end */
	int err;
};

/* The sender process: ULPDUs until WRAP_TOTAL octets went, then a FIN. */
static void wrap_send(int fd, int wr, uint64_t seed)
{
	struct wrap_report rep = {};
	uint64_t s = seed;
	size_t len;
	ssize_t r;

	while (rep.octets < WRAP_TOTAL) {
		len = wrap_size(&s);
		r = send(fd, pool[rep.ulpdus % WRAP_POOL], len, MSG_NOSIGNAL);
		if (r != (ssize_t)len) {
			rep.err = r < 0 ? errno : EMSGSIZE;
			break;
		}
		rep.ulpdus++;
		rep.octets += len;
	}
	/* the last FPDUs go out, then the FIN */
	if (shutdown(fd, SHUT_WR) && !rep.err)
		rep.err = errno;
	if (mpa_getstruct(fd, MPA_STATS, &rep.st, sizeof(rep.st)) && !rep.err)
		rep.err = errno;
	if (write(wr, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(rep.err ? 1 : 0);
}

FIXTURE(wrap)
{
	int i, r;
};

FIXTURE_SETUP(wrap)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, pool_init());
	ASSERT_EQ(0, t_mpa_pair(AF_INET, 0, true, true, true, &self->i,
				&self->r));
	ASSERT_EQ(0, t_set_timeo(self->i, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, T_WAIT));
}

FIXTURE_TEARDOWN(wrap)
{
	close(self->i);
	close(self->r);
}

/* More than 4 GiB from the Initiator to the Responder, Markers, CRC */
TEST_F_TIMEOUT(wrap, initiator_to_responder_past_4gib, 3600)
{
	uint64_t seed = 0x7772617032ull, s = seed, ulpdus = 0, octets = 0;
	struct wrap_report rep = {};
	uint8_t *got = malloc(T_ULPDU_BUF);
	struct mpa_stats st;
	long t0 = t_now_ms(), ms;
	int p[2], status, fl;
	size_t len;
	ssize_t r;
	pid_t pid;

	ASSERT_NE(NULL, got);
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(p[0]);
		close(self->r);
		wrap_send(self->i, p[1], seed);
	}
	close(p[1]);

	/* every ULPDU: its length, MSG_EOR, its content */
	while (octets < WRAP_TOTAL) {
		len = wrap_size(&s);
		r = t_recv_flags(self->r, got, T_ULPDU_BUF, 0, &fl);
		ASSERT_EQ((ssize_t)len, r)
			TH_LOG("ULPDU %llu at octet %llu: errno %d",
			       (unsigned long long)ulpdus,
			       (unsigned long long)octets, r < 0 ? errno : 0);
		ASSERT_EQ(MSG_EOR, fl & MSG_EOR);
		ASSERT_EQ(0, memcmp(pool[ulpdus % WRAP_POOL], got, len))
			TH_LOG("ULPDU %llu (%zu octets at octet %llu) differs",
			       (unsigned long long)ulpdus, len,
			       (unsigned long long)octets);
		ulpdus++;
		octets += len;
	}
	EXPECT_EQ(0, recv(self->r, got, T_ULPDU_BUF, 0));
	ms = t_now_ms() - t0;

	ASSERT_EQ(sizeof(rep), read(p[0], &rep, sizeof(rep)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("sender: status 0x%x, errno %d", status, rep.err);
	EXPECT_EQ(rep.ulpdus, ulpdus);
	EXPECT_EQ(rep.octets, octets);

	/* both ends counted the same FPDUs, Markers and octets */
	ASSERT_EQ(0, mpa_getstruct(self->r, MPA_STATS, &st, sizeof(st)));
	EXPECT_EQ(ulpdus, st.rx_fpdus);
	EXPECT_EQ(octets, st.rx_octets);
	EXPECT_EQ(rep.st.tx_fpdus, st.rx_fpdus);
	EXPECT_EQ(rep.st.tx_octets, st.rx_octets);
	EXPECT_EQ(rep.st.tx_markers, st.rx_markers);
	EXPECT_LT(octets / 512, st.rx_markers);
	EXPECT_EQ(0, st.crc_errors + st.marker_errors);
	/* the stream positions went past 2^32 (ULPDU octets alone do) */
	EXPECT_LT(1ull << 32, octets);
	ksft_print_msg("wrap: %llu octets in %llu ULPDUs, %llu Markers, %ld.%03ld s, %.1f MiB/s\n",
		       (unsigned long long)octets,
		       (unsigned long long)ulpdus,
		       (unsigned long long)st.rx_markers, ms / 1000, ms % 1000,
		       ms ? octets / 1048576.0 / (ms / 1000.0) : 0.0);
	free(got);
}

/*
 * Small FPDUs still share segments 2 GiB into the stream. The sender ends
 * a tail of TCP's write queue that holds octets sent before Full
 * Operation (mpa_tx_align()): it used to tell one by its TCP sequence
 * number with before(), modulo 2^31, so from 2 GiB of FPDUs on (for 2 GiB
 * of every 4 GiB) every tail looked like one, and each FPDU went in a
 * segment of its own. Measured with TCP_CORK, as segments.packed_when_corked
 * does (wire.c), at the start and past 2 GiB: TCP's data segments for
 * PACK_N small ULPDUs. CRC off (the administrator's crc-off-allowed, set
 * for the startup), and the receiver takes the bulk without copying
 * (MSG_TRUNC), so the time goes to moving the stream.
 */
#define PACK_BULK	((2ull << 30) + (256ull << 20))
#define PACK_N		200

struct drain {
	pthread_t thr;
	int fd;
	uint64_t n, got;
	int err;
};

static void *drain_run(void *arg)
{
	struct drain *d = arg;
	uint8_t *b = malloc(T_ULPDU_BUF);
	ssize_t r;

	for (; b && d->got < d->n; d->got++) {
		/* as on TCP, nothing is copied to @b */
		r = recv(d->fd, b, T_ULPDU_BUF, MSG_TRUNC);
		if (r != MPA_MAX_ULPDU) {
			d->err = r < 0 ? errno : EBADMSG;
			break;
		}
	}
	free(b);
	return NULL;
}

/* TCP's data segments out of @i so far, or -1 */
static long data_segs_out(int i)
{
	struct t_tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(i, SOL_TCP, TCP_INFO, &ti, &len) || len < sizeof(ti))
		return -1;
	return ti.data_segs_out;
}

/* The data segments that carry PACK_N small ULPDUs sent while corked */
static long corked_segs(struct __test_metadata *_metadata, int i, int r)
{
	uint8_t u[100], got[128];
	int one = 1, zero = 0, k;
	long segs0, segs;

	t_fill(u, sizeof(u), 7);
	segs0 = data_segs_out(i);
	EXPECT_LE(0, segs0);
	EXPECT_EQ(0, setsockopt(i, SOL_TCP, TCP_CORK, &one, sizeof(one)));
	for (k = 0; k < PACK_N; k++)
		EXPECT_EQ(1 + k % 100, send(i, u, 1 + k % 100, MSG_NOSIGNAL));
	EXPECT_EQ(0, setsockopt(i, SOL_TCP, TCP_CORK, &zero, sizeof(zero)));
	for (k = 0; k < PACK_N; k++) {
		EXPECT_EQ(1 + k % 100, recv(r, got, sizeof(got), 0));
		EXPECT_EQ(0, memcmp(u, got, 1 + k % 100));
	}
	EXPECT_EQ(0, t_wait_acked(i, T_WAIT));
	segs = data_segs_out(i);
	return segs < 0 || segs0 < 0 ? -1 : segs - segs0;
}

FIXTURE(pack)
{
};

FIXTURE_SETUP(pack)
{
}

FIXTURE_TEARDOWN(pack)
{
}

/* 13 s on the stock lane; a guest many times slower still finishes */
TEST_F_TIMEOUT(pack, past_2gib, 900)
{
	struct drain d = { .n = PACK_BULK / MPA_MAX_ULPDU };
	struct mpa_t_policy saved;
	long t0 = t_now_ms(), ms, first, past;
	uint64_t k;
	int i, r, rc;

	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, pool_init());
	ASSERT_EQ(0, mpa_policy_get(&saved));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	rc = t_mpa_pair(AF_INET, 0, false, false, false, &i, &r);
	mpa_policy_set(&saved);
	ASSERT_EQ(0, rc);
	ASSERT_EQ(0, t_set_timeo(i, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(r, SO_RCVTIMEO, T_WAIT));

	first = corked_segs(_metadata, i, r);
	EXPECT_LT(0, first);
	EXPECT_GT(PACK_N / 4, first)
		TH_LOG("at the start: %ld segments for %d FPDUs", first, PACK_N);

	d.fd = r;
	ASSERT_EQ(0, pthread_create(&d.thr, NULL, drain_run, &d));
	for (k = 0; k < d.n; k++)
		if (send(i, pool[k % WRAP_POOL], MPA_MAX_ULPDU, MSG_NOSIGNAL) !=
		    MPA_MAX_ULPDU)
			break;
	EXPECT_EQ(d.n, k) TH_LOG("send %llu: %s", (unsigned long long)k,
				 strerror(errno));
	pthread_join(d.thr, NULL);
	ASSERT_EQ(d.n, d.got) TH_LOG("recv %llu: %s",
				     (unsigned long long)d.got,
				     strerror(d.err));

	past = corked_segs(_metadata, i, r);
	EXPECT_LT(0, past);
	EXPECT_GT(PACK_N / 4, past)
		TH_LOG("past 2 GiB: %ld segments for %d FPDUs", past, PACK_N);
	ms = t_now_ms() - t0;
	ksft_print_msg("packed: %d FPDUs in %ld segments, %ld past %llu MiB; %ld.%03ld s\n",
		       PACK_N, first, past,
		       (unsigned long long)(d.n * MPA_MAX_ULPDU >> 20),
		       ms / 1000, ms % 1000);
	close(i);
	close(r);
}

TEST_HARNESS_MAIN
