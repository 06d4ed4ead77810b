// SPDX-License-Identifier: GPL-2.0
/*
 * The socket is MPA's alone (mpa.rst, "Attaching"): TCP_ULP "mpa" refuses
 * with EBUSY a socket that is in a sockmap or a sockhash (it has a psock,
 * and the sockmap's struct proto), or in TCP_REPAIR mode. The refused
 * socket is left as it was: no ULP, no module reference taken, it still
 * carries its plain stream and closes cleanly (a kernel splat in the
 * guest's log fails the run). MPA sockets attached before and after carry
 * ULPDUs as ever. Taken out of the map, or out of repair mode, the same
 * socket attaches and runs MPA. (sk_user_data, which userspace cannot
 * set, is covered by the KUnit suite mpa_ulp.)
 */
#include <sys/syscall.h>
#include "mpa_bpf.h"

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000

/* bpf(2) without libbpf */
static int map_delete(int map, __u32 key)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (__u64)(unsigned long)&key;
	return t_bpf(BPF_MAP_DELETE_ELEM, &a);
}

static void ulp_name(struct __test_metadata *_metadata, int fd, char *name,
		     socklen_t size)
{
	socklen_t len = size;

	memset(name, 0, size);
	ASSERT_EQ(0, getsockopt(fd, SOL_TCP, TCP_ULP, name, &len));
}

/* One ULPDU each way between an MPA pair in Full Operation. */
static void ulpdu_one_way(struct __test_metadata *_metadata, int from,
			  int to, const char *ulpdu, const char *what)
{
	size_t len = strlen(ulpdu);
	char buf[64];
	ssize_t n;
	int flags;

	ASSERT_EQ(len, send(from, ulpdu, len, MSG_NOSIGNAL)) TH_LOG("%s", what);
	ASSERT_EQ(POLLIN, t_poll(to, POLLIN, T_WAIT) & POLLIN) TH_LOG("%s", what);
	n = t_recv_flags(to, buf, sizeof(buf), MSG_DONTWAIT, &flags);
	EXPECT_EQ(len, n) TH_LOG("%s", what);
	EXPECT_BYTES(ulpdu, buf, len);
	EXPECT_TRUE(flags & MSG_EOR);
}

static void ulpdu_both_ways(struct __test_metadata *_metadata, int i, int r,
			    const char *what)
{
	/* The Initiator first: a Responder's sends wait for it (R-7.1.2-15) */
	ulpdu_one_way(_metadata, i, r, "ulpdu1", what);
	ulpdu_one_way(_metadata, r, i, "ulpdu2", what);
}

/* Plain stream octets both ways: the socket is plain TCP still. */
static void plain_both_ways(struct __test_metadata *_metadata, int a, int b)
{
	t_flow(_metadata, a, b, "plain", 5, T_WAIT);
	t_flow(_metadata, b, a, "back", 4, T_WAIT);
}

/*
 * @i and @r, attached already (and nothing else set), through the
 * startup phase into Full Operation.
 */
static void start_pair(struct __test_metadata *_metadata, int i, int r)
{
	ASSERT_EQ(0, mpa_set(i, MPA_ROLE, MPA_ROLE_INITIATOR));
	ASSERT_EQ(0, mpa_set(r, MPA_ROLE, MPA_ROLE_RESPONDER));
	t_start_nonblock(_metadata, i);
	ASSERT_START(r);
	ASSERT_EQ(0, mpa_answer(r, MPA_ACCEPT, NULL, 0));
	ASSERT_LE(0, t_wait_startup(i, T_WAIT));
	ASSERT_EQ(0, t_blocking(i));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(i));
	ASSERT_EQ(MPA_STATE_FULL, mpa_state(r));
}

/* Attaching @fd must fail with EBUSY and leave no trace. */
static void refused(struct __test_metadata *_metadata, int fd)
{
	long refs = t_mpa_refcnt();
	char name[16];

	ASSERT_LE(0, refs);
	EXPECT_EQ(-1, mpa_attach(fd));
	EXPECT_EQ(EBUSY, errno) TH_LOG("errno %d (%s)", errno, strerror(errno));
	ulp_name(_metadata, fd, name, sizeof(name));
	EXPECT_STREQ("", name);
	/* a refused init gives its module reference back at once */
	EXPECT_EQ(refs, t_mpa_refcnt());
	/* nothing to configure: SOL_MPA is not there */
	EXPECT_EQ(-1, mpa_set(fd, MPA_ROLE, MPA_ROLE_INITIATOR));
	EXPECT_EQ(ENOPROTOOPT, errno) TH_LOG("errno %d (%s)", errno,
					     strerror(errno));
}

