// SPDX-License-Identifier: GPL-2.0
/*
 * The overhead, explained (overhead.h): the difference of two attribution
 * vectors, by process and by the categories the usage is made of, the
 * probe's row set apart. Nothing here reads a session or the system.
 */
#include "overhead.h"
#include "cgroup.h"
#include "json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mp_overhead_cat_name(int cat)
{
	return cat >= MP_NR_CATS ? mp_overhead_parts[cat - MP_NR_CATS].id : mp_cat_names[cat];
}

/*
 * The categories whose sum is the usage, each byte once: anon, file as
 * shmem and the rest (page_cache), sock, and kernel as its itemised parts
 * plus the rest (kernel_other); without a kernel total, the itemised parts
 * alone.
 */
static bool is_leaf(int k)
{
	return mp_cats[k].part == MP_PART_KERNEL || k == MP_CAT_SHMEM ||
	       (mp_cats[k].part == MP_PART_USAGE && k != MP_CAT_KERNEL && k != MP_CAT_FILE);
}

static const struct mp_task_row *row_of(const struct mp_attr_snap *s, uint32_t tgid)
{
	for (size_t i = 0; s && i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return &s->tasks[i];
	return NULL;
}

/* One process's growth per category: at - base, a row absent counting 0;
 * polled categories are 0 here (memory.stat has no per-process split).
 * *cow: its pages copied on write, in bytes. */
static void task_growth(const struct mp_overhead_in *in, uint32_t tgid, int64_t g[MP_OVH_NR_CATS],
			int64_t *cow)
{
	const struct mp_task_row *a = row_of(in->at, tgid), *b = row_of(in->base, tgid);
	int64_t kernel = 0, parts = 0, file = 0;

	memset(g, 0, sizeof(int64_t) * MP_OVH_NR_CATS);
	for (int k = 0; k < MP_NR_CATS; k++) {
		int64_t v = (a ? a->charge_bytes[k] : 0) - (b ? b->charge_bytes[k] : 0);

		/* /proc's RssFile of the probe is memprobe's own binary, whose
		 * pages memprobe faulted in and its cgroup was charged for: no
		 * cost of the allocation (1 MiB of a 476 MiB fill in a guest,
		 * half the budget's kernel cost per GiB) */
		if ((k == MP_CAT_FILE || k == MP_CAT_SHMEM) && in->rows[k] && in->probe_pid &&
		    tgid == in->probe_pid)
			continue;
		if (k == MP_CAT_KERNEL || k == MP_CAT_FILE) {
			*(k == MP_CAT_KERNEL ? &kernel : &file) = v;
			continue;
		}
		if (!is_leaf(k) || (in->polled[k] && !in->rows[k]))
			continue;
		g[k] = v;
		if (mp_cats[k].part == MP_PART_KERNEL)
			parts += v;
	}
	/* a polled kernel part stays inside its process's kernel_other */
	if (in->have_kernel_total && !in->polled[MP_CAT_KERNEL])
		g[MP_OVH_KERNEL_OTHER] = kernel - parts;
	/* unmapped by it and not yet freed in its context */
	if (in->page_size)
		g[MP_OVH_ANON_UNMAPPED] =
			((a ? (int64_t)(a->anon_unmapped_pages - a->anon_freed_pages) : 0) -
			 (b ? (int64_t)(b->anon_unmapped_pages - b->anon_freed_pages) : 0)) *
			in->page_size;
	if (!in->polled[MP_CAT_FILE] || in->rows[MP_CAT_FILE])
		g[MP_OVH_PAGE_CACHE] = file - g[MP_CAT_SHMEM];
	*cow = (int64_t)((a ? a->cow_pages : 0) - (b ? b->cow_pages : 0)) *
	       (int64_t)in->cow_page_bytes;
}

/* memory.stat's growth of a polled category, 0 without both readings */
static int64_t stat_growth(const struct mp_overhead_in *in, int k)
{
	const struct mp_attr_snap *a = in->at, *b = in->base;

	if (!a->have_stat || !b->have_stat || !a->stat.have[k] || !b->stat.have[k])
		return 0;
	return (int64_t)(a->stat.bytes[k] - b->stat.bytes[k]);
}

static void add_part(struct mp_overhead *o, uint32_t pid, uint32_t host, const char *comm,
		     int cat, int64_t bytes)
{
	struct mp_overhead_part *p;

	if (!bytes)
		return;
	p = &o->parts[o->nparts++];
	p->pid = pid;
	p->host_pid = host;
	snprintf(p->comm, sizeof(p->comm), "%s", comm);
	p->cat = cat;
	p->bytes = bytes;
}

/* memory.stat's growth of category k beyond what the processes' rows
 * explain (rows: their growth, less_bytes: the probe's allocation where
 * no row carries it); 0 where that cannot be told: without the key, or
 * where memory.stat lagged at either vector (a parent's lags its
 * children's charges by up to the kernel's 2 s flush: the whole fill of
 * a probe, once) and the rows alone are the truth of that moment. */
static int64_t stat_beyond(const struct mp_overhead_in *in, int k, int64_t rows,
			   int64_t less_bytes)
{
	const struct mp_attr_snap *a = in->at, *b = in->base;

	if (!in->rows[k])
		return stat_growth(in, k) - less_bytes;
	if (!a->stat_settled || !b->stat_settled || !a->have_stat || !b->have_stat ||
	    !a->stat.have[k] || !b->stat.have[k])
		return 0;
	return stat_growth(in, k) - rows - less_bytes;
}

/* The page cache's growth (file without its shmem) in memory.stat beyond
 * what the rows explain, as stat_beyond does for a category. */
static int64_t cache_beyond(const struct mp_overhead_in *in, int64_t rows)
{
	int64_t v = stat_growth(in, MP_CAT_FILE) - stat_growth(in, MP_CAT_SHMEM);
	const struct mp_attr_snap *a = in->at, *b = in->base;

	if (!in->rows[MP_CAT_FILE])
		return v;
	if (!a->stat_settled || !b->stat_settled || !a->have_stat || !b->have_stat ||
	    !a->stat.have[MP_CAT_FILE] || !b->stat.have[MP_CAT_FILE])
		return 0;
	return v - rows;
}

/*
 * The page cache beyond the rows, polled. With the processes' own counters
 * (--memcg-from counters, or no BPF) no row holds a charge of its own:
 * page cache no process maps that shrank while the probe charged is what
 * the kernel reclaimed to make room, as the probe's row shows it with the
 * memcg tracepoints (direct reclaim runs in the charging task). A workload
 * deleting its files at that moment reads the same: docs/attribution.md.
 */
static void add_polled_cache(const struct mp_overhead_in *in, struct mp_overhead *o, int64_t v)
{
	if (in->probe_pid && in->rows[MP_CAT_FILE] && v < 0) {
		o->reclaimed_cat_bytes[MP_OVH_PAGE_CACHE] += v;
		o->reclaimed_bytes += v;
		return;
	}
	add_part(o, 0, 0, "(memory.stat)", MP_OVH_PAGE_CACHE, v);
}

/* The polled categories, as parts of pid 0 named "(memory.stat)" (with
 * /proc's rows, what memory.stat shows beyond them); a polled kernel
 * total's rest beyond every itemised part as kernel_other, a polled
 * file's beyond shmem as page_cache. */
static void add_polled(const struct mp_overhead_in *in, struct mp_overhead *o,
		       int64_t kernel_parts, const int64_t rows[MP_OVH_NR_CATS],
		       int64_t anon_less)
{
	for (int k = 0; k < MP_NR_CATS; k++)
		if (in->polled[k] && is_leaf(k) &&
		    (mp_cats[k].part != MP_PART_KERNEL || !in->have_kernel_total ||
		     in->polled[MP_CAT_KERNEL])) {
			int64_t v = stat_beyond(in, k, rows[k], k == MP_CAT_ANON ? anon_less : 0);

			add_part(o, 0, 0, "(memory.stat)", k, v);
			if (mp_cats[k].part == MP_PART_KERNEL)
				kernel_parts += v;
		}
	if (in->polled[MP_CAT_FILE])
		add_polled_cache(in, o, cache_beyond(in, rows[MP_OVH_PAGE_CACHE]));
	if (in->have_kernel_total && in->polled[MP_CAT_KERNEL])
		add_part(o, 0, 0, "(memory.stat)", MP_OVH_KERNEL_OTHER,
			 stat_growth(in, MP_CAT_KERNEL) - kernel_parts);
}

static int cmp_part_desc(const void *x, const void *y)
{
	const struct mp_overhead_part *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->cat - b->cat;
}

/* The processes of both vectors, each once: at's, then those only in base
 * (gone since: their growth is minus what they held). */
static size_t union_tgids(const struct mp_overhead_in *in, uint32_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < in->at->ntasks; i++)
		out[n++] = in->at->tasks[i].tgid;
	for (size_t i = 0; in->base && i < in->base->ntasks; i++)
		if (!row_of(in->at, in->base->tasks[i].tgid))
			out[n++] = in->base->tasks[i].tgid;
	return n;
}

