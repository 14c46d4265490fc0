// SPDX-License-Identifier: GPL-2.0
/*
 * The shared command-line layer (cli.h): each command's option table makes
 * its getopt_long() table and its --help; the options the commands share,
 * and sizes, counts and durations, are parsed here once.
 */
#include "cli.h"
#include "attr.h"
#include "cgroup.h"
#include "compare.h"
#include "kernel_btf.h" /* mp_kbtf_check: --btf */
#include "out.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- messages ------------------------------------------------------------ */

/* One write for the whole line: two memprobes (or a memprobe and the command
 * it records) sharing a terminal do not cut into each other's lines. */
void mp_cli_warn(const char *cmd, const char *fmt, ...)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "memprobe %s: ", cmd);
	va_list ap;

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	mp_status_interrupt(); /* a status line shown: the message on a line of its own */
	fprintf(stderr, "%s\n", line);
}

/* ---- values -------------------------------------------------------------- */

int mp_cli_size(const char *cmd, const char *opt, const char *arg, uint64_t *v)
{
	int err = mp_parse_size(arg, v);
	int n = (int)strlen(arg);

	if (err == MP_SIZE_TOO_LARGE)
		return mp_cli_bad(cmd, "%s %s: too large; give less than 8388608T", opt, arg);
	if (err == MP_SIZE_SI_SUFFIX) {
		/* "1GB": KB, MB, GB or TB, the 1st to 4th power; say both readings */
		char u = (char)toupper((unsigned char)arg[n - 2]);
		int k = (int)(strchr("KMGT", u) - "KMGT") + 1;

		return mp_cli_bad(cmd, "%s %s: %s means 10^%d bytes to some, 2^%d to others; "
				  "give %.*s%c or %.*s%ciB (2^%d), or a byte count", opt, arg,
				  arg + n - 2, 3 * k, 10 * k, n - 2, arg, u, n - 2, arg, u, 10 * k);
	}
	if (err == MP_SIZE_PART_BYTE)
		return mp_cli_bad(cmd, "%s %s: a fraction of a byte; give whole bytes, or a "
				  "fraction of a unit such as 1.5G", opt, arg);
	if (err || *v == 0)
		return mp_cli_bad(cmd, "%s %s: not a size; give a positive size such as 512M, 1G, "
				  "1GiB or a byte count", opt, arg);
	return 0;
}

int mp_cli_count(const char *cmd, const char *opt, const char *arg, long min, long max,
		 const char *what, const char *fix, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(arg, &end, 10);
	/* a whole number too large is not "not a count": say the bound */
	if (!*end && end != arg && *arg != '-' && (errno == ERANGE || *v > max))
		return mp_cli_bad(cmd, "%s %s: more than %ld, the most it takes; give at most %ld",
				  opt, arg, max, max);
	if (errno || *end || end == arg || *v < min || *v > max)
		return mp_cli_bad(cmd, "%s %s: not %s; %s", opt, arg, what, fix);
	return 0;
}

/* Durations: 31 days at most (a double far beyond it would overflow the
 * millisecond clock). */
#define MAX_SECONDS (31 * 86400)

int mp_cli_seconds(const char *cmd, const char *opt, const char *arg, bool zero_ok, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*v) || *v < 0 || (!zero_ok && *v == 0))
		return mp_cli_bad(cmd, "%s %s: not a duration; give seconds, such as 30 or 0.5",
				  opt, arg);
	if (*v > MAX_SECONDS)
		return mp_cli_bad(cmd, "%s %s: longer than %d days; give at most %d seconds, or no "
				  "--duration to record until stopped", opt, arg,
				  MAX_SECONDS / 86400, MAX_SECONDS);
	return 0;
}

int mp_cli_out_bad(const char *cmd, const char *path, int err)
{
	if (err == -EINTR)
		return mp_cli_fail(cmd, "-o %s: stopped while it waited for a reader (a FIFO "
				   "opens once something reads it); nothing was measured", path);
	return mp_cli_bad(cmd, "-o %s: cannot create it; give a writable path", path);
}

