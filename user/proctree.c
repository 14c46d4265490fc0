// SPDX-License-Identifier: GPL-2.0
#include "proctree.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where pid is, or would go, in the sorted set. */
static size_t slot(const struct mp_pidset *s, pid_t pid)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int mp_pidset_add(struct mp_pidset *s, pid_t pid)
{
	size_t i = slot(s, pid);

	if (i < s->n && s->pids[i] == pid)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		pid_t *p = realloc(s->pids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->pids = p;
		s->cap = cap;
	}
	memmove(s->pids + i + 1, s->pids + i, (s->n - i) * sizeof(*s->pids));
	s->pids[i] = pid;
	s->n++;
	return 1;
}

bool mp_pidset_has(const struct mp_pidset *s, pid_t pid)
{
	size_t i = slot(s, pid);

	return i < s->n && s->pids[i] == pid;
}

void mp_pidset_free(struct mp_pidset *s)
{
	free(s->pids);
	*s = (struct mp_pidset){ 0 };
}

/* Merge now into set: how many were new, or -ENOMEM. */
static int merge(struct mp_pidset *set, const struct mp_pidset *now)
{
	int added = 0, ret;

	for (size_t i = 0; i < now->n; i++) {
		if ((ret = mp_pidset_add(set, now->pids[i])) < 0)
			return ret;
		added += ret;
	}
	return added;
}

/* Add pid's children, every thread's, to tree and to the work list. 0,
 * -ENOENT when the kernel keeps no children files, or -ENOMEM. */
static int add_children(const char *root, pid_t pid, struct mp_pidset *tree,
			struct mp_pidset *todo)
{
	char p[PATH_MAX], buf[65536];
	struct dirent *e;
	int ret = 0;
	DIR *d;

	if (mp_path(p, sizeof(p), "%s/proc/%d/task", root, (int)pid) || !(d = opendir(p)))
		return 0; /* gone meanwhile */
	while (!ret && (e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    mp_path(p, sizeof(p), "%s/proc/%d/task/%s/children", root, (int)pid, e->d_name))
			continue;
		if (mp_read_file(p, buf, sizeof(buf)) < 0) {
			/* the thread exited meanwhile, or the kernel has no
			 * CONFIG_PROC_CHILDREN: its directory is there without it */
			if (errno == ENOENT && !mp_path(p, sizeof(p), "%s/proc/%d/task/%s", root,
							(int)pid, e->d_name) && !access(p, F_OK))
				ret = -ENOENT;
			continue;
		}
		for (char *tok = strtok(buf, " \n"); tok && !ret; tok = strtok(NULL, " \n")) {
			pid_t c = (pid_t)atoi(tok);

			if (c > 0 && mp_pidset_add(tree, c) == 1 && mp_pidset_add(todo, c) < 0)
				ret = -ENOMEM;
		}
	}
	closedir(d);
	return ret;
}

int mp_proc_tree(const char *root, pid_t top, struct mp_pidset *set)
{
	struct mp_pidset tree = { 0 }, todo = { 0 };
	char p[PATH_MAX];
	int ret = 0;

	if (mp_path(p, sizeof(p), "%s/proc/%d", root, (int)top) || access(p, F_OK))
		return -ESRCH;
	if (mp_pidset_add(&tree, top) < 0 || mp_pidset_add(&todo, top) < 0)
		ret = -ENOMEM;
	while (todo.n && !ret) {
		pid_t pid = todo.pids[--todo.n];

		ret = add_children(root, pid, &tree, &todo);
	}
	if (!ret)
		ret = merge(set, &tree);
	mp_pidset_free(&todo);
	mp_pidset_free(&tree);
	if (ret == -ENOENT)
		return mp_proc_tree_by_parent(root, top, set);
	return ret;
}

/* The parent of pid from /proc/PID/stat ("pid (comm) S ppid ..."); 0 when
 * unreadable. */
static pid_t parent_of(const char *root, const char *pid)
{
	char p[PATH_MAX], buf[1024], *rp;
	int ppid;

	if (mp_path(p, sizeof(p), "%s/proc/%s/stat", root, pid) ||
	    mp_read_file(p, buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')) ||
	    sscanf(rp + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

int mp_proc_tree_by_parent(const char *root, pid_t top, struct mp_pidset *set)
{
	struct { pid_t pid, ppid; } *all = NULL, *na;
	struct mp_pidset tree = { 0 };
	size_t n = 0, cap = 0;
	char p[PATH_MAX];
	struct dirent *e;
	bool grew = true;
	int ret = 0;
	DIR *d;

	if (mp_path(p, sizeof(p), "%s/proc/%d", root, (int)top) || access(p, F_OK))
		return -ESRCH;
	if (mp_path(p, sizeof(p), "%s/proc", root) || !(d = opendir(p)))
		return -errno;
	while (!ret && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			if (!(na = realloc(all, cap * sizeof(*all)))) {
				ret = -ENOMEM;
				break;
			}
			all = na;
		}
		all[n].pid = (pid_t)atoi(e->d_name);
		all[n++].ppid = parent_of(root, e->d_name);
	}
	closedir(d);
	if (!ret && mp_pidset_add(&tree, top) < 0)
		ret = -ENOMEM;
	/* until no process joins: a child may be listed before its parent */
	while (grew && !ret) {
		grew = false;
		for (size_t i = 0; i < n && !ret; i++) {
			if (!all[i].ppid || !mp_pidset_has(&tree, all[i].ppid) ||
			    mp_pidset_has(&tree, all[i].pid))
				continue;
			ret = mp_pidset_add(&tree, all[i].pid) < 0 ? -ENOMEM : 0;
			grew = true;
		}
	}
	if (!ret)
		ret = merge(set, &tree);
	free(all);
	mp_pidset_free(&tree);
	return ret;
}
