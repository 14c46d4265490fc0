/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The host's facts (host.c): memory, THP, the kernel, where the memory
 * controller is mounted. Read under a root directory prefixed to every
 * absolute path ("" for the live system), so unit tests run on trees
 * captured from real machines (tests/fixtures/).
 */
#ifndef MEMPROBE_HOST_H
#define MEMPROBE_HOST_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

enum mp_cg_mode {
	MP_CG_NONE,   /* no memory controller mounted */
	MP_CG_V1,     /* v1 hierarchies only */
	MP_CG_V2,     /* unified hierarchy only */
	MP_CG_HYBRID, /* v1 hierarchies and a cgroup2 mount side by side */
};

/* Host-wide facts (/proc/meminfo, sysfs). */
struct mp_host {
	uint64_t mem_total_bytes;
	uint64_t mem_available_bytes;
	long page_size;
	char thp_enabled[32];     /* the bracketed mode, e.g. "madvise"; "" if absent */
	char thp_defrag[32];
	char kernel_release[128];
	bool btf_present;         /* /sys/kernel/btf/vmlinux exists */
	enum mp_cg_mode cg_mode;
	char v1_memory_mount[PATH_MAX]; /* "" when the v1 memory controller is not mounted */
	char v1_memory_root[PATH_MAX];  /* the hierarchy path mounted there (mountinfo field 4) */
	char v2_mount[PATH_MAX];        /* "" when cgroup2 is not mounted */
	char v2_root[PATH_MAX];
	bool v2_has_memory;       /* "memory" in the cgroup2 root's cgroup.controllers */
	/* for the documents' header */
	char hostname[256];
	char distribution[256];   /* os-release PRETTY_NAME; "" if none */
	int cpus;                 /* online CPUs; 0 if unknown */
	char lru_gen[32];         /* /sys/kernel/mm/lru_gen/enabled; "" if absent */
	bool have_lru_gen;
};

/* Read host facts under root. Returns 0 or -errno (only /proc/meminfo is required). */
int mp_host_read(const char *root, struct mp_host *host);

/* "v1", "v2", "hybrid" or "none". */
const char *mp_cg_mode_name(enum mp_cg_mode mode);

#endif
