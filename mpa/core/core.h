/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MPA protocol core: the wire rules of RFC 5044 (and RFC 6581 Rev 2,
 * RFC 5044 Appendix C Rev 0) as pure code.
 *
 * Nothing in here knows about sockets, skbs, locks or memory allocation.
 * Every object is caller-provided and of bounded size, so the same sources
 * build into mpa.ko, into the KUnit tests and into the userspace fuzzer
 * (tools/testing/fuzz/).
 *
 * Positions ("pos") are octet offsets in one direction's TCP stream,
 * relative to that direction's SeqStart (RFC 5044 section 4.3): the first
 * octet of Full Operation.  They are u32 and wrap modulo 2^32, exactly like
 * TCP sequence numbers; pass (seq - seq_start).  Because 2^32 is a multiple
 * of the Marker interval, Markers stay at multiples of 512 across a wrap.
 */
#ifndef _MPA_CORE_H
#define _MPA_CORE_H

#include <linux/types.h>
#include <linux/unaligned.h>
#include <uapi/linux/mpa.h>

#define MPA_MARKER_INTERVAL	512	/* R-4.3-4 */
#define MPA_MARKER_SIZE		4
/* Stream octets between two Markers that are not Marker octets */
#define MPA_MARKER_STRIDE	(MPA_MARKER_INTERVAL - MPA_MARKER_SIZE)
#define MPA_HDR_SIZE		2	/* ULPDU_Length */
#define MPA_CRC_SIZE		4
#define MPA_FPDU_OVERHEAD	(MPA_HDR_SIZE + MPA_CRC_SIZE)
#define MPA_FPDUPTR_MASK	0xfffc	/* R-4.2-6: low two bits read as 0 */

/*
 * Largest wire span of one FPDU: 2 + 64768 + 2 (PAD) + 4 framed octets and
 * at most 128 Markers, a leading one included.
 */
#define MPA_FPDU_MAX_SPAN	65288

/* Smallest reassembly buffer of RFC 5044 A.5.2 (128 + 2 + 2 + 4 + 4) */
#define MPA_MIN_REASSEMBLY	140

/* Request/Reply frames (RFC 5044 section 7.1.1) */
#define MPA_KEY_SIZE		16
#define MPA_FRAME_HDR_SIZE	20
#define MPA_FRAME_MAX_SIZE	(MPA_FRAME_HDR_SIZE + MPA_MAX_PRIVATE_DATA)
#define MPA_FLAG_M		0x80	/* Markers required by frame sender */
#define MPA_FLAG_C		0x40	/* CRC wanted by frame sender */
#define MPA_FLAG_R		0x20	/* reject (Reply only) */
#define MPA_FLAG_E		0x10	/* RFC 6581 enhanced (Rev 2 only) */
#define MPA_V2_BLOCK_SIZE	4	/* RFC 6581 IRD/ORD block */
#define MPA_V2_FLAG_A		0x8000	/* IRD word: peer-to-peer */
#define MPA_V2_FLAG_B		0x4000	/* IRD word: zero-length Send RTR */
#define MPA_V2_FLAG_C		0x8000	/* ORD word: RDMA Write RTR */
#define MPA_V2_FLAG_D		0x4000	/* ORD word: RDMA Read RTR */

/* ------------------------------------------------------------------ */
/* CRC32c (crc.c)                                                      */
/* ------------------------------------------------------------------ */

/**
 * mpa_crc_init() - start value of the raw CRC32c register
 *
 * Return: the register value to feed into mpa_crc_update().
 */
static inline u32 mpa_crc_init(void)
{
	return ~0U;
}

/**
 * mpa_crc_final() - turn the raw CRC32c register into the CRC value
 * @crc: register after the last mpa_crc_update()
 *
 * Return: the CRC value, to be stored with mpa_crc_put().
 */
static inline u32 mpa_crc_final(u32 crc)
{
	return ~crc;
}

