// SPDX-License-Identifier: GPL-2.0
/*
 * record's bounded timeline (timeline.h): a ring of the recent samples, and
 * the older ones folded into rows that merge pairwise when they fill.
 */
#include "timeline.h"
#include "attr.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int mp_tl_init(struct mp_tl *tl)
{
	memset(tl, 0, sizeof(*tl));
	tl->width = MP_TL_FIRST_WIDTH;
	tl->ring = calloc(MP_TL_WINDOW, sizeof(*tl->ring));
	tl->b = calloc(MP_TL_BUCKETS, sizeof(*tl->b));
	if (tl->ring && tl->b)
		return 0;
	mp_tl_free(tl);
	return -ENOMEM;
}

void mp_tl_free(struct mp_tl *tl)
{
	free(tl->ring);
	free(tl->b);
	tl->ring = NULL;
	tl->b = NULL;
	tl->nring = tl->nb = 0;
}

/* ---- folding ---------------------------------------------------------------- */

static void agg_start(struct mp_tl_agg *a, int64_t v)
{
	a->min = a->max = a->last = v;
	a->sum = v;
	a->n = 1;
}

static void agg_add(struct mp_tl_agg *a, int64_t v)
{
	if (!a->n) {
		agg_start(a, v);
		return;
	}
	a->min = MP_MIN(a->min, v);
	a->max = MP_MAX(a->max, v);
	a->last = v;
	a->sum += v;
	a->n++;
}

/* a then b (b the newer) into a */
static void agg_merge(struct mp_tl_agg *a, const struct mp_tl_agg *b)
{
	if (!b->n)
		return;
	if (!a->n) {
		*a = *b;
		return;
	}
	a->min = MP_MIN(a->min, b->min);
	a->max = MP_MAX(a->max, b->max);
	a->last = b->last;
	a->sum += b->sum;
	a->n += b->n;
}

/* Byte counts and rates are below 2^63 (a cgroup's usage is a long of
 * pages in the kernel): held signed, as BPF's growth is. */
static void bucket_add(struct mp_tl_bucket *b, const struct sample *s)
{
	if (!b->n) {
		memset(b, 0, sizeof(*b));
		b->from_ms = s->t_ms;
	}
	b->t_ms = s->t_ms;
	b->limit_bytes = s->limit_bytes;
	b->n++;
	agg_add(&b->usage, (int64_t)s->usage_bytes);
	agg_add(&b->faults, (int64_t)s->faults_per_sec);
	for (int k = 0; k < MP_NR_CATS; k++) {
		if (s->stat.have[k])
			agg_add(&b->stat[k], (int64_t)s->stat.bytes[k]);
		agg_add(&b->bpf[k], s->bpf_growth[k]);
	}
}

static void bucket_merge(struct mp_tl_bucket *a, const struct mp_tl_bucket *b)
{
	a->t_ms = b->t_ms;
	a->limit_bytes = b->limit_bytes;
	a->n += b->n;
	agg_merge(&a->usage, &b->usage);
	agg_merge(&a->faults, &b->faults);
	for (int k = 0; k < MP_NR_CATS; k++) {
		agg_merge(&a->stat[k], &b->stat[k]);
		agg_merge(&a->bpf[k], &b->bpf[k]);
	}
}

/* The folded rows are full: each pair becomes one, twice as wide. */
static void halve(struct mp_tl *tl)
{
	size_t n = 0;

	for (size_t i = 0; i < tl->nb; i += 2, n++) {
		if (i != n)
			tl->b[n] = tl->b[i];
		if (i + 1 < tl->nb)
			bucket_merge(&tl->b[n], &tl->b[i + 1]);
	}
	tl->nb = n;
	tl->width *= 2;
}

