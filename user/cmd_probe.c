// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe probe: the command. Options, the target (an existing cgroup or a
 * stand-in of --limit), the BPF session around the fill engine (probe.c),
 * and the probe document.
 */
#include "probe.h"
#include "attr.h"
#include "cgroup.h"
#include "json.h"
#include "ksyms.h"
#include "doc.h"
#include "target.h"
#include "lock.h"
#include "probe_doc.h"
#include "render.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
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

static char optbuf[64];

static void usage(FILE *f)
{
	fputs("usage: memprobe probe [--cgroup PATH | --pid PID | --limit SIZE] [--chunk SIZE]\n"
	      "                      [--margin SIZE] [--thp auto|never|always] [--format text|json]\n"
	      "                      [-o FILE] [--stack-sample N] [--top N] [--threads N] [--populate]\n"
	      "                      [--btf FILE] [--fill-host]\n", f);
}

static int bad(const char *fmt, const char *arg, const char *fix)
{
	fputs("memprobe probe: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; %s\n", fix);
	return MP_EXIT_USAGE;
}

static int parse_size_opt(const char *name, const char *arg, uint64_t *v)
{
	int err = mp_parse_size(arg, v);

	if (err == -ERANGE) {
		fprintf(stderr, "memprobe probe: --%s %s: too large; give less than 8388608T\n", name, arg);
		return MP_EXIT_USAGE;
	}
	if (err || *v == 0) {
		fprintf(stderr, "memprobe probe: --%s %s: not a size; give a positive size "
			"such as 512M, 1G, 1GiB or a byte count\n", name, arg);
		return MP_EXIT_USAGE;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct probe_opts *o)
{
	static const struct option lopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "limit", required_argument, NULL, 'l' },
		{ "chunk", required_argument, NULL, 'C' },
		{ "margin", required_argument, NULL, 'm' },
		{ "thp", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "stack-sample", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'T' },
		{ "threads", required_argument, NULL, 'n' },
		{ "populate", no_argument, NULL, 'P' },
		{ "btf", required_argument, NULL, 'B' },
		{ "fill-host", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, ret, given = 0, seen[3] = { 0 };
	static const char *const tnames[] = { "--cgroup", "--pid", "--limit" };
	char *end;
	long v;

	memset(o, 0, sizeof(*o));
	o->thp = "auto";
	o->format = "text";
	o->stack_sample_period = 1;
	o->top = 5;
	o->threads = 1;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->cgroup_path = optarg; given += !seen[0]++; break;
		case 'p': o->pid = optarg; given += !seen[1]++; break;
		case 'l': o->limit_arg = optarg; given += !seen[2]++; break;
		case 'H': o->fill_host = true; break;
		case 'C': o->chunk_arg = optarg; break;
		case 'm': o->margin_arg = optarg; break;
		case 't': o->thp = optarg; break;
		case 'f': o->format = optarg; break;
		case 'o': o->out = optarg; break;
		case 's':
		case 'T':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 1000000)
				return bad(c == 's' ? "--stack-sample %s: not a count" : "--top %s: not a count",
					   optarg,
					   c == 's' ? "give a whole number (0 turns stacks off)"
						    : "give a whole number");
			if (c == 's')
				o->stack_sample_period = (uint32_t)v;
			else
				o->top = (int)v;
			break;
		case 'n':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > MP_PROBE_MAX_THREADS)
				return bad("--threads %s: not a thread count", optarg,
					   "give 1 to 64");
			o->threads = (int)v;
			break;
		case 'P': o->populate = true; break;
		case 'B':
			if ((ret = mp_attr_btf_opt("probe", optarg)))
				return ret;
			o->btf_path = optarg;
			break;
		case 'h': usage(stdout); return -1;
		default:
			return bad("unknown option or missing value '%s'", mp_bad_option(argv, optbuf, sizeof(optbuf)),
				   "see memprobe probe --help");
		}
	}
	if (optind < argc)
		return bad("unexpected argument '%s'", argv[optind], "see memprobe probe --help");
	for (int i = 0; i < 3; i++)
		if (seen[i] > 1)
			return bad("%s given twice", tnames[i], "give it once");
	if (given > 1)
		return bad("%s", "--cgroup, --pid and --limit are exclusive", "give one of them");
	if (o->fill_host && o->limit_arg)
		return bad("%s", "--fill-host goes with --cgroup or --pid",
			   "drop it: --limit makes a limited cgroup of its own");
	if (strcmp(o->thp, "auto") && strcmp(o->thp, "never") && strcmp(o->thp, "always"))
		return bad("--thp %s: unknown mode", o->thp, "use auto, never or always");
	if (strcmp(o->format, "text") && strcmp(o->format, "json"))
		return bad("--format %s: unknown", o->format, "use text or json");
	if (o->limit_arg && (ret = parse_size_opt("limit", o->limit_arg, &o->limit)))
		return ret;
	if (o->limit_arg && o->limit < 16 * MP_MIB)
		return bad("--limit %s: below 16 MiB, too small to hold the probe process", o->limit_arg,
			   "give at least 16M");
	if (o->chunk_arg && (ret = parse_size_opt("chunk", o->chunk_arg, &o->chunk)))
		return ret;
	if (o->margin_arg && (ret = parse_size_opt("margin", o->margin_arg, &o->margin)))
		return ret;
	if (!o->cgroup_path && !o->pid && !o->limit_arg)
		o->limit = MP_GIB; /* the built-in default: a 1 GiB stand-in container */
	if (mp_out_check_opt("probe", o->out))
		return MP_EXIT_USAGE;
	return 0;
}

