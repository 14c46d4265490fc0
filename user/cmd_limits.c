// SPDX-License-Identifier: GPL-2.0
#include "cmd_limits.h"
#include "attr.h"
#include "json.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cJSON *mp_host_json(const struct mp_host *h)
{
	cJSON *o = cJSON_CreateObject();

	mp_json_add_u64(o, "mem_total_bytes", h->mem_total_bytes);
	mp_json_add_u64(o, "mem_available_bytes", h->mem_available_bytes);
	mp_json_add_u64(o, "page_size_bytes", (uint64_t)h->page_size);
	cJSON_AddStringToObject(o, "thp_enabled", h->thp_enabled);
	cJSON_AddStringToObject(o, "thp_defrag", h->thp_defrag);
	cJSON_AddStringToObject(o, "kernel_release", h->kernel_release);
	cJSON_AddBoolToObject(o, "btf", h->btf_present);
	cJSON_AddStringToObject(o, "cgroup_mode", mp_cg_mode_name(h->cg_mode));
	return o;
}

cJSON *mp_cgroup_json(const struct mp_cgroup *cg)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "path", cg->path);
	cJSON_AddStringToObject(o, "dir", cg->dir);
	cJSON_AddStringToObject(o, "version", cg->version == 1 ? "v1" : "v2");
	cJSON_AddBoolToObject(o, "host_root", cg->host_root);
	mp_json_add_limit(o, "limit_bytes", cg->limit_bytes);
	mp_json_add_u64(o, "effective_limit_bytes", cg->effective_limit_bytes);
	cJSON_AddStringToObject(o, "effective_limit_from", cg->effective_from);
	if (cg->has_high) /* v2 only: v1 has no memory.high */
		mp_json_add_limit(o, "high_bytes", cg->high_bytes);
	if (cg->has_swap_limit)
		mp_json_add_limit(o, cg->version == 1 ? "memsw_limit_bytes" : "swap_limit_bytes",
				  cg->swap_limit_bytes);
	mp_json_add_u64(o, "usage_bytes", cg->usage_bytes);
	if (cg->has_peak)
		mp_json_add_u64(o, "peak_bytes", cg->peak_bytes);
	else
		cJSON_AddNullToObject(o, "peak_bytes");
	mp_json_add_u64(o, "headroom_bytes", cg->headroom_bytes);
	cJSON_AddStringToObject(o, "headroom_from", cg->headroom_from);
	return o;
}

static bool is_dir(const char *root, const char *path)
{
	char p[PATH_MAX];
	struct stat st;

	return !mp_path(p, sizeof(p), "%s%s", path[0] == '/' ? root : "", path) &&
	       stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int mp_resolve_target(const char *cmd, const char *root, const struct mp_host *h,
		      const char *path, const char *pid_arg, struct mp_cgroup *cg)
{
	int err;

	if (h->cg_mode == MP_CG_NONE || (!h->v1_memory_mount[0] && !h->v2_has_memory)) {
		fprintf(stderr, "memprobe %s: no memory cgroup controller is mounted; "
			"mount cgroup2 with memory enabled, or the v1 memory controller\n", cmd);
		return MP_EXIT_RUNTIME;
	}
	if (path) {
		err = mp_cgroup_from_path(root, h, path, cg);
		if (err == -ENOENT && is_dir(root, path)) {
			fprintf(stderr, "memprobe %s: --cgroup %s: a directory, but not a memory cgroup; "
				"give a directory under %s or a path as /proc/PID/cgroup shows it\n",
				cmd, path, h->v1_memory_mount[0] ? h->v1_memory_mount : h->v2_mount);
			return MP_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "memprobe %s: --cgroup %s: no such memory cgroup (%s); "
				"give a directory under %s or a path as /proc/PID/cgroup shows it\n",
				cmd, path, strerror(-err),
				h->v1_memory_mount[0] ? h->v1_memory_mount : h->v2_mount);
			return MP_EXIT_USAGE;
		}
	} else {
		long pid = 0;

		if (pid_arg) {
			char *end;

			errno = 0;
			pid = strtol(pid_arg, &end, 10);
			if (errno || *end || end == pid_arg || pid <= 0 || pid > 0x3fffffff) {
				fprintf(stderr, "memprobe %s: --pid %s: not a process id; "
					"give a positive number\n", cmd, pid_arg);
				return MP_EXIT_USAGE;
			}
		}
		if (pid && mp_pid_is_zombie(root, (pid_t)pid)) {
			/* its /proc/PID/cgroup names the root: it has left its cgroup */
			fprintf(stderr, "memprobe %s: --pid %ld: the process has exited (a zombie "
				"not yet reaped by its parent); give the pid of a running process\n",
				cmd, pid);
			return MP_EXIT_USAGE;
		}
		err = mp_cgroup_of_pid(root, h, (pid_t)pid, cg);
		if (err == -ESRCH) {
			fprintf(stderr, "memprobe %s: --pid %ld: no such process; "
				"give the pid of a running process\n", cmd, pid);
			return MP_EXIT_USAGE;
		}
		if (err) {
			fprintf(stderr, "memprobe %s: cannot find the memory cgroup of %s: %s\n",
				cmd, pid ? pid_arg : "memprobe", strerror(-err));
			return pid ? MP_EXIT_USAGE : MP_EXIT_RUNTIME;
		}
	}
	err = mp_cgroup_read(root, h, cg);
	if (err) {
		fprintf(stderr, "memprobe %s: cannot read %s: %s\n", cmd, cg->dir, strerror(-err));
		return MP_EXIT_RUNTIME;
	}
	return 0;
}

