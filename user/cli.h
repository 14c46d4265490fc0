/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What memprobe's commands have in common, in one place: each command
 * declares its options in a table (struct mp_cli_opt), from which both the
 * getopt_long() table and `memprobe CMD --help` are made, so the help can
 * never miss an option or state a default the code does not use. The
 * options every command shares (the target, --format, -o, --top,
 * --stack-sample, --btf, --help) are parsed here once, and so are sizes,
 * counts and durations, with the same message whichever command takes them.
 *
 * Messages: bad input is one line "memprobe CMD: problem; fix" on stderr
 * and exit status MP_EXIT_USAGE (2); a failure at run time, MP_EXIT_RUNTIME
 * (1); record in command mode exits with the command's own status.
 */
#ifndef MEMPROBE_CLI_H
#define MEMPROBE_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "render.h" /* mp_render_check, the --format check */
#include "status.h" /* enum mp_status_mode: --quiet, --progress */
#include "util.h"
#include "version.h" /* mp_version: --version */

struct mp_host;

/* One --top for every command: tasks and stacks kept per category. */
#define MP_CLI_TOP_DEFAULT 10
#define MP_CLI_STR_(x) #x
#define MP_CLI_STR(x) MP_CLI_STR_(x)

/* Ids of the shared options; a command's own start at MP_OPT_CMD. Above
 * 255, so that no id is mistaken for a short option's letter. */
enum mp_cli_id {
	MP_OPT_CGROUP = 256,
	MP_OPT_PID,
	MP_OPT_LIMIT,
	MP_OPT_FORMAT,
	MP_OPT_OUTPUT,
	MP_OPT_TOP,
	MP_OPT_STACK_SAMPLE,
	MP_OPT_BTF,
	MP_OPT_HELP,
	MP_OPT_QUIET,
	MP_OPT_PROGRESS,
	MP_OPT_BYTES,
	MP_OPT_TABLE,
	MP_OPT_FAULT_TRACEPOINT,
	MP_OPT_MEMCG_FROM,
	MP_OPT_CMD = 512,
};

/* One option of a command, as getopt_long takes it and --help shows it. */
struct mp_cli_opt {
	const char *name;    /* the long name, without "--" */
	int short_name;      /* its letter, 0: none */
	const char *arg;     /* the argument's name in --help; NULL: a flag */
	const char *help;    /* what it means */
	const char *def;     /* the default, in words; NULL: none to state */
	int id;              /* an enum mp_cli_id, or MP_OPT_CMD + n */
};

/* The shared options worded once, for every command's table. */
#define MP_CLI_OPT_CGROUP(verb, def)                                                   \
	{ "cgroup", 'c', "PATH", verb " this existing cgroup: a directory under the "   \
	  "memory controller's mount, or a path as /proc/PID/cgroup shows it", def,     \
	  MP_OPT_CGROUP }
#define MP_CLI_OPT_PID(help) { "pid", 'p', "PID", help, NULL, MP_OPT_PID }
#define MP_CLI_OPT_LIMIT(help, def) { "limit", 'l', "SIZE", help, def, MP_OPT_LIMIT }
#define MP_CLI_OPT_FORMAT(help) { "format", 'f', "FORMAT", help, "text", MP_OPT_FORMAT }
#define MP_CLI_OPT_OUTPUT                                                              \
	{ "output", 'o', "FILE",                                                       \
	  "write the report to FILE, whole or not at all (- is standard output)",      \
	  "standard output", MP_OPT_OUTPUT }
#define MP_CLI_OPT_TOP                                                                 \
	{ "top", 0, "N", "tasks and stacks kept per category (the rest summed)",       \
	  MP_CLI_STR(MP_CLI_TOP_DEFAULT), MP_OPT_TOP }
#define MP_CLI_OPT_STACK_SAMPLE                                                        \
	{ "stack-sample", 0, "N", "record the kernel stack of one kernel page allocation in N (0: no stacks)", \
	  "1", MP_OPT_STACK_SAMPLE }
#define MP_CLI_OPT_FAULT_TRACEPOINT                                                    \
	{ "fault-tracepoint", 0, NULL, "count page faults per event with the "          \
	  "exceptions:page_fault_user tracepoint (one program run per fault)",          \
	  "the kernel's own counters", MP_OPT_FAULT_TRACEPOINT }
#define MP_CLI_OPT_MEMCG_FROM                                                          \
	{ "memcg-from", 0, "SOURCE", "where the per-process split of memory.stat's "    \
	  "categories comes from: tracepoint (the memcg stat tracepoints, a program "   \
	  "run per update, about 4 per anonymous page: per-process slab, sock and "     \
	  "percpu, charges from other contexts, anon unmapped and still charged) or "   \
	  "counters (the kernel's per-process counters read at each snapshot: RSS by "  \
	  "kind, page tables, stacks; no program run per page; on cgroup v1, whose "    \
	  "memory.stat has no slab, percpu or sock, those are then kernel_other)",      \
	  "counters on cgroup v2, tracepoint on v1",                                    \
	  MP_OPT_MEMCG_FROM }
