/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A raw BTF blob walked in place: the header, the type section indexed
 * record by record (each kind's size from linux/btf.h), the string section
 * for names. What libbpf's btf__parse does too, minus its copies, its
 * sanity pass over every type and its hash tables: memprobe reads a handful
 * of facts from the kernel's BTF once per start, before libbpf parses its
 * own copy for CO-RE, and this pass is most of a start's user-space time
 * when done through libbpf. Records are the kernel's struct btf_type, so
 * libbpf's inline helpers (btf_vlen, btf_enum, btf_params, btf_is_*) apply.
 */
#ifndef MEMPROBE_BTF_SCAN_H
#define MEMPROBE_BTF_SCAN_H

#include <linux/btf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mp_btf {
	const uint8_t *data;    /* the whole blob: mapped, or owned (heap) */
	size_t size;
	size_t map_len;         /* mmap length; 0: data is malloc'd */
	const uint8_t *types;   /* the type section */
	const char *strs;       /* the string section, NUL-terminated */
	uint32_t strs_len;
	uint32_t *offs;         /* offs[id]: type id's offset in types; id >= 1 */
	uint32_t nr_types;      /* ids 1 .. nr_types - 1 (0 is void) */
};

/*
 * Load a raw BTF file (such as /sys/kernel/btf/vmlinux) into b: mapped when
 * the file can be mapped (sysfs can since 6.16, files always), else read.
 * Returns 0; -EPROTO when the file is not raw BTF in this host's byte order
 * (an ELF, or the other endianness: give it to libbpf's btf__parse and
 * mp_btf_from_data); -EINVAL when it is BTF but malformed (truncated, a
 * record past its section, a kind this walker does not know); other -errno
 * from open/read. On error b holds nothing to free.
 */
int mp_btf_load(const char *path, struct mp_btf *b);

/*
 * Walk size bytes of raw BTF at data (copied: the caller keeps its own).
 * Returns 0, -EPROTO or -EINVAL as mp_btf_load, -ENOMEM.
 */
int mp_btf_from_data(const void *data, size_t size, struct mp_btf *b);

/* Release what mp_btf_load or mp_btf_from_data took; b zeroed. */
void mp_btf_free(struct mp_btf *b);

/* Type id's record; id 0 is void (kind 0, size 0); NULL past the last id. */
const struct btf_type *mp_btf_type(const struct mp_btf *b, uint32_t id);

/* The string at offset off in the string section; "" when off is past it. */
const char *mp_btf_str(const struct mp_btf *b, uint32_t off);

/*
 * Follow typedefs, modifiers (const, volatile, restrict, type tags) and
 * vars from id to the type they name, as libbpf's btf__resolve_type.
 * Returns that id, or -EINVAL when the chain ends in void, a forward
 * declaration or past the last id, or is longer than 32 (a loop).
 */
int mp_btf_resolve(const struct mp_btf *b, uint32_t id);

#endif
