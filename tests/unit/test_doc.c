// SPDX-License-Identifier: GPL-2.0
/*
 * The document loader and the renderers on hand-written small documents:
 * the header checked, every field a renderer reads checked and named by
 * its path, integers kept exact (2^53 + 1, 2^64 - 1), a saved document
 * printed back byte for byte, and the host facts the header reads.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "json.h"
#include "render.h"
#include "unit.h"
#include "util.h"

#define HEADER(kind) \
	"{\n\t\"format_version\":\t1,\n\t\"kind\":\t\"" kind "\",\n" \
	"\t\"generator\":\t{\n\t\t\"name\":\t\"memprobe\",\n\t\t\"version\":\t\"v1.2-3-gabc\"\n\t},\n" \
	"\t\"created\":\t\"2026-12-01T10:23:01Z\",\n" \
	"\t\"host\":\t{\n\t\t\"hostname\":\t\"box\",\n\t\t\"kernel_release\":\t\"6.18.0\",\n" \
	"\t\t\"distribution\":\tnull,\n\t\t\"cpus\":\t4,\n" \
	"\t\t\"mem_total_bytes\":\t9007199254740993,\n\t\t\"mem_available_bytes\":\t1073741824,\n" \
	"\t\t\"page_size_bytes\":\t4096,\n\t\t\"thp_enabled\":\t\"madvise\",\n" \
	"\t\t\"thp_defrag\":\tnull,\n\t\t\"btf\":\ttrue,\n\t\t\"cgroup_mode\":\t\"v2\"\n\t}"

/* A limits document as memprobe prints it (cJSON's pretty form). */
static const char limits_doc[] = HEADER("limits") ",\n"
	"\t\"cgroup\":\t{\n\t\t\"path\":\t\"/job's\",\n\t\t\"dir\":\t\"/sys/fs/cgroup/job's\",\n"
	"\t\t\"version\":\t\"v2\",\n\t\t\"host_root\":\tfalse,\n\t\t\"limit_bytes\":\tnull,\n"
	"\t\t\"effective_limit_bytes\":\t9007199254740993,\n"
	"\t\t\"effective_limit_from\":\t\"MemTotal\",\n\t\t\"high_bytes\":\tnull,\n"
	"\t\t\"usage_bytes\":\t18446744073709551615,\n\t\t\"peak_bytes\":\tnull,\n"
	"\t\t\"headroom_bytes\":\t1073741824,\n\t\t\"headroom_from\":\t\"MemAvailable\"\n\t}\n}\n";

static char *render(const char *text, const char *format, char *err, size_t errlen)
{
	const struct mp_renderer *r = mp_renderer_find(format);
	char *out = NULL;
	size_t len;
	int kind;
	cJSON *doc = mp_doc_load(text, strlen(text), &kind, err, errlen);

	if (!doc)
		return NULL;
	if (!r || !(r->kinds & kind) || mp_render_mem(r, doc, kind, &out, &len, err, errlen))
		out = NULL;
	cJSON_Delete(doc);
	return out;
}

/* text with the first "from" replaced by "to" (a hand-broken document) */
static char *broken(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	char *s;

	if (!at || asprintf(&s, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from)) < 0)
		return NULL;
	return s;
}

/* The load or the render of a broken document fails, saying want. */
static void expect_refused(const char *text, const char *format, const char *want,
			   const char *what)
{
	char err[512] = "", *out = text ? render(text, format, err, sizeof(err)) : NULL;

	CHECK(text && !out && strstr(err, want), "%s: got '%s', want '%s'", what,
	      out ? "(rendered)" : err, want);
	free(out);
}

static void test_round_trip(void)
{
	char err[512], *out;

	out = render(limits_doc, "json", err, sizeof(err));
	CHECK_STR(out, limits_doc, "json: the saved document back, byte for byte (2^53+1, 2^64-1)");
	free(out);
	out = render(limits_doc, "env", err, sizeof(err));
	CHECK(out && strstr(out, "MEMPROBE_USAGE_BYTES=18446744073709551615\n") &&
	      strstr(out, "MEMPROBE_MEM_TOTAL_BYTES=9007199254740993\n") &&
	      strstr(out, "MEMPROBE_LIMIT_BYTES=max\n") && strstr(out, "MEMPROBE_HIGH_BYTES=max\n") &&
	      !strstr(out, "PEAK") && strstr(out, "MEMPROBE_CGROUP_PATH='/job'\\''s'\n"),
	      "env: exact integers, max for null, no peak, quoted: %s", out ? out : err);
	free(out);
	out = render(limits_doc, "text", err, sizeof(err));
	CHECK(out && strstr(out, "(9007199254740993 bytes), set by MemTotal\n") &&
	      strstr(out, "  THP                 enabled=madvise defrag=n/a\n") &&
	      strstr(out, "  memory.high         max\n") && !strstr(out, "  peak "),
	      "text: from the document: %s", out ? out : err);
	free(out);
}

