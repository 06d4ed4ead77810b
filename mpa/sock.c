// SPDX-License-Identifier: GPL-2.0
/*
 * MPA sockets: the userspace face of an MPA connection. A TCP socket with
 * the "mpa" ULP gets MPA's struct proto and struct proto_ops, copies of
 * TCP's with the calls MPA must see replaced. Options at SOL_MPA configure
 * and run the startup phase; every other level still reaches TCP and IP.
 */
#include <kunit/visibility.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/sockios.h>
#include <linux/wait_bit.h>
#include <net/inet_common.h>
#include <net/transp_v6.h>
#include <asm/ioctls.h>
#include <net/tcp.h>

#include "conn.h"
#include "mpa.h"
#include "netns.h"

enum {
	MPA_V4,
	MPA_V6,
	MPA_NUM_FAMILIES,
};

/*
 * MPA's tables, copies of TCP's with MPA's calls put in (not const: built at
 * run time, as net/tls does). A published table is never written again:
 * every MPA socket of the family points at it for its whole life.
 *
 * IPv4's are built at module load from tcp_prot and inet_stream_ops. For
 * IPv6, tcpv6_prot is exported (GPL) but inet6_stream_ops is not: the
 * proto_ops table is built from the first TCPv6 socket attached whose
 * sk_prot is tcpv6_prot (no sockmap, no other ULP: those replace sk_prot)
 * and whose ops are TCP's where IPv4 and IPv6 share them (see
 * mpa_plain_tcp_ops()). Every later IPv6 socket must have those very ops.
 */
static struct proto mpa_prots[MPA_NUM_FAMILIES];
/* The same, while MPA_START drains the plain calls (mpa_plain_drain()) */
static struct proto mpa_kick_prots[MPA_NUM_FAMILIES];
static struct proto_ops mpa_proto_ops[MPA_NUM_FAMILIES];
/* The TCP proto_ops each table was built from, once it was */
static const struct proto_ops *mpa_base_ops[MPA_NUM_FAMILIES];
static DEFINE_MUTEX(mpa_prot_mutex);

static bool mpa_nonblock(const struct sock *sk)
{
	const struct socket *sock = sk->sk_socket;

	return sock && sock->file && (sock->file->f_flags & O_NONBLOCK);
}

/* The errno a finished startup reports, 0 for success. */
static int mpa_startup_errno(const struct mpa_conn *c)
{
	switch (mpa_conn_state(c)) {
	case MPA_STATE_REQUEST_RECEIVED:
	case MPA_STATE_FULL:
		return 0;
	case MPA_STATE_REJECTED:
		/* the peer's reject, or (Responder) its own on MPA's behalf */
		return -c->err.errnum;
	case MPA_STATE_FAILED:
		return -c->err.errnum;
	}
	return -EINPROGRESS;
}

/*
 * Until Full Operation the socket carries the plain stream (before the
 * startup phase, and after a reject); during the startup phase nothing may
 * cut into the frames; after a failure nothing more is delivered. In Full
 * Operation only MPA's own send and receive paths reach the stream: every
 * other way in or out gets EOPNOTSUPP.
 */
static int mpa_stream_errno(const struct mpa_conn *c)
{
	/* FAILED seen, c->err is too: pairs with mpa_conn_fail() */
	switch (smp_load_acquire(&c->state)) {
	case MPA_STATE_STREAMING:
	case MPA_STATE_REJECTED:
		return 0;
	case MPA_STATE_FAILED:
		return -c->err.errnum;
	case MPA_STATE_FULL:
		return -EOPNOTSUPP;
	}
	return -EINPROGRESS;
}

/*
 * MPA_START and the plain stream's calls. Before the startup phase a recv,
 * send or splice on the socket is TCP's own, and one may be in TCP, asleep
 * there, when another thread starts the startup phase. Woken later, it
 * would read the peer's frames and FPDUs as plain octets, unchecked, or
 * put plain octets behind our Request. So MPA_START first sends every such
 * call back out of TCP (mpa_plain_drain()), and each is then answered as
 * one made after it: EINPROGRESS during the startup phase.
 *
 * MPA counts the calls it hands TCP (@plain_calls), and MPA_START raises
 * @plain_drain: a call is counted before MPA_START looks, or it sees the
 * flag (or the new state) and does not go to TCP. A counted call asleep in
 * TCP (sk_wait_data(), sk_stream_wait_memory()) leaves it with -EPIPE once
 * sk_disconnects has moved on (sk_wait_event()), as after a disconnect,
 * which MPA never does itself (mpa_disconnect()); one that reaches TCP's
 * sleep only later is sent back as it releases the socket lock to sleep:
 * meanwhile the socket has a struct proto whose release_cb does that
 * (changed under the socket lock, as kTLS changes its own). A call made
 * before MPA was attached is not counted: sent back if it is asleep in TCP
 * then, it sees TCP's EPIPE.
 */
