// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel consumers' face of an MPA connection (include/net/mpa.h):
 * the same connection object, startup state machine and data path as MPA
 * sockets, driven by calls and callbacks instead of socket options.
 *
 * Callbacks are made by mpa_kapi_run(), under the socket lock, from the
 * connection's work item and at the end of each call into this API. It
 * reports what changed since it last ran (state, errors, the end of the
 * stream) and hands over ULPDUs until the consumer pauses. A callback may
 * call back into the API: the socket is then already locked by the same
 * task, which @kcb_task tells.
 */
#include <linux/export.h>
#include <linux/skbuff.h>
#include <net/tcp.h>

#include "conn.h"
#include "mpa.h"
#include "netns.h"

/*
 * Is this a call from inside one of our callbacks? An interrupt or a
 * softirq that comes while the task runs mpa_kapi_run() has the same
 * current, but is not.
 */
static bool mpa_kin_callback(const struct mpa_conn *c)
{
	return in_task() && READ_ONCE(c->kcb_task) == current;
}

/* Lock the socket unless a callback of ours already holds it. */
static bool mpa_klock(struct mpa_conn *c)
{
	if (mpa_kin_callback(c))
		return false;
	lock_sock(c->sk);
	return true;
}

static void mpa_kunlock(struct mpa_conn *c, bool locked)
{
	if (!locked)
		return;
	mpa_kapi_run(c);
	release_sock(c->sk);
}

static void mpa_kreport_frame(struct mpa_conn *c, bool request)
{
	const struct mpa_kops *ops = c->kops;
	struct mpa_frame_info fi;

	if (!ops || !c->have_peer || !(request ? ops->request : ops->reply))
		return;
	mpa_conn_frame_info(c, &fi);
	if (request)
		ops->request(c, c->kpriv, &fi, c->peer.pd, c->peer.ulp_pd_len);
	else
		ops->reply(c, c->kpriv, &fi, c->peer.pd, c->peer.ulp_pd_len);
}

static void mpa_kreport_error(struct mpa_conn *c)
{
	if (c->kended || !c->kops)
		return;
	c->kended = true;
	if (c->kops->error)
		c->kops->error(c, c->kpriv, &c->err);
}

/*
 * Tell the consumer about a state it has not seen yet. Each callback may
 * detach (mpa_kdetach()): c->kops is read again before the next one.
 */
static void mpa_kreport_state(struct mpa_conn *c, u8 state)
{
	bool initiator = c->role == MPA_ROLE_INITIATOR;

	switch (state) {
	case MPA_STATE_REQUEST_RECEIVED:
		mpa_kreport_frame(c, true);
		break;
	case MPA_STATE_FULL:
		if (initiator)
			mpa_kreport_frame(c, false);
		/* unless the reply callback refused it (mpa_kreject()) */
		if (c->kops && c->kops->established && mpa_conn_full(c))
			c->kops->established(c, c->kpriv);
		break;
	case MPA_STATE_REJECTED:
		/*
		 * A reject the consumer made (mpa_kreject()) is nothing to
		 * tell it; the peer's reject, or MPA's own on a Responder's
		 * behalf (no RTR type in common), has an errno.
		 */
		if (!c->err.errnum)
			break;
		if (initiator)
			mpa_kreport_frame(c, false);
		mpa_kreport_error(c);
		break;
	case MPA_STATE_FAILED:
		if (initiator && c->have_peer)
			mpa_kreport_frame(c, false);
		mpa_kreport_error(c);
		break;
	}
}

