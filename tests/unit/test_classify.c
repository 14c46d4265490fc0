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

int main(void)
{
	/* kallsyms captured on the 6.18 host while memprobe ran */
	struct mp_ksyms *ks = mp_ksyms_load(FIXTURES "/kallsyms-6.18");
	char buf[64];

	CHECK(ks != NULL, "load kallsyms fixture");
	if (ks) {
		const struct mp_ksym *s = mp_ksyms_find(ks, 0xffffffff81348c20ULL + 0x19);

		CHECK(s && strcmp(s->name, "pte_alloc_one") == 0, "find pte_alloc_one+0x19: %s",
		      s ? s->name : "(none)");
		CHECK(s && !s->module, "core symbol has no module");
		s = mp_ksyms_find(ks, 0xffffffffc0025950ULL + 0x5ac);
		CHECK(s && s->module && strcmp(s->module, "bpf") == 0, "BPF program is [bpf]");
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
		CHECK(n == 7, "stack symbols found: %d", n);
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
	return unit_done("classify");
}
