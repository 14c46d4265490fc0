// SPDX-License-Identifier: GPL-2.0
/*
 * The attribution builder's input from a live session: the one place that
 * reads a session for attribution.c, which itself sees plain data only.
 */
#include "attribution.h"
#include "attr_int.h"
#include "util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The frames of every distinct stack id in s, read from the stack map once. */
static int view_frames(struct mp_attr *a, const struct mp_attr_snap *s, struct mp_attr_input *in)
{
	uint32_t *ids = calloc(s->nstacks + 1, sizeof(*ids));
	struct mp_attr_frames *fr;
	size_t n = 0;

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < s->nstacks; i++)
		ids[i] = s->stacks[i].stackid;
	qsort(ids, s->nstacks, sizeof(*ids), cmp_u32);
	for (size_t i = 0; i < s->nstacks; i++)
		if (!n || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	fr = calloc(n + 1, sizeof(*fr));
	if (!fr) {
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		fr[i].stackid = ids[i];
		fr[i].n = mp_attr_stack(a, ids[i], fr[i].ips, MP_STACK_DEPTH);
	}
	free(ids);
	in->frames = fr;
	in->nframes = n;
	return 0;
}

/*
 * Is pid's memory cgroup (the v1 memory line of /proc/PID/cgroup, or the
 * v2 0:: line) the target or below it? 1 yes, 0 no, -1 gone or unreadable.
 */
static int pid_in_target(const struct mp_cgroup *cg, uint32_t pid)
{
	char path[64], line[PATH_MAX + 64];
	size_t tl = strlen(cg->path);
	int in = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (!(f = fopen(path, "re")))
		return -1;
	while (in < 0 && fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p = ctl ? strchr(ctl + 1, ':') : NULL;
		bool memory;

		if (!p)
			continue;
		*ctl++ = '\0'; /* line: the hierarchy id; ctl: its controllers */
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		memory = cg->version == 1 ? strstr(ctl, "memory") != NULL : !strcmp(line, "0");
		if (!memory || (cg->version == 1 && !ctl[0]))
			continue;
		/* "/" is the root: everything lies below it */
		in = !strcmp(cg->path, "/") ||
		     (!strncmp(p, cg->path, tl) && (p[tl] == '\0' || p[tl] == '/'));
	}
	fclose(f);
	return in;
}

/* Has pid exited, or is it exiting (PF_EXITING, stat's flags)? A v1
 * hierarchy shows such a task in its root cgroup, not in the one it left
 * by exiting (proc_cgroup_show). */
