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
/* "No limit" inside memprobe; never printed (JSON writes null, text "max"). */
#define MP_UNLIMITED UINT64_MAX

/* Exit statuses: bad input is 2, a failure at run time is 1. */
#define MP_EXIT_RUNTIME 1
#define MP_EXIT_USAGE 2

/*
 * Parse a size: decimal bytes with an optional binary suffix (K, M, G, T,
 * optionally followed by "i", "B" or "iB", any case), e.g. "512M", "1GiB",
 * "4096". Fractions like "1.5G" are accepted and rounded down to a byte.
 * Returns 0 and stores bytes, -EINVAL on a malformed or negative size,
 * -ERANGE when it does not fit in 63 bits.
 */
int mp_parse_size(const char *s, uint64_t *bytes);

/* Format bytes for people: "1.50 GiB", "512.0 MiB", "4096 B". Returns buf. */
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

/*
 * A report file for -o PATH, written whole or not at all where PATH names a
 * regular file or nothing: the report goes to a temporary file beside it
 * (BASE.memprobe-tmp-PID), renamed over it only once complete, so a failed
 * run never clobbers an earlier report. Symlinks are followed: the file they
 * finally name is replaced (beside it), never the link. PATH NULL or "-" is
 * standard output; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N
 * are written through a dup of that descriptor (so >, >> and pipes behave as
 * the shell set them up); anything else that is not a regular file (a FIFO,
 * a device, a unix socket) is written in place, never replaced.
 */
struct mp_out {
	FILE *f;
	bool direct;   /* written in place: not a regular file */
	char path[4096];
	char tmp[4200];
};

/* Can a report be written to PATH? NULL and "-" are standard output.
 * Returns 0, -EISDIR (a directory), -EBADF (a descriptor of ours not open
 * for writing), -EINVAL (""), or -errno (-ENOENT: no such directory). */
int mp_out_check(const char *path);
/* The -o option of command cmd, at option time: 0 when a report can be
 * written to path (NULL: none given), else one line on stderr ("memprobe
 * CMD: -o PATH: problem; fix") and MP_EXIT_USAGE. "" and a directory are
 * refused. */
int mp_out_check_opt(const char *cmd, const char *path);
/* Do paths a and b name one file: the same path, the same regular file
 * (st_dev/st_ino, through symlinks and hard links), or the same name in the
 * same directory for a file not there yet? NULL, "" and "-" name none. */
bool mp_same_file(const char *a, const char *b);

/* record --openmetrics PATH (mp_out_check() passed it), rewritten every
 * interval beside the report going to report (NULL or "-": standard
 * output): 0, or out_resolve()'s error, -EPIPE for a FIFO (its open would wait for a reader, and stop the
 * recording), -EBUSY for a descriptor the report is written to too. */
int mp_out_live_check(const char *path, const char *report);
/* Returns 0, or -errno when PATH cannot be opened (the temporary file cannot
 * be created). Before creating its temporary file, removes the ones beside it
 * that memprobes no longer running left (BASE.memprobe-tmp-PID, regular
 * files, PID not a live process whose comm is memprobe). */
int mp_out_open(struct mp_out *o, const char *path);
/* Does the report go where descriptor fd goes (the same open file: -o -,
 * /dev/stdout, /dev/fd/1, or a FIFO both name)? */
bool mp_out_shares_fd(const struct mp_out *o, int fd);
/* Flush, close and rename into place. Returns 0 or -errno (then removed). */
int mp_out_commit(struct mp_out *o);
/* Close and remove the temporary file. */
void mp_out_abort(struct mp_out *o);
/* The temporary file still where PATH's directory has it: 0. Moved away
 * with its directory (rotated) or removed: made anew beside PATH, the old
 * one removed from where it went (1); -errno when the new one cannot be
 * made (the old one kept). Standard output and files written in place: 0. */
int mp_out_reopen(struct mp_out *o);

/* Write text (len bytes) to a new file at path, whole or not at all: a
 * temporary file beside it (PATH.memprobe-tmp-PID, reaped as mp_out_open's
 * are) renamed to path only where nothing has that name. 0, -EEXIST where
 * something does, or -errno. */
int mp_save_new(const char *path, const char *text, size_t len);

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
