// SPDX-License-Identifier: GPL-2.0
/* The renderer table, and the one way a document is printed (mp_emit). */
#include "render.h"
#include "json.h"
#include "out.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A new renderer (markdown, csv, html, openmetrics): its file, and a line here. */
static const struct mp_renderer *const renderers[] = {
	&mp_renderer_text,
	&mp_renderer_json,
	&mp_renderer_env,
	&mp_renderer_markdown,
	&mp_renderer_csv,
	&mp_renderer_folded,
	&mp_renderer_html,
	&mp_renderer_openmetrics,
};

struct mp_render_opts mp_render_opts;
#define NR_RENDERERS (sizeof(renderers) / sizeof(renderers[0]))

const struct mp_renderer *mp_renderer_nth(size_t i)
{
	return i < NR_RENDERERS ? renderers[i] : NULL;
}

const struct mp_renderer *mp_renderer_find(const char *name)
{
	for (size_t i = 0; name && i < NR_RENDERERS; i++)
		if (strcmp(renderers[i]->name, name) == 0)
			return renderers[i];
	return NULL;
}

/* "text or json", "text, json or env": the renderers that take kinds. */
void mp_render_names(int kinds, char *buf, size_t len)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < NR_RENDERERS; i++)
		n += (renderers[i]->kinds & kinds) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NR_RENDERERS; i++) {
		if (!(renderers[i]->kinds & kinds))
			continue;
		k++;
		mp_appendf(buf, len, "%s%s", k == 1 ? "" : k == n ? " or " : ", ",
			   renderers[i]->name);
	}
}

/* "limits and budget", "probe, record and compare"; "" for every kind */
static void kinds_words(int kinds, char *buf, size_t len)
{
	int n = 0, k = 0;

	buf[0] = '\0';
	if ((kinds & MP_DOC_ALL) == MP_DOC_ALL)
		return;
	for (int b = 1; b & MP_DOC_ALL; b <<= 1)
		n += (kinds & b) != 0;
	for (int b = 1; b & MP_DOC_ALL; b <<= 1) {
		if (!(kinds & b))
			continue;
		k++;
		mp_appendf(buf, len, "%s%s", k == 1 ? "" : k == n ? " and " : ", ",
			   mp_doc_kind_name(b));
	}
}

void mp_render_help(const char *kind, char *buf, size_t len)
{
	int kinds = kind ? mp_doc_kind(kind) : MP_DOC_ALL;
	size_t n = 0, k = 0;
	char words[96];

	for (size_t i = 0; i < NR_RENDERERS; i++)
		n += (renderers[i]->kinds & kinds) != 0;
	buf[0] = '\0';
	for (size_t i = 0; i < NR_RENDERERS; i++) {
		const struct mp_renderer *r = renderers[i];

		if (!(r->kinds & kinds))
			continue;
		k++;
		if (kind)
			mp_appendf(buf, len, "%s", k == 1 ? "" : k == n ? " or " : ", ");
		else
			mp_appendf(buf, len, "%s", k == 1 ? "" : "; ");
		mp_appendf(buf, len, "%s%s%s%s", r->name, r->about ? " (" : "",
			   r->about ? r->about : "", r->about ? ")" : "");
		if (!kind && (kinds_words(r->kinds, words, sizeof(words)), words[0]))
			mp_appendf(buf, len, " for %s", words);
	}
}

int mp_render_check(const char *cmd, const char *kind, const char *format)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	int kinds = kind ? mp_doc_kind(kind) : MP_DOC_ALL;
	char names[256];

	if (r && (r->kinds & kinds))
		return 0;
	mp_render_names(kinds, names, sizeof(names));
	if (r)
		fprintf(stderr, "memprobe %s: --format %s: not for a %s document; use %s\n", cmd,
			format, kind, names);
	else
		fprintf(stderr, "memprobe %s: --format %s: unknown; use %s\n", cmd, format, names);
	return MP_EXIT_USAGE;
}

