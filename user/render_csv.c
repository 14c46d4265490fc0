// SPDX-License-Identifier: GPL-2.0
/*
 * --format csv: one table of a probe or record document, for a spreadsheet
 * or a script. RFC 4180: a header row, CRLF line ends, a field quoted when
 * it holds a comma, a quote, CR or LF (quotes doubled). Byte counts are the
 * document's exact integers; an empty field is null or absent. --table
 * picks the table (struct mp_render_opts): categories (the default),
 * tasks, kernel_paths, hooks, overhead (the overhead explained),
 * copy_on_write, figures (the document's figures of its moment, one a
 * row), and for record the timeline and the OOM kills.
 */
#include "render.h"
#include "compare.h"
#include "util.h"
#include "views.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

struct csv_table {
	const char *name;
	int kinds;
	void (*write)(const cJSON *doc, FILE *f, struct mp_rd *rd);
};

/* A row being written: the first field has no comma before it. */
struct row {
	FILE *f;
	int n;
};

static void field(struct row *r, const char *s)
{
	bool quote = s && strpbrk(s, ",\"\r\n");

	if (r->n++)
		fputc(',', r->f);
	if (!s)
		return;
	if (!quote) {
		fputs(s, r->f);
		return;
	}
	fputc('"', r->f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', r->f);
		fputc(*s, r->f);
	}
	fputc('"', r->f);
}

static void end_row(struct row *r)
{
	fputs("\r\n", r->f);
	r->n = 0;
}

/* A header: the names, comma-separated in one string. */
static void header(FILE *f, const char *names)
{
	fprintf(f, "%s\r\n", names);
}

static const cJSON *attribution(const cJSON *doc, struct mp_rd *rd)
{
	return mp_rd_obj(rd, doc, "attribution", 0);
}

/* An integer we computed, as a field. */
static void field_n(struct row *r, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	field(r, b);
}

/* An integer of the view's, as a field; empty when not given. */
static void field_given(struct row *r, bool given, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, v);
	field(r, given ? b : NULL);
}

/* Every category (none skipped, as the displays skip the empty ones), or
 * -1 with rd's error said. */
static int categories(const cJSON *doc, struct mp_rd *rd, struct mp_view_cats *v)
{
	return mp_view_cats(attribution(doc, rd), rd, NULL, MP_VIEW_EXPORT, v);
}

