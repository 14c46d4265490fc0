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

/* The cgroup's limit and throttling point (throttle_bytes: when present). */
static void limit_rows(const cJSON *cg, FILE *f, struct mp_rd *rd)
{
	uint64_t thr;
	char b[32];

	fprintf(f, "| limit | %s, set by ",
		mp_render_usize(mp_rd_u64v(rd, cg, "effective_limit_bytes"), b, sizeof(b)));
	code(f, mp_rd_str(rd, cg, "effective_limit_from", 0));
	fputs(" |\n", f);
	if (mp_rd_u64(rd, cg, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, &thr)) {
		const char *kind = mp_rd_str(rd, cg, "throttle_kind", MP_RD_NULL | MP_RD_ABSENT);
		const char *from = mp_rd_str(rd, cg, "throttle_from", MP_RD_NULL | MP_RD_ABSENT);

		fprintf(f, "| throttling point | %s (%s", mp_render_usize(thr, b, sizeof(b)),
			kind ? kind : "throttle");
		if (from) {
			fputs(", set by ", f);
			code(f, from);
		}
		fputs(") |\n", f);
	}
	limit_row(f, rd, "memory.high", cg, "high_bytes");
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
	const cJSON *after;
	struct mp_view_table t;

	if (!o)
		return;
	fprintf(f, "## What the overhead is made of (at the %s)\n\n",
		mp_rd_str(rd, o, "at", MP_RD_ABSENT) ? mp_rd_str(rd, o, "at", 0) : "peak");
	mp_view_lay(mp_view_overhead_table(o, "overhead", mp_render_size, rd, &t),
		    &t, table, f, rd);
	after = mp_rd_obj(rd, o, "left_after", MP_RD_ABSENT);
	if (after) {
		fputs("\nLeft after the probe exited:\n\n", f);
		mp_view_lay(mp_view_overhead_table(after, "left after", mp_render_size, rd, &t),
			    &t, table, f, rd);
	}
	fputc('\n', f);
}

/* The probe's nine fields (probe doc, or record's --probe-at object). */
static void summary_nine(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	uint64_t chunks = mp_rd_u64v(rd, r, "probe_chunks");
	char b[32];

	fprintf(f, "| usage before | %s |\n",
		mp_render_usize(mp_rd_u64v(rd, r, "usage_before_bytes"), b, sizeof(b)));
	fprintf(f, "| allocated | %s (%" PRIu64 " chunks) |\n",
		mp_render_usize(mp_rd_u64v(rd, r, "allocated_bytes"), b, sizeof(b)), chunks);
	fprintf(f, "| usage at the peak | %s |\n",
		mp_render_usize(mp_rd_u64v(rd, r, "usage_peak_bytes"), b, sizeof(b)));
	fprintf(f, "| usage after | %s |\n",
		mp_render_usize(mp_rd_u64v(rd, r, "usage_after_bytes"), b, sizeof(b)));
	fprintf(f, "| **overhead** | **%s** (peak − before − allocated) |\n",
		mp_render_size(mp_rd_s64v(rd, r, "overhead_bytes"), b, sizeof(b)));
}

/* ---- attribution ----------------------------------------------------------------- */

