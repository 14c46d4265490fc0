/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BPF attribution session: choose hooks for this kernel, load and attach
 * the CO-RE programs of bpf/memprobe.bpf.c, and read their in-kernel
 * aggregates. Nothing crosses to user space per event; a snapshot reads the
 * maps once.
 */
#ifndef MEMPROBE_ATTR_H
#define MEMPROBE_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "cgroup.h"
#include "memprobe.h"
#include "procstat.h"
#include "vocab.h" /* enum mp_concern, mp_cat_names */

/* Names of enum mp_lost. */
extern const char *const mp_lost_names[MP_NR_LOST];

/* What a hook is chosen for: one ladder of hooks each. */
/* enum mp_concern, its ids and names: vocab.h */

/*
 * One concern (page faults, page allocation, ...) and the hook chosen for
 * it. The ids (concern, kind, target, missing_reason) are what documents,
 * tests and scripts match; name, hook and missing are for people.
 */
struct mp_hook {
	const char *concern; /* id: faults, alloc, free, migrate, comm, oom, memcg, charge */
	const char *name;    /* for people: "page faults", ... */
	const char *kind;    /* the rung used: tp_btf, raw_tp, fentry, kprobe, poll; NULL: none */
	char target[96];     /* its tracepoint ("group:name") or function, "a + b" for two;
			      * a polled rung: the file read; "" if none */
	char hook[96];       /* e.g. "tracepoint exceptions:page_fault_user"; "" if none */
	bool polled;         /* hook names a cgroup file read instead of a BPF program */
	bool counters;       /* the figures are the kernel's own counters, read at the
			      * snapshots; the program keeps what they cannot show
			      * (faults: exited threads' min_flt + maj_flt) */
	const char *missing_reason; /* NULL, or no_hook (no usable rung), polled (no BPF
				     * rung: a file stands in), attach_failed, not_needed
				     * (page free with --stack-sample 0: nothing lost) */
	char missing[320];   /* what is lost and why (no hook, polled, attach failed);
			      * "" if nothing */
};

/*
 * --memcg-from: the kernel's per-process counters read at the snapshots,
 * or a program per memcg stat update. Not given: the counters where the
 * target's memory.stat itemises slab, percpu and sock (cgroup v2), the
 * tracepoints on v1, whose memory.stat has none of them and whose split
 * of kmem only the programs give (a counter the kernel keeps is the
 * default only where it gives the same figure).
 */
enum mp_memcg_from {
	MP_MEMCG_FROM_AUTO = 0,
	MP_MEMCG_FROM_COUNTERS,
	MP_MEMCG_FROM_TRACEPOINT,
};

/* --stack-sample when not given: a stack for every kernel page */
#define MP_ATTR_STACK_SAMPLE_DEFAULT 1

struct mp_attr_opts {
	uint64_t target_cgid;        /* mp_cgroup_id() of the target; 0 matches nothing */
	uint32_t stack_sample_period; /* 1: a stack for every kernel page; 0: none */
	const char *btf_path;        /* --btf: BTF for CO-RE and the plan; NULL: the kernel's */
	const struct mp_cgroup *cg;  /* the target, read (copied) for the concerns that
				      * fall back to polling its files; NULL: none */
	bool judge_all_rungs;        /* probe every rung, not only down to the first usable */
	bool fault_tracepoint;       /* count faults per event (exceptions:page_fault_user)
				      * instead of reading the kernel's counters */
	enum mp_memcg_from memcg_from; /* where memory.stat's per-process split
					* comes from (--memcg-from) */
	int cg_version;              /* without cg (limits --features): the memory
				      * controller's version, 1 or 2, for AUTO's
				      * choice; 0: not known */
	uint32_t proc_tree_pid;      /* without BPF, the per-process rows of this process
				      * and its descendants instead of cg's processes
				      * (a command run where memprobe runs); 0: cg's */
};

/* Where a task row's figures came from. */
enum mp_row_source {
	MP_ROW_BPF = 0,      /* the BPF programs' per-task counts: the charges themselves */
	MP_ROW_PROC,         /* /proc's per-process counters (procstat.h), read at the
			      * snapshot: approximate (a page shared by several processes
			      * counts in each; no slab, percpu or sock) */
};

/*
 * Per process, summed over CPUs: the counters of struct mp_task_stat
 * (memprobe.h's MP_TASK_COUNTERS and charge_bytes), by name (.faults,
 * .charge_bytes[k]) or as one (.stat, for mp_task_stat_add and _sub).
 */