/**
 * mpa_crc_put() - store a CRC value in an FPDU's CRC field
 * @p: the four octets of the CRC field
 * @val: CRC value from mpa_crc_final()
 *
 * The CRC goes on the wire least significant octet first, the way iSCSI
 * sends its digests (requirements A1); every other MPA field is big-endian.
 */
static inline void mpa_crc_put(void *p, u32 val)
{
	put_unaligned_le32(val, p);
}

/**
 * mpa_crc_get() - read a CRC value from an FPDU's CRC field
 * @p: the four octets of the CRC field
 *
 * Return: the CRC value, comparable with mpa_crc_final().
 */
static inline u32 mpa_crc_get(const void *p)
{
	return get_unaligned_le32(p);
}

u32 mpa_crc_update(u32 crc, const void *p, u32 len);

/* ------------------------------------------------------------------ */
/* FPDU layout and encoding (fpdu.c)                                   */
/* ------------------------------------------------------------------ */

/**
 * struct mpa_fpdu_layout - where every part of one FPDU sits on the wire
 * @pos: stream position of the first octet of the span (a leading Marker
 *	 or the ULPDU_Length field), relative to SeqStart
 * @ulpdu_len: ULPDU_Length
 * @span: wire octets from @pos to the last CRC octet, Markers included
 * @framed: ULPDU_Length + ULPDU + PAD + CRC octets, Markers excluded
 * @hdr_off: offset of ULPDU_Length from @pos: 4 with a leading Marker
 * @first_ptr: FPDUPTR of the first Marker inside the FPDU (valid when
 *	 @nr_markers is not 0)
 * @nr_markers: Markers inside the FPDU, the leading one not counted
 * @pad: PAD octets (0..3)
 * @markers: Markers are enabled in this direction
 * @lead_marker: a Marker sits at @pos, with FPDUPTR 0 (R-4.3-7)
 *
 * Build with mpa_fpdu_layout(); walk with mpa_fpdu_next_piece().
 */
struct mpa_fpdu_layout {
	u32 pos;
	u32 ulpdu_len;
	u32 span;
	u32 framed;
	u16 hdr_off;
	u16 first_ptr;
	u16 nr_markers;
	u8 pad;
	bool markers;
	bool lead_marker;
};

/**
 * mpa_fpdu_has_markers() - does a Marker fall in the FPDU's span?
 * @lo: the layout
 *
 * Return: true if the span holds a Marker, leading or inside.
 */
static inline bool mpa_fpdu_has_markers(const struct mpa_fpdu_layout *lo)
{
	return lo->lead_marker || lo->nr_markers;
}

/**
 * enum mpa_piece_type - kinds of wire pieces of an FPDU
 * @MPA_PIECE_MARKER: a 4-octet Marker; &mpa_piece.fpduptr holds its value
 * @MPA_PIECE_HDR: the 2-octet ULPDU_Length field
 * @MPA_PIECE_ULPDU: ULPDU octets; &mpa_piece.ulpdu_off says which
 * @MPA_PIECE_PAD: 1..3 PAD octets
 * @MPA_PIECE_CRC: the 4-octet CRC field; always the last piece
 */
enum mpa_piece_type {
	MPA_PIECE_MARKER,
	MPA_PIECE_HDR,
	MPA_PIECE_ULPDU,
	MPA_PIECE_PAD,
	MPA_PIECE_CRC,
};

/**
 * struct mpa_piece - one contiguous wire piece of an FPDU
 * @type: what the piece is
 * @off: wire offset of the piece from &mpa_fpdu_layout.pos
 * @len: octets in the piece (never 0)
 * @ulpdu_off: for %MPA_PIECE_ULPDU, offset of the first octet in the ULPDU
 * @fpduptr: for %MPA_PIECE_MARKER, the FPDUPTR value the Marker carries
 */
struct mpa_piece {
	enum mpa_piece_type type;
	u32 off;
	u32 len;
	u32 ulpdu_off;
	u16 fpduptr;
};