static void mpa_plain_kick(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	struct socket_wq *wq;

	sk->sk_disconnects++;
	WRITE_ONCE(c->plain_kicks, c->plain_kicks + 1);
	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

/* release_sock() while MPA_START drains (mpa_kick_prots), socket owned */
static void mpa_kick_release_cb(struct sock *sk)
{
	struct mpa_conn *c = mpa_conn(sk);

	mpa_plain_kick(c);
	c->sk_proto->release_cb(sk);
}

static int mpa_family(const struct sock *sk)
{
	return sk->sk_family == AF_INET ? MPA_V4 : MPA_V6;
}

static bool mpa_stream_plain(const struct mpa_conn *c)
{
	u8 state = mpa_conn_state(c);

	return state == MPA_STATE_STREAMING || state == MPA_STATE_REJECTED;
}

static void mpa_plain_exit(struct mpa_conn *c)
{
	/* the count, then the flag; mpa_plain_drain(): the flag, the count */
	if (atomic_dec_and_test(&c->plain_calls) &&
	    READ_ONCE(c->plain_drain))
		wake_up_var(&c->plain_calls);
}

/*
 * Before a plain call goes to TCP; mpa_plain_exit() after it.
 *
 * Return: 1 to go on, 0 if the stream may be plain no longer (look at the
 * state again), -EINPROGRESS while MPA_START drains: the call is one made
 * during the startup phase.
 */
static int mpa_plain_enter(struct mpa_conn *c)
{
	atomic_inc(&c->plain_calls);
	/* the count, then the flag; mpa_plain_drain(): the flag, the count */
	smp_mb__after_atomic();
	if (READ_ONCE(c->plain_drain)) {
		mpa_plain_exit(c);
		return -EINPROGRESS;
	}
	/* the state mpa_plain_drained() lowered the flag after */
	smp_rmb();
	if (mpa_stream_plain(c))
		return 1;
	mpa_plain_exit(c);
	return 0;
}

/*
 * A call of the plain stream: the stream's errno in the states without
 * one (mpa_stream_errno()), else mpa_plain_enter()'s answer: 1 to go to
 * TCP, 0 to look at the state again.
 */
static int mpa_plain_begin(struct mpa_conn *c)
{
	int ret = mpa_stream_errno(c);

	return ret ?: mpa_plain_enter(c);
}

/*
 * Did TCP's -EPIPE send the call back (mpa_plain_kick())? Not if TCP was
 * reset or (a send) shut down meanwhile: then it is TCP's own.
 */
static bool mpa_plain_kicked(const struct mpa_conn *c, long ret, u32 kicks,
			     bool send)
{
	const struct sock *sk = c->sk;

	return ret == -EPIPE && READ_ONCE(c->plain_kicks) != kicks &&
	       mpa_tcp_sends(sk) &&
	       !(send && (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN));
}

/* MPA_START is over, started or not: calls look at the state again. */
static void mpa_plain_drained(struct mpa_conn *c)
{
	/* after the new state; mpa_plain_enter() reads them in turn */
	smp_store_release(&c->plain_drain, false);
}

/*
 * MPA_START, socket locked: send every plain call out of TCP, and keep new
 * ones out until mpa_plain_drained().
 *
 * Return: 0, or -ERESTARTSYS with the drain over.
 */
static int mpa_plain_drain(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	int ret = 0;

	/* the flag, then the count; mpa_plain_enter(): the count, the flag */
	smp_store_mb(c->plain_drain, true);
	mpa_plain_kick(c);
	if (!atomic_read(&c->plain_calls))
		return 0;
	WRITE_ONCE(sk->sk_prot, &mpa_kick_prots[mpa_family(sk)]);
	do {
		release_sock(sk);
		ret = wait_var_event_interruptible(&c->plain_calls,
						   !atomic_read(&c->plain_calls));
		lock_sock(sk);
	} while (!ret && atomic_read(&c->plain_calls));
	WRITE_ONCE(sk->sk_prot, &mpa_prots[mpa_family(sk)]);
	if (ret)
		mpa_plain_drained(c);
	return ret;
}

static int mpa_opt_start(struct mpa_conn *c)
{
	bool again;
	long timeo;
	int ret;

	if (c->plain_drain)
		return -EALREADY;
	if (mpa_conn_state(c) == MPA_STATE_STREAMING) {
		/* no call sent back for a start that cannot be */
		ret = mpa_startup_check_config(c);
		if (ret)
			return ret;
		ret = mpa_plain_drain(c);
		if (ret)
			return ret;
		ret = mpa_startup_start(c);
		/* MPA's recv does not follow SO_PEEK_OFF: a value set before */
		if (!ret)
			WRITE_ONCE(c->sk->sk_peek_off, -1);
		mpa_plain_drained(c);
	} else {
		ret = mpa_startup_start(c);
	}
	/*
	 * A blocking start made again while the peer's frame is awaited
	 * (the first returned EINPROGRESS or EINTR) waits as the first did,
	 * as connect() does: EALREADY only if that wait runs out too.
	 */
	/*
	 * A start made again after a reject that the socket's error still
	 * holds (the first call returned EINPROGRESS or EINTR): that error,
	 * taken, as a second connect() after a refusal returns it
	 */
	if (ret == -EISCONN && mpa_conn_state(c) == MPA_STATE_REJECTED &&
	    READ_ONCE(c->sk->sk_err) == ECONNREFUSED && !c->refused_after_tx) {
		WRITE_ONCE(c->sk->sk_err, 0);
		return -ECONNREFUSED;
	}
	again = ret == -EALREADY && !mpa_nonblock(c->sk);
	if (ret && !(again && !mpa_startup_frame_received(c)))
		return ret;
	if (!mpa_startup_frame_received(c)) {
		if (mpa_nonblock(c->sk))
			return -EINPROGRESS;
		/*
		 * At most the socket's timeout, as connect() (an Initiator)
		 * and accept() (a Responder) wait; then the exchange goes on
		 * as after a non-blocking start.
		 */
		timeo = c->role == MPA_ROLE_INITIATOR ?
			sock_sndtimeo(c->sk, false) :
			sock_rcvtimeo(c->sk, false);
		ret = mpa_startup_wait(c, &timeo, mpa_startup_frame_received);
		if (ret == -EAGAIN)
			return again ? -EALREADY : -EINPROGRESS;
		if (ret)
			return ret;
	}
	ret = mpa_startup_errno(c);
	/*
	 * An Initiator rejected by the peer, a Responder that rejected the
	 * Request by itself: this call tells of it, so the socket's error
	 * does not tell it again (a Responder's is set once the Reply is
	 * out, or will not be now), as for connect().
	 */
	if (ret == -ECONNREFUSED) {
		if (c->refused_after_tx)
			c->refused_after_tx = false;
		else if (READ_ONCE(c->sk->sk_err) == ECONNREFUSED)
			WRITE_ONCE(c->sk->sk_err, 0);
	}
	return ret;
}

static int mpa_opt_answer(struct mpa_conn *c, bool reject, sockptr_t optval,
			  unsigned int optlen)
{
	u8 pd[MPA_MAX_PRIVATE_DATA];
	long timeo;
	int ret;

	/*
	 * An Initiator's answer takes no Private Data at all: EINVAL for
	 * any, whatever its length or address (mpa_startup_answer())
	 */
	if (c->role == MPA_ROLE_INITIATOR)
		return mpa_startup_answer(c, reject, NULL, optlen);
	if (optlen > sizeof(pd))
		return -EMSGSIZE;
	if (copy_from_sockptr(pd, optval, optlen))
		return -EFAULT;
	ret = mpa_startup_answer(c, reject, pd, optlen);
	if (ret || mpa_startup_finished(c))
		return ret;
	/* TCP's send buffer is full of earlier stream data */
	if (mpa_nonblock(c->sk))
		return -EINPROGRESS;
	timeo = sock_sndtimeo(c->sk, false);
	ret = mpa_startup_wait(c, &timeo, mpa_startup_finished);
	if (ret)
		return ret;
	if (mpa_conn_state(c) == MPA_STATE_FAILED)
		return -c->err.errnum;
	/* the reject stands, its Reply cut short: TCP's error, not taken */
	if (c->reply_cut)
		return -mpa_conn_tcp_errno(c);
	return 0;
}

static int mpa_get_u32(sockptr_t optval, unsigned int optlen, u32 *val)
{
	if (optlen != sizeof(*val))
		return -EINVAL;
	return copy_from_sockptr(val, optval, sizeof(*val)) ? -EFAULT : 0;
}

/* Options that configure the startup phase: only before it starts. */
static int mpa_set_config(struct mpa_conn *c, int optname, sockptr_t optval,
			  unsigned int optlen)
{
	struct mpa_policy *pol = &c->policy;
	struct mpa_enhanced enh;
	u32 val = 0;
	int ret;

	if (mpa_conn_state(c) != MPA_STATE_STREAMING || c->plain_drain)
		return -EBUSY;

	switch (optname) {
	case MPA_PRIVATE_DATA:
		if (optlen > MPA_MAX_PRIVATE_DATA)
			return -EMSGSIZE;
		return mpa_conn_set_local_pd(c, optval, optlen);
	case MPA_ENHANCED:
		if (optlen != sizeof(enh))
			return -EINVAL;
		if (copy_from_sockptr(&enh, optval, sizeof(enh)))
			return -EFAULT;
		if (enh.reserved || enh.flags & ~MPA_ENH_PEER_TO_PEER ||
		    enh.rtr & ~MPA_RTR_ALL || enh.ird > MPA_IRD_ORD_MAX ||
		    enh.ord > MPA_IRD_ORD_MAX)
			return -EINVAL;
		pol->ird = enh.ird;
		pol->ord = enh.ord;
		pol->p2p = enh.flags & MPA_ENH_PEER_TO_PEER;
		pol->rtr = enh.rtr;
		return 0;
	}

	ret = mpa_get_u32(optval, optlen, &val);
	if (ret)
		return ret;
	switch (optname) {
	case MPA_ROLE:
		if (val != MPA_ROLE_INITIATOR && val != MPA_ROLE_RESPONDER)
			return -EINVAL;
		c->role = val;
		return 0;
	case MPA_MARKERS:
		if (val > 1)
			return -EINVAL;
		pol->markers = val;
		return 0;
	case MPA_CRC:
		if (val > 1)
			return -EINVAL;
		/*
		 * RFC 5044 section 4.4: CRCs are on by default; only the
		 * administrator may allow a connection to announce C=0
		 * (R-4.4-4, R-4.4-5).
		 */
		if (!val && !mpa_net_crc_off_allowed(mpa_conn_net(c)))
			return -EPERM;
		pol->crc = val;
		return 0;
	case MPA_REVISION:
		if (val > MPA_REVISION_2)
			return -EINVAL;
		pol->rev = val;
		return 0;
	case MPA_PERMISSIVE:
		if (val > 1)
			return -EINVAL;
		pol->permissive = val;
		return 0;
	case MPA_TIMEOUT:
		/* 0: no limit, the application's own choice */
		c->timeout_ms = val;
		return 0;
	}
	return -ENOPROTOOPT;
}

static int mpa_do_setsockopt(struct mpa_conn *c, int optname, sockptr_t optval,
			     unsigned int optlen)
{
	switch (optname) {
	case MPA_START:
		return mpa_opt_start(c);
	case MPA_ACCEPT:
	case MPA_REJECT:
		return mpa_opt_answer(c, optname == MPA_REJECT, optval, optlen);
	case MPA_ROLE:
	case MPA_MARKERS:
	case MPA_CRC:
	case MPA_REVISION:
	case MPA_PERMISSIVE:
	case MPA_ENHANCED:
	case MPA_PRIVATE_DATA:
	case MPA_TIMEOUT:
		return mpa_set_config(c, optname, optval, optlen);
	}
	return -ENOPROTOOPT;
}

/* TCP options that would reach around the framing */
static bool mpa_tcp_opt_blocked(int level, int optname)
{
	if (level != SOL_TCP)
		return false;
	switch (optname) {
	case TCP_REPAIR:
	case TCP_REPAIR_QUEUE:
	case TCP_QUEUE_SEQ:
	case TCP_REPAIR_OPTIONS:
	case TCP_REPAIR_WINDOW:
		return true;
	}
	return false;
}

static int mpa_setsockopt(struct sock *sk, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	struct mpa_conn *c = mpa_conn(sk);
	int ret;

	/* Repair mode rewrites the queues and sequence numbers under us. */
	if (mpa_tcp_opt_blocked(level, optname))
		return -EOPNOTSUPP;
	if (level != SOL_MPA) {
		ret = c->sk_proto->setsockopt(sk, level, optname, optval,
					      optlen);
		/*
		 * TCP_NODELAY and TCP_CORK make TCP send what it holds: the
		 * FPDUs MPA holds as TCP would (the run, tx.c) go with it.
		 */
		if (level == SOL_TCP && READ_ONCE(c->tx_run.bv_len)) {
			lock_sock(sk);
			mpa_tx_push(c);
			release_sock(sk);
		}
		return ret;
	}
	lock_sock(sk);
	ret = mpa_do_setsockopt(c, optname, optval, optlen);
	release_sock(sk);
	return ret;
}

/* Copy @len octets of @val out; a shorter buffer gets -ERANGE or -EINVAL. */
static int mpa_put(char __user *optval, int __user *optlen, int len,
		   const void *val, int size, bool range)
{
	if (len < size) {
		if (!range)
			return -EINVAL;
		return put_user(size, optlen) ? -EFAULT : -ERANGE;
	}
	if (copy_to_user(optval, val, size) || put_user(size, optlen))
		return -EFAULT;
	return 0;
}

static int mpa_do_getsockopt(struct mpa_conn *c, int optname,
			     char __user *optval, int __user *optlen, int len)
{
	const struct mpa_policy *pol = &c->policy;
	union {
		u32 u;
		struct mpa_enhanced enh;
		struct mpa_frame_info fi;
		struct mpa_result res;
		struct mpa_error_info err;
		struct mpa_stats st;
	} v;
	int size = sizeof(u32);

	memset(&v, 0, sizeof(v));
	switch (optname) {
	case MPA_ROLE:
		v.u = c->role;
		break;
	case MPA_MARKERS:
		v.u = pol->markers;
		break;
	case MPA_CRC:
		v.u = pol->crc;
		break;
	case MPA_REVISION:
		v.u = pol->rev;
		break;
	case MPA_PERMISSIVE:
		v.u = pol->permissive;
		break;
	case MPA_TIMEOUT:
		v.u = c->timeout_ms;
		break;
	case MPA_STATE:
		v.u = mpa_conn_state(c);
		break;
	case MPA_ENHANCED:
		v.enh.ird = pol->ird;
		v.enh.ord = pol->ord;
		v.enh.flags = pol->p2p ? MPA_ENH_PEER_TO_PEER : 0;
		v.enh.rtr = pol->rtr;
		size = sizeof(v.enh);
		break;
	case MPA_PRIVATE_DATA:
		return mpa_put(optval, optlen, len, c->local_pd,
			       c->local_pd_len, true);
	case MPA_PEER_FRAME:
		if (!c->have_peer)
			return -ENODATA;
		mpa_conn_frame_info(c, &v.fi);
		size = sizeof(v.fi);
		break;
	case MPA_PEER_PRIVATE_DATA:
		if (!c->have_peer)
			return -ENODATA;
		return mpa_put(optval, optlen, len, c->peer.pd,
			       c->peer.ulp_pd_len, true);
	case MPA_RESULT:
		if (mpa_conn_state(c) != MPA_STATE_FULL)
			return -ENOTCONN;
		mpa_conn_result(c, &v.res);
		size = sizeof(v.res);
		break;
	case MPA_ERROR:
		v.err = c->err;
		size = sizeof(v.err);
		break;
	case MPA_STATS:
		mpa_conn_stats(c, &v.st);
		size = sizeof(v.st);
		break;
	default:
		return -ENOPROTOOPT;
	}
	return mpa_put(optval, optlen, len, &v, size, false);
}

static int mpa_getsockopt(struct sock *sk, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	struct mpa_conn *c = mpa_conn(sk);
	int len, ret;

	if (level == SOL_TCP && optname == TCP_ZEROCOPY_RECEIVE) {
		/* a plain call (mpa_plain_enter()), which never sleeps in TCP */
		do {
			ret = mpa_plain_begin(c);
			if (ret < 0)
				return ret;
		} while (!ret);
		ret = c->sk_proto->getsockopt(sk, level, optname, optval,
					      optlen);
		mpa_plain_exit(c);
		return ret;
	}
	if (level != SOL_MPA)
		return c->sk_proto->getsockopt(sk, level, optname, optval,
					       optlen);
	if (get_user(len, optlen))
		return -EFAULT;
	if (len < 0)
		return -EINVAL;
	lock_sock(sk);
	/*
	 * TCP may have woken the caller (an error, a FIN) before the work
	 * that runs the state machine did: answer with what it will find.
	 */
	mpa_startup_process(c);
	ret = mpa_do_getsockopt(c, optname, optval, optlen, len);
	release_sock(sk);
	return ret;
}

/*
 * After a reject the plain stream goes on right behind the Reply
 * (R-7.1.2-7): until TCP has taken the whole Reply, a send waits for it
 * (SO_SNDTIMEO, then EAGAIN; EAGAIN at once when not blocking) and poll
 * reports no EPOLLOUT. The Reply's rest goes from the work as TCP makes
 * room (mpa_write_space()), and from here.
 */
static int mpa_reply_wait(struct mpa_conn *c, int flags)
{
	struct sock *sk = c->sk;
	long timeo;
	int ret;

	if (mpa_startup_finished(c))
		return 0;
	lock_sock(sk);
	timeo = sock_sndtimeo(sk, flags & MSG_DONTWAIT);
	mpa_startup_push(c);
	ret = mpa_startup_wait(c, &timeo, mpa_startup_finished);
	release_sock(sk);
	return ret == -EINTR ? sock_intr_errno(timeo) : ret;
}

/*
 * The control messages of a send in Full Operation take no effect: MPA
 * hands TCP frames of its own, which carry none (kTLS too reads only its
 * own). One TCP would refuse (sock_cmsg_send()) is refused as TCP
 * refuses it, rather than silently ignored, and in TCP's order: a socket
 * that can no longer send (our own shutdown, a reset) tells that first
 * (mpa_tx_sendmsg()).
 */
static int mpa_sendmsg_cmsg(struct sock *sk, struct msghdr *msg)
{
	struct sockcm_cookie sockc;

	if (!((1 << READ_ONCE(sk->sk_state)) &
	      (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT)) ||
	    (READ_ONCE(sk->sk_shutdown) & SEND_SHUTDOWN))
		return 0;
	sockcm_init(&sockc, sk);
	return sock_cmsg_send(sk, msg, &sockc) ? -EINVAL : 0;
}

static int mpa_sendmsg(struct sock *sk, struct msghdr *msg, size_t size)
{
	struct mpa_conn *c = mpa_conn(sk);
	int flags = msg->msg_flags;
	u32 kicks;
	int ret;

again:
	if (mpa_conn_full(c)) {
		if (unlikely(msg->msg_controllen)) {
			ret = mpa_sendmsg_cmsg(sk, msg);
			if (ret)
				return ret;
		}
		ret = mpa_tx_send(c, msg, size);
		/*
		 * Full Operation ended meanwhile: the Initiator refused the
		 * Reply (plain stream), or the startup failed (its error)
		 */
		if (ret != -ENOTCONN || mpa_conn_full(c))
			return ret;
	}
	ret = mpa_plain_begin(c);
	/* -EOPNOTSUPP: Full Operation came since the check above */
	if (!ret || (ret == -EOPNOTSUPP && mpa_conn_full(c)))
		goto again;
	if (ret < 0)
		return ret;
	/*
	 * A Responder that rejected sends its whole Reply before the stream
	 * goes on (R-7.1.2-7). Read once the call is counted, with the state
	 * that let it through: the Reply was queued before the state
	 * (acquire, pairs with mpa_conn_set_state()).
	 */
	if (smp_load_acquire(&c->state) == MPA_STATE_REJECTED &&
	    !mpa_startup_finished(c)) {
		mpa_plain_exit(c);
		ret = mpa_reply_wait(c, msg->msg_flags);
		if (ret)
			return ret;
		goto again;
	}
	kicks = READ_ONCE(c->plain_kicks);
	/* TCP's SIGPIPE is for its own EPIPE, not for a call sent back */
	msg->msg_flags |= MSG_NOSIGNAL;
	ret = c->sk_proto->sendmsg(sk, msg, size);
	msg->msg_flags = flags;
	mpa_plain_exit(c);
	if (mpa_plain_kicked(c, ret, kicks, true))
		goto again;
	if (ret == -EPIPE && !(flags & MSG_NOSIGNAL))
		send_sig(SIGPIPE, current, 0);
	return ret;
}

static int mpa_recvmsg(struct sock *sk, struct msghdr *msg, size_t len,
		       int flags, int *addr_len)
{
	struct mpa_conn *c = mpa_conn(sk);
	u32 kicks;
	int ret;

	/* The error queue (timestamps, ICMP errors) carries no stream data */
	if (flags & MSG_ERRQUEUE)
		return c->sk_proto->recvmsg(sk, msg, len, flags, addr_len);
again:
	if (mpa_conn_full(c)) {
		lock_sock(sk);
		ret = mpa_rx_recvmsg(c, msg, len, flags);
		release_sock(sk);
		/*
		 * Full Operation ended meanwhile: the Initiator refused the
		 * Reply (plain stream), or the startup failed (its error)
		 */
		if (ret != -ENOTCONN || mpa_conn_full(c))
			return ret;
	}
	ret = mpa_plain_begin(c);
	/* -EOPNOTSUPP: Full Operation came since the check above */
	if (!ret || (ret == -EOPNOTSUPP && mpa_conn_full(c)))
		goto again;
	if (ret < 0)
		return ret;
	kicks = READ_ONCE(c->plain_kicks);
	ret = c->sk_proto->recvmsg(sk, msg, len, flags, addr_len);
	mpa_plain_exit(c);
	if (mpa_plain_kicked(c, ret, kicks, false))
		goto again;
	return ret;
}

static int mpa_ioctl(struct sock *sk, int cmd, int *karg)
{
	struct mpa_conn *c = mpa_conn(sk);

	/*
	 * In the startup and after a failed one, what TCP holds is frames,
	 * or FPDUs to come, none of it for recv, which returns nothing
	 */
	if (cmd == SIOCINQ && (mpa_conn_in_startup(c) ||
			       mpa_conn_state(c) == MPA_STATE_FAILED)) {
		*karg = 0;
		return 0;
	}
	/*
	 * MPA carries no urgent data (no EPOLLPRI either, mpa_poll()): once
	 * it frames the stream, TCP's urgent mark is an ordinary octet
	 */
	if (cmd == SIOCATMARK && !mpa_stream_plain(c)) {
		*karg = 0;
		return 0;
	}
	if (!mpa_conn_full(c))
		return c->sk_proto->ioctl(sk, cmd, karg);
	switch (cmd) {
	case SIOCINQ:
		lock_sock(sk);
		/* an Initiator's MPA_REJECT may have left MPA meanwhile */
		if (!mpa_conn_full(c)) {
			release_sock(sk);
			return c->sk_proto->ioctl(sk, cmd, karg);
		}
		*karg = mpa_rx_inq(c);
		release_sock(sk);
		return 0;
	case SIOCOUTQ:
	case SIOCOUTQNSD:
		/* TCP's figures count wire octets, Markers and CRCs */
		return -EOPNOTSUPP;
	}
	return c->sk_proto->ioctl(sk, cmd, karg);
}

/* Repair and disconnect would reset the stream under MPA's framing. */
static int mpa_disconnect(struct sock *sk, int flags)
{
	return -EOPNOTSUPP;
}

/*
 * shutdown(SHUT_WR) and close() never wait for the peer: what MPA holds
 * goes to TCP first, the FIN behind it (mpa_conn_flush()). What cannot go
 * yet, a Responder's held FPDUs (R-7.1.2-15) or FPDUs TCP has no memory
 * for, keeps shutdown()'s FIN behind it, to follow once it goes
 * (mpa_conn_shut_wr()); close() cannot wait, and resets rather than close
 * with a gap.
 */
static bool mpa_holds(const struct mpa_conn *c)
{
	return READ_ONCE(c->tx_sent) != READ_ONCE(c->tx_len) ||
	       mpa_tx_unsent(c);
}

/* Held FPDUs (R-7.1.2-15) wait for the Initiator's first valid FPDU */
static bool mpa_holds_back(const struct mpa_conn *c)
{
	return c->tx_held && mpa_tx_pending(c);
}

static void mpa_shutdown(struct sock *sk, int how)
{
	struct mpa_conn *c = mpa_conn(sk);

	/* inet_shutdown() already marked the socket */
	if (how & SEND_SHUTDOWN)
		mpa_conn_shut_wr(c);
	else
		c->sk_proto->shutdown(sk, how);
}

static ssize_t mpa_splice_read(struct socket *sock, loff_t *ppos,
			       struct pipe_inode_info *pipe, size_t len,
			       unsigned int flags)
{
	struct mpa_conn *c = mpa_conn(sock->sk);
	u32 kicks;
	ssize_t ret;

	for (;;) {
		ret = mpa_plain_begin(c);
		if (ret < 0)
			return ret;
		if (!ret)
			continue;
		kicks = READ_ONCE(c->plain_kicks);
		ret = c->sk_ops->splice_read(sock, ppos, pipe, len, flags);
		mpa_plain_exit(c);
		if (!mpa_plain_kicked(c, ret, kicks, false))
			return ret;
	}
}

static int mpa_read_sock(struct sock *sk, read_descriptor_t *desc,
			 sk_read_actor_t recv_actor)
{
	struct mpa_conn *c = mpa_conn(sk);
	int ret = mpa_stream_errno(c);

	return ret ?: c->sk_ops->read_sock(sk, desc, recv_actor);
}

static int mpa_mmap(struct file *file, struct socket *sock,
		    struct vm_area_struct *vma)
{
	struct mpa_conn *c = mpa_conn(sock->sk);
	int ret = mpa_stream_errno(c);

	return ret ?: c->sk_ops->mmap(file, sock, vma);
}

/*
 * Readiness follows the startup phase: a Responder with a Request to judge
 * is readable; an Initiator's non-blocking MPA_START is over when the
 * socket is writable (Full Operation or rejected) or has an error, as for
 * connect(). @mask is TCP's (tcp_poll()), read before MPA's state.
 */
VISIBLE_IF_KUNIT __poll_t mpa_poll_mask(struct mpa_conn *c, __poll_t mask)
{
	struct sock *sk = c->sk;
	/* REJECTED: before its Reply's length (mpa_conn_set_state()) */
	u8 state = smp_load_acquire(&c->state);

	/*
	 * MPA carries no urgent data: once it frames the stream, TCP's
	 * urgent mark (an ordinary octet to MPA) means nothing to the reader.
	 */
	if (state != MPA_STATE_STREAMING && state != MPA_STATE_REJECTED)
		mask &= ~EPOLLPRI;
	switch (state) {
	case MPA_STATE_FULL:
		/*
		 * Readable: a whole FPDU or a receive error (which may have
		 * left TCP's queue empty: copy mode, discarding), an error
		 * on the socket or the end of the stream.
		 */
		if (READ_ONCE(c->rx_ready) || READ_ONCE(c->rx_err))
			mask |= EPOLLIN | EPOLLRDNORM;
		else if (!READ_ONCE(sk->sk_err) &&
			 !(READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN))
			mask &= ~(EPOLLIN | EPOLLRDNORM);
		/* a send fails at once then, whatever the room */
		if (mpa_conn_held_for_good(c))
			mask |= EPOLLOUT | EPOLLWRNORM;
		break;
	case MPA_STATE_AWAIT_REQUEST:
	case MPA_STATE_AWAIT_REPLY:
		mask &= ~(EPOLLIN | EPOLLRDNORM | EPOLLOUT | EPOLLWRNORM);
		break;
	case MPA_STATE_REQUEST_RECEIVED:
		mask &= ~(EPOLLOUT | EPOLLWRNORM);
		mask |= EPOLLIN | EPOLLRDNORM;
		break;
	case MPA_STATE_REJECTED:
		/*
		 * The stream goes on behind the whole Reply only. A refusal's
		 * error is set before the Reply counts as out
		 * (mpa_startup_frame_out()): tcp_poll() may have read it
		 * before that.
		 */
		if (!mpa_startup_finished(c))
			mask &= ~(EPOLLOUT | EPOLLWRNORM);
		else if (READ_ONCE(sk->sk_err))
			mask |= EPOLLERR;
		break;
	case MPA_STATE_FAILED:
		/*
		 * The error and the shutdown are set before FAILED is
		 * published (mpa_conn_fail()), or before a Reply that goes
		 * before the close (Appendix C.2.1) counts as out; until then
		 * that close tells the failure. tcp_poll() may have read them
		 * before, and mpa_conn_flush() lifts SEND_SHUTDOWN for a
		 * moment: a failed startup's TCP is shut down for good.
		 */
		if (smp_load_acquire(&c->close_after_tx)) {
			mask &= ~(EPOLLIN | EPOLLRDNORM | EPOLLOUT | EPOLLWRNORM);
			break;
		}
		if (READ_ONCE(sk->sk_err))
			mask |= EPOLLERR;
		mask |= EPOLLHUP;
		break;
	}
	return mask;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_poll_mask);

static __poll_t mpa_poll(struct file *file, struct socket *sock,
			 struct poll_table_struct *wait)
{
	return mpa_poll_mask(mpa_conn(sock->sk), tcp_poll(file, sock, wait));
}

/*
 * Closing follows TCP's close (Documentation/networking/mpa.rst,
 * "Closing"): it returns at once, and what MPA holds goes to TCP, which
 * sends it in the background with the FIN last; SO_LINGER {1, 0} resets
 * instead, dropping it; SO_LINGER {1, N} is TCP's, waiting at most N
 * seconds for the peer to take it all. The order is kTLS's: the work and
 * the timer first (they take the socket lock), then under the socket lock
 * the flush and the callbacks, then TCP's close.
 */
static void mpa_close(struct sock *sk, long timeout)
{
	struct mpa_conn *c = mpa_conn(sk);

	mpa_conn_stop(c);
	lock_sock(sk);
	/* no more callbacks for an in-kernel consumer, detached or not */
	WRITE_ONCE(c->kops, NULL);
	/*
	 * Never a FIN after a gap; nor one with octets of an FPDU unread
	 * that copy mode took out of TCP's queue (TCP resets for the octets
	 * it holds itself, RFC 2525).
	 */
	if (!(sock_flag(sk, SOCK_LINGER) && !READ_ONCE(sk->sk_lingertime)) &&
	    ((mpa_holds(c) && !mpa_conn_flush(c)) || mpa_holds_back(c) ||
	     (c->rx_cfill && !c->rx_err)))
		mpa_conn_abort(c);
	mpa_conn_detach(c);
	mpa_tx_release(c);
	mpa_rx_release(c);
	mpa_startup_release(c);
	mpa_conn_closed(c);
	release_sock(sk);
	c->sk_proto->close(sk, timeout);
}

/*
 * SOL_SOCKET options reach us (SOCK_CUSTOM_SOCKOPT) so that SO_OOBINLINE
 * stays on: MPA has no urgent data, an urgent octet is a stream octet.
 */
static int mpa_sock_setsockopt(struct socket *sock, int level, int optname,
			       sockptr_t optval, unsigned int optlen)
{
	struct mpa_conn *c = mpa_conn(sock->sk);
	int val;

	if (level != SOL_SOCKET)
		return c->sk_ops->setsockopt(sock, level, optname, optval,
					     optlen);
	if (optname == SO_OOBINLINE && optlen >= sizeof(val)) {
		if (copy_from_sockptr(&val, optval, sizeof(val)))
			return -EFAULT;
		if (!val)
			return -EOPNOTSUPP;
		/* the value checked, not the caller's again (it may change) */
		optval = KERNEL_SOCKPTR(&val);
		optlen = sizeof(val);
	}
	return sock_setsockopt(sock, level, optname, optval, optlen);
}

/*
 * SO_RCVLOWAT (also from bpf_setsockopt()): TCP calls sk_data_ready only
 * once that many octets are queued, and MPA learns of frames and FPDUs
 * there. On the plain stream (before the startup phase, after a reject)
 * it is TCP's; from the startup phase on only 1 is taken, and MPA_START
 * refuses a socket with more (mpa_startup_check_config()): recv returns
 * whole ULPDUs, whatever their size.
 */
static int mpa_set_rcvlowat(struct sock *sk, int val)
{
	struct mpa_conn *c = mpa_conn(sk);
	u8 state = mpa_conn_state(c);

	/* from MPA_START on (socket locked: @plain_drain is stable) */
	if ((state == MPA_STATE_STREAMING && !c->plain_drain) ||
	    state == MPA_STATE_REJECTED)
		return c->sk_ops->set_rcvlowat(sk, val);
	if (val > 1)
		return -EOPNOTSUPP;
	WRITE_ONCE(sk->sk_rcvlowat, 1);
	return 0;
}

/*
 * SO_PEEK_OFF is TCP's on the plain stream. MPA's recv always peeks from
 * what is left of the current ULPDU: refused from MPA_START on, rather
 * than taken and ignored. (Without the socket lock: a value that gets
 * through while MPA_START runs is TCP's, which MPA's recv never reads.)
 */
static int mpa_set_peek_off(struct sock *sk, int val)
{
	struct mpa_conn *c = mpa_conn(sk);

	if (!mpa_stream_plain(c) || READ_ONCE(c->plain_drain))
		return -EOPNOTSUPP;
	return c->sk_ops->set_peek_off(sk, val);
}

/*
 * connect(AF_UNSPEC) would disconnect TCP under MPA (mpa_disconnect()
 * refuses it). Refused here, before inet_stream_connect() marks the
 * socket as disconnecting and wakes its waiters with EPIPE.
 */
static int mpa_connect(struct socket *sock, struct sockaddr *uaddr,
		       int addr_len, int flags)
{
	struct mpa_conn *c = mpa_conn(sock->sk);

	/* the tests of __inet_stream_connect(), in its order */
	if (uaddr && (size_t)addr_len >= sizeof(uaddr->sa_family) &&
	    uaddr->sa_family == AF_UNSPEC)
		return -EOPNOTSUPP;
	return c->sk_ops->connect(sock, uaddr, addr_len, flags);
}

static void mpa_build_proto(struct proto *prot, const struct proto *base)
{
	*prot = *base;
	prot->close = mpa_close;
	prot->setsockopt = mpa_setsockopt;
	prot->getsockopt = mpa_getsockopt;
	prot->sendmsg = mpa_sendmsg;
	prot->recvmsg = mpa_recvmsg;
	prot->ioctl = mpa_ioctl;
	prot->disconnect = mpa_disconnect;
	prot->shutdown = mpa_shutdown;
	/* No sockmap: its verdicts would read and write around MPA. */
	prot->psock_update_sk_prot = NULL;
}

static void mpa_build_proto_ops(struct proto_ops *ops, const struct proto_ops *base)
{
	*ops = *base;
	ops->poll = mpa_poll;
	ops->splice_read = mpa_splice_read;
	ops->read_sock = mpa_read_sock;
	ops->mmap = mpa_mmap;
	ops->setsockopt = mpa_sock_setsockopt;
	ops->set_rcvlowat = mpa_set_rcvlowat;
	ops->set_peek_off = mpa_set_peek_off;
	ops->connect = mpa_connect;
}

/*
 * Are @ops TCP's own, for @family? IPv6 TCP shares most of its calls with
 * IPv4's inet_stream_ops; a table that replaced any of those (another
 * ULP's, MPA's own) is not TCP's.
 */
static bool mpa_plain_tcp_ops(const struct proto_ops *ops, int family)
{
	const struct proto_ops *v4 = &inet_stream_ops;

	return ops->family == family &&
	       ops->poll == v4->poll &&
	       ops->setsockopt == v4->setsockopt &&
	       ops->getsockopt == v4->getsockopt &&
	       ops->shutdown == v4->shutdown &&
	       ops->splice_read == v4->splice_read &&
	       ops->read_sock == v4->read_sock &&
	       ops->read_skb == v4->read_skb &&
	       ops->sendmsg_locked == v4->sendmsg_locked &&
	       ops->mmap == v4->mmap &&
	       ops->set_rcvlowat == v4->set_rcvlowat &&
	       ops->connect == v4->connect;
}

/**
 * mpa_sock_init() - build the IPv4 tables and the IPv6 struct proto
 *
 * Called once at module load, before the ULP is registered.
 */
void mpa_sock_init(void)
{
	mpa_build_proto(&mpa_prots[MPA_V4], &tcp_prot);
	mpa_build_proto_ops(&mpa_proto_ops[MPA_V4], &inet_stream_ops);
	mpa_base_ops[MPA_V4] = &inet_stream_ops;
#if IS_ENABLED(CONFIG_IPV6)
	mpa_build_proto(&mpa_prots[MPA_V6], &tcpv6_prot);
#endif
	for (int f = 0; f < MPA_NUM_FAMILIES; f++) {
		mpa_kick_prots[f] = mpa_prots[f];
		mpa_kick_prots[f].release_cb = mpa_kick_release_cb;
	}
}

#if IS_ENABLED(CONFIG_IPV6)
/* Are @ops IPv6's TCP proto_ops? The first such ops build MPA's table. */
static bool mpa_sock_v6_ops(const struct proto_ops *ops)
{
	const struct proto_ops *base;

	/* Pairs with the release below: a table is complete once seen. */
	base = smp_load_acquire(&mpa_base_ops[MPA_V6]);
	if (!base) {
		mutex_lock(&mpa_prot_mutex);
		base = mpa_base_ops[MPA_V6];
		if (!base && mpa_plain_tcp_ops(ops, PF_INET6)) {
			mpa_build_proto_ops(&mpa_proto_ops[MPA_V6], ops);
			base = ops;
			/* Publish the table after it is written. */
			smp_store_release(&mpa_base_ops[MPA_V6], base);
		}
		mutex_unlock(&mpa_prot_mutex);
	}
	return ops == base;
}
#endif

/*
 * The family's tables for @sk, if @sk is a plain TCP socket of that family:
 * sk_prot TCP's own (a socket in a sockmap or sockhash has the sockmap's,
 * one with another ULP that ULP's) and its ops TCP's.
 *
 * Return: MPA_V4, MPA_V6 or -EBUSY.
 */
static int mpa_sock_family(struct sock *sk)
{
	const struct proto_ops *ops = sk->sk_socket->ops;

	if (sk->sk_family == AF_INET)
		return sk->sk_prot == &tcp_prot && ops == &inet_stream_ops ?
		       MPA_V4 : -EBUSY;
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6 && sk->sk_prot == &tcpv6_prot)
		return mpa_sock_v6_ops(ops) ? MPA_V6 : -EBUSY;
#endif
	return -EBUSY;
}

