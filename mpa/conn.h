/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA connection object: the one place that owns an MPA connection's state.
 * The socket face (sock.c) and the in-kernel API both drive it.
 */
#ifndef _MPA_CONN_H
#define _MPA_CONN_H

#include <linux/bvec.h>
#include <linux/sockptr.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/mpa.h>
#include <net/sock.h>
#include <net/tcp.h>
#include <uapi/linux/mpa.h>

#include "core/core.h"

/*
 * Largest number of page pieces one FPDU's wire image is made of: 65288
 * octets in page fragments of at least 4096 octets, plus the partial
 * pieces at either end.
 */
#define MPA_TX_CHUNKS		18

/**
 * struct mpa_tx_chunk - a piece of an FPDU's wire image
 * @page: the (compound) page; we hold a reference
 * @off: offset of the piece in @page
 * @len: its length
 */
struct mpa_tx_chunk {
	struct page *page;
	u32 off;
	u32 len;
};

/**
 * struct mpa_tx_rec - one FPDU: its whole wire image, Markers included
 * @list: in &mpa_conn.tx_queue
 * @lo: its layout (final once closed)
 * @ulpdu_len: ULPDU octets copied in so far
 * @len: wire octets (lo.span once closed; the chunks' size while open)
 * @sent: wire octets TCP has taken
 * @charged: octets of it charged to the socket's send buffer and to TCP's
 *	memory accounting: all of its wire image TCP has not taken
 * @nr_chunks: pieces in @chunks
 * @uarg: zero-copy send: the consumer's pages are in @chunks, and this
 *	tells it when TCP lets go of them (we hold one reference)
 * @chunks: the wire image
 */
struct mpa_tx_rec {
	struct list_head list;
	struct mpa_fpdu_layout lo;
	u32 ulpdu_len;
	u32 len;
	u32 sent;
	u32 charged;
	u8 nr_chunks;
	struct ubuf_info *uarg;
	struct mpa_tx_chunk chunks[MPA_TX_CHUNKS];
};

/**
 * struct mpa_startup - what only the startup phase needs
 * @neg: Responder: the negotiation of the Request, for the Reply
 * @deadline: when the startup times out (jiffies), if it does
 *	(&mpa_conn.timeout_ms)
 * @tx_frame: our startup frame (&mpa_conn.tx_len octets)
 *
 * Allocated by MPA_START (or mpa_kattach()), freed once the startup is
 * over and TCP took our frame: a connection in Full Operation does not
 * carry it.
 */
struct mpa_startup {
	struct mpa_negotiation neg;
	unsigned long deadline;
	u8 tx_frame[MPA_FRAME_MAX_SIZE];
};

/* Bits of mpa_conn::events: what the worker has to look at */
enum {
	MPA_EV_TIMEOUT,		/* the timer expired (startup, a retry) */
	MPA_EV_RESUME,		/* an in-kernel consumer takes ULPDUs again */
};

