// SPDX-License-Identifier: GPL-2.0
#include "lock.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* This process's pid namespace, by its inode (0: no /proc to tell). */
static unsigned long long pid_ns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long long)st.st_ino;
}

/*
 * The holder writes "PID PIDNS" right after flock; give it a moment. A
 * pid is its own namespace's: a memprobe run as a container's first
 * process wrote 1, and the host's refusal named "pid 1", its init. Such a
 * holder is told apart (*elsewhere); a file of an older memprobe holds the
 * pid alone.
 */
static pid_t read_holder(int fd, bool *elsewhere)
{
	struct timespec ts = { 0, 5 * 1000 * 1000 };
	unsigned long long ns = 0, own = pid_ns();
	char buf[64];

	*elsewhere = false;
	for (int i = 0; i < 40; i++) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
		long pid = 0;

		if (n > 0) {
			buf[n] = '\0';
			if (sscanf(buf, "%ld %llu", &pid, &ns) < 1)
				return 0;
			*elsewhere = ns && own && ns != own;
			return (pid_t)pid;
		}
		nanosleep(&ts, NULL);
	}
	return 0;
}

int mp_lock_probe(const struct mp_cgroup *cg, struct mp_lock *l, pid_t *holder)
{
	struct stat cst, a, b;
	char pid[64];
	int fd, n;

	l->fd = -1;
	l->path[0] = '\0';
	l->holder_elsewhere = false;
	*holder = 0;
	if (stat(cg->dir, &cst))
		return -errno;
	/* A static memprobe copied into a bare container image (FROM scratch)
	 * may find no /run at all: make it, as a container runtime would. */
	n = mkdir(MP_LOCK_DIR, 0755);
	if (n && errno == ENOENT && (!mkdir("/run", 0755) || errno == EEXIST))
		n = mkdir(MP_LOCK_DIR, 0755);
	if (n && errno != EEXIST)
		return -errno;
	snprintf(l->path, sizeof(l->path), MP_LOCK_DIR "/probe-%llx-%llx.lock",
		 (unsigned long long)cst.st_dev, (unsigned long long)cst.st_ino);
	/* A holder unlinks the file before it unlocks: retry until the file
	 * locked is the one the path names. */
	for (int tries = 0; tries < 100; tries++) {
		fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = -errno;

			if (err == -EWOULDBLOCK)
				*holder = read_holder(fd, &l->holder_elsewhere);
			close(fd);
			return err;
		}
		if (fstat(fd, &a) == 0 && stat(l->path, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0)
		return -EAGAIN;
	n = snprintf(pid, sizeof(pid), "%d %llu\n", (int)getpid(), pid_ns());
	if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
		int err = -errno;

		unlink(l->path);
		close(fd);
		return err;
	}
	l->fd = fd;
	return 0;
}

void mp_lock_release(struct mp_lock *l)
{
	if (l->fd < 0)
		return;
	unlink(l->path);
	close(l->fd);
	l->fd = -1;
}

int mp_lock_probe_or_say(const char *cmd, const struct mp_cgroup *cg, struct mp_lock *l)
{
	pid_t holder;
	int err = mp_lock_probe(cg, l, &holder);

	if (err == -EWOULDBLOCK) {
		if (holder)
			fprintf(stderr, "memprobe %s: a memprobe (pid %d%s) is probing %s already; "
				"wait for it to finish\n", cmd, (int)holder,
				l->holder_elsewhere ? " in another pid namespace" : "", cg->dir);
		else
			fprintf(stderr, "memprobe %s: another memprobe is probing %s already; "
				"wait for it to finish\n", cmd, cg->dir);
		return MP_EXIT_RUNTIME;
	}
	if (err) {
		fprintf(stderr, "memprobe %s: cannot take the probe lock %s: %s\n", cmd,
			l->path[0] ? l->path : MP_LOCK_DIR, strerror(-err));
		return MP_EXIT_RUNTIME;
	}
	return 0;
}
