/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Renderers: a document in, text out. Text is rendered from the JSON
 * document, so a saved report renders the same as a live one.
 */
#ifndef MEMPROBE_RENDER_H
#define MEMPROBE_RENDER_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Render a probe report (as mp_probe builds it) as text. */
void mp_report_probe_text(const cJSON *report, FILE *f);

/* Render an "attribution" object as text. */
void mp_report_attribution_text(const cJSON *attribution, FILE *f);

struct mp_host;
struct mp_cgroup;
/* `memprobe limits` as text, and as shell assignments (--format env). */
void mp_limits_text(const struct mp_host *h, const struct mp_cgroup *cg);
void mp_limits_env(const struct mp_host *h, const struct mp_cgroup *cg);

#endif
