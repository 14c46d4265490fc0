// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's facts, learnt from its BTF (kernel_btf.h): in one pass over
 * the types (btf_scan.c), the BTF ids of the functions and tracepoints the
 * hook ladders name, the memory.stat categories' stat items and where
 * their per-CPU counters sit (state_indices), __GFP_ACCOUNT and
 * __GFP_ZERO, mark_victim's arguments, bpf_get_current_task_btf; which BTF
 * (--btf's file, sysfs's, libbpf's search) and whether a file will do as
 * --btf. The hook ladders and their judging stay in attr_plan.c.
 */
#include "kernel_btf.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "btf_scan.h"
#include "vocab.h" /* mp_cats, mp_core_name_eq */

/* libbpf's messages, shown only with MEMPROBE_DEBUG (2: its debug lines too). */
static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("MEMPROBE_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("MEMPROBE_DEBUG") &&
	    strcmp(getenv("MEMPROBE_DEBUG"), "2") == 0)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

void mp_kbtf_libbpf_quiet(void)
{
	libbpf_set_print(quiet_print);
}

/* oom:mark_victim took (int pid) until 6.8, (struct task_struct *, uid_t) since. */
static bool mark_victim_has_task(const struct mp_btf *btf, const struct btf_type *td)
{
	const struct btf_type *t = mp_btf_type(btf, (uint32_t)mp_btf_resolve(btf, td->type));

	if (!t || !btf_is_ptr(t))
		return false;
	t = mp_btf_type(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	t = mp_btf_type(btf, (uint32_t)mp_btf_resolve(btf, btf_params(t)[1].type));
	return t && btf_is_ptr(t);
}

/* Is enumerator m of enum type the stat item type_, item (CO-RE names)? */
static bool is_item(const char *type, const char *m, const char *type_, const char *item)
{
	return type_ && mp_core_name_eq(type, type_) && mp_core_name_eq(m, item);
}

/* Does enum type hold a category's stat item? */
static bool is_item_enum(const char *type)
{
	for (int c = 0; c < MP_NR_CATS; c++)
		if (mp_core_name_eq(type, mp_cats[c].item_type) ||
		    (mp_cats[c].alt_type && mp_core_name_eq(type, mp_cats[c].alt_type)))
			return true;
	return false;
}

/* Enumerator value v of enum type is category c's item: which hook passes
 * it (node_stat_item: mod_memcg_lruvec_state; memcg_stat_item:
 * mod_memcg_state) and where it goes in that hook's table. A value past the
 * tables leaves the category unseen, as a missing item does. */
static void learn_item(struct mp_kfacts *k, const char *type, int64_t v, int c)
{
	uint8_t *table = mp_core_name_eq(type, "node_stat_item") ? k->lruvec_item_cat :
			 k->memcg_item_cat;

	if (v < 0 || v >= MP_MAX_ITEMS)
		return;
	table[v] = (uint8_t)(c + 1);
	k->cat[c] = true;
	k->cat_item_value[c] = v;
	k->cat_item_node[c] = table == k->lruvec_item_cat;
}

/* Is enumerator m of enum node_stat_item an LRU list (NR_LRU_BASE and the
 * five lists after it) or a byte-sized category's item? */
static bool lru_or_byte_item(const char *m)
{
	static const char *const lru[] = {
		"NR_LRU_BASE", "NR_INACTIVE_ANON", "NR_ACTIVE_ANON", "NR_INACTIVE_FILE",
		"NR_ACTIVE_FILE", "NR_UNEVICTABLE",
	};

	for (size_t i = 0; i < sizeof(lru) / sizeof(lru[0]); i++)
		if (!strcmp(m, lru[i]))
			return true;
	for (int c = 0; c < MP_NR_CATS; c++)
		if (mp_cats[c].unit == MP_UNIT_BYTES &&
		    mp_core_name_eq(m, mp_cats[c].item))
			return true;
	return false;
}

/* What state_indices() needs of the two stat item enums. */
static void learn_item_bounds(const char *type, const char *m, int64_t v, struct mp_kfacts *k)
{
	if (!strcmp(type, "node_stat_item") && !lru_or_byte_item(m) &&
	    (k->node_other_first < 0 || v < k->node_other_first))
		k->node_other_first = v;
	if (strcmp(type, "memcg_stat_item"))
		return;
	if (!strcmp(m, "MEMCG_NR_STAT"))
		k->memcg_item_end = v;
	else if (k->memcg_item_first < 0 || v < k->memcg_item_first)
		k->memcg_item_first = v;
}

static void learn_enum(const struct mp_btf *btf, const struct btf_type *t, const char *name,
		       struct mp_kfacts *k)
{
	const struct btf_enum *e = btf_enum(t);

	for (int i = 0; i < btf_vlen(t); i++) {
		const char *m = mp_btf_str(btf, e[i].name_off);

		if (!name[0]) {
			/* __GFP_ACCOUNT: since 6.10 an enumerator ___GFP_ACCOUNT_BIT of an
			 * anonymous enum, which CO-RE cannot name; before, a define at
			 * bit 22, which BTF lacks (the default) */
			if (strcmp(m, "___GFP_ACCOUNT_BIT") == 0)
				k->gfp_account = 1ULL << e[i].val;
			else if (strcmp(m, "___GFP_ZERO_BIT") == 0)
				k->gfp_zero = 1ULL << e[i].val;
		} else if (strcmp(name, "bpf_func_id") == 0) {
			if (strcmp(m, "BPF_FUNC_get_current_task_btf") == 0)
				k->have_task_btf = true;
		} else {
			for (int c = 0; c < MP_NR_CATS; c++)
				if (is_item(name, m, mp_cats[c].item_type, mp_cats[c].item) ||
				    is_item(name, m, mp_cats[c].alt_type, mp_cats[c].alt_item))
					learn_item(k, name, e[i].val, c);
			learn_item_bounds(name, m, e[i].val, k);
		}
	}
}

/* The length of struct t's member "state", an array of 8-byte counters;
 * 0 when it has none such. */
static uint32_t state_len(const struct mp_btf *btf, const struct btf_type *t)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		const struct btf_type *a, *e;
		int id;

		if (strcmp(mp_btf_str(btf, m->name_off), "state"))
			continue;
		id = mp_btf_resolve(btf, m->type);
		a = id > 0 ? mp_btf_type(btf, (uint32_t)id) : NULL;
		if (!a || !btf_is_array(a))
			return 0;
		id = mp_btf_resolve(btf, btf_array(a)->type);
		e = id > 0 ? mp_btf_type(btf, (uint32_t)id) : NULL;
		return e && btf_is_int(e) && e->size == 8 ? btf_array(a)->nelems : 0;
	}
	return 0;
}

