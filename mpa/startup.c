// SPDX-License-Identifier: GPL-2.0
/*
 * MPA startup phase (RFC 5044 section 7.1): the Request and the Reply go as
 * plain stream octets; Full Operation starts right behind them.
 *
 * Received frames are read in place on TCP's receive queue and consumed
 * only once complete and valid, exactly 20 + PD_Length octets: octets the
 * peer sent before MPA was attached are part of the frame. Octets right
 * behind the Reply stay queued for what comes next at the Initiator
 * (FPDUs, or the plain stream after a reject); octets behind the Request
 * before the Reply is queued fail the Responder's startup (requirements
 * A6, mpa_startup_early_data()). Everything here runs in process context
 * under the socket lock.
 *
 * What only the startup needs (our frame, the Responder's negotiation) is
 * in a &struct mpa_startup of its own, allocated when the startup starts
 * and freed as soon as it is over and TCP took our frame: an idle
 * connection in Full Operation holds no startup buffer. The peer's Private
 * Data, which stays readable, is kept in an allocation of its own length.
 */
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <kunit/visibility.h>
#include <net/tcp.h>

#include "conn.h"

static enum mpa_role mpa_core_role(const struct mpa_conn *c)
{
	return c->role == MPA_ROLE_INITIATOR ? MPA_INITIATOR : MPA_RESPONDER;
}

static void mpa_enter_full(struct mpa_conn *c, const struct mpa_params *p)
{
	c->params = *p;
	/* R-7.1.2-15: the Initiator always sends the first FPDU. */
	c->tx_held = c->role == MPA_ROLE_RESPONDER;
	mpa_tx_start(c);
	/* the parameters before the state: pairs with mpa_tx_prepare() */
	mpa_conn_set_state(c, MPA_STATE_FULL);
	/*
	 * FPDUs may be queued right behind the frame already: judged after
	 * the state's event, so that an error's event follows it. The
	 * socket is locked: a woken reader waits for them; a poller is
	 * woken again for what they made ready.
	 */
	mpa_rx_start(c);
	mpa_conn_wake(c);
}

/*
 * (Re)start the startup timeout: for the peer's frame, and for a
 * Responder's application judging the Request (R-7.1.2-25, requirements
 * A24). MPA_TIMEOUT 0 sets none.
 */
static void mpa_startup_timer(struct mpa_conn *c)
{
	if (!c->timeout_ms)
		return;
	c->st->deadline = jiffies + msecs_to_jiffies(c->timeout_ms);
	mod_timer(&c->timer, c->st->deadline);
}

/**
 * mpa_startup_release() - free the startup object
 * @c: the connection, socket locked (or being freed)
 *
 * When the startup is over and our frame is out, or when the socket is
 * closed: nothing of the startup phase runs any more, and what TCP did
 * not take of our frame is dropped.
 */
void mpa_startup_release(struct mpa_conn *c)
{
	if (!c->st)
		return;
	WRITE_ONCE(c->tx_sent, c->tx_len);
	kmem_cache_free(mpa_startup_cache, c->st);
	c->st = NULL;
}

/* Free the startup object once the startup is over and TCP took our frame */
static void mpa_startup_end(struct mpa_conn *c)
{
	if (c->st && !mpa_conn_in_startup(c) && c->tx_sent == c->tx_len)
		mpa_startup_release(c);
}

/*
 * Our frame is all out, or what is left of it dropped. A Responder that
 * refused with a Reply (refused_after_tx) tells its user now, as a
 * refused connect() is told: SO_ERROR and EPOLLERR. One that answered a
 * frame it cannot take (close_after_tx, Appendix C.2.1) closes now.
 * @keep_tcp: TCP's own error stays on the socket. What the user is told
 * is set before the frame counts as out (tx_sent) and close_after_tx is
 * cleared, with release: mpa_poll_mask() reads them the other way round.
 */
static void mpa_startup_frame_out(struct mpa_conn *c, bool keep_tcp)
{
	bool refused = c->refused_after_tx, close = c->close_after_tx;
	struct sock *sk = c->sk;

	c->refused_after_tx = false;
	if ((refused || close) && !keep_tcp)
		WRITE_ONCE(sk->sk_err, c->err.errnum);
	if (close)
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SHUTDOWN_MASK);
	/* pairs with mpa_startup_finished() */
	smp_store_release(&c->tx_sent, c->tx_len);
	if (close) {
		/* pairs with mpa_poll_mask() */
		smp_store_release(&c->close_after_tx, false);
		c->sk_proto->shutdown(sk, SEND_SHUTDOWN);
	}
	if (refused || close)
		sk_error_report(sk);
}