/**
 * mpa_sock_attach() - make a TCP socket an MPA socket
 * @sk: a connected TCP socket, locked
 *
 * The socket must be MPA's alone: not in a sockmap or sockhash (a psock),
 * no other kernel user's (sk_user_data), not in repair mode, and with
 * TCP's own struct proto and proto_ops, which MPA replaces by its own.
 *
 * Return: 0, -ENOTCONN, -EBUSY or -ENOMEM.
 */
int mpa_sock_attach(struct sock *sk)
{
	struct mpa_conn *c;
	int f;

	/*
	 * MPA frames a connected byte stream: the startup frames are the
	 * first octets each side sends once the ULP is attached (R-7.1-1).
	 */
	if (sk->sk_state != TCP_ESTABLISHED || !sk->sk_socket)
		return -ENOTCONN;
	/* A psock lives in sk_user_data too. */
	if (READ_ONCE(sk->sk_user_data) || tcp_sk(sk)->repair)
		return -EBUSY;
	f = mpa_sock_family(sk);
	if (f < 0)
		return f;

	c = mpa_conn_create(sk, sk->sk_allocation);
	if (!c)
		return -ENOMEM;
	c->sk_ops = sk->sk_socket->ops;
	/*
	 * MPA carries no urgent data: a peer's urgent octet is an ordinary
	 * octet of the stream, which the framing then judges. TCP must
	 * neither hide it nor stop counting queued octets at it.
	 */
	sock_set_flag(sk, SOCK_URGINLINE);
	set_bit(SOCK_CUSTOM_SOCKOPT, &sk->sk_socket->flags);
	WRITE_ONCE(sk->sk_prot, &mpa_prots[f]);
	WRITE_ONCE(sk->sk_socket->ops, &mpa_proto_ops[f]);
	return 0;
}