/* Full Operation: hand over ULPDUs; report errors and the end. */
static void mpa_kdeliver(struct mpa_conn *c)
{
	struct mpa_ulpdu u;
	bool eof;
	int ret;

	/* until the consumer detaches, from a callback too */
	while (c->kops && !c->kpaused && !c->kended) {
		ret = mpa_rx_ulpdu(c, &u);
		if (ret == -EAGAIN) {
			/*
			 * Nothing whole: has the stream ended? A soft error
			 * does not end it, and the consumer has no reader
			 * to tell it to: it is read here, where TCP's reader
			 * would.
			 */
			if (mpa_tcp_soft_error(c))
				sock_error(c->sk);
			ret = mpa_rx_end(c, &eof);
			/*
			 * A reset is an error, its errno read already or not,
			 * also after the peer's close was told: the consumer
			 * may still be sending, or wait for room to.
			 */
			if (ret || c->rx_err || c->rx_reset) {
				if (!c->err.errnum)
					c->err.errnum = -ret;
				mpa_kreport_error(c);
			} else if (eof && !c->kclosed) {
				c->kclosed = true;
				if (c->kops->closed)
					c->kops->closed(c, c->kpriv);
			}
			return;
		}
		if (ret) {
			mpa_kreport_error(c);	/* CRC, Marker: code 2, 3 */
			return;
		}
		/* mpa_kresume() from inside the callback clears it again */
		c->kpaused = true;
		ret = c->kops->ulpdu(c, c->kpriv, &u);
		/*
		 * Any error, not only -EAGAIN, leaves the ULPDU queued: a
		 * validated ULPDU is never dropped for want of memory. Unless
		 * a reset from inside the callback purged it: nothing is left
		 * to keep, and the loop tells the error now.
		 */
		if (ret < 0 && mpa_ulpdu_live(&u)) {
			/*
			 * Back-pressure: it stays queued, the window closes.
			 * Resumed from inside the callback: called again from
			 * the work, once the socket lock was let go, never in
			 * a loop under it (a consumer that always refuses and
			 * resumes would hold the socket for good).
			 */
			if (!c->kpaused)
				mpa_conn_schedule(c);
			return;
		}
		c->kpaused = false;
		mpa_rx_advance(c, u.len - u.done);
	}
}

/**
 * mpa_kapi_run() - tell an in-kernel consumer what happened
 * @c: the connection, socket locked, process context
 */
void mpa_kapi_run(struct mpa_conn *c)
{
	u8 state;

	if (!c->kops || c->kbusy)
		return;
	c->kbusy = true;
	WRITE_ONCE(c->kcb_task, current);
	for (;;) {
		/*
		 * Each callback may change the state: the consumer's own
		 * reject (mpa_kreject(), from writable too), or a failure
		 */
		state = mpa_conn_state(c);
		if (state != c->kseen && c->kops) {
			c->kseen = state;
			mpa_kreport_state(c, state);
			continue;
		}
		if (state != MPA_STATE_FULL)
			break;
		/*
		 * A writable callback may resume delivery (mpa_kresume()
		 * inside a callback only clears kpaused): deliver until
		 * nothing changes.
		 */
		mpa_kdeliver(c);
		if (!c->kops || !c->kwant_room)
			break;
		/*
		 * The consumer waits for room. The ACK that queued us may have
		 * had sk_stream_write_space() clear SOCK_NOSPACE, and a send
		 * since (a callback's, or the push of what MPA held, which
		 * TCP may take past sk_sndbuf) used the room up: armed again,
		 * the next ACK calls back. Armed before the check, as
		 * sk_stream_wait_memory() does, an ACK in between is not lost.
		 */
		if (c->sk->sk_socket) {
			set_bit(SOCK_NOSPACE, &c->sk->sk_socket->flags);
			/* the bit before the room: pairs with TCP's ACK side */
			smp_mb__after_atomic();
		}
		/* held for good: no room comes, but a send no longer waits */
		if (!mpa_tx_room(c) && !mpa_conn_held_for_good(c))
			break;
		WRITE_ONCE(c->kwant_room, false);
		if (c->kops->writable)
			c->kops->writable(c, c->kpriv);
	}
	WRITE_ONCE(c->kcb_task, NULL);
	c->kbusy = false;
}

static int mpa_kcheck_params(const struct net *net,
			     const struct mpa_kparams *p)
{
	u32 max_pd = MPA_MAX_PRIVATE_DATA;

	if (p->role != MPA_ROLE_INITIATOR && p->role != MPA_ROLE_RESPONDER)
		return -EINVAL;
	if (p->revision > MPA_REVISION_2 || (p->rev0 && p->revision))
		return -EINVAL;
	if (p->enhanced.reserved ||
	    p->enhanced.flags & ~MPA_ENH_PEER_TO_PEER ||
	    p->enhanced.rtr & ~MPA_RTR_ALL ||
	    p->enhanced.ird > MPA_IRD_ORD_MAX ||
	    p->enhanced.ord > MPA_IRD_ORD_MAX)
		return -EINVAL;
	if (p->revision == MPA_REVISION_2)
		max_pd = MPA_V2_PRIVATE_DATA;
	if (p->pd_len && !p->pd)
		return -EINVAL;
	if (p->pd_len > max_pd)
		return -EMSGSIZE;
	/* RFC 5044 section 4.4: only the administrator turns CRCs off */
	if (p->no_crc && !mpa_net_crc_off_allowed(net))
		return -EPERM;
	return 0;
}

