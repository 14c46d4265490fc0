// SPDX-License-Identifier: GPL-2.0
/* The text of a "pinned" object (user/pinned.c), as probe and record print it. */
#include "render.h"
#include "proc_role.h"
#include "util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

static const char *when(const char *at)
{
	return !strcmp(at, "stop") ? "at the probe's stop" :
	       !strcmp(at, "peak") ? "at the peak" : "at the end";
}

/* memory.stat's figure, or "?" when it has no such key */
static const char *stat_bytes(struct mp_rd *rd, const cJSON *p, const char *name, char *buf,
			      size_t len)
{
	uint64_t v = 0;

	if (!mp_rd_u64(rd, p, name, MP_RD_NULL, &v))
		return "?";
	return mp_fmt_bytes(v, buf, len);
}

static void task_row(const cJSON *t, FILE *f, struct mp_rd *rd)
{
	const cJSON *l = mp_rd_obj(rd, t, "locked", MP_RD_NULL);
	char who[48], b[4][32], split[96] = "";

	snprintf(who, sizeof(who), "%s[%d]", mp_rd_str(rd, t, "comm", 0),
		 (int)mp_rd_u64v(rd, t, "pid"));
	if (l)
		snprintf(split, sizeof(split), " (shmem %s, anon %s, file %s)",
			 mp_fmt_bytes(mp_rd_u64v(rd, l, "shmem_bytes"), b[0], sizeof(b[0])),
			 mp_fmt_bytes(mp_rd_u64v(rd, l, "anon_bytes"), b[1], sizeof(b[1])),
			 mp_fmt_bytes(mp_rd_u64v(rd, l, "file_bytes"), b[2], sizeof(b[2])));
	fprintf(f, "  %-22s %-6s locked %s%s", who, mp_rd_str(rd, t, "category", 0),
		mp_fmt_bytes(mp_rd_u64v(rd, t, "vm_lck_bytes"), b[3], sizeof(b[3])), split);
	fprintf(f, ", pinned %s, RssShmem %s\n",
		mp_fmt_bytes(mp_rd_u64v(rd, t, "vm_pin_bytes"), b[0], sizeof(b[0])),
		mp_fmt_bytes(mp_rd_u64v(rd, t, "rss_shmem_bytes"), b[1], sizeof(b[1])));
}

/* RssShmem across processes: the largest one's (a shared page counts in
 * every process that maps it: a sum would count a segment per mapper);
 * documents from before say their sum as what it is. */
static void rss_shmem_words(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	uint64_t v, n = mp_rd_u64v(rd, p, "processes");
	char b[32];

	if (mp_rd_u64(rd, p, "rss_shmem_max_bytes", MP_RD_ABSENT, &v))
		fprintf(f, "RssShmem up to %s in one process (%" PRIu64 " read; a shared page "
			"counts in every process mapping it, so these are not summed)\n",
			mp_fmt_bytes(v, b, sizeof(b)), n);
	else
		fprintf(f, "RssShmem summed over %" PRIu64 " process%s %s (a shared page counted "
			"once per process mapping it)\n", n, n == 1 ? "" : "es",
			mp_fmt_bytes(mp_rd_u64v(rd, p, "rss_shmem_bytes"), b, sizeof(b)));
}

/* The mappers of a segment by name and role: three groups named, then
 * how many processes more. */
static void mappers(const cJSON *s, FILE *f, struct mp_rd *rd)
{
	const cJSON *g;
	uint64_t more = 0;
	char name[96];
	int n = 0;

	cJSON_ArrayForEach(g, mp_rd_arr(rd, s, "mapper_groups", 0)) {
		uint64_t k = mp_rd_u64v(rd, g, "processes");

		if (n == 3) {
			more += k;
			continue;
		}
		fprintf(f, "%s%s", n++ ? ", " : ": ",
			mp_proc_group_name(mp_rd_str(rd, g, "comm", 0), mp_rd_str(rd, g, "role", 0),
					   (unsigned)k, 0, name, sizeof(name)));
	}
	if (more)
		fprintf(f, " and %" PRIu64 " more", more);
}

/* "  shared segment /dev/zero (deleted): 256.0 MiB mapped, 131.1 MiB
 * resident, by 38 processes: postgres ×32 (backends), ...": those of
 * 1 MiB or more resident, three at most; the rest counted. */
static void segments(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	const cJSON *segs = mp_rd_arr(rd, p, "shared_segments", MP_RD_ABSENT), *s;
	uint64_t total = 0, res, rest = 0;
	char b[2][32];
	int shown = 0;

	mp_rd_u64(rd, p, "shared_segments_total", MP_RD_ABSENT, &total);
	cJSON_ArrayForEach(s, segs) {
		uint64_t nm;
		bool have_res;

		if (!mp_rd_is_obj(rd, s))
			return;
		have_res = mp_rd_u64(rd, s, "resident_bytes", MP_RD_NULL, &res);
		if (shown == 3 || (have_res && res < MP_MIB)) {
			rest += have_res ? res : 0;
			continue;
		}
		fprintf(f, "  shared segment %s: %s mapped", mp_rd_str(rd, s, "name", 0),
			mp_fmt_bytes(mp_rd_u64v(rd, s, "mapped_bytes"), b[0], sizeof(b[0])));
		if (have_res)
			fprintf(f, ", %s resident", mp_fmt_bytes(res, b[1], sizeof(b[1])));
		nm = mp_rd_u64v(rd, s, "mappers");
		fprintf(f, ", by %" PRIu64 " process%s", nm, nm == 1 ? "" : "es");
		mappers(s, f, rd);
		fputc('\n', f);
		shown++;
	}
	if (total > (uint64_t)shown)
		fprintf(f, "  %s%" PRIu64 " more shared segment%s, %s resident\n", shown ? "and " : "",
			total - (uint64_t)shown, total - shown == 1 ? "" : "s",
			mp_fmt_bytes(rest, b[0], sizeof(b[0])));
}

void mp_text_pinned(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	const cJSON *it, *drv;
	char b[5][32];
	int n = 0;

	if (!p)
		return;
	fprintf(f, "\npinned %s: unevictable %s, shmem %s; processes: VmLck %s, VmPin %s, ",
		when(mp_rd_str(rd, p, "at", 0)),
		stat_bytes(rd, p, "unevictable_bytes", b[0], sizeof(b[0])),
		stat_bytes(rd, p, "shmem_bytes", b[1], sizeof(b[1])),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "vm_lck_bytes"), b[2], sizeof(b[2])),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "vm_pin_bytes"), b[3], sizeof(b[3])));
	rss_shmem_words(p, f, rd);
	segments(p, f, rd);
	mp_text_unmapped(p, f, rd, "  ");
	cJSON_ArrayForEach(it, mp_rd_arr(rd, p, "tasks", 0)) {
		if (!mp_rd_is_obj(rd, it))
			return;
		task_row(it, f, rd);
	}
	drv = mp_rd_arr(rd, p, "drivers", MP_RD_NULL);
	if (!drv)
		return;
	cJSON_ArrayForEach(it, drv) {
		if (!mp_rd_is_obj(rd, it))
			return;
		fprintf(f, "%s %s %s allocated, %s charged, %s not charged", n++ ? ";" :
			"  drivers:", mp_rd_str(rd, it, "driver", 0),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "alloc_bytes"), b[0], sizeof(b[0])),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "charged_bytes"), b[1], sizeof(b[1])),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "not_charged_bytes"), b[2], sizeof(b[2])));
	}
	fputs(n ? "\n" : "  drivers: none seen in the kernel paths\n", f);
}
