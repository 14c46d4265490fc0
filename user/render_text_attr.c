// SPDX-License-Identifier: GPL-2.0
/* The text of an "attribution" object, as probe and record print it. */
#include "render.h"
#include "util.h"
#include "views.h"
#include "attr.h" /* mp_lost_names: the documents' keys of events_lost */

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

/* A boolean member that is absent unless true. */
static bool flag(struct mp_rd *rd, const cJSON *o, const char *name)
{
	return mp_rd_item(rd, o, name, MP_RD_ABSENT) && mp_rd_bool(rd, o, name, 0);
}

/* Who: "comm[pid]" ("comm[pid] (moved out)" for a process that left the
 * target, "(exited)" for one gone), or the comm alone for the rest and
 * other contexts. */
static void who_of(struct mp_rd *rd, const cJSON *tk, char *buf, size_t len)
{
	uint64_t pid = 0;
	const char *comm = mp_rd_str(rd, tk, "comm", 0);
	bool moved = flag(rd, tk, "moved_out"), exited = flag(rd, tk, "exited");
	uint64_t host = 0;

	mp_rd_u64(rd, tk, "pid", MP_RD_NULL, &pid);
	/* in a container: the host's pid beside the container's */
	if (pid > 0 && mp_rd_u64(rd, tk, "host_pid", MP_RD_ABSENT, &host) && host != pid)
		snprintf(buf, len, "%s[%d, host %d]%s", comm, (int)pid, (int)host,
			 moved ? " (moved out)" : exited ? " (exited)" : "");
	else if (pid > 0)
		snprintf(buf, len, "%s[%d]%s", comm, (int)pid, moved ? " (moved out)" :
			 exited ? " (exited)" : "");
	else
		snprintf(buf, len, "%s", comm);
}

/* "comm[pid]", or in a container "comm[pid, host H]", as who_of, for a
 * stack's or a charge's process, whose pid is a number ([0] included) */
static const char *pid_of(struct mp_rd *rd, const cJSON *o, char *buf, size_t len)
{
	uint64_t pid = mp_rd_u64v(rd, o, "pid"), host = 0;
	const char *comm = mp_rd_str(rd, o, "comm", 0);

	if (mp_rd_u64(rd, o, "host_pid", MP_RD_ABSENT, &host) && host != pid)
		snprintf(buf, len, "%s[%d, host %d]", comm, (int)pid, (int)host);
	else
		snprintf(buf, len, "%s[%d]", comm, (int)pid);
	return buf;
}

/* Do the tasks' figures come from /proc (no BPF)? */
static bool tasks_from_proc(const cJSON *a, struct mp_rd *rd)
{
	const cJSON *it, *tk;

	cJSON_ArrayForEach(it, mp_rd_arr(rd, a, "categories", 0))
		cJSON_ArrayForEach(tk, mp_rd_arr(rd, it, "tasks", 0)) {
			const char *src = mp_rd_is_obj(rd, tk) ?
					  mp_rd_str(rd, tk, "source", MP_RD_ABSENT) : NULL;

			if (src && !strcmp(src, "proc"))
				return true;
		}
	return false;
}

