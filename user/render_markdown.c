// SPDX-License-Identifier: GPL-2.0
/*
 * --format markdown: the text report's tables as GitHub-flavoured markdown,
 * to paste into an issue or a pull request. Sizes are for people (1.5 MiB)
 * unless --bytes (exact byte counts). Everything the workload names (paths,
 * comms, commands) goes into code spans with '|' escaped and backticks and
 * controls replaced, so it cannot break a table or inject markup.
 */
#include "render.h"
#include "compare.h"
#include "proc_role.h"
#include "util.h"
#include "views.h"

#include <inttypes.h>
#include <limits.h>
#include <string.h>

/* Text the workload chose, as a code span safe in a table cell. */
static void code(FILE *f, const char *s)
{
	fputc('`', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '|')
			fputs("\\|", f);
		else if (c == '`')
			fputc('\'', f);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
	fputc('`', f);
}

/* "comm[pid]", or the comm alone where the pid is null (the rest). */
static void who(FILE *f, const cJSON *tk, struct mp_rd *rd)
{
	char b[96];
	uint64_t pid = 0;

	mp_rd_u64(rd, tk, "pid", MP_RD_NULL, &pid);
	if (pid)
		snprintf(b, sizeof(b), "%s[%" PRIu64 "]", mp_rd_str(rd, tk, "comm", 0), pid);
	else
		snprintf(b, sizeof(b), "%s", mp_rd_str(rd, tk, "comm", 0));
	code(f, b);
}

/* A span of a view's table (views.h): names in code spans. */
static void span(const struct mp_view_span *s, FILE *f, struct mp_rd *rd)
{
	switch (s->kind) {
	case MP_SPAN_TEXT:
	case MP_SPAN_DOC: fputs(s->s ? s->s : "", f); break;
	case MP_SPAN_FRAME: fputs(s->caller ? " ← " : "", f); /* fall through */
	case MP_SPAN_NAME: code(f, s->s); break;
	case MP_SPAN_WHO: who(f, s->obj, rd); break;
	}
}

/* A view's table; a total in bold, a blank cell "| |". */
static void table(const struct mp_view_table *t, FILE *f, struct mp_rd *rd)
{
	for (int c = 0; c < t->ncols; c++)
		fprintf(f, "| %s ", t->head[c]);
	fputs("|\n", f);
	for (int c = 0; c < t->ncols; c++)
		fputs(t->numeric & 1u << c ? "|---:" : "|---", f);
	fputs("|\n", f);
	for (int i = 0; i < t->ncells; i++) {
		const struct mp_view_cell *c = &t->cells[i];

		fputs(c->n && c->strong ? "| **" : "| ", f);
		mp_view_cell_spans(t, c, span, f, rd);
		fputs(!c->n ? "" : c->strong ? "** " : " ", f);
		if ((i + 1) % t->ncols == 0)
			fputs("|\n", f);
	}
}

static void header_line(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *h = mp_rd_obj(rd, doc, "host", 0);

	fputs("Host ", f);
	code(f, mp_rd_str(rd, h, "hostname", 0));
	fputs(", kernel ", f);
	code(f, mp_rd_str(rd, h, "kernel_release", 0));
	fprintf(f, ", cgroup %s, memprobe ", mp_rd_str(rd, h, "cgroup_mode", 0));
	code(f, mp_rd_str(rd, mp_rd_obj(rd, doc, "generator", 0), "version", 0));
	fprintf(f, ", %s.\n\n", mp_rd_str(rd, doc, "created", 0));
}

/* A limit row: "max" where null. */
static void limit_row(FILE *f, struct mp_rd *rd, const char *label, const cJSON *o,
		      const char *name)
{
	uint64_t v;
	char b[32];

	if (!mp_rd_item(rd, o, name, MP_RD_ABSENT))
		return;
	fprintf(f, "| %s | %s |\n", label,
		mp_rd_u64(rd, o, name, MP_RD_NULL, &v) ? mp_render_usize(v, b, sizeof(b)) : "max");
}

