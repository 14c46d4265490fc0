// SPDX-License-Identifier: GPL-2.0
/*
 * The fill engine (mp_probe_run): fill a cgroup to its margin from a child
 * cgroup; the probe command (cmd_probe.c) attributes the growth with BPF
 * at each phase.
 *
 * Processes: memprobe (the parent) stays in its own cgroup, outside the
 * target; it samples the target's usage (the BPF session is the caller's).
 * A forked child joins memprobe-probe-<pid> (a child cgroup of the target
 * whose limit is the target's headroom minus the margin, so an overshoot
 * hits the probe, never the workload), maps and fills chunks, and reports
 * each over a pipe.
 */
#include "probe.h"
#include "cgroup.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAIL_SLACK_BYTES (1 * MP_MIB)  /* room left for the last chunk's page tables */
#define THP_ALIGN_BYTES (2 * MP_MIB)
/* A chunk is filled in slices so that a stop (SIGUSR1 from memprobe) ends
 * it within one slice and the bytes touched so far count as allocated, not
 * as overhead. */
#define SLICE_BYTES (2 * MP_MIB)

int64_t mp_probe_overhead_bytes(const struct mp_probe_fields *f)
{
	return (int64_t)f->usage_peak_bytes - (int64_t)f->usage_before_bytes -
	       (int64_t)f->allocated_bytes;
}

void mp_probe_defaults(uint64_t limit, uint64_t *chunk, uint64_t *margin)
{
	if (limit >= 32 * MP_GIB) {
		*chunk = MP_GIB;
		*margin = 2 * MP_GIB;
		return;
	}
	*chunk = mp_round_down(limit / 32, THP_ALIGN_BYTES);
	*margin = mp_round_down(limit / 16, THP_ALIGN_BYTES);
	if (*chunk < THP_ALIGN_BYTES)
		*chunk = THP_ALIGN_BYTES;
	if (*margin < THP_ALIGN_BYTES)
		*margin = THP_ALIGN_BYTES;
}

/* ---- the child ------------------------------------------------------------ */

/* MSG_READY's bytes: the CPUs the fill may run on (0: unknown). After each
 * chunk, before its MSG_CHUNK, the fill threads' scheduling during it:
 * MSG_FILL_CPU (ns on a CPU), MSG_FILL_WAIT (ns runnable, waiting for
 * one); err ENODATA: not measured (no /proc/thread-self/schedstat). */
enum msg_type {
	MSG_READY = 1, MSG_CHUNK, MSG_DONE, MSG_FREED, MSG_ERROR, MSG_FILL_CPU, MSG_FILL_WAIT,
};

struct msg {
	uint32_t type;
	int32_t err;
	uint64_t bytes;
};

/*
 * One bound the probe must respect: a cgroup's usage (or, for the host,
 * MemTotal - MemAvailable) must stay at or below limit - margin.
 */
struct bound {
	int fd;              /* usage file, or /proc/meminfo when meminfo */
	int stat_fd;         /* --reclaim-cache: its memory.stat, whose page cache
			      * counts as room; -1 otherwise */
	bool meminfo, v1;
	uint64_t limit, margin;
};

#define MAX_BOUNDS (MP_MAX_LEVELS + 2)

struct child_args {
	const struct mp_cgroup *cg; /* the probe's cgroup, joined before anything is counted */
	struct bound bounds[MAX_BOUNDS]; /* the target, its limited ancestors, the host,
					  * the probe's own cgroup */
	int nbounds;
	uint64_t chunk;
	const char *thp;
	int threads;         /* fill each chunk with this many threads */
	bool populate;       /* MADV_POPULATE_WRITE instead of memset */
	int to_parent, from_parent;
	pid_t parent;        /* memprobe's pid: the child's parent while it lives */
	bool attach;         /* join cg; false: memprobe runs in the target already */
	/* allocated before the fork: a child forked from a threaded process
	 * (record --probe-at) may call only async-signal-safe functions */
	void **maps;
	uint64_t *sizes;
	size_t max_chunks;
};

static volatile sig_atomic_t g_child_stop;

static void on_child_stop(int sig)
{
	(void)sig;
	g_child_stop = 1;
}

/*
 * A thread's scheduling: its time on a CPU (CLOCK_THREAD_CPUTIME_ID, the
 * kernel's sum_exec_runtime brought up to date, where schedstat's first
 * figure lags by up to a tick) and its time runnable but waiting for a
 * CPU (schedstat's run_delay). What tells a fill that could not scale
 * for want of CPUs from one slowed in the kernel's fault path.
 */
struct sched_use {
	uint64_t cpu_ns, wait_ns;
	bool wait_ok;              /* schedstat read (a kernel without
				    * CONFIG_SCHED_INFO has none; an old one
				    * with schedstats off says "0 0 0") */
};