struct mp_task_row {
	uint32_t tgid;       /* the maps' key: the pid memprobe's pid namespace
			      * gives the process (MP_TGID_OUTSIDE: none) */
	uint32_t host_tgid;  /* its host pid where that differs; 0: the same */
	bool gone;           /* exited: its counts were drained from the maps (BPF), or
			      * /proc shows it no more (MP_ROW_PROC: its figures 0) */
	uint8_t source;      /* enum mp_row_source */
	char comm[16];
	union {
		struct mp_task_stat stat;
		struct {
			MP_TASK_STAT_MEMBERS
		};
	};
};

/* Per (kernel stack, process). */
struct mp_stack_row {
	uint32_t stackid;
	uint32_t tgid;
	int64_t pages;        /* net: allocated minus freed */
	uint64_t alloc_pages;
	uint64_t unaccounted_pages; /* allocated without __GFP_ACCOUNT */
};

/* The maps' contents at one moment, or the difference of two. */
struct mp_attr_snap {
	struct mp_task_row *tasks;
	size_t ntasks;
	size_t tasks_alloc;      /* rows allocated (grown as the map is read) */
	struct mp_stack_row *stacks;
	size_t nstacks;
	struct mp_totals totals;
	int64_t objcg_reserve_bytes; /* as of the snapshot, never differenced
				      * (mp_attr_objcg_reserve) */
	bool have_objcg_reserve;
	bool have_stat;          /* a concern is polled: stat holds the cgroup's files */
	bool stat_settled;       /* stat's categories added up to the usage read beside
				  * them (max(1%, 1 MiB)): the kernel had flushed them */
	struct mp_cg_stat stat;  /* (a difference: bytes and pgfault wrap as int64) */
	/* the per-process counters the rows were made of (MP_ROW_PROC), as
	 * they were at the snapshot: every process seen so far, the gone
	 * with their last figures; never differenced */
	struct mp_proc_row *procs;
	size_t nprocs;
	uint64_t stack_bytes;    /* the kernel stack size kernel_stack_bytes counts */
	const char *stack_source; /* how it was found (struct mp_stack_size) */
	bool have_usage;         /* usage_bytes was read */
	uint64_t usage_bytes;    /* the cgroup's usage read right after the maps: the
				  * vector's own moment (not differenced) */
	uint64_t usage_ns;       /* when, CLOCK_MONOTONIC */
};

struct mp_attr;

/*
 * The entries of live_pages (the kernel pages allocated with a stack and
 * not yet freed) for a target of limit_bytes: its kernel pages cannot
 * outgrow it. One entry per 512 of the limit's pages (0.2% of it, what
 * 4 KiB pages' page tables take), 16384 to 262144 (1.4 to 23 MiB of
 * preallocated map): 16384 held a swarm of 1000 processes (14 300 at its
 * plateau, bench/scale.sh), and the page tables alone of a 342 GiB fill
 * are ~175 000 pages (175 104 entries). A target without a limit is sized
 * from the host's memory (16384 for 23.5 GiB: the bench's map memory).
 */
#define MP_LIVE_PAGES_PER_ENTRY 512
#define MP_LIVE_PAGES_MIN 16384u
#define MP_LIVE_PAGES_MAX 262144u
uint32_t mp_attr_live_pages_for(uint64_t limit_bytes, uint64_t page_size);

/*
 * The entries of task_stats (and comms), a row per process: per CPU, so
 * sized to MP_TASK_ROWS_BYTES of per-CPU values, 1024 to 2048 rows (2048
 * on up to 7 CPUs, 1024 from 15; 590 KB on 2). 1024 was full with a
 * thousand processes alive and the exited ones of the last wave not yet
 * drained (384 flushes lost, 298 of 1169 MiB unattributed); the drain
 * keeps the rest free.
 */
#define MP_TASK_ROWS_BYTES (2u << 20)
#define MP_TASK_ROWS_MIN 1024u
#define MP_TASK_ROWS_MAX 2048u
uint32_t mp_attr_task_rows_for(int ncpus);

/*
 * Plan hooks for the running kernel, load and attach. A hook the kernel lacks
 * is recorded as missing, never fatal; when no program can run at all (no
 * BTF, BPF refused) the session polls the cgroup's files alone and err says
 * why (err is "" otherwise). Returns 0 and *out (owned by the caller, freed
 * by mp_attr_stop), or -ENOMEM.
 */
