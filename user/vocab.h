/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reports' vocabulary (vocab.c): the memory.stat categories, the
 * concerns hooks are chosen for, the overhead's parts and the pinned kinds, each with its name as documents spell
 * it, a one-line meaning and the charts' colour. Attribution, the
 * renderers and the tests take the names from here; docs/report.schema.json
 * lists the concerns too, and tests/unit/test_vocab.c holds it to this list.
 */
#ifndef MEMPROBE_VOCAB_H
#define MEMPROBE_VOCAB_H

#include <stdbool.h>

#include <linux/types.h> /* memprobe.h's __u64 */
#include "memprobe.h" /* enum mp_cat (bpf/categories.h), enum mp_unit, mp_cat_part */

/*
 * What a hook is chosen for: one ladder of hooks each (attr_plan.c), in
 * this order. X(ID, id, name, meaning): enum mp_concern's MP_CONCERN_<ID>,
 * struct mp_hook's concern as documents spell it, the name people read,
 * what the hook tells.
 */
#define MP_CONCERNS(X)								\
	X(FAULTS, "faults", "page faults",					\
	  "page faults per process (the kernel's counters, or a hook per fault)") \
	X(ALLOC, "alloc", "page allocation",					\
	  "pages allocated, by order, GFP flags and kernel stack")		\
	X(FREE, "free", "page free",						\
	  "pages freed: what a tracked page's allocation no longer holds")	\
	X(MIGRATE, "migrate", "cgroup migrations",				\
	  "processes moved into or out of the target cgroup")			\
	X(COMM, "comm", "process names",					\
	  "a process's name as exec sets it")					\
	X(OOM, "oom", "OOM kills",						\
	  "the victims of the OOM killer, by name")				\
	X(MEMCG, "memcg", "memcg stat updates",					\
	  "each memory.stat category's changes, by process")			\
	X(CHARGE, "charge", "memcg charge",					\
	  "the charges against the cgroup's limit, by process")

enum mp_concern {
#define MP_CONCERN_ENUM(ID, ...) MP_CONCERN_##ID,
	MP_CONCERNS(MP_CONCERN_ENUM)
#undef MP_CONCERN_ENUM
	MP_NR_CONCERNS,
};

/*
 * The overhead's parts that are no category (overhead.c): indices of their
 * own after enum mp_cat's. X(ID, id, meaning, colour): MP_OVH_<ID>, the
 * overhead object's category, what it holds, the charts' colour (NULL:
 * grey).
 */
#define MP_OVERHEAD_PARTS(X)							\
	X(KERNEL_OTHER, "kernel_other",						\
	  "kernel memory (kmem) none of its itemised categories holds", "#bab0ac") \
	X(PAGE_CACHE, "page_cache",						\
	  "file less shmem: the page cache proper", "#59a14f")			\
	X(ANON_UNMAPPED, "anon_unmapped",					\
	  "anon no process maps any more and still charged (a munmap's TLB "	\
	  "batch, pages a pipe or a pin holds)", NULL)

enum mp_ovh_part {
	MP_OVH_BEFORE_PARTS_ = MP_NR_CATS - 1,
#define MP_OVH_ENUM(ID, ...) MP_OVH_##ID,
	MP_OVERHEAD_PARTS(MP_OVH_ENUM)
#undef MP_OVH_ENUM
	MP_OVH_NR_CATS, /* the categories and the parts */
};

/*
 * What the locked bytes of a mapping are (smaps; pinned.c), in the pinned
 * object's order. X(ID, id, meaning): MP_PIN_<ID>, the pinned object's
 * name (its tasks' category, its *_bytes), what it holds.
 */
#define MP_PIN_KINDS(X)								\
	X(SHMEM, "shmem", "locked shared memory: shmem, tmpfs, SysV segments")	\
	X(ANON, "anon", "locked anonymous memory: mlock'd heaps and stacks")	\
	X(FILE, "file", "locked pages of files mapped from disk")

enum mp_pin_kind {
#define MP_PIN_ENUM(ID, ...) MP_PIN_##ID,
	MP_PIN_KINDS(MP_PIN_ENUM)
#undef MP_PIN_ENUM
	MP_NR_PIN_KINDS,
};

/* One word of the vocabulary. */
struct mp_term {
	const char *id;       /* as documents spell it */
	const char *name;     /* for people */
	const char *meaning;  /* one line */
	const char *colour;   /* the charts'; NULL: none of its own */
};

/* By MP_OVH_<ID> - MP_NR_CATS. */
extern const struct mp_term mp_overhead_parts[MP_OVH_NR_CATS - MP_NR_CATS];

/* By enum mp_pin_kind; mp_pin_kind_names[k] is mp_pin_kinds[k].id. */
extern const struct mp_term mp_pin_kinds[MP_NR_PIN_KINDS];
extern const char *const mp_pin_kind_names[MP_NR_PIN_KINDS];

/* By enum mp_concern. */
extern const struct mp_term mp_concerns[MP_NR_CONCERNS];

/* What user space knows of a category, from bpf/categories.h. */
struct mp_cat_info {
	const char *name;        /* memory.stat's key on v2, and the reports' name */
	const char *v1_key;      /* v1's hierarchical key; NULL: v1 has none */
	enum mp_unit unit;       /* of the kernel's item (documents: bytes, always) */
	enum mp_cat_part part;   /* what it is a part of */
	const char *item_type;   /* the kernel's stat item: enum type, enumerator */
	const char *item;
	const char *alt_type;    /* another kernel's item, or NULL */
	const char *alt_item;
};

/* By enum mp_cat. Item names may carry a CO-RE flavour (a ___suffix, not
 * in the kernel's name: mp_core_name_eq). */
extern const struct mp_cat_info mp_cats[MP_NR_CATS];

/* Names of enum mp_cat, as memory.stat spells them (mp_cats[c].name). */
extern const char *const mp_cat_names[MP_NR_CATS];

/* A category's meaning in one line. */
const char *mp_cat_meaning(int cat);

/* The charts' colour of a category, or of another name a chart draws
 * (an overhead part: page_cache, kernel_other); a grey for any other name. */
const char *mp_vocab_colour(const char *name);

/* Is name (from the kernel's BTF) the CO-RE name flavoured, which may carry
 * a ___suffix that CO-RE ignores? */
bool mp_core_name_eq(const char *name, const char *flavoured);

#endif
