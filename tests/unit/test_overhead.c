// SPDX-License-Identifier: GPL-2.0
/*
 * The overhead builder (overhead.c) on hand-built vectors, no session: the
 * sum identity, the probe's row apart (its anon beyond what it allocated),
 * kernel_other, a process gone since the baseline, polled categories, the
 * peak's burst, the document's object and left_after.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "overhead.h"
#include "unit.h"

#define MIB (1024 * 1024LL)

#define CHECK_S64(got, want, what)                                         \
	do {                                                               \
		int64_t g_ = (got), w_ = (want);                           \
		CHECK(g_ == w_, "%s: got %" PRId64 ", want %" PRId64, what, g_, w_); \
	} while (0)

static struct mp_task_row rows[3][8];

/* A row of tgid with anon, file, pagetables and slab_unreclaimable bytes;
 * kernel is their kernel parts plus extra_kernel. */
static struct mp_task_row row(uint32_t tgid, const char *comm, int64_t anon, int64_t file,
			      int64_t pt, int64_t slab, int64_t extra_kernel)
{
	struct mp_task_row r = { .tgid = tgid };

	snprintf(r.comm, sizeof(r.comm), "%s", comm);
	r.charge_bytes[MP_CAT_ANON] = anon;
	r.charge_bytes[MP_CAT_FILE] = file;
	r.charge_bytes[MP_CAT_SHMEM] = file / 2; /* inside file: never counted twice */
	r.charge_bytes[MP_CAT_PAGETABLES] = pt;
	r.charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = slab;
	r.charge_bytes[MP_CAT_KERNEL] = pt + slab + extra_kernel;
	return r;
}

static struct mp_attr_snap snap(struct mp_task_row *r, size_t n)
{
	return (struct mp_attr_snap){ .tasks = r, .ntasks = n };
}

static int64_t part(const struct mp_overhead *o, uint32_t pid, int cat)
{
	for (size_t i = 0; i < o->nparts; i++)
		if (o->parts[i].pid == pid && o->parts[i].cat == cat)
			return o->parts[i].bytes;
	return 0;
}

static int64_t sum_identity(const struct mp_overhead *o)
{
	int64_t s = o->probe_kernel_bytes + o->reclaimed_bytes + o->unexplained_bytes;

	for (size_t i = 0; i < o->nparts; i++)
		s += o->parts[i].bytes;
	return s;
}

/* The steady stand-in: the benchmark's anon and page tables, the
 * probe's page tables and slab, a little unexplained. */
static void test_steady(void)
{
	struct mp_attr_snap base, at;
	struct mp_overhead o;
	struct mp_overhead_in in = { .probe_pid = 200, .allocated_bytes = 1000 * MIB,
				     .have_kernel_total = true };

	rows[0][0] = row(100, "benchmark", 1500 * MIB, 300 * MIB, 3 * MIB, 1 * MIB, 4096);
	rows[0][1] = row(200, "memprobe-probe", 1 * MIB, 0, 8192, 4096, 0);
	rows[1][0] = row(100, "benchmark", 1598 * MIB, 300 * MIB, 3 * MIB + 200704, 1 * MIB, 4096);
	rows[1][1] = row(200, "memprobe-probe", 1001 * MIB + 8192, 0, 1929216 + 8192, 4096, 0);
	base = snap(rows[0], 2);
	at = snap(rows[1], 2);
	in.base = &base;
	in.at = &at;
	in.bytes = 98 * MIB + 200704 + 8192 + 1929216 + 53000;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "steady: builds");
	CHECK_S64(sum_identity(&o), in.bytes, "steady: parts + probe + unexplained = bytes");
	CHECK_S64(part(&o, 100, MP_CAT_ANON), 98 * MIB, "steady: the benchmark's anon");
	CHECK_S64(part(&o, 100, MP_CAT_PAGETABLES), 200704, "steady: ... its page tables");
	CHECK_S64(part(&o, 100, MP_CAT_FILE), 0, "steady: ... no file growth");
	CHECK_S64(part(&o, 200, MP_CAT_ANON), 0, "steady: the probe is no part");
	CHECK_S64(o.probe_cat_bytes[MP_CAT_ANON], 8192, "steady: the probe's anon beyond allocated");
	CHECK_S64(o.probe_cat_bytes[MP_CAT_PAGETABLES], 1929216, "steady: the probe's page tables");
	CHECK_S64(o.probe_kernel_bytes, 8192 + 1929216, "steady: the probe's cost");
	CHECK_S64(o.unexplained_bytes, 53000, "steady: unexplained");
	CHECK_EQ_INT(o.nparts, 2, "steady: two parts, largest first");
	CHECK_EQ_INT(o.parts[0].cat, MP_CAT_ANON, "steady: two parts, largest first");
	mp_overhead_free(&o);
}

