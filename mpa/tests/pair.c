// SPDX-License-Identifier: GPL-2.0
/* KUnit helpers: connected kernel TCP socket pairs over loopback */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/net.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "pair.h"

int mpa_test_attach(struct socket *sock)
{
	char name[] = "mpa";

	return sock->ops->setsockopt(sock, SOL_TCP, TCP_ULP,
				     KERNEL_SOCKPTR(name), sizeof(name) - 1);
}

void mpa_test_release(struct socket **sock)
{
	if (*sock) {
		sock_release(*sock);
		*sock = NULL;
	}
}

static void mpa_test_pair_exit(void *data)
{
	struct mpa_test_pair *p = data;

	mpa_test_release(&p->client);
	mpa_test_release(&p->server);
	mpa_test_release(&p->listener);
}

/* A listener on the loopback address of @family, bound to a free port. */
struct socket *mpa_test_listener(struct kunit *test, int family,
				 struct sockaddr_storage *addr)
{
	struct socket *sock;
	int len;

	KUNIT_ASSERT_EQ(test, 0, sock_create_kern(&init_net, family, SOCK_STREAM,
						  IPPROTO_TCP, &sock));
	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		len = sizeof(*sin6);
	}
	KUNIT_ASSERT_EQ(test, 0, kernel_bind(sock, (struct sockaddr *)addr, len));
	KUNIT_ASSERT_EQ(test, 0, kernel_listen(sock, 4));
	KUNIT_ASSERT_GT(test, kernel_getsockname(sock, (struct sockaddr *)addr), 0);
	return sock;
}

struct mpa_test_pair *mpa_test_pair_new(struct kunit *test, int family)
{
	struct sockaddr_storage addr;
	struct mpa_test_pair *p;
	int len;

	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, mpa_test_pair_exit, p));

	p->listener = mpa_test_listener(test, family, &addr);
	len = family == AF_INET ? sizeof(struct sockaddr_in) :
				  sizeof(struct sockaddr_in6);
	KUNIT_ASSERT_EQ(test, 0, sock_create_kern(&init_net, family, SOCK_STREAM,
						  IPPROTO_TCP, &p->client));
	KUNIT_ASSERT_EQ(test, 0, kernel_connect(p->client, (struct sockaddr *)&addr,
						len, 0));
	KUNIT_ASSERT_EQ(test, 0, kernel_accept(p->listener, &p->server, 0));
	return p;
}

/**
 * mpa_test_stuck_sender() - fill a send buffer that no ACK can empty
 * @from: the sending end, plain TCP (no ULP yet, or one in plain stream)
 * @to: the other end, which reads nothing
 *
 * @to takes in little (SO_RCVBUF locked at its least) and @from may queue
 * little (SO_SNDBUF the same). Stuck: @from's send buffer is full, @to's
 * receive buffer is over its size (it drops what comes, and only a read
 * would let it take more), and all it took is acknowledged, so no ACK can
 * make room any more: what @from sends next waits in its queue.
 *
 * Return: 0 once stuck, -ETIMEDOUT after 10 s, or the send's error.
 */
int mpa_test_stuck_sender(struct socket *from, struct socket *to)
{
	static u8 fill[SZ_16K];
	unsigned long end = jiffies + 10 * HZ;
	struct sock *fsk = from->sk, *tsk = to->sk;
	int ret;

	lock_sock(tsk);
	WRITE_ONCE(tsk->sk_rcvbuf, SOCK_MIN_RCVBUF);
	tsk->sk_userlocks |= SOCK_RCVBUF_LOCK;
	release_sock(tsk);
	lock_sock(fsk);
	WRITE_ONCE(fsk->sk_sndbuf, SOCK_MIN_SNDBUF);
	fsk->sk_userlocks |= SOCK_SNDBUF_LOCK;
	release_sock(fsk);
	while (time_before(jiffies, end)) {
		struct kvec kv = { .iov_base = fill, .iov_len = sizeof(fill) };
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT };

		ret = kernel_sendmsg(from, &msg, &kv, 1, sizeof(fill));
		if (ret > 0)
			continue;
		if (ret != -EAGAIN)
			return ret;
		if (atomic_read(&tsk->sk_rmem_alloc) > READ_ONCE(tsk->sk_rcvbuf) &&
		    READ_ONCE(tcp_sk(fsk)->snd_una) ==
		    READ_ONCE(tcp_sk(tsk)->rcv_nxt))
			return 0;
		usleep_range(1000, 2000);	/* for the peer's ACK */
	}
	return -ETIMEDOUT;
}
