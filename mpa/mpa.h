/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044): internal interfaces
 * of the module.
 */
#ifndef _MPA_H
#define _MPA_H

#include <net/tcp.h>

extern struct tcp_ulp_ops mpa_ulp_ops;

int mpa_ulp_register(void);
void mpa_ulp_unregister(void);
void mpa_sock_init(void);
int mpa_sock_attach(struct sock *sk);

#endif /* _MPA_H */
