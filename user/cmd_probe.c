// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe probe: the command. Options, the target (an existing cgroup or a
 * stand-in of --limit), the BPF session around the fill engine (probe.c),
 * and the probe document.
 */
#include "probe.h"
#include "attr.h"
#include "cgroup.h"
#include "cli.h"
#include "json.h"
#include "ksyms.h"
#include "pinned.h"
#include "doc.h"
#include "target.h"
#include "lock.h"
#include "probe_doc.h"
#include "render.h"
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
	bool populate, fill_host;
};

enum { OPT_CHUNK = MP_OPT_CMD, OPT_MARGIN, OPT_THP, OPT_THREADS, OPT_POPULATE, OPT_FILL_HOST };

static const struct mp_cli_opt probe_opts_table[] = {
	MP_CLI_OPT_CGROUP("probe", NULL),
	MP_CLI_OPT_PID("probe the cgroup of this process"),
	MP_CLI_OPT_LIMIT("probe a stand-in container of this limit, made under memprobe's own "
			 "cgroup (16M at least)", "1G, when no --cgroup or --pid"),
	{ "chunk", 0, "SIZE", "fill in chunks of SIZE, a multiple of the page size",
	  "limit/32 in 2 MiB steps, 2 MiB to 1 GiB", OPT_CHUNK },
	{ "margin", 0, "SIZE", "stop while more than SIZE is left below the limit",
	  "limit/16 in 2 MiB steps, 2 MiB to 2 GiB", OPT_MARGIN },
	{ "thp", 0, "MODE", "transparent huge pages for the fill: auto (the host's setting), "
	  "never or always", "auto", OPT_THP },
	MP_CLI_OPTS_REPORT,
	{ "threads", 0, "N", "threads filling each chunk, 1 to " MP_CLI_STR(MP_PROBE_MAX_THREADS),
	  "1", OPT_THREADS },
	{ "populate", 0, NULL, "fault the chunks in with MADV_POPULATE_WRITE (Linux 5.14+) "
	  "instead of writing them (memset)", NULL, OPT_POPULATE },
	MP_CLI_OPT_BTF,
	{ "fill-host", 0, NULL, "allow a probe of the host's root memory cgroup (it fills the "
	  "host); with --cgroup or --pid", NULL, OPT_FILL_HOST },
	MP_CLI_OPT_HELP,
	{ 0 },
};