/* A live document: built with cJSON's doubles and raw items, through mp_emit. */
static void test_emit(void)
{
	struct mp_host h = { .mem_total_bytes = 1ULL << 40, .page_size = 4096,
			     .kernel_release = "6.18.0", .cg_mode = MP_CG_V2 };
	struct mp_cgroup cg = { .version = 2, .path = "/a \"b\"\n", .dir = "/sys/fs/cgroup/a",
				.limit_bytes = MP_UNLIMITED, .effective_limit_bytes = 1ULL << 40,
				.effective_from = "MemTotal", .usage_bytes = 9007199254740993ULL,
				.headroom_from = "MemAvailable" };
	cJSON *doc = mp_doc_limits(&h, &cg);
	char *json = cJSON_Print(doc), *buf = NULL, err[512];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int kind;
	cJSON *back;

	CHECK_EQ_INT(mp_emit("unit", doc, "json", f, NULL), 0, "mp_emit json");
	fclose(f);
	CHECK(json && buf && strlen(buf) == strlen(json) + 1 && !strncmp(buf, json, strlen(json)),
	      "mp_emit json = the document printed, and a newline");
	back = mp_doc_load(buf, len, &kind, err, sizeof(err));
	CHECK(back && kind == MP_DOC_LIMITS, "the emitted document loads: %s", back ? "" : err);
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "cgroup"), "usage_bytes")->valuestring,
		  "9007199254740993", "a raw literal: 2^53 + 1 kept");
	CHECK_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "cgroup"), "path")->valuestring,
		  "/a \"b\"\n", "escapes read back");
	CHECK(cJSON_IsRaw(cJSON_GetObjectItem(cJSON_GetObjectItem(back, "host"), "cpus")),
	      "a number cJSON printed from a double is read back as its literal too");
	cJSON_Delete(back);
	free(buf);
	cJSON_free(json); /* doc: mp_emit freed it */
}

/* Two trees item for item: type, name, literal, valueint, valuedouble. */
static bool same_tree(const cJSON *a, const cJSON *b)
{
	for (; a && b; a = a->next, b = b->next) {
		if ((a->type & 0xff) != (b->type & 0xff) || !a->string != !b->string ||
		    (a->string && strcmp(a->string, b->string)) ||
		    !a->valuestring != !b->valuestring ||
		    (a->valuestring && strcmp(a->valuestring, b->valuestring)) ||
		    a->valueint != b->valueint ||
		    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) ||
		    !same_tree(a->child, b->child))
			return false;
	}
	return !a && !b;
}

/*
 * mp_doc_adopt makes of a built document what the loader makes of its
 * printed text, item for item: numbers cJSON prints from doubles (0.1,
 * 1e300, -0, NaN as null), raw literals, escapes; so rendering one or the
 * other is the same by construction. What the loader refuses, it refuses.
 */
