// SPDX-License-Identifier: GPL-2.0
/*
 * The attribution builder on hand-built plans and snapshots, no session:
 * the reconciliation sum, kernel_other, polled categories, top-N tasks with
 * the rest, attribution_missing's ids, kernel paths by class (symbolized
 * with the kallsyms fixture), page faults, charges and losses.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "attribution.h"
#include "doc.h"
#include "ksyms.h"
#include "render.h"
#include "unit.h"
#include <unistd.h>

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

#define PS 4096
#define PG(n) ((int64_t)(n) * PS)

#define CHECK_S64(got, want, what)                                         \
	do {                                                               \
		int64_t g_ = (got), w_ = (want);                           \
		CHECK(g_ == w_, "%s: got %" PRId64 ", want %" PRId64, what, g_, w_); \
	} while (0)

/* ---- reading the object back ------------------------------------------- */

#define ABSENT INT64_MIN

/* An integer: exact integers are raw JSON numbers (json.h); ABSENT when
 * missing or not a number. */
static int64_t num(const cJSON *it)
{
	if (cJSON_IsRaw(it) && it->valuestring)
		return strtoll(it->valuestring, NULL, 10);
	if (cJSON_IsNumber(it))
		return (int64_t)it->valuedouble;
	return ABSENT;
}

static int64_t jint(const cJSON *o, const char *name)
{
	return num(cJSON_GetObjectItemCaseSensitive(o, name));
}

static const char *jstr(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static bool jnull(const cJSON *o, const char *name)
{
	return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, name));
}

static const cJSON *jobj(const cJSON *o, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(o, name);
}

static const cJSON *find_named(const cJSON *arr, const char *key, const char *val)
{
	const cJSON *it;

	cJSON_ArrayForEach(it, arr)
		if (jstr(it, key) && strcmp(jstr(it, key), val) == 0)
			return it;
	return NULL;
}

/* The size of array member name (0 when absent), and its item i. */
static int nitems(const cJSON *o, const char *name)
{
	return cJSON_GetArraySize(jobj(o, name));
}

static const cJSON *item(const cJSON *o, const char *name, int i)
{
	return cJSON_GetArrayItem(jobj(o, name), i);
}

/* Item i of array member name, a string. */
static const char *sitem(const cJSON *o, const char *name, int i)
{
	const cJSON *it = item(o, name, i);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static const cJSON *hook_of(const cJSON *a, const char *concern)
{
	return find_named(jobj(a, "hooks"), "concern", concern);
}

/* The message of the first attribution_missing entry of this reason. */
static const char *miss_msg(const cJSON *a, const char *reason)
{
	return jstr(find_named(jobj(a, "attribution_missing"), "reason", reason), "message");
}

static const cJSON *cat_of(const cJSON *a, const char *name)
{
	return find_named(jobj(a, "categories"), "name", name);
}

static const cJSON *path_of(const cJSON *a, const char *arr, const char *path)
{
	return find_named(jobj(a, arr), "path", path);
}

/* An id field equal to want, or null when want is NULL. */
static bool id_is(const cJSON *o, const char *name, const char *want)
{
	const char *s = jstr(o, name);

	return want ? s && strcmp(s, want) == 0 : jnull(o, name);
}

/* How many attribution_missing entries carry these ids, each with a message. */
static int says_missing(const cJSON *a, const char *concern, const char *category,
			const char *reason)
{
	const cJSON *it;
	int n = 0;

	cJSON_ArrayForEach(it, jobj(a, "attribution_missing"))
		n += id_is(it, "concern", concern) && id_is(it, "category", category) &&
		     id_is(it, "reason", reason) && jstr(it, "message") && jstr(it, "message")[0];
	return n;
}

/* ---- hand-built inputs ---------------------------------------------------- */

/* the concerns' ids and names: the vocabulary's (vocab.h) */
static const char *const ids[MP_NR_CONCERNS] = {
#define ID_OF(ID, id, ...) [MP_CONCERN_##ID] = id,
	MP_CONCERNS(ID_OF)
#undef ID_OF
};
static const char *const names[MP_NR_CONCERNS] = {
#define NAME_OF(ID, id, name, ...) [MP_CONCERN_##ID] = name,
	MP_CONCERNS(NAME_OF)
#undef NAME_OF
};

/* the kallsyms fixture, captured on the 6.18 host; NULL if unreadable */
static struct mp_ksyms *fixture_ks;

struct fx {
	struct mp_hook hooks[MP_NR_CONCERNS];
	struct mp_task_row tasks[8];
	struct mp_stack_row stacks[8];
	struct mp_attr_snap growth;
	struct mp_attr_input in;
};

/* Every concern on a tracepoint, the charge hook on fentry; every category
 * kept by the kernel and seen by a hook; kallsyms read; no stacks. */
static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	for (int c = 0; c < MP_NR_CONCERNS; c++) {
		struct mp_hook *h = &f->hooks[c];

		h->concern = ids[c];
		h->name = names[c];
		h->kind = c == MP_CONCERN_CHARGE ? "fentry" : "tp_btf";
		snprintf(h->target, sizeof(h->target), c == MP_CONCERN_CHARGE ?
			 "try_charge_memcg" : "group:%s", ids[c]);
		snprintf(h->hook, sizeof(h->hook), c == MP_CONCERN_CHARGE ?
			 "fentry try_charge_memcg" : "tracepoint group:%s", ids[c]);
	}
	for (int k = 0; k < MP_NR_CATS; k++)
		f->in.cats[k] = (struct mp_attr_cat_plan){ .available = true, .item = "ITEM" };
	f->growth.tasks = f->tasks;
	f->growth.stacks = f->stacks;
	f->in.hooks = f->hooks;
	f->in.page_size = PS;
	f->in.ksyms = fixture_ks;
	f->in.growth = &f->growth;
	f->in.top = 5;
	f->in.span = "in a test";
}

static struct mp_task_row *add_task(struct fx *f, uint32_t tgid, const char *comm)
{
	struct mp_task_row *t = &f->tasks[f->growth.ntasks++];

	t->tgid = tgid;
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

static void no_hook(struct mp_hook *h, const char *reason, const char *missing)
{
	h->kind = NULL;
	h->target[0] = h->hook[0] = '\0';
	h->missing_reason = reason;
	snprintf(h->missing, sizeof(h->missing), "%s", missing);
}

/* ---- the tests ------------------------------------------------------------ */

static void test_reconcile_kernel_total(void)
{
	struct fx f;
	struct mp_task_row *t;
	cJSON *a, *rec;

	fx_init(&f);
	t = add_task(&f, 100, "w");
	t->charge_bytes[MP_CAT_ANON] = PG(1000);
	t->charge_bytes[MP_CAT_FILE] = PG(200);
	t->charge_bytes[MP_CAT_SHMEM] = PG(50);  /* inside file: not added again */
	t->charge_bytes[MP_CAT_SOCK] = PG(7);
	t->charge_bytes[MP_CAT_KERNEL] = PG(90);
	t->charge_bytes[MP_CAT_PAGETABLES] = PG(20); /* inside kernel */
	t->charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = PG(30);
	t->charge_bytes[MP_CAT_KERNEL_STACK] = PG(4);
	f.in.measured_growth_bytes = PG(1300);
	a = mp_report_attribution(&f.in);
	CHECK(a != NULL, "builds");
	rec = (cJSON *)jobj(a, "reconciliation");
	CHECK_S64(jint(rec, "attributed_bytes"), PG(1000 + 200 + 90 + 7),
		  "kernel total: attributed = anon + file + kernel + sock");
	CHECK_S64(jint(rec, "measured_growth_bytes"), PG(1300), "measured growth as given");
	CHECK_S64(jint(rec, "unattributed_bytes"), PG(1300 - 1297),
		  "unattributed = measured - attributed");
	CHECK_STR(jstr(rec, "attributed_as"), "anon + file + kernel + sock", "attributed_as");
	CHECK_STR(jstr(rec, "span"), "in a test", "span");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "growth_bytes"), PG(90 - 20 - 30 - 4),
		  "kernel_other = kernel - itemised parts");
	CHECK(cJSON_IsTrue(jobj(cat_of(a, "kernel_other"), "available")),
	      "kernel_other available with a kernel total");
	CHECK(!jobj(cat_of(a, "anon"), "retained_bytes"), "no retained snapshot: none retained");
	CHECK_U64(cJSON_GetArraySize(jobj(a, "attribution_missing")), 0,
		  "nothing missing with every hook and category");
	CHECK_S64(mp_attributed_bytes((int64_t[MP_NR_CATS]){ [MP_CAT_ANON] = 1, [MP_CAT_FILE] = 2,
			[MP_CAT_SOCK] = 4, [MP_CAT_KERNEL] = 8, [MP_CAT_PAGETABLES] = 16 }, true),
		  15, "mp_attributed_bytes with a kernel total");
	cJSON_Delete(a);
}

