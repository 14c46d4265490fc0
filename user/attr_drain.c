// SPDX-License-Identifier: GPL-2.0
/*
 * Rows of processes that have exited, moved out of the maps.
 *
 * The per-process map (task_stats, and comms) gets one entry per process
 * ever counted in the target, the per-stack one (stack_stats) one per
 * (kernel stack, process), and nothing in the kernel removes them: a
 * recording of a service that starts processes (workers, cron, shells)
 * filled task_stats' 1024 entries in 71 s (1000 processes living 1 to 5
 * minutes, bench/scale.sh) and lost every later process's counts. An exited
 * process counts nothing more in its own context, so its rows can live in
 * user space: mp_attr_drain moves them there (lookup-and-delete, atomic
 * where the kernel has it: 5.14+ for hash maps), and every snapshot adds
 * them back (mp_attr_add_gone), so the figures are those of maps that
 * never fill. A counter the kernel adds to a drained row afterwards (a CPU's
 * pending counters flushed late, a tracked page freed) makes the row again:
 * the next drain adds it to the same process.
 */
#include "attr_int.h"
#include "attr_rows.h"
#include "util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* Is the process gone (not even a zombie)? A task outside memprobe's pid
 * namespace cannot be asked: its rows stay. */
static bool gone(uint32_t tgid)
{
	return tgid && !(tgid & MP_TGID_OUTSIDE) && kill((pid_t)tgid, 0) && errno == ESRCH;
}

/* Read and delete one entry: atomically where the kernel can. */
static int take(int fd, const void *key, void *val)
{
	if (!bpf_map_lookup_and_delete_elem(fd, key, val))
		return 0;
	if (errno != EINVAL && errno != ENOTSUP && errno != 524 /* ENOTSUPP */)
		return -errno;
	if (bpf_map_lookup_elem(fd, key, val))
		return -errno;
	bpf_map_delete_elem(fd, key);
	return 0;
}

static struct mp_task_row *gone_task(struct mp_attr *a, uint32_t tgid)
{
	struct mp_task_row *n;

	for (size_t i = 0; i < a->ngone; i++)
		if (a->gone[i].tgid == tgid)
			return &a->gone[i];
	if (a->ngone == a->gone_cap) {
		size_t cap = a->gone_cap ? a->gone_cap * 2 : 64;

		if (!(n = realloc(a->gone, cap * sizeof(*n))))
			return NULL;
		a->gone = n;
		a->gone_cap = cap;
	}
	n = &a->gone[a->ngone++];
	memset(n, 0, sizeof(*n));
	n->tgid = tgid;
	return n;
}

static struct mp_stack_row *gone_stack(struct mp_attr *a, const struct mp_stack_key *k)
{
	struct mp_stack_row *n;

	for (size_t i = 0; i < a->ngone_stacks; i++)
		if (a->gone_stacks[i].stackid == k->stackid && a->gone_stacks[i].tgid == k->tgid)
			return &a->gone_stacks[i];
	if (a->ngone_stacks == a->gone_stacks_cap) {
		size_t cap = a->gone_stacks_cap ? a->gone_stacks_cap * 2 : 64;

		if (!(n = realloc(a->gone_stacks, cap * sizeof(*n))))
			return NULL;
		a->gone_stacks = n;
		a->gone_stacks_cap = cap;
	}
	n = &a->gone_stacks[a->ngone_stacks++];
	*n = (struct mp_stack_row){ .stackid = k->stackid, .tgid = k->tgid };
	return n;
}

/* The per-process map and the names: the gone processes' rows. */
static int drain_tasks(struct mp_attr *a, struct mp_task_stat *tv)
{
	int fd = bpf_map__fd(a->skel->maps.task_stats);
	int cfd = bpf_map__fd(a->skel->maps.comms);
	uint32_t key, next, *prev = NULL, *dead = NULL;
	size_t ndead = 0, cap = 0;
	int moved = 0;

	/* keys first: deleting while walking would restart the walk */
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!gone(key))
			continue;
		if (ndead == cap) {
			uint32_t *n = realloc(dead, (cap = cap ? cap * 2 : 64) * sizeof(*n));

			if (!n)
				break;
			dead = n;
		}
		dead[ndead++] = key;
	}
	for (size_t i = 0; i < ndead; i++) {
		struct mp_task_row *r = gone_task(a, dead[i]);
		uint32_t host;
		char comm[16];

		if (!r || take(fd, &dead[i], tv))
			continue;
		a->task_rows_taken++;
		for (int c = 0; c < a->ncpus; c++)
			mp_task_stat_add(&r->stat, &tv[c]);
		if (!take(cfd, &dead[i], comm)) {
			memcpy(r->comm, comm, sizeof(r->comm));
			r->comm[sizeof(r->comm) - 1] = '\0';
		}
		if (a->pidns && !take(bpf_map__fd(a->skel->maps.host_tgids), &dead[i], &host))
			r->host_tgid = host;
		moved++;
	}
	free(dead);
	return moved;
}

