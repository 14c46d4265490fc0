// SPDX-License-Identifier: GPL-2.0
/*
 * The budget from a saved probe report whose kernel part is negative (a
 * probe --reclaim-cache of a cgroup with page cache: the kernel took back
 * more than the probe's kernel objects cost), and the commands that refuse
 * an -o naming a file they read or write (mp_same_file), run as main()
 * runs them, in a directory of the test's own.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "budget_doc.h"
#include "cmd_budget.h"
#include "cmd_compare.h"
#include "cmd_probe.h"
#include "cmd_report.h"
#include "doc.h"
#include "json.h"
#include "cmd_record.h"
#include "unit.h"
#include "out.h"
#include "util.h"

/* overhead.probe_kernel_bytes -1048576 (left_after's -8192), overhead 3 MiB,
 * limit 64 MiB, usage 512 KiB, margin 4 MiB */
#define NEG_FIXTURE FIXTURES "/probe-negative-kernel.json"
/* room 66584576 - workload 3145728 - allowance 2097152 - margin 4194304 =
 * 57147392, per GiB 0 (the kernel part counted as 0), down to 1 MiB: 54 MiB */
#define NEG_BUDGET (54ULL << 20)

static char dir[] = "/tmp/memprobe-unit-budget-XXXXXX";

static char *in_dir(const char *name)
{
	static char bufs[16][4200];
	static int next;
	char *b = bufs[next++ % 16];

	snprintf(b, sizeof(bufs[0]), "%s/%s", dir, name);
	return b;
}

/* Run a command's entry with a writable argv, as main() passes it. */
static int run(int (*cmd)(int, char **), const char *const *args)
{
	char *argv[16];
	int n = 0;

	while (args[n] && n < 15) {
		argv[n] = strdup(args[n]);
		n++;
	}
	argv[n] = NULL;
	int ret = cmd(n, argv);

	for (int i = 0; i < n; i++)
		free(argv[i]);
	return ret;
}

static char *slurp(const char *path)
{
	static char buf[1 << 16];
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return buf;
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "cannot write %s", path);
}

static uint64_t budget_in(const cJSON *b, const char *group, const char *name)
{
	struct mp_rd rd = { .root = b };
	const cJSON *o = group ? mp_rd_obj(&rd, b, group, 0) : b;
	uint64_t v = mp_rd_u64v(&rd, o, name);

	CHECK(mp_rd_ok(&rd), "%s: %s", name, rd.err);
	return v;
}

