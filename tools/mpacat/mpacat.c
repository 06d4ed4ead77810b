// SPDX-License-Identifier: GPL-2.0
/*
 * mpacat: netcat for MPA (RFC 5044, RFC 6581) sockets.
 *
 * Connects (or accepts one connection), attaches the "mpa" TCP ULP, runs
 * the MPA startup phase as the command line says, then sends ULPDUs (one
 * per line of standard input, a file cut into pieces, or random ones) and
 * prints the ULPDUs it receives. See --help and the README.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <linux/mpa.h>

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Room for the largest ULPDU, and for a line of that size plus its '\n' */
#define BUF_SIZE 65536
/* Standard input: room for the largest ULPDU as a line of hex (--hex-in) */
#define IN_SIZE (4 * BUF_SIZE)

enum source {
	SRC_STDIN,		/* one line, one ULPDU */
	SRC_FILE,		/* --file, in ULPDUs of --size */
	SRC_RANDOM,		/* --random N --count K */
	SRC_NONE,		/* --no-send: receive only */
};

enum output {
	OUT_TEXT,		/* the ULPDU's octets and a newline */
	OUT_HEX,		/* a hex dump per ULPDU */
	OUT_HEX_LINE,		/* --hex-out: one line of hex per ULPDU */
	OUT_QUIET,		/* nothing per ULPDU */
};

struct options {
	bool listen;
	int family;
	const char *host;
	const char *port;
	int role;		/* 0: by who connects */
	bool markers;
	bool no_crc;
	int rev;		/* -1: the module's default */
	bool permissive;
	bool enhanced;		/* --ird, --ord, --rtr or --p2p given */
	int ird, ord, rtr;	/* -1: the module's default */
	bool p2p;
	const char *pd;
	bool reject;
	unsigned int timeout_ms;
	enum source src;
	bool hex_in;		/* standard input: one ULPDU per line, in hex */
	bool no_shutdown;	/* no FIN when all is sent: wait for the peer's */
	const char *file;
	unsigned int size;	/* 0: the current MULPDU */
	unsigned int random_max;
	unsigned long count;
	unsigned int seed;
	bool seed_set;
	enum output out;
	bool verbose;
};

/* The state of the data exchange in Full Operation */
struct xfer {
	int fd;			/* the MPA socket */
	int in_fd;		/* stdin or --file, -1 when done */
	bool in_eof;
	unsigned char *inbuf;	/* stdin: octets read, not yet sent */
	size_t in_len;
	unsigned long in_line;	/* stdin: lines taken so far */
	unsigned char *tx;	/* the next ULPDU to send */
	size_t tx_len;
	bool tx_ready;
	unsigned long tx_left;	/* --random: ULPDUs still to make */
	bool src_done;		/* nothing more to send */
	bool wr_shut;		/* shutdown(SHUT_WR) done */
	bool held_note;		/* told the user about held sends */
	unsigned char *rx;	/* the ULPDU being received */
	size_t rx_len;
	bool peer_eof;
	unsigned long tx_count, rx_count;
	unsigned long long tx_octets, rx_octets;
};

static const char *prog = "mpacat";

static const char *const reason_names[] = {
	[MPA_REASON_NONE] = "NONE",
	[MPA_REASON_BAD_KEY] = "BAD_KEY",
	[MPA_REASON_INIT_INIT] = "INIT_INIT",
	[MPA_REASON_REPLY_AT_RESPONDER] = "REPLY_AT_RESPONDER",
	[MPA_REASON_PD_TOO_LONG] = "PD_TOO_LONG",
	[MPA_REASON_V2_SHORT] = "V2_SHORT",
	[MPA_REASON_BAD_REV] = "BAD_REV",
	[MPA_REASON_REV0] = "REV0",
	[MPA_REASON_REV_MISMATCH] = "REV_MISMATCH",
	[MPA_REASON_V2_MISMATCH] = "V2_MISMATCH",
	[MPA_REASON_P2P_MISMATCH] = "P2P_MISMATCH",
	[MPA_REASON_NO_RTR] = "NO_RTR",
	[MPA_REASON_RTR_MISMATCH] = "RTR_MISMATCH",
	[MPA_REASON_PD_BUFFER] = "PD_BUFFER",
	[MPA_REASON_TRUNCATED] = "TRUNCATED",
	[MPA_REASON_TIMEOUT] = "TIMEOUT",
	[MPA_REASON_PEER_CLOSED] = "PEER_CLOSED",
	[MPA_REASON_REJECTED] = "REJECTED",
	[MPA_REASON_CRC] = "CRC",
	[MPA_REASON_MARKER] = "MARKER",
	[MPA_REASON_BAD_LENGTH] = "BAD_LENGTH",
	[MPA_REASON_EARLY_DATA] = "EARLY_DATA",
};

static const char *const code_names[] = {
	[MPA_ERR_NONE] = "none",
	[MPA_ERR_TCP_CLOSED] = "TCP connection closed, terminated or lost",
	[MPA_ERR_CRC] = "an FPDU failed its CRC or length check",
	[MPA_ERR_MARKER] = "a Marker and the ULPDU_Length disagree",
	[MPA_ERR_STARTUP] = "invalid MPA Request or Reply",
};

