// SPDX-License-Identifier: GPL-2.0
/*
 * Attribution without BPF: the session's task rows from /proc.
 *
 * Where no BPF program can run (refused: a container's root has no
 * CAP_BPF; no BTF), the kernel still keeps per-process counters of what a
 * process maps and holds: RSS by kind, page-table bytes, threads (each with
 * a kernel stack). Each snapshot the session takes (the baseline's, every
 * new high of the usage, the stop, record's peaks) reads them for the
 * target's processes (procstat.c) and makes one task row per process,
 * with the level of each category it can show at that moment; the
 * difference of two snapshots is then each process's growth, as with the
 * BPF rows. The cgroup's totals still come from memory.stat; the rows
 * split them, approximately (procstat.h says where they differ).
 *
 * A process seen once stays in every later snapshot: gone, its level is 0
 * (its memory went with it), and its last figures are kept in the
 * snapshot's procs, marked.
 */
#include "attr_int.h"
#include "attr_rows.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The categories a /proc row shows: file includes shmem (as memory.stat's
 * does), kernel is what the rows know of it (page tables and stacks),
 * anon_thp the part of anon smaps_rollup shows in huge pages. */
static const int row_cats[] = {
	MP_CAT_ANON, MP_CAT_FILE, MP_CAT_SHMEM, MP_CAT_PAGETABLES, MP_CAT_KERNEL_STACK,
	MP_CAT_KERNEL, MP_CAT_ANON_THP,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The kernel's stack size: memory.stat's kernel_stack over the threads of
 * the cgroup's processes, where the kernel keeps it per memcg (v2). */
static void learn_stack_size(struct mp_attr *a)
{
	struct mp_proc_set set = { 0 };
	struct mp_cg_stat st = { 0 };
	uint64_t threads = 0;
	bool have = false;

	if (a->have_cg && !mp_cgroup_stat("", &a->cg, &st) && st.have[MP_CAT_KERNEL_STACK] &&
	    !mp_proc_of_cgroup("", a->cg.dir, 0, 0, &set)) {
		for (size_t i = 0; i < set.n; i++)
			threads += set.rows[i].threads;
		have = true;
	}
	mp_proc_stack_size(have, st.bytes[MP_CAT_KERNEL_STACK], threads, &a->stack_size);
	mp_proc_set_free(&set);
}

void mp_attr_proc_start(struct mp_attr *a)
{
	struct mp_hook *h = &a->hooks[MP_CONCERN_MEMCG];

	/* --memcg-from counters: the rows are /proc's, the programs keep
	 * the rest (kernel paths, faults, copies, OOM kills) */
	bool counters = h->counters && a->chosen[MP_CONCERN_MEMCG] >= 0;

	if ((!a->no_bpf[0] && !counters) || (!a->have_cg && !a->proc_tree_pid))
		return;
	a->proc_rows = true;
	learn_stack_size(a);
	for (size_t i = 0; i < sizeof(row_cats) / sizeof(row_cats[0]); i++)
		a->cat_rows[row_cats[i]] = true;
	if (!a->no_bpf[0])
		return;
	snprintf(h->hook, sizeof(h->hook), "polling memory.stat (totals) and /proc (per process, "
		 "approximate)");
	snprintf(h->target, sizeof(h->target), "memory.stat + /proc/PID/status");
	mp_appendf(h->missing, sizeof(h->missing), "; per process from /proc instead");
}

void mp_attr_proc_quick_wait(const struct mp_attr *a)
{
	uint64_t t = now_ns(), next = a->proc_quick_next_ns;

	/* a rest, not a pass: passing over the highs between (the probe's
	 * sampler) missed the last of a rise, and with it a burst held at
	 * the peak: 35 to 50 MiB unexplained on the busy host */
	if (a->proc_rows && t < next)
		usleep((useconds_t)MP_MIN(next - t, 100000000ULL) / 1000);
}

/* One process's row: the level of each category /proc shows, 0 once gone.
 * A pid reused during the session has two processes: their levels add up
 * (the one gone adds nothing), and the row is gone only when both are. */
static void fill_row(struct mp_task_row *t, const struct mp_proc_row *p)
{
	if (t->source != MP_ROW_PROC) { /* made just now */
		t->source = MP_ROW_PROC;
		t->gone = true;
		snprintf(t->comm, sizeof(t->comm), "%s", p->comm);
	}
	t->gone &= p->exited;
	if (p->gone)
		return;
	snprintf(t->comm, sizeof(t->comm), "%s", p->comm);
	t->charge_bytes[MP_CAT_ANON] += (int64_t)p->rss_anon_bytes;
	/* a part of anon, as memory.stat's anon_thp is; unknown (0) where
	 * smaps_rollup could not be read */
	t->charge_bytes[MP_CAT_ANON_THP] += (int64_t)p->anon_huge_bytes;
	t->charge_bytes[MP_CAT_FILE] += (int64_t)(p->rss_file_bytes + p->rss_shmem_bytes);
	t->charge_bytes[MP_CAT_SHMEM] += (int64_t)p->rss_shmem_bytes;
	t->charge_bytes[MP_CAT_PAGETABLES] += (int64_t)p->pte_bytes;
	t->charge_bytes[MP_CAT_KERNEL_STACK] += (int64_t)p->kernel_stack_bytes;
	t->charge_bytes[MP_CAT_KERNEL] += (int64_t)(p->pte_bytes + p->kernel_stack_bytes);
}

/* The tracked processes as task rows, and a copy of their figures. */
static int make_rows(struct mp_attr *a, struct mp_attr_snap *s)
{
	const struct mp_proc_set *seen = &a->proc_track.seen;

	s->procs = calloc(seen->n + 1, sizeof(*s->procs));
	if (!s->procs)
		return -ENOMEM;
	if (seen->n) /* none yet: rows is NULL */
		memcpy(s->procs, seen->rows, seen->n * sizeof(*s->procs));
	s->nprocs = seen->n;
	for (size_t i = 0; i < seen->n; i++) {
		struct mp_task_row *t = mp_attr_task_row(s, SIZE_MAX, seen->rows[i].pid);

		if (!t)
			return -ENOMEM;
		fill_row(t, &seen->rows[i]);
	}
	return 0;
}

/* The processes now: the tree's (its root and every member seen, so that
 * an orphan reparented away stays in), or the cgroup's. */
static int read_set(struct mp_attr *a, unsigned flags, struct mp_proc_set *now)
{
	uint64_t sb = a->stack_size.bytes;
	const struct mp_proc_set *seen = &a->proc_track.seen;
	uint32_t *roots;
	size_t n = 0;
	int ret;

	if (!a->proc_tree_pid)
		return mp_proc_of_cgroup("", a->cg.dir, flags, sb, now);
	if (!(roots = calloc(seen->n + 1, sizeof(*roots))))
		return -ENOMEM;
	roots[n++] = a->proc_tree_pid;
	for (size_t i = 0; i < seen->n; i++)
		if (!seen->rows[i].gone)
			roots[n++] = seen->rows[i].pid;
	ret = mp_proc_of_tree("", roots, n, flags, sb, now);
	free(roots);
	return ret;
}

int mp_attr_proc_snapshot(struct mp_attr *a, struct mp_attr_snap *s, bool full)
{
	struct mp_proc_set now = { 0 };
	uint64_t t0 = now_ns(), t1;
	int ret;

	/* the reading outside the lock: a full one walks page tables
	 * (smaps_rollup), and the sampler's quick ones at the probe's stop
	 * would wait for it, long after the high they were taken for */
	if (a->proc_tree_pid)
		pthread_mutex_lock(&a->gone_lock); /* the tree's roots are the track's */
	ret = read_set(a, full ? MP_PROC_ROLLUP | MP_PROC_IDENT : 0, &now);
	if (!a->proc_tree_pid)
		pthread_mutex_lock(&a->gone_lock); /* the sampler thread snapshots too */
	if (!ret)
		ret = mp_proc_track_merge("", &a->proc_track, &now);
	if (!ret)
		ret = make_rows(a, s);
	pthread_mutex_unlock(&a->gone_lock);
	mp_proc_set_free(&now);
	mp_attr_snap_sort(s);
	s->stack_bytes = a->stack_size.bytes;
	s->stack_source = a->stack_size.source;
	t1 = now_ns();
	if (!full) /* the next quick one after eight times this one's cost */
		a->proc_quick_next_ns = t1 + 8 * (t1 - t0);
	return ret;
}

/* The effective capabilities (CapEff of /proc/self/status); 0 unread. */
static uint64_t cap_eff(void)
{
	char buf[4096], *l;
	unsigned long long v = 0;

	if (mp_read_file("/proc/self/status", buf, sizeof(buf)) > 0 &&
	    (l = strstr(buf, "\nCapEff:")))
		sscanf(l + 8, " %llx", &v);
	return v;
}

/* Is memprobe in a user namespace other than the host's (its uid_map is
 * not the whole range mapped to itself)? */
static bool in_user_ns(void)
{
	char buf[256];
	unsigned long long in, out, n;

	return mp_read_file("/proc/self/uid_map", buf, sizeof(buf)) > 0 &&
	       !(sscanf(buf, "%llu %llu %llu", &in, &out, &n) == 3 && in == 0 && out == 0 &&
		 n == 4294967295ULL);
}

#define CAP_BIT(n) (1ULL << (n))
#define MP_CAP_SYS_ADMIN 21
#define MP_CAP_PERFMON 38
#define MP_CAP_BPF 39

void mp_attr_say_no_bpf(struct mp_attr *a, int errnum, char *err, size_t errlen)
{
	static const char goes_on[] = "memprobe goes on with /proc and the cgroup's files";
	char *l = a->no_bpf_line;
	size_t n = sizeof(a->no_bpf_line);
	uint64_t caps = cap_eff();
	bool held = (caps & CAP_BIT(MP_CAP_BPF) && caps & CAP_BIT(MP_CAP_PERFMON)) ||
		    caps & CAP_BIT(MP_CAP_SYS_ADMIN);

	if (!strcmp(a->no_bpf_reason, "no_btf"))
		snprintf(l, n, "%s; %s", err, goes_on);
	else if (strcmp(a->no_bpf_reason, "refused"))
		snprintf(l, n, "cannot load the BPF programs: %s; %s", strerror(errnum), goes_on);
	else /* never "run as root": a container's root is root, and refused */
		snprintf(l, n, "BPF refused (%s): memprobe's programs need CAP_BPF and CAP_PERFMON, "
			 "or CAP_SYS_ADMIN, in the host's user namespace%s; %s", strerror(errnum),
			 in_user_ns() ? " (memprobe runs in a user namespace of its own: "
			 "capabilities there do not count)" : held ? " (memprobe holds them: a "
			 "security module, seccomp or lockdown refuses)" : ", which memprobe lacks",
			 goes_on);
	if (errlen)
		snprintf(err, errlen, "%s", l);
}

void mp_attr_proc_stop(struct mp_attr *a)
{
	mp_proc_track_free(&a->proc_track);
}
