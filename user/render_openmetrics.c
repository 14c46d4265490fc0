// SPDX-License-Identifier: GPL-2.0
/*
 * --format openmetrics: a limits, probe or record document as metrics for
 * Prometheus, in the text format node_exporter's textfile collector reads
 * (docs/report-format.md, "OpenMetrics"): gauges and counters only, no
 * timestamps, a cgroup label with the cgroup's path, integers printed as the
 * document's literals, +Inf for "no limit". The OpenMetrics lines the
 * Prometheus text format does not know (# UNIT, # EOF) are comments to it.
 *
 * record --openmetrics FILE writes the same renderer's output of a small
 * document of the current sample (record_live.c) every interval, through
 * mp_openmetrics_write, so the names are one whichever way they are made.
 */
#include "render.h"
#include "json.h"
#include "cgroup.h"
#include "out.h"
#include "util.h"
#include "views.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct om {
	FILE *f;
	struct mp_rd *rd;
	char *cg;            /* the cgroup label's value, escaped */
};

/*
 * A label value as the format escapes it: \\, \" and \n. A byte that is
 * not UTF-8, or another control character, is written as the four
 * characters \xNN (its backslash escaped), as the text report shows it.
 */
static void put_label_value(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = mp_utf8_len(p, strlen((const char *)p));

		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (!n || *p < 0x20 || *p == 0x7f)
			fprintf(f, "\\\\x%02x", *p);
		else {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		p++;
	}
}

static char *escaped(const char *s)
{
	char *out = NULL;
	size_t len;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	put_label_value(f, s);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}

static void family(struct om *m, const char *name, const char *type, const char *unit,
		   const char *help)
{
	fprintf(m->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	if (unit)
		fprintf(m->f, "# UNIT %s %s\n", name, unit);
}

/* name{cgroup="..."[,label="lval"[,label2="lval2"]]} value */
static void sample(struct om *m, const char *name, const char *label, const char *lval,
		   const char *label2, const char *lval2, const char *value)
{
	fprintf(m->f, "%s{cgroup=\"%s\"", name, m->cg);
	if (label) {
		fprintf(m->f, ",%s=\"", label);
		put_label_value(m->f, lval);
		fputc('"', m->f);
	}
	if (label2) {
		fprintf(m->f, ",%s=\"", label2);
		put_label_value(m->f, lval2);
		fputc('"', m->f);
	}
	fprintf(m->f, "} %s\n", value);
}

/*
 * An integer member as the document's literal (exact, whatever its size),
 * checked to be one (signed when sign); NULL when null or absent and flags
 * allow it. On a problem rd says it and "0" is returned.
 */
static const char *int_lit(struct om *m, const cJSON *o, const char *name, unsigned flags,
			   bool sign)
{
	uint64_t u;
	int64_t s;
	bool have = sign ? mp_rd_s64(m->rd, o, name, flags, &s) : mp_rd_u64(m->rd, o, name, flags, &u);

	if (!have)
		return mp_rd_ok(m->rd) ? NULL : "0";
	return mp_rd_num(m->rd, o, name, 0);
}

/* A family of one sample, its value v. */
static void one_lit(struct om *m, const char *name, const char *type, const char *help,
		    const char *v)
{
	size_t n = strlen(name);

	family(m, name, type, n > 6 && !strcmp(name + n - 6, "_bytes") ? "bytes" : NULL, help);
	sample(m, name, NULL, NULL, NULL, NULL, v);
}

/* A gauge of one sample, a view's figure; none when not given. */
static void gauge_v(struct om *m, const char *name, const char *help, bool given, int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRId64, v);
	if (given)
		one_lit(m, name, "gauge", help, b);
}

/* A family of one sample, o's member; none when it is null or absent
 * (allowed by flags) and if_null is NULL, else if_null ("+Inf"). */
