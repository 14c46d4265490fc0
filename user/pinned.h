/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pinned memory in a target cgroup: what neither reclaim nor the cgroup's
 * limit can take back. The cgroup's memory.stat unevictable and shmem, and
 * per process VmLck (mlock), VmPin (pin_user_pages: RDMA, io_uring, vfio),
 * RssShmem, and the locked bytes by kind from /proc/PID/smaps; the
 * drivers' pages charged or not come from the attribution object.
 */
#ifndef MEMPROBE_PINNED_H
#define MEMPROBE_PINNED_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "proc_role.h"
#include "vocab.h" /* enum mp_pin_kind */

/* What the locked bytes of a mapping are (smaps): enum mp_pin_kind and
 * mp_pin_kind_names, vocab.h. */

struct mp_pinned_task {
	uint32_t pid;
	char comm[16];
	uint64_t vm_lck_bytes, vm_pin_bytes, rss_shmem_bytes; /* /proc/PID/status */
	bool have_locked;                       /* smaps read (it is, when VmLck > 0) */
	uint64_t locked_bytes[MP_NR_PIN_KINDS]; /* smaps Locked: by mapping kind */
};

/*
 * A shared memory segment the target's processes map: a shmem file (shared
 * anonymous memory, SysV shm, memfd, a file on tmpfs) by its device and
 * inode, as /proc/PID/maps names it. Its pages are charged once, to the
 * cgroup of whoever touched each first, however many map it; RssShmem
 * counts them in every mapper.
 */
struct mp_shm_seg {
	uint64_t dev, ino;
	char name[64];               /* maps' name, "/dev/zero (deleted)", "/SYSV..." */
	uint64_t mapped_bytes;       /* its largest mapping */
	bool have_resident;
	uint64_t resident_bytes;     /* the file's allocated pages (stat's st_blocks) */
	uint32_t *pids;              /* the processes mapping it (those with RssShmem) */
	size_t npids, cap;
};

#define MP_MAX_SHM_SEGS 64

struct mp_pinned {
	bool taken;
	const char *at;              /* the snapshot: "stop", "peak", "end" */
	bool have_unevictable, have_shmem, have_file, have_file_mapped;
	uint64_t unevictable_bytes;  /* memory.stat unevictable (v1 total_unevictable) */
	uint64_t shmem_bytes;        /* memory.stat shmem (v1 total_shmem) */
	uint64_t file_bytes;         /* memory.stat file (v1 total_cache) */
	uint64_t file_mapped_bytes;  /* memory.stat file_mapped (v1 total_mapped_file):
				      * page cache, shmem included, some process maps */
	bool have_t;
	uint64_t t_ms;               /* record: the sample it was read at */
	size_t nprocs;               /* processes read */
	uint64_t vm_lck_bytes, vm_pin_bytes; /* their sums */
	uint64_t rss_shmem_max_bytes; /* the largest RssShmem of one process: a shared
				       * page counts in every mapper, so never summed */
	struct mp_pinned_task *tasks; /* those with any of the three, largest first */
	size_t ntasks;
	struct mp_proc_role *roles;  /* every process read, with its role */
	size_t nroles, roles_cap;
	struct mp_shm_seg segs[MP_MAX_SHM_SEGS]; /* the shmem segments they map */
	size_t nsegs;
	size_t segs_more;            /* mappings of segments past the table */
};

/*
 * Memory no process maps, from memory.stat: page cache (shmem included)
 * with no mapping, file − file_mapped; and of it shmem, at least
 * shmem − file_mapped (file_mapped counts mapped shmem and mapped page
 * cache alike: exact when no other file is mapped). False when the
 * kernel's files lack a key.
 */
bool mp_unmapped_bytes(uint64_t file, uint64_t shmem, uint64_t file_mapped,
		       uint64_t *file_unmapped, uint64_t *shmem_unmapped);

/* Read the target's memory.stat and every process in it and below it.
 * Returns 0 or -ENOMEM; unreadable files leave their figures unset. */
int mp_pinned_read(const struct mp_cgroup *cg, const char *at, struct mp_pinned *p);
void mp_pinned_free(struct mp_pinned *p);

/* The role of process pid in a reading, "" when not read. */
const char *mp_pinned_role(const struct mp_pinned *p, uint32_t pid);

/* The "pinned" object (docs/report-format.md; pinned_doc.c, the model
 * layer): the top processes, and the drivers' pages from attribution's
 * kernel_paths and not_charged (NULL: drivers null). */
cJSON *mp_pinned_json(const struct mp_pinned *p, const cJSON *attribution, int top);

#endif