static void test_reconcile_itemised(void)
{
	struct fx f;
	struct mp_task_row *t;
	struct mp_attr_snap ret = { 0 };
	struct mp_task_row rt = { .tgid = 100 };
	cJSON *a;

	fx_init(&f);
	f.in.cats[MP_CAT_KERNEL] = (struct mp_attr_cat_plan){ .available = false,
							      .item = "MEMCG_KMEM" };
	t = add_task(&f, 100, "w");
	t->charge_bytes[MP_CAT_ANON] = PG(1000);
	t->charge_bytes[MP_CAT_FILE] = PG(200);
	t->charge_bytes[MP_CAT_SOCK] = PG(7);
	t->charge_bytes[MP_CAT_PAGETABLES] = PG(20);
	t->charge_bytes[MP_CAT_SEC_PAGETABLES] = PG(1);
	t->charge_bytes[MP_CAT_KERNEL_STACK] = PG(4);
	t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = PG(10);
	t->charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = PG(30);
	t->charge_bytes[MP_CAT_PERCPU] = PG(2);
	t->charge_bytes[MP_CAT_VMALLOC] = PG(3);
	t->charge_bytes[MP_CAT_SHMEM] = PG(50);
	rt.charge_bytes[MP_CAT_ANON] = PG(10);
	ret.tasks = &rt;
	ret.ntasks = 1;
	f.in.retained = &ret;
	f.in.measured_growth_bytes = PG(1280);
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(jobj(a, "reconciliation"), "attributed_bytes"),
		  PG(1000 + 200 + 7 + 20 + 1 + 4 + 10 + 30 + 2 + 3),
		  "no kernel total: anon + file + sock + the itemised kernel categories");
	CHECK_STR(jstr(jobj(a, "reconciliation"), "attributed_as"),
		  "anon + file + sock + the itemised kernel categories", "attributed_as");
	CHECK_S64(jint(jobj(a, "reconciliation"), "unattributed_bytes"), PG(1280 - 1277),
		  "unattributed without a kernel total");
	CHECK(cJSON_IsFalse(jobj(cat_of(a, "kernel_other"), "available")),
	      "kernel_other unavailable without a kernel total");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "growth_bytes"), 0, "kernel_other growth 0");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "retained_bytes"), 0, "kernel_other retained 0");
	CHECK_S64(jint(cat_of(a, "anon"), "retained_bytes"), PG(10), "anon retained");
	CHECK(cJSON_IsFalse(jobj(cat_of(a, "kernel"), "available")), "kernel unavailable");
	CHECK_S64(says_missing(a, "memcg", "kernel", "no_stat_item"), 1,
		  "missing: {memcg, kernel, no_stat_item}");
	CHECK_STR(jstr(cJSON_GetArrayItem(jobj(a, "attribution_missing"), 0), "message"),
		  "kernel: this kernel keeps no per-memcg count (no MEMCG_KMEM)",
		  "no_stat_item message, as the text prints it");
	cJSON_Delete(a);
}

static void test_kernel_other(void)
{
	struct fx f;
	struct mp_task_row *t;
	struct mp_attr_snap ret = { 0 };
	struct mp_task_row rt = { .tgid = 100 };
	cJSON *a;

	fx_init(&f);
	t = add_task(&f, 100, "w");
	t->charge_bytes[MP_CAT_KERNEL] = PG(100);
	t->charge_bytes[MP_CAT_PAGETABLES] = PG(10);
	t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = PG(5);
	t->charge_bytes[MP_CAT_SOCK] = PG(40); /* charged apart from kmem */
	t = add_task(&f, 200, "v");
	t->charge_bytes[MP_CAT_KERNEL] = PG(20);
	t->charge_bytes[MP_CAT_VMALLOC] = PG(3);
	t->charge_bytes[MP_CAT_PERCPU] = -PG(1);
	rt.charge_bytes[MP_CAT_KERNEL] = PG(12);
	rt.charge_bytes[MP_CAT_PAGETABLES] = PG(2);
	ret.tasks = &rt;
	ret.ntasks = 1;
	f.in.retained = &ret;
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(cat_of(a, "kernel"), "growth_bytes"), PG(120), "kernel summed over tasks");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "growth_bytes"), PG(120 - 10 - 5 - 3 + 1),
		  "kernel_other = kernel - itemised (sock not a part)");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "retained_bytes"), PG(12 - 2),
		  "kernel_other retained = kernel - itemised, retained");
	CHECK_U64(cJSON_GetArraySize(jobj(cat_of(a, "kernel_other"), "tasks")), 0,
		  "kernel_other has no tasks");
	CHECK(cJSON_IsArray(jobj(cat_of(a, "kernel_other"), "top_stacks")),
	      "kernel_other has top_stacks (class other)");
	CHECK(!jobj(cat_of(a, "anon"), "top_stacks") && !jobj(cat_of(a, "kernel"), "top_stacks"),
	      "anon, file and kernel have no top_stacks");
	CHECK_U64(cJSON_GetArraySize(jobj(a, "categories")), MP_NR_CATS + 1,
		  "every category and kernel_other");
	cJSON_Delete(a);
}

static void test_polled(void)
{
	struct fx f;
	struct mp_task_row *t;
	struct mp_attr_snap ret = { .have_stat = true };
	cJSON *a;

	fx_init(&f);
	no_hook(&f.hooks[MP_CONCERN_MEMCG], "polled", "no BPF hook (tp_btf absent)");
	f.hooks[MP_CONCERN_MEMCG].kind = "poll";
	f.hooks[MP_CONCERN_MEMCG].polled = true;
	snprintf(f.hooks[MP_CONCERN_MEMCG].target, 96, "memory.stat");
	snprintf(f.hooks[MP_CONCERN_MEMCG].hook, 96, "polling memory.stat (totals only)");
	for (int k = 0; k < MP_NR_CATS; k++) {
		f.in.cats[k].polled = true;
		f.in.cats[k].polled_reason = "polled";
	}
	/* the hooks' counts are not what a polled category reports */
	t = add_task(&f, 100, "w");
	t->charge_bytes[MP_CAT_ANON] = PG(999);
	f.growth.have_stat = true;
	for (int k = 0; k < MP_NR_CATS; k++)
		f.growth.stat.have[k] = k != MP_CAT_SOCK; /* v1: no sock key */
	f.growth.stat.bytes[MP_CAT_ANON] = PG(500);
	f.growth.stat.bytes[MP_CAT_FILE] = PG(60);
	f.growth.stat.bytes[MP_CAT_KERNEL] = PG(30);
	f.growth.stat.bytes[MP_CAT_PAGETABLES] = PG(10);
	ret.stat.have[MP_CAT_ANON] = true;
	ret.stat.bytes[MP_CAT_ANON] = PG(5);
	f.in.retained = &ret;
	f.in.measured_growth_bytes = PG(590);
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(cat_of(a, "anon"), "growth_bytes"), PG(500), "polled anon from memory.stat");
	CHECK_STR(jstr(cat_of(a, "anon"), "source"), "memory.stat", "polled anon's source");
	CHECK_S64(jint(cat_of(a, "anon"), "retained_bytes"), PG(5), "polled anon retained");
	CHECK_S64(jint(cat_of(a, "file"), "retained_bytes"), 0,
		  "polled file retained: no key in the retained stat, 0");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "growth_bytes"), PG(20),
		  "kernel_other from polled figures");
	CHECK_S64(jint(jobj(a, "reconciliation"), "attributed_bytes"), PG(590),
		  "reconciliation of polled figures");
	CHECK(cJSON_IsFalse(jobj(cat_of(a, "sock"), "available")),
	      "polled without the key: unavailable");
	CHECK(!jobj(cat_of(a, "sock"), "source"), "unavailable: no source");
	CHECK_S64(says_missing(a, "memcg", "sock", "no_stat_key"), 1,
		  "missing: {memcg, sock, no_stat_key}");
	CHECK_S64(says_missing(a, "memcg", NULL, "polled"), 1, "missing: {memcg, null, polled}");
	CHECK_U64(cJSON_GetArraySize(jobj(a, "attribution_missing")), 2, "nothing else missing");
	CHECK_STR(miss_msg(a, "no_stat_key"),
		  "sock: no hook sees it and this cgroup's memory.stat has no such key",
		  "no_stat_key message");
	CHECK_STR(miss_msg(a, "polled"), "memcg stat updates: no BPF hook (tp_btf absent)",
		  "polled message: name: missing");
	CHECK_STR(jstr(hook_of(a, "memcg"), "kind"), "poll", "polled hook's kind");
	CHECK(cJSON_IsTrue(jobj(hook_of(a, "memcg"), "polled")), "polled hook says polled");
	CHECK_STR(jstr(hook_of(a, "memcg"), "missing_reason"), "polled",
		  "polled hook's missing_reason");
	cJSON_Delete(a);
}

/* No BPF: memory.stat's totals, split by process from /proc's rows (v1:
 * no pagetables or kernel_stack key, so those are the rows' alone); the
 * rows say their source, an exited one is marked, the processes' figures
 * are listed with the gone one's last, and attribution_missing says why
 * there is no BPF and what the rows cannot tell. */
