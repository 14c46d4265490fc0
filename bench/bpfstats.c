// SPDX-License-Identifier: GPL-2.0
/*
 * bpfstats: BPF programs' run time per event, for the bench.
 *
 *   bpfstats run [--empty OBJ] [--out FILE] -- CMD [ARGS...]
 *       Turn on BPF run-time stats with the bpf() syscall's BPF_ENABLE_STATS
 *       command (BPF_STATS_RUN_TIME), hold the returned fd while CMD runs,
 *       close it when CMD exits: stats are on only for this pass. The
 *       kernel.bpf_stats_enabled sysctl is neither read nor written.
 *       With --empty, load and attach the empty programs of OBJ (empty
 *       tp_btf programs on memprobe's tracepoints) for the same pass, and
 *       when CMD has exited print their figures, one JSON line each, to
 *       FILE (default standard output). Exit status: CMD's.
 *
 *   bpfstats attach --ready-fd N OBJ
 *       Load and attach OBJ's programs with run-time stats left as they
 *       are (off, unless someone else turned them on), write "ready\n" to
 *       fd N, hold them until SIGINT or SIGTERM, then detach and exit 0.
 *       The bench's "empty programs" tracer: the whole cost of a firing
 *       (tracepoint dispatch included) is the workload's CPU time with
 *       them against without, which the stats' ns/run does not cover.
 *
 *   bpfstats dump [--pid PID] [--prefix P1,P2,... | --all]
 *       One JSON line per loaded BPF program whose name starts with one of
 *       the prefixes (default tp_,raw_tp_,fentry_,kprobe_; --all: any name),
 *       restricted with --pid to the programs PID holds (prog_id lines in
 *       /proc/PID/fdinfo): id, name (the full function name from the
 *       program's BTF when it has one), type, run_time_ns, run_cnt,
 *       ns_per_run, recursion_misses.
 *
 * Programs are listed through libbpf: bpf_prog_get_next_id(),
 * bpf_prog_get_fd_by_id(), bpf_obj_get_info_by_fd().
 */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_IDS 4096

static void usage(void)
{
	fputs("usage: bpfstats run [--empty OBJ] [--out FILE] -- CMD [ARGS...]\n"
	      "       bpfstats attach --ready-fd N OBJ\n"
	      "       bpfstats dump [--pid PID] [--prefix P1,P2,... | --all]\n", stderr);
	exit(2);
}

/* The program's own function name from its BTF; info.name is cut at 15. */
static void full_name(int fd, const struct bpf_prog_info *info, char *out, size_t n)
{
	struct bpf_func_info finfo = {};
	struct bpf_prog_info fi = {};
	__u32 len = sizeof(fi);
	struct btf *btf;
	const struct btf_type *t;

	snprintf(out, n, "%s", info->name);
	if (!info->btf_id || !info->nr_func_info)
		return;
	fi.nr_func_info = 1;
	fi.func_info_rec_size = sizeof(finfo);
	fi.func_info = (__u64)(unsigned long)&finfo;
	if (bpf_obj_get_info_by_fd(fd, &fi, &len))
		return;
	btf = btf__load_from_kernel_by_id(info->btf_id);
	if (!btf)
		return;
	t = btf__type_by_id(btf, finfo.type_id);
	if (t && t->name_off)
		snprintf(out, n, "%s", btf__name_by_offset(btf, t->name_off));
	btf__free(btf);
}

/* prog_id lines in /proc/PID/fdinfo: the programs PID holds (or links to). */
static int pid_prog_ids(int pid, __u32 *ids, int max)
{
	char path[64], line[256];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < max) {
		char p[320];
		FILE *f;
		unsigned int id;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		f = fopen(p, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "prog_id: %u", &id) == 1) {
				bool dup = false;

				for (int i = 0; i < n; i++)
					dup |= ids[i] == id;
				if (!dup)
					ids[n++] = id;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

static bool has_prefix(const char *name, const char *prefixes)
{
	const char *p = prefixes;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len && !strncmp(name, p, len))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

static void print_prog(FILE *out, int fd, const char *tag)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	char name[128];

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	full_name(fd, &info, name, sizeof(name));
	fprintf(out, "{\"kind\": \"%s\", \"id\": %u, \"name\": \"%s\", \"type\": %u, "
		"\"run_time_ns\": %llu, \"run_cnt\": %llu, \"ns_per_run\": %.2f, "
		"\"recursion_misses\": %llu}\n",
		tag, info.id, name, info.type,
		(unsigned long long)info.run_time_ns, (unsigned long long)info.run_cnt,
		info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0,
		(unsigned long long)info.recursion_misses);
}

