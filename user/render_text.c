// SPDX-License-Identifier: GPL-2.0
/* --format text: each kind of document for people (attribution's in
 * render_text_attr.c). Everything is read from the document. */
#include "render.h"
#include "compare.h"
#include "util.h"
#include "views.h"

#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A limit for people: "max" where the document says null. */
static const char *fmt_limit(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags,
			     char *buf, size_t len)
{
	uint64_t v;

	if (!mp_rd_u64(rd, o, name, MP_RD_NULL | flags, &v))
		v = MP_UNLIMITED;
	return mp_fmt_bytes(v, buf, len);
}

/* ---- limits ---------------------------------------------------------------------- */

static void limits_host(const cJSON *h, FILE *f, struct mp_rd *rd)
{
	const char *dist = mp_rd_str(rd, h, "distribution", MP_RD_NULL);
	const char *thp_e = mp_rd_str(rd, h, "thp_enabled", MP_RD_NULL);
	const char *thp_d = mp_rd_str(rd, h, "thp_defrag", MP_RD_NULL);
	const char *lru = mp_rd_str(rd, h, "lru_gen", MP_RD_ABSENT);
	uint64_t total = mp_rd_u64v(rd, h, "mem_total_bytes");
	char b[32];

	fputs("host\n", f);
	fprintf(f, "  name                %s\n", mp_rd_str(rd, h, "hostname", 0));
	if (dist)
		fprintf(f, "  distribution        %s\n", dist);
	fprintf(f, "  kernel              %s (BTF %s)\n", mp_rd_str(rd, h, "kernel_release", 0),
		mp_rd_bool(rd, h, "btf", 0) ? "present" : "absent");
	fprintf(f, "  CPUs                %" PRIu64 "\n", mp_rd_u64v(rd, h, "cpus"));
	fprintf(f, "  MemTotal            %s (%" PRIu64 " bytes)\n",
		mp_fmt_bytes(total, b, sizeof(b)), total);
	fprintf(f, "  MemAvailable        %s\n",
		mp_fmt_bytes(mp_rd_u64v(rd, h, "mem_available_bytes"), b, sizeof(b)));
	fprintf(f, "  page size           %" PRIu64 "\n", mp_rd_u64v(rd, h, "page_size_bytes"));
	fprintf(f, "  THP                 enabled=%s defrag=%s\n", thp_e ? thp_e : "n/a",
		thp_d ? thp_d : "n/a");
	fprintf(f, "  cgroup mode         %s\n", mp_rd_str(rd, h, "cgroup_mode", 0));
	if (lru)
		fprintf(f, "  lru_gen             %s\n", lru);
}

void mp_text_limits(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *cg = mp_rd_obj(rd, doc, "cgroup", 0);
	uint64_t eff = mp_rd_u64v(rd, cg, "effective_limit_bytes");
	uint64_t head = mp_rd_u64v(rd, cg, "headroom_bytes"), peak;
	bool v1 = strcmp(mp_rd_str(rd, cg, "version", 0), "v1") == 0;
	char b[32];

	limits_host(mp_rd_obj(rd, doc, "host", 0), f, rd);
	fprintf(f, "cgroup %s (%s)%s\n", mp_rd_str(rd, cg, "path", 0), v1 ? "v1" : "v2",
		mp_rd_bool(rd, cg, "host_root", 0) ? ", the host's root memory cgroup" : "");
	fprintf(f, "  directory           %s\n", mp_rd_str(rd, cg, "dir", 0));
	fprintf(f, "  limit               %s\n", fmt_limit(rd, cg, "limit_bytes", 0, b, sizeof(b)));
	fprintf(f, "  effective limit     %s (%" PRIu64 " bytes), set by %s\n",
		mp_fmt_bytes(eff, b, sizeof(b)), eff, mp_rd_str(rd, cg, "effective_limit_from", 0));
	if (mp_rd_item(rd, cg, "high_bytes", MP_RD_ABSENT))
		fprintf(f, "  memory.high         %s\n",
			fmt_limit(rd, cg, "high_bytes", 0, b, sizeof(b)));
	if (mp_rd_item(rd, cg, v1 ? "memsw_limit_bytes" : "swap_limit_bytes", MP_RD_ABSENT))
		fprintf(f, "  %-19s %s\n", v1 ? "memsw limit" : "swap limit",
			fmt_limit(rd, cg, v1 ? "memsw_limit_bytes" : "swap_limit_bytes", 0, b,
				  sizeof(b)));
	fprintf(f, "  usage               %s\n",
		mp_fmt_bytes(mp_rd_u64v(rd, cg, "usage_bytes"), b, sizeof(b)));
	if (mp_rd_u64(rd, cg, "peak_bytes", MP_RD_NULL, &peak))
		fprintf(f, "  peak                %s\n", mp_fmt_bytes(peak, b, sizeof(b)));
	fprintf(f, "  headroom            %s (%" PRIu64 " bytes), set by %s\n",
		mp_fmt_bytes(head, b, sizeof(b)), head, mp_rd_str(rd, cg, "headroom_from", 0));
	mp_text_soft(cg, f, rd, "  ");
	mp_text_unmapped(cg, f, rd, "  ");
}

