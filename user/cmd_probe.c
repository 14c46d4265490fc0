// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe probe: the command. Options, the target (an existing cgroup or a
 * stand-in of --limit), the BPF session around the fill engine (probe.c),
 * and the probe document.
 */
#include "probe.h"
#include "cmd_probe.h"
#include "attr.h"
#include "cgroup.h"
#include "cli.h"
#include "json.h"
#include "ksyms.h"
#include "pinned.h"
#include "doc.h"
#include "target.h"
#include "lock.h"
#include "overhead.h"
#include "probe_doc.h"
#include "render.h"
#include "status.h"
#include "out.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- memprobe probe ------------------------------------------------------ */

static volatile sig_atomic_t g_stop_signal;

static void on_signal(int sig)
{
	g_stop_signal = sig;
}

struct probe_opts {
	const char *cgroup_path, *pid, *limit_arg, *chunk_arg, *margin_arg;
	const char *thp, *format, *out, *btf_path;
	uint64_t limit, chunk, margin;
	uint32_t stack_sample_period;
	int top, threads;
	bool populate, fill_host, to_limit, reclaim_cache, fault_tracepoint;
	enum mp_memcg_from memcg_from;
	enum mp_status_mode status_mode;
	const char *cmd;            /* "probe", "budget": in messages */
	char own_why[2 * PATH_MAX + 600]; /* no target, in a container: why its own cgroup */
	/* what the target is when none was given: said once the options are
	 * all found good, so that bad input gets its one line alone */
	char target_note[2 * PATH_MAX + 300];
};

static const struct mp_cli_opt probe_opts_table[] = {
	MP_CLI_OPT_CGROUP("probe", NULL),
	MP_CLI_OPT_PID("probe the cgroup of this process"),
	MP_CLI_OPT_LIMIT("probe a stand-in container of this limit, made under memprobe's own "
			 "cgroup (16M at least)",
			 "1G; in a limited cgroup, that cgroup"),
	MP_PROBE_OPTS("the report as {probe}"),
	MP_CLI_OPT_BYTES,
	MP_CLI_OPT_TABLE("categories, tasks, kernel_paths, hooks, overhead, copy_on_write, "
			 "figures"),
	MP_CLI_OPT_HELP,
	{ 0 },
};

int mp_probe_opt(void *ctx, int id, const char *arg)
{
	struct probe_opts *o = ctx;
	long v;
	int ret;

	switch (id) {
	case MP_PROBE_OPT_CHUNK: o->chunk_arg = arg; break;
	case MP_PROBE_OPT_MARGIN: o->margin_arg = arg; break;
	case MP_PROBE_OPT_THP: o->thp = arg; break;
	case MP_PROBE_OPT_POPULATE: o->populate = true; break;
	case MP_PROBE_OPT_FILL_HOST: o->fill_host = true; break;
	case MP_PROBE_OPT_TO_LIMIT: o->to_limit = true; break;
	case MP_PROBE_OPT_RECLAIM_CACHE: o->reclaim_cache = true; break;
	case MP_PROBE_OPT_THREADS:
		ret = mp_cli_count(o->cmd, "--threads", arg, 1, MP_PROBE_MAX_THREADS,
				   "a thread count",
				   "give 1 to " MP_CLI_STR(MP_PROBE_MAX_THREADS), &v);
		o->threads = (int)v;
		return ret;
	}
	return 0;
}

static const struct mp_cli_cmd probe_cmd = {
	.name = "probe",
	.kind = "probe",
	.synopsis = "[--cgroup PATH | --pid PID | --limit SIZE] [OPTIONS]",
	.opts = probe_opts_table,
	.limit_min = 16 * MP_MIB,
	.limit_min_why = "too small to hold the probe process",
	.opt = mp_probe_opt,
};

