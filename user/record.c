// SPDX-License-Identifier: GPL-2.0
/*
 * memprobe record: the probe's attribution over a running workload or a
 * command, with a timeline, the peak, per-process shares and OOM kills.
 *
 * One loop: wait for OOM events on the ring buffer for one interval (that is
 * the sleep), then take a sample: the cgroup's usage and memory.stat, and the
 * BPF whole-target counters (one per-CPU array lookup). The per-process and
 * per-stack maps are read only at a new peak and at the end.
 */
#include "record.h"
#include "attr.h"
#include "cgroup.h"
#include "cmd_limits.h"
#include "json.h"
#include "ksyms.h"
#include "lock.h"
#include "probe.h"
#include "report.h"
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

struct sample {
	uint64_t t_ms;
	uint64_t usage_bytes;
	uint64_t faults_per_sec;
	struct mp_cg_stat stat;             /* from the kernel's files */
	int64_t bpf_growth[MP_NR_CATS];     /* BPF: net bytes since the start */
};

struct oom {
	uint64_t t_ms;
	struct mp_oom_event ev;
	struct sample at;                   /* the last sample before it */
};

struct rec_opts {
	const char *cgroup_path, *pid, *limit_arg, *format, *out, *btf_path;
	uint64_t limit;
	double duration_s, probe_at_s;
	long interval_ms;
	int ready_fd;           /* -1, or where to write "ready\n" once attached */
	uint32_t stack_sample_period;
	int top;
	char **cmd;
};

struct rec {
	struct rec_opts o;
	struct mp_host host;
	struct mp_cgroup cg;
	bool cg_created;
	struct mp_attr *attr;
	int usage_fd;
	struct timespec t0;
	struct sample *samples;             /* the timeline: one per interval */
	size_t nsamples, cap;
	uint64_t samples_dropped;           /* the timeline could not grow (ENOMEM) */
	uint64_t next_timeline_ms;
	/* Every sample, the timeline's and the quick ones taken near the limit:
	 * the peak and the vector before an OOM kill come from these. */
	struct sample last, prev, peak;
	bool have_last, have_prev;
	uint64_t kpeak0;                    /* the kernel's peak counter at the start */
	bool have_kpeak0;
	struct mp_attr_snap start, at_peak, end;
	bool have_peak_snap;
	struct mp_lock lock;                /* --probe-at on an existing cgroup */
	struct oom *ooms;
	size_t nooms;
	uint64_t oom_kill_count0;
	uint64_t faults_prev;
	uint64_t t_prev_ms;
	pid_t child;            /* the command, in command mode */
	int child_status;
	bool child_exited;
	uint64_t stop_sent_ms;  /* --duration ran out: SIGINT sent to the command then */
	const char *end_reason;
	/* --probe-at */
	pthread_t probe_thread;
	bool probe_started, probe_done;
	int probe_ret;
	struct mp_probe_result probe_res;
	uint64_t probe_chunk, probe_margin;
};

static volatile sig_atomic_t g_signal;
static volatile sig_atomic_t g_signals_seen;

static void on_signal(int sig)
{
	g_signal = sig;
	g_signals_seen++;
}

static uint64_t now_ms(const struct rec *r)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - r->t0.tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - r->t0.tv_nsec) / 1000000);
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
			   "use -- CMD ARGS, or drop --limit to watch an existing cgroup");
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

/* ---- sampling ------------------------------------------------------------- */

/*
 * How long to wait before the next sample. Every interval, for the timeline;
 * sooner while the usage rises toward the effective limit (it could reach
 * it within two intervals, or has less than 1/16 of it left), so that the
 * peak and the vector before an OOM kill are at most QUICK_MS old: at
 * 2 GB/s, 100 ms would be 200 MB.
 */
#define QUICK_MS 5

