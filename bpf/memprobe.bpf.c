// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe: attribute a memory cgroup's growth to memory.stat categories,
 * processes and kernel code paths.
 *
 * Everything is aggregated here; user space reads the maps once at the end.
 * Every program filters on the current task's (or the charged) memory cgroup
 * before it touches a map, so tasks outside the target pay only that check.
 * That target walk (target.bpf.h) and the per-CPU slot every program counts
 * in (slot.bpf.h) are in headers.
 *
 * Hooks come in ladders for the same concern (tp_btf, raw_tp, fentry,
 * kprobe); user space switches off, before load, every program it will not
 * attach. tp_btf and fentry programs read through BTF pointers; raw_tp and
 * kprobe ones, which must also work where the kernel's own BTF cannot be
 * read (an external --btf), use probe reads: the btf argument below.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "memprobe.h"
#include "compat.bpf.h"
#include "slot.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile __u32 page_size = 4096;
const volatile __u32 stack_sample_period = 1; /* 0: no kernel stacks */
/*
 * memcg:mod_memcg_state and mod_memcg_lruvec_state (6.13+) pass val already
 * converted to pages (memcg_state_val_in_pages()); the functions hooked by
 * fentry/kprobe see the item's own unit (pages, KiB or bytes).
 */
const volatile bool memcg_val_in_pages = true;
/* __GFP_ACCOUNT, found by user space in BTF (an anonymous enum since 6.10). */
const volatile __u64 gfp_account = 1ULL << 22;
/* Count the anon pages freed in the target's tasks (page free hook): what
 * left memory.stat's anon and is still charged is told from them. */
const volatile bool count_anon_frees = true;
/* oom:mark_victim's first argument: a task_struct * (6.8+) or the pid. */
const volatile bool mark_victim_has_task = true;
/* __GFP_ZERO, found by user space in BTF (an anonymous enum since 6.10). */
const volatile __u64 gfp_zero = 1ULL << 8;
/*
 * The text of do_wp_page and, where the compiler kept it apart,
 * wp_page_copy: [lo, hi) twice, from /proc/kallsyms. User space sets it
 * after attaching (reading kallsyms takes tens of ms, kept off the start);
 * until then hi is 0 and no copy is looked for.
 */
__u64 cow_text[4];

/* errno values for a full map (vmlinux.h has no macros; these are the
 * same on every architecture) */
#define MP_ENOMEM 12
#define MP_E2BIG 7

/*
 * The kernel stacks, by an id that is a hash of their frames. Not a
 * BPF_MAP_TYPE_STACK_TRACE: that map keeps one stack per hash bucket and
 * refuses a second stack whose hash shares the bucket (-EEXIST, without
 * BPF_F_REUSE_STACKID, which would let the newcomer take the id that rows
 * already hold): two of a probe's ~30 stacks shared one of its 2048
 * buckets in about one boot in six, and every sample of the second lost
 * its kernel path. A hash map keyed by the 32-bit hash of the frames
 * takes every stack until it is full; two stacks whose hashes are equal
 * (about 1 in 10^6 for 100 stacks) are counted as the first.
 */
struct mp_frames {
	__u64 ip[MP_STACK_DEPTH];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 2048);
	__type(key, __u32);
	__type(value, struct mp_frames);
} stacks SEC(".maps");

/* Where a stack is walked before it is hashed: 320 bytes, past the stack's
 * 512-byte limit. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_frames);
} stack_buf SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct mp_stack_key);
	__type(value, struct mp_stack_stat);
} stack_stats SEC(".maps");

/* Kernel pages allocated with a sampled stack, so their free can be matched.
 * Preallocated: an update that allocates would itself call the page
 * allocator from inside mm_page_alloc. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);               /* struct page * */
	__type(value, struct mp_live_page);
} live_pages SEC(".maps");

/*
 * In front of live_pages: how many tracked pages hash to each slot. Nearly
 * every free is of a page never tracked (user pages, other cgroups'), and
 * this makes it one load instead of a hash lookup. A count, not a bit, so
 * that a slot can be cleared as its pages go; atomic, as pages hashing to
 * one slot come and go on several CPUs at once. struct page is 64 bytes:
 * the address over 64 is the page's index, neighbours in neighbour slots.
 * Sized at load with live_pages (attr_plan.c): a slot per entry, a power
 * of two, at least 16384 (64 KiB): small, as every free of the machine
 * reads a slot at random. An array map's lookup is inlined: the same load
 * as a global's, at a computed index.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 16);
	__type(key, __u32);
	__type(value, __u32);
} live_filter SEC(".maps");
const volatile __u32 live_filter_mask = (1 << 16) - 1;

static __always_inline __u32 *live_slot(__u64 page)
{
	__u32 i = (__u32)(page >> 6) & live_filter_mask;

	return bpf_map_lookup_elem(&live_filter, &i);
}

/*
 * A struct page's address as a number. In tp_btf programs page is a BTF
 * pointer, which the verifier lets no shift touch nor a narrower load of
 * its spill: a helper's copy of it is a plain scalar. (The raw_tp programs'
 * arguments are numbers already, which is why page free, the hot one,
 * prefers its raw tracepoint.)
 */
static __always_inline __u64 page_key(const struct page *page, bool btf)
{
	__u64 v = (__u64)page;

	if (btf)
		bpf_probe_read_kernel(&v, sizeof(v), &page);
	return v;
}

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16384); /* 48 kills of 336 bytes before a read */
} oom_events SEC(".maps");