/**
 * mpa_startup_expired() - the timer fired during the startup phase
 * @c: the connection, socket locked
 *
 * The startup timeout (R-7.1.2-21, R-7.1.2-25), or a retry of our frame
 * before it (mpa_startup_push()): then the timer waits for the timeout
 * again. It also bounds the wait of a Reply that goes before the close
 * (Appendix C.2.1, the startup failed already): a peer that reads
 * nothing gets the close without the rest of it.
 */
void mpa_startup_expired(struct mpa_conn *c)
{
	if (!c->st || !c->timeout_ms)
		return;
	/* a retry came first, or the timer was started again meanwhile */
	if (time_before(jiffies, c->st->deadline)) {
		timer_reduce(&c->timer, c->st->deadline);
		return;
	}
	if (c->close_after_tx) {
		mpa_startup_frame_out(c, false);
		return;
	}
	mpa_conn_fail(c, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT, ETIMEDOUT, true);
}

/*
 * TCP no longer takes our frame (it was reset, it timed out, or we shut
 * down for sending). After a reject the stream is TCP's (R-7.1.2-7):
 * REJECTED stays, with its reason, TCP tells its own error, what is left
 * of the Reply is dropped and whoever waits for it goes on to TCP. An
 * Initiator in Full Operation took a Reply that came before its Request
 * was all out (a peer that did not wait for it; its FPDUs may have been
 * delivered, a kernel consumer told of the Reply): that startup is over,
 * and Full Operation stays. What is left of the Request is dropped, and
 * the reset is told as any in Full Operation (mpa_rx_end(): the FPDUs
 * validated before it first, then code 1). Else the startup fails: TCP
 * closed (code 1), also for a Responder whose Reply never got out.
 */
static void mpa_startup_push_refused(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	u8 state = mpa_conn_state(c);

	if (state == MPA_STATE_FULL && c->role == MPA_ROLE_INITIATOR) {
		WRITE_ONCE(c->tx_sent, c->tx_len);
		mpa_conn_wake(c);
		return;
	}
	if (state == MPA_STATE_FAILED && c->close_after_tx) {
		/* Appendix C.2.1: the Reply could not go; close all the same */
		mpa_startup_frame_out(c, !!sk->sk_err);
		return;
	}
	if (state != MPA_STATE_REJECTED) {
		/* TCP's own error stays on the socket (SO_ERROR) */
		mpa_conn_fail(c, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			      mpa_conn_tcp_errno(c), true);
		return;
	}
	c->reply_cut = true;
	/* as when the Reply went, unless TCP has its own error to tell */
	mpa_startup_frame_out(c, !!sk->sk_err);
	mpa_conn_wake(c);
}

/**
 * mpa_startup_push() - send what is left of our startup frame
 * @c: the connection, socket locked, process context
 *
 * As far as TCP takes it now; mpa_write_space() has the work call again
 * once TCP has room, or the timer does when TCP had no memory with
 * nothing in flight. Once it is all out, or dropped, and the startup is
 * over, the startup object goes: a caller does not use it after this.
 *
 * After our own shutdown(SHUT_WR), which TCP would refuse it for, the
 * frame goes only with TCP's send limits lifted (mpa_conn_flush()): from
 * the shutdown, then from the FIN it left behind (mpa_conn_fin_owed()).
 */
void mpa_startup_push(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	if (c->fin_held && (sk->sk_shutdown & SEND_SHUTDOWN))
		return;
	while (c->tx_sent < c->tx_len) {
		struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
		struct kvec kv = {
			.iov_base = c->st->tx_frame + c->tx_sent,
			.iov_len = c->tx_len - c->tx_sent,
		};
		u32 queued;
		int ret;

		if (!mpa_tcp_sends(sk)) {
			mpa_startup_push_refused(c);
			break;
		}
		iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, &kv, 1, kv.iov_len);
		/* a Responder's FPDUs held behind its Reply (R-7.1.2-15) */
		queued = mpa_tx_uncount(c, 0);
		ret = mpa_tcp_sendmsg(sk, &msg, kv.iov_len);
		mpa_tx_recount(c, queued);
		if (ret == -EAGAIN) {
			mpa_tx_retry_later(c);
			return;
		}
		if (ret <= 0) {
			mpa_startup_push_refused(c);
			break;
		}
		c->stats.startup_octets_tx += ret;
		if (c->tx_sent + ret < c->tx_len) {
			WRITE_ONCE(c->tx_sent, c->tx_sent + ret);
			continue;
		}
		/* SeqStart of our direction: the octet right behind the frame */
		c->tx_seq_start = tcp_sk(sk)->write_seq;
		c->tx_before_unacked = true;
		mpa_startup_frame_out(c, false);
		mpa_conn_wake(c);
	}
	mpa_startup_end(c);
}

