// SPDX-License-Identifier: GPL-2.0
/* Hook planning: the ladders, judged for this kernel (its facts:
 * kernel_btf.c); load and attach. */
#include "attr_int.h"
#include "btf_scan.h"
#include "json.h"
#include "memprobe.skel.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util.h"

/* One rung of a ladder: one or two programs and what they need. */
enum rung_kind { TP_BTF, RAW_TP, FENTRY, KPROBE, POLL };

static const char *const kind_names[] = {
	[TP_BTF] = "tp_btf", [RAW_TP] = "raw_tp", [FENTRY] = "fentry",
	[KPROBE] = "kprobe", [POLL] = "poll",
};

struct rung {
	enum rung_kind kind;
	const char *label;     /* how the report names it */
	const char *fn[2];     /* tracepoints or kernel functions; POLL: none */
	size_t prog[2];        /* offsetof(struct memprobe_bpf, progs.X) */
	const char *file;      /* POLL: the cgroup file read */
	bool counters;         /* the counts are the kernel's, read at the snapshots;
				* the programs keep only what they cannot show */
};

#define PROG(x) offsetof(struct memprobe_bpf, progs.x)

/*
 * Each concern's rungs, in order of preference: the kernel's BTF-typed
 * tracepoint, the same as a raw tracepoint (no kernel BTF needed), fentry,
 * kprobe, and last what the cgroup's files can tell without BPF. The enum
 * mp_concern order.
 */
static const struct ladder {
	struct rung rungs[MAX_RUNGS]; /* the concern's id and name: mp_concerns */
} ladders[MP_NR_CONCERNS] = {
	/* The kernel counts faults per task and per memcg: read at the
	 * snapshots, they cost nothing per fault. The exit hook keeps exited
	 * threads' counts. --fault-tracepoint passes over these two rungs. */
	[MP_CONCERN_FAULTS] = { {
		{ TP_BTF, "the kernel's fault counters (tracepoint sched:sched_process_exit "
		  "for exited threads)", { "sched_process_exit" },
		  { PROG(tp_sched_process_exit) }, .counters = true },
		{ RAW_TP, "the kernel's fault counters (raw tracepoint sched:sched_process_exit "
		  "for exited threads)", { "sched_process_exit" },
		  { PROG(raw_tp_sched_process_exit) }, .counters = true },
		{ TP_BTF, "tracepoint exceptions:page_fault_user",
		  { "page_fault_user" }, { PROG(tp_page_fault_user) } },
		{ RAW_TP, "raw tracepoint exceptions:page_fault_user",
		  { "page_fault_user" }, { PROG(raw_tp_page_fault_user) } },
		{ FENTRY, "fentry handle_mm_fault",
		  { "handle_mm_fault" }, { PROG(fentry_handle_mm_fault) } },
		{ KPROBE, "kprobe handle_mm_fault",
		  { "handle_mm_fault" }, { PROG(kprobe_handle_mm_fault) } },
		{ POLL, "polling memory.stat pgfault (the cgroup's total only)",
		  { 0 }, { 0 }, "memory.stat pgfault" },
	} },
	[MP_CONCERN_ALLOC] = { {
		{ TP_BTF, "tracepoint kmem:mm_page_alloc",
		  { "mm_page_alloc" }, { PROG(tp_mm_page_alloc) } },
		{ RAW_TP, "raw tracepoint kmem:mm_page_alloc",
		  { "mm_page_alloc" }, { PROG(raw_tp_mm_page_alloc) } },
	} },
	/* raw_tp first: the program keys on the page's address, a number
	 * there and a helper call away with tp_btf, on every free of the
	 * machine (page_key in memprobe.bpf.c); it reads through the page only
	 * for the target's tasks (anon_free). Needed with --stack-sample 0 too:
	 * it counts the anon pages the target's tasks free. */
	[MP_CONCERN_FREE] = { {
		{ RAW_TP, "raw tracepoint kmem:mm_page_free",
		  { "mm_page_free" }, { PROG(raw_tp_mm_page_free) } },
		{ TP_BTF, "tracepoint kmem:mm_page_free",
		  { "mm_page_free" }, { PROG(tp_mm_page_free) } },
		/* with neither of its jobs, no program: 1 firing per anonymous
		 * page (the allocation's) instead of 2 */
		{ POLL, "none needed (--memcg-from counters, --stack-sample 0: no anon "
		  "unmap counted, no page tracked)", { 0 }, { 0 }, "nothing", .counters = true },
	} },
	[MP_CONCERN_MIGRATE] = { {
		{ TP_BTF, "tracepoint cgroup:cgroup_attach_task",
		  { "cgroup_attach_task" }, { PROG(tp_cgroup_attach_task) } },
		{ RAW_TP, "raw tracepoint cgroup:cgroup_attach_task",
		  { "cgroup_attach_task" }, { PROG(raw_tp_cgroup_attach_task) } },
	} },
	[MP_CONCERN_COMM] = { {
		{ TP_BTF, "tracepoint sched:sched_process_exec",
		  { "sched_process_exec" }, { PROG(tp_sched_process_exec) } },
		{ RAW_TP, "raw tracepoint sched:sched_process_exec",
		  { "sched_process_exec" }, { PROG(raw_tp_sched_process_exec) } },
	} },
	[MP_CONCERN_OOM] = { {
		{ RAW_TP, "raw tracepoint oom:mark_victim",
		  { "mark_victim" }, { PROG(raw_tp_mark_victim) } },
		{ POLL, "polling the cgroup's oom_kill counter (no victim names)",
		  { 0 }, { 0 }, "oom_kill counter" },
	} },
	/* --memcg-from counters: no program per memcg stat update (about
	 * four per anonymous page); the processes' own counters (RSS by kind,
	 * page tables, threads' stacks) read at each snapshot split
	 * memory.stat's totals (attr_proc.c), as without BPF. */
	[MP_CONCERN_MEMCG] = { {
		{ POLL, "the processes' own counters at each snapshot (/proc) over "
		  "memory.stat's totals", { 0 }, { 0 },
		  "memory.stat + /proc/PID/status", .counters = true },
		{ TP_BTF, "tracepoint memcg:mod_memcg_state + mod_memcg_lruvec_state",
		  { "mod_memcg_state", "mod_memcg_lruvec_state" },
		  { PROG(tp_mod_memcg_state), PROG(tp_mod_memcg_lruvec_state) } },
		{ RAW_TP, "raw tracepoint memcg:mod_memcg_state + mod_memcg_lruvec_state",
		  { "mod_memcg_state", "mod_memcg_lruvec_state" },
		  { PROG(raw_tp_mod_memcg_state), PROG(raw_tp_mod_memcg_lruvec_state) } },
		{ FENTRY, "fentry __mod_memcg_state + __mod_memcg_lruvec_state",
		  { "__mod_memcg_state", "__mod_memcg_lruvec_state" },
		  { PROG(fentry_mod_memcg_state), PROG(fentry_mod_memcg_lruvec_state) } },
		{ KPROBE, "kprobe __mod_memcg_state + __mod_memcg_lruvec_state",
		  { "__mod_memcg_state", "__mod_memcg_lruvec_state" },
		  { PROG(kprobe_mod_memcg_state), PROG(kprobe_mod_memcg_lruvec_state) } },
		{ POLL, "polling memory.stat (the cgroup's totals only)",
		  { 0 }, { 0 }, "memory.stat" },
	} },
	[MP_CONCERN_CHARGE] = { {
		/* one program per kind, its function set at open (prepare_progs) */
		{ FENTRY, "fentry try_charge_memcg",
		  { "try_charge_memcg" }, { PROG(fentry_try_charge) } },
		{ FENTRY, "fentry try_charge",
		  { "try_charge" }, { PROG(fentry_try_charge) } },
		{ KPROBE, "kprobe try_charge_memcg",
		  { "try_charge_memcg" }, { PROG(kprobe_try_charge) } },
		{ KPROBE, "kprobe try_charge",
		  { "try_charge" }, { PROG(kprobe_try_charge) } },
		{ POLL, "polling the cgroup's usage (no per-process charges)",
		  { 0 }, { 0 }, "usage" },
	} },
};

