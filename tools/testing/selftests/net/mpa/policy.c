// SPDX-License-Identifier: GPL-2.0
/*
 * The network namespace's MPA policy, through the "mpa" generic netlink
 * family (Documentation/netlink/specs/mpa.yaml): what POLICY_GET and
 * POLICY_SET answer, who may set it, which values are refused, and the
 * real effect of each item on the sockets attached after it changed, down
 * to the Request and Reply bytes a raw TCP peer reads; sockets attached
 * before a change keep what they had. Every test that changes the policy
 * of the namespace it runs in puts back what it found (in the parent's
 * teardown, whatever the test did); the namespace tests change only
 * namespaces of their own.
 */
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_TIMEOUT	8000	/* MPA_TIMEOUT where no timeout is expected */
#define T_SHORT		300	/* the policy's timeout where it is the point */
#define T_WAIT		10000	/* how long a test waits for an event */

#define T_REVS_ALL	(MPA_REVS_REV1 | MPA_REVS_REV2)

/* The policy of a new namespace (mpa.yaml, netns.c). */
static const struct mpa_t_policy t_new_netns = {
	.has = MPA_T_HAS_ALL,
	.crc_off_allowed = 0,
	.markers = 0,
	.initiator_rev = 1,
	.responder_revs = T_REVS_ALL,
	.permissive = 0,
	.timeout_ms = 10000,
};

#define EXPECT_POLICY_EQ(exp, got) do {					\
	const struct mpa_t_policy *__e = (exp), *__g = (got);		\
	EXPECT_EQ(__e->has, __g->has);					\
	EXPECT_EQ(__e->crc_off_allowed, __g->crc_off_allowed);		\
	EXPECT_EQ(__e->markers, __g->markers);				\
	EXPECT_EQ(__e->initiator_rev, __g->initiator_rev);		\
	EXPECT_EQ(__e->responder_revs, __g->responder_revs);		\
	EXPECT_EQ(__e->permissive, __g->permissive);			\
	EXPECT_EQ(__e->timeout_ms, __g->timeout_ms);			\
} while (0)

/* The policy now equals @exp. */
#define EXPECT_POLICY_IS(exp) do {					\
	struct mpa_t_policy __now;					\
	ASSERT_EQ(0, mpa_policy_get(&__now));				\
	EXPECT_POLICY_EQ(exp, &__now);					\
} while (0)

/* Set the whole of @p: the rest of the test knows every item. */
#define ASSERT_POLICY_SET(p) ASSERT_EQ(0, mpa_policy_set(p))

FIXTURE(policy)
{
	struct mpa_t_policy saved;
};

FIXTURE_SETUP(policy)
{
	signal(SIGPIPE, SIG_IGN);
	ASSERT_EQ(0, mpa_policy_get(&self->saved));
}

/* The sockets were the child's; the policy is the namespace's. */
FIXTURE_TEARDOWN_PARENT(policy)
{
	EXPECT_EQ(0, mpa_policy_set(&self->saved));
}

/*
 * A new Initiator under the namespace's policy, nothing set on its socket
 * but the role: the first @len octets it sends, into @got, and nothing
 * after them. @opts: when not NULL, its MPA_MARKERS, MPA_REVISION,
 * MPA_PERMISSIVE and MPA_TIMEOUT before the start.
 */
static void t_request(struct __test_metadata *_metadata, uint8_t *got,
		      size_t len, long *opts)
{
	int m, raw;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &m, &raw));
	ASSERT_EQ(0, mpa_config(m, MPA_ROLE_INITIATOR, 0));
	if (opts) {
		opts[0] = mpa_get(m, MPA_MARKERS);
		opts[1] = mpa_get(m, MPA_REVISION);
		opts[2] = mpa_get(m, MPA_PERMISSIVE);
		opts[3] = mpa_get(m, MPA_TIMEOUT);
	}
	t_start_nonblock(_metadata, m);
	ASSERT_EQ(len, t_read(raw, got, len, T_WAIT));
	EXPECT_TRUE(t_quiet(raw, m));
	mpa_close_abort(m);
	close(raw);
}

/*
 * The Request a new Initiator sends is exactly @exp (@len octets); @opts
 * as for t_request().
 */
static void t_expect_request(struct __test_metadata *_metadata,
			     const uint8_t *exp, size_t len, long *opts)
{
	uint8_t got[T_FRAME_MAX];

	t_request(_metadata, got, len, opts);
	EXPECT_BYTES(exp, got, len);
}

/* A new Initiator (MPA_TIMEOUT T_TIMEOUT) and its raw peer. */
static void t_initiator(struct __test_metadata *_metadata, int family,
			int *m, int *raw)
{
	ASSERT_EQ(0, mpa_tcp_pair(family, m, raw));
	ASSERT_EQ(0, mpa_config(*m, MPA_ROLE_INITIATOR, T_TIMEOUT));
}

