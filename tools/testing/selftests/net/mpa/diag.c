// SPDX-License-Identifier: GPL-2.0
/*
 * What the kernel's socket diagnostics show of an MPA socket (mpa.rst,
 * "ss"): inet_diag, which ss reads, names a TCP socket's ULP in
 * INET_DIAG_ULP_INFO / INET_ULP_INFO_NAME when the request asks for
 * INET_DIAG_INFO and the requester has CAP_NET_ADMIN (tcp_diag_get_aux()).
 *
 *   diag     through a raw NETLINK_SOCK_DIAG request (a dump, as ss makes,
 *            and the exact lookup of one socket), IPv4 and IPv6: an MPA
 *            socket is named "mpa" right after the attach (STREAMING),
 *            during the startup phase (both roles), in Full Operation and
 *            after a reject, and the nest holds the name only (the module
 *            adds no ULP attributes of its own); its plain TCP peer, and a
 *            plain TCP pair, have TCP's information but no ULP nest; a
 *            requester without CAP_NET_ADMIN (root with it dropped, or
 *            nobody) gets the same socket without the nest.
 *   ss       ss -tie itself: the MPA socket's entry (found by its ports,
 *            with its inode) ends in "tcp-ulp-mpa"; a plain TCP socket's
 *            does not; as nobody, ss lists the MPA socket without it.
 */
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/inet_diag.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

#define T_WAIT		10000
#define D_NOBODY	65534

/* What inet_diag said about one socket. */
struct d_result {
	int rc;			/* 0, or the -errno of the request */
	bool found;		/* the socket was in the answer */
	bool info;		/* INET_DIAG_INFO (TCP's tcp_info) came */
	bool ulp;		/* INET_DIAG_ULP_INFO came */
	int ulp_attrs;		/* attributes inside INET_DIAG_ULP_INFO */
	char name[32];		/* its INET_ULP_INFO_NAME */
	uint8_t state;		/* idiag_state (TCP_ESTABLISHED ...) */
};

/* How a request is made. */
enum { D_DUMP, D_EXACT };

/* How the requester is made unprivileged. */
enum { D_PRIV, D_NO_NET_ADMIN, D_USER_NOBODY };

/* Read what one inet_diag_msg says about a socket into @res. */
static void d_parse(const struct nlmsghdr *nh, struct d_result *res)
{
	const struct inet_diag_msg *m = NLMSG_DATA(nh);
	int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));
	struct rtattr *a = (struct rtattr *)((char *)m + NLMSG_ALIGN(sizeof(*m)));

	res->found = true;
	res->state = m->idiag_state;
	for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		int type = a->rta_type & NLA_TYPE_MASK;
		struct rtattr *u;
		int ulen;

		if (type == INET_DIAG_INFO) {
			res->info = true;
			continue;
		}
		if (type != INET_DIAG_ULP_INFO)
			continue;
		res->ulp = true;
		ulen = RTA_PAYLOAD(a);
		for (u = RTA_DATA(a); RTA_OK(u, ulen); u = RTA_NEXT(u, ulen)) {
			res->ulp_attrs++;
			if ((u->rta_type & NLA_TYPE_MASK) == INET_ULP_INFO_NAME)
				snprintf(res->name, sizeof(res->name), "%.*s",
					 (int)RTA_PAYLOAD(u),
					 (char *)RTA_DATA(u));
		}
	}
}

/* The socket's (local, remote) addresses as inet_diag's id holds them. */
static int d_sockid(int fd, struct inet_diag_sockid *id)
{
	struct sockaddr_storage l, r;
	socklen_t ll = sizeof(l), rl = sizeof(r);

	memset(id, 0, sizeof(*id));
	if (getsockname(fd, (struct sockaddr *)&l, &ll) ||
	    getpeername(fd, (struct sockaddr *)&r, &rl))
		return -1;
	if (l.ss_family == AF_INET) {
		struct sockaddr_in *a = (void *)&l, *b = (void *)&r;

		id->idiag_sport = a->sin_port;
		id->idiag_dport = b->sin_port;
		memcpy(id->idiag_src, &a->sin_addr, 4);
		memcpy(id->idiag_dst, &b->sin_addr, 4);
	} else {
		struct sockaddr_in6 *a = (void *)&l, *b = (void *)&r;

		id->idiag_sport = a->sin6_port;
		id->idiag_dport = b->sin6_port;
		memcpy(id->idiag_src, &a->sin6_addr, 16);
		memcpy(id->idiag_dst, &b->sin6_addr, 16);
	}
	id->idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	id->idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	return 0;
}

