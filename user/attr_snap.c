// SPDX-License-Identifier: GPL-2.0
/* Reading the session's maps: snapshots, totals, OOM events, stacks. */
#include "attr_int.h"
#include "attr_rows.h"
#include "json.h"
#include "util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const mp_lost_names[MP_NR_LOST] = {
	[MP_LOST_TASK_MAP_FULL] = "task_map_full",
	[MP_LOST_STACK_MAP_FULL] = "stack_map_full",
	[MP_LOST_STACK_STAT_FULL] = "stack_stat_map_full",
	[MP_LOST_LIVE_PAGE_FULL] = "live_page_map_full",
	[MP_LOST_STACK_WALK_FAILED] = "stack_walk_failed",
};

/* Sum the per-CPU totals. */
static void sum_totals(const struct mp_cpu *v, int ncpu, struct mp_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int c = 0; c < ncpu; c++) {
		const struct mp_totals *x = &v[c].totals;

		t->faults += v[c].faults;
		for (int k = 0; k < MP_NR_CATS; k++) {
			t->charge_bytes[k] += x->charge_bytes[k];
#define MP_SUM_CAT(name) t->name[k] += x->name[k];
			MP_TOTAL_CAT_COUNTERS(MP_SUM_CAT)
#undef MP_SUM_CAT
		}
		for (int u = 0; u < 2; u++)
			for (int o = 0; o <= MP_MAX_ORDER; o++)
				t->alloc_pages_by_order[u][o] += x->alloc_pages_by_order[u][o];
#define MP_SUM(name) t->name += x->name;
		MP_TOTAL_COUNTERS(MP_SUM)
#undef MP_SUM
		for (int l = 0; l < MP_NR_LOST; l++)
			t->lost[l] += x->lost[l];
		if (x->max_memcg_event_bytes > t->max_memcg_event_bytes)
			t->max_memcg_event_bytes = x->max_memcg_event_bytes;
		if (x->max_tracked_order > t->max_tracked_order)
			t->max_tracked_order = x->max_tracked_order;
	}
}

static void fill_comm(struct mp_attr *a, struct mp_task_row *r)
{
	if (r->tgid == 0)
		snprintf(r->comm, sizeof(r->comm), "(other context)");
	else if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.comms), &r->tgid, r->comm))
		snprintf(r->comm, sizeof(r->comm), "?");
	r->comm[sizeof(r->comm) - 1] = '\0';
}

/* In a pid namespace: each row's host pid beside (host_tgids), or its own
 * for a task outside the namespace. Drained rows keep theirs. */
static void fill_host_tgids(struct mp_attr *a, struct mp_attr_snap *s)
{
	int fd = a->skel ? bpf_map__fd(a->skel->maps.host_tgids) : -1;

	for (size_t i = 0; a->pidns && fd >= 0 && i < s->ntasks; i++) {
		struct mp_task_row *r = &s->tasks[i];
		uint32_t host;

		if (r->tgid & MP_TGID_OUTSIDE)
			r->host_tgid = r->tgid & ~MP_TGID_OUTSIDE;
		else if (!r->host_tgid && r->tgid && !bpf_map_lookup_elem(fd, &r->tgid, &host))
			r->host_tgid = host;
	}
}

static void fill_comms(struct mp_attr *a, struct mp_attr_snap *s)
{
	for (size_t i = 0; a->skel && i < s->ntasks; i++)
		if (!s->tasks[i].gone) /* named when drained */
			fill_comm(a, &s->tasks[i]);
}

/*
 * The per-task map in batches of 64 (one bpf() call each, where a walk
 * takes two per process: this runs at every new peak of a probe's usage).
 * Returns 0, or -errno when the kernel has no batch lookup for the map
 * (before 5.6), and then nothing was read.
 */
