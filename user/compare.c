// SPDX-License-Identifier: GPL-2.0
/*
 * The compare document: reports of one kind side by side. Each report is
 * read into rows (an id, a unit, a value per report, absent where that
 * report has no such figure); each row then gets its difference and ratio
 * against the first report and a mark where the difference is beyond the
 * threshold, and a second row normalised per GiB (allocated for a probe,
 * of peak usage for a record), since hosts differ in size.
 */
#include "compare.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB 1073741824.0

struct row {
	char id[96];       /* stable: "growth.anon", "overhead.parts.slab" */
	const char *unit;  /* "bytes", "count", "ms" */
	bool per_gib;      /* also normalised per GiB */
	bool have[MP_COMPARE_MAX];
	int64_t v[MP_COMPARE_MAX];
};

struct rows {
	struct row *r;
	size_t n, cap;
	int col;           /* the report being read */
	bool oom;
};

static struct row *row_get(struct rows *rs, const char *id, const char *unit, bool per_gib)
{
	struct row *r;

	for (size_t i = 0; i < rs->n; i++)
		if (strcmp(rs->r[i].id, id) == 0)
			return &rs->r[i];
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 64;
		struct row *nr = realloc(rs->r, cap * sizeof(*nr));

		if (!nr) {
			rs->oom = true;
			return NULL;
		}
		rs->r = nr;
		rs->cap = cap;
	}
	r = &rs->r[rs->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%s", id);
	r->unit = unit;
	r->per_gib = per_gib;
	return r;
}

/* A value of the report being read; a second one of the same id adds to
 * it (overhead parts of one category from several processes). */
static void put(struct rows *rs, const char *id, const char *unit, bool per_gib, int64_t v)
{
	struct row *r = row_get(rs, id, unit, per_gib);

	if (!r)
		return;
	if (r->have[rs->col])
		v = (int64_t)((uint64_t)r->v[rs->col] + (uint64_t)v);
	r->have[rs->col] = true;
	r->v[rs->col] = v;
}

/* An integer member (signed), put when present and not null. */
static void put_member(struct rows *rs, struct mp_rd *rd, const cJSON *o, const char *name,
		       const char *id, const char *unit, bool per_gib)
{
	int64_t v;

	if (o && mp_rd_s64(rd, o, name, MP_RD_NULL | MP_RD_ABSENT, &v))
		put(rs, id, unit, per_gib, v);
}

/* [{category, bytes}] summed per category under prefix. */
static void put_parts(struct rows *rs, struct mp_rd *rd, const cJSON *arr, const char *prefix)
{
	const cJSON *it;
	char id[96];

	cJSON_ArrayForEach(it, arr) {
		const char *cat;
		int64_t v;

		if (!mp_rd_is_obj(rd, it))
			return;
		cat = mp_rd_str(rd, it, "category", MP_RD_NULL);
		if (!mp_rd_s64(rd, it, "bytes", 0, &v))
			return;
		snprintf(id, sizeof(id), "%s.%.60s", prefix, cat ? cat : "(none)");
		put(rs, id, "bytes", true, v);
	}
}

/* The overhead object of the contract (absent when not measured). */
static void read_overhead(struct rows *rs, struct mp_rd *rd, const cJSON *o)
{
	if (!o)
		return;
	put_member(rs, rd, o, "bytes", "overhead.bytes", "bytes", true);
	put_parts(rs, rd, mp_rd_arr(rd, o, "parts", MP_RD_ABSENT | MP_RD_NULL), "overhead.parts");
	put_member(rs, rd, o, "probe_kernel_bytes", "overhead.probe_kernel_bytes", "bytes", true);
	put_parts(rs, rd, mp_rd_arr(rd, o, "probe_kernel_parts", MP_RD_ABSENT | MP_RD_NULL),
		  "overhead.probe_kernel_parts");
	put_member(rs, rd, o, "reclaimed_bytes", "overhead.reclaimed_bytes", "bytes", true);
	put_member(rs, rd, o, "unexplained_bytes", "overhead.unexplained_bytes", "bytes", true);
}