/* MPA_CRC=0 needs the permission @m does not have: CRCs stay on. */
static void t_crc_off_refused(struct __test_metadata *_metadata, int m)
{
	EXPECT_EQ(-1, mpa_set(m, MPA_CRC, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(1, mpa_get(m, MPA_CRC));
}

/*
 * The Initiator @m, configured, starts: its Request to @raw is exactly a
 * Rev 1 header with @flags.
 */
static void t_sends_request(struct __test_metadata *_metadata, int m, int raw,
			    uint8_t flags)
{
	uint8_t exp[T_HDR];

	t_start_nonblock(_metadata, m);
	t_frame(exp, false, flags, 1, NULL, 0);
	t_expect_read(_metadata, raw, exp, T_HDR, T_WAIT);
}

/* A Responder (role only set: the rest from the policy), its raw peer. */
static void t_responder(struct __test_metadata *_metadata, int *m, int *raw)
{
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, raw, m));
	ASSERT_EQ(0, mpa_config(*m, MPA_ROLE_RESPONDER, 0));
}

/*
 * R-7.1.1-16: the Responder @m cannot work with the Rev of the Request
 * @req (@len octets) its raw Initiator @raw sends: it closes the
 * connection (a FIN, no Reply before it) and reports the error locally
 * (code 4, MPA_REASON_BAD_REV); nothing is delivered.
 */
static void t_refused(struct __test_metadata *_metadata, int m, int raw,
		      const uint8_t *req, size_t len)
{
	char c;

	ASSERT_EQ(len, t_send(raw, req, len));
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_BAD_REV, EPROTO);
	EXPECT_EQ(0, t_wait_eof(raw, T_WAIT));
	EXPECT_GE(0, recv(m, &c, 1, MSG_DONTWAIT));
}

/*
 * The Responder @m takes the Request @req (@len octets) and, accepting,
 * answers with exactly @rep (@rep_len octets); Full Operation in Rev @rev.
 */
static void t_accepted(struct __test_metadata *_metadata, int m, int raw,
		       const uint8_t *req, size_t len, const uint8_t *rep,
		       size_t rep_len, int rev)
{
	struct mpa_frame_info fi;
	struct mpa_result res;

	ASSERT_EQ(len, t_send(raw, req, len));
	ASSERT_START(m);
	ASSERT_EQ(0, mpa_getstruct(m, MPA_PEER_FRAME, &fi, sizeof(fi)));
	EXPECT_EQ(rev, fi.revision);
	ASSERT_EQ(0, mpa_answer(m, MPA_ACCEPT, NULL, 0));
	t_expect_read(_metadata, raw, rep, rep_len, T_WAIT);
	EXPECT_MPA_STATE(m, MPA_STATE_FULL);
	ASSERT_EQ(0, mpa_getstruct(m, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(rev, res.revision);
}

/* Rev 1 and Rev 2 (enhanced, IRD/ORD 16, no peer-to-peer) frames, C=1. */
static size_t t_rev_frame(uint8_t *b, bool reply, int rev)
{
	if (rev == 2)
		return t_frame_v2(b, reply, T_C, false, 0, 16, 16, NULL, 0);
	return t_frame(b, reply, T_C, rev, NULL, 0);
}

/*
 * A Rev outside responder-revs is refused on the Request's header alone,
 * whether or not the Private Data it announces comes: the startup waited
 * for it (for ever without a timeout; here until the timeout, ETIMEDOUT).
 */
TEST_F(policy, revs_refuse_header_alone)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t req[T_HDR];
	int rev, m, raw;

	for (rev = 1; rev <= 2; rev++) {
		p.responder_revs = rev == 1 ? MPA_REVS_REV2 : MPA_REVS_REV1;
		ASSERT_POLICY_SET(&p);
		t_responder(_metadata, &m, &raw);
		ASSERT_EQ(0, mpa_set(m, MPA_TIMEOUT, T_TIMEOUT));
		t_hdr(req, false, T_C | (rev == 2 ? T_E : 0), rev, 100);
		t_refused(_metadata, m, raw, req, sizeof(req));
		close(m);
		close(raw);
	}
}

/* POLICY_GET: every attribute, each in its range; GET changes nothing. */
TEST_F(policy, get_is_complete)
{
	struct mpa_t_policy p;

	ASSERT_EQ(0, mpa_policy_get(&p));
	EXPECT_EQ(MPA_T_HAS_ALL, p.has);
	EXPECT_GE(1, p.crc_off_allowed);
	EXPECT_GE(1, p.markers);
	EXPECT_TRUE(p.initiator_rev == 1 || p.initiator_rev == 2);
	EXPECT_NE(0, p.responder_revs);
	EXPECT_EQ(0, p.responder_revs & ~T_REVS_ALL);
	EXPECT_GE(1, p.permissive);
	EXPECT_LE(1, p.timeout_ms);
	EXPECT_GE(3600000, p.timeout_ms);
	EXPECT_POLICY_IS(&self->saved);
}

/*
 * POLICY_SET changes only the attributes it carries and replies with the
 * whole policy, as POLICY_GET reads it afterwards.
 */
TEST_F(policy, set_changes_only_given)
{
	struct mpa_t_policy exp = t_new_netns, req = {}, rep;

	ASSERT_POLICY_SET(&exp);
	req.has = MPA_T_HAS(MPA_A_POLICY_MARKERS);
	req.markers = 1;
	ASSERT_EQ(0, mpa_policy_xfer(MPA_CMD_POLICY_SET, &req, &rep));
	exp.markers = 1;
	EXPECT_POLICY_EQ(&exp, &rep);
	EXPECT_POLICY_IS(&exp);

	req.has = MPA_T_HAS(MPA_A_POLICY_TIMEOUT_MS) |
		  MPA_T_HAS(MPA_A_POLICY_RESPONDER_REVS);
	req.timeout_ms = 4321;
	req.responder_revs = MPA_REVS_REV2;
	ASSERT_EQ(0, mpa_policy_xfer(MPA_CMD_POLICY_SET, &req, &rep));
	exp.timeout_ms = 4321;
	exp.responder_revs = MPA_REVS_REV2;
	EXPECT_POLICY_EQ(&exp, &rep);
	EXPECT_POLICY_IS(&exp);

	/* Nothing to change: the policy as it is. */
	req.has = 0;
	ASSERT_EQ(0, mpa_policy_xfer(MPA_CMD_POLICY_SET, &req, &rep));
	EXPECT_POLICY_EQ(&exp, &rep);
	EXPECT_POLICY_IS(&exp);
}

/* The bounds themselves are valid. */
TEST_F(policy, set_bounds)
{
	struct mpa_t_policy exp = t_new_netns;

	ASSERT_POLICY_SET(&exp);
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_TIMEOUT_MS, 1));
	exp.timeout_ms = 1;
	EXPECT_POLICY_IS(&exp);
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_TIMEOUT_MS, 3600000));
	exp.timeout_ms = 3600000;
	EXPECT_POLICY_IS(&exp);
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_INITIATOR_REV, 2));
	exp.initiator_rev = 2;
	EXPECT_POLICY_IS(&exp);
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_RESPONDER_REVS,
				     MPA_REVS_REV1));
	exp.responder_revs = MPA_REVS_REV1;
	EXPECT_POLICY_IS(&exp);
}

