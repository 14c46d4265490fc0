// SPDX-License-Identifier: GPL-2.0
/*
 * The attribution section, built from plain data: the hook plan, the
 * categories' verdicts, the stacks' frames and the snapshots (attribution.h).
 * Nothing here reads a session, a map or the system, so that unit tests can
 * build it from hand-made snapshots.
 */
#include "attribution.h"
#include "json.h"
#include "ksyms.h"
#include "util.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The parts of kernel (MEMCG_KMEM) that memory.stat itemises. */
static bool is_kernel_part(int k)
{
	return mp_cats[k].part == MP_PART_KERNEL;
}

int64_t mp_attributed_bytes(const int64_t c[MP_NR_CATS], bool have_kernel_total)
{
	/* The usage's parts (bpf/categories.h): anon, file (shmem inside),
	 * sock and kernel (MEMCG_KMEM); without a kernel total, kmem's
	 * itemised parts stand in for it. */
	int64_t sum = 0;

	for (int k = 0; k < MP_NR_CATS; k++)
		if (mp_cats[k].part == MP_PART_USAGE ? have_kernel_total || k != MP_CAT_KERNEL
						     : !have_kernel_total && is_kernel_part(k))
			sum += c[k];
	return sum;
}

/* One attribution_missing entry: ids for scripts, the message for people. */
static void add_missing(cJSON *arr, const char *concern, const char *category,
			const char *reason, const char *message)
{
	cJSON *o = cJSON_CreateObject();

	if (concern)
		cJSON_AddStringToObject(o, "concern", concern);
	else
		cJSON_AddNullToObject(o, "concern");
	if (category)
		cJSON_AddStringToObject(o, "category", category);
	else
		cJSON_AddNullToObject(o, "category");
	cJSON_AddStringToObject(o, "reason", reason);
	cJSON_AddStringToObject(o, "message", message);
	cJSON_AddItemToArray(arr, o);
}

cJSON *mp_attribution_no_bpf(const char *why)
{
	cJSON *a = cJSON_CreateObject(), *miss = cJSON_AddArrayToObject(a, "attribution_missing");

	add_missing(miss, NULL, NULL, "no_bpf", why && why[0] ? why : "BPF unavailable");
	return a;
}

struct stack_view {
	const struct mp_stack_row *row;      /* &sum, once the views are built */
	struct mp_stack_row sum;             /* the rows of one process whose
					      * trimmed frames are the same */
	const struct mp_attr_frames *frames; /* NULL: unknown */
	int nkey;                            /* frames shown; -1: no frames, merged
					      * with none */
	uint64_t shown;                      /* bit i: frames->ips[i] is shown */
	char cls[64];
};

/* What the section's parts share while it is built. */
struct build {
	const struct mp_attr_input *in;
	const struct mp_attr_snap *g;  /* growth */
	/* kernel paths span their own snapshot: uncharged memory does not
	 * move the usage, so the usage's peak is no time to stop at */
	const struct mp_attr_snap *ps;
	struct stack_view *views;      /* ps's stacks, largest net first */
	size_t nviews;                 /* ps's stacks, less those merged */
	int64_t cat[MP_NR_CATS];       /* growth per category */
	int64_t ret[MP_NR_CATS];       /* retained per category (0 without retained) */
	bool avail[MP_NR_CATS];        /* kept by the kernel and, if polled, in memory.stat */
	/* how far cat[k] can be from the kernel's own count (byte items the
	 * hook passes rounded: each update counted as its pages is off by less
	 * than a page); -1: not known (the counter read was not the item's) */
	int64_t bound[MP_NR_CATS];
	int64_t ret_bound[MP_NR_CATS]; /* the same for ret */
	bool stat_instead[MP_NR_CATS]; /* that, and memory.stat has it: taken there */
};

static void cat_totals(const struct mp_attr_snap *s, int64_t out[MP_NR_CATS])
{
	memset(out, 0, sizeof(int64_t) * MP_NR_CATS);
	for (size_t i = 0; s && i < s->ntasks; i++)
		for (int k = 0; k < MP_NR_CATS; k++)
			out[k] += s->tasks[i].charge_bytes[k];
}

/* A polled category's figure: the snapshot's memory.stat difference, 0
 * where the snapshot has no such key. */
static int64_t stat_bytes(const struct mp_attr_snap *s, int k)
{
	return s && s->have_stat && s->stat.have[k] ? (int64_t)s->stat.bytes[k] : 0;
}

/*
 * Did the counter the BPF side read for a byte item agree with the
 * tracepoint, update by update? A few disagree where runs were skipped (an
 * interrupt's update inside another: the counter moved by both); an index
 * that is not the item's disagrees nearly always.
 */
bool mp_bytes_read_agree(uint64_t exact, uint64_t mismatched)
{
	return mismatched <= 16 + exact / 64;
}

/* Each category's bound (struct build); a byte item whose counter did not
 * agree is taken from memory.stat where the cgroup has it. */
static void fill_bounds(struct build *b)
{
	const struct mp_totals *t = &b->g->totals;
	const struct mp_attr_snap *r = b->in->retained;

	for (int k = 0; k < MP_NR_CATS; k++) {
		/* memory.stat's figure is the kernel's own */
		bool polled = b->in->cats[k].polled;

		b->bound[k] = polled ? 0 : (int64_t)t->rounded_updates[k] * b->in->page_size;
		b->ret_bound[k] = polled || !r ? 0 :
				  (int64_t)r->totals.rounded_updates[k] * b->in->page_size;
		if (!b->in->cats[k].bytes_read || polled ||
		    mp_bytes_read_agree(t->exact_updates[k], t->mismatched_updates[k]))
			continue;
		b->stat_instead[k] = b->g->have_stat && b->g->stat.have[k];
		b->bound[k] = b->ret_bound[k] = b->stat_instead[k] ? 0 : -1;
	}
}

/* Is category k's total in snapshot s memory.stat's: polled, and not
 * carried by /proc's rows where memory.stat has no such key (v1's
 * pagetables, whose only figure is the processes' VmPTE)? */
static bool from_stat(const struct mp_attr_cat_plan *cp, const struct mp_attr_snap *s, int k)
{
	return cp->polled && !(cp->rows && !(s && s->have_stat && s->stat.have[k]));
}

/* Per category, from the hooks' per-task counts, or, where no hook sees
 * it, the cgroup's own counters (split by process only by /proc's rows). */
