// SPDX-License-Identifier: GPL-2.0
/*
 * The -o writer: a report written whole or not at all (out.h). Where -o
 * PATH finally points (out_resolve: symlinks followed, our own descriptors
 * and other processes' fd links told apart), whether a report can go there
 * (mp_out_check, at option time) and the file it goes to (mp_out_open: a
 * temporary file beside it, renamed over it by mp_out_commit), both from
 * one switch over the kinds of target (out_fd); record's rotation
 * (mp_out_reopen) and the rescue of a document that could not be written
 * (mp_save_new).
 */
#include "out.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "util.h"

/*
 * Where a report for -o PATH goes. Symlinks are followed one hop at a time
 * (relative targets against the link's directory) to what PATH finally
 * names; a link in /proc/PID/fd or /proc/PID/task/TID/fd (/dev/stdout,
 * /dev/fd/N, /proc/self/fd/N) is a magic link to an open file and is not
 * followed as text.
 */
enum out_kind {
	OUT_FILE,     /* a regular file, or missing in an existing directory: temp + rename */
	OUT_OWN_FD,   /* a descriptor of ours: written through a dup of it */
	OUT_IN_PLACE, /* a FIFO, a device, another process's fd link: opened and written */
	OUT_SOCKET,   /* a unix socket: connected and written */
	OUT_DIR,      /* a directory: refused */
};

struct out_target {
	enum out_kind kind;
	int fd;                /* OUT_OWN_FD */
	char path[4096];       /* what PATH finally names */
	char dir[4096];        /* its directory */
	const char *base;      /* its last component, in path */
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* /proc/PID/fd or /proc/PID/task/TID/fd; *pid is PID. */
static bool is_proc_fd_dir(const char *dir, long *pid)
{
	char *end;
	const char *p;

	if (strncmp(dir, "/proc/", 6))
		return false;
	*pid = strtol(dir + 6, &end, 10);
	if (end == dir + 6 || *end != '/')
		return false;
	if (strcmp(end, "/fd") == 0)
		return true;
	if (strncmp(end, "/task/", 6))
		return false;
	p = end + 6;
	if (!isdigit((unsigned char)*p))
		return false;
	while (isdigit((unsigned char)*p))
		p++;
	return strcmp(p, "/fd") == 0;
}

/* Split path into t->dir and t->base (t->path holds path). */
static int split_path(struct out_target *t, const char *path)
{
	const char *slash;

	if (mp_path(t->path, sizeof(t->path), "%s", path))
		return -ENAMETOOLONG;
	slash = strrchr(t->path, '/');
	if (!slash) {
		strcpy(t->dir, ".");
		t->base = t->path;
	} else {
		if (slash == t->path)
			strcpy(t->dir, "/");
		else
			snprintf(t->dir, sizeof(t->dir), "%.*s", (int)(slash - t->path), t->path);
		t->base = slash + 1;
	}
	return 0;
}

/* Resolve -o PATH. Returns 0 or -errno (-ENOENT: the directory is missing). */
static int out_resolve(const char *path, struct out_target *t)
{
	char cur[4096], link[4096], canon[PATH_MAX], next[4096];
	struct stat st;
	long pid;
	ssize_t n;
	int err;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (!*path)
		return -EINVAL;
	if (path[strlen(path) - 1] == '/') {
		t->kind = OUT_DIR;
		return split_path(t, path);
	}
	if (mp_path(cur, sizeof(cur), "%s", path))
		return -ENAMETOOLONG;
	for (int hop = 0; hop < 40; hop++) {
		if ((err = split_path(t, cur)))
			return err;
		if (!realpath(t->dir, canon))
			return -errno;
		if (is_proc_fd_dir(canon, &pid) && all_digits(t->base)) {
			if (pid == (long)getpid()) {
				t->kind = OUT_OWN_FD;
				t->fd = atoi(t->base);
				return 0;
			}
			t->kind = OUT_IN_PLACE;
			return stat(cur, &st) ? -errno : 0;
		}
		if (lstat(cur, &st)) {
			if (errno != ENOENT)
				return -errno;
			t->kind = OUT_FILE; /* missing: made in an existing directory */
			return 0;
		}
		if (!S_ISLNK(st.st_mode)) {
			t->kind = S_ISREG(st.st_mode) ? OUT_FILE :
				  S_ISDIR(st.st_mode) ? OUT_DIR :
				  S_ISSOCK(st.st_mode) ? OUT_SOCKET : OUT_IN_PLACE;
			return 0;
		}
		n = readlink(cur, link, sizeof(link) - 1);
		if (n < 0)
			return -errno;
		link[n] = '\0';
		if (link[0] == '/' || !strcmp(t->dir, "."))
			err = mp_path(next, sizeof(next), "%s", link);
		else
			err = mp_path(next, sizeof(next), "%s/%s", t->dir, link);
		if (err)
			return err;
		memcpy(cur, next, sizeof(cur));
	}
	return -ELOOP;
}

/* Remove DIR/BASE.memprobe-tmp-PID files left by memprobes that are gone
 * (SIGKILL): regular files only, only that exact pattern, not our own. */
static void reap_stale_tmps(const char *dir, const char *base)
{
	static const char sfx[] = ".memprobe-tmp-";
	size_t blen = strlen(base), slen = sizeof(sfx) - 1;
	struct dirent *de;
	DIR *d = opendir(dir);
	int dfd;

	if (!d)
		return;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		const char *pidstr = de->d_name + blen + slen;
		struct stat st;
		long pid;

		if (strncmp(de->d_name, base, blen) || strncmp(de->d_name + blen, sfx, slen) ||
		    !all_digits(pidstr) || strlen(pidstr) > 9)
			continue;
		pid = atol(pidstr);
		/* our own pid too: a memprobe killed earlier had it */
		if (pid != (long)getpid() && mp_pid_is_memprobe(pid))
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		unlinkat(dfd, de->d_name, 0);
	}
	closedir(d);
}

