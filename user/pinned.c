// SPDX-License-Identifier: GPL-2.0
/*
 * Pinned memory of a target (pinned.h): read at one snapshot from the
 * cgroup's memory.stat and its processes' /proc files (the object is
 * pinned_doc.c's). A CUDA pinned pool (cudaHostAlloc) shows as RssShmem and memcg
 * shmem with VmLck flat; mlock as VmLck and unevictable; a driver that
 * pins pages it never charges only in the kernel paths' not_charged.
 */
#include "pinned.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#ifndef TMPFS_MAGIC
#define TMPFS_MAGIC 0x01021994
#endif

/* memory.stat's unevictable, shmem, file and file_mapped; v1's
 * hierarchical total_ keys, as the target's children (the probe's cgroup)
 * count too. */
static void read_stat(const struct mp_cgroup *cg, struct mp_pinned *p)
{
	bool v1 = cg->version == 1;
	char path[PATH_MAX], line[256], key[64];
	unsigned long long v;
	FILE *f;

	if (mp_path(path, sizeof(path), "%s/memory.stat", cg->dir) || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63s %llu", key, &v) != 2)
			continue;
		if (!strcmp(key, v1 ? "total_unevictable" : "unevictable")) {
			p->unevictable_bytes = v;
			p->have_unevictable = true;
		} else if (!strcmp(key, v1 ? "total_shmem" : "shmem")) {
			p->shmem_bytes = v;
			p->have_shmem = true;
		} else if (!strcmp(key, v1 ? "total_cache" : "file")) {
			p->file_bytes = v;
			p->have_file = true;
		} else if (!strcmp(key, v1 ? "total_mapped_file" : "file_mapped")) {
			p->file_mapped_bytes = v;
			p->have_file_mapped = true;
		}
	}
	fclose(f);
}

bool mp_unmapped_bytes(uint64_t file, uint64_t shmem, uint64_t file_mapped,
		       uint64_t *file_unmapped, uint64_t *shmem_unmapped)
{
	*file_unmapped = file > file_mapped ? file - file_mapped : 0;
	*shmem_unmapped = shmem > file_mapped ? shmem - file_mapped : 0;
	return true;
}

/* A shared mapping's pages are shmem when its file is: shared anonymous
 * memory (/dev/zero), SysV shm, memfd, or a file on tmpfs. */
static bool shmem_mapping(const char *name)
{
	struct statfs sf;
	char path[PATH_MAX];
	const char *del;

	if (!strcmp(name, "/dev/zero (deleted)") || !strncmp(name, "/SYSV", 5) ||
	    !strncmp(name, "/memfd:", 7))
		return true;
	if (name[0] != '/')
		return false;
	snprintf(path, sizeof(path), "%s", name);
	del = strstr(path, " (deleted)");
	if (del)
		path[del - path] = '\0';
	return statfs(path, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
}

/* Locked bytes by kind, mapping by mapping: shared on shmem, else private
 * (anon as smaps counts Anonymous, the rest file). */
static void read_smaps(struct mp_pinned_task *t)
{
	char path[64], line[PATH_MAX + 128], name[PATH_MAX], perms[8] = "";
	unsigned long long kb, anon_kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/smaps", t->pid);
	if (!(f = fopen(path, "re")))
		return;
	name[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		/* a mapping's line starts with its range in lower-case hex; the
		 * fields' names start with a capital */
		if (islower(line[0]) || isdigit(line[0])) {
			if (sscanf(line, "%*x-%*x %7s %*x %*s %*u %[^\n]", perms, name) < 2)
				name[0] = '\0';
			anon_kb = 0;
		} else if (sscanf(line, "Anonymous: %llu kB", &kb) == 1) {
			anon_kb = kb;
		} else if (sscanf(line, "Locked: %llu kB", &kb) == 1 && kb) {
			if (perms[3] == 's') {
				t->locked_bytes[shmem_mapping(name) ? MP_PIN_SHMEM : MP_PIN_FILE] +=
					kb << 10;
			} else {
				unsigned long long a = anon_kb < kb ? anon_kb : kb;

				t->locked_bytes[MP_PIN_ANON] += a << 10;
				t->locked_bytes[MP_PIN_FILE] += (kb - a) << 10;
			}
		}
	}
	fclose(f);
	t->have_locked = true;
}

/* /proc/PID/status: Name, VmLck, VmPin, RssShmem. False: gone, or a
 * kernel thread (no Vm lines). */
static bool read_status(uint32_t pid, struct mp_pinned_task *t)
{
	char path[64], line[256];
	unsigned long long kb;
	bool vm = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/status", pid);
	if (!(f = fopen(path, "re")))
		return false;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Name:\t%15[^\n]", t->comm) == 1)
			continue;
		if (sscanf(line, "VmLck: %llu kB", &kb) == 1)
			t->vm_lck_bytes = kb << 10, vm = true;
		else if (sscanf(line, "VmPin: %llu kB", &kb) == 1)
			t->vm_pin_bytes = kb << 10;
		else if (sscanf(line, "RssShmem: %llu kB", &kb) == 1)
			t->rss_shmem_bytes = kb << 10;
	}
	fclose(f);
	if (vm && t->vm_lck_bytes)
		read_smaps(t);
	return vm;
}

static uint64_t task_pinned(const struct mp_pinned_task *t)
{
	return t->vm_lck_bytes + t->vm_pin_bytes + t->rss_shmem_bytes;
}

