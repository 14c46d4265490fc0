/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_BUDGET_DOC_H
#define MEMPROBE_BUDGET_DOC_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include "cgroup.h"

/*
 * The budget document from a loaded probe document p (mp_doc_load), for the
 * header's generator and time h, its host copied from p. from_file: the
 * saved report read (NULL: a live probe); margin_opt: --margin, else the
 * probe's. Returns the document (caller frees) or NULL with the problem and
 * its fix in err ("problem; fix": a document that is not a whole probe
 * report).
 */
cJSON *mp_budget_doc(const struct mp_host *h, const cJSON *p, const char *from_file,
		     const uint64_t *margin_opt, char *err, size_t errlen);

#endif
