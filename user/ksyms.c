// SPDX-License-Identifier: GPL-2.0
#include "ksyms.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An executable allocation outside any module: a BPF JIT pack, a trampoline. */
struct jit_range {
	uint64_t lo, hi;
};

struct mp_ksyms {
	struct mp_ksym *syms;
	size_t n, cap;
	char *strs;
	size_t strs_len, strs_cap;
	struct jit_range *jit;
	size_t njit;
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

/* One symbol, its strings as pool offsets (the pool moves while it grows):
 * name at +0, module at +1 so that NULL stays "no module". */
static int add_sym(struct mp_ksyms *ks, uint64_t addr, const char *name, const char *mod)
{
	long no, mo = -1;

	if (ks->n == ks->cap) {
		size_t cap = ks->cap ? ks->cap * 2 : 65536;
		struct mp_ksym *p = realloc(ks->syms, cap * sizeof(*p));

		if (!p)
			return -1;
		ks->syms = p;
		ks->cap = cap;
	}
	no = pool_add(ks, name);
	if (mod && mod[0])
		mo = pool_add(ks, mod);
	if (no < 0 || (mod && mod[0] && mo < 0))
		return -1;
	ks->syms[ks->n] = (struct mp_ksym){
		.addr = addr, .end = UINT64_MAX,
		.name = (const char *)(uintptr_t)no,
		.module = mo < 0 ? NULL : (const char *)(uintptr_t)(mo + 1),
	};
	ks->n++;
	return 0;
}

/* The text symbols of a kallsyms file; *nonzero: some address is not 0. */
static int read_kallsyms(struct mp_ksyms *ks, const char *path, bool *nonzero)
{
	char line[512], name[256], mod[128], type;
	unsigned long long addr;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		int got;

		mod[0] = '\0';
		got = sscanf(line, "%llx %c %255s [%127[^]]]", &addr, &type, name, mod);
		if (got < 3 || !(type == 't' || type == 'T' || type == 'w' || type == 'W'))
			continue;
		if (add_sym(ks, addr, name, mod)) {
			fclose(f);
			return -ENOMEM;
		}
		*nonzero |= addr != 0;
	}
	fclose(f);
	return 0;
}

/*
 * The BPF JIT's packs and the ftrace trampolines from /proc/vmallocinfo, as
 * symbols of their own, so that a JIT frame kallsyms does not list
 * (bpf_jit_kallsyms off) is still known for one. The file's addresses are
 * %pK: hashed (not kernel addresses, then unused) unless kptr_restrict is 1
 * and the reader has CAP_SYSLOG.
 */
static int read_vmallocinfo(struct mp_ksyms *ks, const char *path)
{
	static const struct {
		const char *caller, *name, *module;
	} known[] = {
		{ "bpf_prog_pack_alloc", "bpf_jit", "bpf" },
		{ "bpf_jit_alloc_exec", "bpf_jit", "bpf" },
		{ "bpf_jit_binary_alloc", "bpf_jit", "bpf" },
		{ "arch_ftrace_update_trampoline", "ftrace_trampoline", "__builtin__ftrace" },
	};
	char line[512], caller[128];
	unsigned long long lo, hi;
	FILE *f = path ? fopen(path, "re") : NULL;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "0x%llx-0x%llx %*u %127[^+ ]", &lo, &hi, caller) != 3 ||
		    lo < 0xffff800000000000ULL || hi <= lo)
			continue;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
			if (strcmp(caller, known[i].caller))
				continue;
			struct jit_range *r = realloc(ks->jit, (ks->njit + 1) * sizeof(*r));

			if (!r || add_sym(ks, lo, known[i].name, known[i].module)) {
				if (r)
					ks->jit = r;
				fclose(f);
				return -ENOMEM;
			}
			ks->jit = r;
			ks->jit[ks->njit++] = (struct jit_range){ lo, hi };
		}
	}
	fclose(f);
	return 0;
}

static void resolve_strings(struct mp_ksyms *ks)
{
	for (size_t i = 0; i < ks->n; i++) {
		struct mp_ksym *s = &ks->syms[i];

		s->name = ks->strs + (uintptr_t)s->name;
		if (s->module)
			s->module = ks->strs + (uintptr_t)s->module - 1;
		if (!s->module)
			s->kind = MP_KSYM_CORE;
		else if (!strcmp(s->module, "bpf"))
			s->kind = MP_KSYM_BPF;
		else if (!strncmp(s->module, "__builtin__", 11))
			s->kind = MP_KSYM_TRAMP;
		else
			s->kind = MP_KSYM_MODULE;
	}
}

/* A module's text, [lo, hi): the only addresses its symbols may name. */
struct mod_text {
	const char *name;
	uint64_t lo, hi;
};

static uint64_t page_end(uint64_t addr, uint64_t page)
{
	return (addr | (page - 1)) + 1;
}

/* /proc/modules: "name size refcount deps state address [taint]". The
 * address reads 0 to a reader kptr_restrict hides it from. */