static int parse_opts(const struct mp_cli_cmd *cmd, int argc, char **argv, struct probe_opts *o)
{
	struct mp_cli c;
	int ret;

	*o = (struct probe_opts){ .thp = "auto", .threads = 1, .cmd = cmd->name };
	if ((ret = mp_cli_parse(cmd, argc, argv, &c, o)))
		return ret;
	if (mp_cli_targets(&c) > 1)
		return mp_cli_bad(o->cmd, "--cgroup, --pid and --limit are exclusive; "
				  "give one of them");
	if (o->fill_host && c.limit_arg)
		return mp_cli_bad(o->cmd, "--fill-host goes with --cgroup or --pid; "
				  "drop it: --limit makes a limited cgroup of its own");
	if (strcmp(o->thp, "auto") && strcmp(o->thp, "never") && strcmp(o->thp, "always"))
		return mp_cli_bad(o->cmd, "--thp %s: unknown mode; use auto, never or always",
				  o->thp);
	if ((ret = mp_cli_finish(cmd, &c)))
		return ret;
	if (o->chunk_arg && (ret = mp_cli_size(o->cmd, "--chunk", o->chunk_arg, &o->chunk)))
		return ret;
	if (o->margin_arg && (ret = mp_cli_size(o->cmd, "--margin", o->margin_arg, &o->margin)))
		return ret;
	MP_CLI_TAKE(o, &c);
	if (!o->cgroup_path && !o->pid && !o->limit_arg)
		o->limit = MP_GIB; /* the built-in default: a 1 GiB stand-in container */
	return 0;
}

struct snaps {
	struct mp_attr *attr;
	struct mp_attr_snap start, stop, freed;
	struct mp_overhead_snaps ovh;  /* the baseline's and the peak's vectors */
	const struct mp_probe_result *res;
	const struct mp_cgroup *target; /* for the pinned memory at the stop */
	struct mp_pinned pinned;
};

static void take_snapshot(enum mp_probe_phase ph, void *arg)
{
	struct snaps *s = arg;

	if (ph == MP_PROBE_STOP && s->target)
		mp_pinned_read(s->target, "stop", &s->pinned);
	if (!s->attr)
		return;
	/* the overhead's vectors: at the baseline's low, at the usage's peak
	 * (the stop is one more candidate), after the probe freed */
	if (ph == MP_PROBE_BASELINE)
		mp_overhead_keep_base(&s->ovh, s->attr, s->res->phase_usage_bytes);
	else if (ph == MP_PROBE_PEAK)
		mp_overhead_keep_peak(&s->ovh, s->attr, s->res->phase_usage_bytes);
	else if (ph == MP_PROBE_STOP)
		mp_overhead_keep_stop(&s->ovh, s->attr, s->res->usage_at_stop_bytes);
	else if (ph == MP_PROBE_LEFT)
		mp_overhead_keep_left(&s->ovh, s->attr, s->res->phase_usage_bytes);
	if (ph == MP_PROBE_BASELINE || ph == MP_PROBE_PEAK || ph == MP_PROBE_LEFT)
		return;
	if (ph == MP_PROBE_START) /* in the target from its fork: named since */
		mp_attr_rename(s->attr, (uint32_t)s->res->child_pid);
	mp_attr_snapshot(s->attr, ph == MP_PROBE_START ? &s->start :
				  ph == MP_PROBE_STOP ? &s->stop : &s->freed);
}

/*
 * Inside a container: no target given, and memprobe's own cgroup has a
 * limit on its path below MemTotal (a container's, or any limited cgroup
 * memprobe was started in). Then the brief's own command: that cgroup,
 * probed from a child cgroup where one can be made, else from inside
 * (probe.c). A --limit 1G stand-in there would have to fit under the
 * limit, and a stand-in beside the workload measures nothing of it.
 * Elsewhere (memprobe's own cgroup unlimited) the --limit 1G stand-in
 * stays the default. Fills o->own_why and says so.
 */
static bool own_container(struct probe_opts *o, const struct mp_cgroup *self)
{
	char lim[32], how[128];
	int err;

	if (o->limit_arg || !self->limited || mp_cgroup_fills_host(self))
		return false;
	err = mp_cgroup_writable(self);
	snprintf(how, sizeof(how), err ? "no stand-in can be made there either (%s)" :
		 "--limit SIZE probes a stand-in instead", strerror(-err));
	snprintf(o->own_why, sizeof(o->own_why), "no target given, and memprobe's own cgroup "
		 "%s is limited (%s, set by %s): a container's; its own cgroup is probed, as "
		 "the brief's probe did; %s", self->dir,
		 mp_fmt_bytes(self->effective_limit_bytes, lim, sizeof(lim)), self->effective_from,
		 how);
	snprintf(o->target_note, sizeof(o->target_note), "probing the container's own cgroup "
		 "%s (%s, limit %s): memprobe's own cgroup is limited; %s", self->dir, self->path,
		 lim, how);
	return true;
}