static int open_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A FIFO, a terminal, /dev/null: renaming a temporary file over it would
 * replace it. Truncated only if it is a regular file behind another
 * process's fd link. */
static int open_in_place(const char *path)
{
	struct stat st;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* A temporary file beside the file t names, into o->tmp (o->path: the
 * file it replaces at the commit). */
static int open_tmp(const struct out_target *t, struct mp_out *o)
{
	struct stat st;
	int fd;

	reap_stale_tmps(t->dir, t->base);
	if (mp_path(o->path, sizeof(o->path), "%s", t->path) ||
	    mp_path(o->tmp, sizeof(o->tmp), "%s.memprobe-tmp-%d", t->path, (int)getpid()))
		return -ENAMETOOLONG;
	fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	/* a replaced file keeps its mode and owner */
	if (stat(o->path, &st) == 0) {
		if (fchown(fd, st.st_uid, st.st_gid)) { /* not root: ours, then */ }
		fchmod(fd, st.st_mode & 07777);
	}
	return fd;
}

/*
 * The one switch over the kinds of target. With o NULL, whether a report
 * could be written there (mp_out_check: nothing opened, nothing made): 0 or
 * -errno. With o, the descriptor it is written to (mp_out_open), or -errno.
 */
static int out_fd(const struct out_target *t, struct mp_out *o)
{
	int fd, fl;

	switch (t->kind) {
	case OUT_DIR:
		return -EISDIR;
	case OUT_OWN_FD:
		if (o) {
			/* the descriptor the shell set up (>, >>, a pipe): its
			 * offset, its O_APPEND, its truncation or not */
			fd = fcntl(t->fd, F_DUPFD_CLOEXEC, 3);
			return fd < 0 ? -errno : fd;
		}
		fl = fcntl(t->fd, F_GETFL);
		return fl < 0 || (fl & O_ACCMODE) == O_RDONLY ? -EBADF : 0;
	case OUT_SOCKET:
		if (o)
			return open_socket(t->path);
		return access(t->path, W_OK) ? -errno : 0;
	case OUT_IN_PLACE:
		if (o)
			return open_in_place(t->path);
		return access(t->path, W_OK) ? -errno : 0;
	case OUT_FILE:
		if (o)
			return open_tmp(t, o);
		return access(t->dir, W_OK) ? -errno : 0;
	}
	return -EINVAL;
}

int mp_out_check(const char *path)
{
	struct out_target t;
	int err;

	if (!path || strcmp(path, "-") == 0)
		return 0;
	if ((err = out_resolve(path, &t)))
		return err;
	return out_fd(&t, NULL);
}

int mp_out_live_check(const char *path, const char *report)
{
	struct out_target t, r;
	struct stat st, sr;
	int err;

	/* mp_out_check() has had it at option time */
	if ((err = out_resolve(path, &t)))
		return err;
	/* a FIFO's open waits for a reader, and the recording with it */
	if (t.kind == OUT_IN_PLACE && !stat(t.path, &st) && S_ISFIFO(st.st_mode))
		return -EPIPE;
	if (t.kind != OUT_OWN_FD)
		return 0;
	/* the report's descriptor: standard output, or one of ours */
	if (!report || !strcmp(report, "-"))
		r.fd = STDOUT_FILENO;
	else if (out_resolve(report, &r) || r.kind != OUT_OWN_FD)
		return 0;
	if (t.fd == r.fd || (!fstat(t.fd, &st) && !fstat(r.fd, &sr) &&
			     st.st_dev == sr.st_dev && st.st_ino == sr.st_ino))
		return -EBUSY;
	return 0;
}

/*
 * A report written to one path must not replace another file the command
 * reads or writes (its input document, record's --openmetrics file): the
 * same path as given, the same regular file by st_dev/st_ino (a symlink or
 * hard link to it), or, where a file does not exist yet, the same name in
 * the same directory once symlinks are followed.
 */
bool mp_same_file(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX];
	struct out_target ta, tb;
	struct stat sa, sb;

	/* standard input and output are no file of ours */
	if (!a || !b || !*a || !*b || !strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	if (!strcmp(a, b))
		return true;
	/* regular files only: /dev/stdin and /dev/stdout on one terminal are
	 * the same inode, and reading one does not clobber the other */
	if (!stat(a, &sa) && !stat(b, &sb) && S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (out_resolve(a, &ta) || out_resolve(b, &tb) || ta.kind != OUT_FILE ||
	    tb.kind != OUT_FILE || !realpath(ta.dir, da) || !realpath(tb.dir, db))
		return false;
	return !strcmp(da, db) && !strcmp(ta.base, tb.base);
}

int mp_out_check_opt(const char *cmd, const char *path)
{
	const char *problem, *fix;
	char buf[128];
	int err;

	if (path && !*path) {
		fprintf(stderr, "memprobe %s: -o \"\": an empty path; "
			"give a file name, or - for standard output\n", cmd);
		return MP_EXIT_USAGE;
	}
	err = mp_out_check(path);
	switch (err) {
	case 0:
		return 0;
	case -EISDIR:
		problem = "names a directory";
		fix = "give a file name, in it or elsewhere";
		break;
	case -EBADF:
		problem = "names a descriptor not open for writing";
		fix = "redirect it to a file, or give a file name";
		break;
	case -ENOENT:
	case -ENOTDIR:
	case -EACCES:
	case -EROFS:
		problem = "cannot write to its directory";
		fix = "give a path in an existing, writable directory";
		break;
	default:
		snprintf(buf, sizeof(buf), "cannot resolve it (%s)", strerror(-err));
		problem = buf;
		fix = "give a path to a file in an existing, writable directory";
		break;
	}
	fprintf(stderr, "memprobe %s: -o %s: %s; %s\n", cmd, path, problem, fix);
	return MP_EXIT_USAGE;
}
int mp_out_open(struct mp_out *o, const char *path)
{
	struct out_target t;
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	if ((err = out_resolve(path, &t)))
		return err;
	if ((fd = out_fd(&t, o)) < 0)
		return fd;
	o->direct = t.kind != OUT_FILE;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		if (!o->direct)
			unlink(o->tmp);
		return err;
	}
	return 0;
}

int mp_out_commit(struct mp_out *o)
{
	int err = 0;

	if (!o->f)
		return -EBADF;
	if (fflush(o->f) || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (o->f == stdout) {
		o->f = NULL;
		return err;
	}
	if (!err && !o->direct && fsync(fileno(o->f)))
		err = -errno;
	if (fclose(o->f) && !err)
		err = errno ? -errno : -EIO;
	o->f = NULL;
	if (o->direct)
		return err;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	return err;
}

void mp_out_abort(struct mp_out *o)
{
	if (!o->f)
		return;
	if (o->f != stdout) {
		fclose(o->f);
		if (!o->direct)
			unlink(o->tmp);
	}
	o->f = NULL;
}

/* Remove the file open as fd, wherever it went, if it is one of ours: a
 * regular file named BASE.memprobe-tmp-PID, with our pid, of fd's inode. */
static void unlink_moved_tmp(int fd)
{
	char link[64], where[PATH_MAX], sfx[64];
	struct stat a, b;
	ssize_t n;
	size_t len, slen;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, where, sizeof(where) - 1);
	if (n <= 0)
		return;
	where[n] = '\0';
	len = (size_t)n;
	slen = (size_t)snprintf(sfx, sizeof(sfx), ".memprobe-tmp-%d", (int)getpid());
	/* "(deleted)": removed already */
	if (len <= slen || strcmp(where + len - slen, sfx) || fstat(fd, &a) ||
	    lstat(where, &b) || !S_ISREG(b.st_mode) || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino)
		return;
	unlink(where);
}

int mp_out_reopen(struct mp_out *o)
{
	struct mp_out n;
	struct stat a, b;
	int err;

	if (!o->f || o->f == stdout || o->direct)
		return 0;
	if (!stat(o->tmp, &a) && !fstat(fileno(o->f), &b) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino)
		return 0;
	if ((err = mp_out_open(&n, o->path)))
		return err;
	/* nothing was written to it yet: the report is written at the end */
	unlink_moved_tmp(fileno(o->f));
	fclose(o->f);
	*o = n;
	return 1;
}

int mp_save_new(const char *path, const char *text, size_t len)
{
	char tmp[4200];
	size_t done = 0;
	int fd, err = 0;

	if (mp_path(tmp, sizeof(tmp), "%s.memprobe-tmp-%d", path, (int)getpid()))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	while (done < len && !err) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	/* never over a file of that name: renamed only where there is none
	 * (a link where the filesystem cannot rename so) */
	if (!err && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE)) {
		err = -errno;
		if (err == -EINVAL)
			err = link(tmp, path) ? -errno : 0;
	}
	unlink(tmp); /* gone once renamed; the link's other name */
	return err;
}

bool mp_out_shares_fd(const struct mp_out *o, int fd)
{
	struct stat a, b;

	return o->f && fstat(fileno(o->f), &a) == 0 && fstat(fd, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* What brings a failed write back, by its errno. */
static const char *write_fix(int err, bool std)
{
	switch (err) {
	case ENOSPC:
	case EDQUOT:
	case EFBIG:
		return std ? "free space where standard output goes, or give -o a file on "
			     "another filesystem" : "free space there, or give -o a file on "
			     "another filesystem";
	case EACCES:
	case EPERM:
	case EROFS:
		return "give -o a file in a directory you may write";
	case EPIPE:
		return "keep the reader open until memprobe ends, or give -o a file";
	default:
		return std ? "check where standard output goes, or give -o a file" :
			     "check the device (dmesg), or give -o another file";
	}
}

int mp_out_failed(const char *cmd, const char *path, int err)
{
	bool std = !path || !strcmp(path, "-");

	fprintf(stderr, "memprobe %s: cannot write the report to %s: %s; %s\n", cmd,
		std ? "standard output" : path, strerror(err), write_fix(err, std));
	return MP_EXIT_RUNTIME;
}
