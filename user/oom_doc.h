/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An OOM kill explained (record's oom_kills): which level's limit the
 * charge hit, each level's usage and limit at the kill (read by the
 * oom:mark_victim hook), and what the cgroup was charged for then that no
 * process's RSS shows (the last sample's memory.stat).
 */
#ifndef MEMPROBE_OOM_DOC_H
#define MEMPROBE_OOM_DOC_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "cgroup.h"
#include "memprobe.h"

/* The most values mp_oom_explain adds to a kill (as the loader counts
 * them): levels and each level's four, limit_hit and its three, charged
 * and its five. */
#define MP_OOM_DOC_MAX_VALUES (1 + MP_OOM_LEVELS * 5 + 4 + 6)

/*
 * Add to kill (one entry of oom_kills) "levels" (the victim's memcg up:
 * {dir, usage_bytes, limit_bytes (null: none), failcnt}), "limit_hit" (the
 * lowest level at its limit, {dir, usage_bytes, limit_bytes}, or null: no
 * level was, a host-wide OOM) and "charged" (from st, the last sample's
 * memory.stat: {rss_bytes, shmem_unmapped_bytes, page_cache_unmapped_bytes,
 * kernel_bytes, sock_bytes}, or null without it). cg: the target, whose
 * hierarchy the levels' ids are looked up in.
 */
void mp_oom_explain(cJSON *kill, const struct mp_cgroup *cg, const struct mp_oom_event *ev,
		    const struct mp_cg_stat *st, bool have_st, long page_size);

#endif