/* The processes' own figures (/proc's, without BPF), the largest first. */
static void processes(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *pr = mp_rd_obj(rd, a, "processes", MP_RD_ABSENT), *it;
	char b[6][32];
	int n = 0;

	if (!pr)
		return;
	fprintf(f, "\nProcesses (/proc at the growth's end, %" PRIu64 " seen, %" PRIu64 " exited; "
		"kernel stacks of %s each: %s):\n", mp_rd_u64v(rd, pr, "count"),
		mp_rd_u64v(rd, pr, "exited"),
		mp_fmt_bytes(mp_rd_u64v(rd, pr, "stack_size_bytes"), b[0], sizeof(b[0])),
		mp_rd_str(rd, pr, "stack_size_source", 0));
	cJSON_ArrayForEach(it, mp_rd_arr(rd, pr, "top", 0)) {
		const char *state;
		char who[48];

		if (n++ >= 5 || !mp_rd_is_obj(rd, it))
			break;
		state = mp_rd_str(rd, it, "state", 0);
		snprintf(who, sizeof(who), "%s[%d]", mp_rd_str(rd, it, "comm", 0),
			 (int)mp_rd_u64v(rd, it, "pid"));
		fprintf(f, "  %-24s anon %s, file %s, shmem %s, pagetables %s, stacks %s%s%s  %.60s\n",
			who, mp_fmt_bytes(mp_rd_u64v(rd, it, "rss_anon_bytes"), b[1], 32),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "rss_file_bytes"), b[2], 32),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "rss_shmem_bytes"), b[3], 32),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "pagetables_bytes"), b[4], 32),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "kernel_stack_bytes"), b[5], 32),
			strcmp(state, "running") ? " " : "", strcmp(state, "running") ? state : "",
			mp_rd_str(rd, it, "cmdline", 0));
	}
}

static void category_rows(const struct mp_view_cats *v, int gw, FILE *f, struct mp_rd *rd)
{
	char b3[32];

	for (int i = 0; i < v->n; i++) {
		const struct mp_view_cat *c = &v->rows[i];
		char tasks[320];

		snprintf(tasks, sizeof(tasks), "%s", c->note);
		if (c->reserve)
			mp_appendf(tasks, sizeof(tasks), "%s" MP_VIEW_RESERVE "%s",
				   tasks[0] ? "; " : "", mp_fmt_sbytes(c->reserve, b3, sizeof(b3)));
		for (int t = 0; t < c->ntasks; t++) {
			char who[48];

			who_of(rd, c->tasks[t].obj, who, sizeof(who));
			mp_appendf(tasks, sizeof(tasks), "%s%s %s", t ? ", " : "", who,
				   mp_fmt_sbytes(c->tasks[t].bytes, b3, sizeof(b3)));
		}
		fprintf(f, "  %-20s %*s %12s  %s\n", c->name, gw, c->growth, c->left, tasks);
	}
}

/* "  rows of 10003 processes, 10000 of them exited (kept)": when some
 * exited (older documents: nothing) */
static void process_rows(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	uint64_t n, gone;

	if (mp_rd_u64(rd, a, "processes_counted", MP_RD_ABSENT, &n) &&
	    mp_rd_u64(rd, a, "processes_exited", MP_RD_ABSENT, &gone) && gone) {
		if (n == 1) /* not "rows of 1 processes, 1 of them" */
			fputs("  (rows of 1 process, which exited: its rows kept, its shares "
			      "marked exited)\n", f);
		else
			fprintf(f, "  (rows of %" PRIu64 " processes, %" PRIu64 " of them exited: "
				"their rows kept, their shares marked exited)\n", n, gone);
	}
}

static void categories(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_cats v;
	char b1[32];
	int gw = 12;

	if (mp_view_cats(a, rd, mp_fmt_sbytes, 0, &v))
		return;
	fprintf(f, "\nWhere the cgroup's growth went (usage %s%s %s):\n", v.measured >= 0 ? "+" : "",
		mp_fmt_sbytes(v.measured, b1, sizeof(b1)), v.span);
	/* the growth column as wide as its widest cell ("~1.5 MiB ±4.0 KiB"
	 * counts its "±" as one column: two bytes) */
	for (int i = 0; i < v.n; i++) {
		int w = (int)strlen(v.rows[i].growth) - (strstr(v.rows[i].growth, "\u00b1") ? 1 : 0);

		if (w > gw)
			gw = w;
	}
	fprintf(f, "  %-20s %*s %12s  %s\n", "category", gw, "growth", "left after", "top tasks");
	category_rows(&v, gw, f, rd);
	fprintf(f, "  %-20s %12s   (%s)\n", "attributed",
		mp_fmt_sbytes(v.attributed, b1, sizeof(b1)), v.attributed_as);
	if (v.unmapped_shown)
		fprintf(f, "  %-20s %12s   (out of anon, still charged: being freed, or held by "
			"a pipe or a pin)\n", "anon unmapped", mp_fmt_sbytes(v.unmapped, b1, sizeof(b1)));
	if (v.share_shown)
		fprintf(f, "  %-20s %12s   (%.1f%% of the growth)\n", "unattributed",
			mp_fmt_sbytes(v.unattributed, b1, sizeof(b1)), v.unattributed_pct);
	else
		fprintf(f, "  %-20s %12s   (no share: the growth is under 1 MiB)\n",
			"unattributed", mp_fmt_sbytes(v.unattributed, b1, sizeof(b1)));
	fputs("  (file includes shmem; kernel includes pagetables, kernel_stack, slab, percpu, "
	      "vmalloc and kernel_other)\n", f);
	mp_view_cats_free(&v);
	process_rows(a, f, rd);
	if (tasks_from_proc(a, rd))
		fputs("  (top tasks from /proc at each snapshot, approximate: a page several "
		      "processes map counts in each)\n", f);
}

