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

size_t mp_utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (len > n)
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* How many bytes of t[0..n) are not part of valid UTF-8. */
static size_t bad_bytes(const char *t, size_t n)
{
	const unsigned char *p = (const unsigned char *)t;
	size_t bad = 0;

	for (size_t i = 0; i < n;) {
		size_t l = mp_utf8_len(p + i, n - i);

		bad += !l;
		i += l ? l : 1;
	}
	return bad;
}

/* Copy src into dst (room checked by the caller), each bad byte written by
 * fmt ("\\udc%02x" or "\\x%02x"); returns the bytes written. */
static size_t escape_bad(char *dst, const char *src, size_t n, const char *fmt)
{
	const unsigned char *p = (const unsigned char *)src;
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		size_t l = mp_utf8_len(p + i, n - i);

		if (l) {
			memcpy(dst + o, p + i, l);
			o += l;
			i += l;
		} else {
			o += (size_t)sprintf(dst + o, fmt, p[i++]);
		}
	}
	dst[o] = '\0';
	return o;
}

char *mp_json_text(const cJSON *doc, int pretty)
{
	char *s = pretty ? cJSON_Print(doc) : cJSON_PrintUnformatted(doc), *e;
	size_t n, bad;

	if (!s)
		return NULL;
	/* cJSON writes bytes of 0x80 and up as they are, and only in strings:
	 * each bad one becomes \udcXX where it stands */
	n = strlen(s);
	if (!(bad = bad_bytes(s, n)))
		return s;
	e = cJSON_malloc(n + 5 * bad + 1);
	if (e)
		escape_bad(e, s, n, "\\udc%02x");
	cJSON_free(s);
	return e;
}

static bool str_bad(const char *s)
{
	return s && bad_bytes(s, strlen(s));
}

bool mp_json_has_bad_utf8(const cJSON *doc)
{
	for (const cJSON *it = doc; it; it = it->next) {
		if (str_bad(it->string) || (cJSON_IsString(it) && str_bad(it->valuestring)) ||
		    (it->child && mp_json_has_bad_utf8(it->child)))
			return true;
	}
	return false;
}

/* s with its bad bytes as \xNN, newly allocated (cJSON's allocator) */
static char *display(const char *s)
{
	size_t n = strlen(s);
	char *d = cJSON_malloc(n + 3 * bad_bytes(s, n) + 1);

	if (d)
		escape_bad(d, s, n, "\\x%02x");
	return d;
}

static bool display_tree(cJSON *it)
{
	for (; it; it = it->next) {
		char *d;

		if (str_bad(it->string) && !(it->type & cJSON_StringIsConst)) {
			if (!(d = display(it->string)))
				return false;
			cJSON_free(it->string);
			it->string = d;
		}
		if (cJSON_IsString(it) && str_bad(it->valuestring)) {
			if (!(d = display(it->valuestring)))
				return false;
			cJSON_free(it->valuestring);
			it->valuestring = d;
		}
		if (it->child && !display_tree(it->child))
			return false;
	}
	return true;
}

cJSON *mp_json_display_copy(const cJSON *doc)
{
	cJSON *c = cJSON_Duplicate(doc, 1);

	if (c && !display_tree(c)) {
		cJSON_Delete(c);
		return NULL;
	}
	return c;
}

int mp_json_print(const cJSON *doc, FILE *f, int pretty)
{
	char *s = mp_json_text(doc, pretty);
	int ret = 0;

	if (!s)
		return -ENOMEM;
	if (fprintf(f, "%s\n", s) < 0 || fflush(f))
		ret = -EIO;
	cJSON_free(s);
	return ret;
}

void mp_json_add_u64_or_null(cJSON *o, const char *name, bool have, uint64_t v)
{
	if (have)
		mp_json_add_u64(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

void mp_json_add_str_or_null(cJSON *o, const char *name, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}
