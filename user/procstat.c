// SPDX-License-Identifier: GPL-2.0
/*
 * Per-process memory figures from /proc (procstat.h): the mm's RSS
 * counters, its page tables, locked and pinned bytes and threads from
 * /proc/PID/status, huge pages from smaps_rollup, identity from stat and
 * cmdline. Readers only: nothing here knows a session or a report.
 */
#include "procstat.h"
#include "cgroup.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * THREAD_SIZE where nothing measured tells it: 16 KiB on the 64-bit
 * architectures Debian builds (x86-64, arm64, ppc64el, s390x, riscv64:
 * THREAD_SIZE_ORDER 2 with 4 KiB pages), twice that under KASAN, which a
 * distribution kernel does not enable; 8 KiB on 32-bit ones.
 */
#if defined(__x86_64__)
#define ARCH_STACK_BYTES 16384
#define ARCH_STACK_NAME "x86-64's THREAD_SIZE (16 KiB; a KASAN kernel has 32 KiB)"
#elif defined(__aarch64__) || defined(__powerpc64__) || defined(__s390x__) || \
	(defined(__riscv) && __riscv_xlen == 64)
#define ARCH_STACK_BYTES 16384
#define ARCH_STACK_NAME "this 64-bit architecture's THREAD_SIZE (16 KiB)"
#else
#define ARCH_STACK_BYTES 8192
#define ARCH_STACK_NAME "this 32-bit architecture's THREAD_SIZE (8 KiB)"
#endif

void mp_proc_stack_size(bool have, uint64_t ks, uint64_t threads, struct mp_stack_size *out)
{
	uint64_t per = threads ? ks / threads : 0;

	/* a thread charged elsewhere (moved in) or a stack still being freed
	 * breaks the division: then it is not the stack size, and the
	 * architecture's is taken */
	if (have && threads && ks % threads == 0 && per >= 4096 && per <= 65536 &&
	    !(per & (per - 1))) {
		out->bytes = per;
		out->source = "memory.stat kernel_stack / threads";
		return;
	}
	out->bytes = ARCH_STACK_BYTES;
	out->source = ARCH_STACK_NAME;
}

/* The number after "Key:" on line l (n: the key's length with its colon):
 * kB lines give bytes (kb set). */
static uint64_t line_value(const char *l, size_t n, bool kb)
{
	uint64_t v = strtoull(l + n, NULL, 10);

	return kb ? v << 10 : v;
}

/* status's lines memprobe reads: its key with the colon, where the value
 * goes in the row (an offset), and whether it counts kB. Compared by
 * prefix only on lines that start with the key's first letter: the file
 * has some 60 lines, and this runs for every process at every snapshot. */
static const struct status_key {
	const char *key;
	size_t off;
	bool kb, u32;
} status_keys[] = {
	{ "RssAnon:", offsetof(struct mp_proc_row, rss_anon_bytes), true, false },
	{ "RssFile:", offsetof(struct mp_proc_row, rss_file_bytes), true, false },
	{ "RssShmem:", offsetof(struct mp_proc_row, rss_shmem_bytes), true, false },
	{ "VmPTE:", offsetof(struct mp_proc_row, pte_bytes), true, false },
	{ "VmLck:", offsetof(struct mp_proc_row, lck_bytes), true, false },
	{ "VmPin:", offsetof(struct mp_proc_row, pin_bytes), true, false },
	{ "PPid:", offsetof(struct mp_proc_row, ppid), false, true },
	{ "Threads:", offsetof(struct mp_proc_row, threads), false, true },
};