/* The calling thread's; open, read and a digit loop: async-signal-safe. */
static void sched_now(struct sched_use *u)
{
	struct timespec t = { 0, 0 };
	uint64_t v[3] = { 0, 0, 0 };
	char buf[96];
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC), i = 0;
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	/* i: the numbers read whole, each ended by a space, a newline or the end */
	for (ssize_t k = 0; k < n && i < 3; k++) {
		bool digit = buf[k] >= '0' && buf[k] <= '9';

		if (digit)
			v[i] = v[i] * 10 + (uint64_t)(buf[k] - '0');
		if (digit && (k + 1 == n || buf[k + 1] < '0' || buf[k + 1] > '9'))
			i++;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	u->cpu_ns = (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
	u->wait_ns = v[1];
	/* a thread reading its own has run at least once: 0 timeslices is
	 * the "0 0 0" of a kernel not keeping them */
	u->wait_ok = i == 3 && v[2] > 0;
}

struct fill_part {
	char *p;
	size_t len, done;
	bool populate;
	bool fresh;                /* a thread of its own, made for this part */
	int err;
	struct sched_use used;     /* the part's: from its start to its end */
};

/* Touch the part, slice by slice, until done or stopped. */
static void fill_touch(struct fill_part *f)
{
	for (f->done = 0; f->done < f->len && !g_child_stop;) {
		size_t n = MP_MIN(f->len - f->done, (size_t)SLICE_BYTES);

		if (f->populate) {
			/* faults the pages in the kernel, no page fault exception per page */
			if (madvise(f->p + f->done, n, MADV_POPULATE_WRITE)) {
				f->err = errno;
				break;
			}
		} else {
			memset(f->p + f->done, 0x5a, n);
		}
		f->done += n;
	}
}

/* The part's scheduling: a thread made for it counts from its birth (its
 * figures start at 0), so its wait for a first CPU counts too. */
static void *fill_part(void *arg)
{
	struct fill_part *f = arg;
	struct sched_use start = { .wait_ok = true };

	if (!f->fresh)
		sched_now(&start);
	fill_touch(f);
	sched_now(&f->used);
	f->used.cpu_ns -= MP_MIN(f->used.cpu_ns, start.cpu_ns);
	f->used.wait_ns -= MP_MIN(f->used.wait_ns, start.wait_ns);
	f->used.wait_ok = f->used.wait_ok && start.wait_ok;
	return NULL;
}

/* Fill [p, p+size) with n threads, each a contiguous, page-aligned part.
 * Returns 0 or an errno; *done: the bytes touched (all, unless stopped);
 * *used: the parts' scheduling, summed. */
static int fill(char *p, size_t size, int n, bool populate, size_t *done,
		struct sched_use *used)
{
	struct fill_part parts[MP_PROBE_MAX_THREADS];
	pthread_t tids[MP_PROBE_MAX_THREADS];
	size_t per = (size / (size_t)n) & ~(size_t)4095;
	int err = 0;

	for (int i = 0; i < n; i++) {
		parts[i] = (struct fill_part){
			.p = p + (size_t)i * per,
			.len = i == n - 1 ? size - (size_t)i * per : per,
			.populate = populate, .fresh = i > 0,
		};
	}
	for (int i = 1; i < n; i++) {
		if (pthread_create(&tids[i], NULL, fill_part, &parts[i]) == 0)
			continue;
		parts[i].fresh = false; /* no thread: do it here */
		fill_part(&parts[i]);
	}
	fill_part(&parts[0]);
	*done = 0;
	*used = (struct sched_use){ .wait_ok = true };
	for (int i = 0; i < n; i++) {
		if (parts[i].fresh)
			pthread_join(tids[i], NULL);
		if (parts[i].err)
			err = parts[i].err;
		*done += parts[i].done;
		used->cpu_ns += parts[i].used.cpu_ns;
		used->wait_ns += parts[i].used.wait_ns;
		used->wait_ok = used->wait_ok && parts[i].used.wait_ok;
	}
	return err;
}

static uint64_t pread_u64(int fd)
{
	char buf[64];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

static void send_msg(int fd, uint32_t type, int err, uint64_t bytes)
{
	struct msg m = { type, err, bytes };

	if (write(fd, &m, sizeof(m)) != sizeof(m))
		_exit(3);
}

/* A memory.stat key's value at the start of a line of buf; 0 when absent. */
static uint64_t stat_value(const char *buf, const char *key)
{
	size_t n = strlen(key);

	for (const char *l = buf; l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, n) == 0 && l[n] == ' ')
			return strtoull(l + n + 1, NULL, 10);
	return 0;
}

/* The page cache the kernel can reclaim, from a memory.stat fd. */
static uint64_t stat_file_bytes(int fd, bool v1)
{
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return stat_value(buf, v1 ? "total_inactive_file" : "inactive_file") +
	       stat_value(buf, v1 ? "total_active_file" : "active_file");
}

/* Room left under one bound, or UINT64_MAX when it cannot be read. */
static uint64_t bound_room(const struct bound *b)
{
	char buf[4096], *p;
	uint64_t used;
	ssize_t n = pread(b->fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return UINT64_MAX;
	buf[n] = '\0';
	if (b->meminfo) {
		p = strstr(buf, "MemAvailable:");
		if (!p)
			return UINT64_MAX;
		used = b->limit - MP_MIN(b->limit, strtoull(p + 13, NULL, 10) * 1024);
	} else {
		used = strtoull(buf, NULL, 10);
		if (b->stat_fd >= 0)
			used -= MP_MIN(used, stat_file_bytes(b->stat_fd, b->v1));
	}
	return used + b->margin < b->limit ? b->limit - b->margin - used : 0;
}

/* The CPUs this process may run on (its threads inherit it), as it runs
 * in its cgroup (a cpuset there counts); 0 when unknown (more than
 * CPU_SETSIZE). */
static uint64_t cpus_allowed(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	return sched_getaffinity(0, sizeof(set), &set) ? 0 : (uint64_t)CPU_COUNT(&set);
}

static __attribute__((noreturn)) void child_main(const struct child_args *a)
{
	size_t max = a->max_chunks, n = 0;
	void **maps = a->maps;
	uint64_t *sizes = a->sizes;
	struct sigaction sa = { .sa_handler = on_child_stop };
	char go;

	/* Named and moved before the first counted event, so every event of
	 * this process is attributed to "memprobe-probe". If an OOM strikes
	 * the target anyway (the workload grew), the probe is the victim: it
	 * volunteers first. And it never outlives memprobe. */
	prctl(PR_SET_NAME, "memprobe-probe");
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigaction(SIGUSR1, &sa, NULL);
	/* memprobe gone before PR_SET_PDEATHSIG took: reparented. Not "is
	 * the parent pid 1": memprobe is pid 1 as a container's entrypoint */
	if (getppid() != a->parent)
		_exit(6);
	mp_write_file("/proc/self/oom_score_adj", "1000");
	if (a->attach && mp_cgroup_attach(a->cg, getpid()) < 0) {
		send_msg(a->to_parent, MSG_ERROR, EACCES, 0);
		_exit(5);
	}
	send_msg(a->to_parent, MSG_READY, 0, cpus_allowed());
	if (read(a->from_parent, &go, 1) != 1)
		_exit(4);
	while (n < max && !g_child_stop) {
		uint64_t room = UINT64_MAX, size = a->chunk;
		bool tail = false;
		struct sched_use used;
		size_t done;
		void *p;
		int err;

		for (int i = 0; i < a->nbounds; i++)
			room = MP_MIN(room, bound_room(&a->bounds[i]));
		if (room == UINT64_MAX) {
			send_msg(a->to_parent, MSG_ERROR, EIO, 0);
			break;
		}
		/* Stop when one more chunk would leave less than the margin under
		 * any bound; the remainder, in 2 MiB steps, becomes one last
		 * smaller chunk. */
		if (size > room) {
			room = room > TAIL_SLACK_BYTES ? room - TAIL_SLACK_BYTES : 0;
			size = mp_round_down(room, THP_ALIGN_BYTES);
			tail = true;
			if (!size)
				break;
		}
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			send_msg(a->to_parent, MSG_ERROR, errno, 0);
			break;
		}
		if (strcmp(a->thp, "never") == 0)
			madvise(p, size, MADV_NOHUGEPAGE);
		else if (strcmp(a->thp, "always") == 0)
			madvise(p, size, MADV_HUGEPAGE);
		err = fill(p, size, a->threads, a->populate, &done, &used);
		/* the chunk's scheduling first: a chunk the fill fails in, or
		 * is stopped in, took CPU time too */
		send_msg(a->to_parent, MSG_FILL_CPU, 0, used.cpu_ns);
		send_msg(a->to_parent, MSG_FILL_WAIT, used.wait_ok ? 0 : ENODATA, used.wait_ns);
		if (err) {
			munmap(p, size);
			send_msg(a->to_parent, MSG_ERROR, err, 0);
			break;
		}
		maps[n] = p;
		sizes[n++] = size;
		/* stopped mid-chunk: what was touched is allocated */
		if (done)
			send_msg(a->to_parent, MSG_CHUNK, 0, done);
		if (tail)
			break;
	}
	send_msg(a->to_parent, MSG_DONE, 0, 0);
	if (read(a->from_parent, &go, 1) != 1)
		_exit(0); /* the parent went away: exiting frees it all */
	for (size_t i = 0; i < n; i++)
		munmap(maps[i], sizes[i]);
	send_msg(a->to_parent, MSG_FREED, 0, 0);
	_exit(0);
}

/* ---- one probe run ------------------------------------------------------- */

/* One run's state; run_cleanup undoes it, in reverse order of creation. */
struct run_state {
	const struct mp_host *h;
	const struct mp_cgroup *target;
	const struct mp_probe_cfg *cfg;
	struct mp_probe_result *res;
	struct mp_cgroup probe_cg;
	bool probe_created;
	struct child_args ca;    /* the bounds and chunk table the child is given */
	pid_t child;
	int to_child, from_child, usage_fd;
	bool usage_meminfo;      /* the v2 root: MemTotal - MemAvailable */
	uint64_t high0, psi0;    /* memory.events high, memory.pressure some total at the go */
	struct timespec t_watch; /* the last throttle check */
	uint64_t oom0, hits0;    /* the probe cgroup's counters before the run */
	uint64_t peak0;          /* the target's peak counter before the run */
	uint64_t peak_sampled;   /* the highest usage read while it ran */
	pthread_mutex_t peak_lock; /* peak_sampled: the sampler and the stop */
	pthread_t sampler;       /* reads the usage every 0.5 ms, go to free */
	bool sampling;
	volatile bool sampler_done;
	struct timespec t_go;
};

/* The run's problem, in res->err for the command to say; returns err. */
static int __attribute__((format(printf, 3, 4))) run_fail(struct run_state *r, int err,
							 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->res->err, sizeof(r->res->err), fmt, ap);
	va_end(ap);
	return err;
}

