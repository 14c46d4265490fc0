// SPDX-License-Identifier: GPL-2.0
/* Text rendering of the documents. */
#include "attribution.h"
#include "render.h"
#include "json.h"
#include "cgroup.h"
#include "util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


static int64_t jnum(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (!it)
		return 0;
	if (cJSON_IsRaw(it) && it->valuestring)
		return strtoll(it->valuestring, NULL, 10);
	return cJSON_IsNumber(it) ? (int64_t)it->valuedouble : 0;
}

static const char *jstr(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(it) ? it->valuestring : "";
}

static void print_stacks(const cJSON *stacks, FILE *f, int max_frames)
{
	const cJSON *st;
	char b[32], b2[32];

	cJSON_ArrayForEach(st, stacks) {
		const cJSON *fr;
		int i = 0;

		fprintf(f, "      %s net (%s allocated) by %s[%d]\n",
			mp_fmt_sbytes(jnum(st, "bytes"), b, sizeof(b)),
			mp_fmt_bytes((uint64_t)jnum(st, "alloc_bytes"), b2, sizeof(b2)),
			jstr(st, "comm"), (int)jnum(st, "pid"));
		cJSON_ArrayForEach(fr, cJSON_GetObjectItem(st, "frames")) {
			if (i++ >= max_frames)
				break;
			fprintf(f, "        %s\n", fr->valuestring);
		}
	}
}

void mp_report_probe_text(const cJSON *r, FILE *f)
{
	static const char *nine[] = {
		"cgroup_limit_bytes", "usage_before_bytes", "allocated_bytes", "allocated_gib",
		"usage_peak_bytes", "usage_after_bytes", "overhead_bytes", "overhead_gib",
		"probe_chunks",
	};
	const cJSON *a = cJSON_GetObjectItem(r, "attribution");
	const cJSON *t = cJSON_GetObjectItem(r, "target");
	const cJSON *p = cJSON_GetObjectItem(r, "probe");
	char b1[32], b2[32], b3[32];

	/* The brief's line first, exactly as the field team's probe printed it. */
	fputc('{', f);
	for (size_t i = 0; i < sizeof(nine) / sizeof(nine[0]); i++) {
		char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(r, nine[i]));

		fprintf(f, "%s\"%s\": %s", i ? ", " : "", nine[i], s ? s : "null");
		cJSON_free(s);
	}
	fputs("}\n\n", f);

	if (cJSON_IsTrue(cJSON_GetObjectItem(r, "interrupted")))
		fputs("INTERRUPTED: the probe was stopped by a signal; figures are partial "
		      "(the chunk being filled counts as allocated as far as it got)\n", f);
	if (cJSON_IsNumber(cJSON_GetObjectItem(r, "probe_killed_by_signal")))
		fprintf(f, "KILLED: the probe process was killed by signal %d from outside memprobe; "
			"figures are partial\n",
			(int)jnum(r, "probe_killed_by_signal"));
	if (cJSON_IsTrue(cJSON_GetObjectItem(r, "probe_oom_killed")))
		fputs(strcmp(jstr(r, "probe_oom_limit"), "probe cgroup") == 0
			      ? "The probe was OOM-killed at its own cgroup's limit (the workload was not)\n"
			      : "The probe was OOM-killed at the target's limit: the workload grew "
				"while it ran (the probe, at oom_score_adj 1000, was the victim)\n", f);
	fprintf(f, "target     %s (cgroup %s)%s\n", jstr(t, "dir"), jstr(t, "version"),
		cJSON_IsTrue(cJSON_GetObjectItem(t, "created_by_memprobe")) ? ", made by memprobe" : "");
	fprintf(f, "limit      %s effective, set by %s\n",
		mp_fmt_bytes((uint64_t)jnum(t, "effective_limit_bytes"), b1, sizeof(b1)),
		jstr(t, "effective_limit_from"));
	fprintf(f, "probe      %s chunks, %s margin, thp %s, in %s (limit %s)\n",
		mp_fmt_bytes((uint64_t)jnum(p, "chunk_bytes"), b1, sizeof(b1)),
		mp_fmt_bytes((uint64_t)jnum(p, "margin_bytes"), b2, sizeof(b2)),
		jstr(p, "thp"), jstr(p, "cgroup"),
		mp_fmt_bytes((uint64_t)jnum(p, "limit_bytes"), b3, sizeof(b3)));
	if (a)
		mp_report_attribution_text(a, f);
}