/*
 * Values the family refuses, each on its own and each leaving the whole
 * policy as it was. An Initiator sends Rev 1 or Rev 2 by default (Rev 0
 * is a connection's own choice, Rev 3 does not exist: R-7.1.1-14); a
 * Responder must accept some revision, and the mask holds revisions 1 and
 * 2 only (Rev 0 is the permissive item's). The spec's checks are the
 * family's netlink policy: a value out of a range gives ERANGE, a bit
 * outside a mask EINVAL (lib/nlattr.c); an empty responder-revs, which
 * the mask lets through, the handler refuses with EINVAL.
 */
TEST_F(policy, set_invalid)
{
	static const struct {
		int attr;
		__u32 val;
		int err;
	} bad[] = {
		{ MPA_A_POLICY_INITIATOR_REV, 0, ERANGE },
		{ MPA_A_POLICY_INITIATOR_REV, 3, ERANGE },
		{ MPA_A_POLICY_INITIATOR_REV, 255, ERANGE },
		{ MPA_A_POLICY_RESPONDER_REVS, 0, EINVAL },
		{ MPA_A_POLICY_RESPONDER_REVS, 1, EINVAL },	/* Rev 0 */
		{ MPA_A_POLICY_RESPONDER_REVS, 8, EINVAL },	/* Rev 3 */
		{ MPA_A_POLICY_RESPONDER_REVS, T_REVS_ALL | 1, EINVAL },
		{ MPA_A_POLICY_TIMEOUT_MS, 0, ERANGE },
		{ MPA_A_POLICY_TIMEOUT_MS, 3600001, ERANGE },
		{ MPA_A_POLICY_TIMEOUT_MS, 0xffffffff, ERANGE },
		{ MPA_A_POLICY_CRC_OFF_ALLOWED, 2, ERANGE },
		{ MPA_A_POLICY_MARKERS, 2, ERANGE },
		{ MPA_A_POLICY_PERMISSIVE, 2, ERANGE },
	};
	struct mpa_t_policy exp = t_new_netns;
	size_t i;

	exp.markers = 1;
	exp.initiator_rev = 2;
	exp.responder_revs = MPA_REVS_REV1;
	exp.timeout_ms = 2345;
	ASSERT_POLICY_SET(&exp);
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-bad[i].err, mpa_policy_set1(bad[i].attr, bad[i].val))
			TH_LOG("attribute %d value %u", bad[i].attr,
			       bad[i].val);
		EXPECT_POLICY_IS(&exp);
	}
}

