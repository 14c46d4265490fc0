// SPDX-License-Identifier: GPL-2.0
/*
 * --format html: what the text report says beside the charts — the
 * headroom hard and soft, the margin, aim and stop reason, page faults,
 * pinned memory and shmem (the shared segments, what no process maps),
 * events lost and their bound, what was not charged, each OOM kill's
 * category vector. Every figure is the document's own member, and says
 * which: data-field="PATH" (as in the JSON: "pinned.shared_segments.0.
 * resident_bytes") with data-value, its exact value; where the document
 * says null the cell reads "not measured" (class="not-measured"), never 0.
 * The tests read these attributes back from Chromium's DOM.
 */
#include "render_html.h"
#include "attr.h" /* mp_lost_names */
#include "proc_role.h"
#include "util.h"
#include "views.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* "<tr data-field=PATH data-value=N><th>LABEL</th><td>", or where the
 * document says null "... class=not-measured>...<td>not measured": true
 * with *v when there is a value; the caller ends the cell. */
static bool fact(FILE *f, const char *path, const char *label, const cJSON *o, const char *name,
		 uint64_t *v, struct mp_rd *rd)
{
	bool has = mp_rd_u64(rd, o, name, MP_RD_NULL, v);

	fprintf(f, "<tr data-field=\"%s\"", path);
	if (has)
		fprintf(f, " data-value=\"%" PRIu64 "\"><th>%s</th><td>", *v, label);
	else
		fprintf(f, " class=\"not-measured\"><th>%s</th><td>not measured", label);
	return has;
}

/* A size row: "512.0 MiB" and EXTRA, or "not measured". */
static void fact_size(FILE *f, const char *path, const char *label, const cJSON *o,
		      const char *name, const char *extra, struct mp_rd *rd)
{
	uint64_t v;
	char b[32];

	if (fact(f, path, label, o, name, &v, rd)) {
		mp_html_esc(f, mp_render_usize(v, b, sizeof(b)));
		mp_html_esc(f, extra);
	}
	fputs("</td></tr>\n", f);
}

/* A size cell of a table, the same way: v where has, else "not measured". */
static void cell_v(FILE *f, const char *path, bool has, uint64_t v)
{
	char b[32];

	if (has)
		fprintf(f, "<td class=\"n\" data-field=\"%s\" data-value=\"%" PRIu64 "\">%s</td>", path,
			v, mp_render_usize(v, b, sizeof(b)));
	else
		fprintf(f, "<td class=\"n not-measured\" data-field=\"%s\">not measured</td>", path);
}

/* Member name of o as a cell. */
static void cell(FILE *f, const char *path, const cJSON *o, const char *name, struct mp_rd *rd)
{
	uint64_t v = 0;
	bool has = mp_rd_u64(rd, o, name, MP_RD_NULL, &v);

	cell_v(f, path, has, v);
}

/* A string fact: data-value is the string itself. */
static void fact_str_open(FILE *f, const char *path, const char *label, const char *v)
{
	fprintf(f, "<tr data-field=\"%s\" data-value=\"", path);
	mp_html_esc(f, v);
	fprintf(f, "\"><th>%s</th><td>", label);
}

static void soft_row(const cJSON *t, FILE *f, struct mp_rd *rd)
{
	uint64_t rec;
	char w[200], extra[208] = "";

	if (!mp_rd_item(rd, t, "soft_headroom_bytes", MP_RD_ABSENT))
		return; /* older documents */
	if (mp_rd_u64(rd, t, "reclaimable_bytes", MP_RD_NULL | MP_RD_ABSENT, &rec))
		snprintf(extra, sizeof(extra), " (%s)", mp_view_soft_words(t, rd, mp_fmt_sbytes,
			 "the hard headroom", rec, w, sizeof(w)));
	fact_size(f, "target.soft_headroom_bytes", "headroom, soft", t, "soft_headroom_bytes", extra,
		  rd);
}

/* The aim, the stop and the page cache the kernel took back (older
 * documents have none of them). */