/* "  no process maps     shmem 200.0 MiB at least, page cache 200.3 MiB (shmem
 * included)" and "  huge pages          anon 256.0 MiB, file 0 B, shmem 0 B":
 * where the document has them (older ones do not) */
void mp_text_unmapped(const cJSON *o, FILE *f, struct mp_rd *rd, const char *ind)
{
	struct mp_view_moment m;
	char b[32], b2[32];

	mp_view_moment(o, rd, &m);
	if (m.unmapped)
		fprintf(f, "%sno process maps     shmem %s at least, page cache %s (shmem "
			"included)\n", ind, mp_fmt_bytes(m.shmem_unmapped, b, sizeof(b)),
			mp_fmt_bytes(m.file_unmapped, b2, sizeof(b2)));
	for (int i = 0; i < m.nhuge; i++)
		fprintf(f, "%s%s%s %s", i ? ", " : ind, i ? "" : "huge pages          ",
			m.huge[i].kind, mp_fmt_bytes(m.huge[i].bytes, b, sizeof(b)));
	if (m.nhuge)
		fputc('\n', f);
}

/* The throttling point and the soft headroom, where the document has them
 * (older documents do not). */
void mp_text_soft(const cJSON *cg, FILE *f, struct mp_rd *rd, const char *ind)
{
	const char *kind = mp_rd_str(rd, cg, "throttle_kind", MP_RD_NULL | MP_RD_ABSENT);
	uint64_t thr, rec, soft;
	char b[32], w[200];

	if (mp_rd_u64(rd, cg, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, &thr))
		fprintf(f, "%sthrottling point    %s (%" PRIu64 " bytes), %s set by %s%s\n", ind,
			mp_fmt_bytes(thr, b, sizeof(b)), thr, kind ? kind : "",
			mp_rd_str(rd, cg, "throttle_from", MP_RD_NULL),
			kind && strcmp(kind, "soft_limit") == 0
				? " (a soft limit: it acts only under global memory pressure)" : "");
	if (mp_rd_u64(rd, cg, "reclaimable_bytes", MP_RD_NULL | MP_RD_ABSENT, &rec) &&
	    mp_rd_u64(rd, cg, "soft_headroom_bytes", MP_RD_NULL, &soft))
		fprintf(f, "%ssoft headroom       %s (%" PRIu64 " bytes): %s\n", ind,
			mp_fmt_bytes(soft, b, sizeof(b)), soft,
			mp_view_soft_words(cg, rd, mp_fmt_sbytes, "the headroom", rec, w, sizeof(w)));
}

/* ---- limits --features ----------------------------------------------------------- */

