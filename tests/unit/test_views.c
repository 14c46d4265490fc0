// SPDX-License-Identifier: GPL-2.0
/* The view layer (views.c): the rules about which rows a table shows, on
 * real documents (tests/fixtures/html/probe-pinned.json and others). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "doc.h"
#include "render.h"
#include "util.h"
#include "views.h"
#include "unit.h"

static void test_pct(void)
{
	CHECK(mp_view_pct(-0.04) == 0.0, "-0.04%% prints as 0");
	CHECK(mp_view_pct(0.049) == 0.0, "0.049%% prints as 0");
	CHECK(mp_view_pct(0.05) == 0.05, "0.05%% stays");
	CHECK(mp_view_pct(-12.5) == -12.5, "-12.5%% stays");
}

static void test_cats(void)
{
	char err[512], tasks[200] = "[";
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/html/probe-pinned.json", &kind, err, sizeof(err));
	cJSON *a = cJSON_GetObjectItem(doc, "attribution"), *anon;
	struct mp_rd rd = { .root = doc };
	struct mp_view_cats v;

	CHECK(doc && kind == MP_DOC_PROBE, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	/* anon with five tasks: the view keeps the top three */
	for (int i = 0; i < 5; i++)
		mp_appendf(tasks, sizeof(tasks), "%s{\"pid\":%d,\"comm\":\"t%d\",\"bytes\":%d}",
			   i ? "," : "", 100 + i, i, 5 - i);
	mp_appendf(tasks, sizeof(tasks), "]");
	anon = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "categories"), 0);
	cJSON_ReplaceItemInObject(anon, "tasks", cJSON_Parse(tasks));
	CHECK(mp_doc_adopt(doc, &kind, err, sizeof(err)) == 0, "adopted again: %s", err);
	CHECK(mp_view_cats(a, &rd, mp_fmt_sbytes, 0, &v) == 0, "the view builds: %s", rd.err);
	/* 16 categories, 11 with no growth and nothing left after */
	CHECK(v.n == 5, "5 rows shown, not %d", v.n);
	CHECK_STR(v.n ? v.rows[0].name : "", "anon", "the first row");
	CHECK(v.n && v.rows[0].ntasks == MP_VIEW_TOP_TASKS, "anon's tasks: %d",
	      v.n ? v.rows[0].ntasks : -1);
	CHECK(v.n && v.rows[0].tasks[2].bytes == 3, "the third task's bytes");
	CHECK_STR(v.n ? v.rows[4].name : "", "kernel_other", "a negative row is shown");
	CHECK(v.share_shown && v.unattributed_pct == 0.0,
	      "-12 KiB of 637 MiB unattributed: a share, printed as 0 (%g)", v.unattributed_pct);
	CHECK(v.has_unmapped && v.unmapped == 0, "anon unmapped given");
	mp_view_cats_free(&v);
	cJSON_Delete(doc);
}

/* format's rendering of doc, or "" */
static char *rendered(const cJSON *doc, int kind, const char *format)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	char err[256], *out = NULL;
	size_t len;

	if (!r || mp_render_mem(r, doc, kind, &out, &len, err, sizeof(err)))
		return strdup("");
	return out;
}

static bool has(const char *out, const char *want, const char *format)
{
	bool ok = strstr(out, want) != NULL;

	CHECK(ok, "%s says '%s'", format, want);
	return ok;
}

/* The faults a fresh reader found, each in every renderer that shows the
 * table: an estimate's bound stood at the head of the top-tasks cell, the
 * v1 kmem (objcg) reserve showed in text only, "rows of 1 processes". */
