// SPDX-License-Identifier: GPL-2.0
/*
 * Page faults per process from the kernel's own counters.
 *
 * The kernel counts every fault it handles in the faulting task
 * (task_struct min_flt and maj_flt, mm_account_fault()) and in its memcg
 * (memory.stat pgfault). Reading those at the snapshots costs nothing per
 * fault, where a tracepoint on every fault costs a program run each. What
 * /proc no longer shows is a thread that has exited: the exit hook
 * (bpf/memprobe.bpf.c on_exit) adds its counts to its process's row as it
 * goes. So, per process, at a full snapshot:
 *
 *   still in /proc (alive, or a zombie not yet reaped): the whole-process
 *     figure of /proc/PID/stat, which counts its released threads too;
 *   gone: the exit hook's sum over its threads, plus what its threads
 *     released before the session had (its base, below), which the hook
 *     never saw.
 *
 * Both are counts since the process began, so a difference of two
 * snapshots is what the process faulted in between.
 */
#include "attr_int.h"
#include "attr_rows.h"
#include "cgroup.h"
#include "util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* min_flt + maj_flt and the state letter of a /proc .../stat file.
 * Returns 0, or -1 when the file is gone or unreadable. comm, if not NULL,
 * gets the name between the parentheses (16 bytes). */
static int read_stat_faults(const char *path, uint64_t *faults, char *state, char *comm)
{
	char buf[1024], *open_p, *close_p;
	unsigned long long minflt, majflt;
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the name may hold spaces and parentheses: the last ')' ends it */
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p ||
	    sscanf(close_p + 1, " %c %*d %*d %*d %*d %*d %*u %llu %*u %llu", state, &minflt,
		   &majflt) != 3)
		return -1;
	if (comm) {
		size_t len = (size_t)(close_p - open_p - 1);

		len = len > 15 ? 15 : len;
		memcpy(comm, open_p + 1, len);
		comm[len] = '\0';
	}
	*faults = minflt + majflt;
	return 0;
}

/* The counts of pid's threads that are still running (not zombies: those
 * have exited, and their counts were either seen by the exit hook or are
 * released ones). */
static uint64_t live_threads_faults(uint32_t pid)
{
	char path[64];
	struct dirent *de;
	uint64_t sum = 0, v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	if (!(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		char st = '?';

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%u/task/%.16s/stat", pid, de->d_name);
		if (!read_stat_faults(path, &v, &st, NULL) && st != 'Z' && st != 'X')
			sum += v;
	}
	closedir(d);
	return sum;
}

static uint64_t base_of(const struct mp_attr *a, uint32_t tgid)
{
	for (size_t i = 0; i < a->nfault_base; i++)
		if (a->fault_base[i].tgid == tgid)
			return a->fault_base[i].released;
	return 0;
}

/* At the first full snapshot: what pid's released threads had, less those
 * the exit hook saw already (exited since the programs were attached). */
static void take_base(struct mp_attr *a, uint32_t pid, uint64_t whole, uint64_t hooked)
{
	uint64_t live = live_threads_faults(pid), released;
	struct mp_fault_base *n;

	released = whole > live + hooked ? whole - live - hooked : 0;
	if (!released)
		return;
	n = realloc(a->fault_base, (a->nfault_base + 1) * sizeof(*n));
	if (!n)
		return; /* the process's figure after it is gone is short by this */
	a->fault_base = n;
	a->fault_base[a->nfault_base++] = (struct mp_fault_base){ pid, released };
}

/* One row: its process's figure, as the header says. */
static void count_row(struct mp_attr *a, struct mp_task_row *r)
{
	char path[32], st = '?', comm[16];
	uint64_t whole;

	snprintf(path, sizeof(path), "/proc/%u/stat", r->tgid);
	/* a drained row's process is gone: no /proc to read (thousands of
	 * them in a long recording, at every new peak) */
	if (r->gone || read_stat_faults(path, &whole, &st, comm)) {
		r->faults += base_of(a, r->tgid);
		return;
	}
	if (!a->fault_base_taken)
		take_base(a, r->tgid, whole, r->faults);
	r->faults = whole;
	if (!r->comm[0] || !strcmp(r->comm, "?"))
		snprintf(r->comm, sizeof(r->comm), "%s", comm);
}

struct walk_ctx {
	struct mp_attr *a;
	struct mp_attr_snap *s;
	size_t cap, nrows; /* rows counted already: those the maps had */
};

/* A process of the target that no program has counted yet. */
static int add_proc(uint32_t pid, void *arg)
{
	struct walk_ctx *w = arg;
	struct mp_task_row *r;

	if (mp_attr_snap_task(&(struct mp_attr_snap){ .tasks = w->s->tasks, .ntasks = w->nrows },
			      pid))
		return 0; /* the first nrows are sorted (snapshot) */
	for (size_t i = w->nrows; i < w->s->ntasks; i++)
		if (w->s->tasks[i].tgid == pid)
			return 0; /* listed twice: moved while the walk ran */
	if ((r = mp_attr_task_row(w->s, w->cap, pid)))
		count_row(w->a, r);
	return 0;
}

void mp_attr_fault_counters(struct mp_attr *a, struct mp_attr_snap *s, size_t cap)
{
	struct walk_ctx w = { .a = a, .s = s, .cap = cap, .nrows = s->ntasks };

	if (!a->hooks[MP_CONCERN_FAULTS].counters || a->hooks[MP_CONCERN_FAULTS].polled)
		return;
	/* a process that moved out keeps its row (and its faults since) */
	for (size_t i = 0; i < w.nrows; i++)
		if (s->tasks[i].tgid)
			count_row(a, &s->tasks[i]);
	if (a->have_cg)
		mp_cgroup_walk_procs(a->cg.dir, add_proc, &w);
	a->fault_base_taken = true;
}