static void print_help(FILE *f)
{
	fprintf(f,
		"usage: %s [options] HOST PORT      connect, then speak MPA\n"
"       %s [options] -l [HOST] PORT listen, accept one connection\n"
"\n"
"Attaches the \"mpa\" TCP ULP (RFC 5044, RFC 6581) to a TCP connection, runs\n"
"the MPA startup phase, then sends ULPDUs and prints the ULPDUs received.\n"
"The mpa module must be loaded (modprobe mpa) unless the caller has\n"
"CAP_NET_ADMIN.\n"
"\n"
"Connection:\n"
"  -l, --listen          listen on PORT (and HOST if given), accept one\n"
"                        connection, then stop listening\n"
"  -4, -6                IPv4 or IPv6 only (default: either; a listener\n"
"                        without HOST takes both on one IPv6 socket)\n"
"\n"
"Startup phase (options at level SOL_MPA, set before MPA_START):\n"
"  --role initiator|responder\n"
"                        who sends the MPA Request (default: the\n"
"                        connecting side is the Initiator, the listener\n"
"                        the Responder)\n"
"  --markers             ask for Markers in what we receive (M=1)\n"
"  --no-crc              announce C=0 (needs the network namespace's\n"
"                        policy crc-off-allowed; CRCs are still used if\n"
"                        the peer wants them)\n"
"  --rev 0|1|2           the revision an Initiator sends (default: the\n"
"                        namespace's policy, 1 unless changed;\n"
"                        2 is RFC 6581 with the IRD/ORD block)\n"
"  --permissive          interoperate with Rev 0 peers (RFC 5044 App. C)\n"
"  --ird N, --ord N      Rev 2: our IRD and ORD (0..16383)\n"
"  --rtr TYPES           Rev 2: the RTR types an Initiator offers or a\n"
"                        Responder accepts, a comma list of send, write,\n"
"                        read or all; on an Initiator it implies --p2p\n"
"  --p2p                 Rev 2: an Initiator asks for peer-to-peer mode\n"
"  --pd TEXT             Private Data: in the Request (Initiator) or in\n"
"                        the Reply (Responder); up to 512 octets, 508 with\n"
"                        Rev 2\n"
"  --reject              Responder: reject the Request (R=1), then exit\n"
"  --timeout MS          how long the peer's frame may take (MPA_TIMEOUT;\n"
"                        module default 10000)\n"
"\n"
"What to send in Full Operation (default: standard input, one line per\n"
"ULPDU, the newline excluded; empty lines are skipped, as a ULPDU has at\n"
"least one octet; a line may have up to 64768 octets):\n"
"  --hex-in              standard input: each line is one ULPDU in hex,\n"
"                        two digits an octet, blanks between them ignored\n"
"                        (binary ULPDUs, e.g. DDP/RDMAP messages for an\n"
"                        RDMA peer)\n"
"  -f, --file F          send file F in ULPDUs of --size octets\n"
"  -s, --size N          ULPDU size for --file, 1..64768 (default: the\n"
"                        current MULPDU of MPA_RESULT, read before each)\n"
"  --random N            send ULPDUs of random sizes 1..N (N <= 64768)\n"
"                        of random letters and digits\n"
"  --count K             how many ULPDUs --random sends (default 10)\n"
"  --seed S              seed of --random (default: time and pid; printed)\n"
"  -n, --no-send         send nothing; only receive\n"
"When everything is sent, mpacat shuts its sending side down (FIN) and\n"
"goes on receiving until the peer closes. A Responder waits until its held\n"
"sends could go out (the Initiator's first FPDU arrived, RFC 5044\n"
"R-7.1.2-15) or the peer closed, as closing earlier would drop them.\n"
"  --no-shutdown         no FIN when everything is sent: go on receiving\n"
"                        until the peer closes, then close (for peers\n"
"                        that take a FIN as the end of the whole stream,\n"
"                        as an RDMA peer does)\n"
"\n"
"Output (received ULPDUs on standard output, the rest on standard error):\n"
"  (default)             each ULPDU's octets followed by a newline\n"
"  -x, --hex             a hex dump of each ULPDU\n"
"  --hex-out             each ULPDU as one line of hex (what --hex-in reads)\n"
"  -q, --quiet           no ULPDUs, only the summary\n"
"  -v, --verbose         also a line per ULPDU sent and received, with its\n"
"                        length and CRC32c (for comparing both ends)\n"
"  -h, --help            this text\n"
"On standard error mpacat prints the connection, the peer's MPA Request or\n"
"Reply (MPA_PEER_FRAME and its Private Data), the negotiated parameters\n"
"(MPA_RESULT, with the MULPDU), errors with MPA_ERROR's code and reason,\n"
"and at the end a summary from MPA_STATS: ULPDUs and octets each way.\n"
"\n"
"Exit status: 0 when the exchange ended with both sides closed cleanly (or\n"
"a Responder rejected as told), 1 on any failure (a refused or failed\n"
"startup, an MPA error on the connection), 2 on a usage error.\n"
"\n"
"Examples:\n"
"  %s --markers -l 7174                  # a Responder on port 7174\n"
"  echo hello | %s --markers 10.0.0.2 7174\n"
"  %s --rev 2 --ird 4 --ord 4 --rtr read --pd hi -x HOST 7174\n"
"  %s --random 20000 --count 50 -q HOST 7174\n"
"  # an RDMAP Send (DDP untagged, QN 0, MSN 1, MO 0) of \"hello\" to an\n"
"  # RDMA peer, printing what it sends back in hex\n"
"  echo 4143 00000000 00000000 00000001 00000000 68656c6c6f |\n"
"      %s --hex-in --hex-out --no-shutdown HOST 7471\n",
		prog, prog, prog, prog, prog, prog, prog);
}

static void note(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help'.\n", prog);
	exit(2);
}

static const char *reason_name(unsigned int reason)
{
	if (reason < ARRAY_SIZE(reason_names) && reason_names[reason])
		return reason_names[reason];
	return "?";
}

static const char *code_name(unsigned int code)
{
	if (code < ARRAY_SIZE(code_names) && code_names[code])
		return code_names[code];
	return "?";
}

/*
 * Report a failed call: what failed, errno's text and, when the socket
 * has one, MPA_ERROR's code and reason.
 */
