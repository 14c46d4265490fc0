/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Renderers: a document in, a stream out. Every output memprobe prints is
 * rendered from a document as `memprobe report` loads it (mp_doc_load), so
 * a saved report renders byte for byte as the live one did.
 *
 * A renderer is one file (render_text.c, render_json.c, render_env.c,
 * render_markdown.c, render_csv.c, render_folded.c, render_html.c) that
 * defines a struct mp_renderer, its extern below, and one line in
 * render.c's table: --format of every command, its --help, the messages,
 * the completion and `memprobe report` all follow from the table.
 */
#ifndef MEMPROBE_RENDER_H
#define MEMPROBE_RENDER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "doc.h"
#include "out.h" /* struct mp_out: mp_emit_save commits it */
#include "util.h"

struct mp_renderer {
	const char *name;   /* what --format names it */
	const char *about;  /* --help's words after the name, "(Prometheus)"; or NULL */
	int kinds;          /* the kinds of document it takes (MP_DOC_*) */
	/*
	 * Write doc (loaded by mp_doc_load: numbers are raw items) of kind to
	 * f. Fields are read through struct mp_rd, whose err says what was not
	 * as it should be; the output is then thrown away.
	 */
	void (*render)(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd);
};

extern const struct mp_renderer mp_renderer_text;
extern const struct mp_renderer mp_renderer_json;
extern const struct mp_renderer mp_renderer_env;
extern const struct mp_renderer mp_renderer_openmetrics;

/* record --openmetrics: doc rendered as --format openmetrics (made what
 * the loader makes of it first, in place, as mp_emit does) into path,
 * atomically (a temporary file beside it, renamed over it). Returns 0, or
 * -errno with err said. */
int mp_openmetrics_write(cJSON *doc, const char *path, char *err, size_t errlen);
extern const struct mp_renderer mp_renderer_markdown;
extern const struct mp_renderer mp_renderer_csv;
extern const struct mp_renderer mp_renderer_folded;
extern const struct mp_renderer mp_renderer_html;

/*
 * What some renderers take besides the document: --bytes (markdown, html:
 * exact byte counts instead of 1.5 MiB) and --table (csv: which table).
 * Set by the CLI layer before anything renders; zero: the defaults.
 */
struct mp_render_opts {
	bool bytes;
	const char *table; /* NULL: "categories" */
};
extern struct mp_render_opts mp_render_opts;

/* csv's --table names for documents of kinds, "categories, tasks, ... or
 * timeline"; and the check: 0, or one line naming them and MP_EXIT_USAGE
 * (kinds: the document's; table NULL: only that format is csv). */
void mp_csv_table_names(int kinds, char *buf, size_t len);
int mp_csv_table_check(const char *cmd, int kinds, const char *format, const char *table);

/* "text, json, markdown, csv, folded or html": the renderers taking kinds. */
void mp_render_names(int kinds, char *buf, size_t len);

/* --format's help for documents of kind: "text, json, folded (kernel
 * stacks for flame graphs) or html (one page with charts)"; kind NULL:
 * every format and the kinds it takes ("env (shell assignments) for
 * limits and budget; ..."). The option tables' help says {KIND} for it
 * (mp_cli_help). */
void mp_render_help(const char *kind, char *buf, size_t len);

/* A size for markdown and html: human-readable ("1.5 MiB"), or with --bytes
 * the exact byte count; signed (size) and unsigned (usize). Returns buf. */
const char *mp_render_size(int64_t v, char *buf, size_t len);
const char *mp_render_usize(uint64_t v, char *buf, size_t len);

/*
 * A category's growth as a table prints it (docs/report-format.md): "~"
 * before a figure that is not the kernel's count to the byte (estimated),
 * "n/a" for a count below what the kernel allows (below_floor: events were
 * lost, no figure); an estimate with a bound says it there ("~1.5 MiB
 * ±4.0 KiB"). note: what the top-tasks cell says first ("(error unknown) ", "(counted -10.4 MiB, below the -2.0 MiB the kernel
 * allows: events lost) "), "" for an exact figure. size formats the bytes
 * (mp_fmt_sbytes, mp_render_size). A document from before these members
 * reads as exact.
 */
void mp_render_cat_growth(struct mp_rd *rd, const cJSON *cat,
			  const char *(*size)(int64_t, char *, size_t),
			  char *cell, size_t clen, char *note, size_t nlen);

/* Its left-after cell: "" without retained_bytes, "n/a" for a count below
 * what the kernel allows (retained_below_floor), else the bytes. */
const char *mp_render_cat_left(struct mp_rd *rd, const cJSON *cat,
			       const char *(*size)(int64_t, char *, size_t), char *buf, size_t len);
/* A time span for people: "100 ms", "8.2 s", "12.5 min", "3.0 h", "2.1 d". */
const char *mp_render_ms(uint64_t ms, char *buf, size_t len);
/* A record timeline row's resolution in ms: a folded row's resolution_ms
 * (*samples its samples), else the run's interval (*samples 1). */
uint64_t mp_render_row_ms(struct mp_rd *rd, const cJSON *doc, const cJSON *row,
			  uint64_t *samples);

/* The text and markdown timelines: about rows rows over [0, end_ms], evenly
 * in time (folded rows stand for many samples, the recent ones for one):
 * is the row at t_ms the next to show? *next_ms starts at 0. */
