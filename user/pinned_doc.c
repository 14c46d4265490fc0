// SPDX-License-Identifier: GPL-2.0
/* The "pinned" object (docs/report-format.md) from a reading (pinned.c). */
#include "pinned.h"
#include "json.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *task_category(const struct mp_pinned_task *t)
{
	/* the kind that holds most of it; unlocked RssShmem is shmem too (what
	 * a pinned pool like CUDA's looks like), VmPin alone says no kind */
	uint64_t shmem = t->locked_bytes[MP_PIN_SHMEM] > t->rss_shmem_bytes ?
			 t->locked_bytes[MP_PIN_SHMEM] : t->rss_shmem_bytes;
	const char *best = "shmem";
	uint64_t most = shmem;

	for (int k = MP_PIN_ANON; k < MP_NR_PIN_KINDS; k++) {
		if (t->locked_bytes[k] > most) {
			most = t->locked_bytes[k];
			best = mp_pin_kind_names[k];
		}
	}
	if (t->vm_pin_bytes > most)
		best = "pinned";
	return best;
}

static cJSON *task_json(const struct mp_pinned_task *t)
{
	cJSON *o = cJSON_CreateObject(), *l;

	cJSON_AddNumberToObject(o, "pid", t->pid);
	cJSON_AddStringToObject(o, "comm", t->comm);
	cJSON_AddStringToObject(o, "category", task_category(t));
	mp_json_add_u64(o, "vm_lck_bytes", t->vm_lck_bytes);
	mp_json_add_u64(o, "vm_pin_bytes", t->vm_pin_bytes);
	mp_json_add_u64(o, "rss_shmem_bytes", t->rss_shmem_bytes);
	if (!t->have_locked) {
		cJSON_AddNullToObject(o, "locked");
		return o;
	}
	l = cJSON_AddObjectToObject(o, "locked");
	for (int k = 0; k < MP_NR_PIN_KINDS; k++) {
		char name[32];

		snprintf(name, sizeof(name), "%s_bytes", mp_pin_kind_names[k]);
		mp_json_add_u64(l, name, t->locked_bytes[k]);
	}
	return o;
}

/* The alloc_bytes of a driver's class in one of attribution's path lists. */
static uint64_t path_alloc(const cJSON *arr, const char *path)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(it, "alloc_bytes");

		if (!cJSON_IsString(p) || strcmp(p->valuestring, path))
			continue;
		/* the builder's exact integers are raw items (json.h) */
		if (cJSON_IsRaw(b))
			return strtoull(b->valuestring, NULL, 10);
		if (cJSON_IsNumber(b))
			return (uint64_t)b->valuedouble;
	}
	return 0;
}

/* Per driver (a kernel path driver:<module>): pages its stacks allocated
 * in the target's tasks, and those without __GFP_ACCOUNT, which the host
 * pays for; null without kernel stacks. */
