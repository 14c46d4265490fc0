// SPDX-License-Identifier: GPL-2.0
/* sparse GIB SECONDS: map GIB GiB with MAP_NORESERVE and touch one byte in
 * every 2 MiB, so each touch needs one page of page table (and one data
 * page); hold it for SECONDS. With THP off for the mapping, the page tables
 * come to GIB * 512 pages: 128 MiB for 64 GiB. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* The stores are what is measured (a page table per 2 MiB): under ASan
 * (make SANITIZE=1) each would also fault in a page of shadow memory and
 * its page tables, 1/8 more; they are left uninstrumented. */
__attribute__((no_sanitize_address)) static void touch(char *p, size_t len, size_t step)
{
	for (size_t off = 0; off < len; off += step)
		p[off] = 1;
}

int main(int argc, char **argv)
{
	size_t gib = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	unsigned secs = argc > 2 ? (unsigned)atoi(argv[2]) : 2;
	size_t len = gib << 30, step = 2UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (madvise(p, len, MADV_NOHUGEPAGE))
		perror("madvise");
	touch(p, len, step);
	sleep(secs);
	return 0;
}
