// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe budget: the bytes a container's workload may allocate, for an
 * entrypoint's eval. Runs the probe (probe's options, cmd_probe.c) or reads
 * a saved probe report (--from FILE), and emits a budget document
 * (budget_doc.c), rendered as text, json or env.
 */
#include "budget_doc.h"
#include "cgroup.h"
#include "cli.h"
#include "cmd_budget.h"
#include "cmd_probe.h"
#include "doc.h"
#include "render.h"
#include "json.h"
#include "out.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_FROM = MP_PROBE_OPT_NEXT };

#define BUDGET_FORMAT "the budget as {budget}"
#define OPT_FROM_ROW { "from", 0, "FILE", "no probe: the budget from a saved probe report "    \
		       "(probe --format json), with --margin, --format and -o only", NULL, OPT_FROM }

static const struct mp_cli_opt budget_opts[] = {
	MP_CLI_OPT_CGROUP("budget for", NULL),
	MP_CLI_OPT_PID("budget for the cgroup of this process"),
	MP_CLI_OPT_LIMIT("budget for a stand-in container of this limit (16M at least)",
			 "1G; in a limited cgroup, that cgroup"),
	MP_PROBE_OPTS(BUDGET_FORMAT),
	OPT_FROM_ROW,
	MP_CLI_OPT_HELP,
	{ 0 },
};

static const struct mp_cli_cmd budget_cmd = {
	.name = "budget",
	.kind = "budget",
	/* {budget}: the formats the parser takes (mp_cli_help) */
	.synopsis = "[--cgroup PATH | --pid PID | --limit SIZE]\n"
		    " [PROBE OPTIONS]\n"
		    "--from REPORT.json [--margin SIZE] [-o FILE]\n"
		    " [--format {budget}]",
	.opts = budget_opts,
	.limit_min = 16 * MP_MIB,
	.limit_min_why = "too small to hold the probe process",
	.opt = mp_probe_opt,
};

/* The form with --from: no probe, so only these options. */
struct from_opts {
	const char *from, *margin_arg;
};

static int from_opt(void *ctx, int id, const char *arg)
{
	struct from_opts *o = ctx;

	if (id == OPT_FROM)
		o->from = arg;
	else if (id == MP_PROBE_OPT_MARGIN)
		o->margin_arg = arg;
	return 0;
}

static const struct mp_cli_opt from_opts_table[] = {
	{ "margin", 0, "SIZE", "the margin kept free", "the probe's", MP_PROBE_OPT_MARGIN },
	MP_CLI_OPT_FORMAT(BUDGET_FORMAT), MP_CLI_OPT_OUTPUT, OPT_FROM_ROW, MP_CLI_OPT_HELP,
	{ 0 },
};

static const struct mp_cli_cmd from_cmd = {
	.name = "budget", .kind = "budget",
	.synopsis = "--from REPORT.json [--margin SIZE] [-o FILE]\n [--format {budget}]",
	.opts = from_opts_table, .opt = from_opt,
};

/* Why the budget is 0 (budget_of), or "": the document is still printed
 * (json keeps it whole), then the command fails with this as its line. */
static char zero_why[400];

/* After the budget is printed: a budget of 0 is no budget, exit 1 (a run
 * that measured nothing fits, not bad input). */
static int budget_exit(int ret)
{
	if (ret || !zero_why[0])
		return ret;
	return mp_cli_fail("budget", "the budget is 0 B: %s; lower --margin or give the cgroup "
			   "more room", zero_why);
}

/* A loaded probe document into a budget document; NULL with a line said.
 * from: the --from file, or NULL for a live probe. */
static cJSON *budget_of(const cJSON *probe, const char *from, const uint64_t *margin)
{
	struct mp_host h;
	char err[400];
	cJSON *d;

	if (mp_host_read("", &h)) {
		mp_cli_warn("budget", "cannot read /proc/meminfo");
		return NULL;
	}
	d = mp_budget_doc(&h, probe, from, margin, err, sizeof(err));
	if (!d) /* err is "problem; fix" */
		mp_cli_warn("budget", "%s%s: %s", from ? "--from " : "the probe report",
			    from ? from : "", err);
	else /* err is "" or why the budget is 0 */
		snprintf(zero_why, sizeof(zero_why), "%s", err);
	return d;
}

/* A word of argv that is one of the probe form's options but not the
 * --from form's (say --thp): "unknown option" would mislead, it is known,
 * only not with --from. NULL when there is none. */