/* A request with one bad attribute changes none of the good ones either. */
TEST_F(policy, set_invalid_is_atomic)
{
	struct mpa_t_policy exp = t_new_netns, req = t_new_netns;

	ASSERT_POLICY_SET(&exp);
	req.crc_off_allowed = 1;
	req.markers = 1;
	req.permissive = 1;
	req.timeout_ms = 777;
	/* refused by the netlink policy */
	req.initiator_rev = 0;
	EXPECT_EQ(-ERANGE, mpa_policy_set(&req));
	EXPECT_POLICY_IS(&exp);
	req.initiator_rev = 2;
	req.timeout_ms = 0;
	EXPECT_EQ(-ERANGE, mpa_policy_set(&req));
	EXPECT_POLICY_IS(&exp);
	/* refused by the handler, once the rest has been merged */
	req.timeout_ms = 777;
	req.responder_revs = 0;
	EXPECT_EQ(-EINVAL, mpa_policy_set(&req));
	EXPECT_POLICY_IS(&exp);
}

/* Drop CAP_NET_ADMIN from the effective set (this test's process only). */
static int t_drop_net_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &= ~CAP_TO_MASK(CAP_NET_ADMIN);
	return syscall(SYS_capset, &h, d);
}

/* POLICY_SET needs CAP_NET_ADMIN; POLICY_GET is open to everybody. */
TEST_F(policy, set_needs_net_admin)
{
	struct mpa_t_policy exp = t_new_netns, p;

	ASSERT_POLICY_SET(&exp);
	ASSERT_EQ(0, t_drop_net_admin());
	EXPECT_EQ(-EPERM, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	EXPECT_EQ(-EPERM, mpa_policy_set1(MPA_A_POLICY_MARKERS, 1));
	p.has = 0;
	EXPECT_EQ(-EPERM, mpa_policy_set(&p));
	EXPECT_POLICY_IS(&exp);
}

/*
 * CAP_NET_ADMIN counts in the user namespace that owns the network
 * namespace: root of a new user namespace may not set the policy of the
 * namespace it came from, but may set that of a network namespace of its
 * own, and that one only.
 */
TEST_F(policy, set_needs_owner_userns)
{
	struct mpa_t_policy exp = t_new_netns, p;

	ASSERT_POLICY_SET(&exp);
	ASSERT_EQ(0, unshare(CLONE_NEWUSER));
	EXPECT_EQ(-EPERM, mpa_policy_set1(MPA_A_POLICY_MARKERS, 1));
	EXPECT_POLICY_IS(&exp);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	EXPECT_POLICY_IS(&t_new_netns);
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_MARKERS, 1));
	p = t_new_netns;
	p.markers = 1;
	EXPECT_POLICY_IS(&p);
}

/* Bring up the loopback device of the current namespace. */
static int t_lo_up(void)
{
	struct ifreq ifr = {};
	int fd, ret;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!ret) {
		ifr.ifr_flags |= IFF_UP;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

/*
 * A new network namespace starts from the documented defaults, whatever
 * the namespace it came from has: its connections send Rev 1 with M=0
 * and C=1, and may not turn CRCs off (R-4.4-4, R-4.4-5).
 */
TEST_F(policy, new_netns_defaults)
{
	uint8_t exp[T_HDR], got[T_HDR];
	long opts[4];
	int m, raw;

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_MARKERS, 1));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_INITIATOR_REV, 2));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_TIMEOUT_MS, 4321));
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	EXPECT_POLICY_IS(&t_new_netns);
	ASSERT_EQ(0, t_lo_up());
	t_request(_metadata, got, T_HDR, opts);
	EXPECT_EQ(0, opts[0]);
	EXPECT_EQ(1, opts[1]);
	EXPECT_EQ(0, opts[2]);
	EXPECT_EQ(10000, opts[3]);
	t_frame(exp, false, T_C, 1, NULL, 0);
	EXPECT_BYTES(exp, got, T_HDR);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &m, &raw));
	ASSERT_EQ(0, mpa_attach(m));
	EXPECT_EQ(1, mpa_get(m, MPA_CRC));
	EXPECT_EQ(-1, mpa_set(m, MPA_CRC, 0));
	EXPECT_EQ(EPERM, errno);
	close(m);
	close(raw);
}

/*
 * Each namespace has a policy of its own: a change in one is not seen in
 * another, and a socket takes the policy of the namespace it was created
 * in, whatever namespace its owner is in when it attaches MPA.
 */
