// SPDX-License-Identifier: GPL-2.0
/* The probe document, built from a probe run and its attribution session. */
#include "probe_doc.h"
#include "doc.h"
#include "json.h"
#include "ksyms.h"
#include "overhead.h"
#include "attribution.h"
#include "render.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void mp_probe_fields_json(cJSON *o, const struct mp_probe_fields *f)
{
	int64_t over = mp_probe_overhead_bytes(f);

	mp_json_add_u64(o, "cgroup_limit_bytes", f->cgroup_limit_bytes);
	mp_json_add_u64(o, "usage_before_bytes", f->usage_before_bytes);
	mp_json_add_u64(o, "allocated_bytes", f->allocated_bytes);
	mp_json_add_fixed(o, "allocated_gib", (double)f->allocated_bytes / MP_GIB, 2);
	mp_json_add_u64(o, "usage_peak_bytes", f->usage_peak_bytes);
	mp_json_add_u64(o, "usage_after_bytes", f->usage_after_bytes);
	mp_json_add_s64(o, "overhead_bytes", over);
	mp_json_add_fixed(o, "overhead_gib", (double)over / MP_GIB, 2);
	mp_json_add_u64(o, "probe_chunks", f->probe_chunks);
}

/* OOM kills seen while the probe ran, other than the probe's own. */
struct oom_list {
	pid_t probe_pid;
	int n;
	struct mp_oom_event ev[16];
};

static void collect_oom(const struct mp_oom_event *e, void *arg)
{
	struct oom_list *l = arg;

	if ((pid_t)e->pid != l->probe_pid && l->n < 16)
		l->ev[l->n++] = *e;
}

/* OOM kills in the target while the probe ran: the probe's own, or (what
 * must not happen) the workload's, said on stderr too. */
static void workload_ooms(cJSON *doc, const struct mp_probe_doc_in *in)
{
	const struct mp_probe_result *res = in->res;
	struct oom_list ol = { .probe_pid = res->child_pid };
	const struct mp_hook *oh = in->attr ? &mp_attr_hooks(in->attr)[MP_CONCERN_OOM] : NULL;

	if (!oh || !oh->hook[0] || oh->polled) {
		/* no oom:mark_victim: the target's counter, the probe's own
		 * kill taken out, and no names */
		uint64_t n = mp_cgroup_oom_kills(in->target) - in->target_oom0;

		n -= n && res->oom_killed;
		cJSON_AddNullToObject(doc, "workload_oom_kills");
		mp_json_add_u64(doc, "workload_oom_kill_count", n);
		if (n)
			fprintf(stderr, "memprobe probe: the OOM killer killed %" PRIu64 " process(es) "
				"in the target while the probe ran\n", n);
	} else {
		cJSON *arr = cJSON_AddArrayToObject(doc, "workload_oom_kills");

		mp_attr_poll_oom(in->attr, 0, collect_oom, &ol);
		for (int i = 0; i < ol.n; i++) {
			cJSON *e = cJSON_CreateObject();

			mp_json_add_pid(e, ol.ev[i].pid, ol.ev[i].host_pid != ol.ev[i].pid ?
							    ol.ev[i].host_pid : 0);
			cJSON_AddStringToObject(e, "comm", ol.ev[i].comm);
			cJSON_AddItemToArray(arr, e);
			fprintf(stderr, "memprobe probe: the OOM killer killed %s[%u] in the target "
				"while the probe ran\n", ol.ev[i].comm, ol.ev[i].pid);
		}
	}
}

void mp_probe_overhead_json(cJSON *obj, struct mp_attr *attr, const struct mp_probe_result *res,
			    const struct mp_overhead_snaps *ovh, const struct mp_pinned *pinned)
{
	struct mp_overhead_doc_in d = {
		.overhead_bytes = mp_probe_overhead_bytes(&res->f),
		.left_bytes = (int64_t)res->f.usage_after_bytes - (int64_t)res->f.usage_before_bytes,
		.allocated_bytes = res->f.allocated_bytes, .probe_pid = (uint32_t)res->child_pid,
		.snaps = ovh, .baseline_ns = res->baseline_ns,
		.baseline_samples = res->baseline_samples,
		.roles = pinned ? pinned->roles : NULL, .nroles = pinned ? pinned->nroles : 0,
	};
	cJSON *o;

	if (!attr || !ovh)
		return;
	for (int k = 0; k < MP_NR_CATS; k++) {
		d.polled[k] = mp_attr_cat_polled(attr, k);
		d.rows[k] = mp_attr_cat_rows(attr, k);
	}
	d.have_kernel_total = mp_attr_cat_available(attr, MP_CAT_KERNEL, NULL);
	{
		uint32_t period;
		const char *fn, *why;

		if (mp_attr_cow(attr, &period, &fn, &why))
			d.cow_page_bytes = (uint64_t)sysconf(_SC_PAGESIZE);
	}
	if ((o = mp_overhead_doc(&d)))
		cJSON_AddItemToObject(obj, "overhead", o);
}

