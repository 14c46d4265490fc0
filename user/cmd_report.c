// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe report: a saved document (limits, features, probe, record, budget, compare)
 * rendered again, by the renderers the live commands use. Nothing is
 * written unless the whole document loads and renders.
 */
#include "cmd_report.h"
#include "cli.h"
#include "compare.h"
#include "doc.h"
#include "render.h"
#include "out.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct mp_cli_opt report_opts[] = {
	MP_CLI_OPT_FORMAT("what the document's kind takes: {*}"),
	MP_CLI_OPT_OUTPUT,
	MP_CLI_OPT_BYTES,
	MP_CLI_OPT_TABLE("categories, tasks, kernel_paths, hooks, overhead, copy_on_write, "
			 "figures (record: timeline, oom_kills)"),
	MP_CLI_OPT_HELP,
	{ 0 },
};

static const struct mp_cli_cmd report_cmd = {
	.name = "report",
	/* FILE: a document memprobe wrote with --format json; -: standard input */
	.synopsis = "FILE|- [-f FORMAT] [--bytes] [--table NAME] [-o OUT]",
	.opts = report_opts,
	.operands = true,
};

static int bad_file(const char *name, const char *problem)
{
	fprintf(stderr, "memprobe report: %s: %s\n", name, problem);
	return MP_EXIT_USAGE;
}

/* Read, load and render FILE into *out; 0 or the exit status (said). */
static int render_file(const char *path, const char *format, char **out, size_t *outlen)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	const struct mp_renderer *r = mp_renderer_find(format);
	char err[512];
	cJSON *doc;
	int ret = 0, kind;

	doc = mp_doc_load_file(path, &kind, err, sizeof(err));
	if (!doc && kind == -ENOMEM) { /* not the file's fault: a failure, exit 1 */
		bad_file(name, err);
		return MP_EXIT_RUNTIME;
	}
	if (!doc)
		return bad_file(name, err);
	if (!r || !(r->kinds & kind)) {
		char names[256];

		mp_render_names(kind, names, sizeof(names));
		snprintf(err, sizeof(err), "a %s document has no %s format; use --format %s",
			 mp_doc_kind_name(kind), format, names);
		ret = bad_file(name, err);
	} else if (mp_render_opts.table &&
		   mp_csv_table_check("report", kind, format, mp_render_opts.table)) {
		ret = MP_EXIT_USAGE;
	} else if (mp_render_mem(r, doc, kind, out, outlen, err, sizeof(err))) {
		mp_appendf(err, sizeof(err), "; give a document memprobe wrote, unchanged");
		ret = bad_file(name, err);
	}
	cJSON_Delete(doc);
	return ret;
}

int mp_cmd_report(int argc, char **argv)
{
	const char *format, *outpath;
	struct mp_cli c;
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = mp_cli_parse(&report_cmd, argc, argv, &c, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!c.rest || c.rest[1])
		return mp_cli_bad("report", "%s; give one FILE (- for standard input)",
				  !c.rest ? "no document named" : "more than one document named");
	/* any kind's format: render_file checks it against the document's */
	if ((ret = mp_render_check("report", NULL, c.format)) ||
	    (ret = mp_cli_finish(&report_cmd, &c)))
		return ret;
	/* a rendering over its document would lose the document */
	if (mp_same_file(c.rest[0], c.out))
		return mp_cli_bad("report", "-o %s: the document being rendered; give -o another "
				  "file, or none for standard output", c.out);
	format = c.format;
	outpath = c.out;
	if ((ret = render_file(c.rest[0], format, &text, &len)))
		return ret;
	return mp_cli_write_text("report", outpath, text, len);
}
