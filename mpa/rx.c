// SPDX-License-Identifier: GPL-2.0
/*
 * MPA receive path: FPDUs are judged and delivered in place, on TCP's
 * receive queue.
 *
 * Every decision about the octets is the receive machine's (core/rxm.c):
 * where the next FPDU starts and ends, which octets are Markers and what
 * they must say, the CRC and Marker verdicts, the RFC 5044 section 8
 * error, which octets are the ULPDU's. This file only feeds it the octets
 * TCP has queued and acts on its answers.
 *
 * The machine is fed straight from the skbs (skb_seq_read(): the one CRC
 * pass), as octets arrive or, for a socket read by recv, by the reader
 * (mpa_rx_defer()); they stay in TCP's queue, charged to the socket, so
 * the window closes on a slow reader as it should. Once the machine has
 * judged the FPDU valid its ULPDU is copied to the reader (the one copy)
 * and only then are its octets consumed from TCP; nothing of an FPDU is
 * delivered before its CRC and Markers are checked (R-6-1).
 *
 * An FPDU that cannot fit in the receive buffer (a small SO_RCVBUF, memory
 * pressure) would stall the connection: then the octets the machine has
 * seen are moved, as they come, into a buffer of the connection's own
 * (copy mode), which frees TCP's buffer and reopens the window. The wire
 * offset of the FPDU's first @rx_cfill octets is in that buffer, the rest
 * in the queue. The buffer grows as the octets come, up to the FPDU's
 * span (at most 65288 octets); it is allocated with the socket's
 * allocation flags, charged to the socket's memory cgroup, and freed as
 * soon as the FPDU is consumed or the receive half fails: an idle
 * connection holds none.
 *
 * The machine is fed in the socket's data_ready callback (softirq, or the
 * socket owner's backlog processing) and under the socket lock in process
 * context; the two never run at once, as TCP only calls data_ready from
 * softirq while no process owns the socket.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <linux/uio.h>
#include <kunit/visibility.h>
#include <net/tcp.h>

#include "conn.h"
#include "netns.h"

/* Sequence number of the first data octet of a queued skb */
static u32 mpa_skb_seq(const struct sk_buff *skb)
{
	return TCP_SKB_CB(skb)->seq +
	       !!(TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN);
}

/*
 * A forward walk over TCP's receive queue: each lookup starts where the
 * previous one ended, so the pieces of one FPDU cost one walk in all.
 */
struct mpa_rxq_cur {
	struct sk_buff *skb;	/* where the last octet was found, or NULL */
};

/* The skb holding the octet at @seq, at or after the cursor, and where. */
static struct sk_buff *mpa_rxq_seek(struct sock *sk, struct mpa_rxq_cur *cur,
				    u32 seq, u32 *off)
{
	struct sk_buff *skb = cur->skb ?: skb_peek(&sk->sk_receive_queue);

	for (; skb; skb = skb_peek_next(skb, &sk->sk_receive_queue)) {
		u32 start = mpa_skb_seq(skb);

		if (before(seq, start))
			return NULL;
		if (seq - start < skb->len) {
			*off = seq - start;
			cur->skb = skb;
			return skb;
		}
	}
	return NULL;
}

/**
 * mpa_rxq_peek() - copy queued octets without consuming them
 * @sk: the socket, owned or bh-locked
 * @off: offset of the first octet from TCP's copied_seq
 * @buf: where to copy
 * @len: how many
 *
 * Return: 0, or -EAGAIN if they are not all queued yet.
 */
int mpa_rxq_peek(struct sock *sk, u32 off, void *buf, u32 len)
{
	u32 seq = tcp_sk(sk)->copied_seq + off, o, n;
	struct mpa_rxq_cur cur = {};
	struct sk_buff *skb;

	for (; len; len -= n) {
		skb = mpa_rxq_seek(sk, &cur, seq, &o);
		if (!skb)
			return -EAGAIN;
		n = min(len, skb->len - o);
		if (skb_copy_bits(skb, o, buf, n))
			return -EFAULT;
		buf += n;
		seq += n;
	}
	return 0;
}

/**
 * mpa_rxq_consume() - take octets off TCP's receive queue
 * @sk: the socket, locked, process context
 * @n: how many, all of them queued
 *
 * MPA sockets are SO_OOBINLINE: an urgent octet is an ordinary octet of
 * the stream. tcp_read_done() does not know the urgent mark, though: once
 * the octets taken pass it, forget it as tcp_recvmsg() does, or TCP would
 * report it (EPOLLPRI, SIOCATMARK) for ever and stay off its fast path.
 */
void mpa_rxq_consume(struct sock *sk, u32 n)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tcp_read_done(sk, n);
	if (unlikely(READ_ONCE(tp->urg_data)) &&
	    after(tp->copied_seq, tp->urg_seq)) {
		WRITE_ONCE(tp->urg_data, 0);
		tcp_fast_path_check(sk);
	}
}

