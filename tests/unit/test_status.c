// SPDX-License-Identifier: GPL-2.0
/*
 * The status line (status.c): its words, when it is drawn (a terminal, a
 * pipe, --quiet, --progress), the rate limit, and on a terminal the escape
 * codes and the cut at its width. The terminal is a pseudo-terminal.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "cgroup.h"
#include "status.h"
#include "unit.h"
#include "util.h"

/* What was written to the other end of fd, as a string. */
static const char *drain(int fd, char *buf, size_t len)
{
	ssize_t n = read(fd, buf, len - 1);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void test_words(void)
{
	struct mp_cgroup cg = { .has_high = true, .high_bytes = 3 * MP_GIB,
				.effective_limit_bytes = 2 * MP_GIB };
	char b[128];

	CHECK_STR(mp_status_usage(b, sizeof(b), 210 * MP_MIB, 2 * MP_GIB, 0),
		  "usage 210.0 MiB (10% of 2.00 GiB)", "usage");
	CHECK_STR(mp_status_usage(b, sizeof(b), 210 * MP_MIB, 2 * MP_GIB, 3 * MP_GIB / 2),
		  "usage 210.0 MiB (10% of 2.00 GiB, throttle at 1.50 GiB)", "usage, throttle");
	CHECK_STR(mp_status_usage(b, sizeof(b), 5 * MP_MIB, MP_UNLIMITED, 0),
		  "usage 5.0 MiB (no limit)", "usage, no limit");
	CHECK_STR(mp_status_eta(b, sizeof(b), MP_GIB, 0), "", "eta, no rate yet");
	CHECK_STR(mp_status_eta(b, sizeof(b), MP_GIB / 4, (double)MP_GIB), "~0.2s left",
		  "eta 0.25s");
	CHECK_STR(mp_status_eta(b, sizeof(b), 12 * MP_GIB, (double)MP_GIB), "~12s left", "eta 12s");
	CHECK_STR(mp_status_eta(b, sizeof(b), 125 * MP_GIB, (double)MP_GIB), "~2m05s left",
		  "eta 125s");
	/* memory.high above the effective limit never throttles first */
	CHECK_U64(mp_status_throttle_bytes(&cg), 0, "high above the limit");
	cg.high_bytes = MP_GIB;
	CHECK_U64(mp_status_throttle_bytes(&cg), MP_GIB, "high below the limit");
}

/* A pipe: nothing by default or with --quiet; --progress, plain lines. */
static void test_pipe(void)
{
	struct mp_status s;
	int p[2];
	char b[512];

	if (pipe(p))
		return;
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	mp_status_begin(&s, MP_STATUS_AUTO, p[1]);
	CHECK(!mp_status_due(&s, true), "a pipe: off by default");
	mp_status_update(&s, 1000, "x");
	CHECK_STR(drain(p[0], b, sizeof(b)), "", "a pipe: nothing written");
	mp_status_begin(&s, MP_STATUS_FORCE, p[1]);
	CHECK(mp_status_due(&s, false), "--progress: the first line is due");
	mp_status_update(&s, 1234, "%d chunks  ", 5);
	CHECK_STR(drain(p[0], b, sizeof(b)), "    1.2s  5 chunks\n", "--progress: a plain line");
	CHECK(!mp_status_due(&s, false), "--progress: the next only after the period");
	CHECK(mp_status_due(&s, true), "--progress: the last line always");
	mp_status_clear(&s);
	CHECK_STR(drain(p[0], b, sizeof(b)), "", "--progress: clear writes nothing");
	close(p[0]);
	close(p[1]);
}

/* A terminal: redrawn in place, cut at its width, cleared; --quiet: none. */
static void test_tty(void)
{
	struct winsize ws = { .ws_row = 24, .ws_col = 20 };
	struct mp_status s;
	int m = posix_openpt(O_RDWR | O_NOCTTY), t;
	struct termios tio;
	char b[512];

	if (m < 0 || grantpt(m) || unlockpt(m) || (t = open(ptsname(m), O_RDWR | O_NOCTTY)) < 0) {
		SKIP("no pseudo-terminal");
		return;
	}
	tcgetattr(t, &tio);
	cfmakeraw(&tio); /* the bytes as written, no "\n" made "\r\n" */
	tcsetattr(t, TCSANOW, &tio);
	fcntl(m, F_SETFL, O_NONBLOCK);
	mp_status_begin(&s, MP_STATUS_QUIET, t);
	CHECK(!mp_status_due(&s, true), "--quiet on a terminal: off");
	mp_status_begin(&s, MP_STATUS_AUTO, t);
	CHECK(s.on && s.tty, "a terminal: on, in place");
	mp_status_update(&s, 500, "usage 1 MiB");
	CHECK_STR(drain(m, b, sizeof(b)), "\r\033[K    0.5s  usage 1 MiB", "a terminal: in place");
	ioctl(t, TIOCSWINSZ, &ws);
	mp_status_update(&s, 500, "usage 123456789012345");
	CHECK_STR(drain(m, b, sizeof(b)), "\r\033[K    0.5s  usage 123", "cut at 19 columns");
	mp_status_interrupt();
	CHECK_STR(drain(m, b, sizeof(b)), "\r\033[K", "a message clears the line");
	mp_status_clear(&s);
	CHECK_STR(drain(m, b, sizeof(b)), "", "cleared once only");
	close(t);
	close(m);
}

int main(void)
{
	test_words();
	test_pipe();
	test_tty();
	return unit_done("status");
}