static int rung_nprogs(const struct rung *r)
{
	return r->kind == POLL ? 0 : r->fn[1] ? 2 : 1;
}

static struct bpf_program *rung_prog(struct memprobe_bpf *skel, const struct rung *r, int j)
{
	return *(struct bpf_program **)((char *)skel + r->prog[j]);
}

/* Does word w (from MEMPROBE_DENY_HOOKS) name rung r: its kind, or one of
 * its tracepoints or functions, bare or as "group:name"? */
static bool names_rung(const char *w, const struct rung *r)
{
	const char *colon = strchr(w, ':');

	if (!strcmp(w, kind_names[r->kind]))
		return true;
	for (int j = 0; j < rung_nprogs(r); j++)
		if (!strcmp(colon ? colon + 1 : w, r->fn[j]))
			return true;
	return false;
}

/*
 * MEMPROBE_DENY_HOOKS: a list (commas or blanks) of rung kinds (tp_btf,
 * raw_tp, fentry, kprobe, poll) or tracepoint/function names to pass over,
 * so that every rung of a ladder can be exercised on one kernel (tests, and
 * a hook that misbehaves somewhere). With r NULL, warn about each word that
 * names no rung at all.
 */
static bool denied(const struct rung *r)
{
	const char *env = getenv("MEMPROBE_DENY_HOOKS");
	char *buf, *save = NULL;
	bool hit = false;

	if (!env || !*env || !(buf = strdup(env)))
		return false;
	for (char *w = strtok_r(buf, ", \t\n", &save); w && !hit;
	     w = strtok_r(NULL, ", \t\n", &save)) {
		bool known = false;

		if (r) {
			hit = names_rung(w, r);
			continue;
		}
		for (int c = 0; c < MP_NR_CONCERNS && !known; c++)
			for (int i = 0; i < MAX_RUNGS && ladders[c].rungs[i].label && !known; i++)
				known = names_rung(w, &ladders[c].rungs[i]);
		if (!known)
			fprintf(stderr, "memprobe: MEMPROBE_DENY_HOOKS: '%s' names no hook; "
				"give kinds (tp_btf, raw_tp, fentry, kprobe, poll) or tracepoint "
				"and function names as `memprobe limits --features` lists them\n",
				w);
	}
	free(buf);
	return hit;
}

