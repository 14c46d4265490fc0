// SPDX-License-Identifier: GPL-2.0
/*
 * The budget document: from a probe document (loaded, so every number is
 * read exactly), the bytes a container's workload may allocate, and the
 * figures it came from. docs/attribution.md has the derivation.
 */
#include "budget_doc.h"
#include "doc.h"
#include "json.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* A new process's own cost beyond what it allocates: its binary's and
 * libraries' pages, stack, the first page tables. Not measured by the
 * probe (its process exists before the baseline), so allowed for. */
#define PROCESS_ALLOWANCE_BYTES (2 * MP_MIB)

/* The probe's own kernel cost (page tables, slab, ...): the overhead
 * object's when present, else the attribution's "kernel" rows of the probe
 * process; false when the document has neither. Both are signed bytes in
 * the schema: the probe's charges net of what the kernel took back during
 * it (probe --reclaim-cache of a cgroup with page cache reclaims the
 * workload's cache, and the difference can be negative). */
static bool user_cat(const char *cat)
{
	static const char *const user[] = { "anon", "anon_thp", "anon_unmapped", "file",
					    "file_thp", "shmem", "shmem_thp", "page_cache" };

	for (size_t i = 0; i < sizeof(user) / sizeof(user[0]); i++)
		if (!strcmp(cat, user[i]))
			return true;
	return false;
}

/*
 * The probe's kernel parts, its user memory left out: its anon beyond the
 * allocation is huge-page rounding, or below 0 where the peak came before
 * its last chunk was touched (-0.2 MiB in a 6.1 guest without BPF, which
 * took the budget's page tables from 1.9 MiB a GiB to 1.6, and to 0 in
 * the container stand-in). False without the parts (older documents).
 */
static bool probe_kernel_parts(struct mp_rd *rd, const cJSON *ov, int64_t *v)
{
	const cJSON *parts = mp_rd_arr(rd, ov, "probe_kernel_parts", MP_RD_ABSENT), *p;

	if (!parts)
		return false;
	*v = 0;
	cJSON_ArrayForEach(p, parts) {
		int64_t b;

		if (mp_rd_is_obj(rd, p) && !user_cat(mp_rd_str(rd, p, "category", 0)) &&
		    mp_rd_s64(rd, p, "bytes", 0, &b) && __builtin_add_overflow(*v, b, v))
			*v = b > 0 ? INT64_MAX : INT64_MIN;
	}
	return true;
}

static bool probe_kernel(struct mp_rd *rd, const cJSON *doc, int64_t *v, const char **src)
{
	const cJSON *ov = mp_rd_obj(rd, doc, "overhead", MP_RD_ABSENT | MP_RD_NULL);
	const cJSON *a = mp_rd_obj(rd, doc, "attribution", 0);
	const cJSON *cats = mp_rd_arr(rd, a, "categories", MP_RD_ABSENT), *c, *t;

	if (ov && probe_kernel_parts(rd, ov, v)) {
		*src = "overhead.probe_kernel_parts, less its user memory";
		return true;
	}
	if (ov && mp_rd_s64(rd, ov, "probe_kernel_bytes", MP_RD_ABSENT | MP_RD_NULL, v)) {
		*src = "overhead.probe_kernel_bytes";
		return true;
	}
	cJSON_ArrayForEach(c, cats) {
		const cJSON *tasks;

		if (!mp_rd_is_obj(rd, c) || strcmp(mp_rd_str(rd, c, "name", 0), "kernel"))
			continue;
		tasks = mp_rd_arr(rd, c, "tasks", 0);
		*v = 0;
		cJSON_ArrayForEach(t, tasks) {
			int64_t b;

			if (mp_rd_is_obj(rd, t) &&
			    !strcmp(mp_rd_str(rd, t, "comm", 0), "memprobe-probe") &&
			    mp_rd_s64(rd, t, "bytes", MP_RD_NULL | MP_RD_ABSENT, &b) &&
			    __builtin_add_overflow(*v, b, v)) /* no document sums past it */
				*v = b > 0 ? INT64_MAX : INT64_MIN;
		}
		*src = "attribution: the kernel category of memprobe-probe";
		return true;
	}
	return false;
}