/**
 * struct mpa_piece_iter - cursor of mpa_fpdu_next_piece()
 * @wire: wire offset of the next piece
 * @framed: framed (Marker-free) offset of the next piece
 * @marker: index of the next Marker inside the FPDU
 *
 * Zero it (or use mpa_piece_iter_init()) to start at the first piece.
 */
struct mpa_piece_iter {
	u32 wire;
	u32 framed;
	u16 marker;
};

/**
 * mpa_piece_iter_init() - reset a piece cursor to the start of an FPDU
 * @it: cursor
 */
static inline void mpa_piece_iter_init(struct mpa_piece_iter *it)
{
	it->wire = 0;
	it->framed = 0;
	it->marker = 0;
}

/**
 * mpa_fpdu_pad() - PAD octets needed after a ULPDU (R-4.1-5)
 * @ulpdu_len: ULPDU_Length
 *
 * Return: 0..3, so that ULPDU_Length + ULPDU + PAD + CRC is a multiple of 4.
 */
static inline u32 mpa_fpdu_pad(u32 ulpdu_len)
{
	return (0U - (MPA_HDR_SIZE + ulpdu_len)) & 3;
}

/**
 * mpa_marker_at() - whether a Marker starts at a stream position
 * @pos: position relative to SeqStart
 *
 * Return: true if a Marker belongs at @pos when Markers are enabled.
 */
static inline bool mpa_marker_at(u32 pos)
{
	return !(pos & (MPA_MARKER_INTERVAL - 1));
}

/**
 * mpa_fpdu_hdr_off() - where ULPDU_Length sits in an FPDU's span
 * @pos: stream position of the span, relative to SeqStart
 * @markers: Markers are enabled in this direction
 *
 * Lets a receiver find the ULPDU_Length field of the next FPDU before it
 * knows anything else about it.
 *
 * Return: 4 if the span opens with a Marker, else 0.
 */
static inline u32 mpa_fpdu_hdr_off(u32 pos, bool markers)
{
	return markers && mpa_marker_at(pos) ? MPA_MARKER_SIZE : 0;
}

/**
 * mpa_fpdu_layout_plain() - mpa_fpdu_layout() without Markers
 * @lo: layout to fill
 * @pos: stream position of the span's first octet, relative to SeqStart
 * @ulpdu_len: ULPDU_Length, at most %MPA_MAX_ULPDU (the caller's check)
 *
 * The layout of every FPDU of a direction without Markers, inline for the
 * sender's common case.
 */
static inline void mpa_fpdu_layout_plain(struct mpa_fpdu_layout *lo, u32 pos,
					 u32 ulpdu_len)
{
	lo->pos = pos;
	lo->ulpdu_len = ulpdu_len;
	lo->markers = false;
	lo->lead_marker = false;
	lo->pad = mpa_fpdu_pad(ulpdu_len);
	lo->framed = MPA_FPDU_OVERHEAD + ulpdu_len + lo->pad;
	lo->hdr_off = 0;
	lo->first_ptr = 0;
	lo->nr_markers = 0;
	lo->span = lo->framed;
}

int mpa_fpdu_layout(struct mpa_fpdu_layout *lo, u32 pos, bool markers,
		    u32 ulpdu_len);
bool mpa_fpdu_next_piece(const struct mpa_fpdu_layout *lo,
			 struct mpa_piece_iter *it, struct mpa_piece *p);
void mpa_piece_fill(const struct mpa_fpdu_layout *lo,
		    const struct mpa_piece *p, u8 *dst);
int mpa_fpdu_frame(const struct mpa_fpdu_layout *lo, u8 *buf, bool crc);
bool mpa_marker_ptr_ok(const void *marker, u16 expected);

/* ------------------------------------------------------------------ */
/* The receive machine (rxm.c)                                         */
/* ------------------------------------------------------------------ */

/**
 * enum mpa_rxm_state - what the receive machine says about the next FPDU
 * @MPA_RXM_MORE: the FPDU is not complete: feed more octets
 * @MPA_RXM_FPDU: the FPDU is complete and valid (CRC, Markers): deliver
 *	its ULPDU (mpa_rxm_locate()), then go on with mpa_rxm_next()
 * @MPA_RXM_ERROR: the half connection failed (RFC 5044 section 8):
 *	&mpa_rxm.code and &mpa_rxm.reason say why; nothing more is delivered
 */
