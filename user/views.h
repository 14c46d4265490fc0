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

/* For the views' own rooms: zeroed room for arr's rows of size sz, one
 * more (an empty or absent array is no failure); NULL with rd's error
 * said (out of memory), or when rd has failed already. */
void *mp_view_rows(const cJSON *arr, size_t sz, struct mp_rd *rd);
/* What the categories' top-tasks cell says of kernel_other's reserve,
 * before the bytes: text, markdown and html alike. */
#define MP_VIEW_RESERVE "charged, in no object (objcg reserve): "

/* A size in the renderer's own words: mp_fmt_sbytes (text), mp_render_size
 * (markdown, html: --bytes). */
typedef const char *(*mp_view_size_fn)(int64_t v, char *buf, size_t len);

/* A task of a category: who (the renderer says it from obj) and its bytes;
 * pid and comm read for exports only (MP_VIEW_EXPORT). */
struct mp_view_cat_task {
	const cJSON *obj;
	int64_t bytes;
	bool has_pid;              /* pid not null: "(rest)" has none */
	uint64_t pid;
	const char *comm;
};

/* One category row of "Where the cgroup's growth went". */
struct mp_view_cat {
	const cJSON *obj;          /* the category object (for what one renderer adds) */
	const char *name;
	char growth[88];           /* mp_render_cat_growth's cell: "~1.5 MiB ±4.0 KiB", "n/a" */
	char note[128];            /* what the top-tasks cell says first, or "" */
	char left[32];             /* mp_render_cat_left's: "" without retained_bytes */
	int64_t growth_bytes;
	bool has_reserve;          /* objcg_reserve_bytes given (kernel_other on v1 kmem) */
	int64_t reserve;           /* kernel_other's objcg_reserve_bytes (charged on v1
				    * kmem, in no object), 0 when absent */
	/* the figures exports write as the document gives them (read with
	 * MP_VIEW_EXPORT only: the displays say them in words above) */
	bool available;
	const char *source;        /* NULL: absent (BPF counted it) */
	bool has_retained;
	int64_t retained;
	bool estimated, below_floor; /* true; false when absent */
	bool has_bound;            /* bound_bytes given, not null */
	int64_t bound;
	int ntasks;                /* at most MP_VIEW_TOP_TASKS; every one with
				    * MP_VIEW_EXPORT */
	struct mp_view_cat_task *tasks;
};