/*
 * Queue a startup frame of @len octets (already in c->st->tx_frame). A
 * Responder queues its Reply before it moves to the state the Reply
 * announces: a REJECTED socket is plain TCP once its Reply is out
 * (mpa_startup_finished(), read without the lock), and a sender woken by
 * the state must not find "all of nothing" out.
 */
static void mpa_startup_queue(struct mpa_conn *c, int len)
{
	WRITE_ONCE(c->tx_len, len);
	WRITE_ONCE(c->tx_sent, 0);
}

/* Queue a startup frame of @len octets and send it. */
static void mpa_startup_send(struct mpa_conn *c, int len)
{
	mpa_startup_queue(c, len);
	mpa_startup_push(c);
}

/*
 * A Responder's Reply with R=1 (@len octets in c->st->tx_frame): queued,
 * then REJECTED, then sent. The startup is over: its timer stops (a
 * retry of the Reply's rest arms it again, mpa_tx_retry_later()).
 */
static void mpa_startup_reject(struct mpa_conn *c, int len)
{
	mpa_startup_queue(c, len);
	mpa_conn_set_state(c, MPA_STATE_REJECTED);
	timer_delete(&c->timer);
	mpa_startup_push(c);
}

/*
 * Responder, the Request read and no Reply queued yet: is an octet queued
 * behind the Request? That is a protocol violation (requirements A6): the
 * Initiator sends nothing behind its Request before it has the Reply (no
 * FPDU, R-7.1.2-15; no plain stream before it knows of a reject), and it
 * cannot have the Reply before we queued it. Such octets would be taken
 * for the Initiator's first FPDU after an accept, for the plain stream
 * after a reject. The startup fails as for an invalid frame (code 4,
 * EPROTO, TCP closed with a FIN): no Reply goes. MPA sockets are
 * SO_OOBINLINE, so tcp_inq() counts an urgent octet too; a FIN is none.
 *
 * Checked as the Request is read (octets in the same segments), as more
 * arrive while it waits for its answer (data_ready has the work run
 * mpa_startup_process()), and at the answer, before the Reply is built.
 *
 * Return: true when the startup failed.
 */
static bool mpa_startup_early_data(struct mpa_conn *c)
{
	if (!tcp_inq(c->sk))
		return false;
	mpa_conn_fail(c, MPA_ERR_STARTUP, MPA_REASON_EARLY_DATA, EPROTO, true);
	return true;
}

/* Initiator: the Reply arrived. */
static void mpa_reply_in(struct mpa_conn *c)
{
	struct mpa_negotiation neg;

	mpa_negotiate_reply(&c->policy, &c->peer, &neg);
	switch (neg.action) {
	case MPA_NEG_ACCEPT:
		mpa_enter_full(c, &neg.params);
		break;
	case MPA_NEG_REJECTED:
		/* R-7.1.2-13: leave MPA, keep TCP open (ambiguity A3) */
		c->err.code = MPA_ERR_NONE;
		c->err.reason = MPA_REASON_REJECTED;
		c->err.errnum = ECONNREFUSED;
		/*
		 * As a refused connect() is told, and a Responder that
		 * refused by itself (mpa_startup_frame_out()): SO_ERROR and
		 * EPOLLERR, before the state that ends a wait for it; not
		 * over an error TCP has pending (a reset behind the Reply).
		 * A kernel consumer hears of it through its callbacks.
		 */
		if (!c->kops && !READ_ONCE(c->sk->sk_err))
			WRITE_ONCE(c->sk->sk_err, ECONNREFUSED);
		mpa_conn_set_state(c, MPA_STATE_REJECTED);
		if (!c->kops)
			sk_error_report(c->sk);
		break;
	default:
		mpa_conn_fail(c, MPA_ERR_STARTUP, neg.reason, EPROTO, true);
		break;
	}
}