/* Copy queued octets [@off, @off + @len) from copied_seq to the reader. */
static int mpa_rxq_copy(struct sock *sk, struct mpa_rxq_cur *cur, u32 off,
			struct iov_iter *to, u32 len)
{
	u32 seq = tcp_sk(sk)->copied_seq + off, o, n;
	struct sk_buff *skb;

	for (; len; len -= n) {
		skb = mpa_rxq_seek(sk, cur, seq, &o);
		if (!skb)
			return -EFAULT;
		n = min(len, skb->len - o);
		if (skb_copy_datagram_iter(skb, o, to, n))
			return -EFAULT;
		seq += n;
	}
	return 0;
}

/*
 * The first skb holding the octet @seq, with @left octets queued after it:
 * where TCP reads it (tcp_recv_skb(), mpa_rxq_seek()), so that the machine
 * judges the very octets the reader gets when skbs overlap with different
 * contents (R-6-1). Look from the nearer end of the queue: the tail when
 * new data comes in behind a partial FPDU, the head when the previous FPDU
 * was just consumed with more queued behind it (a walk from the tail would
 * cost the whole queue for each small FPDU). From the tail, walk back to
 * the first skb that ends at or before @seq: every earlier one does too,
 * as TCP queues a segment only if it ends past rcv_nxt.
 */
static struct sk_buff *mpa_rxq_find(struct sk_buff_head *q, u32 seq,
				    u32 left)
{
	struct sk_buff *skb, *found = NULL;

	if (seq - mpa_skb_seq(skb_peek(q)) <= left) {
		skb_queue_walk(q, skb) {
			u32 start = mpa_skb_seq(skb);

			if (before(seq, start))
				return NULL;
			if (seq - start < skb->len)
				return skb;
		}
		return NULL;
	}
	skb_queue_reverse_walk(q, skb) {
		u32 start = mpa_skb_seq(skb);

		if (before(seq, start))
			continue;
		if (seq - start >= skb->len)
			break;
		found = skb;
	}
	return found;
}

/**
 * mpa_rxq_feed() - feed the machine queued octets, straight from the skbs
 * @q: TCP's receive queue, @len octets from @seq on in it
 * @seq: sequence number of the first octet to feed
 * @len: how many octets at most
 * @m: the machine
 *
 * Stops when the machine does (at the end of its FPDU, or at an error).
 *
 * The queue is in sequence order, but its skbs may overlap: a segment
 * that starts before rcv_nxt and ends after it (a retransmission cut
 * differently from the first transmission, a segment moved in from the
 * out-of-order queue) is queued whole, its first octets copies of octets
 * the skb before it holds (tcp_data_queue(), tcp_ofo_queue()). So each
 * skb is entered at the octet the machine wants next, found from the
 * skb's own sequence number, never at its first octet.
 *
 * Return: octets fed.
 */
VISIBLE_IF_KUNIT u32 mpa_rxq_feed(struct sk_buff_head *q, u32 seq, u32 len,
				  struct mpa_rxm *m)
{
	u32 o, n, done, chunk, used, fed = 0;
	struct skb_seq_state st;
	struct sk_buff *skb;
	const u8 *data;

	if (!len || skb_queue_empty(q))
		return 0;
	skb = mpa_rxq_find(q, seq, len);
	for (; skb && fed < len && mpa_rxm_state(m) == MPA_RXM_MORE;
	     skb = skb_peek_next(skb, q)) {
		if (before(seq + fed, mpa_skb_seq(skb)))
			break;			/* a hole: not in TCP's queue */
		o = seq + fed - mpa_skb_seq(skb);
		if (o >= skb->len)
			continue;		/* all of it fed already */
		n = min(skb->len - o, len - fed);
		skb_prepare_seq_read(skb, o, o + n, &st);
		for (done = 0; (chunk = skb_seq_read(done, &data, &st));
		     done += used) {
			/* a block may run on past the range asked for */
			chunk = min(chunk, n - done);
			used = mpa_rxm_feed(m, data, chunk);
			fed += used;
			if (used < chunk) {
				/* the machine stopped: FPDU end or error */
				skb_abort_seq_read(&st);
				return fed;
			}
		}
		if (done < n)
			break;			/* unreadable frags: no octets */
	}
	return fed;
}
EXPORT_SYMBOL_IF_KUNIT(mpa_rxq_feed);

/*
 * Feed the machine the queued octets it has not seen yet, until it stops
 * at the end of the FPDU (or at an error) or the queue ends. In copy mode
 * it has seen all of the copy buffer.
 */
static void mpa_rx_feed(struct mpa_conn *c)
{
	struct mpa_rxm *m = &c->rxm;
	struct sock *sk = c->sk;
	u32 off, avail;

	if (mpa_rxm_state(m) != MPA_RXM_MORE)
		return;
	off = mpa_rxm_fed(m) - c->rx_cfill;
	avail = tcp_inq(sk);
	if (off >= avail)
		return;
	mpa_rxq_feed(&sk->sk_receive_queue, tcp_sk(sk)->copied_seq + off,
		     avail - off, m);
}

