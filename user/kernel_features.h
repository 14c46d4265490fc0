/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_KERNEL_FEATURES_H
#define MEMPROBE_KERNEL_FEATURES_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include "cgroup.h"

/*
 * The features document: what this kernel offers memprobe, found the way a
 * run finds it. *ok is false when no session could be made at all (then
 * the document says why). Caller frees.
 */
cJSON *mp_features_doc(const struct mp_host *h, const char *btf_path, bool *ok);

/* --features: the document rendered in format ("text" or "json") on
 * standard output; returns the exit status. */
int mp_features_print(const struct mp_host *h, const char *format, const char *btf_path);

#endif