int mp_proc_parse_status(const char *text, struct mp_proc_row *r)
{
	bool vm = false;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (l[0] == 'N' && !strncmp(l, "Name:\t", 6)) {
			size_t n = strcspn(l + 6, "\n");

			n = n < sizeof(r->comm) - 1 ? n : sizeof(r->comm) - 1;
			memcpy(r->comm, l + 6, n);
			r->comm[n] = '\0';
			continue;
		}
		if (l[0] != 'R' && l[0] != 'V' && l[0] != 'P' && l[0] != 'T')
			continue;
		for (size_t i = 0; i < sizeof(status_keys) / sizeof(status_keys[0]); i++) {
			const struct status_key *k = &status_keys[i];
			size_t n = strlen(k->key);
			uint64_t v;

			if (l[0] != k->key[0] || strncmp(l, k->key, n))
				continue;
			v = line_value(l, n, k->kb);
			if (k->u32)
				*(uint32_t *)((char *)r + k->off) = (uint32_t)v;
			else
				*(uint64_t *)((char *)r + k->off) = v;
			vm |= !strcmp(k->key, "VmLck:"); /* the first Vm line an mm shows */
			break;
		}
	}
	return vm ? 0 : -ENOENT;
}

int mp_proc_parse_stat(const char *text, struct mp_proc_row *r)
{
	const char *open_p = strchr(text, '('), *close_p = strrchr(text, ')');
	unsigned long long start;
	unsigned long pid, ppid;
	size_t n;

	/* the name may hold spaces and parentheses: the last ')' ends it;
	 * then state, ppid and, field 22, the start time */
	if (!open_p || !close_p || close_p < open_p || sscanf(text, "%lu", &pid) != 1 ||
	    sscanf(close_p + 1, " %*c %lu %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d "
		   "%*d %*d %*d %*d %*d %llu", &ppid, &start) != 2)
		return -EINVAL;
	n = (size_t)(close_p - open_p - 1);
	n = n < sizeof(r->comm) - 1 ? n : sizeof(r->comm) - 1;
	memcpy(r->comm, open_p + 1, n);
	r->comm[n] = '\0';
	r->pid = (uint32_t)pid;
	r->ppid = (uint32_t)ppid;
	r->start_ticks = start;
	return 0;
}

void mp_proc_parse_rollup(const char *text, struct mp_proc_row *r)
{
	const char *l = strstr(text, "\nAnonHugePages:");

	if (l) {
		r->anon_huge_bytes = line_value(l + 1, strlen("AnonHugePages:"), true);
		r->have_anon_huge = true;
	}
}

void mp_proc_parse_cmdline(const char *buf, size_t n, char *out, size_t len)
{
	size_t o = 0;

	/* trailing NULs (and an argv[0] rewritten into one long string) */
	while (n && !buf[n - 1])
		n--;
	for (size_t i = 0; i < n && o + 1 < len; i++)
		out[o++] = buf[i] && isprint((unsigned char)buf[i]) ? buf[i] : buf[i] ? '?' : ' ';
	out[o] = '\0';
}

/* root/proc/PID/NAME into buf; returns the bytes read or -errno. */
static int read_pid_file(const char *root, uint32_t pid, const char *name, char *buf,
			 size_t len)
{
	char path[PATH_MAX];

	if (mp_path(path, sizeof(path), "%s/proc/%u/%s", root, pid, name))
		return -ENAMETOOLONG;
	return mp_read_file(path, buf, len);
}