static void test_negative_kernel(void)
{
	char err[400];
	struct mp_host h = { 0 };
	int kind = 0;
	cJSON *p = mp_doc_load_file(NEG_FIXTURE, &kind, err, sizeof(err));
	cJSON *b, *ov, *cat, *t;
	struct mp_rd rd;

	CHECK(p && kind == MP_DOC_PROBE, "the fixture does not load: %s", p ? "kind" : err);
	if (!p)
		return;
	CHECK_EQ_INT(mp_host_read("", &h), 0, "cannot read /proc/meminfo");
	b = mp_budget_doc(&h, p, NEG_FIXTURE, NULL, err, sizeof(err));
	CHECK(b != NULL, "a negative probe_kernel_bytes refused: %s", err);
	if (b) {
		rd = (struct mp_rd){ .root = b };
		CHECK_U64(budget_in(b, NULL, "budget_bytes"), NEG_BUDGET, "budget_bytes");
		/* the probe's file shrinking (the reclaim) is no kernel cost: its
		 * page tables are */
		CHECK_U64(budget_in(b, "figures", "probe_kernel_bytes"), 12288,
			  "figures.probe_kernel_bytes (its page tables, not its file's -1060864)");
		CHECK_U64(budget_in(b, "figures", "workload_overhead_bytes"), 3145728 - 12288,
			  "workload_overhead_bytes (the overhead less the page tables)");
		CHECK_STR(mp_rd_str(&rd, mp_rd_obj(&rd, b, "figures", 0), "kernel_cost_source", 0),
			  "overhead.probe_kernel_parts, less its user memory", "kernel_cost_source");
		cJSON_Delete(b);
	}
	/* kernel parts that are negative themselves count as 0 */
	{
		cJSON *parts = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "overhead"),
						   "probe_kernel_parts");
		cJSON *pt = cJSON_GetArrayItem(parts, 0);

		cJSON_ReplaceItemInObject(pt, "bytes", cJSON_CreateRaw("-4096"));
		b = mp_budget_doc(&h, p, NEG_FIXTURE, NULL, err, sizeof(err));
		CHECK(b != NULL, "a negative kernel part refused: %s", err);
		if (b) {
			rd = (struct mp_rd){ .root = b };
			CHECK_U64(budget_in(b, "figures", "probe_kernel_bytes"), 0,
				  "figures.probe_kernel_bytes (negative: 0)");
			CHECK_U64(budget_in(b, "figures", "kernel_per_gib_bytes"), 0,
				  "kernel_per_gib_bytes");
			CHECK_U64(budget_in(b, "figures", "workload_overhead_bytes"), 3145728,
				  "workload_overhead_bytes (the whole overhead)");
			CHECK_STR(mp_rd_str(&rd, mp_rd_obj(&rd, b, "figures", 0), "kernel_cost_source", 0),
				  "overhead.probe_kernel_parts, less its user memory (negative, -4096: "
				  "counted as 0)", "kernel_cost_source");
			cJSON_Delete(b);
		}
	}

	/* without the overhead object: the attribution's kernel rows of
	 * memprobe-probe, signed as well */
	ov = cJSON_DetachItemFromObject(p, "overhead");
	cJSON_Delete(ov);
	cJSON_ArrayForEach(cat, cJSON_GetObjectItem(cJSON_GetObjectItem(p, "attribution"),
						    "categories"))
		if (!strcmp(cJSON_GetObjectItem(cat, "name")->valuestring, "kernel"))
			cJSON_ArrayForEach(t, cJSON_GetObjectItem(cat, "tasks")) {
				/* loaded numbers are their exact text (json.h) */
				cJSON_DeleteItemFromObject(t, "bytes");
				mp_json_add_s64(t, "bytes", -135168);
			}
	b = mp_budget_doc(&h, p, NEG_FIXTURE, NULL, err, sizeof(err));
	CHECK(b != NULL, "a negative kernel task refused: %s", err);
	if (b) {
		CHECK_U64(budget_in(b, NULL, "budget_bytes"), NEG_BUDGET,
			  "budget_bytes (attribution's kernel rows)");
		CHECK_U64(budget_in(b, "figures", "probe_kernel_bytes"), 0,
			  "figures.probe_kernel_bytes (attribution, negative: 0)");
		cJSON_Delete(b);
	}
	cJSON_Delete(p);
}

/* budget --from the fixture, as a user runs it: exit 0, the budget written */
static void test_budget_from(void)
{
	const char *out = in_dir("budget.json");
	const char *args[] = { "budget", "--from", NEG_FIXTURE, "--format", "json", "-o", out,
			       NULL };
	int kind = 0, ret = run(mp_cmd_budget, args);
	char err[400];
	cJSON *b;

	CHECK_EQ_INT(ret, 0, "budget --from a negative probe_kernel_bytes: exit %d, want 0", ret);
	b = mp_doc_load_file(out, &kind, err, sizeof(err));
	CHECK(b && kind == MP_DOC_BUDGET, "budget --from wrote no budget document: %s", err);
	if (b)
		CHECK_U64(budget_in(b, NULL, "budget_bytes"), NEG_BUDGET, "budget --from: budget_bytes");
	cJSON_Delete(b);
	unlink(out);
}

