// SPDX-License-Identifier: GPL-2.0
/*
 * --format html: a probe or record document as one self-contained page: no
 * network, no script, style sheet or font from outside (the style is
 * inline, the charts inline SVG with a viewBox, so the page scales to a
 * phone and prints). The summary, for probe the peak's bar (before, the
 * allocation, the overhead's pieces) and the overhead's parts at their own
 * scale, a bar chart of the growth by category (diverging: a shrink left of
 * zero), for record a stacked area chart of the timeline with the limit
 * (and memory.high, the throttling point) as lines and OOM kills marked,
 * then the tables (the facts the text also says: render_html_facts.c); and the document itself in <script type="application/json"
 * id="memprobe-report">, every '<' in it written \u003c so no "</script>"
 * can end it early, for a program to read the page back.
 *
 * The SVG elements carry classes and data attributes (class="series"
 * data-category="anon", "bar", "alloc", "overhead" data-part, "limit-line",
 * "high-line", "throttle-line", "oom-mark") that the tests query and that
 * are kept stable (docs/report-format.md lists them).
 */
#include "render_html.h"
#include "views.h"
#include "proc_role.h"
#include "util.h"
#include "vocab.h" /* mp_vocab_colour */

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define W MP_HTML_W
#define PADL 104 /* left of the plot: the y labels, at a phone's 17px too */
#define PADR 12
#define PADT 14
#define PADB 28

/* Text into HTML, element content or a quoted attribute. */
void mp_html_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c, f); break;
		}
	}
}

/* A category's colour, the same in both charts and the legend: the
 * vocabulary's (vocab.h). */
const char *mp_html_colour(const char *cat)
{
	return mp_vocab_colour(cat);
}

static const char style[] =
	"<style>\n"
	":root{--fg:#1d2330;--mut:#5b6475;--line:#d5d9e0;--bg:#fff}\n"
	"*{box-sizing:border-box}\n"
	"body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);"
	"background:var(--bg);max-width:980px;margin:0 auto;padding:16px}\n"
	"h1{font-size:1.45em;margin:.2em 0}h2{font-size:1.15em;margin:1.4em 0 .5em;"
	"border-bottom:1px solid var(--line);padding-bottom:.2em}\n"
	".sub{color:var(--mut);overflow-wrap:anywhere}\n"
	".note{border-left:4px solid #e15759;background:#fdf1f1;padding:.4em .7em;margin:.5em 0}\n"
	".wrap{overflow-x:auto}\n"
	"table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}\n"
	"th,td{text-align:left;padding:.25em .5em;border-bottom:1px solid var(--line);"
	"vertical-align:top}\n"
	"td.n,th.n{text-align:right;white-space:nowrap}\n"
	"code{font:.9em ui-monospace,Menlo,Consolas,monospace;overflow-wrap:anywhere}\n"
	"table.summary th{width:34%;font-weight:600}\n"
	"svg.chart{width:100%;height:auto;display:block}\n"
	"svg text{font:12px system-ui,sans-serif;fill:var(--fg);paint-order:stroke;stroke:#fff;"
	"stroke-width:3px;stroke-linejoin:round}\n"
	"svg .axis{stroke:#8a93a3;stroke-width:1}\n"
	"svg .grid{stroke:var(--line);stroke-width:1}\n"
	"svg .limit-line{stroke:#c0392b;stroke-width:2}\n"
	"svg .high-line{stroke:#e67e22;stroke-width:2;stroke-dasharray:6 4}\n"
	"svg .throttle-line{stroke:#8e44ad;stroke-width:2;stroke-dasharray:2 3}\n"
	"svg .usage-line{fill:none;stroke:#1d2330;stroke-width:1.5}\n"
	"svg .usage-max-line{fill:none;stroke:#1d2330;stroke-width:1;stroke-dasharray:4 3}\n"
	"svg .oom-mark line{stroke:#c0392b;stroke-width:1.5;stroke-dasharray:3 3}\n"
	"svg .oom-mark path{fill:#c0392b}\n"
	".legend{display:flex;flex-wrap:wrap;gap:.3em 1em;margin:.4em 0;padding:0;"
	"list-style:none;color:var(--mut)}\n"
	".legend i{display:inline-block;width:.9em;height:.9em;margin-right:.3em;"
	"vertical-align:-.1em;border-radius:2px}\n"
	".wrap td code{white-space:nowrap}\n"
	"@media (max-width:600px){body{font-size:14px;padding:8px}th,td{padding:.2em .3em}"
	"svg text{font-size:17px}"
	"table.summary th{width:45%}}\n"
	"@media print{body{max-width:none;padding:0;font-size:11pt}.wrap{overflow:visible}"
	"section{break-inside:avoid}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"a{color:inherit}}\n"
	"</style>\n";

/* ---- the summary ------------------------------------------------------------------ */

static void row_start(FILE *f, const char *label)
{
	fprintf(f, "<tr><th>%s</th><td>", label);
}

static void row_size(FILE *f, const char *label, uint64_t v, const char *extra)
{
	char b[32];

	row_start(f, label);
	mp_html_esc(f, mp_render_usize(v, b, sizeof(b)));
	fprintf(f, "%s</td></tr>\n", extra ? extra : "");
}

static void limit_rows(const cJSON *cg, FILE *f, struct mp_rd *rd)
{
	struct mp_view_limits v;

	mp_view_limits(cg, rd, &v);
	row_size(f, "limit", v.limit, NULL);
	if (v.has_throttle) {
		row_start(f, "throttling point");
		mp_html_esc(f, mp_render_usize(v.throttle, (char[32]){ 0 }, 32));
		fputs(" (", f);
		mp_html_esc(f, v.throttle_kind ? v.throttle_kind : "throttle");
		fputs(")</td></tr>\n", f);
	}
	if (v.has_high && !v.high_null)
		row_size(f, "memory.high", v.high, NULL);
}

/* The overhead object as its view's table (views.h: its groups, as text
 * and markdown list them, or an older document's parts), its total named
 * "overhead" at the peak, "left after" once the probe exited. */
static void overhead(const cJSON *o, FILE *f, struct mp_rd *rd)
{
	fputs("<h2>What the overhead is made of</h2>\n", f);
	if (!o) {
		fputs("<p>This document has no breakdown of the overhead (the memprobe that made "
		      "it measured none); the categories below say where the growth went.</p>\n", f);
		return;
	}
	mp_view_lay_overhead(o, "\n<p>Left after the probe exited:</p>\n", mp_render_size,
			     mp_html_table, f, rd);
	fputc('\n', f);
}

/* The probe's nine fields, as rows (probe doc, or record's probe). */
static void nine_rows(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	struct mp_view_nine v;

	mp_view_nine(r, rd, &v);
	for (int i = 0; i < MP_VIEW_NINE_ROWS; i++) {
		row_start(f, v.rows[i].label);
		fputs(v.rows[i].strong ? "<b>" : "", f);
		mp_html_esc(f, v.rows[i].value);
		fprintf(f, "%s%s</td></tr>\n", v.rows[i].strong ? "</b>" : "", v.rows[i].extra);
	}
}

