// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder: the probe's attribution over a running workload or a
 * command, with a timeline, the peak, per-process shares and OOM kills.
 * Its state is struct rec (record.h); the record command (cmd_record.c)
 * drives it and record_doc.c makes its document.
 *
 * One loop: wait for OOM events on the ring buffer for one interval (that is
 * the sleep), then take a sample: the cgroup's usage and memory.stat, and the
 * BPF whole-target counters (one per-CPU array lookup). The per-process and
 * per-stack maps are read only at a new peak and at the end.
 */
#include "record.h"
#include "attr.h"
#include "cgroup.h"
#include "probe.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t mp_rec_signal;
volatile sig_atomic_t mp_rec_signals_seen;
volatile sig_atomic_t mp_rec_reopen;

uint64_t mp_rec_now_ms(const struct rec *r)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - r->t0.tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - r->t0.tv_nsec) / 1000000);
}

/* ---- sampling ------------------------------------------------------------- */

/*
 * How long to wait before the next sample. Every interval, for the timeline;
 * sooner while the usage rises toward the effective limit (it could reach
 * it within two intervals, or has less than 1/16 of it left), so that the
 * peak and the vector before an OOM kill are at most QUICK_MS old: at
 * 2 GB/s, 100 ms would be 200 MB.
 */
#define QUICK_MS 5

/* Bytes a millisecond from a to b; 0 where it did not rise. */
static double rise_rate(const struct sample *a, const struct sample *b)
{
	if (b->usage_bytes <= a->usage_bytes || b->t_ms <= a->t_ms)
		return 0;
	return (double)(b->usage_bytes - a->usage_bytes) / (double)(b->t_ms - a->t_ms);
}

/*
 * The rise's rate: the faster of the last two samples' and the last
 * interval's (since the first sample, in the first). Not the last pair's
 * alone: a workload still for one 5 ms gap (preempted on a busy host) read
 * as no rise, the loop slept to the next timeline sample, and the OOM kill
 * came 65 ms after the last sample (CI: 160 of 256 MiB).
 */
static double recent_rate(const struct rec *r)
{
	double rate = rise_rate(&r->prev, &r->last);
	const struct sample *s = mp_tl_recent(&r->tl, 0), *older;

	/* the last timeline sample an interval old, or the oldest kept */
	for (size_t k = 1; s && s->t_ms + (uint64_t)r->o.interval_ms > r->last.t_ms &&
			   (older = mp_tl_recent(&r->tl, k)); k++)
		s = older;
	if (s)
		rate = MP_MAX(rate, rise_rate(s, &r->last));
	return rate;
}

static long next_wait_ms(const struct rec *r, uint64_t now)
{
	long due = r->next_timeline_ms > now ? (long)(r->next_timeline_ms - now) : 0;
	uint64_t lim = r->limit_now, u = r->last.usage_bytes;
	double rate, room;

	if (!r->have_prev) /* no rate yet: a second sample soon gives one */
		return MP_MIN(due, QUICK_MS);
	rate = recent_rate(r);
	if (rate <= 0)
		return due;
	room = u < lim ? (double)(lim - u) : 0;
	if (room <= rate * 2.0 * (double)r->o.interval_ms || room < (double)lim / 16)
		return MP_MIN(due, QUICK_MS);
	return due;
}

static void read_sample(struct rec *r, struct sample *s)
{
	struct mp_totals t;

	s->t_ms = mp_rec_now_ms(r);
	mp_cgroup_stat("", &r->cg, &s->stat);
	if (r->attr && !mp_attr_totals(r->attr, &t)) {
		uint64_t dt = s->t_ms > r->t_prev_ms ? s->t_ms - r->t_prev_ms : 1;
		uint64_t faults = t.faults;

		/* no per-fault hook: memory.stat's pgfault, the cgroup's count */
		if (mp_attr_faults_from_stat(r->attr))
			faults = s->stat.have_pgfault ? s->stat.pgfault : r->faults_prev;
		for (int k = 0; k < MP_NR_CATS; k++)
			s->bpf_growth[k] = t.charge_bytes[k] - r->start.totals.charge_bytes[k];
		s->have_objcg_reserve = !mp_attr_objcg_reserve(r->attr, &s->objcg_reserve_bytes);
		/* processes coming faster than the second's drain */
		if (mp_attr_drain_due(r->attr, &t))
			mp_attr_drain(r->attr);
		s->faults_per_sec = r->have_last ? (faults - r->faults_prev) * 1000 / dt : 0;
		r->faults_prev = faults;
	}
	r->t_prev_ms = s->t_ms;
}

/* The effective limit read at t_ms: a change from the last one kept. */
static void note_limit(struct rec *r, uint64_t t_ms, uint64_t v)
{
	if (v == r->limit_now)
		return;
	if (r->nlimit_changes < MP_REC_LIMIT_CHANGES)
		r->limit_changes[r->nlimit_changes++] =
			(struct limit_change){ t_ms, r->limit_now, v };
	else
		r->limit_changes_more++;
	r->limit_now = v;
}

