/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_PROBE_DOC_H
#define MEMPROBE_PROBE_DOC_H

#include <cjson/cJSON.h>
#include "attr.h"
#include "cgroup.h"
#include "probe.h"
#include "pinned.h"

/*
 * Add the brief's nine fields, with its names and in its order, to obj:
 * cgroup_limit_bytes, usage_before_bytes, allocated_bytes, allocated_gib,
 * usage_peak_bytes, usage_after_bytes, overhead_bytes, overhead_gib,
 * probe_chunks. Byte counts are exact integers.
 */
void mp_probe_fields_json(cJSON *obj, const struct mp_probe_fields *f);

/* The "overhead" object (overhead.c) of a probe run into obj, from the
 * session's plan and the vectors kept while it ran, its processes' roles
 * from pinned (NULL: none); nothing without them. */
void mp_probe_overhead_json(cJSON *obj, struct mp_attr *attr, const struct mp_probe_result *res,
			    const struct mp_overhead_snaps *ovh, const struct mp_pinned *pinned);

/* What the probe document is built from. */
struct mp_probe_doc_in {
	const struct mp_host *host;
	const struct mp_cgroup *target;
	bool target_created;           /* a --limit stand-in, made by memprobe */
	const char *target_why;        /* why memprobe chose the target itself (its own
					* cgroup, in a container), or NULL */
	const struct mp_probe_result *res;
	uint64_t chunk, margin;        /* bytes */
	const char *thp;
	int threads;
	bool populate;
	bool reclaim_cache;            /* --reclaim-cache */
	uint32_t stack_sample_period;
	int top;
	struct mp_attr *attr;          /* NULL: no session */
	const char *attr_err;          /* why there is none, or why BPF is off */
	struct mp_attr_snap *start, *stop, *freed; /* made differences here */
	const struct mp_overhead_snaps *ovh; /* the overhead's vectors; NULL: none */
	uint64_t target_oom0;          /* the target's OOM-kill counter before */
	const struct mp_pinned *pinned; /* at the probe's stop; NULL or not taken: none */
};

/* The probe document (caller frees); also says on stderr what went wrong
 * in the target (OOM kills, a probe killed from outside). */
cJSON *mp_probe_doc(const struct mp_probe_doc_in *in);

#endif
