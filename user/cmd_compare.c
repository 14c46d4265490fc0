// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe compare: probe or record reports side by side (compare.c builds
 * the compare document, compare_render.c renders it). Like every command,
 * what it prints is rendered from its document as `memprobe report` of the
 * saved compare document would render it.
 */
#include "cmd_compare.h"
#include "cli.h"
#include "compare.h"
#include "doc.h"
#include "render.h"
#include "json.h"
#include "out.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_THRESHOLD = MP_OPT_CMD };

static const struct mp_cli_opt compare_opts[] = {
	MP_CLI_OPT_FORMAT("{compare}"),
	{ "threshold", 't', "PCT", "mark a difference from the first report beyond PCT percent "
	  "of it", "10", OPT_THRESHOLD },
	MP_CLI_OPT_OUTPUT,
	MP_CLI_OPT_HELP,
	{ 0 },
};

static int compare_opt(void *ctx, int id, const char *arg)
{
	double *pct = ctx;
	char *end;

	if (id != OPT_THRESHOLD)
		return 0;
	errno = 0;
	*pct = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*pct) || *pct < 0 || *pct > 1e6)
		return mp_cli_bad("compare", "--threshold %s: not a percentage; give one from 0 to "
				  "1000000, such as 10 or 2.5", arg);
	return 0;
}

static const struct mp_cli_cmd compare_cmd = {
	.name = "compare",
	/* FILE: a probe or record report memprobe wrote with --format json */
	.synopsis = "A.json [B.json ...] [--threshold PCT] [-o OUT]\n"
		    " [--format {compare}]",
	.opts = compare_opts,
	.operands = true,
	.kind = "compare",
	.opt = compare_opt,
};

/* The compare document printed, loaded back and rendered: *out. */
static int render(const cJSON *cdoc, const char *format, char **out, size_t *len)
{
	char *text = mp_json_text(cdoc, 1), err[400];
	cJSON *back = NULL;
	int kind = 0, ret = MP_EXIT_RUNTIME;

	if (!text)
		return mp_cli_fail("compare", "out of memory");
	back = mp_doc_load(text, strlen(text), &kind, err, sizeof(err));
	if (!back || kind != MP_DOC_COMPARE ||
	    mp_render_mem(mp_renderer_find(format), back, kind, out, len, err, sizeof(err)))
		mp_cli_warn("compare", "the compare document does not render: %s (a bug: please "
			    "report it)", back && kind != MP_DOC_COMPARE ? "not a compare kind" : err);
	else
		ret = 0;
	if (!ret)
		mp_doc_copy("compare", kind, back);
	cJSON_free(text);
	cJSON_Delete(back);
	return ret;
}

/* Load the reports and build their compare document into *cdoc. */
static int build(char **files, int n, double pct, cJSON **cdoc)
{
	const cJSON *docs[MP_COMPARE_MAX];
	const char *names[MP_COMPARE_MAX];
	int kinds[MP_COMPARE_MAX], ret = 0, i;
	struct mp_host h;
	char err[600];

	/* standard input is read once: a second - would find it empty */
	for (i = 0, ret = 0; i < n; i++)
		if (!strcmp(files[i], "-") && ret++)
			return mp_cli_bad("compare", "standard input (-) given twice; give it once");
	if ((ret = mp_cli_host("compare", &h)))
		return ret;
	for (i = 0; i < n; i++) {
		cJSON *d;

		names[i] = strcmp(files[i], "-") ? files[i] : "standard input";
		d = mp_doc_load_file(files[i], &kinds[i], err, sizeof(err));
		docs[i] = d;
		if (!d) {
			mp_cli_warn("compare", "%s: %s", names[i], err);
			ret = kinds[i] == -ENOMEM ? MP_EXIT_RUNTIME : MP_EXIT_USAGE;
			break;
		}
	}
	if (!ret) {
		*cdoc = mp_compare_doc(docs, kinds, names, n, pct, &h, err, sizeof(err));
		if (!*cdoc)
			ret = strstr(err, "out of memory") == err ? mp_cli_fail("compare", "%s", err) :
			      mp_cli_bad("compare", "%s", err);
	}
	while (i-- > 0)
		cJSON_Delete((cJSON *)docs[i]);
	return ret;
}

int mp_cmd_compare(int argc, char **argv)
{
	double pct = MP_COMPARE_THRESHOLD_PCT;
	cJSON *cdoc = NULL;
	struct mp_cli c;
	char *text = NULL;
	size_t len = 0, n = 0;
	int ret;

	ret = mp_cli_parse(&compare_cmd, argc, argv, &c, &pct);
	if (ret)
		return ret < 0 ? 0 : ret;
	while (c.rest && c.rest[n])
		n++;
	/* one report is one column: its figures per GiB, nothing against it */
	if (n < 1 || n > MP_COMPARE_MAX)
		return mp_cli_bad("compare", "%s; give 1 to %d reports (- for standard input)",
				  n < 1 ? "no report named" : "too many reports", MP_COMPARE_MAX);
	if ((ret = mp_cli_finish(&compare_cmd, &c)))
		return ret;
	/* the compare document over a report it compares would lose the report */
	for (size_t i = 0; i < n; i++) {
		bool as_given = !strcmp(c.rest[i], c.out ? c.out : "");

		if (mp_same_file(c.rest[i], c.out))
			return mp_cli_bad("compare", "-o %s: %s%s%sa report being compared; give -o "
					  "another file, or none for standard output", c.out,
					  as_given ? "" : "names ", as_given ? "" : c.rest[i],
					  as_given ? "" : ", ");
	}
	if ((ret = build(c.rest, (int)n, pct, &cdoc)))
		return ret;
	ret = render(cdoc, c.format, &text, &len);
	cJSON_Delete(cdoc);
	if (ret)
		return ret;
	return mp_cli_write_text("compare", c.out, text, len);
}
