// SPDX-License-Identifier: GPL-2.0
/* --format env: a limits document as shell assignments (MEMPROBE_NAME=value)
 * for `eval "$(memprobe limits --format env)"`. */
#include "render.h"

#include <inttypes.h>

static void env_u64(struct mp_rd *rd, FILE *f, const char *var, const cJSON *o, const char *name)
{
	fprintf(f, "MEMPROBE_%s=%" PRIu64 "\n", var, mp_rd_u64v(rd, o, name));
}

/* A limit: "max" where the document says null (no limit). */
static void env_limit(struct mp_rd *rd, FILE *f, const char *var, const cJSON *o,
		      const char *name)
{
	uint64_t v;

	if (mp_rd_u64(rd, o, name, MP_RD_NULL, &v))
		fprintf(f, "MEMPROBE_%s=%" PRIu64 "\n", var, v);
	else
		fprintf(f, "MEMPROBE_%s=max\n", var);
}

/* Shell-safe: single quotes, with ' written as '\'' */
static void env_str(struct mp_rd *rd, FILE *f, const char *var, const cJSON *o, const char *name)
{
	const char *v = mp_rd_str(rd, o, name, 0);

	fprintf(f, "MEMPROBE_%s='", var);
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", f);
		else
			fputc(*v, f);
	}
	fputs("'\n", f);
}

/* An integer that may be null (empty value) or absent (no line). */
static void env_opt_u64(struct mp_rd *rd, FILE *f, const char *var, const cJSON *o,
			const char *name)
{
	uint64_t v;

	if (!mp_rd_item(rd, o, name, MP_RD_ABSENT))
		return;
	if (mp_rd_u64(rd, o, name, MP_RD_NULL, &v))
		fprintf(f, "MEMPROBE_%s=%" PRIu64 "\n", var, v);
	else
		fprintf(f, "MEMPROBE_%s=\n", var);
}

static void env_opt_str(struct mp_rd *rd, FILE *f, const char *var, const cJSON *o,
			const char *name)
{
	if (mp_rd_str(rd, o, name, MP_RD_NULL))
		env_str(rd, f, var, o, name);
	else
		fprintf(f, "MEMPROBE_%s=\n", var);
}

static void render_env(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	const cJSON *h, *cg;
	uint64_t v;

	if (kind == MP_DOC_BUDGET) {
		mp_env_budget(doc, f, rd);
		return;
	}
	h = mp_rd_obj(rd, doc, "host", 0);
	cg = mp_rd_obj(rd, doc, "cgroup", 0);
	env_u64(rd, f, "MEM_TOTAL_BYTES", h, "mem_total_bytes");
	env_u64(rd, f, "MEM_AVAILABLE_BYTES", h, "mem_available_bytes");
	env_str(rd, f, "CGROUP_MODE", h, "cgroup_mode");
	env_str(rd, f, "CGROUP_PATH", cg, "path");
	env_str(rd, f, "CGROUP_DIR", cg, "dir");
	env_limit(rd, f, "LIMIT_BYTES", cg, "limit_bytes");
	env_u64(rd, f, "EFFECTIVE_LIMIT_BYTES", cg, "effective_limit_bytes");
	/* present only where the cgroup has them (v2's memory.high; a swap limit) */
	if (mp_rd_item(rd, cg, "high_bytes", MP_RD_ABSENT))
		env_limit(rd, f, "HIGH_BYTES", cg, "high_bytes");
	if (mp_rd_item(rd, cg, "memsw_limit_bytes", MP_RD_ABSENT))
		env_limit(rd, f, "MEMSW_LIMIT_BYTES", cg, "memsw_limit_bytes");
	if (mp_rd_item(rd, cg, "swap_limit_bytes", MP_RD_ABSENT))
		env_limit(rd, f, "SWAP_LIMIT_BYTES", cg, "swap_limit_bytes");
	env_u64(rd, f, "USAGE_BYTES", cg, "usage_bytes");
	if (mp_rd_u64(rd, cg, "peak_bytes", MP_RD_NULL, &v))
		fprintf(f, "MEMPROBE_PEAK_BYTES=%" PRIu64 "\n", v);
	env_u64(rd, f, "HEADROOM_BYTES", cg, "headroom_bytes");
	/* absent in older documents; null: none (empty) */
	env_opt_u64(rd, f, "THROTTLE_BYTES", cg, "throttle_bytes");
	if (mp_rd_item(rd, cg, "throttle_kind", MP_RD_ABSENT))
		env_opt_str(rd, f, "THROTTLE_KIND", cg, "throttle_kind");
	if (mp_rd_item(rd, cg, "throttle_from", MP_RD_ABSENT))
		env_opt_str(rd, f, "THROTTLE_FROM", cg, "throttle_from");
	env_opt_u64(rd, f, "RECLAIMABLE_BYTES", cg, "reclaimable_bytes");
	env_opt_u64(rd, f, "SOFT_HEADROOM_BYTES", cg, "soft_headroom_bytes");
}

const struct mp_renderer mp_renderer_env = {
	.name = "env",
	.about = "shell assignments",
	.kinds = MP_DOC_LIMITS | MP_DOC_BUDGET,
	.render = render_env,
};
