// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the "mpa" TCP ULP: attaching to real kernel TCP sockets
 * over loopback, IPv4 and IPv6.
 */
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/delay.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "conn.h"
#include "mpa.h"
#include "pair.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static int mpa_test_refs(void)
{
	return module_refcount(mpa_ulp_ops.owner);
}

static bool mpa_test_attached(struct socket *sock)
{
	return inet_csk(sock->sk)->icsk_ulp_ops == &mpa_ulp_ops &&
	       mpa_conn(sock->sk) && mpa_conn(sock->sk)->sk == sock->sk &&
	       mpa_conn_state(mpa_conn(sock->sk)) == MPA_STATE_STREAMING;
}

static void mpa_test_attach_both(struct kunit *test, int family)
{
	struct mpa_test_pair *p = mpa_test_pair_new(test, family);
	int refs = mpa_test_refs();

	KUNIT_EXPECT_EQ(test, 0, mpa_test_attach(p->client));
	KUNIT_EXPECT_EQ(test, 0, mpa_test_attach(p->server));
	KUNIT_EXPECT_TRUE(test, mpa_test_attached(p->client));
	KUNIT_EXPECT_TRUE(test, mpa_test_attached(p->server));
	/* Each attached socket pins the module. */
	KUNIT_EXPECT_EQ(test, refs + 2, mpa_test_refs());
}

static void mpa_ulp_attach_ipv4(struct kunit *test)
{
	mpa_test_attach_both(test, AF_INET);
}

static void mpa_ulp_attach_ipv6(struct kunit *test)
{
	mpa_test_attach_both(test, AF_INET6);
}

static void mpa_ulp_attach_twice(struct kunit *test)
{
	struct mpa_test_pair *p = mpa_test_pair_new(test, AF_INET);
	struct mpa_conn *msk;
	int refs;

	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(p->client));
	msk = mpa_conn(p->client->sk);
	refs = mpa_test_refs();
	KUNIT_EXPECT_EQ(test, -EEXIST, mpa_test_attach(p->client));
	/* The first attachment is untouched and no reference leaked. */
	KUNIT_EXPECT_PTR_EQ(test, msk, mpa_conn(p->client->sk));
	KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
}

static void mpa_ulp_attach_unconnected(struct kunit *test)
{
	struct socket *sock;
	int refs = mpa_test_refs();

	KUNIT_ASSERT_EQ(test, 0, sock_create_kern(&init_net, AF_INET, SOCK_STREAM,
						  IPPROTO_TCP, &sock));
	KUNIT_EXPECT_EQ(test, -ENOTCONN, mpa_test_attach(sock));
	KUNIT_EXPECT_NULL(test, inet_csk(sock->sk)->icsk_ulp_ops);
	KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
	sock_release(sock);
}

static void mpa_ulp_attach_listener(struct kunit *test)
{
	struct sockaddr_storage addr;
	struct socket *sock;
	int refs = mpa_test_refs();

	sock = mpa_test_listener(test, AF_INET6, &addr);
	KUNIT_EXPECT_EQ(test, -ENOTCONN, mpa_test_attach(sock));
	KUNIT_EXPECT_NULL(test, inet_csk(sock->sk)->icsk_ulp_ops);
	KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
	sock_release(sock);
}

static void mpa_test_set_user_data(struct sock *sk, void *data)
{
	write_lock_bh(&sk->sk_callback_lock);
	rcu_assign_sk_user_data(sk, data);
	write_unlock_bh(&sk->sk_callback_lock);
}

/*
 * A socket whose sk_user_data is taken (an in-kernel user's, a psock) is
 * not MPA's to have: EBUSY, the socket and the module untouched; free
 * again, it attaches.
 */
