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
	struct sample *samples;
	size_t nsamples, cap;
	size_t peak_idx;
	uint64_t peak_usage;
	struct mp_attr_snap start, at_peak, end;
	bool have_peak_snap;
	struct oom *ooms;
	size_t nooms;
	uint64_t oom_kill_count0;
	uint64_t faults_prev;
	uint64_t t_prev_ms;
	pid_t child;            /* the command, in command mode */
	int child_status;
	bool child_exited;
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
	int c, ret, given = 0;
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
		case 'c': o->cgroup_path = optarg; given++; break;
		case 'p': o->pid = optarg; given++; break;
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
	if (given != 1)
		return bad("%s", given ? "--cgroup, --pid and a command are exclusive"
				       : "nothing to record",
			   "give one of --cgroup PATH, --pid PID or -- CMD ARGS");
	if (o->limit_arg && !o->cmd)
		return bad("--limit %s: only with a command", o->limit_arg,
			   "use -- CMD ARGS, or drop --limit to watch an existing cgroup");
	if (o->limit_arg) {
		int err = mp_parse_size(o->limit_arg, &o->limit);

		if (err || o->limit < 4 * MP_MIB)
			return bad("--limit %s: not a size of at least 4 MiB", o->limit_arg,
				   "give a size such as 512M or 1G");
	}
	if (strcmp(o->format, "text") && strcmp(o->format, "json"))
		return bad("--format %s: unknown", o->format, "use text or json");
	if (mp_out_check_opt("record", o->out))
		return MP_EXIT_USAGE;
	return 0;
}

/* ---- sampling ------------------------------------------------------------- */