static void test_proc_rows(void)
{
	struct mp_proc_row procs[2] = {
		{ .pid = 100, .comm = "w", .cmdline = "w --big", .rss_anon_bytes = PG(480),
		  .pte_bytes = PG(2), .threads = 2, .kernel_stack_bytes = 32768, .source = 1 },
		{ .pid = 101, .comm = "gone", .rss_anon_bytes = PG(9), .gone = true,
		  .exited = true, .source = 1 },
	};
	const char *line = "BPF refused (Operation not permitted): memprobe's programs need "
			   "CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN, ...";
	const cJSON *pr, *tk;
	struct mp_task_row *t;
	struct fx f;
	cJSON *a;

	fx_init(&f);
	no_hook(&f.hooks[MP_CONCERN_MEMCG], "polled", "no BPF hook (BPF refused)");
	f.hooks[MP_CONCERN_MEMCG].polled = true;
	for (int k = 0; k < MP_NR_CATS; k++)
		f.in.cats[k].polled = true;
	f.in.cats[MP_CAT_ANON].rows = f.in.cats[MP_CAT_PAGETABLES].rows = true;
	f.in.cats[MP_CAT_KERNEL].rows = true;
	f.in.no_bpf_reason = "refused";
	f.in.no_bpf_line = line;
	t = add_task(&f, 100, "w");
	t->source = MP_ROW_PROC;
	t->charge_bytes[MP_CAT_ANON] = PG(480);
	t->charge_bytes[MP_CAT_PAGETABLES] = PG(1);
	t->charge_bytes[MP_CAT_KERNEL] = PG(1);
	t = add_task(&f, 101, "gone");
	t->source = MP_ROW_PROC;
	t->gone = true;
	t->charge_bytes[MP_CAT_ANON] = -PG(9);
	f.growth.have_stat = true;
	f.growth.stat.have[MP_CAT_ANON] = f.growth.stat.have[MP_CAT_KERNEL] = true;
	f.growth.stat.bytes[MP_CAT_ANON] = PG(470);
	f.growth.stat.bytes[MP_CAT_KERNEL] = PG(3);
	f.growth.procs = procs;
	f.growth.nprocs = 2;
	f.growth.stack_bytes = 16384;
	f.growth.stack_source = "x86-64's THREAD_SIZE";
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(cat_of(a, "anon"), "growth_bytes"), PG(470), "proc: anon's total is memory.stat's");
	CHECK_STR(jstr(cat_of(a, "anon"), "source"), "memory.stat", "proc: ... and says so");
	tk = item(cat_of(a, "anon"), "tasks", 0);
	CHECK_S64(jint(tk, "bytes"), PG(480), "proc: the process's share from /proc");
	CHECK_STR(jstr(tk, "source"), "proc", "proc: the row says its source");
	tk = item(cat_of(a, "anon"), "tasks", 1);
	CHECK(cJSON_IsTrue(jobj(tk, "exited")), "proc: the exited process marked");
	CHECK_S64(jint(cat_of(a, "pagetables"), "growth_bytes"), PG(1),
		  "proc: pagetables without a memory.stat key: the rows' sum");
	CHECK_STR(jstr(cat_of(a, "pagetables"), "source"), "proc", "proc: ... from /proc");
	CHECK(cJSON_IsTrue(jobj(cat_of(a, "pagetables"), "available")), "proc: ... available");
	CHECK_S64(says_missing(a, "memcg", "pagetables", "no_stat_key"), 0,
		  "proc: pagetables not missing");
	CHECK_S64(says_missing(a, "memcg", "sock", "no_stat_key"), 1, "proc: sock still missing");
	CHECK_S64(jint(cat_of(a, "kernel_other"), "growth_bytes"), PG(2),
		  "proc: kernel_other is memory.stat's kernel less the rows' page tables");
	CHECK_STR(miss_msg(a, "no_bpf"), line, "proc: why no BPF, and what would bring it");
	CHECK(miss_msg(a, "proc") && strstr(miss_msg(a, "proc"), "approximate"),
	      "proc: what the rows cannot tell");
	pr = jobj(a, "processes");
	CHECK(cJSON_IsObject(pr), "proc: the processes' figures");
	CHECK_S64(jint(pr, "count"), 2, "proc: both processes");
	CHECK_S64(jint(pr, "exited"), 1, "proc: one exited");
	CHECK_S64(jint(pr, "stack_size_bytes"), 16384, "proc: the stack size");
	CHECK_STR(jstr(pr, "stack_size_source"), "x86-64's THREAD_SIZE", "proc: ... and whence");
	tk = item(pr, "top", 0);
	CHECK_STR(jstr(tk, "cmdline"), "w --big", "proc: the largest first, its cmdline");
	CHECK_S64(jint(tk, "kernel_stack_bytes"), 32768, "proc: its stacks");
	CHECK(jnull(tk, "anon_huge_bytes"), "proc: smaps_rollup not read: null");
	tk = item(pr, "top", 1);
	CHECK_STR(jstr(tk, "state"), "exited", "proc: the gone one, exited");
	CHECK_S64(jint(tk, "rss_anon_bytes"), PG(9), "proc: ... with its last figures");
	cJSON_Delete(a);

	/* BPF's rows: no processes object, the rows' source bpf */
	fx_init(&f);
	add_task(&f, 7, "b")->charge_bytes[MP_CAT_ANON] = PG(1);
	a = mp_report_attribution(&f.in);
	CHECK(!jobj(a, "processes"), "bpf: no processes object");
	CHECK_STR(jstr(item(cat_of(a, "anon"), "tasks", 0), "source"), "bpf", "bpf: the rows' source");
	CHECK(!miss_msg(a, "no_bpf"), "bpf: nothing said of BPF");
	cJSON_Delete(a);
}

/* Some categories polled while the memcg hook is attached: clone (5.10),
 * rounded (the memcg tracepoints). */
static void test_partly_polled(void)
{
	struct fx f;
	cJSON *a;

	fx_init(&f);
	f.growth.have_stat = true;
	f.growth.stat.have[MP_CAT_PERCPU] = f.growth.stat.have[MP_CAT_SLAB_RECLAIMABLE] = true;
	f.growth.stat.bytes[MP_CAT_PERCPU] = PG(2);
	f.in.cats[MP_CAT_PERCPU].polled = true;
	f.in.cats[MP_CAT_PERCPU].polled_reason = "clone";
	f.in.cats[MP_CAT_SLAB_RECLAIMABLE].polled = true;
	f.in.cats[MP_CAT_SLAB_RECLAIMABLE].polled_reason = "rounded";
	f.growth.totals.rounded_updates[MP_CAT_SLAB_RECLAIMABLE] = 40; /* its pages, unused */
	/* no key for it: clone and no_stat_key both */
	f.in.cats[MP_CAT_SOCK].polled = true;
	f.in.cats[MP_CAT_SOCK].polled_reason = "clone";
	a = mp_report_attribution(&f.in);
	CHECK_S64(says_missing(a, "memcg", "percpu", "clone"), 1,
		  "missing: {memcg, percpu, clone}");
	CHECK_S64(says_missing(a, "memcg", "slab_reclaimable", "rounded"), 1,
		  "missing: {memcg, slab_reclaimable, rounded}");
	CHECK_S64(says_missing(a, "memcg", "sock", "clone"), 1, "missing: {memcg, sock, clone}");
	CHECK_S64(says_missing(a, "memcg", "sock", "no_stat_key"), 1,
		  "missing: {memcg, sock, no_stat_key}");
	CHECK_U64(cJSON_GetArraySize(jobj(a, "attribution_missing")), 4, "four entries");
	CHECK_STR(miss_msg(a, "rounded"),
		  "memcg stat updates: slab_reclaimable: totals from memory.stat, per-process "
		  "shares approximate (the memcg tracepoints pass these byte counts rounded "
		  "to pages)", "rounded message");
	CHECK(!jobj(cat_of(a, "slab_reclaimable"), "estimated"),
	      "polled: memory.stat's figure, no estimate");
	CHECK_STR(jstr(item(a, "attribution_missing", 0), "category"), "slab_reclaimable",
		  "in category order: slab_reclaimable's first");
	CHECK_STR(jstr(item(a, "attribution_missing", 1), "category"), "percpu",
		  "then percpu's");
	CHECK_S64(jint(cat_of(a, "percpu"), "growth_bytes"), PG(2), "clone percpu from stat");
	CHECK_STR(jstr(cat_of(a, "percpu"), "source"), "memory.stat", "clone percpu's source");
	CHECK(!jobj(cat_of(a, "anon"), "source"), "a hooked category has no source");
	CHECK(!jobj(hook_of(a, "memcg"), "missing_reason"),
	      "the attached memcg hook has no missing_reason");
	cJSON_Delete(a);
}

static void rawify_numbers(cJSON *it);