static void features_plan(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *it, *r;

	cJSON_ArrayForEach(it, mp_rd_arr(rd, doc, "plan", 0)) {
		const char *hook;

		if (!mp_rd_is_obj(rd, it))
			return;
		hook = mp_rd_str(rd, it, "hook", MP_RD_NULL);
		fprintf(f, "\n%s: %s\n", mp_rd_str(rd, it, "name", 0), hook ? hook : "NONE");
		cJSON_ArrayForEach(r, mp_rd_arr(rd, it, "rungs", 0)) {
			if (!mp_rd_is_obj(rd, r))
				return;
			fprintf(f, "  %-7s %-62s %s\n", mp_rd_str(rd, r, "kind", 0),
				mp_rd_str(rd, r, "label", 0), mp_rd_str(rd, r, "status", 0));
		}
	}
}

void mp_text_features(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const char *err = mp_rd_str(rd, doc, "error", MP_RD_ABSENT);
	const char *bpf = mp_rd_str(rd, doc, "bpf", MP_RD_ABSENT), *btf;
	const cJSON *cats = mp_rd_obj(rd, doc, "categories", 0), *it;

	fprintf(f, "kernel          %s\n", mp_rd_str(rd, doc, "kernel_release", 0));
	btf = mp_rd_str(rd, doc, "btf", 0);
	if (!bpf) { /* a document from before "bpf": the error stood for both */
		fprintf(f, "BTF             %s\n", err ? err : btf);
	} else {
		fprintf(f, "BTF             %s\n", btf[0] ? btf : "none");
		/* the error's line says what is missing and what would bring it */
		fprintf(f, "BPF             %s\n", !err ? bpf :
			!strncmp(err, "BPF ", 4) ? err + 4 : err);
	}
	fprintf(f, "module BTF      %" PRIu64 " files\n", mp_rd_u64v(rd, doc, "module_btf_files"));
	fprintf(f, "kprobes         %s\n", mp_rd_bool(rd, doc, "kprobes", 0) ? "yes" : "no");
	fprintf(f, "cgroup mode     %s\n", mp_rd_str(rd, doc, "cgroup_mode", 0));
	features_plan(doc, f, rd);
	/* without BTF nothing tells which items the kernel keeps: none listed */
	if (err || !cJSON_GetArraySize(cats))
		return;
	fputs("\nmemory.stat categories kept per memcg:", f);
	cJSON_ArrayForEach(it, cats) {
		if (!cJSON_IsBool(it)) {
			mp_rd_fail(rd, it, NULL, "not true or false");
			return;
		}
		fprintf(f, " %s%s", cJSON_IsTrue(it) ? "" : "-", it->string);
	}
	fputc('\n', f);
}

/* ---- probe ----------------------------------------------------------------------- */

/* What stopped the probe short, if anything. */
static void probe_verdicts(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	struct mp_view_verdicts v;

	mp_view_verdicts(r, rd, &v);
	if (v.note)
		fprintf(f, "NOTE: %s\n", v.note);
	if (v.interrupted)
		fputs("INTERRUPTED: the probe was stopped by a signal; figures are partial "
		      "(the chunk being filled counts as allocated as far as it got)\n", f);
	if (v.killed)
		fprintf(f, "KILLED: the probe process was killed by signal %d from outside memprobe; "
			"figures are partial\n", (int)v.signal);
	if (v.oom_killed)
		fputs(strcmp(v.oom_limit, "probe cgroup") == 0
			      ? "The probe was OOM-killed at its own cgroup's limit (the workload was not)\n"
			      : "The probe was OOM-killed at the target's limit: the workload grew "
				"while it ran (the probe, at oom_score_adj 1000, was the victim)\n", f);
}

/* The overhead in words, when the document explains it (older ones do not);
 * render_text_overhead.c. */
static void probe_overhead(const cJSON *r, const cJSON *pinned, FILE *f, struct mp_rd *rd)
{
	mp_text_overhead(mp_rd_item(rd, r, "overhead", MP_RD_ABSENT), pinned, f, rd);
}

/* With --threads N: the CPUs the fill got, and why no more (nothing for
 * one thread, or a document without the figures). */
static void probe_fill(const cJSON *p, FILE *f, struct mp_rd *rd)
{
	struct mp_view_fill v;

	mp_view_fill(p, rd, &v);
	if (v.shown)
		fprintf(f, "fill       %s\n", v.line);
}

