// SPDX-License-Identifier: GPL-2.0
#include "attr.h"
#include "json.h"
#include "memprobe.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const mp_cat_names[MP_NR_CATS] = {
	[MP_CAT_ANON] = "anon",
	[MP_CAT_FILE] = "file",
	[MP_CAT_SHMEM] = "shmem",
	[MP_CAT_PAGETABLES] = "pagetables",
	[MP_CAT_SEC_PAGETABLES] = "sec_pagetables",
	[MP_CAT_KERNEL_STACK] = "kernel_stack",
	[MP_CAT_SLAB_RECLAIMABLE] = "slab_reclaimable",
	[MP_CAT_SLAB_UNRECLAIMABLE] = "slab_unreclaimable",
	[MP_CAT_PERCPU] = "percpu",
	[MP_CAT_SOCK] = "sock",
	[MP_CAT_VMALLOC] = "vmalloc",
	[MP_CAT_KERNEL] = "kernel",
};

const char *const mp_lost_names[MP_NR_LOST] = {
	[MP_LOST_TASK_MAP_FULL] = "task_map_full",
	[MP_LOST_STACK_MAP_FULL] = "stack_map_full",
	[MP_LOST_STACK_STAT_FULL] = "stack_stat_map_full",
	[MP_LOST_LIVE_PAGE_FULL] = "live_page_map_full",
};

/* One rung of a ladder: a program and what it needs from the kernel. */
struct rung {
	const char *label;   /* how the report names it */
	enum { TP, FENTRY, KPROBE } kind;
	const char *btf_name; /* tracepoint name or kernel function */
	size_t prog_off;     /* offsetof(struct memprobe_bpf, progs.X) */
};

#define PROG(x) offsetof(struct memprobe_bpf, progs.x)

/* Each concern: rungs in order of preference; a concern with two programs
 * per rung (memcg) lists them as two consecutive rungs with the same kind. */
static const struct ladder {
	const char *concern;
	struct rung rungs[4];
	int per_rung; /* programs that make one rung */
} ladders[MP_NR_CONCERNS] = {
	{ "page faults", {
		{ "tracepoint exceptions:page_fault_user", TP, "page_fault_user", PROG(tp_page_fault_user) },
		{ "fentry handle_mm_fault", FENTRY, "handle_mm_fault", PROG(fentry_handle_mm_fault) },
		{ "kprobe handle_mm_fault", KPROBE, "handle_mm_fault", PROG(kprobe_handle_mm_fault) },
	}, 1 },
	{ "page allocation", {
		{ "tracepoint kmem:mm_page_alloc", TP, "mm_page_alloc", PROG(tp_mm_page_alloc) },
	}, 1 },
	{ "page free", {
		{ "tracepoint kmem:mm_page_free", TP, "mm_page_free", PROG(tp_mm_page_free) },
	}, 1 },
	{ "cgroup migrations", {
		{ "tracepoint cgroup:cgroup_attach_task", TP, "cgroup_attach_task", PROG(tp_cgroup_attach_task) },
	}, 1 },
	{ "process names", {
		{ "tracepoint sched:sched_process_exec", TP, "sched_process_exec", PROG(tp_sched_process_exec) },
	}, 1 },
	{ "OOM kills", {
		{ "raw tracepoint oom:mark_victim", TP, "mark_victim", PROG(raw_tp_mark_victim) },
	}, 1 },
	{ "memcg stat updates", {
		{ "tracepoint memcg:mod_memcg_state", TP, "mod_memcg_state", PROG(tp_mod_memcg_state) },
		{ "tracepoint memcg:mod_memcg_lruvec_state", TP, "mod_memcg_lruvec_state", PROG(tp_mod_memcg_lruvec_state) },
		{ "fentry __mod_memcg_state", FENTRY, "__mod_memcg_state", PROG(fentry_mod_memcg_state) },
		{ "fentry __mod_memcg_lruvec_state", FENTRY, "__mod_memcg_lruvec_state", PROG(fentry_mod_memcg_lruvec_state) },
	}, 2 },
};