/* ---- the charts ------------------------------------------------------------------- */

/* |v|, INT64_MIN's included */
static uint64_t magnitude(int64_t v)
{
	return v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
}

/* A label of at most 22 characters, the rest as "…" (the full one in the
 * row's <title>), so that no label runs into the bars, at a phone's 17px
 * too. */
static void short_label(FILE *f, const char *s)
{
	char b[96];
	size_t n = strlen(s);

	if (n <= 22) {
		mp_html_esc(f, s);
		return;
	}
	snprintf(b, sizeof(b), "%.21s", s);
	while (strlen(b) && ((unsigned char)b[strlen(b) - 1] & 0xc0) == 0x80)
		b[strlen(b) - 1] = 0; /* not in the middle of a UTF-8 character */
	if (strlen(b) && ((unsigned char)b[strlen(b) - 1] & 0xc0) == 0xc0)
		b[strlen(b) - 1] = 0;
	mp_html_esc(f, b);
	fputs("…", f);
}

#define BAR_X 230          /* the bars start right of the labels */
#define BAR_ROOM (W - 330) /* the bars' width; 100 right of them for the value */
#define BAR_MIN 3.0        /* a non-zero bar is never thinner than this */

/*
 * Diverging bars: zero where the largest shrink leaves room for it, a
 * negative bar drawn to zero's left (−75 MiB must not look like +74 MiB),
 * a positive one to its right, both on one scale; a non-zero bar at least
 * BAR_MIN wide; the value right of the bar, or right of zero for a shrink
 * (where no bar is), so no label overlaps another or leaves the chart.
 */
void mp_html_bars(FILE *f, const char *cls, const char *row, const char *aria,
		  const struct mp_html_bar *bars, int n)
{
	uint64_t pos = 0, neg = 0;
	double zx, scale;
	char b[32];

	for (int i = 0; i < n; i++) {
		uint64_t m = magnitude(bars[i].bytes);

		if (bars[i].bytes < 0 && m > neg)
			neg = m;
		if (bars[i].bytes > 0 && m > pos)
			pos = m;
	}
	/* a shrink's bar, however small, stays clear of the labels */
	scale = (double)(BAR_ROOM - 2 * BAR_MIN) / (double)(pos + neg ? pos + neg : 1);
	zx = BAR_X + (neg ? BAR_MIN + scale * (double)neg : 0);
	fprintf(f, "<svg class=\"chart %s\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"%s\" "
		"data-zero-x=\"%.1f\">\n", cls, W, PADT + 26 * n + 6, aria, zx);
	for (int i = 0; i < n; i++) {
		int64_t g = bars[i].bytes;
		double bw = scale * (double)magnitude(g), x;
		int y = PADT + 26 * i;

		bw = g && bw < BAR_MIN ? BAR_MIN : bw;
		x = g < 0 ? zx - bw : zx;
		fprintf(f, "<g class=\"%s%s\"", row, g < 0 ? " negative" : "");
		if (bars[i].category) {
			fputs(" data-category=\"", f);
			mp_html_esc(f, bars[i].category);
			fputc('"', f);
		}
		fprintf(f, " data-bytes=\"%" PRId64 "\"><title>", g);
		mp_html_esc(f, bars[i].label);
		fprintf(f, " %s</title><text x=\"%d\" y=\"%d\" text-anchor=\"end\">", mp_fmt_sbytes(g, b,
			sizeof(b)), BAR_X - 6, y + 15);
		short_label(f, bars[i].label);
		fprintf(f, "</text><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"20\" fill=\"%s\"%s/>"
			"<text class=\"value\" x=\"%.1f\" y=\"%d\">%s</text></g>\n", x, y, bw,
			bars[i].fill, g < 0 ? " fill-opacity=\"0.55\" stroke=\"#5b6475\" "
			"stroke-dasharray=\"3 2\"" : "", (g < 0 ? zx : zx + bw) + 6, y + 15,
			mp_render_size(g, b, sizeof(b)));
	}
	fprintf(f, "<line class=\"zero\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>\n</svg>\n", zx,
		zx, PADT - 4, PADT + 26 * n);
}

/* One bar per category row with growth (the text report's rows). */
/* A category's growth as the bars draw it: none for a count below what
 * the kernel allows (below_floor: no figure, the table says why). */
static int64_t bar_growth(struct mp_rd *rd, const cJSON *it)
{
	if (mp_rd_item(rd, it, "below_floor", MP_RD_ABSENT) && mp_rd_bool(rd, it, "below_floor", 0))
		return 0;
	return mp_rd_s64v(rd, it, "growth_bytes");
}

static void bar_chart(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *cats = mp_rd_arr(rd, a, "categories", MP_RD_ABSENT), *it;
	struct mp_html_bar *bars = calloc((size_t)cJSON_GetArraySize(cats) + 1, sizeof(*bars));
	int n = 0;
	bool neg = false;

	if (!bars) {
		mp_rd_fail(rd, NULL, "categories", "out of memory");
		return;
	}
	cJSON_ArrayForEach(it, cats) {
		int64_t g;

		if (!mp_rd_is_obj(rd, it))
			goto out;
		g = bar_growth(rd, it);
		if (!g)
			continue;
		bars[n++] = (struct mp_html_bar){ .label = mp_rd_str(rd, it, "name", 0), .bytes = g };
		bars[n - 1].fill = mp_html_colour(bars[n - 1].label);
		bars[n - 1].category = bars[n - 1].label;
		neg |= g < 0;
	}
	fputs("<section><h2>Growth by category</h2>\n", f);
	if (!n) {
		fputs("<p>No category grew.</p></section>\n", f);
		goto out;
	}
	mp_html_bars(f, "bars", "bar", "growth by category", bars, n);
	fprintf(f, "<p class=\"sub\">Net growth of each memory.stat category over the span%s; "
		"file includes shmem, kernel includes pagetables, kernel_stack, slab, percpu, "
		"vmalloc and kernel_other.</p></section>\n", neg ? ", a shrink drawn left of zero, "
		"dashed" : "");
out:
	free(bars);
}

/* The timeline's stacked series: disjoint, so they add up to the usage;
 * shmem apart from file (the page cache drawn without it): a shared
 * segment is not page cache. */
static const char *const series[] = { "anon", "shmem", "file", "kernel", "sock" };
#define NR_SERIES 5
#define MAX_POINTS 2000 /* the timeline has at most 3073 rows (timeline.h): every Nth drawn */

struct tl {
	size_t n;           /* points kept */
	double *t, *v;      /* t[i] (ms), v[i * NR_SERIES + k] (bytes, >= 0) */
	double *usage;
	double *usage_max;  /* a folded row's highest usage; a sample's usage */
	size_t folded;      /* folded rows among the points */
	double t_max, y_max;
	bool drawn[NR_SERIES];
};