static void stop_rows(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	const char *aim = mp_rd_str(rd, p, "aim", MP_RD_ABSENT);
	char b[32];

	if (!aim)
		return;
	fact_str_open(f, "probe.aim", "aim", aim);
	mp_html_esc(f, aim);
	fprintf(f, ": stop at %s of <code>",
		mp_render_usize(mp_rd_u64v(rd, p, "stop_at_bytes"), b, sizeof(b)));
	mp_html_esc(f, mp_rd_str(rd, p, "stop_at_from", 0));
	fputs("</code>; ", f);
	mp_html_esc(f, mp_rd_str(rd, p, "aim_why", 0));
	fputs("</td></tr>\n", f);
	fact_str_open(f, "probe.stop_reason", "stopped by", mp_rd_str(rd, p, "stop_reason", 0));
	mp_html_esc(f, mp_rd_str(rd, p, "stop_reason", 0));
	if (mp_rd_bool(rd, p, "throttled", 0))
		fputs(": <b>throttled</b> at memory.high (the kernel slowed the fill), stopped "
		      "instead of crawling", f);
	fputs("</td></tr>\n", f);
	if (mp_rd_item(rd, p, "cache_reclaimed_bytes", MP_RD_ABSENT))
		fact_size(f, "probe.cache_reclaimed_bytes", "page cache reclaimed", p,
			  "cache_reclaimed_bytes", mp_rd_bool(rd, p, "reclaim_cache", 0) ?
			  " by the kernel to make room (--reclaim-cache)" : " by the kernel", rd);
}

/* With --threads N: the CPUs the fill got and why no more, as the text
 * says it; its figure the threads' time on a CPU. */
static void fill_row(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	struct mp_view_fill fill;
	uint64_t v;

	mp_view_fill(p, rd, &fill);
	if (!fill.shown)
		return;
	fact(f, "probe.fill_cpu_ns", "fill", p, "fill_cpu_ns", &v, rd);
	mp_html_esc(f, fill.line);
	fputs("</td></tr>\n", f);
}

void mp_html_probe_facts(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	const cJSON *t = mp_rd_obj(rd, r, "target", 0), *p = mp_rd_obj(rd, r, "probe", 0);
	char b[32], b2[32], extra[128];
	uint64_t v;

	if (fact(f, "target.headroom_bytes", "headroom, hard", t, "headroom_bytes", &v, rd)) {
		fprintf(f, "<b>%s</b> set by <code>", mp_render_usize(v, b, sizeof(b)));
		mp_html_esc(f, mp_rd_str(rd, t, "headroom_from", 0));
		fputs("</code>", f);
	}
	fputs("</td></tr>\n", f);
	soft_row(t, f, rd);
	snprintf(extra, sizeof(extra), " below the aim (%s chunks, thp %s)",
		 mp_fmt_bytes(mp_rd_u64v(rd, p, "chunk_bytes"), b2, sizeof(b2)),
		 mp_rd_str(rd, p, "thp", 0));
	fact_size(f, "probe.margin_bytes", "margin", p, "margin_bytes", extra, rd);
	fill_row(p, f, rd);
	stop_rows(p, f, rd);
}

void mp_html_faults_row(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *pf = mp_rd_obj(rd, a, "page_faults", MP_RD_ABSENT);
	const char *per_gib;
	uint64_t v;

	if (!pf)
		return;
	per_gib = mp_rd_num(rd, pf, "probe_per_gib_allocated", MP_RD_NULL | MP_RD_ABSENT);
	if (fact(f, "attribution.page_faults.total", "page faults", pf, "total", &v, rd)) {
		fprintf(f, "%" PRIu64 " in the target", v);
		if (per_gib)
			fprintf(f, "; the probe's %" PRIu64 ", %s per GiB it allocated",
				mp_rd_u64v(rd, pf, "probe"), per_gib);
		fputs(" (", f);
		mp_html_esc(f, mp_rd_str(rd, pf, "source", 0));
		fputs(")", f);
	}
	fputs("</td></tr>\n", f);
}

/* ---- pinned memory and shmem ------------------------------------------------------ */