static void print_text(const struct mp_host *h, const struct mp_cgroup *cg)
{
	char b[32];

	printf("host\n");
	printf("  kernel              %s (BTF %s)\n", h->kernel_release,
	       h->btf_present ? "present" : "absent");
	printf("  MemTotal            %s (%" PRIu64 " bytes)\n",
	       mp_fmt_bytes(h->mem_total_bytes, b, sizeof(b)), h->mem_total_bytes);
	printf("  MemAvailable        %s\n", mp_fmt_bytes(h->mem_available_bytes, b, sizeof(b)));
	printf("  page size           %ld\n", h->page_size);
	printf("  THP                 enabled=%s defrag=%s\n",
	       h->thp_enabled[0] ? h->thp_enabled : "n/a", h->thp_defrag[0] ? h->thp_defrag : "n/a");
	printf("  cgroup mode         %s\n", mp_cg_mode_name(h->cg_mode));
	printf("cgroup %s (%s)%s\n", cg->path, cg->version == 1 ? "v1" : "v2",
	       cg->host_root ? ", the host's root memory cgroup" : "");
	printf("  directory           %s\n", cg->dir);
	printf("  limit               %s\n", mp_fmt_bytes(cg->limit_bytes, b, sizeof(b)));
	printf("  effective limit     %s (%" PRIu64 " bytes), set by %s\n",
	       mp_fmt_bytes(cg->effective_limit_bytes, b, sizeof(b)), cg->effective_limit_bytes,
	       cg->effective_from);
	if (cg->has_high)
		printf("  memory.high         %s\n", mp_fmt_bytes(cg->high_bytes, b, sizeof(b)));
	if (cg->has_swap_limit)
		printf("  %-19s %s\n", cg->version == 1 ? "memsw limit" : "swap limit",
		       mp_fmt_bytes(cg->swap_limit_bytes, b, sizeof(b)));
	printf("  usage               %s\n", mp_fmt_bytes(cg->usage_bytes, b, sizeof(b)));
	if (cg->has_peak)
		printf("  peak                %s\n", mp_fmt_bytes(cg->peak_bytes, b, sizeof(b)));
	printf("  headroom            %s (%" PRIu64 " bytes), set by %s\n",
	       mp_fmt_bytes(cg->headroom_bytes, b, sizeof(b)), cg->headroom_bytes, cg->headroom_from);
}

static void env_u64(const char *name, uint64_t v)
{
	if (v == MP_UNLIMITED)
		printf("MEMPROBE_%s=max\n", name);
	else
		printf("MEMPROBE_%s=%" PRIu64 "\n", name, v);
}

/* Shell-safe: single quotes, with ' written as '\'' */
static void env_str(const char *name, const char *v)
{
	printf("MEMPROBE_%s='", name);
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*v);
	}
	puts("'");
}