static void t_categories(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	struct row r = { f, 0 };

	/* estimated, bound_bytes and below_floor: docs/report-format.md; an
	 * exact figure (or a document from before them) leaves them empty */
	header(f, "category,available,source,growth_bytes,retained_bytes,estimated,bound_bytes,"
		  "below_floor");
	if (categories(doc, rd, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_cat *c = &v.rows[i];

		field(&r, c->name);
		field(&r, c->available ? "true" : "false");
		field(&r, c->source);
		field_given(&r, true, c->growth_bytes);
		field_given(&r, c->has_retained, c->retained);
		field(&r, c->estimated ? "true" : NULL);
		field_given(&r, c->has_bound, c->bound);
		field(&r, c->below_floor ? "true" : NULL);
		end_row(&r);
	}
	mp_view_cats_free(&v);
}

static void t_tasks(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	struct row r = { f, 0 };

	header(f, "category,pid,comm,bytes");
	if (categories(doc, rd, &v))
		return;
	for (int i = 0; i < v.n; i++)
		for (int k = 0; k < v.rows[i].ntasks; k++) {
			const struct mp_view_cat_task *t = &v.rows[i].tasks[k];

			field(&r, v.rows[i].name);
			if (t->has_pid)
				field_n(&r, t->pid);
			else
				field(&r, NULL);
			field(&r, t->comm);
			field_given(&r, true, t->bytes);
			end_row(&r);
		}
	mp_view_cats_free(&v);
}

/* Charged paths (net and allocated), then the ones not charged (allocated). */
static void t_kernel_paths(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_paths v;
	struct row r = { f, 0 };

	header(f, "path,charged,bytes,alloc_bytes");
	if (mp_view_paths(attribution(doc, rd), rd, MP_VIEW_EXPORT, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		field(&r, v.rows[i].path);
		field(&r, "true");
		field_given(&r, true, v.rows[i].bytes);
		field_n(&r, v.rows[i].alloc);
		end_row(&r);
	}
	for (int i = 0; i < v.nnc; i++) {
		field(&r, v.nc[i].path);
		field(&r, "false");
		field(&r, NULL);
		field_n(&r, v.nc[i].alloc);
		end_row(&r);
	}
	mp_view_paths_free(&v);
}

static void t_hooks(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_hooks v;
	struct row r = { f, 0 };

	header(f, "concern,name,kind,target,hook,polled,missing_reason,missing");
	if (mp_view_hooks(attribution(doc, rd), rd, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_hook *h = &v.rows[i];

		field(&r, h->concern);
		field(&r, h->name);
		field(&r, h->kind);
		field(&r, h->target);
		field(&r, h->hook_given);
		field(&r, h->polled ? "true" : "false");
		field(&r, h->missing_reason);
		field(&r, h->missing);
		end_row(&r);
	}
	mp_view_hooks_free(&v);
}

/*
 * One row per timeline row, a column per category of category_sources (its
 * order): the kernel's figure (stat) where the row has one, else BPF's
 * growth, as the text timeline and category_sources say; empty: neither.
 * Then the row's resolution: a folded row's resolution_ms, samples and
 * usage min and max (its other figures are its last sample's); a sample's
 * interval, 1 and its usage twice.
 */
static void t_timeline(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *cats = mp_rd_obj(rd, doc, "category_sources", 0), *c;
	struct mp_view_timeline v;
	struct row r = { f, 0 };
	int64_t x;

	fputs("t_ms,usage_bytes,limit_bytes,faults_per_sec", f);
	cJSON_ArrayForEach(c, cats) {
		fputc(',', f);
		r.n = 0;
		field(&r, c->string);
	}
	fputs(",resolution_ms,samples,usage_min_bytes,usage_max_bytes\r\n", f);
	r.n = 0;
	if (mp_view_timeline(doc, rd, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_tl_row *s = &v.rows[i];

		field_n(&r, s->t_ms);
		field_n(&r, s->usage);
		if (s->has_limit)
			field_n(&r, s->limit);
		else
			field(&r, NULL);
		field_n(&r, s->faults_per_sec);
		cJSON_ArrayForEach(c, cats) {
			char b[32] = "";

			if (mp_view_tl_cat(s->obj, c->string, rd, &x))
				snprintf(b, sizeof(b), "%" PRId64, x);
			field(&r, b[0] ? b : NULL);
		}
		field_n(&r, s->resolution_ms);
		field_n(&r, s->samples);
		field_n(&r, s->usage_min);
		field_n(&r, s->usage_max);
		end_row(&r);
	}
	mp_view_timeline_free(&v);
}

/* One figure: its path and its value (a number's literal, a string, true
 * or false; empty for null). */
static void figure(struct row *r, const char *path, const cJSON *it)
{
	field(r, path);
	field(r, cJSON_IsRaw(it) || cJSON_IsString(it) ? it->valuestring :
		 cJSON_IsTrue(it) ? "true" : cJSON_IsFalse(it) ? "false" : NULL);
	end_row(r);
}

/* Every scalar member of o, named prefix.member, in the document's order. */
static void figures_of(struct row *r, const char *prefix, const cJSON *o)
{
	const cJSON *it;
	char path[160];

	cJSON_ArrayForEach(it, o) {
		if (cJSON_IsObject(it) || cJSON_IsArray(it) || !it->string)
			continue;
		snprintf(path, sizeof(path), "%s.%s", prefix, it->string);
		figure(r, path, it);
	}
}

/*
 * The figures of the document's moment, one a row: the reconciliation
 * (anon unmapped with it) and the processes counted, the peak and its
 * vector, the timeline's late samples, the pinned object (memory no
 * process maps), each OOM kill's limit hit and what no RSS showed.
 */
static void t_figures(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *a = mp_rd_obj(rd, doc, "attribution", MP_RD_ABSENT), *it;
	struct row r = { f, 0 };
	char p[64];
	int i = 0;

	header(f, "figure,value");
	figures_of(&r, "attribution.reconciliation", mp_rd_obj(rd, a, "reconciliation", MP_RD_ABSENT));
	figures_of(&r, "attribution", a);
	figures_of(&r, "peak", mp_rd_obj(rd, doc, "peak", MP_RD_ABSENT));
	figures_of(&r, "run", mp_rd_obj(rd, doc, "run", MP_RD_ABSENT));
	figures_of(&r, "pinned", mp_rd_obj(rd, doc, "pinned", MP_RD_ABSENT));
	cJSON_ArrayForEach(it, mp_rd_arr(rd, doc, "oom_kills", MP_RD_ABSENT)) {
		snprintf(p, sizeof(p), "oom_kills.%d", i);
		figures_of(&r, p, it);
		snprintf(p, sizeof(p), "oom_kills.%d.limit_hit", i);
		figures_of(&r, p, mp_rd_obj(rd, it, "limit_hit", MP_RD_ABSENT | MP_RD_NULL));
		snprintf(p, sizeof(p), "oom_kills.%d.charged", i++);
		figures_of(&r, p, mp_rd_obj(rd, it, "charged", MP_RD_ABSENT | MP_RD_NULL));
	}
}

/* A tail row of the overhead table: what it is, its category and bytes. */
static void tail_row(struct row *r, const char *at, const char *kind, const char *category,
		     int64_t bytes)
{
	field(r, at);
	field(r, kind);
	for (int i = 0; i < 4; i++)
		field(r, NULL);
	field(r, category);
	field_given(r, true, bytes);
	field(r, NULL);
	end_row(r);
}

/* A group's row of one category: who, the category's bytes, and with anon
 * its copies on write. */
static void group_row(struct row *r, const char *at, const struct mp_view_overhead_row *g,
		      const struct mp_view_part *c)
{
	field(r, at);
	field(r, "group");
	field(r, g->comm);
	field(r, g->role);
	field_n(r, g->processes);
	if (g->has_pid)
		field_n(r, g->pid);
	else
		field(r, NULL);
	field(r, c->category);
	field_given(r, true, c->bytes);
	field_given(r, !strcmp(c->category, "anon") && g->has_cow, g->cow);
	end_row(r);
}

/* One overhead object's rows (the overhead views): a row per category of
 * each group (an older document's parts: none), then what the kernel
 * reclaimed, the probe's own, unexplained and the total, so that the bytes
 * of one moment's rows but the total's add up to it. */
static void overhead_rows(const cJSON *o, const char *at, FILE *f, struct mp_rd *rd)
{
	struct mp_view_overhead_rows v;
	struct mp_view_overhead_tail t;
	struct row r = { f, 0 };

	if (mp_view_overhead_rows(o, rd, &v))
		return;
	if (mp_view_overhead_tail(o, rd, &t)) {
		mp_view_overhead_rows_free(&v);
		return;
	}
	for (int i = 0; v.groups && i < v.n; i++)
		for (int c = 0; c < v.rows[i].ncats; c++)
			group_row(&r, at, &v.rows[i], &v.rows[i].cats[c]);
	for (int i = 0; i < t.nreclaimed; i++)
		tail_row(&r, at, "reclaimed", t.reclaimed[i].category, t.reclaimed[i].bytes);
	for (int i = 0; i < t.nprobe; i++)
		tail_row(&r, at, "probe", t.probe[i].category, t.probe[i].bytes);
	tail_row(&r, at, "unexplained", NULL, t.unexplained);
	tail_row(&r, at, "total", NULL, t.total);
	mp_view_overhead_rows_free(&v);
	mp_view_overhead_tail_free(&t);
}

/* The overhead explained (a probe's, record's --probe-at): at the peak,
 * and left after; only the header without it. */
static void t_overhead(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *p = mp_rd_obj(rd, doc, "probe", MP_RD_ABSENT);
	const cJSON *o = mp_rd_obj(rd, p && cJSON_IsObject(mp_rd_item(rd, p, "overhead", MP_RD_ABSENT))
				   ? p : doc, "overhead", MP_RD_ABSENT), *l;

	header(f, "at,kind,comm,role,processes,pid,category,bytes,copy_on_write_bytes");
	if (!o)
		return;
	overhead_rows(o, "peak", f, rd);
	if ((l = mp_rd_obj(rd, o, "left_after", MP_RD_NULL)))
		overhead_rows(l, "left_after", f, rd);
}

/* record's OOM kills: the victim (empty: not known), the usage the hook
 * read at the kill (else the last sample's) and the limit in force then
 * (empty: not read). */
static void t_oom_kills(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_ooms v;
	struct row r = { f, 0 };

	header(f, "t_ms,pid,comm,usage_bytes,usage_at_kill,limit_bytes");
	if (mp_view_ooms(doc, rd, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_oom *k = &v.rows[i];

		field_n(&r, k->t_ms);
		/* no victim known: both empty, as null is */
		if (k->victim_known)
			field_n(&r, k->pid);
		else
			field(&r, NULL);
		field(&r, k->comm);
		field_n(&r, k->usage);
		field(&r, k->at_kill ? "true" : "false");
		if (k->has_limit)
			field_n(&r, k->limit);
		else
			field(&r, NULL);
		end_row(&r);
	}
	mp_view_ooms_free(&v);
}

/* Pages copied on write after a fork, per process (empty when not looked
 * for). */
static void t_copy_on_write(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cow v;
	struct row r = { f, 0 };

	header(f, "pid,comm,bytes");
	if (mp_view_cow(attribution(doc, rd), rd, &v))
		return;
	for (int i = 0; i < v.ntasks; i++) {
		field_n(&r, v.tasks[i].pid);
		field(&r, v.tasks[i].comm);
		field_n(&r, v.tasks[i].bytes);
		end_row(&r);
	}
	mp_view_cow_free(&v);
}

static const struct csv_table tables[] = {
	{ "categories", MP_DOC_PROBE | MP_DOC_RECORD, t_categories },
	{ "tasks", MP_DOC_PROBE | MP_DOC_RECORD, t_tasks },
	{ "kernel_paths", MP_DOC_PROBE | MP_DOC_RECORD, t_kernel_paths },
	{ "hooks", MP_DOC_PROBE | MP_DOC_RECORD, t_hooks },
	{ "overhead", MP_DOC_PROBE | MP_DOC_RECORD, t_overhead },
	{ "copy_on_write", MP_DOC_PROBE | MP_DOC_RECORD, t_copy_on_write },
	{ "timeline", MP_DOC_RECORD, t_timeline },
	{ "oom_kills", MP_DOC_RECORD, t_oom_kills },
	{ "figures", MP_DOC_PROBE | MP_DOC_RECORD, t_figures },
};
#define NR_TABLES (sizeof(tables) / sizeof(tables[0]))

void mp_csv_table_names(int kinds, char *buf, size_t len)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < NR_TABLES; i++)
		n += (tables[i].kinds & kinds) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NR_TABLES; i++) {
		if (!(tables[i].kinds & kinds))
			continue;
		k++;
		mp_appendf(buf, len, "%s%s", k == 1 ? "" : k == n ? " or " : ", ", tables[i].name);
	}
}

static const struct csv_table *find_table(const char *name)
{
	for (size_t i = 0; i < NR_TABLES; i++)
		if (strcmp(tables[i].name, name ? name : "categories") == 0)
			return &tables[i];
	return NULL;
}

/* One line, "memprobe CMD: ...", and the usage exit status. */
static int __attribute__((format(printf, 2, 3))) bad(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "memprobe %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return MP_EXIT_USAGE;
}

int mp_csv_table_check(const char *cmd, int kinds, const char *format, const char *table)
{
	const struct csv_table *t = find_table(table);
	char names[160];

	if (strcmp(format, "csv"))
		return bad(cmd, "--table: --format %s has no tables to choose from; use it with "
			   "--format csv", format);
	if (!table)
		return 0;
	mp_csv_table_names(kinds, names, sizeof(names));
	/* a kind with no tables (compare) has one csv: --table chooses nothing */
	if (!names[0])
		return 0;
	if (!t)
		return bad(cmd, "--table %s: no such table; use %s", table, names);
	/* kinds is one kind here: the command's, or report's loaded document's */
	if (!(t->kinds & kinds))
		return bad(cmd, "--table %s: a %s document has no %s table; use %s",
			   table, mp_doc_kind_name(kinds), table, names);
	return 0;
}

static void render_csv(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	const struct csv_table *t = find_table(mp_render_opts.table);

	if (kind == MP_DOC_COMPARE) { /* one table, the compare rows */
		mp_compare_render(doc, "csv", f, rd);
		return;
	}
	/* checked at option time; a caller that set no options gets categories */
	if (!t || !(t->kinds & kind)) {
		mp_rd_fail(rd, NULL, NULL, "no such csv table for it");
		return;
	}
	t->write(doc, f, rd);
}

const struct mp_renderer mp_renderer_csv = {
	.name = "csv",
	.kinds = MP_DOC_PROBE | MP_DOC_RECORD | MP_DOC_COMPARE,
	.render = render_csv,
};
