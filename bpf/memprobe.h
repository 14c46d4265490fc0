/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Types shared by the BPF programs (bpf/memprobe.bpf.c) and user space
 * (user/attr_plan.c, user/attr_snap.c). Everything here is plain
 * fixed-width data: both sides must agree on layout without BTF.
 */
#ifndef MEMPROBE_SHARED_H
#define MEMPROBE_SHARED_H

#include "categories.h"
#ifndef __bpf__
#include <stdbool.h>
#endif

/*
 * Charge categories, named after memory.stat keys (bpf/categories.h). The
 * BPF side turns the kernel's memcg stat items (enum node_stat_item / enum
 * memcg_stat_item, resolved through CO-RE) into these indices.
 * MP_CAT_KERNEL is MEMCG_KMEM: every kmem charge, a superset of pagetables,
 * kernel_stack, slab, percpu and vmalloc; sock is charged apart from it.
 */
enum mp_cat {
#define MP_CAT_ENUM(id, ...) MP_CAT_##id,
	MP_CATEGORIES(MP_CAT_ENUM)
#undef MP_CAT_ENUM
	MP_NR_CATS,
};

/* Memcg stat item values the item-to-category tables cover (the kernel's
 * are below 100: node_stat_item's count, then memcg_stat_item's). */
#define MP_MAX_ITEMS 256

/* cat_state_index's "none": the category's counter is not read (memprobe.bpf.c) */
#define MP_NO_STATE_INDEX 0xff

/* Highest page order counted separately; larger orders share the last slot. */
#define MP_MAX_ORDER 11

/* Kernel stack depth kept per sampled kernel page allocation. */
#define MP_STACK_DEPTH 40

/* Frames walked to tell a user page copied on write (do_wp_page is the
 * fifth or sixth: the allocator's three or four, vma_alloc_folio). */
#define MP_COW_DEPTH 8

/* Why an event could not be counted (per-CPU counters, reported at exit). */
enum mp_lost {
	MP_LOST_TASK_MAP_FULL,
	MP_LOST_STACK_MAP_FULL,   /* the stack map refused a new stack: its
				   * bucket held another (-EEXIST) or no
				   * entry was free (-ENOMEM) */
	MP_LOST_STACK_STAT_FULL,
	MP_LOST_LIVE_PAGE_FULL,
	MP_LOST_STACK_WALK_FAILED, /* bpf_get_stackid got no stack to store
				    * (-EFAULT, -EBUSY: a nested walk) */
	MP_NR_LOST,
};

/*
 * Per process (tgid) counters, declared once: struct mp_task_stat (the BPF
 * map's value), struct mp_task_row (user space, attr.h) and the helpers that
 * add and subtract them (mp_task_stat_add below, attr_snap.c) are expanded
 * from this list. Each is a __u64 count; a new one is one line here.
 */
#define MP_TASK_COUNTERS(X)							\
	X(faults)            /* page faults: per event (the fault tracepoint),	\
			      * or exited threads' min_flt + maj_flt */	\
	X(user_pages)        /* pages allocated, migratetype movable */		\
	X(kernel_pages)      /* pages allocated, other migratetypes */		\
	X(charged_pages)     /* gross pages asked of try_charge_memcg() */	\
	X(anon_unmapped_pages) /* anon pages it took out of memory.stat's	\
				* anon (the rmap's count: an unmap) */	\
	X(anon_freed_pages)  /* anon pages freed in its context: their	\
			      * difference is what left anon and is still	\
			      * charged (a TLB batch on its way to the free,	\
			      * a page a pipe or a pin still holds) */	\
	X(cow_pages)         /* user pages copied on write (do_wp_page), by	\
			      * sampled walks times the sample period */

#define MP_TASK_COUNTER_FIELD(name) __u64 name;
/* The members of struct mp_task_stat, for the structs that embed them. */
#define MP_TASK_STAT_MEMBERS							\
	MP_TASK_COUNTERS(MP_TASK_COUNTER_FIELD)					\
	__s64 charge_bytes[MP_NR_CATS]; /* net memcg stat change, bytes */

/* Per process (tgid) counters, one copy per CPU: user space sums them. */
struct mp_task_stat {
	MP_TASK_STAT_MEMBERS
};

/*
 * Whole-target counters summed over CPUs and subtracted between snapshots
 * (attr_snap.c); the arrays below and lost (cumulative) are handled apart.
 */
