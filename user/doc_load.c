// SPDX-License-Identifier: GPL-2.0
/*
 * Loading a document back (memprobe report, and every live command's
 * round trip in mp_emit) and reading it with checks.
 *
 * cJSON keeps numbers as doubles, which round integers above 2^53. The
 * loader finds every number's literal in the text (outside strings, in
 * the order cJSON parses them) and turns each number item into a raw item
 * holding that literal: byte counts read back exactly, and a document
 * prints back as it was read.
 */
#include "doc.h"
#include "json.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MP_STR_(x) #x
#define MP_STR(x) MP_STR_(x)

struct lits {
	size_t *off, *len;   /* each number literal's place in the text */
	size_t n, cap;
};

/* RFC 8259's number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static bool json_number(const char *s, size_t n)
{
	size_t i = 0;

	i += i < n && s[i] == '-';
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	else
		return false;
	if (i < n && s[i] == '.') {
		if (++i >= n || !isdigit((unsigned char)s[i]))
			return false;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		i += i < n && (s[i] == '+' || s[i] == '-');
		if (i >= n || !isdigit((unsigned char)s[i]))
			return false;
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
	}
	return i == n;
}

/* The characters cJSON's parse_number() takes into a number. */
static bool number_char(char c)
{
	return isdigit((unsigned char)c) || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

/*
 * The one walk over JSON text that every pass of the loader makes (the
 * numbers' literals, the value count, the depth, a text cut short): the
 * bytes outside strings, in order. A string is skipped whole, an escape
 * with the byte it escapes, so that "a\\\\" ends at its last quote for
 * every pass alike (two walks that each read escapes their own way had
 * drifted: the depth's took that quote for an escaped one).
 */
struct scan {
	const char *t;
	size_t len;
	size_t i;       /* the next byte to look at */
	bool in_str;    /* the walk stopped inside a string */
};

/* The next byte outside strings, at s->i - 1; false at the end. */
static bool scan_next(struct scan *s, char *c)
{
	while (s->i < s->len) {
		char ch = s->t[s->i++];

		if (s->in_str) {
			if (ch == '\\')
				s->i++; /* past the end: the text ends in the string */
			else if (ch == '"')
				s->in_str = false;
		} else if (ch == '"') {
			s->in_str = true;
		} else {
			*c = ch;
			return true;
		}
	}
	return false;
}

/* Every number's literal outside strings, in the text's order. */
static int scan_numbers(const char *t, size_t len, struct lits *l)
{
	struct scan sc = { .t = t, .len = len };
	char c;

	while (scan_next(&sc, &c)) {
		size_t i = sc.i - 1, j;

		if (c != '-' && !isdigit((unsigned char)c))
			continue;
		for (j = i; j < len && number_char(t[j]); j++)
			;
		if (l->n == l->cap) {
			size_t cap = l->cap ? l->cap * 2 : 256;
			size_t *o = realloc(l->off, cap * sizeof(*o)), *n;

			if (!o)
				return -ENOMEM;
			l->off = o;
			n = realloc(l->len, cap * sizeof(*n));
			if (!n)
				return -ENOMEM;
			l->len = n;
			l->cap = cap;
		}
		l->off[l->n] = i;
		l->len[l->n++] = j - i;
		sc.i = j;
	}
	return 0;
}

struct rawify {
	const char *text;
	struct lits *l;
	size_t next;
	char *err;
	size_t errlen;
};

static int rawify_fail(struct rawify *w, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, w->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A member name twice in object o, sorted rather than pairwise: an object
 * of a million members must not take a million squared comparisons. 0,
 * -EEXIST with *dup set, or -ENOMEM. */
static int dup_member(const cJSON *o, const char **dup)
{
	size_t n = 0, k = 0;
	const char **names;

	for (const cJSON *c = o->child; c; c = c->next)
		n += c->string != NULL;
	if (n < 2)
		return 0;
	names = malloc(n * sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (const cJSON *c = o->child; c; c = c->next)
		if (c->string)
			names[k++] = c->string;
	qsort(names, n, sizeof(*names), cmp_names);
	for (k = 1; k < n && strcmp(names[k - 1], names[k]) != 0; k++)
		;
	*dup = k < n ? names[k] : NULL;
	free(names);
	return *dup ? -EEXIST : 0;
}

/* Number items into raw ones, depth first (cJSON's own order); a member
 * name twice in one object is refused (readers would disagree on it). */
static int rawify(struct rawify *w, cJSON *it)
{
	if (cJSON_IsNumber(it)) {
		size_t k = w->next++, off, n;
		char *s;

		if (k >= w->l->n)
			return rawify_fail(w, "its numbers do not parse alike twice");
		off = w->l->off[k];
		n = w->l->len[k];
		if (!json_number(w->text + off, n))
			return rawify_fail(w, "'%.*s' at byte %zu: not a JSON number", (int)MP_MIN(n, 40),
					   w->text + off, off);
		s = cJSON_malloc(n + 1);
		if (!s)
			return -ENOMEM;
		memcpy(s, w->text + off, n);
		s[n] = '\0';
		it->type = cJSON_Raw;
		it->valuestring = s;
		return 0;
	}
	if (cJSON_IsObject(it)) {
		const char *dup = NULL;
		int err = dup_member(it, &dup);

		if (err == -EEXIST)
			return rawify_fail(w, "member \"%.60s\" twice in one object", dup);
		if (err)
			return err;
	}
	for (cJSON *c = it->child; c; c = c->next) {
		int err = rawify(w, c);

		if (err)
			return err;
	}
	return 0;
}

static bool blank(const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)t[i]))
			return false;
	return true;
}

