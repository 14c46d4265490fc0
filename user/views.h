/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Views: the tables a report shows, built once from a loaded document,
 * with the rules about which rows show in one place (a row with no growth
 * and nothing left after is skipped; the top MP_VIEW_TOP_TASKS tasks of a
 * category; a share within ±0.05% prints as 0). The renderers (text,
 * markdown, html) lay a view out; they do not walk the document for it.
 * Fields are read through struct mp_rd: a damaged document stops the
 * build with rd's error, as a renderer's own read would.
 */
#ifndef MEMPROBE_VIEWS_H
#define MEMPROBE_VIEWS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "doc.h"

#define MP_VIEW_TOP_TASKS 3
/* What the categories' top-tasks cell says of kernel_other's reserve,
 * before the bytes: text, markdown and html alike. */
#define MP_VIEW_RESERVE "charged, in no object (objcg reserve): "

/* A size in the renderer's own words: mp_fmt_sbytes (text), mp_render_size
 * (markdown, html: --bytes). */
typedef const char *(*mp_view_size_fn)(int64_t v, char *buf, size_t len);

/* One category row of "Where the cgroup's growth went". */
struct mp_view_cat {
	const cJSON *obj;          /* the category object (for what one renderer adds) */
	const char *name;
	char growth[88];           /* mp_render_cat_growth's cell: "~1.5 MiB ±4.0 KiB", "n/a" */
	char note[128];            /* what the top-tasks cell says first, or "" */
	char left[32];             /* mp_render_cat_left's: "" without retained_bytes */
	int64_t reserve;           /* kernel_other's objcg_reserve_bytes (charged on v1
				    * kmem, in no object), 0 when absent */
	int ntasks;                /* at most MP_VIEW_TOP_TASKS */
	struct {
		const cJSON *obj;  /* the task (the renderer says who it is) */
		int64_t bytes;
	} tasks[MP_VIEW_TOP_TASKS];
};

/* The categories table of an attribution object and its reconciliation. */
struct mp_view_cats {
	struct mp_view_cat *rows;  /* the rows shown, in the document's order */
	int n;
	int64_t measured, attributed, unattributed;
	const char *span, *attributed_as;
	bool has_unmapped;         /* anon_unmapped_bytes given (not null) */
	int64_t unmapped;
	/* the anon unmapped row shows from 1 MiB either way: a TLB batch in
	 * flight is a few pages */
	bool unmapped_shown;
	/* the unattributed share of the growth in percent, 0 within ±0.05;
	 * shown only from 1 MiB of growth (share_shown): a share of a growth
	 * near zero (a --reclaim-cache probe's, whose cache went as the probe
	 * came) is no measure, 224 KiB of 40 KiB read as "560.0%" */
	double unattributed_pct;
	bool share_shown;
};

/* Build v from attribution object a, sizes in size's words. 0, or -1 with
 * rd's error said (v then empty); free with mp_view_cats_free. */
int mp_view_cats(const cJSON *a, struct mp_rd *rd, mp_view_size_fn size, struct mp_view_cats *v);
void mp_view_cats_free(struct mp_view_cats *v);

/* The end of an overhead table, whatever its first rows (parts or groups):
 * what the kernel reclaimed of the workload's to make room (0 or below, in
 * the sum), the probe's own kernel parts, their sum, the unexplained rest
 * and the total. */
struct mp_view_part {
	const char *category;
	int64_t bytes;
};
struct mp_view_overhead_tail {
	struct mp_view_part *reclaimed, *probe;
	int nreclaimed, nprobe;
	int64_t probe_kernel, unexplained, total;
};
/* 0, or -1 with rd's error said; free with mp_view_overhead_tail_free. */
int mp_view_overhead_tail(const cJSON *o, struct mp_rd *rd, struct mp_view_overhead_tail *t);
void mp_view_overhead_tail_free(struct mp_view_overhead_tail *t);

/* The overhead table's first rows: its groups (a process, or processes of
 * one name and role, with their categories), or an older document's parts
 * (one category each). Every renderer lists the same rows: html listed the
 * parts where text and markdown listed the groups. */
struct mp_view_overhead_row {
	const cJSON *obj;          /* the group or part (a part's renderer says who) */
	char name[112];            /* a group's: "postgres ×32 (backends)"; "" for a part */
	struct mp_view_part *cats; /* a group's categories, a part's one */
	int ncats;
	int64_t cow;               /* a group's anon copied on write, 0 if none */
	int64_t bytes;
};
struct mp_view_overhead_rows {
	struct mp_view_overhead_row *rows;
	int n;
	bool groups;               /* rows are groups (else parts) */
};
/* 0, or -1 with rd's error said; free with mp_view_overhead_rows_free. */
int mp_view_overhead_rows(const cJSON *o, struct mp_rd *rd, struct mp_view_overhead_rows *v);
void mp_view_overhead_rows_free(struct mp_view_overhead_rows *v);

/* What a cgroup (or the pinned object) holds that no process maps, and
 * its huge pages, at one moment: the rows text and markdown print. */
struct mp_view_moment {
	bool unmapped;             /* both unmapped figures given (not null) */
	uint64_t shmem_unmapped, file_unmapped;
	int nhuge;                 /* the huge page kinds given, in order */
	struct {
		const char *kind;  /* "anon", "file", "shmem" */
		uint64_t bytes;
	} huge[3];
};
void mp_view_moment(const cJSON *o, struct mp_rd *rd, struct mp_view_moment *m);

