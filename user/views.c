// SPDX-License-Identifier: GPL-2.0
/* Views: a document's tables, built once, the row rules here (views.h). */
#include "views.h"
#include "render.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

double mp_view_pct(double pct)
{
	return pct > -0.05 && pct < 0.05 ? 0.0 : pct;
}

/* Row it of the categories, or false when it shows nothing (no growth,
 * nothing left after). */
static bool cat_row(const cJSON *it, struct mp_rd *rd, mp_view_size_fn size,
		    struct mp_view_cat *c)
{
	int64_t g, ret = 0;
	const cJSON *tk;

	g = mp_rd_s64v(rd, it, "growth_bytes");
	mp_rd_s64(rd, it, "retained_bytes", MP_RD_ABSENT, &ret);
	if (!g && !ret)
		return false;
	memset(c, 0, sizeof(*c));
	c->obj = it;
	mp_render_cat_growth(rd, it, size, c->growth, sizeof(c->growth), c->note, sizeof(c->note));
	c->name = mp_rd_str(rd, it, "name", 0);
	mp_render_cat_left(rd, it, size, c->left, sizeof(c->left));
	cJSON_ArrayForEach(tk, mp_rd_arr(rd, it, "tasks", 0)) {
		if (c->ntasks >= MP_VIEW_TOP_TASKS || !mp_rd_is_obj(rd, tk))
			break;
		c->tasks[c->ntasks].obj = tk;
		c->tasks[c->ntasks++].bytes = mp_rd_s64v(rd, tk, "bytes");
	}
	return true;
}

/* The {category, bytes} objects of o's array name (absent: none) into *out. */
static int parts(const cJSON *o, const char *name, struct mp_rd *rd, struct mp_view_part **out,
		 int *n)
{
	const cJSON *arr = mp_rd_arr(rd, o, name, MP_RD_ABSENT), *it;

	*n = 0;
	if (!(*out = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(**out)))) {
		mp_rd_fail(rd, arr, NULL, "out of memory");
		return -1;
	}
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

int mp_view_cats(const cJSON *a, struct mp_rd *rd, mp_view_size_fn size, struct mp_view_cats *v)
{
	const cJSON *rec = mp_rd_obj(rd, a, "reconciliation", 0), *cats, *it;

	memset(v, 0, sizeof(*v));
	v->measured = mp_rd_s64v(rd, rec, "measured_growth_bytes");
	v->unattributed = mp_rd_s64v(rd, rec, "unattributed_bytes");
	v->span = mp_rd_str(rd, rec, "span", 0);
	cats = mp_rd_arr(rd, a, "categories", 0);
	if (!mp_rd_ok(rd))
		return -1;
	v->rows = calloc((size_t)cJSON_GetArraySize(cats) + 1, sizeof(*v->rows));
	if (!v->rows) {
		mp_rd_fail(rd, cats, NULL, "out of memory");
		return -1;
	}
	cJSON_ArrayForEach(it, cats) {
		if (!mp_rd_is_obj(rd, it))
			break;
		v->n += cat_row(it, rd, size, &v->rows[v->n]);
	}
	v->attributed = mp_rd_s64v(rd, rec, "attributed_bytes");
	v->attributed_as = mp_rd_str(rd, rec, "attributed_as", 0);
	v->has_unmapped = mp_rd_s64(rd, rec, "anon_unmapped_bytes", MP_RD_NULL | MP_RD_ABSENT,
				    &v->unmapped);
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
	free(v->rows);
	memset(v, 0, sizeof(*v));
}