/* A series' figure of a row (views.h): a net shrink stacks as nothing. */
static double sample_cat(const struct mp_view_tl_row *r, const char *cat, struct mp_rd *rd)
{
	int64_t v;

	mp_view_tl_cat(r->obj, cat, rd, &v);
	return v > 0 ? (double)v : 0.0;
}

static int tl_read(const cJSON *doc, struct tl *tl, struct mp_rd *rd)
{
	struct mp_view_timeline v;
	size_t total, step;

	if (mp_view_timeline(doc, rd, &v))
		return 0;
	total = (size_t)v.n;
	step = total > MAX_POINTS ? (total + MAX_POINTS - 1) / MAX_POINTS : 1;
	tl->t = calloc(total / step + 2, sizeof(double));
	tl->usage = calloc(total / step + 2, sizeof(double));
	tl->usage_max = calloc(total / step + 2, sizeof(double));
	tl->v = calloc((total / step + 2) * NR_SERIES, sizeof(double));
	for (size_t i = 0; tl->t && tl->v && tl->usage && tl->usage_max && i < total; i++) {
		const struct mp_view_tl_row *r = &v.rows[i];
		double *x = &tl->v[tl->n * NR_SERIES], sum = 0;

		/* every step-th, and always the last */
		if (i % step && i + 1 != total)
			continue;
		tl->t[tl->n] = (double)r->t_ms;
		tl->usage[tl->n] = (double)r->usage;
		/* a folded row: its last sample drawn, and its highest usage */
		tl->usage_max[tl->n] = (double)r->usage_max;
		tl->folded += r->folded;
		for (int k = 0; k < NR_SERIES; k++) {
			x[k] = sample_cat(r, series[k], rd);
			if (!strcmp(series[k], "file")) /* shmem is drawn on its own */
				x[k] = x[k] > x[1] ? x[k] - x[1] : 0;
			sum += x[k];
			tl->drawn[k] |= x[k] > 0;
		}
		if (tl->t[tl->n] > tl->t_max)
			tl->t_max = tl->t[tl->n];
		if (sum > tl->y_max)
			tl->y_max = sum;
		if (tl->usage_max[tl->n] > tl->y_max)
			tl->y_max = tl->usage_max[tl->n];
		tl->n++;
	}
	mp_view_timeline_free(&v);
	return tl->t && tl->v && tl->usage && tl->usage_max ? 0 : -1;
}

#define PH 260 /* the timeline plot's height */

#define MAX_SPANS 64

struct plot {
	double t_max, y_top;
	/* where the OOM marks, the peak's dot and its label are: no limit's
	 * label there */
	double span_lo[MAX_SPANS], span_hi[MAX_SPANS];
	int spans;
};

static double px(const struct plot *p, double t)
{
	return PADL + (W - PADL - PADR) * (p->t_max > 0 ? t / p->t_max : 0.5);
}

static double py(const struct plot *p, double v)
{
	return PADT + PH - PH * v / p->y_top;
}

/* A horizontal line at a limit; one far above the data (a 24 GiB host's
 * MemTotal over a 100 MiB workload) is drawn along the top, said so. Its
 * label under the line: above it is the OOM marks' row. */
#define CHAR_W17 10.7 /* a character's width at a phone's 17px, at most */

static void span_add(struct plot *p, double lo, double hi)
{
	if (p->spans < MAX_SPANS) {
		p->span_lo[p->spans] = lo;
		p->span_hi[p->spans++] = hi;
	}
}

/* The first x from the left where a label w wide meets no mark. */
static double label_x(const struct plot *p, double w)
{
	for (double x = PADL + 4; x + w <= W - PADR; x += 16) {
		int i = 0;

		while (i < p->spans && (p->span_hi[i] < x - 4 || p->span_lo[i] > x + w + 4))
			i++;
		if (i == p->spans)
			return x;
	}
	return PADL + 4;
}

static void hline(FILE *f, const struct plot *p, const char *cls, const char *label, uint64_t v)
{
	bool above = (double)v > p->y_top;
	double y = above ? PADT : py(p, (double)v);
	char b[32], text[96];

	snprintf(text, sizeof(text), "%s %s%s", label, mp_fmt_bytes(v, b, sizeof(b)),
		 above ? " (above the chart)" : "");
	fprintf(f, "<g class=\"%s-g\"><line class=\"%s\" data-bytes=\"%" PRIu64 "\"%s x1=\"%d\" "
		"x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/><text x=\"%.1f\" y=\"%.1f\">%s</text></g>\n",
		cls, cls, v, above ? " data-off-scale=\"true\"" : "", PADL, W - PADR, y, y,
		label_x(p, CHAR_W17 * (double)strlen(text)), y + 14, text);
}

/* A chart figure back to bytes: 2^64 and beyond (a hand-made document's
 * limit times 1.05) is the largest, not undefined. */
static uint64_t to_u64(double v)
{
	return v >= 18446744073709549568.0 ? UINT64_MAX : v <= 0 ? 0 : (uint64_t)v;
}

static void axes(FILE *f, const struct plot *p)
{
	char b[32];

	for (int i = 0; i <= 4; i++) {
		double v = p->y_top * i / 4, y = py(p, v);

		fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PADL, W - PADR,
			y, y, PADL - 6, y + 4, mp_fmt_bytes(to_u64(v), b, sizeof(b)));
	}
	/* enough decimals that the five ticks differ (a 0.2 s recording's
	 * quarters are 0.05 s apart: "0.1 s" three times with one) */
	int dec = p->t_max >= 40000 ? 0 : p->t_max >= 400 ? 1 : p->t_max >= 40 ? 2 : 3;

	for (int i = 0; i <= 4; i++) {
		double t = p->t_max * i / 4;

		fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.*f s</text>\n",
			px(p, t), PADT + PH + 18, i == 0 ? "start" : i == 4 ? "end" : "middle",
			dec, t / 1000.0);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\"/>\n", PADL,
		W - PADR, PADT + PH, PADT + PH);
}