int mp_attr_start(const struct mp_attr_opts *opts, struct mp_attr **out,
		  char *err, size_t errlen);

/* The plan: MP_NR_CONCERNS entries (enum mp_concern), valid until mp_attr_stop. */
const struct mp_hook *mp_attr_hooks(const struct mp_attr *a);

/* Rung i of a concern's ladder, for `memprobe limits --features`. Strings
 * live as long as the session. */
struct mp_rung_info {
	const char *kind;    /* "tp_btf", "raw_tp", "fentry", "kprobe", "poll" */
	const char *label;   /* for people */
	char target[96];     /* as struct mp_hook's target */
	const char *why_not; /* why it cannot be used, "" when it can; NULL when
			      * never tried because a better rung was taken */
	bool used;           /* the one in use */
};

/* Fill *out with rung i of concern. Returns 0, or -ENOENT past the last rung. */
int mp_attr_rung(const struct mp_attr *a, int concern, int i, struct mp_rung_info *out);

/* Where the BTF used for CO-RE came from: a path. */
const char *mp_attr_btf_source(const struct mp_attr *a);

/* Is the target's fault total memory.stat's pgfault (the kernel's counters,
 * or polling), rather than the sum a per-fault hook keeps in the totals? */
bool mp_attr_faults_from_stat(const struct mp_attr *a);

/* Are anon pages unmapped and still charged counted (the task rows'
 * anon_unmapped_pages - anon_freed_pages): a memcg hook and the page free
 * hook both attached? */
bool mp_attr_anon_unmapped_counted(const struct mp_attr *a);

/* Does this kernel keep a per-memcg count for category cat (enum mp_cat)?
 * When not, *why names the missing stat item. */
bool mp_attr_cat_available(const struct mp_attr *a, int cat, const char **why);

/* Are category cat's updates counted from the kernel's own per-CPU byte
 * counter, the hook passing them rounded to pages (the 6.13+ memcg
 * tracepoints, for slab and percpu: memprobe.bpf.c, byte_exact)? The
 * snapshots' totals say how many were (exact_updates, rounded_updates). */
bool mp_attr_cat_bytes_read(const struct mp_attr *a, int cat);

/* Is category cat (enum mp_cat) read from the cgroup's memory.stat (in the
 * snapshots' stat) because no attached hook sees it? */
bool mp_attr_cat_polled(const struct mp_attr *a, int cat);

/* Do the task rows carry category cat from /proc (MP_ROW_PROC): the
 * cgroup's total from memory.stat, where it has the key, split by process
 * approximately? */
bool mp_attr_cat_rows(const struct mp_attr *a, int cat);

/* Why no BPF program runs: NULL (they do), "no_btf" (none to load them
 * with), "refused" (the kernel refused them: capabilities), "load_failed";
 * *why, if not NULL, the line for people (what is missing, what would
 * bring it, what memprobe does instead). */
const char *mp_attr_no_bpf(const struct mp_attr *a, const char **why);

/* Why category cat is polled: NULL (it is not), "polled" (the memcg concern
 * has no BPF hook), "clone" (5.10's __mod_memcg_state.part.0, which no hook
 * reaches), "rounded" (the memcg tracepoints round byte items to pages). */
const char *mp_attr_cat_polled_reason(const struct mp_attr *a, int cat);

/* Are copies on write looked for (attr_cow.c)? Waits for kallsyms to be
 * read; *period: the stacks' sample period, *fn: the function whose text
 * tells a copy ("do_wp_page", "wp_page_copy"), *why: why not, "" when they
 * are. Strings live as long as the session. */
bool mp_attr_cow(struct mp_attr *a, uint32_t *period, const char **fn, const char **why);

/* Wait for the attribution's own thread (the kallsyms read behind copies on
 * write): after it no thread of the attribution runs, and a fork is safe. */
void mp_attr_single_threaded(struct mp_attr *a);

/* Read every map into snap (allocated; free with mp_attr_snap_free).
 * Returns 0 or -errno. */
int mp_attr_snapshot(struct mp_attr *a, struct mp_attr_snap *snap);

/* A process counted before it named itself (the probe, forked from a
 * memprobe inside the target, is counted from its first fault): its row's
 * name from /proc/PID/comm now. */
void mp_attr_rename(struct mp_attr *a, uint32_t pid);
/* The same, for a moment the usage is moving (record's peaks): the cgroup's
 * files read once, never waited on to agree with the usage, which would
 * hold the caller (the recorder's sampler) for up to 2.5 s at every new
 * peak while the usage climbs, and read them at a later moment anyway. */
