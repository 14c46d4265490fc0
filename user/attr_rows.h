/* SPDX-License-Identifier: GPL-2.0 */
/* A snapshot's rows, by process and by (stack, process) (attr_rows.c). */
#ifndef MEMPROBE_ATTR_ROWS_H
#define MEMPROBE_ATTR_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "attr.h" /* struct mp_attr_snap, mp_task_row, mp_stack_row */

/* s's row of tgid, made (zeroed) if it has none and fewer than cap rows;
 * NULL when full. mp_attr_task_row_new makes one without looking. */
struct mp_task_row *mp_attr_task_row(struct mp_attr_snap *s, size_t cap, uint32_t tgid);
struct mp_task_row *mp_attr_task_row_new(struct mp_attr_snap *s, size_t cap, uint32_t tgid);

/* Sort s's task rows by process again (after rows were appended). */
void mp_attr_snap_sort(struct mp_attr_snap *s);

/* A snapshot's row of a process, or of a (stack, process): by bisection,
 * the rows sorted as every snapshot leaves them; NULL when it has none. */
const struct mp_task_row *mp_attr_snap_task(const struct mp_attr_snap *s, uint32_t tgid);
const struct mp_stack_row *mp_attr_snap_stack(const struct mp_attr_snap *s,
					      const struct mp_stack_row *k);

/* Sort rows by process, or by (process, stack); find one in n rows so
 * sorted by bisection (NULL when none). */
void mp_attr_sort_tasks(struct mp_task_row *rows, size_t n);
void mp_attr_sort_stacks(struct mp_stack_row *rows, size_t n);
struct mp_task_row *mp_attr_find_task(struct mp_task_row *rows, size_t n, uint32_t tgid);
struct mp_stack_row *mp_attr_find_stack(struct mp_stack_row *rows, size_t n,
					const struct mp_stack_row *k);

#endif
