// SPDX-License-Identifier: GPL-2.0
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

/* root + path; root "" means the live system. */
static int rpath(char *buf, size_t len, const char *root, const char *path)
{
	return mp_path(buf, len, "%s%s", root ? root : "", path);
}

/* Copy with truncation, always NUL-terminated. */
static void strlcpy0(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* "always [madvise] never" -> "madvise" */
static void read_bracketed(const char *root, const char *path, char *out, size_t len)
{
	char p[PATH_MAX], buf[256], *l, *r;

	out[0] = '\0';
	if (rpath(p, sizeof(p), root, path) || mp_read_file(p, buf, sizeof(buf)) < 0)
		return;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		*r = '\0';
		strlcpy0(out, l + 1, len);
	}
}

/* Unescape mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

static bool has_option(const char *opts, const char *want)
{
	size_t n = strlen(want);
	const char *p = opts;

	while ((p = strstr(p, want))) {
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}

/*
 * Does the path show this mount (mountinfo's first field, its id, and third,
 * its device)? Several mounts may sit at one mount point, the later ones
 * over the earlier: a container's runtime mounts the cgroup filesystem
 * afresh over what its new mount namespace copied from the host, and
 * mountinfo lists the hidden copy first (its root "/../../.." as the
 * cgroup namespace sees it). statx's STATX_MNT_ID (5.8) names the mount the
 * path shows; where the kernel lacks it, the device must match and the
 * last-listed mount at that point wins (*exact false). A point that is no
 * longer there (under a tmpfs mounted over its parent) shows nothing.
 */
static bool mount_shown(const char *mpoint, uint64_t id, unsigned int maj, unsigned int min,
			bool *exact)
{
	struct statx stx;

	*exact = false;
	if (statx(AT_FDCWD, mpoint, 0, STATX_MNT_ID, &stx))
		return errno != ENOENT && errno != ENOTDIR;
	if (stx.stx_mask & STATX_MNT_ID) {
		*exact = true;
		return stx.stx_mnt_id == id;
	}
	return stx.stx_dev_major == maj && stx.stx_dev_minor == min;
}

/* One mount, kept when shown: the first shown mount point of its kind, and
 * at that point the mount statx names, else the last listed. */
static void keep_mount(const char *root, char *mount, char *mroot, size_t len,
		       const char *mpoint, const char *root_of, uint64_t id,
		       unsigned int maj, unsigned int min)
{
	bool exact = false;
	char p[PATH_MAX];

	/* a captured tree (root not ""): no live mounts to ask; what it has
	 * no directory for was hidden where it was captured */
	if (root && root[0]) {
		if ((mount[0] && strcmp(mount, mpoint) != 0) ||
		    rpath(p, sizeof(p), root, mpoint) || access(p, F_OK))
			return;
	} else if (!mount_shown(mpoint, id, maj, min, &exact) ||
		   (mount[0] && (exact || strcmp(mount, mpoint) != 0))) {
		return;
	}
	strlcpy0(mount, mpoint, len);
	strlcpy0(mroot, root_of, len);
}

static void read_mounts(const char *root, struct mp_host *h)
{
	char p[PATH_MAX], line[4096];
	FILE *f;

	if (rpath(p, sizeof(p), root, "/proc/self/mountinfo"))
		return;
	f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mroot[PATH_MAX], mpoint[PATH_MAX], fstype[64], super[1024];
		char *dash = strstr(line, " - ");
		unsigned long long id;
		unsigned int maj, min;

		if (!dash || sscanf(line, "%llu %*s %u:%u %4095s %4095s", &id, &maj, &min,
				    mroot, mpoint) != 5 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		unescape(mroot);
		unescape(mpoint);
		if (strcmp(fstype, "cgroup2") == 0)
			keep_mount(root, h->v2_mount, h->v2_root, sizeof(h->v2_mount), mpoint,
				   mroot, id, maj, min);
		else if (strcmp(fstype, "cgroup") == 0 && has_option(super, "memory"))
			keep_mount(root, h->v1_memory_mount, h->v1_memory_root,
				   sizeof(h->v1_memory_mount), mpoint, mroot, id, maj, min);
	}
	fclose(f);
}