enum mpa_rxm_state {
	MPA_RXM_MORE,
	MPA_RXM_FPDU,
	MPA_RXM_ERROR,
};

/**
 * struct mpa_rxm - the receive machine of one half connection
 * @pos: stream position of the current FPDU's span, relative to SeqStart
 * @fed: octets of the current FPDU fed so far (its wire offset from @pos)
 * @reg: raw CRC32c register over those octets, CRC field excluded
 * @lo: layout of the current FPDU, valid once @have_lo
 * @hdr_off: offset of ULPDU_Length in the span: 4 after a leading Marker
 * @state: enum mpa_rxm_state
 * @markers: Markers are enabled in this direction (our own M bit)
 * @crc: CRCs are checked (C=1 on either side)
 * @have_lo: ULPDU_Length was read and @lo laid out
 * @bad_marker: a Marker of the current FPDU disagreed with the chain
 * @field: the Marker, ULPDU_Length or CRC field being read
 * @code: RFC 5044 section 8 error code, %MPA_ERR_NONE while healthy
 * @reason: enum mpa_reason: the precise reason of @code
 *
 * The machine holds a handful of octets of its own and never a ULPDU: the
 * caller keeps the stream's octets where they are (in TCP's receive queue)
 * until the machine has judged the FPDU, and then takes the ULPDU's octets
 * from there, at the wire offsets mpa_rxm_locate() gives. Its size is
 * fixed, whatever ULPDU_Length the peer sends.
 */
struct mpa_rxm {
	u32 pos;
	u32 fed;
	u32 reg;
	struct mpa_fpdu_layout lo;
	u8 hdr_off;
	u8 state;
	bool markers;
	bool crc;
	bool have_lo;
	bool bad_marker;
	u8 field[4];
	u32 code;
	u32 reason;
};

int mpa_rxm_init(struct mpa_rxm *m, u32 pos, bool markers, bool crc);
u32 mpa_rxm_feed(struct mpa_rxm *m, const void *buf, u32 len);
u32 mpa_rxm_locate(const struct mpa_rxm *m, u32 off, u32 *wire);
void mpa_rxm_next(struct mpa_rxm *m);
enum mpa_rxm_state mpa_rxm_fin(struct mpa_rxm *m);

/**
 * mpa_rxm_state() - what the machine says about the current FPDU
 * @m: the machine
 *
 * Return: enum mpa_rxm_state.
 */
static inline enum mpa_rxm_state mpa_rxm_state(const struct mpa_rxm *m)
{
	return m->state;
}

/**
 * mpa_rxm_fed() - octets of the current FPDU the machine has seen
 * @m: the machine
 *
 * The next octet to feed is this far from the FPDU's first octet. Until
 * the FPDU is judged, these octets must stay available to the caller.
 *
 * Return: a wire offset in the current FPDU's span.
 */
static inline u32 mpa_rxm_fed(const struct mpa_rxm *m)
{
	return m->fed;
}

/**
 * mpa_rxm_extent() - how far the current FPDU is known to reach
 * @m: the machine
 *
 * Its span once ULPDU_Length was read; before that, the end of the field
 * (after a leading Marker, if any). A caller that moves the FPDU's octets
 * out of the stream as they are fed (copy mode) needs room for this many;
 * mpa_rxm_fed() never exceeds it.
 *
 * Return: a number of wire octets from the FPDU's first.
 */
static inline u32 mpa_rxm_extent(const struct mpa_rxm *m)
{
	return m->have_lo ? m->lo.span : m->hdr_off + MPA_HDR_SIZE;
}

/**
 * mpa_rxm_span_known() - has the current FPDU's ULPDU_Length been read?
 * @m: the machine
 *
 * Return: true once mpa_rxm_extent() is the FPDU's whole span.
 */