/* The stacked areas, bottom up in series[] order, and the usage above them. */
static void areas(FILE *f, const struct tl *tl, const struct plot *p)
{
	for (int k = 0; k < NR_SERIES; k++) {
		if (!tl->drawn[k])
			continue;
		fprintf(f, "<path class=\"series\" data-category=\"%s\" fill=\"%s\" "
			"fill-opacity=\"0.85\" d=\"", series[k], mp_html_colour(series[k]));
		for (size_t i = 0; i < tl->n; i++) {
			double up = 0;

			for (int j = 0; j <= k; j++)
				up += tl->v[i * NR_SERIES + j];
			fprintf(f, "%s%.1f,%.1f", i ? " L" : "M", px(p, tl->t[i]), py(p, up));
		}
		for (size_t i = tl->n; i-- > 0;) {
			double low = 0;

			for (int j = 0; j < k; j++)
				low += tl->v[i * NR_SERIES + j];
			fprintf(f, " L%.1f,%.1f", px(p, tl->t[i]), py(p, low));
		}
		fputs(" Z\"/>\n", f);
	}
	fputs("<polyline class=\"usage-line\" points=\"", f);
	for (size_t i = 0; i < tl->n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, tl->t[i]), py(p, tl->usage[i]));
	fputs("\"/>\n", f);
	if (!tl->folded)
		return;
	fputs("<polyline class=\"usage-max-line\" points=\"", f);
	for (size_t i = 0; i < tl->n; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(p, tl->t[i]), py(p, tl->usage_max[i]));
	fputs("\"/>\n", f);
}

#define OOM_ROWS 4     /* label rows above the time axis */
#define CHAR_W 7.5     /* a label character's width at the charts' 12px, at most */

/* A label's side of its mark: right of it where it fits, else left, so
 * none is cut at the chart's edge ("OOM kill: redis-server[28099]" was). */
static bool label_left(double x, size_t chars)
{
	return x + 4 + CHAR_W * (double)chars > W - PADR;
}

/*
 * Each kill a dashed line and a triangle; its label on the first of
 * OOM_ROWS rows where it overlaps no other label, else none (its <title>
 * says it): hundreds of kills draw as marks, never as a smear of text.
 */
static void oom_marks(const cJSON *doc, FILE *f, const struct plot *p, struct mp_rd *rd)
{
	double end[OOM_ROWS];
	const cJSON *it;
	char label[96];

	for (int r = 0; r < OOM_ROWS; r++)
		end[r] = -1e9;
	cJSON_ArrayForEach(it, mp_rd_arr(rd, doc, "oom_kills", 0)) {
		double x, from, w;
		int row = 0;
		bool left, known;
		const char *comm;
		uint64_t pid;

		if (!mp_rd_is_obj(rd, it))
			return;
		x = px(p, (double)mp_rd_u64v(rd, it, "t_ms"));
		if ((known = mp_view_oom_victim(it, rd, &pid, &comm)))
			snprintf(label, sizeof(label), "OOM kill: %.48s[%" PRIu64 "]", comm, pid);
		else
			snprintf(label, sizeof(label), "OOM kill: " MP_VIEW_OOM_NO_VICTIM);
		w = CHAR_W * (double)strlen(label);
		left = label_left(x, strlen(label));
		from = left ? x - 4 - w : x + 4;
		while (row < OOM_ROWS && from < end[row] + 8)
			row++;
		/* no data-pid where no victim is known: none, not 0 */
		fputs("<g class=\"oom-mark\"", f);
		if (known)
			fprintf(f, " data-pid=\"%" PRIu64 "\"", pid);
		fprintf(f, " data-t-ms=\"%" PRIu64 "\"><title>", mp_rd_u64v(rd, it, "t_ms"));
		mp_html_esc(f, label);
		fprintf(f, "</title><line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/>"
			"<path d=\"M%.1f,%d l-6,-10 h12 z\"/>", x, x, PADT, PADT + PH, x, PADT + 10);
		if (row < OOM_ROWS) {
			end[row] = from + w;
			fprintf(f, "<text class=\"oom-label\" x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">",
				left ? x - 4 : x + 4, PADT + PH - 8 - 15 * row, left ? "end" : "start");
			mp_html_esc(f, label);
			fputs("</text>", f);
		}
		fputs("</g>\n", f);
	}
}

static void legend(FILE *f, const struct tl *tl)
{
	fputs("<ul class=\"legend\">", f);
	for (int k = 0; k < NR_SERIES; k++)
		if (tl->drawn[k])
			fprintf(f, "<li><i style=\"background:%s\"></i>%s</li>", mp_html_colour(series[k]),
				!strcmp(series[k], "file") ? "file (page cache, without shmem)" :
				series[k]);
	fputs("<li><i style=\"background:#1d2330;height:2px\"></i>usage</li>"
	      "<li><i style=\"background:#c0392b;height:3px\"></i>limit</li>"
	      "<li><i style=\"background:#c0392b;width:2px\"></i>OOM kill</li></ul>\n", f);
}

/* The peak (the kernel's counter, or a sample between the timeline's):
 * within the chart, and marked. */
static void peak_read(const cJSON *doc, struct plot *p, struct mp_rd *rd)
{
	const cJSON *pk = mp_rd_obj(rd, doc, "peak", 0);
	uint64_t v, t;

	if (mp_rd_u64(rd, pk, "usage_bytes", MP_RD_ABSENT, &v) && (double)v > p->y_top)
		p->y_top = (double)v;
	if (mp_rd_u64(rd, pk, "t_ms", MP_RD_ABSENT, &t) && (double)t > p->t_max)
		p->t_max = (double)t;
}

/* The peak's label: beside its dot, on the side where it fits; clear of
 * the OOM labels' rows, above the dot where it would meet them. */
static double peak_label(const struct plot *p, uint64_t v, uint64_t t, const char *b, bool *left)
{
	double x = px(p, (double)t), y = py(p, (double)v) + 28;

	*left = label_left(x + 4, strlen(b) + 5);
	if (y > PADT + PH - 8 - 15 * OOM_ROWS)
		y = py(p, (double)v) - 10 < PADT + 12 ? PADT + 12 : py(p, (double)v) - 10;
	return y;
}

/* Where the marks and the peak's label are (struct plot's spans). */
static void mark_spans(const cJSON *doc, struct plot *p, struct mp_rd *rd)
{
	const cJSON *pk = mp_rd_obj(rd, doc, "peak", 0), *it;
	uint64_t v, t;
	char b[32];
	bool left;

	if (mp_rd_u64(rd, pk, "usage_bytes", MP_RD_ABSENT, &v) && mp_rd_u64(rd, pk, "t_ms", 0, &t)) {
		double x = px(p, (double)t), w = CHAR_W17 * (double)(strlen(mp_fmt_bytes(v, b,
								sizeof(b))) + 5);

		peak_label(p, v, t, b, &left);
		span_add(p, left ? x - 8 - w : x - 8, left ? x + 8 : x + 8 + w);
	}
	cJSON_ArrayForEach(it, mp_rd_arr(rd, doc, "oom_kills", 0)) {
		double x;

		if (!mp_rd_is_obj(rd, it))
			return;
		x = px(p, (double)mp_rd_u64v(rd, it, "t_ms"));
		span_add(p, x - 8, x + 8);
	}
}

