// SPDX-License-Identifier: GPL-2.0
/*
 * The overhead in words (overhead.c's object), as probe and record's
 * --probe-at print it: a handful of processes, grouped by name and role
 * where many share a name ("postgres ×32 (backends)"), the rest summed and
 * said; shared memory once, with who was charged for it and the segments
 * mapped; what the kernel reclaimed to make room; the probe's own cost.
 */
#include "render.h"
#include "proc_role.h"
#include "util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#define OVH_GROUPS 4   /* groups named; the rest are summed */
#define OVH_CATS 4     /* categories named per group */

/* MiB for the words; under 0.05 MiB either way is 0.0, never "-0.0" */
static double mib(int64_t b)
{
	return b > -(int64_t)MP_MIB / 20 && b < (int64_t)MP_MIB / 20 ? 0.0 : (double)b / MP_MIB;
}

/* too small to show as "0.1 MiB": left out of the words (never the sums) */
static bool tiny(int64_t b)
{
	return b < (int64_t)MP_MIB / 20 && b > -(int64_t)MP_MIB / 20;
}

/* A figure in the words: "2.0 MiB" (0 within ±0.05 MiB) below 1 GiB, so a
 * sentence's small parts read in one unit; from 1 GiB either way the one
 * size formatter's GiB and TiB (never "3072.0 MiB"). Four buffers in turn:
 * one fprintf says up to two, and a renderer runs on one thread. */
static const char *w(int64_t b)
{
	static char bufs[4][32];
	static unsigned next;
	char *buf = bufs[next++ % 4];

	if (b >= (int64_t)MP_GIB || b <= -(int64_t)MP_GIB)
		return mp_fmt_sbytes(b, buf, sizeof(bufs[0]));
	snprintf(buf, sizeof(bufs[0]), "%.1f MiB", mib(b));
	return buf;
}

/* "2.0 MiB", as the words' figures; one too small for that in its own unit
 * ("-28.0 KiB"), 0 as "0.0 MiB" */
static const char *sbytes_or_mib(int64_t v, char *buf, size_t len)
{
	if (v && tiny(v))
		return mp_fmt_sbytes(v, buf, len);
	snprintf(buf, len, "%s", w(v));
	return buf;
}

/* A category's bytes in a group's list, 0 when absent. */
static int64_t group_cat(struct mp_rd *rd, const cJSON *g, const char *cat)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, mp_rd_arr(rd, g, "categories", 0))
		if (mp_rd_is_obj(rd, c) && !strcmp(mp_rd_str(rd, c, "category", 0), cat))
			return mp_rd_s64v(rd, c, "bytes");
	return 0;
}

/* A group's bytes without its shmem, which the shared-memory clause says */
static int64_t own_bytes(struct mp_rd *rd, const cJSON *g)
{
	return mp_rd_s64v(rd, g, "bytes") - group_cat(rd, g, "shmem");
}

/* "postgres ×32 (backends)", "postgres[812] (checkpointer)", "(other context)" */
static void group_name(struct mp_rd *rd, const cJSON *g, FILE *f)
{
	uint64_t n = mp_rd_u64v(rd, g, "processes"), pid = 0, host = 0;
	char name[112];

	mp_rd_u64(rd, g, "pid", MP_RD_NULL, &pid);
	/* in a container: the host's pid beside the container's */
	mp_rd_u64(rd, g, "host_pid", MP_RD_ABSENT, &host);
	fputs(mp_proc_group_name_host(mp_rd_str(rd, g, "comm", 0), mp_rd_str(rd, g, "role", 0),
				      (unsigned)n, (uint32_t)pid, (uint32_t)host, name, sizeof(name)),
	      f);
}

/* One group: its name, then its categories but shmem, the largest
 * first as the document lists them; anon says its copies on write. */