/*
 * The current FPDU's span is known: make sure the receive window can hold
 * it and the next ones behind it. MPA leaves an FPDU in TCP's queue, its
 * octets closing the window, until the reader has judged and copied all
 * of it; TCP's receive buffer autotuning, which sizes the window by what
 * the reader took in the last round trip, would leave it at about one
 * large FPDU: the sender would then wait for each FPDU to be read before
 * it sends the next, the two ends taking turns instead of working at
 * once. So grow the buffer (and the window clamp with it) for three of
 * these FPDUs, as tcp_rcv_space_adjust() would grow it: not past
 * tcp_rmem[2], and not when the user set SO_RCVBUF or autotuning is off.
 */
static void mpa_rx_window(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	struct tcp_sock *tp = tcp_sk(sk);
	u32 win = 3 * mpa_rxm_extent(&c->rxm);
	int rcvbuf;

	if (!mpa_rxm_span_known(&c->rxm) || win <= READ_ONCE(tp->window_clamp) ||
	    (sk->sk_userlocks & SOCK_RCVBUF_LOCK) ||
	    !READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_moderate_rcvbuf))
		return;
	rcvbuf = min(tcp_space_from_win(sk, win),
		     READ_ONCE(sock_net(sk)->ipv4.sysctl_tcp_rmem[2]));
	if (rcvbuf > READ_ONCE(sk->sk_rcvbuf)) {
		WRITE_ONCE(sk->sk_rcvbuf, rcvbuf);
		WRITE_ONCE(tp->window_clamp, tcp_win_from_space(sk, rcvbuf));
	}
}

/* RFC 5044 section 8 code to what recv returns */
static int mpa_rx_errno(u32 code)
{
	return code == MPA_ERR_TCP_CLOSED ? EPROTO : EBADMSG;
}

/*
 * The receive half is dead (RFC 5044 section 8): record why, tell the
 * reader; nothing more is delivered. TCP is left alone (sk_err untouched),
 * so the consumer can still send, e.g. a Terminate message; but not a
 * Responder still held (mpa_conn_held_for_good()), whose waiting senders
 * and pollers are woken to learn it.
 */
static void mpa_rx_fail(struct mpa_conn *c)
{
	u32 code = c->rxm.code;

	c->err.code = code;
	c->err.reason = c->rxm.reason;
	c->err.errnum = mpa_rx_errno(code);
	if (code == MPA_ERR_CRC)
		c->stats.crc_errors++;
	else if (code == MPA_ERR_MARKER)
		c->stats.marker_errors++;
	WRITE_ONCE(c->rx_err, mpa_rx_errno(code));
	WRITE_ONCE(c->rx_ready, true);
	/* the reader's wakeup has an EPOLLIN key: not for POLLOUT waiters */
	if (c->tx_held)
		mpa_conn_wake(c);
	mpa_net_event(c, MPA_NET_ERROR);
}

/**
 * mpa_rx_probe() - feed what is queued: is the next FPDU judged?
 * @c: the connection, in Full Operation; socket owned or bh-locked
 *
 * Return: true if recv would not wait: the machine judged the FPDU valid,
 * or the receive half failed.
 */
bool mpa_rx_probe(struct mpa_conn *c)
{
	bool ready;

	if (READ_ONCE(c->rx_err))
		return true;
	/* after a reset nothing more comes: the machine stopped */
	if (READ_ONCE(c->rx_reset))
		return false;
	mpa_rx_feed(c);
	mpa_rx_window(c);
	switch (mpa_rxm_state(&c->rxm)) {
	case MPA_RXM_ERROR:
		mpa_rx_fail(c);
		return true;
	case MPA_RXM_FPDU:
		ready = true;
		break;
	default:
		ready = false;
		break;
	}
	/* an empty ULPDU is skipped, not read (A12): nothing for a reader */
	WRITE_ONCE(c->rx_ready, ready && mpa_rxm_ulpdu_len(&c->rxm));
	return ready;
}

/* Must the FPDU be moved out of TCP's queue so that it can complete? */
static bool mpa_rx_need_copy(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	if (c->rx_err || c->rx_reset || c->rx_ready || !tcp_inq(sk) ||
	    mpa_rxm_state(&c->rxm) == MPA_RXM_FPDU)	/* an empty ULPDU */
		return false;
	/* Once started, copy mode lasts to the end of the FPDU. */
	return c->rx_cfill || tcp_epollin_ready(sk, INT_MAX);
}

static void mpa_rx_cbuf_free(struct mpa_conn *c)
{
	kvfree(c->rx_cbuf);
	c->rx_cbuf = NULL;
	c->rx_csize = 0;
	c->rx_cfill = 0;
}

