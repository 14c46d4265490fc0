// SPDX-License-Identifier: GPL-2.0
/* memprobe record: the command, its options and its target. */
#include "recorder.h"
#include "record.h"
#include "attr.h"
#include "cgroup.h"
#include "doc.h"
#include "target.h"
#include "json.h"
#include "ksyms.h"
#include "lock.h"
#include "probe.h"
#include "render.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static void on_signal(int sig)
{
	mp_rec_signal = sig;
	mp_rec_signals_seen++;
}

static int bad(const char *fmt, const char *arg, const char *fix)
{
	fputs("memprobe record: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; %s\n", fix);
	return MP_EXIT_USAGE;
}

static char optbuf[64];

static void usage(FILE *f)
{
	fputs("usage: memprobe record (--cgroup PATH | --pid PID | [--limit SIZE] -- CMD [ARGS...])\n"
	      "                       [--duration SECONDS] [--interval MS] [--probe-at SECONDS]\n"
	      "                       [--format text|json] [-o FILE] [--stack-sample N] [--top N]\n"
	      "                       [--ready-fd FD] [--btf FILE]\n", f);
}

/* Durations: 31 days at most (a double far beyond it would overflow the
 * millisecond clock). */
#define MAX_SECONDS (31 * 86400)

static int parse_seconds(const char *name, const char *arg, double *v, bool zero_ok)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(*v) || *v < 0 || (!zero_ok && *v == 0)) {
		fprintf(stderr, "memprobe record: --%s %s: not a duration; give seconds, "
			"such as 30 or 0.5\n", name, arg);
		return MP_EXIT_USAGE;
	}
	if (*v > MAX_SECONDS) {
		fprintf(stderr, "memprobe record: --%s %s: longer than %d days; give at most %d "
			"seconds, or no --duration to record until stopped\n", name, arg,
			MAX_SECONDS / 86400, MAX_SECONDS);
		return MP_EXIT_USAGE;
	}
	return 0;
}

