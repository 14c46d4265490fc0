// SPDX-License-Identifier: GPL-2.0
/*
 * The vocabulary (vocab.h): every concern and category named once, with a
 * meaning; the overhead's parts and the pinned kinds as overhead.c and
 * pinned_doc.c name them; the schema's concern and pinned lists are the
 * vocabulary's, in its order; the charts' colours are the vocabulary's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "attr.h"
#include "overhead.h"
#include "pinned.h"
#include "render_html.h"
#include "util.h"
#include "vocab.h"

#define SCHEMA FIXTURES "/../../docs/report.schema.json"

static void schema_pin_kinds(const cJSON *schema);

static void schema_concerns(void)
{
	static char text[1 << 20];
	const cJSON *list, *it;
	cJSON *schema;
	int n = 0;

	CHECK(mp_read_file(SCHEMA, text, sizeof(text)) > 0, "read %s", SCHEMA);
	schema = cJSON_Parse(text);
	list = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(schema, "$defs"),
						       "concern"), "enum");
	CHECK(cJSON_IsArray(list), "the schema's $defs.concern.enum is a list");
	cJSON_ArrayForEach(it, list) {
		CHECK(n < MP_NR_CONCERNS && cJSON_IsString(it) &&
		      !strcmp(it->valuestring, mp_concerns[n].id),
		      "schema concern %d: %s, the vocabulary's %s", n,
		      cJSON_IsString(it) ? it->valuestring : "?",
		      n < MP_NR_CONCERNS ? mp_concerns[n].id : "(none)");
		n++;
	}
	CHECK(n == MP_NR_CONCERNS, "schema concerns: %d, the vocabulary's %d", n, MP_NR_CONCERNS);
	schema_pin_kinds(schema);
	cJSON_Delete(schema);
}

/* The schema's object member "category" whose enum lists "pinned" (the
 * pinned object's tasks): the pinned kinds, then "pinned". */
static const cJSON *find_pinned_enum(const cJSON *j)
{
	const cJSON *c, *e, *it;

	if (!cJSON_IsObject(j) && !cJSON_IsArray(j))
		return NULL;
	c = cJSON_IsObject(j) ? cJSON_GetObjectItem(j, "category") : NULL;
	if ((e = c ? cJSON_GetObjectItem(c, "enum") : NULL))
		cJSON_ArrayForEach(it, e)
			if (cJSON_IsString(it) && !strcmp(it->valuestring, "pinned"))
				return e;
	cJSON_ArrayForEach(it, j)
		if ((e = find_pinned_enum(it)))
			return e;
	return NULL;
}

static void schema_pin_kinds(const cJSON *schema)
{
	const cJSON *e = find_pinned_enum(schema), *it;
	int n = 0;

	CHECK(e != NULL, "the schema's pinned tasks' category list");
	cJSON_ArrayForEach(it, e) {
		const char *want = n < MP_NR_PIN_KINDS ? mp_pin_kinds[n].id : "pinned";

		CHECK(cJSON_IsString(it) && !strcmp(it->valuestring, want),
		      "schema pinned category %d: %s, the vocabulary's %s", n,
		      cJSON_IsString(it) ? it->valuestring : "?", want);
		n++;
	}
	CHECK(n == MP_NR_PIN_KINDS + 1, "schema pinned categories: %d, want %d", n,
	      MP_NR_PIN_KINDS + 1);
}

static void parts_and_kinds(void)
{
	for (int i = 0; i < MP_OVH_NR_CATS - MP_NR_CATS; i++) {
		const char *id = mp_overhead_parts[i].id;

		CHECK(id && mp_overhead_parts[i].meaning && mp_overhead_parts[i].meaning[0],
		      "overhead part %d: id and meaning", i);
		CHECK(!strcmp(mp_overhead_cat_name(MP_NR_CATS + i), id),
		      "overhead part %s: overhead.c names it so", id);
		for (int c = 0; c < MP_NR_CATS; c++)
			CHECK(strcmp(id, mp_cat_names[c]), "overhead part %s is a category's name", id);
	}
	CHECK(!strcmp(mp_overhead_cat_name(MP_OVH_KERNEL_OTHER), "kernel_other") &&
	      !strcmp(mp_overhead_cat_name(MP_OVH_PAGE_CACHE), "page_cache") &&
	      !strcmp(mp_overhead_cat_name(MP_OVH_ANON_UNMAPPED), "anon_unmapped") &&
	      MP_OVH_NR_CATS == MP_NR_CATS + 3, "the overhead parts' indices as before");
	for (int k = 0; k < MP_NR_PIN_KINDS; k++)
		CHECK(mp_pin_kind_names[k] == mp_pin_kinds[k].id && mp_pin_kinds[k].meaning,
		      "pinned kind %d: one name, a meaning", k);
	CHECK(!strcmp(mp_pin_kind_names[MP_PIN_SHMEM], "shmem") &&
	      !strcmp(mp_pin_kind_names[MP_PIN_ANON], "anon") &&
	      !strcmp(mp_pin_kind_names[MP_PIN_FILE], "file"), "the pinned kinds as before");
}

int main(void)
{
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		CHECK(mp_concerns[c].id && mp_concerns[c].name && mp_concerns[c].meaning &&
		      mp_concerns[c].meaning[0], "concern %d: id, name and meaning", c);
		for (int d = 0; d < c; d++)
			CHECK(strcmp(mp_concerns[c].id, mp_concerns[d].id), "concern id %s twice",
			      mp_concerns[c].id);
	}
	for (int c = 0; c < MP_NR_CATS; c++) {
		CHECK(mp_cat_names[c] == mp_cats[c].name, "category %d: one name", c);
		CHECK(mp_cat_meaning(c) && mp_cat_meaning(c)[0], "category %s: a meaning",
		      mp_cat_names[c]);
		CHECK(!strcmp(mp_html_colour(mp_cat_names[c]), mp_vocab_colour(mp_cat_names[c])),
		      "category %s: the charts' colour is the vocabulary's", mp_cat_names[c]);
		for (int d = 0; d < c; d++)
			CHECK(strcmp(mp_cat_names[c], mp_cat_names[d]), "category %s twice",
			      mp_cat_names[c]);
	}
	/* the colours the page had before the vocabulary held them */
	CHECK_STR(mp_vocab_colour("anon"), "#4e79a7", "anon's colour");
	CHECK_STR(mp_vocab_colour("page_cache"), "#59a14f", "page_cache: file's colour");
	CHECK_STR(mp_vocab_colour("kernel_other"), "#bab0ac", "kernel_other's colour");
	CHECK_STR(mp_vocab_colour("anon_thp"), "#79706e", "no colour of its own: grey");
	CHECK(mp_cat_meaning(-1) == NULL && mp_cat_meaning(MP_NR_CATS) == NULL,
	      "no meaning out of range");
	parts_and_kinds();
	schema_concerns();
	return unit_done("vocab");
}