/* Where the probe aimed and why it stopped (absent in older documents). */
static void probe_stop(const cJSON *t, const cJSON *p, FILE *f, struct mp_rd *rd)
{
	const char *aim = mp_rd_str(rd, p, "aim", MP_RD_ABSENT);
	uint64_t at, before, stop, rec;
	char b1[32], b2[32], b3[32];

	fprintf(f, "headroom   %s hard (%s)\n",
		mp_fmt_bytes(mp_rd_u64v(rd, t, "headroom_bytes"), b1, sizeof(b1)),
		mp_rd_str(rd, t, "headroom_from", 0));
	mp_text_soft(t, f, rd, "           ");
	if (!aim)
		return;
	at = mp_rd_u64v(rd, p, "stop_at_bytes");
	fprintf(f, "aim        %s: stop at %s of %s; %s\n", aim, mp_fmt_bytes(at, b1, sizeof(b1)),
		mp_rd_str(rd, p, "stop_at_from", 0), mp_rd_str(rd, p, "aim_why", 0));
	fprintf(f, "stopped    %s%s\n", mp_rd_str(rd, p, "stop_reason", 0),
		mp_rd_bool(rd, p, "throttled", 0) ? ": THROTTLED at memory.high (the kernel "
		"slowed the fill), stopped instead of crawling" : "");
	if (mp_rd_u64(rd, p, "file_before_bytes", MP_RD_NULL, &before) &&
	    mp_rd_u64(rd, p, "file_at_stop_bytes", MP_RD_NULL, &stop) &&
	    mp_rd_u64(rd, p, "cache_reclaimed_bytes", MP_RD_NULL, &rec))
		fprintf(f, "page cache %s before, %s at the stop: %s reclaimed by the kernel%s\n",
			mp_fmt_bytes(before, b1, sizeof(b1)), mp_fmt_bytes(stop, b2, sizeof(b2)),
			mp_fmt_bytes(rec, b3, sizeof(b3)),
			mp_rd_bool(rd, p, "reclaim_cache", 0) ? " to make room (--reclaim-cache)" : "");
}

void mp_text_probe(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	static const char *const nine[] = {
		"cgroup_limit_bytes", "usage_before_bytes", "allocated_bytes", "allocated_gib",
		"usage_peak_bytes", "usage_after_bytes", "overhead_bytes", "overhead_gib",
		"probe_chunks",
	};
	const cJSON *t = mp_rd_obj(rd, r, "target", 0), *p = mp_rd_obj(rd, r, "probe", 0);
	char b1[32], b2[32], b3[32];
	bool in_target;

	/* The brief's line first, exactly as the field team's probe printed it. */
	fputc('{', f);
	for (size_t i = 0; i < sizeof(nine) / sizeof(nine[0]); i++)
		fprintf(f, "%s\"%s\": %s", i ? ", " : "", nine[i], mp_rd_num(rd, r, nine[i], 0));
	fputs("}\n\n", f);

	probe_overhead(r, mp_rd_obj(rd, r, "pinned", MP_RD_ABSENT), f, rd);
	probe_verdicts(r, f, rd);
	const char *why = mp_rd_str(rd, t, "chosen_why", MP_RD_ABSENT);

	fprintf(f, "target     %s (cgroup %s)%s\n", mp_rd_str(rd, t, "dir", 0),
		mp_rd_str(rd, t, "version", 0),
		mp_rd_bool(rd, t, "created_by_memprobe", 0) ? ", made by memprobe" : "");
	if (why) /* memprobe chose it: its own cgroup, in a container */
		fprintf(f, "           %s\n", why);
	fprintf(f, "limit      %s effective, set by %s\n",
		mp_fmt_bytes(mp_rd_u64v(rd, t, "effective_limit_bytes"), b1, sizeof(b1)),
		mp_rd_str(rd, t, "effective_limit_from", 0));
	in_target = mp_rd_bool(rd, p, "in_target", 0);
	fprintf(f, "probe      %s chunks, %s margin, thp %s, in %s (%s %s)\n",
		mp_fmt_bytes(mp_rd_u64v(rd, p, "chunk_bytes"), b1, sizeof(b1)),
		mp_fmt_bytes(mp_rd_u64v(rd, p, "margin_bytes"), b2, sizeof(b2)),
		mp_rd_str(rd, p, "thp", 0), mp_rd_str(rd, p, "cgroup", 0),
		in_target ? "aim, not a limit:" : "limit",
		/* in place the aim is the target's usage to stop at, as the aim
		 * line gives it; limit_bytes is only the room that left at the start */
		mp_fmt_bytes(mp_rd_u64v(rd, p, in_target && mp_rd_item(rd, p, "stop_at_bytes",
			     MP_RD_ABSENT) ? "stop_at_bytes" : "limit_bytes"), b3, sizeof(b3)));
	/* no cgroup of its own: the figure above is its aim, enforced by nothing */
	if (in_target)
		fprintf(f, "           in the target itself, without a limit of its own (the "
			"kernel enforces none; the bounds are checked before each chunk): %s\n",
			mp_rd_str(rd, p, "in_target_why", 0));
	probe_fill(p, f, rd);
	probe_stop(t, p, f, rd);
	mp_text_attribution(mp_rd_obj(rd, r, "attribution", 0), f, rd);
	mp_text_pinned(mp_rd_obj(rd, r, "pinned", MP_RD_ABSENT), f, rd);
}