/*
 * The policy the peer's frame is judged by. The revision set
 * (MPA_REVISION, mpa_kparams.rev0) is the Initiator's: a Responder answers
 * by responder-revs and permissive alone (mpa.rst). The core's Rev 0
 * Responder, an RDMA Consortium one (Appendix C), is for its own tests.
 */
static void mpa_startup_policy(const struct mpa_conn *c,
			       struct mpa_policy *pol)
{
	*pol = c->policy;
	if (c->role == MPA_ROLE_RESPONDER && pol->rev == MPA_REVISION_0)
		pol->rev = MPA_REVISION_1;
}

/* Responder: the Request arrived. */
static void mpa_request_in(struct mpa_conn *c)
{
	struct mpa_startup *st = c->st;
	struct mpa_policy pol;
	int len;

	mpa_startup_policy(c, &pol);
	mpa_negotiate_request(&pol, &c->peer, &st->neg);
	switch (st->neg.action) {
	case MPA_NEG_ACCEPT:
		/* not even told to the consumer: octets behind it (A6) */
		if (mpa_startup_early_data(c))
			break;
		/* The consumer judges the Private Data (ambiguity A24). */
		mpa_conn_set_state(c, MPA_STATE_REQUEST_RECEIVED);
		mpa_startup_timer(c);
		break;
	case MPA_NEG_REPLY_REJECT:
		/*
		 * A well-formed Request we cannot accept (no RTR type in
		 * common): answer R=1 (R-7.1.2-5, R-7.1.2-18), leave MPA and
		 * keep TCP open (R-7.1.2-7). Unlike a reject of its own, the
		 * application hears of it: MPA_START fails with ECONNREFUSED.
		 * Not with octets behind the Request (A6): no plain stream
		 * after a reject could start with them.
		 */
		if (mpa_startup_early_data(c))
			break;
		len = mpa_reply_build(&st->neg, true, NULL, 0, st->tx_frame,
				      sizeof(st->tx_frame));
		if (len < 0) {
			mpa_conn_fail(c, MPA_ERR_STARTUP, st->neg.reason, EPROTO,
				      true);
			break;
		}
		c->err.code = MPA_ERR_NONE;
		c->err.reason = st->neg.reason;
		c->err.errnum = ECONNREFUSED;
		/* a kernel consumer hears of it through its error callback */
		c->refused_after_tx = !c->kops;
		mpa_startup_reject(c, len);
		break;
	case MPA_NEG_REPLY_CLOSE:
		/* Appendix C.2.1: answer with what we speak, then close */
		len = mpa_reply_build(&st->neg, false, NULL, 0, st->tx_frame,
				      sizeof(st->tx_frame));
		/* before FAILED is published: mpa_poll_mask() */
		WRITE_ONCE(c->close_after_tx, len >= 0);
		mpa_conn_fail(c, MPA_ERR_STARTUP, st->neg.reason, EPROTO,
			      len < 0);
		if (len >= 0) {
			/* the timeout bounds the Reply's wait too */
			mpa_startup_timer(c);
			mpa_startup_send(c, len);
		}
		break;
	default:
		mpa_conn_fail(c, MPA_ERR_STARTUP, st->neg.reason, EPROTO, true);
		break;
	}
}

/*
 * A whole, valid header and its @need octets are queued: take in the
 * Private Data @pd (PD_Length octets, NULL for none; ours to free) and act
 * on the frame.
 */
static void mpa_startup_frame_in(struct mpa_conn *c, struct mpa_frame *f,
				 u8 *pd, u32 need)
{
	struct sock *sk = c->sk;
	enum mpa_startup_reason r;

	r = mpa_frame_parse_pd(f, pd);
	if (r != MPA_SR_OK) {
		kfree(pd);
		mpa_conn_fail(c, mpa_startup_reason_code(r), r, EPROTO, true);
		return;
	}
	/* Keep the ULP's Private Data only, at the front (no IRD/ORD block) */
	if (!f->ulp_pd_len) {
		kfree(pd);
		f->pd = NULL;
	} else if (f->pd != pd) {
		memmove(pd, f->pd, f->ulp_pd_len);
		f->pd = pd;
	}
	mpa_rxq_consume(sk, need);
	/* SeqStart of the peer's direction (ambiguity A7) */
	c->rx_seq_start = tcp_sk(sk)->copied_seq;
	c->stats.startup_octets_rx += need;
	c->peer = *f;
	c->have_peer = true;
	if (c->role == MPA_ROLE_INITIATOR)
		mpa_reply_in(c);
	else
		mpa_request_in(c);
}

