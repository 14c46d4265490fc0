// SPDX-License-Identifier: GPL-2.0
/* The brief's nine fields: names, order, exact integers, the overhead formula,
 * and the default chunk and margin. */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "probe.h"
#include "probe_doc.h"
#include "unit.h"
#include "util.h"

int main(void)
{
	/* The field team's run on the 342 GiB container (BRIEF.md). */
	struct mp_probe_fields f = {
		.cgroup_limit_bytes = 367003697152ULL,
		.usage_before_bytes = 342817820672ULL,
		.allocated_bytes = 15032385536ULL,
		.usage_peak_bytes = 364346327040ULL,
		.usage_after_bytes = 350478913536ULL,
		.probe_chunks = 14,
	};
	cJSON *o = cJSON_CreateObject();
	char *s;
	uint64_t c, m;

	CHECK_EQ_INT(mp_probe_overhead_bytes(&f), 6496120832LL,
		     "overhead = peak - before - allocated");
	mp_probe_fields_json(o, &f);
	s = cJSON_PrintUnformatted(o);
	CHECK_STR(s, "{\"cgroup_limit_bytes\":367003697152,\"usage_before_bytes\":342817820672,"
		  "\"allocated_bytes\":15032385536,\"allocated_gib\":14.00,"
		  "\"usage_peak_bytes\":364346327040,\"usage_after_bytes\":350478913536,"
		  "\"overhead_bytes\":6496120832,\"overhead_gib\":6.05,\"probe_chunks\":14}",
		  "nine fields in the brief's order");
	cJSON_free(s);
	cJSON_Delete(o);

	/* Above 2^53 a double would round 9007199254740993 to ...992. */
	f.cgroup_limit_bytes = 9007199254740993ULL;
	f.usage_peak_bytes = 100;
	f.usage_before_bytes = 200;
	f.allocated_bytes = 50;
	o = cJSON_CreateObject();
	mp_probe_fields_json(o, &f);
	s = cJSON_PrintUnformatted(o);
	if (!s)
		return 1;
	CHECK(strstr(s, "\"cgroup_limit_bytes\":9007199254740993,"), "exact above 2^53: %s", s);
	CHECK(strstr(s, "\"overhead_bytes\":-150,"), "negative overhead: %s", s);
	/* and the document still parses as JSON */
	cJSON *back = cJSON_Parse(s);
	CHECK(back != NULL, "printed fields parse back");
	CHECK_EQ_INT(cJSON_GetArraySize(back), 9, "nine members, got %d", cJSON_GetArraySize(back));
	cJSON_Delete(back);
	cJSON_free(s);
	cJSON_Delete(o);

	mp_probe_defaults(342 * MP_GIB, &c, &m);
	CHECK_U64(c, MP_GIB, "chunk at 342 GiB");
	CHECK_U64(m, 2 * MP_GIB, "margin at 342 GiB");
	mp_probe_defaults(32 * MP_GIB, &c, &m);
	CHECK_U64(c, MP_GIB, "chunk at 32 GiB");
	CHECK_U64(m, 2 * MP_GIB, "margin at 32 GiB");
	mp_probe_defaults(MP_GIB, &c, &m);
	CHECK_U64(c, 32 * MP_MIB, "chunk at 1 GiB");
	CHECK_U64(m, 64 * MP_MIB, "margin at 1 GiB");
	mp_probe_defaults(31 * MP_GIB, &c, &m);
	CHECK_U64(c, 992 * MP_MIB, "chunk at 31 GiB");
	CHECK_U64(m, 1984 * MP_MIB, "margin at 31 GiB");
	mp_probe_defaults(1000 * MP_MIB + 12345, &c, &m);
	CHECK_U64(c % (2 * MP_MIB), 0, "chunk rounded to 2 MiB");
	CHECK_U64(c, 30 * MP_MIB, "chunk at 1000 MiB");
	mp_probe_defaults(10 * MP_MIB, &c, &m);
	CHECK_U64(c, 2 * MP_MIB, "chunk floor");
	CHECK_U64(m, 2 * MP_MIB, "margin floor");
	return unit_done("fields");
}
