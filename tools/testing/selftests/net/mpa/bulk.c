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

/*
 * A sender process: the stream @seed (mpa_test.h) on @fd until BULK_TOTAL
 * octets went out, then a FIN; its struct t_stream through a pipe.
 */
struct bulk_tx {
	pid_t pid;
	int rd;			/* the report's end of the pipe */
	uint64_t seed;
};

static int bulk_spawn(struct bulk_tx *t, int fd, int other, uint64_t seed)
{
	struct t_stream rep = { .fd = fd, .seed = seed, .total = BULK_TOTAL };
	int p[2];

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
	/* The last FPDUs go out, then the FIN (the receiver holds @fd too). */
	t_stream_tx(&rep);
	if (write(p[1], &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(rep.err ? 1 : 0);
}

/* The sender's report and exit against what @b received. */
static void bulk_check(struct __test_metadata *_metadata, struct bulk_tx *t,
		       struct t_stream *b, const char *what, long ms)
{
	struct t_stream rep = {};
	int status;

	EXPECT_EQ(sizeof(rep), read(t->rd, &rep, sizeof(rep)));
	close(t->rd);
	ASSERT_EQ(t->pid, waitpid(t->pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("%s sender: status 0x%x, errno %d", what, status,
		       rep.err);
	t_stream_check(_metadata, what, &rep, b, true);
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
	struct t_stream b = { .fd = self->r, .total = BULK_TOTAL };
	struct bulk_tx t;
	long t0 = t_now_ms();

	ASSERT_EQ(0, bulk_spawn(&t, self->i, self->r, 0x6d7061b01cull));
	b.seed = t.seed;
	t_stream_rx(&b);
	bulk_check(_metadata, &t, &b, "Initiator to Responder",
		   t_now_ms() - t0);
}

/*
 * 64 MiB each way at once: two sender processes, a receiver thread per
 * socket (the Responder's first sends wait for the Initiator's FPDU).
 */
TEST_F_TIMEOUT(bulk, both_ways_64mib_each, 1200)
{
	struct t_stream ri = { .fd = self->i, .total = BULK_TOTAL };
	struct t_stream rr = { .fd = self->r, .total = BULK_TOTAL };
	struct bulk_tx ti, tr;
	long t0 = t_now_ms();

	ASSERT_EQ(0, bulk_spawn(&tr, self->r, -1, 0x72657370ull));
	ASSERT_EQ(0, bulk_spawn(&ti, self->i, -1, 0x696e6974ull));
	ri.seed = tr.seed;
	rr.seed = ti.seed;
	ASSERT_EQ(0, pthread_create(&ri.thr, NULL, t_stream_rx, &ri));
	t_stream_rx(&rr);
	pthread_join(ri.thr, NULL);
	bulk_check(_metadata, &ti, &rr, "both ways, Initiator to Responder",
		   t_now_ms() - t0);
	bulk_check(_metadata, &tr, &ri, "both ways, Responder to Initiator",
		   t_now_ms() - t0);
}

TEST_HARNESS_MAIN