static int read_tasks_batch(struct mp_attr *a, struct mp_attr_snap *s, size_t cap)
{
	int fd = bpf_map__fd(a->skel->maps.task_stats), ncpu = a->ncpus;
	uint32_t keys[64], in = 0, out = 0;
	struct mp_task_stat *vals = calloc(64 * (size_t)ncpu, sizeof(*vals));
	bool first = true;
	int ret = 0;

	if (!vals)
		return -ENOMEM;
	for (;;) {
		__u32 n = 64;
		LIBBPF_OPTS(bpf_map_batch_opts, bo);

		ret = bpf_map_lookup_batch(fd, first ? NULL : &in, &out, keys, vals, &n, &bo);
		if (ret && errno != ENOENT) {
			ret = -errno;
			break;
		}
		for (__u32 i = 0; i < n; i++) {
			struct mp_task_row *r = mp_attr_task_row(s, cap, keys[i]);

			for (int c = 0; r && c < ncpu; c++)
				mp_task_stat_add(&r->stat, &vals[i * (size_t)ncpu + c]);
		}
		if (ret) { /* ENOENT: that was the last batch */
			ret = 0;
			break;
		}
		in = out;
		first = false;
	}
	free(vals);
	return ret;
}

/* The per-task map, without the slots' pending counters. */
static int read_tasks(struct mp_attr *a, struct mp_attr_snap *s, size_t cap,
		      struct mp_task_stat *tv)
{
	int fd = bpf_map__fd(a->skel->maps.task_stats), ncpu = a->ncpus;
	uint32_t key, next, *prev = NULL;

	s->ntasks = 0;
	if (!a->no_batch) {
		int ret = read_tasks_batch(a, s, cap);

		if (!ret || ret == -ENOMEM)
			return ret;
		a->no_batch = true; /* this kernel has none: walk, from now on */
		s->ntasks = 0;
	}
	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		struct mp_task_row *r;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, tv) || !(r = mp_attr_task_row(s, cap, key)))
			continue;
		for (int c = 0; c < ncpu; c++)
			mp_task_stat_add(&r->stat, &tv[c]);
	}
	return 0;
}

/* Do memory.stat's categories the usage is made of (anon + file + kernel
 * + sock: MP_PART_USAGE) agree with the usage read now, within max(1%,
 * 1 MiB)? 1 yes, 0 no, -1 nothing tells (no kernel total, no usage). */
static int stat_agrees(struct mp_attr *a, const struct mp_cg_stat *st)
{
	uint64_t usage, sum = mp_cgroup_stat_usage(st), tol;

	if (!st->have[MP_CAT_KERNEL] || mp_cgroup_usage("", &a->cg, &usage))
		return -1;
	tol = usage / 100 > (1 << 20) ? usage / 100 : (1 << 20);
	return sum + tol >= usage && sum <= usage + tol;
}

/*
 * The cgroup's files, for the concerns and categories no hook sees. The
 * kernel flushes memcg stats lazily (a worker every 2 s, or once enough
 * updates are pending), so memory.stat can lag the usage counter by hundreds
 * of MiB right after a burst: read again, up to 2.5 s, until the categories
 * the usage is made of agree with it (stat_agrees). A parent's lags the most:
 * the updates of its children count towards their flush, not its own (v1 on
 * 6.18: a parent's total_rss stayed 52 MiB while its child's 300 MiB fill
 * was charged, until the worker's flush).
 */
static void snap_stat(struct mp_attr *a, struct mp_attr_snap *s, bool wait)
{
	bool cats = false;

	for (int k = 0; k < MP_NR_CATS; k++)
		cats |= a->cat_polled[k];
	if (!a->have_cg ||
	    !(cats || a->hooks[MP_CONCERN_FAULTS].polled || a->hooks[MP_CONCERN_FAULTS].counters))
		return;
	/* a hierarchy's root: its usage is not memory.stat's sum (v2: MemTotal -
	 * MemAvailable; v1: no kmem), nothing to wait for. Where only pgfault
	 * is wanted the wait is still needed: the counter is flushed as
	 * lazily as the categories (read once after a 476 MiB fill, it had
	 * moved by 165 of 121856 faults), and the categories agreeing with
	 * the usage is the sign of a flush. */
	bool once = !wait || !strcmp(a->cg.dir, a->cg.mount);

	for (int tries = 0; tries < (once ? 1 : 50); tries++) {
		s->have_stat = mp_cgroup_stat("", &a->cg, &s->stat) == 0;
		if (!s->have_stat)
			return;
		int agree = stat_agrees(a, &s->stat);

		s->stat_settled = agree > 0;
		if (agree)
			return; /* settled, or nothing to check against */
		usleep(50000);
	}
}