/* Does the probe's own row carry its anon: its process has a row and
 * anon is counted per process (by a hook, or by /proc's rows)? Then its
 * allocation comes out of its row; else out of memory.stat's anon. */
static bool probe_has_anon(const struct mp_overhead_in *in)
{
	return in->probe_pid && row_of(in->at, in->probe_pid) &&
	       (!in->polled[MP_CAT_ANON] || in->rows[MP_CAT_ANON]);
}

static const char *role_of(const struct mp_overhead_in *in, uint32_t pid)
{
	for (size_t i = 0; pid && i < in->nroles; i++)
		if (in->roles[i].pid == pid)
			return in->roles[i].role;
	return "";
}

/* Add a process's (or a context's) growth to its group: the process's own
 * where its name has no role, else its name and role's. */
static void group_add(struct mp_overhead *o, const char *comm, const char *role, uint32_t pid,
		      uint32_t host, const int64_t g[MP_OVH_NR_CATS], int64_t cow)
{
	struct mp_overhead_group *gr = NULL;

	for (size_t i = 0; i < o->ngroups && !gr; i++)
		if (!strcmp(o->groups[i].comm, comm) && !strcmp(o->groups[i].role, role) &&
		    (role[0] || o->groups[i].pid == pid))
			gr = &o->groups[i];
	if (!gr) {
		gr = &o->groups[o->ngroups++];
		snprintf(gr->comm, sizeof(gr->comm), "%s", comm);
		snprintf(gr->role, sizeof(gr->role), "%s", role);
		gr->pid = pid;
		gr->host_pid = host;
	}
	if (pid && gr->processes++ && gr->pid != pid)
		gr->pid = 0; /* more than one: no pid */
	for (int k = 0; k < MP_OVH_NR_CATS; k++) {
		gr->cat_bytes[k] += g[k];
		gr->bytes += g[k];
	}
	gr->cow_bytes += cow;
}