#define MP_CLI_OPT_BTF                                                                 \
	{ "btf", 0, "FILE", "the kernel's BTF for CO-RE: a raw BTF file or a vmlinux "  \
	  "with a .BTF section", "/sys/kernel/btf/vmlinux", MP_OPT_BTF }
/* The renderers' own options (struct mp_render_opts). */
#define MP_CLI_OPT_BYTES                                                               \
	{ "bytes", 0, NULL, "markdown and html: sizes as exact byte counts, not 1.5 MiB", \
	  NULL, MP_OPT_BYTES }
#define MP_CLI_OPT_TABLE(names)                                                        \
	{ "table", 0, "NAME", "csv: the table to write: " names, "categories",         \
	  MP_OPT_TABLE }
/* What probe and record, the commands that attribute, both take, in this order. */
#define MP_CLI_OPTS_REPORT                                                             \
	MP_CLI_OPT_FORMAT("the report as {probe}"),                                    \
	MP_CLI_OPT_OUTPUT, MP_CLI_OPT_BYTES,                                           \
	MP_CLI_OPT_TABLE("categories, tasks, kernel_paths, hooks, overhead, "           \
			 "copy_on_write, figures (record: timeline, oom_kills)"),        \
	MP_CLI_OPT_STACK_SAMPLE, MP_CLI_OPT_FAULT_TRACEPOINT, MP_CLI_OPT_MEMCG_FROM,        \
	MP_CLI_OPT_TOP
/* The status line of the commands that run for a while (status.h). */
#define MP_CLI_OPTS_STATUS                                                             \
	{ "quiet", 0, NULL, "no status line on standard error", NULL, MP_OPT_QUIET },   \
	{ "progress", 0, NULL, "a status line on standard error even when it is not a " \
	  "terminal: plain lines, one a second",                                        \
	  "only on a terminal, redrawn in place", MP_OPT_PROGRESS }
#define MP_CLI_OPT_HELP { "help", 'h', NULL, "print this help and exit", NULL, MP_OPT_HELP }

/* A command, as the shared layer sees it. */
struct mp_cli_cmd {
	const char *name;          /* "probe": "memprobe probe: ..." in messages */
	const char *kind;          /* the document kind --format is checked for
				    * (mp_render_check); NULL: the command checks */
	const char *synopsis;      /* after "usage: memprobe CMD "; one line per
				    * form, "\n" between (--help lists the rest) */
	const struct mp_cli_opt *opts; /* ends with { 0 } */
	bool takes_command;        /* record: options end at the first word that
				    * is not one (getopt's "+"), the rest is the
				    * command's; else a word left is refused */
	bool operands;             /* report: words among the options are its
				    * operands (in c->rest), in any order */
	uint64_t limit_min;        /* --limit's least, a multiple of 1 MiB */
	const char *limit_min_why; /* said after "below N MiB", or NULL */
	/* a command's own option (id >= MP_OPT_CMD): 0, or the exit status */
	int (*opt)(void *ctx, int id, const char *arg);
};

/* What the shared options gave. */
struct mp_cli {
	const char *cgroup, *pid, *limit_arg; /* NULL: not given */
	int nr_cgroup, nr_pid, nr_limit;      /* how many times each was given */
	uint64_t limit;                       /* --limit, once mp_cli_finish() ran */
	const char *format;                   /* "text" unless given */
	const char *out;                      /* -o, NULL: standard output */
	const char *btf;                      /* --btf, checked to hold BTF */
	bool bytes;                           /* --bytes */
	const char *table;                    /* --table, NULL: not given */
	int top;                              /* MP_CLI_TOP_DEFAULT unless given */
	uint32_t stack_sample;                /* 1 unless given */
	bool fault_tracepoint;                /* --fault-tracepoint */
	int memcg_from;                       /* enum mp_memcg_from: --memcg-from */
	enum mp_status_mode status;           /* --quiet, --progress: MP_STATUS_AUTO unless given */
	char **rest;                          /* takes_command: the words after
					       * the options; operands: the words
					       * (NULL: none) */
};

/*
 * The shared options into a command's own options struct o, which names
 * them as probe's and record's do (cgroup_path, pid, limit_arg, format, out,
 * btf_path, top, stack_sample_period, status_mode); limit only where
 * --limit was given, so that a command keeps its own default.
 */
