// SPDX-License-Identifier: GPL-2.0
/* cow MIB FILE: touch MIB MiB of private anonymous memory (no huge pages),
 * fork a child that holds it and waits; write the child's pid to FILE.pid.
 * On SIGUSR1 write every page again, which copies each page the parent
 * shares with the child (copy-on-write), and create FILE.done; on the next
 * SIGUSR1 kill the child and exit. A fork whose copies the test counts in
 * the child's Private_Dirty, read beside. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go++;
}

/* Write text to path whole: a file beside it, renamed over it. */
static int put(const char *path, const char *text)
{
	char tmp[4200];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")) || fputs(text, f) < 0 || fclose(f))
		return 1;
	return rename(tmp, path) ? 1 : 0;
}

static void wait_usr1(const sigset_t *old, int n)
{
	while (go < n)
		sigsuspend(old);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	sigset_t usr1, old;
	char path[4096], text[32];
	size_t len;
	char *p;
	pid_t child;

	if (argc != 3)
		return 2;
	len = (size_t)atol(argv[1]) << 20;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise(p, len, MADV_NOHUGEPAGE);
	memset(p, 1, len);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigaction(SIGUSR1, &sa, NULL);
	sigprocmask(SIG_BLOCK, &usr1, &old);
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	snprintf(path, sizeof(path), "%s.pid", argv[2]);
	snprintf(text, sizeof(text), "%d\n", (int)child);
	if (put(path, text))
		return 1;
	wait_usr1(&old, 1);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 2;
	snprintf(path, sizeof(path), "%s.done", argv[2]);
	if (put(path, "done\n"))
		return 1;
	wait_usr1(&old, 2);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
