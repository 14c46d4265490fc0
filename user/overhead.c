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
	return cat == MP_OVH_KERNEL_OTHER ? "kernel_other" :
	       cat == MP_OVH_ANON_UNMAPPED ? "anon_unmapped" : mp_cat_names[cat];
}

/*
 * The categories whose sum is the usage, each byte once: anon, file (shmem
 * is inside it), sock, and kernel as its itemised parts plus the rest
 * (kernel_other); without a kernel total, the itemised parts alone.
 */
static bool is_leaf(int k)
{
	return mp_cats[k].part == MP_PART_KERNEL ||
	       (mp_cats[k].part == MP_PART_USAGE && k != MP_CAT_KERNEL);
}

static const struct mp_task_row *row_of(const struct mp_attr_snap *s, uint32_t tgid)
{
	for (size_t i = 0; s && i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return &s->tasks[i];
	return NULL;
}

/* One process's growth per category: at - base, a row absent counting 0;
 * polled categories are 0 here (memory.stat has no per-process split). */
static void task_growth(const struct mp_overhead_in *in, uint32_t tgid, int64_t g[MP_OVH_NR_CATS])
{
	const struct mp_task_row *a = row_of(in->at, tgid), *b = row_of(in->base, tgid);
	int64_t kernel = 0, parts = 0;

	memset(g, 0, sizeof(int64_t) * MP_OVH_NR_CATS);
	for (int k = 0; k < MP_NR_CATS; k++) {
		int64_t v = (a ? a->charge_bytes[k] : 0) - (b ? b->charge_bytes[k] : 0);

		if (k == MP_CAT_KERNEL) {
			kernel = v;
			continue;
		}
		if (!is_leaf(k) || (in->polled[k] && !in->rows[k]))
			continue;
		/* /proc's RssFile of the probe is memprobe's own binary, whose
		 * pages memprobe faulted in and its cgroup was charged for: no
		 * cost of the allocation (1 MiB of a 476 MiB fill in a guest,
		 * half the budget's kernel cost per GiB) */
		if (k == MP_CAT_FILE && in->rows[k] && in->probe_pid && tgid == in->probe_pid)
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

/* The polled categories, as parts of pid 0 named "(memory.stat)" (with
 * /proc's rows, what memory.stat shows beyond them); a polled kernel
 * total's rest beyond every itemised part as kernel_other. */
static void add_polled(const struct mp_overhead_in *in, struct mp_overhead *o,
		       int64_t kernel_parts, const int64_t rows[MP_NR_CATS],
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

int mp_overhead_build(const struct mp_overhead_in *in, struct mp_overhead *o)
{
	size_t nb = in->base ? in->base->ntasks : 0, ntg;
	uint32_t *tg = calloc(in->at->ntasks + nb + 1, sizeof(*tg));
	int64_t sum = 0, kernel_parts = 0, rows[MP_NR_CATS] = { 0 };
	bool own = probe_has_anon(in);

	memset(o, 0, sizeof(*o));
	o->bytes = in->bytes;
	o->parts = calloc((in->at->ntasks + nb + 1) * MP_OVH_NR_CATS, sizeof(*o->parts));
	if (!tg || !o->parts) {
		free(tg);
		mp_overhead_free(o);
		return -ENOMEM;
	}
	ntg = union_tgids(in, tg);
	for (size_t i = 0; i < ntg; i++) {
		const struct mp_task_row *r = row_of(in->at, tg[i]);
		int64_t g[MP_OVH_NR_CATS];

		if (!r)
			r = row_of(in->base, tg[i]);
		task_growth(in, tg[i], g);
		/* the probe's own pages unmapped, not yet uncharged (the peak
		 * came while it freed): still its anon, what it allocated */
		if (in->probe_pid && tg[i] == in->probe_pid) {
			g[MP_CAT_ANON] += g[MP_OVH_ANON_UNMAPPED];
			g[MP_OVH_ANON_UNMAPPED] = 0;
		}
		for (int k = 0; k < MP_OVH_NR_CATS; k++) {
			if (k < MP_NR_CATS && mp_cats[k].part == MP_PART_KERNEL)
				kernel_parts += g[k];
			if (k < MP_NR_CATS)
				rows[k] += g[k];
			if (in->probe_pid && tg[i] == in->probe_pid)
				o->probe_cat_bytes[k] = g[k];
			else
				add_part(o, tg[i], r->host_tgid, r->comm, k, g[k]);
		}
	}
	free(tg);
	add_polled(in, o, kernel_parts, rows,
		   in->probe_pid && !own ? (int64_t)in->allocated_bytes : 0);
	/* the probe's anon beyond what it allocated: THP rounding, or below 0
	 * when the peak came before its last chunk was touched; never minus
	 * the whole allocation for a row that does not carry it */
	o->probe_cat_bytes[MP_CAT_ANON] -= own ? (int64_t)in->allocated_bytes : 0;
	for (int k = 0; k < MP_OVH_NR_CATS; k++)
		o->probe_kernel_bytes += o->probe_cat_bytes[k];
	qsort(o->parts, o->nparts, sizeof(*o->parts), cmp_part_desc);
	for (size_t i = 0; i < o->nparts; i++)
		sum += o->parts[i].bytes;
	o->unexplained_bytes = in->bytes - sum - o->probe_kernel_bytes;
	return 0;
}

void mp_overhead_free(struct mp_overhead *o)
{
	free(o->parts);
	memset(o, 0, sizeof(*o));
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
	mp_json_add_s64(j, "probe_kernel_bytes", o->probe_kernel_bytes);
	arr = cJSON_AddArrayToObject(j, "probe_kernel_parts");
	for (int k = 0; k < MP_OVH_NR_CATS; k++) {
		if (!o->probe_cat_bytes[k])
			continue;
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "category", mp_overhead_cat_name(k));
		mp_json_add_s64(e, "bytes", o->probe_cat_bytes[k]);
		cJSON_AddItemToArray(arr, e);
	}
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