/**
 * struct mpa_conn - an MPA connection on a TCP socket
 * @sk: the TCP socket
 * @sk_proto: TCP's struct proto, saved when MPA was attached
 * @sk_ops: TCP's struct proto_ops, saved when MPA was attached
 * @saved_data_ready: the socket's sk_data_ready before MPA
 * @saved_write_space: the socket's sk_write_space before MPA
 * @saved_state_change: the socket's sk_state_change before MPA
 * @saved_error_report: the socket's sk_error_report before MPA
 * @soft_err: the socket error TCP last reported while open, a soft one
 *	(mpa_tcp_soft_error()); 0 after one reported closed
 * @hard_err: the socket error TCP reported closed (a reset, a timeout),
 *	kept should the socket's user read it first (SO_ERROR, send)
 * @state: enum mpa_state; changed under the socket lock, read locklessly
 *	by poll
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER, 0 until set
 * @policy: local startup choices (M, C, revision, Rev 2 block)
 * @timeout_ms: startup timeout, 0 for none
 * @st: what only the startup phase needs, from MPA_START until the
 *	startup is over and our frame went to TCP (or the socket is closed);
 *	NULL otherwise. Only used under the socket lock.
 * @local_pd: Initiator: the Request's Private Data, an allocation of its
 *	exact length, NULL when there is none
 * @local_pd_len: its length
 * @peer: the Request or Reply received, once parsed; @peer.pd is the
 *	peer's Private Data, an allocation of PD_Length octets (the ULP's
 *	Private Data at its front), NULL when there is none
 * @have_peer: @peer is valid
 * @tx_len: length of our startup frame (in @st while it is being sent)
 * @tx_sent: how much of it TCP has taken
 * @close_after_tx: close TCP once our frame is out (Appendix C.2.1)
 * @refused_after_tx: a Responder that rejected the Request itself sets the
 *	socket's error (ECONNREFUSED) once its frame is out
 * @reply_cut: TCP closed before it took all of a rejecting Reply, which
 *	the reject outlives (mpa_startup_push_refused())
 * @plain_calls: calls of the plain stream in TCP (sock.c, mpa_plain_enter())
 * @plain_kicks: how often MPA sent those back out of TCP (mpa_plain_kick())
 * @plain_drain: MPA_START waits for those to leave TCP before the startup
 *	phase begins (mpa_plain_drain())
 * @params: what Full Operation runs with
 * @tx_seq_start: TCP sequence number of the first octet we send in Full
 *	Operation (SeqStart of our Markers)
 * @tx_before_unacked: octets we sent before @tx_seq_start (our startup
 *	frame, the plain stream) may still be unacknowledged, so in TCP's
 *	write queue (mpa_tx_align())
 * @rx_seq_start: the same for what we receive
 * @tx_held: Responder: no FPDU may go out until one valid FPDU arrived
 *	(R-7.1.2-15)
 * @fin_held: shutdown(SHUT_WR) came while FPDUs were held, or TCP had no
 *	memory for what MPA holds: the FIN follows them once the hold ends,
 *	or once TCP takes them (mpa_conn_shut_wr(), mpa_conn_fin_owed())
 * @fin_tries: retries in a row (MPA_RETRY apart) that found TCP taking none
 *	of them, up to MPA_FIN_TRIES
 * @tx_pos: stream position (from @tx_seq_start) of the next FPDU built
 * @tx_open: the ULPDU kept open by MSG_MORE, or NULL
 * @tx_queue: closed FPDUs not yet (fully) taken by TCP, in order
 * @tx_charged: octets of @tx_queue and @tx_open charged to sk_wmem_queued
 *	and sk_forward_alloc
 * @tx_run: the run: whole FPDUs, back to back in one page, that TCP would
 *	hold back now, kept until TCP would send them (tx.c); charged as
 *	queued FPDUs are, outside @tx_charged
 * @tx_run_fpdus: FPDUs in @tx_run, each with a reference on its page
 * @tx_run_octets: their ULPDU octets
 * @tx_run_cut: TCP took the head of @tx_run: the rest follows it as is
 * @tx_waiting: a sender sleeps in mpa_tx_wait(), pushing each time it
 *	wakes: TCP's room wakes it rather than the connection's work
 * @tx_pushing: MPA is handing TCP FPDUs or its startup frame: an
 *	sk_write_space() from inside TCP's sendmsg is answered by the
 *	pusher itself
 * @rxm: the receive machine: every decision about the FPDUs received
 *	(positions from @rx_seq_start)
 * @rx_ready: the machine judged the next FPDU valid, or @rx_err is set,
 *	or the next FPDU is all queued, left to recv to judge (see
 *	mpa_rx_defer()): recv will not wait (read locklessly by poll)
 * @rx_done: ULPDU octets of the FPDU already returned
 * @rx_cfill: octets of the FPDU moved into @rx_cbuf (copy mode)
 * @rx_cbuf: copy mode buffer, while an FPDU is in copy mode
 * @rx_csize: its size: grown as octets come, up to the FPDU's span (its
 *	header's while the length is not known)
 * @rx_err: sticky receive errno (EBADMSG, EPROTO), 0 while healthy
 * @rx_reset: the reader was told of a reset: end of file from now on
 * @held_eof: a Responder still held (@tx_held) met the peer's FIN at an
 *	FPDU boundary: no FPDU can end its hold (mpa_conn_held_for_good())
 * @kernel: an in-kernel consumer attached it (stays set after
 *	mpa_kdetach(), for the control plane)
 * @kops: in-kernel consumer: its callbacks (NULL for a socket's user)
 * @kpriv: in-kernel consumer: its argument to them
 * @kseen: in-kernel consumer: the last state it was told about
 * @kbusy: in-kernel consumer: mpa_kapi_run() is running (no recursion)
 * @kpaused: in-kernel consumer: it asked not to get ULPDUs until
 *	mpa_kresume()
 * @kended: in-kernel consumer: it was told of an error: nothing more
 * @kclosed: in-kernel consumer: it was told of the peer's close; an
 *	error may still follow (a reset)
 * @kwant_room: in-kernel consumer: a send got -EAGAIN, tell it of room
 * @kcb_task: the task running a consumer callback, socket locked
 * @err: the last error (RFC 5044 section 8 code, reason, errno)
 * @stats: counters
 * @net_id: its id among the namespace's connections (netns.c)
 * @net_linked: listed in the namespace, by @net_id
 * @ino: the socket's inode number, as ss shows it
 * @dport: the peer's port, as at attach
 * @saddr: the local address, as at attach (@saddr.v4 or @saddr.v6 by the
 *	socket's family): a reset of MPA's own (tcp_disconnect()) clears
 *	both on the socket, and the control plane still tells them
 * @events: MPA_EV_* bits for the worker
 * @work: runs the startup state machine in process context
 * @timer: the startup timeout; when to try again what found no memory
 *	(our startup frame, FPDUs and the run TCP refused with nothing in
 *	flight, a copy mode buffer, a FIN)
 * @rcu: frees the object after a grace period (diag readers)
 */
