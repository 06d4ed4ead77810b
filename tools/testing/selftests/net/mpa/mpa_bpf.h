/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bpf(2) directly (no libbpf): the sockmap and sockhash the exclusive and
 * blocked selftests put sockets in.
 */
#ifndef MPA_BPF_H
#define MPA_BPF_H

#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

static inline int t_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static inline int map_create(int type)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_type = type;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = 4;
	return t_bpf(BPF_MAP_CREATE, &a);
}

static inline int map_update(int map, __u32 key, __u32 fd)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (__u64)(unsigned long)&key;
	a.value = (__u64)(unsigned long)&fd;
	a.flags = BPF_ANY;
	return t_bpf(BPF_MAP_UPDATE_ELEM, &a);
}

#endif /* MPA_BPF_H */