TEST_F(policy, netns_isolated)
{
	struct mpa_t_policy here = t_new_netns, there = t_new_netns;
	int orig, cli, srv, cli2, srv2;

	ASSERT_POLICY_SET(&here);
	orig = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, orig);
	ASSERT_EQ(0, unshare(CLONE_NEWNET));
	ASSERT_EQ(0, t_lo_up());
	there.crc_off_allowed = 1;
	there.markers = 1;
	there.initiator_rev = 2;
	there.permissive = 1;
	there.timeout_ms = 777;
	ASSERT_POLICY_SET(&there);
	EXPECT_POLICY_IS(&there);
	/* a pair over the new namespace's loopback */
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &cli, &srv));

	ASSERT_EQ(0, setns(orig, CLONE_NEWNET));
	EXPECT_POLICY_IS(&here);
	ASSERT_EQ(0, mpa_attach(cli));
	EXPECT_EQ(1, mpa_get(cli, MPA_MARKERS));
	EXPECT_EQ(2, mpa_get(cli, MPA_REVISION));
	EXPECT_EQ(1, mpa_get(cli, MPA_PERMISSIVE));
	EXPECT_EQ(777, mpa_get(cli, MPA_TIMEOUT));
	EXPECT_EQ(0, mpa_set(cli, MPA_CRC, 0));

	/* ... and one of this namespace has this one's */
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &cli2, &srv2));
	ASSERT_EQ(0, mpa_attach(cli2));
	EXPECT_EQ(0, mpa_get(cli2, MPA_MARKERS));
	EXPECT_EQ(1, mpa_get(cli2, MPA_REVISION));
	EXPECT_EQ(0, mpa_get(cli2, MPA_PERMISSIVE));
	EXPECT_EQ(10000, mpa_get(cli2, MPA_TIMEOUT));
	EXPECT_EQ(-1, mpa_set(cli2, MPA_CRC, 0));
	EXPECT_EQ(EPERM, errno);
	close(cli);
	close(srv);
	close(cli2);
	close(srv2);
	close(orig);
}

/*
 * markers: new connections ask for Markers (M=1 in their Request, which
 * makes the peer send them, R-7.1.1-6) unless told otherwise.
 */
TEST_F(policy, markers_default)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t exp[T_HDR];
	long opts[4];
	int m, raw;

	p.markers = 1;
	ASSERT_POLICY_SET(&p);
	t_frame(exp, false, T_M | T_C, 1, NULL, 0);
	t_expect_request(_metadata, exp, T_HDR, opts);
	EXPECT_EQ(1, opts[0]);

	/* The socket's own MPA_MARKERS still decides. */
	t_initiator(_metadata, AF_INET6, &m, &raw);
	ASSERT_EQ(0, mpa_set(m, MPA_MARKERS, 0));
	t_sends_request(_metadata, m, raw, T_C);
	close(m);
	close(raw);

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_MARKERS, 0));
	t_frame(exp, false, T_C, 1, NULL, 0);
	t_expect_request(_metadata, exp, T_HDR, opts);
	EXPECT_EQ(0, opts[0]);
}

/* markers also makes a Responder ask for them: M=1 in its Reply. */
TEST_F(policy, markers_default_responder)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t req[T_HDR], rep[T_HDR];
	struct mpa_result res;
	int m, raw;

	p.markers = 1;
	ASSERT_POLICY_SET(&p);
	t_responder(_metadata, &m, &raw);
	EXPECT_EQ(1, mpa_get(m, MPA_MARKERS));
	t_frame(req, false, T_C, 1, NULL, 0);
	t_frame(rep, true, T_M | T_C, 1, NULL, 0);
	t_accepted(_metadata, m, raw, req, T_HDR, rep, T_HDR, 1);
	ASSERT_EQ(0, mpa_getstruct(m, MPA_RESULT, &res, sizeof(res)));
	EXPECT_EQ(MPA_RESULT_RX_MARKERS, res.flags & (MPA_RESULT_RX_MARKERS |
						      MPA_RESULT_TX_MARKERS));
	close(m);
	close(raw);
}

/* initiator-rev: the Rev new Initiators send (RFC 6581 for 2). */
TEST_F(policy, initiator_rev)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t exp[T_FRAME_MAX];
	size_t n;
	long opts[4];

	p.initiator_rev = 2;
	ASSERT_POLICY_SET(&p);
	/* enhanced: E=1 and the IRD/ORD block (16, 16, no peer-to-peer) */
	n = t_rev_frame(exp, false, 2);
	ASSERT_EQ(T_HDR + 4, n);
	t_expect_request(_metadata, exp, n, opts);
	EXPECT_EQ(2, opts[1]);

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_INITIATOR_REV, 1));
	n = t_rev_frame(exp, false, 1);
	t_expect_request(_metadata, exp, n, opts);
	EXPECT_EQ(1, opts[1]);
}

/*
 * A whole Rev 2 exchange between two MPA sockets that only take the
 * revision from the policy.
 */