static void fill_totals(struct build *b)
{
	cat_totals(b->g, b->cat);
	cat_totals(b->in->retained, b->ret);
	fill_bounds(b);
	for (int k = 0; k < MP_NR_CATS; k++) {
		if (b->stat_instead[k] || from_stat(&b->in->cats[k], b->g, k))
			b->cat[k] = stat_bytes(b->g, k);
		if (b->stat_instead[k] || from_stat(&b->in->cats[k], b->in->retained, k))
			b->ret[k] = stat_bytes(b->in->retained, k);
	}
}

/* The kernel stack class that explains a memory.stat category. */
static const char *class_of_cat(const char *cat)
{
	if (strncmp(cat, "slab", 4) == 0)
		return "slab";
	return cat;
}

static int cmp_stack_desc(const void *a, const void *b)
{
	const struct stack_view *x = a, *y = b;

	return x->sum.pages < y->sum.pages ? 1 : x->sum.pages > y->sum.pages ? -1 : 0;
}

static int cmp_frames_id(const void *a, const void *b)
{
	const struct mp_attr_frames *x = *(const struct mp_attr_frames *const *)a;
	const struct mp_attr_frames *y = *(const struct mp_attr_frames *const *)b;

	return x->stackid < y->stackid ? -1 : x->stackid > y->stackid;
}

static const struct mp_attr_frames *find_frames(const struct mp_attr_frames *const *idx,
						size_t n, uint32_t stackid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx[mid]->stackid == stackid)
			return idx[mid];
		if (idx[mid]->stackid < stackid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Order by process, then trimmed frames; the stacks without frames last. */
static int cmp_stack_key(const void *a, const void *b)
{
	const struct stack_view *x = a, *y = b;

	if (x->sum.tgid != y->sum.tgid)
		return x->sum.tgid < y->sum.tgid ? -1 : 1;
	if ((x->nkey < 0) != (y->nkey < 0))
		return x->nkey < 0 ? 1 : -1;
	if (x->nkey != y->nkey)
		return x->nkey < y->nkey ? -1 : 1;
	for (int i = 0, j = 0, k = 0; k < x->nkey; i++, j++, k++) {
		while (!(x->shown >> i & 1))
			i++;
		while (!(y->shown >> j & 1))
			j++;
		if (x->frames->ips[i] != y->frames->ips[j])
			return x->frames->ips[i] < y->frames->ips[j] ? -1 : 1;
	}
	return 0;
}

/* v's frames as they are shown (frames_json): the tracing frames dropped */
static void view_key(const struct mp_ksyms *ks, struct stack_view *v)
{
	const struct mp_attr_frames *fr = v->frames;
	int n = fr ? (fr->n < MP_STACK_DEPTH ? fr->n : MP_STACK_DEPTH) : 0;

	_Static_assert(MP_STACK_DEPTH <= 64, "shown: one bit a frame");
	v->nkey = fr && fr->n > 0 ? 0 : -1;
	for (int i = 0; i < n; i++) {
		if (mp_ksym_is_tracing(mp_ksyms_find(ks, fr->ips[i])))
			continue;
		v->shown |= 1ULL << i;
		v->nkey++;
	}
}

/*
 * One row per process and frames as shown: a stack is keyed in the kernel
 * with its tracing frames (a __traceiter_ frame on one call and not on
 * another), which the document trims, so two keys can be one path; their
 * counts are summed. Returns the views left.
 */
static size_t merge_views(struct stack_view *v, size_t n)
{
	size_t out = 0;

	qsort(v, n, sizeof(*v), cmp_stack_key);
	for (size_t i = 0; i < n; i++) {
		struct stack_view *o = out ? &v[out - 1] : NULL;

		if (o && o->nkey >= 0 && cmp_stack_key(o, &v[i]) == 0) {
			o->sum.pages += v[i].sum.pages;
			o->sum.alloc_pages += v[i].sum.alloc_pages;
			o->sum.unaccounted_pages += v[i].sum.unaccounted_pages;
			continue;
		}
		if (out != i)
			v[out] = v[i];
		out++;
	}
	return out;
}

/* ps's stacks with their frames and class, largest net bytes first. */
static int build_views(struct build *b)
{
	const struct mp_attr_input *in = b->in;
	const struct mp_attr_frames *fr;
	const struct mp_attr_frames **idx = calloc(in->nframes + 1, sizeof(*idx));

	b->views = calloc(b->ps->nstacks + 1, sizeof(*b->views));
	if (!idx || !b->views) {
		free(idx);
		return -1;
	}
	/* an index sorted by id, so the input may come in any order */
	for (size_t i = 0; i < in->nframes; i++)
		idx[i] = &in->frames[i];
	qsort(idx, in->nframes, sizeof(*idx), cmp_frames_id);
	for (size_t i = 0; i < b->ps->nstacks; i++) {
		struct stack_view *v = &b->views[i];

		v->sum = b->ps->stacks[i];
		v->frames = fr = find_frames(idx, in->nframes, v->sum.stackid);
		view_key(in->ksyms, v);
		if (fr && fr->n > 0 && in->ksyms)
			mp_classify_stack(in->ksyms, fr->ips,
					  fr->n < MP_STACK_DEPTH ? fr->n : MP_STACK_DEPTH,
					  v->cls, sizeof(v->cls));
		else
			snprintf(v->cls, sizeof(v->cls), "other");
	}
	free(idx);
	b->nviews = merge_views(b->views, b->ps->nstacks);
	qsort(b->views, b->nviews, sizeof(*b->views), cmp_stack_desc);
	for (size_t i = 0; i < b->nviews; i++)
		b->views[i].row = &b->views[i].sum;
	return 0;
}

static const char *comm_of(const struct mp_attr_snap *s, uint32_t tgid)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return s->tasks[i].comm;
	return "";
}

/* Its host pid, where memprobe's pid namespace gives it another; 0. */
static uint32_t host_of(const struct mp_attr_snap *s, uint32_t tgid)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return s->tasks[i].host_tgid;
	return 0;
}

static cJSON *frames_json(const struct mp_ksyms *ks, const struct mp_attr_frames *fr)
{
	cJSON *arr = cJSON_CreateArray();
	int n = fr ? (fr->n < MP_STACK_DEPTH ? fr->n : MP_STACK_DEPTH) : 0;

	for (int i = 0; i < n; i++) {
		uint64_t ip = fr->ips[i];
		const struct mp_ksym *s = mp_ksyms_find(ks, ip);
		char buf[320];

		if (mp_ksym_is_tracing(s))
			continue;
		if (s && s->module)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64 " [%s]", s->name, ip - s->addr,
				 s->module);
		else if (s)
			snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->name, ip - s->addr);
		else
			snprintf(buf, sizeof(buf), "0x%" PRIx64, ip);
		cJSON_AddItemToArray(arr, cJSON_CreateString(buf));
	}
	return arr;
}