/*
 * The target: an existing cgroup (refused when it is the host's root without
 * --fill-host, locked against a second probe), or for a stand-in container
 * memprobe's own cgroup, with the stand-in's limit as the limit the sizes
 * are checked against (inside a container, that cgroup itself). Returns 0
 * or the exit status.
 */
static int probe_target(struct probe_opts *o, const struct mp_host *host,
			struct mp_cgroup *target, struct mp_lock *lock)
{
	int ret;

	if (!o->cgroup_path && !o->pid) {
		if ((ret = mp_resolve_target(o->cmd, "", host, NULL, NULL, target)))
			return ret;
		if (own_container(o, target))
			return mp_lock_probe_or_say(o->cmd, target, lock);
		if (o->limit > target->effective_limit_bytes)
			return mp_cli_bad(o->cmd, "--limit %s: above the effective limit of "
					  "memprobe's own cgroup; give a smaller --limit",
					  o->limit_arg ? o->limit_arg : "1G");
		target->effective_limit_bytes = o->limit; /* for the size checks */
		/* a budget of an empty stand-in is no job's: an entrypoint that
		 * evals it must know (a new user's budget gave 955 MiB, said
		 * nowhere that it was of a 1 GiB stand-in) */
		if (!o->limit_arg)
			snprintf(o->target_note, sizeof(o->target_note), "no target given: a "
				 "1 GiB stand-in container under memprobe's own (unlimited) cgroup, "
				 "with nothing else in it; give --cgroup PATH or --pid PID of the "
				 "job's cgroup to measure it");
		return 0;
	}
	if ((ret = mp_resolve_target(o->cmd, "", host, o->cgroup_path, o->pid, target)))
		return ret;
	if (target->host_root && !o->fill_host)
		return mp_cli_bad(o->cmd, "%s is the host's root memory cgroup: a probe there "
				  "fills the host; give a container's cgroup, or --fill-host to "
				  "fill the host", target->dir);
	if (mp_cgroup_fills_host(target) && !o->fill_host)
		return mp_cli_bad(o->cmd, "%s has no memory limit on its path: a probe there "
				  "fills the host (to MemAvailable); give a cgroup with a limit, "
				  "--limit SIZE for a stand-in, or --fill-host to fill the host",
				  target->dir);
	/* before anything is made: one probe per cgroup */
	if ((ret = mp_lock_probe_or_say(o->cmd, target, lock)))
		return ret;
	return 0;
}

/* --chunk and --margin: their defaults for the target's limit, and both
 * checked against it and the page size. Returns 0 or MP_EXIT_USAGE. */
static int probe_sizes(struct probe_opts *o, const struct mp_host *host,
		       const struct mp_cgroup *target)
{
	uint64_t dchunk, dmargin, lim = target->effective_limit_bytes;
	char b1[32], b2[32];

	mp_probe_defaults(lim, &dchunk, &dmargin);
	if (!o->chunk_arg)
		o->chunk = dchunk;
	if (!o->margin_arg)
		o->margin = dmargin;
	if (o->chunk % (uint64_t)host->page_size)
		return mp_cli_bad(o->cmd, "--chunk %s: not a multiple of the page size; give a "
				  "multiple of 4 KiB such as 64M", o->chunk_arg);
	if (lim < o->chunk)
		return mp_cli_bad(o->cmd, "limit %s is below one chunk (%s); raise the limit or "
				  "give a smaller --chunk", mp_fmt_bytes(lim, b1, sizeof(b1)),
				  mp_fmt_bytes(o->chunk, b2, sizeof(b2)));
	if (lim <= o->margin)
		return mp_cli_bad(o->cmd, "limit %s is not above the margin (%s); raise the limit "
				  "or give a smaller --margin", mp_fmt_bytes(lim, b1, sizeof(b1)),
				  mp_fmt_bytes(o->margin, b2, sizeof(b2)));
	return 0;
}

