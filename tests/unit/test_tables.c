// SPDX-License-Identifier: GPL-2.0
/*
 * The tables that are declared once and expanded everywhere, checked
 * without BPF: the categories (bpf/categories.h) and the per-task and total
 * counters (bpf/memprobe.h), through what user space builds from them.
 */
#include <stdlib.h>

#include "attr.h"
#include "cgroup.h"
#include "unit.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The kernel's name of a CO-RE flavoured one (without its ___suffix). */
static void kernel_name(const char *flavoured, char *out, size_t len)
{
	const char *f = strstr(flavoured, "___");
	size_t n = f ? (size_t)(f - flavoured) : strlen(flavoured);

	snprintf(out, len, "%.*s", (int)n, flavoured);
}

static void check_item(const char *cat, const char *type, const char *item, enum mp_unit unit)
{
	char t[64], e[64];

	kernel_name(type, t, sizeof(t));
	kernel_name(item, e, sizeof(e));
	CHECK(!strcmp(t, "node_stat_item") || !strcmp(t, "memcg_stat_item"),
	      "%s: item type '%s' is not an enum the memcg hooks pass", cat, type);
	CHECK(mp_core_name_eq(t, type) && mp_core_name_eq(e, item),
	      "%s: '%s' '%s' do not match their kernel names", cat, type, item);
	/* the kernel's own naming: _B items count bytes, _KB ones KiB */
	CHECK_EQ_INT(ends_with(e, "_B"), (unit == MP_UNIT_BYTES), "%s: %s and its unit %d disagree",
		     cat, e, unit);
	CHECK_EQ_INT(ends_with(e, "_KB"), (unit == MP_UNIT_KIB), "%s: %s and its unit %d disagree",
		     cat, e, unit);
}

static void test_categories(void)
{
	const char *usage[] = { "anon", "file", "sock", "kernel" };
	int nusage = 0;

	for (int k = 0; k < MP_NR_CATS; k++) {
		const struct mp_cat_info *c = &mp_cats[k];

		CHECK(c->name && c->name[0], "category %d has no name", k);
		if (!c->name)
			continue;
		CHECK_STR(mp_cat_names[k], c->name, "mp_cat_names agrees with mp_cats");
		for (int j = 0; j < k; j++) {
			CHECK(strcmp(c->name, mp_cats[j].name) != 0, "name %s twice", c->name);
			CHECK(!c->v1_key || !mp_cats[j].v1_key ||
			      strcmp(c->v1_key, mp_cats[j].v1_key), "v1 key %s twice", c->v1_key);
		}
		CHECK(c->item_type && c->item && c->item[0], "%s has no stat item", c->name);
		if (c->item_type && c->item)
			check_item(c->name, c->item_type, c->item, c->unit);
		CHECK(!c->alt_type == !c->alt_item, "%s: half an alternative item", c->name);
		if (c->alt_type && c->alt_item)
			check_item(c->name, c->alt_type, c->alt_item, c->unit);
		CHECK(!c->v1_key || !strncmp(c->v1_key, "total_", 6),
		      "%s: v1 key %s is not a hierarchical total_ one", c->name, c->v1_key);
		if (c->part == MP_PART_USAGE)
			nusage++;
	}
	/* what cgroup.c reads on v1, and the sum snap_stat checks the usage with */
	CHECK_STR(mp_cats[MP_CAT_ANON].v1_key, "total_rss", "anon's v1 key");
	CHECK_STR(mp_cats[MP_CAT_FILE].v1_key, "total_cache", "file's v1 key");
	CHECK_STR(mp_cats[MP_CAT_SHMEM].v1_key, "total_shmem", "shmem's v1 key");
	CHECK(mp_cats[MP_CAT_KERNEL].v1_key == NULL, "kernel on v1 is memory.kmem.usage_in_bytes");
	CHECK_U64(nusage, 4, "categories the usage is the sum of");
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < MP_NR_CATS; k++)
			if (!strcmp(mp_cats[k].name, usage[i]))
				CHECK_EQ_INT(mp_cats[k].part, MP_PART_USAGE,
					     "%s is a part of the usage", usage[i]);
	CHECK_EQ_INT(mp_cats[MP_CAT_SHMEM].part, MP_PART_FILE, "shmem is inside file");
	CHECK_STR(mp_cats[MP_CAT_VMALLOC].alt_item, "NR_VMALLOC___7x", "vmalloc's 7.x item");

	CHECK(mp_core_name_eq("NR_VMALLOC", "NR_VMALLOC___7x"), "a flavour matches");
	CHECK(mp_core_name_eq("NR_VMALLOC", "NR_VMALLOC"), "a plain name matches");
	CHECK(!mp_core_name_eq("NR_VMALLOC", "NR_VMALLOC_B"), "a longer name does not");
	CHECK(!mp_core_name_eq("NR_VMALLOC_B", "NR_VMALLOC"), "a shorter name does not");
	CHECK(!mp_core_name_eq("node_stat_item", "node_stat_item__x"), "two underscores do not");
}

