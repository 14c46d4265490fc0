// SPDX-License-Identifier: GPL-2.0
/*
 * churn KIND ...: kernel objects made and freed over and over, so that the
 * cgroup's slab moves up and down by small amounts many times and ends
 * about where it began (the memcg tracepoints' rounding of byte items
 * drifted without bound on exactly this):
 *
 *   churn sockets SECONDS      socket() and close(), for SECONDS
 *   churn files DIR SECONDS    create and unlink a file in DIR, for SECONDS
 *   churn pipes N              open N pipes, all at once (as the file limit
 *                              allows), then close them
 *   churn procs N SECONDS      N processes alive together for SECONDS, then
 *                              all exit (each child sleeps; the parent waits)
 *
 * Prints how many rounds it made on stdout.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long sockets(double secs)
{
	double end = now() + secs;
	long n = 0;

	while (now() < end) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0) {
			perror("socket");
			return -1;
		}
		close(fd);
		n++;
	}
	return n;
}

static long files(const char *dir, double secs)
{
	double end = now() + secs;
	char path[4096];
	long n = 0;

	while (now() < end) {
		int fd;

		snprintf(path, sizeof(path), "%s/churn%ld", dir, n % 64);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			perror(path);
			return -1;
		}
		close(fd);
		unlink(path);
		n++;
	}
	return n;
}

/* N pipes open together, then all closed: as many at once as the file
 * limit allows (raised to its hard limit), in rounds. */
static long pipes(long n)
{
	struct rlimit rl;
	long batch, done = 0;
	int *fds;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	batch = rl.rlim_cur > 64 && rl.rlim_cur != RLIM_INFINITY ? ((long)rl.rlim_cur - 32) / 2 : n;
	if (batch > n)
		batch = n;
	fds = calloc((size_t)batch * 2, sizeof(*fds));
	if (!fds)
		return -1;
	while (done < n) {
		long m = n - done < batch ? n - done : batch;

		for (long i = 0; i < m; i++)
			if (pipe(&fds[2 * i])) {
				perror("pipe");
				return -1;
			}
		for (long i = 0; i < 2 * m; i++)
			close(fds[i]);
		done += m;
	}
	free(fds);
	return n;
}

static long procs(long n, unsigned secs)
{
	int ready[2];
	char c;

	if (pipe(ready))
		return -1;
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return -1;
		}
		if (pid == 0) {
			close(ready[0]);
			close(ready[1]); /* the parent's read sees EOF once all are up */
			sleep(secs);
			_exit(0);
		}
	}
	close(ready[1]);
	while (read(ready[0], &c, 1) > 0)
		;
	close(ready[0]);
	while (wait(NULL) > 0)
		;
	return n;
}

int main(int argc, char **argv)
{
	const char *kind = argc > 1 ? argv[1] : "";
	long n = -1;

	if (!strcmp(kind, "sockets") && argc > 2)
		n = sockets(atof(argv[2]));
	else if (!strcmp(kind, "files") && argc > 3)
		n = files(argv[2], atof(argv[3]));
	else if (!strcmp(kind, "pipes") && argc > 2)
		n = pipes(atol(argv[2]));
	else if (!strcmp(kind, "procs") && argc > 3)
		n = procs(atol(argv[2]), (unsigned)atoi(argv[3]));
	else
		fprintf(stderr, "usage: churn sockets SECONDS | files DIR SECONDS | pipes N | "
			"procs N SECONDS\n");
	if (n < 0)
		return 1;
	printf("%ld\n", n);
	return 0;
}