struct mpa_conn {
	struct sock *sk;
	struct proto *sk_proto;
	const struct proto_ops *sk_ops;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);
	void (*saved_error_report)(struct sock *sk);
	int soft_err;
	int hard_err;
	atomic_t plain_calls;
	u32 plain_kicks;

	u8 state;
	u8 role;
	struct mpa_policy policy;
	u16 local_pd_len;
	u32 timeout_ms;
	u16 tx_len;
	u16 tx_sent;
	struct mpa_startup *st;
	u8 *local_pd;
	struct mpa_frame peer;
	bool have_peer;
	bool close_after_tx;
	bool refused_after_tx;
	bool reply_cut;
	bool plain_drain;

	bool tx_held;
	bool fin_held;
	u8 fin_tries;
	bool tx_before_unacked;
	u32 tx_seq_start;
	u32 rx_seq_start;
	struct mpa_params params;
	u32 tx_pos;
	u32 tx_charged;
	struct mpa_tx_rec *tx_open;
	struct list_head tx_queue;
	struct bio_vec tx_run;
	u32 tx_run_fpdus;
	u32 tx_run_octets;

	u8 *rx_cbuf;
	struct mpa_rxm rxm;
	u32 rx_done;
	u32 rx_cfill;
	u32 rx_csize;
	int rx_err;
	bool rx_ready;
	bool tx_waiting;
	bool rx_reset;
	bool held_eof;

	bool kernel;
	u8 kseen;
	bool kbusy;
	bool kpaused;
	bool kended;
	bool kwant_room;
	bool tx_pushing;	/* beside the k flags: fills a hole */
	bool tx_run_cut;
	bool kclosed;
	const struct mpa_kops *kops;
	void *kpriv;
	struct task_struct *kcb_task;

	struct mpa_error_info err;
	bool net_linked;
	struct mpa_stats stats;
	u32 net_id;
	__be16 dport;
	unsigned long ino;
	union {
		__be32 v4;
		struct in6_addr v6;
	} saddr;

	unsigned long events;
	struct work_struct work;
	struct timer_list timer;
	struct rcu_head rcu;
};

static inline struct mpa_conn *mpa_conn(const struct sock *sk)
{
	return (__force struct mpa_conn *)inet_csk(sk)->icsk_ulp_data;
}

static inline u8 mpa_conn_state(const struct mpa_conn *c)
{
	return READ_ONCE(c->state);
}