static inline bool mpa_rxm_span_known(const struct mpa_rxm *m)
{
	return m->have_lo;
}

/**
 * mpa_rxm_ulpdu_len() - ULPDU_Length of the FPDU judged valid
 * @m: the machine, in %MPA_RXM_FPDU
 *
 * Return: the ULPDU's length; 0 for an empty ULPDU, which has nothing to
 * deliver (requirements A12).
 */
static inline u32 mpa_rxm_ulpdu_len(const struct mpa_rxm *m)
{
	return m->lo.ulpdu_len;
}

/**
 * mpa_rxm_span() - wire octets of the FPDU judged valid
 * @m: the machine, in %MPA_RXM_FPDU
 *
 * Return: its octets on the wire, Markers included: what to consume from
 * the stream once its ULPDU is delivered.
 */
static inline u32 mpa_rxm_span(const struct mpa_rxm *m)
{
	return m->lo.span;
}

/**
 * mpa_rxm_nr_markers() - Markers in the FPDU judged valid
 * @m: the machine, in %MPA_RXM_FPDU
 *
 * Return: the number of Markers in its span, a leading one included.
 */
static inline u32 mpa_rxm_nr_markers(const struct mpa_rxm *m)
{
	return m->lo.nr_markers + m->lo.lead_marker;
}

/* ------------------------------------------------------------------ */
/* MULPDU (mulpdu.c)                                                   */
/* ------------------------------------------------------------------ */

u32 mpa_mulpdu_raw(u32 emss, bool markers);
u32 mpa_mulpdu(u32 emss, bool markers);

/* ------------------------------------------------------------------ */
/* Request/Reply frames (frames.c)                                     */
/* ------------------------------------------------------------------ */

/**
 * enum mpa_role - which end of the startup exchange we are
 * @MPA_INITIATOR: sends the Request, receives the Reply
 * @MPA_RESPONDER: receives the Request, sends the Reply
 */
enum mpa_role {
	MPA_INITIATOR,
	MPA_RESPONDER,
};

/**
 * enum mpa_startup_reason - why a startup exchange failed
 * @MPA_SR_OK: no failure
 * @MPA_SR_BAD_KEY: the Key is neither the Request nor the Reply key
 * @MPA_SR_INIT_INIT: the Initiator received a Request (Initiator/Initiator)
 * @MPA_SR_REPLY_AT_RESPONDER: the Responder received a Reply
 * @MPA_SR_PD_TOO_LONG: PD_Length above 512
 * @MPA_SR_V2_SHORT: Rev 2 enhanced frame too short for the IRD/ORD block
 * @MPA_SR_BAD_REV: Rev above 2
 * @MPA_SR_REV0: Rev 0 peer and permissive mode is off (Appendix C.2)
 * @MPA_SR_REV_MISMATCH: the Reply's Rev cannot answer the Request's Rev
 * @MPA_SR_V2_MISMATCH: the Reply's E bit differs from the Request's
 * @MPA_SR_P2P_MISMATCH: Request had peer-to-peer (A) set, Reply did not
 * @MPA_SR_NO_RTR: no RTR type offered that we support
 * @MPA_SR_RTR_MISMATCH: the Reply did not pick exactly one offered RTR type
 * @MPA_SR_PD_BUFFER: Private Data longer than the application buffer
 * @MPA_SR_TRUNCATED: the connection ended inside a startup frame
 * @MPA_SR_TIMEOUT: the startup frame did not arrive in time
 * @MPA_SR_NR: number of reasons
 *
 * The values are those of the uAPI's enum mpa_reason, which userspace
 * reads back. Every reason but %MPA_SR_OK is RFC 5044 section 8 error code 4
 * (%MPA_ERR_STARTUP).
 */