static void faults_and_charges(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	const cJSON *pf = mp_rd_obj(rd, a, "page_faults", 0);
	const cJSON *ch = mp_rd_obj(rd, a, "memcg_charges", 0), *it;
	const char *per_gib = mp_rd_num(rd, pf, "probe_per_gib_allocated", MP_RD_NULL | MP_RD_ABSENT);
	char b1[32], who[128];
	int n = 0;

	fprintf(f, "\nPage faults: %" PRIu64 " in the target", mp_rd_u64v(rd, pf, "total"));
	if (per_gib)
		fprintf(f, "; the probe's: %" PRIu64 ", %s per GiB it allocated",
			mp_rd_u64v(rd, pf, "probe"), per_gib);
	fputc('\n', f);

	if (!mp_rd_str(rd, ch, "source", MP_RD_NULL))
		return;
	fprintf(f, "Charges asked of the memcg (gross, uncharges not subtracted): %s",
		mp_fmt_bytes(mp_rd_u64v(rd, ch, "gross_bytes"), b1, sizeof(b1)));
	cJSON_ArrayForEach(it, mp_rd_arr(rd, ch, "by_task", 0)) {
		if (n++ >= 3 || !mp_rd_is_obj(rd, it))
			break;
		fprintf(f, "%s%s %s", n == 1 ? ": " : ", ", pid_of(rd, it, who, sizeof(who)),
			mp_fmt_bytes(mp_rd_u64v(rd, it, "bytes"), b1, sizeof(b1)));
	}
	fputc('\n', f);
}

/* A path's top stack: who allocated it, and its first frames (views.h). */
static void stack(const struct mp_view_path *p, FILE *f, struct mp_rd *rd)
{
	char b[32], b2[32], who[128];

	if (!p->stack)
		return;
	fprintf(f, "      %s net (%s allocated) by %s\n",
		mp_fmt_sbytes(mp_rd_s64v(rd, p->stack, "bytes"), b, sizeof(b)),
		mp_fmt_bytes(mp_rd_u64v(rd, p->stack, "alloc_bytes"), b2, sizeof(b2)),
		pid_of(rd, p->stack, who, sizeof(who)));
	for (int i = 0; i < p->nframes; i++)
		fprintf(f, "        %s\n", p->frames[i]);
}

static void kernel_paths(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	struct mp_view_paths v;
	char b1[32], b2[32];

	fputs("\nKernel paths (kernel page allocations with a stack, net of frees):\n", f);
	if (mp_view_paths(a, rd, 0, &v))
		return;
	if (v.n == 0)
		fprintf(f, "  none recorded (%s)\n", mp_view_paths_none(a, rd));
	for (int i = 0; i < v.n; i++) {
		fprintf(f, "  %-20s %12s net, %s allocated\n", v.rows[i].path,
			mp_fmt_sbytes(v.rows[i].bytes, b1, sizeof(b1)),
			mp_fmt_bytes(v.rows[i].alloc, b2, sizeof(b2)));
		stack(&v.rows[i], f, rd);
	}
	if (v.nnc)
		fputs("\nNot charged to the cgroup (kernel pages allocated in its tasks without "
		      "__GFP_ACCOUNT):\n", f);
	for (int i = 0; i < v.nnc; i++)
		fprintf(f, "  %-20s %12s allocated\n", v.nc[i].path,
			mp_fmt_bytes(v.nc[i].alloc, b1, sizeof(b1)));
	mp_view_paths_free(&v);
}