TEST_F(policy, initiator_rev_2_exchange)
{
	struct mpa_t_policy p = t_new_netns;
	struct mpa_result ri, rr;
	int i, r;

	p.initiator_rev = 2;
	p.responder_revs = MPA_REVS_REV2;
	ASSERT_POLICY_SET(&p);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &i, &r));
	ASSERT_EQ(0, mpa_config(i, MPA_ROLE_INITIATOR, 0));
	ASSERT_EQ(0, mpa_config(r, MPA_ROLE_RESPONDER, 0));
	t_start_nonblock(_metadata, i);
	ASSERT_START(r);
	ASSERT_EQ(0, mpa_answer(r, MPA_ACCEPT, NULL, 0));
	ASSERT_LE(0, t_wait_startup(i, T_WAIT));
	EXPECT_MPA_STATE(i, MPA_STATE_FULL);
	EXPECT_MPA_STATE(r, MPA_STATE_FULL);
	ASSERT_EQ(0, mpa_getstruct(i, MPA_RESULT, &ri, sizeof(ri)));
	ASSERT_EQ(0, mpa_getstruct(r, MPA_RESULT, &rr, sizeof(rr)));
	EXPECT_EQ(2, ri.revision);
	EXPECT_EQ(2, rr.revision);
	close(i);
	close(r);
}

/*
 * responder-revs (R-7.1.1-15, R-7.1.1-16): a Responder examines Rev and
 * closes, reporting the error locally, on a revision the namespace does
 * not accept; the other one it still takes, answering in kind.
 */
FIXTURE(revs)
{
	struct mpa_t_policy saved;
	int m, raw;
};

FIXTURE_VARIANT(revs)
{
	__u32 revs;	/* the policy's responder-revs */
	int req_rev;	/* the Request's */
	bool ok;
};

FIXTURE_VARIANT_ADD(revs, rev1_only_refuses_rev2)
{
	.revs = MPA_REVS_REV1, .req_rev = 2, .ok = false,
};

FIXTURE_VARIANT_ADD(revs, rev1_only_accepts_rev1)
{
	.revs = MPA_REVS_REV1, .req_rev = 1, .ok = true,
};

FIXTURE_VARIANT_ADD(revs, rev2_only_refuses_rev1)
{
	.revs = MPA_REVS_REV2, .req_rev = 1, .ok = false,
};

FIXTURE_VARIANT_ADD(revs, rev2_only_accepts_rev2)
{
	.revs = MPA_REVS_REV2, .req_rev = 2, .ok = true,
};

FIXTURE_VARIANT_ADD(revs, both_accept_rev1)
{
	.revs = T_REVS_ALL, .req_rev = 1, .ok = true,
};

FIXTURE_VARIANT_ADD(revs, both_accept_rev2)
{
	.revs = T_REVS_ALL, .req_rev = 2, .ok = true,
};

FIXTURE_SETUP(revs)
{
	struct mpa_t_policy p = t_new_netns;

	signal(SIGPIPE, SIG_IGN);
	self->m = -1;
	self->raw = -1;
	ASSERT_EQ(0, mpa_policy_get(&self->saved));
	p.responder_revs = variant->revs;
	ASSERT_POLICY_SET(&p);
	t_responder(_metadata, &self->m, &self->raw);
}

FIXTURE_TEARDOWN_PARENT(revs)
{
	EXPECT_EQ(0, mpa_policy_set(&self->saved));
}

TEST_F(revs, request)
{
	uint8_t req[T_FRAME_MAX], rep[T_FRAME_MAX];
	size_t n, rn;

	n = t_rev_frame(req, false, variant->req_rev);
	rn = t_rev_frame(rep, true, variant->req_rev);
	if (variant->ok)
		t_accepted(_metadata, self->m, self->raw, req, n, rep, rn,
			   variant->req_rev);
	else
		t_refused(_metadata, self->m, self->raw, req, n);
}

/* Rev 0 stays the permissive item's, whatever responder-revs says. */
TEST_F(revs, rev0_follows_permissive)
{
	uint8_t req[T_HDR], rep[T_HDR];
	char c;

	t_frame(req, false, T_M | T_C, 0, NULL, 0);
	/* not permissive: Appendix C.2.1, a Rev 1 Reply, then a close */
	ASSERT_EQ(T_HDR, t_send(self->raw, req, T_HDR));
	EXPECT_EQ(-1, mpa_start(self->m));
	EXPECT_EQ(EPROTO, errno);
	EXPECT_MPA_ERROR(self->m, MPA_ERR_STARTUP, MPA_REASON_REV0, EPROTO);
	t_frame(rep, true, T_C, 1, NULL, 0);
	t_expect_read(_metadata, self->raw, rep, T_HDR, T_WAIT);
	EXPECT_EQ(0, t_wait_eof(self->raw, T_WAIT));
	EXPECT_GE(0, recv(self->m, &c, 1, MSG_DONTWAIT));
	close(self->m);
	close(self->raw);

	/* permissive (from the policy): C.2.4, Rev 0 with M=1 and C=1 */
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_PERMISSIVE, 1));
	t_responder(_metadata, &self->m, &self->raw);
	t_frame(rep, true, T_M | T_C, 0, NULL, 0);
	t_accepted(_metadata, self->m, self->raw, req, T_HDR, rep, T_HDR, 0);
}