/* The stat item behind each category, and the enum it belongs to. */
static const struct { const char *type, *item; } cat_items[MP_NR_CATS] = {
	[MP_CAT_ANON] = { "node_stat_item", "NR_ANON_MAPPED" },
	[MP_CAT_FILE] = { "node_stat_item", "NR_FILE_PAGES" },
	[MP_CAT_SHMEM] = { "node_stat_item", "NR_SHMEM" },
	[MP_CAT_PAGETABLES] = { "node_stat_item", "NR_PAGETABLE" },
	[MP_CAT_SEC_PAGETABLES] = { "node_stat_item", "NR_SECONDARY_PAGETABLE" },
	[MP_CAT_KERNEL_STACK] = { "node_stat_item", "NR_KERNEL_STACK_KB" },
	[MP_CAT_SLAB_RECLAIMABLE] = { "node_stat_item", "NR_SLAB_RECLAIMABLE_B" },
	[MP_CAT_SLAB_UNRECLAIMABLE] = { "node_stat_item", "NR_SLAB_UNRECLAIMABLE_B" },
	[MP_CAT_PERCPU] = { "memcg_stat_item", "MEMCG_PERCPU_B" },
	[MP_CAT_SOCK] = { "memcg_stat_item", "MEMCG_SOCK" },
	[MP_CAT_VMALLOC] = { "memcg_stat_item", "MEMCG_VMALLOC" },
	[MP_CAT_KERNEL] = { "memcg_stat_item", "MEMCG_KMEM" },
};

struct mp_attr {
	bool cat_ok[MP_NR_CATS];
	struct memprobe_bpf *skel;
	struct mp_hook hooks[MP_NR_CONCERNS];
	int chosen[MP_NR_CONCERNS];      /* index of the first rung used, -1 none */
	bool refused[MP_NR_CONCERNS][4]; /* rungs that failed to load or attach */
	struct bpf_link *links[16];
	int nlinks;
	int ncpus;
	struct ring_buffer *oom_rb;
	void (*oom_cb)(const struct mp_oom_event *e, void *arg);
	void *oom_arg;
};

/* Index of the memcg concern in ladders[]: its rung decides the units. */
#define MEMCG_CONCERN (MP_NR_CONCERNS - 1)

/*
 * What memprobe needs to know of the running kernel's BTF, learnt in one
 * pass over its types (a lookup by name is a linear scan; a dozen of them
 * cost more than the pass), so that the BTF can be freed before libbpf
 * loads its own copy for CO-RE.
 */
struct kfacts {
	bool rung[MP_NR_CONCERNS][4]; /* the rung's tracepoint or function exists */
	bool cat[MP_NR_CATS];         /* the category's stat item exists */
	uint64_t gfp_account;         /* __GFP_ACCOUNT */
	bool mark_victim_has_task;    /* oom:mark_victim passes a task_struct * */
	bool have_task_btf;           /* bpf_get_current_task_btf() exists */
};

/* oom:mark_victim took (int pid) until 6.8, (struct task_struct *, uid_t) since. */
static bool mark_victim_has_task(const struct btf *btf, const struct btf_type *td)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, td->type));

	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, btf_params(t)[1].type));
	return t && btf_is_ptr(t);
}

static void learn_enum(const struct btf *btf, const struct btf_type *t, const char *name,
		       struct kfacts *k)
{
	const struct btf_enum *e = btf_enum(t);

	for (int i = 0; i < btf_vlen(t); i++) {
		const char *m = btf__name_by_offset(btf, e[i].name_off);

		if (!name[0]) {
			/* __GFP_ACCOUNT: since 6.10 an enumerator ___GFP_ACCOUNT_BIT of an
			 * anonymous enum, which CO-RE cannot name; before, a define at
			 * bit 22, which BTF lacks (the default) */
			if (strcmp(m, "___GFP_ACCOUNT_BIT") == 0)
				k->gfp_account = 1ULL << e[i].val;
		} else if (strcmp(name, "bpf_func_id") == 0) {
			if (strcmp(m, "BPF_FUNC_get_current_task_btf") == 0)
				k->have_task_btf = true;
		} else {
			for (int c = 0; c < MP_NR_CATS; c++)
				if (strcmp(name, cat_items[c].type) == 0 && strcmp(m, cat_items[c].item) == 0)
					k->cat[c] = true;
		}
	}
}