static void peak_mark(const cJSON *doc, FILE *f, const struct plot *p, struct mp_rd *rd)
{
	const cJSON *pk = mp_rd_obj(rd, doc, "peak", 0);
	uint64_t v, t;
	double x, y;
	bool left;
	char b[32];

	if (!mp_rd_u64(rd, pk, "usage_bytes", MP_RD_ABSENT, &v) ||
	    !mp_rd_u64(rd, pk, "t_ms", 0, &t))
		return;
	mp_fmt_bytes(v, b, sizeof(b));
	x = px(p, (double)t);
	y = peak_label(p, v, t, b, &left);
	fprintf(f, "<g class=\"peak-mark\" data-bytes=\"%" PRIu64 "\" data-t-ms=\"%" PRIu64 "\">"
		"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1d2330\"/><text x=\"%.1f\" "
		"y=\"%.1f\" text-anchor=\"%s\">peak %s</text></g>\n", v, t, x, py(p, (double)v),
		left ? x - 8 : x + 8, y, left ? "end" : "start", b);
}

/* A limit, memory.high or throttling point worth a line: set, and not
 * so far above the data that the chart would be a flat strip. */
static bool in_scale(double v, double y_max)
{
	return v > 0 && (y_max <= 0 || v <= 4 * y_max);
}

static void timeline_chart(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *t = mp_rd_obj(rd, doc, "target", 0);
	uint64_t limit = mp_rd_u64v(rd, t, "effective_limit_bytes"), high = 0, thr = 0;
	struct tl tl = { 0 };
	struct plot p;

	mp_rd_u64(rd, t, "high_bytes", MP_RD_NULL | MP_RD_ABSENT, &high);
	mp_rd_u64(rd, t, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, &thr);
	if (tl_read(doc, &tl, rd)) {
		mp_rd_fail(rd, NULL, "timeline", "out of memory");
		goto out;
	}
	p.t_max = tl.t_max;
	p.y_top = tl.y_max;
	peak_read(doc, &p, rd);
	for (int i = 0; i < 3; i++) {
		double l = (double)(i == 0 ? limit : i == 1 ? high : thr);

		if (in_scale(l, tl.y_max) && l > p.y_top)
			p.y_top = l;
	}
	p.y_top = p.y_top > 0 ? p.y_top * 1.05 : 1;
	p.spans = 0;
	mark_spans(doc, &p, rd);
	fputs("<section><h2>Timeline</h2>\n", f);
	fprintf(f, "<svg class=\"chart timeline\" viewBox=\"0 0 %d %d\" role=\"img\" "
		"aria-label=\"usage over time by category\">\n", W, PADT + PH + PADB);
	axes(f, &p);
	areas(f, &tl, &p);
	hline(f, &p, "limit-line", "limit", limit);
	if (high > 0)
		hline(f, &p, "high-line", "memory.high", high);
	if (thr > 0)
		hline(f, &p, "throttle-line", "throttling point", thr);
	oom_marks(doc, f, &p, rd);
	peak_mark(doc, f, &p, rd);
	fputs("</svg>\n", f);
	legend(f, &tl);
	fprintf(f, "<p class=\"sub\">%zu of %d rows drawn; each category the kernel's figure "
		"where it keeps one, else BPF's growth.", tl.n,
		cJSON_GetArraySize(mp_rd_arr(rd, doc, "timeline", 0)));
	if (tl.folded)
		fprintf(f, " %zu of them fold many samples each (the older part of the recording): "
			"their last sample is drawn, and their highest usage as a dashed line.",
			tl.folded);
	fputs("</p></section>\n", f);
out:
	free(tl.t);
	free(tl.v);
	free(tl.usage);
	free(tl.usage_max);
}

/*
 * The probe's usage at the peak as one stacked bar against the limit: the
 * usage before, the probe's allocation, then the overhead (peak − before
 * − allocated) in its own pieces — the workload's growth, the probe's
 * kernel memory, unexplained — each at least BAR_MIN wide; what went down
 * (the kernel's reclaim of the workload's cache, a negative piece) on a
 * thin row under the bar, leftwards. The limit, memory.high and the
 * throttling point as vertical lines; the figures in the legend below,
 * where no label can be cut. Then the overhead's parts at their own scale.
 */
struct hbar {
	double top; /* bytes at the right edge */
	int y;
};

static double hx(const struct hbar *hb, double v)
{
	return PADR + (W - 2 * PADR) * (v <= 0 ? 0.0 : v > hb->top ? 1.0 : v / hb->top);
}

/* A segment from..from+bytes (bytes < 0: leftwards), at least BAR_MIN wide. */
static double hseg(FILE *f, const struct hbar *hb, const char *cls, const char *part, double from,
		   double bytes, const char *fill, int y, int h)
{
	double x0 = hx(hb, bytes < 0 ? from + bytes : from), x1 = hx(hb, bytes < 0 ? from :
								   from + bytes);

	if (x1 - x0 < BAR_MIN)
		x1 = x0 + BAR_MIN;
	fprintf(f, "<rect class=\"%s\"%s%s%s data-bytes=\"%.0f\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
		"height=\"%d\" fill=\"%s\"%s/>\n", cls, part ? " data-part=\"" : "", part ? part : "",
		part ? "\"" : "", bytes, x0, y, x1 - x0, h, fill, bytes < 0 ?
		" fill-opacity=\"0.55\" stroke=\"#5b6475\" stroke-dasharray=\"3 2\"" : "");
	return bytes;
}

static void vline(FILE *f, const struct hbar *hb, const char *cls, const char *label, uint64_t v,
		  int row)
{
	double x = hx(hb, (double)v);
	char b[32];
	bool left;

	mp_fmt_bytes(v, b, sizeof(b));
	left = label_left(x, strlen(label) + strlen(b) + 1);
	fprintf(f, "<g class=\"%s-g\"><line class=\"%s\" data-bytes=\"%" PRIu64 "\"%s x1=\"%.1f\" "
		"x2=\"%.1f\" y1=\"%d\" y2=\"%d\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%s %s"
		"</text></g>\n", cls, cls, v, (double)v > hb->top ? " data-off-scale=\"true\"" : "",
		x, x, hb->y - 6, hb->y + 50, left ? x - 4 : x + 4, hb->y + 66 + 16 * row,
		left ? "end" : "start", label, b);
}

/* The overhead's pieces as the document has them (older documents: one). */
struct piece {
	const char *part, *words, *fill;
	double bytes;
};