static int cmp_group_desc(const void *x, const void *y)
{
	const struct mp_overhead_group *a = x, *b = y;
	int64_t ax = a->bytes < 0 ? -a->bytes : a->bytes, bx = b->bytes < 0 ? -b->bytes : b->bytes;

	if (ax != bx)
		return ax < bx ? 1 : -1;
	return strcmp(a->comm, b->comm);
}

/* The polled parts (pid 0, "(memory.stat)") as one group; the other
 * contexts' are grouped as they are counted. */
static void group_polled(struct mp_overhead *o, size_t from)
{
	int64_t g[MP_OVH_NR_CATS] = { 0 };
	bool any = false;

	for (size_t i = from; i < o->nparts; i++) {
		g[o->parts[i].cat] += o->parts[i].bytes;
		any = true;
	}
	if (any)
		group_add(o, "(memory.stat)", "", 0, 0, g, 0);
}

/*
 * What the kernel reclaimed in the probe's own context to make room for
 * it: the probe's page cache and reclaimable slab shrinking. The probe
 * maps anonymous memory only: any of its page cache or dentries that goes
 * is the workload's, freed by direct reclaim while the probe charged.
 */
static void take_reclaimed(struct mp_overhead *o)
{
	static const int rec[] = { MP_OVH_PAGE_CACHE, MP_CAT_SLAB_RECLAIMABLE };

	for (size_t i = 0; i < sizeof(rec) / sizeof(rec[0]); i++) {
		int k = rec[i];

		if (o->probe_cat_bytes[k] >= 0)
			continue;
		o->reclaimed_cat_bytes[k] += o->probe_cat_bytes[k]; /* beside the polled cache's */
		o->reclaimed_bytes += o->probe_cat_bytes[k];
		o->probe_cat_bytes[k] = 0;
	}
}