/* A sample leaving the window: into the newest folded row, or a new one. */
static void fold(struct mp_tl *tl, const struct sample *s)
{
	if (tl->nb && tl->b[tl->nb - 1].n < tl->width) {
		bucket_add(&tl->b[tl->nb - 1], s);
		return;
	}
	if (tl->nb == MP_TL_BUCKETS) {
		halve(tl);
		if (tl->b[tl->nb - 1].n < tl->width) {
			bucket_add(&tl->b[tl->nb - 1], s);
			return;
		}
	}
	tl->b[tl->nb].n = 0;
	bucket_add(&tl->b[tl->nb++], s);
}

void mp_tl_push(struct mp_tl *tl, const struct sample *s)
{
	if (!tl->ring) {
		tl->dropped++;
		return;
	}
	if (!tl->taken++) {
		tl->first = *s;
		return;
	}
	if (tl->nring == MP_TL_WINDOW) {
		fold(tl, &tl->ring[tl->head]);
		tl->ring[tl->head] = *s;
		tl->head = (tl->head + 1) % MP_TL_WINDOW;
		return;
	}
	tl->ring[(tl->head + tl->nring++) % MP_TL_WINDOW] = *s;
}

const struct sample *mp_tl_recent(const struct mp_tl *tl, size_t k)
{
	if (k < tl->nring)
		return &tl->ring[(tl->head + tl->nring - 1 - k) % MP_TL_WINDOW];
	if (k == tl->nring && tl->taken && !tl->nb)
		return &tl->first; /* nothing between it and the window */
	return NULL;
}

const struct sample *mp_tl_first(const struct mp_tl *tl)
{
	return tl->taken && tl->ring ? &tl->first : NULL;
}

/* ---- the document ------------------------------------------------------------- */

/* Members of the timeline's many rows: the names are constant strings,
 * not copied per member (cJSON's CS variant), a third of a row's memory. */
static void add_u64(cJSON *o, const char *name, uint64_t v)
{
	cJSON_AddItemToObjectCS(o, name, mp_json_u64(v));
}

static void add_s64(cJSON *o, const char *name, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	cJSON_AddItemToObjectCS(o, name, cJSON_CreateRaw(buf));
}

static cJSON *add_obj(cJSON *o, const char *name)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddItemToObjectCS(o, name, c);
	return c;
}

cJSON *mp_tl_sample_json(const struct sample *s, bool bpf)
{
	cJSON *o = cJSON_CreateObject(), *st, *bg;

	add_u64(o, "t_ms", s->t_ms);
	add_u64(o, "usage_bytes", s->usage_bytes);
	/* the effective limit in force (record.c); 0: not read */
	if (s->limit_bytes)
		add_u64(o, "limit_bytes", s->limit_bytes);
	else
		cJSON_AddItemToObjectCS(o, "limit_bytes", cJSON_CreateNull());
	add_u64(o, "faults_per_sec", s->faults_per_sec);
	st = add_obj(o, "stat");
	for (int k = 0; k < MP_NR_CATS; k++)
		if (s->stat.have[k])
			add_u64(st, mp_cat_names[k], s->stat.bytes[k]);
	/* what processes map: an OOM kill's "no process maps" (oom_doc.c) */
	if (s->stat.have_file_mapped)
		add_u64(st, "file_mapped", s->stat.file_mapped);
	/* BPF's figures only where a memcg hook counted them */
	if (bpf) {
		bg = add_obj(o, "bpf_growth");
		for (int k = 0; k < MP_NR_CATS; k++)
			add_s64(bg, mp_cat_names[k], s->bpf_growth[k]);
		if (s->have_objcg_reserve)
			add_s64(o, "objcg_reserve_bytes", s->objcg_reserve_bytes);
	}
	return o;
}

enum stat_of { MIN, MAX, MEAN };

/* The mean, rounded to the nearest (half away from zero). */
static int64_t agg_mean(const struct mp_tl_agg *a)
{
	__int128 n = (__int128)a->n, q = a->sum / n, r = a->sum % n;

	if (2 * (r < 0 ? -r : r) >= n)
		q += a->sum < 0 ? -1 : 1;
	return (int64_t)q;
}

