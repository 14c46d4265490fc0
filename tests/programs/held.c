// SPDX-License-Identifier: GPL-2.0
/*
 * held MIB [signal]: memory that left memory.stat's anon and is still charged.
 * Touches MIB MiB of anonymous memory (no huge pages), hands its pages to
 * pipes with vmsplice, 1 MiB a pipe (pipe-max-size's default: a larger
 * pipe needs CAP_SYS_RESOURCE), each taking a reference on its pages,
 * no copy,
 * unmaps them, touches 4 MiB more (a new peak of the usage, after the
 * hand-over) and prints "ready": the pages are no process's now (out of
 * anon, the rmap's count at 0) but the pipes hold them, charged to the
 * cgroup, until read or closed. Then sleeps until killed; its exit
 * closes the pipe and frees them. With "signal", it prints "touched" once
 * the memory is touched and mapped, and hands it over only on SIGUSR1.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 64;
	size_t len = (size_t)mib << 20;
	sigset_t usr1, old;
	char *m;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	signal(SIGUSR1, on_usr1);

	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	madvise(m, len, MADV_NOHUGEPAGE);
	memset(m, 1, len);
	if (argc > 2 && !strcmp(argv[2], "signal")) {
		printf("touched\n");
		fflush(stdout);
		while (!go)
			sigsuspend(&old);
	}
	for (long i = 0; i < mib; i++) {
		size_t done = 0;
		int p[2];

		if (pipe(p) || fcntl(p[1], F_SETPIPE_SZ, 1 << 20) < (1 << 20)) {
			perror("held: a pipe of 1 MiB");
			return 1;
		}
		while (done < (1 << 20)) {
			struct iovec iov = { m + ((size_t)i << 20) + done, (1 << 20) - done };
			ssize_t n = vmsplice(p[1], &iov, 1, 0);

			if (n <= 0) {
				perror("held: vmsplice");
				return 1;
			}
			done += (size_t)n;
		}
	}
	munmap(m, len);
	m = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	madvise(m, 4 << 20, MADV_NOHUGEPAGE);
	memset(m, 1, 4 << 20);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
