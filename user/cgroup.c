// SPDX-License-Identifier: GPL-2.0
/*
 * A memory cgroup (cgroup.h): discovery (a process's cgroup, a path's,
 * placed in the hierarchy the host mounts: host.c) and the cgroup's own
 * files: limits up the path to the root, usage, peak, events, the
 * throttling point, memory.stat by category, the kernel's id, the
 * processes below it; and the cgroups memprobe makes: create, delegate,
 * attach, remove, and reap what a killed memprobe left.
 */
#include "cgroup.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int path_depth(const char *path)
{
	int depth = 0;

	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1] && p[1] != '/')
			depth++;
	return depth;
}

/* Fill dir/mount/level of cg from its hierarchy path and version. */
static int place(const char *root, const struct mp_host *h, struct mp_cgroup *cg)
{
	const char *mnt = cg->version == 1 ? h->v1_memory_mount : h->v2_mount;
	const char *mroot = cg->version == 1 ? h->v1_memory_root : h->v2_root;
	const char *rel = cg->path;
	size_t rlen = strlen(mroot);
	char p[PATH_MAX];
	struct stat st;
	int err;

	/* The mount shows the hierarchy from mroot down: strip it from the path. */
	if (strcmp(mroot, "/") != 0) {
		/* outside the subtree the mount shows (a bind-mounted subtree) */
		if (strncmp(rel, mroot, rlen) != 0 || (rel[rlen] && rel[rlen] != '/'))
			return -EXDEV;
		rel += rlen;
	}
	if ((err = mp_path(cg->dir, sizeof(cg->dir), "%s%s", mnt,
			   strcmp(rel, "/") == 0 ? "" : rel)))
		return err;
	mp_strlcpy(cg->mount, mnt, sizeof(cg->mount));
	cg->level = path_depth(cg->path);
	if ((err = mp_root_path(p, sizeof(p), root, cg->dir)))
		return err;
	if (stat(p, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/*
	 * On v2 a cgroup whose parent does not delegate the memory controller
	 * has no memory.* files: its memory is accounted to the nearest
	 * ancestor that has them, which is the memory cgroup that counts.
	 */
	while (cg->version == 2 && strcmp(cg->dir, cg->mount) != 0) {
		char *slash;

		if (mp_root_path(p, sizeof(p), root, cg->dir) || strlen(p) + 16 >= sizeof(p))
			break;
		strcat(p, "/memory.current");
		if (access(p, F_OK) == 0)
			break;
		slash = strrchr(cg->dir, '/');
		if (!slash || (size_t)(slash - cg->dir) < strlen(cg->mount))
			break;
		*slash = '\0';
		slash = strrchr(cg->path, '/');
		if (slash && slash != cg->path)
			*slash = '\0';
		else
			strcpy(cg->path, "/");
		cg->level--;
	}
	return 0;
}

bool mp_pid_is_zombie(const char *root, pid_t pid)
{
	char proc[64], p[PATH_MAX], buf[1024], *rp;

	snprintf(proc, sizeof(proc), "/proc/%d/stat", (int)pid);
	if (mp_root_path(p, sizeof(p), root, proc) || mp_read_file(p, buf, sizeof(buf)) <= 0)
		return false;
	/* "pid (comm) S ...": comm may hold spaces and parentheses */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

bool mp_cgroup_is_host_root(const char *root, const struct mp_cgroup *cg)
{
	char p[PATH_MAX];
	struct stat st;

	/* kernfs numbers a hierarchy's root directory 1; the root a cgroup
	 * namespace shows as "/" is a cgroup of its own, with another number */
	if (mp_root_path(p, sizeof(p), root, cg->dir) || stat(p, &st))
		return false;
	return st.st_ino == 1 && strcmp(cg->dir, cg->mount) == 0;
}

int mp_cgroup_of_pid(const char *root, const struct mp_host *h, pid_t pid,
		     struct mp_cgroup *cg)
{
	char p[PATH_MAX], proc[64], line[PATH_MAX + 64];
	char v1path[PATH_MAX] = "", v2path[PATH_MAX] = "";
	bool v1 = false, v2 = false;
	FILE *f;

	memset(cg, 0, sizeof(*cg));
	if (pid)
		snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(proc, sizeof(proc), "/proc/self/cgroup");
	if (mp_root_path(p, sizeof(p), root, proc))
		return -ENAMETOOLONG;
	f = fopen(p, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		*c1 = *c2 = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		if (strcmp(line, "0") == 0 && c1[1] == '\0') {
			mp_strlcpy(v2path, c2 + 1, sizeof(v2path));
			v2 = true;
		} else if (mp_list_has(c1 + 1, "memory")) {
			mp_strlcpy(v1path, c2 + 1, sizeof(v1path));
			v1 = true;
		}
	}
	fclose(f);
	if (v1 && h->v1_memory_mount[0]) {
		cg->version = 1;
		mp_strlcpy(cg->path, v1path, sizeof(cg->path));
	} else if (v2 && h->v2_mount[0] && h->v2_has_memory) {
		cg->version = 2;
		mp_strlcpy(cg->path, v2path, sizeof(cg->path));
	} else {
		return -ENOENT;
	}
	return place(root, h, cg);
}

int mp_cgroup_from_path(const char *root, const struct mp_host *h,
			const char *path, struct mp_cgroup *cg)
{
	const struct { int version; const char *mnt, *mroot; bool ok; } hier[] = {
		{ .version = 1, .mnt = h->v1_memory_mount, .mroot = h->v1_memory_root,
		  .ok = h->v1_memory_mount[0] != 0 },
		{ .version = 2, .mnt = h->v2_mount, .mroot = h->v2_root,
		  .ok = h->v2_mount[0] && h->v2_has_memory },
	};
	char clean[PATH_MAX], full[PATH_MAX], real[PATH_MAX];
	size_t n, rlen = root ? strlen(root) : 0;

	memset(cg, 0, sizeof(*cg));
	if (!path || !path[0])
		return -EINVAL;
	/* A directory given relative to the working directory, with . and ..
	 * in it, or through a symbolic link: its canonical form, so that it
	 * matches a mount point. */
	if (!mp_path(full, sizeof(full), "%s%s", path[0] == '/' ? (root ? root : "") : "", path) &&
	    realpath(full, real) && (!rlen || strncmp(real, root, rlen) == 0))
		path = real[rlen] ? real + rlen : "/";
	if (path[0] != '/')
		return -ENOENT;
	mp_strlcpy(clean, path, sizeof(clean));
	n = strlen(clean);
	while (n > 1 && clean[n - 1] == '/')
		clean[--n] = '\0';

	/* A directory under a memory hierarchy's mount point. */
	for (size_t i = 0; i < 2; i++) {
		size_t mlen = strlen(hier[i].mnt);

		if (!hier[i].ok || strncmp(clean, hier[i].mnt, mlen) != 0 ||
		    (clean[mlen] && clean[mlen] != '/'))
			continue;
		cg->version = hier[i].version;
		if (mp_path(cg->path, sizeof(cg->path), "%s%s",
			    strcmp(hier[i].mroot, "/") ? hier[i].mroot : "",
			    clean[mlen] ? clean + mlen : (strcmp(hier[i].mroot, "/") ? "" : "/")))
			return -ENAMETOOLONG;
		return place(root, h, cg);
	}
	/* A path inside the hierarchy, as /proc/PID/cgroup writes it. */
	for (size_t i = 0; i < 2; i++) {
		if (!hier[i].ok)
			continue;
		cg->version = hier[i].version;
		mp_strlcpy(cg->path, clean, sizeof(cg->path));
		if (place(root, h, cg) == 0)
			return 0;
	}
	memset(cg, 0, sizeof(*cg));
	return -ENOENT;
}

const char *mp_cgroup_file(const struct mp_cgroup *cg, const char *what)
{
	static const struct { const char *what, *v1, *v2; } names[] = {
		{ "limit", "memory.limit_in_bytes", "memory.max" },
		{ "usage", "memory.usage_in_bytes", "memory.current" },
		{ "peak", "memory.max_usage_in_bytes", "memory.peak" },
		{ "stat", "memory.stat", "memory.stat" },
		{ "procs", "cgroup.procs", "cgroup.procs" },
		{ "swap", "memory.memsw.limit_in_bytes", "memory.swap.max" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i].what, what) == 0)
			return cg->version == 1 ? names[i].v1 : names[i].v2;
	return NULL;
}

/* Read dir/file under root into *val; v1's unlimited sentinel becomes MP_UNLIMITED. */
static int read_cg_u64(const char *root, const char *dir, const char *file, uint64_t *val)
{
	char p[PATH_MAX];
	int err;

	if (mp_path(p, sizeof(p), "%s%s/%s", root ? root : "", dir, file))
		return -ENAMETOOLONG;
	err = mp_read_u64_file(p, val);
	if (!err && *val >= MP_V1_UNLIMITED)
		*val = MP_UNLIMITED;
	return err;
}

uint64_t mp_cgroup_oom_kills(const struct mp_cgroup *cg)
{
	char p[PATH_MAX];
	uint64_t v = 0;

	if (!mp_path(p, sizeof(p), "%s/%s", cg->dir,
		     cg->version == 1 ? "memory.oom_control" : "memory.events"))
		mp_read_keyed_u64(p, "oom_kill", &v);
	return v;
}

uint64_t mp_cgroup_limit_hits(const struct mp_cgroup *cg)
{
	char p[PATH_MAX];
	uint64_t v = 0;

	if (cg->version == 1) {
		if (mp_path(p, sizeof(p), "%s/memory.failcnt", cg->dir) || mp_read_u64_file(p, &v))
			return 0;
	} else if (mp_path(p, sizeof(p), "%s/memory.events", cg->dir) ||
		   mp_read_keyed_u64(p, "max", &v)) {
		return 0;
	}
	return v;
}

int mp_cgroup_usage(const char *root, const struct mp_cgroup *cg, uint64_t *usage)
{
	int err = read_cg_u64(root, cg->dir, mp_cgroup_file(cg, "usage"), usage);
	uint64_t total, avail;
	char p[PATH_MAX];

	/* The v2 root keeps no memory.current: the host's use stands for it. */
	if (err == -ENOENT && cg->version == 2 && strcmp(cg->dir, cg->mount) == 0 &&
	    !mp_root_path(p, sizeof(p), root, "/proc/meminfo") &&
	    !mp_read_keyed_u64(p, "MemTotal", &total) &&
	    !mp_read_keyed_u64(p, "MemAvailable", &avail)) {
		*usage = (total - MP_MIN(total, avail)) * 1024;
		return 0;
	}
	return err;
}

int mp_cgroup_file_bytes(const char *root, const struct mp_cgroup *cg, uint64_t *bytes)
{
	const char *keys[2] = { "inactive_file", "active_file" };
	char p[PATH_MAX], k[32];
	uint64_t v;

	*bytes = 0;
	for (int i = 0; i < 2; i++) {
		int err;

		snprintf(k, sizeof(k), "%s%s", cg->version == 1 ? "total_" : "", keys[i]);
		if (mp_path(p, sizeof(p), "%s%s/memory.stat", root ? root : "", cg->dir))
			return -ENAMETOOLONG;
		if ((err = mp_read_keyed_u64(p, k, &v)))
			return err;
		*bytes += v;
	}
	return 0;
}

static void read_moment(const char *root, struct mp_cgroup *cg);

/*
 * The throttling point: the lowest memory.high (v2) or soft limit (v1) from
 * cg up to the hierarchy's mount point, kept when below the effective limit.
 * Then the page cache the kernel can reclaim, and the soft headroom.
 */
static void read_throttle(const char *root, struct mp_cgroup *cg)
{
	const char *file = cg->version == 1 ? "memory.soft_limit_in_bytes" : "memory.high";
	uint64_t low = MP_UNLIMITED, v;
	char dir[PATH_MAX], from[PATH_MAX] = "";

	mp_strlcpy(dir, cg->dir, sizeof(dir));
	for (;;) {
		char *slash;

		if (!read_cg_u64(root, dir, file, &v) && v != MP_UNLIMITED && v < low) {
			low = v;
			mp_strlcpy(from, dir, sizeof(from));
		}
		if (strcmp(dir, cg->mount) == 0 || !(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
		if (strlen(dir) < strlen(cg->mount))
			break;
	}
	cg->throttle_bytes = 0;
	cg->throttle_from[0] = cg->throttle_kind[0] = '\0';
	if (low < cg->effective_limit_bytes) {
		cg->throttle_bytes = low;
		mp_strlcpy(cg->throttle_from, from, sizeof(cg->throttle_from));
		mp_strlcpy(cg->throttle_kind, cg->version == 1 ? "soft_limit" : "memory.high",
			 sizeof(cg->throttle_kind));
	}
	cg->has_reclaimable = !mp_cgroup_file_bytes(root, cg, &cg->reclaimable_bytes);
	if (!cg->has_reclaimable)
		cg->reclaimable_bytes = 0;
	/* MemAvailable counts the page cache the kernel can reclaim already:
	 * where it is the bound, the cache is not added twice */
	cg->soft_headroom_bytes = cg->headroom_bytes +
				  (strcmp(cg->headroom_from, "MemAvailable") ? cg->reclaimable_bytes : 0);
	read_moment(root, cg);
}

/* What memory.stat says of the moment the cgroup is read: the memory no
 * process maps and the huge pages. */
static void read_moment(const char *root, struct mp_cgroup *cg)
{
	static const int thp[3] = { MP_CAT_ANON_THP, MP_CAT_FILE_THP, MP_CAT_SHMEM_THP };
	struct mp_cg_stat st;

	cg->has_unmapped = false;
	memset(cg->has_thp, 0, sizeof(cg->has_thp));
	if (mp_cgroup_stat(root, cg, &st))
		return;
	cg->has_unmapped = st.have[MP_CAT_FILE] && st.have[MP_CAT_SHMEM] && st.have_file_mapped;
	cg->file_mapped_bytes = st.file_mapped;
	cg->file_unmapped_bytes = st.bytes[MP_CAT_FILE] > st.file_mapped ?
				  st.bytes[MP_CAT_FILE] - st.file_mapped : 0;
	cg->shmem_unmapped_bytes = st.bytes[MP_CAT_SHMEM] > st.file_mapped ?
				   st.bytes[MP_CAT_SHMEM] - st.file_mapped : 0;
	for (int i = 0; i < 3; i++) {
		cg->has_thp[i] = st.have[thp[i]];
		cg->thp_bytes[i] = st.bytes[thp[i]];
	}
}

int mp_cgroup_read(const char *root, const struct mp_host *h, struct mp_cgroup *cg)
{
	char p[PATH_MAX];
	uint64_t v;
	int err;

	if ((err = mp_cgroup_usage(root, cg, &cg->usage_bytes)))
		return err;
	cg->host_root = mp_cgroup_is_host_root(root, cg);
	cg->children_counted = true;
	if (cg->version == 1) {
		uint64_t h1;

		/* v1 without use_hierarchy: a child's charges stay in the child */
		if (!read_cg_u64(root, cg->dir, "memory.use_hierarchy", &h1))
			cg->children_counted = h1 == 1;
	} else {
		char ctl[256];

		cg->children_counted = false;
		if (!mp_path(p, sizeof(p), "%s%s/cgroup.subtree_control", root ? root : "", cg->dir) &&
		    mp_read_file(p, ctl, sizeof(ctl)) >= 0)
			for (char *tok = strtok(ctl, " \n"); tok; tok = strtok(NULL, " \n"))
				cg->children_counted |= strcmp(tok, "memory") == 0;
	}
	if (read_cg_u64(root, cg->dir, mp_cgroup_file(cg, "limit"), &cg->limit_bytes))
		cg->limit_bytes = MP_UNLIMITED;
	cg->has_high = cg->version == 2 &&
		       !read_cg_u64(root, cg->dir, "memory.high", &cg->high_bytes);
	cg->has_swap_limit = !read_cg_u64(root, cg->dir, mp_cgroup_file(cg, "swap"),
					  &cg->swap_limit_bytes);
	cg->has_peak = !read_cg_u64(root, cg->dir, mp_cgroup_file(cg, "peak"), &cg->peak_bytes);

	cg->effective_limit_bytes = h->mem_total_bytes;
	cg->limited = false;
	mp_strlcpy(cg->effective_from, "MemTotal", sizeof(cg->effective_from));
	/* The host's own headroom: what it could still give without reclaim. */
	cg->headroom_bytes = h->mem_available_bytes;
	mp_strlcpy(cg->headroom_from, "MemAvailable", sizeof(cg->headroom_from));
	{
		struct mp_limit_level lv[MP_MAX_LEVELS];
		int n = mp_cgroup_limit_levels(root, cg, lv, MP_MAX_LEVELS);

		for (int i = 0; i < n; i++) {
			uint64_t room = lv[i].limit_bytes > lv[i].usage_bytes ?
					lv[i].limit_bytes - lv[i].usage_bytes : 0;

			if (lv[i].limit_bytes < cg->effective_limit_bytes) {
				cg->limited = true;
				cg->effective_limit_bytes = lv[i].limit_bytes;
				mp_strlcpy(cg->effective_from, lv[i].dir, sizeof(cg->effective_from));
			}
			/* a sibling's usage counts against a shared ancestor's limit */
			if (room < cg->headroom_bytes) {
				cg->headroom_bytes = room;
				mp_strlcpy(cg->headroom_from, lv[i].dir, sizeof(cg->headroom_from));
			}
		}
	}
	/* v1 knows the limit of ancestors that a namespace or bind mount hides. */
	if (cg->version == 1 &&
	    !mp_path(p, sizeof(p), "%s%s/memory.stat", root ? root : "", cg->dir) &&
	    !mp_read_keyed_u64(p, "hierarchical_memory_limit", &v) &&
	    v < MP_V1_UNLIMITED && v < cg->effective_limit_bytes) {
		cg->limited = true;
		cg->effective_limit_bytes = v;
		snprintf(cg->effective_from, sizeof(cg->effective_from),
			 "%s (hierarchical_memory_limit)", cg->dir);
		if (v > cg->usage_bytes && v - cg->usage_bytes < cg->headroom_bytes) {
			cg->headroom_bytes = v - cg->usage_bytes;
			mp_strlcpy(cg->headroom_from, cg->effective_from, sizeof(cg->headroom_from));
		}
	}
	if (cg->headroom_bytes > cg->effective_limit_bytes - MP_MIN(cg->usage_bytes, cg->effective_limit_bytes))
		cg->headroom_bytes = cg->effective_limit_bytes - MP_MIN(cg->usage_bytes, cg->effective_limit_bytes);
	read_throttle(root, cg);
	return 0;
}

int mp_cgroup_limit_now(const char *root, const struct mp_host *h, const struct mp_cgroup *cg,
			const struct mp_cg_stat *st, uint64_t *limit)
{
	char dir[PATH_MAX];
	uint64_t v, least = h->mem_total_bytes;
	int err;

	if ((err = read_cg_u64(root, cg->dir, mp_cgroup_file(cg, "limit"), &v)))
		return err;
	mp_strlcpy(dir, cg->dir, sizeof(dir));
	for (int n = 0; n < MP_MAX_LEVELS; n++) {
		char *slash;

		if (!read_cg_u64(root, dir, mp_cgroup_file(cg, "limit"), &v) && v < least)
			least = v;
		if (!strcmp(dir, cg->mount) || !(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
		if (strlen(dir) < strlen(cg->mount))
			break;
	}
	if (st && st->have_hier_limit && st->hier_limit_bytes < least)
		least = st->hier_limit_bytes;
	*limit = least;
	return 0;
}

int mp_cgroup_limit_levels(const char *root, const struct mp_cgroup *cg,
			   struct mp_limit_level *out, int max)
{
	char dir[PATH_MAX];
	int n = 0;

	/* Walk up to the mount point; the hierarchy's root has no limit file on v2. */
	mp_strlcpy(dir, cg->dir, sizeof(dir));
	while (n < max) {
		uint64_t limit, usage;

		if (!read_cg_u64(root, dir, mp_cgroup_file(cg, "limit"), &limit) &&
		    limit != MP_UNLIMITED &&
		    !read_cg_u64(root, dir, mp_cgroup_file(cg, "usage"), &usage)) {
			mp_strlcpy(out[n].dir, dir, sizeof(out[n].dir));
			out[n].limit_bytes = limit;
			out[n].usage_bytes = usage;
			n++;
		}
		if (strcmp(dir, cg->mount) == 0)
			break;
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			break;
		*slash = '\0';
		if (strlen(dir) < strlen(cg->mount))
			break;
	}
	return n;
}

int mp_cgroup_create(const struct mp_host *h, const struct mp_cgroup *parent,
		     const char *name, uint64_t limit_bytes, struct mp_cgroup *child)
{
	char p[PATH_MAX], val[32];
	int err;

	(void)h;
	*child = *parent;
	if (mp_path(child->dir, sizeof(child->dir), "%s/%s", parent->dir, name) ||
	    mp_path(child->path, sizeof(child->path), "%s/%s",
		    strcmp(parent->path, "/") ? parent->path : "", name))
		return -ENAMETOOLONG;
	child->level = parent->level + 1;
	if (mkdir(child->dir, 0755))
		return -errno;
	if (limit_bytes != MP_UNLIMITED) {
		snprintf(val, sizeof(val), "%llu", (unsigned long long)limit_bytes);
		err = mp_path(p, sizeof(p), "%s/%s", child->dir, mp_cgroup_file(child, "limit"));
		if (!err)
			err = mp_write_file(p, val);
		if (err == -ENOENT)
			err = -EOPNOTSUPP; /* v2: the parent does not delegate memory */
		if (err) {
			rmdir(child->dir);
			return err;
		}
	}
	if (child->version == 2 && !mp_path(p, sizeof(p), "%s/memory.swap.max", child->dir))
		mp_write_file(p, "0"); /* absent without swap accounting: fine */
	return 0;
}

int mp_cgroup_delegate_memory(struct mp_cgroup *cg)
{
	char p[PATH_MAX];
	int err;

	if (cg->version == 1)
		return 0;
	if (mp_path(p, sizeof(p), "%s/cgroup.subtree_control", cg->dir))
		return -ENAMETOOLONG;
	err = mp_write_file(p, "+memory");
	if (!err)
		cg->children_counted = true;
	return err;
}

int mp_cgroup_attach(const struct mp_cgroup *cg, pid_t pid)
{
	char p[PATH_MAX], val[32];

	if (mp_path(p, sizeof(p), "%s/cgroup.procs", cg->dir))
		return -ENAMETOOLONG;
	snprintf(val, sizeof(val), "%d", (int)pid);
	return mp_write_file(p, val);
}

int mp_cgroup_remove(const struct mp_cgroup *cg)
{
	char p[PATH_MAX], buf[4096];
	struct timespec ts = { 0, 10 * 1000 * 1000 };
	int err = 0;

	for (int tries = 0; tries < 300; tries++) {
		if (rmdir(cg->dir) == 0 || errno == ENOENT)
			return 0;
		err = -errno;
		if (errno != EBUSY)
			return err;
		/* Still has tasks: kill what memprobe put there, then wait for exit. */
		if (!mp_path(p, sizeof(p), "%s/cgroup.procs", cg->dir) &&
		    mp_read_file(p, buf, sizeof(buf)) > 0) {
			for (char *tok = strtok(buf, "\n"); tok; tok = strtok(NULL, "\n"))
				kill((pid_t)atoi(tok), SIGKILL);
		}
		nanosleep(&ts, NULL);
	}
	return err;
}

/* Remove a cgroup tree, children first. */
static int remove_tree(const char *dir)
{
	struct mp_cgroup cg = { 0 };
	struct dirent *e;
	DIR *d = opendir(dir);

	if (d) {
		while ((e = readdir(d))) {
			char sub[PATH_MAX];

			if (e->d_type != DT_DIR || e->d_name[0] == '.' ||
			    mp_path(sub, sizeof(sub), "%s/%s", dir, e->d_name))
				continue;
			remove_tree(sub);
		}
		closedir(d);
	}
	mp_strlcpy(cg.dir, dir, sizeof(cg.dir));
	return mp_cgroup_remove(&cg);
}

int mp_cgroup_reap_stale(const char *dir, pid_t *live_probe)
{
	static const char *const kinds[] = { "memprobe-target-", "memprobe-probe-", "memprobe-run-" };
	struct dirent *e;
	int removed = 0;
	DIR *d = opendir(dir);

	if (live_probe)
		*live_probe = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			size_t n = strlen(kinds[k]);
			char sub[PATH_MAX], *end;
			long pid;

			if (strncmp(e->d_name, kinds[k], n) != 0)
				continue;
			pid = strtol(e->d_name + n, &end, 10);
			if (*end || pid <= 0 || mp_path(sub, sizeof(sub), "%s/%s", dir, e->d_name))
				continue;
			if (mp_pid_is_memprobe(pid)) {
				if (k == 1 && live_probe && pid != getpid())
					*live_probe = (pid_t)pid;
				continue;
			}
			if (remove_tree(sub) == 0) {
				fprintf(stderr, "memprobe: removed %s, left by a memprobe that was killed\n", sub);
				removed++;
			}
		}
	}
	closedir(d);
	/* a probe running in the target itself (no child cgroup) */
	if (live_probe && !*live_probe) {
		char p[PATH_MAX], buf[65536];

		if (!mp_path(p, sizeof(p), "%s/cgroup.procs", dir) &&
		    mp_read_file(p, buf, sizeof(buf)) > 0) {
			for (char *tok = strtok(buf, "\n"); tok; tok = strtok(NULL, "\n")) {
				char cp[64], comm[32];

				snprintf(cp, sizeof(cp), "/proc/%s/comm", tok);
				if (mp_read_file(cp, comm, sizeof(comm)) > 0 &&
				    strcmp(comm, "memprobe-probe\n") == 0) {
					*live_probe = (pid_t)atoi(tok);
					break;
				}
			}
		}
	}
	return removed;
}

int mp_cgroup_reap_own(const char *root, const struct mp_host *h)
{
	struct mp_cgroup self;

	if (mp_cgroup_of_pid(root, h, 0, &self))
		return 0;
	return mp_cgroup_reap_stale(self.dir, NULL);
}

int mp_cgroup_writable(const struct mp_cgroup *cg)
{
	return access(cg->dir, W_OK) ? -errno : 0;
}

bool mp_cgroup_contains_self(const char *root, const struct mp_host *h,
			     const struct mp_cgroup *cg)
{
	struct mp_cgroup self;
	size_t n = strlen(cg->dir);

	return mp_cgroup_of_pid(root, h, 0, &self) == 0 && strncmp(self.dir, cg->dir, n) == 0 &&
	       (self.dir[n] == '\0' || self.dir[n] == '/');
}

static int dir_id(const char *dir, uint64_t *id);

int mp_cgroup_id(const struct mp_cgroup *cg, uint64_t *id)
{
	return dir_id(cg->dir, id);
}

static int dir_id(const char *dir, uint64_t *id)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	int mount_id;

	if (name_to_handle_at(AT_FDCWD, dir, &h.fh, &mount_id, 0))
		return -errno;
	*id = h.id;
	return 0;
}

/* dir or a directory below it, depth levels down at most, of that id */
static int find_below(char *dir, size_t len, uint64_t id, int depth)
{
	size_t n = strlen(dir);
	struct dirent *de;
	uint64_t v = 0;
	DIR *d;

	if (!dir_id(dir, &v) && v == id)
		return 0;
	if (depth <= 0 || !(d = opendir(dir)))
		return -ENOENT;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    snprintf(dir + n, len - n, "/%s", de->d_name) >= (int)(len - n))
			continue;
		if (!find_below(dir, len, id, depth - 1)) {
			closedir(d);
			return 0;
		}
		dir[n] = '\0';
	}
	closedir(d);
	dir[n] = '\0';
	return -ENOENT;
}

int mp_cgroup_dir_of_id(const struct mp_cgroup *cg, uint64_t id, char *out, size_t len)
{
	char dir[PATH_MAX];
	uint64_t v = 0;
	char *slash;

	mp_strlcpy(dir, cg->dir, sizeof(dir));
	for (;;) {
		if (!dir_id(dir, &v) && v == id) {
			mp_strlcpy(out, dir, len);
			return 0;
		}
		if (!strcmp(dir, cg->mount) || strlen(dir) <= strlen(cg->mount) ||
		    !(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
	}
	mp_strlcpy(dir, cg->dir, sizeof(dir));
	if (find_below(dir, sizeof(dir), id, 8))
		return -ENOENT;
	mp_strlcpy(out, dir, len);
	return 0;
}

uint64_t mp_cgroup_stat_usage(const struct mp_cg_stat *st)
{
	uint64_t sum = 0;

	for (int k = 0; k < MP_NR_CATS; k++)
		if (mp_cats[k].part == MP_PART_USAGE && st->have[k])
			sum += st->bytes[k];
	return sum;
}

int mp_cgroup_stat(const char *root, const struct mp_cgroup *cg, struct mp_cg_stat *st)
{
	int v1 = cg->version == 1;
	char p[PATH_MAX], line[256];
	FILE *f;

	memset(st, 0, sizeof(*st));
	if (mp_path(p, sizeof(p), "%s%s/memory.stat", root ? root : "", cg->dir))
		return -ENAMETOOLONG;
	if (!(f = fopen(p, "re")))
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		unsigned long long v;

		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, v1 ? "total_pgfault" : "pgfault")) {
			st->pgfault = v;
			st->have_pgfault = true;
		} else if (!strcmp(key, v1 ? "total_mapped_file" : "file_mapped")) {
			st->file_mapped = v;
			st->have_file_mapped = true;
		}
		if (v1 && !strcmp(key, "hierarchical_memory_limit")) {
			st->hier_limit_bytes = v;
			st->have_hier_limit = true;
		}
		for (int k = 0; k < MP_NR_CATS; k++) {
			const char *want = v1 ? mp_cats[k].v1_key : mp_cats[k].name;

			if (want && !strcmp(key, want)) {
				st->bytes[k] = v;
				st->have[k] = true;
			}
		}
	}
	fclose(f);
	if (v1 && !mp_path(p, sizeof(p), "%s%s/memory.kmem.usage_in_bytes", root ? root : "",
			   cg->dir) &&
	    !mp_read_u64_file(p, &st->bytes[MP_CAT_KERNEL]))
		st->have[MP_CAT_KERNEL] = st->kernel_counter = true;
	return 0;
}