static void one(struct om *m, const char *name, const char *type, const char *help,
		const cJSON *o, const char *member, unsigned flags, bool sign, const char *if_null)
{
	const char *v = int_lit(m, o, member, flags, sign);

	if (v || (v = if_null))
		one_lit(m, name, type, help, v);
}

static void gauge(struct om *m, const char *name, const char *help, const cJSON *o,
		  const char *member, unsigned flags, const char *if_null)
{
	one(m, name, "gauge", help, o, member, flags, false, if_null);
}

/*
 * One HELP per family whatever the document: node_exporter's textfile
 * collector keeps the first file's family and drops, with an error in its
 * log and none in node_textfile_scrape_error, the series of another file
 * whose HELP differs (a probe's file beside a recording's on one host).
 */
static const char usage_help[] = "The cgroup's memory usage (memory.current, "
	"memory.usage_in_bytes): limits now, a probe's once it exited, a recording's at its "
	"last sample";
static const char peak_help[] = "The cgroup's highest usage: limits the kernel's counter "
	"(memory.peak, memory.max_usage_in_bytes), a probe's during it, a recording's so far";

/*
 * The cgroup object (limits.cgroup, probe.target, record.target). A probe
 * document's target was read before the probe (when memprobe made the
 * stand-in: empty, 0 B): its usage and peak are the probe's own figures,
 * the usage once the probe exited and the highest during it, as the text
 * report gives them (before and after apart are memprobe_probe_usage_*).
 */
static const char effective_help[] = "The least memory limit from the cgroup up to the root, "
				     "and MemTotal (a recording: the one in force at its last "
				     "sample)";

static void cgroup_metrics(struct om *m, const cJSON *cg, const cJSON *doc, int kind)
{
	const cJSON *probe = kind == MP_DOC_PROBE ? doc : NULL;
	const cJSON *tl = kind == MP_DOC_RECORD ? mp_rd_arr(m->rd, doc, "timeline", 0) : NULL;
	const cJSON *last = tl ? cJSON_GetArrayItem(tl, cJSON_GetArraySize(tl) - 1) : NULL;
	uint64_t lim;
	bool at_last;

	gauge(m, "memprobe_limit_bytes", "The cgroup's own memory limit (memory.max, "
	      "memory.limit_in_bytes); +Inf: none", cg, "limit_bytes", MP_RD_NULL, "+Inf");
	/* a record's: the limit in force at its last sample (a limit changed
	 * during it is followed), the start's in documents before that. One
	 * help for every kind: node_exporter refuses a family whose files
	 * disagree on it. */
	at_last = last && mp_rd_is_obj(m->rd, last) &&
		  mp_rd_u64(m->rd, last, "limit_bytes", MP_RD_ABSENT | MP_RD_NULL, &lim);
	gauge(m, "memprobe_effective_limit_bytes", effective_help, at_last ? last : cg,
	      at_last ? "limit_bytes" : "effective_limit_bytes", 0, NULL);
	/* the headroom helper's field: absent in older documents */
	gauge(m, "memprobe_throttle_bytes", "Where the kernel starts throttling the cgroup: "
	      "the lowest memory.high (v2) or soft limit (v1) on its path below the effective "
	      "limit; +Inf: none", cg, "throttle_bytes", MP_RD_NULL | MP_RD_ABSENT, "+Inf");
	if (probe) {
		gauge(m, "memprobe_usage_bytes", usage_help, probe, "usage_after_bytes", 0, NULL);
		gauge(m, "memprobe_peak_bytes", peak_help, probe, "usage_peak_bytes", 0, NULL);
	} else if (kind == MP_DOC_RECORD) {
		/* the target is as read at the start (0 B for a cgroup memprobe
		 * made): the recording's own last sample and peak */
		if (last && mp_rd_is_obj(m->rd, last))
			gauge(m, "memprobe_usage_bytes", usage_help, last, "usage_bytes", 0, NULL);
		gauge(m, "memprobe_peak_bytes", peak_help, mp_rd_obj(m->rd, doc, "peak", 0),
		      "usage_bytes", 0, NULL);
	} else {
		gauge(m, "memprobe_usage_bytes", usage_help, cg, "usage_bytes", 0, NULL);
		gauge(m, "memprobe_peak_bytes", peak_help, cg, "peak_bytes", MP_RD_NULL, NULL);
	}
	gauge(m, "memprobe_headroom_bytes", "The least room left on the cgroup's path: limit "
	      "minus usage, and MemAvailable", cg, "headroom_bytes", 0, NULL);
	/* limits: as the cgroup was read; probe and record: the pinned
	 * object's moment (the stop, the peak); absent in older documents */
	const cJSON *un = kind == MP_DOC_LIMITS ? cg : mp_rd_obj(m->rd, doc, "pinned", MP_RD_ABSENT);

	if (un)
		gauge(m, "memprobe_shmem_unmapped_bytes", "Shmem no process maps, at least: "
		      "memory.stat shmem - file_mapped (limits now, a probe at its stop, a "
		      "recording at its peak)", un, "shmem_unmapped_bytes",
		      MP_RD_NULL | MP_RD_ABSENT, NULL);
}

