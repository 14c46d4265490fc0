// SPDX-License-Identifier: GPL-2.0
/*
 * The cgroup and host readers on trees captured from real machines
 * (tests/fixtures/NAME/), against each tree's hand-checked expected.txt.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "cgroup.h"
#include "unit.h"
#include "util.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

/* Expected value of key, or NULL. */
static const char *expect(const char *text, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, klen) == 0 && l[klen] == '=') {
			size_t n = strcspn(l + klen + 1, "\n");

			if (n >= len)
				return NULL; /* longer than any value: a broken expected.txt */
			memcpy(buf, l + klen + 1, n);
			buf[n] = '\0';
			return buf;
		}
	}
	return NULL;
}

static const char *fmt_val(bool present, uint64_t v, char *buf, size_t len)
{
	if (!present)
		snprintf(buf, len, "none");
	else if (v == MP_UNLIMITED)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "%" PRIu64, v);
	return buf;
}

static void check_key(const char *name, const char *text, const char *key, const char *got)
{
	char want[256], what[300];

	if (!expect(text, key, want, sizeof(want)))
		return;
	snprintf(what, sizeof(what), "%s %s", name, key);
	CHECK_STR(got, want, what);
}

static bool check_fixture(const char *name)
{
	char root[PATH_MAX], p[PATH_MAX + 32], text[4096], v[64];
	struct mp_host h;
	struct mp_cgroup cg;
	int err;

	snprintf(root, sizeof(root), "%s/%s", FIXTURES, name);
	snprintf(p, sizeof(p), "%s/expected.txt", root);
	if (mp_read_file(p, text, sizeof(text)) < 0)
		return false; /* not a tree */
	printf("fixture %s\n", name);
	err = mp_host_read(root, &h);
	CHECK_EQ_INT(err, 0, "%s: host read: %d", name, err);
	check_key(name, text, "cgroup_mode", mp_cg_mode_name(h.cg_mode));
	check_key(name, text, "mem_total_bytes", fmt_val(true, h.mem_total_bytes, v, sizeof(v)));
	check_key(name, text, "thp_enabled", h.thp_enabled);
	CHECK(h.btf_present, "%s: BTF marker seen", name);

	err = mp_cgroup_of_pid(root, &h, 0, &cg);
	CHECK_EQ_INT(err, 0, "%s: cgroup of self: %d", name, err);
	if (err)
		return true;
	err = mp_cgroup_read(root, &h, &cg);
	CHECK_EQ_INT(err, 0, "%s: cgroup read: %d", name, err);
	check_key(name, text, "cgroup_path", cg.path);
	check_key(name, text, "limit_bytes", fmt_val(true, cg.limit_bytes, v, sizeof(v)));
	check_key(name, text, "effective_limit_bytes",
		  fmt_val(true, cg.effective_limit_bytes, v, sizeof(v)));
	check_key(name, text, "usage_bytes", fmt_val(true, cg.usage_bytes, v, sizeof(v)));
	check_key(name, text, "high_bytes", fmt_val(cg.has_high, cg.high_bytes, v, sizeof(v)));
	check_key(name, text, "swap_limit_bytes",
		  fmt_val(cg.has_swap_limit, cg.swap_limit_bytes, v, sizeof(v)));
	check_key(name, text, "peak_bytes", fmt_val(cg.has_peak, cg.peak_bytes, v, sizeof(v)));
	/* the throttling point (lowest memory.high / soft limit on the path) and
	 * the reclaimable page cache */
	check_key(name, text, "throttle_bytes",
		  fmt_val(cg.throttle_bytes != 0, cg.throttle_bytes, v, sizeof(v)));
	check_key(name, text, "throttle_from", cg.throttle_from);
	check_key(name, text, "throttle_kind", cg.throttle_kind);
	check_key(name, text, "reclaimable_bytes",
		  fmt_val(cg.has_reclaimable, cg.reclaimable_bytes, v, sizeof(v)));
	check_key(name, text, "soft_headroom_bytes",
		  fmt_val(cg.has_reclaimable, cg.soft_headroom_bytes, v, sizeof(v)));
	/* MemAvailable counts the reclaimable page cache already: where it
	 * bounds the headroom, the soft headroom adds none (it added it twice) */
	printf("# %s: headroom %llu from %s, reclaimable %llu, soft %llu\n", name,
	       (unsigned long long)cg.headroom_bytes, cg.headroom_from,
	       (unsigned long long)cg.reclaimable_bytes, (unsigned long long)cg.soft_headroom_bytes);
	CHECK_EQ_INT(cg.soft_headroom_bytes, cg.headroom_bytes +
		     (strcmp(cg.headroom_from, "MemAvailable") ? cg.reclaimable_bytes : 0),
		     "%s: the soft headroom is the headroom and the cache MemAvailable lacks", name);

	/* memory.stat by category (v1: total_* keys, kmem usage as kernel) */
	struct mp_cg_stat st;
	err = mp_cgroup_stat(root, &cg, &st);
	CHECK(err == 0 || !expect(text, "stat_anon", v, sizeof(v)), "%s: stat read: %d", name, err);
	check_key(name, text, "stat_anon", fmt_val(st.have[MP_CAT_ANON], st.bytes[MP_CAT_ANON], v, sizeof(v)));
	check_key(name, text, "stat_file", fmt_val(st.have[MP_CAT_FILE], st.bytes[MP_CAT_FILE], v, sizeof(v)));
	check_key(name, text, "stat_kernel",
		  fmt_val(st.have[MP_CAT_KERNEL], st.bytes[MP_CAT_KERNEL], v, sizeof(v)));
	check_key(name, text, "stat_pagetables",
		  fmt_val(st.have[MP_CAT_PAGETABLES], st.bytes[MP_CAT_PAGETABLES], v, sizeof(v)));
	check_key(name, text, "stat_pgfault", fmt_val(st.have_pgfault, st.pgfault, v, sizeof(v)));

	/* The same cgroup found by its directory and by its hierarchy path. */
	struct mp_cgroup by_dir, by_path;
	err = mp_cgroup_from_path(root, &h, cg.dir, &by_dir);
	CHECK_EQ_INT(err, 0, "%s: from dir %s: %d", name, cg.dir, err);
	CHECK_STR(by_dir.path, cg.path, "path from dir");
	err = mp_cgroup_from_path(root, &h, cg.path, &by_path);
	CHECK_EQ_INT(err, 0, "%s: from path %s: %d", name, cg.path, err);
	CHECK_STR(by_path.dir, cg.dir, "dir from path");
	CHECK_U64((uint64_t)by_path.level, (uint64_t)cg.level, "level from path");
	err = mp_cgroup_from_path(root, &h, "/no-such-cgroup-here", &by_path);
	CHECK_EQ_INT(err, -ENOENT, "%s: missing cgroup: got %d, want -ENOENT", name, err);
	return true;
}

