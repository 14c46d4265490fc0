// SPDX-License-Identifier: GPL-2.0
/* Kernel symbols and the classification of kernel stacks into categories. */
#include <stdlib.h>

#include "ksyms.h"
#include "unit.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *by_names(const char *const *names, const char *const *mods, int n)
{
	static char buf[64];

	return mp_classify_names(names, mods, n, buf, sizeof(buf));
}

#define MODFIX FIXTURES "/ksyms-modules"

static const char *stack_class(const struct mp_ksyms *ks, const uint64_t *ips, int n)
{
	static char buf[64];

	return mp_classify_stack(ks, ips, n, buf, sizeof(buf));
}

static const char *name_at(const struct mp_ksyms *ks, uint64_t addr)
{
	const struct mp_ksym *s = mp_ksyms_find(ks, addr);

	return s ? s->name : "(unknown)";
}

/* Synthetic kallsyms, /proc/modules, /sys/module and vmallocinfo: every
 * address is named only inside its own text (ksyms-modules/). */
static void test_bounds(void)
{
	struct mp_ksyms_src src = {
		.kallsyms = MODFIX "/kallsyms", .modules = MODFIX "/modules",
		.sys_module = MODFIX "/sys/module", .vmallocinfo = MODFIX "/vmallocinfo",
	};
	struct mp_ksyms *ks = mp_ksyms_load_src(&src);
	const struct mp_ksym *s;

	CHECK(ks != NULL, "load the module fixture");
	if (!ks)
		return;
	CHECK_STR(name_at(ks, 0xffffffffc1000140ULL), "nv_alloc_pages", "inside nvidia's text");
	CHECK_STR(name_at(ks, 0xffffffffc1003f50ULL), "nvidia_frontend_ioctl",
		  "nvidia's last function");
	s = mp_ksyms_find(ks, 0xffffffffc1000140ULL);
	CHECK(s && s->kind == MP_KSYM_MODULE && !strcmp(s->module, "nvidia"), "nvidia is a module");
	/* the frame: nv_alloc_pages+0x100400, within /proc/modules'
	 * size (data included) but past the text's last page */
	CHECK_STR(name_at(ks, 0xffffffffc1000100ULL + 0x100400), "(unknown)",
		  "past the module's text");
	CHECK_STR(name_at(ks, 0xffffffffc1004000ULL), "(unknown)", "the page after its text");
	CHECK_STR(name_at(ks, 0xffffffffc1006140ULL), "(unknown)", "nvidia's .data");
	/* zram: /proc/modules hides its base; .rodata right after its last
	 * function (no STRICT_MODULE_RWX) cuts the text short */
	CHECK_STR(name_at(ks, 0xffffffffc0a00f40ULL), "zram_last_function", "zram's last function");
	CHECK_STR(name_at(ks, 0xffffffffc0a00fa0ULL), "(unknown)", "zram's .rodata");
	/* brd: in kallsyms alone (no /proc/modules line, no sections) */
	CHECK_STR(name_at(ks, 0xffffffffc0800210ULL), "brd_submit_bio", "brd from kallsyms alone");
	CHECK_STR(name_at(ks, 0xffffffffc0801010ULL), "(unknown)", "past brd's last page");
	/* core: [_stext, _etext) and the init text */
	CHECK_STR(name_at(ks, 0xffffffff81673d90ULL), "alloc_pages_noprof", "core text");
	CHECK_STR(name_at(ks, 0xffffffff82300000ULL), "(unknown)", "past _etext");
	CHECK_STR(name_at(ks, 0xffffffff83790100ULL), "init_some_driver", "init text");
	CHECK_STR(name_at(ks, 0xffffffff83800010ULL), "(unknown)", "core data");
	/* BPF and trampolines */
	s = mp_ksyms_find(ks, 0xffffffffc0201080ULL);
	CHECK(s && s->kind == MP_KSYM_TRAMP && mp_ksym_is_tracing(s), "ftrace trampoline: %s",
	      s ? s->name : "(unknown)");
	CHECK_STR(name_at(ks, 0xffffffffc0202010ULL), "(unknown)", "past the trampoline's page");
	s = mp_ksyms_find(ks, 0xffffffffc0400100ULL);
	CHECK(s && s->kind == MP_KSYM_BPF && !strcmp(s->name, "bpf_jit"),
	      "a JIT pack kallsyms does not list, from vmallocinfo: %s", s ? s->name : "(unknown)");
	CHECK_STR(name_at(ks, 0xffffffffc0603000ULL), "(unknown)", "past the pack");
	s = mp_ksyms_find(ks, 0xffffffffc0700010ULL);
	CHECK(s && s->kind == MP_KSYM_TRAMP, "a trampoline from vmallocinfo");
	CHECK_STR(name_at(ks, 0xffffffffc0703010ULL), "(unknown)", "a module allocation: not known");

	/* a page-table stack under a JIT frame kallsyms misses (bpf_jit_kallsyms
	 * off), with a frame past nvidia's text: pagetables, not driver:nvidia */
	uint64_t pt[] = { 0xffffffffc0300010ULL, 0xffffffff814ca4d0ULL + 0x10d,
			  0xffffffff81639490ULL + 8, 0xffffffff81673d70ULL + 8,
			  0xffffffff81348c20ULL + 8, 0xffffffff815f95f0ULL + 8,
			  0xffffffffc1000100ULL + 0x100400, 0xffffffff81602820ULL + 8 };
	CHECK_STR(stack_class(ks, pt, N(pt)), "pagetables", "page tables under unknown frames");
	uint64_t nv[] = { 0xffffffffc0025950ULL + 0x5ac, 0xffffffff81673d70ULL + 8,
			  0xffffffffc1000100ULL + 0x40, 0xffffffffc1000400ULL + 0x10 };
	CHECK_STR(stack_class(ks, nv, N(nv)), "driver:nvidia", "a frame in nvidia's text");
	uint64_t ft[] = { 0xffffffffc0201000ULL + 0x80, 0xffffffff81639490ULL + 8,
			  0xffffffff815c8940ULL + 8 };
	CHECK_STR(stack_class(ks, ft, N(ft)), "shmem", "an ftrace trampoline is no driver");
	uint64_t nothing[] = { 0xffffffffc0025950ULL + 0x5ac, 0xffffffffc0300010ULL,
			       0xffffffffc1006140ULL, 0xffffffffc0201000ULL + 0x80 };
	CHECK_STR(stack_class(ks, nothing, N(nothing)), "unknown",
		  "BPF, trampoline and unknown frames only");
	mp_ksyms_free(ks);
}

