// SPDX-License-Identifier: GPL-2.0
/*
 * Byte-exact slab and percpu on the memcg tracepoints (bpf/memprobe.bpf.c,
 * byte_exact): the kernels' two roundings of a byte change to the pages the
 * tracepoints pass, written here as the kernel computes them; the check
 * the BPF side applies to each counter move (mp_pages_agree) against both;
 * how user space judges a counter by its agreement (mp_bytes_read_agree);
 * and where each byte item's counter is learnt to sit in the kernel's
 * per-CPU array, from BTF built here for kernels of several layouts.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "attr_int.h"
#include "attribution.h"
#include "cgroup.h"
#include "unit.h"

#define PS 4096UL

/* 6.13-6.18's memcg_state_val_in_pages() for a byte item (unit 1): int val,
 * divided by PAGE_SIZE (unsigned long) and max'ed with 1UL, returned as int. */
static int pages_618(int val)
{
	unsigned long r;

	if (!val)
		return 0;
	r = (unsigned long)(val * 1) / PS;
	return (int)(r > 1UL ? r : 1UL);
}

/* The later kernels': |val| rounded down, at least 1, val's sign. */
static int pages_later(long val)
{
	long res;

	if (!val)
		return 0;
	res = (long)((unsigned long)labs(val) * 1 / PS);
	res = res ? res : 1;
	return (int)(val < 0 ? -res : res);
}

static void test_kernel_rounding(void)
{
	/* the figures: a negative change rounds away from zero */
	CHECK_U64((uint64_t)(int64_t)pages_618(-4500), (uint64_t)-2, "6.18: -4500 B reads -2 pages");
	CHECK_U64((uint64_t)pages_618(4500), 1, "6.18: +4500 B reads 1 page");
	CHECK_U64((uint64_t)pages_618(100), 1, "6.18: +100 B reads 1 page (at least one)");
	CHECK_U64((uint64_t)(int64_t)pages_618(-1), (uint64_t)-1, "6.18: -1 B reads -1 page");
	CHECK_U64((uint64_t)(int64_t)pages_618(-8192), (uint64_t)-2, "6.18: -2 pages exact");
	CHECK_U64((uint64_t)(int64_t)pages_later(-4500), (uint64_t)-1, "later: -4500 B reads -1");

	/* the object stock flushes just past a page of either sign: socket
	 * churn's +4200 then -4200, read +1 then -2, drifts a page a round */
	int64_t pages = 0, bytes = 0;

	for (int i = 0; i < 1000; i++) {
		pages += pages_618(4200) + pages_618(-4200);
		bytes += 4200 - 4200;
	}
	CHECK_EQ_INT(pages, -1000,
		     "6.18: 1000 rounds of +-4200 B drift %" PRId64 " pages where the bytes are %" PRId64,
		     pages, bytes);
	CHECK_EQ_INT(bytes, 0,
		     "6.18: 1000 rounds of +-4200 B drift %" PRId64 " pages where the bytes are %" PRId64,
		     pages, bytes);
}

static void test_pages_agree(void)
{
	int bad = 0, n = 0;

	/* every change within 4 pages either way, and some large ones, agree
	 * with both kernels' pages for them, and with no page count either
	 * kernel could not have given */
	for (int64_t b = -4 * (int64_t)PS - 7; b <= 4 * (int64_t)PS + 7; b++) {
		int a = pages_618((int)b), l = pages_later((long)b);

		if (!b)
			continue;
		n++;
		bad += !mp_pages_agree(b, a, PS) || !mp_pages_agree(b, l, PS);
		for (int v = -6; v <= 6; v++)
			if (v != a && v != l)
				bad += mp_pages_agree(b, v, PS);
	}
	CHECK_EQ_INT(bad, 0, "mp_pages_agree: %d of %d changes judged wrong", bad, n);
	CHECK_GT_INT(n, 0, "mp_pages_agree: %d of %d changes judged wrong", bad, n);
	for (int64_t b = 1; b < (1LL << 30); b = b * 3 + 1) {
		CHECK(mp_pages_agree(b, pages_618((int)b), PS) &&
		      mp_pages_agree(-b, pages_618((int)-b), PS) &&
		      mp_pages_agree(-b, pages_later((long)-b), PS),
		      "mp_pages_agree: +-%" PRId64 " B", b);
	}
	CHECK(!mp_pages_agree(0, 1, PS) && !mp_pages_agree(0, -1, PS) && !mp_pages_agree(0, 0, PS),
	      "mp_pages_agree: a counter that did not move agrees with nothing");
	CHECK(!mp_pages_agree(3, 2, PS) && !mp_pages_agree(-3, -2, PS),
	      "mp_pages_agree: a tiny move never agrees with 2 pages");
}

static void test_bytes_read_agree(void)
{
	CHECK(mp_bytes_read_agree(0, 0), "nothing read: nothing against it");
	CHECK(mp_bytes_read_agree(0, 16), "a few skipped runs disagree");
	CHECK(mp_bytes_read_agree(64000, 1016), "1000 of 64000, and 16");
	CHECK(!mp_bytes_read_agree(64000, 1017), "more than 1 in 64 and 16: not the item's");
	CHECK(!mp_bytes_read_agree(10, 100), "mostly disagreeing: not the item's counter");
}

/* ---- learning the counters' indices from BTF ------------------------------ */

struct layout {
	const char *what;
	bool other_node_first;   /* an untracked node item below the slab items */
	int node_len, vmstat_len; /* state[] lengths; vmstat 0: no struct */
	int elem_size;           /* bytes per counter */
	int want_slab_r, want_slab_u, want_percpu; /* -1: not known */
};

