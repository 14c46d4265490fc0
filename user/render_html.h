/* SPDX-License-Identifier: GPL-2.0 */
/* --format html's rooms: the page and its charts (render_html.c), the
 * facts the text report also says (render_html_facts.c). Private to them. */
#ifndef MEMPROBE_RENDER_HTML_H
#define MEMPROBE_RENDER_HTML_H

#include "render.h"
#include "views.h"

#include <stdint.h>
#include <stdio.h>

#define MP_HTML_W 720 /* the charts' viewBox width */

/* Text into HTML, element content or a quoted attribute. */
void mp_html_esc(FILE *f, const char *s);
/* A category's colour, the same in every chart and legend. */
const char *mp_html_colour(const char *cat);
/* "<code>comm[pid, host H]</code>": the host's pid beside the container's. */
void mp_html_who(FILE *f, const cJSON *tk, struct mp_rd *rd);
/* An OOM kill's victim, as mp_html_who, or MP_VIEW_OOM_NO_VICTIM. */
void mp_html_oom_who(FILE *f, const struct mp_view_oom *k, struct mp_rd *rd);

/* A view's table (views.h) in a scrolling wrap: "<div class=wrap><table
 * class=CLS>" to "</table></div>", no newline after. */
struct mp_view_table;
void mp_html_table(const struct mp_view_table *t, FILE *f, struct mp_rd *rd);

/* One row of a diverging bar chart: zero in the middle, a negative bar
 * drawn to its left, a positive one to its right. */
struct mp_html_bar {
	const char *label; /* text, escaped when written */
	int64_t bytes;
	const char *fill;
	const char *category; /* data-category, NULL: none */
};

/* The chart as <svg class="chart CLS">, each row a <g class="ROW">
 * (".negative" when below 0) with data-bytes. */
void mp_html_bars(FILE *f, const char *cls, const char *row, const char *aria,
		  const struct mp_html_bar *bars, int n);

/* The summary's rows the text report has beside the nine fields:
 * headroom hard and soft, margin, aim, stop reason, page cache. */
void mp_html_probe_facts(const cJSON *r, FILE *f, struct mp_rd *rd);
/* The page faults row (attribution.page_faults; none without BPF). */
void mp_html_faults_row(const cJSON *a, FILE *f, struct mp_rd *rd);
/* Pinned memory and shmem: the object, its shared segments, tasks, drivers. */
void mp_html_pinned(const cJSON *p, FILE *f, struct mp_rd *rd);
/* Events lost and what they can have changed. */
void mp_html_lost(const cJSON *a, FILE *f, struct mp_rd *rd);
/* Kernel pages the cgroup was not charged for (the host pays). */
void mp_html_not_charged(const cJSON *a, FILE *f, struct mp_rd *rd);
/* Each OOM kill's category vector (charged) and its limit then. */
void mp_html_oom_vectors(const struct mp_view_ooms *v, FILE *f, struct mp_rd *rd);

#endif