static void read_ident(const char *root, uint32_t pid, struct mp_proc_row *r)
{
	char buf[1024];
	int n;

	if (read_pid_file(root, pid, "stat", buf, sizeof(buf)) > 0) {
		char comm[16];

		memcpy(comm, r->comm, sizeof(comm));
		mp_proc_parse_stat(buf, r);
		if (comm[0]) /* status's name has no truncation surprises: keep it */
			memcpy(r->comm, comm, sizeof(comm));
	}
	if ((n = read_pid_file(root, pid, "cmdline", buf, sizeof(buf))) > 0)
		mp_proc_parse_cmdline(buf, (size_t)n, r->cmdline, sizeof(r->cmdline));
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int mp_proc_read(const char *root, uint32_t pid, unsigned flags, uint64_t stack_bytes,
		 struct mp_proc_row *r)
{
	char buf[4096];
	int ret;

	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->source = MP_PROC_SRC_PROC;
	r->at_ns = now_ns();
	if ((ret = read_pid_file(root, pid, "status", buf, sizeof(buf))) < 0)
		return ret == -ESRCH ? -ENOENT : ret;
	if ((ret = mp_proc_parse_status(buf, r)))
		return ret;
	r->kernel_stack_bytes = (uint64_t)r->threads * stack_bytes;
	if (flags & MP_PROC_IDENT)
		read_ident(root, pid, r);
	/* ptrace-read access: refused for another user's process without
	 * CAP_SYS_PTRACE, and then AnonHugePages is simply not known */
	if ((flags & MP_PROC_ROLLUP) &&
	    read_pid_file(root, pid, "smaps_rollup", buf, sizeof(buf)) > 0)
		mp_proc_parse_rollup(buf, r);
	return 0;
}

int mp_proc_set_add(struct mp_proc_set *s, const struct mp_proc_row *r)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct mp_proc_row *rows = realloc(s->rows, cap * sizeof(*rows));

		if (!rows)
			return -ENOMEM;
		s->rows = rows;
		s->cap = cap;
	}
	s->rows[s->n++] = *r;
	return 0;
}

const struct mp_proc_row *mp_proc_set_find(const struct mp_proc_set *s, uint32_t pid)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i].pid == pid)
			return &s->rows[i];
	return NULL;
}

void mp_proc_set_free(struct mp_proc_set *s)
{
	free(s->rows);
	memset(s, 0, sizeof(*s));
}

struct cg_walk {
	const char *root;
	unsigned flags;
	uint64_t stack_bytes;
	struct mp_proc_set *s;
};

static int add_pid(uint32_t pid, void *arg)
{
	struct cg_walk *w = arg;
	struct mp_proc_row r;

	/* 0: a process of another pid namespace; twice: a process that
	 * moved between two cgroup.procs reads */
	if (!pid || mp_proc_set_find(w->s, pid) ||
	    mp_proc_read(w->root, pid, w->flags, w->stack_bytes, &r))
		return 0;
	return mp_proc_set_add(w->s, &r);
}

int mp_proc_of_cgroup(const char *root, const char *dir, unsigned flags,
		      uint64_t stack_bytes, struct mp_proc_set *s)
{
	struct cg_walk w = { root, flags, stack_bytes, s };
	char path[PATH_MAX];

	s->n = 0;
	if (mp_path(path, sizeof(path), "%s%s", root, dir))
		return -ENAMETOOLONG;
	return mp_cgroup_walk_procs(path, add_pid, &w);
}

/* Every process's (pid, ppid) from root/proc, into *out. */
static int scan_parents(const char *root, uint32_t (**out)[2], size_t *n)
{
	char path[PATH_MAX], buf[512];
	uint32_t (*pp)[2] = NULL;
	size_t cap = 0;
	struct dirent *de;
	DIR *d;

	*n = 0;
	if (mp_path(path, sizeof(path), "%s/proc", root) || !(d = opendir(path)))
		return -errno;
	while ((de = readdir(d))) {
		struct mp_proc_row r;
		char *end;
		unsigned long pid = strtoul(de->d_name, &end, 10);

		if (*end || !pid || read_pid_file(root, (uint32_t)pid, "stat", buf, sizeof(buf)) <= 0 ||
		    mp_proc_parse_stat(buf, &r))
			continue;
		if (*n == cap) {
			uint32_t (*p)[2] = realloc(pp, (cap = cap ? cap * 2 : 256) * sizeof(*pp));

			if (!p) {
				free(pp);
				closedir(d);
				return -ENOMEM;
			}
			pp = p;
		}
		pp[*n][0] = (uint32_t)pid;
		pp[(*n)++][1] = r.ppid;
	}
	closedir(d);
	*out = pp;
	return 0;
}