/*
 * record's wake-up: the target's usage, in pages, past which its sampler
 * wants a sample now (0: none). User space sets it at each sample, half way
 * from that sample's usage to the limit; the charge path clears it once the
 * event is sent. Samples come every 5 ms near the limit only once two of
 * them show a rate: a jump from idle to the limit within one interval (a
 * process allocating hundreds of MiB at once) had no sample near it before
 * its OOM kill.
 */
__u64 wake_above_pages;

/* ---- page faults ------------------------------------------------------ */

static __always_inline int on_fault(bool btf)
{
	struct mp_cpu *c = cpu_for_current(btf);

	if (!c || !c->in_target)
		return 0;
	c->pending.faults++;
	c->faults++;
	return 0;
}

/* Any task changing cgroup invalidates the cached verdicts. */
SEC("?tp_btf/cgroup_attach_task")
int BPF_PROG(tp_cgroup_attach_task)
{
	__sync_fetch_and_add(&migrate_gen, 1);
	return 0;
}

SEC("?raw_tp/cgroup_attach_task")
int BPF_PROG(raw_tp_cgroup_attach_task)
{
	__sync_fetch_and_add(&migrate_gen, 1);
	return 0;
}

SEC("?tp_btf/page_fault_user")
int BPF_PROG(tp_page_fault_user, unsigned long address, struct pt_regs *regs,
	     unsigned long error_code)
{
	return on_fault(true);
}

SEC("?raw_tp/page_fault_user")
int BPF_PROG(raw_tp_page_fault_user)
{
	return on_fault(false);
}

/* handle_mm_fault also runs for kernel-mode faults on user addresses
 * (copy_from_user); only user-mode faults are counted, like the tracepoint. */
SEC("?fentry/handle_mm_fault")
int BPF_PROG(fentry_handle_mm_fault, struct vm_area_struct *vma,
	     unsigned long address, unsigned int flags)
{
	if (!(flags & fault_flag_user()))
		return 0;
	return on_fault(true);
}

SEC("?kprobe/handle_mm_fault")
int BPF_KPROBE(kprobe_handle_mm_fault, struct vm_area_struct *vma,
	       unsigned long address, unsigned int flags)
{
	if (!(flags & fault_flag_user()))
		return 0;
	return on_fault(false);
}

/*
 * By default faults are not counted per event: the kernel keeps them per
 * task (min_flt, maj_flt, what /proc/PID/stat shows) and per memcg
 * (memory.stat pgfault), and user space reads both at the snapshots. What
 * /proc cannot show afterwards is a thread that has exited: its counts are
 * kept here, once per thread, as it exits (the cgroup is still its own).
 */
static __always_inline int on_exit(struct task_struct *p, bool btf)
{
	struct mp_cpu *c = cpu_for_current(btf);
	__u64 n;

	if (!c || !c->in_target)
		return 0;
	n = BPF_CORE_READ(p, min_flt) + BPF_CORE_READ(p, maj_flt);
	c->pending.faults += n;
	c->faults += n;
	return 0;
}

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(tp_sched_process_exit, struct task_struct *p)
{
	return on_exit(p, true);
}

SEC("?raw_tp/sched_process_exit")
int BPF_PROG(raw_tp_sched_process_exit, struct task_struct *p)
{
	return on_exit(p, false);
}

/* ---- page allocation and free ----------------------------------------- */

/*
 * Frees come from any context (reclaim, RCU, another task), so they are not
 * filtered on the current task: a page is matched by its struct page address
 * against those allocated with a stack in the target.
 */
static __always_inline void untrack(__u64 pkey)
{
	struct mp_live_page *lp;
	struct mp_stack_key key;
	struct mp_stack_stat *ss;
	struct mp_cpu *c;

	__u32 *slot = live_slot(pkey);

	if (!slot || !*slot)
		return;
	lp = bpf_map_lookup_elem(&live_pages, &pkey);
	if (!lp)
		return;
	key.stackid = lp->stackid;
	key.tgid = lp->tgid;
	ss = bpf_map_lookup_elem(&stack_stats, &key);
	if (!ss) {
		/* drained (its process exited, user space holds its row): the
		 * free makes the row again, the next drain adds it there */
		struct mp_stack_stat zero = {};
		struct mp_cpu *cc = get_cpu();

		if (!bpf_map_update_elem(&stack_stats, &key, &zero, BPF_NOEXIST) && cc)
			cc->totals.stack_rows_made++;
		ss = bpf_map_lookup_elem(&stack_stats, &key);
		if (!ss)
			count_lost(MP_LOST_STACK_STAT_FULL);
	}
	if (ss)
		__sync_fetch_and_add(&ss->pages,
				     -(__s64)((1ULL << (lp->order & 31)) * lp->weight));
	c = get_cpu();
	if (c)
		c->totals.kernel_pages_freed += 1ULL << (lp->order & 31);
	/* only the free that removed it clears its slot */
	if (!bpf_map_delete_elem(&live_pages, &pkey))
		__sync_fetch_and_add(slot, -1);
}