int mp_render_mem(const struct mp_renderer *r, const cJSON *doc, int kind, char **out,
		  size_t *len, char *err, size_t errlen)
{
	struct mp_rd rd = { .root = doc };
	cJSON *shown = NULL;
	FILE *f;

	*out = NULL;
	*len = 0;
	/* text for people gets \xNN for a byte that is not UTF-8; json keeps
	 * the byte (its printing writes \udcXX) */
	if (r != &mp_renderer_json && mp_json_has_bad_utf8(doc)) {
		if (!(shown = mp_json_display_copy(doc))) {
			snprintf(err, errlen, "out of memory; free some and try again");
			return -ENOMEM;
		}
		doc = rd.root = shown;
	}
	f = open_memstream(out, len);
	if (!f) {
		cJSON_Delete(shown);
		snprintf(err, errlen, "out of memory; free some and try again");
		return -ENOMEM;
	}
	r->render(doc, kind, f, &rd);
	cJSON_Delete(shown);
	if (fclose(f) && mp_rd_ok(&rd))
		snprintf(rd.err, sizeof(rd.err), "out of memory rendering it");
	if (!mp_rd_ok(&rd)) {
		snprintf(err, errlen, "%s", rd.err);
		free(*out);
		*out = NULL;
		*len = 0;
		return -EINVAL;
	}
	return 0;
}

/* MEMPROBE_DOC_COPY: the document as --format json prints it, beside the
 * run's own output (see render.h). A copy that fails is said, and the run
 * goes on: the report asked for is what counts. */
void mp_doc_copy(const char *cmd, int kind, const cJSON *doc)
{
	static unsigned int seq;
	const char *path = getenv("MEMPROBE_DOC_COPY");
	char p[4096], *text;
	struct stat st;
	FILE *f;

	if (!path || !path[0])
		return;
	/* as --format json prints it (the loaded document: raw literals) */
	if (!(text = mp_json_text(doc, 1)))
		return;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		snprintf(p, sizeof(p), "%s/%s-%d-%u.json", path, mp_doc_kind_name(kind),
			 (int)getpid(), seq++);
	else
		snprintf(p, sizeof(p), "%s", path);
	f = fopen(p, "we");
	if (!f || fprintf(f, "%s\n", text) < 0 || fclose(f)) {
		fprintf(stderr, "memprobe %s: MEMPROBE_DOC_COPY: cannot write %s: %s\n", cmd, p,
			strerror(errno));
		if (f)
			fclose(f);
	}
	cJSON_free(text);
}

/* --format json's output, as render_json writes it (the document and a
 * newline), printed once: not copied again into a stream. */
static int print_json(const cJSON *doc, char **out, size_t *len, char *err, size_t errlen)
{
	char *s = mp_json_text(doc, 1), *t;

	*len = s ? strlen(s) : 0;
	if (!s || !(t = realloc(s, *len + 2))) {
		free(s);
		snprintf(err, errlen, "out of memory printing the document");
		return -ENOMEM;
	}
	t[(*len)++] = '\n';
	t[*len] = '\0';
	*out = t;
	return 0;
}

/*
 * doc made what the loader makes of its text (mp_doc_adopt) and rendered
 * by r into *out: 0, or the problem in err, said as memprobe's own fault
 * (what memprobe built it cannot read is a bug).
 */
static int render_built(const struct mp_renderer *r, cJSON *doc, int *kind, char **out,
			size_t *len, char *err, size_t errlen)
{
	char why[400];

	*out = NULL;
	if (!doc) {
		snprintf(err, errlen, "out of memory building the document");
		return -ENOMEM;
	}
	if (mp_doc_adopt(doc, kind, why, sizeof(why)) == 0) {
		if (!(r->kinds & *kind))
			snprintf(why, sizeof(why), "no such format for it");
		else if (r == &mp_renderer_json)
			return print_json(doc, out, len, err, errlen);
		else if (mp_render_mem(r, doc, *kind, out, len, why, sizeof(why)) == 0)
			return 0;
	}
	snprintf(err, errlen, "the %s document does not render: %s (a bug: please report it)",
		 mp_doc_kind_name(*kind > 0 ? *kind : 0), why);
	return -EINVAL;
}