static int64_t agg_of(const struct mp_tl_agg *a, enum stat_of w)
{
	return w == MIN ? a->min : w == MAX ? a->max : agg_mean(a);
}

/* min, max or mean of a row: usage, faults, and each category's figure
 * where its samples had one, the kernel's (stat) or else BPF's. */
static cJSON *agg_json(const struct mp_tl_bucket *b, enum stat_of w, bool bpf)
{
	cJSON *o = cJSON_CreateObject(), *st, *bg;

	add_u64(o, "usage_bytes", (uint64_t)agg_of(&b->usage, w));
	add_u64(o, "faults_per_sec", (uint64_t)agg_of(&b->faults, w));
	st = add_obj(o, "stat");
	bg = bpf ? add_obj(o, "bpf_growth") : NULL;
	for (int k = 0; k < MP_NR_CATS; k++) {
		if (b->stat[k].n)
			add_u64(st, mp_cat_names[k], (uint64_t)agg_of(&b->stat[k], w));
		else if (bg)
			add_s64(bg, mp_cat_names[k], agg_of(&b->bpf[k], w));
	}
	return o;
}

static cJSON *bucket_json(const struct mp_tl_bucket *b, bool bpf, uint64_t interval_ms)
{
	struct sample last = { .t_ms = b->t_ms, .usage_bytes = (uint64_t)b->usage.last,
			       .limit_bytes = b->limit_bytes,
			       .faults_per_sec = (uint64_t)b->faults.last };
	cJSON *o;

	for (int k = 0; k < MP_NR_CATS; k++) {
		last.stat.have[k] = b->stat[k].n > 0;
		last.stat.bytes[k] = (uint64_t)b->stat[k].last;
		last.bpf_growth[k] = b->bpf[k].last;
	}
	o = mp_tl_sample_json(&last, bpf);
	add_u64(o, "from_ms", b->from_ms);
	add_u64(o, "samples", b->n);
	add_u64(o, "resolution_ms", b->n * interval_ms);
	cJSON_AddItemToObjectCS(o, "min", agg_json(b, MIN, bpf));
	cJSON_AddItemToObjectCS(o, "max", agg_json(b, MAX, bpf));
	cJSON_AddItemToObjectCS(o, "mean", agg_json(b, MEAN, bpf));
	return o;
}

cJSON *mp_tl_json(const struct mp_tl *tl, bool bpf, uint64_t interval_ms)
{
	cJSON *arr = cJSON_CreateArray();
	const struct sample *first = mp_tl_first(tl);

	if (!arr)
		return NULL;
	if (first)
		cJSON_AddItemToArray(arr, mp_tl_sample_json(first, bpf));
	for (size_t i = 0; i < tl->nb; i++)
		cJSON_AddItemToArray(arr, bucket_json(&tl->b[i], bpf, interval_ms));
	for (size_t i = 0; i < tl->nring; i++)
		cJSON_AddItemToArray(arr, mp_tl_sample_json(
			&tl->ring[(tl->head + i) % MP_TL_WINDOW], bpf));
	return arr;
}

cJSON *mp_tl_folding_json(const struct mp_tl *tl, uint64_t interval_ms)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t folded = 0;

	for (size_t i = 0; i < tl->nb; i++)
		folded += tl->b[i].n;
	add_u64(o, "samples", tl->taken);
	add_u64(o, "window_samples", MP_TL_WINDOW);
	add_u64(o, "window_rows", tl->nring);
	add_u64(o, "max_folded_rows", MP_TL_BUCKETS);
	add_u64(o, "folded_rows", tl->nb);
	add_u64(o, "folded_samples", folded);
	add_u64(o, "samples_per_folded_row", tl->width);
	add_u64(o, "folded_row_ms", tl->width * interval_ms);
	if (tl->nring)
		add_u64(o, "window_from_ms", tl->ring[tl->head].t_ms);
	else
		cJSON_AddItemToObjectCS(o, "window_from_ms", cJSON_CreateNull());
	return o;
}
