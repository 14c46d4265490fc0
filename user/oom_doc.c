// SPDX-License-Identifier: GPL-2.0
/* An OOM kill explained (oom_doc.h): the model of record's oom_kills. */
#include "oom_doc.h"
#include "json.h"
#include "util.h"

#include <limits.h>
#include <stdio.h>

/* A charge that failed left less than this below the limit: the largest
 * one (a PMD huge page, 2 MiB) and a per-CPU batch (64 pages) */
#define AT_LIMIT_BYTES ((2ULL << 20) + (256ULL << 10))

static bool unlimited(uint64_t max_pages, long page_size)
{
	/* PAGE_COUNTER_MAX: LONG_MAX / PAGE_SIZE */
	return max_pages >= (uint64_t)LONG_MAX / (uint64_t)page_size;
}

static cJSON *level_json(const struct mp_cgroup *cg, const struct mp_oom_level *l,
			 long page_size)
{
	cJSON *o = cJSON_CreateObject();
	char dir[PATH_MAX];

	if (mp_cgroup_dir_of_id(cg, l->cgid, dir, sizeof(dir)))
		snprintf(dir, sizeof(dir), "(cgroup id %llu)", (unsigned long long)l->cgid);
	cJSON_AddStringToObject(o, "dir", dir);
	mp_json_add_u64(o, "usage_bytes", l->usage_pages * (uint64_t)page_size);
	if (unlimited(l->max_pages, page_size))
		cJSON_AddNullToObject(o, "limit_bytes");
	else
		mp_json_add_u64(o, "limit_bytes", l->max_pages * (uint64_t)page_size);
	mp_json_add_u64(o, "failcnt", l->failcnt);
	return o;
}

/* The lowest level at its limit: where the failed charge's walk up the
 * page counters stopped (page_counter_try_charge), the OOM's memcg. */
static int level_hit(const struct mp_oom_event *ev, long page_size)
{
	for (uint32_t i = 0; i < ev->nlevels && i < MP_OOM_LEVELS; i++) {
		const struct mp_oom_level *l = &ev->levels[i];

		if (!unlimited(l->max_pages, page_size) &&
		    (l->usage_pages + AT_LIMIT_BYTES / (uint64_t)page_size) >= l->max_pages)
			return (int)i;
	}
	return -1;
}

/* What the cgroup held at the last sample, each byte once: what the
 * processes map (anon, and mapped page cache and shmem: their RSS), the
 * shmem and the page cache no process maps, kernel and sock. */
static cJSON *charged_json(const struct mp_cg_stat *st)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t file = st->bytes[MP_CAT_FILE], shmem = st->bytes[MP_CAT_SHMEM];
	uint64_t mapped = MP_MIN(st->file_mapped, file);
	uint64_t shmem_un = shmem > mapped ? shmem - mapped : 0;

	mp_json_add_u64(o, "rss_bytes", st->bytes[MP_CAT_ANON] + mapped);
	mp_json_add_u64(o, "shmem_unmapped_bytes", shmem_un);
	mp_json_add_u64(o, "page_cache_unmapped_bytes", file - mapped - MP_MIN(shmem_un, file - mapped));
	mp_json_add_u64(o, "kernel_bytes", st->bytes[MP_CAT_KERNEL]);
	mp_json_add_u64(o, "sock_bytes", st->bytes[MP_CAT_SOCK]);
	return o;
}

void mp_oom_explain(cJSON *kill, const struct mp_cgroup *cg, const struct mp_oom_event *ev,
		    const struct mp_cg_stat *st, bool have_st, long page_size)
{
	cJSON *arr = cJSON_AddArrayToObject(kill, "levels");
	int hit = level_hit(ev, page_size);

	for (uint32_t i = 0; i < ev->nlevels && i < MP_OOM_LEVELS; i++)
		cJSON_AddItemToArray(arr, level_json(cg, &ev->levels[i], page_size));
	if (hit < 0) {
		cJSON_AddNullToObject(kill, "limit_hit");
	} else {
		cJSON *h = level_json(cg, &ev->levels[hit], page_size);

		cJSON_DeleteItemFromObjectCaseSensitive(h, "failcnt");
		cJSON_AddItemToObject(kill, "limit_hit", h);
	}
	if (have_st && st->have[MP_CAT_ANON] && st->have[MP_CAT_FILE] && st->have_file_mapped)
		cJSON_AddItemToObject(kill, "charged", charged_json(st));
	else
		cJSON_AddNullToObject(kill, "charged");
}