static void learn_kernel(const struct btf *btf, struct kfacts *k)
{
	int n = (int)btf__type_cnt(btf);

	memset(k, 0, sizeof(*k));
	k->gfp_account = 1ULL << 22;
	for (int id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);
		bool tp = btf_is_typedef(t) && strncmp(name, "btf_trace_", 10) == 0;

		if (btf_is_enum(t)) {
			if (!name[0] || !strcmp(name, "bpf_func_id") || !strcmp(name, "node_stat_item") ||
			    !strcmp(name, "memcg_stat_item"))
				learn_enum(btf, t, name, k);
			continue;
		}
		if (!tp && !btf_is_func(t))
			continue;
		if (tp && strcmp(name, "btf_trace_mark_victim") == 0)
			k->mark_victim_has_task = mark_victim_has_task(btf, t);
		for (int c = 0; c < MP_NR_CONCERNS; c++)
			for (int i = 0; i < 4 && ladders[c].rungs[i].label; i++) {
				const struct rung *r = &ladders[c].rungs[i];

				if ((r->kind == TP) == tp &&
				    strcmp(tp ? name + 10 : name, r->btf_name) == 0)
					k->rung[c][i] = true;
			}
	}
}

static struct bpf_program *rung_prog(struct memprobe_bpf *skel, const struct rung *r)
{
	return *(struct bpf_program **)((char *)skel + r->prog_off);
}

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN && getenv("MEMPROBE_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level == LIBBPF_DEBUG && getenv("MEMPROBE_DEBUG") &&
	    strcmp(getenv("MEMPROBE_DEBUG"), "2") == 0)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* Pick, per concern, the first rung that is available and not refused. */
static void plan(struct mp_attr *a, const struct kfacts *k)
{
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		const struct ladder *l = &ladders[c];
		char tried[160] = "";

		a->chosen[c] = -1;
		a->hooks[c].concern = l->concern;
		a->hooks[c].hook[0] = a->hooks[c].missing[0] = '\0';
		for (int i = 0; i < 4 && l->rungs[i].label; i += l->per_rung) {
			bool ok = true;

			for (int j = i; j < i + l->per_rung; j++)
				ok &= !a->refused[c][j] && k->rung[c][j];
			if (ok) {
				a->chosen[c] = i;
				break;
			}
			snprintf(tried + strlen(tried), sizeof(tried) - strlen(tried), "%s%s%s",
				 tried[0] ? ", " : "", l->rungs[i].btf_name,
				 a->refused[c][i] ? " (failed to load)" : " (absent)");
		}
		if (a->chosen[c] < 0)
			snprintf(a->hooks[c].missing, sizeof(a->hooks[c].missing),
				 "no hook on this kernel: %s", tried);
	}
}

static void set_autoload(struct mp_attr *a)
{
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		const struct ladder *l = &ladders[c];

		for (int i = 0; i < 4 && l->rungs[i].label; i++) {
			bool on = a->chosen[c] >= 0 && i >= a->chosen[c] &&
				  i < a->chosen[c] + l->per_rung;

			bpf_program__set_autoload(rung_prog(a->skel, &l->rungs[i]), on);
		}
	}
}

static int open_skel(struct mp_attr *a, const struct mp_attr_opts *o, bool in_pages,
		     const struct kfacts *k)
{
	a->skel = memprobe_bpf__open();
	if (!a->skel)
		return -errno;
	a->skel->rodata->target_cgid = o->target_cgid;
	a->skel->rodata->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	a->skel->rodata->stack_sample_period = o->stack_sample_period;
	a->skel->rodata->memcg_val_in_pages = in_pages;
	a->skel->rodata->gfp_account = k->gfp_account;
	a->skel->rodata->mark_victim_has_task = k->mark_victim_has_task;
	a->skel->rodata->have_task_btf = k->have_task_btf;
	return 0;
}