static void test_adopt(void)
{
	struct mp_host h = { .mem_total_bytes = 1ULL << 40, .page_size = 4096,
			     .kernel_release = "6.18.0", .cg_mode = MP_CG_V2, .cpus = 3 };
	struct mp_cgroup cg = { .version = 2, .path = "/a \"b\"\n\x01", .dir = "/sys/fs/cgroup/a",
				.limit_bytes = MP_UNLIMITED, .effective_limit_bytes = 1ULL << 40,
				.effective_from = "MemTotal", .usage_bytes = 18446744073709551615ULL,
				.headroom_from = "MemAvailable" };
	cJSON *doc = mp_doc_limits(&h, &cg), *x = cJSON_AddObjectToObject(doc, "x"), *back;
	char err[512], err2[512], *text;
	int kind = 0, kind2 = 0;

	cJSON_AddNumberToObject(x, "tenth", 0.1);
	cJSON_AddNumberToObject(x, "huge", 1e300);
	cJSON_AddNumberToObject(x, "minus_zero", -0.0);
	/* NaN set by hand: cJSON_CreateNumber(NAN) casts it to an int */
	cJSON_AddNumberToObject(x, "nan", 0)->valuedouble = NAN;
	cJSON_AddNumberToObject(x, "big_int", 4294967296.0);
	cJSON_AddArrayToObject(x, "empty");
	cJSON_AddTrueToObject(x, "yes");
	text = cJSON_Print(doc);
	back = text ? mp_doc_load(text, strlen(text), &kind, err, sizeof(err)) : NULL;
	CHECK(back, "the built document loads: %s", err);
	CHECK_U64(mp_doc_values(doc), mp_doc_text_values(text, strlen(text)),
		  "values: the tree's count is the text's");
	CHECK_EQ_INT(mp_doc_adopt(doc, &kind2, err2, sizeof(err2)), 0, "adopted: %s", err2);
	CHECK_EQ_INT(kind2, kind, "adopted: %s", err2);
	CHECK(back && same_tree(doc, back), "adopted = loaded, item for item");
	cJSON_Delete(back);
	cJSON_free(text);
	/* what the loader refuses, adopt refuses */
	cJSON_AddItemToObject(x, "nan_raw", cJSON_CreateRaw("nan"));
	CHECK(mp_doc_adopt(doc, &kind2, err2, sizeof(err2)) && strstr(err2, "'nan': not a JSON number"),
	      "a raw literal that is no JSON number: %s", err2);
	cJSON_DeleteItemFromObject(x, "nan_raw");
	cJSON_AddItemToObject(x, "yes", cJSON_CreateFalse());
	CHECK(mp_doc_adopt(doc, &kind2, err2, sizeof(err2)) && strstr(err2, "\"yes\" twice"),
	      "a member twice: %s", err2);
	cJSON_DeleteItemFromObject(x, "yes");
	cJSON_DeleteItemFromObject(x, "yes");
	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "cgroup"), "headroom_bytes");
	cJSON_AddRawToObject(cJSON_GetObjectItem(doc, "cgroup"), "headroom_bytes", "-1");
	CHECK(mp_doc_adopt(doc, &kind2, err2, sizeof(err2)) &&
	      strstr(err2, "cgroup.headroom_bytes: negative, not a count"),
	      "the loader's field checks: %s", err2);
	cJSON_Delete(doc);
}

static void test_header(void)
{
	char *s;

	expect_refused(s = broken(limits_doc, "\t\"format_version\":\t1,\n", ""), "text",
		       "no format_version: not a memprobe document", "no format_version");
	free(s);
	expect_refused(s = broken(limits_doc, "\"format_version\":\t1", "\"format_version\":\t2"),
		       "text", "format_version 2: newer than this memprobe reads (1)", "newer");
	free(s);
	expect_refused(s = broken(limits_doc, "\"format_version\":\t1", "\"format_version\":\t0"),
		       "text", "format_version is not a version", "version 0");
	free(s);
	expect_refused(s = broken(limits_doc, "\"limits\"", "\"sandwich\""), "text",
		       "kind 'sandwich': unknown", "unknown kind");
	free(s);
	expect_refused(s = broken(limits_doc, "\"name\":\t\"memprobe\"", "\"name\":\t7"), "text",
		       "generator.name: a number, not a string", "generator.name a number");
	free(s);
	expect_refused(s = broken(limits_doc, "10:23:01Z", "10:23"), "text",
		       "created: not an RFC 3339 time", "created not RFC 3339");
	free(s);
	expect_refused(s = broken(limits_doc, "\t\t\"cpus\":\t4,\n", ""), "text",
		       "host.cpus: missing", "host.cpus missing");
	free(s);
	expect_refused("[1, 2]", "text", "JSON, but not an object", "an array");
	expect_refused("", "text", "empty: not a document", "empty");
	expect_refused(" \n\t", "text", "empty: not a document", "blank");
}

static void test_json_text(void)
{
	char *s, big[sizeof(limits_doc) + 8];

	snprintf(big, sizeof(big), "%.*s", (int)(strlen(limits_doc) - 20), limits_doc);
	expect_refused(big, "text", "not JSON: the text ends early (truncated?)", "truncated");
	expect_refused(s = broken(limits_doc, "\n}\n", "\n}\n{}"), "text",
		       "more text after the document", "two documents");
	free(s);
	expect_refused(s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
				  "\"headroom_bytes\":\t01073741824"),
		       "text", "'01073741824' at byte", "a leading zero");
	free(s);
	expect_refused(s = broken(limits_doc, "\"cpus\":\t4", "\"cpus\":\t4."), "text",
		       "'4.' at byte", "a number without decimals");
	free(s);
	expect_refused(s = broken(limits_doc, "\"cpus\":\t4", "\"cpus\":\t4, \"cpus\": 5"), "text",
		       "member \"cpus\" twice in one object", "a member twice");
	free(s);
	/* a NUL inside: cJSON would stop at it and read a shorter document */
	{
		int kind;
		char err[256];
		cJSON *d = mp_doc_load("{\"a\":\0}", 7, &kind, err, sizeof(err));

		CHECK(!d && strstr(err, "holds a NUL byte"), "a NUL byte: %s", err);
	}
}

