// SPDX-License-Identifier: GPL-2.0
/*
 * The command-line layer without running a command: the formats a --help
 * synopsis gives, made from the tables the parsers check --format with
 * (the renderers', compare's), and csv's --table names per kind.
 */
#include <stdlib.h>

#include "cli.h"
#include "compare.h"
#include "render.h"
#include "unit.h"

static void check_formats(const char *kind, const char *want)
{
	char buf[160];

	mp_cli_formats(kind, buf, sizeof(buf));
	CHECK_STR(buf, want, kind);
}

/* Every name the synopsis gives is one the parser takes, and the other
 * way round: mp_render_check for a kind, compare's too. */
static void check_parser_agrees(const char *kind)
{
	char buf[160], *save = NULL, *tok;
	int n = 0;

	mp_cli_formats(kind, buf, sizeof(buf));
	for (tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save), n++)
		CHECK_EQ_INT(mp_render_check("unit", kind, tok), 0,
			     "%s: %s in the synopsis but refused", kind, tok);
	for (size_t i = 0; mp_renderer_nth(i); i++)
		n -= mp_render_check("unit", kind, mp_renderer_nth(i)->name) == 0;
	CHECK_EQ_INT(n, 0, "%s: the synopsis and the parser differ by %d formats", kind, n);
}

static void test_formats(void)
{
	char buf[160];

	check_formats("limits", "text|json|env|markdown|openmetrics");
	check_formats("features", "text|json");
	check_formats("budget", "text|json|env");
	check_formats("probe", "text|json|markdown|csv|folded|html|openmetrics");
	check_formats("record", "text|json|markdown|csv|folded|html|openmetrics");
	check_formats("compare", "text|json|markdown|csv");
	check_parser_agrees("limits");
	check_parser_agrees("features");
	check_parser_agrees("budget");
	check_parser_agrees("probe");
	check_parser_agrees("compare");
	CHECK(mp_render_check("unit", "compare", "html") == MP_EXIT_USAGE, "compare: html taken");
	mp_render_names(MP_DOC_COMPARE, buf, sizeof(buf));
	CHECK_STR(buf, "text, json, markdown or csv", "compare's formats in a message");
	/* --help's words for --format, from the same table */
	mp_render_help("budget", buf, sizeof(buf));
	CHECK_STR(buf, "text, json (the document) or env (shell assignments)", "budget's help");
}

static void test_synopsis(void)
{
	static const struct mp_cli_opt opts[] = { MP_CLI_OPT_HELP, { 0 } };
	const struct mp_cli_cmd cmd = {
		.name = "limits",
		.synopsis = "[--cgroup PATH] [-o FILE]\n [-f {limits}]\n--features [-f {features}]",
		.opts = opts,
	};
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	mp_cli_help(&cmd, f);
	fclose(f);
	CHECK_STR(out,
		  "usage: memprobe limits [--cgroup PATH] [-o FILE]\n"
		  "                       [-f text|json|env|markdown|openmetrics]\n"
		  "       memprobe limits --features [-f text|json]\n"
		  "\noptions:\n"
		  "  -h, --help              print this help and exit\n",
		  "a synopsis with {KIND} and a continuation line");
	free(out);
}

static void test_tables(void)
{
	char buf[160];

	mp_csv_table_names(MP_DOC_PROBE, buf, sizeof(buf));
	CHECK_STR(buf, "categories, tasks, kernel_paths, hooks, overhead, copy_on_write or figures", "a probe's csv tables");
	mp_csv_table_names(MP_DOC_RECORD, buf, sizeof(buf));
	CHECK_STR(buf, "categories, tasks, kernel_paths, hooks, overhead, copy_on_write, timeline, oom_kills or figures",
		  "a record's csv tables");
	CHECK_EQ_INT(mp_csv_table_check("unit", MP_DOC_PROBE, "csv", "timeline"), MP_EXIT_USAGE,
		     "a probe's --table timeline taken");
	CHECK_EQ_INT(mp_csv_table_check("unit", MP_DOC_RECORD, "csv", "timeline"), 0,
		     "a record's --table timeline refused");
	CHECK_EQ_INT(mp_csv_table_check("unit", MP_DOC_ALL, "csv", NULL), 0,
		     "the format-only check (report, before the document) refused csv");
	CHECK_EQ_INT(mp_csv_table_check("unit", MP_DOC_ALL, "json", NULL), MP_EXIT_USAGE,
		     "the format-only check took --table with json");
}

int main(void)
{
	/* the refusals' lines are the parser's, not the test's */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	test_formats();
	test_synopsis();
	test_tables();
	return unit_done("cli");
}