/*
 * Has the peer's FIN come to a Responder still held (R-7.1.2-15), whose
 * hold it may end for good (mpa_rx_fin_held())? Socket owned or bh-locked.
 */
static bool mpa_rx_fin_due(const struct mpa_conn *c)
{
	return READ_ONCE(c->tx_held) && sock_flag(c->sk, SOCK_DONE) &&
	       !READ_ONCE(c->rx_err) && !READ_ONCE(c->held_eof) &&
	       !READ_ONCE(c->rx_reset);
}

/*
 * The peer's FIN came to a Responder still held, and the machine has fed
 * all that came before it without a whole FPDU: the Initiator's first
 * valid FPDU can never come, so the hold never ends. The receive half is
 * settled now, not at the next recv (mpa_rx_end(), which would find the
 * same): a FIN inside an FPDU fails it (requirements A15), one at an FPDU
 * boundary ends it cleanly and marks the hold for good. Either way the
 * Responder's senders and pollers learn it (mpa_conn_held_for_good()),
 * as after a CRC error, rather than wait for room that never comes.
 * Socket locked, process context.
 * Return: true if the receive half failed.
 */
static bool mpa_rx_fin_held(struct mpa_conn *c)
{
	if (!mpa_rx_fin_due(c))
		return false;
	if (mpa_rxm_fin(&c->rxm) == MPA_RXM_ERROR) {
		mpa_rx_fail(c);
		mpa_rx_cbuf_free(c);
		return true;
	}
	WRITE_ONCE(c->held_eof, true);
	mpa_conn_wake(c);
	return false;
}

/*
 * Make the copy mode buffer hold @size octets, keeping the @rx_cfill it
 * has. It is charged (__GFP_ACCOUNT) to the socket's memory cgroup, as
 * TCP's buffers are, whichever task runs this (the connection's work runs
 * in a kworker), and allocated with the socket's flags: a consumer in the
 * memory reclaim path sets GFP_NOIO or GFP_ATOMIC there.
 */
static int mpa_rx_cbuf_grow(struct mpa_conn *c, u32 size)
{
	struct sock *sk = c->sk;
	struct mem_cgroup *old = NULL;
	u8 *buf;

	if (size <= c->rx_csize)
		return 0;
	/* the socket holds a reference on its memory cgroup */
	if (sk->sk_memcg)
		old = set_active_memcg(sk->sk_memcg);
	buf = kvmalloc(size, sk->sk_allocation | __GFP_ACCOUNT | __GFP_NOWARN);
	if (sk->sk_memcg)
		set_active_memcg(old);
	if (!buf)
		return -ENOMEM;
	if (c->rx_cfill)
		memcpy(buf, c->rx_cbuf, c->rx_cfill);
	kvfree(c->rx_cbuf);
	c->rx_cbuf = buf;
	c->rx_csize = size;
	return 0;
}

/*
 * The size of the copy mode buffer for @n more octets: what they need, at
 * least twice what it holds (few copies as it grows) and MPA_RX_CBUF_MIN,
 * at most what the machine knows the FPDU to be (its header until
 * ULPDU_Length is read, then its span). Not that span at once: a peer
 * that announces a large FPDU and sends a few octets of it would have us
 * hold the whole span, outside TCP's memory accounting, for as long as
 * it likes, and copy mode starts when memory is short.
 */
#define MPA_RX_CBUF_MIN		SZ_4K

static u32 mpa_rx_cbuf_want(const struct mpa_conn *c, u32 n)
{
	u32 want = max3(c->rx_cfill + n, 2 * c->rx_csize, (u32)MPA_RX_CBUF_MIN);

	return min(want, mpa_rxm_extent(&c->rxm));
}

/*
 * Copy mode: move the octets the machine has seen into our own buffer,
 * grown as they come (mpa_rx_cbuf_want()).
 */
static void mpa_rx_copyin(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	while (mpa_rx_need_copy(c)) {
		/* They all belong to the FPDU: the machine stops at its end */
		u32 n = min_t(u32, mpa_rxm_fed(&c->rxm) - c->rx_cfill,
			      tcp_inq(sk));

		if (!n)
			break;
		if (mpa_rx_cbuf_grow(c, mpa_rx_cbuf_want(c, n))) {
			/*
			 * No memory (or the memory cgroup is at its limit):
			 * try again soon, as the window may be shut and no
			 * more data come to bring us back.
			 */
			mod_timer(&c->timer, jiffies + MPA_RETRY);
			break;
		}
		if (mpa_rxq_peek(sk, 0, c->rx_cbuf + c->rx_cfill, n))
			break;
		mpa_rxq_consume(sk, n);
		c->rx_cfill += n;
		mpa_rx_probe(c);
	}
}