static int mpa_kconfigure(struct mpa_conn *c, const struct mpa_kparams *p)
{
	struct mpa_policy *pol = &c->policy;

	c->role = p->role;
	pol->markers = p->markers;
	pol->crc = !p->no_crc;
	/* revision 0: the namespace's default, set when MPA was attached */
	if (p->rev0)
		pol->rev = MPA_REVISION_0;
	else if (p->revision)
		pol->rev = p->revision;
	pol->permissive = p->permissive;
	if (pol->rev == MPA_REVISION_2 || p->role == MPA_ROLE_RESPONDER) {
		pol->ird = p->enhanced.ird;
		pol->ord = p->enhanced.ord;
		pol->p2p = p->enhanced.flags & MPA_ENH_PEER_TO_PEER;
		pol->rtr = p->enhanced.rtr;
	}
	if (p->timeout_ms)
		c->timeout_ms = p->timeout_ms;
	/* only read from: a sockptr_t has no const kind */
	return mpa_conn_set_local_pd(c, KERNEL_SOCKPTR((void *)p->pd),
				     p->pd_len);
}

/**
 * mpa_kattach() - run MPA on a connected kernel TCP socket
 * @sock: the socket, connected (IPv4 or IPv6); it stays the consumer's
 * @params: role and startup choices (copied)
 * @ops: the consumer's callbacks; must stay valid until mpa_kdetach()
 * @priv: passed to them
 *
 * Attaches the "mpa" ULP and starts the startup phase: an Initiator sends
 * its Request, a Responder waits for one. What follows arrives through
 * @ops, from process context, and may begin before this call returns (a
 * peer's frame already queued is read at once): @priv must be ready for
 * callbacks, which get the connection as their first argument. The
 * socket is the consumer's to release
 * (after mpa_kdetach()); releasing it never waits for the peer: what MPA
 * still holds goes to TCP, which sends it and then the FIN in the
 * background (after sock_no_linger(), a reset instead).
 *
 * Context: process context, the socket not locked.
 * The socket must be MPA's alone: -EBUSY if its sk_user_data is set (it is
 * another kernel user's, or has a psock: it is in a sockmap), it is in
 * TCP_REPAIR mode, or its sk_prot or proto_ops are not TCP's own. MPA
 * makes it SO_OOBINLINE: a peer's urgent octet is a stream octet.
 *
 * Return: the connection, or an ERR_PTR(): -EINVAL for bad arguments (@ops
 * without &mpa_kops.ulpdu, a &mpa_kparams.pd_len without its
 * &mpa_kparams.pd included, an Initiator of Rev 2 asking for peer-to-peer
 * with no RTR type to offer) or a socket with SO_RCVLOWAT above 1,
 * -EMSGSIZE for too much Private Data,
 * -EPERM for C=0 without the administrator's leave, -ENOTCONN if @sock is
 * not connected, -EEXIST if it has a ULP already, -EBUSY (above), -ENOMEM
 * without memory (for MPA, its Private Data or the startup phase). On
 * error the socket is unchanged, or, if MPA got attached, in the
 * plain-stream state.
 */
