// SPDX-License-Identifier: GPL-2.0
/* The record document, built from the recorder's state; its text is
 * rendered from the document (render_text.c), never from struct rec. */
#include "record.h"
#include "attr.h"
#include "attribution.h"
#include "cgroup.h"
#include "doc.h"
#include "json.h"
#include "oom_doc.h"
#include "probe.h"
#include "probe_doc.h"
#include "util.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the report ------------------------------------------------------------ */

/* One bound for the writer and the loader (doc.h): the timeline and the
 * OOM kills at their largest take an eighth of what the loader takes, the
 * attribution and the rest have the remainder, and mp_doc_adopt checks the
 * whole document against the loader's figures before it is written. */
_Static_assert(MP_TL_MAX_VALUES + MP_REC_OOMS * (9 + MP_TL_SAMPLE_MAX_VALUES +
						  MP_OOM_DOC_MAX_VALUES) +
	       6 + MP_REC_LIMIT_CHANGES * 4 <=
	       MP_DOC_MAX_VALUES / 8, "record's bounded parts must fit the loader's bound");

/* BPF's figures only where a memcg hook counted them */
static bool bpf_growth_kept(const struct rec *r)
{
	return r->attr && !mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].polled &&
	       mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].hook[0];
}

/*
 * v1 keeps no slab key: a kernel part's floor is minus kernel (kmem) at the
 * start. But BPF's baseline is a moment before the first sample, and both
 * readings of kmem come after it: a part freed in that moment (its growth
 * negative at the first sample, read beside that sample's kmem) was held at
 * the baseline on top of what the first sample's kmem shows, and kmem holds
 * every part. A 6.1 guest's cgroup churning sockets read below its floor
 * so. The start's kernel is at least kmem less the most negative part.
 */
static void v1_kernel_at_baseline(const struct sample *first, struct mp_cg_stat *start)
{
	int64_t least = 0;

	if (!first->stat.kernel_counter || !start->have[MP_CAT_KERNEL])
		return;
	for (int k = 0; k < MP_NR_CATS; k++)
		if (mp_cats[k].part == MP_PART_KERNEL && first->bpf_growth[k] < least)
			least = first->bpf_growth[k];
	if ((int64_t)first->stat.bytes[MP_CAT_KERNEL] - least > (int64_t)start->bytes[MP_CAT_KERNEL])
		start->bytes[MP_CAT_KERNEL] = (uint64_t)((int64_t)first->stat.bytes[MP_CAT_KERNEL] - least);
}

static cJSON *sample_json(const struct rec *r, const struct sample *s)
{
	return mp_tl_sample_json(s, bpf_growth_kept(r));
}

/* The peak's vector's moment in the recording's milliseconds. */
static uint64_t vector_ms(const struct rec *r)
{
	uint64_t t0 = (uint64_t)r->t0.tv_sec * 1000000000ULL + (uint64_t)r->t0.tv_nsec;

	return r->at_peak.usage_ns > t0 ? (r->at_peak.usage_ns - t0) / 1000000 : 0;
}

/* The peak: the kernel's counter where it speaks of the recording, else
 * the highest sample; empty when not one sample was taken. */
static cJSON *peak_json(const struct rec *r, const struct sample *peak)
{
	cJSON *o = cJSON_CreateObject();
	uint64_t kpeak;
	bool have_kpeak, use_k;

	if (!peak)
		return o;
	/* The kernel's counter is exact; it speaks of the recording only
	 * when it rose during it (v1's, and v2's before 6.12, cannot be
	 * reset per reader). The sample is the closest one taken. */
	have_kpeak = mp_rec_kernel_peak(r, &kpeak);
	use_k = have_kpeak && r->have_kpeak0 && kpeak > r->kpeak0 && kpeak > peak->usage_bytes;
	mp_json_add_u64(o, "usage_bytes", use_k ? kpeak : peak->usage_bytes);
	cJSON_AddStringToObject(o, "usage_source", use_k ? "kernel peak counter" : "sample");
	mp_json_add_u64(o, "sample_usage_bytes", peak->usage_bytes);
	mp_json_add_u64(o, "t_ms", peak->t_ms);
	if (have_kpeak)
		mp_json_add_u64(o, "kernel_peak_bytes", kpeak);
	/* the attribution's vector: when its maps were read, and the usage
	 * read with them, which its reconciliation measures */
	if (r->attr && r->have_peak_snap && r->at_peak.have_usage) {
		mp_json_add_u64(o, "vector_t_ms", vector_ms(r));
		mp_json_add_u64(o, "vector_usage_bytes", r->at_peak.usage_bytes);
	}
	cJSON_AddItemToObject(o, "sample", sample_json(r, peak));
	return o;
}

/* The effective limit's changes during the recording, each at the first
 * timeline sample that read it; and the limit at the end. */