/* The effective limit now into s (the last one read when unreadable). */
static void read_limit(struct rec *r, struct sample *s)
{
	uint64_t v;

	if (!mp_cgroup_limit_now("", &r->host, &r->cg, &s->stat, &v))
		note_limit(r, s->t_ms, v);
	s->limit_bytes = r->limit_now;
}

/*
 * Take one sample; into the timeline when timeline is set. A new peak also
 * snapshots the per-process and per-stack maps. Returns -ENOENT when the
 * cgroup is gone.
 */
/* The cgroup's usage now; -ENOENT when it is gone. */
static int read_usage(const struct rec *r, uint64_t *usage)
{
	char buf[64];
	ssize_t n = pread(r->usage_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0 || access(r->cg.dir, F_OK))
		return -ENOENT;
	buf[n] = '\0';
	*usage = strtoull(buf, NULL, 10);
	return 0;
}

/*
 * The maps as they are now, for the peak. A snapshot costs milliseconds of
 * CPU (every map, /proc for each thread), and while the usage climbs a new
 * peak comes every 5 ms: taken each time, they took a TCG guest's one CPU
 * from the workload (a 1 GiB probe no longer filled in 11 s). So no more
 * than a ninth of the time goes to them: the next waits eight times this
 * one's cost, and a peak passed over is taken when the rise stops.
 */
static void snap_peak(struct rec *r)
{
	uint64_t t0 = mp_rec_now_ms(r), t1;
	struct mp_attr_snap s;

	if (mp_attr_snapshot_peak(r->attr, &s) == 0) {
		/* --memcg-from counters: one that accounts for less than the
		 * one kept is a worse picture of the peak, even at a higher
		 * usage. An OOM victim exiting at the limit takes its anon out
		 * of memory.stat and /proc while the usage still holds it (0.6
		 * MiB of a 256 MiB peak attributed, the snapshot taken in the
		 * kill's millisecond), as does a burst being unmapped; the
		 * charges' rows count that as anon unmapped, /proc's cannot.
		 * The pair kept is consistent: its usage is the one it accounts
		 * for (peak.vector_usage_bytes), the kernel's peak apart. */
		if (r->have_peak_snap && mp_attr_rows_from_proc(r->attr) &&
		    mp_attr_snap_accounted(r->attr, &s) <
			    mp_attr_snap_accounted(r->attr, &r->at_peak)) {
			mp_attr_snap_free(&s);
		} else {
			mp_attr_snap_free(&r->at_peak);
			r->at_peak = s;
			r->have_peak_snap = true;
		}
	}
	t1 = mp_rec_now_ms(r);
	r->peak_snap_next_ms = t1 + 8 * (t1 - t0);
	r->peak_snap_due = false;
}

/*
 * The pinned memory at the peak: memory.stat and every process's status
 * (smaps where it locks memory), read at each new peak and again while
 * the usage stays at it, so that what is pinned at the peak's usage
 * (mlock after the touch, io_uring buffers registered, shmem handed over)
 * is the peak's: read once a second, at the first peak only, a pool
 * mlocked 100 ms after the start showed nothing locked. As the
 * snapshots, no more than a ninth of the time (a thousand processes'
 * status files), and no more than once an interval.
 */
static void read_pinned(struct rec *r, const struct sample *s)
{
	uint64_t t0 = mp_rec_now_ms(r), t1;

	mp_pinned_read(&r->cg, "peak", &r->pinned);
	t1 = mp_rec_now_ms(r);
	r->pinned_ms = s->t_ms;
	r->pinned.have_t = true;
	r->pinned.t_ms = t0;
	r->pinned_next_ms = t1 + MP_MAX(8 * (t1 - t0), (uint64_t)r->o.interval_ms);
}

/* A new peak: kept, with the maps as they are now. Under r->sample_lock. */
static void keep_peak(struct rec *r, const struct sample *s)
{
	r->peak = *s;
	if (!r->pinned.taken || mp_rec_now_ms(r) >= r->pinned_next_ms)
		read_pinned(r, s);
	if (r->attr && mp_rec_now_ms(r) >= r->peak_snap_next_ms)
		snap_peak(r);
	else if (r->attr)
		r->peak_snap_due = true;
}

/* The per-CPU charge batches: 64 pages a CPU, which the usage gains and
 * loses as the stocks refill and drain, no page charged or freed. */
static uint64_t charge_slack(void)
{
	static uint64_t slack;

	if (!slack)
		slack = 64 * (uint64_t)sysconf(_SC_PAGESIZE) *
			(uint64_t)MP_MAX(sysconf(_SC_NPROCESSORS_CONF), 1L);
	return slack;
}

/* What a sample's categories account for of the usage (those the usage
 * is the sum of), in memory.stat's figures and in the hooks'. */