/* The cgroup's limit and throttling point (views.h). */
static void limit_rows(const cJSON *cg, FILE *f, struct mp_rd *rd)
{
	struct mp_view_limits v;
	char b[32];

	mp_view_limits(cg, rd, &v);
	fprintf(f, "| limit | %s, set by ", mp_render_usize(v.limit, b, sizeof(b)));
	code(f, v.limit_from);
	fputs(" |\n", f);
	if (v.has_throttle) {
		fprintf(f, "| throttling point | %s (%s", mp_render_usize(v.throttle, b, sizeof(b)),
			v.throttle_kind ? v.throttle_kind : "throttle");
		if (v.throttle_from) {
			fputs(", set by ", f);
			code(f, v.throttle_from);
		}
		fputs(") |\n", f);
	}
	if (v.has_high)
		fprintf(f, "| memory.high | %s |\n",
			v.high_null ? "max" : mp_render_usize(v.high, b, sizeof(b)));
}

/* Summary rows of the memory no process maps and the huge pages, of a
 * cgroup object (limits) or a pinned one (probe, record), and the pinned
 * figures; nothing in older documents. */
static void moment_rows(const cJSON *o, bool pinned, FILE *f, struct mp_rd *rd)
{
	struct mp_view_moment m;
	char b[32], b2[32];
	uint64_t v;

	if (!o)
		return;
	mp_view_moment(o, rd, &m);
	if (m.unmapped)
		fprintf(f, "| no process maps | shmem %s at least, page cache %s (shmem included) |\n",
			mp_render_usize(m.shmem_unmapped, b, sizeof(b)),
			mp_render_usize(m.file_unmapped, b2, sizeof(b2)));
	for (int i = 0; i < m.nhuge; i++)
		fprintf(f, "%s%s %s", i ? ", " : "| huge pages | ", m.huge[i].kind,
			mp_render_usize(m.huge[i].bytes, b, sizeof(b)));
	if (m.nhuge)
		fputs(" |\n", f);
	if (pinned && mp_rd_u64(rd, o, "vm_lck_bytes", MP_RD_ABSENT, &v))
		fprintf(f, "| pinned (%s) | VmLck %s, VmPin %s |\n", mp_rd_str(rd, o, "at", 0),
			mp_render_usize(v, b, sizeof(b)),
			mp_render_usize(mp_rd_u64v(rd, o, "vm_pin_bytes"), b2, sizeof(b2)));
}

/* The overhead object (probe doc `overhead`, record's probe) as its view's
 * table, its total named "overhead" at the peak, "left after" for what
 * stayed charged once the probe exited (as the text report says). */
static void overhead(const cJSON *o, FILE *f, struct mp_rd *rd)
{
	if (!o)
		return;
	fprintf(f, "## What the overhead is made of (at the %s)\n\n",
		mp_rd_str(rd, o, "at", MP_RD_ABSENT) ? mp_rd_str(rd, o, "at", 0) : "peak");
	mp_view_lay_overhead(o, "\nLeft after the probe exited:\n\n", mp_render_size, table, f, rd);
	fputc('\n', f);
}

/* The probe's nine fields (probe doc, or record's --probe-at object). */
static void summary_nine(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	struct mp_view_nine v;

	mp_view_nine(r, rd, &v);
	for (int i = 0; i < MP_VIEW_NINE_ROWS; i++) {
		const char *s = v.rows[i].strong ? "**" : "";

		fprintf(f, "| %s%s%s | %s%s%s%s |\n", s, v.rows[i].label, s, s, v.rows[i].value, s,
			v.rows[i].extra);
	}
}

/* ---- attribution ----------------------------------------------------------------- */

static void categories(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	struct mp_view_table t;
	char b[32];

	if (mp_view_cats(a, rd, mp_render_size, 0, &v))
		return;
	fprintf(f, "## Where the cgroup's growth went\n\nUsage %s%s %s.\n\n",
		v.measured >= 0 ? "+" : "", mp_render_size(v.measured, b, sizeof(b)), v.span);
	mp_view_lay(mp_view_cats_table(&v, mp_render_size, rd, &t), &t, table, f, rd);
	fputs("\n_file includes shmem; kernel includes pagetables, kernel_stack, slab, percpu, "
	      "vmalloc and kernel_other._\n\n", f);
	mp_view_cats_free(&v);
}