/* Startup in progress: neither plain stream nor FPDUs may flow. */
static inline bool mpa_conn_in_startup(const struct mpa_conn *c)
{
	switch (mpa_conn_state(c)) {
	case MPA_STATE_AWAIT_REQUEST:
	case MPA_STATE_REQUEST_RECEIVED:
	case MPA_STATE_AWAIT_REPLY:
		return true;
	}
	return false;
}

static inline bool mpa_conn_full(const struct mpa_conn *c)
{
	return mpa_conn_state(c) == MPA_STATE_FULL;
}

/*
 * A Responder's FPDUs are held until the Initiator's first valid FPDU
 * (R-7.1.2-15). Once the receive half failed before it (a CRC or Marker
 * error, an FPDU cut by a FIN) or ended (the peer's FIN at an FPDU
 * boundary) no valid FPDU can follow, and the hold never ends: sends fail
 * with the receive error, or EPIPE after the FIN, rather than queue FPDUs
 * that could never go (mpa_rx_fin_held()).
 *
 * Return: that errno, or 0 while the hold may still end (or there is none).
 */
static inline int mpa_conn_held_for_good(const struct mpa_conn *c)
{
	if (!READ_ONCE(c->tx_held))
		return 0;
	return READ_ONCE(c->rx_err) ?: (READ_ONCE(c->held_eof) ? EPIPE : 0);
}

/*
 * The errno of a TCP that closed under the startup (code 1): when TCP gave
 * up (its timeout, an ICMP error it kept), TCP's own, as SO_ERROR tells
 * it; when the peer closed (its FIN, which has none, or a reset),
 * ECONNRESET. TCP calls a reset after the peer's FIN EPIPE, which the
 * startup's calls return for the local end's own shutdown(SHUT_WR).
 */
static inline int mpa_conn_tcp_errno(const struct mpa_conn *c)
{
	int err = READ_ONCE(c->hard_err);

	return err && err != EPIPE ? err : ECONNRESET;
}

/*
 * May TCP's sendmsg be called for what MPA holds? While TCP is in a state
 * that sends. A reset or a timeout closes TCP (TCP_CLOSE) as it sets the
 * socket's error, which TCP's sendmsg would read and clear (sock_error())
 * and which is the reader's to report (mpa_rx_end(): a reset is error
 * code 1 with its errno, not an end of file). An error on a TCP still open
 * is a soft one, which does not stop it (mpa_tcp_soft_error()).
 */
static inline bool mpa_tcp_sends(const struct sock *sk)
{
	return (1 << READ_ONCE(sk->sk_state)) &
	       (TCPF_ESTABLISHED | TCPF_CLOSE_WAIT);
}

/*
 * Is the socket's error a soft one? An ICMP error that tcp_v4_err() or
 * tcp_v6_err() set on a socket with IP_RECVERR (IPV6_RECVERR) and reported
 * while TCP stays open (@soft_err, from mpa_error_report()); a reset or a
 * timeout is reported once TCP is closed. As on TCP, a soft error is the
 * socket user's to read, once (SO_ERROR, recv, send), and ends nothing:
 * TCP goes on sending what it holds, and MPA what it holds
 * (mpa_tcp_sendmsg()). It stays soft when TCP later closes cleanly.
 */
static inline bool mpa_tcp_soft_error(const struct mpa_conn *c)
{
	const struct sock *sk = c->sk;
	int err = READ_ONCE(sk->sk_err);

	return err && (READ_ONCE(sk->sk_state) != TCP_CLOSE ||
		       err == READ_ONCE(c->soft_err));
}

/*
 * TCP's sendmsg takes nothing while the socket has an error, and reads and
 * clears it. For what MPA has accepted already, a soft error is lifted
 * around the call (mpa_tcp_err_lift()) and put back after
 * (mpa_tcp_err_put()), unless another came meanwhile (a reset processed
 * from the backlog); pollers that looked meanwhile are told again. The
 * socket is locked (tcp_v4_err() then only sets sk_err_soft) or bh-locked
 * (no ICMP handler runs): only SO_ERROR, which takes the error without the
 * lock, may come between, and then reads it once.
 */
static inline int mpa_tcp_err_lift(struct sock *sk)
{
	return READ_ONCE(sk->sk_err) ? xchg(&sk->sk_err, 0) : 0;
}