/* The first line of root/path, without its newline; "" when unreadable. */
static void read_line(const char *root, const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];

	buf[0] = '\0';
	if (mp_path(p, sizeof(p), "%s%s", root, path) || mp_read_file(p, buf, len) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* "0-3,6,8-9": how many CPUs the list names; 0 if it names none. */
static int count_cpu_list(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return 0;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return 0;
		}
		n += (int)(b - a + 1);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

/* os-release's PRETTY_NAME, its quotes and backslashes undone. */
static void read_pretty_name(const char *root, char *out, size_t len)
{
	static const char *const files[] = { "/etc/os-release", "/usr/lib/os-release" };
	char p[PATH_MAX], buf[8192];

	out[0] = '\0';
	for (size_t f = 0; f < 2; f++) {
		char *line, *save;

		if (mp_path(p, sizeof(p), "%s%s", root, files[f]) ||
		    mp_read_file(p, buf, sizeof(buf)) < 0)
			continue;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const char *v = line + strlen("PRETTY_NAME=");
			char q = 0;
			size_t n = 0;

			if (strncmp(line, "PRETTY_NAME=", strlen("PRETTY_NAME=")) != 0)
				continue;
			if (*v == '"' || *v == '\'')
				q = *v++;
			for (; *v && *v != q && n + 1 < len; v++) {
				if (*v == '\\' && q == '"' && v[1])
					v++;
				out[n++] = *v;
			}
			out[n] = '\0';
			return;
		}
	}
}

/* What the documents' header says of the host beside memory: its name,
 * distribution, CPUs and lru_gen. */
static void read_host_more(const char *root, struct mp_host *m)
{
	char buf[256], p[PATH_MAX];

	read_line(root, "/proc/sys/kernel/hostname", m->hostname, sizeof(m->hostname));
	if (!m->hostname[0] && !root[0] && gethostname(m->hostname, sizeof(m->hostname) - 1))
		m->hostname[0] = '\0';
	read_pretty_name(root, m->distribution, sizeof(m->distribution));
	read_line(root, "/sys/devices/system/cpu/online", buf, sizeof(buf));
	m->cpus = count_cpu_list(buf);
	if (!m->cpus && !root[0])
		m->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->have_lru_gen = !mp_path(p, sizeof(p), "%s/sys/kernel/mm/lru_gen/enabled", root) &&
			  access(p, F_OK) == 0;
	if (m->have_lru_gen)
		read_line(root, "/sys/kernel/mm/lru_gen/enabled", m->lru_gen, sizeof(m->lru_gen));
}