/* Kernel beyond its itemised parts is kernel_other; without a kernel total
 * there is none. A process gone since the baseline counts minus what it
 * held; one new since, all it holds. */
static void test_kernel_other_and_gone(void)
{
	struct mp_attr_snap base, at;
	struct mp_overhead o;
	struct mp_overhead_in in = { .have_kernel_total = true, .bytes = 10 * MIB };

	rows[0][0] = row(100, "a", 0, 0, 0, 0, 0);
	rows[0][1] = row(101, "gone", 5 * MIB, 0, 0, 0, 0);
	rows[1][0] = row(100, "a", 2 * MIB, 0, 4096, 0, 3 * 4096);
	rows[1][1] = row(102, "new", 7 * MIB, 0, 0, 0, 0);
	base = snap(rows[0], 2);
	at = snap(rows[1], 2);
	in.base = &base;
	in.at = &at;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "kernel_other: builds");
	CHECK_S64(part(&o, 100, MP_OVH_KERNEL_OTHER), 3 * 4096, "kernel_other: kernel - its parts");
	CHECK_S64(part(&o, 101, MP_CAT_ANON), -5 * MIB, "gone: minus what it held");
	CHECK_S64(part(&o, 102, MP_CAT_ANON), 7 * MIB, "new: all it holds");
	CHECK_S64(sum_identity(&o), in.bytes, "kernel_other: the identity");
	CHECK_S64(o.unexplained_bytes, 10 * MIB - 2 * MIB - 4 * 4096 + 5 * MIB - 7 * MIB,
		  "kernel_other: unexplained");
	mp_overhead_free(&o);
	in.have_kernel_total = false;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "itemised: builds");
	CHECK_S64(part(&o, 100, MP_OVH_KERNEL_OTHER), 0, "itemised: no kernel_other");
	CHECK_S64(sum_identity(&o), in.bytes, "itemised: the identity");
	mp_overhead_free(&o);
}

/* A polled category has no per-process split: one part of pid 0 from
 * memory.stat's growth; a polled kernel part stays in kernel_other. */
static void test_polled(void)
{
	struct mp_attr_snap base, at;
	struct mp_overhead o;
	struct mp_overhead_in in = { .have_kernel_total = true, .bytes = 5 * MIB };

	rows[0][0] = row(100, "a", 0, 0, 0, 0, 0);
	rows[1][0] = row(100, "a", 1 * MIB, 0, 0, 0, 8192);
	rows[1][0].charge_bytes[MP_CAT_FILE] = 0;
	base = snap(rows[0], 1);
	at = snap(rows[1], 1);
	base.have_stat = at.have_stat = true;
	base.stat.have[MP_CAT_FILE] = at.stat.have[MP_CAT_FILE] = true;
	base.stat.bytes[MP_CAT_FILE] = 10 * MIB;
	at.stat.bytes[MP_CAT_FILE] = 12 * MIB;
	base.stat.have[MP_CAT_PERCPU] = at.stat.have[MP_CAT_PERCPU] = true;
	at.stat.bytes[MP_CAT_PERCPU] = 8192;
	in.polled[MP_CAT_FILE] = in.polled[MP_CAT_PERCPU] = true;
	in.base = &base;
	in.at = &at;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "polled: builds");
	CHECK_S64(part(&o, 0, MP_OVH_PAGE_CACHE), 2 * MIB,
		  "polled: file from memory.stat, pid 0, as page_cache (no shmem key)");
	CHECK_S64(part(&o, 0, MP_CAT_FILE), 0, "polled: file is no part: page_cache and shmem are");
	CHECK_STR(o.parts[0].comm, "(memory.stat)", "polled: named as such");
	CHECK_S64(part(&o, 0, MP_CAT_PERCPU), 0, "polled: a kernel part stays in kernel_other");
	CHECK_S64(part(&o, 100, MP_OVH_KERNEL_OTHER), 8192, "polled: ... there");
	CHECK_S64(sum_identity(&o), in.bytes, "polled: the identity");
	mp_overhead_free(&o);
}