/* A category's sample: the figure's literal (a 64-bit integer's, at most
 * 20 digits and a sign). */
struct cat_val {
	const char *cat, *part_of;
	char val[24];
};

static const char *const part_names[] = {
	[MP_PART_USAGE] = "usage", [MP_PART_FILE] = "file", [MP_PART_KERNEL] = "kernel",
	[MP_PART_ANON] = "anon",
};

/* A family of categories: {cgroup, category} for the split (parts NULL),
 * {cgroup, category, part_of} for the parts; nothing when none is there. */
static void cat_family(struct om *m, const char *name, const char *help,
		       const struct cat_val *v, size_t n, bool parts)
{
	if (!n)
		return;
	family(m, name, "gauge", "bytes", help);
	for (size_t i = 0; i < n; i++)
		sample(m, name, "category", v[i].cat, parts ? "part_of" : NULL, v[i].part_of,
		       v[i].val);
}

/*
 * What the cgroup holds now, per category (record: the last timeline
 * sample's stat, from the kernel's files; a category they lack is absent):
 * the split whose sum is the usage, and the parts inside file and kernel.
 */
static void stat_metrics(struct om *m, const cJSON *stat)
{
	struct cat_val split[MP_NR_CATS], parts[MP_NR_CATS];
	size_t ns = 0, np = 0;

	for (int k = 0; stat && k < MP_NR_CATS; k++) {
		const char *v = int_lit(m, stat, mp_cats[k].name, MP_RD_ABSENT, false);
		bool usage = mp_cats[k].part == MP_PART_USAGE;

		struct cat_val *cv;

		if (!v)
			continue;
		cv = &(usage ? split : parts)[usage ? ns++ : np++];
		*cv = (struct cat_val){ mp_cats[k].name, part_names[mp_cats[k].part], "" };
		snprintf(cv->val, sizeof(cv->val), "%s", v);
	}
	cat_family(m, "memprobe_memory_bytes", "What the cgroup holds now by category, "
		   "disjoint: anon + file + kernel + sock is the usage", split, ns, false);
	cat_family(m, "memprobe_memory_part_bytes", "Parts of file (shmem) and of kernel "
		   "(pagetables, slab, kernel_stack, percpu, ...) the cgroup holds now", parts, np,
		   true);
}

/* Category c's family (-1: none): the usage's split, or the part of file,
 * kernel or anon it is in; kernel_other is kernel's rest. */
static int part_of(const struct mp_view_cat *c)
{
	if (!strcmp(c->name, "kernel_other"))
		return MP_PART_KERNEL;
	for (int k = 0; k < MP_NR_CATS; k++)
		if (!strcmp(mp_cats[k].name, c->name))
			return mp_cats[k].part;
	return -1;
}

