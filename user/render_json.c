// SPDX-License-Identifier: GPL-2.0
/* --format json: the document itself, as memprobe has always printed it
 * (cJSON's pretty form, a newline after). Numbers are the loaded raw
 * literals, so a saved document prints back byte for byte. */
#include "render.h"
#include "json.h"

#include <stdlib.h>

static void render_json(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	char *s = mp_json_text(doc, 1);

	(void)kind;
	if (!s) {
		mp_rd_fail(rd, NULL, NULL, "out of memory printing it");
		return;
	}
	fprintf(f, "%s\n", s);
	cJSON_free(s);
}

const struct mp_renderer mp_renderer_json = {
	.name = "json",
	.about = "the document",
	.kinds = MP_DOC_ALL,
	.render = render_json,
};