static int parse_opts(int argc, char **argv, struct rec_opts *o)
{
	static const struct option lopts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "limit", required_argument, NULL, 'l' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "probe-at", required_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "stack-sample", required_argument, NULL, 's' },
		{ "top", required_argument, NULL, 'T' },
		{ "ready-fd", required_argument, NULL, 'R' },
		{ "btf", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, ret, given = 0, seen[2] = { 0 };
	char *end;
	long v;

	memset(o, 0, sizeof(*o));
	o->ready_fd = -1;
	o->format = "text";
	o->interval_ms = 100;
	o->probe_at_s = -1;
	o->stack_sample_period = 1;
	o->top = 10;
	o->limit = MP_UNLIMITED;
	optind = 1;
	opterr = 0;
	/* "+": the command's own options are not ours */
	while ((c = getopt_long(argc, argv, "+o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->cgroup_path = optarg; given += !seen[0]++; break;
		case 'p': o->pid = optarg; given += !seen[1]++; break;
		case 'l': o->limit_arg = optarg; break;
		case 'f': o->format = optarg; break;
		case 'o': o->out = optarg; break;
		case 'd':
			if ((ret = parse_seconds("duration", optarg, &o->duration_s, false)))
				return ret;
			break;
		case 'P':
			if ((ret = parse_seconds("probe-at", optarg, &o->probe_at_s, true)))
				return ret;
			break;
		case 'i':
		case 's':
		case 'T':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 3600000 ||
			    (c == 'i' && v == 0))
				return bad(c == 'i' ? "--interval %s: not a number of milliseconds"
						    : "--stack-sample/--top %s: not a count",
					   optarg, c == 'i' ? "give at least 1, such as 100"
							    : "give a whole number");
			if (c == 'i')
				o->interval_ms = v;
			else if (c == 's')
				o->stack_sample_period = (uint32_t)v;
			else
				o->top = (int)v;
			break;
		case 'R':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0 || v > 65535 ||
			    fcntl((int)v, F_GETFD) < 0)
				return bad("--ready-fd %s: not an open file descriptor", optarg,
					   "give a descriptor memprobe inherits, such as 3 with 3>file");
			o->ready_fd = (int)v;
			break;
		case 'B':
			if ((ret = mp_attr_btf_opt("record", optarg)))
				return ret;
			o->btf_path = optarg;
			break;
		case 'h': usage(stdout); return -1;
		default:
			return bad("unknown option or missing value '%s'", mp_bad_option(argv, optbuf, sizeof(optbuf)),
				   "see memprobe record --help");
		}
	}
	if (optind < argc) {
		o->cmd = argv + optind;
		given++;
	}
	if (seen[0] > 1 || seen[1] > 1)
		return bad("%s given twice", seen[0] > 1 ? "--cgroup" : "--pid", "give it once");
	if (given != 1)
		return bad("%s", given ? "--cgroup, --pid and a command are exclusive"
				       : "nothing to record",
			   "give one of --cgroup PATH, --pid PID or -- CMD ARGS");
	if (o->limit_arg && !o->cmd)
		return bad("--limit %s: only with a command", o->limit_arg,
			   "use -- CMD ARGS, or drop --limit to mp_rec_watch an existing cgroup");
	if (o->limit_arg) {
		int err = mp_parse_size(o->limit_arg, &o->limit);

		if (err == -ERANGE)
			return bad("--limit %s: too large", o->limit_arg, "give less than 8388608T");
		if (err)
			return bad("--limit %s: not a size", o->limit_arg,
				   "give a size such as 512M or 1G");
		if (o->limit < 4 * MP_MIB)
			return bad("--limit %s: below 4 MiB", o->limit_arg, "give at least 4M");
	}
	if (o->probe_at_s >= 0 && o->duration_s > 0 && o->probe_at_s >= o->duration_s) {
		char what[96];

		snprintf(what, sizeof(what), "--probe-at %g comes after the end of --duration %g",
			 o->probe_at_s, o->duration_s);
		return bad("%s", what, "give a --probe-at earlier than --duration");
	}
	if (strcmp(o->format, "text") && strcmp(o->format, "json"))
		return bad("--format %s: unknown", o->format, "use text or json");
	if (mp_out_check_opt("record", o->out))
		return MP_EXIT_USAGE;
	return 0;
}

/* ---- the command's entry ---------------------------------------------------- */

/*
 * The cgroup to mp_rec_watch: resolved, locked against a second probe when
 * --probe-at will fill it, stale memprobe cgroups reaped, and in command
 * mode a new memprobe-run-<pid> under memprobe's own. Returns 0 or the exit
 * status to leave with; what it made is in r for mp_rec_cleanup().
 */