static bool pid_exiting(uint32_t pid)
{
	char path[64], buf[1024], *rp;
	unsigned long flags;
	char state;

	snprintf(path, sizeof(path), "/proc/%u/stat", pid);
	if (mp_read_file(path, buf, sizeof(buf)) <= 0 || !(rp = strrchr(buf, ')')))
		return true;
	if (sscanf(rp + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return false;
	return state == 'Z' || state == 'X' || (flags & 0x4 /* PF_EXITING */);
}

/* The processes counted in the target that live outside it now: the BPF
 * side gives them what they charge or free of the target's memory since
 * (bpf/memprobe.bpf.c, on_memcg_stat), and the report names them. */
static int view_moved(struct mp_attr *a, const struct mp_attr_snap *s, struct mp_attr_input *in)
{
	uint32_t *m = calloc(s->ntasks + 1, sizeof(*m));
	size_t n = 0;

	if (!m)
		return -ENOMEM;
	for (size_t i = 0; a->have_cg && i < s->ntasks; i++)
		/* a process exiting, or a zombie, has not moved: v1 shows it in
		 * the hierarchy's root */
		if (s->tasks[i].tgid && pid_in_target(&a->cg, s->tasks[i].tgid) == 0 &&
		    !pid_exiting(s->tasks[i].tgid))
			m[n++] = s->tasks[i].tgid;
	in->moved_out = m;
	in->nmoved = n;
	return 0;
}

/* The processes of s (the retained snapshot: every one counted; else the
 * growth's) that have exited, drained or not: a row of a process alive at
 * record's peak and gone by the end is the growth's, unmarked; the report
 * says each share of one exited. */
static int view_exited(const struct mp_attr_snap *s, struct mp_attr_input *in)
{
	uint32_t *e = calloc(s->ntasks + 1, sizeof(*e));
	size_t n = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < s->ntasks; i++)
		if (s->tasks[i].tgid && (s->tasks[i].gone || pid_exiting(s->tasks[i].tgid)))
			e[n++] = s->tasks[i].tgid;
	qsort(e, n, sizeof(*e), cmp_u32);
	in->exited = e;
	in->nexited = n;
	return 0;
}

/* Runs the kernel skipped, per loaded program (names live as long as a). */
static int view_misses(struct mp_attr *a, struct mp_attr_input *in)
{
	struct mp_attr_prog_misses *pm;
	struct bpf_program *p;
	size_t cap = 0, n = 0;

	in->recursion_misses = 0;
	if (!a->skel)
		return 0;
	bpf_object__for_each_program(p, a->skel->obj)
		cap++;
	pm = calloc(cap + 1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	bpf_object__for_each_program(p, a->skel->obj) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		pm[n].name = bpf_program__name(p);
		pm[n].run_cnt = info.run_cnt;
		pm[n].run_time_ns = info.run_time_ns;
		pm[n++].misses = info.recursion_misses;
		in->recursion_misses += info.recursion_misses;
	}
	in->progs = pm;
	in->nprogs = n;
	return 0;
}

int mp_attr_view_fill(struct mp_attr *a, struct mp_attr_input *in)
{
	const struct mp_attr_snap *ps = in->paths ? in->paths : in->growth;

	in->hooks = mp_attr_hooks(a);
	for (int k = 0; k < MP_NR_CATS; k++) {
		struct mp_attr_cat_plan *cp = &in->cats[k];

		cp->available = mp_attr_cat_available(a, k, &cp->item);
		cp->polled = mp_attr_cat_polled(a, k);
		cp->polled_reason = mp_attr_cat_polled_reason(a, k);
		cp->bytes_read = mp_attr_cat_bytes_read(a, k);
		cp->rows = mp_attr_cat_rows(a, k);
	}
	in->no_bpf_reason = mp_attr_no_bpf(a, &in->no_bpf_line);
	in->page_size = sysconf(_SC_PAGESIZE);
	in->anon_unmapped = mp_attr_anon_unmapped_counted(a);
	in->frames = NULL;
	in->nframes = 0;
	in->progs = NULL;
	in->nprogs = 0;
	in->moved_out = NULL;
	in->nmoved = 0;
	in->exited = NULL;
	in->nexited = 0;
	in->cow = mp_attr_cow(a, &in->cow_period, &in->cow_fn, &in->cow_why);
	if (view_frames(a, ps, in) || view_misses(a, in) || view_moved(a, in->growth, in) ||
	    view_exited(in->retained ? in->retained : in->growth, in))
		return -ENOMEM;
	/* losses since the programs were loaded, as the recursion misses are:
	 * the growth's span may end long before a map fills */
	struct mp_totals t;

	if (!mp_attr_totals(a, &t)) {
		memcpy(in->lost, t.lost, sizeof(in->lost));
		in->have_lost = true;
	}
	return 0;
}

void mp_attr_view_release(struct mp_attr_input *in)
{
	/* the view allocated these; the builder only reads them */
	free((void *)in->frames);
	free((void *)in->progs);
	free((void *)in->moved_out);
	free((void *)in->exited);
	in->exited = NULL;
	in->nexited = 0;
	in->frames = NULL;
	in->progs = NULL;
	in->moved_out = NULL;
	in->nmoved = 0;
	in->nframes = in->nprogs = 0;
}

cJSON *mp_attr_view_report(struct mp_attr *a, struct mp_attr_input *in)
{
	cJSON *o = mp_attr_view_fill(a, in) ? NULL : mp_report_attribution(in);

	mp_attr_view_release(in);
	return o;
}
