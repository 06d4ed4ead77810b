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