/* How deep the text nests at off (objects and arrays open there): cJSON
 * refuses more than CJSON_NESTING_LIMIT levels, which is not a syntax error.
 * *open: the text up to off ends inside a string. */
static size_t depth_at(const char *text, size_t off, bool *open)
{
	struct scan sc = { .t = text, .len = off };
	size_t depth = 0;
	char c;

	while (scan_next(&sc, &c)) {
		if (c == '[' || c == '{')
			depth++;
		else if ((c == ']' || c == '}') && depth)
			depth--;
	}
	if (open)
		*open = sc.in_str;
	return depth;
}

/* cJSON's allocations, so that a failed one is told from bad JSON (both
 * make the parse return NULL). */
static bool g_parse_oom;

static void *parse_malloc(size_t n)
{
	void *p = malloc(n);

	g_parse_oom |= !p;
	return p;
}

/* The text ends inside a string or an open object or array: a file cut
 * short (a complete document is balanced, whatever else is wrong in it). */
static bool ends_open(const char *text, size_t len)
{
	bool str;

	return depth_at(text, len, &str) > 0 || str;
}

/* Where cJSON stopped, for people: "at line 3, column 7", or the end;
 * trailing: a whole value was read and something follows it. */
static void parse_error(const char *text, size_t len, const char *end, bool trailing,
			char *err, size_t errlen)
{
	size_t off = end && end >= text && end <= text + len ? (size_t)(end - text) : len;
	size_t line = 1, col = 1, rest = off;

	for (size_t i = 0; i < off; i++) {
		col++;
		if (text[i] == '\n') {
			line++;
			col = 1;
		}
	}
	while (rest < len && isspace((unsigned char)text[rest]))
		rest++;
	if (blank(text, len))
		snprintf(err, errlen, "empty: not a document; give a document memprobe wrote");
	else if (!trailing && depth_at(text, off, NULL) >= CJSON_NESTING_LIMIT)
		snprintf(err, errlen, "nested deeper than %d levels (at line %zu, column %zu): "
			 "not a memprobe document; give a document memprobe wrote",
			 CJSON_NESTING_LIMIT, line, col);
	else if (trailing)
		snprintf(err, errlen, "not JSON: more text after the document (at line %zu, "
			 "column %zu); give one document, as memprobe wrote it", line, col);
	else if (rest >= len || ends_open(text, len))
		snprintf(err, errlen, "not JSON: the text ends early (truncated?); "
			 "give the whole document memprobe wrote");
	else
		snprintf(err, errlen, "not JSON (at line %zu, column %zu); "
			 "give a document memprobe wrote", line, col);
}

/* RFC 3339 date-time: 2026-12-01T10:23:01Z, with optional fraction and
 * a Z or ±hh:mm offset. */
static bool rfc3339(const char *s)
{
	static const char pat[] = "dddd-dd-ddTdd:dd:dd";
	size_t i;

	for (i = 0; pat[i]; i++)
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return false;
	if (s[i] == '.') {
		if (!isdigit((unsigned char)s[++i]))
			return false;
		while (isdigit((unsigned char)s[i]))
			i++;
	}
	if (s[i] == 'Z')
		return s[i + 1] == '\0';
	return (s[i] == '+' || s[i] == '-') && isdigit((unsigned char)s[i + 1]) &&
	       isdigit((unsigned char)s[i + 2]) && s[i + 3] == ':' &&
	       isdigit((unsigned char)s[i + 4]) && isdigit((unsigned char)s[i + 5]) && !s[i + 6];
}