enum mpa_startup_reason {
	MPA_SR_OK = MPA_REASON_NONE,
	MPA_SR_BAD_KEY = MPA_REASON_BAD_KEY,
	MPA_SR_INIT_INIT = MPA_REASON_INIT_INIT,
	MPA_SR_REPLY_AT_RESPONDER = MPA_REASON_REPLY_AT_RESPONDER,
	MPA_SR_PD_TOO_LONG = MPA_REASON_PD_TOO_LONG,
	MPA_SR_V2_SHORT = MPA_REASON_V2_SHORT,
	MPA_SR_BAD_REV = MPA_REASON_BAD_REV,
	MPA_SR_REV0 = MPA_REASON_REV0,
	MPA_SR_REV_MISMATCH = MPA_REASON_REV_MISMATCH,
	MPA_SR_V2_MISMATCH = MPA_REASON_V2_MISMATCH,
	MPA_SR_P2P_MISMATCH = MPA_REASON_P2P_MISMATCH,
	MPA_SR_NO_RTR = MPA_REASON_NO_RTR,
	MPA_SR_RTR_MISMATCH = MPA_REASON_RTR_MISMATCH,
	MPA_SR_PD_BUFFER = MPA_REASON_PD_BUFFER,
	MPA_SR_TRUNCATED = MPA_REASON_TRUNCATED,
	MPA_SR_TIMEOUT = MPA_REASON_TIMEOUT,
	MPA_SR_NR = MPA_REASON_TIMEOUT + 1,
};

/**
 * struct mpa_frame - decoded contents of a Request or Reply
 * @reply: the Key is the Reply key
 * @m: M bit
 * @c: C bit
 * @r: R bit
 * @enhanced: Rev 2 with the E bit: the IRD/ORD block leads the Private Data
 * @res: received Res bits (never checked, R-7.1.1-13)
 * @rev: Rev field
 * @pd_len: PD_Length, the IRD/ORD block included
 * @ird: enhanced: IRD (0..0x3fff)
 * @ord: enhanced: ORD (0..0x3fff)
 * @p2p: enhanced: flag A, peer-to-peer
 * @rtr: enhanced: RTR types, a mask of %MPA_RTR_SEND, %MPA_RTR_WRITE and
 *	%MPA_RTR_READ (flags B, C and D)
 * @pd: after mpa_frame_parse_pd(): the ULP's Private Data
 * @ulp_pd_len: after mpa_frame_parse_pd(): its length (PD_Length less the
 *	IRD/ORD block)
 */
struct mpa_frame {
	bool reply;
	bool m;
	bool c;
	bool r;
	bool enhanced;
	u8 res;
	u8 rev;
	u16 pd_len;
	u16 ird;
	u16 ord;
	bool p2p;
	u8 rtr;
	const u8 *pd;
	u16 ulp_pd_len;
};

int mpa_frame_build(const struct mpa_frame *f, const void *pd, u32 pd_len,
		    void *buf, u32 size);
bool mpa_frame_key_prefix_ok(const void *buf, u32 len);
enum mpa_startup_reason mpa_frame_parse_hdr(struct mpa_frame *f,
					    const void *hdr,
					    enum mpa_role role);
enum mpa_startup_reason mpa_frame_parse_pd(struct mpa_frame *f,
					   const void *pd);
int mpa_startup_reason_code(enum mpa_startup_reason reason);

/* ------------------------------------------------------------------ */
/* Negotiation (negotiate.c)                                           */
/* ------------------------------------------------------------------ */

/**
 * struct mpa_policy - local startup choices, set by the layers above
 * @rev: Initiator: the Rev to send (1 by default, 2 for RFC 6581, 0 to act
 *	as an upgraded RDMAC endpoint).  Responder: 0 acts as an RDMAC
 *	endpoint (Rev 0 Reply, Markers and CRC on); any other value accepts
 *	Rev 1 and Rev 2 and answers with the Rev received.
 * @markers: our M bit: we want Markers in what we receive
 * @crc: our C bit: we want CRCs
 * @permissive: accept a Rev 0 peer (RFC 5044 Appendix C)
 * @revs: Responder: the revisions (1 and 2) it accepts in a Request, as a
 *	mask with bit N for Rev N; Rev 0 is governed by @permissive
 * @p2p: Initiator, Rev 2: ask for peer-to-peer (flag A)
 * @rtr: Rev 2 RTR types, a mask of %MPA_RTR_SEND, %MPA_RTR_WRITE and
 *	%MPA_RTR_READ: offered by an Initiator, accepted by a Responder
 * @ird: our IRD (0..0x3fff)
 * @ord: our ORD (0..0x3fff)
 */
