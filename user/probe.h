/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_PROBE_H
#define MEMPROBE_PROBE_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"

/* The field team's measurement (see ../shared/BRIEF.md), in bytes. */
struct mp_probe_fields {
	uint64_t cgroup_limit_bytes;  /* the target's effective limit */
	uint64_t usage_before_bytes;
	uint64_t allocated_bytes;
	uint64_t usage_peak_bytes;
	uint64_t usage_after_bytes;
	uint64_t probe_chunks;
};

/* overhead = peak - before - allocated; negative when the rest of the
 * cgroup shrank while the probe ran. */
int64_t mp_probe_overhead_bytes(const struct mp_probe_fields *f);

/*
 * Default chunk and margin for an effective limit: 1 GiB and 2 GiB, as in the
 * brief; under 32 GiB, limit/32 and limit/16 rounded down to 2 MiB (at least
 * 2 MiB), so a small cgroup is probed as finely as a large one.
 */
void mp_probe_defaults(uint64_t effective_limit, uint64_t *chunk, uint64_t *margin);

/*
 * The phases, for the caller's snapshots. BASELINE and PEAK may come many
 * times: each is a new lowest usage in the baseline window, or a new
 * highest usage from the go until the probe has freed;
 * res->phase_usage_bytes holds that usage (a cheap snapshot is all they
 * are for). PEAK comes from a sampler thread of its own, possibly while
 * the main thread is in STOP or FREED: the callback must allow that.
 */
enum mp_probe_phase {
	MP_PROBE_BASELINE, /* a new lowest usage before the fill (usage_before) */
	MP_PROBE_START, /* the probe joined its cgroup; the fill starts (usage_at_go) */
	MP_PROBE_PEAK,  /* a new highest usage while the probe runs (sampler thread) */
	MP_PROBE_STOP,  /* the probe holds everything it allocated (the peak) */
	MP_PROBE_LEFT,  /* the probe has exited; usage_after just read (may repeat) */
	MP_PROBE_FREED, /* the probe unmapped everything and exited */
};

/* The baseline window: usage_before is the lowest usage sampled over it,
 * so a workload's burst held at one moment cannot be taken as its base. */
#define MP_PROBE_BASELINE_MS 500

#define MP_PROBE_MAX_THREADS 64

/* Where the fill is, for a status line (cmd_probe.c); from memprobe's side
 * of the pipe, so that the fill itself does no more work for it. */
struct mp_probe_progress {
	uint64_t chunks, allocated_bytes; /* the chunks reported filled so far */
	uint64_t usage_before_bytes;      /* the target's, at the go */
	uint64_t usage_bytes;             /* the target's, just read */
	uint64_t stop_usage_bytes;        /* about where the target's usage will be at the
					   * stop: usage_before + the probe cgroup's limit */
	uint64_t elapsed_ns;              /* since the go */
	bool last;                        /* the fill ended: the final figures */
};

struct mp_probe_cfg {
	uint64_t chunk, margin;     /* bytes */
	const char *thp;            /* "auto", "never", "always" */
	int threads;                /* threads filling each chunk (0 or 1: one) */
	bool populate;              /* MADV_POPULATE_WRITE (5.14+) instead of memset */
	bool to_limit;              /* probe up to the hard limit, past memory.high */
	bool reclaim_cache;         /* count the reclaimable page cache as room */
	const volatile sig_atomic_t *stop; /* non-zero: stop early (a signal) */
	void (*on_phase)(enum mp_probe_phase ph, void *arg); /* may be NULL */
	void *arg;
	/* From the fill loop, every few ms and once more at its end (last);
	 * may be NULL. It rate-limits itself: it must not block. */
	void (*on_progress)(const struct mp_probe_progress *p, void *arg);
	void *progress_arg;
	/* A line for the user while it runs, without "memprobe": the fill
	 * stopped early, a cgroup it could not remove; may be NULL (unsaid).
	 * The engine writes nothing itself. */
	void (*on_warn)(const char *line, void *arg);
	void *warn_arg;
};