/* The text report's category row of name in attribution a (static storage). */
static const char *category_line(const cJSON *a, const char *name)
{
	static char line[512];
	cJSON *doc = cJSON_Duplicate(a, true);
	struct mp_rd rd = { .root = doc };
	char *out = NULL, *at, *nl, key[64];
	size_t len;
	FILE *f = open_memstream(&out, &len);

	line[0] = '\0';
	snprintf(key, sizeof(key), "\n  %s ", name);
	if (doc)
		rawify_numbers(doc->child);
	if (f && doc)
		mp_text_attribution(doc, f, &rd);
	if (f)
		fclose(f);
	if (out && (at = strstr(out, key))) {
		at++;
		nl = strchr(at, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - at) : (int)strlen(at), at);
	}
	CHECK(mp_rd_ok(&rd), "the attribution renders as text: %s", rd.err);
	free(out);
	cJSON_Delete(doc);
	return line;
}

/*
 * Byte items the memcg tracepoints pass rounded, read from the kernel's
 * counter instead: a figure with rounded updates is estimated, with its
 * bound (kernel_other carries its parts'); a counter that disagreed is
 * taken from memory.stat where the cgroup has the key, else has no known
 * bound; a count below what the cgroup held at the start (v1: of kernel)
 * is no figure, in JSON and in the text.
 */
static void test_byte_estimates(void)
{
	struct mp_attr_snap ret = { 0 };
	struct mp_task_row rt = { .tgid = 100 };
	struct mp_cg_stat start = { 0 };
	struct mp_task_row *t;
	const cJSON *c;
	struct fx f;
	cJSON *a;

	fx_init(&f);
	for (int k = MP_CAT_SLAB_RECLAIMABLE; k <= MP_CAT_PERCPU; k++)
		f.in.cats[k].bytes_read = true;
	t = add_task(&f, 100, "w");
	t->charge_bytes[MP_CAT_KERNEL] = PG(100);
	t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = PG(60) + 1000;
	t->charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = PG(20) + 8;
	t->charge_bytes[MP_CAT_PERCPU] = 96;
	f.growth.totals.exact_updates[MP_CAT_SLAB_RECLAIMABLE] = 5000;
	f.growth.totals.rounded_updates[MP_CAT_SLAB_RECLAIMABLE] = 3;
	f.growth.totals.mismatched_updates[MP_CAT_SLAB_RECLAIMABLE] = 40;
	f.growth.totals.exact_updates[MP_CAT_SLAB_UNRECLAIMABLE] = 900;
	f.growth.totals.rounded_updates[MP_CAT_SLAB_UNRECLAIMABLE] = 2;
	f.growth.totals.exact_updates[MP_CAT_PERCPU] = 12;
	a = mp_report_attribution(&f.in);
	c = cat_of(a, "slab_reclaimable");
	CHECK(cJSON_IsTrue(jobj(c, "estimated")), "3 rounded updates: estimated");
	CHECK_S64(jint(c, "bound_bytes"), PG(3), "... within 3 pages");
	CHECK(!jobj(c, "source") && !jobj(c, "below_floor"), "... BPF's, no floor known");
	CHECK(!jobj(cat_of(a, "percpu"), "estimated"), "every update exact: no estimate");
	CHECK(!jobj(cat_of(a, "anon"), "estimated"), "page items: exact");
	c = cat_of(a, "kernel_other");
	CHECK_S64(jint(c, "growth_bytes"), PG(100) - PG(80) - 1000 - 8 - 96,
		  "kernel_other from the bytes");
	CHECK_S64(jint(c, "bound_bytes"), PG(5), "kernel_other carries its parts' bounds");
	CHECK_STR(category_line(a, "slab_reclaimable"),
		  "  slab_reclaimable     ~241.0 KiB \u00b112.0 KiB               w[100] 241.0 KiB",
		  "text: marked, with its bound in the growth's cell, not the tasks'");
	CHECK_U64(cJSON_GetArraySize(jobj(a, "attribution_missing")), 0, "nothing missing");
	c = jobj(jobj(a, "events"), "byte_item_updates");
	CHECK_EQ_INT(jint(c, "exact"), 5912,
		     "events: the byte items' updates summed: %" PRId64 " %" PRId64 " %" PRId64,
		     jint(c, "exact"), jint(c, "rounded"), jint(c, "mismatched"));
	CHECK_EQ_INT(jint(c, "rounded"), 5,
		     "events: the byte items' updates summed: %" PRId64 " %" PRId64 " %" PRId64,
		     jint(c, "exact"), jint(c, "rounded"), jint(c, "mismatched"));
	CHECK_EQ_INT(jint(c, "mismatched"), 40,
		     "events: the byte items' updates summed: %" PRId64 " %" PRId64 " %" PRId64,
		     jint(c, "exact"), jint(c, "rounded"), jint(c, "mismatched"));
	cJSON_Delete(a);

	/* a counter that disagreed: memory.stat's where it has the key (v2) */
	f.growth.totals.mismatched_updates[MP_CAT_SLAB_RECLAIMABLE] = 400;
	f.growth.have_stat = true;
	f.growth.stat.have[MP_CAT_SLAB_RECLAIMABLE] = true;
	f.growth.stat.bytes[MP_CAT_SLAB_RECLAIMABLE] = PG(61);
	a = mp_report_attribution(&f.in);
	c = cat_of(a, "slab_reclaimable");
	CHECK_S64(jint(c, "growth_bytes"), PG(61), "disagreeing counter: memory.stat's total");
	CHECK_STR(jstr(c, "source"), "memory.stat", "... said");
	CHECK(!jobj(c, "estimated"), "... the kernel's own count");
	CHECK_S64(says_missing(a, "memcg", "slab_reclaimable", "rounded"), 1,
		  "... and the missing entry says shares are approximate");
	cJSON_Delete(a);

	/* ... and no bound known where it has none (v1) */
	f.growth.stat.have[MP_CAT_SLAB_RECLAIMABLE] = false;
	a = mp_report_attribution(&f.in);
	c = cat_of(a, "slab_reclaimable");
	CHECK(cJSON_IsTrue(jobj(c, "estimated")) && jnull(c, "bound_bytes"),
	      "disagreeing counter, no key: estimated, bound null");
	CHECK(jnull(cat_of(a, "kernel_other"), "bound_bytes"), "kernel_other's bound unknown too");
	CHECK(strstr(category_line(a, "slab_reclaimable"), "(error unknown)") != NULL,
	      "text: error unknown");
	CHECK_S64(says_missing(a, "memcg", "slab_reclaimable", "rounded"), 1, "missing: rounded");
	cJSON_Delete(a);

	/* below what the cgroup held at the start: v1, kernel only */
	f.growth.totals.mismatched_updates[MP_CAT_SLAB_RECLAIMABLE] = 0;
	t->charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = -PG(2600);
	start.have[MP_CAT_KERNEL] = true;
	start.bytes[MP_CAT_KERNEL] = PG(512);
	start.kernel_counter = true; /* v1's kmem usage: no flush lag */
	f.in.start_stat = &start;
	rt.charge_bytes[MP_CAT_SLAB_UNRECLAIMABLE] = -PG(513);
	rt.charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = -PG(511);
	ret.tasks = &rt;
	ret.ntasks = 1;
	f.in.retained = &ret;
	a = mp_report_attribution(&f.in);
	c = cat_of(a, "slab_unreclaimable");
	CHECK(cJSON_IsTrue(jobj(c, "below_floor")), "-2600 pages where kernel held 512: below");
	CHECK_S64(jint(c, "floor_bytes"), -PG(512), "... the floor: minus kernel at the start");
	CHECK(cJSON_IsTrue(jobj(c, "estimated")), "... so no figure");
	CHECK(cJSON_IsTrue(jobj(c, "retained_below_floor")), "left after -513 pages: below too");
	CHECK(!jobj(cat_of(a, "slab_reclaimable"), "below_floor") &&
	      !jobj(cat_of(a, "slab_reclaimable"), "retained_below_floor"),
	      "a count above the floor stays a figure");
	CHECK_STR(category_line(a, "slab_unreclaimable"),
		  "  slab_unreclaimable                    n/a          n/a  (counted -10.2 MiB, below the "
		  "-2.0 MiB the kernel allows: events lost) w[100] -10.2 MiB",
		  "text: no figure, and why");
	cJSON_Delete(a);

	/* an estimate of unknown error below the floor is no figure either */
	f.growth.totals.mismatched_updates[MP_CAT_SLAB_RECLAIMABLE] = 400;
	t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = -PG(600);
	a = mp_report_attribution(&f.in);
	c = cat_of(a, "slab_reclaimable");
	CHECK(jnull(c, "bound_bytes") && cJSON_IsTrue(jobj(c, "below_floor")),
	      "bound unknown, -600 pages where kernel held 512: below its floor");
	cJSON_Delete(a);

	/* v2: the floor is memory.stat's key, which lags the exact counters
	 * by up to the kernel's flush batch (a 7.3 guest: 11384 bytes of slab
	 * read at the start, BPF's exact count then -61520) */
	{
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		int64_t lag = 2 * 128 * (int64_t)(cpus > 0 ? cpus : 1) * PG(1);

		f.growth.totals.mismatched_updates[MP_CAT_SLAB_RECLAIMABLE] = 0;
		f.growth.totals.rounded_updates[MP_CAT_SLAB_RECLAIMABLE] = 0; /* exact: no bound */
		f.in.retained = NULL;
		start.kernel_counter = false;
		start.have[MP_CAT_SLAB_RECLAIMABLE] = true;
		start.bytes[MP_CAT_SLAB_RECLAIMABLE] = 11384;
		t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = -61520;
		a = mp_report_attribution(&f.in);
		c = cat_of(a, "slab_reclaimable");
		CHECK(!jobj(c, "below_floor"), "v2: -61520 where memory.stat read 11384: a figure");
		cJSON_Delete(a);
		t->charge_bytes[MP_CAT_SLAB_RECLAIMABLE] = -11384 - lag - 1;
		a = mp_report_attribution(&f.in);
		c = cat_of(a, "slab_reclaimable");
		CHECK(cJSON_IsTrue(jobj(c, "below_floor")), "v2: below the key and its lag: below");
		CHECK_S64(jint(c, "floor_bytes"), -11384 - lag, "... the floor: the key less the lag");
		cJSON_Delete(a);
	}
}

