// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe report: a saved document (limits, features, probe, record)
 * rendered again, by the renderers the live commands use. Nothing is
 * written unless the whole document loads and renders.
 */
#include "cmd_report.h"
#include "cli.h"
#include "doc.h"
#include "render.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A document is a few MiB at most (a day's record timeline); a file far
 * beyond that is not one, and is not read into memory whole. */
#define MAX_DOC_BYTES (1024ULL * 1024 * 1024)

static const struct mp_cli_opt report_opts[] = {
	MP_CLI_OPT_FORMAT("text, or json (the document as it was saved); env for a "
			  "limits document; markdown, csv, folded (kernel stacks for flame "
			  "graphs) or html (one page with charts) for a probe or record "
			  "document, markdown for limits too"),
	MP_CLI_OPT_OUTPUT,
	MP_CLI_OPT_BYTES,
	MP_CLI_OPT_TABLE("categories, tasks, kernel_paths, hooks (record: timeline)"),
	MP_CLI_OPT_HELP,
	{ 0 },
};

static const struct mp_cli_cmd report_cmd = {
	.name = "report",
	/* FILE: a document memprobe wrote with --format json; -: standard input */
	.synopsis = "FILE|- [-f FORMAT] [--bytes] [--table NAME] [-o OUT]",
	.opts = report_opts,
	.operands = true,
};

/* The whole of fd into *buf (NUL-terminated). 0, -EFBIG, or -errno. */
static int read_all(int fd, char **buf, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nb = cap >= MAX_DOC_BYTES ? NULL : realloc(b, cap * 2);

			if (!nb) {
				free(b);
				return cap >= MAX_DOC_BYTES ? -EFBIG : -ENOMEM;
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
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

static int bad_file(const char *name, const char *problem)
{
	fprintf(stderr, "memprobe report: %s: %s\n", name, problem);
	return MP_EXIT_USAGE;
}

/* Read, load and render FILE into *out; 0 or the exit status (said). */
static int render_file(const char *path, const char *format, char **out, size_t *outlen)
{
	const char *name = strcmp(path, "-") ? path : "standard input";
	const struct mp_renderer *r = mp_renderer_find(format);
	char *text = NULL, err[512];
	size_t len = 0;
	cJSON *doc;
	int fd, ret, kind;

	fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	if (fd < 0) {
		snprintf(err, sizeof(err), "cannot open it (%s); give the path of a saved document",
			 strerror(errno));
		return bad_file(name, err);
	}
	ret = read_all(fd, &text, &len);
	if (fd != STDIN_FILENO)
		close(fd);
	if (ret) {
		snprintf(err, sizeof(err), "%s; give a document memprobe wrote",
			 ret == -EFBIG ? "larger than 1 GiB: not a memprobe document" :
			 ret == -EISDIR ? "a directory, not a document" : strerror(-ret));
		return bad_file(name, err);
	}
	doc = mp_doc_load(text, len, &kind, err, sizeof(err));
	free(text);
	if (!doc && kind == -ENOMEM) { /* not the file's fault: a failure, exit 1 */
		bad_file(name, err);
		return MP_EXIT_RUNTIME;
	}
	if (!doc)
		return bad_file(name, err);
	if (!(r->kinds & kind)) {
		char names[256];

		mp_render_names(kind, names, sizeof(names));
		snprintf(err, sizeof(err), "a %s document has no %s format; use --format %s",
			 mp_doc_kind_name(kind), format, names);
		ret = bad_file(name, err);
	} else if (mp_render_opts.table &&
		   mp_csv_table_check("report", kind, format, mp_render_opts.table)) {
		ret = MP_EXIT_USAGE;
	} else if (mp_render_mem(r, doc, kind, out, outlen, err, sizeof(err))) {
		mp_appendf(err, sizeof(err), "; give a document memprobe wrote, unchanged");
		ret = bad_file(name, err);
	}
	cJSON_Delete(doc);
	return ret;
}

int mp_cmd_report(int argc, char **argv)
{
	const char *format, *outpath;
	struct mp_out out = { 0 };
	struct mp_cli c;
	char *text = NULL;
	size_t len = 0;
	int ret;

	ret = mp_cli_parse(&report_cmd, argc, argv, &c, NULL);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (!c.rest || c.rest[1])
		return mp_cli_bad("report", "%s; give one FILE (- for standard input)",
				  !c.rest ? "no document named" : "more than one document named");
	/* any kind's format: render_file checks it against the document's */
	if ((ret = mp_render_check("report", NULL, c.format)) || (ret = mp_cli_finish(&report_cmd, &c)))
		return ret;
	format = c.format;
	outpath = c.out;
	if ((ret = render_file(c.rest[0], format, &text, &len)))
		return ret;
	signal(SIGPIPE, SIG_IGN);
	if (mp_out_open(&out, outpath)) {
		fprintf(stderr, "memprobe report: -o %s: cannot create it; give a writable path\n",
			outpath);
		free(text);
		return MP_EXIT_USAGE;
	}
	if (fwrite(text, 1, len, out.f) != len || (ret = mp_out_commit(&out))) {
		fprintf(stderr, "memprobe report: cannot write the report to %s: %s\n",
			outpath && strcmp(outpath, "-") ? outpath : "standard output",
			strerror(ret ? -ret : errno));
		ret = MP_EXIT_RUNTIME;
	}
	mp_out_abort(&out);
	free(text);
	return ret;
}
