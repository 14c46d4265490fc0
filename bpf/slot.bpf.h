/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The per-CPU slot and the per-task map: where every program counts. A
 * task's counters wait in its CPU's slot and move to the map only when
 * another task's event comes (a flush).
 */
#ifndef MEMPROBE_SLOT_BPF_H
#define MEMPROBE_SLOT_BPF_H

#include "target.bpf.h"

/* Bumped on every cgroup migration, system-wide (rare). */
__u64 migrate_gen;
/* Set by user space once cgroup:cgroup_attach_task is attached: only then
 * can a task's verdict be kept until some task changes cgroup. */
bool migrate_tp_live;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct mp_task_stat);
} task_stats SEC(".maps");

/*
 * Set by user space before load where memprobe runs in a pid namespace of
 * its own (a container's): the device and inode of its /proc/self/ns/pid.
 * Rows are then keyed by the tgid as that namespace numbers it, the pid
 * memprobe's /proc, its kill() and its users see; 0: the host's own.
 */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;

/* In a pid namespace: a row's key to the task's host tgid, for the report
 * (the host's pid beside the container's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u32);
} host_tgids SEC(".maps");

/*
 * The maps' key of the current task, whose host tgid is tgid: the same on
 * the host; in memprobe's pid namespace its tgid there
 * (bpf_get_ns_current_pid_tgid, 5.7+, which matches that namespace only:
 * a task outside it, or in a namespace nested in it, keeps its host tgid,
 * marked MP_TGID_OUTSIDE), its host tgid kept in host_tgids when keep.
 * One helper call when a CPU's slot changes task, only in a namespace.
 */
static __always_inline __u32 task_key(__u32 tgid, bool keep)
{
	struct bpf_pidns_info ns;
	__u32 *host;

	if (!pidns_ino || !tgid)
		return tgid;
	if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) || !ns.tgid)
		return tgid | MP_TGID_OUTSIDE;
	if (keep && ns.tgid != tgid) {
		host = bpf_map_lookup_elem(&host_tgids, &ns.tgid);
		if (!host || *host != tgid) /* new, or a pid the namespace used again */
			bpf_map_update_elem(&host_tgids, &ns.tgid, &tgid, BPF_ANY);
	}
	return ns.tgid;
}

/* The key of the slot's task (the current one), taken once per slot. */
static __always_inline __u32 slot_key(struct mp_cpu *c)
{
	if (!c->key)
		c->key = task_key(c->tgid, true);
	return c->key;
}

/* Process names, apart from the per-CPU counters so that exec can rename. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, char[16]);
} comms SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mp_cpu);
} cpu SEC(".maps");

static __always_inline struct mp_cpu *get_cpu(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&cpu, &zero);
}

static __always_inline void count_lost(int why)
{
	struct mp_cpu *c = get_cpu();

	if (c)
		c->totals.lost[why]++;
}

static __always_inline struct mp_task_stat *get_task_stat(__u32 tgid)
{
	struct mp_task_stat *ts, zero = {};

	ts = bpf_map_lookup_elem(&task_stats, &tgid);
	if (ts)
		return ts;
	if (bpf_map_update_elem(&task_stats, &tgid, &zero, BPF_NOEXIST)) {
		if (bpf_map_lookup_elem(&task_stats, &tgid) == NULL) {
			count_lost(MP_LOST_TASK_MAP_FULL);
			return NULL;
		}
	} else {
		struct mp_cpu *c = get_cpu();

		if (c) /* how full the map is, for user space's drain */
			c->totals.task_rows_made++;
	}
	return bpf_map_lookup_elem(&task_stats, &tgid);
}

/* Move the pending counters of the slot's task into the per-task map. */
static __always_inline void flush(struct mp_cpu *c)
{
	struct mp_task_stat *ts;

	if (!c->in_target || !c->tgid)
		return;
	c->seq++;
	ts = get_task_stat(c->key);
	if (ts)
		mp_task_stat_add(ts, &c->pending);
	__builtin_memset(&c->pending, 0, sizeof(c->pending));
	c->seq++;
}

/*
 * This CPU's slot, holding the current task: the fast path is one per-CPU
 * lookup and two compares. On another task, the last one's counters are
 * flushed and the new one's verdict is taken (and its name kept).
 */
static __always_inline struct mp_cpu *cpu_for_current(bool btf)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct mp_cpu *c = get_cpu();
	__u64 gen = migrate_gen;

	if (!c)
		return NULL;
	if (c->tgid == tgid && c->gen == gen && migrate_tp_live && tgid)
		return c;
	flush(c);
	c->tgid = tgid;
	c->key = 0;
	c->gen = gen;
	c->in_target = tgid && current_in_target(btf);
	if (c->in_target) {
		__u32 key = slot_key(c);
		char comm[16];

		bpf_get_current_comm(comm, sizeof(comm));
		bpf_map_update_elem(&comms, &key, comm, BPF_NOEXIST);
	}
	return c;
}

#endif
