/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_TARGET_H
#define MEMPROBE_TARGET_H

#include "cgroup.h"

/*
 * Resolve the target cgroup from --cgroup PATH or --pid PID (pid 0 and path
 * NULL: memprobe's own), read it, and on bad input print one line naming the
 * problem and the fix. Returns 0, or the exit status to leave with.
 */
int mp_resolve_target(const char *cmd, const char *root, const struct mp_host *h,
		      const char *path, const char *pid_arg, struct mp_cgroup *cg);

#endif
