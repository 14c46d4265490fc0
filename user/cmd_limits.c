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
#include "out.h"
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
	MP_CLI_OPT_FORMAT("{limits}; with --features {features}"),
	{ "features", 0, NULL, "what this kernel offers memprobe instead: each concern's "
	  "hooks, tried the way a run tries them (needs root)", NULL, OPT_FEATURES },
	MP_CLI_OPT_OUTPUT,
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
	/* {KIND}: the formats the parser takes for it (mp_cli_help) */
	.synopsis = "[--cgroup PATH | --pid PID] [-o FILE]\n"
		    " [-f {limits}]\n"
		    "--features [-f {features}] [--btf FILE] [-o FILE]",
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

/* The document: features, or the target's limits. NULL and *ret the exit
 * status when the target is not one; *ok false when features could start
 * no BPF session (the document says why, and the exit status is 1). */
static cJSON *limits_doc(const struct mp_cli *c, bool features, const struct mp_host *host,
			 bool *ok, int *ret)
{
	struct mp_cgroup cg;

	*ok = true;
	if (features)
		return mp_features_doc(host, c->btf, ok);
	if ((*ret = mp_resolve_target("limits", "", host, c->cgroup, c->pid, &cg)))
		return NULL;
	return mp_doc_limits(host, &cg);
}

int mp_cmd_limits(int argc, char **argv)
{
	bool features = false, ok;
	struct mp_out out = { 0 };
	struct mp_cli c;
	struct mp_host host;
	cJSON *doc;
	int ret, err;

	ret = mp_cli_parse(&limits_cmd, argc, argv, &c, &features);
	if (!ret)
		ret = check_opts(&c, features);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((ret = mp_cli_host("limits", &host)))
		return ret;
	if (!(doc = limits_doc(&c, features, &host, &ok, &ret)))
		return ret ? ret : mp_cli_fail("limits", "out of memory");
	if ((ret = mp_out_open(&out, c.out))) {
		cJSON_Delete(doc);
		return mp_cli_out_bad("limits", c.out, ret);
	}
	ret = mp_emit("limits", doc, c.format, out.f, c.out); /* it frees doc */
	if (!ret && (err = mp_out_commit(&out)))
		ret = mp_out_failed("limits", c.out, -err);
	mp_out_abort(&out);
	return ret ? ret : ok ? 0 : MP_EXIT_RUNTIME;
}
