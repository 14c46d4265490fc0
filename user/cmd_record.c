// SPDX-License-Identifier: GPL-2.0
/* memprobe record: the command, its options and its target. */
#include "cmd_record.h"
#include "record.h"
#include "attr.h"
#include "cgroup.h"
#include "cli.h"
#include "doc.h"
#include "target.h"
#include "json.h"
#include "ksyms.h"
#include "lock.h"
#include "probe.h"
#include "render.h"
#include "out.h"
#include "util.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_signal(int sig)
{
	/* logrotate's postrotate, systemctl reload: the outputs opened anew */
	if (sig == SIGHUP) {
		mp_rec_reopen = 1;
		return;
	}
	mp_rec_signal = sig;
	mp_rec_signals_seen++;
}

enum { OPT_DURATION = MP_OPT_CMD, OPT_INTERVAL, OPT_PROBE_AT, OPT_READY_FD, OPT_OPENMETRICS,
       OPT_WAIT_CGROUP };

static const struct mp_cli_opt record_opts[] = {
	MP_CLI_OPT_CGROUP("record", NULL),
	MP_CLI_OPT_PID("record the cgroup of this process, until it exits"),
	MP_CLI_OPT_LIMIT("with -- CMD: the limit of the cgroup the command runs in (4M at least)",
			 "no limit"),
	{ "duration", 0, "SECONDS", "stop after this long (a command is stopped with SIGINT); "
	  "SIGHUP stops nothing: it reopens the outputs (a command is not sent it)",
	  "until SIGINT/SIGTERM or the command exits", OPT_DURATION },
	{ "interval", 0, "MS", "a timeline sample every MS milliseconds", "100", OPT_INTERVAL },
	{ "probe-at", 0, "SECONDS", "run a probe (memprobe probe) of the cgroup this long "
	  "after the start", "none", OPT_PROBE_AT },
	MP_CLI_OPTS_REPORT,
	MP_CLI_OPTS_STATUS,
	{ "openmetrics", 0, "FILE", "rewrite FILE every interval with the current sample as "
	  "--format openmetrics (for node_exporter's textfile collector: name it *.prom)",
	  "none", OPT_OPENMETRICS },
	{ "wait-cgroup", 0, NULL, "with --cgroup: when the cgroup is removed (or is not there "
	  "yet), write the report, wait for a cgroup of that path and record it anew",
	  "the cgroup's removal ends the recording", OPT_WAIT_CGROUP },
	{ "ready-fd", 0, "FD", "write \"ready\" to this inherited descriptor once the hooks are "
	  "attached and the baseline taken", "none", OPT_READY_FD },
	MP_CLI_OPT_BTF,
	MP_CLI_OPT_HELP,
	{ 0 },
};

static const char ready_fix[] = "give a descriptor memprobe inherits, such as 3 with 3>file";

static int record_opt(void *ctx, int id, const char *arg)
{
	struct rec_opts *o = ctx;
	long v;
	int ret = 0;

	switch (id) {
	case OPT_DURATION:
		ret = mp_cli_seconds("record", "--duration", arg, false, &o->duration_s);
		break;
	case OPT_PROBE_AT:
		ret = mp_cli_seconds("record", "--probe-at", arg, true, &o->probe_at_s);
		break;
	case OPT_INTERVAL:
		ret = mp_cli_count("record", "--interval", arg, 1, 3600000,
				   "a number of milliseconds", "give at least 1, such as 100", &v);
		o->interval_ms = v;
		break;
	case OPT_OPENMETRICS: {
		/* a file renamed over every interval: standard output or a
		 * directory cannot be that */
		int err = !*arg || !strcmp(arg, "-") ? -EINVAL : mp_out_check(arg);

		if (err)
			ret = mp_cli_bad("record", "--openmetrics %s: %s; give a file name such as "
					 "/var/lib/node_exporter/memprobe.prom", arg,
					 !*arg ? "an empty path" : err == -EINVAL ? "not standard output" :
					 err == -EISDIR ? "a directory" : err == -ENOENT ?
					 "no such directory" : strerror(-err));
		o->openmetrics = arg;
		break;
	}
	case OPT_WAIT_CGROUP:
		o->wait_cgroup = true;
		break;
	case OPT_READY_FD:
		ret = mp_cli_count("record", "--ready-fd", arg, 0, 65535, "an open file descriptor",
				   ready_fix, &v);
		if (!ret && v <= STDERR_FILENO)
			ret = mp_cli_bad("record", "--ready-fd %s: standard %s, which memprobe "
					 "uses; %s", arg, v == 0 ? "input" : v == 1 ? "output" :
					 "error", ready_fix);
		else if (!ret && fcntl((int)v, F_GETFD) < 0)
			ret = mp_cli_bad("record", "--ready-fd %s: not an open file descriptor; %s",
					 arg, ready_fix);
		/* memprobe's alone: a command holding it would delay the reader's
		 * end of file until the command ends */
		else if (!ret)
			fcntl((int)v, F_SETFD, FD_CLOEXEC);
		o->ready_fd = (int)v;
		break;
	}
	return ret;
}

