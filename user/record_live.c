// SPDX-License-Identifier: GPL-2.0
/*
 * record --openmetrics FILE: a small record document of the sample just
 * taken, which cmd_record.c renders into FILE every interval through the
 * openmetrics renderer (mp_openmetrics_write), so the live file and
 * `memprobe report --format openmetrics` of the final document use the
 * same names. It holds what that renderer reads of a record document, as
 * of now: the target re-read, the peak so far, the OOM kills so far, the
 * page faults since the start (attribution.page_faults.total, the only
 * attribution member), --probe-at's nine fields once the probe is done,
 * and a timeline of the last sample. It is never
 * printed as JSON: it is no report.
 */
#include "record.h"
#include "attr.h"
#include "cgroup.h"
#include "doc.h"
#include "json.h"
#include "probe_doc.h"

#include <stdlib.h>

/* The target's page faults since the start: as read_sample counts them
 * (the fault hook's total, or memory.stat's pgfault without one). */
static bool faults_since_start(const struct rec *r, uint64_t faults, uint64_t *v)
{
	uint64_t base;

	if (!r->attr)
		return false;
	if (mp_attr_faults_from_stat(r->attr)) {
		if (!r->start.have_stat || !r->start.stat.have_pgfault)
			return false;
		base = r->start.stat.pgfault;
	} else {
		base = r->start.totals.faults;
	}
	*v = faults > base ? faults - base : 0;
	return true;
}

cJSON *mp_rec_build_live(struct rec *r)
{
	cJSON *doc = mp_doc_new("record", &r->host), *o, *arr;
	struct mp_cgroup *cg = malloc(sizeof(*cg));
	struct sample last, peak;
	uint64_t faults, n;

	if (!cg) {
		cJSON_Delete(doc);
		return NULL;
	}
	/* the main loop's state; --probe-at's thread may move the peak */
	pthread_mutex_lock(&r->sample_lock);
	last = r->last;
	peak = r->peak;
	faults = r->faults_prev;
	pthread_mutex_unlock(&r->sample_lock);
	*cg = r->cg;
	/* the usage, peak and limits now; the start's when it cannot be read */
	if (mp_cgroup_read("", &r->host, cg))
		*cg = r->cg;
	cJSON_AddItemToObject(doc, "target", mp_cgroup_json(cg));
	free(cg);
	o = cJSON_AddObjectToObject(doc, "peak");
	mp_json_add_u64(o, "usage_bytes", peak.usage_bytes);
	mp_json_add_u64(doc, "oom_kill_counter_delta", mp_cgroup_oom_kills(&r->cg) - r->oom_kill_count0);
	if (faults_since_start(r, faults, &n)) {
		o = cJSON_AddObjectToObject(doc, "attribution");
		o = cJSON_AddObjectToObject(o, "page_faults");
		mp_json_add_u64(o, "total", n);
	}
	/* the probe thread's result is whole once probe_done is set: it is
	 * set after mp_probe_run returned, and read here with acquire order */
	if (r->probe_started && __atomic_load_n(&r->probe_done, __ATOMIC_ACQUIRE) &&
	    !r->probe_ret) {
		o = cJSON_AddObjectToObject(doc, "probe");
		mp_probe_fields_json(o, &r->probe_res.f);
		cJSON_AddBoolToObject(o, "probe_oom_killed", r->probe_res.oom_killed);
	}
	arr = cJSON_AddArrayToObject(doc, "timeline");
	cJSON_AddItemToArray(arr, mp_rec_sample_json(r, &last));
	return doc;
}