static cJSON *stack_json(const struct build *b, const struct stack_view *v)
{
	cJSON *o = cJSON_CreateObject();
	long ps = b->in->page_size;

	mp_json_add_s64(o, "bytes", v->row->pages * ps);
	mp_json_add_u64(o, "alloc_bytes", v->row->alloc_pages * (uint64_t)ps);
	mp_json_add_pid(o, v->row->tgid, host_of(b->ps, v->row->tgid));
	cJSON_AddStringToObject(o, "comm", comm_of(b->ps, v->row->tgid));
	cJSON_AddItemToObject(o, "frames", frames_json(b->in->ksyms, v->frames));
	return o;
}

/* Top stacks of one class, largest net bytes first, into a new array. */
static cJSON *top_stacks(const struct build *b, const char *cls)
{
	cJSON *arr = cJSON_CreateArray();
	int kept = 0;

	for (size_t i = 0; i < b->nviews && kept < b->in->top; i++) {
		if (strcmp(b->views[i].cls, cls) != 0 || b->views[i].row->alloc_pages == 0)
			continue;
		cJSON_AddItemToArray(arr, stack_json(b, &b->views[i]));
		kept++;
	}
	return arr;
}

struct task_share {
	uint32_t tgid;
	const char *comm;
	int64_t bytes;
	uint8_t source;  /* enum mp_row_source */
	bool gone;
	uint32_t host_tgid;
};

static const char *row_source_name(uint8_t source)
{
	return source == MP_ROW_PROC ? "proc" : "bpf";
}

static int cmp_share_desc(const void *a, const void *b)
{
	const struct task_share *x = a, *y = b;
	int64_t ax = x->bytes < 0 ? -x->bytes : x->bytes, ay = y->bytes < 0 ? -y->bytes : y->bytes;

	return ax < ay ? 1 : ax > ay ? -1 : 0;
}

static bool moved_out(const struct mp_attr_input *in, uint32_t tgid)
{
	for (size_t i = 0; tgid && i < in->nmoved; i++)
		if (in->moved_out[i] == tgid)
			return true;
	return false;
}

static int cmp_tgid(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Has the process exited since the growth's snapshot (in->exited)? */
static bool exited(const struct mp_attr_input *in, uint32_t tgid)
{
	return in->nexited && bsearch(&tgid, in->exited, in->nexited, sizeof(tgid), cmp_tgid);
}

/* The processes counted (a row in the retained snapshot, which spans the
 * whole session: every process ever seen; else the growth's), and how
 * many of them have exited: their rows are kept (drained from the maps,
 * or read before they went), their shares marked exited. */
static void add_process_rows(const struct build *b, cJSON *a)
{
	const struct mp_attr_snap *s = b->in->retained ? b->in->retained : b->g;
	size_t counted = 0, gone = 0;

	for (size_t i = 0; i < s->ntasks; i++) {
		const struct mp_task_row *r = &s->tasks[i];

		if (!r->tgid)
			continue;
		counted++;
		gone += r->gone || exited(b->in, r->tgid);
	}
	cJSON_AddNumberToObject(a, "processes_counted", (double)counted);
	cJSON_AddNumberToObject(a, "processes_exited", (double)gone);
}

/* rest: the "(rest)" entry, whose pid is null (tgid 0 is a real row's);
 * moved: the process lives outside the target now, its charges left in it;
 * the source of the figures, and exited for a row of a process gone */
static cJSON *share_json(const struct task_share *sh, bool rest, bool moved)
{
	cJSON *o = cJSON_CreateObject();

	if (rest)
		cJSON_AddNullToObject(o, "pid");
	else
		mp_json_add_pid(o, sh->tgid, sh->host_tgid);
	cJSON_AddStringToObject(o, "comm", sh->comm);
	mp_json_add_s64(o, "bytes", sh->bytes);
	cJSON_AddStringToObject(o, "source", row_source_name(sh->source));
	if (moved)
		cJSON_AddBoolToObject(o, "moved_out", true);
	if (sh->gone && !rest)
		cJSON_AddBoolToObject(o, "exited", true);
	return o;
}

/* The top tasks of category cat, largest share (either sign) first, then
 * one "(rest)" entry (pid null) summing the others. */
static cJSON *task_shares(const struct build *b, int cat)
{
	const struct mp_attr_snap *s = b->g;
	struct task_share *sh = calloc(s->ntasks + 1, sizeof(*sh));
	cJSON *arr = cJSON_CreateArray();
	size_t n = 0;
	int64_t rest = 0;

	if (!sh)
		return arr;
	uint8_t source = MP_ROW_BPF;

	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].charge_bytes[cat]) {
			sh[n++] = (struct task_share){ s->tasks[i].tgid, s->tasks[i].comm,
						       s->tasks[i].charge_bytes[cat],
						       s->tasks[i].source, s->tasks[i].gone,
						       s->tasks[i].host_tgid };
			source = s->tasks[i].source; /* one source a session */
		}
	qsort(sh, n, sizeof(*sh), cmp_share_desc);
	for (size_t i = 0; i < n; i++) {
		if ((int)i >= b->in->top) {
			rest += sh[i].bytes;
		} else {
			sh[i].gone |= exited(b->in, sh[i].tgid);
			cJSON_AddItemToArray(arr, share_json(&sh[i], false,
							     moved_out(b->in, sh[i].tgid)));
		}
	}
	if (rest) {
		struct task_share r = { 0, "(rest)", rest, source, false, 0 };

		cJSON_AddItemToArray(arr, share_json(&r, true, false));
	}
	free(sh);
	return arr;
}

cJSON *mp_hook_json(const struct mp_hook *h)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "concern", h->concern);
	cJSON_AddStringToObject(o, "name", h->name);
	mp_json_add_str_or_null(o, "kind", h->kind);
	mp_json_add_str_or_null(o, "target", h->target);
	mp_json_add_str_or_null(o, "hook", h->hook);
	cJSON_AddBoolToObject(o, "polled", h->polled);
	if (h->missing_reason)
		cJSON_AddStringToObject(o, "missing_reason", h->missing_reason);
	if (h->missing[0])
		cJSON_AddStringToObject(o, "missing", h->missing);
	return o;
}

