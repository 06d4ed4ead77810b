// SPDX-License-Identifier: GPL-2.0
/*
 * MPA connection object: lifetime, socket callbacks, errors and the
 * negotiated result.
 */
#include <kunit/visibility.h>
#include <linux/slab.h>
#include <net/tcp.h>

#include "conn.h"
#include "netns.h"

static void mpa_conn_work(struct work_struct *work);
static void mpa_conn_timeout(struct timer_list *t);

/*
 * Connections, startup objects and FPDU records come from slab caches of
 * their own, so that /proc/slabinfo tells what MPA holds (and a connection
 * takes its own size, not the next kmalloc size up). All are charged to
 * the memory cgroup. The connections' and the startup objects' caches are
 * never merged with another: what an idle connection costs, and that no
 * startup object outlives its startup, can be read there.
 */
static struct kmem_cache *mpa_conn_cache;
struct kmem_cache *mpa_startup_cache;
struct kmem_cache *mpa_tx_rec_cache;

/**
 * mpa_conn_cache_init() - create the slab caches
 *
 * Return: 0 or -ENOMEM.
 */
int mpa_conn_cache_init(void)
{
	mpa_conn_cache = KMEM_CACHE(mpa_conn, SLAB_ACCOUNT | SLAB_NO_MERGE);
	if (!mpa_conn_cache)
		return -ENOMEM;
	mpa_startup_cache = KMEM_CACHE(mpa_startup,
				       SLAB_ACCOUNT | SLAB_NO_MERGE);
	if (!mpa_startup_cache)
		goto err_conn;
	/* a cache of its own, as the two above: its counts are MPA's alone */
	mpa_tx_rec_cache = KMEM_CACHE(mpa_tx_rec,
				      SLAB_ACCOUNT | SLAB_NO_MERGE);
	if (!mpa_tx_rec_cache)
		goto err_startup;
	return 0;

err_startup:
	kmem_cache_destroy(mpa_startup_cache);
err_conn:
	kmem_cache_destroy(mpa_conn_cache);
	return -ENOMEM;
}

/**
 * mpa_conn_cache_exit() - destroy the slab caches
 *
 * Every connection is gone (each held a module reference); the last ones
 * may still wait for their RCU grace period, which kmem_cache_destroy()
 * waits for.
 */
void mpa_conn_cache_exit(void)
{
	kmem_cache_destroy(mpa_tx_rec_cache);
	kmem_cache_destroy(mpa_startup_cache);
	kmem_cache_destroy(mpa_conn_cache);
}

/*
 * Socket callbacks. They run in softirq context (or in process context from
 * the socket backlog) and only hand work to mpa_conn_work(), which runs the
 * state machine under the socket lock.
 */
static void mpa_data_ready(struct sock *sk)
{
	struct mpa_conn *c = mpa_conn(sk);

	if (mpa_conn_full(c))
		mpa_rx_data_ready(c);
	else if (mpa_conn_in_startup(c))
		mpa_conn_schedule(c);
	else
		c->saved_data_ready(sk);
}

static void mpa_write_space(struct sock *sk)
{
	struct mpa_conn *c = mpa_conn(sk);

	/*
	 * From inside TCP's sendmsg while MPA hands it FPDUs or its startup
	 * frame, with TCP's queues empty: TCP refused for want of memory (or
	 * processed ACKs that emptied its queues), and no ACK will come. The
	 * pusher tries again after a while (its retry timer). Waking the
	 * socket would have a pusher that waits for room try again at once,
	 * and again, for as long as memory stays short.
	 */
	if (READ_ONCE(c->tx_pushing) && tcp_rtx_and_write_queues_empty(sk))
		return;
	/*
	 * TCP made room: send the rest of a startup frame, or FPDUs. A
	 * sender sleeping in mpa_tx_wait() pushes them itself once woken,
	 * on its own CPU, without a round through the work. Another call
	 * from inside TCP's sendmsg (TCP processing its backlog) leaves the
	 * FPDUs to the pusher.
	 */
	if (READ_ONCE(c->tx_sent) != READ_ONCE(c->tx_len) ||
	    READ_ONCE(c->kwant_room))
		mpa_conn_schedule(c);
	else if (mpa_conn_full(c) && !READ_ONCE(c->tx_held) &&
		 !READ_ONCE(c->tx_pushing) &&
		 (READ_ONCE(c->tx_run.bv_len) || mpa_tx_pending(c))) {
		/* TCP sent what it held: FPDUs it would have held go too */
		if (READ_ONCE(c->tx_run.bv_len))
			mpa_tx_run_kick(c);
		if (mpa_tx_pending(c)) {
			if (READ_ONCE(c->tx_waiting))
				mpa_conn_wake(c);
			else
				mpa_conn_schedule(c);
		}
	}
	c->saved_write_space(sk);
	/*
	 * A run TCP had no memory for stays, and only the next ACK brings it
	 * back here: TCP calls sk_write_space() with SOCK_NOSPACE set only,
	 * which sk_stream_write_space() just cleared when the socket looked
	 * writeable. (With nothing in flight, mpa_tx_run_flush() armed the
	 * timer instead.)
	 */
	if (READ_ONCE(c->tx_run.bv_len) && sk->sk_socket)
		set_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
}