/*
 * Will the kernel take a fentry program on the function with this BTF id?
 * Load an empty one: the verifier refuses there what matters (EPERM on a
 * kernel that refuses tracing programs, ENOENT for a function BTF has but
 * kallsyms lacks: inlined). Attaching it too would cost a trampoline and a
 * tasks-RCU wait per function, seconds in a TCG guest; what only an attach
 * can tell (EBUSY) is met at the real attach, where the ladder's polled
 * file stands in. Returns 0 or -errno.
 */
static int probe_fentry(int btf_id)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, po, .expected_attach_type = BPF_TRACE_FENTRY,
		    .attach_btf_id = (__u32)btf_id);
	int prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "mp_probe", "GPL", insns, 2, &po);

	if (prog < 0)
		return -errno;
	close(prog);
	return 0;
}

/* Can a kprobe be placed on fn? Opened through the perf kprobe PMU, the way
 * libbpf attaches, with no program: -ENOENT when the kernel has no kprobes. */
static int probe_kprobe(const char *fn)
{
	struct perf_event_attr pa = { .size = sizeof(pa) };
	uint64_t type;
	int fd;

	if (mp_read_u64_file("/sys/bus/event_source/devices/kprobe/type", &type))
		return -ENOENT;
	pa.type = (uint32_t)type;
	pa.config1 = (uint64_t)(uintptr_t)fn; /* kprobe_func */
	fd = (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Why rung i of concern c cannot be used, or "" when it can (probing the
 * kernel for fentry and kprobe rungs, which only a try can tell). */
static void judge(struct mp_attr *a, const struct mp_kfacts *k, int c, int i)
{
	const struct rung *r = &ladders[c].rungs[i];
	char *why = a->why_not[c][i];
	size_t n = sizeof(a->why_not[c][i]);
	int ret = 0;

	why[0] = '\0';
	if (denied(r)) {
		snprintf(why, n, "denied (MEMPROBE_DENY_HOOKS)");
		return;
	}
	if (r->counters && c == MP_CONCERN_FAULTS && a->fault_tracepoint) {
		snprintf(why, n, "passed over (--fault-tracepoint)");
		return;
	}
	if (r->counters && c == MP_CONCERN_MEMCG && !a->memcg_counters) {
		snprintf(why, n, a->memcg_from == MP_MEMCG_FROM_AUTO
			 ? "passed over (cgroup v1: its memory.stat has no slab, percpu or sock; "
			   "--memcg-from counters takes it)"
			 : "passed over (--memcg-from tracepoint)");
		return;
	}
	/* the free program counts anon frees for the memcg program's anon
	 * unmaps and untracks the pages tracked with a stack: with neither,
	 * it would run on every free of the machine for nothing */
	if (c == MP_CONCERN_FREE && (r->kind == POLL) != (a->memcg_counters && !a->stack_period)) {
		snprintf(why, n, r->kind == POLL
			 ? "passed over (needed: anon unmaps counted, or pages tracked with stacks)"
			 : "passed over (not needed: --memcg-from counters with --stack-sample 0)");
		return;
	}
	if (r->kind == POLL)
		return;
	if (a->no_bpf[0]) {
		snprintf(why, n, "%s", a->no_bpf);
		return;
	}
	for (int j = 0; j < rung_nprogs(r); j++)
		if (!k->fn_id[c][i][j]) {
			snprintf(why, n, "absent");
			return;
		}
	for (int j = 0; j < rung_nprogs(r); j++)
		if ((r->kind == TP_BTF || r->kind == FENTRY) && !k->kernel_btf) {
			snprintf(why, n, "needs the kernel's own BTF");
			return;
		}
	for (int j = 0; j < rung_nprogs(r) && !ret; j++) {
		/* ids from a --btf file are not the kernel's: the load decides */
		if (r->kind == FENTRY && !a->btf_custom)
			ret = probe_fentry(k->fn_id[c][i][j]);
		else if (r->kind == KPROBE)
			ret = probe_kprobe(r->fn[j]);
		if (ret == -ENOENT && r->kind == KPROBE &&
		    access("/sys/bus/event_source/devices/kprobe", F_OK))
			snprintf(why, n, "no kprobes in this kernel");
		else if (ret)
			snprintf(why, n, "refused%s%s: %s", j ? " on " : "", j ? r->fn[j] : "",
				 strerror(-ret));
	}
}

/* Pick, per concern, the first rung that is usable; fentry and kprobe rungs
 * are probed only when every rung above them is unusable, unless all is set
 * (--features: every rung judged). */
static void plan(struct mp_attr *a, const struct mp_kfacts *k, bool all)
{
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		const struct ladder *l = &ladders[c];
		char tried[sizeof(a->hooks[c].missing) - 32] = "";

		a->chosen[c] = -1;
		a->hooks[c].concern = mp_concerns[c].id;
		a->hooks[c].name = mp_concerns[c].name;
		a->hooks[c].kind = NULL;
		a->hooks[c].missing_reason = NULL;
		a->hooks[c].polled = false;
		a->hooks[c].counters = false;
		a->hooks[c].hook[0] = a->hooks[c].target[0] = a->hooks[c].missing[0] = '\0';
		for (int i = 0; i < MAX_RUNGS && l->rungs[i].label; i++) {
			if (!a->why_not[c][i][0])
				judge(a, k, c, i);
			if (!a->why_not[c][i][0]) {
				if (a->chosen[c] < 0)
					a->chosen[c] = i;
				if (!all)
					break;
				continue;
			}
			if (a->chosen[c] >= 0)
				continue;
			mp_appendf(tried, sizeof(tried), "%s%s %s: %s",
				 tried[0] ? "; " : "", kind_names[l->rungs[i].kind],
				 l->rungs[i].fn[0] ? l->rungs[i].fn[0] : "cgroup files",
				 a->why_not[c][i]);
		}
		if (a->no_bpf[0])
			snprintf(tried, sizeof(tried), "%s", a->no_bpf);
		if (a->chosen[c] < 0) {
			a->hooks[c].missing_reason = "no_hook";
			snprintf(a->hooks[c].missing, sizeof(a->hooks[c].missing),
				 "no usable hook (%s)", tried);
		} else if (l->rungs[a->chosen[c]].kind == POLL && !l->rungs[a->chosen[c]].counters) {
			a->hooks[c].missing_reason = "polled";
			snprintf(a->hooks[c].missing, sizeof(a->hooks[c].missing),
				 "no BPF hook (%s)", tried);
		}
	}
}

/*
 * Load the chosen rungs' programs only: all off, then the chosen on (the
 * skeleton's programs, not the ladders, are what must all be covered). A
 * fentry program is given its function here, as bcc's libbpf-tools do, so
 * that one program serves the rungs that differ only by the function
 * (try_charge_memcg, or try_charge before 5.15). Returns 0, or -errno when
 * libbpf cannot resolve a function: that rung is marked failed.
 */
static int prepare_progs(struct mp_attr *a)
{
	struct bpf_program *p;
	int ret;

	bpf_object__for_each_program(p, a->skel->obj)
		bpf_program__set_autoload(p, false);
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		int i = a->chosen[c];
		const struct rung *r = i >= 0 ? &ladders[c].rungs[i] : NULL;

		for (int j = 0; r && j < rung_nprogs(r); j++) {
			p = rung_prog(a->skel, r, j);
			bpf_program__set_autoload(p, true);
			if (r->kind != FENTRY)
				continue;
			ret = bpf_program__set_attach_target(p, 0, r->fn[j]);
			if (ret) {
				snprintf(a->why_not[c][i], sizeof(a->why_not[c][i]),
					 "failed to load: %s", strerror(-ret));
				return ret;
			}
		}
	}
	return 0;
}