/* A line while it runs, through the command's on_warn (none: unsaid). */
static void __attribute__((format(printf, 2, 3))) run_warn(const struct run_state *r,
							  const char *fmt, ...)
{
	char line[PATH_MAX + 160];
	va_list ap;

	if (!r->cfg->on_warn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->cfg->on_warn(line, r->cfg->warn_arg);
}

static void run_cleanup(struct run_state *r)
{
	int st, err;

	if (r->child > 0) {
		kill(r->child, SIGKILL);
		waitpid(r->child, &st, 0);
		r->child = 0;
	}
	for (int i = 0; i < r->ca.nbounds; i++) {
		if (r->ca.bounds[i].fd >= 0)
			close(r->ca.bounds[i].fd);
		if (r->ca.bounds[i].stat_fd >= 0)
			close(r->ca.bounds[i].stat_fd);
	}
	r->ca.nbounds = 0;
	free(r->ca.maps);
	free(r->ca.sizes);
	r->ca.maps = NULL;
	r->ca.sizes = NULL;
	if (r->to_child >= 0)
		close(r->to_child);
	if (r->from_child >= 0)
		close(r->from_child);
	if (r->usage_fd >= 0)
		close(r->usage_fd);
	r->to_child = r->from_child = r->usage_fd = -1;
	if (r->probe_created && (err = mp_cgroup_remove(&r->probe_cg)))
		run_warn(r, "could not remove %s: %s", r->probe_cg.dir, strerror(-err));
	r->probe_created = false;
}

/* Usage of the target, or 0 when it cannot be read (it vanished); the v2
 * root's from /proc/meminfo, as mp_cgroup_usage reads it for `limits`. */
static uint64_t usage_of(const struct run_state *r)
{
	uint64_t u;

	if (r->usage_meminfo) {
		struct bound b = { .fd = r->usage_fd, .stat_fd = -1, .meminfo = true,
				   .limit = r->h->mem_total_bytes };
		uint64_t room = bound_room(&b);

		return room == UINT64_MAX ? 0 : r->h->mem_total_bytes - room;
	}
	u = pread_u64(r->usage_fd);
	return u == UINT64_MAX ? 0 : u;
}

/* The kernel's peak counter of the target, 0 when it keeps none. */
/* The kernel's peak counter, 0 where it keeps none. */
static uint64_t peak_counter(const struct mp_cgroup *target)
{
	uint64_t v;

	return mp_cgroup_peak(target, &v) ? 0 : v;
}

static bool stopped(const struct mp_probe_cfg *cfg)
{
	return cfg->stop && *cfg->stop;
}

/* A chunk's message, in the fill loop or a stop's drain: its bytes, or the
 * threads' scheduling while they filled it. */
static void count_msg(struct mp_probe_result *res, const struct msg *m)
{
	if (m->type == MSG_CHUNK) {
		res->f.allocated_bytes += m->bytes;
		res->f.probe_chunks++;
	} else if (m->type == MSG_FILL_CPU) {
		/* the first chunk's: the wait is measured until a chunk says not */
		if (!res->have_fill_cpu)
			res->have_fill_wait = true;
		res->have_fill_cpu = true;
		res->fill_cpu_ns += m->bytes;
	} else if (m->type == MSG_FILL_WAIT) {
		res->have_fill_wait = res->have_fill_wait && !m->err;
		res->fill_wait_ns += m->bytes;
	}
}

static bool read_msg(int fd, struct msg *m, const struct mp_probe_cfg *cfg)
{
	ssize_t n;

	do
		n = read(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR && !stopped(cfg));
	return n == sizeof(*m);
}

/*
 * Stopped mid-fill: ask the child to stop (SIGUSR1 ends its fill within one
 * slice) and count what it touched, so that the half-filled chunk is
 * allocated, not overhead. The child is killed afterwards as before.
 */
static void drain_stopped_child(struct run_state *r, struct mp_probe_result *res)
{
	struct timespec t0, t;
	struct msg m;

	if (kill(r->child, SIGUSR1))
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pfd = { .fd = r->from_child, .events = POLLIN };
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
		if (ms >= 2000 || poll(&pfd, 1, (int)(2000 - ms)) <= 0 ||
		    read(r->from_child, &m, sizeof(m)) != sizeof(m))
			return;
		if (m.type == MSG_DONE || m.type == MSG_ERROR)
			return;
		count_msg(res, &m);
	}
}