static void accounted(const struct sample *s, int64_t *stat, int64_t *bpf)
{
	*stat = (int64_t)mp_cgroup_stat_usage(&s->stat);
	*bpf = 0;
	for (int k = 0; k < MP_NR_CATS; k++)
		if (mp_cats[k].part == MP_PART_USAGE)
			*bpf += s->bpf_growth[k];
}

/* Does s account for more of the usage than the peak's sample? */
static bool caught_up(const struct sample *s, const struct sample *peak)
{
	int64_t s_stat, s_bpf, p_stat, p_bpf;

	accounted(s, &s_stat, &s_bpf);
	accounted(peak, &p_stat, &p_bpf);
	return s_stat > p_stat || s_bpf > p_bpf;
}

/*
 * A sample not above the peak. A page is charged before the stat update
 * that says what it is: a huge page is charged, zeroed, then mapped and
 * counted in anon and anon_thp. A peak read while a fault was in flight
 * has its usage, not yet its figures (a 256 MiB THP fill's peak sample
 * and snapshot read 127 huge pages in anon_thp, memory.stat 128 a moment
 * later, about 1 run in 3), and a sample right after it, the same. So
 * while the usage stays at the peak (give or take the charge batches),
 * a sample whose categories account for more of it than the peak's
 * sample did is the peak's: its figures and moment, the highest usage
 * kept; and at the peak (mp_at_peak) the maps are read again, as soon as
 * their cost allows (at once at the end). Further down, the workload is
 * freeing: the last snapshot stands. A plateau whose figures hold keeps
 * its sample and costs nothing; one whose figures wander takes a new
 * one only at a new high of what they account for.
 */
static void settle_peak(struct rec *r, const struct sample *s, bool end)
{
	uint64_t usage = r->peak.usage_bytes;
	bool near = s->usage_bytes + charge_slack() >= usage;
	bool moved = near && caught_up(s, &r->peak);

	if (moved) {
		r->peak = *s;
		r->peak.usage_bytes = usage;
	}
	if (!r->attr)
		return;
	if (!near && !mp_at_peak(s->usage_bytes, usage))
		r->peak_snap_due = false;
	else if (!moved && !r->peak_snap_due)
		return;
	else if (end || r->peak_snap_due || mp_rec_now_ms(r) >= r->peak_snap_next_ms)
		snap_peak(r);
	else
		r->peak_snap_due = true; /* taken at the next sample still at it */
}

/*
 * The recording ends: one more sample, for the peak (settle_peak), its
 * maps read at once where they are due. A rise in the last interval
 * whose snapshot was put off for its cost left the peak's maps those of
 * an earlier peak, 20-40 huge pages short of a THP fill, category and
 * process alike, when the stop signal came before another sample.
 */
static void settle_peak_at_end(struct rec *r)
{
	struct sample s = { 0 };

	pthread_mutex_lock(&r->sample_lock);
	if (r->have_last && !read_usage(r, &s.usage_bytes)) {
		read_sample(r, &s);
		s.limit_bytes = r->limit_now;
		if (s.usage_bytes > r->peak.usage_bytes) {
			r->peak_snap_next_ms = UINT64_MAX; /* one snapshot: settle_peak's */
			keep_peak(r, &s);
		}
		settle_peak(r, &s, true);
		/* the recording's last reading (run.duration_ms) */
		r->prev = r->last;
		r->last = s;
	}
	pthread_mutex_unlock(&r->sample_lock);
}

/*
 * A timeline sample's lateness, counted and said (run.timeline_samples_*):
 * one taken half an interval or more after it was due is late, and every
 * whole interval it came after that is a sample missed. The loop runs
 * SCHED_FIFO where it may; where it may not, hundreds of processes
 * faulting at once kept it from the CPU for seconds.
 */
static void count_late(struct rec *r, const struct sample *s)
{
	uint64_t iv = (uint64_t)r->o.interval_ms, due = r->next_timeline_ms;

	bool first = !r->have_tl_ms;

	if (!first && s->t_ms - r->tl_ms > r->longest_gap_ms)
		r->longest_gap_ms = s->t_ms - r->tl_ms;
	r->tl_ms = s->t_ms;
	r->have_tl_ms = true;
	if (first || s->t_ms < due + iv / 2)
		return;
	r->samples_late++;
	r->samples_missed += (s->t_ms - due) / iv;
}

