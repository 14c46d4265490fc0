// SPDX-License-Identifier: GPL-2.0
/* `memprobe limits --features`: what this kernel offers memprobe. */
#include "kernel_features.h"
#include "attr.h"
#include "attribution.h"
#include "doc.h"
#include "json.h"
#include "render.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static cJSON *rungs_json(const struct mp_attr *a, int c)
{
	cJSON *rungs = cJSON_CreateArray();
	struct mp_rung_info ri;

	for (int i = 0; mp_attr_rung(a, c, i, &ri) == 0; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "kind", ri.kind);
		cJSON_AddStringToObject(r, "label", ri.label);
		cJSON_AddStringToObject(r, "target", ri.target);
		cJSON_AddStringToObject(r, "status", ri.used ? "used" : !ri.why_not ? "not tried" :
					ri.why_not[0] ? ri.why_not : "usable");
		cJSON_AddItemToArray(rungs, r);
	}
	return rungs;
}

/* One concern of the plan: ids beside the words, and every rung. */
static cJSON *plan_entry(const struct mp_attr *a, int c)
{
	cJSON *o = mp_hook_json(&mp_attr_hooks(a)[c]);

	cJSON_AddItemToObject(o, "rungs", rungs_json(a, c));
	return o;
}

/*
 * Found the way a run finds it (the programs loaded and attached, to a
 * target that matches nothing), like `bpftool feature probe`: per concern,
 * every rung tried and why it was passed over.
 */
cJSON *mp_features_doc(const struct mp_host *h, const char *btf_path, bool *ok)
{
	/* the run's choice of memcg path is by the memory controller's version,
	 * and its free hook by the stacks: as a run with default options */
	struct mp_attr_opts ao = { .btf_path = btf_path, .judge_all_rungs = true,
				   .cg_version = h->v1_memory_mount[0] ? 1 : 2,
				   .stack_sample_period = MP_ATTR_STACK_SAMPLE_DEFAULT };
	struct mp_attr *a = NULL;
	char err[320] = "";
	cJSON *doc = mp_doc_new("features", h), *plan, *cats;
	const char *no_bpf = NULL;

	mp_attr_start(&ao, &a, err, sizeof(err));
	if (!a && !err[0])
		snprintf(err, sizeof(err), "cannot start a BPF session: out of memory");
	if (a)
		no_bpf = mp_attr_no_bpf(a, NULL);
	/* kept beside host's: the names scripts read before the header came */
	cJSON_AddStringToObject(doc, "kernel_release", h->kernel_release);
	/* BPF refused is not BTF missing: the BTF is named whenever it was read */
	cJSON_AddStringToObject(doc, "btf", a && (!no_bpf || strcmp(no_bpf, "no_btf")) ?
				mp_attr_btf_source(a) : "");
	cJSON_AddStringToObject(doc, "bpf", !a ? "load_failed" : no_bpf ? no_bpf : "usable");
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
	for (int c = 0; a && c < MP_NR_CONCERNS; c++)
		cJSON_AddItemToArray(plan, plan_entry(a, c));
	/* without BTF nothing tells which items the kernel keeps */
	for (int k = 0; a && !err[0] && k < MP_NR_CATS; k++)
		cJSON_AddBoolToObject(cats, mp_cat_names[k], mp_attr_cat_available(a, k, NULL));
	*ok = a != NULL;
	mp_attr_stop(a);
	return doc;
}
