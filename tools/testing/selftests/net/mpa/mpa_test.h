/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the mpa selftests. */
#ifndef _MPA_TEST_H
#define _MPA_TEST_H

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/mpa.h>

#ifndef TCP_ULP
#define TCP_ULP 31
#endif

static inline int mpa_attach(int fd)
{
	return setsockopt(fd, SOL_TCP, TCP_ULP, MPA_ULP_NAME,
			  sizeof(MPA_ULP_NAME));
}

/* A listening socket on the loopback address of @family, any free port. */
static inline int mpa_listener(int family, struct sockaddr_storage *addr,
			       socklen_t *len)
{
	int one = 1;
	int fd;

	memset(addr, 0, sizeof(*addr));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)addr;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		*len = sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)addr;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = in6addr_loopback;
		*len = sizeof(*sin6);
	}
	fd = socket(family, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)addr, *len) ||
	    listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)addr, len)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A connected pair over loopback: *client and *server, or -1. */
static inline int mpa_tcp_pair(int family, int *client, int *server)
{
	struct sockaddr_storage addr;
	socklen_t len;
	int lfd;

	*client = *server = -1;
	lfd = mpa_listener(family, &addr, &len);
	if (lfd < 0)
		return -1;
	*client = socket(family, SOCK_STREAM, 0);
	if (*client < 0 || connect(*client, (struct sockaddr *)&addr, len))
		goto fail;
	*server = accept(lfd, NULL, NULL);
	if (*server < 0)
		goto fail;
	close(lfd);
	return 0;
fail:
	if (*client >= 0)
		close(*client);
	*client = -1;
	close(lfd);
	return -1;
}

/* Close with SO_LINGER 0: the socket is gone when close() returns. */
static inline void mpa_close_abort(int fd)
{
	struct linger l = { .l_onoff = 1, .l_linger = 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

#endif /* _MPA_TEST_H */