/* The categories a memcg hook reaches but cannot count right (clone,
 * rounded): one entry each, in the memcg hook's place. */
static void add_memcg_partial(const struct build *b, const struct mp_hook *h, cJSON *missing)
{
	for (int k = 0; k < MP_NR_CATS; k++) {
		const char *why = b->in->cats[k].polled_reason, *what = NULL;
		char *buf;

		if (!why && b->bound[k] < 0)
			why = "rounded", what = "the per-CPU counter read for its exact bytes did not "
			      "agree with the memcg tracepoints' pages (rounded per update): the "
			      "figure is an estimate whose error is not known";
		else if (!why && b->stat_instead[k])
			why = "rounded", what = "the per-CPU counter read for its exact bytes did not "
			      "agree with the memcg tracepoints' pages: total from memory.stat, "
			      "per-process shares approximate";
		else if (!why)
			continue;
		else if (!strcmp(why, "clone"))
			what = "from memory.stat, no per-process split (__mod_memcg_state's body "
			       "is the clone __mod_memcg_state.part.0 here, which no hook reaches)";
		else if (!strcmp(why, "rounded"))
			what = "totals from memory.stat, per-process shares approximate (the memcg "
			       "tracepoints pass these byte counts rounded to pages)";
		else
			continue; /* "polled": the hook's own entry says it */
		if (asprintf(&buf, "%s: %s: %s", h->name, mp_cat_names[k], what) < 0)
			continue;
		add_missing(missing, h->concern, mp_cat_names[k], why, buf);
		free(buf);
	}
}

/* hooks, one per concern; attribution_missing's entries from the hooks */
static void add_hooks(const struct build *b, cJSON *a, cJSON *missing)
{
	const struct mp_hook *hooks = b->in->hooks;
	cJSON *arr = cJSON_AddArrayToObject(a, "hooks");

	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		const struct mp_hook *h = &hooks[c];

		cJSON_AddItemToArray(arr, mp_hook_json(h));
		if (h->missing_reason && strcmp(h->missing_reason, "not_needed")) {
			/* as long as it is: missing holds up to 319 characters */
			char *buf;

			if (asprintf(&buf, "%s: %s", h->name, h->missing) >= 0) {
				add_missing(missing, h->concern, NULL, h->missing_reason, buf);
				free(buf);
			}
		}
		if (c == MP_CONCERN_MEMCG)
			add_memcg_partial(b, h, missing);
	}
}

/*
 * A category is measured when the kernel keeps it and, where no hook sees
 * it, when the cgroup's memory.stat shows it; attribution_missing says which
 * is not and why. Sets b->avail.
 */
static void add_missing_cats(struct build *b, cJSON *missing)
{
	const struct mp_attr_snap *g = b->g;
	const char *memcg = b->in->hooks[MP_CONCERN_MEMCG].concern;

	if (!b->in->ksyms)
		add_missing(missing, NULL, NULL, "no_kallsyms",
			    "kernel paths: /proc/kallsyms unreadable, stacks left unsymbolized");
	for (int k = 0; k < MP_NR_CATS; k++) {
		const struct mp_attr_cat_plan *cp = &b->in->cats[k];
		const char *name = mp_cat_names[k];
		char buf[200];

		b->avail[k] = cp->available;
		if (cp->available && cp->polled && !cp->rows && !(g->have_stat && g->stat.have[k])) {
			b->avail[k] = false;
			snprintf(buf, sizeof(buf), "%s: no hook sees it and this cgroup's "
				 "memory.stat has no such key", name);
			add_missing(missing, memcg, name, "no_stat_key", buf);
		} else if (!cp->available) {
			snprintf(buf, sizeof(buf), "%s: this kernel keeps no per-memcg count "
				 "(no %s)", name, cp->item ? cp->item : "stat item");
			add_missing(missing, memcg, name, "no_stat_item", buf);
		}
	}
}

/*
 * How far memory.stat can lag the kernel's counters: it is flushed lazily
 * (memcg_rstat_updated(), memcg_vmstats_needs_flush()): up to
 * MEMCG_CHARGE_BATCH (64) update units wait per CPU, and a reader flushes
 * only once more than 64 per online CPU are pending; a unit is a page, or
 * a byte item's update of under two. On a 7.3 guest (v2, 2 CPUs) a cgroup
 * churning sockets read 11384 bytes of slab at the start where BPF's exact
 * count then fell by 61520: the floor was memory.stat's lag, not lost
 * events.
 */
static int64_t stat_lag_bytes(const struct build *b)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return 2 * (64 + 64) * (int64_t)(cpus > 0 ? cpus : 1) * b->in->page_size;
}

/*
 * The least growth category k can have: minus what the cgroup held of it at
 * the start (a part of kernel, where memory.stat does not itemise it, as
 * v1's does not: minus all of kernel; kernel_other is k -1), less what
 * memory.stat can lag (v1's kmem usage, a page counter, does not). False
 * when the start was not read.
 */
static bool floor_of(const struct build *b, int k, int64_t *floor)
{
	const struct mp_cg_stat *st = b->in->start_stat;
	int from;

	if (!st || k >= MP_NR_CATS)
		return false;
	if (k >= 0 && st->have[k])
		from = k;
	else if ((k < 0 || is_kernel_part(k)) && st->have[MP_CAT_KERNEL])
		from = MP_CAT_KERNEL;
	else
		return false;
	*floor = -(int64_t)st->bytes[from];
	if (from != MP_CAT_KERNEL || !st->kernel_counter)
		*floor -= stat_lag_bytes(b);
	return true;
}

/* Is a count, even with its bound (-1: not known, none allowed), below what
 * the kernel allows category k (kernel_other: -1)? */
static bool below_floor(const struct build *b, int k, int64_t count, int64_t bound,
			int64_t *floor)
{
	return floor_of(b, k, floor) && count + (bound > 0 ? bound : 0) < *floor;
}

/*
 * A figure that is not the kernel's count to the byte says so: estimated,
 * with its bound (null: not known). One below what the kernel allows, even
 * with its bound (a count below minus the start: events were lost), is no
 * figure: below_floor, with the floor.
 */