/*
 * An anonymous page freed by a task of the target: the other half of the
 * pages between memory.stat and the usage. munmap and exit take a page out
 * of memory.stat's anon as they unmap it (the rmap's count) but uncharge
 * it only when its TLB batch is freed, up to 10000 pages later
 * (MAX_GATHER_BATCH_COUNT batches); a page a pipe (vmsplice) or a pin
 * still holds stays charged until that lets go. The free runs in the
 * unmapping task (tlb_finish_mmu, free_pages_and_swap_cache), before
 * free_pages_prepare() clears page->mapping, whose low bit marks an anon
 * page (PAGE_MAPPING_ANON, FOLIO_MAPPING_ANON since 6.17: the same bit).
 * The uncharge comes just before, a folio batch (at most 31) at a time.
 * A task the slot already knows to be outside the target costs a load and
 * two compares; nearly every free of the machine is one.
 */
static __always_inline void anon_free(struct page *page, unsigned int order, bool btf)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_cpu *c = get_cpu();
	unsigned long mapping;

	if (!c || (c->tgid == tgid && c->gen == migrate_gen && migrate_tp_live &&
		   !c->in_target))
		return;
	mapping = (unsigned long)BPF_CORE_READ(page, mapping);
	if (!(mapping & 1))
		return;
	c = cpu_for_current(btf);
	if (!c || !c->in_target)
		return;
	c->pending.anon_freed_pages += 1ULL << (order & 31);
	c->totals.anon_freed_pages += 1ULL << (order & 31);
}

static __always_inline int on_page_free(struct page *page, unsigned int order, bool btf)
{
	if (stack_sample_period)
		untrack(page_key(page, btf));
	if (count_anon_frees)
		anon_free(page, order, btf);
	return 0;
}

/*
 * The current kernel stack's id (a 32-bit FNV-1a hash of its frames, the
 * frames past its end zero), the stack kept under it in stacks; or a
 * negative errno: the walk's (bpf_get_stack) or the full map's.
 */
static __always_inline long stack_id(void *ctx)
{
	__u32 zero = 0, h = 2166136261u;
	struct mp_frames *f = bpf_map_lookup_elem(&stack_buf, &zero);
	long n;

	if (!f)
		return -MP_ENOMEM;
	n = bpf_get_stack(ctx, f->ip, sizeof(f->ip), 0);
	if (n <= 0)
		return n ? n : -14 /* EFAULT: an empty trace */;
	MP_UNROLL
	for (int i = 0; i < MP_STACK_DEPTH; i++) {
		if ((long)(i * sizeof(__u64)) >= n)
			f->ip[i] = 0;
		h = (h ^ (__u32)f->ip[i]) * 16777619u;
		h = (h ^ (__u32)(f->ip[i] >> 32)) * 16777619u;
	}
	if (bpf_map_update_elem(&stacks, &h, f, BPF_NOEXIST)) {
		long err = bpf_map_lookup_elem(&stacks, &h) ? 0 : -MP_E2BIG;

		if (err)
			return err;
	}
	return h;
}

/*
 * A user page copied on write after a fork: allocated for do_wp_page's
 * copy (wp_page_copy). A first touch of anonymous memory, and the copy of
 * the zero page, ask for a zeroed page (__GFP_ZERO) and are passed over
 * without a walk; the rest (page cache, shmem, swap-in, copies) are
 * walked, every stack_sample_period-th, MP_COW_DEPTH frames deep, and a
 * frame in do_wp_page's text counts the period's pages as copies.
 */
static __always_inline void cow_check(void *ctx, struct mp_cpu *c)
{
	__u64 lo0 = cow_text[0], hi0 = cow_text[1], lo1 = cow_text[2], hi1 = cow_text[3];
	__u32 zero = 0;
	struct mp_frames *f;
	long n;

	if (!hi0)
		return;
	if (stack_sample_period > 1 && c->totals.cow_tick++ % stack_sample_period)
		return;
	f = bpf_map_lookup_elem(&stack_buf, &zero);
	if (!f)
		return;
	n = bpf_get_stack(ctx, f->ip, MP_COW_DEPTH * sizeof(__u64), 0);
	if (n <= 0) {
		count_lost(MP_LOST_STACK_WALK_FAILED);
		return;
	}
	c->totals.cow_walks++;
	MP_UNROLL
	for (int i = 0; i < MP_COW_DEPTH; i++) {
		__u64 ip = f->ip[i];

		if ((long)(i * sizeof(__u64)) >= n)
			break;
		if ((ip >= lo0 && ip < hi0) || (ip >= lo1 && ip < hi1)) {
			c->pending.cow_pages += stack_sample_period;
			return;
		}
	}
}

/* A charge update in the target (or, with --memcg-from counters, a page
 * allocated in it): past wake_above_pages, wake the sampler. The usage is
 * read on every 64th update on a CPU (a 4 KiB page makes about four
 * updates, one allocation): 256 KiB at most between reads there (1 MiB
 * when counted by allocations). */
static __always_inline bool wake_due(struct mp_cpu *c)
{
	return wake_above_pages && !(++c->wake_checks & 63);
}

/* Past wake_above_pages: one event to the sampler. Only when wake_due. */
static __always_inline void wake_check(struct mp_cpu *c, struct mem_cgroup *memcg)
{
	__u64 above = wake_above_pages;
	struct mp_oom_event *e;
	__s64 usage;

	usage = target_usage_pages(memcg);
	if (usage < 0 || (__u64)usage < above)
		return;
	wake_above_pages = 0; /* one event until user space sets it again */
	e = bpf_ringbuf_reserve(&oom_events, sizeof(*e), 0);
	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->kind = MP_EVENT_WAKE;
	e->ts_ns = bpf_ktime_get_ns();
	e->usage_bytes = (__u64)usage * page_size;
	bpf_ringbuf_submit(e, 0);
}