static void mpa_fail(int fd, const char *what, int err)
{
	struct mpa_error_info ei;
	socklen_t len = sizeof(ei);

	memset(&ei, 0, sizeof(ei));
	if (fd >= 0 &&
	    !getsockopt(fd, SOL_MPA, MPA_ERROR, &ei, &len) &&
	    (ei.code || ei.reason || ei.errnum)) {
		note("%s: %s (MPA error code %u: %s; reason %u %s; errno %d %s)",
		     what, strerror(err), ei.code, code_name(ei.code),
		     ei.reason, reason_name(ei.reason), ei.errnum,
		     ei.errnum ? strerror(ei.errnum) : "none");
		return;
	}
	note("%s: %s", what, strerror(err));
}

static unsigned long parse_ulong(const char *opt, const char *s,
				 unsigned long min, unsigned long max)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v < min || v > max)
		usage_error("%s: '%s' is not a number in %lu..%lu", opt, s,
			    min, max);
	return v;
}

static int parse_rtr(const char *s)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int mask = 0;

	if (!copy) {
		note("out of memory");
		exit(1);
	}
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "send"))
			mask |= MPA_RTR_SEND;
		else if (!strcmp(tok, "write"))
			mask |= MPA_RTR_WRITE;
		else if (!strcmp(tok, "read"))
			mask |= MPA_RTR_READ;
		else if (!strcmp(tok, "all"))
			mask |= MPA_RTR_ALL;
		else if (!strcmp(tok, "none"))
			;
		else
			usage_error("--rtr: unknown RTR type '%s'", tok);
	}
	free(copy);
	return mask;
}

enum {
	OPT_ROLE = 256,
	OPT_MARKERS,
	OPT_NO_CRC,
	OPT_REV,
	OPT_PERMISSIVE,
	OPT_IRD,
	OPT_ORD,
	OPT_RTR,
	OPT_P2P,
	OPT_PD,
	OPT_REJECT,
	OPT_TIMEOUT,
	OPT_RANDOM,
	OPT_COUNT,
	OPT_SEED,
	OPT_HEX_IN,
	OPT_HEX_OUT,
	OPT_NO_SHUTDOWN,
};

static const struct option long_opts[] = {
	{ "listen", no_argument, NULL, 'l' },
	{ "role", required_argument, NULL, OPT_ROLE },
	{ "markers", no_argument, NULL, OPT_MARKERS },
	{ "no-crc", no_argument, NULL, OPT_NO_CRC },
	{ "rev", required_argument, NULL, OPT_REV },
	{ "permissive", no_argument, NULL, OPT_PERMISSIVE },
	{ "ird", required_argument, NULL, OPT_IRD },
	{ "ord", required_argument, NULL, OPT_ORD },
	{ "rtr", required_argument, NULL, OPT_RTR },
	{ "p2p", no_argument, NULL, OPT_P2P },
	{ "pd", required_argument, NULL, OPT_PD },
	{ "reject", no_argument, NULL, OPT_REJECT },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "file", required_argument, NULL, 'f' },
	{ "size", required_argument, NULL, 's' },
	{ "random", required_argument, NULL, OPT_RANDOM },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "no-send", no_argument, NULL, 'n' },
	{ "hex-in", no_argument, NULL, OPT_HEX_IN },
	{ "no-shutdown", no_argument, NULL, OPT_NO_SHUTDOWN },
	{ "hex-out", no_argument, NULL, OPT_HEX_OUT },
	{ "hex", no_argument, NULL, 'x' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void parse_args(int argc, char **argv, struct options *o)
{
	bool have_count = false, have_size = false;
	int c, nargs;

	memset(o, 0, sizeof(*o));
	o->family = AF_UNSPEC;
	o->rev = -1;
	o->ird = -1;
	o->ord = -1;
	o->rtr = -1;
	o->count = 10;
	o->src = SRC_STDIN;
	o->out = OUT_TEXT;

	while ((c = getopt_long(argc, argv, "l46f:s:nxqvh", long_opts,
				NULL)) != -1) {
		switch (c) {
		case 'l':
			o->listen = true;
			break;
		case '4':
			o->family = AF_INET;
			break;
		case '6':
			o->family = AF_INET6;
			break;
		case OPT_ROLE:
			if (!strcmp(optarg, "initiator"))
				o->role = MPA_ROLE_INITIATOR;
			else if (!strcmp(optarg, "responder"))
				o->role = MPA_ROLE_RESPONDER;
			else
				usage_error("--role: initiator or responder, not '%s'",
					    optarg);
			break;
		case OPT_MARKERS:
			o->markers = true;
			break;
		case OPT_NO_CRC:
			o->no_crc = true;
			break;
		case OPT_REV:
			o->rev = parse_ulong("--rev", optarg, 0, 2);
			break;
		case OPT_PERMISSIVE:
			o->permissive = true;
			break;
		case OPT_IRD:
			o->ird = parse_ulong("--ird", optarg, 0, MPA_IRD_ORD_MAX);
			o->enhanced = true;
			break;
		case OPT_ORD:
			o->ord = parse_ulong("--ord", optarg, 0, MPA_IRD_ORD_MAX);
			o->enhanced = true;
			break;
		case OPT_RTR:
			o->rtr = parse_rtr(optarg);
			o->enhanced = true;
			break;
		case OPT_P2P:
			o->p2p = true;
			o->enhanced = true;
			break;
		case OPT_PD:
			if (strlen(optarg) > MPA_MAX_PRIVATE_DATA)
				usage_error("--pd: more than %d octets",
					    MPA_MAX_PRIVATE_DATA);
			o->pd = optarg;
			break;
		case OPT_REJECT:
			o->reject = true;
			break;
		case OPT_TIMEOUT:
			o->timeout_ms = parse_ulong("--timeout", optarg, 1,
						    UINT_MAX);
			break;
		case 'f':
			o->src = SRC_FILE;
			o->file = optarg;
			break;
		case 's':
			o->size = parse_ulong("--size", optarg, 1, MPA_MAX_ULPDU);
			have_size = true;
			break;
		case OPT_RANDOM:
			o->src = SRC_RANDOM;
			o->random_max = parse_ulong("--random", optarg, 1,
						    MPA_MAX_ULPDU);
			break;
		case OPT_COUNT:
			o->count = parse_ulong("--count", optarg, 0, ULONG_MAX);
			have_count = true;
			break;
		case OPT_SEED:
			o->seed = parse_ulong("--seed", optarg, 0, UINT_MAX);
			o->seed_set = true;
			break;
		case 'n':
			o->src = SRC_NONE;
			break;
		case 'x':
			o->out = OUT_HEX;
			break;
		case OPT_HEX_IN:
			o->hex_in = true;
			break;
		case OPT_HEX_OUT:
			o->out = OUT_HEX_LINE;
			break;
		case OPT_NO_SHUTDOWN:
			o->no_shutdown = true;
			break;
		case 'q':
			o->out = OUT_QUIET;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			print_help(stdout);
			exit(0);
		default:
			usage_error("unknown option");
		}
	}

	nargs = argc - optind;
	if (o->listen && nargs == 1) {
		o->port = argv[optind];
	} else if (nargs == 2) {
		o->host = argv[optind];
		o->port = argv[optind + 1];
	} else {
		usage_error(o->listen ? "-l takes [HOST] PORT" :
			    "HOST and PORT are needed (or -l PORT)");
	}
	if (!o->role)
		o->role = o->listen ? MPA_ROLE_RESPONDER : MPA_ROLE_INITIATOR;
	if (o->reject && o->role != MPA_ROLE_RESPONDER)
		usage_error("--reject is for a Responder");
	if (have_size && o->src != SRC_FILE)
		usage_error("--size goes with --file");
	if (have_count && o->src != SRC_RANDOM)
		usage_error("--count goes with --random");
	if (o->hex_in && o->src != SRC_STDIN)
		usage_error("--hex-in is for standard input, not with --file, --random or -n");
	if (o->role == MPA_ROLE_INITIATOR && o->rtr > 0)
		o->p2p = true;
}

/*
 * Print an address as HOST:PORT, [HOST]:PORT for IPv6; an IPv4-mapped
 * one (a dual-stack listener's) as the IPv4 address it is.
 */
static void addr_str(const struct sockaddr *sa, socklen_t len, char *buf,
		     size_t size)
{
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	struct sockaddr_in sin;

	if (sa->sa_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = sin6->sin6_port;
		memcpy(&sin.sin_addr, &sin6->sin6_addr.s6_addr[12], 4);
		sa = (const struct sockaddr *)&sin;
		len = sizeof(sin);
	}
	if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(buf, size, "?");
		return;
	}
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s",
		 host, serv);
}