struct mpa_conn *mpa_kattach(struct socket *sock,
			     const struct mpa_kparams *params,
			     const struct mpa_kops *ops, void *priv)
{
	char name[] = MPA_ULP_NAME;
	struct mpa_conn *c;
	struct sock *sk;
	int ret;

	if (!sock || !sock->sk || !params || !ops || !ops->ulpdu)
		return ERR_PTR(-EINVAL);
	sk = sock->sk;
	if (!sk_is_tcp(sk))
		return ERR_PTR(-EINVAL);
	ret = mpa_kcheck_params(sock_net(sk), params);
	if (ret)
		return ERR_PTR(ret);
	ret = sock->ops->setsockopt(sock, SOL_TCP, TCP_ULP,
				    KERNEL_SOCKPTR(name), sizeof(name) - 1);
	if (ret)
		return ERR_PTR(ret);

	lock_sock(sk);
	c = mpa_conn(sk);
	ret = mpa_kconfigure(c, params);
	if (ret) {
		release_sock(sk);
		return ERR_PTR(ret);
	}
	c->kseen = MPA_STATE_STREAMING;
	c->kpriv = priv;
	WRITE_ONCE(c->kops, ops);
	WRITE_ONCE(c->kernel, true);
	ret = mpa_startup_start(c);
	if (ret) {
		WRITE_ONCE(c->kops, NULL);
		release_sock(sk);
		return ERR_PTR(ret);
	}
	mpa_kapi_run(c);
	release_sock(sk);
	return c;
}
EXPORT_SYMBOL_GPL(mpa_kattach);

/**
 * mpa_kdetach() - no more callbacks
 * @c: the connection
 *
 * Called outside a callback: once it returns no callback runs or is
 * running, and none will; the consumer may then free what @priv points
 * to and release the socket. Called from one of @c's callbacks (e.g.
 * &mpa_kops.error), no other callback follows the one running, which
 * still runs until it returns: release the socket elsewhere, e.g. from a
 * work item of the consumer's (inside the callback, the release would
 * wait for the callback itself), and free @priv after that release,
 * which waits for the callback. A ULPDU that callback refused stays in
 * TCP's queue. The exception:
 * &mpa_ktx.done of a zero-copy send still runs whenever TCP lets go of
 * its pages, possibly long after, or inside the release of the socket; a
 * &struct mpa_ktx and what its done touches must live until then.
 * Calling it again does nothing more.
 *
 * Context: process context, from a callback of @c or not. Outside a
 * callback, never with a lock held that a callback of @c takes: it waits
 * for a callback running, as the release of the socket does, and that
 * callback would wait for the lock.
 */
void mpa_kdetach(struct mpa_conn *c)
{
	bool locked = mpa_klock(c);

	/* the callbacks' loops read it again after each callback */
	WRITE_ONCE(c->kops, NULL);
	/* no one to call back: ACKs need not wake the work for room */
	WRITE_ONCE(c->kwant_room, false);
	if (locked)
		release_sock(c->sk);
}
EXPORT_SYMBOL_GPL(mpa_kdetach);

static int mpa_kanswer(struct mpa_conn *c, bool reject, const void *pd,
		       u32 pd_len)
{
	bool locked;
	int ret;

	if (pd_len && !pd)
		return -EINVAL;
	locked = mpa_klock(c);
	ret = mpa_startup_answer(c, reject, pd, pd_len);
	mpa_kunlock(c, locked);
	return ret;
}

/**
 * mpa_kaccept() - the Responder accepts the Request: Full Operation
 * @c: the connection, after &mpa_kops.request
 * @pd: the Reply's Private Data (copied), or NULL
 * @pd_len: its length: at most 512 octets, 508 with Rev 2
 *
 * The startup timeout (&mpa_kparams.timeout_ms) bounds how long the
 * Request waits for its answer too.
 *
 * Context: process context, from a callback or not. Called outside one,
 * it may run the callbacks that are due before it returns (&struct
 * mpa_kops): the caller must not hold a lock that they take.
 * Return: 0, -EINVAL when no Request waits for an answer, -EMSGSIZE,
 * -ETIMEDOUT when the answer came too late, -ECONNRESET after the peer's
 * reset, TCP's own error when TCP gave up (its timeout: -ETIMEDOUT, or an
 * ICMP error it kept), -EPROTO when the Initiator sent octets behind its
 * Request (requirements A6: no Reply goes) (&mpa_kops.error told each,
 * with the code that tells them apart), -EPIPE after the consumer's own
 * kernel_sock_shutdown() of sending (the Request still waits).
 */
int mpa_kaccept(struct mpa_conn *c, const void *pd, u32 pd_len)
{
	return mpa_kanswer(c, false, pd, pd_len);
}
EXPORT_SYMBOL_GPL(mpa_kaccept);