static void group_words(struct mp_rd *rd, const cJSON *g, FILE *f)
{
	const cJSON *c;
	int64_t rest = 0, cow = 0;
	int shown = 0;

	group_name(rd, g, f);
	mp_rd_s64(rd, g, "copy_on_write_bytes", MP_RD_NULL | MP_RD_ABSENT, &cow);
	cJSON_ArrayForEach(c, mp_rd_arr(rd, g, "categories", 0)) {
		const char *cat;
		int64_t b;

		if (!mp_rd_is_obj(rd, c))
			return;
		cat = mp_rd_str(rd, c, "category", 0);
		b = mp_rd_s64v(rd, c, "bytes");
		if (!strcmp(cat, "shmem"))
			continue;
		if (shown == OVH_CATS || tiny(b)) {
			rest += b;
			continue;
		}
		fprintf(f, "%s %s %s", shown++ ? "," : "", cat, w(b));
		if (!strcmp(cat, "anon") && !tiny(cow))
			fprintf(f, " (%s of it copied on write)", w(cow));
	}
	if (!shown || !tiny(rest))
		fprintf(f, "%s %s %s", shown ? "," : "", shown ? "the rest" : "in all",
			w(rest));
}

/* The groups: a handful by name, the rest summed with their count. */
static void groups_words(struct mp_rd *rd, const cJSON *gs, const char **sep, FILE *f)
{
	const cJSON *g;
	int64_t rest = 0;
	uint64_t rest_procs = 0;
	int shown = 0, others = 0;

	cJSON_ArrayForEach(g, gs) {
		int64_t b;

		if (!mp_rd_is_obj(rd, g))
			return;
		b = own_bytes(rd, g);
		if (shown == OVH_GROUPS || tiny(b)) {
			rest += b;
			rest_procs += mp_rd_u64v(rd, g, "processes");
			others++;
			continue;
		}
		fprintf(f, "%s ", *sep);
		*sep = ";";
		group_words(rd, g, f);
		shown++;
	}
	if (!others || tiny(rest))
		return;
	fprintf(f, "%s ", *sep);
	*sep = ";";
	if (rest_procs)
		fprintf(f, "%" PRIu64 " more process%s %s", rest_procs,
			rest_procs == 1 ? "" : "es", w(rest));
	else
		fprintf(f, "the rest %s", w(rest));
}

/* The pinned object's segments: "1 segment (/dev/zero (deleted) 131.1 MiB
 * resident, mapped by 38 processes)"; nothing without them. */
static void segments_words(struct mp_rd *rd, const cJSON *pinned, FILE *f)
{
	const cJSON *segs = pinned ? mp_rd_arr(rd, pinned, "shared_segments", MP_RD_ABSENT) : NULL;
	const cJSON *s0 = segs ? cJSON_GetArrayItem(segs, 0) : NULL;
	uint64_t total = 0, res, n;
	char b[32];

	if (!s0 || !mp_rd_is_obj(rd, s0))
		return;
	mp_rd_u64(rd, pinned, "shared_segments_total", MP_RD_ABSENT, &total);
	fprintf(f, "; %" PRIu64 " shared segment%s at the stop, the largest %s", total,
		total == 1 ? "" : "s", mp_rd_str(rd, s0, "name", 0));
	if (mp_rd_u64(rd, s0, "resident_bytes", MP_RD_NULL, &res))
		fprintf(f, " %s resident", mp_fmt_bytes(res, b, sizeof(b)));
	n = mp_rd_u64v(rd, s0, "mappers");
	fprintf(f, ", mapped by %" PRIu64 " process%s", n, n == 1 ? "" : "es");
}

/* Shared memory once: its growth, who was charged (whoever touched each
 * page first), the segments mapped. */
static void shmem_words(struct mp_rd *rd, const cJSON *gs, const cJSON *pinned, const char **sep,
			FILE *f)
{
	const cJSON *g;
	int64_t total = 0, rest = 0;
	int shown = 0;

	cJSON_ArrayForEach(g, gs)
		total += mp_rd_is_obj(rd, g) ? group_cat(rd, g, "shmem") : 0;
	if (tiny(total))
		return;
	fprintf(f, "%s shared memory (shmem) %s, charged to the first toucher of each page:",
		*sep, w(total));
	*sep = ";";
	cJSON_ArrayForEach(g, gs) {
		int64_t b = group_cat(rd, g, "shmem");

		if (shown == 3 || tiny(b)) {
			rest += b;
			continue;
		}
		fputs(shown++ ? ", " : " ", f);
		group_name(rd, g, f);
		fprintf(f, " %s", w(b));
	}
	if (!tiny(rest))
		fprintf(f, ", others %s", w(rest));
	segments_words(rd, pinned, f);
}

