/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The document model: every JSON document memprobe writes is built here.
 */
#ifndef MEMPROBE_DOC_H
#define MEMPROBE_DOC_H

#include <cjson/cJSON.h>
#include "cgroup.h"

/* JSON objects for host facts and a cgroup's limits (caller frees). */
cJSON *mp_host_json(const struct mp_host *h);
cJSON *mp_cgroup_json(const struct mp_cgroup *cg);

#endif
