// SPDX-License-Identifier: GPL-2.0
/*
 * maxrss FILE CMD [ARGS...]: run CMD, then write its peak resident set
 * size in KiB (wait4's ru_maxrss: the kernel's high-water mark of the
 * process, its report's writing included) to FILE, and exit as CMD did
 * (128 + the signal that killed it). The peak a process reaches just
 * before it exits cannot be read from /proc afterwards; this small parent
 * adds nothing to it (a child's ru_maxrss starts from the parent's RSS at
 * fork: a shell's, or Python's, would be counted).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss FILE CMD [ARGS...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return perror("fork"), 1;
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return perror("wait4"), 1;
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f))
		return perror(argv[1]), 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
