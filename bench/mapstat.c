// SPDX-License-Identifier: GPL-2.0
/*
 * mapstat: how full memprobe's maps are, read from outside while it runs
 * (bench/scale.sh).
 *
 *   mapstat MAP_ID...
 *
 * For every map given by id (memprobe's, from /proc/PID/fdinfo) prints
 * "NAME=ENTRIES/MAX_ENTRIES"; for the per-CPU slot map (cpu) it prints
 * the events lost so far instead, summed over CPUs, one "lost_WHY=N" each.
 * One line in all. The report's events_lost cover the start to the peak
 * only; this sees the whole run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "memprobe.h"

static const char *const lost_names[MP_NR_LOST] = {
	"task_map_full", "stack_map_full", "stack_stat_map_full", "live_page_map_full",
	"stack_walk_failed",
};

/* Entries in the map: its keys, walked (no map type keeps a count). */
static long count_keys(int fd, __u32 key_size)
{
	char *key = calloc(2, key_size ? key_size : 1), *next;
	long n = 0;
	int err;

	if (!key)
		return -1;
	next = key + key_size;
	for (err = bpf_map_get_next_key(fd, NULL, next); !err;
	     err = bpf_map_get_next_key(fd, key, next)) {
		memcpy(key, next, key_size);
		n++;
	}
	free(key);
	return n;
}

static int print_lost(int fd)
{
	int ncpu = libbpf_num_possible_cpus();
	struct mp_cpu *v;
	__u32 zero = 0;
	__u64 lost[MP_NR_LOST] = { 0 };

	if (ncpu <= 0 || !(v = calloc((size_t)ncpu, sizeof(*v))))
		return -1;
	/* a per-CPU value is round_up(value_size, 8) a CPU; struct mp_cpu
	 * holds only __u64s and pairs of __u32s, so it is that already */
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -1;
	}
	for (int c = 0; c < ncpu; c++)
		for (int l = 0; l < MP_NR_LOST; l++)
			lost[l] += v[c].totals.lost[l];
	for (int l = 0; l < MP_NR_LOST; l++)
		printf(" lost_%s=%llu", lost_names[l], (unsigned long long)lost[l]);
	free(v);
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		struct bpf_map_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_map_get_fd_by_id((__u32)strtoul(argv[i], NULL, 10));

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fprintf(stderr, "mapstat: map %s: %s\n", argv[i], strerror(errno));
			ret = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		if (!strcmp(info.name, "cpu") && info.value_size == sizeof(struct mp_cpu)) {
			if (print_lost(fd))
				ret = 1;
		} else if (info.type == BPF_MAP_TYPE_HASH || info.type == BPF_MAP_TYPE_PERCPU_HASH ||
			   info.type == BPF_MAP_TYPE_STACK_TRACE) {
			printf(" %s=%ld/%u", info.name, count_keys(fd, info.key_size),
			       info.max_entries);
		}
		close(fd);
	}
	printf("\n");
	return ret;
}
