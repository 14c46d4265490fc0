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

#endif