/*
 * No BPF: the vectors are /proc's rows and memory.stat (v1: no pagetables
 * key, the kernel total from the kmem counter). The probe's part is its
 * own rows' growth beyond its allocation, never minus the allocation;
 * memory.stat's anon beyond the rows counts only where both readings had
 * settled (a parent's memory.stat lags its child's fill by the whole
 * fill); kernel_other is the kernel total less the rows' page tables.
 */
static void test_proc_rows(void)
{
	struct mp_attr_snap base, at;
	struct mp_overhead o;
	struct mp_overhead_in in = { .probe_pid = 200, .allocated_bytes = 1000 * MIB,
				     .have_kernel_total = true };

	for (int k = 0; k < MP_NR_CATS; k++)
		in.polled[k] = true;
	in.rows[MP_CAT_ANON] = in.rows[MP_CAT_FILE] = in.rows[MP_CAT_SHMEM] = true;
	in.rows[MP_CAT_PAGETABLES] = in.rows[MP_CAT_KERNEL_STACK] = in.rows[MP_CAT_KERNEL] = true;
	rows[0][0] = row(100, "benchmark", 600 * MIB, 0, 2 * MIB, 0, 0);
	rows[0][1] = row(200, "memprobe-probe", 1 * MIB, 0, 40960, 0, 0);
	rows[1][0] = row(100, "benchmark", 640 * MIB, 0, 2 * MIB + 81920, 0, 0);
	/* the probe's RssFile grew 1 MiB: its binary's pages, charged where
	 * memprobe runs, no cost of its allocation */
	rows[1][1] = row(200, "memprobe-probe", 1001 * MIB, 1 * MIB, 40960 + 2048000, 0, 0);
	base = snap(rows[0], 2);
	at = snap(rows[1], 2);
	base.have_stat = at.have_stat = true;
	base.stat.have[MP_CAT_ANON] = at.stat.have[MP_CAT_ANON] = true;
	base.stat.have[MP_CAT_KERNEL] = at.stat.have[MP_CAT_KERNEL] = true;
	base.stat.bytes[MP_CAT_ANON] = 601 * MIB;
	at.stat.bytes[MP_CAT_ANON] = 641 * MIB; /* lagging: the probe's fill not flushed */
	base.stat.bytes[MP_CAT_KERNEL] = 10 * MIB;
	at.stat.bytes[MP_CAT_KERNEL] = 10 * MIB + 81920 + 2048000 + 300000;
	base.stat_settled = true;
	in.base = &base;
	in.at = &at;
	in.bytes = 40 * MIB + 81920 + 2048000 + 300000;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "proc: builds");
	CHECK_S64(part(&o, 100, MP_CAT_ANON), 40 * MIB, "proc: the benchmark's anon from its rows");
	CHECK_S64(part(&o, 100, MP_CAT_PAGETABLES), 81920, "proc: ... its page tables (VmPTE)");
	CHECK_S64(o.probe_cat_bytes[MP_CAT_ANON], 0, "proc: the probe's anon beyond its allocation");
	CHECK_S64(o.probe_cat_bytes[MP_CAT_PAGETABLES], 2048000, "proc: the probe's page tables");
	CHECK_S64(o.probe_cat_bytes[MP_CAT_FILE], 0, "proc: the probe's RssFile is no cost of it");
	CHECK_GE_INT(o.probe_kernel_bytes, 0, "proc: the probe's part is not minus its allocation");
	CHECK_S64(part(&o, 0, MP_CAT_ANON), 0,
		  "proc: a lagging memory.stat adds no anon beyond the rows");
	CHECK_S64(part(&o, 0, MP_OVH_KERNEL_OTHER), 300000,
		  "proc: kernel_other: the kernel total less the rows' page tables");
	CHECK_S64(o.unexplained_bytes, 0, "proc: nothing unexplained");
	CHECK_S64(sum_identity(&o), in.bytes, "proc: the identity");
	mp_overhead_free(&o);

	/* settled: memory.stat's anon beyond the rows is a part of its own */
	at.stat.bytes[MP_CAT_ANON] = 601 * MIB + 1040 * MIB + 2 * MIB;
	at.stat_settled = true;
	in.bytes += 2 * MIB;
	mp_overhead_build(&in, &o);
	CHECK_S64(part(&o, 0, MP_CAT_ANON), 2 * MIB, "proc settled: anon no row shows");
	CHECK_S64(o.unexplained_bytes, 0, "proc settled: nothing unexplained");
	CHECK_S64(sum_identity(&o), in.bytes, "proc settled: the identity");
	mp_overhead_free(&o);

	/* page cache no process maps shrank by 50 MiB while the probe
	 * charged: no /proc row holds a charge, so it is what the kernel
	 * reclaimed to make room (it was a "(memory.stat)" part of -50 MiB),
	 * in reclaimed_bytes and its parts alike */
	base.stat.have[MP_CAT_FILE] = at.stat.have[MP_CAT_FILE] = true;
	base.stat.have[MP_CAT_SHMEM] = at.stat.have[MP_CAT_SHMEM] = true;
	base.stat.bytes[MP_CAT_FILE] = 60 * MIB;
	at.stat.bytes[MP_CAT_FILE] = 10 * MIB;
	in.bytes -= 50 * MIB;
	mp_overhead_build(&in, &o);
	CHECK_S64(part(&o, 0, MP_OVH_PAGE_CACHE), 0, "proc reclaimed: no (memory.stat) page cache");
	CHECK_S64(o.reclaimed_bytes, -50 * MIB, "proc reclaimed: the cache that went");
	CHECK_S64(o.reclaimed_cat_bytes[MP_OVH_PAGE_CACHE], o.reclaimed_bytes,
		  "proc reclaimed: its parts say the same");
	CHECK_S64(sum_identity(&o), in.bytes, "proc reclaimed: the identity");
	mp_overhead_free(&o);
	base.stat.have[MP_CAT_FILE] = at.stat.have[MP_CAT_FILE] = false;
	base.stat.have[MP_CAT_SHMEM] = at.stat.have[MP_CAT_SHMEM] = false;
	in.bytes += 50 * MIB;

	/* only memory.stat (no row of the probe): the allocation comes out
	 * of memory.stat's anon, not out of a probe's anon of -1000 MiB */
	memset(in.rows, 0, sizeof(in.rows));
	rows[1][1].tgid = 201;
	mp_overhead_build(&in, &o);
	CHECK_S64(o.probe_cat_bytes[MP_CAT_ANON], 0, "polled: the probe has no anon part");
	CHECK_S64(part(&o, 0, MP_CAT_ANON), 2 * MIB + 40 * MIB,
		  "polled: memory.stat's anon less the allocation");
	CHECK_S64(sum_identity(&o), in.bytes, "polled: the identity");
	mp_overhead_free(&o);
	rows[1][1].tgid = 200;
}

