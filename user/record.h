/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The recorder's state, shared by the recorder (record.c), its document
 * (record_doc.c) and the record command (cmd_record.c).
 */
#ifndef MEMPROBE_RECORD_H
#define MEMPROBE_RECORD_H

#include <pthread.h>
#include <stdio.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <cjson/cJSON.h>

#include "attr.h"
#include "cgroup.h"
#include "lock.h"
#include "pinned.h"
#include "probe.h"
#include "procstat.h"
#include "status.h"
#include "timeline.h"

struct mp_ksyms;
struct mp_out;

struct oom {
	uint64_t t_ms;
	uint64_t limit_bytes;               /* the effective limit read at the event (0: not read) */
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
	bool fault_tracepoint;  /* --fault-tracepoint */
	enum mp_memcg_from memcg_from; /* --memcg-from */
	int top;
	enum mp_status_mode status_mode; /* --quiet, --progress */
	char **cmd;
	const char *openmetrics; /* --openmetrics FILE, NULL: none */
	bool wait_cgroup;       /* --wait-cgroup: a removed cgroup is waited for */
};

/* A change of the effective limit during the recording. */
struct limit_change {
	uint64_t t_ms;          /* the first sample that read it */
	uint64_t from_bytes, to_bytes;
};
#define MP_REC_LIMIT_CHANGES 64

struct rec {
	uint64_t next_drain_ms;   /* the next mp_attr_drain (exited processes' rows) */
	/* The limit in force, read at each timeline sample and at an OOM kill:
	 * a limit lowered during the recording (to just above the usage) is
	 * what the workload met, not the one at the start. */
	uint64_t limit_now;
	struct limit_change limit_changes[MP_REC_LIMIT_CHANGES];
	size_t nlimit_changes;
	uint64_t limit_changes_more;        /* past the table */
	struct rec_opts o;
	bool report_on_stdout;              /* the command's stdout goes to stderr */
	struct mp_host host;
	struct mp_cgroup cg;
	bool cg_created;
	/* -- CMD where no run cgroup can be made (a container's read-only cgroup
	 * filesystem): the command runs in memprobe's own cgroup, and what is
	 * its own is its process tree: every pid seen in it (procstat.c's
	 * mp_proc_of_tree), and without BPF the session's rows are its
	 * (mp_attr_opts.proc_tree_pid) */
	bool in_place;
	char in_place_why[PATH_MAX + 160];
	uint32_t *cmd_pids;
	size_t ncmd_pids;
	struct mp_attr *attr;
	int usage_fd;
	struct timespec t0;
	struct mp_status status;            /* the line on stderr (status.h) */
	struct mp_tl tl;                    /* the timeline: one sample per interval,
					     * bounded (timeline.h) */
	uint64_t next_timeline_ms;
	/* timeline samples taken half an interval or more after they were
	 * due, the intervals that got none, the longest gap between two */
	uint64_t samples_late, samples_missed, longest_gap_ms;
	uint64_t tl_ms;                     /* the last timeline sample's time */
	bool have_tl_ms;
	/* Every sample, the timeline's and the quick ones taken near the limit:
	 * the peak and the vector before an OOM kill come from these. */
	struct sample last, prev, peak;
	pthread_mutex_t sample_lock;        /* peak, at_peak, the rate's state: the
					     * main loop and --probe-at's thread */
	bool have_last, have_prev;
	uint64_t kpeak0;                    /* the kernel's peak counter at the start */
	bool have_kpeak0;
	struct mp_attr_snap start, at_peak, end;
	bool have_peak_snap;
	bool peak_snap_due;                 /* a new peak came too soon after the last
					     * snapshot: take one when the rise stops */
	uint64_t peak_snap_next_ms;         /* no peak snapshot before then */
	struct mp_pinned pinned;            /* at the peak (else at the end) */
	uint64_t pinned_ms;                 /* the sample it was read at */
	uint64_t pinned_next_ms;            /* no reading before then */
	struct mp_lock lock;                /* --probe-at on an existing cgroup */
	struct oom *ooms;                   /* the first MP_REC_OOMS / 2 kills, then a
					     * ring of the last (mp_rec_oom()) */
	size_t nooms;                       /* kills kept: at most MP_REC_OOMS */
	uint64_t ooms_seen;                 /* kills the hook reported */
	uint64_t oom_kill_count0;
	uint64_t faults_prev;
	uint64_t t_prev_ms;
	pid_t child;            /* the command, in command mode */
	int child_status;
	bool child_exited;
	uint64_t stop_sent_ms;  /* --duration ran out: SIGINT sent to the command then */
	int stop_signal;        /* the first stop signal passed on to the command, or 0 */
	const char *end_reason;
	/* --probe-at */
	pthread_t probe_thread;
	bool probe_started, probe_done;
	/* set when the recording ends (the command exited, --duration, a stop
	 * signal): the --probe-at probe stops there too, reported interrupted */
	volatile sig_atomic_t probe_stop;
	int probe_ret;
	struct mp_probe_result probe_res;
	uint64_t probe_chunk, probe_margin;
	/* called after each timeline sample (record --openmetrics), or NULL */
	void (*on_sample)(struct rec *r);
	bool on_sample_failed;  /* said once */
	/* called at SIGHUP (the outputs opened anew), or NULL; out is -o's */
	void (*on_reopen)(struct rec *r);
	struct mp_out *out;
	struct mp_overhead_snaps probe_ovh; /* its overhead's vectors (its thread's) */
	/* a line for the user while it records (the --probe-at probe's), said
	 * by the command; NULL: unsaid. The recorder writes nothing itself. */
	void (*on_warn)(struct rec *r, const char *line);
	/* the problem of the mp_rec_* call that failed, for the command to say */
	char err[PATH_MAX + 512];
};