/* The categories' growth (mp_view_cats, every row) as the split and the
 * parts; the objcg reserve kernel_other says (views.h: reserve; v1 documents
 * with kmem, absent elsewhere). */
static void category_growth(struct om *m, const struct mp_view_cats *v)
{
	struct cat_val split[MP_NR_CATS + 1], parts[MP_NR_CATS + 1];
	const struct mp_view_cat *reserve = NULL;
	size_t ns = 0, np = 0;
	bool kernel = true; /* kept by the kernel (not on 5.10: no MEMCG_KMEM) */

	for (int i = 0; i < v->n; i++)
		if (!strcmp(v->rows[i].name, "kernel"))
			kernel = v->rows[i].available;
	for (int i = 0; i < v->n; i++) {
		const struct mp_view_cat *c = &v->rows[i];
		int part = part_of(c);
		struct cat_val *cv;
		bool in_split;

		if (!reserve && !strcmp(c->name, "kernel_other"))
			reserve = c;
		if (part < 0 || ns > MP_NR_CATS || np > MP_NR_CATS)
			continue;
		/* a count below what the kernel allows is no figure, and one
		 * nothing measured (no hook, no stat key: available false) none
		 * either: no sample, where a 0 read as measured */
		if (c->below_floor || !c->available)
			continue;
		/* without the kernel's total its parts are what the attributed
		 * growth adds up (reconciliation.attributed_as), and split it */
		if (!kernel && !strcmp(c->name, "kernel"))
			continue;
		in_split = part == MP_PART_USAGE ||
			   (!kernel && part == MP_PART_KERNEL && c->available);
		cv = in_split ? &split[ns++] : &parts[np++];
		*cv = (struct cat_val){ c->name, in_split ? NULL : part_names[part], "" };
		snprintf(cv->val, sizeof(cv->val), "%" PRId64, c->growth_bytes);
	}
	cat_family(m, "memprobe_growth_bytes", "Net growth attributed by category over the "
		   "attribution's span, disjoint: the sum is the attributed growth", split, ns,
		   false);
	cat_family(m, "memprobe_growth_part_bytes", "Net growth of the parts of file and "
		   "kernel over the attribution's span (kernel_other: kernel's rest)", parts, np,
		   true);
	gauge_v(m, "memprobe_measured_growth_bytes", "The cgroup's usage growth over the "
		"attribution's span", v->has_measured, v->measured);
	gauge_v(m, "memprobe_anon_unmapped_bytes", "Anonymous memory unmapped and not yet "
		"freed over the attribution's span: out of memory.stat's anon, still charged",
		v->has_unmapped, v->unmapped);
	gauge_v(m, "memprobe_objcg_reserve_bytes", "Kernel memory charged to the cgroup "
		"that no object holds: its objcgs' reserve (nr_charged_bytes), which cgroup "
		"v1's kmem counts; part of kernel_other's growth, at the attribution's end",
		reserve && reserve->has_reserve, reserve ? reserve->reserve : 0);
}

/* The attribution's categories (probe: the first chunk to the probe's stop;
 * record: the start to the peak), net growth, from the categories view;
 * then its page faults and copies on write. */
static void growth_metrics(struct om *m, const cJSON *a)
{
	struct mp_view_cats v;

	if (mp_view_cats(a, m->rd, NULL, MP_VIEW_EXPORT, &v))
		return;
	category_growth(m, &v);
	mp_view_cats_free(&v);
	one(m, "memprobe_page_faults_total", "counter", "The target's page faults over the "
	    "attribution's span", mp_rd_obj(m->rd, a, "page_faults", MP_RD_ABSENT), "total",
	    MP_RD_ABSENT, false, NULL);
	one(m, "memprobe_copy_on_write_bytes", "gauge", "User pages copied on write after a "
	    "fork (do_wp_page's copies) over the session; absent: not looked for",
	    mp_rd_obj(m->rd, a, "copy_on_write", MP_RD_ABSENT), "bytes", MP_RD_ABSENT, false,
	    NULL);
}