/*
 * Room for the peer's Private Data, charged to the socket's memory cgroup
 * whichever task reads the frame (the connection's work runs in a
 * kworker), with the socket's allocation flags.
 */
static u8 *mpa_startup_pd_alloc(struct sock *sk, u32 len)
{
	struct mem_cgroup *old = NULL;
	u8 *pd;

	/* the socket holds a reference on its memory cgroup */
	if (sk->sk_memcg)
		old = set_active_memcg(sk->sk_memcg);
	pd = kmalloc(len, sk->sk_allocation | __GFP_ACCOUNT | __GFP_NOWARN);
	if (sk->sk_memcg)
		set_active_memcg(old);
	return pd;
}

/*
 * Read the peer's startup frame once it is complete. Its Private Data goes
 * to an allocation of its own, which the connection keeps: the Private
 * Data stays readable after the startup (MPA_PEER_PRIVATE_DATA, the kernel
 * API's callbacks). Without memory for it the startup fails (ENOMEM).
 */
static void mpa_startup_rx(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	u8 hdr[MPA_FRAME_HDR_SIZE];
	enum mpa_startup_reason r;
	u32 avail = tcp_inq(sk);
	struct mpa_policy pol;
	struct mpa_frame f;
	u8 *pd = NULL;
	u32 need;

	/* Not a Key's start: not MPA, whatever comes next (R-7.1.1-2) */
	if (avail && avail < MPA_FRAME_HDR_SIZE) {
		u32 seen = min_t(u32, avail, MPA_KEY_SIZE);

		if (!mpa_rxq_peek(sk, 0, hdr, seen) &&
		    !mpa_frame_key_prefix_ok(hdr, seen)) {
			mpa_conn_fail(c,
				      mpa_startup_reason_code(MPA_SR_BAD_KEY),
				      MPA_SR_BAD_KEY, EPROTO, true);
			return;
		}
	}
	if (avail >= MPA_FRAME_HDR_SIZE &&
	    !mpa_rxq_peek(sk, 0, hdr, MPA_FRAME_HDR_SIZE)) {
		r = mpa_frame_parse_hdr(&f, hdr, mpa_core_role(c));
		/*
		 * A Rev the negotiation would close for is refused now, if
		 * the PD_Length octets have not all come: they may never
		 * come (R-7.1.1-16). A whole frame is taken in as any other
		 * (consumed, MPA_PEER_FRAME, a kernel consumer's @reply).
		 */
		if (r == MPA_SR_OK && avail < MPA_FRAME_HDR_SIZE + f.pd_len) {
			mpa_startup_policy(c, &pol);
			r = mpa_negotiate_rev(&pol, &f, mpa_core_role(c));
		}
		if (r != MPA_SR_OK) {
			mpa_conn_fail(c, mpa_startup_reason_code(r), r, EPROTO,
				      true);
			return;
		}
		/* A6: exactly 20 + PD_Length octets, PD_Length <= 512 */
		need = MPA_FRAME_HDR_SIZE + f.pd_len;
		if (avail >= need && f.pd_len) {
			pd = mpa_startup_pd_alloc(sk, f.pd_len);
			if (!pd) {
				mpa_conn_fail(c, MPA_ERR_NONE, MPA_REASON_NONE,
					      ENOMEM, true);
				return;
			}
		}
		if (avail >= need &&
		    !mpa_rxq_peek(sk, MPA_FRAME_HDR_SIZE, pd, f.pd_len)) {
			mpa_startup_frame_in(c, &f, pd, need);
			return;
		}
		kfree(pd);
	}

	/*
	 * Incomplete: it never will be if the peer closed (its FIN sets
	 * SOCK_DONE; our own shutdown(SHUT_RD) only RCV_SHUTDOWN, and TCP
	 * still receives) or reset, or TCP timed out (TCP_CLOSE: its error
	 * may have been read and cleared already, SO_ERROR); a soft error
	 * ends nothing. Nothing of a frame is TCP closing (code 1); part of
	 * one is a frame cut short, invalid like any other (code 4,
	 * requirements A6).
	 */
	if (!((sk->sk_err && !mpa_tcp_soft_error(c)) ||
	      sock_flag(sk, SOCK_DONE) ||
	      READ_ONCE(sk->sk_state) == TCP_CLOSE))
		return;
	if (avail)
		mpa_conn_fail(c, mpa_startup_reason_code(MPA_SR_TRUNCATED),
			      MPA_SR_TRUNCATED, EPROTO, true);
	else
		mpa_conn_fail(c, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			      mpa_conn_tcp_errno(c), true);
}