static void faults(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *pf = mp_rd_obj(rd, a, "page_faults", 0);
	const char *per_gib = mp_rd_num(rd, pf, "probe_per_gib_allocated", MP_RD_NULL | MP_RD_ABSENT);

	fprintf(f, "Page faults: %" PRIu64 " in the target", mp_rd_u64v(rd, pf, "total"));
	if (per_gib)
		fprintf(f, "; the probe's: %" PRIu64 ", %s per GiB it allocated",
			mp_rd_u64v(rd, pf, "probe"), per_gib);
	fputs(".\n\n", f);
}

static void kernel_paths(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_paths v;
	struct mp_view_table t;

	fputs("## Kernel paths\n\nKernel page allocations with a stack, net of frees.\n\n", f);
	if (mp_view_paths(a, rd, 0, &v))
		return;
	if (v.n == 0) /* an empty table said nothing of why (as text does) */
		fprintf(f, "None recorded (%s).\n", mp_view_paths_none(a, rd));
	else
		mp_view_lay(mp_view_paths_table(&v, mp_render_size, rd, &t), &t, table, f, rd);
	mp_view_paths_free(&v);
	fputc('\n', f);
}

static void hooks(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_hooks v;
	struct mp_view_table t;
	const cJSON *lost;

	fputs("## Hooks\n\n", f);
	if (mp_view_hooks(a, rd, &v))
		return;
	mp_view_lay(mp_view_hooks_table(&v, rd, &t), &t, table, f, rd);
	for (int i = 0; i < v.nmissing; i++) {
		fputs("\n- attribution missing: ", f);
		code(f, v.missing[i]);
	}
	mp_view_hooks_free(&v);
	/* none without a BPF session (attribution_missing says why) */
	lost = mp_rd_obj(rd, a, "events_lost", MP_RD_ABSENT);
	if (lost)
		fprintf(f, "\n\nEvents lost: %" PRIu64 ".", mp_rd_u64v(rd, lost, "total"));
	fputc('\n', f);
}

/* Who paid for a fork's shared pages (as the text says it). */
static void who_cow(FILE *f, const struct mp_view_cow_task *t, struct mp_rd *rd)
{
	who(f, t->obj, rd);
}

static void copy_on_write(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	static const struct mp_view_cow_words w = { mp_render_size, "`", ".\n\n", who_cow };

	mp_view_cow_say(a, &w, f, rd);
}

static void attribution(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	if (!mp_rd_item(rd, a, "hooks", MP_RD_ABSENT)) {
		hooks(a, f, rd); /* no BPF session: only why */
		return;
	}
	categories(a, f, rd);
	faults(a, f, rd);
	copy_on_write(a, f, rd);
	kernel_paths(a, f, rd);
	hooks(a, f, rd);
}

/* ---- the kinds ------------------------------------------------------------------- */

static void verdicts(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	struct mp_view_verdicts v;

	mp_view_verdicts(r, rd, &v);
	if (v.note)
		fprintf(f, "> **Note:** %s\n\n", v.note);
	if (v.interrupted)
		fputs("> **Interrupted:** the probe was stopped by a signal; figures are partial.\n\n", f);
	if (v.killed)
		fprintf(f, "> **Killed:** the probe process was killed by signal %" PRIu64
			" from outside memprobe; figures are partial.\n\n", v.signal);
	if (v.oom_killed)
		fprintf(f, "> **OOM:** the probe was OOM-killed (at the %s's limit).\n\n", v.oom_limit);
}

static void md_probe(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	const cJSON *t = mp_rd_obj(rd, r, "target", 0), *p = mp_rd_obj(rd, r, "probe", 0);
	struct mp_view_fill fill;
	char b[32], b2[32];

	fputs("# memprobe probe: ", f);
	code(f, mp_rd_str(rd, t, "dir", 0));
	fputs("\n\n", f);
	header_line(r, f, rd);
	verdicts(r, f, rd);
	fputs("## Summary\n\n| | |\n|---|---|\n", f);
	limit_rows(t, f, rd);
	summary_nine(r, f, rd);
	fprintf(f, "| probe | %s chunks, %s margin, thp %s |\n",
		mp_render_usize(mp_rd_u64v(rd, p, "chunk_bytes"), b, sizeof(b)),
		mp_render_usize(mp_rd_u64v(rd, p, "margin_bytes"), b2, sizeof(b2)),
		mp_rd_str(rd, p, "thp", 0));
	mp_view_fill(p, rd, &fill);
	if (fill.shown) /* with --threads N: the CPUs the fill got, and why no more */
		fprintf(f, "| fill | %s |\n", fill.line);
	fputc('\n', f);
	if (mp_rd_obj(rd, r, "pinned", MP_RD_ABSENT)) {
		fputs("| | |\n|---|---|\n", f);
		moment_rows(mp_rd_obj(rd, r, "pinned", MP_RD_ABSENT), true, f, rd);
		fputc('\n', f);
	}
	overhead(mp_rd_obj(rd, r, "overhead", MP_RD_ABSENT), f, rd);
	attribution(mp_rd_obj(rd, r, "attribution", 0), f, rd);
}