static void print_connection(int fd)
{
	struct sockaddr_storage a, b;
	socklen_t alen = sizeof(a), blen = sizeof(b);
	char la[INET6_ADDRSTRLEN + 16], pa[INET6_ADDRSTRLEN + 16];

	if (getsockname(fd, (struct sockaddr *)&a, &alen) ||
	    getpeername(fd, (struct sockaddr *)&b, &blen))
		return;
	addr_str((struct sockaddr *)&a, alen, la, sizeof(la));
	addr_str((struct sockaddr *)&b, blen, pa, sizeof(pa));
	note("connected: %s -> %s", la, pa);
}

static int do_connect(const struct options *o)
{
	struct addrinfo hints, *res, *ai;
	int fd = -1, err, saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = o->family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	err = getaddrinfo(o->host, o->port, &hints, &res);
	if (err) {
		note("%s %s: %s", o->host, o->port, gai_strerror(err));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen))
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		note("connect to %s port %s: %s", o->host, o->port,
		     strerror(saved));
	return fd;
}

static int listen_on(const struct addrinfo *ai, bool dual)
{
	int one = 1, zero = 0;
	int fd;

	fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ai->ai_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, dual ? &zero : &one,
			   sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static int do_listen(const struct options *o)
{
	struct addrinfo hints, *res, *ai;
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	int lfd = -1, fd, err, saved = 0;
	bool dual = !o->host && o->family == AF_UNSPEC;

	memset(&hints, 0, sizeof(hints));
	/* Without HOST and family: one IPv6 socket for both, else IPv4. */
	hints.ai_family = dual ? AF_INET6 : o->family;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_protocol = IPPROTO_TCP;
	hints.ai_flags = AI_PASSIVE;
	err = getaddrinfo(o->host, o->port, &hints, &res);
	if (err && dual) {
		hints.ai_family = AF_INET;
		dual = false;
		err = getaddrinfo(o->host, o->port, &hints, &res);
	}
	if (err) {
		note("listen on %s port %s: %s", o->host ? o->host : "*",
		     o->port, gai_strerror(err));
		return -1;
	}
	for (ai = res; ai && lfd < 0; ai = ai->ai_next) {
		lfd = listen_on(ai, dual);
		if (lfd < 0)
			saved = errno;
	}
	freeaddrinfo(res);
	if (lfd < 0 && dual && saved == EAFNOSUPPORT) {
		struct options v4 = *o;

		v4.family = AF_INET;
		return do_listen(&v4);
	}
	if (lfd < 0) {
		note("listen on %s port %s: %s", o->host ? o->host : "*",
		     o->port, strerror(saved));
		return -1;
	}
	if (o->verbose)
		note("listening on port %s", o->port);
	fd = accept(lfd, (struct sockaddr *)&peer, &plen);
	if (fd < 0)
		note("accept: %s", strerror(errno));
	close(lfd);
	return fd;
}

static int set_u32(int fd, int opt, const char *name, unsigned int val)
{
	if (!setsockopt(fd, SOL_MPA, opt, &val, sizeof(val)))
		return 0;
	note("setsockopt(%s, %u): %s%s", name, val, strerror(errno),
	     opt == MPA_CRC && errno == EPERM ?
	     " (the namespace's policy forbids it: mpa.rst, \"Policy\")" : "");
	return -1;
}

/* RTR types as a comma list: "write", "send,read" or "none". */
static const char *rtr_str(unsigned int rtr, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s%s",
		 rtr & MPA_RTR_SEND ? ",send" : "",
		 rtr & MPA_RTR_WRITE ? ",write" : "",
		 rtr & MPA_RTR_READ ? ",read" : "",
		 rtr & MPA_RTR_ALL ? "" : ",none");
	return buf + 1;
}