#define MP_TOTAL_COUNTERS(X)							\
	X(kernel_pages_freed)  /* tracked kernel pages freed (any context) */	\
	X(memcg_events)        /* memcg stat updates counted */			\
	X(charged_pages)       /* gross pages charged, any context */		\
	X(task_rows_made)      /* task_stats entries made (a drain removes) */	\
	X(stack_rows_made)     /* stack_stats entries made */		\
	X(anon_unmapped_pages) /* the tasks' anon_unmapped_pages, summed */	\
	X(anon_freed_pages)    /* the tasks' anon_freed_pages, summed */	\
	X(cow_walks)           /* user pages' stacks walked for copy-on-write */

/*
 * Per category, how the updates of a byte-sized item (slab, percpu) were
 * counted where the hook passes them in pages (the 6.13+ memcg
 * tracepoints: memcg_state_val_in_pages() rounds each update, and the
 * rounding does not cancel): exact, the bytes read from the kernel's own
 * per-CPU counter of the item; rounded, the tracepoint's pages, each less
 * than a page from the truth (the first update of a memcg on a CPU, which
 * has no earlier reading to difference, or one whose counter moved by what
 * the pages cannot be); mismatched, those of rounded that had a reading
 * (what says whether the counter read is the item's). Subtracted between
 * snapshots like MP_TOTAL_COUNTERS.
 */
#define MP_TOTAL_CAT_COUNTERS(X)						\
	X(exact_updates)							\
	X(rounded_updates)							\
	X(mismatched_updates)

#define MP_TOTAL_CAT_FIELD(name) __u64 name[MP_NR_CATS];

/* Whole-target counters, one copy per CPU (single-slot per-CPU array):
 * what a timeline reads every interval without walking the per-task map. */
struct mp_totals {
	__u64 faults;               /* (kept in struct mp_cpu by the BPF side) */
	__s64 charge_bytes[MP_NR_CATS];
	MP_TOTAL_CAT_COUNTERS(MP_TOTAL_CAT_FIELD)
	__u64 alloc_pages_by_order[2][MP_MAX_ORDER + 1]; /* [0] user, [1] kernel */
	MP_TOTAL_COUNTERS(MP_TASK_COUNTER_FIELD)
	__u64 lost[MP_NR_LOST];
	__u64 sample_tick;          /* kernel allocations seen, for sampling stacks */
	__u64 cow_tick;             /* copy-on-write candidates seen, for sampling */
	/* The largest single event seen (maxima since load, not differenced):
	 * what bounds, in bytes, an event the kernel's recursion guard made a
	 * program miss (attribution.c add_events). */
	__u64 max_memcg_event_bytes; /* |one counted memcg stat update| */
	__u32 max_tracked_order;     /* of a page tracked for its free */
	__u32 pad;
};

/*
 * The hot per-CPU state, one slot of a per-CPU array: counters for the task
 * that ran last on this CPU accumulate in pending and move to the per-task
 * map only when another task's event comes (a flush), so a fault, an
 * allocation or a charge costs no hash lookup. seq is odd while a flush
 * runs, so that user space can read the map and the slots consistently.
 */
struct mp_cpu {
	__u64 seq;
	__u64 gen;             /* the cgroup-migration generation of the verdict */
	__u32 tgid;            /* whose counters are pending; 0: none */
	__u32 in_target;       /* that task's memcg is the target or below */
	__u64 faults;          /* all of the target's, here to share the first
				* cache line with what every fault touches */
	struct mp_task_stat pending;
	__s64 other_charge_bytes[MP_NR_CATS]; /* charges made in other contexts */
	struct mp_totals totals;
	__u32 wake_checks;     /* charge updates seen: every 64th reads the usage */
	__u32 key;             /* the maps' key of tgid's rows: tgid as memprobe's
				* pid namespace numbers it (slot.bpf.h task_key);
				* 0: not yet taken */
	__u64 pcpu_offset;     /* this CPU's per-CPU offset (byte_exact in
				* memprobe.bpf.c), once pcpu_known */
	__u8 pcpu_known;
	__u8 byte_trust[MP_NR_CATS]; /* byte_exact's updates of over a page
				      * that agreed here, up to 8 */
};