/* Attach program j of rung r: a kprobe names its function here (the
 * program's section may not), the others attach as their section says or
 * as prepare_progs set. NULL and errno on failure. */
static struct bpf_link *attach_prog(struct mp_attr *a, const struct rung *r, int j)
{
	struct bpf_program *p = rung_prog(a->skel, r, j);

	if (r->kind == KPROBE)
		return bpf_program__attach_kprobe(p, false, r->fn[j]);
	return bpf_program__attach(p);
}

uint32_t mp_attr_live_pages_for(uint64_t limit_bytes, uint64_t page_size)
{
	uint64_t n = page_size ? limit_bytes / page_size / MP_LIVE_PAGES_PER_ENTRY : 0;

	return (uint32_t)MP_CLAMP(n, MP_LIVE_PAGES_MIN, MP_LIVE_PAGES_MAX);
}

/* The initial pid namespace's inode number (include/linux/proc_ns.h
 * PROC_PID_INIT_INO, the same since 3.8). */
#define PID_INIT_INO 0xEFFFFFFCU

/*
 * In a pid namespace of its own (a container's), memprobe's pids are not
 * the host's the programs see: they key rows by the namespace's
 * (bpf_get_ns_current_pid_tgid, with its nsfs device and inode), so that
 * /proc, kill() and the report speak of the processes the container sees;
 * the host's pid goes beside (host_tgids). On the host nothing changes.
 */
static void set_pidns(struct mp_attr *a)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == PID_INIT_INO)
		return;
	/* the kernel's dev_t: major << 20 | minor (MKDEV), not glibc's */
	a->skel->rodata->pidns_dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev);
	a->skel->rodata->pidns_ino = st.st_ino;
	a->pidns = true;
}

uint32_t mp_attr_task_rows_for(int ncpus)
{
	uint64_t n = MP_TASK_ROWS_BYTES / ((uint64_t)(ncpus > 0 ? ncpus : 1) *
					   sizeof(struct mp_task_stat));

	return (uint32_t)MP_CLAMP(n, MP_TASK_ROWS_MIN, MP_TASK_ROWS_MAX);
}

