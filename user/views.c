// SPDX-License-Identifier: GPL-2.0
/* Views: a document's tables, built once, the row rules here (views.h). */
#include "views.h"
#include "proc_role.h"
#include "render.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

double mp_view_pct(double pct)
{
	return pct > -0.05 && pct < 0.05 ? 0.0 : pct;
}

void *mp_view_rows(const cJSON *arr, size_t sz, struct mp_rd *rd)
{
	void *p;

	if (!mp_rd_ok(rd))
		return NULL;
	if (!(p = calloc((size_t)cJSON_GetArraySize(arr) + 1, sz)))
		mp_rd_fail(rd, arr, NULL, "out of memory");
	return p;
}

/* What a member true-or-absent says (docs/report-format.md: estimated,
 * below_floor). */
static bool flag_given(struct mp_rd *rd, const cJSON *o, const char *name)
{
	return mp_rd_item(rd, o, name, MP_RD_ABSENT) && mp_rd_bool(rd, o, name, 0);
}

/* A category's figures as exports write them, and its tasks' who. */
static void cat_figures(const cJSON *it, struct mp_rd *rd, struct mp_view_cat *c)
{
	c->available = mp_rd_bool(rd, it, "available", 0);
	c->source = mp_rd_str(rd, it, "source", MP_RD_ABSENT);
	c->estimated = flag_given(rd, it, "estimated");
	c->below_floor = flag_given(rd, it, "below_floor");
	c->has_bound = mp_rd_s64(rd, it, "bound_bytes", MP_RD_NULL | MP_RD_ABSENT, &c->bound);
	for (int k = 0; k < c->ntasks; k++) {
		struct mp_view_cat_task *t = &c->tasks[k];

		t->has_pid = mp_rd_u64(rd, t->obj, "pid", MP_RD_NULL, &t->pid);
		t->comm = mp_rd_str(rd, t->obj, "comm", 0);
	}
}

/* Row it of the categories, or false when it shows nothing (no growth,
 * nothing left after) and flags do not keep it, or on a problem (rd's). */
static bool cat_row(const cJSON *it, struct mp_rd *rd, mp_view_size_fn size, unsigned flags,
		    struct mp_view_cat *c)
{
	bool all = flags & MP_VIEW_EXPORT;
	const cJSON *tasks, *tk;

	memset(c, 0, sizeof(*c));
	c->growth_bytes = mp_rd_s64v(rd, it, "growth_bytes");
	c->has_retained = mp_rd_s64(rd, it, "retained_bytes", MP_RD_ABSENT, &c->retained);
	if (!all && !c->growth_bytes && !c->retained)
		return false;
	c->obj = it;
	if (size)
		mp_render_cat_growth(rd, it, size, c->growth, sizeof(c->growth), c->note,
				     sizeof(c->note));
	c->name = mp_rd_str(rd, it, "name", 0);
	if (size)
		mp_render_cat_left(rd, it, size, c->left, sizeof(c->left));
	c->has_reserve = mp_rd_s64(rd, it, "objcg_reserve_bytes", MP_RD_ABSENT, &c->reserve);
	tasks = mp_rd_arr(rd, it, "tasks", all ? MP_RD_ABSENT : 0);
	if (!(c->tasks = mp_view_rows(tasks, sizeof(*c->tasks), rd)))
		return false;
	cJSON_ArrayForEach(tk, tasks) {
		if ((!all && c->ntasks >= MP_VIEW_TOP_TASKS) || !mp_rd_is_obj(rd, tk))
			break;
		c->tasks[c->ntasks].obj = tk;
		c->tasks[c->ntasks++].bytes = mp_rd_s64v(rd, tk, "bytes");
	}
	if (all)
		cat_figures(it, rd, c);
	return true;
}

