// SPDX-License-Identifier: GPL-2.0
/*
 * Bulk transfer between two MPA sockets with Markers both ways and CRC:
 * at least 64 MiB of ULPDUs of random sizes (1..64768, seeded), a sender
 * process and a receiver. Every ULPDU boundary and every octet is checked
 * against the seeded stream, and a CRC32c of everything received against
 * the sender's CRC32c of everything sent. The time goes to the log.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		30000
#define BULK_TOTAL	(64ull << 20)
#define BULK_SEED	0x6d7061b01cull

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

/* Send ULPDUs until @total octets went out; the report to @wr. */
static void bulk_send(int fd, uint64_t total, int wr)
{
	struct bulk_report rep = { .crc = ~0u };
	uint8_t *buf = malloc(MPA_MAX_ULPDU);
	uint64_t s = BULK_SEED;
	size_t len;
	ssize_t r;

	while (buf && rep.octets < total) {
		len = bulk_size(&s);
		t_fill(buf, len, BULK_SEED + rep.ulpdus);
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
	/* close() sends the last FPDUs, then the FIN. */
	close(fd);
	if (write(wr, &rep, sizeof(rep)) != sizeof(rep))
		_exit(2);
	_exit(rep.err ? 1 : 0);
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
	ASSERT_EQ(0, t_set_timeo(self->r, SO_RCVTIMEO, T_WAIT));
}

FIXTURE_TEARDOWN(bulk)
{
	close(self->i);
	close(self->r);
}

/*
 * @tx sends, @rx receives: each recv() one whole ULPDU with MSG_EOR, of
 * the seeded size and content, then end of file.
 */
static void bulk(struct __test_metadata *_metadata, int tx, int rx,
		 const char *what)
{
	uint8_t *got = malloc(T_ULPDU_BUF), *exp = malloc(MPA_MAX_ULPDU);
	uint64_t s = BULK_SEED, ulpdus = 0, octets = 0;
	struct bulk_report rep = {};
	struct mpa_stats st;
	uint32_t crc = ~0u;
	int p[2], status, fl;
	long t0, ms;
	size_t len;
	ssize_t r;
	pid_t pid;

	ASSERT_NE(NULL, got);
	ASSERT_NE(NULL, exp);
	ASSERT_EQ(0, pipe(p));
	t0 = t_now_ms();
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(rx);
		close(p[0]);
		bulk_send(tx, BULK_TOTAL, p[1]);
	}
	close(p[1]);
	close(tx);

	while (octets < BULK_TOTAL) {
		len = bulk_size(&s);
		r = t_recv_flags(rx, got, T_ULPDU_BUF, 0, &fl);
		if (r != (ssize_t)len) {
			EXPECT_EQ((ssize_t)len, r)
				TH_LOG("ULPDU %llu at octet %llu: errno %d",
				       (unsigned long long)ulpdus,
				       (unsigned long long)octets,
				       r < 0 ? errno : 0);
			break;
		}
		if (!(fl & MSG_EOR)) {
			EXPECT_EQ(MSG_EOR, fl & MSG_EOR)
				TH_LOG("ULPDU %llu", (unsigned long long)ulpdus);
			break;
		}
		t_fill(exp, len, BULK_SEED + ulpdus);
		if (memcmp(exp, got, len)) {
			TH_LOG("ULPDU %llu (%zu octets) differs",
			       (unsigned long long)ulpdus, len);
			EXPECT_BYTES(exp, got, len);
			break;
		}
		crc = t_crc32c_update(crc, got, len);
		ulpdus++;
		octets += len;
	}
	if (!_metadata->exit_code)
		EXPECT_EQ(0, recv(rx, got, T_ULPDU_BUF, 0));
	ms = t_now_ms() - t0;

	EXPECT_EQ(sizeof(rep), read(p[0], &rep, sizeof(rep)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("sender: status 0x%x, errno %d", status, rep.err);
	EXPECT_EQ(rep.ulpdus, ulpdus);
	EXPECT_EQ(rep.octets, octets);
	EXPECT_EQ(rep.crc, crc);
	EXPECT_LE(BULK_TOTAL, octets);

	ASSERT_EQ(0, mpa_getstruct(rx, MPA_STATS, &st, sizeof(st)));
	EXPECT_EQ(ulpdus, st.rx_fpdus);
	EXPECT_EQ(octets, st.rx_octets);
	EXPECT_LT(octets / 512, st.rx_markers);
	EXPECT_EQ(0, st.crc_errors + st.marker_errors);

	ksft_print_msg("bulk %s: %llu octets in %llu ULPDUs, CRC32c %08x, %ld.%03ld s, %.1f MiB/s\n",
		       what, (unsigned long long)octets,
		       (unsigned long long)ulpdus, ~crc, ms / 1000, ms % 1000,
		       ms ? octets / 1048576.0 / (ms / 1000.0) : 0.0);
	free(got);
	free(exp);
}

/* 64 MiB, Initiator to Responder. */
TEST_F_TIMEOUT(bulk, initiator_to_responder_64mib, 1200)
{
	bulk(_metadata, self->i, self->r, "Initiator to Responder");
	self->i = -1;
}

TEST_HARNESS_MAIN