int mp_emit(const char *cmd, cJSON *doc, const char *format, FILE *f, const char *path)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	char *out = NULL, err[600];
	int kind = 0, ret = MP_EXIT_RUNTIME;
	size_t len;

	if (!r) {
		fprintf(stderr, "memprobe %s: no such renderer (a bug: --format is checked "
			"first)\n", cmd);
		goto out;
	}
	if (render_built(r, doc, &kind, &out, &len, err, sizeof(err))) {
		fprintf(stderr, "memprobe %s: %s\n", cmd, err);
		goto out;
	}
	mp_doc_copy(cmd, kind, doc);
	cJSON_Delete(doc); /* the output and the document are never both large */
	doc = NULL;
	if (fwrite(out, 1, len, f) != len || fflush(f)) {
		mp_out_failed(cmd, path, errno ? errno : EIO);
		goto out;
	}
	ret = 0;
out:
	cJSON_Delete(doc);
	free(out);
	return ret;
}

/* ---- a measurement's document, never lost ------------------------------------- */

/* Where the document goes when the report could not be written: beside the
 * report's file, else here, else in $TMPDIR (/tmp), each a new file. */
static int save_json(const char *cmd, const struct mp_out *o, const char *text, size_t len,
		     char *where, size_t wlen)
{
	const char *tmp = getenv("TMPDIR");
	char stems[3][4200], cwd[4096];
	int n = 0, err = -ENOENT;

	if (o->path[0] && !mp_path(stems[n], sizeof(stems[n]), "%s", o->path))
		n++;
	if (getcwd(cwd, sizeof(cwd)) &&
	    !mp_path(stems[n], sizeof(stems[n]), "%s/memprobe-%s", cwd, cmd))
		n++;
	if (!mp_path(stems[n], sizeof(stems[n]), "%s/memprobe-%s",
		     tmp && *tmp == '/' ? tmp : "/tmp", cmd))
		n++;
	for (int i = 0; i < n; i++) {
		/* STEM.json, or STEM.PID.json where that name is taken */
		err = mp_path(where, wlen, "%s.json", stems[i]);
		if (!err && (err = mp_save_new(where, text, len)) == -EEXIST &&
		    !(err = mp_path(where, wlen, "%s.%d.json", stems[i], (int)getpid())))
			err = mp_save_new(where, text, len);
		if (!err)
			return 0;
	}
	return err;
}

/* The JSON document saved after problem (one line, said here); 1. */
static int rescue(const char *cmd, const struct mp_out *o, cJSON *doc, char *json,
		  size_t jlen, const char *problem)
{
	char where[4200];
	int err;

	if (!json && doc && (json = mp_json_text(doc, 1))) {
		jlen = strlen(json);
		json[jlen++] = '\n'; /* over the NUL: as --format json prints it */
	} else if (!json) {
		fprintf(stderr, "memprobe %s: %s; the document could not be printed either (out "
			"of memory): it is lost\n", cmd, problem);
		return MP_EXIT_RUNTIME;
	}
	err = save_json(cmd, o, json, jlen, where, sizeof(where));
	if (err)
		fprintf(stderr, "memprobe %s: %s; the JSON document could not be saved either "
			"(beside it, here or in the temporary directory: %s): it is lost\n", cmd,
			problem, strerror(-err));
	else
		fprintf(stderr, "memprobe %s: %s; the JSON document is saved whole in %s "
			"(memprobe report %s renders it)\n", cmd, problem, where, where);
	free(json);
	return MP_EXIT_RUNTIME;
}

