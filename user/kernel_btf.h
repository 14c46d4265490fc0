/* SPDX-License-Identifier: GPL-2.0 */
/* The kernel's facts, learnt from its BTF (kernel_btf.c). */
#ifndef MEMPROBE_KERNEL_BTF_H
#define MEMPROBE_KERNEL_BTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h" /* MP_NR_CONCERNS */
#include "memprobe.h" /* MP_NR_CATS, MP_MAX_ITEMS */

/* Rungs in a concern's ladder at most (attr_plan.c). */
#define MAX_RUNGS 8

/*
 * What memprobe needs to know of the kernel's BTF, learnt in one pass over
 * its types (a lookup by name is a linear scan; a dozen of them cost more
 * than the pass), so that the BTF is freed before libbpf loads its own copy
 * for CO-RE.
 */
struct mp_kfacts {
	int fn_id[MP_NR_CONCERNS][MAX_RUNGS][2]; /* BTF id of each rung's tracepoint
						  * typedef or function; 0: absent */
	bool cat[MP_NR_CATS];         /* the category's stat item exists */
	/* the category of each stat item value, plus one (0: none): for
	 * node_stat_item (mod_memcg_lruvec_state) and memcg_stat_item
	 * (mod_memcg_state); the BPF side's tables */
	uint8_t lruvec_item_cat[MP_MAX_ITEMS], memcg_item_cat[MP_MAX_ITEMS];
	/*
	 * Where each byte-sized category's counter sits in the kernel's per-CPU
	 * memcg counters, struct memcg_vmstats_percpu's state[] (6.11+: items
	 * are mapped to a dense index there), MP_NO_STATE_INDEX where not
	 * known: the BPF side reads it where the memcg tracepoints pass those
	 * items rounded to pages (memprobe.bpf.c, byte_exact). Learnt from
	 * what follows (state_indices in kernel_btf.c).
	 */
	uint8_t cat_state_index[MP_NR_CATS];
	int64_t cat_item_value[MP_NR_CATS]; /* the category's stat item; -1: absent */
	bool cat_item_node[MP_NR_CATS];     /* ... an enum node_stat_item one */
	uint32_t vmstat_len;          /* memcg_vmstats_percpu's state[] length, 0:
				       * absent or not of 8-byte counters */
	uint32_t node_stat_len;       /* lruvec_stats_percpu's: the node items' part */
	int64_t memcg_item_first;     /* enum memcg_stat_item: its least value, */
	int64_t memcg_item_end;       /* and MEMCG_NR_STAT's; -1: absent */
	int64_t node_other_first;     /* the least node_stat_item that is no LRU
				       * list and no byte-sized category's item */
	uint64_t gfp_account;         /* __GFP_ACCOUNT */
	uint64_t gfp_zero;            /* __GFP_ZERO */
	bool mark_victim_has_task;    /* oom:mark_victim passes a task_struct * */
	bool have_task_btf;           /* bpf_get_current_task_btf() exists */
	bool kernel_btf;              /* the BTF is the running kernel's own (set by
				       * the caller of mp_attr_learn_btf) */
};

/* A function (tp false) or tracepoint (tp true: its btf_trace_NAME
 * typedef) whose BTF id goes to fn_id[c][i][j]: rung i of concern c, its
 * program j. */
struct mp_kbtf_fn {
	const char *name;
	bool tp;
	int c, i, j;
};

/*
 * Fill k from the BTF at path (a raw BTF file or an ELF with .BTF), or with
 * path NULL from the kernel's own (/sys/kernel/btf/vmlinux, else where
 * libbpf finds a vmlinux), with the BTF ids of the nfns functions fns names.
 * Returns 0, or -errno with err saying why (k then zeroed).
 */
int mp_kbtf_learn(const char *path, const struct mp_kbtf_fn *fns, int nfns, struct mp_kfacts *k,
		  char *err, size_t errlen);

/* Will path do as --btf (libbpf parses it as BTF, raw or an ELF's .BTF, and
 * it holds a kernel's functions)? NULL when it will; else the problem in
 * problem (n bytes) and the fix returned. Parses the file. */
const char *mp_kbtf_check(const char *path, char *problem, size_t n);

/* libbpf's messages off, unless MEMPROBE_DEBUG is set (2: its debug lines). */
void mp_kbtf_libbpf_quiet(void);

#endif
