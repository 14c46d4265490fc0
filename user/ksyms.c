// SPDX-License-Identifier: GPL-2.0
#include "ksyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mp_ksyms {
	struct mp_ksym *syms;
	size_t n, cap;
	char *strs;
	size_t strs_len, strs_cap;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct mp_ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Append a string to the pool; returns its offset or -1. */
static long pool_add(struct mp_ksyms *ks, const char *s)
{
	size_t len = strlen(s) + 1;

	if (ks->strs_len + len > ks->strs_cap) {
		size_t cap = ks->strs_cap ? ks->strs_cap * 2 : 1 << 20;
		char *p;

		while (cap < ks->strs_len + len)
			cap *= 2;
		p = realloc(ks->strs, cap);
		if (!p)
			return -1;
		ks->strs = p;
		ks->strs_cap = cap;
	}
	memcpy(ks->strs + ks->strs_len, s, len);
	ks->strs_len += len;
	return (long)(ks->strs_len - len);
}

struct mp_ksyms *mp_ksyms_load(const char *path)
{
	struct mp_ksyms *ks = calloc(1, sizeof(*ks));
	char line[512], name[256], mod[128], type;
	unsigned long long addr;
	bool nonzero = false;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		free(ks);
		return NULL;
	}
	/* Offsets first: the pool moves while it grows. */
	while (fgets(line, sizeof(line), f)) {
		int got;

		mod[0] = '\0';
		got = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod);
		if (got < 3 || !(type == 't' || type == 'T' || type == 'w' || type == 'W'))
			continue;
		if (ks->n == ks->cap) {
			size_t cap = ks->cap ? ks->cap * 2 : 65536;
			struct mp_ksym *p = realloc(ks->syms, cap * sizeof(*p));

			if (!p)
				goto oom;
			ks->syms = p;
			ks->cap = cap;
		}
		long no = pool_add(ks, name), mo = mod[0] ? pool_add(ks, mod) : -1;
		if (no < 0 || (mod[0] && mo < 0))
			goto oom;
		ks->syms[ks->n].addr = addr;
		ks->syms[ks->n].name = (const char *)(uintptr_t)no;
		ks->syms[ks->n].module = mo < 0 ? NULL : (const char *)(uintptr_t)(mo + 1);
		ks->n++;
		nonzero |= addr != 0;
	}
	fclose(f);
	if (!nonzero) {
		mp_ksyms_free(ks);
		errno = EPERM;
		return NULL;
	}
	for (size_t i = 0; i < ks->n; i++) {
		ks->syms[i].name = ks->strs + (uintptr_t)ks->syms[i].name;
		if (ks->syms[i].module)
			ks->syms[i].module = ks->strs + (uintptr_t)ks->syms[i].module - 1;
	}
	qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_sym);
	return ks;
oom:
	fclose(f);
	mp_ksyms_free(ks);
	errno = ENOMEM;
	return NULL;
}

void mp_ksyms_free(struct mp_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strs);
	free(ks);
}

const struct mp_ksym *mp_ksyms_find(const struct mp_ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks ? ks->n : 0;

	if (!hi || addr < ks->syms[0].addr)
		return NULL;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return &ks->syms[lo];
}

/* Name rules, tried rule by rule over the whole stack: the first rule with a
 * matching frame wins. Order matters: a thread stack is vmalloc'd (so
 * kernel_stack before vmalloc), a socket buffer comes from slab (so slab
 * before sock), as memory.stat counts them. */
static const struct {
	const char *category;
	const char *prefixes[10];
} rules[] = {
	{ "kernel_stack", { "alloc_thread_stack" } },
	{ "pagetables", { "__pte_alloc", "pte_alloc_one", "__pmd_alloc", "pmd_alloc_one",
			  "__pud_alloc", "__p4d_alloc", "pgd_alloc", "_pgd_alloc",
			  "___pte_alloc", "pagetable_alloc" } },
	{ "percpu", { "pcpu_" } },
	{ "slab", { "allocate_slab", "new_slab", "___slab_alloc", "__slab_alloc",
		    "kmalloc_large", "__kmalloc_large", "alloc_slab_page" } },
	{ "vmalloc", { "__vmalloc", "vmalloc", "vm_area_alloc_pages", "vzalloc" } },
	{ "sock", { "sk_page_frag_refill", "skb_page_frag_refill", "__alloc_skb",
		    "alloc_skb", "sock_", "tcp_", "sk_" } },
	{ "shmem", { "shmem_" } },
	{ "file", { "filemap_", "__filemap", "page_cache_ra", "readahead",
		    "grab_cache_page" } },
	{ "anon", { "do_anonymous_page", "do_huge_pmd_anonymous_page", "do_wp_page",
		    "wp_page_copy", "alloc_anon_folio", "do_cow_fault" } },
};

const char *mp_classify_names(const char *const *names, const char *const *modules,
			      int n, char *buf, size_t len)
{
	for (int i = 0; i < n; i++) {
		if (modules && modules[i]) {
			snprintf(buf, len, "driver:%s", modules[i]);
			return buf;
		}
	}
	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		for (int i = 0; i < n; i++) {
			if (!names[i])
				continue;
			for (int p = 0; p < 10 && rules[r].prefixes[p]; p++) {
				const char *pre = rules[r].prefixes[p];

				if (strncmp(names[i], pre, strlen(pre)) == 0) {
					snprintf(buf, len, "%s", rules[r].category);
					return buf;
				}
			}
		}
	}
	snprintf(buf, len, "other");
	return buf;
}

int mp_ksym_is_tracing(const struct mp_ksym *s)
{
	return s && ((s->module && strcmp(s->module, "bpf") == 0) ||
		     strncmp(s->name, "bpf_trace_run", 13) == 0 ||
		     strncmp(s->name, "__bpf_trace_", 12) == 0 ||
		     strncmp(s->name, "__traceiter_", 12) == 0);
}

const char *mp_classify_stack(const struct mp_ksyms *ks, const uint64_t *ips,
			      int n, char *buf, size_t len)
{
	const char *names[64], *mods[64];

	int m = 0;

	for (int i = 0; i < n && m < 64; i++) {
		const struct mp_ksym *s = mp_ksyms_find(ks, ips[i]);

		if (mp_ksym_is_tracing(s))
			continue;
		names[m] = s ? s->name : NULL;
		mods[m++] = s ? s->module : NULL;
	}
	return mp_classify_names(names, mods, m, buf, len);
}