static int open_skel(struct mp_attr *a, const struct mp_attr_opts *o, const struct mp_kfacts *k)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = o->btf_path);

	a->skel = memprobe_bpf__open_opts(&oo);
	if (!a->skel)
		return -errno;
	a->skel->rodata->target_cgid = o->target_cgid;
	a->skel->rodata->page_size = (uint32_t)sysconf(_SC_PAGESIZE);
	a->skel->rodata->stack_sample_period = o->stack_sample_period;
	/* --memcg-from counters: no memcg program, so neither anon's unmaps
	 * (the free path's anon count is their other half) nor record's
	 * wake-up there: the allocation path wakes it */
	a->skel->rodata->count_anon_frees = !a->memcg_counters;
	a->skel->rodata->wake_on_alloc = a->memcg_counters;
	/* preallocated: sized for the target, one entry where no page is
	 * tracked (no stacks); its filter a slot an entry, a power of two, at
	 * least 16384: every free and allocation of the machine reads a slot
	 * at random, and the filter is kept as small as the entries allow
	 * (64 KiB for up to 16384; a 2 MiB one cost 40 ns a free in cache
	 * misses on the bench's fill) */
	uint32_t live = o->stack_sample_period == 0 ? 1 :
		mp_attr_live_pages_for(o->cg ? o->cg->effective_limit_bytes : 0,
				       a->skel->rodata->page_size);
	uint32_t slots = 16384;

	while (slots < live)
		slots <<= 1;
	bpf_map__set_max_entries(a->skel->maps.live_pages, live);
	bpf_map__set_max_entries(a->skel->maps.live_filter, slots);
	/* a row per process alive (the drain takes the exited ones), per CPU */
	bpf_map__set_max_entries(a->skel->maps.task_stats, mp_attr_task_rows_for(a->ncpus));
	bpf_map__set_max_entries(a->skel->maps.comms, mp_attr_task_rows_for(a->ncpus));
	a->skel->rodata->live_filter_mask = slots - 1;
	/* the memcg tracepoints pass pages; the functions, the item's unit */
	if (a->chosen[MP_CONCERN_MEMCG] >= 0) {
		const struct rung *r =
			&ladders[MP_CONCERN_MEMCG].rungs[a->chosen[MP_CONCERN_MEMCG]];

		a->skel->rodata->memcg_val_in_pages = r->kind == TP_BTF || r->kind == RAW_TP;
	}
	/* where pages are passed, byte items are read from the kernel's counters */
	a->byte_exact = false;
	for (int c = 0; c < MP_NR_CATS; c++) {
		uint8_t i = a->chosen[MP_CONCERN_MEMCG] >= 0 && a->skel->rodata->memcg_val_in_pages ?
			    k->cat_state_index[c] : MP_NO_STATE_INDEX;

		a->skel->rodata->cat_state_index[c] = i;
		a->byte_exact |= i != MP_NO_STATE_INDEX;
	}
	if (!a->byte_exact)
		bpf_map__set_max_entries(a->skel->maps.byte_anchors, 1);
	a->skel->rodata->gfp_account = k->gfp_account;
	a->skel->rodata->gfp_zero = k->gfp_zero;
	memcpy((void *)a->skel->rodata->lruvec_item_cat, k->lruvec_item_cat,
	       sizeof(k->lruvec_item_cat));
	memcpy((void *)a->skel->rodata->memcg_item_cat, k->memcg_item_cat,
	       sizeof(k->memcg_item_cat));
	for (int c = 0; c < MP_NR_CATS; c++) {
		a->skel->rodata->cat_unit_bytes[c] = mp_cats[c].unit == MP_UNIT_BYTES ? 1 :
						     mp_cats[c].unit == MP_UNIT_KIB ? 1024 :
						     a->skel->rodata->page_size;
		a->skel->rodata->cat_hpages[c] = mp_cats[c].unit == MP_UNIT_HPAGES;
	}
	/* a PMD maps a page of page-table entries' worth of pages */
	a->skel->rodata->hpage_pmd_pages = a->skel->rodata->page_size / 8;
	a->skel->rodata->mark_victim_has_task = k->mark_victim_has_task;
	a->skel->rodata->have_task_btf = k->have_task_btf && k->kernel_btf;
	set_pidns(a);
	return 0;
}

/* Every rung's functions and tracepoints, for mp_kbtf_learn. */
static int rung_fns(struct mp_kbtf_fn *fns)
{
	int n = 0;

	for (int c = 0; c < MP_NR_CONCERNS; c++)
		for (int i = 0; i < MAX_RUNGS && ladders[c].rungs[i].label; i++) {
			const struct rung *r = &ladders[c].rungs[i];
			bool tp = r->kind == TP_BTF || r->kind == RAW_TP;

			for (int j = 0; j < rung_nprogs(r); j++)
				fns[n++] = (struct mp_kbtf_fn){ r->fn[j], tp, c, i, j };
		}
	return n;
}

int mp_attr_learn_btf(const char *path, struct mp_kfacts *k, char *err, size_t errlen)
{
	struct mp_kbtf_fn fns[MP_NR_CONCERNS * MAX_RUNGS * 2];

	return mp_kbtf_learn(path, fns, rung_fns(fns), k, err, errlen);
}

