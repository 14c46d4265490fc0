// SPDX-License-Identifier: GPL-2.0
/*
 * crowd PROCS KIB HOLD_MS WAVES: a swarm of short-lived processes.
 * WAVES times: fork PROCS processes that each touch KIB KiB of anonymous
 * memory at once (hundreds faulting together), wait until all of them
 * hold it, hold HOLD_MS ms all alive together, exit together. The parent
 * touches nothing, prints "wave N" to standard output once a wave is all
 * alive and "done" after the last; a wave's processes are gone before the
 * next is born. Killed (SIGTERM/SIGKILL of the parent), the children die
 * with it (PR_SET_PDEATHSIG).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void child(size_t bytes, long hold_ms, int ready, int go)
{
	char *p = NULL, c = 'r';
	struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (bytes) {
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			_exit(1);
		madvise(p, bytes, MADV_NOHUGEPAGE);
		memset(p, 1, bytes);
	}
	if (write(ready, &c, 1) != 1)
		_exit(1);
	/* the parent closes go's write end once the whole wave is alive */
	if (read(go, &c, 1) < 0)
		_exit(1);
	nanosleep(&ts, NULL);
	_exit(0);
}

int main(int argc, char **argv)
{
	long procs = argc > 1 ? atol(argv[1]) : 200;
	size_t bytes = (size_t)(argc > 2 ? atol(argv[2]) : 2048) << 10;
	long hold_ms = argc > 3 ? atol(argv[3]) : 1000;
	long waves = argc > 4 ? atol(argv[4]) : 1;

	for (long w = 0; w < waves; w++) {
		int ready[2], go[2];
		long n = 0;
		char c;

		if (pipe(ready) || pipe(go))
			return 1;
		for (long i = 0; i < procs; i++) {
			pid_t pid = fork();

			if (pid < 0)
				return 1;
			if (pid == 0) {
				close(ready[0]);
				close(go[1]);
				child(bytes, hold_ms, ready[1], go[0]);
			}
		}
		close(ready[1]);
		close(go[0]);
		while (n < procs && read(ready[0], &c, 1) == 1)
			n++;
		printf("wave %ld\n", w + 1);
		fflush(stdout);
		close(go[1]);
		close(ready[0]);
		while (wait(NULL) > 0)
			;
		if (n < procs)
			return 1;
	}
	printf("done\n");
	fflush(stdout);
	return 0;
}