int mp_overhead_build(const struct mp_overhead_in *in, struct mp_overhead *o)
{
	size_t nb = in->base ? in->base->ntasks : 0, ntg, polled_from;
	size_t nrows = in->at->ntasks + nb + 2;
	uint32_t *tg = calloc(nrows, sizeof(*tg));
	int64_t sum = 0, kernel_parts = 0, rows[MP_OVH_NR_CATS] = { 0 };
	bool own = probe_has_anon(in);

	memset(o, 0, sizeof(*o));
	o->bytes = in->bytes;
	o->have_cow = in->cow_page_bytes > 0;
	o->parts = calloc(nrows * MP_OVH_NR_CATS, sizeof(*o->parts));
	o->groups = calloc(nrows, sizeof(*o->groups));
	if (!tg || !o->parts || !o->groups) {
		free(tg);
		mp_overhead_free(o);
		return -ENOMEM;
	}
	ntg = union_tgids(in, tg);
	for (size_t i = 0; i < ntg; i++) {
		const struct mp_task_row *r = row_of(in->at, tg[i]);
		int64_t g[MP_OVH_NR_CATS], cow;

		if (!r)
			r = row_of(in->base, tg[i]);
		task_growth(in, tg[i], g, &cow);
		/* the probe's own pages unmapped, not yet uncharged (the peak
		 * came while it freed): still its anon, what it allocated */
		if (in->probe_pid && tg[i] == in->probe_pid) {
			g[MP_CAT_ANON] += g[MP_OVH_ANON_UNMAPPED];
			g[MP_OVH_ANON_UNMAPPED] = 0;
		}
		for (int k = 0; k < MP_OVH_NR_CATS; k++) {
			if (k < MP_NR_CATS && mp_cats[k].part == MP_PART_KERNEL)
				kernel_parts += g[k];
			rows[k] += g[k];
			if (in->probe_pid && tg[i] == in->probe_pid)
				o->probe_cat_bytes[k] = g[k];
			else
				add_part(o, tg[i], r->host_tgid, r->comm, k, g[k]);
		}
		if (!in->probe_pid || tg[i] != in->probe_pid)
			group_add(o, r->comm, role_of(in, tg[i]), tg[i], r->host_tgid, g, cow);
	}
	free(tg);
	polled_from = o->nparts;
	add_polled(in, o, kernel_parts, rows,
		   in->probe_pid && !own ? (int64_t)in->allocated_bytes : 0);
	group_polled(o, polled_from);
	/* the probe's anon beyond what it allocated: THP rounding, or below 0
	 * when the peak came before its last chunk was touched; never minus
	 * the whole allocation for a row that does not carry it */
	o->probe_cat_bytes[MP_CAT_ANON] -= own ? (int64_t)in->allocated_bytes : 0;
	take_reclaimed(o);
	for (int k = 0; k < MP_OVH_NR_CATS; k++)
		o->probe_kernel_bytes += o->probe_cat_bytes[k];
	qsort(o->parts, o->nparts, sizeof(*o->parts), cmp_part_desc);
	qsort(o->groups, o->ngroups, sizeof(*o->groups), cmp_group_desc);
	/* groups that came to nothing (processes that charged and freed
	 * alike) are no group */
	while (o->ngroups && !o->groups[o->ngroups - 1].bytes && !o->groups[o->ngroups - 1].cow_bytes)
		o->ngroups--;
	for (size_t i = 0; i < o->nparts; i++)
		sum += o->parts[i].bytes;
	o->unexplained_bytes = in->bytes - sum - o->probe_kernel_bytes - o->reclaimed_bytes;
	return 0;
}

void mp_overhead_free(struct mp_overhead *o)
{
	free(o->parts);
	free(o->groups);
	memset(o, 0, sizeof(*o));
}

/* [{category, bytes}] of the non-zero ones of v, the largest (either
 * sign) first */
static cJSON *cat_list(const int64_t v[MP_OVH_NR_CATS])
{
	cJSON *arr = cJSON_CreateArray(), *e;
	int by[MP_OVH_NR_CATS];

	for (int k = 0; k < MP_OVH_NR_CATS; k++)
		by[k] = k;
	for (int i = 1; i < MP_OVH_NR_CATS; i++) /* insertion: stable, 14 items */
		for (int j = i; j > 0 && llabs(v[by[j]]) > llabs(v[by[j - 1]]); j--) {
			int t = by[j];

			by[j] = by[j - 1];
			by[j - 1] = t;
		}
	for (int i = 0; i < MP_OVH_NR_CATS; i++) {
		int k = by[i];

		if (!v[k])
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "category", mp_overhead_cat_name(k));
		mp_json_add_s64(e, "bytes", v[k]);
		cJSON_AddItemToArray(arr, e);
	}
	return arr;
}