static void pinned_rows(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	uint64_t v;
	char b[32];

	fputs("<table class=\"summary pinned\">\n", f);
	fact_size(f, "pinned.unevictable_bytes", "unevictable", p, "unevictable_bytes",
		  " (memory.stat)", rd);
	fact_size(f, "pinned.shmem_bytes", "shmem", p, "shmem_bytes", " (memory.stat, once)", rd);
	fact_size(f, "pinned.vm_lck_bytes", "locked (VmLck)", p, "vm_lck_bytes",
		  " summed over the processes", rd);
	fact_size(f, "pinned.vm_pin_bytes", "pinned (VmPin)", p, "vm_pin_bytes",
		  " summed over the processes", rd);
	if (mp_rd_item(rd, p, "rss_shmem_max_bytes", MP_RD_ABSENT)) {
		snprintf(b, sizeof(b), "%" PRIu64, mp_rd_u64v(rd, p, "processes"));
		if (fact(f, "pinned.rss_shmem_max_bytes", "RssShmem", p, "rss_shmem_max_bytes", &v,
			 rd))
			fprintf(f, "up to %s in one process (%s read; a shared page counts in "
				"every process mapping it, so these are not summed)",
				mp_render_usize(v, (char[32]){ 0 }, 32), b);
		fputs("</td></tr>\n", f);
	} else if (mp_rd_item(rd, p, "rss_shmem_bytes", MP_RD_ABSENT)) {
		fact_size(f, "pinned.rss_shmem_bytes", "RssShmem, summed", p, "rss_shmem_bytes",
			  " (an older document: a shared page counted once per process mapping it)",
			  rd);
	}
	if (mp_rd_item(rd, p, "shmem_unmapped_bytes", MP_RD_ABSENT)) {
		fact_size(f, "pinned.shmem_unmapped_bytes", "shmem no process maps", p,
			  "shmem_unmapped_bytes", " at least", rd);
		fact_size(f, "pinned.file_unmapped_bytes", "page cache no process maps", p,
			  "file_unmapped_bytes", " (shmem included)", rd);
	}
	fputs("</table>\n", f);
}

/* The mappers of a segment by name and role, all of them. */
static void mappers(const struct mp_view_segment *s, FILE *f)
{
	for (int i = 0; i < s->ngroups; i++) {
		fputs(i ? ", <code>" : "<code>", f);
		mp_html_esc(f, s->groups[i].name);
		fputs("</code>", f);
	}
}