static int take_sample_locked(struct rec *r, bool timeline)
{
	struct sample s = { 0 };
	uint64_t lim;

	if (read_usage(r, &s.usage_bytes))
		return -ENOENT;
	read_sample(r, &s);
	/* the limit with the timeline's samples; the quick ones near it carry
	 * the last read */
	if (timeline)
		read_limit(r, &s);
	else
		s.limit_bytes = r->limit_now;
	lim = r->limit_now;
	/* a rise half way to the limit before the next sample wakes the loop:
	 * one too quick for two samples to show its rate */
	if (r->attr)
		mp_attr_wake_above(r->attr, s.usage_bytes < lim ?
				   s.usage_bytes + (lim - s.usage_bytes) / 2 : lim);
	if (timeline) {
		count_late(r, &s);
		mp_tl_push(&r->tl, &s);
		r->next_timeline_ms += (uint64_t)r->o.interval_ms;
		if (r->next_timeline_ms <= s.t_ms) /* fell behind: no burst to catch up */
			r->next_timeline_ms = s.t_ms + (uint64_t)r->o.interval_ms;
	}
	if (!r->have_last || s.usage_bytes > r->peak.usage_bytes) {
		keep_peak(r, &s);
	} else {
		settle_peak(r, &s, false);
		/* still at the peak: what is pinned there may have changed */
		if (mp_at_peak(s.usage_bytes, r->peak.usage_bytes) &&
		    mp_rec_now_ms(r) >= r->pinned_next_ms)
			read_pinned(r, &s);
	}
	r->prev = r->last;
	r->have_prev = r->have_last;
	r->last = s;
	r->have_last = true;
	return 0;
}

/* The main loop's samples; --probe-at's thread takes one too (probe_stop). */
static int take_sample(struct rec *r, bool timeline)
{
	int ret;

	pthread_mutex_lock(&r->sample_lock);
	ret = take_sample_locked(r, timeline);
	pthread_mutex_unlock(&r->sample_lock);
	return ret;
}

/* The kill's time in the recording's milliseconds: the hook's clock
 * (bpf_ktime_get_ns) is CLOCK_MONOTONIC, as r->t0 is. */
static uint64_t kill_ms(const struct rec *r, uint64_t ts_ns)
{
	uint64_t t0 = (uint64_t)r->t0.tv_sec * 1000000000ULL + (uint64_t)r->t0.tv_nsec;

	return ts_ns > t0 ? (ts_ns - t0) / 1000000 : 0;
}

/* The slot of the k-th kill: the first half in order, then a ring. */
static size_t oom_slot(uint64_t k)
{
	const size_t half = MP_REC_OOMS / 2;

	return k < half ? (size_t)k : half + (size_t)((k - half) % half);
}

const struct oom *mp_rec_oom(const struct rec *r, size_t i)
{
	uint64_t k = r->ooms_seen > MP_REC_OOMS && i >= MP_REC_OOMS / 2 ?
		     r->ooms_seen - MP_REC_OOMS + i : i;

	return &r->ooms[oom_slot(k)];
}

static void on_oom(const struct mp_oom_event *e, void *arg)
{
	struct rec *r = arg;
	struct oom *p;

	if (!r->ooms && !(r->ooms = calloc(MP_REC_OOMS, sizeof(*r->ooms))))
		return;
	p = &r->ooms[oom_slot(r->ooms_seen++)];
	r->nooms = MP_MIN(r->ooms_seen, MP_REC_OOMS);
	memset(p, 0, sizeof(*p));
	p->t_ms = kill_ms(r, e->ts_ns);
	p->ev = *e;
	/* the limit the kill met, read right after it: a change no timeline
	 * sample has seen yet is one from the kill's moment */
	{
		struct mp_cg_stat st;
		uint64_t v;

		if (!mp_cgroup_stat("", &r->cg, &st) &&
		    !mp_cgroup_limit_now("", &r->host, &r->cg, &st, &v))
			note_limit(r, p->t_ms, v);
		p->limit_bytes = r->limit_now;
	}
	/* the last sample before the kill (at most QUICK_MS old when the
	 * usage neared the limit); not one the loop took after it, before
	 * the event was read, with the victim's memory going */
	if (r->have_last && r->last.t_ms <= p->t_ms)
		p->at = r->last;
	else if (r->have_prev)
		p->at = r->prev;
}

/*
 * Without an OOM hook (no BPF: a container's root), the kills are the
 * cgroup's oom_kill counter's: each new one is a kill of the moment it was
 * seen, its victim and trigger not known: pid 0, which no victim has (the
 * command's, once it is seen killed by SIGKILL: command_ended). Before,
 * such a kill was in oom_kill_counter_delta alone, and no renderer but
 * openmetrics said it.
 */
static void oom_from_counter(struct rec *r)
{
	uint64_t n, now_ns;
	struct timespec ts;

	if (mp_attr_oom_hooked(r->attr))
		return;
	n = mp_cgroup_oom_kills(&r->cg);
	n = n > r->oom_kill_count0 ? n - r->oom_kill_count0 : 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	while (r->ooms_seen < n) {
		struct mp_oom_event e = { .ts_ns = now_ns };

		on_oom(&e, r);
		if (r->ooms_seen == 0) /* no memory to keep it: counted alone */
			break;
	}
}

/* The command killed by SIGKILL after a kill only the counter saw: the
 * command is its victim. */