/*
 * TCP tells of an error: a soft one while it stays open (tcp_v4_err(),
 * tcp_v6_err()), a reset or a timeout once closed (tcp_done_with_error(),
 * tcp_disconnect()). Which it was is known only now (mpa_tcp_soft_error()).
 *
 * Unlike the other callbacks this one is also called without the socket's
 * lock: sock_queue_err_skb() (a transmit timestamp, from a driver's work)
 * and the MSG_ZEROCOPY completion (from wherever the last skb is freed)
 * may have read the pointer before close restored TCP's, and call it as
 * the socket is destroyed. The connection is freed after an RCU grace
 * period (mpa_conn_free()) once its pointer is cleared: no connection, no
 * one left to tell.
 */
static void mpa_error_report(struct sock *sk)
{
	void (*report)(struct sock *sk);
	struct mpa_conn *c;

	rcu_read_lock();
	c = rcu_dereference(inet_csk(sk)->icsk_ulp_data);
	if (!c) {
		rcu_read_unlock();
		return;
	}
	if (sk->sk_state == TCP_CLOSE) {
		WRITE_ONCE(c->soft_err, 0);
		/*
		 * The first one stays: later reports (the error queue's)
		 * come with the error read already, or another
		 */
		if (!READ_ONCE(c->hard_err))
			WRITE_ONCE(c->hard_err, READ_ONCE(sk->sk_err));
	} else {
		WRITE_ONCE(c->soft_err, READ_ONCE(sk->sk_err));
	}
	report = c->saved_error_report;
	rcu_read_unlock();
	report(sk);
}

static void mpa_state_change(struct sock *sk)
{
	struct mpa_conn *c = mpa_conn(sk);

	/* an in-kernel consumer hears of FIN and RST from the work */
	if (mpa_conn_in_startup(c) || (mpa_conn_full(c) && READ_ONCE(c->kops)))
		mpa_conn_schedule(c);
	c->saved_state_change(sk);
}

/**
 * mpa_conn_create() - attach a new MPA connection object to a TCP socket
 * @sk: a connected TCP socket, locked by the caller
 * @gfp: allocation flags
 *
 * Return: the object, in state %MPA_STATE_STREAMING, or NULL.
 */
struct mpa_conn *mpa_conn_create(struct sock *sk, gfp_t gfp)
{
	struct mpa_net_policy np;
	struct mpa_conn *c;