/*
 * Each byte-sized category's index in memcg_vmstats_percpu's state[]
 * (memprobe.bpf.c, byte_exact). Since 6.11 the kernel keeps there only the
 * items it tracks per memcg, in a dense array: first the node_stat_item
 * ones (memcg_node_stat_items[], lruvec_stats_percpu's state[] long), then
 * the memcg_stat_item ones (memcg_stat_items[]), each list in its enum's
 * order. The LRU lists and the two slab items come first in both the enum
 * and the list: a node item with nothing else below it in the enum sits at
 * its own value. Every memcg_stat_item is tracked (the lengths say so when
 * state[] is as long as both lists): one sits at the node part's length
 * plus its rank in its enum. What this cannot tell is left unread; what it
 * tells is checked update by update (the tracepoint's pages must agree with
 * the counter's move: mismatched_updates).
 */
static void state_indices(struct mp_kfacts *k)
{
	bool memcg_dense = k->node_stat_len && k->memcg_item_first >= 0 &&
			   k->memcg_item_end > k->memcg_item_first &&
			   k->vmstat_len == k->node_stat_len +
					    (uint64_t)(k->memcg_item_end - k->memcg_item_first);

	for (int c = 0; c < MP_NR_CATS; c++) {
		int64_t v = k->cat_item_value[c], i = -1;

		k->cat_state_index[c] = MP_NO_STATE_INDEX;
		if (mp_cats[c].unit != MP_UNIT_BYTES || v < 0 || !k->vmstat_len)
			continue;
		if (k->cat_item_node[c] && (k->node_other_first < 0 || v < k->node_other_first))
			i = v < k->node_stat_len ? v : -1;
		else if (!k->cat_item_node[c] && memcg_dense && v >= k->memcg_item_first &&
			 v < k->memcg_item_end)
			i = k->node_stat_len + (v - k->memcg_item_first);
		if (i >= 0 && i < k->vmstat_len && i < MP_NO_STATE_INDEX)
			k->cat_state_index[c] = (uint8_t)i;
	}
}