/* Why the budget is 0 (what took the room), in words: the room against
 * what is taken from it before the workload's own bytes. */
static void zero_why(uint64_t limit, uint64_t usage, uint64_t head, uint64_t room,
		     uint64_t work, uint64_t allow, uint64_t margin, uint64_t per_gib, char *buf,
		     size_t len)
{
	char r[32], l[32], u[32], h[32], w[32], a[32], m[32], k[32];

	mp_fmt_bytes(room, r, sizeof(r));
	mp_fmt_bytes(limit, l, sizeof(l));
	mp_fmt_bytes(usage, u, sizeof(u));
	mp_fmt_bytes(head, h, sizeof(h));
	mp_fmt_bytes(work, w, sizeof(w));
	mp_fmt_bytes(allow, a, sizeof(a));
	mp_fmt_bytes(margin, m, sizeof(m));
	mp_fmt_bytes(per_gib, k, sizeof(k));
	if (room <= work + allow + margin)
		snprintf(buf, len, "nothing fits: the room, %s (effective limit %s, usage %s, "
			 "hard headroom %s), is no more than the workload overhead %s + the "
			 "process allowance %s + the margin %s", r, l, u, h, w, a, m);
	else
		snprintf(buf, len, "nothing fits: the room, %s (effective limit %s, usage %s), "
			 "less the workload overhead %s, the process allowance %s and the margin "
			 "%s, leaves less than 1 MiB with the kernel's %s per GiB", r, l, u, w, a,
			 m, k);
}

bool mp_budget_zero(struct mp_rd *rd, const cJSON *doc, char *why, size_t len)
{
	const cJSON *f = mp_rd_obj(rd, doc, "figures", 0);

	why[0] = '\0';
	if (mp_rd_u64v(rd, doc, "budget_bytes") || !mp_rd_ok(rd))
		return false;
	zero_why(mp_rd_u64v(rd, f, "effective_limit_bytes"), mp_rd_u64v(rd, f, "usage_bytes"),
		 mp_rd_u64v(rd, f, "hard_headroom_bytes"), mp_rd_u64v(rd, f, "room_bytes"),
		 mp_rd_u64v(rd, f, "workload_overhead_bytes"),
		 mp_rd_u64v(rd, f, "process_allowance_bytes"), mp_rd_u64v(rd, f, "margin_bytes"),
		 mp_rd_u64v(rd, f, "kernel_per_gib_bytes"), why, len);
	return mp_rd_ok(rd);
}

/* budget + per_gib * budget / GiB = room - work - allowance - margin, solved
 * for budget, down to 1 MiB; 0 when nothing fits. */
static uint64_t budget_of(uint64_t room, uint64_t work, uint64_t margin, uint64_t per_gib)
{
	double net;

	if (room <= work + PROCESS_ALLOWANCE_BYTES + margin)
		return 0;
	net = (double)(room - work - PROCESS_ALLOWANCE_BYTES - margin);
	return mp_round_down((uint64_t)(net / (1.0 + (double)per_gib / MP_GIB)), MP_MIB);
}

/* The page cache in usage_before: the probe's reading before its first
 * chunk, or the target's as read when the probe began (older documents,
 * or one unreadable then); false without either. */
static bool page_cache(struct mp_rd *rd, const cJSON *p, uint64_t *v)
{
	const cJSON *pr = mp_rd_obj(rd, p, "probe", 0), *t = mp_rd_obj(rd, p, "target", 0);

	*v = 0;
	return mp_rd_u64(rd, pr, "file_before_bytes", MP_RD_NULL | MP_RD_ABSENT, v) ||
	       mp_rd_u64(rd, t, "reclaimable_bytes", MP_RD_NULL | MP_RD_ABSENT, v);
}