void mp_report_attribution_text(const cJSON *a, FILE *f)
{
	const cJSON *it;
	char b1[32], b2[32], b3[32];

	const cJSON *rec = cJSON_GetObjectItem(a, "reconciliation");
	int64_t measured = jnum(rec, "measured_growth_bytes");
	fprintf(f, "\nWhere the cgroup's growth went (usage %s%s %s):\n", measured >= 0 ? "+" : "",
		mp_fmt_sbytes(measured, b1, sizeof(b1)), jstr(rec, "span"));
	fprintf(f, "  %-20s %12s %12s  %s\n", "category", "growth", "left after", "top tasks");
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(a, "categories")) {
		int64_t g = jnum(it, "growth_bytes");
		const cJSON *tk;
		char tasks[256] = "";
		int n = 0;

		if (!g && !jnum(it, "retained_bytes"))
			continue;
		cJSON_ArrayForEach(tk, cJSON_GetObjectItem(it, "tasks")) {
			if (n++ >= 3)
				break;
			char who[48];

			if (jnum(tk, "pid") > 0)
				snprintf(who, sizeof(who), "%s[%d]", jstr(tk, "comm"), (int)jnum(tk, "pid"));
			else
				snprintf(who, sizeof(who), "%s", jstr(tk, "comm"));
			mp_appendf(tasks, sizeof(tasks), "%s%s %s",
				 n > 1 ? ", " : "", who, mp_fmt_sbytes(jnum(tk, "bytes"), b3, sizeof(b3)));
		}
		fprintf(f, "  %-20s %12s %12s  %s\n", jstr(it, "name"),
			mp_fmt_sbytes(g, b1, sizeof(b1)),
			cJSON_GetObjectItem(it, "retained_bytes") ?
				mp_fmt_sbytes(jnum(it, "retained_bytes"), b2, sizeof(b2)) : "",
			tasks);
	}
	fprintf(f, "  %-20s %12s   (%s)\n", "attributed",
		mp_fmt_sbytes(jnum(rec, "attributed_bytes"), b1, sizeof(b1)), jstr(rec, "attributed_as"));
	{
		double pct = measured ? 100.0 * (double)jnum(rec, "unattributed_bytes") /
					(double)measured : 0.0;

		if (pct > -0.05 && pct < 0.05)
			pct = 0.0; /* no "-0.0%" */
		fprintf(f, "  %-20s %12s   (%.1f%% of the growth)\n", "unattributed",
			mp_fmt_sbytes(jnum(rec, "unattributed_bytes"), b1, sizeof(b1)), pct);
	}
	fputs("  (file includes shmem; kernel includes pagetables, kernel_stack, slab, percpu, vmalloc and kernel_other)\n", f);

	const cJSON *pf = cJSON_GetObjectItem(a, "page_faults");
	const cJSON *pg = cJSON_GetObjectItem(pf, "probe_per_gib_allocated");
	fprintf(f, "\nPage faults: %" PRId64 " in the target", jnum(pf, "total"));
	if (cJSON_IsRaw(pg))
		fprintf(f, "; the probe's: %" PRId64 ", %s per GiB it allocated",
			jnum(pf, "probe"), pg->valuestring);
	fputc('\n', f);

	const cJSON *ch = cJSON_GetObjectItem(a, "memcg_charges");
	if (cJSON_IsString(cJSON_GetObjectItem(ch, "source"))) {
		int n = 0;

		fprintf(f, "Charges asked of the memcg (gross, uncharges not subtracted): %s",
			mp_fmt_bytes((uint64_t)jnum(ch, "gross_bytes"), b1, sizeof(b1)));
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(ch, "by_task")) {
			if (n++ >= 3)
				break;
			fprintf(f, "%s%s[%d] %s", n == 1 ? ": " : ", ", jstr(it, "comm"),
				(int)jnum(it, "pid"), mp_fmt_bytes((uint64_t)jnum(it, "bytes"), b1, sizeof(b1)));
		}
		fputc('\n', f);
	}

	fputs("\nKernel paths (kernel page allocations with a stack, net of frees):\n", f);
	if (cJSON_GetArraySize(cJSON_GetObjectItem(a, "kernel_paths")) == 0)
		fputs(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "page_alloc"),
						       "kernel_pages_by_order")) ?
		      "  none recorded (no page allocation hook)\n" :
		      "  none recorded (no kernel page allocation in the target, or --stack-sample 0)\n", f);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(a, "kernel_paths")) {
		fprintf(f, "  %-20s %12s net, %s allocated\n", jstr(it, "path"),
			mp_fmt_sbytes(jnum(it, "bytes"), b1, sizeof(b1)),
			mp_fmt_bytes((uint64_t)jnum(it, "alloc_bytes"), b2, sizeof(b2)));
		const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(it, "top_stacks"), 0);
		if (first) {
			cJSON *one = cJSON_CreateArray();
			cJSON_AddItemReferenceToArray(one, (cJSON *)first);
			print_stacks(one, f, 8);
			cJSON_Delete(one);
		}
	}

	if (cJSON_GetArraySize(cJSON_GetObjectItem(a, "not_charged")) > 0) {
		fputs("\nNot charged to the cgroup (kernel pages allocated in its tasks without __GFP_ACCOUNT):\n", f);
		cJSON_ArrayForEach(it, cJSON_GetObjectItem(a, "not_charged"))
			fprintf(f, "  %-20s %12s allocated\n", jstr(it, "path"),
				mp_fmt_bytes((uint64_t)jnum(it, "alloc_bytes"), b1, sizeof(b1)));
	}

	fputs("\nHooks:\n", f);
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(a, "hooks")) {
		const cJSON *h = cJSON_GetObjectItem(it, "hook");
		fprintf(f, "  %-20s %s\n", jstr(it, "name"),
			cJSON_IsString(h) ? h->valuestring : "none");
	}
	const cJSON *miss = cJSON_GetObjectItem(a, "attribution_missing");
	if (cJSON_GetArraySize(miss) == 0)
		fputs("attribution missing: none\n", f);
	cJSON_ArrayForEach(it, miss)
		fprintf(f, "attribution missing: %s\n", jstr(it, "message"));
	fprintf(f, "events lost: %" PRId64 "\n",
		jnum(cJSON_GetObjectItem(a, "events_lost"), "total"));
}

/* ---- limits --------------------------------------------------------------- */

void mp_limits_text(const struct mp_host *h, const struct mp_cgroup *cg)
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

void mp_limits_env(const struct mp_host *h, const struct mp_cgroup *cg)
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
