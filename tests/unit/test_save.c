// SPDX-License-Identifier: GPL-2.0
/*
 * mp_emit_save: a document that cannot be rendered is saved whole beside
 * the report's file (FILE.json, then FILE.PID.json: never over a file),
 * the report's file is not made, nothing temporary is left; a document
 * that renders is written and nothing else is. The working directory and
 * $TMPDIR fallbacks, /dev/full and a full filesystem are run for real in
 * tests/run-integration.sh (record_saved).
 */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "render.h"
#include "unit.h"
#include "out.h"
#include "util.h"

static cJSON *limits_doc(void)
{
	static struct mp_host h;
	static struct mp_cgroup cg;

	snprintf(h.hostname, sizeof(h.hostname), "box");
	snprintf(h.kernel_release, sizeof(h.kernel_release), "6.18.0");
	h.cg_mode = MP_CG_V2;
	cg.version = 2;
	snprintf(cg.path, sizeof(cg.path), "/job");
	snprintf(cg.dir, sizeof(cg.dir), "/sys/fs/cgroup/job");
	snprintf(cg.effective_from, sizeof(cg.effective_from), "MemTotal");
	snprintf(cg.headroom_from, sizeof(cg.headroom_from), "MemAvailable");
	cg.limit_bytes = MP_UNLIMITED;
	return mp_doc_limits(&h, &cg);
}

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Files in dir whose name holds "memprobe-tmp". */
static int tmps(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (de = readdir(d)))
		n += strstr(de->d_name, "memprobe-tmp") != NULL;
	if (d)
		closedir(d);
	return n;
}

/* One emit of a limits document as format to path: its exit status. */
static int emit(const char *format, const char *path)
{
	struct mp_out o;
	int ret;

	if (mp_out_open(&o, path))
		return -1;
	ret = mp_emit_save("limits", limits_doc(), format, &o, path);
	mp_out_abort(&o);
	return ret;
}

int main(void)
{
	char dir[] = "/tmp/memprobe-unit-save.XXXXXX", path[256], saved[300], again[300];
	char err[400];
	cJSON *doc;
	int kind;

	if (!mkdtemp(dir))
		return printf("save: no temporary directory\n"), 1;
	snprintf(path, sizeof(path), "%s/r.txt", dir);
	snprintf(saved, sizeof(saved), "%s.json", path);
	snprintf(again, sizeof(again), "%s.%d.json", path, (int)getpid());

	/* csv takes no limits document: a render that fails after the
	 * measurement, as a bug would */
	CHECK_EQ_INT(emit("csv", path), MP_EXIT_RUNTIME, "a render failure exits 1");
	CHECK(!exists(path), "the report's file is not made");
	doc = mp_doc_load_file(saved, &kind, err, sizeof(err));
	CHECK(doc && kind == MP_DOC_LIMITS, "the document saved whole beside it, FILE.json: %s",
	      doc ? "" : err);
	cJSON_Delete(doc);
	CHECK_EQ_INT(emit("csv", path), MP_EXIT_RUNTIME, "FILE.json taken: a render failure");
	CHECK(exists(again), "FILE.json taken: FILE.PID.json, not over it");
	CHECK_EQ_INT(tmps(dir), 0, "no temporary file left: %d", tmps(dir));
	CHECK_EQ_INT(emit("json", path), 0, "a document that renders");
	CHECK(exists(path), "a document that renders is written");
	unlink(path);
	unlink(saved);
	unlink(again);
	CHECK_EQ_INT(rmdir(dir), 0, "nothing else was made in the directory");
	return unit_done("save");
}