static void phase(const struct mp_probe_cfg *cfg, enum mp_probe_phase ph)
{
	if (cfg->on_phase)
		cfg->on_phase(ph, cfg->arg);
}

/* The target's usage file, read for the baselines and the peak. */
static int open_usage(struct run_state *r)
{
	char p[PATH_MAX];
	int ret;

	if (mp_path(p, sizeof(p), "%s/%s", r->target->dir, mp_cgroup_file(r->target, "usage")))
		return -ENAMETOOLONG;
	r->usage_fd = open(p, O_RDONLY | O_CLOEXEC);
	/* the v2 root keeps no memory.current: the host's use stands for it */
	if (r->usage_fd < 0 && errno == ENOENT && r->target->version == 2 &&
	    strcmp(r->target->dir, r->target->mount) == 0) {
		snprintf(p, sizeof(p), "/proc/meminfo");
		r->usage_fd = open(p, O_RDONLY | O_CLOEXEC);
		r->usage_meminfo = true;
	}
	if (r->usage_fd < 0) {
		ret = -errno;
		return run_fail(r, ret, "cannot open %s: %s", p, strerror(-ret));
	}
	return 0;
}

/* The usage of a directory's memory cgroup (memory.current / usage_in_bytes). */
static uint64_t usage_of_dir(const struct mp_cgroup *like, const char *dir)
{
	char p[PATH_MAX];
	uint64_t v;

	if (mp_path(p, sizeof(p), "%s/%s", dir, mp_cgroup_file(like, "usage")) ||
	    mp_read_u64_file(p, &v))
		return 0;
	return v;
}

/*
 * Where the probe aims, in res (aim, aim_why, stop_at_*): below the lowest
 * memory.high on the path (minus the margin) unless --to-limit; up to the
 * hard limit otherwise, and with --reclaim-cache through the page cache the
 * kernel can reclaim. Returns the room the probe's cgroup may have before
 * the margin is taken off.
 */
static uint64_t aim(struct run_state *r, const struct mp_cgroup *now)
{
	struct mp_probe_result *res = r->res;
	uint64_t room = r->cfg->reclaim_cache ? now->soft_headroom_bytes : now->headroom_bytes;
	bool high = strcmp(now->throttle_kind, "memory.high") == 0;

	res->aim = "limit";
	res->stop_at_bytes = now->effective_limit_bytes - MP_MIN(r->cfg->margin,
								  now->effective_limit_bytes);
	snprintf(res->stop_at_from, sizeof(res->stop_at_from), "%s", now->effective_from);
	if (high && !r->cfg->to_limit) {
		uint64_t used = usage_of_dir(now, now->throttle_from);
		uint64_t below = now->throttle_bytes > used ? now->throttle_bytes - used : 0;

		res->aim = "throttle";
		res->stop_at_bytes = now->throttle_bytes - MP_MIN(r->cfg->margin,
								  now->throttle_bytes);
		snprintf(res->stop_at_from, sizeof(res->stop_at_from), "%s", now->throttle_from);
		snprintf(res->aim_why, sizeof(res->aim_why), "memory.high %" PRIu64 " set by %s: "
			 "above it the kernel throttles; --to-limit probes up to the hard limit",
			 now->throttle_bytes, now->throttle_from);
		return MP_MIN(room, below);
	}
	if (high)
		snprintf(res->aim_why, sizeof(res->aim_why), "--to-limit: past memory.high %"
			 PRIu64 " (%s); a throttled probe stops", now->throttle_bytes,
			 now->throttle_from);
	else if (now->throttle_bytes)
		snprintf(res->aim_why, sizeof(res->aim_why), "the hard limit; the v1 soft limit "
			 "%" PRIu64 " (%s) acts only under global memory pressure, so it is no "
			 "stop point", now->throttle_bytes, now->throttle_from);
	else
		snprintf(res->aim_why, sizeof(res->aim_why), "the hard limit: no memory.high "
			 "below it on the path");
	if (r->cfg->reclaim_cache)
		mp_appendf(res->aim_why, sizeof(res->aim_why), "%s", "; --reclaim-cache: the "
			   "page cache counts as room");
	return room;
}

/* Does memprobe run in the target (or below it, where children count), so
 * that the probe it forks is charged there without moving? */
static bool runs_in_target(const struct run_state *r)
{
	struct mp_cgroup self;

	return mp_cgroup_of_pid("", r->h, 0, &self) == 0 &&
	       (!strcmp(self.dir, r->target->dir) ||
		(r->target->children_counted && mp_cgroup_contains_self("", r->h, r->target)));
}

/*
 * No child cgroup for the probe: it fills the target from inside, as the
 * brief's probe did, with the same bounds checked before every chunk and
 * oom_score_adj 1000, but without a limit of its own. err: why (-EOPNOTSUPP:
 * a child would not be charged to the target, or could have no limit; else
 * the cgroup filesystem is read-only or not memprobe's to write, a
 * container's, and what failed is in what). There the probe cannot move
 * into the target either: memprobe must run in it already (here).
 * Returns 0 or -errno.
 */
static int in_place(struct run_state *r, int err, bool here, const char *what)
{
	const struct mp_cgroup *target = r->target;
	struct mp_probe_result *res = r->res;

	r->probe_cg = *target;
	r->ca.attach = !here;
	res->in_target = true;
	if (err == -EOPNOTSUPP) {
		res->in_target_reason = target->version == 1 ? "no_use_hierarchy" : "not_delegated";
		snprintf(res->in_target_why, sizeof(res->in_target_why), "%s",
			 target->version == 1 ? "the target's memory.use_hierarchy is 0"
					      : "the target does not delegate the memory controller "
						"(memory not in its cgroup.subtree_control)");
		return 0;
	}
	res->in_target_reason = err == -EROFS ? "read_only" : "no_permission";
	res->in_target_why[0] = '\0';
	mp_appendf(res->in_target_why, sizeof(res->in_target_why), "%s: %s (a container's "
		   "cgroup filesystem)%s", what, strerror(-err), here ? "; memprobe runs in the "
		   "target, so the probe it forks is charged there" : "");
	if (here)
		return 0;
	return run_fail(r, err, "%s: %s, and memprobe runs outside %s, so its probe cannot "
			"be charged there; run memprobe inside that cgroup (in its container: "
			"docker exec, kubectl exec), or where the cgroup filesystem is writable",
			what, strerror(-err), target->dir);
}

