// SPDX-License-Identifier: GPL-2.0
#include "render.h"
static void render_html(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	(void)doc; (void)kind; (void)f; (void)rd;
}
const struct mp_renderer mp_renderer_html = {
	.name = "html",
	.kinds = MP_DOC_PROBE | MP_DOC_RECORD,
	.render = render_html,
};