/* A task_stats key of a task outside memprobe's pid namespace: its host
 * tgid with this bit (pids stay below 2^22). */
#define MP_TGID_OUTSIDE 0x80000000u

struct mp_stack_key {
	__u32 stackid;
	__u32 tgid;
};

/* Net pages per (kernel stack, process); weighted by the sample period. */
struct mp_stack_stat {
	__s64 pages;        /* allocated minus freed (tracked pages only) */
	__u64 alloc_pages;  /* allocated */
	__u64 unaccounted_pages; /* allocated without __GFP_ACCOUNT */
};

struct mp_live_page {
	__u32 stackid;
	__u32 tgid;
	__u32 order;
	__u32 weight;       /* sample period in force when it was taken */
};

/* What oom_events carries: a kill, or record's wake-up (wake_above_pages). */
enum mp_event_kind {
	MP_EVENT_OOM_KILL = 0,
	MP_EVENT_WAKE = 1,
};

/* The memcg levels read at an OOM kill, from the victim's up. */
#define MP_OOM_LEVELS 8

/* One level's page counter at the kill (memory.max / limit_in_bytes and the
 * usage, in pages; failcnt: the charges it refused, v1's memory.failcnt). */
struct mp_oom_level {
	__u64 cgid;         /* its cgroup's id (kernfs id), as target_cgid */
	__u64 usage_pages;
	__u64 max_pages;    /* PAGE_COUNTER_MAX: no limit */
	__u64 failcnt;
};

/* An OOM kill in the target (oom:mark_victim) or a wake-up, sent through a
 * ring buffer: rare, so one record per event is fine. */
struct mp_oom_event {
	__u64 ts_ns;        /* bpf_ktime_get_ns() */
	__u64 usage_bytes;  /* the target's page counter then (0: not read) */
	__u32 pid;          /* the victim's tgid */
	__u32 trigger_pid;  /* the task that ran the OOM killer */
	char comm[16];      /* the victim's */
	__u32 kind;         /* enum mp_event_kind */
	__u32 host_pid;     /* BPF: 0. User space, memprobe in a pid namespace: the
			     * victim's host tgid, pid and trigger_pid then the
			     * namespace's (attr_snap.c) */
	__u32 nlevels;      /* levels read (a kill): the victim's memcg first */
	struct mp_oom_level levels[MP_OOM_LEVELS];
};

#ifdef __bpf__
#define MP_UNROLL _Pragma("unroll")
#else
#define MP_UNROLL
#endif

/* d += s, counter by counter: the BPF side's flush, user space's sums. */
static inline __attribute__((always_inline)) void
mp_task_stat_add(struct mp_task_stat *d, const struct mp_task_stat *s)
{
#define MP_ADD(name) d->name += s->name;
	MP_TASK_COUNTERS(MP_ADD)
#undef MP_ADD
	MP_UNROLL
	for (int k = 0; k < MP_NR_CATS; k++)
		d->charge_bytes[k] += s->charge_bytes[k];
}

/* d -= s, counter by counter: the difference of two snapshots. */
static inline void mp_task_stat_sub(struct mp_task_stat *d, const struct mp_task_stat *s)
{
#define MP_SUB(name) d->name -= s->name;
	MP_TASK_COUNTERS(MP_SUB)
#undef MP_SUB
	for (int k = 0; k < MP_NR_CATS; k++)
		d->charge_bytes[k] -= s->charge_bytes[k];
}

/*
 * Could a change of b bytes of a byte-sized stat item read as val pages on
 * the memcg tracepoints (memcg_state_val_in_pages())? 6.13-6.18 compute
 * max(b / PAGE_SIZE, 1UL) in unsigned long: a positive b rounds down, at
 * least 1; a negative one wraps and rounds away from zero (-4500 reads -2).
 * Later kernels round |b| down, at least 1, with b's sign. Either passes.
 */
static inline __attribute__((always_inline)) bool
mp_pages_agree(__s64 b, int val, __u32 page_size)
{
	__u64 mag = (__u64)(b < 0 ? -b : b), down = mag / page_size;
	__u64 up = (mag + page_size - 1) / page_size;

	if (!down)
		down = 1;
	if (b > 0)
		return val > 0 && (__u64)val == down;
	return b < 0 && val < 0 && ((__u64)-(__s64)val == up || (__u64)-(__s64)val == down);
}

#endif