/**
 * mpa_kreject() - reject the peer's Request (Responder) or Reply (Initiator)
 * @c: the connection, after &mpa_kops.request or &mpa_kops.reply
 * @pd: a Responder's Reply's Private Data (copied), or NULL
 * @pd_len: its length; an Initiator sends nothing: 0
 *
 * A Responder answers the Request with R=1 (R-7.1.2-5); an Initiator
 * refuses the Reply's Private Data (R-7.1.2-13), from &mpa_kops.reply or
 * later, as long as no FPDU went either way (then &mpa_kops.established
 * does not follow). Either way MPA is left and TCP stays open (RFC 5044
 * 7.1.2, R-7.1.2-7): the consumer closes the socket when it likes. No
 * callback follows on this side; the Initiator's &mpa_kops.error reports
 * a Responder's reject there.
 *
 * Context: process context, from a callback or not. Called outside one,
 * it may run the callbacks that are due before it returns (&struct
 * mpa_kops): the caller must not hold a lock that they take.
 * Return: 0, -EINVAL when nothing waits for an answer (or Private Data
 * from an Initiator), -EISCONN once FPDUs went, -ENOTCONN when an
 * Initiator was told (&mpa_kops.error) that TCP was reset (or timed
 * out) since the Reply, -EMSGSIZE; a Responder gets -ETIMEDOUT,
 * -ECONNRESET, -EPROTO and -EPIPE as from mpa_kaccept().
 */
int mpa_kreject(struct mpa_conn *c, const void *pd, u32 pd_len)
{
	return mpa_kanswer(c, true, pd, pd_len);
}
EXPORT_SYMBOL_GPL(mpa_kreject);

/*
 * A ktx serves one ULPDU at a time, whatever the connection: claimed
 * atomically, as two connections' sends do not share a lock.
 */
static bool mpa_ktx_claim(struct mpa_ktx *tx)
{
	return !test_and_set_bit_lock(0, &tx->busy);
}

/* Free for the next ULPDU, then tell the consumer (who may reuse it). */
static void mpa_ktx_finish(struct mpa_ktx *tx, bool done)
{
	void (*fn)(struct mpa_ktx *tx) = tx->done;

	clear_bit_unlock(0, &tx->busy);
	if (done)
		fn(tx);
}

static void mpa_ktx_complete(struct sk_buff *skb, struct ubuf_info *uarg,
			     bool zerocopy_success)
{
	struct mpa_ktx *tx = container_of(uarg, struct mpa_ktx, ubuf);

	if (refcount_dec_and_test(&uarg->refcnt))
		mpa_ktx_finish(tx, true);
}

static const struct ubuf_info_ops mpa_ktx_ops = {
	.complete = mpa_ktx_complete,
};

/*
 * Zero copy has TCP take a reference on each page the first @used octets
 * of entry @bv span (a multi-page entry's pages are contiguous, as in a
 * bio): each must be one TCP may hold (sendpage_ok(): not slab memory,
 * and a page with a reference count of its own, which the tail pages of a
 * higher-order allocation that is not compound lack). Return: true if one
 * is not: the ULPDU is copied instead, as nvme-tcp does.
 */
static bool mpa_kpages_copy(const struct bio_vec *bv, u32 used)
{
	unsigned long i = bv->bv_offset / PAGE_SIZE;
	unsigned long last = ((u64)bv->bv_offset + used - 1) / PAGE_SIZE;

	for (; i <= last; i++)
		if (!sendpage_ok(nth_page(bv->bv_page, i)))
			return true;
	return false;
}

/*
 * May TCP probe the path MTU on @sk (net.ipv4.tcp_mtu_probing, or probing
 * begun after a black hole)? Its probe takes references of its own to the
 * page fragments of the write queue's first skbs, but not their zero-copy
 * completion (tcp_clone_payload() in 6.12), and then frees those skbs:
 * the completion would run while the probe, or its retransmission, still
 * sends from the consumer's pages. The ULPDU is copied then. Socket
 * locked.
 */
static bool mpa_kmtu_probes(const struct sock *sk)
{
	return READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_mtu_probing) ||
	       inet_csk(sk)->icsk_mtup.enabled;
}