static unsigned long d_ino(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/*
 * Ask inet_diag about the TCP socket @fd of @family, asking for
 * INET_DIAG_INFO (which brings the ULP's name to a CAP_NET_ADMIN
 * requester), on a NETLINK_SOCK_DIAG socket opened here: in a dump of
 * every TCP socket of the family (found by its inode), or by an exact
 * lookup of its addresses.
 */
static void d_query(int fd, int family, int how, struct d_result *res)
{
	struct {
		struct nlmsghdr nh;
		struct inet_diag_req_v2 r;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST |
				       (how == D_DUMP ? NLM_F_DUMP : 0),
			.nlmsg_seq = 7,
		},
		.r = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = 1 << (INET_DIAG_INFO - 1),
			.idiag_states = ~0u,
		},
	};
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 5 };
	static char buf[65536];
	unsigned long ino = d_ino(fd);
	struct nlmsghdr *nh;
	bool done = false;
	int nl = -1;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	res->rc = -EINVAL;
	if (!ino || (how == D_EXACT && d_sockid(fd, &req.r.id)))
		return;
	nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0 ||
	    setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(nl, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(nl, &req, sizeof(req), 0) != sizeof(req))
		goto fail;
	while (!done) {
		n = recv(nl, buf, sizeof(buf), 0);
		if (n <= 0)
			goto fail;
		for (nh = (void *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_seq != req.nh.nlmsg_seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (nh->nlmsg_type == NLMSG_ERROR) {
				res->rc = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				close(nl);
				return;
			}
			if (nh->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
			    nh->nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
				continue;
			if (((struct inet_diag_msg *)NLMSG_DATA(nh))->idiag_inode != ino)
				continue;
			d_parse(nh, res);
			/* an exact lookup answers with one message, no DONE */
			if (how == D_EXACT)
				done = true;
		}
	}
	res->rc = 0;
	close(nl);
	return;
fail:
	res->rc = -errno ?: -EIO;
	if (nl >= 0)
		close(nl);
}

/* Drop privileges in a child: 0, or -1 (errno set). */
static int d_drop(int how)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	switch (how) {
	case D_NO_NET_ADMIN:
		/* root still, every capability but CAP_NET_ADMIN */
		if (syscall(SYS_capget, &h, d))
			return -1;
		d[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &=
			~CAP_TO_MASK(CAP_NET_ADMIN);
		d[CAP_TO_INDEX(CAP_NET_ADMIN)].permitted &=
			~CAP_TO_MASK(CAP_NET_ADMIN);
		d[CAP_TO_INDEX(CAP_NET_ADMIN)].inheritable &=
			~CAP_TO_MASK(CAP_NET_ADMIN);
		if (syscall(SYS_capset, &h, d) || syscall(SYS_capget, &h, d))
			return -1;
		/* dropped, and only it */
		if (d[CAP_TO_INDEX(CAP_NET_ADMIN)].effective &
		    CAP_TO_MASK(CAP_NET_ADMIN) ||
		    !(d[CAP_TO_INDEX(CAP_NET_RAW)].effective &
		      CAP_TO_MASK(CAP_NET_RAW)) || getuid() != 0) {
			errno = EPERM;
			return -1;
		}
		return 0;
	case D_USER_NOBODY:
		/* leaving uid 0 clears every capability */
		if (setgroups(0, NULL) ||
		    setresgid(D_NOBODY, D_NOBODY, D_NOBODY) ||
		    setresuid(D_NOBODY, D_NOBODY, D_NOBODY))
			return -1;
		if (syscall(SYS_capget, &h, d))
			return -1;
		if (d[0].effective || d[1].effective) {
			errno = EPERM;
			return -1;
		}
		return 0;
	}
	return 0;
}

/*
 * Wait for @pid with a deadline (its pidfd becomes readable when it
 * exits): its exit status, or -1.
 */
static int d_waitpid(pid_t pid, int ms)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0), st = -1;

	if (pfd < 0 || !(t_poll(pfd, POLLIN, ms) & POLLIN)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	} else if (waitpid(pid, &st, 0) == pid) {
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	}
	if (pfd >= 0)
		close(pfd);
	return st;
}

