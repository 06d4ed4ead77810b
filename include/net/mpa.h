/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA (RFC 5044, RFC 6581) for in-kernel consumers: a DDP implementation,
 * an iSER or NFS/RDMA-style user. The same connection object and the same
 * data path as MPA sockets (Documentation/networking/mpa.rst).
 */
#ifndef _NET_MPA_H
#define _NET_MPA_H

#include <linux/bvec.h>
#include <linux/net.h>
#include <linux/skbuff.h>
#include <linux/uio.h>
#include <uapi/linux/mpa.h>

struct mpa_conn;

/**
 * struct mpa_ulpdu - a received ULPDU, validated, still in TCP's queue
 * @c: its connection
 * @len: its length (1..64768)
 * @done: octets taken already (0 unless the ULPDU was taken in parts)
 *
 * Place its octets with mpa_ulpdu_copy(). Valid only inside the
 * &mpa_kops.ulpdu callback it was passed to: what mpa_ulpdu_copy() does
 * with a view kept past that callback is undefined (it may copy other
 * octets, or none).
 */
struct mpa_ulpdu {
	struct mpa_conn *c;
	u32 len;
	u32 done;
};

/**
 * struct mpa_kparams - how a kernel consumer runs the startup phase
 * @role: %MPA_ROLE_INITIATOR (sends the Request) or %MPA_ROLE_RESPONDER
 * @markers: we want Markers in what we receive (our M bit)
 * @no_crc: we do not need CRCs (C=0). Refused with -EPERM unless the
 *	administrator allowed it; even then CRCs are off only if both sides
 *	say C=0 (RFC 5044 section 4.4)
 * @revision: Initiator: the Rev to send: %MPA_REVISION_1, or
 *	%MPA_REVISION_2 with @enhanced; 0 (without @rev0) takes the network
 *	namespace's default
 * @rev0: Initiator: send Rev 0 (an upgraded RDMAC endpoint)
 * @permissive: interoperate with a Rev 0 peer (RFC 5044 Appendix C)
 * @enhanced: Rev 2 (RFC 6581): our IRD/ORD, peer-to-peer and RTR types
 *	(offered by an Initiator, accepted by a Responder); ignored for Rev 1.
 *	A Responder always applies it, with no default for zero: left zeroed
 *	it grants IRD and ORD 0 and accepts no RTR type, so it rejects a
 *	peer-to-peer Rev 2 Request
 * @pd: Initiator: the Request's Private Data (copied), or NULL
 * @pd_len: its length: at most 512 octets, 508 with Rev 2
 * @timeout_ms: startup timeout; 0 for the network namespace's default
 */
struct mpa_kparams {
	u32 role;
	bool markers;
	bool no_crc;
	u8 revision;
	bool rev0;
	bool permissive;
	struct mpa_enhanced enhanced;
	const void *pd;
	u32 pd_len;
	u32 timeout_ms;
};