static void missing(const struct mp_view_hooks *v, FILE *f)
{
	if (v->nmissing == 0)
		fputs("attribution missing: none\n", f);
	for (int i = 0; i < v->nmissing; i++)
		fprintf(f, "attribution missing: %s\n", v->missing[i]);
}

/* The losses, and what the recursion misses among them can have changed
 * (a document without the bound, from before it was kept, says nothing of
 * it). */
static void events_lost(const cJSON *o, FILE *f, struct mp_rd *rd)
{
	uint64_t misses = 0, bound = 0, v;
	const char *sep = " (";
	char b[32];

	fprintf(f, "events lost: %" PRIu64, mp_rd_u64v(rd, o, "total"));
	/* which map overflowed, and the stack walks that failed, by name */
	for (int l = 0; l < MP_NR_LOST; l++)
		if (mp_rd_u64(rd, o, mp_lost_names[l], MP_RD_ABSENT, &v) && v) {
			fprintf(f, "%s%s %" PRIu64, sep, mp_lost_names[l], v);
			sep = ", ";
		}
	mp_rd_u64(rd, o, "recursion_misses", 0, &misses);
	if (misses) {
		fprintf(f, "%s%" PRIu64 " runs skipped by the kernel's recursion guard", sep, misses);
		if (mp_rd_u64(rd, o, "recursion_miss_bound_bytes", MP_RD_ABSENT, &bound))
			fprintf(f, ": at most %s of the figures", mp_render_usize(bound, b, sizeof(b)));
		sep = ", ";
	}
	fputs(sep[0] == ',' ? ")\n" : "\n", f);
}

static void hooks(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	bool bpf = mp_rd_item(rd, a, "hooks", MP_RD_ABSENT) != NULL;
	struct mp_view_hooks v;

	if (mp_view_hooks(a, rd, &v))
		return;
	fputs(bpf ? "\nHooks:\n" : "\nHooks: none\n", f);
	for (int i = 0; i < v.n; i++)
		fprintf(f, "  %-20s %s\n", v.rows[i].name, v.rows[i].hook);
	missing(&v, f);
	mp_view_hooks_free(&v);
	/* none without a BPF session */
	if (bpf)
		events_lost(mp_rd_obj(rd, a, "events_lost", 0), f, rd);
}

/* "Copy-on-write: redis-server[812] copied 160.0 MiB of pages it shared
 * with a forked child ...": who paid for a fork's shared pages (documents
 * before it say nothing; not looked for: why). */
static void who_cow(FILE *f, const struct mp_view_cow_task *t, struct mp_rd *rd)
{
	(void)rd;
	fprintf(f, "%s[%d]", t->comm, (int)t->pid);
}

static void copy_on_write(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	static const struct mp_view_cow_words w = { mp_fmt_sbytes, "", "\n", who_cow };

	mp_view_cow_say(a, &w, f, rd);
}

void mp_text_attribution(const cJSON *a, FILE *f, struct mp_rd *rd)
{
	if (!mp_rd_item(rd, a, "hooks", MP_RD_ABSENT)) {
		hooks(a, f, rd); /* no BPF session at all: only why */
		return;
	}
	categories(a, f, rd);
	processes(a, f, rd);
	faults_and_charges(a, f, rd);
	copy_on_write(a, f, rd);
	kernel_paths(a, f, rd);
	hooks(a, f, rd);
}