static cJSON *drivers_json(const cJSON *attribution)
{
	const cJSON *paths = cJSON_GetObjectItemCaseSensitive(attribution, "kernel_paths");
	const cJSON *nc = cJSON_GetObjectItemCaseSensitive(attribution, "not_charged"), *it;
	cJSON *arr;

	if (!cJSON_IsArray(paths))
		return cJSON_CreateNull();
	arr = cJSON_CreateArray();
	cJSON_ArrayForEach(it, paths) {
		const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "path");
		uint64_t alloc, unacc;
		cJSON *o;

		if (!cJSON_IsString(p) || strncmp(p->valuestring, "driver:", 7))
			continue;
		alloc = path_alloc(paths, p->valuestring);
		unacc = path_alloc(nc, p->valuestring);
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "driver", p->valuestring + 7);
		mp_json_add_u64(o, "alloc_bytes", alloc);
		mp_json_add_u64(o, "charged_bytes", alloc > unacc ? alloc - unacc : 0);
		mp_json_add_u64(o, "not_charged_bytes", unacc);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static void add_opt_u64(cJSON *o, const char *name, bool have, uint64_t v)
{
	if (have)
		mp_json_add_u64(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

struct mgroup {
	const struct mp_proc_role *r; /* one of them: its comm and role */
	unsigned n;
};

static int cmp_mgroup_desc(const void *x, const void *y)
{
	const struct mgroup *a = x, *b = y;

	return a->n < b->n ? 1 : a->n > b->n ? -1 : 0;
}

static const struct mp_proc_role *role_row(const struct mp_pinned *p, uint32_t pid)
{
	for (size_t r = 0; r < p->nroles; r++)
		if (p->roles[r].pid == pid)
			return &p->roles[r];
	return NULL;
}

/* The processes of a segment by name and role: [{comm, role, processes}],
 * the largest group first; a mapper no longer read is left out. */
static cJSON *mapper_groups(const struct mp_pinned *p, const struct mp_shm_seg *g)
{
	struct mgroup *gs = calloc(g->npids + 1, sizeof(*gs));
	cJSON *arr = cJSON_CreateArray();
	size_t n = 0;

	for (size_t i = 0; gs && i < g->npids; i++) {
		const struct mp_proc_role *a = role_row(p, g->pids[i]);
		size_t j;

		if (!a)
			continue;
		for (j = 0; j < n; j++)
			if (!strcmp(gs[j].r->comm, a->comm) && !strcmp(gs[j].r->role, a->role))
				break;
		if (j == n)
			gs[n++].r = a;
		gs[j].n++;
	}
	if (gs)
		qsort(gs, n, sizeof(*gs), cmp_mgroup_desc);
	for (size_t j = 0; j < n; j++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "comm", gs[j].r->comm);
		cJSON_AddStringToObject(o, "role", gs[j].r->role);
		cJSON_AddNumberToObject(o, "processes", gs[j].n);
		cJSON_AddItemToArray(arr, o);
	}
	free(gs);
	return arr;
}

static int cmp_seg_desc(const void *x, const void *y)
{
	const struct mp_shm_seg *a = *(const struct mp_shm_seg *const *)x;
	const struct mp_shm_seg *b = *(const struct mp_shm_seg *const *)y;

	if (a->resident_bytes != b->resident_bytes)
		return a->resident_bytes < b->resident_bytes ? 1 : -1;
	return a->npids < b->npids ? 1 : a->npids > b->npids ? -1 : 0;
}

/* The shared segments, the most resident first, top of them. */
static cJSON *segments_json(const struct mp_pinned *p, int top)
{
	const struct mp_shm_seg *by[MP_MAX_SHM_SEGS];
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; i < p->nsegs; i++)
		by[i] = &p->segs[i];
	qsort(by, p->nsegs, sizeof(by[0]), cmp_seg_desc);
	for (size_t i = 0; i < p->nsegs && (int)i < top; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", by[i]->name);
		mp_json_add_u64(o, "mapped_bytes", by[i]->mapped_bytes);
		add_opt_u64(o, "resident_bytes", by[i]->have_resident, by[i]->resident_bytes);
		cJSON_AddNumberToObject(o, "mappers", (double)by[i]->npids);
		cJSON_AddItemToObject(o, "mapper_groups", mapper_groups(p, by[i]));
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

cJSON *mp_pinned_json(const struct mp_pinned *p, const cJSON *attribution, int top)
{
	cJSON *o = cJSON_CreateObject(), *arr;

	uint64_t fu = 0, su = 0;
	bool unmapped = p->have_file && p->have_shmem && p->have_file_mapped &&
			mp_unmapped_bytes(p->file_bytes, p->shmem_bytes, p->file_mapped_bytes,
					  &fu, &su);

	cJSON_AddStringToObject(o, "at", p->at ? p->at : "end");
	if (p->have_t)
		mp_json_add_u64(o, "t_ms", p->t_ms);
	add_opt_u64(o, "unevictable_bytes", p->have_unevictable, p->unevictable_bytes);
	add_opt_u64(o, "shmem_bytes", p->have_shmem, p->shmem_bytes);
	/* memory no process maps: shmem (tmpfs, memfd, SysV) left by its
	 * writer, page cache whose reader left */
	add_opt_u64(o, "file_mapped_bytes", p->have_file_mapped, p->file_mapped_bytes);
	add_opt_u64(o, "shmem_unmapped_bytes", unmapped, su);
	add_opt_u64(o, "file_unmapped_bytes", unmapped, fu);
	cJSON_AddNumberToObject(o, "processes", (double)p->nprocs);
	mp_json_add_u64(o, "vm_lck_bytes", p->vm_lck_bytes);
	mp_json_add_u64(o, "vm_pin_bytes", p->vm_pin_bytes);
	mp_json_add_u64(o, "rss_shmem_max_bytes", p->rss_shmem_max_bytes);
	arr = cJSON_AddArrayToObject(o, "tasks");
	for (size_t i = 0; i < p->ntasks && (int)i < top; i++)
		cJSON_AddItemToArray(arr, task_json(&p->tasks[i]));
	cJSON_AddItemToObject(o, "drivers", attribution ? drivers_json(attribution) :
				   cJSON_CreateNull());
	cJSON_AddItemToObject(o, "shared_segments", segments_json(p, top));
	cJSON_AddNumberToObject(o, "shared_segments_total", (double)p->nsegs);
	return o;
}