static inline void mpa_tcp_err_put(struct sock *sk, int err)
{
	if (err && !cmpxchg(&sk->sk_err, 0, err))
		sk_error_report(sk);
}

/*
 * Does TCP take pages handed with MSG_SPLICE_PAGES by reference? Only on a
 * route with scatter-gather: the device's, or forced on where TCP may use
 * GSO (not with TCP-MD5 or TCP-AO, sk_gso_disable(), on a device without
 * it). Without, tcp_sendmsg_locked() copies them into
 * sk_page_frag(), which is the calling task's fragment. Read under the
 * socket lock (owned or bh-locked), it is what TCP's next call decides.
 */
static inline bool mpa_tcp_splices(const struct sock *sk)
{
	return sk->sk_route_caps & NETIF_F_SG;
}

/* tcp_sendmsg_locked() for what MPA has accepted already */
static inline int mpa_tcp_sendmsg(struct sock *sk, struct msghdr *msg,
				  size_t len)
{
	int err = mpa_tcp_err_lift(sk);
	int ret;

	ret = tcp_sendmsg_locked(sk, msg, len);
	mpa_tcp_err_put(sk, err);
	return ret;
}

static inline struct net *mpa_conn_net(const struct mpa_conn *c)
{
	return sock_net(c->sk);
}

/* Why the connection failed: enum mpa_reason */
static inline u32 mpa_conn_reason(const struct mpa_conn *c)
{
	return READ_ONCE(c->err.reason);
}

/* Startup timeout of a new namespace's policy */
#define MPA_DEFAULT_TIMEOUT_MS	10000

/* No memory (@timer's retries): when to try again */
#define MPA_RETRY		(HZ / 10)
/* A FIN kept behind what TCP has no memory for: retries, then a reset */
#define MPA_FIN_TRIES		50

/**
 * struct mpa_conn_info - a snapshot of a connection, for the control plane
 * @ino: the socket's inode number
 * @family: AF_INET or AF_INET6
 * @saddr4: local IPv4 address (AF_INET)
 * @daddr4: remote IPv4 address (AF_INET)
 * @saddr6: local IPv6 address (AF_INET6)
 * @daddr6: remote IPv6 address (AF_INET6)
 * @sport: local port
 * @dport: remote port
 * @kernel: an in-kernel consumer's connection
 * @state: enum mpa_state
 * @res: what was negotiated (role, Rev, Markers, CRC, IRD/ORD, MULPDU)
 * @stats: the counters
 * @err: the last error
 */
struct mpa_conn_info {
	unsigned long ino;
	u16 family;
	__be32 saddr4;
	__be32 daddr4;
	struct in6_addr saddr6;
	struct in6_addr daddr6;
	__be16 sport;
	__be16 dport;
	bool kernel;
	u8 state;
	struct mpa_result res;
	struct mpa_stats stats;
	struct mpa_error_info err;
};

/* main.c: the workqueue the connections' work runs on (WQ_MEM_RECLAIM) */
extern struct workqueue_struct *mpa_wq;

/* conn.c: lifetime, callbacks, errors */
extern struct kmem_cache *mpa_tx_rec_cache;
extern struct kmem_cache *mpa_startup_cache;
int mpa_conn_cache_init(void);
void mpa_conn_cache_exit(void);
struct mpa_conn *mpa_conn_create(struct sock *sk, gfp_t gfp);
void mpa_conn_stop(struct mpa_conn *c);
void mpa_conn_detach(struct mpa_conn *c);
bool mpa_conn_flush(struct mpa_conn *c);
void mpa_conn_abort(struct mpa_conn *c);
void mpa_conn_shut_wr(struct mpa_conn *c);
void mpa_conn_fin_owed(struct mpa_conn *c, bool expired);
void mpa_conn_hold_end(struct mpa_conn *c);
void mpa_conn_free(struct mpa_conn *c);
void mpa_conn_fail(struct mpa_conn *c, u32 code, u32 reason, int errnum,
		   bool close);