/* The host object: every member a renderer or a reader may rely on. */
static void check_host(struct mp_rd *rd, const cJSON *h)
{
	uint64_t v;

	mp_rd_str(rd, h, "hostname", 0);
	mp_rd_str(rd, h, "kernel_release", 0);
	mp_rd_str(rd, h, "distribution", MP_RD_NULL);
	mp_rd_u64(rd, h, "cpus", 0, &v);
	mp_rd_u64(rd, h, "mem_total_bytes", 0, &v);
	mp_rd_u64(rd, h, "mem_available_bytes", 0, &v);
	mp_rd_u64(rd, h, "page_size_bytes", 0, &v);
	mp_rd_str(rd, h, "thp_enabled", MP_RD_NULL);
	mp_rd_str(rd, h, "thp_defrag", MP_RD_NULL);
	mp_rd_bool(rd, h, "btf", 0);
	mp_rd_str(rd, h, "cgroup_mode", 0);
	mp_rd_str(rd, h, "lru_gen", MP_RD_ABSENT);
}

static bool read_int(struct mp_rd *rd, const cJSON *it, const cJSON *o, const char *name,
		     bool sign, uint64_t *u, int64_t *s);

/* Byte counts that cannot be negative (docs/report.schema.json's "bytes"
 * and "limit"); other *_bytes members are signed (growth_bytes,
 * overhead_bytes, ...) or new, and need only be integers. */
static const char *const unsigned_bytes[] = {
	"alloc_bytes", "all_contexts_gross_bytes", "allocated_bytes", "cgroup_limit_bytes",
	"chunk_bytes", "effective_limit_bytes", "gross_bytes", "headroom_bytes", "high_bytes",
	"kernel_peak_bytes", "limit_bytes", "margin_bytes", "mem_available_bytes",
	"mem_total_bytes", "memsw_limit_bytes", "page_size_bytes", "peak_bytes",
	"sample_usage_bytes", "swap_limit_bytes", "usage_after_bytes", "usage_at_stop_bytes",
	"usage_before_bytes", "usage_bytes", "usage_peak_bytes",
};

static bool is_unsigned_bytes(const char *name)
{
	for (size_t i = 0; i < sizeof(unsigned_bytes) / sizeof(unsigned_bytes[0]); i++)
		if (strcmp(name, unsigned_bytes[i]) == 0)
			return true;
	return false;
}

/* Every member named *_bytes, wherever it is: null or a whole number of
 * bytes in 64 bits, not negative where it is a count (a range check the
 * renderers then need not repeat for a field they print but do not read). */
static void check_bytes(struct mp_rd *rd, const cJSON *it)
{
	for (const cJSON *c = it->child; c && mp_rd_ok(rd); c = c->next) {
		size_t n = c->string ? strlen(c->string) : 0;

		if (n >= 6 && strcmp(c->string + n - 6, "_bytes") == 0 && !cJSON_IsNull(c)) {
			uint64_t u;
			int64_t v;

			/* the item itself: a lookup by name in an object of many
			 * members would make this quadratic */
			read_int(rd, c, it, c->string, !is_unsigned_bytes(c->string), &u, &v);
		}
		if (c->child)
			check_bytes(rd, c);
	}
}

/* The header: format_version first, so that a newer format is named as
 * such rather than by whatever else it changed. */
static int check_header(const cJSON *doc, int *kind, char *err, size_t errlen)
{
	struct mp_rd rd = { .root = doc };
	const cJSON *fv = cJSON_GetObjectItemCaseSensitive(doc, "format_version");
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(doc, "kind");
	const cJSON *gen;
	const char *created;
	uint64_t v;

	if (!cJSON_IsObject(doc))
		return snprintf(err, errlen, "not a memprobe document (JSON, but not an object); "
				"give a document memprobe wrote"), -EINVAL;
	if (!fv)
		return snprintf(err, errlen, "no format_version: not a memprobe document; "
				"give one that memprobe wrote with --format json"), -EINVAL;
	if (!mp_rd_u64(&rd, doc, "format_version", 0, &v) || v < 1)
		return snprintf(err, errlen, "format_version is not a version (1 or more); "
				"give a document memprobe wrote"), -EINVAL;
	if (v > MP_FORMAT_VERSION)
		return snprintf(err, errlen, "format_version %" PRIu64 ": newer than this memprobe "
				"reads (%d); read it with a newer memprobe", v, MP_FORMAT_VERSION),
		       -EINVAL;
	if (!cJSON_IsString(k))
		return snprintf(err, errlen, "kind: %s; give a document memprobe wrote",
				k ? "not a string" : "missing"), -EINVAL;
	*kind = mp_doc_kind(k->valuestring);
	if (!*kind)
		return snprintf(err, errlen, "kind '%.40s': unknown; memprobe reads limits, features, "
				"probe, record, budget and compare documents", k->valuestring), -EINVAL;
	gen = mp_rd_obj(&rd, doc, "generator", 0);
	mp_rd_str(&rd, gen, "name", 0);
	mp_rd_str(&rd, gen, "version", 0);
	created = mp_rd_str(&rd, doc, "created", 0);
	if (mp_rd_ok(&rd) && !rfc3339(created))
		mp_rd_fail(&rd, doc, "created", "not an RFC 3339 time");
	check_host(&rd, mp_rd_obj(&rd, doc, "host", 0));
	if (mp_rd_ok(&rd))
		check_bytes(&rd, doc);
	if (!mp_rd_ok(&rd))
		return snprintf(err, errlen, "%s; give a document memprobe wrote", rd.err), -EINVAL;
	return 0;
}