/*
 * A probe cgroup made in a v2 target memprobe runs in, where no process may
 * leave the target: v2 moves a process only for a writer of the common
 * ancestor's cgroup.procs (here the target's; a cgroup namespace's root the
 * host owns, say), v1 asks the destination's alone. The probe could not
 * join it: it is removed again; -EACCES then, else 0.
 */
static int cannot_join(struct run_state *r, bool here)
{
	char p[PATH_MAX];

	if (!here || r->target->version != 2 ||
	    mp_path(p, sizeof(p), "%s/cgroup.procs", r->target->dir) || !access(p, W_OK))
		return 0;
	mp_cgroup_remove(&r->probe_cg);
	return -EACCES;
}

/*
 * The probe's cgroup: an overshoot OOM-kills the probe, never the workload.
 * Its limit is the least room left on the whole path (a sibling's usage
 * counts against a shared ancestor) minus the margin.
 */
static int make_probe_cgroup(struct run_state *r)
{
	const struct mp_cgroup *target = r->target;
	struct mp_probe_result *res = r->res;
	struct mp_cgroup now = *target;
	uint64_t headroom, margin = r->cfg->margin;
	char name[64], what[PATH_MAX + 128];
	bool here;
	int err, w;

	mp_cgroup_read("", r->h, &now);
	headroom = aim(r, &now);
	res->f.usage_before_bytes = usage_of(r);
	res->probe_limit_bytes = headroom > margin + 4 * MP_MIB ? headroom - margin : 4 * MP_MIB;
	/* never above the target's own limit: a floor of 4 MiB on a tiny target */
	res->probe_limit_bytes = MP_MIN(res->probe_limit_bytes, target->effective_limit_bytes);
	snprintf(name, sizeof(name), "memprobe-probe-%d", (int)getpid());
	err = now.children_counted ? mp_cgroup_create(r->h, target, name, res->probe_limit_bytes,
						      &r->probe_cg) : -EOPNOTSUPP;
	/* a container's v2 cgroup holds processes, so it delegates nothing;
	 * where its filesystem is read-only too, that is the reason to give */
	if (err == -EOPNOTSUPP && (w = mp_cgroup_writable(target)) && (w == -EROFS || w == -EACCES))
		err = w;
	here = runs_in_target(r);
	r->ca.attach = true;
	what[0] = '\0';
	if (!err && (err = cannot_join(r, here)))
		mp_appendf(what, sizeof(what), "the probe cannot leave %s for a cgroup of its own "
			   "(cgroup.procs)", target->dir);
	else if (err)
		mp_appendf(what, sizeof(what), "cannot create %s/%s", target->dir, name);
	if (err == -EOPNOTSUPP || err == -EROFS || err == -EACCES || err == -EPERM) {
		if ((err = in_place(r, err, here, what)))
			return err;
	} else if (err) {
		/* EEXIST included: a cgroup of that name is not one this run set up */
		return run_fail(r, err, "cannot create %s/%s: %s", target->dir, name,
				strerror(-err));
	} else {
		r->probe_created = true;
	}
	snprintf(res->cgroup_dir, sizeof(res->cgroup_dir), "%s", r->probe_cg.dir);
	r->oom0 = mp_cgroup_oom_kills(&r->probe_cg);
	r->hits0 = mp_cgroup_limit_hits(&r->probe_cg);
	return 0;
}

/*
 * The bounds the child checks before every chunk: the target and its
 * limited ancestors, the host, the probe's own cgroup; and its chunk table,
 * allocated here, before the fork.
 */
static int set_bounds(struct run_state *r)
{
	struct mp_limit_level lv[MP_MAX_LEVELS];
	int n = mp_cgroup_limit_levels("", r->target, lv, MP_MAX_LEVELS);
	const char *usage = mp_cgroup_file(r->target, "usage");
	struct child_args *ca = &r->ca;
	uint64_t margin = r->cfg->margin;
	char q[PATH_MAX];
	int ret;

	for (int i = 0; i < n && ca->nbounds < MAX_BOUNDS - 3; i++) {
		if (mp_path(q, sizeof(q), "%s/%s", lv[i].dir, usage))
			continue;
		ca->bounds[ca->nbounds++] = (struct bound){
			.fd = open(q, O_RDONLY | O_CLOEXEC), .stat_fd = -1,
			.limit = lv[i].limit_bytes, .margin = margin,
		};
		if (r->cfg->reclaim_cache &&
		    !mp_path(q, sizeof(q), "%s/memory.stat", lv[i].dir)) {
			ca->bounds[ca->nbounds - 1].stat_fd = open(q, O_RDONLY | O_CLOEXEC);
			ca->bounds[ca->nbounds - 1].v1 = r->target->version == 1;
		}
	}
	/* below memory.high: the cgroup that sets it, by its own usage */
	if (strcmp(r->res->aim, "throttle") == 0 &&
	    !mp_path(q, sizeof(q), "%s/%s", r->res->stop_at_from, usage))
		ca->bounds[ca->nbounds++] = (struct bound){
			.fd = open(q, O_RDONLY | O_CLOEXEC), .stat_fd = -1,
			.limit = r->res->stop_at_bytes + margin, .margin = margin,
		};
	ca->bounds[ca->nbounds++] = (struct bound){
		.fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC), .stat_fd = -1, .meminfo = true,
		.limit = r->h->mem_total_bytes, .margin = margin,
	};
	if (!r->res->in_target && !mp_path(q, sizeof(q), "%s/%s", r->probe_cg.dir, usage))
		ca->bounds[ca->nbounds++] = (struct bound){
			.fd = open(q, O_RDONLY | O_CLOEXEC), .stat_fd = -1,
			.limit = r->res->probe_limit_bytes, .margin = 0,
		};
	/* in the target, no limit of the probe's own stands in for a limit the
	 * levels above miss: one a cgroup namespace hides (v1's
	 * hierarchical_memory_limit), against the target's usage */
	else if (r->res->in_target &&
		 !mp_path(q, sizeof(q), "%s/%s", r->target->dir, usage))
		ca->bounds[ca->nbounds++] = (struct bound){
			.fd = open(q, O_RDONLY | O_CLOEXEC), .stat_fd = -1,
			.limit = r->target->effective_limit_bytes, .margin = margin,
		};
	ca->max_chunks = (size_t)(r->res->probe_limit_bytes / r->cfg->chunk) + 2;
	ca->maps = calloc(ca->max_chunks, sizeof(*ca->maps));
	ca->sizes = calloc(ca->max_chunks, sizeof(*ca->sizes));
	if (!ca->maps || !ca->sizes)
		return run_fail(r, -ENOMEM, "out of memory");
	for (int i = 0; i < ca->nbounds; i++) {
		if (ca->bounds[i].fd < 0) {
			ret = -errno;
			return run_fail(r, ret, "cannot open a usage file: %s", strerror(-ret));
		}
	}
	return 0;
}

