// SPDX-License-Identifier: GPL-2.0
/* The text of a "pinned" object (user/pinned.c), as probe and record print it. */
#include "render.h"
#include "util.h"
#include "views.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* memory.stat's figure, or "?" when it has no such key */
static const char *stat_bytes(bool has, uint64_t v, char *buf, size_t len)
{
	return has ? mp_fmt_bytes(v, buf, len) : "?";
}

static void task_row(const struct mp_view_pinned_task *t, FILE *f)
{
	char who[48], b[4][32], split[96] = "";

	snprintf(who, sizeof(who), "%s[%d]", t->comm, (int)t->pid);
	if (t->locked)
		snprintf(split, sizeof(split), " (shmem %s, anon %s, file %s)",
			 mp_fmt_bytes(t->shmem, b[0], sizeof(b[0])),
			 mp_fmt_bytes(t->anon, b[1], sizeof(b[1])),
			 mp_fmt_bytes(t->file, b[2], sizeof(b[2])));
	fprintf(f, "  %-22s %-6s locked %s%s", who, t->category,
		mp_fmt_bytes(t->vm_lck, b[3], sizeof(b[3])), split);
	fprintf(f, ", pinned %s, RssShmem %s\n", mp_fmt_bytes(t->vm_pin, b[0], sizeof(b[0])),
		mp_fmt_bytes(t->rss_shmem, b[1], sizeof(b[1])));
}

/* RssShmem across processes: the largest one's, or an older document's
 * sum said as what it is (views.h). */
static void rss_shmem_words(const struct mp_view_pinned *v, FILE *f)
{
	char b[32];

	if (v->has_rss_max)
		fprintf(f, "RssShmem up to %s in one process (%" PRIu64 " read; a shared page "
			"counts in every process mapping it, so these are not summed)\n",
			mp_fmt_bytes(v->rss_shmem_max, b, sizeof(b)), v->processes);
	else
		fprintf(f, "RssShmem summed over %" PRIu64 " process%s %s (a shared page counted "
			"once per process mapping it)\n", v->processes, v->processes == 1 ? "" : "es",
			mp_fmt_bytes(v->rss_shmem, b, sizeof(b)));
}

/* The mappers of a segment by name and role: the first few named, then
 * how many processes more. */
static void mappers(const struct mp_view_segment *s, FILE *f)
{
	uint64_t more = 0;

	for (int i = 0; i < s->ngroups; i++) {
		if (i >= MP_VIEW_BRIEF_MAPPERS)
			more += s->groups[i].processes;
		else
			fprintf(f, "%s%s", i ? ", " : ": ", s->groups[i].name);
	}
	if (more)
		fprintf(f, " and %" PRIu64 " more", more);
}

/* "  shared segment /dev/zero (deleted): 256.0 MiB mapped, 131.1 MiB
 * resident, by 38 processes: postgres ×32 (backends), ...": the short
 * list's (views.h); the rest counted. */
static void segments(const struct mp_view_pinned *v, FILE *f)
{
	char b[2][32];

	for (int i = 0; i < v->nsegs; i++) {
		const struct mp_view_segment *s = &v->segs[i];

		if (!s->brief)
			continue;
		fprintf(f, "  shared segment %s: %s mapped", s->name,
			mp_fmt_bytes(s->mapped, b[0], sizeof(b[0])));
		if (s->has_resident)
			fprintf(f, ", %s resident", mp_fmt_bytes(s->resident, b[1], sizeof(b[1])));
		fprintf(f, ", by %" PRIu64 " process%s", s->mappers, s->mappers == 1 ? "" : "es");
		mappers(s, f);
		fputc('\n', f);
	}
	if (v->segments_total > (uint64_t)v->nbrief)
		fprintf(f, "  %s%" PRIu64 " more shared segment%s, %s resident\n",
			v->nbrief ? "and " : "", v->segments_total - (uint64_t)v->nbrief,
			v->segments_total - (uint64_t)v->nbrief == 1 ? "" : "s",
			mp_fmt_bytes(v->brief_rest, b[0], sizeof(b[0])));
}

static void drivers(const struct mp_view_pinned *v, FILE *f)
{
	char b[3][32];

	if (!v->has_drivers)
		return;
	for (int i = 0; i < v->ndrivers; i++) {
		const struct mp_view_driver *d = &v->drivers[i];

		fprintf(f, "%s %s %s allocated, %s charged, %s not charged", i ? ";" : "  drivers:",
			d->driver, mp_fmt_bytes(d->alloc, b[0], sizeof(b[0])),
			mp_fmt_bytes(d->charged, b[1], sizeof(b[1])),
			mp_fmt_bytes(d->not_charged, b[2], sizeof(b[2])));
	}
	fputs(v->ndrivers ? "\n" : "  drivers: none seen in the kernel paths\n", f);
}

void mp_text_pinned(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	struct mp_view_pinned v;
	char b[4][32];

	if (!p || mp_view_pinned(p, rd, &v))
		return;
	fprintf(f, "\npinned %s: unevictable %s, shmem %s; processes: VmLck %s, VmPin %s, ",
		v.when, stat_bytes(v.has_unevictable, v.unevictable, b[0], sizeof(b[0])),
		stat_bytes(v.has_shmem, v.shmem, b[1], sizeof(b[1])),
		mp_fmt_bytes(v.vm_lck, b[2], sizeof(b[2])), mp_fmt_bytes(v.vm_pin, b[3], sizeof(b[3])));
	rss_shmem_words(&v, f);
	segments(&v, f);
	mp_text_unmapped(p, f, rd, "  ");
	for (int i = 0; i < v.ntasks; i++)
		task_row(&v.tasks[i], f);
	drivers(&v, f);
	mp_view_pinned_free(&v);
}