static int pieces(const cJSON *r, struct piece *pc, struct mp_rd *rd)
{
	const cJSON *o = mp_rd_obj(rd, r, "overhead", MP_RD_ABSENT), *it;
	double work = 0;
	int n = 0;

	if (!o) {
		pc[0] = (struct piece){ "overhead", "overhead", "#e15759",
					(double)mp_rd_s64v(rd, r, "overhead_bytes") };
		return 1;
	}
	cJSON_ArrayForEach(it, mp_rd_arr(rd, o, "parts", 0))
		if (mp_rd_is_obj(rd, it))
			work += (double)mp_rd_s64v(rd, it, "bytes");
	pc[n++] = (struct piece){ "workload", "the workload's growth", "#76b7b2", work };
	pc[n++] = (struct piece){ "probe-kernel", "the probe's own cost", "#f28e2b",
				  (double)mp_rd_s64v(rd, o, "probe_kernel_bytes") };
	if (mp_rd_item(rd, o, "reclaimed_bytes", MP_RD_ABSENT))
		pc[n++] = (struct piece){ "reclaimed", "reclaimed by the kernel", "#59a14f",
					  (double)mp_rd_s64v(rd, o, "reclaimed_bytes") };
	pc[n++] = (struct piece){ "unexplained", "unexplained", "#bab0ac",
				  (double)mp_rd_s64v(rd, o, "unexplained_bytes") };
	return n;
}

static void probe_legend(FILE *f, double before, double alloc, double ovh, const struct piece *pc,
			 int n)
{
	char b[32];

	fprintf(f, "<ul class=\"legend\"><li><i style=\"background:#c9ced6\"></i>usage before %s</li>",
		mp_fmt_bytes(to_u64(before), b, sizeof(b)));
	fprintf(f, "<li><i style=\"background:#4e79a7\"></i>the probe's allocation %s</li>",
		mp_fmt_bytes(to_u64(alloc), b, sizeof(b)));
	fprintf(f, "<li><b>overhead %s:</b></li>", mp_fmt_sbytes((int64_t)ovh, b, sizeof(b)));
	for (int i = 0; i < n; i++)
		if (pc[i].bytes != 0)
			fprintf(f, "<li><i style=\"background:%s%s\"></i>%s %s</li>", pc[i].fill,
				pc[i].bytes < 0 ? ";opacity:.55" : "", pc[i].words,
				mp_fmt_sbytes((int64_t)pc[i].bytes, b, sizeof(b)));
	fputs("</ul>\n", f);
}

/* One row of the inset per group (older documents: per part), per part of
 * the probe's own cost and of the reclaim, and the unexplained. */
static int inset_rows(const cJSON *o, struct mp_html_bar *bars, char (*names)[96], int max,
		      struct mp_rd *rd)
{
	const cJSON *groups = mp_rd_arr(rd, o, "groups", MP_RD_ABSENT), *it, *list;
	static const char *const kinds[2][2] = { { "probe_kernel_parts", "the probe's " },
						 { "reclaimed_parts", "reclaimed " } };
	int n = 0;

	list = groups ? groups : mp_rd_arr(rd, o, "parts", 0);
	cJSON_ArrayForEach(it, list) {
		const cJSON *c0 = groups ? cJSON_GetArrayItem(mp_rd_arr(rd, it, "categories", 0), 0) :
				  it;
		uint64_t pid = 0;

		if (n == max || !mp_rd_is_obj(rd, it) || !c0 || !mp_rd_is_obj(rd, c0))
			break;
		mp_rd_u64(rd, it, "pid", MP_RD_NULL, &pid);
		if (groups)
			mp_proc_group_name(mp_rd_str(rd, it, "comm", 0), mp_rd_str(rd, it, "role", 0),
					   (unsigned)mp_rd_u64v(rd, it, "processes"), (uint32_t)pid,
					   names[n], sizeof(names[n]));
		else
			snprintf(names[n], sizeof(names[n]), "%s %s", mp_rd_str(rd, it, "comm", 0),
				 mp_rd_str(rd, it, "category", 0));
		bars[n] = (struct mp_html_bar){ names[n], mp_rd_s64v(rd, it, "bytes"),
			mp_html_colour(mp_rd_str(rd, c0, "category", 0)), NULL };
		n++;
	}
	for (int k = 0; k < 2; k++)
		cJSON_ArrayForEach(it, mp_rd_arr(rd, o, kinds[k][0], MP_RD_ABSENT)) {
			if (n == max || !mp_rd_is_obj(rd, it))
				break;
			snprintf(names[n], sizeof(names[n]), "%s%s", kinds[k][1],
				 mp_rd_str(rd, it, "category", 0));
			bars[n] = (struct mp_html_bar){ names[n], mp_rd_s64v(rd, it, "bytes"),
				mp_html_colour(mp_rd_str(rd, it, "category", 0)), NULL };
			n++;
		}
	if (n < max)
		bars[n++] = (struct mp_html_bar){ "unexplained", mp_rd_s64v(rd, o, "unexplained_bytes"),
						  "#bab0ac", NULL };
	return n;
}

#define INSET_MAX 16

/* The overhead's parts at their own scale: a few MiB of page tables beside
 * a GiB allocation would be a hairline on the bar above. */
static void overhead_inset(const cJSON *o, FILE *f, struct mp_rd *rd)
{
	struct mp_html_bar bars[INSET_MAX];
	char names[INSET_MAX][96];
	int n;

	if (!o)
		return;
	n = inset_rows(o, bars, names, INSET_MAX, rd);
	fputs("<h3>The overhead's parts, at their own scale</h3>\n", f);
	mp_html_bars(f, "overhead-parts", "part", "the overhead's parts", bars, n);
	fputs("<p class=\"sub\">The workload's processes by name and role, the probe's own kernel "
	      "memory, what the kernel reclaimed of the workload's memory to make room, and what "
	      "no vector holds; a shrink is drawn left of zero, dashed.</p>\n", f);
}

static void probe_chart(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	const cJSON *t = mp_rd_obj(rd, r, "target", 0);
	uint64_t limit = mp_rd_u64v(rd, t, "effective_limit_bytes"), high = 0, thr = 0;
	double before = (double)mp_rd_u64v(rd, r, "usage_before_bytes");
	double alloc = (double)mp_rd_u64v(rd, r, "allocated_bytes"), at, down, top;
	double peak = (double)mp_rd_u64v(rd, r, "usage_peak_bytes"), ovh = 0;
	struct hbar hb = { .y = 24 };
	struct piece pc[4];
	int n = pieces(r, pc, rd);

	mp_rd_u64(rd, t, "high_bytes", MP_RD_NULL | MP_RD_ABSENT, &high);
	mp_rd_u64(rd, t, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, &thr);
	top = before + alloc;
	for (int i = 0; i < n; i++) {
		top += pc[i].bytes > 0 ? pc[i].bytes : 0;
		ovh += pc[i].bytes;
	}
	top = peak > top ? peak : top;
	hb.top = (in_scale((double)limit, top) && (double)limit > top ? (double)limit : top) * 1.05;
	if (hb.top <= 0)
		hb.top = 1;
	fputs("<section><h2>The usage at the peak, against the limit</h2>\n", f);
	fprintf(f, "<svg class=\"chart usage\" viewBox=\"0 0 %d 136\" role=\"img\" "
		"aria-label=\"usage at the peak: before, the probe's allocation, the overhead\">\n", W);
	hseg(f, &hb, "base", NULL, 0, before, "#c9ced6", hb.y, 34);
	hseg(f, &hb, "alloc", NULL, before, alloc, "#4e79a7", hb.y, 34);
	at = before + alloc;
	for (int i = 0; i < n; i++)
		if (pc[i].bytes > 0)
			at += hseg(f, &hb, "overhead", pc[i].part, at, pc[i].bytes, pc[i].fill, hb.y, 34);
	down = at;
	for (int i = 0; i < n; i++)
		if (pc[i].bytes < 0)
			down += hseg(f, &hb, "overhead negative", pc[i].part, down, pc[i].bytes,
				     pc[i].fill, hb.y + 38, 10);
	/* above the bar, ending at the peak; starting there when it is near the left */
	fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">peak %s</text>\n", hx(&hb, peak),
		hb.y - 8, hx(&hb, peak) < 16 * CHAR_W ? "start" : "end",
		mp_fmt_bytes(to_u64(peak), (char[32]){ 0 }, 32));
	vline(f, &hb, "limit-line", "limit", limit, 0);
	if (high)
		vline(f, &hb, "high-line", "memory.high", high, 1);
	if (thr)
		vline(f, &hb, "throttle-line", "throttling point", thr, 2);
	fputs("</svg>\n", f);
	probe_legend(f, before, alloc, ovh, pc, n);
	overhead_inset(mp_rd_obj(rd, r, "overhead", MP_RD_ABSENT), f, rd);
	fputs("</section>\n", f);
}