/* The nine fields (their _gib twins are the same figures), under prefix. */
static void read_nine(struct rows *rs, struct mp_rd *rd, const cJSON *o, const char *prefix)
{
	static const char *const names[] = {
		"cgroup_limit_bytes", "usage_before_bytes", "allocated_bytes", "usage_peak_bytes",
		"usage_after_bytes", "overhead_bytes", "probe_chunks",
	};
	char id[96];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool bytes = i + 1 < sizeof(names) / sizeof(names[0]);

		snprintf(id, sizeof(id), "%s%s", prefix, names[i]);
		/* per GiB only what grows with the fill: a limit, a baseline or a
		 * chunk count per GiB means nothing; allocated per GiB allocated
		 * is 1 GiB (a record's probe: per GiB of the peak, kept) */
		put_member(rs, rd, o, names[i], id, bytes ? "bytes" : "count",
			   !strcmp(names[i], "usage_peak_bytes") ||
			   !strcmp(names[i], "usage_after_bytes") ||
			   !strcmp(names[i], "overhead_bytes") ||
			   (prefix[0] && !strcmp(names[i], "allocated_bytes")));
	}
}

/* Each category's growth, the page faults, the page-table pages. */
static void read_attribution(struct rows *rs, struct mp_rd *rd, const cJSON *a, bool probe)
{
	const cJSON *it, *pf;
	char id[96];

	cJSON_ArrayForEach(it, mp_rd_arr(rd, a, "categories", MP_RD_ABSENT)) {
		const char *name;

		if (!mp_rd_is_obj(rd, it))
			return;
		name = mp_rd_str(rd, it, "name", 0);
		/* a count below what the kernel allows is no figure */
		if (mp_rd_item(rd, it, "below_floor", MP_RD_ABSENT) &&
		    mp_rd_bool(rd, it, "below_floor", 0))
			continue;
		snprintf(id, sizeof(id), "growth.%.80s", name);
		put_member(rs, rd, it, "growth_bytes", id, "bytes", true);
	}
	put_member(rs, rd, mp_rd_obj(rd, a, "reconciliation", MP_RD_ABSENT | MP_RD_NULL),
		   "anon_unmapped_bytes", "reconciliation.anon_unmapped_bytes", "bytes", true);
	pf = mp_rd_obj(rd, a, "page_faults", MP_RD_ABSENT | MP_RD_NULL);
	put_member(rs, rd, pf, "total", "page_faults.total", "count", true);
	if (probe)
		put_member(rs, rd, pf, "probe", "page_faults.probe", "count", true);
	cJSON_ArrayForEach(it, mp_rd_arr(rd, a, "kernel_paths", MP_RD_ABSENT | MP_RD_NULL)) {
		if (!mp_rd_is_obj(rd, it))
			return;
		if (strcmp(mp_rd_str(rd, it, "path", 0), "pagetables") == 0)
			put_member(rs, rd, it, "bytes", "kernel_paths.pagetables", "bytes", true);
	}
}

/* The pinned object's figures of its moment (the probe's stop, the peak). */
static void read_pinned(struct rows *rs, struct mp_rd *rd, const cJSON *p)
{
	static const char *const names[] = {
		"unevictable_bytes", "shmem_bytes", "shmem_unmapped_bytes", "file_unmapped_bytes",
		"vm_lck_bytes", "vm_pin_bytes",
	};
	char id[96];

	for (size_t i = 0; p && i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(id, sizeof(id), "pinned.%s", names[i]);
		put_member(rs, rd, p, names[i], id, "bytes", false);
	}
}

/* One report's rows; its normaliser (allocated, or peak) into *norm. */
static void read_report(struct rows *rs, struct mp_rd *rd, const cJSON *d, int kind,
			uint64_t *norm)
{
	const cJSON *run, *peak, *p, *a = mp_rd_obj(rd, d, "attribution", MP_RD_ABSENT);

	*norm = 0;
	if (kind == MP_DOC_PROBE) {
		mp_rd_u64(rd, d, "allocated_bytes", 0, norm);
		read_nine(rs, rd, d, "");
		read_overhead(rs, rd, mp_rd_obj(rd, d, "overhead", MP_RD_ABSENT | MP_RD_NULL));
		read_attribution(rs, rd, a, true);
		read_pinned(rs, rd, mp_rd_obj(rd, d, "pinned", MP_RD_ABSENT));
		return;
	}
	peak = mp_rd_obj(rd, d, "peak", 0);
	mp_rd_u64(rd, peak, "usage_bytes", MP_RD_ABSENT, norm);
	put_member(rs, rd, peak, "usage_bytes", "peak.usage_bytes", "bytes", false);
	put_member(rs, rd, mp_rd_obj(rd, d, "target", 0), "effective_limit_bytes",
		   "target.effective_limit_bytes", "bytes", false);
	run = mp_rd_obj(rd, d, "run", 0);
	put_member(rs, rd, run, "duration_ms", "run.duration_ms", "ms", false);
	put_member(rs, rd, run, "timeline_samples_missed", "run.timeline_samples_missed",
		   "count", false);
	put_member(rs, rd, peak, "vector_usage_bytes", "peak.vector_usage_bytes", "bytes", false);
	put_member(rs, rd, d, "oom_kill_counter_delta", "oom_kill_counter_delta", "count", false);
	read_attribution(rs, rd, a, false);
	read_pinned(rs, rd, mp_rd_obj(rd, d, "pinned", MP_RD_ABSENT));
	/* --probe-at: its nine fields and overhead, where present */
	p = mp_rd_obj(rd, d, "probe", MP_RD_ABSENT);
	if (p && !cJSON_GetObjectItemCaseSensitive(p, "error")) {
		read_nine(rs, rd, p, "probe.");
		read_overhead(rs, rd, mp_rd_obj(rd, p, "overhead", MP_RD_ABSENT | MP_RD_NULL));
	}
	p = mp_rd_obj(rd, d, "probe_at", MP_RD_ABSENT);
	read_overhead(rs, rd, mp_rd_obj(rd, p, "overhead", MP_RD_ABSENT | MP_RD_NULL));
}

