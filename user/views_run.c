// SPDX-License-Identifier: GPL-2.0
/* Views of a run (views.h): what stopped a probe short, why its threads
 * filled no faster, a recording's OOM kills and timeline rows, the
 * summary's limit, end and peak. */
#include "views.h"
#include "render.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mp_view_verdicts(const cJSON *r, struct mp_rd *rd, struct mp_view_verdicts *v)
{
	memset(v, 0, sizeof(*v));
	v->note = mp_rd_str(rd, r, "note", MP_RD_ABSENT);
	v->interrupted = mp_rd_bool(rd, r, "interrupted", 0);
	v->killed = mp_rd_u64(rd, r, "probe_killed_by_signal", MP_RD_NULL, &v->signal);
	v->oom_killed = mp_rd_bool(rd, r, "probe_oom_killed", 0);
	if (v->oom_killed)
		v->oom_limit = mp_rd_str(rd, r, "probe_oom_limit", 0);
}

/* Why the threads' CPUs were fewer than the threads, with the fix: no
 * more allowed, the CPUs busy elsewhere (a tenth of the time on a CPU
 * spent waiting for one is no scheduler's noise), or (no wait to speak
 * of) the kernel: the threads asleep in it, or, running, slowed by the
 * fault path's shared locks. Where the wait was not measured, no reason. */
static const char *fill_why(uint64_t threads, uint64_t allowed, double cpus, bool has_wait,
			    uint64_t cpu_ns, uint64_t wait_ns, char *buf, size_t len)
{
	if (allowed && allowed < threads)
		snprintf(buf, len, ": no more than %" PRIu64 " could run at once; give --threads %"
			 PRIu64 ", or let the probe run on more CPUs (taskset, cpuset)", allowed,
			 allowed);
	else if (!has_wait)
		snprintf(buf, len, "; the wait for a CPU was not measured (no "
			 "/proc/thread-self/schedstat)");
	else if (wait_ns >= cpu_ns / 10)
		snprintf(buf, len, ": the CPUs were busy elsewhere; give --threads 1 or run where "
			 "more CPUs are free");
	else if (cpus < 0.75 * (double)threads)
		snprintf(buf, len, ": off a CPU without waiting for one, so asleep in the kernel "
			 "(reclaim, a lock) or done before the chunk's other parts");
	else
		snprintf(buf, len, ": the time is the kernel's page-fault path (charge, LRU and "
			 "zone locks), not waiting for a CPU");
	return buf;
}

void mp_view_fill(const cJSON *p, struct mp_rd *rd, struct mp_view_fill *v)
{
	uint64_t threads = mp_rd_u64v(rd, p, "threads"), fill_ns = mp_rd_u64v(rd, p, "fill_ns");
	uint64_t cpu = 0, wait = 0, allowed = 0;
	bool has_wait;
	char on[32], off[32], why[240], where[48] = "";
	double cpus;

	memset(v, 0, sizeof(*v));
	if (threads < 2 || !fill_ns ||
	    !mp_rd_u64(rd, p, "fill_cpu_ns", MP_RD_NULL | MP_RD_ABSENT, &cpu))
		return;
	has_wait = mp_rd_u64(rd, p, "fill_runqueue_wait_ns", MP_RD_NULL | MP_RD_ABSENT, &wait);
	if (mp_rd_u64(rd, p, "fill_cpus_allowed", MP_RD_NULL | MP_RD_ABSENT, &allowed) &&
	    allowed < threads)
		snprintf(where, sizeof(where), " on %" PRIu64 " allowed CPU%s", allowed,
			 allowed == 1 ? "" : "s");
	cpus = (double)cpu / (double)fill_ns;
	mp_render_ms(cpu / 1000000, on, sizeof(on));
	if (has_wait)
		snprintf(off, sizeof(off), ", waiting for one %s",
			 mp_render_ms(wait / 1000000, (char[32]){ 0 }, 32));
	else
		off[0] = '\0';
	snprintf(v->line, sizeof(v->line), "%" PRIu64 " threads%s ran %.1f CPUs on average (on a "
		 "CPU %s%s)%s", threads, where, cpus, on, off,
		 fill_why(threads, allowed, cpus, has_wait, cpu, wait, why, sizeof(why)));
	v->shown = true;
}

bool mp_view_oom_victim(const cJSON *kill, struct mp_rd *rd, uint64_t *pid, const char **comm)
{
	*pid = 0;
	*comm = NULL;
	if (!mp_rd_u64(rd, kill, "pid", MP_RD_NULL, pid) || !*pid) {
		*pid = 0;
		return false;
	}
	*comm = mp_rd_str(rd, kill, "comm", 0);
	return true;
}