/* The effective limit's changes during the recording, a row each (the
 * summary's limit row is the start's); documents before them have none. */
static void limit_change_rows(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *l = mp_rd_obj(rd, doc, "limit", MP_RD_ABSENT), *c;
	const cJSON *changes = l ? mp_rd_arr(rd, l, "changes", 0) : NULL;
	uint64_t more = 0;
	char b[2][32];

	cJSON_ArrayForEach(c, changes) {
		if (!mp_rd_is_obj(rd, c))
			return;
		fprintf(f, "| limit changed | at %.1f s: %s → %s |\n", mp_rd_u64v(rd, c, "t_ms") / 1000.0,
			mp_render_usize(mp_rd_u64v(rd, c, "from_bytes"), b[0], sizeof(b[0])),
			mp_render_usize(mp_rd_u64v(rd, c, "to_bytes"), b[1], sizeof(b[1])));
	}
	if (l && mp_rd_u64(rd, l, "changes_not_kept", 0, &more) && more)
		fprintf(f, "| limit changed | %" PRIu64 " more times |\n", more);
}

static void record_head(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *run = mp_rd_obj(rd, doc, "run", 0);
	const cJSON *cmd = mp_rd_arr(rd, run, "command", MP_RD_ABSENT), *a;
	const cJSON *t = mp_rd_obj(rd, doc, "target", 0);
	struct mp_view_run r;
	char b[32];

	mp_view_run(doc, rd, &r);

	fputs("# memprobe record: ", f);
	code(f, mp_rd_str(rd, t, "dir", 0));
	fputs("\n\n", f);
	header_line(doc, f, rd);
	fputs("## Summary\n\n| | |\n|---|---|\n", f);
	if (cmd) {
		fputs("| command |", f);
		cJSON_ArrayForEach(a, cmd) {
			fputc(' ', f);
			code(f, mp_rd_elem_str(rd, a));
		}
		fputs(" |\n", f);
	}
	fprintf(f, "| ended by | %s after %.1f s", r.ended_by, r.duration_ms / 1000.0);
	if (r.has_exit)
		fprintf(f, " (exit status %d)", (int)r.exit_status);
	else if (r.has_signal)
		fprintf(f, " (killed by signal %d)", (int)r.signal);
	fputs(" |\n", f);
	limit_rows(t, f, rd);
	limit_change_rows(doc, f, rd);
	if (r.has_peak)
		fprintf(f, "| peak | %s at %.1f s (%s) |\n", mp_render_usize(r.peak, b, sizeof(b)),
			r.peak_t_ms / 1000.0, r.peak_source);
	if (r.late)
		fprintf(f, "| timeline | %" PRIu64 " samples late, %" PRIu64 " missed (longest gap "
			"%.1f s) |\n", r.late, r.missed, r.longest_gap_ms / 1000.0);
	moment_rows(mp_rd_obj(rd, doc, "pinned", MP_RD_ABSENT), true, f, rd);
	fprintf(f, "| OOM kills | %d |\n\n", r.ooms);
}