/* The functions and tracepoints the caller wants ids of, and a bit per
 * (tracepoint?, first two bytes) of their names: vmlinux has tens of
 * thousands of functions, and the bit turns away almost all of them
 * without a string compare. */
struct wanted {
	const struct mp_kbtf_fn *w;
	int n;
	uint8_t bits[2][65536 / 8];
};

static unsigned int name_key(const char *name)
{
	return (unsigned char)name[0] | (name[0] ? (unsigned char)name[1] << 8 : 0);
}

static void want_fns(struct wanted *wt, const struct mp_kbtf_fn *fns, int n)
{
	wt->w = fns;
	wt->n = n;
	memset(wt->bits, 0, sizeof(wt->bits));
	for (int i = 0; i < n; i++) {
		unsigned int key = name_key(fns[i].name);

		wt->bits[fns[i].tp][key / 8] |= (uint8_t)(1 << key % 8);
	}
}

/* Record id as the BTF id of every wanted function (tracepoint when tp)
 * named name. */
static void learn_fn(const struct wanted *wt, const char *name, bool tp, int id,
		     struct mp_kfacts *k)
{
	unsigned int key = name_key(name);

	if (!(wt->bits[tp][key / 8] & (1 << key % 8)))
		return;
	for (int n = 0; n < wt->n; n++)
		if (wt->w[n].tp == tp && !strcmp(name, wt->w[n].name))
			k->fn_id[wt->w[n].c][wt->w[n].i][wt->w[n].j] = id;
}

/* One pass over the types: the wanted tracepoint typedefs (btf_trace_X)
 * and functions, and the few enums memprobe reads. */
static void learn_kernel(const struct mp_btf *btf, const struct mp_kbtf_fn *fns, int nfns,
			 struct mp_kfacts *k)
{
	uint32_t n = btf->nr_types;
	static struct wanted wt; /* 8 KiB: not on the stack */

	want_fns(&wt, fns, nfns);
	k->gfp_account = 1ULL << 22;
	k->memcg_item_first = k->memcg_item_end = k->node_other_first = -1;
	for (int c = 0; c < MP_NR_CATS; c++)
		k->cat_item_value[c] = -1;
	k->gfp_zero = 1ULL << 8; /* ___GFP_ZERO from 2.6 to 6.9 */
	for (uint32_t id = 1; id < n; id++) {
		const struct btf_type *t = mp_btf_type(btf, id);
		int kind = btf_kind(t);
		const char *name;
		bool tp;

		if (kind != BTF_KIND_ENUM && kind != BTF_KIND_TYPEDEF && kind != BTF_KIND_FUNC &&
		    kind != BTF_KIND_STRUCT)
			continue;
		name = mp_btf_str(btf, t->name_off);
		if (kind == BTF_KIND_STRUCT) {
			if (!strcmp(name, "memcg_vmstats_percpu"))
				k->vmstat_len = state_len(btf, t);
			else if (!strcmp(name, "lruvec_stats_percpu"))
				k->node_stat_len = state_len(btf, t);
			continue;
		}
		if (kind == BTF_KIND_ENUM) {
			if (!name[0] || !strcmp(name, "bpf_func_id") || is_item_enum(name))
				learn_enum(btf, t, name, k);
			continue;
		}
		tp = kind == BTF_KIND_TYPEDEF;
		if (tp && strncmp(name, "btf_trace_", 10))
			continue;
		if (tp && strcmp(name, "btf_trace_mark_victim") == 0)
			k->mark_victim_has_task = mark_victim_has_task(btf, t);
		learn_fn(&wt, tp ? name + 10 : name, tp, (int)id, k);
	}
	state_indices(k);
}

