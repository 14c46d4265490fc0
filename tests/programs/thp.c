// SPDX-License-Identifier: GPL-2.0
/*
 * thp MIB: MIB MiB of anonymous memory asked for in huge pages
 * (MADV_HUGEPAGE on a 2 MiB-aligned mapping), touched; prints "ready",
 * then sleeps until killed, its huge pages as the faults left them. How many huge pages it gets is the kernel's
 * to say (fragmentation, the THP setting): the tests compare memprobe's
 * figure with the kernel's, whatever it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 64) << 20, huge = 2 << 20;
	char *m = mmap(NULL, len + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (m == MAP_FAILED)
		return 1;
	m = (char *)(((uintptr_t)m + huge - 1) & ~(uintptr_t)(huge - 1));
	madvise(m, len, MADV_HUGEPAGE);
	memset(m, 1, len);
	/* what the faults gave is the state: khugepaged may not collapse the
	 * rest later, between the test's read of the kernel's figure and
	 * memprobe's (its collapses are another context's, not this
	 * process's); the huge pages already mapped stay */
	madvise(m, len, MADV_NOHUGEPAGE);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}