/* Private Data: as text if it is printable, else in hex. */
static void print_pd(const char *who, const unsigned char *pd, size_t len)
{
	bool text = true;
	size_t i;

	if (!len) {
		note("%s Private Data: none", who);
		return;
	}
	for (i = 0; i < len; i++)
		if (pd[i] < 0x20 || pd[i] > 0x7e)
			text = false;
	fflush(stdout);
	fprintf(stderr, "%s: %s Private Data (%zu octet%s): ", prog, who, len,
		len == 1 ? "" : "s");
	if (text) {
		fprintf(stderr, "\"%.*s\"\n", (int)len, pd);
		return;
	}
	for (i = 0; i < len; i++)
		fprintf(stderr, "%02x%s", pd[i], i + 1 < len ? " " : "\n");
}

/* MPA_PEER_FRAME and MPA_PEER_PRIVATE_DATA */
static void print_peer_frame(int fd, int role)
{
	const char *what = role == MPA_ROLE_INITIATOR ? "Reply" : "Request";
	unsigned char pd[MPA_MAX_PRIVATE_DATA];
	struct mpa_frame_info fi;
	socklen_t len = sizeof(fi);
	char rtr[32], who[32];

	if (getsockopt(fd, SOL_MPA, MPA_PEER_FRAME, &fi, &len)) {
		if (errno != ENODATA)
			note("getsockopt(MPA_PEER_FRAME): %s", strerror(errno));
		return;
	}
	/* PD_Length as on the wire: Rev 2's IRD/ORD block counts in it */
	note("peer's MPA %s: Rev %u, M=%d C=%d R=%d, Res 0x%x, PD_Length %u",
	     what, fi.revision, !!(fi.flags & MPA_FRAME_MARKERS),
	     !!(fi.flags & MPA_FRAME_CRC), !!(fi.flags & MPA_FRAME_REJECT),
	     fi.res, fi.pd_len + (fi.flags & MPA_FRAME_ENHANCED ? 4 : 0));
	if (fi.flags & MPA_FRAME_ENHANCED)
		note("peer's MPA %s: Rev 2 enhanced: IRD %u, ORD %u, peer-to-peer %s, RTR %s",
		     what, fi.ird, fi.ord,
		     fi.flags & MPA_FRAME_PEER_TO_PEER ? "yes" : "no",
		     rtr_str(fi.rtr, rtr, sizeof(rtr)));
	len = sizeof(pd);
	if (getsockopt(fd, SOL_MPA, MPA_PEER_PRIVATE_DATA, pd, &len)) {
		note("getsockopt(MPA_PEER_PRIVATE_DATA): %s", strerror(errno));
		return;
	}
	snprintf(who, sizeof(who), "peer's %s", what);
	print_pd(who, pd, len);
}

static int get_result(int fd, struct mpa_result *res)
{
	socklen_t len = sizeof(*res);

	return getsockopt(fd, SOL_MPA, MPA_RESULT, res, &len);
}

static void print_result(int fd)
{
	struct mpa_result r;
	char rtr[32];

	if (get_result(fd, &r)) {
		note("getsockopt(MPA_RESULT): %s", strerror(errno));
		return;
	}
	note("negotiated: Rev %u, %s; Markers: we send %s, peer sends %s; CRC %s; MULPDU %u",
	     r.revision,
	     r.role == MPA_ROLE_INITIATOR ? "Initiator" : "Responder",
	     r.flags & MPA_RESULT_TX_MARKERS ? "yes" : "no",
	     r.flags & MPA_RESULT_RX_MARKERS ? "yes" : "no",
	     r.flags & MPA_RESULT_CRC ? "on" : "off", r.mulpdu);
	if (r.flags & MPA_RESULT_ENHANCED)
		note("negotiated: Rev 2 enhanced: IRD %u, ORD %u, peer-to-peer %s%s%s",
		     r.ird, r.ord,
		     r.flags & MPA_RESULT_PEER_TO_PEER ? "yes" : "no",
		     r.flags & MPA_RESULT_PEER_TO_PEER ? ", RTR " : "",
		     r.flags & MPA_RESULT_PEER_TO_PEER ?
		     rtr_str(r.rtr, rtr, sizeof(rtr)) : "");
	if (r.flags & MPA_RESULT_TX_HELD)
		note("our sends are held until the Initiator's first FPDU arrives (R-7.1.2-15)");
}

/*
 * The startup phase. Returns 0 in Full Operation, 1 after a Responder
 * rejected as told (done), -1 on failure.
 */