int mp_attr_start(const struct mp_attr_opts *o, struct mp_attr **out, char *err,
		  size_t errlen)
{
	struct mp_attr *a = calloc(1, sizeof(*a));
	struct btf *vmlinux;
	struct kfacts k;
	int ret = 0;

	if (!a)
		return -ENOMEM;
	libbpf_set_print(quiet_print);
	a->ncpus = libbpf_num_possible_cpus();
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux) {
		ret = -errno;
		snprintf(err, errlen, "no kernel BTF (/sys/kernel/btf/vmlinux): %s",
			 strerror(-ret));
		free(a);
		return ret;
	}
	learn_kernel(vmlinux, &k);
	btf__free(vmlinux); /* before libbpf parses its own copy: one at a time */
	plan(a, &k);
	memcpy(a->cat_ok, k.cat, sizeof(a->cat_ok));

	/* A fentry or kprobe the kernel refuses fails the whole load: mark the
	 * rungs refused and load again with the next rung, until it loads. */
	for (int attempt = 0; attempt < 8; attempt++) {
		int memcg = MEMCG_CONCERN;
		bool in_pages = a->chosen[memcg] >= 0 &&
				ladders[memcg].rungs[a->chosen[memcg]].kind == TP;

		if ((ret = open_skel(a, o, in_pages, &k)))
			break;
		set_autoload(a);
		ret = memprobe_bpf__load(a->skel);
		if (!ret)
			break;
		memprobe_bpf__destroy(a->skel);
		a->skel = NULL;
		bool any = false;
		for (int c = 0; c < MP_NR_CONCERNS; c++) {
			if (a->chosen[c] >= 0 && ladders[c].rungs[a->chosen[c]].kind != TP) {
				for (int j = 0; j < ladders[c].per_rung; j++)
					a->refused[c][a->chosen[c] + j] = true;
				any = true;
			}
		}
		if (!any)
			break;
		plan(a, &k);
	}
	if (!a->skel || ret) {
		snprintf(err, errlen, "cannot load the BPF programs: %s%s",
			 strerror(ret < 0 ? -ret : EINVAL),
			 ret == -EPERM ? " (run as root)" : "");
		if (a->skel)
			memprobe_bpf__destroy(a->skel);
		free(a);
		return ret ? ret : -EINVAL;
	}

	/* Attach one by one: one refusal degrades the report, never the run. */
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		const struct ladder *l = &ladders[c];
		int first = a->chosen[c];

		if (first < 0)
			continue;
		for (int j = first; j < first + l->per_rung; j++) {
			struct bpf_link *link = bpf_program__attach(rung_prog(a->skel, &l->rungs[j]));

			if (!link) {
				snprintf(a->hooks[c].missing, sizeof(a->hooks[c].missing),
					 "%s: attach failed: %s", l->rungs[j].label, strerror(errno));
				continue;
			}
			a->links[a->nlinks++] = link;
			snprintf(a->hooks[c].hook + strlen(a->hooks[c].hook),
				 sizeof(a->hooks[c].hook) - strlen(a->hooks[c].hook), "%s%s",
				 a->hooks[c].hook[0] ? " + " : "", l->rungs[j].label);
		}
	}
	/* the per-CPU verdicts may be kept only while migrations are seen */
	for (int c = 0; c < MP_NR_CONCERNS; c++)
		if (!strcmp(ladders[c].concern, "cgroup migrations") && a->hooks[c].hook[0] &&
		    !a->hooks[c].missing[0])
			a->skel->bss->migrate_tp_live = true;
	*out = a;
	return 0;
}

bool mp_attr_cat_available(const struct mp_attr *a, int cat, const char **why)
{
	if (why)
		*why = cat_items[cat].item;
	return a->cat_ok[cat];
}

const struct mp_hook *mp_attr_hooks(const struct mp_attr *a)
{
	return a->hooks;
}

/* Sum the per-CPU totals. */
static void sum_totals(const struct mp_cpu *v, int ncpu, struct mp_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < ncpu; c++) {
		const struct mp_totals *x = &v[c].totals;

		t->faults += v[c].faults;
		for (int k = 0; k < MP_NR_CATS; k++)
			t->charge_bytes[k] += x->charge_bytes[k];
		for (int u = 0; u < 2; u++)
			for (int o = 0; o <= MP_MAX_ORDER; o++)
				t->alloc_pages_by_order[u][o] += x->alloc_pages_by_order[u][o];
		t->kernel_pages_freed += x->kernel_pages_freed;
		t->memcg_events += x->memcg_events;
		for (int l = 0; l < MP_NR_LOST; l++)
			t->lost[l] += x->lost[l];
	}
}

static struct mp_task_row *task_row(struct mp_attr_snap *s, size_t cap, uint32_t tgid)
{
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid == tgid)
			return &s->tasks[i];
	if (s->ntasks == cap)
		return NULL;
	memset(&s->tasks[s->ntasks], 0, sizeof(s->tasks[0]));
	s->tasks[s->ntasks].tgid = tgid;
	return &s->tasks[s->ntasks++];
}

static void fill_comm(struct mp_attr *a, struct mp_task_row *r)
{
	if (r->tgid == 0)
		snprintf(r->comm, sizeof(r->comm), "(other context)");
	else if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.comms), &r->tgid, r->comm))
		snprintf(r->comm, sizeof(r->comm), "?");
	r->comm[sizeof(r->comm) - 1] = '\0';
}