static void add_estimate(const struct build *b, cJSON *o, int k, int64_t growth, int64_t bound)
{
	int64_t floor = 0;
	bool below = below_floor(b, k, growth, bound, &floor);

	if (!bound && !below)
		return;
	cJSON_AddBoolToObject(o, "estimated", true);
	if (bound >= 0)
		mp_json_add_s64(o, "bound_bytes", bound);
	else
		cJSON_AddNullToObject(o, "bound_bytes");
	if (!below)
		return;
	cJSON_AddBoolToObject(o, "below_floor", true);
	mp_json_add_s64(o, "floor_bytes", floor);
}

/* retained_bytes, and retained_below_floor where that count, even with its
 * bound, is below what the kernel allows */
static void add_retained(const struct build *b, cJSON *o, int k, int64_t ret, int64_t bound)
{
	int64_t floor = 0;

	mp_json_add_s64(o, "retained_bytes", ret);
	if (below_floor(b, k, ret, bound, &floor))
		cJSON_AddBoolToObject(o, "retained_below_floor", true);
}

/* What /proc's rows are, and what they cannot tell. */
#define PROC_ROWS_WORDS								\
	"per process: /proc's counters at each snapshot (RssAnon, RssFile, "	\
	"RssShmem, VmPTE, threads' kernel stacks), approximate: a page several "	\
	"processes map counts in each, a file page a process maps counts though "	\
	"it was charged before or elsewhere (RssFile: shared libraries, files "	\
	"read earlier), page cache no process maps is in none, "		\
	"and a process that lived between two snapshots is not seen; slab, "	\
	"percpu, sock and vmalloc: the cgroup's totals only"

/* Without BPF: why, and what would bring it; with /proc's rows (no BPF,
 * or --memcg-from counters), what they cannot tell. */
static void add_missing_no_bpf(const struct build *b, cJSON *missing)
{
	bool rows = false;

	if (b->in->no_bpf_reason)
		add_missing(missing, NULL, NULL, "no_bpf",
			    b->in->no_bpf_line && b->in->no_bpf_line[0] ? b->in->no_bpf_line :
			    "no BPF program runs");
	for (int k = 0; k < MP_NR_CATS; k++)
		rows |= b->in->cats[k].rows;
	if (rows)
		add_missing(missing, b->in->hooks[MP_CONCERN_MEMCG].concern, NULL, "proc",
			    b->in->no_bpf_reason ? PROC_ROWS_WORDS :
			    PROC_ROWS_WORDS "; anon unmapped and still charged: not counted; "
			    "--memcg-from tracepoint splits them all (a program run per memcg "
			    "stat update)");
}

static uint64_t proc_total(const struct mp_proc_row *p)
{
	return p->rss_anon_bytes + p->rss_file_bytes + p->rss_shmem_bytes + p->pte_bytes +
	       p->kernel_stack_bytes;
}

static int cmp_proc_desc(const void *x, const void *y)
{
	uint64_t a = proc_total(*(const struct mp_proc_row *const *)x);
	uint64_t b = proc_total(*(const struct mp_proc_row *const *)y);

	return a < b ? 1 : a > b ? -1 : 0;
}

static cJSON *proc_json(const struct mp_proc_row *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddNumberToObject(o, "pid", p->pid);
	cJSON_AddStringToObject(o, "comm", p->comm);
	cJSON_AddStringToObject(o, "cmdline", p->cmdline);
	cJSON_AddStringToObject(o, "source", p->source == MP_PROC_SRC_PROC ? "proc" : "other");
	cJSON_AddStringToObject(o, "state", p->exited ? "exited" : p->gone ? "left" : "running");
	mp_json_add_u64(o, "rss_anon_bytes", p->rss_anon_bytes);
	mp_json_add_u64(o, "rss_file_bytes", p->rss_file_bytes);
	mp_json_add_u64(o, "rss_shmem_bytes", p->rss_shmem_bytes);
	mp_json_add_u64(o, "pagetables_bytes", p->pte_bytes);
	mp_json_add_u64(o, "kernel_stack_bytes", p->kernel_stack_bytes);
	cJSON_AddNumberToObject(o, "threads", p->threads);
	mp_json_add_u64(o, "vm_lck_bytes", p->lck_bytes);
	mp_json_add_u64(o, "vm_pin_bytes", p->pin_bytes);
	if (p->have_anon_huge)
		mp_json_add_u64(o, "anon_huge_bytes", p->anon_huge_bytes);
	else
		cJSON_AddNullToObject(o, "anon_huge_bytes");
	return o;
}

/* The per-process counters at the growth's end (/proc's rows): the top
 * --top processes by what they hold, the gone ones with their last
 * figures. Absent where the rows are BPF's. */
static void add_processes(const struct build *b, cJSON *a)
{
	const struct mp_attr_snap *g = b->g;
	const struct mp_proc_row **v;
	size_t exited = 0;
	cJSON *o, *arr;

	if (!g->nprocs || !(v = calloc(g->nprocs, sizeof(*v))))
		return;
	for (size_t i = 0; i < g->nprocs; i++) {
		v[i] = &g->procs[i];
		exited += g->procs[i].exited;
	}
	qsort(v, g->nprocs, sizeof(*v), cmp_proc_desc);
	o = cJSON_AddObjectToObject(a, "processes");
	cJSON_AddStringToObject(o, "source", "proc");
	mp_json_add_u64(o, "stack_size_bytes", g->stack_bytes);
	cJSON_AddStringToObject(o, "stack_size_source", g->stack_source ? g->stack_source : "");
	cJSON_AddNumberToObject(o, "count", (double)g->nprocs);
	cJSON_AddNumberToObject(o, "exited", (double)exited);
	arr = cJSON_AddArrayToObject(o, "top");
	for (size_t i = 0; i < g->nprocs && (int)i < b->in->top; i++)
		cJSON_AddItemToArray(arr, proc_json(v[i]));
	free(v);
}

/* categories, in memory.stat's terms, then kernel_other: kmem that no
 * itemised category explains */
