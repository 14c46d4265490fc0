// SPDX-License-Identifier: GPL-2.0
/*
 * benchmark ANON_MIB CACHE_MIB THREADS RATE_MIB_S BURST_MIB BURST_MS FILE MAX_MIB
 *
 * The stand-in for the brief's benchmark container: it touches ANON_MIB MiB
 * of anonymous memory, makes CACHE_MIB MiB of its own page cache (writes
 * FILE, unlinked at once so nothing is left behind, syncs and reads it
 * back), runs THREADS threads in all (the rest sleep), then grows by
 * RATE_MIB_S MiB a second (1 MiB steps) until MAX_MIB MiB of anon are
 * held; with BURST_MIB > 0, every BURST_MS ms it also touches BURST_MIB MiB
 * more, holds them BURST_MS/2 ms and frees them. Prints "ready" once the
 * anon and the cache are held; then runs until killed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "touch.h"

static long g_rate, g_burst, g_burst_ms, g_held, g_max;

static void after_ms(struct timespec *t, long ms)
{
	t->tv_nsec += ms * 1000000L;
	t->tv_sec += t->tv_nsec / 1000000000L;
	t->tv_nsec %= 1000000000L;
}

static void sleep_until(const struct timespec *t)
{
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, t, NULL))
		;
}

/* RATE MiB/s, one 1 MiB step at a time, on an absolute clock: a late step
 * is caught up, so the growth over a span is the rate times the span */
static void *grow(void *arg)
{
	struct timespec next;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (g_rate > 0 && g_held < g_max) {
		after_ms(&next, 1000 / g_rate);
		sleep_until(&next);
		if (touch(1))
			exit(1);
		g_held++;
	}
	return NULL;
}

static void *bursts(void *arg)
{
	struct timespec next;
	size_t len = (size_t)g_burst << 20;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		struct timespec hold;
		char *p;

		after_ms(&next, g_burst_ms);
		sleep_until(&next);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			exit(1);
		madvise(p, len, MADV_NOHUGEPAGE);
		memset(p, 2, len);
		hold = next;
		after_ms(&hold, g_burst_ms / 2);
		sleep_until(&hold);
		munmap(p, len);
	}
	return NULL;
}

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* CACHE MiB of page cache of our own: written, synced (clean, as a
 * benchmark's data files are), read back; the file is already unlinked */
static int page_cache(const char *path, long mib)
{
	static char buf[1 << 20];
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return 1;
	unlink(path);
	memset(buf, 3, sizeof(buf));
	for (long i = 0; i < mib; i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	fdatasync(fd);
	for (long i = 0; i < mib; i++)
		if (pread(fd, buf, sizeof(buf), (off_t)i << 20) != (ssize_t)sizeof(buf))
			return 1;
	return 0; /* fd stays open: the cache stays ours */
}

int main(int argc, char **argv)
{
	long anon, cache, threads;
	pthread_t t;

	if (argc != 9)
		return 2;
	anon = atol(argv[1]);
	cache = atol(argv[2]);
	threads = atol(argv[3]);
	g_rate = atol(argv[4]);
	g_burst = atol(argv[5]);
	g_burst_ms = atol(argv[6]);
	g_max = atol(argv[8]);
	if (anon < 0 || cache < 0 || threads < 3 || g_rate < 0 || g_rate > 1000 ||
	    g_burst < 0 || (g_burst && g_burst_ms < 2) || g_max < anon)
		return 2;
	if (touch(anon) || page_cache(argv[7], cache))
		return 1;
	g_held = anon;
	for (long i = 3; i < threads; i++)
		if (pthread_create(&t, NULL, idle, NULL))
			return 1;
	printf("ready\n");
	fflush(stdout);
	if (g_burst && pthread_create(&t, NULL, bursts, NULL))
		return 1;
	if (pthread_create(&t, NULL, grow, NULL))
		return 1;
	idle(NULL);
	return 0;
}