/* The OOM kills, a row each, then what each was made of. */
static void oom_kills(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_ooms v;
	char b[32], line[PATH_MAX + 512];

	if (mp_view_ooms(doc, rd, &v))
		return;
	if (v.n)
		fputs("## OOM kills\n\n| t (s) | task | usage | limit |\n|---:|---|---:|---:|\n", f);
	for (int i = 0; i < v.n; i++) {
		fprintf(f, "| %.1f | ", v.rows[i].t_ms / 1000.0);
		if (v.rows[i].victim_known)
			who(f, v.rows[i].obj, rd);
		else
			fputs(MP_VIEW_OOM_NO_VICTIM, f);
		fprintf(f, " | %s %s | ", mp_render_usize(v.rows[i].usage, b, sizeof(b)),
			v.rows[i].at_kill ? "at the kill" : "(last sample before it)");
		/* the limit then (documents before it: none) */
		if (v.rows[i].has_limit)
			fputs(mp_render_usize(v.rows[i].limit, b, sizeof(b)), f);
		fputs(" |\n", f);
	}
	if (v.n)
		fputc('\n', f);
	for (int i = 0; i < v.n; i++)
		if (mp_render_oom_line(rd, v.rows[i].obj, line, sizeof(line)))
			fprintf(f, "- %.1f s: %s\n", v.rows[i].t_ms / 1000.0, line);
	if (v.n)
		fputc('\n', f);
	mp_view_ooms_free(&v);
}

static void record_events(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *p = mp_rd_obj(rd, doc, "probe", MP_RD_ABSENT);

	oom_kills(doc, f, rd);
	if (!p)
		return;
	fputs("## The probe (--probe-at)\n\n", f);
	if (mp_rd_str(rd, p, "error", MP_RD_ABSENT)) {
		fputs("It failed: ", f);
		code(f, mp_rd_str(rd, p, "error", 0));
		fputs("\n\n", f);
		return;
	}
	fputs("| | |\n|---|---|\n", f);
	summary_nine(p, f, rd);
	fprintf(f, "| completed | %s |\n\n", mp_rd_bool(rd, p, "completed", 0) ? "yes" : "no");
	overhead(mp_rd_obj(rd, p, "overhead", MP_RD_ABSENT), f, rd);
}

/* The timeline's short table (views.h), each row with its resolution (a
 * folded row's figures are its last sample's). */
