/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_BUDGET_DOC_H
#define MEMPROBE_BUDGET_DOC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"
#include "doc.h" /* struct mp_rd */

/*
 * The budget document from a loaded probe document p (mp_doc_load), for the
 * header's generator and time h, its host copied from p. from_file: the
 * saved report read (NULL: a live probe); margin_opt: --margin, else the
 * probe's. Returns the document (caller frees) or NULL with the problem and
 * its fix in err ("problem; fix": a document that is not a whole probe
 * report). With a document, err is "" or, when the budget is 0 (nothing
 * fits: a failure, the command exits 1), why: what took the room.
 */
cJSON *mp_budget_doc(const struct mp_host *h, const cJSON *p, const char *from_file,
		     const uint64_t *margin_opt, char *err, size_t errlen);

/*
 * Of a loaded budget document: true when its budget is 0, with why in why
 * ("nothing fits: the room, ..."), as mp_budget_doc says it; false (why "")
 * when it is not 0 or rd found a problem.
 */
bool mp_budget_zero(struct mp_rd *rd, const cJSON *doc, char *why, size_t len);

#endif