static cJSON *group_json(const struct mp_overhead *o, const struct mp_overhead_group *g)
{
	cJSON *e = cJSON_CreateObject();

	cJSON_AddStringToObject(e, "comm", g->comm);
	cJSON_AddStringToObject(e, "role", g->role);
	cJSON_AddNumberToObject(e, "processes", g->processes);
	if (g->processes == 1 && g->pid)
		mp_json_add_pid(e, g->pid, g->host_pid);
	else
		cJSON_AddNullToObject(e, "pid");
	mp_json_add_s64(e, "bytes", g->bytes);
	if (o->have_cow)
		mp_json_add_s64(e, "copy_on_write_bytes", g->cow_bytes);
	else
		cJSON_AddNullToObject(e, "copy_on_write_bytes");
	cJSON_AddItemToObject(e, "categories", cat_list(g->cat_bytes));
	return e;
}

cJSON *mp_overhead_json(const struct mp_overhead *o, const char *at)
{
	cJSON *j = cJSON_CreateObject(), *arr, *e;

	mp_json_add_s64(j, "bytes", o->bytes);
	if (at)
		cJSON_AddStringToObject(j, "at", at);
	arr = cJSON_AddArrayToObject(j, "parts");
	for (size_t i = 0; i < o->nparts; i++) {
		e = cJSON_CreateObject();
		mp_json_add_pid(e, o->parts[i].pid, o->parts[i].host_pid);
		cJSON_AddStringToObject(e, "comm", o->parts[i].comm);
		cJSON_AddStringToObject(e, "category", mp_overhead_cat_name(o->parts[i].cat));
		mp_json_add_s64(e, "bytes", o->parts[i].bytes);
		cJSON_AddItemToArray(arr, e);
	}
	arr = cJSON_AddArrayToObject(j, "groups");
	for (size_t i = 0; i < o->ngroups; i++)
		cJSON_AddItemToArray(arr, group_json(o, &o->groups[i]));
	mp_json_add_s64(j, "probe_kernel_bytes", o->probe_kernel_bytes);
	cJSON_AddItemToObject(j, "probe_kernel_parts", cat_list(o->probe_cat_bytes));
	mp_json_add_s64(j, "reclaimed_bytes", o->reclaimed_bytes);
	cJSON_AddItemToObject(j, "reclaimed_parts", cat_list(o->reclaimed_cat_bytes));
	mp_json_add_s64(j, "unexplained_bytes", o->unexplained_bytes);
	return j;
}

/* One of the object's explanations; NULL when out of memory. */
static cJSON *explain(const struct mp_overhead_doc_in *d, int64_t bytes, uint64_t allocated,
		      const struct mp_attr_snap *at, const char *when)
{
	struct mp_overhead_in in = {
		.bytes = bytes, .allocated_bytes = allocated, .probe_pid = d->probe_pid,
		.base = &d->snaps->base, .at = at, .have_kernel_total = d->have_kernel_total,
		.page_size = d->snaps->anon_unmapped ? d->snaps->page_size : 0,
		.roles = d->roles, .nroles = d->nroles, .cow_page_bytes = d->cow_page_bytes,
	};
	struct mp_overhead o;
	cJSON *j;

	memcpy(in.polled, d->polled, sizeof(in.polled));
	memcpy(in.rows, d->rows, sizeof(in.rows));
	if (mp_overhead_build(&in, &o))
		return NULL;
	j = mp_overhead_json(&o, when);
	mp_overhead_free(&o);
	return j;
}

cJSON *mp_overhead_doc(const struct mp_overhead_doc_in *d)
{
	const struct mp_overhead_snaps *s = d->snaps;
	cJSON *j, *left;

	if (!s || !s->have_base || !s->have_peak ||
	    !(j = explain(d, d->overhead_bytes, d->allocated_bytes, &s->peak, "peak")))
		return NULL;
	if (!s->have_left || !(left = explain(d, d->left_bytes, 0, &s->left, NULL)))
		cJSON_AddNullToObject(j, "left_after");
	else
		cJSON_AddItemToObject(j, "left_after", left);
	/* the usage read with the vector, else the sampler's read before it */
	mp_json_add_u64(j, "vector_usage_bytes",
			s->peak.have_usage ? s->peak.usage_bytes : s->peak_usage_bytes);
	mp_json_add_u64(j, "baseline_usage_bytes", s->base_usage_bytes);
	mp_json_add_u64(j, "baseline_window_ns", d->baseline_ns);
	cJSON_AddNumberToObject(j, "baseline_samples", d->baseline_samples);
	return j;
}