static void test_fields(void)
{
	char *s;

	expect_refused(s = broken(limits_doc, "18446744073709551615", "18446744073709551616"),
		       "text", "cgroup.usage_bytes: an integer beyond 64 bits", "2^64");
	free(s);
	expect_refused(s = broken(limits_doc, "18446744073709551615", "-1"), "env",
		       "cgroup.usage_bytes: negative, not a count", "negative");
	free(s);
	expect_refused(s = broken(limits_doc, "18446744073709551615", "1.5"), "text",
		       "cgroup.usage_bytes: not an integer", "a fraction");
	free(s);
	expect_refused(s = broken(limits_doc, "18446744073709551615", "1e3"), "text",
		       "cgroup.usage_bytes: not an integer", "an exponent");
	free(s);
	expect_refused(s = broken(limits_doc, "18446744073709551615", "\"12\""), "text",
		       "cgroup.usage_bytes: a string, not an integer", "a string");
	free(s);
	expect_refused(s = broken(limits_doc, "\t\t\"dir\":\t\"/sys/fs/cgroup/job's\",\n", ""),
		       "env", "cgroup.dir: missing", "cgroup.dir missing");
	free(s);
	expect_refused(s = broken(limits_doc, "\"host_root\":\tfalse", "\"host_root\":\t0"),
		       "text", "cgroup.host_root: a number, not true or false", "a number for a bool");
	free(s);
	expect_refused(s = broken(limits_doc, "\"effective_limit_bytes\":\t9007199254740993",
				  "\"effective_limit_bytes\":\tnull"),
		       "text", "cgroup.effective_limit_bytes: null, not", "null where a figure is");
	free(s);
	expect_refused(limits_doc, "yaml", "", "no such renderer");
}

/* An array element, named by its index: the path of a deep problem. */
static void test_paths(void)
{
	static const char features[] = HEADER("features") ",\n"
		"\t\"kernel_release\":\t\"6.18.0\",\n\t\"btf\":\t\"/sys/kernel/btf/vmlinux\",\n"
		"\t\"module_btf_files\":\t0,\n\t\"kprobes\":\tfalse,\n\t\"cgroup_mode\":\t\"v2\",\n"
		"\t\"plan\":\t[{\n\t\t\t\"concern\":\t\"faults\",\n\t\t\t\"name\":\t\"page faults\",\n"
		"\t\t\t\"hook\":\tnull,\n\t\t\t\"kind\":\tnull,\n\t\t\t\"target\":\tnull,\n"
		"\t\t\t\"polled\":\tfalse,\n\t\t\t\"rungs\":\t[{\n\t\t\t\t\t\"kind\":\t\"tp_btf\",\n"
		"\t\t\t\t\t\"label\":\t\"tracepoint exceptions:page_fault_user\",\n"
		"\t\t\t\t\t\"target\":\t\"exceptions:page_fault_user\",\n"
		"\t\t\t\t\t\"status\":\t\"absent\"\n\t\t\t\t}]\n\t\t}],\n"
		"\t\"categories\":\t{\n\t\t\"anon\":\ttrue,\n\t\t\"pagetables\":\tfalse\n\t}\n}\n";
	char err[512], *out = render(features, "text", err, sizeof(err)), *s;

	CHECK(out && strstr(out, "\npage faults: NONE\n"
			      "  tp_btf  tracepoint exceptions:page_fault_user ") &&
	      strstr(out, "kept per memcg: anon -pagetables\n"), "features text: %s", out ? out : err);
	free(out);
	out = render(features, "json", err, sizeof(err));
	CHECK_STR(out, features, "features json back, byte for byte");
	free(out);
	expect_refused(s = broken(features, "\"status\":\t\"absent\"", "\"status\":\t[]"), "text",
		       "plan[0].rungs[0].status: an array, not a string", "a deep path");
	free(s);
	expect_refused(s = broken(features, "\"pagetables\":\tfalse", "\"pagetables\":\t\"no\""),
		       "text", "categories.pagetables: not true or false", "a category not a bool");
	free(s);
	expect_refused(features, "env", "", "env takes no features document");
}

/* A record made without BPF has no events_lost: its markdown and html
 * said "does not render" (a bug) of every record and probe without BPF. */