FIXTURE(alone)
{
	int bi, br;	/* an MPA pair attached before */
	int ai, ar;	/* an MPA pair attached after */
	int a, b;	/* the plain TCP pair under test */
	int map;
};

FIXTURE_VARIANT(alone)
{
	int family;
};

FIXTURE_VARIANT_ADD(alone, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(alone, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(alone)
{
	self->ai = self->ar = self->map = -1;
	ASSERT_EQ(0, t_mpa_pair(variant->family, 0, false, true, true,
				&self->bi, &self->br));
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->a, &self->b));
}

FIXTURE_TEARDOWN(alone)
{
	int fds[] = { self->bi, self->br, self->ai, self->ar, self->a,
		      self->b, self->map };
	unsigned int k;

	for (k = 0; k < sizeof(fds) / sizeof(fds[0]); k++)
		if (fds[k] >= 0)
			close(fds[k]);
}

/*
 * The socket under test is in a map: refused; a pair attached after and
 * the one attached before both work; then the map and the socket close.
 */
static void in_map(struct __test_metadata *_metadata,
		   FIXTURE_DATA(alone) *self, int family, int type)
{
	self->map = map_create(type);
	ASSERT_LE(0, self->map) TH_LOG("BPF_MAP_CREATE %d: %s", type,
				       strerror(errno));
	ASSERT_EQ(0, map_update(self->map, 0, self->a))
		TH_LOG("map update: %s", strerror(errno));

	refused(_metadata, self->a);
	plain_both_ways(_metadata, self->a, self->b);

	ASSERT_EQ(0, t_mpa_pair(family, 0, true, false, true, &self->ai,
				&self->ar));
	ulpdu_both_ways(_metadata, self->bi, self->br, "attached before");
	ulpdu_both_ways(_metadata, self->ai, self->ar, "attached after");

	/* the map goes first, then the socket: both close cleanly */
	close(self->map);
	self->map = -1;
	close(self->a);
	self->a = -1;
	ulpdu_both_ways(_metadata, self->bi, self->br, "before, map closed");
	ulpdu_both_ways(_metadata, self->ai, self->ar, "after, map closed");
}

/* Out of the map again (psock gone, TCP's proto back): it attaches. */
static void out_of_map(struct __test_metadata *_metadata,
		       FIXTURE_DATA(alone) *self, int type)
{
	self->map = map_create(type);
	ASSERT_LE(0, self->map) TH_LOG("BPF_MAP_CREATE %d: %s", type,
				       strerror(errno));
	ASSERT_EQ(0, map_update(self->map, 0, self->a));
	refused(_metadata, self->a);
	ASSERT_EQ(0, map_delete(self->map, 0))
		TH_LOG("map delete: %s", strerror(errno));
	ASSERT_EQ(0, mpa_attach(self->a));
	ASSERT_EQ(0, mpa_attach(self->b));
	start_pair(_metadata, self->a, self->b);
	ulpdu_both_ways(_metadata, self->a, self->b, "out of the map");
	ulpdu_both_ways(_metadata, self->bi, self->br, "attached before");
}

TEST_F(alone, sockmap)
{
	in_map(_metadata, self, variant->family, BPF_MAP_TYPE_SOCKMAP);
}

TEST_F(alone, sockhash)
{
	in_map(_metadata, self, variant->family, BPF_MAP_TYPE_SOCKHASH);
}

TEST_F(alone, sockmap_deleted)
{
	out_of_map(_metadata, self, BPF_MAP_TYPE_SOCKMAP);
}

TEST_F(alone, sockhash_deleted)
{
	out_of_map(_metadata, self, BPF_MAP_TYPE_SOCKHASH);
}

/* TCP_REPAIR (root): refused while on; off again, the socket attaches. */
TEST_F(alone, tcp_repair)
{
	int on = 1, off = TCP_REPAIR_OFF;

	ASSERT_EQ(0, setsockopt(self->a, SOL_TCP, TCP_REPAIR, &on,
				sizeof(on))) TH_LOG("%s", strerror(errno));
	refused(_metadata, self->a);
	ASSERT_EQ(0, setsockopt(self->a, SOL_TCP, TCP_REPAIR, &off,
				sizeof(off)));
	ASSERT_EQ(0, mpa_attach(self->a));
	ASSERT_EQ(0, mpa_attach(self->b));
	start_pair(_metadata, self->a, self->b);
	ulpdu_both_ways(_metadata, self->a, self->b, "out of repair mode");
	ulpdu_both_ways(_metadata, self->bi, self->br, "attached before");
}

TEST_HARNESS_MAIN