/*
 * Waiting for the answer (REQUEST_RECEIVED): octets behind the Request end
 * the startup now (code 4, requirements A6), before a reset that came
 * after them; a reset (or TCP's timeout) ends it now (code 1), not at the
 * answer, whose Reply could not go, nor at the startup timeout (code 4).
 */
static void mpa_startup_check_waiting(struct mpa_conn *c)
{
	if (mpa_startup_early_data(c))
		return;
	if (READ_ONCE(c->sk->sk_state) == TCP_CLOSE)
		mpa_conn_fail(c, MPA_ERR_TCP_CLOSED, MPA_REASON_PEER_CLOSED,
			      mpa_conn_tcp_errno(c), true);
}

/**
 * mpa_startup_process() - make what progress the socket allows
 * @c: the connection, socket locked, process context
 *
 * Reads a complete startup frame, sends what is left of ours, and frees
 * the startup object once the startup is over and our frame is out.
 */
void mpa_startup_process(struct mpa_conn *c)
{
	switch (mpa_conn_state(c)) {
	case MPA_STATE_AWAIT_REQUEST:
	case MPA_STATE_AWAIT_REPLY:
		mpa_startup_rx(c);
		break;
	case MPA_STATE_REQUEST_RECEIVED:
		mpa_startup_check_waiting(c);
		break;
	}
	if (c->tx_sent != c->tx_len)
		mpa_startup_push(c);
	mpa_startup_end(c);
}

/**
 * mpa_startup_check_config() - can the configuration start, on this TCP?
 * @c: the connection, socket locked
 *
 * Checked before MPA_START sends the plain stream's calls back out of TCP
 * (mpa_plain_drain()), so that none is for a start that cannot be.
 *
 * Return: 0, -EINVAL without a role, with a receive low-water mark
 * (SO_RCVLOWAT above 1: TCP would not tell MPA of frames and FPDUs
 * shorter than it, mpa_set_rcvlowat()) or for an Initiator of Rev 2
 * asking for peer-to-peer with no RTR type to offer, -EMSGSIZE for
 * Private Data that does not fit the revision (508 octets with Rev 2's
 * IRD/ORD block),
 * -ENOTCONN unless TCP is established, or the peer closed its half
 * (CLOSE_WAIT: its frame may still be queued, whole or in part: start,
 * and let the frame decide).
 */
int mpa_startup_check_config(const struct mpa_conn *c)
{
	struct mpa_frame req;

	if (!c->role || READ_ONCE(c->sk->sk_rcvlowat) > 1)
		return -EINVAL;
	/*
	 * A peer-to-peer Request offering no RTR type (none set, or only
	 * the Read with an ORD of 0, which the Request leaves out): no
	 * Responder can pick exactly one, the startup could only be
	 * rejected (RFC 6581).
	 */
	if (c->role == MPA_ROLE_INITIATOR &&
	    c->policy.rev == MPA_REVISION_2 && c->policy.p2p) {
		mpa_request_frame(&c->policy, &req);
		if (!req.rtr)
			return -EINVAL;
	}
	if (c->role == MPA_ROLE_INITIATOR &&
	    c->policy.rev == MPA_REVISION_2 &&
	    c->local_pd_len > MPA_V2_PRIVATE_DATA)
		return -EMSGSIZE;
	if ((1 << c->sk->sk_state) & ~(TCPF_ESTABLISHED | TCPF_CLOSE_WAIT))
		return -ENOTCONN;
	return 0;
}

/**
 * mpa_startup_start() - start the startup phase
 * @c: the connection, socket locked
 *
 * An Initiator sends its Request; a Responder starts waiting for one. A
 * frame already queued by the peer is read right away.
 *
 * Return: 0 once started, -EALREADY while in progress, -EISCONN when done,
 * -ENOTCONN without a connection, -ENOMEM without memory for the startup
 * phase, or a configuration error (see mpa_startup_check_config()).
 */
