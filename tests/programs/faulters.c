// SPDX-License-Identifier: GPL-2.0
/*
 * faulters PROCS THREADS PAGES ROUNDS PAUSE_MS: page faults in threads that
 * exit. PROCS child processes (0: this process itself) each run ROUNDS
 * rounds, PAUSE_MS apart, and holds PAUSE_MS more before it exits; in a
 * round THREADS threads each write PAGES fresh pages (one fault per page)
 * and exit, leaving the pages mapped: the usage peaks in the last pause.
 * So each process takes THREADS * PAGES * ROUNDS faults of its own in
 * threads that are gone by the peak: what the kernel's per-task counters
 * must still account for once /proc no longer lists those threads.
 * PAUSE_MS -1: each round after the first waits for a SIGUSR1 instead (a
 * test starts a recording between them, however long the start takes
 * under load), and the process holds 1 s after the last.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long pages, page_size;

static void *fault_pages(void *arg)
{
	size_t len = (size_t)pages * (size_t)page_size;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE); /* one fault per 4 KiB page */
	for (long i = 0; i < pages; i++)
		p[i * page_size] = 1;
	return NULL; /* mapped until the process exits */
}

static void rounds(int threads, int n, long pause_ms)
{
	pthread_attr_t attr;
	pthread_t t[64];

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	long hold = pause_ms < 0 ? 1000 : pause_ms;
	struct timespec ts = { hold / 1000, (hold % 1000) * 1000000L };
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	for (int r = 0; r < n; r++) {
		if (r && pause_ms < 0)
			sigwait(&usr1, &sig);
		else if (r)
			nanosleep(&ts, NULL);
		for (int i = 0; i < threads; i++)
			if (pthread_create(&t[i], &attr, fault_pages, NULL)) {
				perror("pthread_create");
				exit(1);
			}
		for (int i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	}
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	int procs, threads, n;
	long pause_ms;

	if (argc != 6) {
		fprintf(stderr, "usage: faulters PROCS THREADS PAGES ROUNDS PAUSE_MS\n");
		return 2;
	}
	procs = atoi(argv[1]);
	threads = atoi(argv[2]);
	pages = atol(argv[3]);
	n = atoi(argv[4]);
	pause_ms = atol(argv[5]);
	page_size = sysconf(_SC_PAGESIZE);
	if (threads < 1 || threads > 64 || pages < 1 || n < 1 || pause_ms < -1) {
		fprintf(stderr, "faulters: THREADS 1 to 64, PAGES and ROUNDS at least 1, "
			"PAUSE_MS -1 or more\n");
		return 2;
	}
	if (pause_ms < 0) { /* blocked before any thread: a signal sent early waits */
		sigset_t usr1;

		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
	}
	if (!procs) {
		rounds(threads, n, pause_ms);
		return 0;
	}
	for (int i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			rounds(threads, n, pause_ms);
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
