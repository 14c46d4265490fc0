/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribution section of a probe or record document: the growth of the
 * target's memory by memory.stat category, process and kernel path, built
 * from the hook plan and the session's snapshots.
 */
#ifndef MEMPROBE_ATTRIBUTION_H
#define MEMPROBE_ATTRIBUTION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "attr.h"

struct mp_ksyms;

struct mp_attr_input {
	struct mp_attr *attr;
	const struct mp_ksyms *ksyms;      /* NULL: stacks unsymbolized */
	const struct mp_attr_snap *growth; /* counters from start to the peak */
	const struct mp_attr_snap *retained; /* start to after the probe freed; may be NULL */
	const struct mp_attr_snap *paths;  /* for kernel paths and not_charged; NULL: growth */
	int64_t measured_growth_bytes;     /* the cgroup's usage growth over the same span */
	uint64_t allocated_bytes;          /* the probe's, for per-GiB figures; 0 if none */
	uint32_t probe_pid;                /* the probe's process, 0 if none */
	int top;                           /* tasks and stacks kept per category */
	const char *span;                  /* what the growth spans, for people */
};

/*
 * Build the "attribution" object: hooks, categories with growth, tasks and
 * top stacks, page faults, page allocations by order, kernel paths,
 * reconciliation, events lost. Returns a new object (caller frees) or NULL.
 */
cJSON *mp_report_attribution(const struct mp_attr_input *in);

/* Sum of the reconciled categories, bytes: anon + file + kernel + sock; on
 * a kernel without a per-memcg kernel total, its itemised parts instead. */
int64_t mp_attributed_bytes(const int64_t cat_bytes[MP_NR_CATS], bool have_kernel_total);

#endif
