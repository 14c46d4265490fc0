// SPDX-License-Identifier: GPL-2.0
/* `memprobe limits --features`: what this kernel offers memprobe. */
#include "kernel_features.h"
#include "attr.h"
#include "json.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
int mp_features_print(const struct mp_host *h, const char *format, const char *btf_path)
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

		cJSON_AddStringToObject(o, "concern", hk->name);
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
