// SPDX-License-Identifier: GPL-2.0
/* memprobe: where a memory cgroup's memory goes. */
#include "cli.h"
#include "cmd_budget.h"
#include "cmd_compare.h"
#include "cmd_limits.h"
#include "cmd_probe.h"
#include "cmd_record.h"
#include "cmd_report.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/*
 * The commands, in the manner of bpftool's: the usage, `memprobe help` and
 * the unknown-command message are all printed from this table, so a new
 * command is one line here.
 */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static int do_help(int argc, char **argv);

static const struct cmd cmds[] = {
	{ "limits", mp_cmd_limits,
	  "the effective memory limit of a cgroup, host RAM, usage, headroom" },
	{ "probe", mp_cmd_probe,
	  "fill a cgroup to its margin from a child cgroup and attribute the growth" },
	{ "record", mp_cmd_record,
	  "attribute a workload's or a command's memory over time: peak, shares, OOM kills" },
	{ "budget", mp_cmd_budget,
	  "the bytes a workload may allocate, for an entrypoint's eval: probe, then budget" },
	{ "report", mp_cmd_report,
	  "render a saved json report again as {*}" },
	{ "compare", mp_cmd_compare,
	  "probe or record reports side by side: differences, ratios, per GiB" },
	{ "help", do_help, "this list; memprobe help COMMAND: the options of COMMAND" },
	{ 0 },
};

/* A command's line: {*} in its help is every format of render.c's table
 * (mp_render_names), and that line's words wrapped under the first at 79
 * columns. */
static void put_cmd(FILE *f, const struct cmd *c)
{
	char help[512], names[256];
	const char *star = strstr(c->help, "{*}"), *p = help;
	int col;

	mp_render_names(MP_DOC_ALL, names, sizeof(names));
	if (star)
		snprintf(help, sizeof(help), "%.*s%s%s", (int)(star - c->help), c->help, names,
			 star + 3);
	else
		snprintf(help, sizeof(help), "%s", c->help);
	col = fprintf(f, "  %-8s", c->name);
	while (*p) {
		int n = (int)strcspn(p, " ");

		if (star && col + 1 + n > 79) /* the others are as they were written */
			col = fprintf(f, "\n%10s", "") - 1;
		col += fprintf(f, " %.*s", n, p);
		p += n + (p[n] == ' ');
	}
	fputc('\n', f);
}

static void usage(FILE *f)
{
	fputs("usage: memprobe COMMAND [OPTIONS]\n"
	      "       memprobe --version\n"
	      "\n", f);
	for (const struct cmd *c = cmds; c->name; c++)
		put_cmd(f, c);
	fputs("\nmemprobe COMMAND --help for the options of each.\n", f);
}

static const struct cmd *find(const char *name)
{
	for (const struct cmd *c = cmds; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

/* "use limits, probe, record or report": every command but help itself */
static int unknown(const char *name)
{
	char list[256] = "";
	int n = 0, i = 0;

	for (const struct cmd *c = cmds; c->name; c++)
		n += strcmp(c->name, "help") != 0;
	for (const struct cmd *c = cmds; c->name; c++) {
		if (strcmp(c->name, "help") == 0)
			continue;
		mp_appendf(list, sizeof(list), "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
			   c->name);
		i++;
	}
	fprintf(stderr, "memprobe: unknown command '%s'; use %s (memprobe --help)\n", name, list);
	return MP_EXIT_USAGE;
}

/* memprobe help [COMMAND]; help's own help (help help, help --help, help -h)
 * is the usage, which says what help does: a command's --help is its own
 * usage, and help's should not be an unknown command. */
static int do_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (!(c = find(argv[1])))
		return unknown(argv[1]);
	return c->fn(2, (char *[]){ argv[1], "--help", NULL });
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("memprobe %s\n", mp_version());
		return fflush(stdout) ? MP_EXIT_RUNTIME : 0;
	}
	if (!(c = find(argv[1])))
		return unknown(argv[1]);
	return c->fn(argc - 1, argv + 1);
}
