// SPDX-License-Identifier: GPL-2.0
/*
 * The host's facts (host.h): memory (/proc/meminfo), transparent huge
 * pages, the kernel's release and BTF, where the memory controller is
 * mounted (v1, cgroup2 or both, from mountinfo: of mounts stacked at one
 * point, the one the path shows), and what the documents' header says of
 * the machine (its name, distribution, CPUs, MGLRU). Read under a root,
 * as every reader is, so fixture trees stand in for machines.
 */
#include "host.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* "always [madvise] never" -> "madvise" */
static void read_bracketed(const char *root, const char *path, char *out, size_t len)
{
	char p[PATH_MAX], buf[256], *l, *r;

	out[0] = '\0';
	if (mp_root_path(p, sizeof(p), root, path) || mp_read_file(p, buf, sizeof(buf)) < 0)
		return;
	l = strchr(buf, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		*r = '\0';
		mp_strlcpy(out, l + 1, len);
	}
}

/* Unescape mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/*
 * Does the path show this mount (mountinfo's first field, its id, and third,
 * its device)? Several mounts may sit at one mount point, the later ones
 * over the earlier: a container's runtime mounts the cgroup filesystem
 * afresh over what its new mount namespace copied from the host, and
 * mountinfo lists the hidden copy first (its root "/../../.." as the
 * cgroup namespace sees it). statx's STATX_MNT_ID (5.8) names the mount the
 * path shows; where the kernel lacks it, the device must match and the
 * last-listed mount at that point wins (*exact false). A point that is no
 * longer there (under a tmpfs mounted over its parent) shows nothing.
 */
static bool mount_shown(const char *mpoint, uint64_t id, unsigned int maj, unsigned int min,
			bool *exact)
{
	struct statx stx;

	*exact = false;
	if (statx(AT_FDCWD, mpoint, 0, STATX_MNT_ID, &stx))
		return errno != ENOENT && errno != ENOTDIR;
	if (stx.stx_mask & STATX_MNT_ID) {
		*exact = true;
		return stx.stx_mnt_id == id;
	}
	return stx.stx_dev_major == maj && stx.stx_dev_minor == min;
}

/* One mount, kept when shown: the first shown mount point of its kind, and
 * at that point the mount statx names, else the last listed. */
static void keep_mount(const char *root, char *mount, char *mroot, size_t len,
		       const char *mpoint, const char *root_of, uint64_t id,
		       unsigned int maj, unsigned int min)
{
	bool exact = false;
	char p[PATH_MAX];

	/* a captured tree (root not ""): no live mounts to ask; what it has
	 * no directory for was hidden where it was captured */
	if (root && root[0]) {
		if ((mount[0] && strcmp(mount, mpoint) != 0) ||
		    mp_root_path(p, sizeof(p), root, mpoint) || access(p, F_OK))
			return;
	} else if (!mount_shown(mpoint, id, maj, min, &exact) ||
		   (mount[0] && (exact || strcmp(mount, mpoint) != 0))) {
		return;
	}
	mp_strlcpy(mount, mpoint, len);
	mp_strlcpy(mroot, root_of, len);
}

static void read_mounts(const char *root, struct mp_host *h)
{
	char p[PATH_MAX], line[4096];
	FILE *f;

	if (mp_root_path(p, sizeof(p), root, "/proc/self/mountinfo"))
		return;
	f = fopen(p, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mroot[PATH_MAX], mpoint[PATH_MAX], fstype[64], super[1024];
		char *dash = strstr(line, " - ");
		unsigned long long id;
		unsigned int maj, min;

		if (!dash || sscanf(line, "%llu %*s %u:%u %4095s %4095s", &id, &maj, &min,
				    mroot, mpoint) != 5 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		unescape(mroot);
		unescape(mpoint);
		if (strcmp(fstype, "cgroup2") == 0)
			keep_mount(root, h->v2_mount, h->v2_root, sizeof(h->v2_mount), mpoint,
				   mroot, id, maj, min);
		else if (strcmp(fstype, "cgroup") == 0 && mp_list_has(super, "memory"))
			keep_mount(root, h->v1_memory_mount, h->v1_memory_root,
				   sizeof(h->v1_memory_mount), mpoint, mroot, id, maj, min);
	}
	fclose(f);
}

/* The first line of root/path, without its newline; "" when unreadable. */
static void read_line(const char *root, const char *path, char *buf, size_t len)
{
	char p[PATH_MAX];

	buf[0] = '\0';
	if (mp_path(p, sizeof(p), "%s%s", root, path) || mp_read_file(p, buf, len) < 0)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* "0-3,6,8-9": how many CPUs the list names; 0 if it names none. */
static int count_cpu_list(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return 0;
		if (*end == '-') {
			s = end + 1;
			b = strtol(s, &end, 10);
			if (end == s || b < a)
				return 0;
		}
		n += (int)(b - a + 1);
		if (*end != ',')
			break;
		s = end + 1;
	}
	return n;
}

/* os-release's PRETTY_NAME, its quotes and backslashes undone. */
static void read_pretty_name(const char *root, char *out, size_t len)
{
	static const char *const files[] = { "/etc/os-release", "/usr/lib/os-release" };
	char p[PATH_MAX], buf[8192];

	out[0] = '\0';
	for (size_t f = 0; f < 2; f++) {
		char *line, *save;

		if (mp_path(p, sizeof(p), "%s%s", root, files[f]) ||
		    mp_read_file(p, buf, sizeof(buf)) < 0)
			continue;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const char *v = line + strlen("PRETTY_NAME=");
			char q = 0;
			size_t n = 0;

			if (strncmp(line, "PRETTY_NAME=", strlen("PRETTY_NAME=")) != 0)
				continue;
			if (*v == '"' || *v == '\'')
				q = *v++;
			for (; *v && *v != q && n + 1 < len; v++) {
				if (*v == '\\' && q == '"' && v[1])
					v++;
				out[n++] = *v;
			}
			out[n] = '\0';
			return;
		}
	}
}