	/*
	 * The socket's allocation flags; the cache is SLAB_ACCOUNT: charged
	 * to the memory cgroup of whoever attaches MPA
	 */
	c = kmem_cache_zalloc(mpa_conn_cache, gfp);
	if (!c)
		return NULL;
	c->sk = sk;
	if (mpa_net_conn_reserve(c, gfp)) {
		kmem_cache_free(mpa_conn_cache, c);
		return NULL;
	}
	c->sk_proto = sk->sk_prot;
	c->state = MPA_STATE_STREAMING;
	c->ino = sock_i_ino(sk);
	c->dport = inet_sk(sk)->inet_dport;
	if (sk->sk_family == AF_INET)
		c->saddr.v4 = inet_sk(sk)->inet_saddr;
#if IS_ENABLED(CONFIG_IPV6)
	else
		c->saddr.v6 = sk->sk_v6_rcv_saddr;
#endif
	/* the namespace's policy gives the defaults (mpa.rst, "Policy") */
	mpa_net_policy(sock_net(sk), &np);
	mpa_policy_default(&c->policy);
	c->policy.markers = np.markers;
	c->policy.rev = np.initiator_rev;
	c->policy.revs = np.responder_revs;
	c->policy.permissive = np.permissive;
	c->timeout_ms = np.timeout_ms;
	INIT_LIST_HEAD(&c->tx_queue);
	INIT_WORK(&c->work, mpa_conn_work);
	timer_setup(&c->timer, mpa_conn_timeout, 0);

	write_lock_bh(&sk->sk_callback_lock);
	c->saved_data_ready = sk->sk_data_ready;
	c->saved_write_space = sk->sk_write_space;
	c->saved_state_change = sk->sk_state_change;
	c->saved_error_report = sk->sk_error_report;
	rcu_assign_pointer(inet_csk(sk)->icsk_ulp_data, c);
	sk->sk_data_ready = mpa_data_ready;
	sk->sk_write_space = mpa_write_space;
	sk->sk_state_change = mpa_state_change;
	sk->sk_error_report = mpa_error_report;
	write_unlock_bh(&sk->sk_callback_lock);
	mpa_net_conn_add(c);
	return c;
}

/**
 * mpa_conn_stop() - nothing of the connection's runs on its own any more
 * @c: the connection, socket not locked (the work takes the lock)
 *
 * The first step of closing. The work is disabled: what was queued is
 * cancelled, a run in progress is waited for, and it can never be queued
 * again, so a socket callback still running on another CPU, the timer or
 * mpa_kresume() may try to schedule it in vain (mpa_conn_schedule() then
 * drops the reference it took). The timer is shut down the same way. The
 * socket callbacks stay until mpa_conn_detach(): they only schedule the
 * work and wake readers.
 */
void mpa_conn_stop(struct mpa_conn *c)
{
	if (disable_work_sync(&c->work))
		sock_put(c->sk);	/* the queued work's reference */
	timer_shutdown_sync(&c->timer);
}

/**
 * mpa_conn_detach() - give the socket back to TCP
 * @c: the connection, socket locked, stopped (mpa_conn_stop())
 *
 * Restores TCP's struct proto and each socket callback that is still the
 * one MPA installed, under the callback lock, as kTLS does on close. With
 * the socket locked no callback of ours runs in softirq meanwhile (TCP
 * defers to the backlog, which release_sock() runs with TCP's callbacks),
 * so none runs once the socket is released. The connection object stays
 * attached until the socket is destroyed (mpa_ulp_release()).
 */
void mpa_conn_detach(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	write_lock_bh(&sk->sk_callback_lock);
	WRITE_ONCE(sk->sk_prot, c->sk_proto);
	if (sk->sk_data_ready == mpa_data_ready)
		sk->sk_data_ready = c->saved_data_ready;
	if (sk->sk_write_space == mpa_write_space)
		sk->sk_write_space = c->saved_write_space;
	if (sk->sk_state_change == mpa_state_change)
		sk->sk_state_change = c->saved_state_change;
	if (sk->sk_error_report == mpa_error_report)
		sk->sk_error_report = c->saved_error_report;
	write_unlock_bh(&sk->sk_callback_lock);
}

/**
 * mpa_conn_flush() - hand TCP everything MPA holds, without waiting
 * @c: the connection, socket locked, process context
 *
 * For shutdown() and close(): the rest of our startup frame (a Reply goes
 * out whole and first, R-7.1.2-7), then an open ULPDU and every queued
 * FPDU go to TCP's write queue now, past the send buffer and
 * TCP_NOTSENT_LOWAT, as TCP itself keeps all that an orphan has queued;
 * TCP sends them in the background and the FIN behind them. Nothing here
 * waits for the peer. A Responder's held FPDUs stay (R-7.1.2-15): they may
 * never go on the wire. A shutdown(SHUT_WR) made already does not stop
 * them: its FIN has not gone yet, and follows them (mpa_conn_shut_wr()).
 *
 * Return: true if MPA holds nothing more that may go; false if TCP
 * refused some (its memory limits, an allocation, an error): a FIN now
 * would follow a gap.
 */