struct mpa_policy {
	u8 rev;
	bool markers;
	bool crc;
	bool permissive;
	u8 revs;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
};

/**
 * enum mpa_neg_action - what the caller must do after negotiating
 * @MPA_NEG_ACCEPT: enter Full Operation with &mpa_negotiation.params
 *	(a Responder first sends the Reply, or rejects it with R=1)
 * @MPA_NEG_REJECTED: the Responder set R=1: leave MPA, keep TCP open and
 *	hand the Private Data to the ULP (R-7.1.2-13)
 * @MPA_NEG_REPLY_CLOSE: a Responder sends &mpa_negotiation.reply, then
 *	closes gracefully (Appendix C.2.1); the failure is code 4
 * @MPA_NEG_REPLY_REJECT: a well-formed Request the Responder cannot accept
 *	(no RTR type in common): it sends &mpa_negotiation.reply with R=1
 *	(R-7.1.2-5) and leaves MPA, TCP open (R-7.1.2-7); no error code,
 *	&mpa_negotiation.reason says why
 * @MPA_NEG_CLOSE: close now and report code 4
 */
enum mpa_neg_action {
	MPA_NEG_ACCEPT,
	MPA_NEG_REJECTED,
	MPA_NEG_REPLY_CLOSE,
	MPA_NEG_REPLY_REJECT,
	MPA_NEG_CLOSE,
};

/**
 * struct mpa_params - what Full Operation runs with
 * @rev: negotiated MPA revision; 0 means DDP/RDMAP version 0 (RDMAC)
 * @tx_markers: insert Markers in what we send (the peer's M bit)
 * @rx_markers: expect Markers in what we receive (our M bit)
 * @crc: generate and check CRCs (C=1 in either frame)
 * @enhanced: RFC 6581 enhanced connection setup was used
 * @p2p: peer-to-peer mode: the Initiator sends an RTR message first
 * @rtr: the single RTR type to use (one %MPA_RTR_* bit) or 0
 * @ird: our IRD after the exchange
 * @ord: our ORD after the exchange
 */
struct mpa_params {
	u8 rev;
	bool tx_markers;
	bool rx_markers;
	bool crc;
	bool enhanced;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
};

/**
 * struct mpa_negotiation - result of one side's negotiation
 * @action: what to do next
 * @reason: why, when @action is %MPA_NEG_REPLY_CLOSE, %MPA_NEG_REPLY_REJECT
 *	or %MPA_NEG_CLOSE
 * @params: parameters for %MPA_NEG_ACCEPT (and for information otherwise)
 * @reply: Responder: the Reply to send, without its Private Data; the R
 *	bit is chosen by mpa_reply_build()
 */
struct mpa_negotiation {
	enum mpa_neg_action action;
	enum mpa_startup_reason reason;
	struct mpa_params params;
	struct mpa_frame reply;
};

void mpa_policy_default(struct mpa_policy *pol);
void mpa_request_frame(const struct mpa_policy *pol, struct mpa_frame *req);
enum mpa_startup_reason mpa_negotiate_rev(const struct mpa_policy *pol,
					  const struct mpa_frame *f,
					  enum mpa_role role);
void mpa_negotiate_request(const struct mpa_policy *pol,
			   const struct mpa_frame *req,
			   struct mpa_negotiation *neg);
int mpa_reply_build(const struct mpa_negotiation *neg, bool reject,
		    const void *pd, u32 pd_len, void *buf, u32 size);
void mpa_negotiate_reply(const struct mpa_policy *pol,
			 const struct mpa_frame *rep,
			 struct mpa_negotiation *neg);
u8 mpa_rtr_choose(u8 offered);

#endif /* _MPA_CORE_H */
