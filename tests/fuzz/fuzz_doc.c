// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the loader (mp_doc_load), mp_doc_adopt on what it
 * makes (a fixed point: the live commands' way to the same tree), every renderer of render.c's
 * table on what loads (iterated, so a renderer added to the table is
 * fuzzed too), compare documents among them, and compare of two documents. The input
 * is split at its first NUL byte: before it document A, after it document
 * B (a document holds no NUL, so the loader refuses one anyway). `make
 * fuzz` builds it in build/fuzz/ and runs it on tests/fuzz/corpus/.
 */
#include "cgroup.h"
#include "compare.h"
#include "doc.h"
#include "json.h"
#include "render.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct mp_host host;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mp_host_read("", &host);
	return 0;
}

static void render_all(const cJSON *doc, int kind)
{
	const struct mp_renderer *r;
	char err[512], *out;
	size_t len;

	for (size_t i = 0; (r = mp_renderer_nth(i)); i++)
		if ((r->kinds & kind) && !mp_render_mem(r, doc, kind, &out, &len, err, sizeof(err)))
			free(out);
}

/* What the loader makes, mp_doc_adopt (the live commands' way to the
 * same tree) takes as it is: of the same kind, no check failing. */
static void adopt_again(const cJSON *doc, int kind)
{
	cJSON *c = cJSON_Duplicate(doc, 1);
	char err[512];
	int k;

	if (c && (mp_doc_adopt(c, &k, err, sizeof(err)) || k != kind))
		abort();
	cJSON_Delete(c);
}

/* Compare docs[0..n) and render the compare document every way; the
 * compare document is printed (mp_json_text: a byte that is not UTF-8,
 * from a document's \udcXX, written back as \udcXX) and loaded back, as
 * memprobe compare does. */
static void compare(const cJSON *const *docs, const int *kinds, int n)
{
	static const char *const names[] = { "a.json", "b.json" };
	char err[600], *text;
	cJSON *c, *back;
	int kind;

	c = mp_compare_doc(docs, kinds, names, n, 10.0, &host, err, sizeof(err));
	if (!c)
		return;
	text = mp_json_text(c, 1);
	cJSON_Delete(c);
	if (!text)
		return;
	back = mp_doc_load(text, strlen(text), &kind, err, sizeof(err));
	/* what compare builds must load back: anything else is a bug */
	if (!back || kind != MP_DOC_COMPARE)
		abort();
	render_all(back, kind);
	cJSON_Delete(back);
	cJSON_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *t = (const char *)data;
	const char *nul = memchr(t, '\0', size);
	size_t alen = nul ? (size_t)(nul - t) : size;
	const cJSON *docs[2];
	int kinds[2] = { 0, 0 };
	char err[512];
	cJSON *a, *b = NULL;

	a = mp_doc_load(t, alen, &kinds[0], err, sizeof(err));
	if (!a)
		return 0;
	render_all(a, kinds[0]);
	adopt_again(a, kinds[0]);
	if (nul) {
		const char *bt = nul + 1, *bend = memchr(bt, '\0', size - alen - 1);

		b = mp_doc_load(bt, bend ? (size_t)(bend - bt) : size - alen - 1, &kinds[1], err,
				sizeof(err));
	}
	docs[0] = a;
	docs[1] = b ? b : a;
	if (!b)
		kinds[1] = kinds[0];
	compare(docs, kinds, 2);
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}