static long next_wait_ms(const struct rec *r, uint64_t now)
{
	long due = r->next_timeline_ms > now ? (long)(r->next_timeline_ms - now) : 0;
	uint64_t lim = r->cg.effective_limit_bytes, u = r->last.usage_bytes;
	double rate, room;

	if (!r->have_prev) /* no rate yet: a second sample soon gives one */
		return MP_MIN(due, QUICK_MS);
	if (u <= r->prev.usage_bytes || r->last.t_ms <= r->prev.t_ms)
		return due;
	rate = (double)(u - r->prev.usage_bytes) / (double)(r->last.t_ms - r->prev.t_ms);
	room = u < lim ? (double)(lim - u) : 0;
	if (room <= rate * 2.0 * (double)r->o.interval_ms || room < (double)lim / 16)
		return MP_MIN(due, QUICK_MS);
	return due;
}

static void read_sample(struct rec *r, struct sample *s)
{
	struct mp_totals t;

	s->t_ms = now_ms(r);
	mp_cgroup_stat("", &r->cg, &s->stat);
	if (r->attr && !mp_attr_totals(r->attr, &t)) {
		uint64_t dt = s->t_ms > r->t_prev_ms ? s->t_ms - r->t_prev_ms : 1;
		uint64_t faults = t.faults;

		/* no fault hook: memory.stat's pgfault, the cgroup's count */
		if (mp_attr_hooks(r->attr)[MP_CONCERN_FAULTS].polled)
			faults = s->stat.have_pgfault ? s->stat.pgfault : r->faults_prev;
		for (int k = 0; k < MP_NR_CATS; k++)
			s->bpf_growth[k] = t.charge_bytes[k] - r->start.totals.charge_bytes[k];
		s->faults_per_sec = r->have_last ? (faults - r->faults_prev) * 1000 / dt : 0;
		r->faults_prev = faults;
	}
	r->t_prev_ms = s->t_ms;
}

/* Append s to the timeline; a sample that cannot be kept is counted. */
static void keep_sample(struct rec *r, const struct sample *s)
{
	if (r->nsamples == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct sample *p = realloc(r->samples, cap * sizeof(*p));

		if (!p) {
			r->samples_dropped++;
			return;
		}
		r->samples = p;
		r->cap = cap;
	}
	r->samples[r->nsamples++] = *s;
}

/*
 * Take one sample; into the timeline when timeline is set. A new peak also
 * snapshots the per-process and per-stack maps. Returns -ENOENT when the
 * cgroup is gone.
 */
static int take_sample(struct rec *r, bool timeline)
{
	struct sample s = { 0 };
	char buf[64];
	ssize_t n;

	n = pread(r->usage_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0 || access(r->cg.dir, F_OK))
		return -ENOENT;
	buf[n] = '\0';
	s.usage_bytes = strtoull(buf, NULL, 10);
	read_sample(r, &s);
	if (timeline) {
		keep_sample(r, &s);
		r->next_timeline_ms += (uint64_t)r->o.interval_ms;
		if (r->next_timeline_ms <= s.t_ms) /* fell behind: no burst to catch up */
			r->next_timeline_ms = s.t_ms + (uint64_t)r->o.interval_ms;
	}
	if (!r->have_last || s.usage_bytes > r->peak.usage_bytes) {
		r->peak = s;
		if (r->attr) {
			mp_attr_snap_free(&r->at_peak);
			r->have_peak_snap = mp_attr_snapshot(r->attr, &r->at_peak) == 0;
		}
	}
	r->prev = r->last;
	r->have_prev = r->have_last;
	r->last = s;
	r->have_last = true;
	return 0;
}

static void on_oom(const struct mp_oom_event *e, void *arg)
{
	struct rec *r = arg;
	struct oom *p = realloc(r->ooms, (r->nooms + 1) * sizeof(*p));

	if (!p)
		return;
	r->ooms = p;
	memset(&p[r->nooms], 0, sizeof(*p));
	p[r->nooms].t_ms = now_ms(r);
	p[r->nooms].ev = *e;
	if (r->have_last) /* at most QUICK_MS old when the usage neared the limit */
		p[r->nooms].at = r->last;
	r->nooms++;
}

