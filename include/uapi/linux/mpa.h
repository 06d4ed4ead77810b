/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * MPA - Marker PDU Aligned Framing for TCP (RFC 5044, RFC 6581)
 *
 * Userspace interface of the "mpa" TCP upper layer protocol.
 */
#ifndef _UAPI_LINUX_MPA_H
#define _UAPI_LINUX_MPA_H

#include <linux/types.h>

/* Name to pass with setsockopt(fd, SOL_TCP, TCP_ULP, MPA_ULP_NAME, ...) */
#define MPA_ULP_NAME		"mpa"

/*
 * Socket option level of MPA's options. The kernel's own levels (SOL_* and
 * IPPROTO_* values) are small numbers, all below 0x200 and growing one at a
 * time; an out-of-tree protocol cannot reserve one of them, so MPA uses
 * 0x4d5041 ("MPA"), far outside their range. Every other level still
 * reaches TCP and IP.
 */
#define SOL_MPA			0x4d5041

/*
 * Options at SOL_MPA. Before MPA_START, the configuration options may be set
 * (all are __u32 unless noted); MPA_START begins the startup phase.
 *
 * setsockopt(TCP_ULP, MPA_ULP_NAME) fails with EBUSY on a socket that is
 * not MPA's alone: in a sockmap or sockhash, held by another kernel user
 * (sk_user_data), in TCP_REPAIR mode, or with other calls than TCP's own.
 * An MPA socket is SO_OOBINLINE (a peer's urgent octet is a stream octet;
 * setting it to 0 fails with EOPNOTSUPP).
 */
enum {
	MPA_ROLE = 1,		/* MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER */
	MPA_MARKERS,		/* 1: we want Markers in what we receive (M) */
	/* 0: we do not need CRCs (C=0); needs the administrator's leave */
	MPA_CRC,
	MPA_REVISION,		/* Initiator: the Rev to send (1, 2 or 0) */
	MPA_PERMISSIVE,		/* 1: interoperate with Rev 0 (RFC 5044 C) */
	MPA_ENHANCED,		/* struct mpa_enhanced: Rev 2 IRD/ORD, RTR */
	MPA_PRIVATE_DATA,	/* bytes: the Request's Private Data */
	/*
	 * startup timeout in milliseconds, for the peer's frame and for a
	 * Responder's answer to the Request; 0: no limit
	 */
	MPA_TIMEOUT,
	MPA_START,		/* (no value) start the startup phase */
	MPA_PEER_FRAME,		/* get: struct mpa_frame_info received */
	MPA_PEER_PRIVATE_DATA,	/* get: the received Private Data (bytes) */
	MPA_ACCEPT,		/* Responder: accept; value: Reply's PD */
	/*
	 * Responder: reject; value: Reply's PD. Initiator: refuse the Reply's
	 * PD (no value), before the first FPDU either way
	 */
	MPA_REJECT,
	MPA_STATE,		/* get: enum mpa_state */
	MPA_RESULT,		/* get: struct mpa_result */
	MPA_ERROR,		/* get: struct mpa_error_info */
	MPA_STATS,		/* get: struct mpa_stats */
};

/* Values of MPA_ROLE */
#define MPA_ROLE_INITIATOR	1	/* sends the MPA Request */
#define MPA_ROLE_RESPONDER	2	/* answers it with the MPA Reply */

/* States of an MPA socket (MPA_STATE) */
enum mpa_state {
	MPA_STATE_STREAMING = 1,	/* attached; plain stream, not started */
	MPA_STATE_AWAIT_REQUEST,	/* Responder waits for the Request */
	MPA_STATE_REQUEST_RECEIVED,	/* Responder: accept or reject it */
	MPA_STATE_AWAIT_REPLY,		/* Initiator waits for the Reply */
	MPA_STATE_FULL,			/* Full Operation: FPDUs */
	MPA_STATE_REJECTED,		/* left MPA after a reject; plain stream */
	MPA_STATE_FAILED,		/* startup failed; TCP is being closed */
};

