/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe command's options and run, shared with `memprobe budget`
 * (cmd_budget.c), which takes the same options and turns the probe's
 * document into a budget.
 */
#ifndef MEMPROBE_CMD_PROBE_H
#define MEMPROBE_CMD_PROBE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include "cli.h"
#include "probe.h"
#include "util.h" /* struct mp_out */

/* probe's own option ids; a command reusing its table starts at MP_PROBE_OPT_NEXT */
enum {
	MP_PROBE_OPT_CHUNK = MP_OPT_CMD, MP_PROBE_OPT_MARGIN, MP_PROBE_OPT_THP,
	MP_PROBE_OPT_THREADS, MP_PROBE_OPT_POPULATE, MP_PROBE_OPT_FILL_HOST,
	MP_PROBE_OPT_TO_LIMIT, MP_PROBE_OPT_RECLAIM_CACHE, MP_PROBE_OPT_NEXT,
};

/* probe's options after the target ones, for an option table (fmt: --format's help) */
#define MP_PROBE_OPTS(fmt)                                                             \
	{ "chunk", 0, "SIZE", "fill in chunks of SIZE, a multiple of the page size",   \
	  "limit/32 in 2 MiB steps, 2 MiB to 1 GiB", MP_PROBE_OPT_CHUNK },             \
	{ "margin", 0, "SIZE", "stop while more than SIZE is left below the limit "    \
	  "(below memory.high, unless --to-limit)",                                    \
	  "limit/16 in 2 MiB steps, 2 MiB to 2 GiB", MP_PROBE_OPT_MARGIN },            \
	{ "thp", 0, "MODE", "transparent huge pages for the fill: auto (the host's "   \
	  "setting), never or always", "auto", MP_PROBE_OPT_THP },                     \
	MP_CLI_OPT_FORMAT(fmt), MP_CLI_OPT_OUTPUT, MP_CLI_OPT_STACK_SAMPLE,                \
	MP_CLI_OPT_FAULT_TRACEPOINT, MP_CLI_OPT_MEMCG_FROM, MP_CLI_OPT_TOP,            \
	{ "threads", 0, "N", "threads filling each chunk, 1 to "                       \
	  MP_CLI_STR(MP_PROBE_MAX_THREADS), "1", MP_PROBE_OPT_THREADS },               \
	{ "populate", 0, NULL, "fault the chunks in with MADV_POPULATE_WRITE (Linux "  \
	  "5.14+) instead of writing them (memset)", NULL, MP_PROBE_OPT_POPULATE },    \
	MP_CLI_OPT_BTF,                                                                \
	{ "fill-host", 0, NULL, "allow a probe of a root memory cgroup, or of one "   \
	  "with no limit on its path (it fills the host); with --cgroup or --pid",     \
	  NULL, MP_PROBE_OPT_FILL_HOST },                                              \
	{ "to-limit", 0, NULL, "probe up to the hard limit, past memory.high; a "      \
	  "throttled probe stops and says so", NULL, MP_PROBE_OPT_TO_LIMIT },          \
	{ "reclaim-cache", 0, NULL, "count the target's reclaimable page cache as "    \
	  "room: the kernel reclaims it to make room (the report says how much)",      \
	  NULL, MP_PROBE_OPT_RECLAIM_CACHE },                                          \
	MP_CLI_OPTS_STATUS

/* probe's handler of its own options (cmd->opt), for a table made with MP_PROBE_OPTS */
int mp_probe_opt(void *ctx, int id, const char *arg);

/* A probe run as its command made it: its document and where it goes. */
struct mp_probe_report {
	cJSON *doc;             /* the probe's document: the caller emits or frees it */
	struct mp_out out;      /* -o, opened before the probe (a bad one refused
				 * first): the caller commits it (mp_emit_save),
				 * then mp_out_abort()s it */
	const char *format;     /* --format */
	const char *out_arg;    /* -o as given (NULL: standard output) */
	uint64_t margin;        /* the margin the probe kept, in bytes */
	bool killed;            /* someone else killed the probe: the report is
				 * written, then the exit is 1 */
};

/*
 * The probe as cmd runs it (its name in messages, its kind for --format,
 * its table with MP_PROBE_OPTS, .opt = mp_probe_opt): the options, the
 * target, the fill with its BPF session around it, and the document. What
 * it made (a stand-in cgroup, the session, the lock) is undone before it
 * returns. Returns 0 with r->doc and r->out open; or the exit status with
 * a line said, nothing left open (0 and no document: --help was asked).
 */
int mp_probe_document(const struct mp_cli_cmd *cmd, int argc, char **argv,
		      struct mp_probe_report *r);

/* `memprobe probe ...`: returns the process exit status. */
int mp_cmd_probe(int argc, char **argv);

#endif
