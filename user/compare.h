/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `memprobe compare`: reports of one kind (probe or record) side by side,
 * as a document of its own (kind "compare"), and that document's
 * renderers. The model (compare.c) reads the reports through struct mp_rd
 * only; the renderers (compare_render.c) read the compare document the
 * same way, so a compare document `memprobe report` loads renders alike.
 */
#ifndef MEMPROBE_COMPARE_H
#define MEMPROBE_COMPARE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "doc.h"

/* The default --threshold: a difference beyond 10% of the first column. */
#define MP_COMPARE_THRESHOLD_PCT 10.0

/* At most this many reports: columns beyond it are unreadable anyway. */
#define MP_COMPARE_MAX 64

/*
 * The compare document of n loaded documents (mp_doc_load: kinds[i]),
 * names[i] their files, against docs[0]. NULL with err "FILE: problem;
 * fix" when one is not a probe or record report, is of another kind or
 * format_version than the first, or does not read. -ENOMEM in *oom.
 */
cJSON *mp_compare_doc(const cJSON *const *docs, const int *kinds, const char *const *names,
		      int n, double threshold_pct, const struct mp_host *h, char *err,
		      size_t errlen);

/* A loaded compare document as text, markdown or csv (format) to f,
 * reading through rd: the text, markdown and csv renderers of render.c's
 * table call it for a compare document (mp_render_mem renders one). */
void mp_compare_render(const cJSON *doc, const char *format, FILE *f, struct mp_rd *rd);

#endif
