// SPDX-License-Identifier: GPL-2.0
/*
 * record's bounded timeline (timeline.c) and its document at the edge:
 * 27 M samples (31 days at the default 100 ms; the bound is the same for
 * any count: 31 days at 1 ms, 2.7 G samples, take 4 minutes and end with
 * the same rows) go through mp_tl_push; the rows stay
 * within their bounds and add up to every sample, each folded row's min,
 * max, mean and last are those of the samples it holds (a known series),
 * and the record document the writer makes of it -- every category in
 * stat and in bpf_growth, every number at its widest, the OOM kills at
 * their bound -- is within 16 MiB and the loader's bounds, loads, and
 * renders with every renderer, the same bytes as rendered in place
 * (mp_doc_adopt). The RSS figures are printed for docs/performance.md.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "doc.h"
#include "record.h"
#include "render.h"
#include "timeline.h"
#include "unit.h"
#include "util.h"

#define SAMPLES (31ULL * 86400 * 10) /* 31 days at 100 ms */

/* The i-th synthetic sample: usage a sawtooth over 1000 samples, so each
 * folded row's min, max and mean are known; every category present. */
static void synth(struct sample *s, uint64_t i, uint64_t big)
{
	memset(s, 0, sizeof(*s));
	s->t_ms = i;
	s->usage_bytes = big + (i % 1000) * 4096;
	s->faults_per_sec = i % 7;
	for (int k = 0; k < MP_NR_CATS; k++) {
		s->stat.have[k] = true;
		s->stat.bytes[k] = big + (uint64_t)k + i % 3;
		s->bpf_growth[k] = -(int64_t)big - k;
	}
}

static uint64_t rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)ru.ru_maxrss;
}

/* The folded rows of a sawtooth: min, max, mean and last of what they hold. */
static void check_rows(const struct mp_tl *tl, uint64_t n, uint64_t big)
{
	uint64_t seen = 1, next = 1, bad = 0;

	CHECK_LE_INT(tl->nb, MP_TL_BUCKETS, "folded rows: %zu, want %d to %d", tl->nb,
		     MP_TL_BUCKETS / 2, MP_TL_BUCKETS);
	CHECK_GE_INT(tl->nb, MP_TL_BUCKETS / 2, "folded rows: %zu, want %d to %d", tl->nb,
		     MP_TL_BUCKETS / 2, MP_TL_BUCKETS);
	CHECK_U64(tl->nring, MP_TL_WINDOW, "the window is full");
	CHECK_U64(tl->first.t_ms, 0, "the first sample is kept exact");
	for (size_t i = 0; i < tl->nb; i++) {
		const struct mp_tl_bucket *b = &tl->b[i];
		uint64_t lo = UINT64_MAX, hi = 0;
		__int128 sum = 0;

		/* a row holds the samples from_ms..t_ms, one a ms, after the last */
		bad += b->from_ms != next || b->t_ms != b->from_ms + b->n - 1 ||
		       (i + 1 < tl->nb && b->n != tl->width);
		for (uint64_t t = b->from_ms; t <= b->t_ms; t++) {
			uint64_t v = big + (t % 1000) * 4096;

			lo = MP_MIN(lo, v);
			hi = MP_MAX(hi, v);
			sum += v;
		}
		bad += b->usage.min != (int64_t)lo || b->usage.max != (int64_t)hi ||
		       b->usage.last != (int64_t)(big + (b->t_ms % 1000) * 4096) ||
		       b->usage.sum != sum || b->stat[5].n != b->n;
		next = b->t_ms + 1;
		seen += b->n;
	}
	CHECK_U64(bad, 0, "folded rows whose span, min, max, sum or last is not their samples'");
	CHECK_U64(seen + tl->nring, n, "the rows add up to every sample");
	CHECK_U64(tl->ring[tl->head].t_ms, next, "the window follows the last folded row");
	CHECK_U64(mp_tl_recent(tl, 0)->t_ms, n - 1, "the newest sample");
}

/* Short runs: the first folded rows hold MP_TL_FIRST_WIDTH samples, so
 * the timeline is never much larger than every sample kept would be (a
 * folded row is about four samples' size; the newest may hold fewer). */
static void check_small(void)
{
	static const uint64_t ns[] = { 1, 2, MP_TL_WINDOW + 1, MP_TL_WINDOW + 2,
				       MP_TL_WINDOW + 5, MP_TL_WINDOW + 5000, 100000 };
	struct sample s;
	uint64_t bad = 0;

	for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
		struct mp_tl tl;
		cJSON *arr, *one;
		size_t exact;

		if (mp_tl_init(&tl)) {
			CHECK(0, "out of memory");
			return;
		}
		for (uint64_t i = 0; i < ns[j]; i++) {
			synth(&s, i, 1ULL << 30);
			mp_tl_push(&tl, &s);
		}
		arr = mp_tl_json(&tl, true, 1);
		one = mp_tl_sample_json(&s, true);
		exact = (size_t)ns[j] * mp_doc_values(one) + 1;
		bad += mp_doc_values(arr) > exact + MP_TL_FOLDED_MAX_VALUES ||
		       (uint64_t)cJSON_GetArraySize(arr) > MP_MIN(ns[j], 1 + MP_TL_WINDOW + MP_TL_BUCKETS);
		printf("timeline of %" PRIu64 " samples: %d rows, %zu values (every sample: %zu)\n",
		       ns[j], cJSON_GetArraySize(arr), mp_doc_values(arr), exact);
		cJSON_Delete(arr);
		cJSON_Delete(one);
		mp_tl_free(&tl);
	}
	CHECK_U64(bad, 0, "short timelines larger than their samples, or with more rows");
}