int mp_attr_snapshot_peak(struct mp_attr *a, struct mp_attr_snap *snap);
/* Are the task rows' categories /proc's counters (no BPF, or --memcg-from
 * counters)? */
bool mp_attr_rows_from_proc(const struct mp_attr *a);
/* What snapshot s accounts for of the usage: memory.stat's categories the
 * usage is made of (when s read them), or what its rows' charges add up to
 * with anon unmapped and still charged, whichever is more. */
int64_t mp_attr_snap_accounted(const struct mp_attr *a, const struct mp_attr_snap *s);

/* The same without the per-stack map, memory.stat read once (no waiting for
 * it to settle): cheap enough to take at every new peak of the usage. */
int mp_attr_snapshot_tasks(struct mp_attr *a, struct mp_attr_snap *snap);

/*
 * The vectors the overhead is explained from (overhead.c), tasks-only
 * snapshots: at the lowest usage of the probe's baseline window, at the
 * highest usage while it filled, and after it freed.
 */
struct mp_overhead_snaps {
	struct mp_attr_snap base, peak, left;
	bool have_base, have_peak, have_left;
	uint64_t base_usage_bytes, peak_usage_bytes, left_usage_bytes;
	int64_t peak_vector_sum;  /* what the peak vector's charges add up to */
	bool anon_unmapped;       /* the vectors count anon unmapped and still charged */
	long page_size;
};

/* Keep a vector taken now, at this usage: as the base when it is the first
 * or a lower one, as the peak when its charges add up to the most so far,
 * as the left-after one always. */
void mp_overhead_keep_base(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage);
void mp_overhead_keep_peak(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage);
/* The probe's stop: its vector is the peak's whenever the usage is still
 * at the peak (the cgroup at its limit while the kernel reclaims page
 * cache for the probe's last chunks), whatever it adds up to. */
void mp_overhead_keep_stop(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage);
void mp_overhead_keep_left(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage);
void mp_overhead_snaps_free(struct mp_overhead_snaps *o);

/* Read only the whole-target counters (cheap: one lookup). Returns 0 or -errno. */
int mp_attr_totals(struct mp_attr *a, struct mp_totals *t);

/* The bytes charged to the target's kernel memory that no object holds
 * (its obj_cgroups' nr_charged_bytes, as of their last byte-item update:
 * memprobe.bpf.c objcg_reserve). v1's kernel memory counts them; its slab
 * does not. Returns 0, or -ENOENT when no update has read one. */
int mp_attr_objcg_reserve(struct mp_attr *a, int64_t *bytes);

/* Wake mp_attr_poll_oom() once the target's usage passes bytes, as the
 * memcg hook sees it (0: never). Cleared by the wake; set it again. */
void mp_attr_wake_above(struct mp_attr *a, uint64_t bytes);

/*
 * Wait up to timeout_ms for OOM-kill events in the target and call cb for
 * each; this is also how a recording loop sleeps between samples. Returns
 * the number of events, or -errno. Without an OOM hook it just sleeps.
 */
int mp_attr_poll_oom(struct mp_attr *a, int timeout_ms,
		     void (*cb)(const struct mp_oom_event *e, void *arg), void *arg);

/* Does an OOM hook report the target's kills (false: a is NULL, or the
 * kills are only the cgroup's oom_kill counter's)? */
bool mp_attr_oom_hooked(const struct mp_attr *a);

/*
 * Move the rows of processes that have exited out of the maps, into the
 * session (attr_drain.c), so that a recording of processes that come and go
 * never fills them; snapshots add them back. Returns the rows moved, or
 * -errno. For a long recording's loop, every second or so.
 */
int mp_attr_drain(struct mp_attr *a);

/* Are the maps a quarter full, by the rows the programs made (in t, from
 * mp_attr_totals) less those drained: a drain due before the next second? */
bool mp_attr_drain_due(const struct mp_attr *a, const struct mp_totals *t);

/* after -= before, row by row (tasks by tgid, stacks by key). */
void mp_attr_snap_sub(struct mp_attr_snap *after, const struct mp_attr_snap *before);

void mp_attr_snap_free(struct mp_attr_snap *snap);

/* The frames of a stack id, innermost first. Returns the count or -errno. */
int mp_attr_stack(struct mp_attr *a, uint32_t stackid, uint64_t *ips, int max);

/* Detach every program and free the session. NULL is a no-op. */
void mp_attr_stop(struct mp_attr *a);

#endif