/* The {category, bytes} objects of o's array name (absent: none) into *out. */
static int parts(const cJSON *o, const char *name, struct mp_rd *rd, struct mp_view_part **out,
		 int *n)
{
	const cJSON *arr = mp_rd_arr(rd, o, name, MP_RD_ABSENT), *it;

	*n = 0;
	if (!(*out = mp_view_rows(arr, sizeof(**out), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		if (!mp_rd_is_obj(rd, it))
			return -1;
		(*out)[*n].category = mp_rd_str(rd, it, "category", 0);
		(*out)[(*n)++].bytes = mp_rd_s64v(rd, it, "bytes");
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

int mp_view_overhead_tail(const cJSON *o, struct mp_rd *rd, struct mp_view_overhead_tail *t)
{
	memset(t, 0, sizeof(*t));
	if (parts(o, "reclaimed_parts", rd, &t->reclaimed, &t->nreclaimed) ||
	    parts(o, "probe_kernel_parts", rd, &t->probe, &t->nprobe)) {
		mp_view_overhead_tail_free(t);
		return -1;
	}
	t->probe_kernel = mp_rd_s64v(rd, o, "probe_kernel_bytes");
	t->unexplained = mp_rd_s64v(rd, o, "unexplained_bytes");
	t->total = mp_rd_s64v(rd, o, "bytes");
	if (mp_rd_ok(rd))
		return 0;
	mp_view_overhead_tail_free(t);
	return -1;
}

void mp_view_overhead_tail_free(struct mp_view_overhead_tail *t)
{
	free(t->reclaimed);
	free(t->probe);
	memset(t, 0, sizeof(*t));
}

/* Row r of a group g: its name, categories, copies on write, bytes. */
static int group_row(const cJSON *g, struct mp_rd *rd, struct mp_view_overhead_row *r)
{
	uint64_t host = 0;

	r->has_pid = mp_rd_u64(rd, g, "pid", MP_RD_NULL, &r->pid);
	mp_rd_u64(rd, g, "host_pid", MP_RD_ABSENT, &host);
	r->has_cow = mp_rd_s64(rd, g, "copy_on_write_bytes", MP_RD_NULL | MP_RD_ABSENT, &r->cow);
	r->comm = mp_rd_str(rd, g, "comm", 0);
	r->role = mp_rd_str(rd, g, "role", 0);
	r->processes = mp_rd_u64v(rd, g, "processes");
	mp_proc_group_name_host(r->comm, r->role, (unsigned)r->processes, (uint32_t)r->pid,
				(uint32_t)host, r->name, sizeof(r->name));
	return parts(g, "categories", rd, &r->cats, &r->ncats);
}

int mp_view_overhead_rows(const cJSON *o, struct mp_rd *rd, struct mp_view_overhead_rows *v)
{
	const cJSON *list, *it;

	memset(v, 0, sizeof(*v));
	list = mp_rd_arr(rd, o, "groups", MP_RD_ABSENT);
	v->groups = list != NULL;
	if (!list)
		list = mp_rd_arr(rd, o, "parts", 0);
	if (!mp_rd_ok(rd))
		return -1;
	if (!(v->rows = mp_view_rows(list, sizeof(*v->rows), rd)))
		return -1;
	cJSON_ArrayForEach(it, list) {
		struct mp_view_overhead_row *r = &v->rows[v->n++];

		if (!mp_rd_is_obj(rd, it))
			break;
		r->obj = it;
		r->bytes = mp_rd_s64v(rd, it, "bytes");
		if (v->groups ? group_row(it, rd, r) :
		    !(r->cats = calloc(1, sizeof(*r->cats))))
			break;
		if (!v->groups) {
			r->cats[0].category = mp_rd_str(rd, it, "category", 0);
			r->cats[0].bytes = r->bytes;
			r->ncats = 1;
		}
	}
	if (mp_rd_ok(rd) && (!v->n || v->rows[v->n - 1].cats))
		return 0;
	if (mp_rd_ok(rd))
		mp_rd_fail(rd, list, NULL, "out of memory");
	mp_view_overhead_rows_free(v);
	return -1;
}

void mp_view_overhead_rows_free(struct mp_view_overhead_rows *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->rows[i].cats);
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

void mp_view_moment(const cJSON *o, struct mp_rd *rd, struct mp_view_moment *m)
{
	static const char *const thp[3][2] = {
		{ "anon_thp_bytes", "anon" }, { "file_thp_bytes", "file" },
		{ "shmem_thp_bytes", "shmem" },
	};

	memset(m, 0, sizeof(*m));
	m->unmapped = mp_rd_u64(rd, o, "shmem_unmapped_bytes", MP_RD_NULL | MP_RD_ABSENT,
				&m->shmem_unmapped) &&
		      mp_rd_u64(rd, o, "file_unmapped_bytes", MP_RD_NULL | MP_RD_ABSENT,
				&m->file_unmapped);
	for (int i = 0; i < 3; i++)
		if (mp_rd_u64(rd, o, thp[i][0], MP_RD_NULL | MP_RD_ABSENT,
			      &m->huge[m->nhuge].bytes))
			m->huge[m->nhuge++].kind = thp[i][1];
}

int mp_view_cats(const cJSON *a, struct mp_rd *rd, mp_view_size_fn size, unsigned flags,
		 struct mp_view_cats *v)
{
	unsigned may = flags & MP_VIEW_EXPORT ? MP_RD_ABSENT : 0;
	const cJSON *rec = mp_rd_obj(rd, a, "reconciliation", may), *cats, *it;

	memset(v, 0, sizeof(*v));
	v->has_measured = mp_rd_s64(rd, rec, "measured_growth_bytes", may, &v->measured);
	v->unattributed = mp_rd_s64v(rd, rec, "unattributed_bytes");
	v->span = mp_rd_str(rd, rec, "span", 0);
	cats = mp_rd_arr(rd, a, "categories", may);
	if (!mp_rd_ok(rd))
		return -1;
	if (!(v->rows = mp_view_rows(cats, sizeof(*v->rows), rd)))
		return -1;
	cJSON_ArrayForEach(it, cats) {
		if (!mp_rd_is_obj(rd, it))
			break;
		if (cat_row(it, rd, size, flags, &v->rows[v->n]))
			v->n++;
		else /* a row not shown keeps none of its own */
			free(v->rows[v->n].tasks);
	}
	v->attributed = mp_rd_s64v(rd, rec, "attributed_bytes");
	v->attributed_as = mp_rd_str(rd, rec, "attributed_as", 0);
	v->has_unmapped = mp_rd_s64(rd, rec, "anon_unmapped_bytes", MP_RD_NULL | MP_RD_ABSENT,
				    &v->unmapped);
	v->unmapped_shown = v->has_unmapped &&
			    (v->unmapped >= (int64_t)MP_MIB || v->unmapped <= -(int64_t)MP_MIB);
	v->share_shown = v->measured >= (int64_t)MP_MIB;
	v->unattributed_pct = mp_view_pct(v->measured ? 100.0 * (double)v->unattributed /
							      (double)v->measured : 0.0);
	if (mp_rd_ok(rd))
		return 0;
	mp_view_cats_free(v);
	return -1;
}

void mp_view_cats_free(struct mp_view_cats *v)
{
	for (int i = 0; i < v->n; i++)
		free(v->rows[i].tasks);
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

const char *mp_view_soft_words(const cJSON *cg, struct mp_rd *rd, mp_view_size_fn size,
			       const char *hard, uint64_t rec, char *buf, size_t len)
{
	const char *from = mp_rd_str(rd, cg, "headroom_from", MP_RD_NULL | MP_RD_ABSENT);
	uint64_t soft = 0, hard_b = 0;
	char b[32];

	size((int64_t)rec, b, sizeof(b));
	mp_rd_u64(rd, cg, "soft_headroom_bytes", MP_RD_NULL | MP_RD_ABSENT, &soft);
	mp_rd_u64(rd, cg, "headroom_bytes", MP_RD_NULL | MP_RD_ABSENT, &hard_b);
	/* the figures decide (documents before this added the cache anyway) */
	if (rec && soft == hard_b && from && !strcmp(from, "MemAvailable"))
		snprintf(buf, len, "%s alone: MemAvailable, which sets it, counts the %s of "
			 "reclaimable page cache already", hard, b);
	else
		snprintf(buf, len, "%s and %s of reclaimable page cache", hard, b);
	return buf;
}
