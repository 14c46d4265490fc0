/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-process memory figures from the counters the kernel keeps per mm and
 * per task, read at one moment for a set of processes: a cgroup's (and its
 * children's) or a process tree's. Where BPF cannot load, the attribution
 * session takes its per-process rows from here (attr_proc.c); a BPF task
 * iterator may fill the same rows (struct mp_proc_row says where each came
 * from), so nothing downstream depends on the source.
 *
 * What /proc gives is approximate as a share of a cgroup's charges: a page
 * mapped by several processes counts once in each (RSS, not the memcg's
 * single charge), a page charged here but mapped by nobody (page cache read
 * with read(2), a file's pages after its process exited) is in no row, and
 * slab, percpu and socket memory have no per-process figure at all.
 *
 * Every reader takes a root directory prefixed to the paths it opens (""
 * for the live system), so the parsers run on files captured from a real
 * machine (tests/fixtures/proc-*).
 */
#ifndef MEMPROBE_PROCSTAT_H
#define MEMPROBE_PROCSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a row's figures came from. */
enum mp_proc_source {
	MP_PROC_SRC_PROC = 1,       /* /proc/PID/status (+ smaps_rollup, stat, cmdline) */
};

#define MP_PROC_CMDLINE_LEN 128

/* One process's figures at one moment (or its last, once gone). */
struct mp_proc_row {
	uint32_t pid;               /* tgid, in the pid namespace memprobe sees */
	uint32_t ppid;
	uint64_t start_ticks;       /* /proc/PID/stat starttime: a pid reused is another
				     * process; 0 when not read */
	char comm[16];
	char cmdline[MP_PROC_CMDLINE_LEN]; /* argv joined by spaces, cut short; "" for none */
	uint64_t rss_anon_bytes;    /* RssAnon */
	uint64_t rss_file_bytes;    /* RssFile */
	uint64_t rss_shmem_bytes;   /* RssShmem */
	uint64_t pte_bytes;         /* VmPTE: its page tables */
	uint64_t lck_bytes;         /* VmLck: mlocked */
	uint64_t pin_bytes;         /* VmPin: pinned (pin_user_pages) */
	uint64_t anon_huge_bytes;   /* smaps_rollup AnonHugePages */
	bool have_anon_huge;        /* smaps_rollup was read (MP_PROC_ROLLUP, readable) */
	uint32_t threads;
	uint64_t kernel_stack_bytes; /* threads x the kernel's stack size */
	uint8_t source;             /* enum mp_proc_source */
	bool gone;                  /* no longer in the set: the figures are its last */
	bool exited;                /* gone, and /proc shows no such process any more */
	uint64_t at_ns;             /* CLOCK_MONOTONIC when read (last seen, once gone) */
};

/* What to read besides /proc/PID/status (which is always read). */
enum {
	MP_PROC_ROLLUP = 1 << 0,    /* smaps_rollup's AnonHugePages: walks the page
				     * tables, under the mm's lock; full snapshots only */
	MP_PROC_IDENT = 1 << 1,     /* stat's start time and cmdline */
};

/* The rows of a set of processes at one moment, by pid. */
struct mp_proc_set {
	struct mp_proc_row *rows;
	size_t n, cap;
};

/*
 * The kernel's stack size per thread (THREAD_SIZE), for kernel_stack_bytes:
 * memory.stat's kernel_stack over the cgroup's threads where that divides
 * into a power of two between 4 KiB and 64 KiB (v2), else this
 * architecture's default. source says which ("memory.stat kernel_stack /
 * threads", or the default's name).
 */
struct mp_stack_size {
	uint64_t bytes;
	const char *source;
};
void mp_proc_stack_size(bool have_kernel_stack, uint64_t kernel_stack_bytes,
			uint64_t threads, struct mp_stack_size *out);

/* Parsers of one file's text (NUL-terminated), for the readers and the
 * unit tests. status: -ENOENT when it has no Vm lines (a kernel thread, a
 * zombie). stat: -EINVAL when malformed. */
int mp_proc_parse_status(const char *text, struct mp_proc_row *r);
int mp_proc_parse_stat(const char *text, struct mp_proc_row *r);
void mp_proc_parse_rollup(const char *text, struct mp_proc_row *r);
/* argv as /proc/PID/cmdline holds it (n bytes, NUL-separated) into out,
 * joined by spaces. */
void mp_proc_parse_cmdline(const char *buf, size_t n, char *out, size_t len);

/*
 * Read process pid (flags: MP_PROC_*; stack_bytes: the stack size per
 * thread). Returns 0, -ENOENT when it is gone or has no mm (kernel thread,
 * zombie), or -errno.
 */
int mp_proc_read(const char *root, uint32_t pid, unsigned flags, uint64_t stack_bytes,
		 struct mp_proc_row *r);

/* Add a row to s, or -ENOMEM. */
int mp_proc_set_add(struct mp_proc_set *s, const struct mp_proc_row *r);
/* The row of pid, or NULL. */
const struct mp_proc_row *mp_proc_set_find(const struct mp_proc_set *s, uint32_t pid);
void mp_proc_set_free(struct mp_proc_set *s);

/*
 * Every process of the cgroup directory dir and of its children (their
 * cgroup.procs, in the pid namespace memprobe sees: a pid it cannot see
 * reads 0 and is left out), into s (emptied first). Returns 0 or -errno.
 */
int mp_proc_of_cgroup(const char *root, const char *dir, unsigned flags,
		      uint64_t stack_bytes, struct mp_proc_set *s);

/*
 * The processes pids[0..n) and every descendant of theirs (by /proc's
 * PPid, one pass over /proc): a command and what it started, for a
 * command run without a cgroup of its own. The tracker passes the members
 * it has seen as more roots, so an orphan reparented to init stays in.
 * Into s (emptied first). Returns 0 or -errno.
 */
int mp_proc_of_tree(const char *root, const uint32_t *pids, size_t n, unsigned flags,
		    uint64_t stack_bytes, struct mp_proc_set *s);

/*
 * The processes seen so far, each once (by pid and start time), with their
 * latest figures; one gone from the latest set keeps its last figures,
 * marked gone (and exited when /proc shows it no more).
 */
struct mp_proc_track {
	struct mp_proc_set seen;
};

/* Merge the set read now into t. Returns 0 or -ENOMEM. */
int mp_proc_track_merge(const char *root, struct mp_proc_track *t, const struct mp_proc_set *now);
void mp_proc_track_free(struct mp_proc_track *t);

#endif