/* What killed memprobes left, beside us and in the target; a probe of an
 * older memprobe, without the lock, still shows there. Returns 0 or 1. */
static int probe_reap(const struct probe_opts *o, const struct mp_host *host,
		      const struct mp_cgroup *target)
{
	pid_t other;

	mp_cgroup_reap_own("", host);
	mp_cgroup_reap_stale(target->dir, &other);
	if (other)
		return mp_cli_fail(o->cmd, "a memprobe (probe pid %d) is probing %s already; wait "
				   "for it to finish", (int)other, target->dir);
	return 0;
}

/* The stand-in container: memprobe-target-<pid> under memprobe's own cgroup
 * (in *target), with --limit. Returns 0 or 1; *created once there is one
 * to remove. */
static int make_standin(const struct probe_opts *o, const struct mp_host *host,
			struct mp_cgroup *target, bool *created)
{
	struct mp_cgroup self = *target;
	char name[64];
	int ret;

	snprintf(name, sizeof(name), "memprobe-target-%d", (int)getpid());
	ret = mp_cgroup_create(host, &self, name, o->limit, target);
	if (ret == -EOPNOTSUPP)
		return mp_cli_fail(o->cmd, "%s does not delegate the memory controller, so "
				   "--limit cannot make a limited child there; enable it (+memory "
				   "in its cgroup.subtree_control) or probe an existing cgroup "
				   "with --cgroup", self.dir);
	if (ret == -EROFS || ret == -EACCES || ret == -EPERM)
		return mp_cli_fail(o->cmd, "cannot create %s/%s: %s (a container's cgroup "
				   "filesystem); --limit needs a cgroup memprobe may write: drop "
				   "--limit to probe memprobe's own cgroup, or give --cgroup",
				   self.dir, name, strerror(-ret));
	if (ret || (*created = true, mp_cgroup_delegate_memory(target)) ||
	    mp_cgroup_read("", host, target))
		return mp_cli_fail(o->cmd, "cannot create %s/%s: %s", self.dir, name,
				   strerror(ret ? -ret : errno));
	return 0;
}

/* BPF: a failure here degrades the report, it does not stop the probe.
 * errbuf: why attribution is off or polled ("" when it is not). */
static void bpf_start(const struct probe_opts *o, const struct mp_host *host,
		      const struct mp_cgroup *target, struct snaps *sn, char *errbuf, size_t len)
{
	bool bpf;

	struct mp_attr_opts ao = {
		.stack_sample_period = o->stack_sample_period,
		.btf_path = o->btf_path, .cg = target,
		.fault_tracepoint = o->fault_tracepoint,
		.memcg_from = o->memcg_from,
	};

	if (mp_cgroup_id(target, &ao.target_cgid) ||
	    mp_attr_start(&ao, &sn->attr, errbuf, len))
		mp_cli_warn(o->cmd, "attribution off: %s",
			    errbuf[0] ? errbuf : "cannot get the target's cgroup id");
	else if (errbuf[0]) /* no BPF: the cgroup's files only */
		mp_cli_warn(o->cmd, "%s", errbuf);
	/* said once BPF is known: no maps where none were loaded */
	bpf = sn->attr && !errbuf[0];
	if (mp_cgroup_contains_self("", host, target))
		mp_cli_warn(o->cmd, "memprobe itself runs in %s: its own memory (%s) is charged "
			    "to what it measures", target->dir, bpf ? "BPF maps, buffers" :
			    "buffers; no BPF maps: none were loaded");
}

/* The status line's state while the probe fills. */
struct fill_status {
	struct mp_status st;
	uint64_t limit_bytes, throttle_bytes; /* the target's */
	uint64_t prev_usage_bytes, prev_ns;   /* at the last redraw */
};

