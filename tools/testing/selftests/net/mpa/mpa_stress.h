/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the stress selftests (churn, idle, alloc): what the module
 * and TCP hold, read from /proc and /sys, a network namespace of the
 * test's own, seeds, deadlines. Include after mpa_test.h.
 */
#ifndef _MPA_STRESS_H
#define _MPA_STRESS_H

#include <ctype.h>
#include <net/if.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* Run the rest of the test in a new network namespace with lo up. */
static inline int s_netns_new(void)
{
	struct ifreq ifr = {};
	int fd, ret;

	if (unshare(CLONE_NEWNET))
		return -1;
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	if (!ret) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ret = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return ret;
}

/* A whole small file into @buf (NUL-terminated): its length, or -1. */
static inline ssize_t s_read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, got = 0;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while ((size_t)got < size - 1) {
		n = read(fd, buf + got, size - 1 - got);
		if (n < 0) {
			got = -1;
			break;
		}
		if (!n)
			break;
		got += n;
	}
	close(fd);
	if (got >= 0)
		buf[got] = 0;
	return got;
}

static inline int s_write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* The number after "@key" (then blanks or a colon) in @text; -1 if none. */
static inline long long s_num_after(const char *text, const char *key)
{
	const char *p = text;
	size_t kl = strlen(key);

	while ((p = strstr(p, key))) {
		if ((p == text || p[-1] == '\n' || p[-1] == ' ') &&
		    (p[kl] == ' ' || p[kl] == ':' || p[kl] == '\t')) {
			p += kl;
			while (*p == ' ' || *p == ':' || *p == '\t')
				p++;
			return strtoll(p, NULL, 10);
		}
		p += kl;
	}
	return -1;
}

/* /proc/net/mpa_stat of the current namespace */
struct s_mpa_stat {
	long long curr[MPA_STATE_FAILED + 1];	/* MpaCurr<state> */
	long long curr_total;
	long long attached, established, rejected, startup_failed;
};

static inline int s_mpa_stat(struct s_mpa_stat *st)
{
	static const char *const names[] = {
		[MPA_STATE_STREAMING]		= "MpaCurrStreaming",
		[MPA_STATE_AWAIT_REQUEST]	= "MpaCurrAwaitRequest",
		[MPA_STATE_REQUEST_RECEIVED]	= "MpaCurrRequestReceived",
		[MPA_STATE_AWAIT_REPLY]		= "MpaCurrAwaitReply",
		[MPA_STATE_FULL]		= "MpaCurrFull",
		[MPA_STATE_REJECTED]		= "MpaCurrRejected",
		[MPA_STATE_FAILED]		= "MpaCurrFailed",
	};
	char buf[8192];
	unsigned int i;

	memset(st, 0, sizeof(*st));
	if (s_read_file("/proc/net/mpa_stat", buf, sizeof(buf)) <= 0)
		return -1;
	for (i = MPA_STATE_STREAMING; i <= MPA_STATE_FAILED; i++) {
		st->curr[i] = s_num_after(buf, names[i]);
		if (st->curr[i] < 0)
			return -1;
		st->curr_total += st->curr[i];
	}
	st->attached = s_num_after(buf, "MpaAttached");
	st->established = s_num_after(buf, "MpaEstablished");
	st->rejected = s_num_after(buf, "MpaRejected");
	st->startup_failed = s_num_after(buf, "MpaStartupFailed");
	return st->attached < 0 ? -1 : 0;
}

/*
 * TCP in this namespace (/proc/net/sockstat): sockets in use (full
 * sockets, listeners included: TIME_WAIT is counted apart and holds no
 * MPA object) and TIME_WAIT. Orphans are counted machine-wide.
 */
struct s_sockstat {
	long long inuse, orphan, tw, alloc;
};

static inline int s_sockstat(struct s_sockstat *ss)
{
	char buf[4096], *tcp;

	if (s_read_file("/proc/net/sockstat", buf, sizeof(buf)) <= 0)
		return -1;
	tcp = strstr(buf, "\nTCP:");
	if (!tcp)
		return -1;
	tcp++;
	ss->inuse = s_num_after(tcp, "inuse");
	ss->orphan = s_num_after(tcp, "orphan");
	ss->tw = s_num_after(tcp, "tw");
	ss->alloc = s_num_after(tcp, "alloc");
	return ss->inuse < 0 ? -1 : 0;
}

/*
 * A slab cache's objects in use, exactly: the per-CPU slabs are flushed
 * first (writing "shrink"), as SLUB counts their free objects as used.
 * @aliases: other caches merged into it (then the count is theirs too).
 * Return: the objects, or -1 without such a cache.
 */
static inline long long s_slab_objects(const char *cache, int *aliases)
{
	char path[256], buf[256];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	if (s_write_file(path, "1"))
		return -1;
	if (aliases) {
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/aliases",
			 cache);
		*aliases = s_read_file(path, buf, sizeof(buf)) > 0 ?
			   atoi(buf) : -1;
	}
	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/objects", cache);
	if (s_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* A number of a slab cache's sysfs folder (object_size, slab_size...). */
static inline long long s_slab_attr(const char *cache, const char *attr)
{
	char path[256], buf[256];

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/%s", cache, attr);
	if (s_read_file(path, buf, sizeof(buf)) <= 0)
		return -1;
	return strtoll(buf, NULL, 10);
}

/* A field of /proc/meminfo in KiB, or -1. */
static inline long long s_meminfo(const char *key)
{
	char buf[8192];

	if (s_read_file("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	return s_num_after(buf, key);
}

/*
 * The seed of a run: $@env if set, else from the clock. Printed by the
 * caller, so that a failing run can be repeated.
 */
static inline uint64_t s_seed(const char *env)
{
	const char *v = getenv(env);
	struct timespec ts;

	if (v && *v)
		return strtoull(v, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
}

static inline long s_env_long(const char *env, long def)
{
	const char *v = getenv(env);

	return v && *v ? strtol(v, NULL, 0) : def;
}

/* Raise RLIMIT_NOFILE to at least @n descriptors: 0 or -1. */
static inline int s_nofile(rlim_t n)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_cur >= n)
		return 0;
	rl.rlim_cur = n;
	if (rl.rlim_max < n)
		rl.rlim_max = n;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

/* A listener on 127.0.0.@host, port @port (0: any), backlog @backlog. */
static inline int s_listen4(int host, int port, int backlog,
			    struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int one = 1, fd;

	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(0x7f000000 | host);
	sin->sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)) ||
	    listen(fd, backlog) ||
	    getsockname(fd, (struct sockaddr *)sin, &len)) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif /* _MPA_STRESS_H */
