/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel symbols from /proc/kallsyms, and the classification of a kernel
 * stack into a memory.stat category or "driver:<module>".
 */
#ifndef MEMPROBE_KSYMS_H
#define MEMPROBE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

/* What a symbol is: a frame's class depends on it (docs/attribution.md). */
enum mp_ksym_kind {
	MP_KSYM_CORE,   /* the kernel image's text */
	MP_KSYM_MODULE, /* a loadable module's text */
	MP_KSYM_BPF,    /* a BPF program or BPF trampoline ([bpf]), or the BPF JIT's memory */
	MP_KSYM_TRAMP,  /* an ftrace/kprobe trampoline ([__builtin__ftrace], ...) */
};

struct mp_ksym {
	uint64_t addr;
	uint64_t end;       /* first address past what this symbol may cover */
	const char *name;
	const char *module; /* NULL for the core kernel */
	enum mp_ksym_kind kind;
};

struct mp_ksyms;

/* Where the symbols and the bounds of module text come from. */
struct mp_ksyms_src {
	const char *kallsyms;   /* /proc/kallsyms */
	const char *modules;    /* /proc/modules (base and size of each module); NULL: none */
	const char *sys_module; /* /sys/module (<name>/sections/<section>); NULL: none */
	const char *vmallocinfo; /* /proc/vmallocinfo (the BPF JIT's packs); NULL: none */
};

/* Load and sort the text symbols of a kallsyms file, each bounded to its
 * own text (mp_ksym.end). NULL with errno set on failure (or when every
 * address reads 0: kptr_restrict hides them). For /proc/kallsyms the
 * module bounds come from /proc/modules, /sys/module and /proc/vmallocinfo;
 * for any other path from kallsyms alone. */
struct mp_ksyms *mp_ksyms_load(const char *path);
struct mp_ksyms *mp_ksyms_load_src(const struct mp_ksyms_src *src);
void mp_ksyms_free(struct mp_ksyms *ks);

/* The symbol containing addr (the last one at or below it, if addr lies
 * before its end), or NULL: an unknown address, never a neighbour's name. */
const struct mp_ksym *mp_ksyms_find(const struct mp_ksyms *ks, uint64_t addr);

/* True for frames of the tracing machinery itself (BPF programs, which
 * kallsyms lists as module [bpf], ftrace trampolines and the tracepoint
 * trampolines): they say nothing about who allocated, and are dropped from
 * stacks. */
int mp_ksym_is_tracing(const struct mp_ksym *s);

/*
 * The category a kernel stack (innermost frame first, n frames) allocated
 * for, from its frames without the tracing ones and the unknown addresses:
 * "driver:<module>" when any frame lies in a module's text, else the first
 * rule that matches by function name, in the order kernel_stack, pagetables,
 * percpu, slab, vmalloc, sock, shmem, file, anon; else "other"; "unknown"
 * when no frame is left. Writes into buf and returns it.
 */
const char *mp_classify_stack(const struct mp_ksyms *ks, const uint64_t *ips,
			      int n, char *buf, size_t len);

/* Same, on symbol names alone (innermost first), for tests and for stacks
 * symbolized elsewhere. module[i] is NULL for core kernel frames. */
const char *mp_classify_names(const char *const *names, const char *const *modules,
			      int n, char *buf, size_t len);

#endif
