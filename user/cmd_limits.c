// SPDX-License-Identifier: GPL-2.0
/* memprobe limits: the effective limit of a cgroup, host RAM, headroom. */
#include "cmd_limits.h"
#include "cli.h"
#include "doc.h"
#include "kernel_features.h"
#include "target.h"
#include "attr.h"
#include "json.h"
#include "render.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_FEATURES = MP_OPT_CMD };

static const struct mp_cli_opt limits_opts[] = {
	MP_CLI_OPT_CGROUP("describe", "memprobe's own"),
	MP_CLI_OPT_PID("describe the cgroup of this process"),
	MP_CLI_OPT_FORMAT("text, json or env (shell assignments); with --features text or json"),
	{ "features", 0, NULL, "what this kernel offers memprobe instead: each concern's "
	  "hooks, tried the way a run tries them (needs root)", NULL, OPT_FEATURES },
	MP_CLI_OPT_BTF,
	MP_CLI_OPT_HELP,
	{ 0 },
};

static int limits_opt(void *ctx, int id, const char *arg)
{
	(void)arg;
	if (id == OPT_FEATURES)
		*(bool *)ctx = true;
	return 0;
}

static const struct mp_cli_cmd limits_cmd = {
	.name = "limits",
	.kind = "limits",
	.synopsis = "[--cgroup PATH | --pid PID] [--format text|json|env]\n"
		    "--features [--format text|json] [--btf FILE]",
	.opts = limits_opts,
	.opt = limits_opt,
};

/* Which options go together; then the shared checks. */
static int check_opts(struct mp_cli *c, bool features)
{
	int ret;

	if (c->cgroup && c->pid)
		return mp_cli_bad("limits", "--cgroup and --pid both given; give one of them");
	if ((ret = mp_cli_finish(&limits_cmd, c)))
		return ret;
	if (features && (c->cgroup || c->pid))
		return mp_cli_bad("limits", "--features describes the kernel, not a cgroup; "
				  "drop --cgroup and --pid");
	if (features && !strcmp(c->format, "env"))
		return mp_cli_bad("limits", "--features has no env format; "
				  "use --format text or json");
	if (features && (ret = mp_render_check("limits", "features", c->format)))
		return ret;
	if (c->btf && !features)
		return mp_cli_bad("limits", "--btf goes with --features; add --features");
	if (features && geteuid() != 0)
		return mp_cli_bad("limits", "--features loads BPF programs; run it as root");
	return 0;
}

int mp_cmd_limits(int argc, char **argv)
{
	const char *path, *pid, *format, *btf;
	bool features = false;
	struct mp_cli c;
	struct mp_host host;
	struct mp_cgroup cg;
	int ret;

	ret = mp_cli_parse(&limits_cmd, argc, argv, &c, &features);
	if (!ret)
		ret = check_opts(&c, features);
	if (ret)
		return ret < 0 ? 0 : ret;
	path = c.cgroup;
	pid = c.pid;
	format = c.format;
	btf = c.btf;
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