/* What the kernel reclaimed of the workload's memory to make room. */
static void reclaimed_words(struct mp_rd *rd, const cJSON *o, const char **sep, FILE *f)
{
	const cJSON *p, *parts = mp_rd_arr(rd, o, "reclaimed_parts", 0);
	int64_t all = mp_rd_s64v(rd, o, "reclaimed_bytes");
	int n = cJSON_GetArraySize(parts), i = 0;

	if (tiny(all))
		return;
	fprintf(f, "%s the kernel reclaimed %s of the workload's ", *sep, w(-(all)));
	*sep = ";";
	cJSON_ArrayForEach(p, parts) {
		const char *cat = mp_rd_str(rd, p, "category", 0);
		int64_t b = mp_rd_s64v(rd, p, "bytes");

		fprintf(f, "%s%s", i ? " and " : "", !strcmp(cat, "page_cache") ? "page cache" :
			!strcmp(cat, "slab_reclaimable") ? "reclaimable slab" : cat);
		if (n > 1)
			fprintf(f, " (%s)", w(-(b)));
		i++;
	}
	fputs(" to make room", f);
}

/* "; the probe's pagetables 1.8 MiB; unexplained 0.1 MiB", the line's end */
static void probe_words(const cJSON *o, const char *sep, FILE *f, struct mp_rd *rd)
{
	const cJSON *p;
	int n = 0;

	fprintf(f, "%s the probe's", sep);
	cJSON_ArrayForEach(p, mp_rd_arr(rd, o, "probe_kernel_parts", 0))
		if (!tiny(mp_rd_s64v(rd, p, "bytes")))
			fprintf(f, "%s %s %s", n++ ? "," : "",
				mp_rd_str(rd, p, "category", 0), w(mp_rd_s64v(rd, p, "bytes")));
	if (!n)
		fprintf(f, " kernel cost %s", w(mp_rd_s64v(rd, o, "probe_kernel_bytes")));
	fprintf(f, "; unexplained %s\n", w(mp_rd_s64v(rd, o, "unexplained_bytes")));
}

/* "WHAT 100.0 MiB AT: ...": the overhead object o in words. */
static void ovh_line(const cJSON *o, const cJSON *pinned, const char *what, const char *at,
		     FILE *f, struct mp_rd *rd)
{
	const cJSON *gs = mp_rd_arr(rd, o, "groups", 0);
	const char *sep = ":";
	char b[32];

	/* the whole as it is: one too small for "0.1 MiB" (a negative left
	 * after of -28 KiB) in its own unit, never as 0.0 */
	fprintf(f, "%s %s%s", what, sbytes_or_mib(mp_rd_s64v(rd, o, "bytes"), b, sizeof(b)), at);
	reclaimed_words(rd, o, &sep, f);
	groups_words(rd, gs, &sep, f);
	shmem_words(rd, gs, pinned, &sep, f);
	probe_words(o, sep, f, rd);
}

/* ---- documents before groups: the parts, a process each --------------------------- */

/* One process's parts: "comm[pid] anon 98.0 MiB, pagetables 0.2 MiB";
 * marks them used. Parts of one process are adjacent or not, in any order. */
