// SPDX-License-Identifier: GPL-2.0
/*
 * The compare document as text, markdown (docs/kernels.md is one) and
 * csv: render.c's text, markdown and csv renderers hand a compare
 * document here (json prints it as it prints any document).
 * Everything is read through struct mp_rd: a compare document is a saved
 * document like any other, and may be damaged.
 */
#include "compare.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum fmt { F_TEXT, F_MD, F_CSV, F_CODE /* inside a markdown code span */ };

struct col {
	const char *file, *host, *kernel, *mode, *version;
};

struct cmp {
	struct mp_rd *rd;
	int n;
	struct col c[MP_COMPARE_MAX];
	bool versions_differ;
	const char *kind, *per_gib_of, *pct;
	const cJSON *rows;
};

/* A cell: the number's literal, or NULL for null. */
static const char *cell(struct mp_rd *rd, const cJSON *arr, int i)
{
	const cJSON *it = cJSON_GetArrayItem(arr, i);

	if (!mp_rd_ok(rd))
		return NULL;
	if (cJSON_IsNull(it))
		return NULL;
	if (!cJSON_IsRaw(it)) {
		mp_rd_fail(rd, it ? it : arr, NULL, "not a number or null");
		return NULL;
	}
	return it->valuestring;
}

/* An array of one element per report. */
static const cJSON *per_report(struct cmp *m, const cJSON *row, const char *name)
{
	const cJSON *a = mp_rd_arr(m->rd, row, name, 0);

	if (a && cJSON_GetArraySize(a) != m->n) {
		mp_rd_fail(m->rd, row, name, "not one element per report");
		return NULL;
	}
	return a;
}

static int64_t to_s64(const char *lit)
{
	double d = strtod(lit, NULL);

	if (!(d > -9.2e18 && d < 9.2e18))
		return d > 0 ? INT64_MAX : INT64_MIN;
	return (int64_t)(d < 0 ? d - 0.5 : d + 0.5); /* rounded, without libm */
}

/* A value for people: sizes human-readable, counts as they are. */
static const char *show(const char *unit, const char *lit, bool sign, char *buf, size_t len)
{
	bool plus = sign && lit[0] != '-';

	if (strcmp(unit, "bytes") == 0) {
		snprintf(buf, len, "%s", plus ? "+" : "");
		mp_fmt_sbytes(to_s64(lit), buf + strlen(buf), len - strlen(buf));
	} else {
		snprintf(buf, len, "%s%s%s", plus ? "+" : "", lit, strcmp(unit, "ms") ? "" : " ms");
	}
	return buf;
}

static int read_cols(struct cmp *m, const cJSON *doc)
{
	const cJSON *cols = mp_rd_arr(m->rd, doc, "reports", 0), *it;

	m->n = 0;
	cJSON_ArrayForEach(it, cols) {
		struct col *c = &m->c[m->n];

		if (m->n == MP_COMPARE_MAX) {
			mp_rd_fail(m->rd, cols, NULL, "more reports than compare takes");
			return -1;
		}
		if (!mp_rd_is_obj(m->rd, it))
			return -1;
		c->file = mp_rd_str(m->rd, it, "file", 0);
		c->host = mp_rd_str(m->rd, it, "hostname", 0);
		c->kernel = mp_rd_str(m->rd, it, "kernel_release", 0);
		c->mode = mp_rd_str(m->rd, it, "cgroup_mode", 0);
		c->version = mp_rd_str(m->rd, it, "memprobe_version", 0);
		m->versions_differ |= strcmp(c->version, m->c[0].version) != 0;
		m->n++;
	}
	if (mp_rd_ok(m->rd) && m->n == 0)
		mp_rd_fail(m->rd, cols, NULL, "no reports");
	return mp_rd_ok(m->rd) ? 0 : -1;
}

/* Markdown and CSV cells hold no line breaks or separators of their own. */
static void put_esc(FILE *f, const char *s, enum fmt fmt)
{
	if (fmt == F_CSV)
		fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (fmt == F_CSV && ch == '"')
			fputs("\"\"", f);
		else if (fmt == F_MD && (ch == '|' || ch == '\\' || ch == '*' || ch == '_' ||
					 ch == '<' || ch == '>' || ch == '`' || ch == '['))
			fprintf(f, "\\%c", ch);
		else if (fmt == F_CODE && (ch == '`' || ch == '|'))
			fputc(ch == '`' ? '\'' : '/', f);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, fmt == F_CSV ? "%c" : "\\x%02x", ch);
		else
			fputc(ch, f);
	}
	if (fmt == F_CSV)
		fputc('"', f);
}

static void text_head(struct cmp *m, FILE *f, size_t w)
{
	fprintf(f, "memprobe compare: %d %s report%s, per GiB of %s; * marks a difference beyond "
		"%s%% of [1]\n", m->n, m->kind, m->n == 1 ? "" : "s", m->per_gib_of, m->pct);
	for (int i = 0; i < m->n; i++) {
		fprintf(f, "[%d] ", i + 1);
		put_esc(f, m->c[i].file, F_TEXT);
		fputs(": ", f);
		put_esc(f, m->c[i].host, F_TEXT);
		fprintf(f, ", ");
		put_esc(f, m->c[i].kernel, F_TEXT);
		fprintf(f, ", cgroup %s", m->c[i].mode);
		if (m->versions_differ) {
			fputs(", memprobe ", f);
			put_esc(f, m->c[i].version, F_TEXT);
		}
		fputc('\n', f);
	}
	fprintf(f, "\n%-*s", (int)w, "");
	for (int i = 0; i < m->n; i++) {
		char h[48], d[48], r[48];

		snprintf(h, sizeof(h), "[%d]", i + 1);
		snprintf(d, sizeof(d), "[%d]-[1]", i + 1);
		snprintf(r, sizeof(r), "[%d]/[1]", i + 1);
		fprintf(f, " %13s", h);
		if (i > 0)
			fprintf(f, " %13s %8s  ", d, r);
	}
	fputc('\n', f);
}

