// SPDX-License-Identifier: GPL-2.0
/*
 * The raw BTF walker (user/btf_scan.c) and the facts memprobe learns with it
 * (mp_attr_learn_btf) against libbpf: over the running kernel's
 * /sys/kernel/btf/vmlinux, a raw copy of it, an ELF holding it as .BTF,
 * and broken files. The reference facts are learnt by the libbpf-based
 * code memprobe used before the walker (kept here, not in memprobe).
 * Skips (0 checks) where the kernel has no BTF.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/btf.h>

#include "attr_int.h"
#include "btf_scan.h"
#include "cgroup.h"
#include "unit.h"

static const char vmlinux[] = "/sys/kernel/btf/vmlinux";

/* Rung c/i's tracepoint or function names, split from its target ("a + b",
 * tracepoints as "group:name"); returns how many (0: a polled rung). */
static int rung_fns(const struct mp_attr *a, int c, int i, char fn[2][96], bool *tp)
{
	struct mp_rung_info ri;
	char *s, *p;
	int n = 0;

	if (mp_attr_rung(a, c, i, &ri) || !strcmp(ri.kind, "poll"))
		return 0;
	*tp = !strcmp(ri.kind, "tp_btf") || !strcmp(ri.kind, "raw_tp");
	for (s = ri.target; s && n < 2; s = p) {
		if ((p = strstr(s, " + ")))
			*p = '\0', p += 3;
		snprintf(fn[n++], 96, "%s", *tp && strchr(s, ':') ? strchr(s, ':') + 1 : s);
	}
	return n;
}

/* The facts as memprobe learnt them through libbpf before btf_scan.c. */
static bool ref_victim(const struct btf *btf, const struct btf_type *td)
{
	const struct btf_type *t = btf__type_by_id(btf, btf__resolve_type(btf, td->type));

	if (!t || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	t = btf__type_by_id(btf, btf__resolve_type(btf, btf_params(t)[1].type));
	return t && btf_is_ptr(t);
}

static bool ref_item(const char *type, const char *m, const char *type_, const char *item)
{
	return type_ && mp_core_name_eq(type, type_) && mp_core_name_eq(m, item);
}

static void ref_enum(const struct btf *btf, const struct btf_type *t, const char *name,
		     struct mp_kfacts *k)
{
	const struct btf_enum *e = btf_enum(t);
	bool items = false;

	for (int c = 0; c < MP_NR_CATS; c++)
		items |= mp_core_name_eq(name, mp_cats[c].item_type) ||
			 (mp_cats[c].alt_type && mp_core_name_eq(name, mp_cats[c].alt_type));
	for (int i = 0; i < btf_vlen(t); i++) {
		const char *m = btf__name_by_offset(btf, e[i].name_off);

		if (!name[0]) {
			if (strcmp(m, "___GFP_ACCOUNT_BIT") == 0)
				k->gfp_account = 1ULL << e[i].val;
		} else if (strcmp(name, "bpf_func_id") == 0) {
			if (strcmp(m, "BPF_FUNC_get_current_task_btf") == 0)
				k->have_task_btf = true;
		} else if (items) {
			for (int c = 0; c < MP_NR_CATS; c++) {
				bool hit = ref_item(name, m, mp_cats[c].item_type, mp_cats[c].item) ||
					   ref_item(name, m, mp_cats[c].alt_type, mp_cats[c].alt_item);
				uint8_t *tab = mp_core_name_eq(name, "node_stat_item") ?
					       k->lruvec_item_cat : k->memcg_item_cat;

				if (hit && e[i].val < MP_MAX_ITEMS) {
					k->cat[c] = true;
					tab[e[i].val] = (uint8_t)(c + 1);
				}
			}
		}
	}
}

static void ref_learn(const struct mp_attr *a, const struct btf *btf, struct mp_kfacts *k)
{
	int n = (int)btf__type_cnt(btf);

	memset(k, 0, sizeof(*k));
	k->gfp_account = 1ULL << 22;
	for (int id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);
		bool tp = btf_is_typedef(t) && strncmp(name, "btf_trace_", 10) == 0;

		if (btf_is_enum(t)) {
			ref_enum(btf, t, name, k);
			continue;
		}
		if (!tp && !btf_is_func(t))
			continue;
		if (tp && strcmp(name, "btf_trace_mark_victim") == 0)
			k->mark_victim_has_task = ref_victim(btf, t);
		for (int c = 0; c < MP_NR_CONCERNS; c++)
			for (int i = 0; i < MAX_RUNGS; i++) {
				char fn[2][96];
				bool want_tp = false;
				int nf = rung_fns(a, c, i, fn, &want_tp);

				for (int j = 0; j < nf; j++)
					if (want_tp == tp && !strcmp(tp ? name + 10 : name, fn[j]))
						k->fn_id[c][i][j] = id;
			}
	}
}

