/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_KERNEL_FEATURES_H
#define MEMPROBE_KERNEL_FEATURES_H

#include "cgroup.h"

/*
 * --features: what this kernel offers memprobe, found the way a run finds
 * it. Prints in format ("text" or "json"); returns the exit status.
 */
int mp_features_print(const struct mp_host *h, const char *format, const char *btf_path);

#endif
