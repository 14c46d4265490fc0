/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The document model: every JSON document memprobe writes is built here,
 * and every document `memprobe report` reads is loaded and checked here.
 * docs/report-format.md describes the fields, docs/report.schema.json is
 * their schema.
 */
#ifndef MEMPROBE_DOC_H
#define MEMPROBE_DOC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"

/* Bumped only on a breaking change: a field removed, renamed or retyped. */
#define MP_FORMAT_VERSION 1

/* The kinds of document, as bits (a renderer takes a set of them). */
enum mp_doc_kind {
	MP_DOC_LIMITS = 1 << 0,
	MP_DOC_FEATURES = 1 << 1,
	MP_DOC_PROBE = 1 << 2,
	MP_DOC_RECORD = 1 << 3,
	MP_DOC_BUDGET = 1 << 4,
	/* memprobe compare's: text, json, markdown and csv hand it to
	 * compare_render.c */
	MP_DOC_COMPARE = 1 << 5,
};
#define MP_DOC_ALL (MP_DOC_LIMITS | MP_DOC_FEATURES | MP_DOC_PROBE | MP_DOC_RECORD | MP_DOC_BUDGET | \
		    MP_DOC_COMPARE)

/* "limits" -> MP_DOC_LIMITS; 0 for a name that is no kind. */
int mp_doc_kind(const char *name);
const char *mp_doc_kind_name(int kind);

/* The host object of the header. */
cJSON *mp_host_json(const struct mp_host *h);
/* A cgroup's limits (caller frees). */
cJSON *mp_cgroup_json(const struct mp_cgroup *cg);

/*
 * A new document of kind ("limits", "features", "probe", "record") with
 * the header every document starts with: format_version, kind, generator,
 * created (now, RFC 3339 UTC) and host (h and the live host's facts).
 * The caller adds the kind's members and frees it.
 */
cJSON *mp_doc_new(const char *kind, const struct mp_host *h);

/* `memprobe limits`: the header and the cgroup. */
cJSON *mp_doc_limits(const struct mp_host *h, const struct mp_cgroup *cg);

/* ---- loading ----------------------------------------------------------------- */

/*
 * Parse a document's text (len bytes, no NUL needed). Every number becomes
 * a raw item holding its literal text, so integers beyond 2^53 stay exact
 * and print back as they were read. Checks the header (format_version,
 * kind, generator, created, host); the kind's members are checked as the
 * renderers read them (struct mp_rd). Returns the document and its kind,
 * or NULL with the problem in err ("format_version 2: newer than ...")
 * and *kind 0, or -ENOMEM when memory ran out (not the document's fault).
 */
cJSON *mp_doc_load(const char *text, size_t len, int *kind, char *err, size_t errlen);

/*
 * The most a document may be, so that no file makes memprobe take memory
 * without bound: 256 MiB of text and 4 Mi values (each parsed value costs
 * cJSON about 64 bytes). One bound for both sides: the loader refuses
 * more, and mp_doc_adopt checks every document memprobe writes against
 * the same figures before it is rendered or saved. A record's timeline is
 * bounded (timeline.h: MP_TL_MAX_VALUES, checked against these in
 * record_doc.c); before it was, a record kept every sample and one of
 * about 6 hours at 100 ms passed these, so older documents are within them.
 */
#define MP_DOC_MAX_MIB 256
#define MP_DOC_MAX_BYTES ((unsigned long long)MP_DOC_MAX_MIB << 20)
#define MP_DOC_MAX_VALUES (4UL << 20)

/*
 * A document memprobe built, made what mp_doc_load makes of its printed
 * text, in place and without printing it: every number item a raw item
 * holding the literal cJSON prints for it (NaN and the infinities null),
 * each raw literal checked to be a JSON number, a member name twice in an
 * object, nesting beyond cJSON's limit, the bounds above and the header
 * and byte counts checked as the loader checks them. Rendering the result
 * gives the bytes rendering the loaded text would: live output equals
 * `memprobe report` of the JSON by construction, with the document held
 * once (tests/unit/test_adopt.c renders both ways). Returns 0 with *kind,
 * or -errno with the problem in err (*kind -ENOMEM when memory ran out).
 */
int mp_doc_adopt(cJSON *doc, int *kind, char *err, size_t errlen);

/* The values the loader counts against MP_DOC_MAX_VALUES: in a tree (every
 * item, and an empty object or array once more) and in a text. */
size_t mp_doc_values(const cJSON *doc);
size_t mp_doc_text_values(const char *text, size_t len);

/*
 * Read and load the document in the file at path ("-": standard input):
 * only a regular file (or a pipe, a tty on standard input) of at most
 * MP_DOC_MAX_BYTES, so a directory, a FIFO or /dev/zero is one line and
 * never a hang. NULL with the problem in err ("a directory, not a
 * document; ..."; the caller names the file) and *kind -ENOMEM when
 * memory ran out (a failure, not the file's fault).
 */
cJSON *mp_doc_load_file(const char *path, int *kind, char *err, size_t errlen);

/*
 * Reading a loaded document. Every accessor checks the member's type; the
 * first problem is kept in err, named by its path in the document
 * ("attribution.categories[3].growth_bytes: not an integer"), and from then
 * on accessors return defaults (0, "", NULL), so a renderer reads on and
 * its output is thrown away. A NULL object (a parent that failed) reads as
 * defaults without a second complaint.
 */
struct mp_rd {
	const cJSON *root;
	char err[320];
};

/* Flags: the member may be null / may be absent. */
#define MP_RD_NULL 1u
#define MP_RD_ABSENT 2u

bool mp_rd_ok(const struct mp_rd *rd);
/* Record a problem at obj (or its member name, when not NULL). */
void mp_rd_fail(struct mp_rd *rd, const cJSON *obj, const char *name, const char *problem);

/* The member itself, of any type; NULL when absent (and then a problem
 * unless flags allow it). */
const cJSON *mp_rd_item(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
const cJSON *mp_rd_obj(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
const cJSON *mp_rd_arr(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
/* A string: "" on a problem, NULL when null or absent and allowed. */
const char *mp_rd_str(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
bool mp_rd_bool(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
/* Integers: true with *v set, false when null/absent (allowed) or on a problem. */
bool mp_rd_u64(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags, uint64_t *v);
bool mp_rd_s64(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags, int64_t *v);
/* Required integers, 0 on a problem. */
uint64_t mp_rd_u64v(struct mp_rd *rd, const cJSON *o, const char *name);
int64_t mp_rd_s64v(struct mp_rd *rd, const cJSON *o, const char *name);
/* Any number, as the literal text the document holds ("0.12"); NULL when
 * null/absent and allowed, "0" on a problem. */
const char *mp_rd_num(struct mp_rd *rd, const cJSON *o, const char *name, unsigned flags);
/* An element of an array as an object, string or integer. */
bool mp_rd_is_obj(struct mp_rd *rd, const cJSON *it);
const char *mp_rd_elem_str(struct mp_rd *rd, const cJSON *it);
bool mp_rd_elem_u64(struct mp_rd *rd, const cJSON *it, uint64_t *v);

#endif