static int cmd_dump(int argc, char **argv)
{
	const char *prefixes = "tp_,raw_tp_,fentry_,kprobe_";
	static __u32 ids[MAX_IDS];
	int pid = 0, nids = -1;
	__u32 id = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--pid") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--prefix") && i + 1 < argc)
			prefixes = argv[++i];
		else if (!strcmp(argv[i], "--all"))
			prefixes = NULL;
		else
			usage();
	}
	if (pid > 0) {
		nids = pid_prog_ids(pid, ids, MAX_IDS);
		if (nids < 0) {
			fprintf(stderr, "bpfstats: /proc/%d/fdinfo: %s\n", pid, strerror(-nids));
			return 1;
		}
	}
	while (!bpf_prog_get_next_id(id, &id)) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		bool mine = nids < 0;
		int fd;

		for (int i = 0; i < nids && !mine; i++)
			mine = ids[i] == id;
		if (!mine)
			continue;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue; /* unloaded meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
			char name[128];

			full_name(fd, &info, name, sizeof(name));
			if (!prefixes || has_prefix(name, prefixes) || has_prefix(info.name, prefixes))
				print_prog(stdout, fd, "prog");
		}
		close(fd);
	}
	return 0;
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

#define MAX_LINKS 16

/* Open, load and attach every program of OBJ; a program that does not
 * attach (a tracepoint this kernel lacks) is skipped, not fatal. */
static struct bpf_object *load_attach(const char *path, struct bpf_link **links, int *nlinks)
{
	struct bpf_program *prog;
	struct bpf_object *obj;

	libbpf_set_print(libbpf_quiet);
	obj = bpf_object__open_file(path, NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "bpfstats: cannot load %s\n", path);
		bpf_object__close(obj);
		return NULL;
	}
	bpf_object__for_each_program(prog, obj) {
		struct bpf_link *l;

		if (*nlinks >= MAX_LINKS)
			break;
		l = bpf_program__attach(prog);
		if (!l) {
			fprintf(stderr, "bpfstats: cannot attach %s (skipped)\n",
				bpf_program__name(prog));
			continue;
		}
		links[(*nlinks)++] = l;
	}
	return obj;
}

static volatile sig_atomic_t stop_attach;

static void on_stop(int sig)
{
	(void)sig;
	stop_attach = 1;
}

static int cmd_attach(int argc, char **argv)
{
	struct bpf_link *links[MAX_LINKS];
	const char *path = NULL;
	struct bpf_object *obj;
	int nlinks = 0, ready_fd = -1;
	struct sigaction sa = { .sa_handler = on_stop };
	sigset_t mask, old;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--ready-fd") && i + 1 < argc)
			ready_fd = atoi(argv[++i]);
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			usage();
	}
	if (!path || ready_fd < 0)
		usage();
	/* block the stop signals until we wait for them: one that comes
	 * while we attach is not lost */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	obj = load_attach(path, links, &nlinks);
	if (!obj)
		return 1;
	if (!nlinks) {
		fprintf(stderr, "bpfstats: no program of %s attached\n", path);
		bpf_object__close(obj);
		return 1;
	}
	if (write(ready_fd, "ready\n", 6) != 6)
		perror("bpfstats: --ready-fd");
	close(ready_fd);
	while (!stop_attach)
		sigsuspend(&old);
	for (int k = 0; k < nlinks; k++)
		bpf_link__destroy(links[k]);
	bpf_object__close(obj);
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	const char *empty = NULL, *outpath = NULL;
	struct bpf_object *obj = NULL;
	struct bpf_link *links[MAX_LINKS];
	int nlinks = 0, stats_fd, status = 0, i;
	struct bpf_program *prog;
	pid_t child;
	FILE *out;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--empty") && i + 1 < argc)
			empty = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			outpath = argv[++i];
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			usage();
	}
	if (i >= argc)
		usage();

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		fprintf(stderr, "bpfstats: BPF_ENABLE_STATS: %s\n", strerror(-stats_fd));
		return 1;
	}
	if (empty) {
		obj = load_attach(empty, links, &nlinks);
		if (!obj)
			return 1;
	}

	child = fork();
	if (child < 0) {
		perror("bpfstats: fork");
		return 1;
	}
	if (child == 0) {
		close(stats_fd);
		execvp(argv[i], argv + i);
		fprintf(stderr, "bpfstats: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	signal(SIGINT, SIG_IGN); /* the command handles it; we report after */
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;

	if (obj) {
		out = outpath ? fopen(outpath, "w") : stdout;
		if (!out) {
			perror("bpfstats: --out");
			out = stdout;
		}
		bpf_object__for_each_program(prog, obj)
			print_prog(out, bpf_program__fd(prog), "empty");
		if (out != stdout)
			fclose(out);
		for (int k = 0; k < nlinks; k++)
			bpf_link__destroy(links[k]);
		bpf_object__close(obj);
	}
	close(stats_fd); /* stats off again (unless someone else holds them) */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 2, argv + 2);
	if (!strcmp(argv[1], "attach"))
		return cmd_attach(argc - 2, argv + 2);
	usage();
	return 2;
}