/* In the child, after the fork: never returns. */
static __attribute__((noreturn)) void start_child(struct run_state *r, int p2c[2], int c2p[2])
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, ign = { .sa_handler = SIG_IGN };

	r->ca.cg = &r->probe_cg;
	r->ca.to_parent = c2p[1];
	r->ca.from_parent = p2c[0];
	/* memprobe relays a stop (SIGUSR1), so a terminal's ^C or hangup
	 * does not kill the probe mid-chunk; SIGTERM from anyone does */
	sigaction(SIGTERM, &dfl, NULL);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	close(p2c[1]);
	close(c2p[0]);
	child_main(&r->ca);
}

/* Fork the probe process and wait until it has joined its cgroup. The
 * child calls only what is safe after a fork of a threaded process (system
 * calls, no allocation), but for --threads N's pthread_create: a caller
 * asking for threads forks with no other thread running (cmd_probe waits for
 * the attribution's; record's probe fills with one thread). */
static int fork_child(struct run_state *r)
{
	int p2c[2] = { -1, -1 }, c2p[2] = { -1, -1 }, ret = 0;
	struct msg m;

	if (pipe2(p2c, O_CLOEXEC) || pipe2(c2p, O_CLOEXEC)) {
		ret = run_fail(r, -errno, "pipe: %s", strerror(errno));
		for (int i = 0; i < 2; i++) {
			if (p2c[i] >= 0)
				close(p2c[i]);
			if (c2p[i] >= 0)
				close(c2p[i]);
		}
		return ret;
	}
	r->ca.parent = getpid();
	r->child = fork();
	if (r->child == 0)
		start_child(r, p2c, c2p);
	if (r->child < 0) {
		ret = run_fail(r, -errno, "fork: %s", strerror(errno));
		r->child = 0;
	}
	r->res->child_pid = r->child > 0 ? r->child : 0;
	close(p2c[0]);
	close(c2p[1]);
	r->to_child = p2c[1];
	r->from_child = c2p[0];
	if (ret)
		return ret;
	if (!read_msg(r->from_child, &m, r->cfg) || m.type != MSG_READY) {
		if (stopped(r->cfg)) {
			r->res->interrupted = true;
			return 1; /* not an error: nothing was filled */
		}
		return run_fail(r, -ECHILD, "the probe process could not join %s", r->probe_cg.dir);
	}
	r->res->fill_cpus_allowed = m.bytes;
	return 0;
}

static uint64_t ns_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000000000ULL + (uint64_t)t.tv_nsec -
	       (uint64_t)t0->tv_nsec;
}

/*
 * usage_before: the lowest usage over MP_PROBE_BASELINE_MS, read every 5 ms,
 * with the caller's snapshot at each new low (BASELINE). One read would take
 * a workload's burst held at that moment as its base, and the overhead
 * would come out short by the burst, or negative.
 */
static void baseline(struct run_state *r)
{
	struct mp_probe_result *res = r->res;
	struct timespec t0;
	uint64_t low = UINT64_MAX;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint64_t u = usage_of(r);

		res->baseline_samples++;
		if (u < low) {
			low = u;
			res->phase_usage_bytes = u;
			phase(r->cfg, MP_PROBE_BASELINE);
		}
		if (stopped(r->cfg))
			break;
		usleep(5000);
	} while (ns_since(&t0) < MP_PROBE_BASELINE_MS * 1000000ULL);
	res->baseline_ns = ns_since(&t0);
	res->f.usage_before_bytes = low;
}

/*
 * The peak's sampler, a thread from the go until the probe has freed: the
 * target's usage every 0.5 ms, and at each new highest the caller's snapshot
 * (PEAK), the vector at the peak, which a workload's burst can put anywhere
 * in the fill or in the moments after the stop (while the stop's full
 * snapshot is read, before the probe's free shows). A thread, so that no
 * snapshot of the main thread leaves the usage unwatched.
 */
static void sample_peak(struct run_state *r)
{
	uint64_t u = usage_of(r);

	pthread_mutex_lock(&r->peak_lock);
	if (u > r->peak_sampled) {
		r->peak_sampled = u;
		r->res->phase_usage_bytes = u;
		phase(r->cfg, MP_PROBE_PEAK);
	}
	pthread_mutex_unlock(&r->peak_lock);
}

static void *sampler_main(void *arg)
{
	struct run_state *r = arg;

	while (!r->sampler_done) {
		sample_peak(r);
		usleep(500);
	}
	return NULL;
}

/*
 * The sampler runs SCHED_FIFO where it may (root): it sleeps 0.5 ms between
 * reads and a read is a few microseconds, but on a loaded host a normal
 * thread waits its turn for 10 ms and more while a burst touches 30 MiB,
 * and the peak's vector is missed. Without the right, a normal thread;
 * without a thread, the stop's reading is the peak, as it is anyway.
 */
static void start_sampler(struct run_state *r)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t at;

	pthread_attr_init(&at);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_FIFO);
	pthread_attr_setschedparam(&at, &sp);
	r->sampling = pthread_create(&r->sampler, &at, sampler_main, r) == 0 ||
		      pthread_create(&r->sampler, NULL, sampler_main, r) == 0;
	pthread_attr_destroy(&at);
}

static void stop_sampler(struct run_state *r)
{
	if (!r->sampling)
		return;
	r->sampler_done = true;
	pthread_join(r->sampler, NULL);
	r->sampling = false;
}

/* memory.events "high" of the cgroup that sets memory.high (it counts its
 * descendants' too) and the some total (us) of the probe cgroup's
 * memory.pressure: false when unreadable. */
static bool read_high_events(const struct run_state *r, uint64_t *v)
{
	char p[PATH_MAX];

	return !mp_path(p, sizeof(p), "%s/memory.events", r->target->throttle_from) &&
	       !mp_read_keyed_u64(p, "high", v);
}