static void segments(const struct mp_view_pinned *v, FILE *f)
{
	char path[96];

	if (!v->has_segments)
		return;
	if (!v->nsegs) {
		fputs("<p>No shared segment (shmem mapped by processes) in the target.</p>\n", f);
		return;
	}
	fputs("<p>Shared segments: each counted once, whoever maps it; the kernel charged each "
	      "page to the process that touched it first.</p>\n<div class=\"wrap\"><table "
	      "class=\"segments\"><tr><th>segment</th><th class=\"n\">mapped</th>"
	      "<th class=\"n\">resident</th><th class=\"n\">processes</th><th>mapped by</th></tr>\n",
	      f);
	for (int i = 0; i < v->nsegs; i++) {
		const struct mp_view_segment *s = &v->segs[i];

		fputs("<tr><td><code>", f);
		mp_html_esc(f, s->name);
		fputs("</code></td>", f);
		snprintf(path, sizeof(path), "pinned.shared_segments.%d.mapped_bytes", i);
		cell_v(f, path, true, s->mapped);
		snprintf(path, sizeof(path), "pinned.shared_segments.%d.resident_bytes", i);
		cell_v(f, path, s->has_resident, s->resident);
		fprintf(f, "<td class=\"n\">%" PRIu64 "</td><td>", s->mappers);
		mappers(s, f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
	if (v->segments_total > (uint64_t)v->nsegs)
		fprintf(f, "<p class=\"sub\">and %" PRIu64 " more shared segments, not listed</p>\n",
			v->segments_total - (uint64_t)v->nsegs);
}

static void pinned_tasks(const struct mp_view_pinned *v, FILE *f, struct mp_rd *rd)
{
	char b[4][32];

	if (!v->ntasks)
		return;
	fputs("<div class=\"wrap\"><table class=\"pinned-tasks\"><tr><th>process</th><th>category"
	      "</th><th class=\"n\">locked</th><th>of it</th><th class=\"n\">pinned</th>"
	      "<th class=\"n\">RssShmem</th></tr>\n", f);
	for (int i = 0; i < v->ntasks; i++) {
		const struct mp_view_pinned_task *t = &v->tasks[i];

		fputs("<tr><td>", f);
		mp_html_who(f, t->obj, rd);
		fputs("</td><td>", f);
		mp_html_esc(f, t->category);
		fprintf(f, "</td><td class=\"n\">%s</td><td>",
			mp_render_usize(t->vm_lck, b[0], sizeof(b[0])));
		if (t->locked)
			fprintf(f, "shmem %s, anon %s, file %s",
				mp_fmt_bytes(t->shmem, b[1], sizeof(b[1])),
				mp_fmt_bytes(t->anon, b[2], sizeof(b[2])),
				mp_fmt_bytes(t->file, b[3], sizeof(b[3])));
		else
			fputs("not measured", f);
		fprintf(f, "</td><td class=\"n\">%s</td>", mp_render_usize(t->vm_pin, b[0], sizeof(b[0])));
		fprintf(f, "<td class=\"n\">%s</td></tr>\n",
			mp_render_usize(t->rss_shmem, b[1], sizeof(b[1])));
	}
	fputs("</table></div>\n", f);
}

/* Drivers' kernel memory, charged and not (null: no kernel stacks). */
static void drivers(const struct mp_view_pinned *v, FILE *f)
{
	char path[64];

	if (!v->has_drivers) {
		fputs("<p data-field=\"pinned.drivers\" class=\"not-measured\">Drivers: not measured "
		      "(no kernel stacks).</p>\n", f);
		return;
	}
	if (!v->ndrivers) {
		fputs("<p data-field=\"pinned.drivers\" data-value=\"0\">Drivers: none seen in the "
		      "kernel paths.</p>\n", f);
		return;
	}
	fputs("<div class=\"wrap\"><table class=\"drivers\"><tr><th>driver</th><th class=\"n\">"
	      "allocated</th><th class=\"n\">charged</th><th class=\"n\">not charged (the host "
	      "pays)</th></tr>\n", f);
	for (int i = 0; i < v->ndrivers; i++) {
		const struct mp_view_driver *d = &v->drivers[i];

		fputs("<tr><td><code>", f);
		mp_html_esc(f, d->driver);
		fputs("</code></td>", f);
		snprintf(path, sizeof(path), "pinned.drivers.%d.alloc_bytes", i);
		cell_v(f, path, true, d->alloc);
		snprintf(path, sizeof(path), "pinned.drivers.%d.charged_bytes", i);
		cell_v(f, path, true, d->charged);
		snprintf(path, sizeof(path), "pinned.drivers.%d.not_charged_bytes", i);
		cell_v(f, path, true, d->not_charged);
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

void mp_html_pinned(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	struct mp_view_pinned v;

	if (!p || mp_view_pinned(p, rd, &v))
		return; /* older documents */
	fprintf(f, "<section class=\"pinned\"><h2>Pinned and shared memory, %s</h2>\n", v.when);
	pinned_rows(p, f, rd);
	segments(&v, f);
	pinned_tasks(&v, f, rd);
	drivers(&v, f);
	fputs("</section>\n", f);
	mp_view_pinned_free(&v);
}

/* ---- events lost, not charged, OOM vectors ---------------------------------------- */

void mp_html_lost(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *o = mp_rd_obj(rd, a, "events_lost", MP_RD_ABSENT);
	uint64_t v;
	char path[96];

	if (!o)
		return; /* no BPF session: attribution_missing says why */
	fputs("<table class=\"summary lost\">\n", f);
	if (fact(f, "attribution.events_lost.total", "events lost", o, "total", &v, rd))
		fprintf(f, "%" PRIu64 "%s", v, v ? "" : " (every event counted)");
	fputs("</td></tr>\n", f);
	for (int l = 0; l < MP_NR_LOST; l++)
		if (mp_rd_u64(rd, o, mp_lost_names[l], MP_RD_ABSENT, &v) && v) {
			snprintf(path, sizeof(path), "attribution.events_lost.%s", mp_lost_names[l]);
			fprintf(f, "<tr data-field=\"%s\" data-value=\"%" PRIu64 "\"><th>", path, v);
			mp_html_esc(f, mp_lost_names[l]);
			fprintf(f, "</th><td>%" PRIu64 "</td></tr>\n", v);
		}
	if (mp_rd_u64(rd, o, "recursion_misses", MP_RD_ABSENT, &v) && v) {
		fprintf(f, "<tr data-field=\"attribution.events_lost.recursion_misses\" data-value=\"%"
			PRIu64 "\"><th>skipped by the recursion guard</th><td>%" PRIu64 " runs</td>"
			"</tr>\n", v, v);
		if (mp_rd_item(rd, o, "recursion_miss_bound_bytes", MP_RD_ABSENT))
			fact_size(f, "attribution.events_lost.recursion_miss_bound_bytes",
				  "what they can have changed", o, "recursion_miss_bound_bytes",
				  " of the figures, at most", rd);
	}
	fputs("</table>\n", f);
}

void mp_html_not_charged(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *nc = mp_rd_arr(rd, a, "not_charged", 0), *it;
	const cJSON *pa = mp_rd_obj(rd, a, "page_alloc", MP_RD_ABSENT);
	char path[64];
	int i = 0;

	fputs("<section class=\"not-charged\"><h2>Not charged to the cgroup</h2>\n", f);
	if (pa && !mp_rd_arr(rd, pa, "kernel_pages_by_order", MP_RD_NULL)) {
		fputs("<p data-field=\"attribution.not_charged\" class=\"not-measured\">Not measured: "
		      "no page allocation hook.</p></section>\n", f);
		return;
	}
	if (!cJSON_GetArraySize(nc)) {
		fputs("<p data-field=\"attribution.not_charged\" data-value=\"0\">None: every kernel "
		      "page allocated in the target's tasks was charged to it.</p></section>\n", f);
		return;
	}
	fputs("<p>Kernel pages allocated in the target's tasks without <code>__GFP_ACCOUNT"
	      "</code>: the host pays for them, the limit does not see them.</p>\n"
	      "<div class=\"wrap\"><table class=\"not-charged\"><tr><th>path</th>"
	      "<th class=\"n\">allocated</th></tr>\n", f);
	cJSON_ArrayForEach(it, nc) {
		if (!mp_rd_is_obj(rd, it))
			return;
		fputs("<tr><td><code>", f);
		mp_html_esc(f, mp_rd_str(rd, it, "path", 0));
		fputs("</code></td>", f);
		snprintf(path, sizeof(path), "attribution.not_charged.%d.alloc_bytes", i++);
		cell(f, path, it, "alloc_bytes", rd);
		fputs("</tr>\n", f);
	}
	fputs("</table></div></section>\n", f);
}

/* One kill's vector: what was charged, each byte once, and the limit. */
static void oom_vector(const struct mp_view_oom *k, int i, FILE *f, struct mp_rd *rd)
{
	static const char *const keys[] = { "rss_bytes", "shmem_unmapped_bytes",
					    "page_cache_unmapped_bytes", "kernel_bytes", "sock_bytes" };
	const cJSON *ch = mp_rd_obj(rd, k->obj, "charged", MP_RD_NULL | MP_RD_ABSENT);
	char path[96];

	fprintf(f, "<tr><td class=\"n\">%.1f</td><td>", k->t_ms / 1000.0);
	mp_html_oom_who(f, k, rd);
	fputs("</td>", f);
	for (size_t j = 0; j < sizeof(keys) / sizeof(keys[0]); j++) {
		snprintf(path, sizeof(path), "oom_kills.%d.charged.%s", i, keys[j]);
		if (ch)
			cell(f, path, ch, keys[j], rd);
		else
			fprintf(f, "<td class=\"n not-measured\" data-field=\"%s\">not measured</td>",
				path);
	}
	snprintf(path, sizeof(path), "oom_kills.%d.limit_bytes", i);
	if (mp_rd_item(rd, k->obj, "limit_bytes", MP_RD_ABSENT))
		cell_v(f, path, k->has_limit, k->limit);
	else
		fputs("<td class=\"n\"></td>", f);
	fputs("</tr>\n", f);
}

void mp_html_oom_vectors(const struct mp_view_ooms *v, FILE *f, struct mp_rd *rd)
{
	char line[4096];

	if (!v->n)
		return;
	fputs("<p>What was charged at each kill, each byte once (the last sample's memory.stat): "
	      "RSS is what processes map; shmem and page cache no process maps (unmapped) are "
	      "what an OOM with low RSS is made of.</p>\n<div class=\"wrap\"><table class=\"oom-vectors\"><tr>"
	      "<th class=\"n\">t (s)</th><th>task</th><th class=\"n\">RSS</th><th class=\"n\">shmem"
	      "<br>unmapped</th><th class=\"n\">page cache<br>unmapped</th>"
	      "<th class=\"n\">kernel</th><th class=\"n\">sock</th><th class=\"n\">limit<br>then</th>"
	      "</tr>\n", f);
	for (int i = 0; i < v->n; i++)
		oom_vector(&v->rows[i], i, f, rd);
	fputs("</table></div>\n", f);
	for (int i = 0; i < v->n; i++)
		if (mp_render_oom_line(rd, v->rows[i].obj, line, sizeof(line))) {
			fputs("<p class=\"sub\">", f);
			mp_html_esc(f, line);
			fputs("</p>\n", f);
		}
}
