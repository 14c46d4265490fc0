// SPDX-License-Identifier: GPL-2.0
/* The attribution section, built from the hook plan and snapshots. */
#include "attribution.h"
#include "render.h"
#include "json.h"
#include "ksyms.h"
#include "util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int64_t mp_attributed_bytes(const int64_t c[MP_NR_CATS], bool have_kernel_total)
{
	/* file includes shmem; kernel (MEMCG_KMEM) includes pagetables, stacks,
	 * slab, percpu and vmalloc; sock is charged apart from kmem. */
	int64_t sum = c[MP_CAT_ANON] + c[MP_CAT_FILE] + c[MP_CAT_SOCK];

	if (have_kernel_total)
		return sum + c[MP_CAT_KERNEL];
	for (int k = MP_CAT_PAGETABLES; k <= MP_CAT_VMALLOC; k++)
		if (k != MP_CAT_SOCK)
			sum += c[k];
	return sum;
}

static void cat_totals(const struct mp_attr_snap *s, int64_t out[MP_NR_CATS])
{
	memset(out, 0, sizeof(int64_t) * MP_NR_CATS);
	for (size_t i = 0; s && i < s->ntasks; i++)
		for (int k = 0; k < MP_NR_CATS; k++)
			out[k] += s->tasks[i].charge_bytes[k];
}

/* The kernel stack class that explains a memory.stat category. */
static const char *class_of_cat(const char *cat)
{
	if (strncmp(cat, "slab", 4) == 0)
		return "slab";
	return cat;
}

struct stack_view {
	const struct mp_stack_row *row;
	char cls[64];
};

static int cmp_stack_desc(const void *a, const void *b)
{
	const struct stack_view *x = a, *y = b;

	return x->row->pages < y->row->pages ? 1 : x->row->pages > y->row->pages ? -1 : 0;
}

static const char *comm_of(const struct mp_attr_snap *s, uint32_t tgid)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return s->tasks[i].comm;
	return "";
}

static cJSON *stack_json(const struct mp_attr_input *in, const struct stack_view *v,
			 long page_size)
{
	cJSON *o = cJSON_CreateObject(), *frames = cJSON_CreateArray();
	uint64_t ips[MP_STACK_DEPTH];
	int n = mp_attr_stack(in->attr, v->row->stackid, ips, MP_STACK_DEPTH);

	mp_json_add_s64(o, "bytes", v->row->pages * page_size);
	mp_json_add_u64(o, "alloc_bytes", v->row->alloc_pages * (uint64_t)page_size);
	cJSON_AddNumberToObject(o, "pid", v->row->tgid);
	cJSON_AddStringToObject(o, "comm", comm_of(in->paths ? in->paths : in->growth, v->row->tgid));
	for (int i = 0; i < n; i++) {
		const struct mp_ksym *s = mp_ksyms_find(in->ksyms, ips[i]);
		char buf[320];

		if (mp_ksym_is_tracing(s))
			continue;
		if (s && s->module)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " [%s]", s->name, ips[i] - s->addr, s->module);
		else if (s)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->name, ips[i] - s->addr);
		else
			snprintf(buf, sizeof(buf), "0x%" PRIx64, ips[i]);
		cJSON_AddItemToArray(frames, cJSON_CreateString(buf));
	}
	cJSON_AddItemToObject(o, "frames", frames);
	return o;
}

/* Top stacks of one class, largest net bytes first, into a new array. */
static cJSON *top_stacks(const struct mp_attr_input *in, struct stack_view *views,
			 size_t n, const char *cls, long page_size)
{
	cJSON *arr = cJSON_CreateArray();
	int kept = 0;

	for (size_t i = 0; i < n && kept < in->top; i++) {
		if (strcmp(views[i].cls, cls) != 0 || views[i].row->alloc_pages == 0)
			continue;
		cJSON_AddItemToArray(arr, stack_json(in, &views[i], page_size));
		kept++;
	}
	return arr;
}