static void mpa_test_attach_user_data(struct kunit *test, int family)
{
	struct mpa_test_pair *p = mpa_test_pair_new(test, family);
	int refs = mpa_test_refs();

	mpa_test_set_user_data(p->client->sk, test);
	KUNIT_EXPECT_EQ(test, -EBUSY, mpa_test_attach(p->client));
	KUNIT_EXPECT_NULL(test, inet_csk(p->client->sk)->icsk_ulp_ops);
	KUNIT_EXPECT_NULL(test, mpa_conn(p->client->sk));
	KUNIT_EXPECT_PTR_EQ(test, (void *)test,
			    READ_ONCE(p->client->sk->sk_user_data));
	KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
	mpa_test_set_user_data(p->client->sk, NULL);
	KUNIT_EXPECT_EQ(test, 0, mpa_test_attach(p->client));
	KUNIT_EXPECT_TRUE(test, mpa_test_attached(p->client));
}

static void mpa_ulp_attach_user_data_ipv4(struct kunit *test)
{
	mpa_test_attach_user_data(test, AF_INET);
}

static void mpa_ulp_attach_user_data_ipv6(struct kunit *test)
{
	mpa_test_attach_user_data(test, AF_INET6);
}

/* Closing an attached socket frees its MPA state and drops the module. */
static void mpa_test_release_drops_ref(struct kunit *test, bool abort)
{
	struct mpa_test_pair *p = mpa_test_pair_new(test, AF_INET);
	int refs = mpa_test_refs();
	int i;

	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(p->client));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(p->server));
	KUNIT_ASSERT_EQ(test, refs + 2, mpa_test_refs());
	if (abort) {
		/* SO_LINGER 0: reset, the socket is destroyed in close. */
		sock_no_linger(p->client->sk);
		sock_no_linger(p->server->sk);
	}
	mpa_test_release(&p->client);
	mpa_test_release(&p->server);
	if (abort)
		KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
	/* A graceful close finishes in softirq once the FINs are acked. */
	for (i = 0; i < 500 && mpa_test_refs() != refs; i++)
		msleep(20);
	KUNIT_EXPECT_EQ(test, refs, mpa_test_refs());
}

static void mpa_ulp_close_abort(struct kunit *test)
{
	mpa_test_release_drops_ref(test, true);
}

static void mpa_ulp_close_graceful(struct kunit *test)
{
	mpa_test_release_drops_ref(test, false);
}

static int mpa_test_setopt(struct socket *sock, int name, const void *val,
			   unsigned int len)
{
	return sock->ops->setsockopt(sock, SOL_MPA, name,
				     KERNEL_SOCKPTR((void *)val), len);
}

/*
 * A Responder's Reply after MPA_REJECT waits behind earlier stream data
 * the peer does not read; the peer resets; a send then finds TCP closed,
 * and what is left of the Reply is dropped. The startup object goes with
 * it: nothing of the startup runs any more. It stayed until close.
 */
static void mpa_ulp_reply_cut_frees_startup(struct kunit *test)
{
	static const char req[] = "MPA ID Req Frame\x40\x01\x00\x00";
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct socket *r = pair->server;
	struct sock *rsk = r->sk, *isk = pair->client->sk;
	unsigned long end = jiffies + 10 * HZ;
	u32 role = MPA_ROLE_RESPONDER;
	struct kvec kv;
	struct msghdr msg;
	struct mpa_conn *c;
	void *st;
	int ret;

	/* the peer reads none of the earlier stream data */
	KUNIT_ASSERT_EQ(test, 0, mpa_test_stuck_sender(r, pair->client));

	kv.iov_base = (void *)req;
	kv.iov_len = 20;
	msg = (struct msghdr){};
	KUNIT_ASSERT_EQ(test, 20, kernel_sendmsg(pair->client, &msg, &kv, 1,
						 20));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(r));
	c = mpa_conn(rsk);
	KUNIT_ASSERT_EQ(test, 0, mpa_test_setopt(r, MPA_ROLE, &role,
						 sizeof(role)));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_setopt(r, MPA_START, NULL, 0));
	/* the Reply cannot go: MPA_REJECT waits this long, then EAGAIN */
	WRITE_ONCE(rsk->sk_sndtimeo, HZ / 10);
	KUNIT_ASSERT_EQ(test, -EAGAIN, mpa_test_setopt(r, MPA_REJECT, NULL,
						       0));
	lock_sock(rsk);
	ret = c->tx_sent != c->tx_len && c->st &&
	      mpa_conn_state(c) == MPA_STATE_REJECTED;
	release_sock(rsk);
	KUNIT_ASSERT_TRUE_MSG(test, ret, "no Reply waiting");

	lock_sock(isk);
	tcp_disconnect(isk, 0);		/* a reset */
	release_sock(isk);
	while (READ_ONCE(rsk->sk_state) != TCP_CLOSE &&
	       time_before(jiffies, end))
		usleep_range(1000, 2000);
	KUNIT_ASSERT_EQ(test, TCP_CLOSE, (int)READ_ONCE(rsk->sk_state));

	/* the send drops the Reply's rest, and fails */
	kv.iov_base = (void *)req;
	kv.iov_len = 1;
	msg = (struct msghdr){ .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	KUNIT_EXPECT_LT(test, kernel_sendmsg(r, &msg, &kv, 1, 1), 0);
	lock_sock(rsk);
	ret = c->tx_sent == c->tx_len;
	st = c->st;
	release_sock(rsk);
	KUNIT_EXPECT_TRUE(test, ret);
	KUNIT_EXPECT_NULL(test, st);
}