static void name_polled_victim(struct rec *r, pid_t pid)
{
	struct oom *k;
	const char *base;

	if (!r->nooms || !WIFSIGNALED(r->child_status) || WTERMSIG(r->child_status) != SIGKILL)
		return;
	k = (struct oom *)mp_rec_oom(r, r->nooms - 1);
	if (k->ev.pid) /* a hook's kill, or named already */
		return;
	k->ev.pid = (uint32_t)pid;
	base = strrchr(r->o.cmd[0], '/');
	snprintf(k->ev.comm, sizeof(k->ev.comm), "%s", base ? base + 1 : r->o.cmd[0]);
}

/* "   3.2s  usage 412.0 MiB (40% of 1.00 GiB)  top: anon 300.0 MiB": the
 * category that grew most (kernel is the sum of the others, not one). */
static void status_line(struct rec *r)
{
	const struct sample *s = &r->last;
	uint64_t throttle = mp_status_throttle_bytes(&r->cg);
	char usage[128], grown[32];
	int top = 0;

	if (!mp_status_due(&r->status, false))
		return;
	for (int k = 1; k < MP_NR_CATS; k++)
		if (k != MP_CAT_KERNEL && s->bpf_growth[k] > s->bpf_growth[top])
			top = k;
	mp_status_update(&r->status, s->t_ms, "%s  top: %s %s",
			 mp_status_usage(usage, sizeof(usage), s->usage_bytes, r->limit_now,
					 throttle),
			 mp_cat_names[top], mp_fmt_sbytes(s->bpf_growth[top], grown, sizeof(grown)));
}

/* ---- --probe-at ------------------------------------------------------------ */

/*
 * The probe holds everything it allocated: a peak the timeline would miss,
 * the fill being faster than one interval (and freed right after). Taken
 * here, in the probe's thread, so that the peak and the attribution to it
 * include the fill; last and prev stay the main loop's.
 */
static void probe_stop(enum mp_probe_phase ph, void *arg)
{
	struct rec *r = arg;
	struct sample s = { 0 };

	/* the probe's overhead explained over its own window (its baseline's
	 * low to its peak), beside the recording's attribution */
	if (r->attr && ph == MP_PROBE_BASELINE)
		mp_overhead_keep_base(&r->probe_ovh, r->attr, r->probe_res.phase_usage_bytes);
	else if (r->attr && ph == MP_PROBE_PEAK)
		mp_overhead_keep_peak(&r->probe_ovh, r->attr, r->probe_res.phase_usage_bytes);
	else if (r->attr && ph == MP_PROBE_STOP)
		mp_overhead_keep_stop(&r->probe_ovh, r->attr, r->probe_res.usage_at_stop_bytes);
	else if (r->attr && ph == MP_PROBE_LEFT)
		mp_overhead_keep_left(&r->probe_ovh, r->attr, r->probe_res.phase_usage_bytes);
	if (r->attr && ph == MP_PROBE_START) /* in the target from its fork: named since */
		mp_attr_rename(r->attr, (uint32_t)r->probe_res.child_pid);
	if (ph != MP_PROBE_STOP)
		return;
	pthread_mutex_lock(&r->sample_lock);
	if (!read_usage(r, &s.usage_bytes) && s.usage_bytes > r->peak.usage_bytes) {
		read_sample(r, &s);
		s.limit_bytes = r->limit_now;
		keep_peak(r, &s);
	}
	/* the probe holds its fill now: the peak's maps are these */
	if (r->attr && r->peak_snap_due)
		snap_peak(r);
	pthread_mutex_unlock(&r->sample_lock);
}

/* The probe's lines while it runs: the command's to say. */
static void probe_warn(const char *line, void *arg)
{
	struct rec *r = arg;

	if (r->on_warn)
		r->on_warn(r, line);
}

static void *probe_thread(void *arg)
{
	struct rec *r = arg;
	struct mp_probe_cfg cfg = {
		.chunk = r->probe_chunk, .margin = r->probe_margin, .thp = "auto",
		.stop = &r->probe_stop, .on_phase = probe_stop, .arg = r,
		.on_warn = probe_warn, .warn_arg = r,
	};

	r->probe_ret = mp_probe_run(&r->host, &r->cg, &cfg, &r->probe_res);
	r->probe_done = true;
	return NULL;
}

/* ---- the command ----------------------------------------------------------- */

/*
 * Fork the command into the run cgroup. It waits on go_fd until memprobe has
 * its mp_rec_baseline; an exec failure comes back on a close-on-exec pipe. It dies
 * with memprobe (PR_SET_PDEATHSIG), so a SIGKILLed record leaves no command
 * running on; what it forked is in the run cgroup, which the next probe or
 * record removes. When the report goes to standard output, the command's
 * standard output goes to standard error, so that the two never mix.
 */