/* OOM kills kept with their samples: the first half of these, and the
 * last half (a workload in a crash loop for a month is not a million rows). */
#define MP_REC_OOMS 256

/* The i-th kill kept, in time order (i < r->nooms). */
const struct oom *mp_rec_oom(const struct rec *r, size_t i);

/* The last stop signal, and how many came (a second one kills a command). */
extern volatile sig_atomic_t mp_rec_signal;
extern volatile sig_atomic_t mp_rec_signals_seen;
/* SIGHUP came: the outputs are to be opened anew; it stops nothing. */
extern volatile sig_atomic_t mp_rec_reopen;

uint64_t mp_rec_now_ms(const struct rec *r);
/* The kernel's peak counter of the cgroup, where it keeps one. */
bool mp_rec_kernel_peak(const struct rec *r, uint64_t *v);
/* The BPF session (or /proc's rows); why: "" or the line to say (attribution
 * off and why, or what runs instead of BPF): it degrades, never fails. */
void mp_rec_start_attr(struct rec *r, char *why, size_t len);
int mp_rec_start_command(struct rec *r, int *go_fd, int *exec_err_fd);
/* The baseline, then the command let go: 0, or 127/126 with r->err ("CMD:
 * command not found"). The caller has begun r->status (mp_status_begin). */
int mp_rec_baseline(struct rec *r, int *go_fd, int *ee_fd);
void mp_rec_watch(struct rec *r, uint64_t deadline_ms);
/* The end: the --probe-at probe joined (r->probe_ret, r->probe_res.err
 * say how it failed), the last snapshots. */
void mp_rec_finish(struct rec *r);
/* Everything undone: 0, or -errno with r->err when its cgroup stays. */
int mp_rec_cleanup(struct rec *r);
/* The document but its timeline; then mp_rec_add_timeline adds it (once
 * the kernel's symbols, which only the attribution needs, are freed). */
cJSON *mp_rec_build_report(struct rec *r, struct mp_ksyms *ks);
void mp_rec_add_timeline(struct rec *r, cJSON *doc);
/* A sample as the timeline holds it. */
cJSON *mp_rec_sample_json(const struct rec *r, const struct sample *s);
/* record --openmetrics: a record document of now (record_live.c). */
cJSON *mp_rec_build_live(struct rec *r);

#endif