static void status_line(const struct rec *r)
{
	const struct sample *s = &r->last;
	char b1[32], b2[32], b3[32];
	int top = 0;

	for (int k = 1; k < MP_NR_CATS; k++)
		if (k != MP_CAT_KERNEL && s->bpf_growth[k] > s->bpf_growth[top])
			top = k;
	fprintf(stderr, "\r\033[K%7.1fs  usage %s (%.0f%% of %s)  top: %s %s", s->t_ms / 1000.0,
		mp_fmt_bytes(s->usage_bytes, b1, sizeof(b1)),
		100.0 * (double)s->usage_bytes / (double)r->cg.effective_limit_bytes,
		mp_fmt_bytes(r->cg.effective_limit_bytes, b2, sizeof(b2)), mp_cat_names[top],
		mp_fmt_sbytes(s->bpf_growth[top], b3, sizeof(b3)));
}

/* ---- --probe-at ------------------------------------------------------------ */

static void *probe_thread(void *arg)
{
	struct rec *r = arg;
	struct mp_probe_cfg cfg = {
		.chunk = r->probe_chunk, .margin = r->probe_margin, .thp = "auto",
		.stop = &g_signal,
	};

	r->probe_ret = mp_probe_run(&r->host, &r->cg, &cfg, &r->probe_res);
	r->probe_done = true;
	return NULL;
}

/* ---- the command ----------------------------------------------------------- */

/*
 * Fork the command into the run cgroup. It waits on go_fd until memprobe has
 * its baseline; an exec failure comes back on a close-on-exec pipe. It dies
 * with memprobe (PR_SET_PDEATHSIG), so a SIGKILLed record leaves no command
 * running on; what it forked is in the run cgroup, which the next probe or
 * record removes. When the report goes to standard output, the command's
 * standard output goes to standard error, so that the two never mix.
 */
static int start_command(struct rec *r, int *go_fd, int *exec_err_fd)
{
	int go[2] = { -1, -1 }, ee[2] = { -1, -1 }, err;
	bool report_on_stdout = !r->o.out || strcmp(r->o.out, "-") == 0;
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
		if (report_on_stdout)
			dup2(STDERR_FILENO, STDOUT_FILENO);
		err = mp_cgroup_attach(&r->cg, getpid());
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

/* ---- the report ------------------------------------------------------------ */

static cJSON *sample_json(const struct rec *r, const struct sample *s)
{
	cJSON *o = cJSON_CreateObject(), *st = cJSON_CreateObject(), *bg = cJSON_CreateObject();

	mp_json_add_u64(o, "t_ms", s->t_ms);
	mp_json_add_u64(o, "usage_bytes", s->usage_bytes);
	mp_json_add_u64(o, "faults_per_sec", s->faults_per_sec);
	for (int k = 0; k < MP_NR_CATS; k++)
		if (s->stat.have[k])
			mp_json_add_u64(st, mp_cat_names[k], s->stat.bytes[k]);
	cJSON_AddItemToObject(o, "stat", st);
	/* BPF's figures only where a memcg hook counted them */
	if (r->attr && !mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].polled &&
	    mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].hook[0]) {
		for (int k = 0; k < MP_NR_CATS; k++)
			mp_json_add_s64(bg, mp_cat_names[k], s->bpf_growth[k]);
		cJSON_AddItemToObject(o, "bpf_growth", bg);
	} else {
		cJSON_Delete(bg);
	}
	return o;
}

/* The kernel's peak counter of the cgroup, where it keeps one. */
static bool kernel_peak(const struct rec *r, uint64_t *v)
{
	char p[PATH_MAX];

	return r->cg.has_peak &&
	       !mp_path(p, sizeof(p), "%s/%s", r->cg.dir, mp_cgroup_file(&r->cg, "peak")) &&
	       !mp_read_u64_file(p, v);
}