static int probe_opt(void *ctx, int id, const char *arg)
{
	struct probe_opts *o = ctx;
	long v;
	int ret;

	switch (id) {
	case OPT_CHUNK: o->chunk_arg = arg; break;
	case OPT_MARGIN: o->margin_arg = arg; break;
	case OPT_THP: o->thp = arg; break;
	case OPT_POPULATE: o->populate = true; break;
	case OPT_FILL_HOST: o->fill_host = true; break;
	case OPT_THREADS:
		ret = mp_cli_count("probe", "--threads", arg, 1, MP_PROBE_MAX_THREADS,
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
	.opt = probe_opt,
};

static int parse_opts(int argc, char **argv, struct probe_opts *o)
{
	struct mp_cli c;
	int ret;

	*o = (struct probe_opts){ .thp = "auto", .threads = 1 };
	if ((ret = mp_cli_parse(&probe_cmd, argc, argv, &c, o)))
		return ret;
	if (mp_cli_targets(&c) > 1)
		return mp_cli_bad("probe", "--cgroup, --pid and --limit are exclusive; "
				  "give one of them");
	if (o->fill_host && c.limit_arg)
		return mp_cli_bad("probe", "--fill-host goes with --cgroup or --pid; "
				  "drop it: --limit makes a limited cgroup of its own");
	if (strcmp(o->thp, "auto") && strcmp(o->thp, "never") && strcmp(o->thp, "always"))
		return mp_cli_bad("probe", "--thp %s: unknown mode; use auto, never or always",
				  o->thp);
	if ((ret = mp_cli_finish(&probe_cmd, &c)))
		return ret;
	if (o->chunk_arg && (ret = mp_cli_size("probe", "--chunk", o->chunk_arg, &o->chunk)))
		return ret;
	if (o->margin_arg && (ret = mp_cli_size("probe", "--margin", o->margin_arg, &o->margin)))
		return ret;
	MP_CLI_TAKE(o, &c);
	if (!o->cgroup_path && !o->pid && !o->limit_arg)
		o->limit = MP_GIB; /* the built-in default: a 1 GiB stand-in container */
	return 0;
}

struct snaps {
	struct mp_attr *attr;
	struct mp_attr_snap start, stop, freed;
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
	mp_attr_snapshot(s->attr, ph == MP_PROBE_START ? &s->start :
				  ph == MP_PROBE_STOP ? &s->stop : &s->freed);
}

/*
 * The target: an existing cgroup (refused when it is the host's root without
 * --fill-host, locked against a second probe), or for a stand-in container
 * memprobe's own cgroup, with the stand-in's limit as the limit the sizes
 * are checked against. Returns 0 or the exit status.
 */
static int probe_target(struct probe_opts *o, const struct mp_host *host,
			struct mp_cgroup *target, struct mp_lock *lock)
{
	int ret;

	if (!o->cgroup_path && !o->pid) {
		if ((ret = mp_resolve_target("probe", "", host, NULL, NULL, target)))
			return ret;
		if (o->limit > target->effective_limit_bytes)
			return mp_cli_bad("probe", "--limit %s: above the effective limit of "
					  "memprobe's own cgroup; give a smaller --limit",
					  o->limit_arg ? o->limit_arg : "1G");
		target->effective_limit_bytes = o->limit; /* for the size checks */
		return 0;
	}
	if ((ret = mp_resolve_target("probe", "", host, o->cgroup_path, o->pid, target)))
		return ret;
	if (target->host_root && !o->fill_host)
		return mp_cli_bad("probe", "%s is the host's root memory cgroup: a probe there "
				  "fills the host; give a container's cgroup, or --fill-host to "
				  "fill the host", target->dir);
	/* before anything is made: one probe per cgroup */
	if ((ret = mp_lock_probe_or_say("probe", target, lock)))
		return ret;
	if (mp_cgroup_contains_self("", host, target))
		mp_cli_warn("probe", "memprobe itself runs in %s: its own memory (BPF maps, "
			    "buffers) is charged to what it measures", target->dir);
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
		return mp_cli_bad("probe", "--chunk %s: not a multiple of the page size; give a "
				  "multiple of 4 KiB such as 64M", o->chunk_arg);
	if (lim < o->chunk)
		return mp_cli_bad("probe", "limit %s is below one chunk (%s); raise the limit or "
				  "give a smaller --chunk", mp_fmt_bytes(lim, b1, sizeof(b1)),
				  mp_fmt_bytes(o->chunk, b2, sizeof(b2)));
	if (lim <= o->margin)
		return mp_cli_bad("probe", "limit %s is not above the margin (%s); raise the limit "
				  "or give a smaller --margin", mp_fmt_bytes(lim, b1, sizeof(b1)),
				  mp_fmt_bytes(o->margin, b2, sizeof(b2)));
	return 0;
}

/* What killed memprobes left, beside us and in the target; a probe of an
 * older memprobe, without the lock, still shows there. Returns 0 or 1. */
static int probe_reap(const struct mp_host *host, const struct mp_cgroup *target)
{
	pid_t other;

	mp_cgroup_reap_own("", host);
	mp_cgroup_reap_stale(target->dir, &other);
	if (other)
		return mp_cli_fail("probe", "a memprobe (probe pid %d) is probing %s already; wait "
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
		return mp_cli_fail("probe", "%s does not delegate the memory controller, so "
				   "--limit cannot make a limited child there; enable it (+memory "
				   "in its cgroup.subtree_control) or probe an existing cgroup "
				   "with --cgroup", self.dir);
	if (ret || (*created = true, mp_cgroup_delegate_memory(target)) ||
	    mp_cgroup_read("", host, target))
		return mp_cli_fail("probe", "cannot create %s/%s: %s", self.dir, name,
				   strerror(ret ? -ret : errno));
	return 0;
}

/* BPF: a failure here degrades the report, it does not stop the probe.
 * errbuf: why attribution is off or polled ("" when it is not). */
static void bpf_start(const struct probe_opts *o, const struct mp_cgroup *target,
		      struct snaps *sn, char *errbuf, size_t len)
{
	struct mp_attr_opts ao = {
		.stack_sample_period = o->stack_sample_period,
		.btf_path = o->btf_path, .cg = target,
	};

	if (mp_cgroup_id(target, &ao.target_cgid) ||
	    mp_attr_start(&ao, &sn->attr, errbuf, len))
		mp_cli_warn("probe", "attribution off: %s",
			    errbuf[0] ? errbuf : "cannot get the target's cgroup id");
	else if (errbuf[0]) /* no BPF: the cgroup's files only */
		mp_cli_warn("probe", "%s; polling the cgroup's files instead", errbuf);
}

/* The fill (probe.c), with a snapshot at each phase. Returns 0 (also when a
 * signal stopped it: the report says so) or 1. */
static int fill(const struct probe_opts *o, const struct mp_host *host,
		const struct mp_cgroup *target, struct snaps *sn, struct mp_probe_result *res)
{
	struct mp_probe_cfg cfg = {
		.chunk = o->chunk, .margin = o->margin, .thp = o->thp,
		.threads = o->threads, .populate = o->populate,
		.stop = &g_stop_signal, .on_phase = take_snapshot, .arg = sn,
	};

	if (mp_probe_run(host, target, &cfg, res) && !res->interrupted)
		return MP_EXIT_RUNTIME;
	return 0;
}

int mp_cmd_probe(int argc, char **argv)
{
	struct probe_opts o;
	struct mp_host host;
	struct mp_cgroup target;
	struct mp_probe_result res;
	struct snaps sn = { 0 };
	char errbuf[256] = "";
	bool target_created = false;
	struct mp_lock lock = { .fd = -1 };
	uint64_t target_oom0 = 0;
	cJSON *doc = NULL;
	struct mp_out out = { 0 };
	int ret, err;

	/* First: a stop asked for at any moment still gets a report. */
	mp_cli_on_stop(on_signal);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((ret = mp_cli_need_root("probe")) || (ret = mp_cli_host("probe", &host)))
		return ret;
	if ((ret = probe_target(&o, &host, &target, &lock)) ||
	    (ret = probe_sizes(&o, &host, &target)) || (ret = probe_reap(&host, &target)))
		goto out;
	if ((ret = mp_out_open(&out, o.out))) {
		ret = mp_cli_bad("probe", "-o %s: cannot create it; give a writable path", o.out);
		goto out;
	}

	/* From here on everything made is undone before returning. */
	signal(SIGPIPE, SIG_IGN);
	if (!o.cgroup_path && !o.pid && (ret = make_standin(&o, &host, &target, &target_created)))
		goto out;
	bpf_start(&o, &target, &sn, errbuf, sizeof(errbuf));
	target_oom0 = mp_cgroup_oom_kills(&target);
	sn.target = &target;
	if ((ret = fill(&o, &host, &target, &sn, &res)))
		goto out;

	doc = mp_probe_doc(&(struct mp_probe_doc_in){
		.host = &host, .target = &target, .target_created = target_created, .res = &res,
		.chunk = o.chunk, .margin = o.margin, .thp = o.thp, .threads = o.threads,
		.populate = o.populate, .stack_sample_period = o.stack_sample_period, .top = o.top,
		.attr = sn.attr, .attr_err = errbuf, .start = &sn.start, .stop = &sn.stop,
		.freed = &sn.freed, .target_oom0 = target_oom0, .pinned = &sn.pinned,
	});
	ret = mp_emit("probe", doc, o.format, out.f);
	if (!ret && (ret = mp_out_commit(&out))) {
		fprintf(stderr, "memprobe probe: cannot write the report to %s: %s\n",
			o.out ? o.out : "standard output", strerror(-ret));
		ret = MP_EXIT_RUNTIME;
	} else if (!ret && res.killed_by_signal) {
		ret = MP_EXIT_RUNTIME; /* the measurement did not happen as asked */
	}
out:
	cJSON_Delete(doc);
	mp_attr_snap_free(&sn.start);
	mp_attr_snap_free(&sn.stop);
	mp_attr_snap_free(&sn.freed);
	mp_pinned_free(&sn.pinned);
	mp_attr_stop(sn.attr);
	if (target_created && (err = mp_cgroup_remove(&target)))
		fprintf(stderr, "memprobe probe: could not remove %s: %s\n", target.dir,
			strerror(-err));
	mp_out_abort(&out);
	mp_lock_release(&lock);
	return ret;
}