/* --memcg-from counters: no memcg program runs, so the page allocation
 * path checks for record's wake-up instead. */
const volatile bool wake_on_alloc = false;

static __always_inline int on_page_alloc(void *ctx, struct page *page,
					 unsigned int order, gfp_t gfp, int migratetype,
					 bool btf)
{
	bool user = migratetype ==
		    bpf_core_enum_value(enum migratetype, MIGRATE_MOVABLE);
	struct mp_cpu *c = cpu_for_current(btf);
	__u64 pages = 1ULL << (order & 31), pkey;
	__u32 tgid;

	if (!c || !c->in_target)
		return 0;
	/* the task's memcg read only on the 64th allocation: this runs on
	 * every page the target allocates */
	if (wake_on_alloc && wake_due(c)) {
		int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
		struct task_struct *t = (struct task_struct *)bpf_get_current_task();

		if (id >= 0 && id < CGROUP_SUBSYS_COUNT_MAX)
			wake_check(c, (struct mem_cgroup *)BPF_CORE_READ(t, cgroups, subsys[id]));
	}
	tgid = c->key;
	c->totals.alloc_pages_by_order[user ? 0 : 1]
				      [order > MP_MAX_ORDER ? MP_MAX_ORDER : order] += 1;
	if (user)
		c->pending.user_pages += pages;
	else
		c->pending.kernel_pages += pages;
	if (user && !order && !(gfp & gfp_zero) && stack_sample_period)
		cow_check(ctx, c);

	/* A stack costs microseconds: never for user pages, which are
	 * explained by the fault path, and sampled for kernel ones. */
	if (user || !stack_sample_period || !page)
		return 0;
	if (stack_sample_period > 1 && c->totals.sample_tick++ % stack_sample_period)
		return 0;

	struct mp_stack_key key = { .tgid = tgid };
	long id = stack_id(ctx);

	/* Only a full stacks map is the map's (-E2BIG, -ENOMEM); the rest is
	 * the walk (-EFAULT: no callchain buffer free in this context, or an
	 * empty trace; -EBUSY: raw tracepoints nested too deep). Either way
	 * the pages stay counted for their process and category: only their
	 * kernel path is lost. Two constant indices, for old verifiers. */
	if (id < 0) {
		if (id == -MP_E2BIG || id == -MP_ENOMEM)
			count_lost(MP_LOST_STACK_MAP_FULL);
		else
			count_lost(MP_LOST_STACK_WALK_FAILED);
		return 0;
	}
	key.stackid = (__u32)id;

	struct mp_stack_stat *ss = bpf_map_lookup_elem(&stack_stats, &key);
	if (!ss) {
		struct mp_stack_stat zero = {};

		if (!bpf_map_update_elem(&stack_stats, &key, &zero, BPF_NOEXIST))
			c->totals.stack_rows_made++;
		ss = bpf_map_lookup_elem(&stack_stats, &key);
		if (!ss) {
			count_lost(MP_LOST_STACK_STAT_FULL);
			return 0;
		}
	}
	__sync_fetch_and_add(&ss->pages, pages * stack_sample_period);
	__sync_fetch_and_add(&ss->alloc_pages, pages * stack_sample_period);
	if (!(gfp & gfp_account))
		__sync_fetch_and_add(&ss->unaccounted_pages, pages * stack_sample_period);

	struct mp_live_page lp = {
		.stackid = id, .tgid = tgid, .order = order,
		.weight = stack_sample_period,
	};
	__u32 *slot;

	/* A page tracked already (its free was skipped by the recursion
	 * guard) is replaced, not counted again in the filter. Looking each
	 * allocated page up to untrack such a page cost 25-45 ns an
	 * allocation, for none found in the scale bench. */
	pkey = page_key(page, btf);
	if (!bpf_map_update_elem(&live_pages, &pkey, &lp, BPF_NOEXIST)) {
		if ((slot = live_slot(pkey)))
			__sync_fetch_and_add(slot, 1);
	} else if (bpf_map_update_elem(&live_pages, &pkey, &lp, BPF_EXIST))
		count_lost(MP_LOST_LIVE_PAGE_FULL);
	if (order > c->totals.max_tracked_order)
		c->totals.max_tracked_order = order;
	return 0;
}

SEC("?tp_btf/mm_page_alloc")
int BPF_PROG(tp_mm_page_alloc, struct page *page, unsigned int order,
	     gfp_t gfp_flags, int migratetype)
{
	return on_page_alloc(ctx, page, order, gfp_flags, migratetype, true);
}

SEC("?raw_tp/mm_page_alloc")
int BPF_PROG(raw_tp_mm_page_alloc, struct page *page, unsigned int order,
	     gfp_t gfp_flags, int migratetype)
{
	return on_page_alloc(ctx, page, order, gfp_flags, migratetype, false);
}

SEC("?tp_btf/mm_page_free")
int BPF_PROG(tp_mm_page_free, struct page *page, unsigned int order)
{
	return on_page_free(page, order, true);
}

