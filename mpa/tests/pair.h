/* SPDX-License-Identifier: GPL-2.0 */
/* KUnit helpers: connected kernel TCP socket pairs over loopback */
#ifndef _MPA_TESTS_PAIR_H
#define _MPA_TESTS_PAIR_H

#include <kunit/test.h>
#include <linux/net.h>

/**
 * struct mpa_test_pair - a listener and the two ends of one connection
 * @listener: the listening socket
 * @client: the connecting end
 * @server: the accepted end
 */
struct mpa_test_pair {
	struct socket *listener;
	struct socket *client;
	struct socket *server;
};

int mpa_test_attach(struct socket *sock);
void mpa_test_release(struct socket **sock);
struct socket *mpa_test_listener(struct kunit *test, int family,
				 struct sockaddr_storage *addr);
struct mpa_test_pair *mpa_test_pair_new(struct kunit *test, int family);
int mpa_test_stuck_sender(struct socket *from, struct socket *to);

#endif /* _MPA_TESTS_PAIR_H */
