/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The status line probe and record keep on standard error while they run,
 * one look for both: the elapsed time, then the command's own fields, two
 * spaces apart; the usage against the limit is worded here once.
 *
 * On a terminal the line is redrawn in place ("\r" ESC[K, at most every
 * MP_STATUS_TTY_MS) and cleared before anything else is printed, so that
 * nothing of it stays on the screen. Elsewhere (a file, a pipe) nothing is
 * written, unless --progress forces it: then each redraw is one plain line
 * ending in "\n", without escape codes, at most every MP_STATUS_LOG_MS, so
 * that a log stays readable and greppable.
 */
#ifndef MEMPROBE_STATUS_H
#define MEMPROBE_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mp_cgroup;

/* --quiet, --progress, or neither: a line only on a terminal. */
enum mp_status_mode { MP_STATUS_AUTO, MP_STATUS_QUIET, MP_STATUS_FORCE };

#define MP_STATUS_TTY_MS 250
#define MP_STATUS_LOG_MS 1000

struct mp_status {
	int fd;             /* standard error, but for the unit test */
	bool on;            /* drawn at all */
	bool tty;           /* redrawn in place; else one plain line per redraw */
	bool shown;         /* tty: a line is on the screen now */
	uint64_t period_ms; /* the least time between two redraws */
	uint64_t next_ms;   /* on the monotonic clock: the next redraw's earliest */
};

/* Decide whether and how lines go to fd (isatty, mode). */
void mp_status_begin(struct mp_status *s, enum mp_status_mode mode, int fd);

/* Is a redraw due: on, and the period passed since the last one (or last:
 * the final state, always drawn)? One clock read, no system call (vDSO). */
bool mp_status_due(struct mp_status *s, bool last);

/* Draw the line: t_ms as "%7.1fs", two spaces, then fmt. Cut at the
 * terminal's width, so that it never wraps (a wrapped line is not cleared
 * by "\r" ESC[K). One write(2), so that it is not interleaved. */
void mp_status_update(struct mp_status *s, uint64_t t_ms, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Take the line off the screen (tty); nothing to do for plain lines. */
void mp_status_clear(struct mp_status *s);

/* Before a message on stderr while a line may be shown: the line shown
 * (any mp_status) is cleared; the next update draws it again. */
void mp_status_interrupt(void);

/* "usage 210.3 MiB (10% of 2.00 GiB)", with ", throttle at 1.50 GiB"
 * inside the parentheses when throttle_bytes is not 0. Returns buf. */
const char *mp_status_usage(char *buf, size_t len, uint64_t usage_bytes, uint64_t limit_bytes,
			    uint64_t throttle_bytes);

/* "~0.4s left", "~12s left", "~2m05s left", or "" when the rate is not known yet. */
const char *mp_status_eta(char *buf, size_t len, uint64_t left_bytes, double bytes_per_sec);

/* The cgroup's throttling point below its effective limit, 0 when none. */
uint64_t mp_status_throttle_bytes(const struct mp_cgroup *cg);

#endif