SEC("?raw_tp/mm_page_free")
int BPF_PROG(raw_tp_mm_page_free, struct page *page, unsigned int order)
{
	return on_page_free(page, order, false);
}

/* ---- memcg stat updates ----------------------------------------------- */

/*
 * Which memory.stat category each memcg stat item is, plus one (0: none),
 * by the item's value in this kernel: user space reads the values from the
 * same BTF CO-RE uses and fills these before load (attr_plan.c). One load
 * per event, where a ladder of CO-RE enum compares (two per category) cost
 * a compare each at run time and 12 763 verified instructions at load.
 * mod_memcg_lruvec_state passes enum node_stat_item items, mod_memcg_state
 * enum memcg_stat_item ones (5.10's __mod_memcg_lruvec_state also calls
 * __mod_memcg_state with its node item: the memcg table has no node item,
 * so it is counted once, on the lruvec side).
 */
const volatile __u8 lruvec_item_cat[MP_MAX_ITEMS];
const volatile __u8 memcg_item_cat[MP_MAX_ITEMS];
/* Bytes per unit of val as the function hooked sees it, per category. */
const volatile __u32 cat_unit_bytes[MP_NR_CATS];
/* The huge-page categories (MP_UNIT_HPAGES), and the pages of a PMD huge
 * page: before 5.13 those items counted huge pages, an update +-1. */
const volatile bool cat_hpages[MP_NR_CATS];
const volatile __u32 hpage_pmd_pages = 512;

/*
 * x, bounded below n in the very register that indexes with it. clang may
 * test a copy (or x's high bits on another register), or spill x before
 * the test and index with the reload: the verifier then knows nothing of
 * the index (6.1's does not refine a spilled copy; 6.18 rejected the copy
 * test). The asm before makes clang test x itself, the one after makes it
 * index with x as tested.
 */
#define BOUND_OR_RETURN(x, n, ret)						\
	do {									\
		barrier_var(x);							\
		if ((x) >= (n))							\
			return ret;						\
		barrier_var(x);							\
	} while (0)

/*
 * Byte-exact slab and percpu on the memcg tracepoints. mod_memcg_state()
 * and mod_memcg_lruvec_state() add the item's own value (bytes for slab
 * and percpu) to the memcg's per-CPU counter, memcg->vmstats_percpu->
 * state[i], and only then convert it for the tracepoint
 * (memcg_state_val_in_pages()): 6.13-6.18 compute max(val / PAGE_SIZE, 1UL)
 * in unsigned long, so that a small positive change rounds down to at
 * least a page and a negative one wraps and rounds away from zero (-4500
 * bytes read -2 pages); later kernels round |val| down, at least 1, and
 * keep the sign. The slab updates come from the per-CPU object stock,
 * flushed once it holds just over a page of either sign: socket()/close()
 * churn read +1 page per flush of allocations and -2 per flush of frees,
 * slab_reclaimable -259.8 MiB in 5 s for a cgroup whose kernel memory
 * rose 1.6 MiB.
 *
 * The counter itself is exact. Per CPU, per memcg (by css serial number,
 * which no other memcg takes after it) and per item, the last value read
 * is kept: an update's bytes are the counter's move since. The tracepoint's
 * pages must agree with it under either rounding. Where they do not, the
 * move holds more than this update: one nested in it (an interrupt's,
 * between the kernel's add and this run, seen first with both in it and
 * then this one with none) or one whose run the recursion guard skipped;
 * the move is still the counter's, exact in sum, and is taken once this
 * CPU has seen 8 updates of over a page agree (the index is the item's:
 * tiny page counts of a wrong one agree with 1 page, never with more); till
 * then, the pages. The counter is the one the kernel sums into memory.stat,
 * this CPU's copy: its address is the memcg's __percpu pointer plus this
 * CPU's per-CPU offset, which is found from the slot map itself (a per-CPU
 * array: its value here less its __percpu pointer, struct bpf_array's
 * pptrs[0]). The item's index in state[] comes from user space (learnt
 * from the kernel's BTF, kernel_btf.c), 0xff where it is unknown or the
 * hook passes the item's own unit; user space judges it by how many
 * updates agree (exact_updates against mismatched_updates).
 */
const volatile __u8 cat_state_index[MP_NR_CATS];

struct byte_anchor_key {
	__u64 serial;          /* the memcg's css.serial_nr */
	__u32 index;           /* the item's in memcg_vmstats_percpu.state[] */
	__u32 pad;
};

/* A reading. An entry one CPU made is there, zeroed, for the others: set
 * says whether this CPU's copy holds one (a memcg's counters are not 0
 * where it lived before the recording). */
struct byte_anchor {
	__s64 last;
	__u64 set;
};

/* The last reading of each (memcg, item) counter, per CPU. LRU: a memcg
 * gone leaves its entries to be taken; an entry taken costs one update
 * counted as its pages. Sized to 1 entry by user space when unused. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct byte_anchor_key);
	__type(value, struct byte_anchor);
} byte_anchors SEC(".maps");

/* A pointer as a number: a helper's copy of it (the verifier lets no
 * arithmetic mix a map's or a map value's pointer with a number). */
static __always_inline __u64 ptr_bits(const void *p)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &p);
	return v;
}

/* Find this CPU's per-CPU offset, kept in its slot. False when it cannot
 * be found. */
