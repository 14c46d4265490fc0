/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_PROBE_H
#define MEMPROBE_PROBE_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* The field team's measurement (see ../shared/BRIEF.md), in bytes. */
struct mp_probe_fields {
	uint64_t cgroup_limit_bytes;  /* the target's effective limit */
	uint64_t usage_before_bytes;
	uint64_t allocated_bytes;
	uint64_t usage_peak_bytes;
	uint64_t usage_after_bytes;
	uint64_t probe_chunks;
};

/* overhead = peak - before - allocated; negative when the rest of the
 * cgroup shrank while the probe ran. */
int64_t mp_probe_overhead_bytes(const struct mp_probe_fields *f);

/*
 * Add the brief's nine fields, with its names and in its order, to obj:
 * cgroup_limit_bytes, usage_before_bytes, allocated_bytes, allocated_gib,
 * usage_peak_bytes, usage_after_bytes, overhead_bytes, overhead_gib,
 * probe_chunks. Byte counts are exact integers.
 */
void mp_probe_fields_json(cJSON *obj, const struct mp_probe_fields *f);

/*
 * Default chunk and margin for an effective limit: 1 GiB and 2 GiB, as in the
 * brief; under 32 GiB, limit/32 and limit/16 rounded down to 2 MiB (at least
 * 2 MiB), so a small cgroup is probed as finely as a large one.
 */
void mp_probe_defaults(uint64_t effective_limit, uint64_t *chunk, uint64_t *margin);

/* `memprobe probe ...`: returns the process exit status. */
int mp_cmd_probe(int argc, char **argv);

#endif