/*
 * poll() while a startup fails: mpa_poll() reads TCP's readiness
 * (tcp_poll()) before MPA's state, and mpa_conn_fail() may set the
 * socket's error and shutdown between the two. A poller that then finds
 * FAILED must tell the error, not the bare readiness TCP had before it
 * (once in CI, selftest pair.ipv4.responder_responder: EPOLLIN | EPOLLOUT
 * without EPOLLERR, state FAILED).
 */
static void mpa_ulp_poll_failed_stale_tcp(struct kunit *test)
{
	static const u8 zeros[20];	/* no Key: code 4 at once */
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kvec kv = { .iov_base = (void *)zeros, .iov_len = 20 };
	struct socket *r = pair->server;
	u32 role = MPA_ROLE_RESPONDER;
	struct msghdr msg = {};
	struct mpa_conn *c;
	__poll_t mask;

	KUNIT_ASSERT_EQ(test, 20, kernel_sendmsg(pair->client, &msg, &kv, 1,
						 20));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(r));
	c = mpa_conn(r->sk);
	KUNIT_ASSERT_EQ(test, 0, mpa_test_setopt(r, MPA_ROLE, &role,
						 sizeof(role)));
	KUNIT_EXPECT_EQ(test, -EPROTO, mpa_test_setopt(r, MPA_START, NULL, 0));
	KUNIT_ASSERT_EQ(test, MPA_STATE_FAILED, (int)mpa_conn_state(c));
	KUNIT_ASSERT_EQ(test, EPROTO, READ_ONCE(r->sk->sk_err));
	/* what tcp_poll() told before the error: readable, writable */
	mask = mpa_poll_mask(c, EPOLLIN | EPOLLRDNORM | EPOLLOUT |
				EPOLLWRNORM);
	KUNIT_EXPECT_TRUE_MSG(test, mask & EPOLLERR, "mask 0x%x",
			      (__force u32)mask);
	KUNIT_EXPECT_TRUE_MSG(test, mask & EPOLLHUP, "mask 0x%x",
			      (__force u32)mask);
}

KUNIT_DEFINE_ACTION_WRAPPER(mpa_test_fput, fput, struct file *);

static bool mpa_test_reply_out(const struct mpa_conn *c)
{
	/* pairs with mpa_startup_frame_out(): its error is seen */
	return smp_load_acquire(&c->tx_sent) == READ_ONCE(c->tx_len);
}

/*
 * The same for a Responder that refuses a Request by itself (no RTR type
 * in common, R-7.1.2-5) after a non-blocking MPA_START: it tells the
 * refusal once the Reply is out, as a refused connect() is told. The
 * error is set before the Reply counts as out; a poller that finds it out
 * must tell the error, not the bare readiness TCP had before it.
 */