static void record_timeline(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	struct mp_view_timeline v;
	char b[7][32];

	if (mp_view_timeline(doc, rd, &v))
		return;
	fputs("## Timeline\n\n| t (s) | usage | limit | anon | file | kernel | faults/s | "
	      "resolution |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
	for (int i = 0; i < v.n; i++) {
		const struct mp_view_tl_row *r = &v.rows[i];

		if (!r->due)
			continue;
		snprintf(b[5], sizeof(b[5]), ", %" PRIu64 " samples", r->samples);
		/* the limit in force; documents before it: empty */
		if (!r->has_limit)
			b[6][0] = '\0';
		else
			mp_render_usize(r->limit, b[6], sizeof(b[6]));
		fprintf(f, "| %.1f | %s | %s | %s | %s | %s | %" PRIu64 " | %s%s |\n", r->t_ms / 1000.0,
			mp_render_usize(r->usage, b[0], sizeof(b[0])), b[6],
			mp_render_size(r->anon, b[1], sizeof(b[1])),
			mp_render_size(r->file, b[2], sizeof(b[2])),
			mp_render_size(r->kernel, b[3], sizeof(b[3])), r->faults_per_sec,
			mp_render_ms(r->resolution_ms, b[4], sizeof(b[4])), r->samples > 1 ? b[5] : "");
	}
	if (v.ndue < v.n)
		fprintf(f, "\n_%d of %d rows (%" PRIu64 " samples), evenly in time._\n", v.ndue, v.n,
			v.samples);
	if (v.folded)
		fputs("\n_A row of many samples is folded: its figures are its last sample's; "
		      "the JSON document has their min, max and mean._\n", f);
	fputc('\n', f);
	mp_view_timeline_free(&v);
}

static void md_record(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	record_head(doc, f, rd);
	record_events(doc, f, rd);
	record_timeline(doc, f, rd);
	attribution(mp_rd_obj(rd, doc, "attribution", 0), f, rd);
}

/* The soft headroom, where the document has it (older ones do not). */
static void limits_soft(const cJSON *cg, FILE *f, struct mp_rd *rd)
{
	uint64_t rec, soft;
	char b[32], w[200];

	if (mp_rd_u64(rd, cg, "reclaimable_bytes", MP_RD_NULL | MP_RD_ABSENT, &rec) &&
	    mp_rd_u64(rd, cg, "soft_headroom_bytes", MP_RD_NULL, &soft))
		fprintf(f, "| soft headroom | %s: %s |\n", mp_render_usize(soft, b, sizeof(b)),
			mp_view_soft_words(cg, rd, mp_render_size, "the headroom", rec, w, sizeof(w)));
}

/* What /proc/meminfo and the host say beside the cgroup: the figures a job
 * sized from inside a container would see. */
static void limits_host(const cJSON *h, FILE *f, struct mp_rd *rd)
{
	const char *dist = mp_rd_str(rd, h, "distribution", MP_RD_NULL);
	const char *thp_e = mp_rd_str(rd, h, "thp_enabled", MP_RD_NULL);
	const char *thp_d = mp_rd_str(rd, h, "thp_defrag", MP_RD_NULL);
	char b[32];

	fputs("\n## Host\n\n| | |\n|---|---|\n", f);
	if (dist)
		fprintf(f, "| distribution | %s |\n", dist);
	fprintf(f, "| BTF | %s |\n", mp_rd_bool(rd, h, "btf", 0) ? "present" : "absent");
	fprintf(f, "| CPUs | %" PRIu64 " |\n", mp_rd_u64v(rd, h, "cpus"));
	fprintf(f, "| MemTotal | %s |\n",
		mp_render_usize(mp_rd_u64v(rd, h, "mem_total_bytes"), b, sizeof(b)));
	fprintf(f, "| MemAvailable | %s |\n",
		mp_render_usize(mp_rd_u64v(rd, h, "mem_available_bytes"), b, sizeof(b)));
	fprintf(f, "| page size | %" PRIu64 " |\n", mp_rd_u64v(rd, h, "page_size_bytes"));
	fprintf(f, "| THP | enabled=%s defrag=%s |\n", thp_e ? thp_e : "n/a", thp_d ? thp_d : "n/a");
}

static void md_limits(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *cg = mp_rd_obj(rd, doc, "cgroup", 0);
	uint64_t v;
	char b[32];

	fputs("# memprobe limits: ", f);
	code(f, mp_rd_str(rd, cg, "path", 0));
	fputs("\n\n", f);
	header_line(doc, f, rd);
	fputs("| | |\n|---|---|\n| directory | ", f);
	code(f, mp_rd_str(rd, cg, "dir", 0));
	fprintf(f, " |\n| cgroup | %s%s |\n", mp_rd_str(rd, cg, "version", 0),
		mp_rd_bool(rd, cg, "host_root", 0) ? ", the host's root memory cgroup" : "");
	limit_row(f, rd, "own limit", cg, "limit_bytes");
	limit_rows(cg, f, rd);
	limit_row(f, rd, "swap limit", cg, "swap_limit_bytes");
	limit_row(f, rd, "memsw limit", cg, "memsw_limit_bytes");
	fprintf(f, "| usage | %s |\n", mp_render_usize(mp_rd_u64v(rd, cg, "usage_bytes"), b, sizeof(b)));
	if (mp_rd_u64(rd, cg, "peak_bytes", MP_RD_NULL, &v))
		fprintf(f, "| peak | %s |\n", mp_render_usize(v, b, sizeof(b)));
	fprintf(f, "| headroom | %s, set by ", mp_render_usize(mp_rd_u64v(rd, cg, "headroom_bytes"), b, sizeof(b)));
	code(f, mp_rd_str(rd, cg, "headroom_from", 0));
	fputs(" |\n", f);
	limits_soft(cg, f, rd);
	moment_rows(cg, false, f, rd);
	limits_host(mp_rd_obj(rd, doc, "host", 0), f, rd);
}

static void render_markdown(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	switch (kind) {
	case MP_DOC_LIMITS: md_limits(doc, f, rd); break;
	case MP_DOC_PROBE: md_probe(doc, f, rd); break;
	case MP_DOC_RECORD: md_record(doc, f, rd); break;
	case MP_DOC_COMPARE: mp_compare_render(doc, "markdown", f, rd); break;
	default: mp_rd_fail(rd, NULL, "kind", "no markdown for it"); break;
	}
}

const struct mp_renderer mp_renderer_markdown = {
	.name = "markdown",
	.kinds = MP_DOC_LIMITS | MP_DOC_PROBE | MP_DOC_RECORD | MP_DOC_COMPARE,
	.render = render_markdown,
};
