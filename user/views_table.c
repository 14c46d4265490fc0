// SPDX-License-Identifier: GPL-2.0
/* Views as tables of cells, for markdown and html (views.h, "tables"); and
 * the views of the kernel paths and the hooks. */
#include "views.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Room for one more of an array of size sz (n used, *cap allocated); false
 * and t->oom when there is none. */
static bool grow(struct mp_view_table *t, void **arr, int n, int *cap, size_t sz)
{
	void *p;

	if (t->oom)
		return false;
	if (n < *cap)
		return true;
	p = realloc(*arr, (size_t)(*cap ? *cap * 2 : 16) * sz);
	if (!p) {
		t->oom = true;
		return false;
	}
	*arr = p;
	*cap = *cap ? *cap * 2 : 16;
	return true;
}

static void table_start(struct mp_view_table *t, const char *cls, unsigned numeric, int ncols,
			const char *const *head)
{
	memset(t, 0, sizeof(*t));
	t->cls = cls;
	t->numeric = numeric;
	t->ncols = ncols;
	for (int c = 0; c < ncols; c++)
		t->head[c] = head[c];
}

/* A new cell (the next of its row), blank until spans are added. */
static void cell(struct mp_view_table *t, bool strong)
{
	if (!grow(t, (void **)&t->cells, t->ncells, &t->cap_cells, sizeof(*t->cells)))
		return;
	t->cells[t->ncells++] = (struct mp_view_cell){ .first = t->nspans, .strong = strong };
}

/* A span into the last cell. */
static void span(struct mp_view_table *t, enum mp_view_span_kind kind, const char *s,
		 const cJSON *obj)
{
	if (!t->ncells || !grow(t, (void **)&t->spans, t->nspans, &t->cap_spans, sizeof(*t->spans)))
		return;
	t->spans[t->nspans++] = (struct mp_view_span){ .kind = kind, .s = s, .obj = obj };
	t->cells[t->ncells - 1].n++;
}

/* Words the table keeps (a size, a share, a name built for the view), as
 * a span of kind. */
static void spanf(struct mp_view_table *t, enum mp_view_span_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void spanf(struct mp_view_table *t, enum mp_view_span_kind kind, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	if (!grow(t, (void **)&t->strs, t->nstrs, &t->cap_strs, sizeof(*t->strs)))
		return;
	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0) {
		t->oom = true;
		return;
	}
	t->strs[t->nstrs++] = s;
	span(t, kind, s, NULL);
}

/* A cell of one size, in size's words. */
static void size_cell(struct mp_view_table *t, mp_view_size_fn size, int64_t v, bool strong)
{
	char b[32];

	cell(t, strong);
	spanf(t, MP_SPAN_TEXT, "%s", size(v, b, sizeof(b)));
}

/* A cell of one span. */
static void one(struct mp_view_table *t, enum mp_view_span_kind kind, const char *s, bool strong)
{
	cell(t, strong);
	span(t, kind, s, NULL);
}

/* The table is done: 0, or -1 (out of memory, said through rd). */
static int table_end(struct mp_view_table *t, struct mp_rd *rd)
{
	if (!t->oom)
		return 0;
	mp_rd_fail(rd, NULL, NULL, "out of memory");
	mp_view_table_free(t);
	return -1;
}