static __always_inline bool pcpu_offset(struct mp_cpu *c)
{
	__u64 pptr = 0;

	if (c->pcpu_known)
		return true;
	if (bpf_probe_read_kernel(&pptr, sizeof(pptr),
				  (void *)(ptr_bits(&cpu) +
					   bpf_core_field_offset(struct bpf_array, pptrs))) ||
	    !pptr)
		return false;
	c->pcpu_offset = ptr_bits(c) - pptr;
	c->pcpu_known = 1;
	return true;
}

/* The bytes of a byte-sized item's update whose tracepoint passed val
 * pages: the move of the kernel's counter since the last reading here, or
 * val pages (counted in rounded_updates) when there is none to trust. */
static __always_inline __s64 byte_exact(struct mp_cpu *c, struct mem_cgroup *memcg, __u64 k,
					int val, int unit)
{
	struct byte_anchor_key key = {};
	__s64 pages = (__s64)val * page_size, now = 0, d;
	struct byte_anchor *last;
	__u64 base, idx;

	BOUND_OR_RETURN(k, MP_NR_CATS, pages);
	idx = cat_state_index[k];
	if (idx == MP_NO_STATE_INDEX ||
	    !bpf_core_field_exists(struct memcg_vmstats_percpu, state)) {
		/* KiB items (kernel stacks) come in whole pages: exact */
		if (unit == 1)
			c->totals.rounded_updates[k]++;
		return pages;
	}
	base = (__u64)BPF_CORE_READ(memcg, vmstats_percpu);
	if (!pcpu_offset(c) || !base ||
	    bpf_probe_read_kernel(&now, sizeof(now),
				  (void *)(base + c->pcpu_offset +
					   bpf_core_field_offset(struct memcg_vmstats_percpu, state) +
					   idx * sizeof(long)))) {
		c->totals.rounded_updates[k]++;
		return pages;
	}
	key.serial = BPF_CORE_READ(memcg, css.serial_nr);
	key.index = (__u32)idx;
	last = bpf_map_lookup_elem(&byte_anchors, &key);
	if (!last || !last->set) {
		struct byte_anchor a = { .last = now, .set = 1 };

		if (last)
			*last = a;
		else
			bpf_map_update_elem(&byte_anchors, &key, &a, BPF_ANY);
		c->totals.rounded_updates[k]++;
		return pages;
	}
	d = now - last->last;
	last->last = now;
	if (!mp_pages_agree(d, val, page_size)) {
		c->totals.mismatched_updates[k]++;
		if (c->byte_trust[k] >= 8)
			return d;
		c->totals.rounded_updates[k]++;
		return pages;
	}
	c->totals.exact_updates[k]++;
	if ((d < 0 ? -d : d) > page_size && c->byte_trust[k] < 8)
		c->byte_trust[k]++;
	return d;
}

/*
 * The bytes charged to the target's kernel memory that no object holds:
 * each obj_cgroup's nr_charged_bytes, as of its memcg's last byte-item
 * update seen here (per objcg, by its address; user space sums them with
 * each sample, mp_attr_objcg_reserve). Since 6.16 (200577f69f29 "memcg:
 * objcg stock trylock without irq disabling") a free that finds this
 * CPU's object stock locked (an RCU callback in softirq freeing sockets
 * while the task it interrupted charges) leaves its bytes there, charged,
 * until the stock changes hands: v1's memory.kmem.usage_in_bytes rose
 * 10 MiB above the cgroup's slab counter in a socket churn and fell back
 * at once. The counter grows after the stat update that goes with it:
 * the value read lags by at most one free's remainder (under a page).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u64);
	__type(value, __s64);
} objcg_reserve SEC(".maps");

static __always_inline void note_objcg_reserve(struct mem_cgroup *memcg)
{
	struct obj_cgroup *objcg;
	__s64 held, *v;
	__u64 key;

	if (!bpf_core_field_exists(struct mem_cgroup, objcg) ||
	    !bpf_core_field_exists(struct obj_cgroup, nr_charged_bytes))
		return;
	objcg = BPF_CORE_READ(memcg, objcg);
	if (!objcg)
		return;
	held = BPF_CORE_READ(objcg, nr_charged_bytes.counter);
	key = ptr_bits(objcg);
	v = bpf_map_lookup_elem(&objcg_reserve, &key);
	if (v)
		*v = held;
	else
		bpf_map_update_elem(&objcg_reserve, &key, &held, BPF_ANY);
}

/* *cat: item's category, *unit: bytes per unit of val. False when the item
 * is none of memprobe's. */
static __always_inline bool cat_of(int item, bool lruvec, __u64 *cat, int *unit)
{
	__u64 i = (__u32)item, c;

	BOUND_OR_RETURN(i, MP_MAX_ITEMS, false);
	c = lruvec ? lruvec_item_cat[i] : memcg_item_cat[i];
	c -= 1; /* 0 (none) wraps past the last */
	BOUND_OR_RETURN(c, MP_NR_CATS, false);
	*unit = (int)cat_unit_bytes[c];
	*cat = c;
	return true;
}

