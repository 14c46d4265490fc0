// SPDX-License-Identifier: GPL-2.0
/* The document model: what every report carries. */
#include "doc.h"
#include "json.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cJSON *mp_host_json(const struct mp_host *h)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_u64(o, "mem_total_bytes", h->mem_total_bytes);
	mp_json_add_u64(o, "mem_available_bytes", h->mem_available_bytes);
	mp_json_add_u64(o, "page_size_bytes", (uint64_t)h->page_size);
	cJSON_AddStringToObject(o, "thp_enabled", h->thp_enabled);
	cJSON_AddStringToObject(o, "thp_defrag", h->thp_defrag);
	cJSON_AddStringToObject(o, "kernel_release", h->kernel_release);
	cJSON_AddBoolToObject(o, "btf", h->btf_present);
	cJSON_AddStringToObject(o, "cgroup_mode", mp_cg_mode_name(h->cg_mode));
	return o;
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
	return o;
}
