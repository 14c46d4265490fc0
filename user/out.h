/* SPDX-License-Identifier: GPL-2.0 */
/* The -o writer: reports written whole or not at all (out.c). */
#ifndef MEMPROBE_OUT_H
#define MEMPROBE_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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
/* A report that could not be written (err: an errno) to -o path (NULL or
 * "-": standard output): one "problem; fix" line on stderr naming the file,
 * the fix chosen by the error (space, permission, device). MP_EXIT_RUNTIME. */
int mp_out_failed(const char *cmd, const char *path, int err);
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

#endif