static int open_target(struct rec *r)
{
	char name[64], p[PATH_MAX];
	int ret;

	if ((ret = mp_resolve_target("record", "", &r->host, r->o.cgroup_path, r->o.pid, &r->cg)))
		return ret;
	if (!r->o.cmd && r->cg.host_root) {
		if (r->o.probe_at_s >= 0)
			return bad("--probe-at: %s is the host's root memory cgroup", r->cg.dir,
				   "probe a container's cgroup (memprobe probe --fill-host fills the host)");
		fprintf(stderr, "memprobe record: %s is the host's root memory cgroup: "
			"recording the whole host\n", r->cg.dir);
	}
	if (!r->o.cmd && r->o.probe_at_s >= 0 &&
	    (ret = mp_lock_probe_or_say("record", &r->cg, &r->lock)))
		return ret;
	if (!r->o.cmd && mp_cgroup_contains_self("", &r->host, &r->cg))
		fprintf(stderr, "memprobe record: memprobe itself runs in %s: its own memory "
			"(BPF maps, buffers) is charged to what it measures\n", r->cg.dir);
	mp_cgroup_reap_own("", &r->host);
	if (!r->o.cmd)
		mp_cgroup_reap_stale(r->cg.dir, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (r->o.cmd) {
		struct mp_cgroup self = r->cg;

		snprintf(name, sizeof(name), "memprobe-run-%d", (int)getpid());
		if ((ret = mp_cgroup_create(&r->host, &self, name, r->o.limit, &r->cg))) {
			if (ret == -EOPNOTSUPP)
				fprintf(stderr, "memprobe record: %s does not delegate the memory "
					"controller, so --limit cannot make a limited child there; enable "
					"it (+memory in its cgroup.subtree_control) or run without --limit\n",
					self.dir);
			else
				fprintf(stderr, "memprobe record: cannot create %s/%s: %s\n", self.dir,
					name, strerror(-ret));
			return MP_EXIT_RUNTIME;
		}
		r->cg_created = true;
		/* not delegated on v2: a cgroup that delegates cannot hold the
		 * command's processes (--probe-at then runs in it, see probe.c) */
		mp_cgroup_read("", &r->host, &r->cg);
	}
	mp_path(p, sizeof(p), "%s/%s", r->cg.dir, mp_cgroup_file(&r->cg, "usage"));
	r->usage_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (r->usage_fd < 0) {
		fprintf(stderr, "memprobe record: cannot open %s: %s\n", p, strerror(errno));
		return MP_EXIT_RUNTIME;
	}
	return 0;
}

static int write_report(struct rec *r, struct mp_out *out)
{
	struct mp_ksyms *ks = r->attr ? mp_ksyms_load("/proc/kallsyms") : NULL;
	cJSON *doc = mp_rec_build_report(r, ks);
	int err;

	mp_ksyms_free(ks);
	err = mp_emit("record", doc, r->o.format, out->f);
	cJSON_Delete(doc);
	if (err)
		return err;
	if ((err = mp_out_commit(out))) {
		fprintf(stderr, "memprobe record: cannot write the report to %s: %s\n",
			r->o.out ? r->o.out : "standard output", strerror(-err));
		return MP_EXIT_RUNTIME;
	}
	if (r->o.cmd && r->child_exited)
		return WIFEXITED(r->child_status) ? WEXITSTATUS(r->child_status)
						  : 128 + WTERMSIG(r->child_status);
	return 0;
}

int mp_cmd_record(int argc, char **argv)
{
	struct rec r = { .usage_fd = -1, .lock = { .fd = -1 } };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret = 0, go_fd = -1, ee_fd = -1;
	struct mp_out out = { 0 };

	/* First: a stop asked for at any moment still gets a report. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	ret = parse_opts(argc, argv, &r.o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if (geteuid() != 0) {
		fputs("memprobe record: needs root (it loads BPF programs and makes cgroups); "
		      "run it as root or with sudo\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (mp_host_read("", &r.host)) {
		fputs("memprobe record: cannot read /proc/meminfo\n", stderr);
		return MP_EXIT_RUNTIME;
	}
	if ((ret = open_target(&r)))
		goto out;
	if (mp_out_open(&out, r.o.out)) {
		ret = bad("-o %s: cannot create it", r.o.out, "give a writable path");
		goto out;
	}
	mp_rec_start_attr(&r);
	if (r.o.cmd && (ret = mp_rec_start_command(&r, &go_fd, &ee_fd))) {
		fprintf(stderr, "memprobe record: cannot start %s: %s\n", r.o.cmd[0], strerror(-ret));
		ret = MP_EXIT_RUNTIME;
		goto out;
	}
	if ((ret = mp_rec_baseline(&r, &go_fd, &ee_fd)))
		goto out;
	if (r.o.ready_fd >= 0) {
		/* for scripts and benchmarks: the hooks are attached, the mp_rec_baseline taken */
		if (write(r.o.ready_fd, "ready\n", 6) != 6) {
			/* the reader went away: nothing to tell */
		}
		close(r.o.ready_fd);
	}
	mp_rec_watch(&r, r.o.duration_s > 0 ? (uint64_t)(r.o.duration_s * 1000.0) : 0);
	mp_rec_finish(&r);
	ret = write_report(&r, &out);
out:
	if (go_fd >= 0)
		close(go_fd);
	if (ee_fd >= 0)
		close(ee_fd);
	mp_rec_cleanup(&r);
	mp_out_abort(&out);
	return ret;
}
