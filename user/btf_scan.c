// SPDX-License-Identifier: GPL-2.0
/* Raw BTF walked in place (see btf_scan.h). */
#include "btf_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bytes after struct btf_type that a record of t's kind carries; -1 for a
 * kind this walker does not know (newer than BTF_KIND_ENUM64). */
static long extra_size(const struct btf_type *t)
{
	long vlen = BTF_INFO_VLEN(t->info);

	switch (BTF_INFO_KIND(t->info)) {
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4; /* __u32 encoding; struct btf_var; struct btf_decl_tag */
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return vlen * (long)sizeof(struct btf_enum64);
	default:
		return -1;
	}
}

/* Check the header and sections, then index the types in one pass; the
 * index is sized for the most records the section could hold (12 bytes
 * each), of which only the pages used are ever touched. */
static int index_types(struct mp_btf *b)
{
	const struct btf_header *h = (const void *)b->data;
	uint64_t end_t, end_s;
	uint32_t n = 1;

	if (b->size < sizeof(*h) || h->magic != BTF_MAGIC)
		return -EPROTO;
	if (h->version != BTF_VERSION || h->hdr_len < sizeof(*h) || h->hdr_len > b->size)
		return -EINVAL;
	end_t = (uint64_t)h->hdr_len + h->type_off + h->type_len;
	end_s = (uint64_t)h->hdr_len + h->str_off + h->str_len;
	/* records are read in place: the type section must be 4-byte aligned */
	if (end_t > b->size || end_s > b->size || (h->hdr_len + h->type_off) % 4 || !h->str_len)
		return -EINVAL;
	b->types = b->data + h->hdr_len + h->type_off;
	b->strs = (const char *)b->data + h->hdr_len + h->str_off;
	b->strs_len = h->str_len;
	if (b->strs[b->strs_len - 1] != '\0')
		return -EINVAL;
	b->offs = malloc((h->type_len / sizeof(struct btf_type) + 2) * sizeof(*b->offs));
	if (!b->offs)
		return -ENOMEM;
	for (uint32_t off = 0; off < h->type_len; n++) {
		const struct btf_type *t = (const void *)(b->types + off);
		long extra;

		if (h->type_len - off < sizeof(*t) || (extra = extra_size(t)) < 0 ||
		    h->type_len - off - sizeof(*t) < (uint64_t)extra)
			return -EINVAL;
		b->offs[n] = off;
		off += (uint32_t)(sizeof(*t) + extra);
	}
	b->nr_types = n;
	return 0;
}

int mp_btf_from_data(const void *data, size_t size, struct mp_btf *b)
{
	void *copy = malloc(size ? size : 1);
	int ret;

	memset(b, 0, sizeof(*b));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, data, size);
	b->data = copy;
	b->size = size;
	if ((ret = index_types(b)))
		mp_btf_free(b);
	return ret;
}

/* Read fd's size bytes into a new buffer (sysfs gives a page a read). */
static int read_all(int fd, size_t size, struct mp_btf *b)
{
	uint8_t *buf = malloc(size ? size : 1);
	size_t got = 0;

	if (!buf)
		return -ENOMEM;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -EINVAL; /* shorter than its size */
		}
		got += (size_t)n;
	}
	b->data = buf;
	b->size = size;
	return 0;
}

int mp_btf_load(const char *path, struct mp_btf *b)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	struct stat st;
	void *m;

	memset(b, 0, sizeof(*b));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
	} else if (st.st_size < (off_t)sizeof(struct btf_header)) {
		ret = -EPROTO; /* too short for BTF: not one (libbpf may know it) */
	} else {
		/* sysfs before 6.16 cannot map its BTF: read it then */
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			b->data = m;
			b->size = b->map_len = (size_t)st.st_size;
		} else {
			ret = read_all(fd, (size_t)st.st_size, b);
		}
	}
	close(fd);
	if (!ret && (ret = index_types(b)))
		mp_btf_free(b);
	return ret;
}

void mp_btf_free(struct mp_btf *b)
{
	if (b->map_len)
		munmap((void *)b->data, b->map_len);
	else
		free((void *)b->data);
	free(b->offs);
	memset(b, 0, sizeof(*b));
}

const struct btf_type *mp_btf_type(const struct mp_btf *b, uint32_t id)
{
	static const struct btf_type void_type;

	if (id == 0)
		return &void_type;
	if (id >= b->nr_types)
		return NULL;
	return (const void *)(b->types + b->offs[id]);
}

const char *mp_btf_str(const struct mp_btf *b, uint32_t off)
{
	return off < b->strs_len ? b->strs + off : "";
}

int mp_btf_resolve(const struct mp_btf *b, uint32_t id)
{
	const struct btf_type *t = mp_btf_type(b, id);

	for (int depth = 0; depth < 32; depth++) {
		int k;

		if (!t || id == 0)
			return -EINVAL;
		k = BTF_INFO_KIND(t->info);
		if (k == BTF_KIND_FWD) /* libbpf counts a forward declaration void */
			return -EINVAL;
		if (k != BTF_KIND_TYPEDEF && k != BTF_KIND_VOLATILE && k != BTF_KIND_CONST &&
		    k != BTF_KIND_RESTRICT && k != BTF_KIND_TYPE_TAG && k != BTF_KIND_VAR)
			return (int)id;
		id = t->type;
		t = mp_btf_type(b, id);
	}
	return -EINVAL;
}