/*
 * The fill rate, in bytes per second: since the last redraw, from the
 * target's usage (it moves within a chunk, the chunk count does not), so
 * that the estimate follows a fill that slows down near the limit; the
 * last line's is the whole fill's, as the report's fill_gib_per_sec.
 */
static double fill_rate(struct fill_status *fs, const struct mp_probe_progress *p)
{
	uint64_t from = fs->prev_ns ? fs->prev_usage_bytes : p->usage_before_bytes;
	uint64_t dt = p->elapsed_ns - fs->prev_ns;
	double rate;

	if (p->last)
		return p->elapsed_ns ? (double)p->allocated_bytes * 1e9 / (double)p->elapsed_ns : 0;
	rate = dt && p->usage_bytes > from ? (double)(p->usage_bytes - from) * 1e9 / (double)dt : 0;
	fs->prev_usage_bytes = p->usage_bytes;
	fs->prev_ns = p->elapsed_ns;
	return rate;
}

/* "   1.2s  12 chunks  192.0 MiB  0.52 GiB/s  usage 210.3 MiB (10% of 2.00
 * GiB)  1.70 GiB above margin  ~3.3s left" */
static void show_progress(const struct mp_probe_progress *p, void *arg)
{
	struct fill_status *fs = arg;
	uint64_t left = p->stop_usage_bytes > p->usage_bytes ?
			p->stop_usage_bytes - p->usage_bytes : 0;
	char filled[32], room[32], usage[128], eta[32], rate_s[32] = "- GiB/s";
	double rate;

	if (!mp_status_due(&fs->st, p->last))
		return;
	rate = fill_rate(fs, p);
	/* before the first chunk the usage moves, but no rate of the fill's
	 * is known yet: none is shown, nor a time left from it */
	if (p->chunks || p->last)
		snprintf(rate_s, sizeof(rate_s), "%.2f GiB/s", rate / (double)MP_GIB);
	mp_status_update(&fs->st, p->elapsed_ns / 1000000,
			 "%" PRIu64 " chunks  %s  %s  %s  %s above margin  %s", p->chunks,
			 mp_fmt_bytes(p->allocated_bytes, filled, sizeof(filled)), rate_s,
			 mp_status_usage(usage, sizeof(usage), p->usage_bytes, fs->limit_bytes,
					 fs->throttle_bytes),
			 mp_fmt_bytes(left, room, sizeof(room)),
			 p->last || !p->chunks ? "" : mp_status_eta(eta, sizeof(eta), left, rate));
}

/* The engine's lines while it runs, said as the command's (arg: its name);
 * mp_cli_warn puts them on a line of their own below a status line. */
static void say_warning(const char *line, void *arg)
{
	mp_cli_warn(arg, "%s", line);
}

/* The fill (probe.c), with a snapshot at each phase and the status line.
 * Returns 0 (also when a signal stopped it: the report says so) or 1, its
 * problem said. */
static int fill(const struct probe_opts *o, const struct mp_host *host,
		const struct mp_cgroup *target, struct snaps *sn, struct mp_probe_result *res)
{
	struct fill_status fs = {
		.limit_bytes = target->effective_limit_bytes,
		.throttle_bytes = mp_status_throttle_bytes(target),
	};
	struct mp_probe_cfg cfg = {
		.chunk = o->chunk, .margin = o->margin, .thp = o->thp,
		.threads = o->threads, .populate = o->populate,
		.to_limit = o->to_limit, .reclaim_cache = o->reclaim_cache,
		.stop = &g_stop_signal, .on_phase = take_snapshot, .arg = sn,
		.on_progress = show_progress, .progress_arg = &fs,
		.on_warn = say_warning, .warn_arg = (void *)o->cmd,
	};
	int ret;

	sn->res = res;
	/* The probe forks its child from here and the child makes its fill
	 * threads: a lock another thread holds at the fork stays held in the
	 * child for ever (ASan's allocator's did, and --threads 2 hung). */
	mp_attr_single_threaded(sn->attr);
	mp_status_begin(&fs.st, o->status_mode, STDERR_FILENO);
	ret = mp_probe_run(host, target, &cfg, res);
	mp_status_clear(&fs.st); /* before anything else is printed: the report */
	if (ret)
		mp_cli_warn(o->cmd, "%s", res->err[0] ? res->err : strerror(-ret));
	return ret && !res->interrupted ? MP_EXIT_RUNTIME : 0;
}

