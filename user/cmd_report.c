// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe report: a saved document (limits, features, probe, record)
 * rendered again, by the renderers the live commands use. Nothing is
 * written unless the whole document loads and renders.
 */
#include "cmd_report.h"
#include "doc.h"
#include "render.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A document is a few MiB at most (a day's record timeline); a file far
 * beyond that is not one, and is not read into memory whole. */
#define MAX_DOC_BYTES (1024ULL * 1024 * 1024)

static char optbuf[64];

static void usage(FILE *f)
{
	fputs("usage: memprobe report FILE [--format text|json] [-o OUT]\n"
	      "  FILE          a document memprobe wrote with --format json; - for standard input\n"
	      "  -f, --format  text (default) or json (the document as it was saved);\n"
	      "                env for a limits document\n"
	      "  -o, --output  write to OUT instead of standard output, whole or not at all\n", f);
}

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
	if (!doc)
		return bad_file(name, err);
	if (!(r->kinds & kind)) {
		snprintf(err, sizeof(err), "a %s document has no %s format; use --format text or json",
			 mp_doc_kind_name(kind), format);
		ret = bad_file(name, err);
	} else if (mp_render_mem(r, doc, kind, out, outlen, err, sizeof(err))) {
		mp_appendf(err, sizeof(err), "; give a document memprobe wrote, unchanged");
		ret = bad_file(name, err);
	}
	cJSON_Delete(doc);
	return ret;
}

int mp_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *format = "text", *outpath = NULL;
	struct mp_out out = { 0 };
	char *text = NULL;
	size_t len = 0;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': format = optarg; break;
		case 'o': outpath = optarg; break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "memprobe report: unknown option or missing value '%s'; "
				"see memprobe report --help\n",
				mp_bad_option(argv, optbuf, sizeof(optbuf)));
			return MP_EXIT_USAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "memprobe report: %s; give one FILE (- for standard input)\n",
			optind >= argc ? "no document named" : "more than one document named");
		return MP_EXIT_USAGE;
	}
	if ((ret = mp_render_check("report", NULL, format)) || (ret = mp_out_check_opt("report", outpath)))
		return ret;
	if ((ret = render_file(argv[optind], format, &text, &len)))
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
