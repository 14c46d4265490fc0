// SPDX-License-Identifier: GPL-2.0
/*
 * leave MIB FREE_MIB: touch MIB MiB of anonymous memory (one mapping, no
 * huge pages), then wait; on SIGUSR1 unmap FREE_MIB MiB of it and write
 * "freed" to standard error; then sleep until killed. The test moves it to
 * another cgroup before the signal: what it frees then is memory charged
 * to the cgroup it left.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20;
	size_t drop = (size_t)(argc > 2 ? atol(argv[2]) : 32) << 20;
	sigset_t none, usr1;
	char *p;

	/* blocked until sigsuspend: a signal sent early is not lost */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	signal(SIGUSR1, on_usr1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
	munmap(p, drop < len ? drop : len);
	fputs("freed\n", stderr);
	for (;;)
		pause();
}