int mp_cli_write_text(const char *cmd, const char *path, char *text, size_t len)
{
	struct mp_out out;
	int ret;

	signal(SIGPIPE, SIG_IGN);
	if ((ret = mp_out_open(&out, path))) {
		free(text);
		return mp_cli_out_bad(cmd, path, ret);
	}
	if (fwrite(text, 1, len, out.f) != len || (ret = mp_out_commit(&out))) {
		int err = ret ? -ret : errno;

		/* a reader that has read enough (| head) is no fault to report */
		ret = err == EPIPE ? MP_EXIT_RUNTIME : mp_out_failed(cmd, path, err);
	}
	mp_out_abort(&out);
	free(text);
	return ret;
}

int mp_cli_need_root(const char *cmd)
{
	if (geteuid() == 0)
		return 0;
	return mp_cli_bad(cmd, "needs root (it loads BPF programs and makes cgroups); "
			  "run it as root or with sudo");
}

int mp_cli_host(const char *cmd, struct mp_host *h)
{
	if (mp_host_read("", h))
		return mp_cli_fail(cmd, "cannot read /proc/meminfo");
	return 0;
}

void mp_cli_on_stop(void (*handler)(int))
{
	struct sigaction sa = { .sa_handler = handler };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* ---- options ------------------------------------------------------------- */

/* Larger than any command's table; a table that outgrows it fails loudly
 * in every test that runs the command. */
#define MAX_OPTS 32

/* The bound of --top and --stack-sample: the larger of the two the commands
 * had apart (probe 1000000, record 3600000), so that nothing either took
 * before is refused now. */
#define MAX_COUNT 3600000

static int shared_opt(const struct mp_cli_cmd *cmd, struct mp_cli *c, int id, const char *arg)
{
	long v;
	int ret;

	switch (id) {
	case MP_OPT_CGROUP: c->cgroup = arg; c->nr_cgroup++; return 0;
	case MP_OPT_PID: c->pid = arg; c->nr_pid++; return 0;
	case MP_OPT_LIMIT: c->limit_arg = arg; c->nr_limit++; return 0;
	case MP_OPT_FORMAT: c->format = arg; return 0;
	case MP_OPT_OUTPUT: c->out = arg; return 0;
	case MP_OPT_BYTES: c->bytes = true; return 0;
	case MP_OPT_TABLE: c->table = arg; return 0;
	case MP_OPT_FAULT_TRACEPOINT: c->fault_tracepoint = true; return 0;
	case MP_OPT_MEMCG_FROM:
		if (strcmp(arg, "tracepoint") && strcmp(arg, "counters"))
			return mp_cli_bad(cmd->name, "--memcg-from %s: no such source; give "
					  "tracepoint or counters", arg);
		c->memcg_from = strcmp(arg, "counters") ? MP_MEMCG_FROM_TRACEPOINT
							 : MP_MEMCG_FROM_COUNTERS;
		return 0;
	/* on bad input the value stored is never read: the command exits */
	case MP_OPT_TOP:
		ret = mp_cli_count(cmd->name, "--top", arg, 0, MAX_COUNT, "a count",
				   "give a whole number", &v);
		c->top = (int)v;
		return ret;
	case MP_OPT_STACK_SAMPLE:
		ret = mp_cli_count(cmd->name, "--stack-sample", arg, 0, MAX_COUNT, "a count",
				   "give a whole number (0 turns stacks off)", &v);
		c->stack_sample = (uint32_t)v;
		return ret;
	case MP_OPT_BTF: {
		char problem[128];
		const char *fix = mp_kbtf_check(arg, problem, sizeof(problem));

		c->btf = arg;
		return fix ? mp_cli_bad(cmd->name, "--btf %s: %s; %s", arg, problem, fix) : 0;
	}
	case MP_OPT_QUIET:
	case MP_OPT_PROGRESS: {
		enum mp_status_mode m = id == MP_OPT_QUIET ? MP_STATUS_QUIET : MP_STATUS_FORCE;

		/* one says never, the other always: no order makes sense of both */
		if (c->status != MP_STATUS_AUTO && c->status != m)
			return mp_cli_bad(cmd->name, "--quiet and --progress are exclusive; give "
					  "one of them");
		c->status = m;
		return 0;
	}
	}
	return mp_cli_fail(cmd->name, "option id %d has no parser (a bug)", id);
}

/* getopt_long's tables from the command's: the long options return their id,
 * the short ones their letter (mapped back by short_id). */
static int build_getopt(const struct mp_cli_cmd *cmd, struct option *lo, char *so)
{
	int n = 0;

	if (cmd->takes_command)
		*so++ = '+';
	*so++ = ':'; /* a value missing returns ':', told apart from an unknown option */
	for (const struct mp_cli_opt *o = cmd->opts; o->name; o++, n++) {
		if (n == MAX_OPTS)
			return mp_cli_fail(cmd->name, "more than %d options (a bug)", MAX_OPTS);
		lo[n] = (struct option){ o->name, o->arg ? required_argument : no_argument,
					 NULL, o->id };
		if (o->short_name) {
			*so++ = (char)o->short_name;
			if (o->arg)
				*so++ = ':';
		}
	}
	lo[n] = (struct option){ 0 };
	*so = '\0';
	return 0;
}

static int short_id(const struct mp_cli_cmd *cmd, int letter)
{
	for (const struct mp_cli_opt *o = cmd->opts; o->name; o++)
		if (o->short_name && o->short_name == letter)
			return o->id;
	return -1;
}

int mp_cli_targets(const struct mp_cli *c)
{
	return !!c->nr_cgroup + !!c->nr_pid + !!c->nr_limit;
}

/* An option given last without its value: say which and what it takes
 * (getopt's optopt: the long option's id, or the short one's letter). */
static int missing_value(const struct mp_cli_cmd *cmd, int opt)
{
	const struct mp_cli_opt *o;

	for (o = cmd->opts; o->name; o++)
		if (o->id == opt || (o->short_name && o->short_name == opt))
			break;
	if (!o->name)
		return mp_cli_bad(cmd->name, "an option's value is missing; see memprobe %s --help",
				  cmd->name);
	return mp_cli_bad(cmd->name, "--%s needs a value (%s); see memprobe %s --help", o->name,
			  o->arg, cmd->name);
}

int mp_cli_parse(const struct mp_cli_cmd *cmd, int argc, char **argv, struct mp_cli *c,
		 void *ctx)
{
	struct option lo[MAX_OPTS + 1];
	char so[2 * MAX_OPTS + 3], optbuf[64];
	int id, ret;

	*c = (struct mp_cli){ .format = "text", .top = MP_CLI_TOP_DEFAULT,
			      .stack_sample = MP_ATTR_STACK_SAMPLE_DEFAULT };
	if ((ret = build_getopt(cmd, lo, so)))
		return ret;
	optind = 1;
	opterr = 0;
	while ((id = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (id == ':')
			return missing_value(cmd, optopt);
		if (id < MP_OPT_CGROUP)
			id = short_id(cmd, id); /* '?': not one of ours, or its value missing */
		if (id < 0)
			return mp_cli_bad(cmd->name, "unknown option '%s'; "
					  "see memprobe %s --help",
					  mp_bad_option(argv, optbuf, sizeof(optbuf)), cmd->name);
		if (id == MP_OPT_HELP) {
			mp_cli_help(cmd, stdout);
			return MP_CLI_HELP;
		}
		ret = id >= MP_OPT_CMD ? cmd->opt(ctx, id, optarg) : shared_opt(cmd, c, id, optarg);
		if (ret)
			return ret;
	}
	if (optind < argc && (cmd->takes_command || cmd->operands))
		c->rest = argv + optind; /* getopt moved the operands last */
	else if (optind < argc)
		return mp_cli_bad(cmd->name, "unexpected argument '%s'; see memprobe %s --help",
				  argv[optind], cmd->name);
	if (c->nr_cgroup > 1 || c->nr_pid > 1 || c->nr_limit > 1)
		return mp_cli_bad(cmd->name, "%s given twice; give it once", c->nr_cgroup > 1 ?
				  "--cgroup" : c->nr_pid > 1 ? "--pid" : "--limit");
	return 0;
}

/* --bytes and --table: only with a format that reads them, then for the
 * renderers (mp_render_opts). */
static int render_opts(const struct mp_cli_cmd *cmd, struct mp_cli *c)
{
	int kinds = cmd->kind ? mp_doc_kind(cmd->kind) : MP_DOC_ALL;
	int ret;

	if (c->bytes && strcmp(c->format, "markdown") && strcmp(c->format, "html"))
		return mp_cli_bad(cmd->name, "--bytes: --format %s has no sizes to write as "
				  "bytes; use it with --format markdown or html", c->format);
	/* a command whose document's kind is known later (report) checks only
	 * the format here: the table's name is checked against the document's
	 * own tables once it is loaded, so that none it lacks is offered */
	if (c->table && (ret = mp_csv_table_check(cmd->name, kinds, c->format,
						  cmd->kind ? c->table : NULL)))
		return ret;
	mp_render_opts = (struct mp_render_opts){ .bytes = c->bytes, .table = c->table };
	return 0;
}

int mp_cli_finish(const struct mp_cli_cmd *cmd, struct mp_cli *c)
{
	unsigned long long min_mib = cmd->limit_min / MP_MIB;
	const char *why = cmd->limit_min_why;
	int ret;

	if (c->limit_arg) {
		if ((ret = mp_cli_size(cmd->name, "--limit", c->limit_arg, &c->limit)))
			return ret;
		if (c->limit < cmd->limit_min)
			return mp_cli_bad(cmd->name, "--limit %s: below %llu MiB%s%s; "
					  "give at least %lluM", c->limit_arg, min_mib,
					  why ? ", " : "", why ? why : "", min_mib);
	}
	if (cmd->kind && (ret = mp_render_check(cmd->name, cmd->kind, c->format)))
		return ret;
	if ((ret = render_opts(cmd, c)))
		return ret;
	if (mp_out_check_opt(cmd->name, c->out))
		return MP_EXIT_USAGE;
	/* the report would be renamed over the BTF it was made with */
	if (mp_same_file(c->btf, c->out))
		return mp_cli_bad(cmd->name, "--btf %s and -o %s are one file; give -o another path",
				  c->btf, c->out);
	return 0;
}

/* ---- --help -------------------------------------------------------------- */

#define HELP_COL 26   /* where the meanings start */
#define HELP_WIDTH 80 /* lines stay shorter than this */

/* One word (n bytes) at column *col, on a new line when it would pass the
 * width; a word longer than a line stands alone. */
static void put_word(FILE *f, int *col, const char *w, int n)
{
	if (*col > HELP_COL && *col + 1 + n >= HELP_WIDTH) {
		fprintf(f, "\n%*s", HELP_COL, "");
		*col = HELP_COL;
	} else if (*col > HELP_COL) {
		fputc(' ', f);
		(*col)++;
	}
	fwrite(w, 1, n, f);
	*col += n;
}

/* An option's help with each {KIND} in it --format's words for that kind
 * from render.c's table (mp_render_help; {*}: every kind's), so no help
 * string names a format. Returns buf. */
static const char *help_text(const char *help, char *buf, size_t len)
{
	const char *o, *c;
	char kind[16], names[600];

	buf[0] = '\0';
	while ((o = strchr(help, '{')) && (c = strchr(o, '}'))) {
		mp_appendf(buf, len, "%.*s", (int)(o - help), help);
		snprintf(kind, sizeof(kind), "%.*s", (int)(c - o - 1), o + 1);
		mp_render_help(strcmp(kind, "*") ? kind : NULL, names, sizeof(names));
		mp_appendf(buf, len, "%s", names);
		help = c + 1;
	}
	mp_appendf(buf, len, "%s", help);
	return buf;
}

static void put_opt(FILE *f, const struct mp_cli_opt *o)
{
	char left[64], def[128], help[1024];
	const char *p = help_text(o->help, help, sizeof(help));
	int col;

	snprintf(left, sizeof(left), "  %c%c%s--%s%s%s", o->short_name ? '-' : ' ',
		 o->short_name ? o->short_name : ' ', o->short_name ? ", " : "  ", o->name,
		 o->arg ? " " : "", o->arg ? o->arg : "");
	col = fprintf(f, "%s", left);
	if (col >= HELP_COL - 1) {
		fprintf(f, "\n%*s", HELP_COL, "");
	} else {
		fprintf(f, "%*s", HELP_COL - col, "");
	}
	col = HELP_COL;
	while (*p) {
		int n = (int)strcspn(p, " ");

		if (n)
			put_word(f, &col, p, n);
		p += n + (p[n] == ' ');
	}
	/* the default is one unit: a test (and a reader) finds it whole */
	if (o->def) {
		snprintf(def, sizeof(def), "(default: %s)", o->def);
		put_word(f, &col, def, (int)strlen(def));
	}
	fputc('\n', f);
}

void mp_cli_formats(const char *kind, char *buf, size_t len)
{
	int kinds = mp_doc_kind(kind);
	const struct mp_renderer *r;

	buf[0] = '\0';
	for (size_t i = 0; (r = mp_renderer_nth(i)); i++)
		if (r->kinds & kinds)
			mp_appendf(buf, len, "%s%s", buf[0] ? "|" : "", r->name);
}

/* One line of a synopsis (n bytes), each {KIND} in it the formats the
 * parser takes for that kind (mp_cli_formats), so that the synopsis says
 * what --format takes from the table that checks it. */
static void put_synopsis(FILE *f, const char *p, int n)
{
	const char *end = p + n, *o, *c;
	char kind[16], names[160];

	while (p < end) {
		o = memchr(p, '{', (size_t)(end - p));
		c = o ? memchr(o, '}', (size_t)(end - o)) : NULL;
		if (!c) {
			fwrite(p, 1, (size_t)(end - p), f);
			return;
		}
		fwrite(p, 1, (size_t)(o - p), f);
		snprintf(kind, sizeof(kind), "%.*s", (int)(c - o - 1), o + 1);
		mp_cli_formats(kind, names, sizeof(names));
		fputs(names, f);
		p = c + 1;
	}
}

void mp_cli_help(const struct mp_cli_cmd *cmd, FILE *f)
{
	/* a line that starts with a space goes on with the form above it,
	 * under its first word */
	int indent = (int)strlen("usage: memprobe  ") + (int)strlen(cmd->name);
	const char *p = cmd->synopsis;

	for (bool first = true; *p; first = false) {
		int n = (int)strcspn(p, "\n");

		if (*p == ' ') {
			fprintf(f, "%*s", indent, "");
			p++;
			n--;
		} else {
			fprintf(f, "%s memprobe %s ", first ? "usage:" : "      ", cmd->name);
		}
		put_synopsis(f, p, n);
		fputc('\n', f);
		p += n + (p[n] == '\n');
	}
	fputs("\noptions:\n", f);
	for (const struct mp_cli_opt *o = cmd->opts; o->name; o++)
		put_opt(f, o);
}