static int mpa_startup(int fd, const struct options *o)
{
	const char *role = o->role == MPA_ROLE_INITIATOR ? "Initiator" :
			   "Responder";
	size_t pd_len = o->pd ? strlen(o->pd) : 0;
	int ret;

	if (setsockopt(fd, SOL_TCP, TCP_ULP, MPA_ULP_NAME,
		       sizeof(MPA_ULP_NAME))) {
		note("setsockopt(TCP_ULP, \"mpa\"): %s%s", strerror(errno),
		     errno == ENOENT ? " (is the mpa module loaded? modprobe mpa)" : "");
		return -1;
	}
	if (set_u32(fd, MPA_ROLE, "MPA_ROLE", o->role) ||
	    (o->markers && set_u32(fd, MPA_MARKERS, "MPA_MARKERS", 1)) ||
	    (o->no_crc && set_u32(fd, MPA_CRC, "MPA_CRC", 0)) ||
	    (o->rev >= 0 && set_u32(fd, MPA_REVISION, "MPA_REVISION", o->rev)) ||
	    (o->permissive && set_u32(fd, MPA_PERMISSIVE, "MPA_PERMISSIVE", 1)) ||
	    (o->timeout_ms && set_u32(fd, MPA_TIMEOUT, "MPA_TIMEOUT",
				      o->timeout_ms)))
		return -1;
	if (o->enhanced) {
		struct mpa_enhanced enh;
		socklen_t len = sizeof(enh);

		/* Start from the module's defaults; change what was given. */
		if (getsockopt(fd, SOL_MPA, MPA_ENHANCED, &enh, &len)) {
			note("getsockopt(MPA_ENHANCED): %s", strerror(errno));
			return -1;
		}
		if (o->ird >= 0)
			enh.ird = o->ird;
		if (o->ord >= 0)
			enh.ord = o->ord;
		if (o->rtr >= 0)
			enh.rtr = o->rtr;
		if (o->p2p)
			enh.flags |= MPA_ENH_PEER_TO_PEER;
		if (setsockopt(fd, SOL_MPA, MPA_ENHANCED, &enh, sizeof(enh))) {
			note("setsockopt(MPA_ENHANCED): %s", strerror(errno));
			return -1;
		}
	}
	if (o->role == MPA_ROLE_INITIATOR && o->pd &&
	    setsockopt(fd, SOL_MPA, MPA_PRIVATE_DATA, o->pd, pd_len)) {
		note("setsockopt(MPA_PRIVATE_DATA, %zu octets): %s", pd_len,
		     strerror(errno));
		return -1;
	}

	if (o->verbose)
		note("MPA_START as the %s", role);
	if (setsockopt(fd, SOL_MPA, MPA_START, NULL, 0)) {
		int err = errno;

		/* A reject's Reply and Private Data are there to see. */
		print_peer_frame(fd, o->role);
		mpa_fail(fd, "MPA startup (MPA_START)", err);
		return -1;
	}
	print_peer_frame(fd, o->role);

	if (o->role == MPA_ROLE_RESPONDER) {
		int opt = o->reject ? MPA_REJECT : MPA_ACCEPT;

		ret = setsockopt(fd, SOL_MPA, opt, o->pd, pd_len);
		if (ret) {
			mpa_fail(fd, o->reject ? "MPA_REJECT" : "MPA_ACCEPT",
				 errno);
			return -1;
		}
		if (o->reject) {
			note("rejected the Request (Reply with R=1)");
			return 1;
		}
	}
	print_result(fd);
	return 0;
}

/* CRC32c (Castagnoli), for the -v lines only. */
static uint32_t crc32c(const unsigned char *p, size_t len)
{
	static uint32_t table[256];
	uint32_t crc = ~0U;
	size_t i;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;
			int k;

			for (k = 0; k < 8; k++)
				c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
			table[i] = c;
		}
	}
	for (i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

static void hexdump(const unsigned char *p, size_t len)
{
	size_t i, j;

	for (i = 0; i < len; i += 16) {
		printf("%08zx ", i);
		for (j = i; j < i + 16; j++) {
			if (j < len)
				printf(" %02x", p[j]);
			else
				printf("   ");
			if (j == i + 7)
				putchar(' ');
		}
		printf("  |");
		for (j = i; j < i + 16 && j < len; j++)
			putchar(p[j] >= 0x20 && p[j] < 0x7f ? p[j] : '.');
		printf("|\n");
	}
}

static void deliver(const struct options *o, struct xfer *x)
{
	size_t i;

	x->rx_count++;
	x->rx_octets += x->rx_len;
	if (o->verbose)
		note("received ULPDU %lu: %zu octets, crc32c 0x%08x",
		     x->rx_count, x->rx_len, crc32c(x->rx, x->rx_len));
	switch (o->out) {
	case OUT_TEXT:
		fwrite(x->rx, 1, x->rx_len, stdout);
		putchar('\n');
		break;
	case OUT_HEX:
		printf("ULPDU %lu, %zu octets:\n", x->rx_count, x->rx_len);
		hexdump(x->rx, x->rx_len);
		break;
	case OUT_HEX_LINE:
		for (i = 0; i < x->rx_len; i++)
			printf("%02x", x->rx[i]);
		putchar('\n');
		break;
	case OUT_QUIET:
		break;
	}
	fflush(stdout);
	x->rx_len = 0;
}

/*
 * Read what the socket has, up to 64 calls (then sending gets its turn):
 * every recv() gives octets of one ULPDU at most, MSG_EOR marks its end.
 * Returns 0, or -1 on an error.
 */
static int receive(int fd, const struct options *o, struct xfer *x)
{
	int budget;

	for (budget = 64; budget; budget--) {
		struct iovec iov = {
			.iov_base = x->rx + x->rx_len,
			.iov_len = BUF_SIZE - x->rx_len,
		};
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			mpa_fail(fd, "recv", errno);
			return -1;
		}
		if (n == 0) {
			if (x->rx_len) {
				note("end of file inside a ULPDU (%zu octets without MSG_EOR)",
				     x->rx_len);
				return -1;
			}
			if (o->verbose)
				note("the peer closed its sending side");
			x->peer_eof = true;
			return 0;
		}
		x->rx_len += n;
		if (msg.msg_flags & MSG_EOR) {
			deliver(o, x);
		} else if (x->rx_len == BUF_SIZE) {
			note("%d octets without MSG_EOR: more than a ULPDU",
			     BUF_SIZE);
			return -1;
		}
	}
	return 0;
}

