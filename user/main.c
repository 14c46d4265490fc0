// SPDX-License-Identifier: GPL-2.0
/* memprobe: where a memory cgroup's memory goes. */
#include "cmd_limits.h"
#include "cmd_report.h"
#include "probe.h"
#include "record.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: memprobe COMMAND [OPTIONS]\n"
	      "\n"
	      "  limits   the effective memory limit of a cgroup, host RAM, usage, headroom\n"
	      "  probe    fill a cgroup to its margin from a child cgroup and attribute the growth\n"
	      "  record   attribute a workload's or a command's memory over time: peak, shares, OOM kills\n"
	      "\n"
	      "memprobe COMMAND --help for the options of each.\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return MP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "limits") == 0)
		return mp_cmd_limits(argc - 1, argv + 1);
	if (strcmp(argv[1], "probe") == 0)
		return mp_cmd_probe(argc - 1, argv + 1);
	if (strcmp(argv[1], "record") == 0)
		return mp_cmd_record(argc - 1, argv + 1);
	if (strcmp(argv[1], "report") == 0) /* rd-doc: the lead moves it into the table */
		return mp_cmd_report(argc - 1, argv + 1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "memprobe: unknown command '%s'; use limits, probe or record (memprobe --help)\n",
		argv[1]);
	return MP_EXIT_USAGE;
}
