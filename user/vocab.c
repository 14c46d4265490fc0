// SPDX-License-Identifier: GPL-2.0
/*
 * The reports' vocabulary (vocab.h): the concerns, the memory.stat
 * categories (expanded from bpf/categories.h) with their meanings and
 * colours, the overhead's parts, the pinned kinds. One place for a name, so the ladders, the documents, the
 * renderers and the tests cannot spell it two ways.
 */
#include "vocab.h"

#include <stddef.h>
#include <string.h>

const struct mp_term mp_concerns[MP_NR_CONCERNS] = {
#define MP_CONCERN_TERM(ID, id_, name_, meaning_)				\
	[MP_CONCERN_##ID] = { .id = id_, .name = name_, .meaning = meaning_ },
	MP_CONCERNS(MP_CONCERN_TERM)
#undef MP_CONCERN_TERM
};

const struct mp_cat_info mp_cats[MP_NR_CATS] = {
#define MP_CAT_INFO(id, name_, v1, unit_, part_, T, E, ...)			\
	[MP_CAT_##id] = {							\
		.name = name_, .v1_key = v1, .unit = MP_UNIT_##unit_,		\
		.part = MP_PART_##part_, .item_type = #T, .item = #E,		\
		__VA_OPT__(MP_CAT_ALT(__VA_ARGS__))				\
	},
#define MP_CAT_ALT(T, E) .alt_type = #T, .alt_item = #E,
	MP_CATEGORIES(MP_CAT_INFO)
#undef MP_CAT_ALT
#undef MP_CAT_INFO
};

const char *const mp_cat_names[MP_NR_CATS] = {
#define MP_CAT_NAME(id, name, ...) [MP_CAT_##id] = name,
	MP_CATEGORIES(MP_CAT_NAME)
#undef MP_CAT_NAME
};

/* Each category's meaning and colour (NULL: the default grey). */
static const struct {
	const char *meaning, *colour;
} cat_terms[MP_NR_CATS] = {
	[MP_CAT_ANON] = { "anonymous memory: heaps, stacks, private mappings", "#4e79a7" },
	[MP_CAT_FILE] = { "the page cache: file pages, shmem and tmpfs included", "#59a14f" },
	[MP_CAT_SHMEM] = { "shared memory and tmpfs (inside file)", "#8cd17d" },
	[MP_CAT_PAGETABLES] = { "page tables of the cgroup's processes", "#e15759" },
	[MP_CAT_SEC_PAGETABLES] = { "secondary page tables (KVM's, IOMMU's)", "#ff9d9a" },
	[MP_CAT_KERNEL_STACK] = { "kernel stacks of the cgroup's threads", "#b6992d" },
	[MP_CAT_SLAB_RECLAIMABLE] = { "slab the kernel can reclaim (dentries, inodes)", "#9c755f" },
	[MP_CAT_SLAB_UNRECLAIMABLE] = { "slab the kernel cannot reclaim", "#d4a6c8" },
	[MP_CAT_PERCPU] = { "per-CPU kernel allocations", "#76b7b2" },
	[MP_CAT_SOCK] = { "network socket buffers", "#b07aa1" },
	[MP_CAT_VMALLOC] = { "vmalloc'd kernel memory (drivers, BPF maps)", "#edc948" },
	[MP_CAT_KERNEL] = { "all kernel memory charged to the cgroup (kmem)", "#f28e2b" },
	[MP_CAT_ANON_THP] = { "anonymous transparent huge pages (inside anon)", NULL },
	[MP_CAT_FILE_THP] = { "file transparent huge pages (inside file)", NULL },
	[MP_CAT_SHMEM_THP] = { "shmem transparent huge pages (inside shmem)", NULL },
};

const struct mp_term mp_overhead_parts[MP_OVH_NR_CATS - MP_NR_CATS] = {
#define MP_OVH_TERM(ID, id_, meaning_, colour_)					\
	[MP_OVH_##ID - MP_NR_CATS] = { .id = id_, .name = id_, .meaning = meaning_,	\
				       .colour = colour_ },
	MP_OVERHEAD_PARTS(MP_OVH_TERM)
#undef MP_OVH_TERM
};

const struct mp_term mp_pin_kinds[MP_NR_PIN_KINDS] = {
#define MP_PIN_TERM(ID, id_, meaning_)						\
	[MP_PIN_##ID] = { .id = id_, .name = id_, .meaning = meaning_ },
	MP_PIN_KINDS(MP_PIN_TERM)
#undef MP_PIN_TERM
};

const char *const mp_pin_kind_names[MP_NR_PIN_KINDS] = {
#define MP_PIN_NAME(ID, id_, ...) [MP_PIN_##ID] = id_,
	MP_PIN_KINDS(MP_PIN_NAME)
#undef MP_PIN_NAME
};

const char *mp_cat_meaning(int cat)
{
	return cat >= 0 && cat < MP_NR_CATS ? cat_terms[cat].meaning : NULL;
}

const char *mp_vocab_colour(const char *name)
{
	for (int c = 0; c < MP_NR_CATS; c++)
		if (cat_terms[c].colour && !strcmp(mp_cat_names[c], name))
			return cat_terms[c].colour;
	for (int i = 0; i < MP_OVH_NR_CATS - MP_NR_CATS; i++)
		if (mp_overhead_parts[i].colour && !strcmp(mp_overhead_parts[i].id, name))
			return mp_overhead_parts[i].colour;
	return "#79706e";
}

bool mp_core_name_eq(const char *name, const char *flavoured)
{
	size_t n = strlen(name);

	return !strncmp(name, flavoured, n) &&
	       (!flavoured[n] || !strncmp(flavoured + n, "___", 3));
}
