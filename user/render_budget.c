// SPDX-License-Identifier: GPL-2.0
/* A budget document as text and as shell assignments (--format env, for
 * `eval "$(memprobe budget --format env ...)"` in an entrypoint). */
#include "budget_doc.h"
#include "render.h"
#include "util.h"

#include <inttypes.h>

/* The figures, by their env name and their member in "figures". */
static const struct { const char *var, *name; } figs[] = {
	{ "EFFECTIVE_LIMIT_BYTES", "effective_limit_bytes" },
	{ "THROTTLE_BYTES", "throttle_bytes" },
	{ "USAGE_BYTES", "usage_bytes" },
	{ "HARD_HEADROOM_BYTES", "hard_headroom_bytes" },
	{ "SOFT_HEADROOM_BYTES", "soft_headroom_bytes" },
	{ "ROOM_BYTES", "room_bytes" },
	{ "KERNEL_PER_GIB_BYTES", "kernel_per_gib_bytes" },
	{ "WORKLOAD_OVERHEAD_BYTES", "workload_overhead_bytes" },
	{ "PROCESS_ALLOWANCE_BYTES", "process_allowance_bytes" },
	{ "MARGIN_BYTES", "margin_bytes" },
};

void mp_env_budget(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *fg = mp_rd_obj(rd, doc, "figures", 0);
	char why[400];

	/* no budget: no assignment at all, so that an entrypoint's eval sets
	 * nothing it could take for one (MEMPROBE_BUDGET_BYTES=0 was taken as
	 * a budget); a comment says why (eval ignores it) */
	if (mp_budget_zero(rd, doc, why, sizeof(why))) {
		fprintf(f, "# memprobe budget: no budget (0 B): %s\n", why);
		return;
	}
	fprintf(f, "MEMPROBE_BUDGET_BYTES=%" PRIu64 "\n", mp_rd_u64v(rd, doc, "budget_bytes"));
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		uint64_t v;

		/* null (none, e.g. no memory.high): an empty value */
		if (mp_rd_u64(rd, fg, figs[i].name, MP_RD_NULL, &v))
			fprintf(f, "MEMPROBE_BUDGET_%s=%" PRIu64 "\n", figs[i].var, v);
		else
			fprintf(f, "MEMPROBE_BUDGET_%s=\n", figs[i].var);
	}
}

void mp_text_budget(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *fg = mp_rd_obj(rd, doc, "figures", 0), *t = mp_rd_obj(rd, doc, "target", 0);
	uint64_t b = mp_rd_u64v(rd, doc, "budget_bytes");
	char s[32], why[400];

	fprintf(f, "budget     %s (%" PRIu64 " bytes) for %s\n", mp_fmt_bytes(b, s, sizeof(s)), b,
		mp_rd_str(rd, t, "dir", 0));
	if (mp_budget_zero(rd, doc, why, sizeof(why)))
		fprintf(f, "  %s\n", why);
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		uint64_t v;

		if (mp_rd_u64(rd, fg, figs[i].name, MP_RD_NULL, &v))
			fprintf(f, "  %-26s %s (%" PRIu64 ")\n", figs[i].name,
				mp_fmt_bytes(v, s, sizeof(s)), v);
		else
			fprintf(f, "  %-26s none\n", figs[i].name);
	}
	fprintf(f, "  kernel cost from %s\n", mp_rd_str(rd, fg, "kernel_cost_source", 0));
	fprintf(f, "  %s\n", mp_rd_str(rd, doc, "derivation", 0));
}
