// SPDX-License-Identifier: GPL-2.0
/* Views of memory that stays (views.h): the pinned object (its figures,
 * shared segments, tasks and drivers) and the pages copied on write. */
#include "views.h"
#include "proc_role.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Segment s's figures and its mappers by name and role. */
static int segment(const cJSON *s, struct mp_rd *rd, struct mp_view_segment *g)
{
	const cJSON *groups = mp_rd_arr(rd, s, "mapper_groups", 0), *it;

	g->name = mp_rd_str(rd, s, "name", 0);
	g->mapped = mp_rd_u64v(rd, s, "mapped_bytes");
	g->has_resident = mp_rd_u64(rd, s, "resident_bytes", MP_RD_NULL, &g->resident);
	g->mappers = mp_rd_u64v(rd, s, "mappers");
	if (!mp_rd_ok(rd) || !(g->groups = mp_view_rows(groups, sizeof(*g->groups), rd)))
		return -1;
	cJSON_ArrayForEach(it, groups) {
		struct mp_view_mapper *m = &g->groups[g->ngroups];

		if (!mp_rd_is_obj(rd, it))
			return -1;
		m->processes = mp_rd_u64v(rd, it, "processes");
		mp_proc_group_name(mp_rd_str(rd, it, "comm", 0), mp_rd_str(rd, it, "role", 0),
				   (unsigned)m->processes, 0, m->name, sizeof(m->name));
		g->ngroups++;
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

/* The shared segments; the short list's: those of 1 MiB or more resident
 * (or not read), MP_VIEW_BRIEF_SEGMENTS at most, the rest's resident summed. */
static int segments(const cJSON *p, struct mp_rd *rd, struct mp_view_pinned *v)
{
	const cJSON *segs = mp_rd_arr(rd, p, "shared_segments", MP_RD_ABSENT), *s;

	mp_rd_u64(rd, p, "shared_segments_total", MP_RD_ABSENT, &v->segments_total);
	v->has_segments = segs != NULL;
	if (!mp_rd_ok(rd) || !(v->segs = mp_view_rows(segs, sizeof(*v->segs), rd)))
		return -1;
	cJSON_ArrayForEach(s, segs) {
		struct mp_view_segment *g = &v->segs[v->nsegs];

		if (!mp_rd_is_obj(rd, s))
			return -1;
		v->nsegs++;
		if (segment(s, rd, g))
			return -1;
		g->brief = v->nbrief < MP_VIEW_BRIEF_SEGMENTS &&
			   (!g->has_resident || g->resident >= MP_MIB);
		v->nbrief += g->brief;
		if (!g->brief && g->has_resident)
			v->brief_rest += g->resident;
	}
	return 0;
}

static int tasks(const cJSON *p, struct mp_rd *rd, struct mp_view_pinned *v)
{
	const cJSON *arr = mp_rd_arr(rd, p, "tasks", 0), *t, *l;

	if (!mp_rd_ok(rd) || !(v->tasks = mp_view_rows(arr, sizeof(*v->tasks), rd)))
		return -1;
	cJSON_ArrayForEach(t, arr) {
		struct mp_view_pinned_task *k = &v->tasks[v->ntasks];

		if (!mp_rd_is_obj(rd, t))
			return -1;
		k->obj = t;
		k->comm = mp_rd_str(rd, t, "comm", 0);
		k->pid = mp_rd_u64v(rd, t, "pid");
		k->category = mp_rd_str(rd, t, "category", 0);
		k->vm_lck = mp_rd_u64v(rd, t, "vm_lck_bytes");
		k->vm_pin = mp_rd_u64v(rd, t, "vm_pin_bytes");
		k->rss_shmem = mp_rd_u64v(rd, t, "rss_shmem_bytes");
		if ((l = mp_rd_obj(rd, t, "locked", MP_RD_NULL))) {
			k->locked = true;
			k->shmem = mp_rd_u64v(rd, l, "shmem_bytes");
			k->anon = mp_rd_u64v(rd, l, "anon_bytes");
			k->file = mp_rd_u64v(rd, l, "file_bytes");
		}
		v->ntasks++;
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

static int drivers(const cJSON *p, struct mp_rd *rd, struct mp_view_pinned *v)
{
	const cJSON *arr = mp_rd_arr(rd, p, "drivers", MP_RD_NULL), *it;

	v->has_drivers = arr != NULL;
	if (!mp_rd_ok(rd) || !(v->drivers = mp_view_rows(arr, sizeof(*v->drivers), rd)))
		return -1;
	cJSON_ArrayForEach(it, arr) {
		struct mp_view_driver *d = &v->drivers[v->ndrivers];

		if (!mp_rd_is_obj(rd, it))
			return -1;
		d->driver = mp_rd_str(rd, it, "driver", 0);
		d->alloc = mp_rd_u64v(rd, it, "alloc_bytes");
		d->charged = mp_rd_u64v(rd, it, "charged_bytes");
		d->not_charged = mp_rd_u64v(rd, it, "not_charged_bytes");
		v->ndrivers++;
	}
	return mp_rd_ok(rd) ? 0 : -1;
}

int mp_view_pinned(const cJSON *p, struct mp_rd *rd, struct mp_view_pinned *v)
{
	const char *at = mp_rd_str(rd, p, "at", 0);

	memset(v, 0, sizeof(*v));
	v->obj = p;
	v->when = !strcmp(at, "stop") ? "at the probe's stop" :
		  !strcmp(at, "peak") ? "at the peak" : "at the end";
	/* memory.stat's: null where it has no such key */
	v->has_unevictable = mp_rd_u64(rd, p, "unevictable_bytes", MP_RD_NULL, &v->unevictable);
	v->has_shmem = mp_rd_u64(rd, p, "shmem_bytes", MP_RD_NULL, &v->shmem);
	v->vm_lck = mp_rd_u64v(rd, p, "vm_lck_bytes");
	v->vm_pin = mp_rd_u64v(rd, p, "vm_pin_bytes");
	v->processes = mp_rd_u64v(rd, p, "processes");
	/* RssShmem across processes: the largest one's (a shared page counts
	 * in every process that maps it: a sum would count a segment per
	 * mapper); documents from before give their sum */
	v->has_rss_max = mp_rd_u64(rd, p, "rss_shmem_max_bytes", MP_RD_ABSENT, &v->rss_shmem_max);
	if (!v->has_rss_max)
		v->has_rss_sum = mp_rd_u64(rd, p, "rss_shmem_bytes", MP_RD_ABSENT, &v->rss_shmem);
	if (segments(p, rd, v) || tasks(p, rd, v) || drivers(p, rd, v)) {
		mp_view_pinned_free(v);
		return -1;
	}
	return 0;
}

void mp_view_pinned_free(struct mp_view_pinned *v)
{
	for (int i = 0; v->segs && i < v->nsegs; i++)
		free(v->segs[i].groups);
	free(v->segs);
	free(v->tasks);
	free(v->drivers);
	memset(v, 0, sizeof(*v));
}

int mp_view_cow(const cJSON *a, struct mp_rd *rd, struct mp_view_cow *v)
{
	const cJSON *o = mp_rd_obj(rd, a, "copy_on_write", MP_RD_ABSENT), *arr, *t;

	memset(v, 0, sizeof(*v));
	v->period = 1;
	if (!(v->present = o != NULL))
		return mp_rd_ok(rd) ? 0 : -1;
	v->source = mp_rd_str(rd, o, "source", MP_RD_NULL);
	if (!v->source) {
		v->why = mp_rd_str(rd, o, "why", 0);
		return mp_rd_ok(rd) ? 0 : -1;
	}
	v->span = mp_rd_str(rd, o, "span", 0);
	v->bytes = mp_rd_u64v(rd, o, "bytes");
	mp_rd_u64(rd, o, "sample_period", MP_RD_ABSENT, &v->period);
	arr = mp_rd_arr(rd, o, "by_task", 0);
	if (!mp_rd_ok(rd) || !(v->tasks = mp_view_rows(arr, sizeof(*v->tasks), rd)))
		return -1;
	cJSON_ArrayForEach(t, arr) {
		struct mp_view_cow_task *k = &v->tasks[v->ntasks];

		if (!mp_rd_is_obj(rd, t))
			break;
		k->obj = t;
		k->comm = mp_rd_str(rd, t, "comm", 0);
		k->pid = mp_rd_u64v(rd, t, "pid");
		k->bytes = mp_rd_u64v(rd, t, "bytes");
		v->ntasks++;
	}
	v->nshown = v->ntasks < MP_VIEW_COW_SHOWN ? v->ntasks : MP_VIEW_COW_SHOWN;
	if (mp_rd_ok(rd))
		return 0;
	mp_view_cow_free(v);
	return -1;
}

void mp_view_cow_free(struct mp_view_cow *v)
{
	free(v->tasks);
	memset(v, 0, sizeof(*v));
}

void mp_view_cow_say(const cJSON *a, const struct mp_view_cow_words *w, FILE *f,
		     struct mp_rd *rd)
{
	struct mp_view_cow v;
	char b[32];

	if (mp_view_cow(a, rd, &v) || !v.present)
		return;
	if (v.why) {
		fprintf(f, "Copy-on-write: not looked for (%s)%s", v.why, w->end);
		mp_view_cow_free(&v);
		return;
	}
	fprintf(f, "Copy-on-write: %s of pages copied on write (after a fork, or at a private file "
		"page's first write: %s%s%s's copies, %s, %s)", w->size((int64_t)v.bytes, b, sizeof(b)),
		w->quote, v.source, w->quote, v.span,
		v.period > 1 ? "sampled" : "every one counted");
	for (int i = 0; i < v.nshown; i++) {
		fputs(i ? ", " : ": ", f);
		w->who(f, &v.tasks[i], rd);
		fprintf(f, " copied %s", w->size((int64_t)v.tasks[i].bytes, b, sizeof(b)));
	}
	fputs(w->end, f);
	mp_view_cow_free(&v);
}