/* The per-stack map: the gone processes' rows. */
static int drain_stacks(struct mp_attr *a)
{
	int fd = bpf_map__fd(a->skel->maps.stack_stats);
	struct mp_stack_key key, next, *prev = NULL, *dead = NULL;
	size_t ndead = 0, cap = 0;
	int moved = 0;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!gone(key.tgid))
			continue;
		if (ndead == cap) {
			struct mp_stack_key *n = realloc(dead, (cap = cap ? cap * 2 : 64) * sizeof(*n));

			if (!n)
				break;
			dead = n;
		}
		dead[ndead++] = key;
	}
	for (size_t i = 0; i < ndead; i++) {
		struct mp_stack_row *r = gone_stack(a, &dead[i]);
		struct mp_stack_stat v;

		if (!r || take(fd, &dead[i], &v))
			continue;
		a->stack_rows_taken++;
		r->pages += v.pages;
		r->alloc_pages += v.alloc_pages;
		r->unaccounted_pages += v.unaccounted_pages;
		moved++;
	}
	free(dead);
	return moved;
}

bool mp_attr_drain_due(const struct mp_attr *a, const struct mp_totals *t)
{
	uint64_t tasks, stacks;

	if (!a || !a->skel)
		return false;
	tasks = t->task_rows_made - MP_MIN(t->task_rows_made, a->task_rows_taken);
	stacks = t->stack_rows_made - MP_MIN(t->stack_rows_made, a->stack_rows_taken);
	return tasks * 4 >= bpf_map__max_entries(a->skel->maps.task_stats) ||
	       stacks * 4 >= bpf_map__max_entries(a->skel->maps.stack_stats);
}

int mp_attr_drain(struct mp_attr *a)
{
	struct mp_task_stat *tv;
	int moved;

	if (!a || !a->skel)
		return 0;
	if (!(tv = calloc((size_t)a->ncpus, sizeof(*tv))))
		return -ENOMEM;
	pthread_mutex_lock(&a->gone_lock);
	moved = drain_tasks(a, tv) + drain_stacks(a);
	pthread_mutex_unlock(&a->gone_lock);
	free(tv);
	return moved;
}

/* The gone rows into s's tasks: the map's rows sorted first, each gone row
 * found by bisection or appended (thousands of exited processes, at every
 * new peak of a recording: no pass over all rows per row). */
static void add_gone_tasks(struct mp_attr *a, struct mp_attr_snap *s, size_t cap)
{
	size_t nmap = s->ntasks;

	mp_attr_sort_tasks(s->tasks, nmap);
	for (size_t i = 0; i < a->ngone; i++) {
		const struct mp_task_row *g = &a->gone[i];
		struct mp_task_row *r = mp_attr_find_task(s->tasks, nmap, g->tgid);

		if (!r && !(r = mp_attr_task_row_new(s, cap + a->ngone, g->tgid)))
			continue;
		mp_task_stat_add(&r->stat, &g->stat);
		r->gone = true;
		if (!r->comm[0] || !strcmp(r->comm, "?"))
			memcpy(r->comm, g->comm, sizeof(r->comm));
		if (g->host_tgid)
			r->host_tgid = g->host_tgid;
	}
	mp_attr_sort_tasks(s->tasks, s->ntasks);
}

static void add_gone_stacks(struct mp_attr *a, struct mp_attr_snap *s)
{
	size_t nmap = s->nstacks;
	struct mp_stack_row *n;

	if (!a->ngone_stacks || !(n = realloc(s->stacks, (nmap + a->ngone_stacks) * sizeof(*n)))) {
		mp_attr_sort_stacks(s->stacks, nmap);
		return;
	}
	s->stacks = n;
	mp_attr_sort_stacks(s->stacks, nmap);
	for (size_t i = 0; i < a->ngone_stacks; i++) {
		const struct mp_stack_row *g = &a->gone_stacks[i];
		struct mp_stack_row *r = mp_attr_find_stack(s->stacks, nmap, g);

		if (!r) {
			r = &s->stacks[s->nstacks++];
			*r = (struct mp_stack_row){ .stackid = g->stackid, .tgid = g->tgid };
		}
		r->pages += g->pages;
		r->alloc_pages += g->alloc_pages;
		r->unaccounted_pages += g->unaccounted_pages;
	}
	mp_attr_sort_stacks(s->stacks, s->nstacks);
}

void mp_attr_add_gone(struct mp_attr *a, struct mp_attr_snap *s, size_t cap, bool stacks)
{
	add_gone_tasks(a, s, cap);
	if (stacks)
		add_gone_stacks(a, s);
}