static void add_categories(const struct build *b, cJSON *a)
{
	const struct mp_attr_input *in = b->in;
	cJSON *arr = cJSON_AddArrayToObject(a, "categories"), *o;
	int64_t kernel_known = 0, ret_known = 0, other_bound = 0, other_ret_bound = 0;
	bool have_kernel = b->avail[MP_CAT_KERNEL];

	for (int k = 0; k < MP_NR_CATS; k++) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", mp_cat_names[k]);
		cJSON_AddBoolToObject(o, "available", b->avail[k]);
		if ((in->cats[k].polled || b->stat_instead[k]) && b->avail[k])
			cJSON_AddStringToObject(o, "source", b->stat_instead[k] ||
						from_stat(&in->cats[k], b->g, k) ? "memory.stat" : "proc");
		mp_json_add_s64(o, "growth_bytes", b->cat[k]);
		if (b->avail[k])
			add_estimate(b, o, k, b->cat[k], b->bound[k]);
		if (in->retained)
			add_retained(b, o, b->avail[k] ? k : MP_NR_CATS, b->ret[k], b->ret_bound[k]);
		cJSON_AddItemToObject(o, "tasks", task_shares(b, k));
		if (k != MP_CAT_ANON && k != MP_CAT_FILE && k != MP_CAT_KERNEL &&
		    mp_cats[k].unit != MP_UNIT_HPAGES)
			cJSON_AddItemToObject(o, "top_stacks",
					      top_stacks(b, class_of_cat(mp_cat_names[k])));
		cJSON_AddItemToArray(arr, o);
		if (is_kernel_part(k)) {
			kernel_known += b->cat[k];
			ret_known += b->ret[k];
			/* the remainder carries its parts' errors */
			other_bound = other_bound < 0 || b->bound[k] < 0 ? -1 :
				      other_bound + b->bound[k];
			other_ret_bound = other_ret_bound < 0 || b->ret_bound[k] < 0 ? -1 :
					  other_ret_bound + b->ret_bound[k];
		}
	}
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", "kernel_other");
	cJSON_AddBoolToObject(o, "available", have_kernel);
	mp_json_add_s64(o, "growth_bytes", have_kernel ? b->cat[MP_CAT_KERNEL] - kernel_known : 0);
	if (have_kernel)
		add_estimate(b, o, -1, b->cat[MP_CAT_KERNEL] - kernel_known, other_bound);
	if (in->retained)
		add_retained(b, o, have_kernel ? -1 : MP_NR_CATS,
			     have_kernel ? b->ret[MP_CAT_KERNEL] - ret_known : 0, other_ret_bound);
	/* v1's kmem (kernel) counts it; no category does */
	if (have_kernel && b->g->have_objcg_reserve)
		mp_json_add_s64(o, "objcg_reserve_bytes", b->g->objcg_reserve_bytes);
	cJSON_AddItemToObject(o, "tasks", cJSON_CreateArray());
	cJSON_AddItemToObject(o, "top_stacks", top_stacks(b, "other"));
	cJSON_AddItemToArray(arr, o);
}