/*
 * Feed the machine the next FPDU's queued octets outside data_ready (Full
 * Operation begins, or the FPDU before it was taken). When they already
 * fill the receive buffer, TCP's window is shut: no more data comes, and
 * so no data_ready to start copy mode, which it did not start while the
 * startup phase ran or an FPDU judged before waited for its reader. The
 * work starts it then, as data_ready would have. A FIN that came before
 * Full Operation to a held Responder is settled here (mpa_rx_fin_held();
 * at an FPDU boundary: any octet behind the Request failed the startup).
 * Socket locked, process context.
 */
static void mpa_rx_probe_next(struct mpa_conn *c)
{
	bool judged = mpa_rx_probe(c);

	/* an empty ULPDU: the work skips it (mpa_rx_process()) */
	if (judged ? !READ_ONCE(c->rx_ready) : mpa_rx_need_copy(c))
		mpa_conn_schedule(c);
	else if (!judged)
		mpa_rx_fin_held(c);
}

/* The FPDU was delivered: take it off the queue, on to the next one. */
static void mpa_rx_consume(struct mpa_conn *c)
{
	struct mpa_rxm *m = &c->rxm;
	u32 span = mpa_rxm_span(m);

	if (span > c->rx_cfill)
		mpa_rxq_consume(c->sk, span - c->rx_cfill);
	c->stats.rx_fpdus++;
	c->stats.rx_octets += mpa_rxm_ulpdu_len(m);
	c->stats.rx_markers += mpa_rxm_nr_markers(m);
	mpa_rxm_next(m);
	mpa_rx_cbuf_free(c);
	c->rx_done = 0;
	/*
	 * rx_ready stays until mpa_rx_probe() writes the next FPDU's verdict:
	 * a false in between would let a poller of another thread sleep
	 * through a next FPDU judged ready here, which wakes no one (a true
	 * in between is a spurious EPOLLIN, which recv answers with EAGAIN).
	 */
	mpa_rx_probe_next(c);
}

/**
 * mpa_rx_process() - make what progress the receive queue allows
 * @c: the connection, in Full Operation; socket locked, process context
 *
 * Brings the next FPDU to its verdict (copy mode if need be); a valid one
 * releases a Responder's held FPDUs, the peer's FIN before one holds them
 * for good (mpa_rx_fin_held()); discards what arrives after an error.
 *
 * Return: true if recv would not wait.
 */
bool mpa_rx_process(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	for (;;) {
		if (c->rx_err) {
			/* Nothing after a bad FPDU is delivered: keep TCP flowing */
			if (tcp_inq(sk))
				mpa_rxq_consume(sk, tcp_inq(sk));
			mpa_rx_cbuf_free(c);
			return true;
		}
		if (!mpa_rx_probe(c)) {
			if (mpa_rx_need_copy(c)) {
				mpa_rx_copyin(c);
				/* judged (an empty ULPDU too: skipped below) */
				if (mpa_rxm_state(&c->rxm) != MPA_RXM_MORE)
					continue;
			}
			return mpa_rx_fin_held(c);
		}
		if (c->rx_err)
			continue;
		/* A valid FPDU */
		/* R-7.1.2-15: the Initiator's first valid FPDU is here */
		if (c->tx_held)
			mpa_conn_hold_end(c);
		/* Requirements A12: an empty ULPDU is checked, then skipped. */
		if (mpa_rxm_ulpdu_len(&c->rxm))
			return true;
		mpa_rx_consume(c);
	}
}

/*
 * TCP was reset (or timed out) with @errnum: code 1, once (A15). Every
 * whole FPDU queued before it was delivered; the one begun, if any, never
 * completes. The machine stops here (mpa_rx_probe()), and the octets of
 * that FPDU that copy mode took out of TCP's queue go now, not at close
 * (which frees what TCP itself still queues, as on TCP).
 */
static void mpa_rx_reset(struct mpa_conn *c, int errnum)
{
	if (!c->err.code) {
		c->err.code = MPA_ERR_TCP_CLOSED;
		c->err.reason = MPA_REASON_PEER_CLOSED;
		c->err.errnum = errnum;
		mpa_net_event(c, MPA_NET_ERROR);
	} else if (c->err.code == MPA_ERR_TCP_CLOSED && !c->err.errnum) {
		/* after the peer's FIN at an FPDU boundary: now an error */
		c->err.errnum = errnum;
		mpa_net_event(c, MPA_NET_ERROR);
	}
	WRITE_ONCE(c->rx_reset, true);
	mpa_rx_cbuf_free(c);
}

/**
 * mpa_rx_end() - no ULPDU to return: has the receive half ended?
 * @c: the connection, socket locked, in Full Operation
 * @eof: set when it has
 *
 * Return: 0 (with *@eof clear: wait for more), or what recv returns: a
 * reset's error, -EPROTO for a FIN inside an FPDU, 0 for end of file; or
 * a soft error (mpa_tcp_soft_error()), with *@eof clear: the stream goes
 * on.
 */