/* Take one sample. Returns -ENOENT when the cgroup is gone. */
static int take_sample(struct rec *r)
{
	struct sample s = { 0 };
	struct mp_totals t;
	char buf[64];
	ssize_t n;

	n = pread(r->usage_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0 || access(r->cg.dir, F_OK))
		return -ENOENT;
	buf[n] = '\0';
	s.usage_bytes = strtoull(buf, NULL, 10);
	s.t_ms = now_ms(r);
	mp_cgroup_stat("", &r->cg, &s.stat);
	if (r->attr && !mp_attr_totals(r->attr, &t)) {
		uint64_t dt = s.t_ms > r->t_prev_ms ? s.t_ms - r->t_prev_ms : 1;

		uint64_t faults = t.faults;

		/* no fault hook: memory.stat's pgfault, the cgroup's count */
		if (mp_attr_hooks(r->attr)[MP_CONCERN_FAULTS].polled)
			faults = s.stat.have_pgfault ? s.stat.pgfault : r->faults_prev;
		for (int k = 0; k < MP_NR_CATS; k++)
			s.bpf_growth[k] = t.charge_bytes[k] - r->start.totals.charge_bytes[k];
		s.faults_per_sec = r->nsamples ? (faults - r->faults_prev) * 1000 / dt : 0;
		r->faults_prev = faults;
	}
	r->t_prev_ms = s.t_ms;
	if (r->nsamples == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		struct sample *p = realloc(r->samples, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		r->samples = p;
		r->cap = cap;
	}
	r->samples[r->nsamples++] = s;
	if (s.usage_bytes > r->peak_usage || r->nsamples == 1) {
		r->peak_usage = s.usage_bytes;
		r->peak_idx = r->nsamples - 1;
		if (r->attr) {
			mp_attr_snap_free(&r->at_peak);
			r->have_peak_snap = mp_attr_snapshot(r->attr, &r->at_peak) == 0;
		}
	}
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
	if (r->nsamples)
		p[r->nooms].at = r->samples[r->nsamples - 1];
	r->nooms++;
}

static void status_line(const struct rec *r)
{
	const struct sample *s = &r->samples[r->nsamples - 1];
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
 * its baseline; an exec failure comes back on a close-on-exec pipe.
 */
static int start_command(struct rec *r, int *go_fd, int *exec_err_fd)
{
	int go[2], ee[2];

	if (pipe2(go, O_CLOEXEC) || pipe2(ee, O_CLOEXEC))
		return -errno;
	r->child = fork();
	if (r->child < 0)
		return -errno;
	if (r->child == 0) {
		char c;
		int err;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(go[1]);
		close(ee[0]);
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

static cJSON *build_report(struct rec *r, struct mp_ksyms *ks)
{
	cJSON *doc = cJSON_CreateObject(), *o, *arr;
	const struct sample *peak = r->nsamples ? &r->samples[r->peak_idx] : NULL;
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
	mp_json_add_u64(o, "duration_ms", r->nsamples ? r->samples[r->nsamples - 1].t_ms : 0);
	cJSON_AddNumberToObject(o, "interval_ms", (double)r->o.interval_ms);
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
		mp_json_add_u64(o, "usage_bytes", peak->usage_bytes);
		mp_json_add_u64(o, "t_ms", peak->t_ms);
		if (r->cg.has_peak) {
			uint64_t v;
			char p[PATH_MAX];

			if (!mp_path(p, sizeof(p), "%s/%s", r->cg.dir, mp_cgroup_file(&r->cg, "peak")) &&
			    !mp_read_u64_file(p, &v))
				mp_json_add_u64(o, "kernel_peak_bytes", v);
		}
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

	if (r->probe_started) {
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
		r->nsamples ? r->samples[r->nsamples - 1].t_ms / 1000.0 : 0.0);
	if (r->child_exited && WIFEXITED(r->child_status))
		fprintf(f, " (exit status %d)", WEXITSTATUS(r->child_status));
	else if (r->child_exited && WIFSIGNALED(r->child_status))
		fprintf(f, " (killed by signal %d)", WTERMSIG(r->child_status));
	fprintf(f, "; limit %s effective\n", mp_fmt_bytes(r->cg.effective_limit_bytes, b1, sizeof(b1)));
	if (r->nsamples) {
		const struct sample *p = &r->samples[r->peak_idx];

		fprintf(f, "peak %s at %.1f s\n", mp_fmt_bytes(p->usage_bytes, b1, sizeof(b1)),
			p->t_ms / 1000.0);
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

int mp_cmd_record(int argc, char **argv)
{
	struct rec r = { .usage_fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int ret = 0, go_fd = -1, ee_fd = -1;
	uint64_t deadline_ms = 0;
	char errbuf[256] = "", name[64];
	struct mp_out out = { 0 };
	cJSON *doc = NULL;

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
	if ((ret = mp_resolve_target("record", "", &r.host, r.o.cgroup_path, r.o.pid, &r.cg)))
		return ret;
	if (!r.o.cmd && mp_cgroup_contains_self("", &r.host, &r.cg))
		fprintf(stderr, "memprobe record: memprobe itself runs in %s: its own memory "
			"(BPF maps, buffers) is charged to what it measures\n", r.cg.dir);
	if (mp_out_open(&out, r.o.out))
		return bad("-o %s: cannot create it", r.o.out, "give a writable path");
	if (r.o.cmd)
		mp_cgroup_reap_stale(r.cg.dir, NULL);

	signal(SIGPIPE, SIG_IGN);

	if (r.o.cmd) {
		struct mp_cgroup self = r.cg;

		snprintf(name, sizeof(name), "memprobe-run-%d", (int)getpid());
		if ((ret = mp_cgroup_create(&r.host, &self, name, r.o.limit, &r.cg))) {
			if (ret == -EOPNOTSUPP)
				fprintf(stderr, "memprobe record: %s does not delegate the memory "
					"controller, so --limit cannot make a limited child there; enable "
					"it (+memory in its cgroup.subtree_control) or run without --limit\n",
					self.dir);
			else
				fprintf(stderr, "memprobe record: cannot create %s/%s: %s\n", self.dir,
					name, strerror(-ret));
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
		r.cg_created = true;
		/* not delegated on v2: a cgroup that delegates cannot hold the
		 * command's processes (--probe-at then runs in it, see probe.c) */
		mp_cgroup_read("", &r.host, &r.cg);
	}
	{
		char p[PATH_MAX];

		mp_path(p, sizeof(p), "%s/%s", r.cg.dir, mp_cgroup_file(&r.cg, "usage"));
		r.usage_fd = open(p, O_RDONLY | O_CLOEXEC);
		if (r.usage_fd < 0) {
			fprintf(stderr, "memprobe record: cannot open %s: %s\n", p, strerror(errno));
			ret = MP_EXIT_RUNTIME;
			goto out;
		}
	}
	{
		struct mp_attr_opts ao = {
			.stack_sample_period = r.o.stack_sample_period,
			.btf_path = r.o.btf_path, .cg = &r.cg,
		};

		if (mp_cgroup_id(&r.cg, &ao.target_cgid) ||
		    mp_attr_start(&ao, &r.attr, errbuf, sizeof(errbuf)))
			fprintf(stderr, "memprobe record: attribution off: %s\n",
				errbuf[0] ? errbuf : "cannot get the cgroup's id");
		else if (errbuf[0]) /* no BPF: the cgroup's files only */
			fprintf(stderr, "memprobe record: %s; polling the cgroup's files instead\n",
				errbuf);
	}
	if (r.o.cmd && (ret = start_command(&r, &go_fd, &ee_fd))) {
		fprintf(stderr, "memprobe record: cannot start %s: %s\n", r.o.cmd[0], strerror(-ret));
		ret = MP_EXIT_RUNTIME;
		goto out;
	}

	/* Baseline, then let the command go. */
	clock_gettime(CLOCK_MONOTONIC, &r.t0);
	if (r.attr)
		mp_attr_snapshot(r.attr, &r.start);
	r.oom_kill_count0 = mp_cgroup_oom_kills(&r.cg);
	mp_probe_defaults(r.cg.effective_limit_bytes, &r.probe_chunk, &r.probe_margin);
	take_sample(&r);
	if (r.o.cmd) {
		int err = 0;
		ssize_t n;

		if (write(go_fd, "g", 1) != 1) {
			/* the child died before exec */
		}
		close(go_fd);
		go_fd = -1;
		n = read(ee_fd, &err, sizeof(err)); /* EOF: exec succeeded */
		close(ee_fd);
		ee_fd = -1;
		if (n == sizeof(err)) {
			waitpid(r.child, &r.child_status, 0);
			r.child = 0;
			fprintf(stderr, "memprobe record: %s: %s\n", r.o.cmd[0],
				err == -ENOENT ? "command not found" : strerror(-err));
			ret = err == -ENOENT ? 127 : 126;
			goto out;
		}
	}
	if (r.o.duration_s > 0)
		deadline_ms = (uint64_t)(r.o.duration_s * 1000.0);
	if (r.o.ready_fd >= 0) {
		/* for scripts and benchmarks: the hooks are attached, the baseline taken */
		if (write(r.o.ready_fd, "ready\n", 6) != 6) {
			/* the reader went away: nothing to tell */
		}
		close(r.o.ready_fd);
	}

	for (;;) {
		uint64_t t;

		if (r.attr)
			mp_attr_poll_oom(r.attr, (int)r.o.interval_ms, on_oom, &r);
		else
			usleep((useconds_t)r.o.interval_ms * 1000);
		if (take_sample(&r) == -ENOENT) {
			r.end_reason = "cgroup removed";
			break;
		}
		t = r.samples[r.nsamples - 1].t_ms;
		if (isatty(STDERR_FILENO))
			status_line(&r);
		if (r.o.probe_at_s >= 0 && !r.probe_started && t >= r.o.probe_at_s * 1000.0) {
			r.probe_started = pthread_create(&r.probe_thread, NULL, probe_thread, &r) == 0;
		}
		if (r.child > 0) {
			pid_t w = waitpid(r.child, &r.child_status, WNOHANG);

			if (w == r.child) {
				r.child_exited = true;
				r.child = 0;
				r.end_reason = r.nooms && WIFSIGNALED(r.child_status) ? "oom_kill"
										      : "command exited";
				break;
			}
			if (g_signal) {
				/* pass the first signal on; a second one ends it */
				kill(r.child, g_signals_seen > 1 ? SIGKILL : g_signal);
				g_signal = 0;
			}
			continue;
		}
		if (r.o.pid && kill((pid_t)atol(r.o.pid), 0) && errno == ESRCH) {
			r.end_reason = "pid exited";
			break;
		}
		if (g_signal) {
			r.end_reason = g_signal == SIGINT ? "SIGINT" : g_signal == SIGHUP ? "SIGHUP" : "SIGTERM";
			break;
		}
		if (deadline_ms && t >= deadline_ms) {
			r.end_reason = "duration";
			break;
		}
	}
	if (isatty(STDERR_FILENO))
		fputs("\r\033[K", stderr);
	if (r.probe_started)
		pthread_join(r.probe_thread, NULL);
	if (r.attr) {
		/* late OOM events, then the final state */
		mp_attr_poll_oom(r.attr, 0, on_oom, &r);
		if (r.child_exited && r.nooms && WIFSIGNALED(r.child_status))
			r.end_reason = "oom_kill";
		mp_attr_snapshot(r.attr, &r.end);
		mp_attr_snap_sub(&r.end, &r.start);
		if (r.have_peak_snap)
			mp_attr_snap_sub(&r.at_peak, &r.start);
	}
	{
		struct mp_ksyms *ks = r.attr ? mp_ksyms_load("/proc/kallsyms") : NULL;

		doc = build_report(&r, ks);
		mp_ksyms_free(ks);
	}
	if (!strcmp(r.o.format, "json"))
		mp_json_print(doc, out.f, 1);
	else
		print_text(&r, doc, out.f);
	if ((ret = mp_out_commit(&out))) {
		fprintf(stderr, "memprobe record: cannot write the report to %s: %s\n",
			r.o.out ? r.o.out : "standard output", strerror(-ret));
		ret = MP_EXIT_RUNTIME;
		goto out;
	}
	ret = 0;
	if (r.o.cmd && r.child_exited)
		ret = WIFEXITED(r.child_status) ? WEXITSTATUS(r.child_status)
						: 128 + WTERMSIG(r.child_status);
out:
	if (go_fd >= 0)
		close(go_fd);
	if (ee_fd >= 0)
		close(ee_fd);
	if (r.child > 0) {
		kill(r.child, SIGKILL);
		waitpid(r.child, &r.child_status, 0);
	}
	cJSON_Delete(doc);
	mp_attr_snap_free(&r.start);
	mp_attr_snap_free(&r.at_peak);
	mp_attr_snap_free(&r.end);
	mp_attr_stop(r.attr);
	if (r.usage_fd >= 0)
		close(r.usage_fd);
	if (r.cg_created && mp_cgroup_remove(&r.cg))
		fprintf(stderr, "memprobe record: could not remove %s: %s\n", r.cg.dir,
			strerror(errno));
	free(r.samples);
	free(r.ooms);
	mp_out_abort(&out);
	return ret;
}