/*
 * permissive: new connections interoperate with Rev 0 peers (RFC 5044
 * Appendix C) without being told so on the socket.
 */
TEST_F(policy, permissive_default)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t req[T_HDR], rep[T_HDR];
	long opts[4];
	int m, raw;

	p.permissive = 1;
	ASSERT_POLICY_SET(&p);
	t_responder(_metadata, &m, &raw);
	EXPECT_EQ(1, mpa_get(m, MPA_PERMISSIVE));
	t_frame(req, false, T_M | T_C, 0, NULL, 0);
	t_frame(rep, true, T_M | T_C, 0, NULL, 0);
	t_accepted(_metadata, m, raw, req, T_HDR, rep, T_HDR, 0);
	close(m);
	close(raw);

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_PERMISSIVE, 0));
	t_request(_metadata, req, T_HDR, opts);
	EXPECT_EQ(0, opts[2]);
}

/* A Responder under timeout-ms T_SHORT: its MPA_TIMEOUT is that. */
static void t_short_responder(struct __test_metadata *_metadata, int *m,
			      int *raw)
{
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_TIMEOUT_MS, T_SHORT));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, raw, m));
	ASSERT_EQ(0, mpa_config(*m, MPA_ROLE_RESPONDER, 0));
	EXPECT_EQ(T_SHORT, mpa_get(*m, MPA_TIMEOUT));
}

/* timeout-ms: the default MPA_TIMEOUT, and the timer runs by it. */
TEST_F(policy, timeout_default)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t req[T_HDR];
	long opts[4], t0, took;
	int m, raw;

	p.timeout_ms = 1234;
	ASSERT_POLICY_SET(&p);
	t_request(_metadata, req, T_HDR, opts);
	EXPECT_EQ(1234, opts[3]);

	t_short_responder(_metadata, &m, &raw);
	t0 = t_now_ms();
	EXPECT_EQ(-1, mpa_start(m));
	EXPECT_EQ(ETIMEDOUT, errno);
	took = t_now_ms() - t0;
	EXPECT_LE(T_SHORT - 50, took);
	EXPECT_GT(T_WAIT, took);		/* not for ever */
	EXPECT_MPA_STATE(m, MPA_STATE_FAILED);
	EXPECT_MPA_ERROR(m, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT, ETIMEDOUT);
	EXPECT_EQ(0, t_wait_eof(raw, T_WAIT));
	close(m);
	close(raw);
}

/*
 * MPA_TIMEOUT 0 is no limit, over a short timeout-ms: neither the wait for
 * the Request nor the application's answer to it times out (a check that
 * nothing happens within several times the policy's timeout).
 */
TEST_F(policy, timeout_zero_no_limit)
{
	uint8_t req[T_HDR], rep[T_HDR];
	int m, raw;

	t_short_responder(_metadata, &m, &raw);
	ASSERT_EQ(0, mpa_set(m, MPA_TIMEOUT, 0));
	EXPECT_EQ(0, mpa_get(m, MPA_TIMEOUT));
	t_start_nonblock(_metadata, m);
	t_sleep_ms(4 * T_SHORT);
	EXPECT_EQ(MPA_STATE_AWAIT_REQUEST, mpa_state(m));
	t_frame(req, false, T_C, 1, NULL, 0);
	ASSERT_EQ(T_HDR, t_send(raw, req, T_HDR));
	ASSERT_EQ(POLLIN, t_poll(m, POLLIN, T_WAIT) & POLLIN);
	t_sleep_ms(4 * T_SHORT);
	EXPECT_EQ(MPA_STATE_REQUEST_RECEIVED, mpa_state(m));
	ASSERT_EQ(0, t_blocking(m));
	ASSERT_EQ(0, mpa_answer(m, MPA_ACCEPT, NULL, 0));
	EXPECT_EQ(MPA_STATE_FULL, mpa_state(m));
	ASSERT_EQ(T_HDR, t_read(raw, rep, T_HDR, T_WAIT));
	EXPECT_EQ(0, memcmp(rep, T_KEY_REP, T_KEY_LEN));
	close(m);
	close(raw);
}

/*
 * crc-off-allowed (R-4.4-4): MPA_CRC=0 only with the administrator's
 * permission, which is asked for when the option is set. Either way a new
 * connection has CRCs on (R-4.4-5): the permission is not a default.
 */
