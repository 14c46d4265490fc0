// SPDX-License-Identifier: GPL-2.0
/* memprobe limits: the effective limit of a cgroup, host RAM, headroom. */
#include "cmd_limits.h"
#include "doc.h"
#include "kernel_features.h"
#include "target.h"
#include "attr.h"
#include "json.h"
#include "render.h"
#include "util.h"

#include <getopt.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char optbuf[64];

static void usage(FILE *f)
{
	fputs("usage: memprobe limits [--cgroup PATH | --pid PID] [--format text|json|env]\n"
	      "       memprobe limits --features [--format text|json] [--btf FILE]\n", f);
}

int mp_cmd_limits(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "features", no_argument, NULL, 'F' },
		{ "btf", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = NULL, *pid = NULL, *format = "text", *btf = NULL;
	bool features = false;
	struct mp_host host;
	struct mp_cgroup cg;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:p:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'p': pid = optarg; break;
		case 'f': format = optarg; break;
		case 'F': features = true; break;
		case 'B':
			if ((ret = mp_attr_btf_opt("limits", optarg)))
				return ret;
			btf = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "memprobe limits: unknown option or missing value '%s'; "
				"see memprobe limits --help\n", mp_bad_option(argv, optbuf, sizeof(optbuf)));
			return MP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "memprobe limits: unexpected argument '%s'; see memprobe limits --help\n",
			argv[optind]);
		return MP_EXIT_USAGE;
	}
	if (path && pid) {
		fputs("memprobe limits: --cgroup and --pid both given; give one of them\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "env")) {
		fprintf(stderr, "memprobe limits: --format %s: unknown; use text, json or env\n", format);
		return MP_EXIT_USAGE;
	}
	if (features && (path || pid)) {
		fputs("memprobe limits: --features describes the kernel, not a cgroup; "
		      "drop --cgroup and --pid\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (features && !strcmp(format, "env")) {
		fputs("memprobe limits: --features has no env format; use --format text or json\n",
		      stderr);
		return MP_EXIT_USAGE;
	}
	if (btf && !features) {
		fputs("memprobe limits: --btf goes with --features; add --features\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (features && geteuid() != 0) {
		fputs("memprobe limits: --features loads BPF programs; run it as root\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (mp_host_read("", &host)) {
		fputs("memprobe limits: cannot read /proc/meminfo\n", stderr);
		return MP_EXIT_RUNTIME;
	}
	if (features)
		return mp_features_print(&host, format, btf);
	if ((ret = mp_resolve_target("limits", "", &host, path, pid, &cg)))
		return ret;
	{
		cJSON *doc = mp_doc_limits(&host, &cg);

		ret = mp_emit("limits", doc, format, stdout);
		cJSON_Delete(doc);
		return ret;
	}
}