/* An upper bound on the values cJSON would make of the text: each value
 * but the first follows a comma or opens a container. */
static size_t count_values(const char *t, size_t len)
{
	struct scan sc = { .t = t, .len = len };
	size_t n = 1;
	char c;

	while (scan_next(&sc, &c))
		n += c == ',' || c == '[' || c == '{';
	return n;
}

static cJSON *load(const char *text, size_t len, int *kind, char *err, size_t errlen);

static int hexv(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ?
	       (c | 0x20) - 'a' + 10 : -1;
}

/* The value of the \uXXXX escape at t (t[0] the backslash), -1 if none. */
static long u_escape(const char *t, size_t n)
{
	long v = 0;

	if (n < 6 || t[1] != 'u')
		return -1;
	for (int i = 2; i < 6; i++) {
		if (hexv(t[i]) < 0)
			return -1;
		v = v * 16 + hexv(t[i]);
	}
	return v;
}

/*
 * t with each \udcXX (XX 80 to ff) of a string turned back into the byte
 * memprobe wrote so (json.h: the kernel's bytes that are not UTF-8), for
 * cJSON, which refuses a lone surrogate. A pair's low half (\ud83d\udc80)
 * stays. NULL when there is none (t stands), or out of memory (*oom).
 */
static char *unescape_bytes(const char *t, size_t n, size_t *out_n, bool *oom)
{
	bool in_str = false, any = false;
	size_t k = 0;
	char *o;

	*oom = false;
	if (!memmem(t, n, "\\udc", 4) && !memmem(t, n, "\\uDC", 4) &&
	    !memmem(t, n, "\\uDc", 4) && !memmem(t, n, "\\udC", 4))
		return NULL;
	if (!(o = malloc(n + 1)))
		return *oom = true, NULL;
	for (size_t i = 0; i < n; i++) {
		long v;

		if (t[i] == '"' || !in_str || t[i] != '\\' || i + 1 >= n) {
			in_str ^= t[i] == '"';
			o[k++] = t[i];
			continue;
		}
		v = u_escape(t + i, n - i);
		if (v >= 0xdc80 && v <= 0xdcff) {
			o[k++] = (char)(v & 0xff);
			any = true;
			i += 5;
			continue;
		}
		/* another escape, copied whole: a high surrogate with its pair */
		size_t l = v >= 0xd800 && v <= 0xdbff && u_escape(t + i + 6, n - i - 6) >= 0 ? 12 :
			   v >= 0 ? 6 : 2;

		memcpy(o + k, t + i, l);
		k += l;
		i += l - 1;
	}
	o[k] = '\0';
	*out_n = k;
	if (!any) {
		free(o);
		return NULL;
	}
	return o;
}

/* The offset of the first byte of t that is not part of valid UTF-8, or n. */
static size_t utf8_bad_at(const char *t, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t l = mp_utf8_len((const unsigned char *)t + i, n - i);

		if (!l)
			return i;
		i += l;
	}
	return n;
}