/* A kernel's BTF as far as mp_attr_learn_btf reads it for the indices. */
static int write_btf(const struct layout *l, const char *path)
{
	struct btf *btf = btf__new_empty();
	const void *raw;
	__u32 size;
	int elem, arr, node, memcg, v = 0, ret = -1;
	FILE *f;

	if (!btf)
		return -1;
	elem = btf__add_int(btf, "long", l->elem_size, BTF_INT_SIGNED);
	node = btf__add_enum(btf, "node_stat_item", 4);
	btf__add_enum_value(btf, "NR_LRU_BASE", 0);
	btf__add_enum_value(btf, "NR_INACTIVE_ANON", v++);
	btf__add_enum_value(btf, "NR_ACTIVE_ANON", v++);
	btf__add_enum_value(btf, "NR_INACTIVE_FILE", v++);
	btf__add_enum_value(btf, "NR_ACTIVE_FILE", v++);
	btf__add_enum_value(btf, "NR_UNEVICTABLE", v++);
	if (l->other_node_first)
		btf__add_enum_value(btf, "NR_ISOLATED_ANON", v++);
	btf__add_enum_value(btf, "NR_SLAB_RECLAIMABLE_B", v++);
	btf__add_enum_value(btf, "NR_SLAB_UNRECLAIMABLE_B", v++);
	btf__add_enum_value(btf, "NR_FILE_PAGES", v++);
	btf__add_enum_value(btf, "NR_ANON_MAPPED", v++);
	btf__add_enum_value(btf, "NR_VM_NODE_STAT_ITEMS", 50);
	memcg = btf__add_enum(btf, "memcg_stat_item", 4);
	btf__add_enum_value(btf, "MEMCG_SWAP", 50);
	btf__add_enum_value(btf, "MEMCG_SOCK", 51);
	btf__add_enum_value(btf, "MEMCG_PERCPU_B", 52);
	btf__add_enum_value(btf, "MEMCG_VMALLOC", 53);
	btf__add_enum_value(btf, "MEMCG_KMEM", 54);
	btf__add_enum_value(btf, "MEMCG_ZSWAP_B", 55);
	btf__add_enum_value(btf, "MEMCG_ZSWAPPED", 56);
	btf__add_enum_value(btf, "MEMCG_NR_STAT", 57);
	arr = btf__add_array(btf, elem, elem, l->node_len);
	btf__add_struct(btf, "lruvec_stats_percpu", l->node_len * l->elem_size * 2);
	btf__add_field(btf, "state", arr, 0, 0);
	btf__add_field(btf, "state_prev", arr, l->node_len * l->elem_size * 8, 0);
	if (l->vmstat_len) {
		arr = btf__add_array(btf, elem, elem, l->vmstat_len);
		btf__add_struct(btf, "memcg_vmstats_percpu", 8 + l->vmstat_len * l->elem_size);
		btf__add_field(btf, "stats_updates", elem, 0, 0);
		btf__add_field(btf, "state", arr, 64, 0);
	}
	(void)node;
	(void)memcg;
	raw = btf__raw_data(btf, &size);
	if (raw && (f = fopen(path, "wb"))) {
		ret = fwrite(raw, 1, size, f) == size ? 0 : -1;
		fclose(f);
	}
	btf__free(btf);
	return ret;
}

static int idx(const struct mp_kfacts *k, int cat)
{
	return k->cat_state_index[cat] == MP_NO_STATE_INDEX ? -1 : k->cat_state_index[cat];
}

static void test_learn_indices(void)
{
	static const struct layout ls[] = {
		{ "6.18's layout", false, 33, 40, 8, 5, 6, 35 },
		{ "an untracked node item below slab", true, 33, 40, 8, -1, -1, 35 },
		{ "state[] not the two lists' length", false, 33, 38, 8, 5, 6, -1 },
		{ "no memcg_vmstats_percpu (before 6.11)", false, 33, 0, 8, -1, -1, -1 },
		{ "counters of 4 bytes", false, 33, 40, 4, -1, -1, -1 },
		{ "a node list shorter than the slab items", false, 6, 13, 8, 5, -1, 8 },
	};
	char path[] = "/tmp/memprobe-unit-btf-XXXXXX";
	int fd = mkstemp(path);

	CHECK_GE_INT(fd, 0, "temp file");
	if (fd < 0)
		return;
	close(fd);
	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		const struct layout *l = &ls[i];
		struct mp_kfacts k;
		char err[256];

		if (write_btf(l, path)) {
			CHECK(0, "%s: write the BTF", l->what);
			continue;
		}
		CHECK_EQ_INT(mp_attr_learn_btf(path, &k, err, sizeof(err)), 0, "%s: learn: %s",
			     l->what, err);
		CHECK(idx(&k, MP_CAT_SLAB_RECLAIMABLE) == l->want_slab_r &&
		      idx(&k, MP_CAT_SLAB_UNRECLAIMABLE) == l->want_slab_u &&
		      idx(&k, MP_CAT_PERCPU) == l->want_percpu,
		      "%s: slab_reclaimable %d, slab_unreclaimable %d, percpu %d; want %d %d %d",
		      l->what, idx(&k, MP_CAT_SLAB_RECLAIMABLE), idx(&k, MP_CAT_SLAB_UNRECLAIMABLE),
		      idx(&k, MP_CAT_PERCPU), l->want_slab_r, l->want_slab_u, l->want_percpu);
		for (int c = 0; c < MP_NR_CATS; c++)
			if (mp_cats[c].unit != MP_UNIT_BYTES)
				CHECK_EQ_INT(idx(&k, c), -1, "%s: %s (not in bytes) has no index",
					     l->what, mp_cat_names[c]);
	}
	unlink(path);
}

int main(void)
{
	test_kernel_rounding();
	test_pages_agree();
	test_bytes_read_agree();
	test_learn_indices();
	return unit_done("bytes");
}
