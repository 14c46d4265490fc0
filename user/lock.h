/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_LOCK_H
#define MEMPROBE_LOCK_H

#include <stdbool.h>
#include <sys/types.h>
#include "cgroup.h"

/*
 * One probe per cgroup at a time. Two probes filling the same cgroup each
 * see the other's chunks as overhead, and together they can overshoot the
 * margin; the child-cgroup check cannot see a probe that has not made its
 * child yet. So the lock is an flock(2) on /run/memprobe/probe-DEV-INO.lock,
 * keyed by the cgroup directory's device and inode (the same cgroup through
 * any path or mount), taken before memprobe makes anything. The file holds
 * the holder's pid and pid namespace, for the refusal message.
 */
struct mp_lock {
	int fd;              /* -1 when not held */
	char path[128];
	bool holder_elsewhere; /* refused: the holder's pid is another pid
				* namespace's (a container's) */
};

#define MP_LOCK_DIR "/run/memprobe"

/*
 * Take the probe lock of cg. Returns 0 (held), -EWOULDBLOCK when another
 * process holds it (*holder: its pid, or 0 when it has not written it yet),
 * or -errno.
 */
int mp_lock_probe(const struct mp_cgroup *cg, struct mp_lock *l, pid_t *holder);

/* Release and remove the lock file; a lock not held is left alone. */
void mp_lock_release(struct mp_lock *l);

/*
 * Take the lock or print the refusal ("memprobe CMD: a memprobe (pid N) is
 * probing DIR already; wait for it to finish"). Returns 0 or the exit
 * status to leave with (1).
 */
int mp_lock_probe_or_say(const char *cmd, const struct mp_cgroup *cg, struct mp_lock *l);

#endif
