/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols from /proc/kallsyms, and the classification of a kernel
 * stack into a memory.stat category or "driver:<module>".
 */
#ifndef MEMPROBE_KSYMS_H
#define MEMPROBE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct mp_ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* NULL for the core kernel */
};

struct mp_ksyms;

/* Load and sort the text symbols of a kallsyms file. NULL with errno set on
 * failure (or when every address reads 0: kptr_restrict hides them). */
struct mp_ksyms *mp_ksyms_load(const char *path);
void mp_ksyms_free(struct mp_ksyms *ks);

/* The symbol containing addr (the last one at or below it), or NULL. */
const struct mp_ksym *mp_ksyms_find(const struct mp_ksyms *ks, uint64_t addr);

/* True for frames of the tracing machinery itself (BPF programs, which
 * kallsyms lists as module [bpf], and the tracepoint trampolines): they say
 * nothing about who allocated, and are dropped from stacks. */
int mp_ksym_is_tracing(const struct mp_ksym *s);

/*
 * The category a kernel stack (innermost frame first, n frames) allocated
 * for: "driver:<module>" when any frame lies in a module, else the first
 * rule that matches by function name, in the order kernel_stack, pagetables,
 * percpu, slab, vmalloc, sock, shmem, file, anon; else "other". Writes into
 * buf and returns it.
 */
const char *mp_classify_stack(const struct mp_ksyms *ks, const uint64_t *ips,
			      int n, char *buf, size_t len);

/* Same, on symbol names alone (innermost first), for tests and for stacks
 * symbolized elsewhere. module[i] is NULL for core kernel frames. */
const char *mp_classify_names(const char *const *names, const char *const *modules,
			      int n, char *buf, size_t len);

#endif