static void md_head(struct cmp *m, FILE *f)
{
	fprintf(f, "%d %s report%s side by side; \"/GiB\" rows are per GiB of %s. Against [1]: "
		"the difference and the ratio; **bold**: a difference beyond %s%%.\n\n| figure |",
		m->n, m->kind, m->n == 1 ? "" : "s", m->per_gib_of, m->pct);
	for (int i = 0; i < m->n; i++) {
		fprintf(f, " [%d] ", i + 1);
		put_esc(f, m->c[i].host, F_MD);
		fputs("<br>", f);
		put_esc(f, m->c[i].kernel, F_MD);
		fprintf(f, "<br>%s", m->c[i].mode);
		if (m->versions_differ) {
			fputs("<br>memprobe ", f);
			put_esc(f, m->c[i].version, F_MD);
		}
		fputs(" |", f);
	}
	fputs("\n|---|", f);
	for (int i = 0; i < m->n; i++)
		fputs("---:|", f);
	fputc('\n', f);
}

static void csv_head(struct cmp *m, FILE *f)
{
	fputs("figure,unit,per_gib", f);
	for (int i = 0; i < m->n; i++) {
		static const char *const what[] = { "value", "diff", "ratio", "marked" };

		for (int k = 0; k < (i ? 4 : 1); k++) {
			char h[4200];

			snprintf(h, sizeof(h), "[%d] %s %s", i + 1, m->c[i].file, what[k]);
			fputc(',', f);
			put_esc(f, h, F_CSV);
		}
	}
	fputs("\r\n", f);
}

/* One row in fmt; w: the text's first column. */
static void put_row(struct cmp *m, const cJSON *row, enum fmt fmt, size_t w, FILE *f)
{
	struct mp_rd *rd = m->rd;
	const char *id = mp_rd_str(rd, row, "id", 0), *unit = mp_rd_str(rd, row, "unit", 0);
	bool per_gib = mp_rd_bool(rd, row, "per_gib", 0);
	const cJSON *v = per_report(m, row, "values"), *d = per_report(m, row, "diffs");
	const cJSON *r = per_report(m, row, "ratios"), *mk = per_report(m, row, "marked");
	char a[64], b[64];

	if (!mp_rd_ok(rd))
		return;
	if (fmt == F_TEXT)
		fprintf(f, "%-*s", (int)w, id);
	else if (fmt == F_MD)
		fputs("| `", f), put_esc(f, id, F_CODE), fputs("` |", f);
	else
		put_esc(f, id, F_CSV), fputc(',', f), put_esc(f, unit, F_CSV),
			fprintf(f, ",%s", per_gib ? "true" : "false");
	for (int i = 0; i < m->n && mp_rd_ok(rd); i++) {
		const char *val = cell(rd, v, i), *dif = cell(rd, d, i), *rat = cell(rd, r, i);
		const cJSON *mi = cJSON_GetArrayItem(mk, i);
		bool marked = cJSON_IsTrue(mi);

		if (!cJSON_IsBool(mi))
			mp_rd_fail(rd, mi, NULL, "not true or false");
		if (!mp_rd_ok(rd))
			return;
		if (fmt == F_CSV) {
			fprintf(f, ",%s", val ? val : "");
			if (i)
				fprintf(f, ",%s,%s,%s", dif ? dif : "", rat ? rat : "",
					marked ? "true" : "false");
			continue;
		}
		if (fmt == F_TEXT) {
			fprintf(f, " %13s", val ? show(unit, val, false, a, sizeof(a)) : "-");
			if (i)
				fprintf(f, " %13s %8s %c", dif ? show(unit, dif, true, a, sizeof(a)) : "-",
					rat ? rat : "-", marked ? '*' : ' ');
			continue;
		}
		fprintf(f, " %s%s", marked ? "**" : "", val ? show(unit, val, false, a, sizeof(a)) : "—");
		if (i && dif)
			fprintf(f, " (%s, ×%s)", show(unit, dif, true, b, sizeof(b)), rat ? rat : "—");
		fprintf(f, "%s |", marked ? "**" : "");
	}
	fputs(fmt == F_CSV ? "\r\n" : "\n", f);
}

void mp_compare_render(const cJSON *doc, const char *format, FILE *f, struct mp_rd *rd)
{
	struct cmp m = { .rd = rd };
	enum fmt fmt = strcmp(format, "markdown") == 0 ? F_MD : strcmp(format, "csv") == 0 ? F_CSV : F_TEXT;
	const cJSON *row;
	size_t w = 20;

	m.kind = mp_rd_str(rd, doc, "compared_kind", 0);
	m.per_gib_of = mp_rd_str(rd, doc, "per_gib_of", 0);
	m.pct = mp_rd_num(rd, doc, "threshold_pct", 0);
	m.rows = mp_rd_arr(rd, doc, "rows", 0);
	if (read_cols(&m, doc))
		return;
	cJSON_ArrayForEach(row, m.rows) {
		if (!mp_rd_is_obj(rd, row))
			return;
		{
			size_t l = strlen(mp_rd_str(rd, row, "id", 0));

			w = l > w ? l : w;
		}
	}
	w = MP_MIN(w, 80);
	if (fmt == F_TEXT)
		text_head(&m, f, w);
	else if (fmt == F_MD)
		md_head(&m, f);
	else
		csv_head(&m, f);
	cJSON_ArrayForEach(row, m.rows)
		put_row(&m, row, fmt, w, f);
}