bool mpa_conn_flush(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	struct tcp_sock *tp = tcp_sk(sk);
	int sndbuf = READ_ONCE(sk->sk_sndbuf);
	u32 lowat = READ_ONCE(tp->notsent_lowat);
	u8 shut = READ_ONCE(sk->sk_shutdown);

	/* tcp_sendmsg_locked() checks all three before each new segment */
	WRITE_ONCE(sk->sk_sndbuf, INT_MAX);
	WRITE_ONCE(tp->notsent_lowat, UINT_MAX);
	WRITE_ONCE(sk->sk_shutdown, shut & ~SEND_SHUTDOWN);
	mpa_startup_push(c);
	if (c->tx_sent == c->tx_len)
		mpa_tx_flush(c);
	WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | (shut & SEND_SHUTDOWN));
	WRITE_ONCE(tp->notsent_lowat, lowat);
	WRITE_ONCE(sk->sk_sndbuf, sndbuf);
	return c->tx_sent == c->tx_len && !mpa_tx_unsent(c);
}

/**
 * mpa_conn_abort() - reset the connection, dropping what MPA holds
 * @c: the connection, socket locked
 *
 * When TCP cannot take what MPA holds, the peer is told with a reset
 * rather than with a FIN after a gap (as TCP resets an orphan it has no
 * memory for). TCP's disconnect sends the RST, purges its queues and
 * sets ECONNRESET on the socket; an FPDU judged in the receive queue goes
 * with it, and recv reports the reset. A TCP closed already (the peer's
 * reset, a timeout) has nobody to tell: only what MPA holds goes, and
 * what TCP received before stays for recv, then its error (mpa_rx_end()).
 */
void mpa_conn_abort(struct mpa_conn *c)
{
	bool open = c->sk->sk_state != TCP_CLOSE;

	if (open)
		c->sk_proto->disconnect(c->sk, 0);
	mpa_tx_release(c);
	WRITE_ONCE(c->tx_sent, c->tx_len);
	c->fin_held = false;
	if (open)
		mpa_rx_purged(c);
}
EXPORT_SYMBOL_IF_KUNIT(mpa_conn_abort);

/*
 * May what MPA holds still go to TCP later? TCP is open for sending, and
 * the connection's work tries again: FPDUs in Full Operation, and the rest
 * of a startup frame in any state (mpa_startup_process()), a Reply after
 * a reject included (the stream goes on behind it, R-7.1.2-7).
 */
static bool mpa_conn_may_retry(struct mpa_conn *c)
{
	return mpa_tcp_sends(c->sk) &&
	       (mpa_conn_full(c) || c->tx_sent != c->tx_len);
}

/* Do FPDUs wait for the end of a Responder's hold (R-7.1.2-15)? */
static bool mpa_conn_fpdus_held(const struct mpa_conn *c)
{
	return c->tx_held && mpa_tx_pending(c);
}

/**
 * mpa_conn_shut_wr() - the FIN, behind everything MPA holds
 * @c: the connection, socket locked, process context; SEND_SHUTDOWN set
 *	by shutdown()
 *
 * What MPA holds goes to TCP first (mpa_conn_flush()), then TCP sends its
 * FIN. What cannot go yet keeps the FIN behind it (@fin_held, and the
 * connection's work sends both later, mpa_conn_fin_owed()): a Responder's
 * held FPDUs (R-7.1.2-15), until the hold ends (mpa_conn_hold_end()), and
 * FPDUs TCP refused for want of memory (an allocation, its memory
 * limits), tried again every MPA_RETRY, as the socket stays open. A TCP
 * that can no longer send, memory that does not come back, or a hold
 * that can no longer end (mpa_conn_held_for_good(): the peer's FIN or a
 * receive error came first), gets a reset instead of a FIN after a gap
 * (mpa_conn_abort(); a TCP closed already only loses what MPA holds).
 */
