/* SPDX-License-Identifier: GPL-2.0 */
#ifndef MEMPROBE_TEST_TOUCH_H
#define MEMPROBE_TEST_TOUCH_H
/* Shared by the test workloads: touch MIB MiB of anonymous memory, 1 MiB
 * mapping at a time, without huge pages (so fault and page counts are the
 * same on every kernel's THP setting). Returns 0, or 1 when mmap fails. */
#include <string.h>
#include <sys/mman.h>

static int touch(long mib)
{
	for (long i = 0; i < mib; i++) {
		char *p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		madvise(p, 1 << 20, MADV_NOHUGEPAGE);
		memset(p, 1, 1 << 20);
	}
	return 0;
}

#endif