/* The cgroup's files once, for a snapshot taken while the usage moves (the
 * peak): no waiting for the kernel's lazy flush, whether it came is
 * stat_settled. Only for the categories no hook sees: these cheap
 * snapshots are the overhead's charge vectors, taken at every new peak of
 * a probe's usage, and need no fault count. */
static void stat_once(struct mp_attr *a, struct mp_attr_snap *s)
{
	bool want = false;

	for (int k = 0; k < MP_NR_CATS; k++)
		want |= a->cat_polled[k];
	if (a->have_cg && want && (s->have_stat = mp_cgroup_stat("", &a->cg, &s->stat) == 0))
		s->stat_settled = stat_agrees(a, &s->stat) > 0;
}

/*
 * The slots and the map as of one moment: a flush moves counters from one
 * to the other. Read slots, map, slots again (into after), and retry while
 * a flush ran in between (seq odd or changed). Returns 0 or -errno.
 */
static int read_tasks_and_slots(struct mp_attr *a, struct mp_attr_snap *s, size_t cap,
				struct mp_task_stat *tv, struct mp_cpu *before,
				struct mp_cpu *after)
{
	int cfd = bpf_map__fd(a->skel->maps.cpu);
	uint32_t zero = 0;

	for (int tries = 0; tries < 20; tries++) {
		bool same = true;

		if (bpf_map_lookup_elem(cfd, &zero, before))
			return -errno;
		read_tasks(a, s, cap, tv);
		if (bpf_map_lookup_elem(cfd, &zero, after))
			return -errno;
		for (int c = 0; c < a->ncpus; c++)
			same &= before[c].seq == after[c].seq && !(after[c].seq & 1);
		if (same)
			return 0;
		/* a program preempted mid-flush (tracing programs run
		 * preemptible) finishes only once this thread lets it run */
		usleep(50);
	}
	return -EAGAIN; /* still moving: the caller may take it as it is */
}

/* The slots' pending counters go to their tasks; charges made in other
 * contexts to the row of tgid 0. */
static void add_slots(struct mp_attr_snap *s, size_t cap, const struct mp_cpu *v, int ncpu)
{
	for (int c = 0; c < ncpu; c++) {
		const struct mp_cpu *x = &v[c];
		struct mp_task_row *r;

		if (x->in_target && x->tgid && (r = mp_attr_task_row(s, cap, x->key)))
			mp_task_stat_add(&r->stat, &x->pending);
		for (int k = 0; k < MP_NR_CATS; k++) {
			if (!x->other_charge_bytes[k])
				continue;
			if ((r = mp_attr_task_row(s, cap, 0)))
				r->charge_bytes[k] += x->other_charge_bytes[k];
		}
	}
}

/* The per-stack map. Returns 0 or -ENOMEM. */
static int read_stacks(struct mp_attr *a, struct mp_attr_snap *s)
{
	struct mp_stack_key sk, snext, *sprev = NULL;
	struct mp_stack_stat sv;
	int fd = bpf_map__fd(a->skel->maps.stack_stats);
	size_t scap = bpf_map__max_entries(a->skel->maps.stack_stats);

	s->stacks = calloc(scap, sizeof(*s->stacks));
	if (!s->stacks)
		return -ENOMEM;
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
	return 0;
}

/* stacks: read the per-stack map too; else the tasks (and memory.stat read
 * once, without waiting for it to settle) only */