struct task_share {
	uint32_t tgid;
	const char *comm;
	int64_t bytes;
};

static int cmp_share_desc(const void *a, const void *b)
{
	const struct task_share *x = a, *y = b;
	int64_t ax = x->bytes < 0 ? -x->bytes : x->bytes, ay = y->bytes < 0 ? -y->bytes : y->bytes;

	return ax < ay ? 1 : ax > ay ? -1 : 0;
}

static cJSON *task_shares(const struct mp_attr_input *in, int cat)
{
	const struct mp_attr_snap *s = in->growth;
	struct task_share *sh = calloc(s->ntasks + 1, sizeof(*sh));
	cJSON *arr = cJSON_CreateArray();
	size_t n = 0;
	int64_t rest = 0;

	if (!sh)
		return arr;
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].charge_bytes[cat])
			sh[n++] = (struct task_share){ s->tasks[i].tgid, s->tasks[i].comm,
						       s->tasks[i].charge_bytes[cat] };
	qsort(sh, n, sizeof(*sh), cmp_share_desc);
	for (size_t i = 0; i < n; i++) {
		if ((int)i >= in->top) {
			rest += sh[i].bytes;
			continue;
		}
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "pid", sh[i].tgid);
		cJSON_AddStringToObject(o, "comm", sh[i].comm);
		mp_json_add_s64(o, "bytes", sh[i].bytes);
		cJSON_AddItemToArray(arr, o);
	}
	if (rest) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNullToObject(o, "pid");
		cJSON_AddStringToObject(o, "comm", "(rest)");
		mp_json_add_s64(o, "bytes", rest);
		cJSON_AddItemToArray(arr, o);
	}
	free(sh);
	return arr;
}