int main(void)
{
	DIR *d = opendir(FIXTURES);
	struct dirent *e;
	struct mp_host h;
	struct mp_cgroup cg;
	int n = 0;

	CHECK(d != NULL, "open %s", FIXTURES);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		n += check_fixture(e->d_name);
	}
	if (d)
		closedir(d);
	CHECK_GE_INT(n, 9, "fixtures found: %d", n);

	/* Depth below the hierarchy root, which the BPF filter compares. */
	CHECK_EQ_INT(mp_host_read(FIXTURES "/v2-vm-nested", &h), 0, "read v2-vm-nested");
	CHECK_EQ_INT(mp_cgroup_of_pid(FIXTURES "/v2-vm-nested", &h, 0, &cg), 0, "locate");
	CHECK_U64((uint64_t)cg.level, 2, "level of /outer/inner");
	CHECK_EQ_INT(mp_cgroup_of_pid(FIXTURES "/v2-vm-nested", &h, 999999, &cg), -ESRCH,
		     "missing pid is -ESRCH");
	/* A process whose cgroup is outside what the mount shows (the mount's
	 * root is /sub, a bind-mounted subtree): -EXDEV, its path kept for
	 * the message that names --cgroup. */
	CHECK_EQ_INT(mp_host_read(FIXTURES "/v2-outside-root", &h), 0, "read v2-outside-root");
	CHECK_EQ_INT(mp_cgroup_of_pid(FIXTURES "/v2-outside-root", &h, 0, &cg), -EXDEV,
		     "a cgroup outside the mount's root is -EXDEV");
	CHECK_STR(cg.path, "/job", "its path is kept");
	/* A container's stand-in: the memory hierarchy mounted afresh, read-only,
	 * over the copy of the host's mount its namespace began with; mountinfo
	 * lists the hidden one first (root /../../..), and the cgroup2 mount
	 * under the tmpfs mounted over /sys/fs/cgroup, gone from the tree. */
	CHECK_EQ_INT(mp_host_read(FIXTURES "/v1-container-stacked", &h), 0,
		     "read v1-container-stacked");
	CHECK_STR(h.v1_memory_root, "/", "the visible mount's root, not the hidden one's");
	CHECK_STR(h.v2_mount, "", "the hidden cgroup2 mount is not taken");
	CHECK_EQ_INT(mp_cgroup_from_path(FIXTURES "/v1-container-stacked", &h, "/", &cg), 0,
		     "--cgroup / resolves in a cgroup namespace");
	CHECK_STR(cg.dir, "/sys/fs/cgroup/memory", "... to the mount point");
	CHECK_U64((uint64_t)cg.level, 0, "... at level 0 of what the namespace shows");
	/* memory.high on an ancestor is the throttling point of its child */
	CHECK_EQ_INT(mp_host_read(FIXTURES "/v2-high-ancestor", &h), 0, "read v2-high-ancestor");
	CHECK_EQ_INT(mp_cgroup_of_pid(FIXTURES "/v2-high-ancestor", &h, 0, &cg), 0,
		     "locate and read");
	CHECK_EQ_INT(mp_cgroup_read(FIXTURES "/v2-high-ancestor", &h, &cg), 0, "locate and read");
	CHECK_U64(cg.throttle_bytes, 209715200, "the ancestor's memory.high");
	CHECK_LT_INT(cg.throttle_bytes, cg.effective_limit_bytes, "below the effective limit");
	/* An empty root has no meminfo. */
	CHECK_LT_INT(mp_host_read(FIXTURES "/no-such-tree", &h), 0, "missing tree fails");
	return unit_done("cgroup");
}