/**
 * mpa_ksend() - send one ULPDU made of pages, without copying them
 * @c: the connection, in Full Operation
 * @bv: the ULPDU's pages
 * @nr_bv: entries in @bv
 * @len: ULPDU length: 1..64768, at most what @bv covers
 * @tx: completion: @tx->done runs once TCP no longer references the pages
 *	(then they may be reused), or NULL to have the pages copied now
 *
 * Zero copy: the pages are handed to TCP by reference, as MSG_ZEROCOPY
 * does, with ULPDU_Length, Markers, PAD and the CRC in MPA's own page
 * fragments; the CRC is computed over the pages in place, so the pages
 * must not change until @tx->done (a retransmission must carry the same
 * octets). TCP takes a reference on each page an entry spans (a
 * multi-page entry's pages are contiguous, as in a bio). The pages are
 * copied instead, and @tx->done
 * runs before mpa_ksend() returns, where Markers would cut the ULPDU into
 * more pieces than an FPDU record holds (long ULPDUs with Markers), or
 * @bv has more entries than a record holds, or a ULPDU that fits one
 * segment would take more fragments than a TCP skb holds (many small
 * entries: one segment is kept to), or a page is not one TCP may
 * hold a reference to (!sendpage_ok(): slab memory, e.g. from kmalloc(),
 * or a page without a reference count of its own, such as the tail pages
 * of a higher-order allocation that is not compound), or where TCP may
 * probe the path MTU (net.ipv4.tcp_mtu_probing set in the socket's
 * namespace, or probing begun on the connection: TCP's probe would keep
 * references to the pages past @tx->done); @tx->done may also run inside
 * mpa_ksend() when the route has no scatter-gather (TCP copies). So the
 * caller must not hold a lock that @tx->done takes. A @tx is for one
 * ULPDU at a time (&struct mpa_ktx). A ULPDU of at most
 * mpa_kmulpdu() octets goes out in one TCP segment. A Responder's ULPDUs
 * are held until the Initiator's first valid FPDU arrived (R-7.1.2-15).
 *
 * Whatever MPA holds counts in the socket's send buffer and in TCP's
 * memory accounting, the consumer's pages included, held ULPDUs too: once
 * the send buffer is full, mpa_ksend() fails with -EAGAIN, whatever the
 * state of the connection, until TCP has taken enough of it (a Responder
 * held for good fails with its receive error, or -EPIPE, first, see
 * below).
 *
 * Context: process context, from a callback or not. Called outside one,
 * it may run the callbacks that are due before it returns (&struct
 * mpa_kops): the caller must not hold a lock that they take.
 * Return: 0 when queued (@tx->done will run, or ran); -EAGAIN when the
 * socket's send buffer is full (&mpa_kops.writable tells when to retry);
 * -EINVAL, -EMSGSIZE for a bad length or @bv; -EBUSY when @tx is still in
 * flight; -ENOTCONN before Full Operation; -EPIPE once TCP is closed for
 * sending; a Responder whose ULPDUs are still held when the receive half
 * fails (&mpa_kops.error: code 2 or 3, or an FPDU cut by a FIN) gets
 * that error's errno (-EBADMSG, -EPROTO), and -EPIPE once the peer's FIN
 * came at an FPDU boundary (&mpa_kops.closed): no valid FPDU can come to
 * end the hold; -ENOMEM without memory, or when TCP's memory limits (tcp_mem,
 * the memory cgroup) refuse more (try again later: no callback tells
 * when). A copied ULPDU whose head TCP took when MPA found no memory for
 * its tail resets the connection: -ECONNRESET, and &mpa_kops.error
 * follows (after mpa_kresume() while delivery waits for it).
 * Otherwise an error sent nothing; either way @tx->done does not run.
 */