/* The peak came in a burst before the probe's last chunk: the burst is the
 * benchmark's part, the chunk not yet touched is the probe's anon below 0;
 * nothing is unexplained. The document's object says the same, and
 * left_after is null without a vector after the free. */
static void test_peak_in_burst_and_doc(void)
{
	struct mp_overhead_snaps s = { .have_base = true, .have_peak = true };
	struct mp_overhead_doc_in d = { .probe_pid = 200, .allocated_bytes = 600 * MIB,
					.have_kernel_total = true, .snaps = &s,
					.baseline_ns = 500000000, .baseline_samples = 90 };
	const cJSON *parts, *it;
	cJSON *j;
	int64_t sum = 0;

	rows[0][0] = row(100, "benchmark", 600 * MIB, 0, 0, 0, 0);
	rows[2][0] = row(100, "benchmark", 760 * MIB, 0, 0, 0, 0);
	rows[2][1] = row(200, "memprobe-probe", 552 * MIB, 0, 1 * MIB, 0, 0);
	s.base = snap(rows[0], 1);
	s.peak = snap(rows[2], 2);
	s.base_usage_bytes = 600 * MIB;
	s.peak_usage_bytes = 1313 * MIB;
	d.overhead_bytes = 1313 * MIB - 600 * MIB - 600 * MIB;
	j = mp_overhead_doc(&d);
	CHECK(j != NULL, "doc: built");
	CHECK_STR(cJSON_GetObjectItem(j, "at")->valuestring, "peak", "doc: at the peak");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(j, "left_after")), "doc: no left_after vector: null");
	parts = cJSON_GetObjectItem(j, "parts");
	CHECK_EQ_INT(cJSON_GetArraySize(parts), 1, "doc: one part");
	it = cJSON_GetArrayItem(parts, 0);
	CHECK_STR(cJSON_GetObjectItem(it, "category")->valuestring, "anon", "doc: anon");
	CHECK_STR(cJSON_GetObjectItem(it, "comm")->valuestring, "benchmark", "doc: benchmark's");
	CHECK_S64(strtoll(cJSON_GetObjectItem(it, "bytes")->valuestring, NULL, 10), 160 * MIB,
		  "doc: the burst held at the peak");
	sum += strtoll(cJSON_GetObjectItem(it, "bytes")->valuestring, NULL, 10);
	sum += strtoll(cJSON_GetObjectItem(j, "probe_kernel_bytes")->valuestring, NULL, 10);
	CHECK_S64(strtoll(cJSON_GetObjectItem(j, "probe_kernel_bytes")->valuestring, NULL, 10),
		  -48 * MIB + 1 * MIB, "doc: the probe's anon not yet touched, and its page tables");
	CHECK_S64(strtoll(cJSON_GetObjectItem(j, "unexplained_bytes")->valuestring, NULL, 10), 0,
		  "doc: nothing unexplained");
	sum += strtoll(cJSON_GetObjectItem(j, "unexplained_bytes")->valuestring, NULL, 10);
	CHECK_S64(sum, d.overhead_bytes, "doc: the identity");
	cJSON_Delete(j);

	/* left after: the probe freed; its row holds what it did not give back */
	rows[1][0] = row(100, "benchmark", 610 * MIB, 0, 0, 0, 0);
	rows[1][1] = row(200, "memprobe-probe", 0, 0, 4096, 0, 0);
	s.left = snap(rows[1], 2);
	s.have_left = true;
	d.left_bytes = 10 * MIB + 4096;
	j = mp_overhead_doc(&d);
	it = cJSON_GetObjectItem(j, "left_after");
	CHECK(cJSON_IsObject(it), "left_after: an object");
	CHECK_S64(strtoll(cJSON_GetObjectItem(it, "probe_kernel_bytes")->valuestring, NULL, 10), 4096,
		  "left_after: the probe's page tables left, no allocation taken out");
	CHECK_S64(strtoll(cJSON_GetObjectItem(it, "unexplained_bytes")->valuestring, NULL, 10), 0,
		  "left_after: nothing unexplained");
	cJSON_Delete(j);
	s.have_peak = false;
	CHECK(mp_overhead_doc(&d) == NULL, "doc: no peak vector: not measured");
}

