// SPDX-License-Identifier: GPL-2.0
/* The text of a "pinned" object (user/pinned.c), as probe and record print it. */
#include "render.h"
#include "util.h"

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

void mp_text_pinned(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	const cJSON *it, *drv;
	char b[5][32];
	int n = 0;

	if (!p)
		return;
	fprintf(f, "\npinned %s: unevictable %s, shmem %s; processes: VmLck %s, VmPin %s, "
		"RssShmem %s (%d read)\n", when(mp_rd_str(rd, p, "at", 0)),
		stat_bytes(rd, p, "unevictable_bytes", b[0], sizeof(b[0])),
		stat_bytes(rd, p, "shmem_bytes", b[1], sizeof(b[1])),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "vm_lck_bytes"), b[2], sizeof(b[2])),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "vm_pin_bytes"), b[3], sizeof(b[3])),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "rss_shmem_bytes"), b[4], sizeof(b[4])),
		(int)mp_rd_u64v(rd, p, "processes"));
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