static void test_top_tasks(void)
{
	struct fx f;
	const cJSON *tk, *e;
	cJSON *a;

	fx_init(&f);
	f.in.top = 2;
	add_task(&f, 10, "small")->charge_bytes[MP_CAT_ANON] = PG(1);
	add_task(&f, 11, "big")->charge_bytes[MP_CAT_ANON] = PG(100);
	add_task(&f, 12, "freer")->charge_bytes[MP_CAT_ANON] = -PG(50);
	add_task(&f, 13, "mid")->charge_bytes[MP_CAT_ANON] = PG(20);
	add_task(&f, 14, "none")->charge_bytes[MP_CAT_FILE] = PG(3);
	add_task(&f, 15, "tiny")->charge_bytes[MP_CAT_ANON] = PG(2);
	a = mp_report_attribution(&f.in);
	tk = jobj(cat_of(a, "anon"), "tasks");
	CHECK_U64(cJSON_GetArraySize(tk), 3, "top 2 and the rest");
	e = cJSON_GetArrayItem(tk, 0);
	CHECK_S64(jint(e, "pid"), 11, "largest first");
	CHECK_STR(jstr(e, "comm"), "big", "largest's comm");
	CHECK_S64(jint(e, "bytes"), PG(100), "largest's bytes");
	e = cJSON_GetArrayItem(tk, 1);
	CHECK_S64(jint(e, "pid"), 12, "by size either sign: a freer second");
	CHECK_S64(jint(e, "bytes"), -PG(50), "a negative share kept negative");
	e = cJSON_GetArrayItem(tk, 2);
	CHECK_STR(jstr(e, "comm"), "(rest)", "then (rest)");
	CHECK(jnull(e, "pid"), "(rest)'s pid is null");
	CHECK_S64(jint(e, "bytes"), PG(20 + 2 + 1), "(rest) sums the others, none of file's");
	CHECK_S64(jint(cat_of(a, "anon"), "growth_bytes"), PG(100 - 50 + 20 + 2 + 1),
		  "growth sums every task");
	tk = jobj(cat_of(a, "file"), "tasks");
	CHECK_U64(cJSON_GetArraySize(tk), 1, "within top: no (rest)");
	CHECK_S64(jint(cJSON_GetArrayItem(tk, 0), "pid"), 14, "file's task");
	CHECK_U64(cJSON_GetArraySize(jobj(cat_of(a, "shmem"), "tasks")), 0, "no shares: no tasks");
	cJSON_Delete(a);

	/* the rest summing to zero is not listed */
	fx_init(&f);
	f.in.top = 1;
	add_task(&f, 1, "a")->charge_bytes[MP_CAT_ANON] = PG(10);
	add_task(&f, 2, "b")->charge_bytes[MP_CAT_ANON] = PG(3);
	add_task(&f, 3, "c")->charge_bytes[MP_CAT_ANON] = -PG(3);
	a = mp_report_attribution(&f.in);
	CHECK_U64(cJSON_GetArraySize(jobj(cat_of(a, "anon"), "tasks")), 1,
		  "a rest of 0 bytes is left out");
	cJSON_Delete(a);

	/* a process that moved out: named, with its pid, as such */
	static const uint32_t moved[] = { 2 };

	fx_init(&f);
	add_task(&f, 1, "stays")->charge_bytes[MP_CAT_ANON] = PG(10);
	add_task(&f, 2, "left")->charge_bytes[MP_CAT_ANON] = PG(8);
	add_task(&f, 0, "(other context)")->charge_bytes[MP_CAT_ANON] = -PG(1);
	f.in.moved_out = moved;
	f.in.nmoved = 1;
	a = mp_report_attribution(&f.in);
	tk = jobj(cat_of(a, "anon"), "tasks");
	e = cJSON_GetArrayItem(tk, 1);
	CHECK_S64(jint(e, "pid"), 2, "the moved-out process keeps its pid");
	CHECK_STR(jstr(e, "comm"), "left", "... and its comm");
	CHECK(cJSON_IsTrue(jobj(e, "moved_out")), "... and says it moved out");
	CHECK(!jobj(cJSON_GetArrayItem(tk, 0), "moved_out"), "one that stays says nothing");
	CHECK(!jobj(cJSON_GetArrayItem(tk, 2), "moved_out"), "nor (other context)");
	cJSON_Delete(a);
}

static void test_missing_ids(void)
{
	struct fx f;
	const cJSON *h, *m;
	cJSON *a;

	fx_init(&f);
	no_hook(&f.hooks[MP_CONCERN_ALLOC], "no_hook",
		"no usable hook (tp_btf mm_page_alloc: absent)");
	no_hook(&f.hooks[MP_CONCERN_OOM], "attach_failed",
		"raw tracepoint oom:mark_victim: attach failed on mark_victim: Invalid argument");
	f.in.cats[MP_CAT_PAGETABLES] = (struct mp_attr_cat_plan){ .item = "NR_PAGETABLE" };
	f.in.cats[MP_CAT_VMALLOC] = (struct mp_attr_cat_plan){ .item = "MEMCG_VMALLOC" };
	f.in.ksyms = NULL;
	a = mp_report_attribution(&f.in);
	m = jobj(a, "attribution_missing");
	CHECK_S64(says_missing(a, "alloc", NULL, "no_hook"), 1, "missing: {alloc, null, no_hook}");
	CHECK_S64(says_missing(a, "oom", NULL, "attach_failed"), 1,
		  "missing: {oom, null, attach_failed}");
	CHECK_S64(says_missing(a, "memcg", "pagetables", "no_stat_item"), 1,
		  "missing: {memcg, pagetables, no_stat_item}");
	CHECK_S64(says_missing(a, "memcg", "vmalloc", "no_stat_item"), 1,
		  "missing: {memcg, vmalloc, no_stat_item}");
	CHECK_S64(says_missing(a, NULL, NULL, "no_kallsyms"), 1,
		  "missing: {null, null, no_kallsyms}");
	CHECK_U64(cJSON_GetArraySize(m), 5, "five entries");
	/* in the order the text prints them: hooks, kallsyms, categories */
	CHECK_STR(jstr(cJSON_GetArrayItem(m, 0), "message"),
		  "page allocation: no usable hook (tp_btf mm_page_alloc: absent)",
		  "first the hooks' (name: missing)");
	CHECK_STR(jstr(cJSON_GetArrayItem(m, 2), "reason"), "no_kallsyms", "then kallsyms");
	CHECK_STR(jstr(cJSON_GetArrayItem(m, 3), "message"),
		  "pagetables: this kernel keeps no per-memcg count (no NR_PAGETABLE)",
		  "then the categories");
	CHECK(cJSON_IsFalse(jobj(cat_of(a, "pagetables"), "available")), "pagetables unavailable");

	h = cJSON_GetArrayItem(jobj(a, "hooks"), MP_CONCERN_ALLOC);
	CHECK_U64(cJSON_GetArraySize(jobj(a, "hooks")), MP_NR_CONCERNS, "a hook entry per concern");
	CHECK_STR(jstr(h, "concern"), "alloc", "hooks in enum mp_concern order");
	CHECK_STR(jstr(h, "name"), "page allocation", "the name for people");
	CHECK(jnull(h, "kind") && jnull(h, "target") && jnull(h, "hook"),
	      "no hook: kind, target and hook null");
	CHECK(cJSON_IsFalse(jobj(h, "polled")), "no hook: not polled");
	CHECK_STR(jstr(h, "missing_reason"), "no_hook", "missing_reason");
	CHECK_STR(jstr(h, "missing"), "no usable hook (tp_btf mm_page_alloc: absent)", "missing");
	h = cJSON_GetArrayItem(jobj(a, "hooks"), MP_CONCERN_FAULTS);
	CHECK_STR(jstr(h, "concern"), "faults", "faults first");
	CHECK_STR(jstr(h, "kind"), "tp_btf", "kind id");
	CHECK_STR(jstr(h, "target"), "group:faults", "target");
	CHECK_STR(jstr(h, "hook"), "tracepoint group:faults", "hook label");
	CHECK(!jobj(h, "missing_reason") && !jobj(h, "missing"),
	      "an attached hook: no missing_reason, no missing");
	/* without a page allocation hook, orders are not counted: null, not 0 */
	CHECK(jnull(jobj(a, "page_alloc"), "user_pages_by_order") &&
	      jnull(jobj(a, "page_alloc"), "kernel_pages_by_order"),
	      "page_alloc null without a hook");
	cJSON_Delete(a);

	a = mp_attribution_no_bpf("no BTF (give --btf FILE)");
	CHECK_S64(says_missing(a, NULL, NULL, "no_bpf"), 1, "no session: {null, null, no_bpf}");
	CHECK_STR(jstr(cJSON_GetArrayItem(jobj(a, "attribution_missing"), 0), "message"),
		  "no BTF (give --btf FILE)", "no_bpf message says why");
	CHECK(!jobj(a, "hooks"), "no session: no hooks");
	cJSON_Delete(a);
	a = mp_attribution_no_bpf(NULL);
	CHECK_STR(jstr(cJSON_GetArrayItem(jobj(a, "attribution_missing"), 0), "message"),
		  "BPF unavailable", "no_bpf without a why");
	cJSON_Delete(a);
}