/* ---- record ---------------------------------------------------------------------- */

/* The limit's changes during the recording (documents before them have
 * none): " at the start; 306.0 MiB from 12.3 s", then the line's end. */
static void record_limit_changes(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *l = mp_rd_obj(rd, doc, "limit", MP_RD_ABSENT), *c;
	const cJSON *changes = l ? mp_rd_arr(rd, l, "changes", 0) : NULL;
	uint64_t more = 0;
	char b[32];
	int n = 0;

	cJSON_ArrayForEach(c, changes) {
		if (!mp_rd_is_obj(rd, c))
			break;
		fprintf(f, "%s%s from %.1f s", n++ ? ", " : " at the start; changed during the "
			"recording: ", mp_fmt_bytes(mp_rd_u64v(rd, c, "to_bytes"), b, sizeof(b)),
			mp_rd_u64v(rd, c, "t_ms") / 1000.0);
	}
	if (l && mp_rd_u64(rd, l, "changes_not_kept", 0, &more) && more)
		fprintf(f, " and %" PRIu64 " more changes", more);
	fputc('\n', f);
}

/* "memprobe record: DIR running CMD ARGS", how it ended, the peak, and
 * "timeline: 3 samples late, 18 missed (longest gap 1.9 s)" when the
 * sampler did not get the CPU in time. */
static void record_head(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *run = mp_rd_obj(rd, doc, "run", 0);
	const cJSON *cmd = mp_rd_arr(rd, run, "command", MP_RD_ABSENT), *a;
	struct mp_view_run r;
	char b1[32];

	mp_view_run(doc, rd, &r);
	fprintf(f, "memprobe record: %s", mp_rd_str(rd, mp_rd_obj(rd, doc, "target", 0), "dir", 0));
	if (cmd)
		fputs(" running", f);
	cJSON_ArrayForEach(a, cmd)
		fprintf(f, " %s", mp_rd_elem_str(rd, a));
	fprintf(f, "\nended by %s after %.1f s", r.ended_by, r.duration_ms / 1000.0);
	if (r.has_exit)
		fprintf(f, " (exit status %d)", (int)r.exit_status);
	else if (r.has_signal)
		fprintf(f, " (killed by signal %d)", (int)r.signal);
	fprintf(f, "; limit %s effective",
		mp_fmt_bytes(mp_rd_u64v(rd, mp_rd_obj(rd, doc, "target", 0), "effective_limit_bytes"),
			     b1, sizeof(b1)));
	record_limit_changes(doc, f, rd);
	if (mp_rd_item(rd, run, "in_place", MP_RD_ABSENT)) {
		const cJSON *pids = mp_rd_arr(rd, run, "command_pids", 0);

		fprintf(f, "in place: %s; its process tree: %d pids\n",
			mp_rd_str(rd, run, "in_place_why", 0), cJSON_GetArraySize(pids));
	}
	if (r.has_peak)
		fprintf(f, "peak %s at %.1f s (%s)\n", mp_fmt_bytes(r.peak, b1, sizeof(b1)),
			r.peak_t_ms / 1000.0, r.peak_source);
	if (r.late)
		fprintf(f, "timeline: %" PRIu64 " sample%s late, %" PRIu64 " missed (longest gap "
			"%.1f s)\n", r.late, r.late == 1 ? "" : "s", r.missed, r.longest_gap_ms / 1000.0);
}

