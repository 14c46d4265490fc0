/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The target walk, shared by every program of memprobe.bpf.c: is a memory
 * cgroup (or the current task's) the target or below it?
 */
#ifndef MEMPROBE_TARGET_BPF_H
#define MEMPROBE_TARGET_BPF_H

/* Set by user space before load. */
const volatile __u64 target_cgid;      /* cgroup id (kernfs id) of the target memcg */
/* bpf_get_current_task_btf() exists (5.11+) */
const volatile bool have_task_btf = true;

/*
 * True when @cgrp is the target cgroup or below it. Works on v1 and v2: the
 * cgroup is the memory controller's, taken from the css, not the task's
 * default-hierarchy cgroup that bpf_get_current_cgroup_id() reports.
 *
 * The walk compares each ancestor's id with the target's, so it needs no
 * depth from user space, which a cgroup namespace would hide. Two flavours:
 * plain loads through BTF pointers for tp_btf and fentry programs, probe
 * reads for kprobes and raw tracepoints.
 */
#define MAX_DEPTH 32

/*
 * The walk touches a few cold cache lines per level; every hook runs it.
 * A small per-CPU cache of verdicts, keyed by the css serial number (unique
 * for the boot, unlike an address a freed memcg leaves for another), answers
 * from a line that stays hot.
 */
#define VERDICT_SLOTS 4

struct verdict_cache {
	struct {
		__u64 serial_plus_1; /* 0: empty */
		__u64 in_target;
	} slot[VERDICT_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct verdict_cache);
} verdicts SEC(".maps");

static __always_inline bool memcg_walk_btf(struct mem_cgroup *memcg)
{
	struct cgroup *cgrp = memcg->css.cgroup;

	for (int i = 0; i < MAX_DEPTH && cgrp; i++) {
		struct cgroup_subsys_state *parent;

		if (cgrp->kn->id == target_cgid)
			return true;
		parent = cgrp->self.parent;
		if (!parent)
			return false;
		cgrp = parent->cgroup;
	}
	return false;
}

static __always_inline bool memcg_in_target_btf(struct mem_cgroup *memcg)
{
	__u32 zero = 0, i;
	struct verdict_cache *vc;
	__u64 serial;
	bool v;

	if (!memcg)
		return false;
	serial = memcg->css.serial_nr + 1;
	i = serial & (VERDICT_SLOTS - 1);
	vc = bpf_map_lookup_elem(&verdicts, &zero);
	if (vc && vc->slot[i].serial_plus_1 == serial)
		return vc->slot[i].in_target;
	v = memcg_walk_btf(memcg);
	if (vc) {
		vc->slot[i].serial_plus_1 = serial;
		vc->slot[i].in_target = v;
	}
	return v;
}

static __always_inline bool memcg_in_target_probe(struct mem_cgroup *memcg)
{
	struct cgroup *cgrp = memcg ? BPF_CORE_READ(memcg, css.cgroup) : NULL;

	for (int i = 0; i < MAX_DEPTH && cgrp; i++) {
		if (BPF_CORE_READ(cgrp, kn, id) == target_cgid)
			return true;
		cgrp = BPF_CORE_READ(cgrp, self.parent, cgroup);
	}
	return false;
}

/*
 * The pages charged to the target now (its page counter: what
 * memory.usage_in_bytes or memory.current reads) when @memcg is the
 * target or below it; -1 when it is not. The OOM killer's choice reads it:
 * the usage at the kill, where the sampler's last reading may be tens of
 * milliseconds old.
 */
static __always_inline __s64 target_usage_pages(struct mem_cgroup *memcg)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);
	struct cgroup *cgrp = memcg ? BPF_CORE_READ(memcg, css.cgroup) : NULL;

	if (id < 0 || id >= CGROUP_SUBSYS_COUNT_MAX)
		return -1;
	for (int i = 0; i < MAX_DEPTH && cgrp; i++) {
		if (BPF_CORE_READ(cgrp, kn, id) == target_cgid) {
			struct mem_cgroup *t =
				(struct mem_cgroup *)BPF_CORE_READ(cgrp, subsys[id]);

			return t ? BPF_CORE_READ(t, memory.usage.counter) : -1;
		}
		cgrp = BPF_CORE_READ(cgrp, self.parent, cgroup);
	}
	return -1;
}

/*
 * The current task's memory cgroup is the target or below it
 * (mem_cgroup_from_task(): task->cgroups->subsys[memory_cgrp_id]; the css is
 * the first member of struct mem_cgroup). bpf_get_current_task_btf() came in
 * 5.11: before it, and in kprobes, the walk uses probe reads.
 */
static __always_inline bool current_in_target(bool btf)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, memory_cgrp_id);

	if (id < 0 || id >= CGROUP_SUBSYS_COUNT_MAX)
		return false;
	if (btf && have_task_btf) {
		struct task_struct *task = bpf_get_current_task_btf();

		return memcg_in_target_btf((struct mem_cgroup *)task->cgroups->subsys[id]);
	} else {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		return memcg_in_target_probe(
			(struct mem_cgroup *)BPF_CORE_READ(task, cgroups, subsys[id]));
	}
}

#endif