static const struct mp_cli_cmd record_cmd = {
	.name = "record",
	.kind = "record",
	.synopsis = "[OPTIONS] (--cgroup PATH | --pid PID)\n"
		    "[OPTIONS] [--limit SIZE] -- CMD [ARGS...]",
	.opts = record_opts,
	.takes_command = true, /* the command's own options are not ours */
	.limit_min = 4 * MP_MIB,
	.opt = record_opt,
};

static int parse_opts(int argc, char **argv, struct rec_opts *o)
{
	struct mp_cli c;
	int ret, given;

	*o = (struct rec_opts){ .ready_fd = -1, .interval_ms = 100, .probe_at_s = -1,
				.limit = MP_UNLIMITED };
	if ((ret = mp_cli_parse(&record_cmd, argc, argv, &c, o)))
		return ret;
	o->cmd = c.rest;
	given = !!c.cgroup + !!c.pid + !!o->cmd;
	if (given != 1)
		return mp_cli_bad("record", "%s; give one of --cgroup PATH, --pid PID or "
				  "-- CMD ARGS", given ? "--cgroup, --pid and a command are "
				  "exclusive" : "nothing to record");
	if (c.limit_arg && !o->cmd)
		return mp_cli_bad("record", "--limit %s: only with a command; use -- CMD ARGS, or "
				  "drop --limit to watch an existing cgroup", c.limit_arg);
	if ((ret = mp_cli_finish(&record_cmd, &c)))
		return ret;
	/* the live file is renamed over every interval: on the report's path
	 * it would take the report's temporary file away, and the report be
	 * lost at the end */
	if (mp_same_file(o->openmetrics, c.out))
		return mp_cli_bad("record", "--openmetrics %s and -o %s name the same file; give "
				  "each its own file", o->openmetrics, c.out);
	ret = o->openmetrics ? mp_out_live_check(o->openmetrics, c.out) : 0;
	if (ret == -EPIPE)
		return mp_cli_bad("record", "--openmetrics %s: a FIFO, whose open waits for a "
				  "reader every interval; give a regular file's path",
				  o->openmetrics);
	if (ret == -EBUSY)
		return mp_cli_bad("record", "--openmetrics %s: the descriptor the report goes "
				  "to as well; give -o FILE, or --openmetrics a file of its own",
				  o->openmetrics);
	if (o->wait_cgroup && !c.cgroup)
		return mp_cli_bad("record", "--wait-cgroup: only with --cgroup PATH (a path that "
				  "can come back); drop it, or give --cgroup");
	if (o->wait_cgroup && o->duration_s > 0)
		return mp_cli_bad("record", "--wait-cgroup records until stopped: drop --duration, "
				  "or --wait-cgroup");
	if (o->probe_at_s >= 0 && o->duration_s > 0 && o->probe_at_s >= o->duration_s)
		return mp_cli_bad("record", "--probe-at %g comes after the end of --duration %g; "
				  "give a --probe-at earlier than --duration",
				  o->probe_at_s, o->duration_s);
	MP_CLI_TAKE(o, &c);
	return 0;
}