static void add_page_faults(const struct build *b, cJSON *a)
{
	const struct mp_attr_input *in = b->in;
	const struct mp_attr_snap *g = b->g;
	bool polled = in->hooks[MP_CONCERN_FAULTS].polled;
	/* the kernel's counters: the total is the memcg's, the rows the tasks' */
	bool counters = in->hooks[MP_CONCERN_FAULTS].counters && !polled;
	cJSON *o = cJSON_AddObjectToObject(a, "page_faults"), *by = cJSON_CreateArray();
	uint64_t faults = 0;

	for (size_t i = 0; i < g->ntasks; i++) {
		cJSON *t;

		faults += g->tasks[i].faults;
		if (!g->tasks[i].faults)
			continue;
		t = cJSON_CreateObject();
		mp_json_add_pid(t, g->tasks[i].tgid, g->tasks[i].host_tgid);
		cJSON_AddStringToObject(t, "comm", g->tasks[i].comm);
		mp_json_add_u64(t, "faults", g->tasks[i].faults);
		cJSON_AddItemToArray(by, t);
	}
	if (polled || (counters && g->have_stat && g->stat.have_pgfault)) {
		uint64_t by_task = faults;

		faults = g->have_stat && g->stat.have_pgfault ? g->stat.pgfault : 0;
		/* memory.stat's pgfault is flushed lazily: read once the
		 * categories agree with the usage (1%), it was still 793 faults
		 * behind its probe's own count of 121 860. Its tasks' exact
		 * counters are a floor. */
		if (counters && by_task > faults)
			faults = by_task;
		cJSON_AddStringToObject(o, "source", g->have_stat && g->stat.have_pgfault ?
					"memory.stat pgfault" : "none");
	}
	if (counters)
		cJSON_AddStringToObject(o, "by_task_source", "min_flt + maj_flt");
	else if (!polled && in->hooks[MP_CONCERN_FAULTS].target[0])
		cJSON_AddStringToObject(o, "by_task_source", in->hooks[MP_CONCERN_FAULTS].target);
	mp_json_add_u64(o, "total", faults);
	if (in->allocated_bytes && in->probe_pid && polled) {
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
}

/* gross charges asked of the memcg, per process (a BPF charge hook only) */
static void add_charges(const struct build *b, cJSON *a)
{
	const struct mp_hook *h = &b->in->hooks[MP_CONCERN_CHARGE];
	const struct mp_attr_snap *g = b->g;
	uint64_t ps = (uint64_t)b->in->page_size, total = 0;
	cJSON *o = cJSON_AddObjectToObject(a, "memcg_charges"), *bt;

	if (!h->hook[0] || h->polled) {
		cJSON_AddNullToObject(o, "source");
		return;
	}
	bt = cJSON_CreateArray();
	cJSON_AddStringToObject(o, "source", h->hook);
	for (size_t i = 0; i < g->ntasks; i++) {
		cJSON *t;

		total += g->tasks[i].charged_pages;
		if (!g->tasks[i].charged_pages)
			continue;
		t = cJSON_CreateObject();
		mp_json_add_pid(t, g->tasks[i].tgid, g->tasks[i].host_tgid);
		cJSON_AddStringToObject(t, "comm", g->tasks[i].comm);
		mp_json_add_u64(t, "bytes", g->tasks[i].charged_pages * ps);
		cJSON_AddItemToArray(bt, t);
	}
	mp_json_add_u64(o, "gross_bytes", total * ps);
	mp_json_add_u64(o, "all_contexts_gross_bytes", g->totals.charged_pages * ps);
	cJSON_AddItemToObject(o, "by_task", bt);
}

/* page allocations by order; null (not counted, not zero) without a hook */
static void add_page_alloc(const struct build *b, cJSON *a)
{
	static const char *const kind[2] = { "user_pages_by_order", "kernel_pages_by_order" };
	const struct mp_totals *t = &b->g->totals;
	cJSON *o = cJSON_AddObjectToObject(a, "page_alloc");

	for (int u = 0; u < 2; u++) {
		cJSON *ord;

		if (!b->in->hooks[MP_CONCERN_ALLOC].hook[0]) {
			cJSON_AddNullToObject(o, kind[u]);
			continue;
		}
		ord = cJSON_AddArrayToObject(o, kind[u]);
		for (int i = 0; i <= MP_MAX_ORDER; i++)
			cJSON_AddItemToArray(ord, mp_json_u64(t->alloc_pages_by_order[u][i]));
	}
}

/*
 * Pages copied on write (do_wp_page's copies: a page shared after a fork,
 * or a private file page written the first time), per process:
 * the pages of the sampled candidates whose stack went through it, times
 * the sample period; null source (and why) when not looked for.
 */
static void add_cow(const struct build *b, cJSON *a)
{
	const struct mp_attr_input *in = b->in;
	/* over the whole session where the input has it (record: to the end,
	 * probe: to after its free): copies made after the peak cost too */
	const struct mp_attr_snap *g = in->retained ? in->retained : b->g;
	cJSON *o = cJSON_AddObjectToObject(a, "copy_on_write"), *by;
	uint64_t ps = (uint64_t)in->page_size, total = 0;
	struct task_share *sh;
	size_t n = 0;

	if (!in->cow) {
		cJSON_AddNullToObject(o, "source");
		cJSON_AddStringToObject(o, "why", in->cow_why && in->cow_why[0] ? in->cow_why :
					"not looked for");
		return;
	}
	sh = calloc(g->ntasks + 1, sizeof(*sh));
	cJSON_AddStringToObject(o, "source", in->cow_fn && in->cow_fn[0] ? in->cow_fn :
				"do_wp_page");
	cJSON_AddNumberToObject(o, "sample_period", in->cow_period);
	cJSON_AddStringToObject(o, "span", in->retained ? "the whole session" : in->span ? in->span : "");
	mp_json_add_u64(o, "walks", g->totals.cow_walks);
	for (size_t i = 0; sh && i < g->ntasks; i++) {
		total += g->tasks[i].cow_pages;
		if (g->tasks[i].cow_pages)
			sh[n++] = (struct task_share){ g->tasks[i].tgid, g->tasks[i].comm,
						       (int64_t)(g->tasks[i].cow_pages * ps),
						       g->tasks[i].source, g->tasks[i].gone,
						       g->tasks[i].host_tgid };
	}
	mp_json_add_u64(o, "bytes", total * ps);
	by = cJSON_AddArrayToObject(o, "by_task");
	if (sh)
		qsort(sh, n, sizeof(*sh), cmp_share_desc);
	for (size_t i = 0; i < n && (int)i < in->top; i++)
		cJSON_AddItemToArray(by, share_json(&sh[i], false, moved_out(in, sh[i].tgid)));
	free(sh);
}

/* Is views[i] the first (largest) stack of its class? */
static bool first_of_class(const struct build *b, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (strcmp(b->views[j].cls, b->views[i].cls) == 0)
			return false;
	return true;
}

/* kernel paths, grouped by the class of their stack (drivers included),
 * in the order of their largest stack */
static void add_kernel_paths(const struct build *b, cJSON *a)
{
	cJSON *arr = cJSON_AddArrayToObject(a, "kernel_paths");
	uint64_t ps = (uint64_t)b->in->page_size;

	for (size_t i = 0; i < b->nviews; i++) {
		int64_t net = 0;
		uint64_t alloc = 0;
		cJSON *o;

		if (!first_of_class(b, i))
			continue;
		for (size_t j = i; j < b->nviews; j++) {
			if (strcmp(b->views[j].cls, b->views[i].cls) == 0) {
				net += b->views[j].row->pages;
				alloc += b->views[j].row->alloc_pages;
			}
		}
		if (!alloc)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", b->views[i].cls);
		mp_json_add_s64(o, "bytes", net * (int64_t)ps);
		mp_json_add_u64(o, "alloc_bytes", alloc * ps);
		cJSON_AddItemToObject(o, "top_stacks", top_stacks(b, b->views[i].cls));
		cJSON_AddItemToArray(arr, o);
	}
}

/* the categories against the cgroup's own growth */
static void add_reconciliation(const struct build *b, cJSON *a)
{
	cJSON *o = cJSON_AddObjectToObject(a, "reconciliation");
	bool have_kernel = b->avail[MP_CAT_KERNEL];
	int64_t attributed = mp_attributed_bytes(b->cat, have_kernel);

	/* anon pages unmapped and not yet freed: out of memory.stat's anon,
	 * still in the usage (a munmap's or an exit's TLB batch; a pipe's or
	 * a pin's pages) */
	int64_t unmapped = ((int64_t)b->g->totals.anon_unmapped_pages -
			    (int64_t)b->g->totals.anon_freed_pages) * b->in->page_size;

	mp_json_add_s64(o, "measured_growth_bytes", b->in->measured_growth_bytes);
	mp_json_add_s64(o, "attributed_bytes", attributed);
	if (b->in->anon_unmapped)
		mp_json_add_s64(o, "anon_unmapped_bytes", unmapped);
	else
		cJSON_AddNullToObject(o, "anon_unmapped_bytes");
	mp_json_add_s64(o, "unattributed_bytes", b->in->measured_growth_bytes - attributed -
			(b->in->anon_unmapped ? unmapped : 0));
	cJSON_AddStringToObject(o, "attributed_as", have_kernel ? "anon + file + kernel + sock" :
				"anon + file + sock + the itemised kernel categories");
	cJSON_AddStringToObject(o, "span", b->in->span ? b->in->span : "");
}

/*
 * Kernel pages allocated in the target's task context without
 * __GFP_ACCOUNT: the host pays for them, not the cgroup. Slab, percpu and
 * kernel stacks are left out: they are charged per object or per stack,
 * not through the page allocation's flags.
 */
static void add_not_charged(const struct build *b, cJSON *a)
{
	cJSON *arr = cJSON_AddArrayToObject(a, "not_charged");

	for (size_t i = 0; i < b->nviews; i++) {
		const char *cls = b->views[i].cls;
		uint64_t unacc = 0;
		cJSON *o;

		if (!strcmp(cls, "slab") || !strcmp(cls, "percpu") || !strcmp(cls, "kernel_stack"))
			continue;
		if (!first_of_class(b, i))
			continue;
		for (size_t j = i; j < b->nviews; j++)
			if (strcmp(b->views[j].cls, cls) == 0)
				unacc += b->views[j].row->unaccounted_pages;
		if (!unacc)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "path", cls);
		mp_json_add_u64(o, "alloc_bytes", unacc * (uint64_t)b->in->page_size);
		cJSON_AddItemToArray(arr, o);
	}
}

