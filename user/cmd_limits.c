// SPDX-License-Identifier: GPL-2.0
/* memprobe limits: the effective limit of a cgroup, host RAM, headroom. */
#include "cmd_limits.h"
#include "doc.h"
#include "kernel_features.h"
#include "target.h"
#include "attr.h"
#include "json.h"
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

static void print_text(const struct mp_host *h, const struct mp_cgroup *cg)
{
	char b[32];

	printf("host\n");
	printf("  kernel              %s (BTF %s)\n", h->kernel_release,
	       h->btf_present ? "present" : "absent");
	printf("  MemTotal            %s (%" PRIu64 " bytes)\n",
	       mp_fmt_bytes(h->mem_total_bytes, b, sizeof(b)), h->mem_total_bytes);
	printf("  MemAvailable        %s\n", mp_fmt_bytes(h->mem_available_bytes, b, sizeof(b)));
	printf("  page size           %ld\n", h->page_size);
	printf("  THP                 enabled=%s defrag=%s\n",
	       h->thp_enabled[0] ? h->thp_enabled : "n/a", h->thp_defrag[0] ? h->thp_defrag : "n/a");
	printf("  cgroup mode         %s\n", mp_cg_mode_name(h->cg_mode));
	printf("cgroup %s (%s)%s\n", cg->path, cg->version == 1 ? "v1" : "v2",
	       cg->host_root ? ", the host's root memory cgroup" : "");
	printf("  directory           %s\n", cg->dir);
	printf("  limit               %s\n", mp_fmt_bytes(cg->limit_bytes, b, sizeof(b)));
	printf("  effective limit     %s (%" PRIu64 " bytes), set by %s\n",
	       mp_fmt_bytes(cg->effective_limit_bytes, b, sizeof(b)), cg->effective_limit_bytes,
	       cg->effective_from);
	if (cg->has_high)
		printf("  memory.high         %s\n", mp_fmt_bytes(cg->high_bytes, b, sizeof(b)));
	if (cg->has_swap_limit)
		printf("  %-19s %s\n", cg->version == 1 ? "memsw limit" : "swap limit",
		       mp_fmt_bytes(cg->swap_limit_bytes, b, sizeof(b)));
	printf("  usage               %s\n", mp_fmt_bytes(cg->usage_bytes, b, sizeof(b)));
	if (cg->has_peak)
		printf("  peak                %s\n", mp_fmt_bytes(cg->peak_bytes, b, sizeof(b)));
	printf("  headroom            %s (%" PRIu64 " bytes), set by %s\n",
	       mp_fmt_bytes(cg->headroom_bytes, b, sizeof(b)), cg->headroom_bytes, cg->headroom_from);
}

static void env_u64(const char *name, uint64_t v)
{
	if (v == MP_UNLIMITED)
		printf("MEMPROBE_%s=max\n", name);
	else
		printf("MEMPROBE_%s=%" PRIu64 "\n", name, v);
}

/* Shell-safe: single quotes, with ' written as '\'' */
static void env_str(const char *name, const char *v)
{
	printf("MEMPROBE_%s='", name);
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*v);
	}
	puts("'");
}

static void print_env(const struct mp_host *h, const struct mp_cgroup *cg)
{
	env_u64("MEM_TOTAL_BYTES", h->mem_total_bytes);
	env_u64("MEM_AVAILABLE_BYTES", h->mem_available_bytes);
	env_str("CGROUP_MODE", mp_cg_mode_name(h->cg_mode));
	env_str("CGROUP_PATH", cg->path);
	env_str("CGROUP_DIR", cg->dir);
	env_u64("LIMIT_BYTES", cg->limit_bytes);
	env_u64("EFFECTIVE_LIMIT_BYTES", cg->effective_limit_bytes);
	if (cg->has_high)
		env_u64("HIGH_BYTES", cg->high_bytes);
	if (cg->has_swap_limit)
		env_u64(cg->version == 1 ? "MEMSW_LIMIT_BYTES" : "SWAP_LIMIT_BYTES",
			cg->swap_limit_bytes);
	env_u64("USAGE_BYTES", cg->usage_bytes);
	if (cg->has_peak)
		env_u64("PEAK_BYTES", cg->peak_bytes);
	env_u64("HEADROOM_BYTES", cg->headroom_bytes);
}

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
	if (strcmp(format, "json") == 0) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddItemToObject(doc, "host", mp_host_json(&host));
		cJSON_AddItemToObject(doc, "cgroup", mp_cgroup_json(&cg));
		ret = mp_json_print(doc, stdout, 1) ? MP_EXIT_RUNTIME : 0;
		cJSON_Delete(doc);
		return ret;
	}
	if (strcmp(format, "env") == 0)
		print_env(&host, &cg);
	else
		print_text(&host, &cg);
	return fflush(stdout) ? MP_EXIT_RUNTIME : 0;
}