void mpa_conn_shut_wr(struct mpa_conn *c)
{
	bool flushed = mpa_conn_flush(c);

	if (flushed && !mpa_conn_fpdus_held(c)) {
		c->sk_proto->shutdown(c->sk, SEND_SHUTDOWN);
		return;
	}
	if ((!flushed && !mpa_conn_may_retry(c)) ||
	    (flushed && mpa_conn_held_for_good(c))) {
		mpa_conn_abort(c);
		return;
	}
	c->fin_held = true;
	c->fin_tries = 0;
	if (!flushed)
		timer_reduce(&c->timer, jiffies + MPA_RETRY);
}

/**
 * mpa_conn_fin_owed() - the FIN a shutdown(SHUT_WR) left behind
 * @c: the connection, socket locked, in the connection's work, with
 *	@fin_held set
 * @expired: the work runs for its timer (a retry's, MPA_RETRY apart)
 *
 * What MPA holds goes to TCP, then the FIN: FPDUs a Responder holds keep
 * it back until the hold ends (mpa_conn_hold_end()), or reset the
 * connection once it cannot (mpa_conn_held_for_good()); a frame or FPDUs
 * held by nothing else do not. Should TCP refuse some again (an
 * allocation, its memory limits), the work tries again after MPA_RETRY,
 * and resets the connection once MPA_FIN_TRIES of those retries in a row
 * found TCP taking nothing, rather than wait for ever. The work runs for
 * arriving data and ACKs too: those runs try as well, but do not count.
 * A TCP that can no longer send ends the wait: it reports its own error,
 * and what it received stays readable.
 */
void mpa_conn_fin_owed(struct mpa_conn *c, bool expired)
{
	u32 seq = tcp_sk(c->sk)->write_seq;
	bool flushed = mpa_conn_flush(c);

	if (flushed && mpa_conn_fpdus_held(c)) {
		/* a hold that ended for good: a FIN would follow a gap */
		if (mpa_conn_held_for_good(c))
			mpa_conn_abort(c);
		return;
	}
	if (flushed) {
		c->fin_held = false;
		c->sk_proto->shutdown(c->sk, SEND_SHUTDOWN);
		return;
	}
	if (!mpa_conn_may_retry(c)) {
		c->fin_held = false;
		return;
	}
	/* TCP took some: memory came back, the count starts again */
	if (tcp_sk(c->sk)->write_seq != seq)
		c->fin_tries = 0;
	else if (expired)
		c->fin_tries++;
	if (c->fin_tries >= MPA_FIN_TRIES) {
		mpa_conn_abort(c);
		return;
	}
	/* an earlier expiry stands: a retry, the startup's deadline */
	timer_reduce(&c->timer, jiffies + MPA_RETRY);
}

/**
 * mpa_conn_hold_end() - the Initiator's first valid FPDU is here
 * @c: a Responder's connection, socket locked, process context
 *
 * Its held FPDUs may go now (R-7.1.2-15), and after them the FIN of a
 * shutdown(SHUT_WR) that came meanwhile: nothing a send() accepted is
 * dropped behind a FIN.
 */
void mpa_conn_hold_end(struct mpa_conn *c)
{
	WRITE_ONCE(c->tx_held, false);
	if (c->fin_held)
		mpa_conn_schedule(c);	/* mpa_conn_fin_owed(), not mid-read */
	else
		mpa_tx_push(c);
	mpa_conn_wake(c);
}

/**
 * mpa_conn_closed() - the socket is being closed: unlist it, announce it
 * @c: the connection, socket locked
 *
 * Unlisted first: a dump or stats-get that a listener makes once the
 * closed-ntf came no longer shows it (mpa.rst: it leaves the dump).
 */
void mpa_conn_closed(struct mpa_conn *c)
{
	if (!READ_ONCE(c->net_linked))
		return;
	mpa_net_conn_del(c);
	mpa_net_event(c, MPA_NET_CLOSED);
}

/**
 * mpa_conn_free() - free the connection object after an RCU grace period
 * @c: the connection, already stopped
 *
 * May be called in softirq context (socket destruction). What the data
 * path still holds is normally released by close already.
 */