/*
 * d_query() from a child that dropped privileges @how first (D_PRIV: the
 * test's own). The child's own failure comes back in @res->rc.
 */
static void d_query_as(int fd, int family, int how, int drop,
		       struct d_result *res)
{
	int p[2];
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->rc = -EIO;
	if (drop == D_PRIV) {
		d_query(fd, family, how, res);
		return;
	}
	if (pipe(p))
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (!pid) {
		struct d_result r = { .rc = -EPERM };

		close(p[0]);
		if (!d_drop(drop))
			d_query(fd, family, how, &r);
		else
			r.rc = -errno;
		_exit(write(p[1], &r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	if (t_poll(p[0], POLLIN, T_WAIT) & POLLIN &&
	    read(p[0], res, sizeof(*res)) != sizeof(*res))
		res->rc = -EIO;
	close(p[0]);
	if (d_waitpid(pid, T_WAIT))
		res->rc = -ECHILD;
}

/*
 * @fd as @who sees it: listed, with TCP's information, and with the ULP
 * name "mpa" alone (@mpa) or without any ULP nest.
 */
static void d_expect(struct __test_metadata *_metadata, int fd, int family,
		     int how, int who, bool mpa)
{
	struct d_result r;

	d_query_as(fd, family, how, who, &r);
	ASSERT_EQ(0, r.rc) TH_LOG("inet_diag: %s", strerror(-r.rc));
	EXPECT_TRUE(r.found);
	EXPECT_TRUE(r.info);
	EXPECT_EQ(TCP_ESTABLISHED, r.state);
	if (mpa) {
		EXPECT_TRUE(r.ulp);
		EXPECT_STREQ("mpa", r.name);
		/* no ULP attributes of our own */
		EXPECT_EQ(1, r.ulp_attrs);
	} else {
		EXPECT_FALSE(r.ulp) TH_LOG("ULP \"%s\"", r.name);
	}
}

#define EXPECT_DIAG(fd, family, how, who, mpa) \
	d_expect(_metadata, fd, family, how, who, mpa)

/* Both ways of asking about @fd, a dump and an exact lookup, as root. */
static void d_expect_all(struct __test_metadata *_metadata, int fd,
			 int family, bool mpa)
{
	d_expect(_metadata, fd, family, D_DUMP, D_PRIV, mpa);
	d_expect(_metadata, fd, family, D_EXACT, D_PRIV, mpa);
}

#define EXPECT_DIAG_ALL(fd, family, mpa) \
	d_expect_all(_metadata, fd, family, mpa)

FIXTURE(diag)
{
	int a, b;	/* a TCP pair: a the client, b the server */
};

FIXTURE_VARIANT(diag)
{
	int family;
};

FIXTURE_VARIANT_ADD(diag, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(diag, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(diag)
{
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->a, &self->b));
}

FIXTURE_TEARDOWN(diag)
{
	if (self->a >= 0)
		mpa_close_abort(self->a);
	if (self->b >= 0)
		mpa_close_abort(self->b);
}

/* A plain TCP pair: TCP's information, no ULP. */
TEST_F(diag, plain_tcp)
{
	EXPECT_DIAG_ALL(self->a, variant->family, false);
	EXPECT_DIAG_ALL(self->b, variant->family, false);
}

/* Right after the attach, before any startup: named; its peer is not. */
TEST_F(diag, streaming)
{
	ASSERT_EQ(0, mpa_attach(self->a));
	EXPECT_MPA_STATE(self->a, MPA_STATE_STREAMING);
	EXPECT_DIAG_ALL(self->a, variant->family, true);
	EXPECT_DIAG_ALL(self->b, variant->family, false);
}

/* During the startup phase, Initiator and Responder. */
TEST_F(diag, startup)
{
	ASSERT_EQ(0, mpa_config(self->a, MPA_ROLE_INITIATOR, 0));
	ASSERT_EQ(0, mpa_config(self->b, MPA_ROLE_RESPONDER, 0));
	ASSERT_EQ(0, t_nonblock(self->b));
	/* the Responder waits for a Request that has not come */
	ASSERT_EQ(-1, mpa_start(self->b));
	ASSERT_EQ(EINPROGRESS, errno);
	EXPECT_MPA_STATE(self->b, MPA_STATE_AWAIT_REQUEST);
	EXPECT_DIAG_ALL(self->b, variant->family, true);
	/* the Initiator's Request makes it judge, the Initiator waits */
	ASSERT_EQ(0, t_nonblock(self->a));
	ASSERT_EQ(-1, mpa_start(self->a));
	ASSERT_EQ(EINPROGRESS, errno);
	ASSERT_EQ(POLLIN, t_poll(self->b, POLLIN, T_WAIT) & POLLIN);
	EXPECT_MPA_STATE(self->a, MPA_STATE_AWAIT_REPLY);
	EXPECT_MPA_STATE(self->b, MPA_STATE_REQUEST_RECEIVED);
	EXPECT_DIAG_ALL(self->a, variant->family, true);
	EXPECT_DIAG_ALL(self->b, variant->family, true);
}

/* Full Operation, and after ULPDUs went each way. */
TEST_F(diag, full)
{
	char buf[16];

	mpa_close_abort(self->a);
	mpa_close_abort(self->b);
	ASSERT_EQ(0, t_mpa_pair(variant->family, 0, true, false, true,
				&self->a, &self->b));
	EXPECT_DIAG_ALL(self->a, variant->family, true);
	EXPECT_DIAG_ALL(self->b, variant->family, true);
	ASSERT_EQ(5, send(self->a, "hello", 5, MSG_NOSIGNAL));
	ASSERT_EQ(5, recv(self->b, buf, sizeof(buf), 0));
	ASSERT_EQ(3, send(self->b, "hi!", 3, MSG_NOSIGNAL));
	ASSERT_EQ(3, recv(self->a, buf, sizeof(buf), 0));
	EXPECT_DIAG_ALL(self->a, variant->family, true);
	EXPECT_DIAG_ALL(self->b, variant->family, true);
}

/* After a reject the stream is plain again, the ULP still attached. */
TEST_F(diag, rejected)
{
	ASSERT_EQ(0, mpa_config(self->a, MPA_ROLE_INITIATOR, T_WAIT));
	ASSERT_EQ(0, mpa_config(self->b, MPA_ROLE_RESPONDER, T_WAIT));
	ASSERT_EQ(0, t_nonblock(self->a));
	ASSERT_EQ(-1, mpa_start(self->a));
	ASSERT_EQ(EINPROGRESS, errno);
	ASSERT_START(self->b);
	ASSERT_EQ(0, mpa_answer(self->b, MPA_REJECT, "no", 2));
	ASSERT_LE(0, t_wait_startup(self->a, T_WAIT));
	EXPECT_MPA_STATE(self->a, MPA_STATE_REJECTED);
	EXPECT_MPA_STATE(self->b, MPA_STATE_REJECTED);
	EXPECT_DIAG_ALL(self->a, variant->family, true);
	EXPECT_DIAG_ALL(self->b, variant->family, true);
}

/* Without CAP_NET_ADMIN the socket is listed, its ULP is not named. */
TEST_F(diag, unprivileged)
{
	ASSERT_EQ(0, mpa_attach(self->a));
	/* as root, the same request names it */
	EXPECT_DIAG(self->a, variant->family, D_DUMP, D_PRIV, true);
	EXPECT_DIAG(self->a, variant->family, D_DUMP, D_NO_NET_ADMIN, false);
	EXPECT_DIAG(self->a, variant->family, D_EXACT, D_NO_NET_ADMIN, false);
	EXPECT_DIAG(self->a, variant->family, D_DUMP, D_USER_NOBODY, false);
	EXPECT_DIAG(self->a, variant->family, D_EXACT, D_USER_NOBODY, false);
}

/*
 * Run "ss -Htine" for the connection @fd is (its ports), as root or as
 * nobody: its output (at most @size - 1 octets) in @out, or -1.
 */
static int d_ss(int fd, bool nobody, char *out, size_t size)
{
	struct inet_diag_sockid id;
	char sport[16], dport[16];
	size_t got = 0;
	int p[2], st;
	ssize_t n;
	pid_t pid;

	if (d_sockid(fd, &id) || pipe(p))
		return -1;
	snprintf(sport, sizeof(sport), ":%u", ntohs(id.idiag_sport));
	snprintf(dport, sizeof(dport), ":%u", ntohs(id.idiag_dport));
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(p[0]);
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		if (nobody && d_drop(D_USER_NOBODY))
			_exit(126);
		execlp("ss", "ss", "-Htine", "sport", "=", sport, "and",
		       "dport", "=", dport, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while (got < size - 1 && t_poll(p[0], POLLIN, T_WAIT) & (POLLIN | POLLHUP)) {
		n = read(p[0], out + got, size - 1 - got);
		if (n <= 0)
			break;
		got += n;
	}
	out[got] = 0;
	close(p[0]);
	st = d_waitpid(pid, T_WAIT);
	return st ? -1 : (int)got;
}

/* Log ss's output, line by line. */
static void d_log(const char *what, const char *out)
{
	const char *p = out, *nl;

	while (*p) {
		nl = strchrnul(p, '\n');
		fprintf(stderr, "# %s: %.*s\n", what, (int)(nl - p), p);
		p = *nl ? nl + 1 : nl;
	}
}

/* One socket in ss's output, with its inode; "tcp-ulp-mpa" or not. */
static void d_expect_ss(struct __test_metadata *_metadata, int fd,
			bool nobody, bool mpa)
{
	char out[4096], ino[32];
	int n = d_ss(fd, nobody, out, sizeof(out));

	ASSERT_LT(0, n) TH_LOG("ss failed: %s", out);
	d_log(nobody ? "ss (nobody)" : "ss", out);
	snprintf(ino, sizeof(ino), " ino:%lu ", d_ino(fd));
	EXPECT_NE(NULL, strstr(out, ino)) TH_LOG("no%s", ino);
	EXPECT_NE(NULL, strstr(out, "ESTAB"));
	EXPECT_EQ(mpa, !!strstr(out, " tcp-ulp-mpa"));
	/* and no other ULP either */
	if (!mpa)
		EXPECT_EQ(NULL, strstr(out, "tcp-ulp"));
}

/* ss -tie as root: the MPA socket ends in tcp-ulp-mpa, its peer not. */
TEST_F(diag, ss)
{
	mpa_close_abort(self->a);
	mpa_close_abort(self->b);
	ASSERT_EQ(0, t_mpa_pair(variant->family, 0, true, true, true,
				&self->a, &self->b));
	d_expect_ss(_metadata, self->a, false, true);
	d_expect_ss(_metadata, self->b, false, true);
}

TEST_F(diag, ss_plain_tcp)
{
	ASSERT_EQ(0, mpa_attach(self->a));
	d_expect_ss(_metadata, self->a, false, true);
	d_expect_ss(_metadata, self->b, false, false);
}

/* An ordinary user's ss lists the MPA socket without its ULP. */
TEST_F(diag, ss_nobody)
{
	ASSERT_EQ(0, mpa_attach(self->a));
	d_expect_ss(_metadata, self->a, true, false);
}

TEST_HARNESS_MAIN
