// SPDX-License-Identifier: GPL-2.0
/*
 * PLACEHOLDER, replaced by the doc helper's renderer table (render.c): the
 * lead drops this file when merging. It keeps today's --format checks
 * behind the contract's function (redesign/BRIEF.md, "Rendering") so the
 * shared CLI layer can call it already: limits takes text, json and env;
 * features, probe and record text and json.
 */
#include "util.h"

#include <stdio.h>
#include <string.h>

int mp_render_check(const char *cmd, const char *kind, const char *format);

int mp_render_check(const char *cmd, const char *kind, const char *format)
{
	bool env = !strcmp(kind, "limits");

	if (!strcmp(format, "text") || !strcmp(format, "json") || (env && !strcmp(format, "env")))
		return 0;
	fprintf(stderr, "memprobe %s: --format %s: unknown; use %s\n", cmd, format,
		env ? "text, json or env" : "text or json");
	return MP_EXIT_USAGE;
}
