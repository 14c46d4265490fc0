// SPDX-License-Identifier: GPL-2.0
/*
 * The status line of probe and record (status.h): one look, one rate
 * limit, and the rule that nothing of it reaches a file, a pipe or the
 * report unless --progress asks for plain lines.
 */
#include "status.h"
#include "cgroup.h"
#include "util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define CLEAR "\r\033[K"

/* The line on the screen now, for mp_status_interrupt; one at a time. */
static struct mp_status *g_shown;

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

void mp_status_begin(struct mp_status *s, enum mp_status_mode mode, int fd)
{
	const char *term = getenv("TERM");

	/* a terminal that cannot erase a line (TERM=dumb: an editor's shell
	 * buffer, say) is written as a file is: plain lines, with --progress */
	*s = (struct mp_status){ .fd = fd,
				 .tty = isatty(fd) == 1 && !(term && !strcmp(term, "dumb")) };
	s->on = mode == MP_STATUS_FORCE || (mode == MP_STATUS_AUTO && s->tty);
	s->period_ms = s->tty ? MP_STATUS_TTY_MS : MP_STATUS_LOG_MS;
}

bool mp_status_due(struct mp_status *s, bool last)
{
	return s->on && (last || now_ms() >= s->next_ms);
}

/* The terminal's width, 0 when it has none to tell (a pty without a size):
 * then the line is not cut. */
static size_t tty_cols(int fd)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

void mp_status_update(struct mp_status *s, uint64_t t_ms, const char *fmt, ...)
{
	char line[512];
	size_t pre = s->tty ? strlen(CLEAR) : 0, n, cols;
	va_list ap;

	if (!s->on)
		return;
	s->next_ms = now_ms() + s->period_ms;
	snprintf(line, sizeof(line), "%s%7.1fs  ", s->tty ? CLEAR : "", (double)t_ms / 1000.0);
	n = strlen(line);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(line);
	while (n > pre && line[n - 1] == ' ') /* a field left empty at the end */
		n--;
	/* a line as wide as the terminal would wrap at its last column */
	if (s->tty && (cols = tty_cols(s->fd)) && n - pre >= cols)
		n = pre + cols - 1;
	if (!s->tty)
		line[n++] = '\n';
	if (write(s->fd, line, n) < 0) {
		/* stderr gone: the run goes on without its line */
	}
	s->shown = s->tty;
	if (s->shown)
		g_shown = s;
}

void mp_status_clear(struct mp_status *s)
{
	if (s->shown && write(s->fd, CLEAR, strlen(CLEAR)) < 0) {
		/* as above */
	}
	s->shown = false;
	if (g_shown == s)
		g_shown = NULL;
}

void mp_status_interrupt(void)
{
	if (g_shown)
		mp_status_clear(g_shown);
}

const char *mp_status_usage(char *buf, size_t len, uint64_t usage_bytes, uint64_t limit_bytes,
			    uint64_t throttle_bytes)
{
	char u[32], l[32], t[32];
	const char *th = throttle_bytes ? mp_fmt_bytes(throttle_bytes, t, sizeof(t)) : NULL;

	mp_fmt_bytes(usage_bytes, u, sizeof(u));
	mp_fmt_bytes(limit_bytes, l, sizeof(l));
	if (limit_bytes == MP_UNLIMITED || !limit_bytes)
		snprintf(buf, len, "usage %s (no limit", u);
	else
		snprintf(buf, len, "usage %s (%.0f%% of %s", u,
			 100.0 * (double)usage_bytes / (double)limit_bytes, l);
	if (th)
		mp_appendf(buf, len, ", throttle at %s", th);
	mp_appendf(buf, len, ")");
	return buf;
}

const char *mp_status_eta(char *buf, size_t len, uint64_t left_bytes, double bytes_per_sec)
{
	double s;

	buf[0] = '\0';
	if (bytes_per_sec <= 0)
		return buf;
	s = (double)left_bytes / bytes_per_sec;
	if (s < 10) /* a fast fill: whole seconds would say 0 */
		snprintf(buf, len, "~%.1fs left", s);
	else if (s < 60)
		snprintf(buf, len, "~%.0fs left", s);
	else if (s < 100 * 3600)
		snprintf(buf, len, "~%um%02us left", (unsigned)(s / 60), (unsigned)s % 60);
	return buf;
}

/*
 * HERE the throttling point of the headroom helper (issue 11) goes in: the
 * contract's throttle_bytes on struct mp_cgroup (the lowest memory.high on
 * the path, or v1's soft limit), once cgroup.c has it. Until then the
 * target's own memory.high (v2), which cgroup.c already reads.
 */
uint64_t mp_status_throttle_bytes(const struct mp_cgroup *cg)
{
	if (cg->has_high && cg->high_bytes < cg->effective_limit_bytes)
		return cg->high_bytes;
	return 0;
}