cJSON *mp_report_attribution(const struct mp_attr_input *in)
{
	const struct mp_attr_snap *g = in->growth;
	/* kernel paths span their own snapshot: uncharged memory does not
	 * move the usage, so the usage's peak is no time to stop at */
	const struct mp_attr_snap *ps = in->paths ? in->paths : in->growth;
	const struct mp_hook *hooks = mp_attr_hooks(in->attr);
	long page_size = sysconf(_SC_PAGESIZE);
	cJSON *a = cJSON_CreateObject(), *arr, *o;
	int64_t cat[MP_NR_CATS], ret[MP_NR_CATS], ret_known = 0;
	struct stack_view *views = calloc(ps->nstacks + 1, sizeof(*views));
	uint64_t faults = 0;

	if (!a || !views) {
		cJSON_Delete(a);
		free(views);
		return NULL;
	}
	cat_totals(g, cat);
	cat_totals(in->retained, ret);
	/* what no hook sees: the cgroup's own counters, without a per-process split */
	for (int k = 0; k < MP_NR_CATS; k++)
		if (mp_attr_cat_polled(in->attr, k)) {
			cat[k] = g->have_stat && g->stat.have[k] ? (int64_t)g->stat.bytes[k] : 0;
			ret[k] = in->retained && in->retained->have_stat && in->retained->stat.have[k] ?
				 (int64_t)in->retained->stat.bytes[k] : 0;
		}
	for (size_t i = 0; i < ps->nstacks; i++) {
		uint64_t ips[MP_STACK_DEPTH];
		int n = mp_attr_stack(in->attr, ps->stacks[i].stackid, ips, MP_STACK_DEPTH);

		views[i].row = &ps->stacks[i];
		if (n > 0 && in->ksyms)
			mp_classify_stack(in->ksyms, ips, n, views[i].cls, sizeof(views[i].cls));
		else
			snprintf(views[i].cls, sizeof(views[i].cls), "other");
	}
	qsort(views, ps->nstacks, sizeof(*views), cmp_stack_desc);

	/* hooks used, and what could not be attributed */
	arr = cJSON_AddArrayToObject(a, "hooks");
	cJSON *missing = cJSON_CreateArray();
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "concern", hooks[c].name);
		if (hooks[c].hook[0])
			cJSON_AddStringToObject(o, "hook", hooks[c].hook);
		else
			cJSON_AddNullToObject(o, "hook");
		if (hooks[c].missing[0]) {
			/* as long as it is: missing holds up to 319 characters */
			char *buf;

			cJSON_AddStringToObject(o, "missing", hooks[c].missing);
			if (asprintf(&buf, "%s: %s", hooks[c].name, hooks[c].missing) >= 0) {
				cJSON_AddItemToArray(missing, cJSON_CreateString(buf));
				free(buf);
			}
		}
		cJSON_AddItemToArray(arr, o);
	}
	if (!in->ksyms)
		cJSON_AddItemToArray(missing, cJSON_CreateString(
			"kernel paths: /proc/kallsyms unreadable, stacks left unsymbolized"));
	/* a category is measured when the kernel keeps it and, where no hook
	 * sees it, when the cgroup's memory.stat shows it */
	bool avail[MP_NR_CATS];
	for (int k = 0; k < MP_NR_CATS; k++) {
		const char *item;
		char buf[200];

		avail[k] = mp_attr_cat_available(in->attr, k, &item);
		if (avail[k] && mp_attr_cat_polled(in->attr, k) && !(g->have_stat && g->stat.have[k])) {
			avail[k] = false;
			snprintf(buf, sizeof(buf), "%s: no hook sees it and this cgroup's memory.stat "
				 "has no such key", mp_cat_names[k]);
		} else if (!avail[k]) {
			snprintf(buf, sizeof(buf), "%s: this kernel keeps no per-memcg count (no %s)",
				 mp_cat_names[k], item);
		} else {
			continue;
		}
		cJSON_AddItemToArray(missing, cJSON_CreateString(buf));
	}
	cJSON_AddItemToObject(a, "attribution_missing", missing);

	/* categories, in memory.stat's terms */
	arr = cJSON_AddArrayToObject(a, "categories");
	int64_t kernel_known = 0;
	for (int k = 0; k < MP_NR_CATS; k++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", mp_cat_names[k]);
		cJSON_AddBoolToObject(o, "available", avail[k]);
		if (mp_attr_cat_polled(in->attr, k) && avail[k])
			cJSON_AddStringToObject(o, "source", "memory.stat");
		mp_json_add_s64(o, "growth_bytes", cat[k]);
		if (in->retained)
			mp_json_add_s64(o, "retained_bytes", ret[k]);
		cJSON_AddItemToObject(o, "tasks", task_shares(in, k));
		if (k != MP_CAT_ANON && k != MP_CAT_FILE && k != MP_CAT_KERNEL)
			cJSON_AddItemToObject(o, "top_stacks",
					      top_stacks(in, views, ps->nstacks,
							 class_of_cat(mp_cat_names[k]), page_size));
		cJSON_AddItemToArray(arr, o);
		if (k >= MP_CAT_PAGETABLES && k <= MP_CAT_VMALLOC && k != MP_CAT_SOCK) {
			kernel_known += cat[k];
			ret_known += ret[k];
		}
	}
	/* kmem that no itemised category explains */
	bool have_kernel = avail[MP_CAT_KERNEL];
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", "kernel_other");
	cJSON_AddBoolToObject(o, "available", have_kernel);
	mp_json_add_s64(o, "growth_bytes", have_kernel ? cat[MP_CAT_KERNEL] - kernel_known : 0);
	if (in->retained)
		mp_json_add_s64(o, "retained_bytes", have_kernel ? ret[MP_CAT_KERNEL] - ret_known : 0);
	cJSON_AddItemToObject(o, "tasks", cJSON_CreateArray());
	cJSON_AddItemToObject(o, "top_stacks", top_stacks(in, views, ps->nstacks, "other", page_size));
	cJSON_AddItemToArray(arr, o);

	/* page faults */
	o = cJSON_AddObjectToObject(a, "page_faults");
	cJSON *by = cJSON_CreateArray();
	for (size_t i = 0; i < g->ntasks; i++) {
		faults += g->tasks[i].faults;
		if (!g->tasks[i].faults)
			continue;
		cJSON *t = cJSON_CreateObject();
		cJSON_AddNumberToObject(t, "pid", g->tasks[i].tgid);
		cJSON_AddStringToObject(t, "comm", g->tasks[i].comm);
		mp_json_add_u64(t, "faults", g->tasks[i].faults);
		cJSON_AddItemToArray(by, t);
	}
	if (hooks[MP_CONCERN_FAULTS].polled) {
		faults = g->have_stat && g->stat.have_pgfault ? g->stat.pgfault : 0;
		cJSON_AddStringToObject(o, "source", g->have_stat && g->stat.have_pgfault ?
					"memory.stat pgfault" : "none");
	}
	mp_json_add_u64(o, "total", faults);
	if (in->allocated_bytes && in->probe_pid && hooks[MP_CONCERN_FAULTS].polled) {
		/* the cgroup's total only: the probe's own share is not known */
		cJSON_AddNullToObject(o, "probe");
		cJSON_AddNullToObject(o, "probe_per_gib_allocated");
	} else if (in->allocated_bytes && in->probe_pid) {
		uint64_t pf = 0;

		for (size_t i = 0; i < g->ntasks; i++)
			if (g->tasks[i].tgid == in->probe_pid)
				pf = g->tasks[i].faults;
		mp_json_add_u64(o, "probe", pf);
		mp_json_add_fixed(o, "probe_per_gib_allocated",
				  (double)pf * MP_GIB / (double)in->allocated_bytes, 1);
	}
	cJSON_AddItemToObject(o, "by_task", by);

	/* gross charges asked of the memcg, per process (a BPF charge hook only) */
	o = cJSON_AddObjectToObject(a, "memcg_charges");
	if (hooks[MP_CONCERN_CHARGE].hook[0] && !hooks[MP_CONCERN_CHARGE].polled) {
		cJSON *bt = cJSON_CreateArray();
		uint64_t total = 0;

		cJSON_AddStringToObject(o, "source", hooks[MP_CONCERN_CHARGE].hook);
		for (size_t i = 0; i < g->ntasks; i++) {
			cJSON *t;

			total += g->tasks[i].charged_pages;
			if (!g->tasks[i].charged_pages)
				continue;
			t = cJSON_CreateObject();
			cJSON_AddNumberToObject(t, "pid", g->tasks[i].tgid);
			cJSON_AddStringToObject(t, "comm", g->tasks[i].comm);
			mp_json_add_u64(t, "bytes", g->tasks[i].charged_pages * (uint64_t)page_size);
			cJSON_AddItemToArray(bt, t);
		}
		mp_json_add_u64(o, "gross_bytes", total * (uint64_t)page_size);
		mp_json_add_u64(o, "all_contexts_gross_bytes",
				g->totals.charged_pages * (uint64_t)page_size);
		cJSON_AddItemToObject(o, "by_task", bt);
	} else {
		cJSON_AddNullToObject(o, "source");
	}

	/* page allocations by order */
	o = cJSON_AddObjectToObject(a, "page_alloc");
	const char *kind[2] = { "user_pages_by_order", "kernel_pages_by_order" };
	for (int u = 0; u < 2; u++) {
		cJSON *ord;

		if (!hooks[MP_CONCERN_ALLOC].hook[0]) { /* not counted, not zero */
			cJSON_AddNullToObject(o, kind[u]);
			continue;
		}
		ord = cJSON_AddArrayToObject(o, kind[u]);
		for (int i = 0; i <= MP_MAX_ORDER; i++)
			cJSON_AddItemToArray(ord, mp_json_u64(g->totals.alloc_pages_by_order[u][i]));
	}

	/* kernel paths, grouped by the class of their stack (drivers included) */
	arr = cJSON_AddArrayToObject(a, "kernel_paths");
	for (size_t i = 0; i < ps->nstacks; i++) {
		bool seen = false;
		int64_t net = 0;
		uint64_t alloc = 0;

		for (size_t j = 0; j < i; j++)
			seen |= strcmp(views[j].cls, views[i].cls) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < ps->nstacks; j++) {
			if (strcmp(views[j].cls, views[i].cls) == 0) {
				net += views[j].row->pages;
				alloc += views[j].row->alloc_pages;
			}
		}
		if (!alloc)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", views[i].cls);
		mp_json_add_s64(o, "bytes", net * page_size);
		mp_json_add_u64(o, "alloc_bytes", alloc * (uint64_t)page_size);
		cJSON_AddItemToObject(o, "top_stacks",
				      top_stacks(in, views, ps->nstacks, views[i].cls, page_size));
		cJSON_AddItemToArray(arr, o);
	}

	/* reconciliation: the categories against the cgroup's own growth */
	o = cJSON_AddObjectToObject(a, "reconciliation");
	int64_t attributed = mp_attributed_bytes(cat, have_kernel);
	mp_json_add_s64(o, "measured_growth_bytes", in->measured_growth_bytes);
	mp_json_add_s64(o, "attributed_bytes", attributed);
	mp_json_add_s64(o, "unattributed_bytes", in->measured_growth_bytes - attributed);
	cJSON_AddStringToObject(o, "attributed_as", have_kernel ? "anon + file + kernel + sock" :
				"anon + file + sock + the itemised kernel categories");
	cJSON_AddStringToObject(o, "span", in->span ? in->span : "");

	/*
	 * Kernel pages allocated in the target's task context without
	 * __GFP_ACCOUNT: the host pays for them, not the cgroup. Slab, percpu and
	 * kernel stacks are left out: they are charged per object or per stack,
	 * not through the page allocation's flags.
	 */
	arr = cJSON_AddArrayToObject(a, "not_charged");
	for (size_t i = 0; i < ps->nstacks; i++) {
		const char *cls = views[i].cls;
		bool seen = false;
		uint64_t unacc = 0;

		if (!strcmp(cls, "slab") || !strcmp(cls, "percpu") || !strcmp(cls, "kernel_stack"))
			continue;
		for (size_t j = 0; j < i; j++)
			seen |= strcmp(views[j].cls, cls) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < ps->nstacks; j++)
			if (strcmp(views[j].cls, cls) == 0)
				unacc += views[j].row->unaccounted_pages;
		if (!unacc)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", cls);
		mp_json_add_u64(o, "alloc_bytes", unacc * (uint64_t)page_size);
		cJSON_AddItemToArray(arr, o);
	}

	o = cJSON_AddObjectToObject(a, "events");
	mp_json_add_u64(o, "memcg_stat_updates", g->totals.memcg_events);
	mp_json_add_u64(o, "tracked_kernel_pages_freed", g->totals.kernel_pages_freed);

	/* losses: map overflows, and runs skipped by the kernel's recursion
	 * guard (an interrupt's event while the same program ran on that CPU) */
	o = cJSON_AddObjectToObject(a, "events_lost");
	uint64_t lost_total = 0;
	for (int l = 0; l < MP_NR_LOST; l++) {
		mp_json_add_u64(o, mp_lost_names[l], g->totals.lost[l]);
		lost_total += g->totals.lost[l];
	}
	cJSON *by_prog = cJSON_CreateObject();
	uint64_t rec = mp_attr_recursion_misses(in->attr, by_prog);
	mp_json_add_u64(o, "recursion_misses", rec);
	cJSON_AddItemToObject(o, "recursion_misses_by_program", by_prog);
	mp_json_add_u64(o, "total", lost_total + rec);

	free(views);
	return a;
}