struct snaps {
	struct mp_attr *attr;
	struct mp_attr_snap start, stop, freed;
};

static void take_snapshot(enum mp_probe_phase ph, void *arg)
{
	struct snaps *s = arg;

	if (!s->attr)
		return;
	mp_attr_snapshot(s->attr, ph == MP_PROBE_START ? &s->start :
				  ph == MP_PROBE_STOP ? &s->stop : &s->freed);
}

int mp_cmd_probe(int argc, char **argv)
{
	struct probe_opts o;
	struct mp_host host;
	struct mp_cgroup target;
	struct mp_probe_result res;
	struct snaps sn = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	char name[64], errbuf[256] = "", b1[32], b2[32];
	bool target_created = false;
	struct mp_lock lock = { .fd = -1 };
	uint64_t target_oom0 = 0;
	cJSON *doc = NULL;
	struct mp_out out = { 0 };
	int ret, err;

	/* First: a stop asked for at any moment still gets a report. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = parse_opts(argc, argv, &o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (geteuid() != 0) {
		fputs("memprobe probe: needs root (it loads BPF programs and makes cgroups); "
		      "run it as root or with sudo\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (mp_host_read("", &host)) {
		fputs("memprobe probe: cannot read /proc/meminfo\n", stderr);
		return MP_EXIT_RUNTIME;
	}

	/* The target: an existing cgroup, or a stand-in container of --limit. */
	if (o.cgroup_path || o.pid) {
		if ((ret = mp_resolve_target("probe", "", &host, o.cgroup_path, o.pid, &target)))
			return ret;
		if (target.host_root && !o.fill_host)
			return bad("%s is the host's root memory cgroup: a probe there fills the host",
				   target.dir, "give a container's cgroup, or --fill-host to fill the host");
		/* before anything is made: one probe per cgroup */
		if ((ret = mp_lock_probe_or_say("probe", &target, &lock)))
			return ret;
		if (mp_cgroup_contains_self("", &host, &target))
			fprintf(stderr, "memprobe probe: memprobe itself runs in %s: its own memory "
				"(BPF maps, buffers) is charged to what it measures\n", target.dir);
	} else {
		if ((ret = mp_resolve_target("probe", "", &host, NULL, NULL, &target)))
			return ret;
		if (o.limit > target.effective_limit_bytes)
			return bad("--limit %s: above the effective limit of memprobe's own cgroup",
				   o.limit_arg ? o.limit_arg : "1G", "give a smaller --limit");
		target.effective_limit_bytes = o.limit; /* for the size checks below */
	}
	{
		uint64_t dchunk, dmargin;

		mp_probe_defaults(target.effective_limit_bytes, &dchunk, &dmargin);
		if (!o.chunk_arg)
			o.chunk = dchunk;
		if (!o.margin_arg)
			o.margin = dmargin;
	}
	if (o.chunk % (uint64_t)host.page_size) {
		mp_lock_release(&lock);
		return bad("--chunk %s: not a multiple of the page size", o.chunk_arg,
			   "give a multiple of 4 KiB such as 64M");
	}
	if (target.effective_limit_bytes < o.chunk) {
		mp_lock_release(&lock);
		snprintf(errbuf, sizeof(errbuf), "limit %s is below one chunk (%s)",
			 mp_fmt_bytes(target.effective_limit_bytes, b1, sizeof(b1)),
			 mp_fmt_bytes(o.chunk, b2, sizeof(b2)));
		return bad("%s", errbuf, "raise the limit or give a smaller --chunk");
	}
	if (target.effective_limit_bytes <= o.margin) {
		mp_lock_release(&lock);
		snprintf(errbuf, sizeof(errbuf), "limit %s is not above the margin (%s)",
			 mp_fmt_bytes(target.effective_limit_bytes, b1, sizeof(b1)),
			 mp_fmt_bytes(o.margin, b2, sizeof(b2)));
		return bad("%s", errbuf, "raise the limit or give a smaller --margin");
	}
	errbuf[0] = '\0';
	{
		pid_t other;

		/* what killed memprobes left, beside us and in the target; a probe
		 * of an older memprobe, without the lock, still shows there */
		mp_cgroup_reap_own("", &host);
		mp_cgroup_reap_stale(target.dir, &other);
		if (other) {
			fprintf(stderr, "memprobe probe: a memprobe (probe pid %d) is probing %s "
				"already; wait for it to finish\n", (int)other, target.dir);
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
	}
	if ((ret = mp_out_open(&out, o.out))) {
		ret = bad("-o %s: cannot create it", o.out, "give a writable path");
		goto out;
	}

	/* From here on everything made is undone before returning. */
	signal(SIGPIPE, SIG_IGN);

	if (!o.cgroup_path && !o.pid) {
		struct mp_cgroup self = target;

		snprintf(name, sizeof(name), "memprobe-target-%d", (int)getpid());
		ret = mp_cgroup_create(&host, &self, name, o.limit, &target);
		if (ret == -EOPNOTSUPP) {
			fprintf(stderr, "memprobe probe: %s does not delegate the memory controller, so "
				"--limit cannot make a limited child there; enable it (+memory in its "
				"cgroup.subtree_control) or probe an existing cgroup with --cgroup\n",
				self.dir);
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
		if (ret || (target_created = true, mp_cgroup_delegate_memory(&target)) ||
		    mp_cgroup_read("", &host, &target)) {
			fprintf(stderr, "memprobe probe: cannot create %s/%s: %s\n", self.dir, name,
				strerror(ret ? -ret : errno));
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
	}

	/* BPF: a failure here degrades the report, it does not stop the probe. */
	{
		struct mp_attr_opts ao = {
			.stack_sample_period = o.stack_sample_period,
			.btf_path = o.btf_path, .cg = &target,
		};

		if (mp_cgroup_id(&target, &ao.target_cgid) ||
		    mp_attr_start(&ao, &sn.attr, errbuf, sizeof(errbuf)))
			fprintf(stderr, "memprobe probe: attribution off: %s\n",
				errbuf[0] ? errbuf : "cannot get the target's cgroup id");
		else if (errbuf[0]) /* no BPF: the cgroup's files only */
			fprintf(stderr, "memprobe probe: %s; polling the cgroup's files instead\n",
				errbuf);
	}

	target_oom0 = mp_cgroup_oom_kills(&target);
	{
		struct mp_probe_cfg cfg = {
			.chunk = o.chunk, .margin = o.margin, .thp = o.thp,
			.threads = o.threads, .populate = o.populate,
			.stop = &g_stop_signal, .on_phase = take_snapshot, .arg = &sn,
		};

		if (mp_probe_run(&host, &target, &cfg, &res) && !res.interrupted) {
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
	}

	doc = mp_probe_doc(&(struct mp_probe_doc_in){
		.host = &host, .target = &target, .target_created = target_created, .res = &res,
		.chunk = o.chunk, .margin = o.margin, .thp = o.thp, .threads = o.threads,
		.populate = o.populate, .stack_sample_period = o.stack_sample_period, .top = o.top,
		.attr = sn.attr, .attr_err = errbuf, .start = &sn.start, .stop = &sn.stop,
		.freed = &sn.freed, .target_oom0 = target_oom0,
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
	mp_attr_stop(sn.attr);
	if (target_created && (err = mp_cgroup_remove(&target)))
		fprintf(stderr, "memprobe probe: could not remove %s: %s\n", target.dir,
			strerror(-err));
	mp_out_abort(&out);
	mp_lock_release(&lock);
	return ret;
}