int mpa_ksend(struct mpa_conn *c, const struct bio_vec *bv,
	      unsigned int nr_bv, u32 len, struct mpa_ktx *tx)
{
	struct sock *sk = c->sk;
	bool locked, copy = false;
	unsigned int i;
	u64 have = 0;
	int ret;

	if (!len || !bv || (tx && !tx->done))
		return -EINVAL;
	if (len > MPA_MAX_ULPDU)
		return -EMSGSIZE;
	for (i = 0; i < nr_bv && have < len; i++) {
		if (!bv[i].bv_len)
			continue;
		if (!bv[i].bv_page)
			return -EINVAL;
		/* the pages the ULPDU takes of it only */
		if (tx && !copy)
			copy = mpa_kpages_copy(&bv[i],
					       min_t(u64, bv[i].bv_len,
						     len - have));
		have += bv[i].bv_len;
	}
	if (have < len)
		return -EINVAL;
	/* TCP's skbs may hold it still: one ULPDU per mpa_ktx at a time */
	if (tx && !mpa_ktx_claim(tx))
		return -EBUSY;

	locked = mpa_klock(c);
	if (!mpa_conn_full(c)) {
		ret = -ENOTCONN;
	} else if (!mpa_tcp_sends(sk) || (sk->sk_shutdown & SEND_SHUTDOWN)) {
		ret = -EPIPE;
	} else if (mpa_conn_held_for_good(c)) {
		/* no valid FPDU can end the hold now */
		ret = -mpa_conn_held_for_good(c);
	} else if (c->tx_open || !mpa_tx_room(c)) {
		/* to be told of room, unless detached: no one to tell */
		WRITE_ONCE(c->kwant_room, !!c->kops);
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		ret = -EAGAIN;
	} else if (tx && !copy && !mpa_kmtu_probes(sk)) {
		tx->ubuf.ops = &mpa_ktx_ops;
		tx->ubuf.flags = SKBFL_ZEROCOPY_FRAG | SKBFL_DONT_ORPHAN;
		refcount_set(&tx->ubuf.refcnt, 1);
		ret = mpa_tx_pages(c, bv, nr_bv, len, &tx->ubuf);
		/* refused: no skb has it, and ours goes without done */
		if (ret)
			refcount_set(&tx->ubuf.refcnt, 0);
	} else {
		ret = mpa_tx_pages(c, bv, nr_bv, len, NULL);
		/* copied: the pages are the consumer's again */
		if (tx)
			mpa_ktx_finish(tx, !ret);
		tx = NULL;
	}
	/* refused: free again, without done */
	if (ret && tx)
		mpa_ktx_finish(tx, false);
	/* TCP's memory limits: no event tells of room, try again later */
	if (ret == -ENOBUFS)
		ret = -ENOMEM;
	if (!ret)
		mpa_tx_push(c);
	mpa_kunlock(c, locked);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_ksend);

/**
 * mpa_kresume() - the consumer takes ULPDUs again
 * @c: the connection
 *
 * After &mpa_kops.ulpdu returned -EAGAIN (or another error): it is called
 * again with the same ULPDU, soon, from MPA's work item. Errors and the
 * peer's close found meanwhile are told then too (&mpa_kops.error).
 *
 * Context: any context, while the socket is not released: the consumer
 * orders its calls (e.g. from a completion) before the release of the
 * socket, which frees @c.
 */
void mpa_kresume(struct mpa_conn *c)
{
	if (mpa_kin_callback(c)) {
		c->kpaused = false;
		return;
	}
	set_bit(MPA_EV_RESUME, &c->events);
	mpa_conn_schedule(c);
}
EXPORT_SYMBOL_GPL(mpa_kresume);

/**
 * mpa_kresult() - what the startup phase negotiated
 * @c: the connection
 * @res: filled in: revision (DDP needs it, RFC 5044 section 3), Markers
 *	each way, CRC, Rev 2's IRD/ORD and RTR type, the current MULPDU
 *
 * Context: process context, from a callback or not. Called outside one,
 * it may run the callbacks that are due before it returns (&struct
 * mpa_kops): the caller must not hold a lock that they take.
 * Return: 0, or -ENOTCONN before Full Operation.
 */
int mpa_kresult(struct mpa_conn *c, struct mpa_result *res)
{
	bool locked = mpa_klock(c);
	int ret = -ENOTCONN;

	if (mpa_conn_full(c)) {
		mpa_conn_result(c, res);
		ret = 0;
	}
	mpa_kunlock(c, locked);
	return ret;
}
EXPORT_SYMBOL_GPL(mpa_kresult);

/**
 * mpa_kmulpdu() - the largest ULPDU that fits one TCP segment now
 * @c: the connection, in Full Operation
 *
 * Follows TCP's current MSS and whether we send Markers (RFC 5044 4.5).
 *
 * Context: any context.
 * Return: MULPDU, 128..64768.
 */
u32 mpa_kmulpdu(struct mpa_conn *c)
{
	return mpa_conn_mulpdu(c);
}
EXPORT_SYMBOL_GPL(mpa_kmulpdu);
