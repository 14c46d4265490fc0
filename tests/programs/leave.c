// SPDX-License-Identifier: GPL-2.0
/*
 * leave MIB FREE_MIB: touch MIB MiB of anonymous memory (one mapping, no
 * huge pages), then wait; on SIGUSR1 unmap FREE_MIB MiB of it and write
 * "freed" to standard error; then sleep until killed. The test moves it to
 * another cgroup before the signal: what it frees then is memory charged
 * to the cgroup it left. Where it may run on two CPUs it touches on one
 * and unmaps on the other: memprobe keeps a task's counts in the slot of
 * the CPU it ran on until another task's event comes there, so the free
 * comes where no row of it may exist yet (the case that lost it).
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t go;

/* Run on the allowed CPU number n (0 or 1) of those first allowed. */
static void pin(const cpu_set_t *allowed, int n)
{
	cpu_set_t one;

	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, allowed) || n--)
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		sched_setaffinity(0, sizeof(one), &one);
		return;
	}
}

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
	cpu_set_t allowed;
	char *p;

	/* blocked until sigsuspend: a signal sent early is not lost */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	signal(SIGUSR1, on_usr1);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || CPU_COUNT(&allowed) < 2)
		CPU_ZERO(&allowed);
	pin(&allowed, 0);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
	pin(&allowed, 1);
	munmap(p, drop < len ? drop : len);
	fputs("freed\n", stderr);
	for (;;)
		pause();
}
