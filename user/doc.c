// SPDX-License-Identifier: GPL-2.0
/* The document model: the header every document starts with, and the
 * members more than one kind shares (host, cgroup). */
#include "doc.h"
#include "version.h"
#include "json.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const kind_names[] = { "limits", "features", "probe", "record", "budget",
					   "compare" };

int mp_doc_kind(const char *name)
{
	for (size_t i = 0; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (strcmp(name, kind_names[i]) == 0)
			return 1 << i;
	return 0;
}

const char *mp_doc_kind_name(int kind)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (kind == 1 << i)
			return kind_names[i];
	return "unknown";
}

cJSON *mp_host_json(const struct mp_host *h)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "hostname", h->hostname);
	cJSON_AddStringToObject(o, "kernel_release", h->kernel_release);
	mp_json_add_str_or_null(o, "distribution", h->distribution);
	cJSON_AddNumberToObject(o, "cpus", h->cpus);
	mp_json_add_u64(o, "mem_total_bytes", h->mem_total_bytes);
	mp_json_add_u64(o, "mem_available_bytes", h->mem_available_bytes);
	mp_json_add_u64(o, "page_size_bytes", (uint64_t)h->page_size);
	mp_json_add_str_or_null(o, "thp_enabled", h->thp_enabled);
	mp_json_add_str_or_null(o, "thp_defrag", h->thp_defrag);
	cJSON_AddBoolToObject(o, "btf", h->btf_present);
	cJSON_AddStringToObject(o, "cgroup_mode", mp_cg_mode_name(h->cg_mode));
	if (h->have_lru_gen)
		cJSON_AddStringToObject(o, "lru_gen", h->lru_gen);
	return o;
}

static void add_or_null(cJSON *o, const char *name, bool have, uint64_t v)
{
	if (have)
		mp_json_add_u64(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

/* memory.stat as the cgroup was read: the memory no process maps (shmem
 * at least, a tmpfs file whose writer left: "OOM-killed with low RSS")
 * and the transparent huge pages; null where the kernel keeps no key */
static void moment_json(cJSON *o, const struct mp_cgroup *cg)
{
	static const char *const thp[3] = { "anon_thp_bytes", "file_thp_bytes",
					    "shmem_thp_bytes" };

	add_or_null(o, "file_mapped_bytes", cg->has_unmapped, cg->file_mapped_bytes);
	add_or_null(o, "shmem_unmapped_bytes", cg->has_unmapped, cg->shmem_unmapped_bytes);
	add_or_null(o, "file_unmapped_bytes", cg->has_unmapped, cg->file_unmapped_bytes);
	for (int i = 0; i < 3; i++)
		add_or_null(o, thp[i], cg->has_thp[i], cg->thp_bytes[i]);
}

cJSON *mp_cgroup_json(const struct mp_cgroup *cg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "path", cg->path);
	cJSON_AddStringToObject(o, "dir", cg->dir);
	cJSON_AddStringToObject(o, "version", cg->version == 1 ? "v1" : "v2");
	cJSON_AddBoolToObject(o, "host_root", cg->host_root);
	mp_json_add_limit(o, "limit_bytes", cg->limit_bytes);
	mp_json_add_u64(o, "effective_limit_bytes", cg->effective_limit_bytes);
	cJSON_AddStringToObject(o, "effective_limit_from", cg->effective_from);
	if (cg->has_high) /* v2 only: v1 has no memory.high */
		mp_json_add_limit(o, "high_bytes", cg->high_bytes);
	if (cg->has_swap_limit)
		mp_json_add_limit(o, cg->version == 1 ? "memsw_limit_bytes" : "swap_limit_bytes",
				  cg->swap_limit_bytes);
	mp_json_add_u64(o, "usage_bytes", cg->usage_bytes);
	if (cg->has_peak)
		mp_json_add_u64(o, "peak_bytes", cg->peak_bytes);
	else
		cJSON_AddNullToObject(o, "peak_bytes");
	mp_json_add_u64(o, "headroom_bytes", cg->headroom_bytes);
	cJSON_AddStringToObject(o, "headroom_from", cg->headroom_from);
	/* the throttling point and the soft headroom beside the hard one */
	if (cg->throttle_bytes)
		mp_json_add_u64(o, "throttle_bytes", cg->throttle_bytes);
	else
		cJSON_AddNullToObject(o, "throttle_bytes");
	mp_json_add_str_or_null(o, "throttle_from", cg->throttle_from);
	mp_json_add_str_or_null(o, "throttle_kind", cg->throttle_kind);
	if (cg->has_reclaimable) {
		mp_json_add_u64(o, "reclaimable_bytes", cg->reclaimable_bytes);
		mp_json_add_u64(o, "soft_headroom_bytes", cg->soft_headroom_bytes);
	} else {
		cJSON_AddNullToObject(o, "reclaimable_bytes");
		cJSON_AddNullToObject(o, "soft_headroom_bytes");
	}
	moment_json(o, cg);
	return o;
}

cJSON *mp_doc_new(const char *kind, const struct mp_host *h)
{
	cJSON *doc = cJSON_CreateObject(), *gen;
	char when[32];
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(when, sizeof(when), "1970-01-01T00:00:00Z");
	cJSON_AddNumberToObject(doc, "format_version", MP_FORMAT_VERSION);
	cJSON_AddStringToObject(doc, "kind", kind);
	gen = cJSON_AddObjectToObject(doc, "generator");
	cJSON_AddStringToObject(gen, "name", "memprobe");
	cJSON_AddStringToObject(gen, "version", mp_version());
	cJSON_AddStringToObject(doc, "created", when);
	cJSON_AddItemToObject(doc, "host", mp_host_json(h));
	return doc;
}

cJSON *mp_doc_limits(const struct mp_host *h, const struct mp_cgroup *cg)
{
	cJSON *doc = mp_doc_new("limits", h);

	cJSON_AddItemToObject(doc, "cgroup", mp_cgroup_json(cg));
	return doc;
}