/*
 * What a missed run can have changed, in bytes: each miss no more than the
 * largest event of its kind seen (a miss is not seen, so this assumes none
 * was larger). Allocations: the largest order allocated (pages by order);
 * frees: the largest order tracked for its free (only those change the
 * kernel paths); memcg stat updates: the largest one counted. Programs
 * whose events carry no bytes (exec, exit, migrations, OOM kills) bound
 * nothing in bytes: null.
 */
static void add_miss_bound(const struct build *b, cJSON *o)
{
	const struct mp_totals *t = &b->g->totals;
	uint64_t ps = (uint64_t)b->in->page_size, total = 0, alloc_max = 0;
	cJSON *by = cJSON_AddObjectToObject(o, "recursion_miss_bound_bytes_by_program");

	for (int u = 0; u < 2; u++)
		for (int ord = 0; ord <= MP_MAX_ORDER; ord++)
			if (t->alloc_pages_by_order[u][ord] && (ps << ord) > alloc_max)
				alloc_max = ps << ord;
	for (size_t i = 0; i < b->in->nprogs; i++) {
		const char *n = b->in->progs[i].name;
		uint64_t each = strstr(n, "mm_page_alloc") ? alloc_max :
				strstr(n, "mm_page_free") ? ps << (t->max_tracked_order & 31) :
				strstr(n, "memcg") ? t->max_memcg_event_bytes : 0;

		if (!each && !strstr(n, "mm_page") && !strstr(n, "memcg")) {
			cJSON_AddNullToObject(by, n);
			continue;
		}
		mp_json_add_u64(by, n, b->in->progs[i].misses * each);
		total += b->in->progs[i].misses * each;
	}
	mp_json_add_u64(o, "recursion_miss_bound_bytes", total);
}

/* How the byte items' updates were counted, where their counters are read. */
static void add_byte_updates(const struct build *b, cJSON *o)
{
	const struct mp_totals *t = &b->g->totals;
	uint64_t n[3] = { 0 };
	bool any = false;
	cJSON *u;

	for (int k = 0; k < MP_NR_CATS; k++) {
		if (!b->in->cats[k].bytes_read)
			continue;
		any = true;
		n[0] += t->exact_updates[k];
		n[1] += t->rounded_updates[k];
		n[2] += t->mismatched_updates[k];
	}
	if (!any)
		return;
	u = cJSON_AddObjectToObject(o, "byte_item_updates");
	mp_json_add_u64(u, "exact", n[0]);
	mp_json_add_u64(u, "rounded", n[1]);
	mp_json_add_u64(u, "mismatched", n[2]);
}

/*
 * How often the kernel ran each program, and for how long, by its own
 * run-time stats (bpf_prog_info's run_cnt and run_time_ns), counted only
 * while they are on (sysctl kernel.bpf_stats_enabled, or a BPF_ENABLE_STATS
 * fd held): null when no program has a count. Every firing of the
 * tracepoint, in any cgroup: the programs filter on the target first.
 */
static void add_program_runs(const struct build *b, cJSON *o)
{
	const struct mp_attr_input *in = b->in;
	cJSON *runs, *ns;
	bool any = false;

	for (size_t i = 0; i < in->nprogs; i++)
		any |= in->progs[i].run_cnt > 0;
	if (!any) {
		cJSON_AddNullToObject(o, "program_runs");
		cJSON_AddNullToObject(o, "program_run_time_ns");
		return;
	}
	runs = cJSON_AddObjectToObject(o, "program_runs");
	ns = cJSON_AddObjectToObject(o, "program_run_time_ns");
	for (size_t i = 0; i < in->nprogs; i++) {
		mp_json_add_u64(runs, in->progs[i].name, in->progs[i].run_cnt);
		mp_json_add_u64(ns, in->progs[i].name, in->progs[i].run_time_ns);
	}
}

/* events, and the losses: map overflows, and runs skipped by the kernel's
 * recursion guard (an interrupt's event while the same program ran on
 * that CPU) */
static void add_events(const struct build *b, cJSON *a)
{
	const struct mp_attr_input *in = b->in;
	const struct mp_totals *t = &b->g->totals;
	cJSON *o = cJSON_AddObjectToObject(a, "events"), *by;
	uint64_t lost = 0;

	mp_json_add_u64(o, "memcg_stat_updates", t->memcg_events);
	mp_json_add_u64(o, "tracked_kernel_pages_freed", t->kernel_pages_freed);
	add_byte_updates(b, o);
	add_program_runs(b, o);

	o = cJSON_AddObjectToObject(a, "events_lost");
	for (int l = 0; l < MP_NR_LOST; l++) {
		uint64_t v = in->have_lost ? in->lost[l] : t->lost[l];

		mp_json_add_u64(o, mp_lost_names[l], v);
		lost += v;
	}
	mp_json_add_u64(o, "recursion_misses", in->recursion_misses);
	by = cJSON_AddObjectToObject(o, "recursion_misses_by_program");
	for (size_t i = 0; i < in->nprogs; i++)
		mp_json_add_u64(by, in->progs[i].name, in->progs[i].misses);
	mp_json_add_u64(o, "total", lost + in->recursion_misses);
	add_miss_bound(b, o);
}

cJSON *mp_report_attribution(const struct mp_attr_input *in)
{
	struct build b = {
		.in = in, .g = in->growth, .ps = in->paths ? in->paths : in->growth,
	};
	cJSON *a = cJSON_CreateObject(), *missing = cJSON_CreateArray();

	if (!a || !missing || build_views(&b)) {
		cJSON_Delete(a);
		cJSON_Delete(missing);
		free(b.views);
		return NULL;
	}
	fill_totals(&b);
	add_hooks(&b, a, missing);
	add_missing_cats(&b, missing);
	add_missing_no_bpf(&b, missing);
	cJSON_AddItemToObject(a, "attribution_missing", missing);
	add_categories(&b, a);
	add_processes(&b, a);
	add_page_faults(&b, a);
	add_charges(&b, a);
	add_page_alloc(&b, a);
	add_cow(&b, a);
	add_kernel_paths(&b, a);
	add_reconciliation(&b, a);
	add_process_rows(&b, a);
	add_not_charged(&b, a);
	add_events(&b, a);
	free(b.views);
	return a;
}
