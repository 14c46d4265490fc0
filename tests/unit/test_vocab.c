// SPDX-License-Identifier: GPL-2.0
/*
 * The vocabulary (vocab.h): every concern and category named once, with a
 * meaning; the schema's concern list is the vocabulary's, in its order; the
 * charts' colours are the vocabulary's.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "attr.h"
#include "render_html.h"
#include "util.h"
#include "vocab.h"

#define SCHEMA FIXTURES "/../../docs/report.schema.json"

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
	cJSON_Delete(schema);
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
	schema_concerns();
	return unit_done("vocab");
}