/* Addresses of the kallsyms fixture (captured on the 6.18 host). */
#define BPF_PROG      0xffffffffc0025950ULL /* bpf_prog_..._tp_mm_page_alloc [bpf] */
#define TRACE_RUN4    0xffffffff814ca4d0ULL /* bpf_trace_run4 */
#define ALLOC_FROZEN  0xffffffff81639490ULL /* __alloc_frozen_pages_noprof */
#define ALLOC_PAGES   0xffffffff81673d70ULL /* alloc_pages_noprof */
#define PTE_ALLOC_ONE 0xffffffff81348c20ULL
#define PTE_ALLOC     0xffffffff815f95f0ULL /* __pte_alloc */
#define ANON_PAGE     0xffffffff81602820ULL /* do_anonymous_page */
#define TRACEITER     0xffffffff815c7a90ULL /* __traceiter_mm_page_alloc */
#define ALLOC_SLAB    0xffffffff81646a90ULL /* allocate_slab */
#define SLAB_ALLOC3   0xffffffff81646f30ULL /* ___slab_alloc */
#define CACHE_ALLOC   0xffffffff81650630ULL /* kmem_cache_alloc_noprof */
#define D_ALLOC       0xffffffff816faed0ULL

static void set_frames(struct mp_attr_frames *fr, uint32_t id, const uint64_t *ips, int n)
{
	fr->stackid = id;
	fr->n = n;
	memcpy(fr->ips, ips, n * sizeof(*ips));
}

static void add_stack(struct fx *f, uint32_t id, uint32_t tgid, int64_t pages, uint64_t alloc,
		      uint64_t unacc)
{
	f->stacks[f->growth.nstacks++] = (struct mp_stack_row){ id, tgid, pages, alloc, unacc };
}

/*
 * Stacks of three classes: a page-table allocation (two processes' rows,
 * under the BPF program's own frames), a dentry from slab, and an unknown
 * address plus a stack whose frames are gone (both other).
 */
static void paths_fx(struct fx *f, struct mp_attr_frames fr[3])
{
	static const uint64_t pt[] = {
		BPF_PROG + 0x5ac, TRACE_RUN4 + 0x10d, ALLOC_FROZEN + 8, ALLOC_PAGES + 8,
		PTE_ALLOC_ONE + 0x19, PTE_ALLOC + 8, ANON_PAGE + 8,
	};
	static const uint64_t slab[] = {
		ALLOC_FROZEN + 8, ALLOC_SLAB + 8, SLAB_ALLOC3 + 8, CACHE_ALLOC + 8, D_ALLOC + 0x20,
	};
	static const uint64_t unknown[] = { 0x1000 };

	fx_init(f);
	add_task(f, 100, "w");
	add_task(f, 200, "v");
	/* frames in any order; stack 11 has none (its map entry gone) */
	set_frames(&fr[0], 9, unknown, 1);
	set_frames(&fr[1], 7, pt, 7);
	set_frames(&fr[2], 3, slab, 5);
	f->in.frames = fr;
	f->in.nframes = 3;
	/*           id  tgid  net alloc unaccounted (pages) */
	add_stack(f, 7, 100, 3, 4, 1);
	add_stack(f, 3, 100, 5, 6, 0);
	add_stack(f, 9, 100, 2, 2, 2);
	add_stack(f, 7, 200, 1, 1, 0);
	add_stack(f, 11, 200, -1, 1, 1);
	add_stack(f, 3, 200, 0, 0, 0); /* nothing allocated: in no top list */
}

static void test_kernel_paths(void)
{
	struct mp_attr_frames fr[3];
	const cJSON *p, *st;
	struct fx f;
	cJSON *a;

	if (!fixture_ks)
		return;
	paths_fx(&f, fr);
	a = mp_report_attribution(&f.in);
	CHECK_U64(nitems(a, "kernel_paths"), 4, "four classes");
	CHECK_STR(jstr(item(a, "kernel_paths", 0), "path"), "slab",
		  "ordered by their largest stack: slab first");
	CHECK_STR(jstr(item(a, "kernel_paths", 1), "path"), "pagetables", "then pagetables");
	CHECK_STR(jstr(item(a, "kernel_paths", 2), "path"), "unknown",
		  "then unknown (frames, none of them named)");
	CHECK_STR(jstr(item(a, "kernel_paths", 3), "path"), "other",
		  "then other (a stack without frames)");
	p = path_of(a, "kernel_paths", "pagetables");
	CHECK_S64(jint(p, "bytes"), PG(3 + 1), "pagetables net: both processes' rows");
	CHECK_S64(jint(p, "alloc_bytes"), PG(4 + 1), "pagetables allocated");
	CHECK_U64(nitems(p, "top_stacks"), 2, "pagetables' two stacks");
	st = item(p, "top_stacks", 0);
	CHECK_S64(jint(st, "pid"), 100, "largest stack's pid");
	CHECK_STR(jstr(st, "comm"), "w", "its comm, from the snapshot");
	CHECK_S64(jint(st, "bytes"), PG(3), "its net bytes");
	CHECK_S64(jint(st, "alloc_bytes"), PG(4), "its allocated bytes");
	CHECK_U64(nitems(st, "frames"), 5, "BPF and trampoline frames dropped");
	CHECK_STR(sitem(st, "frames", 0), "__alloc_frozen_pages_noprof+0x8",
		  "innermost frame first, symbol+offset");
	CHECK_STR(sitem(st, "frames", 2), "pte_alloc_one+0x19", "pte_alloc_one+0x19");
	p = path_of(a, "kernel_paths", "slab");
	CHECK_S64(jint(p, "bytes"), PG(5), "slab net");
	CHECK_U64(nitems(p, "top_stacks"), 1, "a stack with nothing allocated left out");
	p = path_of(a, "kernel_paths", "unknown");
	CHECK_S64(jint(p, "bytes"), PG(2), "unknown net");
	CHECK_S64(jint(p, "alloc_bytes"), PG(2), "unknown allocated");
	CHECK_STR(sitem(item(p, "top_stacks", 0), "frames", 0), "0x1000",
		  "an address below every symbol printed bare");
	p = path_of(a, "kernel_paths", "other");
	CHECK_S64(jint(p, "bytes"), PG(-1), "other net");
	CHECK_S64(jint(p, "alloc_bytes"), PG(1), "other allocated");
	CHECK_U64(nitems(item(p, "top_stacks", 0), "frames"), 0, "a stack without frames: none");

	/* the categories' top stacks are their class's */
	CHECK_S64(jint(item(cat_of(a, "pagetables"), "top_stacks", 0), "bytes"), PG(3),
		  "pagetables' top stack");
	CHECK_U64(nitems(cat_of(a, "slab_unreclaimable"), "top_stacks"), 1,
		  "slab_unreclaimable's from class slab");
	CHECK_U64(nitems(cat_of(a, "slab_reclaimable"), "top_stacks"), 1,
		  "slab_reclaimable's from class slab");
	CHECK_U64(nitems(cat_of(a, "kernel_other"), "top_stacks"), 1,
		  "kernel_other's from class other");
	CHECK_U64(nitems(cat_of(a, "vmalloc"), "top_stacks"), 0, "no vmalloc stack");

	/* without __GFP_ACCOUNT, slab left out (charged per object) */
	CHECK_U64(nitems(a, "not_charged"), 3, "not_charged: pagetables, unknown, other");
	CHECK_S64(jint(path_of(a, "not_charged", "pagetables"), "alloc_bytes"), PG(1),
		  "not_charged pagetables");
	CHECK_S64(jint(path_of(a, "not_charged", "unknown"), "alloc_bytes"), PG(2),
		  "not_charged unknown");
	CHECK_S64(jint(path_of(a, "not_charged", "other"), "alloc_bytes"), PG(1),
		  "not_charged other");
	CHECK(!path_of(a, "not_charged", "slab"), "not_charged: no slab");
	CHECK_U64(says_missing(a, NULL, NULL, "no_kallsyms"), 0, "kallsyms given: not missing");
	cJSON_Delete(a);
}

