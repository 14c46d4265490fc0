/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The memory.stat categories memprobe attributes, declared once. Everything
 * that knows a category is expanded from this table: enum mp_cat
 * (memprobe.h), the item-to-category tables the BPF side indexes by the
 * item's value (learnt from the kernel's BTF by kernel_btf.c; cat_of in
 * memprobe.bpf.c), the BTF item check (kernel_btf.c), and mp_cat_names
 * and the v2/v1 memory.stat keys (mp_cats in vocab.c, beside each
 * category's meaning and colour).
 *
 * One line per category, in enum mp_cat order:
 *
 *   X(ID, name, v1_key, unit, part, T, E[, T2, E2])
 *
 *   ID      enum mp_cat's MP_CAT_<ID>
 *   name    its memory.stat key on v2, the name reports use
 *   v1_key  v1's hierarchical memory.stat key, NULL when v1 has none
 *   unit    what one unit of the kernel's item is: PAGES, BYTES, KIB or
 *           HPAGES (enum mp_unit); the memcg tracepoints (6.13+) pass pages
 *           anyway
 *   part    what it is a part of (enum mp_cat_part): USAGE (the usage itself
 *           is the sum of these), FILE (inside file), KERNEL (inside kernel,
 *           MEMCG_KMEM's total), ANON (inside anon)
 *   T, E    the kernel's stat item: its enum type and enumerator, as CO-RE
 *           names them (user space looks their values up in BTF).
 *           node_stat_item items come through mod_memcg_lruvec_state,
 *           memcg_stat_item ones through mod_memcg_state. A
 *           ___suffix is a CO-RE flavour (compat.bpf.h): the kernel's name
 *           is without it.
 *   T2, E2  another kernel's item for the same category, if any
 *
 * Adding a category is one line here (then the tests' expectations of the
 * category list, and docs/report-format.md).
 */
#ifndef MEMPROBE_CATEGORIES_H
#define MEMPROBE_CATEGORIES_H

#define MP_CATEGORIES(X)							\
	X(ANON, "anon", "total_rss", PAGES, USAGE,				\
	  node_stat_item, NR_ANON_MAPPED)					\
	X(FILE, "file", "total_cache", PAGES, USAGE,				\
	  node_stat_item, NR_FILE_PAGES)					\
	X(SHMEM, "shmem", "total_shmem", PAGES, FILE,				\
	  node_stat_item, NR_SHMEM)						\
	/* a zone stat on 5.10: no per-memcg count there */			\
	X(PAGETABLES, "pagetables", NULL, PAGES, KERNEL,			\
	  node_stat_item, NR_PAGETABLE)						\
	X(SEC_PAGETABLES, "sec_pagetables", NULL, PAGES, KERNEL,		\
	  node_stat_item, NR_SECONDARY_PAGETABLE)				\
	X(KERNEL_STACK, "kernel_stack", NULL, KIB, KERNEL,			\
	  node_stat_item, NR_KERNEL_STACK_KB)					\
	X(SLAB_RECLAIMABLE, "slab_reclaimable", NULL, BYTES, KERNEL,		\
	  node_stat_item, NR_SLAB_RECLAIMABLE_B)				\
	X(SLAB_UNRECLAIMABLE, "slab_unreclaimable", NULL, BYTES, KERNEL,	\
	  node_stat_item, NR_SLAB_UNRECLAIMABLE_B)				\
	X(PERCPU, "percpu", NULL, BYTES, KERNEL,				\
	  memcg_stat_item, MEMCG_PERCPU_B)					\
	/* charged apart from kmem */						\
	X(SOCK, "sock", NULL, PAGES, USAGE,					\
	  memcg_stat_item, MEMCG_SOCK)						\
	/* absent on 5.10; a node_stat_item, updated per lruvec, by 7.2 */	\
	X(VMALLOC, "vmalloc", NULL, PAGES, KERNEL,				\
	  memcg_stat_item, MEMCG_VMALLOC, node_stat_item___7x, NR_VMALLOC___7x)	\
	/* MEMCG_KMEM: every kmem charge; absent on 5.10 */			\
	X(KERNEL, "kernel", NULL, PAGES, USAGE,					\
	  memcg_stat_item, MEMCG_KMEM)						\
	/* transparent huge pages (PMD-mapped), parts of anon, file, shmem */	\
	X(ANON_THP, "anon_thp", "total_rss_huge", HPAGES, ANON,			\
	  node_stat_item, NR_ANON_THPS)						\
	X(FILE_THP, "file_thp", NULL, HPAGES, FILE,				\
	  node_stat_item, NR_FILE_THPS)						\
	X(SHMEM_THP, "shmem_thp", NULL, HPAGES, FILE,				\
	  node_stat_item, NR_SHMEM_THPS)

/* What one unit of a kernel stat item is. */
enum mp_unit {
	MP_UNIT_PAGES,
	MP_UNIT_BYTES,
	MP_UNIT_KIB,
	/* pages, where the kernel counted huge pages (HPAGE_PMD_NR pages
	 * each) before 5.13 ("mm: memcontrol: convert NR_ANON_THPS account
	 * to pages" and its NR_FILE_THPS, NR_SHMEM_THPS twins): an update
	 * there is +-1 a huge page, since +-HPAGE_PMD_NR pages, and the BPF
	 * side tells them apart by the value (memprobe.bpf.c, on_memcg_stat) */
	MP_UNIT_HPAGES,
};

/* What a category is a part of (see part above). */
enum mp_cat_part {
	MP_PART_USAGE,
	MP_PART_FILE,
	MP_PART_KERNEL,
	MP_PART_ANON,
};

#endif
