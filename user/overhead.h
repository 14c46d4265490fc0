/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The overhead, explained: overhead_bytes (or usage_after - usage_before)
 * split into the workload's growth by process and category, the probe's own
 * cost beyond its allocation, and what is left unexplained, so that
 *
 *   sum(parts) + probe_kernel_bytes + reclaimed_bytes + unexplained_bytes == bytes
 *
 * exactly. The parts are also gathered into groups, a process each or, for
 * processes of one name and role (proc_role.h), one for them all: what
 * the text says ("postgres x32 (backends) anon 9.1 MiB"). Pure: built
 * from two attribution vectors (snapshots of the BPF per-task map, or
 * without BPF of /proc's per-process counters: at the baseline and at the
 * moment explained) and the probe's figures; unit tests build it from
 * hand-made snapshots.
 */
#ifndef MEMPROBE_OVERHEAD_H
#define MEMPROBE_OVERHEAD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"
#include "proc_role.h"

/* The rest of kernel (MEMCG_KMEM) beyond its itemised parts, file
 * without its shmem (the page cache), then the anon pages unmapped and
 * still charged (out of memory.stat's anon, not yet freed: a munmap's TLB
 * batch, pages a pipe or a pin holds), which the usage holds and no
 * memory.stat category shows: category indices of their own, after enum
 * mp_cat's. shmem is a part of its own, so that a shared segment
 * (shared_buffers) is not read as each toucher's page cache. */
/* MP_OVH_KERNEL_OTHER, MP_OVH_PAGE_CACHE, MP_OVH_ANON_UNMAPPED and
 * MP_OVH_NR_CATS: enum mp_ovh_part (vocab.h). */

struct mp_overhead_in {
	int64_t bytes;                 /* what is explained */
	uint64_t allocated_bytes;      /* the probe's allocation, taken out of its anon
					* (0 for what is left after it freed) */
	uint32_t probe_pid;            /* its process; 0: none */
	const struct mp_attr_snap *base; /* the vector at the baseline */
	const struct mp_attr_snap *at; /* ... at the moment explained */
	bool polled[MP_NR_CATS];       /* taken from memory.stat: no per-process split */
	bool rows[MP_NR_CATS];         /* polled, but split by /proc's rows: memory.stat's
					* growth beyond theirs is a "(memory.stat)" part
					* where both vectors' memory.stat was settled */
	bool have_kernel_total;        /* the kernel keeps kernel (MEMCG_KMEM) per memcg */
	long page_size;                /* bytes a page: anon unmapped is counted in pages;
					* 0: not counted (no page free hook) */
	const struct mp_proc_role *roles; /* the target's processes' roles; may be NULL */
	size_t nroles;
	uint64_t cow_page_bytes;       /* bytes per cow_pages unit (the page size);
					* 0: copy-on-write not measured */
};

struct mp_overhead_part {
	uint32_t pid;                  /* 0: other contexts, or memory.stat (polled) */
	uint32_t host_pid;             /* the host's, where memprobe's pid namespace
					* gives another; 0: the same */
	char comm[16];
	int cat;                       /* enum mp_cat, MP_OVH_KERNEL_OTHER or
					* MP_OVH_ANON_UNMAPPED */
	int64_t bytes;
};

/* The parts of one process, or of the processes of one name and role. */
struct mp_overhead_group {
	char comm[16];
	char role[MP_ROLE_LEN];
	uint32_t processes;            /* 0: other contexts, memory.stat */
	uint32_t pid;                  /* the process's, when there is one */
	uint32_t host_pid;             /* ... and the host's, where memprobe's pid
					* namespace gives another; 0: the same */
	int64_t bytes;                 /* the sum of its parts */
	int64_t cat_bytes[MP_OVH_NR_CATS];
	int64_t cow_bytes;             /* copied on write, inside its anon */
};

struct mp_overhead {
	int64_t bytes;
	struct mp_overhead_part *parts; /* the workload's, largest first, none zero */
	size_t nparts;
	struct mp_overhead_group *groups; /* the parts by process, or by name and role;
					   * the largest (either sign) first */
	size_t ngroups;
	bool have_cow;
	int64_t probe_kernel_bytes;
	int64_t probe_cat_bytes[MP_OVH_NR_CATS]; /* its parts; anon: beyond allocated */
	/* What the kernel reclaimed of the workload's memory in the probe's
	 * own context, to make room for it (direct reclaim at the limit,
	 * --reclaim-cache): the probe's page cache and reclaimable slab
	 * shrinking, never its own. */
	int64_t reclaimed_bytes;
	int64_t reclaimed_cat_bytes[MP_OVH_NR_CATS];
	int64_t unexplained_bytes;
};

/* Build *out from in. Returns 0 or -ENOMEM; release with mp_overhead_free. */
int mp_overhead_build(const struct mp_overhead_in *in, struct mp_overhead *out);
void mp_overhead_free(struct mp_overhead *o);

/* The name of a category index of struct mp_overhead_part. */
const char *mp_overhead_cat_name(int cat);

/*
 * The document's object: {bytes, at (when not NULL), parts, groups,
 * probe_kernel_bytes, probe_kernel_parts, reclaimed_bytes, reclaimed_parts,
 * unexplained_bytes}. Caller frees.
 */
cJSON *mp_overhead_json(const struct mp_overhead *o, const char *at);

/* What the probe document's "overhead" object is built from. */
struct mp_overhead_doc_in {
	int64_t overhead_bytes;        /* usage_peak - usage_before - allocated */
	int64_t left_bytes;            /* usage_after - usage_before */
	uint64_t allocated_bytes;
	uint32_t probe_pid;
	const struct mp_overhead_snaps *snaps;
	bool polled[MP_NR_CATS];
	bool rows[MP_NR_CATS];
	bool have_kernel_total;
	const struct mp_proc_role *roles;
	size_t nroles;
	uint64_t cow_page_bytes;
	uint64_t baseline_ns;          /* the baseline window, as sampled */
	uint32_t baseline_samples;
};

/*
 * The "overhead" object: {bytes, at: "peak", parts, probe_kernel_bytes,
 * probe_kernel_parts, unexplained_bytes, left_after (the same for
 * usage_after - usage_before, or null without a vector after the free),
 * vector_usage_bytes, baseline_usage_bytes, baseline_window_ns,
 * baseline_samples}. NULL when not measured (no baseline or peak vector)
 * or out of memory.
 */
cJSON *mp_overhead_doc(const struct mp_overhead_doc_in *in);

#endif
