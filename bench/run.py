#!/usr/bin/python3
"""memprobe's side-by-side bench (`make bench`, issue 5). Needs root.

One invocation, in this order (every workload runs in a memprobe-bench-<pid>
cgroup made under the driver's own memory cgroup and removed at exit):

  1. fill matrix: bench/fill.c's eight variants (4 KiB / THP pages, one and
     two threads, memset / MADV_POPULATE_WRITE), no tracer;
  2. tracer rounds: the workload (4 KiB pages, one thread, memset) under
     each tracer, every tracer run between two no-tracer runs, the order of
     the tracers reversed every other round; per tracer the median ratio of
     the workload's CPU time (getrusage user+sys) to the mean of its two
     no-tracer neighbours; an A/A control (no tracer) measures the noise;
  3. exec to attached: `memprobe record --ready-fd`, 20 starts;
  4. BPF run-time stats: a separate pass under bench/bpfstats (bpf()
     BPF_ENABLE_STATS, held for that pass only), memprobe's programs' ns per
     run against empty tp_btf programs on the same tracepoints, and which
     programs memprobe loads (found, not assumed); then each hooked
     tracepoint's firings per 4 KiB page in the workload's own context
     (perf stat per task on one fill); with the empty programs' measured
     cost per firing (the empty-progs tracer of the rounds) they give each
     tracer's floor, 1 + firings x cost / the fault's CPU;
  5. the probe's fill rate: `memprobe probe --limit 4G --thp never` against
     fill.c's mmap+memset of the same size and page size, one thread and
     --threads 2, with the default --memcg-from and with `counters`.

memprobe's modes in the rounds and the stats pass: no stacks, stacks (the
default), --fault-tracepoint, and --memcg-from counters with and without
stacks: the summary gives both designs of the per-process memcg split their
BPF firings per page (per task and by the kernel's run counts), program ns
per page, added CPU per page and floor.

On a fresh machine: tracefs is mounted at /sys/kernel/tracing when no tracefs
is (bpftrace's tracepoint: probes and perf kmem need it) and unmounted at
exit; RLIMIT_MEMLOCK is raised as far as allowed before any tracer starts;
each tracer is started once before the phases, and one that cannot run
(missing, not ready, failing) is marked unavailable in the table with the
reason while the bench goes on without it.

Output: build/bench/results.jsonl (one JSON line per measurement), the
summary on standard output and in docs/performance.md.

Phases run in the order 1, 3, 4, 2, 5 (after one start of each tracer,
which finds those that cannot run): the rounds take what the time budget
leaves (at least BENCH_MIN_ROUNDS) after keeping an estimate of the probe's.

Environment: BENCH_MIN_ROUNDS (15), BENCH_ROUNDS (20, at most), BENCH_SIZE
(256M, the rounds' workload), BENCH_MATRIX_SIZE (1G), BENCH_MATRIX_REPS (3),
BENCH_PROBE_REPS (2), BENCH_PROBE_LIMIT (4G), BENCH_ATTACH_STARTS (20), BENCH_BUDGET_S (720, for
this script; `make bench` adds the build), MEMPROBE (build/memprobe),
BENCH_DOC (docs/performance.md), BENCH_TRACERS (comma-separated: which of
empty-progs, bpftrace, perf-kmem, memprobe-faulttp, memprobe-counters,
memprobe-counters-nostack to run; default all, the last three where record
has --fault-tracepoint / --memcg-from; memprobe-nostack, memprobe-stacks and
the A/A control always run), BENCH_TRACEFS (colon-separated
directories where a mounted tracefs is looked for; default
/sys/kernel/tracing:/sys/kernel/debug/tracing), BENCH_TRACEFS_MOUNT (where to
mount one when none is found; /sys/kernel/tracing).
"""
import atexit
import datetime
import hashlib
import json
import os
import platform
import re
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build")
OUT = os.path.join(BUILD, "bench")
MEMPROBE = os.environ.get("MEMPROBE", os.path.join(BUILD, "memprobe"))
FILL = os.path.join(OUT, "fill")
BPFSTATS = os.path.join(OUT, "bpfstats")
EMPTY_OBJ = os.path.join(OUT, "empty.bpf.o")
RESULTS = os.path.join(OUT, "results.jsonl")
DOC = os.environ.get("BENCH_DOC", os.path.join(ROOT, "docs", "performance.md"))

MAX_ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))
MIN_ROUNDS = min(int(os.environ.get("BENCH_MIN_ROUNDS", "15")), MAX_ROUNDS)
SIZE = os.environ.get("BENCH_SIZE", "256M")
MATRIX_SIZE = os.environ.get("BENCH_MATRIX_SIZE", "1G")
MATRIX_REPS = int(os.environ.get("BENCH_MATRIX_REPS", "3"))
PROBE_REPS = int(os.environ.get("BENCH_PROBE_REPS", "2"))
PROBE_LIMIT = os.environ.get("BENCH_PROBE_LIMIT", "4G")
ATTACH_STARTS = int(os.environ.get("BENCH_ATTACH_STARTS", "20"))
BUDGET_S = float(os.environ.get("BENCH_BUDGET_S", "720"))
NOISE = 0.05          # A/A control: ±5%
QUIET_LOAD = 0.25     # a quiet round: the rest of the machine used < 0.25 CPU
T_START = time.monotonic()

TRACEFS_DIRS = os.environ.get("BENCH_TRACEFS",
                              "/sys/kernel/tracing:/sys/kernel/debug/tracing").split(":")
TRACEFS_MOUNT = os.environ.get("BENCH_TRACEFS_MOUNT", "/sys/kernel/tracing")

# every tracer the bench knows, in round order; main() keeps the ones to run
ALL_TRACERS = ["memprobe-nostack", "memprobe-stacks", "memprobe-faulttp", "memprobe-counters",
               "memprobe-counters-nostack", "empty-progs", "bpftrace", "perf-kmem", "control"]
REQUIRED = ("memprobe-nostack", "memprobe-stacks", "control")
TRACERS = list(ALL_TRACERS)
MEMPROBE_MODES = ("memprobe-nostack", "memprobe-stacks", "memprobe-faulttp", "memprobe-counters",
                  "memprobe-counters-nostack")
# record's two designs for the per-process split of memory.stat (--memcg-from):
# (label, its mode with default options, its mode with --stack-sample 0)
MEMCG_PATHS = (("--memcg-from tracepoint (the default on cgroup v1)", "memprobe-stacks",
                "memprobe-nostack"),
               ("--memcg-from counters (the default on cgroup v2)", "memprobe-counters",
                "memprobe-counters-nostack"))
# set by main(): record has --memcg-from, so that the tracepoint modes ask
# for it by name (the default depends on the cgroup version)
MEMCG_FROM = False
TRACER_DESC = {
    "none": "no tracer (baseline)",
    "memprobe-nostack": "memprobe record --cgroup CG --memcg-from tracepoint --stack-sample 0",
    "memprobe-stacks": "memprobe record --cgroup CG --memcg-from tracepoint (kernel stacks)",
    "memprobe-faulttp": "memprobe record --cgroup CG --fault-tracepoint --stack-sample 0",
    "memprobe-counters": "memprobe record --cgroup CG --memcg-from counters (kernel stacks)",
    "memprobe-counters-nostack": "memprobe record --cgroup CG --memcg-from counters "
                                 "--stack-sample 0",
    "empty-progs": "empty tp_btf programs on memprobe's tracepoints (bench/empty.bpf.c)",
    "bpftrace": "bpftrace: faults, mm_page_alloc by order, memcg stat items, memcg-filtered",
    "perf-kmem": "perf kmem --page record (system-wide)",
    "control": "no tracer (A/A control)",
}

children = set()      # pids we started and have not reaped
cgroups = []          # cgroups we made
mounted = []          # tracefs mounts we made (unmounted at exit)
results_f = None


class TracerUnavailable(RuntimeError):
    """A tracer that cannot run here; its message is the reason for the table."""


def log(msg):
    el = time.monotonic() - T_START
    print(f"[bench {el:6.1f}s] {msg}", file=sys.stderr, flush=True)


def emit(kind, **kw):
    rec = {"kind": kind, **kw}
    results_f.write(json.dumps(rec) + "\n")
    results_f.flush()
    return rec


def elapsed():
    return time.monotonic() - T_START


# ---- statistics -----------------------------------------------------------

def median(xs):
    return statistics.median(xs) if xs else None


def quartiles(xs):
    if len(xs) < 2:
        return (xs[0], xs[0]) if xs else (None, None)
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[2]