int mpa_startup_start(struct mpa_conn *c)
{
	struct mpa_frame req;
	int ret;

	if (mpa_conn_state(c) != MPA_STATE_STREAMING)
		return mpa_conn_in_startup(c) ? -EALREADY : -EISCONN;
	ret = mpa_startup_check_config(c);
	if (ret)
		return ret;

	/* the socket's allocation flags; the cache is SLAB_ACCOUNT */
	c->st = kmem_cache_zalloc(mpa_startup_cache, c->sk->sk_allocation);
	if (!c->st)
		return -ENOMEM;
	mpa_startup_timer(c);
	if (c->role == MPA_ROLE_INITIATOR) {
		mpa_request_frame(&c->policy, &req);
		ret = mpa_frame_build(&req, c->local_pd, c->local_pd_len,
				      c->st->tx_frame, sizeof(c->st->tx_frame));
		if (ret < 0) {
			timer_delete(&c->timer);
			mpa_startup_release(c);
			return ret;
		}
		WRITE_ONCE(c->state, MPA_STATE_AWAIT_REPLY);
		mpa_startup_send(c, ret);
	} else {
		WRITE_ONCE(c->state, MPA_STATE_AWAIT_REQUEST);
	}
	mpa_startup_process(c);
	return 0;
}

/*
 * The Initiator's application does not accept the Reply's Private Data:
 * leave MPA and keep TCP open (R-7.1.2-13), as after a Reply with R=1.
 * Only before any FPDU went either way: the Initiator's is the first
 * (R-7.1.2-15), so until it sends one the stream behind the Reply is
 * untouched. Nothing goes to the peer: MPA has no message for it.
 */
static int mpa_startup_refuse(struct mpa_conn *c)
{
	if (mpa_conn_state(c) != MPA_STATE_FULL)
		return -EINVAL;
	/*
	 * Octets that came while the socket was owned (by this caller, or by
	 * the work that runs a kernel consumer's callback) wait in its
	 * backlog: into TCP's receive queue with them first, where the
	 * machine sees them (mpa_rx_data_ready()), as it saw those before
	 */
	sk_flush_backlog(c->sk);
	/*
	 * The reset (or TCP's timeout) was seen, and told: no TCP to keep
	 * open. One not seen yet is the plain stream's to tell.
	 */
	if (c->rx_reset)
		return -ENOTCONN;
	/*
	 * An FPDU came (against R-7.1.2-15) once the machine saw an octet
	 * of it or found it whole: recv may have shown the ULPDU already,
	 * even if only with MSG_PEEK, which the plain stream would show
	 * again, framing and all.
	 */
	if (c->tx_pos || c->tx_open || c->stats.tx_fpdus ||
	    c->rx_cfill || c->rx_err || c->stats.rx_fpdus ||
	    c->rx_done || READ_ONCE(c->rx_ready) || mpa_rxm_fed(&c->rxm))
		return -EISCONN;
	mpa_rx_release(c);
	mpa_conn_set_state(c, MPA_STATE_REJECTED);
	return 0;
}

/**
 * mpa_startup_answer() - answer the peer's startup frame
 * @c: the connection, socket locked
 * @reject: reject: a Responder's Reply says R=1; either way MPA is left
 *	and TCP stays open (R-7.1.2-7, R-7.1.2-13)
 * @pd: the Reply's Private Data
 * @pd_len: its length: up to 512 octets, 508 with Rev 2's IRD/ORD block
 *
 * A Responder in %MPA_STATE_REQUEST_RECEIVED sends the Reply; accepting
 * enters Full Operation. An Initiator may only reject, without Private
 * Data, the Reply it got: in Full Operation, before the first FPDU.
 *
 * Return: 0; -EINVAL in another state or for an Initiator's accept or
 * Private Data; -EISCONN once FPDUs went; -EMSGSIZE for too much Private
 * Data; -EPIPE after our own shutdown(SHUT_WR) (nothing changes); a
 * Responder whose startup failed meanwhile (the timeout, a reset, octets
 * the Initiator sent behind its Request: -EPROTO, requirements A6) gets
 * the failure's errno.
 */