static void old_group(const cJSON *parts, int i0, bool *used, FILE *f, struct mp_rd *rd)
{
	const cJSON *p0 = cJSON_GetArrayItem(parts, i0);
	uint64_t pid = mp_rd_u64v(rd, p0, "pid");
	const char *comm = mp_rd_str(rd, p0, "comm", 0);
	int64_t rest = 0;
	int shown = 0, n = cJSON_GetArraySize(parts);
	uint64_t host = 0;

	/* in a container: the host's pid beside the container's */
	if (pid && mp_rd_u64(rd, p0, "host_pid", MP_RD_ABSENT, &host) && host != pid)
		fprintf(f, "%s[%" PRIu64 ", host %" PRIu64 "]", comm, pid, host);
	else
		fprintf(f, pid ? "%s[%" PRIu64 "]" : "%s", comm, pid);
	for (int i = i0; i < n; i++) {
		const cJSON *p = cJSON_GetArrayItem(parts, i);
		int64_t b;

		if (used[i] || mp_rd_u64v(rd, p, "pid") != pid ||
		    strcmp(mp_rd_str(rd, p, "comm", 0), comm))
			continue;
		used[i] = true;
		b = mp_rd_s64v(rd, p, "bytes");
		if (shown < OVH_CATS && !tiny(b))
			fprintf(f, "%s %s %s", shown++ ? "," : "",
				mp_rd_str(rd, p, "category", 0), w(b));
		else
			rest += b;
	}
	if (!shown || !tiny(rest))
		fprintf(f, "%s %s %s", shown ? "," : "", shown ? "the rest" : "in all",
			w(rest));
}

/* Has the process of parts[i0] a part big enough for words? */
static bool old_worth(const cJSON *parts, int i0, struct mp_rd *rd)
{
	const cJSON *p0 = cJSON_GetArrayItem(parts, i0), *p;
	uint64_t pid = mp_rd_u64v(rd, p0, "pid");
	const char *comm = mp_rd_str(rd, p0, "comm", 0);

	cJSON_ArrayForEach(p, parts)
		if (mp_rd_u64v(rd, p, "pid") == pid && !strcmp(mp_rd_str(rd, p, "comm", 0), comm) &&
		    !tiny(mp_rd_s64v(rd, p, "bytes")))
			return true;
	return false;
}

/* The line of a document without groups, as it was printed then. */
static void old_line(const cJSON *o, const char *what, const char *at, FILE *f, struct mp_rd *rd)
{
	const cJSON *parts = mp_rd_arr(rd, o, "parts", 0);
	int n = cJSON_GetArraySize(parts), groups = 0;
	bool used[n + 1];
	int64_t rest = 0, others = 0;
	const char *sep = ":";
	char b[32];

	memset(used, 0, sizeof(used));
	fprintf(f, "%s %s%s", what, sbytes_or_mib(mp_rd_s64v(rd, o, "bytes"), b, sizeof(b)), at);
	for (int i = 0; i < n && mp_rd_ok(rd); i++) {
		if (used[i])
			continue;
		if (groups == OVH_GROUPS || !old_worth(parts, i, rd)) {
			rest += mp_rd_s64v(rd, cJSON_GetArrayItem(parts, i), "bytes");
			others++;
			continue;
		}
		fprintf(f, "%s ", groups++ ? ";" : sep);
		old_group(parts, i, used, f, rd);
	}
	if (others && !tiny(rest))
		fprintf(f, "%s %" PRId64 " more parts %s", groups++ ? ";" : sep, others,
			w(rest));
	probe_words(o, groups ? ";" : sep, f, rd);
}

void mp_text_overhead(const cJSON *o, const cJSON *pinned, FILE *f, struct mp_rd *rd)
{
	const cJSON *l;
	bool groups;

	if (!o || !mp_rd_is_obj(rd, o))
		return;
	groups = mp_rd_item(rd, o, "groups", MP_RD_ABSENT) != NULL;
	if (groups)
		ovh_line(o, pinned, "overhead", " at the peak", f, rd);
	else
		old_line(o, "overhead", " at the peak", f, rd);
	l = mp_rd_item(rd, o, "left_after", MP_RD_NULL);
	if (l && mp_rd_is_obj(rd, l)) {
		if (groups)
			ovh_line(l, NULL, "left after", "", f, rd);
		else
			old_line(l, "left after", "", f, rd);
	}
	fputc('\n', f);
}