static void categories(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	struct mp_view_table t;
	char b[32];

	if (mp_view_cats(a, rd, mp_render_size, &v))
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
	if (mp_view_paths(a, rd, &v))
		return;
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
static void copy_on_write(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *o = mp_rd_obj(rd, a, "copy_on_write", MP_RD_ABSENT), *t;
	char b[32];
	int n = 0;

	if (!o)
		return;
	if (!mp_rd_str(rd, o, "source", MP_RD_NULL)) {
		fprintf(f, "Copy-on-write: not looked for (%s).\n\n", mp_rd_str(rd, o, "why", 0));
		return;
	}
	fprintf(f, "Copy-on-write: %s of pages copied on write (after a fork, or at a "
		"private file page's first write: `%s`'s copies, %s)",
		mp_render_usize(mp_rd_u64v(rd, o, "bytes"), b, sizeof(b)),
		mp_rd_str(rd, o, "source", 0), mp_rd_str(rd, o, "span", 0));
	cJSON_ArrayForEach(t, mp_rd_arr(rd, o, "by_task", 0)) {
		if (n == 3 || !mp_rd_is_obj(rd, t))
			break;
		fputs(n++ ? ", " : ": ", f);
		who(f, t, rd);
		fprintf(f, " copied %s", mp_render_usize(mp_rd_u64v(rd, t, "bytes"), b, sizeof(b)));
	}
	fputs(".\n\n", f);
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
	const char *note = mp_rd_str(rd, r, "note", MP_RD_ABSENT);
	uint64_t sig;

	if (note)
		fprintf(f, "> **Note:** %s\n\n", note);
	if (mp_rd_bool(rd, r, "interrupted", 0))
		fputs("> **Interrupted:** the probe was stopped by a signal; figures are partial.\n\n", f);
	if (mp_rd_u64(rd, r, "probe_killed_by_signal", MP_RD_NULL, &sig))
		fprintf(f, "> **Killed:** the probe process was killed by signal %" PRIu64
			" from outside memprobe; figures are partial.\n\n", sig);
	if (mp_rd_bool(rd, r, "probe_oom_killed", 0))
		fprintf(f, "> **OOM:** the probe was OOM-killed (at the %s's limit).\n\n",
			mp_rd_str(rd, r, "probe_oom_limit", 0));
}

static void md_probe(const cJSON *r, FILE *f, struct mp_rd *rd)
{
	const cJSON *t = mp_rd_obj(rd, r, "target", 0), *p = mp_rd_obj(rd, r, "probe", 0);
	char b[32], b2[32];

	fputs("# memprobe probe: ", f);
	code(f, mp_rd_str(rd, t, "dir", 0));
	fputs("\n\n", f);
	header_line(r, f, rd);
	verdicts(r, f, rd);
	fputs("## Summary\n\n| | |\n|---|---|\n", f);
	limit_rows(t, f, rd);
	summary_nine(r, f, rd);
	fprintf(f, "| probe | %s chunks, %s margin, thp %s |\n\n",
		mp_render_usize(mp_rd_u64v(rd, p, "chunk_bytes"), b, sizeof(b)),
		mp_render_usize(mp_rd_u64v(rd, p, "margin_bytes"), b2, sizeof(b2)),
		mp_rd_str(rd, p, "thp", 0));
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
	const cJSON *run = mp_rd_obj(rd, doc, "run", 0), *pk = mp_rd_obj(rd, doc, "peak", 0);
	const cJSON *cmd = mp_rd_arr(rd, run, "command", MP_RD_ABSENT), *a;
	const cJSON *t = mp_rd_obj(rd, doc, "target", 0);
	uint64_t v, t_ms;
	char b[32];

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
	fprintf(f, "| ended by | %s after %.1f s", mp_rd_str(rd, run, "ended_by", 0),
		mp_rd_u64v(rd, run, "duration_ms") / 1000.0);
	if (mp_rd_u64(rd, run, "exit_status", MP_RD_ABSENT, &v))
		fprintf(f, " (exit status %d)", (int)v);
	else if (mp_rd_u64(rd, run, "killed_by_signal", MP_RD_ABSENT, &v))
		fprintf(f, " (killed by signal %d)", (int)v);
	fputs(" |\n", f);
	limit_rows(t, f, rd);
	limit_change_rows(doc, f, rd);
	if (mp_rd_u64(rd, pk, "usage_bytes", MP_RD_ABSENT, &v) && mp_rd_u64(rd, pk, "t_ms", 0, &t_ms))
		fprintf(f, "| peak | %s at %.1f s (%s) |\n", mp_render_usize(v, b, sizeof(b)), t_ms / 1000.0,
			mp_rd_str(rd, pk, "usage_source", 0));
	if (mp_rd_u64(rd, run, "timeline_samples_late", MP_RD_ABSENT, &v) && v)
		fprintf(f, "| timeline | %" PRIu64 " samples late, %" PRIu64 " missed (longest gap "
			"%.1f s) |\n", v, mp_rd_u64v(rd, run, "timeline_samples_missed"),
			mp_rd_u64v(rd, run, "timeline_longest_gap_ms") / 1000.0);
	moment_rows(mp_rd_obj(rd, doc, "pinned", MP_RD_ABSENT), true, f, rd);
	fprintf(f, "| OOM kills | %d |\n\n", cJSON_GetArraySize(mp_rd_arr(rd, doc, "oom_kills", 0)));
}

static void record_events(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *kills = mp_rd_arr(rd, doc, "oom_kills", 0), *it;
	const cJSON *p = mp_rd_obj(rd, doc, "probe", MP_RD_ABSENT);
	char b[32];

	if (cJSON_GetArraySize(kills)) {
		fputs("## OOM kills\n\n| t (s) | task | usage | limit |\n|---:|---|---:|---:|\n", f);
		cJSON_ArrayForEach(it, kills) {
			bool at_kill;
			uint64_t u, lim;

			if (!mp_rd_is_obj(rd, it))
				return;
			u = mp_render_oom_usage(rd, it, &at_kill);
			fprintf(f, "| %.1f | ", mp_rd_u64v(rd, it, "t_ms") / 1000.0);
			who(f, it, rd);
			fprintf(f, " | %s %s | ", mp_render_usize(u, b, sizeof(b)),
				at_kill ? "at the kill" : "(last sample before it)");
			/* the limit then (documents before it: none) */
			if (mp_rd_u64(rd, it, "limit_bytes", MP_RD_NULL | MP_RD_ABSENT, &lim))
				fputs(mp_render_usize(lim, b, sizeof(b)), f);
			fputs(" |\n", f);
		}
		fputc('\n', f);
		cJSON_ArrayForEach(it, kills) {
			char line[PATH_MAX + 512];

			if (mp_rd_is_obj(rd, it) && mp_render_oom_line(rd, it, line, sizeof(line)))
				fprintf(f, "- %.1f s: %s\n", mp_rd_u64v(rd, it, "t_ms") / 1000.0, line);
		}
		fputc('\n', f);
	}
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

/* A timeline figure: the kernel's where the sample has it, else BPF's. */
static int64_t sample_cat(const cJSON *s, const char *cat, struct mp_rd *rd)
{
	const cJSON *st = mp_rd_obj(rd, s, "stat", 0);
	uint64_t u;
	int64_t v = 0;

	if (mp_rd_u64(rd, st, cat, MP_RD_ABSENT, &u))
		return (int64_t)u;
	mp_rd_s64(rd, mp_rd_obj(rd, s, "bpf_growth", MP_RD_ABSENT), cat, MP_RD_ABSENT, &v);
	return v;
}

/* About 20 rows evenly in time, each with its resolution (a folded row's
 * figures are its last sample's). */
static void record_timeline(const cJSON *doc, FILE *f, struct mp_rd *rd)
{
	const cJSON *tl = mp_rd_arr(rd, doc, "timeline", 0), *s;
	const cJSON *last = cJSON_GetArrayItem(tl, cJSON_GetArraySize(tl) - 1);
	size_t n = (size_t)cJSON_GetArraySize(tl), shown = 0;
	uint64_t next = 0, end = 0, samples, total = 0, folded = 0, lim;
	char b[7][32];

	fputs("## Timeline\n\n| t (s) | usage | limit | anon | file | kernel | faults/s | "
	      "resolution |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n", f);
	if (last && mp_rd_is_obj(rd, last))
		end = mp_rd_u64v(rd, last, "t_ms");
	cJSON_ArrayForEach(s, tl) {
		if (!mp_rd_is_obj(rd, s))
			return;
		uint64_t ms = mp_render_row_ms(rd, doc, s, &samples);

		total += samples;
		folded += samples > 1;
		if (!mp_render_row_due(&next, end, 20, mp_rd_u64v(rd, s, "t_ms")))
			continue;
		shown++;
		snprintf(b[5], sizeof(b[5]), ", %" PRIu64 " samples", samples);
		/* the limit in force (a folded row's: its last sample's); documents
		 * before it: empty */
		if (!mp_rd_u64(rd, s, "limit_bytes", MP_RD_NULL | MP_RD_ABSENT, &lim))
			b[6][0] = '\0';
		else
			mp_render_usize(lim, b[6], sizeof(b[6]));
		fprintf(f, "| %.1f | %s | %s | %s | %s | %s | %" PRIu64 " | %s%s |\n",
			mp_rd_u64v(rd, s, "t_ms") / 1000.0,
			mp_render_usize(mp_rd_u64v(rd, s, "usage_bytes"), b[0], sizeof(b[0])), b[6],
			mp_render_size(sample_cat(s, "anon", rd), b[1], sizeof(b[1])),
			mp_render_size(sample_cat(s, "file", rd), b[2], sizeof(b[2])),
			mp_render_size(sample_cat(s, "kernel", rd), b[3], sizeof(b[3])),
			mp_rd_u64v(rd, s, "faults_per_sec"), mp_render_ms(ms, b[4], sizeof(b[4])),
			samples > 1 ? b[5] : "");
	}
	if (shown < n)
		fprintf(f, "\n_%zu of %zu rows (%" PRIu64 " samples), evenly in time._\n", shown, n,
			total);
	if (folded)
		fputs("\n_A row of many samples is folded: its figures are its last sample's; "
		      "the JSON document has their min, max and mean._\n", f);
	fputc('\n', f);
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
