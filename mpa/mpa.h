/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044): internal interfaces
 * of the module.
 */
#ifndef _MPA_H
#define _MPA_H

#include <linux/rcupdate.h>
#include <net/inet_connection_sock.h>
#include <net/tcp.h>

/**
 * struct mpa_sock - MPA state attached to a TCP socket
 * @sk: the TCP socket
 * @rcu: for freeing after the socket is gone (diag readers may race)
 *
 * Lives in inet_csk(sk)->icsk_ulp_data, which leaves sk_user_data free for
 * in-kernel consumers of the socket.
 */
struct mpa_sock {
	struct sock *sk;
	struct rcu_head rcu;
};

static inline struct mpa_sock *mpa_sk(const struct sock *sk)
{
	return (__force struct mpa_sock *)inet_csk(sk)->icsk_ulp_data;
}

extern struct tcp_ulp_ops mpa_ulp_ops;

int mpa_ulp_register(void);
void mpa_ulp_unregister(void);

#endif /* _MPA_H */
