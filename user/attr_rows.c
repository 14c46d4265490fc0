// SPDX-License-Identifier: GPL-2.0
/*
 * A snapshot's rows (attr_rows.h): found, made, sorted and bisected by
 * process and by (stack, process). The room below the snapshot
 * (attr_snap.c), the drained rows (attr_drain.c), the fault counters
 * (attr_faults.c) and the /proc rows (attr_proc.c), so that none of those
 * calls another for its rows.
 */
#include "attr_rows.h"

#include <stdlib.h>
#include <string.h>

struct mp_task_row *mp_attr_task_row(struct mp_attr_snap *s, size_t cap, uint32_t tgid)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return &s->tasks[i];
	return mp_attr_task_row_new(s, cap, tgid);
}

struct mp_task_row *mp_attr_task_row_new(struct mp_attr_snap *s, size_t cap, uint32_t tgid)
{
	if (s->ntasks == cap)
		return NULL;
	if (s->ntasks == s->tasks_alloc) {
		/* rows as they come: a probe's few processes, not the map's
		 * 1024, at every new peak of its usage */
		size_t n = s->tasks_alloc ? s->tasks_alloc * 2 : 16;
		struct mp_task_row *t = realloc(s->tasks, (n > cap ? cap : n) * sizeof(*t));

		if (!t)
			return NULL;
		s->tasks = t;
		s->tasks_alloc = n > cap ? cap : n;
	}
	memset(&s->tasks[s->ntasks], 0, sizeof(s->tasks[0]));
	s->tasks[s->ntasks].tgid = tgid;
	return &s->tasks[s->ntasks++];
}

/* qsort, but of no rows too: qsort(NULL, 0) is undefined (nonnull). */
#define sort_rows(rows, n, size, cmp)						\
	do {									\
		if (n)								\
			qsort(rows, n, size, cmp);				\
	} while (0)

static int cmp_task(const void *x, const void *y)
{
	uint32_t a = ((const struct mp_task_row *)x)->tgid, b = ((const struct mp_task_row *)y)->tgid;

	return a < b ? -1 : a > b;
}

static int cmp_stack(const void *x, const void *y)
{
	const struct mp_stack_row *a = x, *b = y;

	if (a->tgid != b->tgid)
		return a->tgid < b->tgid ? -1 : 1;
	return a->stackid < b->stackid ? -1 : a->stackid > b->stackid;
}

void mp_attr_sort_tasks(struct mp_task_row *rows, size_t n)
{
	sort_rows(rows, n, sizeof(*rows), cmp_task);
}

void mp_attr_sort_stacks(struct mp_stack_row *rows, size_t n)
{
	sort_rows(rows, n, sizeof(*rows), cmp_stack);
}

struct mp_task_row *mp_attr_find_task(struct mp_task_row *rows, size_t n, uint32_t tgid)
{
	struct mp_task_row key = { .tgid = tgid };

	return n ? bsearch(&key, rows, n, sizeof(key), cmp_task) : NULL;
}

struct mp_stack_row *mp_attr_find_stack(struct mp_stack_row *rows, size_t n,
					const struct mp_stack_row *k)
{
	return n ? bsearch(k, rows, n, sizeof(*k), cmp_stack) : NULL;
}

void mp_attr_snap_sort(struct mp_attr_snap *s)
{
	mp_attr_sort_tasks(s->tasks, s->ntasks);
}

const struct mp_task_row *mp_attr_snap_task(const struct mp_attr_snap *s, uint32_t tgid)
{
	return mp_attr_find_task(s->tasks, s->ntasks, tgid);
}

const struct mp_stack_row *mp_attr_snap_stack(const struct mp_attr_snap *s,
					      const struct mp_stack_row *k)
{
	return mp_attr_find_stack(s->stacks, s->nstacks, k);
}