static void no_bpf_markdown_html(const char *rec)
{
	struct mp_cgroup *cg = calloc(1, sizeof(*cg));
	char err[512], *text, *out;
	int kind;
	cJSON *doc = mp_doc_load(rec, strlen(rec), &kind, err, sizeof(err));

	CHECK(doc && cg, "the record document loads: %s", err);
	if (!doc || !cg) {
		cJSON_Delete(doc);
		free(cg);
		return;
	}
	/* the whole target object the writer makes (mp_cgroup_json) */
	snprintf(cg->path, sizeof(cg->path), "/run");
	snprintf(cg->dir, sizeof(cg->dir), "/sys/fs/cgroup/run");
	snprintf(cg->effective_from, sizeof(cg->effective_from), "MemTotal");
	snprintf(cg->headroom_from, sizeof(cg->headroom_from), "MemAvailable");
	cg->version = 2;
	cg->effective_limit_bytes = 268435456;
	cJSON_ReplaceItemInObject(doc, "target", mp_cgroup_json(cg));
	text = cJSON_Print(doc);
	out = text ? render(text, "markdown", err, sizeof(err)) : NULL;
	CHECK(out && strstr(out, "- attribution missing: `BPF unavailable`\n"),
	      "record markdown without a BPF session: %s", out ? out : err);
	free(out);
	out = text ? render(text, "html", err, sizeof(err)) : NULL;
	CHECK(out && strstr(out, "attribution missing: BPF unavailable</p>\n</section>"),
	      "record html without a BPF session: %s", out ? "(not found)" : err);
	free(out);
	cJSON_free(text);
	cJSON_Delete(doc);
	free(cg);
}

/* record's text from its document alone; an attribution without a session */
static void test_record_text(void)
{
	static const char rec[] = HEADER("record") ",\n"
		"\t\"run\":\t{\n\t\t\"command\":\t[\"sh\", \"-c\", \"true\"],\n"
		"\t\t\"killed_by_signal\":\t9,\n\t\t\"ended_by\":\t\"oom_kill\",\n"
		"\t\t\"duration_ms\":\t1250,\n\t\t\"interval_ms\":\t100,\n"
		"\t\t\"timeline_samples_dropped\":\t0,\n\t\t\"interrupted\":\tfalse\n\t},\n"
		"\t\"target\":\t{\n\t\t\"dir\":\t\"/sys/fs/cgroup/run\",\n"
		"\t\t\"effective_limit_bytes\":\t268435456\n\t},\n"
		"\t\"peak\":\t{\n\t\t\"usage_bytes\":\t9007199254740993,\n"
		"\t\t\"usage_source\":\t\"sample\",\n\t\t\"t_ms\":\t1200\n\t},\n"
		"\t\"oom_kills\":\t[{\n\t\t\t\"t_ms\":\t1210,\n\t\t\t\"pid\":\t77,\n"
		"\t\t\t\"comm\":\t\"alloc\",\n\t\t\t\"sample\":\t{\n"
		"\t\t\t\t\"usage_bytes\":\t268431360\n\t\t\t}\n\t\t}],\n"
		"\t\"attribution\":\t{\n\t\t\"attribution_missing\":\t[{\n"
		"\t\t\t\t\"concern\":\tnull,\n\t\t\t\t\"category\":\tnull,\n"
		"\t\t\t\t\"reason\":\t\"no_bpf\",\n\t\t\t\t\"message\":\t\"BPF unavailable\"\n"
		"\t\t\t}]\n\t},\n"
		"\t\"timeline\":\t[{\n\t\t\t\"t_ms\":\t0,\n\t\t\t\"usage_bytes\":\t4096,\n"
		"\t\t\t\"faults_per_sec\":\t3,\n\t\t\t\"stat\":\t{\n\t\t\t\t\"anon\":\t4096\n"
		"\t\t\t},\n\t\t\t\"bpf_growth\":\t{\n\t\t\t\t\"file\":\t-8192,\n"
		"\t\t\t\t\"kernel\":\t0\n\t\t\t}\n\t\t}]\n}\n";
	static const char want[] =
		"memprobe record: /sys/fs/cgroup/run running sh -c true\n"
		"ended by oom_kill after 1.2 s (killed by signal 9); limit 256.0 MiB effective\n"
		"peak 8192.00 TiB at 1.2 s (sample)\n"
		"OOM kill at 1.2 s: alloc[77] (usage 256.0 MiB, last sample before it)\n"
		"\n   t (s)        usage         anon         file       kernel   faults/s  resolution\n"
		"     0.0      4.0 KiB      4.0 KiB     -8.0 KiB          0 B          3      100 ms\n"
		"\nHooks: none\nattribution missing: BPF unavailable\n";
	char err[512], *out = render(rec, "text", err, sizeof(err)), *s;

	CHECK_STR(out ? out : err, want, "record text from the document");
	free(out);
	no_bpf_markdown_html(rec);
	out = render(rec, "json", err, sizeof(err));
	CHECK_STR(out, rec, "record json back, byte for byte");
	free(out);
	expect_refused(s = broken(rec, "\"-c\"", "3"), "text", "run.command[1]: a number, not a string",
		       "an argument not a string");
	free(s);
	expect_refused(s = broken(rec, "\"file\":\t-8192,\n", ""), "text",
		       "timeline[0].bpf_growth.file: missing", "a category missing from both");
	free(s);
}

