// SPDX-License-Identifier: GPL-2.0
/* The view layer (views.c): the rules about which rows a table shows, on a
 * real probe document (tests/fixtures/html/probe-pinned.json). */
#include <cjson/cJSON.h>
#include <string.h>

#include "doc.h"
#include "render.h"
#include "util.h"
#include "views.h"
#include "unit.h"

static void test_pct(void)
{
	CHECK(mp_view_pct(-0.04) == 0.0, "-0.04%% prints as 0");
	CHECK(mp_view_pct(0.049) == 0.0, "0.049%% prints as 0");
	CHECK(mp_view_pct(0.05) == 0.05, "0.05%% stays");
	CHECK(mp_view_pct(-12.5) == -12.5, "-12.5%% stays");
}

static void test_cats(void)
{
	char err[512], tasks[200] = "[";
	int kind = 0;
	cJSON *doc = mp_doc_load_file(FIXTURES "/html/probe-pinned.json", &kind, err, sizeof(err));
	cJSON *a = cJSON_GetObjectItem(doc, "attribution"), *anon;
	struct mp_rd rd = { .root = doc };
	struct mp_view_cats v;

	CHECK(doc && kind == MP_DOC_PROBE, "the fixture loads: %s", doc ? "" : err);
	if (!doc)
		return;
	/* anon with five tasks: the view keeps the top three */
	for (int i = 0; i < 5; i++)
		mp_appendf(tasks, sizeof(tasks), "%s{\"pid\":%d,\"comm\":\"t%d\",\"bytes\":%d}",
			   i ? "," : "", 100 + i, i, 5 - i);
	mp_appendf(tasks, sizeof(tasks), "]");
	anon = cJSON_GetArrayItem(cJSON_GetObjectItem(a, "categories"), 0);
	cJSON_ReplaceItemInObject(anon, "tasks", cJSON_Parse(tasks));
	CHECK(mp_doc_adopt(doc, &kind, err, sizeof(err)) == 0, "adopted again: %s", err);
	CHECK(mp_view_cats(a, &rd, mp_fmt_sbytes, &v) == 0, "the view builds: %s", rd.err);
	/* 16 categories, 11 with no growth and nothing left after */
	CHECK(v.n == 5, "5 rows shown, not %d", v.n);
	CHECK_STR(v.n ? v.rows[0].name : "", "anon", "the first row");
	CHECK(v.n && v.rows[0].ntasks == MP_VIEW_TOP_TASKS, "anon's tasks: %d",
	      v.n ? v.rows[0].ntasks : -1);
	CHECK(v.n && v.rows[0].tasks[2].bytes == 3, "the third task's bytes");
	CHECK_STR(v.n ? v.rows[4].name : "", "kernel_other", "a negative row is shown");
	CHECK(v.share_shown && v.unattributed_pct == 0.0,
	      "-12 KiB of 637 MiB unattributed: a share, printed as 0 (%g)", v.unattributed_pct);
	CHECK(v.has_unmapped && v.unmapped == 0, "anon unmapped given");
	mp_view_cats_free(&v);
	cJSON_Delete(doc);
}

int main(void)
{
	test_pct();
	test_cats();
	return unit_done("views");
}