static void mpa_ulp_poll_refused_stale_tcp(struct kunit *test)
{
	/* Rev 2, C and E; IRD 4 with peer-to-peer and Send, ORD 4 */
	static const u8 req[24] =
		"MPA ID Req Frame\x50\x02\x00\x04\xc0\x04\x00\x04";
	struct mpa_enhanced enh = { .ird = 1, .ord = 1, .rtr = MPA_RTR_WRITE };
	struct mpa_test_pair *pair = mpa_test_pair_new(test, AF_INET);
	struct kvec kv = { .iov_base = (void *)req, .iov_len = sizeof(req) };
	unsigned long end = jiffies + 10 * HZ;
	struct socket *r = pair->server;
	u32 role = MPA_ROLE_RESPONDER;
	struct msghdr msg = {};
	struct mpa_conn *c;
	struct file *file;
	__poll_t mask;

	KUNIT_ASSERT_EQ(test, 0, mpa_test_attach(r));
	c = mpa_conn(r->sk);
	KUNIT_ASSERT_EQ(test, 0, mpa_test_setopt(r, MPA_ROLE, &role,
						 sizeof(role)));
	KUNIT_ASSERT_EQ(test, 0, mpa_test_setopt(r, MPA_ENHANCED, &enh,
						 sizeof(enh)));
	/* non-blocking: a file of its own, which releases the socket */
	pair->server = NULL;
	file = sock_alloc_file(r, O_NONBLOCK, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mpa_test_fput,
							   file));
	KUNIT_ASSERT_EQ(test, -EINPROGRESS,
			mpa_test_setopt(r, MPA_START, NULL, 0));

	KUNIT_ASSERT_EQ(test, (int)sizeof(req),
			kernel_sendmsg(pair->client, &msg, &kv, 1,
				       sizeof(req)));
	while (!(READ_ONCE(r->sk->sk_err) && mpa_test_reply_out(c)) &&
	       time_before(jiffies, end))
		usleep_range(1000, 2000);
	KUNIT_ASSERT_EQ(test, MPA_STATE_REJECTED, (int)mpa_conn_state(c));
	KUNIT_ASSERT_EQ(test, ECONNREFUSED, READ_ONCE(r->sk->sk_err));
	KUNIT_ASSERT_TRUE(test, mpa_test_reply_out(c));
	/* what tcp_poll() told before the error: writable */
	mask = mpa_poll_mask(c, EPOLLOUT | EPOLLWRNORM);
	KUNIT_EXPECT_TRUE_MSG(test, mask & EPOLLERR, "mask 0x%x",
			      (__force u32)mask);
}

static struct kunit_case mpa_ulp_cases[] = {
	KUNIT_CASE(mpa_ulp_attach_ipv4),
	KUNIT_CASE(mpa_ulp_attach_ipv6),
	KUNIT_CASE(mpa_ulp_attach_twice),
	KUNIT_CASE(mpa_ulp_attach_unconnected),
	KUNIT_CASE(mpa_ulp_attach_listener),
	KUNIT_CASE(mpa_ulp_attach_user_data_ipv4),
	KUNIT_CASE(mpa_ulp_attach_user_data_ipv6),
	KUNIT_CASE(mpa_ulp_close_abort),
	KUNIT_CASE_SLOW(mpa_ulp_close_graceful),
	KUNIT_CASE(mpa_ulp_reply_cut_frees_startup),
	KUNIT_CASE(mpa_ulp_poll_failed_stale_tcp),
	KUNIT_CASE(mpa_ulp_poll_refused_stale_tcp),
	{}
};

static struct kunit_suite mpa_ulp_suite = {
	.name = "mpa_ulp",
	.test_cases = mpa_ulp_cases,
};

kunit_test_suite(mpa_ulp_suite);

MODULE_DESCRIPTION("KUnit tests for the mpa TCP ULP");
MODULE_LICENSE("GPL");