static int snapshot(struct mp_attr *a, struct mp_attr_snap *s, bool stacks, bool wait)
{
	int ncpu = a->ncpus, ret = 0;
	size_t cap;
	struct mp_task_stat *tv;
	struct mp_cpu *before, *after;

	memset(s, 0, sizeof(*s));
	/* copies on write are looked for from the first snapshot on (the
	 * start's): do_wp_page's text is known by then */
	mp_attr_cow_join(a);
	if (!a->skel) {
		/* no BPF: the rows are /proc's, of this moment */
		if (a->proc_rows && (ret = mp_attr_proc_snapshot(a, s, stacks))) {
			mp_attr_snap_free(s);
			return ret;
		}
		if (stacks)
			snap_stat(a, s, wait);
		else
			stat_once(a, s);
		return 0;
	}
	cap = bpf_map__max_entries(a->skel->maps.task_stats) + (size_t)ncpu + 1;
	tv = calloc((size_t)ncpu, sizeof(*tv));
	before = calloc((size_t)ncpu, sizeof(*before));
	after = calloc((size_t)ncpu, sizeof(*after));
	if (!tv || !before || !after) {
		ret = -ENOMEM;
		goto out;
	}
	/* no drain while the maps are read: a row read, then drained, then
	 * added from the drained would count twice */
	pthread_mutex_lock(&a->gone_lock);
	/* a full snapshot takes the last reading even if a flush was still
	 * running; the overhead's cheap ones are taken again instead */
	ret = read_tasks_and_slots(a, s, cap, tv, before, after);
	if (ret == -EAGAIN && stacks)
		ret = 0;
	/* the usage at the vector's own moment, right after the slots */
	s->have_usage = a->have_cg && !mp_cgroup_usage("", &a->cg, &s->usage_bytes);
	s->usage_ns = mp_now_ns();
	if (!ret) {
		sum_totals(after, ncpu, &s->totals);
		s->have_objcg_reserve = !mp_attr_objcg_reserve(a, &s->objcg_reserve_bytes);
		add_slots(s, cap, after, ncpu);
		if (stacks)
			ret = read_stacks(a, s);
		if (!ret)
			mp_attr_add_gone(a, s, cap, stacks);
		if (!ret)
			fill_host_tgids(a, s);
	}
	pthread_mutex_unlock(&a->gone_lock);
	if (ret)
		goto out;
	/* --memcg-from counters: the categories of each process are its
	 * counters of this moment, in the rows the programs made */
	if (a->proc_rows && (ret = mp_attr_proc_snapshot(a, s, stacks)))
		goto out;
	if (stacks) {
		/* the cheap ones get names only if kept (fill_comms) */
		fill_comms(a, s);
		/* O(threads) reads of /proc: full snapshots only, the overhead's
		 * cheap ones need the charges alone */
		mp_attr_fault_counters(a, s, cap + a->ngone);
		mp_attr_snap_sort(s); /* it may add rows */
		snap_stat(a, s, wait);
	} else {
		stat_once(a, s);
	}
out:
	free(tv);
	free(before);
	free(after);
	if (ret)
		mp_attr_snap_free(s);
	return ret;
}

void mp_attr_rename(struct mp_attr *a, uint32_t pid)
{
	char p[64], comm[16] = "";
	ssize_t n;

	if (!a || !a->skel || !pid)
		return;
	snprintf(p, sizeof(p), "/proc/%u/comm", pid);
	if ((n = mp_read_file(p, comm, sizeof(comm))) <= 0)
		return;
	comm[strcspn(comm, "\n")] = '\0';
	bpf_map_update_elem(bpf_map__fd(a->skel->maps.comms), &pid, comm, BPF_EXIST);
}

int mp_attr_snapshot(struct mp_attr *a, struct mp_attr_snap *s)
{
	return snapshot(a, s, true, true);
}

int mp_attr_snapshot_peak(struct mp_attr *a, struct mp_attr_snap *s)
{
	return snapshot(a, s, true, false);
}