void mpa_conn_set_state(struct mpa_conn *c, u8 state);
void mpa_conn_wake(struct mpa_conn *c);
void mpa_conn_schedule(struct mpa_conn *c);
u32 mpa_conn_mulpdu(const struct mpa_conn *c);
void mpa_conn_result(const struct mpa_conn *c, struct mpa_result *res);
void mpa_conn_frame_info(const struct mpa_conn *c, struct mpa_frame_info *fi);
void mpa_conn_stats(const struct mpa_conn *c, struct mpa_stats *st);
void mpa_conn_info(const struct mpa_conn *c, struct mpa_conn_info *ci);
void mpa_conn_closed(struct mpa_conn *c);
int mpa_conn_set_local_pd(struct mpa_conn *c, sockptr_t pd, u32 len);

/* startup.c: the startup phase (RFC 5044 section 7.1) */
int mpa_startup_check_config(const struct mpa_conn *c);
int mpa_startup_start(struct mpa_conn *c);
void mpa_startup_push(struct mpa_conn *c);
int mpa_startup_answer(struct mpa_conn *c, bool reject, const void *pd,
		       u32 pd_len);
void mpa_startup_process(struct mpa_conn *c);
int mpa_startup_wait(struct mpa_conn *c, long *timeo,
		     bool (*done)(const struct mpa_conn *c));
bool mpa_startup_frame_received(const struct mpa_conn *c);
bool mpa_startup_finished(const struct mpa_conn *c);
void mpa_startup_release(struct mpa_conn *c);
void mpa_startup_expired(struct mpa_conn *c);

#if IS_ENABLED(CONFIG_KUNIT)
/* sock.c: readiness */
__poll_t mpa_poll_mask(struct mpa_conn *c, __poll_t mask);
#endif

/* rx.c: receiving FPDUs (RFC 5044 sections 4, 5 and 8) */
int mpa_rxq_peek(struct sock *sk, u32 off, void *buf, u32 len);
void mpa_rxq_consume(struct sock *sk, u32 n);
#if IS_ENABLED(CONFIG_KUNIT)
u32 mpa_rxq_feed(struct sk_buff_head *q, u32 seq, u32 len,
		 struct mpa_rxm *m);
#endif
void mpa_rx_start(struct mpa_conn *c);
bool mpa_rx_probe(struct mpa_conn *c);
bool mpa_rx_process(struct mpa_conn *c);
int mpa_rx_ulpdu(struct mpa_conn *c, struct mpa_ulpdu *u);
bool mpa_ulpdu_live(const struct mpa_ulpdu *u);
int mpa_ulpdu_copy(const struct mpa_ulpdu *u, u32 off, struct iov_iter *to,
		   u32 len);
bool mpa_rx_advance(struct mpa_conn *c, u32 n);
int mpa_rx_recvmsg(struct mpa_conn *c, struct msghdr *msg, size_t len,
		   int flags);
int mpa_rx_inq(struct mpa_conn *c);
void mpa_rx_data_ready(struct mpa_conn *c);
void mpa_rx_purged(struct mpa_conn *c);
void mpa_rx_release(struct mpa_conn *c);

int mpa_rx_end(struct mpa_conn *c, bool *eof);

/* kapi.c: the in-kernel consumers' face */
void mpa_kapi_run(struct mpa_conn *c);

/* tx.c: sending FPDUs (RFC 5044 sections 4 and 5, Appendix A) */
void mpa_tx_start(struct mpa_conn *c);
int mpa_tx_pages(struct mpa_conn *c, const struct bio_vec *bv,
		 unsigned int nr_bv, u32 len, struct ubuf_info *uarg);
bool mpa_tx_room(const struct mpa_conn *c);
int mpa_tx_send(struct mpa_conn *c, struct msghdr *msg, size_t size);
int mpa_tx_push(struct mpa_conn *c);
void mpa_tx_run_kick(struct mpa_conn *c);
u32 mpa_tx_uncount(struct mpa_conn *c, u32 extra);
void mpa_tx_recount(struct mpa_conn *c, u32 queued);
void mpa_tx_retry_later(struct mpa_conn *c);
bool mpa_tx_pending(const struct mpa_conn *c);
void mpa_tx_flush(struct mpa_conn *c);
bool mpa_tx_unsent(const struct mpa_conn *c);
void mpa_tx_release(struct mpa_conn *c);

#endif /* _MPA_CONN_H */