static cJSON *raw_fixed(double v, int decimals)
{
	char buf[64];

	if (!isfinite(v) || fabs(v) >= 1e18)
		return cJSON_CreateNull();
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	/* "-0.00" is 0 */
	if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
		memmove(buf, buf + 1, strlen(buf));
	return cJSON_CreateRaw(buf);
}

static cJSON *raw_s64(int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return cJSON_CreateRaw(buf);
}

/* beyond the threshold: |v - base| > pct% of |base|; from 0, any change */
static bool beyond(double base, double v, double pct)
{
	return base == 0 ? v != 0 : fabs(v - base) > pct / 100.0 * fabs(base);
}

/* One row of the document: values, diffs, ratios and marks per report;
 * per GiB when gib (each report's normaliser in GiB) is given. */
static cJSON *row_json(const struct row *r, int n, const double *gib, double pct)
{
	cJSON *o = cJSON_CreateObject(), *vals, *diffs, *ratios, *marks;
	double x[MP_COMPARE_MAX];
	bool have[MP_COMPARE_MAX];
	char id[112];

	snprintf(id, sizeof(id), "%s%s", r->id, gib ? "/GiB" : "");
	cJSON_AddStringToObject(o, "id", id);
	cJSON_AddStringToObject(o, "unit", r->unit);
	cJSON_AddBoolToObject(o, "per_gib", gib != NULL);
	vals = cJSON_AddArrayToObject(o, "values");
	diffs = cJSON_AddArrayToObject(o, "diffs");
	ratios = cJSON_AddArrayToObject(o, "ratios");
	marks = cJSON_AddArrayToObject(o, "marked");
	for (int i = 0; i < n; i++) {
		have[i] = r->have[i] && (!gib || gib[i] > 0);
		x[i] = !have[i] ? 0 : gib ? (double)r->v[i] / gib[i] : (double)r->v[i];
		cJSON_AddItemToArray(vals, !have[i] ? cJSON_CreateNull() :
				     gib ? raw_fixed(x[i], 2) : raw_s64(r->v[i]));
		if (!have[i] || !have[0]) {
			cJSON_AddItemToArray(diffs, cJSON_CreateNull());
			cJSON_AddItemToArray(ratios, cJSON_CreateNull());
			cJSON_AddItemToArray(marks, cJSON_CreateFalse());
			continue;
		}
		cJSON_AddItemToArray(diffs, gib ? raw_fixed(x[i] - x[0], 2) :
				     raw_s64((int64_t)((uint64_t)r->v[i] - (uint64_t)r->v[0])));
		cJSON_AddItemToArray(ratios, x[0] == 0 ? cJSON_CreateNull() : raw_fixed(x[i] / x[0], 3));
		cJSON_AddItemToArray(marks, cJSON_CreateBool(beyond(x[0], x[i], pct)));
	}
	return o;
}

/* The reports' columns: file, host name, kernel, cgroup mode, version. */
static cJSON *column_json(const cJSON *d, const char *name, uint64_t norm, struct mp_rd *rd)
{
	const cJSON *h = mp_rd_obj(rd, d, "host", 0);
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "file", name);
	cJSON_AddStringToObject(o, "hostname", mp_rd_str(rd, h, "hostname", 0));
	cJSON_AddStringToObject(o, "kernel_release", mp_rd_str(rd, h, "kernel_release", 0));
	cJSON_AddStringToObject(o, "cgroup_mode", mp_rd_str(rd, h, "cgroup_mode", 0));
	cJSON_AddStringToObject(o, "memprobe_version",
				mp_rd_str(rd, mp_rd_obj(rd, d, "generator", 0), "version", 0));
	cJSON_AddStringToObject(o, "created", mp_rd_str(rd, d, "created", 0));
	mp_json_add_u64(o, "per_gib_of_bytes", norm);
	return o;
}

