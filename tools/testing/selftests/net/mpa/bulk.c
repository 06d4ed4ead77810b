// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk transfer between two MPA sockets with Markers both ways and CRC:
 * at least 64 MiB of ULPDUs of random sizes (1..64768, seeded) each way
 * that is tested, from a sender process. Every ULPDU boundary and every
 * octet is checked against the seeded stream, and a CRC32c of everything
 * received against the sender's CRC32c of everything sent. The times go
 * to the log.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		30000
#define BULK_TOTAL	(64ull << 20)

/* What the sender reports through a pipe. */
struct bulk_report {
	uint64_t ulpdus, octets;
	uint32_t crc;		/* CRC32c state over everything sent */
	int err;		/* errno of a failed send, 0 */
};

/* The next ULPDU size of the seeded sequence. */
static size_t bulk_size(uint64_t *s)
{
	return 1 + t_rand64(s) % MPA_MAX_ULPDU;
}

/*
 * A sender process: ULPDUs of the @seed sequence on @fd until
 * BULK_TOTAL octets went out, then a FIN; the report through a pipe.
 */
struct bulk_tx {
	pid_t pid;
	int rd;			/* the report's end of the pipe */
	uint64_t seed;
};

static int bulk_spawn(struct bulk_tx *t, int fd, int other, uint64_t seed)
{
	struct bulk_report rep = { .crc = ~0u };
	uint64_t s = seed;
	uint8_t *buf;
	int p[2];
	size_t len;
	ssize_t r;

	t->seed = seed;
	if (pipe(p))
		return -1;
	t->pid = fork();
	if (t->pid < 0)
		return -1;
	if (t->pid) {
		close(p[1]);
		t->rd = p[0];
		return 0;
	}
	close(p[0]);
	close(other);
	buf = malloc(MPA_MAX_ULPDU);
	while (buf && rep.octets < BULK_TOTAL) {
		len = bulk_size(&s);
		t_fill(buf, len, seed + rep.ulpdus);
		r = send(fd, buf, len, MSG_NOSIGNAL);
		if (r != (ssize_t)len) {
			rep.err = r < 0 ? errno : EMSGSIZE;
			break;
		}
		rep.crc = t_crc32c_update(rep.crc, buf, len);
		rep.ulpdus++;
		rep.octets += len;
	}
	if (!buf)
		rep.err = ENOMEM;
	/* The last FPDUs go out, then the FIN (the receiver holds @fd too). */
	if (shutdown(fd, SHUT_WR) && !rep.err)
		rep.err = errno;
	if (write(p[1], &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(rep.err ? 1 : 0);
}

/* What a receiver found. */
struct bulk_rx {
	pthread_t thr;
	int fd;
	uint64_t seed;
	uint64_t ulpdus, octets;
	uint32_t crc;
	bool eof;
	char why[256];		/* the first problem, "" if none */
};

static void *bulk_receive(void *arg)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(MPA_MAX_ULPDU);
	struct bulk_rx *b = arg;
	uint64_t s = b->seed;
	size_t len;
	ssize_t r;
	int fl;

	b->crc = ~0u;
	if (!got || !exp) {
		snprintf(b->why, sizeof(b->why), "no memory");
		goto out;
	}
	while (b->octets < BULK_TOTAL) {
		len = bulk_size(&s);
		r = t_recv_flags(b->fd, got, T_ULPDU_BUF, 0, &fl);
		if (r != (ssize_t)len || !(fl & MSG_EOR)) {
			snprintf(b->why, sizeof(b->why),
				 "ULPDU %llu at octet %llu: recv %zd (errno %d), flags 0x%x; want %zu with MSG_EOR",
				 (unsigned long long)b->ulpdus,
				 (unsigned long long)b->octets, r,
				 r < 0 ? errno : 0, fl, len);
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
			 "after the last ULPDU: recv %zd (errno %d), not EOF",
			 r, r < 0 ? errno : 0);
out:
	free(got);
	free(exp);
	return NULL;
}

/* The sender's report and exit against what @b received. */
static void bulk_check(struct __test_metadata *_metadata, struct bulk_tx *t,
		       struct bulk_rx *b, const char *what, long ms)
{
	struct bulk_report rep = {};
	struct mpa_stats st;
	int status;

	EXPECT_STREQ("", b->why) TH_LOG("%s", what);
	EXPECT_EQ(sizeof(rep), read(t->rd, &rep, sizeof(rep)));
	close(t->rd);
	ASSERT_EQ(t->pid, waitpid(t->pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("%s sender: status 0x%x, errno %d", what, status,
		       rep.err);
	EXPECT_EQ(rep.ulpdus, b->ulpdus);
	EXPECT_EQ(rep.octets, b->octets);
	EXPECT_EQ(rep.crc, b->crc);
	EXPECT_LE(BULK_TOTAL, b->octets);
	EXPECT_TRUE(b->eof);

	ASSERT_EQ(0, mpa_getstruct(b->fd, MPA_STATS, &st, sizeof(st)));
	EXPECT_EQ(b->ulpdus, st.rx_fpdus);
	EXPECT_EQ(b->octets, st.rx_octets);
	EXPECT_LT(b->octets / 512, st.rx_markers);
	EXPECT_EQ(0, st.crc_errors + st.marker_errors);
	ksft_print_msg("bulk %s: %llu octets in %llu ULPDUs, CRC32c %08x, %ld.%03ld s, %.1f MiB/s\n",
		       what, (unsigned long long)b->octets,
		       (unsigned long long)b->ulpdus, ~b->crc, ms / 1000,
		       ms % 1000,
		       ms ? b->octets / 1048576.0 / (ms / 1000.0) : 0.0);
}

FIXTURE(bulk)
{
	int i, r;
};

FIXTURE_SETUP(bulk)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, t_mpa_pair(AF_INET, 0, true, true, true, &self->i,
				&self->r));
	ASSERT_EQ(0, t_set_timeo(self->i, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(self->r, SO_SNDTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(self->i, SO_RCVTIMEO, T_WAIT));
	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, T_WAIT));
}

FIXTURE_TEARDOWN(bulk)
{
	close(self->i);
	close(self->r);
}

/* 64 MiB from the Initiator to the Responder. */
TEST_F_TIMEOUT(bulk, initiator_to_responder_64mib, 1200)
{
	struct bulk_rx b = { .fd = self->r };
	struct bulk_tx t;
	long t0 = t_now_ms();

	ASSERT_EQ(0, bulk_spawn(&t, self->i, self->r, 0x6d7061b01cull));
	b.seed = t.seed;
	bulk_receive(&b);
	bulk_check(_metadata, &t, &b, "Initiator to Responder",
		   t_now_ms() - t0);
}

/*
 * 64 MiB each way at once: two sender processes, a receiver thread per
 * socket (the Responder's first sends wait for the Initiator's FPDU).
 */
TEST_F_TIMEOUT(bulk, both_ways_64mib_each, 1200)
{
	struct bulk_rx ri = { .fd = self->i }, rr = { .fd = self->r };
	struct bulk_tx ti, tr;
	long t0 = t_now_ms();

	ASSERT_EQ(0, bulk_spawn(&tr, self->r, -1, 0x72657370ull));
	ASSERT_EQ(0, bulk_spawn(&ti, self->i, -1, 0x696e6974ull));
	ri.seed = tr.seed;
	rr.seed = ti.seed;
	ASSERT_EQ(0, pthread_create(&ri.thr, NULL, bulk_receive, &ri));
	bulk_receive(&rr);
	pthread_join(ri.thr, NULL);
	bulk_check(_metadata, &ti, &rr, "both ways, Initiator to Responder",
		   t_now_ms() - t0);
	bulk_check(_metadata, &tr, &ri, "both ways, Responder to Initiator",
		   t_now_ms() - t0);
}

TEST_HARNESS_MAIN
