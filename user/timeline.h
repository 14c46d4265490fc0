/* SPDX-License-Identifier: GPL-2.0 */
/*
 * record's timeline, bounded whatever the duration and interval: the first
 * sample (the baseline), the last MP_TL_WINDOW samples at full resolution,
 * and everything between folded into at most MP_TL_BUCKETS rows, each the
 * min, max, mean and last of its samples' usage, faults per second and
 * categories. When the folded rows fill, neighbours merge pairwise and
 * every folded row stands for twice as many samples: 31 days at 1 ms (27 M
 * samples) end with the same number of rows as an hour does. The peak's
 * sample and each OOM kill's are kept apart, exact (struct rec).
 *
 * Its document (mp_tl_json, mp_tl_folding_json) is described in
 * docs/report-format.md; MP_TL_MAX_VALUES bounds what it adds to one, and
 * doc.h's MP_DOC_MAX_VALUES, the loader's bound, is checked against it.
 */
#ifndef MEMPROBE_TIMELINE_H
#define MEMPROBE_TIMELINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

struct sample {
	uint64_t t_ms;
	uint64_t usage_bytes;
	uint64_t limit_bytes;               /* the effective limit in force (0: not read) */
	uint64_t faults_per_sec;
	struct mp_cg_stat stat;             /* from the kernel's files */
	int64_t bpf_growth[MP_NR_CATS];     /* BPF: net bytes since the start */
	int64_t objcg_reserve_bytes;        /* BPF: kernel memory charged that no
					     * object holds (mp_attr_objcg_reserve) */
	bool have_objcg_reserve;
};

/* The samples at full resolution (the recent window), and the most folded
 * rows: between MP_TL_BUCKETS / 2 and MP_TL_BUCKETS once they fill. A
 * folded row holds MP_TL_FIRST_WIDTH samples at first, doubling at each
 * merge: with its min, max and mean it is about four samples' size, so a
 * row of fewer would make the document larger than the samples it folds. */
#define MP_TL_WINDOW 2048
#define MP_TL_BUCKETS 1024
#define MP_TL_FIRST_WIDTH 4

/* One series of a folded row. */
struct mp_tl_agg {
	int64_t min, max, last;
	__int128 sum;
	uint64_t n;             /* samples that had it (a category the kernel's
				 * files lack in a sample is not counted) */
};

struct mp_tl_bucket {
	uint64_t from_ms, t_ms; /* its first and last sample's */
	uint64_t limit_bytes;   /* its last sample's effective limit */
	uint64_t n;             /* samples folded into it */
	struct mp_tl_agg usage, faults, stat[MP_NR_CATS], bpf[MP_NR_CATS];
};

struct mp_tl {
	struct sample first;    /* the baseline, exact */
	struct sample *ring;    /* the recent window: ring[(head + i) % MP_TL_WINDOW] */
	size_t head, nring;
	struct mp_tl_bucket *b; /* folded rows, oldest first */
	size_t nb;
	uint64_t width;         /* samples per folded row (the last may hold fewer) */
	uint64_t taken;         /* samples pushed */
	uint64_t dropped;       /* not kept: the storage could not be allocated */
};

/* Storage for the bounds above, taken up front (untouched pages cost no
 * RSS until samples fill them). 0, or -ENOMEM: samples are then counted
 * in dropped and not kept. */
int mp_tl_init(struct mp_tl *tl);
void mp_tl_free(struct mp_tl *tl);
/* Add the next sample (t_ms not before the last one's). O(1), but for a
 * pairwise merge of MP_TL_BUCKETS rows every time the window has
 * overflowed by as many folded rows. */
void mp_tl_push(struct mp_tl *tl, const struct sample *s);
/* The k-th newest sample at full resolution (0: the last), NULL beyond the
 * window (the first sample counts while nothing else is kept). */
const struct sample *mp_tl_recent(const struct mp_tl *tl, size_t k);
/* The first sample, NULL before one. */
const struct sample *mp_tl_first(const struct mp_tl *tl);

/*
 * The timeline array: the first sample, the folded rows, the window, in
 * time order; a folded row is a sample (its last one's t_ms and figures)
 * with from_ms, samples, resolution_ms and min, max and mean objects (each
 * usage_bytes, faults_per_sec, and per category its figure: stat where its
 * samples had one, else bpf_growth). bpf: the samples carry BPF's growth.
 */
cJSON *mp_tl_json(const struct mp_tl *tl, bool bpf, uint64_t interval_ms);
/* How the timeline was folded (the document's timeline_folding). */
cJSON *mp_tl_folding_json(const struct mp_tl *tl, uint64_t interval_ms);
/* A sample as the timeline and the document's other samples hold it. */
cJSON *mp_tl_sample_json(const struct sample *s, bool bpf);

/*
 * The most values (as the loader counts them: every item, and every empty
 * object or array once more) the timeline and its folding object add to a
 * document: each of its rows at its largest, every category in stat and in
 * bpf_growth.
 */
#define MP_TL_SAMPLE_MAX_VALUES (6 + 2 * (1 + MP_NR_CATS)) /* the limit, stat's file_mapped */
#define MP_TL_FOLDED_MAX_VALUES (MP_TL_SAMPLE_MAX_VALUES + 3 + 3 * (4 + 2 * MP_NR_CATS))
#define MP_TL_MAX_VALUES                                                   \
	(1 + 16 + (1 + MP_TL_WINDOW) * MP_TL_SAMPLE_MAX_VALUES +            \
	 MP_TL_BUCKETS * MP_TL_FOLDED_MAX_VALUES)

#endif