int mp_attr_snapshot_tasks(struct mp_attr *a, struct mp_attr_snap *s)
{
	return snapshot(a, s, false, false);
}

/* Replace *dst with a tasks snapshot taken now, tried a few times (a
 * refused one, its slots still moving, is taken again): the baseline's and
 * the left-after vector must be of this moment, not of an earlier one.
 * False (dst kept) when none could be read. */
static bool keep(struct mp_attr *a, struct mp_attr_snap *dst)
{
	struct mp_attr_snap s;

	for (int tries = 0; tries < 5; tries++) {
		if (mp_attr_snapshot_tasks(a, &s))
			continue;
		fill_comms(a, &s);
		mp_attr_snap_free(dst);
		*dst = s;
		return true;
	}
	return false;
}

void mp_overhead_keep_base(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage)
{
	if ((!o->have_base || usage < o->base_usage_bytes) && keep(a, &o->base)) {
		o->have_base = true;
		o->base_usage_bytes = usage;
	}
}

/* The vector's own measure of the usage: what its charges add up to (anon,
 * file, sock, kernel; kernel's itemised parts where the kernel keeps no
 * total) and the anon pages unmapped but still charged, an offset apart
 * from the usage counter. */
static int64_t vector_sum(const struct mp_attr *a, const struct mp_attr_snap *s)
{
	bool unmapped = mp_attr_anon_unmapped_counted(a);
	int64_t sum = 0;

	for (size_t i = 0; i < s->ntasks; i++) {
		const struct mp_task_row *r = &s->tasks[i];

		for (int k = 0; k < MP_NR_CATS; k++)
			if (mp_cats[k].part == MP_PART_USAGE ? a->cat_ok[MP_CAT_KERNEL] ||
							       k != MP_CAT_KERNEL
							     : !a->cat_ok[MP_CAT_KERNEL] &&
							       mp_cats[k].part == MP_PART_KERNEL)
				sum += r->charge_bytes[k];
		if (unmapped)
			sum += ((int64_t)r->anon_unmapped_pages - (int64_t)r->anon_freed_pages) *
			       a->page_size;
	}
	return sum;
}

int64_t mp_attr_snap_accounted(const struct mp_attr *a, const struct mp_attr_snap *s)
{
	int64_t stat = s->have_stat ? (int64_t)mp_cgroup_stat_usage(&s->stat) : 0;
	int64_t rows = vector_sum(a, s);

	return stat > rows ? stat : rows;
}

/*
 * Called at each new highest usage read: the vector kept is the one whose
 * own sum is the highest, not the one taken after the highest read. A
 * burst freed between the read and the map's (a munmap takes milliseconds)
 * would otherwise pair the peak's usage with a vector after the free.
 */
static void take_peak_vector(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage,
			     bool at_stop)
{
	/* the probe's sampler thread and its stop both call here */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct mp_attr_snap s;
	int64_t sum;

	if (mp_attr_snapshot_tasks(a, &s))
		return;
	sum = vector_sum(a, &s);
	pthread_mutex_lock(&lock);
	/* at the stop, still at the peak, the stop's vector is the peak's
	 * (--reclaim-cache: the same usage, the probe's chunks all touched),
	 * but not one that holds clearly less (1/128 of the usage): a burst
	 * being unmapped at the stop has left the rows, and memory.stat's
	 * anon, while the usage still holds it until its batch is freed (the
	 * stop's vector, chosen at an equal usage over a burst's, left 25 MiB
	 * unexplained) */
	bool stop_wins = at_stop && mp_at_peak(usage, o->peak_usage_bytes) &&
			 sum + (int64_t)(o->peak_usage_bytes >> 7) >= o->peak_vector_sum;

	if (o->have_peak && sum < o->peak_vector_sum && !stop_wins) {
		pthread_mutex_unlock(&lock);
		mp_attr_snap_free(&s);
		return;
	}
	fill_comms(a, &s);
	mp_attr_snap_free(&o->peak);
	o->peak = s;
	o->have_peak = true;
	o->anon_unmapped = mp_attr_anon_unmapped_counted(a);
	o->page_size = a->page_size;
	o->peak_vector_sum = sum;
	o->peak_usage_bytes = usage;
	pthread_mutex_unlock(&lock);
}