/* Every fact of got against want, each printed on a mismatch. */
static void check_facts(const char *what, const struct mp_kfacts *got,
			const struct mp_kfacts *want)
{
	char w[160];
	int ids = 0;

	for (int c = 0; c < MP_NR_CONCERNS; c++)
		for (int i = 0; i < MAX_RUNGS; i++)
			for (int j = 0; j < 2; j++) {
				snprintf(w, sizeof(w), "%s: fn_id[%d][%d][%d]", what, c, i, j);
				CHECK_U64(got->fn_id[c][i][j], want->fn_id[c][i][j], w);
				ids += want->fn_id[c][i][j] != 0;
			}
	for (int c = 0; c < MP_NR_CATS; c++) {
		snprintf(w, sizeof(w), "%s: category %s", what, mp_cat_names[c]);
		CHECK_U64(got->cat[c], want->cat[c], w);
	}
	/* the BPF side's item-to-category tables, value by value */
	for (int v = 0; v < MP_MAX_ITEMS; v++) {
		snprintf(w, sizeof(w), "%s: lruvec item %d's category", what, v);
		CHECK_U64(got->lruvec_item_cat[v], want->lruvec_item_cat[v], w);
		snprintf(w, sizeof(w), "%s: memcg item %d's category", what, v);
		CHECK_U64(got->memcg_item_cat[v], want->memcg_item_cat[v], w);
	}
	snprintf(w, sizeof(w), "%s: gfp_account", what);
	CHECK_U64(got->gfp_account, want->gfp_account, w);
	snprintf(w, sizeof(w), "%s: mark_victim_has_task", what);
	CHECK_U64(got->mark_victim_has_task, want->mark_victim_has_task, w);
	snprintf(w, sizeof(w), "%s: have_task_btf", what);
	CHECK_U64(got->have_task_btf, want->have_task_btf, w);
	/* a kernel's BTF has the page fault and allocation tracepoints at least */
	CHECK_GE_INT(ids, 4, "%s: only %d rung functions found", what, ids);
}

/* The walker's records, names and resolutions against libbpf's, type by type. */
static void check_walk(const char *path)
{
	struct btf *btf = btf__parse(path, NULL);
	struct mp_btf b;
	int bad = 0, ret = mp_btf_load(path, &b);
	uint32_t n;

	CHECK(ret == 0 && btf, "%s: mp_btf_load %d, btf__parse %s", path, ret,
	      btf ? "ok" : "failed");
	if (ret || !btf) {
		btf__free(btf);
		if (!ret)
			mp_btf_free(&b);
		return;
	}
	n = btf__type_cnt(btf);
	CHECK_U64(b.nr_types, n, "type count");
	for (uint32_t id = 0; id < n && id < b.nr_types && bad < 5; id++) {
		const struct btf_type *g = mp_btf_type(&b, id), *w = btf__type_by_id(btf, id);
		int rg = mp_btf_resolve(&b, id), rw = btf__resolve_type(btf, id);

		if (memcmp(g, w, sizeof(*g)) ||
		    strcmp(mp_btf_str(&b, g->name_off), btf__name_by_offset(btf, w->name_off)) ||
		    (rg != rw && !(rg < 0 && rw < 0))) {
			bad++;
			CHECK(0, "type %u: kind %u/%u name '%s'/'%s' resolves to %d/%d", id,
			      btf_kind(g), btf_kind(w), mp_btf_str(&b, g->name_off),
			      btf__name_by_offset(btf, w->name_off), rg, rw);
		}
	}
	CHECK_EQ_INT(bad, 0, "%s: %d types differ from libbpf's", path, bad);
	CHECK(mp_btf_type(&b, n) == NULL, "type past the last: NULL");
	mp_btf_free(&b);
	btf__free(btf);
}

