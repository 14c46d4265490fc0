// SPDX-License-Identifier: GPL-2.0
/* grow HOLD_MIB STEP_MIB STEP_MS MAX_MIB: touch HOLD_MIB MiB of anonymous
 * memory (MADV_NOHUGEPAGE, 1 MiB at a time); on SIGUSR1, touch STEP_MIB more
 * every STEP_MS ms until MAX_MIB MiB are held; then sleep until killed.
 * A workload that keeps growing while a probe runs beside it (tests/soak.sh):
 * the growth starts when the test says, not at some moment after the hold. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "touch.h"

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1, old;
	struct timespec next;
	long hold, step, ms, max, held;

	if (argc != 5)
		return 2;
	hold = atol(argv[1]);
	step = atol(argv[2]);
	ms = atol(argv[3]);
	max = atol(argv[4]);
	if (hold < 0 || step <= 0 || ms <= 0 || max < hold)
		return 2;

	/* before the first page: a SIGUSR1 sent once the hold shows in the
	 * cgroup's usage must not kill us */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);

	if (touch(hold))
		return 1;
	held = hold;

	sigprocmask(SIG_BLOCK, &usr1, &old);
	while (!go)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (held < max) {
		long n = max - held < step ? max - held : step;

		next.tv_nsec += ms * 1000000L;
		next.tv_sec += next.tv_nsec / 1000000000L;
		next.tv_nsec %= 1000000000L;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL))
			;
		if (touch(n))
			return 1;
		held += n;
	}
	for (;;)
		pause();
}
