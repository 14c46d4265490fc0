// SPDX-License-Identifier: GPL-2.0
/* The pinned object from a hand-made reading and attribution object. */
#include <stdlib.h>

#include "json.h"
#include "pinned.h"
#include "unit.h"

#define MIB (1ull << 20)

static uint64_t u64_of(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (cJSON_IsRaw(it))
		return strtoull(it->valuestring, NULL, 10);
	return cJSON_IsNumber(it) ? (uint64_t)it->valuedouble : UINT64_MAX;
}

static const char *str_of(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(it) ? it->valuestring : "(none)";
}

static cJSON *path(const char *p, uint64_t alloc)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "path", p);
	mp_json_add_u64(o, "alloc_bytes", alloc);
	return o;
}

int main(void)
{
	struct mp_pinned_task t[3] = {
		{ .pid = 10, .comm = "pool", .vm_lck_bytes = 64 * MIB, .rss_shmem_bytes = 96 * MIB,
		  .have_locked = true, .locked_bytes = { 64 * MIB, 0, 0 } },
		{ .pid = 11, .comm = "db", .vm_lck_bytes = 32 * MIB, .have_locked = true,
		  .locked_bytes = { 0, 30 * MIB, 2 * MIB } },
		{ .pid = 12, .comm = "rdma", .vm_pin_bytes = 8 * MIB },
	};
	struct mp_pinned p = {
		.taken = true, .at = "peak", .have_unevictable = true,
		.unevictable_bytes = 96 * MIB, .nprocs = 5, .vm_lck_bytes = 96 * MIB,
		.vm_pin_bytes = 8 * MIB, .rss_shmem_max_bytes = 96 * MIB, .tasks = t, .ntasks = 3,
	};
	/* a shared segment of five mappers: three backends, a checkpointer,
	 * and a process no longer read (no role) */
	struct mp_proc_role roles[] = {
		{ 20, "postgres", "backend" }, { 21, "postgres", "backend" },
		{ 22, "postgres", "checkpointer" }, { 23, "postgres", "backend" },
	};
	uint32_t mappers[] = { 20, 21, 22, 23, 24 };
	const cJSON *seg;
	cJSON *a = cJSON_CreateObject(), *kp = cJSON_AddArrayToObject(a, "kernel_paths");
	cJSON *nc = cJSON_AddArrayToObject(a, "not_charged"), *o, *tk, *d;

	cJSON_AddItemToArray(kp, path("pagetables", 4 * MIB));
	cJSON_AddItemToArray(kp, path("driver:nvidia", 12 * MIB));
	cJSON_AddItemToArray(nc, path("driver:nvidia", 4 * MIB));
	cJSON_AddItemToArray(nc, path("pagetables", 1 * MIB));

	p.roles = roles;
	p.nroles = 4;
	p.nsegs = 1;
	p.segs[0] = (struct mp_shm_seg){ .name = "/dev/zero (deleted)", .mapped_bytes = 272 * MIB,
					 .have_resident = true, .resident_bytes = 131 * MIB,
					 .pids = mappers, .npids = 5 };
	o = mp_pinned_json(&p, a, 2);
	CHECK(!cJSON_GetObjectItem(o, "rss_shmem_bytes"), "RssShmem is not summed over mappers");
	CHECK_U64(u64_of(o, "rss_shmem_max_bytes"), 96 * MIB, "the largest RssShmem of one");
	seg = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "shared_segments"), 0);
	CHECK_U64(u64_of(o, "shared_segments_total"), 1, "one segment");
	CHECK_STR(str_of(seg, "name"), "/dev/zero (deleted)", "its name");
	CHECK_U64(u64_of(seg, "resident_bytes"), 131 * MIB, "its resident bytes, once");
	CHECK_U64(u64_of(seg, "mappers"), 5, "its mappers");
	CHECK_U64(cJSON_GetArraySize(cJSON_GetObjectItem(seg, "mapper_groups")), 2,
		  "mappers by name and role (the unread one left out)");
	CHECK_STR(str_of(cJSON_GetArrayItem(cJSON_GetObjectItem(seg, "mapper_groups"), 0), "role"),
		  "backend", "the backends first");
	CHECK_U64(u64_of(cJSON_GetArrayItem(cJSON_GetObjectItem(seg, "mapper_groups"), 0),
			 "processes"), 3, "three backends");
	CHECK_STR(str_of(o, "at"), "peak", "at");
	CHECK_U64(u64_of(o, "unevictable_bytes"), 96 * MIB, "unevictable");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "shmem_bytes")), "no shmem key: null");
	CHECK_U64(u64_of(o, "processes"), 5, "processes read");
	tk = cJSON_GetObjectItem(o, "tasks");
	CHECK_U64(cJSON_GetArraySize(tk), 2, "--top 2");
	CHECK_STR(str_of(cJSON_GetArrayItem(tk, 0), "category"), "shmem", "a locked shmem pool");
	CHECK_U64(u64_of(cJSON_GetObjectItem(cJSON_GetArrayItem(tk, 0), "locked"), "shmem_bytes"),
		  64 * MIB, "its locked shmem");
	CHECK_STR(str_of(cJSON_GetArrayItem(tk, 1), "category"), "anon", "mlocked anon");
	d = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "drivers"), 0);
	CHECK_U64(cJSON_GetArraySize(cJSON_GetObjectItem(o, "drivers")), 1, "one driver path");
	CHECK_STR(str_of(d, "driver"), "nvidia", "the driver's name");
	CHECK_U64(u64_of(d, "alloc_bytes"), 12 * MIB, "its pages");
	CHECK_U64(u64_of(d, "charged_bytes"), 8 * MIB, "charged");
	CHECK_U64(u64_of(d, "not_charged_bytes"), 4 * MIB, "not charged");
	cJSON_Delete(o);

	p.ntasks = 3;
	p.nsegs = 0;
	o = mp_pinned_json(&p, NULL, 10);
	tk = cJSON_GetObjectItem(o, "tasks");
	CHECK_STR(str_of(cJSON_GetArrayItem(tk, 2), "category"), "pinned", "VmPin alone");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(tk, 2), "locked")),
	      "no VmLck: smaps not read, locked null");
	CHECK(cJSON_IsNull(cJSON_GetObjectItem(o, "drivers")), "no attribution: drivers null");
	cJSON_Delete(o);
	cJSON_Delete(a);
	return unit_done("pinned");
}