static void print_env(const struct mp_host *h, const struct mp_cgroup *cg)
{
	env_u64("MEM_TOTAL_BYTES", h->mem_total_bytes);
	env_u64("MEM_AVAILABLE_BYTES", h->mem_available_bytes);
	env_str("CGROUP_MODE", mp_cg_mode_name(h->cg_mode));
	env_str("CGROUP_PATH", cg->path);
	env_str("CGROUP_DIR", cg->dir);
	env_u64("LIMIT_BYTES", cg->limit_bytes);
	env_u64("EFFECTIVE_LIMIT_BYTES", cg->effective_limit_bytes);
	if (cg->has_high)
		env_u64("HIGH_BYTES", cg->high_bytes);
	if (cg->has_swap_limit)
		env_u64(cg->version == 1 ? "MEMSW_LIMIT_BYTES" : "SWAP_LIMIT_BYTES",
			cg->swap_limit_bytes);
	env_u64("USAGE_BYTES", cg->usage_bytes);
	if (cg->has_peak)
		env_u64("PEAK_BYTES", cg->peak_bytes);
	env_u64("HEADROOM_BYTES", cg->headroom_bytes);
}

/* BTF files of loaded modules (/sys/kernel/btf/ less vmlinux): with them,
 * fentry and tp_btf reach module functions and tracepoints. */
static int module_btf_count(void)
{
	DIR *d = opendir("/sys/kernel/btf");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.' && strcmp(e->d_name, "vmlinux") != 0;
	closedir(d);
	return n;
}

/*
 * --features: what this kernel offers memprobe, found the way a run finds
 * it (the programs loaded and attached, to a target that matches nothing),
 * like `bpftool feature probe`: per concern, every rung tried and why it was
 * passed over.
 */
static int print_features(const struct mp_host *h, const char *format, const char *btf_path)
{
	struct mp_attr_opts ao = { .btf_path = btf_path, .judge_all_rungs = true };
	struct mp_attr *a = NULL;
	char err[320] = "";
	cJSON *doc = cJSON_CreateObject(), *plan, *cats;
	int ret;

	ret = mp_attr_start(&ao, &a, err, sizeof(err));
	cJSON_AddStringToObject(doc, "kernel_release", h->kernel_release);
	cJSON_AddStringToObject(doc, "btf", a && !err[0] ? mp_attr_btf_source(a) : "");
	cJSON_AddNumberToObject(doc, "module_btf_files", module_btf_count());
	cJSON_AddBoolToObject(doc, "kprobes",
			      access("/sys/bus/event_source/devices/kprobe", F_OK) == 0);
	cJSON_AddStringToObject(doc, "cgroup_mode", mp_cg_mode_name(h->cg_mode));
	if (err[0]) {
		cJSON_AddStringToObject(doc, "error", err);
		fprintf(stderr, "memprobe limits: %s\n", err);
	}
	plan = cJSON_AddArrayToObject(doc, "plan");
	cats = cJSON_AddObjectToObject(doc, "categories");
	for (int c = 0; a && c < MP_NR_CONCERNS; c++) {
		const struct mp_hook *hk = &mp_attr_hooks(a)[c];
		cJSON *o = cJSON_CreateObject(), *rungs = cJSON_CreateArray();
		const char *kind, *label, *why;
		bool used;

		cJSON_AddStringToObject(o, "concern", hk->concern);
		if (hk->hook[0])
			cJSON_AddStringToObject(o, "hook", hk->hook);
		else
			cJSON_AddNullToObject(o, "hook");
		cJSON_AddBoolToObject(o, "polled", hk->polled);
		for (int i = 0; mp_attr_rung(a, c, i, &kind, &label, &why, &used) == 0; i++) {
			cJSON *r = cJSON_CreateObject();

			cJSON_AddStringToObject(r, "kind", kind);
			cJSON_AddStringToObject(r, "label", label);
			cJSON_AddStringToObject(r, "status", used ? "used" : !why ? "not tried" :
						why[0] ? why : "usable");
			cJSON_AddItemToArray(rungs, r);
		}
		cJSON_AddItemToObject(o, "rungs", rungs);
		cJSON_AddItemToArray(plan, o);
	}
	/* without BTF nothing tells which items the kernel keeps */
	for (int k = 0; a && !err[0] && k < MP_NR_CATS; k++)
		cJSON_AddBoolToObject(cats, mp_cat_names[k], mp_attr_cat_available(a, k, NULL));
	mp_attr_stop(a);

	if (strcmp(format, "json") == 0) {
		ret = mp_json_print(doc, stdout, 1) ? MP_EXIT_RUNTIME : a ? 0 : MP_EXIT_RUNTIME;
	} else {
		const cJSON *it, *r;

		printf("kernel          %s\n", cJSON_GetObjectItem(doc, "kernel_release")->valuestring);
		printf("BTF             %s\n", err[0] ? err : cJSON_GetObjectItem(doc, "btf")->valuestring);
		printf("module BTF      %d files\n", module_btf_count());
		printf("kprobes         %s\n", cJSON_IsTrue(cJSON_GetObjectItem(doc, "kprobes")) ?
		       "yes" : "no");
		printf("cgroup mode     %s\n", mp_cg_mode_name(h->cg_mode));
		cJSON_ArrayForEach(it, plan) {
			const cJSON *hk = cJSON_GetObjectItem(it, "hook");

			printf("\n%s: %s\n", cJSON_GetObjectItem(it, "concern")->valuestring,
			       cJSON_IsString(hk) ? hk->valuestring : "NONE");
			cJSON_ArrayForEach(r, cJSON_GetObjectItem(it, "rungs"))
				printf("  %-7s %-62s %s\n", cJSON_GetObjectItem(r, "kind")->valuestring,
				       cJSON_GetObjectItem(r, "label")->valuestring,
				       cJSON_GetObjectItem(r, "status")->valuestring);
		}
		if (a && !err[0]) {
			printf("\nmemory.stat categories kept per memcg:");
			cJSON_ArrayForEach(it, cats)
				printf(" %s%s", cJSON_IsTrue(it) ? "" : "-", it->string);
			printf("\n");
		}
		ret = fflush(stdout) ? MP_EXIT_RUNTIME : a ? 0 : MP_EXIT_RUNTIME;
	}
	cJSON_Delete(doc);
	return ret;
}

