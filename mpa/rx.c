// SPDX-License-Identifier: GPL-2.0
/*
 * MPA receive path: FPDUs are parsed in place on TCP's receive queue.
 *
 * The next FPDU's ULPDU_Length is peeked as soon as it is queued; the FPDU
 * is "ready" once all of its span is queued, and only then is it checked
 * (one CRC pass over the skbs, every Marker's FPDUPTR) and copied to the
 * reader (one copy), after which its octets are consumed from TCP. Until
 * then they stay in TCP's queue, charged to the socket, and the window
 * closes on a slow reader as it should.
 *
 * An FPDU that cannot fit in the receive buffer (a small SO_RCVBUF, memory
 * pressure) would stall the connection: then its octets are moved, as they
 * come, into a buffer of the connection's own (copy mode), which frees
 * TCP's buffer and reopens the window. The wire offset of the FPDU's first
 * @rx_cfill octets is in that buffer, the rest in the queue. The buffer is
 * as large as the FPDU (at most 65288 octets), allocated with the socket's
 * allocation flags, charged to the socket's memory cgroup, and freed as
 * soon as the FPDU is consumed: an idle connection holds none.
 *
 * Readiness is computed in the socket's data_ready callback (softirq, or
 * the socket owner's backlog processing) and under the socket lock in
 * process context; the two never run at once, as TCP only calls data_ready
 * from softirq while no process owns the socket.
 */
#include <linux/export.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/uio.h>
#include <net/tcp.h>

#include "conn.h"
#include "netns.h"

/* Copy mode without memory: when to try again */
#define MPA_RX_RETRY	(HZ / 10)

/* A walk over a range of TCP's receive queue */
struct mpa_rxq_iter {
	struct sk_buff *skb;	/* last skb returned, NULL at the start */
	u32 seq;		/* sequence number of the next octet */
	u32 left;		/* octets still to walk */
};

static void mpa_rxq_iter_init(struct mpa_rxq_iter *it, struct sock *sk,
			      u32 off, u32 len)
{
	it->skb = NULL;
	it->seq = tcp_sk(sk)->copied_seq + off;
	it->left = len;
}

/*
 * The next piece of the range: the skb holding it, the offset inside and
 * the length. Return: NULL at the end of the range or of the queue.
 */