/* The categories table of an attribution object and its reconciliation. */
struct mp_view_cats {
	struct mp_view_cat *rows;  /* the rows shown, in the document's order */
	int n;
	bool has_measured;         /* measured_growth_bytes given (MP_VIEW_EXPORT:
				    * may be absent) */
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

/* A view's flags. EXPORT: what exports (csv, openmetrics) need rather than
 * what a display shows: every row and task kept (the displays skip a
 * category that shows nothing and keep its top tasks), the figures as the
 * document gives them, and the tables and their parts may be absent (a
 * document without BPF has an attribution of attribution_missing alone;
 * record --openmetrics's live one, of page_faults alone). */
#define MP_VIEW_EXPORT 1u

/* Build v from attribution object a, sizes in size's words (NULL: no words,
 * the cells empty: exports). 0, or -1 with rd's error said (v then empty);
 * free with mp_view_cats_free. */
int mp_view_cats(const cJSON *a, struct mp_rd *rd, mp_view_size_fn size, unsigned flags,
		 struct mp_view_cats *v);
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
	/* a group's as the document gives them, for exports */
	const char *comm, *role;
	uint64_t processes;
	bool has_pid;              /* pid not null: one process */
	uint64_t pid;
	bool has_cow;              /* copy_on_write_bytes given, not null */
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
/* The overhead object's tables, each laid by lay: at the peak ("overhead"),
 * then, where the probe left some charged once it exited, the renderer's
 * words for it (between) and "left after". */
void mp_view_lay_overhead(const cJSON *o, const char *between, mp_view_size_fn size,
			  mp_view_table_fn lay, FILE *f, struct mp_rd *rd);

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
/* A path whose kernel pages were allocated in the target's tasks without
 * __GFP_ACCOUNT: the host pays for them, the limit does not see them. */
struct mp_view_not_charged {
	const char *path;
	uint64_t alloc;
};
struct mp_view_paths {
	struct mp_view_path *rows;
	int n;
	struct mp_view_not_charged *nc;
	int nnc;
};
/* The kernel paths and the ones not charged; MP_VIEW_EXPORT: either may be
 * absent, and no stacks are read (stack NULL). 0, or -1 with rd's error said;
 * free with mp_view_paths_free. */
int mp_view_paths(const cJSON *a, struct mp_rd *rd, unsigned flags, struct mp_view_paths *v);
void mp_view_paths_free(struct mp_view_paths *v);
/* Why a document has no kernel path, for a view with none ("none recorded
 * (WHY)"): the same words in every format. */
const char *mp_view_paths_none(const cJSON *a, struct mp_rd *rd);
int mp_view_paths_table(const struct mp_view_paths *v, mp_view_size_fn size, struct mp_rd *rd,
			struct mp_view_table *t);

/* The hooks: each concern's hook ("none" where null) and what is missing,
 * and attribution_missing's messages. Without a BPF session (no "hooks"),
 * no rows, the messages say why. */
struct mp_view_hook {
	const char *concern, *name, *hook, *missing; /* missing: NULL if absent */
	/* as the document gives them, for exports: the hook (NULL: null, where
	 * hook says "none"), its kind and target (NULL: null), polled, and
	 * missing's reason (NULL if absent) */
	const char *hook_given, *kind, *target, *missing_reason;
	bool polled;
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

/* ==== pinned memory, copies on write, the timeline, OOM kills, the summary ====
 * (views_pinned.c, views_run.c) */

/* One shared segment of the pinned object, and who maps it. */
struct mp_view_segment {
	const char *name;
	uint64_t mapped, resident, mappers;
	bool has_resident;         /* resident_bytes not null */
	bool brief;                /* in the short list (text): 1 MiB or more resident,
				    * the first MP_VIEW_BRIEF_SEGMENTS of them */
	int ngroups;               /* mapper groups by name and role */
	struct mp_view_mapper {
		char name[96];     /* "postgres ×32 (backends)" */
		uint64_t processes;
	} *groups;
};
#define MP_VIEW_BRIEF_SEGMENTS 3
#define MP_VIEW_BRIEF_MAPPERS 3

/* A process holding locked or pinned memory. */
struct mp_view_pinned_task {
	const cJSON *obj;          /* the task (the renderer says who it is) */
	const char *comm, *category;
	uint64_t pid, vm_lck, vm_pin, rss_shmem;
	bool locked;               /* its locked split was measured (not null) */
	uint64_t shmem, anon, file;
};

/* A driver's kernel memory, charged and not. */
struct mp_view_driver {
	const char *driver;
	uint64_t alloc, charged, not_charged;
};

/* The pinned object: memory.stat's pinned figures, the processes' VmLck,
 * VmPin and RssShmem, the shared segments, the tasks and the drivers. */
struct mp_view_pinned {
	const cJSON *obj;
	const char *when;          /* "at the probe's stop", "at the peak", "at the end" */
	bool has_unevictable, has_shmem; /* memory.stat had them (not null) */
	uint64_t unevictable, shmem, vm_lck, vm_pin, processes;
	bool has_rss_max;          /* rss_shmem_max_bytes given: the largest process's */
	bool has_rss_sum;          /* an older document's sum over the processes */
	uint64_t rss_shmem_max, rss_shmem;
	bool has_segments;         /* shared_segments given (older documents: not) */
	struct mp_view_segment *segs;
	int nsegs, nbrief;         /* nbrief: the segments in the short list */
	uint64_t segments_total;   /* all the target's, listed or not */
	uint64_t brief_rest;       /* resident bytes of the listed ones left out of
				    * the short list */
	struct mp_view_pinned_task *tasks;
	int ntasks;
	bool has_drivers;          /* null: no kernel stacks to find them in */
	struct mp_view_driver *drivers;
	int ndrivers;
};
/* 0, or -1 with rd's error said; free with mp_view_pinned_free. */
int mp_view_pinned(const cJSON *p, struct mp_rd *rd, struct mp_view_pinned *v);
void mp_view_pinned_free(struct mp_view_pinned *v);

/* Pages copied on write after a fork (attribution.copy_on_write). */
struct mp_view_cow {
	bool present;              /* documents before it have none */
	const char *why;           /* not looked for: why (source null); else NULL */
	const char *source, *span;
	uint64_t bytes, period;    /* period: 1, every copy counted */
	struct mp_view_cow_task {
		const cJSON *obj;
		const char *comm;
		uint64_t pid, bytes;
	} *tasks;                  /* every process, most first */
	int ntasks, nshown;        /* nshown: the ones a sentence names */
};
#define MP_VIEW_COW_SHOWN 3
/* 0, or -1 with rd's error said; free with mp_view_cow_free. */
int mp_view_cow(const cJSON *a, struct mp_rd *rd, struct mp_view_cow *v);
void mp_view_cow_free(struct mp_view_cow *v);

/* The copy-on-write sentence, as text and markdown say it: who paid for a
 * fork's shared pages (nothing where the document has no such object, why
 * where none was looked for), in the renderer's words for sizes, the
 * function's name (quote around it) and the processes it names (who). */
struct mp_view_cow_words {
	mp_view_size_fn size;
	const char *quote;         /* "`" in markdown */
	const char *end;           /* after the sentence */
	void (*who)(FILE *f, const struct mp_view_cow_task *t, struct mp_rd *rd);
};
void mp_view_cow_say(const cJSON *a, const struct mp_view_cow_words *w, FILE *f,
		     struct mp_rd *rd);

/* What stopped a probe short, if anything (a probe document). */
struct mp_view_verdicts {
	const char *note;          /* NULL: none */
	bool interrupted, killed, oom_killed;
	uint64_t signal;           /* killed: by it */
	const char *oom_limit;     /* oom_killed: "probe cgroup" or the target's */
};
void mp_view_verdicts(const cJSON *r, struct mp_rd *rd, struct mp_view_verdicts *v);

/* Why --threads N filled no N times faster (a probe's probe object): how
 * many CPUs the fill threads ran on average, their time on a CPU and
 * waiting for one, and the reason with its fix: fewer CPUs allowed than
 * threads, CPUs busy elsewhere, or (little waiting) the kernel's
 * page-fault path. Not shown for one thread, or where the document has
 * no fill_cpu_ns (older documents) or says null. */
struct mp_view_fill {
	bool shown;
	char line[400];            /* "2 threads ran 1.1 CPUs on average (...): why; fix" */
};
void mp_view_fill(const cJSON *p, struct mp_rd *rd, struct mp_view_fill *v);

/* What the renderers say of a kill whose victim is not known, and why. */
#define MP_VIEW_OOM_NO_VICTIM_WHY "polled oom_kill counter"
#define MP_VIEW_OOM_NO_VICTIM "victim not known (" MP_VIEW_OOM_NO_VICTIM_WHY ")"

/*
 * An oom_kills entry's victim: true with *pid and *comm set, false when
 * it is not known: pid null, or 0 (documents before null said so, comm
 * "(not named)"): the cgroup's oom_kill counter names no victim.
 */
bool mp_view_oom_victim(const cJSON *kill, struct mp_rd *rd, uint64_t *pid, const char **comm);

/* One OOM kill of a recording. */
struct mp_view_oom {
	const cJSON *obj;          /* the kill (mp_render_oom_line, the vector) */
	bool victim_known;         /* else pid 0, comm NULL: MP_VIEW_OOM_NO_VICTIM */
	const char *comm;
	uint64_t t_ms, pid;
	uint64_t usage;            /* the hook's at the kill, else the last sample's */
	bool at_kill;
	bool has_limit;            /* the limit then (older documents: none) */
	uint64_t limit;
};
struct mp_view_ooms {
	struct mp_view_oom *rows;
	int n;
	uint64_t not_listed;       /* kills between the first and the last half listed */
};
/* 0, or -1 with rd's error said; free with mp_view_ooms_free. */
int mp_view_ooms(const cJSON *doc, struct mp_rd *rd, struct mp_view_ooms *v);
void mp_view_ooms_free(struct mp_view_ooms *v);

/* One timeline row: a sample, or a folded row of many (its figures its
 * last sample's, its usage's min and max beside them). */
struct mp_view_tl_row {
	const cJSON *obj;          /* the row (mp_view_tl_cat) */
	uint64_t t_ms, usage, faults_per_sec;
	bool has_limit;            /* the limit in force (older documents: none) */
	uint64_t limit;
	uint64_t resolution_ms, samples;
	uint64_t usage_min, usage_max; /* a sample's: its usage */
	bool folded;               /* max given: many samples */
	bool due;                  /* in the short table: about MP_VIEW_TL_ROWS, evenly in time */
	int64_t anon, file, kernel; /* mp_view_tl_cat's; one of them must have it */
};
#define MP_VIEW_TL_ROWS 20
struct mp_view_timeline {
	struct mp_view_tl_row *rows;
	int n, ndue;
	uint64_t samples;          /* over all rows */
	int folded;                /* rows of more than one sample */
	bool limit_column;         /* the document says the limit in force (doc.limit) */
};
/* 0, or -1 with rd's error said; free with mp_view_timeline_free. */
int mp_view_timeline(const cJSON *doc, struct mp_rd *rd, struct mp_view_timeline *v);
void mp_view_timeline_free(struct mp_view_timeline *v);
/* A row's figure for category cat: the kernel's (stat) where the row has
 * it, else BPF's growth; false (*v 0) where neither has it. */
bool mp_view_tl_cat(const cJSON *row, const char *cat, struct mp_rd *rd, int64_t *v);

/* The facts a summary says of the cgroup: its limit, throttling point and
 * memory.high, and of a recording its end and its peak. */
struct mp_view_limits {
	uint64_t limit;            /* effective_limit_bytes */
	const char *limit_from;
	bool has_throttle;
	uint64_t throttle;
	const char *throttle_kind; /* NULL: not said */
	const char *throttle_from; /* NULL: not said */
	bool has_high, high_null;  /* high_bytes given; null: "max" */
	uint64_t high;
};
void mp_view_limits(const cJSON *cg, struct mp_rd *rd, struct mp_view_limits *v);

struct mp_view_run {
	const char *ended_by;
	uint64_t duration_ms;
	bool has_exit, has_signal;
	uint64_t exit_status, signal;
	bool has_peak;             /* a sample was taken */
	uint64_t peak, peak_t_ms;
	const char *peak_source;
	uint64_t late, missed, longest_gap_ms; /* samples the sampler was late for */
	int ooms;                  /* the OOM kills listed */
};
void mp_view_run(const cJSON *doc, struct mp_rd *rd, struct mp_view_run *v);

/* The probe's nine fields as a summary's rows (a probe document, or
 * record's probe object): label, the size as markdown and html write it
 * (mp_render_size: --bytes) and what follows it; strong: the overhead,
 * the row the eye looks for. */
#define MP_VIEW_NINE_ROWS 5
struct mp_view_nine {
	struct {
		const char *label;
		char value[40];
		char extra[48];
		bool strong;
	} rows[MP_VIEW_NINE_ROWS];
};
void mp_view_nine(const cJSON *r, struct mp_rd *rd, struct mp_view_nine *v);

#endif