static char optbuf[64];

static void usage(FILE *f)
{
	fputs("usage: memprobe limits [--cgroup PATH | --pid PID] [--format text|json|env]\n"
	      "       memprobe limits --features [--format text|json] [--btf FILE]\n", f);
}

int mp_cmd_limits(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "format", required_argument, NULL, 'f' },
		{ "features", no_argument, NULL, 'F' },
		{ "btf", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = NULL, *pid = NULL, *format = "text", *btf = NULL;
	bool features = false;
	struct mp_host host;
	struct mp_cgroup cg;
	int c, ret;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:p:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'p': pid = optarg; break;
		case 'f': format = optarg; break;
		case 'F': features = true; break;
		case 'B':
			if ((ret = mp_attr_btf_opt("limits", optarg)))
				return ret;
			btf = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			fprintf(stderr, "memprobe limits: unknown option or missing value '%s'; "
				"see memprobe limits --help\n", mp_bad_option(argv, optbuf, sizeof(optbuf)));
			return MP_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "memprobe limits: unexpected argument '%s'; see memprobe limits --help\n",
			argv[optind]);
		return MP_EXIT_USAGE;
	}
	if (path && pid) {
		fputs("memprobe limits: --cgroup and --pid both given; give one of them\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (strcmp(format, "text") && strcmp(format, "json") && strcmp(format, "env")) {
		fprintf(stderr, "memprobe limits: --format %s: unknown; use text, json or env\n", format);
		return MP_EXIT_USAGE;
	}
	if (features && (path || pid)) {
		fputs("memprobe limits: --features describes the kernel, not a cgroup; "
		      "drop --cgroup and --pid\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (features && !strcmp(format, "env")) {
		fputs("memprobe limits: --features has no env format; use --format text or json\n",
		      stderr);
		return MP_EXIT_USAGE;
	}
	if (btf && !features) {
		fputs("memprobe limits: --btf goes with --features; add --features\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (features && geteuid() != 0) {
		fputs("memprobe limits: --features loads BPF programs; run it as root\n", stderr);
		return MP_EXIT_USAGE;
	}
	if (mp_host_read("", &host)) {
		fputs("memprobe limits: cannot read /proc/meminfo\n", stderr);
		return MP_EXIT_RUNTIME;
	}
	if (features)
		return print_features(&host, format, btf);
	if ((ret = mp_resolve_target("limits", "", &host, path, pid, &cg)))
		return ret;
	if (strcmp(format, "json") == 0) {
		cJSON *doc = cJSON_CreateObject();

		cJSON_AddItemToObject(doc, "host", mp_host_json(&host));
		cJSON_AddItemToObject(doc, "cgroup", mp_cgroup_json(&cg));
		ret = mp_json_print(doc, stdout, 1) ? MP_EXIT_RUNTIME : 0;
		cJSON_Delete(doc);
		return ret;
	}
	if (strcmp(format, "env") == 0)
		print_env(&host, &cg);
	else
		print_text(&host, &cg);
	return fflush(stdout) ? MP_EXIT_RUNTIME : 0;
}