int mpa_startup_answer(struct mpa_conn *c, bool reject, const void *pd,
		       u32 pd_len)
{
	struct mpa_startup *st;
	int len;

	if (c->role == MPA_ROLE_INITIATOR)
		return reject && !pd_len ? mpa_startup_refuse(c) : -EINVAL;
	/*
	 * Octets behind the Request (A6), or a reset, that the work has not
	 * seen yet end the startup first: no Reply goes then. Those that
	 * came while the socket was ours (a kernel consumer answering from
	 * its request callback, inside the work) wait in its backlog: into
	 * TCP's receive queue with them first.
	 */
	if (mpa_conn_state(c) == MPA_STATE_REQUEST_RECEIVED) {
		sk_flush_backlog(c->sk);
		mpa_startup_check_waiting(c);
	}
	/*
	 * The timeout for the answer ran out (R-7.1.2-25, requirements A24):
	 * late, even while the work its timer queued waits for the socket
	 */
	if (mpa_conn_state(c) == MPA_STATE_REQUEST_RECEIVED && c->timeout_ms &&
	    !time_before(jiffies, c->st->deadline))
		mpa_conn_fail(c, MPA_ERR_STARTUP, MPA_REASON_TIMEOUT, ETIMEDOUT,
			      true);
	if (mpa_conn_state(c) == MPA_STATE_FAILED && c->have_peer) {
		/* no work comes to free the startup object: now */
		mpa_startup_end(c);
		return -c->err.errnum;
	}
	if (mpa_conn_state(c) != MPA_STATE_REQUEST_RECEIVED)
		return -EINVAL;
	/* our own shutdown(SHUT_WR): no Reply can go; the Request waits */
	if (c->sk->sk_shutdown & SEND_SHUTDOWN)
		return -EPIPE;
	st = c->st;
	if (pd_len > (st->neg.reply.enhanced ? MPA_V2_PRIVATE_DATA :
					       MPA_MAX_PRIVATE_DATA))
		return -EMSGSIZE;
	len = mpa_reply_build(&st->neg, reject, pd, pd_len, st->tx_frame,
			      sizeof(st->tx_frame));
	if (len < 0)
		return len;
	if (reject) {
		mpa_startup_reject(c, len);
	} else {
		mpa_enter_full(c, &st->neg.params);
		mpa_startup_send(c, len);
	}
	/* TCP could not take the Reply (it closed meanwhile): failed */
	return mpa_conn_state(c) == MPA_STATE_FAILED ? -c->err.errnum : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_startup_answer);

/**
 * mpa_startup_frame_received() - has the Responder's wait for a Request, or
 *	the Initiator's for a Reply, ended?
 * @c: the connection
 *
 * Return: true once no startup frame is awaited any more.
 */
bool mpa_startup_frame_received(const struct mpa_conn *c)
{
	u8 state = mpa_conn_state(c);

	return state != MPA_STATE_AWAIT_REQUEST &&
	       state != MPA_STATE_AWAIT_REPLY;
}

/**
 * mpa_startup_finished() - is our startup frame out (or the startup over)?
 * @c: the connection
 *
 * Return: true once TCP took all of our frame, or the startup failed.
 */
bool mpa_startup_finished(const struct mpa_conn *c)
{
	/* pairs with mpa_startup_frame_out(): its error is seen */
	return smp_load_acquire(&c->tx_sent) == READ_ONCE(c->tx_len) ||
	       mpa_conn_state(c) == MPA_STATE_FAILED;
}

/**
 * mpa_startup_wait() - wait until @done, making progress meanwhile
 * @c: the connection, socket locked (released while sleeping)
 * @timeo: how long to wait; updated
 * @done: the condition
 *
 * The startup timer bounds the wait for a peer's frame.
 *
 * Return: 0, -EAGAIN when @timeo ran out, -EINTR on a signal (the startup
 * goes on; poll tells when it is over).
 */
int mpa_startup_wait(struct mpa_conn *c, long *timeo,
		     bool (*done)(const struct mpa_conn *c))
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = c->sk;
	int ret = 0;

	add_wait_queue(sk_sleep(sk), &wait);
	while (!done(c)) {
		if (!*timeo) {
			ret = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		sk_wait_event(sk, timeo, done(c), &wait);
		mpa_startup_process(c);
	}
	remove_wait_queue(sk_sleep(sk), &wait);
	return ret;
}