/* "  OOM at DIR's 256.0 MiB limit ...: RSS ...; shmem ... that no process
 * maps, ..." and each level's usage and limit at the kill */
static void oom_explained(const cJSON *kill, FILE *f, struct mp_rd *rd)
{
	char line[PATH_MAX + 512], b1[32], b2[32];
	const cJSON *l;
	int n = 0;

	if (!mp_render_oom_line(rd, kill, line, sizeof(line)))
		return;
	fprintf(f, "  %s\n", line);
	cJSON_ArrayForEach(l, mp_rd_arr(rd, kill, "levels", 0)) {
		uint64_t lim;
		bool has = mp_rd_u64(rd, l, "limit_bytes", MP_RD_NULL, &lim);

		fprintf(f, "%s%s %s of %s", n++ ? "; " : "  levels at the kill: ",
			mp_rd_str(rd, l, "dir", 0),
			mp_fmt_bytes(mp_rd_u64v(rd, l, "usage_bytes"), b1, sizeof(b1)),
			has ? mp_fmt_bytes(lim, b2, sizeof(b2)) : "no limit");
	}
	if (n)
		fputc('\n', f);
}

static void record_events(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *p = mp_rd_obj(rd, doc, "probe", MP_RD_ABSENT);
	struct mp_view_ooms v;
	char b1[32], b2[32];

	if (mp_view_ooms(doc, rd, &v))
		return;
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_oom *k = &v.rows[i];

		fprintf(f, "OOM kill at %.1f s: ", k->t_ms / 1000.0);
		/* "victim not known (polled oom_kill counter; usage ...)" */
		if (k->victim_known)
			fprintf(f, "%s[%u] (", k->comm, (unsigned int)k->pid);
		else
			fputs("victim not known (" MP_VIEW_OOM_NO_VICTIM_WHY "; ", f);
		fprintf(f, "usage %s%s", mp_fmt_bytes(k->usage, b1, sizeof(b1)),
			k->at_kill ? " at the kill" : ", last sample before it");
		if (k->has_limit)
			fprintf(f, "; limit %s then", mp_fmt_bytes(k->limit, b2, sizeof(b2)));
		fputs(")\n", f);
		oom_explained(k->obj, f, rd);
	}
	if (v.not_listed)
		fprintf(f, "(and %" PRIu64 " OOM kills between the first and the last half of "
			"those listed)\n", v.not_listed);
	mp_view_ooms_free(&v);
	if (p) {
		/* the probe's fields on a line, its overhead in words below */
		cJSON *q = cJSON_Duplicate(p, 1);
		char *s;

		cJSON_DeleteItemFromObjectCaseSensitive(q, "overhead");
		s = cJSON_PrintUnformatted(q);
		fprintf(f, "probe: %s\n", s ? s : "");
		cJSON_free(s);
		cJSON_Delete(q);
		probe_overhead(p, mp_rd_obj(rd, doc, "pinned", MP_RD_ABSENT), f, rd);
	}
}

/* One row of the timeline (views.h): its resolution last (a folded row's
 * figures are its last sample's). */
static void record_row(const struct mp_view_timeline *v, const struct mp_view_tl_row *r, FILE *f)
{
	char b[5][32];

	fprintf(f, "%8.1f %12s", r->t_ms / 1000.0, mp_fmt_bytes(r->usage, b[0], sizeof(b[0])));
	/* the limit in force beside the usage (documents before it have no
	 * column) */
	if (v->limit_column)
		fprintf(f, " %12s", r->has_limit ? mp_fmt_bytes(r->limit, b[0], sizeof(b[0])) : "-");
	fprintf(f, " %12s %12s %12s %10" PRIu64 " %11s\n",
		mp_fmt_sbytes(r->anon, b[1], sizeof(b[1])), mp_fmt_sbytes(r->file, b[2], sizeof(b[2])),
		mp_fmt_sbytes(r->kernel, b[3], sizeof(b[3])), r->faults_per_sec,
		mp_render_ms(r->resolution_ms, b[4], sizeof(b[4])));
}