/**
 * struct mpa_enhanced - RFC 6581 enhanced connection setup (Rev 2)
 * @ird: our inbound RDMA Read queue depth (0..MPA_IRD_ORD_MAX)
 * @ord: our outbound RDMA Read queue depth (0..MPA_IRD_ORD_MAX)
 * @flags: MPA_ENH_PEER_TO_PEER: Initiator asks for peer-to-peer mode
 * @rtr: MPA_RTR_* types an Initiator offers or a Responder accepts
 * @reserved: zero
 */
struct mpa_enhanced {
	__u16	ird;
	__u16	ord;
	__u8	flags;
	__u8	rtr;
	__u16	reserved;
};

#define MPA_ENH_PEER_TO_PEER	0x01

/**
 * struct mpa_frame_info - the MPA Request or Reply received (MPA_PEER_FRAME)
 * @revision: its Rev field
 * @flags: MPA_FRAME_* bits as received
 * @res: its Res bits (never checked)
 * @rtr: Rev 2 enhanced: the RTR types (MPA_RTR_*) it carries
 * @pd_len: length of its Private Data, the Rev 2 IRD/ORD block excluded
 * @ird: Rev 2 enhanced: its IRD
 * @ord: Rev 2 enhanced: its ORD
 * @reserved: zero
 */
struct mpa_frame_info {
	__u8	revision;
	__u8	flags;
	__u8	res;
	__u8	rtr;
	__u16	pd_len;
	__u16	ird;
	__u16	ord;
	__u16	reserved;
};

#define MPA_FRAME_MARKERS	0x01	/* M */
#define MPA_FRAME_CRC		0x02	/* C */
#define MPA_FRAME_REJECT	0x04	/* R */
#define MPA_FRAME_ENHANCED	0x08	/* Rev 2 IRD/ORD block present */
#define MPA_FRAME_PEER_TO_PEER	0x10	/* Rev 2 flag A */

/**
 * struct mpa_result - what the startup phase negotiated (MPA_RESULT)
 * @revision: MPA revision in use; 0 means the DDP/RDMAP version is 0
 * @flags: MPA_RESULT_* bits
 * @rtr: Rev 2 peer-to-peer: the one RTR type (MPA_RTR_*) in use
 * @role: MPA_ROLE_INITIATOR or MPA_ROLE_RESPONDER
 * @ird: our IRD after the exchange (Rev 2)
 * @ord: our ORD after the exchange (Rev 2)
 * @mulpdu: the current MULPDU, from the current MSS (RFC 5044 4.5)
 */
struct mpa_result {
	__u8	revision;
	__u8	flags;
	__u8	rtr;
	__u8	role;
	__u16	ird;
	__u16	ord;
	__u32	mulpdu;
};

#define MPA_RESULT_TX_MARKERS	0x01	/* we insert Markers */
#define MPA_RESULT_RX_MARKERS	0x02	/* the peer inserts Markers */
#define MPA_RESULT_CRC		0x04	/* CRCs generated and checked */
#define MPA_RESULT_ENHANCED	0x08	/* RFC 6581 enhanced setup used */
#define MPA_RESULT_PEER_TO_PEER	0x10	/* Initiator sends an RTR first */
/* Responder: sends held until the first FPDU arrives (R-7.1.2-15) */
#define MPA_RESULT_TX_HELD	0x20