/* Why the reports cannot be set side by side, or 0. */
static int check_kinds(const cJSON *const *docs, const int *kinds, const char *const *names,
		       int n, char *err, size_t errlen)
{
	const char *fv0 = cJSON_IsRaw(cJSON_GetObjectItemCaseSensitive(docs[0], "format_version")) ?
		cJSON_GetObjectItemCaseSensitive(docs[0], "format_version")->valuestring : "?";

	for (int i = 0; i < n; i++) {
		const cJSON *fv = cJSON_GetObjectItemCaseSensitive(docs[i], "format_version");

		if (kinds[i] != MP_DOC_PROBE && kinds[i] != MP_DOC_RECORD)
			return snprintf(err, errlen, "%s: a %s document; compare takes probe or "
					"record reports", names[i], mp_doc_kind_name(kinds[i])), -EINVAL;
		if (kinds[i] != kinds[0])
			return snprintf(err, errlen, "%s: a %s report, and %s is a %s report; "
					"compare reports of one kind", names[i],
					mp_doc_kind_name(kinds[i]), names[0],
					mp_doc_kind_name(kinds[0])), -EINVAL;
		if (!cJSON_IsRaw(fv) || strcmp(fv->valuestring, fv0) != 0)
			return snprintf(err, errlen, "%s: format_version %s, and %s's is %s: their "
					"fields cannot be aligned; compare reports of one "
					"format_version", names[i], cJSON_IsRaw(fv) ? fv->valuestring :
					"?", names[0], fv0), -EINVAL;
	}
	return 0;
}

cJSON *mp_compare_doc(const cJSON *const *docs, const int *kinds, const char *const *names,
		      int n, double pct, const struct mp_host *h, char *err, size_t errlen)
{
	struct rows rs = { 0 };
	double gib[MP_COMPARE_MAX];
	uint64_t norm[MP_COMPARE_MAX];
	cJSON *doc = NULL, *cols, *rows;

	err[0] = '\0';
	if (n < 1 || n > MP_COMPARE_MAX) {
		snprintf(err, errlen, "%d reports: give 1 to %d", n, MP_COMPARE_MAX);
		return NULL;
	}
	if (check_kinds(docs, kinds, names, n, err, errlen))
		return NULL;
	for (int i = 0; i < n; i++) {
		struct mp_rd rd = { .root = docs[i] };

		rs.col = i;
		read_report(&rs, &rd, docs[i], kinds[i], &norm[i]);
		gib[i] = (double)norm[i] / GIB;
		if (!mp_rd_ok(&rd)) {
			snprintf(err, errlen, "%s: %s; give a report memprobe wrote, unchanged",
				 names[i], rd.err);
			goto out;
		}
	}
	if (rs.oom)
		goto oom;
	doc = mp_doc_new("compare", h);
	cJSON_AddStringToObject(doc, "compared_kind", mp_doc_kind_name(kinds[0]));
	cJSON_AddStringToObject(doc, "per_gib_of", kinds[0] == MP_DOC_PROBE ? "allocated_bytes" :
				"peak.usage_bytes");
	cJSON_AddItemToObject(doc, "threshold_pct", raw_fixed(pct, 2));
	cols = cJSON_AddArrayToObject(doc, "reports");
	for (int i = 0; i < n; i++) {
		struct mp_rd rd = { .root = docs[i] };

		cJSON_AddItemToArray(cols, column_json(docs[i], names[i], norm[i], &rd));
	}
	rows = cJSON_AddArrayToObject(doc, "rows");
	for (size_t k = 0; k < rs.n; k++) {
		cJSON_AddItemToArray(rows, row_json(&rs.r[k], n, NULL, pct));
		if (rs.r[k].per_gib && strcmp(rs.r[k].unit, "ms") != 0)
			cJSON_AddItemToArray(rows, row_json(&rs.r[k], n, gib, pct));
	}
	/* cJSON says nothing of a failed allocation inside: print to find out */
	{
		char *s = cJSON_PrintUnformatted(doc);

		if (!s)
			goto oom;
		cJSON_free(s);
	}
out:
	free(rs.r);
	return doc;
oom:
	cJSON_Delete(doc);
	free(rs.r);
	snprintf(err, errlen, "out of memory; free some and try again");
	return NULL;
}
