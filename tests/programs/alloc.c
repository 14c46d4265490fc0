// SPDX-License-Identifier: GPL-2.0
/* alloc MIB: touch MIB MiB of anonymous memory in 1 MiB steps, then sleep
 * until killed. Used to drive a cgroup past its limit (an OOM kill). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 0;

	for (long i = 0; i < mib; i++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		madvise(p, 1 << 20, MADV_NOHUGEPAGE);
		memset(p, 1, 1 << 20);
	}
	pause();
	return 0;
}