bool mp_render_row_due(uint64_t *next_ms, uint64_t end_ms, int rows, uint64_t t_ms);

/* An oom_kills entry's usage: the one the hook read at the kill
 * (usage_bytes), or where a document has none (null, or older than it)
 * its sample's; *at_kill says which. */
uint64_t mp_render_oom_usage(struct mp_rd *rd, const cJSON *kill, bool *at_kill);

/* The table's i-th renderer, NULL past its end (the fuzz target renders a
 * document with each). */
const struct mp_renderer *mp_renderer_nth(size_t i);

/* MEMPROBE_DOC_COPY (below): write doc (of kind) there too, as --format json
 * prints it. */
void mp_doc_copy(const char *cmd, int kind, const cJSON *doc);

/* The renderer --format name names, or NULL. */
const struct mp_renderer *mp_renderer_find(const char *name);

/*
 * At option time: 0 when a renderer of that name takes documents of kind
 * ("limits", "features", "probe", "record"; NULL: any kind), else one line
 * "memprobe CMD: --format X: unknown; use text, json, ..." (the table's
 * names that take kind) and MP_EXIT_USAGE.
 */
int mp_render_check(const char *cmd, const char *kind, const char *format);

/*
 * Render doc in format to f: the document is made what `memprobe report`
 * makes of its printed text (mp_doc_adopt: the same items, the same
 * checks) and rendered from that, so live output and `memprobe report` of
 * the saved JSON are the same bytes, with the document held once. doc is
 * freed here once rendered. Returns 0, or MP_EXIT_RUNTIME with a line on
 * stderr (naming path, the -o argument: NULL or "-" is standard output).
 * The caller commits its mp_out.
 * With MEMPROBE_DOC_COPY=PATH in the environment the JSON document is also
 * written to PATH (to a new KIND-PID-N.json in it when PATH is a directory):
 * the tests read the document of a run that printed text.
 */
int mp_emit(const char *cmd, cJSON *doc, const char *format, FILE *f, const char *path);

/*
 * mp_emit for a measurement (probe, record), into out (opened on -o
 * out_arg; NULL or "-": standard output) and committed there: nothing
 * measured is lost to what comes after. When the document does not
 * render, or the report cannot be written (a full disk, /dev/full, a
 * closed pipe), the JSON document is saved whole, as --format json prints
 * it, as a new file: beside the report's (PATH.json, or PATH.PID.json
 * where that is taken), else in the working directory, else in $TMPDIR or
 * /tmp (memprobe-CMD.json, or memprobe-CMD.PID.json); one line on stderr
 * says what failed and where the document is. Stop signals wait until the
 * write is done (a pipe's write is not cut short). Frees doc. Returns 0,
 * or MP_EXIT_RUNTIME (out is then aborted).
 */
int mp_emit_save(const char *cmd, cJSON *doc, const char *format, struct mp_out *out,
		 const char *out_arg);

/*
 * Render a loaded document into memory (*out, *len; free(*out)), nothing
 * written on a problem. Returns 0, or -EINVAL with the problem in err.
 */
int mp_render_mem(const struct mp_renderer *r, const cJSON *doc, int kind, char **out,
		  size_t *len, char *err, size_t errlen);

/* ---- for the text renderer's files ----------------------------------------------- */

void mp_text_limits(const cJSON *doc, FILE *f, struct mp_rd *rd);
void mp_text_features(const cJSON *doc, FILE *f, struct mp_rd *rd);
void mp_text_probe(const cJSON *doc, FILE *f, struct mp_rd *rd);
/* the throttling point and soft headroom lines of a cgroup object */
void mp_text_soft(const cJSON *cg, FILE *f, struct mp_rd *rd, const char *indent);
/*
 * An OOM kill of record's oom_kills in one line: "OOM at DIR's 256.0 MiB
 * limit (usage 255.9 MiB): RSS 100.2 MiB; shmem 150.0 MiB that no process
 * maps, page cache 0 B, kernel 1.2 MiB, sock 0 B". False for a kill of an
 * older document (no limit_hit).
 */
bool mp_render_oom_line(struct mp_rd *rd, const cJSON *kill, char *buf, size_t len);

/* Memory no process maps and huge pages of a cgroup object (or pinned). */
void mp_text_unmapped(const cJSON *o, FILE *f, struct mp_rd *rd, const char *indent);
void mp_text_budget(const cJSON *doc, FILE *f, struct mp_rd *rd);
void mp_env_budget(const cJSON *doc, FILE *f, struct mp_rd *rd);
void mp_text_record(const cJSON *doc, FILE *f, struct mp_rd *rd);
/* An "attribution" object, as probe and record print it. */
void mp_text_attribution(const cJSON *a, FILE *f, struct mp_rd *rd);
/* The overhead object in words (render_text_overhead.c), its shared
 * segments from pinned (NULL: none); o NULL: nothing. */
void mp_text_overhead(const cJSON *o, const cJSON *pinned, FILE *f, struct mp_rd *rd);
/* The "pinned" section (render_text_pinned.c); NULL: none. */
void mp_text_pinned(const cJSON *p, FILE *f, struct mp_rd *rd);

#endif