static cJSON *build_report(struct rec *r, struct mp_ksyms *ks)
{
	cJSON *doc = cJSON_CreateObject(), *o, *arr;
	const struct sample *peak = r->have_last ? &r->peak : NULL;
	const struct sample *first = r->nsamples ? &r->samples[0] : NULL;

	o = cJSON_AddObjectToObject(doc, "run");
	if (r->o.cmd) {
		cJSON *argv = cJSON_AddArrayToObject(o, "command");

		for (char **a = r->o.cmd; *a; a++)
			cJSON_AddItemToArray(argv, cJSON_CreateString(*a));
		if (r->child_exited && WIFEXITED(r->child_status))
			cJSON_AddNumberToObject(o, "exit_status", WEXITSTATUS(r->child_status));
		else if (r->child_exited && WIFSIGNALED(r->child_status))
			cJSON_AddNumberToObject(o, "killed_by_signal", WTERMSIG(r->child_status));
	}
	cJSON_AddStringToObject(o, "ended_by", r->end_reason ? r->end_reason : "unknown");
	mp_json_add_u64(o, "duration_ms", r->have_last ? r->last.t_ms : 0);
	cJSON_AddNumberToObject(o, "interval_ms", (double)r->o.interval_ms);
	mp_json_add_u64(o, "timeline_samples_dropped", r->samples_dropped);
	cJSON_AddBoolToObject(o, "interrupted", g_signals_seen > 0);

	{
		cJSON *t = mp_cgroup_json(&r->cg);

		cJSON_AddBoolToObject(t, "created_by_memprobe", r->cg_created);
		cJSON_AddItemToObject(doc, "target", t);
		cJSON_AddItemToObject(doc, "host", mp_host_json(&r->host));
	}

	bool memcg_hooked = r->attr && !mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].polled &&
			    mp_attr_hooks(r->attr)[MP_CONCERN_MEMCG].hook[0];

	o = cJSON_AddObjectToObject(doc, "category_sources");
	for (int k = 0; k < MP_NR_CATS; k++)
		cJSON_AddStringToObject(o, mp_cat_names[k],
					first && first->stat.have[k] ?
					(r->cg.version == 1 ? "kernel (v1 files)" : "memory.stat") :
					memcg_hooked ? "bpf_growth only" : "none");

	o = cJSON_AddObjectToObject(doc, "peak");
	if (peak) {
		uint64_t kpeak;
		bool have_kpeak = kernel_peak(r, &kpeak);
		/* The kernel's counter is exact; it speaks of the recording only
		 * when it rose during it (v1's, and v2's before 6.12, cannot be
		 * reset per reader). The sample is the closest one taken. */
		bool use_k = have_kpeak && r->have_kpeak0 && kpeak > r->kpeak0 &&
			     kpeak > peak->usage_bytes;

		mp_json_add_u64(o, "usage_bytes", use_k ? kpeak : peak->usage_bytes);
		cJSON_AddStringToObject(o, "usage_source", use_k ? "kernel peak counter" : "sample");
		mp_json_add_u64(o, "sample_usage_bytes", peak->usage_bytes);
		mp_json_add_u64(o, "t_ms", peak->t_ms);
		if (have_kpeak)
			mp_json_add_u64(o, "kernel_peak_bytes", kpeak);
		cJSON_AddItemToObject(o, "sample", sample_json(r, peak));
	}

	arr = cJSON_AddArrayToObject(doc, "oom_kills");
	for (size_t i = 0; i < r->nooms; i++) {
		cJSON *e = cJSON_CreateObject();

		mp_json_add_u64(e, "t_ms", r->ooms[i].t_ms);
		cJSON_AddNumberToObject(e, "pid", r->ooms[i].ev.pid);
		cJSON_AddStringToObject(e, "comm", r->ooms[i].ev.comm);
		cJSON_AddNumberToObject(e, "trigger_pid", r->ooms[i].ev.trigger_pid);
		cJSON_AddItemToObject(e, "sample", sample_json(r, &r->ooms[i].at));
		cJSON_AddItemToArray(arr, e);
	}
	mp_json_add_u64(doc, "oom_kill_counter_delta", mp_cgroup_oom_kills(&r->cg) - r->oom_kill_count0);

	if (r->probe_started && r->probe_ret) {
		o = cJSON_AddObjectToObject(doc, "probe");
		cJSON_AddStringToObject(o, "error", strerror(-r->probe_ret));
	} else if (r->probe_started) {
		o = cJSON_AddObjectToObject(doc, "probe");
		mp_probe_fields_json(o, &r->probe_res.f);
		cJSON_AddBoolToObject(o, "completed", r->probe_res.completed);
		cJSON_AddBoolToObject(o, "interrupted", r->probe_res.interrupted);
		cJSON_AddBoolToObject(o, "probe_oom_killed", r->probe_res.oom_killed);
		mp_json_add_u64(o, "chunk_bytes", r->probe_chunk);
		mp_json_add_u64(o, "margin_bytes", r->probe_margin);
	}

	if (r->attr && r->have_peak_snap && peak && first) {
		struct mp_attr_input in = {
			.attr = r->attr, .ksyms = ks, .growth = &r->at_peak, .retained = &r->end,
			.paths = &r->end,
			.measured_growth_bytes = (int64_t)peak->usage_bytes - (int64_t)first->usage_bytes,
			.top = r->o.top, .span = "from the start to the peak",
		};

		cJSON_AddItemToObject(doc, "attribution", mp_report_attribution(&in));
	} else {
		cJSON *a = cJSON_CreateObject(), *miss = cJSON_AddArrayToObject(a, "attribution_missing");

		cJSON_AddItemToArray(miss, cJSON_CreateString("BPF unavailable"));
		cJSON_AddItemToObject(doc, "attribution", a);
	}

	arr = cJSON_AddArrayToObject(doc, "timeline");
	for (size_t i = 0; i < r->nsamples; i++)
		cJSON_AddItemToArray(arr, sample_json(r, &r->samples[i]));
	return doc;
}