/* Every counter of struct mp_task_stat, set to a value of its own. */
static void fill_stat(struct mp_task_stat *st, uint64_t base)
{
	uint64_t v = base;

#define FILL(name) st->name = v++;
	MP_TASK_COUNTERS(FILL)
#undef FILL
	for (int k = 0; k < MP_NR_CATS; k++)
		st->charge_bytes[k] = (int64_t)v++ - 1000;
}

static void test_task_counters(void)
{
	struct mp_task_stat a, b, sum;
	struct mp_task_row rows_after[2] = { { .tgid = 7 }, { .tgid = 9 } };
	struct mp_task_row rows_before[1] = { { .tgid = 9 } };
	struct mp_attr_snap after = { .tasks = rows_after, .ntasks = 2 };
	struct mp_attr_snap before = { .tasks = rows_before, .ntasks = 1 };

	fill_stat(&a, 100);
	fill_stat(&b, 10);
	sum = a;
	mp_task_stat_add(&sum, &b);
#define CHECK_SUM(name) CHECK_U64(sum.name, a.name + b.name, "add: " #name);
	MP_TASK_COUNTERS(CHECK_SUM)
#undef CHECK_SUM
	for (int k = 0; k < MP_NR_CATS; k++)
		CHECK_EQ_INT(sum.charge_bytes[k], a.charge_bytes[k] + b.charge_bytes[k],
			     "add: charge_bytes[%d]", k);
	mp_task_stat_sub(&sum, &b);
	CHECK(!memcmp(&sum, &a, sizeof(a)), "sub undoes add");

	/* the row's names and its stat view are the same counters */
	rows_after[0].stat = a;
	CHECK_U64(rows_after[0].faults, a.faults, "row.faults is row.stat.faults");
	CHECK_U64(rows_after[0].charged_pages, a.charged_pages, "row.charged_pages");
	CHECK_EQ_INT(rows_after[0].charge_bytes[MP_CAT_KERNEL], a.charge_bytes[MP_CAT_KERNEL],
		     "row.charge_bytes is row.stat.charge_bytes");

	/* a snapshot difference: rows by tgid, one absent before */
	rows_after[1].stat = a;
	rows_before[0].stat = b;
	mp_attr_snap_sub(&after, &before);
	CHECK(!memcmp(&rows_after[0].stat, &a, sizeof(a)), "a task new since before is kept");
#define CHECK_DIFF(name) CHECK_U64(rows_after[1].name, a.name - b.name, "snap_sub: " #name);
	MP_TASK_COUNTERS(CHECK_DIFF)
#undef CHECK_DIFF
	for (int k = 0; k < MP_NR_CATS; k++)
		CHECK_EQ_INT(rows_after[1].charge_bytes[k], a.charge_bytes[k] - b.charge_bytes[k],
			     "snap_sub: charge_bytes[%d]", k);
}

static void test_total_counters(void)
{
	struct mp_attr_snap after = { 0 }, before = { 0 };
	uint64_t v = 1;

#define FILL(name) after.totals.name = 1000 + v; before.totals.name = v++;
	MP_TOTAL_COUNTERS(FILL)
#undef FILL
	after.totals.faults = 50;
	before.totals.faults = 20;
	after.totals.lost[MP_LOST_TASK_MAP_FULL] = 3;
	before.totals.lost[MP_LOST_TASK_MAP_FULL] = 2;
	mp_attr_snap_sub(&after, &before);
#define CHECK_DIFF(name) CHECK_U64(after.totals.name, 1000, "totals: " #name);
	MP_TOTAL_COUNTERS(CHECK_DIFF)
#undef CHECK_DIFF
	CHECK_U64(after.totals.faults, 30, "totals: faults");
	CHECK_U64(after.totals.lost[MP_LOST_TASK_MAP_FULL], 3, "lost stays cumulative");
}

int main(void)
{
	test_categories();
	test_task_counters();
	test_total_counters();
	return unit_done("tables");
}
