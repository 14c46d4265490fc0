/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A memory cgroup: finding it (by process or path), its files (limits,
 * usage, peak, events, memory.stat), making, moving into and removing
 * memprobe's own, and reaping those a killed memprobe left; on cgroup v1,
 * v2 and hybrid hosts (the host's facts: host.h). Every reader takes a
 * root directory that is prefixed to every absolute path it opens ("" for
 * the live system), so unit tests run them on trees captured from real
 * machines (tests/fixtures/).
 */
#ifndef MEMPROBE_CGROUP_H
#define MEMPROBE_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include <linux/types.h>
#include "host.h" /* struct mp_host: where the hierarchies are mounted */
#include "memprobe.h" /* enum mp_cat */
#include "vocab.h" /* mp_cats: memory.stat's keys */

/* The v1 "unlimited" value on x86-64: PAGE_COUNTER_MAX pages in bytes,
 * rounded down to a page (mm/page_counter.c, include/linux/page_counter.h). */
#define MP_V1_UNLIMITED 9223372036854771712ULL

/* One memory cgroup and its limits. Byte values; MP_UNLIMITED for "max". */
struct mp_cgroup {
	int version;                /* 1 or 2: the hierarchy the memory controller is in */
	char path[PATH_MAX];        /* as /proc/PID/cgroup names it, e.g. "/job" or "/" */
	char dir[PATH_MAX];         /* its directory on this host, without the root prefix */
	char mount[PATH_MAX];       /* the hierarchy's mount point */
	uint64_t limit_bytes;       /* memory.max / memory.limit_in_bytes */
	uint64_t effective_limit_bytes; /* min over the path to the root and MemTotal */
	char effective_from[PATH_MAX + 32]; /* the directory that sets it, or "MemTotal" */
	bool limited;               /* a cgroup on the path limits it below MemTotal */
	bool has_high;
	uint64_t high_bytes;        /* v2 memory.high */
	bool has_swap_limit;
	uint64_t swap_limit_bytes;  /* v2 memory.swap.max; v1 memory.memsw.limit_in_bytes (memory+swap) */
	uint64_t usage_bytes;       /* memory.current / memory.usage_in_bytes */
	bool has_peak;
	uint64_t peak_bytes;        /* memory.peak / memory.max_usage_in_bytes */
	int level;                  /* depth below the hierarchy's root, as seen here */
	bool host_root;             /* the root of the host's hierarchy (mp_cgroup_is_host_root) */
	uint64_t headroom_bytes;    /* least room left on the path: min over limited
				     * levels of limit - usage (a sibling's usage counts
				     * against a shared ancestor), and MemAvailable */
	char headroom_from[PATH_MAX + 32]; /* the level that sets it, or "MemAvailable" */
	bool children_counted;      /* a child cgroup's memory is charged here too and
				     * can have its own limit: v1 use_hierarchy, v2
				     * memory in cgroup.subtree_control */
	/* The throttling point: v2 the lowest memory.high on the path to the
	 * root, v1 the lowest memory.soft_limit_in_bytes (a soft limit: it acts
	 * only under global memory pressure), when below the effective limit;
	 * 0 when there is none. */
	uint64_t throttle_bytes;
	char throttle_from[PATH_MAX]; /* the directory that sets it */
	char throttle_kind[16];       /* "memory.high", "soft_limit"; "" when none */
	bool has_reclaimable;
	uint64_t reclaimable_bytes;   /* memory.stat inactive_file + active_file (v1: total_*) */
	uint64_t soft_headroom_bytes; /* headroom_bytes + reclaimable_bytes */
	/* memory no process maps (memory.stat file − file_mapped, and of it
	 * shmem, at least shmem − file_mapped: pinned.h), when the kernel's
	 * files have the keys */
	bool has_unmapped;
	uint64_t file_mapped_bytes, file_unmapped_bytes, shmem_unmapped_bytes;
	/* transparent huge pages: anon_thp (v1 rss_huge), file_thp, shmem_thp */
	bool has_thp[3];
	uint64_t thp_bytes[3];
};

/* A cgroup on the path to the root that has a memory limit. */
struct mp_limit_level {
	char dir[PATH_MAX];
	uint64_t limit_bytes;
	uint64_t usage_bytes;
};

#define MP_MAX_LEVELS 16

/*
 * The levels from cg up to its hierarchy's root that have a finite limit,
 * cg first, at most max. Returns how many were found (0 when none).
 */
int mp_cgroup_limit_levels(const char *root, const struct mp_cgroup *cg,
			   struct mp_limit_level *out, int max);

/*
 * The directory of the cgroup whose id (kernfs id, mp_cgroup_id's) is id,
 * of cg's hierarchy: cg, one of its ancestors up to the mount, or one of
 * its descendants (8 levels down at most). Returns 0, or -ENOENT.
 */
int mp_cgroup_dir_of_id(const struct mp_cgroup *cg, uint64_t id, char *out, size_t len);

/* Has pid exited without being reaped (state Z or X in /proc/PID/stat)? */
bool mp_pid_is_zombie(const char *root, pid_t pid);

/*
 * Is cg the root of its memory hierarchy (the host's, not the root a cgroup
 * namespace shows)? Filling it fills the host.
 */
bool mp_cgroup_is_host_root(const char *root, const struct mp_cgroup *cg);

/*
 * No cgroup on cg's path has a memory limit (its effective limit is
 * MemTotal): filling it fills the host, as filling the root does.
 */
static inline bool mp_cgroup_fills_host(const struct mp_cgroup *cg)
{
	return cg->host_root || !cg->limited;
}

/*
 * Find the memory cgroup of a process: /proc/PID/cgroup's v1 line naming the
 * memory controller, else its "0::" line when cgroup2 has the memory
 * controller. pid 0 means "self". Fills path, dir, mount, version.
 * Returns 0, -ESRCH (no such process), -ENOENT (no memory cgroup), -EXDEV
 * (its cgroup lies outside what the mount shows: a bind-mounted subtree; path
 * holds the cgroup's path then) or -errno.
 */
int mp_cgroup_of_pid(const char *root, const struct mp_host *host, pid_t pid,
		     struct mp_cgroup *cg);

/*
 * Find a memory cgroup by PATH: a directory under a memory hierarchy's mount
 * ("/sys/fs/cgroup/memory/job") or a path inside the hierarchy ("/job").
 * Returns 0, -ENOENT when no such cgroup, -ENOTDIR, or -errno.
 */
int mp_cgroup_from_path(const char *root, const struct mp_host *host,
			const char *path, struct mp_cgroup *cg);

/*
 * Read limits, usage and peak for cg (located by one of the above), the
 * effective limit: the smallest limit from cg up to the hierarchy's root
 * (on v1 also memory.stat's hierarchical_memory_limit, which sees ancestors
 * hidden by a namespace) and MemTotal, and the headroom (see struct
 * mp_cgroup). Returns 0 or -errno when the usage file cannot be read.
 */
int mp_cgroup_read(const char *root, const struct mp_host *host, struct mp_cgroup *cg);

/* Name of a control file for this cgroup's version: "limit", "usage",
 * "peak", "stat", "procs". */
const char *mp_cgroup_file(const struct mp_cgroup *cg, const char *what);

/* The cgroup's OOM-kill counter (v1 memory.oom_control, v2 memory.events
 * "oom_kill"); 0 when it keeps none. */
uint64_t mp_cgroup_oom_kills(const struct mp_cgroup *cg);

/* How often a charge hit the cgroup's own limit (v1 memory.failcnt, v2
 * memory.events "max"); 0 when unreadable. */
uint64_t mp_cgroup_limit_hits(const struct mp_cgroup *cg);

/* What the cgroup's own files say of its memory, per memory.stat category. */
struct mp_cg_stat {
	bool have[MP_NR_CATS];   /* the kernel keeps this category for the cgroup */
	uint64_t bytes[MP_NR_CATS];
	bool have_pgfault;
	uint64_t pgfault;        /* page faults, memory.stat "pgfault" (v1: total_pgfault) */
	bool kernel_counter;     /* kernel is v1's memory.kmem.usage_in_bytes, a page
				  * counter read as it is: no flush lag */
	bool have_file_mapped;
	uint64_t file_mapped;    /* memory.stat "file_mapped" (v1: total_mapped_file) */
	bool have_hier_limit;
	uint64_t hier_limit_bytes; /* v1 hierarchical_memory_limit (ancestors included) */
};

/*
 * Read cg's memory.stat (hierarchical totals on v1: total_rss, total_cache,
 * total_shmem, total_pgfault; v1's kernel total from memory.kmem.usage_in_bytes,
 * its memory.stat having no kernel items). Returns 0 or -errno when
 * memory.stat cannot be opened.
 */
int mp_cgroup_stat(const char *root, const struct mp_cgroup *cg, struct mp_cg_stat *st);

/* What st's categories the usage is made of (anon + file + kernel + sock:
 * MP_PART_USAGE) add up to, those it has. */
uint64_t mp_cgroup_stat_usage(const struct mp_cg_stat *st);

/*
 * The effective limit now, as mp_cgroup_read finds it (the least limit from
 * cg up to its hierarchy's root, v1's hierarchical_memory_limit from st when
 * given, and MemTotal), reading the limit files alone: cheap enough for
 * every sample of a recording, whose limit may change during it. Returns 0,
 * or -errno when cg's own limit file cannot be read.
 */
int mp_cgroup_limit_now(const char *root, const struct mp_host *h, const struct mp_cgroup *cg,
			const struct mp_cg_stat *st, uint64_t *limit);

/* The cgroup's page cache the kernel can reclaim before an OOM kill:
 * memory.stat inactive_file + active_file (v1: total_inactive_file +
 * total_active_file). Returns 0 or -errno. */
int mp_cgroup_file_bytes(const char *root, const struct mp_cgroup *cg, uint64_t *bytes);

/* Call cb for every process of dir's cgroup and of the cgroups below it
 * (cgroup.procs, depth-first, 32 levels at most), until cb returns non-zero.
 * Returns 0, or what cb returned. A cgroup removed meanwhile is skipped. */
int mp_cgroup_walk_procs(const char *dir, int (*cb)(uint32_t pid, void *arg), void *arg);

/* The kernel's peak counter of the cgroup (memory.peak, v1's
 * memory.max_usage_in_bytes), where it keeps one (cg->has_peak; v2 before
 * 5.19 has none). Returns 0 with *v, or -errno. */
int mp_cgroup_peak(const struct mp_cgroup *cg, uint64_t *v);

/* Read the cgroup's current usage in bytes (the v2 root, which keeps no
 * memory.current: MemTotal - MemAvailable). Returns 0 or -errno. */
int mp_cgroup_usage(const char *root, const struct mp_cgroup *cg, uint64_t *usage);

/*
 * Create the child cgroup NAME under parent with a memory limit (MP_UNLIMITED
 * leaves it unset), filling child. On v2 it also sets memory.swap.max to 0 so
 * the limit is not stretched by swap. Returns 0, -EEXIST, -EOPNOTSUPP (v2:
 * the parent does not delegate the memory controller), or -errno.
 */
int mp_cgroup_create(const struct mp_host *host, const struct mp_cgroup *parent,
		     const char *name, uint64_t limit_bytes, struct mp_cgroup *child);

/* On v2, let cg's children have memory limits (+memory in its
 * cgroup.subtree_control). Only for a cgroup memprobe made. 0 or -errno. */
int mp_cgroup_delegate_memory(struct mp_cgroup *cg);

/* Move a process into cg. Returns 0 or -errno. */
int mp_cgroup_attach(const struct mp_cgroup *cg, pid_t pid);

/*
 * Remove a cgroup that memprobe created. Processes still in it are memprobe's
 * own (the probe, a recorded command): they are SIGKILLed, and removal is
 * retried for up to 3 s while they exit.
 * Returns 0 or -errno.
 */
int mp_cgroup_remove(const struct mp_cgroup *cg);

/*
 * Remove the memprobe-target-<pid>, memprobe-probe-<pid> and
 * memprobe-run-<pid> children of dir whose memprobe is gone (killed with
 * SIGKILL, say), with a line on stderr for each. When live_probe is not NULL
 * it is set to the pid of a memprobe still probing dir (from its child
 * cgroup's name, or a memprobe-probe process in dir itself), else 0.
 * Returns the number removed or -errno.
 */
int mp_cgroup_reap_stale(const char *dir, pid_t *live_probe);

/* mp_cgroup_reap_stale on memprobe's own memory cgroup, where --limit
 * targets and record's run cgroups are made. Returns how many it removed. */
int mp_cgroup_reap_own(const char *root, const struct mp_host *h);

/*
 * Can memprobe make a cgroup in cg (a stand-in, a run cgroup, its probe's)?
 * 0, or -EROFS where the cgroup filesystem is mounted read-only, -EACCES
 * where it is not memprobe's to write: a container's, as its runtime
 * mounts it. (-EPERM, from a cgroup namespace's rules, shows only in the
 * mkdir itself.)
 */
int mp_cgroup_writable(const struct mp_cgroup *cg);

/* Is the calling process in cg or below it (so that its own memory is
 * charged to what it measures)? */
bool mp_cgroup_contains_self(const char *root, const struct mp_host *h,
			     const struct mp_cgroup *cg);

/* The kernel's id for the cgroup (what cgroup->kn->id holds, the same as
 * bpf_get_current_cgroup_id() reports on v2). Returns 0 or -errno. */
int mp_cgroup_id(const struct mp_cgroup *cg, uint64_t *id);

#endif
