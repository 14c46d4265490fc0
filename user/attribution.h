/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribution section of a probe or record document: the growth of the
 * target's memory by memory.stat category, process and kernel path, built
 * from the hook plan and the session's snapshots.
 *
 * The builder is pure: struct mp_attr_input is plain data (the plan, the
 * categories' verdicts, the stacks' frames, the snapshots) and nothing here
 * reads a live session, a map or the system. attr_view.c fills the input
 * from a live session; unit tests fill it by hand.
 */
#ifndef MEMPROBE_ATTRIBUTION_H
#define MEMPROBE_ATTRIBUTION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"

struct mp_ksyms;

/* What the kernel and the plan say of one memory.stat category. */
struct mp_attr_cat_plan {
	bool available;            /* the kernel keeps a per-memcg count of it */
	const char *item;          /* the kernel's stat item, named when it does not */
	bool polled;               /* taken from memory.stat: no attached hook sees it */
	const char *polled_reason; /* NULL, "polled" (no memcg BPF hook), "clone"
				    * (5.10's __mod_memcg_state.part.0), "rounded" (the
				    * memcg tracepoints round byte items to pages) */
	bool bytes_read;           /* the hook passes it rounded to pages and the BPF
				    * side reads the kernel's byte counter instead
				    * (mp_attr_cat_bytes_read): the snapshots' totals
				    * count its exact and rounded updates */
	bool rows;                 /* the task rows carry it from /proc (MP_ROW_PROC):
				    * they split memory.stat's total approximately, and
				    * where memory.stat has no such key they are all */
};

/* The frames of one kernel stack, innermost first. */
struct mp_attr_frames {
	uint32_t stackid;
	int n;                     /* frames in ips; <= 0: unknown (left unclassified) */
	uint64_t ips[MP_STACK_DEPTH];
};

/* One loaded BPF program's runs skipped by the kernel's recursion guard. */
struct mp_attr_prog_misses {
	const char *name;
	uint64_t misses;
	uint64_t run_cnt, run_time_ns; /* the kernel's run-time stats: 0 unless
					* they were on (kernel.bpf_stats_enabled) */
};

struct mp_attr_input {
	/* the plan */
	const struct mp_hook *hooks;       /* MP_NR_CONCERNS entries, enum mp_concern order */
	struct mp_attr_cat_plan cats[MP_NR_CATS];

	/* what the session read besides the snapshots */
	const struct mp_attr_frames *frames; /* the stacks of paths (or growth), any order;
					      * a stack id not here is unclassified */
	size_t nframes;
	uint64_t recursion_misses;         /* summed over the programs */
	bool have_lost;                    /* lost: the session's, from its start */
	uint64_t lost[MP_NR_LOST];         /* map overflows and failed stack walks over
					    * the whole session (a map filled after
					    * the peak loses too) */
	const struct mp_attr_prog_misses *progs; /* per program, in load order */
	size_t nprogs;
	long page_size;                    /* bytes: the BPF side counts pages */
	bool anon_unmapped;                /* anon unmapped and still charged is counted
					    * (the totals' anon_unmapped_pages -
					    * anon_freed_pages): a page free hook */
	const struct mp_ksyms *ksyms;      /* NULL: stacks unsymbolized (no_kallsyms) */
	const uint32_t *moved_out;         /* processes counted in the target that live
					    * outside it now, any order */
	size_t nmoved;
	const uint32_t *exited;            /* processes counted that have exited by
					    * now (the growth's rows of them may be
					    * unmarked), ascending */
	size_t nexited;
	const char *no_bpf_reason;         /* no BPF program runs: no_btf, refused,
					    * load_failed; NULL: they run */
	const char *no_bpf_line;           /* why, what would bring them, for people */

	/* copy-on-write (attr_cow.c): looked for or not, and why */
	bool cow;                          /* the tasks' cow_pages are counted */
	uint32_t cow_period;               /* every cow_period-th candidate walked */
	const char *cow_fn;                /* the function whose text tells a copy */
	const char *cow_why;               /* why not, when not */

	/* the snapshots (differences: start to ...) */
	const struct mp_attr_snap *growth; /* counters from start to the peak */
	const struct mp_attr_snap *retained; /* start to after the probe freed; may be NULL */
	const struct mp_attr_snap *paths;  /* for kernel paths and not_charged; NULL: growth */

	/* the cgroup's counters at the growth's start (memory.stat; v1: its
	 * kmem usage as kernel): what a category cannot fall below (minus
	 * them). NULL: not read */
	const struct mp_cg_stat *start_stat;

	/* what the caller measured */
	int64_t measured_growth_bytes;     /* the cgroup's usage growth over the same span */
	uint64_t allocated_bytes;          /* the probe's, for per-GiB figures; 0 if none */
	uint32_t probe_pid;                /* the probe's process, 0 if none */
	int top;                           /* tasks and stacks kept per category */
	const char *span;                  /* what the growth spans, for people */
};

/*
 * Build the "attribution" object: hooks, attribution_missing, categories
 * with growth, tasks and top stacks, page faults, memcg charges, page
 * allocations by order, copy-on-write, kernel paths, reconciliation,
 * not_charged, events and events lost. Reads in only. Returns a new object (caller frees) or
 * NULL when out of memory.
 */
cJSON *mp_report_attribution(const struct mp_attr_input *in);

/*
 * The attribution object when there is no session at all: attribution_missing
 * holds one {concern: null, category: null, reason: "no_bpf", message} entry,
 * message being why (NULL or "": "BPF unavailable"). Caller frees.
 */
cJSON *mp_attribution_no_bpf(const char *why);

/* Did the per-CPU counter the BPF side read for a byte item agree with the
 * tracepoint's pages (exact and mismatched updates: struct mp_totals)?
 * When not, its figure is no more than an estimate. */
bool mp_bytes_read_agree(uint64_t exact, uint64_t mismatched);

/* Sum of the reconciled categories, bytes: anon + file + kernel + sock; on
 * a kernel without a per-memcg kernel total, its itemised parts instead. */
int64_t mp_attributed_bytes(const int64_t cat_bytes[MP_NR_CATS], bool have_kernel_total);

/*
 * From a live session (attr_view.c): fill in's plan, categories, frames (of
 * the stacks in in->paths, else in->growth: set the snapshots first),
 * recursion misses and page size. Returns 0 or -ENOMEM; on either, release
 * with mp_attr_view_release.
 */
int mp_attr_view_fill(struct mp_attr *a, struct mp_attr_input *in);
void mp_attr_view_release(struct mp_attr_input *in);

/* The three above in one: fill from a, build, release. NULL when out of memory. */
cJSON *mp_attr_view_report(struct mp_attr *a, struct mp_attr_input *in);

/* One hook of the plan as documents carry it: concern, name, kind, target,
 * hook, polled, and missing_reason and missing where something is lost. */
cJSON *mp_hook_json(const struct mp_hook *h);

#endif
