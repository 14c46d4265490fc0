// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write: where the text of do_wp_page (and of wp_page_copy, when
 * the compiler did not inline it) lies, so that the BPF side can tell a
 * user page copied on write after a fork from a first touch by the frames
 * of its allocation (memprobe.bpf.c, cow_check). kallsyms is read once, in
 * a thread of its own while the programs are attached, up to do_wp_page
 * and a few hundred symbols past it (the kernel formats every line it is
 * asked for: the whole file costs it some 50 ms, the first third 16), and
 * joined by the session's first snapshot, so that the copies of a
 * recording or a probe are all seen.
 */
#include "attr_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The functions whose text allocates a copy, in the order looked for. */
static const char *const cow_fns[2] = { "do_wp_page", "wp_page_copy" };

/* [lo, hi) of the core kernel's text symbol name in kallsyms, hi the next
 * symbol's address (kallsyms lists core text in address order). */
struct text {
	uint64_t lo, hi;
};

/* Symbols read past do_wp_page's end for wp_page_copy, which mm/memory.c
 * defines nearby when the compiler keeps it apart. */
#define NEAR_SYMBOLS 1024

static void scan(FILE *f, struct text t[2])
{
	char line[512], name[256], type;
	unsigned long long addr;
	int pending = -1, after = 0;

	while (fgets(line, sizeof(line), f)) {
		if (t[0].hi && (t[1].hi || ++after > NEAR_SYMBOLS))
			break;
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (pending >= 0 && addr > t[pending].lo) {
			t[pending].hi = addr;
			pending = -1;
		}
		if (type != 't' && type != 'T')
			continue;
		for (int i = 0; i < 2; i++)
			if (!t[i].lo && !strcmp(name, cow_fns[i]) && addr) {
				t[i].lo = addr;
				pending = i;
			}
	}
}

static void *cow_thread(void *arg)
{
	struct mp_attr *a = arg;
	struct text t[2] = { { 0 } };
	FILE *f = fopen("/proc/kallsyms", "re");

	if (!f) {
		snprintf(a->cow_why, sizeof(a->cow_why), "/proc/kallsyms unreadable: %s",
			 strerror(errno));
		return NULL;
	}
	scan(f, t);
	fclose(f);
	if (!t[0].hi) {
		snprintf(a->cow_why, sizeof(a->cow_why), "do_wp_page not in /proc/kallsyms "
			 "(addresses hidden, or inlined)");
		return NULL;
	}
	/* lo before hi: a program that sees hi set sees its lo */
	a->skel->bss->cow_text[0] = t[0].lo;
	a->skel->bss->cow_text[2] = t[1].lo;
	__atomic_store_n(&a->skel->bss->cow_text[3], t[1].hi, __ATOMIC_RELEASE);
	__atomic_store_n(&a->skel->bss->cow_text[1], t[0].hi, __ATOMIC_RELEASE);
	snprintf(a->cow_fn, sizeof(a->cow_fn), "%s", t[1].hi ? "wp_page_copy" : "do_wp_page");
	a->cow_why[0] = '\0';
	return NULL;
}

void mp_attr_cow_start(struct mp_attr *a, uint32_t period)
{
	const struct mp_hook *h = &a->hooks[MP_CONCERN_ALLOC];

	a->cow_period = period;
	if (!a->skel || !h->hook[0] || h->polled) {
		snprintf(a->cow_why, sizeof(a->cow_why), "no page allocation hook");
		return;
	}
	if (!period) {
		snprintf(a->cow_why, sizeof(a->cow_why), "--stack-sample 0: no stacks walked");
		return;
	}
	snprintf(a->cow_why, sizeof(a->cow_why), "kallsyms not read yet");
	a->cow_started = pthread_create(&a->cow_thread, NULL, cow_thread, a) == 0;
	if (!a->cow_started)
		snprintf(a->cow_why, sizeof(a->cow_why), "no thread to read kallsyms");
}

void mp_attr_cow_join(struct mp_attr *a)
{
	if (a->cow_started && !a->cow_joined)
		pthread_join(a->cow_thread, NULL);
	a->cow_joined = true;
}

void mp_attr_single_threaded(struct mp_attr *a)
{
	if (a)
		mp_attr_cow_join(a);
}

bool mp_attr_cow(struct mp_attr *a, uint32_t *period, const char **fn, const char **why)
{
	mp_attr_cow_join(a);
	*period = a->cow_period;
	*fn = a->cow_fn;
	*why = a->cow_why;
	return !a->cow_why[0];
}