/* Where the probe aimed, why it stopped, throttling, the page cache reclaimed. */
static void probe_stop_json(cJSON *p, const struct mp_probe_doc_in *in)
{
	const struct mp_probe_result *res = in->res;

	cJSON_AddStringToObject(p, "aim", res->aim ? res->aim : "limit");
	cJSON_AddStringToObject(p, "aim_why", res->aim_why);
	mp_json_add_u64(p, "stop_at_bytes", res->stop_at_bytes);
	cJSON_AddStringToObject(p, "stop_at_from", res->stop_at_from);
	cJSON_AddStringToObject(p, "stop_reason", res->stop_reason ? res->stop_reason : "error");
	cJSON_AddBoolToObject(p, "throttled", res->throttled);
	cJSON_AddStringToObject(p, "throttle_signal",
				res->throttle_signal ? res->throttle_signal : "none");
	if (res->have_high_events)
		mp_json_add_u64(p, "throttle_high_events", res->high_events);
	else
		cJSON_AddNullToObject(p, "throttle_high_events");
	if (res->have_pressure)
		mp_json_add_u64(p, "throttle_pressure_some_us", res->pressure_some_us);
	else
		cJSON_AddNullToObject(p, "throttle_pressure_some_us");
	cJSON_AddBoolToObject(p, "reclaim_cache", in->reclaim_cache);
	if (res->have_file) {
		mp_json_add_u64(p, "file_before_bytes", res->file_before_bytes);
		mp_json_add_u64(p, "file_at_stop_bytes", res->file_at_stop_bytes);
		mp_json_add_u64(p, "cache_reclaimed_bytes", res->file_before_bytes -
				MP_MIN(res->file_before_bytes, res->file_at_stop_bytes));
	} else {
		cJSON_AddNullToObject(p, "file_before_bytes");
		cJSON_AddNullToObject(p, "file_at_stop_bytes");
		cJSON_AddNullToObject(p, "cache_reclaimed_bytes");
	}
	if (res->throttled)
		fprintf(stderr, "memprobe probe: throttled at memory.high (%s): stopped at %"
			PRIu64 " bytes allocated instead of crawling\n", in->target->throttle_from,
			res->f.allocated_bytes);
}

/* The fill threads' time on a CPU and waiting for one, and the CPUs they
 * could use: null where not measured (no chunk filled; no schedstat). */
static void fill_sched_json(cJSON *p, const struct mp_probe_result *res)
{
	mp_json_add_u64_or_null(p, "fill_cpu_ns", res->have_fill_cpu, res->fill_cpu_ns);
	mp_json_add_u64_or_null(p, "fill_runqueue_wait_ns", res->have_fill_wait, res->fill_wait_ns);
	mp_json_add_u64_or_null(p, "fill_cpus_allowed", res->fill_cpus_allowed != 0,
				res->fill_cpus_allowed);
}

/*
 * The fill went past its stop point: the target's peak above the usage it
 * was to stop at (where that is the target's own). The bounds are checked
 * before each chunk, so what the workload and the kernel add meanwhile
 * (and in place no limit of the probe's own holds) can carry it over.
 * Said on standard error and in the document's note.
 */
static void overshoot_note(cJSON *doc, const struct mp_probe_doc_in *in)
{
	const struct mp_probe_result *res = in->res;
	char note[PATH_MAX + 400], b1[32], b2[32], b3[32];

	if (!res->f.probe_chunks || strcmp(res->stop_at_from, in->target->dir) ||
	    res->f.usage_peak_bytes <= res->stop_at_bytes)
		return;
	snprintf(note, sizeof(note), "the fill overshot its stop point: the target's peak %s is "
		 "%s past the stop at %s (%s)%s", mp_fmt_bytes(res->f.usage_peak_bytes, b1,
		 sizeof(b1)), mp_fmt_bytes(res->f.usage_peak_bytes - res->stop_at_bytes, b2,
		 sizeof(b2)), mp_fmt_bytes(res->stop_at_bytes, b3, sizeof(b3)), res->stop_at_from,
		 res->in_target ? "; in place no limit of the probe's own holds it: the bounds "
		 "are checked before each chunk only" : "");
	fprintf(stderr, "memprobe probe: %s\n", note);
	cJSON_AddStringToObject(doc, "note", note);
}