/* The host's own kallsyms still classes a page-table stack (skipped when
 * it cannot be read with addresses). */
static void test_host(void)
{
	static const char *const walk[] = { "__alloc_frozen_pages_noprof", "alloc_pages_noprof",
					    "pte_alloc_one", "__pte_alloc", "do_anonymous_page" };
	struct mp_ksyms *ks = mp_ksyms_load("/proc/kallsyms");
	uint64_t ips[N(walk)];
	char line[512];
	int n = 0;
	FILE *f;

	if (!ks) {
		SKIP("/proc/kallsyms unreadable with addresses");
		return;
	}
	for (int w = 0; w < N(walk); w++) {
		f = fopen("/proc/kallsyms", "re");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long a;
			char t, name[128];

			if (sscanf(line, "%llx %c %127s", &a, &t, name) == 3 &&
			    !strcmp(name, walk[w])) {
				ips[n++] = a + 8;
				break;
			}
		}
		if (f)
			fclose(f);
	}
	if (n == N(walk))
		CHECK_STR(stack_class(ks, ips, n), "pagetables", "the host's page-table stack");
	else
		SKIP("the host's kallsyms lacks the page-table path (%d)", n);
	mp_ksyms_free(ks);
}

int main(void)
{
	/* kallsyms captured on the 6.18 host while memprobe ran */
	struct mp_ksyms *ks = mp_ksyms_load(FIXTURES "/kallsyms-6.18");
	char buf[64];

	CHECK(ks != NULL, "load kallsyms fixture");
	if (ks) {
		const struct mp_ksym *s = mp_ksyms_find(ks, 0xffffffff81348c20ULL + 0x19);

		CHECK_EQ_STR(s ? s->name : NULL, "pte_alloc_one", "find pte_alloc_one+0x19");
		CHECK(s && !s->module, "core symbol has no module");
		s = mp_ksyms_find(ks, 0xffffffffc0025950ULL + 0x5ac);
		CHECK_EQ_STR(s ? s->module : NULL, "bpf", "BPF program is [bpf]");
		CHECK(mp_ksym_is_tracing(s), "BPF program frames are tracing frames");
		CHECK(mp_ksyms_find(ks, 0x1000) == NULL, "below every symbol: none");

		/* A real stack of mm_page_alloc from a page-table allocation. */
		uint64_t ips[] = {
			0xffffffffc0025950ULL + 0x5ac, /* bpf_prog_..._tp_mm_page_alloc [bpf] */
			0xffffffff814ca4d0ULL + 0x10d, /* bpf_trace_run4 */
		};
		uint64_t *st = calloc(8, sizeof(*st));
		const char *walk[] = { "__alloc_frozen_pages_noprof", "alloc_pages_noprof",
				       "pte_alloc_one", "__pte_alloc", "do_anonymous_page" };
		int n = 0;

		st[n++] = ips[0];
		st[n++] = ips[1];
		FILE *f = fopen(FIXTURES "/kallsyms-6.18", "r");
		char line[256];
		for (int w = 0; f && w < N(walk); w++) {
			rewind(f);
			while (fgets(line, sizeof(line), f)) {
				unsigned long long a;
				char t, name[128];

				if (sscanf(line, "%llx %c %127s", &a, &t, name) == 3 &&
				    strcmp(name, walk[w]) == 0) {
					st[n++] = a + 8;
					break;
				}
			}
		}
		if (f)
			fclose(f);
		CHECK_EQ_INT(n, 7, "stack symbols found: %d", n);
		CHECK_STR(mp_classify_stack(ks, st, n, buf, sizeof(buf)), "pagetables",
			  "page-table stack with BPF frames on top");
		free(st);
		mp_ksyms_free(ks);
	}
	CHECK(mp_ksyms_load(FIXTURES "/no-such-kallsyms") == NULL, "missing file");

	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "allocate_slab", "___slab_alloc",
				    "__kmalloc_node_track_caller_noprof", "kmalloc_reserve",
				    "__alloc_skb", "tcp_stream_alloc_skb", "tcp_sendmsg_locked" };
		CHECK_STR(by_names(n, NULL, N(n)), "slab", "skb head from slab is slab");
	}
	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "__vmalloc_area_node",
				    "__vmalloc_node_range_noprof", "alloc_thread_stack_node",
				    "dup_task_struct", "copy_process" };
		CHECK_STR(by_names(n, NULL, N(n)), "kernel_stack", "thread stack, not vmalloc");
	}
	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "allocate_slab", "___slab_alloc",
				    "kmem_cache_alloc_node_noprof", "dup_task_struct", "copy_process" };
		CHECK_STR(by_names(n, NULL, N(n)), "slab", "task_struct is slab");
	}
	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "alloc_pages_noprof",
				    "brd_insert_page", "brd_submit_bio", "__submit_bio" };
		const char *m[] = { NULL, NULL, "brd", "brd", NULL };
		CHECK_STR(by_names(n, m, N(n)), "driver:brd", "a module frame makes a driver path");
	}
	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "pcpu_populate_chunk",
				    "pcpu_balance_populated" };
		CHECK_STR(by_names(n, NULL, N(n)), "percpu", "percpu chunk");
	}
	{
		const char *n[] = { "__alloc_frozen_pages_noprof", "alloc_pages_noprof",
				    "anon_pipe_write", "vfs_write" };
		CHECK_STR(by_names(n, NULL, N(n)), "other", "pipe buffer is other");
	}
	CHECK_STR(by_names(NULL, NULL, 0), "other", "empty stack");
	test_bounds();
	test_host();
	return unit_done("classify");
}