/* Facts from path, through mp_attr_learn_btf, against the reference's. */
static void check_file(const struct mp_attr *a, const char *what, const char *path)
{
	struct mp_kfacts got, want;
	struct btf *btf = path ? btf__parse(path, NULL) : btf__load_vmlinux_btf();
	char err[256] = "";
	int ret = mp_attr_learn_btf(path, &got, err, sizeof(err));

	CHECK_EQ_INT(ret, 0, "%s: mp_attr_learn_btf: %d %s", what, ret, err);
	CHECK(btf != NULL, "%s: libbpf cannot parse it", what);
	if (ret || !btf) {
		btf__free(btf);
		return;
	}
	ref_learn(a, btf, &want);
	btf__free(btf);
	check_facts(what, &got, &want);
}

/* Blobs made by hand: one int type, then each broken in one way. */
static void check_crafted(void)
{
	struct {
		struct btf_header h;
		struct btf_type t;
		uint32_t enc;
		char strs[8];
	} blob = {
		.h = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(blob.h),
		       .type_off = 0, .type_len = sizeof(blob.t) + 4,
		       .str_off = sizeof(blob.t) + 4, .str_len = 5 },
		.t = { .name_off = 1, .info = BTF_KIND_INT << 24, .size = 4 },
		.enc = 32, .strs = "\0int",
	}, bad;
	struct mp_btf b;

	CHECK_U64(mp_btf_from_data(&blob, sizeof(blob), &b), 0, "crafted: one int");
	CHECK_U64(b.nr_types, 2, "crafted: ids 0 and 1");
	CHECK_STR(mp_btf_str(&b, mp_btf_type(&b, 1)->name_off), "int", "crafted: its name");
	CHECK_EQ_INT(mp_btf_resolve(&b, 1), 1, "crafted: an int resolves to itself");
	mp_btf_free(&b);
	bad = blob;
	bad.h.version = 2;
	CHECK_U64(mp_btf_from_data(&bad, sizeof(bad), &b), (uint64_t)-EINVAL, "version 2");
	bad = blob;
	bad.h.str_len = 100;
	CHECK_U64(mp_btf_from_data(&bad, sizeof(bad), &b), (uint64_t)-EINVAL,
		  "strings past the end");
	bad = blob;
	bad.h.type_len = sizeof(bad.t); /* the int's encoding cut off */
	bad.h.str_off = sizeof(bad.t);
	CHECK_U64(mp_btf_from_data(&bad, sizeof(bad), &b), (uint64_t)-EINVAL,
		  "record past its section");
	bad = blob;
	bad.t.info = 31u << 24;
	CHECK_U64(mp_btf_from_data(&bad, sizeof(bad), &b), (uint64_t)-EINVAL, "unknown kind");
	bad = blob;
	bad.h.magic = 0x9feb; /* the other byte order: libbpf's to swap */
	CHECK_U64(mp_btf_from_data(&bad, sizeof(bad), &b), (uint64_t)-EPROTO, "swapped magic");
}