/* A record document at its largest, made by the writer (record_doc.c). */
static cJSON *edge_doc(struct rec *r)
{
	cJSON *doc, *k;
	struct sample s;

	snprintf(r->host.hostname, sizeof(r->host.hostname), "host");
	snprintf(r->host.kernel_release, sizeof(r->host.kernel_release), "6.18.0");
	r->host.cg_mode = MP_CG_V2;
	r->cg.version = 2;
	snprintf(r->cg.path, sizeof(r->cg.path), "/job");
	snprintf(r->cg.dir, sizeof(r->cg.dir), "/nonexistent/memprobe-test/job");
	snprintf(r->cg.effective_from, sizeof(r->cg.effective_from), "MemTotal");
	snprintf(r->cg.headroom_from, sizeof(r->cg.headroom_from), "MemAvailable");
	r->cg.limit_bytes = MP_UNLIMITED;
	r->o.interval_ms = 1;
	r->o.top = 10;
	r->end_reason = "duration";
	synth(&s, SAMPLES - 1, 1ULL << 62);
	r->peak = r->last = s;
	r->have_last = true;
	r->ooms = calloc(MP_REC_OOMS, sizeof(*r->ooms));
	if (!r->ooms)
		return NULL;
	for (size_t i = 0; i < MP_REC_OOMS; i++) {
		r->ooms[i].t_ms = UINT64_MAX / 2 + i;
		r->ooms[i].ev.pid = 4194304;
		r->ooms[i].ev.usage_bytes = UINT64_MAX;
		memset(r->ooms[i].ev.comm, 'c', sizeof(r->ooms[i].ev.comm) - 1);
		r->ooms[i].at = s;
	}
	r->ooms_seen = 1000000;
	r->nooms = MP_REC_OOMS;
	doc = mp_rec_build_report(r, NULL);
	if (!doc)
		return NULL;
	mp_rec_add_timeline(r, doc);
	/* with BPF's growth, as a memcg hook gives it */
	cJSON_ReplaceItemInObject(doc, "timeline", mp_tl_json(&r->tl, true, 1));
	cJSON_ArrayForEach(k, cJSON_GetObjectItem(doc, "oom_kills"))
		cJSON_ReplaceItemInObject(k, "sample", mp_tl_sample_json(&s, true));
	return doc;
}

/* The edge document: bounded, loads, renders alike loaded and in place. */
static void check_edge(cJSON *doc)
{
	char err[600], *text, *a = NULL, *b = NULL;
	size_t len, values = mp_doc_values(doc), alen, blen;
	int kind = 0, nr = 0, same = 0;
	cJSON *back;

	text = cJSON_Print(doc);
	CHECK(text != NULL, "out of memory printing the edge document");
	if (!text)
		return;
	len = strlen(text) + 1;
	printf("edge: the record document of 27 M samples: %zu bytes, %zu values "
	       "(timeline bound %d); RSS %" PRIu64 " KiB so far\n", len, values,
	       MP_TL_MAX_VALUES, rss_kib());
	CHECK_LE_INT(len, 16 * MP_MIB, "the document: %zu bytes, want at most 16 MiB", len);
	CHECK_U64(mp_doc_text_values(text, strlen(text)), values, "values: the text's, the tree's");
	CHECK_LE_INT(values, MP_DOC_MAX_VALUES, "values %zu within the loader's bound", values);
	back = mp_doc_load(text, strlen(text), &kind, err, sizeof(err));
	CHECK(back && kind == MP_DOC_RECORD, "the edge document loads: %s", back ? "" : err);
	CHECK_EQ_INT(mp_doc_adopt(doc, &kind, err, sizeof(err)), 0, "and adopts: %s", err);
	for (size_t i = 0; back && mp_renderer_nth(i); i++) {
		const struct mp_renderer *r = mp_renderer_nth(i);
		int ra, rb;

		if (!(r->kinds & MP_DOC_RECORD))
			continue;
		nr++;
		ra = mp_render_mem(r, back, kind, &a, &alen, err, sizeof(err));
		CHECK_EQ_INT(ra, 0, "the edge document renders as %s: %s", r->name, err);
		rb = mp_render_mem(r, doc, kind, &b, &blen, err, sizeof(err));
		same += !ra && !rb && alen == blen && !memcmp(a, b, alen);
		free(a);
		free(b);
	}
	CHECK_GE_INT(nr, 6, "renderers of a record: %d", nr);
	CHECK_EQ_INT(same, nr, "rendered in place equals rendered loaded: %d of %d renderers", same,
		     nr);
	cJSON_Delete(back);
	cJSON_free(text);
}

int main(void)
{
	struct rec *r = calloc(1, sizeof(*r));
	uint64_t big = 1ULL << 62, n = SAMPLES;
	struct sample s;
	cJSON *doc;

	if (!r || mp_tl_init(&r->tl))
		return printf("timeline: out of memory\n"), 1;
	for (uint64_t i = 0; i < n; i++) {
		synth(&s, i, big);
		mp_tl_push(&r->tl, &s);
	}
	check_small();
	printf("timeline: %" PRIu64 " samples in %zu folded rows of %" PRIu64 " and %zu at full "
	       "resolution; RSS %" PRIu64 " KiB\n", n, r->tl.nb, r->tl.width, r->tl.nring, rss_kib());
	CHECK_U64(r->tl.taken, n, "every sample counted");
	check_rows(&r->tl, n, big);
	doc = edge_doc(r);
	CHECK(doc != NULL, "the writer made the edge document");
	if (doc)
		check_edge(doc);
	cJSON_Delete(doc);
	mp_tl_free(&r->tl);
	free(r->ooms);
	free(r);
	return unit_done("timeline");
}
