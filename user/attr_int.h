/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribution session's state, shared by hook planning and attaching
 * (attr_plan.c) and snapshot reading (attr_snap.c). Not for other rooms.
 */
#ifndef MEMPROBE_ATTR_INT_H
#define MEMPROBE_ATTR_INT_H

#include "attr.h"
#include "kernel_btf.h" /* struct mp_kfacts, MAX_RUNGS */
#include "memprobe.skel.h"

#include <pthread.h>

struct mp_attr {
	bool cat_ok[MP_NR_CATS];
	bool cat_polled[MP_NR_CATS];     /* taken from memory.stat: no hook sees it */
	const char *cat_polled_reason[MP_NR_CATS]; /* why: polled, clone, rounded */
	struct memprobe_bpf *skel;
	struct mp_hook hooks[MP_NR_CONCERNS];
	int chosen[MP_NR_CONCERNS];      /* the rung used, -1 none */
	/* why a rung cannot be used ("" when it can): absent, denied, refused */
	char why_not[MP_NR_CONCERNS][MAX_RUNGS][160];
	char btf_source[128];
	bool judged_all;
	bool btf_custom;                 /* the BTF is --btf's file */
	bool fault_tracepoint;           /* --fault-tracepoint: the faults' counters rungs passed over */
	bool memcg_counters;             /* the memcg's counters rung taken (--memcg-from) */
	enum mp_memcg_from memcg_from;   /* as given; AUTO: by the cgroup's version */
	uint32_t stack_period;           /* --stack-sample: 0, no kernel page tracked */
	bool no_batch;                   /* the kernel has no batch map lookup (< 5.6) */
	bool byte_exact;                 /* the BPF side reads byte items' counters
					  * (cat_state_index: some category has one) */
	bool pidns;                      /* memprobe runs in a pid namespace of its own:
					  * rows are keyed by its pids (slot.bpf.h) */
	/* rows of exited processes, out of the maps (attr_drain.c); the lock
	 * also keeps a drain out of a snapshot's reading of the maps */
	pthread_mutex_t gone_lock;
	struct mp_task_row *gone;
	size_t ngone, gone_cap;
	struct mp_stack_row *gone_stacks;
	size_t ngone_stacks, gone_stacks_cap;
	uint64_t task_rows_taken, stack_rows_taken; /* entries drained, against
						      * the programs' rows made */
	/* the fault counters' base (attr_faults.c): what each process of the
	 * target had at the first full snapshot in threads already released */
	struct mp_fault_base *fault_base;
	size_t nfault_base;
	bool fault_base_taken;
	char no_bpf[64];                 /* why no program can run: only polling */
	const char *no_bpf_reason;       /* its id: no_btf, refused, load_failed */
	char no_bpf_line[400];           /* for people: what is missing, what would bring it */
	/* the /proc path (attr_proc.c): without BPF, the task rows are the
	 * per-process counters /proc shows, at each snapshot */
	bool proc_rows;
	bool cat_rows[MP_NR_CATS];       /* the categories the rows carry */
	uint32_t proc_tree_pid;          /* rows of this process tree, not the cgroup's */
	struct mp_proc_track proc_track; /* every process seen (under gone_lock) */
	struct mp_stack_size stack_size;
	uint64_t proc_quick_next_ns;     /* a quick snapshot before this is passed over */
	bool have_cg;
	struct mp_cgroup cg;             /* for polled concerns */
	struct bpf_link *links[16];
	int nlinks;
	int ncpus;
	long page_size;
	struct ring_buffer *oom_rb;
	void (*oom_cb)(const struct mp_oom_event *e, void *arg);
	void *oom_arg;
	/* copy-on-write (attr_cow.c): do_wp_page's text read from kallsyms in
	 * a thread of its own after attaching; cow_why says why not, "" when
	 * it was found */
	pthread_t cow_thread;
	bool cow_started, cow_joined;
	uint32_t cow_period;
	char cow_fn[32];
	char cow_why[96];
};

/* Look for copies on write (attr_cow.c): start reading kallsyms for
 * do_wp_page when the session allocates with stacks; join it. */
void mp_attr_cow_start(struct mp_attr *a, uint32_t period);
void mp_attr_cow_join(struct mp_attr *a);

/* A process's faults at the first full snapshot in threads that had
 * exited and been released before it: /proc shows them only in the
 * whole-process figure, the exit hook never saw them. */
struct mp_fault_base {
	uint32_t tgid;
	uint64_t released;
};

/*
 * Per-task fault counts from the kernel's own counters (attr_faults.c), for
 * a full snapshot s whose rows hold, from the exit hook, the exited threads'
 * counts: a process /proc still shows gets its whole-process figure
 * (min_flt + maj_flt), one that is gone its exited threads' sum plus its
 * base. The target's processes without a row get one. cap: rows s may hold.
 */
void mp_attr_fault_counters(struct mp_attr *a, struct mp_attr_snap *s, size_t cap);

/* Add the drained rows to a snapshot s read from the maps (its tasks and,
 * with stacks, its stacks), merged by process and by (stack, process); then
 * sorts both by key. cap: the task rows s may hold from the maps alone.
 * Called with gone_lock held. */
void mp_attr_add_gone(struct mp_attr *a, struct mp_attr_snap *s, size_t cap, bool stacks);

/*
 * The /proc path (attr_proc.c). Start it where no program runs and a
 * cgroup (or a process tree) is known; a snapshot's task rows, made from
 * the processes read now and those seen before (full: huge pages and
 * identities too). Returns 0 or -errno.
 */
void mp_attr_proc_start(struct mp_attr *a);
int mp_attr_proc_snapshot(struct mp_attr *a, struct mp_attr_snap *s, bool full);
/* Rest after a quick snapshot (the overhead's, at each new peak) until the
 * next may be taken: reading /proc costs per process, and no more than a
 * ninth of the time goes to it (at most 100 ms). No rest with BPF's rows. */
void mp_attr_proc_quick_wait(const struct mp_attr *a);
void mp_attr_proc_stop(struct mp_attr *a);

/* Why no program runs, for people, into a->no_bpf_line and err (err
 * holds load_btf's words for no_btf): what is missing, what would bring
 * it, and that memprobe goes on with /proc and the cgroup's files. errnum:
 * the load's error (refused, load_failed). */
void mp_attr_say_no_bpf(struct mp_attr *a, int errnum, char *err, size_t errlen);

/*
 * Fill k from the BTF at path (a raw BTF file or an ELF with .BTF), or with
 * path NULL from the kernel's own (/sys/kernel/btf/vmlinux, else where
 * libbpf finds a vmlinux), wanting the ids of every rung's functions and
 * tracepoints (mp_kbtf_learn). Returns 0, or -errno with err saying why
 * (k then zeroed). attr_plan.c; its own function for the unit test.
 */
int mp_attr_learn_btf(const char *path, struct mp_kfacts *k, char *err, size_t errlen);

#endif
