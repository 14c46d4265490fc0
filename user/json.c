// SPDX-License-Identifier: GPL-2.0
#include "json.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

cJSON *mp_json_u64(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return cJSON_CreateRaw(buf);
}

void mp_json_add_pid(cJSON *obj, uint32_t pid, uint32_t host)
{
	cJSON_AddNumberToObject(obj, "pid", host && (pid & 0x80000000u) ? host : pid);
	if (host)
		cJSON_AddNumberToObject(obj, "host_pid", host);
}

void mp_json_add_u64(cJSON *obj, const char *name, uint64_t v)
{
	cJSON_AddItemToObject(obj, name, mp_json_u64(v));
}

void mp_json_add_s64(cJSON *obj, const char *name, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	cJSON_AddRawToObject(obj, name, buf);
}

void mp_json_add_limit(cJSON *obj, const char *name, uint64_t v)
{
	if (v == MP_UNLIMITED)
		cJSON_AddNullToObject(obj, name);
	else
		mp_json_add_u64(obj, name, v);
}

void mp_json_add_fixed(cJSON *obj, const char *name, double v, int decimals)
{
	/* what %.*f can write: a sign, DBL_MAX's 309 digits, the point and up
	 * to 17 decimals (a double has no more) */
	char buf[1 + 309 + 1 + 17 + 1];

	if (decimals < 0 || decimals > 17)
		decimals = 17;
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	cJSON_AddRawToObject(obj, name, buf);
}

int mp_json_print(const cJSON *doc, FILE *f, int pretty)
{
	char *s = pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	if (fprintf(f, "%s\n", s) < 0 || fflush(f))
		ret = -EIO;
	cJSON_free(s);
	return ret;
}

void mp_json_add_str_or_null(cJSON *o, const char *name, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}