/* ---- the tables ------------------------------------------------------------------- */

/* In a container, the host's pid beside the container's. */
void mp_html_who(FILE *f, const cJSON *tk, struct mp_rd *rd)
{
	uint64_t pid = 0, host = 0;

	fputs("<code>", f);
	mp_html_esc(f, mp_rd_str(rd, tk, "comm", 0));
	mp_rd_u64(rd, tk, "pid", MP_RD_NULL, &pid);
	if (pid && mp_rd_u64(rd, tk, "host_pid", MP_RD_NULL | MP_RD_ABSENT, &host) && host != pid)
		fprintf(f, "[%" PRIu64 ", host %" PRIu64 "]", pid, host);
	else if (pid)
		fprintf(f, "[%" PRIu64 "]", pid);
	fputs("</code>", f);
}

void mp_html_oom_who(FILE *f, const struct mp_view_oom *k, struct mp_rd *rd)
{
	if (k->victim_known)
		mp_html_who(f, k->obj, rd);
	else
		fputs("<span class=\"sub\">" MP_VIEW_OOM_NO_VICTIM "</span>", f);
}

/* A span of a view's table (views.h): a frame in <code>. */
static void span(const struct mp_view_span *s, FILE *f, struct mp_rd *rd)
{
	switch (s->kind) {
	case MP_SPAN_FRAME: fputs(s->caller ? "<br><code>" : "<code>", f);
		mp_html_esc(f, s->s);
		fputs("</code>", f);
		break;
	case MP_SPAN_WHO: mp_html_who(f, s->obj, rd); break;
	case MP_SPAN_TEXT: fputs(s->s ? s->s : "", f); break;
	default: mp_html_esc(f, s->s); break;
	}
}

/* A view's table in a scrolling wrap: a total's cells <th>. A table that
 * ends on a total closes on its line. */
void mp_html_table(const struct mp_view_table *t, FILE *f, struct mp_rd *rd)
{
	int rows = mp_view_table_rows(t);

	fprintf(f, "<div class=\"wrap\"><table class=\"%s\"><tr>", t->cls);
	for (int c = 0; c < t->ncols; c++)
		fprintf(f, "<th%s>%s</th>", t->numeric & 1u << c ? " class=\"n\"" : "", t->head[c]);
	fputs("</tr>\n", f);
	for (int i = 0; i < t->ncells; i++) {
		const struct mp_view_cell *c = &t->cells[i];
		const char *tag = c->strong ? "th" : "td";
		int col = i % t->ncols;

		fprintf(f, "%s<%s%s>", col ? "" : "<tr>", tag,
			c->n && t->numeric & 1u << col ? " class=\"n\"" : "");
		mp_view_cell_spans(t, c, span, f, rd);
		fprintf(f, "</%s>", tag);
		if (col == t->ncols - 1)
			fputs(i / t->ncols < rows - 1 || !t->cells[i - col].strong ? "</tr>\n" : "</tr>", f);
	}
	fputs("</table></div>", f);
}

static void categories_table(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	struct mp_view_table t;
	char b1[32];

	if (mp_view_cats(a, rd, mp_render_size, 0, &v))
		return;
	fputs("<section><h2>Where the cgroup's growth went</h2>\n<p>Usage ", f);
	mp_html_esc(f, mp_render_size(v.measured, b1, sizeof(b1)));
	fputs(" ", f);
	mp_html_esc(f, v.span);
	fputs(".</p>\n", f);
	mp_view_lay(mp_view_cats_table(&v, mp_render_size, rd, &t), &t, mp_html_table, f, rd);
	fputs("</section>\n", f);
	mp_view_cats_free(&v);
}

static void paths_table(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_paths v;
	struct mp_view_table t;

	if (mp_view_paths(a, rd, 0, &v))
		return;
	fputs("<section><h2>Kernel paths</h2>\n", f);
	if (v.n == 0)
		fprintf(f, "<p>None recorded (%s).</p>\n", mp_view_paths_none(a, rd));
	else
		mp_view_lay(mp_view_paths_table(&v, mp_render_size, rd, &t), &t, mp_html_table, f, rd);
	fputs("</section>\n", f);
	mp_view_paths_free(&v);
}

static void hooks_table(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_hooks v;
	struct mp_view_table t;

	if (mp_view_hooks(a, rd, &v))
		return;
	fputs("<section><h2>Hooks</h2>\n", f);
	mp_view_lay(mp_view_hooks_table(&v, rd, &t), &t, mp_html_table, f, rd);
	fputc('\n', f);
	for (int i = 0; i < v.nmissing; i++) {
		fputs("<p class=\"sub\">attribution missing: ", f);
		mp_html_esc(f, v.missing[i]);
		fputs("</p>\n", f);
	}
	mp_view_hooks_free(&v);
	mp_html_lost(a, f, rd);
	fputs("</section>\n", f);
}

static void oom_table(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_ooms v;
	char b[32];

	if (mp_view_ooms(doc, rd, &v))
		return;
	if (!v.n) {
		mp_view_ooms_free(&v);
		return;
	}
	fputs("<section><h2>OOM kills</h2>\n<div class=\"wrap\"><table class=\"oom-kills\"><tr>"
	      "<th class=\"n\">t (s)</th><th>task</th><th class=\"n\">usage</th></tr>\n", f);
	for (int i = 0; i < v.n; i++) {
		fprintf(f, "<tr><td class=\"n\">%.1f</td><td>", v.rows[i].t_ms / 1000.0);
		mp_html_oom_who(f, &v.rows[i], rd);
		fprintf(f, "</td><td class=\"n\">%s %s</td></tr>\n",
			mp_render_usize(v.rows[i].usage, b, sizeof(b)),
			v.rows[i].at_kill ? "at the kill" : "(last sample before it)");
	}
	fputs("</table></div>\n", f);
	mp_html_oom_vectors(&v, f, rd);
	fputs("</section>\n", f);
	mp_view_ooms_free(&v);
}