/**
 * struct mpa_kops - what MPA tells a kernel consumer
 * @request: Responder: a valid Request arrived. Judge its Private Data and
 *	answer with mpa_kaccept() or mpa_kreject(), here or later from any
 *	process context, within the startup timeout (@timeout_ms, started
 *	again when the Request arrived); else @error reports the timeout.
 *	Octets the Initiator sends behind its Request before the Reply fail
 *	the startup (code 4, %MPA_REASON_EARLY_DATA, requirements A6): not
 *	called when they came with the Request, @error told when they came
 *	later.
 *	Here and in @reply, the Private Data is @pd_len octets at @pd (NULL
 *	when there is none)
 * @reply: Initiator: the Reply arrived (&mpa_frame_info.flags has
 *	%MPA_FRAME_REJECT if the Responder rejected); @established or
 *	@error follows, unless mpa_kreject() here refuses the Reply's
 *	Private Data
 * @established: Full Operation: ULPDUs may be sent (a Responder's are
 *	held until the Initiator's first valid FPDU arrived, R-7.1.2-15) and
 *	arrive. mpa_kresult() tells what was negotiated
 * @ulpdu: a ULPDU arrived, whole and validated (CRC and Markers). Place it
 *	with mpa_ulpdu_copy() and return 0 once it is taken (a positive
 *	return counts as 0); return -EAGAIN, or any other negative errno
 *	(e.g. -ENOMEM when there is no memory to place it), to leave it
 *	queued: TCP's window closes, nothing is dropped, and @ulpdu is
 *	called with it again, whole, after mpa_kresume(). Only when the
 *	connection was reset inside the callback (mpa_ulpdu_copy() said
 *	-ECONNRESET) is nothing left to keep: @error follows at once.
 *	Required: mpa_kattach() refuses @ops without it
 * @error: the connection failed: a startup error (code 4, or 1 when TCP
 *	closed, or 0 with %ENOMEM when the peer's Private Data found no
 *	memory; the startup is over and TCP closed), a reject (code 0: the
 *	peer's, or on a Responder MPA's own for want of a common RTR type;
 *	TCP stays open), a CRC (2) or Marker (3)
 *	error (no more ULPDUs arrive; sending still works, e.g. for a
 *	Terminate, but on a Responder whose ULPDUs are still held: no
 *	valid FPDU can end the hold now, and mpa_ksend() fails with the
 *	error's errno), or a reset (1). Called once per error. In Full
 *	Operation, while the consumer holds delivery back (@ulpdu refused
 *	a ULPDU), CRC, Marker and reset errors wait behind that ULPDU:
 *	told after mpa_kresume()
 * @closed: the peer closed its half after its last whole ULPDU (a FIN at
 *	an FPDU boundary); sending still works (but on a Responder whose
 *	ULPDUs are still held: mpa_ksend() fails with -EPIPE), and a later
 *	reset or timeout is still told by @error. Held back, like @error,
 *	until mpa_kresume() while @ulpdu refused a ULPDU
 * @writable: mpa_ksend() failed with -EAGAIN earlier; a send no longer
 *	waits now: there is room, or (a Responder whose ULPDUs are held,
 *	after @error or @closed: the hold can never end) mpa_ksend() fails
 *	at once with that errno
 *
 * Context: every callback runs in process context with the socket locked,
 * from MPA's work item or from the consumer's own call into MPA. A callback
 * may call mpa_kaccept(), mpa_kreject(), mpa_ksend(), mpa_kresume(),
 * mpa_kresult(), mpa_kmulpdu(), mpa_ulpdu_copy() and mpa_kdetach() (no
 * other callback follows) on its connection; it must not release the
 * socket (that waits for the callback itself), must not call into
 * this API for another MPA connection (its socket lock would be taken
 * under this one's: lock recursion, a deadlock between two connections),
 * and should not block for long (the socket stays locked). Any callback
 * but @ulpdu may be NULL.
 */
struct mpa_kops {
	void (*request)(struct mpa_conn *c, void *priv,
			const struct mpa_frame_info *req, const void *pd,
			u32 pd_len);
	void (*reply)(struct mpa_conn *c, void *priv,
		      const struct mpa_frame_info *rep, const void *pd,
		      u32 pd_len);
	void (*established)(struct mpa_conn *c, void *priv);
	int (*ulpdu)(struct mpa_conn *c, void *priv, struct mpa_ulpdu *u);
	void (*error)(struct mpa_conn *c, void *priv,
		      const struct mpa_error_info *err);
	void (*closed)(struct mpa_conn *c, void *priv);
	void (*writable)(struct mpa_conn *c, void *priv);
};

/**
 * struct mpa_ktx - a zero-copy send in flight
 * @done: called once TCP holds no more references to the pages of the
 *	ULPDU (the peer acknowledged them, or the connection is gone): the
 *	pages may be reused. May run in any context, softirq included, and
 *	inside mpa_ksend() itself (see there): it must not take a lock the
 *	caller of mpa_ksend() may hold, nor call into this API (the socket
 *	may be locked).
 * @ubuf: private: the kernel's zero-copy completion carrier
 * @busy: private: set while a ULPDU is in flight
 *
 * The consumer owns the structure and must keep it alive until @done.
 * Zero it before its first use (kzalloc(), or memset()), then set @done.
 * One ULPDU per mpa_ktx at a time, on any connection: mpa_ksend() refuses
 * one still in flight with -EBUSY; once @done was called (or mpa_ksend()
 * failed) it may serve again, e.g. from a thread @done woke (@done may
 * still be running then). -EBUSY means: wait for @done, not retry at once
 * (a retry may succeed just before the earlier ULPDU's @done runs).
 */
struct mpa_ktx {
	void (*done)(struct mpa_ktx *tx);
	struct ubuf_info ubuf;
	unsigned long busy;
};

struct mpa_conn *mpa_kattach(struct socket *sock,
			     const struct mpa_kparams *params,
			     const struct mpa_kops *ops, void *priv);
void mpa_kdetach(struct mpa_conn *c);
int mpa_kaccept(struct mpa_conn *c, const void *pd, u32 pd_len);
int mpa_kreject(struct mpa_conn *c, const void *pd, u32 pd_len);
int mpa_ksend(struct mpa_conn *c, const struct bio_vec *bv,
	      unsigned int nr_bv, u32 len, struct mpa_ktx *tx);
int mpa_ulpdu_copy(const struct mpa_ulpdu *u, u32 off, struct iov_iter *to,
		   u32 len);
void mpa_kresume(struct mpa_conn *c);
int mpa_kresult(struct mpa_conn *c, struct mpa_result *res);
u32 mpa_kmulpdu(struct mpa_conn *c);

#endif /* _NET_MPA_H */
