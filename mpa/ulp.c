// SPDX-License-Identifier: GPL-2.0
/*
 * MPA - the "mpa" TCP upper layer protocol: attaching to and detaching from
 * TCP sockets.
 */
#include <linux/module.h>
#include <kunit/visibility.h>

#include "conn.h"
#include "mpa.h"

/*
 * Called by TCP with the socket locked, from setsockopt(TCP_ULP) (or a
 * kernel caller's equivalent). TCP has already refused a socket that has a
 * ULP (EEXIST) or listens (ENOTCONN, as we have no ->clone).
 */
static int mpa_ulp_init(struct sock *sk)
{
	return mpa_sock_attach(sk);
}

/*
 * Called when the socket is destroyed, which may be in softirq context:
 * must not sleep. The connection was stopped when the socket was closed.
 */
static void mpa_ulp_release(struct sock *sk)
{
	struct mpa_conn *c = mpa_conn(sk);

	if (!c)
		return;
	rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, NULL);
	mpa_conn_free(c);
}

struct tcp_ulp_ops mpa_ulp_ops __read_mostly = {
	.name		= "mpa",
	.owner		= THIS_MODULE,
	.init		= mpa_ulp_init,
	.release	= mpa_ulp_release,
};
EXPORT_SYMBOL_IF_KUNIT(mpa_ulp_ops);

int mpa_ulp_register(void)
{
	return tcp_register_ulp(&mpa_ulp_ops);
}

void mpa_ulp_unregister(void)
{
	tcp_unregister_ulp(&mpa_ulp_ops);
}