cJSON *mp_doc_load(const char *text, size_t len, int *kind, char *err, size_t errlen)
{
	size_t bad, n2 = 0;
	bool oom;
	char *copy;
	cJSON *doc;

	/* the length alone refuses it (nothing past it is read); a NUL byte
	 * is said as such, before any other byte is judged */
	if (len > MP_DOC_MAX_BYTES || memchr(text, '\0', len))
		return load(text, len, kind, err, errlen);
	/* a document is UTF-8: memprobe writes the kernel's other bytes as
	 * \udcXX (json.h), and turns those back into the bytes here */
	if ((bad = utf8_bad_at(text, len)) < len) {
		err[0] = '\0';
		*kind = 0;
		snprintf(err, errlen, "byte %zu (0x%02x) is not UTF-8: not a memprobe document "
			 "(it writes such a byte as \\udc%02x); give a document memprobe wrote",
			 bad, (unsigned char)text[bad], (unsigned char)text[bad]);
		return NULL;
	}
	copy = unescape_bytes(text, len, &n2, &oom);
	if (oom) {
		*kind = -ENOMEM;
		snprintf(err, errlen, "out of memory; free some and try again");
		return NULL;
	}
	doc = load(copy ? copy : text, copy ? n2 : len, kind, err, errlen);
	free(copy);
	return doc;
}

static cJSON *load(const char *text, size_t len, int *kind, char *err, size_t errlen)
{
	struct lits l = { 0 };
	struct rawify w = { .text = text, .l = &l, .err = err, .errlen = errlen };
	const char *end = NULL;
	cJSON *doc = NULL;
	int ret;

	err[0] = '\0';
	*kind = 0;
	if (len > MP_DOC_MAX_BYTES) {
		snprintf(err, errlen, "%zu MiB: larger than a memprobe document can be (%llu MiB); "
			 "give a document memprobe wrote", len >> 20, MP_DOC_MAX_BYTES >> 20);
		return NULL;
	}
	if (count_values(text, len) > MP_DOC_MAX_VALUES) {
		snprintf(err, errlen, "more than %lu values: more than a memprobe document holds; "
			 "give a document memprobe wrote", MP_DOC_MAX_VALUES);
		return NULL;
	}
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "holds a NUL byte: not a JSON document; "
			 "give a document memprobe wrote");
		return NULL;
	}
	/* not cJSON's require_null_terminated: with a length it wants the NUL
	 * inside it; what follows the value is checked here instead */
	g_parse_oom = false;
	cJSON_InitHooks(&(cJSON_Hooks){ .malloc_fn = parse_malloc, .free_fn = free });
	doc = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!doc && g_parse_oom)
		*kind = -ENOMEM, snprintf(err, errlen, "out of memory reading it (%zu MiB of JSON); free some "
			 "memory, or give memprobe more, and try again", len >> 20);
	else if (!doc)
		parse_error(text, len, end, false, err, errlen);
	if (!doc)
		return NULL;
	while (end < text + len && isspace((unsigned char)*end))
		end++;
	if (end < text + len) {
		cJSON_Delete(doc);
		parse_error(text, len, end, true, err, errlen);
		return NULL;
	}
	ret = scan_numbers(text, len, &l);
	if (!ret)
		ret = rawify(&w, doc);
	if (!ret && w.next != l.n)
		ret = rawify_fail(&w, "its numbers do not parse alike twice");
	if (ret == -ENOMEM) {
		*kind = -ENOMEM;
		snprintf(err, errlen, "out of memory; free some and try again");
	}
	else if (ret && !strchr(err, ';'))
		mp_appendf(err, errlen, "; give a document memprobe wrote");
	if (!ret)
		ret = check_header(doc, kind, err, errlen);
	free(l.off);
	free(l.len);
	if (ret) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* ---- a built document, as the loader would make it -------------------------- */

size_t mp_doc_text_values(const char *text, size_t len)
{
	return count_values(text, len);
}

size_t mp_doc_values(const cJSON *it)
{
	size_t n = 1;

	if ((cJSON_IsArray(it) || cJSON_IsObject(it)) && !it->child)
		return 2; /* "[]": the bracket counts as a value would */
	for (const cJSON *c = it->child; c; c = c->next)
		n += mp_doc_values(c);
	return n;
}

struct adopt {
	struct rawify w;        /* err, errlen */
	size_t values;
	unsigned long long bytes; /* the pretty text's length, at most */
};

/* cJSON's parse_number, on a literal: what the loaded item holds. */
static void set_number(cJSON *it, const char *lit)
{
	double d = strtod(lit, NULL);

	it->valuedouble = d;
	it->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
}

/* A number item into the raw literal cJSON prints for it ("null" for NaN
 * and the infinities, which then load as null). */
static int adopt_number(struct adopt *a, cJSON *it)
{
	char *lit = cJSON_PrintUnformatted(it);

	if (!lit)
		return -ENOMEM;
	if (strcmp(lit, "null") == 0) {
		cJSON_free(lit);
		it->type = cJSON_NULL | (it->type & cJSON_StringIsConst);
		it->valuedouble = 0;
		it->valueint = 0;
		return 0;
	}
	if (!json_number(lit, strlen(lit))) {
		cJSON_free(lit);
		return rawify_fail(&a->w, "a number cJSON prints as no JSON number");
	}
	it->type = cJSON_Raw | (it->type & cJSON_StringIsConst);
	it->valuestring = lit;
	set_number(it, lit);
	return 0;
}