/* The per-task map, without the slots' pending counters. */
static int read_tasks(struct mp_attr *a, struct mp_attr_snap *s, size_t cap,
		      struct mp_task_stat *tv)
{
	int fd = bpf_map__fd(a->skel->maps.task_stats), ncpu = a->ncpus;
	uint32_t key, next, *prev = NULL;

	s->ntasks = 0;
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct mp_task_row *r;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, tv) || !(r = task_row(s, cap, key)))
			continue;
		for (int c = 0; c < ncpu; c++) {
			r->faults += tv[c].faults;
			r->user_pages += tv[c].user_pages;
			r->kernel_pages += tv[c].kernel_pages;
			for (int k = 0; k < MP_NR_CATS; k++)
				r->charge_bytes[k] += tv[c].charge_bytes[k];
		}
	}
	return 0;
}

int mp_attr_snapshot(struct mp_attr *a, struct mp_attr_snap *s)
{
	int ncpu = a->ncpus, cfd = bpf_map__fd(a->skel->maps.cpu), ret = 0;
	size_t cap = bpf_map__max_entries(a->skel->maps.task_stats) + (size_t)ncpu + 1;
	struct mp_task_stat *tv = calloc((size_t)ncpu, sizeof(*tv));
	struct mp_cpu *before = calloc((size_t)ncpu, sizeof(*before));
	struct mp_cpu *after = calloc((size_t)ncpu, sizeof(*after));
	uint32_t zero = 0;
	int tries;

	memset(s, 0, sizeof(*s));
	s->tasks = calloc(cap, sizeof(*s->tasks));
	if (!tv || !before || !after || !s->tasks) {
		ret = -ENOMEM;
		goto out;
	}
	/*
	 * The slots and the map must be read as of one moment: a flush moves
	 * counters from one to the other. Read slots, map, slots again, and
	 * retry while a flush ran in between (seq odd or changed).
	 */
	for (tries = 0; tries < 20; tries++) {
		bool same = true;

		if (bpf_map_lookup_elem(cfd, &zero, before)) {
			ret = -errno;
			goto out;
		}
		read_tasks(a, s, cap, tv);
		if (bpf_map_lookup_elem(cfd, &zero, after)) {
			ret = -errno;
			goto out;
		}
		for (int c = 0; c < ncpu; c++)
			same &= before[c].seq == after[c].seq && !(after[c].seq & 1);
		if (same)
			break;
	}
	sum_totals(after, ncpu, &s->totals);
	for (int c = 0; c < ncpu; c++) {
		const struct mp_cpu *x = &after[c];
		struct mp_task_row *r;

		if (x->in_target && x->tgid && (r = task_row(s, cap, x->tgid))) {
			r->faults += x->pending.faults;
			r->user_pages += x->pending.user_pages;
			r->kernel_pages += x->pending.kernel_pages;
			for (int k = 0; k < MP_NR_CATS; k++)
				r->charge_bytes[k] += x->pending.charge_bytes[k];
		}
		for (int k = 0; k < MP_NR_CATS; k++) {
			if (!x->other_charge_bytes[k])
				continue;
			if ((r = task_row(s, cap, 0)))
				r->charge_bytes[k] += x->other_charge_bytes[k];
		}
	}
	for (size_t i = 0; i < s->ntasks; i++)
		fill_comm(a, &s->tasks[i]);

	{
		struct mp_stack_key sk, snext, *sprev = NULL;
		struct mp_stack_stat sv;
		int fd = bpf_map__fd(a->skel->maps.stack_stats);
		size_t scap = bpf_map__max_entries(a->skel->maps.stack_stats);

		s->stacks = calloc(scap, sizeof(*s->stacks));
		if (!s->stacks) {
			ret = -ENOMEM;
			goto out;
		}
		while (s->nstacks < scap && bpf_map_get_next_key(fd, sprev, &snext) == 0) {
			sk = snext;
			sprev = &sk;
			if (bpf_map_lookup_elem(fd, &sk, &sv))
				continue;
			s->stacks[s->nstacks++] = (struct mp_stack_row){
				.stackid = sk.stackid, .tgid = sk.tgid,
				.pages = sv.pages, .alloc_pages = sv.alloc_pages,
				.unaccounted_pages = sv.unaccounted_pages,
			};
		}
	}
out:
	free(tv);
	free(before);
	free(after);
	if (ret)
		mp_attr_snap_free(s);
	return ret;
}

