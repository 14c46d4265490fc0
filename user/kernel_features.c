// SPDX-License-Identifier: GPL-2.0
/* `memprobe limits --features`: what this kernel offers memprobe. */
#include "kernel_features.h"
#include "attr.h"
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

/*
 * A rung's target as struct mp_hook's target spells it, from its label:
 * "tracepoint memcg:a + b" -> "memcg:a + memcg:b", "fentry f" -> "f",
 * "polling memory.stat pgfault (...)" -> "memory.stat pgfault".
 * STOPGAP until mp_attr_rung() gives the target itself (the engine's
 * attr_plan.c knows it): the lead replaces this at merge.
 */
static void rung_target(const char *kind, const char *label, char *buf, size_t len)
{
	const char *s = label, *colon, *group = "";
	int glen = 0;

	buf[0] = '\0';
	if (!strcmp(kind, "poll")) {
		s += strncmp(s, "polling ", 8) ? 0 : 8;
		s += strncmp(s, "the cgroup's ", 13) ? 0 : 13;
		snprintf(buf, len, "%.*s", (int)strcspn(s, "("), s);
		if (buf[0] && buf[strlen(buf) - 1] == ' ')
			buf[strlen(buf) - 1] = '\0';
		return;
	}
	s = strrchr(label, ' ') ? label + strcspn(label, " ") : label;
	if (!strcmp(kind, "raw_tp"))
		s = strstr(label, "tracepoint ") ? strstr(label, "tracepoint ") + 10 : s;
	while (*s == ' ')
		s++;
	colon = strchr(s, ':');
	if ((!strcmp(kind, "tp_btf") || !strcmp(kind, "raw_tp")) && colon) {
		group = s;
		glen = (int)(colon - s + 1);
		s = colon + 1;
	}
	for (int j = 0; *s; j++) {
		size_t n = strcspn(s, " ");

		mp_appendf(buf, len, "%s%.*s%.*s", j ? " + " : "", glen, group, (int)n, s);
		s += n;
		s += strncmp(s, " + ", 3) ? strlen(s) : 3;
	}
}

static cJSON *rungs_json(const struct mp_attr *a, int c)
{
	cJSON *rungs = cJSON_CreateArray();
	const char *kind, *label, *why;
	bool used;

	for (int i = 0; mp_attr_rung(a, c, i, &kind, &label, &why, &used) == 0; i++) {
		cJSON *r = cJSON_CreateObject();
		char target[160];

		rung_target(kind, label, target, sizeof(target));
		cJSON_AddStringToObject(r, "kind", kind);
		cJSON_AddStringToObject(r, "label", label);
		cJSON_AddStringToObject(r, "target", target);
		cJSON_AddStringToObject(r, "status", used ? "used" : !why ? "not tried" :
					why[0] ? why : "usable");
		cJSON_AddItemToArray(rungs, r);
	}
	return rungs;
}

/* A string member, null when NULL or empty (no hook). */
static void add_str_or_null(cJSON *o, const char *name, const char *v)
{
	if (v && v[0])
		cJSON_AddStringToObject(o, name, v);
	else
		cJSON_AddNullToObject(o, name);
}

/* One concern of the plan: ids beside the words, and every rung. */
static cJSON *plan_entry(const struct mp_attr *a, int c)
{
	const struct mp_hook *hk = &mp_attr_hooks(a)[c];
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "concern", hk->concern);
	cJSON_AddStringToObject(o, "name", hk->name);
	add_str_or_null(o, "hook", hk->hook);
	add_str_or_null(o, "kind", hk->hook[0] ? hk->kind : NULL);
	add_str_or_null(o, "target", hk->hook[0] ? hk->target : NULL);
	cJSON_AddBoolToObject(o, "polled", hk->polled);
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
	struct mp_attr_opts ao = { .btf_path = btf_path, .judge_all_rungs = true };
	struct mp_attr *a = NULL;
	char err[320] = "";
	cJSON *doc = mp_doc_new("features", h), *plan, *cats;

	mp_attr_start(&ao, &a, err, sizeof(err));
	if (!a && !err[0])
		snprintf(err, sizeof(err), "cannot start a BPF session: out of memory");
	/* kept beside host's: the names scripts read before the header came */
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
	for (int c = 0; a && c < MP_NR_CONCERNS; c++)
		cJSON_AddItemToArray(plan, plan_entry(a, c));
	/* without BTF nothing tells which items the kernel keeps */
	for (int k = 0; a && !err[0] && k < MP_NR_CATS; k++)
		cJSON_AddBoolToObject(cats, mp_cat_names[k], mp_attr_cat_available(a, k, NULL));
	*ok = a != NULL;
	mp_attr_stop(a);
	return doc;
}

int mp_features_print(const struct mp_host *h, const char *format, const char *btf_path)
{
	bool ok;
	cJSON *doc = mp_features_doc(h, btf_path, &ok);
	int ret = mp_emit("limits", doc, format, stdout);

	cJSON_Delete(doc);
	return ret ? ret : ok ? 0 : MP_EXIT_RUNTIME;
}