/* How the timeline was folded, under it (documents before the bound have
 * no timeline_folding, and nothing folded). */
static void record_folding(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *fo = mp_rd_obj(rd, doc, "timeline_folding", MP_RD_ABSENT);
	uint64_t folded = 0, from, per;
	char b[32];

	if (!fo || !mp_rd_u64(rd, fo, "folded_samples", 0, &folded) || !folded)
		return;
	per = mp_rd_u64v(rd, fo, "samples_per_folded_row");
	fprintf(f, "(%" PRIu64 " of %" PRIu64 " samples folded, up to %" PRIu64 " a row",
		folded, mp_rd_u64v(rd, fo, "samples"), per);
	if (mp_rd_u64(rd, fo, "window_from_ms", MP_RD_NULL, &from))
		fprintf(f, ", before %s", mp_render_ms(from, b, sizeof(b)));
	fputs(": a folded row shows its last sample; min, max and mean are in the JSON)\n", f);
}

void mp_text_record(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_timeline v;

	record_head(doc, f, rd);
	record_events(doc, f, rd);
	if (mp_view_timeline(doc, rd, &v))
		return;
	fprintf(f, "\n%8s %12s%s %12s %12s %12s %10s %11s\n", "t (s)", "usage",
		v.limit_column ? "        limit" : "", "anon", "file", "kernel", "faults/s",
		"resolution");
	for (int i = 0; i < v.n; i++)
		if (v.rows[i].due)
			record_row(&v, &v.rows[i], f);
	mp_view_timeline_free(&v);
	record_folding(doc, f, rd);
	mp_text_attribution(mp_rd_obj(rd, doc, "attribution", 0), f, rd);
	mp_text_pinned(mp_rd_obj(rd, doc, "pinned", MP_RD_ABSENT), f, rd);
}

/*
 * Copy text to f with terminal controls shown, not sent: a command's name
 * or a cgroup's path is the workload's to choose, and an escape sequence
 * in it would clear or rewrite the terminal of whoever reads the report.
 * C0 controls but newline and tab, DEL, and the C1 controls (U+0080 to
 * U+009F, whose UTF-8 is C2 80 to C2 9F) are written as \xNN.
 */
static void put_visible(const char *t, size_t n, FILE *f)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c == 0xc2 && i + 1 < n && (unsigned char)t[i + 1] >= 0x80 &&
		    (unsigned char)t[i + 1] <= 0x9f)
			fprintf(f, "\\x%02x", (unsigned char)t[++i]);
		else if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

static void render_kind(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	switch (kind) {
	case MP_DOC_LIMITS: mp_text_limits(doc, f, rd); break;
	case MP_DOC_FEATURES: mp_text_features(doc, f, rd); break;
	case MP_DOC_PROBE: mp_text_probe(doc, f, rd); break;
	case MP_DOC_RECORD: mp_text_record(doc, f, rd); break;
	case MP_DOC_BUDGET: mp_text_budget(doc, f, rd); break;
	default: mp_rd_fail(rd, NULL, "kind", "unknown"); break;
	}
}

static void render_text(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	if (kind == MP_DOC_COMPARE) { /* its columns, as compare prints them */
		mp_compare_render(doc, "text", f, rd);
		return;
	}
	if (!(m = open_memstream(&text, &len))) {
		mp_rd_fail(rd, NULL, "text", "out of memory");
		return;
	}
	render_kind(doc, kind, m, rd);
	if (fclose(m))
		mp_rd_fail(rd, NULL, "text", "out of memory");
	else
		put_visible(text, len, f);
	free(text);
}

const struct mp_renderer mp_renderer_text = {
	.name = "text",
	.kinds = MP_DOC_ALL,
	.render = render_text,
};