static void proc_module(const char *path, const char *name, uint64_t *base, uint64_t *size)
{
	char line[512], mod[128];
	unsigned long long sz, addr;
	FILE *f = path ? fopen(path, "re") : NULL;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %llu %*s %*s %*s 0x%llx", mod, &sz, &addr) == 3 &&
		    !strcmp(mod, name)) {
			*base = addr;
			*size = sz;
			break;
		}
	}
	fclose(f);
}

/* Code sections (.text, .text.unlikely, .noinstr.text, .init.text, ...);
 * the others (.data, .rodata, .bss, __ksymtab, ...) lie outside the text. */
static bool code_section(const char *name)
{
	return strstr(name, "text") || !strcmp(name, ".altinstr_replacement") ||
	       !strncmp(name, ".fixup", 6);
}

/*
 * /sys/module/<name>/sections/<section>: each file holds the section's
 * address (0 when hidden). *text: the .text; *data_above: the lowest other
 * section above from. Text, data and rodata are apart (one allocation each
 * since 6.4; text first in the one core allocation before), so any data
 * section above the text's start bounds its end.
 */
static void module_sections(const char *sys_module, const char *name, uint64_t from,
			    uint64_t *text, uint64_t *data_above)
{
	char dir[512], path[1024];
	struct dirent *de;
	DIR *d;

	if (!sys_module)
		return;
	snprintf(dir, sizeof(dir), "%s/%s/sections", sys_module, name);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned long long addr = 0;
		FILE *f;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%llx", &addr) != 1)
			addr = 0;
		fclose(f);
		if (!addr)
			continue;
		if (!strcmp(de->d_name, ".text"))
			*text = addr;
		else if (!code_section(de->d_name) && addr > from && addr < *data_above)
			*data_above = addr;
	}
	closedir(d);
}

/*
 * A module's text: from its base (/proc/modules, or the .text section, or
 * its first symbol) to the first of: base + size (/proc/modules' size is
 * all of the module, data too), its first data section above, and the end
 * of the page of its last text symbol (text is page-aligned under
 * STRICT_MODULE_RWX; a last function running past its page is lost to
 * "unknown", which is no lie).
 */
static void module_text(const struct mp_ksyms_src *src, const char *name, uint64_t first,
			uint64_t last, uint64_t page, struct mod_text *t)
{
	uint64_t base = 0, size = 0, text = 0, data = UINT64_MAX;

	proc_module(src->modules, name, &base, &size);
	t->name = name;
	t->lo = first;
	module_sections(src->sys_module, name, base ? base : first, &text, &data);
	if (base)
		t->lo = base;
	else if (text)
		t->lo = text;
	if (t->lo > first)
		t->lo = first;
	t->hi = page_end(last, page);
	if (base && size && base + size < t->hi)
		t->hi = base + size;
	if (data < t->hi)
		t->hi = data;
}

/* Every module named in the symbols, with its text. */
static struct mod_text *module_texts(const struct mp_ksyms *ks, const struct mp_ksyms_src *src,
				     uint64_t page, size_t *nout)
{
	struct mod_text *m = NULL;
	size_t n = 0;

	for (size_t i = 0; i < ks->n; i++) {
		const struct mp_ksym *s = &ks->syms[i];
		uint64_t first = s->addr, last = s->addr;
		bool seen = false;

		if (s->kind != MP_KSYM_MODULE)
			continue;
		for (size_t k = 0; k < n && !seen; k++)
			seen = !strcmp(m[k].name, s->module);
		if (seen)
			continue;
		for (size_t j = i + 1; j < ks->n; j++)
			if (ks->syms[j].kind == MP_KSYM_MODULE &&
			    !strcmp(ks->syms[j].module, s->module))
				last = ks->syms[j].addr;
		struct mod_text *p = realloc(m, (n + 1) * sizeof(*m));

		if (!p) {
			free(m);
			return NULL;
		}
		m = p;
		module_text(src, s->module, first, last, page, &m[n++]);
	}
	*nout = n;
	return m ? m : calloc(1, sizeof(*m));
}

static const struct mp_ksym *sym_named(const struct mp_ksyms *ks, const char *name)
{
	for (size_t i = 0; i < ks->n; i++)
		if (ks->syms[i].kind == MP_KSYM_CORE && !strcmp(ks->syms[i].name, name))
			return &ks->syms[i];
	return NULL;
}

/* The core kernel's text: [_stext, _etext) and [_sinittext, _einittext),
 * when kallsyms has the markers; c[0][0] == 0: not known. */
static void core_text(const struct mp_ksyms *ks, uint64_t c[2][2])
{
	static const char *const mark[2][2] = { { "_stext", "_etext" },
						{ "_sinittext", "_einittext" } };

	for (int r = 0; r < 2; r++) {
		const struct mp_ksym *lo = sym_named(ks, mark[r][0]), *hi = sym_named(ks, mark[r][1]);

		c[r][0] = lo && hi && lo->addr < hi->addr ? lo->addr : 0;
		c[r][1] = c[r][0] ? hi->addr : 0;
	}
}