int mpa_rx_end(struct mpa_conn *c, bool *eof)
{
	struct sock *sk = c->sk;
	bool soft;
	int err;

	*eof = false;
	soft = mpa_tcp_soft_error(c);
	if (soft && !sock_flag(sk, SOCK_DONE)) {
		/*
		 * Reported once, as TCP's recv does before the peer's FIN
		 * (after it, as there, SO_ERROR alone tells); the stream
		 * goes on.
		 */
		return sock_error(sk);
	}
	if (sk->sk_err && !soft && !sock_flag(sk, SOCK_DONE)) {
		/*
		 * RST (code 1): after the whole FPDUs queued before it. One
		 * after the peer's FIN (TCP's EPIPE) does not end the
		 * receive half again: below, as on TCP.
		 */
		err = sock_error(sk);
		if (err) {
			mpa_rx_reset(c, -err);
			return err;
		}
		/* SO_ERROR, which takes no lock, took it meanwhile: below */
	}
	if (!sock_flag(sk, SOCK_DONE)) {
		/* Our own SHUT_RD, or a closed socket: plain end of file */
		*eof = (sk->sk_shutdown & RCV_SHUTDOWN) ||
		       sk->sk_state == TCP_CLOSE;
		/*
		 * A reset whose error the user read first (SO_ERROR, send):
		 * told once, as on TCP, but still code 1, not a clean end
		 */
		if (*eof && sk->sk_state == TCP_CLOSE &&
		    READ_ONCE(c->hard_err))
			mpa_rx_reset(c, READ_ONCE(c->hard_err));
		return 0;
	}
	/* The peer's FIN */
	*eof = true;
	if (c->rx_reset)
		return 0;
	if (mpa_rxm_fin(&c->rxm) == MPA_RXM_ERROR) {
		/* FIN inside an FPDU (requirements A15): never delivered */
		mpa_rx_fail(c);
		mpa_rx_cbuf_free(c);
		return -EPROTO;
	}
	/*
	 * FIN at an FPDU boundary: end of file, code 1 (A15); a reset after
	 * it makes that an error all the same (its errno, the error event),
	 * whether the socket's error was read or is left for SO_ERROR and
	 * send, which TCP's recv does not take after the FIN either
	 */
	if (sk->sk_state == TCP_CLOSE && READ_ONCE(c->hard_err)) {
		mpa_rx_reset(c, READ_ONCE(c->hard_err));
		return 0;
	}
	if (!c->err.code) {
		c->err.code = MPA_ERR_TCP_CLOSED;
		c->err.reason = MPA_REASON_PEER_CLOSED;
	}
	return 0;
}

static int mpa_rx_wait(struct mpa_conn *c, long *timeo)
{
	DEFINE_WAIT_FUNC(wait, woken_wake_function);
	struct sock *sk = c->sk;

	add_wait_queue(sk_sleep(sk), &wait);
	sk_set_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	/* the caller judges what woke us: mpa_rx_ulpdu() comes next */
	sk_wait_event(sk, timeo, READ_ONCE(c->rx_ready) ||
		      READ_ONCE(sk->sk_err) ||
		      (READ_ONCE(sk->sk_shutdown) & RCV_SHUTDOWN), &wait);
	sk_clear_bit(SOCKWQ_ASYNC_WAITDATA, sk);
	remove_wait_queue(sk_sleep(sk), &wait);
	return 0;
}

/**
 * mpa_rx_ulpdu() - the next validated ULPDU, as a view of the received data
 * @c: the connection, socket locked, in Full Operation, process context
 * @u: filled with the view on success
 *
 * This is how a ULPDU is handed to its consumer, by recvmsg() and by
 * in-kernel consumers alike: nothing is copied; the consumer places the
 * octets it wants with mpa_ulpdu_copy(), in any order and as often as it
 * likes, and then reports what it took with mpa_rx_advance(). The view
 * stays valid until then, and only while the socket stays locked.
 *
 * Return: 0 with a ULPDU of at least one octet; -EAGAIN if none is
 * complete yet; the receive half's sticky error (-EBADMSG, -EPROTO).
 */
int mpa_rx_ulpdu(struct mpa_conn *c, struct mpa_ulpdu *u)
{
	if (!mpa_rx_process(c))
		return -EAGAIN;
	if (c->rx_err)
		return -c->rx_err;
	u->c = c;
	u->len = mpa_rxm_ulpdu_len(&c->rxm);
	u->done = c->rx_done;
	return 0;
}

/**
 * mpa_ulpdu_live() - are the octets of a ULPDU view still there?
 * @u: the view, from mpa_rx_ulpdu(), socket locked
 *
 * A send from the consumer's callback may have reset the connection
 * (mpa_tx_hand()): TCP's receive queue and the machine are purged, and
 * the ULPDU's octets with them.
 *
 * Return: false once they are gone.
 */
bool mpa_ulpdu_live(const struct mpa_ulpdu *u)
{
	const struct mpa_conn *c = u->c;

	return mpa_rxm_state(&c->rxm) == MPA_RXM_FPDU &&
	       mpa_rxm_ulpdu_len(&c->rxm) == u->len;
}