/* The brief's nine fields, in base units: the two _gib ones are the
 * _bytes ones rounded, so they are not repeated. */
static const struct {
	const char *member, *metric, *help;
	bool sign;
} probe_fields[] = {
	{ "cgroup_limit_bytes", "memprobe_probe_cgroup_limit_bytes", "The probe's target's "
	  "effective limit", false },
	{ "usage_before_bytes", "memprobe_probe_usage_before_bytes", "The target's usage before "
	  "the probe's first chunk", false },
	{ "allocated_bytes", "memprobe_probe_allocated_bytes", "What the probe mapped and "
	  "touched", false },
	{ "usage_peak_bytes", "memprobe_probe_usage_peak_bytes", "The target's highest usage "
	  "during the probe", false },
	{ "usage_after_bytes", "memprobe_probe_usage_after_bytes", "The target's usage once "
	  "the probe exited", false },
	{ "overhead_bytes", "memprobe_probe_overhead_bytes", "Peak minus before minus "
	  "allocated: what the probe cost beyond its own pages", true },
	{ "probe_chunks", "memprobe_probe_chunks", "Chunks the probe filled", false },
};

static void probe_metrics(struct om *m, const cJSON *p)
{
	bool b;

	for (size_t i = 0; i < sizeof(probe_fields) / sizeof(probe_fields[0]); i++)
		one(m, probe_fields[i].metric, "gauge", probe_fields[i].help, p,
		    probe_fields[i].member, 0, probe_fields[i].sign, NULL);
	if (!mp_rd_item(m->rd, p, "probe_oom_killed", MP_RD_ABSENT))
		return;
	b = mp_rd_bool(m->rd, p, "probe_oom_killed", 0);
	family(m, "memprobe_probe_oom_killed", "gauge", NULL, "1: the OOM killer took the probe");
	sample(m, "memprobe_probe_oom_killed", NULL, NULL, NULL, NULL, b ? "1" : "0");
}

static void counter_n(struct om *m, const char *name, const char *help, size_t n)
{
	char v[32];

	snprintf(v, sizeof(v), "%zu", n);
	family(m, name, "counter", NULL, help);
	sample(m, name, NULL, NULL, NULL, NULL, v);
}

static const char oom_help[] = "OOM kills in the cgroup while memprobe watched (a probe: "
			       "of the workload, the probe's own apart)";

/* How often the effective limit changed during the recording (documents
 * before it, and record --openmetrics's live file, say nothing). */
static void limit_changes(struct om *m, const cJSON *doc)
{
	const cJSON *l = mp_rd_obj(m->rd, doc, "limit", MP_RD_ABSENT);
	uint64_t more = 0;

	if (!l)
		return;
	mp_rd_u64(m->rd, l, "changes_not_kept", 0, &more);
	counter_n(m, "memprobe_limit_changes_total", "Changes of the effective limit during the "
		  "recording", (size_t)cJSON_GetArraySize(mp_rd_arr(m->rd, l, "changes", 0)) +
		  (size_t)more);
}

static void record_metrics(struct om *m, const cJSON *doc)
{
	const cJSON *tl = mp_rd_arr(m->rd, doc, "timeline", 0), *p;
	const cJSON *last = tl ? cJSON_GetArrayItem(tl, cJSON_GetArraySize(tl) - 1) : NULL;

	if (last && mp_rd_is_obj(m->rd, last))
		stat_metrics(m, mp_rd_obj(m->rd, last, "stat", 0));
	gauge(m, "memprobe_record_peak_bytes", "The recording's highest usage (the kernel's "
	      "counter where it rose during it, else the highest sample)",
	      mp_rd_obj(m->rd, doc, "peak", 0), "usage_bytes", MP_RD_ABSENT, NULL);
	one(m, "memprobe_oom_kills_total", "counter", oom_help, doc, "oom_kill_counter_delta", 0,
	    false, NULL);
	limit_changes(m, doc);
	p = mp_rd_obj(m->rd, doc, "probe", MP_RD_ABSENT);
	if (p && !mp_rd_item(m->rd, p, "error", MP_RD_ABSENT))
		probe_metrics(m, p);
}

