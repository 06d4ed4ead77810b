/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA connection object: the one place that owns an MPA connection's state.
 * The socket face (sock.c) and the in-kernel API both drive it.
 */
#ifndef _MPA_CONN_H
#define _MPA_CONN_H

#include <linux/timer.h>
#include <linux/workqueue.h>
#include <net/inet_connection_sock.h>
#include <net/sock.h>
#include <uapi/linux/mpa.h>

#include "core/core.h"

/* Bits of mpa_conn::events: what the worker has to look at */
enum {
	MPA_EV_TIMEOUT,		/* the startup timer expired */
};

/**
 * struct mpa_conn - an MPA connection on a TCP socket
 * @sk: the TCP socket
 * @sk_proto: TCP's struct proto, saved when MPA was attached
 * @saved_data_ready: the socket's sk_data_ready before MPA
 * @saved_write_space: the socket's sk_write_space before MPA
 * @saved_state_change: the socket's sk_state_change before MPA
 * @state: enum mpa_state; changed under the socket lock, read locklessly
 *	by poll
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER, 0 until set
 * @policy: local startup choices (M, C, revision, Rev 2 block)
 * @timeout_ms: startup timeout
 * @local_pd: Initiator: the Request's Private Data
 * @local_pd_len: its length
 * @peer: the Request or Reply received, once parsed; @peer.pd points into
 *	@rx_frame
 * @have_peer: @peer is valid
 * @rx_frame: the received startup frame
 * @tx_frame: the startup frame being sent
 * @tx_len: its length
 * @tx_sent: how much of it TCP has taken
 * @close_after_tx: close TCP once @tx_frame is out (Appendix C.2.1)
 * @neg: Responder: the negotiation of the Request, for the Reply
 * @params: what Full Operation runs with
 * @tx_seq_start: TCP sequence number of the first octet we send in Full
 *	Operation (SeqStart of our Markers)
 * @rx_seq_start: the same for what we receive
 * @tx_held: Responder: no FPDU may go out until one valid FPDU arrived
 *	(R-7.1.2-15)
 * @err: the last error (RFC 5044 section 8 code, reason, errno)
 * @stats: counters
 * @events: MPA_EV_* bits for the worker
 * @work: runs the startup state machine in process context
 * @timer: the startup timeout
 * @rcu: frees the object after a grace period (diag readers)
 */
struct mpa_conn {
	struct sock *sk;
	struct proto *sk_proto;
	void (*saved_data_ready)(struct sock *sk);
	void (*saved_write_space)(struct sock *sk);
	void (*saved_state_change)(struct sock *sk);

	u8 state;
	u8 role;
	struct mpa_policy policy;
	u32 timeout_ms;
	u8 local_pd[MPA_MAX_PRIVATE_DATA];
	u16 local_pd_len;

	struct mpa_frame peer;
	bool have_peer;
	u8 rx_frame[MPA_FRAME_MAX_SIZE];
	u8 tx_frame[MPA_FRAME_MAX_SIZE];
	u16 tx_len;
	u16 tx_sent;
	bool close_after_tx;
	struct mpa_negotiation neg;

	struct mpa_params params;
	u32 tx_seq_start;
	u32 rx_seq_start;
	bool tx_held;

	struct mpa_error_info err;
	struct mpa_stats stats;

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

/* Module-wide defaults (module parameters) */
extern bool mpa_allow_crc_off;
extern unsigned int mpa_startup_timeout_ms;

/* conn.c: lifetime, callbacks, errors */
struct mpa_conn *mpa_conn_create(struct sock *sk, gfp_t gfp);
void mpa_conn_stop(struct mpa_conn *c);
void mpa_conn_free(struct mpa_conn *c);
void mpa_conn_fail(struct mpa_conn *c, u32 code, u32 reason, int errnum,
		   bool close);
void mpa_conn_set_state(struct mpa_conn *c, u8 state);
void mpa_conn_wake(struct mpa_conn *c);
void mpa_conn_schedule(struct mpa_conn *c);
u32 mpa_conn_mulpdu(const struct mpa_conn *c);
void mpa_conn_result(const struct mpa_conn *c, struct mpa_result *res);
void mpa_conn_frame_info(const struct mpa_conn *c, struct mpa_frame_info *fi);

/* startup.c: the startup phase (RFC 5044 section 7.1) */
int mpa_startup_check_config(const struct mpa_conn *c);
int mpa_startup_start(struct mpa_conn *c);
int mpa_startup_answer(struct mpa_conn *c, bool reject, const void *pd,
		       u32 pd_len);
void mpa_startup_process(struct mpa_conn *c);
int mpa_startup_wait(struct mpa_conn *c, long *timeo,
		     bool (*done)(const struct mpa_conn *c));
bool mpa_startup_frame_received(const struct mpa_conn *c);
bool mpa_startup_finished(const struct mpa_conn *c);

#endif /* _MPA_CONN_H */