void mpa_conn_free(struct mpa_conn *c)
{
	mpa_net_conn_del(c);
	mpa_tx_release(c);
	mpa_rx_release(c);
	mpa_startup_release(c);
	kfree(c->local_pd);
	kfree(c->peer.pd);
	kfree_rcu(c, rcu);
}

/**
 * mpa_conn_set_local_pd() - set the Private Data of our Request
 * @c: the connection, socket locked, before the startup phase
 * @pd: the Private Data (userspace or kernel memory)
 * @len: its length, at most %MPA_MAX_PRIVATE_DATA; 0 for none
 *
 * Kept in an allocation of its own length, with the socket's allocation
 * flags, charged to the memory cgroup: it stays readable
 * (MPA_PRIVATE_DATA) after the startup phase.
 *
 * Return: 0, -EFAULT or -ENOMEM (the Private Data set before then stays).
 */
int mpa_conn_set_local_pd(struct mpa_conn *c, sockptr_t pd, u32 len)
{
	u8 *copy = NULL;

	if (len) {
		copy = kmalloc(len, c->sk->sk_allocation | __GFP_ACCOUNT);
		if (!copy)
			return -ENOMEM;
		if (copy_from_sockptr(copy, pd, len)) {
			kfree(copy);
			return -EFAULT;
		}
	}
	kfree(c->local_pd);
	c->local_pd = copy;
	c->local_pd_len = len;
	return 0;
}

/**
 * mpa_conn_schedule() - run the connection's work soon
 * @c: the connection
 *
 * Any context. The work holds a reference on the socket. It runs on mpa's
 * own WQ_MEM_RECLAIM workqueue: a kernel consumer in the memory reclaim
 * path needs it to make progress under memory pressure.
 */
void mpa_conn_schedule(struct mpa_conn *c)
{
	sock_hold(c->sk);
	if (!queue_work(mpa_wq, &c->work))
		sock_put(c->sk);
}

static void mpa_conn_work(struct work_struct *work)
{
	struct mpa_conn *c = container_of(work, struct mpa_conn, work);
	struct sock *sk = c->sk;
	bool expired;

	lock_sock(sk);
	/*
	 * A frame TCP received before the timer fired is read first: the
	 * work, or the socket's owner, may have kept it waiting (R-7.1.2-25
	 * times out a peer that sent nothing, not a late worker)
	 */
	expired = test_and_clear_bit(MPA_EV_TIMEOUT, &c->events);
	mpa_startup_process(c);
	if (expired && (mpa_conn_in_startup(c) || c->close_after_tx)) {
		mpa_startup_expired(c);
		mpa_startup_process(c);
	}
	if (test_and_clear_bit(MPA_EV_RESUME, &c->events))
		c->kpaused = false;
	if (mpa_conn_full(c)) {
		/* Copy mode, the Responder rule, discarding after errors */
		if (mpa_rx_process(c))
			c->saved_data_ready(sk);
	}
	/*
	 * The FIN a shutdown(SHUT_WR) left behind what MPA holds: FPDUs, or
	 * (in any state) the rest of a startup frame
	 */
	if (c->fin_held)
		mpa_conn_fin_owed(c, expired);
	if (mpa_conn_full(c) && (mpa_tx_pending(c) || c->tx_run.bv_len)) {
		/* a blocking sender pushes itself once woken */
		if (!c->tx_waiting)
			mpa_tx_push(c);
		/* a blocking sender waits for the queue to drain */
		mpa_conn_wake(c);
	}
	mpa_kapi_run(c);
	release_sock(sk);
	sock_put(sk);
}

static void mpa_conn_timeout(struct timer_list *t)
{
	struct mpa_conn *c = from_timer(c, t, timer);

	set_bit(MPA_EV_TIMEOUT, &c->events);
	mpa_conn_schedule(c);
}

/**
 * mpa_conn_wake() - wake everybody waiting on the socket
 * @c: the connection
 *
 * Blocking callers, poll and epoll re-evaluate the state; the wake-up has
 * no poll key, so epoll waiters for any event see it.
 */