static void keep_peak_vector(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage,
			     bool at_stop)
{
	take_peak_vector(o, a, usage, at_stop);
	/* /proc costs per process: after a new high's vector the sampler
	 * rests, so that no more than a ninth of the time goes to it. Taken
	 * at once and rested after, not passed over: the next high after the
	 * rest takes a burst held at the peak, and a high is never paired
	 * with a vector of later (the probe's free begun). The stop never. */
	if (!at_stop)
		mp_attr_proc_quick_wait(a);
}

void mp_overhead_keep_peak(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage)
{
	keep_peak_vector(o, a, usage, false);
}

/*
 * With --reclaim-cache the usage reaches the limit while the probe still
 * has chunks to touch, and stays there while the kernel reclaims page
 * cache for them: the highest-sum vector was the first at the limit, with
 * the probe's anon short of what it allocated (-114.7 MiB for a 150 MiB
 * cache) and the reclaim nowhere. At the stop the probe holds all it
 * touched and frees nothing: if the usage is still the peak's, the stop's
 * vector is the peak's.
 */
void mp_overhead_keep_stop(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage)
{
	keep_peak_vector(o, a, usage, true);
}

void mp_overhead_keep_left(struct mp_overhead_snaps *o, struct mp_attr *a, uint64_t usage)
{
	/* none of this moment: none at all, rather than one of another */
	o->have_left = keep(a, &o->left);
	o->left_usage_bytes = usage;
}

void mp_overhead_snaps_free(struct mp_overhead_snaps *o)
{
	mp_attr_snap_free(&o->base);
	mp_attr_snap_free(&o->peak);
	mp_attr_snap_free(&o->left);
	memset(o, 0, sizeof(*o));
}

void mp_attr_snap_sub(struct mp_attr_snap *after, const struct mp_attr_snap *before)
{
	/* rows sorted by key (snapshot): by bisection, thousands of exited
	 * processes' rows included */
	for (size_t i = 0; i < after->ntasks; i++) {
		struct mp_task_row *r = &after->tasks[i];
		const struct mp_task_row *b = mp_attr_snap_task(before, r->tgid);

		if (b)
			mp_task_stat_sub(&r->stat, &b->stat);
	}
	for (size_t i = 0; i < after->nstacks; i++) {
		struct mp_stack_row *r = &after->stacks[i];
		const struct mp_stack_row *b = mp_attr_snap_stack(before, r);

		if (b) {
			r->pages -= b->pages;
			r->alloc_pages -= b->alloc_pages;
			r->unaccounted_pages -= b->unaccounted_pages;
		}
	}
	for (int u = 0; u < 2; u++)
		for (int o = 0; o <= MP_MAX_ORDER; o++)
			after->totals.alloc_pages_by_order[u][o] -=
				before->totals.alloc_pages_by_order[u][o];
	after->totals.faults -= before->totals.faults;
	for (int k = 0; k < MP_NR_CATS; k++) {
		after->totals.charge_bytes[k] -= before->totals.charge_bytes[k];
#define MP_SUB_CAT(name) after->totals.name[k] -= before->totals.name[k];
		MP_TOTAL_CAT_COUNTERS(MP_SUB_CAT)
#undef MP_SUB_CAT
	}
#define MP_SUB(name) after->totals.name -= before->totals.name;
	MP_TOTAL_COUNTERS(MP_SUB)
#undef MP_SUB
	/* lost stays cumulative: every loss since attach is reported */
	after->have_stat &= before->have_stat;
	after->stat_settled &= before->stat_settled;
	after->stat.have_pgfault &= before->stat.have_pgfault;
	after->stat.pgfault -= before->stat.pgfault;
	for (int k = 0; k < MP_NR_CATS; k++) {
		after->stat.have[k] &= before->stat.have[k];
		after->stat.bytes[k] -= before->stat.bytes[k];
	}
}