/* ---- the command's entry ---------------------------------------------------- */

/*
 * -- CMD where no run cgroup can be made (err: the mkdir's; a container's
 * cgroup filesystem, read-only or not memprobe's to write): the command
 * runs where memprobe runs, its memory is its process tree's, and the
 * report says so. With --limit there is nothing to put the limit on.
 * Returns 0 (r->cg still memprobe's own) or the exit status.
 */
static int in_place(struct rec *r, const char *name, int err)
{
	if (r->o.limit != MP_UNLIMITED)
		return mp_cli_fail("record", "cannot create %s/%s: %s (a container's cgroup "
				   "filesystem), so --limit has no cgroup to limit; drop --limit to "
				   "run the command where memprobe runs", r->cg.dir, name,
				   strerror(-err));
	r->in_place = true;
	r->in_place_why[0] = '\0';
	mp_appendf(r->in_place_why, sizeof(r->in_place_why), "cannot create %s/%s: %s (a "
		   "container's cgroup filesystem): the command runs in memprobe's own cgroup, "
		   "and its own memory is its process tree's", r->cg.dir, name, strerror(-err));
	mp_cli_warn("record", "running %s in memprobe's own cgroup %s: %s; the cgroup's figures "
		    "include memprobe and anything else running there", r->o.cmd[0], r->cg.dir,
		    strerror(-err));
	/* a --probe-at probe fills this cgroup: one probe at a time */
	if (r->o.probe_at_s >= 0)
		return mp_lock_probe_or_say("record", &r->cg, &r->lock);
	return 0;
}

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
			return mp_cli_bad("record", "--probe-at: %s is the host's root memory "
					  "cgroup; probe a container's cgroup (memprobe probe "
					  "--fill-host fills the host)", r->cg.dir);
		mp_cli_warn("record", "%s is the host's root memory cgroup: recording the "
			    "whole host", r->cg.dir);
	}
	/* a probe where nothing limits the cgroup fills the host; a command's
	 * memprobe-run cgroup gets --limit's limit */
	if (r->o.probe_at_s >= 0 && !(r->o.cmd && r->o.limit != MP_UNLIMITED) &&
	    mp_cgroup_fills_host(&r->cg))
		return mp_cli_bad("record", "--probe-at: %s has no memory limit on its path: the "
				  "probe would fill the host; give --limit SIZE for the command, "
				  "or record a cgroup with a limit", r->cg.dir);
	if (!r->o.cmd && r->o.probe_at_s >= 0 &&
	    (ret = mp_lock_probe_or_say("record", &r->cg, &r->lock)))
		return ret;
	mp_cgroup_reap_own("", &r->host);
	if (!r->o.cmd)
		mp_cgroup_reap_stale(r->cg.dir, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (r->o.cmd) {
		struct mp_cgroup self = r->cg;

		snprintf(name, sizeof(name), "memprobe-run-%d", (int)getpid());
		ret = mp_cgroup_create(&r->host, &self, name, r->o.limit, &r->cg);
		if (ret == -EROFS || ret == -EACCES || ret == -EPERM) {
			r->cg = self;
			if ((ret = in_place(r, name, ret)))
				return ret;
		}
		if (ret) {
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
		r->cg_created = !r->in_place;
		/* not delegated on v2: a cgroup that delegates cannot hold the
		 * command's processes (--probe-at then runs in it, see probe.c) */
		mp_cgroup_read("", &r->host, &r->cg);
	}
	mp_path(p, sizeof(p), "%s/%s", r->cg.dir, mp_cgroup_file(&r->cg, "usage"));
	r->usage_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (r->usage_fd < 0)
		return mp_cli_fail("record", "cannot open %s: %s", p, strerror(errno));
	return 0;
}

/* record --openmetrics, after each timeline sample: the live file. A
 * failure is said once; the recording goes on (its report is what counts). */
static void write_openmetrics(struct rec *r)
{
	cJSON *doc = mp_rec_build_live(r);
	char err[400];
	int ret = doc ? mp_openmetrics_write(doc, r->o.openmetrics, err, sizeof(err)) : -ENOMEM;

	if (ret && !r->on_sample_failed)
		fprintf(stderr, "memprobe record: --openmetrics %s: cannot write it: %s; "
			"recording on\n", r->o.openmetrics, doc ? err : strerror(-ret));
	r->on_sample_failed = ret != 0;
	cJSON_Delete(doc);
}

/*
 * SIGHUP: -o's temporary file made anew should it have gone (moved away
 * with a rotated directory, removed by a cleaner of old files: the report
 * would be lost at the end), the live file rewritten now and a failure to
 * write it said again. Nothing is appended to: every file memprobe writes
 * is replaced whole, so logrotate needs no copytruncate.
 */
static void reopen_outputs(struct rec *r)
{
	int err = r->out ? mp_out_reopen(r->out) : 0;

	if (err < 0)
		fprintf(stderr, "memprobe record: SIGHUP: -o %s: cannot make its temporary file "
			"anew: %s; recording on (SIGINT or SIGTERM stops it)\n", r->o.out,
			strerror(-err));
	else
		fprintf(stderr, "memprobe record: SIGHUP: outputs reopened%s; recording on "
			"(SIGINT or SIGTERM stops it)\n",
			err ? " (-o's temporary file had gone: made anew)" : "");
	r->on_sample_failed = false;
	if (r->o.openmetrics && r->have_last)
		write_openmetrics(r);
}

/* The recorder's lines while it records (the --probe-at probe's). */
static void say_warning(struct rec *r, const char *line)
{
	(void)r;
	mp_cli_warn("record", "%s", line);
}

/* The cgroup gone: one line, before the report. */
static bool say_removed(struct rec *r)
{
	if (!r->end_reason || strcmp(r->end_reason, "cgroup removed"))
		return false;
	/* the report's moment (run.duration_ms, its last sample: the cgroup
	 * was there then, gone at the next read), not the clock now: the
	 * finish in between made this line 0.1 s later than the report */
	fprintf(stderr, "memprobe record: %s was removed after %.1f s: the recording ends "
		"there%s\n", r->cg.dir, (double)(r->have_last ? r->last.t_ms : 0) / 1000.0,
		r->o.wait_cgroup ?
		"; its report, then memprobe waits for it to come back (--wait-cgroup)" :
		", its report covers it until then (--wait-cgroup would wait for it to come back)");
	return true;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* Is a memory cgroup at --cgroup's path? */
static bool cgroup_there(const struct rec *r)
{
	struct mp_cgroup *cg = malloc(sizeof(*cg));
	bool there = cg && !mp_cgroup_from_path("", &r->host, r->o.cgroup_path, cg);

	free(cg);
	return there;
}

/*
 * A cgroup at --cgroup's path (as /proc/PID/cgroup shows one) in another
 * hierarchy, where the memory hierarchy has none: a v1 systemd unit with
 * memory accounting off has its pids and name=systemd cgroups and never a
 * memory one, so --wait-cgroup would wait forever. That hierarchy's mount
 * point into mnt; false if there is none (a cgroup still to come).
 */
static bool cgroup_elsewhere(const char *path, char *mnt, size_t len)
{
	FILE *f = path[0] == '/' ? fopen("/proc/self/mountinfo", "r") : NULL;
	char line[4096], mp[PATH_MAX], fs[32], dir[2 * PATH_MAX];
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep || sscanf(sep, " - %31s", fs) != 1 ||
		    (strcmp(fs, "cgroup") && strcmp(fs, "cgroup2")) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mp) != 1)
			continue;
		snprintf(dir, sizeof(dir), "%s%s", strcmp(mp, "/") ? mp : "", path);
		if ((found = is_dir(dir)))
			snprintf(mnt, len, "%s", mp);
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * --wait-cgroup: until a memory cgroup is at --cgroup's path again (0), or
 * a stop signal (1), polled every interval (100 ms to 1 s). The live file
 * is removed meanwhile, no figures of a cgroup that is not there: it comes
 * back with the next recording's first sample.
 */
static int wait_cgroup(struct rec *r)
{
	long ms = MP_MIN(MP_MAX(r->o.interval_ms, 100), 1000);
	struct stat st;

	if (r->o.openmetrics && !lstat(r->o.openmetrics, &st) && S_ISREG(st.st_mode))
		unlink(r->o.openmetrics);
	while (!mp_rec_signal) {
		if (mp_rec_reopen) {
			mp_rec_reopen = 0;
			fprintf(stderr, "memprobe record: SIGHUP: waiting for %s (SIGINT or SIGTERM "
				"stops it)\n", r->o.cgroup_path);
		}
		if (cgroup_there(r))
			return 0;
		usleep((useconds_t)ms * 1000);
	}
	return 1;
}

/* The next recording of --wait-cgroup: a new struct rec, the same options. */
static void rec_again(struct rec *r)
{
	struct rec_opts o = r->o;
	struct mp_host h = r->host;

	*r = (struct rec){ .usage_fd = -1, .lock = { .fd = -1 },
			   .sample_lock = PTHREAD_MUTEX_INITIALIZER };
	r->o = o;
	r->host = h;
	fprintf(stderr, "memprobe record: %s is there: recording it\n", r->o.cgroup_path);
}

/*
 * The report: built, the live file's last word, then rendered into -o's
 * file. Whatever fails from here on, the measurement is not lost: the JSON
 * document is saved whole (mp_emit_save) and the exit is 1.
 */
static int write_report(struct rec *r, struct mp_out *out)
{
	struct mp_ksyms *ks = r->attr ? mp_ksyms_load("/proc/kallsyms") : NULL;
	cJSON *doc = mp_rec_build_report(r, ks);
	char oerr[400];
	int err;

	mp_ksyms_free(ks); /* before the timeline: the two are never both held */
	if (!doc) /* not one byte of it: nothing to save */
		return mp_cli_fail("record", "out of memory building the report: the "
				   "measurement is lost; give memprobe more memory");
	mp_rec_add_timeline(r, doc);
	mp_tl_free(&r->tl);
	/* the live file's last word is the report's own document: the same
	 * figures as `memprobe report --format openmetrics` of it (the
	 * attribution's growth, the final faults and peak) */
	if (r->o.openmetrics && doc &&
	    (err = mp_openmetrics_write(doc, r->o.openmetrics, oerr, sizeof(oerr))))
		fprintf(stderr, "memprobe record: --openmetrics %s: cannot write it: %s\n",
			r->o.openmetrics, oerr);
	/* a file size limit fails the write (and the document is saved), not
	 * the process */
	signal(SIGXFSZ, SIG_IGN);
	if ((err = mp_emit_save("record", doc, r->o.format, out, r->o.out)))
		return err;
	if (r->o.cmd && r->child_exited)
		return WIFEXITED(r->child_status) ? WEXITSTATUS(r->child_status)
						  : 128 + WTERMSIG(r->child_status);
	return 0;
}

int mp_cmd_record(int argc, char **argv)
{
	struct rec r = { .usage_fd = -1, .lock = { .fd = -1 },
			 .sample_lock = PTHREAD_MUTEX_INITIALIZER };
	int ret = 0, go_fd = -1, ee_fd = -1;
	struct mp_out out = { 0 };
	bool removed = false;
	char mnt[PATH_MAX], why[400];

	/* First: a stop asked for at any moment still gets a report. */
	mp_cli_on_stop(on_signal);
	ret = parse_opts(argc, argv, &r.o);
	if (ret)
		return ret < 0 ? 0 : ret;
	if ((ret = mp_cli_need_root("record")) || (ret = mp_cli_host("record", &r.host)))
		return ret;
	if (r.o.wait_cgroup && !cgroup_there(&r) && !is_dir(r.o.cgroup_path) &&
	    cgroup_elsewhere(r.o.cgroup_path, mnt, sizeof(mnt)))
		return mp_cli_bad("record", "--cgroup %s: a cgroup in %s, but not a memory cgroup "
				  "(memory accounting off for it), so --wait-cgroup would wait "
				  "forever; turn it on (systemd: MemoryAccounting=yes) or give a "
				  "memory cgroup's path", r.o.cgroup_path, mnt);
	if (r.o.wait_cgroup && !cgroup_there(&r) && !is_dir(r.o.cgroup_path)) {
		fprintf(stderr, "memprobe record: --cgroup %s: no such memory cgroup yet; waiting "
			"for it (--wait-cgroup)\n", r.o.cgroup_path);
		if (wait_cgroup(&r))
			return 0;
		rec_again(&r);
	}
again:
	if ((ret = open_target(&r)))
		goto out;
	if ((ret = mp_out_open(&out, r.o.out))) {
		ret = mp_cli_out_bad("record", r.o.out, ret);
		goto out;
	}
	/* -o -, /dev/stdout, /dev/fd/1: the report shares standard output */
	r.report_on_stdout = mp_out_shares_fd(&out, STDOUT_FILENO);
	/* in place the session's rows are the command's process tree: its
	 * root first (it waits for the go until the baseline is taken) */
	if (r.o.cmd && r.in_place && (ret = mp_rec_start_command(&r, &go_fd, &ee_fd))) {
		ret = mp_cli_fail("record", "cannot start %s: %s", r.o.cmd[0], strerror(-ret));
		goto out;
	}
	mp_rec_start_attr(&r, why, sizeof(why));
	if (why[0])
		mp_cli_warn("record", "%s", why);
	/* said once BPF is known: no maps where none were loaded */
	if (!r.o.cmd && mp_cgroup_contains_self("", &r.host, &r.cg))
		mp_cli_warn("record", "memprobe itself runs in %s: its own memory (%s) is charged "
			    "to what it measures", r.cg.dir, r.attr && !why[0] ?
			    "BPF maps, buffers" : "buffers; no BPF maps: none were loaded");
	r.on_warn = say_warning;
	if (r.o.openmetrics)
		r.on_sample = write_openmetrics;
	r.on_reopen = reopen_outputs;
	r.out = &out;
	if (r.o.cmd && !r.in_place && (ret = mp_rec_start_command(&r, &go_fd, &ee_fd))) {
		ret = mp_cli_fail("record", "cannot start %s: %s", r.o.cmd[0], strerror(-ret));
		goto out;
	}
	mp_status_begin(&r.status, r.o.status_mode, STDERR_FILENO);
	if ((ret = mp_rec_baseline(&r, &go_fd, &ee_fd))) {
		mp_cli_warn("record", "%s", r.err);
		goto out;
	}
	if (r.o.ready_fd >= 0) {
		/* for scripts and benchmarks: the hooks are attached, the baseline taken */
		if (write(r.o.ready_fd, "ready\n", 6) != 6) {
			/* the reader went away: nothing to tell */
		}
		close(r.o.ready_fd);
		r.o.ready_fd = -1; /* once: not again for --wait-cgroup's next */
	}
	mp_rec_watch(&r, r.o.duration_s > 0 ? (uint64_t)(r.o.duration_s * 1000.0) : 0);
	mp_rec_finish(&r);
	if (r.probe_started && r.probe_ret)
		mp_cli_warn("record", "the --probe-at probe failed: %s", r.probe_res.err[0] ?
			    r.probe_res.err : strerror(-r.probe_ret));
	removed = say_removed(&r);
	ret = write_report(&r, &out);
out:
	if (go_fd >= 0)
		close(go_fd);
	if (ee_fd >= 0)
		close(ee_fd);
	if (mp_rec_cleanup(&r))
		mp_cli_warn("record", "%s", r.err);
	mp_out_abort(&out);
	if (!ret && removed && r.o.wait_cgroup) {
		if (wait_cgroup(&r))
			return 0;
		rec_again(&r);
		removed = false;
		goto again;
	}
	return ret;
}