struct mp_probe_result {
	struct mp_probe_fields f;
	uint64_t usage_at_stop_bytes;  /* the target's usage when the probe stopped */
	uint64_t usage_at_go_bytes;    /* ... when the fill started (START) */
	uint64_t phase_usage_bytes;    /* the usage that made this BASELINE or PEAK */
	uint64_t baseline_ns;          /* the baseline window, as sampled */
	uint32_t baseline_samples;     /* usage reads in it */
	uint64_t probe_limit_bytes;    /* the limit of the probe's own cgroup */
	uint64_t headroom_at_stop_bytes; /* no chunk filled: the target's headroom (soft
					  * with --reclaim-cache) read as it stopped */
	uint64_t fill_ns;              /* from the go to the last chunk, wall clock */
	/* The fill threads' scheduling, each from its part's start to its end,
	 * summed over the parts and the chunks: why --threads N fills no N
	 * times faster (busy CPUs, or the kernel's fault path) */
	uint64_t fill_cpu_ns;          /* on a CPU (CLOCK_THREAD_CPUTIME_ID) */
	uint64_t fill_wait_ns;         /* runnable, waiting for a CPU (schedstat run_delay) */
	bool have_fill_cpu;            /* a chunk's were reported */
	bool have_fill_wait;           /* ... and every chunk's wait was read */
	uint64_t fill_cpus_allowed;    /* the probe process's affinity; 0: unknown */
	bool completed;                /* stopped at the margin */
	bool interrupted;              /* stopped by *cfg->stop */
	bool oom_killed;               /* OOM-killed (its cgroup's oom_kill counter) */
	bool oom_at_own_limit;         /* ... at its own cgroup's limit, not the target's */
	int killed_by_signal;          /* killed by someone else, before it finished */
	pid_t child_pid;               /* the probe process */
	bool in_target;                /* ran in the target itself, not a child cgroup */
	char in_target_why[PATH_MAX + 160];
	const char *in_target_reason;  /* an id: "no_use_hierarchy", "not_delegated",
					* "read_only", "no_permission" */
	char cgroup_dir[4096];         /* memprobe-probe-<pid>, removed by now */
	/* where it aimed and why it stopped */
	const char *aim;               /* "throttle" (below memory.high) or "limit" */
	char aim_why[PATH_MAX + 256];
	uint64_t stop_at_bytes;        /* the usage of stop_at_from at which it stops */
	char stop_at_from[PATH_MAX + 32];
	const char *stop_reason;       /* "margin", "throttled", "interrupted", "oom_killed",
					* "killed", "error" */
	bool throttled;                /* stopped because the kernel throttled it */
	const char *throttle_signal;   /* what was watched, or why nothing could be */
	bool have_high_events, have_pressure;
	uint64_t high_events;          /* memory.events "high" rise while it ran */
	uint64_t pressure_some_us;     /* the probe cgroup's memory.pressure some total rise */
	bool have_file;                /* page cache figures read */
	uint64_t file_before_bytes, file_at_stop_bytes; /* the target's inactive+active file */
	char err[PATH_MAX + 512];      /* mp_probe_run's problem when it fails, for
					* the command to say ("cannot create ...") */
};

/*
 * Probe target once: make memprobe-probe-<pid> under it (limit: headroom
 * minus margin), fork a child that joins it and fills chunks until one more
 * would leave less than the margin, sample the target's usage for the peak,
 * then free everything and remove the cgroup. on_phase is called at each
 * phase for the caller's own snapshots. Returns 0 (res filled, also when
 * interrupted) or -errno, with the problem in res->err (said by the
 * caller: the engine writes nothing).
 */
int mp_probe_run(const struct mp_host *h, const struct mp_cgroup *target,
		 const struct mp_probe_cfg *cfg, struct mp_probe_result *res);

#endif