static void test_host_more(void)
{
	char dir[] = "/tmp/memprobe-unit-host.XXXXXX", p[512];
	struct mp_host m;
	static const char *const files[][2] = {
		{ "/proc/meminfo", "MemTotal: 1024 kB\nMemAvailable: 512 kB\n" },
		{ "/proc/sys/kernel/hostname", "box-7\n" },
		{ "/etc/os-release", "NAME=\"X\"\nPRETTY_NAME=\"Debian GNU/Linux 12 \\\"b\\\"\"\nID=x\n" },
		{ "/sys/devices/system/cpu/online", "0-3,6,8-9\n" },
		{ "/sys/kernel/mm/lru_gen/enabled", "0x0007\n" },
	};

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char cmd[1024];
		FILE *f;

		snprintf(p, sizeof(p), "%s%s", dir, files[i][0]);
		snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
		if (system(cmd) || !(f = fopen(p, "w")))
			continue;
		fputs(files[i][1], f);
		fclose(f);
	}
	CHECK_EQ_INT(mp_host_read(dir, &m), 0, "host read");
	CHECK_STR(m.hostname, "box-7", "hostname");
	CHECK_STR(m.distribution, "Debian GNU/Linux 12 \"b\"", "PRETTY_NAME, quotes undone");
	CHECK_U64(m.cpus, 7, "online CPUs 0-3,6,8-9");
	CHECK(m.have_lru_gen, "lru_gen present");
	CHECK_STR(m.lru_gen, "0x0007", "lru_gen");
	snprintf(p, sizeof(p), "rm -rf '%s'", dir);
	if (system(p)) {
		/* a left temporary directory is no failure of the code under test */
	}
	CHECK_EQ_INT(mp_host_read(FIXTURES "/missing-files", &m), 0,
		     "host read of the missing-files tree");
	CHECK(!m.have_lru_gen && !m.distribution[0],
	      "a tree without the files: no lru_gen, no distribution");
	CHECK_EQ_INT(m.cpus, 0, "a tree without the files: no CPUs");
}

/* Every *_bytes member is range-checked at load, read by a renderer or not. */
static void test_bytes_range(void)
{
	char *s;

	expect_refused(s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
				  "\"headroom_bytes\":\t-5"), "json",
		       "cgroup.headroom_bytes: negative, not a count", "a negative count, unread");
	free(s);
	expect_refused(s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
				  "\"headroom_bytes\":\t0.5"), "json",
		       "cgroup.headroom_bytes: not an integer", "a fractional count, unread");
	free(s);
	expect_refused(s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
				  "\"headroom_bytes\":\t1073741824, \"new_bytes\": 2.5"), "json",
		       "cgroup.new_bytes: not an integer", "a fraction in a new member");
	free(s);
	expect_refused(s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
				  "\"headroom_bytes\":\t1073741824, \"new_bytes\": \"7\""), "json",
		       "cgroup.new_bytes: a string, not an integer", "a string in a new member");
	free(s);
	/* a signed member (growth, overhead) or a new one may be negative */
	s = broken(limits_doc, "\"headroom_bytes\":\t1073741824",
		   "\"headroom_bytes\":\t1073741824, \"new_bytes\": -7, \"growth_bytes\": -1");
	{
		char err[512] = "", *out = render(s, "json", err, sizeof(err));

		CHECK(out != NULL, "negative new or signed *_bytes members load: %s", err);
		free(out);
	}
	free(s);
}