void mp_attr_snap_sub(struct mp_attr_snap *after, const struct mp_attr_snap *before)
{
	for (size_t i = 0; i < after->ntasks; i++) {
		struct mp_task_row *r = &after->tasks[i];

		for (size_t j = 0; j < before->ntasks; j++) {
			const struct mp_task_row *b = &before->tasks[j];

			if (b->tgid != r->tgid)
				continue;
			r->faults -= b->faults;
			r->user_pages -= b->user_pages;
			r->kernel_pages -= b->kernel_pages;
			for (int k = 0; k < MP_NR_CATS; k++)
				r->charge_bytes[k] -= b->charge_bytes[k];
			break;
		}
	}
	for (size_t i = 0; i < after->nstacks; i++) {
		struct mp_stack_row *r = &after->stacks[i];

		for (size_t j = 0; j < before->nstacks; j++) {
			const struct mp_stack_row *b = &before->stacks[j];

			if (b->stackid == r->stackid && b->tgid == r->tgid) {
				r->pages -= b->pages;
				r->alloc_pages -= b->alloc_pages;
				r->unaccounted_pages -= b->unaccounted_pages;
				break;
			}
		}
	}
	for (int u = 0; u < 2; u++)
		for (int o = 0; o <= MP_MAX_ORDER; o++)
			after->totals.alloc_pages_by_order[u][o] -=
				before->totals.alloc_pages_by_order[u][o];
	after->totals.faults -= before->totals.faults;
	for (int k = 0; k < MP_NR_CATS; k++)
		after->totals.charge_bytes[k] -= before->totals.charge_bytes[k];
	after->totals.kernel_pages_freed -= before->totals.kernel_pages_freed;
	after->totals.memcg_events -= before->totals.memcg_events;
	/* lost stays cumulative: every loss since attach is reported */
}

int mp_attr_totals(struct mp_attr *a, struct mp_totals *t)
{
	struct mp_cpu *v = calloc((size_t)a->ncpus, sizeof(*v));
	uint32_t key = 0;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.cpu), &key, v))
		ret = -errno;
	else
		sum_totals(v, a->ncpus, t);
	free(v);
	return ret;
}

static int on_oom_record(void *ctx, void *data, size_t len)
{
	struct mp_attr *a = ctx;

	if (len >= sizeof(struct mp_oom_event) && a->oom_cb)
		a->oom_cb(data, a->oom_arg);
	return 0;
}

int mp_attr_poll_oom(struct mp_attr *a, int timeout_ms,
		     void (*cb)(const struct mp_oom_event *e, void *arg), void *arg)
{
	a->oom_cb = cb;
	a->oom_arg = arg;
	if (!a->oom_rb) {
		int fd = bpf_map__fd(a->skel->maps.oom_events);

		a->oom_rb = fd >= 0 ? ring_buffer__new(fd, on_oom_record, a, NULL) : NULL;
		if (!a->oom_rb) {
			usleep((useconds_t)timeout_ms * 1000);
			return 0;
		}
	}
	return ring_buffer__poll(a->oom_rb, timeout_ms);
}

void mp_attr_snap_free(struct mp_attr_snap *s)
{
	free(s->tasks);
	free(s->stacks);
	memset(s, 0, sizeof(*s));
}

int mp_attr_stack(struct mp_attr *a, uint32_t stackid, uint64_t *ips, int max)
{
	uint64_t buf[MP_STACK_DEPTH] = { 0 };
	int n = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.stacks), &stackid, buf))
		return -errno;
	while (n < MP_STACK_DEPTH && n < max && buf[n]) {
		ips[n] = buf[n];
		n++;
	}
	return n;
}

uint64_t mp_attr_recursion_misses(struct mp_attr *a, struct cJSON *by)
{
	struct bpf_program *p;
	uint64_t total = 0;

	bpf_object__for_each_program(p, a->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		total += info.recursion_misses;
		if (by)
			mp_json_add_u64(by, bpf_program__name(p), info.recursion_misses);
	}
	return total;
}

void mp_attr_stop(struct mp_attr *a)
{
	if (!a)
		return;
	ring_buffer__free(a->oom_rb);
	for (int i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	memprobe_bpf__destroy(a->skel);
	free(a);
}