static void limit_changes_json(cJSON *doc, const struct rec *r)
{
	cJSON *o = cJSON_AddObjectToObject(doc, "limit"), *arr;

	mp_json_add_u64(o, "start_bytes", r->cg.effective_limit_bytes);
	mp_json_add_u64(o, "end_bytes", r->limit_now ? r->limit_now : r->cg.effective_limit_bytes);
	arr = cJSON_AddArrayToObject(o, "changes");
	for (size_t i = 0; i < r->nlimit_changes; i++) {
		cJSON *c = cJSON_CreateObject();

		mp_json_add_u64(c, "t_ms", r->limit_changes[i].t_ms);
		mp_json_add_u64(c, "from_bytes", r->limit_changes[i].from_bytes);
		mp_json_add_u64(c, "to_bytes", r->limit_changes[i].to_bytes);
		cJSON_AddItemToArray(arr, c);
	}
	mp_json_add_u64(o, "changes_not_kept", r->limit_changes_more);
}

/* The kills kept, each with its sample and its explanation (oom_doc.c). */
static void oom_kills_json(cJSON *doc, const struct rec *r)
{
	cJSON *arr;

	arr = cJSON_AddArrayToObject(doc, "oom_kills");
	for (size_t i = 0; i < r->nooms; i++) {
		const struct oom *k = mp_rec_oom(r, i);
		cJSON *e = cJSON_CreateObject();

		mp_json_add_u64(e, "t_ms", k->t_ms);
		/* pid 0: the oom_kill counter's kill (record.c), no victim
		 * known; null, never a pid 0 no victim has */
		if (k->ev.pid) {
			mp_json_add_pid(e, k->ev.pid,
					k->ev.host_pid != k->ev.pid ? k->ev.host_pid : 0);
			cJSON_AddStringToObject(e, "comm", k->ev.comm);
		} else {
			cJSON_AddNullToObject(e, "pid");
			cJSON_AddNullToObject(e, "comm");
		}
		/* only the hook sees the task that ran the OOM killer */
		mp_json_add_u64_or_null(e, "trigger_pid", k->ev.trigger_pid != 0, k->ev.trigger_pid);
		/* the kernel's figure at the kill; the sample is the sampler's last */
		if (k->ev.usage_bytes)
			mp_json_add_u64(e, "usage_bytes", k->ev.usage_bytes);
		else
			cJSON_AddNullToObject(e, "usage_bytes");
		/* the effective limit read right after the kill */
		if (k->limit_bytes)
			mp_json_add_u64(e, "limit_bytes", k->limit_bytes);
		else
			cJSON_AddNullToObject(e, "limit_bytes");
		cJSON_AddItemToObject(e, "sample", sample_json(r, &k->at));
		/* which limit, each level then, what no RSS shows */
		mp_oom_explain(e, &r->cg, &k->ev, &k->at.stat, true, sysconf(_SC_PAGESIZE));
		cJSON_AddItemToArray(arr, e);
	}
}