static void test_cells(void)
{
	static const char *const fmts[] = { "text", "markdown", "html" };
	char err[512];
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/html/probe-pinned.json", &kind, err, sizeof(err));
	cJSON *a = cJSON_GetObjectItem(doc, "attribution"), *c;

	CHECK(doc && kind == MP_DOC_PROBE, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "categories")) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(c, "name"));

		if (!strcmp(name, "kernel_other"))
			cJSON_AddNumberToObject(c, "objcg_reserve_bytes", 8192);
		if (!strcmp(name, "anon")) {
			cJSON_AddTrueToObject(c, "estimated");
			cJSON_AddNumberToObject(c, "bound_bytes", 4096);
		}
	}
	cJSON_ReplaceItemInObject(a, "processes_counted", cJSON_CreateNumber(1));
	cJSON_ReplaceItemInObject(a, "processes_exited", cJSON_CreateNumber(1));
	CHECK(mp_doc_adopt(doc, &kind, err, sizeof(err)) == 0, "adopted again: %s", err);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *out = rendered(doc, kind, fmts[i]);

		has(out, "charged, in no object (objcg reserve): 8.0 KiB", fmts[i]);
		has(out, " \u00b14.0 KiB", fmts[i]);
		CHECK(!strstr(out, "(+-"), "%s: no bound in the tasks' cell", fmts[i]);
		CHECK(!strstr(out, "1 processes"), "%s: no \"1 processes\"", fmts[i]);
		free(out);
	}
	{
		char *out = rendered(doc, kind, "text");

		has(out, "(rows of 1 process, which exited", "text");
		free(out);
	}
	cJSON_Delete(doc);
}

/* The overhead table lists the document's groups in html as in text and
 * markdown (html listed the parts: 31 rows for 2 groups). */
static void test_overhead_rows(void)
{
	static const char *const fmts[] = { "markdown", "html" };
	static const char *const cells[] = { "`shmem` 34.5 MiB, `pagetables` 576.0 KiB",
					     "<td>shmem 34.5 MiB, pagetables 576.0 KiB" };
	char err[512];
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/../fuzz/corpus/probe-groups.json", &kind, err,
				      sizeof(err));
	struct mp_rd rd = { .root = doc };
	struct mp_view_overhead_rows v;

	CHECK(doc != NULL, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	CHECK(mp_view_overhead_rows(cJSON_GetObjectItem(doc, "overhead"), &rd, &v) == 0,
	      "the overhead's rows build: %s", rd.err);
	CHECK(v.groups && v.n == 2, "2 groups, not %d %s", v.n, v.groups ? "groups" : "parts");
	CHECK_STR(v.n ? v.rows[0].name : "", "postgres \u00d78 (backends)", "the first group");
	mp_view_overhead_rows_free(&v);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char *out = rendered(doc, kind, fmts[i]);

		has(out, "postgres \u00d78 (backends)", fmts[i]);
		has(out, cells[i], fmts[i]);
		free(out);
	}
	cJSON_Delete(doc);
}

/* v1's kmem reserve (kernel_other's objcg_reserve_bytes, the categories
 * view's reserve) is a metric as it is a cell of text, markdown and html;
 * absent (v2, older documents) it has no sample. */
static void test_reserve_metric(void)
{
	char err[512];
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/html/probe-pinned.json", &kind, err, sizeof(err));
	cJSON *c, *ko = NULL;
	char *out;

	CHECK(doc != NULL, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	out = rendered(doc, kind, "openmetrics");
	CHECK(!strstr(out, "memprobe_objcg_reserve_bytes"), "no reserve said: no sample");
	free(out);
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "attribution"),
						 "categories"))
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(c, "name")), "kernel_other"))
			ko = c;
	CHECK(ko != NULL, "the fixture has kernel_other");
	if (ko)
		cJSON_AddItemToObject(ko, "objcg_reserve_bytes", cJSON_CreateRaw("1171456"));
	out = rendered(doc, kind, "openmetrics");
	has(out, "# TYPE memprobe_objcg_reserve_bytes gauge\n", "openmetrics");
	has(out, "# UNIT memprobe_objcg_reserve_bytes bytes\n", "openmetrics");
	has(out, "memprobe_objcg_reserve_bytes{cgroup=", "openmetrics");
	has(out, "} 1171456\n", "openmetrics");
	free(out);
	out = rendered(doc, kind, "text");
	has(out, MP_VIEW_RESERVE "1.1 MiB", "text");
	free(out);
	cJSON_Delete(doc);
}

/* Set member name of o to the JSON text raw ("null", a number). */
static void set_raw(cJSON *o, const char *name, const char *raw)
{
	cJSON_DeleteItemFromObject(o, name);
	/* the loader keeps integers as raw text, exact past 2^53 */
	cJSON_AddItemToObject(o, name, strcmp(raw, "null") ? cJSON_CreateRaw(raw) : cJSON_CreateNull());
}