/* The bounds: no text makes the loader take memory without limit. */
static void test_bounds(void)
{
	size_t n = MP_DOC_MAX_VALUES + 2, len = 2 * n + 1;
	char *s = malloc(len + 1), err[512];
	int kind;

	for (size_t i = 0; s && i < n; i++)
		memcpy(s + 2 * i, i ? ",0" : "[0", 2);
	if (s) {
		s[len - 1] = ']';
		s[len] = '\0';
	}
	CHECK(s && !mp_doc_load(s, len, &kind, err, sizeof(err)) && strstr(err, "more than 4194304 values"),
	      "4 Mi values and more: refused before parsing (%s)", s ? err : "no memory");
	free(s);
	/* an object of 300 000 members: the duplicate check sorts, where
	 * comparing each member with those before it took minutes (a hang) */
	{
		size_t base = strlen(limits_doc) - 6, cap = base + 300000 * 24 + 64, at;
		char *w = malloc(cap);
		cJSON *d;

		memcpy(w, limits_doc, base); /* up to the cgroup's closing "\n\t}" */
		at = base;
		for (int i = 0; w && i < 300000; i++)
			at += (size_t)snprintf(w + at, cap - at, ",\"x%d_bytes\":%d", i, i);
		snprintf(w + at, cap - at, "\n\t}\n}\n");
		d = mp_doc_load(w, strlen(w), &kind, err, sizeof(err));
		CHECK(d != NULL, "300 000 members in one object load: %s", d ? "" : err);
		cJSON_Delete(d);
		snprintf(w + at, cap - at, ",\"x7_bytes\":1\n\t}\n}\n");
		d = mp_doc_load(w, strlen(w), &kind, err, sizeof(err));
		CHECK(!d && strstr(err, "member \"x7_bytes\" twice in one object"),
		      "... and one of them twice is refused: %s", d ? "(loaded)" : err);
		cJSON_Delete(d);
		free(w);
	}
	/* the length alone refuses it: the text past the first bytes is never read */
	CHECK(!mp_doc_load("{}", MP_DOC_MAX_BYTES + 1, &kind, err, sizeof(err)) &&
	      strstr(err, "larger than a memprobe document can be (256 MiB)"),
	      "more than 256 MiB: refused (%s)", err);
}

/*
 * Too deep a document is said so, wherever the strings before the depth
 * end: one scanner reads every string's escapes alike. A string ending
 * in an escaped backslash ("a\\\\") was taken to go on by the depth's
 * scanner alone (it looked at the byte before the quote), which then
 * counted the brackets as string bytes: "not JSON" instead.
 */
static void test_nesting(void)
{
	static const char *const heads[] = { "{\"k\":\"plain\",\"x\":", "{\"k\":\"a\\\\\",\"x\":",
					     "{\"k\":\"q\\\"\\\\\",\"x\":" };
	size_t deep = CJSON_NESTING_LIMIT + 10;

	for (size_t h = 0; h < sizeof(heads) / sizeof(heads[0]); h++) {
		size_t hl = strlen(heads[h]), len = hl + 2 * deep + 1;
		char *s = malloc(len + 1), err[512] = "", want[64];
		int kind;
		cJSON *d;

		if (!s) {
			CHECK(0, "no memory");
			return;
		}
		memcpy(s, heads[h], hl);
		memset(s + hl, '[', deep);
		memset(s + hl + deep, ']', deep);
		s[len - 1] = '}';
		s[len] = '\0';
		snprintf(want, sizeof(want), "nested deeper than %d levels", CJSON_NESTING_LIMIT);
		d = mp_doc_load(s, len, &kind, err, sizeof(err));
		CHECK(!d && strstr(err, want), "%.*s then %zu levels: got '%s', want '%s'",
		      (int)hl, s, deep, d ? "(loaded)" : err, want);
		cJSON_Delete(d);
		free(s);
	}
}

/* mp_doc_load_file on what is not a document: one problem each, no hang. */
static void expect_file(const char *path, const char *want, const char *what)
{
	char err[512] = "";
	int kind;
	cJSON *d = mp_doc_load_file(path, &kind, err, sizeof(err));

	CHECK(!d && strstr(err, want), "%s: got '%s', want '%s'", what, d ? "(loaded)" : err, want);
	cJSON_Delete(d);
}