static __always_inline int on_memcg_stat(struct mem_cgroup *memcg, int item,
					 int val, bool lruvec, bool btf)
{
	struct mp_cpu *c;
	__s64 bytes;
	__u64 k, unmapped;
	int unit;

	if (!cat_of(item, lruvec, &k, &unit) || !val)
		return 0;
	if (btf ? !memcg_in_target_btf(memcg) : !memcg_in_target_probe(memcg))
		return 0;
	c = cpu_for_current(btf);
	if (!c)
		return 0;
	/* the tracepoints pass pages: byte items are read from the kernel */
	if (memcg_val_in_pages && unit != page_size)
		bytes = byte_exact(c, memcg, k, val, unit);
	else
		bytes = (__s64)val * (memcg_val_in_pages ? page_size : unit);
	if (unit == 1)
		note_objcg_reserve(memcg);
	/* a huge page counted as 1 (before 5.13); since, HPAGE_PMD_NR pages */
	if (cat_hpages[k] && val > -8 && val < 8)
		bytes *= hpage_pmd_pages;
	/* A charge or uncharge made while a task outside the target runs (an
	 * RCU callback freeing its objects, reclaim, an interrupt) is not that
	 * task's doing: it goes to "another context". But a task the map has
	 * counted in the target has moved out of it: what it charges or frees
	 * of the target's memory now is its own (its row; user space names it
	 * moved out). Only tasks of the target make rows (flush) and names
	 * (cpu_for_current), so the lookups find no other. A name without a
	 * row is a task whose counts still wait in another CPU's slot (it ran
	 * there before moving): its row is made here. */
	/* anon going down in a task of the target: an unmap, its pages
	 * still charged until their free (anon_free) */
	unmapped = k == MP_CAT_ANON && bytes < 0 ? (__u64)-bytes / page_size : 0;
	if (c->in_target) {
		c->pending.charge_bytes[k] += bytes;
		c->pending.anon_unmapped_pages += unmapped;
		c->totals.anon_unmapped_pages += unmapped;
	} else {
		__u32 tgid = c->tgid ? slot_key(c) : 0;
		struct mp_task_stat *ts = NULL;

		if (tgid && !(ts = bpf_map_lookup_elem(&task_stats, &tgid)) &&
		    bpf_map_lookup_elem(&comms, &tgid))
			ts = get_task_stat(tgid);
		if (ts)
			ts->charge_bytes[k] += bytes;
		else
			c->other_charge_bytes[k] += bytes;
	}
	c->totals.charge_bytes[k] += bytes;
	c->totals.memcg_events++;
	if ((__u64)(bytes < 0 ? -bytes : bytes) > c->totals.max_memcg_event_bytes)
		c->totals.max_memcg_event_bytes = bytes < 0 ? -bytes : bytes;
	if (bytes > 0 && wake_due(c))
		wake_check(c, memcg);
	return 0;
}

SEC("?tp_btf/mod_memcg_state")
int BPF_PROG(tp_mod_memcg_state, struct mem_cgroup *memcg, int item, int val)
{
	return on_memcg_stat(memcg, item, val, false, true);
}

SEC("?tp_btf/mod_memcg_lruvec_state")
int BPF_PROG(tp_mod_memcg_lruvec_state, struct mem_cgroup *memcg, int item,
	     int val)
{
	return on_memcg_stat(memcg, item, val, true, true);
}

SEC("?raw_tp/mod_memcg_state")
int BPF_PROG(raw_tp_mod_memcg_state, struct mem_cgroup *memcg, int item, int val)
{
	return on_memcg_stat(memcg, item, val, false, false);
}

SEC("?raw_tp/mod_memcg_lruvec_state")
int BPF_PROG(raw_tp_mod_memcg_lruvec_state, struct mem_cgroup *memcg, int item,
	     int val)
{
	return on_memcg_stat(memcg, item, val, true, false);
}

/* Before 6.13 there are no memcg tracepoints: the same work is done by
 * __mod_memcg_state() and __mod_memcg_lruvec_state(), with raw units. */
SEC("?fentry/__mod_memcg_state")
int BPF_PROG(fentry_mod_memcg_state, struct mem_cgroup *memcg, int item, int val)
{
	return on_memcg_stat(memcg, item, val, false, true);
}

SEC("?fentry/__mod_memcg_lruvec_state")
int BPF_PROG(fentry_mod_memcg_lruvec_state, struct lruvec *lruvec, int item,
	     int val)
{
	struct mem_cgroup_per_node *pn =
		container_of(lruvec, struct mem_cgroup_per_node, lruvec);

	/* container_of() leaves BTF pointers: read through probe reads */
	return on_memcg_stat(BPF_CORE_READ(pn, memcg), item, val, true, false);
}

SEC("?kprobe/__mod_memcg_state")
int BPF_KPROBE(kprobe_mod_memcg_state, struct mem_cgroup *memcg, int item, int val)
{
	return on_memcg_stat(memcg, item, val, false, false);
}

SEC("?kprobe/__mod_memcg_lruvec_state")
int BPF_KPROBE(kprobe_mod_memcg_lruvec_state, struct lruvec *lruvec, int item,
	       int val)
{
	struct mem_cgroup_per_node *pn =
		container_of(lruvec, struct mem_cgroup_per_node, lruvec);

	return on_memcg_stat(BPF_CORE_READ(pn, memcg), item, val, true, false);
}

/* ---- memcg charge ----------------------------------------------------- */

/*
 * try_charge_memcg() (try_charge() before 5.15) is where every charge to a
 * memcg's page counter starts: user pages, kmem, sock. Counted on entry, so
 * this is what was asked for, gross: the per-CPU stock may serve it without
 * touching the counter, and uncharges are not seen. No tracepoint exists.
 */