/* Bytes it and its name take in cJSON's pretty form at most (a string's
 * every byte escaped as \u00XX), depth tabs before it. */
static unsigned long long pretty_bytes(const cJSON *it, size_t depth)
{
	unsigned long long n = depth + 3; /* tabs, ",\n" */

	if (it->string)
		n += 6ULL * strlen(it->string) + 4;
	if (cJSON_IsString(it) || cJSON_IsRaw(it))
		n += (cJSON_IsString(it) ? 6ULL : 1ULL) * strlen(it->valuestring) + 2;
	else if (cJSON_IsArray(it) || cJSON_IsObject(it))
		n += depth + 4;
	else
		n += 5;
	return n;
}

static int adopt_item(struct adopt *a, cJSON *it, size_t depth)
{
	int err;

	if (cJSON_IsNumber(it) && (err = adopt_number(a, it)))
		return err;
	if (cJSON_IsRaw(it)) {
		if (!it->valuestring || !json_number(it->valuestring, strlen(it->valuestring)))
			return rawify_fail(&a->w, "'%.40s': not a JSON number",
					   it->valuestring ? it->valuestring : "(none)");
		set_number(it, it->valuestring);
	} else if (cJSON_IsTrue(it)) {
		it->valueint = 1;
	} else if (cJSON_IsString(it) && !it->valuestring) {
		return rawify_fail(&a->w, "a string with no text");
	} else if (cJSON_IsInvalid(it)) {
		return rawify_fail(&a->w, "an item of no type");
	}
	a->values++;
	a->bytes += pretty_bytes(it, depth);
	if (cJSON_IsArray(it) || cJSON_IsObject(it)) {
		const char *dup = NULL;

		if (depth >= CJSON_NESTING_LIMIT)
			return rawify_fail(&a->w, "nested deeper than %d levels", CJSON_NESTING_LIMIT);
		a->values += !it->child;
		if (cJSON_IsObject(it) && (err = dup_member(it, &dup)) == -EEXIST)
			return rawify_fail(&a->w, "member \"%.60s\" twice in one object", dup);
		if (err)
			return err;
	}
	for (cJSON *c = it->child; c; c = c->next)
		if ((err = adopt_item(a, c, depth + 1)))
			return err;
	return 0;
}

int mp_doc_adopt(cJSON *doc, int *kind, char *err, size_t errlen)
{
	struct adopt a = { .w = { .err = err, .errlen = errlen } };
	int ret;

	err[0] = '\0';
	*kind = 0;
	ret = adopt_item(&a, doc, 0);
	if (ret == -ENOMEM) {
		*kind = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		return ret;
	}
	if (ret)
		return ret;
	if (a.values > MP_DOC_MAX_VALUES) {
		snprintf(err, errlen, "more than %lu values (%zu): more than a memprobe document "
			 "holds", MP_DOC_MAX_VALUES, a.values);
		return -E2BIG;
	}
	/* the bound above is far off any document memprobe makes: printed
	 * only where it could be near */
	if (a.bytes > MP_DOC_MAX_BYTES) {
		char *t = cJSON_Print(doc);
		size_t len = t ? strlen(t) + 1 : 0;

		cJSON_free(t);
		if (!t)
			return *kind = -ENOMEM, snprintf(err, errlen, "out of memory"), -ENOMEM;
		if (len > MP_DOC_MAX_BYTES) {
			snprintf(err, errlen, "%zu MiB: larger than a memprobe document can be "
				 "(%llu MiB)", len >> 20, MP_DOC_MAX_BYTES >> 20);
			return -E2BIG;
		}
	}
	return check_header(doc, kind, err, errlen);
}

/* ---- reading ------------------------------------------------------------------ */

bool mp_rd_ok(const struct mp_rd *rd)
{
	return !rd->err[0];
}

/* Append the path from node down to target: "attribution.categories[3]". */
static bool path_to(const cJSON *node, const cJSON *target, char *buf, size_t len)
{
	size_t at = strlen(buf);
	int i = 0;

	if (node == target)
		return true;
	for (const cJSON *c = node->child; c; c = c->next, i++) {
		if (cJSON_IsArray(node))
			mp_appendf(buf, len, "[%d]", i);
		else
			mp_appendf(buf, len, "%s%s", at ? "." : "", c->string ? c->string : "?");
		if (path_to(c, target, buf, len))
			return true;
		buf[at] = '\0';
	}
	return false;
}

