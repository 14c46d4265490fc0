/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version shims that need code of their own, each with the change
 * that made it necessary. Nothing is keyed on a version number. The other
 * differences are handled where they arise: CO-RE existence checks on stat
 * items (cat_of in memprobe.bpf.c: 5.10 lacks MEMCG_KMEM and a per-memcg
 * NR_PAGETABLE, 7.x MEMCG_VMALLOC), and read-only flags user space sets from
 * the kernel's BTF before load (memcg_val_in_pages: the 6.13+ memcg
 * tracepoints pass pages; have_task_btf: bpf_get_current_task_btf() since
 * 5.11; mark_victim_has_task: oom:mark_victim's task argument since 6.8).
 */
#ifndef MEMPROBE_COMPAT_BPF_H
#define MEMPROBE_COMPAT_BPF_H

#define CGROUP_SUBSYS_COUNT_MAX 16

/* FAULT_FLAG_USER became a member of enum fault_flag in v5.17 ("mm/doc:
 * turn fault flags into an enum"); before, it was the define (1 << 6), which
 * no BTF carries, and it has kept that value. */
static __always_inline unsigned int fault_flag_user(void)
{
	if (bpf_core_enum_value_exists(enum fault_flag, FAULT_FLAG_USER))
		return bpf_core_enum_value(enum fault_flag, FAULT_FLAG_USER);
	return 1U << 6;
}

/*
 * vmalloc memory in memory.stat: the memcg_stat_item MEMCG_VMALLOC up to 6.x
 * (absent on 5.10), a node_stat_item NR_VMALLOC updated per lruvec by 7.2
 * (seen in Debian's 7.2 and 7.3 BTF: MEMCG_VMALLOC is gone there). The
 * vmlinux.h built against (6.18) has only the first; this flavour names the
 * second for CO-RE, which drops the ___ suffix of enum and enumerator names.
 */
enum node_stat_item___7x {
	NR_VMALLOC___7x = 0,
};

#endif