static bool read_pressure(const struct run_state *r, uint64_t *v)
{
	char p[PATH_MAX], buf[512], *t;

	if (mp_path(p, sizeof(p), "%s/memory.pressure", r->probe_cg.dir) ||
	    mp_read_file(p, buf, sizeof(buf)) <= 0 || strncmp(buf, "some ", 5) ||
	    !(t = strstr(buf, "total=")))
		return false;
	*v = strtoull(t + 6, NULL, 10);
	return true;
}

/* What is watched for throttling: memory.high's events, on v2 only. */
static void watch_start(struct run_state *r)
{
	struct mp_probe_result *res = r->res;
	const struct mp_cgroup *t = r->target;

	if (strcmp(t->throttle_kind, "memory.high") == 0) {
		res->throttle_signal = "memory.events high of the cgroup setting memory.high, "
				       "with the probe cgroup's memory.pressure some total";
		res->have_high_events = read_high_events(r, &r->high0);
		res->have_pressure = read_pressure(r, &r->psi0);
	} else if (t->throttle_bytes) {
		res->throttle_signal = "none: cgroup v1 has no memory.high, and its soft limit "
				       "acts only under global memory pressure (no throttle event)";
	} else {
		res->throttle_signal = "none: no memory.high on the path";
	}
	r->t_watch = r->t_go;
}

/*
 * Every 100 ms: is the probe throttled at memory.high? The kernel counts a
 * "high" event each time it routes a charge over memory.high to reclaim;
 * without anything to reclaim the task then sleeps, which memory.pressure
 * shows. Both rising (or high alone where PSI is off): throttled.
 */
static bool watch_throttled(struct run_state *r)
{
	struct mp_probe_result *res = r->res;
	struct timespec t;
	uint64_t high, psi;
	long ms;

	if (!res->have_high_events)
		return false;
	clock_gettime(CLOCK_MONOTONIC, &t);
	ms = (t.tv_sec - r->t_watch.tv_sec) * 1000 + (t.tv_nsec - r->t_watch.tv_nsec) / 1000000;
	if (ms < 100)
		return false;
	r->t_watch = t;
	if (!read_high_events(r, &high))
		return false;
	res->high_events = high - MP_MIN(high, r->high0);
	if (res->have_pressure && read_pressure(r, &psi))
		res->pressure_some_us = psi - MP_MIN(psi, r->psi0);
	return res->high_events > 0 &&
	       (!res->have_pressure || res->pressure_some_us >= 100 * 1000);
}

/* Baselines, taken as late as possible before the first chunk; then go. */
static int start_fill(struct run_state *r)
{
	struct mp_probe_result *res = r->res;

	r->peak0 = peak_counter(r->target);
	baseline(r);
	res->usage_at_go_bytes = usage_of(r);
	phase(r->cfg, MP_PROBE_START);
	r->peak_sampled = res->usage_at_go_bytes;
	res->have_file = !mp_cgroup_file_bytes("", r->target, &res->file_before_bytes);
	clock_gettime(CLOCK_MONOTONIC, &r->t_go);
	watch_start(r);
	if (write(r->to_child, "g", 1) != 1)
		return run_fail(r, -ECHILD, "the probe process died before starting");
	start_sampler(r);
	return 0;
}

/* The caller's status line: the usage just sampled, the chunks so far. */
static void progress(const struct run_state *r, uint64_t usage, bool last)
{
	const struct mp_probe_result *res = r->res;
	struct mp_probe_progress p = {
		.chunks = res->f.probe_chunks, .allocated_bytes = res->f.allocated_bytes,
		.usage_before_bytes = res->f.usage_before_bytes, .usage_bytes = usage,
		.stop_usage_bytes = res->f.usage_before_bytes + res->probe_limit_bytes,
		.last = last,
	};
	struct timespec t;

	if (!r->cfg->on_progress)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t);
	p.elapsed_ns = (uint64_t)(t.tv_sec - r->t_go.tv_sec) * 1000000000ULL +
		       (uint64_t)t.tv_nsec - (uint64_t)r->t_go.tv_nsec;
	r->cfg->on_progress(&p, r->cfg->progress_arg);
}

/* Count the chunks the child reports until it is done, dies or a stop
 * comes (the sampler thread watches the usage meanwhile). */
static void fill_loop(struct run_state *r)
{
	struct mp_probe_result *res = r->res;
	struct msg m;

	while (!stopped(r->cfg)) {
		struct pollfd pfd = { .fd = r->from_child, .events = POLLIN };
		int n = poll(&pfd, 1, 2);

		if (r->cfg->on_progress) /* the status line: it keeps its own pace */
			progress(r, usage_of(r), false);
		if (watch_throttled(r)) {
			res->throttled = true;
			break;
		}
		if (n <= 0)
			continue;
		if (!read_msg(r->from_child, &m, r->cfg))
			break; /* the probe died: OOM-killed at its own limit, or killed */
		count_msg(res, &m);
		if (m.type == MSG_ERROR) {
			run_warn(r, "the probe stopped early: %s", strerror(m.err));
		} else if (m.type == MSG_DONE) {
			struct timespec t_done;

			clock_gettime(CLOCK_MONOTONIC, &t_done);
			res->fill_ns = (uint64_t)(t_done.tv_sec - r->t_go.tv_sec) * 1000000000ULL +
				       (uint64_t)t_done.tv_nsec - (uint64_t)r->t_go.tv_nsec;
			res->completed = true;
			break;
		}
	}
	res->interrupted = stopped(r->cfg);
	if ((res->interrupted || res->throttled) && !res->completed)
		drain_stopped_child(r, res);
	if (res->throttled) {
		/* a stop of its own: the fill ends here, as at the margin */
		struct timespec t_done;

		clock_gettime(CLOCK_MONOTONIC, &t_done);
		res->fill_ns = (uint64_t)(t_done.tv_sec - r->t_go.tv_sec) * 1000000000ULL +
			       (uint64_t)t_done.tv_nsec - (uint64_t)r->t_go.tv_nsec;
	}
	/* the peak: everything the probe allocated is still held here */
	res->usage_at_stop_bytes = usage_of(r);
	if (res->have_file && mp_cgroup_file_bytes("", r->target, &res->file_at_stop_bytes))
		res->have_file = false;
	pthread_mutex_lock(&r->peak_lock);
	if (res->usage_at_stop_bytes > r->peak_sampled)
		r->peak_sampled = res->usage_at_stop_bytes;
	pthread_mutex_unlock(&r->peak_lock);
	progress(r, res->usage_at_stop_bytes, true);
	phase(r->cfg, MP_PROBE_STOP);
}