cJSON *mp_budget_doc(const struct mp_host *h, const cJSON *p, const char *from_file,
		     const uint64_t *margin_opt, char *err, size_t errlen)
{
	struct mp_rd rd = { .root = p };
	const cJSON *t = mp_rd_obj(&rd, p, "target", 0), *pr = mp_rd_obj(&rd, p, "probe", 0);
	uint64_t limit = mp_rd_u64v(&rd, t, "effective_limit_bytes");
	uint64_t head = mp_rd_u64v(&rd, t, "headroom_bytes");
	uint64_t usage = mp_rd_u64v(&rd, p, "usage_before_bytes");
	uint64_t alloc = mp_rd_u64v(&rd, p, "allocated_bytes");
	uint64_t margin = margin_opt ? *margin_opt : mp_rd_u64v(&rd, pr, "margin_bytes");
	int64_t over = mp_rd_s64v(&rd, p, "overhead_bytes");
	const char *kind = mp_rd_str(&rd, t, "throttle_kind", MP_RD_NULL | MP_RD_ABSENT);
	const char *ksrc = "overhead_bytes (no attribution: all of it counted as kernel cost)";
	uint64_t thr = 0, soft = 0, pk = 0, work, room, budget = 0, per_gib = 0;
	uint64_t cache = 0, soft_room, budget_soft;
	int64_t spk = 0;
	char ksrc_buf[160];
	bool have_thr = false, have_soft, have_cache, high;
	cJSON *d, *f;

	have_thr = mp_rd_u64(&rd, t, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, &thr);
	have_soft = mp_rd_u64(&rd, t, "soft_headroom_bytes", MP_RD_NULL | MP_RD_ABSENT, &soft);
	if (!probe_kernel(&rd, p, &spk, &ksrc))
		spk = over;
	/* A negative kernel part (the kernel reclaimed more during the probe
	 * than the probe's kernel objects cost) counts as 0: taken at its
	 * value it would make kernel_per_gib negative and grow the budget past
	 * what the probe measured; at 0 the whole overhead is the workload's. */
	pk = spk > 0 ? (uint64_t)spk : 0;
	if (spk < 0) {
		snprintf(ksrc_buf, sizeof(ksrc_buf), "%s (negative, %" PRId64 ": counted as 0)",
			 ksrc, spk);
		ksrc = ksrc_buf;
	}
	if (!mp_rd_ok(&rd)) { /* a reader's problem names no fix: the general one */
		snprintf(err, errlen, "%s; give a probe report memprobe wrote", rd.err);
		return NULL;
	}
	/* a probe cut short measured part of the fill: its overhead and kernel
	 * cost are not the whole, and a budget from them would not hold */
	if (mp_rd_bool(&rd, p, "interrupted", MP_RD_ABSENT) ||
	    mp_rd_item(&rd, p, "probe_killed_by_signal", MP_RD_ABSENT | MP_RD_NULL)) {
		snprintf(err, errlen, "the probe did not run to its end (interrupted or killed): "
			 "its figures are not the whole fill; run the probe again to its end");
		return NULL;
	}
	/* the ceiling: the hard limit, or memory.high below it (a v1 soft limit
	 * is no ceiling: it acts only under global pressure). The target's
	 * headroom was read as memprobe made it (a stand-in: the whole limit);
	 * the figures give it at usage_before, beside the usage they give. */
	head = MP_MIN(head, limit - MP_MIN(limit, usage));
	room = head;
	high = have_thr && kind && !strcmp(kind, "memory.high");
	if (high)
		room = MP_MIN(room, thr - MP_MIN(thr, usage));
	work = over > 0 && (uint64_t)over > pk ? (uint64_t)over - pk : 0;
	if (alloc)
		per_gib = (uint64_t)((double)pk * MP_GIB / (double)alloc + 0.5);
	budget = budget_of(room, work, margin, per_gib);
	/* the page cache in the usage: counted as used (the hard headroom,
	 * the budget's basis), or as room (the soft headroom: the kernel
	 * reclaims it before an OOM kill, at the cost of the workload's
	 * cache), both said; the same formula on the soft room */
	have_cache = page_cache(&rd, p, &cache);
	cache = MP_MIN(cache, usage);
	soft_room = MP_MIN(head + cache, limit - MP_MIN(limit, usage - cache));
	if (high)
		soft_room = MP_MIN(soft_room, thr - MP_MIN(thr, usage - cache));
	budget_soft = budget_of(soft_room, work, margin, per_gib);
	err[0] = '\0';
	if (!budget)
		zero_why(limit, usage, head, room, work, PROCESS_ALLOWANCE_BYTES, margin, per_gib,
			 err, errlen);

	d = mp_doc_new("budget", h);
	cJSON_ReplaceItemInObject(d, "host", cJSON_Duplicate(mp_rd_obj(&rd, p, "host", 0), 1));
	mp_json_add_u64(d, "budget_bytes", budget);
	cJSON_AddStringToObject(d, "basis", high && room < head ? "memory.high" : "hard_headroom");
	if (have_cache)
		mp_json_add_u64(d, "budget_soft_bytes", budget_soft);
	else
		cJSON_AddNullToObject(d, "budget_soft_bytes");
	cJSON_AddStringToObject(d, "source", from_file ? "file" : "probe");
	mp_json_add_str_or_null(d, "from_file", from_file ? from_file : "");
	cJSON_AddItemToObject(d, "target", cJSON_Duplicate(t, 1));
	f = cJSON_AddObjectToObject(d, "figures");
	mp_json_add_u64(f, "effective_limit_bytes", limit);
	if (have_thr)
		mp_json_add_u64(f, "throttle_bytes", thr);
	else
		cJSON_AddNullToObject(f, "throttle_bytes");
	mp_json_add_str_or_null(f, "throttle_kind", kind ? kind : "");
	mp_json_add_u64(f, "usage_bytes", usage);
	mp_json_add_u64(f, "hard_headroom_bytes", head);
	if (have_soft)
		mp_json_add_u64(f, "soft_headroom_bytes", soft);
	else
		cJSON_AddNullToObject(f, "soft_headroom_bytes");
	mp_json_add_u64(f, "room_bytes", room);
	if (have_cache) {
		mp_json_add_u64(f, "page_cache_bytes", cache);
		mp_json_add_u64(f, "soft_room_bytes", soft_room);
	} else {
		cJSON_AddNullToObject(f, "page_cache_bytes");
		cJSON_AddNullToObject(f, "soft_room_bytes");
	}
	mp_json_add_u64(f, "probe_allocated_bytes", alloc);
	mp_json_add_u64(f, "probe_kernel_bytes", pk);
	cJSON_AddStringToObject(f, "kernel_cost_source", ksrc);
	mp_json_add_u64(f, "kernel_per_gib_bytes", per_gib);
	mp_json_add_s64(f, "overhead_bytes", over);
	mp_json_add_u64(f, "workload_overhead_bytes", work);
	mp_json_add_u64(f, "process_allowance_bytes", PROCESS_ALLOWANCE_BYTES);
	mp_json_add_u64(f, "margin_bytes", margin);
	cJSON_AddStringToObject(d, "derivation",
				"budget = (room - workload_overhead - process_allowance - margin) / "
				"(1 + kernel_per_gib / 2^30), rounded down to 1 MiB; room = "
				"min(hard_headroom, effective_limit - usage, memory.high - usage), "
				"the page cache in usage counted as used; budget_soft: the same on "
				"soft_room, the page cache counted as room");
	return d;
}