int mp_rec_start_command(struct rec *r, int *go_fd, int *exec_err_fd)
{
	int go[2] = { -1, -1 }, ee[2] = { -1, -1 }, err;
	pid_t parent = getpid();

	if (pipe2(go, O_CLOEXEC) || pipe2(ee, O_CLOEXEC))
		goto fail;
	r->child = fork();
	if (r->child < 0)
		goto fail;
	if (r->child == 0) {
		struct sigaction dfl = { .sa_handler = SIG_DFL };
		char c;

		sigaction(SIGINT, &dfl, NULL);
		sigaction(SIGTERM, &dfl, NULL);
		sigaction(SIGHUP, &dfl, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* memprobe died before the line above */
			_exit(126);
		close(go[1]);
		close(ee[0]);
		if (r->report_on_stdout)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		/* in place: it is where memprobe is already */
		err = r->in_place ? 0 : mp_cgroup_attach(&r->cg, getpid());
		if (!err && read(go[0], &c, 1) == 1) {
			execvp(r->o.cmd[0], r->o.cmd);
			err = -errno;
		}
		if (write(ee[1], &err, sizeof(err)) < 0)
			_exit(126);
		_exit(err == -ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(ee[1]);
	*go_fd = go[1];
	*exec_err_fd = ee[0];
	return 0;
fail:
	err = -errno;
	r->child = 0;
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ee[i] >= 0)
			close(ee[i]);
	}
	return err;
}

/*
 * In place: the command's process tree now (procstat.c, by /proc's PPid),
 * from the command and every pid seen in it before, so that an orphan
 * reparented away stays in; each new pid into r->cmd_pids.
 */
static void command_tree(struct rec *r)
{
	struct mp_proc_set now = { 0 };
	uint32_t *roots = calloc(r->ncmd_pids + 1, sizeof(*roots)), *np;

	if (!roots)
		return;
	roots[0] = (uint32_t)r->child;
	if (r->ncmd_pids) /* none yet: cmd_pids is NULL, no source for memcpy */
		memcpy(roots + 1, r->cmd_pids, r->ncmd_pids * sizeof(*roots));
	if (!mp_proc_of_tree("", roots, r->ncmd_pids + 1, 0, 0, &now)) {
		for (size_t i = 0; i < now.n; i++) {
			size_t j = 0;

			while (j < r->ncmd_pids && r->cmd_pids[j] != now.rows[i].pid)
				j++;
			if (j < r->ncmd_pids ||
			    !(np = realloc(r->cmd_pids, (r->ncmd_pids + 1) * sizeof(*np))))
				continue;
			r->cmd_pids = np;
			r->cmd_pids[r->ncmd_pids++] = now.rows[i].pid;
		}
	}
	mp_proc_set_free(&now);
	free(roots);
}

/* The kernel's peak counter of the cgroup, where it keeps one. */
bool mp_rec_kernel_peak(const struct rec *r, uint64_t *v)
{
	return mp_cgroup_peak(&r->cg, v) == 0;
}

void mp_rec_start_attr(struct rec *r, char *why, size_t len)
{
	struct mp_attr_opts ao = {
		.stack_sample_period = r->o.stack_sample_period,
		.btf_path = r->o.btf_path, .cg = &r->cg,
		.fault_tracepoint = r->o.fault_tracepoint,
		.memcg_from = r->o.memcg_from,
		/* in place, without BPF: the command's rows, not the cgroup's */
		.proc_tree_pid = r->in_place && r->child > 0 ? (uint32_t)r->child : 0,
	};
	char errbuf[400] = "";

	why[0] = '\0';
	if (mp_cgroup_id(&r->cg, &ao.target_cgid) ||
	    mp_attr_start(&ao, &r->attr, errbuf, sizeof(errbuf)))
		snprintf(why, len, "attribution off: %s",
			 errbuf[0] ? errbuf : "cannot get the cgroup's id");
	else if (errbuf[0]) /* no BPF: what is missing, and what memprobe does instead */
		snprintf(why, len, "%s", errbuf);
}

/* The mp_rec_baseline, then the command let go. Returns 0, or 127/126 when the
 * command could not be executed. */
int mp_rec_baseline(struct rec *r, int *go_fd, int *ee_fd)
{
	int err = 0;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	/* no storage: every sample is counted as dropped, the run goes on */
	mp_tl_init(&r->tl);
	if (r->attr)
		mp_attr_snapshot(r->attr, &r->start);
	r->oom_kill_count0 = mp_cgroup_oom_kills(&r->cg);
	r->have_kpeak0 = mp_rec_kernel_peak(r, &r->kpeak0);
	r->limit_now = r->cg.effective_limit_bytes;
	mp_probe_defaults(r->cg.effective_limit_bytes, &r->probe_chunk, &r->probe_margin);
	take_sample(r, true);
	if (!r->o.cmd)
		return 0;
	if (write(*go_fd, "g", 1) != 1) {
		/* the child died before exec: its status says why */
	}
	close(*go_fd);
	*go_fd = -1;
	n = read(*ee_fd, &err, sizeof(err)); /* EOF: exec succeeded */
	close(*ee_fd);
	*ee_fd = -1;
	if (n != sizeof(err)) {
		if (r->in_place)
			command_tree(r);
		return 0;
	}
	waitpid(r->child, &r->child_status, 0);
	r->child = 0;
	snprintf(r->err, sizeof(r->err), "%s: %s", r->o.cmd[0],
		 err == -ENOENT ? "command not found" : strerror(-err));
	return err == -ENOENT ? 127 : 126;
}

/*
 * In command mode, once per interval: has the command ended? A stop
 * signal is passed on (a second one kills), and at the end of --duration
 * the command is stopped as by ^C; either way it is killed if it still
 * runs 5 s later.
 */
static const char *stop_signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : "SIGTERM";
}