int mp_probe_document(const struct mp_cli_cmd *cmd, int argc, char **argv,
		      struct mp_probe_report *r)
{
	struct probe_opts o;
	struct mp_host host;
	struct mp_cgroup target;
	struct mp_probe_result res;
	struct snaps sn = { 0 };
	char errbuf[400] = "";
	bool target_created = false;
	struct mp_lock lock = { .fd = -1 };
	uint64_t target_oom0 = 0;
	int ret, err;

	*r = (struct mp_probe_report){ 0 };
	/* First: a stop asked for at any moment still gets a report. */
	mp_cli_on_stop(on_signal);
	ret = parse_opts(cmd, argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((ret = mp_cli_need_root(o.cmd)) || (ret = mp_cli_host(o.cmd, &host)))
		return ret;
	if ((ret = probe_target(&o, &host, &target, &lock)) ||
	    (ret = probe_sizes(&o, &host, &target)))
		goto out;
	if (o.target_note[0])
		mp_cli_warn(o.cmd, "%s", o.target_note);
	if ((ret = probe_reap(&o, &host, &target)))
		goto out;
	if ((ret = mp_out_open(&r->out, o.out))) {
		ret = mp_cli_out_bad(o.cmd, o.out, ret);
		goto out;
	}

	/* From here on everything made is undone before returning. */
	signal(SIGPIPE, SIG_IGN);
	if (!o.cgroup_path && !o.pid && !o.own_why[0] &&
	    (ret = make_standin(&o, &host, &target, &target_created)))
		goto out;
	bpf_start(&o, &host, &target, &sn, errbuf, sizeof(errbuf));
	target_oom0 = mp_cgroup_oom_kills(&target);
	sn.target = &target;
	if ((ret = fill(&o, &host, &target, &sn, &res)))
		goto out;

	r->doc = mp_probe_doc(&(struct mp_probe_doc_in){
		.host = &host, .target = &target, .target_created = target_created, .res = &res,
		.target_why = o.own_why[0] ? o.own_why : NULL,
		.chunk = o.chunk, .margin = o.margin, .thp = o.thp, .threads = o.threads,
		.populate = o.populate, .stack_sample_period = o.stack_sample_period, .top = o.top,
		.attr = sn.attr, .attr_err = errbuf, .start = &sn.start, .stop = &sn.stop,
		.freed = &sn.freed, .ovh = &sn.ovh, .target_oom0 = target_oom0,
		.reclaim_cache = o.reclaim_cache, .pinned = &sn.pinned,
	});
	r->format = o.format;
	r->out_arg = o.out;
	r->margin = o.margin;
	r->killed = res.killed_by_signal != 0; /* the measurement did not happen as asked */
out:
	mp_attr_snap_free(&sn.start);
	mp_attr_snap_free(&sn.stop);
	mp_attr_snap_free(&sn.freed);
	mp_overhead_snaps_free(&sn.ovh);
	mp_pinned_free(&sn.pinned);
	mp_attr_stop(sn.attr);
	if (target_created && (err = mp_cgroup_remove(&target)))
		mp_cli_warn(o.cmd, "could not remove %s: %s", target.dir, strerror(-err));
	mp_lock_release(&lock);
	if (!ret && !r->doc) /* the document could not be built */
		ret = mp_cli_fail(o.cmd, "out of memory building the report: the measurement "
				  "is lost; give memprobe more memory");
	if (ret)
		mp_out_abort(&r->out);
	return ret;
}

int mp_cmd_probe(int argc, char **argv)
{
	struct mp_probe_report r;
	int ret = mp_probe_document(&probe_cmd, argc, argv, &r);

	if (ret || !r.doc)
		return ret;
	/* rendered and committed, or the JSON document saved whole */
	ret = mp_emit_save(probe_cmd.name, r.doc, r.format, &r.out, r.out_arg);
	mp_out_abort(&r.out);
	return !ret && r.killed ? MP_EXIT_RUNTIME : ret;
}