void mp_rd_fail(struct mp_rd *rd, const cJSON *obj, const char *name, const char *problem)
{
	char path[256] = "";

	if (rd->err[0])
		return;
	if (rd->root && obj)
		path_to(rd->root, obj, path, sizeof(path));
	if (name)
		mp_appendf(path, sizeof(path), "%s%s", path[0] ? "." : "", name);
	snprintf(rd->err, sizeof(rd->err), "%s: %s", path[0] ? path : "the document", problem);
}

static const char *what_is(const cJSON *it)
{
	if (cJSON_IsNull(it))
		return "null";
	if (cJSON_IsBool(it))
		return "true or false";
	if (cJSON_IsString(it))
		return "a string";
	if (cJSON_IsArray(it))
		return "an array";
	if (cJSON_IsObject(it))
		return "an object";
	return "a number";
}

/* The member, NULL when absent or null and allowed (or on a problem). */
static const cJSON *member(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags,
			   const char *want)
{
	const cJSON *it;
	char buf[96];

	if (!o || !mp_rd_ok(rd))
		return NULL;
	it = cJSON_GetObjectItemCaseSensitive(o, name);
	if (!it) {
		if (!(flags & MP_RD_ABSENT))
			mp_rd_fail(rd, o, name, "missing");
		return NULL;
	}
	if (cJSON_IsNull(it) && (flags & MP_RD_NULL))
		return NULL;
	if (want && strcmp(what_is(it), want) != 0) {
		snprintf(buf, sizeof(buf), "%s, not %s", what_is(it), want);
		mp_rd_fail(rd, o, name, buf);
		return NULL;
	}
	return it;
}

const cJSON *mp_rd_item(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	return member(rd, o, name, flags, NULL);
}

const cJSON *mp_rd_obj(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	return member(rd, o, name, flags, "an object");
}

const cJSON *mp_rd_arr(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	return member(rd, o, name, flags, "an array");
}

const char *mp_rd_str(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	const cJSON *it = member(rd, o, name, flags, "a string");

	if (it)
		return it->valuestring;
	return mp_rd_ok(rd) && (flags & (MP_RD_NULL | MP_RD_ABSENT)) ? NULL : "";
}

bool mp_rd_bool(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	return cJSON_IsTrue(member(rd, o, name, flags, "true or false"));
}

/* An integer item: a raw literal of digits, or a double that is one. */
static int item_int(const cJSON *it, bool sign, uint64_t *u, int64_t *s)
{
	const char *t = cJSON_IsRaw(it) ? it->valuestring : NULL;
	char *end;

	if (!t) {
		double d = it->valuedouble;

		if (!cJSON_IsNumber(it) || d != floor(d) || fabs(d) > 9007199254740992.0 ||
		    (!sign && d < 0))
			return -EINVAL;
		*u = (uint64_t)d;
		*s = (int64_t)d;
		return 0;
	}
	if (t[t[0] == '-'] == '\0' || strspn(t + (t[0] == '-'), "0123456789") !=
					   strlen(t + (t[0] == '-')))
		return -EINVAL;
	if (!sign && t[0] == '-')
		return -EDOM;
	errno = 0;
	if (sign)
		*s = strtoll(t, &end, 10);
	else
		*u = strtoull(t, &end, 10);
	return errno == ERANGE ? -ERANGE : 0;
}

static bool read_int(struct mp_rd *rd, const cJSON *it, const cJSON *o, const char *name,
		     bool sign, uint64_t *u, int64_t *s)
{
	int err;

	if (!it)
		return false;
	if (!cJSON_IsNumber(it) && !cJSON_IsRaw(it)) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%s, not an integer", what_is(it));
		mp_rd_fail(rd, o, name, buf);
		return false;
	}
	err = item_int(it, sign, u, s);
	if (err)
		mp_rd_fail(rd, name ? o : it, name,
			   err == -ERANGE ? (sign ? "an integer beyond 64 bits (signed)"
						  : "an integer beyond 64 bits") :
			   err == -EDOM ? "negative, not a count" : "not an integer");
	return !err;
}

bool mp_rd_u64(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags, uint64_t *v)
{
	int64_t s;

	*v = 0;
	return read_int(rd, member(rd, o, name, flags, NULL), o, name, false, v, &s);
}

bool mp_rd_s64(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags, int64_t *v)
{
	uint64_t u;

	*v = 0;
	return read_int(rd, member(rd, o, name, flags, NULL), o, name, true, &u, v);
}