int mp_host_read(const char *root, struct mp_host *h)
{
	char p[PATH_MAX], buf[512];
	uint64_t kb;
	int err;

	memset(h, 0, sizeof(*h));
	h->page_size = sysconf(_SC_PAGESIZE);
	if ((err = rpath(p, sizeof(p), root, "/proc/meminfo")))
		return err;
	if ((err = mp_read_keyed_u64(p, "MemTotal", &kb)))
		return err;
	h->mem_total_bytes = kb * 1024;
	if (!mp_read_keyed_u64(p, "MemAvailable", &kb))
		h->mem_available_bytes = kb * 1024;
	read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/enabled",
		       h->thp_enabled, sizeof(h->thp_enabled));
	read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/defrag",
		       h->thp_defrag, sizeof(h->thp_defrag));
	if (!rpath(p, sizeof(p), root, "/proc/sys/kernel/osrelease") &&
	    mp_read_file(p, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		strlcpy0(h->kernel_release, buf, sizeof(h->kernel_release));
	}
	h->btf_present = !rpath(p, sizeof(p), root, "/sys/kernel/btf/vmlinux") &&
			 access(p, F_OK) == 0;
	read_mounts(root, h);
	if (h->v2_mount[0] &&
	    !mp_path(buf, sizeof(buf), "%s/cgroup.controllers", h->v2_mount) &&
	    !rpath(p, sizeof(p), root, buf) && mp_read_file(p, buf, sizeof(buf)) >= 0) {
		for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
			if (strcmp(tok, "memory") == 0)
				h->v2_has_memory = true;
	}
	if (h->v1_memory_mount[0])
		h->cg_mode = h->v2_mount[0] ? MP_CG_HYBRID : MP_CG_V1;
	else if (h->v2_mount[0])
		h->cg_mode = MP_CG_V2;
	else
		h->cg_mode = MP_CG_NONE;
	read_host_more(root, h);
	return 0;
}

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
	strlcpy0(cg->mount, mnt, sizeof(cg->mount));
	cg->level = path_depth(cg->path);
	if ((err = rpath(p, sizeof(p), root, cg->dir)))
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

		if (rpath(p, sizeof(p), root, cg->dir) || strlen(p) + 16 >= sizeof(p))
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
	if (rpath(p, sizeof(p), root, proc) || mp_read_file(p, buf, sizeof(buf)) <= 0)
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
	if (rpath(p, sizeof(p), root, cg->dir) || stat(p, &st))
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
	if (rpath(p, sizeof(p), root, proc))
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
			strlcpy0(v2path, c2 + 1, sizeof(v2path));
			v2 = true;
		} else if (has_option(c1 + 1, "memory")) {
			strlcpy0(v1path, c2 + 1, sizeof(v1path));
			v1 = true;
		}
	}
	fclose(f);
	if (v1 && h->v1_memory_mount[0]) {
		cg->version = 1;
		strlcpy0(cg->path, v1path, sizeof(cg->path));
	} else if (v2 && h->v2_mount[0] && h->v2_has_memory) {
		cg->version = 2;
		strlcpy0(cg->path, v2path, sizeof(cg->path));
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
	strlcpy0(clean, path, sizeof(clean));
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
		strlcpy0(cg->path, clean, sizeof(cg->path));
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
	    !rpath(p, sizeof(p), root, "/proc/meminfo") &&
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

	strlcpy0(dir, cg->dir, sizeof(dir));
	for (;;) {
		char *slash;

		if (!read_cg_u64(root, dir, file, &v) && v != MP_UNLIMITED && v < low) {
			low = v;
			strlcpy0(from, dir, sizeof(from));
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
		strlcpy0(cg->throttle_from, from, sizeof(cg->throttle_from));
		strlcpy0(cg->throttle_kind, cg->version == 1 ? "soft_limit" : "memory.high",
			 sizeof(cg->throttle_kind));
	}
	cg->has_reclaimable = !mp_cgroup_file_bytes(root, cg, &cg->reclaimable_bytes);
	if (!cg->has_reclaimable)
		cg->reclaimable_bytes = 0;
	cg->soft_headroom_bytes = cg->headroom_bytes + cg->reclaimable_bytes;
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
	strlcpy0(cg->effective_from, "MemTotal", sizeof(cg->effective_from));
	/* The host's own headroom: what it could still give without reclaim. */
	cg->headroom_bytes = h->mem_available_bytes;
	strlcpy0(cg->headroom_from, "MemAvailable", sizeof(cg->headroom_from));
	{
		struct mp_limit_level lv[MP_MAX_LEVELS];
		int n = mp_cgroup_limit_levels(root, cg, lv, MP_MAX_LEVELS);

		for (int i = 0; i < n; i++) {
			uint64_t room = lv[i].limit_bytes > lv[i].usage_bytes ?
					lv[i].limit_bytes - lv[i].usage_bytes : 0;

			if (lv[i].limit_bytes < cg->effective_limit_bytes) {
				cg->limited = true;
				cg->effective_limit_bytes = lv[i].limit_bytes;
				strlcpy0(cg->effective_from, lv[i].dir, sizeof(cg->effective_from));
			}
			/* a sibling's usage counts against a shared ancestor's limit */
			if (room < cg->headroom_bytes) {
				cg->headroom_bytes = room;
				strlcpy0(cg->headroom_from, lv[i].dir, sizeof(cg->headroom_from));
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
			strlcpy0(cg->headroom_from, cg->effective_from, sizeof(cg->headroom_from));
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
	strlcpy0(dir, cg->dir, sizeof(dir));
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
	strlcpy0(dir, cg->dir, sizeof(dir));
	while (n < max) {
		uint64_t limit, usage;

		if (!read_cg_u64(root, dir, mp_cgroup_file(cg, "limit"), &limit) &&
		    limit != MP_UNLIMITED &&
		    !read_cg_u64(root, dir, mp_cgroup_file(cg, "usage"), &usage)) {
			strlcpy0(out[n].dir, dir, sizeof(out[n].dir));
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
	strlcpy0(cg.dir, dir, sizeof(cg.dir));
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

	strlcpy0(dir, cg->dir, sizeof(dir));
	for (;;) {
		if (!dir_id(dir, &v) && v == id) {
			strlcpy0(out, dir, len);
			return 0;
		}
		if (!strcmp(dir, cg->mount) || strlen(dir) <= strlen(cg->mount) ||
		    !(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
	}
	strlcpy0(dir, cg->dir, sizeof(dir));
	if (find_below(dir, sizeof(dir), id, 8))
		return -ENOENT;
	strlcpy0(out, dir, len);
	return 0;
}

const char *mp_cg_mode_name(enum mp_cg_mode m)
{
	switch (m) {
	case MP_CG_V1: return "v1";
	case MP_CG_V2: return "v2";
	case MP_CG_HYBRID: return "hybrid";
	default: return "none";
	}
}

const struct mp_cat_info mp_cats[MP_NR_CATS] = {
#define MP_CAT_INFO(id, name_, v1, unit_, part_, T, E, ...)			\
	[MP_CAT_##id] = {							\
		.name = name_, .v1_key = v1, .unit = MP_UNIT_##unit_,		\
		.part = MP_PART_##part_, .item_type = #T, .item = #E,		\
		__VA_OPT__(MP_CAT_ALT(__VA_ARGS__))				\
	},
#define MP_CAT_ALT(T, E) .alt_type = #T, .alt_item = #E,
	MP_CATEGORIES(MP_CAT_INFO)
#undef MP_CAT_ALT
#undef MP_CAT_INFO
};

bool mp_core_name_eq(const char *name, const char *flavoured)
{
	size_t n = strlen(name);

	return !strncmp(name, flavoured, n) &&
	       (!flavoured[n] || !strncmp(flavoured + n, "___", 3));
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