/* ---- the page --------------------------------------------------------------------- */

/* The document for programs: '<' as \u003c (only strings hold one), so
 * nothing in it can close the script element. */
static void embed(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	char *s = cJSON_PrintUnformatted(doc);

	if (!s) {
		mp_rd_fail(rd, NULL, NULL, "out of memory printing it");
		return;
	}
	fputs("<script type=\"application/json\" id=\"memprobe-report\">", f);
	for (const char *p = s; *p; p++) {
		if (*p == '<')
			fputs("\\u003c", f);
		else
			fputc(*p, f);
	}
	fputs("</script>\n", f);
	cJSON_free(s);
}

static void page_head(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	const cJSON *h = mp_rd_obj(rd, doc, "host", 0);
	const char *dir = mp_rd_str(rd, mp_rd_obj(rd, doc, "target", 0), "dir", 0);
	const char *k = kind == MP_DOC_PROBE ? "probe" : "record";

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"memprobe\">\n", f);
	fprintf(f, "<title>memprobe %s: ", k);
	mp_html_esc(f, dir);
	fprintf(f, "</title>\n%s</head>\n<body class=\"%s\">\n<h1>memprobe %s</h1>\n<p class=\"sub\">"
		"<code>", style, k, k);
	mp_html_esc(f, dir);
	fputs("</code><br>host <code>", f);
	mp_html_esc(f, mp_rd_str(rd, h, "hostname", 0));
	fputs("</code>, kernel <code>", f);
	mp_html_esc(f, mp_rd_str(rd, h, "kernel_release", 0));
	fputs("</code>, cgroup ", f);
	mp_html_esc(f, mp_rd_str(rd, h, "cgroup_mode", 0));
	fputs(", memprobe ", f);
	mp_html_esc(f, mp_rd_str(rd, mp_rd_obj(rd, doc, "generator", 0), "version", 0));
	fputs(", ", f);
	mp_html_esc(f, mp_rd_str(rd, doc, "created", 0));
	fputs("</p>\n", f);
}

static void note(FILE *f, const char *text)
{
	fputs("<p class=\"note\">", f);
	mp_html_esc(f, text);
	fputs("</p>\n", f);
}

static void probe_summary(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	struct mp_view_verdicts v;

	mp_view_verdicts(r, rd, &v);
	if (v.note)
		note(f, v.note);
	if (v.interrupted)
		note(f, "Interrupted: the probe was stopped by a signal; figures are partial.");
	if (v.killed)
		note(f, "Killed: the probe process was killed from outside memprobe; figures are "
		     "partial.");
	if (v.oom_killed)
		note(f, "The probe was OOM-killed.");
	fputs("<section><h2>Summary</h2>\n<table class=\"summary\">\n", f);
	limit_rows(mp_rd_obj(rd, r, "target", 0), f, rd);
	mp_html_probe_facts(r, f, rd);
	nine_rows(r, f, rd);
	mp_html_faults_row(mp_rd_obj(rd, r, "attribution", 0), f, rd);
	fputs("</table></section>\n", f);
	overhead(mp_rd_obj(rd, r, "overhead", MP_RD_ABSENT), f, rd);
}

static void record_summary(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *run = mp_rd_obj(rd, doc, "run", 0);
	const cJSON *cmd = mp_rd_arr(rd, run, "command", MP_RD_ABSENT), *a;
	const cJSON *p = mp_rd_obj(rd, doc, "probe", MP_RD_ABSENT);
	struct mp_view_run r;

	mp_view_run(doc, rd, &r);

	fputs("<section><h2>Summary</h2>\n<table class=\"summary\">\n", f);
	if (cmd) {
		row_start(f, "command");
		fputs("<code>", f);
		cJSON_ArrayForEach(a, cmd) {
			mp_html_esc(f, mp_rd_elem_str(rd, a));
			fputc(' ', f);
		}
		fputs("</code></td></tr>\n", f);
	}
	row_start(f, "ended by");
	mp_html_esc(f, r.ended_by);
	fprintf(f, " after %.1f s", r.duration_ms / 1000.0);
	if (r.has_exit)
		fprintf(f, " (exit status %d)", (int)r.exit_status);
	else if (r.has_signal)
		fprintf(f, " (killed by signal %d)", (int)r.signal);
	fputs("</td></tr>\n", f);
	limit_rows(mp_rd_obj(rd, doc, "target", 0), f, rd);
	if (r.has_peak)
		row_size(f, "peak", r.peak, NULL);
	fprintf(f, "<tr><th>OOM kills</th><td>%d</td></tr>\n", r.ooms);
	mp_html_faults_row(mp_rd_obj(rd, doc, "attribution", 0), f, rd);
	if (p && !mp_rd_str(rd, p, "error", MP_RD_ABSENT)) {
		fputs("<tr><th colspan=\"2\">the probe (--probe-at)</th></tr>\n", f);
		nine_rows(p, f, rd);
	}
	fputs("</table></section>\n", f);
	if (p && !mp_rd_str(rd, p, "error", MP_RD_ABSENT))
		overhead(mp_rd_obj(rd, p, "overhead", MP_RD_ABSENT), f, rd);
}

static void render_html(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	const cJSON *a = mp_rd_obj(rd, doc, "attribution", 0);
	bool bpf = mp_rd_item(rd, a, "hooks", MP_RD_ABSENT) != NULL;

	page_head(doc, kind, f, rd);
	if (kind == MP_DOC_PROBE)
		probe_summary(doc, f, rd);
	else
		record_summary(doc, f, rd);
	if (kind == MP_DOC_PROBE && bpf)
		probe_chart(doc, f, rd);
	if (bpf)
		bar_chart(a, f, rd);
	if (kind == MP_DOC_RECORD) {
		timeline_chart(doc, f, rd);
		oom_table(doc, f, rd);
	}
	if (bpf) {
		categories_table(a, f, rd);
		paths_table(a, f, rd);
		mp_html_not_charged(a, f, rd);
	}
	mp_html_pinned(mp_rd_obj(rd, doc, "pinned", MP_RD_NULL | MP_RD_ABSENT), f, rd);
	hooks_table(a, f, rd);
	embed(doc, f, rd);
	fputs("</body></html>\n", f);
}

const struct mp_renderer mp_renderer_html = {
	.name = "html",
	.about = "one page with charts",
	.kinds = MP_DOC_PROBE | MP_DOC_RECORD,
	.render = render_html,
};
