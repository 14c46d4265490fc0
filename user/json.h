/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cJSON helpers that keep byte counts exact. cJSON stores numbers as doubles,
 * which lose integers above 2^53; these write the decimal text itself as a raw
 * JSON number instead.
 */
#ifndef MEMPROBE_JSON_H
#define MEMPROBE_JSON_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

/* Add an exact unsigned / signed integer member. */
void mp_json_add_u64(cJSON *obj, const char *name, uint64_t v);
void mp_json_add_s64(cJSON *obj, const char *name, int64_t v);
/* Add a limit: null when v is MP_UNLIMITED, never a sentinel. */
void mp_json_add_limit(cJSON *obj, const char *name, uint64_t v);
/* Add a number with a fixed count of decimals (e.g. GiB figures). */
void mp_json_add_fixed(cJSON *obj, const char *name, double v, int decimals);
/* Add a string, or null when v is NULL or "" (not known, none). */
void mp_json_add_str_or_null(cJSON *obj, const char *name, const char *v);
/* A process's "pid", as memprobe's pid namespace numbers it, and
 * "host_pid" beside where the host's differs (host not 0): in a
 * container. A task outside memprobe's namespace has no pid there: both
 * are its host pid. */
void mp_json_add_pid(cJSON *obj, uint32_t pid, uint32_t host);
/* A raw exact integer, for arrays. */
cJSON *mp_json_u64(uint64_t v);

/* Print doc to f followed by a newline; pretty or one line. Returns 0 or -EIO. */
int mp_json_print(const cJSON *doc, FILE *f, int pretty);

#endif