int mp_emit_save(const char *cmd, cJSON *doc, const char *format, struct mp_out *o,
		 const char *out_arg)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	char *out = NULL, err[600];
	const char *to = out_arg && strcmp(out_arg, "-") ? out_arg : "standard output";
	sigset_t stop, old;
	int kind = 0, ret = 0;
	size_t len = 0;

	/* a stop signal now is no reason to cut a write short (a pipe's write
	 * interrupted before it ends): it waits until the report is written */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, &old);
	if (!r)
		snprintf(err, sizeof(err), "no such renderer (a bug: --format is checked first)");
	if (!r || render_built(r, doc, &kind, &out, &len, err, sizeof(err))) {
		ret = rescue(cmd, o, doc, NULL, 0, err);
		goto out;
	}
	mp_doc_copy(cmd, kind, doc);
	if (r == &mp_renderer_json) { /* the output is the document: one of them held */
		cJSON_Delete(doc);
		doc = NULL;
	}
	if (fwrite(out, 1, len, o->f) != len || (ret = mp_out_commit(o))) {
		int e = ret ? -ret : errno ? errno : EIO;

		mp_out_abort(o); /* the temporary file goes: its space is the document's */
		snprintf(err, sizeof(err), "cannot write the report to %s: %s", to, strerror(e));
		ret = rescue(cmd, o, doc, doc ? NULL : out, len, err);
		if (!doc)
			out = NULL; /* rescue freed it */
	}
out:
	cJSON_Delete(doc);
	free(out);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

const char *mp_render_size(int64_t v, char *buf, size_t len)
{
	if (mp_render_opts.bytes)
		snprintf(buf, len, "%" PRId64, v);
	else
		mp_fmt_sbytes(v, buf, len);
	return buf;
}

const char *mp_render_usize(uint64_t v, char *buf, size_t len)
{
	if (mp_render_opts.bytes)
		snprintf(buf, len, "%" PRIu64, v);
	else
		mp_fmt_bytes(v, buf, len);
	return buf;
}

void mp_render_cat_growth(struct mp_rd *rd, const cJSON *cat,
			  const char *(*size)(int64_t, char *, size_t),
			  char *cell, size_t clen, char *note, size_t nlen)
{
	int64_t g = mp_rd_s64v(rd, cat, "growth_bytes"), bound = 0, floor = 0;
	bool est = mp_rd_item(rd, cat, "estimated", MP_RD_ABSENT) &&
		   mp_rd_bool(rd, cat, "estimated", 0);
	bool below = mp_rd_item(rd, cat, "below_floor", MP_RD_ABSENT) &&
		     mp_rd_bool(rd, cat, "below_floor", 0) &&
		     mp_rd_s64(rd, cat, "floor_bytes", 0, &floor);
	bool have_bound = est && mp_rd_s64(rd, cat, "bound_bytes", MP_RD_NULL | MP_RD_ABSENT,
					   &bound);
	char b1[40], b2[40];

	size(g, b1, sizeof(b1));
	note[0] = '\0';
	if (below) {
		snprintf(cell, clen, "n/a");
		snprintf(note, nlen, "(counted %s, below the %s the kernel allows: events lost) ",
			 b1, size(floor, b2, sizeof(b2)));
		return;
	}
	/* the bound is the growth's, so it stands in the growth's cell (it
	 * stood at the head of the top-tasks cell, as if a task's) */
	if (have_bound)
		snprintf(cell, clen, "~%.38s \u00b1%.38s", b1, size(bound, b2, sizeof(b2)));
	else
		snprintf(cell, clen, "%s%.38s", est ? "~" : "", b1);
	if (!have_bound && est)
		snprintf(note, nlen, "(error unknown) ");
}

const char *mp_render_cat_left(struct mp_rd *rd, const cJSON *cat,
			       const char *(*size)(int64_t, char *, size_t), char *buf, size_t len)
{
	int64_t ret;

	buf[0] = '\0';
	if (!mp_rd_s64(rd, cat, "retained_bytes", MP_RD_ABSENT, &ret))
		return buf;
	if (mp_rd_item(rd, cat, "retained_below_floor", MP_RD_ABSENT) &&
	    mp_rd_bool(rd, cat, "retained_below_floor", 0))
		snprintf(buf, len, "n/a");
	else
		size(ret, buf, len);
	return buf;
}

const char *mp_render_ms(uint64_t ms, char *buf, size_t len)
{
	if (ms < 1000)
		snprintf(buf, len, "%" PRIu64 " ms", ms);
	else if (ms < 100000)
		snprintf(buf, len, "%.1f s", ms / 1e3);
	else if (ms < 2 * 3600000)
		snprintf(buf, len, "%.1f min", ms / 6e4);
	else if (ms < 2 * 86400000)
		snprintf(buf, len, "%.1f h", ms / 3.6e6);
	else
		snprintf(buf, len, "%.1f d", ms / 8.64e7);
	return buf;
}

