// SPDX-License-Identifier: GPL-2.0
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* "kb", "MB", "gB", "Tb": the SI spelling, which a binary size must not take */
static bool si_suffix(const char *p)
{
	return p[0] && strchr("kKmMgGtT", p[0]) && (p[1] == 'b' || p[1] == 'B') && !p[2];
}

int mp_parse_size(const char *s, uint64_t *bytes)
{
	/* Binary only, and no bare "B": 1GB is 10^9 bytes to SI, to disk
	 * makers and to Kubernetes' "1G", 2^30 to Docker; "b" is 512 to dd. */
	static const struct { const char *name; int shift; } units[] = {
		{ "", 0 },
		{ "k", 10 }, { "kib", 10 }, { "ki", 10 },
		{ "m", 20 }, { "mib", 20 }, { "mi", 20 },
		{ "g", 30 }, { "gib", 30 }, { "gi", 30 },
		{ "t", 40 }, { "tib", 40 }, { "ti", 40 },
	};
	uint64_t whole = 0, frac_num = 0, frac_den = 1;
	const char *p = s;
	bool frac = false;
	size_t i;

	if (!s || !isdigit((unsigned char)*p))
		return MP_SIZE_MALFORMED; /* also rejects "-1G", " 1G", "" */
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return MP_SIZE_TOO_LARGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		frac = true;
		if (!isdigit((unsigned char)*p))
			return MP_SIZE_MALFORMED;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_den < 1000000000ULL) {
				frac_num = frac_num * 10 + (uint64_t)(*p - '0');
				frac_den *= 10;
			}
		}
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcasecmp(p, units[i].name) == 0)
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return si_suffix(p) ? MP_SIZE_SI_SUFFIX : MP_SIZE_MALFORMED;
	if (frac && !units[i].shift)
		return MP_SIZE_PART_BYTE; /* a byte count is whole */
	if (units[i].shift && whole > ((uint64_t)INT64_MAX >> units[i].shift))
		return MP_SIZE_TOO_LARGE;
	whole <<= units[i].shift;
	/* frac_num < 10^9 < 2^30 and shift <= 40: 128 bits hold the product */
	whole += (uint64_t)(((unsigned __int128)frac_num << units[i].shift) / frac_den);
	if (whole > (uint64_t)INT64_MAX)
		return MP_SIZE_TOO_LARGE;
	*bytes = whole;
	return 0;
}

const char *mp_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b == MP_UNLIMITED)
		snprintf(buf, len, "max");
	else if (b >= MP_TIB)
		snprintf(buf, len, "%.2f TiB", (double)b / MP_TIB);
	else if (b >= MP_GIB)
		snprintf(buf, len, "%.2f GiB", (double)b / MP_GIB);
	else if (b >= MP_MIB)
		snprintf(buf, len, "%.1f MiB", (double)b / MP_MIB);
	else if (b >= MP_KIB)
		snprintf(buf, len, "%.1f KiB", (double)b / MP_KIB);
	else
		snprintf(buf, len, "%" PRIu64 " B", b);
	return buf;
}

const char *mp_fmt_sbytes(int64_t b, char *buf, size_t len)
{
	if (b >= 0)
		return mp_fmt_bytes((uint64_t)b, buf, len);
	buf[0] = '-';
	mp_fmt_bytes((uint64_t)(-(b + 1)) + 1, buf + 1, len - 1);
	return buf;
}

int mp_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - (size_t)total);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (n == 0)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return (int)total;
}

int mp_read_u64_file(const char *path, uint64_t *val)
{
	char buf[64], *end;
	int n = mp_read_file(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	if (strncmp(buf, "max", 3) == 0) {
		*val = MP_UNLIMITED;
		return 0;
	}
	errno = 0;
	*val = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

int mp_read_keyed_u64(const char *path, const char *key, uint64_t *val)
{
	char line[512];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line + klen;

		if (strncmp(line, key, klen) != 0)
			continue;
		if (*p == ':')
			p++;
		if (*p != ' ' && *p != '\t')
			continue;
		*val = strtoull(p, NULL, 10);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

int mp_write_file(const char *path, const char *s)
{
	size_t len = strlen(s);
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	return (size_t)n == len ? 0 : -EIO;
}

int mp_appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(buf, len);
	va_list ap;
	int n;

	if (used + 1 >= len)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len - used ? -ENOSPC : 0;
}

int mp_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}


bool mp_pid_is_memprobe(long pid)
{
	char p[64], comm[64];

	snprintf(p, sizeof(p), "/proc/%ld/comm", pid);
	if (mp_read_file(p, comm, sizeof(comm)) < 0)
		return false; /* no such process (or it just went) */
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, "memprobe") == 0;
}

const char *mp_bad_option(char **argv, char *buf, size_t len)
{
	extern int optind, optopt;

	/* a short option in a cluster ("-xyz"): getopt names the letter */
	if (optopt && optopt != '?' && !(argv[optind - 1][0] == '-' && argv[optind - 1][1] == '-'))
		snprintf(buf, len, "-%c", optopt);
	else
		snprintf(buf, len, "%s", argv[optind - 1]);
	return buf;
}

int mp_root_path(char *buf, size_t len, const char *root, const char *path)
{
	return mp_path(buf, len, "%s%s", root ? root : "", path);
}

void mp_strlcpy(char *dst, const char *src, size_t len)
{
	size_t n = strlen(src);

	if (n > len - 1)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

bool mp_list_has(const char *list, const char *want)
{
	size_t n = strlen(want);
	const char *p = list;

	while ((p = strstr(p, want))) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return true;
		p += n;
	}
	return false;
}
