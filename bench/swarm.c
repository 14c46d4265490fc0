// SPDX-License-Identifier: GPL-2.0
/*
 * swarm: the scale bench's workload (bench/scale.sh). Many small processes,
 * each with a few threads, that touch a little memory now and then and end
 * after a while, replaced by new ones: what a big container of workers
 * looks like to memprobe's per-process and per-stack maps.
 *
 *   swarm [--procs N] [--threads T] [--life MIN:MAX]
 *
 * N processes (default 1000) of T threads each, the main one included
 * (default 10), on 64 KiB thread stacks. Every thread wakes every 0.5-1.5 s
 * and either mallocs, fills and frees 4-64 KiB or maps, touches and unmaps
 * 1-8 pages (new page tables, new kernel allocations: stacks for memprobe).
 * A process lives MIN..MAX seconds (default 60:300), then exits and the
 * parent forks a new one, so the cgroup sees new process ids all the time.
 *
 * The parent puts itself in a process group of its own (so the driver can
 * kill the whole swarm by its id), prints "ready N" once the first N
 * processes have all their threads, and on SIGINT or SIGTERM stops every
 * process of the group and exits.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STACK_SIZE (64 << 10)

static int nthreads = 10;
static unsigned life_min = 60, life_max = 300;
static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static void nap(unsigned *seed)
{
	/* 0.5 to 1.5 s, so that the threads' wake-ups spread out */
	long ms = 500 + rand_r(seed) % 1000;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* One wake-up's memory activity: the heap or a fresh mapping. */
static void touch_some(unsigned *seed)
{
	long page = 4096;

	if (rand_r(seed) & 1) {
		size_t n = (size_t)(4 + rand_r(seed) % 61) << 10;
		char *p = malloc(n);

		if (p) {
			memset(p, 0x5a, n);
			free(p);
		}
	} else {
		size_t n = (size_t)(1 + rand_r(seed) % 8) * (size_t)page;
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p != MAP_FAILED) {
			for (size_t off = 0; off < n; off += (size_t)page)
				p[off] = 1;
			munmap(p, n);
		}
	}
}

static void *worker(void *arg)
{
	unsigned seed = (unsigned)(unsigned long)arg;

	for (;;) {
		nap(&seed);
		touch_some(&seed);
	}
	return NULL;
}

/* A child: T-1 threads beside the main one; says so on fd (if >= 0), then
 * works until its life is over. */
static void child(int fd, unsigned seed)
{
	pthread_attr_t attr;
	time_t end;

	/* One heap for all threads: a glibc arena per thread would reserve
	 * 64 MiB of address space each and touch a page table or two. */
	mallopt(M_ARENA_MAX, 1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	for (int i = 1; i < nthreads; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, worker,
				   (void *)(unsigned long)(seed * 31 + (unsigned)i))) {
			fprintf(stderr, "swarm: pthread_create failed\n");
			_exit(1);
		}
	}
	if (fd >= 0) {
		char c = 1;

		if (write(fd, &c, 1) != 1)
			_exit(1);
		close(fd);
	}
	end = time(NULL) + life_min + (time_t)(rand_r(&seed) % (life_max - life_min + 1));
	while (time(NULL) < end) {
		nap(&seed);
		touch_some(&seed);
	}
	_exit(0);
}

static pid_t spawn(int fd, unsigned seed)
{
	pid_t pid = fork();

	if (pid == 0)
		child(fd, seed);
	return pid;
}

static int parse(int argc, char **argv, int *nprocs)
{
	static const struct option opts[] = {
		{ "procs", required_argument, NULL, 'n' },
		{ "threads", required_argument, NULL, 't' },
		{ "life", required_argument, NULL, 'l' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': *nprocs = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 'l':
			if (sscanf(optarg, "%u:%u", &life_min, &life_max) != 2)
				return -1;
			break;
		default: return -1;
		}
	}
	return *nprocs > 0 && nthreads > 0 && life_max >= life_min ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };  /* no SA_RESTART */
	int nprocs = 1000, pfd[2];
	unsigned seed = (unsigned)getpid();
	long spawned = 0, started = 0;

	if (parse(argc, argv, &nprocs)) {
		fprintf(stderr, "usage: swarm [--procs N] [--threads T] [--life MIN:MAX]\n");
		return 2;
	}
	setpgid(0, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pipe(pfd))
		return 1;
	for (int i = 0; i < nprocs && !stopping; i++, spawned++) {
		if (spawn(pfd[1], seed + (unsigned)i) < 0) {
			perror("swarm: fork");
			stopping = 1;
		}
	}
	close(pfd[1]);
	/* one byte per child once its threads run; EOF if one died early */
	while (!stopping && started < spawned) {
		char buf[256];
		ssize_t r = read(pfd[0], buf, sizeof(buf));

		if (r <= 0 && !(r < 0 && errno == EINTR))
			break;
		started += r > 0 ? r : 0;
	}
	close(pfd[0]);
	if (!stopping) {
		printf("ready %ld\n", started);
		fflush(stdout);
	}
	/* replace every process that ends, until told to stop */
	while (!stopping) {
		pid_t pid = waitpid(-1, NULL, 0);

		if (pid > 0 && !stopping)
			spawn(-1, seed + (unsigned)spawned++);
		else if (pid < 0 && errno == ECHILD)
			break;
	}
	signal(SIGTERM, SIG_IGN);
	kill(0, SIGTERM);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	fprintf(stderr, "swarm: %ld processes started in all\n", spawned);
	return 0;
}
