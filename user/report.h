/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reports: the attribution section built from BPF snapshots, and the text
 * rendering of a JSON report. Text is rendered from the JSON document, so a
 * saved report renders the same as a live one.
 */
#ifndef MEMPROBE_REPORT_H
#define MEMPROBE_REPORT_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

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

/* Render a probe report (as mp_probe builds it) as text. */
void mp_report_probe_text(const cJSON *report, FILE *f);

/* Render an "attribution" object as text. */
void mp_report_attribution_text(const cJSON *attribution, FILE *f);

/* Sum of the reconciled categories, bytes: anon + file + kernel + sock; on
 * a kernel without a per-memcg kernel total, its itemised parts instead. */
int64_t mp_attributed_bytes(const int64_t cat_bytes[MP_NR_CATS], bool have_kernel_total);

struct mp_host;
struct mp_cgroup;
/* `memprobe limits` as text, and as shell assignments (--format env). */
void mp_limits_text(const struct mp_host *h, const struct mp_cgroup *cg);
void mp_limits_env(const struct mp_host *h, const struct mp_cgroup *cg);

#endif
