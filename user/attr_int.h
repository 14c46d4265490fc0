/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The attribution session's state, shared by hook planning and attaching
 * (attr_plan.c) and snapshot reading (attr_snap.c). Not for other rooms.
 */
#ifndef MEMPROBE_ATTR_INT_H
#define MEMPROBE_ATTR_INT_H

#include "attr.h"
#include "memprobe.skel.h"

#define MAX_RUNGS 6

struct mp_attr {
	bool cat_ok[MP_NR_CATS];
	bool cat_polled[MP_NR_CATS];     /* taken from memory.stat: no hook sees it */
	const char *cat_polled_reason[MP_NR_CATS]; /* why: polled, clone, rounded */
	struct memprobe_bpf *skel;
	struct mp_hook hooks[MP_NR_CONCERNS];
	int chosen[MP_NR_CONCERNS];      /* the rung used, -1 none */
	/* why a rung cannot be used ("" when it can): absent, denied, refused */
	char why_not[MP_NR_CONCERNS][MAX_RUNGS][64];
	char btf_source[128];
	bool judged_all;
	bool btf_custom;                 /* the BTF is --btf's file */
	char no_bpf[64];                 /* why no program can run: only polling */
	bool have_cg;
	struct mp_cgroup cg;             /* for polled concerns */
	struct bpf_link *links[16];
	int nlinks;
	int ncpus;
	struct ring_buffer *oom_rb;
	void (*oom_cb)(const struct mp_oom_event *e, void *arg);
	void *oom_arg;
};

#endif
