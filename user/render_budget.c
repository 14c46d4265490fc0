// SPDX-License-Identifier: GPL-2.0
/* A budget document as text and as shell assignments (--format env, for
 * `eval "$(memprobe budget --format env ...)"` in an entrypoint). */
#include "budget_doc.h"
#include "render.h"
#include "util.h"

#include <inttypes.h>
#include <string.h>

/* The figures, by their env name and their member in "figures". */
static const struct { const char *var, *name; } figs[] = {
	{ "EFFECTIVE_LIMIT_BYTES", "effective_limit_bytes" },
	{ "THROTTLE_BYTES", "throttle_bytes" },
	{ "USAGE_BYTES", "usage_bytes" },
	{ "HARD_HEADROOM_BYTES", "hard_headroom_bytes" },
	{ "SOFT_HEADROOM_BYTES", "soft_headroom_bytes" },
	{ "ROOM_BYTES", "room_bytes" },
	{ "PAGE_CACHE_BYTES", "page_cache_bytes" },
	{ "SOFT_ROOM_BYTES", "soft_room_bytes" },
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
	/* the basis and the soft budget beside it (older documents: none) */
	if (mp_rd_str(rd, doc, "basis", MP_RD_ABSENT))
		fprintf(f, "MEMPROBE_BUDGET_BASIS=%s\n", mp_rd_str(rd, doc, "basis", 0));
	if (mp_rd_item(rd, doc, "budget_soft_bytes", MP_RD_ABSENT)) {
		uint64_t v;

		if (mp_rd_u64(rd, doc, "budget_soft_bytes", MP_RD_NULL, &v))
			fprintf(f, "MEMPROBE_BUDGET_SOFT_BYTES=%" PRIu64 "\n", v);
		else
			fputs("MEMPROBE_BUDGET_SOFT_BYTES=\n", f);
	}
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		uint64_t v;

		if (!mp_rd_item(rd, fg, figs[i].name, MP_RD_ABSENT))
			continue; /* a figure older documents lack */
		/* null (none, e.g. no memory.high): an empty value */
		if (mp_rd_u64(rd, fg, figs[i].name, MP_RD_NULL, &v))
			fprintf(f, "MEMPROBE_BUDGET_%s=%" PRIu64 "\n", figs[i].var, v);
		else
			fprintf(f, "MEMPROBE_BUDGET_%s=\n", figs[i].var);
	}
}

/*
 * Which headroom the budget stands on, and the other beside it whenever
 * the cgroup holds page cache: a budget on the hard headroom moves with the
 * cache (236 MiB from a saved probe, 79 MiB three minutes later with more
 * cache), the soft one does not, at the cost of the workload's cache.
 */
static void text_basis(const cJSON *doc, const cJSON *fg, FILE *f, struct mp_rd *rd)
{
	const char *basis = mp_rd_str(rd, doc, "basis", MP_RD_ABSENT);
	uint64_t cache = 0, soft = 0, room, hard = mp_rd_u64v(rd, fg, "hard_headroom_bytes");
	char b[3][32];

	if (!basis)
		return;
	mp_rd_u64(rd, fg, "page_cache_bytes", MP_RD_NULL | MP_RD_ABSENT, &cache);
	fprintf(f, "  basis: the %s (%s), the page cache in the usage (%s) counted as used\n",
		strcmp(basis, "memory.high") ? "hard headroom" : "room under memory.high",
		mp_fmt_bytes(mp_rd_u64v(rd, fg, "room_bytes"), b[0], sizeof(b[0])),
		mp_fmt_bytes(cache, b[1], sizeof(b[1])));
	if (!cache || !mp_rd_u64(rd, doc, "budget_soft_bytes", MP_RD_NULL | MP_RD_ABSENT, &soft))
		return;
	/* the room the soft budget stands on, as the document has it (it was
	 * printed as hard + cache, named "soft headroom", beside a table
	 * whose soft_headroom_bytes is another figure) */
	if (!mp_rd_u64(rd, fg, "soft_room_bytes", MP_RD_NULL | MP_RD_ABSENT, &room))
		room = hard + cache;
	fprintf(f, "  hard headroom %s, soft room %s: on the soft room (the page cache counted "
		"as room: the kernel reclaims it before an OOM kill, at the cost of the workload's "
		"cache) the budget would be %s (%" PRIu64 " bytes)\n",
		mp_fmt_bytes(hard, b[0], sizeof(b[0])), mp_fmt_bytes(room, b[1], sizeof(b[1])),
		mp_fmt_bytes(soft, b[2], sizeof(b[2])), soft);
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
	text_basis(doc, fg, f, rd);
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		uint64_t v;

		if (!mp_rd_item(rd, fg, figs[i].name, MP_RD_ABSENT))
			continue; /* a figure older documents lack */
		if (mp_rd_u64(rd, fg, figs[i].name, MP_RD_NULL, &v))
			fprintf(f, "  %-26s %s (%" PRIu64 ")\n", figs[i].name,
				mp_fmt_bytes(v, s, sizeof(s)), v);
		else
			fprintf(f, "  %-26s none\n", figs[i].name);
	}
	fprintf(f, "  kernel cost from %s\n", mp_rd_str(rd, fg, "kernel_cost_source", 0));
	fprintf(f, "  %s\n", mp_rd_str(rd, doc, "derivation", 0));
}
