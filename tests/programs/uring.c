// SPDX-License-Identifier: GPL-2.0
/*
 * uring MIB DELAY_MS: io_uring fixed buffers, pinned memory no mlock shows.
 * Touches MIB MiB of anonymous memory, waits DELAY_MS, then registers it
 * with an io_uring as fixed buffers (IORING_REGISTER_BUFFERS, 1 MiB each):
 * the kernel pins the pages (pin_user_pages) and counts them in the
 * process's VmPin, the usage unmoved. Prints "ready" once registered,
 * then sleeps until killed. Raw system calls: no liburing needed.
 */
#include <linux/io_uring.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 64, delay = argc > 2 ? atol(argv[2]) : 0;
	struct timespec ts = { delay / 1000, (delay % 1000) * 1000000L };
	struct io_uring_params p;
	struct iovec *iov;
	char *m;
	int fd;

	m = mmap(NULL, (size_t)mib << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	iov = calloc((size_t)mib, sizeof(*iov));
	if (m == MAP_FAILED || !iov)
		return 1;
	madvise(m, (size_t)mib << 20, MADV_NOHUGEPAGE);
	memset(m, 1, (size_t)mib << 20);
	nanosleep(&ts, NULL);
	memset(&p, 0, sizeof(p));
	fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (fd < 0) {
		perror("uring: io_uring_setup");
		return 2;
	}
	for (long i = 0; i < mib; i++) {
		iov[i].iov_base = m + ((size_t)i << 20);
		iov[i].iov_len = 1 << 20;
	}
	if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_BUFFERS, iov, (unsigned)mib)) {
		perror("uring: IORING_REGISTER_BUFFERS");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