static void test_files(void)
{
	char dir[] = "/tmp/memprobe-unit-XXXXXX", p[4200];
	FILE *f;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	expect_file(dir, "a directory, not a document", "a directory");
	expect_file("/dev/zero", "a character device, not a document", "/dev/zero");
	snprintf(p, sizeof(p), "%s/fifo", dir);
	CHECK_EQ_INT(mkfifo(p, 0600), 0, "mkfifo");
	expect_file(p, "a FIFO, not a document", "a FIFO with no writer");
	unlink(p);
	snprintf(p, sizeof(p), "%s/none", dir);
	expect_file(p, "cannot open it (No such file or directory)", "a missing file");
	snprintf(p, sizeof(p), "%s/big", dir);
	f = fopen(p, "w");
	/* sparse: its size says it all, nothing is read */
	CHECK(f && ftruncate(fileno(f), (off_t)MP_DOC_MAX_BYTES + 1) == 0, "a sparse file");
	if (f)
		fclose(f);
	expect_file(p, "larger than a memprobe document can be (256 MiB)", "a file over 256 MiB");
	unlink(p);
	snprintf(p, sizeof(p), "%s/cut.json", dir);
	f = fopen(p, "w");
	if (f) {
		fwrite(limits_doc, 1, strlen(limits_doc) / 2, f);
		fclose(f);
	}
	expect_file(p, "the text ends early (truncated?)", "a truncated file");
	f = fopen(p, "w");
	if (f) {
		fputs("\"a string\"\n", f);
		fclose(f);
	}
	expect_file(p, "JSON, but not an object", "a JSON string");
	f = fopen(p, "w");
	if (f) {
		fputs(limits_doc, f);
		fclose(f);
	}
	{
		char err[512];
		int kind;
		cJSON *d = mp_doc_load_file(p, &kind, err, sizeof(err));

		CHECK(d && kind == MP_DOC_LIMITS, "a good file loads: %s", d ? "" : err);
		cJSON_Delete(d);
	}
	unlink(p);
	rmdir(dir);
}

/*
 * A byte the kernel handed over that is not UTF-8 (a command's name, a
 * cgroup's): written \udcXX, valid UTF-8 JSON; loaded back into the byte,
 * the document printed back byte for byte; shown as \xNN to people; a
 * file holding the raw byte refused in one line.
 */
static void test_utf8(void)
{
	char err[512], *out, *esc = broken(limits_doc, "/job's\",", "/j\\udcff" "b\xc3\xa9\xf0\x9f\x92\x80\",");
	char *pair = broken(limits_doc, "/job's\",", "/j\\ud83d\\udc80\",");
	char *raw = broken(limits_doc, "/job's\",", "/j\xff" "b\",");
	cJSON *o = cJSON_CreateObject();
	int kind;

	cJSON_AddStringToObject(o, "comm", "a\xff\xc3(" "b\xc3\xa9");
	out = mp_json_text(o, 0);
	CHECK_STR(out, "{\"comm\":\"a\\udcff\\udcc3(b\xc3\xa9\"}",
		  "the bytes that are not UTF-8 written \\udcXX, the rest as it is");
	cJSON_free(out);
	cJSON_Delete(o);
	out = render(esc, "json", err, sizeof(err));
	CHECK(out && !strcmp(out, esc), "\\udcff loaded into the byte and printed back: %s",
	      out ? out : err);
	free(out);
	out = render(pair, "json", err, sizeof(err));
	CHECK(out && strstr(out, "\"/j\xf0\x9f\x92\x80\""), "a surrogate pair is a character, "
	      "not a byte: %s", out ? out : err);
	free(out);
	out = render(esc, "text", err, sizeof(err));
	CHECK(out && strstr(out, "cgroup /j\\xff" "b\xc3\xa9\xf0\x9f\x92\x80 (v2)"),
	      "text shows the byte as \\xff: %s", out ? out : err);
	free(out);
	out = render(esc, "markdown", err, sizeof(err));
	CHECK(out && !strchr(out, '\xff'), "markdown holds no byte that is not UTF-8");
	free(out);
	CHECK(!mp_doc_load(raw, strlen(raw), &kind, err, sizeof(err)) &&
	      strstr(err, "is not UTF-8") && !strchr(err, '\n'),
	      "a raw byte that is not UTF-8: refused in one line (%s)", err);
	free(esc);
	free(pair);
	free(raw);
}

int main(void)
{
	int saved;

	test_round_trip();
	test_emit();
	test_adopt();
	test_header();
	test_json_text();
	test_fields();
	test_paths();
	test_record_text();
	test_host_more();
	test_bytes_range();
	test_bounds();
	test_nesting();
	test_files();
	test_utf8();
	/* its one-line messages are the command's to show: not here */
	fflush(stderr);
	saved = dup(2);
	if (!freopen("/dev/null", "w", stderr))
		saved = -1;
	CHECK_EQ_INT(mp_render_check("unit", "probe", "json"), 0,
		     "mp_render_check: json for probe, env only for limits, no yaml");
	CHECK_EQ_INT(mp_render_check("unit", "limits", "env"), 0,
		     "mp_render_check: json for probe, env only for limits, no yaml");
	CHECK_EQ_INT(mp_render_check("unit", "probe", "env"), MP_EXIT_USAGE,
		     "mp_render_check: json for probe, env only for limits, no yaml");
	CHECK_EQ_INT(mp_render_check("unit", NULL, "yaml"), MP_EXIT_USAGE,
		     "mp_render_check: json for probe, env only for limits, no yaml");
	if (saved >= 0) {
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	return unit_done("doc");
}