/* The soft headroom's words, after its figure: "HARD and 1.0 GiB of
 * reclaimable page cache", or, where MemAvailable sets the headroom (it
 * counts that cache already, and the soft headroom adds none), HARD alone
 * and why. HARD is the renderer's name for the hard headroom. */
const char *mp_view_soft_words(const cJSON *cg, struct mp_rd *rd, mp_view_size_fn size,
			       const char *hard, uint64_t rec, char *buf, size_t len);

/* A percentage as the tables print it: within ±0.05 (which "%.1f" would
 * print as "-0.0" or "0.0") it is 0. */
double mp_view_pct(double pct);

/* ---- tables: views_table.c ----------------------------------------------
 * A table as cells of spans, built once from a view, for markdown and html
 * to lay out alike (one writer each): the columns, which rows show, in what
 * order, with which words and sizes are decided here. Text lays its own
 * columns out from the views themselves. */

enum mp_view_span_kind {
	MP_SPAN_TEXT,  /* memprobe's own words and figures: as they are in both */
	MP_SPAN_DOC,   /* words read from the document, not a name (a hook, a
			* note): markdown as is, html escaped */
	MP_SPAN_NAME,  /* a name from the document (category, path, concern, group):
			* markdown's code span, html's text */
	MP_SPAN_FRAME, /* a stack frame, code in both; a caller (not the innermost)
			* goes on a new line in html, after " ← " in markdown */
	MP_SPAN_WHO,   /* a task object: the renderer says who */
};
struct mp_view_span {
	enum mp_view_span_kind kind;
	bool caller;           /* MP_SPAN_FRAME: not the cell's first frame */
	const char *s;         /* TEXT, NAME, FRAME; NULL reads as "" */
	const cJSON *obj;      /* WHO */
};
/* Spans [first, first + n) of the table's; n == 0 is a blank cell (markdown
 * "| |", html "<td></td>"). strong: a total's label or figure (markdown
 * bold, html <th>). */
struct mp_view_cell {
	int first, n;
	bool strong;
};
struct mp_view_table {
	const char *cls;           /* html's class of the table */
	int ncols;
	const char *head[4];       /* the columns' names */
	unsigned numeric;          /* bit c: column c holds figures (right-aligned) */
	struct mp_view_cell *cells; /* row r's at r * ncols */
	int ncells;
	struct mp_view_span *spans;
	int nspans;
	char **strs;               /* the words the table formatted, freed with it */
	int nstrs;
	int cap_cells, cap_spans, cap_strs;
	bool oom;
};
static inline int mp_view_table_rows(const struct mp_view_table *t)
{
	return t->ncols ? t->ncells / t->ncols : 0;
}
void mp_view_table_free(struct mp_view_table *t);

/* What a renderer writes a span, a table with. */
typedef void (*mp_view_span_fn)(const struct mp_view_span *s, FILE *f, struct mp_rd *rd);
typedef void (*mp_view_table_fn)(const struct mp_view_table *t, FILE *f, struct mp_rd *rd);
/* Cell c's spans, each by span. */
void mp_view_cell_spans(const struct mp_view_table *t, const struct mp_view_cell *c,
			mp_view_span_fn span, FILE *f, struct mp_rd *rd);
/* A table a view built (built: its builder's 0; else nothing), laid out by
 * lay and freed. */
void mp_view_lay(int built, struct mp_view_table *t, mp_view_table_fn lay, FILE *f,
		 struct mp_rd *rd);

/* The categories (mp_view_cats, sizes in size's words) as a table: a row a
 * category shown, its top-tasks cell, and the foot (attributed, anon
 * unmapped, unattributed). 0, or -1 with rd's error said. */
int mp_view_cats_table(const struct mp_view_cats *v, mp_view_size_fn size, struct mp_rd *rd,
		       struct mp_view_table *t);

/* An overhead object's table: its rows (groups or parts), what the kernel
 * reclaimed, the probe's own cost, unexplained, and the total named total. */
int mp_view_overhead_table(const cJSON *o, const char *total, mp_view_size_fn size,
			   struct mp_rd *rd, struct mp_view_table *t);

/* The kernel paths: a path's net and allocated bytes, and the first frames
 * of its top stack (innermost first), at most MP_VIEW_FRAMES. */
#define MP_VIEW_FRAMES 8
struct mp_view_path {
	const char *path;
	int64_t bytes;             /* net of frees */
	uint64_t alloc;
	const cJSON *stack;        /* the top stack, or NULL */
	int nframes;
	const char *frames[MP_VIEW_FRAMES];
};
struct mp_view_paths {
	struct mp_view_path *rows;
	int n;
};
int mp_view_paths(const cJSON *a, struct mp_rd *rd, struct mp_view_paths *v);
void mp_view_paths_free(struct mp_view_paths *v);
int mp_view_paths_table(const struct mp_view_paths *v, mp_view_size_fn size, struct mp_rd *rd,
			struct mp_view_table *t);

/* The hooks: each concern's hook ("none" where null) and what is missing,
 * and attribution_missing's messages. Without a BPF session (no "hooks"),
 * no rows, the messages say why. */
struct mp_view_hook {
	const char *concern, *name, *hook, *missing; /* missing: NULL if absent */
};
struct mp_view_hooks {
	struct mp_view_hook *rows;
	int n;
	const char **missing;      /* attribution_missing's messages */
	int nmissing;
};
int mp_view_hooks(const cJSON *a, struct mp_rd *rd, struct mp_view_hooks *v);
void mp_view_hooks_free(struct mp_view_hooks *v);
int mp_view_hooks_table(const struct mp_view_hooks *v, struct mp_rd *rd, struct mp_view_table *t);

#endif