int mp_attr_totals(struct mp_attr *a, struct mp_totals *t)
{
	struct mp_cpu *v = calloc((size_t)a->ncpus, sizeof(*v));
	uint32_t key = 0;
	int ret = 0;

	if (!v)
		return -ENOMEM;
	if (!a->skel)
		memset(t, 0, sizeof(*t));
	else if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.cpu), &key, v))
		ret = -errno;
	else
		sum_totals(v, a->ncpus, t);
	free(v);
	return ret;
}

int mp_attr_objcg_reserve(struct mp_attr *a, int64_t *bytes)
{
	uint64_t key, next, *prev = NULL;
	int64_t v;
	bool any = false;
	int fd;

	*bytes = 0;
	if (!a->skel)
		return -ENOENT;
	fd = bpf_map__fd(a->skel->maps.objcg_reserve);
	/* a few entries: the target's memcgs' objcgs */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		*bytes += v;
		any = true;
	}
	return any ? 0 : -ENOENT;
}

/* In a pid namespace: the host tgid's key (its pid there), by the rows'
 * host_tgids; 0 when none has it. */
static uint32_t ns_pid_of(struct mp_attr *a, uint32_t host)
{
	int fd = bpf_map__fd(a->skel->maps.host_tgids);
	uint32_t key, next, *prev = NULL, v;

	while (host && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (!bpf_map_lookup_elem(fd, &key, &v) && v == host)
			return key;
	}
	for (size_t i = 0; host && i < a->ngone; i++)
		if (a->gone[i].host_tgid == host)
			return a->gone[i].tgid;
	return 0;
}

static int on_oom_record(void *ctx, void *data, size_t len)
{
	struct mp_attr *a = ctx;
	struct mp_oom_event e;
	uint32_t ns;

	/* a wake-up's work is done: the poll returns, and record samples */
	if (len < sizeof(e) || !a->oom_cb ||
	    ((const struct mp_oom_event *)data)->kind != MP_EVENT_OOM_KILL)
		return 0;
	memcpy(&e, data, sizeof(e));
	/* the programs see the host's pids: the victim's as memprobe's
	 * namespace numbers it (the host's where it has none), the host's
	 * beside */
	if (a->pidns) {
		e.host_pid = e.pid;
		e.pid = (ns = ns_pid_of(a, e.pid)) ? ns : e.pid;
		e.trigger_pid = (ns = ns_pid_of(a, e.trigger_pid)) ? ns : e.trigger_pid;
	}
	a->oom_cb(&e, a->oom_arg);
	return 0;
}

void mp_attr_wake_above(struct mp_attr *a, uint64_t bytes)
{
	if (a->skel && a->skel->bss)
		a->skel->bss->wake_above_pages = bytes / a->skel->rodata->page_size;
}

bool mp_attr_oom_hooked(const struct mp_attr *a)
{
	return a && a->skel && !a->hooks[MP_CONCERN_OOM].polled;
}

int mp_attr_poll_oom(struct mp_attr *a, int timeout_ms,
		     void (*cb)(const struct mp_oom_event *e, void *arg), void *arg)
{
	a->oom_cb = cb;
	a->oom_arg = arg;
	if (!a->oom_rb) {
		int fd = a->skel && !a->hooks[MP_CONCERN_OOM].polled ?
			 bpf_map__fd(a->skel->maps.oom_events) : -1;

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
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

int mp_attr_stack(struct mp_attr *a, uint32_t stackid, uint64_t *ips, int max)
{
	uint64_t buf[MP_STACK_DEPTH] = { 0 };
	int n = 0;

	if (!a->skel)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(a->skel->maps.stacks), &stackid, buf))
		return -errno;
	while (n < MP_STACK_DEPTH && n < max && buf[n]) {
		ips[n] = buf[n];
		n++;
	}
	return n;
}