void mp_view_table_free(struct mp_view_table *t)
{
	for (int i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->spans);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void mp_view_cell_spans(const struct mp_view_table *t, const struct mp_view_cell *c,
			mp_view_span_fn span, FILE *f, struct mp_rd *rd)
{
	for (int k = c->first; k < c->first + c->n; k++)
		span(&t->spans[k], f, rd);
}

void mp_view_lay(int built, struct mp_view_table *t, mp_view_table_fn lay, FILE *f,
		 struct mp_rd *rd)
{
	if (built)
		return;
	lay(t, f, rd);
	mp_view_table_free(t);
}

/* The top-tasks cell: the note, kernel_other's reserve, the top tasks. */
static void tasks_cell(struct mp_view_table *t, const struct mp_view_cat *c, mp_view_size_fn size)
{
	char b[32];

	cell(t, false);
	span(t, MP_SPAN_DOC, c->note, NULL);
	if (c->reserve)
		spanf(t, MP_SPAN_TEXT, "%s" MP_VIEW_RESERVE "%s%s", c->note[0] ? "; " : "",
		      size(c->reserve, b, sizeof(b)), c->ntasks ? "; " : "");
	for (int k = 0; k < c->ntasks; k++) {
		span(t, MP_SPAN_TEXT, k ? ", " : "", NULL);
		span(t, MP_SPAN_WHO, NULL, c->tasks[k].obj);
		spanf(t, MP_SPAN_TEXT, " %s", size(c->tasks[k].bytes, b, sizeof(b)));
	}
}

/* A row of the foot: a strong label, a figure, a blank, words. */
static void foot_row(struct mp_view_table *t, const char *label, int64_t v, mp_view_size_fn size)
{
	one(t, MP_SPAN_TEXT, label, true);
	size_cell(t, size, v, false);
	cell(t, false);
	cell(t, false);
}

int mp_view_cats_table(const struct mp_view_cats *v, mp_view_size_fn size, struct mp_rd *rd,
		       struct mp_view_table *t)
{
	static const char *const head[] = { "category", "growth", "left after", "top tasks" };

	table_start(t, "categories", 1u << 1 | 1u << 2, 4, head);
	for (int i = 0; i < v->n; i++) {
		one(t, MP_SPAN_NAME, v->rows[i].name, false);
		one(t, MP_SPAN_DOC, v->rows[i].growth, false);
		one(t, MP_SPAN_TEXT, v->rows[i].left, false);
		tasks_cell(t, &v->rows[i], size);
	}
	foot_row(t, "attributed", v->attributed, size);
	span(t, MP_SPAN_DOC, v->attributed_as, NULL);
	if (v->unmapped_shown) {
		foot_row(t, "anon unmapped", v->unmapped, size);
		span(t, MP_SPAN_TEXT, "out of anon, still charged: being freed, or held by a pipe "
		     "or a pin", NULL);
	}
	/* no share of a growth near zero (views.h) */
	foot_row(t, "unattributed", v->unattributed, size);
	if (v->share_shown)
		spanf(t, MP_SPAN_TEXT, "%.1f%% of the growth", v->unattributed_pct);
	else
		span(t, MP_SPAN_TEXT, "no share: the growth is under 1 MiB", NULL);
	return table_end(t, rd);
}

/* An overhead row's categories: a group's with their bytes (anon's copies
 * on write beside it), a part's one alone. */
static void overhead_cats(struct mp_view_table *t, const struct mp_view_overhead_row *r,
			  bool groups, mp_view_size_fn size)
{
	char b[32];

	cell(t, false);
	for (int c = 0; c < r->ncats; c++) {
		if (c)
			span(t, MP_SPAN_TEXT, ", ", NULL);
		span(t, MP_SPAN_NAME, r->cats[c].category, NULL);
		if (!groups)
			continue;
		spanf(t, MP_SPAN_TEXT, " %s", size(r->cats[c].bytes, b, sizeof(b)));
		if (!strcmp(r->cats[c].category, "anon") && r->cow)
			spanf(t, MP_SPAN_TEXT, " (%s copied on write)", size(r->cow, b, sizeof(b)));
	}
}

/* The tail's rows of parts, each labelled. */
static void part_rows(struct mp_view_table *t, const char *label, const struct mp_view_part *p,
		      int n, mp_view_size_fn size)
{
	for (int i = 0; i < n; i++) {
		one(t, MP_SPAN_TEXT, label, false);
		one(t, MP_SPAN_NAME, p[i].category, false);
		size_cell(t, size, p[i].bytes, false);
	}
}

/* A row of the tail with no category: a label and a figure. */
static void sum_row(struct mp_view_table *t, const char *label, int64_t v, bool strong,
		    mp_view_size_fn size)
{
	one(t, MP_SPAN_TEXT, label, strong);
	cell(t, false);
	size_cell(t, size, v, strong);
}

int mp_view_overhead_table(const cJSON *o, const char *total, mp_view_size_fn size,
			   struct mp_rd *rd, struct mp_view_table *t)
{
	static const char *const groups[] = { "who", "categories", "bytes" };
	static const char *const parts[] = { "part", "category", "bytes" };
	struct mp_view_overhead_rows v;
	struct mp_view_overhead_tail tail;

	memset(t, 0, sizeof(*t));
	if (mp_view_overhead_rows(o, rd, &v))
		return -1;
	if (mp_view_overhead_tail(o, rd, &tail)) {
		mp_view_overhead_rows_free(&v);
		return -1;
	}
	table_start(t, "overhead", 1u << 2, 3, v.groups ? groups : parts);
	for (int i = 0; i < v.n; i++) {
		cell(t, false);
		if (v.groups) /* the rows' names go with them */
			spanf(t, MP_SPAN_NAME, "%s", v.rows[i].name);
		else
			span(t, MP_SPAN_WHO, NULL, v.rows[i].obj);
		overhead_cats(t, &v.rows[i], v.groups, size);
		size_cell(t, size, v.rows[i].bytes, false);
	}
	part_rows(t, "reclaimed by the kernel to make room (the workload's)", tail.reclaimed,
		  tail.nreclaimed, size);
	part_rows(t, "the probe's own cost", tail.probe, tail.nprobe, size);
	sum_row(t, "the probe's own cost, in all", tail.probe_kernel, false, size);
	sum_row(t, "unexplained", tail.unexplained, false, size);
	sum_row(t, total, tail.total, true, size);
	mp_view_overhead_rows_free(&v);
	mp_view_overhead_tail_free(&tail);
	return table_end(t, rd);
}

/* ---- the kernel paths and the hooks ---------------------------------------- */

static void path_row(const cJSON *it, struct mp_rd *rd, bool stacks, struct mp_view_path *p)
{
	const cJSON *fr;

	p->path = mp_rd_str(rd, it, "path", 0);
	p->bytes = mp_rd_s64v(rd, it, "bytes");
	p->alloc = mp_rd_u64v(rd, it, "alloc_bytes");
	if (!stacks)
		return;
	p->stack = cJSON_GetArrayItem(mp_rd_arr(rd, it, "top_stacks", 0), 0);
	if (!p->stack || !mp_rd_is_obj(rd, p->stack))
		return;
	cJSON_ArrayForEach(fr, mp_rd_arr(rd, p->stack, "frames", 0)) {
		if (p->nframes >= MP_VIEW_FRAMES)
			break;
		p->frames[p->nframes++] = mp_rd_elem_str(rd, fr);
	}
}

/* The paths not charged: {path, alloc_bytes} each. */
static int not_charged(const cJSON *a, struct mp_rd *rd, unsigned may, struct mp_view_paths *v)
{
	const cJSON *arr = mp_rd_arr(rd, a, "not_charged", may), *it;

	if (!(v->nc = mp_view_rows(arr, sizeof(*v->nc), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (!mp_rd_is_obj(rd, it))
			return -1;
		v->nc[v->nnc].path = mp_rd_str(rd, it, "path", 0);
		v->nc[v->nnc++].alloc = mp_rd_u64v(rd, it, "alloc_bytes");
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

int mp_view_paths(const cJSON *a, struct mp_rd *rd, unsigned flags, struct mp_view_paths *v)
{
	unsigned may = flags & MP_VIEW_EXPORT ? MP_RD_ABSENT : 0;
	const cJSON *arr = mp_rd_arr(rd, a, "kernel_paths", may), *it;

	memset(v, 0, sizeof(*v));
	if (!(v->rows = mp_view_rows(arr, sizeof(*v->rows), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (!mp_rd_is_obj(rd, it))
			break;
		path_row(it, rd, !may, &v->rows[v->n++]);
	}
	if (mp_rd_ok(rd) && !not_charged(a, rd, may, v))
		return 0;
	mp_view_paths_free(v);
	return -1;
}

const char *mp_view_paths_none(const cJSON *a, struct mp_rd *rd)
{
	return !mp_rd_arr(rd, mp_rd_obj(rd, a, "page_alloc", 0), "kernel_pages_by_order",
			  MP_RD_NULL) ?
		       "no page allocation hook" :
		       "no kernel page allocation in the target, or --stack-sample 0";
}

void mp_view_paths_free(struct mp_view_paths *v)
{
	free(v->rows);
	free(v->nc);
	memset(v, 0, sizeof(*v));
}

int mp_view_paths_table(const struct mp_view_paths *v, mp_view_size_fn size, struct mp_rd *rd,
			struct mp_view_table *t)
{
	static const char *const head[] = { "path", "net", "allocated",
					    "top stack (innermost first)" };

	table_start(t, "kernel-paths", 1u << 1 | 1u << 2, 4, head);
	for (int i = 0; i < v->n; i++) {
		const struct mp_view_path *p = &v->rows[i];

		one(t, MP_SPAN_NAME, p->path, false);
		size_cell(t, size, p->bytes, false);
		/* a sum of pages' bytes: far below INT64_MAX */
		size_cell(t, size, (int64_t)p->alloc, false);
		cell(t, false);
		span(t, MP_SPAN_TEXT, "", NULL); /* a cell, if no frame */
		for (int k = 0; k < p->nframes; k++) {
			span(t, MP_SPAN_FRAME, p->frames[k], NULL);
			if (!t->oom)
				t->spans[t->nspans - 1].caller = k > 0;
		}
	}
	return table_end(t, rd);
}

/* attribution_missing's messages, {concern, category, reason, message}
 * each (the ids checked). */
static int missing_list(const cJSON *a, struct mp_rd *rd, struct mp_view_hooks *v)
{
	const cJSON *arr = mp_rd_arr(rd, a, "attribution_missing", 0), *it;

	if (!(v->missing = mp_view_rows(arr, sizeof(*v->missing), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (!mp_rd_is_obj(rd, it))
			return -1;
		mp_rd_str(rd, it, "concern", MP_RD_NULL);
		mp_rd_str(rd, it, "category", MP_RD_NULL);
		mp_rd_str(rd, it, "reason", 0);
		v->missing[v->nmissing++] = mp_rd_str(rd, it, "message", 0);
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

int mp_view_hooks(const cJSON *a, struct mp_rd *rd, struct mp_view_hooks *v)
{
	const cJSON *arr = mp_rd_arr(rd, a, "hooks", MP_RD_ABSENT), *it;

	memset(v, 0, sizeof(*v));
	if (!(v->rows = mp_view_rows(arr, sizeof(*v->rows), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		struct mp_view_hook *h = &v->rows[v->n++];

		if (!mp_rd_is_obj(rd, it))
			break;
		h->concern = mp_rd_str(rd, it, "concern", 0);
		h->name = mp_rd_str(rd, it, "name", 0); /* the words for people */
		h->kind = mp_rd_str(rd, it, "kind", MP_RD_NULL);
		h->target = mp_rd_str(rd, it, "target", MP_RD_NULL);
		h->hook_given = mp_rd_str(rd, it, "hook", MP_RD_NULL);
		h->hook = h->hook_given ? h->hook_given : "none";
		h->polled = mp_rd_bool(rd, it, "polled", 0);
		h->missing_reason = mp_rd_str(rd, it, "missing_reason", MP_RD_ABSENT);
		h->missing = mp_rd_str(rd, it, "missing", MP_RD_ABSENT);
	}
	if (mp_rd_ok(rd) && !missing_list(a, rd, v))
		return 0;
	mp_view_hooks_free(v);
	return -1;
}

void mp_view_hooks_free(struct mp_view_hooks *v)
{
	free(v->rows);
	free(v->missing);
	memset(v, 0, sizeof(*v));
}

int mp_view_hooks_table(const struct mp_view_hooks *v, struct mp_rd *rd, struct mp_view_table *t)
{
	static const char *const head[] = { "concern", "hook", "missing" };

	table_start(t, "hooks", 0, 3, head);
	for (int i = 0; i < v->n; i++) {
		one(t, MP_SPAN_NAME, v->rows[i].concern, false);
		one(t, MP_SPAN_DOC, v->rows[i].hook, false);
		/* an empty cell where nothing is missing, as a name where something is */
		one(t, v->rows[i].missing ? MP_SPAN_NAME : MP_SPAN_DOC, v->rows[i].missing, false);
	}
	return table_end(t, rd);
}

void mp_view_lay_overhead(const cJSON *o, const char *between, mp_view_size_fn size,
			  mp_view_table_fn lay, FILE *f, struct mp_rd *rd)
{
	const cJSON *after;
	struct mp_view_table t;

	mp_view_lay(mp_view_overhead_table(o, "overhead", size, rd, &t), &t, lay, f, rd);
	after = mp_rd_obj(rd, o, "left_after", MP_RD_ABSENT);
	if (!after)
		return;
	fputs(between, f);
	mp_view_lay(mp_view_overhead_table(after, "left after", size, rd, &t), &t, lay, f, rd);
}
