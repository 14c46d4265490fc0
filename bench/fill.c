// SPDX-License-Identifier: GPL-2.0
/*
 * fill: the bench workload. Maps anonymous memory in chunks and fills it,
 * then unmaps it, and prints one JSON line about its own cost.
 *
 *   fill [--size SIZE] [--chunk SIZE] [--page 4k|thp] [--threads 1|2|N]
 *        [--touch memset|populate] [--wait-fd FD]
 *
 * --page 4k   madvise(MADV_NOHUGEPAGE): 4 KiB pages, one fault per page
 * --page thp  madvise(MADV_HUGEPAGE): 2 MiB pages where the kernel can
 * --touch memset    write every byte (faults on first touch)
 * --touch populate  madvise(MADV_POPULATE_WRITE) (Linux 5.14+), no memset
 * --threads N       N threads, each mapping and filling its own chunks
 * --wait-fd FD      read one byte from FD before starting (so a driver can
 *                   move the process into a cgroup and start tracers first)
 *
 * Reported: cpu_s (getrusage RUSAGE_SELF user+sys, every thread, from the
 * start to after the unmap, so the page frees are counted too),
 * cpu_fill_s (the same up to the end of the fill), minflt (ru_minflt over
 * the run), wall_s (the fill: first mmap to last byte touched),
 * total_wall_s (with the unmap), gib_per_s (bytes / wall_s).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_HUGEPAGE
#define MADV_HUGEPAGE 14
#endif
#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif

#define MAX_THREADS 64
#define MAX_CHUNKS 65536

static size_t g_chunk;
static int g_thp, g_populate;

struct part {
	size_t bytes;          /* this thread's share */
	void *maps[MAX_CHUNKS / MAX_THREADS];
	size_t lens[MAX_CHUNKS / MAX_THREADS];
	int nmaps;
	int err;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static double cpu_self(long *minflt)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (minflt)
		*minflt = ru.ru_minflt;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void *fill_part(void *arg)
{
	struct part *p = arg;
	size_t left = p->bytes;

	while (left) {
		size_t len = left < g_chunk ? left : g_chunk;
		char *m;

		if (p->nmaps >= (int)(sizeof(p->maps) / sizeof(p->maps[0]))) {
			p->err = E2BIG;
			return NULL;
		}
		m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED) {
			p->err = errno;
			return NULL;
		}
		p->maps[p->nmaps] = m;
		p->lens[p->nmaps++] = len;
		if (madvise(m, len, g_thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
			p->err = errno;
			return NULL;
		}
		if (g_populate) {
			if (madvise(m, len, MADV_POPULATE_WRITE)) {
				p->err = errno;
				return NULL;
			}
		} else {
			memset(m, 0x5a, len);
		}
		left -= len;
	}
	return NULL;
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	double v = strtod(s, &end);
	double mul = 1;

	if (end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
	case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
	case '\0': break;
	default: return -1;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -1;
	*out = (size_t)(v * mul);
	return 0;
}

static void usage(void)
{
	fputs("usage: fill [--size SIZE] [--chunk SIZE] [--page 4k|thp] [--threads N]\n"
	      "            [--touch memset|populate] [--wait-fd FD]\n", stderr);
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "page", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "touch", required_argument, NULL, 'T' },
		{ "wait-fd", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	size_t size = 1UL << 30, page = 4096, per, done = 0;
	int nthreads = 1, wait_fd = -1, c, err = 0;
	static struct part parts[MAX_THREADS];
	pthread_t tids[MAX_THREADS];
	double t0, t1, t2, c0, c1, c2;
	long f0, f2;

	g_chunk = 64UL << 20;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 's': if (parse_size(optarg, &size) || !size) usage(); break;
		case 'c': if (parse_size(optarg, &g_chunk) || !g_chunk) usage(); break;
		case 'p':
			if (!strcmp(optarg, "4k") || !strcmp(optarg, "4K"))
				g_thp = 0;
			else if (!strcmp(optarg, "thp"))
				g_thp = 1;
			else
				usage();
			break;
		case 't':
			nthreads = atoi(optarg);
			if (nthreads < 1 || nthreads > MAX_THREADS)
				usage();
			break;
		case 'T':
			if (!strcmp(optarg, "memset"))
				g_populate = 0;
			else if (!strcmp(optarg, "populate"))
				g_populate = 1;
			else
				usage();
			break;
		case 'w': wait_fd = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (g_thp)
		page = 2UL << 20;
	/* whole pages per thread, chunks of whole pages */
	g_chunk = (g_chunk + page - 1) / page * page;
	per = size / nthreads / page * page;
	if (!per)
		usage();

	if (wait_fd >= 0) {
		char b;

		if (read(wait_fd, &b, 1) != 1) {
			fprintf(stderr, "fill: nothing to read on fd %d: not starting\n", wait_fd);
			return 1;
		}
		close(wait_fd);
	}

	c0 = cpu_self(&f0);
	t0 = now();
	for (int i = 0; i < nthreads; i++) {
		parts[i].bytes = per;
		if (i == 0 && nthreads == 1) {
			tids[i] = 0;
			continue;
		}
		if (pthread_create(&tids[i], NULL, fill_part, &parts[i])) {
			fprintf(stderr, "fill: pthread_create failed\n");
			return 1;
		}
	}
	if (nthreads == 1)
		fill_part(&parts[0]);
	else
		for (int i = 0; i < nthreads; i++)
			pthread_join(tids[i], NULL);
	t1 = now();
	c1 = cpu_self(NULL);
	for (int i = 0; i < nthreads; i++) {
		if (parts[i].err)
			err = parts[i].err;
		for (int j = 0; j < parts[i].nmaps; j++) {
			munmap(parts[i].maps[j], parts[i].lens[j]);
			done += parts[i].lens[j];
		}
	}
	t2 = now();
	c2 = cpu_self(&f2);
	if (err) {
		fprintf(stderr, "fill: %s\n", strerror(err));
		return 1;
	}
	printf("{\"page\": \"%s\", \"threads\": %d, \"touch\": \"%s\", \"bytes\": %zu, "
	       "\"chunk_bytes\": %zu, \"cpu_s\": %.6f, \"cpu_fill_s\": %.6f, \"minflt\": %ld, "
	       "\"wall_s\": %.6f, \"total_wall_s\": %.6f, \"gib_per_s\": %.4f, \"pid\": %d}\n",
	       g_thp ? "thp" : "4k", nthreads, g_populate ? "populate" : "memset", done,
	       g_chunk, c2 - c0, c1 - c0, f2 - f0, t1 - t0, t2 - t0,
	       (double)done / (1UL << 30) / (t1 - t0), (int)getpid());
	return 0;
}