static void print_text(struct rec *r, const cJSON *doc, FILE *f)
{
	const cJSON *run = cJSON_GetObjectItem(doc, "run");
	char b1[32], b2[32], b3[32];
	size_t step;

	fprintf(f, "memprobe record: %s", r->cg.dir);
	if (r->o.cmd) {
		fputs(" running", f);
		for (char **a = r->o.cmd; *a; a++)
			fprintf(f, " %s", *a);
	}
	fprintf(f, "\nended by %s after %.1f s", cJSON_GetObjectItem(run, "ended_by")->valuestring,
		r->have_last ? r->last.t_ms / 1000.0 : 0.0);
	if (r->child_exited && WIFEXITED(r->child_status))
		fprintf(f, " (exit status %d)", WEXITSTATUS(r->child_status));
	else if (r->child_exited && WIFSIGNALED(r->child_status))
		fprintf(f, " (killed by signal %d)", WTERMSIG(r->child_status));
	fprintf(f, "; limit %s effective\n", mp_fmt_bytes(r->cg.effective_limit_bytes, b1, sizeof(b1)));
	if (r->have_last) {
		const cJSON *pk = cJSON_GetObjectItem(doc, "peak");
		const cJSON *u = cJSON_GetObjectItem(pk, "usage_bytes");

		fprintf(f, "peak %s at %.1f s (%s)\n",
			mp_fmt_bytes(u && u->valuestring ? strtoull(u->valuestring, NULL, 10)
							 : r->peak.usage_bytes, b1, sizeof(b1)),
			r->peak.t_ms / 1000.0,
			cJSON_GetObjectItem(pk, "usage_source")->valuestring);
	}
	for (size_t i = 0; i < r->nooms; i++)
		fprintf(f, "OOM kill at %.1f s: %s[%u] (usage %s)\n", r->ooms[i].t_ms / 1000.0,
			r->ooms[i].ev.comm, r->ooms[i].ev.pid,
			mp_fmt_bytes(r->ooms[i].at.usage_bytes, b1, sizeof(b1)));
	if (r->probe_started) {
		char *s = cJSON_PrintUnformatted(cJSON_GetObjectItem(doc, "probe"));

		fprintf(f, "probe: %s\n", s ? s : "");
		cJSON_free(s);
	}

	fprintf(f, "\n%8s %12s %12s %12s %12s %10s\n", "t (s)", "usage", "anon", "file",
		"kernel", "faults/s");
	step = r->nsamples > 20 ? (r->nsamples + 19) / 20 : 1;
	for (size_t i = 0; i < r->nsamples; i += step) {
		const struct sample *s = &r->samples[i];
		char b4[32];
		const int k[3] = { MP_CAT_ANON, MP_CAT_FILE, MP_CAT_KERNEL };
		int64_t v[3];

		for (int j = 0; j < 3; j++)
			v[j] = s->stat.have[k[j]] ? (int64_t)s->stat.bytes[k[j]] : s->bpf_growth[k[j]];
		fprintf(f, "%8.1f %12s %12s %12s %12s %10" PRIu64 "\n", s->t_ms / 1000.0,
			mp_fmt_bytes(s->usage_bytes, b1, sizeof(b1)),
			mp_fmt_sbytes(v[0], b2, sizeof(b2)), mp_fmt_sbytes(v[1], b3, sizeof(b3)),
			mp_fmt_sbytes(v[2], b4, sizeof(b4)), s->faults_per_sec);
	}
	mp_report_attribution_text(cJSON_GetObjectItem(doc, "attribution"), f);
}