static int signal_pid(uint32_t pid, void *arg)
{
	kill((pid_t)pid, *(int *)arg);
	return 0;
}

/*
 * sig to the command and, in its own cgroup, to every process there, as ^C
 * reaches the terminal's whole foreground group: a shell waiting on its
 * child, or a program that handles SIGINT, kept a `kill -INT` of memprobe
 * recording until the command chose to end. In place there is no cgroup
 * of the command's alone: the command is signalled, and its tree dies of
 * the SIGKILL 5 s on only as far as the command's own handling takes it.
 */
static void signal_command(struct rec *r, int sig)
{
	kill(r->child, sig);
	if (!r->in_place)
		mp_cgroup_walk_procs(r->cg.dir, signal_pid, &sig);
}

static bool command_ended(struct rec *r, uint64_t t, uint64_t deadline_ms)
{
	int sig;

	if (waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
		/* a stop signal memprobe got (and passed on, or that reached
		 * the command first, as ^C reaches the terminal's foreground
		 * group) is why it ended, not the command's own exit */
		sig = r->stop_signal ? r->stop_signal : mp_rec_signal;
		oom_from_counter(r);
		name_polled_victim(r, r->child);
		r->child_exited = true;
		r->child = 0;
		r->end_reason = r->nooms && WIFSIGNALED(r->child_status) ? "oom_kill" :
				sig ? stop_signal_name(sig) :
				r->stop_sent_ms ? "duration" : "command exited";
		return true;
	}
	if ((sig = mp_rec_signal)) {
		signal_command(r, mp_rec_signals_seen > 1 ? SIGKILL : sig);
		if (!r->stop_signal)
			r->stop_signal = sig;
		/* stopped at once: killed if it still runs 5 s on */
		if (!r->stop_sent_ms)
			r->stop_sent_ms = t;
		mp_rec_signal = 0;
	}
	if (deadline_ms && t >= deadline_ms && !r->stop_sent_ms) {
		signal_command(r, SIGINT);
		r->stop_sent_ms = t;
	} else if (r->stop_sent_ms && t >= r->stop_sent_ms + 5000) {
		signal_command(r, SIGKILL);
	}
	return false;
}

/*
 * SIGHUP (logrotate's postrotate, systemctl reload) stops nothing: the
 * outputs are opened anew (cmd_record.c) and the recording goes on. It is
 * memprobe's alone, never passed on to a command: one that dies of it
 * (most do) would end the workload a log rotation meant to leave alone. A
 * terminal's hangup reaches the command by itself: it stays in memprobe's
 * process group.
 */
static void reopen(struct rec *r)
{
	mp_rec_reopen = 0;
	if (r->on_reopen)
		r->on_reopen(r);
}

/*
 * The loop runs SCHED_FIFO (priority 1) where memprobe may, as the probe's
 * sampler does: 200 processes faulting at once on 2 CPUs left a normal
 * thread without a sample for 1.9 s around the peak, and exited processes'
 * rows undrained while the next ones filled the map. Its work is bounded
 * (a sample reads a few files; snapshots take at most a ninth of the time),
 * and SCHED_RESET_ON_FORK keeps the command, the probe and every thread
 * memprobe makes from inheriting it. Returns whether it was set.
 */
static bool loop_realtime(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 1 : 0 };

	return sched_setscheduler(0, (on ? SCHED_FIFO : SCHED_OTHER) | SCHED_RESET_ON_FORK,
				  &sp) == 0;
}

static void watch(struct rec *r, uint64_t deadline_ms);

/* Sample until the recording ends; sets r->end_reason. */
void mp_rec_watch(struct rec *r, uint64_t deadline_ms)
{
	bool rt = loop_realtime(true);

	watch(r, deadline_ms);
	if (rt) /* the report is built at a normal priority */
		loop_realtime(false);
}

