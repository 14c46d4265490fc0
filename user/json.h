/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cJSON helpers that keep byte counts exact. cJSON stores numbers as doubles,
 * which lose integers above 2^53; these write the decimal text itself as a raw
 * JSON number instead.
 */
#ifndef MEMPROBE_JSON_H
#define MEMPROBE_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Add an exact unsigned / signed integer member. */
void mp_json_add_u64(cJSON *obj, const char *name, uint64_t v);
void mp_json_add_s64(cJSON *obj, const char *name, int64_t v);
/* Add a limit: null when v is MP_UNLIMITED, never a sentinel. */
void mp_json_add_limit(cJSON *obj, const char *name, uint64_t v);
/* Add a number with a fixed count of decimals (e.g. GiB figures). */
void mp_json_add_fixed(cJSON *obj, const char *name, double v, int decimals);
/* Add an exact integer, or null when it was not measured (!have). */
void mp_json_add_u64_or_null(cJSON *obj, const char *name, bool have, uint64_t v);
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

/*
 * Valid UTF-8 whatever the kernel handed over. A command's name, a
 * cgroup's, a command line are bytes: memprobe keeps them as they are in
 * its trees, writes each byte that is not part of valid UTF-8 as \udcXX
 * (U+DC80 to U+DCFF, the lone surrogate Python's surrogateescape makes of
 * it: json.load reads it, and .encode("utf-8", "surrogateescape") gives
 * the byte back), and the loader turns \udcXX back into the byte.
 */

/* The length of the valid UTF-8 sequence at s (1 for ASCII), n bytes left;
 * 0 when it is none (overlong, a surrogate, past U+10FFFF, cut short). */
size_t mp_utf8_len(const unsigned char *s, size_t n);

/* doc's text (cJSON_Print or cJSON_PrintUnformatted) with every byte that
 * is not valid UTF-8 written \udcXX; free with cJSON_free. NULL: out of
 * memory. */
char *mp_json_text(const cJSON *doc, int pretty);

/* Does any string (or member name) of doc hold bytes that are not UTF-8? */
bool mp_json_has_bad_utf8(const cJSON *doc);

/* A copy of doc whose strings show each byte that is not UTF-8 as the
 * four characters \xNN, for the renderers of text for people (text,
 * markdown, csv, html, openmetrics): NULL when out of memory. */
cJSON *mp_json_display_copy(const cJSON *doc);

#endif