/* Broken files: refused, with the code btf_scan.h gives. */
static void check_broken(const char *dir)
{
	char p[512], cmd[1200];
	struct mp_btf b;
	struct mp_kfacts k;
	char err[256];
	int ret;

	snprintf(p, sizeof(p), "%s/truncated.btf", dir);
	snprintf(cmd, sizeof(cmd), "head -c 100000 %s > %s", vmlinux, p);
	CHECK_EQ_INT(system(cmd), 0, "%s", cmd);
	CHECK_U64(mp_btf_load(p, &b), (uint64_t)-EINVAL, "truncated raw BTF: -EINVAL");
	ret = mp_attr_learn_btf(p, &k, err, sizeof(err));
	CHECK(ret < 0 && strstr(err, "not a BTF file"), "truncated --btf: %d '%s'", ret, err);
	CHECK_U64(mp_btf_load("/proc/self/status", &b), (uint64_t)-EPROTO,
		  "not BTF: -EPROTO");
	CHECK_U64(mp_btf_load("/no/such/file", &b), (uint64_t)-ENOENT, "missing: -ENOENT");
	unlink(p);
	check_crafted();
}

/* The kernel's own NR_ANON_MAPPED and MEMCG_KMEM, as libbpf reads them,
 * land on anon and kernel in the tables the BPF side indexes by value. */
static void check_known_items(void)
{
	struct btf *btf = btf__parse(vmlinux, NULL);
	struct mp_kfacts k;
	char err[256];
	int found = 0;

	CHECK(mp_attr_learn_btf(NULL, &k, err, sizeof(err)) == 0 && btf, "learn: %s", err);
	for (unsigned id = 1; btf && id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *n = btf__name_by_offset(btf, t->name_off);
		bool node = !strcmp(n, "node_stat_item"), memcg = !strcmp(n, "memcg_stat_item");

		for (int i = 0; btf_is_enum(t) && (node || memcg) && i < btf_vlen(t); i++) {
			const char *m = btf__name_by_offset(btf, btf_enum(t)[i].name_off);
			unsigned v = (unsigned)btf_enum(t)[i].val;

			if (node && !strcmp(m, "NR_ANON_MAPPED") && ++found)
				CHECK_U64(k.lruvec_item_cat[v], MP_CAT_ANON + 1, "NR_ANON_MAPPED: anon");
			if (memcg && !strcmp(m, "MEMCG_KMEM") && ++found)
				CHECK_U64(k.memcg_item_cat[v], MP_CAT_KERNEL + 1, "MEMCG_KMEM: kernel");
			if (node && !strcmp(m, "NR_INACTIVE_ANON") && ++found)
				CHECK_U64(k.lruvec_item_cat[v], 0, "NR_INACTIVE_ANON: no category");
		}
	}
	CHECK_U64(found, 3, "the three items found in the kernel's BTF");
	btf__free(btf);
}

int main(void)
{
	char dir[] = "/tmp/memprobe-test-btf.XXXXXX", raw[600], elf[600], cmd[1400];
	struct mp_attr *a = calloc(1, sizeof(*a));

	if (access(vmlinux, R_OK) || !a || !mkdtemp(dir)) {
		SKIP("no %s: the BTF scan's checks", vmlinux);
		free(a);
		return unit_done("btf_scan");
	}
	for (int c = 0; c < MP_NR_CONCERNS; c++)
		a->chosen[c] = -1;
	a->judged_all = true;
	snprintf(raw, sizeof(raw), "%s/vmlinux.btf", dir);
	snprintf(elf, sizeof(elf), "%s/vmlinux.elf", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", vmlinux, raw);
	CHECK_EQ_INT(system(cmd), 0, "%s", cmd);
	check_walk(vmlinux);
	check_walk(raw);
	check_file(a, "kernel's BTF", NULL);
	check_known_items();
	check_file(a, "--btf raw file", raw);
	/* an ELF with the BTF as its .BTF section: libbpf extracts it */
	snprintf(cmd, sizeof(cmd), "objcopy -I binary -O elf64-x86-64 "
		 "--rename-section .data=.BTF %s %s 2>/dev/null", raw, elf);
	if (system(cmd) == 0)
		check_file(a, "--btf ELF", elf);
	else
		SKIP("no objcopy for x86-64: the ELF case");
	check_broken(dir);
	unlink(raw);
	unlink(elf);
	rmdir(dir);
	free(a);
	return unit_done("btf_scan");
}