cJSON *mp_rec_build_report(struct rec *r, struct mp_ksyms *ks)
{
	cJSON *doc = mp_doc_new("record", &r->host), *o;
	const struct sample *peak = r->have_last ? &r->peak : NULL;
	const struct sample *first = mp_tl_first(&r->tl);

	o = cJSON_AddObjectToObject(doc, "run");
	if (r->o.cmd) {
		cJSON *argv = cJSON_AddArrayToObject(o, "command");

		for (char **a = r->o.cmd; *a; a++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(*a));
		if (r->child_exited && WIFEXITED(r->child_status))
			cJSON_AddNumberToObject(o, "exit_status", WEXITSTATUS(r->child_status));
		else if (r->child_exited && WIFSIGNALED(r->child_status))
			cJSON_AddNumberToObject(o, "killed_by_signal", WTERMSIG(r->child_status));
	}
	cJSON_AddStringToObject(o, "ended_by", r->end_reason ? r->end_reason : "unknown");
	mp_json_add_u64(o, "duration_ms", r->have_last ? r->last.t_ms : 0);
	cJSON_AddNumberToObject(o, "interval_ms", (double)r->o.interval_ms);
	mp_json_add_u64(o, "timeline_samples_dropped", r->tl.dropped);
	mp_json_add_u64(o, "timeline_samples_late", r->samples_late);
	mp_json_add_u64(o, "timeline_samples_missed", r->samples_missed);
	mp_json_add_u64(o, "timeline_longest_gap_ms", r->longest_gap_ms);
	cJSON_AddBoolToObject(o, "interrupted", mp_rec_signals_seen > 0);
	if (r->in_place) {
		cJSON *pids = cJSON_AddArrayToObject(o, "command_pids");

		cJSON_AddBoolToObject(o, "in_place", true);
		cJSON_AddStringToObject(o, "in_place_why", r->in_place_why);
		for (size_t i = 0; i < r->ncmd_pids; i++)
			cJSON_AddItemToArray(pids, cJSON_CreateNumber(r->cmd_pids[i]));
	}

	{
		cJSON *t = mp_cgroup_json(&r->cg);

		cJSON_AddBoolToObject(t, "created_by_memprobe", r->cg_created);
		cJSON_AddItemToObject(doc, "target", t);
	}

	bool memcg_hooked = bpf_growth_kept(r);

	o = cJSON_AddObjectToObject(doc, "category_sources");
	for (int k = 0; k < MP_NR_CATS; k++)
		cJSON_AddStringToObject(o, mp_cat_names[k],
					first && first->stat.have[k] ?
					(r->cg.version == 1 ? "kernel (v1 files)" : "memory.stat") :
					memcg_hooked ? "bpf_growth only" : "none");

	cJSON_AddItemToObject(doc, "peak", peak_json(r, peak));

	oom_kills_json(doc, r);
	/* a crash loop's kills between the first and the last kept */
	mp_json_add_u64(doc, "oom_kills_not_listed", r->ooms_seen - r->nooms);
	mp_json_add_u64(doc, "oom_kill_counter_delta", mp_cgroup_oom_kills(&r->cg) - r->oom_kill_count0);
	limit_changes_json(doc, r);

	if (r->probe_started && r->probe_ret) {
		o = cJSON_AddObjectToObject(doc, "probe");
		cJSON_AddStringToObject(o, "error", strerror(-r->probe_ret));
	} else if (r->probe_started) {
		o = cJSON_AddObjectToObject(doc, "probe");
		mp_probe_fields_json(o, &r->probe_res.f);
		cJSON_AddBoolToObject(o, "completed", r->probe_res.completed);
		cJSON_AddBoolToObject(o, "interrupted", r->probe_res.interrupted);
		cJSON_AddBoolToObject(o, "probe_oom_killed", r->probe_res.oom_killed);
		mp_json_add_u64(o, "chunk_bytes", r->probe_chunk);
		mp_json_add_u64(o, "margin_bytes", r->probe_margin);
		/* over the probe's window, where .attribution spans the recording */
		mp_probe_overhead_json(o, r->attr, &r->probe_res, &r->probe_ovh,
				       r->pinned.taken ? &r->pinned : NULL);
	}

	if (r->attr && r->have_peak_snap && peak && first) {
		struct mp_cg_stat start = first->stat;
		struct mp_attr_input in = {
			.ksyms = ks, .growth = &r->at_peak, .retained = &r->end,
			.paths = &r->end,
			/* the usage read with the vector: what it explains */
			.measured_growth_bytes = (int64_t)(r->at_peak.have_usage ?
				r->at_peak.usage_bytes : peak->usage_bytes) -
				(int64_t)(r->start.have_usage ? r->start.usage_bytes :
					  first->usage_bytes),
			.start_stat = &start,
			.top = r->o.top, .span = "from the start to the peak",
		};

		/* the BPF baseline is the start snapshot's, a moment before the
		 * first sample: what the cgroup held at the start is the larger
		 * of the two readings (the floor of a category's growth) */
		for (int k = 0; r->start.have_stat && k < MP_NR_CATS; k++) {
			if (r->start.stat.have[k] && (!start.have[k] ||
						      r->start.stat.bytes[k] > start.bytes[k]))
				start.bytes[k] = r->start.stat.bytes[k];
			start.have[k] |= r->start.stat.have[k];
		}
		v1_kernel_at_baseline(first, &start);
		cJSON_AddItemToObject(doc, "attribution", mp_attr_view_report(r->attr, &in));
	} else {
		cJSON_AddItemToObject(doc, "attribution", mp_attribution_no_bpf(
			r->attr ? "no attribution: the recording ended before its first sample"
				: "BPF unavailable"));
	}

	if (r->pinned.taken)
		cJSON_AddItemToObject(doc, "pinned", mp_pinned_json(
			&r->pinned, cJSON_GetObjectItemCaseSensitive(doc, "attribution"), r->o.top));
	return doc;
}

void mp_rec_add_timeline(struct rec *r, cJSON *doc)
{
	cJSON_AddItemToObject(doc, "timeline_folding",
			      mp_tl_folding_json(&r->tl, (uint64_t)r->o.interval_ms));
	cJSON_AddItemToObject(doc, "timeline", mp_tl_json(&r->tl, bpf_growth_kept(r),
							  (uint64_t)r->o.interval_ms));
}

/* The timeline's form of a sample, for record_live.c's document too. */
cJSON *mp_rec_sample_json(const struct rec *r, const struct sample *s)
{
	return sample_json(r, s);
}