TEST_F(policy, crc_off_allowed)
{
	struct mpa_t_policy p = t_new_netns;
	uint8_t exp[T_HDR];
	int m, raw;

	ASSERT_POLICY_SET(&p);
	t_initiator(_metadata, AF_INET, &m, &raw);
	EXPECT_EQ(1, mpa_get(m, MPA_CRC));
	t_crc_off_refused(_metadata, m);
	close(m);
	close(raw);

	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 1));
	t_initiator(_metadata, AF_INET, &m, &raw);
	EXPECT_EQ(1, mpa_get(m, MPA_CRC));
	ASSERT_EQ(0, mpa_set(m, MPA_CRC, 0));
	EXPECT_EQ(0, mpa_get(m, MPA_CRC));
	t_sends_request(_metadata, m, raw, 0);
	close(m);
	close(raw);

	/* With CRCs asked for by default, a Request still says C=1. */
	t_frame(exp, false, T_C, 1, NULL, 0);
	t_expect_request(_metadata, exp, T_HDR, NULL);
}

/*
 * Changing the policy does not touch the connections already attached:
 * their defaults, what an Initiator sends, what a Responder accepts. The
 * connections attached after the change get the new policy.
 */
TEST_F(policy, attached_keep_their_policy)
{
	struct mpa_t_policy before = t_new_netns, after = t_new_netns;
	uint8_t req[T_FRAME_MAX], rep[T_FRAME_MAX], got[T_FRAME_MAX];
	int i, raw_r, r, raw_i, c;
	long opts[4];
	size_t n;

	before.timeout_ms = 5000;
	ASSERT_POLICY_SET(&before);
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &i, &raw_r));
	ASSERT_EQ(0, mpa_config(i, MPA_ROLE_INITIATOR, 0));
	t_responder(_metadata, &r, &raw_i);

	after.markers = 1;
	after.initiator_rev = 2;
	after.responder_revs = MPA_REVS_REV1;
	after.permissive = 1;
	after.timeout_ms = 1234;
	ASSERT_POLICY_SET(&after);

	EXPECT_EQ(0, mpa_get(i, MPA_MARKERS));
	EXPECT_EQ(1, mpa_get(i, MPA_REVISION));
	EXPECT_EQ(0, mpa_get(i, MPA_PERMISSIVE));
	EXPECT_EQ(5000, mpa_get(i, MPA_TIMEOUT));
	EXPECT_EQ(0, mpa_get(r, MPA_MARKERS));
	EXPECT_EQ(5000, mpa_get(r, MPA_TIMEOUT));

	/* the Initiator sends what it was attached with: Rev 1, M=0 */
	t_start_nonblock(_metadata, i);
	n = t_rev_frame(req, false, 1);
	t_expect_read(_metadata, raw_r, req, n, T_WAIT);

	/* the Responder still takes Rev 2, answering M=0 */
	n = t_rev_frame(req, false, 2);
	t_rev_frame(rep, true, 2);
	t_accepted(_metadata, r, raw_i, req, n, rep, n, 2);

	/* one attached now has the new policy throughout */
	t_request(_metadata, got, T_HDR + 4, opts);
	EXPECT_EQ(1, opts[0]);
	EXPECT_EQ(2, opts[1]);
	EXPECT_EQ(1, opts[2]);
	EXPECT_EQ(1234, opts[3]);
	t_frame_v2(req, false, T_M | T_C, false, 0, 16, 16, NULL, 0);
	EXPECT_BYTES(req, got, T_HDR + 4);
	close(raw_i);
	t_responder(_metadata, &c, &raw_i);
	n = t_rev_frame(req, false, 2);
	t_refused(_metadata, c, raw_i, req, n);
	close(i);
	close(raw_r);
	close(r);
	close(c);
	close(raw_i);
}

/*
 * A connection that announced C=0 while the administrator allowed it keeps
 * it when the permission is withdrawn (the policy applies at attach and
 * set time); new connections are refused again.
 */
TEST_F(policy, crc_off_kept_after_withdrawal)
{
	struct mpa_t_policy p = t_new_netns;
	int m, raw, m2, raw2;

	p.crc_off_allowed = 1;
	ASSERT_POLICY_SET(&p);
	t_initiator(_metadata, AF_INET6, &m, &raw);
	ASSERT_EQ(0, mpa_set(m, MPA_CRC, 0));
	ASSERT_EQ(0, mpa_policy_set1(MPA_A_POLICY_CRC_OFF_ALLOWED, 0));

	t_initiator(_metadata, AF_INET6, &m2, &raw2);
	t_crc_off_refused(_metadata, m2);

	EXPECT_EQ(0, mpa_get(m, MPA_CRC));
	t_sends_request(_metadata, m, raw, 0);
	close(m);
	close(raw);
	close(m2);
	close(raw2);
}

TEST_HARNESS_MAIN