void mpa_conn_wake(struct mpa_conn *c)
{
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(c->sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

/**
 * mpa_conn_set_state() - move to a new state and wake waiters
 * @c: the connection, socket locked
 * @state: enum mpa_state
 */
void mpa_conn_set_state(struct mpa_conn *c, u8 state)
{
	/* after what the state announces (a REJECTED Responder's Reply) */
	smp_store_release(&c->state, state);
	/*
	 * The startup timeout runs until the startup is over; a retry of our
	 * frame, until it is out.
	 */
	if (!mpa_conn_in_startup(c) && c->tx_sent == c->tx_len)
		timer_delete(&c->timer);
	mpa_conn_wake(c);
	if (state == MPA_STATE_FULL)
		mpa_net_event(c, MPA_NET_ESTABLISHED);
	else if (state == MPA_STATE_REJECTED)
		mpa_net_event(c, MPA_NET_REJECTED);
}

/**
 * mpa_conn_fail() - the startup phase failed
 * @c: the connection, socket locked
 * @code: RFC 5044 section 8 error code
 * @reason: enum mpa_reason
 * @errnum: the errno to report (positive)
 * @close: close TCP now
 *
 * Records the error and moves to %MPA_STATE_FAILED. With @close, TCP is
 * closed gracefully with a FIN and the error set on the socket: code 4
 * requires an immediate close (R-8-6), and a FIN is the graceful way
 * (ambiguity A5); nothing that was received is delivered after this.
 */
void mpa_conn_fail(struct mpa_conn *c, u32 code, u32 reason, int errnum,
		   bool close)
{
	struct sock *sk = c->sk;

	if (mpa_conn_state(c) == MPA_STATE_FAILED)
		return;
	c->err.code = code;
	c->err.reason = reason;
	c->err.errnum = errnum;
	if (close) {
		/*
		 * A TCP closed already (a reset, its timeout) told its own
		 * error, which may have been read (SO_ERROR): not another.
		 */
		if (!sk->sk_err && READ_ONCE(sk->sk_state) != TCP_CLOSE)
			WRITE_ONCE(sk->sk_err, errnum);
		WRITE_ONCE(sk->sk_shutdown, sk->sk_shutdown | SHUTDOWN_MASK);
	}
	/*
	 * State, error and shutdown before our FIN: a poller woken by it
	 * must see EPOLLERR and the failure, not a bare EPOLLHUP. The state
	 * last, with release: a reader without the lock that sees FAILED
	 * sees c->err (mpa_stream_errno()), and the error and shutdown that
	 * tcp_poll() may have read before them (mpa_poll_mask()).
	 */
	smp_store_release(&c->state, MPA_STATE_FAILED);
	if (close) {
		c->sk_proto->shutdown(sk, SEND_SHUTDOWN);
		/*
		 * What TCP did not take of our frame can never follow the FIN:
		 * it is dropped, not held, so that close() closes as TCP does
		 * (the stream sent before MPA_START goes out), not with a reset
		 * for a frame nobody will read.
		 */
		WRITE_ONCE(c->tx_sent, c->tx_len);
		sk_error_report(sk);
	}
	mpa_conn_set_state(c, MPA_STATE_FAILED);
	mpa_net_event(c, MPA_NET_STARTUP_FAILED);
}

/**
 * mpa_conn_mulpdu() - the current MULPDU (RFC 5044 section 4.5)
 * @c: the connection
 *
 * From TCP's current MSS (ambiguity A13: mss_cache, as tcp_current_mss()
 * is not available to modules) and this direction's Marker state.
 *
 * Return: MULPDU, clamped to 128..64768.
 */
u32 mpa_conn_mulpdu(const struct mpa_conn *c)
{
	return mpa_mulpdu(READ_ONCE(tcp_sk(c->sk)->mss_cache),
			  c->params.tx_markers);
}

/**
 * mpa_conn_result() - what the startup phase negotiated
 * @c: the connection; with the socket locked, else a snapshot that may
 *	mix the values before and after a change of state
 * @res: filled in
 */
void mpa_conn_result(const struct mpa_conn *c, struct mpa_result *res)
{
	const struct mpa_params *p = &c->params;

	memset(res, 0, sizeof(*res));
	res->revision = READ_ONCE(p->rev);
	res->flags = (READ_ONCE(p->tx_markers) ? MPA_RESULT_TX_MARKERS : 0) |
		     (READ_ONCE(p->rx_markers) ? MPA_RESULT_RX_MARKERS : 0) |
		     (READ_ONCE(p->crc) ? MPA_RESULT_CRC : 0) |
		     (READ_ONCE(p->enhanced) ? MPA_RESULT_ENHANCED : 0) |
		     (READ_ONCE(p->p2p) ? MPA_RESULT_PEER_TO_PEER : 0) |
		     (READ_ONCE(c->tx_held) ? MPA_RESULT_TX_HELD : 0);
	res->rtr = READ_ONCE(p->rtr);
	res->role = READ_ONCE(c->role);
	res->ird = READ_ONCE(p->ird);
	res->ord = READ_ONCE(p->ord);
	res->mulpdu = mpa_conn_mulpdu(c);
}

/**
 * mpa_conn_stats() - the connection's counters
 * @c: the connection; any context (a snapshot unless the socket is locked)
 * @st: filled in
 */
void mpa_conn_stats(const struct mpa_conn *c, struct mpa_stats *st)
{
	const struct mpa_stats *s = &c->stats;

	st->tx_fpdus = READ_ONCE(s->tx_fpdus);
	st->tx_octets = READ_ONCE(s->tx_octets);
	st->rx_fpdus = READ_ONCE(s->rx_fpdus);
	st->rx_octets = READ_ONCE(s->rx_octets);
	st->tx_markers = READ_ONCE(s->tx_markers);
	st->rx_markers = READ_ONCE(s->rx_markers);
	st->crc_errors = READ_ONCE(s->crc_errors);
	st->marker_errors = READ_ONCE(s->marker_errors);
	st->startup_octets_tx = READ_ONCE(s->startup_octets_tx);
	st->startup_octets_rx = READ_ONCE(s->startup_octets_rx);
}

/**
 * mpa_conn_info() - describe the connection for the control plane
 * @c: the connection; any context, the socket need not be locked: the
 *	addresses are fixed once TCP is connected (those a reset of MPA's own
 *	clears are kept from the attach), the rest is a snapshot
 * @ci: filled in
 */
void mpa_conn_info(const struct mpa_conn *c, struct mpa_conn_info *ci)
{
	const struct sock *sk = c->sk;
	const struct inet_sock *inet = inet_sk(sk);

	memset(ci, 0, sizeof(*ci));
	ci->ino = c->ino;
	ci->family = sk->sk_family;
	if (sk->sk_family == AF_INET) {
		ci->saddr4 = c->saddr.v4;
		ci->daddr4 = inet->inet_daddr;
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (sk->sk_family == AF_INET6) {
		ci->saddr6 = c->saddr.v6;
		ci->daddr6 = sk->sk_v6_daddr;
	}
#endif
	ci->sport = inet->inet_sport;
	ci->dport = c->dport;
	ci->kernel = READ_ONCE(c->kernel);
	ci->state = mpa_conn_state(c);
	mpa_conn_result(c, &ci->res);
	mpa_conn_stats(c, &ci->stats);
	ci->err.code = READ_ONCE(c->err.code);
	ci->err.reason = READ_ONCE(c->err.reason);
	ci->err.errnum = READ_ONCE(c->err.errnum);
}

/**
 * mpa_conn_frame_info() - describe the startup frame received
 * @c: the connection, socket locked, with a frame received
 * @fi: filled in
 */
void mpa_conn_frame_info(const struct mpa_conn *c, struct mpa_frame_info *fi)
{
	const struct mpa_frame *f = &c->peer;

	memset(fi, 0, sizeof(*fi));
	fi->revision = f->rev;
	fi->flags = (f->m ? MPA_FRAME_MARKERS : 0) |
		    (f->c ? MPA_FRAME_CRC : 0) |
		    (f->r ? MPA_FRAME_REJECT : 0) |
		    (f->enhanced ? MPA_FRAME_ENHANCED : 0) |
		    (f->p2p ? MPA_FRAME_PEER_TO_PEER : 0);
	fi->res = f->res;
	fi->rtr = f->rtr;
	fi->pd_len = f->ulp_pd_len;
	fi->ird = f->ird;
	fi->ord = f->ord;
}