static void test_same_file(void)
{
	const char *a = in_dir("a.json"), *l = in_dir("link.json"), *h = in_dir("hard.json");
	char rel[4200];

	put(a, "{}");
	CHECK_EQ_INT(symlink(a, l), 0, "cannot link: %s", strerror(errno));
	CHECK_EQ_INT(link(a, h), 0, "cannot link: %s", strerror(errno));
	CHECK(mp_same_file(a, a), "the same path");
	CHECK(mp_same_file(a, l) && mp_same_file(l, a), "a symlink to it");
	CHECK(mp_same_file(a, h), "a hard link to it");
	snprintf(rel, sizeof(rel), "%s/./sub/../a.json", dir);
	CHECK(mkdir(in_dir("sub"), 0700) == 0 && mp_same_file(a, rel), "%s: the same file", rel);
	/* not there yet: the same name in the same directory */
	snprintf(rel, sizeof(rel), "%s/sub/../new.json", dir);
	CHECK(mp_same_file(in_dir("new.json"), rel), "a missing file by two paths");
	CHECK(symlink(in_dir("new.json"), in_dir("dangling")) == 0 &&
	      mp_same_file(in_dir("dangling"), rel), "a dangling symlink to the missing file");
	CHECK(!mp_same_file(a, in_dir("new.json")), "two files taken for one");
	CHECK(!mp_same_file(in_dir("x.json"), in_dir("y.json")), "two missing files taken for one");
	CHECK(!mp_same_file(a, NULL) && !mp_same_file(NULL, a) && !mp_same_file("-", "-"),
	      "standard output taken for a file");
	unlink(in_dir("dangling"));
	rmdir(in_dir("sub"));
	unlink(h);
	unlink(l);
	unlink(a);
}

/* -o naming a file the command reads: exit 2, the file as it was */
static void test_refusals(void)
{
	char *a = in_dir("a.json"), *b = in_dir("b.json"), *l = in_dir("l.json");
	char *om = in_dir("x.json"), *saved, *fixture = slurp(NEG_FIXTURE);
	const char *rep[] = { "report", a, "-o", a, NULL };
	const char *rep_l[] = { "report", a, "-o", l, NULL };
	const char *cmp[] = { "compare", a, b, "-o", a, NULL };
	const char *bud[] = { "budget", "--from", l, "-o", a, NULL };
	const char *rec[] = { "record", "--openmetrics", om, "-o", om, "--format", "json",
			      "--limit", "256M", "--", "true", NULL };
	const char *rec_l[] = { "record", "--openmetrics", l, "-o", a, "--", "true", NULL };
	const char *fine[] = { "report", a, "-o", b, NULL };
	int ret;

	CHECK(fixture != NULL, "cannot read %s", NEG_FIXTURE);
	if (!fixture)
		return;
	saved = strdup(fixture);
	put(a, saved);
	put(b, saved);
	CHECK_EQ_INT(symlink(a, l), 0, "cannot link: %s", strerror(errno));
	CHECK((ret = run(mp_cmd_report, rep)) == 2, "report A -o A: exit %d, want 2", ret);
	CHECK((ret = run(mp_cmd_report, rep_l)) == 2, "report A -o link-to-A: exit %d, want 2",
	      ret);
	CHECK((ret = run(mp_cmd_compare, cmp)) == 2, "compare A B -o A: exit %d, want 2", ret);
	CHECK((ret = run(mp_cmd_budget, bud)) == 2, "budget --from link-to-A -o A: exit %d, "
	      "want 2", ret);
	CHECK(slurp(a) && !strcmp(slurp(a), saved), "the input document was changed");
	CHECK((ret = run(mp_cmd_record, rec)) == 2, "record --openmetrics X -o X: exit %d, want 2",
	      ret);
	CHECK_NE_INT(access(om, F_OK), 0, "record left %s behind", om);
	CHECK((ret = run(mp_cmd_record, rec_l)) == 2, "record --openmetrics link-to-A -o A: "
	      "exit %d, want 2", ret);
	CHECK(slurp(a) && !strcmp(slurp(a), saved), "record changed the -o file");
	/* another file is written as before */
	CHECK((ret = run(mp_cmd_report, fine)) == 0, "report A -o B: exit %d, want 0", ret);
	CHECK(slurp(b) && !strncmp(slurp(b), "{\"cgroup_limit_bytes\": 67108864", 31),
	      "report A -o B: not the text rendering");
	unlink(l);
	unlink(b);
	unlink(a);
	free(saved);
}

int main(void)
{
	/* the refusals' lines are the commands', not the test's */
	if (!freopen("/dev/null", "w", stderr))
		return 1;
	if (!mkdtemp(dir)) {
		printf("budget: cannot make %s\n", dir);
		return 1;
	}
	test_negative_kernel();
	test_budget_from();
	test_same_file();
	test_refusals();
	CHECK_EQ_INT(rmdir(dir), 0, "%s left behind: %s", dir, strerror(errno));
	return unit_done("budget");
}