def pct(xs, p):
    """p-th percentile, linear interpolation (numpy's default)."""
    if not xs:
        return None
    s = sorted(xs)
    k = (len(s) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def stats(xs):
    q1, q3 = quartiles(xs)
    return {"n": len(xs), "median": median(xs), "q1": q1, "q3": q3,
            "min": min(xs) if xs else None, "max": max(xs) if xs else None}


# ---- processes and cgroups ------------------------------------------------

def own_memcg_dir():
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            if "memory" in ctrls.split(","):
                return "/sys/fs/cgroup/memory" + (path if path != "/" else "")
    sys.exit("bench: no v1 memory controller line in /proc/self/cgroup")


def make_cgroup(name):
    d = os.path.join(own_memcg_dir(), name)
    os.mkdir(d)
    cgroups.append(d)
    return d


def cgroup_procs(d):
    try:
        with open(os.path.join(d, "cgroup.procs")) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def remove_cgroups():
    for d in reversed(cgroups):
        for _ in range(100):
            try:
                os.rmdir(d)
                break
            except FileNotFoundError:
                break
            except OSError:
                # only our own workload can be in it: kill it by pid
                for pid in cgroup_procs(d):
                    if pid in children:
                        try:
                            os.kill(pid, signal.SIGKILL)
                        except ProcessLookupError:
                            pass
                time.sleep(0.05)
        else:
            print(f"bench: could not remove {d}", file=sys.stderr)
    cgroups.clear()


def spawn(argv, **kw):
    p = subprocess.Popen(argv, **kw)
    children.add(p.pid)
    return p


def reap(p, timeout=None):
    """wait4 the child: (returncode, its CPU seconds, its max RSS in KiB)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG if deadline else 0)
        if pid == p.pid:
            break
        if deadline and time.monotonic() > deadline:
            log(f"pid {p.pid} ({p.args[0]}) did not stop: SIGKILL")
            os.kill(p.pid, signal.SIGKILL)
            deadline = None
            continue
        time.sleep(0.01)
    children.discard(p.pid)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def interrupt(p, drain_fd=None, grace=30.0, every=3.0):
    """Stop a tracer with SIGINT, again every `every` seconds (if given) while
    it runs (bpftrace 0.17 can miss one), SIGKILL after `grace`; drain_fd is read to
    EOF meanwhile. Returns (returncode, CPU seconds, max RSS KiB, SIGINTs sent)."""
    t0 = last = time.monotonic()
    sent, eof = 0, drain_fd is None
    try:
        os.kill(p.pid, signal.SIGINT)
        sent = 1
    except ProcessLookupError:
        pass
    while True:
        if not eof:
            r, _, _ = select.select([drain_fd], [], [], 0.05)
            if r and not os.read(drain_fd, 65536):
                eof = True
        else:
            time.sleep(0.01)
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        now = time.monotonic()
        if now - t0 > grace:
            log(f"pid {p.pid} ({p.args[0]}) did not stop on SIGINT: SIGKILL")
            os.kill(p.pid, signal.SIGKILL)
            _, status, ru = os.wait4(p.pid, 0)
            break
        if every and now - last > every:
            os.kill(p.pid, signal.SIGINT)
            sent += 1
            last = now
    children.discard(p.pid)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, sent


def kill_children():
    for pid in list(children):
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        children.discard(pid)


# ---- a fresh machine: tracefs, the memlock limit ---------------------------

def tracefs_dir():
    """The first candidate directory holding a mounted tracefs (its events/)."""
    for d in TRACEFS_DIRS:
        if d and os.path.isdir(os.path.join(d, "events")):
            return d
    return None


def ensure_tracefs():
    """bpftrace's tracepoint: probes and perf kmem read tracefs: mount it
    where it is missing, and remember that we did (only that is unmounted)."""
    d = tracefs_dir()
    if d:
        return {"tracefs": d, "tracefs_mounted_by_bench": False}
    r = subprocess.run(["mount", "-t", "tracefs", "nodev", TRACEFS_MOUNT],
                       capture_output=True, text=True)
    if r.returncode != 0:
        err = (r.stderr or r.stdout).strip()
        log(f"tracefs: none mounted and mounting it at {TRACEFS_MOUNT} failed: {err}")
        return {"tracefs": None, "tracefs_mount_error": err}
    mounted.append(TRACEFS_MOUNT)
    atexit.register(unmount_tracefs)
    log(f"tracefs: none mounted; mounted it at {TRACEFS_MOUNT} (unmounted at exit)")
    return {"tracefs": TRACEFS_MOUNT, "tracefs_mounted_by_bench": True}


def tracefs_mounts():
    """Mount points of tracefs now (/proc/self/mounts)."""
    with open("/proc/self/mounts") as f:
        return {l.split()[1] for l in f if l.split()[2:3] == ["tracefs"]}


def note_new_tracefs(before):
    """perf mounts a tracefs itself where it finds none: name one that came
    up during the run (not ours, so not unmounted: another process may use it)."""
    new = tracefs_mounts() - before - set(mounted)
    if new:
        log(f"tracefs: mounted during the run, not by the bench (perf mounts one when it "
            f"finds none): {', '.join(sorted(new))}; left as it is")


def unmount_tracefs():
    """Unmount what ensure_tracefs() mounted; after kill_children(), so that
    no tracer of ours holds a file in it."""
    while mounted:
        d = mounted.pop()
        r = subprocess.run(["umount", d], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"bench: could not unmount the tracefs it mounted at {d}: "
                  f"{r.stderr.strip()}", file=sys.stderr)
        else:
            log(f"tracefs: unmounted {d}")


def raise_memlock():
    """RLIMIT_MEMLOCK for the tracers we start (they inherit it): bpftrace
    and older libbpf users size their maps against it. Unlimited where
    allowed; else the hard limit (raising that needs CAP_SYS_RESOURCE)."""
    inf = resource.RLIM_INFINITY
    try:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (inf, inf))
        return "unlimited"
    except (ValueError, OSError):
        _, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
        try:
            resource.setrlimit(resource.RLIMIT_MEMLOCK, (hard, hard))
        except (ValueError, OSError):
            pass
        lim = "unlimited" if hard == inf else f"{hard // 1024} KiB"
        log(f"RLIMIT_MEMLOCK: cannot be raised above its hard limit ({lim}: no "
            f"CAP_SYS_RESOURCE); tracers run with that")
        return f"{lim} (the hard limit; no CAP_SYS_RESOURCE to raise it)"


def on_signal(sig, _frame):
    raise KeyboardInterrupt(f"signal {sig}")


def read_line_until(fd, want, timeout):
    """Read from a pipe fd until a line equal to want; False on EOF/timeout."""
    buf = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            return False
        chunk = os.read(fd, 4096)
        if not chunk:
            return False
        buf += chunk
        lines = buf.split(b"\n")
        buf = lines[-1]
        if any(l.strip() == want for l in lines[:-1]):
            return True


# ---- the workload ---------------------------------------------------------

class Fill:
    """fill.c, started blocked on a pipe, moved into the cgroup, released later."""

    def __init__(self, cg, args):
        self.r, self.w = os.pipe()
        self.p = spawn([FILL, "--wait-fd", str(self.r)] + args,
                       pass_fds=(self.r,), stdout=subprocess.PIPE)
        os.close(self.r)
        with open(os.path.join(cg, "cgroup.procs"), "w") as f:
            f.write(str(self.p.pid))

    def run(self):
        b0 = busy_s()
        os.write(self.w, b"g")
        os.close(self.w)
        out = self.p.stdout.read()
        rc, _, _ = reap(self.p)
        b1 = busy_s()
        if rc != 0:
            raise RuntimeError(f"fill exited {rc}")
        r = json.loads(out)
        # CPU time the rest of the machine used meanwhile (tracers included)
        r["others_cpu_s"] = round(max(0.0, b1 - b0 - r["cpu_s"]), 3)
        return r


def busy_s():
    """Busy CPU seconds of the whole machine so far (/proc/stat, all CPUs)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / os.sysconf("SC_CLK_TCK")


def fill_once(cg, args):
    return Fill(cg, args).run()


# ---- tracers --------------------------------------------------------------

def last_lines(text, n=2, width=200):
    """The last n non-empty lines of a tracer's stderr, for a table cell."""
    lines = [l.strip() for l in (text or "").splitlines() if l.strip()]
    return " / ".join(lines[-n:])[-width:].replace("|", "/")


def maps_memlock(pid):
    """Sum of memlock: over the BPF map fds of pid (their fdinfo has map_type)."""
    total, n = 0, 0
    d = f"/proc/{pid}/fdinfo"
    for fd in os.listdir(d):
        try:
            with open(os.path.join(d, fd)) as f:
                txt = f.read()
        except OSError:
            continue
        if "map_type:" in txt:
            m = re.search(r"^memlock:\s+(\d+)", txt, re.M)
            if m:
                total += int(m.group(1))
                n += 1
    return total, n


TRACING_TYPES = {5, 17, 26}   # BPF_PROG_TYPE_TRACEPOINT, RAW_TRACEPOINT, TRACING


def prog_ids_of(pid):
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(os.path.join(d, fd)) as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def bpf_census(own_pid):
    """Tracing BPF programs loaded now: other sessions' (not own_pid's), and
    whether run-time stats are on (a program of own_pid's has run_time_ns)."""
    out = subprocess.run([BPFSTATS, "dump", "--all"], capture_output=True, text=True).stdout
    mine = prog_ids_of(own_pid) if own_pid else set()
    foreign, stats_on = [], False
    for line in out.splitlines():
        d = json.loads(line)
        if d["id"] in mine:
            stats_on |= d["run_time_ns"] > 0
        elif d["type"] in TRACING_TYPES:
            foreign.append(d["name"])
    return {"foreign_tracing_progs": len(foreign),
            "foreign_names": sorted(set(foreign))[:8],
            "stats_on": stats_on if mine else None}


def proc_status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def vm_hwm_kib(pid):
    return proc_status_kib(pid, "VmHWM")


class Tracer:
    def __init__(self, kind, cg, cgid, tag):
        self.kind, self.cg, self.cgid, self.tag = kind, cg, cgid, tag
        self.p = None
        self.info = {}

    def errfile(self):
        self.errpath = os.path.join(OUT, f"tmp-{self.kind}.err")
        self.err = open(self.errpath, "wb")
        return self.err

    def start(self):
        """Start the tracer and wait until it is attached; TracerUnavailable
        (with the reason) when it cannot be started or does not get ready."""
        k = self.kind or ""
        if not k or k == "control":
            return
        t0 = time.monotonic()
        try:
            ok, wait_s = self.spawn_tracer(k)
        except OSError as e:   # a missing binary, mostly
            self.close_fds()
            if getattr(self, "err", None):
                self.err.close()
                os.unlink(self.errpath)
            raise TracerUnavailable(f"cannot start {e.filename or k}: {e.strerror}") from e
        self.info["ready_ms"] = (time.monotonic() - t0) * 1000
        if not ok:
            self.stop()
            why = last_lines(self.stderr_text) or f"no ready within {wait_s} s"
            raise TracerUnavailable(f"did not become ready (exit {self.info['tracer_rc']}): {why}")

    def spawn_tracer(self, k):
        """Spawn tracer k; (ready?, how long we waited at most)."""
        if k.startswith("memprobe"):
            self.report = os.path.join(OUT, f"tmp-{k}.json")
            r, w = os.pipe()
            argv = [MEMPROBE, "record", "--cgroup", self.cg, "--format", "json",
                    "-o", self.report, "--ready-fd", str(w)]
            if k == "memprobe-nostack":
                argv[4:4] = ["--stack-sample", "0"]
            if k in ("memprobe-nostack", "memprobe-stacks") and MEMCG_FROM:
                argv[4:4] = ["--memcg-from", "tracepoint"]
            if k == "memprobe-faulttp":
                argv[4:4] = ["--fault-tracepoint", "--stack-sample", "0"]
            if k == "memprobe-counters":
                argv[4:4] = ["--memcg-from", "counters"]
            if k == "memprobe-counters-nostack":
                argv[4:4] = ["--memcg-from", "counters", "--stack-sample", "0"]
            self.fds = [r, w]
            self.p = spawn(argv, pass_fds=(w,), stderr=self.errfile())
            self.close_fds([w])
            ok = read_line_until(r, b"ready", 30)
            self.close_fds()
            return ok, 30
        if k == "empty-progs":
            r, w = os.pipe()
            self.fds = [r, w]
            self.p = spawn([BPFSTATS, "attach", "--ready-fd", str(w), EMPTY_OBJ],
                           pass_fds=(w,), stderr=self.errfile())
            self.close_fds([w])
            ok = read_line_until(r, b"ready", 30)
            self.close_fds()
            return ok, 30
        if k == "bpftrace":
            self.p = spawn(["bpftrace", "-e", bpftrace_script(self.cgid)],
                           stdout=subprocess.PIPE, stderr=self.errfile())
            return read_line_until(self.p.stdout.fileno(), b"ready", 60), 60
        if k == "perf-kmem":
            self.data = os.path.join(OUT, "tmp-perf-kmem.data")
            cr, cw = os.pipe()
            ar, aw = os.pipe()
            self.fds = [cr, cw, ar, aw]
            self.p = spawn(["perf", "kmem", "--page", "record", "-o", self.data,
                            "--control", f"fd:{cr},{aw}", "-D", "-1"],
                           pass_fds=(cr, aw), stdout=subprocess.DEVNULL,
                           stderr=self.errfile())
            self.close_fds([cr, aw])
            try:
                os.write(cw, b"enable\n")
            except BrokenPipeError:
                pass   # perf exited already: its stderr says why
            ok = read_line_until(ar, b"ack", 30)
            # keep the control pipe open until perf has stopped: it reads EOF
            # as a reason to stop
            self.ctl_fds = (cw, ar)
            self.fds = []
            return ok, 30
        raise ValueError(f"unknown tracer {k}")

    def close_fds(self, which=None):
        for fd in list(getattr(self, "fds", [])):
            if which is None or fd in which:
                os.close(fd)
                self.fds.remove(fd)

    def exited(self):
        """The tracer has exited already (not reaped: stop() reaps it)."""
        try:
            return os.waitid(os.P_PID, self.p.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        except ChildProcessError:
            return True

    def stop(self):
        if not self.p:
            return
        if self.kind.startswith("memprobe"):
            self.info["vmhwm_kib"] = vm_hwm_kib(self.p.pid)
            self.info["rss_anon_kib"] = proc_status_kib(self.p.pid, "RssAnon")
            self.info["rss_file_kib"] = proc_status_kib(self.p.pid, "RssFile")
            self.info["maps_memlock_bytes"], self.info["maps"] = maps_memlock(self.p.pid)
        # bpftrace prints its maps at exit: drain them
        bt = self.kind == "bpftrace"
        rc, cpu, maxrss, sent = interrupt(self.p, self.p.stdout.fileno() if bt else None,
                                          every=3.0 if bt else None)
        if sent > 1:
            self.info["sigint_sent"] = sent
        for fd in getattr(self, "ctl_fds", ()):
            os.close(fd)
        self.ctl_fds = ()
        self.err.close()
        with open(self.errpath, "rb") as f:
            err = f.read()
        os.unlink(self.errpath)
        self.stderr_text = err.decode(errors="replace")
        # (ru_maxrss is not kept: after fork+exec it still holds this Python
        # process's RSS, which the kernel carries over into the child's maxrss)
        self.info.update(tracer_rc=rc, tracer_cpu_s=round(cpu, 4))
        if self.kind.startswith("memprobe"):
            try:
                with open(self.report) as f:
                    rep = json.load(f)
                lost = rep.get("attribution", {}).get("events_lost", {})
                self.info["events_lost"] = lost.get("total")
                self.info["events_lost_detail"] = {k: v for k, v in lost.items()
                                                   if k != "recursion_misses_by_program" and v}
                self.info["events_lost_detail"].update(
                    {f"recursion_misses:{k}": v for k, v in
                     (lost.get("recursion_misses_by_program") or {}).items() if v})
                ev = rep.get("attribution", {}).get("events", {})
                self.info["events"] = ev
                self.info["faults_counted"] = rep.get("attribution", {}).get(
                    "page_faults", {}).get("total")
            except (OSError, ValueError) as e:
                self.info["report_error"] = str(e)
        if self.kind == "perf-kmem":
            txt = err.decode(errors="replace")
            m = re.search(r"Captured and wrote ([\d.]+) MB .*?\((\d+) samples\)", txt)
            if m:
                self.info["perf_mb"] = float(m.group(1))
                self.info["perf_samples"] = int(m.group(2))
            m = re.search(r"lost (\d+) chunks", txt)
            self.info["perf_lost_chunks"] = int(m.group(1)) if m else 0
            m = re.search(r"lost ([\d.]+)%", txt)
            self.info["perf_lost_pct"] = float(m.group(1)) if m else 0.0
            if self.tag == "preflight" and os.path.exists(self.data):
                ev = subprocess.run(["perf", "evlist", "-i", self.data],
                                    capture_output=True, text=True).stdout
                self.info["perf_events"] = [e.strip() for e in ev.splitlines()
                                            if ":" in e and not e.startswith(("#", "dummy"))]
            try:
                os.unlink(self.data)
            except OSError:
                pass
        if rc not in (0, 130, -2) and self.kind != "perf-kmem":
            self.info["stderr_tail"] = err.decode(errors="replace")[-300:]
        self.p = None


_btf_raw = None


def btf_raw():
    global _btf_raw
    if _btf_raw is None:
        _btf_raw = subprocess.run(["bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux",
                                   "format", "raw"], capture_output=True, text=True,
                                  check=True).stdout
    return _btf_raw


def btf_member_offset(struct, member):
    """Byte offset of struct.member in the kernel's BTF (bpftool raw dump)."""
    out = btf_raw()
    m = re.search(r"^\[\d+\] STRUCT '%s' size=\d+ vlen=\d+\n((?:\t.*\n)*)" % struct, out, re.M)
    if not m:
        return None
    for line in m.group(1).splitlines():
        mm = re.match(r"\t'%s' type_id=\d+ bits_offset=(\d+)" % member, line)
        if mm:
            return int(mm.group(1)) // 8
    return None


def btf_enum_value(name):
    out = btf_raw()
    m = re.search(r"^\t'%s' val=(\d+)" % name, out, re.M)
    return int(m.group(1)) if m else None


BPFTRACE_KN_ID_OFF = None
BPFTRACE_MEMCG_ID = None


def bpftrace_script(cgid):
    # bpftrace 0.17 cannot name kernfs_node.id (it follows an anonymous
    # union in 6.18's BTF), so the id is read at its BTF offset.
    memcg = (f"*(uint64*)((uint8*)curtask->cgroups->subsys[{BPFTRACE_MEMCG_ID}]"
             f"->cgroup->kn + {BPFTRACE_KN_ID_OFF}) == {cgid}")
    return f"""
tracepoint:exceptions:page_fault_user / {memcg} / {{ @faults[pid] = count(); }}
tracepoint:kmem:mm_page_alloc / {memcg} / {{ @alloc_by_order[args->order] = count(); }}
tracepoint:memcg:mod_memcg_lruvec_state / args->id == {cgid} / {{ @lruvec_item[args->item] = sum(args->val); }}
tracepoint:memcg:mod_memcg_state / args->id == {cgid} / {{ @memcg_item[args->item] = sum(args->val); }}
BEGIN {{ printf("ready\\n"); }}
"""


# ---- phases ---------------------------------------------------------------

def machine_info():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""
    model = sh("lscpu | sed -n 's/^Model name:[ \\t]*//p' | head -1")
    info = {
        "cpu_model": model,
        "cpus": os.cpu_count(),
        "mem_total_gib": round(int(sh("awk '/MemTotal/ {print $2}' /proc/meminfo") or 0) / 2**20, 1),
        "kernel": platform.release(),
        "kernel_version": sh("uname -v"),
        "os": sh(". /etc/os-release; echo $PRETTY_NAME"),
        "hypervisor": sh("lscpu | sed -n 's/^Hypervisor vendor:[ \\t]*//p'") or
                      ("yes (cpu flag)" if "hypervisor" in sh("grep -m1 flags /proc/cpuinfo") else "none"),
        "thp_enabled": sh("cat /sys/kernel/mm/transparent_hugepage/enabled"),
        "thp_defrag": sh("cat /sys/kernel/mm/transparent_hugepage/defrag"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "memprobe": MEMPROBE,
        "git": sh(f"git -C {ROOT} describe --always --dirty 2>/dev/null"),
        "bpftrace": sh("bpftrace --version"),
        "perf": sh("perf --version"),
        "cmdline_page_reporting": "page_reporting" in sh("cat /proc/cmdline"),
        "pvm_guest": "pvm" in sh("cat /proc/cmdline"),
    }
    return info


def phase_matrix(cg):
    # Each variant: one untimed run, then its timed runs back to back, so that
    # every timed run finds the memory the same variant just freed (on this
    # VM, memory the host has taken back costs far more to touch again).
    log(f"fill matrix: 8 variants x (1 warm-up + {MATRIX_REPS}), {MATRIX_SIZE} each")
    variants = [(pg, th, tc) for pg in ("4k", "thp") for th in (1, 2)
                for tc in ("memset", "populate")]
    res = {v: [] for v in variants}
    for pg, th, tc in variants:
        args = ["--size", MATRIX_SIZE, "--page", pg, "--threads", str(th), "--touch", tc]
        emit("fill_warmup", **fill_once(cg, args))
        for rep in range(MATRIX_REPS):
            r = fill_once(cg, args)
            emit("fill", rep=rep, **r)
            res[(pg, th, tc)].append(r)
    out = []
    for (pg, th, tc), rs in res.items():
        s = {"page": pg, "threads": th, "touch": tc,
             "cpu_s": median([r["cpu_s"] for r in rs]),
             "minflt": median([r["minflt"] for r in rs]),
             "wall_s": median([r["wall_s"] for r in rs]),
             "gib_per_s": median([r["gib_per_s"] for r in rs]),
             "gib_per_s_min": min(r["gib_per_s"] for r in rs),
             "gib_per_s_max": max(r["gib_per_s"] for r in rs)}
        out.append(emit("fill_summary", **s))
    return out


def one_run(kind, cg, cgid, rnd, pos):
    f = Fill(cg, ["--size", SIZE, "--page", "4k", "--threads", "1", "--touch", "memset"])
    t = Tracer(kind, cg, cgid, f"r{rnd}p{pos}")
    try:
        t.start()
        r = f.run()
        census = bpf_census(t.p.pid if t.p else None)
    finally:
        if f.p.pid in children:
            os.kill(f.p.pid, signal.SIGKILL)
            reap(f.p)
        t.stop()
    return emit("run", round=rnd, pos=pos, tracer=kind if kind else "none",
                cpu_s=r["cpu_s"], minflt=r["minflt"], wall_s=r["wall_s"],
                gib_per_s=r["gib_per_s"], others_cpu_s=r["others_cpu_s"], **census, **t.info)


def phase_preflight(cg, cgid):
    """Start and stop each tracer once, with no workload: a tracer that
    cannot run here is left out of the phases and named in the table with
    the reason, instead of stopping the bench. memprobe's own modes are
    required (no figure without them)."""
    log("tracers: one start each, to find those that cannot run here")
    unavailable, info = {}, {}
    for k in TRACERS:
        if k == "control":
            continue
        t = Tracer(k, cg, cgid, "preflight")
        try:
            t.start()
            time.sleep(0.2)
            died = t.exited()
            t.stop()
            if died:
                raise TracerUnavailable(f"exited at once (exit {t.info.get('tracer_rc')}): "
                                        f"{last_lines(t.stderr_text)}")
        except TracerUnavailable as e:
            if k in REQUIRED:
                raise RuntimeError(f"{TRACER_DESC[k]}: {e}") from e
            unavailable[k] = str(e)
            log(f"{k}: unavailable: {e}")
        info[k] = emit("preflight", tracer=k, unavailable=unavailable.get(k), **t.info)
    return unavailable, info


def tracer_extras(k, runs):
    """A tracer's summary figures beyond its ratios, from its runs."""
    extra = {}
    if runs and "tracer_cpu_s" in runs[0]:
        extra["tracer_cpu_s_median"] = median([r["tracer_cpu_s"] for r in runs])
    if k.startswith("memprobe"):
        extra["events_lost"] = [r.get("events_lost") for r in runs]
        extra["events_lost_max"] = max((r.get("events_lost") or 0) for r in runs)
        extra["events_lost_detail_all"] = [r.get("events_lost_detail") or {} for r in runs]
        extra["vmhwm_kib_max"] = max(r.get("vmhwm_kib") or 0 for r in runs)
        top = max(runs, key=lambda r: r.get("vmhwm_kib") or 0)
        extra["rss_anon_kib_at_max"] = top.get("rss_anon_kib")
        extra["rss_file_kib_at_max"] = top.get("rss_file_kib")
        extra["maps_memlock_bytes_max"] = max(r.get("maps_memlock_bytes") or 0 for r in runs)
        extra["ready_ms_median"] = median([r["ready_ms"] for r in runs])
    if k == "perf-kmem":
        extra["perf_lost_chunks_max"] = max(r.get("perf_lost_chunks", 0) for r in runs)
        extra["perf_lost_pct_max"] = max(r.get("perf_lost_pct", 0.0) for r in runs)
        extra["perf_mb_median"] = median([r.get("perf_mb", 0) for r in runs])
        # every sample is one firing of a tracepoint perf enabled (system-wide,
        # while it ran: the workload and whatever else ran meanwhile)
        pages = parse_size(SIZE) // 4096
        extra["firings_per_page_median"] = median([r["perf_samples"] / pages for r in runs
                                                   if r.get("perf_samples")])
    if k == "bpftrace":
        extra["ready_ms_median"] = median([r["ready_ms"] for r in runs])
        extra["runs_needing_second_sigint"] = sum(1 for r in runs if r.get("sigint_sent", 1) > 1)
    return extra


def phase_rounds(cg, cgid, reserve_s, unavailable):
    active = [k for k in TRACERS if k not in unavailable]
    log(f"tracer rounds: {MIN_ROUNDS} to {MAX_ROUNDS} rounds (as the time budget allows, "
        f"{reserve_s:.0f} s kept for the probe) of {len(active)} tracers, each between "
        f"no-tracer runs, {SIZE} 4 KiB memset workload")
    t_rounds = time.monotonic()
    ratios = {k: [] for k in TRACERS}
    base_cpu = []
    per_tracer_runs = {k: [] for k in TRACERS}
    noisy_rounds = []
    round_load, round_foreign, round_ratios, all_runs = [], [], [], []
    for rnd in range(MAX_ROUNDS):
        order = active if rnd % 2 == 0 else list(reversed(active))
        seq = [None]
        for k in order:
            seq += [k, None]
        runs = []
        for pos, k in enumerate(seq):
            try:
                runs.append(one_run(k, cg, cgid, rnd, pos))
            except TracerUnavailable as e:
                if k in REQUIRED:
                    raise RuntimeError(f"{TRACER_DESC[k]}: {e}") from e
                # its slot stays empty; the later rounds go on without it
                unavailable[k] = f"failed in round {rnd + 1}: {e}"
                log(f"{k}: {unavailable[k]}")
                runs.append(None)
        active = [k for k in active if k not in unavailable]
        for i in range(1, len(seq), 2):
            k = seq[i]
            if runs[i] is None:
                continue
            nb = (runs[i - 1]["cpu_s"] + runs[i + 1]["cpu_s"]) / 2
            ratio = runs[i]["cpu_s"] / nb
            ratios[k].append(ratio)
            per_tracer_runs[k].append(runs[i])
            emit("ratio", round=rnd, tracer=k, ratio=ratio, cpu_s=runs[i]["cpu_s"],
                 neighbours_cpu_s=[runs[i - 1]["cpu_s"], runs[i + 1]["cpu_s"]])
            if k == "control" and abs(ratio - 1) > NOISE:
                noisy_rounds.append(rnd)
        base_cpu += [runs[i]["cpu_s"] for i in range(0, len(seq), 2)]
        runs = [r for r in runs if r is not None]
        load = max(r["others_cpu_s"] / r["wall_s"] for r in runs
                   if r["tracer"] in ("none", "control"))
        foreign = max(r.get("foreign_tracing_progs") or 0 for r in runs)
        round_load.append(load)
        round_foreign.append(foreign)
        all_runs.extend(runs)
        round_ratios.append({k: ratios[k][-1] for k in order if k not in unavailable})
        emit("round", round=rnd, order=order, others_load_max=load, foreign_bpf_max=foreign,
             aa_ratio=ratios["control"][-1])
        ctl = ratios["control"][-1]
        log(f"round {rnd + 1} ({'fwd' if rnd % 2 == 0 else 'rev'}): " +
            ", ".join(f"{k} {v:.3f}" for k, v in round_ratios[-1].items()) +
            (f"  NOISY (A/A {ctl:.3f})" if rnd in noisy_rounds else ""))
        per_round = (time.monotonic() - t_rounds) / (rnd + 1)
        if rnd + 1 >= MIN_ROUNDS and elapsed() + per_round + reserve_s > BUDGET_S:
            break
    rounds_done = rnd + 1
    out = {}
    for k in TRACERS:
        s = stats(ratios[k])
        runs = per_tracer_runs[k]
        extra = tracer_extras(k, runs) if runs else {}
        if k in unavailable:
            extra["unavailable"] = unavailable[k]
        out[k] = emit("tracer_summary", tracer=k, ratio=s,
                      cpu_s_median=median([r["cpu_s"] for r in runs]), **extra)
    aa = out["control"]["ratio"]
    noisy = aa["q1"] < 1 - NOISE or aa["q3"] > 1 + NOISE
    out["none"] = emit("tracer_summary", tracer="none", cpu_s=stats(base_cpu))
    quiet = [i for i, l in enumerate(round_load) if l < QUIET_LOAD and not round_foreign[i]]
    out["_shared"] = emit("shared_machine", runs=len(all_runs),
                          runs_with_foreign_bpf=sum(1 for r in all_runs
                                                    if r.get("foreign_tracing_progs")),
                          foreign_names=sorted({n for r in all_runs
                                                for n in r.get("foreign_names") or []})[:12],
                          tracer_runs_with_stats_on=sum(1 for r in all_runs if r.get("stats_on")),
                          tracer_runs_checked=sum(1 for r in all_runs
                                                  if r.get("stats_on") is not None))
    out["_quiet"] = emit("quiet_rounds", rounds=quiet, threshold_cpus=QUIET_LOAD,
                         ratio={k: stats([round_ratios[i][k] for i in quiet
                                          if k in round_ratios[i]])
                                for k in TRACERS} if quiet else None,
                         load_median=median(round_load))
    out["_noise"] = emit("noise", aa_ratio=aa, noisy=noisy, noisy_rounds=noisy_rounds,
                         rounds=rounds_done,
                         rule="noisy when the A/A control's IQR leaves 1±5%; "
                              "a round is noisy when its A/A ratio leaves 1±5%")
    return out


def phase_attach(cg):
    log(f"exec to attached: {ATTACH_STARTS} starts of memprobe record --ready-fd")
    ms, hwm = [], []
    for i in range(ATTACH_STARTS):
        t = Tracer("memprobe-stacks", cg, None, f"a{i}")
        t.start()
        ms.append(t.info["ready_ms"])
        t.stop()
        hwm.append(t.info.get("vmhwm_kib") or 0)
        emit("attach", i=i, ready_ms=t.info["ready_ms"], vmhwm_kib=t.info.get("vmhwm_kib"),
             maps_memlock_bytes=t.info.get("maps_memlock_bytes"))
    return emit("attach_summary", n=len(ms), p50_ms=pct(ms, 50), p95_ms=pct(ms, 95),
                min_ms=min(ms), max_ms=max(ms), vmhwm_kib_at_ready_median=median(hwm))


PROFILE_GROUPS = [
    ("BPF verifier (bpf_check)", "bpf_check"),
    ("reading /sys/kernel/btf/vmlinux and other kernfs files", "kernfs_fop_read_iter"),
    ("page faults", "asm_exc_page_fault"),
    ("BPF map creation", "map_create"),
    ("attaching (bpf_raw_tp_link_attach)", "bpf_raw_tp_link_attach"),
    ("execve", "__x64_sys_execve"),
]


def phase_attach_profile(cg):
    """One start of memprobe record under perf (cpu-clock), cut at `ready`."""
    log("exec to attached: one start under perf record -e cpu-clock")
    data = os.path.join(OUT, "tmp-attach.data")
    r, w = os.pipe()
    try:
        p = spawn(["perf", "record", "-q", "-e", "cpu-clock", "-F", "20000", "-g", "-o", data,
                   "--", MEMPROBE, "record", "--cgroup", cg, "--format", "json",
                   "-o", os.path.join(OUT, "tmp-attach.json"), "--ready-fd", str(w)],
                  pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except OSError as e:   # no perf: no profile, the rest goes on
        os.close(r)
        os.close(w)
        log(f"exec to attached: no profile ({e})")
        return None
    os.close(w)
    ok = read_line_until(r, b"ready", 30)
    os.close(r)
    # memprobe is perf's child: kill it at once, so that only its start is profiled
    try:
        with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    for k in kids:
        os.kill(k, signal.SIGKILL)
    reap(p, timeout=60)
    if not ok or not kids:
        return None
    rep = subprocess.run(["perf", "report", "-i", data, "--children", "--sort", "sym",
                          "-g", "none", "--stdio"], capture_output=True, text=True).stdout
    os.unlink(data)
    children_pct, self_pct = {}, []
    for line in rep.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+([\d.]+)%\s+\[(.)\]\s+(\S+)", line)
        if not m:
            continue
        tot, slf, where, sym = float(m.group(1)), float(m.group(2)), m.group(3), m.group(4)
        children_pct.setdefault(sym, tot)
        if not sym.startswith("0x") and not re.fullmatch(r"0+", sym):
            self_pct.append((slf, f"[{where}] {sym}"))
    groups = [(label, children_pct.get(sym)) for label, sym in PROFILE_GROUPS]
    top_self = sorted(self_pct, reverse=True)[:10]
    return emit("attach_profile", groups=groups, top_self=top_self)


def run_counts(pid):
    """Program id -> its bpfstats dump line, for the programs pid holds."""
    out = subprocess.run([BPFSTATS, "dump", "--pid", str(pid), "--all"],
                         capture_output=True, text=True, check=True).stdout
    return {d["id"]: d for d in map(json.loads, out.splitlines())}


def firing_windows(pid, empties_pid, fills):
    """run_cnt of pid's and the empty programs' (empties_pid's) over `fills`
    fills: the workload's firings plus the rest of the machine's (an upper
    bound; phase_firings counts the workload's alone). Returns (pid's
    programs, the empty programs, the fills), each program's line with
    fill_runs and fill_s."""
    def snap():
        return run_counts(pid), run_counts(empties_pid), time.monotonic()
    m0, e0, t0 = snap()
    done = [fill_once(CG_FOR_STATS, ["--size", SIZE, "--page", "4k", "--threads", "1",
                                     "--touch", "memset"]) for _ in range(fills)]
    m1, e1, t1 = snap()

    def windows(a, b):
        out = []
        for i, d in b.items():
            d = dict(d)
            d["fill_runs"] = d["run_cnt"] - a.get(i, d)["run_cnt"]
            d["fill_ns"] = d["run_time_ns"] - a.get(i, d)["run_time_ns"]
            d["fill_s"] = t1 - t0
            out.append(d)
        return out
    return windows(m0, m1), windows(e0, e1), done


CG_FOR_STATS = None


def stats_pass(cg, outpath, modes):
    """Run under bpfstats (stats on, the empty programs attached): each
    memprobe mode's programs' ns/run and, with the empty programs', their
    firings during the workload."""
    global CG_FOR_STATS
    CG_FOR_STATS = cg
    lines = []
    for mode in modes:
        t = Tracer(mode, cg, None, "stats")
        t.start()
        progs, empties, fills = firing_windows(t.p.pid, os.getppid(), 2)
        t.stop()
        for d in progs:
            d["mode"] = mode
            lines.append(d)
        for d in empties:
            lines.append({**d, "kind": "empty_window", "mode": mode})
        lines.append({"kind": "stats_fill", "mode": mode, "fills": fills, **t.info})
    with open(outpath, "w") as f:
        for d in lines:
            f.write(json.dumps(d) + "\n")


def tracepoint_of(name):
    """The tracepoint a program's name says it is on: memprobe's tp_X and
    raw_tp_X, the empty programs' empty_X; None for other names."""
    for pre in ("raw_tp_", "tp_btf_", "tp_", "empty_"):
        if name.startswith(pre):
            return name[len(pre):]
    return None


def firings_per_page(d, pages):
    """A program's runs during the fills per workload page (an upper bound:
    the rest of the machine's events are in it)."""
    return d["fill_runs"] / pages


def read_stats_pass(inner, empties):
    """The stats pass's lines: per mode its programs (with ns/run against the
    empty program on the same tracepoint, and firings per page), its fills,
    and per tracepoint the empty programs' firings per page."""
    progs, fills, windows = {}, {}, []
    with open(inner) as f:
        for l in f:
            d = json.loads(l)
            kind = d.pop("kind", None)
            if kind == "stats_fill":
                fills[d["mode"]] = d
                emit("bpfstats_fill", **d)
            elif kind == "empty_window":
                windows.append(d)
            else:
                progs.setdefault(d["mode"], []).append(d)
    pages = {m: len(x["fills"]) * (parse_size(SIZE) // 4096) for m, x in fills.items()}
    for mode, ps in progs.items():
        for d in ps:
            e = empties.get(f"empty_{tracepoint_of(d['name'])}")
            d["tracepoint"] = tracepoint_of(d["name"])
            d["empty_ns_per_run"] = e["ns_per_run"] if e else None
            d["net_ns_per_run"] = d["ns_per_run"] - e["ns_per_run"] if e else None
            d["firings_per_page"] = firings_per_page(d, pages[mode])
            emit("bpfstats_prog", **d)
    tp = {}
    for w in windows:
        n = firings_per_page(w, 1)
        t = tp.setdefault(tracepoint_of(w["name"]), [0.0, 0])
        t[0] += n
        t[1] += pages[w["mode"]]
    tp_firings = {k: v[0] / v[1] for k, v in tp.items() if v[1]}
    emit("tracepoint_firings_per_page", **tp_firings)
    return progs, fills, tp_firings


def phase_firings(cg, tracepoints):
    """Each tracepoint's firings per 4 KiB page in the workload's own context:
    `perf stat -e CAT:TP,...` (per task, so other cgroups' events, which the
    BPF run counts include, are not counted) over one fill, started in the
    cgroup. Returns {tracepoint: firings per page}, or None with the reason
    when perf or tracefs is missing (then the run counts are used)."""
    tdir = tracefs_dir()
    if not tdir:
        return None, "no tracefs"
    events = {}
    for tp in sorted(set(t for t in tracepoints if t)):
        for cat in sorted(os.listdir(os.path.join(tdir, "events"))):
            if os.path.isdir(os.path.join(tdir, "events", cat, tp)):
                events[f"{cat}:{tp}"] = tp
                break
    if not events:
        return None, "none of the tracepoints is in tracefs"
    log(f"firings per page: perf stat -e {','.join(events)} on one fill")
    out = os.path.join(OUT, "tmp-perfstat.csv")
    # the user pages among the allocations (MIGRATE_MOVABLE is 1 in every
    # kernel's enum migratetype): the rest of mm_page_alloc's firings are
    # for other pages the fill needs (page tables) and its other allocations
    user = [a for a, t in events.items() if t == "mm_page_alloc"][:1]
    extra = ["-e", user[0], "--filter", "migratetype == 1"] if user else []
    procs = os.path.join(cg, "cgroup.procs")

    def into_cgroup():   # in perf's child before exec: fill.c is its child
        with open(procs, "w") as f:
            f.write("0")
    r, w = os.pipe()
    try:
        p = spawn(["perf", "stat", "-x,", "-o", out, "-e", ",".join(events)] + extra +
                  ["--", FILL, "--wait-fd", str(r), "--size", SIZE, "--page", "4k",
                   "--threads", "1", "--touch", "memset"], pass_fds=(r,), stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, preexec_fn=into_cgroup)
    except (OSError, subprocess.SubprocessError) as e:
        os.close(r)
        os.close(w)
        return None, f"perf stat: {e}"
    os.close(r)
    os.write(w, b"g")
    os.close(w)
    p.stdout.read()
    err = p.stderr.read().decode(errors="replace")
    rc, _, _ = reap(p)
    pages = parse_size(SIZE) // 4096
    got = {}
    if rc == 0 and os.path.exists(out):
        with open(out) as f:
            for line in f:
                v = line.strip().split(",")
                if len(v) > 2 and v[2] in events and v[0].isdigit():
                    # the filtered count comes last, under the same name
                    key = events[v[2]]
                    got[key + ":user" if key in got and extra else key] = int(v[0]) / pages
    if os.path.exists(out):
        os.unlink(out)
    if not got:
        return None, f"perf stat exited {rc}: {last_lines(err)}"
    emit("task_firings_per_page", method="perf stat per task", **got)
    return got, None


def perf_kmem_events(pre):
    """The tracepoints perf kmem --page record enables (from its preflight's
    perf.data; its usual two when that was not read)."""
    ev = (pre.get("perf-kmem") or {}).get("perf_events")
    return ev or ["kmem:mm_page_alloc", "kmem:mm_page_free"]


def phase_firings_of(cg, bpf, pre):
    """Firings per page of every tracepoint some tracer hooks: per task
    (phase_firings) where perf can count them, else the stats pass's run
    counts less the idle rate. {"per_tp": {...}, "method": text}."""
    progs, empties, _, runcnt = bpf
    tps = {p["tracepoint"] for ps in progs.values() for p in ps}
    tps |= {tracepoint_of(n) for n in empties} | set(bpftrace_tracepoints())
    tps |= {e.split(":", 1)[1] for e in perf_kmem_events(pre)}
    task, why = phase_firings(cg, tps)
    if task:
        return {"per_tp": task, "method": "perf stat per task, one fill", "task": True}
    log(f"firings per page: {why}; the stats pass's run counts are used")
    return {"per_tp": runcnt, "task": False,
            "method": f"the stats pass's run counts during the fills, an upper bound with the "
                      f"rest of the machine's events in it (no per-task count: {why})"}


def phase_bpfstats(cg, modes):
    log("BPF run-time stats pass (bpfstats: BPF_ENABLE_STATS held for this pass only)")
    inner = os.path.join(OUT, "tmp-stats-inner.jsonl")
    empty = os.path.join(OUT, "tmp-stats-empty.jsonl")
    p = spawn([BPFSTATS, "run", "--empty", EMPTY_OBJ, "--out", empty, "--",
               sys.executable, os.path.abspath(__file__), "--stats-pass", cg, inner,
               ",".join(modes)])
    rc, _, _ = reap(p)
    if rc != 0:
        raise RuntimeError(f"stats pass exited {rc}")
    empties = {}
    with open(empty) as f:
        for l in f:
            d = json.loads(l)
            d.pop("kind", None)
            empties[d["name"]] = d
            emit("bpfstats_empty", **d)
    progs, fills, tp_firings = read_stats_pass(inner, empties)
    summ = {}
    for mode, ps in progs.items():
        hot = [p for p in ps if p["run_cnt"] and p["net_ns_per_run"] is not None]
        runs = sum(p["run_cnt"] for p in hot)
        net = sum(p["net_ns_per_run"] * p["run_cnt"] for p in hot)
        tot = sum(p["run_time_ns"] for p in ps)
        cpu = sum(x["cpu_s"] for x in fills[mode]["fills"])
        pages = len(fills[mode]["fills"]) * (parse_size(SIZE) // 4096)
        worst = max(hot, key=lambda p: p["net_ns_per_run"]) if hot else None
        # memprobe's own reading of the same stats (its document's
        # attribution.events.program_runs, over its whole recording)
        own = (fills[mode].get("events") or {}).get("program_runs")
        summ[mode] = emit("bpfstats_summary", mode=mode, runs=runs,
                          weighted_net_ns_per_event=net / runs if runs else None,
                          worst_program=worst["name"] if worst else None,
                          worst_net_ns_per_run=worst["net_ns_per_run"] if worst else None,
                          bpf_time_s=tot / 1e9, workload_cpu_s=cpu,
                          bpf_share_of_workload_cpu=tot / 1e9 / cpu if cpu else None,
                          firings_per_page=sum(p["firings_per_page"] for p in ps),
                          program_ns_per_page=sum(p["fill_ns"] for p in ps) / pages,
                          doc_program_runs_per_page=sum(own.values()) / pages if own else None,
                          events_lost=fills[mode].get("events_lost"))
    for f_ in (inner, empty):
        os.unlink(f_)
    return progs, empties, summ, tp_firings


def probe_help_flags():
    h = subprocess.run([MEMPROBE, "probe", "--help"], capture_output=True, text=True)
    txt = h.stdout + h.stderr
    r = subprocess.run([MEMPROBE, "record", "--help"], capture_output=True, text=True)
    return {"threads": "--threads" in txt, "populate": "--populate" in txt,
            "probe_memcg_from": "--memcg-from" in txt,
            "fault_tracepoint": "--fault-tracepoint" in r.stdout + r.stderr,
            "memcg_from": "--memcg-from" in r.stdout + r.stderr}


def choose_tracers(flags):
    """The tracers of this run: BENCH_TRACERS's choice (all by default) and
    the required ones; memprobe-faulttp and memprobe-counters(-nostack)
    only where record has the option."""
    want = os.environ.get("BENCH_TRACERS")
    chosen = set(ALL_TRACERS) if not want else {w.strip() for w in want.split(",") if w.strip()}
    bad = chosen - set(ALL_TRACERS)
    if bad:
        sys.exit(f"bench: BENCH_TRACERS: unknown {', '.join(sorted(bad))} "
                 f"(known: {', '.join(ALL_TRACERS)})")
    if not flags["fault_tracepoint"]:
        chosen.discard("memprobe-faulttp")
    if not flags["memcg_from"]:
        chosen -= {"memprobe-counters", "memprobe-counters-nostack"}
    global MEMCG_FROM
    MEMCG_FROM = flags["memcg_from"]
    return [k for k in ALL_TRACERS if k in chosen or k in REQUIRED]


def run_probe(extra):
    argv = [MEMPROBE, "probe", "--limit", PROBE_LIMIT, "--thp", "never", "--format", "json"] + extra
    t0 = time.monotonic()
    errpath = os.path.join(OUT, "tmp-probe.err")
    with open(errpath, "wb") as ef:
        p = spawn(argv, stdout=subprocess.PIPE, stderr=ef)
        out = p.stdout.read()
        rc, cpu, maxrss = reap(p)
    wall = time.monotonic() - t0
    with open(errpath, "rb") as ef:
        err = ef.read()
    os.unlink(errpath)
    if rc != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {rc}: {err.decode()[-300:]}")
    d = json.loads(out)
    pr = d.get("probe", {})
    fill_ns = pr.get("fill_ns")
    alloc = d["allocated_bytes"]
    rate = alloc / 2**30 / (fill_ns / 1e9) if fill_ns else alloc / 2**30 / wall
    lost = d.get("attribution", {}).get("events_lost", {})
    growth = (d.get("attribution", {}).get("reconciliation") or {}).get("measured_growth_bytes")
    return emit("probe", args=extra, allocated_bytes=alloc, wall_s=wall,
                miss_bound_bytes=lost.get("recursion_miss_bound_bytes"),
                growth_bytes=growth,
                events_lost_detail={k: v for k, v in
                                    (lost.get("recursion_misses_by_program") or {}).items() if v},
                fill_ns=fill_ns, timed="fill_ns" if fill_ns else "command wall time",
                gib_per_s=rate, chunk_bytes=pr.get("chunk_bytes"),
                threads=pr.get("threads", 1), touch=pr.get("touch", "memset"),
                cpu_s=cpu,
                events_lost=d.get("attribution", {}).get("events_lost", {}).get("total"))


def parse_size(s):
    m = re.fullmatch(r"([\d.]+)\s*([KMGT]?)(?:i?B)?", s.strip(), re.I)
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def rep_estimate_s(matrix, flags):
    """One repetition of the probe phase, from the fill matrix's rates."""
    rate = {(m["threads"], m["touch"]): m["gib_per_s"] for m in matrix if m["page"] == "4k"}
    gib = 0.95 * parse_size(PROBE_LIMIT) / 2**30   # what the probe fills
    t = 2 * gib / rate[(1, "memset")] + 3
    if flags["threads"]:
        t += 2 * gib / rate[(2, "memset")] + 3
    if flags["populate"]:
        t += 2 * gib / rate[(1, "populate")] + 3
    if flags["probe_memcg_from"]:
        t += 2 * gib / rate[(1, "memset")] + 3
        if flags["threads"]:
            t += 2 * gib / rate[(2, "memset")] + 3
    return t


# the probe phase's variants: name, probe's options, fill.c's, and the
# variant a speed-up is measured against
PROBE_VARIANTS = (
    ("memset", [], ["--threads", "1", "--touch", "memset"], None),
    ("threads2", ["--threads", "2"], ["--threads", "2", "--touch", "memset"], "memset"),
    ("populate", ["--populate"], ["--threads", "1", "--touch", "populate"], "memset"),
    ("counters", ["--memcg-from", "counters"], ["--threads", "1", "--touch", "memset"], None),
    ("counters-threads2", ["--memcg-from", "counters", "--threads", "2"],
     ["--threads", "2", "--touch", "memset"], "counters"),
)


def probe_variant_on(name, flags):
    """Whether `memprobe probe --help` has the options variant name needs."""
    need = {"threads2": ("threads",), "populate": ("populate",),
            "counters": ("probe_memcg_from",),
            "counters-threads2": ("probe_memcg_from", "threads")}.get(name, ())
    return all(flags[n] for n in need)


def phase_probe(cg, matrix, flags):
    log(f"probe fill rate: memprobe probe --limit {PROBE_LIMIT} --thp never "
        f"(--threads: {'yes' if flags['threads'] else 'n/a'}, "
        f"--populate: {'yes' if flags['populate'] else 'n/a'}, "
        f"--memcg-from: {'yes' if flags['probe_memcg_from'] else 'n/a'}) vs fill.c")
    variants = [(n, pa, fa) for n, pa, fa, _ in PROBE_VARIANTS if probe_variant_on(n, flags)]
    res = {name: {"probe": [], "fill": []} for name, _, _ in variants}
    for rep in range(PROBE_REPS):
        if rep and elapsed() + rep_estimate_s(matrix, flags) > BUDGET_S:
            log(f"probe: repetition {rep + 1} skipped (time budget)")
            break
        order = variants if rep % 2 == 0 else list(reversed(variants))
        for name, pargs, fargs in order:
            # probe first in even repetitions, fill.c first in odd ones (the
            # same size as the probe filled in the first repetition)
            def ref(size, chunk):
                return fill_once(cg, ["--size", str(size), "--chunk", str(chunk),
                                      "--page", "4k"] + fargs)
            if rep % 2 == 0 or not res[name]["probe"]:
                pr = run_probe(pargs)
                fr = ref(pr["allocated_bytes"], pr["chunk_bytes"] or (128 << 20))
            else:
                prev = res[name]["probe"][0]
                fr = ref(prev["allocated_bytes"], prev["chunk_bytes"] or (128 << 20))
                pr = run_probe(pargs)
            emit("probe_fill_ref", variant=name, rep=rep, **fr)
            res[name]["probe"].append(pr)
            res[name]["fill"].append(fr)
            log(f"probe {name}: {pr['gib_per_s']:.3f} GiB/s ({pr['timed']}), "
                f"fill.c {fr['gib_per_s']:.3f} GiB/s")
    out = {"flags": flags}
    for name in res:
        pr = [p["gib_per_s"] for p in res[name]["probe"]]
        fr = [f["gib_per_s"] for f in res[name]["fill"]]
        if not pr:
            continue
        ratio_each = [a / b for a, b in zip(pr, fr)]
        # the whole memprobe process (its start, BPF, snapshots, the fill
        # child) against fill.c's own getrusage of the same bytes
        cpu_each = [p["cpu_s"] / f["cpu_s"] for p, f in zip(res[name]["probe"], res[name]["fill"])
                    if f.get("cpu_s")]
        bound_each = [p["miss_bound_bytes"] / p["growth_bytes"] for p in res[name]["probe"]
                      if p.get("miss_bound_bytes") is not None and p.get("growth_bytes")]
        out[name] = emit("probe_summary", variant=name, probe_gib_per_s=median(pr),
                         cpu_ratio_median=median(cpu_each) if cpu_each else None,
                         probe_cpu_s=median([p["cpu_s"] for p in res[name]["probe"]]),
                         fill_cpu_s=median([f["cpu_s"] for f in res[name]["fill"]]),
                         miss_bound_share_max=max(bound_each) if bound_each else None,
                         fill_gib_per_s=median(fr), ratio_median=median(ratio_each),
                         ratio_min=min(ratio_each), ratio_max=max(ratio_each),
                         timed=res[name]["probe"][0]["timed"],
                         events_lost=[p["events_lost"] for p in res[name]["probe"]],
                         events_lost_detail=[p["events_lost_detail"] for p in res[name]["probe"]])
    for name, _, _, against in PROBE_VARIANTS:
        base = out.get(against)
        if name in out and base:
            out[name]["speedup_vs_memset"] = out[name]["probe_gib_per_s"] / base["probe_gib_per_s"]
            out[name]["fill_speedup_vs_memset"] = out[name]["fill_gib_per_s"] / base["fill_gib_per_s"]
            emit("probe_speedup", variant=name, against=against,
                 speedup=out[name]["speedup_vs_memset"],
                 fill_speedup=out[name]["fill_speedup_vs_memset"])
    return out


# ---- the summary ----------------------------------------------------------

def f3(x):
    return "—" if x is None else f"{x:.3f}"


def verdict(ok):
    return "met" if ok else "**missed**"


def lost_figures(rounds, bsum, probe):
    """Events lost in the rounds, the stats pass and the probe runs, and where."""
    lost = max(rounds[k]["events_lost_max"] for k in memprobe_ran(rounds))
    lost_stats = max((s.get("events_lost") or 0) for s in bsum.values())
    lost_probe = max((x or 0) for p in probe.values() if isinstance(p, dict) and "events_lost" in p
                     for x in p["events_lost"]) if any(
        isinstance(p, dict) and "events_lost" in p for p in probe.values()) else None
    probe_where = {}
    for p in probe.values():
        if isinstance(p, dict):
            for d in p.get("events_lost_detail", []):
                for kk, v in d.items():
                    probe_where[kk] = max(probe_where.get(kk, 0), v)
    lost_where = {}
    for k in memprobe_ran(rounds):
        for d in rounds[k].get("events_lost_detail_all", []):
            for kk, v in d.items():
                if kk.startswith("recursion_misses:"):
                    lost_where[kk.split(":", 1)[1]] = lost_where.get(kk.split(":", 1)[1], 0) + v
    return {"lost": lost, "lost_stats": lost_stats, "lost_probe": lost_probe,
            "probe_where": probe_where, "lost_where": lost_where}


def bpftrace_tracepoints():
    """The tracepoints the bpftrace script hooks (tracepoint:CAT:NAME)."""
    return re.findall(r"^tracepoint:\w+:(\w+)", bpftrace_script(0), re.M)


def empty_costs(rounds, empties, tp_firings, fault_ns):
    """The cost of one firing of an empty program, per tracepoint.

    BPF stats' ns/run covers the program's body only, not the tracepoint's
    dispatch to it; the empty-progs tracer of the rounds measures the whole:
    its added CPU per page over the empty programs' firings per page. Model:
    each tracepoint's firing costs its stats ns/run plus one dispatch cost d,
    the same for all, which that measurement fixes. Without the measurement
    (tracer unavailable, or a ratio not above 1 in a noisy run) the stats'
    ns/run alone is used, and the method says so."""
    body = {tracepoint_of(n): e["ns_per_run"] for n, e in empties.items()}
    tps = [t for t in tp_firings if t in body]
    F = sum(tp_firings[t] for t in tps)
    B = sum(tp_firings[t] * body[t] for t in tps)
    er = rounds.get("empty-progs", {}).get("ratio", {}).get("median")
    if er is not None and er > 1 and F:
        whole = (er - 1) * fault_ns / F
        d = whole - B / F
        method = (f"measured: the empty programs added {(er - 1) * fault_ns:.0f} ns of CPU per "
                  f"page over {F:.2f} firings, {whole:.1f} ns per firing against "
                  f"{B / F:.1f} ns of program body (BPF stats): dispatch {d:+.1f} ns per firing")
    else:
        d, whole = 0.0, (B / F if F else None)
        method = ("BPF stats' ns/run of the empty programs (program body only, not the "
                  "tracepoint's dispatch: " +
                  ("the empty-progs tracer did not run)" if er is None else
                   f"the empty-progs tracer's ratio {er:.3f} is within the noise)"))
    cost = {t: max(0.0, body[t] + d) for t in body}
    return {"per_tracepoint": cost, "average": whole, "dispatch_ns": d, "method": method}


def tracer_floors(rounds, bpf, fl_perf_events):
    """Per tracer: hook firings per 4 KiB page, an empty program's cost per
    firing over those hooks, the floor 1 + firings x cost / fault cost, and
    the CPU it added per page ((ratio - 1) x fault cost)."""
    progs, empties, _, _, firings = bpf
    tp_firings = firings["per_tp"]
    pages = parse_size(SIZE) // 4096
    fault_ns = rounds["none"]["cpu_s"]["median"] / pages * 1e9
    ec = empty_costs(rounds, empties, tp_firings, fault_ns)
    cost = ec["per_tracepoint"]

    def over(fpp_by_tp):
        """(firings per page, mean cost per firing) over {tracepoint: firings}."""
        f = sum(fpp_by_tp.values())
        c = sum(n * cost.get(t, ec["average"] or 0.0) for t, n in fpp_by_tp.items())
        return f, (c / f if f else None)
    out = {"_fault_ns": fault_ns, "_empty": ec,
           "_user_allocs_per_page": tp_firings.get("mm_page_alloc:user")}
    for k in TRACERS:
        r = rounds.get(k, {}).get("ratio", {}).get("median")
        fpp, c, by = None, None, None
        if k in progs:
            # every program it loaded fires with its tracepoint: that
            # tracepoint's count, else the program's own run count
            by = {}
            for p in progs[k]:
                t = p["tracepoint"] if p["tracepoint"] in tp_firings else p["name"]
                by[t] = by.get(t, 0.0) + tp_firings.get(t, p["firings_per_page"])
            fpp, c = over(by)
        elif k == "empty-progs":
            fpp, c = over({tracepoint_of(n): tp_firings.get(tracepoint_of(n), 0.0)
                           for n in empties})
        elif k == "bpftrace":
            fpp, c = over({t: tp_firings.get(t, 0.0) for t in bpftrace_tracepoints()})
        elif k == "perf-kmem":
            evs = [e.split(":", 1)[1] for e in (fl_perf_events or [])]
            fpp = (sum(tp_firings.get(t, 0.0) for t in evs) if firings["task"] and evs
                   else rounds.get(k, {}).get("firings_per_page_median"))
        o = {"firings_per_page": fpp, "empty_ns_per_firing": c, "by_tracepoint": by,
             "floor": 1 + fpp * c / fault_ns if fpp is not None and c is not None else None,
             "added_ns_per_page": (r - 1) * fault_ns if r is not None else None}
        if k == "perf-kmem" and fpp and r is not None:
            o["own_ns_per_firing"] = (r - 1) * fault_ns / fpp
        out[k] = emit("tracer_floor", tracer=k, **o)
    return out


def memprobe_ran(rounds):
    """The memprobe modes with runs in the rounds."""
    return [k for k in MEMPROBE_MODES if rounds.get(k, {}).get("ratio", {}).get("n")]


def headline_figures(rounds, bsum, probe):
    """The figures the issue's targets are checked against, from all phases."""
    ran = memprobe_ran(rounds)
    fig = {
        "nostack": rounds["memprobe-nostack"]["ratio"],
        "stacks": rounds["memprobe-stacks"]["ratio"],
        "counters": rounds.get("memprobe-counters", {}).get("ratio"),
        "counters_nostack": rounds.get("memprobe-counters-nostack", {}).get("ratio"),
        "hwm": max(rounds[k]["vmhwm_kib_max"] for k in ran),
        "memlock": max(rounds[k]["maps_memlock_bytes_max"] for k in ran),
        "top": max((rounds[k] for k in ran), key=lambda s: s["vmhwm_kib_max"]),
        "firings_rows": {},   # path_rows(): the firings rows' values, for their gaps
    }
    fig.update(lost_figures(rounds, bsum, probe))
    return fig


def target_gaps(fig, bsum, probe, attach):
    """Row name -> (value, limit, unit): how far a missed figure is off."""
    gaps = {}

    def gap(name, value, limit, unit=""):
        gaps[name] = (value, limit, unit)

    gap("slowdown, full attribution, no stacks (CPU time ratio)", fig["nostack"]["median"], 1.08)
    gap("slowdown, with kernel stacks (CPU time ratio)", fig["stacks"]["median"], 1.15)
    for name, key, lim in COUNTERS_SLOWDOWN:
        if fig.get(key) and fig[key]["n"]:
            gap(name, fig[key]["median"], lim)
    for k, name, lim in ADDED_TARGETS:
        v = fig["floors"].get(k, {}).get("added_ns_per_page")
        if v is not None:
            gap(name, v, lim, " ns")
    for mode, s in bsum.items():
        if s["weighted_net_ns_per_event"] is None:
            continue
        gap(f"in-program ns/event minus empty program's ({mode}, weighted)",
            s["weighted_net_ns_per_event"], 60, " ns")
    for name, sfx in PROBE_LABELS.items():
        if name in probe:
            gap(f"probe fill rate / plain mmap+memset (4 KiB, 1 thread{sfx})",
                probe[name]["ratio_median"], 0.95)
    for name, (label, against) in SPEEDUP_LABELS.items():
        if name in probe and "speedup_vs_memset" in probe[name]:
            gap(f"probe {label} / {against}", probe[name]["speedup_vs_memset"], 1.5)
    for name, value in fig["firings_rows"].items():
        gap(name, value, 2)
    gap("exec to attached, p50", attach["p50_ms"], 100, " ms")
    gap("exec to attached, p95", attach["p95_ms"], 200, " ms")
    gap("memprobe peak RSS (VmHWM just before SIGINT)", fig["hwm"] / 1024, 16, " MiB")
    gap("BPF map memory (memlock of its map fds)", fig["memlock"] / 2**20, 4, " MiB")
    return gaps


PROBE_LABELS = {"memset": "", "counters": ", --memcg-from counters"}
SPEEDUP_LABELS = {"threads2": ("--threads 2", "probe one-thread memset"),
                  "populate": ("--populate", "probe one-thread memset"),
                  "counters-threads2": ("--memcg-from counters --threads 2",
                                        "probe --memcg-from counters one-thread memset")}


def probe_fill_rows(probe, name):
    """The rows of one one-thread memset variant: fill rate, CPU, misses."""
    sfx = PROBE_LABELS[name]
    rate = f"probe fill rate / plain mmap+memset (4 KiB, 1 thread{sfx})"
    if name not in probe:
        if name == "memset":
            return [(rate, "≥ 0.95", f"not measured: {probe.get('error', '?')}", None)]
        return [] if not probe["flags"].get("probe_memcg_from") else \
            [(rate, "≥ 0.95", f"not measured: {probe.get('error', '?')}", None)]
    p = probe[name]
    rows = [(rate, "≥ 0.95",
             f"{f3(p['ratio_median'])} ({p['probe_gib_per_s']:.3f} vs "
             f"{p['fill_gib_per_s']:.3f} GiB/s; timed by {p['timed']})",
             p["ratio_median"] >= 0.95)]
    if p.get("cpu_ratio_median") is not None:
        rows.append((f"probe's whole-process CPU / plain mmap+memset's, same bytes{sfx}",
                     "≤ 1.10",
                     f"{f3(p['cpu_ratio_median'])} ({p['probe_cpu_s']:.2f} vs "
                     f"{p['fill_cpu_s']:.2f} s: memprobe's start, BPF, snapshots and "
                     f"the fill child, against fill.c's getrusage)",
                     p["cpu_ratio_median"] <= 1.10))
    if p.get("miss_bound_share_max") is not None:
        rows.append((f"recursion misses' bound (events_lost.recursion_miss_bound_bytes) / "
                     f"the probe's growth, worst run{sfx}", "< 0.1%",
                     f"{100 * p['miss_bound_share_max']:.3f}%",
                     p["miss_bound_share_max"] < 0.001))
    return rows


def probe_rows(probe):
    """The summary's rows for the probe's fill rate and its speed-ups."""
    rows = probe_fill_rows(probe, "memset") + probe_fill_rows(probe, "counters")
    for name, (label, against) in SPEEDUP_LABELS.items():
        row = f"probe {label} / {against}"
        if name in probe and "speedup_vs_memset" in probe[name]:
            p = probe[name]
            rows.append((row, "≥ 1.5",
                         f"{p['speedup_vs_memset']:.2f} (fill.c: {p['fill_speedup_vs_memset']:.2f})",
                         p["speedup_vs_memset"] >= 1.5))
        elif probe_variant_on(name, probe["flags"]):
            rows.append((row, "≥ 1.5", f"not measured: {probe.get('error', '?')}", None))
        else:
            rows.append((row, "≥ 1.5", f"not available (`memprobe probe --help` lacks "
                                       f"{label.replace(' 2', '')})", None))
    return rows


def lost_row(fig):
    """The summary's row for events lost, in every phase that records."""
    lost, lost_stats, lost_probe = fig["lost"], fig["lost_stats"], fig["lost_probe"]
    lost_where, probe_where = fig["lost_where"], fig["probe_where"]
    return ("events lost (attribution.events_lost.total, worst run)", "0",
            f"{lost} in the rounds" +
            (" (recursion misses, all rounds: " +
             ", ".join(f"{k} {v}" for k, v in sorted(lost_where.items(), key=lambda x: -x[1])) + ")"
             if lost_where else "") +
            f"; {lost_stats} in the stats pass" +
            ("" if lost_probe is None else f"; {lost_probe} in a probe run") +
            (" (recursion misses, worst probe run per program: " +
             ", ".join(f"{k} {v}" for k, v in sorted(probe_where.items(), key=lambda x: -x[1]))
             + ")" if probe_where else ""),
            max(lost, lost_stats, lost_probe or 0) == 0)


ADDED_TARGETS = (("memprobe-nostack", "memprobe's added CPU per 4 KiB page, no stacks", 100),
                 ("memprobe-stacks", "memprobe's added CPU per 4 KiB page, with kernel stacks",
                  150),
                 ("memprobe-counters-nostack", "memprobe's added CPU per 4 KiB page, "
                  "--memcg-from counters, no stacks", 100),
                 ("memprobe-counters", "memprobe's added CPU per 4 KiB page, "
                  "--memcg-from counters, with kernel stacks", 150))
COUNTERS_SLOWDOWN = (
    ("slowdown, --memcg-from counters, no stacks (CPU time ratio)", "counters_nostack", 1.08),
    ("slowdown, --memcg-from counters, with kernel stacks (CPU time ratio)", "counters", 1.15))


def added_rows(fl):
    """The rows of the figure that does not depend on the fault's cost: the
    CPU memprobe adds per page, beside the floor of its hooks."""
    rows = []
    for k, name, lim in ADDED_TARGETS:
        if k not in TRACERS:
            continue   # not run: record has no --memcg-from
        f = fl.get(k, {})
        v = f.get("added_ns_per_page")
        if v is None:
            rows.append((name, f"≤ {lim} ns", "not measured", None))
            continue
        fpp, c = f.get("firings_per_page"), f.get("empty_ns_per_firing")
        floor = (f" (its hooks' floor: {fpp:.2f} firings × {c:.1f} ns = {fpp * c:.0f} ns)"
                 if fpp is not None and c is not None else "")
        rows.append((name, f"≤ {lim} ns", f"{v:.0f} ns{floor}", v <= lim))
    return rows


def path_cell(fig, bsum, k):
    """One mode's firings per page, by both counts, and its floor: a dict."""
    f, b = fig["floors"].get(k, {}), bsum.get(k) or {}
    return {"task": f.get("firings_per_page"), "kernel": b.get("firings_per_page"),
            "by_tp": f.get("by_tracepoint") or {},
            "doc_runs": b.get("doc_program_runs_per_page"), "ns": b.get("program_ns_per_page"),
            "empty_ns": f.get("empty_ns_per_firing"), "floor": f.get("floor")}


def own_firings(c, user):
    """The firings an anonymous page makes for itself, and the row's words
    for the split: where a mode hooks only the page allocator (its
    allocation and its free: every page the fill allocates is freed at its
    exit), each user-page allocation counted by perf makes one firing each
    way; the rest of the firings are for other pages, the page tables (one
    per 512 pages) and the workload's other allocations. The issue's "at
    most 2 (allocation and free)" is about the former. Elsewhere, or with no
    per-task count: all of them."""
    tps = {t for t, n in c["by_tp"].items() if n >= 0.0005}   # a process's exit: 0
    total = c["task"] if c["task"] is not None else c["kernel"]
    if user is None or c["task"] is None or not tps or not tps <= {"mm_page_alloc",
                                                                    "mm_page_free"}:
        return total, ""
    own = user * len(tps)
    return own, (f"; of them {own:.2f} for the anonymous page's own allocation and free "
                 f"(user-page allocations: {user:.4f} a page) and {total - own:.3f} for "
                 f"other pages: its page tables (one per 512 pages) and the workload's "
                 f"other allocations")


def path_rows(fig, bsum):
    """Per design of the per-process memcg split (--memcg-from): BPF firings
    per 4 KiB anonymous page against the issue's "≤ 2 on the default path",
    the programs' ns per page (the kernel's run time) and the floor of the
    hooks (firings x an empty program's ns); --stack-sample 0 beside."""
    rows = []
    fig["firings_rows"] = {}

    def fpp(c):   # the workload's own count where perf could count it
        return c["task"] if c["task"] is not None else c["kernel"]

    def num(x):
        return "—" if x is None else f"{x:.2f}"

    def floor(x):
        return (f"{fpp(x):.2f} firings × {x['empty_ns']:.1f} ns = "
                f"{fpp(x) * x['empty_ns']:.0f} ns, slowdown floor {f3(x['floor'])}")
    for label, k, k0 in MEMCG_PATHS:
        if k not in TRACERS:
            continue
        c, c0 = path_cell(fig, bsum, k), path_cell(fig, bsum, k0)
        name = f"BPF firings per 4 KiB anonymous page, {label}, default options"
        if fpp(c) is None:
            rows.append((name, "≤ 2", "not measured", None))
        else:
            fig["firings_rows"][name] = fpp(c)
            hooks = ", ".join(f"{t} {n:.3f}" for t, n in
                              sorted(c["by_tp"].items(), key=lambda x: -x[1]) if n >= 0.0005)
            own, split = own_firings(c, fig["floors"].get("_user_allocs_per_page"))
            rows.append((name, "≤ 2",
                         f"{fpp(c):.2f} in the workload's own context ({hooks}){split}; "
                         f"{num(c['kernel'])} "
                         f"by the kernel's run counts (stats pass, machine-wide)" +
                         ("" if c["doc_runs"] is None else
                          f"; {c['doc_runs']:.2f} by memprobe's own document "
                          f"(events.program_runs, its whole recording)") +
                         ("" if fpp(c0) is None else
                          f" (--stack-sample 0: {fpp(c0):.2f}; kernel {num(c0['kernel'])})"),
                         round(own, 2) <= 2))
        if c["ns"] is not None:
            rows.append((f"BPF program ns per 4 KiB page, {label} (kernel run time during "
                         f"the fills, machine-wide)", "—",
                         f"{c['ns']:.0f} ns" + ("" if c0["ns"] is None else
                                                f" (--stack-sample 0: {c0['ns']:.0f} ns)"),
                         None))
        if c["empty_ns"] is not None and fpp(c) is not None:
            rows.append((f"floor of the hooks per 4 KiB page (firings × empty program ns), "
                         f"{label}", "—", floor(c) + ("" if c0["empty_ns"] is None or
                                                     fpp(c0) is None else
                                                     f" (--stack-sample 0: {floor(c0)})"),
                         None))
    return rows


def target_rows(fig, bsum, probe, attach):
    """The summary's rows: (figure, target, measured, met: True/False/None)."""
    nostack, stacks, hwm, memlock, top = (fig[k] for k in
                                          ("nostack", "stacks", "hwm", "memlock", "top"))
    rows = []
    rows.append(("slowdown, full attribution, no stacks (CPU time ratio)", "≤ 1.08",
                 f"{f3(nostack['median'])} (IQR {f3(nostack['q1'])}–{f3(nostack['q3'])})",
                 nostack["median"] <= 1.08))
    rows.append(("slowdown, with kernel stacks (CPU time ratio)", "≤ 1.15",
                 f"{f3(stacks['median'])} (IQR {f3(stacks['q1'])}–{f3(stacks['q3'])})",
                 stacks["median"] <= 1.15))
    for name, key, lim in COUNTERS_SLOWDOWN:
        r = fig.get(key)
        if r and r["n"]:
            rows.append((name, f"≤ {lim}",
                         f"{f3(r['median'])} (IQR {f3(r['q1'])}–{f3(r['q3'])})",
                         r["median"] <= lim))
    rows += added_rows(fig["floors"])
    rows += path_rows(fig, bsum)
    for mode, s in bsum.items():
        if s["weighted_net_ns_per_event"] is None:
            continue
        rows.append((f"in-program ns/event minus empty program's ({mode}, weighted)", "≤ 60 ns",
                     f"{s['weighted_net_ns_per_event']:.1f} ns (worst: {s['worst_program']} "
                     f"{s['worst_net_ns_per_run']:.1f} ns)",
                     s["weighted_net_ns_per_event"] <= 60))
    rows += probe_rows(probe)
    rows.append(("exec to attached, p50", "≤ 100 ms", f"{attach['p50_ms']:.0f} ms",
                 attach["p50_ms"] <= 100))
    rows.append(("exec to attached, p95", "≤ 200 ms", f"{attach['p95_ms']:.0f} ms",
                 attach["p95_ms"] <= 200))
    rows.append(("memprobe peak RSS (VmHWM just before SIGINT)", "≤ 16 MB",
                 f"{hwm / 1024:.1f} MiB (at that moment RssAnon {top['rss_anon_kib_at_max'] / 1024:.1f}"
                 f" + RssFile {top['rss_file_kib_at_max'] / 1024:.1f} MiB)",
                 hwm <= 16 * 1024))
    rows.append(("BPF map memory (memlock of its map fds)", "≤ 4 MB",
                 f"{memlock / 2**20:.2f} MiB", memlock <= 4 * 2**20))
    rows.append(lost_row(fig))
    return rows


def machine_section(m, duration_s):
    """The title, where the figures come from, and the machine they were measured on."""
    L = []
    a = L.append
    a("# memprobe performance\n")
    a("Measured by `sudo make bench` (bench/run.py; issue 5). Every figure below comes "
      "from one run of it; the raw measurements, one JSON line each, are in "
      "`build/bench/results.jsonl`.\n")
    a("## Machine\n")
    a(f"- CPU: {m['cpu_model']}, {m['cpus']} CPUs; {m['mem_total_gib']} GiB RAM; "
      f"hypervisor: {m['hypervisor']}" +
      ("; a PVM guest (pvm_* options on the kernel command line)" if m.get("pvm_guest") else "") +
      ("; free page reporting to the host on" if m.get("cmdline_page_reporting") else ""))
    a(f"- OS: {m['os']}; kernel {m['kernel']} ({m['kernel_version']})")
    a(f"- THP enabled: `{m['thp_enabled']}`, defrag: `{m['thp_defrag']}`")
    a(f"- memprobe: `{m['memprobe_source']}` (sha256 {m['memprobe_sha256']}…, copied before "
      f"the run) from git `{m['git']}`; {m['bpftrace'] or 'bpftrace: not installed'}; "
      f"{m['perf'] or 'perf: not installed'}")
    tf = (f"mounted by the bench at {m['tracefs']} (none was), unmounted at its exit"
          if m.get("tracefs_mounted_by_bench") else
          f"at {m['tracefs']}" if m.get("tracefs") else
          f"none, and mounting one failed ({m.get('tracefs_mount_error')})")
    a(f"- tracefs: {tf}; RLIMIT_MEMLOCK of the tracers: {m.get('memlock')}; tracers run: "
      f"{', '.join(m.get('tracers') or TRACERS)}")
    a(f"- date: {m['date']}; bench/run.py took {duration_s / 60:.1f} min (`make bench` adds "
      f"the build)")
    a("")
    return L


def targets_section(rows, gaps, noise):
    """The targets table, how far the missed ones are off, and the A/A noise."""
    L = []
    a = L.append
    a("## Summary against the issue's targets\n")
    a("| figure | target | measured | |")
    a("|---|---|---|---|")
    for name, target, meas, ok in rows:
        v = "n/a" if ok is None else verdict(ok)
        if name.startswith("slowdown") and noise["noisy"]:
            v += " (noisy run)"
        a(f"| {name} | {target} | {meas} | {v} |")
    a("")
    missed = [r for r in rows if r[3] is False]
    if missed:
        a("Missed, and by how much:\n")
        for name, target, meas, ok in missed:
            if name in gaps:
                v, lim, unit = gaps[name]
                a(f"- {name}: {v:.3g}{unit} against {target}: off by {abs(v - lim):.3g}{unit} "
                  f"({abs(v / lim - 1) * 100:.1f}%)")
            else:
                a(f"- {name}: {meas} against {target}")
        a("")
        a("Where the time and memory go: the per-program BPF run times, the profile of a "
          "start and the RSS figures below.\n")
    a(f"Noise: the A/A control (a no-tracer run in a tracer's slot) has a median ratio of "
      f"{f3(noise['aa_ratio']['median'])}, IQR {f3(noise['aa_ratio']['q1'])}–"
      f"{f3(noise['aa_ratio']['q3'])}, range {f3(noise['aa_ratio']['min'])}–"
      f"{f3(noise['aa_ratio']['max'])}: this run is "
      f"**{'NOISY' if noise['noisy'] else 'not noisy'}** (noisy when the A/A IQR leaves 1 ± 5%). "
      f"Rounds whose A/A ratio left 1 ± 5%: {noise['noisy_rounds'] or 'none'} "
      f"of {noise['rounds']}.\n")
    return L


def shared_section(m, rounds):
    """Other sessions' BPF programs and CPU load during the rounds; quiet rounds."""
    noise = rounds["_noise"]
    q = rounds["_quiet"]
    sh = rounds["_shared"]
    return [
        f"The machine is shared. Other sessions' BPF tracing programs were loaded during "
        f"{sh['runs_with_foreign_bpf']} of the {sh['runs']} workload runs"
        + (f" ({', '.join(sh['foreign_names'])})" if sh["foreign_names"] else "") +
        f": they run their own cgroup filter on every event of the bench's workload too. "
        f"BPF run-time stats were on (someone else's BPF_ENABLE_STATS or sysctl) during "
        f"{sh['tracer_runs_with_stats_on']} of the {sh['tracer_runs_checked']} BPF tracer runs "
        f"checked. During the no-tracer runs the rest of the machine used a median of "
        f"{q['load_median']:.2f} CPUs (of {m['cpus']}). "
        f"{len(q['rounds'])} of {noise['rounds']} rounds were quiet (under "
        f"{QUIET_LOAD} CPU used by the rest of the machine in every no-tracer run of the "
        f"round, /proc/stat busy time minus the workload's, and no other session's BPF "
        f"tracing program)" +
        (": over those alone, the median ratios are " +
         ", ".join(f"{k} {f3(q['ratio'][k]['median'])}" for k in TRACERS) + "."
         if q["ratio"] and len(q["rounds"]) >= 5 else
         "; too few for a separate figure.") + "\n"]


def tracer_notes(k, s):
    """The notes column of the tracers table, for tracer k's summary s."""
    notes = []
    if k.startswith("memprobe"):
        notes.append(f"events lost max {s['events_lost_max']}")
        notes.append(f"ready {s['ready_ms_median']:.0f} ms")
    if k == "perf-kmem":
        notes.append(f"{s['perf_mb_median']:.0f} MB perf.data per run")
        notes.append(f"lost up to {s['perf_lost_chunks_max']} chunks / "
                     f"{s['perf_lost_pct_max']:.1f}% of samples")
    if k == "bpftrace":
        notes.append(f"ready {s['ready_ms_median']:.0f} ms")
        if s.get("runs_needing_second_sigint"):
            notes.append(f"missed the first SIGINT in {s['runs_needing_second_sigint']} runs")
    return notes


def tracers_section(rounds, fl):
    """The rounds: how they ran, the no-tracer baseline, the tracers' ratios
    beside their floors."""
    noise = rounds["_noise"]
    L = []
    a = L.append
    a("## Tracers side by side\n")
    a(f"Workload: `fill --size {SIZE} --page 4k --threads 1 --touch memset` in a "
      f"`memprobe-bench-*` cgroup (one fault, one page allocation, one free and a few memcg "
      f"stat updates per 4 KiB page). {noise['rounds']} rounds (at least {MIN_ROUNDS}, more "
      f"while the time budget allows); in each, every tracer's run sits "
      f"between two no-tracer runs and the tracer order is reversed every other round. "
      f"Ratio = the workload's CPU time (getrusage user+sys) over the mean of its two "
      f"no-tracer neighbours. Tracers start before the workload is released (memprobe: "
      f"`--ready-fd`; the empty programs: `bpfstats attach --ready-fd`; bpftrace: its BEGIN "
      f"probe; perf: `--control` enable/ack) and get SIGINT after it exits. A tracer that "
      f"could not start (found by one start of each before the phases, or failing in a "
      f"round) is marked unavailable with the reason.\n")
    base = rounds["none"]["cpu_s"]
    pages = parse_size(SIZE) // 4096
    a(f"No-tracer workload CPU time: median {base['median']:.3f} s "
      f"(IQR {base['q1']:.3f}–{base['q3']:.3f}, range {base['min']:.3f}–{base['max']:.3f}, "
      f"n={base['n']}), {base['median'] / pages * 1e6:.2f} µs per 4 KiB page: on this "
      f"virtual machine a user page fault is expensive, so a tracer's fixed cost per "
      f"event weighs less in these ratios than it would on bare metal.\n")
    a(floor_text(fl))
    a("| tracer | median ratio | floor | firings / 4 KiB page | empty program ns / firing | "
      "added CPU ns / 4 KiB page | IQR | min–max | tracer's own CPU (median) | notes |")
    a("|---|---|---|---|---|---|---|---|---|---|")
    for k in TRACERS:
        s = rounds[k]
        r = s["ratio"]
        if r["n"] == 0:
            a(f"| {TRACER_DESC[k]} | unavailable: {s.get('unavailable', '?')} | — | — | — | — "
              f"| — | — | — | |")
            continue
        f = fl.get(k, {})
        notes = tracer_notes(k, s)
        if s.get("unavailable"):
            notes.append(f"unavailable after {r['n']} rounds: {s['unavailable']}")
        if k == "perf-kmem" and f.get("own_ns_per_firing") is not None:
            notes.append(f"its own cost: {f['own_ns_per_firing']:.0f} ns per recorded event "
                         f"(added CPU / firings)")
        if k == "perf-kmem" and s.get("firings_per_page_median") is not None:
            notes.append(f"{s['firings_per_page_median']:.2f} samples written per workload "
                         f"page (system-wide, perf's own writes included)")
        if k == "empty-progs":
            notes.append("its floor is its own ratio: it is what the floors are measured with")
        own = s.get("tracer_cpu_s_median")
        fpp, c, added = f.get("firings_per_page"), f.get("empty_ns_per_firing"), \
            f.get("added_ns_per_page")
        a(f"| {TRACER_DESC[k]} | {f3(r['median'])} | {f3(f.get('floor'))} | "
          f"{'—' if fpp is None else f'{fpp:.2f}'} | {'—' if c is None else f'{c:.1f}'} | "
          f"{'—' if added is None else f'{added:.0f}'} | {f3(r['q1'])}–{f3(r['q3'])} | "
          f"{f3(r['min'])}–{f3(r['max'])} | {'—' if own is None else f'{own:.3f} s'} | "
          f"{'; '.join(notes)} |")
    a("")
    return L


def floor_text(fl):
    """How the floor columns of the tracers table are made."""
    ec = fl["_empty"]
    return (
        f"Floor = 1 + firings per page × an empty program's cost per firing / the no-tracer "
        f"CPU per page ({fl['_fault_ns']:.0f} ns): the slowdown of a tracer on the same hooks "
        f"whose programs did nothing. Firings per page: per tracepoint, counted in the "
        f"workload's own context ({fl['_firings_method']}), summed over the tracepoints the "
        f"tracer hooks: memprobe's, every program it loaded (found in the stats pass, "
        f"whatever they are; one on a tracepoint not counted so adds its own run count); "
        f"bpftrace's, the tracepoints of its script ({', '.join(bpftrace_tracepoints())}); "
        f"perf kmem's, the events it records ({', '.join(fl.get('_perf_events') or [])}), "
        f"with no BPF program: no empty-program cost, so no floor (—). Cost per firing: "
        f"{ec['method']}. bpftrace's programs are perf-event tracepoint programs, dearer to "
        f"dispatch than tp_btf: its floor is that of the cheapest hook on its tracepoints. "
        f"Added CPU per page = (median ratio − 1) × {fl['_fault_ns']:.0f} ns.\n")


def bpf_section(progs, bsum, tp_firings, firings):
    """The stats pass: each BPF program's ns per run against an empty program's."""
    L = []
    a = L.append
    a("## memprobe's BPF programs: run time per event\n")
    a("A separate pass under `build/bench/bpfstats run`, which turns BPF run-time stats on "
      "with the bpf() syscall's BPF_ENABLE_STATS command and holds the fd only for that "
      "pass (the kernel.bpf_stats_enabled sysctl is not touched). memprobe records the "
      f"workload twice ({SIZE} each) per mode; empty tp_btf programs (bench/empty.bpf.c) "
      "sit on the same tracepoints in the same pass. Runs count every event on the "
      "tracepoint, in any cgroup (the programs filter on the memory cgroup first). "
      "net = memprobe's ns/run − the empty program's. Runs / page: the program's runs "
      "during the fills per page of the fills, the rest of the machine's events included "
      "(an upper bound of the workload's firings; the tracers table counts those alone).\n")
    a("| mode | program | runs | runs / page | ns/run | empty ns/run | net ns/run |")
    a("|---|---|---|---|---|---|---|")
    for mode, ps in progs.items():
        for p in sorted(ps, key=lambda p: -p["run_cnt"]):
            emp = "—" if p["empty_ns_per_run"] is None else f"{p['empty_ns_per_run']:.1f}"
            net = "—" if p["net_ns_per_run"] is None else f"{p['net_ns_per_run']:.1f}"
            a(f"| {mode} | {p['name']} | {p['run_cnt']} | {p['firings_per_page']:.3f} | "
              f"{p['ns_per_run']:.1f} | {emp} | {net} |")
    a("")
    a("Firings per 4 KiB page of the workload, per tracepoint: the empty programs' runs "
      "(same method): " + ", ".join(f"{t} {n:.3f}" for t, n in
                                    sorted(tp_firings.items(), key=lambda x: -x[1])) +
      (("; in the workload's own context (" + firings["method"] + "): " +
        ", ".join(f"{t} {n:.3f}" for t, n in
                  sorted(firings["per_tp"].items(), key=lambda x: -x[1])))
       if firings["task"] else "") + ".\n")
    for mode, s in bsum.items():
        if s["weighted_net_ns_per_event"] is None:
            a(f"- {mode}: none of its programs ran on a tracepoint with an empty program.")
            continue
        a(f"- {mode}: {s['firings_per_page']:.2f} runs per page; "
          f"weighted net cost {s['weighted_net_ns_per_event']:.1f} ns/event over "
          f"{s['runs']} runs; {s['program_ns_per_page']:.0f} ns of program run time per "
          f"page; all of memprobe's programs together ran "
          f"{s['bpf_time_s'] * 1000:.1f} ms, {100 * s['bpf_share_of_workload_cpu']:.1f}% of the "
          f"workload's {s['workload_cpu_s']:.2f} s CPU (an upper bound on its in-kernel "
          f"share: it includes other processes' filtered-out events).")
    a("")
    return L


def attach_section(attach, hwm):
    """exec to attached: the starts' times, VmHWM at ready, and a start's profile."""
    L = []
    a = L.append
    a("## exec to attached\n")
    a(f"`memprobe record --cgroup CG --ready-fd N`, {attach['n']} starts: from just before "
      f"fork+exec to reading `ready` (hooks attached, baseline taken): p50 "
      f"{attach['p50_ms']:.0f} ms, p95 {attach['p95_ms']:.0f} ms, range "
      f"{attach['min_ms']:.0f}–{attach['max_ms']:.0f} ms. memprobe's VmHWM right after "
      f"`ready` (median): {attach['vmhwm_kib_at_ready_median'] / 1024:.1f} MiB" +
      (" — its peak RSS is reached while it starts, not while it records."
       if attach["vmhwm_kib_at_ready_median"] >= 0.95 * hwm else ".") + "\n")

    prof = attach.get("profile")
    if prof:
        a("Where a start's CPU time goes (one start under `perf record -e cpu-clock -g`, "
          "memprobe killed as soon as it wrote `ready`; inclusive shares of the samples):\n")
        for label, pc in prof["groups"]:
            if pc is not None:
                a(f"- {label}: {pc:.1f}%")
        a("- top functions by own time: " +
          ", ".join(f"{sym} {pc:.1f}%" for pc, sym in prof["top_self"]))
        a("")
    return L


def probe_section(probe, stacks, counters=None):
    """The probe's fill rate against fill.c's, per variant."""
    L = []
    a = L.append
    a("## The probe's fill rate\n")
    fl = probe["flags"]
    a(f"`memprobe probe --limit {PROBE_LIMIT} --thp never --format json` (attribution on, default "
      f"options; the counters variants add `--memcg-from counters`, which runs no program on "
      f"the memcg stat tracepoints) against `fill` mapping and filling the same number of "
      f"bytes in the same chunk size with 4 KiB pages, right after it (right before it in odd "
      f"repetitions). The probe is timed by "
      f"its report's `probe.fill_ns` when it has one, else by its whole command. "
      f"`--threads`: {'available' if fl['threads'] else 'not available'}; `--populate`: "
      f"{'available' if fl['populate'] else 'not available'}; `--memcg-from`: "
      f"{'available' if fl.get('probe_memcg_from') else 'not available'}.\n")
    a(f"The probe fills with its attribution on (kernel stacks, the default): with the "
      f"rounds' slowdown for that mode ({f3(stacks['median'])}), a probe whose only extra "
      f"cost is its BPF programs would reach about {f3(min(1.0, 1 / stacks['median']))} of fill.c's "
      f"rate with one thread and memset" +
      (f"; with `--memcg-from counters` (its rounds' slowdown with stacks "
       f"{f3(counters['median'])}) about {f3(min(1.0, 1 / counters['median']))}"
       if counters and counters["n"] else "") + ".\n")
    a("| variant | probe options | probe GiB/s | fill.c GiB/s | probe / fill.c (median, "
      "min–max) | probe CPU / fill.c CPU | timed by |")
    a("|---|---|---|---|---|---|---|")
    for name, pargs, _, _ in PROBE_VARIANTS:
        if name in probe:
            p = probe[name]
            a(f"| {name} | {' '.join(pargs) or '(default)'} | {p['probe_gib_per_s']:.3f} | "
              f"{p['fill_gib_per_s']:.3f} | "
              f"{f3(p['ratio_median'])} ({f3(p['ratio_min'])}–{f3(p['ratio_max'])}) | "
              f"{f3(p.get('cpu_ratio_median'))} | {p['timed']} |")
    a("")
    return L


def matrix_section(matrix):
    """fill.c's eight variants with no tracer."""
    L = []
    a = L.append
    a("## fill.c on its own\n")
    a(f"`fill --size {MATRIX_SIZE}`, no tracer, in the bench cgroup: per variant one "
      f"untimed run, then {MATRIX_REPS} timed runs back to back (median; GiB/s range), so "
      f"that each finds the memory its own variant just freed. CPU = getrusage "
      f"RUSAGE_SELF user+sys, map to unmap; GiB/s over the fill's wall time.\n")
    a("| pages | threads | touch | CPU s | minor faults | wall s | GiB/s (min–max) |")
    a("|---|---|---|---|---|---|---|")
    for s in matrix:
        a(f"| {s['page']} | {s['threads']} | {s['touch']} | {s['cpu_s']:.3f} | "
          f"{s['minflt']:.0f} | {s['wall_s']:.3f} | {s['gib_per_s']:.3f} "
          f"({s['gib_per_s_min']:.3f}–{s['gib_per_s_max']:.3f}) |")
    a("")
    return L


def rerun_section():
    """How to run the bench again, and its knobs."""
    return [
        "## How to rerun\n",
        "```sh\nsudo make bench      # bench/deps.sh installs bpftrace, linux-perf, python3\n```\n",
        "Knobs (environment): `BENCH_MIN_ROUNDS` (15), `BENCH_ROUNDS` (20, at most), "
        "`BENCH_SIZE` (256M, the rounds' workload), `BENCH_MATRIX_SIZE` (1G), "
        "`BENCH_MATRIX_REPS` (3), `BENCH_PROBE_REPS` (2), `BENCH_PROBE_LIMIT` (4G), "
        "`BENCH_ATTACH_STARTS` (20), "
        "`BENCH_BUDGET_S` (720 s for bench/run.py: the rounds stop, at or after the minimum, "
        "when one more would not leave time for the probe phase), `MEMPROBE` "
        "(build/memprobe), `BENCH_DOC` (docs/performance.md), `BENCH_TRACERS` (which of "
        f"{', '.join(k for k in ALL_TRACERS if k not in REQUIRED)} to run, comma-separated; "
        "all by default, memprobe-faulttp where `memprobe record --help` has "
        "`--fault-tracepoint`, memprobe-counters and memprobe-counters-nostack where it has "
        "`--memcg-from`), `BENCH_TRACEFS` (where a mounted tracefs is looked for, "
        "colon-separated; /sys/kernel/tracing:/sys/kernel/debug/tracing), "
        "`BENCH_TRACEFS_MOUNT` (where one is mounted when none is; /sys/kernel/tracing).\n",
        "On a fresh machine the bench mounts tracefs when none is mounted (and unmounts it at "
        "exit, signals and failures included), raises RLIMIT_MEMLOCK for the tracers as far as "
        "it may, and leaves out, with the reason in the table, a tracer that cannot run.\n"]


def summarize(m, matrix, rounds, attach, bpf, probe, duration_s, perf_events=None):
    """docs/performance.md's lines, and the rows of its targets table."""
    progs, _, bsum, _, _ = bpf
    fl = tracer_floors(rounds, bpf, perf_events)
    fl["_perf_events"] = perf_events
    fl["_firings_method"] = bpf[4]["method"]
    fig = headline_figures(rounds, bsum, probe)
    fig["floors"] = fl
    rows = target_rows(fig, bsum, probe, attach)
    gaps = target_gaps(fig, bsum, probe, attach)
    L = machine_section(m, duration_s)
    L += targets_section(rows, gaps, rounds["_noise"])
    L += shared_section(m, rounds)
    L += tracers_section(rounds, fl)
    L += bpf_section(progs, bsum, bpf[3], bpf[4])
    L += attach_section(attach, fig["hwm"])
    L += probe_section(probe, fig["stacks"], fig["counters"])
    L += matrix_section(matrix)
    L += rerun_section()
    return L, rows


# ---- main -----------------------------------------------------------------

def main():
    global results_f, BPFTRACE_KN_ID_OFF, BPFTRACE_MEMCG_ID, MEMPROBE
    global TRACERS
    if len(sys.argv) == 5 and sys.argv[1] == "--stats-pass":
        results_f = open(os.devnull, "w")
        stats_pass(sys.argv[2], sys.argv[3], sys.argv[4].split(","))
        return 0
    if os.geteuid() != 0:
        sys.exit("bench: needs root (cgroups, BPF, perf): sudo make bench")
    for b in (MEMPROBE, FILL, BPFSTATS, EMPTY_OBJ):
        if not os.path.exists(b):
            sys.exit(f"bench: {b} is missing: run `make bench`")
    os.makedirs(OUT, exist_ok=True)
    results_f = open(RESULTS, "w")
    # Bench a copy: build/memprobe may be rebuilt by someone else meanwhile.
    src = MEMPROBE
    os.makedirs(os.path.join(OUT, "under-test"), exist_ok=True)
    MEMPROBE = os.path.join(OUT, "under-test", "memprobe")
    shutil.copy2(src, MEMPROBE)
    os.environ["MEMPROBE"] = MEMPROBE   # for the stats pass's own process
    with open(MEMPROBE, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()[:16]
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    tracefs_before = tracefs_mounts()
    fresh = ensure_tracefs()
    fresh["memlock"] = raise_memlock()
    flags = probe_help_flags()
    TRACERS = choose_tracers(flags)
    BPFTRACE_KN_ID_OFF = btf_member_offset("kernfs_node", "id")
    BPFTRACE_MEMCG_ID = btf_enum_value("memory_cgrp_id")
    m = emit("machine", **machine_info(), **fresh, memprobe_source=src, memprobe_sha256=sha,
             bpftrace_kn_id_offset=BPFTRACE_KN_ID_OFF, tracers=TRACERS)
    log(f"{m['cpu_model']}, {m['cpus']} CPUs, kernel {m['kernel']}; results: {RESULTS}")
    cg = make_cgroup(f"memprobe-bench-{os.getpid()}")
    cgid = os.stat(cg).st_ino   # a v1 cgroup's id is its kernfs inode number
    emit("cgroup", path=cg, id=cgid)
    try:
        fill_once(cg, ["--size", SIZE])   # warm-up, not counted
        unavailable, pre = phase_preflight(cg, cgid)
        matrix = phase_matrix(cg)
        attach = phase_attach(cg)
        attach["profile"] = phase_attach_profile(cg)
        bpf = phase_bpfstats(cg, [k for k in TRACERS
                                  if k in MEMPROBE_MODES and k not in unavailable])
        bpf += (phase_firings_of(cg, bpf, pre),)
        rounds = phase_rounds(cg, cgid, 1.15 * rep_estimate_s(matrix, flags) + 15, unavailable)
        try:
            probe = phase_probe(cg, matrix, flags)
        except (RuntimeError, OSError, ValueError) as e:
            log(f"probe phase failed: {e}")
            probe = {"flags": flags, "error": str(e)}
            emit("probe_error", error=str(e))
    finally:
        kill_children()
        remove_cgroups()
        note_new_tracefs(tracefs_before)
        unmount_tracefs()
        for f_ in os.listdir(OUT):
            if f_.startswith("tmp-"):
                os.unlink(os.path.join(OUT, f_))
    duration = elapsed()
    lines, rows = summarize(m, matrix, rounds, attach, bpf, probe, duration,
                            perf_kmem_events(pre))
    emit("summary", duration_s=duration,
         figures=[{"figure": r[0], "target": r[1], "measured": r[2], "met": r[3]} for r in rows])
    text = "\n".join(lines) + kept_scale_section()
    with open(DOC, "w") as f:
        f.write(text)
    print(text)
    log(f"done in {duration / 60:.1f} min; {RESULTS}; {DOC}")
    return 0


def kept_scale_section():
    """The doc's sections from "## Scale" to its end, which `make scale`
    (bench/scale.sh) and one-off measurements made, not this bench:
    carried over as they are."""
    try:
        with open(DOC) as f:
            old = f.read()
    except OSError:
        return ""
    i = old.find("\n## Scale")
    if i < 0:
        return ""
    return "\n" + old[i + 1:].rstrip("\n") + "\n"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt as e:
        kill_children()
        remove_cgroups()
        unmount_tracefs()
        sys.exit(f"bench: interrupted ({e})")