static struct sk_buff *mpa_rxq_next(struct sock *sk, struct mpa_rxq_iter *it,
				    u32 *off, u32 *n)
{
	struct sk_buff *skb = it->skb ? it->skb :
			      skb_peek(&sk->sk_receive_queue);

	if (!it->left)
		return NULL;
	for (; skb && skb != (struct sk_buff *)&sk->sk_receive_queue;
	     skb = skb->next) {
		u32 start = TCP_SKB_CB(skb)->seq;

		if (TCP_SKB_CB(skb)->tcp_flags & TCPHDR_SYN)
			start++;
		if (before(it->seq, start))
			return NULL;
		if (it->seq - start < skb->len) {
			*off = it->seq - start;
			*n = min(it->left, skb->len - *off);
			it->skb = skb;
			it->seq += *n;
			it->left -= *n;
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
 * @len: how many octets
 *
 * Return: 0, or -EAGAIN if they are not all queued yet.
 */
int mpa_rxq_peek(struct sock *sk, u32 off, void *buf, u32 len)
{
	struct mpa_rxq_iter it;
	struct sk_buff *skb;
	u32 skb_off, n;

	mpa_rxq_iter_init(&it, sk, off, len);
	while ((skb = mpa_rxq_next(sk, &it, &skb_off, &n))) {
		if (skb_copy_bits(skb, skb_off, buf, n))
			return -EFAULT;
		buf += n;
	}
	return it.left ? -EAGAIN : 0;
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

/* Feed queued octets [@off, @off + @len) to a raw CRC register. */
static u32 mpa_rxq_crc(struct sock *sk, u32 off, u32 len, u32 crc)
{
	struct mpa_rxq_iter it;
	struct sk_buff *skb;
	u32 skb_off, n;

	mpa_rxq_iter_init(&it, sk, off, len);
	while ((skb = mpa_rxq_next(sk, &it, &skb_off, &n)))
		crc = mpa_crc_skb(crc, skb, skb_off, n);
	return crc;
}

/* Copy queued octets [@off, @off + @len) to the reader. */
static int mpa_rxq_copy(struct sock *sk, u32 off, struct iov_iter *to,
			u32 len)
{
	struct mpa_rxq_iter it;
	struct sk_buff *skb;
	u32 skb_off, n;

	mpa_rxq_iter_init(&it, sk, off, len);
	while ((skb = mpa_rxq_next(sk, &it, &skb_off, &n))) {
		if (skb_copy_datagram_iter(skb, skb_off, to, n))
			return -EFAULT;
	}
	return it.left ? -EFAULT : 0;
}

/* The next FPDU's wire octets [@off, @off + @len): copy buffer, queue. */
static int mpa_rx_read(struct mpa_conn *c, u32 off, void *buf, u32 len)
{
	u32 n = 0;

	if (off < c->rx_cfill) {
		n = min(len, c->rx_cfill - off);
		memcpy(buf, c->rx_cbuf + off, n);
	}
	return mpa_rxq_peek(c->sk, off + n - c->rx_cfill, buf + n,
			    len - n);
}

static u32 mpa_rx_crc(struct mpa_conn *c, u32 off, u32 len, u32 crc)
{
	u32 n = 0;

	if (off < c->rx_cfill) {
		n = min(len, c->rx_cfill - off);
		crc = mpa_crc_update(crc, c->rx_cbuf + off, n);
	}
	return mpa_rxq_crc(c->sk, off + n - c->rx_cfill, len - n, crc);
}

static int mpa_rx_copy(struct mpa_conn *c, u32 off, struct iov_iter *to,
		       u32 len)
{
	u32 n = 0;

	if (off < c->rx_cfill) {
		n = min(len, c->rx_cfill - off);
		if (copy_to_iter(c->rx_cbuf + off, n, to) != n)
			return -EFAULT;
	}
	return mpa_rxq_copy(c->sk, off + n - c->rx_cfill, to, len - n);
}

/*
 * The receive half is dead (RFC 5044 section 8): record why, tell the
 * reader; nothing more is delivered. TCP is left alone (sk_err untouched),
 * so the consumer can still send, e.g. a Terminate message.
 */
static void mpa_rx_fail(struct mpa_conn *c, u32 code, u32 reason, int errnum)
{
	c->err.code = code;
	c->err.reason = reason;
	c->err.errnum = errnum;
	if (code == MPA_ERR_CRC)
		c->stats.crc_errors++;
	else if (code == MPA_ERR_MARKER)
		c->stats.marker_errors++;
	WRITE_ONCE(c->rx_err, errnum);
	WRITE_ONCE(c->rx_ready, true);
	mpa_net_event(c, MPA_NET_ERROR);
}

/**
 * mpa_rx_probe() - is the next FPDU complete?
 * @c: the connection, in Full Operation; socket owned or bh-locked
 *
 * Reads the FPDU's ULPDU_Length once enough is queued.
 *
 * Return: true if recv would not wait: the FPDU is complete, or the
 * receive half failed.
 */
bool mpa_rx_probe(struct mpa_conn *c)
{
	struct sock *sk = c->sk;
	u32 avail, hoff;
	bool ready;
	u8 hdr[MPA_HDR_SIZE];
	u16 len;

	if (READ_ONCE(c->rx_err))
		return true;
	avail = c->rx_cfill + tcp_inq(sk);
	if (!c->rx_have_lo) {
		hoff = mpa_fpdu_hdr_off(c->rx_pos, c->params.rx_markers);
		if (avail < hoff + MPA_HDR_SIZE ||
		    mpa_rx_read(c, hoff, hdr, sizeof(hdr)))
			return false;
		len = get_unaligned_be16(hdr);
		if (len > MPA_MAX_ULPDU) {
			/*
			 * Requirements A12: no conforming sender makes it,
			 * and the FPDU cannot be delimited. Code 2.
			 */
			mpa_rx_fail(c, MPA_ERR_CRC, MPA_REASON_BAD_LENGTH,
				    EBADMSG);
			return true;
		}
		mpa_fpdu_layout(&c->rx_lo, c->rx_pos, c->params.rx_markers,
				len);
		c->rx_have_lo = true;
	}
	ready = avail >= c->rx_lo.span;
	WRITE_ONCE(c->rx_ready, ready);
	return ready;
}

/* Must the FPDU be moved out of TCP's queue so that it can complete? */
static bool mpa_rx_need_copy(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	if (c->rx_err || c->rx_ready || !tcp_inq(sk))
		return false;
	/* Once started, copy mode lasts to the end of the FPDU. */
	return c->rx_cfill || tcp_epollin_ready(sk, INT_MAX);
}

static void mpa_rx_cbuf_free(struct mpa_conn *c)
{
	kvfree(c->rx_cbuf);
	c->rx_cbuf = NULL;
	c->rx_csize = 0;
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

/* Copy mode: move the next FPDU's queued octets into our own buffer. */
static void mpa_rx_copyin(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	while (mpa_rx_need_copy(c)) {
		/* Up to ULPDU_Length first: the FPDU's end is not known. */
		u32 want = c->rx_have_lo ? c->rx_lo.span :
			   mpa_fpdu_hdr_off(c->rx_pos, c->params.rx_markers) +
			   MPA_HDR_SIZE;
		u32 n = min_t(u32, want - c->rx_cfill, tcp_inq(sk));

		if (!n)
			break;
		if (mpa_rx_cbuf_grow(c, want)) {
			/*
			 * No memory (or the memory cgroup is at its limit):
			 * try again soon, as the window may be shut and no
			 * more data come to bring us back.
			 */
			mod_timer(&c->timer, jiffies + MPA_RX_RETRY);
			break;
		}
		if (mpa_rxq_peek(sk, 0, c->rx_cbuf + c->rx_cfill, n))
			break;
		mpa_rxq_consume(sk, n);
		c->rx_cfill += n;
		mpa_rx_probe(c);
	}
}

/* Check the complete FPDU: the CRC first, then the Markers (A16). */
static void mpa_rx_validate(struct mpa_conn *c)
{
	const struct mpa_fpdu_layout *lo = &c->rx_lo;
	struct mpa_piece_iter it;
	u8 buf[MPA_CRC_SIZE];
	struct mpa_piece p;
	u32 crc;

	if (c->params.crc) {
		crc = mpa_rx_crc(c, 0, lo->span - MPA_CRC_SIZE,
				 mpa_crc_init());
		if (mpa_rx_read(c, lo->span - MPA_CRC_SIZE, buf, sizeof(buf)) ||
		    mpa_crc_get(buf) != mpa_crc_final(crc)) {
			mpa_rx_fail(c, MPA_ERR_CRC, MPA_REASON_CRC, EBADMSG);
			return;
		}
	}
	mpa_piece_iter_init(&it);
	while (mpa_fpdu_next_piece(lo, &it, &p)) {
		if (p.type != MPA_PIECE_MARKER)
			continue;
		if (mpa_rx_read(c, p.off, buf, MPA_MARKER_SIZE) ||
		    !mpa_marker_ptr_ok(buf, p.fpduptr)) {
			mpa_rx_fail(c, MPA_ERR_MARKER, MPA_REASON_MARKER,
				    EBADMSG);
			return;
		}
	}
	c->rx_valid = true;
	if (c->tx_held) {
		/* R-7.1.2-15: the Initiator's first valid FPDU is here */
		WRITE_ONCE(c->tx_held, false);
		mpa_tx_push(c);
		mpa_conn_wake(c);
	}
}

/* The FPDU was delivered: take it off the queue, on to the next one. */
static void mpa_rx_consume(struct mpa_conn *c)
{
	const struct mpa_fpdu_layout *lo = &c->rx_lo;

	if (lo->span > c->rx_cfill)
		mpa_rxq_consume(c->sk, lo->span - c->rx_cfill);
	c->stats.rx_fpdus++;
	c->stats.rx_octets += lo->ulpdu_len;
	c->stats.rx_markers += lo->nr_markers + lo->lead_marker;
	c->rx_pos += lo->span;
	c->rx_cfill = 0;
	if (c->rx_cbuf)
		mpa_rx_cbuf_free(c);
	c->rx_done = 0;
	c->rx_valid = false;
	c->rx_have_lo = false;
	WRITE_ONCE(c->rx_ready, false);
	mpa_rx_probe(c);
}

/**
 * mpa_rx_process() - make what progress the receive queue allows
 * @c: the connection, in Full Operation; socket locked, process context
 *
 * Completes and validates the next FPDU, which releases a Responder's held
 * FPDUs; discards what arrives after an error.
 *
 * Return: true if recv would not wait.
 */
bool mpa_rx_process(struct mpa_conn *c)
{
	struct sock *sk = c->sk;

	if (c->rx_err) {
		/* Nothing after a bad FPDU is delivered: keep TCP flowing. */
		if (tcp_inq(sk))
			mpa_rxq_consume(sk, tcp_inq(sk));
		if (c->rx_cbuf) {
			c->rx_cfill = 0;
			mpa_rx_cbuf_free(c);
		}
		return true;
	}
	for (;;) {
		if (!mpa_rx_probe(c)) {
			if (!mpa_rx_need_copy(c))
				return false;
			mpa_rx_copyin(c);
			if (!c->rx_ready)
				return false;
		}
		if (c->rx_err)
			return true;
		if (!c->rx_valid)
			mpa_rx_validate(c);
		if (c->rx_err)
			return true;
		/* Requirements A12: an empty ULPDU is checked, then skipped. */
		if (c->rx_lo.ulpdu_len)
			return true;
		mpa_rx_consume(c);
	}
}

/**
 * mpa_rx_end() - no ULPDU to return: has the receive half ended?
 * @c: the connection, socket locked, in Full Operation
 * @eof: set when it has
 *
 * Return: 0 (with *@eof clear: wait for more), or what recv returns: a
 * reset's error, -EPROTO for a FIN inside an FPDU, 0 for end of file.
 */
int mpa_rx_end(struct mpa_conn *c, bool *eof)
{
	struct sock *sk = c->sk;
	int err;

	*eof = false;
	if (sk->sk_err) {
		/* RST (code 1): after the whole FPDUs queued before it */
		err = sock_error(sk);
		if (!c->err.code) {
			c->err.code = MPA_ERR_TCP_CLOSED;
			c->err.reason = MPA_REASON_PEER_CLOSED;
			c->err.errnum = -err;
			mpa_net_event(c, MPA_NET_ERROR);
		}
		c->rx_reset = true;
		return err;
	}
	if (!sock_flag(sk, SOCK_DONE)) {
		/* Our own SHUT_RD, or a closed socket: plain end of file */
		*eof = (sk->sk_shutdown & RCV_SHUTDOWN) ||
		       sk->sk_state == TCP_CLOSE;
		return 0;
	}
	/* The peer's FIN */
	*eof = true;
	if (c->rx_reset)
		return 0;
	if (c->rx_cfill || tcp_inq(sk)) {
		/* FIN inside an FPDU (requirements A15): never delivered */
		mpa_rx_fail(c, MPA_ERR_TCP_CLOSED, MPA_REASON_TRUNCATED, EPROTO);
		return -EPROTO;
	}
	/* FIN at an FPDU boundary: end of file, code 1 (A15) */
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
	u->len = c->rx_lo.ulpdu_len;
	u->done = c->rx_done;
	return 0;
}

/**
 * mpa_ulpdu_copy() - place octets of a ULPDU
 * @u: the view, from mpa_rx_ulpdu()
 * @off: offset of the first octet in the ULPDU
 * @to: the destination
 * @len: how many octets
 *
 * Copies straight from TCP's receive queue (or the copy mode buffer),
 * Markers skipped. The FPDU was validated as a whole before the view was
 * handed out.
 *
 * Context: process context, socket locked: inside &mpa_kops.ulpdu for an
 * in-kernel consumer.
 * Return: 0, -EINVAL for a range outside the ULPDU, -EFAULT.
 */
int mpa_ulpdu_copy(const struct mpa_ulpdu *u, u32 off, struct iov_iter *to,
		   u32 len)
{
	struct mpa_conn *c = u->c;
	struct mpa_piece_iter it;
	u32 end = off + len;
	struct mpa_piece p;
	int ret;

	if (off > u->len || len > u->len - off)
		return -EINVAL;
	mpa_piece_iter_init(&it);
	while (off < end && mpa_fpdu_next_piece(&c->rx_lo, &it, &p)) {
		u32 a, b;

		if (p.type != MPA_PIECE_ULPDU)
			continue;
		a = max(off, p.ulpdu_off);
		b = min(end, p.ulpdu_off + p.len);
		if (a >= b)
			continue;
		ret = mpa_rx_copy(c, p.off + (a - p.ulpdu_off), to, b - a);
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
	c->rx_done += n;
	if (c->rx_done < c->rx_lo.ulpdu_len)
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
 * Documentation/networking/mpa.rst).
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
	while ((ret = mpa_rx_ulpdu(c, &u)) == -EAGAIN) {
		ret = mpa_rx_end(c, &eof);
		if (ret || eof)
			return ret;
		if (!timeo)
			return -EAGAIN;
		if (signal_pending(current))
			return sock_intr_errno(timeo);
		mpa_rx_wait(c, &timeo);
	}
	if (ret)
		return ret;

	n = min_t(size_t, len, u.len - u.done);
	ret = mpa_ulpdu_copy(&u, u.done, &msg->msg_iter, n);
	if (ret)
		return ret;
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
	c->rx_pos = 0;
	mpa_rx_probe(c);
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
	bool ready = mpa_rx_probe(c);

	if (READ_ONCE(c->rx_err) || (ready && READ_ONCE(c->tx_held)) ||
	    (ready && c->kops) || mpa_rx_need_copy(c))
		mpa_conn_schedule(c);
	if (ready)
		c->saved_data_ready(c->sk);
}

/**
 * mpa_rx_release() - free the receive path's memory
 * @c: the connection
 */
void mpa_rx_release(struct mpa_conn *c)
{
	mpa_rx_cbuf_free(c);
}