static void render_openmetrics(const cJSON *doc, int kind, FILE *f, struct mp_rd *rd)
{
	const cJSON *gen = mp_rd_obj(rd, doc, "generator", 0), *h = mp_rd_obj(rd, doc, "host", 0);
	const cJSON *cg = mp_rd_obj(rd, doc, kind == MP_DOC_LIMITS ? "cgroup" : "target", 0);
	struct om m = { .f = f, .rd = rd };

	m.cg = escaped(mp_rd_str(rd, cg, "path", 0));
	if (!m.cg) {
		mp_rd_fail(rd, NULL, NULL, "out of memory");
		return;
	}
	/* with the cgroup: two files on one host (two recordings) would
	 * otherwise give the same series twice, which node_exporter drops
	 * with an error in its log at every scrape */
	fprintf(f, "# HELP memprobe_build_info The memprobe that wrote these and the kernel it "
		"ran on\n# TYPE memprobe_build_info gauge\nmemprobe_build_info{cgroup=\"%s\","
		"version=\"", m.cg);
	put_label_value(f, mp_rd_str(rd, gen, "version", 0));
	fputs("\",kernel=\"", f);
	put_label_value(f, mp_rd_str(rd, h, "kernel_release", 0));
	fputs("\"} 1\n", f);
	cgroup_metrics(&m, cg, doc, kind);
	if (kind == MP_DOC_RECORD)
		record_metrics(&m, doc);
	if (kind == MP_DOC_PROBE) {
		const cJSON *ooms = mp_rd_arr(rd, doc, "workload_oom_kills", MP_RD_NULL);

		probe_metrics(&m, doc);
		if (ooms)
			counter_n(&m, "memprobe_oom_kills_total", oom_help,
				  (size_t)cJSON_GetArraySize(ooms));
		else
			one(&m, "memprobe_oom_kills_total", "counter", oom_help, doc,
			    "workload_oom_kill_count", 0, false, NULL);
	}
	if (kind != MP_DOC_LIMITS)
		growth_metrics(&m, mp_rd_obj(rd, doc, "attribution", MP_RD_ABSENT));
	fputs("# EOF\n", f);
	free(m.cg);
}

const struct mp_renderer mp_renderer_openmetrics = {
	.name = "openmetrics",
	.about = "Prometheus",
	.kinds = MP_DOC_LIMITS | MP_DOC_PROBE | MP_DOC_RECORD,
	.render = render_openmetrics,
};

int mp_openmetrics_write(cJSON *doc, const char *path, char *err, size_t errlen)
{
	char *out = NULL;
	struct mp_out o;
	int kind = 0, ret;
	size_t len;

	/* as `memprobe report` would load its text: the literals are the same */
	if (mp_doc_adopt(doc, &kind, err, errlen))
		return kind == -ENOMEM ? -ENOMEM : -EINVAL;
	if ((ret = mp_render_mem(&mp_renderer_openmetrics, doc, kind, &out, &len, err, errlen)))
		return ret;
	if ((ret = mp_out_open(&o, path))) {
		snprintf(err, errlen, "%s", strerror(-ret));
		goto out;
	}
	/* a temporary file beside it, renamed over it: a reader sees the
	 * last whole file or the new one, never half of one */
	ret = fwrite(out, 1, len, o.f) == len ? mp_out_commit(&o) : -EIO;
	mp_out_abort(&o);
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
out:
	free(out);
	return ret;
}