static bool in_list(const uint32_t *l, size_t n, uint32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == pid)
			return true;
	return false;
}

int mp_proc_of_tree(const char *root, const uint32_t *pids, size_t npids, unsigned flags,
		    uint64_t stack_bytes, struct mp_proc_set *s)
{
	uint32_t (*pp)[2] = NULL, *members;
	size_t n, nm = 0;
	bool grew = true;
	int ret = scan_parents(root, &pp, &n);

	s->n = 0;
	if (ret)
		return ret;
	members = calloc(n + npids + 1, sizeof(*members));
	if (!members) {
		free(pp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < npids; i++)
		if (pids[i] && !in_list(members, nm, pids[i]))
			members[nm++] = pids[i];
	/* children after their parents: passes until none is added (a
	 * pid reused by a younger process can come before its parent) */
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++)
			if (!in_list(members, nm, pp[i][0]) && in_list(members, nm, pp[i][1])) {
				members[nm++] = pp[i][0];
				grew = true;
			}
	}
	for (size_t i = 0; i < nm && !ret; i++) {
		struct cg_walk w = { root, flags, stack_bytes, s };

		ret = add_pid(members[i], &w);
	}
	free(members);
	free(pp);
	return ret;
}

/* The tracked row of pid not known to have exited (its latest): the
 * caller tells a reused pid by the start time. */
static struct mp_proc_row *tracked(struct mp_proc_track *t, uint32_t pid)
{
	for (size_t i = t->seen.n; i-- > 0;)
		if (t->seen.rows[i].pid == pid && !t->seen.rows[i].exited)
			return &t->seen.rows[i];
	return NULL;
}

/* Does /proc still show the process of row x (its pid, its start time)? */
static bool still_there(const char *root, const struct mp_proc_row *x)
{
	struct mp_proc_row r = { 0 };
	char buf[512];

	return read_pid_file(root, x->pid, "stat", buf, sizeof(buf)) > 0 &&
	       !mp_proc_parse_stat(buf, &r) && (!x->start_ticks || r.start_ticks == x->start_ticks);
}

int mp_proc_track_merge(const char *root, struct mp_proc_track *t, const struct mp_proc_set *now)
{
	size_t nseen = t->seen.n;

	for (size_t i = 0; i < now->n; i++) {
		struct mp_proc_row r = now->rows[i], *x = tracked(t, r.pid);

		/* a new name under a known pid: an exec, or the pid reused */
		if (x && strcmp(x->comm, r.comm) && !r.start_ticks)
			read_ident(root, r.pid, &r);
		if (x && r.start_ticks && x->start_ticks && r.start_ticks != x->start_ticks) {
			x->gone = x->exited = true;
			x = NULL;
		}
		if (!x) {
			if (!r.start_ticks) /* first seen: who it is */
				read_ident(root, r.pid, &r);
			if (mp_proc_set_add(&t->seen, &r))
				return -ENOMEM;
			continue;
		}
		if (!r.start_ticks) {
			r.start_ticks = x->start_ticks;
			memcpy(r.cmdline, x->cmdline, sizeof(r.cmdline));
		}
		if (!r.have_anon_huge && x->have_anon_huge) { /* a quick read: the last known */
			r.have_anon_huge = true;
			r.anon_huge_bytes = x->anon_huge_bytes;
		}
		*x = r;
	}
	/* the ones of before that the set no longer holds */
	for (size_t i = 0; i < nseen; i++) {
		struct mp_proc_row *x = &t->seen.rows[i];

		if (x->gone || mp_proc_set_find(now, x->pid))
			continue;
		x->gone = true;
		x->exited = !still_there(root, x);
	}
	return 0;
}

void mp_proc_track_free(struct mp_proc_track *t)
{
	mp_proc_set_free(&t->seen);
}