/*
 * A database's processes: three backends of one name and role grow anon
 * and shmem (shared_buffers, charged to whichever touched a page first), a
 * checkpointer page cache, one backend copies on write. The probe ran at
 * the limit with --reclaim-cache: its page cache and reclaimable slab
 * shrank, which is the workload's, reclaimed to make room.
 */
static void test_groups_and_reclaimed(void)
{
	static const struct mp_proc_role roles[] = {
		{ 100, "postgres", "backend" }, { 101, "postgres", "backend" },
		{ 102, "postgres", "backend" }, { 103, "postgres", "checkpointer" },
	};
	struct mp_overhead_in in = { .probe_pid = 200, .allocated_bytes = 500 * MIB,
				     .have_kernel_total = true, .roles = roles, .nroles = 4,
				     .cow_page_bytes = 4096 };
	struct mp_attr_snap base, at;
	struct mp_overhead o;

	for (int i = 0; i < 4; i++)
		rows[0][i] = row(100 + i, "postgres", 10 * MIB, 0, 0, 0, 0);
	rows[0][4] = row(200, "memprobe-probe", 0, 0, 0, 0, 0);
	rows[0][4].charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = 0;
	for (int i = 0; i < 3; i++) {
		rows[1][i] = row(100 + i, "postgres", 11 * MIB, 0, 0, 0, 0);
		rows[1][i].charge_bytes[MP_CAT_FILE] = 2 * MIB;
		rows[1][i].charge_bytes[MP_CAT_SHMEM] = 2 * MIB;
	}
	rows[1][0].cow_pages = 256;
	rows[1][3] = row(103, "postgres", 10 * MIB, 1 * MIB, 0, 0, 0);
	rows[1][3].charge_bytes[MP_CAT_SHMEM] = 0;
	rows[1][4] = row(200, "memprobe-probe", 500 * MIB, 0, 1 * MIB, 0, 0);
	rows[1][4].charge_bytes[MP_CAT_FILE] = -100 * MIB;
	rows[1][4].charge_bytes[MP_CAT_SHMEM] = 0;
	rows[1][4].charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = -4 * MIB;
	rows[1][4].charge_bytes[MP_CAT_KERNEL] = 1 * MIB - 4 * MIB;
	base = snap(rows[0], 5);
	at = snap(rows[1], 5);
	in.base = &base;
	in.at = &at;
	in.bytes = 3 * MIB + 6 * MIB + 1 * MIB + 1 * MIB - 104 * MIB + 12345;
	CHECK_EQ_INT(mp_overhead_build(&in, &o), 0, "groups: builds");
	CHECK_S64(sum_identity(&o), in.bytes, "groups: parts + probe + reclaimed + unexplained");
	CHECK_S64(part(&o, 100, MP_CAT_SHMEM), 2 * MIB, "groups: shmem a part of its own");
	CHECK_S64(part(&o, 100, MP_OVH_PAGE_CACHE), 0, "groups: ... not page cache");
	CHECK_S64(part(&o, 103, MP_OVH_PAGE_CACHE), 1 * MIB, "groups: the checkpointer's cache");
	CHECK_EQ_INT(o.ngroups, 2, "groups: backends together, the checkpointer apart (got %zu)",
		     o.ngroups);
	CHECK_STR(o.groups[0].role, "backend", "groups: the backends first (largest)");
	CHECK_U64(o.groups[0].processes, 3, "groups: three backends");
	CHECK_U64(o.groups[0].pid, 0, "groups: no one pid for three");
	CHECK_S64(o.groups[0].cat_bytes[MP_CAT_SHMEM], 6 * MIB, "groups: their shmem");
	CHECK_S64(o.groups[0].cat_bytes[MP_CAT_ANON], 3 * MIB, "groups: their anon");
	CHECK_S64(o.groups[0].cow_bytes, 256 * 4096, "groups: one backend's copies on write");
	CHECK_U64(o.groups[1].pid, 103, "groups: one process keeps its pid");
	CHECK_S64(o.reclaimed_bytes, -104 * MIB, "reclaimed: the probe's cache and slab shrinking");
	CHECK_S64(o.reclaimed_cat_bytes[MP_OVH_PAGE_CACHE], -100 * MIB, "reclaimed: page cache");
	CHECK_S64(o.reclaimed_cat_bytes[MP_CAT_SLAB_RECLAIMABLE], -4 * MIB, "reclaimed: slab");
	CHECK_S64(o.probe_kernel_bytes, 1 * MIB, "reclaimed: not the probe's cost");
	CHECK_S64(o.unexplained_bytes, 12345, "reclaimed: unexplained");
	mp_overhead_free(&o);
}

int main(void)
{
	test_steady();
	test_kernel_other_and_gone();
	test_polled();
	test_proc_rows();
	test_peak_in_burst_and_doc();
	test_groups_and_reclaimed();
	return unit_done("overhead");
}
