// SPDX-License-Identifier: GPL-2.0
/* The renderer table, and the one way a document is printed (mp_emit). */
#include "render.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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
	FILE *f;

	*out = NULL;
	*len = 0;
	f = open_memstream(out, len);
	if (!f) {
		snprintf(err, errlen, "out of memory; free some and try again");
		return -ENOMEM;
	}
	r->render(doc, kind, f, &rd);
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
	if (!(text = cJSON_Print(doc)))
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

int mp_emit(const char *cmd, cJSON *doc, const char *format, FILE *f)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	char *text = cJSON_PrintUnformatted(doc), *out = NULL, err[400];
	cJSON *back = NULL;
	int kind = 0, ret = MP_EXIT_RUNTIME;
	size_t len;

	/* one copy at a time: the tree, its text, the loaded tree, the output */
	cJSON_Delete(doc);
	if (!r || !text) {
		fprintf(stderr, "memprobe %s: %s\n", cmd,
			!r ? "no such renderer (a bug: --format is checked first)" : "out of memory");
		goto out;
	}
	back = mp_doc_load(text, strlen(text), &kind, err, sizeof(err));
	if (!back || !(r->kinds & kind) || mp_render_mem(r, back, kind, &out, &len, err, sizeof(err))) {
		/* what memprobe built it cannot read: a bug, said as such */
		fprintf(stderr, "memprobe %s: the %s document does not render: %s (a bug: "
			"please report it)\n", cmd, mp_doc_kind_name(kind),
			!back ? err : !(r->kinds & kind) ? "no such format for it" : err);
		goto out;
	}
	mp_doc_copy(cmd, kind, back);
	cJSON_free(text);
	text = NULL;
	cJSON_Delete(back);
	back = NULL;
	if (fwrite(out, 1, len, f) != len || fflush(f)) {
		fprintf(stderr, "memprobe %s: cannot write the report: %s\n", cmd, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	cJSON_free(text);
	cJSON_Delete(back);
	free(out);
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
	snprintf(cell, clen, "%s%.38s", est ? "~" : "", b1);
	if (have_bound)
		snprintf(note, nlen, "(+-%s) ", size(bound, b2, sizeof(b2)));
	else if (est)
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

uint64_t mp_render_oom_usage(struct mp_rd *rd, const cJSON *kill, bool *at_kill)
{
	uint64_t v;

	*at_kill = mp_rd_u64(rd, kill, "usage_bytes", MP_RD_NULL | MP_RD_ABSENT, &v);
	return *at_kill ? v : mp_rd_u64v(rd, mp_rd_obj(rd, kill, "sample", 0), "usage_bytes");
}
