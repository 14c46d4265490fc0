/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_UTIL_H
#define MEMPROBE_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>

#define MP_KIB (1024ULL)
#define MP_MIB (1024ULL * 1024)
#define MP_GIB (1024ULL * 1024 * 1024)
#define MP_TIB (1024ULL * 1024 * 1024 * 1024)
/* "No limit" inside memprobe; never printed (JSON writes null, text "max"). */
#define MP_UNLIMITED UINT64_MAX

/* Exit statuses: bad input is 2, a failure at run time is 1. */
#define MP_EXIT_RUNTIME 1
#define MP_EXIT_USAGE 2

/*
 * Parse a size: decimal bytes with an optional binary suffix (K, M, G, T,
 * optionally followed by "i" or "iB", any case), e.g. "512M", "1GiB",
 * "4096": the kernel's memory.max takes the first form, Kubernetes the
 * second. Fractions like "1.5G" are accepted and rounded down to a byte.
 * Returns 0 and stores bytes, or why not (enum mp_size_err).
 */
enum mp_size_err {
	MP_SIZE_MALFORMED = -1,    /* not a size: "12Q", "-1G", "1e9", "100B" */
	MP_SIZE_TOO_LARGE = -2,    /* beyond 63 bits */
	MP_SIZE_SI_SUFFIX = -3,    /* "1GB": 10^9 bytes to some, 2^30 to others */
	MP_SIZE_PART_BYTE = -4,    /* "268435456.5": a fraction without a suffix */
};
int mp_parse_size(const char *s, uint64_t *bytes);

/* Format bytes for people: "2.00 TiB", "1.50 GiB", "512.0 MiB", "4096 B":
 * the one size formatter every renderer's sizes come from (text, markdown,
 * html, compare; csv and openmetrics print bytes). Returns buf. */
const char *mp_fmt_bytes(uint64_t bytes, char *buf, size_t len);
/* Same for signed amounts ("-3.0 MiB"). */
const char *mp_fmt_sbytes(int64_t bytes, char *buf, size_t len);

/*
 * Read a whole small file into buf (NUL-terminated, trailing newline kept).
 * Returns bytes read, or -errno.
 */
int mp_read_file(const char *path, char *buf, size_t len);

/*
 * Read a file holding one unsigned number or the word "max" (stored as
 * MP_UNLIMITED). Returns 0, -errno when unreadable, -EINVAL when not a number.
 */
int mp_read_u64_file(const char *path, uint64_t *val);

/* Find "key value" in a file of such lines (memory.stat, memory.events,
 * /proc/meminfo with a ':' after the key). Returns 0, -ENOENT or -errno. */
int mp_read_keyed_u64(const char *path, const char *key, uint64_t *val);

/* Write a string to a file (cgroup control files). Returns 0 or -errno. */
int mp_write_file(const char *path, const char *s);

/* Append to the NUL-terminated string in buf (len bytes in all): lists
 * built piece by piece, cut short where they do not fit. Returns 0, or
 * -ENOSPC when what was appended was cut. */
int mp_appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* snprintf into a PATH_MAX buffer; returns -ENAMETOOLONG on truncation. */
int mp_path(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* root + path: the readers take a root prefixed to every absolute path
 * they open ("" or NULL: the live system), so that unit tests run them on
 * trees captured from real machines. -ENAMETOOLONG on truncation. */
int mp_root_path(char *buf, size_t len, const char *root, const char *path);

/* Copy with truncation, always NUL-terminated. */
void mp_strlcpy(char *dst, const char *src, size_t len);

/* Is want one of the comma-separated words of list (mount options, a
 * cgroup's controllers), the list ending at NUL or a newline? */
bool mp_list_has(const char *list, const char *want);

/* Is pid a live memprobe (its comm is memprobe), not a pid since reused by
 * another program? What a killed memprobe left is reaped by this test. */
bool mp_pid_is_memprobe(long pid);

/* The option getopt_long() just refused, as the user typed it. */
const char *mp_bad_option(char **argv, char *buf, size_t len);

#define MP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define MP_MAX(a, b) ((a) > (b) ? (a) : (b))
#define MP_CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : (x) > (hi) ? (hi) : (x))

/* "Still at the peak": usage within 1/64 of it. Reclaim near a limit
 * overshoots what the last page needed, so usage held at its peak reads a
 * little under it. */
static inline bool mp_at_peak(uint64_t usage, uint64_t peak)
{
	return usage + (peak >> 6) >= peak;
}

/* CLOCK_MONOTONIC in nanoseconds (bpf_ktime_get_ns()'s clock). */
static inline uint64_t mp_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/* Round down to a multiple of align (a power of two). */
static inline uint64_t mp_round_down(uint64_t v, uint64_t align)
{
	return v & ~(align - 1);
}

#endif