static __always_inline int on_charge(struct mem_cgroup *memcg, unsigned int nr_pages,
				     bool btf)
{
	struct mp_cpu *c;

	if (btf ? !memcg_in_target_btf(memcg) : !memcg_in_target_probe(memcg))
		return 0;
	c = cpu_for_current(btf);
	if (!c)
		return 0;
	if (c->in_target)
		c->pending.charged_pages += nr_pages;
	c->totals.charged_pages += nr_pages;
	return 0;
}

/* The function is chosen at open (attr_plan.c): try_charge_memcg, or
 * try_charge before 5.15, with the same arguments. */
SEC("?fentry")
int BPF_PROG(fentry_try_charge, struct mem_cgroup *memcg, gfp_t gfp,
	     unsigned int nr_pages)
{
	return on_charge(memcg, nr_pages, true);
}

SEC("?kprobe")
int BPF_KPROBE(kprobe_try_charge, struct mem_cgroup *memcg, gfp_t gfp,
	       unsigned int nr_pages)
{
	return on_charge(memcg, nr_pages, false);
}

/* ---- process names -------------------------------------------------- */

/* A process counted before exec (a command memprobe started, say) takes
 * the new program's name. */
static __always_inline int on_exec(struct task_struct *p)
{
	/* the exec'ing task is the current one: its key as the maps hold it */
	__u32 tgid = task_key(BPF_CORE_READ(p, tgid), false);
	char *comm = bpf_map_lookup_elem(&comms, &tgid);

	if (comm)
		bpf_probe_read_kernel_str(comm, 16, &p->comm);
	return 0;
}

SEC("?tp_btf/sched_process_exec")
int BPF_PROG(tp_sched_process_exec, struct task_struct *p)
{
	return on_exec(p);
}

SEC("?raw_tp/sched_process_exec")
int BPF_PROG(raw_tp_sched_process_exec, struct task_struct *p)
{
	return on_exec(p);
}

/* ---- OOM kills ----------------------------------------------------------- */

/*
 * Each memcg level's page counter at the kill, from the victim's up to the
 * root: which level's limit the charge hit (its usage at its max; the
 * kernel's mem_over_limit is not in the tracepoint's arguments), and each
 * one's usage then. The css is the first member of struct mem_cgroup, so
 * the parent's css is its memcg. failcnt: v1 only on 6.x kernels that
 * keep it for v1 alone; 0 where absent.
 */
static __always_inline void oom_levels(struct mp_oom_event *e, struct mem_cgroup *memcg)
{
	e->nlevels = 0;
	MP_UNROLL
	for (int i = 0; i < MP_OOM_LEVELS; i++) {
		struct mp_oom_level *l = &e->levels[i];

		if (!memcg) {
			__builtin_memset(l, 0, sizeof(*l));
			continue;
		}
		l->cgid = BPF_CORE_READ(memcg, css.cgroup, kn, id);
		l->usage_pages = BPF_CORE_READ(memcg, memory.usage.counter);
		l->max_pages = BPF_CORE_READ(memcg, memory.max);
		l->failcnt = bpf_core_field_exists(memcg->memory.failcnt) ?
			     BPF_CORE_READ(memcg, memory.failcnt) : 0;
		e->nlevels = i + 1;
		memcg = (struct mem_cgroup *)BPF_CORE_READ(memcg, css.parent);
	}
}

/*
 * oom:mark_victim runs in the task that invoked the OOM killer; the victim is
 * the first argument: a task_struct * since 6.8 ("mm, oom: add tracepoint
 * fields to mark_victim"), its pid before. A memcg OOM is invoked by a task of
 * the cgroup, so the trigger's memcg is the filter when only a pid is given.
 * The target's usage is read here, at the kill, from its page counter.
 */
SEC("?raw_tp/mark_victim")
int BPF_PROG(raw_tp_mark_victim)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	__u64 arg0 = ((__u64 *)ctx)[0];
	struct mem_cgroup *memcg;
	struct mp_oom_event *e;
	__s64 usage;

	if (id < 0 || id >= CGROUP_SUBSYS_COUNT_MAX)
		return 0;
	if (mark_victim_has_task) {
		struct task_struct *victim = (struct task_struct *)arg0;

		memcg = (struct mem_cgroup *)BPF_CORE_READ(victim, cgroups, subsys[id]);
	} else {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		memcg = (struct mem_cgroup *)BPF_CORE_READ(task, cgroups, subsys[id]);
	}
	usage = target_usage_pages(memcg);
	if (usage < 0)
		return 0;
	e = bpf_ringbuf_reserve(&oom_events, sizeof(*e), 0);
	if (!e)
		return 0;
	e->kind = MP_EVENT_OOM_KILL;
	e->host_pid = 0;
	oom_levels(e, memcg);
	e->ts_ns = bpf_ktime_get_ns();
	e->usage_bytes = (__u64)usage * page_size;
	e->trigger_pid = bpf_get_current_pid_tgid() >> 32;
	if (mark_victim_has_task) {
		struct task_struct *victim = (struct task_struct *)arg0;

		e->pid = BPF_CORE_READ(victim, tgid);
		BPF_CORE_READ_STR_INTO(&e->comm, victim, comm);
	} else {
		e->pid = (__u32)arg0;
		e->comm[0] = '\0';
	}
	bpf_ringbuf_submit(e, 0);
	return 0;
}
