/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The probe command's options and run, shared with `memprobe budget`
 * (cmd_budget.c), which takes the same options and turns the probe's
 * document into a budget.
 */
#ifndef MEMPROBE_CMD_PROBE_H
#define MEMPROBE_CMD_PROBE_H

#include <cjson/cJSON.h>
#include "cli.h"
#include "probe.h"

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
	MP_CLI_OPT_FAULT_TRACEPOINT, MP_CLI_OPT_TOP,                                   \
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

/*
 * Run `memprobe probe` as cmd (its name in messages, its kind for --format,
 * its table with MP_PROBE_OPTS, .opt = mp_probe_opt), and emit finish(the
 * probe's document) when finish is not NULL (it takes the document and
 * returns the one to emit, or NULL with a line said: exit 1). Returns the
 * exit status.
 */
int mp_probe_main(const struct mp_cli_cmd *cmd, cJSON *(*finish)(cJSON *doc, uint64_t margin),
		  int argc, char **argv);

/* `memprobe probe ...`: returns the process exit status. */
int mp_cmd_probe(int argc, char **argv);

#endif