uint64_t mp_render_row_ms(struct mp_rd *rd, const cJSON *doc, const cJSON *row, uint64_t *samples)
{
	uint64_t v;

	*samples = 1;
	if (!mp_rd_u64(rd, row, "resolution_ms", MP_RD_ABSENT, &v))
		return mp_rd_u64v(rd, mp_rd_obj(rd, doc, "run", 0), "interval_ms");
	mp_rd_u64(rd, row, "samples", 0, samples);
	return v;
}

bool mp_render_row_due(uint64_t *next_ms, uint64_t end_ms, int rows, uint64_t t_ms)
{
	uint64_t step = end_ms / (uint64_t)rows;

	if (t_ms < *next_ms)
		return false;
	/* the next slot after this row's: a row per slot, none skipped twice */
	*next_ms = step ? (t_ms / step + 1) * step : t_ms + 1;
	return true;
}

uint64_t mp_render_oom_usage(struct mp_rd *rd, const cJSON *kill, bool *at_kill)
{
	uint64_t v;

	*at_kill = mp_rd_u64(rd, kill, "usage_bytes", MP_RD_NULL | MP_RD_ABSENT, &v);
	return *at_kill ? v : mp_rd_u64v(rd, mp_rd_obj(rd, kill, "sample", 0), "usage_bytes");
}

/* "at DIR's 256.0 MiB limit (usage 255.9 MiB)", or "with no level at its
 * limit (the host's memory)" */
static void oom_where(struct mp_rd *rd, const cJSON *hit, char *buf, size_t len)
{
	char b1[32], b2[32];

	if (!hit) {
		snprintf(buf, len, "with no level at its limit (the host's memory)");
		return;
	}
	snprintf(buf, len, "at %s's %s limit (usage %s)", mp_rd_str(rd, hit, "dir", 0),
		 mp_fmt_bytes(mp_rd_u64v(rd, hit, "limit_bytes"), b1, sizeof(b1)),
		 mp_fmt_bytes(mp_rd_u64v(rd, hit, "usage_bytes"), b2, sizeof(b2)));
}

bool mp_render_oom_line(struct mp_rd *rd, const cJSON *kill, char *buf, size_t len)
{
	const cJSON *hit, *ch;
	char where[PATH_MAX + 96], b[5][32];

	if (!mp_rd_item(rd, kill, "limit_hit", MP_RD_ABSENT))
		return false; /* an older document */
	hit = mp_rd_obj(rd, kill, "limit_hit", MP_RD_NULL);
	ch = mp_rd_obj(rd, kill, "charged", MP_RD_NULL);
	if (!hit && !cJSON_GetArraySize(mp_rd_arr(rd, kill, "levels", MP_RD_ABSENT)))
		/* no hook read the levels: the kill is the oom_kill counter's */
		snprintf(where, sizeof(where), "(which level's limit: not read, no OOM hook)");
	else
		oom_where(rd, hit, where, sizeof(where));
	if (!ch) {
		snprintf(buf, len, "OOM %s", where);
		return true;
	}
	snprintf(buf, len, "OOM %s: RSS %s; shmem %s that no process maps, page cache %s, "
		 "kernel %s, sock %s", where,
		 mp_fmt_bytes(mp_rd_u64v(rd, ch, "rss_bytes"), b[0], sizeof(b[0])),
		 mp_fmt_bytes(mp_rd_u64v(rd, ch, "shmem_unmapped_bytes"), b[1], sizeof(b[1])),
		 mp_fmt_bytes(mp_rd_u64v(rd, ch, "page_cache_unmapped_bytes"), b[2], sizeof(b[2])),
		 mp_fmt_bytes(mp_rd_u64v(rd, ch, "kernel_bytes"), b[3], sizeof(b[3])),
		 mp_fmt_bytes(mp_rd_u64v(rd, ch, "sock_bytes"), b[4], sizeof(b[4])));
	return true;
}