/* --top, no kallsyms, and a paths snapshot of its own */
static void test_kernel_paths_options(void)
{
	struct mp_stack_row row = { 7, 200, 8, 9, 0 };
	struct mp_task_row late = { .tgid = 200, .comm = "late" };
	struct mp_attr_snap paths = { .tasks = &late, .ntasks = 1, .stacks = &row, .nstacks = 1 };
	struct mp_attr_frames fr[3];
	const cJSON *p;
	struct fx f;
	cJSON *a;

	if (!fixture_ks)
		return;
	paths_fx(&f, fr);
	f.in.top = 1;
	a = mp_report_attribution(&f.in);
	CHECK_U64(nitems(path_of(a, "kernel_paths", "pagetables"), "top_stacks"), 1,
		  "--top 1: one stack");
	cJSON_Delete(a);

	/* without kallsyms every stack is other */
	f.in.ksyms = NULL;
	f.in.top = 5;
	a = mp_report_attribution(&f.in);
	p = path_of(a, "kernel_paths", "other");
	CHECK_U64(nitems(a, "kernel_paths"), 1, "unsymbolized: one class");
	CHECK_S64(jint(p, "alloc_bytes"), PG(4 + 6 + 2 + 1 + 1), "unsymbolized: everything other");
	CHECK_STR(sitem(item(p, "top_stacks", 0), "frames", 0), "0xffffffff81639498",
		  "unsymbolized frames as addresses");
	cJSON_Delete(a);

	/* kernel paths span their own snapshot when given */
	f.in.ksyms = fixture_ks;
	f.in.paths = &paths;
	a = mp_report_attribution(&f.in);
	p = item(path_of(a, "kernel_paths", "pagetables"), "top_stacks", 0);
	CHECK_U64(nitems(a, "kernel_paths"), 1, "paths: its own stacks");
	CHECK_S64(jint(p, "bytes"), PG(8), "paths: its rows");
	CHECK_STR(jstr(p, "comm"), "late", "paths: comm from its own snapshot");
	CHECK_S64(jint(cat_of(a, "anon"), "growth_bytes"), 0, "categories still from growth");
	cJSON_Delete(a);
}

/*
 * One path keyed twice: the kernel keys a stack with its tracing frames,
 * here __traceiter_mm_page_alloc on one call and not on the other, which
 * the document trims; the rows of one process with the same frames shown
 * are one row (before: two rows of 3 and 2 pages, frames alike).
 */
static void test_kernel_paths_traceiter(void)
{
	static const uint64_t with[] = {
		BPF_PROG + 0x5ac, TRACE_RUN4 + 0x10d, TRACEITER + 0x4c, ALLOC_FROZEN + 8,
		ALLOC_PAGES + 8, PTE_ALLOC_ONE + 0x19, PTE_ALLOC + 8, ANON_PAGE + 8,
	};
	static const uint64_t without[] = {
		BPF_PROG + 0x5ac, TRACE_RUN4 + 0x10d, ALLOC_FROZEN + 8,
		ALLOC_PAGES + 8, PTE_ALLOC_ONE + 0x19, PTE_ALLOC + 8, ANON_PAGE + 8,
	};
	struct mp_attr_frames fr[2];
	const cJSON *p, *st;
	struct fx f;
	cJSON *a;

	if (!fixture_ks)
		return;
	fx_init(&f);
	add_task(&f, 100, "w");
	add_task(&f, 200, "v");
	set_frames(&fr[0], 21, with, 8);
	set_frames(&fr[1], 22, without, 7);
	f.in.frames = fr;
	f.in.nframes = 2;
	/*            id  tgid  net alloc unaccounted (pages) */
	add_stack(&f, 21, 100, 3, 4, 1);
	add_stack(&f, 22, 100, 2, 5, 0);
	add_stack(&f, 21, 200, 4, 4, 0); /* another process: a row of its own */
	a = mp_report_attribution(&f.in);
	p = path_of(a, "kernel_paths", "pagetables");
	CHECK_U64(nitems(p, "top_stacks"), 2, "traceiter: one row per process");
	st = item(p, "top_stacks", 0);
	CHECK_S64(jint(st, "pid"), 100, "traceiter: the merged row first (net 5 pages)");
	CHECK_S64(jint(st, "bytes"), PG(3 + 2), "traceiter: net bytes summed");
	CHECK_S64(jint(st, "alloc_bytes"), PG(4 + 5), "traceiter: allocated bytes summed");
	CHECK_U64(nitems(st, "frames"), 5, "traceiter: the frames shown, traceiter trimmed");
	CHECK_STR(sitem(st, "frames", 0), "__alloc_frozen_pages_noprof+0x8",
		  "traceiter: innermost frame shown first");
	CHECK_S64(jint(item(p, "top_stacks", 1), "bytes"), PG(4), "traceiter: pid 200's own row");
	CHECK_S64(jint(p, "bytes"), PG(3 + 2 + 4), "traceiter: the path's net unchanged");
	CHECK_S64(jint(path_of(a, "not_charged", "pagetables"), "alloc_bytes"), PG(1),
		  "traceiter: unaccounted summed");
	cJSON_Delete(a);
}

/* Numbers as a loaded document holds them: raw, their JSON text (doc.h). */
static void rawify_numbers(cJSON *it)
{
	for (; it; it = it->next) {
		if (cJSON_IsNumber(it)) {
			char *v = cJSON_PrintUnformatted(it);

			it->type = cJSON_Raw;
			it->valuestring = v;
		}
		rawify_numbers(it->child);
	}
}

/* The text report's "events lost" line of attribution a, as a document
 * read back renders it (static storage); without events_lost's member
 * drop if not NULL (a document from before it was kept). */
static const char *events_lost_line(const cJSON *a, const char *drop)
{
	static char line[512];
	cJSON *doc = cJSON_Duplicate(a, true);
	struct mp_rd rd = { .root = doc };
	char *out = NULL, *at, *nl;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	line[0] = '\0';
	if (doc)
		rawify_numbers(doc->child);
	if (doc && drop)
		cJSON_DeleteItemFromObject(cJSON_GetObjectItem(doc, "events_lost"), drop);
	if (f && doc)
		mp_text_attribution(doc, f, &rd);
	if (f)
		fclose(f);
	if (out && (at = strstr(out, "events lost:"))) {
		nl = strchr(at, '\n');
		snprintf(line, sizeof(line), "%.*s", nl ? (int)(nl - at) : (int)strlen(at), at);
	}
	CHECK(mp_rd_ok(&rd), "the attribution renders as text: %s", rd.err);
	free(out);
	cJSON_Delete(doc);
	return line;
}