/**
 * mpa_ulpdu_copy() - place octets of a ULPDU
 * @u: the view, from mpa_rx_ulpdu()
 * @off: offset of the first octet in the ULPDU
 * @to: the destination
 * @len: how many octets
 *
 * Copies straight from TCP's receive queue (or the copy mode buffer),
 * from where the receive machine says the ULPDU's octets are: Markers
 * skipped. The FPDU was validated as a whole before the view was handed
 * out.
 *
 * Context: process context, socket locked: inside &mpa_kops.ulpdu for an
 * in-kernel consumer.
 * Return: 0, -EINVAL for a range outside the ULPDU or @to not a
 * destination (%ITER_DEST), -EFAULT, or -ECONNRESET when the connection
 * was reset since the view was handed out. Undefined with a view kept past
 * the &mpa_kops.ulpdu callback it was passed to.
 */
int mpa_ulpdu_copy(const struct mpa_ulpdu *u, u32 off, struct iov_iter *to,
		   u32 len)
{
	struct mpa_conn *c = u->c;
	struct mpa_rxq_cur cur = {};
	u32 wire, n;
	int ret;

	if (off > u->len || len > u->len - off ||
	    iov_iter_rw(to) != ITER_DEST)
		return -EINVAL;
	if (!mpa_ulpdu_live(u))
		return -ECONNRESET;
	for (; len; len -= n, off += n) {
		n = min(mpa_rxm_locate(&c->rxm, off, &wire), len);
		if (wire < c->rx_cfill) {
			/* copy mode: the FPDU's first octets are ours */
			n = min(n, c->rx_cfill - wire);
			if (copy_to_iter(c->rx_cbuf + wire, n, to) != n)
				return -EFAULT;
			continue;
		}
		ret = mpa_rxq_copy(c->sk, &cur, wire - c->rx_cfill, to, n);
		if (ret)
			return ret;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(mpa_ulpdu_copy);

/**
 * mpa_rx_advance() - the consumer took @n more octets of the ULPDU
 * @c: the connection, socket locked
 * @n: octets, at most what is left of the ULPDU in mpa_rx_ulpdu()'s view
 *
 * Once the whole ULPDU is taken its FPDU leaves TCP's receive queue, which
 * reopens the window, and the next FPDU comes up.
 *
 * Return: true if the ULPDU is finished.
 */
bool mpa_rx_advance(struct mpa_conn *c, u32 n)
{
	/* reset meanwhile (see mpa_ulpdu_copy()): nothing left to take */
	if (mpa_rxm_state(&c->rxm) != MPA_RXM_FPDU)
		return false;
	c->rx_done += n;
	if (c->rx_done < mpa_rxm_ulpdu_len(&c->rxm))
		return false;
	mpa_rx_consume(c);
	return true;
}

/**
 * mpa_rx_recvmsg() - return (part of) the next ULPDU
 * @c: the connection, socket locked, in Full Operation
 * @msg: where to
 * @len: room there
 * @flags: MSG_DONTWAIT, MSG_PEEK (MSG_WAITALL changes nothing)
 *
 * Return: octets copied (MSG_EOR in @msg->msg_flags when the ULPDU ends),
 * 0 at end of file, or a negative errno (see
 * Documentation/networking/mpa.rst); -ENOTCONN once the connection has
 * left Full Operation meanwhile (the Initiator refused the Reply, or the
 * rest of a Responder's Reply could not go).
 */
int mpa_rx_recvmsg(struct mpa_conn *c, struct msghdr *msg, size_t len,
		   int flags)
{
	struct sock *sk = c->sk;
	long timeo = sock_rcvtimeo(sk, flags & MSG_DONTWAIT);
	struct mpa_ulpdu u;
	bool eof;
	u32 n;
	int ret;

	if (flags & MSG_OOB)
		return -EOPNOTSUPP;
	/* Full Operation ended: mpa_recvmsg() goes on without MPA */
	if (!mpa_conn_full(c))
		return -ENOTCONN;
	while ((ret = mpa_rx_ulpdu(c, &u)) == -EAGAIN) {
		ret = mpa_rx_end(c, &eof);
		if (ret || eof)
			return ret;
		if (!timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(timeo);
		mpa_rx_wait(c, &timeo);
		if (!mpa_conn_full(c))
			return -ENOTCONN;
	}
	if (ret)
		return ret;

	n = min_t(size_t, len, u.len - u.done);
	/* MSG_TRUNC: TCP's meaning, octets taken without a copy */
	if (!(flags & MSG_TRUNC)) {
		ret = mpa_ulpdu_copy(&u, u.done, &msg->msg_iter, n);
		if (ret)
			return ret;
	}
	if (u.done + n == u.len)
		msg->msg_flags |= MSG_EOR;
	if (!(flags & MSG_PEEK))
		mpa_rx_advance(c, n);
	return n;
}

/**
 * mpa_rx_inq() - SIOCINQ: ULPDU octets recv can return now
 * @c: the connection, socket locked, in Full Operation
 *
 * Return: what is left of the next ULPDU if its FPDU is complete, else 0.
 */
int mpa_rx_inq(struct mpa_conn *c)
{
	struct mpa_ulpdu u;

	return mpa_rx_ulpdu(c, &u) ? 0 : u.len - u.done;
}

/**
 * mpa_rx_start() - Full Operation begins: the next octet starts an FPDU
 * @c: the connection, socket locked
 */
void mpa_rx_start(struct mpa_conn *c)
{
	mpa_rxm_init(&c->rxm, 0, c->params.rx_markers, c->params.crc);
	mpa_rx_probe_next(c);
}

/*
 * May the FPDU coming in be left for the reader to judge? When the socket
 * is read by recv (not an in-kernel consumer) and nobody else needs the
 * verdict first (the Responder rule, copy mode). Small FPDUs too: on the
 * veth and loopback paths this softirq runs on the sender's CPU, which
 * already made the sender's CRC pass, and judging 512-octet FPDUs here
 * left that CPU busy and the reader's idle; a lone small FPDU (a round
 * trip) costs the same either side of the wakeup.
 *
 * The reader need not sleep in recv yet: one busy with the previous
 * ULPDU, or in poll, or back in user space between two calls, judges the
 * FPDU in its next recv just the same, and nothing else reads it before.
 */
static bool mpa_rx_defer(const struct mpa_conn *c)
{
	return !c->kops && !READ_ONCE(c->rx_err) && !READ_ONCE(c->tx_held) &&
	       !READ_ONCE(c->rx_reset) && !c->rx_cfill &&
	       mpa_rxm_state(&c->rxm) == MPA_RXM_MORE;
}

/*
 * The FPDU is left for the reader: read its ULPDU_Length only, and make
 * it readable (rx_ready, and the wakeup that follows) once all of its span
 * is queued. The reader's recv then runs the CRC pass and judges it on the
 * reader's CPU, before it returns any of it (R-6-1), instead of this
 * softirq (on the veth and loopback paths, the sender's CPU, which already
 * made the sender's CRC pass), as kTLS leaves its records' decryption to
 * the reader. Return: true once the FPDU is all queued.
 */
static bool mpa_rx_lookahead(struct mpa_conn *c)
{
	struct mpa_rxm *m = &c->rxm;
	struct sock *sk = c->sk;
	u32 fed = mpa_rxm_fed(m), avail = tcp_inq(sk);

	if (!mpa_rxm_span_known(m) && avail > fed)
		mpa_rxq_feed(&sk->sk_receive_queue,
			     tcp_sk(sk)->copied_seq + fed,
			     min(avail - fed, mpa_rxm_extent(m) - fed), m);
	if (mpa_rxm_state(m) != MPA_RXM_MORE)
		return mpa_rx_probe(c);		/* ULPDU_Length refused */
	mpa_rx_window(c);
	if (!mpa_rxm_span_known(m) || avail < mpa_rxm_extent(m))
		return false;
	WRITE_ONCE(c->rx_ready, !!mpa_rxm_ulpdu_len(m));
	return true;
}

/**
 * mpa_rx_data_ready() - new data for a connection in Full Operation
 * @c: the connection; socket owned or bh-locked
 *
 * Wakes readers once a whole FPDU is there; leaves validation (for the
 * Responder rule), copy mode and discarding to the connection's work.
 */
void mpa_rx_data_ready(struct mpa_conn *c)
{
	bool whole = mpa_rx_defer(c) ? mpa_rx_lookahead(c) : mpa_rx_probe(c);
	/* else an empty ULPDU, which the work skips: no reader is woken */
	bool ready = READ_ONCE(c->rx_ready);

	if (READ_ONCE(c->rx_err) || (whole && !ready) ||
	    (whole && READ_ONCE(c->tx_held)) || (whole && c->kops) ||
	    mpa_rx_need_copy(c) || (!whole && mpa_rx_fin_due(c)))
		mpa_conn_schedule(c);
	if (ready)
		c->saved_data_ready(c->sk);
}

/**
 * mpa_rx_purged() - TCP's receive queue was purged (mpa_conn_abort())
 * @c: the connection, socket locked
 *
 * What the machine had fed or judged went with the queue: nothing of it is
 * delivered, and recv reports the reset (mpa_rx_end()).
 */
void mpa_rx_purged(struct mpa_conn *c)
{
	mpa_rx_cbuf_free(c);
	c->rx_done = 0;
	mpa_rxm_init(&c->rxm, 0, c->params.rx_markers, c->params.crc);
	WRITE_ONCE(c->rx_ready, false);
}

/**
 * mpa_rx_release() - free the receive path's memory
 * @c: the connection
 */
void mpa_rx_release(struct mpa_conn *c)
{
	mpa_rx_cbuf_free(c);
}