static int walk_procs(const char *dir, int depth, int (*cb)(uint32_t, void *), void *arg)
{
	char path[PATH_MAX];
	unsigned long pid;
	struct dirent *de;
	FILE *f;
	DIR *d;
	int ret = 0;

	if (depth > 32 || mp_path(path, sizeof(path), "%s/cgroup.procs", dir))
		return 0;
	if ((f = fopen(path, "re"))) {
		while (!ret && fscanf(f, "%lu", &pid) == 1)
			ret = cb((uint32_t)pid, arg);
		fclose(f);
	}
	if (ret || !(d = opendir(dir)))
		return ret;
	while (!ret && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
		    mp_path(path, sizeof(path), "%s/%s", dir, de->d_name))
			continue;
		ret = walk_procs(path, depth + 1, cb, arg);
	}
	closedir(d);
	return ret;
}

int mp_cgroup_walk_procs(const char *dir, int (*cb)(uint32_t pid, void *arg), void *arg)
{
	return walk_procs(dir, 0, cb, arg);
}

int mp_cgroup_peak(const struct mp_cgroup *cg, uint64_t *v)
{
	char p[PATH_MAX];

	if (!cg->has_peak)
		return -ENOENT;
	if (mp_path(p, sizeof(p), "%s/%s", cg->dir, mp_cgroup_file(cg, "peak")))
		return -ENAMETOOLONG;
	return mp_read_u64_file(p, v);
}