/* Learn from the BTF: --btf's file, else the kernel's own. */
static int load_btf(struct mp_attr *a, const struct mp_attr_opts *o, struct mp_kfacts *k,
		    char *err, size_t errlen)
{
	int ret = mp_attr_learn_btf(o->btf_path, k, err, errlen);

	if (ret)
		return ret;
	if (o->btf_path) {
		/* tp_btf and fentry need the kernel's own BTF, wherever libbpf finds it */
		k->kernel_btf = access("/sys/kernel/btf/vmlinux", R_OK) == 0;
		snprintf(a->btf_source, sizeof(a->btf_source), "%s", o->btf_path);
		a->btf_custom = true;
	} else {
		k->kernel_btf = true;
		snprintf(a->btf_source, sizeof(a->btf_source), "/sys/kernel/btf/vmlinux");
	}
	return 0;
}

/* Does /proc/kallsyms list a symbol starting with prefix? */
static bool kallsyms_has(const char *prefix)
{
	FILE *f = fopen("/proc/kallsyms", "re");
	char line[256], name[200];
	size_t n = strlen(prefix);
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %*s %199s", name) == 1 && !strncmp(name, prefix, n);
	if (f)
		fclose(f);
	return found;
}

/*
 * The categories no attached hook can see, to be read from memory.stat: all
 * of them when the memcg concern is polled; and on 5.10, where GCC moved the
 * body of __mod_memcg_state() into a clone (__mod_memcg_state.part.0) that
 * its callers call directly, the memcg_stat_item ones (sock, percpu, vmalloc):
 * a fentry or kprobe on __mod_memcg_state never fires there.
 */
static void polled_cats(struct mp_attr *a)
{
	int m = a->chosen[MP_CONCERN_MEMCG];
	enum rung_kind kd = m >= 0 ? ladders[MP_CONCERN_MEMCG].rungs[m].kind : POLL;
	bool clone = (kd == FENTRY || kd == KPROBE) && kallsyms_has("__mod_memcg_state.part");
	/* the memcg tracepoints (6.13+) pass byte-sized items rounded to pages
	 * (slab_unreclaimable 8200192 for the kernel's 9754424, 1000 threads on
	 * 7.2): where memory.stat has the key (v2), the total is taken there */
	bool rounded = kd == TP_BTF || kd == RAW_TP;
	struct mp_cg_stat st = { 0 };
	struct mp_hook *memcg = &a->hooks[MP_CONCERN_MEMCG];
	char cl[96] = "", rd[96] = "";

	if (rounded && a->have_cg)
		mp_cgroup_stat("", &a->cg, &st);
	for (int k = 0; k < MP_NR_CATS; k++) {
		bool by_clone = clone && a->cat_ok[k] &&
				!strcmp(mp_cats[k].item_type, "memcg_stat_item");
		/* ... unless its bytes are read from the kernel's counter */
		bool by_round = rounded && st.have[k] && mp_cats[k].unit == MP_UNIT_BYTES &&
				!mp_attr_cat_bytes_read(a, k);
		char *l = by_clone ? cl : rd;

		a->cat_polled[k] = memcg->polled || by_clone || by_round;
		a->cat_polled_reason[k] = memcg->polled ? "polled" :
					  by_clone ? "clone" : by_round ? "rounded" : NULL;
		if (by_clone || by_round)
			mp_appendf(l, sizeof(cl), "%s%s", l[0] ? ", " : "",
				 mp_cat_names[k]);
	}
	if (cl[0])
		snprintf(memcg->missing, sizeof(memcg->missing),
			 "%s: from memory.stat, no per-process split (__mod_memcg_state's body is "
			 "the clone __mod_memcg_state.part.0 here, which no hook reaches)", cl);
	else if (rd[0])
		snprintf(memcg->missing, sizeof(memcg->missing),
			 "%s: totals from memory.stat, per-process shares approximate (the memcg "
			 "tracepoints pass these byte counts rounded to pages)", rd);
}

/* Rung r's target, as struct mp_hook's target spells it: tracepoints as
 * "group:name" (the group taken from the label), functions bare, "a + b"
 * for two; a polled rung, its file. */
static void rung_target(const struct rung *r, char *buf, size_t len)
{
	const char *colon = strchr(r->label, ':'), *g = colon;
	bool tp = r->kind == TP_BTF || r->kind == RAW_TP;

	buf[0] = '\0';
	if (r->kind == POLL) {
		snprintf(buf, len, "%s", r->file ? r->file : "");
		return;
	}
	while (tp && g && g > r->label && g[-1] != ' ')
		g--;
	for (int j = 0; j < rung_nprogs(r); j++)
		mp_appendf(buf, len, "%s%.*s%s", j ? " + " : "",
			   tp && g ? (int)(colon - g + 1) : 0, tp && g ? g : "", r->fn[j]);
}

/* Record rung r as the one in use: its label, kind and target. */
static void use_rung(struct mp_hook *h, const struct rung *r)
{
	snprintf(h->hook, sizeof(h->hook), "%s", r->label);
	h->kind = kind_names[r->kind];
	h->counters = r->counters;
	rung_target(r, h->target, sizeof(h->target));
}