/* Why startup or Full Operation failed (struct mpa_error_info's reason) */
enum mpa_reason {
	MPA_REASON_NONE = 0,
	MPA_REASON_BAD_KEY,		/* Key is neither Request nor Reply */
	MPA_REASON_INIT_INIT,		/* Initiator received a Request */
	MPA_REASON_REPLY_AT_RESPONDER,	/* Responder received a Reply */
	MPA_REASON_PD_TOO_LONG,		/* PD_Length above 512 */
	MPA_REASON_V2_SHORT,		/* Rev 2 frame without IRD/ORD room */
	MPA_REASON_BAD_REV,		/* unsupported Rev */
	MPA_REASON_REV0,		/* Rev 0 peer, permissive mode off */
	MPA_REASON_REV_MISMATCH,	/* Reply's Rev cannot answer ours */
	MPA_REASON_V2_MISMATCH,		/* Reply's enhanced bit differs */
	MPA_REASON_P2P_MISMATCH,	/* peer-to-peer asked, not granted */
	MPA_REASON_NO_RTR,		/* no RTR type in common */
	MPA_REASON_RTR_MISMATCH,	/* Reply picked no single offered RTR */
	MPA_REASON_PD_BUFFER,		/* Private Data too long for us */
	MPA_REASON_TRUNCATED,		/* connection ended inside a frame
					 * or an FPDU
					 */
	MPA_REASON_TIMEOUT,		/* no Request or Reply in time */
	MPA_REASON_PEER_CLOSED,		/* the peer closed or reset TCP */
	MPA_REASON_REJECTED,		/* the peer rejected (R=1) */
	MPA_REASON_CRC,			/* FPDU with a bad CRC (code 2) */
	MPA_REASON_MARKER,		/* Marker disagrees with FPDU (code 3) */
	MPA_REASON_BAD_LENGTH,		/* ULPDU_Length above 64768 (code 2) */
	MPA_REASON_EARLY_DATA,		/* octets behind the Request before
					 * the Reply (code 4)
					 */
};

/**
 * struct mpa_error_info - the last error (MPA_ERROR)
 * @code: RFC 5044 section 8 error code (enum mpa_error), 0 for none
 * @reason: enum mpa_reason, for startup failures
 * @errnum: the errno the failing call returned (positive)
 */
struct mpa_error_info {
	__u32	code;
	__u32	reason;
	__s32	errnum;
};

/*
 * Per-connection counters (MPA_STATS). Only __u64 fields: the layout is
 * then the same for 32-bit callers (i386 aligns __u64 to 4 octets).
 */
struct mpa_stats {
	__u64	tx_fpdus;		/* FPDUs sent */
	__u64	tx_octets;		/* ULPDU octets sent */
	__u64	rx_fpdus;		/* FPDUs received and validated */
	__u64	rx_octets;		/* ULPDU octets received */
	__u64	tx_markers;		/* Markers sent */
	__u64	rx_markers;		/* Markers received */
	__u64	crc_errors;		/* code 2: bad CRC or BAD_LENGTH */
	__u64	marker_errors;		/* Marker mismatches (code 3) */
	__u64	startup_octets_tx;	/* startup frame octets sent */
	__u64	startup_octets_rx;	/* startup frame octets received */
};

/* MPA revisions (the Rev field of the Request and Reply frames) */
#define MPA_REVISION_0		0	/* RDMA Consortium MPA, RFC 5044 App. C */
#define MPA_REVISION_1		1	/* RFC 5044 */
#define MPA_REVISION_2		2	/* RFC 6581 enhanced connection setup */

/* Error codes of RFC 5044 section 8 */
enum mpa_error {
	MPA_ERR_NONE		= 0,
	MPA_ERR_TCP_CLOSED	= 1,	/* TCP closed, terminated or lost */
	MPA_ERR_CRC		= 2,	/* received CRC differs from computed */
	MPA_ERR_MARKER		= 3,	/* Marker and ULPDU_Length disagree */
	MPA_ERR_STARTUP		= 4,	/* invalid MPA Request or Reply frame */
};

/* Limits of RFC 5044 */
#define MPA_MAX_ULPDU		64768	/* largest ULPDU (and MULPDU) */
#define MPA_MIN_MULPDU		128	/* smallest MULPDU ever reported */
#define MPA_MAX_PRIVATE_DATA	512	/* Private Data in a Request/Reply */
#define MPA_V2_PRIVATE_DATA	508	/* the same with Rev 2's IRD/ORD block */

/* RFC 6581 (Rev 2) Ready-To-Receive message types, as a mask */
#define MPA_RTR_SEND		0x01	/* zero-length Send (flag B) */
#define MPA_RTR_WRITE		0x02	/* zero-length RDMA Write (flag C) */
#define MPA_RTR_READ		0x04	/* zero-length RDMA Read (flag D) */
#define MPA_RTR_ALL		(MPA_RTR_SEND | MPA_RTR_WRITE | MPA_RTR_READ)

/* Largest IRD or ORD value of the RFC 6581 IRD/ORD block */
#define MPA_IRD_ORD_MAX		0x3fff

#endif /* _UAPI_LINUX_MPA_H */