static const char *probe_only_option(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *w = argv[i];
		bool lng = !strncmp(w, "--", 2), in_probe = false, in_from = false;
		size_t n = lng ? strcspn(w + 2, "=") : 0;

		if (lng ? !n : w[0] != '-' || !w[1])
			continue;
		for (const struct mp_cli_opt *o = budget_opts; o->name; o++)
			in_probe |= lng ? strlen(o->name) == n && !strncmp(o->name, w + 2, n)
					: o->short_name == w[1];
		for (const struct mp_cli_opt *o = from_opts_table; o->name; o++)
			in_from |= lng ? strlen(o->name) == n && !strncmp(o->name, w + 2, n)
				       : o->short_name == w[1];
		if (in_probe && !in_from)
			return w;
	}
	return NULL;
}

static int budget_from(int argc, char **argv)
{
	struct from_opts o = { 0 };
	struct mp_out out = { 0 };
	struct mp_cli c;
	uint64_t margin;
	char err[512];
	cJSON *doc = NULL, *b = NULL;
	int ret, kind = 0;
	const char *probe_opt = probe_only_option(argc, argv);

	if (probe_opt)
		return mp_cli_bad("budget", "%.*s is the probe's, and --from runs no probe; drop "
				  "one of them", (int)(probe_opt[1] == '-' ? strcspn(probe_opt, "=") : 2),
				  probe_opt);
	if ((ret = mp_cli_parse(&from_cmd, argc, argv, &c, &o)))
		return ret < 0 ? 0 : ret;
	if ((ret = mp_cli_finish(&from_cmd, &c)))
		return ret;
	/* the budget over the probe report it reads would lose the report */
	if (mp_same_file(o.from, c.out))
		return mp_cli_bad("budget", "-o %s: the --from report itself; give -o another "
				  "file, or none for standard output", c.out);
	if (o.margin_arg && (ret = mp_cli_size("budget", "--margin", o.margin_arg, &margin)))
		return ret;
	/* report's loader: a FIFO, a directory or a device refused, not waited
	 * on or read; - is standard input */
	doc = mp_doc_load_file(o.from, &kind, err, sizeof(err));
	if (!doc && kind == -ENOMEM) /* not the file's fault: a failure */
		return mp_cli_fail("budget", "--from %s: %s", o.from, err);
	if (!doc) /* the loader's problem carries its fix */
		return mp_cli_bad("budget", "--from %s: %s", o.from, err);
	if (kind != MP_DOC_PROBE) {
		cJSON_Delete(doc);
		return mp_cli_bad("budget", "--from %s: a %s document, not a probe report; give a "
				  "report of memprobe probe --format json", o.from,
				  mp_doc_kind_name(kind));
	}
	b = budget_of(doc, o.from, o.margin_arg ? &margin : NULL);
	cJSON_Delete(doc);
	if (!b)
		return MP_EXIT_USAGE;
	if ((ret = mp_out_open(&out, c.out))) {
		ret = mp_cli_out_bad("budget", c.out, ret);
		cJSON_Delete(b);
	} else if (!(ret = mp_emit("budget", b, c.format, out.f, c.out)) &&
		   (ret = mp_out_commit(&out))) {
		ret = mp_out_failed("budget", c.out, -ret);
	}
	mp_out_abort(&out);
	return budget_exit(ret);
}

/*
 * A live probe's budget: probe's run and document (cmd_probe.c), the
 * document made in place what --from would load of it (mp_doc_adopt, as
 * mp_emit does before rendering), then the budget of it emitted as the
 * probe's report would be (saved whole should it not be written).
 */
static int budget_probe(int argc, char **argv)
{
	struct mp_probe_report r;
	char err[512];
	cJSON *b = NULL;
	int ret = mp_probe_document(&budget_cmd, argc, argv, &r), kind;

	if (ret || !r.doc)
		return ret;
	if (mp_doc_adopt(r.doc, &kind, err, sizeof(err)))
		mp_cli_warn("budget", "the probe's document does not load (a bug): %s", err);
	else
		b = budget_of(r.doc, NULL, &r.margin);
	cJSON_Delete(r.doc);
	ret = b ? mp_emit_save("budget", b, r.format, &r.out, r.out_arg) : MP_EXIT_RUNTIME;
	mp_out_abort(&r.out);
	return !ret && r.killed ? MP_EXIT_RUNTIME : ret;
}

int mp_cmd_budget(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--from") || !strncmp(argv[i], "--from=", 7))
			return budget_from(argc, argv);
	return budget_exit(budget_probe(argc, argv));
}