/* ---- the command's entry ---------------------------------------------------- */

/*
 * The cgroup to watch: resolved, locked against a second probe when
 * --probe-at will fill it, stale memprobe cgroups reaped, and in command
 * mode a new memprobe-run-<pid> under memprobe's own. Returns 0 or the exit
 * status to leave with; what it made is in r for cleanup().
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

static void start_attr(struct rec *r)
{
	struct mp_attr_opts ao = {
		.stack_sample_period = r->o.stack_sample_period,
		.btf_path = r->o.btf_path, .cg = &r->cg,
	};
	char errbuf[256] = "";

	if (mp_cgroup_id(&r->cg, &ao.target_cgid) ||
	    mp_attr_start(&ao, &r->attr, errbuf, sizeof(errbuf)))
		fprintf(stderr, "memprobe record: attribution off: %s\n",
			errbuf[0] ? errbuf : "cannot get the cgroup's id");
	else if (errbuf[0]) /* no BPF: the cgroup's files only */
		fprintf(stderr, "memprobe record: %s; polling the cgroup's files instead\n", errbuf);
}

/* The baseline, then the command let go. Returns 0, or 127/126 when the
 * command could not be executed. */
static int baseline(struct rec *r, int *go_fd, int *ee_fd)
{
	int err = 0;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &r->t0);
	if (r->attr)
		mp_attr_snapshot(r->attr, &r->start);
	r->oom_kill_count0 = mp_cgroup_oom_kills(&r->cg);
	r->have_kpeak0 = kernel_peak(r, &r->kpeak0);
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
	if (n != sizeof(err))
		return 0;
	waitpid(r->child, &r->child_status, 0);
	r->child = 0;
	fprintf(stderr, "memprobe record: %s: %s\n", r->o.cmd[0],
		err == -ENOENT ? "command not found" : strerror(-err));
	return err == -ENOENT ? 127 : 126;
}

/*
 * In command mode, once per interval: has the command ended? Signals are
 * passed on (a second one kills); at the end of --duration it is stopped
 * as by ^C, and killed if it still runs 5 s later.
 */
static bool command_ended(struct rec *r, uint64_t t, uint64_t deadline_ms)
{
	if (waitpid(r->child, &r->child_status, WNOHANG) == r->child) {
		r->child_exited = true;
		r->child = 0;
		r->end_reason = r->nooms && WIFSIGNALED(r->child_status) ? "oom_kill" :
				r->stop_sent_ms ? "duration" : "command exited";
		return true;
	}
	if (g_signal) {
		kill(r->child, g_signals_seen > 1 ? SIGKILL : g_signal);
		g_signal = 0;
	}
	if (deadline_ms && t >= deadline_ms && !r->stop_sent_ms) {
		kill(r->child, SIGINT);
		r->stop_sent_ms = t;
	} else if (r->stop_sent_ms && t >= r->stop_sent_ms + 5000) {
		kill(r->child, SIGKILL);
	}
	return false;
}