/*
 * After a failed load: mark the chosen fentry and kprobe rungs failed (or,
 * when there are none, the tp_btf ones, for raw tracepoints), so that the
 * next plan passes over them. Returns whether any was marked.
 */
static bool drop_failed_rungs(struct mp_attr *a, int ret)
{
	bool any = false;

	for (int pass = 0; pass < 2 && !any; pass++)
		for (int c = 0; c < MP_NR_CONCERNS; c++) {
			int i = a->chosen[c];
			const struct rung *r = i >= 0 ? &ladders[c].rungs[i] : NULL;
			bool hit = r && (pass == 0 ? r->kind == FENTRY || r->kind == KPROBE
						   : r->kind == TP_BTF);

			if (hit) {
				snprintf(a->why_not[c][i], sizeof(a->why_not[c][i]),
					 "failed to load: %s", strerror(-ret));
				any = true;
			}
		}
	return any;
}

/*
 * Open and load the planned programs. The probes of judge() should have
 * caught every refusal; should a load still fail, the failing rungs are
 * dropped and the plan made again. When nothing can be loaded, a->no_bpf
 * says why, err too, and the plan is remade for the cgroup's files alone.
 */
static void load_progs(struct mp_attr *a, const struct mp_attr_opts *o,
		       const struct mp_kfacts *k, char *err, size_t errlen)
{
	int ret = 0;

	for (int attempt = 0; attempt < 8 && !a->no_bpf[0]; attempt++) {
		bool replan;

		if ((ret = open_skel(a, o, k)))
			break;
		ret = prepare_progs(a);
		replan = ret != 0; /* that rung is marked already */
		if (!ret && !(ret = memprobe_bpf__load(a->skel)))
			break;
		memprobe_bpf__destroy(a->skel);
		a->skel = NULL;
		if (!replan && !drop_failed_rungs(a, ret))
			break;
		plan(a, k, o->judge_all_rungs);
	}
	if (!a->no_bpf[0] && (!a->skel || ret)) {
		bool refused = ret == -EPERM || ret == -EACCES;

		/* err: what is missing and what would bring it (attr_proc.c) */
		a->no_bpf_reason = refused ? "refused" : "load_failed";
		mp_attr_say_no_bpf(a, ret < 0 ? -ret : EINVAL, err, errlen);
		snprintf(a->no_bpf, sizeof(a->no_bpf), "BPF %s: %s",
			 refused ? "refused" : "load failed", strerror(ret < 0 ? -ret : EINVAL));
		if (a->skel)
			memprobe_bpf__destroy(a->skel);
		a->skel = NULL;
	}
	/* No program at all: what the cgroup's files can tell. */
	if (a->no_bpf[0]) {
		plan(a, k, o->judge_all_rungs);
		memset(a->cat_ok, 1, sizeof(a->cat_ok));
	}
}

/*
 * Attach concern c's chosen rung. A refusal degrades the report, never the
 * run: the hook says what is lost and the ladder's polled file, if it has
 * one, stands in.
 */
static void attach_concern(struct mp_attr *a, int c)
{
	const struct ladder *l = &ladders[c];
	int i = a->chosen[c], first = a->nlinks;
	const struct rung *r = &l->rungs[i];

	for (int j = 0; r->kind != POLL && j < rung_nprogs(r); j++) {
		struct bpf_link *link = attach_prog(a, r, j);

		if (link) {
			a->links[a->nlinks++] = link;
			continue;
		}
		a->hooks[c].missing_reason = "attach_failed";
		snprintf(a->hooks[c].missing, sizeof(a->hooks[c].missing),
			 "%s: attach failed on %s: %s", r->label, r->fn[j], strerror(errno));
		snprintf(a->why_not[c][i], sizeof(a->why_not[c][i]),
			 "attach failed on %s: %s", r->fn[j], strerror(errno));
		/* half a rung would count half the events */
		while (a->nlinks > first)
			bpf_link__destroy(a->links[--a->nlinks]);
		break;
	}
	if (r->kind != POLL && !a->hooks[c].missing[0]) {
		use_rung(&a->hooks[c], r);
		return;
	}
	while (i < MAX_RUNGS && l->rungs[i].label && l->rungs[i].kind != POLL)
		i++;
	if (i == MAX_RUNGS || !l->rungs[i].label)
		return;
	a->chosen[c] = i;
	use_rung(&a->hooks[c], &l->rungs[i]);
	a->hooks[c].polled = true;
}