/* How far a symbol may reach by what it is, before the next symbol cuts it. */
static uint64_t kind_cap(const struct mp_ksyms *ks, const struct mp_ksym *s, uint64_t core[2][2],
			 const struct mod_text *m, size_t nm, uint64_t page)
{
	switch (s->kind) {
	case MP_KSYM_CORE:
		if (!core[0][0])
			return UINT64_MAX; /* no markers: as the symbols say */
		for (int r = 0; r < 2; r++)
			if (core[r][0] && s->addr >= core[r][0] && s->addr < core[r][1])
				return core[r][1];
		return page_end(s->addr, page);
	case MP_KSYM_MODULE:
		for (size_t k = 0; k < nm; k++)
			if (!strcmp(m[k].name, s->module))
				return s->addr >= m[k].lo && s->addr < m[k].hi ? m[k].hi :
				       page_end(s->addr, page);
		return page_end(s->addr, page);
	case MP_KSYM_BPF:
	case MP_KSYM_TRAMP:
		for (size_t k = 0; k < ks->njit; k++)
			if (s->addr >= ks->jit[k].lo && s->addr < ks->jit[k].hi)
				return ks->jit[k].hi;
		/* a BPF program's image: at most a pack (2 MiB on x86-64);
		 * a trampoline: one page */
		return s->kind == MP_KSYM_BPF ? s->addr + (2u << 20) : page_end(s->addr, page);
	}
	return UINT64_MAX;
}

/* Each symbol's end: the next higher symbol, or less by what it is. */
static int bound_syms(struct mp_ksyms *ks, const struct mp_ksyms_src *src)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), core[2][2], next = UINT64_MAX;
	size_t nm = 0;
	struct mod_text *m = module_texts(ks, src, page, &nm);

	if (!m)
		return -ENOMEM;
	core_text(ks, core);
	for (size_t i = ks->n; i-- > 0;) {
		struct mp_ksym *s = &ks->syms[i];
		uint64_t cap = kind_cap(ks, s, core, m, nm, page);

		if (i + 1 < ks->n && ks->syms[i + 1].addr > s->addr)
			next = ks->syms[i + 1].addr;
		s->end = cap < next ? cap : next;
	}
	free(m);
	return 0;
}

struct mp_ksyms *mp_ksyms_load_src(const struct mp_ksyms_src *src)
{
	struct mp_ksyms *ks = calloc(1, sizeof(*ks));
	bool nonzero = false;
	int err;

	if (!ks)
		return NULL;
	err = read_kallsyms(ks, src->kallsyms, &nonzero);
	if (!err && !nonzero)
		err = -EPERM;
	if (!err)
		err = read_vmallocinfo(ks, src->vmallocinfo);
	if (!err) {
		resolve_strings(ks);
		qsort(ks->syms, ks->n, sizeof(*ks->syms), cmp_sym);
		err = bound_syms(ks, src);
	}
	if (err) {
		mp_ksyms_free(ks);
		errno = -err;
		return NULL;
	}
	return ks;
}

struct mp_ksyms *mp_ksyms_load(const char *path)
{
	struct mp_ksyms_src src = { .kallsyms = path };

	if (!strcmp(path, "/proc/kallsyms")) {
		uint64_t listed = 0;

		src.modules = "/proc/modules";
		src.sys_module = "/sys/module";
		/* JIT images are kallsyms' own [bpf] symbols when bpf_jit_kallsyms
		 * is on, and ftrace trampolines are listed since 5.9: then the
		 * file (a third of a report's CPU, formatting every vmalloc
		 * area) adds nothing */
		if (mp_read_u64_file("/proc/sys/net/core/bpf_jit_kallsyms", &listed) || !listed)
			src.vmallocinfo = "/proc/vmallocinfo";
	}
	return mp_ksyms_load_src(&src);
}

void mp_ksyms_free(struct mp_ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->strs);
	free(ks->jit);
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
	if (addr >= ks->syms[lo].end)
		return NULL;
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
	return s && (s->kind == MP_KSYM_BPF || s->kind == MP_KSYM_TRAMP ||
		     strncmp(s->name, "bpf_trace_run", 13) == 0 ||
		     strncmp(s->name, "__bpf_trace_", 12) == 0 ||
		     strncmp(s->name, "__traceiter_", 12) == 0);
}

const char *mp_classify_stack(const struct mp_ksyms *ks, const uint64_t *ips,
			      int n, char *buf, size_t len)
{
	const char *names[64], *mods[64];
	int m = 0;

	/* the tracing frames and the unknown addresses say nothing of who
	 * allocated: the stack is what remains */
	for (int i = 0; i < n && m < 64; i++) {
		const struct mp_ksym *s = mp_ksyms_find(ks, ips[i]);

		if (!s || mp_ksym_is_tracing(s))
			continue;
		names[m] = s->name;
		mods[m++] = s->kind == MP_KSYM_MODULE ? s->module : NULL;
	}
	if (!m && n > 0) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	return mp_classify_names(names, mods, m, buf, len);
}