int mp_view_ooms(const cJSON *doc, struct mp_rd *rd, struct mp_view_ooms *v)
{
	const cJSON *kills = mp_rd_arr(rd, doc, "oom_kills", 0), *it;

	memset(v, 0, sizeof(*v));
	if (!mp_rd_ok(rd) || !(v->rows = mp_view_rows(kills, sizeof(*v->rows), rd)))
		return -1;
	cJSON_ArrayForEach(it, kills) {
		struct mp_view_oom *k = &v->rows[v->n];

		if (!mp_rd_is_obj(rd, it))
			break;
		k->obj = it;
		k->t_ms = mp_rd_u64v(rd, it, "t_ms");
		k->victim_known = mp_view_oom_victim(it, rd, &k->pid, &k->comm);
		k->usage = mp_render_oom_usage(rd, it, &k->at_kill);
		k->has_limit = mp_rd_u64(rd, it, "limit_bytes", MP_RD_NULL | MP_RD_ABSENT, &k->limit);
		v->n++;
	}
	mp_rd_u64(rd, doc, "oom_kills_not_listed", MP_RD_ABSENT, &v->not_listed);
	if (mp_rd_ok(rd))
		return 0;
	mp_view_ooms_free(v);
	return -1;
}

void mp_view_ooms_free(struct mp_view_ooms *v)
{
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

bool mp_view_tl_cat(const cJSON *row, const char *cat, struct mp_rd *rd, int64_t *v)
{
	uint64_t u;

	*v = 0;
	if (mp_rd_u64(rd, mp_rd_obj(rd, row, "stat", 0), cat, MP_RD_ABSENT, &u)) {
		*v = (int64_t)u;
		return true;
	}
	return mp_rd_s64(rd, mp_rd_obj(rd, row, "bpf_growth", MP_RD_ABSENT), cat, MP_RD_ABSENT, v);
}

/* A column of the short table: the kernel's figure or BPF's, one of them
 * there (a row with neither is a damaged document, said as BPF's missing). */
static int64_t tl_col(const cJSON *s, const char *cat, struct mp_rd *rd)
{
	int64_t v = 0;

	if (!mp_view_tl_cat(s, cat, rd, &v))
		mp_rd_s64(rd, mp_rd_obj(rd, s, "bpf_growth", MP_RD_ABSENT), cat, 0, &v);
	return v;
}

/* Row r of timeline row s: its figures, its resolution, its categories. */
static void tl_row(const cJSON *doc, const cJSON *s, struct mp_rd *rd, struct mp_view_tl_row *r)
{
	const cJSON *mn = mp_rd_obj(rd, s, "min", MP_RD_ABSENT);
	const cJSON *mx = mp_rd_obj(rd, s, "max", MP_RD_ABSENT);

	r->obj = s;
	r->t_ms = mp_rd_u64v(rd, s, "t_ms");
	r->usage = mp_rd_u64v(rd, s, "usage_bytes");
	r->has_limit = mp_rd_u64(rd, s, "limit_bytes", MP_RD_NULL | MP_RD_ABSENT, &r->limit);
	r->faults_per_sec = mp_rd_u64v(rd, s, "faults_per_sec");
	r->resolution_ms = mp_render_row_ms(rd, doc, s, &r->samples);
	r->usage_min = mn ? mp_rd_u64v(rd, mn, "usage_bytes") : r->usage;
	r->usage_max = mx ? mp_rd_u64v(rd, mx, "usage_bytes") : r->usage;
	r->folded = mx != NULL;
	r->anon = tl_col(s, "anon", rd);
	r->file = tl_col(s, "file", rd);
	r->kernel = tl_col(s, "kernel", rd);
}

int mp_view_timeline(const cJSON *doc, struct mp_rd *rd, struct mp_view_timeline *v)
{
	const cJSON *tl = mp_rd_arr(rd, doc, "timeline", 0), *s;
	const cJSON *last = cJSON_GetArrayItem(tl, cJSON_GetArraySize(tl) - 1);
	uint64_t next = 0, end = 0;

	memset(v, 0, sizeof(*v));
	v->limit_column = mp_rd_item(rd, doc, "limit", MP_RD_ABSENT) != NULL;
	if (!mp_rd_ok(rd) || !(v->rows = mp_view_rows(tl, sizeof(*v->rows), rd)))
		return -1;
	if (last && mp_rd_is_obj(rd, last))
		end = mp_rd_u64v(rd, last, "t_ms");
	cJSON_ArrayForEach(s, tl) {
		struct mp_view_tl_row *r = &v->rows[v->n];

		if (!mp_rd_is_obj(rd, s))
			break;
		tl_row(doc, s, rd, r);
		/* about MP_VIEW_TL_ROWS rows, whatever the length, evenly in time */
		r->due = mp_render_row_due(&next, end, MP_VIEW_TL_ROWS, r->t_ms);
		v->ndue += r->due;
		v->samples += r->samples;
		v->folded += r->samples > 1;
		v->n++;
	}
	if (mp_rd_ok(rd))
		return 0;
	mp_view_timeline_free(v);
	return -1;
}

void mp_view_timeline_free(struct mp_view_timeline *v)
{
	free(v->rows);
	memset(v, 0, sizeof(*v));
}

void mp_view_limits(const cJSON *cg, struct mp_rd *rd, struct mp_view_limits *v)
{
	memset(v, 0, sizeof(*v));
	v->limit = mp_rd_u64v(rd, cg, "effective_limit_bytes");
	v->limit_from = mp_rd_str(rd, cg, "effective_limit_from", 0);
	v->has_throttle = mp_rd_u64(rd, cg, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT,
				    &v->throttle);
	if (v->has_throttle) {
		v->throttle_kind = mp_rd_str(rd, cg, "throttle_kind", MP_RD_NULL | MP_RD_ABSENT);
		v->throttle_from = mp_rd_str(rd, cg, "throttle_from", MP_RD_NULL | MP_RD_ABSENT);
	}
	v->has_high = mp_rd_item(rd, cg, "high_bytes", MP_RD_ABSENT) != NULL;
	v->high_null = v->has_high && !mp_rd_u64(rd, cg, "high_bytes", MP_RD_NULL, &v->high);
}

void mp_view_run(const cJSON *doc, struct mp_rd *rd, struct mp_view_run *v)
{
	const cJSON *run = mp_rd_obj(rd, doc, "run", 0), *pk = mp_rd_obj(rd, doc, "peak", 0);

	memset(v, 0, sizeof(*v));
	v->ended_by = mp_rd_str(rd, run, "ended_by", 0);
	v->duration_ms = mp_rd_u64v(rd, run, "duration_ms");
	v->has_exit = mp_rd_u64(rd, run, "exit_status", MP_RD_ABSENT, &v->exit_status);
	if (!v->has_exit)
		v->has_signal = mp_rd_u64(rd, run, "killed_by_signal", MP_RD_ABSENT, &v->signal);
	/* an empty peak: not one sample was taken */
	v->has_peak = mp_rd_u64(rd, pk, "usage_bytes", MP_RD_ABSENT, &v->peak);
	if (v->has_peak) {
		v->peak_t_ms = mp_rd_u64v(rd, pk, "t_ms");
		v->peak_source = mp_rd_str(rd, pk, "usage_source", 0);
	}
	/* said when the sampler did not get the CPU in time (older
	 * documents: nothing) */
	if (mp_rd_u64(rd, run, "timeline_samples_late", MP_RD_ABSENT, &v->late) && v->late) {
		mp_rd_u64(rd, run, "timeline_samples_missed", MP_RD_ABSENT, &v->missed);
		mp_rd_u64(rd, run, "timeline_longest_gap_ms", MP_RD_ABSENT, &v->longest_gap_ms);
	}
	v->ooms = cJSON_GetArraySize(mp_rd_arr(rd, doc, "oom_kills", 0));
}

void mp_view_nine(const cJSON *r, struct mp_rd *rd, struct mp_view_nine *v)
{
	static const char *const labels[MP_VIEW_NINE_ROWS] = {
		"usage before", "allocated", "usage at the peak", "usage after", "overhead",
	};
	static const char *const keys[MP_VIEW_NINE_ROWS] = {
		"usage_before_bytes", "allocated_bytes", "usage_peak_bytes", "usage_after_bytes",
		"overhead_bytes",
	};

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < MP_VIEW_NINE_ROWS; i++) {
		v->rows[i].label = labels[i];
		if (i == MP_VIEW_NINE_ROWS - 1) /* the overhead may be below 0 */
			mp_render_size(mp_rd_s64v(rd, r, keys[i]), v->rows[i].value,
				       sizeof(v->rows[i].value));
		else
			mp_render_usize(mp_rd_u64v(rd, r, keys[i]), v->rows[i].value,
					sizeof(v->rows[i].value));
	}
	snprintf(v->rows[1].extra, sizeof(v->rows[1].extra), " (%" PRIu64 " chunks)",
		 mp_rd_u64v(rd, r, "probe_chunks"));
	snprintf(v->rows[4].extra, sizeof(v->rows[4].extra), " (peak − before − allocated)");
	v->rows[4].strong = true;
}
