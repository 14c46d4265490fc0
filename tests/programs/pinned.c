// SPDX-License-Identifier: GPL-2.0
/*
 * pinned LOCK_MIB FILE FILE_MIB SECONDS [DELAY_MS]: a stand-in for a pinned
 * host pool. Maps LOCK_MIB MiB of shared anonymous memory (shmem, as
 * cudaHostAlloc's pool is), touches it and mlocks it (DELAY_MS after the
 * touch: the usage at its peak by then, the lock changes nothing of it);
 * makes FILE (on a tmpfs; "-" for none) FILE_MIB MiB long and keeps it
 * mapped, touching both every 100 ms; prints "ready" once all is in place;
 * exits after SECONDS, removing FILE.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void touch_pages(volatile char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 4096)
		p[i]++;
}

int main(int argc, char **argv)
{
	size_t lock = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20;
	const char *path = argc > 2 && strcmp(argv[2], "-") ? argv[2] : NULL;
	long delay = argc > 5 ? atol(argv[5]) : 0;
	struct timespec d = { delay / 1000, (delay % 1000) * 1000000L };
	size_t flen = (size_t)(argc > 3 ? atol(argv[3]) : 32) << 20;
	long secs = argc > 4 ? atol(argv[4]) : 10;
	char *shm, *file = NULL;
	int fd;

	shm = mmap(NULL, lock, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED || (memset(shm, 1, lock), nanosleep(&d, NULL), mlock(shm, lock))) {
		perror("pinned: shared anonymous memory, mlocked");
		return 1;
	}
	if (path) {
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)flen) ||
		    (file = mmap(NULL, flen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) ==
			    MAP_FAILED) {
			perror(path);
			if (fd >= 0)
				unlink(path);
			return 1;
		}
		close(fd);
		memset(file, 1, flen);
	}
	printf("ready\n");
	fflush(stdout);
	for (long i = 0; i < secs * 10; i++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		touch_pages(shm, lock);
		if (file)
			touch_pages(file, flen);
		nanosleep(&ts, NULL);
	}
	if (path)
		unlink(path);
	return 0;
}
