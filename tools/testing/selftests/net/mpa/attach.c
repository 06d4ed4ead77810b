// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching the "mpa" TCP ULP: who may attach, what getsockopt() reads back,
 * and that the module is pinned exactly while MPA sockets exist.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

#include "kselftest_harness.h"
#include "mpa_test.h"

FIXTURE(attach)
{
	int client;
	int server;
};

FIXTURE_VARIANT(attach)
{
	int family;
};

FIXTURE_VARIANT_ADD(attach, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(attach, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(attach)
{
	ASSERT_EQ(0, mpa_tcp_pair(variant->family, &self->client, &self->server));
}

FIXTURE_TEARDOWN(attach)
{
	if (self->client >= 0)
		close(self->client);
	if (self->server >= 0)
		close(self->server);
}

static void ulp_name(struct __test_metadata *_metadata, int fd, char *name,
		     socklen_t size)
{
	socklen_t len = size;

	memset(name, 0, size);
	ASSERT_EQ(0, getsockopt(fd, SOL_TCP, TCP_ULP, name, &len));
}

TEST_F(attach, both_ends)
{
	char name[16];

	ulp_name(_metadata, self->client, name, sizeof(name));
	EXPECT_STREQ("", name);

	ASSERT_EQ(0, mpa_attach(self->client));
	ASSERT_EQ(0, mpa_attach(self->server));
	ulp_name(_metadata, self->client, name, sizeof(name));
	EXPECT_STREQ("mpa", name);
	ulp_name(_metadata, self->server, name, sizeof(name));
	EXPECT_STREQ("mpa", name);
}

TEST_F(attach, twice)
{
	char name[16];

	ASSERT_EQ(0, mpa_attach(self->client));
	EXPECT_EQ(-1, mpa_attach(self->client));
	EXPECT_EQ(EEXIST, errno);
	/* Another ULP cannot replace it either. */
	EXPECT_EQ(-1, setsockopt(self->client, SOL_TCP, TCP_ULP, "tls", 4));
	EXPECT_EQ(EEXIST, errno);
	ulp_name(_metadata, self->client, name, sizeof(name));
	EXPECT_STREQ("mpa", name);
}

TEST_F(attach, stream_still_works_before_startup)
{
	/*
	 * Until the startup phase runs, the ULP must not eat the socket's
	 * plain stream: this is what lets the consumer do a streaming
	 * exchange before MPA starts (R-7.1-4).
	 */
	char buf[8] = {};

	ASSERT_EQ(0, mpa_attach(self->client));
	ASSERT_EQ(0, mpa_attach(self->server));
	ASSERT_EQ(5, send(self->client, "hello", 5, 0));
	ASSERT_EQ(5, recv(self->server, buf, 5, MSG_WAITALL));
	EXPECT_EQ(0, memcmp(buf, "hello", 5));
}

FIXTURE(unconnected)
{
	int fd;
};

FIXTURE_VARIANT(unconnected)
{
	int family;
};

FIXTURE_VARIANT_ADD(unconnected, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(unconnected, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(unconnected)
{
	self->fd = socket(variant->family, SOCK_STREAM, 0);
	ASSERT_GE(self->fd, 0);
}

FIXTURE_TEARDOWN(unconnected)
{
	close(self->fd);
}

TEST_F(unconnected, fresh_socket)
{
	char name[16];

	EXPECT_EQ(-1, mpa_attach(self->fd));
	EXPECT_EQ(ENOTCONN, errno);
	ulp_name(_metadata, self->fd, name, sizeof(name));
	EXPECT_STREQ("", name);
}

TEST_F(unconnected, listener)
{
	struct sockaddr_storage addr;
	socklen_t len;
	char name[16];
	int lfd;

	lfd = mpa_listener(variant->family, &addr, &len);
	ASSERT_GE(lfd, 0);
	EXPECT_EQ(-1, mpa_attach(lfd));
	EXPECT_EQ(ENOTCONN, errno);
	ulp_name(_metadata, lfd, name, sizeof(name));
	EXPECT_STREQ("", name);
	close(lfd);
}

TEST(unknown_option_length)
{
	/* A name longer than TCP_ULP_NAME_MAX is not "mpa" with junk. */
	int client, server;

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &client, &server));
	EXPECT_EQ(-1, setsockopt(client, SOL_TCP, TCP_ULP, "mpaxxxxxxxxxxxxxxxxx", 20));
	EXPECT_EQ(ENOENT, errno);
	close(client);
	close(server);
}

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

/*
 * The module stays pinned while an MPA socket exists, and unloads once they
 * are closed; loaded again, it works. Needs root, and modprobe to find
 * mpa.ko (the test guests install it for the lane).
 */
TEST(module_unload)
{
	int client, server, refs, i;

	if (t_mpa_refcnt() < 0)
		ASSERT_EQ(0, system("modprobe mpa"));
	refs = t_mpa_refcnt();
	ASSERT_GE(refs, 0);

	ASSERT_EQ(0, mpa_tcp_pair(AF_INET6, &client, &server));
	ASSERT_EQ(0, mpa_attach(client));
	ASSERT_EQ(0, mpa_attach(server));
	EXPECT_EQ(refs + 2, t_mpa_refcnt());
	if (refs == 0) {
		EXPECT_EQ(-1, delete_module("mpa"));
		EXPECT_EQ(EWOULDBLOCK, errno);
	}

	/* An abortive close frees the socket at once ... */
	mpa_close_abort(client);
	EXPECT_EQ(refs + 1, t_mpa_refcnt());
	/* ... a graceful one when the FIN handshake is over. */
	close(server);
	for (i = 0; i < 250 && t_mpa_refcnt() != refs; i++)
		usleep(20000);
	EXPECT_EQ(refs, t_mpa_refcnt());

	if (refs != 0)
		SKIP(return, "other users hold mpa (refcnt %d): not unloading", refs);
	ASSERT_EQ(0, delete_module("mpa"));
	EXPECT_EQ(-1, t_mpa_refcnt());

	/* Loaded again (as TCP_ULP's autoload would), it attaches again. */
	ASSERT_EQ(0, system("modprobe mpa"));
	ASSERT_EQ(0, mpa_tcp_pair(AF_INET, &client, &server));
	EXPECT_EQ(0, mpa_attach(client));
	close(client);
	close(server);
}

TEST_HARNESS_MAIN