static void watch(struct rec *r, uint64_t deadline_ms)
{
	for (;;) {
		long wait = next_wait_ms(r, mp_rec_now_ms(r));
		bool timeline;
		uint64_t t;

		if (r->attr)
			mp_attr_poll_oom(r->attr, (int)wait, on_oom, r);
		else if (wait > 0)
			usleep((useconds_t)wait * 1000);
		/* the recording is ending: a --probe-at fill stops at its next
		 * chunk now, not once the command has gone (by then a fill of a
		 * few hundred MiB had finished, and was not marked interrupted) */
		if (mp_rec_signal || (deadline_ms && mp_rec_now_ms(r) >= deadline_ms))
			r->probe_stop = 1;
		timeline = mp_rec_now_ms(r) >= r->next_timeline_ms;
		if (take_sample(r, timeline) == -ENOENT) {
			r->end_reason = "cgroup removed";
			return;
		}
		oom_from_counter(r);
		if (mp_rec_reopen)
			reopen(r);
		/* a quick sample: the peak and the OOM vector only; but a stop
		 * signal is seen now, not up to an interval later (--interval
		 * 60000 took a minute to stop, past systemd's stop timeout) */
		if (!timeline && !mp_rec_signal)
			continue;
		t = r->last.t_ms;
		/* the maps keep every process ever seen: exited ones' rows go
		 * to user space once a second, so they never fill */
		if (r->attr && t >= r->next_drain_ms) {
			mp_attr_drain(r->attr);
			r->next_drain_ms = t + 1000;
		}
		status_line(r);
		if (r->on_sample) /* record --openmetrics: the live file */
			r->on_sample(r);
		if (r->o.probe_at_s >= 0 && !r->probe_started && t >= r->o.probe_at_s * 1000.0)
			r->probe_started =
				pthread_create(&r->probe_thread, NULL, probe_thread, r) == 0;
		if (r->in_place && r->child > 0) /* what it forked since the last sample */
			command_tree(r);
		if (r->o.cmd) {
			if (command_ended(r, t, deadline_ms))
				return;
			continue;
		}
		if (r->o.pid && kill((pid_t)atol(r->o.pid), 0) && errno == ESRCH) {
			r->end_reason = "pid exited";
			return;
		}
		if (mp_rec_signal) {
			r->end_reason = stop_signal_name(mp_rec_signal);
			return;
		}
		if (deadline_ms && t >= deadline_ms) {
			r->end_reason = "duration";
			return;
		}
	}
}

/*
 * --memcg-from counters: the categories are memory.stat's, and the peak
 * sample read it at the peak; the peak's snapshot, taken after it (the
 * one-ninth rule), may have read it as an OOM victim exited, its anon out
 * of memory.stat and the usage still holding it (0.6 MiB of a 256 MiB
 * peak in 2 of 5 runs). Where the sample's accounts for more, it is the
 * peak's; the processes' rows stay the snapshot's (the report's top
 * tasks may then miss the victim: docs/attribution.md).
 */
static void peak_stat(struct rec *r)
{
	if (!r->have_peak_snap || !mp_attr_rows_from_proc(r->attr) ||
	    !r->at_peak.have_stat || mp_cgroup_stat_usage(&r->peak.stat) <=
	    mp_cgroup_stat_usage(&r->at_peak.stat))
		return;
	r->at_peak.stat = r->peak.stat;
	r->at_peak.stat_settled = true;
}

/* The probe joined, late OOM events read, the final snapshots taken. */
void mp_rec_finish(struct rec *r)
{
	mp_status_clear(&r->status);
	if (r->probe_started) {
		r->probe_stop = 1; /* the recording is over: a fill still going stops */
		pthread_join(r->probe_thread, NULL);
	}
	/* still at the peak at the end: its pinned memory is of now too */
	if (r->have_last && mp_at_peak(r->last.usage_bytes, r->peak.usage_bytes))
		read_pinned(r, &r->last);
	else if (!r->pinned.taken)
		mp_pinned_read(&r->cg, "end", &r->pinned);
	oom_from_counter(r);
	/* late kills first: each takes the last sample before it */
	if (r->attr)
		mp_attr_poll_oom(r->attr, 0, on_oom, r);
	settle_peak_at_end(r);
	if (!r->attr)
		return;
	if (r->child_exited && r->nooms && WIFSIGNALED(r->child_status))
		r->end_reason = "oom_kill";
	mp_attr_snapshot(r->attr, &r->end);
	mp_attr_snap_sub(&r->end, &r->start);
	peak_stat(r);
	if (r->have_peak_snap)
		mp_attr_snap_sub(&r->at_peak, &r->start);
}

int mp_rec_cleanup(struct rec *r)
{
	int err = 0;

	if (r->child > 0) {
		kill(r->child, SIGKILL);
		waitpid(r->child, &r->child_status, 0);
	}
	mp_attr_snap_free(&r->start);
	mp_attr_snap_free(&r->at_peak);
	mp_attr_snap_free(&r->end);
	mp_overhead_snaps_free(&r->probe_ovh);
	mp_pinned_free(&r->pinned);
	free(r->cmd_pids);
	mp_attr_stop(r->attr);
	if (r->usage_fd >= 0)
		close(r->usage_fd);
	if (r->cg_created && (err = mp_cgroup_remove(&r->cg)))
		snprintf(r->err, sizeof(r->err), "could not remove %s: %s", r->cg.dir,
			 strerror(-err));
	mp_tl_free(&r->tl);
	free(r->ooms);
	mp_lock_release(&r->lock);
	return err;
}
