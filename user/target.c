// SPDX-License-Identifier: GPL-2.0
/* The target cgroup of a command: --cgroup PATH or --pid PID. */
#include "target.h"
#include "cli.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_dir(const char *root, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return !mp_path(p, sizeof(p), "%s%s", path[0] == '/' ? root : "", path) &&
	       stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int mp_resolve_target(const char *cmd, const char *root, const struct mp_host *h,
		      const char *path, const char *pid_arg, struct mp_cgroup *cg)
{
	int err;

	if (h->cg_mode == MP_CG_NONE || (!h->v1_memory_mount[0] && !h->v2_has_memory)) {
		fprintf(stderr, "memprobe %s: no memory cgroup controller is mounted; "
			"mount cgroup2 with memory enabled, or the v1 memory controller\n", cmd);
		return MP_EXIT_RUNTIME;
	}
	if (path) {
		err = mp_cgroup_from_path(root, h, path, cg);
		if (err == -ENOENT && is_dir(root, path)) {
			fprintf(stderr, "memprobe %s: --cgroup %s: a directory, but not a memory cgroup; "
				"give a directory under %s or a path as /proc/PID/cgroup shows it\n",
				cmd, path, h->v1_memory_mount[0] ? h->v1_memory_mount : h->v2_mount);
			return MP_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "memprobe %s: --cgroup %s: no such memory cgroup (%s); "
				"give a directory under %s or a path as /proc/PID/cgroup shows it\n",
				cmd, path, strerror(-err),
				h->v1_memory_mount[0] ? h->v1_memory_mount : h->v2_mount);
			return MP_EXIT_USAGE;
		}
	} else {
		long pid = 0;

		/* the kernel's PID_MAX_LIMIT: 4194304 on 64 bits; 0x3fffffff is
		 * the largest any kernel could give */
		if (pid_arg && (err = mp_cli_count(cmd, "--pid", pid_arg, 1, 0x3fffffff,
						   "a process id", "give a positive number", &pid)))
			return err;
		if (pid && mp_pid_is_zombie(root, (pid_t)pid)) {
			/* its /proc/PID/cgroup names the root: it has left its cgroup */
			fprintf(stderr, "memprobe %s: --pid %ld: the process has exited (a zombie "
				"not yet reaped by its parent); give the pid of a running process\n",
				cmd, pid);
			return MP_EXIT_USAGE;
		}
		err = mp_cgroup_of_pid(root, h, (pid_t)pid, cg);
		if (err == -ESRCH) {
			fprintf(stderr, "memprobe %s: --pid %ld: no such process; "
				"give the pid of a running process\n", cmd, pid);
			return MP_EXIT_USAGE;
		}
		if (err == -EXDEV) {
			/* a bind-mounted subtree: the cgroup is not under the mount */
			fprintf(stderr, "memprobe %s: the memory cgroup of %s (%s) lies outside "
				"the hierarchy mounted at %s (which shows %s); give the cgroup "
				"with --cgroup DIR\n", cmd, pid ? pid_arg : "memprobe", cg->path,
				cg->version == 1 ? h->v1_memory_mount : h->v2_mount,
				cg->version == 1 ? h->v1_memory_root : h->v2_root);
			return MP_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "memprobe %s: cannot find the memory cgroup of %s: %s\n",
				cmd, pid ? pid_arg : "memprobe", strerror(-err));
			return pid ? MP_EXIT_USAGE : MP_EXIT_RUNTIME;
		}
	}
	err = mp_cgroup_read(root, h, cg);
	if (err) {
		fprintf(stderr, "memprobe %s: cannot read %s: %s\n", cmd, cg->dir, strerror(-err));
		return MP_EXIT_RUNTIME;
	}
	return 0;
}