/* The segment of (dev, ino), made when new; NULL when the table is full. */
static struct mp_shm_seg *seg_of(struct mp_pinned *p, uint64_t dev, uint64_t ino,
				 const char *name)
{
	struct mp_shm_seg *g;

	for (size_t i = 0; i < p->nsegs; i++)
		if (p->segs[i].dev == dev && p->segs[i].ino == ino)
			return &p->segs[i];
	if (p->nsegs == MP_MAX_SHM_SEGS)
		return NULL;
	g = &p->segs[p->nsegs++];
	memset(g, 0, sizeof(*g));
	g->dev = dev;
	g->ino = ino;
	snprintf(g->name, sizeof(g->name), "%.63s", name);
	return g;
}

static int seg_add_pid(struct mp_shm_seg *g, uint32_t pid)
{
	for (size_t i = 0; i < g->npids; i++)
		if (g->pids[i] == pid)
			return 0;
	if (g->npids == g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 16;
		uint32_t *n = realloc(g->pids, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		g->pids = n;
		g->cap = nc;
	}
	g->pids[g->npids++] = pid;
	return 0;
}

/*
 * The shared shmem mappings of a process with RssShmem, from
 * /proc/PID/maps (not smaps: one line a mapping). A segment's resident
 * size is its file's allocated blocks, read once through
 * /proc/PID/map_files (root only): the kernel's count of its pages.
 */
static int read_maps(struct mp_pinned *p, uint32_t pid)
{
	char path[96], line[PATH_MAX + 128], perms[8], name[PATH_MAX];
	unsigned long lo, hi, off, ino;
	unsigned int maj, min;
	int ret = 0, at;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (!ret && fgets(line, sizeof(line), f)) {
		struct mp_shm_seg *g;
		struct stat st;

		at = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off, &maj, &min,
			   &ino, &at) < 7 || !at || perms[3] != 's')
			continue;
		snprintf(name, sizeof(name), "%s", line + at);
		name[strcspn(name, "\n")] = '\0';
		if (!ino || !shmem_mapping(name))
			continue;
		if (!(g = seg_of(p, ((uint64_t)maj << 20) | min, ino, name))) {
			p->segs_more++;
			continue;
		}
		if (hi - lo > g->mapped_bytes)
			g->mapped_bytes = hi - lo;
		snprintf(path, sizeof(path), "/proc/%u/map_files/%lx-%lx", pid, lo, hi);
		if (!g->have_resident && !stat(path, &st)) {
			g->resident_bytes = (uint64_t)st.st_blocks * 512;
			g->have_resident = true;
		}
		ret = seg_add_pid(g, pid);
	}
	fclose(f);
	return ret;
}

static int add_role(struct mp_pinned *p, const struct mp_pinned_task *t)
{
	struct mp_proc_role *r;

	if (p->nroles == p->roles_cap) {
		size_t nc = p->roles_cap ? p->roles_cap * 2 : 32;
		struct mp_proc_role *n = realloc(p->roles, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->roles = n;
		p->roles_cap = nc;
	}
	r = &p->roles[p->nroles++];
	r->pid = t->pid;
	snprintf(r->comm, sizeof(r->comm), "%s", t->comm);
	mp_proc_role_read(t->pid, r->role, sizeof(r->role));
	return 0;
}

static int add_pid(struct mp_pinned *p, uint32_t pid, size_t *cap)
{
	struct mp_pinned_task t;
	int ret;

	for (size_t i = 0; i < p->nroles; i++)
		if (p->roles[i].pid == pid)
			return 0;
	if (!read_status(pid, &t))
		return 0;
	p->nprocs++;
	p->vm_lck_bytes += t.vm_lck_bytes;
	p->vm_pin_bytes += t.vm_pin_bytes;
	if (t.rss_shmem_bytes > p->rss_shmem_max_bytes)
		p->rss_shmem_max_bytes = t.rss_shmem_bytes;
	if ((ret = add_role(p, &t)) || (t.rss_shmem_bytes && (ret = read_maps(p, pid))))
		return ret;
	if (!task_pinned(&t))
		return 0;
	if (p->ntasks == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		struct mp_pinned_task *n = realloc(p->tasks, nc * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->tasks = n;
		*cap = nc;
	}
	p->tasks[p->ntasks++] = t;
	return 0;
}

struct walk_ctx {
	struct mp_pinned *p;
	size_t cap;
};

static int walk_one(uint32_t pid, void *arg)
{
	struct walk_ctx *w = arg;

	return add_pid(w->p, pid, &w->cap);
}

static int cmp_pinned_desc(const void *a, const void *b)
{
	uint64_t x = task_pinned(a), y = task_pinned(b);

	return x < y ? 1 : x > y ? -1 : 0;
}

int mp_pinned_read(const struct mp_cgroup *cg, const char *at, struct mp_pinned *p)
{
	struct walk_ctx w = { .p = p };
	int ret;

	mp_pinned_free(p);
	p->at = at;
	read_stat(cg, p);
	ret = mp_cgroup_walk_procs(cg->dir, walk_one, &w);
	if (p->ntasks)
		qsort(p->tasks, p->ntasks, sizeof(*p->tasks), cmp_pinned_desc);
	p->taken = true;
	return ret;
}

const char *mp_pinned_role(const struct mp_pinned *p, uint32_t pid)
{
	for (size_t i = 0; p && i < p->nroles; i++)
		if (p->roles[i].pid == pid)
			return p->roles[i].role;
	return "";
}

void mp_pinned_free(struct mp_pinned *p)
{
	free(p->tasks);
	free(p->roles);
	for (size_t i = 0; i < p->nsegs; i++)
		free(p->segs[i].pids);
	memset(p, 0, sizeof(*p));
}
