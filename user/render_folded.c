// SPDX-License-Identifier: GPL-2.0
/*
 * --format folded: the kernel stacks of a probe or record document in the
 * collapsed one-line-per-stack form flamegraph.pl, inferno and speedscope
 * read: "category;outermost;...;innermost BYTES", root first, weighted by
 * the stack's net bytes (what is still charged). The category is the root
 * frame; frames lose their +0xoff (so one function is one box) and keep
 * their [module]. Stacks with no net bytes left (freed again) have no
 * width in a flame graph and are left out; equal lines are summed, and the
 * lines are sorted, so the same document always gives the same file.
 */
#include "render.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct line {
	char *text;
	int64_t bytes;
};

struct lines {
	struct line *v;
	size_t n, cap;
};

/* A frame as flamegraph.pl takes it: "func+0x1a/0x40 [mod]" -> "func [mod]";
 * ';' (the separator) and controls become '_'. */
static void put_chars(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		fputc(c == ';' || c < 0x20 || c == 0x7f ? '_' : c, f);
	}
}

static void put_frame(FILE *f, const char *fr)
{
	const char *off = strstr(fr, "+0x"), *mod = strchr(fr, ' ');
	const char *end = off && (!mod || off < mod) ? off : mod;

	put_chars(f, fr, end ? (size_t)(end - fr) : strlen(fr));
	if (mod)
		put_chars(f, mod, strlen(mod));
}

static int add_line(struct lines *ls, char *text, int64_t bytes)
{
	if (ls->n == ls->cap) {
		size_t cap = ls->cap ? ls->cap * 2 : 64;
		struct line *v = realloc(ls->v, cap * sizeof(*v));

		if (!v)
			return -1;
		ls->v = v;
		ls->cap = cap;
	}
	ls->v[ls->n++] = (struct line){ text, bytes };
	return 0;
}

/* One stack's line text (without its count), root first; NULL on no memory. */
static char *stack_text(const char *cat, const cJSON *st, struct mp_rd *rd)
{
	const cJSON *frames = mp_rd_arr(rd, st, "frames", 0);
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	put_frame(m, cat);
	/* the document has them innermost first */
	for (int i = cJSON_GetArraySize(frames) - 1; i >= 0; i--) {
		fputc(';', m);
		put_frame(m, mp_rd_elem_str(rd, cJSON_GetArrayItem(frames, i)));
	}
	if (fclose(m)) {
		free(text);
		return NULL;
	}
	return text;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

static void collect(const cJSON *doc, struct lines *ls, struct mp_rd *rd)
{
	const cJSON *a = mp_rd_obj(rd, doc, "attribution", 0), *c, *st;

	cJSON_ArrayForEach(c, mp_rd_arr(rd, a, "categories", MP_RD_ABSENT)) {
		const char *cat;

		if (!mp_rd_is_obj(rd, c))
			return;
		cat = mp_rd_str(rd, c, "name", 0);
		cJSON_ArrayForEach(st, mp_rd_arr(rd, c, "top_stacks", MP_RD_ABSENT)) {
			int64_t bytes;
			char *text;

			if (!mp_rd_is_obj(rd, st) || !mp_rd_s64(rd, st, "bytes", 0, &bytes))
				return;
			if (bytes <= 0)
				continue;
			text = stack_text(cat, st, rd);
			if (!text || add_line(ls, text, bytes)) {
				free(text);
				mp_rd_fail(rd, NULL, NULL, "out of memory");
				return;
			}
		}
	}
}

static void render_folded(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	struct lines ls = { 0 };

	(void)kind;
	collect(doc, &ls, rd);
	if (ls.n)
		qsort(ls.v, ls.n, sizeof(ls.v[0]), by_text);
	for (size_t i = 0; i < ls.n; i++) {
		int64_t sum = ls.v[i].bytes;

		while (i + 1 < ls.n && strcmp(ls.v[i].text, ls.v[i + 1].text) == 0) {
			free(ls.v[i].text);
			/* only a hand-made document's stacks pass 2^63 bytes */
			if (__builtin_add_overflow(sum, ls.v[++i].bytes, &sum))
				mp_rd_fail(rd, NULL, "attribution", "stacks' bytes beyond 2^63");
		}
		fprintf(f, "%s %" PRId64 "\n", ls.v[i].text, sum);
		free(ls.v[i].text);
	}
	free(ls.v);
}

const struct mp_renderer mp_renderer_folded = {
	.name = "folded",
	.about = "kernel stacks for flame graphs",
	.kinds = MP_DOC_PROBE | MP_DOC_RECORD,
	.render = render_folded,
};