/* Sample until the recording ends; sets r->end_reason. */
static void watch(struct rec *r, uint64_t deadline_ms)
{
	for (;;) {
		long wait = next_wait_ms(r, now_ms(r));
		bool timeline;
		uint64_t t;

		if (r->attr)
			mp_attr_poll_oom(r->attr, (int)wait, on_oom, r);
		else if (wait > 0)
			usleep((useconds_t)wait * 1000);
		timeline = now_ms(r) >= r->next_timeline_ms;
		if (take_sample(r, timeline) == -ENOENT) {
			r->end_reason = "cgroup removed";
			return;
		}
		if (!timeline) /* a quick sample: the peak and the OOM vector only */
			continue;
		t = r->last.t_ms;
		if (isatty(STDERR_FILENO))
			status_line(r);
		if (r->o.probe_at_s >= 0 && !r->probe_started && t >= r->o.probe_at_s * 1000.0)
			r->probe_started = pthread_create(&r->probe_thread, NULL, probe_thread, r) == 0;
		if (r->o.cmd) {
			if (command_ended(r, t, deadline_ms))
				return;
			continue;
		}
		if (r->o.pid && kill((pid_t)atol(r->o.pid), 0) && errno == ESRCH) {
			r->end_reason = "pid exited";
			return;
		}
		if (g_signal) {
			r->end_reason = g_signal == SIGINT ? "SIGINT" : g_signal == SIGHUP ? "SIGHUP" : "SIGTERM";
			return;
		}
		if (deadline_ms && t >= deadline_ms) {
			r->end_reason = "duration";
			return;
		}
	}
}

/* The probe joined, late OOM events read, the final snapshots taken. */
static void finish(struct rec *r)
{
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (r->probe_started) {
		pthread_join(r->probe_thread, NULL);
		if (r->probe_ret)
			fprintf(stderr, "memprobe record: the --probe-at probe failed: %s\n",
				strerror(-r->probe_ret));
	}
	if (!r->attr)
		return;
	mp_attr_poll_oom(r->attr, 0, on_oom, r);
	if (r->child_exited && r->nooms && WIFSIGNALED(r->child_status))
		r->end_reason = "oom_kill";
	mp_attr_snapshot(r->attr, &r->end);
	mp_attr_snap_sub(&r->end, &r->start);
	if (r->have_peak_snap)
		mp_attr_snap_sub(&r->at_peak, &r->start);
}

static int write_report(struct rec *r, struct mp_out *out)
{
	struct mp_ksyms *ks = r->attr ? mp_ksyms_load("/proc/kallsyms") : NULL;
	cJSON *doc = build_report(r, ks);
	int err;

	mp_ksyms_free(ks);
	if (!strcmp(r->o.format, "json"))
		mp_json_print(doc, out->f, 1);
	else
		print_text(r, doc, out->f);
	cJSON_Delete(doc);
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

static void cleanup(struct rec *r, struct mp_out *out)
{
	int err;

	if (r->child > 0) {
		kill(r->child, SIGKILL);
		waitpid(r->child, &r->child_status, 0);
	}
	mp_attr_snap_free(&r->start);
	mp_attr_snap_free(&r->at_peak);
	mp_attr_snap_free(&r->end);
	mp_attr_stop(r->attr);
	if (r->usage_fd >= 0)
		close(r->usage_fd);
	if (r->cg_created && (err = mp_cgroup_remove(&r->cg)))
		fprintf(stderr, "memprobe record: could not remove %s: %s\n", r->cg.dir,
			strerror(-err));
	free(r->samples);
	free(r->ooms);
	mp_out_abort(out);
	mp_lock_release(&r->lock);
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
	start_attr(&r);
	if (r.o.cmd && (ret = start_command(&r, &go_fd, &ee_fd))) {
		fprintf(stderr, "memprobe record: cannot start %s: %s\n", r.o.cmd[0], strerror(-ret));
		ret = MP_EXIT_RUNTIME;
		goto out;
	}
	if ((ret = baseline(&r, &go_fd, &ee_fd)))
		goto out;
	if (r.o.ready_fd >= 0) {
		/* for scripts and benchmarks: the hooks are attached, the baseline taken */
		if (write(r.o.ready_fd, "ready\n", 6) != 6) {
			/* the reader went away: nothing to tell */
		}
		close(r.o.ready_fd);
	}
	watch(&r, r.o.duration_s > 0 ? (uint64_t)(r.o.duration_s * 1000.0) : 0);
	finish(&r);
	ret = write_report(&r, &out);
out:
	if (go_fd >= 0)
		close(go_fd);
	if (ee_fd >= 0)
		close(ee_fd);
	cleanup(&r, &out);
	return ret;
}