int mp_attr_start(const struct mp_attr_opts *o, struct mp_attr **out, char *err,
		  size_t errlen)
{
	struct mp_attr *a = calloc(1, sizeof(*a));
	struct mp_kfacts k;

	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->gone_lock, NULL);
	mp_kbtf_libbpf_quiet();
	a->ncpus = libbpf_num_possible_cpus();
	a->page_size = sysconf(_SC_PAGESIZE);
	a->fault_tracepoint = o->fault_tracepoint;
	a->memcg_from = o->memcg_from;
	a->stack_period = o->stack_sample_period;
	a->memcg_counters = o->memcg_from == MP_MEMCG_FROM_COUNTERS ||
			    (o->memcg_from == MP_MEMCG_FROM_AUTO &&
			     (o->cg ? o->cg->version : o->cg_version) != 1);
	denied(NULL); /* a word that names nothing is a typo: say so */
	if (errlen)
		err[0] = '\0';
	if (load_btf(a, o, &k, err, errlen)) {
		snprintf(a->no_bpf, sizeof(a->no_bpf), "%s", o->btf_path ? "--btf file unreadable" :
			 "no BTF (give --btf FILE)");
		a->no_bpf_reason = "no_btf";
		mp_attr_say_no_bpf(a, 0, err, errlen);
	}
	a->judged_all = o->judge_all_rungs;
	plan(a, &k, o->judge_all_rungs);
	memcpy(a->cat_ok, k.cat, sizeof(a->cat_ok));
	if (a->no_bpf[0]) /* no BTF to tell: memory.stat will */
		memset(a->cat_ok, 1, sizeof(a->cat_ok));
	if (o->cg) {
		a->cg = *o->cg;
		a->have_cg = true;
	}
	a->proc_tree_pid = o->proc_tree_pid;
	load_progs(a, o, &k, err, errlen);
	for (int c = 0; c < MP_NR_CONCERNS; c++)
		if (a->chosen[c] >= 0)
			attach_concern(a, c);
	polled_cats(a);
	mp_attr_proc_start(a); /* no program runs: the rows from /proc */
	/* the per-CPU verdicts may be kept only while migrations are seen */
	if (a->skel && a->hooks[MP_CONCERN_MIGRATE].hook[0] && !a->hooks[MP_CONCERN_MIGRATE].polled)
		a->skel->bss->migrate_tp_live = true;
	mp_attr_cow_start(a, o->stack_sample_period);
	*out = a;
	return 0;
}

int mp_attr_rung(const struct mp_attr *a, int concern, int i, struct mp_rung_info *out)
{
	const struct rung *r;

	if (concern < 0 || concern >= MP_NR_CONCERNS || i < 0 || i >= MAX_RUNGS ||
	    !(r = &ladders[concern].rungs[i])->label)
		return -ENOENT;
	out->kind = kind_names[r->kind];
	out->label = r->label;
	rung_target(r, out->target, sizeof(out->target));
	/* rungs below the chosen one were not judged, unless judge_all_rungs */
	out->why_not = i > a->chosen[concern] && a->chosen[concern] >= 0 && !a->judged_all ?
		       NULL : a->why_not[concern][i];
	out->used = i == a->chosen[concern] && a->hooks[concern].hook[0];
	return 0;
}

const char *mp_attr_btf_source(const struct mp_attr *a)
{
	return a->btf_source;
}

bool mp_attr_cat_available(const struct mp_attr *a, int cat, const char **why)
{
	if (why)
		*why = mp_cats[cat].item;
	return a->cat_ok[cat];
}

bool mp_attr_faults_from_stat(const struct mp_attr *a)
{
	const struct mp_hook *h = &a->hooks[MP_CONCERN_FAULTS];

	return h->polled || h->counters;
}

bool mp_attr_cat_bytes_read(const struct mp_attr *a, int cat)
{
	return a->skel && a->skel->rodata->cat_state_index[cat] != MP_NO_STATE_INDEX;
}

bool mp_attr_anon_unmapped_counted(const struct mp_attr *a)
{
	const struct mp_hook *f = &a->hooks[MP_CONCERN_FREE], *m = &a->hooks[MP_CONCERN_MEMCG];

	return a->skel && f->kind && !f->polled && m->kind && !m->polled &&
	       !a->cat_polled[MP_CAT_ANON];
}

bool mp_attr_cat_polled(const struct mp_attr *a, int cat)
{
	return a->cat_polled[cat];
}

const char *mp_attr_cat_polled_reason(const struct mp_attr *a, int cat)
{
	return a->cat_polled_reason[cat];
}

bool mp_attr_rows_from_proc(const struct mp_attr *a)
{
	return a && a->proc_rows;
}

bool mp_attr_cat_rows(const struct mp_attr *a, int cat)
{
	return a->cat_rows[cat];
}

const char *mp_attr_no_bpf(const struct mp_attr *a, const char **why)
{
	if (why)
		*why = a->no_bpf_line;
	return a->no_bpf[0] ? a->no_bpf_reason : NULL;
}

const struct mp_hook *mp_attr_hooks(const struct mp_attr *a)
{
	return a->hooks;
}

void mp_attr_stop(struct mp_attr *a)
{
	if (!a)
		return;
	mp_attr_cow_join(a);
	ring_buffer__free(a->oom_rb);
	for (int i = 0; i < a->nlinks; i++)
		bpf_link__destroy(a->links[i]);
	memprobe_bpf__destroy(a->skel);
	mp_attr_proc_stop(a);
	free(a->fault_base);
	free(a->gone);
	free(a->gone_stacks);
	pthread_mutex_destroy(&a->gone_lock);
	free(a);
}