/* The --btf file: raw BTF in this host's byte order walked in place; an
 * ELF's .BTF, or the other byte order, through libbpf. Returns 0 or -errno. */
static int open_btf_file(const char *path, struct mp_btf *b)
{
	int ret = mp_btf_load(path, b);
	const void *raw;
	struct btf *btf;
	__u32 size;

	if (ret != -EPROTO)
		return ret;
	if (!(btf = btf__parse(path, NULL)))
		return -errno;
	btf__set_endianness(btf, __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ?
			    BTF_LITTLE_ENDIAN : BTF_BIG_ENDIAN);
	raw = btf__raw_data(btf, &size);
	ret = raw ? mp_btf_from_data(raw, size, b) : -errno;
	btf__free(btf);
	return ret;
}

/* The kernel's BTF: sysfs's, walked in place; where that fails, libbpf's
 * search of /boot and /lib/modules, whose errors the caller reports. */
static int open_kernel_btf(struct mp_btf *b)
{
	const void *raw;
	struct btf *btf;
	__u32 size;
	int ret;

	if (!mp_btf_load("/sys/kernel/btf/vmlinux", b))
		return 0;
	if (!(btf = btf__load_vmlinux_btf()))
		return -errno;
	raw = btf__raw_data(btf, &size);
	ret = raw ? mp_btf_from_data(raw, size, b) : -errno;
	btf__free(btf);
	return ret;
}

int mp_kbtf_learn(const char *path, const struct mp_kbtf_fn *fns, int nfns, struct mp_kfacts *k,
		  char *err, size_t errlen)
{
	struct mp_btf btf;
	int ret;

	memset(k, 0, sizeof(*k));
	ret = path ? open_btf_file(path, &btf) : open_kernel_btf(&btf);
	if (ret && path) {
		snprintf(err, errlen, "--btf %s: not a BTF file (%s)", path,
			 ret == -EPROTO || ret == -EINVAL ? "malformed" : strerror(-ret));
		return ret;
	}
	if (ret) {
		snprintf(err, errlen, "no kernel BTF (/sys/kernel/btf/vmlinux: %s); "
			 "give one with --btf FILE (a vmlinux with .BTF, or a raw BTF file)",
			 ret == -ESRCH ? "missing, and no vmlinux with BTF under /boot or "
			 "/lib/modules" : strerror(-ret));
		return ret;
	}
	learn_kernel(&btf, fns, nfns, k);
	mp_btf_free(&btf); /* before libbpf parses its own copy: one at a time */
	return 0;
}

const char *mp_kbtf_check(const char *path, char *problem, size_t n)
{
	struct btf *btf;
	struct stat st;
	int kernel;

	if (stat(path, &st) || !S_ISREG(st.st_mode)) {
		snprintf(problem, n, "%s", errno == ENOENT ? "no such file" :
			 !S_ISREG(st.st_mode) ? "not a regular file" : strerror(errno));
		return "give a raw BTF file or a vmlinux with a .BTF section";
	}
	mp_kbtf_libbpf_quiet();
	btf = btf__parse(path, NULL);
	if (!btf) {
		/* libbpf's own codes (4000 and up, "Unknown error" to strerror)
		 * say the file is neither: its format is not one it knows */
		snprintf(problem, n, "holds no BTF (%s)",
			 errno == ENOENT ? "an ELF without a .BTF section" :
			 errno >= 4000 ? "neither a raw BTF file nor an ELF" : strerror(errno));
		return "give a raw BTF file or a vmlinux with a .BTF section";
	}
	/* a BPF object's BTF has kernel structs too, but no kernel functions */
	kernel = btf__find_by_name_kind(btf, "vfs_read", BTF_KIND_FUNC);
	btf__free(btf);
	if (kernel <= 0) {
		snprintf(problem, n, "is not a kernel's BTF (no function vfs_read)");
		return "give the running kernel's vmlinux BTF";
	}
	return NULL;
}