/*
 * The probe's exit is not all uncharged when waitpid returns: a kernel that
 * frees page tables after an RCU grace period (MMU_GATHER_RCU_TABLE_FREE;
 * x86 frees every process's that way) uncharges them, with the task's other
 * objects freed by RCU callbacks, a grace period or more later: 11-35 ms
 * after waitpid for a 512 MiB child's 1 MiB of page tables on this host.
 * Read at once, "left after" held 1.3-1.7 MiB of a 768 MiB probe's page
 * tables that the cgroup no longer held a moment later. So the usage is
 * read every 1 ms until it is back at usage_before (the child was there at
 * the baseline: everything it took is then given back), or has not fallen
 * for MP_SETTLE_STILL_MS (what is left stays: caches, a workload), or for
 * MP_SETTLE_MAX_MS in all (a busy target's usage never rests). A grace
 * period cannot be waited for from user space: membarrier's
 * MEMBARRIER_CMD_GLOBAL returns after an expedited one, before the
 * callbacks of a normal one have run.
 */
#define MP_SETTLE_STILL_MS 50
#define MP_SETTLE_MAX_MS 500

static void settle_after_exit(struct run_state *r)
{
	uint64_t before = r->res->f.usage_before_bytes, last = usage_of(r);
	struct timespec t0, fell;

	/* by the clock, as baseline() is: on a loaded machine a 1 ms sleep
	 * and a read take longer, and a count of reads overstates the wait */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fell = t0;
	while (last > before && !stopped(r->cfg) &&
	       ns_since(&fell) < MP_SETTLE_STILL_MS * 1000000ULL &&
	       ns_since(&t0) < MP_SETTLE_MAX_MS * 1000000ULL) {
		uint64_t u;

		usleep(1000);
		if ((u = usage_of(r)) < last)
			clock_gettime(CLOCK_MONOTONIC, &fell);
		last = u;
	}
}

/*
 * usage_after, with the caller's vector at the same moment (LEFT): read,
 * snapshot, read again, and again (up to 10 times) while the two reads
 * differ by more than 1 MiB: a workload's burst between them would leave
 * the vector unlike the usage it is to explain.
 */
static void left_after(struct run_state *r)
{
	struct mp_probe_result *res = r->res;

	for (int tries = 0; tries < 10; tries++) {
		uint64_t u = usage_of(r), u2;

		res->f.usage_after_bytes = res->phase_usage_bytes = u;
		phase(r->cfg, MP_PROBE_LEFT);
		u2 = usage_of(r);
		if ((u2 > u ? u2 - u : u - u2) <= MP_MIB || stopped(r->cfg))
			break;
	}
}

/* Let the child free everything and exit (or kill it), and tell how it
 * ended: OOM-killed, and at whose limit, or killed by someone else. */
static void stop_and_wait(struct run_state *r)
{
	struct mp_probe_result *res = r->res;
	int status = 0;
	struct msg m;

	/* the last moment the probe holds everything: a workload's burst
	 * rising then makes the peak right here */
	if (res->completed && !stopped(r->cfg))
		sample_peak(r);
	if (res->completed && !stopped(r->cfg) && write(r->to_child, "f", 1) == 1)
		read_msg(r->from_child, &m, r->cfg); /* MSG_FREED */
	else
		kill(r->child, SIGKILL);
	if (waitpid(r->child, &status, 0) == r->child) {
		bool sigkill = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;

		/* the cgroup's own counter tells an OOM kill from any other; in
		 * the target itself, only together with the probe's SIGKILL */
		res->oom_killed = mp_cgroup_oom_kills(&r->probe_cg) > r->oom0 &&
				  (!res->in_target || (sigkill && !res->completed));
		/* whose limit: the probe cgroup's own failcnt / events max moves
		 * only when the charge failed there */
		res->oom_at_own_limit = res->oom_killed && !res->in_target &&
					mp_cgroup_limit_hits(&r->probe_cg) > r->hits0;
		if (!res->completed && !res->interrupted && !res->throttled && !res->oom_killed &&
		    WIFSIGNALED(status))
			res->killed_by_signal = WTERMSIG(status);
		r->child = 0;
		settle_after_exit(r);
	}
	left_after(r);
	phase(r->cfg, MP_PROBE_FREED);
}

/* The kernel's peak counter is exact but may predate the probe: it is
 * used only when it rose while the probe ran. */
static void read_peak(struct run_state *r)
{
	uint64_t peak1 = peak_counter(r->target);

	r->res->f.usage_peak_bytes = peak1 > r->peak0 && peak1 > r->peak_sampled ? peak1
										  : r->peak_sampled;
}

int mp_probe_run(const struct mp_host *h, const struct mp_cgroup *target,
		 const struct mp_probe_cfg *cfg, struct mp_probe_result *res)
{
	struct run_state r = {
		.h = h, .target = target, .cfg = cfg, .res = res,
		.ca = { .chunk = cfg->chunk, .thp = cfg->thp,
			.threads = cfg->threads > 0 ? cfg->threads : 1,
			.populate = cfg->populate },
		.to_child = -1, .from_child = -1, .usage_fd = -1,
		.peak_lock = PTHREAD_MUTEX_INITIALIZER,
	};
	int ret;

	memset(res, 0, sizeof(*res));
	res->f.cgroup_limit_bytes = target->effective_limit_bytes;
	if ((ret = open_usage(&r)))
		return ret;
	if (!(ret = make_probe_cgroup(&r)) && !(ret = set_bounds(&r)) &&
	    !(ret = fork_child(&r)) && !(ret = start_fill(&r))) {
		fill_loop(&r);
		stop_and_wait(&r);
		stop_sampler(&r);
		read_peak(&r);
	}
	stop_sampler(&r);
	if (res->completed && !res->f.probe_chunks) {
		/* why no chunk fit, as it was then: not the headroom the target
		 * was first read with (memprobe's start and the workload move it) */
		struct mp_cgroup now = *target;

		if (!mp_cgroup_read("", r.h, &now))
			res->headroom_at_stop_bytes = r.cfg->reclaim_cache ? now.soft_headroom_bytes
									  : now.headroom_bytes;
		else
			res->headroom_at_stop_bytes = target->headroom_bytes;
	}
	res->stop_reason = res->throttled ? "throttled" : res->interrupted ? "interrupted" :
			   res->oom_killed ? "oom_killed" : res->killed_by_signal ? "killed" :
			   res->completed ? "margin" : "error";
	run_cleanup(&r);
	pthread_mutex_destroy(&r.peak_lock);
	return ret > 0 ? 0 : ret; /* > 0: stopped before the fill began */
}