/* p's fill line, "" where none is shown. */
static const char *fill_line(const cJSON *doc, const cJSON *p, struct mp_view_fill *v)
{
	struct mp_rd rd = { .root = doc };

	mp_view_fill(p, &rd, v);
	CHECK(!rd.err[0], "the fill view reads: %s", rd.err);
	return v->shown ? v->line : "";
}

/* Why --threads N filled no faster (issue 24): said for 2 threads where
 * the document has the figures; nothing for one thread, an older
 * document (absent) or null (not measured). */
static void test_fill(void)
{
	char err[512];
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/html/probe-pinned.json", &kind, err, sizeof(err));
	cJSON *p = cJSON_GetObjectItem(doc, "probe");
	struct mp_view_fill v;
	char *out;

	CHECK(doc != NULL, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	CHECK_STR(fill_line(doc, p, &v), "", "an older document: nothing");
	set_raw(p, "threads", "2");
	set_raw(p, "fill_ns", "1000000000");
	CHECK_STR(fill_line(doc, p, &v), "", "2 threads, no fill_cpu_ns: nothing");
	set_raw(p, "fill_cpu_ns", "null");
	CHECK_STR(fill_line(doc, p, &v), "", "fill_cpu_ns null: nothing");
	set_raw(p, "fill_cpu_ns", "900000000");
	set_raw(p, "fill_runqueue_wait_ns", "1000000000");
	set_raw(p, "fill_cpus_allowed", "1");
	CHECK_STR(fill_line(doc, p, &v), "2 threads on 1 allowed CPU ran 0.9 CPUs on average "
		  "(on a CPU 900 ms, waiting for one 1.0 s): no more than 1 could run at once; "
		  "give --threads 1, or let the probe run on more CPUs (taskset, cpuset)",
		  "fewer CPUs allowed than threads");
	out = rendered(doc, kind, "text");
	has(out, "\nfill       2 threads on 1 allowed CPU ran 0.9 CPUs", "text");
	free(out);
	out = rendered(doc, kind, "markdown");
	has(out, "| fill | 2 threads on 1 allowed CPU ran 0.9 CPUs", "markdown");
	free(out);
	out = rendered(doc, kind, "html");
	has(out, "<tr data-field=\"probe.fill_cpu_ns\" data-value=\"900000000\"><th>fill</th>"
	    "<td>2 threads on 1 allowed CPU", "html");
	free(out);
	set_raw(p, "fill_cpus_allowed", "2");
	set_raw(p, "fill_ns", "8900000000");
	set_raw(p, "fill_cpu_ns", "9800000000");
	set_raw(p, "fill_runqueue_wait_ns", "7900000000");
	CHECK_STR(fill_line(doc, p, &v), "2 threads ran 1.1 CPUs on average (on a CPU 9.8 s, "
		  "waiting for one 7.9 s): the CPUs were busy elsewhere; give --threads 1 or run "
		  "where more CPUs are free", "a wait of a tenth or more: busy CPUs");
	set_raw(p, "fill_cpu_ns", "16910000000");
	set_raw(p, "fill_runqueue_wait_ns", "200000000");
	CHECK_STR(fill_line(doc, p, &v), "2 threads ran 1.9 CPUs on average (on a CPU 16.9 s, "
		  "waiting for one 200 ms): the time is the kernel's page-fault path (charge, LRU "
		  "and zone locks), not waiting for a CPU", "little wait, the CPUs used: the kernel");
	set_raw(p, "fill_cpu_ns", "10680000000");
	CHECK_STR(fill_line(doc, p, &v), "2 threads ran 1.2 CPUs on average (on a CPU 10.7 s, "
		  "waiting for one 200 ms): off a CPU without waiting for one, so asleep in the "
		  "kernel (reclaim, a lock) or done before the chunk's other parts",
		  "little wait, few CPUs used: asleep");
	set_raw(p, "fill_runqueue_wait_ns", "null");
	set_raw(p, "fill_cpus_allowed", "null");
	CHECK_STR(fill_line(doc, p, &v), "2 threads ran 1.2 CPUs on average (on a CPU 10.7 s); "
		  "the wait for a CPU was not measured (no /proc/thread-self/schedstat)",
		  "the wait null: no reason given");
	set_raw(p, "threads", "1");
	CHECK_STR(fill_line(doc, p, &v), "", "one thread: nothing");
	cJSON_Delete(doc);
}

/* A kill whose victim no one knows (the polled oom_kill counter's, no BPF):
 * pid null, or 0 in documents before null; every renderer that shows the
 * victim says it is not known, none shows pid 0 (text said
 * "(not named)[0]", csv "0,(not named)", the chart data-pid="0"). A
 * hook's kill keeps its comm[pid]. Real records (tests/fixtures/html). */
static void test_oom_victim(void)
{
	static const struct {
		const char *file;
		bool known;
		const char *want[5]; /* text, markdown, html's table and mark, csv */
	} docs[] = {
		{ "record-polled-oom.json", false, {
		  "OOM kill at 0.3 s: victim not known (" MP_VIEW_OOM_NO_VICTIM_WHY "; usage",
		  "| " MP_VIEW_OOM_NO_VICTIM " |",
		  "<td><span class=\"sub\">" MP_VIEW_OOM_NO_VICTIM "</span>",
		  "<g class=\"oom-mark\" data-t-ms=",
		  "\r\n270,,,67108864,false," } },
		{ "record-polled-oom-pid0.json", false, {
		  "OOM kill at 0.2 s: victim not known (" MP_VIEW_OOM_NO_VICTIM_WHY "; usage",
		  "| " MP_VIEW_OOM_NO_VICTIM " |",
		  "<td><span class=\"sub\">" MP_VIEW_OOM_NO_VICTIM "</span>",
		  "<g class=\"oom-mark\" data-t-ms=",
		  "\r\n236,,,67108864,false," } },
		{ "record-oom.json", true, {
		  "OOM kill at 1.6 s: alloc[21668] (",
		  "| `alloc[21668]` |",
		  "<td><code>alloc[21668]</code>",
		  "<g class=\"oom-mark\" data-pid=\"21668\"",
		  "\r\n1605,21668,alloc," } },
	};
	static const char *const fmts[] = { "text", "markdown", "html", "html", "csv" };

	mp_render_opts.table = "oom_kills";
	for (size_t d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		char err[512], path[256];
		int kind = 0;
		cJSON *doc;
		struct mp_rd rd;
		struct mp_view_ooms v;

		snprintf(path, sizeof(path), FIXTURES "/html/%s", docs[d].file);
		doc = mp_doc_load_file(path, &kind, err, sizeof(err));
		CHECK(doc && kind == MP_DOC_RECORD, "%s loads: %s", docs[d].file, doc ? "" : err);
		if (!doc)
			continue;
		rd = (struct mp_rd){ .root = doc };
		CHECK(mp_view_ooms(doc, &rd, &v) == 0 && v.n == 1, "%s: one kill: %s",
		      docs[d].file, rd.err);
		if (v.n == 1) {
			CHECK_EQ_INT(v.rows[0].victim_known, docs[d].known, "%s: victim known",
				     docs[d].file);
			CHECK(docs[d].known ? v.rows[0].pid == 21668 && v.rows[0].comm :
					      v.rows[0].pid == 0 && !v.rows[0].comm,
			      "%s: pid %llu comm %s", docs[d].file,
			      (unsigned long long)v.rows[0].pid, v.rows[0].comm ? v.rows[0].comm : "NULL");
		}
		mp_view_ooms_free(&v);
		for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
			char *out = rendered(doc, kind, fmts[i]);
			/* the page's copy of the document for programs holds its
			 * own words: what it shows ends before it */
			char *json = strstr(out, "<script type=\"application/json\"");

			if (json)
				*json = '\0';
			has(out, docs[d].want[i], fmts[i]);
			CHECK(!strstr(out, "[0]") && !strstr(out, "data-pid=\"0\"") &&
			      !strstr(out, "(not named)"), "%s %s: no pid 0, no (not named)",
			      docs[d].file, fmts[i]);
			free(out);
		}
		cJSON_Delete(doc);
	}
	mp_render_opts.table = NULL;
}

int main(void)
{
	test_oom_victim();
	test_overhead_rows();
	test_pct();
	test_cats();
	test_cells();
	test_reserve_metric();
	test_fill();
	return unit_done("views");
}