/* --random: letters and digits, so that text output stays readable. */
static void make_random(const struct options *o, struct xfer *x)
{
	static const char set[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t i;

	x->tx_len = 1 + (size_t)(random() % o->random_max);
	for (i = 0; i < x->tx_len; i++)
		x->tx[i] = set[random() % (sizeof(set) - 1)];
	x->tx_ready = true;
	x->tx_left--;
}

/* --file: the next ULPDU of --size, or of the current MULPDU. */
static int make_file_chunk(const struct options *o, struct xfer *x)
{
	size_t want = o->size, got = 0;
	struct mpa_result r;
	ssize_t n;

	if (!want) {
		if (get_result(x->fd, &r)) {
			note("getsockopt(MPA_RESULT): %s", strerror(errno));
			return -1;
		}
		want = r.mulpdu;
	}
	while (got < want) {
		n = read(x->in_fd, x->tx + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			note("read %s: %s", o->file, strerror(errno));
			return -1;
		}
		if (!n) {
			x->in_eof = true;
			break;
		}
		got += n;
	}
	if (got) {
		x->tx_len = got;
		x->tx_ready = true;
	}
	return 0;
}

static int hex_digit(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * --hex-in: decode a line of hex (two digits an octet, blanks between
 * octets ignored) into @out. Returns the octets, or -1 after saying why.
 */
static long hex_line(const unsigned char *p, size_t len, unsigned long line,
		     unsigned char *out)
{
	size_t i, n = 0;
	int hi, lo;

	for (i = 0; i < len; i++) {
		if (p[i] == ' ' || p[i] == '\t' || p[i] == '\r')
			continue;
		hi = hex_digit(p[i]);
		if (hi < 0) {
			note("--hex-in: line %lu, column %zu: '%c' is not a hex digit",
			     line, i + 1, p[i]);
			return -1;
		}
		if (i + 1 == len) {
			note("--hex-in: line %lu: an odd number of hex digits",
			     line);
			return -1;
		}
		lo = hex_digit(p[i + 1]);
		if (lo < 0) {
			note("--hex-in: line %lu, column %zu: '%c' is not a hex digit (2 an octet)",
			     line, i + 2, p[i + 1]);
			return -1;
		}
		if (n == MPA_MAX_ULPDU) {
			note("--hex-in: line %lu: more than %d octets, the largest ULPDU",
			     line, MPA_MAX_ULPDU);
			return -1;
		}
		out[n++] = hi << 4 | lo;
		i++;
	}
	return n;
}

/* Standard input: the next whole line, or the last one without '\n'. */
static int make_line(const struct options *o, struct xfer *x)
{
	unsigned char *nl;
	size_t len, used;
	long n;

	for (;;) {
		nl = memchr(x->inbuf, '\n', x->in_len);
		if (nl) {
			len = nl - x->inbuf;
			used = len + 1;
		} else if (x->in_eof && x->in_len) {
			len = x->in_len;
			used = len;
		} else if (x->in_len == IN_SIZE) {
			note("a line longer than %d octets, more than %s",
			     IN_SIZE, o->hex_in ? "the largest ULPDU in hex" :
			     "the largest ULPDU");
			return -1;
		} else {
			return 0;
		}
		x->in_line++;
		if (o->hex_in) {
			n = hex_line(x->inbuf, len, x->in_line, x->tx);
		} else if (len > MPA_MAX_ULPDU) {
			note("a line of %zu octets: more than %d, the largest ULPDU",
			     len, MPA_MAX_ULPDU);
			n = -1;
		} else {
			memcpy(x->tx, x->inbuf, len);
			n = len;
		}
		if (n < 0)
			return -1;
		if (n) {
			x->tx_len = n;
			x->tx_ready = true;
		}
		x->in_len -= used;
		memmove(x->inbuf, x->inbuf + used, x->in_len);
		if (x->tx_ready)
			return 0;
	}
}

/* Have the next ULPDU ready if there is one; note when all is sent. */
static int next_ulpdu(const struct options *o, struct xfer *x)
{
	if (x->tx_ready || x->src_done)
		return 0;
	switch (o->src) {
	case SRC_STDIN:
		if (make_line(o, x))
			return -1;
		if (!x->tx_ready && x->in_eof)
			x->src_done = true;
		break;
	case SRC_FILE:
		if (!x->in_eof && make_file_chunk(o, x))
			return -1;
		if (!x->tx_ready && x->in_eof)
			x->src_done = true;
		break;
	case SRC_RANDOM:
		if (x->tx_left)
			make_random(o, x);
		else
			x->src_done = true;
		break;
	case SRC_NONE:
		x->src_done = true;
		break;
	}
	return 0;
}

/* Whether our sends are still held (a Responder before the first FPDU). */
static bool tx_held(int fd)
{
	struct mpa_result r;

	return !get_result(fd, &r) && (r.flags & MPA_RESULT_TX_HELD);
}

/* A Responder's @n ULPDUs, held or refused, that can never go */
static void note_never_sent(unsigned long n)
{
	note("peer closed before its first FPDU: %lu ULPDUs never sent (R-7.1.2-15)",
	     n);
}

/* Send the ULPDU that is ready. Returns 0 (sent or EAGAIN), -1 on error. */
static int send_ulpdu(const struct options *o, struct xfer *x)
{
	ssize_t n;

	n = send(x->fd, x->tx, x->tx_len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		/* held for good: the peer's FIN came first (exchange_end()) */
		if (errno == EPIPE && tx_held(x->fd)) {
			note_never_sent(x->tx_count + 1);
			return -1;
		}
		mpa_fail(x->fd, "send", errno);
		return -1;
	}
	if ((size_t)n != x->tx_len) {
		note("send returned %zd of a %zu-octet ULPDU", n, x->tx_len);
		return -1;
	}
	x->tx_count++;
	x->tx_octets += n;
	if (o->verbose)
		note("sent ULPDU %lu: %zu octets, crc32c 0x%08x", x->tx_count,
		     x->tx_len, crc32c(x->tx, x->tx_len));
	x->tx_ready = false;
	return 0;
}

/* Read more of standard input. */
static int read_stdin(struct xfer *x)
{
	ssize_t n;

	n = read(x->in_fd, x->inbuf + x->in_len, IN_SIZE - x->in_len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		note("read standard input: %s", strerror(errno));
		return -1;
	}
	if (!n)
		x->in_eof = true;
	x->in_len += n;
	return 0;
}

/*
 * The peer closed and we are done. A Responder whose sends are still held
 * never sent them: the Initiator closed before its first FPDU (as a peer
 * that refused our Reply does), which is a failure, not a clean end. (A
 * send after that FIN fails with EPIPE: send_ulpdu() says the same.)
 */
static int exchange_end(int fd, const struct xfer *x)
{
	if (x->tx_count && tx_held(fd)) {
		note_never_sent(x->tx_count);
		return -1;
	}
	return 0;
}

static int exchange(int fd, const struct options *o, struct xfer *x)
{
	struct pollfd pfd[2];

	x->fd = fd;
	x->tx_left = o->count;
	for (;;) {
		if (next_ulpdu(o, x))
			return -1;
		if (x->src_done && o->no_shutdown) {
			/* --no-shutdown: the peer closes first */
			if (x->peer_eof)
				return exchange_end(fd, x);
		} else if (x->src_done && !x->wr_shut) {
			/*
			 * Closing the sending side drops a Responder's held
			 * sends: wait until they went out or the peer closed.
			 */
			if (x->peer_eof || !tx_held(fd)) {
				if (shutdown(fd, SHUT_WR)) {
					mpa_fail(fd, "shutdown", errno);
					return -1;
				}
				x->wr_shut = true;
			} else if (!x->held_note) {
				if (o->verbose)
					note("held sends: waiting for the Initiator's first FPDU");
				x->held_note = true;
			}
		}
		if (x->wr_shut && x->peer_eof)
			return exchange_end(fd, x);

		pfd[0].fd = fd;
		pfd[0].events = (x->peer_eof ? 0 : POLLIN) |
				(x->tx_ready ? POLLOUT : 0);
		if (!pfd[0].events)
			pfd[0].fd = -1;
		pfd[0].revents = 0;
		pfd[1].fd = -1;
		pfd[1].events = POLLIN;
		pfd[1].revents = 0;
		if (o->src == SRC_STDIN && !x->in_eof && !x->tx_ready &&
		    x->in_len < IN_SIZE)
			pfd[1].fd = x->in_fd;
		if (pfd[0].fd < 0 && pfd[1].fd < 0) {
			/* Only a Responder's held sends after the peer's EOF */
			note("nothing left to wait for");
			return -1;
		}
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			note("poll: %s", strerror(errno));
			return -1;
		}
		if (pfd[0].revents & (POLLIN | POLLERR | POLLHUP) &&
		    !x->peer_eof && receive(fd, o, x))
			return -1;
		if (pfd[0].revents & (POLLOUT | POLLERR | POLLHUP) &&
		    x->tx_ready && send_ulpdu(o, x))
			return -1;
		if (pfd[1].revents && read_stdin(x))
			return -1;
	}
}

static void print_summary(int fd, const struct xfer *x)
{
	struct mpa_stats s;
	socklen_t len = sizeof(s);

	if (getsockopt(fd, SOL_MPA, MPA_STATS, &s, &len)) {
		note("getsockopt(MPA_STATS): %s; mpacat's own count:",
		     strerror(errno));
		note("summary: sent %lu ULPDUs, %llu octets; received %lu ULPDUs, %llu octets",
		     x->tx_count, x->tx_octets, x->rx_count, x->rx_octets);
		return;
	}
	note("summary: sent %llu ULPDUs, %llu octets; received %llu ULPDUs, %llu octets",
	     (unsigned long long)s.tx_fpdus, (unsigned long long)s.tx_octets,
	     (unsigned long long)s.rx_fpdus, (unsigned long long)s.rx_octets);
	note("summary: Markers sent %llu, received %llu; CRC errors %llu, Marker errors %llu",
	     (unsigned long long)s.tx_markers, (unsigned long long)s.rx_markers,
	     (unsigned long long)s.crc_errors,
	     (unsigned long long)s.marker_errors);
	note("summary: startup frame octets sent %llu, received %llu",
	     (unsigned long long)s.startup_octets_tx,
	     (unsigned long long)s.startup_octets_rx);
}

int main(int argc, char **argv)
{
	struct options o;
	struct xfer x;
	int fd, ret;

	parse_args(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);

	memset(&x, 0, sizeof(x));
	x.in_fd = -1;
	x.inbuf = malloc(IN_SIZE);
	x.tx = malloc(BUF_SIZE);
	x.rx = malloc(BUF_SIZE);
	if (!x.inbuf || !x.tx || !x.rx) {
		note("out of memory");
		return 1;
	}
	if (o.src == SRC_STDIN) {
		x.in_fd = STDIN_FILENO;
	} else if (o.src == SRC_FILE) {
		x.in_fd = open(o.file, O_RDONLY);
		if (x.in_fd < 0) {
			note("%s: %s", o.file, strerror(errno));
			return 1;
		}
	} else if (o.src == SRC_RANDOM) {
		if (!o.seed_set)
			o.seed = (unsigned int)time(NULL) ^ (getpid() << 16);
		srandom(o.seed);
		note("--random %u --count %lu --seed %u", o.random_max,
		     o.count, o.seed);
	}

	fd = o.listen ? do_listen(&o) : do_connect(&o);
	if (fd < 0)
		return 1;
	print_connection(fd);

	ret = mpa_startup(fd, &o);
	if (ret) {
		close(fd);
		return ret > 0 ? 0 : 1;
	}

	ret = exchange(fd, &o, &x);
	print_summary(fd, &x);
	if (close(fd)) {
		note("close: %s", strerror(errno));
		ret = -1;
	}
	return ret ? 1 : 0;
}
