/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A command's process tree, from /proc: the processes record attributes a
 * command's memory to where it cannot give the command a cgroup of its own
 * (a container's read-only cgroup filesystem), and runs it where memprobe
 * runs. Every reader takes a root prefixed to /proc ("" for the live
 * system), as cgroup.c's do.
 */
#ifndef MEMPROBE_PROCTREE_H
#define MEMPROBE_PROCTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A set of process ids, sorted, in the pid namespace /proc shows. */
struct mp_pidset {
	pid_t *pids;
	size_t n, cap;
};

/* Add pid: 1 when new, 0 when there already, -ENOMEM. */
int mp_pidset_add(struct mp_pidset *s, pid_t pid);
bool mp_pidset_has(const struct mp_pidset *s, pid_t pid);
void mp_pidset_free(struct mp_pidset *s);

/*
 * Add top and its descendants as /proc shows them now: the children of
 * each of its threads (/proc/PID/task/TID/children, where the kernel has
 * CONFIG_PROC_CHILDREN), else every process's parent (/proc/PID/stat).
 * A process that has left the tree (reparented when its parent exited)
 * is not found again: the caller keeps what it saw before. Returns how
 * many were new, or -errno (-ESRCH: top is gone).
 */
int mp_proc_tree(const char *root, pid_t top, struct mp_pidset *set);

/* The same by every process's parent alone (the fallback above). */
int mp_proc_tree_by_parent(const char *root, pid_t top, struct mp_pidset *set);

#endif