#define MP_CLI_TAKE(o, c)                                                              \
	do {                                                                           \
		(o)->cgroup_path = (c)->cgroup;                                        \
		(o)->pid = (c)->pid;                                                   \
		(o)->limit_arg = (c)->limit_arg;                                       \
		if ((c)->limit_arg)                                                    \
			(o)->limit = (c)->limit;                                       \
		(o)->format = (c)->format;                                             \
		(o)->out = (c)->out;                                                   \
		(o)->btf_path = (c)->btf;                                              \
		(o)->top = (c)->top;                                                   \
		(o)->stack_sample_period = (c)->stack_sample;                          \
		(o)->fault_tracepoint = (c)->fault_tracepoint;                         \
		(o)->memcg_from = (c)->memcg_from;                                     \
		(o)->status_mode = (c)->status;                                        \
	} while (0)

/* mp_cli_parse()'s return when --help was printed: the command exits 0. */
#define MP_CLI_HELP (-1)

/*
 * Parse argv (argv[0] the command's name) against cmd's table: the shared
 * options into c, a command's own through cmd->opt(ctx, ...). Checks what
 * needs no other option: counts, --btf (mp_kbtf_check), an unknown
 * option, a word left over, a target option given twice. Returns 0,
 * MP_CLI_HELP, or the exit status (a line said).
 */
int mp_cli_parse(const struct mp_cli_cmd *cmd, int argc, char **argv, struct mp_cli *c,
		 void *ctx);

/*
 * After the command's own checks of which options go together: --limit
 * parsed and held to cmd->limit_min, --format checked for cmd->kind,
 * --bytes and --table checked against it and set in mp_render_opts, -o
 * checked to be writable. Returns 0 or MP_EXIT_USAGE (a line said).
 */
int mp_cli_finish(const struct mp_cli_cmd *cmd, struct mp_cli *c);

/* How many of --cgroup, --pid and --limit were given (each counted once). */
int mp_cli_targets(const struct mp_cli *c);

/* `memprobe CMD --help`: the synopsis, then every option of the table with
 * its meaning and its default. In the synopsis, {KIND} (a document kind:
 * {limits}, {compare}) stands for the formats --format takes for it, from
 * the table that checks it, "text|json|..."; a line that starts with a
 * space continues the form above it. */
void mp_cli_help(const struct mp_cli_cmd *cmd, FILE *f);

/* The formats for documents of kind ("limits", ..., "compare"), as the
 * synopsis gives them: "text|json|env|markdown|openmetrics". */
void mp_cli_formats(const char *kind, char *buf, size_t len);

/* "memprobe CMD: " and the formatted rest, one line on stderr (a warning,
 * or "problem; fix"). mp_cli_bad is then MP_EXIT_USAGE, mp_cli_fail
 * MP_EXIT_RUNTIME, for `return mp_cli_bad(...)`. */
void mp_cli_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define mp_cli_bad(cmd, ...) (mp_cli_warn(cmd, __VA_ARGS__), MP_EXIT_USAGE)
#define mp_cli_fail(cmd, ...) (mp_cli_warn(cmd, __VA_ARGS__), MP_EXIT_RUNTIME)

/* -o PATH that mp_out_open() refused with err: one line. A stop signal
 * while a FIFO waited for its reader is no bad path: MP_EXIT_RUNTIME, and
 * says so; anything else MP_EXIT_USAGE, "cannot create it". */
int mp_cli_out_bad(const char *cmd, const char *path, int err);

/* Rendered text (len bytes; freed here) to -o path (NULL or "-": standard
 * output), as report and compare write it: a bad path in one line, a
 * write error in one line, and a reader that has read enough (| head:
 * EPIPE) said nothing of. Returns 0 or the exit status. */
int mp_cli_write_text(const char *cmd, const char *path, char *text, size_t len);

/* A positive size such as 512M, 1GiB or a byte count, for option opt
 * ("--chunk"). Returns 0 or MP_EXIT_USAGE (a line said). */
int mp_cli_size(const char *cmd, const char *opt, const char *arg, uint64_t *v);

/* A whole number from min to max; else "OPT ARG: not WHAT; FIX" and
 * MP_EXIT_USAGE. */
int mp_cli_count(const char *cmd, const char *opt, const char *arg, long min, long max,
		 const char *what, const char *fix, long *v);

/* Seconds (a fraction allowed), 0 only when zero_ok, 31 days at most.
 * Returns 0 or MP_EXIT_USAGE (a line said). */
int mp_cli_seconds(const char *cmd, const char *opt, const char *arg, bool zero_ok, double *v);

/* Commands that load BPF and make cgroups: 0 as root, else a line and
 * MP_EXIT_USAGE. */
int mp_cli_need_root(const char *cmd);

/* The host (mp_host_read of /): 0, or a line and MP_EXIT_RUNTIME. */
int mp_cli_host(const char *cmd, struct mp_host *h);

/* SIGINT, SIGTERM and SIGHUP to handler: the run stops and still reports. */
void mp_cli_on_stop(void (*handler)(int));

#endif