cJSON *mp_probe_doc(const struct mp_probe_doc_in *in)
{
	const struct mp_probe_result *res = in->res;
	char b1[32], b2[32];

	/* the header, then the brief's nine fields, then the rest */
	cJSON *doc = mp_doc_new("probe", in->host);
	mp_probe_fields_json(doc, &res->f);
	/* the overhead explained, before the snapshots become differences */
	mp_probe_overhead_json(doc, in->attr, res, in->ovh,
			       in->pinned && in->pinned->taken ? in->pinned : NULL);
	cJSON_AddBoolToObject(doc, "interrupted", res->interrupted);
	cJSON_AddBoolToObject(doc, "probe_oom_killed", res->oom_killed);
	if (res->killed_by_signal)
		cJSON_AddNumberToObject(doc, "probe_killed_by_signal", res->killed_by_signal);
	else
		cJSON_AddNullToObject(doc, "probe_killed_by_signal");
	workload_ooms(doc, in);
	{
		cJSON *t = mp_cgroup_json(in->target), *p = cJSON_CreateObject();

		cJSON_AddBoolToObject(t, "created_by_memprobe", in->target_created);
		if (in->target_why)
			cJSON_AddStringToObject(t, "chosen_why", in->target_why);
		cJSON_AddItemToObject(doc, "target", t);
		cJSON_AddStringToObject(p, "cgroup", res->cgroup_dir);
		cJSON_AddBoolToObject(p, "in_target", res->in_target);
		if (res->in_target) {
			cJSON_AddStringToObject(p, "in_target_why", res->in_target_why);
			cJSON_AddStringToObject(p, "in_target_reason", res->in_target_reason);
		}
		mp_json_add_u64(p, "limit_bytes", res->probe_limit_bytes);
		mp_json_add_u64(p, "chunk_bytes", in->chunk);
		mp_json_add_u64(p, "margin_bytes", in->margin);
		cJSON_AddStringToObject(p, "thp", in->thp);
		cJSON_AddNumberToObject(p, "threads", in->threads);
		cJSON_AddStringToObject(p, "touch", in->populate ? "MADV_POPULATE_WRITE" : "memset");
		mp_json_add_u64(p, "fill_ns", res->fill_ns);
		mp_json_add_fixed(p, "fill_gib_per_sec",
				  res->fill_ns ? (double)res->f.allocated_bytes / MP_GIB / (res->fill_ns / 1e9) : 0, 3);
		fill_sched_json(p, res);
		mp_json_add_u64(p, "usage_at_stop_bytes", res->usage_at_stop_bytes);
		mp_json_add_u64(p, "usage_at_go_bytes", res->usage_at_go_bytes);
		cJSON_AddNumberToObject(p, "stack_sample_period", in->stack_sample_period);
		probe_stop_json(p, in);
		cJSON_AddItemToObject(doc, "probe", p);
	}
	if (in->attr) {
		struct mp_ksyms *ks = mp_ksyms_load("/proc/kallsyms");
		struct mp_attr_input ai = {
			.ksyms = ks, .growth = in->stop, .retained = in->freed,
			/* from the start snapshot's moment, not the baseline's low */
			.measured_growth_bytes = (int64_t)res->usage_at_stop_bytes -
						 (int64_t)res->usage_at_go_bytes,
			.allocated_bytes = res->f.allocated_bytes, .top = in->top,
			.probe_pid = res->child_pid,
			.start_stat = in->start->have_stat ? &in->start->stat : NULL,
			.span = "from the first chunk to the probe's stop",
		};

		mp_attr_snap_sub(in->stop, in->start);
		mp_attr_snap_sub(in->freed, in->start);
		cJSON_AddItemToObject(doc, "attribution", mp_attr_view_report(in->attr, &ai));
		mp_ksyms_free(ks);
	} else {
		cJSON_AddItemToObject(doc, "attribution", mp_attribution_no_bpf(in->attr_err));
	}
	if (in->pinned && in->pinned->taken)
		cJSON_AddItemToObject(doc, "pinned",
				      mp_pinned_json(in->pinned, cJSON_GetObjectItemCaseSensitive(
						     doc, "attribution"), in->top));
	/* the headroom as the probe stopped, not as the target was first
	 * read: memprobe's own start (BPF maps, in place charged there) and
	 * the workload move it */
	if (res->completed && !res->f.probe_chunks) {
		fprintf(stderr, "memprobe probe: no room for a chunk: the target is within its margin "
			"already (headroom %s as it stopped, margin %s)\n",
			mp_fmt_bytes(res->headroom_at_stop_bytes, b1, sizeof(b1)),
			mp_fmt_bytes(in->margin, b2, sizeof(b2)));
		cJSON_AddStringToObject(doc, "note", "no room for a chunk: the target was within its margin already");
	}
	overshoot_note(doc, in);
	if (res->killed_by_signal)
		fprintf(stderr, "memprobe probe: the probe process was killed by signal %d (%s) "
			"after %" PRIu64 " chunks, not by memprobe: the figures are partial\n",
			res->killed_by_signal, strsignal(res->killed_by_signal), res->f.probe_chunks);
	if (res->oom_killed)
		cJSON_AddStringToObject(doc, "probe_oom_limit",
					res->oom_at_own_limit ? "probe cgroup" : "target");
	return doc;
}
