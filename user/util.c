// SPDX-License-Identifier: GPL-2.0
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int mp_parse_size(const char *s, uint64_t *bytes)
{
	static const struct { const char *name; int shift; } units[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kb", 10 }, { "kib", 10 }, { "ki", 10 },
		{ "m", 20 }, { "mb", 20 }, { "mib", 20 }, { "mi", 20 },
		{ "g", 30 }, { "gb", 30 }, { "gib", 30 }, { "gi", 30 },
		{ "t", 40 }, { "tb", 40 }, { "tib", 40 }, { "ti", 40 },
	};
	uint64_t whole = 0, frac_num = 0, frac_den = 1;
	const char *p = s;
	size_t i;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL; /* also rejects "-1G", " 1G", "" */
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
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
		return -EINVAL;
	if (units[i].shift && whole > ((uint64_t)INT64_MAX >> units[i].shift))
		return -ERANGE;
	whole <<= units[i].shift;
	/* frac_num < 10^9 < 2^30 and shift <= 40: 128 bits hold the product */
	whole += (uint64_t)(((unsigned __int128)frac_num << units[i].shift) / frac_den);
	if (whole > (uint64_t)INT64_MAX)
		return -ERANGE;
	*bytes = whole;
	return 0;
}

const char *mp_fmt_bytes(uint64_t b, char *buf, size_t len)
{
	if (b == MP_UNLIMITED)
		snprintf(buf, len, "max");
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

int mp_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int mp_out_check(const char *path)
{
	char dir[4096], *slash;

	if (!path || strcmp(path, "-") == 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		dir[1] = '\0';
	else if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	return access(dir, W_OK) ? -errno : 0;
}

int mp_out_open(struct mp_out *o, const char *path)
{
	struct stat st;
	int fd;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* Not a regular file (/dev/null, a FIFO, a terminal): written in place.
	 * Renaming a temporary file over it would replace the device. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "we");
		o->direct = true;
		return o->f ? 0 : -errno;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	snprintf(o->tmp, sizeof(o->tmp), "%s.memprobe-tmp-%d", path, (int)getpid());
	fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int err = -errno;

		close(fd);
		unlink(o->tmp);
		return err;
	}
	return 0;
}

int mp_out_commit(struct mp_out *o)
{
	int err = 0;

	if (!o->f)
		return -EBADF;
	if (fflush(o->f) || ferror(o->f))
		err = errno ? -errno : -EIO;
	if (o->f == stdout) {
		o->f = NULL;
		return err;
	}
	if (fclose(o->f) && !err)
		err = errno ? -errno : -EIO;
	o->f = NULL;
	if (o->direct)
		return err;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	return err;
}

void mp_out_abort(struct mp_out *o)
{
	if (!o->f)
		return;
	if (o->f != stdout) {
		fclose(o->f);
		if (!o->direct)
			unlink(o->tmp);
	}
	o->f = NULL;
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