/* What the documents' header says of the host beside memory: its name,
 * distribution, CPUs and lru_gen. */
static void read_host_more(const char *root, struct mp_host *m)
{
	char buf[256], p[PATH_MAX];

	read_line(root, "/proc/sys/kernel/hostname", m->hostname, sizeof(m->hostname));
	if (!m->hostname[0] && !root[0] && gethostname(m->hostname, sizeof(m->hostname) - 1))
		m->hostname[0] = '\0';
	read_pretty_name(root, m->distribution, sizeof(m->distribution));
	read_line(root, "/sys/devices/system/cpu/online", buf, sizeof(buf));
	m->cpus = count_cpu_list(buf);
	if (!m->cpus && !root[0])
		m->cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->have_lru_gen = !mp_path(p, sizeof(p), "%s/sys/kernel/mm/lru_gen/enabled", root) &&
			  access(p, F_OK) == 0;
	if (m->have_lru_gen)
		read_line(root, "/sys/kernel/mm/lru_gen/enabled", m->lru_gen, sizeof(m->lru_gen));
}

int mp_host_read(const char *root, struct mp_host *h)
{
	char p[PATH_MAX], buf[512];
	uint64_t kb;
	int err;

	memset(h, 0, sizeof(*h));
	h->page_size = sysconf(_SC_PAGESIZE);
	if ((err = mp_root_path(p, sizeof(p), root, "/proc/meminfo")))
		return err;
	if ((err = mp_read_keyed_u64(p, "MemTotal", &kb)))
		return err;
	h->mem_total_bytes = kb * 1024;
	if (!mp_read_keyed_u64(p, "MemAvailable", &kb))
		h->mem_available_bytes = kb * 1024;
	read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/enabled",
		       h->thp_enabled, sizeof(h->thp_enabled));
	read_bracketed(root, "/sys/kernel/mm/transparent_hugepage/defrag",
		       h->thp_defrag, sizeof(h->thp_defrag));
	if (!mp_root_path(p, sizeof(p), root, "/proc/sys/kernel/osrelease") &&
	    mp_read_file(p, buf, sizeof(buf)) > 0) {
		buf[strcspn(buf, "\n")] = '\0';
		mp_strlcpy(h->kernel_release, buf, sizeof(h->kernel_release));
	}
	h->btf_present = !mp_root_path(p, sizeof(p), root, "/sys/kernel/btf/vmlinux") &&
			 access(p, F_OK) == 0;
	read_mounts(root, h);
	if (h->v2_mount[0] &&
	    !mp_path(buf, sizeof(buf), "%s/cgroup.controllers", h->v2_mount) &&
	    !mp_root_path(p, sizeof(p), root, buf) && mp_read_file(p, buf, sizeof(buf)) >= 0) {
		for (char *tok = strtok(buf, " \n"); tok; tok = strtok(NULL, " \n"))
			if (strcmp(tok, "memory") == 0)
				h->v2_has_memory = true;
	}
	if (h->v1_memory_mount[0])
		h->cg_mode = h->v2_mount[0] ? MP_CG_HYBRID : MP_CG_V1;
	else if (h->v2_mount[0])
		h->cg_mode = MP_CG_V2;
	else
		h->cg_mode = MP_CG_NONE;
	read_host_more(root, h);
	return 0;
}

const char *mp_cg_mode_name(enum mp_cg_mode m)
{
	switch (m) {
	case MP_CG_V1: return "v1";
	case MP_CG_V2: return "v2";
	case MP_CG_HYBRID: return "hybrid";
	default: return "none";
	}
}