static void test_faults_charges_events(void)
{
	struct mp_attr_prog_misses progs[] = {
		{ "tp_mm_page_alloc", 3, 262150, 9000000 }, { "tp_page_fault_user", 0, 0, 0 },
	};
	struct fx f;
	struct mp_task_row *t;
	const cJSON *o;
	cJSON *a;

	fx_init(&f);
	t = add_task(&f, 100, "memprobe-probe");
	t->faults = 262144;
	t->charged_pages = 1000;
	t = add_task(&f, 200, "w");
	t->faults = 6;
	f.growth.totals.charged_pages = 1500;
	f.growth.totals.alloc_pages_by_order[0][0] = 77;
	f.growth.totals.alloc_pages_by_order[1][3] = 5;
	f.growth.totals.lost[MP_LOST_STACK_MAP_FULL] = 2;
	f.growth.totals.lost[MP_LOST_STACK_WALK_FAILED] = 7;
	f.growth.totals.memcg_events = 4000;
	f.growth.totals.kernel_pages_freed = 12;
	f.in.probe_pid = 100;
	f.in.allocated_bytes = 1ULL << 30;
	f.in.progs = progs;
	f.in.nprogs = 2;
	f.in.recursion_misses = 3;
	a = mp_report_attribution(&f.in);
	o = jobj(a, "page_faults");
	CHECK_S64(jint(o, "total"), 262150, "faults: every task's");
	CHECK_S64(jint(o, "probe"), 262144, "faults: the probe's");
	CHECK_S64(jint(o, "probe_per_gib_allocated"), 262144, "faults per GiB allocated");
	CHECK(!jobj(o, "source"), "hooked faults: no source");
	CHECK_U64(cJSON_GetArraySize(jobj(o, "by_task")), 2, "faults by task");
	o = jobj(a, "memcg_charges");
	CHECK_STR(jstr(o, "source"), "fentry try_charge_memcg", "charges: the hook");
	CHECK_S64(jint(o, "gross_bytes"), PG(1000), "charges in task context");
	CHECK_S64(jint(o, "all_contexts_gross_bytes"), PG(1500), "charges in every context");
	CHECK_U64(cJSON_GetArraySize(jobj(o, "by_task")), 1, "a task without charges left out");
	o = jobj(a, "page_alloc");
	CHECK_S64(num(cJSON_GetArrayItem(jobj(o, "user_pages_by_order"), 0)), 77,
		  "user pages of order 0");
	CHECK_S64(num(cJSON_GetArrayItem(jobj(o, "kernel_pages_by_order"), 3)), 5,
		  "kernel pages of order 3");
	CHECK_U64(cJSON_GetArraySize(jobj(o, "kernel_pages_by_order")), MP_MAX_ORDER + 1,
		  "an entry per order");
	o = jobj(a, "events_lost");
	CHECK_S64(jint(o, "stack_map_full"), 2, "a map overflow");
	CHECK_S64(jint(o, "stack_walk_failed"), 7, "failed stack walks apart from the map's");
	CHECK_S64(jint(o, "recursion_misses"), 3, "recursion misses");
	CHECK_S64(jint(jobj(o, "recursion_misses_by_program"), "tp_mm_page_alloc"), 3,
		  "recursion misses by program");
	CHECK_S64(jint(jobj(o, "recursion_misses_by_program"), "tp_page_fault_user"), 0,
		  "a program without misses listed with 0");
	CHECK_S64(jint(o, "total"), 12,
		  "lost total = overflows + failed stack walks + recursion misses");
	CHECK_STR(events_lost_line(a, NULL),
		  "events lost: 12 (stack_map_full 2, stack_walk_failed 7, 3 runs skipped by "
		  "the kernel's recursion guard: at most 96.0 KiB of the figures)",
		  "the text names each loss");
	CHECK_STR(events_lost_line(a, "stack_walk_failed"),
		  "events lost: 12 (stack_map_full 2, 3 runs skipped by "
		  "the kernel's recursion guard: at most 96.0 KiB of the figures)",
		  "an older document without stack_walk_failed renders");
	CHECK_S64(jint(jobj(a, "events"), "memcg_stat_updates"), 4000, "memcg stat updates");
	CHECK_S64(jint(jobj(a, "events"), "tracked_kernel_pages_freed"), 12, "kernel pages freed");
	CHECK_S64(jint(jobj(jobj(a, "events"), "program_runs"), "tp_mm_page_alloc"), 262150,
		  "the kernel's run count of a program");
	CHECK_S64(jint(jobj(jobj(a, "events"), "program_runs"), "tp_page_fault_user"), 0,
		  "a program that never ran listed with 0");
	CHECK_S64(jint(jobj(jobj(a, "events"), "program_run_time_ns"), "tp_mm_page_alloc"),
		  9000000, "the kernel's run time of a program");
	cJSON_Delete(a);

	/* the run-time stats off: no program has a count, and none is 0 */
	progs[0].run_cnt = progs[0].run_time_ns = 0;
	a = mp_report_attribution(&f.in);
	CHECK(cJSON_IsNull(jobj(jobj(a, "events"), "program_runs")),
	      "stats off: program_runs null, not 0");
	CHECK(cJSON_IsNull(jobj(jobj(a, "events"), "program_run_time_ns")),
	      "stats off: program_run_time_ns null");
	cJSON_Delete(a);

	/* polled faults and charges: the cgroup's total, the probe's unknown */
	f.hooks[MP_CONCERN_FAULTS].polled = true;
	f.hooks[MP_CONCERN_CHARGE].polled = true;
	f.growth.have_stat = true;
	f.growth.stat.have_pgfault = true;
	f.growth.stat.pgfault = 300000;
	a = mp_report_attribution(&f.in);
	o = jobj(a, "page_faults");
	CHECK_S64(jint(o, "total"), 300000, "polled faults: memory.stat pgfault");
	CHECK_STR(jstr(o, "source"), "memory.stat pgfault", "polled faults' source");
	CHECK(jnull(o, "probe") && jnull(o, "probe_per_gib_allocated"),
	      "polled faults: the probe's share null, not 0");
	CHECK(jnull(jobj(a, "memcg_charges"), "source"), "polled charges: source null");
	CHECK(!jobj(jobj(a, "memcg_charges"), "gross_bytes"), "polled charges: no figures");
	cJSON_Delete(a);

	/* the kernel's counters: memory.stat's pgfault, lazily flushed, behind
	 * its tasks' exact counts (121 067 against the probe's 121 860 seen):
	 * their sum is the floor; ahead of them, the memcg's count stands */
	f.hooks[MP_CONCERN_FAULTS].polled = false;
	f.hooks[MP_CONCERN_FAULTS].counters = true;
	f.growth.stat.pgfault = 262000;
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(jobj(a, "page_faults"), "total"), 262150,
		  "counters: pgfault behind the tasks: their sum (262144 + 6)");
	CHECK_STR(jstr(jobj(a, "page_faults"), "source"), "memory.stat pgfault",
		  "counters: the source stays the memcg's count");
	cJSON_Delete(a);
	f.growth.stat.pgfault = 300000;
	a = mp_report_attribution(&f.in);
	CHECK_S64(jint(jobj(a, "page_faults"), "total"), 300000,
		  "counters: pgfault ahead of the tasks stands");
	cJSON_Delete(a);
	f.hooks[MP_CONCERN_FAULTS].counters = false;

	/* no probe (record): no probe figures */
	f.hooks[MP_CONCERN_FAULTS].polled = false;
	f.in.probe_pid = 0;
	a = mp_report_attribution(&f.in);
	CHECK(!jobj(jobj(a, "page_faults"), "probe"), "no probe: no probe member");
	cJSON_Delete(a);
}

/* Copies on write per process, the largest first, over the retained span
 * (to the end) where there is one; not looked for: source null and why. */
static void test_copy_on_write(void)
{
	struct mp_task_row end[2];
	struct mp_attr_snap retained = { .tasks = end, .ntasks = 2 };
	struct fx f;
	const cJSON *o;
	cJSON *a;

	fx_init(&f);
	add_task(&f, 100, "redis-server")->cow_pages = 30000;
	add_task(&f, 101, "redis-rdb-bgsav")->cow_pages = 12;
	f.growth.totals.cow_walks = 1;
	memcpy(end, f.tasks, sizeof(end));
	end[0].cow_pages = 40960; /* copies after the peak count too */
	retained.totals.cow_walks = 41000;
	f.in.retained = &retained;
	f.in.cow = true;
	f.in.cow_period = 1;
	f.in.cow_fn = "do_wp_page";
	f.in.cow_why = "";
	a = mp_report_attribution(&f.in);
	o = jobj(a, "copy_on_write");
	CHECK_STR(jstr(o, "source"), "do_wp_page", "cow: its source");
	CHECK_S64(jint(o, "bytes"), PG(40960 + 12), "cow: all processes' copies, to the end");
	CHECK_S64(jint(o, "walks"), 41000, "cow: the walks");
	CHECK_STR(jstr(item(o, "by_task", 0), "comm"), "redis-server", "cow: the parent first");
	CHECK_S64(jint(item(o, "by_task", 0), "bytes"), PG(40960), "cow: ... its copies");
	CHECK_S64(nitems(o, "by_task"), 2, "cow: two processes");
	cJSON_Delete(a);
	f.in.cow = false;
	f.in.cow_why = "--stack-sample 0: no stacks walked";
	a = mp_report_attribution(&f.in);
	o = jobj(a, "copy_on_write");
	CHECK(jnull(o, "source"), "cow: not looked for: source null");
	CHECK_STR(jstr(o, "why"), "--stack-sample 0: no stacks walked", "cow: ... and why");
	CHECK(!jobj(o, "bytes"), "cow: ... and no figure");
	cJSON_Delete(a);
}

int main(void)
{
	fixture_ks = mp_ksyms_load(FIXTURES "/kallsyms-6.18");
	CHECK(fixture_ks != NULL, "load the kallsyms fixture");
	test_reconcile_kernel_total();
	test_reconcile_itemised();
	test_kernel_other();
	test_polled();
	test_proc_rows();
	test_partly_polled();
	test_byte_estimates();
	test_top_tasks();
	test_missing_ids();
	test_kernel_paths();
	test_kernel_paths_options();
	test_kernel_paths_traceiter();
	test_faults_charges_events();
	test_copy_on_write();
	mp_ksyms_free(fixture_ks);
	return unit_done("attribution");
}