uint64_t mp_rd_u64v(struct mp_rd *rd, const cJSON *o, const char *name)
{
	uint64_t v;

	mp_rd_u64(rd, o, name, 0, &v);
	return v;
}

int64_t mp_rd_s64v(struct mp_rd *rd, const cJSON *o, const char *name)
{
	int64_t v;

	mp_rd_s64(rd, o, name, 0, &v);
	return v;
}

const char *mp_rd_num(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags)
{
	const cJSON *it = member(rd, o, name, flags, NULL);

	if (!it)
		return mp_rd_ok(rd) && (flags & (MP_RD_NULL | MP_RD_ABSENT)) ? NULL : "0";
	if (!cJSON_IsRaw(it)) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%s, not a number", what_is(it));
		mp_rd_fail(rd, o, name, buf);
		return "0";
	}
	return it->valuestring;
}

bool mp_rd_is_obj(struct mp_rd *rd, const cJSON *it)
{
	char buf[64];

	if (!mp_rd_ok(rd))
		return false;
	if (cJSON_IsObject(it))
		return true;
	snprintf(buf, sizeof(buf), "%s, not an object", what_is(it));
	mp_rd_fail(rd, it, NULL, buf);
	return false;
}

const char *mp_rd_elem_str(struct mp_rd *rd, const cJSON *it)
{
	char buf[64];

	if (!mp_rd_ok(rd))
		return "";
	if (cJSON_IsString(it))
		return it->valuestring;
	snprintf(buf, sizeof(buf), "%s, not a string", what_is(it));
	mp_rd_fail(rd, it, NULL, buf);
	return "";
}

bool mp_rd_elem_u64(struct mp_rd *rd, const cJSON *it, uint64_t *v)
{
	int64_t s;

	*v = 0;
	if (!mp_rd_ok(rd))
		return false;
	return read_int(rd, it, it, NULL, false, v, &s);
}

/* ---- files --------------------------------------------------------------------- */

/* The whole of fd, at most MP_DOC_MAX_BYTES: 0, -EFBIG beyond, or -errno. */
static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = cap > MP_DOC_MAX_BYTES ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return cap > MP_DOC_MAX_BYTES ? -EFBIG : -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(b);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > MP_DOC_MAX_BYTES) {
			free(b);
			return -EFBIG;
		}
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* What a file that is not a regular one is, for the message; NULL: read it.
 * Standard input may be a pipe or a terminal (`... | memprobe report -`). */
static const char *not_a_file(const struct stat *st, bool in)
{
	if (S_ISREG(st->st_mode))
		return NULL;
	if (S_ISDIR(st->st_mode))
		return "a directory, not a document";
	if (in && (S_ISFIFO(st->st_mode) || isatty(STDIN_FILENO)))
		return NULL;
	if (S_ISFIFO(st->st_mode))
		return "a FIFO, not a document (memprobe reads a pipe as -, standard input)";
	if (S_ISCHR(st->st_mode))
		return "a character device, not a document";
	if (S_ISBLK(st->st_mode))
		return "a block device, not a document";
	if (S_ISSOCK(st->st_mode))
		return "a socket, not a document";
	return "not a regular file";
}

cJSON *mp_doc_load_file(const char *path, int *kind, char *err, size_t errlen)
{
	bool in = strcmp(path, "-") == 0;
	const char *what;
	char *text = NULL;
	struct stat st;
	size_t len = 0;
	cJSON *doc;
	int fd, ret;

	*kind = 0;
	/* O_NONBLOCK: opening a FIFO waits for a writer, which may never come */
	fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return snprintf(err, errlen, "cannot open it (%s); give the path of a saved document",
				strerror(errno)), NULL;
	if (fstat(fd, &st))
		ret = -errno, what = NULL;
	else if ((what = not_a_file(&st, in)) || (S_ISREG(st.st_mode) &&
						 (uint64_t)st.st_size > MP_DOC_MAX_BYTES))
		ret = what ? -EINVAL : -EFBIG;
	else
		ret = read_all(fd, &text, &len);
	if (!in)
		close(fd);
	if (ret) {
		if (ret == -ENOMEM)
			*kind = -ENOMEM;
		snprintf(err, errlen, "%s; give a document memprobe wrote",
			 what ? what : ret == -EFBIG ? "larger than a memprobe document can be (" MP_STR(MP_DOC_MAX_MIB) " MiB)" :
			 ret == -EISDIR ? "a directory, not a document" : strerror(-ret));
		return NULL;
	}
	doc = mp_doc_load(text, len, kind, err, errlen);
	free(text);
	return doc;
}
